/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMAP messages (RFC 5040, RFC 7306): the opcode table, encode/decode of
 * every opcode, the RFC 5044 Figure 5/6 vectors, the Terminate codec (parts per
 * RFC 5040 Fig. 10, strict parse, siw quirks), the names of every
 * Terminate cause, and Wireshark's iwarp_ddp_rdmap dissector reading the
 * same fields from a capture of our messages (tshark is required). A
 * failure here means warpnic sends RDMAP headers a peer cannot read,
 * misreads a peer's, or sends or reports the wrong Terminate.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cmocka.h>

#include "wn_wire_crc.h"
#include "wn_wire_ddp.h"
#include "wn_wire_mpa.h"

/* RFC 5040 §4.1 Figure 4/5 and RFC 7306 §4.1, one row per assigned opcode. */
static const struct {
	uint8_t op;
	bool tagged;
	uint8_t qn;
	uint8_t rdmap_hdr;
	uint16_t min, max;
	bool payload, single, rfc7306;
} rows[] = {
	{0x0, true, 0, 0, 14, 65535, true, false, false},
	{0x1, false, 1, 28, 46, 46, false, true, false},
	{0x2, true, 0, 0, 14, 65535, true, false, false},
	{0x3, false, 0, 0, 18, 65535, true, false, false},
	{0x4, false, 0, 0, 18, 65535, true, false, false},
	{0x5, false, 0, 0, 18, 65535, true, false, false},
	{0x6, false, 0, 0, 18, 65535, true, false, false},
	{0x7, false, 2, 4, 22, 70, false, true, false},
	{0x8, false, 0, 8, 26, 26, false, true, true},
	{0x9, false, 0, 8, 26, 26, false, true, true},
	{0xA, false, 1, 52, 70, 70, false, true, true},
	{0xB, false, 3, 12, 30, 30, false, true, true},
};

static int
rx_stub(void *ctx, const struct wn_ddp_seg *seg)
{
	(void)seg;
	return *(int *)ctx;
}

static void
test_opcode_table(void **state)
{
	(void)state;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct wn_rdmap_op *op = &wn_wire_rdmap_ops[rows[i].op];

		assert_true(op->valid);
		assert_int_equal(op->tagged, rows[i].tagged);
		assert_int_equal(op->ddp_hdr_len, rows[i].tagged ? 14 : 18);
		if (!rows[i].tagged)
			assert_int_equal(op->qn, rows[i].qn);
		assert_int_equal(op->rdmap_hdr_len, rows[i].rdmap_hdr);
		assert_int_equal(op->min_ulpdu, rows[i].min);
		assert_int_equal(op->max_ulpdu, rows[i].max);
		assert_int_equal(op->payload, rows[i].payload);
		assert_int_equal(op->single, rows[i].single);
		assert_int_equal(op->rfc7306, rows[i].rfc7306);
		assert_int_equal(op->ctrl_rdmap, 0x40 | rows[i].op);
		assert_null(op->rx);
	}
	assert_true(wn_wire_rdmap_ops[0x4].invalidate && wn_wire_rdmap_ops[0x6].invalidate);
	assert_false(wn_wire_rdmap_ops[0x3].invalidate || wn_wire_rdmap_ops[0x5].invalidate);
	assert_true(wn_wire_rdmap_ops[0x5].solicited && wn_wire_rdmap_ops[0x6].solicited &&
		    wn_wire_rdmap_ops[0x9].solicited);
	assert_false(wn_wire_rdmap_ops[0x3].solicited || wn_wire_rdmap_ops[0x8].solicited);
	for (uint8_t op = 0xC; op <= 0xF; op++)
		assert_false(wn_wire_rdmap_ops[op].valid);
	assert_string_equal(wn_wire_rdmap_opcode_str(0x1), "RDMA Read Request");
	assert_string_equal(wn_wire_rdmap_opcode_str(0x7), "Terminate");
	assert_string_equal(wn_wire_rdmap_opcode_str(0xA), "Atomic Request");
	assert_string_equal(wn_wire_rdmap_opcode_str(0xD), "unassigned");
	assert_string_equal(wn_wire_rdmap_opcode_str(0xF), "reserved (experimental)");

	/* the engine's copy keeps the properties and takes handlers */
	struct wn_rdmap_op tbl[WN_RDMAP_OPCODE_COUNT];
	int ret = -7;
	wn_wire_rdmap_op_table_init(tbl);
	assert_memory_equal(tbl, wn_wire_rdmap_ops, sizeof(tbl));
	tbl[WN_RDMAP_SEND].rx = rx_stub;
	assert_null(wn_wire_rdmap_ops[WN_RDMAP_SEND].rx);
	/* dispatch by the parsed opcode */
	uint8_t b[32];
	struct wn_ddp_seg seg;
	assert_int_equal(wn_wire_rdmap_send_build(b, sizeof(b), WN_RDMAP_SEND, 0, 1, 0, true), 18);
	assert_int_equal(wn_wire_ddp_parse(b, 18, 0, &seg, NULL), 0);
	assert_int_equal(wn_rdmap_rx_dispatch(tbl, &ret, &seg), -7);
	assert_int_equal(wn_wire_rdmap_send_build(b, sizeof(b), WN_RDMAP_SEND_SE, 0, 1, 0, true),
			 18);
	assert_int_equal(wn_wire_ddp_parse(b, 18, 0, &seg, NULL), 0);
	assert_int_equal(wn_rdmap_rx_dispatch(tbl, &ret, &seg), -ENOTSUP);
}

