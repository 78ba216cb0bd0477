/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transmit: the Terminate, responses to the peer's Reads and Atomics, and SQ work
 * (RFC 5040 §5.1-5.3, RFC 7306 §5-6), segmented to the MULPDU (RFC 5041 §5.2).
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "rnic_priv.h"

static int
emit(struct wn_rnic_qp *qp, struct wn_llp_ulpdu *u)
{
	int rc = wn_llp_send(qp->c.llp, u);

	if (rc == WN_LLP_TX_HELD) {
		if (u->src != WN_LLP_SRC_SQ)
			return 0; /* only SQ WQEs have a completion to hold */
		qp->pend[u->wqe & qp->c.sq->mask].holds++;
		qp->st.tx_held++;
		rc = 0;
	}
	if (rc == 0) {
		qp->st.tx_ulpdu++;
		qp->st.tx_payload += u->len - u->hdr_len;
	}
	return rc;
}

void
wn_rnic_tx_release(struct wn_rnic_qp *qp, uint32_t wqe)
{
	struct wn_queue_ring *sq = qp->c.sq;
	struct sq_pend *p;

	if (qp->state == WN_RNIC_QPS_ERROR || (uint32_t)(wqe - sq->head) >=
	    (uint32_t)(qp->sq_fetch - sq->head))
		return;
	/* InfiniBand RC: after a Terminate the peer took nothing more; the flush reports it */
	if (qp->c.ib_rc && qp->state == WN_RNIC_QPS_TERMINATE)
		return;
	p = &qp->pend[wqe & sq->mask];
	if (p->holds == 0)
		return;
	if (--p->holds == 0)
		wn_rnic_complete_sq(qp);
}

/* @return 1 when the pending Terminate went out (or none was pending), 0 to retry. */
int
wn_rnic_send_term(struct wn_rnic_qp *qp)
{
	struct wn_rnic_event ev = { .type = WN_RNIC_EV_TERM_SENT };

	if (emit(qp, &qp->term) != 0)
		return 0;
	qp->term_pending = false;
	qp->term_done = true;
	qp->msn_tx[WN_DDP_QN_TERM]++;
	qp->st.terminates_sent++;
	ev.term = qp->term_cause;
	wn_rnic_event_post(qp, &ev);
	return 1;
}

static uint32_t
payload_max(const struct wn_rnic_qp *qp, bool tagged)
{
	return qp->c.mulpdu - (tagged ? WN_DDP_TAGGED_HDR_LEN : WN_DDP_UNTAGGED_HDR_LEN);
}

/* Local error while generating: complete the WQE in error and stop the stream. */
static void
local_error(struct wn_rnic_qp *qp, uint32_t idx, uint8_t status)
{
	struct sq_pend *p = &qp->pend[idx & qp->c.sq->mask];

	p->done = 1;
	p->status = status;
	p->vendor_err = rnic_vendor_err(WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_LOCAL_CATA, 0);
	qp->cur_active = false;
	qp->tx_owner = TXO_NONE;
	/* RFC 5040 §7.1: a local error found while generating a message sends the Terminate
	 * instead of it, with no headers (Fig. 10: local catastrophic carries nothing) */
	wn_rnic_queue_term(qp, WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_LOCAL_CATA, 0, NULL, 0);
}

