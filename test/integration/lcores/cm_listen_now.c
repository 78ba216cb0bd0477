/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A peer connects the moment rdma_listen returns, round after round, through the rdmacm
 * shim. The server (-s ADDR) listens on port BASE + i for round i and, as soon as
 * rdma_listen has returned, writes the round's number into DIR/go; the client (-c ADDR),
 * its id resolved and its QP created beforehand, blocked reading DIR/go, connects at once
 * and tells the server through DIR/back whether it was established ('e') or refused ('x').
 * An established connection is disconnected by the client and torn down on both sides.
 *
 * usage: cm_listen_now -s|-c ADDR -d DIR [-n ROUNDS] [-p BASE]
 * The client prints "established N of M" and exits 0 when every round was established.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define CHECK(c)                                                                     \
	do {                                                                         \
		if (!(c)) {                                                          \
			fprintf(stderr, "cm_listen_now: line %d: %s (errno %d: %s)\n", \
				__LINE__, #c, errno, strerror(errno));               \
			exit(2);                                                     \
		}                                                                    \
	} while (0)

static struct ibv_qp_init_attr qp_attr = {
	.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
	.qp_type = IBV_QPT_RC,
};

static struct sockaddr_in
addr_of(const char *ip, uint16_t port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};

	CHECK(inet_pton(AF_INET, ip, &a.sin_addr) == 1);
	return a;
}

/* The next event of @p ch (acknowledged); its type, status in @p status. */
static enum rdma_cm_event_type
next_event(struct rdma_event_channel *ch, struct rdma_cm_id **id, int *status)
{
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type t;

	CHECK(rdma_get_cm_event(ch, &ev) == 0);
	t = ev->event;
	if (id != NULL)
		*id = ev->id;
	if (status != NULL)
		*status = ev->status;
	CHECK(rdma_ack_cm_event(ev) == 0);
	return t;
}

static void
expect(struct rdma_event_channel *ch, enum rdma_cm_event_type want)
{
	int status;
	enum rdma_cm_event_type t = next_event(ch, NULL, &status);

	if (t != want) {
		fprintf(stderr, "cm_listen_now: %s (status %d), expected %s\n", rdma_event_str(t),
			status, rdma_event_str(want));
		exit(2);
	}
}

static int
server(const char *ip, const char *dir, int rounds, int base)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	char path[4096];
	int go, back;

	CHECK(ch != NULL);
	snprintf(path, sizeof(path), "%s/go", dir);
	CHECK((go = open(path, O_WRONLY)) >= 0);
	snprintf(path, sizeof(path), "%s/back", dir);
	CHECK((back = open(path, O_RDONLY)) >= 0);
	for (int i = 0; i < rounds; i++) {
		struct sockaddr_in a = addr_of(ip, (uint16_t)(base + i));
		struct rdma_cm_id *lid, *cid = NULL;
		struct rdma_conn_param p = {.responder_resources = 1, .initiator_depth = 1};
		bool gone = false;
		char line[32], r = 0;
		int n;

		CHECK(rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) == 0);
		CHECK(rdma_bind_addr(lid, (struct sockaddr *)&a) == 0);
		CHECK(rdma_listen(lid, 4) == 0);
		n = snprintf(line, sizeof(line), "%d\n", i);
		CHECK(write(go, line, (size_t)n) == n);
		/* until the client said how it went and, when established, the connection ended */
		while (r == 0 || (r == 'e' && !gone)) {
			struct pollfd pf[2] = {{.fd = ch->fd, .events = POLLIN},
					       {.fd = r == 0 ? back : -1, .events = POLLIN}};
			struct rdma_cm_id *id;
			enum rdma_cm_event_type t;
			int status;

			CHECK(poll(pf, 2, -1) > 0);
			if (pf[1].revents != 0)
				CHECK(read(back, &r, 1) == 1);
			if ((pf[0].revents & POLLIN) == 0)
				continue;
			t = next_event(ch, &id, &status);
			if (t == RDMA_CM_EVENT_CONNECT_REQUEST) {
				CHECK(cid == NULL);
				cid = id;
				CHECK(rdma_create_qp(cid, NULL, &qp_attr) == 0);
				CHECK(rdma_accept(cid, &p) == 0);
			} else if (t == RDMA_CM_EVENT_DISCONNECTED) {
				gone = true;
			} else if (t != RDMA_CM_EVENT_ESTABLISHED) {
				fprintf(stderr, "cm_listen_now: round %d: server got %s (%d)\n", i,
					rdma_event_str(t), status);
				gone = true;
			}
		}
		if (cid != NULL) {
			rdma_destroy_qp(cid);
			CHECK(rdma_destroy_id(cid) == 0);
		}
		CHECK(rdma_destroy_id(lid) == 0);
	}
	close(go);
	close(back);
	rdma_destroy_event_channel(ch);
	return 0;
}

