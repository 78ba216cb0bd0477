/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The embedded dataplane, testpmd-style: the dataplane library (lib/dp, wn_node.h) runs
 * in this process with its control thread on a socket of its own, and the RNIC mode reaches
 * it through lib/client exactly as it reaches a running warpnicd, so the same benchmark code
 * measures both.
 *
 * Lcores: with workers (-l 0,1...), the dataplane shards run on the workers and the mode on
 * the main lcore. With the main lcore alone (-l 0), shard 0 runs there, as in warpnicd, and
 * the mode on a control thread (wn_ctrl_thread_create(): the CPUs EAL left free, else the
 * main lcore's, shared with the dataplane, which naps when idle).
 *
 * Run to completion (--rtc): no control thread and no lib/client; the main lcore runs shard
 * 0 itself with the mode's step inside its loop (dev_rtc.c over lib/dp's wn_dp_embed.h).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_lcore.h>

#include "wn_dpdk_compat.h"
#include "wn_impair.h"
#include "wn_node.h"

#include "perf.h"

/* How long the connections get to close before the dataplane stops. */
#define EMBED_LINGER_MS 3000

static struct wn_node_conf conf; /* outlives the run: p->ctl points into it */

struct bench {
	const struct wn_perf_mode *m;
	const struct wn_perf_params *p;
	int rc;
};

/* SIGINT/SIGTERM (a server waits for its client without limit): no stale socket file */
static void
on_signal(int sig)
{
	unlink(conf.ctl_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

static int
conf_build(struct wn_perf_params *p)
{
	const char *tmp = getenv("TMPDIR");
	int rc;

	wn_node_defaults(&conf);
	conf.wrap = &wn_impair_node_wrap; /* --impair */
	snprintf(conf.ctl_path, sizeof(conf.ctl_path), "%s/warpnic-perf.%d.sock",
		 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp", (int)getpid());
	for (unsigned int i = 0; i < p->nb_dp_opts; i++) {
		/* a bad value is said by wn_node_option(), with the form it accepts */
		rc = wn_node_option(&conf, p->dp_opt[i][0], p->dp_opt[i][1]);
		if (rc == -ENOENT)
			fprintf(stderr, "warpnic-perf: --%s is no option of the dataplane\n",
				p->dp_opt[i][0]);
		if (rc != 0)
			return rc;
	}
	if (p->ctl != NULL) {
		if (strlen(p->ctl) >= sizeof(conf.ctl_path)) {
			fprintf(stderr, "warpnic-perf: --ctl path too long\n");
			return -ENAMETOOLONG;
		}
		snprintf(conf.ctl_path, sizeof(conf.ctl_path), "%s", p->ctl);
	}
	return 0;
}

/* the mode, then let the peer's benchmark have our FINs before the shards stop */
static void
bench_run(struct bench *b)
{
	b->rc = b->m->run(b->p);
	if (wn_node_wait_idle(EMBED_LINGER_MS) != 0)
		fprintf(stderr, "warpnic-perf: connections still open after %u ms; stopping\n",
			EMBED_LINGER_MS);
}

static void *
bench_thread(void *arg)
{
	bench_run(arg);
	wn_node_quit(); /* wn_node_run_main() returns */
	return NULL;
}

/*
 * Run to completion (--rtc): the main lcore runs shard 0 and the mode in one loop (the mode's
 * device is the shard, dev_rtc.c). No control thread, no other lcore.
 */
static int
rtc_run(struct wn_perf_params *p, const struct wn_perf_mode *m)
{
	struct wn_dp *dp;
	int rc;

	if (rte_lcore_count() != 1) {
		fprintf(stderr, "warpnic-perf: --rtc runs one shard on one lcore: give EAL one "
			"(-l N)\n");
		return -EINVAL;
	}
	rc = conf_build(p);
	conf.rtc = true;
	if (rc == 0)
		rc = wn_node_start(&conf);
	wn_node_conf_free(&conf);
	if (rc != 0) {
		fprintf(stderr, "warpnic-perf: run-to-completion dataplane: %s\n", strerror(-rc));
		return rc;
	}
	dp = wn_node_shard(0);
	rc = wn_dp_start(dp);
	if (rc == 0) {
		rc = m->run(p);
		wn_dp_stop(dp);
	} else {
		fprintf(stderr, "warpnic-perf: shard start: %s\n", strerror(-rc));
	}
	(void)wn_node_stop();
	return rc;
}

int
wn_perf_embed_run(struct wn_perf_params *p, const struct wn_perf_mode *m)
{
	struct bench b = { .m = m, .p = p };
	pthread_t tid;
	int rc, dp_rc;

	if (p->rtc)
		return rtc_run(p, m);
	rc = conf_build(p);
	/* the main lcore alone: it runs shard 0, the mode goes to a thread */
	conf.main_shard = rte_lcore_count() == 1;
	if (rc == 0)
		rc = wn_node_start(&conf);
	wn_node_conf_free(&conf); /* start() keeps a copy */
	if (rc != 0) {
		fprintf(stderr, "warpnic-perf: embedded dataplane: %s\n", strerror(-rc));
		return rc;
	}
	p->ctl = conf.ctl_path;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (!conf.main_shard) {
		bench_run(&b);
		dp_rc = 0;
	} else {
		rc = wn_ctrl_thread_create(&tid, "wn-perf-bench", bench_thread, &b);
		if (rc != 0) {
			fprintf(stderr, "warpnic-perf: benchmark thread: %s\n", strerror(-rc));
			wn_node_stop();
			return rc;
		}
		dp_rc = wn_node_run_main();
		pthread_join(tid, NULL);
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	rc = wn_node_stop();
	if (dp_rc == 0)
		dp_rc = rc;
	if (dp_rc != 0)
		fprintf(stderr, "warpnic-perf: embedded dataplane: %s\n", strerror(-dp_rc));
	return b.rc != 0 ? b.rc : dp_rc;
}
