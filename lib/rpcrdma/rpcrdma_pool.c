/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Buddy allocator over one registered region; see rpcrdma_pool.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma_pool.h"

#define ST_USED 0x80

static void
list_push(struct rpcrdma_pool *p, uint32_t order, int32_t b)
{
	p->prev[b] = -1;
	p->next[b] = p->head[order];
	if (p->head[order] >= 0)
		p->prev[p->head[order]] = b;
	p->head[order] = b;
	p->state[b] = (uint8_t)(1 + order);
}

static void
list_del(struct rpcrdma_pool *p, uint32_t order, int32_t b)
{
	if (p->prev[b] >= 0)
		p->next[p->prev[b]] = p->next[b];
	else
		p->head[order] = p->next[b];
	if (p->next[b] >= 0)
		p->prev[p->next[b]] = p->prev[b];
	p->state[b] = 0;
}

int
wn_rpcrdma_pool_init(struct rpcrdma_pool *p, void *base, size_t size, unsigned int shift)
{
	uint32_t b = 0;

	memset(p, 0, sizeof(*p));
	if (base == NULL || shift < 6 || shift > 20 || ((uintptr_t)base & ((1u << shift) - 1)) ||
	    (size >> shift) == 0 || (size >> shift) > INT32_MAX)
		return -EINVAL;
	p->base = base;
	p->shift = shift;
	p->nblocks = (uint32_t)(size >> shift);
	p->next = calloc(p->nblocks, sizeof(*p->next));
	p->prev = calloc(p->nblocks, sizeof(*p->prev));
	p->state = calloc(p->nblocks, 1);
	if (p->next == NULL || p->prev == NULL || p->state == NULL) {
		wn_rpcrdma_pool_fini(p);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < RPCRDMA_POOL_ORDERS; i++)
		p->head[i] = -1;
	/* the largest naturally aligned blocks that fit, left to right */
	while (b < p->nblocks) {
		uint32_t order = 0;

		while (order + 1 < RPCRDMA_POOL_ORDERS - 1 && (b & ((2u << order) - 1)) == 0 &&
		       b + (2u << order) <= p->nblocks)
			order++;
		list_push(p, order, (int32_t)b);
		b += 1u << order;
	}
	return 0;
}

void
wn_rpcrdma_pool_fini(struct rpcrdma_pool *p)
{
	free(p->next);
	free(p->prev);
	free(p->state);
	p->next = p->prev = NULL;
	p->state = NULL;
	p->nblocks = 0;
}

void *
wn_rpcrdma_pool_alloc(struct rpcrdma_pool *p, size_t len)
{
	uint32_t want = 0, order;
	int32_t b;

	if (len == 0)
		len = 1;
	while (want < RPCRDMA_POOL_ORDERS - 1 && ((size_t)1 << (want + p->shift)) < len)
		want++;
	if (((size_t)1 << (want + p->shift)) < len)
		return NULL;
	for (order = want; order < RPCRDMA_POOL_ORDERS && p->head[order] < 0; order++)
		;
	if (order == RPCRDMA_POOL_ORDERS)
		return NULL;
	b = p->head[order];
	list_del(p, order, b);
	while (order > want) { /* split: the upper half stays free */
		order--;
		list_push(p, order, b + (int32_t)(1u << order));
	}
	p->state[b] = (uint8_t)(ST_USED | want);
	p->used += (size_t)1 << (want + p->shift);
	return p->base + ((size_t)b << p->shift);
}

void
wn_rpcrdma_pool_free(struct rpcrdma_pool *p, void *ptr)
{
	uint32_t order;
	int32_t b;

	if (ptr == NULL)
		return;
	b = (int32_t)(((uint8_t *)ptr - p->base) >> p->shift);
	if ((uint8_t *)ptr < p->base || (uint32_t)b >= p->nblocks || !(p->state[b] & ST_USED))
		abort(); /* not ours, or freed twice: memory the peer may reach is in question */
	order = p->state[b] & ~ST_USED;
	p->state[b] = 0;
	p->used -= (size_t)1 << (order + p->shift);
	while (order + 1 < RPCRDMA_POOL_ORDERS) {
		int32_t buddy = b ^ (int32_t)(1u << order);

		if ((uint32_t)buddy + (1u << order) > p->nblocks || p->state[buddy] != 1 + order)
			break;
		list_del(p, order, buddy);
		b = b < buddy ? b : buddy;
		order++;
	}
	list_push(p, order, b);
}

int
wn_rpcrdma_pool_owns(const struct rpcrdma_pool *p, const void *ptr, size_t len)
{
	const uint8_t *q = ptr;
	size_t size = (size_t)p->nblocks << p->shift;

	return q >= p->base && len <= size && (size_t)(q - p->base) <= size - len;
}
