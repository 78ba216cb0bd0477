/* SPDX-License-Identifier: BSD-3-Clause */
/* QP life cycle (RFC 5040 §6): create, start, close, Terminate on request, disconnect, flushing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_log.h>

#include "rnic_priv.h"

RTE_LOG_REGISTER_DEFAULT(wn_rnic_logtype, NOTICE);

static bool
mulpdu_ok(uint32_t m)
{
	return m >= WN_RNIC_MULPDU_MIN && m <= WN_RNIC_MULPDU_MAX;
}

struct wn_rnic_qp *
wn_rnic_qp_create(const struct wn_rnic_qp_conf *conf)
{
	struct wn_rnic_qp *qp;

	if (conf == NULL || conf->mem == NULL || conf->sq == NULL || conf->scq == NULL ||
	    conf->rcq == NULL || (conf->rq == NULL) == (conf->srq == NULL) || conf->llp == NULL ||
	    conf->ord == 0 || conf->ird == 0 || !mulpdu_ok(conf->mulpdu) ||
	    conf->ord > 1024 || conf->ird > 1024) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		goto nomem;
	qp->c = *conf;
	qp->pend = calloc(conf->sq->depth, sizeof(*qp->pend));
	qp->ord = calloc(conf->ord, sizeof(*qp->ord));
	qp->ird = calloc(conf->ird, sizeof(*qp->ird));
	if (qp->pend == NULL || qp->ord == NULL || qp->ird == NULL)
		goto nomem;
	qp->state = WN_RNIC_QPS_IDLE;
	qp->parse_flags = conf->rfc7306 ? WN_DDP_F_RFC7306 : 0;
	for (int i = 0; i < 4; i++) {
		qp->msn_tx[i] = 1;
		qp->msn_rx[i] = 1;
	}
	qp->sq_fetch = conf->sq->head;
	qp->rtr_pending = conf->rtr_recv;
	qp->rx_first = true;
	wn_rnic_rx_table_init(qp);
	return qp;
nomem:
	wn_rnic_qp_destroy(qp);
	errno = ENOMEM;
	return NULL;
}

void
wn_rnic_qp_destroy(struct wn_rnic_qp *qp)
{
	if (qp == NULL)
		return;
	free(qp->pend);
	free(qp->ord);
	free(qp->ird);
	free(qp);
}

enum wn_rnic_qp_state
wn_rnic_qp_state(const struct wn_rnic_qp *qp)
{
	return qp->state;
}

int
wn_rnic_qp_start(struct wn_rnic_qp *qp)
{
	if (qp->state != WN_RNIC_QPS_IDLE)
		return -EINVAL;
	wn_rnic_set_state(qp, WN_RNIC_QPS_RTS);
	return 0;
}

int
wn_rnic_qp_close(struct wn_rnic_qp *qp)
{
	if (qp->state != WN_RNIC_QPS_RTS)
		return -EINVAL;
	wn_rnic_set_state(qp, WN_RNIC_QPS_CLOSING);
	return 0;
}

bool
wn_rnic_qp_idle(const struct wn_rnic_qp *qp)
{
	return !qp->cur_active && rnic_ord_count(qp) == 0 && rnic_ird_count(qp) == 0 &&
	       !qp->rq.active && !qp->term_pending;
}

int
wn_rnic_set_mulpdu(struct wn_rnic_qp *qp, uint32_t mulpdu)
{
	if (!mulpdu_ok(mulpdu))
		return -EINVAL;
	qp->c.mulpdu = mulpdu;
	return 0;
}

void
wn_rnic_qp_stats(const struct wn_rnic_qp *qp, struct wn_rnic_stats *st)
{
	*st = qp->st;
}

int
wn_rnic_terminate(struct wn_rnic_qp *qp, uint8_t layer, uint8_t etype, uint8_t code)
{
	if (qp == NULL || qp->state == WN_RNIC_QPS_IDLE || qp->state == WN_RNIC_QPS_ERROR)
		return -EINVAL;
	wn_rnic_queue_term(qp, layer, etype, code, NULL, 0);
	return 0;
}

static void
flush_recv(struct wn_rnic_qp *qp, uint64_t wr_id)
{
	struct wn_queue_cqe e = {
		.wr_id = wr_id, .status = WN_QUEUE_WC_WR_FLUSH_ERR, .opcode = WN_QUEUE_WC_RECV,
		.qp_num = qp->c.qpn,
	};

	wn_rnic_post_cqe(qp, qp->c.rcq, &e, false);
}

/*
 * In ERROR: complete every WQE of the SQ and RQ that was never started with WR_FLUSH_ERR,
 * in order (always reported, signaled or not). The slot goes back before the CQE is seen.
 * @return WQEs flushed.
 */