static void
assert_rr_equal(const struct wn_rdmap_read_req *a, const struct wn_rdmap_read_req *b)
{
	assert_int_equal(a->sink_stag, b->sink_stag);
	assert_int_equal(a->sink_to, b->sink_to);
	assert_int_equal(a->size, b->size);
	assert_int_equal(a->src_stag, b->src_stag);
	assert_int_equal(a->src_to, b->src_to);
}

static void
assert_ar_equal(const struct wn_rdmap_atomic_req *a, const struct wn_rdmap_atomic_req *b)
{
	assert_int_equal(a->aopcode, b->aopcode);
	assert_int_equal(a->req_id, b->req_id);
	assert_int_equal(a->stag, b->stag);
	assert_int_equal(a->to, b->to);
	assert_int_equal(a->add_swap, b->add_swap);
	assert_int_equal(a->add_swap_mask, b->add_swap_mask);
	assert_int_equal(a->compare, b->compare);
	assert_int_equal(a->compare_mask, b->compare_mask);
}

/* Build, parse and compare one message of every opcode. */
static void
test_every_opcode(void **state)
{
	uint8_t b[128];
	struct wn_ddp_seg seg;
	struct wn_ddp_error err;
	int n;
	(void)state;

	/* 0x0 / 0x2 tagged with payload */
	for (uint8_t op = 0; op <= 2; op += 2) {
		if (op == 0)
			n = wn_wire_rdmap_write_build(b, sizeof(b), 0x11223344u,
						      0xAABBCCDDEEFF0011ull, true);
		else
			n = wn_wire_rdmap_read_resp_build(b, sizeof(b), 0x11223344u,
						     0xAABBCCDDEEFF0011ull, true);
		assert_int_equal(n, 14);
		memcpy(b + 14, "payload", 7);
		assert_int_equal(wn_wire_ddp_parse(b, 21, 0, &seg, &err), 0);
		assert_int_equal(seg.h.opcode, op);
		assert_int_equal(seg.h.stag, 0x11223344u);
		assert_int_equal(seg.h.to, 0xAABBCCDDEEFF0011ull);
		assert_int_equal(seg.payload_len, 7);
		assert_memory_equal(seg.payload, "payload", 7);
	}
	/* 0x3-0x6 Sends */
	for (uint8_t op = 3; op <= 6; op++) {
		assert_int_equal(wn_wire_rdmap_send_build(b, sizeof(b), op, 0xFEEDu, 0x10203040u,
							  100, op != 5),
				 18);
		memcpy(b + 18, "abc", 3);
		assert_int_equal(wn_wire_ddp_parse(b, 21, 0, &seg, &err), 0);
		assert_int_equal(seg.h.opcode, op);
		assert_int_equal(seg.h.inv_stag, wn_wire_rdmap_ops[op].invalidate ? 0xFEEDu : 0);
		assert_int_equal(seg.h.msn, 0x10203040u);
		assert_int_equal(seg.h.mo, 100);
		assert_int_equal(seg.h.last, op != 5);
		assert_int_equal(seg.payload_len, 3);
	}
	/* 0x1 Read Request (RFC 5040 §4.4) */
	struct wn_rdmap_read_req rr = {.sink_stag = 0x01020304u,
				       .sink_to = 0x1112131415161718ull,
				       .size = 0x21222324u,
				       .src_stag = 0x31323334u,
				       .src_to = 0x4142434445464748ull};
	assert_int_equal(wn_wire_rdmap_read_req_build(b, sizeof(b), 77, &rr), 46);
	static const uint8_t rr_hdr[28] = {
		0x01, 0x02, 0x03, 0x04, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x21, 0x22,
		0x23, 0x24, 0x31, 0x32, 0x33, 0x34, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48};
	assert_memory_equal(b + 18, rr_hdr, 28);
	assert_int_equal(wn_wire_ddp_parse(b, 46, 0, &seg, &err), 0);
	assert_int_equal(seg.h.qn, 1);
	assert_int_equal(seg.h.msn, 77);
	assert_rr_equal(&seg.u.rreq, &rr);
	assert_int_equal(seg.hdr_len, 46);
	assert_int_equal(seg.payload_len, 0);
	/* 0x7 Terminate */
	struct wn_rdmap_term t = {.cause = {0, 2, 0x06}};
	assert_int_equal(wn_wire_rdmap_term_build(b, sizeof(b), 1, &t), 22);
	assert_int_equal(wn_wire_ddp_parse(b, 22, 0, &seg, &err), 0);
	assert_int_equal(seg.h.qn, 2);
	assert_int_equal(seg.u.term.status, WN_TERM_OK);
	assert_int_equal(seg.u.term.cause.code, 0x06);
	/* 0x8/0x9 Immediate Data (RFC 7306 §6) */
	for (uint8_t op = 8; op <= 9; op++) {
		assert_int_equal(
			wn_wire_rdmap_immediate_build(b, sizeof(b), op, 5, 0x0102030405060708ull),
			26);
		static const uint8_t imm[8] = {1, 2, 3, 4, 5, 6, 7, 8};
		assert_memory_equal(b + 18, imm, 8);
		assert_int_equal(wn_wire_ddp_parse(b, 26, WN_DDP_F_RFC7306, &seg, &err), 0);
		assert_int_equal(seg.h.opcode, op);
		assert_int_equal(seg.u.imm, 0x0102030405060708ull);
		assert_int_equal(wn_wire_ddp_parse(b, 26, 0, &seg, &err), -EBADMSG);
	}
	assert_int_equal(wn_wire_rdmap_immediate_build(b, sizeof(b), 3, 5, 0), -EINVAL);
	/* 0xA Atomic Request (RFC 7306 §5.2.1) */
	struct wn_rdmap_atomic_req ar = {.aopcode = WN_RDMAP_AOP_CMP_SWAP,
					 .req_id = 0xA1A2A3A4u,
					 .stag = 0xB1B2B3B4u,
					 .to = 0x1000,
					 .add_swap = 0x0102030405060708ull,
					 .add_swap_mask = 0x1112131415161718ull,
					 .compare = 0x2122232425262728ull,
					 .compare_mask = 0x3132333435363738ull};
	assert_int_equal(wn_wire_rdmap_atomic_req_build(b, sizeof(b), 3, &ar), 70);
	assert_int_equal(wn_wire_get_be32(b + 18), 2);
	assert_int_equal(wn_wire_get_be64(b + 30), 0x1000);
	assert_int_equal(wn_wire_get_be64(b + 62), 0x3132333435363738ull);
	assert_int_equal(wn_wire_ddp_parse(b, 70, WN_DDP_F_RFC7306, &seg, &err), 0);
	assert_int_equal(seg.h.qn, 1);
	assert_ar_equal(&seg.u.areq, &ar);
	/* FetchAdd: Compare Data 0, Compare Mask all ones on send */
	ar.aopcode = WN_RDMAP_AOP_FETCH_ADD;
	assert_int_equal(wn_wire_rdmap_atomic_req_build(b, sizeof(b), 3, &ar), 70);
	assert_int_equal(wn_wire_ddp_parse(b, 70, WN_DDP_F_RFC7306, &seg, &err), 0);
	assert_int_equal(seg.u.areq.aopcode, 0);
	assert_int_equal(seg.u.areq.compare, 0);
	assert_int_equal(seg.u.areq.compare_mask, UINT64_MAX);
	assert_int_equal(seg.u.areq.add_swap, 0x0102030405060708ull);
	ar.aopcode = 1;
	assert_int_equal(wn_wire_rdmap_atomic_req_build(b, sizeof(b), 3, &ar), -EINVAL);
	ar.aopcode = 0;
	ar.to = 0x1004;
	assert_int_equal(wn_wire_rdmap_atomic_req_build(b, sizeof(b), 3, &ar), -EINVAL);
	/* 0xB Atomic Response (RFC 7306 §5.2.2) */
	struct wn_rdmap_atomic_resp as = {.req_id = 0xA1A2A3A4u, .orig = 0xFFEEDDCCBBAA9988ull};
	assert_int_equal(wn_wire_rdmap_atomic_resp_build(b, sizeof(b), 9, &as), 30);
	assert_int_equal(wn_wire_ddp_parse(b, 30, WN_DDP_F_RFC7306, &seg, &err), 0);
	assert_int_equal(seg.h.qn, 3);
	assert_int_equal(seg.h.msn, 9);
	assert_int_equal(seg.u.aresp.req_id, 0xA1A2A3A4u);
	assert_int_equal(seg.u.aresp.orig, 0xFFEEDDCCBBAA9988ull);
	/* too small buffers */
	assert_int_equal(wn_wire_rdmap_read_req_build(b, 45, 1, &rr), -ENOSPC);
	assert_int_equal(wn_wire_rdmap_atomic_resp_build(b, 29, 1, &as), -ENOSPC);
	assert_int_equal(wn_wire_rdmap_immediate_build(b, 25, 8, 1, 0), -ENOSPC);
	assert_int_equal(wn_wire_rdmap_read_req_build(b, sizeof(b), 1, NULL), -EINVAL);
}

