/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Application options of wn-tcpapp (after the EAL options and "--").
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcpapp.h"

static const struct tcpapp_mode *const modes[] = {
	&tcpapp_mode_echo, &tcpapp_mode_sink, &tcpapp_mode_source,
	&tcpapp_mode_rawtx, &tcpapp_mode_rawrx,
};

void
tcpapp_usage(const char *prog)
{
	unsigned int i;

	printf("Usage: %s [EAL options] -- [options]\n"
	       "\n"
	       "Runs the warpnic TCP/IP stack (lib/net + lib/tcp) on one port and one lcore.\n"
	       "\n"
	       "Modes (--mode; default: source with --connect, echo with --listen):\n",
	       prog);
	for (i = 0; i < RTE_DIM(modes); i++)
		printf("  %-8s %s\n", modes[i]->name, modes[i]->help);
	printf("\n"
	       "Options:\n"
	       "  --ip ADDR/PREFIX    local address (IPv4 or IPv6; repeatable, required for TCP)\n"
	       "  --gw ADDR           default gateway\n"
	       "  --listen PORT       server modes: TCP port to listen on\n"
	       "  --connect ADDR:PORT source: server to connect to ([v6addr]:port for IPv6)\n"
	       "  --bytes N           source: bytes per connection (K/M/G suffixes, binary);\n"
	       "                      rawtx/rawrx: total bytes (default 1M)\n"
	       "  --conns N           source: concurrent connections (default 1);\n"
	       "                      echo/sink: exit after N connections (default: run on)\n"
	       "  --seed S            data stream seed (default 1); every connection sends the\n"
	       "                      same seeded stream, reported with its sha256\n"
	       "  --verify            sink: check every received octet against the stream\n"
	       "  --pcap FILE         capture the port's traffic to a pcapng file\n"
	       "  --impair ARGS       wrap the port with net_wn_impair, e.g.\n"
	       "                      drop=0.01,reorder=0.01,dup=0.001,seed=42 (see wn_impair.h);\n"
	       "                      --vdev net_wn_impair0,port=NAME,... among the EAL\n"
	       "                      options works too\n"
	       "  --port N            port id to use (default: the first free port)\n"
	       "  --mtu N             L3 MTU (default 1500)\n"
	       "  --buf N             TCP send and receive buffer per connection\n"
	       "  --mbufs N           mbufs in the pool (default 16383)\n"
	       "  --max-conns N       TCP connection table size (default: max(1024, 2*conns))\n"
	       "  --rto-min US        RFC 6298 lower bound of the RTO in microseconds\n"
	       "  --timeout SECS      give up after SECS seconds (exit status 1 if unfinished)\n"
	       "  --offload           use the port's checksum offloads\n"
	       "  --cksum MODE        TCP checksums without offload: auto (local on memif,\n"
	       "                      software elsewhere; default), software (compute and\n"
	       "                      verify all), local (a link that cannot corrupt: send the\n"
	       "                      pseudo-header sum only, accept it; both ends must agree)\n"
	       "  --pkt-size N        raw modes: frame size (default 1514)\n"
	       "  --peer-mac MAC      rawtx: destination MAC (default broadcast)\n"
	       "  --quiet             no per-connection lines when --conns > 1\n"
	       "  --park              after the run, stop polling the port, print \"parked\"\n"
	       "                      and close it only on SIGTERM/SIGINT (or after --timeout\n"
	       "                      more seconds). Over memif, park both ends, then stop\n"
	       "                      them: DPDK 22.11's memif unmaps the rings in its\n"
	       "                      interrupt thread when the peer leaves, under a side that\n"
	       "                      still polls (SIGSEGV)\n"
	       "  --help              this text\n"
	       "\n"
	       "Results: one line per connection (\"conn I local A remote B bytes N sha256 H\")\n"
	       "and a summary (\"MODE: conns .. bytes .. errors .. seconds .. gbps ..\").\n"
	       "Exit status: 0 success, 1 failure (reset, timeout, data mismatch),\n"
	       "2 bad options.\n");
}

