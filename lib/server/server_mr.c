/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Protection domains, memory regions, memory windows and fast-register MRs: the objects that
 * hold the client's pages mapped once here, their STags in lib/mem's table (RFC 5040 §2.1
 * "STag").
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "srv_priv.h"
#include "wn_mem.h"

int
wn_server_h_alloc_pd(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	int num = wn_mem_pd_alloc(srv->mem);
	struct obj *pd;

	if (num <= 0)
		return num < 0 ? num : -ENOMEM;
	pd = wn_server_obj_new(srv, rq->c, OBJ_PD);
	if (pd == NULL) {
		wn_mem_pd_free(srv->mem, (uint32_t)num);
		return -ENOMEM;
	}
	pd->u.pd.num = (uint32_t)num;
	rs->u.hd.handle = pd->handle;
	return 0;
}

int
wn_server_pd_destroy(struct wn_server *srv, struct obj *pd)
{
	wn_mem_pd_free(srv->mem, pd->u.pd.num);
	wn_server_obj_free(srv, pd);
	return 0;
}

/*
 * The MR's memory: the objects that hold the client's pages (a memfd, a file of tmpfs, POSIX
 * or SysV shm, hugetlbfs or a disk filesystem), each mapped here MAP_SHARED, the pieces one
 * after the other as they follow each other in the client, in a span aligned as the client's
 * is, so hugepages land on hugepage boundaries. The pages stay the client's: what the
 * dataplane writes, the client and everyone sharing the object see.
 */

/* The object of a piece the client could not open itself: its mapping, checked here. */
static int
peer_open(pid_t pid, const struct wn_ctl_mr_piece *p, bool writable, int *fdp)
{
	char path[64], line[512], perms[8];
	unsigned int maj, min;
	uint64_t lo = 0, hi = 0, off = 0, ino = 0;
	bool found = false;
	struct stat st;
	FILE *f;
	int fd;

	if (pid <= 0)
		return -EPERM;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64, &lo, &hi,
			   perms, &off, &maj, &min, &ino) != 7)
			continue;
		if (p->addr >= lo && p->addr < hi) {
			found = true;
			break;
		}
	}
	fclose(f);
	/* one shared mapping holds the whole piece, at its offset, with the access it needs */
	if (!found || p->addr + p->len > hi || perms[0] != 'r' || perms[3] != 's' ||
	    (writable && perms[1] != 'w') || off > UINT64_MAX - (p->addr - lo) ||
	    off + (p->addr - lo) != p->offset)
		return -EFAULT;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, lo, hi);
	fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return errno == ENOENT ? -EFAULT : -errno;
	if (fstat(fd, &st) != 0 || st.st_ino != ino || major(st.st_dev) != maj ||
	    minor(st.st_dev) != min) {
		close(fd);
		return -EFAULT; /* the client mapped something else there meanwhile */
	}
	*fdp = fd;
	return 0;
}

/*
 * Map piece @p p of object @p fd at @p at and fault it in, as pinning would: a page the
 * object cannot give (beyond its end, no free hugepage) fails the registration now rather
 * than the dataplane's access later. Shared memory is faulted in for writing when the MR
 * writes; a disk file only for reading, so that its pages are not all made dirty. With
 * @p dma (a NIC DMA-maps every region: VFIO pins its pages for writing, whatever the MR's
 * rights) a piece whose descriptor allows it is mapped writable too; lib/mem's checks still
 * decide what the peer may write.
 */