/* Frame @p u into an FPDU without Markers, with CRC; @return its length. */
static size_t
frame(const uint8_t *u, size_t len, uint8_t *out, size_t cap)
{
	struct wn_mpa_stream st = {.seq_start = 0, .markers = false, .crc = true};
	struct iovec iov = {.iov_base = (void *)(uintptr_t)u, .iov_len = len};
	int n = wn_wire_mpa_fpdu_build(out, cap, &iov, 1, 0, &st);

	assert_true(n > 0);
	return (size_t)n;
}

/* More vectors in the RFC 5044 Figure 5 form. */
static void
test_wire_vectors(void **state)
{
	uint8_t u[128], f[160];
	struct wn_ddp_seg seg;
	int n;
	(void)state;

	/* zero-length RDMA Write RTR, STag 1, TO 0 */
	static const uint8_t write_rtr[20] = {0x00, 0x0e, 0xc1, 0x40, 0x00, 0x00, 0x00,
					      0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
					      0x00, 0x00, 0xeb, 0xd3, 0x4c, 0x5f};
	n = wn_wire_rdmap_write_build(u, sizeof(u), 1, 0, true);
	assert_int_equal(n, 14);
	assert_int_equal(frame(u, 14, f, sizeof(f)), 20);
	assert_memory_equal(f, write_rtr, 20);
	assert_int_equal(wn_wire_ddp_parse(write_rtr + 2, 14, 0, &seg, NULL), 0);
	assert_int_equal(seg.h.opcode, WN_RDMAP_WRITE);
	assert_int_equal(seg.h.stag, 1);
	assert_int_equal(seg.payload_len, 0);

	/* zero-length RDMA Read Request RTR */
	uint8_t read_rtr[52] = {0x00, 0x2e, 0x41, 0x41, 0, 0, 0, 0, 0, 0, 0, 1,
				0,    0,    0,	  1,	0, 0, 0, 0, 0, 0, 0, 1};
	read_rtr[24 + 8 + 7] = 0x01;
	static const uint8_t rr_crc[4] = {0x27, 0xdb, 0xd7, 0xe7};
	memcpy(read_rtr + 48, rr_crc, 4);
	struct wn_rdmap_read_req rr = {.sink_stag = 1, .size = 0, .src_stag = 1};
	n = wn_wire_rdmap_read_req_build(u, sizeof(u), 1, &rr);
	assert_int_equal(n, 46);
	assert_int_equal(frame(u, 46, f, sizeof(f)), 52);
	assert_memory_equal(f, read_rtr, 52);
	assert_int_equal(wn_wire_ddp_parse(read_rtr + 2, 46, 0, &seg, NULL), 0);
	assert_int_equal(seg.h.opcode, WN_RDMAP_READ_REQ);
	assert_int_equal(seg.h.msn, 1);
	assert_int_equal(seg.u.rreq.sink_stag, 1);
	assert_int_equal(seg.u.rreq.src_stag, 1);
	assert_int_equal(seg.u.rreq.size, 0);

	/* Terminate, RDMAP local catastrophic 0xFF, no headers, MSN 1 */
	static const uint8_t term[28] = {0x00, 0x16, 0x41, 0x47, 0,    0,    0,	   0,	0, 0,
					 0,    0x02, 0,	   0,	 0,    1,    0,	   0,	0, 0,
					 0x00, 0xff, 0x00, 0x00, 0x51, 0x89, 0x6a, 0x8c};
	struct wn_rdmap_term t;
	assert_int_equal(
		wn_wire_rdmap_term_from_cause(&t, (struct wn_term_cause){0, 0, 0xFF}, u, 46), 0);
	assert_false(t.m || t.d || t.r); /* Fig. 10: local catastrophic carries nothing */
	n = wn_wire_rdmap_term_build(u, sizeof(u), 1, &t);
	assert_int_equal(n, 22);
	assert_int_equal(frame(u, 22, f, sizeof(f)), 28);
	assert_memory_equal(f, term, 28);
	assert_int_equal(wn_wire_ddp_parse(term + 2, 22, 0, &seg, NULL), 0);
	assert_int_equal(seg.h.opcode, WN_RDMAP_TERMINATE);
	assert_int_equal(seg.u.term.status, WN_TERM_OK);
	assert_int_equal(seg.u.term.cause.layer, 0);
	assert_int_equal(seg.u.term.cause.etype, 0);
	assert_int_equal(seg.u.term.cause.code, 0xFF);
}

