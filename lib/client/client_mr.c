/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Registered memory: the objects that hold a range's pages, handed to warpnicd, which maps
 * them itself (wn_ctl.h "REG_MR and MR_PIECES"); see wn_client.h for what a program sees.
 *
 * Shared memory (a file mapped MAP_SHARED, a memfd, POSIX or SysV shm, hugetlbfs) is passed
 * as it is: its fd and offset (mr_maps.c). Private memory (malloc, the stack, anonymous or
 * MAP_PRIVATE mappings) is in no object warpnicd could map, so it is made into one: a run of
 * private mappings is copied into a sealed memfd (of the same hugepage size), which is then
 * mapped over it at the same address with the same protections, while the run is
 * write-protected (mr_wp.c), so a write by another thread waits and lands in the new pages.
 * Such a segment is reused by later registrations of its pages; when no MR uses it any more
 * its pages become private again (copied back, write-protected the same way), so the
 * program's memory is what it was: fork() copies it, MADV_DONTNEED zeroes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_priv.h"
#include "wn_client.h"

#ifndef MFD_HUGETLB
#define MFD_HUGETLB 4u
#endif
#ifndef MFD_HUGE_SHIFT
#define MFD_HUGE_SHIFT 26
#endif
#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/* Private memory made shareable: [lo, hi) as it was made, now a mapping of memfd fd. */
struct wn_client_seg {
	struct wn_client_seg *next;
	uintptr_t lo, hi;
	uint8_t shift;
	int fd;          /* -1 once made private again (a fork() child) */
	uint64_t dev, ino;
	uint32_t refs;
};

/* Segments and the MRs' spans; held across a fork() (pthread_atfork). */
static pthread_mutex_t seg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct wn_client_seg *seg_list;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WN_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define WN_ASAN 1
#endif

/*
 * Copy whole pages. They hold more than the registered object (neighbouring heap data,
 * allocator metadata), which is the point, so AddressSanitizer must not check the reads.
 */
#ifdef WN_ASAN
#define COPY_BY_MAPPING true /* AddressSanitizer checks what pwrite() reads, too */
__attribute__((no_sanitize("address"))) static void
page_copy(void *dst, const void *src, size_t len)
{
	const volatile uint64_t *s = src;
	uint64_t *d = dst;
	size_t i;

	for (i = 0; i < len / sizeof(uint64_t); i++)
		d[i] = s[i];
}
#else
#define COPY_BY_MAPPING false
static void
page_copy(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
}
#endif

static int
vma_prot(const struct wn_client_vma *v)
{
	return (v->r ? PROT_READ : 0) | (v->w ? PROT_WRITE : 0) | (v->x ? PROT_EXEC : 0);
}

static uintptr_t
max_p(uintptr_t a, uintptr_t b)
{
	return a > b ? a : b;
}

static uintptr_t
min_p(uintptr_t a, uintptr_t b)
{
	return a < b ? a : b;
}

/* ---------------------------------------------------------------- private → memfd */

/* What the thread aside needs to move a run; it writes only done and after the window. */
struct seg_job {
	uintptr_t lo, hi;
	uint8_t shift;
	int fd;
	const struct wn_client_vma *v;
	uint32_t n;
	bool uffd_ok;
	uint32_t done;
};

/*
 * Copy [lo, hi) into the memfd: 4 KiB pages with pwrite(), which fills shmem pages as it
 * allocates them (no zeroing pass); hugetlbfs has no write(), its pages are copied through
 * a mapping.
 */
static int
seg_copy_in(const struct seg_job *j)
{
	size_t len = j->hi - j->lo, done = 0;
	uint8_t *tmp;

	if (j->shift != 12 || COPY_BY_MAPPING) {
		tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, j->fd, 0);
		if (tmp == MAP_FAILED)
			return -errno;
		page_copy(tmp, (const void *)j->lo, len);
		munmap(tmp, len);
		return 0;
	}
	while (done < len) {
		ssize_t n = pwrite(j->fd, (const uint8_t *)j->lo + done, len - done, (off_t)done);

		if (n <= 0)
			return n < 0 && errno != EINTR ? -errno : n == 0 ? -EIO : 0;
		done += (size_t)n;
	}
	return 0;
}

