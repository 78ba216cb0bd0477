/* SPDX-License-Identifier: BSD-3-Clause */
/* warpnic's unreliable datagrams on the wire: the header codec and the GRH (wn_wire_ud.h). */
#include <errno.h>
#include <string.h>

#include "wn_wire_ud.h"

const char *
wn_wire_ud_status_str(enum wn_ud_status st)
{
	static const char *const names[WN_UD_STATUS_COUNT] = {
		[WN_UD_OK] = "ok",
		[WN_UD_SHORT] = "shorter than its header",
		[WN_UD_BAD_MAGIC] = "not a warpnic datagram",
		[WN_UD_BAD_VERSION] = "unknown version",
		[WN_UD_BAD_TYPE] = "unknown type",
		[WN_UD_BAD_FLAGS] = "unknown flags",
		[WN_UD_BAD_RSVD] = "reserved field not zero",
		[WN_UD_BAD_PD] = "private data length",
		[WN_UD_BAD_STATUS] = "unknown SIDR status",
	};

	if ((unsigned int)st >= WN_UD_STATUS_COUNT)
		return "unknown";
	return names[st];
}

size_t
wn_wire_ud_hdr_size(const struct wn_ud_msg *m)
{
	switch (m->type) {
	case WN_UD_DATA:
		return WN_UD_HDR_LEN + ((m->flags & WN_UD_F_IMM) ? WN_UD_IMM_LEN : 0);
	case WN_UD_SIDR_REQ:
		return WN_UD_HDR_LEN + WN_UD_SIDR_REQ_LEN + m->pd_len;
	case WN_UD_SIDR_REP:
		return WN_UD_HDR_LEN + WN_UD_SIDR_REP_LEN + m->pd_len;
	default:
		return 0;
	}
}

/* A SIDR message's private data: exactly the rest of the datagram, within @p max. */
static enum wn_ud_status
sidr_pd(const uint8_t *body, size_t rest, size_t fixed, size_t max, struct wn_ud_msg *m)
{
	m->pd_len = wn_wire_get_be16(body + fixed - 2);
	if (m->pd_len > max || m->pd_len != rest - fixed)
		return WN_UD_BAD_PD;
	m->pd = m->pd_len != 0 ? body + fixed : NULL;
	return WN_UD_OK;
}

enum wn_ud_status
wn_wire_ud_decode(const uint8_t *buf, size_t len, struct wn_ud_msg *m)
{
	const uint8_t *body = buf + WN_UD_HDR_LEN;
	size_t rest;
	uint32_t w;

	if (len < WN_UD_HDR_LEN)
		return WN_UD_SHORT;
	if (buf[0] != WN_UD_MAGIC0 || buf[1] != WN_UD_MAGIC1)
		return WN_UD_BAD_MAGIC;
	if (buf[2] != WN_UD_VERSION)
		return WN_UD_BAD_VERSION;
	memset(m, 0, sizeof(*m));
	m->type = buf[3];
	w = wn_wire_get_be32(buf + 4);
	m->flags = (uint8_t)(w >> 24);
	m->dqpn = w & WN_UD_QPN_MASK;
	w = wn_wire_get_be32(buf + 8);
	if ((w >> 24) != 0)
		return WN_UD_BAD_RSVD;
	m->sqpn = w;
	m->qkey = wn_wire_get_be32(buf + 12);
	rest = len - WN_UD_HDR_LEN;
	switch (m->type) {
	case WN_UD_DATA:
		if ((m->flags & ~WN_UD_F_MASK) != 0)
			return WN_UD_BAD_FLAGS;
		if (m->flags & WN_UD_F_IMM) {
			if (rest < WN_UD_IMM_LEN)
				return WN_UD_SHORT;
			memcpy(&m->imm, body, WN_UD_IMM_LEN);
			body += WN_UD_IMM_LEN;
			rest -= WN_UD_IMM_LEN;
		}
		m->payload = body;
		m->len = (uint32_t)rest;
		return WN_UD_OK;
	case WN_UD_SIDR_REQ:
		if (m->flags != 0)
			return WN_UD_BAD_FLAGS;
		if (rest < WN_UD_SIDR_REQ_LEN)
			return WN_UD_SHORT;
		m->req_id = wn_wire_get_be32(body);
		m->ps = wn_wire_get_be16(body + 4);
		m->dport = wn_wire_get_be16(body + 6);
		m->sport = wn_wire_get_be16(body + 8);
		return sidr_pd(body, rest, WN_UD_SIDR_REQ_LEN, WN_UD_SIDR_REQ_PD_MAX, m);
	case WN_UD_SIDR_REP:
		if (m->flags != 0)
			return WN_UD_BAD_FLAGS;
		if (rest < WN_UD_SIDR_REP_LEN)
			return WN_UD_SHORT;
		m->req_id = wn_wire_get_be32(body);
		m->status = body[4];
		if (body[5] != 0)
			return WN_UD_BAD_RSVD;
		if (m->status > WN_UD_SIDR_NO_QP)
			return WN_UD_BAD_STATUS;
		return sidr_pd(body, rest, WN_UD_SIDR_REP_LEN, WN_UD_SIDR_REP_PD_MAX, m);
	default:
		return WN_UD_BAD_TYPE;
	}
}

