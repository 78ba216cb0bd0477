/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/rnic, two QPs back to back: every operation with its data verified byte for byte,
 * segmentation at a small MULPDU, ORD/IRD limits, completion order, remote access violations
 * answered with the exact Terminate and the target memory unchanged, local operations,
 * RFC 6581 RTR messages, and flushing on disconnect.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <rte_byteorder.h>

#include "harness.h"
#include "wn_wire_mpa.h"

#define RW (WN_MEM_ACCESS_LOCAL_WRITE | WN_MEM_ACCESS_REMOTE_WRITE | WN_MEM_ACCESS_REMOTE_READ)
#define ALL (RW | WN_MEM_ACCESS_REMOTE_ATOMIC | WN_MEM_ACCESS_MW_BIND)

struct pair {
	struct h_side a, b;
};

static int
setup_opts(void **state, const struct h_opts *oa, const struct h_opts *ob)
{
	struct pair *p = calloc(1, sizeof(*p));

	h_side_init(&p->a, "A", 1, oa);
	h_side_init(&p->b, "B", 2, ob);
	*state = p;
	return 0;
}

static int
setup(void **state)
{
	struct h_opts o = { .mulpdu = 128, .ord = 4, .ird = 4 };

	return setup_opts(state, &o, &o);
}

static int
teardown(void **state)
{
	struct pair *p = *state;

	h_side_fini(&p->a);
	h_side_fini(&p->b);
	free(p);
	return 0;
}

static void
expect_cqe(struct wn_queue_ring *cq, uint64_t wr_id, uint8_t status, uint8_t opcode,
	   uint32_t byte_len)
{
	struct wn_queue_cqe e;

	assert_true(h_poll(cq, &e));
	assert_int_equal(e.wr_id, wr_id);
	assert_int_equal(e.status, status);
	if (status == WN_QUEUE_WC_SUCCESS) {
		assert_int_equal(e.opcode, opcode);
		assert_int_equal(e.byte_len, byte_len);
	}
}

static void
expect_no_cqe(struct wn_queue_ring *cq)
{
	struct wn_queue_cqe e;

	assert_false(h_poll(cq, &e));
}

/* Send of 3000 octets from two SGEs into two receive SGEs, MULPDU 128. */
/* Release every hold of SQ index @p wqe taken so far (zero-copy: TCP acknowledged them). */
static unsigned int
release_wqe(struct h_side *s, uint32_t wqe, unsigned int keep)
{
	unsigned int n = 0, k = 0;

	for (unsigned int i = 0; i < s->n_held; i++) {
		if (s->held[i] != wqe || n + keep >= s->n_held) {
			s->held[k++] = s->held[i];
			continue;
		}
		wn_rnic_tx_release(s->qp, wqe);
		n++;
	}
	s->n_held = k;
	return n;
}

static unsigned int
holds_of(const struct h_side *s, uint32_t wqe)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < s->n_held; i++)
		n += s->held[i] == wqe;
	return n;
}

/*
 * Zero-copy transmit: the payload of a Write and a Send is referenced (WN_LLP_TX_HELD), so
 * their CQEs wait for every release; an inline Send between them (copied) waits too, and
 * releasing the later WQE first completes nothing (RFC 5040 §5.1 completion order).
 */
static void
test_zc_cqe_held_until_release(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 8192, RW), rb = h_reg(&p->b, 0, 8192, RW);
	uint32_t lb = h_reg(&p->b, 0, 8192, RW);
	struct wn_queue_sge rs = { h_va(6000), 2000, lb };
	struct wn_queue_swqe *w;
	struct wn_rnic_stats st;
	unsigned int n0, n2;

	h_fill(p->a.buf, 8192, 21);
	p->a.hold = true;
	h_post_recv(&p->b, 9, 1, &rs);
	w = h_swqe(&p->a); /* SQ index 0: Write 3000 */
	w->wr_id = 1;
	w->opcode = WN_QUEUE_WR_RDMA_WRITE;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.rdma.remote_addr = h_va(0);
	w->u.rdma.rkey = rb;
	h_sge(w, h_va(0), 3000, la);
	h_post_send(&p->a);
	w = h_swqe(&p->a); /* 1: inline Send, copied */
	w->wr_id = 2;
	w->opcode = WN_QUEUE_WR_SEND;
	w->flags = WN_QUEUE_SEND_SIGNALED | WN_QUEUE_SEND_INLINE;
	w->inline_len = 100;
	h_post_send(&p->a);
	w = h_swqe(&p->a); /* 2: Write 1000 */
	w->wr_id = 3;
	w->opcode = WN_QUEUE_WR_RDMA_WRITE;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.rdma.remote_addr = h_va(4000);
	w->u.rdma.rkey = rb;
	h_sge(w, h_va(4000), 1000, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	assert_memory_equal(p->b.buf, p->a.buf, 3000);
	assert_memory_equal(p->b.buf + 4000, p->a.buf + 4000, 1000);
	n0 = holds_of(&p->a, 0);
	n2 = holds_of(&p->a, 2);
	assert_int_equal(n0, (3000 + 113) / 114); /* every segment of the Write (tagged: 14) */
	assert_int_equal(n2, (1000 + 113) / 114);
	assert_int_equal(holds_of(&p->a, 1), 0);
	expect_no_cqe(&p->a.scq_c);
	/* the later Write released first: nothing may complete before WQE 0 */
	assert_int_equal(release_wqe(&p->a, 2, 0), n2);
	h_pump(&p->a, &p->b);
	expect_no_cqe(&p->a.scq_c);
	/* all but one hold of WQE 0 */
	assert_int_equal(release_wqe(&p->a, 0, 1), n0 - 1);
	h_pump(&p->a, &p->b);
	expect_no_cqe(&p->a.scq_c);
	wn_rnic_tx_release(p->a.qp, 7); /* not in flight: ignored */
	assert_int_equal(release_wqe(&p->a, 0, 0), 1);
	expect_cqe(&p->a.scq_c, 1, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RDMA_WRITE, 3000);
	expect_cqe(&p->a.scq_c, 2, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_SEND, 100);
	expect_cqe(&p->a.scq_c, 3, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RDMA_WRITE, 1000);
	expect_no_cqe(&p->a.scq_c);
	wn_rnic_qp_stats(p->a.qp, &st);
	assert_int_equal(st.tx_held, n0 + n2);
	assert_true(st.cqe_held >= 1);
}

/*
 * A Read Response's payload may be referenced too (it names the source STag), but there is
 * no local WQE to hold: the responder completes nothing and holds nothing. Flushing a QP
 * with held WQEs reports them at once; late releases are ignored.
 */
static void
test_zc_read_resp_and_flush(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 8192, RW), rb = h_reg(&p->b, 0, 8192, RW);
	struct wn_queue_swqe *w;

	h_fill(p->b.buf, 8192, 5);
	p->b.hold = true;
	w = h_swqe(&p->a);
	w->wr_id = 4;
	w->opcode = WN_QUEUE_WR_RDMA_READ;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.rdma.remote_addr = h_va(100);
	w->u.rdma.rkey = rb;
	h_sge(w, h_va(200), 2000, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	expect_cqe(&p->a.scq_c, 4, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RDMA_READ, 2000);
	assert_memory_equal(p->a.buf + 200, p->b.buf + 100, 2000);
	assert_true(p->b.n_resp_stag > 0);
	assert_int_equal(p->b.n_held, 0);

	p->a.hold = true;
	w = h_swqe(&p->a);
	w->wr_id = 5;
	w->opcode = WN_QUEUE_WR_RDMA_WRITE;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.rdma.remote_addr = h_va(0);
	w->u.rdma.rkey = rb;
	h_sge(w, h_va(0), 500, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	assert_true(p->a.n_held > 0);
	expect_no_cqe(&p->a.scq_c);
	wn_rnic_qp_disconnect(p->a.qp);
	/* sent in full: it keeps its status (the connection is gone, the buffer is free) */
	expect_cqe(&p->a.scq_c, 5, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RDMA_WRITE, 500);
	release_wqe(&p->a, p->a.held[0], 0);
	expect_no_cqe(&p->a.scq_c);
}

static void
test_send_segmented(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 8192, RW), lb = h_reg(&p->b, 0, 8192, RW);
	struct wn_queue_sge rs[2] = { { h_va(100), 1000, lb }, { h_va(4000), 3000, lb } };
	struct wn_queue_swqe *w;
	struct wn_rnic_stats st;

	h_fill(p->a.buf, 8192, 1);
	h_post_recv(&p->b, 77, 2, rs);
	w = h_swqe(&p->a);
	w->wr_id = 5;
	w->opcode = WN_QUEUE_WR_SEND;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	h_sge(w, h_va(10), 1700, la);
	h_sge(w, h_va(5000), 1300, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);

	expect_cqe(&p->a.scq_c, 5, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_SEND, 3000);
	expect_cqe(&p->b.rcq_c, 77, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RECV, 3000);
	/* 1700 + 1300 octets gathered, scattered as 1000 + 2000 */
	assert_memory_equal(p->b.buf + 100, p->a.buf + 10, 1000);
	assert_memory_equal(p->b.buf + 4000, p->a.buf + 10 + 1000, 700);
	assert_memory_equal(p->b.buf + 4700, p->a.buf + 5000, 1300);
	assert_int_equal(p->b.buf[6000], 0); /* past the message: untouched */
	wn_rnic_qp_stats(p->a.qp, &st);
	/* RFC 5041 §5.2: ceil(3000 / (128 - 18)) segments */
	assert_int_equal(st.tx_ulpdu, (3000 + 109) / 110);
	assert_true(h_guards_intact(&p->b));
}

/* Inline Send with Solicited Event, and an armed CQ that only wakes for solicited. */
static void
test_send_inline_solicited(void **state)
{
	struct pair *p = *state;
	uint32_t lb = h_reg(&p->b, 0, 4096, RW);
	struct wn_queue_sge rs = { h_va(0), 4096, lb };
	struct wn_queue_swqe *w;
	struct wn_queue_cqe e;

	h_post_recv(&p->b, 1, 1, &rs);
	h_post_recv(&p->b, 2, 1, &rs);
	wn_queue_cq_arm(&p->b.rcq_c, true);
	for (int i = 0; i < 2; i++) {
		w = h_swqe(&p->a);
		w->wr_id = 10 + i;
		w->opcode = WN_QUEUE_WR_SEND;
		w->flags = WN_QUEUE_SEND_INLINE | (i == 1 ? WN_QUEUE_SEND_SOLICITED : 0);
		w->inline_len = 200;
		h_fill((uint8_t *)(w + 1), 200, 9 + i);
		h_post_send(&p->a);
		h_pump(&p->a, &p->b);
		assert_int_equal(p->b.n_notify, i == 1 ? 1 : 0);
	}
	assert_true(h_poll(&p->b.rcq_c, &e));
	assert_int_equal(e.flags & WN_QUEUE_WC_F_SOLICITED, 0);
	assert_true(h_poll(&p->b.rcq_c, &e));
	assert_int_equal(e.byte_len, 200);
	assert_int_not_equal(e.flags & WN_QUEUE_WC_F_SOLICITED, 0);
	{
		uint8_t ref[200];

		h_fill(ref, 200, 10);
		assert_memory_equal(p->b.buf, ref, 200);
	}
	/* unsignaled sends produce no CQE */
	expect_no_cqe(&p->a.scq_c);
}

