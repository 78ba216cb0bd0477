/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data path of the verbs shim: the ctx->ops entries the verbs.h inlines jump through.
 * Work requests are written in place into the shared SQ/RQ/SRQ rings in lib/queue's layout
 * (wn_queue.h; its opcodes, send flags, statuses and CQE opcodes carry the ibverbs values),
 * completions are read from the CQ ring. No system call on this path, except a doorbell
 * while the dataplane lcore sleeps (lib/client) and the yields of a CQ that stays empty.
 */
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "verbs_priv.h"
#include "wn_queue.h"
#include "wnv.h"

static_assert((int)IBV_WR_RDMA_WRITE == (int)WN_QUEUE_WR_RDMA_WRITE &&
	      (int)IBV_WR_SEND_WITH_INV == (int)WN_QUEUE_WR_SEND_WITH_INV &&
	      (int)IBV_WR_SEND_WITH_IMM == (int)WN_QUEUE_WR_SEND_WITH_IMM &&
	      (int)IBV_WR_ATOMIC_FETCH_AND_ADD == (int)WN_QUEUE_WR_ATOMIC_FETCH_AND_ADD,
	      "ibv_wr_opcode values");
static_assert(IBV_SEND_FENCE == WN_QUEUE_SEND_FENCE &&
	      IBV_SEND_SIGNALED == WN_QUEUE_SEND_SIGNALED &&
	      IBV_SEND_SOLICITED == WN_QUEUE_SEND_SOLICITED &&
	      IBV_SEND_INLINE == WN_QUEUE_SEND_INLINE,
	      "ibv_send_flags values");
static_assert(IBV_WC_GRH == WN_QUEUE_WC_F_GRH && IBV_WC_WITH_IMM == WN_QUEUE_WC_F_WITH_IMM,
	      "ibv_wc_flags values");
static_assert((int)IBV_WC_WR_FLUSH_ERR == (int)WN_QUEUE_WC_WR_FLUSH_ERR &&
	      (int)IBV_WC_RECV == (int)WN_QUEUE_WC_RECV &&
	      (int)IBV_WC_RECV_RDMA_WITH_IMM == (int)WN_QUEUE_WC_RECV_RDMA_WITH_IMM,
	      "ibv_wc values");
static_assert(sizeof(struct ibv_sge) == sizeof(struct wn_queue_sge), "sge layout");

#define WN_CQ_BATCH 16

void
wn_verbs_fill_ud(struct wn_queue_swqe *w, struct ibv_ah *ah, uint32_t remote_qpn,
		 uint32_t remote_qkey)
{
	const struct ibv_ah_attr *a = &((struct wn_vah *)ah)->attr;

	memcpy(w->u.ud.dgid, a->grh.dgid.raw, sizeof(w->u.ud.dgid));
	w->u.ud.remote_qpn = remote_qpn;
	w->u.ud.remote_qkey = remote_qkey;
	w->u.ud.sgid_index = a->grh.sgid_index;
	w->u.ud.hop_limit = a->grh.hop_limit;
	w->u.ud.traffic_class = a->grh.traffic_class;
	w->u.ud.flow_label = a->grh.flow_label;
}

int
wn_verbs_send_state(const struct wn_vqp *q)
{
	/* a Send goes only from RTS (or waits in SQD): RESET, INIT and RTR refuse it (IBTA
	 * 10.8.2), as rdma-core's tests expect of a UD QP (EINVAL) */
	if (q->ud && q->qp.state != IBV_QPS_RTS && q->qp.state != IBV_QPS_SQD)
		return EINVAL;
	return 0;
}

