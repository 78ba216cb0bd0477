/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * RPC-over-RDMA version 1 transport header (RFC 5666 §4; draft-ietf-nfsv4-
 * rpcrdma-08 §4, RFC 5666 §4): fixed header, read list,
 * write list, reply chunk, RDMA_MSGP padding fields and RDMA_ERROR, with an
 * encoder and a strict decoder.
 *
 * Every item is XDR: 4-octet big-endian words; an optional item is a
 * discriminator word (1 present, 0 absent) before it. The decoder bounds
 * every list and counted array (WN_RPCRDMA_MAX_*), accepts only 0/1
 * discriminators and never reads beyond its input.
 *
 * Thread safety: all functions are pure; any thread may call them.
 */
#ifndef WN_RPCRDMA_H
#define WN_RPCRDMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The only version defined (RFC 5666 §4.2). */
#define WN_RPCRDMA_VERSION 1

/** Message types, rdma_proc (RFC 5666 §4.3). */
enum wn_rpcrdma_proc {
	WN_RPCRDMA_MSG = 0,   /**< RPC message follows the chunk lists */
	WN_RPCRDMA_NOMSG = 1, /**< RPC message moved by chunks only */
	WN_RPCRDMA_MSGP = 2,  /**< padded: align, threshold, chunk lists, RPC message */
	WN_RPCRDMA_DONE = 3,  /**< client: reply chunk consumed */
	WN_RPCRDMA_ERROR = 4, /**< transport error */
};

/** RDMA_ERROR codes (RFC 5666 §4.3). */
enum wn_rpcrdma_errcode {
	WN_RPCRDMA_ERR_VERS = 1,  /**< version mismatch: low/high follow */
	WN_RPCRDMA_ERR_CHUNK = 2, /**< invalid chunk format */
};

/** Decoder limits (a receiver sizes its buffers with these). */
#define WN_RPCRDMA_MAX_READ_SEGS    16 /**< read list entries */
#define WN_RPCRDMA_MAX_WRITE_CHUNKS 8  /**< write list entries */
#define WN_RPCRDMA_MAX_CHUNK_SEGS   16 /**< segments of one write/reply chunk */
/** Words of the draft/RFC 5666 default error arm (rdma_extra). */
#define WN_RPCRDMA_ERR_EXTRA_WORDS 8

/** Octets of the fixed header (XID, version, credits, type). */
#define WN_RPCRDMA_FIXED_LEN 16
/** Octets of an RDMA_MSG header without chunks (three zero words). */
#define WN_RPCRDMA_MIN_MSG_LEN 28

/** RDMA segment: handle (STag), length, offset (RFC 5666 §3.4). */
struct wn_rpcrdma_seg {
	uint32_t handle;
	uint32_t length;
	uint64_t offset;
};

/** Read list entry: XDR position and segment. */
struct wn_rpcrdma_read_seg {
	uint32_t position;
	struct wn_rpcrdma_seg seg;
};

/** Write chunk (also the reply chunk): a counted array of segments. */
struct wn_rpcrdma_chunk {
	uint32_t nsegs;
	struct wn_rpcrdma_seg segs[WN_RPCRDMA_MAX_CHUNK_SEGS];
};

/** A decoded (or to-be-encoded) transport header. */
struct wn_rpcrdma_hdr {
	uint32_t xid;
	uint32_t vers;
	uint32_t credits;
	uint32_t proc; /**< enum wn_rpcrdma_proc */
	/* RDMA_MSGP */
	uint32_t align;
	uint32_t thresh;
	/* RDMA_MSG, RDMA_NOMSG, RDMA_MSGP */
	uint32_t nreads;
	struct wn_rpcrdma_read_seg reads[WN_RPCRDMA_MAX_READ_SEGS];
	uint32_t nwrites;
	struct wn_rpcrdma_chunk writes[WN_RPCRDMA_MAX_WRITE_CHUNKS];
	bool has_reply;
	struct wn_rpcrdma_chunk reply;
	/* RDMA_ERROR */
	uint32_t err;	    /**< enum wn_rpcrdma_errcode, or another code (extra words) */
	uint32_t vers_low;  /**< ERR_VERS */
	uint32_t vers_high; /**< ERR_VERS */
	uint32_t extra[WN_RPCRDMA_ERR_EXTRA_WORDS]; /**< other codes (RFC 5666 default arm) */
	/** decode: octets of the transport header; the RPC message follows (MSG/MSGP) */
	uint32_t hdr_len;
};

/** Outcome of wn_rpcrdma_decode(). */
enum wn_rpcrdma_status {
	WN_RPCRDMA_OK = 0,
	WN_RPCRDMA_SHORT,	/**< input ends inside the header */
	WN_RPCRDMA_BAD_VERS,	/**< version not 1: answer ERR_VERS (RFC 5666 §4.2) */
	WN_RPCRDMA_BAD_PROC,	/**< message type above RDMA_ERROR */
	WN_RPCRDMA_BAD_DISCRIM, /**< optional-data discriminator not 0 or 1 */
	WN_RPCRDMA_TOO_MANY,	/**< a list or array above the WN_RPCRDMA_MAX_* limits */
	WN_RPCRDMA_TRAILING,	/**< octets after a NOMSG/DONE/ERROR header */
	WN_RPCRDMA_STATUS_COUNT,
};

