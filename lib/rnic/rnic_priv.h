/* SPDX-License-Identifier: BSD-3-Clause */
/* Private state of the RDMAP/DDP engine (see wn_rnic.h). */
#ifndef RNIC_PRIV_H
#define RNIC_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_log.h>

#include "wn_mem.h"
#include "wn_queue.h"
#include "wn_rnic.h"
#include "wn_wire_ddp.h"

extern int wn_rnic_logtype;
#define RNIC_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, wn_rnic_logtype, "rnic: " fmt "\n", ##__VA_ARGS__)

/* Completion state of one send WQE, indexed by SQ index & mask. */
struct sq_pend {
	uint64_t wr_id;
	uint8_t wc_opcode;
	uint8_t signaled;
	uint8_t done;
	uint8_t status;
	uint8_t waited;   /* was done while held (counted in cqe_held once) */
	uint32_t holds;   /* ULPDUs taken with WN_LLP_TX_HELD and not released yet */
	uint32_t byte_len;
	uint32_t vendor_err;
};

/* An outstanding Read or Atomic Request we issued (ORD, RFC 5040 §6.1). */
enum { ORD_READ = 1, ORD_ATOMIC, ORD_RTR_READ };
struct ord_ent {
	uint8_t kind;
	uint32_t sq_idx;
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t size;
	uint32_t got;
	uint32_t req_id;
	uint32_t res_lkey;
	uint64_t res_addr;
};

/* An inbound Read or Atomic Request waiting for its response (IRD). */
enum { IRD_READ = 1, IRD_ATOMIC };
struct ird_ent {
	uint8_t kind;
	uint8_t executed; /* atomic done, @c orig valid */
	uint32_t sent;    /* read: octets answered so far */
	struct wn_rdmap_read_req rr;
	struct wn_rdmap_atomic_req ar;
	uint64_t orig;
};

/* The receive WQE of the QN 0 message being placed. */
struct rq_cur {
	bool active;
	uint64_t wr_id;
	uint32_t num_sge;
	uint64_t total;
	/* Send with Immediate: the Immediate Data came (WN_RNIC_IMM_SEND_FOLLOWS), the Send
	 * that follows completes this WQE with it */
	bool imm_wait;
	bool imm_se;
	uint32_t imm_data;  /* network byte order, as the CQE carries it */
	struct wn_queue_sge sge[WN_QUEUE_MAX_SGE];
};

/* Which kind of outbound message is in progress (messages are never interleaved). */
enum { TXO_NONE = 0, TXO_RESP, TXO_SQ };

struct wn_rnic_qp {
	struct wn_rnic_qp_conf c;
	enum wn_rnic_qp_state state;
	struct wn_rdmap_op ops[WN_RDMAP_OPCODE_COUNT];
	unsigned int parse_flags;
	struct wn_rnic_stats st;

	/* transmit */
	uint32_t msn_tx[4];  /* next MSN per QN (RFC 5041 §5.4: the first is 1) */
	uint32_t sq_fetch;   /* next SQ index to start; sq->head is the next to complete */
	struct sq_pend *pend;
	uint8_t tx_owner;
	bool cur_active;
	uint8_t cur_phase;   /* 0: the message; 1: Immediate Data after a Write; 2: Immediate
			      * Data before a Send (Send with Immediate) */
	uint32_t cur_idx;
	uint32_t cur_off;
	uint32_t cur_len;
	union {
		struct wn_queue_swqe w;
		uint8_t raw[WN_QUEUE_SWQE_HDR + WN_QUEUE_MAX_INLINE];
	} cur;
	struct ord_ent *ord;
	uint32_t ord_head, ord_tail;
	struct ird_ent *ird;
	uint32_t ird_head, ird_tail;
	uint32_t atomic_req_id;
	struct wn_mem_cached tx_mem; /* the region the current message's FPDUs come from */

	/* Terminate (RFC 5040 §5.4: exactly one per stream) */
	bool term_pending;
	uint8_t fail_status;  /* wn_rnic_qp_fail(): the status of the next send completion */
	bool term_done;
	struct wn_llp_ulpdu term;
	struct wn_mem_term term_cause;

	/* receive */
	uint32_t msn_rx[4];  /* expected MSN per QN */
	struct rq_cur rq;
	uint32_t write_bytes;
	uint32_t last_write_len;
	uint32_t rtr_pending;
	bool rx_first;
	bool rnr_waiting;    /* the last wn_rnic_rx() was a Send held for a receive */
	bool rnr_expired;    /* wn_rnic_rnr_expire(): no more holding */
	struct wn_mem_cached rx_mem; /* the region the last tagged segment was placed into */
	struct wn_mem_cached rx_rq_mem; /* ... and the last receive's */
};

/* comp.c: what rnic_rx.c and tx.c share (qp.c, the life cycle, sits above) */
void wn_rnic_set_state(struct wn_rnic_qp *qp, enum wn_rnic_qp_state s);
int wn_rnic_post_cqe(struct wn_rnic_qp *qp, struct wn_queue_ring *cq, const struct wn_queue_cqe *e,
		  bool solicited);
void wn_rnic_complete_sq(struct wn_rnic_qp *qp);
/* tx.c: send the pending Terminate now; @return 1 when it went (or none was pending), 0 */
int wn_rnic_send_term(struct wn_rnic_qp *qp);
void wn_rnic_event_post(struct wn_rnic_qp *qp, const struct wn_rnic_event *ev);
void wn_rnic_queue_term(struct wn_rnic_qp *qp, uint8_t layer, uint8_t etype, uint8_t code,
		     const uint8_t *bad, size_t bad_len);
int wn_rnic_take_rwqe(struct wn_rnic_qp *qp);

static inline uint32_t
rnic_vendor_err(uint8_t layer, uint8_t etype, uint8_t code)
{
	return (uint32_t)layer << 12 | (uint32_t)etype << 8 | code;
}

static inline uint32_t
rnic_ord_count(const struct wn_rnic_qp *qp)
{
	return qp->ord_tail - qp->ord_head;
}

static inline uint32_t
rnic_ird_count(const struct wn_rnic_qp *qp)
{
	return qp->ird_tail - qp->ird_head;
}

/* rnic_rx.c */
void wn_rnic_rx_table_init(struct wn_rnic_qp *qp);

#endif /* RNIC_PRIV_H */
