/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/queue ABI: sizing, init/attach validation, wrap of the free-running indices, WQE
 * validation, CQ arming, and a two-thread producer/consumer stress that detects a lost
 * entry, a torn entry (missing release/acquire), a wrap bug or a lost doorbell (hang).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include "wn_queue.h"

static void *
ring_alloc(uint64_t size)
{
	void *p = NULL;

	assert_int_equal(posix_memalign(&p, 4096, size), 0);
	memset(p, 0xa5, size);
	return p;
}

static void
test_sizes(void **state)
{
	(void)state;
	assert_int_equal(wn_queue_entry_stride(WN_QUEUE_KIND_CQ, 0, 0), 32);
	/* 64 header + 4 SGEs = 128; inline 200 wins over 4 SGEs -> 264 -> 320 */
	assert_int_equal(wn_queue_entry_stride(WN_QUEUE_KIND_SQ, 4, 0), 128);
	assert_int_equal(wn_queue_entry_stride(WN_QUEUE_KIND_SQ, 4, 200), 320);
	assert_int_equal(wn_queue_entry_stride(WN_QUEUE_KIND_RQ, 3, 0), 64);
	assert_int_equal(wn_queue_entry_stride(WN_QUEUE_KIND_SQ, WN_QUEUE_MAX_SGE + 1, 0), 0);
	assert_int_equal(wn_queue_ring_size(WN_QUEUE_KIND_CQ, 16, 0, 0), 256 + 16 * 32);
	assert_int_equal(wn_queue_ring_size(WN_QUEUE_KIND_CQ, 12, 0, 0), 0);
	assert_int_equal(wn_queue_ring_size(WN_QUEUE_KIND_CQ, 0, 0, 0), 0);
	assert_int_equal(wn_queue_ring_size(WN_QUEUE_KIND_CQ, WN_QUEUE_MAX_DEPTH * 2, 0, 0), 0);
	/* QP: SQ 256 + 8 * 128 = 1280 -> RQ at 4096; RQ 256 + 8 * 32 -> one page */
	assert_int_equal(wn_queue_qp_rq_offset(8, 4, 0), 4096);
	assert_int_equal(wn_queue_qp_size(8, 4, 0, 8, 1), 8192);
	assert_int_equal(wn_queue_qp_size(8, 4, 0, 0, 1), 4096);
	assert_int_equal(wn_queue_qp_size(8, 4, 0, 7, 1), 0);
}

static void
test_init_attach(void **state)
{
	struct wn_queue_ring r;
	uint64_t size = wn_queue_qp_size(16, 2, 64, 32, 2);
	uint8_t *mem = ring_alloc(size);
	struct wn_queue_ring_hdr *h = (struct wn_queue_ring_hdr *)mem;

	(void)state;
	assert_int_equal(wn_queue_ring_init(mem + 8, WN_QUEUE_KIND_SQ, 16, 2, 64), -EINVAL);
	assert_int_equal(wn_queue_qp_init(mem, 16, 2, 64, 32, 2), 0);
	assert_int_equal(wn_queue_prod_attach(&r, mem, size, WN_QUEUE_KIND_SQ), 0);
	assert_int_equal(r.depth, 16);
	assert_int_equal(r.max_inline, 64);
	assert_int_equal(wn_queue_prod_space(&r), 16);
	/* wrong kind, short mapping, corrupted geometry are refused */
	assert_int_equal(wn_queue_cons_attach(&r, mem, size, WN_QUEUE_KIND_RQ), -EPROTO);
	assert_int_equal(wn_queue_cons_attach(&r, mem, 512, WN_QUEUE_KIND_SQ), -EPROTO);
	assert_int_equal(wn_queue_cons_attach(&r, mem + wn_queue_qp_rq_offset(16, 2, 64), size -
					      wn_queue_qp_rq_offset(16, 2, 64), WN_QUEUE_KIND_RQ),
			 0);
	assert_int_equal(r.depth, 32);
	h->depth = 24;
	assert_int_equal(wn_queue_cons_attach(&r, mem, size, WN_QUEUE_KIND_SQ), -EPROTO);
	h->depth = 16;
	h->stride = 64;
	assert_int_equal(wn_queue_cons_attach(&r, mem, size, WN_QUEUE_KIND_SQ), -EPROTO);
	h->stride = wn_queue_entry_stride(WN_QUEUE_KIND_SQ, 2, 64);
	h->magic = 0;
	assert_int_equal(wn_queue_cons_attach(&r, mem, size, WN_QUEUE_KIND_SQ), -EPROTO);
	free(mem);
}

