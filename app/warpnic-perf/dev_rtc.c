/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RNIC modes' device run to completion (--rtc): the dataplane shard this thread runs
 * (lib/dp, wn_dp_embed.h; embed.c starts it on the main lcore). Memory, CQs, QPs and
 * connections are the shard's own objects, created in-process; the measurement loop is the
 * shard's loop with the mode's step in the middle (wn_dp_poll_rx, step, wn_dp_poll_tx), and
 * every wait is one more iteration of it: one thread, nothing handed to another.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wn_node.h"
#include "wn_dp_embed.h"

#include "perf.h"
#include "perf_rnic.h"

/* Connection ids: the control connection, the data ones, the requests of a server. */
#define MAX_IDS (4 * PERF_RNIC_MAX_QPS + 8)
#define MAX_CQS 4
#define MAX_MRS 4
/* How long the connections get to close (FINs both ways) before the shard stops. */
#define LINGER_US 3000000u
/* Device limits, as warpnicd's control server reports them (lib/server/dev.c). */
#define RTC_MAX_QP_WR 16384
#define RTC_MAX_CQE 65536
#define RTC_MAX_RD_ATOM 16

static struct {
	struct wn_dp *dp;
	uint32_t pd;
	struct wn_dp_listener *l;
	struct wn_dp_conn *ids[MAX_IDS];  /* id i + 1 */
	uint32_t nid;
	struct perf_cq cqs[MAX_CQS];
	unsigned int ncq;
	struct perf_qp qps[PERF_RNIC_MAX_QPS + 1];
	unsigned int nqp;
	uint32_t mrs[MAX_MRS];
	unsigned int nmr;
} rs;

static int
rtc_open(struct perf_rnic *r)
{
	int pd;

	memset(&rs, 0, sizeof(rs));
	rs.dp = wn_node_shard(0);
	if (rs.dp == NULL) {
		fprintf(stderr, "%s: --rtc: no dataplane shard\n", r->ops->name);
		return -ENODEV;
	}
	pd = wn_dp_pd_alloc(rs.dp);
	if (pd < 0) {
		fprintf(stderr, "%s: protection domain: %s\n", r->ops->name, strerror(-pd));
		return pd;
	}
	rs.pd = (uint32_t)pd;
	r->dev.max_qp_wr = RTC_MAX_QP_WR;
	r->dev.max_cqe = RTC_MAX_CQE;
	r->dev.max_qp_rd_atom = RTC_MAX_RD_ATOM;
	r->dev.max_qp_init_rd_atom = RTC_MAX_RD_ATOM;
	return 0;
}

static void
rtc_close(struct perf_rnic *r)
{
	uint64_t end;

	(void)r;
	if (rs.dp == NULL)
		return;
	for (uint32_t i = 0; i < rs.nid; i++)
		if (rs.ids[i] != NULL)
			(void)wn_dp_disconnect(rs.ids[i]);
	/* the peer gets our last messages and FIN before the shard stops (which resets) */
	end = wn_net_now_us() + LINGER_US;
	do {
		struct wn_dp_cm_event ev;

		wn_dp_poll(rs.dp);
		while (wn_dp_cm_poll(rs.dp, &ev) == 1)
			;
	} while (!wn_dp_quiet(rs.dp) && wn_net_now_us() < end);
	for (uint32_t i = 0; i < rs.nid; i++)
		wn_dp_conn_destroy(rs.ids[i]);
	for (unsigned int i = 0; i < rs.nqp; i++)
		(void)wn_dp_qp_destroy(rs.qps[i].h);
	for (unsigned int i = 0; i < rs.ncq; i++)
		(void)wn_dp_cq_destroy(rs.cqs[i].h);
	wn_dp_unlisten(rs.l);
	for (unsigned int i = 0; i < rs.nmr; i++)
		(void)wn_dp_mr_dereg(rs.dp, rs.mrs[i]);
	(void)wn_dp_pd_free(rs.dp, rs.pd);
	memset(&rs, 0, sizeof(rs));
}

static int
rtc_reg_mr(struct perf_rnic *r, void *addr, size_t len, uint32_t *key)
{
	int rc;

	(void)r;
	if (rs.nmr == MAX_MRS)
		return -ENOSPC;
	rc = wn_dp_mr_reg(rs.dp, rs.pd, addr, len, WN_QUEUE_ACCESS_LOCAL_WRITE |
			  WN_QUEUE_ACCESS_REMOTE_WRITE | WN_QUEUE_ACCESS_REMOTE_READ, key);
	if (rc == 0)
		rs.mrs[rs.nmr++] = *key;
	return rc;
}

