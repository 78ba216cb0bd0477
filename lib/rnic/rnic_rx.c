/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive: dispatch by the RDMAP opcode table of lib/wire; untagged placement by QN/MSN/MO
 * and tagged placement by STag/TO (RFC 5041 §5, §7.1; RFC 5040 §5, §7.2; RFC 7306).
 * Every check runs before the first octet is copied; a failure queues one Terminate.
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "rnic_priv.h"

/* A handler's verdict: 0 or a Terminate cause (the QP then goes to TERMINATE). */
struct rx_res {
	bool err;
	struct wn_term_cause cause;
};

/* The handler being run and its verdict (handlers keep wn_rdmap_rx_fn's signature). */
struct rx_ctx {
	struct wn_rnic_qp *qp;
	struct rx_res res;
	bool hold;  /* a Send waits for a receive: nothing changed, offer it again */
};

static int
fail(struct rx_ctx *x, uint8_t layer, uint8_t etype, uint8_t code)
{
	x->res.err = true;
	x->res.cause = (struct wn_term_cause){ .layer = layer, .etype = etype, .code = code };
	return -EPROTO;
}

static int
fail_mem(struct rx_ctx *x, enum wn_mem_verdict v, enum wn_mem_layer layer)
{
	struct wn_mem_term t = wn_mem_term_of(v, layer);

	return fail(x, t.layer, t.etype, t.code);
}

static void
rtr_seen(struct wn_rnic_qp *qp)
{
	struct wn_rnic_event ev = { .type = WN_RNIC_EV_RTR_RECV };

	qp->rtr_pending = 0;
	wn_rnic_event_post(qp, &ev);
}

/* RDMA Write (RFC 5040 §5.1): tagged placement, remote write right on the sink. */
/* InfiniBand RC (ib_rc): the QP itself does not allow @p right (IBV_QP_ACCESS_FLAGS). */
static bool
qp_denies(const struct wn_rnic_qp *qp, uint32_t right)
{
	return qp->c.ib_rc && (qp->c.qp_access & right) == 0;
}

static int
rx_write(void *ctx, const struct wn_ddp_seg *s)
{
	struct rx_ctx *x = ctx;
	struct wn_rnic_qp *qp = x->qp;
	enum wn_mem_verdict v;
	uint8_t *host;

	if (s->payload_len == 0) {
		/* RFC 5041 §5.2: no STag/TO checks for a zero-length tagged segment */
		if (qp->rx_first && (qp->rtr_pending & WN_RNIC_RTR_WRITE))
			rtr_seen(qp);
	} else {
		if (qp_denies(qp, WN_MEM_ACCESS_REMOTE_WRITE))
			return fail(x, WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_PROT,
				    WN_TERM_RP_ACCESS);
		v = wn_mem_check_cached(qp->c.mem, &qp->rx_mem, s->h.stag, s->h.to,
					s->payload_len, WN_MEM_ACCESS_REMOTE_WRITE, qp->c.pd,
					qp->c.qpn, &host);
		if (v != WN_MEM_OK)
			return fail_mem(x, v, WN_MEM_LAYER_DDP);
		memcpy(host, s->payload, s->payload_len);
		qp->st.rx_bytes_placed += s->payload_len;
	}
	qp->write_bytes += s->payload_len;
	if (s->h.last) {
		qp->last_write_len = qp->write_bytes;
		qp->write_bytes = 0;
	}
	return 0;
}

