/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Registered memory of every kind, through the shims with unmodified verbs calls: the
 * program's memory must stay what it was, shared with whom it was shared, and lose no write.
 *
 *   mr_kinds drive IP PORT                          the peer (mr_pair.c): Writes, Reads, receives
 *   mr_kinds serve IP PORT CASE ARGS...             registers memory of CASE and asks the peer
 *   mr_kinds check-file PATH LEN SEED               pread() finds the pattern (another process)
 *   mr_kinds check-sysv KEY LEN SEED [rm]           a second attachment finds it
 *   mr_kinds bench KIND LEN ROUNDS                  ibv_reg_mr / ibv_dereg_mr times (median)
 *       of LEN octets of KIND (private, private-touched, memfd, tmpfs, huge2m, huge1g,
 *       private-huge2m; touched: every page written before), beside a memcpy of LEN in the
 *       same run; no peer needed
 *
 * Cases (serve): each exits 0 when every check passed, and prints what it checked.
 *   busy LEN ROUNDS WRITERS SYSCALL   WRITERS threads write a counter pattern into a malloc'd
 *       buffer without pause (each word checked before it is written again), one more
 *       read()s blocks from a pipe into it (SYSCALL 1), while the main thread registers,
 *       re-registers (every 10th) and deregisters it ROUNDS times; every 25th round the peer
 *       RDMA-Writes and RDMA-Reads a part nobody else writes. No write may be lost.
 *   file PATH LEN SEED                 a file mapped MAP_SHARED: the peer's RDMA Write is in
 *       it (msync; check-file reads it back); the mapping stays the file's
 *   truncate PATH LEN SEED             a file truncated to nothing under its MR: warpnicd
 *       survives the peer's Write and Read there (its accesses get anonymous pages, as a
 *       pinned page stays written after its file dropped it; telemetry mr_sigbus)
 *   shared memfd|shm|anon LEN SEED     a memfd, a POSIX shm object, MAP_SHARED|MAP_ANONYMOUS
 *       memory: a child forked before the registration sees the peer's Write
 *   sysv KEY LEN SEED PART NPARTS      a SysV segment: this process registers it and the peer
 *       writes part PART of NPARTS through it (two processes register it at once: run two)
 *   huge 2m|1g anon|file|private LEN SEED [PATH]   hugetlbfs memory: shared kinds are not
 *       copied (their mapping unchanged, no hugepage taken); a private one is copied once
 *       into hugepages; an MR inside one hugepage works
 *   ro LEN SEED                        read-only memory (mprotect'ed anonymous, a MAP_PRIVATE
 *       PROT_READ file) registers as a source: the peer reads it, a Send from it arrives; an
 *       access that writes is EFAULT; it stays read-only
 *   munmap LEN SEED                    unmapped while registered: the MR's pages stay for
 *       the peer until deregistration, the new mapping at the same address is untouched
 *   rereg LEN SEED                     ibv_rereg_mr: translation, access, PD; bad input and a
 *       failed rereg leave the MR working
 *   fork LEN SEED                      fork(): the child has a private copy; the parent's MR
 *       works on (RDMAV_USE_MADVISE with RDMAV_FORK_SAFE: the child has no such pages)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "mr_pair.h"

#ifndef MAP_HUGE_SHIFT
#define MAP_HUGE_SHIFT 26
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define RW (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static int failures;

static void
expect(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	fflush(stdout);
	failures += !ok;
}

/* The /proc/self/maps line of the mapping holding @p p (without the address range). */
static void
maps_of(const void *p, char *out, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	out[0] = '\0';
	MRP_CHECK(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL) {
		uintptr_t lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && (uintptr_t)p >= lo &&
		    (uintptr_t)p < hi) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, len, "%s", strchr(line, ' ') + 1);
			break;
		}
	}
	fclose(f);
}