static int
seg_fill(void *arg)
{
	struct seg_job *j = arg;
	struct wn_client_wp w;
	uint32_t i, done = 0;
	int ret;

	ret = wn_client_wp_begin(&w, j->v, j->n, j->lo, j->hi, j->uffd_ok);
	if (ret != 0)
		return ret;
	ret = seg_copy_in(j);
	for (i = 0; ret == 0 && i < j->n; i++) {
		uintptr_t lo = max_p(j->v[i].lo, j->lo), hi = min_p(j->v[i].hi, j->hi);

		if (mmap((void *)lo, hi - lo, vma_prot(&j->v[i]), MAP_SHARED | MAP_FIXED, j->fd,
			 (off_t)(lo - j->lo)) == MAP_FAILED)
			ret = -errno;
		else
			done++;
	}
	wn_client_wp_end(&w, done == j->n);
	j->done = done;
	return ret;
}

static void seg_free(struct wn_client_seg *s, bool aside);

/*
 * Make the private run [lo, hi) (mappings @p v) shareable: a sealed memfd with its content,
 * mapped over it. @return the segment (refs 0), or NULL with *err.
 */
static struct wn_client_seg *
seg_make(uintptr_t lo, uintptr_t hi, uint8_t shift, const struct wn_client_vma *v, uint32_t n,
	 int *err)
{
	unsigned int mflags = MFD_CLOEXEC | MFD_ALLOW_SEALING;
	struct seg_job job = {.lo = lo, .hi = hi, .v = v, .n = n, .uffd_ok = true};
	struct wn_client_seg *s = calloc(1, sizeof(*s));
	struct stat st;
	uint32_t i;

	if (s == NULL) {
		*err = -ENOMEM;
		return NULL;
	}
	if (shift != 12)
		mflags |= MFD_HUGETLB | ((unsigned int)shift << MFD_HUGE_SHIFT);
	s->fd = memfd_create("warpnic-mr", mflags);
	/* sealed against shrinking: warpnicd's mapping of it can never fault */
	if (s->fd < 0 || ftruncate(s->fd, (off_t)(hi - lo)) != 0 ||
	    fcntl(s->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
	    fstat(s->fd, &st) != 0) {
		*err = -errno;
		if (s->fd >= 0)
			close(s->fd);
		free(s);
		return NULL;
	}
	s->lo = lo;
	s->hi = hi;
	s->shift = shift;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	job.fd = s->fd;
	job.shift = shift;
	/* userfaultfd protects anonymous memory and hugetlbfs, not a MAP_PRIVATE file */
	for (i = 0; i < n; i++)
		if (!v[i].anon && v[i].shift == 12)
			job.uffd_ok = false;
	*err = wn_client_aside(seg_fill, &job, lo, hi);
	if (*err != 0) {
		if (job.done > 0)
			seg_free(s, true); /* what moved goes back */
		else {
			close(s->fd);
			free(s);
		}
		return NULL;
	}
	s->next = seg_list;
	seg_list = s;
	return s;
}

/* ---------------------------------------------------------------- memfd → private */

struct priv_job {
	const struct wn_client_vma *v;
	uint8_t shift;
	bool protect; /* other threads may write (not in a fork() child) */
};

static int
seg_privatize_one(void *arg)
{
	struct priv_job *j = arg;
	const struct wn_client_vma *v = j->v;
	size_t len = v->hi - v->lo;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS, ret = 0;
	struct wn_client_wp w;
	void *tmp;

	if (j->shift != 12)
		flags |= MAP_HUGETLB | (j->shift << MAP_HUGE_SHIFT);
	tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (tmp == MAP_FAILED)
		return -errno; /* no free hugepage: it stays shared, content kept */
	if (j->protect)
		ret = wn_client_wp_begin(&w, v, 1, v->lo, v->hi, true);
	if (ret != 0) {
		munmap(tmp, len);
		return ret;
	}
	/* the source's pages mapped first: UFFDIO_COPY takes a slow path for every other one */
	madvise((void *)v->lo, len, MADV_POPULATE_READ);
	if (wn_client_uffd_copy(tmp, (const void *)v->lo, len) != 0)
		page_copy(tmp, (const void *)v->lo, len);
	if (vma_prot(v) != (PROT_READ | PROT_WRITE))
		mprotect(tmp, len, vma_prot(v));
	if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)v->lo) == MAP_FAILED) {
		ret = -errno;
		munmap(tmp, len);
	}
	if (j->protect)
		wn_client_wp_end(&w, ret == 0);
	return ret;
}