/* RDMA Read Response (RFC 5040 §5.2.2): placed at our sink, matched to the oldest Read. */
static int
rx_read_resp(void *ctx, const struct wn_ddp_seg *s)
{
	struct rx_ctx *x = ctx;
	struct wn_rnic_qp *qp = x->qp;
	struct ord_ent *o = &qp->ord[qp->ord_head % qp->c.ord];
	enum wn_mem_verdict v;
	uint8_t *host;

	if (rnic_ord_count(qp) == 0 || o->kind == ORD_ATOMIC)
		return fail(x, WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP,
			    WN_TERM_RO_UNEXPECTED_OP);
	if (s->payload_len != 0) {
		/* RFC 5040 §5.5 rule 20: STag, TO and length must be what we asked for */
		if (s->h.stag != o->sink_stag)
			return fail(x, WN_TERM_LAYER_DDP, WN_TERM_DDP_TAGGED,
				    WN_TERM_DT_INVALID_STAG);
		if (s->h.to != o->sink_to + o->got || s->payload_len > o->size - o->got)
			return fail(x, WN_TERM_LAYER_DDP, WN_TERM_DDP_TAGGED,
				    WN_TERM_DT_BASE_BOUNDS);
		v = wn_mem_check_cached(qp->c.mem, &qp->rx_mem, s->h.stag, s->h.to,
					s->payload_len, WN_MEM_ACCESS_LOCAL_WRITE, qp->c.pd,
					qp->c.qpn, &host);
		if (v != WN_MEM_OK)
			return fail_mem(x, v, WN_MEM_LAYER_DDP);
		memcpy(host, s->payload, s->payload_len);
		o->got += s->payload_len;
		qp->st.rx_bytes_placed += s->payload_len;
	}
	if (!s->h.last)
		return 0;
	if (o->got != o->size)
		return fail(x, WN_TERM_LAYER_DDP, WN_TERM_DDP_TAGGED, WN_TERM_DT_BASE_BOUNDS);
	if (o->kind == ORD_RTR_READ) {
		rtr_seen(qp); /* our own RTR Read came back; nothing to complete */
	} else {
		struct sq_pend *p = &qp->pend[o->sq_idx & qp->c.sq->mask];

		p->done = 1;
		p->byte_len = o->size;
	}
	qp->ord_head++;
	wn_rnic_complete_sq(qp);
	return 0;
}

/*
 * Map [mo, mo + len) of a receive WQE's SGEs to host memory, every lkey checked, nothing
 * changed. @return 0 (@p n pieces in @p dst / @p take), -ERANGE (MO past the buffer, RFC
 * 5041 §7.1), -EMSGSIZE (past its end) or -EACCES (an lkey the QP may not write).
 */
static int
rq_map(struct wn_rnic_qp *qp, const struct wn_queue_sge *sge, uint32_t num_sge, uint64_t total,
       uint32_t mo, uint32_t len, uint8_t **dst, uint32_t *take, uint32_t *n,
       struct wn_mem_cached *cache)
{
	uint64_t pos = 0;
	uint32_t i, k = 0, off = mo, rest = len;

	if (mo > total)
		return -ERANGE;
	if ((uint64_t)mo + len > total)
		return -EMSGSIZE;
	for (i = 0; i < num_sge && rest != 0; i++) {
		uint32_t l = sge[i].length;
		uint32_t skip;

		if (off >= pos + l) {
			pos += l;
			continue;
		}
		skip = (uint32_t)(off - pos);
		take[k] = RTE_MIN(l - skip, rest);
		if ((cache != NULL ?
		     wn_mem_check_cached(qp->c.mem, cache, sge[i].lkey, sge[i].addr + skip,
					 take[k], WN_MEM_ACCESS_LOCAL_WRITE, qp->c.pd, qp->c.qpn,
					 &dst[k]) :
		     wn_mem_check(qp->c.mem, sge[i].lkey, sge[i].addr + skip, take[k],
				  WN_MEM_ACCESS_LOCAL_WRITE, qp->c.pd, qp->c.qpn, &dst[k])) !=
		    WN_MEM_OK)
			return -EACCES;
		off += take[k];
		rest -= take[k];
		pos += l;
		k++;
	}
	*n = k;
	return 0;
}

static void
copy_out(uint8_t *const *dst, const uint32_t *take, uint32_t n, const uint8_t *data)
{
	for (uint32_t i = 0; i < n; i++) {
		memcpy(dst[i], data, take[i]);
		data += take[i];
	}
}

