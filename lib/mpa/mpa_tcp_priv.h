/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/mpa internals of MPA over TCP (wn_mpa_tcp.h): the instance, its streams and tokens. */
#ifndef MPA_TCP_PRIV_H
#define MPA_TCP_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "wn_config.h"
#include "wn_mpa.h"
#include "wn_mpa_tcp.h"

extern int wn_mpa_logtype;
#define MPA_LOG(lvl, ...) rte_log(RTE_LOG_##lvl, wn_mpa_logtype, "mpa: " __VA_ARGS__)

/* Startup timers and deferred frees run at most this often. */
#define TICK_US 1000u
/* Tokens (messages referenced, by reference or zero-copy) of the whole process. */
#define ZC_TOKENS 65535
/* Gather pieces of one FPDU (length, header, payload pieces split by Markers, PAD, CRC). */
#define ZC_SG_MAX 64
/* Zero-copy tokens drained per poll. */
#define ZC_BURST 32

struct mpa_stream;

/*
 * One message whose FPDUs TCP references (by reference or zero-copy): MPA's reference while it
 * is open (more FPDUs may follow), TCP's per record and one per mbuf count in @c sh. Its WQE is
 * released once TCP's SND.UNA passes its last FPDU (the peer has it: a NIC is done reading it
 * for that transmission), its region pins only when the last reference goes: a NIC's PMD may
 * keep a transmitted mbuf until it needs the descriptor again (virtio, e1000), and a
 * retransmission still queued for octets already ACKed is discarded by the peer's TCP whatever
 * it carries.
 */
struct mpa_zc {
	struct rte_mbuf_ext_shared_info sh;
	struct rte_ring *done;      /* the owning instance's ring */
	struct mpa_stream *s;
	TAILQ_ENTRY(mpa_zc) q;      /* in s->zc_acks while @c queued */
	uint32_t end_seq;           /* TCP sequence number after its last FPDU so far */
	uint32_t wqe;
	uint8_t src;                /* enum wn_llp_src of the message */
	bool attach;                /* zero-copy: attached to mbufs (else copied into them) */
	bool queued;                /* waits in s->zc_acks for its ACK */
	bool held;                  /* the owner holds WQE @c wqe's completion */
	bool used;                  /* TCP took an FPDU of it (counted in tokens) */
	uint8_t n_pins;
	uint32_t pins[WN_LLP_MAX_IOV];
};

/* A copied message's WQE whose completion waits for the peer's ACK (ack_completions). */
struct mpa_ackw {
	uint32_t end_seq;           /* TCP sequence number after its last FPDU */
	uint32_t wqe;
};

struct mpa_proto {
	struct wn_llp_proto base;   /* first: the wrappers' view */
	struct wn_mpa_tcp_conf c;
	TAILQ_HEAD(, mpa_stream) streams;
	/*
	 * Streams in MPA startup, in the order they started: their deadlines (start + the
	 * one timeout) are in that order too, so the tick looks at the head only. And streams
	 * done with (TCP gone, released, no zero-copy token out), freed by the next tick.
	 */
	TAILQ_HEAD(, mpa_stream) startup, dead;
	TAILQ_HEAD(, mpa_listener) listeners;
	TAILQ_HEAD(, mpa_stream) ackw_due; /* streams with acknowledged WQEs to release */
	uint32_t n_streams;
	struct rte_ring *zc_done;   /* tokens' ring; NULL: nothing is referenced (all copied) */
	bool ref;                   /* registered memory by reference (conf.ref_tx) */
	bool attach;                /* ... or zero-copy (conf.zero_copy) */
	uint64_t now, last_tick;
};

struct mpa_listener {
	TAILQ_ENTRY(mpa_listener) next;
	struct mpa_proto *p;
	struct wn_tcp_listener *tl;
	wn_llp_incoming_fn incoming;
	void *arg;
};

