/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnic-perf: throughput/latency harness in testpmd's shape.
 *   warpnic-perf [EAL options --] --mode MODE [options]
 * Each mode is a struct wn_perf_mode in a mode_<name>.c; add it to the table below.
 * EAL starts only for the modes that drive a DPDK port themselves (raw_*) and for an RNIC
 * mode with an embedded dataplane (--ip ...: embed.c runs warpnicd's dataplane on the worker
 * lcores); otherwise the RNIC modes are ordinary clients of a running warpnicd (lib/client)
 * and wire_bw is local computation.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "wn_port.h"

#include "perf.h"

static const struct wn_perf_mode *const modes[] = {
	&wn_perf_mode_wire_bw,
	&wn_perf_mode_raw_bw,
	&wn_perf_mode_raw_lat,
	&wn_perf_mode_write_bw,
	&wn_perf_mode_read_bw,
	&wn_perf_mode_send_bw,
	&wn_perf_mode_write_lat,
	&wn_perf_mode_read_lat,
	&wn_perf_mode_send_lat,
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
wn_perf_modes_usage(FILE *f)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		fprintf(f, "  %-10s %s%s\n", modes[i]->name, modes[i]->help,
			modes[i]->needs_eal ? " [EAL]" : "");
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
	char **eal_argv, **app_argv;
	int sep = -1, eal_argc, app_argc, rc;
	bool eal_up = false;

	if (wants_help(argc, argv)) {
		wn_perf_usage(argv[0]);
		wn_perf_modes_usage(stdout);
		return 0;
	}
	for (int i = 1; i < argc && sep < 0; i++)
		if (strcmp(argv[i], "--") == 0)
			sep = i;
	/* EAL's argv: argv[0] and what precedes "--"; ours: argv[0] and what follows it */
	eal_argc = sep < 0 ? 1 : sep;
	app_argc = sep < 0 ? argc : argc - sep;
	eal_argv = calloc((size_t)eal_argc + 1, sizeof(char *));
	app_argv = calloc((size_t)app_argc + 1, sizeof(char *));
	if (eal_argv == NULL || app_argv == NULL) {
		fprintf(stderr, "%s: out of memory\n", argv[0]);
		return 1;
	}
	for (int i = 0; i < eal_argc; i++)
		eal_argv[i] = argv[i];
	app_argv[0] = argv[0];
	for (int i = 1; i < app_argc; i++)
		app_argv[i] = argv[sep < 0 ? i : sep + i];

	rc = wn_perf_parse_args(app_argc, app_argv, &p);
	if (rc == 1) {
		wn_perf_usage(argv[0]);
		wn_perf_modes_usage(stdout);
	}
	if (rc != 0)
		goto out;
	m = wn_perf_mode_find(p.mode);
	if (m == NULL) {
		fprintf(stderr, "%s: unknown mode '%s'; modes:\n", argv[0], p.mode);
		wn_perf_modes_usage(stderr);
		rc = -EINVAL;
		goto out;
	}
	if (p.nb_dp_opts > 0 && !m->rnic) {
		fprintf(stderr, "%s: --%s: the embedded dataplane is for the RNIC modes\n",
			argv[0], p.dp_opt[0][0]);
		rc = -EINVAL;
		goto out;
	}
	if (m->parse != NULL && (rc = m->parse(&p)) != 0)
		goto out;
	/* a peer that went away must not kill us while we report */
	signal(SIGPIPE, SIG_IGN);
	if (m->needs_eal || p.nb_dp_opts > 0) {
		/* keep stdout for results (JSON must stay parseable) */
		rte_openlog_stream(stderr);
		if (rte_eal_init(eal_argc, eal_argv) < 0) {
			fprintf(stderr, "%s: EAL init failed: %s\n", argv[0],
				rte_strerror(rte_errno));
			rc = -EINVAL;
			goto out;
		}
		eal_up = true;
	}
	if (p.nb_dp_opts > 0)
		rc = wn_perf_embed_run(&p, m);
	else
		rc = m->run(&p);
	if (rc < 0)
		fprintf(stderr, "%s: mode %s failed: %s\n", argv[0], m->name, strerror(-rc));
out:
	if (eal_up)
		wn_net_port_shutdown(); /* ports and EAL, as far as net_memif allows */
	free(eal_argv);
	free(app_argv);
	return rc < 0 ? 1 : 0;
}
