/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA over TCP: transmit. Each ULPDU is one FPDU (PAD, Markers, CRC32c) appended to TCP as one
 * record: by reference or zero-copy when its payload is registered memory (mpa_tcp_zc.c),
 * else framed into the stream's staging buffer and copied.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpa_tcp_priv.h"

/*
 * TCP has no room for the FPDU: it holds this stream's data (an FPDU never needs more than
 * the two segments TCP always allows a connection holding nothing), so the peer's ACK will
 * make room and wn_mpa_zc_sent() tells the owner (struct wn_llp_up tx_room).
 */
static int
room_wait(struct mpa_stream *s)
{
	s->l.tx_room_wait = true;
	return -EAGAIN;
}

/*
 * Frame the FPDU and append it to TCP as one record: framed in place in TCP's send buffer
 * (one copy of the payload), or, where the record would wrap around that ring, in the
 * stream's staging buffer and copied.
 */
static int
tx_copy(struct mpa_stream *s, const struct wn_llp_ulpdu *u)
{
	const struct wn_mpa_params *mp = wn_mpa_conn_params(&s->mpa);
	struct iovec iov[WN_LLP_MAX_IOV + 1];
	uint8_t *dst;
	size_t need;
	int w, err;

	need = wn_wire_mpa_fpdu_wire_len(s->mpa.tx_next, mp->tx.seq_start, mp->tx.markers, u->len);
	if (need > wn_tcp_send_space(s->tcp))
		return room_wait(s);
	if (need > s->txcap)
		return -EAGAIN;
	iov[0].iov_base = (void *)(uintptr_t)u->hdr;
	iov[0].iov_len = u->hdr_len;
	for (unsigned int i = 0; i < u->n_iov; i++) {
		iov[i + 1].iov_base = (void *)(uintptr_t)u->iov[i].base;
		iov[i + 1].iov_len = u->iov[i].len;
	}
	dst = wn_tcp_record_claim(s->tcp, (uint32_t)need, &err);
	if (dst == NULL && err != 0)
		return -EAGAIN;
	if (dst != NULL) {
		w = wn_mpa_conn_frame(&s->mpa, iov, u->n_iov + 1u, dst, need);
		if (w < 0)
			return -EAGAIN;
		wn_tcp_record_commit(s->tcp, (uint32_t)w);
	} else {
		w = wn_mpa_conn_frame(&s->mpa, iov, u->n_iov + 1u, s->txbuf, s->txcap);
		if (w < 0)
			return -EAGAIN;
		if (wn_tcp_send_record(s->tcp, s->txbuf, (uint32_t)w) != 0) {
			/* not sent: the next FPDU starts where this one would have */
			s->mpa.tx_next -= (uint32_t)w;
			return -EAGAIN;
		}
	}
	if (u->n_iov > 0) {
		s->p->base.st.copy_ulpdus++;
		s->p->base.st.copy_bytes += u->len - u->hdr_len;
	}
	/* DDP's Last flag (RFC 5041 §4.2): the message's last segment */
	if (s->ack_completions && u->src == WN_LLP_SRC_SQ && (u->hdr[0] & 0x40) != 0 &&
	    wn_mpa_ackw_push(s, u->wqe) == 0)
		return WN_LLP_TX_HELD;
	return 0;
}

/* Why a payload is copied (struct wn_llp_stats copy_*): @p why is the refused reference's. */
static void
count_copy(struct mpa_proto *p, const struct wn_llp_ulpdu *u, int why)
{
	if (u->src == WN_LLP_SRC_NONE)
		p->base.st.copy_inline++;
	else if (why == -ENOSPC || (p->zc_done == NULL && (p->c.ref_tx || p->c.zero_copy)))
		p->base.st.copy_no_token++;
	else if (why == -EPERM)
		p->base.st.copy_unpinned++;
	else if (!p->ref)
		p->base.st.copy_staged++;
	else if (u->msg_len < p->c.ref_min)
		p->base.st.copy_small++;
	else
		p->base.st.copy_other++; /* TCP refused it, or outside Full Operation */
}

/*
 * The lib/llp send operation. A payload of registered memory goes by reference (TCP copies
 * it once into each segment) or zero-copy; anything else, or when that is refused, is
 * framed into the staging buffer and copied into TCP.
 */
int
wn_mpa_tx_send(struct wn_llp *l, const struct wn_llp_ulpdu *u)
{
	struct mpa_stream *s = mpa_stream_of(l);
	struct mpa_proto *p = s->p;
	int ret = -ENOTSUP;

	if (!l->tx_ready) {
		p->base.st.tx_again++;
		return -EAGAIN;
	}
	if (u->n_iov > 0 && u->src != WN_LLP_SRC_NONE && p->zc_done != NULL &&
	    wn_mpa_conn_state(&s->mpa) == WN_MPA_CONN_FULL && wn_mpa_conn_tx_allowed(&s->mpa)) {
		const struct wn_mpa_params *mp = wn_mpa_conn_params(&s->mpa);
		bool attach = p->attach && u->msg_len >= p->c.zero_copy_min;

		if (!attach && u->msg_len < p->c.ref_min)
			goto copy;
		/* no room for it: say so before a token is taken */
		if (wn_wire_mpa_fpdu_wire_len(s->mpa.tx_next, mp->tx.seq_start, mp->tx.markers,
					 u->len) > wn_tcp_send_space(s->tcp)) {
			p->base.st.tx_again++;
			return room_wait(s);
		}
		if (attach) {
			ret = wn_mpa_zc_send(s, u, true);
			if (ret < 0 && ret != -EAGAIN)
				p->base.st.zc_fallback++; /* this FPDU cannot go zero-copy */
		}
		if (ret < 0 && ret != -EAGAIN && p->ref && u->msg_len >= p->c.ref_min)
			ret = wn_mpa_zc_send(s, u, false);
	}
copy:
	if (ret < 0 && ret != -EAGAIN) {
		int why = ret;

		ret = tx_copy(s, u);
		/* copies made, not attempts: a refused one is offered again */
		if (ret != -EAGAIN && u->n_iov > 0)
			count_copy(p, u, why);
	}
	if (ret == -EAGAIN) {
		p->base.st.tx_again++;
		return ret;
	}
	p->base.st.tx_ulpdus++;
	s->tx_ulpdus++;
	l->tx_room_wait = false;
	return ret;
}