/* RDMA Write of 5000 octets, MULPDU 128: placed, no CQE at the sink. */
static void
test_write(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 8192, RW), rb = h_reg(&p->b, 1024, 8192, RW);
	struct wn_queue_swqe *w;

	h_fill(p->a.buf, 8192, 3);
	w = h_swqe(&p->a);
	w->wr_id = 9;
	w->opcode = WN_QUEUE_WR_RDMA_WRITE;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.rdma.remote_addr = h_va(2000);
	w->u.rdma.rkey = rb;
	h_sge(w, h_va(1), 5000, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	expect_cqe(&p->a.scq_c, 9, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RDMA_WRITE, 5000);
	expect_no_cqe(&p->b.rcq_c);
	assert_memory_equal(p->b.buf + 2000, p->a.buf + 1, 5000);
	assert_int_equal(p->b.buf[1999], 0);
	assert_int_equal(p->b.buf[7000], 0);
}

/* Write with Immediate (RFC 7306): Write, then Immediate Data consuming a receive. */
static void
test_write_with_imm(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 8192, RW), rb = h_reg(&p->b, 0, 8192, RW);
	struct wn_queue_sge rs = { h_va(0), 16, rb };
	struct wn_queue_swqe *w;
	struct wn_queue_cqe e;

	h_fill(p->a.buf, 8192, 4);
	h_post_recv(&p->b, 55, 1, &rs);
	w = h_swqe(&p->a);
	w->wr_id = 1;
	w->opcode = WN_QUEUE_WR_RDMA_WRITE_WITH_IMM;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->ex.imm_data = 0x78563412; /* network order as the application gave it */
	w->u.rdma.remote_addr = h_va(4096);
	w->u.rdma.rkey = rb;
	h_sge(w, h_va(0), 300, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	expect_cqe(&p->a.scq_c, 1, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RDMA_WRITE, 300);
	assert_true(h_poll(&p->b.rcq_c, &e));
	assert_int_equal(e.wr_id, 55);
	assert_int_equal(e.opcode, WN_QUEUE_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(e.imm_data, 0x78563412);
	assert_int_equal(e.byte_len, 300);
	assert_int_not_equal(e.flags & WN_QUEUE_WC_F_WITH_IMM, 0);
	assert_memory_equal(p->b.buf + 4096, p->a.buf, 300);
}

/*
 * Send with Immediate (wn_rnic.h, README): on the wire an RFC 7306 Immediate Data message
 * ("SEND" + the immediate) and then the Send (three segments at MULPDU 128, with the
 * Solicited Event); the receiver completes ONE receive: IBV_WC_RECV with the immediate and
 * the Send's length. A zero-length one, a plain Send and a Write with Immediate around it
 * keep their own receives and meanings.
 */
static void
test_send_with_imm(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 8192, RW), rb = h_reg(&p->b, 0, 8192, RW);
	struct wn_queue_sge rs[4] = { { h_va(0), 400, rb }, { h_va(1000), 64, rb },
				      { h_va(2000), 64, rb }, { h_va(3000), 64, rb } };
	struct wn_queue_swqe *w;
	struct wn_queue_cqe e;
	struct wn_ddp_seg seg;

	h_fill(p->a.buf, 8192, 9);
	for (int i = 0; i < 4; i++)
		h_post_recv(&p->b, 60 + (uint64_t)i, 1, &rs[i]);
	w = h_swqe(&p->a);
	w->wr_id = 1;
	w->opcode = WN_QUEUE_WR_SEND_WITH_IMM;
	w->flags = WN_QUEUE_SEND_SIGNALED | WN_QUEUE_SEND_SOLICITED;
	w->ex.imm_data = 0x44332211; /* network order as the application gave it */
	h_sge(w, h_va(0), 300, la);
	h_post_send(&p->a);
	w = h_swqe(&p->a); /* zero-length Send with Immediate */
	w->wr_id = 2;
	w->opcode = WN_QUEUE_WR_SEND_WITH_IMM;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->ex.imm_data = 0x01000000;
	h_post_send(&p->a);
	w = h_swqe(&p->a);
	w->wr_id = 3;
	w->opcode = WN_QUEUE_WR_SEND;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	h_sge(w, h_va(500), 10, la);
	h_post_send(&p->a);
	w = h_swqe(&p->a);
	w->wr_id = 4;
	w->opcode = WN_QUEUE_WR_RDMA_WRITE_WITH_IMM;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->ex.imm_data = 0x02000000;
	w->u.rdma.remote_addr = h_va(4096);
	w->u.rdma.rkey = rb;
	h_sge(w, h_va(600), 20, la);
	h_post_send(&p->a);
	(void)wn_rnic_tx_poll(p->a.qp, 64);
	/* Immediate Data (MSN 1, "SEND" + imm, no SE), then the Send's three segments */
	assert_true(p->a.n_out >= 5);
	assert_int_equal(wn_wire_ddp_parse(p->a.out[0].b, p->a.out[0].len, WN_DDP_F_RFC7306, &seg,
				      NULL), 0);
	assert_int_equal(seg.h.opcode, WN_RDMAP_IMMEDIATE);
	assert_int_equal(seg.h.msn, 1);
	assert_true(seg.u.imm == ((uint64_t)WN_RNIC_IMM_SEND_FOLLOWS << 32 | 0x11223344));
	for (int i = 1; i <= 3; i++) {
		assert_int_equal(wn_wire_ddp_parse(p->a.out[i].b, p->a.out[i].len, WN_DDP_F_RFC7306,
					      &seg, NULL), 0);
		assert_int_equal(seg.h.opcode, WN_RDMAP_SEND_SE);
		assert_int_equal(seg.h.msn, 2);
		assert_int_equal(seg.h.inv_stag, 0); /* RFC 5040 §4.1: zero in a plain Send */
		assert_int_equal(seg.h.last, i == 3);
	}
	h_pump(&p->a, &p->b);
	expect_cqe(&p->a.scq_c, 1, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_SEND, 300);
	expect_cqe(&p->a.scq_c, 2, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_SEND, 0);
	expect_cqe(&p->a.scq_c, 3, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_SEND, 10);
	expect_cqe(&p->a.scq_c, 4, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RDMA_WRITE, 20);
	assert_true(h_poll(&p->b.rcq_c, &e));
	assert_int_equal(e.wr_id, 60);
	assert_int_equal(e.status, WN_QUEUE_WC_SUCCESS);
	assert_int_equal(e.opcode, WN_QUEUE_WC_RECV);
	assert_int_equal(e.byte_len, 300);
	assert_int_equal(e.imm_data, 0x44332211);
	assert_int_not_equal(e.flags & WN_QUEUE_WC_F_WITH_IMM, 0);
	assert_int_not_equal(e.flags & WN_QUEUE_WC_F_SOLICITED, 0);
	assert_memory_equal(p->b.buf, p->a.buf, 300);
	assert_int_equal(p->b.buf[300], 0);
	assert_true(h_poll(&p->b.rcq_c, &e));
	assert_int_equal(e.wr_id, 61);
	assert_int_equal(e.opcode, WN_QUEUE_WC_RECV);
	assert_int_equal(e.byte_len, 0);
	assert_int_equal(e.imm_data, 0x01000000);
	assert_int_equal(e.flags & WN_QUEUE_WC_F_SOLICITED, 0);
	assert_int_not_equal(e.flags & WN_QUEUE_WC_F_WITH_IMM, 0);
	assert_true(h_poll(&p->b.rcq_c, &e));
	assert_int_equal(e.wr_id, 62);
	assert_int_equal(e.opcode, WN_QUEUE_WC_RECV);
	assert_int_equal(e.byte_len, 10);
	assert_int_equal(e.flags & WN_QUEUE_WC_F_WITH_IMM, 0);
	assert_memory_equal(p->b.buf + 2000, p->a.buf + 500, 10);
	assert_true(h_poll(&p->b.rcq_c, &e));
	assert_int_equal(e.wr_id, 63);
	assert_int_equal(e.opcode, WN_QUEUE_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(e.byte_len, 20);
	assert_int_equal(e.imm_data, 0x02000000);
	expect_no_cqe(&p->b.rcq_c);
	assert_int_equal(p->b.n_notify + p->a.n_term_sent + p->b.n_term_sent, 0);
}

/*
 * Immediate Data that announces a Send ("SEND" in its high half) but is followed by another
 * Immediate Data (a peer outside the convention): it completes alone as a receive with its
 * immediate and no data, nothing is terminated; the second one completes as usual.
 */
static void
test_raw_imm_announced_alone(void **state)
{
	struct pair *p = *state;
	uint32_t lb = h_reg(&p->b, 0, 4096, RW);
	struct wn_queue_sge rs = { h_va(0), 64, lb };
	uint64_t mark = (uint64_t)WN_RNIC_IMM_SEND_FOLLOWS << 32;
	uint8_t u[64];
	struct wn_queue_cqe e;
	int n;

	h_post_recv(&p->b, 1, 1, &rs);
	h_post_recv(&p->b, 2, 1, &rs);
	n = wn_wire_rdmap_immediate_build(u, sizeof(u), WN_RDMAP_IMMEDIATE, 1, mark | 5);
	assert_int_equal(wn_rnic_rx(p->b.qp, u, (size_t)n), 0);
	expect_no_cqe(&p->b.rcq_c); /* waits for the Send */
	n = wn_wire_rdmap_immediate_build(u, sizeof(u), WN_RDMAP_IMMEDIATE, 2, 6);
	assert_int_equal(wn_rnic_rx(p->b.qp, u, (size_t)n), 0);
	assert_true(h_poll(&p->b.rcq_c, &e));
	assert_int_equal(e.wr_id, 1);
	assert_int_equal(e.opcode, WN_QUEUE_WC_RECV);
	assert_int_equal(e.byte_len, 0);
	assert_int_equal(e.imm_data, rte_cpu_to_be_32(5));
	assert_int_not_equal(e.flags & WN_QUEUE_WC_F_WITH_IMM, 0);
	assert_true(h_poll(&p->b.rcq_c, &e));
	assert_int_equal(e.wr_id, 2);
	assert_int_equal(e.opcode, WN_QUEUE_WC_RECV_RDMA_WITH_IMM);
	assert_int_equal(e.imm_data, rte_cpu_to_be_32(6));
	wn_rnic_tx_poll(p->b.qp, 8);
	assert_int_equal(p->b.n_term_sent, 0);
	/* announced, then the connection goes: the opened receive is flushed */
	h_post_recv(&p->b, 3, 1, &rs);
	n = wn_wire_rdmap_immediate_build(u, sizeof(u), WN_RDMAP_IMMEDIATE, 3, mark | 7);
	assert_int_equal(wn_rnic_rx(p->b.qp, u, (size_t)n), 0);
	wn_rnic_qp_disconnect(p->b.qp);
	expect_cqe(&p->b.rcq_c, 3, WN_QUEUE_WC_WR_FLUSH_ERR, 0, 0);
	expect_no_cqe(&p->b.rcq_c);
}

/*
 * Send with Immediate and receiver not ready: the Immediate Data waits for a receive (held,
 * nothing changed); once one is posted it and the Send complete that one receive.
 */
static void
test_send_with_imm_rnr(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW), lb = h_reg(&p->b, 0, 4096, RW);
	struct wn_queue_sge rs = { h_va(0), 400, lb };
	struct wn_queue_swqe *w = h_swqe(&p->a);
	struct wn_queue_cqe e;
	unsigned int i;

	h_fill(p->a.buf, 4096, 5);
	w->opcode = WN_QUEUE_WR_SEND_WITH_IMM;
	w->wr_id = 8;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->ex.imm_data = 0xabcd;
	h_sge(w, h_va(0), 200, la);
	h_post_send(&p->a);
	(void)wn_rnic_tx_poll(p->a.qp, 32);
	assert_int_equal(p->a.n_out, 3); /* Immediate Data + two Send segments */
	assert_int_equal(wn_rnic_rx(p->b.qp, p->a.out[0].b, p->a.out[0].len), -EAGAIN);
	assert_false(wn_rnic_rx_ready(p->b.qp));
	h_post_recv(&p->b, 9, 1, &rs);
	assert_true(wn_rnic_rx_ready(p->b.qp));
	for (i = 0; i < 3; i++) {
		assert_int_equal(wn_rnic_rx(p->b.qp, p->a.out[i].b, p->a.out[i].len), 0);
		free(p->a.out[i].b);
	}
	p->a.n_out = 0;
	assert_true(h_poll(&p->b.rcq_c, &e));
	assert_int_equal(e.wr_id, 9);
	assert_int_equal(e.opcode, WN_QUEUE_WC_RECV);
	assert_int_equal(e.byte_len, 200);
	assert_int_equal(e.imm_data, 0xabcd);
	assert_memory_equal(p->b.buf, p->a.buf, 200);
	expect_no_cqe(&p->b.rcq_c);
}

