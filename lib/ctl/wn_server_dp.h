/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The messages between the control server's thread (lib/server) and the dataplane lcores
 * (lib/dp), warpnicd's or any embedder's: lib/ctl holds them so that neither side includes
 * the other.
 *
 * The control thread owns every client-visible object (PD, MR, CQ, SRQ, QP, CM id) and
 * their shared memory. It tells the dataplane about them by enqueuing struct wn_server_dp_msg
 * pointers on the "to_dp" rte_ring (single producer: the control thread; single consumer:
 * the dataplane's control poller). The dataplane answers on the "to_ctl" ring (single
 * producer: the dataplane; single consumer: the control thread), then rings the control
 * thread's eventfd (wn_server_dp_attach()).
 *
 * Ownership: a message belongs to whoever dequeued it; the receiver frees it with free().
 * Object descriptors (struct wn_server_dp_qp, ...) stay valid until the control thread gets a
 * WN_SERVER_DP_DONE for the matching *_DESTROY message: the dataplane must stop touching the
 * rings and memory before it acks. While no dataplane is attached, the control thread
 * frees objects immediately and refuses CM connections (ENETDOWN).
 *
 * PDs and MRs live in lib/mem's table (wn_server_mem()): @c pd fields below are lib/mem
 * PD numbers and MR STags are lib/mem STags, so the dataplane checks and resolves STags with
 * wn_mem_resolve(); MR deregistration waits for the QSBR grace period (conf.mem_qs) before
 * MR_DEREG is sent. Rings are lib/queue rings (wn_queue.h); the dataplane attaches as the
 * SQ/RQ/SRQ consumer and the CQ producer (wn_queue_cons_attach / wn_queue_prod_attach).
 *
 * Thread safety: each ring has exactly one producer and one consumer as stated above.
 */
#ifndef WN_SERVER_DP_H
#define WN_SERVER_DP_H

#include <stdint.h>

#include "wn_ctl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Message types; "ctl → dp" unless marked. */
enum wn_server_dp_type {
	WN_SERVER_DP_MR_REG = 1,    /**< obj: struct wn_server_dp_mr */
	WN_SERVER_DP_MR_DEREG,      /**< obj: struct wn_server_dp_mr; ack with DONE */
	WN_SERVER_DP_CQ_CREATE,     /**< obj: struct wn_server_dp_cq */
	WN_SERVER_DP_CQ_DESTROY,    /**< ack with DONE */
	WN_SERVER_DP_SRQ_CREATE,    /**< obj: struct wn_server_dp_srq */
	WN_SERVER_DP_SRQ_DESTROY,   /**< ack with DONE */
	WN_SERVER_DP_QP_CREATE,     /**< obj: struct wn_server_dp_qp */
	WN_SERVER_DP_QP_MODIFY,     /**< obj: struct wn_server_dp_qp, new state in u.qp_state
				     *   (a UD QP: u.ud, on every modify) */
	WN_SERVER_DP_QP_DESTROY,    /**< ack with DONE */
	WN_SERVER_DP_CM_LISTEN,     /**< u.cm: id, src; ack with CM_LISTENING (obj: the
				     *   dataplane's, NULL when sent) */
	WN_SERVER_DP_CM_CONNECT,    /**< u.cm: id, qp, src, dst, param */
	WN_SERVER_DP_CM_ACCEPT,     /**< u.cm: id, qp, param */
	WN_SERVER_DP_CM_REJECT,     /**< u.cm: id, param.pd */
	WN_SERVER_DP_CM_DISCONNECT, /**< u.cm: id */
	WN_SERVER_DP_CM_DESTROY,    /**< u.cm: id (CM ids are known by handle: no ack) */
	WN_SERVER_DP_DONE,          /**< dp → ctl: handle/obj of a *_DESTROY/DEREG is released */
	WN_SERVER_DP_CM_EVENT,      /**< dp → ctl: u.cm.ev for id u.cm.id (CONNECT_REQUEST: new
				     *   connection on listener u.cm.ev.listen_id, ev.id is the
				     *   dataplane's connection key; the control thread allocates
				     *   the id and sends the key back in u.cm.conn of every
				     *   CM message about it) */
	WN_SERVER_DP_ASYNC_EVENT,   /**< dp → ctl: u.async for the QP, SRQ or CQ @c handle
				     *   (by the event type): the owning client's async event */
	WN_SERVER_DP_QP_IB,         /**< obj: struct wn_server_dp_qp; u.ib: the QP, not bound to
				     *   a CM id, connects InfiniBand-style (RTR: to the peer's
				     *   QP at its address; RTS: its retry budget starts) */
	WN_SERVER_DP_QP_ERROR,      /**< dp → ctl: QP @c handle went to Error by itself (its
				     *   InfiniBand-style connection ended or never came) */
	WN_SERVER_DP_CM_LISTENING,  /**< dp → ctl: the listener of CM id u.cm.id is in place on
				     *   every lcore that takes connections (u.cm.ev.status 0),
				     *   or not at all (-errno): a peer may connect from now on */
};

