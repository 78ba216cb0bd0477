/* SPDX-License-Identifier: BSD-3-Clause */
/* The engine of one UD QP: Sends out, messages in with their GRH, flushes (wn_ud.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "wn_ud.h"

RTE_LOG_REGISTER_DEFAULT(wn_ud_logtype, NOTICE);

/* IBTA 10.2.5: a Q_Key with its high-order bit set in a Send means the QP's own Q_Key. */
#define UD_QKEY_OWN 0x80000000u

struct wn_ud_qp {
	struct wn_ud_qp_conf c;
	enum wn_ud_qp_state state;
	uint32_t qkey;
	struct wn_ud_stats st;
};

/* A send WQE copied out of the client's ring, with its SGEs or inline octets. */
union ud_swqe {
	struct wn_queue_swqe w;
	uint8_t raw[WN_QUEUE_SWQE_HDR + WN_QUEUE_MAX_INLINE];
};

static void
ud_event(struct wn_ud_qp *qp, const struct wn_ud_event *ev)
{
	if (qp->c.event != NULL)
		qp->c.event(qp->c.event_arg, qp, ev);
}

/*
 * One CQE into @p cq (its lock when shared). A full CQ loses it: the ring says so
 * (WN_QUEUE_ST_OVERFLOW) and the owner raises IBV_EVENT_CQ_ERR; the QP goes on, as a
 * datagram QP has no connection to end.
 */
static void
post_cqe(struct wn_ud_qp *qp, struct wn_queue_ring *cq, const struct wn_queue_cqe *e,
	 bool solicited)
{
	rte_spinlock_t *lock = cq == qp->c.scq ? qp->c.scq_lock : qp->c.rcq_lock;
	struct wn_ud_event ev = { .cq = cq };
	int notify;

	if (lock != NULL)
		rte_spinlock_lock(lock);
	notify = wn_queue_cq_push(cq, e, solicited);
	if (lock != NULL)
		rte_spinlock_unlock(lock);
	if (notify < 0) {
		qp->st.cqe_lost++;
		ev.type = WN_UD_EV_CQ_OVERFLOW;
		ud_event(qp, &ev);
		return;
	}
	qp->st.cqe++;
	if (e->status == WN_QUEUE_WC_WR_FLUSH_ERR)
		qp->st.wqe_flushed++;
	if (notify > 0) {
		ev.type = WN_UD_EV_CQ_NOTIFY;
		ud_event(qp, &ev);
	}
}

struct wn_ud_qp *
wn_ud_qp_create(const struct wn_ud_qp_conf *conf)
{
	struct wn_ud_qp *qp;

	if (conf == NULL || conf->mem == NULL || conf->sq == NULL || conf->scq == NULL ||
	    conf->rcq == NULL || (conf->rq == NULL) == (conf->srq == NULL) ||
	    conf->max_msg < WN_UD_MSG_MIN || conf->max_msg > WN_UD_MSG_MAX) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	qp->c = *conf;
	qp->state = WN_UD_QPS_RESET;
	return qp;
}

void
wn_ud_qp_destroy(struct wn_ud_qp *qp)
{
	free(qp);
}

enum wn_ud_qp_state
wn_ud_qp_state(const struct wn_ud_qp *qp)
{
	return qp->state;
}

uint32_t
wn_ud_qp_num(const struct wn_ud_qp *qp)
{
	return qp->c.qpn;
}

void
wn_ud_qp_set_qkey(struct wn_ud_qp *qp, uint32_t qkey)
{
	qp->qkey = qkey;
}

uint32_t
wn_ud_qp_qkey(const struct wn_ud_qp *qp)
{
	return qp->qkey;
}

void
wn_ud_qp_stats(const struct wn_ud_qp *qp, struct wn_ud_stats *st)
{
	*st = qp->st;
}

/* Drop what @p r holds (RESET): no completions. */
static void
discard(struct wn_queue_ring *r)
{
	int64_t avail = wn_queue_cons_avail(r);

	if (avail > 0)
		wn_queue_cons_release(r, (uint32_t)avail);
}