static long
free_hugepages(const char *size)
{
	char path[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%skB/free_hugepages",
		 strcmp(size, "1g") == 0 ? "1048576" : "2048");
	f = fopen(path, "re");
	if (f != NULL) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static double now_ms(void);

static double
tv_ms(const struct timeval *t)
{
	return t->tv_sec * 1e3 + t->tv_usec / 1e3;
}
static int cmp_d(const void *a, const void *b);

/* ---------------------------------------------------------------- busy */

struct busy {
	uint64_t *buf;
	size_t stripe;     /* words per writer */
	int writers;
	atomic_int stop;
	atomic_ulong writes, lost, sys_blocks, sys_bad;
	int pipe[2];
};

struct writer {
	struct busy *b;
	int id;
};

/* Word i of writer w in pass p: unique, so an older pass's value is seen for what it is. */
static uint64_t
busy_word(int w, uint64_t pass, size_t i)
{
	return (uint64_t)w << 56 | pass << 24 | (i & 0xffffff);
}

static void *
busy_writer(void *arg)
{
	struct writer *wr = arg;
	struct busy *b = wr->b;
	uint64_t *s = b->buf + (size_t)wr->id * b->stripe, pass, writes = 0, lost = 0;
	size_t i;

	for (pass = 1; !atomic_load_explicit(&b->stop, memory_order_relaxed); pass++) {
		for (i = 0; i < b->stripe; i++) {
			uint64_t want = pass == 1 ? 0 : busy_word(wr->id, pass - 1, i);

			if (s[i] != want)
				lost++;
			s[i] = busy_word(wr->id, pass, i);
			writes++;
		}
	}
	atomic_fetch_add(&b->writes, writes);
	atomic_fetch_add(&b->lost, lost);
	return NULL;
}

/* read() into the buffer: the kernel writes there while registration moves the pages */
static void *
busy_syscall(void *arg)
{
	struct busy *b = arg;
	uint8_t *area = (uint8_t *)(b->buf + (size_t)b->writers * b->stripe);
	uint64_t k = 0;

	while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		uint8_t *at = area + (k % 16) * 4096;
		ssize_t n = read(b->pipe[0], at, 4096);

		if (n != 4096 || mrp_bad(at, 4096, k, 0) != 0)
			atomic_fetch_add(&b->sys_bad, 1);
		atomic_fetch_add(&b->sys_blocks, 1);
		k++;
	}
	return NULL;
}

static void *
busy_feeder(void *arg)
{
	struct busy *b = arg;
	uint64_t blk[512], k;

	for (k = 0;; k++) {
		mrp_fill(blk, sizeof(blk), k, 0);
		if (write(b->pipe[1], blk, sizeof(blk)) != (ssize_t)sizeof(blk))
			break;
	}
	return NULL;
}

static void
case_busy(struct mrp *c, char **a)
{
	size_t len = strtoull(a[0], NULL, 0), words = len / 8, check = 1u << 15;
	long rounds = strtol(a[1], NULL, 0), r, rdma = 0;
	int sys = atoi(a[3]), i, rdma_bad = 0;
	struct busy b = {.writers = atoi(a[2])};
	struct writer w[16];
	pthread_t t[18];
	double *treg, *tdereg;
	struct rusage ru0, ru1;
	uint64_t *chk;

	MRP_CHECK(b.writers > 0 && b.writers <= 16 && len >= 1u << 20);
	b.buf = malloc(len);
	MRP_CHECK(b.buf != NULL);
	memset(b.buf, 0, len);
	/* writers' stripes, 64 KiB for the read()s, and the last 32 KiB for the peer */
	b.stripe = (words - 65536 / 8 - check / 8) / (size_t)b.writers;
	chk = b.buf + words - check / 8;
	MRP_CHECK(pipe(b.pipe) == 0);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < b.writers; i++) {
		w[i].b = &b;
		w[i].id = i;
		MRP_CHECK(pthread_create(&t[i], NULL, busy_writer, &w[i]) == 0);
	}
	if (sys) {
		MRP_CHECK(pthread_create(&t[16], NULL, busy_syscall, &b) == 0);
		MRP_CHECK(pthread_create(&t[17], NULL, busy_feeder, &b) == 0);
	}
	getrusage(RUSAGE_THREAD, &ru0);
	treg = calloc((size_t)rounds, sizeof(double));
	tdereg = calloc((size_t)rounds, sizeof(double));
	MRP_CHECK(treg != NULL && tdereg != NULL);
	for (r = 0; r < rounds; r++) {
		double t0 = now_ms();
		struct ibv_mr *mr = ibv_reg_mr(c->pd, b.buf, len, RW);

		treg[r] = now_ms() - t0;
		MRP_CHECK(mr != NULL);
		if (r % 10 == 5)
			MRP_CHECK(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
					       RW | IBV_ACCESS_REMOTE_ATOMIC) == 0);
		if (r % 25 == 0) {
			uint64_t seed = (uint64_t)r << 8;

			rdma_bad |= mrp_write(c, chk, mr->rkey, 0, check, seed) != 0;
			rdma_bad |= mrp_bad(chk, check, seed, 0) != 0;
			mrp_fill(chk, check, seed + 1, 0);
			rdma_bad |= mrp_read(c, chk, mr->rkey, 0, check, seed + 1) != 0;
			rdma++;
		}
		t0 = now_ms();
		MRP_CHECK(ibv_dereg_mr(mr) == 0);
		tdereg[r] = now_ms() - t0;
	}
	qsort(treg, (size_t)rounds, sizeof(double), cmp_d);
	qsort(tdereg, (size_t)rounds, sizeof(double), cmp_d);
	getrusage(RUSAGE_THREAD, &ru1);
	atomic_store(&b.stop, 1);
	for (i = 0; i < b.writers; i++)
		pthread_join(t[i], NULL);
	if (sys) {
		pthread_join(t[16], NULL);
		close(b.pipe[0]); /* the feeder's write fails (EPIPE) */
		pthread_join(t[17], NULL);
		close(b.pipe[1]);
	}
	/* the last pass of every writer is there whole */
	for (i = 0; i < b.writers; i++) {
		uint64_t *s = b.buf + (size_t)i * b.stripe;
		uint64_t pass = s[0] >> 24 & 0xffffffff;
		size_t k;

		for (k = 0; k < b.stripe; k++)
			if (s[k] != busy_word(i, pass, k) && s[k] != busy_word(i, pass - 1, k))
				atomic_fetch_add(&b.lost, 1);
	}
	printf("busy: %ld rounds of %zu octets, %d writers: %lu writes, %lu lost; "
	       "%lu read() blocks, %lu wrong; %ld RDMA checks; ibv_reg_mr %.2f ms, ibv_dereg_mr "
	       "%.2f ms (medians; 99th percentile %.2f, %.2f ms); the registering thread's CPU "
	       "time per round %.2f ms (system %.2f)\n",
	       rounds, len, b.writers, atomic_load(&b.writes), atomic_load(&b.lost),
	       atomic_load(&b.sys_blocks), atomic_load(&b.sys_bad), rdma, treg[rounds / 2],
	       tdereg[rounds / 2], treg[rounds * 99 / 100], tdereg[rounds * 99 / 100],
	       (tv_ms(&ru1.ru_utime) + tv_ms(&ru1.ru_stime) - tv_ms(&ru0.ru_utime) -
		tv_ms(&ru0.ru_stime)) / (double)rounds,
	       (tv_ms(&ru1.ru_stime) - tv_ms(&ru0.ru_stime)) / (double)rounds);
	free(treg);
	free(tdereg);
	expect(atomic_load(&b.lost) == 0, "no write lost");
	expect(atomic_load(&b.writes) > (unsigned long)rounds, "the writers wrote throughout");
	expect(!sys || (atomic_load(&b.sys_bad) == 0 && atomic_load(&b.sys_blocks) > 0),
	       "every read() into the buffer landed");
	expect(!rdma_bad, "the peer's Writes and Reads saw the buffer");
	free(b.buf);
}