static int
setup_no7306(void **state)
{
	struct h_opts o = { .mulpdu = 128, .ord = 4, .ird = 4, .no_rfc7306 = true };

	return setup_opts(state, &o, &o);
}

/* Without RFC 7306, Send with Immediate (like Write with Immediate) is a local error. */
static void
test_send_with_imm_needs_7306(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW);
	struct wn_queue_swqe *w = h_swqe(&p->a);

	w->opcode = WN_QUEUE_WR_SEND_WITH_IMM;
	w->wr_id = 3;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	h_sge(w, h_va(0), 10, la);
	h_post_send(&p->a);
	(void)wn_rnic_tx_poll(p->a.qp, 32);
	expect_cqe(&p->a.scq_c, 3, WN_QUEUE_WC_LOC_QP_OP_ERR, 0, 0);
	assert_int_equal(p->a.n_term_sent, 1); /* the Terminate instead of the message */
	assert_int_equal(p->a.n_out, 1);
}

/* RDMA Read of 5000 octets, MULPDU 128, and a zero-length Read. */
static void
test_read(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 8192, RW), rb = h_reg(&p->b, 0, 8192, RW);
	struct wn_queue_swqe *w;

	h_fill(p->b.buf, 8192, 5);
	w = h_swqe(&p->a);
	w->wr_id = 21;
	w->opcode = WN_QUEUE_WR_RDMA_READ;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.rdma.remote_addr = h_va(3000);
	w->u.rdma.rkey = rb;
	h_sge(w, h_va(100), 5000, la);
	h_post_send(&p->a);
	w = h_swqe(&p->a);
	w->wr_id = 22;
	w->opcode = WN_QUEUE_WR_RDMA_READ;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.rdma.remote_addr = 0xdeadbeef; /* not validated for size 0 (RFC 5040 §5.2.1) */
	w->u.rdma.rkey = 0x12345678;
	h_sge(w, h_va(0), 0, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	expect_cqe(&p->a.scq_c, 21, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RDMA_READ, 5000);
	expect_cqe(&p->a.scq_c, 22, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RDMA_READ, 0);
	assert_memory_equal(p->a.buf + 100, p->b.buf + 3000, 5000);
	assert_int_equal(p->a.buf[99], 0);
	assert_int_equal(p->a.buf[5100], 0);
	assert_int_equal(wn_rnic_qp_state(p->b.qp), WN_RNIC_QPS_RTS);
}

/* A zero-length Read posted with no SGE (num_sge 0, as verbs allows) completes. */
static void
test_read_zero_no_sge(void **state)
{
	struct pair *p = *state;
	uint32_t rb = h_reg(&p->b, 0, 8192, RW);
	struct wn_queue_swqe *w;

	w = h_swqe(&p->a);
	w->wr_id = 23;
	w->opcode = WN_QUEUE_WR_RDMA_READ;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.rdma.remote_addr = h_va(100);
	w->u.rdma.rkey = rb;
	w->num_sge = 0;
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	expect_cqe(&p->a.scq_c, 23, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RDMA_READ, 0);
	expect_no_cqe(&p->a.scq_c);
	assert_int_equal(wn_rnic_qp_state(p->a.qp), WN_RNIC_QPS_RTS);
	assert_int_equal(wn_rnic_qp_state(p->b.qp), WN_RNIC_QPS_RTS);
	assert_true(h_guards_intact(&p->a));
}

/* A Send posted after a Read completes after it (SQ order), although it was sent first. */
static void
test_completion_order(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 8192, RW), rb = h_reg(&p->b, 0, 8192, RW);
	struct wn_queue_sge rs = { h_va(0), 64, rb };
	struct wn_queue_swqe *w;

	h_post_recv(&p->b, 1, 1, &rs);
	w = h_swqe(&p->a);
	w->wr_id = 100;
	w->opcode = WN_QUEUE_WR_RDMA_READ;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.rdma.remote_addr = h_va(0);
	w->u.rdma.rkey = rb;
	h_sge(w, h_va(0), 1000, la);
	h_post_send(&p->a);
	w = h_swqe(&p->a);
	w->wr_id = 101;
	w->opcode = WN_QUEUE_WR_SEND;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	h_sge(w, h_va(0), 10, la);
	h_post_send(&p->a);
	/* both requests leave A; the Send is "done" but the Read is not */
	assert_int_equal(wn_rnic_tx_poll(p->a.qp, 32), 2);
	expect_no_cqe(&p->a.scq_c);
	h_pump(&p->a, &p->b);
	expect_cqe(&p->a.scq_c, 100, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RDMA_READ, 1000);
	expect_cqe(&p->a.scq_c, 101, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_SEND, 10);
}

static int
setup_ord2(void **state)
{
	struct h_opts o = { .mulpdu = 256, .ord = 2, .ird = 4 };

	return setup_opts(state, &o, &o);
}

/* ORD 2: of 4 Reads only 2 leave until responses arrive. */
static void
test_ord_limit(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 8192, RW), rb = h_reg(&p->b, 0, 8192, RW);
	struct wn_rnic_stats st;

	h_fill(p->b.buf, 8192, 6);
	for (int i = 0; i < 4; i++) {
		struct wn_queue_swqe *w = h_swqe(&p->a);

		w->wr_id = 200 + i;
		w->opcode = WN_QUEUE_WR_RDMA_READ;
		w->flags = WN_QUEUE_SEND_SIGNALED;
		w->u.rdma.remote_addr = h_va(1000 * i);
		w->u.rdma.rkey = rb;
		h_sge(w, h_va(1000 * i), 700, la);
		h_post_send(&p->a);
	}
	assert_int_equal(wn_rnic_tx_poll(p->a.qp, 32), 2);
	wn_rnic_qp_stats(p->a.qp, &st);
	assert_true(st.ord_stalls > 0);
	assert_int_equal(wn_rnic_tx_poll(p->a.qp, 32), 0);
	h_pump(&p->a, &p->b);
	for (int i = 0; i < 4; i++) {
		expect_cqe(&p->a.scq_c, 200 + i, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RDMA_READ, 700);
		assert_memory_equal(p->a.buf + 1000 * i, p->b.buf + 1000 * i, 700);
	}
}

static int
setup_ird1(void **state)
{
	struct h_opts oa = { .mulpdu = 256, .ord = 4, .ird = 4 };
	struct h_opts ob = { .mulpdu = 256, .ord = 4, .ird = 1 };

	return setup_opts(state, &oa, &ob);
}

/* A peer exceeding our IRD: the second Read Request finds no QN 1 buffer. */
static void
test_ird_limit(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 8192, RW), rb = h_reg(&p->b, 0, 8192, RW);
	struct wn_queue_cqe e;

	for (int i = 0; i < 2; i++) {
		struct wn_queue_swqe *w = h_swqe(&p->a);

		w->wr_id = 300 + i;
		w->opcode = WN_QUEUE_WR_RDMA_READ;
		w->u.rdma.remote_addr = h_va(0);
		w->u.rdma.rkey = rb;
		h_sge(w, h_va(0), 100, la);
		h_post_send(&p->a);
	}
	assert_int_equal(wn_rnic_tx_poll(p->a.qp, 32), 2);
	/* B gets both before it answers the first */
	h_deliver(&p->a, &p->b);
	assert_int_equal(wn_rnic_qp_state(p->b.qp), WN_RNIC_QPS_TERMINATE);
	h_pump(&p->a, &p->b);
	/* RFC 5041 §7.1: DDP untagged "Invalid MSN - no buffer available" 1/2/0x02 */
	assert_int_equal(p->b.n_term_sent, 1);
	assert_int_equal(p->a.n_term_recv, 1);
	assert_int_equal(p->a.term_recv.layer, 1);
	assert_int_equal(p->a.term_recv.etype, 2);
	assert_int_equal(p->a.term_recv.code, 2);
	assert_int_equal(wn_rnic_qp_state(p->a.qp), WN_RNIC_QPS_TERMINATE);
	/* the LLP goes down: both outstanding Reads are flushed, in order */
	wn_rnic_qp_disconnect(p->a.qp);
	assert_true(h_poll(&p->a.scq_c, &e));
	assert_int_equal(e.wr_id, 300);
	assert_int_equal(e.status, WN_QUEUE_WC_WR_FLUSH_ERR);
	assert_true(h_poll(&p->a.scq_c, &e));
	assert_int_equal(e.wr_id, 301);
	assert_int_equal(e.status, WN_QUEUE_WC_WR_FLUSH_ERR);
}