/* Gather [off, off + len) of the current WQE's payload into @p u (lkeys checked again). */
static enum wn_mem_verdict
gather(struct wn_rnic_qp *qp, uint32_t off, uint32_t len, struct wn_llp_ulpdu *u)
{
	const struct wn_queue_swqe *w = &qp->cur.w;
	const struct wn_queue_sge *sge = (const struct wn_queue_sge *)(w + 1);
	uint32_t i, pos = 0;

	u->n_iov = 0;
	u->src = WN_LLP_SRC_NONE;
	if (len == 0)
		return WN_MEM_OK;
	if (w->flags & WN_QUEUE_SEND_INLINE) {
		/* the engine's private copy, gone with the next WQE: never referenced */
		u->iov[0].base = qp->cur.raw + WN_QUEUE_SWQE_HDR + off;
		u->iov[0].len = len;
		u->iov[0].stag = 0;
		u->n_iov = 1;
		return WN_MEM_OK;
	}
	u->src = WN_LLP_SRC_SQ;
	for (i = 0; i < w->num_sge && len != 0; i++) {
		uint32_t l = sge[i].length;
		uint32_t skip, take;
		enum wn_mem_verdict v;
		uint8_t *host;

		if (off >= pos + l) {
			pos += l;
			continue;
		}
		skip = off - pos;
		take = RTE_MIN(l - skip, len);
		v = wn_mem_check_cached(qp->c.mem, &qp->tx_mem, sge[i].lkey, sge[i].addr + skip,
					take, WN_MEM_ACCESS_LOCAL_READ, qp->c.pd, qp->c.qpn, &host);
		if (v != WN_MEM_OK)
			return v;
		u->iov[u->n_iov].base = host;
		u->iov[u->n_iov].len = take;
		u->iov[u->n_iov].stag = sge[i].lkey;
		u->n_iov++;
		off += take;
		len -= take;
		pos += l;
	}
	return WN_MEM_OK;
}

/* Fast-register, bind and local invalidate run at once on this lcore. */
static void
local_op(struct wn_rnic_qp *qp, uint32_t idx)
{
	const struct wn_queue_swqe *w = &qp->cur.w;
	struct sq_pend *p = &qp->pend[idx & qp->c.sq->mask];
	enum wn_mem_verdict v;
	uint8_t bad = WN_QUEUE_WC_LOC_PROT_ERR;

	switch (w->opcode) {
	case WN_QUEUE_WR_FAST_REG:
		v = wn_mem_fast_reg(qp->c.mem, w->u.fast_reg.stag, qp->c.pd, w->u.fast_reg.iova,
				    w->u.fast_reg.length, w->u.fast_reg.offset,
				    w->u.fast_reg.access);
		break;
	case WN_QUEUE_WR_BIND_MW:
		v = wn_mem_mw_bind(qp->c.mem, w->u.bind_mw.mw_stag, w->u.bind_mw.mr_lkey,
				   qp->c.pd, qp->c.qpn, w->u.bind_mw.addr, w->u.bind_mw.length,
				   w->u.bind_mw.access);
		bad = WN_QUEUE_WC_MW_BIND_ERR;
		break;
	default: /* LOCAL_INV */
		v = wn_mem_invalidate(qp->c.mem, w->u.local_inv.invalidate_stag, qp->c.pd,
				      qp->c.qpn, false);
		break;
	}
	if (v != WN_MEM_OK) {
		local_error(qp, idx, bad);
		return;
	}
	p->done = 1;
}

/* Check every SGE of the WQE once before its first octet leaves (RFC 5040 §7.1). */
static int
precheck(struct wn_rnic_qp *qp, uint32_t access, uint64_t *total)
{
	const struct wn_queue_swqe *w = &qp->cur.w;
	const struct wn_queue_sge *sge = (const struct wn_queue_sge *)(w + 1);
	uint64_t t = 0;

	if (w->flags & WN_QUEUE_SEND_INLINE) {
		*total = w->inline_len;
		return 0;
	}
	for (uint32_t i = 0; i < w->num_sge; i++) {
		if (sge[i].length != 0 &&
		    wn_mem_check(qp->c.mem, sge[i].lkey, sge[i].addr, sge[i].length, access,
				 qp->c.pd, qp->c.qpn, NULL) != WN_MEM_OK)
			return WN_QUEUE_WC_LOC_PROT_ERR;
		t += sge[i].length;
	}
	if (t > UINT32_MAX)
		return WN_QUEUE_WC_LOC_LEN_ERR; /* RFC 5041 §5.2: message length < 2^32 */
	*total = t;
	return 0;
}