enum {
	OPT_MODE = 256, OPT_IP, OPT_GW, OPT_LISTEN, OPT_CONNECT, OPT_BYTES, OPT_CONNS, OPT_SEED,
	OPT_VERIFY, OPT_PCAP, OPT_IMPAIR, OPT_PORT, OPT_MTU, OPT_BUF, OPT_MBUFS, OPT_MAXCONNS,
	OPT_TIMEOUT, OPT_RTOMIN, OPT_OFFLOAD, OPT_QUIET, OPT_PKTSIZE, OPT_PEERMAC, OPT_CKSUM,
	OPT_PARK, OPT_HELP,
};

static const struct option long_opts[] = {
	{"mode", required_argument, NULL, OPT_MODE},
	{"ip", required_argument, NULL, OPT_IP},
	{"gw", required_argument, NULL, OPT_GW},
	{"listen", required_argument, NULL, OPT_LISTEN},
	{"connect", required_argument, NULL, OPT_CONNECT},
	{"bytes", required_argument, NULL, OPT_BYTES},
	{"conns", required_argument, NULL, OPT_CONNS},
	{"seed", required_argument, NULL, OPT_SEED},
	{"verify", no_argument, NULL, OPT_VERIFY},
	{"pcap", required_argument, NULL, OPT_PCAP},
	{"impair", required_argument, NULL, OPT_IMPAIR},
	{"port", required_argument, NULL, OPT_PORT},
	{"mtu", required_argument, NULL, OPT_MTU},
	{"buf", required_argument, NULL, OPT_BUF},
	{"mbufs", required_argument, NULL, OPT_MBUFS},
	{"max-conns", required_argument, NULL, OPT_MAXCONNS},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"rto-min", required_argument, NULL, OPT_RTOMIN},
	{"offload", no_argument, NULL, OPT_OFFLOAD},
	{"cksum", required_argument, NULL, OPT_CKSUM},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"park", no_argument, NULL, OPT_PARK},
	{"pkt-size", required_argument, NULL, OPT_PKTSIZE},
	{"peer-mac", required_argument, NULL, OPT_PEERMAC},
	{"help", no_argument, NULL, OPT_HELP},
	{NULL, 0, NULL, 0},
};

static int
bad(const char *opt, const char *val)
{
	fprintf(stderr, "wn-tcpapp: invalid value '%s' for --%s (see --help)\n", val, opt);
	return -EINVAL;
}

static int
num(const char *opt, const char *val, uint64_t max, uint64_t *out)
{
	if (tcpapp_parse_size(val, out) < 0 || *out > max)
		return bad(opt, val);
	return 0;
}