/* RFC 7306 FetchAdd and CmpSwap (match and mismatch). */
static void
test_atomics(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW), rb = h_reg(&p->b, 0, 4096, ALL);
	uint64_t v = 1000, r;
	struct wn_queue_swqe *w;

	memcpy(p->b.buf + 64, &v, 8);
	w = h_swqe(&p->a);
	w->wr_id = 1;
	w->opcode = WN_QUEUE_WR_ATOMIC_FETCH_AND_ADD;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.atomic.remote_addr = h_va(64);
	w->u.atomic.rkey = rb;
	w->u.atomic.compare_add = 23;
	h_sge(w, h_va(0), 8, la);
	h_post_send(&p->a);
	w = h_swqe(&p->a);
	w->wr_id = 2;
	w->opcode = WN_QUEUE_WR_ATOMIC_CMP_AND_SWP;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.atomic.remote_addr = h_va(64);
	w->u.atomic.rkey = rb;
	w->u.atomic.compare_add = 1023;
	w->u.atomic.swap = 7;
	h_sge(w, h_va(8), 8, la);
	h_post_send(&p->a);
	w = h_swqe(&p->a);
	w->wr_id = 3;
	w->opcode = WN_QUEUE_WR_ATOMIC_CMP_AND_SWP;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.atomic.remote_addr = h_va(64);
	w->u.atomic.rkey = rb;
	w->u.atomic.compare_add = 1023; /* now 7: no swap */
	w->u.atomic.swap = 99;
	h_sge(w, h_va(16), 8, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	expect_cqe(&p->a.scq_c, 1, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_FETCH_ADD, 8);
	expect_cqe(&p->a.scq_c, 2, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_COMP_SWAP, 8);
	expect_cqe(&p->a.scq_c, 3, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_COMP_SWAP, 8);
	memcpy(&r, p->a.buf, 8);
	assert_int_equal(r, 1000);
	memcpy(&r, p->a.buf + 8, 8);
	assert_int_equal(r, 1023);
	memcpy(&r, p->a.buf + 16, 8);
	assert_int_equal(r, 7);
	memcpy(&r, p->b.buf + 64, 8);
	assert_int_equal(r, 7);
}

/* A Write the sink must refuse: Terminate cause as expected, sink memory unchanged. */
static void
write_violation(struct pair *p, uint32_t rkey, uint64_t to, uint32_t len, int layer, int etype,
		int code)
{
	uint32_t la = h_reg(&p->a, 0, 8192, RW);
	struct wn_queue_swqe *w;
	struct wn_queue_cqe e;
	uint8_t before[H_BUF];

	h_fill(p->a.buf, 8192, 11);
	memcpy(before, p->b.buf, H_BUF);
	w = h_swqe(&p->a);
	w->wr_id = 1;
	w->opcode = WN_QUEUE_WR_RDMA_WRITE;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.rdma.remote_addr = to;
	w->u.rdma.rkey = rkey;
	h_sge(w, h_va(0), len, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	assert_int_equal(p->b.n_term_sent, 1);
	assert_int_equal(p->b.term_sent.layer, layer);
	assert_int_equal(p->b.term_sent.etype, etype);
	assert_int_equal(p->b.term_sent.code, code);
	assert_int_equal(p->a.n_term_recv, 1);
	assert_int_equal(p->a.term_recv.layer, layer);
	assert_int_equal(p->a.term_recv.etype, etype);
	assert_int_equal(p->a.term_recv.code, code);
	struct wn_rnic_stats sa, sb;
	wn_rnic_qp_stats(p->a.qp, &sa);
	wn_rnic_qp_stats(p->b.qp, &sb);
	assert_int_equal(sb.terminates_sent, 1);
	assert_int_equal(sa.terminates_recv, 1);
	assert_int_equal(sb.terminates_recv + sa.terminates_sent, 0);
	assert_int_equal(wn_rnic_qp_state(p->b.qp), WN_RNIC_QPS_TERMINATE);
	assert_memory_equal(p->b.buf, before, H_BUF);
	assert_true(h_guards_intact(&p->b));
	/* the Write itself left A completely: its CQE is a success */
	assert_true(h_poll(&p->a.scq_c, &e));
	assert_int_equal(e.status, WN_QUEUE_WC_SUCCESS);
	/* later input is dropped silently (RFC 5041 §7.1) */
	assert_int_equal(wn_rnic_rx(p->b.qp, (const uint8_t *)"\xc1\x40", 2), -ENOTCONN);
}

static void
test_write_no_rights(void **state)
{
	struct pair *p = *state;
	uint32_t rb = h_reg(&p->b, 0, 4096, WN_MEM_ACCESS_REMOTE_READ);

	/* RDMAP Remote Protection, access rights (RFC 5040 Fig. 9): 0/1/0x02 */
	write_violation(p, rb, h_va(0), 100, 0, 1, 0x02);
}

static void
test_write_out_of_bounds(void **state)
{
	struct pair *p = *state;
	uint32_t rb = h_reg(&p->b, 1024, 1024, RW);

	/* one segment crossing the end of the region: DDP tagged base/bounds 1/1/0x01,
	 * none of it placed */
	write_violation(p, rb, h_va(1024 + 1024 - 50), 100, 1, 1, 0x01);
}

static void
test_write_invalid_stag(void **state)
{
	struct pair *p = *state;
	uint32_t rb = h_reg(&p->b, 0, 4096, RW);

	write_violation(p, rb ^ 0x80, h_va(0), 100, 1, 1, 0x00);
}

static void
test_write_other_pd(void **state)
{
	struct pair *p = *state;
	uint32_t pd2 = (uint32_t)wn_mem_pd_alloc(p->b.mem), rb;

	assert_int_equal(wn_mem_mr_reg(p->b.mem, pd2, p->b.buf, 4096, h_va(0), RW, 3, &rb), 0);
	/* RFC 5042 §5 / RFC 5041 §7.2: STag not associated with DDP stream 1/1/0x02 */
	write_violation(p, rb, h_va(0), 100, 1, 1, 0x02);
}

/* A Read of a region without remote read: Terminate 0/1/0x02 carrying the DDP and RDMA
 * headers of the request (RFC 5040 Fig. 10). */
static void
test_read_violation_terminate_contents(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW);
	uint32_t rb = h_reg(&p->b, 0, 4096, WN_MEM_ACCESS_LOCAL_WRITE |
			    WN_MEM_ACCESS_REMOTE_WRITE);
	struct wn_queue_swqe *w;
	struct wn_ddp_seg seg;
	struct wn_queue_cqe e;

	w = h_swqe(&p->a);
	w->wr_id = 4;
	w->opcode = WN_QUEUE_WR_RDMA_READ;
	w->u.rdma.remote_addr = h_va(16);
	w->u.rdma.rkey = rb;
	h_sge(w, h_va(32), 64, la);
	h_post_send(&p->a);
	wn_rnic_tx_poll(p->a.qp, 32);
	h_deliver(&p->a, &p->b);
	wn_rnic_tx_poll(p->b.qp, 32);
	assert_int_equal(p->b.n_out, 1);
	assert_int_equal(
		wn_wire_ddp_parse(p->b.out[0].b, p->b.out[0].len, WN_DDP_F_RFC7306, &seg, NULL), 0);
	assert_int_equal(seg.h.opcode, WN_RDMAP_TERMINATE);
	assert_int_equal(seg.h.qn, WN_DDP_QN_TERM);
	assert_int_equal(seg.h.msn, 1);
	assert_int_equal(seg.u.term.status, WN_TERM_OK);
	assert_int_equal(seg.u.term.cause.layer, 0);
	assert_int_equal(seg.u.term.cause.etype, 1);
	assert_int_equal(seg.u.term.cause.code, 0x02);
	assert_true(seg.u.term.d);
	assert_true(seg.u.term.r);
	assert_int_equal(seg.u.term.ddp_hdr_len, 18);
	assert_int_equal(seg.u.term.ddp.opcode, WN_RDMAP_READ_REQ);
	assert_int_equal(seg.u.term.rdma.src_stag, rb);
	assert_int_equal(seg.u.term.rdma.src_to, h_va(16));
	assert_int_equal(seg.u.term.rdma.sink_stag, la);
	assert_int_equal(seg.u.term.rdma.size, 64);
	h_deliver(&p->b, &p->a);
	assert_int_equal(p->a.n_term_recv, 1);
	/* A's Read never completes; the disconnect flushes it */
	expect_no_cqe(&p->a.scq_c);
	wn_rnic_qp_disconnect(p->a.qp);
	assert_true(h_poll(&p->a.scq_c, &e));
	assert_int_equal(e.wr_id, 4);
	assert_int_equal(e.status, WN_QUEUE_WC_WR_FLUSH_ERR);
	assert_int_equal(wn_rnic_qp_state(p->a.qp), WN_RNIC_QPS_ERROR);
}

/* A Send without a posted receive (1/2/0x02) and a Send longer than the buffer (1/2/0x05). */
static void
test_send_no_buffer(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW);
	struct wn_queue_swqe *w = h_swqe(&p->a);

	w->opcode = WN_QUEUE_WR_SEND;
	h_sge(w, h_va(0), 10, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	assert_int_equal(p->a.n_term_recv, 1);
	assert_int_equal(p->a.term_recv.layer, 1);
	assert_int_equal(p->a.term_recv.etype, 2);
	assert_int_equal(p->a.term_recv.code, 0x02);
}

static int
setup_ib_rc(void **state)
{
	struct h_opts o = { .mulpdu = 128, .ord = 4, .ird = 4, .ib_rc = true,
			    .qp_access = RW | WN_MEM_ACCESS_REMOTE_ATOMIC };

	return setup_opts(state, &o, &o);
}

/* ... and B's QP allows Reads only: Writes and Atomics are refused whatever the region allows */
static int
setup_ib_rc_read_only(void **state)
{
	struct h_opts o = { .mulpdu = 128, .ord = 4, .ird = 4, .ib_rc = true,
			    .qp_access = RW | WN_MEM_ACCESS_REMOTE_ATOMIC };
	struct h_opts b = o;

	b.qp_access = WN_MEM_ACCESS_REMOTE_READ;
	return setup_opts(state, &o, &b);
}

/* InfiniBand RC: the QP's own rights (IBV_QP_ACCESS_FLAGS) are checked as the region's are. */
static void
test_ib_rc_qp_rights(void **state)
{
	struct pair *p = *state;
	uint32_t rb = h_reg(&p->b, 0, 4096, RW | WN_MEM_ACCESS_REMOTE_ATOMIC);

	/* RDMAP Remote Protection, access rights: 0/1/0x02 */
	write_violation(p, rb, h_va(0), 100, 0, 1, 0x02);
}