/*
 * Fetch and start the next SQ WQE.
 * @return 1 started (a message is current), 2 progress without a ULPDU, 0 nothing to do.
 */
static int
sq_start(struct wn_rnic_qp *qp)
{
	struct wn_queue_ring *sq = qp->c.sq;
	const uint8_t *slot;
	struct wn_queue_swqe *w = &qp->cur.w;
	struct sq_pend *p;
	int64_t avail;
	uint64_t total = 0;
	uint32_t idx = qp->sq_fetch, body;
	int st;

	if (qp->state != WN_RNIC_QPS_RTS)
		return 0;
	avail = wn_queue_cons_avail(sq);
	if (avail < 0) {
		local_error(qp, idx, WN_QUEUE_WC_LOC_QP_OP_ERR);
		return 2;
	}
	if ((uint32_t)avail == qp->sq_fetch - sq->head)
		return 0;
	slot = wn_queue_entry(sq, idx);
	memcpy(w, slot, sizeof(*w)); /* private copy, then validate (the ring is client memory) */
	if ((w->flags & WN_QUEUE_SEND_FENCE) && rnic_ord_count(qp) != 0)
		return 0; /* IBV_SEND_FENCE: wait for outstanding Reads and Atomics */
	if ((w->opcode == WN_QUEUE_WR_RDMA_READ || w->opcode == WN_QUEUE_WR_ATOMIC_CMP_AND_SWP ||
	     w->opcode == WN_QUEUE_WR_ATOMIC_FETCH_AND_ADD) &&
	    rnic_ord_count(qp) >= qp->c.ord) {
		qp->st.ord_stalls++; /* RFC 5040 §6.1: never more than ORD outstanding */
		return 0;
	}
	qp->sq_fetch++;
	p = &qp->pend[idx & sq->mask];
	*p = (struct sq_pend){
		.wr_id = w->wr_id, .wc_opcode = wn_queue_wc_opcode(w->opcode),
		.signaled = (qp->c.sq_sig_all || (w->flags & WN_QUEUE_SEND_SIGNALED)) ? 1 : 0,
	};
	if (wn_queue_swqe_validate(sq, w) != 0 ||
	    ((w->opcode == WN_QUEUE_WR_RDMA_WRITE_WITH_IMM ||
	      w->opcode == WN_QUEUE_WR_SEND_WITH_IMM || w->opcode ==
	      WN_QUEUE_WR_ATOMIC_CMP_AND_SWP || w->opcode == WN_QUEUE_WR_ATOMIC_FETCH_AND_ADD) &&
	     !qp->c.rfc7306) ||
	    (w->opcode == WN_QUEUE_WR_RDMA_READ && w->num_sge > 1)) {
		local_error(qp, idx, WN_QUEUE_WC_LOC_QP_OP_ERR);
		return 2;
	}
	body = (w->flags & WN_QUEUE_SEND_INLINE) ? w->inline_len :
		w->num_sge * (uint32_t)sizeof(struct wn_queue_sge);
	memcpy(qp->cur.raw + WN_QUEUE_SWQE_HDR, slot + WN_QUEUE_SWQE_HDR, body);

	switch (w->opcode) {
	case WN_QUEUE_WR_FAST_REG:
	case WN_QUEUE_WR_BIND_MW:
	case WN_QUEUE_WR_LOCAL_INV:
		local_op(qp, idx);
		return 2;
	case WN_QUEUE_WR_RDMA_READ:
		/* the sink is written by the Read Response: local write on our STag */
		st = precheck(qp, WN_MEM_ACCESS_LOCAL_WRITE, &total);
		break;
	case WN_QUEUE_WR_ATOMIC_CMP_AND_SWP:
	case WN_QUEUE_WR_ATOMIC_FETCH_AND_ADD:
		st = precheck(qp, WN_MEM_ACCESS_LOCAL_WRITE, &total);
		if (st == 0 && total != 8)
			st = WN_QUEUE_WC_LOC_LEN_ERR;
		break;
	default:
		st = precheck(qp, WN_MEM_ACCESS_LOCAL_READ, &total);
		break;
	}
	/* a remote range that wraps 2^64 would be a TO wrap at the peer (RFC 5041 §7.1,
	 * RFC 5040 §7.2): refuse the WQE here instead of sending an invalid message */
	if (st == 0 && total != 0 &&
	    (w->opcode == WN_QUEUE_WR_RDMA_WRITE || w->opcode == WN_QUEUE_WR_RDMA_WRITE_WITH_IMM ||
	     w->opcode == WN_QUEUE_WR_RDMA_READ) &&
	    total - 1 > UINT64_MAX - w->u.rdma.remote_addr)
		st = WN_QUEUE_WC_LOC_QP_OP_ERR;
	if (st != 0) {
		local_error(qp, idx, (uint8_t)st);
		return 2;
	}
	p->byte_len = (uint32_t)total;
	qp->cur_active = true;
	qp->cur_idx = idx;
	qp->cur_off = 0;
	qp->cur_len = (uint32_t)total;
	/* Send with Immediate: the Immediate Data goes first (wn_rnic.h) */
	qp->cur_phase = w->opcode == WN_QUEUE_WR_SEND_WITH_IMM ? 2 : 0;
	return 1;
}

