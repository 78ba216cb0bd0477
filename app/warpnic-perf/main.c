/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnic-perf: throughput/latency harness in testpmd's shape.
 *   warpnic-perf [EAL options] -- --mode MODE [options]
 * Each mode is a struct wn_perf_mode in its own mode_<name>.c; add it to
 * the table below.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "perf.h"

static const struct wn_perf_mode *const modes[] = {
	&wn_perf_mode_wire_bw,
};

const struct wn_perf_mode *
wn_perf_mode_find(const char *name)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(modes[i]->name, name) == 0)
			return modes[i];
	return NULL;
}

void
wn_perf_modes_usage(void *f)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		fprintf(f, "  %-14s %s\n", modes[i]->name, modes[i]->help);
}

static bool
wants_help(int argc, char **argv)
{
	bool after_sep = false;

	/* "--help" before or after "--": answer without starting EAL */
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			after_sep = true;
		else if ((after_sep || i == 1) &&
			 (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0))
			return true;
	}
	return false;
}

int
main(int argc, char **argv)
{
	struct wn_perf_params p;
	const struct wn_perf_mode *m;
	int n, rc;

	if (wants_help(argc, argv)) {
		wn_perf_usage(argv[0]);
		return 0;
	}
	/* keep stdout for results (JSON must stay parseable) */
	rte_openlog_stream(stderr);
	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "%s: EAL init failed: %s\n", argv[0], rte_strerror(rte_errno));
		return 1;
	}
	argv[n] = argv[0];
	rc = wn_perf_parse_args(argc - n, argv + n, &p);
	if (rc != 0)
		goto out;
	m = wn_perf_mode_find(p.mode);
	if (m == NULL) {
		fprintf(stderr, "%s: unknown mode '%s'; modes:\n", argv[0], p.mode);
		wn_perf_modes_usage(stderr);
		rc = -EINVAL;
		goto out;
	}
	if (m->parse != NULL && (rc = m->parse(&p)) != 0)
		goto out;
	rc = m->run(&p);
	if (rc < 0)
		fprintf(stderr, "%s: mode %s failed: %s\n", argv[0], m->name, strerror(-rc));
out:
	rte_eal_cleanup();
	return rc < 0 ? 1 : 0;
}
