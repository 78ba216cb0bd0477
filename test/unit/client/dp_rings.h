/* SPDX-License-Identifier: BSD-3-Clause */
/* An rte_ring in malloc'd memory (no EAL), for tests that play lib/server's dataplane. */
#ifndef TEST_DP_RINGS_H
#define TEST_DP_RINGS_H

#include <stdlib.h>

#include <rte_common.h>
#include <rte_ring.h>

/* A single-producer single-consumer ring of 1024 entries (free() it); NULL on failure. */
static inline struct rte_ring *
test_ring_new(const char *name)
{
	ssize_t sz = rte_ring_get_memsize(1024);
	struct rte_ring *r = aligned_alloc(RTE_CACHE_LINE_SIZE,
					   RTE_ALIGN_CEIL((size_t)sz, RTE_CACHE_LINE_SIZE));

	if (r == NULL || rte_ring_init(r, name, 1024, RING_F_SP_ENQ | RING_F_SC_DEQ) != 0) {
		free(r);
		return NULL;
	}
	return r;
}

#endif /* TEST_DP_RINGS_H */