/* @return 0, 1 when --help was given, or -EINVAL */
int
tcpapp_params_parse(struct tcpapp_params *p, int argc, char **argv)
{
	uint64_t v;
	unsigned int i;
	char *end;
	int opt;

	memset(p, 0, sizeof(*p));
	p->seed = 1;
	p->port = -1;
	p->mbufs = 16383;
	p->pkt_size = 1514;
	memset(&p->peer_mac, 0xff, sizeof(p->peer_mac));
	optind = 1;
	opterr = 1;
	while ((opt = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_MODE:
			p->mode = NULL;
			for (i = 0; i < RTE_DIM(modes); i++)
				if (strcmp(optarg, modes[i]->name) == 0)
					p->mode = modes[i];
			if (p->mode == NULL)
				return bad("mode", optarg);
			break;
		case OPT_IP:
			if (p->nb_addr == TCPAPP_MAX_ADDRS ||
			    wn_net_addr_parse(optarg, &p->addr[p->nb_addr],
					     &p->prefix[p->nb_addr]) < 0)
				return bad("ip", optarg);
			p->nb_addr++;
			break;
		case OPT_GW:
			if (wn_net_addr_parse(optarg, &p->gw, NULL) < 0)
				return bad("gw", optarg);
			p->has_gw = true;
			break;
		case OPT_LISTEN:
			if (num("listen", optarg, 65535, &v) < 0 || v == 0)
				return -EINVAL;
			p->listen_port = (uint16_t)v;
			break;
		case OPT_CONNECT:
			if (tcpapp_parse_endpoint(optarg, &p->remote) < 0)
				return bad("connect", optarg);
			p->has_remote = true;
			break;
		case OPT_BYTES:
			if (num("bytes", optarg, UINT64_MAX, &p->bytes) < 0)
				return -EINVAL;
			break;
		case OPT_CONNS:
			if (num("conns", optarg, 1000000, &v) < 0)
				return -EINVAL;
			p->conns = (uint32_t)v;
			break;
		case OPT_SEED:
			if (num("seed", optarg, UINT64_MAX, &p->seed) < 0)
				return -EINVAL;
			break;
		case OPT_VERIFY:
			p->verify = true;
			break;
		case OPT_PCAP:
			p->pcap = optarg;
			break;
		case OPT_IMPAIR:
			p->impair = optarg;
			break;
		case OPT_PORT:
			if (num("port", optarg, RTE_MAX_ETHPORTS - 1, &v) < 0)
				return -EINVAL;
			p->port = (int)v;
			break;
		case OPT_MTU:
			if (num("mtu", optarg, 9000, &v) < 0 || v < 576)
				return bad("mtu", optarg);
			p->mtu = (uint16_t)v;
			break;
		case OPT_BUF:
			if (num("buf", optarg, 64u << 20, &v) < 0)
				return -EINVAL;
			p->bufsize = (uint32_t)v;
			break;
		case OPT_MBUFS:
			if (num("mbufs", optarg, 1u << 24, &v) < 0 || v < 1024)
				return bad("mbufs", optarg);
			p->mbufs = (uint32_t)v;
			break;
		case OPT_MAXCONNS:
			if (num("max-conns", optarg, 1u << 20, &v) < 0 || v == 0)
				return bad("max-conns", optarg);
			p->max_conns = (uint32_t)v;
			break;
		case OPT_TIMEOUT:
			p->timeout = strtod(optarg, &end);
			if (*end != '\0' || !(p->timeout >= 0))
				return bad("timeout", optarg);
			break;
		case OPT_RTOMIN:
			if (num("rto-min", optarg, 60u * 1000 * 1000, &v) < 0 || v == 0)
				return bad("rto-min", optarg);
			p->rto_min_us = (uint32_t)v;
			break;
		case OPT_OFFLOAD:
			p->offload = true;
			break;
		case OPT_CKSUM:
			if (strcmp(optarg, "auto") == 0)
				p->cksum = WN_NET_CKSUM_AUTO;
			else if (strcmp(optarg, "software") == 0)
				p->cksum = WN_NET_CKSUM_SOFTWARE;
			else if (strcmp(optarg, "local") == 0)
				p->cksum = WN_NET_CKSUM_LOCAL;
			else
				return bad("cksum", optarg);
			break;
		case OPT_QUIET:
			p->quiet = true;
			break;
		case OPT_PARK:
			p->park = true;
			break;
		case OPT_PKTSIZE:
			if (num("pkt-size", optarg, 9014, &v) < 0 || v < 60)
				return bad("pkt-size", optarg);
			p->pkt_size = (uint32_t)v;
			break;
		case OPT_PEERMAC:
			if (tcpapp_parse_mac(optarg, &p->peer_mac) < 0)
				return bad("peer-mac", optarg);
			break;
		case OPT_HELP:
		case 'h':
			return 1;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "wn-tcpapp: unexpected argument '%s' (see --help)\n", argv[optind]);
		return -EINVAL;
	}
	if (p->mode == NULL)
		p->mode = p->has_remote ? &tcpapp_mode_source : &tcpapp_mode_echo;
	if (p->mode->uses_tcp && p->nb_addr == 0) {
		fprintf(stderr, "wn-tcpapp: --ip is required in mode %s\n", p->mode->name);
		return -EINVAL;
	}
	if (p->mode == &tcpapp_mode_source && !p->has_remote) {
		fprintf(stderr, "wn-tcpapp: mode source needs --connect ADDR:PORT\n");
		return -EINVAL;
	}
	if ((p->mode == &tcpapp_mode_echo || p->mode == &tcpapp_mode_sink) && p->listen_port == 0) {
		fprintf(stderr, "wn-tcpapp: mode %s needs --listen PORT\n", p->mode->name);
		return -EINVAL;
	}
	if (p->mode == &tcpapp_mode_source && p->conns == 0)
		p->conns = 1;
	if (p->bytes == 0 && p->mode != &tcpapp_mode_echo && p->mode != &tcpapp_mode_sink)
		p->bytes = 1u << 20;
	if (p->max_conns == 0)
		p->max_conns = p->conns * 2 > 1024 ? p->conns * 2 : 1024;
	return 0;
}
