/* SPDX-License-Identifier: BSD-3-Clause */
/* Private helpers of lib/client. */
#ifndef WN_CLIENT_PRIV_H
#define WN_CLIENT_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wn_ctl.h"

struct wn_client_seg;

/* ---- poll.c: CLOCK_MONOTONIC in ns; how long wn_client_call() polls for an answer (ns) */
uint64_t wn_client_now_ns(void);
uint64_t wn_client_call_spin_ns(void);
/* sched_yield(); the ns it took: longer than WN_CLIENT_YIELD_BUSY_NS, another thread ran */
uint64_t wn_client_yield_ns(void);
#define WN_CLIENT_YIELD_BUSY_NS 10000u

/* ---- client_mr.c: the objects behind a range, for REG_MR */

/*
 * The pieces of [addr, addr+len) (wn_ctl.h "REG_MR and MR_PIECES"): n pieces in order from
 * piece[0].addr over span octets; fd[i] is piece i's fd (-1 for WN_CTL_MR_SRC_PEER), the
 * message's fd_index is left for the sender to fill. segs are the references taken on
 * private memory made shareable (wn_client_unshare() drops them).
 */
struct wn_client_share {
	uint64_t span;
	uint32_t align_shift;
	uint32_t n;
	struct wn_ctl_mr_piece *piece;
	int *fd;
	bool *fd_own; /* opened for this registration: closed by wn_client_share_done() */
	uint32_t n_segs;
	struct wn_client_seg **segs;
};

/*
 * Find the objects behind [addr, addr+len); private memory among them is made shareable
 * (copied into a memfd mapped at the same address, no write lost). @p writable: the MR
 * needs writable memory (a read-only mapping is EFAULT, as pinning it for writing is).
 * @return 0 or -errno (EFAULT: a hole, a mapping that cannot be read or is no memory).
 */
int wn_client_share(void *addr, size_t len, bool writable, struct wn_client_share *sh);

/* Close the fds opened for @p sh and free its arrays (the segment references stay). */
void wn_client_share_done(struct wn_client_share *sh);

/* Drop the references taken by wn_client_share(). */
void wn_client_unshare(struct wn_client_seg **segs, uint32_t n_segs);

/* The MR covers [lo, lo + len) (whole pages): MADV_DONTFORK it in ibv_fork_init()'s mode. */
void wn_client_span_add(uint64_t lo, uint64_t len);
/* ... no more: MADV_DOFORK what no other MR covers. */
void wn_client_span_del(uint64_t lo, uint64_t len);

/* ---- mr_maps.c: this process's mappings */

/* One line of /proc/self/maps. */
struct wn_client_vma {
	uintptr_t lo, hi;
	uint64_t off;     /* offset of lo in the object */
	uint64_t dev, ino;
	uint8_t shift;    /* page size: 12, or 21 / 30 for hugetlbfs (wn_client_vma_shift()) */
	bool r, w, x, shared;
	bool anon;        /* private memory of no object: heap, stack, anonymous mmap */
	bool special;     /* [vvar], [vdso], [vsyscall], ...: no memory of the program's */
	char path[256];
};

/* Call @p fn for each mapping until it returns non-zero (returned); malloc-free. */
int wn_client_maps_scan(int (*fn)(const struct wn_client_vma *v, void *arg), void *arg);

/* The mappings over [lo, hi) in order (malloc'd). @return 0, -EFAULT (a hole), -errno. */
int wn_client_maps_read(uintptr_t lo, uintptr_t hi, struct wn_client_vma **vmas, uint32_t *n);

/* The shared mappings of object (@p dev, @p ino), wherever they are (malloc'd). */
int wn_client_maps_of(uint64_t dev, uint64_t ino, struct wn_client_vma **vmas, uint32_t *n);

/* Set v->shift; @p fd: an fd of its object, or -1. @return 0 or -errno. */
int wn_client_vma_shift(struct wn_client_vma *v, int fd);

/* An fd of a shared mapping's object. @return it, -ENOENT (none can be opened here). */
int wn_client_vma_open(const struct wn_client_vma *v, bool writable);

/* ---- mr_wp.c: writes wait while pages move */

struct wn_client_wp {
	int uffd;
	bool mprot;
	const struct wn_client_vma *v;
	uint32_t n;
	uintptr_t lo, hi;
};

/*
 * Write-protect [lo, hi) (mappings @p v, as they were read): from now on a write there
 * waits. @p uffd_ok: every mapping is anonymous, shmem or hugetlbfs. @return 0 or -errno.
 */
int wn_client_wp_begin(struct wn_client_wp *w, const struct wn_client_vma *v, uint32_t n,
		       uintptr_t lo, uintptr_t hi, bool uffd_ok);

/* The writers go on; @p moved: the mappings were replaced (else protections come back). */
void wn_client_wp_end(struct wn_client_wp *w, bool moved);

/* Copy into the fresh private mapping @p dst without zeroing it first. @return 0 or -errno. */
int wn_client_uffd_copy(void *dst, const void *src, size_t len);

/*
 * Run @p fn, which write-protects [lo, hi), with every signal blocked: on this thread, or
 * on one with a fresh stack when the range holds this thread's stack or TCB. Its value.
 */
int wn_client_aside(int (*fn)(void *), void *arg, uintptr_t lo, uintptr_t hi);

#endif /* WN_CLIENT_PRIV_H */