/* Fill one send WQE from @p wr; returns 0 or an errno for *bad_wr. */
static int
fill_swqe(struct wn_vqp *q, struct wn_queue_swqe *w, const struct ibv_send_wr *wr)
{
	uint32_t flags = wr->send_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED |
					   IBV_SEND_SOLICITED | IBV_SEND_INLINE);
	int i;

	if (wr->num_sge < 0)
		return EINVAL;
	/* a UD QP sends only Sends, each to the address its AH names (wr.ud) */
	if (q->ud && ((wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM) ||
		      wr->wr.ud.ah == NULL || wr->wr.ud.ah->context != q->qp.context ||
		      wr->wr.ud.remote_qpn > 0xffffff))
		return EINVAL;
	switch (wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM: /* RFC 7306 Immediate Data + Send (lib/rnic/README.md) */
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_LOCAL_INV:
		break;
	case IBV_WR_BIND_MW:
		/* post_send binds type 2 windows; type 1 goes through ibv_bind_mw() */
		if (wr->bind_mw.mw == NULL || wr->bind_mw.mw->type != IBV_MW_TYPE_2 ||
		    wr->bind_mw.bind_info.mr == NULL)
			return EINVAL;
		break;
	default:
		return EINVAL; /* UD/XRC/TSO/... opcodes: no iWARP form */
	}
	if (q->sq_sig_all)
		flags |= IBV_SEND_SIGNALED;
	memset(w, 0, WN_QUEUE_SWQE_HDR);
	w->wr_id = wr->wr_id;
	w->opcode = (uint8_t)wr->opcode;
	w->flags = (uint8_t)flags;
	if (wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM || wr->opcode == IBV_WR_SEND_WITH_IMM)
		w->ex.imm_data = wr->imm_data;
	else if (wr->opcode == IBV_WR_SEND_WITH_INV)
		w->ex.invalidate_rkey = wr->invalidate_rkey;
	if (q->ud)
		wn_verbs_fill_ud(w, wr->wr.ud.ah, wr->wr.ud.remote_qpn, wr->wr.ud.remote_qkey);
	switch (q->ud ? IBV_WR_SEND : wr->opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		w->u.rdma.remote_addr = wr->wr.rdma.remote_addr;
		w->u.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		w->u.atomic.remote_addr = wr->wr.atomic.remote_addr;
		w->u.atomic.compare_add = wr->wr.atomic.compare_add;
		w->u.atomic.swap = wr->wr.atomic.swap;
		w->u.atomic.rkey = wr->wr.atomic.rkey;
		break;
	case IBV_WR_LOCAL_INV:
		w->u.local_inv.invalidate_stag = wr->invalidate_rkey;
		break;
	case IBV_WR_BIND_MW:
		wn_verbs_fill_bind(w, wr->bind_mw.rkey, &wr->bind_mw.bind_info);
		return 0;
	default:
		break;
	}
	if ((flags & IBV_SEND_INLINE) && wr->opcode != IBV_WR_RDMA_READ) {
		uint8_t *dst = (uint8_t *)w + WN_QUEUE_SWQE_HDR;
		uint32_t len = 0;

		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length > q->max_inline - len)
				return EINVAL;
			memcpy(dst + len, (const void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		w->inline_len = len;
		return 0;
	}
	w->flags &= (uint8_t)~IBV_SEND_INLINE;
	if ((uint32_t)wr->num_sge > q->wqp->max_send_sge)
		return EINVAL;
	w->num_sge = (uint8_t)wr->num_sge;
	if (wr->num_sge > 0)
		memcpy((uint8_t *)w + WN_QUEUE_SWQE_HDR, wr->sg_list,
		       sizeof(struct wn_queue_sge) * (size_t)wr->num_sge);
	return 0;
}

void
wn_verbs_fill_bind(struct wn_queue_swqe *w, uint32_t rkey, const struct ibv_mw_bind_info *b)
{
	w->opcode = WN_QUEUE_WR_BIND_MW;
	w->u.bind_mw.mw_stag = rkey;
	w->u.bind_mw.mr_lkey = b->mr != NULL ? b->mr->lkey : 0;
	w->u.bind_mw.addr = b->addr;
	w->u.bind_mw.length = b->length;
	/* the window's rights: remote access and zero-based addressing (IBTA 10.6.7.2.1) */
	w->u.bind_mw.access = b->mw_access_flags & (IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ZERO_BASED);
}

