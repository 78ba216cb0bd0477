/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * MPA connection: the startup phase of RFC 5044 §7.1 with the RFC 6581
 * enhancements, as a transport-agnostic state machine, followed by Full
 * Operation with the negotiated Markers, CRC and SeqStart per direction.
 *
 * The caller owns the TCP connection and the clock:
 *  - bytes received in order go to wn_mpa_conn_input();
 *  - bytes to send are drained with wn_mpa_conn_output();
 *  - time (microseconds, any epoch) is passed in, and wn_mpa_conn_tick()
 *    is called when wn_mpa_conn_deadline() passes;
 *  - events (Request arrived, established, may transmit, rejected, error)
 *    are reported through a callback.
 * In Full Operation received FPDUs are deframed with the caller's
 * struct wn_mpa_rx_ops, and wn_mpa_conn_frame() builds outgoing FPDUs.
 *
 * Decisions where the RFCs leave room (keep DESIGN.md in sync):
 *  - The startup timer (WN_MPA_STARTUP_TIMEOUT_US) runs until the Reply is
 *    received (initiator) or sent (responder); waiting for the initiator's
 *    first FPDU is not timed, because a client may legitimately take its
 *    time before its first message (RFC 6581 §4.3).
 *  - Octets behind the Request before our Reply, or behind the Reply in the
 *    same chunk, are a protocol error (error 4, close), as siw does.
 *  - A Rev 1 peer, or S=0, gets no RFC 6581 negotiation: IRD/ORD are the
 *    local capabilities (Rev 1 carries none: sensible values, as siw picks).
 *  - A responder whose RFC 6581 negotiation fails (6, 7) answers with a
 *    Reject carrying its requirements, then leaves MPA; an initiator whose
 *    negotiation fails enters Full Operation only to send the Terminate.
 *  - With CRC off the CRC field is sent as zero and ignored on receive.
 *
 * Thread safety: a connection is used by one thread at a time (the lcore
 * that owns the TCP connection); different connections are independent.
 */
#ifndef WN_MPA_H
#define WN_MPA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "wn_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Startup timeout (RFC 5044 §7.1.2: timeouts on the handshake SHOULD be
 * used). Runs from wn_mpa_conn_start() until the Reply is received
 * (initiator) or sent (responder); it is what detects Responder/Responder
 * startups. Matches siw's MPA request timeout order of magnitude.
 */
#define WN_MPA_STARTUP_TIMEOUT_US (10u * 1000u * 1000u)

/** Connection states. */
enum wn_mpa_conn_state {
	WN_MPA_CONN_IDLE = 0,  /**< created, wn_mpa_conn_start() not yet called */
	WN_MPA_CONN_REQ_SENT,  /**< initiator: Request queued, waiting for the Reply */
	WN_MPA_CONN_WAIT_REQ,  /**< responder: waiting for the Request */
	WN_MPA_CONN_REQ_RCVD,  /**< responder: Request reported, waiting for accept/reject */
	WN_MPA_CONN_FULL,      /**< Full Operation (see wn_mpa_conn_tx_allowed()) */
	WN_MPA_CONN_REJECTED,  /**< left MPA after a Reject; TCP stays open (RFC 5044 §7.1.2) */
	WN_MPA_CONN_ERROR,     /**< failed; see the error event */
};

/** Negotiated Full Operation parameters. */
struct wn_mpa_params {
	struct wn_mpa_stream tx; /**< what this side sends: Markers, CRC, SeqStart */
	struct wn_mpa_stream rx; /**< what this side receives */
	uint8_t rev;             /**< revision of the Reply */
	struct wn_mpa_neg neg;   /**< IRD/ORD, peer-to-peer, RTR (RFC 6581 §9) */
};

/** Event types. */
enum wn_mpa_event_type {
	WN_MPA_EV_REQUEST = 0, /**< responder: valid Request; call accept or reject */
	WN_MPA_EV_ESTABLISHED, /**< Full Operation begins; params valid */
	WN_MPA_EV_TX_READY,    /**< FPDUs may be sent (responder: first FPDU validated) */
	WN_MPA_EV_REJECTED,    /**< initiator: the Reply had R=1; MPA is over */
	WN_MPA_EV_ERROR,       /**< the connection failed */
};

