/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DDP segment codec (RFC 5041): header layouts, strict parse and its mapping
 * of every rejection to a Terminate (layer, etype, code), segmentation
 * arithmetic and MSN wrap. A failure here means warpnic places data from
 * malformed segments, answers them with the wrong Terminate, or segments
 * messages differently from RFC 5041 §5.2.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "wn_wire_ddp.h"

static void
test_layout(void **state)
{
	uint8_t b[WN_DDP_UNTAGGED_HDR_LEN];
	(void)state;

	/* RFC 5041 §4.1: "41 43" = untagged, Last, DV 1, RV 1, Send */
	struct wn_ddp_hdr h = {.opcode = WN_RDMAP_SEND, .last = true, .msn = 1};
	assert_int_equal(wn_wire_ddp_hdr_build(b, sizeof(b), &h), 18);
	assert_int_equal(b[0], 0x41);
	assert_int_equal(b[1], 0x43);
	assert_int_equal(wn_wire_get_be16(b) & WN_DDP_HCTRL_L, WN_DDP_HCTRL_L);
	assert_int_equal(wn_wire_get_be16(b) & WN_DDP_HCTRL_T, 0);
	assert_int_equal((wn_wire_get_be16(b) & WN_DDP_HCTRL_DV) >> 8, 1);
	assert_int_equal((wn_wire_get_be16(b) & WN_DDP_HCTRL_RV) >> 6, 1);
	assert_int_equal(wn_wire_get_be16(b) & WN_DDP_HCTRL_OPCODE, 3);
	/* "c1 40" = tagged Last RDMA Write */
	assert_int_equal(
		wn_wire_rdmap_write_build(b, sizeof(b), 0x01020304u, 0x1122334455667788ull, true),
		14);
	static const uint8_t w[14] = {0xc1, 0x40, 0x01, 0x02, 0x03, 0x04, 0x11,
				      0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
	assert_memory_equal(b, w, 14);
	assert_true(wn_ddp_ctrl_tagged(b[0]) && wn_ddp_ctrl_last(b[0]));
	assert_int_equal(wn_ddp_ctrl_dv(b[0]), 1);
	assert_int_equal(wn_rdmap_ctrl_rv(b[1]), 1);
	assert_int_equal(wn_rdmap_ctrl_opcode(b[1]), 0);
	/* not last */
	assert_int_equal(wn_wire_rdmap_write_build(b, sizeof(b), 1, 0, false), 14);
	assert_int_equal(b[0], 0x81);
	/* field offsets of the untagged header (RFC 5041 §4.3) */
	h = (struct wn_ddp_hdr){.opcode = WN_RDMAP_SEND_INV,
				.inv_stag = 0xA1A2A3A4u,
				.msn = 0xB1B2B3B4u,
				.mo = 0xC1C2C3C4u};
	assert_int_equal(wn_wire_ddp_hdr_build(b, sizeof(b), &h), 18);
	static const uint8_t s[18] = {0x01, 0x44, 0xA1, 0xA2, 0xA3, 0xA4, 0,	0,    0,
				      0,    0xB1, 0xB2, 0xB3, 0xB4, 0xC1, 0xC2, 0xC3, 0xC4};
	assert_memory_equal(b, s, 18);
	/* Invalidate STag is zero for opcodes without it (RFC 5040 §4.1) */
	h.opcode = WN_RDMAP_SEND;
	assert_int_equal(wn_wire_ddp_hdr_build(b, sizeof(b), &h), 18);
	assert_int_equal(wn_wire_get_be32(b + 2), 0);
}

static void
test_build_errors(void **state)
{
	uint8_t b[32];
	struct wn_ddp_hdr h = {.opcode = WN_RDMAP_SEND};
	(void)state;

	assert_int_equal(wn_wire_ddp_hdr_build(b, 17, &h), -ENOSPC);
	assert_int_equal(wn_wire_ddp_hdr_build(NULL, 32, &h), -EINVAL);
	h.opcode = 0xC;
	assert_int_equal(wn_wire_ddp_hdr_build(b, sizeof(b), &h), -EINVAL);
	h.opcode = 0x10;
	assert_int_equal(wn_wire_ddp_hdr_build(b, sizeof(b), &h), -EINVAL);
	h.opcode = WN_RDMAP_WRITE;
	assert_int_equal(wn_wire_ddp_hdr_build(b, 13, &h), -ENOSPC);
	assert_int_equal(wn_wire_rdmap_send_build(b, sizeof(b), WN_RDMAP_WRITE, 0, 1, 0, true),
			 -EINVAL);
}

static void
test_parse_tagged(void **state)
{
	uint8_t b[64];
	struct wn_ddp_seg seg;
	struct wn_ddp_error err;
	(void)state;

	assert_int_equal(wn_wire_rdmap_read_resp_build(b, sizeof(b), 0xDEADBEEFu, 16384, false),
			 14);
	for (unsigned int i = 0; i < 20; i++)
		b[14 + i] = (uint8_t)i;
	assert_int_equal(wn_wire_ddp_parse(b, 34, 0, &seg, &err), 0);
	assert_true(seg.h.tagged);
	assert_false(seg.h.last);
	assert_int_equal(seg.h.opcode, WN_RDMAP_READ_RESP);
	assert_int_equal(seg.h.stag, 0xDEADBEEFu);
	assert_int_equal(seg.h.to, 16384);
	assert_int_equal(seg.hdr_len, 14);
	assert_int_equal(seg.payload_len, 20);
	assert_ptr_equal(seg.payload, b + 14);
	/* zero-length tagged segment: valid, STag/TO not checked (RFC 5041 §5.2) */
	assert_int_equal(wn_wire_rdmap_write_build(b, sizeof(b), 0, UINT64_MAX, true), 14);
	assert_int_equal(wn_wire_ddp_parse(b, 14, 0, &seg, &err), 0);
	assert_int_equal(seg.payload_len, 0);
	/* reserved bits are ignored on receive */
	b[0] |= WN_DDP_CTRL_RSVD;
	b[1] |= WN_RDMAP_CTRL_RSV;
	assert_int_equal(wn_wire_ddp_parse(b, 14, 0, &seg, &err), 0);
	assert_int_equal(seg.h.opcode, WN_RDMAP_WRITE);
}

static void
test_parse_untagged(void **state)
{
	uint8_t b[64];
	struct wn_ddp_seg seg;
	(void)state;

	assert_int_equal(
		wn_wire_rdmap_send_build(b, sizeof(b), WN_RDMAP_SEND_SE_INV, 0x77, 9, 1436, true),
		18);
	memset(b + 18, 0xAB, 10);
	assert_int_equal(wn_wire_ddp_parse(b, 28, 0, &seg, NULL), 0);
	assert_false(seg.h.tagged);
	assert_true(seg.h.last);
	assert_int_equal(seg.h.opcode, WN_RDMAP_SEND_SE_INV);
	assert_int_equal(seg.h.inv_stag, 0x77);
	assert_int_equal(seg.h.qn, 0);
	assert_int_equal(seg.h.msn, 9);
	assert_int_equal(seg.h.mo, 1436);
	assert_int_equal(seg.payload_len, 10);
	assert_ptr_equal(seg.payload, b + 18);
	assert_int_equal(seg.dv, 1);
	assert_int_equal(seg.rv, 1);
	/* zero-length Send (FULPDU RTR) */
	assert_int_equal(wn_wire_rdmap_send_build(b, sizeof(b), WN_RDMAP_SEND, 0, 1, 0, true), 18);
	assert_int_equal(wn_wire_ddp_parse(b, 18, 0, &seg, NULL), 0);
	assert_int_equal(seg.payload_len, 0);
	assert_int_equal(wn_wire_ddp_parse(NULL, 0, 0, &seg, NULL), -EBADMSG);
	assert_int_equal(wn_wire_ddp_parse(b, 18, 0, NULL, NULL), -EINVAL);
	assert_int_equal(wn_wire_ddp_parse(NULL, 3, 0, &seg, NULL), -EINVAL);
}

/* One rejection: a valid ULPDU, a mutation, the expected reason and Terminate. */
struct rej {
	const char *what;
	int kind; /* 0 Send(10 payload) 1 Write(10) 2 Read Req 3 Immediate 4 Atomic Req 5 Atomic
		     Resp */
	unsigned int flags;
	int off;     /* octet to overwrite, -1 none */
	uint8_t val; /* new value (or mask with xor) */
	bool xor_;
	int len_delta; /* change of the ULPDU length */
	enum wn_ddp_reason reason;
	uint8_t layer, etype, code;
	bool hdr_valid;
};

static size_t
make(int kind, uint8_t *b, size_t cap)
{
	int n = -1;

	memset(b, 0, cap);
	switch (kind) {
	case 0:
		n = wn_wire_rdmap_send_build(b, cap, WN_RDMAP_SEND, 0, 1, 0, true) + 10;
		break;
	case 1:
		n = wn_wire_rdmap_write_build(b, cap, 5, 4096, true) + 10;
		break;
	case 2: {
		struct wn_rdmap_read_req rr = {
			.sink_stag = 1, .sink_to = 0, .size = 100, .src_stag = 2, .src_to = 64};
		n = wn_wire_rdmap_read_req_build(b, cap, 1, &rr);
		break;
	}
	case 3:
		n = wn_wire_rdmap_immediate_build(b, cap, WN_RDMAP_IMMEDIATE, 1, 42);
		break;
	case 4: {
		struct wn_rdmap_atomic_req ar = {.aopcode = WN_RDMAP_AOP_CMP_SWAP,
						 .req_id = 7,
						 .stag = 3,
						 .to = 64,
						 .add_swap = 1,
						 .add_swap_mask = UINT64_MAX,
						 .compare = 0,
						 .compare_mask = UINT64_MAX};
		n = wn_wire_rdmap_atomic_req_build(b, cap, 1, &ar);
		break;
	}
	case 5: {
		struct wn_rdmap_atomic_resp as = {.req_id = 7, .orig = 99};
		n = wn_wire_rdmap_atomic_resp_build(b, cap, 1, &as);
		break;
	}
	}
	assert_true(n > 0);
	return (size_t)n;
}

#define L_RDMAP 0
#define L_DDP	1
#define F7306	WN_DDP_F_RFC7306

static const struct rej rejections[] = {
	{"untagged DDP version 0", 0, 0, 0, 0x40, false, 0, WN_DDP_R_DDP_VERSION, L_DDP, 2, 0x06,
	 true},
	{"untagged DDP version 2", 0, 0, 0, 0x03, true, 0, WN_DDP_R_DDP_VERSION, L_DDP, 2, 0x06,
	 true},
	{"tagged DDP version 0", 1, 0, 0, 0xC0, false, 0, WN_DDP_R_DDP_VERSION, L_DDP, 1, 0x04,
	 true},
	{"tagged DDP version 3", 1, 0, 0, 0x02, true, 0, WN_DDP_R_DDP_VERSION, L_DDP, 1, 0x04,
	 true},
	{"RDMAP version 0", 0, 0, 1, 0x03, false, 0, WN_DDP_R_RDMAP_VERSION, L_RDMAP, 2, 0x05,
	 true},
	{"RDMAP version 2", 1, 0, 1, 0x80, false, 0, WN_DDP_R_RDMAP_VERSION, L_RDMAP, 2, 0x05,
	 true},
	{"opcode 0xC", 0, F7306, 1, 0x4C, false, 0, WN_DDP_R_OPCODE, L_RDMAP, 2, 0x06, true},
	{"opcode 0xE", 0, F7306, 1, 0x4E, false, 0, WN_DDP_R_OPCODE, L_RDMAP, 2, 0x06, true},
	{"opcode 0xF", 0, F7306, 1, 0x4F, false, 0, WN_DDP_R_OPCODE, L_RDMAP, 2, 0x06, true},
	{"Immediate without RFC 7306", 3, 0, -1, 0, false, 0, WN_DDP_R_OPCODE, L_RDMAP, 2, 0x06,
	 true},
	{"Atomic without RFC 7306", 4, 0, -1, 0, false, 0, WN_DDP_R_OPCODE, L_RDMAP, 2, 0x06, true},
	{"Send opcode in a tagged segment", 1, 0, 1, 0x43, false, 0, WN_DDP_R_OPCODE_T, L_RDMAP, 2,
	 0x06, true},
	{"Write opcode in an untagged segment", 0, 0, 1, 0x40, false, 0, WN_DDP_R_OPCODE_T, L_RDMAP,
	 2, 0x06, true},
	{"Send on QN 1", 0, 0, 9, 1, false, 0, WN_DDP_R_QN, L_DDP, 2, 0x01, true},
	{"Send on QN 0x100", 0, 0, 8, 1, false, 0, WN_DDP_R_QN, L_DDP, 2, 0x01, true},
	{"Read Request on QN 0", 2, 0, 9, 0, false, 0, WN_DDP_R_QN, L_DDP, 2, 0x01, true},
	{"Immediate on QN 1", 3, F7306, 9, 1, false, 0, WN_DDP_R_QN, L_DDP, 2, 0x01, true},
	{"Atomic Response on QN 1", 5, F7306, 9, 1, false, 0, WN_DDP_R_QN, L_DDP, 2, 0x01, true},
	{"Read Request without L", 2, 0, 0, 0x01, false, 0, WN_DDP_R_NOT_LAST, L_DDP, 2, 0x05,
	 true},
	{"Atomic Request without L", 4, F7306, 0, 0x01, false, 0, WN_DDP_R_NOT_LAST, L_DDP, 2, 0x05,
	 true},
	{"Read Request with MO 4", 2, 0, 17, 4, false, 0, WN_DDP_R_MO, L_DDP, 2, 0x04, true},
	{"Immediate with MO 8", 3, F7306, 17, 8, false, 0, WN_DDP_R_MO, L_DDP, 2, 0x04, true},
	{"Read Request 45 octets", 2, 0, -1, 0, false, -1, WN_DDP_R_HDR_SHORT, L_RDMAP, 2, 0xFF,
	 true},
	{"Read Request 47 octets", 2, 0, -1, 0, false, 1, WN_DDP_R_TOO_LONG, L_DDP, 2, 0x05, true},
	{"Immediate Data of 7 octets", 3, F7306, -1, 0, false, -1, WN_DDP_R_HDR_SHORT, L_RDMAP, 2,
	 0xFF, true},
	{"Immediate Data of 9 octets", 3, F7306, -1, 0, false, 1, WN_DDP_R_TOO_LONG, L_DDP, 2, 0x05,
	 true},
	{"Immediate Data of 0 octets", 3, F7306, -1, 0, false, -8, WN_DDP_R_HDR_SHORT, L_RDMAP, 2,
	 0xFF, true},
	{"Atomic Request 69 octets", 4, F7306, -1, 0, false, -1, WN_DDP_R_HDR_SHORT, L_RDMAP, 2,
	 0xFF, true},
	{"Atomic Response 31 octets", 5, F7306, -1, 0, false, 1, WN_DDP_R_TOO_LONG, L_DDP, 2, 0x05,
	 true},
	{"AOpCode 1 (reserved)", 4, F7306, 21, 0x01, false, 0, WN_DDP_R_AOPCODE, L_RDMAP, 2, 0x06,
	 true},
	{"AOpCode 3", 4, F7306, 21, 0x03, false, 0, WN_DDP_R_AOPCODE, L_RDMAP, 2, 0x06, true},
	{"atomic TO + 4", 4, F7306, 37, 0x44, false, 0, WN_DDP_R_ATOMIC_ALIGN, L_RDMAP, 2, 0x07,
	 true},
	{"atomic TO + 1", 4, F7306, 37, 0x41, false, 0, WN_DDP_R_ATOMIC_ALIGN, L_RDMAP, 2, 0x07,
	 true},
};

static void
check_reject(const uint8_t *b, size_t len, unsigned int flags, enum wn_ddp_reason reason,
	     uint8_t layer, uint8_t etype, uint8_t code, bool hdr_valid, const char *what)
{
	struct wn_ddp_seg seg;
	struct wn_ddp_error err;

	print_message("  reject: %s\n", what);
	assert_int_equal(wn_wire_ddp_parse(b, len, flags, &seg, &err), -EBADMSG);
	assert_int_equal(err.reason, reason);
	assert_int_equal(err.cause.layer, layer);
	assert_int_equal(err.cause.etype, etype);
	assert_int_equal(err.cause.code, code);
	assert_int_equal(err.hdr_valid, hdr_valid);
	/* the mapping is also available without parsing (except DV: per T bit) */
	if (reason != WN_DDP_R_DDP_VERSION) {
		struct wn_term_cause c = wn_wire_ddp_reason_cause(reason);
		assert_int_equal(c.layer, layer);
		assert_int_equal(c.etype, etype);
		assert_int_equal(c.code, code);
	}
	assert_true(wn_wire_term_cause_known(layer, etype, code));
	assert_string_not_equal(wn_wire_ddp_reason_str(reason), "unknown");
}

static void
test_rejections(void **state)
{
	uint8_t b[128];
	struct wn_ddp_seg seg;
	(void)state;

	for (size_t i = 0; i < sizeof(rejections) / sizeof(rejections[0]); i++) {
		const struct rej *r = &rejections[i];
		size_t len = make(r->kind, b, sizeof(b));

		/* the unmutated ULPDU is valid (with RFC 7306 on) */
		assert_int_equal(wn_wire_ddp_parse(b, len, F7306, &seg, NULL), 0);
		if (r->off >= 0)
			b[r->off] = r->xor_ ? (uint8_t)(b[r->off] ^ r->val) : r->val;
		len = (size_t)((long)len + r->len_delta);
		check_reject(b, len, r->flags, r->reason, r->layer, r->etype, r->code, r->hdr_valid,
			     r->what);
	}
}

static void
test_truncated(void **state)
{
	uint8_t b[64];
	size_t len;
	(void)state;

	len = make(0, b, sizeof(b));
	for (size_t l = 0; l < 18; l++)
		check_reject(b, l, 0, WN_DDP_R_TRUNCATED, L_RDMAP, 2, 0xFF, false,
			     "short untagged header");
	len = make(1, b, sizeof(b));
	for (size_t l = 1; l < 14; l++)
		check_reject(b, l, 0, WN_DDP_R_TRUNCATED, L_RDMAP, 2, 0xFF, false,
			     "short tagged header");
	/* a wrong DDP version is reported from the first octet, header incomplete */
	b[0] = 0x80;
	check_reject(b, 5, 0, WN_DDP_R_DDP_VERSION, L_DDP, 1, 0x04, false, "DV 0, 5 octets");
	(void)len;
}

static void
test_wraps(void **state)
{
	uint8_t b[128];
	struct wn_ddp_seg seg;
	(void)state;

	/* RFC 5041 §7.1: TO + payload must not wrap */
	assert_int_equal(wn_wire_rdmap_write_build(b, sizeof(b), 1, UINT64_MAX - 9, true), 14);
	assert_int_equal(wn_wire_ddp_parse(b, 14 + 10, 0, &seg, NULL),
			 0); /* ends exactly at 2^64 */
	check_reject(b, 14 + 11, 0, WN_DDP_R_TO_WRAP, L_DDP, 1, 0x03, true, "TO wrap");
	/* zero-length tagged: TO not checked (RFC 5041 §5.2) */
	assert_int_equal(wn_wire_rdmap_write_build(b, sizeof(b), 0, UINT64_MAX, true), 14);
	assert_int_equal(wn_wire_ddp_parse(b, 14, 0, &seg, NULL), 0);

	/* RFC 5040 §7.2 4e: source TO + size must not wrap; size 0 not validated */
	struct wn_rdmap_read_req rr = {.sink_stag = 1,
				       .sink_to = 0,
				       .size = 0x100,
				       .src_stag = 2,
				       .src_to = UINT64_MAX - 0xFE};
	assert_int_equal(wn_wire_rdmap_read_req_build(b, sizeof(b), 1, &rr), 46);
	assert_int_equal(wn_wire_ddp_parse(b, 46, 0, &seg, NULL), -EBADMSG);
	check_reject(b, 46, 0, WN_DDP_R_READ_WRAP, L_RDMAP, 1, 0x04, true, "Read source wrap");
	rr.src_to = UINT64_MAX - 0xFF; /* last octet at 2^64 - 1 */
	assert_int_equal(wn_wire_rdmap_read_req_build(b, sizeof(b), 1, &rr), 46);
	assert_int_equal(wn_wire_ddp_parse(b, 46, 0, &seg, NULL), 0);
	rr.size = 0;
	rr.src_to = UINT64_MAX;
	assert_int_equal(wn_wire_rdmap_read_req_build(b, sizeof(b), 1, &rr), 46);
	assert_int_equal(wn_wire_ddp_parse(b, 46, 0, &seg, NULL), 0);

	/* RFC 5041 §5.2: message length MO + payload below 2^32 */
	assert_int_equal(
		wn_wire_rdmap_send_build(b, sizeof(b), WN_RDMAP_SEND, 0, 1, UINT32_MAX - 10, false),
		18);
	assert_int_equal(wn_wire_ddp_parse(b, 18 + 10, 0, &seg, NULL), 0);
	check_reject(b, 18 + 11, 0, WN_DDP_R_TOO_LONG, L_DDP, 2, 0x05, true, "MO + len >= 2^32");
}

/* RFC 5041 §5.2 example: 2048 octets at TO 16384 over MULPDU 1500. */
static void
test_segmentation_rfc5041(void **state)
{
	struct wn_ddp_seg_iter it;
	struct wn_ddp_span s;
	uint8_t b[1500];
	struct wn_ddp_seg seg;
	const uint64_t to0 = 16384;
	(void)state;

	assert_int_equal(wn_wire_ddp_seg_iter_init(&it, 2048, 1500, true), 0);
	assert_true(wn_wire_ddp_seg_iter_next(&it, &s));
	assert_int_equal(s.off, 0);
	assert_int_equal(s.len, 1486);
	assert_false(s.last);
	/* the header built for it parses back to TO 16384 and fits MULPDU */
	assert_int_equal(wn_wire_rdmap_write_build(b, sizeof(b), 9, to0 + s.off, s.last), 14);
	assert_int_equal(wn_wire_ddp_parse(b, 14 + s.len, 0, &seg, NULL), 0);
	assert_int_equal(seg.h.to, 16384);
	assert_false(seg.h.last);
	assert_true(wn_wire_ddp_seg_iter_next(&it, &s));
	assert_int_equal(s.off, 1486);
	assert_int_equal(to0 + s.off, 17870);
	assert_int_equal(s.len, 562);
	assert_true(s.last);
	assert_false(wn_wire_ddp_seg_iter_next(&it, &s));
	assert_int_equal(wn_wire_ddp_seg_count(2048, 1500, true), 2);

	/* untagged: 1482 per segment at MULPDU 1500, and 1436 at 1454 (RFC 5044 §4.5) */
	assert_int_equal(wn_wire_ddp_seg_iter_init(&it, 2048, 1500, false), 0);
	assert_true(wn_wire_ddp_seg_iter_next(&it, &s));
	assert_int_equal(s.len, 1482);
	assert_true(wn_wire_ddp_seg_iter_next(&it, &s));
	assert_int_equal(s.off, 1482);
	assert_int_equal(s.len, 566);
	assert_true(s.last);
	assert_int_equal(wn_wire_ddp_seg_count(1436 * 3, 1454, false), 3);
	assert_int_equal(wn_wire_ddp_seg_count(1436 * 3 + 1, 1454, false), 4);
	assert_int_equal(wn_wire_ddp_seg_count(1440, 1454, true), 1);
	assert_int_equal(wn_wire_ddp_seg_count(1441, 1454, true), 2);

	/* zero-length message: exactly one L segment (RFC 5041 §5.2) */
	assert_int_equal(wn_wire_ddp_seg_iter_init(&it, 0, 1500, false), 0);
	assert_true(wn_wire_ddp_seg_iter_next(&it, &s));
	assert_int_equal(s.len, 0);
	assert_true(s.last);
	assert_false(wn_wire_ddp_seg_iter_next(&it, &s));
	assert_int_equal(wn_wire_ddp_seg_count(0, 1500, false), 1);

	assert_int_equal(wn_wire_ddp_seg_iter_init(&it, 10, 18, false), -EINVAL);
	assert_int_equal(wn_wire_ddp_seg_iter_init(&it, 10, 14, true), -EINVAL);
	assert_int_equal(wn_wire_ddp_seg_iter_init(NULL, 10, 1500, true), -EINVAL);
}

/* Segments of any message cover it exactly once, in order, L only at the end. */
static void
test_segmentation_sweep(void **state)
{
	static const uint32_t lens[] = {1,    2,    127,   1435,    1436,
					1437, 4096, 65536, 1000000, UINT32_MAX};
	static const uint32_t mulpdus[] = {128, 1454, 1500, 8954, 64768};
	(void)state;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (size_t j = 0; j < sizeof(mulpdus) / sizeof(mulpdus[0]); j++) {
			for (int t = 0; t < 2; t++) {
				struct wn_ddp_seg_iter it;
				struct wn_ddp_span s;
				uint64_t covered = 0;
				uint32_t n = 0, max = mulpdus[j] - (t ? 14 : 18);

				if (lens[i] / max > 100000)
					continue;
				assert_int_equal(
					wn_wire_ddp_seg_iter_init(&it, lens[i], mulpdus[j], t), 0);
				while (wn_wire_ddp_seg_iter_next(&it, &s)) {
					assert_int_equal(s.off, covered);
					assert_true(s.len > 0 && s.len <= max);
					covered += s.len;
					assert_int_equal(s.last, covered == lens[i]);
					n++;
				}
				assert_int_equal(covered, lens[i]);
				assert_int_equal(n, wn_wire_ddp_seg_count(lens[i], mulpdus[j], t));
			}
		}
	}
}

