/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp's embedding API (wn_dp_embed.h): two whole dataplanes in one process, joined back to
 * back by a pair of net_ring ports, both shards run by the test's thread in turn, each with an
 * application in its loop (wn_dp_poll_rx, the step, wn_dp_poll_tx). What would break if these
 * failed: the run-to-completion harness (warpnic-perf --rtc) and any program that embeds RDMA
 * in its own loop.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "wn_dp.h"
#include "wn_dp_embed.h"
#include "wn_mem.h"
#include "wn_port.h"
#include "wn_queue.h"

#define PORT 4791
#define BUF (256u * 1024u)
#define PUMP_MAX 2000000u

struct side {
	struct wn_dp_group *g;
	struct wn_dp *dp;
	struct wn_mem_table *mem;
	uint16_t port;
	struct wn_ip_addr ip;
	uint32_t pd, stag;
	uint8_t *buf;
	struct wn_dp_cq *cq;
	struct wn_dp_qp *qp;
	struct wn_dp_conn *conn;
	struct wn_dp_listener *l;
};

static struct rte_mempool *pool;
static struct side sa, sb;
static struct rte_ring *rings[2];

static void
eal_up(void)
{
	char prefix[32];
	char *argv[] = { "test", "--no-huge", "--no-shconf", "--no-pci", "-l", "0", "-m", "512",
			 "--file-prefix", prefix, "--log-level", "*:error", "--no-telemetry", NULL };

	snprintf(prefix, sizeof(prefix), "emb%d", (int)getpid());
	if (rte_eal_init(13, argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		exit(1);
	}
	pool = rte_pktmbuf_pool_create("emb_pool", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	rings[0] = rte_ring_create("emb_ab", 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	rings[1] = rte_ring_create("emb_ba", 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (pool == NULL || rings[0] == NULL || rings[1] == NULL) {
		fprintf(stderr, "pool or rings\n");
		exit(1);
	}
}

/* One dataplane over a net_ring port: receives on @p rx, sends on @p tx. */
static void
side_up(struct side *s, const char *name, struct rte_ring *rx, struct rte_ring *tx,
	uint32_t ip)
{
	struct wn_port_conf pc = { .nb_queues = 1, .pool = NULL };
	struct wn_dp_conf c;
	int port;

	port = rte_eth_from_rings(name, &rx, 1, &tx, 1, (unsigned int)SOCKET_ID_ANY);
	assert_true(port >= 0);
	s->port = (uint16_t)port;
	s->mem = wn_mem_table_create(1024, NULL);
	assert_non_null(s->mem);
	memset(&c, 0, sizeof(c));
	pc.port_id = s->port;
	pc.pool = pool;
	assert_int_equal(wn_net_port_setup(&pc, &c.tx_offload_capa, &c.rx_offload_capa), 0);
	c.port_id = s->port;
	c.pool = pool;
	c.mtu = 1500;
	c.n_addrs = 1;
	c.addrs[0].family = WN_AF_INET;
	c.addrs[0].v4 = rte_cpu_to_be_32(ip);
	c.prefix[0] = 24;
	c.ctl_efd = -1;
	c.mem = s->mem;
	c.max_conns = 64;
	c.sockbuf = 512 * 1024;
	c.mpa_rev = 2;
	c.crc = true;
	c.p2p = true;
	c.rtr = 7;
	c.rfc7306 = true;
	s->ip = c.addrs[0];
	s->g = wn_dp_create(&c, 1);
	assert_non_null(s->g);
	s->dp = wn_dp_shard(s->g, 0);
	assert_int_equal(wn_dp_start(s->dp), 0);
	s->buf = aligned_alloc(4096, BUF);
	assert_non_null(s->buf);
	s->pd = (uint32_t)wn_dp_pd_alloc(s->dp);
	assert_true((int)s->pd > 0);
	assert_int_equal(wn_dp_mr_reg(s->dp, s->pd, s->buf, BUF,
				      WN_QUEUE_ACCESS_LOCAL_WRITE | WN_QUEUE_ACCESS_REMOTE_WRITE |
				      WN_QUEUE_ACCESS_REMOTE_READ, &s->stag), 0);
}

static void
side_down(struct side *s)
{
	wn_dp_stop(s->dp);
	wn_dp_free(s->g);
	wn_mem_table_free(s->mem);
	free(s->buf);
	rte_eth_dev_stop(s->port);
	rte_eth_dev_close(s->port);
}

/* One iteration of both shards (each: receive, nothing to do, transmit). */
static void
pump1(void)
{
	wn_dp_poll(sa.dp);
	wn_dp_poll(sb.dp);
}

/* Poll both shards until an event of @p s arrives. */
static int
pump_event(struct side *s, struct wn_dp_cm_event *ev)
{
	for (uint32_t i = 0; i < PUMP_MAX; i++) {
		pump1();
		if (wn_dp_cm_poll(s->dp, ev) == 1)
			return 0;
	}
	return -1;
}

/* Poll until @p s's CQ holds a completion. */
static int
pump_cqe(struct side *s, struct wn_queue_cqe *e)
{
	for (uint32_t i = 0; i < PUMP_MAX; i++) {
		pump1();
		if (wn_dp_cq_poll(s->cq, e, 1) == 1)
			return 0;
	}
	return -1;
}

static struct wn_dp_qp *
qp_new(struct side *s)
{
	struct wn_dp_qp_attr a = {
		.pd = s->pd, .send_cq = s->cq, .recv_cq = s->cq, .sq_depth = 64, .rq_depth = 64,
		.max_send_sge = 2, .max_recv_sge = 2, .max_inline = 64,
	};

	return wn_dp_qp_create(s->dp, &a);
}

static struct wn_llp_ep
ep(const struct side *s, uint16_t port)
{
	struct wn_llp_ep e;

	memset(&e, 0, sizeof(e));
	e.addr = s->ip;
	e.port = port;
	return e;
}

/* a: client, b: server; both QPs in RTS. */
static void
connect_pair(void)
{
	static const char req[] = "request", rep[] = "reply";
	struct wn_dp_conn_param pa = { .ird = 4, .ord = 4, .pd = req, .pd_len = sizeof(req) };
	struct wn_dp_conn_param pb = { .ird = 4, .ord = 4, .pd = rep, .pd_len = sizeof(rep) };
	struct wn_llp_ep la = ep(&sa, 0), lb = ep(&sb, PORT), any = ep(&sb, PORT);
	struct wn_dp_cm_event ev;
	int got = 0;

	memset(&any.addr.v4, 0, sizeof(any.addr.v4));
	sb.l = wn_dp_listen(sb.dp, &any, &sb);
	assert_non_null(sb.l);
	sa.qp = qp_new(&sa);
	sb.qp = qp_new(&sb);
	assert_non_null(sa.qp);
	assert_non_null(sb.qp);
	assert_int_equal(wn_dp_qp_state(sa.qp), 1);
	sa.conn = wn_dp_connect(sa.dp, sa.qp, &la, &lb, &pa, &sa);
	assert_non_null(sa.conn);
	/* a second connection on a QP that carries one is refused */
	assert_null(wn_dp_connect(sa.dp, sa.qp, &la, &lb, &pa, &sa));
	assert_int_equal(pump_event(&sb, &ev), 0);
	assert_int_equal(ev.type, WN_CM_EV_CONNECT_REQUEST);
	assert_ptr_equal(ev.user, &sb);
	assert_ptr_equal(ev.listener, sb.l);
	assert_int_equal(ev.pd_len, sizeof(req));
	assert_memory_equal(ev.pd, req, sizeof(req));
	sb.conn = ev.conn;
	assert_int_equal(wn_dp_accept(sb.conn, sb.qp, &pb, &sb), 0);
	/* both sides: ESTABLISHED, the client with the reply's Private Data */
	while (got != 3) {
		pump1();
		if (wn_dp_cm_poll(sa.dp, &ev) == 1) {
			assert_int_equal(ev.type, WN_CM_EV_ESTABLISHED);
			assert_ptr_equal(ev.conn, sa.conn);
			assert_ptr_equal(ev.user, &sa);
			assert_int_equal(ev.pd_len, sizeof(rep));
			assert_memory_equal(ev.pd, rep, sizeof(rep));
			got |= 1;
		}
		if (wn_dp_cm_poll(sb.dp, &ev) == 1) {
			assert_int_equal(ev.type, WN_CM_EV_ESTABLISHED);
			assert_ptr_equal(ev.conn, sb.conn);
			got |= 2;
		}
	}
	assert_int_equal(wn_dp_qp_state(sa.qp), 3);
	assert_int_equal(wn_dp_qp_state(sb.qp), 3);
}

static void
post(struct side *s, uint8_t opcode, uint64_t wr_id, uint32_t off, uint32_t len,
     uint64_t raddr, uint32_t rkey)
{
	struct wn_queue_swqe w;
	struct wn_queue_sge sge = { .addr = (uint64_t)(uintptr_t)(s->buf + off), .length = len,
				    .lkey = s->stag };

	memset(&w, 0, sizeof(w));
	w.wr_id = wr_id;
	w.opcode = opcode;
	w.flags = WN_QUEUE_SEND_SIGNALED;
	w.num_sge = 1;
	w.u.rdma.remote_addr = raddr;
	w.u.rdma.rkey = rkey;
	assert_int_equal(wn_dp_post_send(s->qp, &w, &sge), 0);
}

static void
fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed + (i >> 9));
}

/* Close both ends, give the handles back, wait until quiet. */
static void
teardown_pair(void)
{
	struct wn_dp_cm_event ev;
	uint32_t i;

	assert_int_equal(wn_dp_disconnect(sa.conn), 0);
	assert_int_equal(wn_dp_cm_poll(sa.dp, &ev), 1); /* at once, locally */
	assert_int_equal(ev.type, WN_CM_EV_DISCONNECTED);
	assert_int_equal(pump_event(&sb, &ev), 0);
	assert_int_equal(ev.type, WN_CM_EV_DISCONNECTED);
	assert_ptr_equal(ev.conn, sb.conn);
	wn_dp_conn_destroy(sa.conn);
	wn_dp_conn_destroy(sb.conn);
	for (i = 0; i < PUMP_MAX && !(wn_dp_quiet(sa.dp) && wn_dp_quiet(sb.dp)); i++)
		pump1();
	assert_true(i < PUMP_MAX);
	assert_int_equal(wn_dp_qp_state(sa.qp), 6);
	assert_int_equal(wn_dp_qp_destroy(sa.qp), 0);
	assert_int_equal(wn_dp_qp_destroy(sb.qp), 0);
	wn_dp_unlisten(sb.l);
	sa.qp = sb.qp = NULL;
	sa.conn = sb.conn = NULL;
	sb.l = NULL;
}

static int
setup(void **state)
{
	(void)state;
	side_up(&sa, "emb_a", rings[1], rings[0], 0xc6120001);
	side_up(&sb, "emb_b", rings[0], rings[1], 0xc6120002);
	sa.cq = wn_dp_cq_create(sa.dp, 256);
	sb.cq = wn_dp_cq_create(sb.dp, 256);
	assert_non_null(sa.cq);
	assert_non_null(sb.cq);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	assert_int_equal(wn_dp_cq_destroy(sa.cq), 0);
	assert_int_equal(wn_dp_cq_destroy(sb.cq), 0);
	side_down(&sa);
	side_down(&sb);
	return 0;
}

/* Write, Read, Send/Recv with inline and gathered payloads: every octet checked. */
static void
test_embed_data(void **state)
{
	struct wn_queue_cqe e;
	struct wn_queue_sge rs = { .length = 4096, .lkey = 0 };
	struct wn_queue_swqe w;
	static const char hello[] = "inline hello";

	(void)state;
	connect_pair();
	/* Write 200 KiB a → b */
	fill(sa.buf, 200 * 1024, 1);
	memset(sb.buf, 0, BUF);
	post(&sa, WN_QUEUE_WR_RDMA_WRITE, 11, 0, 200 * 1024, (uint64_t)(uintptr_t)sb.buf, sb.stag);
	assert_int_equal(pump_cqe(&sa, &e), 0);
	assert_int_equal(e.status, WN_QUEUE_WC_SUCCESS);
	assert_int_equal(e.wr_id, 11);
	for (int i = 0; i < 1000; i++)
		pump1();
	assert_memory_equal(sb.buf, sa.buf, 200 * 1024);
	/* Read 100 KiB of b into a's upper half */
	fill(sb.buf + 128 * 1024, 100 * 1024, 2);
	post(&sa, WN_QUEUE_WR_RDMA_READ, 12, 128 * 1024, 100 * 1024,
	     (uint64_t)(uintptr_t)(sb.buf + 128 * 1024), sb.stag);
	assert_int_equal(pump_cqe(&sa, &e), 0);
	assert_int_equal(e.status, WN_QUEUE_WC_SUCCESS);
	assert_int_equal(e.opcode, WN_QUEUE_WC_RDMA_READ);
	assert_memory_equal(sa.buf + 128 * 1024, sb.buf + 128 * 1024, 100 * 1024);
	/* Send: a receive first (RFC 5040 §5.3), one inline and one gathered */
	rs.addr = (uint64_t)(uintptr_t)(sb.buf + 200 * 1024);
	rs.lkey = sb.stag;
	assert_int_equal(wn_dp_post_recv(sb.qp, 21, &rs, 1), 0);
	assert_int_equal(wn_dp_post_recv(sb.qp, 22, &rs, 1), 0);
	memset(&w, 0, sizeof(w));
	w.wr_id = 13;
	w.opcode = WN_QUEUE_WR_SEND;
	w.flags = WN_QUEUE_SEND_SIGNALED | WN_QUEUE_SEND_INLINE;
	w.inline_len = sizeof(hello);
	assert_int_equal(wn_dp_post_send(sa.qp, &w, hello), 0);
	assert_int_equal(pump_cqe(&sb, &e), 0);
	assert_int_equal(e.wr_id, 21);
	assert_int_equal(e.opcode, WN_QUEUE_WC_RECV);
	assert_int_equal(e.byte_len, sizeof(hello));
	assert_memory_equal(sb.buf + 200 * 1024, hello, sizeof(hello));
	assert_int_equal(pump_cqe(&sa, &e), 0);
	assert_int_equal(e.wr_id, 13);
	fill(sa.buf, 3000, 3);
	post(&sa, WN_QUEUE_WR_SEND, 14, 0, 3000, 0, 0);
	assert_int_equal(pump_cqe(&sb, &e), 0);
	assert_int_equal(e.wr_id, 22);
	assert_int_equal(e.byte_len, 3000);
	assert_memory_equal(sb.buf + 200 * 1024, sa.buf, 3000);
	assert_int_equal(pump_cqe(&sa, &e), 0);
	assert_int_equal(e.wr_id, 14);
	teardown_pair();
}

/* A Write to a bad STag: the writer's WQE fails, both QPs leave RTS, nothing is placed. */
static void
test_embed_bad_stag(void **state)
{
	struct wn_queue_cqe e;
	struct wn_dp_cm_event ev;

	(void)state;
	connect_pair();
	memset(sb.buf, 0, 4096);
	fill(sa.buf, 4096, 4);
	post(&sa, WN_QUEUE_WR_RDMA_WRITE, 31, 0, 4096, (uint64_t)(uintptr_t)sb.buf,
	     sb.stag ^ 0x55);
	/* the peer's Terminate closes the stream: DISCONNECTED on both sides */
	assert_int_equal(pump_event(&sa, &ev), 0);
	assert_int_equal(ev.type, WN_CM_EV_DISCONNECTED);
	assert_int_equal(pump_event(&sb, &ev), 0);
	assert_int_equal(ev.type, WN_CM_EV_DISCONNECTED);
	while (wn_dp_cq_poll(sa.cq, &e, 1) == 1)
		assert_int_equal(e.wr_id, 31);
	for (uint32_t i = 0; i < 64; i++)
		assert_int_equal(sb.buf[i], 0);
	assert_int_equal(wn_dp_qp_state(sa.qp), 6);
	wn_dp_conn_destroy(sa.conn);
	wn_dp_conn_destroy(sb.conn);
	for (uint32_t i = 0; i < 20000; i++)
		pump1();
	assert_int_equal(wn_dp_qp_destroy(sa.qp), 0);
	assert_int_equal(wn_dp_qp_destroy(sb.qp), 0);
	wn_dp_unlisten(sb.l);
	while (wn_dp_cq_poll(sb.cq, &e, 1) == 1)
		;
}

/* Reject with Private Data; a connection nobody listens for; a QP destroyed mid-connection. */
static void
test_embed_reject_and_errors(void **state)
{
	static const char no[] = "go away";
	struct wn_llp_ep la = ep(&sa, 0), lb = ep(&sb, PORT), nobody = ep(&sb, PORT + 1);
	struct wn_dp_cm_event ev;
	struct wn_dp_conn *c;

	(void)state;
	sb.l = wn_dp_listen(sb.dp, &lb, NULL);
	assert_non_null(sb.l);
	/* the same port twice */
	assert_null(wn_dp_listen(sb.dp, &lb, NULL));
	sa.qp = qp_new(&sa);
	assert_non_null(sa.qp);
	sa.conn = wn_dp_connect(sa.dp, sa.qp, &la, &lb, NULL, &sa);
	assert_non_null(sa.conn);
	assert_int_equal(pump_event(&sb, &ev), 0);
	assert_int_equal(ev.type, WN_CM_EV_CONNECT_REQUEST);
	assert_int_equal(wn_dp_reject(ev.conn, no, sizeof(no)), 0);
	/* accepting after the reject is refused */
	sb.qp = qp_new(&sb);
	assert_int_equal(wn_dp_accept(ev.conn, sb.qp, NULL, NULL), -EINVAL);
	c = ev.conn;
	assert_int_equal(pump_event(&sa, &ev), 0);
	assert_int_equal(ev.type, WN_CM_EV_REJECTED);
	assert_int_equal(ev.pd_len, sizeof(no));
	assert_memory_equal(ev.pd, no, sizeof(no));
	wn_dp_conn_destroy(c);
	wn_dp_conn_destroy(sa.conn);
	/* nobody listens: a final event, the QP is free again for another connection */
	for (uint32_t i = 0; i < 1000; i++)
		pump1();
	sa.conn = wn_dp_connect(sa.dp, sa.qp, &la, &nobody, NULL, &sa);
	assert_non_null(sa.conn);
	assert_int_equal(pump_event(&sa, &ev), 0);
	assert_true(ev.type == WN_CM_EV_REJECTED || ev.type == WN_CM_EV_CONNECT_ERROR ||
		    ev.type == WN_CM_EV_UNREACHABLE);
	assert_int_not_equal(ev.status, 0);
	wn_dp_conn_destroy(sa.conn);
	assert_int_equal(wn_dp_qp_destroy(sa.qp), 0);
	/* a CQ a QP uses cannot go */
	assert_int_equal(wn_dp_cq_destroy(sb.cq), -EBUSY);
	/* QP destroyed while its connection is up: the peer sees DISCONNECTED */
	wn_dp_unlisten(sb.l);
	assert_int_equal(wn_dp_qp_destroy(sb.qp), 0);
	connect_pair();
	assert_int_equal(wn_dp_qp_destroy(sa.qp), 0);
	assert_int_equal(pump_event(&sb, &ev), 0);
	assert_int_equal(ev.type, WN_CM_EV_DISCONNECTED);
	/* the id outlives its QP: DISCONNECTED locally too (rdma_cm) */
	assert_int_equal(pump_event(&sa, &ev), 0);
	assert_int_equal(ev.type, WN_CM_EV_DISCONNECTED);
	assert_ptr_equal(ev.conn, sa.conn);
	wn_dp_conn_destroy(sa.conn);
	wn_dp_conn_destroy(sb.conn);
	assert_int_equal(wn_dp_qp_destroy(sb.qp), 0);
	wn_dp_unlisten(sb.l);
	for (uint32_t i = 0; i < 20000; i++)
		pump1();
}

/* Posting limits, memory rules. */
static void
test_embed_limits(void **state)
{
	struct wn_queue_sge sge[4];
	struct wn_queue_swqe w;
	struct wn_dp_qp *qp;
	uint8_t big[128];
	uint32_t stag;
	int rc, n = 0;

	(void)state;
	qp = qp_new(&sa);
	assert_non_null(qp);
	memset(&w, 0, sizeof(w));
	memset(sge, 0, sizeof(sge));
	w.opcode = WN_QUEUE_WR_SEND;
	w.num_sge = 3; /* the QP takes 2 */
	assert_int_equal(wn_dp_post_send(qp, &w, sge), -EINVAL);
	w.num_sge = 0;
	w.flags = WN_QUEUE_SEND_INLINE;
	w.inline_len = sizeof(big); /* max_inline 64 */
	assert_int_equal(wn_dp_post_send(qp, &w, big), -EINVAL);
	assert_int_equal(wn_dp_post_recv(qp, 1, sge, 3), -EINVAL);
	while ((rc = wn_dp_post_recv(qp, 1, sge, 1)) == 0)
		n++;
	assert_int_equal(rc, -EAGAIN);
	assert_int_equal(n, 64);
	/* a QP not connected: nothing happens to what is posted */
	for (uint32_t i = 0; i < 100; i++)
		pump1();
	assert_int_equal(wn_dp_qp_destroy(qp), 0);
	/* memory: a second region, deregistered; a stale STag is refused */
	assert_int_equal(wn_dp_mr_reg(sa.dp, sa.pd, sa.buf, 4096, WN_QUEUE_ACCESS_LOCAL_WRITE,
				      &stag), 0);
	assert_int_equal(wn_dp_mr_dereg(sa.dp, stag), 0);
	assert_int_equal(wn_dp_mr_dereg(sa.dp, stag), -ENOENT);
	assert_null(wn_dp_cq_create(sa.dp, 0));
}

/* A dataplane with a control thread keeps lib/mem to it. */
static void
test_embed_ctl_owns_mem(void **state)
{
	struct wn_dp_conf c;
	struct wn_dp_group *g;
	struct rte_ring *r = rte_ring_create("emb_ctl", 64, SOCKET_ID_ANY, 0);
	uint32_t stag;

	(void)state;
	assert_non_null(r);
	memset(&c, 0, sizeof(c));
	c.port_id = sa.port;
	c.pool = pool;
	c.mtu = 1500;
	c.ctl_efd = -1;
	c.mem = sa.mem;
	c.to_dp = r;
	c.to_ctl = r;
	c.max_conns = 4;
	c.sockbuf = 65536;
	g = wn_dp_create(&c, 1);
	assert_non_null(g);
	assert_int_equal(wn_dp_pd_alloc(wn_dp_shard(g, 0)), -EBUSY);
	assert_int_equal(wn_dp_mr_reg(wn_dp_shard(g, 0), 1, sa.buf, 64, 0, &stag), -EBUSY);
	wn_dp_free(g);
	rte_ring_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_embed_data),
		cmocka_unit_test(test_embed_bad_stag),
		cmocka_unit_test(test_embed_reject_and_errors),
		cmocka_unit_test(test_embed_limits),
		cmocka_unit_test(test_embed_ctl_owns_mem),
	};

	char dir[PATH_MAX];
	int rc;

	eal_up();
	rc = cmocka_run_group_tests(tests, setup, teardown);
	/* the per-process EAL runtime directory would stay behind in /var/run/dpdk */
	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	(void)rmdir(dir);
	return rc;
}