/*
 * Start the one WQE of a local operation (bind, fast-register): its header with @p wr_id and
 * the fence/signal flags. The caller fills the rest and ends it with wn_client_wq_end(..., 1).
 * @return 0, EIO (QP gone) or ENOMEM (SQ full).
 */
static int
local_wqe_begin(struct wn_vqp *q, uint64_t wr_id, unsigned int send_flags,
		struct wn_queue_swqe **wp)
{
	int64_t space = wn_client_wq_begin(q->wqp, NULL, false);
	struct wn_queue_swqe *w;

	if (space < 0)
		return EIO;
	if (space == 0) {
		wn_client_wq_end(q->wqp, NULL, false, 0);
		return ENOMEM;
	}
	w = wn_client_wq_slot(q->wqp, NULL, false, 0);
	memset(w, 0, WN_QUEUE_SWQE_HDR);
	w->wr_id = wr_id;
	w->flags = (uint8_t)(send_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED));
	if (q->sq_sig_all)
		w->flags |= IBV_SEND_SIGNALED;
	*wp = w;
	return 0;
}

int
wn_verbs_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct wn_vqp *q = (struct wn_vqp *)qp;
	uint32_t rkey = ibv_inc_rkey(mw->rkey);
	struct wn_queue_swqe *w;
	int ret;

	/* verbs.h's ibv_bind_mw() has checked the type, the MR's PD and the unbind form */
	ret = local_wqe_begin(q, mw_bind->wr_id, mw_bind->send_flags, &w);
	if (ret != 0)
		return ret;
	wn_verbs_fill_bind(w, rkey, &mw_bind->bind_info);
	wn_client_wq_end(q->wqp, NULL, false, 1);
	mw->rkey = rkey; /* the key the peer must use from now on */
	return 0;
}

WN_VERBS_EXPORT int
wnv_post_fast_reg(struct ibv_qp *qp, const struct wnv_fast_reg_wr *wr)
{
	struct wn_vqp *q = (struct wn_vqp *)qp;
	struct wn_vmr *m = (struct wn_vmr *)wr->mr;
	struct wn_queue_swqe *w;
	int ret;

	if (m == NULL || !m->frmr || (wr->key & ~0xffu) != (m->mr.lkey & ~0xffu) ||
	    (wr->access & ~(unsigned int)(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
					   IBV_ACCESS_ZERO_BASED)) != 0)
		return EINVAL;
	ret = local_wqe_begin(q, wr->wr_id, wr->send_flags, &w);
	if (ret != 0)
		return ret;
	w->opcode = WN_QUEUE_WR_FAST_REG;
	w->u.fast_reg.stag = wr->key;
	w->u.fast_reg.access = wr->access;
	w->u.fast_reg.iova = wr->iova;
	w->u.fast_reg.length = wr->length;
	w->u.fast_reg.offset = wr->offset;
	wn_client_wq_end(q->wqp, NULL, false, 1);
	m->mr.lkey = m->mr.rkey = wr->key;
	return 0;
}

int
wn_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct wn_vqp *q = (struct wn_vqp *)qp;
	uint32_t n = 0;
	int64_t space;
	int ret = wn_verbs_send_state(q);

	if (ret != 0) {
		*bad = wr;
		return ret;
	}
	space = wn_client_wq_begin(q->wqp, NULL, false);
	if (space < 0) {
		*bad = wr;
		return EIO;
	}
	for (; wr != NULL; wr = wr->next) {
		if ((int64_t)n == space) {
			ret = ENOMEM;
			break;
		}
		ret = fill_swqe(q, wn_client_wq_slot(q->wqp, NULL, false, n), wr);
		if (ret != 0)
			break;
		n++;
	}
	wn_client_wq_end(q->wqp, NULL, false, n);
	if (ret != 0)
		*bad = wr;
	return ret;
}

