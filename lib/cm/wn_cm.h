/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The iWARP connection manager: one state machine per connection endpoint, from the
 * connect (or the peer's arrival on a listener) through the setup exchange of the lower layer
 * (MPA Request/Reply with RFC 6581 IRD/ORD and RTR; RFC 5043 session control), RDMA mode,
 * graceful close, Terminate, abort and timeouts, to the end of the lower-layer stream. It is
 * the one place where a connection's lifecycle lives (Linux siw's siw_cep plays this part).
 *
 * Inputs come from two sides and go through one table (state × input → action):
 *  - the ULP (through the control plane): accept, reject, disconnect, destroy, and the QP
 *    being moved to Error or destroyed;
 *  - the lower layer (wn_llp.h upcalls, installed by this library): request, established,
 *    TX ready, rejected, error, end of stream, closed, MULPDU change; and the QP's engine
 *    (a Terminate sent or received).
 * Outputs go to the owner (lib/dp) through struct wn_cm_ops: the ULP's events (exactly one
 * final event per connection: REJECTED, CONNECT_ERROR, UNREACHABLE or DISCONNECTED), and what
 * to do with the QP (start its engine in RDMA mode, send the RTR, send a Terminate, detach and
 * flush it); and to the lower layer (accept, reject, close, abort).
 *
 * The library keeps no table of endpoints and allocates nothing: the owner embeds struct
 * wn_cm_ep in its own connection object and finds it by its own keys. Plain C without EAL:
 * unit tests drive it with a fake lower layer.
 *
 * Thread safety: an endpoint and its struct wn_cm are used by one lcore (the owner of the
 * lower-layer stream).
 */
#ifndef WN_CM_H
#define WN_CM_H

#include <stdbool.h>
#include <stdint.h>

#include "wn_llp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** States of an endpoint. */
enum wn_cm_state {
	WN_CM_IDLE = 0,   /**< not started */
	WN_CM_CONNECTING, /**< active: lower-layer open and setup request out, no reply yet */
	WN_CM_AWAIT_REQ,  /**< passive: lower layer up, the initiator's request not yet here */
	WN_CM_REQ_RCVD,   /**< passive: CONNECT_REQUEST reported, the ULP decides */
	WN_CM_RTS,        /**< RDMA mode: ESTABLISHED reported, the QP runs */
	WN_CM_CLOSING,    /**< graceful close under way (after a FIN, Reject or Terminate) */
	WN_CM_CLOSED,     /**< the lower-layer stream is gone; only freeing is left */
	WN_CM_NSTATES
};

/** Events for the ULP (rdma_cm's, as an iWARP device gives them). */
enum wn_cm_event_type {
	WN_CM_EV_CONNECT_REQUEST = 1, /**< passive: @c pd, @c ird/ord of the request */
	WN_CM_EV_ESTABLISHED,         /**< RDMA mode: negotiated @c ird/ord; active: reply's @c pd */
	WN_CM_EV_REJECTED,            /**< final: refused (@c pd of the Reject, if any) */
	WN_CM_EV_CONNECT_ERROR,       /**< final: the active open failed */
	WN_CM_EV_UNREACHABLE,         /**< final: the peer did not answer */
	WN_CM_EV_DISCONNECTED,        /**< final: the connection ended */
};

/** One event. Pointers are valid during the call only. */
struct wn_cm_event {
	enum wn_cm_event_type type;
	int32_t status;          /**< 0 or a negative errno (ECONNREFUSED, ETIMEDOUT, ...) */
	const uint8_t *pd;       /**< the peer's Private Data (CONNECT_REQUEST; ESTABLISHED on
				  *   the active side; REJECTED) */
	uint16_t pd_len;
	uint32_t peer_ird, peer_ord; /**< as the peer announced them (0x3fff: not enhanced) */
	uint32_t ird, ord;       /**< ESTABLISHED: negotiated for our QP (RFC 6581 §5) */
};

struct wn_cm_ep;

