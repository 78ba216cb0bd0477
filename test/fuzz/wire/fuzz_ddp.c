/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the strict ULPDU parser: octet 0 bit 0 enables the
 * RFC 7306 opcodes, the rest is one ULPDU. A rejection must name a defined
 * Terminate cause and produce a Terminate that parses back to that cause;
 * an accepted segment is rebuilt with the builders, must match the input's
 * significant octets, and the rebuilt ULPDU must parse to the same fields.
 */
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

static void
check_reject(const uint8_t *u, size_t len, const struct wn_ddp_error *err)
{
	struct wn_rdmap_term t, p;
	uint8_t out[128];

	check(err->reason > WN_DDP_R_OK && err->reason < WN_DDP_R_COUNT);
	check(wn_wire_term_cause_known(err->cause.layer, err->cause.etype, err->cause.code));
	check(wn_wire_ddp_reason_str(err->reason) != NULL);
	check(wn_wire_rdmap_term_from_cause(&t, err->cause, u, len) == 0);
	/* RFC 5040 Fig. 10: DDP errors carry the DDP header when it was whole */
	if (err->cause.layer == WN_TERM_LAYER_DDP && err->hdr_valid)
		check(t.d && t.m);
	int n = wn_wire_rdmap_term_build(out, sizeof(out), 1, &t);
	check(n >= 22 && n <= 70);
	struct wn_ddp_seg seg;
	check(wn_wire_ddp_parse(out, (size_t)n, 0, &seg, NULL) == 0);
	check(seg.h.opcode == WN_RDMAP_TERMINATE);
	p = seg.u.term;
	check(p.status == WN_TERM_OK);
	check(p.cause.layer == err->cause.layer && p.cause.etype == err->cause.etype &&
	      p.cause.code == err->cause.code);
	check(p.d == t.d && p.r == t.r && p.m == t.m);
	if (p.d)
		check(memcmp(p.ddp_hdr, u, p.ddp_hdr_len) == 0);
}

static void
check_same(const struct wn_ddp_seg *a, const struct wn_ddp_seg *b)
{
	check(a->h.opcode == b->h.opcode && a->h.tagged == b->h.tagged && a->h.last == b->h.last);
	check(a->h.stag == b->h.stag && a->h.to == b->h.to && a->h.qn == b->h.qn &&
	      a->h.msn == b->h.msn && a->h.mo == b->h.mo);
	check(a->hdr_len == b->hdr_len && a->payload_len == b->payload_len);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wn_ddp_seg seg, again;
	struct wn_ddp_error err;
	static uint8_t out[WN_DDP_ULPDU_MAX + 128];

	if (size < 1 || size > WN_DDP_ULPDU_MAX + 1)
		return 0;
	unsigned int flags = (data[0] & 1) ? WN_DDP_F_RFC7306 : 0;
	const uint8_t *u = data + 1;
	size_t len = size - 1;

	if (wn_wire_ddp_parse(len ? u : NULL, len, flags, &seg, &err) != 0) {
		check_reject(u, len, &err);
		return 0;
	}
	check((size_t)seg.hdr_len + seg.payload_len == len);
	check(seg.payload == u + seg.hdr_len);
	check(seg.dv == WN_DDP_VERSION && seg.rv == WN_RDMAP_VERSION);
	const struct wn_rdmap_op *op = &wn_wire_rdmap_ops[seg.h.opcode];
	check(op->valid && op->tagged == seg.h.tagged);
	check(len >= op->min_ulpdu && len <= op->max_ulpdu);

	/* rebuild */
	int n;
	switch (seg.h.opcode) {
	case WN_RDMAP_READ_REQ:
		n = wn_wire_rdmap_read_req_build(out, sizeof(out), seg.h.msn, &seg.u.rreq);
		break;
	case WN_RDMAP_IMMEDIATE:
	case WN_RDMAP_IMMEDIATE_SE:
		n = wn_wire_rdmap_immediate_build(out, sizeof(out), seg.h.opcode, seg.h.msn,
						  seg.u.imm);
		break;
	case WN_RDMAP_ATOMIC_REQ:
		n = wn_wire_rdmap_atomic_req_build(out, sizeof(out), seg.h.msn, &seg.u.areq);
		break;
	case WN_RDMAP_ATOMIC_RESP:
		n = wn_wire_rdmap_atomic_resp_build(out, sizeof(out), seg.h.msn, &seg.u.aresp);
		break;
	case WN_RDMAP_TERMINATE:
		if (seg.u.term.status != WN_TERM_OK)
			return 0;
		n = wn_wire_rdmap_term_build(out, sizeof(out), seg.h.msn, &seg.u.term);
		break;
	default:
		n = wn_wire_ddp_hdr_build(out, sizeof(out), &seg.h);
		break;
	}
	check(n == (int)seg.hdr_len);
	check(out[0] == (u[0] & (uint8_t)~WN_DDP_CTRL_RSVD));
	check(out[1] == (u[1] & (uint8_t)~WN_RDMAP_CTRL_RSV));
	if (seg.h.tagged || op->invalidate)
		check(memcmp(out + 2, u + 2, 4) == 0);
	else
		check(wn_wire_get_be32(out + 2) == 0);
	size_t cmp_end = (size_t)n;
	if (seg.h.opcode == WN_RDMAP_ATOMIC_REQ && seg.u.areq.aopcode == WN_RDMAP_AOP_FETCH_ADD)
		cmp_end = 18 + offsetof(struct wn_rdmap_atomic_req_hdr, compare);
	if (seg.h.opcode == WN_RDMAP_ATOMIC_REQ)
		/* the 28 reserved bits before the AOpCode are zero on send */
		check(memcmp(out + 6, u + 6, 12) == 0 && out[18] == 0 && out[19] == 0 &&
		      out[20] == 0 && out[21] == (u[21] & 0x0F) &&
		      memcmp(out + 22, u + 22, cmp_end - 22) == 0);
	else if (seg.h.opcode == WN_RDMAP_TERMINATE)
		/* the 13 reserved bits of the control word are zero on send */
		check(memcmp(out + 6, u + 6, 14) == 0 && out[20] == (u[20] & 0xE0) &&
		      out[21] == 0 && memcmp(out + 22, u + 22, cmp_end - 22) == 0);
	else
		check(memcmp(out + 6, u + 6, cmp_end - 6) == 0);

	/* the rebuilt ULPDU parses to the same segment */
	memcpy(out + n, seg.payload, seg.payload_len);
	check(wn_wire_ddp_parse(out, (size_t)n + seg.payload_len, flags, &again, NULL) == 0);
	check_same(&seg, &again);
	return 0;
}