/** An event. Pointers are valid during the callback only. */
struct wn_mpa_event {
	enum wn_mpa_event_type type;
	/** ERROR: the MPA error code (RFC 5044 §8, RFC 6581 §8). */
	enum wn_mpa_err err;
	/** ERROR with a malformed frame: the rule that failed. */
	enum wn_mpa_frame_status frame_status;
	/** ERROR: the startup timeout expired. */
	bool timeout;
	/**
	 * ERROR: true when the layer above must send a Terminate (Layer 2,
	 * EType 0, code @p err) before closing; false: close TCP at once
	 * (malformed frame, RFC 5044 §7.1.2; timeout).
	 */
	bool send_terminate;
	/** REQUEST, REJECTED, ESTABLISHED: the peer's frame (Private Data, IRD/ORD). */
	const struct wn_mpa_frame *frame;
	/** ESTABLISHED, TX_READY: the negotiated parameters. */
	const struct wn_mpa_params *params;
	/** A short constant text. */
	const char *reason;
};

/** Connection configuration. */
struct wn_mpa_conn_cfg {
	bool initiator;      /**< active side (sends the Request) */
	uint8_t rev;         /**< initiator: revision to send (1, or 2 for RFC 6581); responder:
			      *   highest revision to answer with. 0 = 2. */
	struct wn_mpa_frame_rules rules; /**< receive rules; rev_mask 0 = defaults */
	bool markers;        /**< our M bit: require Markers in what we receive */
	bool crc;            /**< our C bit: ask for CRC (RFC 5044 §4.4: default on) */
	struct wn_mpa_caps caps;        /**< IRD/ORD/RTR/peer-to-peer (RFC 6581 §9) */
	const uint8_t *pd;   /**< initiator: Request Private Data (copied) */
	uint16_t pd_len;
	uint32_t tx_seq;     /**< sequence number of the first octet this side sends */
	uint32_t rx_seq;     /**< sequence number of the first octet this side receives */
	uint64_t timeout_us; /**< startup timeout; 0 = WN_MPA_STARTUP_TIMEOUT_US */
	/** Full Operation receive events (NULL: FPDUs are checked and dropped). */
	const struct wn_mpa_rx_ops *rx_ops;
	void *rx_arg;
	uint16_t rx_hdr_len;  /**< header octets when rx_ops->hdr_len is NULL */
	bool check_markers;   /**< check FPDUPTR on receive (error 3) */
	/**
	 * Responder, peer-to-peer: the first FPDU must be one of the RTR types
	 * announced in the Reply (RFC 6581 §9.2), else error 7 with a Terminate.
	 * Needs at least 2 header octets (rx_hdr_len or rx_ops->hdr_len).
	 */
	bool check_rtr;
	/** Event callback (may be NULL); may call accept/reject from REQUEST. */
	void (*event)(void *arg, const struct wn_mpa_event *ev);
	void *event_arg;
};

/** One MPA connection. Embed it or use wn_mpa_conn_create(); fields are private. */
struct wn_mpa_conn {
	struct wn_mpa_conn_cfg cfg;
	enum wn_mpa_conn_state state;
	enum wn_mpa_err error;
	bool tx_ready;
	uint64_t deadline;
	uint8_t pd[WN_MPA_PD_MAX];  /**< copy of the local Private Data */
	/* startup receive: one frame, then the peer's decoded frame points into it */
	uint8_t rx_buf[WN_MPA_FRAME_MAX];
	size_t rx_have;
	struct wn_mpa_frame peer;
	/* startup transmit */
	uint8_t tx_buf[WN_MPA_FRAME_MAX];
	size_t tx_len;
	size_t tx_off;
	size_t tx_frame_len; /**< length of the Request/Reply we sent */
	/* Full Operation */
	struct wn_mpa_params params;
	uint32_t tx_next;    /**< sequence number of the next FPDU */
	struct wn_mpa_deframer rx;
	uint64_t fpdus_rx;
	int first_rtr;       /**< wn_mpa_rtr_classify() of the first FPDU */
	bool term_tx;        /**< ERROR in Full Operation: FPDUs (the Terminate) may still go */
};

/**
 * Initialise @p c from @p cfg (the configuration is copied, Private Data too).
 * @return 0, or -EINVAL (NULL, Private Data over 512 octets with the
 *   enhanced data, revision above 2, IRD/ORD above 0x3FFF).
 * Thread safety: @p c must not be in use.
 */
int wn_mpa_conn_init(struct wn_mpa_conn *c, const struct wn_mpa_conn_cfg *cfg);

/**
 * Allocate and initialise a connection.
 * @return the connection, or NULL with errno EINVAL or ENOMEM.
 * Thread safety: any thread.
 */
