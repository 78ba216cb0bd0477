/* SPDX-License-Identifier: BSD-3-Clause */
/* warpnic-perf option parsing (DESIGN.md "Interfaces": keep names stable). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

void
wn_perf_usage(const char *prog)
{
	printf("Usage: %s [EAL options --] --mode MODE [options]\n"
	       "\n"
	       "EAL options (before \"--\") are used by the modes that drive a DPDK port\n"
	       "(raw_bw, raw_lat), e.g. -l 0 --no-pci --in-memory --vdev net_memif0,role=server,\n"
	       "and by the RNIC modes with an embedded dataplane (--ip); the other runs ignore\n"
	       "them. Without \"--\", every argument is an option below.\n"
	       "\n"
	       "Options:\n"
	       "  --mode MODE        test to run (list below)\n"
	       "  --server           wait for one --client peer, serve its run, exit\n"
	       "  --client ADDR      run against a --server: RNIC modes: its IP address;\n"
	       "                     raw modes: the peer's MAC, or \"any\" (broadcast)\n"
	       "  --bind ADDR        RNIC server: listen on ADDR only (default: any address)\n"
	       "  --port N           RNIC modes: TCP port (default %u)\n"
	       "  --ctl PATH         RNIC modes: warpnicd control socket (default $WARPNIC_CTL,\n"
	       "                     else /run/warpnic/warpnicd.sock); with --ip: where the\n"
	       "                     embedded dataplane serves (default a private socket)\n"
	       "  --size N[,N...]    message size(s) in octets (repeatable)\n"
	       "  --sweep[=N,N...]   sizes 2 B..1 MiB in powers of two (wire_bw: 64 B..64768 B),\n"
	       "                     or the given list\n"
	       "  --qps N            RNIC modes: data queue pairs, 1-16384 (default 1)\n"
	       "  --depth N          RNIC bw modes: outstanding work requests per QP (default 64)\n"
	       "  --buffers N        RNIC modes: data buffers (a send and a receive half each, of\n"
	       "                     the largest size) the QPs take in turn: QP i uses i %% N\n"
	       "                     (default 256; 1: every QP sends from and places into the\n"
	       "                     same memory, which stays in cache as one QP's does)\n"
	       "  --iters N          operations per size (bw modes: per QP)\n"
	       "  --duration SEC     time per size (the measurement ends at whichever of --iters\n"
	       "                     and --duration comes first; neither: the mode's iterations,\n"
	       "                     at most %.0f s)\n"
	       "  --timeout SEC      give up when the peer is silent this long (default %.0f;\n"
	       "                     a server waits for its client without limit unless given)\n"
	       "  --reps N           network modes: measure each size N times and report the\n"
	       "                     median run (bandwidth, or p50 latency); default 1\n"
	       "  --json [FILE]      write the results as one JSON object to FILE (none or\n"
	       "                     \"-\": stdout)\n"
	       "  --csv [FILE]       write the results as CSV to FILE (none or \"-\": stdout)\n"
	       "  -h, --help         this text\n"
	       "\n"
	       "Embedded dataplane (RNIC modes): --ip runs warpnicd's dataplane in this process\n"
	       "on the EAL port (the first ethdev, e.g. --vdev net_memif0,...), and the mode\n"
	       "talks to it through lib/client as to a running warpnicd. With workers (-l 0,1)\n"
	       "the dataplane runs on the workers and the mode on the main lcore; with one lcore\n"
	       "(-l 0) the dataplane runs there and the mode on a thread beside it. These\n"
	       "options are warpnicd's (see warpnicd --help and config/warpnicd.conf):\n"
	       "  --ip ADDR/PREFIX   port address (repeatable); starts the embedded dataplane\n"
	       "  --config FILE      warpnicd options from FILE (one per line, no dashes)\n"
	       "  --impair SPEC      fault injector on the port, e.g. drop=0.01,reorder=0.01\n"
	       "  --pcap FILE        capture the port's packets (pcapng)\n"
	       "  --gw ADDR, --mtu N, --name DEV, --idle-us N, --max-conns N, --sockbuf BYTES,\n"
	       "  --tx-budget BYTES, --mbufs N, --no-offload, --mpa-rev 1|2, --markers, --no-crc,\n"
	       "  --no-p2p, --rtr LIST, --mpa-timeout MS, --tx-staged on|off,\n"
	       "  --zero-copy-tx on|off, --zero-copy-min BYTES\n"
	       "\n"
	       "Run to completion (RNIC modes, with --ip):\n"
	       "  --rtc              testpmd style: one EAL lcore (-l N) runs the dataplane shard\n"
	       "                     and the mode in one loop, each iteration rx_burst -> TCP ->\n"
	       "                     MPA -> RNIC -> the mode's step (post, poll completions) ->\n"
	       "                     tx_burst; the RNIC is driven in-process (lib/dp's\n"
	       "                     wn_dp_embed.h): no control thread, no lib/client, no ring\n"
	       "                     to another thread\n"
	       "\n"
	       "The client (or the local mode) prints a table to stdout (to stderr when stdout\n"
	       "carries JSON or CSV). Bandwidth counts message octets; latency is half the\n"
	       "round trip (ping-pong), except read_lat: one whole RDMA Read.\n"
	       "\n"
	       "Modes:\n",
	       prog, WN_PERF_DEFAULT_PORT, WN_PERF_DEFAULT_DURATION, WN_PERF_DEFAULT_TIMEOUT);
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

static int
parse_secs(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < 0 || v > 86400)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "N[,N...]" appended to p->sizes */
static int
parse_sizes(const char *s, struct wn_perf_params *p)
{
	char buf[512], *tok, *save = NULL;
	uint64_t v;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (parse_u64(tok, 1, UINT32_MAX, &v) < 0 || p->nb_sizes == WN_PERF_MAX_SIZES)
			return -EINVAL;
		p->sizes[p->nb_sizes++] = (uint32_t)v;
	}
	return p->nb_sizes > 0 ? 0 : -EINVAL;
}

