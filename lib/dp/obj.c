/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnicd dataplane objects: CQs, SRQs and QPs announced by the control thread, the QP
 * engines, and shard 0's dispatch of control messages to the shards (dp.h).
 *
 * Lifetimes: shard 0 creates every object and is the only writer of the object table. A
 * CQ/SRQ is referenced by the table and by each QP using it; whoever drops the last
 * reference frees it and acknowledges its *_DESTROY with DONE. A QP is owned by the shard of
 * its connection: shard 0 removes it from the table when the control thread destroys it and
 * hands the QP itself to its owner, which tears the engine down and acknowledges.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_hash.h>
#include <rte_log.h>

#include "dp_priv.h"

void *
dp_obj(struct wn_dp *dp, uint32_t handle, enum dp_obj_kind kind)
{
	void *p;

	if (rte_hash_lookup_data(dp->objs, &handle, &p) < 0 || *(enum dp_obj_kind *)p != kind)
		return NULL;
	return p;
}

/* ---------------------------------------------------------------- control thread */

static void
ctl_kick(struct wn_dp *dp)
{
	uint64_t one = 1;

	if (write(dp->c.ctl_efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		DP_LOG(ERR, "control eventfd: %s\n", strerror(errno));
}

static void
ctl_post(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	/* several shards produce: the ring is multi-producer */
	if (rte_ring_enqueue(dp->c.to_ctl, m) != 0) {
		dp->st.ctl_drop++;
		free(m);
		return;
	}
	ctl_kick(dp);
}

void
dp_ctl_done(struct wn_dp *dp, uint32_t handle)
{
	struct wn_server_dp_msg *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		dp->st.ctl_drop++;
		return;
	}
	m->type = WN_SERVER_DP_DONE;
	m->handle = handle;
	ctl_post(dp, m);
}

void
dp_cm_event(struct wn_dp *dp, uint32_t id, const struct wn_ctl_cm_event *ev)
{
	dp_cm_event_neg(dp, id, ev, 0, 0);
}

void
dp_cm_event_neg(struct wn_dp *dp, uint32_t id, const struct wn_ctl_cm_event *ev, uint32_t ird,
		uint32_t ord)
{
	struct wn_server_dp_msg *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		dp->st.ctl_drop++;
		return;
	}
	m->type = WN_SERVER_DP_CM_EVENT;
	m->handle = id;
	m->u.cm.id = id;
	m->u.cm.ev = *ev;
	m->u.cm.ev.id = id;
	m->u.cm.param.ird = ird;
	m->u.cm.param.ord = ord;
	dp->st.cm_events++;
	ctl_post(dp, m);
}

/* ---------------------------------------------------------------- CQ / SRQ references */

static void
cq_put(struct wn_dp *dp, struct dp_cq *cq)
{
	if (atomic_fetch_sub(&cq->refs, 1) == 1) {
		dp_ctl_done(dp, cq->handle);
		free(cq);
	}
}

static void
srq_put(struct wn_dp *dp, struct dp_srq *srq)
{
	if (atomic_fetch_sub(&srq->refs, 1) == 1) {
		dp_ctl_done(dp, srq->handle);
		free(srq);
	}
}

static struct dp_cq *
cq_of_ring(struct wn_queue_ring *r)
{
	return (struct dp_cq *)((uint8_t *)r - offsetof(struct dp_cq, prod));
}

/* ---------------------------------------------------------------- QP engines */