static uint8_t
send_opcode(const struct wn_queue_swqe *w)
{
	bool se = (w->flags & WN_QUEUE_SEND_SOLICITED) != 0;

	if (w->opcode == WN_QUEUE_WR_SEND_WITH_INV)
		return se ? WN_RDMAP_SEND_SE_INV : WN_RDMAP_SEND_INV;
	return se ? WN_RDMAP_SEND_SE : WN_RDMAP_SEND;
}

static void
cur_done(struct wn_rnic_qp *qp, bool complete)
{
	if (complete)
		qp->pend[qp->cur_idx & qp->c.sq->mask].done = 1;
	qp->cur_active = false;
	qp->tx_owner = TXO_NONE;
}

/* Emit a header-only ULPDU of @p n octets built in @p u->hdr. @return 0, or -EAGAIN. */
static int
emit_hdr(struct wn_rnic_qp *qp, struct wn_llp_ulpdu *u, int n)
{
	u->hdr_len = (uint16_t)n;
	u->len = (uint32_t)n;
	u->n_iov = 0;
	return emit(qp, u);
}

/*
 * RFC 7306 §6: an Immediate Data message (QN 0): the one that follows a Write with
 * Immediate (it completes the WQE), or the one that opens a Send with Immediate (@p lead:
 * the Send follows, which carries the Solicited Event if any; wn_rnic.h).
 */
static int
sq_emit_immediate(struct wn_rnic_qp *qp, const struct wn_queue_swqe *w, struct wn_llp_ulpdu *u,
		  bool lead)
{
	uint8_t op = (!lead && (w->flags & WN_QUEUE_SEND_SOLICITED)) ? WN_RDMAP_IMMEDIATE_SE :
		     WN_RDMAP_IMMEDIATE;
	/* the 32-bit verbs immediate travels in the low half of the 64-bit field */
	uint64_t data = rte_be_to_cpu_32(w->ex.imm_data);
	int n;

	if (lead)
		data |= (uint64_t)WN_RNIC_IMM_SEND_FOLLOWS << 32;
	n = wn_wire_rdmap_immediate_build(u->hdr, sizeof(u->hdr), op, qp->msn_tx[WN_DDP_QN_SEND],
					  data);
	if (emit_hdr(qp, u, n) != 0)
		return 0;
	qp->msn_tx[WN_DDP_QN_SEND]++;
	if (lead)
		qp->cur_phase = 0; /* now the Send */
	else
		cur_done(qp, true);
	return 1;
}