struct mpa_stream {
	struct wn_llp l;            /* first: the wrappers' and the owner's view */
	struct mpa_proto *p;
	TAILQ_ENTRY(mpa_stream) next;
	TAILQ_ENTRY(mpa_stream) tnext; /* in p->startup or p->dead */
	bool on_startup, on_dead;
	struct wn_tcp_conn *tcp;    /* NULL once TCP is gone */
	struct wn_mpa_conn mpa;
	struct wn_llp_req req;      /* initiator: the Request's IRD/ORD and Private Data */
	uint8_t rev;                /* initiator: MPA revision of the Request (0: the policy) */
	bool started;               /* MPA startup begun */
	bool record_mode;           /* TCP segments on FPDU boundaries */
	bool tx_ok;                 /* MPA lets us send FPDUs (fencing, RFC 5044 §7.1.2) */
	bool full;                  /* ESTABLISHED reported */
	bool released;              /* the owner is done: no more upcalls */
	bool gone;                  /* TCP closed */
	bool in_input;              /* wn_mpa_rx_input() is feeding MPA (an upcall may accept) */
	struct wn_llp_params params;
	struct wn_tcp_endpoint local, remote;
	uint8_t *rxbuf;             /* one ULPDU being gathered */
	struct wn_mpa_gather gather;
	bool rx_held;               /* the owner refused the ULPDU in rxbuf (WN_LLP_F_RX_HOLD) */
	uint16_t held_len;
	uint8_t *ooobuf;            /* one ULPDU found out of order through Markers */
	struct wn_mpa_gather ooo;
	uint8_t *txbuf;             /* one FPDU being framed */
	uint32_t txcap;
	uint32_t zc_out;            /* tokens not back yet (freed only at 0) */
	struct mpa_zc *tx_tok;      /* the open token: its message's FPDUs so far */
	TAILQ_HEAD(, mpa_zc) zc_acks; /* held tokens in send order, until SND.UNA passes them */
	uint64_t tx_ulpdus;
	/* ack completions (wn_llp_ack_completions): held WQEs in send order, a ring */
	bool ack_completions;
	struct mpa_ackw *ackw;
	uint32_t ackw_head, ackw_tail, ackw_cap; /* free-running indexes; cap a power of 2 */
	uint32_t ackw_una;          /* SND.UNA as TCP last reported it */
	bool ackw_queued;           /* in p->ackw_due */
	TAILQ_ENTRY(mpa_stream) ackw_next;
};

static inline struct mpa_stream *
mpa_stream_of(struct wn_llp *l)
{
	return (struct mpa_stream *)l;
}

static inline const struct mpa_stream *
mpa_stream_of_const(const struct wn_llp *l)
{
	return (const struct mpa_stream *)l;
}

static inline void
wn_mpa_up_event(struct mpa_stream *s, struct wn_llp_event *ev)
{
	if (!s->released && s->l.up != NULL && s->l.up->event != NULL)
		s->l.up->event(s->l.up_arg, &s->l, ev);
}

static inline void
wn_mpa_update_ready(struct mpa_stream *s)
{
	s->l.tx_ready = s->tcp != NULL && s->tx_ok && s->record_mode;
}

/* The stream leaves the startup list (its MPA startup is over or it is gone). */
static inline void
wn_mpa_startup_leave(struct mpa_stream *s)
{
	if (s->on_startup) {
		TAILQ_REMOVE(&s->p->startup, s, tnext);
		s->on_startup = false;
	}
}

/* Free the stream at the next tick once nothing refers to it any more. */
static inline void
wn_mpa_stream_maybe_dead(struct mpa_stream *s)
{
	if (s->on_dead || !s->gone || !s->released || s->zc_out != 0)
		return;
	wn_mpa_startup_leave(s);
	s->on_dead = true;
	TAILQ_INSERT_TAIL(&s->p->dead, s, tnext);
}

/* mpa_tcp_startup.c */
uint32_t wn_mpa_stream_mulpdu(const struct mpa_stream *s);
void wn_mpa_flush_startup(struct mpa_stream *s);
int wn_mpa_stream_start(struct mpa_stream *s);
bool wn_mpa_enh_unanswered(const struct mpa_stream *s);

/* mpa_tcp_rx.c */
int wn_mpa_rx_ulpdu(void *arg, const uint8_t *ulpdu, uint16_t len, enum wn_mpa_err verdict);
void wn_mpa_rx_input(struct mpa_stream *s);
void wn_mpa_rx_recv(struct wn_tcp_conn *tc, void *arg);
uint32_t wn_mpa_rx_seg(struct wn_tcp_conn *tc, void *arg, const uint8_t *data, uint32_t len);
void wn_mpa_rx_eof(struct wn_tcp_conn *tc, void *arg);
int wn_mpa_rx_resume(struct wn_llp *l);

/* mpa_tcp_ooo.c */
void wn_mpa_ooo_recv(struct wn_tcp_conn *tc, void *arg, uint32_t seq, const uint8_t *data,
		     uint32_t len);

/* mpa_tcp_tx.c */
int wn_mpa_tx_send(struct wn_llp *l, const struct wn_llp_ulpdu *u);

/* mpa_tcp_zc.c */
void wn_mpa_zc_sent(struct wn_tcp_conn *tc, void *arg, uint32_t acked);
unsigned int wn_mpa_zc_poll(struct mpa_proto *p);
int wn_mpa_ackw_push(struct mpa_stream *s, uint32_t wqe);
void wn_mpa_ackw_release(struct mpa_stream *s);
int wn_mpa_zc_send(struct mpa_stream *s, const struct wn_llp_ulpdu *u, bool attach);
void wn_mpa_zc_close(struct mpa_stream *s);
int wn_mpa_zc_init(struct mpa_proto *p);

#endif /* MPA_TCP_PRIV_H */
