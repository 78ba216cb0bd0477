/* SPDX-License-Identifier: BSD-3-Clause */
/* Ring sizing for the control thread (see ctl_ring.h). */
#include <stdint.h>

#include <rte_common.h>

#include "ctl_ring.h"
#include "wn_ctl.h"

#define RING_HDR   4096u /* indices, doorbell and arm words live in the first page */
#define ENTRY_SIZE 128u

static uint64_t
page_round(uint64_t v)
{
	return RTE_ALIGN_CEIL(v, (uint64_t)WN_CTL_PAGE_SIZE);
}

uint32_t
wn_ctl_ring_cq_depth(uint32_t cqe)
{
	return rte_align32pow2(RTE_MAX(cqe, 16u));
}

uint32_t
wn_ctl_ring_wq_depth(uint32_t wr)
{
	return rte_align32pow2(RTE_MAX(wr, 16u));
}

uint64_t
wn_ctl_ring_cq_size(uint32_t depth)
{
	return page_round(RING_HDR + (uint64_t)depth * ENTRY_SIZE);
}

uint64_t
wn_ctl_ring_srq_size(uint32_t depth, uint32_t sge)
{
	return page_round(RING_HDR + (uint64_t)depth * (ENTRY_SIZE + 16u * sge));
}

uint64_t
wn_ctl_ring_qp_size(uint32_t sqd, uint32_t ssge, uint32_t rqd, uint32_t rsge, uint32_t inline_len)
{
	uint64_t sq = (uint64_t)sqd * (ENTRY_SIZE + RTE_MAX(16u * ssge, inline_len));
	uint64_t rq = (uint64_t)rqd * (ENTRY_SIZE + 16u * rsge);

	return page_round(RING_HDR) + page_round(sq) + page_round(rq);
}

void
wn_ctl_ring_cq_init(void *ring, uint32_t depth)
{
	RTE_SET_USED(ring);
	RTE_SET_USED(depth);
}

void
wn_ctl_ring_srq_init(void *ring, uint32_t depth, uint32_t sge)
{
	RTE_SET_USED(ring);
	RTE_SET_USED(depth);
	RTE_SET_USED(sge);
}

void
wn_ctl_ring_qp_init(void *ring, uint32_t sqd, uint32_t ssge, uint32_t rqd, uint32_t rsge,
		    uint32_t inline_len)
{
	RTE_SET_USED(ring);
	RTE_SET_USED(sqd);
	RTE_SET_USED(ssge);
	RTE_SET_USED(rqd);
	RTE_SET_USED(rsge);
	RTE_SET_USED(inline_len);
}
