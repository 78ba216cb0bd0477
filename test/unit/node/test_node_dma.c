/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp node_dma.c's bookkeeping of client regions DMA-mapped for a NIC, with a fake mapper in
 * place of rte_extmem_register + rte_dev_dma_map (no EAL, no device): a region is sent in
 * place only while it is mapped; a region that cannot be mapped is said so at once, by its
 * STag index, and counted; unmapping undoes exactly what was mapped, once; an older region
 * at the same STag index, unmapped late, never hides a newer one's state; at teardown the
 * mappings are left to the device's close.
 *
 * What would break if these failed: a NIC reading client memory the IOMMU does not map (a
 * DMA fault, a frame of garbage), or zero-copy silently off for mapped regions.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "node_priv.h"
#include "wn_mem.h"

#define ENTRIES 16

/* the fake device: what it has mapped, and whether the next map fails */
static struct {
	void *va[8];
	size_t len[8];
	unsigned int n;
	unsigned int maps, unmaps;
	int fail_next;
} dev;

static int
fake_map(void *arg, void *va, size_t len, char *why, size_t why_len)
{
	(void)arg;
	if (dev.fail_next != 0) {
		int err = dev.fail_next;

		dev.fail_next = 0;
		snprintf(why, why_len, "fake: %s", strerror(-err));
		return err;
	}
	assert_true(dev.n < 8);
	dev.va[dev.n] = va;
	dev.len[dev.n] = len;
	dev.n++;
	dev.maps++;
	return 0;
}

static int
fake_unmap(void *arg, void *va, size_t len)
{
	(void)arg;
	for (unsigned int k = 0; k < dev.n; k++)
		if (dev.va[k] == va) {
			assert_int_equal(dev.len[k], len);
			dev.va[k] = dev.va[--dev.n];
			dev.len[k] = dev.len[dev.n];
			dev.unmaps++;
			return 0;
		}
	fail_msg("unmap of %p, which is not mapped", va);
	return -EINVAL;
}

static struct wn_node_dma *
new_dma(void)
{
	const struct wn_node_dma_mapper m = { .map = fake_map, .unmap = fake_unmap };
	struct wn_node_dma *d;

	memset(&dev, 0, sizeof(dev));
	d = wn_node_dma_create_with(ENTRIES, &m);
	assert_non_null(d);
	assert_true(wn_node_dma_needed(d));
	assert_true(wn_node_dma_map(d)->usable);
	return d;
}

/* What a shard reads before it sends a region in place (lib/dp llp.c): the map's view. */
static bool
region_ok(const struct wn_node_dma *d, uint32_t stag)
{
	const struct wn_dp_dma_map *v = wn_node_dma_map(d);
	uint32_t i = wn_mem_stag_index(stag);

	if (v == NULL || !v->needed)
		return true;
	return v->usable && i < v->cap && __atomic_load_n(&v->gen[i], __ATOMIC_ACQUIRE) != 0;
}

static uint32_t
stag(uint32_t index, uint8_t key)
{
	return index << 8 | key;
}

static char mem_a[8192], mem_b[4096];

/* A port that copies (no node_dma.c object): everything may go in place. */
static void
test_no_dma(void **state)
{
	(void)state;
	assert_true(region_ok(NULL, stag(3, 1)));
	assert_false(wn_node_dma_needed(NULL));
	assert_null(wn_node_dma_map(NULL));
	wn_node_dma_mr_map(NULL, stag(3, 1), mem_a, sizeof(mem_a)); /* no-ops */
	wn_node_dma_mr_unmap(NULL, stag(3, 1), mem_a, sizeof(mem_a));
}

