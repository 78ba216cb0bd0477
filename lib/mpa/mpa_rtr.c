/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RFC 6581 §9.2 Ready-to-Receive messages: the zero-length Send, RDMA Write
 * or RDMA Read Request an initiator sends first in the peer-to-peer model,
 * and their recognition on the responder. Layouts: RFC 5041 §4.2-4.3,
 * RFC 5040 §4.1/§4.4.
 */
#include <errno.h>
#include <string.h>

#include "wn_mpa.h"

/* DDP control octet (U+0) and RDMAP control octet (U+1) of the RTRs. */
#define DDP_T      0x80u /* tagged */
#define DDP_L      0x40u /* last */
#define DDP_DV1    0x01u /* DDP version 1 */
#define RDMAP_RV1  0x40u /* RDMAP version 1 */
#define OP_WRITE   0x0u
#define OP_READREQ 0x1u
#define OP_SEND    0x3u
#define QN_SEND    0u
#define QN_READ    1u

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

int
wn_mpa_rtr_build(enum wn_mpa_rtr type, uint32_t stag, uint32_t msn, uint8_t *out, size_t cap)
{
	size_t len;

	switch (type) {
	case WN_MPA_RTR_WRITE:
		len = WN_MPA_RTR_WRITE_LEN;
		break;
	case WN_MPA_RTR_READ:
		len = WN_MPA_RTR_READ_LEN;
		break;
	case WN_MPA_RTR_SEND:
		len = WN_MPA_RTR_SEND_LEN;
		break;
	default:
		return -EINVAL;
	}
	if (out == NULL || cap < len)
		return out == NULL ? -EINVAL : -ENOSPC;
	memset(out, 0, len);
	if (type == WN_MPA_RTR_WRITE) {
		/* tagged, Last, STag, TO 0: RFC 5041 §4.2 */
		out[0] = DDP_T | DDP_L | DDP_DV1;
		out[1] = RDMAP_RV1 | OP_WRITE;
		put32(out + 2, stag);
		return (int)len;
	}
	/* untagged, Last: RsvdULP 0, QN, MSN, MO 0 (RFC 5041 §4.3) */
	out[0] = DDP_L | DDP_DV1;
	out[1] = RDMAP_RV1 | (type == WN_MPA_RTR_READ ? OP_READREQ : OP_SEND);
	put32(out + 6, type == WN_MPA_RTR_READ ? QN_READ : QN_SEND);
	put32(out + 10, msn);
	if (type == WN_MPA_RTR_READ) {
		/* RFC 5040 §4.4: sink STag/TO, size 0, source STag/TO */
		put32(out + 18, stag);
		put32(out + 34, stag);
	}
	return (int)len;
}

int
wn_mpa_rtr_classify(const uint8_t *hdr, size_t hdr_len, uint16_t ulpdu_len)
{
	if (hdr == NULL || hdr_len < 2)
		return -1;
	bool tagged = (hdr[0] & DDP_T) != 0;
	unsigned int op = hdr[1] & 0x0Fu;

	if (tagged && op == OP_WRITE && ulpdu_len == WN_MPA_RTR_WRITE_LEN)
		return WN_MPA_RTR_WRITE;
	if (!tagged && op == OP_SEND && ulpdu_len == WN_MPA_RTR_SEND_LEN)
		return WN_MPA_RTR_SEND;
	if (!tagged && op == OP_READREQ && ulpdu_len == WN_MPA_RTR_READ_LEN) {
		/* a zero-length Read: RDMA Read Message Size at U+30 is 0 (when seen) */
		if (hdr_len >= 34 && (hdr[30] | hdr[31] | hdr[32] | hdr[33]) != 0)
			return 0;
		return WN_MPA_RTR_READ;
	}
	return 0;
}