static struct perf_cq *
rtc_cq_create(struct perf_rnic *r, uint32_t depth, bool notify)
{
	struct wn_dp_cq *cq;

	(void)r;
	(void)notify; /* nobody sleeps: every wait is an iteration of the shard */
	if (rs.ncq == MAX_CQS) {
		errno = ENOSPC;
		return NULL;
	}
	cq = wn_dp_cq_create(rs.dp, depth);
	if (cq == NULL)
		return NULL;
	rs.cqs[rs.ncq].h = cq;
	return &rs.cqs[rs.ncq++];
}

static struct perf_qp *
rtc_qp_create(struct perf_rnic *r, const struct wn_ctl_create_qp_req *q, struct perf_cq *scq,
	      struct perf_cq *rcq)
{
	struct wn_dp_qp_attr a = {
		.pd = rs.pd,
		.send_cq = scq->h,
		.recv_cq = rcq->h,
		.sq_depth = q->max_send_wr,
		.rq_depth = q->max_recv_wr,
		.max_send_sge = q->max_send_sge,
		.max_recv_sge = q->max_recv_sge,
		.max_inline = q->max_inline_data,
		.sq_sig_all = q->sq_sig_all != 0,
	};
	struct wn_dp_qp *qp;

	(void)r;
	if (rs.nqp == PERF_RNIC_MAX_QPS + 1) {
		errno = ENOSPC;
		return NULL;
	}
	qp = wn_dp_qp_create(rs.dp, &a);
	if (qp == NULL)
		return NULL;
	rs.qps[rs.nqp].h = qp;
	rs.qps[rs.nqp].handle = wn_dp_qp_num(qp);
	return &rs.qps[rs.nqp++];
}

/* Posting straight into the ring: no lock (one thread), no doorbell (the shard polls). */
static int64_t
rtc_wq_begin(struct perf_qp *qp, bool rq)
{
	return wn_queue_prod_space(rq ? wn_dp_qp_rq(qp->h) : wn_dp_qp_sq(qp->h));
}

static void *
rtc_wq_slot(struct perf_qp *qp, bool rq, uint32_t i)
{
	return wn_queue_prod_slot(rq ? wn_dp_qp_rq(qp->h) : wn_dp_qp_sq(qp->h), i);
}

static void
rtc_wq_end(struct perf_qp *qp, bool rq, uint32_t n)
{
	if (n > 0)
		(void)wn_queue_prod_commit(rq ? wn_dp_qp_rq(qp->h) : wn_dp_qp_sq(qp->h), n);
}

static int
rtc_poll_cq(struct perf_cq *cq, struct wn_queue_cqe *e, int n)
{
	return wn_dp_cq_poll(cq->h, e, n > 0 ? (unsigned int)n : 0);
}

static int
rtc_listen(struct perf_rnic *r, const struct wn_ctl_addr *a, uint32_t backlog)
{
	struct wn_llp_ep e;

	(void)r;
	(void)backlog;
	wn_dp_ep_of_ctl(a, &e);
	rs.l = wn_dp_listen(rs.dp, &e, NULL);
	return rs.l != NULL ? 0 : -errno;
}

static uint32_t
id_new(struct wn_dp_conn *c)
{
	if (rs.nid == MAX_IDS)
		return 0;
	rs.ids[rs.nid++] = c;
	return rs.nid;
}

static uint32_t
id_of(const struct wn_dp_conn *c)
{
	for (uint32_t i = 0; i < rs.nid; i++)
		if (rs.ids[i] == c)
			return i + 1;
	return 0;
}

/* No address resolution in-process: the id only. */
static int
rtc_resolve(struct perf_rnic *r, struct perf_conn *c, const struct wn_ctl_addr *dst)
{
	(void)r;
	(void)dst;
	c->id = id_new(NULL);
	return c->id != 0 ? 0 : -ENOSPC;
}

