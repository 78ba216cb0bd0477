/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The RDMAP/DDP engine of one queue pair (RFC 5040, RFC 5041, RFC 7306, RFC 6581 RTR),
 * independent of TCP and MPA.
 *
 * Input: whole ULPDUs (DDP segments) from the MPA deframer, wn_rnic_rx().
 * Output: ULPDUs (struct wn_llp_ulpdu: a header plus a gather list pointing into registered
 * memory, valid only during the call) to the lower layer, wn_llp_send(); CQEs into the CQ rings;
 * events through the @c event callback.
 *
 * Send side: wn_rnic_tx_poll() answers the peer first (Terminate, then Read Responses and
 * Atomic Responses in request order, RFC 5040 §5.5 rule 12, RFC 7306 §5.4) and then works
 * through the SQ: each WQE becomes one message segmented to the MULPDU (RFC 5041 §5.2).
 * RDMA Reads and atomics hold an ORD slot until their response is delivered (RFC 5040 §6.1);
 * a WQE with the FENCE flag waits until none is outstanding. Send-queue completions are
 * reported in SQ order (a Send after a Read completes after the Read).
 *
 * Receive side: untagged QN 0 messages (Send, Immediate Data) are placed into the RQ (or
 * SRQ) WQE taken when the message starts, at MO; QN 1 Read/Atomic Requests go to the
 * responder queue (at most IRD); QN 2 is the Terminate; QN 3 Atomic Responses. Tagged Write
 * and Read Response segments are placed after lib/mem checks. Every check happens before any
 * byte is copied, and every violation sends one Terminate (RFC 5040 §7, Fig. 10) and moves
 * the QP to TERMINATE; later input is dropped (RFC 5041 §7.1).
 *
 * The engine assumes the LLP delivers ULPDUs in order (TCP/MPA): messages on one QN complete
 * in MSN order and a segment of a message other than the current one on QN 0/1/3 is an MSN
 * error (RFC 5041 §7.1 "MSN range not valid").
 *
 * Thread safety: a QP and its SQ/RQ views are used by one lcore only. CQs and SRQs shared
 * by QPs of different lcores need the locks of struct wn_rnic_qp_conf (one view and one lock
 * per ring, shared by those QPs). The region table is shared (see wn_mem.h).
 */
#ifndef WN_RNIC_H
#define WN_RNIC_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_spinlock.h>

#include "wn_llp.h"
#include "wn_mem.h"
#include "wn_queue.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wn_rnic_qp;

/** iWARP QP states (RFC 5040 §6; RDMAC verbs). */
enum wn_rnic_qp_state {
	WN_RNIC_QPS_IDLE = 0,  /**< created, LLP not in RDMA mode yet (verbs INIT/RTR) */
	WN_RNIC_QPS_RTS,       /**< RDMA mode: sending and receiving */
	WN_RNIC_QPS_CLOSING,   /**< graceful close: no new WQEs start, in-flight ones finish */
	WN_RNIC_QPS_TERMINATE, /**< a Terminate was sent or received; waiting for LLP close */
	WN_RNIC_QPS_ERROR,     /**< LLP closed or fatal error: everything flushed */
};

/** MULPDU limits the engine accepts (RFC 5044 §4.5; same as config/wn_config.h). */
#define WN_RNIC_MULPDU_MIN 128
#define WN_RNIC_MULPDU_MAX 64768

/** Most gather pieces of one ULPDU's payload (struct wn_llp_ulpdu). */
#define WN_RNIC_MAX_IOV WN_LLP_MAX_IOV
static_assert(WN_LLP_MAX_IOV >= WN_QUEUE_MAX_SGE, "a WQE's SGEs fit one ULPDU's gather list");

/** Event kinds. */
enum wn_rnic_event_type {
	WN_RNIC_EV_STATE = 1,  /**< @c state changed */
	WN_RNIC_EV_TERM_SENT,  /**< a Terminate with @c term went out */
	WN_RNIC_EV_TERM_RECV,  /**< the peer's Terminate with @c term arrived (RFC 5040 §5.4) */
	WN_RNIC_EV_CQ_NOTIFY,  /**< armed CQ @c cq got a matching CQE: signal its eventfd */
	WN_RNIC_EV_RTR_RECV,   /**< the peer's RFC 6581 RTR message arrived */
	WN_RNIC_EV_CQ_OVERFLOW, /**< CQ @c cq was full; the QP went to ERROR */
	WN_RNIC_EV_SRQ_LIMIT,  /**< SRQ @c srq fell below its armed limit (now disarmed) */
};

/** An event. */
struct wn_rnic_event {
	enum wn_rnic_event_type type;
	enum wn_rnic_qp_state state;
	struct wn_mem_term term;
	struct wn_queue_ring *cq;
	struct wn_queue_ring *srq;
};

