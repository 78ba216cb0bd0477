/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protection domains, memory regions, memory windows and fast-register MRs: the client's
 * shared pages mapped once here, their STags in lib/mem's table (RFC 5040 §2.1 "STag").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "srv_priv.h"
#include "wn_mem.h"

int
srv_h_alloc_pd(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	int num = wn_mem_pd_alloc(srv->mem);
	struct obj *pd;

	if (num <= 0)
		return num < 0 ? num : -ENOMEM;
	pd = srv_obj_new(srv, rq->c, OBJ_PD);
	if (pd == NULL) {
		wn_mem_pd_free(srv->mem, (uint32_t)num);
		return -ENOMEM;
	}
	pd->u.pd.num = (uint32_t)num;
	rs->u.hd.handle = pd->handle;
	return 0;
}

int
srv_pd_destroy(struct wn_server *srv, struct obj *pd)
{
	wn_mem_pd_free(srv->mem, pd->u.pd.num);
	srv_obj_free(srv, pd);
	return 0;
}

/* Every piece must be a memfd sealed against shrinking and large enough. */
static int
mr_pieces_check(const struct wn_ctl_reg_mr_req *r, const int *fds)
{
	uint32_t i;

	for (i = 0; i < r->n_pieces; i++) {
		struct stat st;
		int seals = fcntl(fds[i], F_GET_SEALS);

		if (fstat(fds[i], &st) != 0 || !S_ISREG(st.st_mode))
			return -EINVAL;
		if (seals < 0 || (seals & F_SEAL_SHRINK) == 0)
			return -EPERM;
		if ((uint64_t)st.st_size < r->piece[i].fd_offset + r->piece[i].len)
			return -EINVAL;
	}
	return 0;
}

/*
 * Map the pieces of a client MR contiguously. Each piece must be a memfd sealed against
 * shrinking, so a client can never make our accesses fault (SIGBUS) by truncating it.
 */
static int
mr_map(const struct wn_ctl_reg_mr_req *r, const int *fds, void **mapp, size_t *lenp)
{
	size_t total = 0, off = 0;
	uint8_t *base;
	uint32_t i;
	int ret = mr_pieces_check(r, fds);

	if (ret != 0)
		return ret;
	for (i = 0; i < r->n_pieces; i++)
		total += r->piece[i].len;
	base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	for (i = 0; i < r->n_pieces; i++) {
		void *p = mmap(base + off, r->piece[i].len, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_FIXED, fds[i], (off_t)r->piece[i].fd_offset);

		if (p == MAP_FAILED) {
			int err = errno;

			munmap(base, total);
			return -err;
		}
		off += r->piece[i].len;
	}
	*mapp = base;
	*lenp = total;
	return 0;
}

/* The lib/mem entry of a new MR: registered, or a fast-register MR with an invalid STag. */
static int
mr_stag_alloc(struct wn_server *srv, const struct wn_ctl_reg_mr_req *r, struct obj *pd,
	      struct obj *mr)
{
	struct wn_server_dp_mr *d = &mr->u.mr.dp;

	/* STag = 24-bit table index + 8-bit key (RFC 5040 §2.1 "STag"), from lib/mem */
	if (r->flags & WN_CTL_MR_F_FAST_REG)
		return wn_mem_frmr_alloc(srv->mem, pd->u.pd.num, d->base, r->length,
					 srv->next_key++, &d->stag);
	return wn_mem_mr_reg(srv->mem, pd->u.pd.num, d->base, r->length, r->iova, r->access,
			     srv->next_key++, &d->stag);
}

/*
 * The shared mapping of the one piece of @p r (a memfd the client made for a segment): an
 * existing one that covers it, else the whole file mapped now. NULL when the piece cannot
 * share (errno set by a failed mmap; ENOENT: map it on its own).
 */
static struct srv_seg_map *
seg_map_get(struct wn_server *srv, const struct wn_ctl_reg_mr_req *r, int fd)
{
	struct srv_seg_map *m;
	struct stat st;
	void *p;

	if (fstat(fd, &st) != 0)
		return NULL;
	for (m = srv->segs; m != NULL; m = m->next)
		if (m->dev == st.st_dev && m->ino == st.st_ino &&
		    r->piece[0].fd_offset + r->piece[0].len <= m->len) {
			m->refs++;
			return m;
		}
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		free(m);
		return NULL;
	}
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	m->base = p;
	m->len = (size_t)st.st_size;
	m->refs = 1;
	m->next = srv->segs;
	srv->segs = m;
	return m;
}