/*
 * InfiniBand RC completions (ib_rc): a Write whose completion waits for the peer (its
 * ULPDUs held, as the lower layer holds them until the ACK) is the one the peer's Terminate
 * refuses: it completes with IBV_WC_REM_ACCESS_ERR and the Terminate's cause, not with
 * success; the next one is flushed.
 */
static void
test_ib_rc_terminate_completes(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 8192, RW);
	uint32_t rb = h_reg(&p->b, 0, 4096, WN_MEM_ACCESS_REMOTE_READ);
	struct wn_queue_swqe *w;
	struct wn_queue_cqe e;

	p->a.hold = true;
	for (uint64_t i = 1; i <= 2; i++) {
		w = h_swqe(&p->a);
		w->wr_id = i;
		w->opcode = WN_QUEUE_WR_RDMA_WRITE;
		w->flags = WN_QUEUE_SEND_SIGNALED;
		w->u.rdma.remote_addr = h_va(0);
		w->u.rdma.rkey = rb;
		h_sge(w, h_va(0), 100, la);
		h_post_send(&p->a);
	}
	h_pump(&p->a, &p->b);
	assert_int_equal(p->a.n_term_recv, 1);
	assert_true(h_poll(&p->a.scq_c, &e) == false || e.status != WN_QUEUE_WC_SUCCESS);
	wn_rnic_qp_disconnect(p->a.qp); /* the stream closes behind the Terminate */
	assert_true(h_poll(&p->a.scq_c, &e));
	assert_int_equal(e.wr_id, 1);
	assert_int_equal(e.status, WN_QUEUE_WC_REM_ACCESS_ERR);
	assert_int_equal(e.vendor_err, 0 << 12 | 1 << 8 | 0x02); /* RDMAP, protection, rights */
	assert_true(h_poll(&p->a.scq_c, &e));
	assert_int_equal(e.wr_id, 2);
	assert_int_equal(e.status, WN_QUEUE_WC_WR_FLUSH_ERR);
}

static int
setup_rnr(void **state)
{
	struct h_opts o = { .mulpdu = 128, .ord = 4, .ird = 4, .rnr_hold = true };

	return setup_opts(state, &o, &o);
}

/*
 * Receiver not ready (rnr_hold): a Send that starts while no receive is posted is refused
 * with -EAGAIN and changes nothing; offered again once a receive is posted it is placed whole
 * (all its segments). Given up (wn_rnic_rnr_expire), the next one gets 1/2/0x02.
 */
static void
test_send_rnr_hold(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW), lb = h_reg(&p->b, 0, 4096, RW);
	struct wn_queue_sge rs = { h_va(0), 400, lb };
	struct wn_queue_swqe *w = h_swqe(&p->a);
	struct wn_rnic_stats st;
	unsigned int i;

	h_fill(p->a.buf, 4096, 3);
	w->opcode = WN_QUEUE_WR_SEND;
	w->wr_id = 77;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	h_sge(w, h_va(0), 300, la); /* three segments of at most 128 - 18 octets */
	h_post_send(&p->a);
	(void)wn_rnic_tx_poll(p->a.qp, 32);
	assert_int_equal(p->a.n_out, 3);
	assert_int_equal(wn_rnic_rx(p->b.qp, p->a.out[0].b, p->a.out[0].len), -EAGAIN);
	assert_false(wn_rnic_rx_ready(p->b.qp));
	/* offered again without a receive: still held, counted once */
	assert_int_equal(wn_rnic_rx(p->b.qp, p->a.out[0].b, p->a.out[0].len), -EAGAIN);
	wn_rnic_qp_stats(p->b.qp, &st);
	assert_int_equal(st.rnr_holds, 1);
	assert_int_equal(st.rx_ulpdu, 0);
	assert_int_equal(p->b.n_term_sent, 0);
	assert_int_equal(wn_rnic_qp_state(p->b.qp), WN_RNIC_QPS_RTS);
	expect_no_cqe(&p->b.rcq_c);
	h_post_recv(&p->b, 5, 1, &rs);
	assert_true(wn_rnic_rx_ready(p->b.qp));
	for (i = 0; i < 3; i++) {
		assert_int_equal(wn_rnic_rx(p->b.qp, p->a.out[i].b, p->a.out[i].len), 0);
		free(p->a.out[i].b);
	}
	p->a.n_out = 0;
	expect_cqe(&p->b.rcq_c, 5, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RECV, 300);
	assert_memory_equal(p->b.buf, p->a.buf, 300);
	h_pump(&p->a, &p->b);
	expect_cqe(&p->a.scq_c, 77, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_SEND, 300);
	/* the next Send finds no receive either; this time the wait is given up */
	w = h_swqe(&p->a);
	w->opcode = WN_QUEUE_WR_SEND;
	h_sge(w, h_va(0), 10, la);
	h_post_send(&p->a);
	(void)wn_rnic_tx_poll(p->a.qp, 32);
	assert_int_equal(wn_rnic_rx(p->b.qp, p->a.out[0].b, p->a.out[0].len), -EAGAIN);
	wn_rnic_rnr_expire(p->b.qp);
	assert_true(wn_rnic_rx_ready(p->b.qp));
	assert_int_equal(wn_rnic_rx(p->b.qp, p->a.out[0].b, p->a.out[0].len), -EPROTO);
	free(p->a.out[0].b);
	p->a.n_out = 0;
	h_pump(&p->a, &p->b); /* the Terminate goes out */
	assert_int_equal(p->b.term_sent.layer, 1);
	assert_int_equal(p->b.term_sent.etype, 2);
	assert_int_equal(p->b.term_sent.code, 0x02);
	wn_rnic_qp_stats(p->b.qp, &st);
	assert_int_equal(st.rnr_holds, 2);
	assert_int_equal(st.rnr_timeouts, 1);
	/* a QP that takes nothing any more does not keep its stream held */
	assert_true(wn_rnic_rx_ready(p->b.qp));
}

/*
 * Out-of-order placement (wn_rnic_rx_place, RFC 5044 §4.3): B is given A's last ULPDUs
 * before the first ones. A Write's later segment lands in the MR at once (no completion, no
 * state); a Send's later segment lands in the receive its MSN names, also one not taken yet;
 * nothing lands through a window, out of the region's bounds, or in an SRQ. In order, the
 * same ULPDUs then complete everything as usual.
 */
static void
test_ooo_place(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 8192, RW), rb = h_reg(&p->b, 0, 4096, RW);
	uint32_t lb = h_reg(&p->b, 4096, 8192, RW);
	struct wn_queue_sge rs[2] = { { h_va(4096), 300, lb }, { h_va(8192), 300, lb } };
	struct wn_queue_swqe *w;
	struct wn_rnic_stats st;
	unsigned int i, n;

	h_fill(p->a.buf, 8192, 21);
	w = h_swqe(&p->a); /* a Write of three segments (110 octets each at MULPDU 128) */
	w->wr_id = 1;
	w->opcode = WN_QUEUE_WR_RDMA_WRITE;
	w->u.rdma.remote_addr = h_va(100);
	w->u.rdma.rkey = rb;
	h_sge(w, h_va(0), 300, la);
	h_post_send(&p->a);
	for (i = 0; i < 2; i++) { /* two Sends of three segments each */
		w = h_swqe(&p->a);
		w->wr_id = 2 + i;
		w->opcode = WN_QUEUE_WR_SEND;
		h_sge(w, h_va(1000 + 300 * i), 300, la);
		h_post_send(&p->a);
	}
	(void)wn_rnic_tx_poll(p->a.qp, 32);
	n = p->a.n_out;
	assert_int_equal(n, 9);
	h_post_recv(&p->b, 70, 1, &rs[0]);
	h_post_recv(&p->b, 71, 1, &rs[1]);
	/* the Write's last segment first: placed, nothing else happens */
	assert_int_equal(wn_rnic_rx_place(p->b.qp, p->a.out[2].b, p->a.out[2].len), 72);
	assert_memory_equal(p->b.buf + 100 + 228, p->a.buf + 228, 72);
	assert_int_equal(p->b.buf[100], 0); /* the first segments are still in the hole */
	/* the second Send's middle segment: into the second receive, not taken yet */
	assert_int_equal(wn_rnic_rx_place(p->b.qp, p->a.out[7].b, p->a.out[7].len), 110);
	assert_memory_equal(p->b.buf + 8192 + 110, p->a.buf + 1300 + 110, 110);
	expect_no_cqe(&p->b.rcq_c);
	wn_rnic_qp_stats(p->b.qp, &st);
	assert_int_equal(st.ooo_placed, 2);
	assert_int_equal(st.ooo_bytes, 182);
	assert_int_equal(st.rx_ulpdu, 0);
	assert_int_equal(wn_rnic_qp_state(p->b.qp), WN_RNIC_QPS_RTS);
	/* in order now: everything is placed (again) and completes */
	for (i = 0; i < n; i++) {
		assert_int_equal(wn_rnic_rx(p->b.qp, p->a.out[i].b, p->a.out[i].len), 0);
		free(p->a.out[i].b);
	}
	p->a.n_out = 0;
	assert_memory_equal(p->b.buf + 100, p->a.buf, 300);
	expect_cqe(&p->b.rcq_c, 70, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RECV, 300);
	expect_cqe(&p->b.rcq_c, 71, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RECV, 300);
	assert_memory_equal(p->b.buf + 4096, p->a.buf + 1000, 300);
	assert_memory_equal(p->b.buf + 8192, p->a.buf + 1300, 300);
	assert_int_equal(p->b.n_term_sent, 0);
	assert_true(h_guards_intact(&p->b));
}