/* Place [mo, mo + len) into the current receive WQE; all lkeys checked first. */
static int
rq_place(struct rx_ctx *x, uint32_t mo, const uint8_t *data, uint32_t len)
{
	struct wn_rnic_qp *qp = x->qp;
	struct rq_cur *r = &qp->rq;
	uint8_t *dst[WN_QUEUE_MAX_SGE];
	uint32_t take[WN_QUEUE_MAX_SGE];
	uint32_t n = 0;
	int rc = rq_map(qp, r->sge, r->num_sge, r->total, mo, len, dst, take, &n, &qp->rx_rq_mem);

	/* RFC 5041 §7.1: MO and MO + length inside the buffer */
	if (rc == -ERANGE)
		return fail(x, WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_INVALID_MO);
	if (rc == -EMSGSIZE)
		return fail(x, WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_TOO_LONG);
	if (rc != 0) {
		/* our own receive buffer is bad: a local error, reported without headers (RFC
		 * 5040 Fig. 10), the WQE completes in error */
		struct wn_queue_cqe e = {
			.wr_id = r->wr_id, .status = WN_QUEUE_WC_LOC_PROT_ERR,
			.opcode = WN_QUEUE_WC_RECV, .qp_num = qp->c.qpn,
			.vendor_err = rnic_vendor_err(0, 0, 0),
		};

		r->active = false;
		wn_rnic_post_cqe(qp, qp->c.rcq, &e, false);
		return fail(x, WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_LOCAL_CATA, 0);
	}
	copy_out(dst, take, n, data);
	qp->st.rx_bytes_placed += len;
	return 0;
}

/*
 * The Immediate Data that opened the current receive for a Send with Immediate was not
 * followed by a Send (a peer that is not warpnic, or not this convention): it completes
 * alone, as any Immediate Data without a Write before it (RFC 7306 §6).
 */
static void
rq_imm_alone(struct wn_rnic_qp *qp)
{
	struct wn_queue_cqe e = {
		.wr_id = qp->rq.wr_id, .qp_num = qp->c.qpn, .opcode = WN_QUEUE_WC_RECV,
		.flags = WN_QUEUE_WC_F_WITH_IMM, .imm_data = qp->rq.imm_data,
	};

	if (qp->rq.imm_se)
		e.flags |= WN_QUEUE_WC_F_SOLICITED;
	qp->rq.active = false;
	qp->rq.imm_wait = false;
	wn_rnic_post_cqe(qp, qp->c.rcq, &e, qp->rq.imm_se);
}