/** A registered region as the dataplane sees it. */
struct wn_server_dp_mr {
	uint32_t handle;
	uint32_t pd;
	uint32_t stag;     /**< lkey == rkey */
	uint32_t access;   /**< WN_CTL_ACCESS_* */
	uint64_t iova;     /**< remote address of the first byte */
	uint64_t length;
	uint8_t *base;     /**< control thread's mapping of the first byte */
	/**
	 * Another STag whose zero-copy pins may reference this memory (0: none): an
	 * ibv_rereg_mr gave this region's STag to the new registration, lookups that began
	 * before found this memory through it. Deregistration waits for its pins too.
	 */
	uint32_t stag_pins;
};

/** A CQ: ring memory shared with the client, notification fd (-1: none). */
struct wn_server_dp_cq {
	uint32_t handle;
	uint32_t depth;
	void *ring;
	uint64_t ring_size;
	int notify_fd;     /**< write the 8-octet cookie here when an armed CQ gets a CQE */
	uint64_t cookie;
};

struct wn_server_dp_srq {
	uint32_t handle;
	uint32_t pd;
	uint32_t depth;
	uint32_t max_sge;
	void *ring;
	uint64_t ring_size;
};

struct wn_server_dp_qp {
	uint32_t handle;
	uint32_t qpn;
	uint32_t pd;
	uint32_t state;    /**< enum wn_ctl_qp_state */
	uint32_t qp_type;  /**< enum wn_ctl_qp_type */
	struct wn_server_dp_cq *send_cq;
	struct wn_server_dp_cq *recv_cq;
	struct wn_server_dp_srq *srq; /**< NULL: the QP's own RQ */
	uint32_t sq_depth, rq_depth, max_send_sge, max_recv_sge, max_inline, sq_sig_all;
	uint32_t ird, ord; /**< negotiated (RFC 6581 §5) */
	void *ring;
	uint64_t ring_size;
};

/** One control message (malloc'd; the receiver frees it). */
struct wn_server_dp_msg {
	uint32_t type;     /**< enum wn_server_dp_type */
	uint32_t handle;   /**< object handle concerned */
	void *obj;         /**< object descriptor, see the type */
	union {
		uint32_t qp_state;
		struct {
			uint32_t state; /**< the same word as @c qp_state */
			uint32_t qkey;  /**< the QP's Q_Key */
		} ud;               /**< QP_MODIFY of a UD QP */
		struct {
			uint32_t id;
			uint32_t conn; /**< passive ids: the dataplane's key from CONNECT_REQUEST */
			uint32_t qp;
			uint32_t ps;  /**< the id's port space: WN_CTL_PS_TCP (connections) or
				       *   WN_CTL_PS_UDP (SIDR-style resolution, shard 0) */
			uint32_t llp; /**< CONNECT/LISTEN: enum wn_ctl_llp of the id's client
				       *   (WN_CTL_LLP_DEFAULT: the dataplane's choice) */
			struct wn_ctl_addr src;
			struct wn_ctl_addr dst;
			struct wn_ctl_conn_param param; /**< CM_EVENT ESTABLISHED: ird/ord
							  *   as negotiated (RFC 6581) */
			struct wn_ctl_cm_event ev;
		} cm;
		struct {
			uint32_t qp_state; /**< WN_CTL_QPS_RTR or WN_CTL_QPS_RTS */
			uint32_t llp;      /**< enum wn_ctl_llp of the QP's client */
			uint32_t rqpn;     /**< the peer's QP number (dest_qp_num) */
			uint32_t ird, ord; /**< the QP's (max_dest_rd_atomic, max_rd_atomic) */
			uint8_t timeout;   /**< RTS: local ACK timeout, 4.096 us * 2^timeout (0:
					    *   none) */
			uint8_t retry_cnt; /**< RTS: retries after the first attempt */
			uint8_t rsvd[2];
			uint32_t access;   /**< the QP's WN_CTL_ACCESS_* (its remote rights) */
			struct wn_ctl_addr src; /**< our address (the GID at sgid_index) */
			struct wn_ctl_addr dst; /**< the peer's (its GID); ports unused */
		} ib;
		struct {
			uint32_t event;      /**< enum wn_ctl_async_type */
			uint32_t vendor_err; /**< QP events: the Terminate's cause */
		} async;
	} u;
};

#ifdef __cplusplus
}
#endif

#endif /* WN_SERVER_DP_H */
