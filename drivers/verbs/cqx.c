/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The extended CQ (struct ibv_cq_ex): ibv_start_poll / ibv_next_poll / ibv_end_poll over the
 * same CQ ring as ibv_poll_cq, one completion at a time, with the ibv_wc_read_* accessors
 * reading the current one. What an iWARP completion has: opcode, status, byte count,
 * immediate data or the invalidated STag, QP number; the InfiniBand fields (SLID, SL, path
 * bits, source QP of a UD datagram) read 0. Completion timestamps are not offered: the CQE
 * carries none, so a CQ asking for them is refused (EOPNOTSUPP) and ibv_query_device_ex
 * reports no completion clock.
 */
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "verbs_priv.h"
#include "wn_queue.h"

static inline struct wn_vcq *
vcq_of(struct ibv_cq_ex *cqx)
{
	return (struct wn_vcq *)cqx;
}

static int
cqx_next_poll(struct ibv_cq_ex *cqx)
{
	struct wn_vcq *c = vcq_of(cqx);
	int got = wn_client_poll_cq(c->wcq, &c->cur, 1);

	if (got < 0)
		return EIO; /* the ring is corrupt or gone */
	if (got == 0)
		return ENOENT;
	cqx->status = (enum ibv_wc_status)c->cur.status;
	cqx->wr_id = c->cur.wr_id;
	c->polled++;
	return 0;
}

static int
cqx_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	int ret;

	if (attr->comp_mask != 0)
		return EINVAL;
	vcq_of(cqx)->polled = 0;
	ret = cqx_next_poll(cqx);
	if (ret == ENOENT) /* a program spinning on an empty CQ lets a dataplane lcore run */
		wn_client_poll_backoff(&vcq_of(cqx)->bo, 0);
	return ret;
}

static void
cqx_end_poll(struct ibv_cq_ex *cqx)
{
	struct wn_vcq *c = vcq_of(cqx);

	wn_client_poll_backoff(&c->bo, (int)c->polled);
}

static enum ibv_wc_opcode
cqx_read_opcode(struct ibv_cq_ex *cqx)
{
	return (enum ibv_wc_opcode)vcq_of(cqx)->cur.opcode;
}

static uint32_t
cqx_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur.vendor_err;
}

static uint32_t
cqx_read_byte_len(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur.byte_len;
}

/*
 * The immediate data (network order), or the invalidated STag, which
 * ibv_wc_read_invalidated_rkey reads here in host order (as ibv_wc's union).
 */
static __be32
cqx_read_imm_data(struct ibv_cq_ex *cqx)
{
	const struct wn_queue_cqe *e = &vcq_of(cqx)->cur;

	if (e->flags & WN_QUEUE_WC_F_WITH_INV)
		return (__be32)e->invalidated_rkey;
	return e->imm_data;
}

static uint32_t
cqx_read_qp_num(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur.qp_num;
}

static unsigned int
cqx_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return vcq_of(cqx)->cur.flags & (IBV_WC_GRH | IBV_WC_WITH_IMM | IBV_WC_WITH_INV);
}

/* A UD receive's sender QP (0 for other completions). */
static uint32_t
cqx_read_src_qp(struct ibv_cq_ex *cqx)
{
	const struct wn_queue_cqe *e = &vcq_of(cqx)->cur;

	return (e->flags & WN_QUEUE_WC_F_GRH) ? e->src_qp : 0;
}

/* InfiniBand addressing (LIDs, SL): none over IP. */
static uint32_t
cqx_read_zero32(struct ibv_cq_ex *cqx)
{
	(void)cqx;
	return 0;
}

static uint8_t
cqx_read_zero8(struct ibv_cq_ex *cqx)
{
	(void)cqx;
	return 0;
}

static uint16_t
cqx_read_zero16(struct ibv_cq_ex *cqx)
{
	(void)cqx;
	return 0;
}

static uint64_t
cqx_read_zero64(struct ibv_cq_ex *cqx)
{
	(void)cqx;
	return 0;
}

static void
cqx_read_tm_info(struct ibv_cq_ex *cqx, struct ibv_wc_tm_info *tm)
{
	(void)cqx;
	memset(tm, 0, sizeof(*tm));
}

int
wn_verbs_cqx_check(const struct ibv_cq_init_attr_ex *a)
{
	const uint64_t wc = IBV_WC_STANDARD_FLAGS;

	if ((a->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD)) !=
		    0 ||
	    (a->wc_flags & ~wc) != 0)
		return EOPNOTSUPP; /* timestamps, VLAN, flow tag, tag matching */
	/* a CQ may name a parent domain (its allocators, never called: verbs.c) */
	if ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (a->parent_domain == NULL || ((struct wn_vpd *)a->parent_domain)->base == NULL))
		return EINVAL;
	if ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (a->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED) != 0)
		return EOPNOTSUPP; /* IGNORE_OVERRUN: a full CQ is an error here (CQ_ERR) */
	return 0;
}

void
wn_verbs_cqx_init(struct wn_vcq *c, uint64_t wc_flags)
{
	struct ibv_cq_ex *x = &c->cqx;

	(void)wc_flags; /* every accessor reads the CQE as it is; asking for fewer costs nothing */
	c->ex = true;
	x->comp_mask = 0;
	x->start_poll = cqx_start_poll;
	x->next_poll = cqx_next_poll;
	x->end_poll = cqx_end_poll;
	x->read_opcode = cqx_read_opcode;
	x->read_vendor_err = cqx_read_vendor_err;
	x->read_byte_len = cqx_read_byte_len;
	x->read_imm_data = cqx_read_imm_data;
	x->read_qp_num = cqx_read_qp_num;
	x->read_src_qp = cqx_read_src_qp;
	x->read_wc_flags = cqx_read_wc_flags;
	x->read_slid = cqx_read_zero32;
	x->read_sl = cqx_read_zero8;
	x->read_dlid_path_bits = cqx_read_zero8;
	x->read_completion_ts = cqx_read_zero64;
	x->read_cvlan = cqx_read_zero16;
	x->read_flow_tag = cqx_read_zero32;
	x->read_tm_info = cqx_read_tm_info;
	x->read_completion_wallclock_ns = cqx_read_zero64;
}