unsigned int
wn_ud_qp_flush(struct wn_ud_qp *qp)
{
	struct wn_queue_ring *sq = qp->c.sq, *rq = qp->c.rq;
	unsigned int n = 0;
	int64_t avail;

	if (qp->state != WN_UD_QPS_ERROR)
		return 0;
	/* verbs: work posted to a QP in Error completes with WR_FLUSH_ERR, signaled or not */
	for (avail = wn_queue_cons_avail(sq); avail > 0; avail--, n++) {
		struct wn_queue_cqe e = {
			.wr_id = ((const struct wn_queue_swqe *)wn_queue_cons_slot(sq, 0))->wr_id,
			.status = WN_QUEUE_WC_WR_FLUSH_ERR, .opcode = WN_QUEUE_WC_SEND,
			.qp_num = qp->c.qpn,
		};

		wn_queue_cons_release(sq, 1);
		post_cqe(qp, qp->c.scq, &e, false);
	}
	for (avail = rq != NULL ? wn_queue_cons_avail(rq) : 0; avail > 0; avail--, n++) {
		struct wn_queue_cqe e = {
			.wr_id = ((const struct wn_queue_rwqe *)wn_queue_cons_slot(rq, 0))->wr_id,
			.status = WN_QUEUE_WC_WR_FLUSH_ERR, .opcode = WN_QUEUE_WC_RECV,
			.qp_num = qp->c.qpn,
		};

		wn_queue_cons_release(rq, 1);
		post_cqe(qp, qp->c.rcq, &e, false);
	}
	return n;
}

int
wn_ud_qp_set_state(struct wn_ud_qp *qp, enum wn_ud_qp_state state)
{
	switch (state) {
	case WN_UD_QPS_RESET:
		/* verbs: RESET empties the queues (no completions); an SRQ keeps its WQEs */
		discard(qp->c.sq);
		if (qp->c.rq != NULL)
			discard(qp->c.rq);
		qp->qkey = 0;
		break;
	case WN_UD_QPS_INIT:
	case WN_UD_QPS_RTR:
	case WN_UD_QPS_RTS:
	case WN_UD_QPS_SQD:
		break;
	case WN_UD_QPS_ERROR:
		qp->state = state;
		(void)wn_ud_qp_flush(qp);
		return 0;
	default:
		return -EINVAL;
	}
	qp->state = state;
	return 0;
}

bool
wn_ud_tx_pending(struct wn_ud_qp *qp)
{
	return qp->state == WN_UD_QPS_RTS && wn_queue_cons_avail(qp->c.sq) > 0;
}

/*
 * Describe the Send in @p u for the wire: destination, header and the pieces of memory it
 * gathers (every lkey checked for a local read first). @return the completion status.
 */
static uint8_t
tx_build(struct wn_ud_qp *qp, const union ud_swqe *u, struct wn_ud_send *s)
{
	const struct wn_queue_swqe *w = &u->w;
	uint64_t total = 0;
	uint32_t i;

	memcpy(s->dgid, w->u.ud.dgid, sizeof(s->dgid));
	s->sgid_index = w->u.ud.sgid_index;
	s->hop_limit = w->u.ud.hop_limit;
	s->traffic_class = w->u.ud.traffic_class;
	s->flow_label = w->u.ud.flow_label & 0xfffffu;
	memset(&s->hdr, 0, sizeof(s->hdr));
	s->hdr.type = WN_UD_DATA;
	s->hdr.dqpn = w->u.ud.remote_qpn;
	s->hdr.sqpn = qp->c.qpn;
	s->hdr.qkey = (w->u.ud.remote_qkey & UD_QKEY_OWN) ? qp->qkey : w->u.ud.remote_qkey;
	if (w->opcode == WN_QUEUE_WR_SEND_WITH_IMM) {
		s->hdr.flags |= WN_UD_F_IMM;
		s->hdr.imm = w->ex.imm_data;
	}
	if (w->flags & WN_QUEUE_SEND_SOLICITED)
		s->hdr.flags |= WN_UD_F_SE;
	s->n_iov = 0;
	if (w->flags & WN_QUEUE_SEND_INLINE) {
		total = w->inline_len;
		if (total > 0) {
			s->iov[0].base = u->raw + WN_QUEUE_SWQE_HDR;
			s->iov[0].len = w->inline_len;
			s->n_iov = 1;
		}
	} else {
		const struct wn_queue_sge *sge = (const struct wn_queue_sge *)(u->raw +
									      WN_QUEUE_SWQE_HDR);

		for (i = 0; i < w->num_sge; i++)
			total += sge[i].length;
		if (total > qp->c.max_msg)
			return WN_QUEUE_WC_LOC_LEN_ERR;
		for (i = 0; i < w->num_sge; i++) {
			uint8_t *host;

			if (sge[i].length == 0)
				continue;
			if (wn_mem_check(qp->c.mem, sge[i].lkey, sge[i].addr, sge[i].length,
					 WN_MEM_ACCESS_LOCAL_READ, qp->c.pd, qp->c.qpn,
					 &host) != WN_MEM_OK)
				return WN_QUEUE_WC_LOC_PROT_ERR;
			s->iov[s->n_iov].base = host;
			s->iov[s->n_iov].len = sge[i].length;
			s->n_iov++;
		}
	}
	if (total > qp->c.max_msg)
		return WN_QUEUE_WC_LOC_LEN_ERR;
	s->len = (uint32_t)total;
	return WN_QUEUE_WC_SUCCESS;
}

