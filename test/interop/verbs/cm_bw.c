/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMA Write, Read or Send bandwidth over an rdma_cm connection of any address family, the
 * measurements of perftest's ib_{write,read,send}_bw -R, for addresses Debian 12's perftest
 * cannot use (4.5-0.17 resolves them as AF_INET only): IPv6.
 *
 *   cm_bw -s ADDR [-p PORT] -o write|read|send -S SIZE[,SIZE...] -n ITERS   server
 *   cm_bw -c ADDR [-p PORT] -o write|read|send -S SIZE[,SIZE...] -n ITERS   client
 *
 * The server binds ADDR (rdma_bind_addr with the sockaddr getaddrinfo gives: sockaddr_in6
 * for an IPv6 address), the client resolves address and route to it and connects; the
 * server's buffer (address, rkey) travels in the accept's private data. Per size, in turn:
 * the server makes ready (write/send: zeroes its buffer; read: fills it with the size's
 * pattern; send: posts receives) and sends READY; the client runs ITERS operations of SIZE
 * octets (write, read: up to 16 outstanding; send: windows of 16 messages, each window
 * released by the server's CREDIT once it took them and posted receives again), checks what
 * it read (read), and sends DONE; the server checks what was written or sent to it (every
 * octet of the pattern) and answers RESULT. The client prints one row per size:
 * "SIZE ITERS MB/s" (the figure is informative). Both check that the connection's local and
 * peer addresses have the family of ADDR and that ibv_query_gid() finds the local address
 * in the device's GID table. Exit status 0 when every size passed on both sides.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define WINDOW 16
#define MAX_SIZES 32
#define CTL_SLOTS 4

#define CHECK(c)                                                                         \
	do {                                                                             \
		if (!(c)) {                                                              \
			fprintf(stderr, "cm_bw: check failed line %d: %s (errno %d: %s)\n", \
				__LINE__, #c, errno, strerror(errno));                   \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

enum { OP_WRITE, OP_READ, OP_SEND };
enum { MSG_READY = 1, MSG_DONE, MSG_RESULT, MSG_CREDIT };

struct ctl_msg {
	uint32_t type;
	uint32_t size;
	uint32_t value; /* DONE: operations run; RESULT: 1 passed */
};

struct buf_info {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

struct conn {
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *data_mr, *ctl_mr;
	uint8_t *data;
	size_t data_len;
	struct ctl_msg *ctl; /* CTL_SLOTS receive slots, then one send slot */
	struct buf_info peer;
	int op;
	uint32_t recv_data; /* receives of data messages posted (send) */
	uint32_t next_slot; /* the next receive's slot of the data buffer (send) */
	uint32_t sent;
	uint32_t completed;
	uint32_t size;      /* the size running */
	bool bad;           /* a data check failed */
	struct ctl_msg stash[CTL_SLOTS]; /* control messages taken while waiting for another */
	unsigned int nstash;
	/*
	 * Control receives are posted at set-up and again once taken, except on a server of
	 * Sends: a receive queue is one FIFO, so there a control receive (for DONE) is posted
	 * only behind the last data receive of a size.
	 */
	bool ctl_auto;
	int family;
};

/* wr_id of work requests: control receives (slot), control send, data */
#define WR_CTL_RECV 0x100
#define WR_CTL_SEND 0x200
#define WR_DATA 0x300

static uint8_t
pattern(uint32_t size, size_t i)
{
	return (uint8_t)((i * 31u + size * 7u + (i >> 8)) & 0xff);
}

static void
fill(uint8_t *p, uint32_t size)
{
	for (size_t i = 0; i < size; i++)
		p[i] = pattern(size, i);
}

static bool
verify(const uint8_t *p, uint32_t size)
{
	for (size_t i = 0; i < size; i++)
		if (p[i] != pattern(size, i)) {
			fprintf(stderr, "cm_bw: size %u: octet %zu is 0x%02x, not 0x%02x\n", size, i,
				p[i], pattern(size, i));
			return false;
		}
	return true;
}

static struct rdma_cm_event *
expect(struct rdma_event_channel *ch, enum rdma_cm_event_type t)
{
	struct rdma_cm_event *ev;

	CHECK(rdma_get_cm_event(ch, &ev) == 0);
	if (ev->event != t) {
		fprintf(stderr, "cm_bw: event %s, expected %s (status %d)\n",
			rdma_event_str(ev->event), rdma_event_str(t), ev->status);
		exit(1);
	}
	return ev;
}

static void
post_ctl_recv(struct conn *c, unsigned int slot)
{
	struct ibv_sge sge = { .addr = (uintptr_t)&c->ctl[slot], .length = sizeof(struct ctl_msg),
			       .lkey = c->ctl_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = WR_CTL_RECV + slot, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	CHECK(ibv_post_recv(c->id->qp, &wr, &bad) == 0);
}

/* Send: one receive of @p size into the next of WINDOW slots of the data buffer (zeroed) */
static void
post_data_recv(struct conn *c, uint32_t size)
{
	uint32_t slot = c->next_slot++ % WINDOW;
	struct ibv_sge sge = { .addr = (uintptr_t)c->data + (size_t)slot * size, .length = size,
			       .lkey = c->data_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = WR_DATA + slot, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(c->data + (size_t)slot * size, 0, size);
	CHECK(ibv_post_recv(c->id->qp, &wr, &bad) == 0);
	c->recv_data++;
}

/*
 * One completion: a control message (stashed for wait_ctl, its slot posted again), a data
 * receive (its slot checked) or a data operation. @return the wr_id class.
 */
static unsigned int
poll_one(struct conn *c)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(c->cq, 1, &wc)) == 0)
		;
	CHECK(n == 1);
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "cm_bw: completion %s (wr_id 0x%lx, opcode %d)\n",
			ibv_wc_status_str(wc.status), (unsigned long)wc.wr_id, wc.opcode);
		exit(1);
	}
	switch (wc.wr_id & 0xf00) {
	case WR_CTL_RECV: {
		unsigned int slot = (unsigned int)(wc.wr_id & 0xff);

		CHECK(wc.byte_len == sizeof(struct ctl_msg) && c->nstash < CTL_SLOTS);
		c->stash[c->nstash++] = c->ctl[slot];
		if (c->ctl_auto)
			post_ctl_recv(c, slot);
		break;
	}
	case WR_DATA:
		if (wc.opcode == IBV_WC_RECV) {
			const uint8_t *p = c->data + (size_t)(wc.wr_id & 0xff) * c->size;

			c->recv_data--;
			if (wc.byte_len != c->size || !verify(p, c->size))
				c->bad = true;
		}
		c->completed++;
		break;
	}
	return (unsigned int)(wc.wr_id & 0xf00);
}

/* Take the oldest control message, polling until there is one. */
static struct ctl_msg
next_ctl(struct conn *c)
{
	struct ctl_msg m;

	while (c->nstash == 0)
		(void)poll_one(c);
	m = c->stash[0];
	memmove(c->stash, c->stash + 1, --c->nstash * sizeof(m));
	return m;
}

static void
send_ctl(struct conn *c, uint32_t type, uint32_t size, uint32_t value)
{
	struct ctl_msg *m = &c->ctl[CTL_SLOTS];
	struct ibv_sge sge = { .addr = (uintptr_t)m, .length = sizeof(*m), .lkey = c->ctl_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = WR_CTL_SEND, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	m->type = type;
	m->size = size;
	m->value = value;
	CHECK(ibv_post_send(c->id->qp, &wr, &bad) == 0);
	/* the send slot is reused: wait for this one (others may complete first) */
	while (poll_one(c) != WR_CTL_SEND)
		;
}

static struct ctl_msg
wait_ctl(struct conn *c, uint32_t type, uint32_t size)
{
	struct ctl_msg m = next_ctl(c);

	if (m.type != type || m.size != size) {
		fprintf(stderr, "cm_bw: control message %u size %u, expected %u size %u\n", m.type,
			m.size, type, size);
		exit(1);
	}
	return m;
}

static void
setup(struct conn *c, size_t max_size)
{
	struct ibv_qp_init_attr qa;

	c->pd = ibv_alloc_pd(c->id->verbs);
	CHECK(c->pd != NULL);
	c->cq = ibv_create_cq(c->id->verbs, 4 * WINDOW + 2 * CTL_SLOTS, NULL, NULL, 0);
	CHECK(c->cq != NULL);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 2 * WINDOW;
	qa.cap.max_recv_wr = 2 * WINDOW + CTL_SLOTS;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	CHECK(rdma_create_qp(c->id, c->pd, &qa) == 0);
	/* send: WINDOW receive slots on the server (and the client sends from the first) */
	c->data_len = c->op == OP_SEND ? max_size * WINDOW : max_size;
	c->data = calloc(1, c->data_len);
	c->ctl = calloc(CTL_SLOTS + 1, sizeof(*c->ctl));
	CHECK(c->data != NULL && c->ctl != NULL);
	c->data_mr = ibv_reg_mr(c->pd, c->data, c->data_len, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	c->ctl_mr = ibv_reg_mr(c->pd, c->ctl, (CTL_SLOTS + 1) * sizeof(*c->ctl),
			       IBV_ACCESS_LOCAL_WRITE);
	CHECK(c->data_mr != NULL && c->ctl_mr != NULL);
	for (unsigned int i = 0; c->ctl_auto && i < CTL_SLOTS; i++)
		post_ctl_recv(c, i);
}

/* The connection's addresses have the family asked for; the local one is a GID. */
static void
check_addrs(struct conn *c, const char *who)
{
	struct sockaddr *l = rdma_get_local_addr(c->id), *p = rdma_get_peer_addr(c->id);
	char ls[INET6_ADDRSTRLEN], ps[INET6_ADDRSTRLEN], gs[INET6_ADDRSTRLEN];
	struct ibv_port_attr pa;
	union ibv_gid gid, want;
	int found = -1;

	CHECK(l->sa_family == c->family && p->sa_family == c->family);
	memset(&want, 0, sizeof(want));
	if (c->family == AF_INET6) {
		memcpy(want.raw, &((struct sockaddr_in6 *)l)->sin6_addr, 16);
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)l)->sin6_addr, ls, sizeof(ls));
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)p)->sin6_addr, ps, sizeof(ps));
	} else {
		want.raw[10] = want.raw[11] = 0xff; /* IPv4-mapped (RFC 4291 §2.5.5.2) */
		memcpy(want.raw + 12, &((struct sockaddr_in *)l)->sin_addr, 4);
		inet_ntop(AF_INET, &((struct sockaddr_in *)l)->sin_addr, ls, sizeof(ls));
		inet_ntop(AF_INET, &((struct sockaddr_in *)p)->sin_addr, ps, sizeof(ps));
	}
	CHECK(ibv_query_port(c->id->verbs, c->id->port_num ? c->id->port_num : 1, &pa) == 0);
	for (int i = 0; i < pa.gid_tbl_len && found < 0; i++)
		if (ibv_query_gid(c->id->verbs, c->id->port_num ? c->id->port_num : 1, i,
				  &gid) == 0 && memcmp(&gid, &want, 16) == 0)
			found = i;
	if (found < 0) {
		fprintf(stderr, "cm_bw: %s: local address %s is no GID\n", who, ls);
		exit(1);
	}
	inet_ntop(AF_INET6, want.raw, gs, sizeof(gs));
	printf("%s: %s -> %s (%s), GID[%d] %s\n", who, ls, ps,
	       c->family == AF_INET6 ? "IPv6" : "IPv4", found, gs);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The client's side of one size: @return true when it passed. */