static int
post_recv_ring(struct wn_client_qp *wqp, struct wn_client_srq *wsrq, uint32_t max_sge,
	       struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	uint32_t n = 0;
	int64_t space;
	int ret = 0;

	space = wn_client_wq_begin(wqp, wsrq, true);
	if (space < 0) {
		*bad = wr;
		return space == -EINVAL ? EINVAL : EIO;
	}
	for (; wr != NULL; wr = wr->next) {
		struct wn_queue_rwqe *w;

		if ((int64_t)n == space) {
			ret = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			ret = EINVAL;
			break;
		}
		w = wn_client_wq_slot(wqp, wsrq, true, n);
		w->wr_id = wr->wr_id;
		w->num_sge = (uint32_t)wr->num_sge;
		w->rsvd = 0;
		if (wr->num_sge > 0)
			memcpy((uint8_t *)w + WN_QUEUE_RWQE_HDR, wr->sg_list,
			       sizeof(struct wn_queue_sge) * (size_t)wr->num_sge);
		n++;
	}
	wn_client_wq_end(wqp, wsrq, true, n);
	if (ret != 0)
		*bad = wr;
	return ret;
}

int
wn_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct wn_vqp *q = (struct wn_vqp *)qp;

	if (qp->srq != NULL || (q->ud && qp->state == IBV_QPS_RESET)) {
		*bad = wr;
		return EINVAL; /* receives go to the SRQ; a UD QP takes them from INIT on */
	}
	return post_recv_ring(q->wqp, NULL, q->wqp->max_recv_sge, wr, bad);
}

int
wn_verbs_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct wn_vsrq *s = (struct wn_vsrq *)srq;

	return post_recv_ring(NULL, s->wsrq, s->wsrq->max_sge, wr, bad);
}

int
wn_verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct wn_vcq *c = (struct wn_vcq *)cq;
	struct wn_queue_cqe e[WN_CQ_BATCH];
	int done = 0;

	if (n < 0)
		return -1;
	while (done < n) {
		int want = n - done < WN_CQ_BATCH ? n - done : WN_CQ_BATCH;
		int got = wn_client_poll_cq(c->wcq, e, want), i;

		if (got < 0)
			return done > 0 ? done : -1;
		for (i = 0; i < got; i++) {
			struct ibv_wc *w = &wc[done + i];

			memset(w, 0, sizeof(*w));
			w->wr_id = e[i].wr_id;
			w->status = (enum ibv_wc_status)e[i].status;
			w->opcode = (enum ibv_wc_opcode)e[i].opcode;
			w->vendor_err = e[i].vendor_err;
			w->byte_len = e[i].byte_len;
			w->qp_num = e[i].qp_num;
			w->wc_flags = e[i].flags & (IBV_WC_GRH | IBV_WC_WITH_IMM | IBV_WC_WITH_INV);
			if (e[i].flags & WN_QUEUE_WC_F_WITH_INV)
				w->invalidated_rkey = e[i].invalidated_rkey;
			else
				w->imm_data = e[i].imm_data;
			/* a UD receive: the sender's QP (no LIDs, SL or P_Key index but 0) */
			if (e[i].flags & WN_QUEUE_WC_F_GRH)
				w->src_qp = e[i].src_qp;
		}
		done += got;
		if (got < want)
			break;
	}
	/* a program spinning on an empty CQ lets a dataplane lcore on its CPU run */
	wn_client_poll_backoff(&c->bo, done);
	return done;
}

int
wn_verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct wn_vcq *c = (struct wn_vcq *)cq;

	if (cq->channel == NULL)
		return EINVAL;
	wn_client_cq_arm(c->wcq, solicited_only != 0);
	return 0;
}
