/* SPDX-License-Identifier: BSD-3-Clause */
/* warpnic-perf option parsing (DESIGN.md "Interfaces": keep names stable). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

void
wn_perf_usage(const char *prog)
{
	printf("Usage: %s [EAL options] -- --mode MODE [options]\n"
	       "\n"
	       "EAL options: e.g. --no-huge --in-memory --no-pci -l 0 (see DPDK's EAL docs)\n"
	       "\n"
	       "Options:\n"
	       "  --mode MODE      test to run (list below)\n"
	       "  --server         wait for a --client peer (network modes)\n"
	       "  --client ADDR    connect to a --server at ADDR (network modes)\n"
	       "  --size N         message / ULPDU size in octets (repeatable)\n"
	       "  --sweep          run a range of sizes instead of --size\n"
	       "  --qps N          queue pairs (network modes, default 1)\n"
	       "  --depth N        outstanding work requests per QP (default 64)\n"
	       "  --iters N        operations per measurement (default: per mode)\n"
	       "  --json           print one JSON object instead of a table\n"
	       "  -h, --help       this text\n"
	       "\n"
	       "Modes:\n",
	       prog);
	wn_perf_modes_usage(stdout);
}

static int
parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

enum {
	OPT_MODE = 256,
	OPT_SERVER,
	OPT_CLIENT,
	OPT_SIZE,
	OPT_SWEEP,
	OPT_QPS,
	OPT_DEPTH,
	OPT_ITERS,
	OPT_JSON,
};

int
wn_perf_parse_args(int argc, char **argv, struct wn_perf_params *p)
{
	static const struct option opts[] = {
		{"mode", required_argument, NULL, OPT_MODE},
		{"server", no_argument, NULL, OPT_SERVER},
		{"client", required_argument, NULL, OPT_CLIENT},
		{"size", required_argument, NULL, OPT_SIZE},
		{"sweep", no_argument, NULL, OPT_SWEEP},
		{"qps", required_argument, NULL, OPT_QPS},
		{"depth", required_argument, NULL, OPT_DEPTH},
		{"iters", required_argument, NULL, OPT_ITERS},
		{"json", no_argument, NULL, OPT_JSON},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *prog = argc > 0 ? argv[0] : "warpnic-perf";
	uint64_t v;
	int c;

	memset(p, 0, sizeof(*p));
	p->qps = 1;
	p->depth = 64;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_MODE:
			p->mode = optarg;
			break;
		case OPT_SERVER:
			p->server = true;
			break;
		case OPT_CLIENT:
			p->client = optarg;
			break;
		case OPT_SIZE:
			if (parse_u64(optarg, 1, UINT32_MAX, &v) < 0 ||
			    p->nb_sizes == WN_PERF_MAX_SIZES) {
				fprintf(stderr, "%s: bad --size '%s'\n", prog, optarg);
				return -EINVAL;
			}
			p->sizes[p->nb_sizes++] = (uint32_t)v;
			break;
		case OPT_SWEEP:
			p->sweep = true;
			break;
		case OPT_QPS:
		case OPT_DEPTH:
			if (parse_u64(optarg, 1, 65536, &v) < 0) {
				fprintf(stderr, "%s: bad number '%s'\n", prog, optarg);
				return -EINVAL;
			}
			if (c == OPT_QPS)
				p->qps = (unsigned int)v;
			else
				p->depth = (unsigned int)v;
			break;
		case OPT_ITERS:
			if (parse_u64(optarg, 1, UINT64_MAX / 2, &v) < 0) {
				fprintf(stderr, "%s: bad --iters '%s'\n", prog, optarg);
				return -EINVAL;
			}
			p->iters = v;
			break;
		case OPT_JSON:
			p->json = true;
			break;
		case 'h':
			wn_perf_usage(prog);
			return 1;
		default:
			fprintf(stderr, "%s: see --help\n", prog);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
		return -EINVAL;
	}
	if (p->mode == NULL) {
		fprintf(stderr, "%s: --mode is required (see --help)\n", prog);
		return -EINVAL;
	}
	if (p->server && p->client != NULL) {
		fprintf(stderr, "%s: --server and --client exclude each other\n", prog);
		return -EINVAL;
	}
	if (p->sweep && p->nb_sizes > 0) {
		fprintf(stderr, "%s: --sweep and --size exclude each other\n", prog);
		return -EINVAL;
	}
	return 0;
}
