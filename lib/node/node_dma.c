/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Client memory a NIC can DMA from, for zero-copy transmit.
 *
 * Ports whose transmit copies the frame or hands over virtual addresses (memif, af_packet,
 * tap, ...) send client memory in place as it is. A PCI NIC reads frames by DMA at the
 * mbuf's IOVA, so a region it may read must be known to DPDK and mapped for the device:
 * rte_extmem_register() and rte_dev_dma_map() (VFIO programs the IOMMU, which also pins the
 * pages) when the EAL uses IOVA as VA, so that an attached buffer's IOVA is its address.
 * Under IOVA as PA (uio_pci_generic, vfio without an IOMMU) the device would read physical
 * addresses of client pages that nothing pins in place (shmem and file pages may move):
 * regions are not mapped and zero-copy is off, the FPDUs copied as before.
 *
 * The control thread maps a region when lib/server registers it (before the client learns
 * its STag, so no FPDU can use it earlier) and unmaps it when its memory goes: after the
 * dataplane's DONE for its deregistration, which waits until no zero-copy mbuf pins it (the
 * PMD frees a transmitted mbuf only after the NIC read it), and before munmap. Shards check,
 * for every FPDU they would send in place, that each region it reads is mapped (gen[] by
 * STag index); one that is not is copied (zc_unmapped). When a failed mapping leaves a
 * region unmapped, its STag index says so at once, even if an older region at the same
 * index still waits for its unmapping.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_memory.h>
#include <rte_telemetry.h>

#include "node_dma.h"
#include "node_log.h"
#include "wn_dpdk_compat.h"

#define DMA_PAGE 4096u /* divides every client page size (4 KiB, 2 MiB, 1 GiB hugetlbfs) */
#define DMA_TEL_REGIONS 64 /* regions /warpnic/dp/dma lists */

struct dma_region {
	uint32_t stag;
	uint32_t gen;        /* != 0: mapped */
	void *map;
	size_t len;
	char why[80];        /* not mapped: why */
};

struct wn_node_dma {
	struct wn_dp_dma_map v;   /* what the shards read: needed, usable, tx_cleanup, port, gen */
	struct wn_node_dma_mapper mapper; /* DPDK's calls (dma_map, dma_unmap), or a test's */
	bool face;                /* the port is a wrapper's face over v.port */
	struct rte_device *dev;   /* the device that reads the frames (NULL: none) */
	char dev_name[64];
	bool closing;             /* teardown: leave mappings to the device's close */
	char why[160];            /* needed && !usable: why zero-copy is off */
	uint32_t next_gen;
	pthread_mutex_t lock;     /* regions and counters: control thread vs telemetry */
	struct dma_region *reg;
	uint32_t n_reg, cap_reg;
	struct wn_node_dma_stats st;   /* regions, regions_mapped: counted when read */
	char last_failure[128];
};

static struct wn_node_dma *tel_dma;

/*
 * Register @p map with DPDK and map it for the device at IOVA = VA (wn_node_dma_mapper map).
 * @return 0 or -errno (@p why set).
 */
static int
dma_map(void *arg, void *map, size_t len, char *why, size_t why_len)
{
	struct wn_node_dma *d = arg;
	int err;

	if (rte_extmem_register(map, len, NULL, 0, DMA_PAGE) != 0) {
		err = rte_errno;
		snprintf(why, why_len, "rte_extmem_register: %s", rte_strerror(err));
		return -err;
	}
	if (rte_dev_dma_map(d->dev, map, (uint64_t)(uintptr_t)map, len) != 0) {
		err = rte_errno;
		snprintf(why, why_len, "rte_dev_dma_map: %s", rte_strerror(err));
		(void)rte_extmem_unregister(map, len);
		return -err;
	}
	return 0;
}

/* Undo dma_map (wn_node_dma_mapper unmap). @return 0 or -errno. */
static int
dma_unmap(void *arg, void *map, size_t len)
{
	struct wn_node_dma *d = arg;

	if (rte_dev_dma_unmap(d->dev, map, (uint64_t)(uintptr_t)map, len) != 0 ||
	    rte_extmem_unregister(map, len) != 0)
		return -rte_errno;
	return 0;
}

