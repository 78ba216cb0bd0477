/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The lower-layer protocol (LLP) seam below DDP (RFC 5041 §1.4, §4): what lib/rnic and lib/cm
 * see of the transport that carries a DDP stream. MPA over TCP (RFC 5044 + RFC 6581, lib/mpa)
 * is the first implementation; DDP over SCTP (RFC 5043) is meant to be the second. Each
 * implementation is one `static const struct wn_llp_ops` table (as rdma-core's
 * verbs_context_ops or DPDK's eth_dev_ops); callers go through the inline wrappers below and
 * never branch on the kind.
 *
 * Objects:
 *  - struct wn_llp_proto: one instance of an implementation on one lcore (for MPA/TCP: the
 *    lcore's TCP context, the MPA policy, the zero-copy tokens). It opens streams actively
 *    (connect) or through listeners, and runs its timers and deferred work in poll().
 *  - struct wn_llp: one stream, i.e. one DDP stream (an MPA/TCP connection; an SCTP
 *    association's DDP session). It carries the connection setup that precedes DDP (the MPA
 *    Request/Reply exchange, RFC 5043 session control) and then whole ULPDUs both ways.
 *
 * Upcalls (struct wn_llp_up): a stream reports setup and teardown events to its owner
 * (lib/cm drives them) and delivers each received ULPDU whole and checked (CRC, Markers;
 * lib/rnic places it). Sending: wn_llp_send() takes one ULPDU described by struct
 * wn_llp_ulpdu (lib/rnic builds them); -EAGAIN means "no room now, offer it again".
 *
 * Lifetime: the owner calls wn_llp_release() when it is done with a stream; the
 * implementation frees it once its transport is gone and nothing (zero-copy mbufs) refers to
 * it any more. No upcall is made after release.
 *
 * Thread safety: a protocol instance and its streams belong to one lcore; every function
 * here and every upcall runs there.
 */
#ifndef WN_LLP_H
#define WN_LLP_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wn_net.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wn_llp;
struct wn_llp_proto;
struct wn_llp_listener;

/* ---------------------------------------------------------------- outbound ULPDUs */

/** Largest header of one outbound ULPDU (an RDMAP Terminate with D and R: 18 + 52). */
#define WN_LLP_HDR_MAX 72
/** Most gather pieces of one ULPDU's payload (lib/queue's SGE limit). */
#define WN_LLP_MAX_IOV 32

/** Where the payload of an outbound ULPDU comes from (struct wn_llp_ulpdu @c src). */
enum wn_llp_src {
	WN_LLP_SRC_NONE = 0, /**< no payload, or engine memory (inline data): copy it */
	WN_LLP_SRC_SQ,       /**< registered memory of SQ WQE @c wqe (Send, Write) */
	WN_LLP_SRC_RESP,     /**< registered memory of a Read Response (no local WQE) */
};

/** One outbound ULPDU (a DDP segment): @c hdr, then the @c iov pieces in order. */
struct wn_llp_ulpdu {
	uint8_t hdr[WN_LLP_HDR_MAX];
	uint16_t hdr_len;
	uint16_t n_iov;
	uint32_t len;     /**< hdr_len + payload octets */
	uint8_t src;      /**< enum wn_llp_src */
	/**
	 * The last ULPDU of its message with a payload of registered memory (WN_LLP_SRC_SQ or
	 * WN_LLP_SRC_RESP): a lower layer that references the message's memory until the peer
	 * has it counts one hold (WN_LLP_TX_HELD) per message and closes it here.
	 */
	uint8_t last;
	uint32_t wqe;     /**< SQ index of the WQE (WN_LLP_SRC_SQ) */
	uint32_t msg_len; /**< payload octets of the whole message this ULPDU is part of */
	struct {
		const uint8_t *base;
		uint32_t len;
		uint32_t stag; /**< the STag/lkey @c base was resolved through (registered memory) */
	} iov[WN_LLP_MAX_IOV];
};

/**
 * Return value of wn_llp_send(): the ULPDU was taken and its payload (registered memory of SQ
 * WQE @c wqe) is referenced, not copied; struct wn_llp_up @c tx_release reports when the
 * transport is done with it. A lower layer may reference a whole message under one hold: it
 * returns WN_LLP_TX_HELD for the first ULPDU it references and 0 for the ones that follow
 * (up to @c last), and releases the message once.
 */
#define WN_LLP_TX_HELD 1

/* ---------------------------------------------------------------- connection setup */

/** An address and port of one end of a stream. */
struct wn_llp_ep {
	struct wn_ip_addr addr;
	uint16_t port; /**< host byte order */
};

/**
 * What the ULP asks for in the setup exchange (RFC 6581 §5). Peer-to-peer mode and the RTR
 * types offered or accepted (RFC 6581 §9) are the instance's policy.
 */
struct wn_llp_caps {
	uint16_t ird, ord;  /**< inbound / outbound RDMA Read (and Atomic) limits, <= 0x3fff */
};

/** RFC 6581 §7.1 RTR message types (bit mask; the same bits as lib/rnic's). */
#define WN_LLP_RTR_SEND  (1u << 0)
#define WN_LLP_RTR_WRITE (1u << 1)
#define WN_LLP_RTR_READ  (1u << 2)

/** The peer's setup message (MPA Request or Reply; an RFC 5043 session message). */
struct wn_llp_peer {
	const uint8_t *pd; /**< Private Data (valid during the upcall) */
	uint16_t pd_len;
	bool enhanced;     /**< it carried RFC 6581 IRD/ORD */
	uint16_t ird, ord; /**< as announced (0x3fff each when not enhanced) */
};

/** What the setup negotiated (valid from ESTABLISHED on). */
struct wn_llp_params {
	uint32_t ird, ord;   /**< RFC 6581 §5 */
	bool p2p;            /**< peer-to-peer mode: the initiator sends an RTR first */
	uint8_t rtr;         /**< the agreed RTR types */
	uint32_t mulpdu;     /**< largest ULPDU (RFC 5044 §4.5; a path MTU for SCTP) */
	uint8_t rev;         /**< revision of the setup protocol (MPA Rev 1 or 2) */
	bool markers_tx, markers_rx, crc; /**< MPA Full Operation options; false elsewhere */
};

/** Why a stream's transport went away. */
enum wn_llp_close {
	WN_LLP_CLOSE_NORMAL = 0, /**< orderly close both ways */
	WN_LLP_CLOSE_RESET,      /**< the peer reset it, or we aborted it */
	WN_LLP_CLOSE_REFUSED,    /**< active open refused (TCP RST to the SYN) */
	WN_LLP_CLOSE_TIMEOUT,    /**< retransmission or connection timeout */
};

/** Upcall event types, in the order a stream's life goes through them. */
enum wn_llp_event_type {
	WN_LLP_EV_REQUEST = 1, /**< responder: the initiator's setup request; accept or reject */
	WN_LLP_EV_ESTABLISHED, /**< setup done: @c params valid; DDP may flow (see TX_READY) */
	WN_LLP_EV_TX_READY,    /**< ULPDUs may be sent (responder: once the first one arrived,
				*   RFC 5044 §7.1.2; initiator: now, its RTR first if p2p) */
	WN_LLP_EV_REJECTED,    /**< initiator: the responder rejected (@c peer has its data) */
	WN_LLP_EV_ERROR,       /**< a protocol error; see the fields below */
	WN_LLP_EV_EOF,         /**< the peer closed its side: no more ULPDUs will arrive */
	WN_LLP_EV_CLOSED,      /**< the transport is gone (@c why); the last event */
	WN_LLP_EV_MULPDU,      /**< the MULPDU changed (path MTU): @c params->mulpdu */
};

/** One event. Pointers are valid during the upcall only. */
struct wn_llp_event {
	enum wn_llp_event_type type;
	const struct wn_llp_peer *peer;     /**< REQUEST, REJECTED, ESTABLISHED, ERROR (or NULL) */
	const struct wn_llp_params *params; /**< ESTABLISHED, TX_READY, MULPDU */
	/* ERROR */
	uint8_t err;          /**< the layer's error code (MPA: RFC 5044 §8, RFC 6581 §8) */
	bool send_terminate;  /**< RDMA mode: report it with a Terminate (@c term_*) first */
	uint8_t term_layer, term_etype; /**< RFC 5040 §7 layer and type of that Terminate */
	bool crc;             /**< the error is a CRC error */
	bool reject_sent;     /**< responder: the negotiation failed, a Reject is on its way */
	bool insufficient_ird; /**< initiator: the responder cannot meet our ORD (RFC 6581 §9.1) */
	/**
	 * EOF, CLOSED: initiator: the peer ended the stream (a close or a reset, not a timeout)
	 * while our enhanced setup request (MPA Rev 2 with RFC 6581 data) was unanswered. An
	 * unenhanced (RFC 5044 only) responder does exactly that (RFC 6581 §10), and the
	 * initiator MAY try again with the unenhanced format (struct wn_llp_connect @c rev 1).
	 */
	bool enh_unanswered;
	enum wn_llp_close why; /**< CLOSED */
	const char *reason;    /**< ERROR: a short constant text */
};

/** A stream's upcalls to its owner; all run on the stream's lcore. */
struct wn_llp_up {
	/** Setup/teardown event. May call any wn_llp_* function of this stream. */
	void (*event)(void *arg, struct wn_llp *l, const struct wn_llp_event *ev);
	/**
	 * One whole received ULPDU, checked (MPA CRC and Markers). @return 0, or -EAGAIN to hold
	 * it (only on a stream whose implementation has WN_LLP_F_RX_HOLD): the stream keeps
	 * that ULPDU and delivers nothing more, leaving what follows in its transport (whose
	 * receive window closes, so the peer stops sending) until wn_llp_rx_resume(); the
	 * peer's end of the stream (WN_LLP_EV_EOF) waits behind it too. Any other negative
	 * errno is ignored (the ULP reports its own errors).
	 */
	int (*ulpdu)(void *arg, const uint8_t *ulpdu, size_t len);
	/**
	 * Optional: a ULPDU that arrived out of order (a hole in the stream before it), found
	 * through MPA Markers (RFC 5044 §4.3) and checked (CRC, Markers). The owner may place
	 * its data at once (DDP allows placement out of order, RFC 5041 §5.4; RFC 5044's
	 * "enhanced" receiver); the same ULPDU is delivered again through ulpdu(), in order,
	 * once the hole is filled, and only then may it complete anything.
	 */
	void (*ulpdu_ooo)(void *arg, const uint8_t *ulpdu, size_t len);
	/**
	 * Zero-copy: the transport is done with the payload of one ULPDU that wn_llp_send()
	 * took with WN_LLP_TX_HELD for SQ WQE @p wqe (acknowledged and in no mbuf any more).
	 * May be NULL when the owner never sends registered memory.
	 */
	void (*tx_release)(void *arg, uint32_t wqe);
	/**
	 * Optional: a send refused for room (struct wn_llp @c tx_room_wait) may succeed now:
	 * the peer acknowledged data and the transport's send buffer has more. The owner may
	 * stop polling the stream's QP between the refusal and this call.
	 */
	void (*tx_room)(void *arg);
};

/** Largest Private Data of a setup request (an MPA Request, RFC 5044 §7.1.1). */
#define WN_LLP_PD_MAX 512

/** Active open. */
struct wn_llp_connect {
	struct wn_llp_ep local, remote;
	struct wn_llp_caps caps;  /**< what our Request asks for and offers */
	const uint8_t *pd;        /**< Request Private Data (copied) */
	uint16_t pd_len;
	/**
	 * Revision of the setup request: 0, the instance's policy; 1, unenhanced (MPA Rev 1,
	 * RFC 5044 only: no RFC 6581 IRD/ORD nor peer-to-peer mode; the ULP's IRD/ORD stand).
	 * Lower layers with a single setup format ignore it.
	 */
	uint8_t rev;
	const struct wn_llp_up *up;
	void *up_arg;
};

/**
 * A listener's upcall: @p l was opened by a peer (for MPA/TCP: the TCP handshake completed,
 * the MPA Request is still to come). The owner sets the stream's upcalls with wn_llp_set_up()
 * before returning. @return 0, or a negative errno to refuse it (the stream is aborted).
 */
typedef int (*wn_llp_incoming_fn)(void *arg, struct wn_llp *l);

/** Properties of an implementation (struct wn_llp_ops @c flags). */
#define WN_LLP_F_MESSAGES (1u << 0) /**< message-oriented: ULPDUs arrive whole by themselves
				     *   (no MPA framing, no Markers, no CRC at this layer) */
#define WN_LLP_F_RX_HOLD  (1u << 1) /**< a stream can hold a received ULPDU its owner cannot
				     *   take yet (upcall -EAGAIN, wn_llp_rx_resume()) */

/** What a stream tells about itself (telemetry, tests). */
struct wn_llp_info {
	struct wn_llp_ep local, remote;
	const char *state;  /**< the implementation's name of its setup phase */
	bool active;        /**< we opened it */
	bool full;          /**< setup done: ULPDUs flow */
	struct wn_llp_params params;
	uint64_t rx_ulpdus, tx_ulpdus;
	/** The transport under it (TCP; an SCTP association), for stall diagnosis. */
	struct {
		const char *state;
		uint32_t cwnd, srtt_us, rto_us, backoff;
		uint64_t retrans;
		uint32_t snd_queued, rcv_queued;
		/* sequence space relative to the initial sequence numbers */
		uint32_t snd_una, snd_nxt, snd_max, snd_wnd, rcv_nxt, rcv_wnd;
		bool in_recovery;
		uint32_t sacked_bytes;
		bool quiet; /**< closed both ways (TIME_WAIT) or gone: the peer has it all */
	} transport;
};

/** Counters of a protocol instance (summed over its streams, alive or gone). */
struct wn_llp_stats {
	uint64_t rx_ulpdus, tx_ulpdus;
	uint64_t rx_ooo_ulpdus; /**< ULPDUs found out of order through Markers (ulpdu_ooo) */
	uint64_t tx_again;      /**< sends refused for room (-EAGAIN) */
	uint64_t errors;        /**< setup or Full Operation protocol errors */
	uint64_t crc_errors;    /**< ... of them CRC errors */
	uint64_t zc_ulpdus;     /**< ULPDUs sent zero-copy (payload attached to the mbufs) */
	uint64_t zc_bytes;      /**< ... their payload octets */
	uint64_t ref_ulpdus;    /**< ULPDUs whose payload the transport references and copies
				 *   once into each segment (MPA/TCP's default) */
	uint64_t ref_bytes;     /**< ... their payload octets */
	uint64_t tokens;        /**< messages referenced (zero-copy or by reference) */
	uint64_t zc_released;   /**< ... whose references all went */
	uint64_t zc_fallback;   /**< zero-copy candidates not sent zero-copy */
	uint64_t copy_ulpdus;   /**< ULPDUs with a payload copied into the transport's buffers */
	uint64_t copy_bytes;    /**< ... their payload octets */
	/* why a payload was copied (one of these per copied ULPDU with a payload) */
	uint64_t copy_inline;   /**< the payload is the engine's (inline data) */
	uint64_t copy_unpinned; /**< a region could not be pinned (a window: its MR owns it) */
	uint64_t copy_no_token; /**< no token free */
	uint64_t copy_staged;   /**< staging is configured (or the transport copies always) */
	uint64_t copy_small;    /**< the message is short: copying it costs less */
	uint64_t copy_other;    /**< the transport refused the reference (no room for it) */
};

/** One implementation. Every member is required unless marked optional. */
struct wn_llp_ops {
	const char *name;   /**< e.g. "mpa-tcp" */
	uint32_t flags;     /**< WN_LLP_F_* */
	/* protocol instance */
	struct wn_llp *(*connect)(struct wn_llp_proto *p, const struct wn_llp_connect *c);
	struct wn_llp_listener *(*listen)(struct wn_llp_proto *p, const struct wn_llp_ep *ep,
					  wn_llp_incoming_fn incoming, void *arg);
	void (*unlisten)(struct wn_llp_listener *ls);
	unsigned int (*poll)(struct wn_llp_proto *p, uint64_t now);
	/* stream */
	int (*accept)(struct wn_llp *l, const struct wn_llp_caps *caps, const uint8_t *pd,
		      uint16_t pd_len);
	int (*reject)(struct wn_llp *l, const uint8_t *pd, uint16_t pd_len);
	int (*send)(struct wn_llp *l, const struct wn_llp_ulpdu *u);
	int (*close)(struct wn_llp *l);
	void (*abort)(struct wn_llp *l);
	void (*release)(struct wn_llp *l);
	void (*info)(const struct wn_llp *l, struct wn_llp_info *info);
	/** Offer the held ULPDU again (required with WN_LLP_F_RX_HOLD, else NULL). */
	int (*rx_resume)(struct wn_llp *l);
	/** Optional: see wn_llp_ack_completions(). */
	int (*ack_completions)(struct wn_llp *l);
};

/** The part of every protocol instance the wrappers use (first member of the instance). */
struct wn_llp_proto {
	const struct wn_llp_ops *ops;
	struct wn_llp_stats st;     /**< the instance's counters (the implementation counts) */
};

/**
 * The part of every stream the wrappers and the owner use (first member of the stream).
 * Fields are written by the implementation only (and @c up / @c up_arg by wn_llp_set_up()).
 */
struct wn_llp {
	const struct wn_llp_ops *ops;
	const struct wn_llp_up *up;
	void *up_arg;
	bool tx_ready;   /**< ULPDUs may be sent now (the owner skips polling its QP while not) */
	/**
	 * The last send was refused for room while the transport holds data of this stream:
	 * struct wn_llp_up @c tx_room comes when acknowledgements make room (cleared then, or
	 * by a send that succeeds).
	 */
	bool tx_room_wait;
	bool active;     /**< opened by connect() */
	/**
	 * The peer ended the stream behind a ULPDU the owner holds (WN_LLP_F_RX_HOLD): its
	 * WN_LLP_EV_EOF waits until that ULPDU is taken (or dropped by closing the stream).
	 */
	bool eof_held;
};

/**
 * Open a stream to @p c->remote: the transport's handshake, then the setup request carrying
 * @p c->caps and Private Data. Events follow through @p c->up.
 * @return the stream, or NULL with errno (EINVAL, ENOMEM, EADDRINUSE, ENETUNREACH, ...).
 */
static inline struct wn_llp *
wn_llp_connect(struct wn_llp_proto *p, const struct wn_llp_connect *c)
{
	return p->ops->connect(p, c);
}

/**
 * Accept streams opened by peers at @p ep (address 0: any of ours).
 * @return the listener, or NULL with errno (EADDRINUSE, ENOMEM, EINVAL).
 */
static inline struct wn_llp_listener *
wn_llp_listen(struct wn_llp_proto *p, const struct wn_llp_ep *ep, wn_llp_incoming_fn incoming,
	      void *arg)
{
	return p->ops->listen(p, ep, incoming, arg);
}

/** Stop listening; streams already handed over stay. */
static inline void
wn_llp_unlisten(struct wn_llp_proto *p, struct wn_llp_listener *ls)
{
	p->ops->unlisten(ls);
}

/** Timers and deferred work (zero-copy releases). Every loop iteration. @return work done. */
static inline unsigned int
wn_llp_poll(struct wn_llp_proto *p, uint64_t now)
{
	return p->ops->poll(p, now);
}

/** Read the instance's counters. */
static inline void
wn_llp_stats(const struct wn_llp_proto *p, struct wn_llp_stats *st)
{
	*st = p->st;
}

/** Set the upcalls of @p l (an incoming stream; or change the owner). */
static inline void
wn_llp_set_up(struct wn_llp *l, const struct wn_llp_up *up, void *arg)
{
	l->up = up;
	l->up_arg = arg;
}

/**
 * Responder: accept the REQUEST with our @p caps (NULL: the instance's defaults) and Private
 * Data; ESTABLISHED (or ERROR with reject_sent when RFC 6581 negotiation fails) is raised from
 * inside the call. @return 0, -ECONNREFUSED (negotiation failed), -EINVAL (state, data).
 */
static inline int
wn_llp_accept(struct wn_llp *l, const struct wn_llp_caps *caps, const uint8_t *pd,
	      uint16_t pd_len)
{
	return l->ops->accept(l, caps, pd, pd_len);
}

/** Responder: reject the REQUEST with Private Data. @return 0 or -EINVAL. */
static inline int
wn_llp_reject(struct wn_llp *l, const uint8_t *pd, uint16_t pd_len)
{
	return l->ops->reject(l, pd, pd_len);
}

/**
 * Send one ULPDU. @return 0 (taken: copied), WN_LLP_TX_HELD (taken: payload referenced), or
 * -EAGAIN (no room, not allowed yet, or not connected: offer it again later).
 */
static inline int
wn_llp_send(struct wn_llp *l, const struct wn_llp_ulpdu *u)
{
	return l->ops->send(l, u);
}

/** Close gracefully after what is queued (a Reject or Terminate goes out first). */
static inline int
wn_llp_close(struct wn_llp *l)
{
	return l->ops->close(l);
}

/** Abort at once (TCP RST; SCTP ABORT). CLOSED follows. */
static inline void
wn_llp_abort(struct wn_llp *l)
{
	l->ops->abort(l);
}

/** The owner is done with @p l: no more upcalls; freed when the transport is gone. */
static inline void
wn_llp_release(struct wn_llp *l)
{
	l->ops->release(l);
}

/** Describe @p l. */
static inline void
wn_llp_info(const struct wn_llp *l, struct wn_llp_info *info)
{
	l->ops->info(l, info);
}

/** @return true when @p l can hold a received ULPDU (WN_LLP_F_RX_HOLD). */
static inline bool
wn_llp_can_hold(const struct wn_llp *l)
{
	return (l->ops->flags & WN_LLP_F_RX_HOLD) != 0;
}

/** @return true when the peer's end of @p l waits behind a held ULPDU (@c eof_held). */
static inline bool
wn_llp_eof_held(const struct wn_llp *l)
{
	return l->eof_held;
}

/**
 * The owner can take the ULPDU it held (its ulpdu upcall returned -EAGAIN): the stream
 * offers it again from inside this call, then goes on delivering what its transport holds.
 * @return 0 (taken, or nothing was held), -EAGAIN (refused again: still held), -ENOTSUP
 *   (the implementation cannot hold).
 */
static inline int
wn_llp_rx_resume(struct wn_llp *l)
{
	return l->ops->rx_resume != NULL ? l->ops->rx_resume(l) : -ENOTSUP;
}

/**
 * From now on, the last ULPDU of each message of an SQ WQE (src WN_LLP_SRC_SQ, DDP's Last
 * flag set) that wn_llp_send() copies is taken with WN_LLP_TX_HELD, and its tx_release comes
 * once the peer has acknowledged it, after what arrived with that acknowledgement was
 * delivered: the WQE completes when the peer has its data, as InfiniBand RC's do (a Terminate
 * that came with the ACK is seen first).
 * @return 0, or -ENOTSUP (this lower layer completes when it takes a message). Owning lcore.
 */
static inline int
wn_llp_ack_completions(struct wn_llp *l)
{
	return l->ops->ack_completions != NULL ? l->ops->ack_completions(l) : -ENOTSUP;
}

/** @return true when ULPDUs may be sent on @p l now. */
static inline bool
wn_llp_tx_ready(const struct wn_llp *l)
{
	return l->tx_ready;
}

/** @return the name of @p l's implementation. */
static inline const char *
wn_llp_kind(const struct wn_llp *l)
{
	return l->ops->name;
}

/* ---------------------------------------------------------------- for implementations */

/** What an initiator's stream keeps of its struct wn_llp_connect for its setup request. */
struct wn_llp_req {
	struct wn_llp_caps caps;   /**< the ULP's IRD/ORD */
	uint16_t pd_len;
	uint8_t pd[WN_LLP_PD_MAX]; /**< the request's Private Data */
};

/**
 * An implementation's connect(): keep @p c's IRD/ORD and Private Data in @p req (the caller
 * checked @p c->pd_len against its own limit, at most WN_LLP_PD_MAX) and install @p c's
 * upcalls on the new stream @p l.
 */
void wn_llp_connect_keep(struct wn_llp *l, struct wn_llp_req *req, const struct wn_llp_connect *c);

/** @return a constant name of event type @p t. Any thread. */
const char *wn_llp_event_str(enum wn_llp_event_type t);

/** @return a constant name of close reason @p why. Any thread. */
const char *wn_llp_close_str(enum wn_llp_close why);

#ifdef __cplusplus
}
#endif

#endif /* WN_LLP_H */