struct wn_mpa_conn *wn_mpa_conn_create(const struct wn_mpa_conn_cfg *cfg);

/** Free a connection from wn_mpa_conn_create() (NULL is ignored). */
void wn_mpa_conn_free(struct wn_mpa_conn *c);

/**
 * Begin the startup at time @p now: the initiator queues its Request, the
 * responder starts waiting for one. Both start the startup timer.
 * @return 0, or -EINVAL (not idle, or the Request cannot be encoded).
 */
int wn_mpa_conn_start(struct wn_mpa_conn *c, uint64_t now);

/**
 * Feed received octets (in order, any chunking).
 * @param consumed octets used (all of them unless an error stops it); may be NULL
 * @return 0; -EPROTO after a protocol error (an ERROR event was raised);
 *   -ETIMEDOUT when the startup timer had expired (ERROR event);
 *   -ENOTCONN in IDLE, REJECTED or ERROR state, or after a negotiation
 *   error (nothing consumed); or a negative value from rx_ops. Octets that
 *   arrive behind the Request before the Reply was sent, or behind the Reply
 *   in the same chunk, are a protocol error (RFC 5044 §7.1.2 rules 1-2).
 *   After a Reject the octets behind the Reply are left unconsumed.
 */
int wn_mpa_conn_input(struct wn_mpa_conn *c, const uint8_t *buf, size_t len, uint64_t now,
		      size_t *consumed);

/**
 * Responder: accept the reported Request, queue the Reply with @p pd and
 * enter Full Operation (receive side; sending waits for the first FPDU,
 * RFC 5044 §7.1.2). @p caps overrides the configured capabilities (NULL:
 * keep them). If RFC 6581 negotiation fails (error 6 or 7), a Reject Reply
 * carrying our requirements is queued instead and an ERROR event raised.
 * @return 0, -ECONNREFUSED (negotiation failed), -EINVAL (wrong state,
 *   Private Data too long).
 */
int wn_mpa_conn_accept(struct wn_mpa_conn *c, const struct wn_mpa_caps *caps,
		       const uint8_t *pd, uint16_t pd_len, uint64_t now);

/**
 * Responder: reject the reported Request with a Reply that has R=1 and
 * @p pd; the connection leaves MPA (state REJECTED), TCP stays open.
 * @return 0, or -EINVAL (wrong state, Private Data too long).
 */
int wn_mpa_conn_reject(struct wn_mpa_conn *c, const uint8_t *pd, uint16_t pd_len);

/**
 * Copy up to @p cap pending startup octets (Request or Reply) to @p buf and
 * consider them sent. @return the number copied (0 when nothing is pending).
 */
size_t wn_mpa_conn_output(struct wn_mpa_conn *c, uint8_t *buf, size_t cap);

/** @return the number of startup octets still to be sent. */
size_t wn_mpa_conn_output_pending(const struct wn_mpa_conn *c);

/**
 * Check the startup timer at @p now.
 * @return 0, or -ETIMEDOUT (an ERROR event with timeout=true was raised).
 */
int wn_mpa_conn_tick(struct wn_mpa_conn *c, uint64_t now);

/** @return when wn_mpa_conn_tick() must run next, UINT64_MAX if no timer is armed. */
uint64_t wn_mpa_conn_deadline(const struct wn_mpa_conn *c);

/** @return the state of @p c. */
enum wn_mpa_conn_state wn_mpa_conn_state(const struct wn_mpa_conn *c);

/**
 * @return true when @p c is an initiator whose enhanced Request (Rev 2 with the RFC 6581
 *   data) is still unanswered: if the peer now closes or resets the connection, it is most
 *   likely an unenhanced responder (RFC 6581 §10), which an unenhanced (Rev 1) Request may
 *   reach. Thread safety: as @p c.
 */
bool wn_mpa_conn_enhanced_unanswered(const struct wn_mpa_conn *c);

/** @return the negotiated parameters (meaningful from ESTABLISHED on). */
const struct wn_mpa_params *wn_mpa_conn_params(const struct wn_mpa_conn *c);

/** @return the peer's Request/Reply (valid once received). */
const struct wn_mpa_frame *wn_mpa_conn_peer_frame(const struct wn_mpa_conn *c);

/**
 * @return true when FPDUs may be sent (RFC 5044 §7.1.2 fencing). After an error in Full
 * Operation that calls for a Terminate (send_terminate), a side that was allowed to send
 * still may: the Terminate reports the error (RFC 5044 §8, RFC 5040 §7.1).
 */
