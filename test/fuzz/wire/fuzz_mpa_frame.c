/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the MPA Request/Reply decoder: octet 0 picks the
 * receive rules, the rest is the frame. Whatever decodes is re-encoded and
 * must decode to the same frame with the same significant octets; the
 * RFC 6581 negotiation helpers run on every decoded frame.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_wire_mpa.h"

static void
check(int cond)
{
	if (!cond)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wn_mpa_frame_rules rules;
	struct wn_mpa_frame f, g;
	uint8_t out[WN_MPA_FRAME_MAX];
	size_t used = 0, used2 = 0;

	if (size < 1)
		return 0;
	rules.rev_mask = data[0] & 7;
	rules.enhanced = (data[0] & 8) != 0;
	rules.pd_max = (data[0] & 16) ? 256 : 512;
	data++;
	size--;

	enum wn_mpa_frame_status st = wn_wire_mpa_frame_decode(data, size, &rules, &f, &used);
	check(wn_wire_mpa_frame_status_str(st) != NULL);
	if (st != WN_MPA_FRAME_OK) {
		/* any prefix of something that needs more also needs more (or fails) */
		return 0;
	}
	check(used >= WN_MPA_FRAME_HDR_LEN && used <= size);
	check(used <= WN_MPA_FRAME_MAX);
	/* every shorter prefix asks for more octets or fails the same way early */
	for (size_t l = 0; l < used; l += 1 + l / 8)
		check(wn_wire_mpa_frame_decode(data, l, &rules, &g, NULL) ==
		      WN_MPA_FRAME_NEED_MORE);

	int n = wn_wire_mpa_frame_encode(&f, out, sizeof(out));
	check(n == (int)used);
	check(memcmp(out, data, WN_MPA_KEY_LEN) == 0);
	uint8_t sig = WN_MPA_FLAG_M | WN_MPA_FLAG_C;
	if (f.type == WN_MPA_FRAME_REPLY)
		sig |= WN_MPA_FLAG_R;
	if (f.enhanced)
		sig |= WN_MPA_FLAG_S;
	check((out[16] & sig) == (data[16] & sig));
	check((out[16] & ~sig) == 0);
	check(memcmp(out + 17, data + 17, 3) == 0);
	if (f.enhanced && f.p2p)
		check(memcmp(out + 20, data + 20, 4) == 0);
	check(memcmp(out + used - f.pd_len, data + used - f.pd_len, f.pd_len) == 0);
	check(wn_wire_mpa_frame_decode(out, (size_t)n, &rules, &g, &used2) == WN_MPA_FRAME_OK);
	check(used2 == used && g.type == f.type && g.markers == f.markers && g.crc == f.crc &&
	      g.rejected == f.rejected && g.rev == f.rev && g.enhanced == f.enhanced &&
	      g.p2p == f.p2p && g.rtr == f.rtr && g.ird == f.ird && g.ord == f.ord &&
	      g.pd_len == f.pd_len);

	/* negotiation on whatever arrived, with capabilities taken from the input */
	struct wn_mpa_caps caps = {
		.ird = (uint16_t)(data[size - 1] & 0x3F),
		.ord = (uint16_t)(data[size / 2] & 0x3F),
		.ord_min = (uint16_t)(data[0] & 3),
		.p2p = (data[size - 1] & 0x80) != 0,
		.rtr = (uint8_t)(data[size / 3] & WN_MPA_RTR_ALL),
	};
	struct wn_mpa_neg neg;
	enum wn_mpa_err e = wn_wire_mpa_negotiate_responder(&caps, &f, &neg);
	check(e <= WN_MPA_ERR_NO_RTR);
	if (e == WN_MPA_ERR_NONE && f.enhanced) {
		if (f.ord != WN_MPA_IRD_ORD_NONEG)
			check(neg.ird <= caps.ird || (neg.ird == 1 && (neg.rtr & WN_MPA_RTR_READ)));
		if (f.ird != WN_MPA_IRD_ORD_NONEG)
			check(neg.ord <= f.ird);
		check(!f.p2p || neg.rtr != 0);
	}
	e = wn_wire_mpa_negotiate_initiator(&caps, &f, &neg);
	check(e <= WN_MPA_ERR_NO_RTR);
	if (e == WN_MPA_ERR_NONE && neg.rtr != 0) {
		/* exactly one RTR, and one the Reply announced */
		check((neg.rtr & (neg.rtr - 1)) == 0 && (neg.rtr & f.rtr) != 0);
	}
	return 0;
}