int
wn_perf_sizes_default(struct wn_perf_params *p, const char *mode, uint32_t def, uint32_t min,
		      uint32_t max)
{
	if (p->sweep) {
		for (uint32_t s = 2; s <= (1u << 20) && p->nb_sizes < WN_PERF_MAX_SIZES; s *= 2)
			if (s >= min && s <= max)
				p->sizes[p->nb_sizes++] = s;
	} else if (p->nb_sizes == 0) {
		p->sizes[p->nb_sizes++] = def;
	}
	for (unsigned int i = 0; i < p->nb_sizes; i++) {
		if (p->sizes[i] < min || p->sizes[i] > max) {
			fprintf(stderr, "%s: --size must be %" PRIu32 "..%" PRIu32 " (got %" PRIu32
				")\n", mode, min, max, p->sizes[i]);
			return -EINVAL;
		}
	}
	return 0;
}

void
wn_perf_budget(const struct wn_perf_params *p, uint64_t def_iters, uint64_t *iters, double *secs)
{
	if (!p->iters_set && !p->duration_set) {
		*iters = def_iters;
		*secs = WN_PERF_DEFAULT_DURATION;
	} else {
		*iters = p->iters_set ? p->iters : UINT64_MAX;
		*secs = p->duration_set && p->duration > 0 ? p->duration : INFINITY;
		if (*iters == UINT64_MAX && isinf(*secs))
			*secs = WN_PERF_DEFAULT_DURATION; /* --duration 0 alone */
	}
}

enum {
	OPT_MODE = 256,
	OPT_SERVER,
	OPT_CLIENT,
	OPT_BIND,
	OPT_PORT,
	OPT_CTL,
	OPT_SIZE,
	OPT_SWEEP,
	OPT_QPS,
	OPT_DEPTH,
	OPT_BUFS,
	OPT_ITERS,
	OPT_DURATION,
	OPT_TIMEOUT,
	OPT_REPS,
	OPT_JSON,
	OPT_CSV,
	OPT_RTC,
	OPT_DP, /* OPT_DP + i: dp_opts[i] */
};

/* warpnicd's options the embedded dataplane takes (wn_node_option() applies them by name) */
static const struct option dp_opts[] = {
	{"ip", required_argument, NULL, 0},
	{"gw", required_argument, NULL, 0},
	{"mtu", required_argument, NULL, 0},
	{"name", required_argument, NULL, 0},
	{"config", required_argument, NULL, 0},
	{"impair", required_argument, NULL, 0},
	{"pcap", required_argument, NULL, 0},
	{"idle-us", required_argument, NULL, 0},
	{"max-conns", required_argument, NULL, 0},
	{"sockbuf", required_argument, NULL, 0},
	{"tx-budget", required_argument, NULL, 0},
	{"mbufs", required_argument, NULL, 0},
	{"no-offload", no_argument, NULL, 0},
	{"mpa-rev", required_argument, NULL, 0},
	{"markers", no_argument, NULL, 0},
	{"no-crc", no_argument, NULL, 0},
	{"no-p2p", no_argument, NULL, 0},
	{"rtr", required_argument, NULL, 0},
	{"mpa-timeout", required_argument, NULL, 0},
	{"tx-staged", required_argument, NULL, 0},
	{"zero-copy-tx", required_argument, NULL, 0},
	{"zero-copy-min", required_argument, NULL, 0},
};
#define NB_DP_OPTS (sizeof(dp_opts) / sizeof(dp_opts[0]))

