/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RNIC modes' device as a client of warpnicd (lib/client): a running warpnicd, or the
 * embedded dataplane's control thread (--ip without --rtc). Objects, memory and connections
 * through the control socket; WQEs and CQEs through the shared rings; waiting spins a little,
 * then sleeps on the control CQ's notification.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wn_client.h"

#include "perf.h"
#include "perf_rnic.h"

#define RESOLVE_MS 2000
#define MAX_CQS 4

static const uint32_t access_all = WN_CTL_ACCESS_LOCAL_WRITE | WN_CTL_ACCESS_REMOTE_WRITE |
				   WN_CTL_ACCESS_REMOTE_READ;

static struct {
	struct wn_client *cl;
	uint32_t pd;
	struct wn_client_cm_channel *ch;
	uint32_t listen_id;
	int notify[2];               /* the control CQ's notification pipe */
	struct wn_client_cq *notify_cq;
	struct perf_cq cqs[MAX_CQS];
	unsigned int ncq;
	struct perf_qp qps[PERF_RNIC_MAX_QPS + 1];
	unsigned int nqp;
} cs;

static int
cl_open(struct perf_rnic *r)
{
	struct wn_ctl_device_attr a;
	int rc;

	memset(&cs, 0, sizeof(cs));
	cs.notify[0] = cs.notify[1] = -1;
	cs.cl = wn_client_open(r->p->ctl);
	if (cs.cl == NULL) {
		rc = -errno;
		fprintf(stderr, "%s: cannot reach warpnicd at %s: %s\n", r->ops->name,
			r->p->ctl != NULL ? r->p->ctl : getenv(WN_CTL_ENV) != NULL ?
			getenv(WN_CTL_ENV) : WN_CTL_DEFAULT_PATH, strerror(-rc));
		return rc;
	}
	rc = wn_client_query_device(cs.cl, &a);
	if (rc == 0)
		rc = wn_client_alloc_pd(cs.cl, &cs.pd);
	if (rc == 0) {
		cs.ch = wn_client_cm_channel_create(cs.cl);
		if (cs.ch == NULL)
			rc = -errno;
	}
	if (rc == 0 && pipe2(cs.notify, O_NONBLOCK | O_CLOEXEC) != 0)
		rc = -errno;
	if (rc != 0) {
		fprintf(stderr, "%s: warpnicd set-up: %s\n", r->ops->name, strerror(-rc));
		return rc;
	}
	r->dev.max_qp_wr = a.max_qp_wr;
	r->dev.max_cqe = a.max_cqe;
	r->dev.max_qp_rd_atom = a.max_qp_rd_atom;
	r->dev.max_qp_init_rd_atom = a.max_qp_init_rd_atom;
	return 0;
}

static void
cl_close(struct perf_rnic *r)
{
	if (cs.cl != NULL) {
		if (r->ctl.id != 0)
			wn_client_cm_disconnect(cs.cl, r->ctl.id);
		for (uint32_t i = 0; i < r->qps; i++)
			if (r->conn[i].id != 0)
				wn_client_cm_disconnect(cs.cl, r->conn[i].id);
		/* warpnicd reclaims every object of a closed connection */
		wn_client_close(cs.cl);
	}
	for (int i = 0; i < 2; i++)
		if (cs.notify[i] >= 0)
			close(cs.notify[i]);
	memset(&cs, 0, sizeof(cs));
}

static int
cl_reg_mr(struct perf_rnic *r, void *addr, size_t len, uint32_t *key)
{
	struct wn_client_mr *mr = wn_client_reg_mr(cs.cl, cs.pd, addr, len,
						   (uint64_t)(uintptr_t)addr, access_all);

	(void)r;
	if (mr == NULL)
		return -errno;
	*key = mr->lkey;
	return 0;
}

static struct perf_cq *
cl_cq_create(struct perf_rnic *r, uint32_t depth, bool notify)
{
	struct wn_client_cq *cq;

	(void)r;
	if (cs.ncq == MAX_CQS) {
		errno = ENOSPC;
		return NULL;
	}
	cq = wn_client_create_cq(cs.cl, depth, notify ? cs.notify[1] : -1, cs.ncq + 1);
	if (cq == NULL)
		return NULL;
	if (notify)
		cs.notify_cq = cq;
	cs.cqs[cs.ncq].h = cq;
	return &cs.cqs[cs.ncq++];
}

static struct perf_qp *
cl_qp_create(struct perf_rnic *r, const struct wn_ctl_create_qp_req *q, struct perf_cq *scq,
	     struct perf_cq *rcq)
{
	struct wn_ctl_create_qp_req a = *q;
	struct wn_client_qp *qp;

	(void)r;
	if (cs.nqp == PERF_RNIC_MAX_QPS + 1) {
		errno = ENOSPC;
		return NULL;
	}
	a.pd = cs.pd;
	a.send_cq = ((struct wn_client_cq *)scq->h)->handle;
	a.recv_cq = ((struct wn_client_cq *)rcq->h)->handle;
	qp = wn_client_create_qp(cs.cl, &a);
	if (qp == NULL)
		return NULL;
	cs.qps[cs.nqp].h = qp;
	cs.qps[cs.nqp].handle = qp->handle;
	return &cs.qps[cs.nqp++];
}

static int64_t
cl_wq_begin(struct perf_qp *qp, bool rq)
{
	return wn_client_wq_begin(qp->h, NULL, rq);
}

