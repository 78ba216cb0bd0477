/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/mem: every STag check verdict and its exact Terminate cause, MR/FRMR/MW life cycles,
 * association rules (RFC 5042 §5), invalidation rules (RFC 5040 §5.3), and the RCU grace
 * period that keeps host memory alive while a dataplane lookup may still use it.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_rcu_qsbr.h>

#include "wn_mem.h"

#define RW (WN_MEM_ACCESS_LOCAL_WRITE | WN_MEM_ACCESS_REMOTE_WRITE | WN_MEM_ACCESS_REMOTE_READ)

static uint8_t buf[4096];

struct fx {
	struct wn_mem_table *t;
	uint32_t pd, pd2;
};

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->t = wn_mem_table_create(64, NULL);
	assert_non_null(f->t);
	f->pd = (uint32_t)wn_mem_pd_alloc(f->t);
	f->pd2 = (uint32_t)wn_mem_pd_alloc(f->t);
	assert_true(f->pd > 0 && f->pd2 > 0 && f->pd != f->pd2);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;

	wn_mem_table_free(f->t);
	free(f);
	return 0;
}

static void
term_is(struct wn_mem_term t, int layer, int etype, int code)
{
	assert_int_equal(t.layer, layer);
	assert_int_equal(t.etype, etype);
	assert_int_equal(t.code, code);
}

static void
test_stag_encoding(void **state)
{
	(void)state;
	assert_int_equal(wn_mem_stag(0x123456, 0x9a), 0x1234569a);
	assert_int_equal(wn_mem_stag_index(0x1234569a), 0x123456);
	assert_int_equal(wn_mem_stag_key(0x1234569a), 0x9a);
	assert_null(wn_mem_table_create(1, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(wn_mem_table_create(WN_MEM_MAX_ENTRIES + 1, NULL));
}

static void
test_reg_args(void **state)
{
	struct fx *f = *state;
	uint32_t s;

	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 0, 0x1000, RW, 1, &s), -EINVAL);
	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, NULL, 10, 0x1000, RW, 1, &s), -EINVAL);
	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 10, 0x1000, 1u << 7, 1, &s), -EINVAL);
	/* remote write needs local write */
	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 10, 0x1000, WN_MEM_ACCESS_REMOTE_WRITE, 1,
				       &s), -EINVAL);
	/* the region itself may not wrap 2^64 */
	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 16, UINT64_MAX - 7, RW, 1, &s), -EINVAL);
	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 8, UINT64_MAX - 7, RW, 1, &s), 0);
	assert_int_equal(wn_mem_mr_reg(f->t, 77, buf, 8, 0, RW, 1, &s), -ENOENT);
}

/* Zero-copy pins: only MRs, wrong key refused, counted per index, survive destroy. */
static void
test_pins(void **state)
{
	struct fx *f = *state;
	uint32_t s, mw;

	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 64, 0x1000, RW, 7, &s), 0);
	assert_int_equal(wn_mem_pinned(f->t, s), 0);
	assert_int_equal(wn_mem_pin(f->t, s), 0);
	assert_int_equal(wn_mem_pin(f->t, s), 0);
	assert_int_equal(wn_mem_pin(f->t, s ^ 1), -EINVAL); /* other key */
	assert_int_equal(wn_mem_pin(f->t, 0), -ENOENT);
	assert_int_equal(wn_mem_pinned(f->t, s), 2);
	assert_int_equal(wn_mem_mw_alloc(f->t, f->pd, 1, 0x20, &mw), 0);
	assert_int_equal(wn_mem_pin(f->t, mw), -EINVAL); /* a window's memory is its MR's */
	assert_int_equal(wn_mem_destroy(f->t, s), 0);
	/* the owner of the mapping waits for these */
	assert_int_equal(wn_mem_pinned(f->t, s), 2);
	assert_int_equal(wn_mem_pin(f->t, s), -EINVAL); /* no new pin on a dead region */
	wn_mem_unpin(f->t, s);
	wn_mem_unpin(f->t, s);
	assert_int_equal(wn_mem_pinned(f->t, s), 0);
}

