/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A DPDK program registers an rte_malloc'd buffer (its EAL's hugepages) through the shims
 * and a peer carries RDMA traffic there (mr_pair.c):
 *
 *   mr_dpdk IP PORT LEN SEED -- EAL ARGS...
 *
 * The buffer stays the EAL's hugepages (its mappings unchanged, nothing copied); the peer
 * RDMA-Writes all of it, reads it back, and receives a Send from it; the program sees every
 * octet. Exit status 0 when every check passed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_malloc.h>

#include "mr_pair.h"

static int failures;

static void
expect(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	fflush(stdout);
	failures += !ok;
}

/* The mappings /proc/self/maps lists over [p, p+len), one per line into @p out. */
static void
maps_over(const void *p, size_t len, char *out, size_t cap)
{
	uintptr_t a = (uintptr_t)p, e = a + len;
	char line[512];
	size_t used = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	out[0] = '\0';
	MRP_CHECK(f != NULL);
	while (fgets(line, sizeof(line), f) != NULL) {
		uintptr_t lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && hi > a && lo < e && used < cap)
			used += (size_t)snprintf(out + used, cap - used, "%s", line);
	}
	fclose(f);
}

int
main(int argc, char **argv)
{
	static char before[1 << 16], after[1 << 16];
	struct ibv_mr *mr;
	struct mrp c;
	size_t len;
	uint64_t seed;
	uint8_t *buf;
	int eal, n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mrp_name = "mr_dpdk";
	if (argc < 6 || strcmp(argv[5], "--") != 0) {
		fprintf(stderr, "usage: mr_dpdk IP PORT LEN SEED -- EAL ARGS...\n");
		return 2;
	}
	len = strtoull(argv[3], NULL, 0);
	seed = strtoull(argv[4], NULL, 0);
	argv[5] = argv[0];
	eal = rte_eal_init(argc - 5, argv + 5);
	MRP_CHECK(eal >= 0);
	buf = rte_malloc("mr_dpdk", len, 4096);
	MRP_CHECK(buf != NULL);
	memset(buf, 0, len);
	maps_over(buf, len, before, sizeof(before));
	n = 0;
	for (char *l = before; (l = strchr(l, '\n')) != NULL; l++)
		n++;
	printf("rte_malloc'd %zu octets at %p over %d mappings:\n%s", len, (void *)buf, n, before);
	expect(strstr(before, "hugepages") != NULL || strstr(before, "memfd") != NULL,
	       "the buffer is the EAL's hugepages");
	memset(&c, 0, sizeof(c));
	mrp_serve(&c, argv[1], argv[2]);
	mr = ibv_reg_mr(c.pd, buf, len,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (mr == NULL)
		printf("ibv_reg_mr: %s\n", strerror(errno));
	MRP_CHECK(mr != NULL);
	maps_over(buf, len, after, sizeof(after));
	expect(strcmp(before, after) == 0, "its mappings are unchanged by the registration");
	expect(mrp_write(&c, buf, mr->rkey, 0, len, seed) == 0, "the peer's RDMA Write of all of it");
	expect(mrp_bad(buf, len, seed, 0) == 0, "the program sees every octet");
	expect(mrp_read(&c, buf, mr->rkey, 0, len, seed) == 0, "the peer's RDMA Read of it");
	mrp_fill(buf, 1u << 20, seed + 1, 0);
	expect(mrp_send(&c, mr, buf, 1u << 20, seed + 1) == 0, "a Send of a MiB from it");
	mrp_bye(&c);
	MRP_CHECK(ibv_dereg_mr(mr) == 0);
	rte_free(buf);
	rte_eal_cleanup();
	printf("dpdk: %s\n", failures == 0 ? "passed" : "FAILED");
	return failures != 0;
}
