/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * RDMA inside the shard's own loop (run to completion, testpmd style): an application on a
 * shard's lcore registers memory in lib/mem, creates CQs and QPs whose rings live in its own
 * memory, connects and listens through lib/cm on the shard, and posts and polls on the same
 * thread. No control thread, no lib/client, no ring to another thread: one iteration is
 *
 *   wn_dp_poll_rx(dp);       rx_burst → net → tcp → MPA → RNIC (placement, CQEs)
 *   ... the workload's step: wn_dp_cm_poll(), post WQEs, wn_dp_cq_poll() ...
 *   wn_dp_poll_tx(dp);       SQs → RNIC → MPA (FPDUs, CRC) → TCP (and this burst's ACKs) → tx_burst
 *
 * between wn_dp_start() and wn_dp_stop() (wn_dp.h). The rings are lib/queue's (wn_queue.h):
 * WQEs go in with wn_dp_post_send()/wn_dp_post_recv() or straight through the producer views
 * (wn_dp_qp_sq(), wn_dp_qp_rq(): wn_queue_prod_space/slot/commit, no doorbell: the shard polls
 * its QPs' send queues every iteration); CQEs come out with wn_dp_cq_poll(). The CQE and WQE
 * layouts, opcodes and flags are the verbs ones (lib/queue).
 *
 * Connections follow rdma_cm's model: wn_dp_connect() or a listener's CONNECT_REQUEST gives a
 * handle, events arrive through wn_dp_cm_poll() (ESTABLISHED, then exactly one final event:
 * REJECTED, CONNECT_ERROR, UNREACHABLE or DISCONNECTED), and every handle is given back with
 * wn_dp_conn_destroy(). A connection lives on the shard it was made on: wn_dp_connect() picks
 * a local port whose flow the dataplane steers to the calling shard; a listener sees the
 * connections steered to its shard (listen on every shard to see them all).
 *
 * Memory: wn_dp_mr_reg() registers the application's memory (already in this process: no
 * sharing, no mapping) in the shard's lib/mem table. lib/mem's writers must be serialised, so
 * these functions are refused (-EBUSY) on a dataplane with a control thread (wn_dp_conf
 * to_dp set: warpnicd's clients register through lib/server); a dataplane built for
 * embedding (wn_node_conf @c rtc, or wn_dp_create() without control rings) has no other
 * writer. With several shards, one thread registers (the table is shared).
 *
 * Thread safety: every function runs on the lcore of the shard it names (the object's), between
 * wn_dp_start() and wn_dp_stop(), except where stated. Handles become invalid at wn_dp_stop().
 */
#ifndef WN_DP_EMBED_H
#define WN_DP_EMBED_H

#include <stdbool.h>
#include <stdint.h>

#include "wn_cm.h"
#include "wn_ctl.h"
#include "wn_dp.h"
#include "wn_llp.h"
#include "wn_queue.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wn_dp_cq;
struct wn_dp_qp;
struct wn_dp_conn;
struct wn_dp_listener;

/** Largest Private Data of a connection event (RFC 5044 §7.1.1). */
#define WN_DP_PD_MAX 512

/* ---------------------------------------------------------------- memory (lib/mem) */

/**
 * Allocate a protection domain. @return the PD number (> 0), -EBUSY (the dataplane has a
 * control thread), -ENOSPC.
 */
int wn_dp_pd_alloc(struct wn_dp *dp);

/** Free a PD. @return 0, -EBUSY (regions still use it, or a control thread), -ENOENT. */
int wn_dp_pd_free(struct wn_dp *dp, uint32_t pd);

/**
 * Register [@p addr, @p addr + @p len) of this process for @p access (WN_QUEUE_ACCESS_*) in PD
 * @p pd, VA-based (the peer addresses it by @p addr). @p stag is the lkey and the rkey.
 * @return 0, -EBUSY (control thread), -EINVAL, -ENOENT (PD), -ENOSPC.
 */
int wn_dp_mr_reg(struct wn_dp *dp, uint32_t pd, void *addr, uint64_t len, uint32_t access,
		 uint32_t *stag);

/**
 * Deregister: after it returns the dataplane no longer reads or writes the memory (a
 * zero-copy transmit still holding it: -EBUSY, try again after polling).
 * @return 0, -EBUSY, -ENOENT.
 */
int wn_dp_mr_dereg(struct wn_dp *dp, uint32_t stag);

/* ---------------------------------------------------------------- completion queues */

/**
 * A CQ of @p depth entries (rounded up to a power of two) whose ring is in this process.
 * @return it, or NULL with errno EINVAL (depth 0 or above WN_QUEUE_MAX_DEPTH) or ENOMEM.
 */
struct wn_dp_cq *wn_dp_cq_create(struct wn_dp *dp, uint32_t depth);

/**
 * Take up to @p n completions (copied to @p out, oldest first).
 * @return how many (0: none), or -EPROTO (ring corrupt).
 */
int wn_dp_cq_poll(struct wn_dp_cq *cq, struct wn_queue_cqe *out, unsigned int n);

/** @return true when the CQ overflowed (a CQE was lost; its QPs went to Error). */
bool wn_dp_cq_overflowed(const struct wn_dp_cq *cq);

/** Destroy a CQ. @return 0, or -EBUSY (a QP still uses it). NULL: 0. */
int wn_dp_cq_destroy(struct wn_dp_cq *cq);

/* ---------------------------------------------------------------- queue pairs */

/** What a QP is made of (ibv_qp_init_attr's fields for an RC QP). */
struct wn_dp_qp_attr {
	uint32_t pd;
	struct wn_dp_cq *send_cq, *recv_cq;
	uint32_t sq_depth, rq_depth;  /**< rounded up to powers of two */
	uint32_t max_send_sge, max_recv_sge; /**< <= WN_QUEUE_MAX_SGE; 0 counts as 1 */
	uint32_t max_inline;          /**< <= WN_QUEUE_MAX_INLINE */
	bool sq_sig_all;              /**< every send WQE completes with a CQE */
};

/**
 * A QP (RC, in INIT until a connection carries it).
 * @return it, or NULL with errno EINVAL (attributes) or ENOMEM.
 */
struct wn_dp_qp *wn_dp_qp_create(struct wn_dp *dp, const struct wn_dp_qp_attr *attr);

/** @return the QP number (unique on its shard). Any thread. */
uint32_t wn_dp_qp_num(const struct wn_dp_qp *qp);

/** @return the verbs state of the QP (enum ibv_qp_state numbers: INIT 1, RTS 3, ERR 6...). */
uint32_t wn_dp_qp_state(const struct wn_dp_qp *qp);

/** The producer view of the send queue (post with wn_queue_prod_space/slot/commit). */
struct wn_queue_ring *wn_dp_qp_sq(struct wn_dp_qp *qp);

/** The producer view of the receive queue. */
struct wn_queue_ring *wn_dp_qp_rq(struct wn_dp_qp *qp);

/**
 * Post one send WQE: @p w's header, then @p body (w->num_sge SGEs, or w->inline_len octets
 * with WN_QUEUE_SEND_INLINE). It starts in this iteration's wn_dp_poll_tx().
 * @return 0, -EAGAIN (SQ full), -EINVAL (more SGEs or inline octets than the QP takes).
 */
int wn_dp_post_send(struct wn_dp_qp *qp, const struct wn_queue_swqe *w, const void *body);

/** Post one receive WQE. @return 0, -EAGAIN (RQ full), -EINVAL (too many SGEs). */
int wn_dp_post_recv(struct wn_dp_qp *qp, uint64_t wr_id, const struct wn_queue_sge *sge,
		    uint32_t num_sge);

/**
 * Destroy a QP: its connection, if any, is aborted (no more events for it; the peer sees a
 * reset), nothing more is completed. @return 0. NULL: 0.
 */
int wn_dp_qp_destroy(struct wn_dp_qp *qp);

/* ---------------------------------------------------------------- connections (lib/cm) */

/** One connection event (rdma_cm's, as an iWARP device gives them). */
struct wn_dp_cm_event {
	enum wn_cm_event_type type;
	int32_t status;                  /**< 0 or a negative errno */
	struct wn_dp_conn *conn;         /**< the connection (CONNECT_REQUEST: a new handle) */
	struct wn_dp_listener *listener; /**< CONNECT_REQUEST: the listener it arrived on */
	void *user;                      /**< the connection's (CONNECT_REQUEST: the listener's) */
	uint32_t peer_ird, peer_ord;     /**< as the peer announced them */
	uint32_t ird, ord;               /**< ESTABLISHED: negotiated for our QP (RFC 6581) */
	uint16_t pd_len;
	uint8_t pd[WN_DP_PD_MAX];        /**< the peer's Private Data (request, reply, reject) */
};

/** What the ULP asks for in the MPA exchange (rdma_conn_param). */
struct wn_dp_conn_param {
	uint16_t ird, ord;               /**< inbound / outbound RDMA Read limits (RFC 6581) */
	const void *pd;                  /**< Private Data (copied), at most WN_DP_PD_MAX octets */
	uint16_t pd_len;
};

/**
 * Listen on @p local (address 0: every address of the dataplane). CONNECT_REQUEST events
 * carry @p user. @return the listener, or NULL with errno (EADDRINUSE, ENOMEM, EINVAL).
 */
struct wn_dp_listener *wn_dp_listen(struct wn_dp *dp, const struct wn_llp_ep *local, void *user);

/** Stop listening (connections already reported stay). NULL: no-op. */
void wn_dp_unlisten(struct wn_dp_listener *l);

/**
 * Connect QP @p qp from @p local (address 0: the dataplane's for @p remote; port 0: one the
 * dataplane steers to this shard) to @p remote; ESTABLISHED or a final event follows through
 * wn_dp_cm_poll() with @p user.
 * @return the handle, or NULL with errno (EINVAL: the QP already carries a connection or an
 *   address is wrong; EADDRINUSE; ENETUNREACH; ENOMEM; EBUSY: no local port steers here).
 */
struct wn_dp_conn *wn_dp_connect(struct wn_dp *dp, struct wn_dp_qp *qp,
				 const struct wn_llp_ep *local, const struct wn_llp_ep *remote,
				 const struct wn_dp_conn_param *p, void *user);

/**
 * Accept the reported CONNECT_REQUEST on @p c with QP @p qp; ESTABLISHED follows (or a final
 * event when the negotiation fails). Later events carry @p user.
 * @return 0, -EINVAL (not waiting for a decision, or the QP carries a connection).
 */
int wn_dp_accept(struct wn_dp_conn *c, struct wn_dp_qp *qp, const struct wn_dp_conn_param *p,
		 void *user);

/** Reject the reported CONNECT_REQUEST with Private Data. @return 0 or -EINVAL. */
int wn_dp_reject(struct wn_dp_conn *c, const void *pd, uint16_t pd_len);

/**
 * rdma_disconnect(): DISCONNECTED is reported at once; the peer's when our close reaches it.
 * @return 0 or -EINVAL (nothing to disconnect).
 */
int wn_dp_disconnect(struct wn_dp_conn *c);

/** Give the handle back (rdma_destroy_id): no more events; aborted unless closing. NULL: no-op. */
void wn_dp_conn_destroy(struct wn_dp_conn *c);

/** Change the pointer later events of @p c carry. */
void wn_dp_conn_set_user(struct wn_dp_conn *c, void *user);

/** @return the lower-layer stream's description (addresses, MPA parameters, TCP state). */
int wn_dp_conn_info(const struct wn_dp_conn *c, struct wn_llp_info *info);

/**
 * Take the next connection event of shard @p dp.
 * @return 1 with *ev filled, 0 when there is none.
 */
int wn_dp_cm_poll(struct wn_dp *dp, struct wn_dp_cm_event *ev);

/**
 * @return true when every connection of the shard is closed or in TIME_WAIT (both FINs went
 *   through: the peer has everything we sent). An application polls until then before
 *   wn_dp_stop(), which resets what is still open.
 */
bool wn_dp_quiet(struct wn_dp *dp);

/* ---------------------------------------------------------------- the control protocol's terms */

/**
 * The lower-layer endpoint of control-protocol address @p a (wn_ctl.h; any family but
 * WN_CTL_AF_INET6 counts as IPv4), for applications that speak lib/ctl's protocol. Any thread.
 */
void wn_dp_ep_of_ctl(const struct wn_ctl_addr *a, struct wn_llp_ep *e);

/** @return the control protocol's CM event (WN_CTL_CM_EV_*) of lib/cm's @p t. Any thread. */
uint32_t wn_dp_ctl_event_of(enum wn_cm_event_type t);

#ifdef __cplusplus
}
#endif

#endif /* WN_DP_EMBED_H */