static void
port_assess(struct wn_node_dma *d, bool zero_copy)
{
	struct rte_eth_dev_info info;
	const char *bus;

	if (wn_net_port_copies(d->v.port)) {
		d->v.needed = false;
		return;
	}
	d->v.needed = true;
	if (rte_eth_dev_info_get(d->v.port, &info) != 0 || info.device == NULL) {
		snprintf(d->why, sizeof(d->why), "port %u: no device information", d->v.port);
		return;
	}
	d->dev = info.device;
	snprintf(d->dev_name, sizeof(d->dev_name), "%s", rte_dev_name(info.device));
	bus = rte_bus_name(rte_dev_bus(info.device));
	if (!zero_copy)
		snprintf(d->why, sizeof(d->why), "zero-copy transmit not asked for");
	else if (bus == NULL || strcmp(bus, "pci") != 0)
		snprintf(d->why, sizeof(d->why), "%s (%s) is no PCI device: client memory cannot "
			 "be DMA-mapped for it", d->dev_name, info.driver_name);
	else if (rte_eal_iova_mode() != RTE_IOVA_VA)
		snprintf(d->why, sizeof(d->why), "EAL IOVA as PA (no IOMMU: uio_pci_generic or "
			 "vfio no-IOMMU): client pages have no pinned physical address");
	else if (d->face)
		snprintf(d->why, sizeof(d->why), "a wrapper's face (the fault injector) over %s: "
			 "its queues are not the shards'", d->dev_name);
	else
		d->v.usable = true;
	/* a region is released (deregistration's DONE, its DMA unmapping) only when the last
	 * mbuf pointing into it is freed: a PMD that frees sent mbufs only when it needs their
	 * descriptors again (virtio, e1000 em) holds the last ones until more frames go out;
	 * where the PMD can free them on demand the shards' tick does */
	d->v.tx_cleanup = d->v.usable && rte_eth_tx_done_cleanup(d->v.port, 0, 0) >= 0;
}

static struct wn_node_dma *
dma_new(uint32_t entries)
{
	struct wn_node_dma *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	d->v.cap = entries;
	pthread_mutex_init(&d->lock, NULL);
	return d;
}

/* The table of mapped regions by STag index, once the port is known to need it. */
static int
dma_table(struct wn_node_dma *d)
{
	d->v.gen = calloc(d->v.cap, sizeof(*d->v.gen));
	if (d->v.gen == NULL) {
		wn_node_dma_free(d);
		errno = ENOMEM;
		return -ENOMEM;
	}
	return 0;
}

struct wn_node_dma *
wn_node_dma_create_with(uint32_t entries, const struct wn_node_dma_mapper *m)
{
	struct wn_node_dma *d = dma_new(entries);

	if (d == NULL)
		return NULL;
	d->mapper = *m;
	d->v.needed = d->v.usable = true;
	snprintf(d->dev_name, sizeof(d->dev_name), "(mapper)");
	return dma_table(d) == 0 ? d : NULL;
}

struct wn_node_dma *
wn_node_dma_create(uint16_t port, uint16_t under, uint32_t entries, bool zero_copy)
{
	struct wn_node_dma *d = dma_new(entries);

	if (d == NULL)
		return NULL;
	d->v.port = under;
	d->face = under != port;
	d->mapper = (struct wn_node_dma_mapper){ .map = dma_map, .unmap = dma_unmap, .arg = d };
	port_assess(d, zero_copy);
	if (d->v.usable && dma_table(d) != 0)
		return NULL;
	if (d->v.usable)
		NODE_LOG(NOTICE, "port %u (%s): zero-copy transmit from DMA-mapped regions "
			 "(IOVA as VA; sent mbufs freed on demand: %s)\n", d->v.port, d->dev_name,
			 d->v.tx_cleanup ? "yes" : "no, when the PMD reuses their descriptors");
	else if (d->v.needed && zero_copy)
		NODE_LOG(WARNING, "port %u may DMA from IOVAs and %s: zero-copy transmit off\n",
			 d->v.port, d->why);
	tel_dma = d;
	return d;
}

void
wn_node_dma_closing(struct wn_node_dma *d)
{
	if (d != NULL)
		d->closing = true;
}

