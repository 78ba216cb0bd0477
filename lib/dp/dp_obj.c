/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp's objects: CQs, SRQs and QPs announced by the control thread (shard 0 creates them),
 * and the QP engines (dp_priv.h).
 *
 * Lifetimes: shard 0 creates every object and is the only writer of the object table. A
 * CQ/SRQ is referenced by the table and by each QP using it; whoever drops the last
 * reference frees it and acknowledges its *_DESTROY with DONE. A QP is owned by the shard of
 * its connection: shard 0 removes it from the table when the control thread destroys it and
 * hands the QP itself to its owner, which tears the engine down and acknowledges.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_hash.h>
#include <rte_log.h>

#include "dp_priv.h"

/* ---------------------------------------------------------------- CQ / SRQ references */

static void
cq_put(struct wn_dp *dp, struct dp_cq *cq)
{
	if (atomic_fetch_sub(&cq->refs, 1) == 1) {
		wn_dp_ctl_done(dp, cq->handle);
		free(cq);
	}
}

static void
srq_put(struct wn_dp *dp, struct dp_srq *srq)
{
	if (atomic_fetch_sub(&srq->refs, 1) == 1) {
		wn_dp_ctl_done(dp, srq->handle);
		free(srq);
	}
}

static struct dp_cq *
cq_of_ring(struct wn_queue_ring *r)
{
	return (struct dp_cq *)((uint8_t *)r - offsetof(struct dp_cq, prod));
}

static struct dp_srq *
srq_of_ring(struct wn_queue_ring *r)
{
	return (struct dp_srq *)((uint8_t *)r - offsetof(struct dp_srq, cons));
}

/* ---------------------------------------------------------------- QP engines */

void
wn_dp_cq_notify(struct wn_dp *dp, struct wn_queue_ring *ring)
{
	struct dp_cq *cq = cq_of_ring(ring);

	if (cq->d->notify_fd >= 0 &&
	    write(cq->d->notify_fd, &cq->d->cookie, sizeof(cq->d->cookie)) < 0 && errno != EAGAIN)
		DP_LOG(WARNING, "CQ %u notify: %s\n", cq->handle, strerror(errno));
	if (dp != NULL)
		dp->st.cq_notify++;
}

static void
engine_conf(struct wn_dp *dp, struct dp_qp *qp, struct wn_rnic_qp_conf *rc,
	    wn_rnic_event_fn event)
{
	/* an embedded application's objects stay on its shard */
	bool shared = dp->g->n > 1 && !qp->local;

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
	rc->event = event;
	rc->event_arg = qp;
}

static void slot_put(struct wn_dp *dp, struct dp_qp *qp);

/* The QP leaves Error (a new connection, or it goes): no more flushing, its slot free. */
static void
errq_remove(struct wn_dp *dp, struct dp_qp *qp)
{
	if (qp->errq_linked) {
		TAILQ_REMOVE(&dp->errq, qp, errnext);
		qp->errq_linked = false;
	}
	if (qp->in_errq) {
		qp->in_errq = false;
		slot_put(dp, qp);
	}
}

/* A QP in Error has postings to flush (or may have): flushed at the next tick. */
static void
errq_due(struct wn_dp *dp, struct dp_qp *qp)
{
	if (qp->errq_linked)
		return;
	TAILQ_INSERT_TAIL(&dp->errq, qp, errnext);
	qp->errq_linked = true;
}

/* The ring the QP takes its receives from (its RQ, or the SRQ it shares). */
static struct wn_queue_ring *
recv_ring(struct dp_qp *qp)
{
	return qp->srq != NULL ? &qp->srq->cons : &qp->rq;
}

static void
rx_unhold(struct wn_dp *dp, struct dp_qp *qp)
{
	if (!qp->rx_held)
		return;
	qp->rx_held = false;
	dp->st.rnr_held--;
	wn_queue_cons_bell_set(recv_ring(qp), 0);
}

