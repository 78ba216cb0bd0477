/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA Request/Reply frames (RFC 5044 §7.1.1, RFC 6581 §6 and §9): strict
 * decoder, encoder, and the RFC 6581 IRD/ORD + RTR negotiation helpers.
 */
#include <errno.h>
#include <string.h>

#include "wn_wire_mpa.h"

static const uint8_t key_req[WN_MPA_KEY_LEN] = WN_MPA_KEY_REQ;
static const uint8_t key_rep[WN_MPA_KEY_LEN] = WN_MPA_KEY_REP;

const char *
wn_wire_mpa_err_str(enum wn_mpa_err err)
{
	static const char *const names[] = {
		[WN_MPA_ERR_NONE] = "none",
		[WN_MPA_ERR_CONN_LOST] = "connection lost",
		[WN_MPA_ERR_CRC] = "crc mismatch",
		[WN_MPA_ERR_MARKER] = "marker disagrees with ULPDU_Length",
		[WN_MPA_ERR_BAD_FRAME] = "invalid MPA request or reply",
		[WN_MPA_ERR_LOCAL] = "local catastrophic",
		[WN_MPA_ERR_INSUFFICIENT_IRD] = "insufficient IRD resources",
		[WN_MPA_ERR_NO_RTR] = "no matching RTR option",
	};

	if ((unsigned int)err >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[err];
}

const char *
wn_wire_mpa_frame_status_str(enum wn_mpa_frame_status st)
{
	static const char *const names[WN_MPA_FRAME_STATUS_COUNT] = {
		[WN_MPA_FRAME_OK] = "ok",
		[WN_MPA_FRAME_NEED_MORE] = "need more octets",
		[WN_MPA_FRAME_BAD_KEY] = "key is not an MPA request or reply key",
		[WN_MPA_FRAME_BAD_REV] = "revision above 2",
		[WN_MPA_FRAME_REV_REFUSED] = "revision not accepted by configuration",
		[WN_MPA_FRAME_PD_TOO_LONG] = "PD_Length above limit",
		[WN_MPA_FRAME_ENH_SHORT] = "S=1 but PD_Length below 4",
		[WN_MPA_FRAME_ENH_REFUSED] = "S=1 but enhanced MPA is disabled",
	};

	if ((unsigned int)st >= WN_MPA_FRAME_STATUS_COUNT)
		return "unknown";
	return names[st];
}

/* Match the available key octets against both keys; -1 if neither matches. */
static int
key_match(const uint8_t *buf, size_t have)
{
	bool req = true, rep = true;

	if (have > WN_MPA_KEY_LEN)
		have = WN_MPA_KEY_LEN;
	for (size_t i = 0; i < have; i++) {
		req = req && buf[i] == key_req[i];
		rep = rep && buf[i] == key_rep[i];
	}
	if (req)
		return WN_MPA_FRAME_REQUEST; /* also while both still match */
	if (rep)
		return WN_MPA_FRAME_REPLY;
	return -1;
}

void
wn_wire_mpa_enh_unpack(const uint8_t *p, struct wn_mpa_frame *f)
{
	uint32_t w = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];

	f->p2p = (w & WN_MPA_ENH_A) != 0;
	f->ird = (uint16_t)((w & WN_MPA_ENH_IRD_MASK) >> WN_MPA_ENH_IRD_SHIFT);
	f->ord = (uint16_t)(w & WN_MPA_ENH_ORD_MASK);
	f->rtr = 0;
	/* RFC 6581 §9.2: with A=0, B, C and D MUST be ignored on reception. */
	if (f->p2p) {
		if (w & WN_MPA_ENH_B)
			f->rtr |= WN_MPA_RTR_SEND;
		if (w & WN_MPA_ENH_C)
			f->rtr |= WN_MPA_RTR_WRITE;
		if (w & WN_MPA_ENH_D)
			f->rtr |= WN_MPA_RTR_READ;
	}
}