static int
client(const char *ip, const char *dir, int rounds, int base)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	char path[4096];
	FILE *go;
	int back, ok = 0;

	CHECK(ch != NULL);
	snprintf(path, sizeof(path), "%s/go", dir);
	CHECK((go = fopen(path, "r")) != NULL);
	snprintf(path, sizeof(path), "%s/back", dir);
	CHECK((back = open(path, O_WRONLY)) >= 0);
	for (int i = 0; i < rounds; i++) {
		struct sockaddr_in a = addr_of(ip, (uint16_t)(base + i));
		struct rdma_conn_param p = {.responder_resources = 1, .initiator_depth = 1};
		struct rdma_cm_id *id;
		enum rdma_cm_event_type t;
		char line[32];
		int status;

		CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
		CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&a, 2000) == 0);
		expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
		CHECK(rdma_resolve_route(id, 2000) == 0);
		expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
		CHECK(rdma_create_qp(id, NULL, &qp_attr) == 0);
		/* the server's rdma_listen has returned: connect now */
		CHECK(fgets(line, sizeof(line), go) != NULL && atoi(line) == i);
		CHECK(rdma_connect(id, &p) == 0);
		t = next_event(ch, NULL, &status);
		CHECK(write(back, t == RDMA_CM_EVENT_ESTABLISHED ? "e" : "x", 1) == 1);
		if (t == RDMA_CM_EVENT_ESTABLISHED) {
			ok++;
			CHECK(rdma_disconnect(id) == 0);
			expect(ch, RDMA_CM_EVENT_DISCONNECTED);
		} else {
			printf("round %d (port %d): %s, status %d\n", i, base + i,
			       rdma_event_str(t), status);
		}
		rdma_destroy_qp(id);
		CHECK(rdma_destroy_id(id) == 0);
	}
	printf("established %d of %d\n", ok, rounds);
	fclose(go);
	close(back);
	rdma_destroy_event_channel(ch);
	return ok == rounds ? 0 : 1;
}

int
main(int argc, char **argv)
{
	const char *ip = NULL, *dir = NULL;
	int rounds = 50, base = 21000, opt;
	bool srv = false;

	while ((opt = getopt(argc, argv, "s:c:d:n:p:")) != -1) {
		switch (opt) {
		case 's':
			srv = true;
			ip = optarg;
			break;
		case 'c':
			ip = optarg;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'n':
			rounds = atoi(optarg);
			break;
		case 'p':
			base = atoi(optarg);
			break;
		default:
			ip = NULL;
			break;
		}
	}
	if (ip == NULL || dir == NULL || rounds <= 0 || base <= 0 || base + rounds > 65535) {
		fprintf(stderr, "usage: cm_listen_now -s|-c ADDR -d DIR [-n ROUNDS] [-p BASE]\n");
		return 2;
	}
	return srv ? server(ip, dir, rounds, base) : client(ip, dir, rounds, base);
}