/* ---------------------------------------------------------------- shared objects */

/* Register [p, p+len) (a shared object), have the peer write it, check the own view. */
static struct ibv_mr *
write_shared(struct mrp *c, void *p, size_t len, uint64_t seed, const char *what)
{
	char before[256], after[256], msg[512];
	struct ibv_mr *mr;

	maps_of(p, before, sizeof(before));
	mr = ibv_reg_mr(c->pd, p, len, RW);
	if (mr == NULL)
		printf("ibv_reg_mr: %s\n", strerror(errno));
	MRP_CHECK(mr != NULL);
	maps_of(p, after, sizeof(after));
	snprintf(msg, sizeof(msg), "%s: the mapping is unchanged by the registration (%s)", what,
		 after);
	expect(strcmp(before, after) == 0, msg);
	snprintf(msg, sizeof(msg), "%s: the peer's RDMA Write of %zu octets", what, len);
	expect(mrp_write(c, p, mr->rkey, 0, len, seed) == 0, msg);
	snprintf(msg, sizeof(msg), "%s: this process sees it", what);
	expect(mrp_bad(p, len, seed, 0) == 0, msg);
	return mr;
}

static void
case_file(struct mrp *c, char **a)
{
	size_t len = strtoull(a[1], NULL, 0);
	uint64_t seed = strtoull(a[2], NULL, 0);
	int fd = open(a[0], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	struct ibv_mr *mr;
	void *p;

	MRP_CHECK(fd >= 0 && ftruncate(fd, (off_t)len) == 0);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	MRP_CHECK(p != MAP_FAILED);
	mr = write_shared(c, p, len, seed, a[0]);
	expect(msync(p, len, MS_SYNC) == 0, "msync");
	/* the peer reads the file's pages back through the MR */
	expect(mrp_read(c, p, mr->rkey, 0, len, seed) == 0, "the peer's RDMA Read of it");
	MRP_CHECK(ibv_dereg_mr(mr) == 0);
	munmap(p, len);
	close(fd);
}

static void
case_truncate(struct mrp *c, char **a)
{
	size_t len = strtoull(a[1], NULL, 0);
	uint64_t seed = strtoull(a[2], NULL, 0);
	int fd = open(a[0], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	struct ibv_mr *mr;
	void *p;

	MRP_CHECK(fd >= 0 && ftruncate(fd, (off_t)len) == 0);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	MRP_CHECK(p != MAP_FAILED);
	memset(p, 1, len);
	mr = ibv_reg_mr(c->pd, p, len, RW);
	MRP_CHECK(mr != NULL);
	MRP_CHECK(ftruncate(fd, 0) == 0);
	expect(mrp_write(c, p, mr->rkey, 0, len, seed) == 0,
	       "the peer's RDMA Write into the truncated file's MR completes");
	expect(mrp_read(c, p, mr->rkey, 0, len, seed) == 0, "... and reads back what it wrote");
	MRP_CHECK(ibv_dereg_mr(mr) == 0);
	munmap(p, len);
	close(fd);
}

static void
case_shared(struct mrp *c, char **a)
{
	size_t len = strtoull(a[1], NULL, 0);
	uint64_t seed = strtoull(a[2], NULL, 0);
	int fd = -1, go[2], st;
	struct ibv_mr *mr;
	char name[64];
	pid_t child;
	void *p;

	if (strcmp(a[0], "memfd") == 0) {
		fd = memfd_create("mr_kinds", MFD_CLOEXEC);
	} else if (strcmp(a[0], "shm") == 0) {
		snprintf(name, sizeof(name), "/mr_kinds.%d", (int)getpid());
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
		shm_unlink(name);
	}
	MRP_CHECK(strcmp(a[0], "anon") == 0 || (fd >= 0 && ftruncate(fd, (off_t)len) == 0));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | (fd < 0 ? MAP_ANONYMOUS : 0),
		 fd, 0);
	MRP_CHECK(p != MAP_FAILED);
	if (fd >= 0 && strcmp(a[0], "shm") == 0)
		close(fd); /* nothing holds it open: it is found through the mapping */
	memset(p, 0, len);
	/* another process that shares it: forked before anything was registered */
	MRP_CHECK(pipe(go) == 0);
	child = fork();
	MRP_CHECK(child >= 0);
	if (child == 0) {
		char b;

		close(go[1]);
		_exit(read(go[0], &b, 1) == 1 && mrp_bad(p, len, seed, 0) == 0 ? 0 : 1);
	}
	close(go[0]);
	mr = write_shared(c, p, len, seed, a[0]);
	MRP_CHECK(write(go[1], "x", 1) == 1);
	MRP_CHECK(waitpid(child, &st, 0) == child);
	expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the other process sharing it sees it");
	MRP_CHECK(ibv_dereg_mr(mr) == 0);
	munmap(p, len);
	if (fd >= 0 && strcmp(a[0], "memfd") == 0)
		close(fd);
}

static void
case_sysv(struct mrp *c, char **a)
{
	key_t key = (key_t)strtol(a[0], NULL, 0);
	size_t len = strtoull(a[1], NULL, 0);
	uint64_t seed = strtoull(a[2], NULL, 0);
	size_t part = strtoull(a[3], NULL, 0), parts = strtoull(a[4], NULL, 0);
	size_t plen = len / parts, off = part * plen;
	int id = shmget(key, len, IPC_CREAT | 0600);
	struct ibv_mr *mr;
	char before[256], after[256];
	uint8_t *p;

	MRP_CHECK(id >= 0);
	p = shmat(id, NULL, 0);
	MRP_CHECK(p != (void *)-1);
	maps_of(p, before, sizeof(before));
	mr = ibv_reg_mr(c->pd, p, len, RW);
	MRP_CHECK(mr != NULL);
	maps_of(p, after, sizeof(after));
	expect(strcmp(before, after) == 0, "the segment's mapping is unchanged");
	expect(mrp_write(c, p, mr->rkey, off, plen, seed) == 0, "the peer's RDMA Write of a part");
	expect(mrp_bad(p + off, plen, seed, off) == 0, "this process sees it");
	printf("sysv: part %zu of %zu (%zu octets at %zu) through rkey %#x\n", part, parts, plen,
	       off, mr->rkey);
	/* registered until the other processes' MRs brought their parts: all at once */
	for (int i = 0; i < 1200 && mrp_bad(p, len, seed, 0) != 0; i++)
		usleep(100000);
	expect(mrp_bad(p, len, seed, 0) == 0,
	       "the other processes' registrations of it carried the other parts");
	MRP_CHECK(ibv_dereg_mr(mr) == 0);
	MRP_CHECK(shmdt(p) == 0);
}

static void
case_huge(struct mrp *c, char **a)
{
	const char *size = a[0], *kind = a[1];
	size_t page = strcmp(size, "1g") == 0 ? 1ul << 30 : 2ul << 20;
	size_t len = strtoull(a[2], NULL, 0), at[3], n = 1u << 20;
	uint64_t seed = strtoull(a[3], NULL, 0);
	int flags = MAP_HUGETLB | ((page == 1ul << 30 ? 30 : 21) << MAP_HUGE_SHIFT), fd = -1;
	bool shared = strcmp(kind, "private") != 0;
	char before[256], after[256], msg[256];
	long free0, free1;
	struct ibv_mr *mr, *in;
	uint8_t *p;

	if (strcmp(kind, "file") == 0) {
		fd = open(a[4], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		MRP_CHECK(fd >= 0 && ftruncate(fd, (off_t)len) == 0);
		unlink(a[4]);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	} else {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS | flags, -1, 0);
	}
	if (p == MAP_FAILED)
		printf("mmap of %zu octets of %s hugepages: %s\n", len, size, strerror(errno));
	MRP_CHECK(p != MAP_FAILED);
	/* touch every hugepage: the program's own, before anything is registered */
	for (size_t off = 0; off < len; off += page)
		p[off] = 1;
	maps_of(p, before, sizeof(before));
	free0 = free_hugepages(size);
	mr = ibv_reg_mr(c->pd, p, len, RW);
	if (mr == NULL)
		printf("ibv_reg_mr: %s\n", strerror(errno));
	MRP_CHECK(mr != NULL);
	free1 = free_hugepages(size);
	maps_of(p, after, sizeof(after));
	printf("huge %s %s: %s -> %s; free hugepages %ld -> %ld\n", size, kind, before, after,
	       free0, free1);
	if (shared) {
		expect(strcmp(before, after) == 0, "the mapping is unchanged (not copied)");
		expect(free0 == free1, "no hugepage taken by the registration");
	} else {
		/* the copy's hugepages in, the program's own out: as many free as before */
		expect(strstr(after, "warpnic-mr") != NULL && free1 == free0,
		       "private hugepages copied once into hugepages");
	}
	/* the first, a middle and the last MiB of it: the peer writes, reads back, we see */
	at[0] = 0;
	at[1] = len / 2;
	at[2] = len - n;
	for (size_t i = 0; i < 3; i++) {
		if (i > 0 && at[i] == at[i - 1])
			continue;
		snprintf(msg, sizeof(msg), "RDMA Write and Read of a MiB at %zu", at[i]);
		expect(mrp_write(c, p, mr->rkey, at[i], n, seed) == 0 &&
		       mrp_read(c, p, mr->rkey, at[i], n, seed) == 0 &&
		       mrp_bad(p + at[i], n, seed, at[i]) == 0, msg);
	}
	/* a small MR inside a hugepage: registered whole, used at its offset */
	in = ibv_reg_mr(c->pd, p + 5000, 100 * 8, RW);
	MRP_CHECK(in != NULL);
	expect(mrp_write(c, p + 5000, in->rkey, 0, 800, seed + 1) == 0 &&
	       mrp_bad(p + 5000, 800, seed + 1, 0) == 0, "an MR of 800 octets inside a hugepage");
	MRP_CHECK(ibv_dereg_mr(in) == 0);
	MRP_CHECK(ibv_dereg_mr(mr) == 0);
	if (!shared) {
		maps_of(p, after, sizeof(after));
		expect(strstr(after, "warpnic-mr") == NULL && mrp_bad(p + 5000, 800, seed + 1, 0) == 0,
		       "private hugepages again after deregistration, content kept");
	}
	munmap(p, len);
	if (fd >= 0)
		close(fd);
}

/* ---------------------------------------------------------------- read-only */

static void
ro_one(struct mrp *c, uint8_t *p, size_t len, uint64_t seed, const char *what)
{
	char msg[512], after[256];
	struct ibv_mr *mr;

	mr = ibv_reg_mr(c->pd, p, len, IBV_ACCESS_LOCAL_WRITE);
	snprintf(msg, sizeof(msg), "%s: registering it for writing fails with EFAULT", what);
	expect(mr == NULL && errno == EFAULT, msg);
	if (mr != NULL)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(c->pd, p, len, IBV_ACCESS_REMOTE_READ);
	MRP_CHECK(mr != NULL);
	snprintf(msg, sizeof(msg), "%s: the peer's RDMA Read of it", what);
	expect(mrp_read(c, p, mr->rkey, 0, len, seed) == 0, msg);
	snprintf(msg, sizeof(msg), "%s: a Send from it", what);
	expect(mrp_send(c, mr, p, len < (4u << 20) ? len : 4u << 20, seed) == 0, msg);
	maps_of(p, after, sizeof(after));
	snprintf(msg, sizeof(msg), "%s: still read-only (%s)", what, after);
	expect(strncmp(after, "r--", 3) == 0, msg);
	MRP_CHECK(ibv_dereg_mr(mr) == 0);
}

static void
case_ro(struct mrp *c, char **a)
{
	size_t len = strtoull(a[0], NULL, 0);
	uint64_t seed = strtoull(a[1], NULL, 0);
	char path[] = "/tmp/mr_kinds_ro.XXXXXX";
	int fd = mkstemp(path);
	uint8_t *p, *f;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	MRP_CHECK(p != MAP_FAILED);
	mrp_fill(p, len, seed, 0);
	MRP_CHECK(mprotect(p, len, PROT_READ) == 0);
	ro_one(c, p, len, seed, "mprotect(PROT_READ) memory");
	munmap(p, len);
	MRP_CHECK(fd >= 0);
	unlink(path);
	p = malloc(len);
	MRP_CHECK(p != NULL);
	mrp_fill(p, len, seed + 1, 0);
	MRP_CHECK(write(fd, p, len) == (ssize_t)len);
	free(p);
	f = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	MRP_CHECK(f != MAP_FAILED);
	ro_one(c, f, len, seed + 1, "a MAP_PRIVATE PROT_READ file");
	munmap(f, len);
	close(fd);
}

/* ---------------------------------------------------------------- munmap */

static void
case_munmap(struct mrp *c, char **a)
{
	size_t len = strtoull(a[0], NULL, 0);
	uint64_t seed = strtoull(a[1], NULL, 0);
	struct ibv_mr *mr;
	uint8_t *p, *q;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	MRP_CHECK(p != MAP_FAILED);
	mrp_fill(p, len, seed, 0);
	mr = ibv_reg_mr(c->pd, p, len, RW);
	MRP_CHECK(mr != NULL);
	MRP_CHECK(munmap(p, len) == 0);
	/* something else at the same address: the MR must not be it */
	q = mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		 -1, 0);
	MRP_CHECK(q == p);
	mrp_fill(q, len, seed + 2, 0);
	expect(mrp_read(c, p, mr->rkey, 0, len, seed) == 0,
	       "after munmap the peer still reads the registered pages");
	expect(mrp_write(c, p, mr->rkey, 0, len, seed + 1) == 0 &&
	       mrp_read(c, p, mr->rkey, 0, len, seed + 1) == 0,
	       "... and writes them and reads that back");
	expect(mrp_bad(q, len, seed + 2, 0) == 0, "the new mapping at that address is untouched");
	MRP_CHECK(ibv_dereg_mr(mr) == 0);
	expect(mrp_bad(q, len, seed + 2, 0) == 0, "... also after deregistration");
	munmap(q, len);
}