void
wn_wire_mpa_enh_pack(const struct wn_mpa_frame *f, uint8_t *p)
{
	uint32_t w = (uint32_t)f->ird << WN_MPA_ENH_IRD_SHIFT | f->ord;

	/* RFC 6581 §9.2: if A is 0, B, C and D MUST also be 0. */
	if (f->p2p) {
		w |= WN_MPA_ENH_A;
		if (f->rtr & WN_MPA_RTR_SEND)
			w |= WN_MPA_ENH_B;
		if (f->rtr & WN_MPA_RTR_WRITE)
			w |= WN_MPA_ENH_C;
		if (f->rtr & WN_MPA_RTR_READ)
			w |= WN_MPA_ENH_D;
	}
	p[0] = (uint8_t)(w >> 24);
	p[1] = (uint8_t)(w >> 16);
	p[2] = (uint8_t)(w >> 8);
	p[3] = (uint8_t)w;
}

enum wn_mpa_frame_status
wn_wire_mpa_frame_decode(const uint8_t *buf, size_t len, const struct wn_mpa_frame_rules *rules,
		    struct wn_mpa_frame *f, size_t *consumed)
{
	static const struct wn_mpa_frame_rules defaults = WN_MPA_FRAME_RULES_DEFAULT;
	unsigned int pd_len, pd_max;
	uint8_t flags, rev;
	int type;

	if (rules == NULL)
		rules = &defaults;
	if (len == 0)
		return WN_MPA_FRAME_NEED_MORE;
	/* RFC 5044 §7.1.2: a wrong key is a malformed frame; reject as early as seen. */
	type = key_match(buf, len);
	if (type < 0)
		return WN_MPA_FRAME_BAD_KEY;
	if (len < WN_MPA_KEY_LEN + 2)
		return WN_MPA_FRAME_NEED_MORE;
	flags = buf[16];
	rev = buf[17];
	if (rev > WN_MPA_REV_MAX)
		return WN_MPA_FRAME_BAD_REV;
	if ((rules->rev_mask & (1u << rev)) == 0)
		return WN_MPA_FRAME_REV_REFUSED;
	if (len < WN_MPA_FRAME_HDR_LEN)
		return WN_MPA_FRAME_NEED_MORE;
	pd_len = (unsigned int)buf[18] << 8 | buf[19];
	pd_max = rules->pd_max != 0 && rules->pd_max < WN_MPA_PD_MAX ? rules->pd_max : WN_MPA_PD_MAX;
	if (pd_len > pd_max)
		return WN_MPA_FRAME_PD_TOO_LONG;
	/* RFC 6581 §6: S is only meaningful from Rev 2; for Rev < 2 it is a Res bit. */
	bool s = rev >= WN_MPA_REV_2 && (flags & WN_MPA_FLAG_S) != 0;
	if (s && !rules->enhanced)
		return WN_MPA_FRAME_ENH_REFUSED; /* RFC 6581 §10: unenhanced responder */
	if (s && pd_len < WN_MPA_ENH_LEN)
		return WN_MPA_FRAME_ENH_SHORT;
	if (len < WN_MPA_FRAME_HDR_LEN + (size_t)pd_len)
		return WN_MPA_FRAME_NEED_MORE;

	memset(f, 0, sizeof(*f));
	f->type = (enum wn_mpa_frame_type)type;
	f->markers = (flags & WN_MPA_FLAG_M) != 0;
	f->crc = (flags & WN_MPA_FLAG_C) != 0;
	/* RFC 5044 §7.1.1: R is ignored in the Request. */
	f->rejected = type == WN_MPA_FRAME_REPLY && (flags & WN_MPA_FLAG_R) != 0;
	f->rev = rev;
	f->res = (uint8_t)(flags & (s ? WN_MPA_FLAG_RES : (WN_MPA_FLAG_RES | WN_MPA_FLAG_S)));
	f->enhanced = s;
	f->ird = WN_MPA_IRD_ORD_NONEG;
	f->ord = WN_MPA_IRD_ORD_NONEG;
	const uint8_t *pd = buf + WN_MPA_FRAME_HDR_LEN;
	if (s) {
		wn_wire_mpa_enh_unpack(pd, f);
		pd += WN_MPA_ENH_LEN;
		pd_len -= WN_MPA_ENH_LEN;
	}
	f->pd_len = (uint16_t)pd_len;
	f->pd = pd_len != 0 ? pd : NULL;
	if (consumed != NULL)
		*consumed = (size_t)(pd - buf) + pd_len;
	return WN_MPA_FRAME_OK;
}