static void
test_check_ok_va_and_zero_based(void **state)
{
	struct fx *f = *state;
	uint32_t va, zb;
	uint8_t *h = NULL;

	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 1024, 0x7f0000001000ull, RW, 0x42, &va),
			 0);
	assert_int_equal(wn_mem_stag_key(va), 0x42);
	assert_int_equal(wn_mem_check(f->t, va, 0x7f0000001010ull, 16, WN_MEM_ACCESS_REMOTE_WRITE,
				      f->pd, 1, &h), WN_MEM_OK);
	assert_ptr_equal(h, buf + 16);
	/* the whole region, exactly */
	assert_int_equal(wn_mem_check(f->t, va, 0x7f0000001000ull, 1024,
				      WN_MEM_ACCESS_REMOTE_READ, f->pd, 1, &h), WN_MEM_OK);
	assert_ptr_equal(h, buf);
	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf + 512, 256, 0xdead0000ull,
				       RW | WN_MEM_ACCESS_ZERO_BASED, 7, &zb), 0);
	assert_int_equal(wn_mem_check(f->t, zb, 100, 156, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1, &h),
			 WN_MEM_OK);
	assert_ptr_equal(h, buf + 612);
	/* the iova is meaningless for a zero-based region */
	assert_int_equal(wn_mem_check(f->t, zb, 0xdead0000ull, 1, WN_MEM_ACCESS_REMOTE_WRITE,
				      f->pd, 1, &h), WN_MEM_E_BOUNDS);
	/* local reads are always allowed on an MR, local writes need LOCAL_WRITE */
	assert_int_equal(wn_mem_check(f->t, va, 0x7f0000001000ull, 8, WN_MEM_ACCESS_LOCAL_READ,
				      f->pd, 1, &h), WN_MEM_OK);
}

static void
test_invalid_stag(void **state)
{
	struct fx *f = *state;
	struct wn_mem_term term;
	uint32_t s;

	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 64, 0x1000, RW, 5, &s), 0);
	/* index 0, out of range, free index, wrong key */
	assert_int_equal(wn_mem_check(f->t, 0x00000005, 0x1000, 1, WN_MEM_ACCESS_REMOTE_WRITE,
				      f->pd, 1, NULL), WN_MEM_E_INVALID_STAG);
	assert_int_equal(wn_mem_check(f->t, wn_mem_stag(64, 5), 0x1000, 1,
				      WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1, NULL),
			 WN_MEM_E_INVALID_STAG);
	assert_int_equal(wn_mem_check(f->t, wn_mem_stag(wn_mem_stag_index(s) + 1, 5), 0x1000, 1,
				      WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1, NULL),
			 WN_MEM_E_INVALID_STAG);
	assert_int_equal(wn_mem_check(f->t, s ^ 1, 0x1000, 1, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1,
				      NULL), WN_MEM_E_INVALID_STAG);
	/* exact causes: DDP tagged 1/1/0x00, RDMAP remote protection 0/1/0x00 */
	assert_null(wn_mem_resolve(f->t, s ^ 1, 0x1000, 1, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1,
				   WN_MEM_LAYER_DDP, &term));
	term_is(term, 1, 1, 0x00);
	assert_null(wn_mem_resolve(f->t, s ^ 1, 0x1000, 1, WN_MEM_ACCESS_REMOTE_READ, f->pd, 1,
				   WN_MEM_LAYER_RDMAP, &term));
	term_is(term, 0, 1, 0x00);
	/* stale after destroy, and after re-registration of the same index with a new key */
	assert_int_equal(wn_mem_destroy(f->t, s), 0);
	assert_int_equal(wn_mem_check(f->t, s, 0x1000, 1, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1,
				      NULL), WN_MEM_E_INVALID_STAG);
	assert_int_equal(wn_mem_destroy(f->t, s), -ENOENT);
}