/*
 * Make every mapping of @p s private again, wherever the program has it now (it may have
 * unmapped or moved some), and close its memfd. @p aside: other threads run (write
 * protection on a thread aside); else this is a fork() child's only thread.
 */
/* A fork() child's scan: the segment's mappings, into a fixed array (no malloc). */
struct child_scan {
	const struct wn_client_seg *s;
	struct wn_client_vma v[16];
	uint32_t n;
	bool more;
};

static int
child_scan_cb(const struct wn_client_vma *v, void *arg)
{
	struct child_scan *c = arg;

	if (!v->shared || v->dev != c->s->dev || v->ino != c->s->ino)
		return 0;
	if (c->n == 16) {
		c->more = true;
		return 1;
	}
	c->v[c->n++] = *v;
	return 0;
}

static void
seg_privatize(struct wn_client_seg *s, bool aside)
{
	struct child_scan cs = {.s = s, .more = true};
	struct wn_client_vma *v;
	uint32_t n, i;

	if (s->fd < 0)
		return;
	if (!aside) {
		/*
		 * A fork() child: until its copy is private, what it writes reaches the parent's
		 * pages, so nothing here may malloc (the heap may be among them).
		 */
		while (cs.more) {
			cs.more = false;
			cs.n = 0;
			wn_client_maps_scan(child_scan_cb, &cs);
			for (i = 0; i < cs.n; i++) {
				struct priv_job j = {.v = &cs.v[i], .shift = s->shift};

				if (seg_privatize_one(&j) != 0)
					cs.more = false;
			}
		}
	} else if (wn_client_maps_of(s->dev, s->ino, &v, &n) == 0) {
		for (i = 0; i < n; i++) {
			struct priv_job j = {.v = &v[i], .shift = s->shift, .protect = true};

			wn_client_aside(seg_privatize_one, &j, v[i].lo, v[i].hi);
		}
		free(v);
	}
	close(s->fd);
	s->fd = -1;
}