static void
engine_destroy(struct wn_dp *dp, struct dp_qp *qp)
{
	if (dp != NULL)
		errq_remove(dp, qp);
	wn_rnic_qp_destroy(qp->eng);
	qp->eng = NULL;
}

/*
 * Flush what clients posted to QPs in Error. A QP whose rings stay empty once parked
 * leaves the list: a client posting to it marks its slot, which brings it back (mark_slot).
 */
void
wn_dp_errq_flush(struct wn_dp *dp)
{
	struct dp_qp *qp, *tmp;

	RTE_TAILQ_FOREACH_SAFE(qp, &dp->errq, errnext, tmp) {
		(void)wn_rnic_qp_flush(qp->eng);
		if (qp->slot == 0 || !wn_queue_cons_idle_enter(&qp->sq) ||
		    (qp->srq == NULL && !wn_queue_cons_idle_enter(&qp->rq)))
			continue;
		TAILQ_REMOVE(&dp->errq, qp, errnext);
		qp->errq_linked = false;
	}
}

/* ---------------------------------------------------------------- ready polling */

/* A ready map slot for @p qp (none left: it is polled without parking). */
static void
slot_take(struct wn_dp *dp, struct dp_qp *qp)
{
	uint32_t s;

	if (qp->slot != 0 || qp->local || dp->rmap == NULL)
		return;
	if (dp->slot_qp == NULL) {
		dp->slot_qp = calloc(WN_QUEUE_READY_SLOTS, sizeof(*dp->slot_qp));
		dp->slot_free = malloc(WN_QUEUE_READY_SLOTS * sizeof(*dp->slot_free));
		if (dp->slot_qp == NULL || dp->slot_free == NULL) {
			free(dp->slot_qp);
			free(dp->slot_free);
			dp->slot_qp = NULL;
			dp->slot_free = NULL;
			return;
		}
		/* a stack: slot 0 on top */
		for (s = 0; s < WN_QUEUE_READY_SLOTS; s++)
			dp->slot_free[s] = WN_QUEUE_READY_SLOTS - 1 - s;
		dp->n_slot_free = WN_QUEUE_READY_SLOTS;
	}
	if (dp->n_slot_free == 0)
		return;
	s = dp->slot_free[--dp->n_slot_free];
	dp->slot_qp[s] = qp;
	qp->slot = s + 1;
	wn_queue_cons_ready_set(&qp->sq, qp->slot);
}

/* Free @p qp's slot (a mark still in the map finds no QP there, or another one: harmless). */
static void
slot_put(struct wn_dp *dp, struct dp_qp *qp)
{
	if (qp->slot == 0)
		return;
	wn_queue_cons_ready_set(&qp->sq, 0);
	wn_queue_cons_idle_exit(&qp->sq);
	if (qp->srq == NULL) {
		wn_queue_cons_ready_set(&qp->rq, 0);
		wn_queue_cons_idle_exit(&qp->rq);
	}
	dp->slot_qp[qp->slot - 1] = NULL;
	dp->slot_free[dp->n_slot_free++] = qp->slot - 1;
	qp->slot = 0;
}

/* @p qp no longer active: not polled any more. */
static void
ready_leave(struct wn_dp *dp, struct dp_qp *qp)
{
	if (dp->sweep == qp)
		dp->sweep = TAILQ_NEXT(qp, next);
	if (qp->on_ready) {
		TAILQ_REMOVE(&dp->ready, qp, rnext);
		qp->on_ready = false;
		dp->st.qps_ready--;
	}
}

/* @p qp off the active list (and the ready one): no connection drives it any more. */
static void
deactivate(struct wn_dp *dp, struct dp_qp *qp)
{
	if (!qp->active)
		return;
	ready_leave(dp, qp);
	TAILQ_REMOVE(&dp->active, qp, next);
	qp->active = false;
}