int
wn_wire_mpa_frame_encode(const struct wn_mpa_frame *f, uint8_t *out, size_t cap)
{
	size_t total_pd, len;
	uint8_t flags = 0;

	if (f == NULL || out == NULL || f->rev > WN_MPA_REV_MAX)
		return -EINVAL;
	if (f->pd_len != 0 && f->pd == NULL)
		return -EINVAL;
	if (f->enhanced && (f->rev < WN_MPA_REV_2 || f->ird > WN_MPA_IRD_ORD_MAX ||
			    f->ord > WN_MPA_IRD_ORD_MAX))
		return -EINVAL;
	total_pd = (size_t)f->pd_len + (f->enhanced ? WN_MPA_ENH_LEN : 0);
	if (total_pd > WN_MPA_PD_MAX)
		return -EINVAL;
	len = WN_MPA_FRAME_HDR_LEN + total_pd;
	if (cap < len)
		return -ENOSPC;

	memcpy(out, f->type == WN_MPA_FRAME_REPLY ? key_rep : key_req, WN_MPA_KEY_LEN);
	if (f->markers)
		flags |= WN_MPA_FLAG_M;
	if (f->crc)
		flags |= WN_MPA_FLAG_C;
	if (f->rejected && f->type == WN_MPA_FRAME_REPLY)
		flags |= WN_MPA_FLAG_R;
	if (f->enhanced)
		flags |= WN_MPA_FLAG_S;
	out[16] = flags; /* Res: zero on send (RFC 5044 §7.1.1) */
	out[17] = f->rev;
	out[18] = (uint8_t)(total_pd >> 8);
	out[19] = (uint8_t)total_pd;
	uint8_t *pd = out + WN_MPA_FRAME_HDR_LEN;
	if (f->enhanced) {
		wn_wire_mpa_enh_pack(f, pd);
		pd += WN_MPA_ENH_LEN;
	}
	if (f->pd_len != 0)
		memcpy(pd, f->pd, f->pd_len);
	return (int)len;
}

static uint16_t
min16(uint16_t a, uint16_t b)
{
	return a < b ? a : b;
}

static bool
caps_valid(const struct wn_mpa_caps *c)
{
	return c != NULL && c->ird <= WN_MPA_IRD_ORD_MAX && c->ord <= WN_MPA_IRD_ORD_MAX &&
	       c->ord_min <= WN_MPA_IRD_ORD_MAX && (c->rtr & ~WN_MPA_RTR_ALL) == 0;
}

enum wn_mpa_err
wn_wire_mpa_negotiate_responder(const struct wn_mpa_caps *local, const struct wn_mpa_frame *req,
			   struct wn_mpa_neg *out)
{
	if (out == NULL)
		return WN_MPA_ERR_LOCAL;
	memset(out, 0, sizeof(*out));
	if (!caps_valid(local) || req == NULL)
		return WN_MPA_ERR_LOCAL;
	out->ird = local->ird;
	out->ord = local->ord;
	out->peer_ird = WN_MPA_IRD_ORD_NONEG;
	out->peer_ord = WN_MPA_IRD_ORD_NONEG;
	/* RFC 6581 §10: an unenhanced Request gets an unenhanced Reply; the ULP decides. */
	if (!req->enhanced)
		return WN_MPA_ERR_NONE;

