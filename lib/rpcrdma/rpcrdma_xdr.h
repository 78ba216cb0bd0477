/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtirpc XDR streams for RPC-over-RDMA (private to lib/rpcrdma; the tests and fuzzers
 * include it). Plain C over libtirpc, no verbs.
 *
 * Encoding (RFC 8166 §3.4): an rpcgen xdr routine writes the Payload stream into a buffer.
 * With reduction on, every opaque/string body of at least ddp_min octets (one
 * XDR_PUTBYTES call) is not copied: it is recorded as a reduced item (its unreduced XDR
 * position, pointer and length) and its XDR roundup padding is dropped (§3.4.4.4), so the
 * buffer holds the reduced Payload stream. Counting mode writes nothing and yields the
 * unreduced and reduced sizes, for choosing between a Short, a Chunked and a Long message.
 *
 * Decoding: the stream an rpcgen routine reads is the reduced Payload stream with the
 * chunks put back: read chunks at their Position (§3.4.5), each followed by the roundup
 * padding it lacks (as zeros), and write chunks (which carry no position, §3.4.6) at the
 * first XDR_GETBYTES whose length equals the chunk's returned length. A GETBYTES into the
 * very memory a chunk was placed in copies nothing (direct placement). RDMA_MSGP padding
 * (RFC 5666 §3.9) is skipped before an opaque body of at least rdma_thresh octets.
 */
#ifndef RPCRDMA_XDR_H
#define RPCRDMA_XDR_H

#include <stdbool.h>
#include <stdint.h>

#include <rpc/rpc.h>

/** A reduced data item (encoding). */
struct rpcrdma_xitem {
	uint32_t pos; /**< unreduced XDR position of the item's first octet */
	uint32_t len; /**< octets of the item (without roundup) */
	const uint8_t *ptr;
};

/** Encoder state; the XDR handle's x_private points here. */
struct rpcrdma_xenc {
	uint8_t *buf;	 /**< reduced Payload stream output; NULL: count only */
	uint32_t cap;	 /**< octets available at @c buf */
	uint32_t off;	 /**< reduced octets so far */
	uint32_t upos;	 /**< unreduced octets so far */
	uint32_t ddp_min;	/**< PUTBYTES of at least this many octets are reduced; 0: none */
	uint32_t max_items;	/**< capacity of @c items (further items stay inline) */
	uint32_t nitems;
	struct rpcrdma_xitem *items;
	uint32_t pad_skip; /**< roundup octets of the last reduced item still to drop */
	bool overflow;	   /**< a write did not fit: the output is unusable */
};

/**
 * Make @p x an encoding stream over @p e. @p buf may be NULL (counting: nothing is written,
 * @c off and @c upos still advance and @c overflow stays false).
 */
void wn_rpcrdma_xenc_init(XDR *x, struct rpcrdma_xenc *e, uint8_t *buf, uint32_t cap,
		       uint32_t ddp_min, struct rpcrdma_xitem *items, uint32_t max_items);

/** A chunk the decoder puts back into the Payload stream. */
struct rpcrdma_xins {
	uint32_t pos; /**< read chunk: unreduced XDR position (multiple of 4) */
	uint32_t len; /**< octets of chunk data */
	const uint8_t *ptr;
};

/** Decoder state; the XDR handle's x_private points here. */
struct rpcrdma_xdec {
	const uint8_t *buf; /**< reduced Payload stream */
	uint32_t len;
	uint32_t off;
	uint32_t upos; /**< unreduced position */
	/* read chunks, ascending positions, each consumed once */
	const struct rpcrdma_xins *rch;
	uint32_t nrch;
	uint32_t rnext;
	/* write chunks (returned lengths), matched by GETBYTES length in list order */
	const struct rpcrdma_xins *wch;
	uint32_t nwch;
	uint32_t wnext;
	/* the chunk being read */
	const uint8_t *cptr;
	uint32_t clen;
	uint32_t coff;
	uint32_t cpad; /**< zero octets after the chunk data (its missing roundup) */
	/* RDMA_MSGP (RFC 5666 §3.9): 0 when not padded */
	uint32_t align;
	uint32_t thresh;
	uint32_t base; /**< octets of the receive buffer before @c buf (alignment origin) */
	uint32_t copied; /**< octets copied out of chunks (the rest went by direct placement) */
};

/**
 * Make @p x a decoding stream over the reduced Payload stream @p buf/@p len with read
 * chunks @p rch (ascending @c pos) and write chunks @p wch. The arrays must outlive @p x.
 */
void wn_rpcrdma_xdec_init(XDR *x, struct rpcrdma_xdec *d, const uint8_t *buf, uint32_t len,
		       const struct rpcrdma_xins *rch, uint32_t nrch,
		       const struct rpcrdma_xins *wch, uint32_t nwch);

/** Set RDMA_MSGP padding rules on a decoder (@p base: octets of header before the stream). */
void wn_rpcrdma_xdec_msgp(struct rpcrdma_xdec *d, uint32_t align, uint32_t thresh, uint32_t base);

/**
 * @return true when a decoder consumed every read chunk and every non-empty write chunk
 *   and left no chunk half read (otherwise the decoded message did not describe the chunks
 *   it came with: GARBAGE_ARGS / RPC_CANTDECODERES). Octets left in the reduced stream are
 *   allowed, as on other RPC transports.
 */
bool wn_rpcrdma_xdec_done(const struct rpcrdma_xdec *d);

#endif /* RPCRDMA_XDR_H */