unsigned int
wn_ud_tx_poll(struct wn_ud_qp *qp, unsigned int budget, wn_ud_send_fn send, void *arg)
{
	struct wn_queue_ring *sq = qp->c.sq;
	struct wn_ud_send s;
	union ud_swqe u;
	unsigned int n = 0;

	if (qp->state != WN_UD_QPS_RTS)
		return 0;
	while (n < budget && wn_queue_cons_avail(sq) > 0) {
		const uint8_t *slot = wn_queue_cons_slot(sq, 0);
		struct wn_queue_cqe e = { .opcode = WN_QUEUE_WC_SEND, .qp_num = qp->c.qpn };
		uint8_t status;

		/* a private copy: the client may change its ring while we read (wn_queue.h) */
		memcpy(&u.w, slot, WN_QUEUE_SWQE_HDR);
		if (wn_queue_swqe_validate_ud(sq, &u.w) != 0) {
			status = WN_QUEUE_WC_LOC_QP_OP_ERR;
		} else {
			memcpy(u.raw + WN_QUEUE_SWQE_HDR, slot + WN_QUEUE_SWQE_HDR,
			       (u.w.flags & WN_QUEUE_SEND_INLINE) ?
				       u.w.inline_len :
				       u.w.num_sge * sizeof(struct wn_queue_sge));
			status = tx_build(qp, &u, &s);
		}
		if (status == WN_QUEUE_WC_SUCCESS) {
			if (send(arg, qp, &s) == -EAGAIN)
				break; /* no buffer now: the Send stays, offered again */
			qp->st.tx_msgs++;
			qp->st.tx_bytes += s.len;
			e.byte_len = s.len;
		} else {
			qp->st.tx_errors++;
		}
		/* the slot goes back before the completion is visible (verbs: a completed WR's
		 * slot is free) */
		wn_queue_cons_release(sq, 1);
		n++;
		if (status != WN_QUEUE_WC_SUCCESS || (u.w.flags & WN_QUEUE_SEND_SIGNALED) ||
		    qp->c.sq_sig_all) {
			e.wr_id = u.w.wr_id;
			e.status = status;
			post_cqe(qp, qp->c.scq, &e, false);
		}
	}
	return n;
}

/*
 * Take the next receive WQE (RQ, or the SRQ under its lock) into @p w and @p sge.
 * @return 0, -ENOBUFS (none), -EPROTO (a corrupt ring: nothing taken), -EINVAL (a WQE that
 * fails its checks: taken, @p w->wr_id valid).
 */
static int
take_rwqe(struct wn_ud_qp *qp, struct wn_queue_rwqe *w, struct wn_queue_sge *sge)
{
	struct wn_queue_ring *r = qp->c.rq != NULL ? qp->c.rq : qp->c.srq;
	rte_spinlock_t *lock = r == qp->c.srq ? qp->c.srq_lock : NULL;
	const struct wn_queue_rwqe *slot;
	int64_t avail;
	bool limit;
	int rc = 0;

	if (lock != NULL)
		rte_spinlock_lock(lock);
	avail = wn_queue_cons_avail(r);
	if (avail <= 0) {
		if (lock != NULL)
			rte_spinlock_unlock(lock);
		return avail < 0 ? -EPROTO : -ENOBUFS;
	}
	slot = wn_queue_cons_slot(r, 0);
	memcpy(w, slot, sizeof(*w));
	if (wn_queue_rwqe_validate(r, w) != 0)
		rc = -EINVAL;
	else
		memcpy(sge, slot + 1, w->num_sge * sizeof(*sge));
	wn_queue_cons_release(r, 1);
	limit = r == qp->c.srq && wn_queue_srq_limit_hit(r, (uint32_t)avail - 1);
	if (lock != NULL)
		rte_spinlock_unlock(lock);
	if (limit) {
		struct wn_ud_event ev = { .type = WN_UD_EV_SRQ_LIMIT, .srq = r };

		ud_event(qp, &ev);
	}
	return rc;
}

