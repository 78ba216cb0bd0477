/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Write protection while registration moves pages: every write into the range waits until
 * the pages are in their new place, then lands there; none is lost.
 *
 * userfaultfd's write protection (UFFDIO_WRITEPROTECT) first: a thread that writes (also
 * the kernel, for a system call that writes into the range: read(), recv()) sleeps in the
 * fault until the range is released; no signal, nothing of the program's own handlers is
 * touched. It covers anonymous memory, shmem and hugetlbfs; when this process may only have
 * a user-mode userfaultfd (vm.unprivileged_userfaultfd = 0, no CAP_SYS_PTRACE, no access to
 * /dev/userfaultfd), a system call that writes into the range in that moment fails with
 * EFAULT instead of waiting. Private file mappings (a program's .data, a MAP_PRIVATE file)
 * and kernels or sandboxes without userfaultfd get mprotect() and a SIGSEGV handler that
 * waits for the window to close and returns, so the write is retried; our handler is put
 * back in front of the program's before each window, and chains to it for every other
 * fault. There a system call that writes into the range fails with EFAULT.
 *
 * The thread that opens and closes the window must never write into memory it protects, nor
 * run the program's signal handlers meanwhile (wn_client_aside()): with every signal
 * blocked it is the caller itself, unless the range holds the caller's stack or thread
 * control block, where a thread of its own with a fresh stack does it. Between
 * wn_client_wp_begin() and wn_client_wp_end() it must not call malloc or anything else that
 * may write the program's memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "client_priv.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_HUGETLBFS_SHMEM
#define UFFD_FEATURE_WP_HUGETLBFS_SHMEM (1 << 12)
#endif
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

/* ---------------------------------------------------------------- userfaultfd */

static pthread_once_t uffd_once = PTHREAD_ONCE_INIT;
static uint64_t uffd_features; /* of those we use, what the kernel has */
static int uffd_user_only;     /* only a user-mode userfaultfd may be had */
static int wp_mode = -1;       /* WARPNIC_MR_WP: 0 auto, 1 userfaultfd only, 2 mprotect only */

static int
uffd_open(int flags)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | flags);

#ifdef USERFAULTFD_IOC_NEW
	if (fd < 0 && flags == 0 && errno == EPERM) {
		int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);

		if (dev >= 0) {
			fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
			close(dev);
		}
	}
#endif
	return fd;
}

static void
uffd_probe(void)
{
	struct uffdio_api api = {.api = UFFD_API};
	const char *m = getenv("WARPNIC_MR_WP");
	int fd = uffd_open(0);

	wp_mode = m == NULL ? 0 : strcmp(m, "uffd") == 0 ? 1 : strcmp(m, "mprotect") == 0 ? 2 : 0;
	if (fd < 0) {
		fd = uffd_open(UFFD_USER_MODE_ONLY);
		uffd_user_only = 1;
	}
	if (fd < 0)
		return;
	if (ioctl(fd, UFFDIO_API, &api) == 0)
		uffd_features = api.features &
				(UFFD_FEATURE_WP_HUGETLBFS_SHMEM | UFFD_FEATURE_WP_UNPOPULATED);
	close(fd);
}

/* Pages never touched have no entry to protect unless the kernel has WP_UNPOPULATED. */
static void
populate(uintptr_t lo, uintptr_t hi)
{
	uintptr_t p;

	if (madvise((void *)lo, hi - lo, MADV_POPULATE_READ) == 0)
		return;
	for (p = lo; p < hi; p += 4096)
		(void)*(volatile const char *)p;
}

static int
uffd_protect(struct wn_client_wp *w)
{
	struct uffdio_api api = {.api = UFFD_API, .features = uffd_features};
	struct uffdio_register reg = {.range = {w->lo, w->hi - w->lo},
				      .mode = UFFDIO_REGISTER_MODE_WP};
	struct uffdio_writeprotect wp = {.range = {w->lo, w->hi - w->lo},
					 .mode = UFFDIO_WRITEPROTECT_MODE_WP};
	int fd = uffd_open(uffd_user_only ? UFFD_USER_MODE_ONLY : 0);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api) != 0)
		goto fail;
	if ((uffd_features & UFFD_FEATURE_WP_UNPOPULATED) == 0)
		populate(w->lo, w->hi);
	if (ioctl(fd, UFFDIO_REGISTER, &reg) != 0 || ioctl(fd, UFFDIO_WRITEPROTECT, &wp) != 0)
		goto fail;
	w->uffd = fd;
	return 0;