/* Indices that start just below 2^32 must wrap without losing or duplicating entries. */
static void
test_index_wrap_and_full(void **state)
{
	uint64_t size = wn_queue_ring_size(WN_QUEUE_KIND_CQ, 4, 0, 0);
	void *mem = ring_alloc(size);
	struct wn_queue_ring p, c;
	uint32_t i, next = 0;

	(void)state;
	assert_int_equal(wn_queue_ring_init(mem, WN_QUEUE_KIND_CQ, 4, 0, 0), 0);
	atomic_store(&((struct wn_queue_ring_hdr *)mem)->prod, UINT32_MAX - 5);
	atomic_store(&((struct wn_queue_ring_hdr *)mem)->cons, UINT32_MAX - 5);
	assert_int_equal(wn_queue_prod_attach(&p, mem, size, WN_QUEUE_KIND_CQ), 0);
	assert_int_equal(wn_queue_cons_attach(&c, mem, size, WN_QUEUE_KIND_CQ), 0);
	for (i = 0; i < 5; i++) {
		uint32_t k, n = (uint32_t)wn_queue_prod_space(&p);

		assert_int_equal(n, 4);
		for (k = 0; k < n; k++)
			((struct wn_queue_cqe *)wn_queue_prod_slot(&p, k))->wr_id = next + k;
		wn_queue_prod_commit(&p, n);
		assert_int_equal(wn_queue_prod_space(&p), 0);
		assert_int_equal(wn_queue_cons_avail(&c), 4);
		for (k = 0; k < 4; k++)
			assert_int_equal(((struct wn_queue_cqe *)wn_queue_cons_slot(&c, k))->wr_id,
					 next + k);
		wn_queue_cons_release(&c, 4);
		next += 4;
	}
	assert_true(c.head < 100); /* really wrapped */
	/* an impossible peer index is a protocol error, never a huge count */
	atomic_store(&((struct wn_queue_ring_hdr *)mem)->prod, c.head + 5);
	assert_int_equal(wn_queue_cons_avail(&c), -EPROTO);
	atomic_store(&((struct wn_queue_ring_hdr *)mem)->cons, p.head - 9);
	assert_int_equal(wn_queue_prod_space(&p), -EPROTO);
	free(mem);
}

static void
test_doorbell_idle(void **state)
{
	uint64_t size = wn_queue_ring_size(WN_QUEUE_KIND_RQ, 8, 1, 0);
	void *mem = ring_alloc(size);
	struct wn_queue_ring p, c;

	(void)state;
	assert_int_equal(wn_queue_ring_init(mem, WN_QUEUE_KIND_RQ, 8, 1, 0), 0);
	assert_int_equal(wn_queue_prod_attach(&p, mem, size, WN_QUEUE_KIND_RQ), 0);
	assert_int_equal(wn_queue_cons_attach(&c, mem, size, WN_QUEUE_KIND_RQ), 0);
	/* consumer polling: no doorbell needed */
	assert_false(wn_queue_prod_commit(&p, 1));
	/* entries ready: the consumer may not sleep */
	assert_false(wn_queue_cons_idle_enter(&c));
	wn_queue_cons_release(&c, 1);
	assert_true(wn_queue_cons_idle_enter(&c));
	assert_true(wn_queue_prod_commit(&p, 1));
	wn_queue_prod_ring(&p);
	assert_int_equal(atomic_load(&c.hdr->doorbell), p.head);
	wn_queue_cons_idle_exit(&c);
	assert_false(wn_queue_prod_commit(&p, 1));
	free(mem);
}

static void
take_slot(void *arg, uint32_t slot)
{
	uint32_t *got = arg;

	got[got[0] + 1] = slot;
	got[0]++;
}

/*
 * Ready maps: a parked SQ is marked in the map of the lcore its ring names, at its slot;
 * taking reports each mark once (two levels: word and summary), nothing for a ring without
 * a slot or bell, and a slot in the last word of the map.
 */