/** Event callback; runs on the QP's lcore. */
typedef void (*wn_rnic_event_fn)(void *arg, struct wn_rnic_qp *qp,
				 const struct wn_rnic_event *ev);

/**
 * Send with Immediate (IBV_WR_SEND_WITH_IMM) on the wire: an RFC 7306 Immediate Data
 * message whose 64-bit Immediate Data is this value in the high 32 bits and the verbs
 * immediate in the low 32 (ASCII "SEND" + imm), then the Send carrying the payload. The
 * receiver takes one receive WQE for the pair: the Immediate Data opens it, the Send that
 * follows fills it and completes it (IBV_WC_RECV with IBV_WC_WITH_IMM, the Send's length).
 * Write with Immediate sends the high half as zero. See lib/rnic/README.md.
 */
#define WN_RNIC_IMM_SEND_FOLLOWS 0x53454e44u

/** RFC 6581 §7.1 RTR message types (bit mask). */
#define WN_RNIC_RTR_SEND  (1u << 0) /**< zero-length Send */
#define WN_RNIC_RTR_WRITE (1u << 1) /**< zero-length RDMA Write */
#define WN_RNIC_RTR_READ  (1u << 2) /**< zero-length RDMA Read */

/** QP configuration; ring views are the engine's side (consumer of SQ/RQ/SRQ, producer of CQs). */
struct wn_rnic_qp_conf {
	uint32_t qpn;
	uint32_t pd;
	struct wn_mem_table *mem;
	struct wn_queue_ring *sq;
	struct wn_queue_ring *rq;  /**< NULL when @c srq is set */
	struct wn_queue_ring *srq;
	struct wn_queue_ring *scq;
	struct wn_queue_ring *rcq;
	uint32_t mulpdu;      /**< largest ULPDU (RFC 5044 §4.5); see wn_rnic_set_mulpdu() */
	uint32_t ord;         /**< outstanding Reads + Atomics we may issue (>= 1) */
	uint32_t ird;         /**< inbound Reads + Atomics we accept at once (>= 1) */
	bool sq_sig_all;      /**< every send WQE completes with a CQE */
	bool rfc7306;         /**< peer speaks RFC 7306 (atomics, immediate data) */
	uint32_t rtr_recv;    /**< RFC 6581: RTR types the peer may send first (absorbed) */
	/**
	 * Receiver not ready: a Send (or Immediate Data) that starts a message while no receive
	 * is posted is not answered with a Terminate (RFC 5041 §7.1) at once; wn_rnic_rx()
	 * returns -EAGAIN and changes nothing, and the owner holds the stream (the lower layer
	 * keeps the ULPDU, WN_LLP_F_RX_HOLD) until a receive is posted (wn_rnic_rx_ready()) or
	 * it gives up (wn_rnic_rnr_expire()). false: the Terminate at once.
	 */
	bool rnr_hold;
	/**
	 * InfiniBand RC completions (a QP connected InfiniBand-style, wn_cm.h): the lower layer
	 * holds a Send's or Write's completion until the peer has its data
	 * (wn_llp_ack_completions()), and a Terminate received completes the oldest send WQE
	 * not completed yet with the remote error it reports (IBV_WC_REM_ACCESS_ERR for a
	 * protection or tagged buffer error, REM_INV_REQ_ERR or RNR_RETRY_EXC_ERR for untagged
	 * ones, REM_OP_ERR otherwise; vendor_err the cause) instead of WR_FLUSH_ERR, as the
	 * responder's NAK completes it on InfiniBand.
	 */
	bool ib_rc;
	/**
	 * ib_rc: the QP's remote rights (WN_MEM_ACCESS_REMOTE_WRITE, _READ, _ATOMIC; verbs'
	 * IBV_QP_ACCESS_FLAGS): an incoming Write, Read or Atomic the QP does not allow is
	 * refused as one the region does not allow (RDMAP Remote Protection, access rights).
	 */
	uint32_t qp_access;
	/**
	 * The lower layer the ULPDUs go to (wn_llp_send(); WN_LLP_TX_HELD holds the WQE's
	 * completion until wn_rnic_tx_release(), in SQ order; -EAGAIN: offered again on the next
	 * wn_rnic_tx_poll()). Received ULPDUs come the other way through wn_rnic_rx().
	 */
	struct wn_llp *llp;
	wn_rnic_event_fn event; /**< may be NULL */
	void *event_arg;
	/**
	 * Locks of rings shared with QPs on other lcores (NULL: the ring is used by this
	 * lcore only, no locking). A CQ ring has one producer index and an SRQ one consumer
	 * index, so engines on different lcores that share one serialise on its lock; the
	 * same lock must be given to every QP using that ring.
	 */
	rte_spinlock_t *scq_lock;
	rte_spinlock_t *rcq_lock;
	rte_spinlock_t *srq_lock;
};