void
wn_dp_qp_ready(struct wn_dp *dp, struct dp_qp *qp)
{
	if (!qp->active || qp->on_ready)
		return;
	TAILQ_INSERT_TAIL(&dp->ready, qp, rnext);
	qp->on_ready = true;
	dp->st.qps_ready++;
	if (qp->slot != 0)
		wn_queue_cons_idle_exit(&qp->sq);
}

static void
mark_slot(void *arg, uint32_t slot)
{
	struct wn_dp *dp = arg;
	struct dp_qp *qp = dp->slot_qp != NULL ? dp->slot_qp[slot] : NULL;

	if (qp == NULL)
		return;
	if (qp->active)
		wn_dp_qp_ready(dp, qp);
	else if (qp->in_errq)
		errq_due(dp, qp);
}

static void ready_park(struct wn_dp *dp, struct dp_qp *qp);

/*
 * Stop polling @p qp if it has nothing to do: no held stream, a stream that takes ULPDUs,
 * fewer ULPDUs sent than the budget, an engine with nothing under way, and an SQ that stays
 * empty once parked (lib/queue's Dekker rule: a client posting now marks it ready).
 */
static void
park_maybe(struct wn_dp *dp, struct dp_qp *qp, unsigned int sent, bool tx_ready)
{
	if ((qp->slot == 0 && !qp->local) || qp->rx_held || !tx_ready || sent >= DP_BURST ||
	    !wn_rnic_tx_idle(qp->eng) || !wn_queue_cons_idle_enter(&qp->sq))
		return;
	ready_park(dp, qp);
}

/* Stop polling @p qp (a UD QP or one whose engine is idle). */
static void
ready_park(struct wn_dp *dp, struct dp_qp *qp)
{
	TAILQ_REMOVE(&dp->ready, qp, rnext);
	qp->on_ready = false;
	dp->st.qps_ready--;
	dp->st.qp_parks++;
}

/*
 * A UD QP: its Sends (RTS) or flushes (Error); parked once its rings stay empty (its client
 * marks it when it posts), at once in the states that send nothing (RESET, INIT, RTR, SQD:
 * the move to RTS brings it back).
 */
static unsigned int
ud_poll(struct wn_dp *dp, struct dp_qp *qp)
{
	enum wn_ud_qp_state st = wn_ud_qp_state(qp->ud);
	unsigned int n = 0;

	if (st == WN_UD_QPS_RTS || st == WN_UD_QPS_ERROR) {
		n = wn_dp_ud_tx(dp, qp, DP_BURST);
		dp->st.qp_polls++;
		if (n >= DP_BURST || qp->slot == 0 || !wn_queue_cons_idle_enter(&qp->sq) ||
		    (st == WN_UD_QPS_ERROR && qp->srq == NULL &&
		     !wn_queue_cons_idle_enter(&qp->rq)))
			return n;
	}
	ready_park(dp, qp);
	return n;
}

unsigned int
wn_dp_qps_poll(struct wn_dp *dp)
{
	struct dp_qp *qp, *tmp;
	unsigned int work = 0, n;
	bool tx_ready;

	if (dp->rmap != NULL && dp->slot_qp != NULL)
		dp->st.qp_marks += wn_queue_ready_take(dp->rmap, mark_slot, dp);
	RTE_TAILQ_FOREACH_SAFE(qp, &dp->ready, rnext, tmp) {
		if (qp->ud != NULL) {
			work += ud_poll(dp, qp);
			continue;
		}
		if (qp->rx_held)
			work += wn_dp_qp_rx_retry(dp, qp);
		tx_ready = qp->llp != NULL && wn_llp_tx_ready(qp->llp);
		n = 0;
		if (tx_ready && qp->eng != NULL) {
			n = wn_rnic_tx_poll(qp->eng, DP_BURST);
			dp->st.qp_polls++;
			work += n;
		}
		if (qp->on_ready && qp->eng != NULL)
			park_maybe(dp, qp, n, tx_ready);
		/* refused for room: not polled again until the peer's ACK makes some (op_tx_room),
		 * however many QPs wait so */
		if (qp->on_ready && qp->llp != NULL && qp->llp->tx_room_wait && !qp->rx_held) {
			ready_park(dp, qp);
			dp->st.qp_room_waits++;
		}
	}
	return work;
}

