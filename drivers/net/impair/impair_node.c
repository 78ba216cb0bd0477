/* SPDX-License-Identifier: BSD-3-Clause */
/* The fault injector as lib/node's port wrapper (warpnicd --impair, EAL --vdev net_wn_impair). */
#include "wn_impair.h"
#include "wn_node.h"

const struct wn_node_port_wrap wn_impair_node_wrap = {
	.create = wn_impair_create,
	.create_pending = wn_impair_create_pending,
	.poll_all = wn_impair_poll_all,
	.under = wn_impair_under,
	.destroy = wn_impair_destroy,
};