void
dp_qp_event(void *arg, struct wn_rnic_qp *eng, const struct wn_rnic_event *ev)
{
	struct dp_qp *qp = arg;
	struct wn_dp *dp = qp->conn != NULL ? qp->conn->dp : NULL;

	(void)eng;
	switch (ev->type) {
	case WN_RNIC_EV_CQ_NOTIFY: {
		struct dp_cq *cq = cq_of_ring(ev->cq);

		if (cq->d->notify_fd >= 0 &&
		    write(cq->d->notify_fd, &cq->d->cookie, sizeof(cq->d->cookie)) < 0 &&
		    errno != EAGAIN)
			DP_LOG(WARNING, "CQ %u notify: %s\n", cq->handle, strerror(errno));
		if (dp != NULL)
			dp->st.cq_notify++;
		break;
	}
	case WN_RNIC_EV_TERM_SENT:
	case WN_RNIC_EV_TERM_RECV:
		DP_LOG(NOTICE, "QP %u: Terminate %s: layer %u etype %u code %u\n", qp->d->qpn,
		       ev->type == WN_RNIC_EV_TERM_SENT ? "sent" : "received", ev->term.layer,
		       ev->term.etype, ev->term.code);
		if (dp != NULL) {
			uint32_t cause = (uint32_t)ev->term.layer << 12 |
					 (uint32_t)ev->term.etype << 8 | ev->term.code;

			if (ev->type == WN_RNIC_EV_TERM_SENT) {
				dp->st.term_sent++;
				dp->st.term_sent_last = cause;
			} else {
				dp->st.term_recv++;
				dp->st.term_recv_last = cause;
			}
		}
		/*
		 * RFC 5040 §6.3: after a Terminate the LLP stream is closed (FIN after the
		 * Terminate we queued); the QP is flushed when TCP is gone.
		 */
		if (qp->conn != NULL)
			dp_conn_terminated(qp->conn);
		break;
	default:
		break;
	}
}

static void
engine_conf(struct wn_dp *dp, struct dp_qp *qp, struct wn_rnic_qp_conf *rc)
{
	bool shared = dp->g->n > 1;

	memset(rc, 0, sizeof(*rc));
	rc->qpn = qp->d->qpn;
	rc->pd = qp->d->pd;
	rc->mem = dp->c.mem;
	rc->sq = &qp->sq;
	rc->rq = qp->srq == NULL ? &qp->rq : NULL;
	rc->srq = qp->srq != NULL ? &qp->srq->cons : NULL;
	rc->scq = &qp->scq->prod;
	rc->rcq = &qp->rcq->prod;
	rc->scq_lock = shared ? &qp->scq->lock : NULL;
	rc->rcq_lock = shared ? &qp->rcq->lock : NULL;
	rc->srq_lock = shared && qp->srq != NULL ? &qp->srq->lock : NULL;
	rc->event = dp_qp_event;
	rc->event_arg = qp;
}

static void
errq_remove(struct wn_dp *dp, struct dp_qp *qp)
{
	if (qp->in_errq) {
		TAILQ_REMOVE(&dp->errq, qp, errnext);
		qp->in_errq = false;
	}
}

static void
engine_destroy(struct wn_dp *dp, struct dp_qp *qp)
{
	if (dp != NULL)
		errq_remove(dp, qp);
	wn_rnic_qp_destroy(qp->eng);
	qp->eng = NULL;
}

void
dp_errq_flush(struct wn_dp *dp)
{
	struct dp_qp *qp;

	TAILQ_FOREACH(qp, &dp->errq, errnext)
		(void)wn_rnic_qp_flush(qp->eng);
}

int
dp_qp_engine(struct wn_dp *dp, struct dp_qp *qp, struct dp_conn *conn, struct wn_llp *llp,
	     const struct wn_llp_params *p, uint8_t rtr_recv)
{
	struct wn_rnic_qp_conf rc;

	if (qp->active)
		return -EBUSY;
	if (qp->eng != NULL)
		engine_destroy(dp, qp); /* a flushed engine of an earlier connection */
	engine_conf(dp, qp, &rc);
	rc.mulpdu = p->mulpdu;
	rc.ird = RTE_MAX(p->ird, 1u);
	rc.ord = RTE_MAX(p->ord, 1u);
	rc.sq_sig_all = qp->d->sq_sig_all != 0;
	rc.rfc7306 = dp->c.rfc7306;
	rc.rtr_recv = rtr_recv;
	rc.llp = llp;
	qp->eng = wn_rnic_qp_create(&rc);
	if (qp->eng == NULL)
		return -errno;
	qp->conn = conn;
	qp->llp = llp;
	TAILQ_INSERT_TAIL(&dp->active, qp, next);
	qp->active = true;
	return 0;
}

/* The lower layer of an engine that only flushes: it never sends. */
static int
no_send(struct wn_llp *l, const struct wn_llp_ulpdu *u)
{
	(void)l;
	(void)u;
	return -EAGAIN;
}