/* Terminate parts chosen per RFC 5040 Fig. 10, then parsed back. */
static void
test_term_fig10(void **state)
{
	uint8_t bad_rr[46], bad_w[14 + 4], bad_s[18 + 4], out[128];
	struct wn_rdmap_term t, p;
	struct wn_ddp_seg seg;
	int n;
	(void)state;

	struct wn_rdmap_read_req rr = {
		.sink_stag = 5, .sink_to = 4096, .size = 64, .src_stag = 6, .src_to = 8192};
	assert_int_equal(wn_wire_rdmap_read_req_build(bad_rr, sizeof(bad_rr), 3, &rr), 46);
	assert_int_equal(wn_wire_rdmap_write_build(bad_w, sizeof(bad_w), 0xBAD, 64, true), 14);
	assert_int_equal(
		wn_wire_rdmap_send_build(bad_s, sizeof(bad_s), WN_RDMAP_SEND_INV, 0x99, 4, 0, true),
		18);

	/* RDMAP remote protection on a Read Request: D, M and the RDMA header */
	assert_int_equal(
		wn_wire_rdmap_term_from_cause(&t, (struct wn_term_cause){0, 1, 0x00}, bad_rr, 46),
		0);
	assert_true(t.m && t.d && t.r);
	assert_int_equal(t.ddp_hdr_len, 18);
	assert_int_equal(t.seg_len, 46);
	n = wn_wire_rdmap_term_build(out, sizeof(out), 1, &t);
	assert_int_equal(n, 18 + 4 + 2 + 18 + 28);
	assert_int_equal(wn_wire_ddp_parse(out, (size_t)n, 0, &seg, NULL), 0);
	p = seg.u.term;
	assert_int_equal(p.status, WN_TERM_OK);
	assert_true(p.m && p.d && p.r);
	assert_int_equal(p.seg_len, 46);
	assert_int_equal(p.ddp_hdr_len, 18);
	assert_memory_equal(p.ddp_hdr, bad_rr, 18);
	assert_int_equal(p.ddp.opcode, WN_RDMAP_READ_REQ);
	assert_int_equal(p.ddp.msn, 3);
	assert_int_equal(p.ddp.qn, 1);
	assert_rr_equal(&p.rdma, &rr);
	assert_int_equal(wn_wire_get_be32(out + 18), 0x01008000u | 0x4000u | 0x2000u);

	/* RDMAP remote protection on a Send with Invalidate: D, no RDMA header */
	assert_int_equal(
		wn_wire_rdmap_term_from_cause(&t, (struct wn_term_cause){0, 1, 0x09}, bad_s, 22),
		0);
	assert_true(t.d && t.m && !t.r);
	n = wn_wire_rdmap_term_build(out, sizeof(out), 1, &t);
	assert_int_equal(n, 18 + 4 + 2 + 18);
	assert_int_equal(wn_wire_rdmap_term_parse(out + 18, (size_t)n - 18, &p), 0);
	assert_int_equal(p.ddp.inv_stag, 0x99);

	/* DDP tagged error on a Write: D + M, 14-octet header, 38-octet Terminate */
	assert_int_equal(wn_wire_rdmap_term_from_cause(&t, (struct wn_term_cause){1, 1, 0x00},
						       bad_w, sizeof(bad_w)),
			 0);
	assert_true(t.d && t.m && !t.r);
	assert_int_equal(t.ddp_hdr_len, 14);
	n = wn_wire_rdmap_term_build(out, sizeof(out), 1, &t);
	assert_int_equal(n, 38);
	assert_int_equal(wn_wire_rdmap_term_parse(out + 18, 20, &p), 0);
	assert_true(p.ddp.tagged);
	assert_int_equal(p.ddp.stag, 0xBAD);
	assert_int_equal(p.ddp.to, 64);
	assert_int_equal(p.seg_len, sizeof(bad_w));

	/* RDMAP remote operation: DDP header if possible; none when truncated */
	assert_int_equal(
		wn_wire_rdmap_term_from_cause(&t, (struct wn_term_cause){0, 2, 0x06}, bad_s, 22),
		0);
	assert_true(t.d && !t.r);
	assert_int_equal(
		wn_wire_rdmap_term_from_cause(&t, (struct wn_term_cause){0, 2, 0x06}, bad_s, 10),
		0);
	assert_false(t.d || t.m || t.r);
	assert_int_equal(wn_wire_rdmap_term_build(out, sizeof(out), 1, &t), 22);

	/* LLP (MPA CRC) error: nothing */
	assert_int_equal(
		wn_wire_rdmap_term_from_cause(&t, (struct wn_term_cause){2, 0, 0x02}, bad_s, 22),
		0);
	assert_false(t.d || t.m || t.r);
	n = wn_wire_rdmap_term_build(out, sizeof(out), 1, &t);
	assert_int_equal(n, 22);
	assert_int_equal(out[18], 0x20);
	assert_int_equal(out[19], 0x02);

	/* builder rejects inconsistent requests */
	t = (struct wn_rdmap_term){.cause = {0, 2, 6}, .m = true};
	assert_int_equal(wn_wire_rdmap_term_build(out, sizeof(out), 1, &t), -EINVAL);
	t = (struct wn_rdmap_term){
		.cause = {0, 2, 6}, .d = true, .ddp_hdr = bad_s, .ddp_hdr_len = 14};
	assert_int_equal(wn_wire_rdmap_term_build(out, sizeof(out), 1, &t), -EINVAL);
	t = (struct wn_rdmap_term){.cause = {0x10, 2, 6}};
	assert_int_equal(wn_wire_rdmap_term_build(out, sizeof(out), 1, &t), -EINVAL);
	t = (struct wn_rdmap_term){.cause = {0, 2, 6}};
	assert_int_equal(wn_wire_rdmap_term_build(out, 21, 1, &t), -ENOSPC);
	assert_int_equal(wn_wire_rdmap_term_from_cause(NULL, t.cause, NULL, 0), -EINVAL);
}