static void
seg_map_put(struct wn_server *srv, struct srv_seg_map *m)
{
	struct srv_seg_map **pp;

	if (--m->refs > 0)
		return;
	for (pp = &srv->segs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	munmap(m->base, m->len);
	free(m);
}

void
srv_mr_unmap(struct wn_server *srv, struct obj *mr)
{
	if (mr->u.mr.seg != NULL) {
		seg_map_put(srv, mr->u.mr.seg);
		return;
	}
	if (srv->conf.mr_unmap != NULL)
		srv->conf.mr_unmap(srv->conf.mr_map_arg, mr->u.mr.dp.stag, mr->u.mr.map,
				   mr->u.mr.map_len);
	munmap(mr->u.mr.map, mr->u.mr.map_len);
}

int
srv_h_reg_mr(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_reg_mr_req *r = rq->body;
	struct obj *pd = srv_obj_get(srv, rq->c, r->pd, OBJ_PD), *mr;
	struct srv_seg_map *seg = NULL;
	void *map = NULL;
	size_t len = 0;
	int ret;

	if (pd == NULL || r->length > srv->max_mr_size)
		return -EINVAL;
	/*
	 * One piece, and no DMA mapping per MR for a NIC (each needs its own region): share the
	 * segment's mapping. Otherwise the pieces are mapped contiguously for this MR alone.
	 */
	if (r->n_pieces == 1 && srv->conf.mr_map == NULL) {
		ret = mr_pieces_check(r, rq->fds);
		if (ret != 0)
			return ret;
		seg = seg_map_get(srv, r, rq->fds[0]);
		if (seg == NULL)
			return -errno;
		map = seg->base + r->piece[0].fd_offset;
		len = r->piece[0].len;
	} else {
		ret = mr_map(r, rq->fds, &map, &len);
		if (ret != 0)
			return ret;
	}
	mr = srv_obj_new(srv, rq->c, OBJ_MR);
	ret = mr == NULL ? -ENOMEM : 0;
	if (ret == 0) {
		mr->u.mr.dp.base = (uint8_t *)map + (r->addr & (WN_CTL_PAGE_SIZE - 1));
		ret = mr_stag_alloc(srv, r, pd, mr);
		if (ret != 0)
			srv_obj_free(srv, mr);
	}
	if (ret != 0) {
		if (seg != NULL)
			seg_map_put(srv, seg);
		else
			munmap(map, len);
		return ret;
	}
	mr->u.mr.map = map;
	mr->u.mr.map_len = len;
	mr->u.mr.seg = seg;
	pd->refs++;
	mr->u.mr.pd = pd;
	mr->u.mr.dp.handle = mr->handle;
	mr->u.mr.dp.pd = pd->u.pd.num;
	mr->u.mr.dp.access = r->access;
	mr->u.mr.dp.iova = r->iova;
	mr->u.mr.dp.length = r->length;
	if (srv->conf.mr_map != NULL) /* e.g. DMA-mapped for a NIC, before the client sends */
		srv->conf.mr_map(srv->conf.mr_map_arg, mr->u.mr.dp.stag, map, len);
	srv_dp_tell(srv, WN_SERVER_DP_MR_REG, mr->handle, &mr->u.mr.dp);
	rs->u.mr.mr = mr->handle;
	rs->u.mr.lkey = mr->u.mr.dp.stag;
	rs->u.mr.rkey = mr->u.mr.dp.stag;
	return 0;
}

int
srv_h_alloc_mw(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_alloc_mw_req *r = rq->body;
	struct obj *pd = srv_obj_get(srv, rq->c, r->pd, OBJ_PD), *mw;
	int ret;

	if (pd == NULL)
		return -EINVAL;
	mw = srv_obj_new(srv, rq->c, OBJ_MW);
	if (mw == NULL)
		return -ENOMEM;
	ret = wn_mem_mw_alloc(srv->mem, pd->u.pd.num, (int)r->type, srv->next_key++,
			      &mw->u.mw.stag);
	if (ret != 0) {
		srv_obj_free(srv, mw);
		return ret;
	}
	pd->refs++;
	mw->u.mw.pd = pd;
	rs->u.mw.mw = mw->handle;
	rs->u.mw.rkey = mw->u.mw.stag;
	return 0;
}

/*
 * Destroy the lib/mem entry at @p stag's index whatever its key is now: fast-register and
 * bind WQEs give FRMRs and windows new keys (RFC 5040 §2.1 "STag") on the dataplane.
 */
static int
stag_destroy(struct wn_server *srv, uint32_t stag)
{
	struct wn_mem_info info;
	int ret = -ENOENT, tries;

	for (tries = 0; tries < 256 && ret == -ENOENT; tries++) {
		if (wn_mem_info(srv->mem, stag, &info) != 0)
			return -ENOENT;
		ret = wn_mem_destroy(srv->mem, (stag & ~0xffu) | info.key);
	}
	return ret;
}

int
srv_mr_destroy(struct wn_server *srv, struct obj *mr)
{
	/* invalid for every lookup, and no lcore still inside it (QSBR grace period) */
	int ret = stag_destroy(srv, mr->u.mr.dp.stag);

	if (ret == -EBUSY)
		return ret; /* windows are still bound to it */
	mr->u.mr.pd->refs--;
	srv_obj_retire(srv, mr, WN_SERVER_DP_MR_DEREG, &mr->u.mr.dp);
	return 0;
}

int
srv_mw_destroy(struct wn_server *srv, struct obj *mw)
{
	stag_destroy(srv, mw->u.mw.stag); /* unbinds it; after the grace period */
	mw->u.mw.pd->refs--;
	srv_obj_free(srv, mw);
	return 0;
}

struct wn_mem_table *
wn_server_mem(struct wn_server *srv)
{
	return srv->mem;
}

void *
wn_server_mr_lookup(struct wn_server *srv, uint32_t stag, uint64_t *len)
{
	void *p = NULL;
	uint32_t i;

	pthread_mutex_lock(&srv->lock);
	for (i = 0; i < srv->cap; i++) {
		struct obj *o = srv->tab[i];

		if (o != NULL && !o->zombie && o->type == OBJ_MR && o->u.mr.dp.stag == stag) {
			p = o->u.mr.dp.base;
			if (len != NULL)
				*len = o->u.mr.dp.length;
			break;
		}
	}
	pthread_mutex_unlock(&srv->lock);
	return p;
}