static const struct wn_llp_ops no_llp_ops = { .name = "none", .send = no_send };
static struct wn_llp no_llp = { .ops = &no_llp_ops };

void
dp_qp_disconnect(struct wn_dp *dp, struct dp_qp *qp)
{
	if (qp->eng == NULL) {
		/*
		 * Never connected (or the ULP moved it to Error first): a throw-away engine
		 * flushes the rings exactly as a connected one would.
		 */
		struct wn_rnic_qp_conf rc;

		engine_conf(dp, qp, &rc);
		rc.mulpdu = WN_RNIC_MULPDU_MIN;
		rc.ird = rc.ord = 1;
		rc.llp = &no_llp;
		qp->eng = wn_rnic_qp_create(&rc);
		if (qp->eng == NULL)
			return;
	}
	if (wn_rnic_qp_state(qp->eng) != WN_RNIC_QPS_ERROR)
		wn_rnic_qp_disconnect(qp->eng);
	if (!qp->in_errq) {
		/* verbs: what the client posts from now on completes with WR_FLUSH_ERR */
		TAILQ_INSERT_TAIL(&dp->errq, qp, errnext);
		qp->in_errq = true;
	}
	if (qp->active) {
		TAILQ_REMOVE(&dp->active, qp, next);
		qp->active = false;
	}
	qp->conn = NULL;
	qp->llp = NULL;
}

/* Tear a QP down on its owner shard; @p ack: acknowledge the control thread's destroy. */
static void
qp_free(struct wn_dp *dp, struct dp_qp *qp, bool ack)
{
	if (qp->conn != NULL)
		dp_conn_qp_gone(dp, qp->conn, true);
	if (qp->active)
		TAILQ_REMOVE(&dp->active, qp, next);
	if (qp->eng != NULL)
		engine_destroy(dp, qp);
	cq_put(dp, qp->scq);
	cq_put(dp, qp->rcq);
	if (qp->srq != NULL)
		srq_put(dp, qp->srq);
	if (ack)
		dp_ctl_done(dp, qp->handle);
	free(qp);
}

/* ---------------------------------------------------------------- shard 0: objects */

static int
obj_add(struct wn_dp *dp, uint32_t handle, void *o)
{
	int ret = rte_hash_add_key_data(dp->objs, &handle, o);

	if (ret < 0)
		DP_LOG(ERR, "object table: handle %u: %s\n", handle, strerror(-ret));
	return ret;
}

static void
qp_create(struct wn_dp *dp, struct wn_server_dp_qp *d)
{
	struct dp_qp *qp = calloc(1, sizeof(*qp));
	uint64_t off;

	if (qp == NULL)
		return;
	qp->kind = DPO_QP;
	qp->handle = d->handle;
	qp->d = d;
	qp->owner = DP_NO_OWNER;
	qp->scq = dp_obj(dp, d->send_cq->handle, DPO_CQ);
	qp->rcq = dp_obj(dp, d->recv_cq->handle, DPO_CQ);
	qp->srq = d->srq != NULL ? dp_obj(dp, d->srq->handle, DPO_SRQ) : NULL;
	off = wn_queue_qp_rq_offset(d->sq_depth, d->max_send_sge, d->max_inline);
	if (qp->scq == NULL || qp->rcq == NULL || (d->srq != NULL && qp->srq == NULL) ||
	    wn_queue_cons_attach(&qp->sq, d->ring, off, WN_QUEUE_KIND_SQ) != 0 ||
	    (d->srq == NULL && wn_queue_cons_attach(&qp->rq, (uint8_t *)d->ring + off,
						    d->ring_size - off, WN_QUEUE_KIND_RQ) != 0)) {
		DP_LOG(ERR, "QP %u: bad descriptor\n", d->handle);
		free(qp);
		return;
	}
	atomic_fetch_add(&qp->scq->refs, 1);
	atomic_fetch_add(&qp->rcq->refs, 1);
	if (qp->srq != NULL)
		atomic_fetch_add(&qp->srq->refs, 1);
	if (obj_add(dp, d->handle, qp) < 0)
		qp_free(dp, qp, false);
}

