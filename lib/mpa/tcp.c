/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA over TCP as a DDP lower layer (wn_mpa_tcp.h, wn_llp.h): one TCP connection and one MPA
 * connection per stream; the startup exchange, record-mode transmit of FPDUs (copied or
 * zero-copy) and whole-ULPDU receive.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_bitops.h>
#include <rte_common.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_tailq.h>

#include "wn_config.h"
#include "wn_mpa.h"
#include "wn_mpa_tcp.h"

RTE_LOG_REGISTER_DEFAULT(wn_mpa_logtype, NOTICE);
#define MPA_LOG(lvl, ...) rte_log(RTE_LOG_##lvl, wn_mpa_logtype, "mpa: " __VA_ARGS__)

/* Startup timers and deferred frees run at most this often. */
#define TICK_US 1000u
/* Tokens (FPDUs in flight zero-copy) of the whole process. */
#define ZC_TOKENS 65535
/* Gather pieces of one FPDU (length, header, payload pieces split by Markers, PAD, CRC). */
#define ZC_SG_MAX 64
/* Zero-copy tokens drained per poll. */
#define ZC_BURST 32

struct mpa_stream;

/*
 * One zero-copy FPDU: TCP's reference and one per mbuf count in @c sh. Its WQE is released
 * once TCP's SND.UNA passes the FPDU (the peer has it: the NIC is done reading it for that
 * transmission), its region pins only when the last reference goes: a NIC's PMD may keep a
 * transmitted mbuf until it needs the descriptor again (virtio, e1000), and a retransmission
 * still queued for octets already ACKed is discarded by the peer's TCP whatever it carries.
 */