/* ---------------------------------------------------------------- rereg */

static void
case_rereg(struct mrp *c, char **a)
{
	size_t len = strtoull(a[0], NULL, 0);
	uint64_t seed = strtoull(a[1], NULL, 0);
	uint8_t *x = malloc(len), *y = malloc(len), *ro;
	struct ibv_pd *pd2 = ibv_alloc_pd(c->id->verbs);
	struct ibv_mr *mr;
	uint32_t k0, l0;
	int ret;

	MRP_CHECK(x != NULL && y != NULL && pd2 != NULL);
	memset(x, 0, len);
	memset(y, 0, len);
	mr = ibv_reg_mr(c->pd, x, len, RW);
	MRP_CHECK(mr != NULL);
	expect(mrp_write(c, x, mr->rkey, 0, len, seed) == 0 && mrp_bad(x, len, seed, 0) == 0,
	       "registered: the peer writes the first buffer");
	/* as on mlx5, the keys stay: the peer goes on with the rkey it was given first */
	k0 = mr->rkey;
	l0 = mr->lkey;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, y, len, 0);
	expect(ret == 0 && mr->addr == y && mr->length == len && mr->rkey == k0 &&
	       mr->lkey == l0, "rereg translation: to the second buffer, the keys kept");
	expect(mrp_write(c, y, k0, 0, len, seed + 1) == 0 &&
	       mrp_bad(y, len, seed + 1, 0) == 0 && mrp_bad(x, len, seed, 0) == 0,
	       "the peer's Write with the old rkey lands in the second buffer, the first is as "
	       "it was");
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_REMOTE_READ);
	mrp_fill(y, len, seed + 2, 0);
	expect(ret == 0 && mr->rkey == k0 && mrp_read(c, y, k0, 0, len, seed + 2) == 0,
	       "rereg access: read-only for the peer, which reads it with the old rkey");
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	expect(ret == 0 && mr->pd == pd2 && mr->rkey == k0, "rereg PD: to a second PD");
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS, c->pd, NULL,
			   0, RW);
	expect(ret == 0 && mr->pd == c->pd && mr->rkey == k0 &&
	       mrp_write(c, y, k0, 0, len, seed + 3) == 0 && mrp_bad(y, len, seed + 3, 0) == 0,
	       "rereg PD and access back: the peer writes again");
	ret = ibv_rereg_mr(mr, 1 << 7, NULL, NULL, 0, 0);
	expect(ret == IBV_REREG_MR_ERR_INPUT && errno == EINVAL, "rereg with an unknown flag");
	ret = ibv_rereg_mr(mr, 0, NULL, NULL, 0, RW);
	expect(ret == IBV_REREG_MR_ERR_INPUT, "rereg with access but no CHANGE_ACCESS");
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	MRP_CHECK(ro != MAP_FAILED);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, ro, 4096, 0);
	expect(ret == IBV_REREG_MR_ERR_CMD && errno == EFAULT && mr->addr == y,
	       "rereg to read-only memory for writing fails with EFAULT");
	expect(mrp_write(c, y, mr->rkey, 0, len, seed + 4) == 0 && mrp_bad(y, len, seed + 4, 0) == 0,
	       "... and the MR is as it was");
	MRP_CHECK(ibv_dereg_mr(mr) == 0);
	MRP_CHECK(ibv_dealloc_pd(pd2) == 0);
	munmap(ro, 4096);
	free(x);
	free(y);
}