static void
cq_create(struct wn_dp *dp, struct wn_server_dp_cq *d)
{
	struct dp_cq *cq = calloc(1, sizeof(*cq));

	if (cq == NULL)
		return;
	cq->kind = DPO_CQ;
	cq->handle = d->handle;
	cq->d = d;
	rte_spinlock_init(&cq->lock);
	atomic_init(&cq->refs, 1);
	if (wn_queue_prod_attach(&cq->prod, d->ring, d->ring_size, WN_QUEUE_KIND_CQ) != 0 ||
	    obj_add(dp, d->handle, cq) < 0)
		free(cq);
}

static void
srq_create(struct wn_dp *dp, struct wn_server_dp_srq *d)
{
	struct dp_srq *srq = calloc(1, sizeof(*srq));

	if (srq == NULL)
		return;
	srq->kind = DPO_SRQ;
	srq->handle = d->handle;
	srq->d = d;
	rte_spinlock_init(&srq->lock);
	atomic_init(&srq->refs, 1);
	if (wn_queue_cons_attach(&srq->cons, d->ring, d->ring_size, WN_QUEUE_KIND_SRQ) != 0 ||
	    obj_add(dp, d->handle, srq) < 0)
		free(srq);
}

/* ---------------------------------------------------------------- any shard: local work */

static void
local_msg(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	dp->st.ctl_msgs++;
	switch (m->type) {
	case WN_SERVER_DP_QP_MODIFY: {
		struct dp_qp *qp = dp_obj(dp, m->handle, DPO_QP);

		/* RTS comes from the connection itself; Error tears it down and flushes */
		if (qp != NULL && m->u.qp_state == WN_CTL_QPS_ERR) {
			if (qp->conn != NULL)
				dp_conn_qp_gone(dp, qp->conn, false);
			dp_qp_disconnect(dp, qp);
		}
		break;
	}
	case WN_SERVER_DP_QP_DESTROY:
		/* shard 0 took it out of the table and put the QP in m->obj */
		qp_free(dp, m->obj, true);
		break;
	default:
		dp_cm_msg(dp, m);
		break;
	}
	free(m);
}

void
dp_local_msg(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	local_msg(dp, m);
}

/* ---------------------------------------------------------------- shard 0: dispatch */

static void
forward(struct wn_dp *dp, uint16_t to, struct wn_server_dp_msg *m)
{
	struct wn_dp_group *g = dp->g;

	if (to >= g->n)
		to = 0;
	if (to == dp->idx) {
		local_msg(dp, m);
		return;
	}
	if (rte_ring_enqueue(g->shard[to]->ctl, m) != 0) {
		DP_LOG(ERR, "shard %u control ring full: message %u dropped\n", to, m->type);
		dp->st.ctl_drop++;
		free(m);
	}
}

static void
broadcast(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	for (uint16_t i = 1; i < dp->g->n; i++) {
		struct wn_server_dp_msg *c = malloc(sizeof(*c));

		if (c == NULL) {
			dp->st.ctl_drop++;
			continue;
		}
		*c = *m;
		forward(dp, i, c);
	}
	forward(dp, 0, m);
}

static void
owner_set(struct wn_dp *dp, uint32_t id, uint16_t shard)
{
	uintptr_t v = shard;

	if (id != 0)
		(void)rte_hash_add_key_data(dp->g->cm_owner, &id, (void *)v);
}

/* Shard of CM id @p id (or of passive key @p conn); DP_OWNER_LISTEN for a listener. */
static uint16_t
owner_get(struct wn_dp *dp, uint32_t id, uint32_t conn)
{
	void *v;

	if (id != 0 && rte_hash_lookup_data(dp->g->cm_owner, &id, &v) >= 0)
		return (uint16_t)(uintptr_t)v;
	return conn != 0 ? dp_token_shard(conn) : 0;
}

static void
qp_owner_set(struct wn_dp *dp, uint32_t handle, uint16_t shard)
{
	struct dp_qp *qp = handle != 0 ? dp_obj(dp, handle, DPO_QP) : NULL;

	if (qp != NULL)
		qp->owner = shard;
}

