/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * One DDP Stream Session (RFC 5043 §6) as a plain state machine: the session control exchange
 * (Initiate, Accept, Reject and their RFC 6581 enhanced forms with IRD/ORD and RTR
 * negotiation), the DDP-SSN on every DATA chunk it sends, the reordering of what it receives
 * by DDP-SSN (all chunks travel unordered, RFC 5043 §10), the legal sequences of §6.2-§6.4
 * (anything else terminates the session) and the Terminate exchange that ends it.
 *
 * It knows nothing of SCTP itself: the owner (lib/sctp's usrsctp binding, a test, a fuzzer)
 * gives it the payloads of the DATA chunks of its SCTP stream pair with their PPID
 * (wn_sctp_sess_input) and sends what it asks for (struct wn_sctp_sess_ops @c send), and it
 * reports through the lower-layer events of wn_llp.h (REQUEST, ESTABLISHED, TX_READY,
 * REJECTED, ERROR, EOF) and whole ULPDUs in DDP-SSN order. The end of the transport (CLOSED)
 * is the owner's to report; wn_sctp_sess_done() tells when the session itself is over.
 *
 * Thread safety: a session is used by one thread (the lcore of its association).
 */
#ifndef WN_SCTP_SESS_H
#define WN_SCTP_SESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wn_llp.h"
#include "wn_wire_sctp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** States of a session. */
enum wn_sctp_sess_state {
	WN_SCTP_SESS_IDLE = 0,  /**< active: not started */
	WN_SCTP_SESS_INIT_SENT, /**< active: Initiate sent, Accept or Reject due */
	WN_SCTP_SESS_WAIT_INIT, /**< passive: the Initiate (DDP-SSN 0) not processed yet */
	WN_SCTP_SESS_REQ_RCVD,  /**< passive: REQUEST reported, the ULP decides */
	WN_SCTP_SESS_FULL,      /**< DDP segments flow both ways */
	WN_SCTP_SESS_CLOSING,   /**< our Terminate sent (or due); the peer's may follow */
	WN_SCTP_SESS_DONE,      /**< over: rejected, both Terminates, or failed */
};

/** What a session needs from its owner. */
struct wn_sctp_sess_ops {
	/**
	 * Send one DATA chunk, unordered, with PPID @p ppid (16 or 17) on the session's stream:
	 * @p len octets at @p msg, the DDP-SSN first. @return 0, or -EAGAIN (no room: the
	 * session offers it again), or another negative errno (the association is failing).
	 */
	int (*send)(void *arg, uint32_t ppid, const uint8_t *msg, size_t len);
	/** A lower-layer event (wn_llp.h); the stream pointer is the owner's to add. */
	void (*event)(void *arg, const struct wn_llp_event *ev);
	/** One received ULPDU (a DDP segment), in DDP-SSN order. */
	void (*ulpdu)(void *arg, const uint8_t *ulpdu, size_t len);
};

/** Configuration of a session. */
struct wn_sctp_sess_cfg {
	bool initiator;         /**< active side */
	bool enhanced;          /**< initiator: send the RFC 6581 enhanced Initiate */
	struct wn_mpa_caps caps; /**< IRD/ORD; initiator: p2p and RTR offered; responder: RTR
				  *   accepted (wn_wire_mpa.h, RFC 6581 §9) */
	const uint8_t *pd;      /**< initiator: the Initiate's Private Data (copied) */
	uint16_t pd_len;
	uint32_t mulpdu;        /**< largest DDP segment sent or accepted */
	uint64_t timeout_us;    /**< setup deadline from start/creation (0: none) */
	const struct wn_sctp_sess_ops *ops;
	void *arg;
};

/** Counters of a session. */
struct wn_sctp_sess_stats {
	uint64_t rx_ulpdus, tx_ulpdus;
	uint64_t rx_early;   /**< chunks that arrived ahead of their DDP-SSN turn (held) */
	uint32_t held;       /**< ... held now */
};

/** One session. Fields are private to session.c. */
struct wn_sctp_sess {
	struct wn_sctp_sess_cfg cfg;
	enum wn_sctp_sess_state state;
	uint8_t pd[WN_SCTP_PD_MAX];
	uint16_t tx_ssn;         /**< DDP-SSN of the next chunk sent */
	uint16_t rx_ssn;         /**< DDP-SSN of the next chunk to process */
	bool peer_enhanced;      /**< the Initiate was an enhanced one */
	bool sent_term, got_term;
	bool rejected;           /**< a Reject went either way: the session ends with it */
	bool eof_sent;           /**< EOF reported */
	bool rx_dead;            /**< broken: what arrives is ignored (a Terminate may go out) */
	struct wn_mpa_frame init; /**< passive: the Initiate's enhanced view */
	struct wn_llp_params params;
	uint64_t deadline;
	/* control message waiting for room (Accept, Reject, Terminate): DDP-SSN included */
	uint8_t ctl[WN_SCTP_CTL_MAX];
	uint16_t ctl_len;
	/* chunks held until their turn: slot (ssn & (cap - 1)); NULL when empty */
	struct wn_sctp_held **held;
	uint32_t held_cap;
	uint64_t gap_since;      /**< chunks have waited for a missing DDP-SSN since (0: none) */
	uint64_t now;            /**< the owner's clock at the last call */
	const char *why;         /**< the last failure */
	struct wn_sctp_sess_stats st;
};

/** Prepare @p s (zeroed by the caller or not). @return 0 or -EINVAL. */
int wn_sctp_sess_init(struct wn_sctp_sess *s, const struct wn_sctp_sess_cfg *cfg, uint64_t now);

/** Free what @p s holds (early chunks). No event. */
void wn_sctp_sess_fini(struct wn_sctp_sess *s);

/** Initiator: send the (enhanced) Initiate. @return 0, -EINVAL (state) or -errno of send. */
int wn_sctp_sess_start(struct wn_sctp_sess *s, uint64_t now);

/**
 * One DATA chunk's payload with its PPID, as SCTP delivered it (any order). Events and
 * ULPDUs follow from inside. @return 0, or -EPROTO when it broke the session (ERROR
 * reported).
 */
int wn_sctp_sess_input(struct wn_sctp_sess *s, uint32_t ppid, const uint8_t *buf, size_t len,
		       uint64_t now);

/**
 * Responder: accept the REQUEST with our IRD/ORD (RFC 6581 negotiation when the Initiate was
 * enhanced) and Private Data: ESTABLISHED and TX_READY, or ERROR with reject_sent when the
 * negotiation fails (an Enhanced Reject names what we can do), come from inside.
 * @return 0, -ECONNREFUSED (negotiation failed), -EINVAL (state, data).
 */
int wn_sctp_sess_accept(struct wn_sctp_sess *s, uint16_t ird, uint16_t ord, const uint8_t *pd,
			uint16_t pd_len);

/** Responder: reject the REQUEST with Private Data. @return 0 or -EINVAL. */
int wn_sctp_sess_reject(struct wn_sctp_sess *s, const uint8_t *pd, uint16_t pd_len);

/**
 * Send one ULPDU as a DDP Segment Chunk, its DDP-SSN first, gathered into @p scratch (at
 * least the MULPDU + 2 octets). @return 0, -EAGAIN (not allowed now or no room), -EMSGSIZE
 * (above the MULPDU: RFC 5043 §9), or -errno of send.
 */
int wn_sctp_sess_send(struct wn_sctp_sess *s, const struct wn_llp_ulpdu *u, uint8_t *scratch);

/**
 * End the session: our Terminate (after every chunk sent before it, by DDP-SSN). Nothing
 * more is sent. @return 0 (sent, or queued for room).
 */
int wn_sctp_sess_terminate(struct wn_sctp_sess *s);

/**
 * The owner found the session's chunks unusable (a message larger than any DDP segment):
 * ERROR as for a chunk outside the legal sequences. @return -EPROTO.
 */
int wn_sctp_sess_broken(struct wn_sctp_sess *s, const char *why);

/** The peer ended the association's sending (SCTP SHUTDOWN): EOF unless reported. */
void wn_sctp_sess_eof(struct wn_sctp_sess *s);

/**
 * Send a control message that waited for room, and check the deadlines: the setup's, and a
 * missing DDP-SSN that chunks behind it have waited for longer than the setup timeout (SCTP
 * delivers every chunk: one that never comes was lost to the peer's error, e.g. a stream it
 * may not use, RFC 4960 §6.5), which breaks the session (ERROR).
 */
void wn_sctp_sess_poll(struct wn_sctp_sess *s, uint64_t now);

/** @return the state. */
static inline enum wn_sctp_sess_state
wn_sctp_sess_state(const struct wn_sctp_sess *s)
{
	return s->state;
}

/** @return true when ULPDUs may be sent. */
static inline bool
wn_sctp_sess_tx_ok(const struct wn_sctp_sess *s)
{
	return s->state == WN_SCTP_SESS_FULL && s->ctl_len == 0;
}

/** @return true when the session is over and its control messages are out. */
static inline bool
wn_sctp_sess_done(const struct wn_sctp_sess *s)
{
	return (s->state == WN_SCTP_SESS_DONE ||
		(s->state == WN_SCTP_SESS_CLOSING && s->got_term)) && s->ctl_len == 0;
}

/** @return a constant name of @p st. */
const char *wn_sctp_sess_state_str(enum wn_sctp_sess_state st);

#ifdef __cplusplus
}
#endif

#endif /* WN_SCTP_SESS_H */
