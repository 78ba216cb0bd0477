/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The checks a receiver makes on a decoded RPC-over-RDMA header before it touches memory
 * for it (private to lib/rpcrdma; pure C, fuzzed): grouping the read list into chunks, the
 * server's plan for a call, the client's check of a reply against what its call offered.
 */
#ifndef RPCRDMA_PROTO_H
#define RPCRDMA_PROTO_H

#include <stdbool.h>
#include <stdint.h>

#include "wn_rpcrdma.h"

/** A read chunk: the read segments sharing one position (RFC 8166 §3.4.5). */
struct rpcrdma_rchunk {
	uint32_t pos;
	uint32_t first; /**< index of its first segment in the header's read list */
	uint32_t nsegs;
	uint32_t len; /**< octets in all its segments */
};

/**
 * Group @p h's read list into chunks in @p out (at most @p cap). Rules: positions are
 * multiples of 4; segments of one chunk are adjacent in the list; chunks come in ascending
 * position order (a position-zero chunk first); at most @p max octets in all, and each
 * chunk at most @p max. @return chunks, or -1 when a rule is broken.
 */
int wn_rpcrdma_proto_read_chunks(const struct wn_rpcrdma_hdr *h, uint32_t max,
			      struct rpcrdma_rchunk *out, uint32_t cap);

/** What a server does with one call (wn_rpcrdma_proto_call_plan()). */
struct rpcrdma_call_plan {
	uint32_t nrch; /**< read chunks (position zero first, if any) */
	struct rpcrdma_rchunk rch[WN_RPCRDMA_MAX_READ_SEGS];
	bool p0;       /**< rch[0] is a position-zero chunk holding the Payload stream */
	uint32_t read_bytes;
	uint32_t wcap[WN_RPCRDMA_MAX_WRITE_CHUNKS]; /**< capacity of each write chunk */
	uint32_t reply_cap;			    /**< capacity of the reply chunk (0: none) */
	uint32_t nwr; /**< send work requests the call may need at most (reads, writes, Send) */
	uint32_t inv_rkey; /**< the one handle every chunk uses (for Send With Invalidate), or 0 */
};

/** wn_rpcrdma_proto_call_plan() outcomes besides 0. */
enum {
	RPCRDMA_PLAN_DISCARD = -1, /**< silently discard (RFC 8166 §4.5: shorter than 28 octets) */
};

/**
 * Check a decoded call header @p h of a message of @p len octets and plan it. Read chunks
 * may hold @p max octets in all.
 * @return 0 and @p plan filled, WN_RPCRDMA_ERR_CHUNK (answer RDMA_ERROR: RDMA_NOMSG
 *   without a position-zero chunk, a broken read list, an empty write chunk segment list
 *   over its limit, too much data), or RPCRDMA_PLAN_DISCARD.
 */
int wn_rpcrdma_proto_call_plan(const struct wn_rpcrdma_hdr *h, uint32_t len, uint32_t max,
			    struct rpcrdma_call_plan *plan);

/** What a client call offered (one segment per chunk). */
struct rpcrdma_offer {
	bool write;		   /**< one write chunk offered */
	struct wn_rpcrdma_seg wseg; /**< its segment */
	bool reply;		   /**< a reply chunk offered */
	struct wn_rpcrdma_seg rseg;
};

/** How a reply carries its Payload stream (wn_rpcrdma_proto_reply_check()). */
struct rpcrdma_reply_plan {
	uint32_t placed;    /**< octets the server wrote into the write chunk */
	uint32_t reply_len; /**< RDMA_NOMSG: octets written into the reply chunk; 0 otherwise */
	uint32_t nrch;	    /**< read chunks to pull (RFC 5666 long reply, then RDMA_DONE) */
	struct rpcrdma_rchunk rch[WN_RPCRDMA_MAX_READ_SEGS];
	bool p0;	    /**< rch[0] is a position-zero chunk holding the Payload stream */
	uint32_t read_bytes;
};

/**
 * Check reply header @p h (RDMA_MSG, RDMA_NOMSG or RDMA_MSGP) against what the call offered:
 * the write list must be the one offered (same count, handles and offsets, lengths not
 * larger), likewise the reply chunk; RDMA_NOMSG needs the reply chunk used or a
 * position-zero read chunk; read chunks (RFC 5666 long replies) at most @p max octets.
 * @return 0 with @p plan filled, or -1: discard the reply (RFC 8166 §4.5).
 */
int wn_rpcrdma_proto_reply_check(const struct wn_rpcrdma_hdr *h, const struct rpcrdma_offer *o,
			      uint32_t max, struct rpcrdma_reply_plan *plan);

#endif /* RPCRDMA_PROTO_H */
