/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The extended QP's work-request API (struct ibv_qp_ex, ibv_wr_start .. ibv_wr_complete) for
 * RC and UD QPs created with send_ops_flags (a UD QP's Sends each name their destination
 * with ibv_wr_set_ud_addr, before or after their SGEs). Each ibv_wr_<op> begins one send WQE in place in the SQ
 * ring, the setters (SGE, SGE list, inline data) finish it, and ibv_wr_complete publishes the
 * whole batch at once, as ibv_post_send does a chain. The first error of a batch (SQ full, too
 * many SGEs, inline data too long, an operation not asked for at creation) is kept and
 * returned by ibv_wr_complete, which then posts nothing of the batch; ibv_wr_abort drops it.
 */
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "verbs_priv.h"
#include "wn_queue.h"

static inline struct wn_vqp *
vqp_of(struct ibv_qp_ex *qpx)
{
	return (struct wn_vqp *)qpx;
}

static void
batch_fail(struct wn_vqp *q, int err)
{
	if (q->batch.err == 0)
		q->batch.err = err;
	q->batch.cur = NULL;
}

/* Begin the next WQE of the batch with opcode @p op; NULL after an error. */
static struct wn_queue_swqe *
wqe_begin(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op)
{
	struct wn_vqp *q = vqp_of(qpx);
	struct wn_queue_swqe *w;
	uint32_t flags;

	if (q->batch.space < 0) {
		batch_fail(q, EINVAL); /* no ibv_wr_start */
		return NULL;
	}
	if (q->batch.err != 0)
		return NULL;
	if ((int64_t)q->batch.n == q->batch.space) {
		batch_fail(q, ENOMEM);
		return NULL;
	}
	if (q->ud && op != IBV_WR_SEND && op != IBV_WR_SEND_WITH_IMM) {
		batch_fail(q, EOPNOTSUPP); /* a UD QP sends Sends only */
		return NULL;
	}
	w = wn_client_wq_slot(q->wqp, NULL, false, q->batch.n++);
	memset(w, 0, WN_QUEUE_SWQE_HDR);
	/* no destination until ibv_wr_set_ud_addr: ibv_wr_complete refuses the batch */
	if (q->ud)
		w->u.ud.remote_qpn = UINT32_MAX;
	flags = qpx->wr_flags & (IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |
				 IBV_SEND_INLINE);
	if (q->sq_sig_all)
		flags |= IBV_SEND_SIGNALED;
	w->wr_id = qpx->wr_id;
	w->opcode = (uint8_t)op;
	w->flags = (uint8_t)(flags & ~(uint32_t)IBV_SEND_INLINE); /* set by the inline setters */
	q->batch.cur = w;
	q->batch.last = w;
	return w;
}

static void
qpx_send(struct ibv_qp_ex *qpx)
{
	wqe_begin(qpx, IBV_WR_SEND);
}

static void
qpx_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct wn_queue_swqe *w = wqe_begin(qpx, IBV_WR_SEND_WITH_IMM);

	if (w != NULL)
		w->ex.imm_data = imm;
}

static void
qpx_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct wn_queue_swqe *w = wqe_begin(qpx, IBV_WR_SEND_WITH_INV);

	if (w != NULL)
		w->ex.invalidate_rkey = rkey;
}

static void
rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr)
{
	struct wn_queue_swqe *w = wqe_begin(qpx, op);

	if (w != NULL) {
		w->u.rdma.remote_addr = addr;
		w->u.rdma.rkey = rkey;
	}
}

static void
qpx_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	rdma(qpx, IBV_WR_RDMA_WRITE, rkey, addr);
}

static void
qpx_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, __be32 imm)
{
	rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr);
	if (vqp_of(qpx)->batch.cur != NULL)
		vqp_of(qpx)->batch.cur->ex.imm_data = imm;
}

static void
qpx_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	rdma(qpx, IBV_WR_RDMA_READ, rkey, addr);
}