/* Out-of-order placement leaves alone what it cannot be sure of. */
static void
test_ooo_refused(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 8192, RW), rb = h_reg(&p->b, 0, 512, RW);
	uint32_t lb = h_reg(&p->b, 4096, 4096, ALL);
	struct wn_queue_swqe *w;
	uint32_t mw, mw_b;
	unsigned int i;

	h_fill(p->a.buf, 8192, 22);
	/* a window bound on B: a Write through it is not placed early */
	assert_int_equal(wn_mem_mw_alloc(p->b.mem, p->b.pd, 2, 0x50, &mw), 0);
	mw_b = wn_mem_stag(wn_mem_stag_index(mw), 0x51);
	w = h_swqe(&p->b);
	w->opcode = WN_QUEUE_WR_BIND_MW;
	w->u.bind_mw.addr = h_va(4096);
	w->u.bind_mw.length = 1024;
	w->u.bind_mw.mw_stag = mw_b;
	w->u.bind_mw.mr_lkey = lb;
	w->u.bind_mw.access = WN_MEM_ACCESS_REMOTE_WRITE;
	h_post_send(&p->b);
	h_pump(&p->a, &p->b);
	w = h_swqe(&p->a);
	w->opcode = WN_QUEUE_WR_RDMA_WRITE;
	w->u.rdma.remote_addr = h_va(4096);
	w->u.rdma.rkey = mw_b;
	h_sge(w, h_va(0), 100, la);
	h_post_send(&p->a);
	/* a Write past the MR's end, a Write with a wrong key, a Send with no receive */
	w = h_swqe(&p->a);
	w->opcode = WN_QUEUE_WR_RDMA_WRITE;
	w->u.rdma.remote_addr = h_va(450);
	w->u.rdma.rkey = rb;
	h_sge(w, h_va(0), 100, la);
	h_post_send(&p->a);
	w = h_swqe(&p->a);
	w->opcode = WN_QUEUE_WR_RDMA_WRITE;
	w->u.rdma.remote_addr = h_va(0);
	w->u.rdma.rkey = rb ^ 0xff;
	h_sge(w, h_va(0), 100, la);
	h_post_send(&p->a);
	w = h_swqe(&p->a);
	w->opcode = WN_QUEUE_WR_SEND;
	h_sge(w, h_va(0), 100, la);
	h_post_send(&p->a);
	(void)wn_rnic_tx_poll(p->a.qp, 32);
	assert_int_equal(p->a.n_out, 4);
	for (i = 0; i < 4; i++) {
		int n = wn_rnic_rx_place(p->b.qp, p->a.out[i].b, p->a.out[i].len);

		if (n != 0)
			fail_msg("ULPDU %u placed early (%d octets)", i, n);
	}
	assert_int_equal(p->b.n_term_sent, 0);
	assert_int_equal(wn_rnic_qp_state(p->b.qp), WN_RNIC_QPS_RTS);
	for (i = 0; i < 512; i++)
		assert_int_equal(p->b.buf[i], 0);
	for (i = 4096; i < 8192; i++)
		assert_int_equal(p->b.buf[i], 0);
	assert_true(h_guards_intact(&p->b));
}

static void
test_send_too_long(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW), lb = h_reg(&p->b, 0, 4096, RW);
	struct wn_queue_sge rs = { h_va(0), 150, lb };
	struct wn_queue_swqe *w = h_swqe(&p->a);
	struct wn_queue_cqe e;

	h_fill(p->a.buf, 4096, 12);
	h_post_recv(&p->b, 8, 1, &rs);
	w->opcode = WN_QUEUE_WR_SEND;
	h_sge(w, h_va(0), 400, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	assert_int_equal(p->b.term_sent.layer, 1);
	assert_int_equal(p->b.term_sent.etype, 2);
	assert_int_equal(p->b.term_sent.code, 0x05);
	/* the first segment (110 octets) fitted and was placed; nothing past the buffer */
	assert_memory_equal(p->b.buf, p->a.buf, 110);
	for (int i = 150; i < 4096; i++)
		assert_int_equal(p->b.buf[i], 0);
	/* disconnect: the receive in progress is flushed */
	wn_rnic_qp_disconnect(p->b.qp);
	assert_true(h_poll(&p->b.rcq_c, &e));
	assert_int_equal(e.wr_id, 8);
	assert_int_equal(e.status, WN_QUEUE_WC_WR_FLUSH_ERR);
}

/* Send with Invalidate of the peer's type 2 window: valid → invalidated; a registered MR
 * cannot be invalidated (RFC 5040 §5.3: 0/1/0x09). */
static void
test_send_with_invalidate(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW), lb = h_reg(&p->b, 0, 4096, ALL);
	struct wn_queue_sge rs = { h_va(0), 64, lb };
	struct wn_queue_swqe *w;
	struct wn_queue_cqe e;
	uint32_t mw, mw_b;

	assert_int_equal(wn_mem_mw_alloc(p->b.mem, p->b.pd, 2, 0x40, &mw), 0);
	/* B binds its window through a WQE on its own QP */
	mw_b = wn_mem_stag(wn_mem_stag_index(mw), 0x41);
	w = h_swqe(&p->b);
	w->wr_id = 60;
	w->opcode = WN_QUEUE_WR_BIND_MW;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.bind_mw.addr = h_va(1024);
	w->u.bind_mw.length = 512;
	w->u.bind_mw.mw_stag = mw_b;
	w->u.bind_mw.mr_lkey = lb;
	w->u.bind_mw.access = WN_MEM_ACCESS_REMOTE_WRITE;
	h_post_send(&p->b);
	h_pump(&p->a, &p->b);
	expect_cqe(&p->b.scq_c, 60, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_BIND_MW, 0);
	/* A writes through the window, then sends with invalidate */
	h_fill(p->a.buf, 4096, 13);
	w = h_swqe(&p->a);
	w->opcode = WN_QUEUE_WR_RDMA_WRITE;
	w->u.rdma.remote_addr = h_va(1024 + 8);
	w->u.rdma.rkey = mw_b;
	h_sge(w, h_va(0), 200, la);
	h_post_send(&p->a);
	h_post_recv(&p->b, 61, 1, &rs);
	w = h_swqe(&p->a);
	w->opcode = WN_QUEUE_WR_SEND_WITH_INV;
	w->ex.invalidate_rkey = mw_b;
	h_sge(w, h_va(0), 5, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	assert_memory_equal(p->b.buf + 1024 + 8, p->a.buf, 200);
	assert_true(h_poll(&p->b.rcq_c, &e));
	assert_int_equal(e.wr_id, 61);
	assert_int_not_equal(e.flags & WN_QUEUE_WC_F_WITH_INV, 0);
	assert_int_equal(e.invalidated_rkey, mw_b);
	assert_int_equal(wn_mem_check(p->b.mem, mw_b, h_va(1024), 8, WN_MEM_ACCESS_REMOTE_WRITE,
				      p->b.pd, 2, NULL), WN_MEM_E_INVALID_STAG);
	/* invalidating a plain MR is refused */
	h_post_recv(&p->b, 62, 1, &rs);
	w = h_swqe(&p->a);
	w->opcode = WN_QUEUE_WR_SEND_WITH_INV;
	w->ex.invalidate_rkey = lb;
	h_sge(w, h_va(0), 5, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	assert_int_equal(p->b.term_sent.layer, 0);
	assert_int_equal(p->b.term_sent.etype, 1);
	assert_int_equal(p->b.term_sent.code, 0x09);
	assert_int_equal(wn_mem_check(p->b.mem, lb, h_va(0), 8, WN_MEM_ACCESS_REMOTE_WRITE,
				      p->b.pd, 2, NULL), WN_MEM_OK);
}

/* Fast-register through a WQE, remote Write into it, local invalidate, Write refused. */
static void
test_fast_reg_local_inv(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW), fr, fr2;
	struct wn_queue_swqe *w;

	assert_int_equal(wn_mem_frmr_alloc(p->b.mem, p->b.pd, p->b.buf + 8192, 8192, 1, &fr), 0);
	fr2 = wn_mem_stag(wn_mem_stag_index(fr), 2);
	w = h_swqe(&p->b);
	w->wr_id = 70;
	w->opcode = WN_QUEUE_WR_FAST_REG;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.fast_reg.iova = 0x900000;
	w->u.fast_reg.length = 1024;
	w->u.fast_reg.offset = 512;
	w->u.fast_reg.stag = fr2;
	w->u.fast_reg.access = RW;
	h_post_send(&p->b);
	h_pump(&p->a, &p->b);
	expect_cqe(&p->b.scq_c, 70, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_FAST_REG, 0);
	h_fill(p->a.buf, 4096, 14);
	w = h_swqe(&p->a);
	w->opcode = WN_QUEUE_WR_RDMA_WRITE;
	w->u.rdma.remote_addr = 0x900000 + 10;
	w->u.rdma.rkey = fr2;
	h_sge(w, h_va(0), 300, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	assert_memory_equal(p->b.buf + 8192 + 512 + 10, p->a.buf, 300);
	w = h_swqe(&p->b);
	w->wr_id = 71;
	w->opcode = WN_QUEUE_WR_LOCAL_INV;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.local_inv.invalidate_stag = fr2;
	h_post_send(&p->b);
	h_pump(&p->a, &p->b);
	expect_cqe(&p->b.scq_c, 71, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_LOCAL_INV, 0);
	write_violation(p, fr2, 0x900000, 8, 1, 1, 0x00);
}

/* A bad lkey: the WQE completes with a local protection error, a Terminate (0/0/0) goes
 * out instead of the message, later WQEs are flushed at disconnect. */
static void
test_local_protection_error(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW);
	struct wn_queue_swqe *w;
	struct wn_queue_cqe e;

	w = h_swqe(&p->a);
	w->wr_id = 80;
	w->opcode = WN_QUEUE_WR_SEND;
	h_sge(w, h_va(0), 10, la ^ 0x5500);
	h_post_send(&p->a);
	w = h_swqe(&p->a);
	w->wr_id = 81;
	w->opcode = WN_QUEUE_WR_SEND;
	h_sge(w, h_va(0), 10, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	assert_true(h_poll(&p->a.scq_c, &e));
	assert_int_equal(e.wr_id, 80);
	assert_int_equal(e.status, WN_QUEUE_WC_LOC_PROT_ERR);
	assert_int_equal(p->b.n_term_recv, 1);
	assert_int_equal(p->b.term_recv.layer, 0);
	assert_int_equal(p->b.term_recv.etype, 0);
	expect_no_cqe(&p->b.rcq_c);
	wn_rnic_qp_disconnect(p->a.qp);
	assert_true(h_poll(&p->a.scq_c, &e));
	assert_int_equal(e.wr_id, 81);
	assert_int_equal(e.status, WN_QUEUE_WC_WR_FLUSH_ERR);
	assert_true(wn_queue_status(&p->a.sq_c) & WN_QUEUE_ST_ERROR);
}

/* Disconnect with work queued everywhere: SQ in order, then every posted receive. */
static void
test_disconnect_flush(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW);
	struct wn_queue_sge rs = { h_va(0), 64, la };
	struct wn_queue_cqe e;

	for (int i = 0; i < 3; i++) {
		struct wn_queue_swqe *w = h_swqe(&p->a);

		w->wr_id = 90 + i;
		w->opcode = WN_QUEUE_WR_SEND;
		h_sge(w, h_va(0), 10, la);
		h_post_send(&p->a);
		h_post_recv(&p->a, 95 + i, 1, &rs);
	}
	wn_rnic_qp_disconnect(p->a.qp);
	for (int i = 0; i < 3; i++) {
		assert_true(h_poll(&p->a.scq_c, &e));
		assert_int_equal(e.wr_id, 90 + i);
		assert_int_equal(e.status, WN_QUEUE_WC_WR_FLUSH_ERR);
		assert_true(h_poll(&p->a.rcq_c, &e));
		assert_int_equal(e.wr_id, 95 + i);
		assert_int_equal(e.status, WN_QUEUE_WC_WR_FLUSH_ERR);
		assert_int_equal(e.opcode, WN_QUEUE_WC_RECV);
	}
	expect_no_cqe(&p->a.scq_c);
	assert_int_equal(wn_rnic_tx_poll(p->a.qp, 32), 0);
	assert_int_equal(p->a.n_out, 0);

	/* posted in Error: flushed by the next wn_rnic_qp_flush(), in order */
	assert_int_equal(wn_rnic_qp_flush(p->a.qp), 0);
	for (int i = 0; i < 2; i++) {
		struct wn_queue_swqe *w = h_swqe(&p->a);

		w->wr_id = 70 + i;
		w->opcode = WN_QUEUE_WR_SEND;
		h_sge(w, h_va(0), 10, la);
		h_post_send(&p->a);
		h_post_recv(&p->a, 75 + i, 1, &rs);
	}
	assert_int_equal(wn_rnic_qp_flush(p->a.qp), 4);
	for (int i = 0; i < 2; i++) {
		assert_true(h_poll(&p->a.scq_c, &e));
		assert_int_equal(e.wr_id, 70 + i);
		assert_int_equal(e.status, WN_QUEUE_WC_WR_FLUSH_ERR);
		assert_true(h_poll(&p->a.rcq_c, &e));
		assert_int_equal(e.wr_id, 75 + i);
		assert_int_equal(e.status, WN_QUEUE_WC_WR_FLUSH_ERR);
	}
	assert_int_equal(p->a.n_out, 0);
	struct wn_rnic_stats st;
	wn_rnic_qp_stats(p->a.qp, &st);
	assert_int_equal(st.wqe_flushed, 10);
	/* not in Error: nothing to flush */
	assert_int_equal(wn_rnic_qp_flush(p->b.qp), 0);
}