/* Send, Send with SE/Invalidate, Immediate Data (QN 0; RFC 5040 §5.3, RFC 7306 §6). */
static int
rx_send(void *ctx, const struct wn_ddp_seg *s)
{
	struct rx_ctx *x = ctx;
	struct wn_rnic_qp *qp = x->qp;
	uint8_t op = s->h.opcode;
	bool imm = op == WN_RDMAP_IMMEDIATE || op == WN_RDMAP_IMMEDIATE_SE;
	bool se = op == WN_RDMAP_SEND_SE || op == WN_RDMAP_SEND_SE_INV ||
		  op == WN_RDMAP_IMMEDIATE_SE;
	struct wn_queue_cqe e = { .qp_num = qp->c.qpn, .opcode = WN_QUEUE_WC_RECV };
	int rc;

	/* RFC 6581 §7.1: the peer's zero-length Send RTR is absorbed, no receive consumed */
	if (qp->rx_first && (qp->rtr_pending & WN_RNIC_RTR_SEND) && op == WN_RDMAP_SEND &&
	    s->payload_len == 0 && s->h.last && s->h.mo == 0 &&
	    s->h.msn == qp->msn_rx[WN_DDP_QN_SEND]) {
		qp->msn_rx[WN_DDP_QN_SEND]++;
		rtr_seen(qp);
		return 0;
	}
	/* in-order LLP: every segment belongs to the message with the expected MSN */
	if (s->h.msn != qp->msn_rx[WN_DDP_QN_SEND])
		return fail(x, WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_MSN_RANGE);
	if (imm && qp->rq.active && qp->rq.imm_wait)
		rq_imm_alone(qp); /* Immediate Data after Immediate Data: no Send came */
	if (!qp->rq.active) {
		rc = wn_rnic_take_rwqe(qp);
		if (rc == -ENOBUFS && qp->c.rnr_hold && !qp->rnr_expired) {
			/* receiver not ready: the lower layer holds it (wn_rnic_qp_conf) */
			x->hold = true;
			return -EAGAIN;
		}
		if (rc == -ENOBUFS) /* RFC 5041 §7.1: no buffer for (QN, MSN) */
			return fail(x, WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED,
				    WN_TERM_DU_MSN_NO_BUFFER);
		if (rc != 0) {
			struct wn_queue_cqe b = {
				.wr_id = qp->rq.wr_id, .status = WN_QUEUE_WC_LOC_QP_OP_ERR,
				.opcode = WN_QUEUE_WC_RECV, .qp_num = qp->c.qpn,
			};

			wn_rnic_post_cqe(qp, qp->c.rcq, &b, false);
			return fail(x, WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_LOCAL_CATA, 0);
		}
	}
	if (imm && (uint32_t)(s->u.imm >> 32) == WN_RNIC_IMM_SEND_FOLLOWS) {
		/* Send with Immediate (wn_rnic.h): this receive waits for the Send that
		 * follows; the Immediate Data consumed its untagged buffer (RFC 7306 §6.3) */
		qp->rq.imm_wait = true;
		qp->rq.imm_se = se;
		qp->rq.imm_data = rte_cpu_to_be_32((uint32_t)s->u.imm);
		qp->msn_rx[WN_DDP_QN_SEND]++;
		return 0;
	}
	if (!imm) {
		rc = rq_place(x, s->h.mo, s->payload, s->payload_len);
		if (rc != 0)
			return rc;
	}
	if (!s->h.last)
		return 0;
	e.wr_id = qp->rq.wr_id;
	e.byte_len = s->h.mo + s->payload_len;
	if (qp->rq.imm_wait) {
		/* the Send of a Send with Immediate: one receive, the Send's length */
		e.flags |= WN_QUEUE_WC_F_WITH_IMM;
		e.imm_data = qp->rq.imm_data;
		se = se || qp->rq.imm_se;
		qp->rq.imm_wait = false;
	} else if (imm) {
		/* Write with Immediate: the CQE carries the preceding Write's length */
		e.opcode = WN_QUEUE_WC_RECV_RDMA_WITH_IMM;
		e.flags |= WN_QUEUE_WC_F_WITH_IMM;
		e.imm_data = rte_cpu_to_be_32((uint32_t)s->u.imm);
		e.byte_len = qp->last_write_len;
	}
	if (op == WN_RDMAP_SEND_INV || op == WN_RDMAP_SEND_SE_INV) {
		/* RFC 5040 §5.3: invalidate if associated, else "STag cannot be invalidated" */
		if (wn_mem_invalidate(qp->c.mem, s->h.inv_stag, qp->c.pd, qp->c.qpn, true) !=
		    WN_MEM_OK)
			return fail(x, WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_PROT,
				    WN_TERM_RP_CANT_INVALIDATE);
		e.flags |= WN_QUEUE_WC_F_WITH_INV;
		e.invalidated_rkey = s->h.inv_stag;
	}
	if (se)
		e.flags |= WN_QUEUE_WC_F_SOLICITED;
	qp->rq.active = false;
	qp->msn_rx[WN_DDP_QN_SEND]++;
	wn_rnic_post_cqe(qp, qp->c.rcq, &e, se);
	return 0;
}

/* QN 1: a Read or Atomic Request takes one of IRD untagged buffers. */
static int
rx_qn1_admit(struct rx_ctx *x, const struct wn_ddp_seg *s)
{
	struct wn_rnic_qp *qp = x->qp;

	if (s->h.msn != qp->msn_rx[WN_DDP_QN_RREQ])
		return fail(x, WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_MSN_RANGE);
	if (rnic_ird_count(qp) >= qp->c.ird) /* more than IRD outstanding (RFC 5040 §6.1) */
		return fail(x, WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED,
			    WN_TERM_DU_MSN_NO_BUFFER);
	return 0;
}

