/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The SIGBUS guard over client memory mapped here.
 *
 * An MR's pieces are the client's own objects (a file, POSIX or SysV shm, a hugetlbfs file),
 * mapped MAP_SHARED. Only the memfds lib/client makes are sealed against shrinking; any other
 * object its owner may truncate, a disk file may fail to read or to get blocks, a hugetlbfs
 * file may find no free hugepage when a page is first touched. The kernel answers an access
 * to such a page with SIGBUS, which must not take warpnicd and every other client with it.
 * A hardware RNIC keeps writing into the pages it pinned, which the file no longer holds; the
 * guard does the same: it maps anonymous memory over the page that faulted (for a hugetlbfs
 * piece the whole hugepage), so the access is retried there and what is written is lost to
 * the file as it would be with the pinned pages. It counts every such page.
 *
 * Ranges are added and removed by control threads (under a mutex); the handler, on whatever
 * thread touched the page (a dataplane lcore), reads them without a lock: a slot's end and
 * page shift are published before its start, and its start is cleared first. A fault
 * outside every range goes to the handler that was there before, or kills as SIGBUS does.
 * Whoever installs a SIGBUS handler after ours (DPDK does, for a moment, while it allocates
 * hugepages) comes after it again when the next range is added; a client page that faults
 * while another handler is in front is not caught.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "srv_priv.h"

#define SIGBUS_SLOTS (1u << 16)

struct sigbus_slot {
	_Atomic uintptr_t start; /* 0: free */
	_Atomic uintptr_t end;
	_Atomic uint32_t shift;
};

static struct sigbus_slot *slots;
static _Atomic uint32_t slots_used; /* slots at or above it are free */
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction old_act;
static _Atomic uint64_t hits;

static void
sigbus_chain(int sig, siginfo_t *si, void *uc)
{
	if ((old_act.sa_flags & SA_SIGINFO) != 0 && old_act.sa_sigaction != NULL) {
		old_act.sa_sigaction(sig, si, uc);
		return;
	}
	if (old_act.sa_handler != SIG_DFL && old_act.sa_handler != SIG_IGN) {
		old_act.sa_handler(sig);
		return;
	}
	/* the default action: the access faults again and SIGBUS kills */
	signal(SIGBUS, SIG_DFL);
}

static void
sigbus_handler(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	uint32_t n = atomic_load_explicit(&slots_used, memory_order_acquire), i;

	for (i = 0; i < n; i++) {
		uintptr_t s = atomic_load_explicit(&slots[i].start, memory_order_acquire), pg;
		size_t ps;

		if (s == 0 || a < s || a >= atomic_load_explicit(&slots[i].end,
								   memory_order_relaxed))
			continue;
		ps = (size_t)1 << atomic_load_explicit(&slots[i].shift, memory_order_relaxed);
		pg = a & ~(uintptr_t)(ps - 1);
		if (mmap((void *)pg, ps, PROT_READ | PROT_WRITE,
			 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) ==
		    MAP_FAILED)
			break;
		atomic_fetch_add_explicit(&hits, 1, memory_order_relaxed);
		return;
	}
	sigbus_chain(sig, si, uc);
}

static int install_err;

static void
slots_alloc(void)
{
	slots = mmap(NULL, SIGBUS_SLOTS * sizeof(*slots), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (slots == MAP_FAILED) {
		slots = NULL;
		install_err = -ENOMEM;
	}
}

/*
 * Our handler in front, chaining to whatever was there: checked for every range, as
 * something may have installed its own since (with slots_lock held).
 */
static int
sigbus_install(void)
{
	struct sigaction sa, cur;

	if (sigaction(SIGBUS, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) != 0 &&
	    cur.sa_sigaction == sigbus_handler)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sigbus_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigaction(SIGBUS, &sa, &old_act) == 0 ? 0 : -errno;
}

int
wn_server_sigbus_add(void *start, size_t len, uint32_t shift)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	uint32_t i, n;
	int ret;

	pthread_once(&once, slots_alloc);
	if (install_err != 0)
		return install_err;
	pthread_mutex_lock(&slots_lock);
	ret = sigbus_install();
	if (ret != 0) {
		pthread_mutex_unlock(&slots_lock);
		return ret;
	}
	n = atomic_load_explicit(&slots_used, memory_order_relaxed);
	for (i = 0; i < n; i++)
		if (atomic_load_explicit(&slots[i].start, memory_order_relaxed) == 0)
			break;
	if (i == SIGBUS_SLOTS) {
		pthread_mutex_unlock(&slots_lock);
		return -ENOSPC;
	}
	atomic_store_explicit(&slots[i].shift, shift, memory_order_relaxed);
	atomic_store_explicit(&slots[i].end, (uintptr_t)start + len, memory_order_relaxed);
	atomic_store_explicit(&slots[i].start, (uintptr_t)start, memory_order_release);
	if (i == n)
		atomic_store_explicit(&slots_used, n + 1, memory_order_release);
	pthread_mutex_unlock(&slots_lock);
	return (int)i;
}

void
wn_server_sigbus_del(int slot)
{
	if (slot < 0 || slots == NULL)
		return;
	pthread_mutex_lock(&slots_lock);
	atomic_store_explicit(&slots[slot].start, 0, memory_order_release);
	atomic_store_explicit(&slots[slot].end, 0, memory_order_relaxed);
	pthread_mutex_unlock(&slots_lock);
}

uint64_t
wn_server_sigbus_hits(void)
{
	return atomic_load_explicit(&hits, memory_order_relaxed);
}