static void
test_term_strict(void **state)
{
	struct wn_rdmap_term t;
	uint8_t b[80];
	(void)state;

	/* siw after a CRC error: control bytes 02 02 00 00 (seen on the wire) */
	static const uint8_t siw[4] = {0x02, 0x02, 0x00, 0x00};
	assert_int_equal(wn_wire_rdmap_term_parse(siw, 4, &t), -EBADMSG);
	assert_int_equal(t.status, WN_TERM_UNKNOWN_CAUSE);
	assert_int_equal(t.cause.layer, 0);
	assert_int_equal(t.cause.etype, 2);
	assert_int_equal(t.cause.code, 2);
	assert_true(t.quirks & WN_TERM_Q_SWAPPED);
	assert_int_equal(t.swapped.layer, WN_TERM_LAYER_LLP);
	assert_int_equal(t.swapped.etype, 0);
	assert_int_equal(t.swapped.code, 2);
	assert_string_equal(
		wn_wire_term_cause_str(t.swapped.layer, t.swapped.etype, t.swapped.code),
		"LLP (MPA): received MPA CRC does not match");
	/* unknown either way: no quirk */
	static const uint8_t junk[4] = {0x55, 0x33, 0x00, 0x00};
	assert_int_equal(wn_wire_rdmap_term_parse(junk, 4, &t), -EBADMSG);
	assert_int_equal(t.status, WN_TERM_UNKNOWN_CAUSE);
	assert_false(t.quirks & WN_TERM_Q_SWAPPED);

	/* too short */
	assert_int_equal(wn_wire_rdmap_term_parse(siw, 3, &t), -EBADMSG);
	assert_int_equal(t.status, WN_TERM_SHORT);
	assert_int_equal(wn_wire_rdmap_term_parse(NULL, 0, &t), -EBADMSG);
	assert_int_equal(wn_wire_rdmap_term_parse(siw, 4, NULL), -EINVAL);

	/* M without D */
	wn_wire_put_be32(b, 0x12018000u); /* DDP untagged invalid QN, M */
	assert_int_equal(wn_wire_rdmap_term_parse(b, 4, &t), -EBADMSG);
	assert_int_equal(t.status, WN_TERM_M_WITHOUT_D);

	/* D with the header cut short, for both T values */
	memset(b, 0, sizeof(b));
	wn_wire_put_be32(b, 0x1201C000u);
	b[6] = 0x41; /* untagged: 18 octets needed after the length */
	for (size_t len = 4; len < 4 + 2 + 18; len++) {
		assert_int_equal(wn_wire_rdmap_term_parse(b, len, &t), -EBADMSG);
		assert_int_equal(t.status, WN_TERM_D_SHORT);
	}
	assert_int_equal(wn_wire_rdmap_term_parse(b, 24, &t), 0);
	assert_int_equal(t.ddp_hdr_len, 18);
	b[6] = 0xC1; /* tagged: 14 */
	assert_int_equal(wn_wire_rdmap_term_parse(b, 19, &t), -EBADMSG);
	assert_int_equal(t.status, WN_TERM_D_SHORT);
	assert_int_equal(wn_wire_rdmap_term_parse(b, 20, &t), 0);
	assert_int_equal(t.ddp_hdr_len, 14);
	/* trailing octets */
	assert_int_equal(wn_wire_rdmap_term_parse(b, 21, &t), -EBADMSG);
	assert_int_equal(t.status, WN_TERM_TRAILING);

	/* siw: R=1 on a Send error with no RDMA header appended */
	wn_wire_put_be32(b, 0x0100E000u); /* RDMAP remote protection, invalid STag, M D R */
	b[6] = 0x41;
	b[7] = 0x44;
	assert_int_equal(wn_wire_rdmap_term_parse(b, 24, &t), -EBADMSG);
	assert_int_equal(t.status, WN_TERM_R_SHORT);
	assert_true(t.quirks & WN_TERM_Q_R_NO_HDR);
	assert_true(t.d && t.r && t.m);
	assert_int_equal(t.ddp.opcode, WN_RDMAP_SEND_INV); /* what was seen is still reported */
	assert_int_equal(wn_wire_rdmap_term_parse(b, 24 + 28, &t), 0);

	/* reserved control bits are ignored, reported as a quirk */
	wn_wire_put_be32(b, 0x00FF0001u);
	assert_int_equal(wn_wire_rdmap_term_parse(b, 4, &t), 0);
	assert_true(t.quirks & WN_TERM_Q_RSVD);

	/* wn_wire_ddp_parse bounds the Terminate and keeps its verdict */
	struct wn_ddp_seg seg;
	struct wn_ddp_error err;
	struct wn_rdmap_term tt = {.cause = {0, 0, 0}};
	uint8_t u[128];
	int n = wn_wire_rdmap_term_build(u, sizeof(u), 1, &tt);
	assert_int_equal(n, 22);
	assert_int_equal(wn_wire_ddp_parse(u, 21, 0, &seg, &err), -EBADMSG);
	assert_int_equal(err.reason, WN_DDP_R_HDR_SHORT);
	memset(u + 22, 0, 60);
	assert_int_equal(wn_wire_ddp_parse(u, 71, 0, &seg, &err), -EBADMSG);
	assert_int_equal(err.reason, WN_DDP_R_TOO_LONG);
	assert_int_equal(wn_wire_ddp_parse(u, 23, 0, &seg, &err), 0);
	assert_int_equal(seg.u.term.status, WN_TERM_TRAILING);
}