static void
test_ready_map(void **state)
{
	uint64_t size = wn_queue_ring_size(WN_QUEUE_KIND_SQ, 8, 1, 0);
	void *mem = ring_alloc(size);
	struct wn_queue_ready_map *maps = calloc(2, sizeof(*maps));
	struct wn_queue_ring p, c;
	uint32_t got[8] = {0};

	(void)state;
	assert_non_null(maps);
	assert_int_equal(wn_queue_ring_init(mem, WN_QUEUE_KIND_SQ, 8, 1, 0), 0);
	assert_int_equal(wn_queue_prod_attach(&p, mem, size, WN_QUEUE_KIND_SQ), 0);
	assert_int_equal(wn_queue_cons_attach(&c, mem, size, WN_QUEUE_KIND_SQ), 0);
	/* no bell, no slot: nothing marked */
	wn_queue_ready_mark(&p, maps, 2);
	assert_int_equal(wn_queue_ready_take(&maps[0], take_slot, got), 0);
	/* lcore 1 (bell 2) parks the SQ at slot 4097 (+1) */
	wn_queue_cons_bell_set(&c, 2);
	wn_queue_cons_ready_set(&c, 4098);
	assert_true(wn_queue_cons_idle_enter(&c));
	assert_true(wn_queue_prod_commit(&p, 1));
	wn_queue_ready_mark(&p, maps, 2);
	wn_queue_ready_mark(&p, maps, 2); /* twice: reported once */
	assert_int_equal(wn_queue_ready_take(&maps[0], take_slot, got), 0);
	assert_int_equal(wn_queue_ready_take(&maps[1], take_slot, got), 1);
	assert_int_equal(got[1], 4097);
	assert_int_equal(wn_queue_ready_take(&maps[1], take_slot, got), 0);
	/* the map names one bell only: a bell beyond it marks nothing */
	wn_queue_ready_mark(&p, maps, 1);
	assert_int_equal(wn_queue_ready_take(&maps[1], take_slot, got), 0);
	/* the last slot, and a second one in another word */
	wn_queue_cons_ready_set(&c, WN_QUEUE_READY_SLOTS);
	wn_queue_ready_mark(&p, maps, 2);
	wn_queue_cons_ready_set(&c, 1);
	wn_queue_ready_mark(&p, maps, 2);
	got[0] = 0;
	assert_int_equal(wn_queue_ready_take(&maps[1], take_slot, got), 2);
	assert_int_equal(got[1], 0);
	assert_int_equal(got[2], WN_QUEUE_READY_SLOTS - 1);
	/* a slot beyond the map is refused */
	wn_queue_cons_ready_set(&c, WN_QUEUE_READY_SLOTS + 1);
	wn_queue_ready_mark(&p, maps, 2);
	assert_int_equal(wn_queue_ready_take(&maps[1], take_slot, got), 0);
	free(maps);
	free(mem);
}

static void
test_cq_arm(void **state)
{
	uint64_t size = wn_queue_ring_size(WN_QUEUE_KIND_CQ, 8, 0, 0);
	void *mem = ring_alloc(size);
	struct wn_queue_ring p, c;

	(void)state;
	assert_int_equal(wn_queue_ring_init(mem, WN_QUEUE_KIND_CQ, 8, 0, 0), 0);
	assert_int_equal(wn_queue_prod_attach(&p, mem, size, WN_QUEUE_KIND_CQ), 0);
	assert_int_equal(wn_queue_cons_attach(&c, mem, size, WN_QUEUE_KIND_CQ), 0);
	assert_false(wn_queue_cq_notify_check(&p, false));
	wn_queue_cq_arm(&c, true);
	assert_false(wn_queue_cq_notify_check(&p, false)); /* unsolicited: stays armed */
	assert_true(wn_queue_cq_notify_check(&p, true));
	assert_false(wn_queue_cq_notify_check(&p, true));  /* one event per arming */
	wn_queue_cq_arm(&c, false);
	wn_queue_cq_arm(&c, true);                          /* does not narrow NEXT */
	assert_true(wn_queue_cq_notify_check(&p, false));
	assert_int_equal(atomic_load(&c.hdr->arm_sn), 2);
	/* SRQ-style limit word: fires once when the remainder drops below it */
	assert_false(wn_queue_srq_limit_hit(&p, 0));
	wn_queue_srq_limit_arm(&c, 4);
	assert_false(wn_queue_srq_limit_hit(&p, 4));
	assert_true(wn_queue_srq_limit_hit(&p, 3));
	assert_false(wn_queue_srq_limit_hit(&p, 1));
	wn_queue_status_set(&p, WN_QUEUE_ST_ERROR);
	assert_int_equal(wn_queue_status(&c), WN_QUEUE_ST_ERROR);
	free(mem);
}