/* The integer options: their bounds, and where the value goes. */
static const struct {
	int opt;
	const char *name;
	uint64_t lo, hi;
} num_opts[] = {
	{ OPT_PORT, "port", 1, 65535 },
	{ OPT_QPS, "qps", 1, WN_PERF_MAX_QPS },
	{ OPT_DEPTH, "depth", 1, 4096 },
	{ OPT_BUFS, "buffers", 1, WN_PERF_MAX_QPS },
	{ OPT_ITERS, "iters", 1, UINT64_MAX / 2 },
	{ OPT_REPS, "reps", 1, WN_PERF_MAX_REPS },
};

/* An integer option. @return 1 when @p c is one (applied), 0 when not, -EINVAL. */
static int
opt_number(int c, const char *arg, struct wn_perf_params *p, const char *prog)
{
	uint64_t v;

	for (size_t i = 0; i < sizeof(num_opts) / sizeof(num_opts[0]); i++) {
		if (num_opts[i].opt != c)
			continue;
		if (parse_u64(arg, num_opts[i].lo, num_opts[i].hi, &v) < 0) {
			fprintf(stderr, "%s: bad --%s '%s' (%" PRIu64 "..%" PRIu64 ")\n", prog,
				num_opts[i].name, arg, num_opts[i].lo, num_opts[i].hi);
			return -EINVAL;
		}
		if (c == OPT_PORT)
			p->port = (uint16_t)v;
		else if (c == OPT_QPS)
			p->qps = (unsigned int)v;
		else if (c == OPT_DEPTH)
			p->depth = (unsigned int)v;
		else if (c == OPT_BUFS)
			p->bufs = (unsigned int)v;
		else if (c == OPT_REPS)
			p->reps = (unsigned int)v;
		else
			p->iters = v, p->iters_set = true;
		return 1;
	}
	return 0;
}

/* What one parse keeps besides the parameters. */
struct parse_state {
	const char *prog;
	int argc;
	char **argv;
	bool size_list, sweep_opt;
};

/* --size, --sweep, --duration, --timeout, --json, --csv. @return 0 or -EINVAL. */
static int
opt_value(int c, char *arg, struct wn_perf_params *p, struct parse_state *ps)
{
	switch (c) {
	case OPT_SIZE:
		if (parse_sizes(arg, p) < 0) {
			fprintf(stderr, "%s: bad --size '%s' (at most %u sizes)\n", ps->prog, arg,
				WN_PERF_MAX_SIZES);
			return -EINVAL;
		}
		ps->size_list = true;
		return 0;
	case OPT_SWEEP:
		ps->sweep_opt = true;
		if (arg == NULL)
			p->sweep = true;
		else if (parse_sizes(arg, p) < 0) {
			fprintf(stderr, "%s: bad --sweep list '%s'\n", ps->prog, arg);
			return -EINVAL;
		}
		return 0;
	case OPT_DURATION:
	case OPT_TIMEOUT:
		if (parse_secs(arg, c == OPT_DURATION ? &p->duration : &p->timeout) < 0 ||
		    (c == OPT_TIMEOUT && p->timeout < 0.1)) {
			fprintf(stderr, "%s: bad number of seconds '%s'\n", ps->prog, arg);
			return -EINVAL;
		}
		*(c == OPT_DURATION ? &p->duration_set : &p->timeout_set) = true;
		return 0;
	default: /* OPT_JSON, OPT_CSV */
		/* "--json" alone (stdout), "--json=FILE" or "--json FILE" */
		if (arg == NULL && optind < ps->argc &&
		    (ps->argv[optind][0] != '-' || strcmp(ps->argv[optind], "-") == 0))
			arg = ps->argv[optind++];
		*(c == OPT_JSON ? &p->json : &p->csv) = arg != NULL ? arg : "-";
		return 0;
	}
}