static void
atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
       uint64_t compare_add, uint64_t swap)
{
	struct wn_queue_swqe *w = wqe_begin(qpx, op);

	if (w != NULL) {
		w->u.atomic.remote_addr = addr;
		w->u.atomic.compare_add = compare_add;
		w->u.atomic.swap = swap;
		w->u.atomic.rkey = rkey;
	}
}

static void
qpx_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap)
{
	atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

static void
qpx_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, uint64_t add)
{
	atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

static void
qpx_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct wn_queue_swqe *w = wqe_begin(qpx, IBV_WR_LOCAL_INV);

	if (w != NULL)
		w->u.local_inv.invalidate_stag = rkey;
	vqp_of(qpx)->batch.cur = NULL; /* takes no SGE */
}

/* Bind a type 2 window (type 1 windows are bound with ibv_bind_mw, as with ibv_post_send). */
static void
qpx_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
	    const struct ibv_mw_bind_info *b)
{
	struct wn_vqp *q = vqp_of(qpx);
	struct wn_queue_swqe *w;

	if (mw == NULL || mw->type != IBV_MW_TYPE_2 || b->mr == NULL ||
	    mw->pd != q->qp.pd) {
		if (q->batch.space >= 0)
			batch_fail(q, EINVAL);
		return;
	}
	w = wqe_begin(qpx, IBV_WR_BIND_MW);
	if (w == NULL)
		return;
	wn_verbs_fill_bind(w, rkey, b);
	mw->rkey = rkey;
	q->batch.cur = NULL;
}

static void
qpx_set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *sg)
{
	struct wn_vqp *q = vqp_of(qpx);
	struct wn_queue_swqe *w = q->batch.cur;

	if (w == NULL) {
		if (q->batch.err == 0)
			batch_fail(q, EINVAL); /* no operation begun to carry the SGEs */
		return;
	}
	if (n > q->wqp->max_send_sge) {
		batch_fail(q, EINVAL);
		return;
	}
	w->num_sge = (uint8_t)n;
	if (n > 0)
		memcpy((uint8_t *)w + WN_QUEUE_SWQE_HDR, sg, sizeof(struct wn_queue_sge) * n);
	q->batch.cur = NULL;
}

static void
qpx_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = {.addr = addr, .length = length, .lkey = lkey};

	qpx_set_sge_list(qpx, 1, &sge);
}

static void
qpx_set_inline_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_data_buf *bufs)
{
	struct wn_vqp *q = vqp_of(qpx);
	struct wn_queue_swqe *w = q->batch.cur;
	uint8_t *dst;
	size_t i, len = 0;

	if (w == NULL || w->opcode == IBV_WR_RDMA_READ ||
	    w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		if (q->batch.err == 0)
			batch_fail(q, EINVAL);
		return;
	}
	dst = (uint8_t *)w + WN_QUEUE_SWQE_HDR;
	for (i = 0; i < n; i++) {
		if (bufs[i].length > q->max_inline - len) {
			batch_fail(q, EINVAL);
			return;
		}
		memcpy(dst + len, bufs[i].addr, bufs[i].length);
		len += bufs[i].length;
	}
	w->inline_len = (uint32_t)len;
	w->flags |= IBV_SEND_INLINE;
	q->batch.cur = NULL;
}

static void
qpx_set_inline(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
	struct ibv_data_buf b = {.addr = addr, .length = length};

	qpx_set_inline_list(qpx, 1, &b);
}

/* The destination of the UD Send begun last (an RC QP has none to name). */
static void
qpx_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct wn_vqp *q = vqp_of(qpx);

	if (!q->ud) {
		batch_fail(q, EOPNOTSUPP);
		return;
	}
	if (q->batch.err != 0)
		return;
	if (q->batch.last == NULL || ah == NULL || ah->context != q->qp.context ||
	    qpn > 0xffffff) {
		batch_fail(q, EINVAL);
		return;
	}
	wn_verbs_fill_ud(q->batch.last, ah, qpn, qkey);
}

