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
 * The library allocates nothing: the owner embeds struct wn_cm_ep in its own connection
 * object and finds it by its own keys. Plain C without EAL: unit tests drive it with a fake
 * lower layer.
 *
 * InfiniBand-style connections (wn_cm_ib_start()): a QP that its program moves to RTR with
 * the peer's address (GID) and QP number, and no CM, gets its connection here. Both ends
 * compute the same rule: the end with the lower (address, QP number) pair connects, from an
 * ephemeral port to the peer's WN_CM_IB_PORT, with an MPA Request (or RFC 5043 session
 * request) whose Private Data names both QP numbers (struct wn_cm_ib_pd); the other end's
 * listener on that port (wn_cm_ib_incoming()) finds the QP the request names among the
 * waiting endpoints, and accepts it with a Reply that names them again. A request for a QP
 * that does not wait yet is held (unanswered) until it does; a failed attempt is retried.
 * Should both ends connect (they see each other's addresses differently), the attempt whose
 * initiator has the lower (address as seen on the wire, QP number) pair wins at both ends:
 * the other end's attempt is refused (Reject reason CROSSED) or abandoned. A QP with send
 * work and no connection for its retry budget (InfiniBand's local ACK timeout x (retry count
 * + 1)) fails: its first send completes with RETRY_EXC_ERR (the owner's qp_retry_exceeded).
 * When the connection ends without a Terminate (the peer destroyed its QP, or its program
 * ended), the QP is not flushed: as on InfiniBand, nothing tells it; its receives stay
 * posted, and send work still there (or posted later) fails after the retry budget
 * (IB_ORPHAN, the owner's qp_park).
 * lib/cm keeps these endpoints in two lists of its struct wn_cm (the waiting QPs, the held
 * requests) and runs their timers in wn_cm_poll().
 *
 * Thread safety: an endpoint and its struct wn_cm are used by one lcore (the owner of the
 * lower-layer stream).
 */
#ifndef WN_CM_H
#define WN_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

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
	WN_CM_IB_WAIT,    /**< InfiniBand-style QP: waits for the peer's request (no stream) */
	WN_CM_IB_BACKOFF, /**< ... its next attempt to connect is due later (no stream) */
	WN_CM_IB_CONNECTING, /**< ... its attempt is out: stream open, request sent */
	WN_CM_IB_ACCEPTING,  /**< ... it took the stream of the peer's request and accepts it */
	WN_CM_IB_AWAIT,   /**< a stream on the InfiniBand-style listener: no request yet */
	WN_CM_IB_HELD,    /**< ... its request names a QP that does not wait (yet): unanswered */
	WN_CM_RTS,        /**< RDMA mode: ESTABLISHED reported, the QP runs */
	WN_CM_IB_ORPHAN,  /**< InfiniBand-style, after RDMA mode: the peer's QP went (its
			   *   stream ended without a Terminate); the QP keeps its work, as an
			   *   InfiniBand QP whose peer is gone, until its retry budget runs out */
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
	WN_CM_EV_UNREACHABLE,         /**< final: the peer did not answer (InfiniBand-style:
				       *   the retry budget ran out) */
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
	/* InfiniBand-style connections */
	uint64_t ib_qps;            /**< QPs that asked for one (wn_cm_ib_start) */
	uint64_t ib_attempts;       /**< connects made for them */
	uint64_t ib_established;    /**< ... reached RDMA mode */
	uint64_t ib_requests;       /**< requests on the listener */
	uint64_t ib_held;           /**< ... held for a QP not waiting yet */
	uint64_t ib_refused;        /**< ... refused (no such QP pairing, busy, malformed) */
	uint64_t ib_crossed;        /**< attempts of ours given up for the peer's (crossed) */
	uint64_t ib_crossed_refused; /**< the peer's attempts refused for ours (crossed) */
	uint64_t ib_retry_exceeded; /**< QPs failed: no connection within the retry budget */
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
	/** Optional: room to send again after a refusal (the lower layer's upcall, as is). */
	void (*tx_room)(void *ep);
	/** The endpoint reached CLOSED: the stream is released; free the endpoint when done. */
	void (*closed)(struct wn_cm_ep *ep);
	/**
	 * InfiniBand-style: @return true when the endpoint's QP has send work posted (not
	 * started: there is no connection yet).
	 */
	bool (*qp_sq_busy)(struct wn_cm_ep *ep);
	/**
	 * InfiniBand-style: no connection within the QP's retry budget: move it to Error, its
	 * first send work request completing with RETRY_EXC_ERR, the rest flushed (the final
	 * event UNREACHABLE and qp_detach follow).
	 */
	void (*qp_retry_exceeded)(struct wn_cm_ep *ep);
	/**
	 * InfiniBand-style: the connection ended without a Terminate: the QP's engine stops
	 * using the stream and keeps its queues as they are (no flush, no state change).
	 */
	void (*qp_park)(struct wn_cm_ep *ep);
};

TAILQ_HEAD(wn_cm_ep_list, wn_cm_ep);

/** One connection manager (per lcore): the owner's callbacks and counters. */
struct wn_cm {
	const struct wn_cm_ops *ops;
	struct wn_llp_up up;        /**< installed on every endpoint's stream */
	struct wn_cm_stats st;
	uint64_t now;               /**< µs, as of the last wn_cm_poll() */
	struct wn_cm_ep_list ib_qps;  /**< InfiniBand-style QPs not yet in RDMA mode */
	struct wn_cm_ep_list ib_held; /**< requests held for a QP that does not wait (yet) */
	uint32_t n_held;
	uint16_t ib_next_port;      /**< the next source port an attempt tries */
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

/** Where InfiniBand-style connections meet: the TCP (and SCTP) port of the listener. */
#define WN_CM_IB_PORT 4791
/** Source ports of InfiniBand-style attempts (above the usual ephemeral range). */
#define WN_CM_IB_SPORT_LO 61000
#define WN_CM_IB_SPORT_HI 65535
/** Most requests held at once (more are refused, Reject reason BUSY). */
#define WN_CM_IB_HELD_MAX 1024
/** First retry of a failed attempt, when the QP has no timeout (yet): 100 ms. */
#define WN_CM_IB_RETRY_US 100000u

/** What an InfiniBand-style connection of a QP is (the QP's move to RTR). */
struct wn_cm_ib {
	struct wn_llp_ep local;     /**< our address (the port is chosen per attempt) */
	struct wn_llp_ep remote;    /**< the peer's address; its port: the peer's listener */
	uint32_t qpn, rqpn;         /**< our QP number, the peer's (dest_qp_num) */
	struct wn_llp_caps caps;    /**< IRD/ORD of the QP */
};

/**
 * The Private Data of an InfiniBand-style setup message (MPA Request, Reply or Reject; an
 * RFC 5043 session message), WN_CM_IB_PD_LEN octets, big-endian:
 *   0  "WNIB"   4  version (1)   5  type   6  reason (Reject; else 0)   7  0
 *   8  the sender's QP number   12  the QP number it is meant for
 */
struct wn_cm_ib_pd {
	uint8_t type;               /**< WN_CM_IB_REQUEST, _REPLY, _REJECT */
	uint8_t reason;             /**< Reject: WN_CM_IB_R_* */
	uint32_t src_qpn, dst_qpn;  /**< < 2^24 */
};
#define WN_CM_IB_PD_LEN 16
#define WN_CM_IB_REQUEST 1
#define WN_CM_IB_REPLY   2
#define WN_CM_IB_REJECT  3
#define WN_CM_IB_R_MISMATCH  1 /**< the QP waits for another peer QP */
#define WN_CM_IB_R_CROSSED   2 /**< our own attempt to you wins (crossed connects) */
#define WN_CM_IB_R_BUSY      3 /**< the QP is connected already, or too many held requests */
#define WN_CM_IB_R_MALFORMED 4 /**< the request's Private Data is not ours */

/**
 * Write @p pd in its wire form into @p buf. @return WN_CM_IB_PD_LEN, or -EINVAL (bad type,
 * reason or QP number), -ENOSPC (@p len too small). Any thread.
 */
int wn_cm_ib_pd_encode(const struct wn_cm_ib_pd *pd, uint8_t *buf, size_t len);

/**
 * Read the Private Data @p buf (@p len octets) of an InfiniBand-style setup message.
 * @return 0, or -EBADMSG (not exactly one well-formed version 1 record). Any thread.
 */
int wn_cm_ib_pd_decode(const uint8_t *buf, size_t len, struct wn_cm_ib_pd *pd);

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
	/* InfiniBand-style: a QP's endpoint (ib_qp), or a stream on the listener (ib_in) */
	bool ib_qp, ib_in;
	bool ib_listed;             /**< in cm->ib_qps (ib_qp) or cm->ib_held (ib_in) */
	bool ib_rts;                /**< the QP is in RTS: its retry budget counts */
	bool terminated;            /**< a Terminate went or came (the QP is in error) */
	bool ib_initiator;          /**< ib_qp: it connects (the rule, until crossed) */
	bool ib_busy;               /**< ib_qp: send work was seen (at @c ib_busy_since) */
	struct wn_cm_ib ib;         /**< ib_qp: what the QP connects to */
	struct wn_cm_ib_pd ib_req;  /**< ib_in: the request (from IB_HELD on) */
	struct wn_llp_ep ib_from;   /**< ib_in: the initiator's address as seen on the wire */
	uint64_t ib_budget_us;      /**< ib_qp: retry budget (0: none, as timeout 0) */
	uint64_t ib_retry_us;       /**< ib_qp: wait after a failed attempt */
	uint64_t ib_busy_since;
	uint64_t ib_next;           /**< ib_qp, IB_BACKOFF: the next attempt is due */
	TAILQ_ENTRY(wn_cm_ep) ib_link;
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

/**
 * InfiniBand-style: @p ep (zeroed by the caller) is the connection of the QP that @p ib
 * describes, over lower layer @p proto: the endpoint with the lower (address, QP number)
 * connects (IB_CONNECTING, or IB_BACKOFF when the attempt cannot start), the other waits
 * (IB_WAIT); a held request for the QP is taken (or crossed) at once. Events then go to the
 * owner as for any endpoint: ESTABLISHED, and one final event (DISCONNECTED when the
 * connection ends, UNREACHABLE when the retry budget ran out).
 * @return 0, or -EINVAL (the QP connected to itself).
 */
int wn_cm_ib_start(struct wn_cm *cm, struct wn_cm_ep *ep, struct wn_llp_proto *proto,
		   const struct wn_cm_ib *ib);

/**
 * InfiniBand-style: the QP of @p ep moved to RTS with InfiniBand's local ACK @p timeout
 * (4.096 µs x 2^timeout; 0: none) and @p retry_cnt: from the first send work seen on, the
 * connection must come within timeout x (retry_cnt + 1), and failed attempts are retried
 * after one timeout (1 ms .. 1 s). Ignored once the connection is up.
 */
void wn_cm_ib_rts(struct wn_cm_ep *ep, uint8_t timeout, uint8_t retry_cnt);

/**
 * A stream the InfiniBand-style listener handed over: @p ep (zeroed by the caller) takes it
 * and waits for its request (IB_AWAIT). Such an endpoint reports no event to the ULP: it
 * hands its stream to the QP's endpoint, or is refused, and reaches CLOSED either way.
 */
void wn_cm_ib_incoming(struct wn_cm *cm, struct wn_cm_ep *ep, struct wn_llp *llp);

/**
 * Timers of InfiniBand-style endpoints (attempts due, retry budgets): call often (every
 * millisecond or so) with the time in µs; also the time the other calls go by.
 */
void wn_cm_poll(struct wn_cm *cm, uint64_t now);

/**
 * @return when wn_cm_poll() has work next (µs; UINT64_MAX: nothing waits for time): an
 * attempt due, or a QP with a retry budget (checked every millisecond).
 */
uint64_t wn_cm_next_timer(const struct wn_cm *cm);

/** @return true for an endpoint of lib/cm's InfiniBand-style connections (QP or listener). */
static inline bool
wn_cm_is_ib(const struct wn_cm_ep *ep)
{
	return ep->ib_qp || ep->ib_in;
}

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