/* A cached check gives wn_mem_check()'s verdict until the entry changes, then checks again. */
static void
test_check_cached(void **state)
{
	struct fx *f = *state;
	struct wn_mem_cached c = {0};
	uint8_t *host = NULL;
	uint32_t s, s2;

	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 64, 0x1000, RW, 5, &s), 0);
	assert_int_equal(wn_mem_check_cached(f->t, &c, s, 0x1000, 8, WN_MEM_ACCESS_REMOTE_WRITE,
					     f->pd, 1, &host), WN_MEM_OK);
	assert_ptr_equal(host, buf);
	assert_non_null(c.e);
	/* from the cache: the range moves, the verdicts do not change */
	assert_int_equal(wn_mem_check_cached(f->t, &c, s, 0x1030, 16, WN_MEM_ACCESS_REMOTE_WRITE,
					     f->pd, 1, &host), WN_MEM_OK);
	assert_ptr_equal(host, buf + 0x30);
	assert_int_equal(wn_mem_check_cached(f->t, &c, s, 0x1038, 9, WN_MEM_ACCESS_REMOTE_WRITE,
					     f->pd, 1, &host), WN_MEM_E_BOUNDS);
	assert_int_equal(wn_mem_check_cached(f->t, &c, s, 0xfff, 2, WN_MEM_ACCESS_REMOTE_WRITE,
					     f->pd, 1, &host), WN_MEM_E_BOUNDS);
	assert_int_equal(wn_mem_check_cached(f->t, &c, s, 0x1000, 8, WN_MEM_ACCESS_REMOTE_WRITE,
					     f->pd2, 1, &host), WN_MEM_E_NOT_ASSOC);
	assert_int_equal(wn_mem_check_cached(f->t, &c, s, 0x1000, 8, WN_MEM_ACCESS_MW_BIND,
					     f->pd, 1, &host), WN_MEM_E_ACCESS);
	/* destroyed: the cache knows, and so does a new region at the same index */
	assert_int_equal(wn_mem_check_cached(f->t, &c, s, 0x1000, 8, WN_MEM_ACCESS_REMOTE_WRITE,
					     f->pd, 1, &host), WN_MEM_OK);
	assert_int_equal(wn_mem_destroy(f->t, s), 0);
	assert_int_equal(wn_mem_check_cached(f->t, &c, s, 0x1000, 8, WN_MEM_ACCESS_REMOTE_WRITE,
					     f->pd, 1, &host), WN_MEM_E_INVALID_STAG);
	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 64, 0x1000, RW, 6, &s2), 0);
	assert_int_equal(wn_mem_stag_index(s2), wn_mem_stag_index(s));
	assert_int_equal(wn_mem_check_cached(f->t, &c, s, 0x1000, 8, WN_MEM_ACCESS_REMOTE_WRITE,
					     f->pd, 1, &host), WN_MEM_E_INVALID_STAG);
	assert_int_equal(wn_mem_check_cached(f->t, &c, s2, 0x1000, 8, WN_MEM_ACCESS_REMOTE_WRITE,
					     f->pd, 1, &host), WN_MEM_OK);
}

static void
test_not_associated(void **state)
{
	struct fx *f = *state;
	struct wn_mem_term term;
	uint32_t s;

	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 64, 0x1000, RW, 5, &s), 0);
	assert_int_equal(wn_mem_check(f->t, s, 0x1000, 1, WN_MEM_ACCESS_REMOTE_WRITE, f->pd2, 1,
				      NULL), WN_MEM_E_NOT_ASSOC);
	assert_null(wn_mem_resolve(f->t, s, 0x1000, 1, WN_MEM_ACCESS_REMOTE_WRITE, f->pd2, 1,
				   WN_MEM_LAYER_DDP, &term));
	term_is(term, 1, 1, 0x02);
	assert_null(wn_mem_resolve(f->t, s, 0x1000, 1, WN_MEM_ACCESS_REMOTE_READ, f->pd2, 1,
				   WN_MEM_LAYER_RDMAP, &term));
	term_is(term, 0, 1, 0x03);
	/* PD in use cannot be freed */
	assert_int_equal(wn_mem_pd_free(f->t, f->pd), -EBUSY);
	assert_int_equal(wn_mem_destroy(f->t, s), 0);
	assert_int_equal(wn_mem_pd_free(f->t, f->pd), 0);
	assert_int_equal(wn_mem_pd_free(f->t, f->pd), -ENOENT);
}

static void
test_access_rights(void **state)
{
	struct fx *f = *state;
	struct wn_mem_term term;
	uint32_t ro, lw;

	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 64, 0x1000, WN_MEM_ACCESS_REMOTE_READ, 1,
				       &ro), 0);
	assert_int_equal(wn_mem_check(f->t, ro, 0x1000, 8, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1,
				      NULL), WN_MEM_E_ACCESS);
	assert_int_equal(wn_mem_check(f->t, ro, 0x1000, 8, WN_MEM_ACCESS_REMOTE_ATOMIC, f->pd, 1,
				      NULL), WN_MEM_E_ACCESS);
	assert_int_equal(wn_mem_check(f->t, ro, 0x1000, 8, WN_MEM_ACCESS_LOCAL_WRITE, f->pd, 1,
				      NULL), WN_MEM_E_ACCESS);
	/* DDP has no access code: RDMAP remote protection access rights 0/1/0x02 */
	assert_null(wn_mem_resolve(f->t, ro, 0x1000, 8, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1,
				   WN_MEM_LAYER_DDP, &term));
	term_is(term, 0, 1, 0x02);
	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 64, 0x1000, WN_MEM_ACCESS_LOCAL_WRITE, 1,
				       &lw), 0);
	assert_int_equal(wn_mem_check(f->t, lw, 0x1000, 8, WN_MEM_ACCESS_REMOTE_READ, f->pd, 1,
				      NULL), WN_MEM_E_ACCESS);
	assert_int_equal(wn_mem_check(f->t, lw, 0x1000, 8, WN_MEM_ACCESS_LOCAL_WRITE, f->pd, 1,
				      NULL), WN_MEM_OK);
	assert_int_equal(wn_mem_local_wc_status(WN_MEM_E_ACCESS), 4);
}