fail:
	close(fd);
	return -EOPNOTSUPP;
}

/* ---------------------------------------------------------------- mprotect + SIGSEGV */

/*
 * The open window (one at a time: registrations hold the segment lock). A fault that the
 * window caused may reach the handler after it closed: a write fault at an address of the
 * last window that was writable is retried once more.
 */
static struct {
	_Atomic uintptr_t lo, hi;
	_Atomic uint32_t seq; /* odd while open */
	_Atomic uintptr_t stale;
} win;
static struct sigaction segv_prev;
static pthread_mutex_t segv_lock = PTHREAD_MUTEX_INITIALIZER;

static void
segv_handler(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	uint32_t s = atomic_load(&win.seq);

	if (si->si_code == SEGV_ACCERR && a >= atomic_load(&win.lo) && a < atomic_load(&win.hi)) {
		if (s & 1) {
			while (atomic_load(&win.seq) == s)
				syscall(SYS_futex, &win.seq, FUTEX_WAIT_PRIVATE, s, NULL, NULL, 0);
			return;
		}
		if (atomic_exchange(&win.stale, a) != a)
			return;
	}
	if ((segv_prev.sa_flags & SA_SIGINFO) != 0 && segv_prev.sa_sigaction != NULL) {
		segv_prev.sa_sigaction(sig, si, uc);
	} else if (segv_prev.sa_handler != SIG_DFL && segv_prev.sa_handler != SIG_IGN) {
		segv_prev.sa_handler(sig);
	} else {
		signal(SIGSEGV, SIG_DFL); /* the fault comes again and kills, as it would have */
	}
}

/* Our handler in front, chaining to whatever the program installed since. */
static int
segv_install(void)
{
	struct sigaction sa, cur;
	int ret = 0;

	pthread_mutex_lock(&segv_lock);
	if (sigaction(SIGSEGV, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) != 0 &&
	    cur.sa_sigaction == segv_handler)
		goto out;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = segv_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &segv_prev) != 0)
		ret = -errno;
out:
	pthread_mutex_unlock(&segv_lock);
	return ret;
}

static int
vma_prot(const struct wn_client_vma *v)
{
	return (v->r ? PROT_READ : 0) | (v->w ? PROT_WRITE : 0) | (v->x ? PROT_EXEC : 0);
}

/* Give the writable mappings of the window back their protection (nothing was moved). */
static void
mprot_restore(const struct wn_client_wp *w)
{
	uint32_t i;

	for (i = 0; i < w->n; i++) {
		uintptr_t lo = w->v[i].lo > w->lo ? w->v[i].lo : w->lo;
		uintptr_t hi = w->v[i].hi < w->hi ? w->v[i].hi : w->hi;

		if (w->v[i].w && lo < hi)
			mprotect((void *)lo, hi - lo, vma_prot(&w->v[i]));
	}
}

