/* SPDX-License-Identifier: BSD-3-Clause */
/* Ring sizing and initialisation for the control thread, in lib/queue's ABI (wn_queue.h). */
#include <stdint.h>

#include <rte_bitops.h>
#include <rte_common.h>

#include "ring.h"
#include "wn_ctl.h"
#include "wn_queue.h"

static uint64_t
page_round(uint64_t v)
{
	return RTE_ALIGN_CEIL(v, (uint64_t)WN_CTL_PAGE_SIZE);
}

uint32_t
wn_server_ring_cq_depth(uint32_t cqe)
{
	return rte_align32pow2(RTE_MAX(cqe, 16u));
}

uint32_t
wn_server_ring_wq_depth(uint32_t wr)
{
	return rte_align32pow2(RTE_MAX(wr, 16u));
}

uint64_t
wn_server_ring_cq_size(uint32_t depth)
{
	return page_round(wn_queue_ring_size(WN_QUEUE_KIND_CQ, depth, 0, 0));
}

uint64_t
wn_server_ring_srq_size(uint32_t depth, uint32_t sge)
{
	return page_round(wn_queue_ring_size(WN_QUEUE_KIND_SRQ, depth, sge, 0));
}

uint64_t
wn_server_ring_qp_size(uint32_t sqd, uint32_t ssge, uint32_t rqd, uint32_t rsge,
		       uint32_t inline_len)
{
	return wn_queue_qp_size(sqd, ssge, inline_len, rqd, rsge);
}

void
wn_server_ring_cq_init(void *ring, uint32_t depth)
{
	wn_queue_ring_init(ring, WN_QUEUE_KIND_CQ, depth, 0, 0);
}

void
wn_server_ring_srq_init(void *ring, uint32_t depth, uint32_t sge)
{
	wn_queue_ring_init(ring, WN_QUEUE_KIND_SRQ, depth, sge, 0);
}

void
wn_server_ring_qp_init(void *ring, uint32_t sqd, uint32_t ssge, uint32_t rqd, uint32_t rsge,
		    uint32_t inline_len)
{
	wn_queue_qp_init(ring, sqd, ssge, inline_len, rqd, rsge);
}
