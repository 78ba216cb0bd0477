/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA over TCP: in-order receive. TCP's in-order octets go through the MPA connection
 * (startup frames, then the FPDU deframer); each ULPDU is handed up whole once its CRC is
 * verified, or held while the owner cannot take it (WN_LLP_F_RX_HOLD).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpa_tcp_priv.h"

/* A whole ULPDU whose CRC was checked (wn_mpa_gather_ops): up to the ULP. */
int
wn_mpa_rx_ulpdu(void *arg, const uint8_t *ulpdu, uint16_t len, enum wn_mpa_err verdict)
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

/* In-order stream octets: MPA startup frames, then FPDUs. */
void
wn_mpa_rx_input(struct mpa_stream *s)
{
	const uint8_t *d;
	uint32_t n;

	while (s->tcp != NULL && s->started && !s->rx_held &&
	       (n = wn_tcp_recv_peek(s->tcp, &d)) > 0) {
		size_t used = 0;
		int rc = wn_mpa_conn_input(&s->mpa, d, n, s->p->now, &used);

		if (s->tcp == NULL)
			return; /* aborted from an event */
		if (used > 0)
			(void)wn_tcp_recv_consume(s->tcp, (uint32_t)used);
		if (rc < 0 || used < n)
			break;
	}
	if (s->tcp != NULL)
		wn_mpa_flush_startup(s);
}

void
wn_mpa_rx_recv(struct wn_tcp_conn *tc, void *arg)
{
	(void)tc;
	wn_mpa_rx_input(arg);
}

void
wn_mpa_rx_eof(struct wn_tcp_conn *tc, void *arg)
{
	struct mpa_stream *s = arg;
	struct wn_llp_event ev = {.type = WN_LLP_EV_EOF};

	(void)tc;
	wn_mpa_rx_input(s);
	if (s->rx_held) {
		/*
		 * The FIN is behind ULPDUs the owner has not taken yet: the end of the stream
		 * comes after them (wn_mpa_rx_resume), or a graceful close would flush the receives
		 * that are about to be posted for them.
		 */
		s->l.eof_held = true;
		return;
	}
	ev.enh_unanswered = wn_mpa_enh_unanswered(s);
	wn_mpa_up_event(s, &ev);
}

/* The owner can take the ULPDU it held: offer it again, then go on with TCP's data. */
int
wn_mpa_rx_resume(struct wn_llp *l)
{
	struct mpa_stream *s = mpa_stream_of(l);

	if (!s->rx_held)
		return 0;
	if (!s->released && s->l.up != NULL && s->l.up->ulpdu != NULL &&
	    s->l.up->ulpdu(s->l.up_arg, s->rxbuf, s->held_len) == -EAGAIN)
		return -EAGAIN;
	s->rx_held = false;
	s->p->base.st.rx_ulpdus++;
	wn_mpa_rx_input(s);
	if (s->l.eof_held && !s->rx_held && s->tcp != NULL) {
		struct wn_llp_event ev = {.type = WN_LLP_EV_EOF};

		s->l.eof_held = false;
		ev.enh_unanswered = wn_mpa_enh_unanswered(s);
		wn_mpa_up_event(s, &ev);
	}
	return 0;
}