	out->enhanced = true;
	out->peer_ird = req->ird;
	out->peer_ord = req->ord;
	/* RFC 6581 §9.1: initiator ORD 0x3FFF: leave IRD unchanged, answer IRD 0x3FFF. */
	if (req->ord == WN_MPA_IRD_ORD_NONEG) {
		out->reply_ird = WN_MPA_IRD_ORD_NONEG;
	} else {
		out->ird = min16(local->ird, req->ord);
		out->reply_ird = out->ird;
	}
	/* Initiator IRD 0x3FFF: leave ORD unchanged, answer ORD 0x3FFF. */
	if (req->ird == WN_MPA_IRD_ORD_NONEG) {
		out->reply_ord = WN_MPA_IRD_ORD_NONEG;
	} else {
		/* "The responder MUST set its ORD at most to the initiator IRD." */
		if (req->ird < local->ord_min) {
			/* MAY reject, naming the required ORD in the Reject (error 6). */
			out->reply_ord = local->ord_min;
			return WN_MPA_ERR_INSUFFICIENT_IRD;
		}
		out->ord = min16(local->ord, req->ird);
		out->reply_ord = out->ord;
	}
	if (!req->p2p)
		return WN_MPA_ERR_NONE; /* client/server: A, B, C, D all 0 in the Reply */

	/* RFC 6581 §9.2: A=1 in the Request => A=1 and at least one RTR type in the Reply. */
	out->p2p = true;
	if (local->rtr == 0)
		return WN_MPA_ERR_NO_RTR;
	uint8_t common = req->rtr & local->rtr;
	out->rtr = common != 0 ? common : local->rtr;
	/*
	 * A zero-length Read RTR uses one inbound Read slot: "if the initiator ORD
	 * is 0 ... the responder IRD can be set to 1" (RFC 6581 §9.1).
	 */
	if ((out->rtr & WN_MPA_RTR_READ) && out->ird == 0) {
		if (local->ird >= 1) {
			out->ird = 1;
			if (out->reply_ird != WN_MPA_IRD_ORD_NONEG)
				out->reply_ird = 1;
		} else {
			out->rtr &= (uint8_t)~WN_MPA_RTR_READ;
			if (out->rtr == 0)
				return WN_MPA_ERR_NO_RTR;
		}
	}
	return WN_MPA_ERR_NONE;
}

enum wn_mpa_err
wn_wire_mpa_negotiate_initiator(const struct wn_mpa_caps *local, const struct wn_mpa_frame *rep,
			   struct wn_mpa_neg *out)
{
	if (out == NULL)
		return WN_MPA_ERR_LOCAL;
	memset(out, 0, sizeof(*out));
	if (!caps_valid(local) || rep == NULL)
		return WN_MPA_ERR_LOCAL;
	out->ird = local->ird;
	out->ord = local->ord;
	out->peer_ird = WN_MPA_IRD_ORD_NONEG;
	out->peer_ord = WN_MPA_IRD_ORD_NONEG;
	/* Rev 1 / S=0 peer: no negotiation and no RTR; the ULP sends first (RFC 6581 §10). */
	if (!rep->enhanced)
		return WN_MPA_ERR_NONE;

	out->enhanced = true;
	out->peer_ird = rep->ird;
	out->peer_ord = rep->ord;
	/* RFC 6581 §9.1: ORD at most the responder IRD; 0x3FFF leaves ORD unchanged. */
	if (rep->ird != WN_MPA_IRD_ORD_NONEG)
		out->ord = min16(local->ord, rep->ird);
	/* IRD at least the responder ORD; 0x3FFF leaves IRD unchanged. */
	if (rep->ord != WN_MPA_IRD_ORD_NONEG && rep->ord > local->ird)
		return WN_MPA_ERR_INSUFFICIENT_IRD;
	if (!local->p2p)
		return WN_MPA_ERR_NONE;

	/* RFC 6581 §9.2: generate one of the negotiated RTRs, else Terminate code 7. */
	if (!rep->p2p)
		return WN_MPA_ERR_NO_RTR;
	out->p2p = true;
	uint8_t common = rep->rtr & local->rtr;
	if (common & WN_MPA_RTR_WRITE)
		out->rtr = WN_MPA_RTR_WRITE;
	else if (common & WN_MPA_RTR_READ)
		out->rtr = WN_MPA_RTR_READ;
	else if (common & WN_MPA_RTR_SEND)
		out->rtr = WN_MPA_RTR_SEND;
	else
		return WN_MPA_ERR_NO_RTR;
	return WN_MPA_ERR_NONE;
}