static int
mprot_protect(struct wn_client_wp *w)
{
	uint32_t i;
	int ret = segv_install();

	if (ret != 0)
		return ret;
	atomic_store(&win.lo, w->lo);
	atomic_store(&win.hi, w->hi);
	atomic_store(&win.stale, 0);
	atomic_fetch_add(&win.seq, 1);
	for (i = 0; i < w->n; i++) {
		uintptr_t lo = w->v[i].lo > w->lo ? w->v[i].lo : w->lo;
		uintptr_t hi = w->v[i].hi < w->hi ? w->v[i].hi : w->hi;

		if (!w->v[i].w || lo >= hi)
			continue;
		if (mprotect((void *)lo, hi - lo, vma_prot(&w->v[i]) & ~PROT_WRITE) != 0) {
			ret = -errno;
			mprot_restore(w);
			atomic_fetch_add(&win.seq, 1);
			syscall(SYS_futex, &win.seq, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
			return ret;
		}
	}
	w->mprot = true;
	return 0;
}

/* ---------------------------------------------------------------- windows */

int
wn_client_wp_begin(struct wn_client_wp *w, const struct wn_client_vma *v, uint32_t n,
		   uintptr_t lo, uintptr_t hi, bool uffd_ok)
{
	uint32_t i;
	bool any = false;

	pthread_once(&uffd_once, uffd_probe);
	w->uffd = -1;
	w->mprot = false;
	w->v = v;
	w->n = n;
	w->lo = lo;
	w->hi = hi;
	for (i = 0; i < n; i++)
		any |= v[i].w;
	if (!any)
		return 0; /* nobody can write it */
	if (uffd_ok && wp_mode != 2 && uffd_protect(w) == 0)
		return 0;
	if (wp_mode == 1)
		return -EOPNOTSUPP;
	return mprot_protect(w);
}

void
wn_client_wp_end(struct wn_client_wp *w, bool moved)
{
	if (w->uffd >= 0) {
		if (!moved) {
			struct uffdio_writeprotect wp = {.range = {w->lo, w->hi - w->lo}};

			ioctl(w->uffd, UFFDIO_WRITEPROTECT, &wp);
		}
		close(w->uffd); /* wakes every writer that waits */
		w->uffd = -1;
	}
	if (w->mprot) {
		if (!moved)
			mprot_restore(w);
		atomic_fetch_add(&win.seq, 1);
		syscall(SYS_futex, &win.seq, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
		w->mprot = false;
	}
}

/*
 * Fill the fresh private mapping [dst, dst+len) with a copy of [src, src+len) in one pass:
 * UFFDIO_COPY allocates each page and copies into it, where a page fault would first zero
 * it. A user-mode userfaultfd is enough (this thread makes every request itself).
 */
int
wn_client_uffd_copy(void *dst, const void *src, size_t len)
{
	struct uffdio_api api = {.api = UFFD_API};
	struct uffdio_register reg = {.range = {(uintptr_t)dst, len},
				      .mode = UFFDIO_REGISTER_MODE_MISSING};
	size_t done = 0;
	int fd, ret = 0;

	pthread_once(&uffd_once, uffd_probe);
	fd = uffd_open(UFFD_USER_MODE_ONLY);
	if (fd < 0)
		fd = uffd_open(0);
	if (fd < 0)
		return -EOPNOTSUPP;
	if (ioctl(fd, UFFDIO_API, &api) != 0 || ioctl(fd, UFFDIO_REGISTER, &reg) != 0) {
		close(fd);
		return -EOPNOTSUPP;
	}
	while (done < len) {
		struct uffdio_copy c = {.dst = (uintptr_t)dst + done, .src = (uintptr_t)src + done,
					.len = len - done};

		if (ioctl(fd, UFFDIO_COPY, &c) != 0 && c.copy <= 0 && errno != EAGAIN) {
			ret = -errno;
			break;
		}
		if (c.copy > 0)
			done += (size_t)c.copy;
	}
	close(fd);
	return ret;
}

/* ---------------------------------------------------------------- a thread aside */

struct aside {
	int (*fn)(void *);
	void *arg;
	int ret;
};

static void *
aside_main(void *p)
{
	struct aside *a = p;

	a->ret = a->fn(a->arg);
	return NULL;
}

#define ASIDE_STACK (256u << 10)
#define HOT_BELOW   (64u << 10) /* what may be written below the stack pointer and the TCB */

static bool
overlaps(uintptr_t lo, uintptr_t hi, uintptr_t a, uintptr_t b)
{
	return lo < b && a < hi;
}

int
wn_client_aside(int (*fn)(void *), void *arg, uintptr_t lo, uintptr_t hi)
{
	struct aside a = {.fn = fn, .arg = arg, .ret = -EINTR};
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t tp = (uintptr_t)&errno; /* static TLS, next to the TCB */
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;
	uint8_t *stack;
	int ret;

	sigfillset(&all);
	/*
	 * This thread's frames from here down and its TCB (errno, static TLS below it, struct
	 * pthread above) are all it writes; where the range holds neither, it does the work.
	 */
	if (!overlaps(lo, hi, sp - HOT_BELOW, sp + 4096) &&
	    !overlaps(lo, hi, tp - HOT_BELOW, tp + 4096)) {
		pthread_sigmask(SIG_SETMASK, &all, &old);
		ret = fn(arg);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return ret;
	}
	stack = mmap(NULL, ASIDE_STACK, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -errno;
	mprotect(stack, 4096, PROT_NONE); /* guard page */
	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, stack, ASIDE_STACK);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&t, &attr, aside_main, &a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (ret == 0) {
		pthread_join(t, NULL);
		ret = a.ret;
	}
	munmap(stack, ASIDE_STACK);
	return ret;
}
