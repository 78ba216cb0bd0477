/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for warpnic-perf's command line (app/warpnic-perf/params.c): the input is
 * split at NUL and newline octets into argv[1..]. Invariants of an accepted command line: a
 * mode is named; --server and --client, --json - and --csv - exclude each other; --qps
 * 1..WN_PERF_MAX_QPS, --depth 1..4096, --reps 1..WN_PERF_MAX_REPS, --port 1..65535, --timeout
 * at least 0.1 s; every size is positive and there are at most WN_PERF_MAX_SIZES; dataplane
 * options are kept in order, at most WN_PERF_MAX_DP_OPTS. Then the mode helpers run (sizes in
 * a mode's range, the iteration budget).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* main.c's list of modes, for --help */
void
wn_perf_modes_usage(FILE *f)
{
	fputs("modes: ...\n", f);
}

#define MAX_ARGS 64

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	struct wn_perf_params p;
	char *argv[MAX_ARGS + 2], *buf;
	int argc = 1, ret;

	if (!init) {
		/* usage and error messages are not what is tested: the parser's stdio goes
		 * to /dev/null, fd 2 stays for libFuzzer's and the sanitizers' reports */
		FILE *null = fopen("/dev/null", "w");

		if (null == NULL)
			abort();
		stdout = null;
		stderr = null;
		init = 1;
	}
	buf = malloc(size + 1);
	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = (char *)"warpnic-perf";
	for (size_t i = 0, start = 0; i <= size && argc <= MAX_ARGS; i++) {
		if (i == size || buf[i] == '\0' || buf[i] == '\n') {
			buf[i] = '\0';
			argv[argc++] = buf + start;
			start = i + 1;
		}
	}
	argv[argc] = NULL;
	ret = wn_perf_parse_args(argc, argv, &p);
	if (ret == 0) {
		uint64_t iters;
		double secs;

		if (p.mode == NULL || (p.server && p.client != NULL))
			abort();
		if (p.qps < 1 || p.qps > WN_PERF_MAX_QPS || p.depth < 1 || p.depth > 4096 || p.reps < 1 ||
		    p.reps > WN_PERF_MAX_REPS || p.port == 0 || p.timeout < 0.1)
			abort();
		if (p.nb_sizes > WN_PERF_MAX_SIZES || p.nb_dp_opts > WN_PERF_MAX_DP_OPTS)
			abort();
		for (unsigned int i = 0; i < p.nb_sizes; i++)
			if (p.sizes[i] == 0)
				abort();
		for (unsigned int i = 0; i < p.nb_dp_opts; i++)
			if (p.dp_opt[i][0] == NULL || p.dp_opt[i][1] == NULL)
				abort();
		if (p.json != NULL && p.csv != NULL && strcmp(p.json, "-") == 0 &&
		    strcmp(p.csv, "-") == 0)
			abort();
		if (wn_perf_sizes_default(&p, "fuzz", 64, 1, 1u << 20) == 0) {
			if (p.nb_sizes == 0 || p.nb_sizes > WN_PERF_MAX_SIZES)
				abort();
			for (unsigned int i = 0; i < p.nb_sizes; i++)
				if (p.sizes[i] < 1 || p.sizes[i] > (1u << 20))
					abort();
		}
		wn_perf_budget(&p, 1000, &iters, &secs);
		if (iters == 0 || !(secs > 0))
			abort();
	} else if (ret != 1 && ret != -EINVAL) {
		abort(); /* 1: --help shown; otherwise -EINVAL with a message */
	}
	free(buf);
	return 0;
}