static void
test_bounds_and_wrap(void **state)
{
	struct fx *f = *state;
	struct wn_mem_term term;
	uint32_t s, top;

	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 100, 0x1000, RW, 1, &s), 0);
	/* below base, past the end by one, starting past the end */
	assert_int_equal(wn_mem_check(f->t, s, 0xfff, 2, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1,
				      NULL), WN_MEM_E_BOUNDS);
	assert_int_equal(wn_mem_check(f->t, s, 0x1000 + 50, 51, WN_MEM_ACCESS_REMOTE_WRITE, f->pd,
				      1, NULL), WN_MEM_E_BOUNDS);
	assert_int_equal(wn_mem_check(f->t, s, 0x1000 + 50, 50, WN_MEM_ACCESS_REMOTE_WRITE, f->pd,
				      1, NULL), WN_MEM_OK);
	assert_int_equal(wn_mem_check(f->t, s, 0x1000 + 101, 0, WN_MEM_ACCESS_REMOTE_WRITE, f->pd,
				      1, NULL), WN_MEM_E_BOUNDS);
	/* a length that would wrap an in-range TO past 2^64 and back into the region */
	assert_int_equal(wn_mem_check(f->t, s, 0x1000, UINT64_MAX, WN_MEM_ACCESS_REMOTE_WRITE,
				      f->pd, 1, NULL), WN_MEM_E_TO_WRAP);
	assert_null(wn_mem_resolve(f->t, s, 0x1000, UINT64_MAX, WN_MEM_ACCESS_REMOTE_WRITE, f->pd,
				   1, WN_MEM_LAYER_DDP, &term));
	term_is(term, 1, 1, 0x03);
	assert_null(wn_mem_resolve(f->t, s, UINT64_MAX - 3, 8, WN_MEM_ACCESS_REMOTE_READ, f->pd, 1,
				   WN_MEM_LAYER_RDMAP, &term));
	term_is(term, 0, 1, 0x04);
	assert_null(wn_mem_resolve(f->t, s, 0x2000, 8, WN_MEM_ACCESS_REMOTE_READ, f->pd, 1,
				   WN_MEM_LAYER_RDMAP, &term));
	term_is(term, 0, 1, 0x01);
	assert_null(wn_mem_resolve(f->t, s, 0x2000, 8, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1,
				   WN_MEM_LAYER_DDP, &term));
	term_is(term, 1, 1, 0x01);
	/* a region ending exactly at 2^64 */
	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 16, UINT64_MAX - 15, RW, 1, &top), 0);
	assert_int_equal(wn_mem_check(f->t, top, UINT64_MAX - 15, 16, WN_MEM_ACCESS_REMOTE_WRITE,
				      f->pd, 1, NULL), WN_MEM_OK);
	assert_int_equal(wn_mem_check(f->t, top, UINT64_MAX - 7, 9, WN_MEM_ACCESS_REMOTE_WRITE,
				      f->pd, 1, NULL), WN_MEM_E_TO_WRAP);
}

static void
test_fast_register_and_invalidate(void **state)
{
	struct fx *f = *state;
	struct wn_mem_term term;
	uint32_t fr, s2, mr;
	uint8_t *h;

	assert_int_equal(wn_mem_frmr_alloc(f->t, f->pd, buf, 1024, 0x10, &fr), 0);
	/* invalid until registered */
	assert_int_equal(wn_mem_check(f->t, fr, 0, 1, WN_MEM_ACCESS_LOCAL_READ, f->pd, 1, NULL),
			 WN_MEM_E_INVALID_STAG);
	s2 = wn_mem_stag(wn_mem_stag_index(fr), 0x11);
	assert_int_equal(wn_mem_fast_reg(f->t, s2, f->pd2, 0x5000, 64, 128, RW),
			 WN_MEM_E_NOT_ASSOC);
	assert_int_equal(wn_mem_fast_reg(f->t, s2, f->pd, 0x5000, 1000, 128, RW),
			 WN_MEM_E_BOUNDS);
	assert_int_equal(wn_mem_fast_reg(f->t, s2, f->pd, 0x5000, 64, 128,
					 WN_MEM_ACCESS_REMOTE_WRITE), WN_MEM_E_ACCESS);
	assert_int_equal(wn_mem_fast_reg(f->t, s2, f->pd, 0x5000, 64, 128, RW), WN_MEM_OK);
	/* old key dead, new key maps TO 0x5000 to backing + 128 */
	assert_int_equal(wn_mem_check(f->t, fr, 0x5000, 1, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1,
				      NULL), WN_MEM_E_INVALID_STAG);
	assert_int_equal(wn_mem_check(f->t, s2, 0x5010, 8, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1,
				      &h), WN_MEM_OK);
	assert_ptr_equal(h, buf + 128 + 16);
	/* RFC 5042 §4.2: fast-register needs an invalid STag */
	assert_int_equal(wn_mem_fast_reg(f->t, s2 + 1, f->pd, 0, 64, 0, RW),
			 WN_MEM_E_INVALID_STAG);
	/* local invalidate from another PD is refused, from this PD works */
	assert_int_equal(wn_mem_invalidate(f->t, s2, f->pd2, 1, false), WN_MEM_E_NOT_ASSOC);
	assert_int_equal(wn_mem_invalidate(f->t, s2, f->pd, 1, false), WN_MEM_OK);
	assert_int_equal(wn_mem_check(f->t, s2, 0x5010, 8, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1,
				      NULL), WN_MEM_E_INVALID_STAG);
	assert_int_equal(wn_mem_invalidate(f->t, s2, f->pd, 1, true), WN_MEM_E_INVALID_STAG);
	/* remote invalidation (Send with Invalidate) of a registered MR: 0/1/0x09 */
	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 64, 0x1000, RW, 1, &mr), 0);
	assert_int_equal(wn_mem_invalidate(f->t, mr, f->pd, 1, true), WN_MEM_E_CANT_INVALIDATE);
	term = wn_mem_term_of(WN_MEM_E_CANT_INVALIDATE, WN_MEM_LAYER_RDMAP);
	term_is(term, 0, 1, 0x09);
	assert_int_equal(wn_mem_check(f->t, mr, 0x1000, 8, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1,
				      NULL), WN_MEM_OK);
}