/* Copy @p len octets from @p src to the pieces @p dst / @p take, from piece *@p k offset *@p off. */
static void
scatter(uint8_t *const *dst, const uint32_t *take, uint32_t *k, uint32_t *off, const uint8_t *src,
	uint32_t len)
{
	while (len > 0) {
		uint32_t c = RTE_MIN(len, take[*k] - *off);

		memcpy(dst[*k] + *off, src, c);
		src += c;
		len -= c;
		*off += c;
		if (*off == take[*k]) {
			(*k)++;
			*off = 0;
		}
	}
}

int
wn_ud_rx(struct wn_ud_qp *qp, const struct wn_ud_recv *r)
{
	struct wn_queue_sge sge[WN_QUEUE_MAX_SGE];
	uint8_t *dst[WN_QUEUE_MAX_SGE];
	uint32_t take[WN_QUEUE_MAX_SGE];
	struct wn_queue_rwqe w;
	struct wn_queue_cqe e = { .opcode = WN_QUEUE_WC_RECV, .qp_num = qp->c.qpn };
	uint64_t total = 0, need = (uint64_t)WN_UD_GRH_LEN + r->len, rest;
	uint32_t i, k = 0, off = 0;
	int rc;

	if (qp->state != WN_UD_QPS_RTR && qp->state != WN_UD_QPS_RTS &&
	    qp->state != WN_UD_QPS_SQD) {
		qp->st.rx_drop_state++;
		return -ENOTCONN;
	}
	/* IBTA 10.2.5: a datagram whose Q_Key is not the QP's is silently dropped */
	if (r->qkey != qp->qkey) {
		qp->st.rx_drop_qkey++;
		return -EPERM;
	}
	rc = take_rwqe(qp, &w, sge);
	if (rc == -ENOBUFS) {
		qp->st.rx_drop_norecv++;
		return rc;
	}
	e.wr_id = w.wr_id;
	if (rc == -EINVAL) {
		/* a receive the client wrote wrong completes in error; the message is lost */
		e.status = WN_QUEUE_WC_LOC_QP_OP_ERR;
		post_cqe(qp, qp->c.rcq, &e, false);
	}
	if (rc != 0) {
		qp->st.rx_drop_bad++;
		return -EPROTO;
	}
	for (i = 0; i < w.num_sge; i++)
		total += sge[i].length;
	if (need > total) {
		qp->st.rx_len_errors++;
		e.status = WN_QUEUE_WC_LOC_LEN_ERR;
		post_cqe(qp, qp->c.rcq, &e, false);
		return 0;
	}
	/* every lkey checked before an octet is written */
	for (i = 0, rest = need; i < w.num_sge && rest > 0; i++) {
		if (sge[i].length == 0)
			continue;
		take[k] = (uint32_t)RTE_MIN((uint64_t)sge[i].length, rest);
		if (wn_mem_check(qp->c.mem, sge[i].lkey, sge[i].addr, take[k],
				 WN_MEM_ACCESS_LOCAL_WRITE, qp->c.pd, qp->c.qpn, &dst[k]) != WN_MEM_OK) {
			qp->st.rx_prot_errors++;
			e.status = WN_QUEUE_WC_LOC_PROT_ERR;
			post_cqe(qp, qp->c.rcq, &e, false);
			return 0;
		}
		rest -= take[k];
		k++;
	}
	k = 0;
	scatter(dst, take, &k, &off, r->grh, WN_UD_GRH_LEN);
	for (i = 0; i < r->n_iov; i++)
		scatter(dst, take, &k, &off, r->iov[i].base, r->iov[i].len);
	qp->st.rx_msgs++;
	qp->st.rx_bytes += r->len;
	e.status = WN_QUEUE_WC_SUCCESS;
	e.byte_len = (uint32_t)need;
	e.flags = WN_QUEUE_WC_F_GRH | (r->se ? WN_QUEUE_WC_F_SOLICITED : 0);
	if (r->has_imm) {
		e.flags |= WN_QUEUE_WC_F_WITH_IMM;
		e.imm_data = r->imm;
	}
	e.src_qp = r->src_qpn;
	post_cqe(qp, qp->c.rcq, &e, r->se);
	return 0;
}