/* ---------------------------------------------------------------- fork */

static void
case_fork(struct mrp *c, char **a)
{
	size_t len = strtoull(a[0], NULL, 0);
	uint64_t seed = strtoull(a[1], NULL, 0);
	bool madv = getenv("RDMAV_USE_MADVISE") != NULL;
	uint8_t *buf = malloc(len);
	struct ibv_mr *mr;
	pid_t child;
	int st;

	MRP_CHECK(buf != NULL);
	expect(ibv_is_fork_initialized() == IBV_FORK_UNNEEDED,
	       "ibv_is_fork_initialized(): IBV_FORK_UNNEEDED");
	mrp_fill(buf, len, seed, 0);
	mr = ibv_reg_mr(c->pd, buf, len, RW);
	MRP_CHECK(mr != NULL);
	child = fork();
	MRP_CHECK(child >= 0);
	if (child == 0) {
		void *junk[64];
		int i;

		/* the madvise way: the registered pages are not in the child at all */
		if (mrp_bad(buf, len, seed, 0) != 0)
			_exit(1);
		mrp_fill(buf, len, seed + 9, 0);
		for (i = 0; i < 64; i++)
			junk[i] = malloc(100 + i * 50);
		for (i = 0; i < 64; i++)
			free(junk[i]);
		_exit(0);
	}
	MRP_CHECK(waitpid(child, &st, 0) == child);
	if (madv)
		expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV,
		       "RDMAV_USE_MADVISE: the child has no registered pages (SIGSEGV)");
	else
		expect(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		       "the child had the registered memory as it was, and wrote its own copy");
	expect(mrp_bad(buf, len, seed, 0) == 0, "the parent's memory is untouched by the child");
	expect(mrp_write(c, buf, mr->rkey, 0, len, seed + 1) == 0 &&
	       mrp_bad(buf, len, seed + 1, 0) == 0, "the parent's MR works on after fork()");
	MRP_CHECK(ibv_dereg_mr(mr) == 0);
	child = fork();
	MRP_CHECK(child >= 0);
	if (child == 0)
		_exit(mrp_bad(buf, len, seed + 1, 0) == 0 ? 0 : 1);
	MRP_CHECK(waitpid(child, &st, 0) == child);
	expect(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "deregistered: a child has the memory again");
	free(buf);
}