/* RFC 5041 §5.4: MSN modulo 2^32, 0xFFFFFFFF is followed by 0. */
static void
test_msn_wrap(void **state)
{
	uint8_t b[64];
	struct wn_ddp_seg seg;
	uint32_t msn = 0xFFFFFFFEu;
	(void)state;

	for (int i = 0; i < 4; i++) {
		assert_int_equal(
			wn_wire_rdmap_send_build(b, sizeof(b), WN_RDMAP_SEND, 0, msn, 0, true), 18);
		assert_int_equal(wn_wire_ddp_parse(b, 18, 0, &seg, NULL), 0);
		assert_int_equal(seg.h.msn, msn);
		msn = wn_ddp_msn_next(msn);
	}
	assert_int_equal(msn, 2);
	assert_int_equal(wn_ddp_msn_next(0xFFFFFFFFu), 0);
	/* window of available buffers across the wrap (RFC 5041 §7.1) */
	assert_true(wn_ddp_msn_in_window(0xFFFFFFFFu, 0xFFFFFFFEu, 4));
	assert_true(wn_ddp_msn_in_window(0, 0xFFFFFFFEu, 4));
	assert_true(wn_ddp_msn_in_window(1, 0xFFFFFFFEu, 4));
	assert_false(wn_ddp_msn_in_window(2, 0xFFFFFFFEu, 4));
	assert_false(wn_ddp_msn_in_window(0xFFFFFFFDu, 0xFFFFFFFEu, 4));
	assert_false(wn_ddp_msn_in_window(5, 5, 0));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_build_errors),
		cmocka_unit_test(test_parse_tagged),
		cmocka_unit_test(test_parse_untagged),
		cmocka_unit_test(test_rejections),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_wraps),
		cmocka_unit_test(test_segmentation_rfc5041),
		cmocka_unit_test(test_segmentation_sweep),
		cmocka_unit_test(test_msn_wrap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