static bool
client_size(struct conn *c, uint32_t size, uint32_t iters)
{
	uint32_t windows = 1; /* send: windows the server has receives posted for */
	struct ctl_msg m;
	double t0, t;

	c->size = size;
	c->bad = false;
	wait_ctl(c, MSG_READY, size);
	if (c->op == OP_READ)
		memset(c->data, 0xa5, size);
	else
		fill(c->data, size);
	c->sent = c->completed = 0;
	t0 = now_s();
	while (c->completed < iters) {
		/* write/read: WINDOW outstanding; send: as many windows as CREDITs allow */
		uint32_t limit = c->op == OP_SEND ? windows * WINDOW : c->completed + WINDOW;

		while (c->sent < iters && c->sent < limit) {
			struct ibv_sge sge = { .addr = (uintptr_t)c->data, .length = size,
					       .lkey = c->data_mr->lkey };
			struct ibv_send_wr wr = { .wr_id = WR_DATA, .sg_list = &sge, .num_sge = 1,
						  .send_flags = IBV_SEND_SIGNALED }, *badwr;

			wr.opcode = c->op == OP_WRITE ? IBV_WR_RDMA_WRITE :
				    c->op == OP_READ ? IBV_WR_RDMA_READ : IBV_WR_SEND;
			if (c->op != OP_SEND) {
				wr.wr.rdma.remote_addr = c->peer.addr;
				wr.wr.rdma.rkey = c->peer.rkey;
			}
			CHECK(ibv_post_send(c->id->qp, &wr, &badwr) == 0);
			c->sent++;
		}
		if (poll_one(c) == WR_CTL_RECV) {
			m = next_ctl(c);
			CHECK(c->op == OP_SEND && m.type == MSG_CREDIT && m.size == size);
			windows++;
		}
	}
	t = now_s() - t0;
	if (c->op == OP_READ && !verify(c->data, size))
		c->bad = true;
	send_ctl(c, MSG_DONE, size, iters);
	m = wait_ctl(c, MSG_RESULT, size);
	printf("%10u %8u %12.2f %s\n", size, iters, t > 0 ? (double)size * iters / t / 1e6 : 0.0,
	       !c->bad && m.value == 1 ? "verified" : "FAILED");
	fflush(stdout);
	return !c->bad && m.value == 1;
}