void
dp_dispatch(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	struct wn_dp_group *g = dp->g;
	uint16_t to;
	void *o;

	switch (m->type) {
	case WN_SERVER_DP_MR_REG:
		break; /* regions live in the shared lib/mem table */
	case WN_SERVER_DP_MR_DEREG:
		/* lib/mem's grace period already passed; zero-copy mbufs may still hold pages */
		dp_zc_dereg(dp, m->handle, ((const struct wn_server_dp_mr *)m->obj)->stag);
		break;
	case WN_SERVER_DP_CQ_CREATE:
		cq_create(dp, m->obj);
		break;
	case WN_SERVER_DP_SRQ_CREATE:
		srq_create(dp, m->obj);
		break;
	case WN_SERVER_DP_QP_CREATE:
		qp_create(dp, m->obj);
		break;
	case WN_SERVER_DP_CQ_DESTROY:
	case WN_SERVER_DP_SRQ_DESTROY:
		o = dp_obj(dp, m->handle, m->type == WN_SERVER_DP_CQ_DESTROY ? DPO_CQ : DPO_SRQ);
		if (o == NULL) {
			dp_ctl_done(dp, m->handle);
			break;
		}
		rte_hash_del_key(dp->objs, &m->handle);
		if (m->type == WN_SERVER_DP_CQ_DESTROY)
			cq_put(dp, o); /* freed (and acknowledged) by its last QP */
		else
			srq_put(dp, o);
		break;
	case WN_SERVER_DP_QP_MODIFY: {
		struct dp_qp *qp = dp_obj(dp, m->handle, DPO_QP);

		if (qp == NULL)
			break;
		forward(dp, qp->owner == DP_NO_OWNER ? 0 : qp->owner, m);
		return;
	}
	case WN_SERVER_DP_QP_DESTROY: {
		struct dp_qp *qp = dp_obj(dp, m->handle, DPO_QP);

		if (qp == NULL) {
			dp_ctl_done(dp, m->handle);
			break;
		}
		rte_hash_del_key(dp->objs, &m->handle);
		m->obj = qp;
		forward(dp, qp->owner == DP_NO_OWNER ? 0 : qp->owner, m);
		return;
	}
	case WN_SERVER_DP_CM_LISTEN:
		owner_set(dp, m->u.cm.id, DP_OWNER_LISTEN);
		broadcast(dp, m);
		return;
	case WN_SERVER_DP_CM_CONNECT:
		to = dp_steer(g, &m->u.cm.src, &m->u.cm.dst);
		owner_set(dp, m->u.cm.id, to);
		qp_owner_set(dp, m->u.cm.qp, to);
		forward(dp, to, m);
		return;
	case WN_SERVER_DP_CM_ACCEPT:
		to = dp_token_shard(m->u.cm.conn);
		owner_set(dp, m->u.cm.id, to);
		qp_owner_set(dp, m->u.cm.qp, to);
		forward(dp, to, m);
		return;
	case WN_SERVER_DP_CM_REJECT:
	case WN_SERVER_DP_CM_DISCONNECT:
		forward(dp, owner_get(dp, m->u.cm.id, m->u.cm.conn), m);
		return;
	case WN_SERVER_DP_CM_DESTROY:
		to = owner_get(dp, m->u.cm.id, m->u.cm.conn);
		rte_hash_del_key(g->cm_owner, &m->u.cm.id);
		if (to == DP_OWNER_LISTEN)
			broadcast(dp, m);
		else
			forward(dp, to, m);
		return;
	default:
		DP_LOG(WARNING, "unknown control message %u\n", m->type);
		break;
	}
	free(m);
}

/* ---------------------------------------------------------------- shutdown */

void
dp_objs_free(struct wn_dp_group *g)
{
	const void *key;
	void *data;
	uint32_t it;

	if (g->objs == NULL)
		return;
	/* the loops have stopped: QPs first (their engines), then CQs and SRQs, no DONEs */
	for (int pass = 0; pass < 2; pass++) {
		it = 0;
		while (rte_hash_iterate(g->objs, &key, &data, &it) >= 0) {
			enum dp_obj_kind k = *(enum dp_obj_kind *)data;

			if (pass == 0 && k == DPO_QP) {
				struct dp_qp *qp = data;

				if (qp->eng != NULL)
					engine_destroy(NULL, qp);
				free(qp);
			} else if (pass == 1 && k != DPO_QP) {
				free(data);
			}
		}
	}
}
