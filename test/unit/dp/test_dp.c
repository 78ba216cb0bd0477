/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp in one process: the test plays the control server (lib/server's side of
 * wn_server_dp.h: object descriptors and CM requests on the to_dp ring, events and DONEs back
 * on to_ctl) and the clients (posting WQEs into the rings, polling CQs), and drives one shard
 * with wn_dp_poll() on its own thread. The port is net_null (no-rx): the two connections of a
 * test run over the dataplane's loopback, through lib/cm, MPA/TCP (lib/mpa, lib/tcp) and the
 * QP engines (lib/rnic), as two clients of one warpnicd do.
 *
 * What would break if these failed: the dataplane as a library (create, start, poll, stop,
 * free), its dispatch of objects and CM messages, connection setup and teardown through lib/cm
 * with exactly one final event each, data through the engines, the release of QPs and CQs
 * with DONE, MR deregistration; an InfiniBand-style connection (lib/cm) whose peer QP goes
 * while ours is busy.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "wn_dp.h"
#include "wn_mem.h"
#include "wn_queue.h"
#include "wn_server_dp.h"

#define DEPTH 64
#define BUF 65536
#define LISTEN_ID 100
#define ACTIVE_ID 101
#define PASSIVE_ID 102
#define PORT 7471

struct qp_side {
	struct wn_server_dp_qp d;
	void *ring;
	struct wn_queue_ring sq, rq; /* the client's producer views */
	uint8_t *buf;
	uint32_t stag;
};

static struct {
	struct wn_dp_conf conf;
	struct wn_dp_group *g;
	struct wn_dp *dp;
	struct wn_mem_table *mem;
	uint32_t pd;
	struct wn_server_dp_cq cqd;
	void *cq_ring;
	struct wn_queue_ring cq;     /* the client's consumer view */
	struct qp_side a, b;
	uint32_t token;              /* the passive connection's key */
	unsigned int ev[WN_CTL_CM_EV_DISCONNECTED + 8][2];
	unsigned int done[4];        /* DONEs: a, b, cq, mr */
	int32_t last_status;
	unsigned int listening;      /* LISTEN acknowledged (status 0) */
} t;

static struct wn_ctl_addr
addr(uint16_t port)
{
	struct wn_ctl_addr a = {.family = WN_CTL_AF_INET, .port = port};

	a.addr[0] = 198;
	a.addr[1] = 18;
	a.addr[2] = 0;
	a.addr[3] = 1;
	return a;
}

static void
post(uint32_t type, uint32_t handle, void *obj, void (*fill)(struct wn_server_dp_msg *))
{
	struct wn_server_dp_msg *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	m->type = type;
	m->handle = handle;
	m->obj = obj;
	if (fill != NULL)
		fill(m);
	assert_int_equal(rte_ring_enqueue(t.conf.to_dp, m), 0);
}

/* What the dataplane told the control thread. */
static void
drain_ctl(void)
{
	void *p;

	while (rte_ring_dequeue(t.conf.to_ctl, &p) == 0) {
		struct wn_server_dp_msg *m = p;

		if (m->type == WN_SERVER_DP_DONE) {
			t.done[0] += m->handle == t.a.d.handle;
			t.done[1] += m->handle == t.b.d.handle;
			t.done[2] += m->handle == t.cqd.handle;
			t.done[3] += m->handle == 500;
		} else if (m->type == WN_SERVER_DP_CM_LISTENING) {
			assert_int_equal(m->u.cm.id, LISTEN_ID);
			assert_int_equal(m->u.cm.ev.status, 0);
			t.listening++;
		} else if (m->type == WN_SERVER_DP_CM_EVENT) {
			uint32_t e = m->u.cm.ev.event;
			int side = m->u.cm.id == ACTIVE_ID ? 0 : 1;

			assert_true(e < RTE_DIM(t.ev));
			t.ev[e][side]++;
			t.last_status = m->u.cm.ev.status;
			if (e == WN_CTL_CM_EV_CONNECT_REQUEST)
				t.token = m->u.cm.id; /* the key (ev.id) until an id is allocated */
		}
		free(m);
	}
}

static void
poll_until(bool (*cond)(void), unsigned int max)
{
	for (unsigned int i = 0; i < max && !cond(); i++) {
		wn_dp_poll(t.dp);
		drain_ctl();
	}
	assert_true(cond());
}

