/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/node's log type (NODE_LOG, node_log.h): a leaf every file of the library may use. */
#include <rte_log.h>

#include "node_log.h"

RTE_LOG_REGISTER_DEFAULT(wn_node_logtype, NOTICE);