void
wn_node_dma_free(struct wn_node_dma *d)
{
	if (d == NULL)
		return;
	if (tel_dma == d)
		tel_dma = NULL;
	free(d->v.gen);
	free(d->reg);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

const struct wn_dp_dma_map *
wn_node_dma_map(const struct wn_node_dma *d)
{
	return d != NULL ? &d->v : NULL;
}

bool
wn_node_dma_needed(const struct wn_node_dma *d)
{
	return d != NULL && d->v.needed;
}

static struct dma_region *
region_add(struct wn_node_dma *d)
{
	if (d->n_reg == d->cap_reg) {
		uint32_t cap = d->cap_reg != 0 ? 2 * d->cap_reg : 16;
		void *p = realloc(d->reg, cap * sizeof(*d->reg));

		if (p == NULL)
			return NULL;
		d->reg = p;
		d->cap_reg = cap;
	}
	memset(&d->reg[d->n_reg], 0, sizeof(d->reg[0]));
	return &d->reg[d->n_reg++];
}


void
wn_node_dma_mr_map(void *arg, uint32_t stag, void *map, size_t len)
{
	struct wn_node_dma *d = arg;
	struct dma_region *r;
	uint32_t i = wn_mem_stag_index(stag), gen = 0;
	char why[80] = "";

	if (d == NULL || !d->v.needed)
		return;
	if (!d->v.usable)
		snprintf(why, sizeof(why), "the port cannot map regions (see why)");
	else if (i >= d->v.cap)
		snprintf(why, sizeof(why), "STag index %u beyond the table", i);
	else if (d->mapper.map(d->mapper.arg, map, len, why, sizeof(why)) == 0)
		gen = ++d->next_gen != 0 ? d->next_gen : ++d->next_gen;
	pthread_mutex_lock(&d->lock);
	r = region_add(d);
	if (r == NULL && gen != 0) {
		/* cannot be unmapped later without its record: do not keep it */
		(void)d->mapper.unmap(d->mapper.arg, map, len);
		gen = 0;
		snprintf(why, sizeof(why), "out of memory for the region's record");
	}
	if (r != NULL) {
		r->stag = stag;
		r->gen = gen;
		r->map = map;
		r->len = len;
		snprintf(r->why, sizeof(r->why), "%s", why);
	}
	if (gen != 0) {
		d->st.maps++;
		d->st.bytes_mapped += len;
	} else if (d->v.usable) {
		d->st.map_failures++;
		snprintf(d->last_failure, sizeof(d->last_failure), "STag 0x%08x, %zu octets: %s",
			 stag, len, why);
		NODE_LOG(WARNING, "region STag 0x%08x (%zu octets) not DMA-mapped, its FPDUs are "
		       "copied: %s\n", stag, len, why);
	}
	pthread_mutex_unlock(&d->lock);
	/* this region's state, whatever an older region at this index still holds */
	if (d->v.usable && i < d->v.cap)
		__atomic_store_n(&d->v.gen[i], gen, __ATOMIC_RELEASE);
}

void
wn_node_dma_mr_move(void *arg, uint32_t stag, void *map)
{
	struct wn_node_dma *d = arg;
	uint32_t i = wn_mem_stag_index(stag), gen = 0, k;

	if (d == NULL || !d->v.needed)
		return;
	pthread_mutex_lock(&d->lock);
	for (k = 0; map != NULL && k < d->n_reg; k++) {
		if (d->reg[k].map == map) {
			d->reg[k].stag = stag;
			gen = d->reg[k].gen;
			break;
		}
	}
	pthread_mutex_unlock(&d->lock);
	if (d->v.usable && i < d->v.cap)
		__atomic_store_n(&d->v.gen[i], gen, __ATOMIC_RELEASE);
}

void
wn_node_dma_mr_unmap(void *arg, uint32_t stag, void *map, size_t len)
{
	struct wn_node_dma *d = arg;
	uint32_t i = wn_mem_stag_index(stag), k;
	uint32_t gen = 0;

	if (d == NULL || !d->v.needed)
		return;
	pthread_mutex_lock(&d->lock);
	for (k = 0; k < d->n_reg; k++)
		if (d->reg[k].map == map)
			break;
	if (k == d->n_reg) {
		pthread_mutex_unlock(&d->lock);
		return;
	}
	gen = d->reg[k].gen;
	d->reg[k] = d->reg[--d->n_reg];
	if (gen != 0) {
		int err;

		d->st.bytes_mapped -= len;
		if (d->closing) {
			/* teardown: frames may still sit in the NIC's queues; the mapping (and its
			 * page pins) goes with the device when the port closes */
			pthread_mutex_unlock(&d->lock);
			return;
		}
		d->st.unmaps++;
		err = d->mapper.unmap(d->mapper.arg, map, len);
		if (err != 0) {
			d->st.unmap_failures++;
			snprintf(d->last_failure, sizeof(d->last_failure),
				 "unmapping STag 0x%08x: %s", stag, strerror(-err));
		}
	}
	pthread_mutex_unlock(&d->lock);
	/* no lookup of this STag can succeed any more (lib/mem's grace period) and no mbuf
	 * pins it (the DONE waited): clear its index unless a newer region owns it */
	if (gen != 0 && i < d->v.cap)
		__atomic_compare_exchange_n(&d->v.gen[i], &gen, 0, false, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED);
}

void
wn_node_dma_stats(struct wn_node_dma *d, struct wn_node_dma_stats *st)
{
	pthread_mutex_lock(&d->lock);
	*st = d->st;
	st->regions = d->n_reg;
	st->regions_mapped = 0;
	for (uint32_t k = 0; k < d->n_reg; k++)
		st->regions_mapped += d->reg[k].gen != 0;
	pthread_mutex_unlock(&d->lock);
}

/* rte_telemetry "/warpnic/dp/dma": the port's DMA mode and each region's mapping. */
static int
tel_dma_cmd(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_node_dma *m = tel_dma;
	struct rte_tel_data *list;
	struct wn_node_dma_stats st;

	(void)cmd;
	(void)params;
	if (m == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	wn_tel_dict_u64(d, "port", m->v.port);
	rte_tel_data_add_dict_string(d, "device", m->dev_name[0] != '\0' ? m->dev_name : "-");
	rte_tel_data_add_dict_string(d, "iova_mode",
				     rte_eal_iova_mode() == RTE_IOVA_VA ? "va" :
				     rte_eal_iova_mode() == RTE_IOVA_PA ? "pa" : "dc");
	/* zero-copy transmit's memory: "in place" (the port copies), "mapped" (regions
	 * DMA-mapped for the device), "copied" (the port DMAs and regions cannot be mapped) */
	rte_tel_data_add_dict_string(d, "mode", !m->v.needed ? "in_place" :
				     m->v.usable ? "mapped" : "copied");
	rte_tel_data_add_dict_string(d, "why", m->v.needed && !m->v.usable ? m->why : "-");
	rte_tel_data_add_dict_string(d, "tx_cleanup", m->v.tx_cleanup ? "yes" : "no");
	wn_node_dma_stats(m, &st);
	wn_tel_dict_u64(d, "regions", st.regions);
	wn_tel_dict_u64(d, "regions_mapped", st.regions_mapped);
	wn_tel_dict_u64(d, "regions_copied", st.regions - st.regions_mapped);
	wn_tel_dict_u64(d, "bytes_mapped", st.bytes_mapped);
	wn_tel_dict_u64(d, "maps", st.maps);
	wn_tel_dict_u64(d, "map_failures", st.map_failures);
	wn_tel_dict_u64(d, "unmaps", st.unmaps);
	wn_tel_dict_u64(d, "unmap_failures", st.unmap_failures);
	pthread_mutex_lock(&m->lock);
	rte_tel_data_add_dict_string(d, "last_failure",
				     m->last_failure[0] != '\0' ? m->last_failure : "-");
	list = rte_tel_data_alloc();
	if (list != NULL) {
		rte_tel_data_start_array(list, RTE_TEL_STRING_VAL);
		for (uint32_t k = 0; k < m->n_reg && k < DMA_TEL_REGIONS; k++) {
			const struct dma_region *r = &m->reg[k];
			char s[RTE_TEL_MAX_STRING_LEN];

			snprintf(s, sizeof(s), "0x%08x %zu %s%s", r->stag, r->len,
				 r->gen != 0 ? "mapped" : "copied: ", r->gen != 0 ? "" : r->why);
			rte_tel_data_add_array_string(list, s);
		}
		rte_tel_data_add_dict_container(d, "list", list, 0);
	}
	pthread_mutex_unlock(&m->lock);
	return 0;
}

void
wn_node_dma_telemetry_register(void)
{
	/* help texts must stay below RTE_TEL_MAX_STRING_LEN, else the command is refused */
	rte_telemetry_register_cmd("/warpnic/dp/dma", tel_dma_cmd,
				   "Client memory and the port's DMA: mode, why, regions mapped or "
				   "copied. No parameters");
}