/* One option. @return 0, 1 (--help: usage printed), or -EINVAL. */
static int
opt_apply(int c, char *arg, struct wn_perf_params *p, struct parse_state *ps)
{
	int rc = opt_number(c, arg, p, ps->prog);

	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (c >= OPT_DP && c < OPT_DP + (int)NB_DP_OPTS) {
		if (p->nb_dp_opts == WN_PERF_MAX_DP_OPTS) {
			fprintf(stderr, "%s: more than %u dataplane options\n", ps->prog,
				WN_PERF_MAX_DP_OPTS);
			return -EINVAL;
		}
		p->dp_opt[p->nb_dp_opts][0] = dp_opts[c - OPT_DP].name;
		p->dp_opt[p->nb_dp_opts++][1] = arg;
		return 0;
	}
	switch (c) {
	case OPT_MODE:
		p->mode = arg;
		return 0;
	case OPT_SERVER:
		p->server = true;
		return 0;
	case OPT_CLIENT:
		p->client = arg;
		return 0;
	case OPT_BIND:
		p->bind = arg;
		return 0;
	case OPT_CTL:
		p->ctl = arg;
		return 0;
	case OPT_RTC:
		p->rtc = true;
		return 0;
	case OPT_SIZE:
	case OPT_SWEEP:
	case OPT_DURATION:
	case OPT_TIMEOUT:
	case OPT_JSON:
	case OPT_CSV:
		return opt_value(c, arg, p, ps);
	case 'h':
		return 1; /* the caller prints the usage */
	default:
		fprintf(stderr, "%s: see --help\n", ps->prog);
		return -EINVAL;
	}
}

/* The rules between options. @return 0 or -EINVAL (message on stderr). */
static int
check_params(const struct wn_perf_params *p, const struct parse_state *ps)
{
	const char *why = NULL;

	if (optind < ps->argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", ps->prog, ps->argv[optind]);
		return -EINVAL;
	}
	if (p->mode == NULL)
		why = "--mode is required (see --help)";
	else if (p->server && p->client != NULL)
		why = "--server and --client exclude each other";
	else if (ps->sweep_opt && ps->size_list)
		why = "--sweep and --size exclude each other";
	else if (p->rtc && p->nb_dp_opts == 0)
		why = "--rtc runs the RNIC in this process: give it an address with --ip";
	else if (p->rtc && p->ctl != NULL)
		why = "--rtc has no control socket (--ctl)";
	else if (p->json != NULL && p->csv != NULL && strcmp(p->json, "-") == 0 &&
		 strcmp(p->csv, "-") == 0)
		why = "--json and --csv cannot both write to stdout";
	if (why == NULL)
		return 0;
	fprintf(stderr, "%s: %s\n", ps->prog, why);
	return -EINVAL;
}

int
wn_perf_parse_args(int argc, char **argv, struct wn_perf_params *p)
{
	static const struct option opts[] = {
		{"mode", required_argument, NULL, OPT_MODE},
		{"server", no_argument, NULL, OPT_SERVER},
		{"client", required_argument, NULL, OPT_CLIENT},
		{"bind", required_argument, NULL, OPT_BIND},
		{"port", required_argument, NULL, OPT_PORT},
		{"ctl", required_argument, NULL, OPT_CTL},
		{"size", required_argument, NULL, OPT_SIZE},
		{"sweep", optional_argument, NULL, OPT_SWEEP},
		{"qps", required_argument, NULL, OPT_QPS},
		{"buffers", required_argument, NULL, OPT_BUFS},
		{"depth", required_argument, NULL, OPT_DEPTH},
		{"iters", required_argument, NULL, OPT_ITERS},
		{"duration", required_argument, NULL, OPT_DURATION},
		{"timeout", required_argument, NULL, OPT_TIMEOUT},
		{"reps", required_argument, NULL, OPT_REPS},
		{"json", optional_argument, NULL, OPT_JSON},
		{"csv", optional_argument, NULL, OPT_CSV},
		{"rtc", no_argument, NULL, OPT_RTC},
		{"help", no_argument, NULL, 'h'},
	};
	struct option all[sizeof(opts) / sizeof(opts[0]) + NB_DP_OPTS + 1];
	struct parse_state ps = {
		.prog = argc > 0 ? argv[0] : "warpnic-perf", .argc = argc, .argv = argv,
	};
	int c, rc;

	memset(p, 0, sizeof(*p));
	p->qps = 1;
	p->bufs = WN_PERF_DEFAULT_BUFS;
	p->depth = 64;
	p->port = WN_PERF_DEFAULT_PORT;
	p->timeout = WN_PERF_DEFAULT_TIMEOUT;
	p->reps = 1;
	/* ours, then warpnicd's, then the terminating zero entry */
	memset(all, 0, sizeof(all));
	memcpy(all, opts, sizeof(opts));
	for (size_t i = 0; i < NB_DP_OPTS; i++) {
		all[sizeof(opts) / sizeof(opts[0]) + i] = dp_opts[i];
		all[sizeof(opts) / sizeof(opts[0]) + i].val = OPT_DP + (int)i;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", all, NULL)) != -1) {
		rc = opt_apply(c, optarg, p, &ps);
		if (rc != 0)
			return rc;
	}
	return check_params(p, &ps);
}