/* An RDMA Read Request; it holds an ORD slot until its Response is delivered. */
static int
sq_emit_read(struct wn_rnic_qp *qp, const struct wn_queue_swqe *w, struct wn_llp_ulpdu *u)
{
	const struct wn_queue_sge *sge = (const struct wn_queue_sge *)(w + 1);
	/* one sink STag per Read Request; a zero-length Read may have no SGE at all */
	struct wn_rdmap_read_req rr = {
		.sink_stag = w->num_sge != 0 ? sge[0].lkey : 0,
		.sink_to = w->num_sge != 0 ? sge[0].addr : 0, .size = qp->cur_len,
		.src_stag = w->u.rdma.rkey, .src_to = w->u.rdma.remote_addr,
	};
	struct ord_ent *o = &qp->ord[qp->ord_tail % qp->c.ord];
	int n = wn_wire_rdmap_read_req_build(u->hdr, sizeof(u->hdr), qp->msn_tx[WN_DDP_QN_RREQ],
					     &rr);

	if (emit_hdr(qp, u, n) != 0)
		return 0;
	qp->msn_tx[WN_DDP_QN_RREQ]++;
	*o = (struct ord_ent){ .kind = ORD_READ, .sq_idx = qp->cur_idx, .sink_stag = rr.sink_stag,
			       .sink_to = rr.sink_to, .size = rr.size };
	qp->ord_tail++;
	cur_done(qp, false); /* completes when the Read Response is delivered */
	return 1;
}

/* An RFC 7306 Atomic Request; it holds an ORD slot until its Response is delivered. */
static int
sq_emit_atomic(struct wn_rnic_qp *qp, const struct wn_queue_swqe *w, struct wn_llp_ulpdu *u)
{
	const struct wn_queue_sge *sge = (const struct wn_queue_sge *)(w + 1);
	bool cs = w->opcode == WN_QUEUE_WR_ATOMIC_CMP_AND_SWP;
	struct wn_rdmap_atomic_req ar = {
		.aopcode = cs ? WN_RDMAP_AOP_CMP_SWAP : WN_RDMAP_AOP_FETCH_ADD,
		.req_id = qp->atomic_req_id, .stag = w->u.atomic.rkey,
		.to = w->u.atomic.remote_addr,
		.add_swap = cs ? w->u.atomic.swap : w->u.atomic.compare_add,
		.add_swap_mask = cs ? UINT64_MAX : 0,
		.compare = cs ? w->u.atomic.compare_add : 0,
		.compare_mask = UINT64_MAX,
	};
	struct ord_ent *o = &qp->ord[qp->ord_tail % qp->c.ord];
	int n = wn_wire_rdmap_atomic_req_build(u->hdr, sizeof(u->hdr), qp->msn_tx[WN_DDP_QN_RREQ],
					  &ar);

	if (emit_hdr(qp, u, n) != 0)
		return 0;
	qp->msn_tx[WN_DDP_QN_RREQ]++;
	*o = (struct ord_ent){ .kind = ORD_ATOMIC, .sq_idx = qp->cur_idx,
			       .req_id = qp->atomic_req_id, .res_lkey = sge[0].lkey,
			       .res_addr = sge[0].addr };
	qp->atomic_req_id++;
	qp->ord_tail++;
	cur_done(qp, false);
	return 1;
}

