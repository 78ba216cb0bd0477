/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The engine of one unreliable-datagram (UD) queue pair: InfiniBand's UD service, a warpnic
 * extension over UDP (wn_wire_ud.h has the wire format). No iWARP device has UD; this one
 * does between warpnic instances.
 *
 * Send: wn_ud_tx_poll() takes Sends from the SQ ring (each names its destination: the
 * address handle's GID, QP number and Q_Key, copied into the WQE), checks the local memory
 * they gather from, and gives each to the owner's send function as one message of at most
 * @c max_msg octets; the owner frames it as a datagram. A Send completes once handed over:
 * nothing is acknowledged, nothing retransmitted, nothing ordered across datagrams.
 *
 * Receive: wn_ud_rx() takes one arrived message: a Q_Key other than the QP's drops it, as
 * does a QP before RTR or without a receive posted (each counted); otherwise the receive
 * WQE gets the 40-octet GRH the owner built (wn_wire_ud_grh_from_ip()) and then the message, and
 * completes with IBV_WC_GRH, the sender's QP number and any immediate data.
 *
 * Errors: a Send longer than @c max_msg completes with IBV_WC_LOC_LEN_ERR, one whose lkey
 * does not allow the read with IBV_WC_LOC_PROT_ERR, an opcode other than Send (with or
 * without immediate data) with IBV_WC_LOC_QP_OP_ERR; a message longer than its receive
 * completes that receive with IBV_WC_LOC_LEN_ERR. The QP stays in its state: a datagram
 * service has no stream for an error to end (the verbs SQE state is not modelled). In the
 * Error state everything posted is flushed (IBV_WC_WR_FLUSH_ERR; SRQ WQEs are not the QP's);
 * RESET discards what was posted, without completions.
 *
 * Thread safety: a QP and its ring views are used by one lcore. CQs and SRQs shared with QPs
 * of other lcores need the locks of struct wn_ud_qp_conf, as in lib/rnic.
 */
#ifndef WN_UD_H
#define WN_UD_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_spinlock.h>

#include "wn_mem.h"
#include "wn_queue.h"
#include "wn_wire_ud.h"

#ifdef __cplusplus
extern "C" {
#endif

/** QP states (the verbs numbering, IBV_QPS_*). */
enum wn_ud_qp_state {
	WN_UD_QPS_RESET = 0,
	WN_UD_QPS_INIT = 1, /**< receives may be posted; nothing arrives yet */
	WN_UD_QPS_RTR = 2,  /**< datagrams are received */
	WN_UD_QPS_RTS = 3,  /**< ... and sent */
	WN_UD_QPS_SQD = 4,  /**< received; Sends wait (send queue drained) */
	WN_UD_QPS_ERROR = 6,
};

/** Smallest and largest message a UD QP may be configured for (IBV_MTU_256 .. 4096). */
#define WN_UD_MSG_MIN 256u
#define WN_UD_MSG_MAX 4096u

/** Event kinds (to the owner). */
enum wn_ud_event_type {
	WN_UD_EV_CQ_NOTIFY = 1, /**< armed CQ @c cq got a matching CQE: signal its eventfd */
	WN_UD_EV_CQ_OVERFLOW,   /**< CQ @c cq was full: a completion was lost (IBV_EVENT_CQ_ERR) */
	WN_UD_EV_SRQ_LIMIT,     /**< SRQ @c srq fell below its armed limit (now disarmed) */
};

/** An event. */
struct wn_ud_event {
	enum wn_ud_event_type type;
	struct wn_queue_ring *cq;
	struct wn_queue_ring *srq;
};

struct wn_ud_qp;

/** Event callback; runs on the QP's lcore. */
typedef void (*wn_ud_event_fn)(void *arg, struct wn_ud_qp *qp, const struct wn_ud_event *ev);

/** QP configuration; ring views are the engine's (consumer of SQ/RQ/SRQ, producer of CQs). */
struct wn_ud_qp_conf {
	uint32_t qpn;
	uint32_t pd;
	struct wn_mem_table *mem;
	struct wn_queue_ring *sq;
	struct wn_queue_ring *rq;  /**< NULL when @c srq is set */
	struct wn_queue_ring *srq;
	struct wn_queue_ring *scq;
	struct wn_queue_ring *rcq;
	rte_spinlock_t *scq_lock;  /**< NULL: the ring is this lcore's alone */
	rte_spinlock_t *rcq_lock;
	rte_spinlock_t *srq_lock;
	bool sq_sig_all;           /**< every Send completes with a CQE */
	uint32_t max_msg;          /**< largest message: the port's path MTU (WN_UD_MSG_MIN ..
				    *   WN_UD_MSG_MAX) */
	wn_ud_event_fn event;      /**< may be NULL */
	void *event_arg;
};

/** One piece of a message in memory. */
struct wn_ud_iov {
	const void *base;
	uint32_t len;
};

/** A Send for the owner to put on the wire (valid during the send function's call only). */
struct wn_ud_send {
	uint8_t dgid[16];       /**< the destination's GID (IPv4-mapped IPv4, or IPv6) */
	uint8_t sgid_index;     /**< the GID (address) to send from, as the AH named it */
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;
	struct wn_ud_msg hdr;   /**< DATA header: QP numbers, Q_Key, flags, immediate data */
	uint32_t len;           /**< message octets */
	uint32_t n_iov;
	struct wn_ud_iov iov[WN_QUEUE_MAX_SGE];
};

/**
 * The owner's send function. @return 0 when the datagram was sent, or dropped for a reason
 * the owner counted (no route, no neighbour: the Send still completes, as a datagram lost
 * on the way); -EAGAIN when it could not be built now (no buffer): the Send stays in the SQ
 * and is offered again by the next wn_ud_tx_poll().
 */
typedef int (*wn_ud_send_fn)(void *arg, struct wn_ud_qp *qp, const struct wn_ud_send *s);

/** One message that arrived for the QP (wn_ud_rx()). */
struct wn_ud_recv {
	uint32_t src_qpn;
	uint32_t qkey;
	bool has_imm;
	bool se;                /**< solicited event */
	uint32_t imm;           /**< as on the wire (network order in memory) */
	const uint8_t *grh;     /**< WN_UD_GRH_LEN octets */
	uint32_t len;           /**< message octets, in @c iov */
	uint32_t n_iov;
	const struct wn_ud_iov *iov;
};

/** Counters of one QP. */
struct wn_ud_stats {
	uint64_t tx_msgs;       /**< Sends handed to the owner */
	uint64_t tx_bytes;
	uint64_t tx_errors;     /**< Sends completed in error (length, lkey, opcode) */
	uint64_t rx_msgs;       /**< messages placed */
	uint64_t rx_bytes;
	uint64_t rx_drop_qkey;  /**< Q_Key mismatch */
	uint64_t rx_drop_state; /**< the QP not in RTR, RTS or SQD */
	uint64_t rx_drop_norecv; /**< no receive posted */
	uint64_t rx_drop_bad;   /**< the client's receive ring was corrupt (indices or a WQE) */
	uint64_t rx_len_errors; /**< messages longer than their receive (LOC_LEN_ERR) */
	uint64_t rx_prot_errors; /**< receives whose lkeys do not allow the write (LOC_PROT_ERR) */
	uint64_t cqe;
	uint64_t cqe_lost;      /**< completions a full CQ could not take */
	uint64_t wqe_flushed;
};

/**
 * Create a UD QP engine in RESET with Q_Key 0.
 * @return the QP, or NULL with errno EINVAL (missing rings, @c max_msg out of range) or
 *   ENOMEM. Any thread; then the owning lcore.
 */
struct wn_ud_qp *wn_ud_qp_create(const struct wn_ud_qp_conf *conf);

/** Free a QP (no completions are written). NULL: no-op. The owning lcore. */
void wn_ud_qp_destroy(struct wn_ud_qp *qp);

/**
 * Move the QP to @p state, as the control path says (it checked the transition). ERROR
 * flushes the SQ and RQ now; RESET discards what they hold (SRQ WQEs are not the QP's).
 * @return 0 or -EINVAL (not an enum wn_ud_qp_state). The owning lcore.
 */
int wn_ud_qp_set_state(struct wn_ud_qp *qp, enum wn_ud_qp_state state);

/** Set the QP's Q_Key (IBV_QP_QKEY). The owning lcore. */
void wn_ud_qp_set_qkey(struct wn_ud_qp *qp, uint32_t qkey);

/** @return the QP's Q_Key. The owning lcore. */
uint32_t wn_ud_qp_qkey(const struct wn_ud_qp *qp);

/** @return the QP's state. The owning lcore. */
enum wn_ud_qp_state wn_ud_qp_state(const struct wn_ud_qp *qp);

/** @return the QP's number. Any thread. */
uint32_t wn_ud_qp_num(const struct wn_ud_qp *qp);

/**
 * Hand up to @p budget Sends to @p send (RTS only).
 * @return Sends taken from the SQ (completed, in error or not). The owning lcore.
 */
unsigned int wn_ud_tx_poll(struct wn_ud_qp *qp, unsigned int budget, wn_ud_send_fn send,
			   void *arg);

/**
 * A message for this QP.
 * @return 0 (placed, or its receive completed in error: rx_len_errors, rx_prot_errors),
 *   -EPERM (Q_Key mismatch), -ENOTCONN (not receiving: RESET, INIT, ERROR), -ENOBUFS (no
 *   receive posted), -EPROTO (the client's ring is corrupt: its indices or a WQE); all but 0
 *   drop it and are counted. The owning lcore.
 */
int wn_ud_rx(struct wn_ud_qp *qp, const struct wn_ud_recv *r);

/**
 * In ERROR: complete what was posted since the last flush with IBV_WC_WR_FLUSH_ERR.
 * @return WQEs flushed (0 in other states). The owning lcore.
 */
unsigned int wn_ud_qp_flush(struct wn_ud_qp *qp);

/**
 * @return true when the SQ holds Sends the QP can send (RTS): its owner keeps polling it.
 * The owning lcore.
 */
bool wn_ud_tx_pending(struct wn_ud_qp *qp);

/** Read the counters. The owning lcore (or any thread accepting torn reads). */
void wn_ud_qp_stats(const struct wn_ud_qp *qp, struct wn_ud_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* WN_UD_H */