static void
test_cause_names(void **state)
{
	static const uint8_t rp[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x09, 0xFF};
	static const uint8_t ro[] = {0x05, 0x06, 0x07, 0x08, 0x09, 0xFF};
	const char *seen[64];
	unsigned int ns = 0, known = 0;
	(void)state;

	/* every defined triple has its own name */
	for (unsigned int l = 0; l < 16; l++)
		for (unsigned int e = 0; e < 16; e++)
			for (unsigned int c = 0; c < 256; c++) {
				if (!wn_wire_term_cause_known((uint8_t)l, (uint8_t)e, (uint8_t)c))
					continue;
				known++;
				if (l == 0 && e == 0)
					continue; /* local catastrophic: any code, one name */
				const char *s =
					wn_wire_term_cause_str((uint8_t)l, (uint8_t)e, (uint8_t)c);
				assert_string_not_equal(s, "unknown");
				for (unsigned int i = 0; i < ns; i++)
					assert_string_not_equal(s, seen[i]);
				assert_true(ns < 64);
				seen[ns++] = s;
			}
	/* RDMAP: 256 local catastrophic + 7 + 6; DDP: 1 + 5 + 6; LLP: 7 */
	assert_int_equal(known, 256 + 7 + 6 + 1 + 5 + 6 + 7);
	for (size_t i = 0; i < sizeof(rp); i++)
		assert_true(wn_wire_term_cause_known(0, 1, rp[i]));
	for (size_t i = 0; i < sizeof(ro); i++)
		assert_true(wn_wire_term_cause_known(0, 2, ro[i]));
	assert_false(wn_wire_term_cause_known(0, 1, 0x05));
	assert_false(wn_wire_term_cause_known(0, 2, 0x00));
	assert_false(wn_wire_term_cause_known(1, 2, 0x00));
	assert_false(wn_wire_term_cause_known(1, 1, 0x05));
	assert_false(wn_wire_term_cause_known(2, 0, 0x08));
	assert_false(wn_wire_term_cause_known(2, 1, 0x01));
	assert_false(wn_wire_term_cause_known(3, 0, 0x00));
	assert_string_equal(wn_wire_term_cause_str(1, 2, 1), "DDP untagged buffer: invalid QN");
	assert_string_equal(wn_wire_term_cause_str(0, 2, 5),
			    "RDMAP remote operation: invalid RDMAP version");
	assert_string_equal(wn_wire_term_cause_str(0, 0, 0x42), "RDMAP local catastrophic error");
	assert_string_equal(wn_wire_term_cause_str(9, 9, 9), "unknown");
	for (int s = 0; s < WN_TERM_STATUS_COUNT; s++)
		assert_string_not_equal(wn_wire_term_status_str((enum wn_term_status)s), "unknown");
	assert_string_equal(wn_wire_term_status_str(WN_TERM_STATUS_COUNT), "unknown");
	for (int r = 0; r < WN_DDP_R_COUNT; r++)
		assert_string_not_equal(wn_wire_ddp_reason_str((enum wn_ddp_reason)r), "unknown");
}

