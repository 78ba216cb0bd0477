/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the RDMAP builders and the segmentation helper: the
 * input supplies an opcode and its fields; every message the builders accept
 * must parse back to the same fields (or be rejected by the parser for a
 * rule the builders do not enforce, e.g. a wrapping TO, with the matching
 * reason). A message length and MULPDU from the input are segmented, every
 * segment header is built, parsed and checked against the span.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_wire_ddp.h"

static void
check(int cond)
{
	if (!cond)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct rd {
	const uint8_t *p;
	size_t n;
};

static uint64_t
take(struct rd *r, unsigned int octets)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < octets; i++) {
		v = v << 8 | (r->n ? *r->p : 0);
		if (r->n) {
			r->p++;
			r->n--;
		}
	}
	return v;
}

static void
segment(struct rd *r)
{
	uint32_t msg_len = (uint32_t)take(r, 3);
	uint32_t mulpdu = 128 + (uint32_t)(take(r, 2) % (64768 - 128 + 1));
	bool tagged = take(r, 1) & 1;
	uint64_t to0 = take(r, 8);
	uint32_t msn = (uint32_t)take(r, 4);
	struct wn_ddp_seg_iter it;
	struct wn_ddp_span s;
	struct wn_ddp_seg seg;
	static uint8_t buf[65536];
	uint64_t covered = 0;
	uint32_t count = 0;

	/* whole-range arithmetic, then a bounded walk (speed) */
	check(wn_wire_ddp_seg_count(UINT32_MAX, mulpdu, tagged) ==
	      (UINT32_MAX + (uint64_t)mulpdu - (tagged ? 14 : 18) - 1) /
		      (mulpdu - (tagged ? 14 : 18)));
	msg_len %= 2048 * (mulpdu - (tagged ? 14 : 18)) + 1;
	check(wn_wire_ddp_seg_iter_init(&it, msg_len, mulpdu, tagged) == 0);
	while (wn_wire_ddp_seg_iter_next(&it, &s)) {
		check(s.off == covered);
		check(s.len > 0 || msg_len == 0);
		check(s.len + (tagged ? 14u : 18u) <= mulpdu);
		covered += s.len;
		count++;
		check(count <= msg_len + 1);
		check(s.last == (covered == msg_len));
		if (count > 64 && !s.last)
			continue; /* headers of the first 64 and the last segment only */
		int n = tagged ? wn_wire_rdmap_write_build(buf, sizeof(buf), 1, to0 + s.off, s.last)
			       : wn_wire_rdmap_send_build(buf, sizeof(buf), WN_RDMAP_SEND, 0, msn,
							  s.off, s.last);
		check(n == (tagged ? 14 : 18));
		memset(buf + n, 0, s.len);
		int rc = wn_wire_ddp_parse(buf, (size_t)n + s.len, 0, &seg, NULL);
		if (tagged && s.len != 0 && to0 + s.off + (s.len - 1) < to0 + s.off)
			check(rc == -EBADMSG); /* TO wrap */
		else
			check(rc == 0 && seg.h.last == s.last && seg.payload_len == s.len &&
			      (tagged ? seg.h.to == to0 + s.off : seg.h.mo == s.off));
	}
	check(covered == msg_len);
	check(count == wn_wire_ddp_seg_count(msg_len, mulpdu, tagged));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rd r = {data, size};
	uint8_t out[128];
	struct wn_ddp_seg seg;
	struct wn_ddp_error err;
	int n, rc;

	if (size < 1)
		return 0;
	uint8_t op = (uint8_t)(take(&r, 1) & 0x1F);
	uint32_t msn = (uint32_t)take(&r, 4);
	switch (op) {
	case WN_RDMAP_WRITE:
	case WN_RDMAP_READ_RESP: {
		uint32_t stag = (uint32_t)take(&r, 4);
		uint64_t to = take(&r, 8);
		bool last = take(&r, 1) & 1;
		n = op == 0 ? wn_wire_rdmap_write_build(out, sizeof(out), stag, to, last)
			    : wn_wire_rdmap_read_resp_build(out, sizeof(out), stag, to, last);
		check(n == 14);
		check(wn_wire_ddp_parse(out, 14, 0, &seg, NULL) == 0);
		check(seg.h.opcode == op && seg.h.stag == stag && seg.h.to == to &&
		      seg.h.last == last);
		break;
	}
	case WN_RDMAP_READ_REQ: {
		struct wn_rdmap_read_req rr = {.sink_stag = (uint32_t)take(&r, 4),
					       .sink_to = take(&r, 8),
					       .size = (uint32_t)take(&r, 4),
					       .src_stag = (uint32_t)take(&r, 4),
					       .src_to = take(&r, 8)};
		check(wn_wire_rdmap_read_req_build(out, sizeof(out), msn, &rr) == 46);
		rc = wn_wire_ddp_parse(out, 46, 0, &seg, &err);
		if (rr.size != 0 && rr.src_to + (rr.size - 1) < rr.src_to) {
			check(rc == -EBADMSG && err.reason == WN_DDP_R_READ_WRAP);
			break;
		}
		check(rc == 0 && seg.h.msn == msn);
		check(seg.u.rreq.sink_stag == rr.sink_stag && seg.u.rreq.sink_to == rr.sink_to &&
		      seg.u.rreq.size == rr.size && seg.u.rreq.src_stag == rr.src_stag &&
		      seg.u.rreq.src_to == rr.src_to);
		break;
	}
	case WN_RDMAP_SEND:
	case WN_RDMAP_SEND_INV:
	case WN_RDMAP_SEND_SE:
	case WN_RDMAP_SEND_SE_INV: {
		uint32_t inv = (uint32_t)take(&r, 4), mo = (uint32_t)take(&r, 4);
		bool last = take(&r, 1) & 1;
		check(wn_wire_rdmap_send_build(out, sizeof(out), op, inv, msn, mo, last) == 18);
		check(wn_wire_ddp_parse(out, 18, 0, &seg, NULL) == 0);
		check(seg.h.opcode == op && seg.h.msn == msn && seg.h.mo == mo &&
		      seg.h.last == last && seg.h.qn == 0);
		check(seg.h.inv_stag == (wn_wire_rdmap_ops[op].invalidate ? inv : 0));
		break;
	}
	case WN_RDMAP_TERMINATE: {
		uint8_t bad[64];
		size_t bl = (size_t)take(&r, 1) % sizeof(bad);
		struct wn_term_cause c = {.layer = (uint8_t)take(&r, 1) & 0xF,
					  .etype = (uint8_t)take(&r, 1) & 0xF,
					  .code = (uint8_t)take(&r, 1)};
		struct wn_rdmap_term t;
		for (size_t i = 0; i < bl; i++)
			bad[i] = (uint8_t)take(&r, 1);
		check(wn_wire_rdmap_term_from_cause(&t, c, bl ? bad : NULL, bl) == 0);
		n = wn_wire_rdmap_term_build(out, sizeof(out), msn, &t);
		check(n >= 22 && n <= 70);
		check(wn_wire_ddp_parse(out, (size_t)n, 0, &seg, NULL) == 0);
		bool known = wn_wire_term_cause_known(c.layer, c.etype, c.code);
		check(seg.u.term.status == (known ? WN_TERM_OK : WN_TERM_UNKNOWN_CAUSE));
		check(seg.u.term.cause.layer == c.layer && seg.u.term.cause.etype == c.etype &&
		      seg.u.term.cause.code == c.code);
		check(seg.u.term.d == t.d && seg.u.term.r == t.r);
		break;
	}
	case WN_RDMAP_IMMEDIATE:
	case WN_RDMAP_IMMEDIATE_SE: {
		uint64_t v = take(&r, 8);
		check(wn_wire_rdmap_immediate_build(out, sizeof(out), op, msn, v) == 26);
		check(wn_wire_ddp_parse(out, 26, WN_DDP_F_RFC7306, &seg, NULL) == 0);
		check(seg.u.imm == v && seg.h.msn == msn);
		check(wn_wire_ddp_parse(out, 26, 0, &seg, &err) == -EBADMSG &&
		      err.reason == WN_DDP_R_OPCODE);
		break;
	}
	case WN_RDMAP_ATOMIC_REQ: {
		struct wn_rdmap_atomic_req ar = {.aopcode = (uint8_t)take(&r, 1) & 0xF,
						 .req_id = (uint32_t)take(&r, 4),
						 .stag = (uint32_t)take(&r, 4),
						 .to = take(&r, 8),
						 .add_swap = take(&r, 8),
						 .add_swap_mask = take(&r, 8),
						 .compare = take(&r, 8),
						 .compare_mask = take(&r, 8)};
		n = wn_wire_rdmap_atomic_req_build(out, sizeof(out), msn, &ar);
		if ((ar.aopcode != 0 && ar.aopcode != 2) || (ar.to & 7) != 0) {
			check(n == -EINVAL);
			break;
		}
		check(n == 70);
		check(wn_wire_ddp_parse(out, 70, WN_DDP_F_RFC7306, &seg, NULL) == 0);
		check(seg.u.areq.aopcode == ar.aopcode && seg.u.areq.req_id == ar.req_id &&
		      seg.u.areq.stag == ar.stag && seg.u.areq.to == ar.to &&
		      seg.u.areq.add_swap == ar.add_swap &&
		      seg.u.areq.add_swap_mask == ar.add_swap_mask);
		if (ar.aopcode == WN_RDMAP_AOP_CMP_SWAP)
			check(seg.u.areq.compare == ar.compare &&
			      seg.u.areq.compare_mask == ar.compare_mask);
		break;
	}
	case WN_RDMAP_ATOMIC_RESP: {
		struct wn_rdmap_atomic_resp as = {.req_id = (uint32_t)take(&r, 4),
						  .orig = take(&r, 8)};
		check(wn_wire_rdmap_atomic_resp_build(out, sizeof(out), msn, &as) == 30);
		check(wn_wire_ddp_parse(out, 30, WN_DDP_F_RFC7306, &seg, NULL) == 0);
		check(seg.u.aresp.req_id == as.req_id && seg.u.aresp.orig == as.orig);
		break;
	}
	default: {
		struct wn_ddp_hdr h = {.opcode = op};
		check(wn_wire_ddp_hdr_build(out, sizeof(out), &h) == -EINVAL);
		segment(&r);
		break;
	}
	}
	return 0;
}
