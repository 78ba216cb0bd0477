/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA over TCP: in-order receive. Whole FPDUs are taken where they lie, in the received
 * segment (wn_tcp_cb recv_seg) or in TCP's receive buffer, their CRC checked over those
 * octets and each ULPDU handed up from there (wn_wire_mpa_fpdu_view()); the MPA connection's
 * deframer takes the rest (startup frames, the first FPDU, an FPDU in error or cut up beyond
 * what a view describes). A ULPDU the owner cannot take yet is held (WN_LLP_F_RX_HOLD).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpa_tcp_priv.h"

/* A whole ULPDU whose CRC was checked (wn_wire_mpa_gather_ops): up to the ULP. */
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

/*
 * One whole good FPDU taken in place (@p f): its ULPDU to the owner, where it lies when it is
 * one piece, else gathered into rxbuf (Markers cut it). A ULPDU the owner holds is kept in
 * rxbuf (WN_LLP_F_RX_HOLD). @return 0, or -EAGAIN (held: stop).
 */
static int
rx_deliver(struct mpa_stream *s, const struct wn_wire_mpa_fpdu_view *f)
{
	const uint8_t *u = f->n == 1 ? f->v[0].iov_base : s->rxbuf;

	wn_mpa_conn_rx_taken(&s->mpa, f->wire_len);
	if (f->n != 1) {
		size_t at = 0;

		for (unsigned int k = 0; k < f->n; k++) {
			memcpy(s->rxbuf + at, f->v[k].iov_base, f->v[k].iov_len);
			at += f->v[k].iov_len;
		}
	}
	if (wn_mpa_rx_ulpdu(s, u, f->ulpdu_len, WN_MPA_ERR_NONE) == -EAGAIN) {
		if (u != s->rxbuf)
			memcpy(s->rxbuf, u, f->ulpdu_len);
		return -EAGAIN;
	}
	return 0;
}

/* Why rx_inplace() stopped. */
enum rx_stop {
	RX_WAIT,     /* the next FPDU is not whole yet: its octets wait in TCP's buffer */
	RX_DEFRAMER, /* the next FPDU is for the deframer (in error, cut up, or too long) */
	RX_PAUSED,   /* nothing is taken in place now (held, not between FPDUs, gone) */
};

/*
 * Take the whole good FPDUs at the front of the ordered octets @p in (@p n pieces) in place.
 * @return octets taken, @p why it stopped: at an FPDU that is not whole, that the deframer
 * must report (not good: RFC 5044 §8), that is cut up beyond a view or longer than TCP's
 * buffer can hold, or after one the owner holds (taken, kept in rxbuf).
 */
static size_t
rx_inplace(struct mpa_stream *s, struct iovec *in, unsigned int n, enum rx_stop *why)
{
	struct wn_mpa_deframer_cfg cfg = wn_mpa_conn_rx_cfg(&s->mpa);
	struct wn_wire_mpa_fpdu_view f;
	size_t taken = 0;

	*why = RX_PAUSED;
	while (s->tcp != NULL && !s->rx_held && wn_mpa_conn_rx_inplace(&s->mpa)) {
		int rc = wn_wire_mpa_fpdu_view(in, n, wn_mpa_conn_rx_seq(&s->mpa), &cfg, &f);
		size_t k;

		if (rc == 0) {
			*why = f.wire_len > wn_tcp_recv_cap(s->tcp) ? RX_DEFRAMER : RX_WAIT;
			break;
		}
		if (rc < 0 || f.verdict != WN_MPA_ERR_NONE) {
			*why = RX_DEFRAMER;
			break;
		}
		taken += f.wire_len;
		(void)rx_deliver(s, &f);
		/* the pieces from the next FPDU on */
		k = f.wire_len;
		while (n > 0 && k >= in[0].iov_len) {
			k -= in[0].iov_len;
			in++;
			n--;
		}
		if (n > 0) {
			in[0].iov_base = (uint8_t *)in[0].iov_base + k;
			in[0].iov_len -= k;
		}
	}
	return taken;
}

/*
 * A segment's in-order octets before TCP buffers them (wn_tcp_cb recv_seg): whole FPDUs are
 * placed from where they lie, those begun in the receive buffer included, their CRC checked
 * over the same octets; what is left (a part of an FPDU, or anything outside Full Operation)
 * TCP buffers and reports through recv().
 */
uint32_t
wn_mpa_rx_seg(struct wn_tcp_conn *tc, void *arg, const uint8_t *data, uint32_t len)
{
	struct mpa_stream *s = arg;
	struct iovec in[3];
	enum rx_stop why;
	unsigned int n;
	uint32_t had;
	size_t taken;

	if (!s->started || s->rx_held || !wn_mpa_conn_rx_inplace(&s->mpa))
		return 0;
	n = wn_tcp_recv_peekv(tc, in);
	had = wn_tcp_recv_avail(tc);
	in[n].iov_base = (void *)(uintptr_t)data;
	in[n].iov_len = len;
	taken = rx_inplace(s, in, n + 1, &why);
	if (s->tcp == NULL)
		return 0; /* aborted from an upcall: TCP drops it all */
	/* the buffer's octets first, then the segment's */
	(void)wn_tcp_recv_consume(tc, (uint32_t)RTE_MIN(taken, (size_t)had));
	return taken > had ? (uint32_t)(taken - had) : 0;
}

/* In-order stream octets: MPA startup frames, then FPDUs. */
void
wn_mpa_rx_input(struct mpa_stream *s)
{
	const uint8_t *d;
	uint32_t n;

	while (s->tcp != NULL && s->started && !s->rx_held &&
	       (n = wn_tcp_recv_peek(s->tcp, &d)) > 0) {
		if (wn_mpa_conn_rx_inplace(&s->mpa)) {
			/* whole FPDUs where they lie in the buffer, none gathered */
			struct iovec in[2];
			unsigned int k = wn_tcp_recv_peekv(s->tcp, in);
			enum rx_stop why;
			size_t taken = rx_inplace(s, in, k, &why);

			if (s->tcp == NULL)
				return;
			if (taken > 0)
				(void)wn_tcp_recv_consume(s->tcp, (uint32_t)taken);
			if (why == RX_WAIT)
				break; /* a part of an FPDU: placed once the rest arrives */
			if (why != RX_DEFRAMER)
				continue;
			n = wn_tcp_recv_peek(s->tcp, &d);
		}
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
		wn_mpa_flush_startup(s);
	if (s->ackw_queued && !s->in_input)
		wn_mpa_ackw_release(s);
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