static int
piece_map(uint8_t *at, const struct wn_ctl_mr_piece *p, int fd, bool writable, bool dma)
{
	struct statfs sfs;
	struct stat st;
	bool huge, shm;
	int advice;

	if (fstat(fd, &st) != 0 || fstatfs(fd, &sfs) != 0)
		return -errno;
	if (dma && !writable && (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR)
		writable = true;
	if (!S_ISREG(st.st_mode))
		return -EFAULT; /* a device's memory is not the program's pages */
	huge = sfs.f_type == HUGETLBFS_MAGIC;
	shm = huge || sfs.f_type == TMPFS_MAGIC;
	if (huge ? (uint64_t)sfs.f_bsize != (uint64_t)1 << p->page_shift : p->page_shift != 12)
		return -EINVAL;
	if ((uint64_t)st.st_size < p->offset + p->len)
		return -EFAULT;
	if (mmap(at, p->len, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED | MAP_FIXED, fd,
		 (off_t)p->offset) == MAP_FAILED)
		return -errno;
	advice = writable && shm ? MADV_POPULATE_WRITE : MADV_POPULATE_READ;
	if (madvise(at, p->len, advice) != 0 && errno != EINVAL)
		return -errno;
	return 0;
}

/* A run of pieces of one page size is complete: guard it against SIGBUS. */
static int
mr_guard_run(struct obj *mr, uint64_t end)
{
	int *g, slot;

	if (end == mr->u.mr.run_off)
		return 0;
	g = realloc(mr->u.mr.guards, (mr->u.mr.n_guards + 1) * sizeof(*g));
	if (g == NULL)
		return -ENOMEM;
	mr->u.mr.guards = g;
	slot = wn_server_sigbus_add((uint8_t *)mr->u.mr.map + mr->u.mr.run_off,
				    end - mr->u.mr.run_off, mr->u.mr.run_shift);
	if (slot < 0)
		return slot;
	g[mr->u.mr.n_guards++] = slot;
	mr->u.mr.run_off = end;
	return 0;
}

/* Map the next @p n pieces of @p mr (they must start at mr->u.mr.next). */
static int
mr_pieces_add(struct client *c, struct obj *mr, const struct wn_ctl_mr_piece *piece,
	      uint32_t n, const int *fds)
{
	uint32_t i;
	int ret;

	if (n > mr->u.mr.pending || piece[0].addr != mr->u.mr.next)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const struct wn_ctl_mr_piece *p = &piece[i];
		uint64_t off = p->addr - mr->u.mr.first;
		int fd;

		if (off + p->len > mr->u.mr.map_len ||
		    (i + 1 == mr->u.mr.pending && off + p->len != mr->u.mr.map_len))
			return -EINVAL;
		if (p->page_shift != mr->u.mr.run_shift) {
			ret = mr_guard_run(mr, off);
			if (ret != 0)
				return ret;
			mr->u.mr.run_shift = p->page_shift;
		}
		if (p->src == WN_CTL_MR_SRC_PEER) {
			ret = peer_open(c->pid, p, mr->u.mr.writable, &fd);
			if (ret != 0)
				return ret;
		} else {
			fd = fds[p->fd_index];
		}
		ret = piece_map((uint8_t *)mr->u.mr.map + off, p, fd, mr->u.mr.writable,
				mr->u.mr.dma);
		if (p->src == WN_CTL_MR_SRC_PEER)
			close(fd);
		if (ret != 0)
			return ret;
	}
	mr->u.mr.next = piece[n - 1].addr + piece[n - 1].len;
	mr->u.mr.pending -= n;
	return mr->u.mr.pending == 0 ? mr_guard_run(mr, mr->u.mr.map_len) : 0;
}

/*
 * Reserve the span: @p len octets at an address congruent to the client's @p first modulo
 * 2^@p shift, so every piece sits on its own page size's boundaries as in the client.
 */