static void *
cl_wq_slot(struct perf_qp *qp, bool rq, uint32_t i)
{
	return wn_client_wq_slot(qp->h, NULL, rq, i);
}

static void
cl_wq_end(struct perf_qp *qp, bool rq, uint32_t n)
{
	wn_client_wq_end(qp->h, NULL, rq, n);
}

static int
cl_poll_cq(struct perf_cq *cq, struct wn_queue_cqe *e, int n)
{
	return wn_client_poll_cq(cq->h, e, n);
}

static int
cl_listen(struct perf_rnic *r, const struct wn_ctl_addr *a, uint32_t backlog)
{
	int rc = wn_client_cm_create_id(cs.cl, cs.ch, 0, &cs.listen_id);

	(void)r;
	if (rc == 0)
		rc = wn_client_cm_addr(cs.cl, WN_CTL_CM_BIND, cs.listen_id, a, NULL, 0, NULL);
	if (rc == 0)
		rc = wn_client_cm_addr(cs.cl, WN_CTL_CM_LISTEN, cs.listen_id, NULL, NULL, backlog,
				       NULL);
	return rc;
}

static int
cl_resolve(struct perf_rnic *r, struct perf_conn *c, const struct wn_ctl_addr *dst)
{
	struct wn_ctl_cm_event ev;
	int rc = wn_client_cm_create_id(cs.cl, cs.ch, c->index, &c->id);

	if (rc == 0)
		rc = wn_client_cm_addr(cs.cl, WN_CTL_CM_RESOLVE_ADDR, c->id, NULL, dst,
				       RESOLVE_MS, NULL);
	if (rc == 0)
		rc = perf_cm_wait(r, c->id, WN_CTL_CM_EV_ADDR_RESOLVED, &ev);
	if (rc == 0)
		rc = wn_client_cm_addr(cs.cl, WN_CTL_CM_RESOLVE_ROUTE, c->id, NULL, NULL,
				       RESOLVE_MS, NULL);
	if (rc == 0)
		rc = perf_cm_wait(r, c->id, WN_CTL_CM_EV_ROUTE_RESOLVED, &ev);
	return rc;
}

static int
cl_connect(struct perf_rnic *r, struct perf_conn *c, const struct wn_ctl_addr *dst,
	   const struct wn_ctl_conn_param *cp)
{
	(void)r;
	(void)dst;
	return wn_client_cm_conn(cs.cl, WN_CTL_CM_CONNECT, c->id, c->qp->handle, cp);
}

static int
cl_answer(struct perf_rnic *r, uint32_t id, struct perf_conn *c,
	  const struct wn_ctl_conn_param *cp)
{
	(void)r;
	if (c == NULL)
		return wn_client_cm_conn(cs.cl, WN_CTL_CM_REJECT, id, 0, cp);
	return wn_client_cm_conn(cs.cl, WN_CTL_CM_ACCEPT, id, c->qp->handle, cp);
}

static int
cl_cm_next(struct perf_rnic *r, struct wn_ctl_cm_event *ev, int timeout_ms)
{
	struct pollfd pfd = {.fd = cs.ch->fd, .events = POLLIN};
	int rc = poll(&pfd, 1, timeout_ms);

	(void)r;
	if (rc < 0)
		return -errno;
	if (rc == 0)
		return -ETIMEDOUT;
	return wn_client_cm_get_event(cs.ch, ev);
}

/* Spin a little (yielding now and then), then arm @p cq and sleep on its notification. */
static int
cl_wait(struct perf_rnic *r, struct perf_cq *cq, uint32_t *spins)
{
	struct pollfd pfd = {.fd = cs.notify[0], .events = POLLIN};
	uint64_t cookie;

	(void)r;
	if (++*spins < 256 || cq == NULL || cq->h != cs.notify_cq) {
		perf_relax(spins);
		return 0;
	}
	wn_client_cq_arm(cq->h, false);
	/* the caller polls again before sleeping: a completion before the arming notifies no one */
	if (wn_queue_cons_avail(&((struct wn_client_cq *)cq->h)->cqr) != 0)
		return 0;
	if (poll(&pfd, 1, 100) > 0)
		while (read(cs.notify[0], &cookie, sizeof(cookie)) > 0)
			;
	*spins = 0;
	return 0;
}

static void
cl_loop_rx(struct perf_rnic *r)
{
	(void)r;
}

/* The dataplane is another thread: a step that found nothing gives the CPU away now and then */
static void
cl_loop_tx(struct perf_rnic *r, bool idle)
{
	static uint32_t spins;

	(void)r;
	if (idle)
		perf_relax(&spins);
}

const struct perf_dev_ops perf_dev_client = {
	.name = "warpnicd",
	.open = cl_open,
	.close = cl_close,
	.reg_mr = cl_reg_mr,
	.cq_create = cl_cq_create,
	.qp_create = cl_qp_create,
	.wq_begin = cl_wq_begin,
	.wq_slot = cl_wq_slot,
	.wq_end = cl_wq_end,
	.poll_cq = cl_poll_cq,
	.listen = cl_listen,
	.resolve = cl_resolve,
	.connect = cl_connect,
	.answer = cl_answer,
	.cm_next = cl_cm_next,
	.wait = cl_wait,
	.loop_rx = cl_loop_rx,
	.loop_tx = cl_loop_tx,
};