static void
test_map_unmap(void **state)
{
	struct wn_node_dma *d = new_dma();
	struct wn_node_dma_stats st;

	(void)state;
	assert_false(region_ok(d, stag(2, 7))); /* never registered */
	wn_node_dma_mr_map(d, stag(2, 7), mem_a, sizeof(mem_a));
	assert_int_equal(dev.maps, 1);
	assert_ptr_equal(dev.va[0], mem_a);
	assert_int_equal(dev.len[0], sizeof(mem_a));
	assert_true(region_ok(d, stag(2, 7)));
	assert_false(region_ok(d, stag(3, 7))); /* another index */
	wn_node_dma_stats(d, &st);
	assert_int_equal(st.maps, 1);
	assert_int_equal(st.map_failures, 0);
	assert_int_equal(st.regions, 1);
	assert_int_equal(st.regions_mapped, 1);
	assert_int_equal(st.bytes_mapped, sizeof(mem_a));

	/* its memory goes (after the dataplane's DONE): unmapped once, copied from then on */
	wn_node_dma_mr_unmap(d, stag(2, 7), mem_a, sizeof(mem_a));
	assert_int_equal(dev.unmaps, 1);
	assert_int_equal(dev.n, 0);
	assert_false(region_ok(d, stag(2, 7)));
	wn_node_dma_mr_unmap(d, stag(2, 7), mem_a, sizeof(mem_a)); /* unknown now: nothing */
	assert_int_equal(dev.unmaps, 1);
	wn_node_dma_stats(d, &st);
	assert_int_equal(st.unmaps, 1);
	assert_int_equal(st.unmap_failures, 0);
	assert_int_equal(st.regions, 0);
	assert_int_equal(st.bytes_mapped, 0);
	wn_node_dma_free(d);
}

/* Mapping fails: the registration stands, its FPDUs are copied, and it is counted. */
static void
test_map_failure(void **state)
{
	struct wn_node_dma *d = new_dma();
	struct wn_node_dma_stats st;

	(void)state;
	dev.fail_next = -ENOSPC;
	wn_node_dma_mr_map(d, stag(4, 1), mem_a, sizeof(mem_a));
	assert_false(region_ok(d, stag(4, 1)));
	wn_node_dma_stats(d, &st);
	assert_int_equal(st.maps, 0);
	assert_int_equal(st.map_failures, 1);
	assert_int_equal(st.regions, 1);
	assert_int_equal(st.regions_mapped, 0);
	/* nothing was mapped, so nothing is unmapped */
	wn_node_dma_mr_unmap(d, stag(4, 1), mem_a, sizeof(mem_a));
	assert_int_equal(dev.unmaps, 0);
	wn_node_dma_stats(d, &st);
	assert_int_equal(st.regions, 0);
	assert_int_equal(st.unmaps, 0);

	/* an STag index beyond the table cannot be tracked: copied, counted */
	wn_node_dma_mr_map(d, stag(ENTRIES, 1), mem_b, sizeof(mem_b));
	assert_int_equal(dev.maps, 0);
	assert_false(region_ok(d, stag(ENTRIES, 1)));
	wn_node_dma_stats(d, &st);
	assert_int_equal(st.map_failures, 2);
	wn_node_dma_mr_unmap(d, stag(ENTRIES, 1), mem_b, sizeof(mem_b));
	wn_node_dma_free(d);
}

/*
 * lib/mem reuses an STag index with a new key while the old region still waits for its
 * unmapping (its last zero-copy mbuf): the index says what the newer region is.
 */
static void
test_index_reuse(void **state)
{
	struct wn_node_dma *d = new_dma();

	(void)state;
	wn_node_dma_mr_map(d, stag(5, 1), mem_a, sizeof(mem_a));
	wn_node_dma_mr_map(d, stag(5, 2), mem_b, sizeof(mem_b));
	assert_true(region_ok(d, stag(5, 2)));
	/* the old one's unmapping does not clear the new one's state */
	wn_node_dma_mr_unmap(d, stag(5, 1), mem_a, sizeof(mem_a));
	assert_int_equal(dev.unmaps, 1);
	assert_ptr_equal(dev.va[0], mem_b);
	assert_true(region_ok(d, stag(5, 2)));
	wn_node_dma_mr_unmap(d, stag(5, 2), mem_b, sizeof(mem_b));
	assert_false(region_ok(d, stag(5, 2)));

	/* the newer region fails to map while the older is still mapped: not mapped at once */
	wn_node_dma_mr_map(d, stag(6, 1), mem_a, sizeof(mem_a));
	dev.fail_next = -ENOMEM;
	wn_node_dma_mr_map(d, stag(6, 2), mem_b, sizeof(mem_b));
	assert_false(region_ok(d, stag(6, 2)));
	wn_node_dma_mr_unmap(d, stag(6, 1), mem_a, sizeof(mem_a));
	assert_false(region_ok(d, stag(6, 2)));
	wn_node_dma_mr_unmap(d, stag(6, 2), mem_b, sizeof(mem_b));
	assert_int_equal(dev.maps, 3);
	assert_int_equal(dev.unmaps, 3);
	assert_int_equal(dev.n, 0);
	wn_node_dma_free(d);
}