static void
test_memory_windows(void **state)
{
	struct fx *f = *state;
	uint32_t mr, nobind, mw1, mw2, mw2b, ro;
	uint8_t *h;

	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 1024, 0x10000,
				       RW | WN_MEM_ACCESS_MW_BIND, 1, &mr), 0);
	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 1024, 0x10000, RW, 1, &nobind), 0);
	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 1024, 0x10000,
				       WN_MEM_ACCESS_REMOTE_READ | WN_MEM_ACCESS_MW_BIND, 1, &ro),
			 0);
	assert_int_equal(wn_mem_mw_alloc(f->t, f->pd, 1, 0x20, &mw1), 0);
	assert_int_equal(wn_mem_mw_alloc(f->t, f->pd, 2, 0x30, &mw2), 0);
	assert_int_equal(wn_mem_mw_alloc(f->t, f->pd, 3, 0x30, &mw2b), -EINVAL);
	/* unbound windows are invalid */
	assert_int_equal(wn_mem_check(f->t, mw1, 0x10000, 1, WN_MEM_ACCESS_REMOTE_READ, f->pd, 1,
				      NULL), WN_MEM_E_INVALID_STAG);
	/* bind rules */
	assert_int_equal(wn_mem_mw_bind(f->t, mw1, nobind, f->pd, 1, 0x10000, 64,
					WN_MEM_ACCESS_REMOTE_READ), WN_MEM_E_ACCESS);
	assert_int_equal(wn_mem_mw_bind(f->t, mw1, ro, f->pd, 1, 0x10000, 64,
					WN_MEM_ACCESS_REMOTE_WRITE), WN_MEM_E_ACCESS);
	assert_int_equal(wn_mem_mw_bind(f->t, mw1, mr, f->pd, 1, 0x10000 + 1000, 64,
					WN_MEM_ACCESS_REMOTE_READ), WN_MEM_E_BOUNDS);
	assert_int_equal(wn_mem_mw_bind(f->t, mw1, mr, f->pd2, 1, 0x10000, 64,
					WN_MEM_ACCESS_REMOTE_READ), WN_MEM_E_NOT_ASSOC);
	assert_int_equal(wn_mem_mw_bind(f->t, mw1, mr ^ 1, f->pd, 1, 0x10000, 64,
					WN_MEM_ACCESS_REMOTE_READ), WN_MEM_E_INVALID_STAG);
	/* type 1: PD scope, not invalidatable; window rights only */
	assert_int_equal(wn_mem_mw_bind(f->t, mw1, mr, f->pd, 1, 0x10100, 64,
					WN_MEM_ACCESS_REMOTE_READ), WN_MEM_OK);
	assert_int_equal(wn_mem_check(f->t, mw1, 0x10100 + 8, 8, WN_MEM_ACCESS_REMOTE_READ, f->pd,
				      99, &h), WN_MEM_OK);
	assert_ptr_equal(h, buf + 0x100 + 8);
	assert_int_equal(wn_mem_check(f->t, mw1, 0x10100, 8, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1,
				      NULL), WN_MEM_E_ACCESS);
	assert_int_equal(wn_mem_check(f->t, mw1, 0x100f0, 8, WN_MEM_ACCESS_REMOTE_READ, f->pd, 1,
				      NULL), WN_MEM_E_BOUNDS);
	assert_int_equal(wn_mem_check(f->t, mw1, 0x10100, 8, WN_MEM_ACCESS_LOCAL_READ, f->pd, 1,
				      NULL), WN_MEM_E_INVALID_STAG);
	assert_int_equal(wn_mem_invalidate(f->t, mw1, f->pd, 1, true), WN_MEM_E_CANT_INVALIDATE);
	/* type 2, zero-based, associated with QP 7 only */
	assert_int_equal(wn_mem_mw_bind(f->t, mw2, mr, f->pd, 7, 0x10200, 32,
					WN_MEM_ACCESS_REMOTE_WRITE | WN_MEM_ACCESS_ZERO_BASED),
			 WN_MEM_OK);
	assert_int_equal(wn_mem_check(f->t, mw2, 4, 8, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 7, &h),
			 WN_MEM_OK);
	assert_ptr_equal(h, buf + 0x200 + 4);
	assert_int_equal(wn_mem_check(f->t, mw2, 4, 8, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 8, NULL),
			 WN_MEM_E_NOT_ASSOC);
	/* a bound type 2 window must be invalidated before it is bound again */
	assert_int_equal(wn_mem_mw_bind(f->t, mw2, mr, f->pd, 7, 0x10200, 32,
					WN_MEM_ACCESS_REMOTE_WRITE), WN_MEM_E_INVALID_STAG);
	/* MR with bound windows cannot go */
	assert_int_equal(wn_mem_destroy(f->t, mr), -EBUSY);
	assert_int_equal(wn_mem_invalidate(f->t, mw2, f->pd, 8, true), WN_MEM_E_NOT_ASSOC);
	assert_int_equal(wn_mem_invalidate(f->t, mw2, f->pd, 7, true), WN_MEM_OK);
	assert_int_equal(wn_mem_check(f->t, mw2, 4, 8, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 7, NULL),
			 WN_MEM_E_INVALID_STAG);
	mw2b = wn_mem_stag(wn_mem_stag_index(mw2), 0x31);
	assert_int_equal(wn_mem_mw_bind(f->t, mw2b, mr, f->pd, 7, 0x10200, 32,
					WN_MEM_ACCESS_REMOTE_WRITE), WN_MEM_OK);
	assert_int_equal(wn_mem_check(f->t, mw2, 0x10200, 8, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 7,
				      NULL), WN_MEM_E_INVALID_STAG);
	/* unbind type 1 with length 0, destroy window 2, then the MR may go */
	assert_int_equal(wn_mem_mw_bind(f->t, mw1, mr, f->pd, 1, 0, 0, 0), WN_MEM_OK);
	assert_int_equal(wn_mem_destroy(f->t, mw2b), 0);
	assert_int_equal(wn_mem_destroy(f->t, mr), 0);
}

