/* SPDX-License-Identifier: BSD-3-Clause */
/* Validation of WQEs read from client-written rings (see wn_queue.h, "Trust"). */
#include <errno.h>
#include <stdint.h>

#include "wn_queue.h"

/* Flags, SGE count and inline length against the ring's geometry. */
static int
swqe_shape(const struct wn_queue_ring *r, const struct wn_queue_swqe *w)
{
	if (w->flags & ~(WN_QUEUE_SEND_FENCE | WN_QUEUE_SEND_SIGNALED | WN_QUEUE_SEND_SOLICITED |
			 WN_QUEUE_SEND_INLINE))
		return -EINVAL;
	if (w->flags & WN_QUEUE_SEND_INLINE) {
		if (w->num_sge != 0 || w->inline_len > r->max_inline)
			return -EINVAL;
	} else if (w->num_sge > r->max_sge) {
		return -EINVAL;
	}
	return 0;
}

int
wn_queue_swqe_validate(const struct wn_queue_ring *r, const struct wn_queue_swqe *w)
{
	if (swqe_shape(r, w) != 0)
		return -EINVAL;
	switch (w->opcode) {
	case WN_QUEUE_WR_RDMA_WRITE:
	case WN_QUEUE_WR_RDMA_WRITE_WITH_IMM:
	case WN_QUEUE_WR_SEND:
	case WN_QUEUE_WR_SEND_WITH_IMM:
	case WN_QUEUE_WR_SEND_WITH_INV:
		return 0;
	case WN_QUEUE_WR_RDMA_READ:
		/* the sink must be local memory, never inline */
		return (w->flags & WN_QUEUE_SEND_INLINE) ? -EINVAL : 0;
	case WN_QUEUE_WR_ATOMIC_CMP_AND_SWP:
	case WN_QUEUE_WR_ATOMIC_FETCH_AND_ADD:
		/* RFC 7306 §5.2.1: 8-octet aligned target; result lands in one 8-octet SGE */
		if ((w->u.atomic.remote_addr & 7) != 0 || (w->flags & WN_QUEUE_SEND_INLINE) ||
		    w->num_sge != 1)
			return -EINVAL;
		return 0;
	case WN_QUEUE_WR_LOCAL_INV:
	case WN_QUEUE_WR_BIND_MW:
	case WN_QUEUE_WR_FAST_REG:
		return (w->num_sge == 0 && !(w->flags & WN_QUEUE_SEND_INLINE)) ? 0 : -EINVAL;
	default:
		return -EOPNOTSUPP; /* an opcode with no iWARP form */
	}
}

int
wn_queue_swqe_validate_ud(const struct wn_queue_ring *r, const struct wn_queue_swqe *w)
{
	if (swqe_shape(r, w) != 0)
		return -EINVAL;
	if (w->opcode != WN_QUEUE_WR_SEND && w->opcode != WN_QUEUE_WR_SEND_WITH_IMM)
		return -EOPNOTSUPP; /* the UD service carries Sends only */
	return w->u.ud.remote_qpn <= 0xffffffu ? 0 : -EINVAL;
}

int
wn_queue_rwqe_validate(const struct wn_queue_ring *r, const struct wn_queue_rwqe *w)
{
	if (w->num_sge > r->max_sge)
		return -EINVAL;
	return 0;
}
