/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/rpcrdma internals shared by the connection core (rpcrdma_conn.c), the client
 * (rpcrdma_clnt.c) and the server (rpcrdma_svc.c).
 */
#ifndef RPCRDMA_PRIV_H
#define RPCRDMA_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rpc/rpc.h>

#include "rpcrdma_pool.h"
#include "rpcrdma_proto.h"
#include "rpcrdma_xdr.h"
#include "wn_rpcrdma.h"
#include "wn_rpcrdma_xprt.h"

/* ---- logging (stderr; level from $WN_RPCRDMA_LOG: err, warn, info, debug) ------------------- */

enum { RPCRDMA_LOG_ERR, RPCRDMA_LOG_WARN, RPCRDMA_LOG_INFO, RPCRDMA_LOG_DEBUG };

void wn_rpcrdma_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int wn_rpcrdma_log_level(void);
#define RLOG(lvl, ...)                                                                             \
	do {                                                                                       \
		if (RPCRDMA_LOG_##lvl <= wn_rpcrdma_log_level())                                   \
			wn_rpcrdma_log(RPCRDMA_LOG_##lvl, __VA_ARGS__);                            \
	} while (0)

/** Monotonic milliseconds. */
uint64_t wn_rpcrdma_now_ms(void);

/* ---- limits ---------------------------------------------------------------------------------- */

/** Reduced argument items of one call (read chunks besides position zero). */
#define RPCRDMA_CALL_ITEMS 4
/** Memory windows one client call may bind: items, position zero, write chunk, reply chunk. */
#define RPCRDMA_CALL_MWS (RPCRDMA_CALL_ITEMS + 3)
/** Header buffer per message (a header with every list at its decoder limit fits). */
#define RPCRDMA_HDR_MAX 3072
/** Send work requests one client call may need: binds, the Send, invalidations, reads, DONE. */
#define RPCRDMA_CALL_WRS (2 * RPCRDMA_CALL_MWS + WN_RPCRDMA_MAX_READ_SEGS + 2)

/* ---- memory: a protection domain, its pool and the application's regions -------------------- */

struct rpcrdma_region {
	struct rpcrdma_region *next;
	uint8_t *addr;
	size_t len;
	struct ibv_mr *mr;
};

struct rpcrdma_dom {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch; /**< every CQ of this domain notifies here (non-blocking fd) */
	enum wn_rpcrdma_reg_mode reg; /**< resolved: MW or POOL */
	int mr_access;		      /**< access flags of every registration */
	struct ibv_device_attr attr;
	void *arena;
	size_t arena_len;
	struct rpcrdma_region arena_reg;
	struct rpcrdma_pool pool;
	struct rpcrdma_region *regions; /**< the arena first, then application regions */
	struct rpcrdma_conn *conns;	/**< connections whose CQ notifies on @c ch */
};

int wn_rpcrdma_dom_init(struct rpcrdma_dom *d, struct ibv_context *ctx,
			enum wn_rpcrdma_reg_mode reg, size_t pool_size);
void wn_rpcrdma_dom_fini(struct rpcrdma_dom *d);
int wn_rpcrdma_dom_reg(struct rpcrdma_dom *d, void *addr, size_t len);
/** @return 0, -ENOENT (@p addr does not start an application registration). */
int wn_rpcrdma_dom_dereg(struct rpcrdma_dom *d, void *addr);
/** @return the registration holding all of [p, p + len), or NULL. */
struct ibv_mr *wn_rpcrdma_dom_mr(const struct rpcrdma_dom *d, const void *p, size_t len);

/* ---- work request contexts (wr_id points at one) --------------------------------------------- */

enum rpcrdma_wr_kind {
	RPCRDMA_WR_RECV = 1,
	RPCRDMA_WR_SEND,
	RPCRDMA_WR_BIND,
	RPCRDMA_WR_INV,
	RPCRDMA_WR_READ,
	RPCRDMA_WR_WRITE,
};

struct rpcrdma_wr {
	uint8_t kind;
	void *owner; /**< a receive buffer, a client slot or a server request */
};

struct rpcrdma_rbuf {
	struct rpcrdma_wr wr;
	uint8_t *buf;
	bool posted;
};

struct rpcrdma_mw {
	struct rpcrdma_mw *next;
	struct ibv_mw *mw;
	uint32_t rkey; /**< the key of its current (or last) binding */
};

/* ---- one RDMA connection ---------------------------------------------------------------------- */

struct rpcrdma_conn;
typedef void (*rpcrdma_wc_fn)(struct rpcrdma_conn *c, struct ibv_wc *wc, struct rpcrdma_wr *wr);

struct rpcrdma_conn {
	struct rpcrdma_conn *dom_next;
	struct rpcrdma_dom *dom;
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	rpcrdma_wc_fn on_wc;
	void *owner;
	uint32_t sq_size;
	uint32_t sq_free; /**< send work requests not reserved */
	uint32_t rq_size;
	struct rpcrdma_rbuf *rbufs;
	uint32_t recv_size;   /**< our receive buffers */
	uint32_t send_max;    /**< the largest Send we may post (peer's receive size) */
	uint32_t peer_send;   /**< the largest Send the peer may post to us */
	uint32_t ord;	      /**< RDMA Reads we may have outstanding */
	uint32_t reads_out;
	bool remote_inv;      /**< Send With Invalidate in use on this connection */
	bool peer_cp;
	bool established;
	bool dead;
	struct rpcrdma_mw *mw_free;
	struct rpcrdma_mw *mw_all[256];
	uint32_t nmw;
};

/**
 * Create the CQ and QP on @p id (sized from @p sq/@p rq), the receive buffers (@p recv_size
 * each, from the pool) and post them. @return 0 or -errno.
 */
int wn_rpcrdma_conn_setup(struct rpcrdma_conn *c, struct rpcrdma_dom *d, struct rdma_cm_id *id,
		       uint32_t sq, uint32_t rq, uint32_t recv_size, rpcrdma_wc_fn on_wc,
		       void *owner);
/** Destroy the QP, CQ, windows and buffers (the id is the caller's). */
void wn_rpcrdma_conn_teardown(struct rpcrdma_conn *c);
/** Post @p rb again. @return 0 or -errno. */
int wn_rpcrdma_conn_repost(struct rpcrdma_conn *c, struct rpcrdma_rbuf *rb);
/** Run on_wc for every completion queued. @return completions seen, -EIO on a poll error. */
int wn_rpcrdma_conn_drain(struct rpcrdma_conn *c);
/** Re-arm the CQ's notification (after a channel event). */
void wn_rpcrdma_conn_arm(struct rpcrdma_conn *c);

/**
 * Consume the domain channel's pending CQ events: acknowledge each and re-arm its CQ. An
 * event of @p dying (about to be destroyed) is only acknowledged; an event of a CQ that is
 * no longer a connection's (destroyed: warpnic's shim may still deliver one written just
 * before, where the kernel purges them) is dropped without touching the CQ.
 * @return events seen.
 */
int wn_rpcrdma_dom_events(struct rpcrdma_dom *d, struct ibv_cq *dying);

/**
 * Expose [@p p, @p p + @p len) to the peer with @p access (IBV_ACCESS_REMOTE_READ/WRITE):
 * bind a memory window (its completion goes to on_wc with @p wr) or, in pool mode, name the
 * registration. @return 0 with @p seg filled and *@p mw the window (NULL in pool mode);
 * -EFAULT (not registered), -errno.
 */
int wn_rpcrdma_conn_expose(struct rpcrdma_conn *c, void *p, uint32_t len, int access,
			struct wn_rpcrdma_seg *seg, struct rpcrdma_mw **mw, struct rpcrdma_wr *wr);
/** Post a local invalidation of @p mw (completion to on_wc with @p wr). @return 0 or -errno. */
int wn_rpcrdma_conn_invalidate(struct rpcrdma_conn *c, struct rpcrdma_mw *mw,
			       struct rpcrdma_wr *wr);
/** Give @p mw back (after its invalidation completed or the peer invalidated it). */
void wn_rpcrdma_conn_mw_put(struct rpcrdma_conn *c, struct rpcrdma_mw *mw);

/**
 * Post a Send of @p hdr (@p hdr_len) followed by @p pl (@p pl_len, may be 0), both in the
 * pool; Send With Invalidate of @p inv_rkey when it is not 0. @return 0 or -errno.
 */
int wn_rpcrdma_conn_send(struct rpcrdma_conn *c, const uint8_t *hdr, uint32_t hdr_len,
		      const uint8_t *pl, uint32_t pl_len, uint32_t inv_rkey, struct rpcrdma_wr *wr);
/** Post an RDMA Read of @p seg into @p dst (registered) / an RDMA Write of @p src to it. */
int wn_rpcrdma_conn_read(struct rpcrdma_conn *c, void *dst, const struct wn_rpcrdma_seg *seg,
		      struct rpcrdma_wr *wr);
int wn_rpcrdma_conn_write(struct rpcrdma_conn *c, const void *src, uint32_t len, uint32_t rkey,
		       uint64_t raddr, struct rpcrdma_wr *wr);

/* ---- RFC 8797 private data and connection parameters ----------------------------------------- */

/**
 * Our private data from @p o; @p remote_inv: offer remote invalidation (a client whose
 * chunks are memory windows: invalidating a pool registration would end the connection).
 */
void wn_rpcrdma_cp_make(const struct wn_rpcrdma_opts *o, bool remote_inv, uint8_t *out);

/* ---- shared RPC helpers ---------------------------------------------------------------------- */

/** An XDR routine for no data (libtirpc's xdr_void takes no arguments). */
bool_t wn_rpcrdma_xdr_none(XDR *x, void *p);

/** XDR routine or wn_rpcrdma_xdr_none. */
static inline xdrproc_t
rpcrdma_xdr_or_void(xdrproc_t p)
{
	return p != NULL ? p : (xdrproc_t)wn_rpcrdma_xdr_none;
}

/** @return 0 after setting O_NONBLOCK on @p fd, or -errno. */
int wn_rpcrdma_nonblock(int fd);

/** @return a new rdma_cm event channel whose fd does not block, or NULL with errno. */
struct rdma_event_channel *wn_rpcrdma_event_channel(void);

/** Wait on @p fds for @p timeout_ms (poll(2) semantics). @return poll's result. */
int wn_rpcrdma_wait_fds(const int *fds, int n, int timeout_ms);

#endif /* RPCRDMA_PRIV_H */