/* ---------------------------------------------------------------- the checks of others */

static int
check_file(char **a)
{
	size_t len = strtoull(a[1], NULL, 0);
	uint64_t seed = strtoull(a[2], NULL, 0);
	uint8_t *b = malloc(len);
	int fd = open(a[0], O_RDONLY | O_CLOEXEC);

	MRP_CHECK(b != NULL && fd >= 0);
	MRP_CHECK(pread(fd, b, len, 0) == (ssize_t)len);
	expect(mrp_bad(b, len, seed, 0) == 0, "pread() of the file finds the peer's RDMA Write");
	close(fd);
	free(b);
	return failures != 0;
}

static int
check_sysv(char **a, int argc)
{
	key_t key = (key_t)strtol(a[0], NULL, 0);
	size_t len = strtoull(a[1], NULL, 0);
	uint64_t seed = strtoull(a[2], NULL, 0);
	int id = shmget(key, 0, 0);
	struct shmid_ds ds;
	void *p;

	MRP_CHECK(id >= 0);
	p = shmat(id, NULL, SHM_RDONLY);
	MRP_CHECK(p != (void *)-1);
	expect(mrp_bad(p, len, seed, 0) == 0,
	       "a second attachment of the segment sees what the peer wrote");
	MRP_CHECK(shmctl(id, IPC_STAT, &ds) == 0);
	/* warpnicd maps the segment's object, it does not attach it */
	expect(ds.shm_nattch == 1, "only this process is attached (shm_nattch 1)");
	shmdt(p);
	if (argc > 3 && strcmp(a[3], "rm") == 0)
		shmctl(id, IPC_RMID, NULL);
	return failures != 0;
}