/* The tx callback refusing ULPDUs: the same ULPDU is offered again, nothing lost. */
static void
test_tx_backpressure(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 8192, RW), rb = h_reg(&p->b, 0, 8192, RW);
	struct wn_queue_swqe *w;

	h_fill(p->a.buf, 8192, 15);
	w = h_swqe(&p->a);
	w->wr_id = 1;
	w->opcode = WN_QUEUE_WR_RDMA_WRITE;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	w->u.rdma.remote_addr = h_va(0);
	w->u.rdma.rkey = rb;
	h_sge(w, h_va(0), 1000, la);
	h_post_send(&p->a);
	for (int i = 0; i < 20; i++) {
		p->a.tx_refuse = 1;
		wn_rnic_tx_poll(p->a.qp, 1);
		wn_rnic_tx_poll(p->a.qp, 1);
	}
	h_pump(&p->a, &p->b);
	expect_cqe(&p->a.scq_c, 1, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RDMA_WRITE, 1000);
	assert_memory_equal(p->b.buf, p->a.buf, 1000);
}

static int
setup_rtr(void **state)
{
	struct h_opts oa = { .mulpdu = 256, .ord = 4, .ird = 4, .rtr_recv = WN_RNIC_RTR_READ };
	struct h_opts ob = { .mulpdu = 256, .ord = 4, .ird = 4,
			     .rtr_recv = WN_RNIC_RTR_SEND | WN_RNIC_RTR_READ };

	return setup_opts(state, &oa, &ob);
}

/* RFC 6581 RTR: a zero-length Send absorbed without a receive; a zero-length Read answered
 * and its response absorbed; normal traffic continues with the right MSNs. */
static void
test_rtr(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW), lb = h_reg(&p->b, 0, 4096, RW);
	struct wn_queue_sge rs = { h_va(0), 64, lb };
	struct wn_queue_swqe *w;

	assert_int_equal(wn_rnic_send_rtr(p->a.qp, WN_RNIC_RTR_SEND), 0);
	h_pump(&p->a, &p->b);
	assert_int_equal(p->b.n_rtr, 1);
	expect_no_cqe(&p->b.rcq_c);
	h_post_recv(&p->b, 5, 1, &rs);
	w = h_swqe(&p->a);
	w->wr_id = 6;
	w->opcode = WN_QUEUE_WR_SEND;
	w->flags = WN_QUEUE_SEND_SIGNALED;
	h_sge(w, h_va(0), 33, la);
	h_post_send(&p->a);
	h_pump(&p->a, &p->b);
	expect_cqe(&p->b.rcq_c, 5, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RECV, 33);
	expect_cqe(&p->a.scq_c, 6, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_SEND, 33);
	/* B's RTR is a zero-length Read: A answers, B absorbs the response */
	assert_int_equal(wn_rnic_send_rtr(p->b.qp, WN_RNIC_RTR_READ), 0);
	h_pump(&p->a, &p->b);
	assert_int_equal(p->a.n_rtr, 1);
	assert_int_equal(p->b.n_rtr, 2);
	expect_no_cqe(&p->b.scq_c);
	assert_true(wn_rnic_qp_idle(p->b.qp));
	assert_int_equal(wn_rnic_qp_state(p->b.qp), WN_RNIC_QPS_RTS);
}

/* Graceful close: nothing new starts; in-flight work finishes. */
static void
test_close(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW);
	struct wn_queue_swqe *w = h_swqe(&p->a);
	struct wn_queue_cqe e;

	w->wr_id = 1;
	w->opcode = WN_QUEUE_WR_SEND;
	h_sge(w, h_va(0), 10, la);
	h_post_send(&p->a);
	assert_int_equal(wn_rnic_qp_state_ibv(wn_rnic_qp_state(p->a.qp)), 3);
	assert_int_equal(wn_rnic_qp_close(p->a.qp), 0);
	assert_int_equal(wn_rnic_qp_state_ibv(wn_rnic_qp_state(p->a.qp)), 4);
	assert_int_equal(wn_rnic_qp_close(p->a.qp), -EINVAL);
	assert_int_equal(wn_rnic_tx_poll(p->a.qp, 8), 0);
	assert_true(wn_rnic_qp_idle(p->a.qp));
	wn_rnic_qp_disconnect(p->a.qp);
	assert_true(h_poll(&p->a.scq_c, &e));
	assert_int_equal(e.status, WN_QUEUE_WC_WR_FLUSH_ERR);
	assert_int_equal(wn_rnic_qp_state_ibv(wn_rnic_qp_state(p->a.qp)), 6);
	assert_int_equal(wn_rnic_qp_start(p->a.qp), -EINVAL);
}

/* Inject one crafted ULPDU into B; @return B's Terminate cause via its event. */
static void
raw_expect(struct pair *p, const uint8_t *u, int n, int layer, int etype, int code)
{
	assert_true(n > 0);
	assert_int_equal(wn_rnic_rx(p->b.qp, u, (size_t)n), -EPROTO);
	wn_rnic_tx_poll(p->b.qp, 8);
	assert_int_equal(p->b.n_term_sent, 1);
	assert_int_equal(p->b.term_sent.layer, layer);
	assert_int_equal(p->b.term_sent.etype, etype);
	assert_int_equal(p->b.term_sent.code, code);
	assert_int_equal(wn_rnic_qp_state(p->b.qp), WN_RNIC_QPS_TERMINATE);
}

static void
test_raw_read_req_sink_wrap(void **state)
{
	struct pair *p = *state;
	uint32_t rb = h_reg(&p->b, 0, 4096, RW);
	struct wn_rdmap_read_req rr = { .sink_stag = 1, .sink_to = UINT64_MAX - 10, .size = 100,
					.src_stag = rb, .src_to = h_va(0) };
	uint8_t u[64];

	/* the Response would need sink TOs past 2^64 */
	raw_expect(p, u, wn_wire_rdmap_read_req_build(u, sizeof(u), 1, &rr), 0, 1, 0x04);
}

static void
test_raw_unexpected_read_resp(void **state)
{
	struct pair *p = *state;
	uint8_t u[64] = { 0 };
	int n = wn_wire_rdmap_read_resp_build(u, sizeof(u), 5, 0, true);

	/* no Read outstanding: RDMAP Remote Operation, unexpected opcode 0/2/0x06 */
	raw_expect(p, u, n + 4, 0, 2, 0x06);
}

static void
test_raw_send_bad_msn(void **state)
{
	struct pair *p = *state;
	uint32_t lb = h_reg(&p->b, 0, 4096, RW);
	struct wn_queue_sge rs = { h_va(0), 64, lb };
	uint8_t u[64] = { 0 };
	int n = wn_wire_rdmap_send_build(u, sizeof(u), WN_RDMAP_SEND, 0, 7, 0, true);

	h_post_recv(&p->b, 1, 1, &rs);
	/* MSN 7 where 1 is expected: DDP untagged "MSN range not valid" 1/2/0x03 */
	raw_expect(p, u, n + 8, 1, 2, 0x03);
	for (int i = 0; i < 64; i++)
		assert_int_equal(p->b.buf[i], 0);
}

static void
test_raw_atomic_no_rights(void **state)
{
	struct pair *p = *state;
	uint32_t rb = h_reg(&p->b, 0, 4096, RW); /* no remote atomic */
	struct wn_rdmap_atomic_req ar = { .aopcode = WN_RDMAP_AOP_FETCH_ADD, .stag = rb,
					  .to = h_va(8), .add_swap = 1 };
	uint8_t u[96];

	raw_expect(p, u, wn_wire_rdmap_atomic_req_build(u, sizeof(u), 1, &ar), 0, 1, 0x02);
	for (int i = 0; i < 64; i++)
		assert_int_equal(p->b.buf[i], 0);
}

struct cpu_adder {
	uint64_t *target;
	volatile int stop;
	uint64_t added;
};

static void *
cpu_add(void *arg)
{
	struct cpu_adder *c = arg;

	while (!c->stop) {
		__atomic_fetch_add(c->target, 1, __ATOMIC_SEQ_CST);
		c->added++;
	}
	return NULL;
}

/*
 * Atomics are atomic (atomic_cap IBV_ATOMIC_HCA): FetchAdds executed by B's engine while
 * another thread (another lcore's QP, or the client with atomic instructions) adds to the
 * same octets lose no update of either.
 */
