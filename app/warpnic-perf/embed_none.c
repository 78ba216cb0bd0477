/* SPDX-License-Identifier: BSD-3-Clause */
/* Built without lib/dp: no embedded dataplane. */
#include <errno.h>
#include <stdio.h>

#include "perf.h"

int
wn_perf_embed_run(struct wn_perf_params *p, const struct wn_perf_mode *m)
{
	(void)p;
	(void)m;
	fprintf(stderr, "warpnic-perf: built without the embedded dataplane (lib/dp)\n");
	return -ENOTSUP;
}
