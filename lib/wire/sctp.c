/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DDP/SCTP adaptation wire formats (RFC 5043 §5, RFC 6581 §7): the session control codec and
 * the maximum DDP segment (wn_wire_sctp.h).
 */
#include <errno.h>
#include <string.h>

#include "wn_wire_sctp.h"

/* SCTP common header, DATA chunk header, and a SACK chunk without gap blocks. */
#define SCTP_COMMON_HDR 12u
#define SCTP_DATA_HDR   16u
#define SCTP_SACK_MIN   16u

const char *
wn_wire_sctp_ctl_status_str(enum wn_sctp_ctl_status st)
{
	static const char *const names[WN_SCTP_CTL_STATUS_COUNT] = {
		[WN_SCTP_CTL_OK] = "ok",
		[WN_SCTP_CTL_SHORT] = "shorter than DDP-SSN and Function Code",
		[WN_SCTP_CTL_BAD_FUNC] = "unknown Function Code",
		[WN_SCTP_CTL_PD_TOO_LONG] = "Private Data above 512 octets",
		[WN_SCTP_CTL_ENH_SHORT] = "enhanced code without IRD/ORD data",
		[WN_SCTP_CTL_TERM_PD] = "Terminate with Private Data",
	};

	if ((unsigned int)st >= WN_SCTP_CTL_STATUS_COUNT)
		return "unknown";
	return names[st];
}

const char *
wn_wire_sctp_func_str(uint16_t func)
{
	static const char *const names[] = {
		[WN_SCTP_INITIATE] = "initiate",
		[WN_SCTP_ACCEPT] = "accept",
		[WN_SCTP_REJECT] = "reject",
		[WN_SCTP_TERMINATE] = "terminate",
		[WN_SCTP_ENH_INITIATE] = "enhanced initiate",
		[WN_SCTP_ENH_ACCEPT] = "enhanced accept",
		[WN_SCTP_ENH_REJECT] = "enhanced reject",
	};

	if (func >= sizeof(names) / sizeof(names[0]) || names[func] == NULL)
		return "unknown";
	return names[func];
}

enum wn_sctp_ctl_status
wn_wire_sctp_ctl_decode(const uint8_t *buf, size_t len, struct wn_sctp_ctl *c)
{
	struct wn_mpa_frame f;
	size_t pd_len;

	if (len < WN_SCTP_CTL_HDR_LEN)
		return WN_SCTP_CTL_SHORT;
	memset(c, 0, sizeof(*c));
	c->ssn = wn_sctp_ssn_get(buf);
	c->func = (uint16_t)(buf[2] << 8 | buf[3]);
	c->ird = WN_MPA_IRD_ORD_NONEG;
	c->ord = WN_MPA_IRD_ORD_NONEG;
	if (c->func < WN_SCTP_INITIATE || c->func > WN_SCTP_ENH_REJECT)
		return WN_SCTP_CTL_BAD_FUNC; /* 0xFFFF (experimental) included */
	pd_len = len - WN_SCTP_CTL_HDR_LEN;
	if (pd_len > WN_SCTP_PD_MAX)
		return WN_SCTP_CTL_PD_TOO_LONG;
	if (c->func == WN_SCTP_TERMINATE && pd_len != 0)
		return WN_SCTP_CTL_TERM_PD;
	buf += WN_SCTP_CTL_HDR_LEN;
	if (wn_sctp_func_enhanced(c->func)) {
		if (pd_len < WN_MPA_ENH_LEN)
			return WN_SCTP_CTL_ENH_SHORT;
		memset(&f, 0, sizeof(f));
		wn_wire_mpa_enh_unpack(buf, &f);
		c->p2p = f.p2p;
		c->rtr = f.rtr;
		c->ird = f.ird;
		c->ord = f.ord;
		buf += WN_MPA_ENH_LEN;
		pd_len -= WN_MPA_ENH_LEN;
	}
	c->pd_len = (uint16_t)pd_len;
	c->pd = pd_len != 0 ? buf : NULL;
	return WN_SCTP_CTL_OK;
}

int
wn_wire_sctp_ctl_encode(const struct wn_sctp_ctl *c, uint8_t *out, size_t cap)
{
	bool enh;
	size_t total;
	uint8_t *p;

	if (c == NULL || out == NULL || c->func < WN_SCTP_INITIATE ||
	    c->func > WN_SCTP_ENH_REJECT || (c->pd_len != 0 && c->pd == NULL))
		return -EINVAL;
	enh = wn_sctp_func_enhanced(c->func);
	total = (size_t)c->pd_len + (enh ? WN_MPA_ENH_LEN : 0);
	if (total > WN_SCTP_PD_MAX || (c->func == WN_SCTP_TERMINATE && total != 0) ||
	    (enh && (c->ird > WN_MPA_IRD_ORD_MAX || c->ord > WN_MPA_IRD_ORD_MAX)))
		return -EINVAL;
	if (cap < WN_SCTP_CTL_HDR_LEN + total)
		return -ENOSPC;
	wn_sctp_ssn_put(out, c->ssn);
	out[2] = (uint8_t)(c->func >> 8);
	out[3] = (uint8_t)c->func;
	p = out + WN_SCTP_CTL_HDR_LEN;
	if (enh) {
		struct wn_mpa_frame f;

		wn_wire_sctp_ctl_to_mpa(c, &f);
		wn_wire_mpa_enh_pack(&f, p);
		p += WN_MPA_ENH_LEN;
	}
	if (c->pd_len != 0)
		memcpy(p, c->pd, c->pd_len);
	return (int)(WN_SCTP_CTL_HDR_LEN + total);
}

void
wn_wire_sctp_ctl_to_mpa(const struct wn_sctp_ctl *c, struct wn_mpa_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->rev = WN_MPA_REV_2;
	f->enhanced = wn_sctp_func_enhanced(c->func);
	f->p2p = f->enhanced && c->p2p;
	f->rtr = f->p2p ? c->rtr : 0;
	f->ird = f->enhanced ? c->ird : WN_MPA_IRD_ORD_NONEG;
	f->ord = f->enhanced ? c->ord : WN_MPA_IRD_ORD_NONEG;
	f->pd = c->pd;
	f->pd_len = c->pd_len;
}

uint32_t
wn_wire_sctp_mulpdu(uint32_t mtu, uint32_t ip_hdr)
{
	uint32_t room;

	if (mtu < ip_hdr + SCTP_COMMON_HDR + SCTP_DATA_HDR + SCTP_SACK_MIN + WN_SCTP_MULPDU_MIN)
		return WN_SCTP_MULPDU_MIN;
	/* chunks are padded to 4 octets (RFC 4960 §3.2) */
	room = (mtu - ip_hdr - SCTP_COMMON_HDR - SCTP_DATA_HDR - SCTP_SACK_MIN) & ~3u;
	room -= WN_SCTP_SSN_LEN;
	return room < WN_SCTP_MULPDU_MIN ? WN_SCTP_MULPDU_MIN : room;
}