/*
 * ibv_rereg_mr keeping the keys: a reserved region reaches nothing until the swap, then the
 * old STag reaches it (PD, rights, range, memory) and the reserved STag the old region,
 * still invalid; windows bound to either make the swap fail with nothing changed.
 */
static void
test_mr_swap(void **state)
{
	struct fx *f = *state;
	uint32_t old, n, frmr, mw, other;
	struct wn_mem_info info;
	uint8_t *h;

	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 1024, 0x10000,
				       RW | WN_MEM_ACCESS_MW_BIND, 1, &old), 0);
	assert_int_equal(wn_mem_mr_reserve(f->t, f->pd2, buf + 2048, 512, 0x50000,
					   WN_MEM_ACCESS_REMOTE_READ, 2, &n), 0);
	assert_int_equal(wn_mem_check(f->t, n, 0x50000, 8, WN_MEM_ACCESS_REMOTE_READ, f->pd2, 1,
				      NULL), WN_MEM_E_INVALID_STAG);
	assert_int_equal(wn_mem_pin(f->t, n), -EINVAL);
	/* bad arguments: nothing changes */
	assert_int_equal(wn_mem_mr_swap(f->t, old, old), -EINVAL);
	assert_int_equal(wn_mem_mr_swap(f->t, old ^ 1, n), -ENOENT);
	assert_int_equal(wn_mem_mr_swap(f->t, old, 0), -ENOENT);
	assert_int_equal(wn_mem_mr_swap(f->t, n, old), -EINVAL); /* the one kept must be valid */
	assert_int_equal(wn_mem_frmr_alloc(f->t, f->pd, buf, 1024, 3, &frmr), 0);
	assert_int_equal(wn_mem_mr_swap(f->t, old, frmr), -EINVAL);
	/* a bound window: -EBUSY, the old region as it was */
	assert_int_equal(wn_mem_mw_alloc(f->t, f->pd, 1, 4, &mw), 0);
	assert_int_equal(wn_mem_mw_bind(f->t, mw, old, f->pd, 1, 0x10000, 64,
					WN_MEM_ACCESS_REMOTE_READ), WN_MEM_OK);
	assert_int_equal(wn_mem_mr_swap(f->t, old, n), -EBUSY);
	assert_int_equal(wn_mem_check(f->t, old, 0x10008, 8, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1,
				      &h), WN_MEM_OK);
	assert_ptr_equal(h, buf + 8);
	assert_int_equal(wn_mem_mw_bind(f->t, mw, old, f->pd, 1, 0, 0, 0), WN_MEM_OK);
	/* the swap: the old STag, its key and index, reaches the new region at once */
	assert_int_equal(wn_mem_mr_swap(f->t, old, n), 0);
	assert_int_equal(wn_mem_check(f->t, old, 0x50008, 8, WN_MEM_ACCESS_REMOTE_READ, f->pd2, 1,
				      &h), WN_MEM_OK);
	assert_ptr_equal(h, buf + 2048 + 8);
	assert_int_equal(wn_mem_check(f->t, old, 0x10008, 8, WN_MEM_ACCESS_REMOTE_READ, f->pd2, 1,
				      NULL), WN_MEM_E_BOUNDS);
	assert_int_equal(wn_mem_check(f->t, old, 0x50008, 8, WN_MEM_ACCESS_REMOTE_WRITE, f->pd2, 1,
				      NULL), WN_MEM_E_ACCESS);
	assert_int_equal(wn_mem_check(f->t, old, 0x50008, 8, WN_MEM_ACCESS_REMOTE_READ, f->pd, 1,
				      NULL), WN_MEM_E_NOT_ASSOC);
	assert_int_equal(wn_mem_check(f->t, n, 0x10008, 8, WN_MEM_ACCESS_REMOTE_WRITE, f->pd, 1,
				      NULL), WN_MEM_E_INVALID_STAG);
	assert_int_equal(wn_mem_info(f->t, n, &info), 0);
	assert_true(!info.valid && info.host == buf && info.pd == f->pd && info.length == 1024);
	assert_int_equal(wn_mem_info(f->t, old, &info), 0);
	assert_true(info.valid && info.key == 1 && info.host == buf + 2048);
	/* the old region goes under the reserved STag; the PDs' users still add up */
	assert_int_equal(wn_mem_destroy(f->t, n), 0);
	assert_int_equal(wn_mem_pd_free(f->t, f->pd2), -EBUSY);
	assert_int_equal(wn_mem_destroy(f->t, old), 0);
	assert_int_equal(wn_mem_destroy(f->t, frmr), 0);
	assert_int_equal(wn_mem_destroy(f->t, mw), 0);
	assert_int_equal(wn_mem_pd_free(f->t, f->pd2), 0);
	assert_int_equal(wn_mem_mr_reg(f->t, f->pd, buf, 64, 0, RW, 5, &other), 0);
	assert_int_equal(wn_mem_pd_free(f->t, f->pd), -EBUSY);
	assert_int_equal(wn_mem_destroy(f->t, other), 0);
	assert_int_equal(wn_mem_pd_free(f->t, f->pd), 0);
}