/* Send, server: receives for the next window, and the control receive behind the last one */
static void
post_window(struct conn *c, uint32_t size, uint32_t iters)
{
	for (uint32_t i = 0; i < WINDOW && c->completed + c->recv_data < iters; i++)
		post_data_recv(c, size);
	if (c->completed + c->recv_data == iters)
		post_ctl_recv(c, 0);
}

/* The server's side of one size: @return true when it passed. */
static bool
server_size(struct conn *c, uint32_t size, uint32_t iters)
{
	uint32_t window = 0;
	struct ctl_msg m;
	bool ok;

	c->size = size;
	c->bad = false;
	if (c->op == OP_READ)
		fill(c->data, size);
	else
		memset(c->data, 0, size);
	c->completed = 0;
	c->next_slot = 0;
	if (c->op == OP_SEND)
		post_window(c, size, iters);
	send_ctl(c, MSG_READY, size, 0);
	for (;;) {
		if (c->nstash > 0 || poll_one(c) == WR_CTL_RECV) {
			m = next_ctl(c);
			if (m.type != MSG_DONE || m.size != size) {
				fprintf(stderr, "cm_bw: control message %u, expected DONE\n", m.type);
				exit(1);
			}
			break;
		}
		/* a window of Sends taken: receives for the next one, then CREDIT */
		if (c->op == OP_SEND && c->completed > 0 && c->recv_data == 0 &&
		    c->completed < iters && c->completed / WINDOW > window) {
			window = c->completed / WINDOW;
			post_window(c, size, iters);
			send_ctl(c, MSG_CREDIT, size, 0);
		}
	}
	ok = !c->bad && m.value == iters;
	if (c->op == OP_SEND)
		ok = ok && c->completed == iters && c->recv_data == 0;
	else if (c->op == OP_WRITE)
		ok = ok && verify(c->data, size);
	send_ctl(c, MSG_RESULT, size, ok);
	printf("server: %u x %u octets %s\n", iters, size, ok ? "verified" : "FAILED");
	fflush(stdout);
	return ok;
}