static void
qp_side_init(struct qp_side *s, uint32_t handle, uint32_t qpn)
{
	uint64_t size = wn_queue_qp_size(DEPTH, 2, 64, DEPTH, 2);
	uint64_t off = wn_queue_qp_rq_offset(DEPTH, 2, 64);
	assert_int_equal(posix_memalign(&s->ring, 4096, size), 0);
	assert_int_equal(wn_queue_qp_init(s->ring, DEPTH, 2, 64, DEPTH, 2), 0);
	assert_int_equal(wn_queue_prod_attach(&s->sq, s->ring, off, WN_QUEUE_KIND_SQ), 0);
	assert_int_equal(wn_queue_prod_attach(&s->rq, (uint8_t *)s->ring + off, size - off,
					      WN_QUEUE_KIND_RQ), 0);
	s->d = (struct wn_server_dp_qp){
		.handle = handle, .qpn = qpn, .pd = t.pd, .send_cq = &t.cqd, .recv_cq = &t.cqd,
		.sq_depth = DEPTH, .rq_depth = DEPTH, .max_send_sge = 2, .max_recv_sge = 2,
		.max_inline = 64, .ird = 4, .ord = 4, .ring = s->ring, .ring_size = size,
	};
	s->buf = aligned_alloc(4096, BUF);
	assert_non_null(s->buf);
	memset(s->buf, 0, BUF);
	assert_int_equal(wn_mem_mr_reg(t.mem, t.pd, s->buf, BUF, (uintptr_t)s->buf,
				       WN_MEM_ACCESS_LOCAL_WRITE | WN_MEM_ACCESS_REMOTE_WRITE |
					       WN_MEM_ACCESS_REMOTE_READ,
				       (uint8_t)qpn, &s->stag),
			 0);
}

static void
fill_listen(struct wn_server_dp_msg *m)
{
	m->u.cm.id = LISTEN_ID;
	m->u.cm.src = addr(PORT);
}

static void
fill_connect(struct wn_server_dp_msg *m)
{
	m->u.cm.id = ACTIVE_ID;
	m->u.cm.qp = t.a.d.handle;
	m->u.cm.src = addr(40000);
	m->u.cm.dst = addr(PORT);
	m->u.cm.param.ird = 4;
	m->u.cm.param.ord = 4;
	memcpy(m->u.cm.param.pd, "hello", 5);
	m->u.cm.param.pd_len = 5;
}

static void
fill_accept(struct wn_server_dp_msg *m)
{
	m->u.cm.id = PASSIVE_ID;
	m->u.cm.conn = t.token;
	m->u.cm.qp = t.b.d.handle;
	m->u.cm.param.ird = 4;
	m->u.cm.param.ord = 4;
}

static void
fill_disconnect(struct wn_server_dp_msg *m)
{
	m->u.cm.id = ACTIVE_ID;
}

static bool got_request(void) { return t.token != 0; }
static bool got_listening(void) { return t.listening == 1; }
static bool both_established(void)
{
	return t.ev[WN_CTL_CM_EV_ESTABLISHED][0] == 1 && t.ev[WN_CTL_CM_EV_ESTABLISHED][1] == 1;
}
static bool both_disconnected(void)
{
	return t.ev[WN_CTL_CM_EV_DISCONNECTED][0] == 1 && t.ev[WN_CTL_CM_EV_DISCONNECTED][1] == 1;
}

static struct wn_queue_cqe cqes[16];
static unsigned int n_cqes;

static bool
have_cqes(void)
{
	while (wn_queue_cons_avail(&t.cq) > 0 && n_cqes < RTE_DIM(cqes)) {
		memcpy(&cqes[n_cqes++], wn_queue_cons_slot(&t.cq, 0), sizeof(cqes[0]));
		wn_queue_cons_release(&t.cq, 1);
	}
	return n_cqes >= 2;
}

static void
post_recv(struct qp_side *s, uint64_t wr_id, uint32_t len)
{
	struct wn_queue_rwqe *w = wn_queue_prod_slot(&s->rq, 0);
	struct wn_queue_sge *g = (struct wn_queue_sge *)(w + 1);

	w->wr_id = wr_id;
	w->num_sge = 1;
	g->addr = (uintptr_t)s->buf;
	g->length = len;
	g->lkey = s->stag;
	wn_queue_prod_commit(&s->rq, 1);
}

static void
post_send(struct qp_side *s, uint8_t opcode, uint64_t wr_id, uint32_t off, uint32_t len,
	  uint64_t raddr, uint32_t rkey)
{
	struct wn_queue_swqe *w = wn_queue_prod_slot(&s->sq, 0);
	struct wn_queue_sge *g = (struct wn_queue_sge *)(w + 1);

	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	w->opcode = opcode;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->num_sge = 1;
	w->u.rdma.remote_addr = raddr;
	w->u.rdma.rkey = rkey;
	g->addr = (uintptr_t)s->buf + off;
	g->length = len;
	g->lkey = s->stag;
	wn_queue_prod_commit(&s->sq, 1);
}