/**
 * Create a QP engine in IDLE.
 * @return the QP, or NULL with errno EINVAL (missing rings/callback, ord/ird 0, MULPDU out of
 *   WN_RNIC_MULPDU_MIN..WN_RNIC_MULPDU_MAX) or ENOMEM. Control thread or the owning lcore.
 */
struct wn_rnic_qp *wn_rnic_qp_create(const struct wn_rnic_qp_conf *conf);

/** Free a QP (no CQEs are written). NULL: no-op. The owning lcore, or after it stopped. */
void wn_rnic_qp_destroy(struct wn_rnic_qp *qp);

/** @return the QP's state. Owning lcore. */
enum wn_rnic_qp_state wn_rnic_qp_state(const struct wn_rnic_qp *qp);

/**
 * The verbs state (enum ibv_qp_state numbering) reported for an iWARP state, as RDMAC verbs
 * map them: IDLE → INIT (1), RTS → RTS (3), CLOSING → SQD (4, draining), TERMINATE → SQE
 * (5, send queue error), ERROR → ERR (6). Any thread.
 */
static inline uint32_t
wn_rnic_qp_state_ibv(enum wn_rnic_qp_state s)
{
	static const uint8_t map[] = {
		[WN_RNIC_QPS_IDLE] = 1, [WN_RNIC_QPS_RTS] = 3, [WN_RNIC_QPS_CLOSING] = 4,
		[WN_RNIC_QPS_TERMINATE] = 5, [WN_RNIC_QPS_ERROR] = 6,
	};

	return (unsigned int)s < sizeof(map) ? map[s] : 6;
}

/**
 * Enter RDMA mode (IDLE → RTS), after MPA negotiation.
 * @return 0 or -EINVAL (not IDLE). Owning lcore.
 */
int wn_rnic_qp_start(struct wn_rnic_qp *qp);

/**
 * Graceful close (RTS → CLOSING): no new WQEs start; the caller closes the LLP once
 * wn_rnic_qp_idle() is true and then calls wn_rnic_qp_disconnect().
 * @return 0 or -EINVAL. Owning lcore.
 */
int wn_rnic_qp_close(struct wn_rnic_qp *qp);

/** @return true when nothing is in flight (no partial message, no outstanding read). */
bool wn_rnic_qp_idle(const struct wn_rnic_qp *qp);

/**
 * The LLP is gone (or the ULP moved the QP to error): enter ERROR and flush every WQE not
 * completed, SQ in order then RQ, with IBV_WC_WR_FLUSH_ERR (SRQ WQEs stay in the SRQ).
 * Owning lcore.
 */
void wn_rnic_qp_disconnect(struct wn_rnic_qp *qp);

/**
 * The connection never came (an InfiniBand-style QP whose retry budget ran out): as
 * wn_rnic_qp_disconnect(), but the first send WQE not completed completes with @p status
 * (WN_QUEUE_WC_RETRY_EXC_ERR: what InfiniBand's retry exhaustion gives) instead of
 * WR_FLUSH_ERR. Owning lcore.
 */
void wn_rnic_qp_fail(struct wn_rnic_qp *qp, uint8_t status);

/**
 * The layer below failed (e.g. an MPA CRC or Marker error, RFC 5044 §8): queue one Terminate
 * with cause (@p layer, @p etype, @p code) carrying no headers (RFC 5040 Fig. 10: LLP
 * errors) and enter TERMINATE; wn_rnic_tx_poll() sends it first. Only the first error of a
 * stream is reported (RFC 5040 §7.1).
 * @return 0, or -EINVAL (IDLE or ERROR: no RDMA stream to report on). Owning lcore.
 */
int wn_rnic_terminate(struct wn_rnic_qp *qp, uint8_t layer, uint8_t etype, uint8_t code);

/**
 * In ERROR: complete the WQEs posted since the last flush with IBV_WC_WR_FLUSH_ERR (verbs:
 * work requests posted to a QP in the Error state are flushed). Poll it while the QP exists.
 * @return WQEs flushed (0 when not in ERROR). Owning lcore.
 */
unsigned int wn_rnic_qp_flush(struct wn_rnic_qp *qp);

/** Change the MULPDU (MPA renegotiation, path MTU change). @return 0 or -EINVAL. */
int wn_rnic_set_mulpdu(struct wn_rnic_qp *qp, uint32_t mulpdu);

/**
 * Process one ULPDU from the MPA deframer (whole, CRC already checked).
 * @return 0; -EPROTO when it was rejected (a Terminate is queued and the QP is in
 *   TERMINATE); -ENOTCONN when the QP does not accept input (dropped silently: IDLE, after a
 *   Terminate, ERROR). Owning lcore.
 */