/* Parked QPs looked at per tick: a full pass over 16,384 takes a quarter of a second. */
#define DP_SWEEP 64

void
wn_dp_qps_sweep(struct wn_dp *dp)
{
	struct dp_qp *qp = dp->sweep;
	unsigned int i;

	for (i = 0; i < DP_SWEEP && !TAILQ_EMPTY(&dp->active); i++) {
		if (qp == NULL)
			qp = TAILQ_FIRST(&dp->active);
		if (!qp->on_ready && wn_queue_cons_avail(&qp->sq) != 0) {
			dp->st.qp_sweep_found++;
			wn_dp_qp_ready(dp, qp);
		}
		qp = TAILQ_NEXT(qp, next);
	}
	dp->sweep = qp;
}

void
wn_dp_qps_free(struct wn_dp *dp)
{
	free(dp->slot_qp);
	free(dp->slot_free);
	dp->slot_qp = NULL;
	dp->slot_free = NULL;
	dp->n_slot_free = 0;
}

int
wn_dp_qp_engine(struct wn_dp *dp, struct dp_qp *qp, struct dp_conn *conn, struct wn_llp *llp,
	     const struct wn_llp_params *p, uint8_t rtr_recv, wn_rnic_event_fn event)
{
	struct wn_rnic_qp_conf rc;

	if (qp->active)
		return -EBUSY;
	if (qp->eng != NULL)
		engine_destroy(dp, qp); /* a flushed engine of an earlier connection */
	engine_conf(dp, qp, &rc, event);
	rc.mulpdu = p->mulpdu;
	rc.ird = RTE_MAX(p->ird, 1u);
	rc.ord = RTE_MAX(p->ord, 1u);
	rc.sq_sig_all = qp->d->sq_sig_all != 0;
	rc.rfc7306 = dp->c.rfc7306;
	rc.rtr_recv = rtr_recv;
	rc.llp = llp;
	rc.rnr_hold = dp->c.rnr_hold_us != 0 && wn_llp_can_hold(llp);
	/* InfiniBand-style QPs complete as InfiniBand RC does, where the lower layer can */
	rc.ib_rc = conn != NULL && conn->ep.ib_qp && wn_llp_ack_completions(llp) == 0;
	/* WN_CTL_ACCESS_* and WN_MEM_ACCESS_* name the rights with the same bits */
	rc.qp_access = rc.ib_rc ? conn->ib_access : 0;
	qp->eng = wn_rnic_qp_create(&rc);
	if (qp->eng == NULL)
		return -errno;
	qp->conn = conn;
	qp->llp = llp;
	TAILQ_INSERT_TAIL(&dp->active, qp, next);
	qp->active = true;
	/* clients posting to the SQ ring this shard's bell while it sleeps (wn_queue.h) */
	wn_queue_cons_bell_set(&qp->sq, dp->idx + 1u);
	/* ... and mark it in the shard's ready map once it is parked */
	slot_take(dp, qp);
	wn_dp_qp_ready(dp, qp);
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

/* The events of an engine that only flushes: its CQs' notifications. */
static void
flush_event(void *arg, struct wn_rnic_qp *eng, const struct wn_rnic_event *ev)
{
	(void)arg;
	(void)eng;
	if (ev->type == WN_RNIC_EV_CQ_NOTIFY)
		wn_dp_cq_notify(NULL, ev->cq);
}

/* The QP in Error: its engine flushes (the first send WQE with @p status, if not 0). */
static void
qp_error(struct wn_dp *dp, struct dp_qp *qp, uint8_t status)
{
	if (qp->eng == NULL) {
		/*
		 * Never connected (or the ULP moved it to Error first): a throw-away engine
		 * flushes the rings exactly as a connected one would.
		 */
		struct wn_rnic_qp_conf rc;

		engine_conf(dp, qp, &rc, flush_event);
		rc.mulpdu = WN_RNIC_MULPDU_MIN;
		rc.ird = rc.ord = 1;
		rc.llp = &no_llp;
		qp->eng = wn_rnic_qp_create(&rc);
		if (qp->eng == NULL)
			return;
	}
	if (status != 0)
		wn_rnic_qp_fail(qp->eng, status);
	else if (wn_rnic_qp_state(qp->eng) != WN_RNIC_QPS_ERROR)
		wn_rnic_qp_disconnect(qp->eng);
	deactivate(dp, qp);
	rx_unhold(dp, qp);
	if (!qp->in_errq) {
		/*
		 * verbs: what the client posts from now on completes with WR_FLUSH_ERR. Flushed
		 * at the next tick, then parked: its SQ and RQ name this shard's bell and its
		 * slot, so a client posting to it brings it back (mark_slot).
		 */
		qp->in_errq = true;
		slot_take(dp, qp);
		wn_queue_cons_bell_set(&qp->sq, qp->slot != 0 ? dp->idx + 1u : 0);
		if (qp->srq == NULL) {
			wn_queue_cons_ready_set(&qp->rq, qp->slot);
			wn_queue_cons_bell_set(&qp->rq, qp->slot != 0 ? dp->idx + 1u : 0);
		}
		errq_due(dp, qp);
	}
	qp->conn = NULL;
	qp->llp = NULL;
}

void
wn_dp_qp_disconnect(struct wn_dp *dp, struct dp_qp *qp)
{
	qp_error(dp, qp, 0);
}

void
wn_dp_qp_fail(struct wn_dp *dp, struct dp_qp *qp, uint8_t status)
{
	qp_error(dp, qp, status);
}

void
wn_dp_qp_park(struct wn_dp *dp, struct dp_qp *qp)
{
	if (qp->active) {
		deactivate(dp, qp);
		wn_queue_cons_bell_set(&qp->sq, 0);
	}
	rx_unhold(dp, qp);
	qp->llp = NULL;
}

/* Drop what ring @p r holds (a QP in RESET: IBTA 10.3.1, no completions). */
static void
ring_drop(struct wn_queue_ring *r)
{
	int64_t n = r->hdr != NULL ? wn_queue_cons_avail(r) : 0;

	if (n > 0)
		wn_queue_cons_release(r, (uint32_t)n);
}

void
wn_dp_qp_reset(struct wn_dp *dp, struct dp_qp *qp)
{
	if (qp->active) {
		deactivate(dp, qp);
		wn_queue_cons_bell_set(&qp->sq, 0);
	}
	rx_unhold(dp, qp);
	if (qp->eng != NULL)
		engine_destroy(dp, qp);
	errq_remove(dp, qp);
	ring_drop(&qp->sq);
	if (qp->srq == NULL)
		ring_drop(&qp->rq);
	wn_queue_status_clear(&qp->sq, WN_QUEUE_ST_ERROR);
	if (qp->srq == NULL)
		wn_queue_status_clear(&qp->rq, WN_QUEUE_ST_ERROR);
	qp->conn = NULL;
	qp->llp = NULL;
}

/* The consumer index of @p cq's ring: where its client has polled to. */
static uint32_t
cq_cons(const struct dp_cq *cq)
{
	return atomic_load_explicit(&cq->prod.hdr->cons, memory_order_acquire);
}

/*
 * The consumer of @p qp's receives has stopped (DP_RNR_IDLE_US): completions wait in its
 * receive CQ and it has polled none since its stream was held.
 */
static bool
rx_consumer_stopped(const struct dp_qp *qp)
{
	uint32_t cons = cq_cons(qp->rcq);
	uint32_t prod = atomic_load_explicit(&qp->rcq->prod.hdr->prod, memory_order_acquire);

	return cons == qp->held_cq_cons && prod != cons;
}

void
wn_dp_qp_rx_hold(struct wn_dp *dp, struct dp_qp *qp)
{
	if (qp->rx_held)
		return;
	qp->rx_held = true;
	qp->held_since = dp->now;
	qp->held_cq_cons = cq_cons(qp->rcq);
	dp->st.rnr_holds++;
	dp->st.rnr_held++;
	wn_dp_qp_ready(dp, qp); /* polled until a receive comes (wn_dp_qp_rx_retry) */
	/*
	 * A client posting a receive rings this shard's bell while it sleeps (lib/queue's lcore
	 * doorbells: set before the fence of the next sleep). An SRQ names one shard only; the
	 * others wake within DP_TICK_US (idle.c).
	 */
	wn_queue_cons_bell_set(recv_ring(qp), dp->idx + 1u);
}

unsigned int
wn_dp_qp_rx_retry(struct wn_dp *dp, struct dp_qp *qp)
{
	if (!wn_rnic_rx_ready(qp->eng)) {
		uint64_t limit = dp->c.rnr_hold_us;

		if (qp->llp != NULL && wn_llp_eof_held(qp->llp))
			limit = RTE_MIN(limit, (uint64_t)DP_RNR_EOF_US);
		if (rx_consumer_stopped(qp))
			limit = RTE_MIN(limit, (uint64_t)DP_RNR_IDLE_US);
		if (dp->now - qp->held_since < limit)
			return 0;
		/* receiver not ready for too long: the Terminate of RFC 5041 §7.1 */
		wn_rnic_rnr_expire(qp->eng);
		dp->st.rnr_timeouts++;
	} else {
		dp->st.rnr_resumed++;
	}
	rx_unhold(dp, qp);
	/* may hold again from inside, at the next Send without a receive */
	(void)wn_llp_rx_resume(qp->llp);
	return 1;
}

/* Tear a QP down on its owner shard; @p ack: acknowledge the control thread's destroy. */
void
wn_dp_qp_free(struct wn_dp *dp, struct dp_qp *qp, bool ack)
{
	if (dp != NULL) {
		deactivate(dp, qp);
		rx_unhold(dp, qp);
	}
	assert(!qp->on_ready);
	if (qp->eng != NULL)
		engine_destroy(dp, qp);
	if (qp->ud != NULL) {
		wn_dp_ud_qp_del(dp, qp);
		wn_ud_qp_destroy(qp->ud);
		qp->ud = NULL;
	}
	if (dp != NULL)
		slot_put(dp, qp);
	cq_put(dp, qp->scq);
	cq_put(dp, qp->rcq);
	if (qp->srq != NULL)
		srq_put(dp, qp->srq);
	if (ack)
		wn_dp_ctl_done(dp, qp->handle);
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

int
wn_dp_qp_init(struct dp_qp *qp, struct wn_server_dp_qp *d, struct dp_cq *scq, struct dp_cq *rcq,
	   struct dp_srq *srq)
{
	uint64_t off;

	qp->kind = DPO_QP;
	qp->handle = d->handle;
	qp->d = d;
	qp->owner = DP_NO_OWNER;
	qp->scq = scq;
	qp->rcq = rcq;
	qp->srq = srq;
	off = wn_queue_qp_rq_offset(d->sq_depth, d->max_send_sge, d->max_inline);
	if (scq == NULL || rcq == NULL || (d->srq != NULL && srq == NULL) ||
	    wn_queue_cons_attach(&qp->sq, d->ring, off, WN_QUEUE_KIND_SQ) != 0 ||
	    (d->srq == NULL && wn_queue_cons_attach(&qp->rq, (uint8_t *)d->ring + off,
						    d->ring_size - off, WN_QUEUE_KIND_RQ) != 0))
		return -EINVAL;
	atomic_fetch_add(&scq->refs, 1);
	atomic_fetch_add(&rcq->refs, 1);
	if (srq != NULL)
		atomic_fetch_add(&srq->refs, 1);
	return 0;
}

/* A UD QP's engine's events (its CQs' notifications and overflows, its SRQ's limit). */
static void
ud_event(void *arg, struct wn_ud_qp *uqp, const struct wn_ud_event *ev)
{
	struct wn_dp *dp = arg;

	(void)uqp;
	switch (ev->type) {
	case WN_UD_EV_CQ_NOTIFY:
		wn_dp_cq_notify(dp, ev->cq);
		break;
	case WN_UD_EV_CQ_OVERFLOW:
		wn_dp_async_event(dp, cq_of_ring(ev->cq)->handle, WN_CTL_ASYNC_CQ_ERR, 0);
		break;
	case WN_UD_EV_SRQ_LIMIT:
		wn_dp_async_event(dp, srq_of_ring(ev->srq)->handle, WN_CTL_ASYNC_SRQ_LIMIT_REACHED,
				  0);
		break;
	}
}

/*
 * A UD QP gets its engine when it is created, in RESET, and lives on shard 0 (dp_ud.c):
 * active from the start (its client marks its SQ, the sweep looks at it), polled from RTS.
 */
static int
ud_attach(struct wn_dp *dp, struct dp_qp *qp)
{
	bool shared = dp->g->n > 1;
	struct wn_ud_qp_conf uc;
	int ret;

	memset(&uc, 0, sizeof(uc));
	uc.qpn = qp->d->qpn;
	uc.pd = qp->d->pd;
	uc.mem = dp->c.mem;
	uc.sq = &qp->sq;
	uc.rq = qp->srq == NULL ? &qp->rq : NULL;
	uc.srq = qp->srq != NULL ? &qp->srq->cons : NULL;
	uc.scq = &qp->scq->prod;
	uc.rcq = &qp->rcq->prod;
	uc.scq_lock = shared ? &qp->scq->lock : NULL;
	uc.rcq_lock = shared ? &qp->rcq->lock : NULL;
	uc.srq_lock = shared && qp->srq != NULL ? &qp->srq->lock : NULL;
	uc.sq_sig_all = qp->d->sq_sig_all != 0;
	uc.max_msg = wn_dp_ud_max_msg(dp);
	uc.event = ud_event;
	uc.event_arg = dp;
	qp->ud = wn_ud_qp_create(&uc);
	if (qp->ud == NULL)
		return -1;
	ret = wn_dp_ud_qp_add(dp, qp);
	if (ret < 0) {
		wn_ud_qp_destroy(qp->ud);
		qp->ud = NULL;
		errno = -ret;
		return -1;
	}
	qp->owner = 0;
	TAILQ_INSERT_TAIL(&dp->active, qp, next);
	qp->active = true;
	wn_queue_cons_bell_set(&qp->sq, dp->idx + 1u);
	slot_take(dp, qp);
	return 0;
}

void
wn_dp_qp_ud_modify(struct wn_dp *dp, struct dp_qp *qp, uint32_t state, uint32_t qkey)
{
	bool err = state == WN_CTL_QPS_ERR;

	wn_ud_qp_set_qkey(qp->ud, qkey);
	if (wn_ud_qp_set_state(qp->ud, (enum wn_ud_qp_state)state) != 0)
		return;
	/* in Error its receives are flushed too: a receive posted then marks it as a Send does */
	if (qp->srq == NULL) {
		wn_queue_cons_ready_set(&qp->rq, err ? qp->slot : 0);
		wn_queue_cons_bell_set(&qp->rq, err && qp->slot != 0 ? dp->idx + 1u : 0);
		if (!err)
			wn_queue_cons_idle_exit(&qp->rq);
	}
	if (state == WN_CTL_QPS_RTS || err)
		wn_dp_qp_ready(dp, qp);
}

void
wn_dp_obj_qp_create(struct wn_dp *dp, struct wn_server_dp_qp *d)
{
	struct dp_qp *qp = calloc(1, sizeof(*qp));

	if (qp == NULL)
		return;
	if (wn_dp_qp_init(qp, d, wn_dp_obj(dp, d->send_cq->handle, DPO_CQ),
		       wn_dp_obj(dp, d->recv_cq->handle, DPO_CQ),
		       d->srq != NULL ? wn_dp_obj(dp, d->srq->handle, DPO_SRQ) : NULL) != 0) {
		DP_LOG(ERR, "QP %u: bad descriptor\n", d->handle);
		free(qp);
		return;
	}
	if (d->qp_type == WN_CTL_QPT_UD && ud_attach(dp, qp) != 0) {
		DP_LOG(ERR, "UD QP %u: %s\n", d->qpn, strerror(errno));
		wn_dp_qp_free(dp, qp, false);
		return;
	}
	if (obj_add(dp, d->handle, qp) < 0)
		wn_dp_qp_free(dp, qp, false);
}

int
wn_dp_cq_init(struct dp_cq *cq, struct wn_server_dp_cq *d)
{
	cq->kind = DPO_CQ;
	cq->handle = d->handle;
	cq->d = d;
	rte_spinlock_init(&cq->lock);
	atomic_init(&cq->refs, 1);
	return wn_queue_prod_attach(&cq->prod, d->ring, d->ring_size, WN_QUEUE_KIND_CQ);
}

void
wn_dp_obj_cq_create(struct wn_dp *dp, struct wn_server_dp_cq *d)
{
	struct dp_cq *cq = calloc(1, sizeof(*cq));

	if (cq == NULL)
		return;
	if (wn_dp_cq_init(cq, d) != 0 || obj_add(dp, d->handle, cq) < 0)
		free(cq);
}

void
wn_dp_srq_create(struct wn_dp *dp, struct wn_server_dp_srq *d)
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

void
wn_dp_queue_destroy(struct wn_dp *dp, uint32_t handle, enum dp_obj_kind kind)
{
	void *o = wn_dp_obj(dp, handle, kind);

	if (o == NULL) {
		wn_dp_ctl_done(dp, handle);
		return;
	}
	rte_hash_del_key(dp->objs, &handle);
	if (kind == DPO_CQ)
		cq_put(dp, o); /* freed (and acknowledged) by its last QP */
	else
		srq_put(dp, o);
}

struct dp_qp *
wn_dp_qp_unlink(struct wn_dp *dp, uint32_t handle)
{
	struct dp_qp *qp = wn_dp_obj(dp, handle, DPO_QP);

	if (qp != NULL)
		rte_hash_del_key(dp->objs, &handle);
	return qp;
}

/* Tear a QP down on its owner shard (its connection is detached already). */
void
wn_dp_obj_qp_destroy(struct wn_dp *dp, struct dp_qp *qp)
{
	wn_dp_qp_free(dp, qp, true);
}

/* ---------------------------------------------------------------- shutdown */

void
wn_dp_objs_free(struct wn_dp_group *g)
{
	const void *key;
	void *data, **objs;
	uint32_t it = 0, n = 0, i;
	int32_t count;

	if (g->objs == NULL)
		return;
	/*
	 * The loops have stopped: QPs first (their engines), then CQs and SRQs, no DONEs. The
	 * kinds are read before anything is freed: a second walk of the table would read the
	 * kind of a QP freed by the first (a double free at exit with a client connected).
	 */
	count = rte_hash_count(g->objs);
	objs = count > 0 ? calloc((size_t)count, sizeof(*objs)) : NULL;
	if (objs == NULL)
		return;
	while (n < (uint32_t)count && rte_hash_iterate(g->objs, &key, &data, &it) >= 0)
		objs[n++] = data;
	rte_hash_reset(g->objs);
	for (i = 0; i < n; i++) {
		struct dp_qp *qp = objs[i];

		if (*(enum dp_obj_kind *)objs[i] != DPO_QP)
			continue;
		if (qp->eng != NULL)
			engine_destroy(NULL, qp);
		wn_ud_qp_destroy(qp->ud);
		objs[i] = NULL;
		free(qp);
	}
	for (i = 0; i < n; i++)
		free(objs[i]);
	free(objs);
}