static void
test_atomic_vs_thread(void **state)
{
	const unsigned int n = 200000;
	struct pair *p = *state;
	uint32_t rb = h_reg(&p->b, 0, 4096, ALL);
	struct wn_rdmap_atomic_req ar = { .aopcode = WN_RDMAP_AOP_FETCH_ADD, .stag = rb,
					  .to = h_va(64), .add_swap = 1,
					  /* one 64-bit field: an add, computed bit by bit */
					  .add_swap_mask = 1ull << 63 };
	struct cpu_adder c = { .target = (uint64_t *)(void *)(p->b.buf + 64) };
	pthread_t t;
	uint8_t u[96];

	assert_int_equal(pthread_create(&t, NULL, cpu_add, &c), 0);
	while (__atomic_load_n(c.target, __ATOMIC_SEQ_CST) == 0)
		; /* the thread is adding */
	for (unsigned int i = 0; i < n; i++) {
		ar.req_id = i;
		assert_int_equal(wn_rnic_rx(p->b.qp, u,
					    (size_t)wn_wire_rdmap_atomic_req_build(u, sizeof(u),
										   i + 1, &ar)),
				 0);
		wn_rnic_tx_poll(p->b.qp, 8);
		assert_int_equal(p->b.n_out, 1); /* the Atomic Response */
		free(p->b.out[0].b);
		p->b.n_out = 0;
	}
	c.stop = 1;
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(p->b.n_term_sent, 0);
	assert_int_equal(__atomic_load_n(c.target, __ATOMIC_SEQ_CST), c.added + n);
}

/* A completed send WR's SQ slot is free by the time its CQE can be polled (verbs). */
static void
test_sq_slot_free_at_completion(void **state)
{
	struct pair *p = *state;
	uint32_t rb = h_reg(&p->b, 0, 65536, RW);
	struct wn_queue_swqe *w;
	int64_t before;

	/* fill the SQ to the last slot with signaled Writes */
	before = wn_queue_prod_space(&p->a.sq_c);
	for (int64_t i = 0; i < before; i++) {
		w = h_swqe(&p->a);
		w->wr_id = (uint64_t)i;
		w->opcode = WN_QUEUE_WR_RDMA_WRITE;
		w->flags = WN_QUEUE_SEND_SIGNALED | WN_QUEUE_SEND_INLINE;
		w->inline_len = 8;
		w->u.rdma.remote_addr = h_va(0);
		w->u.rdma.rkey = rb;
		h_post_send(&p->a);
	}
	assert_int_equal(wn_queue_prod_space(&p->a.sq_c), 0);
	wn_queue_cq_arm(&p->a.scq_c, false);
	p->a.sq_space_at_notify = -1;
	h_pump(&p->a, &p->b);
	assert_true(p->a.n_notify >= 1);
	/* when the first CQE became visible its slot was already back */
	assert_true(p->a.sq_space_at_notify >= 1);
}

/* An MPA failure below the engine (RFC 5044 §8) is reported with an LLP Terminate. */
static void
test_llp_terminate(void **state)
{
	struct pair *p = *state;

	assert_int_equal(wn_rnic_terminate(p->a.qp, WN_TERM_LAYER_LLP, WN_TERM_LLP_MPA,
					   WN_MPA_ERR_CRC), 0);
	assert_int_equal(wn_rnic_qp_state(p->a.qp), WN_RNIC_QPS_TERMINATE);
	/* only the first error of a stream is reported */
	assert_int_equal(wn_rnic_terminate(p->a.qp, WN_TERM_LAYER_LLP, WN_TERM_LLP_MPA,
					   WN_MPA_ERR_MARKER), 0);
	h_pump(&p->a, &p->b);
	assert_int_equal(p->a.n_term_sent, 1);
	assert_int_equal(p->b.n_term_recv, 1);
	assert_int_equal(p->b.term_recv.layer, WN_TERM_LAYER_LLP);
	assert_int_equal(p->b.term_recv.etype, WN_TERM_LLP_MPA);
	assert_int_equal(p->b.term_recv.code, WN_MPA_ERR_CRC);
}

static void
test_llp_terminate_needs_stream(void **state)
{
	struct pair *p = *state;

	wn_rnic_qp_disconnect(p->a.qp);
	assert_int_equal(wn_rnic_terminate(p->a.qp, WN_TERM_LAYER_LLP, 0, 1), -EINVAL);
	assert_int_equal(wn_rnic_terminate(NULL, WN_TERM_LAYER_LLP, 0, 1), -EINVAL);
}

static void
test_raw_bad_version(void **state)
{
	struct pair *p = *state;
	uint8_t u[64] = { 0 };
	int n = wn_wire_rdmap_write_build(u, sizeof(u), 1, 0, true);

	u[1] = (uint8_t)((u[1] & 0x3f) | 0x80); /* RDMAP version 2 */
	/* RFC 5040 §7.2: invalid RDMAP version 0/2/0x05 */
	raw_expect(p, u, n + 4, 0, 2, 0x05);
}

/* A QP on a shared receive queue: receives come from the SRQ, and a disconnect leaves the
 * SRQ's WQEs in the SRQ (only the one in use is flushed). */
static void
test_srq(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW), lb = h_reg(&p->b, 0, 4096, RW);
	struct wn_queue_ring srq_e, srq_c;
	struct wn_rnic_qp_conf c = { 0 };
	struct wn_rnic_qp *qp;
	struct wn_queue_rwqe *rw;
	struct wn_queue_sge *g;
	struct wn_queue_swqe *w;
	struct wn_queue_cqe e;
	void *m = h_ring(WN_QUEUE_KIND_SRQ, 8, 1, 0, &srq_e, &srq_c, true);

	/* B's QP becomes an SRQ QP */
	c.qpn = 2;
	c.pd = p->b.pd;
	c.mem = p->b.mem;
	c.sq = &p->b.sq_e;
	c.srq = &srq_e;
	c.scq = &p->b.scq_e;
	c.rcq = &p->b.rcq_e;
	c.mulpdu = 128;
	c.ord = 4;
	c.ird = 4;
	c.llp = &p->b.llp;
	c.event = h_event;
	c.event_arg = &p->b;
	c.rq = &p->b.rq_e;
	assert_null(wn_rnic_qp_create(&c)); /* RQ and SRQ: one or the other */
	c.rq = NULL;
	qp = wn_rnic_qp_create(&c);
	assert_non_null(qp);
	wn_rnic_qp_destroy(p->b.qp);
	p->b.qp = qp;
	assert_int_equal(wn_rnic_qp_start(qp), 0);
	for (int i = 0; i < 3; i++) {
		rw = wn_queue_prod_slot(&srq_c, 0);
		rw->wr_id = 500 + i;
		rw->num_sge = 1;
		g = (struct wn_queue_sge *)(rw + 1);
		*g = (struct wn_queue_sge){ h_va(1000 * i), 500, lb };
		wn_queue_prod_commit(&srq_c, 1);
	}
	wn_queue_srq_limit_arm(&srq_c, 3); /* fires when fewer than 3 remain */
	h_fill(p->a.buf, 4096, 16);
	w = h_swqe(&p->a);
	w->opcode = WN_QUEUE_WR_SEND;
	h_sge(w, h_va(0), 300, la);
	h_post_send(&p->a);
	/* a second message, of which B sees only the first segment */
	w = h_swqe(&p->a);
	w->opcode = WN_QUEUE_WR_SEND;
	h_sge(w, h_va(0), 300, la);
	h_post_send(&p->a);
	wn_rnic_tx_poll(p->a.qp, 4);
	for (unsigned int i = 0; i < 4; i++)
		wn_rnic_rx(p->b.qp, p->a.out[i].b, p->a.out[i].len);
	expect_cqe(&p->b.rcq_c, 500, WN_QUEUE_WC_SUCCESS, WN_QUEUE_WC_RECV, 300);
	assert_memory_equal(p->b.buf, p->a.buf, 300);
	/* two WQEs taken, one left: the limit fired once and disarmed itself */
	assert_int_equal(p->b.n_srq_limit, 1);
	assert_int_equal(atomic_load(&srq_c.hdr->srq_limit), 0);
	wn_rnic_qp_disconnect(p->b.qp);
	assert_true(h_poll(&p->b.rcq_c, &e));
	assert_int_equal(e.wr_id, 501);
	assert_int_equal(e.status, WN_QUEUE_WC_WR_FLUSH_ERR);
	expect_no_cqe(&p->b.rcq_c);
	assert_int_equal(wn_queue_cons_avail(&srq_e), 1); /* 502 stays for the other QPs */
	free(m);
}

/* A client WQE whose remote range wraps 2^64 is refused locally, nothing goes out. */
static void
test_write_remote_wrap_refused(void **state)
{
	struct pair *p = *state;
	uint32_t la = h_reg(&p->a, 0, 4096, RW);
	struct wn_queue_swqe *w = h_swqe(&p->a);
	struct wn_queue_cqe e;

	w->wr_id = 42;
	w->opcode = WN_QUEUE_WR_RDMA_WRITE;
	w->u.rdma.remote_addr = UINT64_MAX - 5;
	w->u.rdma.rkey = 0x100;
	h_sge(w, h_va(0), 100, la);
	h_post_send(&p->a);
	wn_rnic_tx_poll(p->a.qp, 8);
	assert_true(h_poll(&p->a.scq_c, &e));
	assert_int_equal(e.wr_id, 42);
	assert_int_equal(e.status, WN_QUEUE_WC_LOC_QP_OP_ERR);
	/* only the Terminate (local catastrophic) left A */
	assert_int_equal(p->a.n_out, 1);
	assert_int_equal(p->a.n_term_sent, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_send_segmented, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zc_cqe_held_until_release, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zc_read_resp_and_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_inline_solicited, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_with_imm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_with_imm, setup, teardown),
		cmocka_unit_test_setup_teardown(test_raw_imm_announced_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_with_imm_rnr, setup_rnr, teardown),
		cmocka_unit_test_setup_teardown(test_send_with_imm_needs_7306, setup_no7306,
						teardown),
		cmocka_unit_test_setup_teardown(test_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_zero_no_sge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_completion_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ord_limit, setup_ord2, teardown),
		cmocka_unit_test_setup_teardown(test_ird_limit, setup_ird1, teardown),
		cmocka_unit_test_setup_teardown(test_atomics, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_no_rights, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_out_of_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_invalid_stag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_other_pd, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_violation_terminate_contents, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_send_no_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_rnr_hold, setup_rnr, teardown),
		cmocka_unit_test_setup_teardown(test_ib_rc_terminate_completes, setup_ib_rc,
						teardown),
		cmocka_unit_test_setup_teardown(test_ib_rc_qp_rights, setup_ib_rc_read_only,
						teardown),
		cmocka_unit_test_setup_teardown(test_ooo_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ooo_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_too_long, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_with_invalidate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fast_reg_local_inv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_local_protection_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_disconnect_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tx_backpressure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rtr, setup_rtr, teardown),
		cmocka_unit_test_setup_teardown(test_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_srq, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_remote_wrap_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_raw_read_req_sink_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_raw_unexpected_read_resp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_raw_send_bad_msn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_raw_atomic_no_rights, setup, teardown),
		cmocka_unit_test_setup_teardown(test_atomic_vs_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sq_slot_free_at_completion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_llp_terminate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_llp_terminate_needs_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_raw_bad_version, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
