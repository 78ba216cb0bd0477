/* SPDX-License-Identifier: BSD-3-Clause */
/* Region table: PDs, MRs, fast-register MRs, windows and the STag check (see wn_mem.h). */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_rcu_qsbr.h>
#include <rte_seqlock.h>

#include "wn_mem.h"

#define MAX_PD (WN_MEM_MAX_PDS + 1) /* PD number 0 is never given */

/* One table entry; fields below the lock are written only under it. */
struct entry {
	rte_seqlock_t lock;
	uint8_t type;     /* enum wn_mem_type */
	uint8_t valid;
	uint8_t key;
	uint8_t wtype;    /* unused padding */
	uint32_t pd;
	uint32_t qp;      /* MW2: QP it was bound through */
	uint32_t access;
	uint32_t parent;  /* windows: MR index */
	uint32_t bound;   /* MRs: windows bound to it */
	uint64_t base;    /* first TO */
	uint64_t len;
	uint8_t *host;    /* host address of TO base */
	uint8_t *backing; /* FRMR: backing memory */
	uint64_t backing_len;
};

/* What a lookup copies out under the seqlock. */
struct snap {
	uint8_t type;
	uint8_t valid;
	uint8_t key;
	uint32_t pd;
	uint32_t qp;
	uint32_t access;
	uint64_t base;
	uint64_t len;
	uint8_t *host;
};

struct wn_mem_table {
	uint32_t capacity;
	struct rte_rcu_qsbr *qs;
	uint32_t *free_idx; /* stack of free indices (control thread only) */
	uint32_t n_free;
	uint32_t pd_ref[MAX_PD]; /* 0 = free; else 1 + users (control thread only) */
	uint32_t pd_next;        /* where the search for a free PD starts */
	struct entry *e;
	uint32_t *pins;     /* per index: zero-copy references (atomic, any lcore) */
};

static void
snap_read(const struct entry *e, struct snap *s)
{
	uint32_t sn;

	do {
		sn = rte_seqlock_read_begin(&e->lock);
		s->type = e->type;
		s->valid = e->valid;
		s->key = e->key;
		s->pd = e->pd;
		s->qp = e->qp;
		s->access = e->access;
		s->base = e->base;
		s->len = e->len;
		s->host = e->host;
	} while (rte_seqlock_read_retry(&e->lock, sn));
}

static const struct entry *
entry_of(const struct wn_mem_table *t, uint32_t stag)
{
	uint32_t idx = wn_mem_stag_index(stag);

	if (idx == 0 || idx >= t->capacity)
		return NULL;
	return &t->e[idx];
}

struct wn_mem_table *
wn_mem_table_create(uint32_t capacity, struct rte_rcu_qsbr *qs)
{
	struct wn_mem_table *t;
	uint32_t i;

	if (capacity < 2 || capacity > WN_MEM_MAX_ENTRIES) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		goto nomem;
	t->e = calloc(capacity, sizeof(*t->e));
	t->free_idx = calloc(capacity, sizeof(*t->free_idx));
	t->pins = calloc(capacity, sizeof(*t->pins));
	if (t->e == NULL || t->free_idx == NULL || t->pins == NULL)
		goto nomem;
	t->capacity = capacity;
	t->qs = qs;
	for (i = 0; i < capacity; i++)
		rte_seqlock_init(&t->e[i].lock);
	/* lowest indices first */
	for (i = capacity - 1; i >= 1; i--)
		t->free_idx[t->n_free++] = i;
	return t;
nomem:
	if (t != NULL) {
		free(t->e);
		free(t->free_idx);
		free(t->pins);
		free(t);
	}
	errno = ENOMEM;
	return NULL;
}

void
wn_mem_table_free(struct wn_mem_table *t)
{
	if (t == NULL)
		return;
	free(t->e);
	free(t->free_idx);
	free(t->pins);
	free(t);
}

int
wn_mem_pin(struct wn_mem_table *t, uint32_t stag)
{
	uint32_t idx = wn_mem_stag_index(stag);
	struct snap s;

	if (t == NULL || idx == 0 || idx >= t->capacity)
		return -ENOENT;
	snap_read(&t->e[idx], &s);
	if (!s.valid || s.key != wn_mem_stag_key(stag) ||
	    (s.type != WN_MEM_T_MR && s.type != WN_MEM_T_FRMR))
		return -EINVAL; /* windows: the memory is another entry's */
	__atomic_fetch_add(&t->pins[idx], 1, __ATOMIC_ACQ_REL);
	return 0;
}