/* ---------------------------------------------------------------- bench */

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static uint8_t *
bench_mem(const char *kind, size_t len, int *fd)
{
	int huge = MAP_HUGETLB | (21 << MAP_HUGE_SHIFT);
	uint8_t *p = MAP_FAILED;

	*fd = -1;
	if (strncmp(kind, "private", 7) == 0) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | (strstr(kind, "huge2m") ? huge : 0), -1, 0);
	} else if (strcmp(kind, "memfd") == 0 || strcmp(kind, "tmpfs") == 0) {
		*fd = strcmp(kind, "memfd") == 0 ? memfd_create("bench", MFD_CLOEXEC)
						 : open("/dev/shm/mr_kinds_bench", O_RDWR | O_CREAT, 0600);
		unlink("/dev/shm/mr_kinds_bench");
		MRP_CHECK(*fd >= 0 && ftruncate(*fd, (off_t)len) == 0);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	} else if (strcmp(kind, "huge2m") == 0 || strcmp(kind, "huge1g") == 0) {
		*fd = open(strcmp(kind, "huge2m") == 0 ? "/dev/hugepages/mr_kinds_bench"
						       : "/dev/hugepages-1G/mr_kinds_bench",
			   O_RDWR | O_CREAT, 0600);
		MRP_CHECK(*fd >= 0 && ftruncate(*fd, (off_t)len) == 0);
		unlink(strcmp(kind, "huge2m") == 0 ? "/dev/hugepages/mr_kinds_bench"
						   : "/dev/hugepages-1G/mr_kinds_bench");
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	}
	MRP_CHECK(p != MAP_FAILED);
	memset(p, 0x5a, len); /* the program's data, every page of it */
	return p;
}

