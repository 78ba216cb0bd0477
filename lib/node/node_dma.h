/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/node's DMA mapping of client regions for a NIC (node_dma.c). */
#ifndef WN_NODE_DMA_H
#define WN_NODE_DMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wn_dp.h"

/* node_dma.c: client regions DMA-mapped for a port that reads frames by DMA */
struct wn_node_dma;

/** How a region is mapped for the device: DPDK's calls, or a test's. */
struct wn_node_dma_mapper {
	/** Map [@p va, +@p len) at IOVA = VA. @return 0 or -errno with @p why said. */
	int (*map)(void *arg, void *va, size_t len, char *why, size_t why_len);
	/** Undo map. @return 0 or -errno. */
	int (*unmap)(void *arg, void *va, size_t len);
	void *arg;
};

/** What node_dma.c did (/warpnic/dp/dma). */
struct wn_node_dma_stats {
	uint64_t maps, map_failures;     /**< regions mapped; regions left to be copied */
	uint64_t unmaps, unmap_failures; /**< mappings undone (after the region's last mbuf) */
	uint64_t bytes_mapped;           /**< now */
	uint64_t regions, regions_mapped; /**< regions registered now; of them mapped */
};

/**
 * Assess port @p port, whose frames port @p under reads (itself, or the port under a
 * wrapper's face), for @p entries STag indexes: does it DMA, can regions be mapped (a PCI
 * device, IOVA as VA), with zero-copy transmit asked for or not (@p zero_copy).
 * @return it, or NULL with errno ENOMEM. Main lcore.
 */
struct wn_node_dma *wn_node_dma_create(uint16_t port, uint16_t under, uint32_t entries,
				       bool zero_copy);
/**
 * A port that DMAs, whose regions @p m maps (tests: the bookkeeping without a device).
 * @return it, or NULL with errno ENOMEM.
 */
struct wn_node_dma *wn_node_dma_create_with(uint32_t entries, const struct wn_node_dma_mapper *m);
/** @return what the shards read (wn_dp_conf.dma); NULL for NULL. */
const struct wn_dp_dma_map *wn_node_dma_map(const struct wn_node_dma *d);
/** @return true when the port reads client memory by DMA (not a port that copies). */
bool wn_node_dma_needed(const struct wn_node_dma *d);
/** Read the counters. Any thread. */
void wn_node_dma_stats(struct wn_node_dma *d, struct wn_node_dma_stats *st);
/** Teardown begins: unmapping leaves the mappings to the device's close. */
void wn_node_dma_closing(struct wn_node_dma *d);
/** Free (after the server is destroyed). NULL: no-op. */
void wn_node_dma_free(struct wn_node_dma *d);
/**
 * lib/server's wn_server_conf mr_map / mr_unmap / mr_move (arg: the wn_node_dma). Control
 * thread.
 */
void wn_node_dma_mr_map(void *arg, uint32_t stag, void *map, size_t len);
void wn_node_dma_mr_unmap(void *arg, uint32_t stag, void *map, size_t len);
void wn_node_dma_mr_move(void *arg, uint32_t stag, void *map);
/** Register "/warpnic/dp/dma" (the last wn_node_dma_create's). */
void wn_node_dma_telemetry_register(void);

#endif /* WN_NODE_DMA_H */
