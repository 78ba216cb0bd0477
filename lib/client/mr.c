/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Registered memory: remap application pages onto sealed memfds at the same virtual
 * address (MAP_FIXED|MAP_SHARED after copying the content) so warpnicd can map them once.
 * See wn_client.h for the caveats.
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
#include <unistd.h>

#include "client_priv.h"
#include "wn_client.h"

#define PG ((uintptr_t)WN_CTL_PAGE_SIZE)

/* One shared segment: [start, end) of this process is memfd fd from offset 0. */
struct wn_client_seg {
	struct wn_client_seg *next;
	uintptr_t start, end;
	int fd;   /* -1: made private again in a fork()ed child, kept for its MRs' refs */
	int prot;
	uint32_t refs;
};

static pthread_mutex_t seg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct wn_client_seg *seg_list; /* sorted by start, disjoint */

static struct wn_client_seg *
seg_at(uintptr_t p)
{
	struct wn_client_seg *s;

	for (s = seg_list; s != NULL; s = s->next)
		if (s->fd >= 0 && p >= s->start && p < s->end)
			return s;
	return NULL;
}

static uintptr_t
next_seg_start(uintptr_t p, uintptr_t limit)
{
	struct wn_client_seg *s;

	for (s = seg_list; s != NULL; s = s->next)
		if (s->fd >= 0 && s->start > p && s->start < limit)
			return s->start;
	return limit;
}

static void
seg_insert(struct wn_client_seg *n)
{
	struct wn_client_seg **pp = &seg_list;

	while (*pp != NULL && (*pp)->start < n->start)
		pp = &(*pp)->next;
	n->next = *pp;
	*pp = n;
}

/*
 * Check [start, end) against /proc/self/maps: every byte mapped, readable, not hugetlb.
 * Returns 0 and the protection to keep (PROT_WRITE only if all of it is writable).
 */
static int
range_prot(uintptr_t start, uintptr_t end, int *prot)
{
	char line[512];
	uintptr_t covered = start;
	bool writable = true;
	FILE *f = fopen("/proc/self/maps", "re");

	if (f == NULL)
		return -errno;
	while (covered < end && fgets(line, sizeof(line), f) != NULL) {
		uintptr_t lo, hi;
		char perms[8], path[256] = "";

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %*s %*s %*s %255[^\n]", &lo, &hi,
			   perms, path) < 3)
			continue;
		if (hi <= covered || lo >= end)
			continue;
		if (lo > covered)
			break; /* hole */
		if (perms[0] != 'r' || strstr(path, "/anon_hugepage") != NULL ||
		    strstr(path, "hugetlbfs") != NULL || strncmp(path, "/dev/hugepages", 14) == 0) {
			fclose(f);
			return perms[0] != 'r' ? -EFAULT : -EINVAL;
		}
		if (perms[1] != 'w')
			writable = false;
		covered = hi;
	}
	fclose(f);
	if (covered < end)
		return -EFAULT;
	*prot = PROT_READ | (writable ? PROT_WRITE : 0);
	return 0;
}

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
static void
page_copy(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
}
#endif

/* Create a segment for the unshared pages [start, end). */
static struct wn_client_seg *
seg_create(uintptr_t start, uintptr_t end, int *err)
{
	size_t len = end - start;
	struct wn_client_seg *s;
	void *tmp, *p;
	int prot, fd;

	*err = range_prot(start, end, &prot);
	if (*err != 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		*err = -ENOMEM;
		return NULL;
	}
	fd = memfd_create("warpnic-mr", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		goto fail;
	/* sealed against shrinking: warpnicd's mapping can never fault (it checks the seal) */
	if (ftruncate(fd, (off_t)len) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
		goto fail_fd;
	tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (tmp == MAP_FAILED)
		goto fail_fd;
	page_copy(tmp, (const void *)start, len);
	/* atomically replace the private pages by the shared copy at the same address */
	p = mmap((void *)start, len, prot, MAP_SHARED | MAP_FIXED, fd, 0);
	munmap(tmp, len);
	if (p == MAP_FAILED)
		goto fail_fd;
	s->start = start;
	s->end = end;
	s->fd = fd;
	s->prot = prot;
	return s;
fail_fd:
	*err = -errno;
	close(fd);
	free(s);
	return NULL;
fail:
	*err = -errno;
	free(s);
	return NULL;
}

/*
 * Make [start, end) private anonymous memory again with the same content: copy into a
 * fresh private mapping, then move it over the range in one mremap().
 */
static void
seg_privatize(struct wn_client_seg *s)
{
	size_t len = s->end - s->start;
	void *tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (tmp == MAP_FAILED)
		return; /* stays shared: correct for this process, only fork-unsafe */
	page_copy(tmp, (const void *)s->start, len);
	if (s->prot != (PROT_READ | PROT_WRITE))
		mprotect(tmp, len, s->prot);
	if (mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)s->start) == MAP_FAILED)
		munmap(tmp, len);
}

/*
 * fork(): the child gets private copies of the shared segments, as it would of ordinary
 * memory; otherwise parent and child would share heap pages (and malloc metadata).
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

static void
atfork_child(void)
{
	struct wn_client_seg *s;

	for (s = seg_list; s != NULL; s = s->next)
		if (s->fd >= 0) {
			seg_privatize(s);
			close(s->fd);
			s->fd = -1;
		}
	pthread_mutex_unlock(&seg_lock);
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void
atfork_register(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static void
seg_put(struct wn_client_seg *s)
{
	struct wn_client_seg **pp;

	if (--s->refs > 0)
		return;
	for (pp = &seg_list; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	/* the last MR is gone: back to private memory, content kept, fork-safe again */
	if (s->fd >= 0) {
		seg_privatize(s);
		close(s->fd);
	}
	free(s);
}

void
wn_client_unshare(struct wn_client_seg **segs, uint32_t n_segs)
{
	uint32_t i;

	pthread_mutex_lock(&seg_lock);
	for (i = 0; i < n_segs; i++)
		seg_put(segs[i]);
	pthread_mutex_unlock(&seg_lock);
}

int
wn_client_share(void *addr, size_t len, struct wn_ctl_reg_mr_req *req, int *fds,
		struct wn_client_seg **segs, uint32_t *n_segs)
{
	uintptr_t a = (uintptr_t)addr, p, end;
	uint32_t n = 0;
	int err = 0;

	if (sysconf(_SC_PAGESIZE) != (long)PG)
		return -EOPNOTSUPP;
	pthread_once(&atfork_once, atfork_register);
	if (a + len < a || a + len > UINTPTR_MAX - PG)
		return -EINVAL;
	p = a & ~(PG - 1);
	end = (a + len + PG - 1) & ~(PG - 1);
	pthread_mutex_lock(&seg_lock);
	while (p < end) {
		struct wn_client_seg *s = seg_at(p);
		uintptr_t stop;

		if (n == WN_CTL_MR_PIECES) {
			err = -E2BIG;
			break;
		}
		if (s == NULL) {
			stop = next_seg_start(p, end);
			s = seg_create(p, stop, &err);
			if (s == NULL)
				break;
			seg_insert(s);
		}
		stop = s->end < end ? s->end : end;
		s->refs++;
		segs[n] = s;
		fds[n] = s->fd;
		req->piece[n].fd_offset = p - s->start;
		req->piece[n].len = stop - p;
		n++;
		p = stop;
	}
	if (err != 0) {
		while (n > 0)
			seg_put(segs[--n]);
		memset(req->piece, 0, sizeof(req->piece));
	}
	pthread_mutex_unlock(&seg_lock);
	req->n_pieces = n;
	*n_segs = n;
	return err;
}