static int
setup(void **state)
{
	uint64_t size;
	(void)state;
	memset(&t, 0, sizeof(t));
	n_cqes = 0;
	t.mem = wn_mem_table_create(256, NULL);
	assert_non_null(t.mem);
	t.pd = (uint32_t)wn_mem_pd_alloc(t.mem);
	size = wn_queue_ring_size(WN_QUEUE_KIND_CQ, 4 * DEPTH, 0, 0);
	assert_int_equal(posix_memalign(&t.cq_ring, 4096, size), 0);
	assert_int_equal(wn_queue_ring_init(t.cq_ring, WN_QUEUE_KIND_CQ, 4 * DEPTH, 0, 0), 0);
	assert_int_equal(wn_queue_cons_attach(&t.cq, t.cq_ring, size, WN_QUEUE_KIND_CQ), 0);
	t.cqd = (struct wn_server_dp_cq){.handle = 10, .depth = 4 * DEPTH, .ring = t.cq_ring,
					 .ring_size = size, .notify_fd = -1};
	qp_side_init(&t.a, 20, 1);
	qp_side_init(&t.b, 21, 2);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	free(t.a.ring);
	free(t.b.ring);
	free(t.a.buf);
	free(t.b.buf);
	free(t.cq_ring);
	wn_mem_table_free(t.mem);
	return 0;
}

/* The port, the mbuf pool and the rings: once for every test (EAL objects stay). */
static struct {
	uint16_t port;
	struct rte_mempool *pool;
	struct rte_ring *to_dp, *to_ctl;
	int efd;
	uint64_t tx_capa, rx_capa;
} env;

/*
 * One shard on the net_null port (198.18.0.1), started; @p ib_port: where InfiniBand-style
 * QPs meet (0: none), @p rnr_hold_us: how long a Send without a receive holds its stream.
 */