static void
seg_free(struct wn_client_seg *s, bool aside)
{
	struct wn_client_seg **pp;

	seg_privatize(s, aside);
	for (pp = &seg_list; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	free(s);
}

static struct wn_client_seg *
seg_find(uint64_t dev, uint64_t ino)
{
	struct wn_client_seg *s;

	for (s = seg_list; s != NULL; s = s->next)
		if (s->fd >= 0 && s->dev == dev && s->ino == ino)
			return s;
	return NULL;
}

/* ---------------------------------------------------------------- fork() */

/*
 * fork() copies private memory; the memfd a segment made of it would be shared with the
 * child instead, so the child makes its copy private again at once (as Linux's copy on fork
 * of pinned pages gives a child its own copy, ibv_is_fork_initialized() UNNEEDED). Shared
 * objects stay shared, as they are for any child.
 */
static void
atfork_prepare(void)
{
	pthread_mutex_lock(&seg_lock);
}

static void
atfork_parent(void)
{
	pthread_mutex_unlock(&seg_lock);
}

/* The segments stay listed, without memfd, for the references the child's MRs hold. */
static void
atfork_child(void)
{
	struct wn_client_seg *s;

	for (s = seg_list; s != NULL; s = s->next)
		seg_privatize(s, false);
	pthread_mutex_unlock(&seg_lock);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void
atfork_register(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* ---------------------------------------------------------------- pieces */

struct share_build {
	struct wn_client_share *sh;
	uint32_t cap, segs_cap;
};

/* Append a piece, merged into the last one when it continues it in the same object. */
static int
piece_add(struct share_build *b, uintptr_t addr, uintptr_t end, uint64_t off, uint8_t shift,
	  int fd, bool own, bool peer)
{
	struct wn_client_share *sh = b->sh;
	struct wn_ctl_mr_piece *last = sh->n > 0 ? &sh->piece[sh->n - 1] : NULL;

	if (last != NULL && !peer && last->src == WN_CTL_MR_SRC_FD && sh->fd[sh->n - 1] == fd &&
	    last->page_shift == shift && last->offset + last->len == off) {
		last->len += end - addr;
		if (own)
			close(fd);
		return 0;
	}
	if (sh->n == WN_CTL_MR_PIECES_MAX)
		return -E2BIG;
	if (sh->n == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 8;
		struct wn_ctl_mr_piece *p = realloc(sh->piece, cap * sizeof(*p));
		int *f;
		bool *o;

		if (p == NULL)
			return -ENOMEM;
		sh->piece = p;
		f = realloc(sh->fd, cap * sizeof(*f));
		if (f == NULL)
			return -ENOMEM;
		sh->fd = f;
		o = realloc(sh->fd_own, cap * sizeof(*o));
		if (o == NULL)
			return -ENOMEM;
		sh->fd_own = o;
		b->cap = cap;
	}
	memset(&sh->piece[sh->n], 0, sizeof(sh->piece[0]));
	sh->piece[sh->n].addr = addr;
	sh->piece[sh->n].len = end - addr;
	sh->piece[sh->n].offset = off;
	sh->piece[sh->n].page_shift = shift;
	sh->piece[sh->n].src = peer ? WN_CTL_MR_SRC_PEER : WN_CTL_MR_SRC_FD;
	sh->fd[sh->n] = peer ? -1 : fd;
	sh->fd_own[sh->n] = own;
	sh->n++;
	if (shift > sh->align_shift)
		sh->align_shift = shift;
	return 0;
}

static int
seg_ref(struct share_build *b, struct wn_client_seg *s)
{
	struct wn_client_share *sh = b->sh;

	if (sh->n_segs == b->segs_cap) {
		uint32_t cap = b->segs_cap ? b->segs_cap * 2 : 4;
		struct wn_client_seg **g = realloc(sh->segs, cap * sizeof(*g));

		if (g == NULL)
			return -ENOMEM;
		sh->segs = g;
		b->segs_cap = cap;
	}
	s->refs++;
	sh->segs[sh->n_segs++] = s;
	return 0;
}

/*
 * A shared mapping: its object as it is, ours if it is a segment; @p fd opened by
 * vmas_check() (-1: warpnicd opens it), now the piece's.
 */
static int
share_vma(struct share_build *b, struct wn_client_vma *v, uintptr_t lo, uintptr_t hi, int fd)
{
	struct wn_client_seg *s = seg_find(v->dev, v->ino);
	uint64_t off = v->off + (lo - v->lo);
	int ret;

	if (s != NULL) {
		ret = seg_ref(b, s);
		return ret != 0 ? ret : piece_add(b, lo, hi, off, s->shift, s->fd, false, false);
	}
	ret = piece_add(b, lo, hi, off, v->shift, fd, fd >= 0, fd < 0);
	if (ret != 0 && fd >= 0)
		close(fd);
	return ret;
}

/*
 * Each mapping's fitness for the MR, its page size, and for a shared one not ours an fd of
 * its object in @p fds (-1: none could be opened here).
 */
static int
vmas_check(struct wn_client_vma *v, uint32_t n, bool writable, int *fds)
{
	uint32_t i;
	int ret;

	for (i = 0; i < n; i++) {
		struct wn_client_seg *s;

		/* as pinning fails on them: no access, kernel pages, read-only for writing */
		if (!v[i].r || v[i].special || (writable && !v[i].w))
			return -EFAULT;
		s = v[i].shared ? seg_find(v[i].dev, v[i].ino) : NULL;
		if (s != NULL) {
			v[i].shift = s->shift;
			continue;
		}
		if (v[i].shared) {
			fds[i] = wn_client_vma_open(&v[i], writable);
			if (fds[i] < 0 && fds[i] != -ENOENT)
				return fds[i];
			if (fds[i] < 0)
				fds[i] = -1;
		}
		ret = wn_client_vma_shift(&v[i], fds[i]);
		if (ret != 0)
			return ret;
	}
	return 0;
}

static int
share_locked(uintptr_t a, size_t len, bool writable, struct share_build *b)
{
	struct wn_client_share *sh = b->sh;
	uintptr_t lo = a & ~(uintptr_t)4095, hi = (a + len + 4095) & ~(uintptr_t)4095, first;
	struct wn_client_vma *v;
	uint32_t n, i, j;
	int *fds, ret;

	ret = wn_client_maps_read(lo, hi, &v, &n);
	if (ret != 0)
		return ret;
	fds = malloc(n * sizeof(*fds));
	if (fds == NULL) {
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		fds[i] = -1;
	ret = vmas_check(v, n, writable, fds);
	if (ret != 0)
		goto out;
	/* a hugepage at either end is registered whole */
	lo = a & ~(((uintptr_t)1 << v[0].shift) - 1);
	hi = (a + len + ((uintptr_t)1 << v[n - 1].shift) - 1) &
	     ~(((uintptr_t)1 << v[n - 1].shift) - 1);
	first = lo;
	for (i = 0; i < n && ret == 0; i = j) {
		uintptr_t rlo = max_p(v[i].lo, lo), rhi;
		struct wn_client_seg *s;

		if (v[i].shared) {
			ret = share_vma(b, &v[i], rlo, min_p(v[i].hi, hi), fds[i]);
			fds[i] = -1;
			j = i + 1;
			continue;
		}
		/* a run of private mappings of one page size becomes one segment */
		for (j = i + 1; j < n && !v[j].shared && v[j].shift == v[i].shift; j++)
			;
		rhi = min_p(v[j - 1].hi, hi);
		s = seg_make(rlo, rhi, v[i].shift, &v[i], j - i, &ret);
		if (s == NULL)
			break;
		ret = seg_ref(b, s);
		if (ret == 0)
			ret = piece_add(b, rlo, rhi, 0, s->shift, s->fd, false, false);
	}
	sh->span = hi - first;
out:
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(v);
	return ret;
}

int
wn_client_share(void *addr, size_t len, bool writable, struct wn_client_share *sh)
{
	struct share_build b = {.sh = sh};
	uintptr_t a = (uintptr_t)addr;
	int ret;

	memset(sh, 0, sizeof(*sh));
	sh->align_shift = 12;
	if (sysconf(_SC_PAGESIZE) != 4096)
		return -EOPNOTSUPP;
	if (len == 0 || a + len < a || a + len > UINTPTR_MAX - (1u << 30))
		return -EINVAL;
	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&seg_lock);
	ret = share_locked(a, len, writable, &b);
	pthread_mutex_unlock(&seg_lock);
	if (ret != 0) {
		wn_client_unshare(sh->segs, sh->n_segs);
		wn_client_share_done(sh);
		free(sh->segs);
		sh->segs = NULL;
		sh->n_segs = 0;
	}
	return ret;
}

void
wn_client_share_done(struct wn_client_share *sh)
{
	uint32_t i;

	for (i = 0; i < sh->n; i++)
		if (sh->fd_own[i])
			close(sh->fd[i]);
	free(sh->piece);
	free(sh->fd);
	free(sh->fd_own);
	sh->piece = NULL;
	sh->fd = NULL;
	sh->fd_own = NULL;
	sh->n = 0;
}

void
wn_client_unshare(struct wn_client_seg **segs, uint32_t n_segs)
{
	uint32_t i;

	pthread_mutex_lock(&seg_lock);
	for (i = 0; i < n_segs; i++)
		if (--segs[i]->refs == 0)
			seg_free(segs[i], true);
	pthread_mutex_unlock(&seg_lock);
}

/* ---------------------------------------------------------------- ibv_fork_init() */

/*
 * rdma-core's fork support for kernels without copy on fork (RDMAV_USE_MADVISE): every
 * registered page MADV_DONTFORK, so a child has none of them; MADV_DOFORK again when no MR
 * covers it any more.
 */
struct span {
	struct span *next;
	uint64_t lo, hi;
};

static bool dontfork;
static bool registered;
static struct span *spans;

int
wn_client_fork_madvise(void)
{
	int ret = 0;

	pthread_mutex_lock(&seg_lock);
	if (!dontfork && registered)
		ret = -EINVAL; /* too late: an MR was registered without it */
	else
		dontfork = true;
	pthread_mutex_unlock(&seg_lock);
	return ret;
}

void
wn_client_span_add(uint64_t lo, uint64_t len)
{
	struct span *s;

	pthread_mutex_lock(&seg_lock);
	registered = true;
	if (dontfork && (s = malloc(sizeof(*s))) != NULL) {
		s->lo = lo;
		s->hi = lo + len;
		s->next = spans;
		spans = s;
		madvise((void *)(uintptr_t)lo, len, MADV_DONTFORK);
	}
	pthread_mutex_unlock(&seg_lock);
}

int
wn_client_fork_range(void *base, size_t size, bool keep_from_child)
{
	uint64_t lo = (uintptr_t)base & ~(uint64_t)4095;
	uint64_t hi = ((uintptr_t)base + size + 4095) & ~(uint64_t)4095;
	bool on;

	if (base == NULL || size == 0)
		return 0;
	pthread_mutex_lock(&seg_lock);
	on = dontfork;
	registered = true;
	pthread_mutex_unlock(&seg_lock);
	if (!on)
		return 0;
	if (keep_from_child)
		wn_client_span_add(lo, hi - lo);
	else
		wn_client_span_del(lo, hi - lo);
	return 0;
}

/* MADV_DOFORK [lo, hi) but what the spans from @p s on cover. */
static void
dofork_rest(const struct span *s, uint64_t lo, uint64_t hi)
{
	for (; s != NULL && lo < hi; s = s->next) {
		if (s->hi <= lo || s->lo >= hi)
			continue;
		if (s->lo > lo)
			dofork_rest(s->next, lo, s->lo);
		lo = s->hi;
	}
	if (lo < hi)
		madvise((void *)(uintptr_t)lo, hi - lo, MADV_DOFORK);
}

void
wn_client_span_del(uint64_t lo, uint64_t len)
{
	struct span **pp, *s;

	pthread_mutex_lock(&seg_lock);
	for (pp = &spans; *pp != NULL; pp = &(*pp)->next)
		if ((*pp)->lo == lo && (*pp)->hi == lo + len) {
			s = *pp;
			*pp = s->next;
			free(s);
			dofork_rest(spans, lo, lo + len);
			break;
		}
	pthread_mutex_unlock(&seg_lock);
}