/* An admitted request takes the next IRD entry (tx answers in order) and QN 1's next MSN. */
static void
rx_qn1_queue(struct wn_rnic_qp *qp, const struct ird_ent *e)
{
	qp->ird[qp->ird_tail % qp->c.ird] = *e;
	qp->ird_tail++;
	qp->msn_rx[WN_DDP_QN_RREQ]++;
}

/* RDMA Read Request (RFC 5040 §5.2.1): validated now, answered in order by tx. */
static int
rx_read_req(void *ctx, const struct wn_ddp_seg *s)
{
	struct rx_ctx *x = ctx;
	struct wn_rnic_qp *qp = x->qp;
	enum wn_mem_verdict v;
	int rc = rx_qn1_admit(x, s);

	if (rc != 0)
		return rc;
	/* a zero-length Read is not validated and gets a zero-length Response (§5.2.1) */
	if (s->u.rreq.size != 0) {
		/* the Response would carry sink TOs that wrap 2^64 (RFC 5041 §7.1): refuse */
		if (s->u.rreq.size - 1 > UINT64_MAX - s->u.rreq.sink_to)
			return fail(x, WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_PROT,
				    WN_TERM_RP_TO_WRAP);
		if (qp_denies(qp, WN_MEM_ACCESS_REMOTE_READ))
			return fail(x, WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_PROT,
				    WN_TERM_RP_ACCESS);
		v = wn_mem_check(qp->c.mem, s->u.rreq.src_stag, s->u.rreq.src_to, s->u.rreq.size,
				 WN_MEM_ACCESS_REMOTE_READ, qp->c.pd, qp->c.qpn, NULL);
		if (v != WN_MEM_OK)
			return fail_mem(x, v, WN_MEM_LAYER_RDMAP);
	} else if (qp->rx_first && (qp->rtr_pending & WN_RNIC_RTR_READ)) {
		rtr_seen(qp);
	}
	rx_qn1_queue(qp, &(struct ird_ent){ .kind = IRD_READ, .rr = s->u.rreq });
	return 0;
}

/* Atomic Request (RFC 7306 §5.2.1): checked now, executed in order with Reads by tx. */
static int
rx_atomic_req(void *ctx, const struct wn_ddp_seg *s)
{
	struct rx_ctx *x = ctx;
	struct wn_rnic_qp *qp = x->qp;
	enum wn_mem_verdict v;
	int rc = rx_qn1_admit(x, s);

	if (rc != 0)
		return rc;
	if (qp_denies(qp, WN_MEM_ACCESS_REMOTE_ATOMIC))
		return fail(x, WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_PROT, WN_TERM_RP_ACCESS);
	v = wn_mem_check(qp->c.mem, s->u.areq.stag, s->u.areq.to, 8, WN_MEM_ACCESS_REMOTE_ATOMIC,
			 qp->c.pd, qp->c.qpn, NULL);
	if (v != WN_MEM_OK)
		return fail_mem(x, v, WN_MEM_LAYER_RDMAP);
	rx_qn1_queue(qp, &(struct ird_ent){ .kind = IRD_ATOMIC, .ar = s->u.areq });
	return 0;
}