static void
dp_up(uint16_t ib_port, uint32_t rnr_hold_us)
{
	if (env.pool == NULL) {
		struct wn_port_conf pc = {0};

		assert_int_equal(rte_eth_dev_get_port_by_name("net_null0", &env.port), 0);
		env.pool = rte_pktmbuf_pool_create("test_dp", 8191, 256, 0,
						   RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
		assert_non_null(env.pool);
		pc.port_id = env.port;
		pc.nb_queues = 1;
		pc.pool = env.pool;
		assert_int_equal(wn_net_port_setup(&pc, &env.tx_capa, &env.rx_capa), 0);
		env.to_dp = rte_ring_create("test_to_dp", 1024, SOCKET_ID_ANY,
					    RING_F_SP_ENQ | RING_F_SC_DEQ);
		env.to_ctl = rte_ring_create("test_to_ctl", 1024, SOCKET_ID_ANY, RING_F_SC_DEQ);
		env.efd = eventfd(0, EFD_NONBLOCK);
		assert_true(env.to_dp != NULL && env.to_ctl != NULL && env.efd >= 0);
	}
	t.conf.pool = env.pool;
	t.conf.tx_offload_capa = env.tx_capa;
	t.conf.rx_offload_capa = env.rx_capa;
	t.conf.port_id = env.port;
	t.conf.mtu = 1500;
	t.conf.n_addrs = 1;
	t.conf.addrs[0] = wn_ip_addr_v4(198, 18, 0, 1);
	t.conf.prefix[0] = 24;
	t.conf.to_dp = env.to_dp;
	t.conf.to_ctl = env.to_ctl;
	t.conf.ctl_efd = env.efd;
	t.conf.mem = t.mem;
	t.conf.max_conns = 64;
	t.conf.sockbuf = 256 * 1024;
	t.conf.mpa_rev = 2;
	t.conf.crc = true;
	t.conf.rtr = 7;
	t.conf.p2p = true;
	t.conf.rfc7306 = true;
	t.conf.ib_port = ib_port;
	t.conf.rnr_hold_us = rnr_hold_us;
	t.g = wn_dp_create(&t.conf, 1);
	assert_non_null(t.g);
	assert_null(wn_dp_shard(t.g, 1));
	t.dp = wn_dp_shard(t.g, 0);
	assert_non_null(t.dp);
	assert_int_equal(wn_dp_start(t.dp), 0);
}

static void
test_dataplane(void **state)
{
	(void)state;
	dp_up(0, 0);

	/* objects, a listener, a connect over the loopback, the accept */
	post(WN_SERVER_DP_CQ_CREATE, t.cqd.handle, &t.cqd, NULL);
	post(WN_SERVER_DP_QP_CREATE, t.a.d.handle, &t.a.d, NULL);
	post(WN_SERVER_DP_QP_CREATE, t.b.d.handle, &t.b.d, NULL);
	post(WN_SERVER_DP_CM_LISTEN, 0, NULL, fill_listen);
	poll_until(got_listening, 20000); /* rdma_listen's answer waits for it */
	post(WN_SERVER_DP_CM_CONNECT, 0, NULL, fill_connect);
	poll_until(got_request, 20000);
	assert_true(t.token & 0x80000000u); /* a key, not a handle */
	post(WN_SERVER_DP_CM_ACCEPT, 0, NULL, fill_accept);
	poll_until(both_established, 20000);

	/* a Send into B's posted receive, a Write into B's region; both complete */
	memcpy(t.a.buf, "a message from A", 17);
	memset(t.a.buf + 4096, 0x5a, 8000);
	post_recv(&t.b, 7, 4096);
	post_send(&t.a, WN_QUEUE_WR_SEND, 1, 0, 17, 0, 0);
	post_send(&t.a, WN_QUEUE_WR_RDMA_WRITE, 2, 4096, 8000, (uintptr_t)t.b.buf + 8192,
		  t.b.stag);
	poll_until(have_cqes, 50000);
	(void)have_cqes();
	for (unsigned int i = 0; i < n_cqes; i++)
		assert_int_equal(cqes[i].status, WN_QUEUE_WC_SUCCESS);
	for (int i = 0; i < 2000 && n_cqes < 3; i++) {
		wn_dp_poll(t.dp);
		(void)have_cqes();
	}
	assert_int_equal(n_cqes, 3); /* B's receive, A's Send and Write */
	assert_memory_equal(t.b.buf, "a message from A", 17);
	for (uint32_t i = 0; i < 8000; i++)
		assert_int_equal(t.b.buf[8192 + i], 0x5a);

	/* rdma_disconnect on A: each side gets exactly one DISCONNECTED */
	post(WN_SERVER_DP_CM_DISCONNECT, 0, NULL, fill_disconnect);
	poll_until(both_disconnected, 50000);
	assert_int_equal(t.last_status, 0);

	/*
	 * The objects go: DONE for each QP and the CQ, then for the MR deregistration, which
	 * (the old region of an ibv_rereg_mr) waits for the pins on the STag it gave away too.
	 */
	post(WN_SERVER_DP_QP_DESTROY, t.a.d.handle, NULL, NULL);
	post(WN_SERVER_DP_QP_DESTROY, t.b.d.handle, NULL, NULL);
	post(WN_SERVER_DP_CQ_DESTROY, t.cqd.handle, NULL, NULL);
	assert_int_equal(wn_mem_pin(t.mem, t.b.stag), 0);
	{
		static struct wn_server_dp_mr mr;

		mr = (struct wn_server_dp_mr){.handle = 500, .stag = t.a.stag,
					      .stag_pins = t.b.stag};
		post(WN_SERVER_DP_MR_DEREG, mr.handle, &mr, NULL);
	}
	for (int i = 0; i < 5000 && (t.done[0] + t.done[1] + t.done[2]) < 3; i++) {
		wn_dp_poll(t.dp);
		drain_ctl();
	}
	/* several ticks (DP_TICK_US) pass with the pin held: no DONE */
	for (int i = 0; i < 20; i++) {
		usleep(2000);
		wn_dp_poll(t.dp);
		drain_ctl();
	}
	assert_int_equal(t.done[3], 0);
	wn_mem_unpin(t.mem, t.b.stag);
	for (int i = 0; i < 2000 && t.done[3] == 0; i++) {
		usleep(1000);
		wn_dp_poll(t.dp);
		drain_ctl();
	}
	assert_int_equal(t.done[0], 1);
	assert_int_equal(t.done[1], 1);
	assert_int_equal(t.done[2], 1);
	assert_int_equal(t.done[3], 1);
	/* no connection event beyond one per side and kind */
	for (unsigned int e = 0; e < RTE_DIM(t.ev); e++)
		assert_true(t.ev[e][0] <= 1 && t.ev[e][1] <= 1);

	wn_dp_stop(t.dp);
	wn_dp_free(t.g);
}

/* InfiniBand-style moves: RTR to the other QP at our own address, RTS with a retry budget. */
static void
fill_ib(struct wn_server_dp_msg *m, uint32_t state, uint32_t rqpn)
{
	m->u.ib.qp_state = state;
	m->u.ib.rqpn = rqpn;
	m->u.ib.ird = m->u.ib.ord = 4;
	m->u.ib.timeout = 14;
	m->u.ib.retry_cnt = 7;
	m->u.ib.access = WN_CTL_ACCESS_LOCAL_WRITE | WN_CTL_ACCESS_REMOTE_WRITE |
			 WN_CTL_ACCESS_REMOTE_READ;
	m->u.ib.src = addr(0);
	m->u.ib.dst = addr(0);
}

static void fill_rtr_a(struct wn_server_dp_msg *m) { fill_ib(m, WN_CTL_QPS_RTR, 2); }
static void fill_rtr_b(struct wn_server_dp_msg *m) { fill_ib(m, WN_CTL_QPS_RTR, 1); }
static void fill_rts(struct wn_server_dp_msg *m) { fill_ib(m, WN_CTL_QPS_RTS, 0); }

static bool a_and_b_done(void) { return t.done[0] == 1 && t.done[1] == 1; }

/*
 * An InfiniBand-style connection whose peer QP goes while ours is busy: B (no receive posted)
 * holds A's Sends until A's window closes, so A's QP is being polled with its stream full;
 * B's QP is destroyed, A's connection ends and A's QP is parked (it keeps its work, as on
 * InfiniBand); then A's QP is destroyed and the shard polls on. What would break if this
 * failed: a parked QP left on the shard's list of QPs it polls, polled after it is freed.
 */
static void
test_ib_peer_gone(void **state)
{
	(void)state;
	dp_up(4791, 10u * 1000 * 1000);
	post(WN_SERVER_DP_CQ_CREATE, t.cqd.handle, &t.cqd, NULL);
	post(WN_SERVER_DP_QP_CREATE, t.a.d.handle, &t.a.d, NULL);
	post(WN_SERVER_DP_QP_CREATE, t.b.d.handle, &t.b.d, NULL);
	post(WN_SERVER_DP_QP_IB, t.b.d.handle, &t.b.d, fill_rtr_b);
	post(WN_SERVER_DP_QP_IB, t.a.d.handle, &t.a.d, fill_rtr_a);
	post(WN_SERVER_DP_QP_IB, t.a.d.handle, &t.a.d, fill_rts);
	post(WN_SERVER_DP_QP_IB, t.b.d.handle, &t.b.d, fill_rts);

	/* one Send completes both ways round: the connection is up */
	memcpy(t.a.buf, "over an InfiniBand-style connection", 36);
	post_recv(&t.b, 7, 4096);
	post_send(&t.a, WN_QUEUE_WR_SEND, 1, 0, 36, 0, 0);
	poll_until(have_cqes, 50000);
	for (unsigned int i = 0; i < n_cqes; i++)
		assert_int_equal(cqes[i].status, WN_QUEUE_WC_SUCCESS);
	assert_memory_equal(t.b.buf, "over an InfiniBand-style connection", 36);

	/* 40 Sends of 60000 octets, no receive: B holds them, A's stream fills (256 KiB each) */
	for (uint64_t i = 0; i < 40; i++)
		post_send(&t.a, WN_QUEUE_WR_SEND, 100 + i, 0, 60000, 0, 0);
	for (int i = 0; i < 20000; i++)
		wn_dp_poll(t.dp);
	drain_ctl();

	/* B's QP goes; A's connection ends and its QP is parked; then A's goes */
	post(WN_SERVER_DP_QP_DESTROY, t.b.d.handle, NULL, NULL);
	for (int i = 0; i < 20000; i++)
		wn_dp_poll(t.dp);
	post(WN_SERVER_DP_QP_DESTROY, t.a.d.handle, NULL, NULL);
	poll_until(a_and_b_done, 50000);
	for (int i = 0; i < 20000; i++)
		wn_dp_poll(t.dp);
	post(WN_SERVER_DP_CQ_DESTROY, t.cqd.handle, NULL, NULL);
	for (int i = 0; i < 5000 && t.done[2] == 0; i++) {
		wn_dp_poll(t.dp);
		drain_ctl();
	}
	assert_int_equal(t.done[2], 1);
	wn_dp_stop(t.dp);
	wn_dp_free(t.g);
}

int
main(void)
{
	char *argv[] = { "test_dp", "--no-huge", "--no-shconf", "--no-pci", "-l", "0", "-m", "256",
			 "--file-prefix", "test_dp", "--log-level", "*:error",
			 "--vdev", "net_null0,no-rx=1", NULL };
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dataplane, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ib_peer_gone, setup, teardown),
	};

	if (rte_eal_init(14, argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