/** Counters of one struct wn_cm. */
struct wn_cm_stats {
	uint64_t conns_active;      /**< connects started */
	uint64_t conns_passive;     /**< streams taken from listeners */
	uint64_t conns_established; /**< reached RDMA mode */
	uint64_t conns_failed;      /**< active opens that never got there */
	uint64_t conns_rejected;    /**< rejected by us or by the peer */
	uint64_t conns_aborted;     /**< aborted on a protocol or local failure */
	uint64_t conns_unenhanced;  /**< connects retried unenhanced (RFC 6581 §10, MPA Rev 1) */
	uint64_t conns_closed;      /**< endpoints that reached CLOSED (their owner frees them) */
};

/** What the owner does for the connection manager; every member is required. */
struct wn_cm_ops {
	/**
	 * An event for the ULP. @return 0; for CONNECT_REQUEST a negative errno refuses the
	 * connection (it is aborted, no event follows).
	 */
	int (*event)(struct wn_cm_ep *ep, const struct wn_cm_event *ev);
	/**
	 * RDMA mode: create and start the engine of the endpoint's QP on stream @p llp with the
	 * negotiated @p p; @p rtr_recv are the RTR types the peer may send first (RFC 6581
	 * §9.2: absorbed). @return 0, or -errno (no QP bound, no memory): the connection fails.
	 */
	int (*qp_start)(struct wn_cm_ep *ep, struct wn_llp *llp, const struct wn_llp_params *p,
			uint8_t rtr_recv);
	/** Initiator in peer-to-peer mode: send RTR @p rtr (RFC 6581 §9.2). @return 0/-errno. */
	int (*qp_rtr)(struct wn_cm_ep *ep, uint8_t rtr);
	/**
	 * Report a lower-layer error to the peer with a Terminate (@p layer, @p etype, @p code;
	 * RFC 5040 §7). @return 0 (its sending is reported later as wn_cm_terminated()), or
	 * -errno: the stream is aborted instead.
	 */
	int (*qp_terminate)(struct wn_cm_ep *ep, uint8_t layer, uint8_t etype, uint8_t code);
	/** The connection no longer carries the QP: flush it (RFC 5040 §6.3). May repeat. */
	void (*qp_detach)(struct wn_cm_ep *ep);
	/** The MULPDU changed (path MTU). */
	void (*qp_mulpdu)(struct wn_cm_ep *ep, uint32_t mulpdu);
	/** One received ULPDU (the lower layer's upcall, straight to the owner). */
	int (*ulpdu)(void *ep, const uint8_t *ulpdu, size_t len);
	/** Optional: a ULPDU found out of order, for early placement (wn_llp_up). */
	void (*ulpdu_ooo)(void *ep, const uint8_t *ulpdu, size_t len);
	/** Zero-copy payload released (the lower layer's upcall, straight to the owner). */
	void (*tx_release)(void *ep, uint32_t wqe);
	/** The endpoint reached CLOSED: the stream is released; free the endpoint when done. */
	void (*closed)(struct wn_cm_ep *ep);
};

/** One connection manager (per lcore): the owner's callbacks and counters. */
struct wn_cm {
	const struct wn_cm_ops *ops;
	struct wn_llp_up up;        /**< installed on every endpoint's stream */
	struct wn_cm_stats st;
};

/** Most Request Private Data an endpoint keeps for a retry (RFC 5044 §7.1: 512 octets). */
#define WN_CM_PD_MAX 512

/** Connect parameters. */
struct wn_cm_connect {
	struct wn_llp_ep local, remote;
	struct wn_llp_caps caps;    /**< IRD/ORD the ULP asks for */
	const uint8_t *pd;          /**< Request Private Data */
	uint16_t pd_len;
};