void
wn_mem_unpin(struct wn_mem_table *t, uint32_t stag)
{
	uint32_t idx = wn_mem_stag_index(stag);

	if (t != NULL && idx != 0 && idx < t->capacity)
		__atomic_fetch_sub(&t->pins[idx], 1, __ATOMIC_RELEASE);
}

uint32_t
wn_mem_pinned(const struct wn_mem_table *t, uint32_t stag)
{
	uint32_t idx = wn_mem_stag_index(stag);

	if (t == NULL || idx == 0 || idx >= t->capacity)
		return 0;
	return __atomic_load_n(&t->pins[idx], __ATOMIC_ACQUIRE);
}

int
wn_mem_pd_alloc(struct wn_mem_table *t)
{
	uint32_t pd, n;

	/* from the last one taken on: a free number is usually the next */
	for (n = 1; n < MAX_PD; n++) {
		pd = 1 + (t->pd_next + n - 1) % (MAX_PD - 1);
		if (t->pd_ref[pd] == 0) {
			t->pd_ref[pd] = 1;
			t->pd_next = pd;
			return (int)pd;
		}
	}
	return -ENOSPC;
}

static bool
pd_valid(const struct wn_mem_table *t, uint32_t pd)
{
	return pd != 0 && pd < MAX_PD && t->pd_ref[pd] != 0;
}

int
wn_mem_pd_free(struct wn_mem_table *t, uint32_t pd)
{
	if (!pd_valid(t, pd))
		return -ENOENT;
	if (t->pd_ref[pd] > 1)
		return -EBUSY;
	t->pd_ref[pd] = 0;
	return 0;
}

/* Take a free index and fill it as type @p type (control thread). */
static int
entry_new(struct wn_mem_table *t, uint32_t pd, enum wn_mem_type type, uint8_t key,
	  struct entry **out, uint32_t *stag)
{
	struct entry *e;
	uint32_t idx;

	if (!pd_valid(t, pd))
		return -ENOENT;
	if (t->n_free == 0)
		return -ENOSPC;
	idx = t->free_idx[--t->n_free];
	e = &t->e[idx];
	rte_seqlock_write_lock(&e->lock);
	e->type = (uint8_t)type;
	e->valid = 0;
	e->key = key;
	e->pd = pd;
	e->qp = 0;
	e->access = 0;
	e->parent = 0;
	e->bound = 0;
	e->base = 0;
	e->len = 0;
	e->host = NULL;
	e->backing = NULL;
	e->backing_len = 0;
	*out = e;
	*stag = wn_mem_stag(idx, key);
	t->pd_ref[pd]++;
	return 0;
}