/* The next segment of a Send or Write (RFC 5041 §5.2: at most the MULPDU). */
static int
sq_emit_data(struct wn_rnic_qp *qp, const struct wn_queue_swqe *w, struct wn_llp_ulpdu *u)
{
	bool tagged = w->opcode == WN_QUEUE_WR_RDMA_WRITE ||
		      w->opcode == WN_QUEUE_WR_RDMA_WRITE_WITH_IMM;
	uint32_t rest = qp->cur_len - qp->cur_off;
	uint32_t seg = RTE_MIN(rest, payload_max(qp, tagged));
	bool last = seg == rest;
	int n;

	if (gather(qp, qp->cur_off, seg, u) != WN_MEM_OK) {
		/* an lkey went away since the precheck */
		local_error(qp, qp->cur_idx, WN_QUEUE_WC_LOC_PROT_ERR);
		return 0;
	}
	if (tagged)
		n = wn_wire_rdmap_write_build(u->hdr, sizeof(u->hdr), w->u.rdma.rkey,
					 w->u.rdma.remote_addr + qp->cur_off, last);
	else
		/* RFC 5040 §4.1: the Invalidate STag is zero in every other Send */
		n = wn_wire_rdmap_send_build(u->hdr, sizeof(u->hdr), send_opcode(w),
					w->opcode == WN_QUEUE_WR_SEND_WITH_INV ?
					w->ex.invalidate_rkey : 0,
					qp->msn_tx[WN_DDP_QN_SEND], qp->cur_off, last);
	u->hdr_len = (uint16_t)n;
	u->len = (uint32_t)n + seg;
	u->last = last;
	if (emit(qp, u) != 0)
		return 0;
	qp->cur_off += seg;
	if (!last)
		return 1;
	if (w->opcode == WN_QUEUE_WR_RDMA_WRITE_WITH_IMM) {
		qp->cur_phase = 1; /* the Immediate Data message follows */
		return 1;
	}
	if (!tagged)
		qp->msn_tx[WN_DDP_QN_SEND]++;
	cur_done(qp, true);
	return 1;
}

/* The next ULPDU of the current WQE. @return 1 when one went out, 0 when not now. */
static int
sq_emit(struct wn_rnic_qp *qp)
{
	const struct wn_queue_swqe *w = &qp->cur.w;
	struct wn_llp_ulpdu u;

	u.src = WN_LLP_SRC_NONE;
	u.last = 0;
	u.wqe = qp->cur_idx;
	u.msg_len = qp->cur_len;
	if (qp->cur_phase != 0)
		return sq_emit_immediate(qp, w, &u, qp->cur_phase == 2);
	switch (w->opcode) {
	case WN_QUEUE_WR_RDMA_READ:
		return sq_emit_read(qp, w, &u);
	case WN_QUEUE_WR_ATOMIC_CMP_AND_SWP:
	case WN_QUEUE_WR_ATOMIC_FETCH_AND_ADD:
		return sq_emit_atomic(qp, w, &u);
	default:
		return sq_emit_data(qp, w, &u);
	}
}

/* RFC 7306 §5.2.1: FetchAdd with Add Mask: a set bit marks the top of an independent field. */
static uint64_t
fetch_add(uint64_t orig, uint64_t add, uint64_t mask)
{
	uint64_t r = 0, carry = 0;

	if (mask == 0)
		return orig + add;
	for (unsigned int i = 0; i < 64; i++) {
		uint64_t a = orig >> i & 1, b = add >> i & 1;
		uint64_t s = a ^ b ^ carry;

		carry = (a & b) | (a & carry) | (b & carry);
		r |= s << i;
		if (mask >> i & 1)
			carry = 0;
	}
	return r;
}

/* The value an Atomic Request leaves in place of @p orig. */
static uint64_t
atomic_new(const struct wn_rdmap_atomic_req *ar, uint64_t orig)
{
	if (ar->aopcode == WN_RDMAP_AOP_FETCH_ADD)
		return fetch_add(orig, ar->add_swap, ar->add_swap_mask);
	if (((ar->compare ^ orig) & ar->compare_mask) == 0)
		return (orig & ~ar->add_swap_mask) | (ar->add_swap & ar->add_swap_mask);
	return orig;
}

/*
 * Execute an Atomic Request on its target (8 octets at @p host) with a locked
 * compare-and-exchange: atomic against every other Atomic Request, whichever lcore runs its
 * QP, and against any thread of the client using atomic instructions on the same octets (a
 * plain store of the host CPU is not). The target's TO is 64-bit aligned (lib/wire refuses
 * others, RFC 7306 §8.2); a region mapped at an unaligned host address (a zero-based MR
 * that starts unaligned) gets a plain read-modify-write. @return the original value.
 */
