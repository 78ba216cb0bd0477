/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-rpc-blob: command line and mode selection.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blob_app.h"

volatile sig_atomic_t blob_quit;

static void
on_signal(int sig)
{
	(void)sig;
	blob_quit = 1;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: wn-rpc-blob --server ADDR [options]\n"
		"  or:  wn-rpc-blob --client ADDR --test [options]\n"
		"  or:  wn-rpc-blob --client ADDR --bench [options]\n"
		"A blob store served over RPC-over-RDMA v1 (RFC 5666/8166) through libibverbs and\n"
		"librdmacm; on warpnic run it with warpnic-run.\n"
		"Server:\n"
		"  --server ADDR       listen on this RDMA address (0.0.0.0: any)\n"
		"  --store-mb N        registered store size (64)\n"
		"  --blob-mb N         space a new blob takes in the store (32)\n"
		"  --max-calls N       exit after N calls (0: at SIGINT/SIGTERM)\n"
		"Client:\n"
		"  --client ADDR       the server\n"
		"  --test              NULL calls, WRITE then READ back and compare SIZE octets in\n"
		"                      IO pieces, LIST, ECHO in every message form, REMOVE\n"
		"  --bench             1 MiB READ and WRITE throughput, NULL latency and rate\n"
		"  --name NAME         blob name (test)\n"
		"  --size N            octets to write and read back (4m)\n"
		"  --io N              octets per call (1m)\n"
		"  --depth N           calls outstanding (8)\n"
		"  --seed N            data pattern seed (1)\n"
		"  --nulls N           NULL calls (100)\n"
		"  --no-reg            do not register the data buffers (chunks are copied)\n"
		"  --seconds S         benchmark: seconds per figure (2)\n"
		"  --json              benchmark: one JSON object\n"
		"  -v, --verbose       one line per step\n"
		"Transport:\n%s",
		wn_rpcrdma_opts_help);
}

enum {
	O_SERVER = 256,
	O_CLIENT,
	O_TEST,
	O_BENCH,
	O_STORE,
	O_BLOB,
	O_MAXCALLS,
	O_NAME,
	O_SIZE,
	O_IO,
	O_DEPTH,
	O_SEED,
	O_NULLS,
	O_NOREG,
	O_SECONDS,
	O_JSON,
	O_XPRT, /* every transport option */
};

static const struct option app_opts[] = {
	{"server", required_argument, NULL, O_SERVER},
	{"client", required_argument, NULL, O_CLIENT},
	{"test", no_argument, NULL, O_TEST},
	{"bench", no_argument, NULL, O_BENCH},
	{"store-mb", required_argument, NULL, O_STORE},
	{"blob-mb", required_argument, NULL, O_BLOB},
	{"max-calls", required_argument, NULL, O_MAXCALLS},
	{"name", required_argument, NULL, O_NAME},
	{"size", required_argument, NULL, O_SIZE},
	{"io", required_argument, NULL, O_IO},
	{"depth", required_argument, NULL, O_DEPTH},
	{"seed", required_argument, NULL, O_SEED},
	{"nulls", required_argument, NULL, O_NULLS},
	{"no-reg", no_argument, NULL, O_NOREG},
	{"seconds", required_argument, NULL, O_SECONDS},
	{"json", no_argument, NULL, O_JSON},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};
static struct option long_opts[64]; /* app_opts, then the transport's */

static int
parse(int argc, char **argv, struct blob_params *p)
{
	uint64_t v;
	int opt, idx = 0;

	memset(p, 0, sizeof(*p));
	wn_rpcrdma_opts_default(&p->o);
	p->store_mb = 64;
	p->blob_mb = 32;
	p->name = "blob0";
	p->size = 4u << 20;
	p->io = 1u << 20;
	p->depth = 8;
	p->seed = 1;
	p->nulls = 100;
	p->seconds = 2;
	wn_rpcrdma_opts_long(long_opts, sizeof(long_opts) / sizeof(long_opts[0]), app_opts,
			     O_XPRT);
	while ((opt = getopt_long(argc, argv, "hv", long_opts, &idx)) != -1) {
		switch (opt) {
		case O_SERVER:
		case O_CLIENT:
			if (p->addr != NULL) {
				fprintf(stderr, "wn-rpc-blob: one of --server, --client\n");
				return -EINVAL;
			}
			p->addr = optarg;
			p->server = opt == O_SERVER;
			break;
		case O_TEST:
			p->test = true;
			break;
		case O_BENCH:
			p->bench = true;
			break;
		case O_NAME:
			p->name = optarg;
			break;
		case O_NOREG:
			p->no_reg = true;
			break;
		case O_JSON:
			p->json = true;
			break;
		case 'v':
			p->verbose = true;
			break;
		case O_SECONDS:
			p->seconds = strtod(optarg, NULL);
			if (!(p->seconds > 0 && p->seconds <= 3600))
				goto bad;
			break;
		case O_XPRT:
			if (wn_rpcrdma_opts_set(&p->o, long_opts[idx].name,
						long_opts[idx].has_arg ? optarg : NULL) != 0)
				goto bad;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case '?':
			return -EINVAL;
		default:
			if (wn_rpcrdma_parse_size(optarg, &v) != 0)
				goto bad;
			switch (opt) {
			case O_STORE:
				if (v < 1 || v > 65536)
					goto bad;
				p->store_mb = (uint32_t)v;
				break;
			case O_BLOB:
				if (v < 1 || v > 65536)
					goto bad;
				p->blob_mb = (uint32_t)v;
				break;
			case O_MAXCALLS:
				p->max_calls = v;
				break;
			case O_SIZE:
				p->size = v;
				break;
			case O_IO:
				if (v < 1 || v > BLOB_DATA_MAX)
					goto bad;
				p->io = (uint32_t)v;
				break;
			case O_DEPTH:
				if (v < 1 || v > 1024)
					goto bad;
				p->depth = (uint32_t)v;
				break;
			case O_SEED:
				p->seed = (uint32_t)v;
				break;
			case O_NULLS:
				p->nulls = (uint32_t)v;
				break;
			default:
				goto bad;
			}
			break;
		}
	}
	if (optind != argc || p->addr == NULL || (!p->server && p->test == p->bench)) {
		fprintf(stderr, "wn-rpc-blob: --server ADDR, or --client ADDR with --test or "
				"--bench (see --help)\n");
		return -EINVAL;
	}
	return 0;
bad:
	fprintf(stderr, "wn-rpc-blob: bad value for --%s: '%s'\n", long_opts[idx].name,
		optarg != NULL ? optarg : "");
	return -EINVAL;
}

int
main(int argc, char **argv)
{
	struct blob_params p;
	struct sigaction sa = {.sa_handler = on_signal};

	if (parse(argc, argv, &p) != 0)
		return 2;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (p.server)
		return blob_server(&p);
	return p.test ? blob_client_test(&p) : blob_client_bench(&p);
}