/* Remote write/atomic rights need local write (IB/iWARP verbs rule, RFC 5042 §4.3). */
static bool
access_ok(uint32_t access)
{
	if (access & ~WN_MEM_ACCESS_MASK)
		return false;
	if ((access & (WN_MEM_ACCESS_REMOTE_WRITE | WN_MEM_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & WN_MEM_ACCESS_LOCAL_WRITE))
		return false;
	return true;
}

static int
mr_new(struct wn_mem_table *t, uint32_t pd, void *host, uint64_t length, uint64_t iova,
       uint32_t access, uint8_t key, uint32_t *stag, bool valid)
{
	uint64_t base = (access & WN_MEM_ACCESS_ZERO_BASED) ? 0 : iova;
	struct entry *e;
	int rc;

	if (t == NULL || host == NULL || stag == NULL || length == 0 || !access_ok(access) ||
	    length - 1 > UINT64_MAX - base)
		return -EINVAL;
	rc = entry_new(t, pd, WN_MEM_T_MR, key, &e, stag);
	if (rc != 0)
		return rc;
	e->access = access;
	e->base = base;
	e->len = length;
	e->host = host;
	e->valid = valid;
	rte_seqlock_write_unlock(&e->lock);
	return 0;
}

int
wn_mem_mr_reg(struct wn_mem_table *t, uint32_t pd, void *host, uint64_t length, uint64_t iova,
	      uint32_t access, uint8_t key, uint32_t *stag)
{
	return mr_new(t, pd, host, length, iova, access, key, stag, true);
}

int
wn_mem_mr_reserve(struct wn_mem_table *t, uint32_t pd, void *host, uint64_t length,
		  uint64_t iova, uint32_t access, uint8_t key, uint32_t *stag)
{
	return mr_new(t, pd, host, length, iova, access, key, stag, false);
}

int
wn_mem_frmr_alloc(struct wn_mem_table *t, uint32_t pd, void *host, uint64_t max_len,
		  uint8_t key, uint32_t *stag)
{
	struct entry *e;
	int rc;

	if (t == NULL || host == NULL || stag == NULL || max_len == 0)
		return -EINVAL;
	rc = entry_new(t, pd, WN_MEM_T_FRMR, key, &e, stag);
	if (rc != 0)
		return rc;
	e->backing = host;
	e->backing_len = max_len;
	rte_seqlock_write_unlock(&e->lock);
	return 0;
}

int
wn_mem_mw_alloc(struct wn_mem_table *t, uint32_t pd, int type, uint8_t key, uint32_t *stag)
{
	struct entry *e;
	int rc;

	if (t == NULL || stag == NULL || (type != 1 && type != 2))
		return -EINVAL;
	rc = entry_new(t, pd, type == 1 ? WN_MEM_T_MW1 : WN_MEM_T_MW2, key, &e, stag);
	if (rc != 0)
		return rc;
	rte_seqlock_write_unlock(&e->lock);
	return 0;
}

/* Drop a window's binding (caller holds the window's write lock). */
static void
mw_unbind_locked(struct wn_mem_table *t, struct entry *mw)
{
	struct entry *mr;

	if (mw->parent != 0) {
		mr = &t->e[mw->parent];
		rte_seqlock_write_lock(&mr->lock);
		mr->bound--;
		rte_seqlock_write_unlock(&mr->lock);
		mw->parent = 0;
	}
	mw->valid = 0;
	mw->qp = 0;
}

int
wn_mem_destroy(struct wn_mem_table *t, uint32_t stag)
{
	uint32_t idx = wn_mem_stag_index(stag);
	struct entry *e;
	uint32_t pd;

	if (t == NULL || idx == 0 || idx >= t->capacity)
		return -ENOENT;
	e = &t->e[idx];
	rte_seqlock_write_lock(&e->lock);
	if (e->type == WN_MEM_T_FREE || e->key != wn_mem_stag_key(stag)) {
		rte_seqlock_write_unlock(&e->lock);
		return -ENOENT;
	}
	if ((e->type == WN_MEM_T_MR || e->type == WN_MEM_T_FRMR) && e->bound != 0) {
		rte_seqlock_write_unlock(&e->lock);
		return -EBUSY;
	}
	if (e->type == WN_MEM_T_MW1 || e->type == WN_MEM_T_MW2)
		mw_unbind_locked(t, e);
	e->valid = 0;
	pd = e->pd;
	rte_seqlock_write_unlock(&e->lock);

	/* No new lookup can succeed now; wait until none is still using the old snapshot. */
	if (t->qs != NULL)
		rte_rcu_qsbr_synchronize(t->qs, RTE_QSBR_THRID_INVALID);

	rte_seqlock_write_lock(&e->lock);
	e->type = WN_MEM_T_FREE;
	e->host = NULL;
	e->backing = NULL;
	rte_seqlock_write_unlock(&e->lock);
	t->pd_ref[pd]--;
	t->free_idx[t->n_free++] = idx;
	return 0;
}

int
wn_mem_mr_swap(struct wn_mem_table *t, uint32_t a, uint32_t b)
{
	uint32_t ia = wn_mem_stag_index(a), ib = wn_mem_stag_index(b);
	struct entry *ea, *eb, *lo, *hi;
	uint32_t pd, access;
	uint64_t base, len;
	uint8_t *host;
	int ret = 0;

	if (t == NULL || ia == 0 || ia >= t->capacity || ib == 0 || ib >= t->capacity)
		return -ENOENT;
	if (ia == ib)
		return -EINVAL;
	ea = &t->e[ia];
	eb = &t->e[ib];
	/* in index order: nothing else holds two MR entries' locks (a bind: window, then MR) */
	lo = ia < ib ? ea : eb;
	hi = ia < ib ? eb : ea;
	rte_seqlock_write_lock(&lo->lock);
	rte_seqlock_write_lock(&hi->lock);
	if (ea->type == WN_MEM_T_FREE || ea->key != wn_mem_stag_key(a) ||
	    eb->type == WN_MEM_T_FREE || eb->key != wn_mem_stag_key(b))
		ret = -ENOENT;
	else if (ea->type != WN_MEM_T_MR || eb->type != WN_MEM_T_MR || !ea->valid)
		ret = -EINVAL;
	else if (ea->bound != 0 || eb->bound != 0)
		ret = -EBUSY;
	if (ret == 0) {
		pd = ea->pd;
		access = ea->access;
		base = ea->base;
		len = ea->len;
		host = ea->host;
		ea->pd = eb->pd;
		ea->access = eb->access;
		ea->base = eb->base;
		ea->len = eb->len;
		ea->host = eb->host;
		eb->pd = pd;
		eb->access = access;
		eb->base = base;
		eb->len = len;
		eb->host = host;
	}
	rte_seqlock_write_unlock(&hi->lock);
	rte_seqlock_write_unlock(&lo->lock);
	return ret;
}

/* The checks shared by every lookup, on a consistent snapshot. */
static enum wn_mem_verdict
snap_check(const struct snap *s, uint32_t stag, uint64_t to, uint64_t len, uint32_t access,
	   uint32_t pd, uint32_t qp)
{
	bool local = (access & (WN_MEM_ACCESS_LOCAL_READ | WN_MEM_ACCESS_LOCAL_WRITE)) != 0;
	uint32_t have = s->access | WN_MEM_ACCESS_LOCAL_READ;
	uint64_t off;

	/* RFC 5041 §7.1 / RFC 5040 §7.2: the STag must be valid ... */
	if (s->type == WN_MEM_T_FREE || !s->valid || s->key != wn_mem_stag_key(stag))
		return WN_MEM_E_INVALID_STAG;
	/* lkeys name MRs only; windows serve remote access */
	if (local && (s->type == WN_MEM_T_MW1 || s->type == WN_MEM_T_MW2))
		return WN_MEM_E_INVALID_STAG;
	/* ... and associated with this stream (RFC 5042 §5) */
	if (s->pd != pd || (s->type == WN_MEM_T_MW2 && s->qp != qp))
		return WN_MEM_E_NOT_ASSOC;
	if ((access & ~WN_MEM_ACCESS_ZERO_BASED & ~have) != 0)
		return WN_MEM_E_ACCESS;
	/* RFC 5041 §7.1: the 64-bit TO + length must not wrap ... */
	if (len != 0 && len - 1 > UINT64_MAX - to)
		return WN_MEM_E_TO_WRAP;
	/* ... and [to, to + len) must lie in [base, base + length) */
	if (to < s->base)
		return WN_MEM_E_BOUNDS;
	off = to - s->base;
	if (off > s->len || len > s->len - off)
		return WN_MEM_E_BOUNDS;
	return WN_MEM_OK;
}

enum wn_mem_verdict
wn_mem_check(const struct wn_mem_table *t, uint32_t stag, uint64_t to, uint64_t len,
	     uint32_t access, uint32_t pd, uint32_t qp, uint8_t **host)
{
	const struct entry *e = entry_of(t, stag);
	enum wn_mem_verdict v;
	struct snap s;

	if (e == NULL)
		return WN_MEM_E_INVALID_STAG;
	snap_read(e, &s);
	v = snap_check(&s, stag, to, len, access, pd, qp);
	/* RFC 5042 §5: what passes lies inside the region */
	assert(v != WN_MEM_OK || (to >= s.base && to - s.base <= s.len && len <= s.len - (to - s.base)));
	if (v == WN_MEM_OK && host != NULL)
		*host = s.host + (to - s.base);
	return v;
}

enum wn_mem_verdict
wn_mem_check_cached(const struct wn_mem_table *t, struct wn_mem_cached *c, uint32_t stag,
		    uint64_t to, uint64_t len, uint32_t access, uint32_t pd, uint32_t qp,
		    uint8_t **host)
{
	const struct entry *e = c->e;
	enum wn_mem_verdict v;
	struct snap s;
	uint32_t sn;

	if (e != NULL && c->stag == stag && c->access == access && c->pd == pd && c->qp == qp &&
	    __atomic_load_n(&e->lock.count.sn, __ATOMIC_ACQUIRE) == c->sn) {
		/* the entry is as it was when it passed: only the range is new (RFC 5041 §7.1) */
		if ((len != 0 && len - 1 > UINT64_MAX - to) || to < c->base ||
		    to - c->base > c->len || len > c->len - (to - c->base))
			return wn_mem_check(t, stag, to, len, access, pd, qp, host);
		if (host != NULL)
			*host = c->host + (to - c->base);
		return WN_MEM_OK;
	}
	e = entry_of(t, stag);
	if (e == NULL)
		return WN_MEM_E_INVALID_STAG;
	do {
		sn = rte_seqlock_read_begin(&e->lock);
		s.type = e->type;
		s.valid = e->valid;
		s.key = e->key;
		s.pd = e->pd;
		s.qp = e->qp;
		s.access = e->access;
		s.base = e->base;
		s.len = e->len;
		s.host = e->host;
	} while (rte_seqlock_read_retry(&e->lock, sn));
	v = snap_check(&s, stag, to, len, access, pd, qp);
	if (v != WN_MEM_OK)
		return v;
	*c = (struct wn_mem_cached){ .stag = stag, .access = access, .pd = pd, .qp = qp, .sn = sn,
				     .e = e, .base = s.base, .len = s.len, .host = s.host };
	if (host != NULL)
		*host = s.host + (to - s.base);
	return WN_MEM_OK;
}

struct wn_mem_term
wn_mem_term_of(enum wn_mem_verdict v, enum wn_mem_layer layer)
{
	/* RFC 5040 Fig. 9 (RDMAP, EType 1) and RFC 5041 §7.2 (DDP, EType 1) */
	static const uint8_t rdmap[] = {
		[WN_MEM_E_INVALID_STAG] = 0x00, [WN_MEM_E_BOUNDS] = 0x01,
		[WN_MEM_E_ACCESS] = 0x02, [WN_MEM_E_NOT_ASSOC] = 0x03,
		[WN_MEM_E_TO_WRAP] = 0x04, [WN_MEM_E_CANT_INVALIDATE] = 0x09,
	};
	static const uint8_t ddp[] = {
		[WN_MEM_E_INVALID_STAG] = 0x00, [WN_MEM_E_BOUNDS] = 0x01,
		[WN_MEM_E_NOT_ASSOC] = 0x02, [WN_MEM_E_TO_WRAP] = 0x03,
	};
	struct wn_mem_term r = { 0, 0, 0 };

	if (v == WN_MEM_OK || (unsigned int)v >= RTE_DIM(rdmap))
		return r;
	r.etype = 1;
	if (layer == WN_MEM_LAYER_DDP && v != WN_MEM_E_ACCESS && v != WN_MEM_E_CANT_INVALIDATE) {
		r.layer = 1;
		r.code = ddp[v];
	} else {
		r.layer = 0;
		r.code = rdmap[v];
	}
	return r;
}

uint8_t
wn_mem_local_wc_status(enum wn_mem_verdict v)
{
	return v == WN_MEM_OK ? 0 : 4; /* IBV_WC_SUCCESS, IBV_WC_LOC_PROT_ERR */
}

const char *
wn_mem_verdict_str(enum wn_mem_verdict v)
{
	switch (v) {
	case WN_MEM_OK: return "ok";
	case WN_MEM_E_INVALID_STAG: return "invalid STag";
	case WN_MEM_E_NOT_ASSOC: return "STag not associated";
	case WN_MEM_E_ACCESS: return "access rights violation";
	case WN_MEM_E_TO_WRAP: return "TO wrap";
	case WN_MEM_E_BOUNDS: return "base or bounds violation";
	case WN_MEM_E_CANT_INVALIDATE: return "STag cannot be invalidated";
	}
	return "unknown";
}

uint8_t *
wn_mem_resolve(const struct wn_mem_table *t, uint32_t stag, uint64_t to, uint64_t len,
	       uint32_t access, uint32_t pd, uint32_t qp, enum wn_mem_layer layer,
	       struct wn_mem_term *term)
{
	uint8_t *host = NULL;
	enum wn_mem_verdict v = wn_mem_check(t, stag, to, len, access, pd, qp, &host);

	if (v == WN_MEM_OK)
		return host;
	if (term != NULL)
		*term = wn_mem_term_of(v, layer);
	return NULL;
}

/* Writable entry at @p stag's index, or NULL. */
static struct entry *
entry_w(struct wn_mem_table *t, uint32_t stag)
{
	uint32_t idx = wn_mem_stag_index(stag);

	if (t == NULL || idx == 0 || idx >= t->capacity)
		return NULL;
	return &t->e[idx];
}

enum wn_mem_verdict
wn_mem_fast_reg(struct wn_mem_table *t, uint32_t new_stag, uint32_t pd, uint64_t iova,
		uint64_t length, uint64_t offset, uint32_t access)
{
	struct entry *e = entry_w(t, new_stag);
	enum wn_mem_verdict v = WN_MEM_OK;
	uint64_t base = (access & WN_MEM_ACCESS_ZERO_BASED) ? 0 : iova;

	if (e == NULL)
		return WN_MEM_E_INVALID_STAG;
	rte_seqlock_write_lock(&e->lock);
	if (e->type != WN_MEM_T_FRMR || e->valid)
		v = WN_MEM_E_INVALID_STAG;
	else if (e->pd != pd)
		v = WN_MEM_E_NOT_ASSOC;
	else if (!access_ok(access) || (access & WN_MEM_ACCESS_MW_BIND))
		v = WN_MEM_E_ACCESS;
	else if (length == 0 || offset > e->backing_len || length > e->backing_len - offset)
		v = WN_MEM_E_BOUNDS;
	else if (length - 1 > UINT64_MAX - base)
		v = WN_MEM_E_TO_WRAP;
	if (v == WN_MEM_OK) {
		e->key = wn_mem_stag_key(new_stag);
		e->access = access;
		e->base = base;
		e->len = length;
		e->host = e->backing + offset;
		e->valid = 1;
	}
	rte_seqlock_write_unlock(&e->lock);
	return v;
}

enum wn_mem_verdict
wn_mem_mw_bind(struct wn_mem_table *t, uint32_t mw_stag, uint32_t mr_lkey, uint32_t pd,
	       uint32_t qp, uint64_t addr, uint64_t length, uint32_t access)
{
	struct entry *mw = entry_w(t, mw_stag);
	struct entry *mr = entry_w(t, mr_lkey);
	enum wn_mem_verdict v = WN_MEM_OK;
	uint32_t remote = WN_MEM_ACCESS_REMOTE_READ | WN_MEM_ACCESS_REMOTE_WRITE |
			  WN_MEM_ACCESS_REMOTE_ATOMIC | WN_MEM_ACCESS_ZERO_BASED;
	uint64_t off = 0;

	/* a type 1 unbind (length 0) names no MR (ibv_bind_mw with bind_info.mr NULL) */
	if (mw == NULL || (mr == NULL && length != 0) || mw == mr)
		return WN_MEM_E_INVALID_STAG;
	/* lock order: window, then MR (as in wn_mem_destroy() and wn_mem_invalidate()) */
	rte_seqlock_write_lock(&mw->lock);
	if (mw->type != WN_MEM_T_MW1 && mw->type != WN_MEM_T_MW2)
		v = WN_MEM_E_INVALID_STAG;
	else if (mw->type == WN_MEM_T_MW2 && mw->valid)
		v = WN_MEM_E_INVALID_STAG; /* type 2: invalidate before rebinding */
	else if (mw->pd != pd)
		v = WN_MEM_E_NOT_ASSOC;
	else if (mw->type == WN_MEM_T_MW1 && length == 0) {
		mw_unbind_locked(t, mw);
		rte_seqlock_write_unlock(&mw->lock);
		return WN_MEM_OK;
	}
	if (v != WN_MEM_OK) {
		rte_seqlock_write_unlock(&mw->lock);
		return v;
	}
	if (mr == NULL) {
		rte_seqlock_write_unlock(&mw->lock);
		return WN_MEM_E_INVALID_STAG;
	}
	if (mw->valid)
		mw_unbind_locked(t, mw); /* type 1 rebinding drops the old binding first */
	rte_seqlock_write_lock(&mr->lock);
	if ((mr->type != WN_MEM_T_MR && mr->type != WN_MEM_T_FRMR) || !mr->valid ||
	    mr->key != wn_mem_stag_key(mr_lkey))
		v = WN_MEM_E_INVALID_STAG;
	else if (mr->pd != pd)
		v = WN_MEM_E_NOT_ASSOC;
	else if (!(mr->access & WN_MEM_ACCESS_MW_BIND) || (access & ~remote) != 0 ||
		 ((access & (WN_MEM_ACCESS_REMOTE_WRITE | WN_MEM_ACCESS_REMOTE_ATOMIC)) &&
		  !(mr->access & WN_MEM_ACCESS_LOCAL_WRITE)))
		v = WN_MEM_E_ACCESS;
	else if (length == 0)
		v = WN_MEM_E_BOUNDS;
	else if (length - 1 > UINT64_MAX - addr)
		v = WN_MEM_E_TO_WRAP;
	else if (addr < mr->base || (off = addr - mr->base) > mr->len || length > mr->len - off)
		v = WN_MEM_E_BOUNDS;
	if (v == WN_MEM_OK) {
		mr->bound++;
		mw->parent = wn_mem_stag_index(mr_lkey);
		mw->key = wn_mem_stag_key(mw_stag);
		mw->qp = mw->type == WN_MEM_T_MW2 ? qp : 0;
		mw->access = access;
		mw->base = (access & WN_MEM_ACCESS_ZERO_BASED) ? 0 : addr;
		mw->len = length;
		mw->host = mr->host + off;
		mw->valid = 1;
	}
	rte_seqlock_write_unlock(&mr->lock);
	rte_seqlock_write_unlock(&mw->lock);
	return v;
}

enum wn_mem_verdict
wn_mem_invalidate(struct wn_mem_table *t, uint32_t stag, uint32_t pd, uint32_t qp, bool remote)
{
	struct entry *e = entry_w(t, stag);
	enum wn_mem_verdict v = WN_MEM_OK;

	RTE_SET_USED(remote);
	if (e == NULL)
		return WN_MEM_E_INVALID_STAG;
	rte_seqlock_write_lock(&e->lock);
	if (e->type == WN_MEM_T_FREE || !e->valid || e->key != wn_mem_stag_key(stag))
		v = WN_MEM_E_INVALID_STAG;
	else if (e->pd != pd || (e->type == WN_MEM_T_MW2 && e->qp != qp))
		v = WN_MEM_E_NOT_ASSOC;
	else if (e->type != WN_MEM_T_FRMR && e->type != WN_MEM_T_MW2)
		v = WN_MEM_E_CANT_INVALIDATE; /* RFC 5040 §5.3; verbs: MRs and type 1 MWs */
	else if (e->type == WN_MEM_T_FRMR && e->bound != 0)
		v = WN_MEM_E_CANT_INVALIDATE;
	if (v == WN_MEM_OK) {
		if (e->type == WN_MEM_T_MW2)
			mw_unbind_locked(t, e);
		e->valid = 0;
	}
	rte_seqlock_write_unlock(&e->lock);
	return v;
}

int
wn_mem_info(const struct wn_mem_table *t, uint32_t stag, struct wn_mem_info *info)
{
	const struct entry *e = entry_of(t, stag);
	struct snap s;

	if (e == NULL || info == NULL)
		return -ENOENT;
	snap_read(e, &s);
	if (s.type == WN_MEM_T_FREE)
		return -ENOENT;
	info->type = (enum wn_mem_type)s.type;
	info->valid = s.valid != 0;
	info->key = s.key;
	info->pd = s.pd;
	info->qp = s.qp;
	info->access = s.access;
	info->base = s.base;
	info->length = s.len;
	info->host = s.host;
	info->bound = e->bound;
	return 0;
}
