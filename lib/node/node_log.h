/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/node's log type (node_log.c) and its macro. */
#ifndef WN_NODE_LOG_H
#define WN_NODE_LOG_H

#include <rte_log.h>

/** lib.wn.node (node_log.c). */
extern int wn_node_logtype;
#define NODE_LOG(lvl, ...) rte_log(RTE_LOG_##lvl, wn_node_logtype, "warpnicd: " __VA_ARGS__)

#endif /* WN_NODE_LOG_H */