int
wn_wire_ud_encode(const struct wn_ud_msg *m, uint8_t *buf, size_t cap)
{
	size_t n = wn_wire_ud_hdr_size(m);
	uint8_t *body = buf + WN_UD_HDR_LEN;
	uint8_t flags = m->type == WN_UD_DATA ? m->flags : 0;

	if (n == 0 || (flags & ~WN_UD_F_MASK) != 0 || m->status > WN_UD_SIDR_NO_QP ||
	    (m->type == WN_UD_SIDR_REQ && m->pd_len > WN_UD_SIDR_REQ_PD_MAX) ||
	    (m->type == WN_UD_SIDR_REP && m->pd_len > WN_UD_SIDR_REP_PD_MAX) ||
	    (m->type != WN_UD_DATA && m->pd_len != 0 && m->pd == NULL))
		return -EINVAL;
	if (cap < n)
		return -ENOSPC;
	buf[0] = WN_UD_MAGIC0;
	buf[1] = WN_UD_MAGIC1;
	buf[2] = WN_UD_VERSION;
	buf[3] = m->type;
	wn_wire_put_be32(buf + 4, (uint32_t)flags << 24 | (m->dqpn & WN_UD_QPN_MASK));
	wn_wire_put_be32(buf + 8, m->sqpn & WN_UD_QPN_MASK);
	wn_wire_put_be32(buf + 12, m->qkey);
	switch (m->type) {
	case WN_UD_DATA:
		if (flags & WN_UD_F_IMM)
			memcpy(body, &m->imm, WN_UD_IMM_LEN);
		break;
	case WN_UD_SIDR_REQ:
		wn_wire_put_be32(body, m->req_id);
		wn_wire_put_be16(body + 4, m->ps);
		wn_wire_put_be16(body + 6, m->dport);
		wn_wire_put_be16(body + 8, m->sport);
		wn_wire_put_be16(body + 10, m->pd_len);
		if (m->pd_len != 0)
			memcpy(body + WN_UD_SIDR_REQ_LEN, m->pd, m->pd_len);
		break;
	default: /* WN_UD_SIDR_REP */
		wn_wire_put_be32(body, m->req_id);
		body[4] = m->status;
		body[5] = 0;
		wn_wire_put_be16(body + 6, m->pd_len);
		if (m->pd_len != 0)
			memcpy(body + WN_UD_SIDR_REP_LEN, m->pd, m->pd_len);
		break;
	}
	return (int)n;
}

int
wn_wire_ud_grh_from_ip(const uint8_t *l3, size_t l3_len, uint8_t grh[WN_UD_GRH_LEN])
{
	if (l3_len == 20 && (l3[0] >> 4) == 4 && (l3[0] & 0xf) == 5) {
		/* RoCEv2 over IPv4: the IPv4 header in the last 20 octets of the GRH */
		memset(grh, 0, WN_UD_GRH_LEN - 20);
		memcpy(grh + WN_UD_GRH_LEN - 20, l3, 20);
		return 0;
	}
	if (l3_len == WN_UD_GRH_LEN && (l3[0] >> 4) == 6) {
		/* an IPv6 header is a GRH: the same fields at the same offsets (RoCEv2, IBTA Annex A17) */
		memcpy(grh, l3, WN_UD_GRH_LEN);
		return 0;
	}
	return -EINVAL;
}
