/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA over TCP: out-of-order placement through Markers (RFC 5044 §4.3). A TCP segment
 * queued above RCV.NXT is searched for complete FPDUs, whose ULPDUs the owner may place early;
 * everything is delivered again in order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpa_tcp_priv.h"

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
void
wn_mpa_ooo_recv(struct wn_tcp_conn *tc, void *arg, uint32_t seq, const uint8_t *data,
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
	(void)wn_wire_mpa_segment_fpdus(seq, data, len, &dc, false, &wn_wire_mpa_gather_ops,
					&s->ooo, NULL, NULL);
}