/* ---- RCU: wn_mem_destroy() must not return while a reader may hold a pointer ---- */

struct rcu_fx {
	struct wn_mem_table *t;
	struct rte_rcu_qsbr *qs;
	uint32_t stag;
	uint32_t pd;
	atomic_int destroyed;
	int saw_destroy_early;
	int saw_invalid;
};

static void *
destroyer(void *arg)
{
	struct rcu_fx *r = arg;

	if (wn_mem_destroy(r->t, r->stag) == 0)
		atomic_store(&r->destroyed, 1);
	return NULL;
}

static void
test_rcu_grace_period(void **state)
{
	struct rcu_fx r = { 0 };
	size_t sz = rte_rcu_qsbr_get_memsize(1);
	pthread_t th;
	uint8_t *h = NULL;

	(void)state;
	assert_int_equal(posix_memalign((void **)&r.qs, 128, sz), 0);
	assert_int_equal(rte_rcu_qsbr_init(r.qs, 1), 0);
	assert_int_equal(rte_rcu_qsbr_thread_register(r.qs, 0), 0);
	rte_rcu_qsbr_thread_online(r.qs, 0);
	r.t = wn_mem_table_create(16, r.qs);
	assert_non_null(r.t);
	r.pd = (uint32_t)wn_mem_pd_alloc(r.t);
	assert_int_equal(wn_mem_mr_reg(r.t, r.pd, buf, 64, 0, RW, 1, &r.stag), 0);

	/* this thread is a dataplane lcore in the middle of a placement */
	assert_int_equal(wn_mem_check(r.t, r.stag, 0, 8, WN_MEM_ACCESS_REMOTE_WRITE, r.pd, 1, &h),
			 WN_MEM_OK);
	assert_int_equal(pthread_create(&th, NULL, destroyer, &r), 0);
	/* wait until the destroy made the STag invalid: no new lookup succeeds */
	while (wn_mem_check(r.t, r.stag, 0, 8, WN_MEM_ACCESS_REMOTE_WRITE, r.pd, 1, NULL) ==
	       WN_MEM_OK)
		;
	/* ... but it cannot have completed: we have not reported a quiescent state */
	assert_int_equal(atomic_load(&r.destroyed), 0);
	h[0] = 0x5a; /* still ours to touch */
	/*
	 * The destroyer may not have started its grace period yet (it cleared the valid bit
	 * first): a quiescent state reported before its token would not end the wait, so keep
	 * reporting until it returns, as a polling lcore does.
	 */
	while (atomic_load(&r.destroyed) == 0) {
		rte_rcu_qsbr_quiescent(r.qs, 0);
		sched_yield();
	}
	pthread_join(th, NULL);
	assert_int_equal(atomic_load(&r.destroyed), 1);
	rte_rcu_qsbr_thread_offline(r.qs, 0);
	wn_mem_table_free(r.t);
	free(r.qs);
}

