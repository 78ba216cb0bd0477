/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The memif unmap fence. DPDK's net_memif (22.11 and 24.11 alike) unmaps a connection's
 * regions in the EAL interrupt thread when its peer leaves (memif_disconnect: link down,
 * CONNECTED cleared, eventfds closed, then munmap), with no fence against the lcores: a shard
 * inside rte_eth_rx_burst() or tx_burst(), or in a wake-up peek, that passed the PMD's
 * CONNECTED check before would read unmapped rings and die of SIGSEGV. The PMD tells nobody
 * before it unmaps (no LSC event, no callback), so the fence sits on the PMD's own import of
 * munmap: its GOT slot (the PMD is a plugin, dlopen()ed by the EAL) is pointed at
 * fence_munmap(), which, in the interrupt thread while the shards run, first waits until
 * every shard passed a quiescent state (rte_rcu_qsbr, reported once per loop; a sleeping
 * shard is offline). The PMD cleared CONNECTED and the link before, so a shard that enters
 * the port afterwards leaves the rings alone. No other object's munmap changes.
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_rcu_qsbr.h>

#include "node_priv.h"

/* The plugin whose munmap is fenced (librte_net_memif.so.NN). */
#define FENCE_OBJECT "librte_net_memif.so"

#if defined(__x86_64__)
#define R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define R_GLOB_DAT R_AARCH64_GLOB_DAT
#else
#define FENCE_NO_ARCH
#define R_JUMP_SLOT (~0UL)
#define R_GLOB_DAT (~0UL)
#endif

static pthread_mutex_t fence_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rte_rcu_qsbr *fence_qs;
static uint64_t fences;
static bool installed;

static int
fence_munmap(void *addr, size_t len)
{
	if (rte_thread_is_intr()) {
		pthread_mutex_lock(&fence_lock);
		if (fence_qs != NULL) {
			rte_rcu_qsbr_synchronize(fence_qs, RTE_QSBR_THRID_INVALID);
			__atomic_fetch_add(&fences, 1, __ATOMIC_RELAXED);
		}
		pthread_mutex_unlock(&fence_lock);
	}
	return munmap(addr, len); /* libc's: this file's own import */
}

struct hook {
	const char *object;   /* substring of the object's path */
	const char *symbol;
	void *repl;
	uintptr_t relro, relro_end; /* the object's PT_GNU_RELRO: read-only once relocated */
	int patched;          /* slots written */
	int err;
};

/* A dynamic-section address: glibc relocates most of them in place, not all loaders do. */
static uintptr_t
dyn_addr(ElfW(Addr) base, ElfW(Addr) p)
{
	return p < base ? base + p : p;
}

/* Point @p slot at h->repl; a slot in the RELRO segment is read-only by now. */
static int
patch_slot(void **slot, struct hook *h)
{
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t page = (uintptr_t)slot & ~((uintptr_t)pg - 1);
	bool relro = (uintptr_t)slot >= h->relro && (uintptr_t)slot < h->relro_end;

	if (relro && mprotect((void *)page, (size_t)pg, PROT_READ | PROT_WRITE) != 0)
		return -errno;
	__atomic_store_n(slot, h->repl, __ATOMIC_RELEASE);
	if (relro)
		(void)mprotect((void *)page, (size_t)pg, PROT_READ); /* as RELRO left it */
	h->patched++;
	return 0;
}

/* The relocations [@p rel, +@p size) of one object: patch those that bind h->symbol. */
static void
patch_relocs(ElfW(Addr) base, const ElfW(Rela) *rel, size_t size, const ElfW(Sym) *symtab,
	     const char *strtab, struct hook *h)
{
	for (size_t i = 0; i < size / sizeof(*rel) && h->err == 0; i++) {
		unsigned long type = ELF64_R_TYPE(rel[i].r_info);
		const ElfW(Sym) *sym = &symtab[ELF64_R_SYM(rel[i].r_info)];

		if (type != R_JUMP_SLOT && type != R_GLOB_DAT)
			continue;
		if (strcmp(strtab + sym->st_name, h->symbol) != 0)
			continue;
		h->err = patch_slot((void **)(base + rel[i].r_offset), h);
	}
}

static int
hook_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct hook *h = arg;
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	size_t jmprel_sz = 0, rela_sz = 0;

	(void)size;
	if (info->dlpi_name == NULL || strstr(info->dlpi_name, h->object) == NULL)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		if (ph->p_type == PT_GNU_RELRO) {
			h->relro = info->dlpi_addr + ph->p_vaddr;
			h->relro_end = h->relro + ph->p_memsz;
		}
	}
	if (dyn == NULL)
		return 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			symtab = (const void *)dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			strtab = (const void *)dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr);
			break;
		case DT_JMPREL:
			jmprel = (const void *)dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			jmprel_sz = dyn->d_un.d_val;
			break;
		case DT_RELA:
			rela = (const void *)dyn_addr(info->dlpi_addr, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			rela_sz = dyn->d_un.d_val;
			break;
		default:
			break;
		}
	}
	if (symtab == NULL || strtab == NULL)
		return 0;
	if (jmprel != NULL)
		patch_relocs(info->dlpi_addr, jmprel, jmprel_sz, symtab, strtab, h);
	if (rela != NULL)
		patch_relocs(info->dlpi_addr, rela, rela_sz, symtab, strtab, h);
	return h->patched > 0 || h->err != 0; /* one object */
}

/*
 * Point every import of @p symbol by the loaded object whose path contains @p object at
 * @p repl (a slot not bound yet is never bound now). @return slots patched, or -errno.
 */
static int
hook_import(const char *object, const char *symbol, void *repl)
{
	struct hook h = { .object = object, .symbol = symbol, .repl = repl };

#ifdef FENCE_NO_ARCH
	return -ENOTSUP;
#endif
	dl_iterate_phdr(hook_object, &h);
	return h.err != 0 ? h.err : h.patched;
}

int
wn_node_fence_install(void)
{
	int n;

	if (installed)
		return 0;
	n = hook_import(FENCE_OBJECT, "munmap", (void *)fence_munmap);
	if (n < 0)
		return n;
	if (n == 0)
		return -ENOENT;
	installed = true;
	return 0;
}

void
wn_node_fence_set(struct rte_rcu_qsbr *qs)
{
	pthread_mutex_lock(&fence_lock);
	fence_qs = qs;
	pthread_mutex_unlock(&fence_lock);
}

const uint64_t *
wn_node_fence_count(void)
{
	return &fences;
}
