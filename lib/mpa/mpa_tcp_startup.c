/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA over TCP: the startup exchange of a stream (RFC 5044 §7.1, RFC 6581): the MPA
 * connection started over the established TCP connection, its frames written into TCP as room
 * allows, its events turned into the stream's upcalls, then record mode for Full Operation.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpa_tcp_priv.h"

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

uint32_t
wn_mpa_stream_mulpdu(const struct mpa_stream *s)
{
	uint32_t m = wn_wire_mpa_mulpdu(wn_tcp_emss(s->tcp), s->mpa.params.tx.markers);

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
	lp->mulpdu = s->tcp != NULL ? wn_mpa_stream_mulpdu(s) : WN_MULPDU_MIN;
}

/* Queue pending startup octets (Request, Reply, Reject) into TCP; then record mode. */
void
wn_mpa_flush_startup(struct mpa_stream *s)
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
	wn_mpa_update_ready(s);
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
	wn_mpa_up_event(s, &ev);
	wn_mpa_flush_startup(s);
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
		.reason = mev->reason != NULL ? mev->reason : wn_wire_mpa_err_str(mev->err),
	};
	struct wn_llp_peer pe;

	s->p->base.st.errors++;
	if (ev.crc)
		s->p->base.st.crc_errors++;
	/* a responder whose RFC 6581 negotiation failed has queued a Reject: send it */
	if (!s->l.active && wn_mpa_conn_output_pending(&s->mpa) > 0) {
		ev.reject_sent = true;
		wn_mpa_flush_startup(s);
	}
	if (ev.send_terminate)
		s->tx_ok = wn_mpa_conn_tx_allowed(&s->mpa);
	else
		s->tx_ok = false;
	wn_mpa_update_ready(s);
	peer_of(mev->frame, &pe);
	ev.peer = mev->frame != NULL ? &pe : NULL;
	wn_mpa_up_event(s, &ev);
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
		wn_mpa_up_event(s, &ev);
		break;
	case WN_MPA_EV_ESTABLISHED:
		ev_established(s, mev);
		break;
	case WN_MPA_EV_TX_READY:
		if (!s->full)
			break;
		s->tx_ok = true;
		wn_mpa_update_ready(s);
		ev.type = WN_LLP_EV_TX_READY;
		ev.params = &s->params;
		wn_mpa_up_event(s, &ev);
		break;
	case WN_MPA_EV_REJECTED:
		peer_of(mev->frame, &pe);
		ev.type = WN_LLP_EV_REJECTED;
		ev.peer = &pe;
		wn_mpa_up_event(s, &ev);
		break;
	case WN_MPA_EV_ERROR:
		ev_error(s, mev);
		break;
	}
}

int
wn_mpa_stream_start(struct mpa_stream *s)
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
	s->gather.done = wn_mpa_rx_ulpdu;
	s->gather.arg = s;
	cfg.rx_ops = &wn_wire_mpa_gather_ops;
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
	wn_mpa_flush_startup(s);
	return 0;
}

/* Our enhanced Request is unanswered (wn_llp_event @c enh_unanswered). */
bool
wn_mpa_enh_unanswered(const struct mpa_stream *s)
{
	return s->l.active && s->started && wn_mpa_conn_enhanced_unanswered(&s->mpa);
}
