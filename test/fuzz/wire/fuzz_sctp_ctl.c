/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the RFC 5043 DDP Stream Session Control decoder (PPID 17 payloads, with
 * the RFC 6581 enhanced codes). Whatever decodes is re-encoded and must give the same octets
 * (B/C/D with A=0 and the reserved high bits aside) and decode to the same message; the RFC 6581
 * negotiation runs on its enhanced data as lib/sctp runs it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_wire_sctp.h"

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
	struct wn_sctp_ctl c, d;
	struct wn_mpa_frame f;
	struct wn_mpa_neg neg;
	uint8_t out[WN_SCTP_CTL_MAX];
	enum wn_sctp_ctl_status st;
	int n;

	st = wn_wire_sctp_ctl_decode(data, size, &c);
	check(wn_wire_sctp_ctl_status_str(st) != NULL);
	if (st != WN_SCTP_CTL_OK)
		return 0;
	check(size >= WN_SCTP_CTL_HDR_LEN && size <= WN_SCTP_CTL_MAX);
	check(strcmp(wn_wire_sctp_func_str(c.func), "unknown") != 0);
	n = wn_wire_sctp_ctl_encode(&c, out, sizeof(out));
	check(n == (int)size);
	check(memcmp(out, data, WN_SCTP_CTL_HDR_LEN) == 0);
	if (wn_sctp_func_enhanced(c.func) && c.p2p)
		check(memcmp(out + 4, data + 4, 4) == 0);
	check(c.pd_len == 0 || memcmp(out + size - c.pd_len, data + size - c.pd_len, c.pd_len) == 0);
	check(wn_wire_sctp_ctl_decode(out, (size_t)n, &d) == WN_SCTP_CTL_OK);
	check(d.ssn == c.ssn && d.func == c.func && d.p2p == c.p2p && d.rtr == c.rtr &&
	      d.ird == c.ird && d.ord == c.ord && d.pd_len == c.pd_len);
	/* a shorter buffer never encodes */
	check(wn_wire_sctp_ctl_encode(&c, out, size - 1) == -ENOSPC);

	wn_wire_sctp_ctl_to_mpa(&c, &f);
	check(f.enhanced == wn_sctp_func_enhanced(c.func));
	struct wn_mpa_caps caps = {
		.ird = (uint16_t)(data[size - 1] & 0x3F),
		.ord = (uint16_t)(data[size / 2] & 0x3F),
		.p2p = (data[size - 1] & 0x80) != 0,
		.rtr = (uint8_t)(data[size / 3] & WN_MPA_RTR_ALL),
	};
	check(wn_wire_mpa_negotiate_responder(&caps, &f, &neg) <= WN_MPA_ERR_NO_RTR);
	check(wn_wire_mpa_negotiate_initiator(&caps, &f, &neg) <= WN_MPA_ERR_NO_RTR);
	return 0;
}