static int
bench(char **a)
{
	size_t len = strtoull(a[1], NULL, 0);
	int rounds = atoi(a[2]), i, fd, n;
	struct ibv_device **dl = ibv_get_device_list(&n);
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	double *reg, *dereg, *cp;
	uint8_t *p, *q;

	MRP_CHECK(dl != NULL && n > 0 && rounds > 0);
	ctx = ibv_open_device(dl[0]);
	MRP_CHECK(ctx != NULL);
	pd = ibv_alloc_pd(ctx);
	MRP_CHECK(pd != NULL);
	reg = calloc((size_t)rounds, sizeof(double));
	dereg = calloc((size_t)rounds, sizeof(double));
	cp = calloc((size_t)rounds, sizeof(double));
	MRP_CHECK(reg != NULL && dereg != NULL && cp != NULL);
	p = bench_mem(a[0], len, &fd);
	q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	MRP_CHECK(q != MAP_FAILED);
	memset(q, 1, len);
	for (i = 0; i < rounds; i++) {
		struct ibv_mr *mr;
		double t0 = now_ms(), t1, t2;

		mr = ibv_reg_mr(pd, p, len, RW);
		t1 = now_ms();
		MRP_CHECK(mr != NULL);
		MRP_CHECK(ibv_dereg_mr(mr) == 0);
		t2 = now_ms();
		reg[i] = t1 - t0;
		dereg[i] = t2 - t1;
		t0 = now_ms();
		memcpy(q, p, len);
		cp[i] = now_ms() - t0;
	}
	qsort(reg, (size_t)rounds, sizeof(double), cmp_d);
	qsort(dereg, (size_t)rounds, sizeof(double), cmp_d);
	qsort(cp, (size_t)rounds, sizeof(double), cmp_d);
	printf("%s %zu octets, median of %d: ibv_reg_mr %.3f ms, ibv_dereg_mr %.3f ms "
	       "(%.1f and %.1f ms per GiB); memcpy of it %.3f ms\n",
	       a[0], len, rounds, reg[rounds / 2], dereg[rounds / 2],
	       reg[rounds / 2] * (double)(1ul << 30) / (double)len,
	       dereg[rounds / 2] * (double)(1ul << 30) / (double)len, cp[rounds / 2]);
	munmap(p, len);
	munmap(q, len);
	if (fd >= 0)
		close(fd);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(dl);
	return 0;
}

static const struct {
	const char *name;
	int args;
	void (*fn)(struct mrp *c, char **a);
} cases[] = {
	{"busy", 4, case_busy},     {"file", 3, case_file}, {"shared", 3, case_shared},
	{"truncate", 3, case_truncate},
	{"sysv", 5, case_sysv},     {"huge", 4, case_huge}, {"ro", 2, case_ro},
	{"munmap", 2, case_munmap}, {"rereg", 2, case_rereg}, {"fork", 2, case_fork},
};

static void
usage(void)
{
	fprintf(stderr, "usage: mr_kinds drive IP PORT | serve IP PORT CASE ARGS... | "
			"check-file PATH LEN SEED | check-sysv KEY LEN SEED [rm]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct mrp c;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 4 && strcmp(argv[1], "drive") == 0) {
		mrp_name = "mr_kinds drive";
		return mrp_drive(argv[2], argv[3]);
	}
	if (argc >= 5 && strcmp(argv[1], "check-file") == 0)
		return check_file(argv + 2);
	if (argc >= 5 && strcmp(argv[1], "check-sysv") == 0)
		return check_sysv(argv + 2, argc - 2);
	if (argc >= 5 && strcmp(argv[1], "bench") == 0)
		return bench(argv + 2);
	if (argc < 5 || strcmp(argv[1], "serve") != 0)
		usage();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (strcmp(argv[4], cases[i].name) == 0)
			break;
	if (i == sizeof(cases) / sizeof(cases[0]) || argc < 5 + cases[i].args)
		usage();
	mrp_name = "mr_kinds serve";
	memset(&c, 0, sizeof(c));
	mrp_serve(&c, argv[2], argv[3]);
	cases[i].fn(&c, argv + 5);
	mrp_bye(&c);
	printf("%s: %s\n", argv[4], failures == 0 ? "passed" : "FAILED");
	return failures != 0;
}