static int
rtc_connect(struct perf_rnic *r, struct perf_conn *c, const struct wn_ctl_addr *dst,
	    const struct wn_ctl_conn_param *cp)
{
	struct wn_dp_conn_param p = {
		.ird = (uint16_t)cp->ird, .ord = (uint16_t)cp->ord, .pd = cp->pd,
		.pd_len = (uint16_t)cp->pd_len,
	};
	struct wn_llp_ep local, remote;

	(void)r;
	wn_dp_ep_of_ctl(dst, &remote);
	memset(&local, 0, sizeof(local));
	local.addr.family = remote.addr.family; /* address 0: the shard's own for dst */
	rs.ids[c->id - 1] = wn_dp_connect(rs.dp, c->qp->h, &local, &remote, &p, NULL);
	return rs.ids[c->id - 1] != NULL ? 0 : -errno;
}

static int
rtc_answer(struct perf_rnic *r, uint32_t id, struct perf_conn *c,
	   const struct wn_ctl_conn_param *cp)
{
	struct wn_dp_conn_param p = {
		.ird = (uint16_t)cp->ird, .ord = (uint16_t)cp->ord, .pd = cp->pd,
		.pd_len = (uint16_t)cp->pd_len,
	};

	(void)r;
	if (id == 0 || id > rs.nid || rs.ids[id - 1] == NULL)
		return -EINVAL;
	if (c == NULL)
		return wn_dp_reject(rs.ids[id - 1], cp->pd, (uint16_t)cp->pd_len);
	return wn_dp_accept(rs.ids[id - 1], c->qp->h, &p, NULL);
}

/* The next event as the control protocol gives it; the shard runs while there is none. */
static int
rtc_cm_next(struct perf_rnic *r, struct wn_ctl_cm_event *ev, int timeout_ms)
{
	uint64_t end = timeout_ms < 0 ? UINT64_MAX : wn_net_now_us() + (uint64_t)timeout_ms * 1000;
	struct wn_dp_cm_event e;

	(void)r;
	for (uint32_t n = 1; wn_dp_cm_poll(rs.dp, &e) == 0; n++) {
		wn_dp_poll(rs.dp);
		if (n % 1024 == 0 && wn_net_now_us() > end)
			return -ETIMEDOUT;
	}
	memset(ev, 0, sizeof(*ev));
	ev->event = wn_dp_ctl_event_of(e.type);
	ev->status = e.status;
	ev->id = e.type == WN_CM_EV_CONNECT_REQUEST ? id_new(e.conn) : id_of(e.conn);
	ev->param.ird = e.ird != 0 ? e.ird : e.peer_ird;
	ev->param.ord = e.ord != 0 ? e.ord : e.peer_ord;
	ev->param.pd_len = RTE_MIN((uint32_t)e.pd_len, (uint32_t)WN_CTL_PD_MAX);
	memcpy(ev->param.pd, e.pd, ev->param.pd_len);
	if (e.type == WN_CM_EV_CONNECT_REQUEST && ev->id == 0) {
		(void)wn_dp_reject(e.conn, NULL, 0); /* no room for another id */
		wn_dp_conn_destroy(e.conn);
	}
	return 0;
}

/* Waiting is running the shard once more. */
static int
rtc_wait(struct perf_rnic *r, struct perf_cq *cq, uint32_t *spins)
{
	(void)r;
	(void)cq;
	(void)spins;
	wn_dp_poll(rs.dp);
	return 0;
}

static void
rtc_loop_rx(struct perf_rnic *r)
{
	(void)r;
	wn_dp_poll_rx(rs.dp);
}

static void
rtc_loop_tx(struct perf_rnic *r, bool idle)
{
	(void)r;
	(void)idle;
	wn_dp_poll_tx(rs.dp);
}

const struct perf_dev_ops perf_dev_rtc = {
	.name = "rtc",
	.open = rtc_open,
	.close = rtc_close,
	.reg_mr = rtc_reg_mr,
	.cq_create = rtc_cq_create,
	.qp_create = rtc_qp_create,
	.wq_begin = rtc_wq_begin,
	.wq_slot = rtc_wq_slot,
	.wq_end = rtc_wq_end,
	.poll_cq = rtc_poll_cq,
	.listen = rtc_listen,
	.resolve = rtc_resolve,
	.connect = rtc_connect,
	.answer = rtc_answer,
	.cm_next = rtc_cm_next,
	.wait = rtc_wait,
	.loop_rx = rtc_loop_rx,
	.loop_tx = rtc_loop_tx,
};
