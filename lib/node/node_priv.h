/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/node's private declarations (wn_node.h has the public API). node.c starts and stops the
 * daemon (port, control server, shards, link watcher), node_options.c parses its options,
 * node_dma.c maps client regions for a NIC that reads frames by DMA, node_fence.c keeps the
 * memif PMD from unmapping rings the shards are still reading.
 */
#ifndef WN_NODE_PRIV_H
#define WN_NODE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_log.h>
#include <rte_rcu_qsbr.h>

#include "wn_dp.h"

#include "node_dma.h"
#include "node_log.h"

/* node_fence.c: the memif unmap fence */
/**
 * Fence the net_memif PMD's unmappings if the PMD is a loaded plugin: its munmap() calls
 * made by the EAL interrupt thread wait for a grace period of the QSBR variable given with
 * wn_node_fence_set(). Idempotent. @return 0 (installed, or already), -ENOENT (no such
 * plugin loaded: the PMD is linked in, or absent), -errno. Main lcore, after rte_eal_init().
 */
int wn_node_fence_install(void);
/** The shards' QSBR variable (NULL: no shard runs, unmap at once). Any thread. */
void wn_node_fence_set(struct rte_rcu_qsbr *qs);
/** @return the count of fenced unmappings (for wn_dp_conf.unmap_fences). */
const uint64_t *wn_node_fence_count(void);

#endif /* WN_NODE_PRIV_H */