static void *
span_reserve(uint64_t first, size_t len, uint32_t shift)
{
	size_t align = (size_t)1 << shift;
	uint8_t *raw, *base;

	if (len > SIZE_MAX - align)
		return NULL;
	raw = mmap(NULL, len + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	base = raw + ((first - (uintptr_t)raw) & (align - 1));
	if (base > raw)
		munmap(raw, (size_t)(base - raw));
	if (raw + len + align > base + len)
		munmap(base + len, (size_t)(raw + len + align - (base + len)));
	/* client memory has no business in warpnicd's core dumps */
	madvise(base, len, MADV_DONTDUMP);
	return base;
}

/* The lib/mem entry of a new MR: registered, or a fast-register MR with an invalid STag. */
static int
mr_stag_alloc(struct wn_server *srv, struct obj *mr, uint64_t length, uint64_t iova)
{
	struct wn_server_dp_mr *d = &mr->u.mr.dp;
	struct obj *pd = mr->u.mr.pd;

	/* STag = 24-bit table index + 8-bit key (RFC 5040 §2.1 "STag"), from lib/mem */
	if (mr->u.mr.flags & WN_CTL_MR_F_FAST_REG)
		return wn_mem_frmr_alloc(srv->mem, pd->u.pd.num, d->base, length, srv->next_key++,
					 &d->stag);
	if (mr->u.mr.flags & WN_CTL_MR_F_REREG) /* nothing reaches it before REREG_MR */
		return wn_mem_mr_reserve(srv->mem, pd->u.pd.num, d->base, length, iova,
					 mr->u.mr.access, srv->next_key++, &d->stag);
	return wn_mem_mr_reg(srv->mem, pd->u.pd.num, d->base, length, iova, mr->u.mr.access,
			     srv->next_key++, &d->stag);
}

/* Every piece is mapped: give the MR its STag and tell the dataplane. */
static int
mr_complete(struct wn_server *srv, struct obj *mr)
{
	struct wn_server_dp_mr *d = &mr->u.mr.dp;
	int ret;

	d->base = (uint8_t *)mr->u.mr.map + (mr->u.mr.addr - mr->u.mr.first);
	ret = mr_stag_alloc(srv, mr, d->length, d->iova);
	if (ret != 0)
		return ret;
	if (srv->conf.mr_map != NULL) /* e.g. DMA-mapped for a NIC, before the client sends */
		srv->conf.mr_map(srv->conf.mr_map_arg, d->stag, mr->u.mr.map, mr->u.mr.map_len);
	mr->u.mr.hooked = true;
	wn_server_dp_tell(srv, WN_SERVER_DP_MR_REG, mr->handle, d);
	return 0;
}

static void
mr_resp(const struct obj *mr, struct srv_resp *rs)
{
	rs->u.mr.mr = mr->handle;
	rs->u.mr.pending = mr->u.mr.pending;
	if (mr->u.mr.pending == 0) {
		rs->u.mr.lkey = mr->u.mr.dp.stag;
		rs->u.mr.rkey = mr->u.mr.dp.stag;
	}
}

/* An MR that never reached the dataplane (pieces missing, or a failed registration). */
static void
mr_drop(struct wn_server *srv, struct obj *mr)
{
	mr->u.mr.pd->refs--;
	wn_server_mr_release(srv, mr);
	wn_server_obj_free(srv, mr);
}

int
wn_server_h_reg_mr(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_reg_mr_req *r = rq->body;
	struct obj *pd = wn_server_obj_get(srv, rq->c, r->pd, OBJ_PD), *mr;
	int ret;

	if (pd == NULL || r->length > srv->max_mr_size)
		return -EINVAL;
	mr = wn_server_obj_new(srv, rq->c, OBJ_MR);
	if (mr == NULL)
		return -ENOMEM;
	mr->u.mr.map = span_reserve(r->piece[0].addr, r->span, r->align_shift);
	if (mr->u.mr.map == NULL) {
		wn_server_obj_free(srv, mr);
		return -ENOMEM;
	}
	pd->refs++;
	mr->u.mr.pd = pd;
	mr->u.mr.map_len = r->span;
	mr->u.mr.first = r->piece[0].addr;
	mr->u.mr.next = r->piece[0].addr;
	mr->u.mr.pending = r->n_total;
	mr->u.mr.flags = r->flags;
	mr->u.mr.addr = r->addr;
	mr->u.mr.access = r->access;
	/* as ib_umem_get() pins for writing: a fast-register MR may be given write rights */
	mr->u.mr.dma = srv->conf.mr_map != NULL;
	mr->u.mr.writable = (r->access & WN_CTL_ACCESS_WRITABLE) != 0 ||
			    (r->flags & WN_CTL_MR_F_FAST_REG) != 0;
	mr->u.mr.run_shift = r->piece[0].page_shift;
	mr->u.mr.dp.handle = mr->handle;
	mr->u.mr.dp.pd = pd->u.pd.num;
	mr->u.mr.dp.access = r->access;
	mr->u.mr.dp.iova = r->iova;
	mr->u.mr.dp.length = r->length;
	ret = mr_pieces_add(rq->c, mr, r->piece, r->n_pieces, rq->fds);
	if (ret == 0 && mr->u.mr.pending == 0)
		ret = mr_complete(srv, mr);
	if (ret != 0) {
		mr_drop(srv, mr);
		return ret;
	}
	mr_resp(mr, rs);
	return 0;
}

/* The next pieces of an MR; a failure drops the MR (its handle is gone). */
int
wn_server_h_mr_pieces(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_mr_pieces_req *r = rq->body;
	struct obj *mr = wn_server_obj_get(srv, rq->c, r->mr, OBJ_MR);
	int ret;

	if (mr == NULL || mr->u.mr.pending == 0)
		return -EINVAL;
	ret = mr_pieces_add(rq->c, mr, r->piece, r->n_pieces, rq->fds);
	if (ret == 0 && mr->u.mr.pending == 0)
		ret = mr_complete(srv, mr);
	if (ret != 0) {
		mr_drop(srv, mr);
		return ret;
	}
	mr_resp(mr, rs);
	return 0;
}

/* The device's view of @p stag's index (conf.mr_move): @p mr's mapping, or none (NULL). */
static void
mr_move(struct wn_server *srv, uint32_t stag, const struct obj *mr)
{
	if (srv->conf.mr_move != NULL)
		srv->conf.mr_move(srv->conf.mr_map_arg, stag,
				  mr != NULL && mr->u.mr.hooked ? mr->u.mr.map : NULL);
}

/*
 * REREG_MR: @p mr, registered anew (WN_CTL_MR_F_REREG: its own STag reaches nothing), takes
 * the STag of @p old. lib/mem swaps the two entries under their seqlocks: the old STag reaches
 * the new memory at once, the new STag the old memory (invalid). The old MR then goes as any
 * deregistration under the new STag (lib/mem's grace period; its pages unmapped after the
 * dataplane's DONE), its DONE also waiting for the pins taken through the old STag, which may
 * reference its pages. The device's view of both indexes is none while the entries change,
 * and the old STag's says the new mapping only after that grace period: a lookup from before
 * the swap holds the old pages and checks the index before it pins them.
 */
int
wn_server_h_rereg_mr(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_rereg_mr_req *r = rq->body;
	struct obj *mr = wn_server_obj_get(srv, rq->c, r->mr, OBJ_MR);
	struct obj *old = wn_server_obj_get(srv, rq->c, r->old, OBJ_MR);
	uint32_t keep, give;
	int ret;

	if (mr == NULL || old == NULL || mr == old || mr->u.mr.pending != 0 ||
	    old->u.mr.pending != 0 || mr->u.mr.flags != WN_CTL_MR_F_REREG ||
	    old->u.mr.flags != 0)
		return -EINVAL;
	keep = old->u.mr.dp.stag;
	give = mr->u.mr.dp.stag;
	mr_move(srv, keep, NULL);
	mr_move(srv, give, NULL);
	ret = wn_mem_mr_swap(srv->mem, keep, give);
	if (ret != 0) {
		mr_move(srv, keep, old);
		mr_move(srv, give, mr);
		return ret; /* -EBUSY: windows are bound to the old MR */
	}
	mr_move(srv, give, old); /* invalid, and going */
	mr->u.mr.dp.stag = keep;
	mr->u.mr.flags = 0;
	old->u.mr.dp.stag = give;
	old->u.mr.dp.stag_pins = keep;
	/* nothing binds a window to an STag nobody could look up: this cannot be -EBUSY */
	ret = wn_server_mr_destroy(srv, old);
	if (ret == 0)
		mr_move(srv, keep, mr);
	else /* no grace period: the new region stays copied, never sent in place */
		SRV_LOG(WARNING, "client %u: the old region of a rereg stays: %d", rq->c->id,
			ret);
	mr_resp(mr, rs);
	return 0;
}

int
wn_server_h_alloc_mw(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_alloc_mw_req *r = rq->body;
	struct obj *pd = wn_server_obj_get(srv, rq->c, r->pd, OBJ_PD), *mw;
	int ret;

	if (pd == NULL)
		return -EINVAL;
	mw = wn_server_obj_new(srv, rq->c, OBJ_MW);
	if (mw == NULL)
		return -ENOMEM;
	ret = wn_mem_mw_alloc(srv->mem, pd->u.pd.num, (int)r->type, srv->next_key++,
			      &mw->u.mw.stag);
	if (ret != 0) {
		wn_server_obj_free(srv, mw);
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
wn_server_mr_destroy(struct wn_server *srv, struct obj *mr)
{
	int ret;

	if (mr->u.mr.pending != 0) {
		mr_drop(srv, mr); /* never registered: nothing of it reached the dataplane */
		return 0;
	}
	/* invalid for every lookup, and no lcore still inside it (QSBR grace period) */
	ret = stag_destroy(srv, mr->u.mr.dp.stag);

	if (ret == -EBUSY)
		return ret; /* windows are still bound to it */
	mr->u.mr.pd->refs--;
	wn_server_obj_retire(srv, mr, WN_SERVER_DP_MR_DEREG, &mr->u.mr.dp);
	return 0;
}

int
wn_server_mw_destroy(struct wn_server *srv, struct obj *mw)
{
	stag_destroy(srv, mw->u.mw.stag); /* unbinds it; after the grace period */
	mw->u.mw.pd->refs--;
	wn_server_obj_free(srv, mw);
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

		if (o != NULL && !o->zombie && o->type == OBJ_MR && o->u.mr.pending == 0 &&
		    o->u.mr.dp.stag == stag) {
			p = o->u.mr.dp.base;
			if (len != NULL)
				*len = o->u.mr.dp.length;
			break;
		}
	}
	pthread_mutex_unlock(&srv->lock);
	return p;
}
