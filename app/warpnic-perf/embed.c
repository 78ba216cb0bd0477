/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The embedded dataplane, testpmd-style: warpnicd's library (app/warpnicd/wn_dpapp.h) runs
 * its shards on this process's worker lcores and its control thread on a socket of its own;
 * the RNIC modes reach it through lib/client exactly as they reach a running warpnicd, so the
 * same benchmark code measures both.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wn_dpapp.h"

#include "perf.h"

/* How long the connections get to close before the dataplane stops. */
#define EMBED_LINGER_MS 3000

static struct wn_dpapp_conf conf; /* outlives the run: p->ctl points into it */
static bool started;

int
wn_perf_embed_start(struct wn_perf_params *p)
{
	const char *tmp = getenv("TMPDIR");
	int rc;

	wn_dpapp_defaults(&conf);
	conf.main_shard = false; /* the main lcore runs the benchmark */
	snprintf(conf.ctl_path, sizeof(conf.ctl_path), "%s/warpnic-perf.%d.sock",
		 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp", (int)getpid());
	for (unsigned int i = 0; i < p->nb_dp_opts; i++) {
		rc = wn_dpapp_option(&conf, p->dp_opt[i][0], p->dp_opt[i][1]);
		if (rc != 0) {
			fprintf(stderr, "warpnic-perf: bad value for --%s: '%s'\n", p->dp_opt[i][0],
				p->dp_opt[i][1] != NULL ? p->dp_opt[i][1] : "");
			wn_dpapp_conf_free(&conf);
			return rc;
		}
	}
	if (p->ctl != NULL) {
		if (strlen(p->ctl) >= sizeof(conf.ctl_path)) {
			fprintf(stderr, "warpnic-perf: --ctl path too long\n");
			wn_dpapp_conf_free(&conf);
			return -ENAMETOOLONG;
		}
		snprintf(conf.ctl_path, sizeof(conf.ctl_path), "%s", p->ctl);
	}
	rc = wn_dpapp_start(&conf);
	wn_dpapp_conf_free(&conf); /* start() keeps a copy */
	if (rc != 0)
		return rc;
	started = true;
	p->ctl = conf.ctl_path;
	return 0;
}

int
wn_perf_embed_stop(void)
{
	if (!started)
		return 0;
	started = false;
	/* the peer's benchmark waits for our FINs: let them go out before the shards stop */
	if (wn_dpapp_wait_idle(EMBED_LINGER_MS) != 0)
		fprintf(stderr, "warpnic-perf: connections still open after %u ms; stopping\n",
			EMBED_LINGER_MS);
	return wn_dpapp_stop();
}
