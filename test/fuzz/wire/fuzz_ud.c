/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the decoder of warpnic's unreliable datagrams (wn_wire_ud.h: DATA,
 * SIDR REQ and REP). Whatever decodes is re-encoded and must give the same header octets,
 * the same SIDR body and private data, and decode to the same message; a DATA message's
 * payload is the rest of the datagram. The input's first 40 octets also go through the GRH
 * builder as an IPv4 and an IPv6 header.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_wire_ud.h"

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
	uint8_t out[WN_UD_HDR_LEN + WN_UD_SIDR_REQ_LEN + WN_UD_SIDR_REQ_PD_MAX];
	uint8_t grh[WN_UD_GRH_LEN];
	struct wn_ud_msg m, d;
	enum wn_ud_status st;
	size_t hs;
	int n;

	if (size >= 20 && wn_wire_ud_grh_from_ip(data, 20, grh) == 0)
		check(memcmp(grh + 20, data, 20) == 0);
	if (size >= 40 && wn_wire_ud_grh_from_ip(data, 40, grh) == 0)
		check(memcmp(grh, data, 40) == 0);
	st = wn_wire_ud_decode(data, size, &m);
	check(wn_wire_ud_status_str(st) != NULL);
	if (st != WN_UD_OK)
		return 0;
	hs = wn_wire_ud_hdr_size(&m);
	check(hs >= WN_UD_HDR_LEN && hs <= size);
	check(m.dqpn <= WN_UD_QPN_MASK && m.sqpn <= WN_UD_QPN_MASK);
	if (m.type == WN_UD_DATA)
		check(m.payload == data + hs && m.len == size - hs);
	else
		check(hs == size && (m.pd_len == 0 || m.pd == data + hs - m.pd_len));
	n = wn_wire_ud_encode(&m, out, sizeof(out));
	check(n == (int)hs);
	check(memcmp(out, data, hs) == 0);
	check(wn_wire_ud_decode(out, (size_t)n, &d) == WN_UD_OK);
	check(d.type == m.type && d.flags == m.flags && d.dqpn == m.dqpn && d.sqpn == m.sqpn &&
	      d.qkey == m.qkey && d.imm == m.imm && d.req_id == m.req_id && d.ps == m.ps &&
	      d.dport == m.dport && d.sport == m.sport && d.status == m.status &&
	      d.pd_len == m.pd_len);
	check(wn_wire_ud_encode(&m, out, hs - 1) == -ENOSPC);
	return 0;
}