static void
usage(void)
{
	fprintf(stderr, "usage: cm_bw -s|-c ADDR [-p PORT] -o write|read|send "
			"-S SIZE[,SIZE...] -n ITERS\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	const char *addr = NULL, *port = "18516";
	uint32_t sizes[MAX_SIZES], nsizes = 0, iters = 0, max_size = 0;
	struct rdma_event_channel *ch;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	struct addrinfo hints, *ai;
	struct buf_info mine;
	struct conn c;
	bool server = false, ok = true;
	int opt;

	memset(&c, 0, sizeof(c));
	c.op = -1;
	c.ctl_auto = true;
	while ((opt = getopt(argc, argv, "s:c:p:o:S:n:")) != -1) {
		switch (opt) {
		case 's':
		case 'c':
			server = opt == 's';
			addr = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 'o':
			c.op = strcmp(optarg, "write") == 0 ? OP_WRITE :
			       strcmp(optarg, "read") == 0 ? OP_READ :
			       strcmp(optarg, "send") == 0 ? OP_SEND : -1;
			break;
		case 'S':
			for (char *s = strtok(optarg, ","); s != NULL && nsizes < MAX_SIZES;
			     s = strtok(NULL, ",")) {
				sizes[nsizes] = (uint32_t)strtoul(s, NULL, 0);
				if (sizes[nsizes] == 0)
					usage();
				if (sizes[nsizes] > max_size)
					max_size = sizes[nsizes];
				nsizes++;
			}
			break;
		case 'n':
			iters = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (addr == NULL || c.op < 0 || nsizes == 0 || iters == 0)
		usage();
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | (server ? AI_PASSIVE : 0);
	CHECK(getaddrinfo(addr, port, &hints, &ai) == 0);
	c.family = ai->ai_family;
	ch = rdma_create_event_channel();
	CHECK(ch != NULL);
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = cp.initiator_depth = WINDOW;
	if (server) {
		struct rdma_cm_id *listen;

		CHECK(rdma_create_id(ch, &listen, NULL, RDMA_PS_TCP) == 0);
		CHECK(rdma_bind_addr(listen, ai->ai_addr) == 0);
		CHECK(rdma_listen(listen, 1) == 0);
		printf("server: listening on %s port %s\n", addr, port);
		fflush(stdout);
		ev = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
		c.id = ev->id;
		CHECK(rdma_ack_cm_event(ev) == 0);
		c.ctl_auto = c.op != OP_SEND;
		setup(&c, max_size);
		mine.addr = (uintptr_t)c.data;
		mine.rkey = c.data_mr->rkey;
		mine.len = (uint32_t)c.data_len;
		cp.private_data = &mine;
		cp.private_data_len = sizeof(mine);
		CHECK(rdma_accept(c.id, &cp) == 0);
		CHECK(rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ESTABLISHED)) == 0);
		check_addrs(&c, "server");
		for (uint32_t i = 0; i < nsizes; i++)
			ok &= server_size(&c, sizes[i], iters);
		CHECK(rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_DISCONNECTED)) == 0);
		rdma_destroy_id(listen);
	} else {
		CHECK(rdma_create_id(ch, &c.id, NULL, RDMA_PS_TCP) == 0);
		CHECK(rdma_resolve_addr(c.id, NULL, ai->ai_addr, 5000) == 0);
		CHECK(rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED)) == 0);
		CHECK(rdma_resolve_route(c.id, 5000) == 0);
		CHECK(rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED)) == 0);
		setup(&c, max_size);
		CHECK(rdma_connect(c.id, &cp) == 0);
		ev = expect(ch, RDMA_CM_EVENT_ESTABLISHED);
		CHECK(ev->param.conn.private_data_len >= sizeof(c.peer));
		memcpy(&c.peer, ev->param.conn.private_data, sizeof(c.peer));
		CHECK(rdma_ack_cm_event(ev) == 0);
		CHECK(c.peer.len >= max_size);
		check_addrs(&c, "client");
		printf("%10s %8s %12s\n", "#bytes", "#iters", "MB/s");
		for (uint32_t i = 0; i < nsizes; i++)
			ok &= client_size(&c, sizes[i], iters);
		CHECK(rdma_disconnect(c.id) == 0);
		CHECK(rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_DISCONNECTED)) == 0);
	}
	rdma_destroy_qp(c.id);
	ibv_dereg_mr(c.data_mr);
	ibv_dereg_mr(c.ctl_mr);
	ibv_destroy_cq(c.cq);
	ibv_dealloc_pd(c.pd);
	rdma_destroy_id(c.id);
	rdma_destroy_event_channel(ch);
	freeaddrinfo(ai);
	free(c.data);
	free(c.ctl);
	printf("%s: %s\n", server ? "server" : "client", ok ? "all sizes verified" : "FAILED");
	return ok ? 0 : 1;
}
