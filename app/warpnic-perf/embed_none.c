/* SPDX-License-Identifier: BSD-3-Clause */
/* Built without lib/dp: no embedded dataplane. */
#include <errno.h>
#include <stdio.h>

#include "perf.h"
#include "perf_rnic.h"

int
wn_perf_embed_run(struct wn_perf_params *p, const struct wn_perf_mode *m)
{
	(void)p;
	(void)m;
	fprintf(stderr, "warpnic-perf: built without the embedded dataplane (lib/dp)\n");
	return -ENOTSUP;
}

/* --rtc needs lib/dp: never chosen without it (wn_perf_embed_run() fails first) */
const struct perf_dev_ops perf_dev_rtc;