/* Atomic Response (RFC 7306 §5.2.2, QN 3): the original value goes to the WQE's SGE. */
static int
rx_atomic_resp(void *ctx, const struct wn_ddp_seg *s)
{
	struct rx_ctx *x = ctx;
	struct wn_rnic_qp *qp = x->qp;
	struct ord_ent *o = &qp->ord[qp->ord_head % qp->c.ord];
	struct sq_pend *p;
	uint8_t *host;

	if (s->h.msn != qp->msn_rx[WN_DDP_QN_ARESP])
		return fail(x, WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_MSN_RANGE);
	if (rnic_ord_count(qp) == 0 || o->kind != ORD_ATOMIC || o->req_id != s->u.aresp.req_id)
		return fail(x, WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP,
			    WN_TERM_RO_UNEXPECTED_OP);
	p = &qp->pend[o->sq_idx & qp->c.sq->mask];
	if (wn_mem_check(qp->c.mem, o->res_lkey, o->res_addr, 8, WN_MEM_ACCESS_LOCAL_WRITE,
			 qp->c.pd, qp->c.qpn, &host) != WN_MEM_OK) {
		p->status = WN_QUEUE_WC_LOC_PROT_ERR;
	} else {
		uint64_t orig = s->u.aresp.orig;

		memcpy(host, &orig, 8); /* host byte order, as the target stored it */
		p->byte_len = 8;
	}
	p->done = 1;
	qp->ord_head++;
	qp->msn_rx[WN_DDP_QN_ARESP]++;
	wn_rnic_complete_sq(qp);
	if (p->status != WN_QUEUE_WC_SUCCESS)
		return fail(x, WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_LOCAL_CATA, 0);
	return 0;
}

/* The work completion status InfiniBand's responder NAK would give for a Terminate's cause. */
static uint8_t
ib_status_of(uint8_t layer, uint8_t etype, uint8_t code)
{
	if ((layer == WN_TERM_LAYER_RDMAP && etype == WN_TERM_RDMAP_REMOTE_PROT) ||
	    (layer == WN_TERM_LAYER_DDP && etype == WN_TERM_DDP_TAGGED))
		return WN_QUEUE_WC_REM_ACCESS_ERR;
	if (layer == WN_TERM_LAYER_DDP && etype == WN_TERM_DDP_UNTAGGED)
		return code == WN_TERM_DU_MSN_NO_BUFFER ? WN_QUEUE_WC_RNR_RETRY_EXC_ERR :
						      WN_QUEUE_WC_REM_INV_REQ_ERR;
	return WN_QUEUE_WC_REM_OP_ERR;
}

/*
 * InfiniBand RC completions (ib_rc): the oldest send WQE not completed yet is the one the
 * peer refused (Sends and Writes complete only once the peer has them): it gets the error.
 */
static void
ib_refused(struct wn_rnic_qp *qp, uint8_t layer, uint8_t etype, uint8_t code)
{
	struct wn_queue_ring *sq = qp->c.sq;
	struct sq_pend *p;

	if (!qp->c.ib_rc || sq->head == qp->sq_fetch)
		return;
	p = &qp->pend[sq->head & sq->mask];
	p->done = 1;
	p->status = ib_status_of(layer, etype, code);
	p->vendor_err = (uint32_t)layer << 12 | (uint32_t)etype << 8 | code;
	wn_rnic_complete_sq(qp);
}

/* Terminate (RFC 5040 §5.4): deliver to the ULP, stop; never answer with a Terminate. */
static int
rx_terminate(void *ctx, const struct wn_ddp_seg *s)
{
	struct rx_ctx *x = ctx;
	struct wn_rnic_qp *qp = x->qp;
	struct wn_rnic_event ev = { .type = WN_RNIC_EV_TERM_RECV };

	ev.term = (struct wn_mem_term){ s->u.term.cause.layer, s->u.term.cause.etype,
					s->u.term.cause.code };
	ib_refused(qp, ev.term.layer, ev.term.etype, ev.term.code);
	qp->term_done = true; /* RFC 5040 §5.4: we send no Terminate back */
	qp->term_pending = false;
	qp->st.terminates_recv++;
	wn_rnic_event_post(qp, &ev);
	wn_rnic_set_state(qp, WN_RNIC_QPS_TERMINATE);
	return 0;
}

