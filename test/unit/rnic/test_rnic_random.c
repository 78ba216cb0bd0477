/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/rnic randomized back-to-back workload (fixed seeds, so reproducible): batches of up to
 * 8 mixed Sends, Writes, Writes with Immediate, Reads and Atomics of random sizes and SGE
 * splits, at several MULPDUs and ORD/IRD settings. After each batch every octet moved is
 * compared, the send CQEs must come in posting order and the receive CQEs in Send order.
 * Catches segmentation, gather/scatter, ORD stall/resume and completion ordering bugs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "harness.h"

#define SLOT 4096
#define SLOTS 8
#define ALL 0x1f

static uint64_t rng;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

enum { OP_SEND, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_FADD, OP_CSWAP, OP_COUNT };

struct op {
	int kind;
	uint32_t len;
	uint64_t before; /* atomics: target value before */
	uint64_t arg;
};

static void
run(uint64_t seed, uint32_t mulpdu, uint32_t ord)
{
	struct h_opts o = { .mulpdu = mulpdu, .ord = ord, .ird = 8 };
	static struct h_side a, b;
	uint32_t la, rb;
	unsigned int batches = 150;

	rng = seed;
	h_side_init(&a, "A", 1, &o);
	h_side_init(&b, "B", 2, &o);
	la = h_reg(&a, 0, SLOT * SLOTS, ALL);
	rb = h_reg(&b, 0, SLOT * SLOTS, ALL);
	for (unsigned int bt = 0; bt < batches; bt++) {
		struct op ops[SLOTS];
		unsigned int n = 1 + rnd(SLOTS), n_recv = 0;
		struct wn_queue_cqe e;

		h_fill(a.buf, SLOT * SLOTS, bt * 2 + 1);
		h_fill(b.buf, SLOT * SLOTS, bt * 2 + 2);
		for (unsigned int i = 0; i < n; i++) {
			struct op *op = &ops[i];
			struct wn_queue_swqe *w = h_swqe(&a);
			uint32_t base = i * SLOT;

			op->kind = (int)rnd(OP_COUNT);
			op->len = rnd(4) == 0 ? rnd(16) : rnd(SLOT - 64);
			w->wr_id = bt * 100 + i;
			w->flags = WN_QUEUE_SEND_SIGNALED;
			switch (op->kind) {
			case OP_SEND: {
				struct wn_queue_sge rs[2] = {
					{ h_va(base), op->len / 3, rb },
					{ h_va(base + op->len / 3 + 8), SLOT - 8 - op->len / 3, rb },
				};

				h_post_recv(&b, w->wr_id, 2, rs);
				w->opcode = WN_QUEUE_WR_SEND;
				n_recv++;
				break;
			}
			case OP_WRITE_IMM: {
				struct wn_queue_sge rs = { h_va(base), 8, rb };

				h_post_recv(&b, w->wr_id, 1, &rs);
				n_recv++;
				w->ex.imm_data = (uint32_t)w->wr_id;
			}
				/* fall through */
			case OP_WRITE:
				w->opcode = op->kind == OP_WRITE ? WN_QUEUE_WR_RDMA_WRITE :
					    WN_QUEUE_WR_RDMA_WRITE_WITH_IMM;
				w->u.rdma.remote_addr = h_va(base + 32);
				w->u.rdma.rkey = rb;
				break;
			case OP_READ:
				w->opcode = WN_QUEUE_WR_RDMA_READ;
				w->u.rdma.remote_addr = h_va(base + 16);
				w->u.rdma.rkey = rb;
				h_sge(w, h_va(base + 48), op->len, la);
				break;
			default:
				op->len = 8;
				memcpy(&op->before, b.buf + base + 8, 8);
				op->arg = rnd(2) ? op->before : rng;
				w->opcode = op->kind == OP_FADD ? WN_QUEUE_WR_ATOMIC_FETCH_AND_ADD :
					    WN_QUEUE_WR_ATOMIC_CMP_AND_SWP;
				w->u.atomic.remote_addr = h_va(base + 8);
				w->u.atomic.rkey = rb;
				w->u.atomic.compare_add = op->arg;
				w->u.atomic.swap = ~op->arg;
				h_sge(w, h_va(base + SLOT - 8), 8, la);
				break;
			}
			if (op->kind <= OP_WRITE_IMM) {
				/* source split over up to three SGEs */
				uint32_t c1 = op->len ? rnd(op->len) : 0, c2 = c1 + rnd(op->len - c1 + 1);

				h_sge(w, h_va(base), c1, la);
				h_sge(w, h_va(base + c1 + 5), c2 - c1, la);
				h_sge(w, h_va(base + c2 + 10), op->len - c2, la);
			}
			h_post_send(&a);
		}
		h_pump(&a, &b);
		assert_int_equal(wn_rnic_qp_state(a.qp), WN_RNIC_QPS_RTS);
		assert_int_equal(wn_rnic_qp_state(b.qp), WN_RNIC_QPS_RTS);
		for (unsigned int i = 0; i < n; i++) {
			struct op *op = &ops[i];
			uint32_t base = i * SLOT;
			uint8_t src[SLOT];
			uint32_t c = 0;
			const struct wn_queue_sge *g;

			assert_true(h_poll(&a.scq_c, &e));
			assert_int_equal(e.wr_id, bt * 100 + i); /* SQ order */
			assert_int_equal(e.status, WN_QUEUE_WC_SUCCESS);
			assert_int_equal(e.byte_len, op->len);
			if (op->kind <= OP_WRITE_IMM) {
				/* reassemble what the three SGEs gathered */
				g = (const struct wn_queue_sge *)((const struct wn_queue_swqe *)
					wn_queue_entry(&a.sq_c, a.sq_c.head - n + i) + 1);
				for (int k = 0; k < 3; k++) {
					memcpy(src + c, a.buf + (g[k].addr - h_va(0)), g[k].length);
					c += g[k].length;
				}
				assert_int_equal(c, op->len);
			}
			switch (op->kind) {
			case OP_SEND:
				assert_memory_equal(b.buf + base, src, op->len / 3);
				assert_memory_equal(b.buf + base + op->len / 3 + 8, src + op->len / 3,
						    op->len - op->len / 3);
				break;
			case OP_WRITE:
			case OP_WRITE_IMM:
				assert_memory_equal(b.buf + base + 32, src, op->len);
				break;
			case OP_READ:
				assert_memory_equal(a.buf + base + 48, b.buf + base + 16, op->len);
				break;
			case OP_FADD:
			case OP_CSWAP: {
				uint64_t got, now, want;

				memcpy(&got, a.buf + base + SLOT - 8, 8);
				memcpy(&now, b.buf + base + 8, 8);
				want = op->kind == OP_FADD ? op->before + op->arg :
				       (op->arg == op->before ? ~op->arg : op->before);
				assert_int_equal(got, op->before);
				assert_int_equal(now, want);
				break;
			}
			}
		}
		for (unsigned int i = 0, r = 0; i < n; i++) {
			if (ops[i].kind != OP_SEND && ops[i].kind != OP_WRITE_IMM)
				continue;
			assert_true(h_poll(&b.rcq_c, &e));
			assert_int_equal(e.wr_id, bt * 100 + i); /* Send order */
			assert_int_equal(e.byte_len, ops[i].len);
			r++;
			(void)r;
		}
		(void)n_recv;
		assert_false(h_poll(&b.rcq_c, &e));
		assert_true(h_guards_intact(&a));
		assert_true(h_guards_intact(&b));
	}
	h_side_fini(&a);
	h_side_fini(&b);
}

static void
test_random_mulpdu_128_ord_1(void **state)
{
	(void)state;
	run(0x9e3779b97f4a7c15ull, 128, 1);
}

static void
test_random_mulpdu_300_ord_3(void **state)
{
	(void)state;
	run(0x0123456789abcdefull, 300, 3);
}

static void
test_random_mulpdu_1448_ord_8(void **state)
{
	(void)state;
	run(0xfeedfacecafebeefull, 1448, 8);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_mulpdu_128_ord_1),
		cmocka_unit_test(test_random_mulpdu_300_ord_3),
		cmocka_unit_test(test_random_mulpdu_1448_ord_8),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