static void
test_wqe_validate(void **state)
{
	uint64_t size = wn_queue_ring_size(WN_QUEUE_KIND_SQ, 8, 2, 32);
	void *mem = ring_alloc(size);
	struct wn_queue_ring r;
	struct wn_queue_swqe w;
	struct wn_queue_rwqe rw = { .num_sge = 2 };

	(void)state;
	assert_int_equal(wn_queue_ring_init(mem, WN_QUEUE_KIND_SQ, 8, 2, 32), 0);
	assert_int_equal(wn_queue_cons_attach(&r, mem, size, WN_QUEUE_KIND_SQ), 0);
	memset(&w, 0, sizeof(w));
	w.opcode = WN_QUEUE_WR_SEND;
	w.num_sge = 2;
	assert_int_equal(wn_queue_swqe_validate(&r, &w), 0);
	w.num_sge = 3;
	assert_int_equal(wn_queue_swqe_validate(&r, &w), -EINVAL);
	w.num_sge = 0;
	w.flags = WN_QUEUE_SEND_INLINE;
	w.inline_len = 32;
	assert_int_equal(wn_queue_swqe_validate(&r, &w), 0);
	w.inline_len = 33;
	assert_int_equal(wn_queue_swqe_validate(&r, &w), -EINVAL);
	w.flags = 0x80;
	w.inline_len = 0;
	assert_int_equal(wn_queue_swqe_validate(&r, &w), -EINVAL);
	w.flags = 0;
	w.opcode = WN_QUEUE_WR_SEND_WITH_IMM; /* RFC 7306 Immediate Data + Send */
	assert_int_equal(wn_queue_swqe_validate(&r, &w), 0);
	w.opcode = 10; /* no iWARP form */
	assert_int_equal(wn_queue_swqe_validate(&r, &w), -EOPNOTSUPP);
	w.opcode = WN_QUEUE_WR_ATOMIC_FETCH_AND_ADD;
	w.num_sge = 1;
	w.u.atomic.remote_addr = 0x1004;
	assert_int_equal(wn_queue_swqe_validate(&r, &w), -EINVAL);
	w.u.atomic.remote_addr = 0x1008;
	assert_int_equal(wn_queue_swqe_validate(&r, &w), 0);
	w.opcode = WN_QUEUE_WR_RDMA_READ;
	w.flags = WN_QUEUE_SEND_INLINE;
	w.num_sge = 0;
	assert_int_equal(wn_queue_swqe_validate(&r, &w), -EINVAL);
	assert_int_equal(wn_queue_rwqe_validate(&r, &rw), 0);
	rw.num_sge = 3;
	assert_int_equal(wn_queue_rwqe_validate(&r, &rw), -EINVAL);
	free(mem);
}

/* ---- two-thread stress ---- */

#define STRESS_N 2000000u
#define STRESS_DEPTH 8u

struct stress {
	void *mem;
	uint64_t size;
	int efd;          /* doorbell wake-up: the producer writes when commit says "idle" */
	uint64_t rings;   /* doorbells rung */
	uint64_t sleeps;  /* consumer sleeps */
	uint32_t errors;
};

static void
fill(struct wn_queue_swqe *w, uint32_t seq)
{
	struct wn_queue_sge *sge = (struct wn_queue_sge *)(w + 1);
	uint32_t k;

	w->wr_id = (uint64_t)seq * 0x9e3779b97f4a7c15ull;
	w->num_sge = (uint8_t)(seq % 3 + 1);
	for (k = 0; k < w->num_sge; k++) {
		sge[k].addr = w->wr_id ^ k;
		sge[k].length = seq + k;
		sge[k].lkey = ~seq;
	}
	w->inline_len = seq; /* written last among the fields checked first */
}

static int
check(const struct wn_queue_swqe *w, uint32_t seq)
{
	const struct wn_queue_sge *sge = (const struct wn_queue_sge *)(w + 1);
	uint32_t k;

	if (w->inline_len != seq || w->wr_id != (uint64_t)seq * 0x9e3779b97f4a7c15ull ||
	    w->num_sge != seq % 3 + 1)
		return -1;
	for (k = 0; k < w->num_sge; k++)
		if (sge[k].addr != (w->wr_id ^ k) || sge[k].length != seq + k ||
		    sge[k].lkey != ~seq)
			return -1;
	return 0;
}

