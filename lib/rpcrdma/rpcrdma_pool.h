/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A buddy allocator over one registered region (private to lib/rpcrdma). Receive and send
 * buffers, bounce buffers, read-chunk landing buffers and long messages come from it, so
 * everything the transport posts lies in one memory registration. Its bookkeeping lives
 * outside the region (the peer may read or write a block while it is exposed). Not
 * thread-safe: one transport thread owns it.
 */
#ifndef RPCRDMA_POOL_H
#define RPCRDMA_POOL_H

#include <stddef.h>
#include <stdint.h>

#define RPCRDMA_POOL_ORDERS 32

struct rpcrdma_pool {
	uint8_t *base;
	uint32_t nblocks; /**< blocks of (1 << shift) octets */
	uint32_t shift;
	int32_t *next; /**< free-list links, per block */
	int32_t *prev;
	uint8_t *state; /**< per block: 0 inside a block; 1 + order: free head; 0x80 | order: used */
	int32_t head[RPCRDMA_POOL_ORDERS];
	size_t used; /**< octets handed out (rounded to blocks) */
};

/**
 * Manage [@p base, @p base + @p size) in blocks of 1 << @p shift octets (@p base aligned to
 * that). @return 0, -EINVAL (bad geometry), -ENOMEM.
 */
int wn_rpcrdma_pool_init(struct rpcrdma_pool *p, void *base, size_t size, unsigned int shift);

/** Release the bookkeeping (not the region). */
void wn_rpcrdma_pool_fini(struct rpcrdma_pool *p);

/** @return a block of at least @p len octets (aligned to its size), or NULL. */
void *wn_rpcrdma_pool_alloc(struct rpcrdma_pool *p, size_t len);

/** Give back a block from wn_rpcrdma_pool_alloc() (NULL: nothing). */
void wn_rpcrdma_pool_free(struct rpcrdma_pool *p, void *ptr);

/** @return true when @p ptr .. @p ptr + @p len lies in the pool's region. */
int wn_rpcrdma_pool_owns(const struct rpcrdma_pool *p, const void *ptr, size_t len);

#endif /* RPCRDMA_POOL_H */