void
wn_rnic_rx_table_init(struct wn_rnic_qp *qp)
{
	wn_wire_rdmap_op_table_init(qp->ops);
	qp->ops[WN_RDMAP_WRITE].rx = rx_write;
	qp->ops[WN_RDMAP_READ_REQ].rx = rx_read_req;
	qp->ops[WN_RDMAP_READ_RESP].rx = rx_read_resp;
	qp->ops[WN_RDMAP_SEND].rx = rx_send;
	qp->ops[WN_RDMAP_SEND_INV].rx = rx_send;
	qp->ops[WN_RDMAP_SEND_SE].rx = rx_send;
	qp->ops[WN_RDMAP_SEND_SE_INV].rx = rx_send;
	qp->ops[WN_RDMAP_TERMINATE].rx = rx_terminate;
	qp->ops[WN_RDMAP_IMMEDIATE].rx = rx_send;
	qp->ops[WN_RDMAP_IMMEDIATE_SE].rx = rx_send;
	qp->ops[WN_RDMAP_ATOMIC_REQ].rx = rx_atomic_req;
	qp->ops[WN_RDMAP_ATOMIC_RESP].rx = rx_atomic_resp;
}

/*
 * InfiniBand RC completions (ib_rc): the Terminate goes to the lower layer at once, before
 * the acknowledgement of what caused it can leave on its own: the peer, whose Send or Write
 * completes at that acknowledgement, sees the Terminate first and completes it in error.
 */
static void
term_now(struct wn_rnic_qp *qp)
{
	if (qp->c.ib_rc && qp->term_pending)
		(void)wn_rnic_send_term(qp);
}

int
wn_rnic_rx(struct wn_rnic_qp *qp, const uint8_t *ulpdu, size_t len)
{
	struct rx_ctx x = { .qp = qp };
	struct wn_ddp_seg seg;
	struct wn_ddp_error err;
	int rc;

	/* RFC 5041 §7.1: after an error all later segments are dropped silently */
	if ((qp->state != WN_RNIC_QPS_RTS && qp->state != WN_RNIC_QPS_CLOSING) ||
	    qp->term_pending || qp->term_done) {
		qp->rnr_waiting = false;
		return -ENOTCONN;
	}
	if (wn_wire_ddp_parse(ulpdu, len, qp->parse_flags, &seg, &err) != 0) {
		qp->st.rx_ulpdu++;
		wn_rnic_queue_term(qp, err.cause.layer, err.cause.etype, err.cause.code,
				err.hdr_valid ? ulpdu : NULL, len);
		term_now(qp);
		return -EPROTO;
	}
	rc = wn_rdmap_rx_dispatch(qp->ops, &x, &seg);
	if (rc != 0 && x.hold) {
		if (!qp->rnr_waiting)
			qp->st.rnr_holds++; /* counted once per message, not per offer */
		qp->rnr_waiting = true;
		return -EAGAIN;
	}
	qp->st.rx_ulpdu++;
	if (qp->rnr_waiting && qp->rnr_expired && rc != 0)
		qp->st.rnr_timeouts++;
	qp->rnr_waiting = false;
	if (rc != 0) {
		if (!x.res.err)
			x.res.cause = (struct wn_term_cause){ WN_TERM_LAYER_RDMAP,
							      WN_TERM_RDMAP_REMOTE_OP,
							      WN_TERM_RO_UNEXPECTED_OP };
		/* local catastrophic errors carry no headers (RFC 5040 Fig. 10) */
		wn_rnic_queue_term(qp, x.res.cause.layer, x.res.cause.etype, x.res.cause.code,
				   ulpdu, len);
		term_now(qp);
		return -EPROTO;
	}
	qp->rx_first = false;
	return 0;
}

bool
wn_rnic_rx_ready(struct wn_rnic_qp *qp)
{
	struct wn_queue_ring *r = qp->c.rq != NULL ? qp->c.rq : qp->c.srq;

	if (!qp->rnr_waiting || qp->rnr_expired)
		return true;
	if ((qp->state != WN_RNIC_QPS_RTS && qp->state != WN_RNIC_QPS_CLOSING) ||
	    qp->term_pending || qp->term_done)
		return true; /* offered again, it is dropped */
	/* a broken ring (< 0) is offered again too: the take reports it */
	return wn_queue_cons_avail(r) != 0;
}

void
wn_rnic_rnr_expire(struct wn_rnic_qp *qp)
{
	qp->rnr_expired = true;
}

/* ---------------------------------------------------------------- out-of-order placement */