/* ---- Wireshark's iwarp_ddp_rdmap dissector reads what we build -------------------------- */

struct pcap {
	FILE *fp;
	uint32_t seq[2]; /* next sequence number per direction (0 client, 1 server) */
	uint32_t t;
	struct wn_mpa_stream st[2];
};

static void
put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* One Ethernet/IPv4/TCP packet from side @p dir with @p flags and payload. */
static void
packet(struct pcap *pc, int dir, uint8_t flags, const uint8_t *pl, size_t n)
{
	static const uint8_t mac[2][6] = {{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}};
	static const uint8_t addr[2][4] = {{198, 18, 0, 1}, {198, 18, 0, 2}};
	uint8_t f[2048], rec[16];
	size_t len = 14 + 20 + 20 + n;

	assert_true(len <= sizeof(f));
	memset(f, 0, 54);
	memcpy(f, mac[!dir], 6);
	memcpy(f + 6, mac[dir], 6);
	f[12] = 0x08;
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	wn_wire_put_be16(ip + 2, (uint16_t)(20 + 20 + n));
	ip[8] = 64;
	ip[9] = 6;
	memcpy(ip + 12, addr[dir], 4);
	memcpy(ip + 16, addr[!dir], 4);
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += wn_wire_get_be16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	wn_wire_put_be16(ip + 10, (uint16_t)~sum);
	uint8_t *tcp = ip + 20;
	wn_wire_put_be16(tcp, dir ? 4791 : 40000);
	wn_wire_put_be16(tcp + 2, dir ? 40000 : 4791);
	wn_wire_put_be32(tcp + 4, pc->seq[dir]);
	wn_wire_put_be32(tcp + 8, (flags & 0x10) ? pc->seq[!dir] : 0);
	tcp[12] = 5 << 4;
	tcp[13] = flags;
	wn_wire_put_be16(tcp + 14, 65535);
	if (n != 0)
		memcpy(tcp + 20, pl, n);
	pc->seq[dir] += (uint32_t)n + ((flags & 0x02) ? 1 : 0);
	put_le32(rec, pc->t++);
	put_le32(rec + 4, 0);
	put_le32(rec + 8, (uint32_t)len);
	put_le32(rec + 12, (uint32_t)len);
	assert_int_equal(fwrite(rec, 1, 16, pc->fp), 16);
	assert_int_equal(fwrite(f, 1, len, pc->fp), len);
}

/* Frame ULPDU @p u (+ @p plen payload octets of 0x5A) and send it from @p dir. */
static void
fpdu(struct pcap *pc, int dir, const uint8_t *u, size_t ulen, size_t plen)
{
	uint8_t pay[64], out[256];
	struct iovec iov[2] = {{.iov_base = (void *)(uintptr_t)u, .iov_len = ulen},
			       {.iov_base = pay, .iov_len = plen}};

	assert_true(plen <= sizeof(pay));
	memset(pay, 0x5A, plen);
	int n = wn_wire_mpa_fpdu_build(out, sizeof(out), iov, 2, pc->seq[dir], &pc->st[dir]);
	assert_true(n > 0);
	packet(pc, dir, 0x18, out, (size_t)n);
}

static void
write_capture(const char *path)
{
	struct pcap pc = {.seq = {1000, 5000}};
	uint8_t b[256], bad[32];
	int n;

	pc.fp = fopen(path, "wb");
	assert_non_null(pc.fp);
	uint8_t gh[24] = {0};
	put_le32(gh, 0xa1b2c3d4u);
	gh[4] = 2;
	gh[6] = 4;
	put_le32(gh + 16, 65535);
	put_le32(gh + 20, 1);
	assert_int_equal(fwrite(gh, 1, 24, pc.fp), 24);
	packet(&pc, 0, 0x02, NULL, 0);
	packet(&pc, 1, 0x12, NULL, 0);
	packet(&pc, 0, 0x10, NULL, 0);
	struct wn_mpa_frame fr = {.type = WN_MPA_FRAME_REQUEST, .crc = true, .rev = 1};
	n = wn_wire_mpa_frame_encode(&fr, b, sizeof(b));
	packet(&pc, 0, 0x18, b, (size_t)n);
	fr.type = WN_MPA_FRAME_REPLY;
	n = wn_wire_mpa_frame_encode(&fr, b, sizeof(b));
	packet(&pc, 1, 0x18, b, (size_t)n);
	for (int d = 0; d < 2; d++)
		pc.st[d] = (struct wn_mpa_stream){.seq_start = pc.seq[d], .crc = true};

	/* frame 6: RDMA Write, 8 octets */
	n = wn_wire_rdmap_write_build(b, sizeof(b), 0x1111, 0x2000, true);
	fpdu(&pc, 0, b, (size_t)n, 8);
	/* frame 7: Read Request */
	struct wn_rdmap_read_req rr = {.sink_stag = 0x21,
				       .sink_to = 0x3000,
				       .size = 16,
				       .src_stag = 0x22,
				       .src_to = 0x4000};
	n = wn_wire_rdmap_read_req_build(b, sizeof(b), 1, &rr);
	fpdu(&pc, 0, b, (size_t)n, 0);
	/* frame 8: Read Response from the server */
	n = wn_wire_rdmap_read_resp_build(b, sizeof(b), 0x21, 0x3000, true);
	fpdu(&pc, 1, b, (size_t)n, 16);
	/* frame 9: Send with SE and Invalidate, second segment of a message */
	n = wn_wire_rdmap_send_build(b, sizeof(b), WN_RDMAP_SEND_SE_INV, 0x55, 1, 1436, true);
	fpdu(&pc, 0, b, (size_t)n, 4);
	/* frame 10: Atomic Request CmpSwap */
	struct wn_rdmap_atomic_req ar = {.aopcode = WN_RDMAP_AOP_CMP_SWAP,
					 .req_id = 0x77,
					 .stag = 0x33,
					 .to = 0x5000,
					 .add_swap = 1,
					 .add_swap_mask = UINT64_MAX,
					 .compare = 0,
					 .compare_mask = UINT64_MAX};
	n = wn_wire_rdmap_atomic_req_build(b, sizeof(b), 2, &ar);
	fpdu(&pc, 0, b, (size_t)n, 0);
	/* frame 11: Terminate from the server: DDP untagged invalid QN on a Send */
	n = wn_wire_rdmap_send_build(bad, sizeof(bad), WN_RDMAP_SEND, 0, 2, 0, true);
	wn_wire_put_be32(bad + 6, 9); /* QN 9 */
	struct wn_rdmap_term t;
	assert_int_equal(
		wn_wire_rdmap_term_from_cause(&t, (struct wn_term_cause){1, 2, 0x01}, bad, 22), 0);
	n = wn_wire_rdmap_term_build(b, sizeof(b), 1, &t);
	fpdu(&pc, 1, b, (size_t)n, 0);
	packet(&pc, 0, 0x11, NULL, 0);
	assert_int_equal(fclose(pc.fp), 0);
}