static uint64_t
atomic_exec(uint8_t *host, const struct wn_rdmap_atomic_req *ar)
{
	uint64_t *p = (uint64_t *)(void *)host;
	uint64_t orig, nv;

	if (((uintptr_t)host & 7) != 0) {
		memcpy(&orig, host, 8);
		nv = atomic_new(ar, orig);
		memcpy(host, &nv, 8);
		return orig;
	}
	orig = __atomic_load_n(p, __ATOMIC_RELAXED);
	do
		nv = atomic_new(ar, orig);
	while (!__atomic_compare_exchange_n(p, &orig, nv, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_RELAXED));
	return orig;
}

/* Emit the next response ULPDU. @return 1 emitted, 0 nothing or retry. */
static int
resp_emit(struct wn_rnic_qp *qp)
{
	struct ird_ent *e = &qp->ird[qp->ird_head % qp->c.ird];
	struct wn_llp_ulpdu u;
	struct wn_mem_term term;
	uint8_t *host = NULL;
	int n;

	u.src = WN_LLP_SRC_NONE;
	u.last = 0;
	u.wqe = 0;
	u.msg_len = 0;
	if (e->kind == IRD_ATOMIC) {
		struct wn_rdmap_atomic_resp as = { .req_id = e->ar.req_id };

		if (!e->executed) {
			/* checked at receipt; checked again as the region may have changed */
			host = wn_mem_resolve(qp->c.mem, e->ar.stag, e->ar.to, 8,
					      WN_MEM_ACCESS_REMOTE_ATOMIC, qp->c.pd, qp->c.qpn,
					      WN_MEM_LAYER_RDMAP, &term);
			if (host == NULL) {
				wn_rnic_queue_term(qp, term.layer, term.etype, term.code, NULL, 0);
				return 0;
			}
			e->orig = atomic_exec(host, &e->ar);
			e->executed = 1;
		}
		as.orig = e->orig;
		n = wn_wire_rdmap_atomic_resp_build(u.hdr, sizeof(u.hdr),
						    qp->msn_tx[WN_DDP_QN_ARESP], &as);
		u.hdr_len = (uint16_t)n;
		u.len = (uint32_t)n;
		u.n_iov = 0;
		if (emit(qp, &u) != 0)
			return 0;
		qp->msn_tx[WN_DDP_QN_ARESP]++;
		qp->ird_head++;
		qp->tx_owner = TXO_NONE;
		return 1;
	}

	/* Read Response: STag and TO are the request's sink, verbatim (RFC 5040 §5.2) */
	uint32_t rest = e->rr.size - e->sent;
	uint32_t seg = RTE_MIN(rest, payload_max(qp, true));
	bool last = seg == rest;

	u.n_iov = 0;
	if (seg != 0) {
		host = wn_mem_resolve(qp->c.mem, e->rr.src_stag, e->rr.src_to + e->sent, seg,
				      WN_MEM_ACCESS_REMOTE_READ, qp->c.pd, qp->c.qpn,
				      WN_MEM_LAYER_RDMAP, &term);
		if (host == NULL) {
			wn_rnic_queue_term(qp, term.layer, term.etype, term.code, NULL, 0);
			return 0;
		}
		u.iov[0].base = host;
		u.iov[0].len = seg;
		u.iov[0].stag = e->rr.src_stag;
		u.n_iov = 1;
		u.src = WN_LLP_SRC_RESP;
		u.msg_len = e->rr.size;
	}
	n = wn_wire_rdmap_read_resp_build(u.hdr, sizeof(u.hdr), e->rr.sink_stag,
				     e->rr.sink_to + e->sent, last);
	u.hdr_len = (uint16_t)n;
	u.len = (uint32_t)n + seg;
	u.last = last;
	if (emit(qp, &u) != 0)
		return 0;
	e->sent += seg;
	qp->tx_owner = TXO_RESP;
	if (last) {
		qp->ird_head++;
		qp->tx_owner = TXO_NONE;
	}
	return 1;
}