/* What this device has no use for: XRC, TSO, atomic write. */
static void
qpx_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t srqn)
{
	(void)srqn;
	batch_fail(vqp_of(qpx), EOPNOTSUPP);
}

static void
qpx_send_tso(struct ibv_qp_ex *qpx, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	(void)hdr;
	(void)hdr_sz;
	(void)mss;
	batch_fail(vqp_of(qpx), EOPNOTSUPP);
}

static void
qpx_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr, const void *val)
{
	(void)rkey;
	(void)addr;
	(void)val;
	batch_fail(vqp_of(qpx), EOPNOTSUPP);
}

static void
qpx_start(struct ibv_qp_ex *qpx)
{
	struct wn_vqp *q = vqp_of(qpx);
	int64_t space = wn_client_wq_begin(q->wqp, NULL, false);

	q->batch.n = 0;
	q->batch.cur = NULL;
	q->batch.last = NULL;
	q->batch.err = wn_verbs_send_state(q); /* a UD QP sends from RTS only: EINVAL */
	q->batch.space = space;
	if (space < 0) {
		q->batch.space = 0; /* the lock is not held: complete must not release it */
		q->batch.err = EIO;
		q->batch.n = UINT32_MAX;
	}
}

static int
batch_end(struct wn_vqp *q, bool post)
{
	int err = q->batch.err;

	/* every UD Send of the batch must have named its destination */
	for (uint32_t i = 0; q->ud && post && err == 0 && q->batch.space >= 0 && i < q->batch.n;
	     i++)
		if (((struct wn_queue_swqe *)wn_client_wq_slot(q->wqp, NULL, false, i))
			    ->u.ud.remote_qpn > 0xffffff)
			err = EINVAL;

	if (q->batch.n == UINT32_MAX) /* begin failed: nothing to release */
		err = err != 0 ? err : EIO;
	else if (q->batch.space >= 0)
		wn_client_wq_end(q->wqp, NULL, false, post && err == 0 ? q->batch.n : 0);
	else
		err = EINVAL;
	q->batch.space = -1;
	q->batch.cur = NULL;
	q->batch.last = NULL;
	q->batch.n = 0;
	q->batch.err = 0;
	return err;
}

static int
qpx_complete(struct ibv_qp_ex *qpx)
{
	return batch_end(vqp_of(qpx), true);
}

static void
qpx_abort(struct ibv_qp_ex *qpx)
{
	(void)batch_end(vqp_of(qpx), false);
}

/*
 * Every builder is there whatever send_ops_flags asked for (as mlx5 does): creation has
 * refused flags for operations this device lacks, which fail their batch with EOPNOTSUPP.
 */
void
wn_verbs_qpx_init(struct wn_vqp *q)
{
	struct ibv_qp_ex *x = &q->qpx;

	q->ex = true;
	q->batch.space = -1;
	x->comp_mask = 0;
	x->wr_send = qpx_send;
	x->wr_send_imm = qpx_send_imm;
	x->wr_send_inv = qpx_send_inv;
	x->wr_rdma_write = qpx_rdma_write;
	x->wr_rdma_write_imm = qpx_rdma_write_imm;
	x->wr_rdma_read = qpx_rdma_read;
	x->wr_atomic_cmp_swp = qpx_cmp_swp;
	x->wr_atomic_fetch_add = qpx_fetch_add;
	x->wr_local_inv = qpx_local_inv;
	x->wr_bind_mw = qpx_bind_mw;
	x->wr_send_tso = qpx_send_tso;
	x->wr_atomic_write = qpx_atomic_write;
	x->wr_set_ud_addr = qpx_set_ud_addr;
	x->wr_set_xrc_srqn = qpx_set_xrc_srqn;
	x->wr_set_inline_data = qpx_set_inline;
	x->wr_set_inline_data_list = qpx_set_inline_list;
	x->wr_set_sge = qpx_set_sge;
	x->wr_set_sge_list = qpx_set_sge_list;
	x->wr_start = qpx_start;
	x->wr_complete = qpx_complete;
	x->wr_abort = qpx_abort;
}