/* A boolean field as 1/0: tshark 4.0 prints it so, 4.2 and later print True/False. */
static void
bool_fields(char *line)
{
	static const char *const from[] = {"@True@", "@False@"}, *const to[] = {"@1@", "@0@"};

	for (int k = 0; k < 2; k++) {
		char *at;

		while ((at = strstr(line, from[k])) != NULL) {
			size_t n = strlen(from[k]), m = strlen(to[k]);

			memcpy(at, to[k], m);
			memmove(at + m, at + n, strlen(at + n) + 1);
		}
	}
}

static void
test_tshark_agrees(void **state)
{
	char path[] = "/tmp/wn_rdmap_XXXXXX.pcap";
	char cmd[1024];
	(void)state;

	if (system("command -v tshark >/dev/null 2>&1") != 0)
		fail_msg("tshark not installed (scripts/setup.sh installs it)");
	int fd = mkstemps(path, 5);
	assert_true(fd >= 0);
	close(fd);
	write_capture(path);
	snprintf(cmd, sizeof(cmd),
		 "tshark -r %s -Y iwarp_ddp_rdmap -T fields -E separator=@ "
		 "-e frame.number -e iwarp_rdma.opcode -e iwarp_ddp.last_flag "
		 "-e iwarp_ddp.stag -e iwarp_ddp.tagged_offset -e iwarp_ddp.qn -e iwarp_ddp.msn "
		 "-e iwarp_ddp.mo -e iwarp_rdma.inval_stag -e iwarp_rdma.sinkstag "
		 "-e iwarp_rdma.rdmardsz -e iwarp_rdma.srcto -e iwarp_rdma.atomic.opcode "
		 "-e iwarp_rdma.atomic.remote_stag -e iwarp_rdma.term_layer "
		 "-e iwarp_rdma.term_etype_ddp -e iwarp_rdma.term_errcode_ddp_untagged "
		 "-e iwarp_rdma.hdrct_d "
		 "-e iwarp_rdma.term_ddp_seg_len 2>/dev/null",
		 path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	/* frame@op@L@stag@to@qn@msn@mo@inv@sinkstag@size@srcto@aop@astag@layer@etype@code@D@len */
	static const char *const want[] = {
		"6@0x00@1@0x00001111@0x0000000000002000@@@@@@@@@@@@@@",
		"7@0x01@1@@@1@1@0@@0x00000021@16@0x0000000000004000@@@@@@@",
		"8@0x02@1@0x00000021@0x0000000000003000@@@@@@@@@@@@@@",
		"9@0x06@1@@@0@1@1436@85@@@@@@@@@@",
		"10@0x0a@1@@@1@2@0@@@@@2@51@@@@@",
		"11@0x07@1@@@2@1@0@@@@@@@0x01@0x02@0x01@1@0016", /* seg len 0x0016 = 22 */
	};
	static char lines[16][256];
	size_t i = 0;
	while (i < 16 && fgets(lines[i], sizeof(lines[0]), p) != NULL) {
		lines[i][strcspn(lines[i], "\n")] = '\0';
		i++;
	}
	int rc = pclose(p);
	if (getenv("WN_TSHARK_KEEP") != NULL)
		print_message("capture kept: %s\n", path);
	else
		unlink(path);
	assert_int_equal(rc, 0);
	for (size_t k = 0; k < i; k++) {
		print_message("tshark: %s\n", lines[k]);
		bool_fields(lines[k]);
		assert_true(k < sizeof(want) / sizeof(want[0]));
		assert_string_equal(lines[k], want[k]);
	}
	assert_int_equal(i, sizeof(want) / sizeof(want[0]));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opcode_table),  cmocka_unit_test(test_every_opcode),
		cmocka_unit_test(test_wire_vectors),  cmocka_unit_test(test_term_fig10),
		cmocka_unit_test(test_term_strict),   cmocka_unit_test(test_cause_names),
		cmocka_unit_test(test_tshark_agrees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