/*
 * ibv_rereg_mr swaps two regions' STags (lib/server mr.c): neither index says mapped while
 * the entries change, then each says what its region is, and each region's unmapping still
 * clears its own index only.
 */
static void
test_move(void **state)
{
	struct wn_node_dma *d = new_dma();

	(void)state;
	wn_node_dma_mr_map(d, stag(7, 1), mem_a, sizeof(mem_a));   /* the old region */
	dev.fail_next = -ENOMEM;
	wn_node_dma_mr_map(d, stag(8, 2), mem_b, sizeof(mem_b));   /* the new one: copied */
	assert_true(region_ok(d, stag(7, 1)));
	wn_node_dma_mr_move(d, stag(7, 1), NULL);
	wn_node_dma_mr_move(d, stag(8, 2), NULL);
	assert_false(region_ok(d, stag(7, 1)));
	/* swapped: index 7 reaches the unmapped new region, index 8 the mapped old one */
	wn_node_dma_mr_move(d, stag(7, 1), mem_b);
	wn_node_dma_mr_move(d, stag(8, 2), mem_a);
	assert_false(region_ok(d, stag(7, 1)));
	assert_true(region_ok(d, stag(8, 2)));
	wn_node_dma_mr_unmap(d, stag(8, 2), mem_a, sizeof(mem_a));
	assert_false(region_ok(d, stag(8, 2)));
	assert_int_equal(dev.unmaps, 1);
	/* and the other way: a mapped new region moves to the old index */
	wn_node_dma_mr_map(d, stag(9, 3), mem_a, sizeof(mem_a));
	wn_node_dma_mr_move(d, stag(7, 1), NULL);
	wn_node_dma_mr_move(d, stag(9, 3), NULL);
	wn_node_dma_mr_move(d, stag(7, 1), mem_a);
	wn_node_dma_mr_move(d, stag(9, 3), mem_b);
	assert_true(region_ok(d, stag(7, 1)));
	assert_false(region_ok(d, stag(9, 3)));
	wn_node_dma_mr_unmap(d, stag(9, 3), mem_b, sizeof(mem_b));
	assert_true(region_ok(d, stag(7, 1)));
	wn_node_dma_mr_unmap(d, stag(7, 1), mem_a, sizeof(mem_a));
	assert_false(region_ok(d, stag(7, 1)));
	assert_int_equal(dev.n, 0);
	wn_node_dma_free(d);
}

/* Teardown: the NIC may still hold frames; the mappings go with the device, not before. */
static void
test_closing(void **state)
{
	struct wn_node_dma *d = new_dma();
	struct wn_node_dma_stats st;

	(void)state;
	wn_node_dma_mr_map(d, stag(1, 1), mem_a, sizeof(mem_a));
	wn_node_dma_closing(d);
	wn_node_dma_mr_unmap(d, stag(1, 1), mem_a, sizeof(mem_a));
	assert_int_equal(dev.unmaps, 0);
	wn_node_dma_stats(d, &st);
	assert_int_equal(st.regions, 0);
	assert_int_equal(st.unmaps, 0);
	wn_node_dma_free(d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_dma),
		cmocka_unit_test(test_map_unmap),
		cmocka_unit_test(test_map_failure),
		cmocka_unit_test(test_index_reuse),
		cmocka_unit_test(test_move),
		cmocka_unit_test(test_closing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