static unsigned int
flush_new(struct wn_rnic_qp *qp)
{
	struct wn_queue_ring *sq = qp->c.sq;
	unsigned int n = 0;
	int64_t avail;

	avail = wn_queue_cons_avail(sq);
	while (avail > 0 && sq->head == qp->sq_fetch) {
		const struct wn_queue_swqe *w = wn_queue_cons_slot(sq, 0);
		struct wn_queue_cqe e = {
			.wr_id = w->wr_id, .status = WN_QUEUE_WC_WR_FLUSH_ERR, .qp_num = qp->c.qpn,
		};

		if (qp->fail_status != 0) {
			/* the work request that found no connection (wn_rnic_qp_fail) */
			e.status = qp->fail_status;
			e.opcode = wn_queue_wc_opcode(w->opcode);
			qp->fail_status = 0;
		}
		wn_queue_cons_release(sq, 1);
		qp->sq_fetch = sq->head;
		avail--;
		n++;
		if (wn_rnic_post_cqe(qp, qp->c.scq, &e, false) != 0)
			break;
	}
	if (qp->c.rq != NULL) {
		avail = wn_queue_cons_avail(qp->c.rq);
		while (avail-- > 0) {
			uint64_t wr_id = ((const struct wn_queue_rwqe *)
						  wn_queue_cons_slot(qp->c.rq, 0))->wr_id;

			wn_queue_cons_release(qp->c.rq, 1);
			n++;
			flush_recv(qp, wr_id);
		}
	}
	return n;
}

void
wn_rnic_qp_disconnect(struct wn_rnic_qp *qp)
{
	struct wn_queue_ring *sq = qp->c.sq;

	if (qp->state == WN_RNIC_QPS_ERROR)
		return;
	qp->term_pending = false;
	wn_rnic_set_state(qp, WN_RNIC_QPS_ERROR);
	/*
	 * Started WQEs that never finished are flushed; finished ones keep their status. With
	 * InfiniBand RC completions, a finished one the peer has not acknowledged is flushed
	 * too: the peer stopped before it (InfiniBand's responder discards what follows a NAK).
	 */
	for (uint32_t i = sq->head; i != qp->sq_fetch; i++) {
		struct sq_pend *p = &qp->pend[i & sq->mask];

		if (!p->done || (qp->c.ib_rc && p->holds != 0 &&
				 p->status == WN_QUEUE_WC_SUCCESS)) {
			p->done = 1;
			p->status = qp->fail_status != 0 ? qp->fail_status :
							   WN_QUEUE_WC_WR_FLUSH_ERR;
			qp->fail_status = 0;
		}
		p->holds = 0; /* flushed: releases still to come are ignored (see tx_release) */
	}
	qp->cur_active = false;
	qp->ord_head = qp->ord_tail;
	qp->ird_head = qp->ird_tail;
	wn_rnic_complete_sq(qp);
	if (qp->rq.active) {
		qp->rq.active = false;
		flush_recv(qp, qp->rq.wr_id);
	}
	flush_new(qp);
	wn_queue_status_set(sq, WN_QUEUE_ST_ERROR);
	if (qp->c.rq != NULL)
		wn_queue_status_set(qp->c.rq, WN_QUEUE_ST_ERROR);
}

void
wn_rnic_qp_fail(struct wn_rnic_qp *qp, uint8_t status)
{
	if (qp->state == WN_RNIC_QPS_ERROR)
		return;
	qp->fail_status = status;
	wn_rnic_qp_disconnect(qp);
	qp->fail_status = 0; /* no send work was there: nothing else gets it */
}

unsigned int
wn_rnic_qp_flush(struct wn_rnic_qp *qp)
{
	if (qp == NULL || qp->state != WN_RNIC_QPS_ERROR)
		return 0;
	return flush_new(qp);
}