struct mpa_zc {
	struct rte_mbuf_ext_shared_info sh;
	struct rte_ring *done;      /* the owning instance's ring */
	struct mpa_stream *s;
	TAILQ_ENTRY(mpa_zc) q;      /* in s->zc_acks while @c queued */
	uint32_t end_seq;           /* TCP sequence number after the FPDU */
	bool queued;                /* waits in s->zc_acks for its ACK */
	uint32_t wqe;
	bool held;                  /* the owner holds WQE @c wqe's completion */
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
	struct rte_ring *zc_done;   /* NULL: zero-copy off */
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
	bool in_input;              /* stream_input() is feeding MPA (an upcall may accept) */
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
	uint32_t zc_out;            /* zero-copy tokens not back yet (freed only at 0) */
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

static_assert(WN_MPA_PD_MAX <= WN_LLP_PD_MAX, "a Request's Private Data fits wn_llp_req");

static const struct wn_llp_ops mpa_tcp_ops;
static const struct wn_tcp_cb stream_cb;
static const struct wn_tcp_cb listen_cb;

static struct rte_mempool *zc_pool;
static struct rte_ring *zc_ring[WN_MPA_TCP_MAX_INSTANCES];

static inline struct mpa_stream *
stream_of(struct wn_llp *l)
{
	return (struct mpa_stream *)l;
}

static inline const struct mpa_stream *
stream_of_const(const struct wn_llp *l)
{
	return (const struct mpa_stream *)l;
}

/* ---------------------------------------------------------------- upcalls */

static void
up_event(struct mpa_stream *s, struct wn_llp_event *ev)
{
	if (!s->released && s->l.up != NULL && s->l.up->event != NULL)
		s->l.up->event(s->l.up_arg, &s->l, ev);
}

static void
update_ready(struct mpa_stream *s)
{
	s->l.tx_ready = s->tcp != NULL && s->tx_ok && s->record_mode;
}

static void
peer_of(const struct wn_mpa_frame *f, struct wn_llp_peer *pe)
{
	memset(pe, 0, sizeof(*pe));
	if (f == NULL)
		return;
	pe->pd = f->pd;
	pe->pd_len = f->pd_len;
	pe->enhanced = f->enhanced;
	/* an unenhanced peer announces nothing: it is bounded by our own limits only */
	pe->ird = f->enhanced ? f->ird : WN_MPA_IRD_ORD_MAX;
	pe->ord = f->enhanced ? f->ord : WN_MPA_IRD_ORD_MAX;
}

static uint32_t
stream_mulpdu(const struct mpa_stream *s)
{
	uint32_t m = wn_mpa_mulpdu(wn_tcp_emss(s->tcp), s->mpa.params.tx.markers);

	return RTE_MIN(RTE_MAX(m, (uint32_t)WN_MULPDU_MIN), (uint32_t)WN_MULPDU_MAX);
}

static void
params_of(struct mpa_stream *s, const struct wn_mpa_params *mp)
{
	struct wn_llp_params *lp = &s->params;

	lp->ird = RTE_MAX(mp->neg.ird, 1u);
	lp->ord = RTE_MAX(mp->neg.ord, 1u);
	lp->p2p = mp->neg.p2p;
	lp->rtr = mp->neg.rtr;
	lp->rev = mp->rev;
	lp->markers_tx = mp->tx.markers;
	lp->markers_rx = mp->rx.markers;
	lp->crc = mp->tx.crc;
	lp->mulpdu = s->tcp != NULL ? stream_mulpdu(s) : WN_MULPDU_MIN;
}

/* ---------------------------------------------------------------- startup */

/* Queue pending startup octets (Request, Reply, Reject) into TCP; then record mode. */
static void
flush_startup(struct mpa_stream *s)
{
	uint8_t buf[WN_MPA_FRAME_MAX];

	while (s->tcp != NULL && wn_mpa_conn_output_pending(&s->mpa) > 0) {
		uint32_t space = wn_tcp_send_space(s->tcp);
		size_t n;

		if (space == 0)
			break;
		n = wn_mpa_conn_output(&s->mpa, buf, RTE_MIN((size_t)space, sizeof(buf)));
		if (n == 0 || wn_tcp_send(s->tcp, buf, (uint32_t)n) != (int)n) {
			MPA_LOG(NOTICE, "TCP refused the MPA startup frame\n");
			wn_tcp_abort(s->tcp);
			return;
		}
	}
	/* FPDUs are records (RFC 5044 Appendix A), once the startup frame is queued whole */
	if (s->tcp != NULL && s->full && !s->record_mode &&
	    wn_mpa_conn_output_pending(&s->mpa) == 0) {
		if (wn_tcp_set_mode(s->tcp, WN_TCP_MODE_RECORD) != 0) {
			MPA_LOG(NOTICE, "TCP refused record mode\n");
			wn_tcp_abort(s->tcp);
			return;
		}
		s->record_mode = true;
	}
	update_ready(s);
}

static void
ev_established(struct mpa_stream *s, const struct wn_mpa_event *mev)
{
	struct wn_llp_event ev = {.type = WN_LLP_EV_ESTABLISHED};
	struct wn_llp_peer pe;

	if (s->rxbuf == NULL) {
		s->rxbuf = malloc(WN_MPA_ULPDU_MAX);
		s->txcap = WN_MPA_ULPDU_MAX + 1024;
		s->txbuf = malloc(s->txcap);
		s->gather.buf = s->rxbuf;
		if (s->rxbuf == NULL || s->txbuf == NULL) {
			MPA_LOG(ERR, "no memory for a stream's buffers\n");
			wn_tcp_abort(s->tcp);
			return;
		}
	}
	params_of(s, mev->params);
	s->full = true;
	peer_of(mev->frame, &pe);
	ev.peer = &pe;
	ev.params = &s->params;
	up_event(s, &ev);
	flush_startup(s);
}

static void
ev_error(struct mpa_stream *s, const struct wn_mpa_event *mev)
{
	struct wn_llp_event ev = {
		.type = WN_LLP_EV_ERROR,
		.err = (uint8_t)mev->err,
		.send_terminate = mev->send_terminate && s->full,
		.term_layer = WN_TERM_LAYER_LLP,
		.term_etype = WN_TERM_LLP_MPA,
		.crc = mev->err == WN_MPA_ERR_CRC,
		.insufficient_ird = s->l.active && mev->err == WN_MPA_ERR_INSUFFICIENT_IRD,
		.reason = mev->reason != NULL ? mev->reason : wn_mpa_err_str(mev->err),
	};
	struct wn_llp_peer pe;

	s->p->base.st.errors++;
	if (ev.crc)
		s->p->base.st.crc_errors++;
	/* a responder whose RFC 6581 negotiation failed has queued a Reject: send it */
	if (!s->l.active && wn_mpa_conn_output_pending(&s->mpa) > 0) {
		ev.reject_sent = true;
		flush_startup(s);
	}
	if (ev.send_terminate)
		s->tx_ok = wn_mpa_conn_tx_allowed(&s->mpa);
	else
		s->tx_ok = false;
	update_ready(s);
	peer_of(mev->frame, &pe);
	ev.peer = mev->frame != NULL ? &pe : NULL;
	up_event(s, &ev);
}

static void
mpa_event(void *arg, const struct wn_mpa_event *mev)
{
	struct mpa_stream *s = arg;
	struct wn_llp_event ev = {0};
	struct wn_llp_peer pe;

	switch (mev->type) {
	case WN_MPA_EV_REQUEST:
		peer_of(mev->frame, &pe);
		ev.type = WN_LLP_EV_REQUEST;
		ev.peer = &pe;
		up_event(s, &ev);
		break;
	case WN_MPA_EV_ESTABLISHED:
		ev_established(s, mev);
		break;
	case WN_MPA_EV_TX_READY:
		if (!s->full)
			break;
		s->tx_ok = true;
		update_ready(s);
		ev.type = WN_LLP_EV_TX_READY;
		ev.params = &s->params;
		up_event(s, &ev);
		break;
	case WN_MPA_EV_REJECTED:
		peer_of(mev->frame, &pe);
		ev.type = WN_LLP_EV_REJECTED;
		ev.peer = &pe;
		up_event(s, &ev);
		break;
	case WN_MPA_EV_ERROR:
		ev_error(s, mev);
		break;
	}
}

/* A whole ULPDU whose CRC was checked (wn_mpa_gather_ops): up to the ULP. */
static int
on_ulpdu(void *arg, const uint8_t *ulpdu, uint16_t len, enum wn_mpa_err verdict)
{
	struct mpa_stream *s = arg;

	if (verdict != WN_MPA_ERR_NONE)
		return 0; /* reported through the ERROR event */
	if (!s->released && s->l.up != NULL && s->l.up->ulpdu != NULL &&
	    s->l.up->ulpdu(s->l.up_arg, ulpdu, len) == -EAGAIN) {
		/*
		 * The owner cannot take it yet (no receive posted): it stays in rxbuf, the
		 * deframer stops after its FPDU and what follows stays in TCP's receive buffer,
		 * whose window closes (wn_llp.h, WN_LLP_F_RX_HOLD).
		 */
		s->rx_held = true;
		s->held_len = len;
		return -EAGAIN;
	}
	s->p->base.st.rx_ulpdus++;
	return 0;
}

static int
mpa_start(struct mpa_stream *s)
{
	const struct wn_mpa_tcp_conf *pc = &s->p->c;
	struct wn_mpa_conn_cfg cfg;
	struct wn_tcp_info ti;

	wn_tcp_conn_info(s->tcp, &ti);
	s->local = ti.local;
	s->remote = ti.remote;
	memset(&cfg, 0, sizeof(cfg));
	cfg.initiator = s->l.active;
	cfg.rev = s->rev != 0 ? s->rev : pc->rev;
	cfg.markers = pc->markers;
	cfg.crc = pc->crc;
	cfg.caps.ird = RTE_MIN(s->req.caps.ird, (uint16_t)WN_MPA_IRD_ORD_MAX);
	cfg.caps.ord = RTE_MIN(s->req.caps.ord, (uint16_t)WN_MPA_IRD_ORD_MAX);
	cfg.caps.p2p = s->l.active && pc->p2p;
	cfg.caps.rtr = pc->rtr;
	if (s->l.active) {
		cfg.pd = s->req.pd;
		cfg.pd_len = s->req.pd_len;
	}
	cfg.tx_seq = wn_tcp_next_seq(s->tcp);
	cfg.rx_seq = ti.irs + 1;
	cfg.timeout_us = pc->timeout_us;
	s->gather.done = on_ulpdu;
	s->gather.arg = s;
	cfg.rx_ops = &wn_mpa_gather_ops;
	cfg.rx_arg = &s->gather;
	cfg.rx_hdr_len = 2;
	cfg.check_markers = true;
	cfg.check_rtr = true;
	cfg.event = mpa_event;
	cfg.event_arg = s;
	if (wn_mpa_conn_init(&s->mpa, &cfg) != 0 || wn_mpa_conn_start(&s->mpa, s->p->now) != 0)
		return -EINVAL;
	s->started = true;
	if (!s->on_startup && !s->on_dead) {
		s->on_startup = true;
		TAILQ_INSERT_TAIL(&s->p->startup, s, tnext);
	}
	flush_startup(s);
	return 0;
}

/* Ack completions: release the held WQEs SND.UNA has passed. */
static void
ackw_release(struct mpa_stream *s)
{
	if (s->ackw_queued) {
		TAILQ_REMOVE(&s->p->ackw_due, s, ackw_next);
		s->ackw_queued = false;
	}
	while (s->ackw_head != s->ackw_tail) {
		const struct mpa_ackw *a = &s->ackw[s->ackw_head & (s->ackw_cap - 1)];

		if ((int32_t)(s->ackw_una - a->end_seq) < 0)
			break;
		s->ackw_head++;
		if (!s->released && s->l.up != NULL && s->l.up->tx_release != NULL)
			s->l.up->tx_release(s->l.up_arg, a->wqe);
	}
}

/* In-order stream octets: MPA startup frames, then FPDUs. */
static void
stream_input(struct mpa_stream *s)
{
	const uint8_t *d;
	uint32_t n;

	while (s->tcp != NULL && s->started && !s->rx_held &&
	       (n = wn_tcp_recv_peek(s->tcp, &d)) > 0) {
		size_t used = 0;
		int rc;

		s->in_input = true;
		rc = wn_mpa_conn_input(&s->mpa, d, n, s->p->now, &used);
		s->in_input = false;
		if (s->tcp == NULL)
			return; /* aborted from an event */
		if (used > 0)
			(void)wn_tcp_recv_consume(s->tcp, (uint32_t)used);
		if (rc < 0 || used < n)
			break;
	}
	if (s->tcp != NULL)
		flush_startup(s);
	if (s->ackw_queued && !s->in_input)
		ackw_release(s);
}

/* ---------------------------------------------------------------- streams */

static struct mpa_stream *
stream_new(struct mpa_proto *p, bool active)
{
	struct mpa_stream *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->l.ops = &mpa_tcp_ops;
	s->l.active = active;
	s->p = p;
	TAILQ_INIT(&s->zc_acks);
	TAILQ_INSERT_TAIL(&p->streams, s, next);
	p->n_streams++;
	return s;
}

/* Off the startup list (its startup is over, or the stream goes). */
static void
startup_leave(struct mpa_stream *s)
{
	if (s->on_startup) {
		TAILQ_REMOVE(&s->p->startup, s, tnext);
		s->on_startup = false;
	}
}

/* Free it at the next tick once nothing refers to it any more. */
static void
stream_maybe_dead(struct mpa_stream *s)
{
	if (s->on_dead || !s->gone || !s->released || s->zc_out != 0)
		return;
	startup_leave(s);
	s->on_dead = true;
	TAILQ_INSERT_TAIL(&s->p->dead, s, tnext);
}

static void
stream_free(struct mpa_stream *s)
{
	startup_leave(s);
	if (s->on_dead)
		TAILQ_REMOVE(&s->p->dead, s, tnext);
	if (s->ackw_queued)
		TAILQ_REMOVE(&s->p->ackw_due, s, ackw_next);
	free(s->ackw);
	TAILQ_REMOVE(&s->p->streams, s, next);
	s->p->n_streams--;
	free(s->rxbuf);
	free(s->ooobuf);
	free(s->txbuf);
	free(s);
}

static int
tcp_established(struct wn_tcp_conn *tc, void *arg)
{
	struct mpa_stream *s = arg;

	s->tcp = tc;
	if (mpa_start(s) != 0) {
		MPA_LOG(NOTICE, "MPA start failed\n");
		wn_tcp_abort(tc);
	}
	return 0;
}

static void
tcp_recv(struct wn_tcp_conn *tc, void *arg)
{
	(void)tc;
	stream_input(arg);
}

/* A whole ULPDU of an out-of-order segment whose CRC was checked: the owner may place it. */
static int
on_ulpdu_ooo(void *arg, const uint8_t *ulpdu, uint16_t len, enum wn_mpa_err verdict)
{
	struct mpa_stream *s = arg;

	if (verdict != WN_MPA_ERR_NONE)
		return -EBADMSG; /* the in-order pass reports it (RFC 5044 §8) */
	s->p->base.st.rx_ooo_ulpdus++;
	s->l.up->ulpdu_ooo(s->l.up_arg, ulpdu, len);
	return 0;
}

/*
 * A TCP segment above RCV.NXT: with Markers on our receive half, find its complete FPDUs
 * through them (RFC 5044 §4.3; the first Marker whose FPDU begins in the segment) and offer
 * each to the owner for early placement. Everything is delivered again in order.
 */
static void
tcp_recv_ooo(struct wn_tcp_conn *tc, void *arg, uint32_t seq, const uint8_t *data,
	     uint32_t len)
{
	struct mpa_stream *s = arg;
	const struct wn_mpa_params *mp;
	struct wn_mpa_deframer_cfg dc;

	(void)tc;
	if (!s->full || s->released || s->l.up == NULL || s->l.up->ulpdu_ooo == NULL)
		return;
	mp = wn_mpa_conn_params(&s->mpa);
	if (mp == NULL || !mp->rx.markers)
		return; /* without Markers an FPDU cannot be found in the middle of the stream */
	if (s->ooobuf == NULL) {
		s->ooobuf = malloc(WN_MPA_ULPDU_MAX);
		if (s->ooobuf == NULL)
			return;
		s->ooo.buf = s->ooobuf;
		s->ooo.done = on_ulpdu_ooo;
		s->ooo.arg = s;
	}
	memset(&dc, 0, sizeof(dc));
	dc.stream = mp->rx;
	dc.check_markers = true;
	dc.hdr_len = 2;
	/* a CRC or Marker error is the in-order pass's to report; nothing to do here */
	(void)wn_mpa_segment_fpdus(seq, data, len, &dc, false, &wn_mpa_gather_ops, &s->ooo, NULL,
				   NULL);
}

/* Our enhanced Request is unanswered (wn_llp_event @c enh_unanswered). */
static bool
enh_unanswered(const struct mpa_stream *s)
{
	return s->l.active && s->started && wn_mpa_conn_enhanced_unanswered(&s->mpa);
}

static void
tcp_eof(struct wn_tcp_conn *tc, void *arg)
{
	struct mpa_stream *s = arg;
	struct wn_llp_event ev = {.type = WN_LLP_EV_EOF};

	(void)tc;
	stream_input(s);
	if (s->rx_held) {
		/*
		 * The FIN is behind ULPDUs the owner has not taken yet: the end of the stream
		 * comes after them (op_rx_resume), or a graceful close would flush the receives
		 * that are about to be posted for them.
		 */
		s->l.eof_held = true;
		return;
	}
	ev.enh_unanswered = enh_unanswered(s);
	up_event(s, &ev);
}

/* A held zero-copy FPDU's WQE may complete: the peer has all of it (or TCP is gone). */
static void
zc_ack(struct mpa_stream *s, struct mpa_zc *z)
{
	TAILQ_REMOVE(&s->zc_acks, z, q);
	z->queued = false;
	if (z->held && !s->released && s->l.up != NULL && s->l.up->tx_release != NULL)
		s->l.up->tx_release(s->l.up_arg, z->wqe);
	z->held = false;
}

/*
 * SND.UNA moved: release the WQEs of the zero-copy FPDUs it passed. Ack-held WQEs wait until
 * the data that came with this acknowledgement was delivered (stream_input, or op_poll when
 * none came): a Terminate behind the ACK reaches the QP before the WQE completes.
 */
static void
tcp_sent(struct wn_tcp_conn *tc, void *arg, uint32_t acked)
{
	struct mpa_stream *s = arg;
	uint32_t una = wn_tcp_snd_una(tc);
	struct mpa_zc *z;

	(void)acked;
	while ((z = TAILQ_FIRST(&s->zc_acks)) != NULL && (int32_t)(una - z->end_seq) >= 0)
		zc_ack(s, z);
	if (s->ackw_head != s->ackw_tail) {
		s->ackw_una = una;
		if (!s->ackw_queued) {
			TAILQ_INSERT_TAIL(&s->p->ackw_due, s, ackw_next);
			s->ackw_queued = true;
		}
	}
}

static void
tcp_emss(struct wn_tcp_conn *tc, void *arg, uint16_t emss)
{
	struct mpa_stream *s = arg;
	struct wn_llp_event ev = {.type = WN_LLP_EV_MULPDU};
	uint32_t m;

	(void)tc;
	(void)emss;
	if (!s->full)
		return;
	m = stream_mulpdu(s);
	if (m == s->params.mulpdu)
		return;
	s->params.mulpdu = m;
	ev.params = &s->params;
	up_event(s, &ev);
}

static enum wn_llp_close
close_of(enum wn_tcp_close_reason why)
{
	switch (why) {
	case WN_TCP_CLOSE_NORMAL:
		return WN_LLP_CLOSE_NORMAL;
	case WN_TCP_CLOSE_REFUSED:
		return WN_LLP_CLOSE_REFUSED;
	case WN_TCP_CLOSE_TIMEOUT:
		return WN_LLP_CLOSE_TIMEOUT;
	default:
		return WN_LLP_CLOSE_RESET;
	}
}

static void
tcp_closed(struct wn_tcp_conn *tc, void *arg, enum wn_tcp_close_reason why)
{
	struct mpa_stream *s = arg;
	struct wn_llp_event ev = {.type = WN_LLP_EV_CLOSED, .why = close_of(why)};

	(void)tc;
	/* closed or reset by the peer (not aborted by us, not timed out): RFC 6581 §10's
	 * unenhanced responder */
	ev.enh_unanswered = (why == WN_TCP_CLOSE_NORMAL || why == WN_TCP_CLOSE_RESET) &&
			    enh_unanswered(s);
	s->tcp = NULL;
	s->gone = true;
	s->tx_ok = false;
	update_ready(s);
	up_event(s, &ev); /* freed later (poll): callers up the stack may still hold it */
	stream_maybe_dead(s);
}

static const struct wn_tcp_cb stream_cb = {
	.established = tcp_established,
	.recv = tcp_recv,
	.recv_ooo = tcp_recv_ooo,
	.eof = tcp_eof,
	.sent = tcp_sent,
	.emss = tcp_emss,
	.closed = tcp_closed,
};

static int
listen_established(struct wn_tcp_conn *tc, void *arg)
{
	struct mpa_listener *ls = arg;
	struct mpa_stream *s = stream_new(ls->p, false);
	struct wn_tcp_info ti;

	if (s == NULL)
		return -ENOMEM; /* refused: reset */
	s->tcp = tc;
	/* the addresses, for wn_llp_info() in the upcall (the CM's connect request) */
	wn_tcp_conn_info(tc, &ti);
	s->local = ti.local;
	s->remote = ti.remote;
	if (ls->incoming(ls->arg, &s->l) != 0) {
		stream_free(s); /* TCP resets it; its callbacks are still the listener's */
		return -ECONNREFUSED;
	}
	wn_tcp_conn_set_arg(tc, s);
	wn_tcp_conn_set_cb(tc, &stream_cb);
	/* the responder's IRD/ORD come with the accept; the Request is judged then */
	if (mpa_start(s) != 0) {
		MPA_LOG(NOTICE, "MPA start failed\n");
		wn_tcp_abort(tc);
	}
	return 0;
}

static void
listen_closed(struct wn_tcp_conn *tc, void *arg, enum wn_tcp_close_reason why)
{
	/* a connection that died before it was established: nothing of ours exists */
	(void)tc;
	(void)arg;
	(void)why;
}

static const struct wn_tcp_cb listen_cb = {
	.established = listen_established,
	.closed = listen_closed,
};

/* ---------------------------------------------------------------- instance ops */

static void
ep_to_tcp(const struct wn_llp_ep *e, struct wn_tcp_endpoint *t)
{
	memset(t, 0, sizeof(*t));
	t->addr = e->addr;
	t->port = e->port;
}

static void
ep_of_tcp(const struct wn_tcp_endpoint *t, struct wn_llp_ep *e)
{
	memset(e, 0, sizeof(*e));
	e->addr = t->addr;
	e->port = t->port;
}

static struct wn_llp *
op_connect(struct wn_llp_proto *bp, const struct wn_llp_connect *c)
{
	struct mpa_proto *p = (struct mpa_proto *)bp;
	struct wn_tcp_endpoint local, remote;
	struct mpa_stream *s;
	int err;

	if (c->pd_len > WN_MPA_PD_MAX || (c->pd_len != 0 && c->pd == NULL)) {
		errno = EINVAL;
		return NULL;
	}
	s = stream_new(p, true);
	if (s == NULL)
		return NULL;
	if (c->rev > WN_MPA_REV_MAX) {
		stream_free(s);
		errno = EINVAL;
		return NULL;
	}
	s->rev = c->rev;
	wn_llp_connect_keep(&s->l, &s->req, c);
	ep_to_tcp(&c->local, &local);
	ep_to_tcp(&c->remote, &remote);
	s->local = local;
	s->remote = remote;
	s->tcp = wn_tcp_connect(p->c.tcp, &local, &remote, &stream_cb, s);
	if (s->tcp == NULL) {
		err = errno;
		stream_free(s);
		errno = err;
		return NULL;
	}
	return &s->l;
}

static struct wn_llp_listener *
op_listen(struct wn_llp_proto *bp, const struct wn_llp_ep *ep, wn_llp_incoming_fn incoming,
	  void *arg)
{
	struct mpa_listener *ls = calloc(1, sizeof(*ls));
	struct wn_tcp_endpoint te;
	int err;

	if (ls == NULL)
		return NULL;
	ls->p = (struct mpa_proto *)bp;
	ls->incoming = incoming;
	ls->arg = arg;
	ep_to_tcp(ep, &te);
	ls->tl = wn_tcp_listen(ls->p->c.tcp, &te, &listen_cb, ls);
	if (ls->tl == NULL) {
		err = errno;
		free(ls);
		errno = err;
		return NULL;
	}
	TAILQ_INSERT_TAIL(&ls->p->listeners, ls, next);
	return (struct wn_llp_listener *)ls;
}

static void
op_unlisten(struct wn_llp_listener *bl)
{
	struct mpa_listener *ls = (struct mpa_listener *)bl;

	if (ls == NULL)
		return;
	TAILQ_REMOVE(&ls->p->listeners, ls, next);
	wn_tcp_unlisten(ls->tl);
	free(ls);
}

static void
zc_put(struct mpa_proto *p, struct mpa_zc *z)
{
	for (unsigned int k = 0; k < z->n_pins; k++)
		p->c.unpin(p->c.pin_arg, z->pins[k]);
	rte_mempool_put(zc_pool, z);
}

/* Zero-copy FPDUs ACKed and in no mbuf any more: unpin, release the WQE. */
static unsigned int
zc_poll(struct mpa_proto *p)
{
	void *objs[ZC_BURST];
	unsigned int n, i, total = 0;

	if (p->zc_done == NULL)
		return 0;
	do {
		n = rte_ring_sc_dequeue_burst(p->zc_done, objs, ZC_BURST, NULL);
		for (i = 0; i < n; i++) {
			struct mpa_zc *z = objs[i];
			struct mpa_stream *s = z->s;

			/* not ACKed (the connection closed or aborted): released now */
			if (z->queued)
				zc_ack(s, z);
			s->zc_out--;
			p->base.st.zc_released++;
			zc_put(p, z);
			stream_maybe_dead(s);
		}
		total += n;
	} while (n == ZC_BURST);
	return total;
}

/*
 * Free the dead streams; run the startup timers that expired. The startup list is in
 * deadline order: a stream whose startup is over leaves it, the first that has not expired
 * ends the walk.
 */
static void
tick(struct mpa_proto *p)
{
	struct mpa_stream *s;

	while ((s = TAILQ_FIRST(&p->dead)) != NULL)
		stream_free(s);
	while ((s = TAILQ_FIRST(&p->startup)) != NULL) {
		enum wn_mpa_conn_state st = wn_mpa_conn_state(&s->mpa);

		if (s->tcp == NULL || (st != WN_MPA_CONN_REQ_SENT && st != WN_MPA_CONN_WAIT_REQ &&
				       st != WN_MPA_CONN_REQ_RCVD)) {
			startup_leave(s);
			continue;
		}
		if (p->now < wn_mpa_conn_deadline(&s->mpa))
			break;
		startup_leave(s);
		(void)wn_mpa_conn_tick(&s->mpa, p->now); /* ERROR event on expiry */
	}
}

static unsigned int
op_poll(struct wn_llp_proto *bp, uint64_t now)
{
	struct mpa_proto *p = (struct mpa_proto *)bp;
	unsigned int n;

	p->now = now;
	n = zc_poll(p);
	while (!TAILQ_EMPTY(&p->ackw_due)) {
		ackw_release(TAILQ_FIRST(&p->ackw_due));
		n++;
	}
	if (now - p->last_tick >= TICK_US) {
		p->last_tick = now;
		tick(p);
	}
	return n;
}

/* ---------------------------------------------------------------- stream ops */

static int
op_accept(struct wn_llp *l, const struct wn_llp_caps *caps, const uint8_t *pd, uint16_t pd_len)
{
	struct mpa_stream *s = stream_of(l);
	struct wn_mpa_caps mc;
	int rc;

	if (s->tcp == NULL || wn_mpa_conn_state(&s->mpa) != WN_MPA_CONN_REQ_RCVD)
		return -EINVAL;
	memset(&mc, 0, sizeof(mc));
	if (caps == NULL)
		caps = &s->req.caps;
	mc.ird = RTE_MIN(caps->ird, (uint16_t)WN_MPA_IRD_ORD_MAX);
	mc.ord = RTE_MIN(caps->ord, (uint16_t)WN_MPA_IRD_ORD_MAX);
	mc.rtr = s->p->c.rtr;
	/* ESTABLISHED (Full Operation) or ERROR come from inside the call */
	rc = wn_mpa_conn_accept(&s->mpa, &mc, pd, pd_len, s->p->now);
	if (s->tcp != NULL) {
		flush_startup(s);
		/*
		 * Octets that arrived behind the Request while the ULP decided; an accept from
		 * inside the REQUEST upcall leaves them to the stream_input() that raised it
		 * (which has not consumed the Request yet).
		 */
		if (!s->in_input)
			stream_input(s);
	}
	return rc;
}

static int
op_reject(struct wn_llp *l, const uint8_t *pd, uint16_t pd_len)
{
	struct mpa_stream *s = stream_of(l);
	int rc = wn_mpa_conn_reject(&s->mpa, pd, pd_len);

	if (rc == 0)
		flush_startup(s);
	return rc;
}

/* Hold WQE @p wqe's completion until the peer acknowledges what TCP has now. @return 0/-errno. */
static int
ackw_push(struct mpa_stream *s, uint32_t wqe)
{
	if (s->ackw_tail - s->ackw_head == s->ackw_cap) {
		uint32_t cap = s->ackw_cap != 0 ? 2 * s->ackw_cap : 64;
		struct mpa_ackw *n = malloc(cap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM; /* completes as copies do: when TCP took it */
		for (uint32_t i = 0; i < s->ackw_tail - s->ackw_head; i++)
			n[i] = s->ackw[(s->ackw_head + i) & (s->ackw_cap - 1)];
		s->ackw_tail -= s->ackw_head;
		s->ackw_head = 0;
		free(s->ackw);
		s->ackw = n;
		s->ackw_cap = cap;
	}
	s->ackw[s->ackw_tail & (s->ackw_cap - 1)] =
		(struct mpa_ackw){.end_seq = wn_tcp_next_seq(s->tcp), .wqe = wqe};
	s->ackw_tail++;
	return 0;
}

static int
send_copy(struct mpa_stream *s, const struct wn_llp_ulpdu *u)
{
	const struct wn_mpa_params *mp = wn_mpa_conn_params(&s->mpa);
	struct iovec iov[WN_LLP_MAX_IOV + 1];
	size_t need;
	int w;

	need = wn_mpa_fpdu_wire_len(s->mpa.tx_next, mp->tx.seq_start, mp->tx.markers, u->len);
	if (need > wn_tcp_send_space(s->tcp) || need > s->txcap)
		return -EAGAIN;
	iov[0].iov_base = (void *)(uintptr_t)u->hdr;
	iov[0].iov_len = u->hdr_len;
	for (unsigned int i = 0; i < u->n_iov; i++) {
		iov[i + 1].iov_base = (void *)(uintptr_t)u->iov[i].base;
		iov[i + 1].iov_len = u->iov[i].len;
	}
	w = wn_mpa_conn_frame(&s->mpa, iov, u->n_iov + 1u, s->txbuf, s->txcap);
	if (w < 0)
		return -EAGAIN;
	if (wn_tcp_send_record(s->tcp, s->txbuf, (uint32_t)w) != 0) {
		/* not sent: the next FPDU starts where this one would have */
		s->mpa.tx_next -= (uint32_t)w;
		return -EAGAIN;
	}
	if (u->n_iov > 0) {
		s->p->base.st.copy_ulpdus++;
		s->p->base.st.copy_bytes += u->len - u->hdr_len;
	}
	/* DDP's Last flag (RFC 5041 §4.2): the message's last segment */
	if (s->ack_completions && u->src == WN_LLP_SRC_SQ && (u->hdr[0] & 0x40) != 0 &&
	    ackw_push(s, u->wqe) == 0)
		return WN_LLP_TX_HELD;
	return 0;
}

/* The last reference went (any thread): back to the owning instance. */
static void
zc_free_cb(void *addr, void *opaque)
{
	struct mpa_zc *z = opaque;

	(void)addr;
	/* the ring holds every token of the pool: never full */
	(void)rte_ring_mp_enqueue(z->done, z);
}

/* Pin every region @p u's payload comes from. @return 0, or -ENOTSUP (copy it). */
static int
zc_pin(struct mpa_proto *p, struct mpa_zc *z, const struct wn_llp_ulpdu *u)
{
	z->n_pins = 0;
	for (unsigned int i = 0; i < u->n_iov; i++) {
		bool dup = false;

		for (unsigned int k = 0; k < z->n_pins; k++)
			dup |= z->pins[k] == u->iov[i].stag;
		if (dup)
			continue;
		if (u->iov[i].stag == 0 || p->c.pin(p->c.pin_arg, u->iov[i].stag) != 0)
			return -ENOTSUP; /* a window (its MR owns the pages) or inline data */
		z->pins[z->n_pins++] = u->iov[i].stag;
	}
	return 0;
}

static bool
in_payload(const struct wn_llp_ulpdu *u, const struct iovec *v)
{
	const uint8_t *b = v->iov_base;

	for (unsigned int i = 0; i < u->n_iov; i++)
		if (b >= u->iov[i].base && b + v->iov_len <= u->iov[i].base + u->iov[i].len)
			return true;
	return false;
}

/* Describe the FPDU of @p u in @p parts (payload referenced). @return parts, or <= 0. */
static int
zc_describe(struct mpa_stream *s, const struct wn_llp_ulpdu *u, struct wn_tcp_part *parts,
	    uint8_t *scratch, uint32_t *wire, uint32_t *ext)
{
	const struct wn_mpa_params *mp = wn_mpa_conn_params(&s->mpa);
	struct iovec in[WN_LLP_MAX_IOV + 1], sg[ZC_SG_MAX];
	int n;

	in[0].iov_base = (void *)(uintptr_t)u->hdr;
	in[0].iov_len = u->hdr_len;
	for (unsigned int i = 0; i < u->n_iov; i++) {
		in[i + 1].iov_base = (void *)(uintptr_t)u->iov[i].base;
		in[i + 1].iov_len = u->iov[i].len;
	}
	n = wn_mpa_fpdu_gather(sg, ZC_SG_MAX, scratch, WN_MPA_GATHER_SCRATCH, in,
			       u->n_iov + 1u, s->mpa.tx_next, &mp->tx);
	*wire = *ext = 0;
	for (int k = 0; k < n; k++) {
		parts[k].base = sg[k].iov_base;
		parts[k].len = (uint32_t)sg[k].iov_len;
		parts[k].ext = in_payload(u, &sg[k]);
		/* a NIC reads it by DMA: the region is mapped at IOVA = VA (lib/node node_dma.c) */
		parts[k].iova = s->p->c.iova_va && parts[k].ext ?
			(rte_iova_t)(uintptr_t)sg[k].iov_base : RTE_BAD_IOVA;
		*wire += parts[k].len;
		if (parts[k].ext)
			*ext += parts[k].len;
	}
	return n;
}

/*
 * Send one ULPDU zero-copy. @return 0 or WN_LLP_TX_HELD (taken), -EAGAIN (TCP has no room:
 * retry), -ENOTSUP (not possible for this FPDU: copy it).
 */
static int
send_zc(struct mpa_stream *s, const struct wn_llp_ulpdu *u)
{
	struct mpa_proto *p = s->p;
	struct wn_tcp_part parts[ZC_SG_MAX];
	uint8_t scratch[WN_MPA_GATHER_SCRATCH];
	uint32_t wire, ext;
	struct mpa_zc *z;
	int n, ret;

	if (rte_mempool_get(zc_pool, (void **)&z) != 0)
		return -ENOTSUP;
	if (zc_pin(p, z, u) != 0 ||
	    (n = zc_describe(s, u, parts, scratch, &wire, &ext)) <= 0) {
		zc_put(p, z);
		return -ENOTSUP;
	}
	memset(&z->sh, 0, sizeof(z->sh));
	z->sh.free_cb = zc_free_cb;
	z->sh.fcb_opaque = z;
	rte_mbuf_ext_refcnt_set(&z->sh, 1);
	z->done = p->zc_done;
	z->s = s;
	z->wqe = u->wqe;
	z->held = u->src == WN_LLP_SRC_SQ;
	z->queued = false;
	ret = wn_tcp_send_record_ext(s->tcp, parts, (unsigned int)n, &z->sh);
	if (ret != 0) {
		zc_put(p, z);
		return ret == -ENOBUFS ? -EAGAIN : -ENOTSUP;
	}
	s->mpa.tx_next += wire;
	if (z->held) {
		z->end_seq = wn_tcp_next_seq(s->tcp);
		z->queued = true;
		TAILQ_INSERT_TAIL(&s->zc_acks, z, q);
	}
	s->zc_out++;
	p->base.st.zc_ulpdus++;
	p->base.st.zc_bytes += ext;
	return z->held ? WN_LLP_TX_HELD : 0;
}

static int
op_send(struct wn_llp *l, const struct wn_llp_ulpdu *u)
{
	struct mpa_stream *s = stream_of(l);
	struct mpa_proto *p = s->p;
	int ret;

	if (!l->tx_ready) {
		p->base.st.tx_again++;
		return -EAGAIN;
	}
	if (p->zc_done != NULL && u->src != WN_LLP_SRC_NONE && u->n_iov > 0 &&
	    u->msg_len >= p->c.zero_copy_min && wn_mpa_conn_state(&s->mpa) == WN_MPA_CONN_FULL &&
	    wn_mpa_conn_tx_allowed(&s->mpa)) {
		ret = send_zc(s, u);
		if (ret != -ENOTSUP)
			goto out;
		p->base.st.zc_fallback++; /* this FPDU cannot go zero-copy: copy it */
	}
	ret = send_copy(s, u);
out:
	if (ret == -EAGAIN) {
		p->base.st.tx_again++;
		return ret;
	}
	p->base.st.tx_ulpdus++;
	s->tx_ulpdus++;
	return ret;
}

static int
op_close(struct wn_llp *l)
{
	struct mpa_stream *s = stream_of(l);

	s->tx_ok = false;
	update_ready(s);
	return s->tcp != NULL ? wn_tcp_close(s->tcp) : 0;
}

static void
op_abort(struct wn_llp *l)
{
	struct mpa_stream *s = stream_of(l);

	s->tx_ok = false;
	update_ready(s);
	if (s->tcp != NULL)
		wn_tcp_abort(s->tcp); /* CLOSED comes from inside */
}

static int
op_ack_completions(struct wn_llp *l)
{
	stream_of(l)->ack_completions = true;
	return 0;
}

static void
op_release(struct wn_llp *l)
{
	struct mpa_stream *s = stream_of(l);

	s->released = true;
	s->l.up = NULL;
	s->l.up_arg = NULL;
	stream_maybe_dead(s);
}

static void
op_info(const struct wn_llp *l, struct wn_llp_info *in)
{
	const struct mpa_stream *s = stream_of_const(l);
	struct wn_tcp_info t;

	memset(in, 0, sizeof(*in));
	ep_of_tcp(&s->local, &in->local);
	ep_of_tcp(&s->remote, &in->remote);
	in->state = s->started ? wn_mpa_conn_state_str(wn_mpa_conn_state(&s->mpa)) : "tcp";
	in->active = l->active;
	in->full = s->full;
	in->params = s->params;
	in->rx_ulpdus = s->mpa.fpdus_rx;
	in->tx_ulpdus = s->tx_ulpdus;
	if (s->tcp == NULL) {
		in->transport.state = "CLOSED";
		in->transport.quiet = true;
		return;
	}
	wn_tcp_conn_info(s->tcp, &t);
	in->transport.state = wn_tcp_state_name(t.state);
	in->transport.quiet = t.state == WN_TCP_TIME_WAIT || t.state == WN_TCP_CLOSED;
	in->transport.cwnd = t.cwnd;
	in->transport.srtt_us = t.srtt_us;
	in->transport.rto_us = t.rto_us;
	in->transport.backoff = t.backoff;
	in->transport.retrans = t.retrans;
	in->transport.snd_queued = t.snd_queued;
	in->transport.rcv_queued = t.rcv_queued;
	in->transport.snd_una = t.snd_una - t.iss;
	in->transport.snd_nxt = t.snd_nxt - t.iss;
	in->transport.snd_max = t.snd_max - t.iss;
	in->transport.snd_wnd = t.snd_wnd;
	in->transport.rcv_nxt = t.rcv_nxt - t.irs;
	in->transport.rcv_wnd = t.rcv_wnd;
	in->transport.in_recovery = t.in_recovery;
	in->transport.sacked_bytes = t.sacked_bytes;
}

/* The owner can take the ULPDU it held: offer it again, then go on with TCP's data. */
static int
op_rx_resume(struct wn_llp *l)
{
	struct mpa_stream *s = stream_of(l);

	if (!s->rx_held)
		return 0;
	if (!s->released && s->l.up != NULL && s->l.up->ulpdu != NULL &&
	    s->l.up->ulpdu(s->l.up_arg, s->rxbuf, s->held_len) == -EAGAIN)
		return -EAGAIN;
	s->rx_held = false;
	s->p->base.st.rx_ulpdus++;
	stream_input(s);
	if (s->l.eof_held && !s->rx_held && s->tcp != NULL) {
		struct wn_llp_event ev = {.type = WN_LLP_EV_EOF};

		s->l.eof_held = false;
		ev.enh_unanswered = enh_unanswered(s);
		up_event(s, &ev);
	}
	return 0;
}

static const struct wn_llp_ops mpa_tcp_ops = {
	.name = "mpa-tcp",
	.flags = WN_LLP_F_RX_HOLD,
	.connect = op_connect,
	.listen = op_listen,
	.unlisten = op_unlisten,
	.poll = op_poll,
	.accept = op_accept,
	.reject = op_reject,
	.send = op_send,
	.close = op_close,
	.abort = op_abort,
	.release = op_release,
	.info = op_info,
	.rx_resume = op_rx_resume,
	.ack_completions = op_ack_completions,
};

/* ---------------------------------------------------------------- instance */

static int
zc_init(struct mpa_proto *p)
{
	char name[RTE_RING_NAMESIZE];
	void *stale;

	if (zc_pool == NULL) {
		zc_pool = rte_mempool_create("wn_zc", ZC_TOKENS, sizeof(struct mpa_zc), 256, 0,
					     NULL, NULL, NULL, NULL, SOCKET_ID_ANY, 0);
		if (zc_pool == NULL)
			return -rte_errno;
	}
	if (zc_ring[p->c.index] == NULL) {
		snprintf(name, sizeof(name), "wn_zc_%u", p->c.index);
		zc_ring[p->c.index] = rte_ring_create(name, rte_align32pow2(ZC_TOKENS + 1),
						      SOCKET_ID_ANY, RING_F_SC_DEQ);
		if (zc_ring[p->c.index] == NULL)
			return -rte_errno;
	}
	/* tokens of an earlier instance (freed after it stopped) point nowhere now */
	while (rte_ring_sc_dequeue(zc_ring[p->c.index], &stale) == 0)
		rte_mempool_put(zc_pool, stale);
	p->zc_done = zc_ring[p->c.index];
	return 0;
}

struct wn_llp_proto *
wn_mpa_tcp_create(const struct wn_mpa_tcp_conf *conf)
{
	struct mpa_proto *p;
	int rc;

	if (conf == NULL || conf->tcp == NULL ||
	    (conf->zero_copy && (conf->pin == NULL || conf->unpin == NULL ||
				 conf->index >= WN_MPA_TCP_MAX_INSTANCES))) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->base.ops = &mpa_tcp_ops;
	p->c = *conf;
	TAILQ_INIT(&p->streams);
	TAILQ_INIT(&p->startup);
	TAILQ_INIT(&p->dead);
	TAILQ_INIT(&p->listeners);
	TAILQ_INIT(&p->ackw_due);
	p->now = wn_net_now_us();
	p->last_tick = p->now;
	if (conf->zero_copy) {
		rc = zc_init(p);
		if (rc != 0)
			MPA_LOG(WARNING, "no memory for zero-copy tokens (%s): zero-copy transmit "
				"off\n", rte_strerror(-rc));
	}
	return &p->base;
}

void
wn_mpa_tcp_free(struct wn_llp_proto *bp)
{
	struct mpa_proto *p = (struct mpa_proto *)bp;
	struct mpa_stream *s;

	if (p == NULL)
		return;
	TAILQ_FOREACH(s, &p->streams, next) {
		s->released = true;
		if (s->tcp != NULL)
			wn_tcp_abort(s->tcp);
	}
	while ((s = TAILQ_FIRST(&p->streams)) != NULL)
		stream_free(s);
	while (!TAILQ_EMPTY(&p->listeners))
		op_unlisten((struct wn_llp_listener *)TAILQ_FIRST(&p->listeners));
	free(p);
}

bool
wn_mpa_tcp_zero_copy(const struct wn_llp_proto *bp)
{
	return ((const struct mpa_proto *)bp)->zc_done != NULL;
}

uint32_t
wn_mpa_tcp_streams(const struct wn_llp_proto *bp)
{
	return ((const struct mpa_proto *)bp)->n_streams;
}
