/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * RPC-over-RDMA version 1 transport (RFC 5666, restated by RFC 8166; connection parameters
 * of RFC 8797) over the standard libibverbs and librdmacm API, carrying ONC RPC messages
 * (RFC 5531) encoded with libtirpc's XDR routines (rpcgen output).
 *
 * It runs on any RDMA device the verbs library offers: on warpnic through the shims
 * (`warpnic-run`), on an rxe/siw/hardware device natively.
 *
 * Client: wn_rpcrdma_clnt_create() connects through rdma_cm (port 20049 by default) and
 * exchanges RFC 8797 private data (inline thresholds, remote invalidation). Calls are
 * started with wn_rpcrdma_clnt_start() and completed from wn_rpcrdma_clnt_poll(), many at
 * once, matched by XID, never more than the server's granted credits; wn_rpcrdma_clnt_call()
 * is the synchronous form. A call's arguments go inline when they fit the call inline
 * threshold; otherwise DDP-eligible opaque bodies (WN_RPCRDMA_CALL_DDP_ARGS, at least
 * ddp_min octets) go by read chunks, and what still does not fit goes as a Long Call
 * (RDMA_NOMSG, position-zero read chunk). A result buffer given in the call (ddp_buf)
 * becomes a write chunk: the server RDMA-Writes the result data straight into it. A call
 * expecting a reply larger than the reply inline threshold (reply_max) offers a reply
 * chunk; without one the server may answer a long reply with a read chunk that the client
 * pulls and acknowledges with RDMA_DONE (RFC 5666 §3.5).
 *
 * Server: wn_rpcrdma_svc_create() listens; wn_rpcrdma_svc_register() adds a program
 * version as a table of procedures (rpcgen xdr routines and a handler each);
 * wn_rpcrdma_svc_poll() accepts connections, pulls read chunks with RDMA Read, decodes the
 * call, runs the handler, pushes DDP-eligible results into write chunks with RDMA Write
 * (procedures flagged WN_RPCRDMA_PROC_DDP_RESULT), long replies into reply chunks, and
 * answers malformed transport headers with RDMA_ERROR (ERR_VERS, ERR_CHUNK).
 *
 * Memory: each side registers one pool (buffers, bounce buffers, long messages). Memory an
 * application registers with wn_rpcrdma_clnt_reg() / wn_rpcrdma_svc_reg() is used in place
 * (direct data placement); other chunk data is copied through the pool. Chunks are exposed
 * per call with type 2 memory windows bound to the connection's QP and invalidated (by the
 * peer's Send With Invalidate or a local invalidation) before the call completes; devices
 * without memory windows fall back to exposing the registered regions themselves
 * (WN_RPCRDMA_REG_POOL, as Linux's "all physical" mode: no per-call protection).
 *
 * Untrusted input: arguments (server) and results (client) are decoded by the application's
 * rpcgen routines; give every variable-length item of the .x a bound, since libtirpc
 * allocates the length a peer claims before it reads the octets.
 *
 * Thread safety: a client or server object is used by one thread at a time (calls, polls
 * and callbacks all run in the thread that polls). Different objects are independent.
 */
#ifndef WN_RPCRDMA_XPRT_H
#define WN_RPCRDMA_XPRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/rpc.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The NFS/RDMA port (RFC 5666 §10), the default for both sides. */
#define WN_RPCRDMA_PORT 20049

/** How chunk memory is exposed to the peer. */
enum wn_rpcrdma_reg_mode {
	WN_RPCRDMA_REG_AUTO = 0, /**< memory windows when the device has them, else the pool */
	WN_RPCRDMA_REG_MW,	 /**< a type 2 memory window per chunk, invalidated per call */
	WN_RPCRDMA_REG_POOL,	 /**< the registered regions' own rkeys (no per-call protection) */
};

/** Transport options; wn_rpcrdma_opts_default() fills the defaults. */
struct wn_rpcrdma_opts {
	uint16_t port;	      /**< rdma_cm port (WN_RPCRDMA_PORT) */
	uint32_t credits;     /**< client: credits requested; server: most credits granted
				 (client 32, server 64) */
	uint32_t inline_send; /**< largest Send this side posts (1024, RFC 8166 §3.3.3) */
	uint32_t inline_recv; /**< size of this side's receive buffers (1024) */
	uint32_t max_msg;     /**< largest chunk or long message accepted (1 MiB + 64 KiB) */
	uint32_t ddp_min;     /**< smallest opaque body moved by a chunk (1024) */
	uint32_t timeout_ms;  /**< client: default call timeout (30000) */
	size_t pool_size;     /**< octets of the registered pool (0: from credits and max_msg) */
	enum wn_rpcrdma_reg_mode reg;
	bool no_private_data; /**< send no RFC 8797 private data (peer assumes 1024/1024) */
	bool no_remote_inv;   /**< client: do not offer remote invalidation; server: never use
				 Send With Invalidate */
	bool no_read_reply;   /**< server: never answer a long reply by read chunk (RDMA_DONE) */
	uint32_t busy_poll_us; /**< poll the CQs this long before sleeping on the channel (0) */
	uint32_t settle_ms;    /**< client: wait this long after the connection is established
				  before the first Send (0). Linux's siw as a server can leave an
				  FPDU that arrives with its MPA Reply unprocessed until more data
				  comes (seen with siw 6.1); a first call sent at
				  once may then never be answered */
};

/** Fill @p o with the defaults. Any thread. */
void wn_rpcrdma_opts_default(struct wn_rpcrdma_opts *o);

/**
 * Set one option by its command-line name (without "--"): port, credits, inline (both
 * directions), inline-send, inline-recv, max-msg, ddp-min, timeout-ms, pool-mb,
 * reg (auto|mw|pool), busy-poll-us, and the switches no-cp, no-remote-inv, no-read-reply
 * (@p value NULL). Numbers are decimal, with an optional k/m suffix for sizes.
 * @return 0, -ENOENT (not a transport option), -EINVAL (bad or missing value, out of
 *   range). Any thread (pure).
 */
int wn_rpcrdma_opts_set(struct wn_rpcrdma_opts *o, const char *name, const char *value);

/** @return whether option @p name takes a value (1), is a switch (0), or is unknown (-1). */
int wn_rpcrdma_opts_has_value(const char *name);

struct option;

/**
 * Build a getopt_long() table in @p out (room for @p cap entries): the program's own
 * options @p app (a table ended by a zero entry, or NULL), then one entry per transport
 * option (flag NULL, val @p val; give out[index].name and optarg to wn_rpcrdma_opts_set()),
 * then the zero entry. @return entries before the zero entry, or -ENOSPC. Any thread.
 */
int wn_rpcrdma_opts_long(struct option *out, size_t cap, const struct option *app, int val);

/**
 * Parse a size: decimal digits with an optional k, m or g suffix (x 1024, 1024^2, 1024^3).
 * @return 0 and *@p v, or -EINVAL (empty, other characters, over 2^64). Any thread.
 */
int wn_rpcrdma_parse_size(const char *s, uint64_t *v);

/** One line per option for a --help text (constant string). */
extern const char wn_rpcrdma_opts_help[];

/** What the transport did for a call (wn_rpcrdma_call.how), for tests and statistics. */
enum wn_rpcrdma_how {
	WN_RPCRDMA_HOW_READ_CHUNK = 1 << 0,  /**< arguments went by read chunk(s) */
	WN_RPCRDMA_HOW_LONG_CALL = 1 << 1,   /**< RDMA_NOMSG with a position-zero read chunk */
	WN_RPCRDMA_HOW_WRITE_CHUNK = 1 << 2, /**< result data came by write chunk */
	WN_RPCRDMA_HOW_REPLY_CHUNK = 1 << 3, /**< the reply came by reply chunk (RDMA_NOMSG) */
	WN_RPCRDMA_HOW_READ_REPLY = 1 << 4,  /**< the reply came by read chunk (RDMA_DONE sent) */
	WN_RPCRDMA_HOW_REMOTE_INV = 1 << 5,  /**< the reply was a Send With Invalidate */
	WN_RPCRDMA_HOW_BOUNCE = 1 << 6,	     /**< chunk data was copied through the pool */
	WN_RPCRDMA_HOW_MSGP = 1 << 7,	     /**< the reply was RDMA_MSGP (padded) */
};

/** Call flags. */
#define WN_RPCRDMA_CALL_DDP_ARGS 0x1 /**< opaque bodies >= ddp_min in the args may go by chunk */

/** One RPC call; caller-owned, untouched by the caller from start to completion. */
struct wn_rpcrdma_call {
	/* in */
	uint32_t prog;
	uint32_t vers;
	uint32_t proc;
	xdrproc_t xargs;	       /**< e.g. (xdrproc_t)xdr_blob_write_args; NULL: xdr_void */
	const void *args;
	xdrproc_t xres;		       /**< NULL: xdr_void */
	void *res;		       /**< decoded into (zeroed by the caller; xdr_free it
					    after completion whatever the status) */
	const struct opaque_auth *cred; /**< NULL: AUTH_NONE */
	uint32_t flags;		       /**< WN_RPCRDMA_CALL_* */
	void *ddp_buf;		       /**< write chunk for the DDP-eligible result (NULL: none) */
	uint32_t ddp_len;	       /**< its size (a chunk only when >= ddp_min) */
	uint32_t reply_max;	       /**< largest reply expected (0: the inline threshold) */
	uint32_t timeout_ms;	       /**< 0: the client's default */
	void (*done)(struct wn_rpcrdma_call *call); /**< completion callback (NULL: none) */
	void *arg;				    /**< for the callback */
	/* out */
	enum clnt_stat stat; /**< RPC_SUCCESS, RPC_TIMEDOUT, RPC_CANTRECV (connection lost),
				RPC_CANTENCODEARGS, RPC_CANTDECODERES, RPC_PROGUNAVAIL, ...,
				RPC_CANTSEND (RDMA_ERROR received: see rdma_err) */
	uint32_t xid;
	uint32_t rdma_err;  /**< RDMA_ERROR code from the server (ERR_VERS, ERR_CHUNK), else 0 */
	uint32_t how;	    /**< enum wn_rpcrdma_how bits */
	uint32_t ddp_bytes; /**< result octets placed by write chunk */
	/* private to the transport */
	struct wn_rpcrdma_call *next_;
	uint64_t deadline_;
	void *slot_;
};

/** Negotiated parameters and counters of a client or server. */
struct wn_rpcrdma_info {
	uint32_t credits;      /**< client: last granted; server: most granted */
	uint32_t call_inline;  /**< call inline threshold (client → server) */
	uint32_t reply_inline; /**< reply inline threshold (server → client) */
	bool remote_inv;       /**< Send With Invalidate in use */
	bool peer_cp;	       /**< the peer sent RFC 8797 private data */
	enum wn_rpcrdma_reg_mode reg;
	uint32_t connections; /**< server: connections open */
	uint64_t calls;	      /**< calls completed (client) / dispatched (server) */
	uint64_t read_chunks; /**< read chunks sent (client) / pulled (server) */
	uint64_t write_chunks;
	uint64_t reply_chunks;
	uint64_t long_calls;
	uint64_t read_replies;	    /**< long replies by read chunk (RDMA_DONE) */
	uint64_t remote_inv_count;  /**< replies received / sent as Send With Invalidate */
	uint64_t rdma_errors_sent;  /**< server: RDMA_ERROR replies */
	uint64_t rdma_errors_recv;  /**< client: RDMA_ERROR received */
	uint64_t discarded;	    /**< messages silently discarded (RFC 8166 §4.5) */
	uint64_t disconnects;	    /**< server: connections closed for a protocol violation */
	uint64_t max_outstanding;   /**< most calls outstanding at once (server: on a connection) */
	uint64_t bytes_placed;	    /**< octets moved by RDMA Read/Write (chunks) */
	uint64_t bytes_copied;	    /**< chunk octets that went through a bounce buffer */
};

/* ---- client ---------------------------------------------------------------------------------- */

struct wn_rpcrdma_clnt;

/**
 * Connect to the RPC-over-RDMA server at @p host (IPv4 dotted quad or name) and port
 * @p o->port.
 * @return the client, or NULL with errno: EINVAL (options), ECONNREFUSED (rejected),
 *   ETIMEDOUT, ENODEV (no RDMA device), ENOMEM, or what librdmacm/libibverbs reported.
 * Thread safety: any thread; the client then belongs to the calling thread.
 */
struct wn_rpcrdma_clnt *wn_rpcrdma_clnt_create(const char *host, const struct wn_rpcrdma_opts *o);

/**
 * Disconnect and free @p c. Calls still outstanding complete with RPC_CANTRECV (their
 * callbacks run). Thread safety: the client's thread.
 */
void wn_rpcrdma_clnt_destroy(struct wn_rpcrdma_clnt *c);

/**
 * Register [@p addr, @p addr + @p len) with the client's protection domain, so that
 * arguments and result buffers in it move by direct placement (no bounce copy).
 * @return 0, -EEXIST (overlaps a registration), -ENOMEM, -errno of ibv_reg_mr.
 * Thread safety: the client's thread.
 */
int wn_rpcrdma_clnt_reg(struct wn_rpcrdma_clnt *c, void *addr, size_t len);

/**
 * Deregister memory registered with wn_rpcrdma_clnt_reg() (before unmapping it), once no
 * call still uses it. @return 0, -ENOENT (not a registration), -EBUSY (calls outstanding).
 * Thread safety: the client's thread.
 */
int wn_rpcrdma_clnt_dereg(struct wn_rpcrdma_clnt *c, void *addr);

/**
 * Start @p call. Arguments are encoded now when a credit is free, else when one frees.
 * @return 0, -EINVAL (NULL fields), -ENOTCONN (the connection is gone).
 * Thread safety: the client's thread.
 */
int wn_rpcrdma_clnt_start(struct wn_rpcrdma_clnt *c, struct wn_rpcrdma_call *call);

/**
 * Process completions, replies, timeouts and connection events, waiting at most
 * @p timeout_ms (0: no wait, -1: until something completes) for the first of them.
 * Completed calls have their callbacks run from here.
 * @return calls completed, or -ENOTCONN once the connection is gone and no call remains.
 * Thread safety: the client's thread.
 */
int wn_rpcrdma_clnt_poll(struct wn_rpcrdma_clnt *c, int timeout_ms);

/**
 * Start @p call and poll until it completes.
 * @return @p call->stat. Thread safety: the client's thread.
 */
enum clnt_stat wn_rpcrdma_clnt_call(struct wn_rpcrdma_clnt *c, struct wn_rpcrdma_call *call);

/** @return calls started and not yet completed. */
uint32_t wn_rpcrdma_clnt_outstanding(const struct wn_rpcrdma_clnt *c);

/** Fill @p info. Thread safety: the client's thread. */
void wn_rpcrdma_clnt_info(const struct wn_rpcrdma_clnt *c, struct wn_rpcrdma_info *info);

/**
 * Build an AUTH_SYS (AUTH_UNIX) credential for @p machine, @p uid, @p gid (no auxiliary
 * groups) in @p buf (at least 400 octets, MAX_AUTH_BYTES) and point @p oa at it.
 * @return 0, or -ENOSPC. Any thread.
 */
int wn_rpcrdma_auth_sys(struct opaque_auth *oa, void *buf, size_t cap, const char *machine,
			uint32_t uid, uint32_t gid);

/* ---- server ---------------------------------------------------------------------------------- */

struct wn_rpcrdma_svc;
/** One call being served (valid inside the handler). */
struct wn_rpcrdma_req;

/** A procedure handler: fill @p res from @p args; @return the RPC accept status. */
typedef enum accept_stat (*wn_rpcrdma_proc_fn)(void *args, void *res, struct wn_rpcrdma_req *rq);

/** Procedure flags. */
#define WN_RPCRDMA_PROC_DDP_RESULT 0x1 /**< opaque result bodies go by write chunk if offered */

/** One row of a program version's dispatch table (indexed by procedure number). */
struct wn_rpcrdma_svc_proc {
	wn_rpcrdma_proc_fn fn; /**< NULL: PROC_UNAVAIL */
	xdrproc_t xargs;       /**< NULL: xdr_void */
	size_t args_size;
	xdrproc_t xres; /**< NULL: xdr_void */
	size_t res_size;
	uint32_t flags; /**< WN_RPCRDMA_PROC_* */
	/** free what the handler put in @p res once the reply is on the wire (NULL: xdr_free) */
	void (*free_res)(void *res, void *ctx);
};

/**
 * Listen for RPC-over-RDMA connections on @p addr (an address of the RDMA device, or
 * "0.0.0.0") and @p o->port.
 * @return the server, or NULL with errno (EINVAL, EADDRINUSE, ENODEV, ENOMEM, ...).
 * Thread safety: any thread; the server then belongs to the calling thread.
 */
struct wn_rpcrdma_svc *wn_rpcrdma_svc_create(const char *addr, const struct wn_rpcrdma_opts *o);

/**
 * Serve program @p prog version @p vers with @p procs[0 .. @p nprocs) (kept by reference);
 * @p ctx is given to the handlers (wn_rpcrdma_req_ctx()) and to free_res.
 * @return 0, -EEXIST (already served), -EINVAL, -ENOMEM. Thread safety: the server's thread.
 */
int wn_rpcrdma_svc_register(struct wn_rpcrdma_svc *s, uint32_t prog, uint32_t vers,
			    const struct wn_rpcrdma_svc_proc *procs, uint32_t nprocs, void *ctx);

/**
 * Register application memory whose data handlers return by reference (RDMA Write straight
 * from it). @return 0, -EEXIST, -ENOMEM, -errno. Thread safety: the server's thread.
 */
int wn_rpcrdma_svc_reg(struct wn_rpcrdma_svc *s, void *addr, size_t len);

/**
 * Deregister memory registered with wn_rpcrdma_svc_reg() (before unmapping it).
 * @return 0, -ENOENT, -EBUSY (replies in progress). Thread safety: the server's thread.
 */
int wn_rpcrdma_svc_dereg(struct wn_rpcrdma_svc *s, void *addr);

/**
 * Serve: accept and close connections, pull read chunks, run handlers, send replies,
 * waiting at most @p timeout_ms (-1: forever) for something to do.
 * @return calls dispatched, or -errno on a failure of the listener itself.
 * Thread safety: the server's thread.
 */
int wn_rpcrdma_svc_poll(struct wn_rpcrdma_svc *s, int timeout_ms);

/** Close every connection and free @p s. Thread safety: the server's thread. */
void wn_rpcrdma_svc_destroy(struct wn_rpcrdma_svc *s);

/** Fill @p info (counters over every connection so far). Thread safety: the server's thread. */
void wn_rpcrdma_svc_info(const struct wn_rpcrdma_svc *s, struct wn_rpcrdma_info *info);

/** @return the ctx given to wn_rpcrdma_svc_register(). */
void *wn_rpcrdma_req_ctx(const struct wn_rpcrdma_req *rq);
/** @return the call's credential (flavor, body). */
const struct opaque_auth *wn_rpcrdma_req_cred(const struct wn_rpcrdma_req *rq);
/** @return the call's XID. */
uint32_t wn_rpcrdma_req_xid(const struct wn_rpcrdma_req *rq);
/** @return the procedure number. */
uint32_t wn_rpcrdma_req_proc(const struct wn_rpcrdma_req *rq);

/**
 * Decode the call's AUTH_SYS credential into @p p (release it with
 * xdr_free((xdrproc_t)xdr_authunix_parms, (char *)p)).
 * @return 0, -ENOENT (another flavor), -EBADMSG.
 */
int wn_rpcrdma_req_auth_sys(const struct wn_rpcrdma_req *rq, struct authunix_parms *p);

#ifdef __cplusplus
}
#endif

#endif /* WN_RPCRDMA_XPRT_H */