/** One endpoint; embed it in the owner's connection object. Fields are private. */
struct wn_cm_ep {
	struct wn_cm *cm;
	enum wn_cm_state state;
	struct wn_llp *llp;         /**< the stream (NULL once released) */
	bool active;                /**< we connected */
	bool established;           /**< ESTABLISHED was reported */
	bool final_sent;            /**< the final event went (or the ULP is gone) */
	uint8_t rtr;                /**< initiator, p2p: the RTR to send at TX ready */
	uint32_t mulpdu;
	const char *why;            /**< the last failure, for logs */
	/*
	 * Active: what the connect asked for, kept for the one unenhanced retry that RFC 6581
	 * §10 allows when the responder closes the stream on our enhanced request.
	 */
	struct wn_llp_proto *proto; /**< the lower layer connected through */
	struct wn_cm_connect conn;  /**< its parameters; @c pd points to @c pd below */
	bool unenhanced;            /**< the unenhanced retry is the stream now */
	uint8_t pd[WN_CM_PD_MAX];
};

/** Initialise @p cm with the owner's @p ops. */
void wn_cm_init(struct wn_cm *cm, const struct wn_cm_ops *ops);

/**
 * Active open on lower layer @p proto: @p ep (zeroed by the caller) goes to CONNECTING. On
 * failure the final CONNECT_ERROR event with the errno is reported and @p ep is CLOSED.
 * If the responder ends the stream while our enhanced request (MPA Rev 2, RFC 6581) is
 * unanswered — an unenhanced responder does (RFC 6581 §10) — the endpoint connects once
 * more with the unenhanced format (MPA Rev 1: no IRD/ORD negotiation, the ULP's values
 * stand; no peer-to-peer RTR), the same addresses, IRD/ORD and Private Data, still
 * CONNECTING and without an event; only the retry's outcome reaches the ULP.
 * @return 0 or -errno.
 */
int wn_cm_connect(struct wn_cm *cm, struct wn_cm_ep *ep, struct wn_llp_proto *proto,
		  const struct wn_cm_connect *c);

/**
 * A stream a listener handed over: @p ep (zeroed by the caller) takes it and waits for the
 * request (AWAIT_REQ). Call from the listener's incoming upcall.
 */
void wn_cm_incoming(struct wn_cm *cm, struct wn_cm_ep *ep, struct wn_llp *llp);

/**
 * The ULP accepts the reported request with its IRD/ORD and Private Data (bind the QP before:
 * qp_start follows from inside the call, as may a failure).
 * @return 0, or -EINVAL when @p ep is not waiting for that decision.
 */
int wn_cm_accept(struct wn_cm_ep *ep, const struct wn_llp_caps *caps, const uint8_t *pd,
		 uint16_t pd_len);

/** The ULP rejects the reported request. @return 0 or -EINVAL (not waiting for it). */
int wn_cm_reject(struct wn_cm_ep *ep, const uint8_t *pd, uint16_t pd_len);

/**
 * rdma_disconnect(): the local ULP sees its final event now, the peer when the close reaches
 * it. @return 0 or -EINVAL (nothing to disconnect).
 */
int wn_cm_disconnect(struct wn_cm_ep *ep);

/** The ULP destroyed its id: no more events; aborted unless already closing. */
void wn_cm_destroy(struct wn_cm_ep *ep);

/**
 * The ULP moved the QP to Error (@p abort false: DISCONNECTED, graceful close) or destroyed
 * it (@p abort true: abort). The owner has detached the QP itself.
 */
void wn_cm_qp_gone(struct wn_cm_ep *ep, bool abort);

/** The QP's engine sent or received a Terminate: close the stream behind it (RFC 5040 §6.3). */
void wn_cm_terminated(struct wn_cm_ep *ep);

/** @return the state of @p ep. */
static inline enum wn_cm_state
wn_cm_state(const struct wn_cm_ep *ep)
{
	return ep->state;
}

/** @return the stream of @p ep, NULL once released. */
static inline struct wn_llp *
wn_cm_llp(const struct wn_cm_ep *ep)
{
	return ep->llp;
}

/** @return true when @p ep opened the connection. */
static inline bool
wn_cm_active(const struct wn_cm_ep *ep)
{
	return ep->active;
}

/** @return a constant name of state @p s. */
const char *wn_cm_state_str(enum wn_cm_state s);

/** @return a constant name of event type @p t. */
const char *wn_cm_event_str(enum wn_cm_event_type t);

#ifdef __cplusplus
}
#endif

#endif /* WN_CM_H */