bool wn_mpa_conn_tx_allowed(const struct wn_mpa_conn *c);

/**
 * Full Operation receive in place: may the caller take whole FPDUs where they lie
 * (wn_wire_mpa_fpdu_view() over the ordered octets, from wn_mpa_conn_rx_seq() on) instead of
 * feeding them to wn_mpa_conn_input()? True between two FPDUs of a healthy receive half,
 * once its first FPDU went through wn_mpa_conn_input() (the RTR check and the responder's
 * fencing, RFC 6581 §9.2, RFC 5044 §7.1.2). An FPDU whose view is not WN_MPA_ERR_NONE is
 * fed to wn_mpa_conn_input(), which reports it. Thread safety: as @p c.
 */
static inline bool
wn_mpa_conn_rx_inplace(const struct wn_mpa_conn *c)
{
	return c->state == WN_MPA_CONN_FULL && c->error == WN_MPA_ERR_NONE && c->fpdus_rx > 0 &&
	       wn_mpa_deframer_at_boundary(&c->rx);
}

/** @return the sequence number of the next FPDU in place (see wn_mpa_conn_rx_inplace()). */
static inline uint32_t
wn_mpa_conn_rx_seq(const struct wn_mpa_conn *c)
{
	return wn_mpa_deframer_seq(&c->rx);
}

/** @return the receive half's framing (SeqStart, Markers, CRC; Marker checks on). */
static inline struct wn_mpa_deframer_cfg
wn_mpa_conn_rx_cfg(const struct wn_mpa_conn *c)
{
	return c->rx.cfg;
}

/** One FPDU of @p wire_len octets was taken in place and found good: count it, go past it. */
static inline void
wn_mpa_conn_rx_taken(struct wn_mpa_conn *c, uint32_t wire_len)
{
	wn_mpa_deframer_skip(&c->rx, wire_len);
	c->fpdus_rx++;
}

/**
 * Build the next FPDU of this connection from @p iov with the negotiated
 * Markers/CRC at the next transmit sequence number, and advance it.
 * @return wire length, -EAGAIN (not allowed yet, or startup octets still
 *   pending), -ENOTCONN (not in Full Operation), or wn_wire_mpa_fpdu_build()'s
 *   errors.
 */
int wn_mpa_conn_frame(struct wn_mpa_conn *c, const struct iovec *iov, unsigned int iovcnt,
		      uint8_t *out, size_t cap);

/** ULPDU lengths of the zero-length RTR messages (RFC 6581 §9.2). */
#define WN_MPA_RTR_WRITE_LEN 14 /**< tagged DDP header only */
#define WN_MPA_RTR_SEND_LEN  18 /**< untagged DDP header only */
#define WN_MPA_RTR_READ_LEN  46 /**< untagged header + 28-octet Read Request header */

/**
 * Build the ULPDU of an RTR message (RFC 6581 §9.2), to be framed with
 * wn_mpa_conn_frame() as the initiator's first FPDU:
 *  - WN_MPA_RTR_WRITE: zero-length RDMA Write to @p stag, TO 0 (14 octets);
 *  - WN_MPA_RTR_READ: zero-length RDMA Read Request on QN 1 with MSN @p msn,
 *    sink and source STag @p stag, TOs 0, size 0 (46 octets);
 *  - WN_MPA_RTR_SEND: zero-length Send on QN 0 with MSN @p msn (18 octets).
 * Use a non-zero @p stag: iw_cxgb4 rejects STag 0 even on zero-length
 * segments (as Linux siw and Chelsio send them). The Send/Read forms consume MSN @p msn (1
 * for the first message) of their queue: the RDMAP layer must count it.
 * @return ULPDU octets, -EINVAL (unknown type, NULL), -ENOSPC.
 * Thread safety: pure, any thread.
 */
int wn_mpa_rtr_build(enum wn_mpa_rtr type, uint32_t stag, uint32_t msn, uint8_t *out,
		     size_t cap);

/**
 * Recognise an RTR from the first octets of a ULPDU.
 * @return the enum wn_mpa_rtr type, 0 if it is not a zero-length RTR, or -1
 *   when fewer than 2 octets are given. Thread safety: pure, any thread.
 */
int wn_mpa_rtr_classify(const uint8_t *hdr, size_t hdr_len, uint16_t ulpdu_len);

/** @return a constant name of state @p s. */
const char *wn_mpa_conn_state_str(enum wn_mpa_conn_state s);

#ifdef __cplusplus
}
#endif

#endif /* WN_MPA_H */