unsigned int
wn_rnic_tx_poll(struct wn_rnic_qp *qp, unsigned int budget)
{
	unsigned int n = 0;

	while (n < budget) {
		int rc;

		if (qp->term_pending) {
			n += (unsigned int)wn_rnic_send_term(qp);
			break; /* RFC 5040 §5.4: nothing after the Terminate */
		}
		if (qp->state != WN_RNIC_QPS_RTS && qp->state != WN_RNIC_QPS_CLOSING)
			break;
		/* one message at a time; between messages the peer's requests go first */
		if (qp->tx_owner == TXO_RESP ||
		    (qp->tx_owner == TXO_NONE && rnic_ird_count(qp) != 0)) {
			rc = resp_emit(qp);
			if (rc == 0)
				break;
			n++;
			continue;
		}
		if (!qp->cur_active) {
			rc = sq_start(qp);
			if (rc == 0)
				break;
			if (rc == 2)
				continue;
			qp->tx_owner = TXO_SQ;
		}
		rc = sq_emit(qp);
		if (rc == 0)
			break;
		n++;
	}
	wn_rnic_complete_sq(qp);
	if (qp->term_pending && n < budget)
		n += (unsigned int)wn_rnic_send_term(qp);
	return n;
}

bool
wn_rnic_tx_idle(const struct wn_rnic_qp *qp)
{
	const struct wn_queue_ring *sq = qp->c.sq;
	const struct sq_pend *p;

	if (qp->term_pending || qp->cur_active || qp->tx_owner != TXO_NONE ||
	    rnic_ird_count(qp) != 0)
		return false;
	if (sq->head == qp->sq_fetch)
		return true;
	/* the oldest fetched WQE: done and free to complete means the next poll has work */
	p = &qp->pend[sq->head & sq->mask];
	return !(p->done && p->holds == 0);
}

int
wn_rnic_send_rtr(struct wn_rnic_qp *qp, uint32_t type)
{
	struct wn_llp_ulpdu u = { .n_iov = 0 };
	int n;

	if (qp->state != WN_RNIC_QPS_RTS || qp->cur_active || qp->tx_owner != TXO_NONE)
		return -EINVAL;
	switch (type) {
	case WN_RNIC_RTR_SEND:
		n = wn_wire_rdmap_send_build(u.hdr, sizeof(u.hdr), WN_RDMAP_SEND, 0,
					qp->msn_tx[WN_DDP_QN_SEND], 0, true);
		break;
	case WN_RNIC_RTR_WRITE:
		/* zero-length tagged: STag and TO are not checked (RFC 5041 §5.2) */
		n = wn_wire_rdmap_write_build(u.hdr, sizeof(u.hdr), 0, 0, true);
		break;
	case WN_RNIC_RTR_READ: {
		struct wn_rdmap_read_req rr = { 0 };

		if (rnic_ord_count(qp) >= qp->c.ord)
			return -EBUSY;
		n = wn_wire_rdmap_read_req_build(u.hdr, sizeof(u.hdr), qp->msn_tx[WN_DDP_QN_RREQ],
						 &rr);
		break;
	}
	default:
		return -EINVAL;
	}
	u.hdr_len = (uint16_t)n;
	u.len = (uint32_t)n;
	if (emit(qp, &u) != 0)
		return -EAGAIN;
	if (type == WN_RNIC_RTR_SEND) {
		qp->msn_tx[WN_DDP_QN_SEND]++;
	} else if (type == WN_RNIC_RTR_READ) {
		qp->msn_tx[WN_DDP_QN_RREQ]++;
		qp->ord[qp->ord_tail % qp->c.ord] = (struct ord_ent){ .kind = ORD_RTR_READ };
		qp->ord_tail++;
	}
	return 0;
}
