/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-cm-hold: N rdma_cm connections established at once and held idle, to see what idle
 * connections cost the daemons (conn_bench.sh samples their memory meanwhile).
 *
 *   wn-cm-hold -l ADDR [-p PORT]             accept every request (a QP each), tear down
 *                                            what the peer disconnects; runs until killed
 *   wn-cm-hold -s ADDR -c N [-p PORT] [-t S] connect N at once (rdma_create_qp: a QP and
 *                                            its CQs each), print "established N", hold
 *                                            them until stdin ends (or S seconds), then
 *                                            disconnect and destroy every one
 *
 * The client exits 0 when all N were established and torn down (every DISCONNECTED seen),
 * 1 otherwise. Plain librdmacm: it runs on any RDMA device, warpnic's through its shims.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

static struct rdma_event_channel *ch;

static void
die(const char *what)
{
	fprintf(stderr, "wn-cm-hold: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void
qp_for(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
	};

	if (rdma_create_qp(id, NULL, &a) != 0)
		die("rdma_create_qp");
}

static struct rdma_cm_event *
next_event(int timeout_ms)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *ev;

	if (poll(&p, 1, timeout_ms) != 1)
		return NULL;
	if (rdma_get_cm_event(ch, &ev) != 0)
		die("rdma_get_cm_event");
	return ev;
}

static int
server(struct sockaddr_in *sa)
{
	struct rdma_conn_param cp = {.responder_resources = 1, .initiator_depth = 1};
	struct rdma_cm_id *lid;

	if (rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_bind_addr(lid, (struct sockaddr *)sa) != 0 || rdma_listen(lid, 0) != 0)
		die("listen");
	printf("listening\n");
	fflush(stdout);
	for (;;) {
		struct rdma_cm_event *ev = next_event(-1);
		struct rdma_cm_id *id = ev->id;
		enum rdma_cm_event_type t = ev->event;

		rdma_ack_cm_event(ev);
		if (t == RDMA_CM_EVENT_CONNECT_REQUEST) {
			qp_for(id);
			if (rdma_accept(id, &cp) != 0)
				die("rdma_accept");
		} else if (t == RDMA_CM_EVENT_DISCONNECTED) {
			rdma_destroy_qp(id);
			rdma_destroy_id(id);
		}
	}
	return 0;
}

static int
client(struct sockaddr_in *sa, uint32_t n, int hold_s)
{
	struct rdma_conn_param cp = {.responder_resources = 1, .initiator_depth = 1};
	struct rdma_cm_id **ids = calloc(n, sizeof(*ids));
	uint32_t i, up = 0, down = 0, bad = 0;
	struct pollfd in = {.fd = 0, .events = POLLIN};
	char b[16];

	if (ids == NULL)
		die("memory");
	for (i = 0; i < n; i++) {
		if (rdma_create_id(ch, &ids[i], (void *)(uintptr_t)i, RDMA_PS_TCP) != 0 ||
		    rdma_resolve_addr(ids[i], NULL, (struct sockaddr *)sa, 2000) != 0)
			die("rdma_resolve_addr");
	}
	/* each id on its way: route, QP and connect as its events come */
	while (up + bad < n) {
		struct rdma_cm_event *ev = next_event(120000);
		struct rdma_cm_id *id;

		if (ev == NULL) {
			fprintf(stderr, "wn-cm-hold: %u of %u established, then nothing\n", up, n);
			return 1;
		}
		id = ev->id;
		switch (ev->event) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			if (rdma_resolve_route(id, 2000) != 0)
				die("rdma_resolve_route");
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			qp_for(id);
			if (rdma_connect(id, &cp) != 0)
				die("rdma_connect");
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			up++;
			break;
		default:
			fprintf(stderr, "wn-cm-hold: %s (%d)\n", rdma_event_str(ev->event),
				ev->status);
			bad++;
			break;
		}
		rdma_ack_cm_event(ev);
	}
	printf("established %u\n", up);
	fflush(stdout);
	if (bad != 0)
		return 1;
	/* held idle until told (stdin ends) or the time is up */
	(void)!poll(&in, 1, hold_s > 0 ? hold_s * 1000 : -1);
	if (hold_s <= 0)
		while (read(0, b, sizeof(b)) > 0)
			;
	for (i = 0; i < n; i++)
		if (rdma_disconnect(ids[i]) != 0)
			die("rdma_disconnect");
	while (down < n) {
		struct rdma_cm_event *ev = next_event(60000);

		if (ev == NULL)
			break;
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
			down++;
		rdma_ack_cm_event(ev);
	}
	for (i = 0; i < n; i++) {
		rdma_destroy_qp(ids[i]);
		rdma_destroy_id(ids[i]);
	}
	printf("torn down %u\n", down);
	return down == n ? 0 : 1;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(7473)};
	const char *laddr = NULL, *saddr = NULL;
	uint32_t n = 1000;
	struct rlimit rl;
	int opt, hold_s = 0;

	while ((opt = getopt(argc, argv, "l:s:c:p:t:")) != -1) {
		switch (opt) {
		case 'l': laddr = optarg; break;
		case 's': saddr = optarg; break;
		case 'c': n = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'p': sa.sin_port = htons((uint16_t)strtoul(optarg, NULL, 0)); break;
		case 't': hold_s = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: wn-cm-hold -l ADDR [-p PORT] | "
					"-s ADDR -c N [-p PORT] [-t SECS]\n");
			return 2;
		}
	}
	if ((laddr == NULL) == (saddr == NULL) || n == 0 ||
	    inet_pton(AF_INET, laddr != NULL ? laddr : saddr, &sa.sin_addr) != 1) {
		fprintf(stderr, "wn-cm-hold: one of -l or -s with an IPv4 address\n");
		return 2;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	ch = rdma_create_event_channel();
	if (ch == NULL)
		die("rdma_create_event_channel");
	return laddr != NULL ? server(&sa) : client(&sa, n, hold_s);
}