/* An RDMA Write's payload, early: only into a plain MR (see wn_rnic_rx_place()). */
static int
ooo_write(struct wn_rnic_qp *qp, const struct wn_ddp_seg *s)
{
	struct wn_mem_info mi;
	uint8_t *host;

	if (wn_mem_info(qp->c.mem, s->h.stag, &mi) != 0 || mi.type != WN_MEM_T_MR)
		return 0;
	if (wn_mem_check(qp->c.mem, s->h.stag, s->h.to, s->payload_len,
			 WN_MEM_ACCESS_REMOTE_WRITE, qp->c.pd, qp->c.qpn, &host) != WN_MEM_OK)
		return 0;
	memcpy(host, s->payload, s->payload_len);
	return (int)s->payload_len;
}

/*
 * A Send's payload, early, into the receive its MSN names: the one being filled (MSN
 * msn_rx, taken) or the k-th not yet taken from the QP's own RQ, read in place (the RQ's
 * consumer is this lcore; the in-order pass takes the same WQE later).
 */
static int
ooo_send(struct wn_rnic_qp *qp, const struct wn_ddp_seg *s)
{
	struct wn_queue_ring *r = qp->c.rq;
	uint32_t k = s->h.msn - qp->msn_rx[WN_DDP_QN_SEND];
	uint8_t *dst[WN_QUEUE_MAX_SGE];
	uint32_t take[WN_QUEUE_MAX_SGE], n = 0, i;
	struct wn_queue_sge sge[WN_QUEUE_MAX_SGE];
	struct wn_queue_rwqe h;
	uint64_t total = 0;
	int64_t avail;

	if (r == NULL || k > (uint32_t)r->mask)
		return 0; /* an SRQ, or an MSN behind us or beyond any posted receive */
	if (k == 0 && qp->rq.active) {
		memcpy(sge, qp->rq.sge, qp->rq.num_sge * sizeof(sge[0]));
		h.num_sge = qp->rq.num_sge;
		total = qp->rq.total;
	} else {
		if (qp->rq.active)
			k--;
		avail = wn_queue_cons_avail(r);
		if (avail <= 0 || k >= (uint64_t)avail)
			return 0;
		memcpy(&h, wn_queue_cons_slot(r, k), sizeof(h)); /* private copies */
		if (wn_queue_rwqe_validate(r, &h) != 0)
			return 0;
		memcpy(sge, (const struct wn_queue_rwqe *)wn_queue_cons_slot(r, k) + 1,
		       h.num_sge * sizeof(sge[0]));
		for (i = 0; i < h.num_sge; i++)
			total += sge[i].length;
	}
	if (rq_map(qp, sge, h.num_sge, total, s->h.mo, s->payload_len, dst, take, &n, NULL) != 0)
		return 0;
	copy_out(dst, take, n, s->payload);
	return (int)s->payload_len;
}

int
wn_rnic_rx_place(struct wn_rnic_qp *qp, const uint8_t *ulpdu, size_t len)
{
	struct wn_ddp_seg seg;
	struct wn_ddp_error err;
	int n = 0;

	if (qp->state != WN_RNIC_QPS_RTS || qp->term_pending || qp->term_done)
		return 0;
	if (wn_wire_ddp_parse(ulpdu, len, qp->parse_flags, &seg, &err) != 0 || seg.payload_len == 0)
		return 0;
	switch (seg.h.opcode & WN_RDMAP_CTRL_OP_MASK) {
	case WN_RDMAP_WRITE:
		n = ooo_write(qp, &seg);
		break;
	case WN_RDMAP_SEND:
	case WN_RDMAP_SEND_INV:
	case WN_RDMAP_SEND_SE:
	case WN_RDMAP_SEND_SE_INV:
		n = ooo_send(qp, &seg);
		break;
	default:
		break; /* Read Requests, Responses, Atomics, Terminates: in order only */
	}
	if (n > 0) {
		qp->st.ooo_placed++;
		qp->st.ooo_bytes += (uint64_t)n;
	}
	return n;
}
