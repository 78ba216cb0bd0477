/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the receive and transmit paths share below the QP's life cycle: events to the owner
 * and state changes, CQE posting (CQ overrun is fatal for the QP), send completions in SQ
 * order, the Terminate queued for transmit (RFC 5040 §7.1: the first error only), and the
 * next receive WQE from the RQ or SRQ.
 */
#include <errno.h>
#include <string.h>

#include <rte_log.h>

#include "rnic_priv.h"

void
wn_rnic_event_post(struct wn_rnic_qp *qp, const struct wn_rnic_event *ev)
{
	if (qp->c.event != NULL)
		qp->c.event(qp->c.event_arg, qp, ev);
}

void
wn_rnic_set_state(struct wn_rnic_qp *qp, enum wn_rnic_qp_state s)
{
	struct wn_rnic_event ev = { .type = WN_RNIC_EV_STATE, .state = s };

	if (qp->state == s)
		return;
	qp->state = s;
	wn_rnic_event_post(qp, &ev);
}

int
wn_rnic_post_cqe(struct wn_rnic_qp *qp, struct wn_queue_ring *cq, const struct wn_queue_cqe *e,
	      bool solicited)
{
	struct wn_rnic_event ev = { .cq = cq };
	rte_spinlock_t *lock = cq == qp->c.scq ? qp->c.scq_lock : qp->c.rcq_lock;
	int notify;

	if (lock != NULL)
		rte_spinlock_lock(lock);
	notify = wn_queue_cq_push(cq, e, solicited);
	if (lock != NULL)
		rte_spinlock_unlock(lock);
	if (notify < 0) {
		/* CQ overrun: the verbs contract is broken; report and stop the QP */
		ev.type = WN_RNIC_EV_CQ_OVERFLOW;
		wn_rnic_event_post(qp, &ev);
		if (qp->state != WN_RNIC_QPS_ERROR)
			wn_rnic_queue_term(qp, WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_LOCAL_CATA, 0,
					   NULL, 0);
		return -ENOSPC;
	}
	qp->st.cqe++;
	if (e->status == WN_QUEUE_WC_WR_FLUSH_ERR)
		qp->st.wqe_flushed++;
	if (notify > 0) {
		ev.type = WN_RNIC_EV_CQ_NOTIFY;
		wn_rnic_event_post(qp, &ev);
	}
	return 0;
}

/* Report finished send WQEs in SQ order and give their slots back to the client. */
void
wn_rnic_complete_sq(struct wn_rnic_qp *qp)
{
	struct wn_queue_ring *sq = qp->c.sq;

	while (sq->head != qp->sq_fetch) {
		struct sq_pend *p = &qp->pend[sq->head & sq->mask];

		bool cqe = p->signaled || p->status != WN_QUEUE_WC_SUCCESS;
		struct wn_queue_cqe e = {
			.wr_id = p->wr_id, .status = p->status, .opcode = p->wc_opcode,
			.byte_len = p->byte_len, .qp_num = qp->c.qpn, .vendor_err = p->vendor_err,
		};

		if (!p->done)
			break;
		if (p->holds != 0) {
			/* zero-copy payload still referenced below: the buffer is not free yet */
			if (!p->waited) {
				p->waited = 1;
				qp->st.cqe_held++;
			}
			break;
		}
		/*
		 * The slot goes back before the completion is visible: a client that polls the
		 * CQE may post into that slot at once (verbs: a completed WR's slot is free).
		 * A full CQ is fatal for the QP (wn_rnic_post_cqe), so nothing is retried.
		 */
		p->done = 0;
		wn_queue_cons_release(sq, 1);
		if (cqe)
			(void)wn_rnic_post_cqe(qp, qp->c.scq, &e, false);
	}
}

void
wn_rnic_queue_term(struct wn_rnic_qp *qp, uint8_t layer, uint8_t etype, uint8_t code,
		const uint8_t *bad, size_t bad_len)
{
	struct wn_term_cause cause = { .layer = layer, .etype = etype, .code = code };
	struct wn_rdmap_term t;
	int n;

	/* RFC 5040 §7.1: only the first error is reported, one Terminate per stream */
	if (qp->term_pending || qp->term_done || qp->state == WN_RNIC_QPS_ERROR)
		return;
	RNIC_LOG(DEBUG, "qp %u: Terminate layer %u etype %u code 0x%02x", qp->c.qpn, layer, etype,
		 code);
	wn_wire_rdmap_term_from_cause(&t, cause, bad, bad_len);
	n = wn_wire_rdmap_term_build(qp->term.hdr, sizeof(qp->term.hdr), qp->msn_tx[WN_DDP_QN_TERM],
				     &t);
	if (n < 0) {
		/* cannot happen with a cause from the tables; send the bare cause */
		wn_wire_rdmap_term_from_cause(&t, cause, NULL, 0);
		n = wn_wire_rdmap_term_build(qp->term.hdr, sizeof(qp->term.hdr),
					qp->msn_tx[WN_DDP_QN_TERM], &t);
	}
	qp->term.hdr_len = (uint16_t)n;
	qp->term.len = (uint32_t)n;
	qp->term.n_iov = 0;
	qp->term_cause = (struct wn_mem_term){ layer, etype, code };
	qp->term_pending = true;
	wn_rnic_set_state(qp, WN_RNIC_QPS_TERMINATE);
}

/* Take the next receive WQE for a new QN 0 message. @return 0, -ENOBUFS, -EPROTO. */
int
wn_rnic_take_rwqe(struct wn_rnic_qp *qp)
{
	struct wn_queue_ring *r = qp->c.rq != NULL ? qp->c.rq : qp->c.srq;
	rte_spinlock_t *lock = r == qp->c.srq ? qp->c.srq_lock : NULL;
	const struct wn_queue_rwqe *w;
	struct wn_queue_rwqe h;
	int64_t avail;
	uint32_t i;
	bool limit;

	if (lock != NULL)
		rte_spinlock_lock(lock);
	avail = wn_queue_cons_avail(r);
	if (avail <= 0) {
		if (lock != NULL)
			rte_spinlock_unlock(lock);
		return avail < 0 ? -EPROTO : -ENOBUFS;
	}
	w = wn_queue_cons_slot(r, 0);
	memcpy(&h, w, sizeof(h)); /* private copy: the client may scribble on the ring */
	if (wn_queue_rwqe_validate(r, &h) != 0) {
		wn_queue_cons_release(r, 1);
		if (lock != NULL)
			rte_spinlock_unlock(lock);
		qp->rq.wr_id = h.wr_id;
		return -EPROTO;
	}
	memcpy(qp->rq.sge, w + 1, h.num_sge * sizeof(struct wn_queue_sge));
	wn_queue_cons_release(r, 1);
	limit = r == qp->c.srq && wn_queue_srq_limit_hit(r, (uint32_t)avail - 1);
	if (lock != NULL)
		rte_spinlock_unlock(lock);
	if (limit) {
		struct wn_rnic_event ev = { .type = WN_RNIC_EV_SRQ_LIMIT, .srq = r };

		wn_rnic_event_post(qp, &ev);
	}
	qp->rq.active = true;
	qp->rq.wr_id = h.wr_id;
	qp->rq.num_sge = h.num_sge;
	qp->rq.total = 0;
	qp->rq.imm_wait = false;
	for (i = 0; i < h.num_sge; i++)
		qp->rq.total += qp->rq.sge[i].length;
	return 0;
}