int wn_rnic_rx(struct wn_rnic_qp *qp, const uint8_t *ulpdu, size_t len);

/**
 * Place a DDP segment that arrived out of order (the lower layer found it behind a hole,
 * RFC 5044 §4.3 Markers; RFC 5041 §5.4 lets DDP place out of order): an RDMA Write into a
 * registered MR (not a window or fast-register MR, which a Send with Invalidate still in
 * the hole could invalidate first), or a Send's payload into the receive it will take from
 * the QP's own RQ (its MSN names it; not an SRQ, shared with other QPs). Every check of the
 * in-order path runs first; anything in doubt is left alone. Nothing else changes: no
 * completion, no state, no Terminate; the segment must still be given to wn_rnic_rx() in
 * order, which places the same octets again and completes.
 * @return payload octets placed (0: left for the in-order pass). Owning lcore.
 */
int wn_rnic_rx_place(struct wn_rnic_qp *qp, const uint8_t *ulpdu, size_t len);

/**
 * After wn_rnic_rx() returned -EAGAIN (a Send waiting for a receive, @c rnr_hold): may the
 * held ULPDU be offered again? @return true when a receive is posted (RQ or SRQ), or the QP
 * no longer takes ULPDUs (they are dropped). Owning lcore.
 */
bool wn_rnic_rx_ready(struct wn_rnic_qp *qp);

/**
 * Give up waiting for a receive: the held Send, offered again, gets the Terminate of RFC
 * 5041 §7.1 (untagged buffer: no buffer), as without @c rnr_hold. Owning lcore.
 */
void wn_rnic_rnr_expire(struct wn_rnic_qp *qp);

/**
 * Emit up to @p budget ULPDUs: a pending Terminate, responses, then SQ work. Also starts
 * local WQEs (fast-register, bind, local invalidate).
 * @return ULPDUs handed to the lower layer. Owning lcore.
 */
unsigned int wn_rnic_tx_poll(struct wn_rnic_qp *qp, unsigned int budget);

/**
 * After wn_rnic_tx_poll(): has the engine nothing left to send or complete on its own (no
 * Terminate, response or message under way, no finished WQE waiting for its completion)?
 * Then only new SQ entries, a received ULPDU or a released zero-copy payload give it work,
 * and its owner may stop polling it until one of those happens. Owning lcore.
 */
bool wn_rnic_tx_idle(const struct wn_rnic_qp *qp);

/**
 * The layer below is done with the payload of one ULPDU wn_llp_send() took with
 * WN_LLP_TX_HELD for SQ WQE @p wqe (zero-copy transmit: TCP has it acknowledged and no mbuf
 * references it). When a WQE's last reference goes, its completion is reported, in SQ order
 * (RFC 5040 §5.1: a later WQE never completes before an earlier one). Releases for a QP in
 * ERROR (everything was flushed) or for an index not in flight are ignored. Owning lcore.
 */
void wn_rnic_tx_release(struct wn_rnic_qp *qp, uint32_t wqe);

/**
 * Send the RFC 6581 §7.1 RTR message of @p type (one WN_RNIC_RTR_* bit) before any WQE.
 * A zero-length Read's response is absorbed (no CQE).
 * @return 0, -EINVAL (type, or not RTS), -EBUSY (ORD full), -EAGAIN (tx full: retry).
 */
int wn_rnic_send_rtr(struct wn_rnic_qp *qp, uint32_t type);

/** Counters of one QP. */
struct wn_rnic_stats {
	uint64_t rx_ulpdu;
	uint64_t tx_ulpdu;
	uint64_t rx_bytes_placed;
	uint64_t tx_payload;
	uint64_t cqe;
	uint64_t terminates_sent;
	uint64_t terminates_recv; /**< the peer's Terminate (at most one per stream) */
	uint64_t wqe_flushed;  /**< completions with WR_FLUSH_ERR (SQ and RQ) */
	uint64_t ord_stalls;   /**< SQ waits because ORD was full */
	uint64_t tx_held;      /**< ULPDUs whose payload was referenced (WN_LLP_TX_HELD) */
	uint64_t cqe_held;     /**< completions that waited for a release */
	uint64_t rnr_holds;    /**< Sends that found no receive and waited (@c rnr_hold) */
	uint64_t rnr_timeouts; /**< ... of them given up: Terminate (wn_rnic_rnr_expire()) */
	uint64_t ooo_placed;   /**< segments placed out of order (wn_rnic_rx_place()) */
	uint64_t ooo_bytes;    /**< ... their payload octets */
};

/** Read the counters. Owning lcore. */
void wn_rnic_qp_stats(const struct wn_rnic_qp *qp, struct wn_rnic_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* WN_RNIC_H */