/** @return a constant description of @p st. Any thread. */
const char *wn_rpcrdma_status_str(enum wn_rpcrdma_status st);

/**
 * @return the RDMA_ERROR code a receiver answers a request that failed with
 *   @p st: ERR_VERS for WN_RPCRDMA_BAD_VERS, ERR_CHUNK for other failures
 *   (RFC 5666 §4.2), 0 for WN_RPCRDMA_OK. Any thread.
 */
uint32_t wn_rpcrdma_status_errcode(enum wn_rpcrdma_status st);

/**
 * Strict decode of the transport header at the start of @p buf.
 *
 * @param buf received Send payload (may be NULL when @p len is 0)
 * @param len its length
 * @param h filled as far as decoding got (xid/vers/credits/proc once 16
 *   octets are there, so that an error reply can be addressed)
 * @return WN_RPCRDMA_OK or the first broken rule. On OK @p h->hdr_len is the
 *   header length; for RDMA_MSG/RDMA_MSGP the RPC message is the rest.
 * Thread safety: pure, any thread.
 */
enum wn_rpcrdma_status wn_rpcrdma_decode(const uint8_t *buf, size_t len, struct wn_rpcrdma_hdr *h);

/**
 * Encode @p h (version as given in @p h->vers).
 * @return octets written, -EINVAL (NULL, unknown @p h->proc, counts above
 *   the limits), -ENOSPC (@p cap too small).
 * Thread safety: pure, any thread.
 */
int wn_rpcrdma_encode(const struct wn_rpcrdma_hdr *h, uint8_t *out, size_t cap);

/**
 * Encode an RDMA_ERROR answering XID @p xid: ERR_VERS carries the supported
 * range 1..1, ERR_CHUNK nothing (RFC 5666 §4.2).
 * @return octets written (28 or 20), -EINVAL (@p err not 1/2), -ENOSPC.
 */
int wn_rpcrdma_error_build(uint8_t *out, size_t cap, uint32_t xid, uint32_t credits, uint32_t err);

/**
 * Encode an RDMA_ERROR answering XID @p xid with version @p vers in its rdma_vers field
 * (RFC 8166 §4.5: the version of the failing message); otherwise as wn_rpcrdma_error_build().
 * @return octets written (28 or 20), -EINVAL (@p err not 1/2), -ENOSPC.
 */
int wn_rpcrdma_error_build_vers(uint8_t *out, size_t cap, uint32_t xid, uint32_t vers,
				uint32_t credits, uint32_t err);

/*
 * RPC-over-RDMA version 1 connection parameters (RFC 8797): connection private data that
 * the client sends with its connect request and the server with its accept, so that both
 * know each other's inline thresholds (in place of the RFC 5666 default of 1024 octets) and
 * whether the client accepts Send With Invalidate. Linux's xprtrdma and svcrdma send it.
 */

/** pd_magic (RFC 8797 §4). */
#define WN_RPCRDMA_CP_MAGIC 0xf6ab0e18u
/** The only pd_version defined. */
#define WN_RPCRDMA_CP_VERSION 1
/** pd_flags bit 0: the sender accepts Send With Invalidate (remote invalidation). */
#define WN_RPCRDMA_CP_F_REMOTE_INV 0x01
/** Octets of the private data message. */
#define WN_RPCRDMA_CP_LEN 8
/** The inline threshold when the peer sent no (usable) private data (RFC 8166 §3.3.3). */
#define WN_RPCRDMA_INLINE_DEFAULT 1024
/** Smallest and largest inline sizes the private data can express. */
#define WN_RPCRDMA_CP_SIZE_MIN 1024
#define WN_RPCRDMA_CP_SIZE_MAX (256 * 1024)

/** Decoded connection parameters. */
struct wn_rpcrdma_cp {
	uint8_t version;
	uint8_t flags;	      /**< WN_RPCRDMA_CP_F_* */
	uint32_t inline_send; /**< octets the sender of the private data may send in one Send */
	uint32_t inline_recv; /**< octets it can receive in one Receive */
};

/**
 * Encode @p cp into @p out (8 octets). Sizes are rounded down to a multiple of 1024 and
 * clamped to WN_RPCRDMA_CP_SIZE_MIN..MAX (the wire carries size / 1024 - 1 in one octet).
 * @return WN_RPCRDMA_CP_LEN, or -EINVAL (NULL).
 * Thread safety: pure, any thread.
 */
int wn_rpcrdma_cp_encode(const struct wn_rpcrdma_cp *cp, uint8_t *out);

/**
 * Decode connection private data received with a connect request or accept.
 * @return 0 and @p cp filled; -ENOENT when @p pd is NULL, shorter than 8 octets or has
 *   another magic (the peer sent none: assume WN_RPCRDMA_INLINE_DEFAULT both ways);
 *   -EPROTONOSUPPORT when the magic matches but the version is not 1 (RFC 8797 §4: ignore
 *   it). @p cp is set to the defaults (1024/1024, no flags) on every error.
 * Thread safety: pure, any thread.
 */
int wn_rpcrdma_cp_decode(const void *pd, size_t len, struct wn_rpcrdma_cp *cp);

#ifdef __cplusplus
}
#endif

#endif /* WN_RPCRDMA_H */