static void *
stress_producer(void *arg)
{
	struct stress *s = arg;
	struct wn_queue_ring r;
	uint32_t seq = 0;

	if (wn_queue_prod_attach(&r, s->mem, s->size, WN_QUEUE_KIND_SQ) != 0) {
		s->errors++;
		return NULL;
	}
	while (seq < STRESS_N) {
		int64_t space = wn_queue_prod_space(&r);
		uint32_t k, n;

		if (space < 0) {
			s->errors++;
			return NULL;
		}
		n = (uint32_t)space;
		if (n > 3)
			n = 1 + seq % 3; /* vary batch sizes to hit every wrap position */
		if (n > STRESS_N - seq)
			n = STRESS_N - seq;
		for (k = 0; k < n; k++)
			fill(wn_queue_prod_slot(&r, k), seq + k);
		seq += n;
		if (n != 0 && wn_queue_prod_commit(&r, n)) {
			uint64_t one = 1;

			wn_queue_prod_ring(&r);
			s->rings++;
			if (write(s->efd, &one, sizeof(one)) != sizeof(one))
				s->errors++;
		}
	}
	return NULL;
}

static void *
stress_consumer(void *arg)
{
	struct stress *s = arg;
	struct wn_queue_ring r;
	uint32_t seq = 0, spins = 0;

	if (wn_queue_cons_attach(&r, s->mem, s->size, WN_QUEUE_KIND_SQ) != 0) {
		s->errors++;
		return NULL;
	}
	while (seq < STRESS_N) {
		int64_t avail = wn_queue_cons_avail(&r);
		uint32_t k;

		if (avail < 0) {
			s->errors++;
			return NULL;
		}
		if (avail == 0) {
			/* go idle every so often: a lost doorbell makes this read block forever */
			if (++spins % 64 == 0 && wn_queue_cons_idle_enter(&r)) {
				uint64_t v;

				s->sleeps++;
				if (read(s->efd, &v, sizeof(v)) != sizeof(v))
					s->errors++;
				wn_queue_cons_idle_exit(&r);
			}
			continue;
		}
		for (k = 0; k < avail; k++)
			if (check(wn_queue_cons_slot(&r, k), seq + k) != 0)
				s->errors++;
		/* scribble over consumed slots: a producer overwriting early gets caught */
		for (k = 0; k < avail; k++)
			memset(wn_queue_cons_slot(&r, k), 0xee, r.stride);
		wn_queue_cons_release(&r, (uint32_t)avail);
		seq += (uint32_t)avail;
	}
	return NULL;
}

static void
test_stress_two_threads(void **state)
{
	struct stress s = { 0 };
	pthread_t tp, tc;

	(void)state;
	s.size = wn_queue_ring_size(WN_QUEUE_KIND_SQ, STRESS_DEPTH, 3, 0);
	s.mem = ring_alloc(s.size);
	s.efd = eventfd(0, 0);
	assert_true(s.efd >= 0);
	assert_int_equal(wn_queue_ring_init(s.mem, WN_QUEUE_KIND_SQ, STRESS_DEPTH, 3, 0), 0);
	/* start near the 32-bit wrap */
	atomic_store(&((struct wn_queue_ring_hdr *)s.mem)->prod, UINT32_MAX - 100);
	atomic_store(&((struct wn_queue_ring_hdr *)s.mem)->cons, UINT32_MAX - 100);
	assert_int_equal(pthread_create(&tc, NULL, stress_consumer, &s), 0);
	assert_int_equal(pthread_create(&tp, NULL, stress_producer, &s), 0);
	pthread_join(tp, NULL);
	pthread_join(tc, NULL);
	assert_int_equal(s.errors, 0);
	assert_int_equal(atomic_load(&((struct wn_queue_ring_hdr *)s.mem)->cons),
			 (uint32_t)(UINT32_MAX - 100 + STRESS_N));
	print_message("stress: %u entries, %lu doorbells, %lu consumer sleeps\n", STRESS_N,
		      (unsigned long)s.rings, (unsigned long)s.sleeps);
	close(s.efd);
	free(s.mem);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_init_attach),
		cmocka_unit_test(test_index_wrap_and_full),
		cmocka_unit_test(test_doorbell_idle),
		cmocka_unit_test(test_ready_map),
		cmocka_unit_test(test_cq_arm),
		cmocka_unit_test(test_wqe_validate),
		cmocka_unit_test(test_stress_two_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