/* ---- seqlock: a lookup racing fast-register/invalidate never sees a torn region ---- */

#define TORN_ITERS 200000

struct torn_fx {
	struct wn_mem_table *t;
	uint32_t pd, fr;
	atomic_int stop;
	unsigned long ok, torn;
};

/* Two registrations of the same FRMR with different keys, TOs and offsets. */
static const struct {
	uint8_t key;
	uint64_t iova, off, len;
} torn_reg[2] = { { 0x10, 0x100000, 0, 1024 }, { 0x20, 0x900000, 2048, 512 } };

static void *
torn_writer(void *arg)
{
	struct torn_fx *f = arg;

	for (int i = 0; i < TORN_ITERS; i++) {
		int k = i & 1;
		uint32_t s = wn_mem_stag(wn_mem_stag_index(f->fr), torn_reg[k].key);

		if (wn_mem_fast_reg(f->t, s, f->pd, torn_reg[k].iova, torn_reg[k].len,
				    torn_reg[k].off, RW) != WN_MEM_OK ||
		    wn_mem_invalidate(f->t, s, f->pd, 1, false) != WN_MEM_OK)
			f->torn++;
	}
	atomic_store(&f->stop, 1);
	return NULL;
}

static void
test_seqlock_no_torn_reads(void **state)
{
	static uint8_t backing[4096];
	struct torn_fx f = { 0 };
	pthread_t th;

	(void)state;
	f.t = wn_mem_table_create(8, NULL);
	f.pd = (uint32_t)wn_mem_pd_alloc(f.t);
	assert_int_equal(wn_mem_frmr_alloc(f.t, f.pd, backing, sizeof(backing), 0, &f.fr), 0);
	assert_int_equal(pthread_create(&th, NULL, torn_writer, &f), 0);
	while (!atomic_load(&f.stop)) {
		for (int k = 0; k < 2; k++) {
			uint32_t s = wn_mem_stag(wn_mem_stag_index(f.fr), torn_reg[k].key);
			uint64_t to = torn_reg[k].iova + 100;
			uint8_t *h = NULL;

			/* success must come with the host address of this very registration */
			if (wn_mem_check(f.t, s, to, 8, WN_MEM_ACCESS_REMOTE_WRITE, f.pd, 1, &h) ==
			    WN_MEM_OK) {
				if (h != backing + torn_reg[k].off + 100)
					f.torn++;
				f.ok++;
			}
		}
	}
	pthread_join(th, NULL);
	print_message("seqlock: %lu successful lookups during %d re-registrations\n", f.ok,
		      TORN_ITERS);
	assert_int_equal(f.torn, 0);
	wn_mem_table_free(f.t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stag_encoding),
		cmocka_unit_test_setup_teardown(test_reg_args, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_ok_va_and_zero_based, setup, teardown),
		cmocka_unit_test_setup_teardown(test_invalid_stag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_cached, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_associated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_access_rights, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds_and_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fast_register_and_invalidate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_memory_windows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mr_swap, setup, teardown),
		cmocka_unit_test(test_rcu_grace_period),
		cmocka_unit_test(test_seqlock_no_torn_reads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
