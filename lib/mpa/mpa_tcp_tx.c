/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA over TCP: transmit. Each ULPDU is framed into an FPDU (PAD, Markers, CRC32c) and
 * appended to TCP as one record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mpa_tcp_priv.h"

/* Frame the FPDU into the stream's staging buffer and append it to TCP as one record. */
static int
tx_copy(struct mpa_stream *s, const struct wn_llp_ulpdu *u)
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
	return 0;
}

/* The lib/llp send operation: zero-copy when possible, else copied. */
int
wn_mpa_tx_send(struct wn_llp *l, const struct wn_llp_ulpdu *u)
{
	struct mpa_stream *s = mpa_stream_of(l);
	struct mpa_proto *p = s->p;
	int ret;

	if (!l->tx_ready) {
		p->base.st.tx_again++;
		return -EAGAIN;
	}
	if (p->zc_done != NULL && u->src != WN_LLP_SRC_NONE && u->n_iov > 0 &&
	    u->msg_len >= p->c.zero_copy_min && wn_mpa_conn_state(&s->mpa) == WN_MPA_CONN_FULL &&
	    wn_mpa_conn_tx_allowed(&s->mpa)) {
		ret = wn_mpa_zc_send(s, u);
		if (ret != -ENOTSUP)
			goto out;
		p->base.st.zc_fallback++; /* this FPDU cannot go zero-copy: copy it */
	}
	ret = tx_copy(s, u);
out:
	if (ret == -EAGAIN) {
		p->base.st.tx_again++;
		return ret;
	}
	p->base.st.tx_ulpdus++;
	s->tx_ulpdus++;
	return ret;
}
