/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnicd's options and config file (wn_node.h): one table of long options, applied by
 * name from the command line or from "name value" lines of a file.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "wn_node.h"
#include "wn_mpa.h"

void
wn_node_usage(const char *prog)
{
	printf("Usage: %s [EAL options] -- [options]\n"
	       "The port is the first ethdev (or --port N), e.g. EAL --vdev net_memif0,... or\n"
	       "--vdev net_af_packet0,iface=veth0 or --vdev net_tap0. A fault injector wraps it\n"
	       "with EAL --vdev 'net_wn_impair0,drop=0.01,reorder=0.01,...'.\n"
	       "Options (also accepted one per line, without the dashes, in --config FILE):\n"
	       "  --ip ADDR/PREFIX   port address (repeatable; IPv4 or IPv6: with one, the port\n"
	       "                     also forms a link-local address, and each IPv6 address is\n"
	       "                     usable once Duplicate Address Detection passed, ~1 s)\n"
	       "  --gw ADDR          default gateway\n"
	       "  --port N           ethdev port id (default: the first)\n"
	       "  --ctl PATH         control socket (default %s)\n"
	       "  --name DEV         verbs device name (default wn0)\n"
	       "  --mtu N            L3 MTU (default 1500)\n"
	       "  --pcap FILE        write every packet of the port to FILE (pcapng)\n"
	       "  --impair SPEC      wrap the port with the fault injector, e.g.\n"
	       "                     drop=0.01,reorder=0.01,dup=0.001,corrupt=0,seed=1\n"
	       "  --idle sleep|poll  what an idle dataplane lcore does (default sleep):\n"
	       "                     sleep: for shared cores (daemon and clients on the same\n"
	       "                     CPUs, e.g. a 2-core machine): after --idle-spin-us without\n"
	       "                     work it sleeps until a client posts to one of its send\n"
	       "                     queues (a doorbell rung only while it sleeps), its port queue\n"
	       "                     receives (Rx interrupt: memif, tap, most NICs) or a timer\n"
	       "                     is due; a port without Rx interrupts (af_packet, --impair)\n"
	       "                     makes it nap at most --idle-us. Run clients anywhere;\n"
	       "                     their ibv_poll_cq yields the CPU when it finds nothing.\n"
	       "                     poll: for dedicated cores (EAL -l on CPUs no client and no\n"
	       "                     other daemon uses): poll without pause, lowest latency.\n"
	       "  --idle-spin-us N   keep polling N us without work before sleeping (default 20)\n"
	       "  --idle-us N        longest nap without an Rx interrupt (default 20; 0 = --idle\n"
	       "                     poll)\n"
	       "  --max-conns N      TCP connections (default 1024)\n"
	       "  --sockbuf BYTES    TCP send/receive buffer per connection (default 1 MiB)\n"
	       "  --mbufs N          mbuf pool size (default 16383)\n"
	       "  --max-mrs N        memory regions and windows at most, all clients together\n"
	       "                     (default 65535)\n"
	       "  --no-offload       software checksums even when the port offloads them\n"
	       "  --zero-copy-tx on|off  send registered memory in place (mbuf chains, CQEs after\n"
	       "                     the ACK; memif/af_packet/tap, and a PCI NIC under IOVA as\n"
	       "                     VA from regions DMA-mapped for it; else copied; default off)\n"
	       "  --zero-copy-min BYTES  ... for messages of at least BYTES (default 16384;\n"
	       "                     smaller ones are copied)\n"
	       "  --mpa-rev 1|2      MPA revision (default 2: RFC 6581 enhanced; a connect\n"
	       "                     whose Rev 2 Request a Rev 1 responder closes is retried\n"
	       "                     with Rev 1)\n"
	       "  --markers          ask the peer to send MPA Markers (default off)\n"
	       "  --no-crc           do not ask for MPA CRC (used if the peer asks)\n"
	       "  --no-p2p           initiator does not ask for RFC 6581 peer-to-peer mode\n"
	       "  --rtr LIST         RTR types offered/accepted: any of send,write,read\n"
	       "                     (default send,write,read)\n"
	       "  --mpa-timeout MS   MPA startup (and SCTP session setup) timeout (default 20000,\n"
	       "                     as siw)\n"
	       "  --rnr-hold-ms MS   receiver not ready: a Send arriving while no receive is\n"
	       "                     posted waits up to MS for one, its stream held (the sender's\n"
	       "                     TCP window closes), as an InfiniBand RNR retry would; then\n"
	       "                     DDP's Terminate 'no buffer' (default 10000; 0 = at once, as\n"
	       "                     RFC 5041 and siw; DDP over SCTP always at once); at most\n"
	       "                     1000 once the peer has closed behind the held Send, or\n"
	       "                     the application stopped polling the QP's receive CQ\n"
	       "  --llp mpa|sctp     lower layer below DDP of connections whose client does not\n"
	       "                     choose (WARPNIC_LLP=mpa|sctp in its environment): MPA over\n"
	       "                     TCP (default) or DDP over SCTP (RFC 5043)\n"
	       "  --config FILE      read options from FILE (see config/warpnicd.conf)\n"
	       "  --help             this text\n"
	       "Telemetry (dpdk-telemetry.py): /warpnic/ctl, /warpnic/dp/stats, /warpnic/dp/tcp,\n"
	       "/warpnic/dp/port, /warpnic/dp/net, /warpnic/dp/conns, /warpnic/dp/qp[,QPN].\n",
	       prog, WN_CTL_DEFAULT_PATH);
}

static int
parse_ip(struct wn_node_conf *p, const char *arg)
{
	struct wn_server_conf *c = &p->ctl;
	struct wn_ip_addr ip;
	struct wn_ctl_addr *a;
	uint8_t prefix;

	if (c->n_addrs == WN_SERVER_MAX_ADDRS || p->dp.n_addrs == WN_NETIF_MAX_ADDRS)
		return -ENOSPC;
	if (wn_ip_addr_parse(arg, &ip, &prefix) != 0)
		return -EINVAL;
	a = &c->addrs[c->n_addrs++];
	memset(a, 0, sizeof(*a));
	if (ip.family == WN_AF_INET) {
		a->family = WN_CTL_AF_INET;
		memcpy(a->addr, &ip.v4, 4);
	} else {
		a->family = WN_CTL_AF_INET6;
		memcpy(a->addr, ip.v6, 16);
	}
	p->dp.addrs[p->dp.n_addrs] = ip;
	p->dp.prefix[p->dp.n_addrs++] = prefix;
	return 0;
}

static int
parse_rtr(const char *arg, uint8_t *rtr)
{
	char buf[64], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	*rtr = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "send") == 0)
			*rtr |= WN_MPA_RTR_SEND;
		else if (strcmp(tok, "write") == 0)
			*rtr |= WN_MPA_RTR_WRITE;
		else if (strcmp(tok, "read") == 0)
			*rtr |= WN_MPA_RTR_READ;
		else if (strcmp(tok, "none") != 0)
			return -EINVAL;
	}
	return 0;
}

static int
num(const char *arg, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 0);
	if (errno != 0 || end == arg || *end != '\0' || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

enum {
	O_IP = 256, O_GW, O_PORT, O_CTL, O_NAME, O_MTU, O_PCAP, O_IDLE, O_MAXC, O_SOCKBUF,
	O_MBUFS, O_NOOFF, O_REV, O_MARKERS, O_NOCRC, O_NOP2P, O_RTR, O_MPATO, O_CONFIG, O_IMPAIR,
	O_ZC, O_ZCMIN, O_MAXMR, O_LLP, O_IDLEMODE, O_IDLESPIN, O_RNR, O_HELP,
};

static const struct option opts[] = {
	{"ip", required_argument, NULL, O_IP},
	{"gw", required_argument, NULL, O_GW},
	{"port", required_argument, NULL, O_PORT},
	{"ctl", required_argument, NULL, O_CTL},
	{"name", required_argument, NULL, O_NAME},
	{"mtu", required_argument, NULL, O_MTU},
	{"pcap", required_argument, NULL, O_PCAP},
	{"idle-us", required_argument, NULL, O_IDLE},
	{"max-conns", required_argument, NULL, O_MAXC},
	{"sockbuf", required_argument, NULL, O_SOCKBUF},
	{"mbufs", required_argument, NULL, O_MBUFS},
	{"max-mrs", required_argument, NULL, O_MAXMR},
	{"no-offload", no_argument, NULL, O_NOOFF},
	{"mpa-rev", required_argument, NULL, O_REV},
	{"markers", no_argument, NULL, O_MARKERS},
	{"no-crc", no_argument, NULL, O_NOCRC},
	{"no-p2p", no_argument, NULL, O_NOP2P},
	{"rtr", required_argument, NULL, O_RTR},
	{"mpa-timeout", required_argument, NULL, O_MPATO},
	{"config", required_argument, NULL, O_CONFIG},
	{"impair", required_argument, NULL, O_IMPAIR},
	{"zero-copy-tx", required_argument, NULL, O_ZC},
	{"zero-copy-min", required_argument, NULL, O_ZCMIN},
	{"llp", required_argument, NULL, O_LLP},
	{"idle", required_argument, NULL, O_IDLEMODE},
	{"idle-spin-us", required_argument, NULL, O_IDLESPIN},
	{"rnr-hold-ms", required_argument, NULL, O_RNR},
	{"help", no_argument, NULL, O_HELP},
	{NULL, 0, NULL, 0},
};

/* A field of struct wn_node_conf: its offset and size. */
#define FIELD(f) offsetof(struct wn_node_conf, f), sizeof(((struct wn_node_conf *)0)->f)

/* Numeric options: a value in [min, max] goes to one field as value * mul + add. */
static const struct num_opt {
	int o;
	unsigned long min, max;
	size_t off, size;
	uint32_t mul, add;
} num_opts[] = {
	{O_PORT, 0, RTE_MAX_ETHPORTS - 1, FIELD(port), 1, 0},
	{O_MTU, 576, 9000, FIELD(dp.mtu), 1, 0}, /* and ctl.mtu: apply() */
	{O_IDLE, 0, 100000, FIELD(dp.idle_us), 1, 0},
	{O_MAXC, 1, 1u << 20, FIELD(dp.max_conns), 1, 0},
	{O_SOCKBUF, 16384, 64u << 20, FIELD(dp.sockbuf), 1, 0},
	{O_MBUFS, 1023, 1u << 22, FIELD(mbufs), 1, 0},
	/* lib/mem's table: index 0 is reserved */
	{O_MAXMR, 16, WN_MEM_MAX_ENTRIES - 1, FIELD(ctl.mem_entries), 1, 1},
	{O_REV, 1, 2, FIELD(dp.mpa_rev), 1, 0},
	{O_MPATO, 1, 3600000, FIELD(dp.mpa_timeout_us), 1000, 0}, /* ms */
	{O_ZCMIN, 0, UINT32_MAX, FIELD(dp.zero_copy_min), 1, 0},
	{O_IDLESPIN, 0, 1000000, FIELD(dp.idle_spin_us), 1, 0},
	{O_RNR, 0, 3600000, FIELD(dp.rnr_hold_us), 1000, 0}, /* ms */
};

/* Options without a value: one bool field. */
static const struct flag_opt {
	int o;
	size_t off;
	bool set;
} flag_opts[] = {
	{O_NOOFF, offsetof(struct wn_node_conf, offload), false},
	{O_MARKERS, offsetof(struct wn_node_conf, dp.markers), true},
	{O_NOCRC, offsetof(struct wn_node_conf, dp.crc), false},
	{O_NOP2P, offsetof(struct wn_node_conf, dp.p2p), false},
};

/* Store @p v in the field at @p off of @p size octets (an unsigned integer, or an int). */
static void
store(struct wn_node_conf *p, size_t off, size_t size, uint32_t v)
{
	uint8_t *f = (uint8_t *)p + off;

	if (size == sizeof(uint8_t))
		*f = (uint8_t)v;
	else if (size == sizeof(uint16_t))
		*(uint16_t *)f = (uint16_t)v;
	else
		*(uint32_t *)f = v;
}

/* Replace an owned copy of a string option (the last one given counts). */
static int
dup_arg(const char **field, const char *arg)
{
	free((void *)(uintptr_t)*field);
	*field = strdup(arg);
	return *field != NULL ? 0 : -ENOMEM;
}

static int parse_config(struct wn_node_conf *p, const char *path, int depth);

/* The options that are neither a number nor a flag. */
static int
apply_special(struct wn_node_conf *p, int o, const char *arg, int depth)
{
	int l;

	switch (o) {
	case O_IP:
		return parse_ip(p, arg);
	case O_GW:
		p->dp.has_gw = true;
		return wn_ip_addr_parse(arg, &p->dp.gw, NULL);
	case O_CTL:
		snprintf(p->ctl_path, sizeof(p->ctl_path), "%s", arg);
		return 0;
	case O_NAME:
		snprintf(p->dev_name, sizeof(p->dev_name), "%s", arg);
		return 0;
	case O_PCAP:
		return dup_arg(&p->pcap, arg);
	case O_IMPAIR:
		return dup_arg(&p->impair, arg);
	case O_RTR:
		return parse_rtr(arg, &p->dp.rtr);
	case O_CONFIG:
		return parse_config(p, arg, depth + 1);
	case O_ZC:
		if (strcmp(arg, "on") != 0 && strcmp(arg, "off") != 0)
			return -EINVAL;
		p->dp.zero_copy_tx = strcmp(arg, "on") == 0;
		return 0;
	case O_LLP:
		l = wn_ctl_llp_parse(arg);
		if (l <= WN_CTL_LLP_DEFAULT)
			return -EINVAL;
		p->dp.llp = (uint8_t)l;
		p->ctl.llp = (uint32_t)l;
		return 0;
	case O_IDLEMODE:
		if (strcmp(arg, "sleep") == 0)
			p->dp.idle = WN_DP_IDLE_SLEEP;
		else if (strcmp(arg, "poll") == 0)
			p->dp.idle = WN_DP_IDLE_POLL;
		else
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

static int
apply(struct wn_node_conf *p, int o, const char *arg, int depth)
{
	unsigned long v;

	for (size_t i = 0; i < RTE_DIM(num_opts); i++) {
		const struct num_opt *n = &num_opts[i];

		if (n->o != o)
			continue;
		if (num(arg, n->min, n->max, &v) != 0)
			return -EINVAL;
		store(p, n->off, n->size, (uint32_t)v * n->mul + n->add);
		if (o == O_MTU)
			p->ctl.mtu = p->dp.mtu;
		return 0;
	}
	for (size_t i = 0; i < RTE_DIM(flag_opts); i++)
		if (flag_opts[i].o == o) {
			*(bool *)((uint8_t *)p + flag_opts[i].off) = flag_opts[i].set;
			return 0;
		}
	return apply_special(p, o, arg, depth);
}

/* A config file: "name value" or "name" per line, '#' comments; names as the long options. */
static int
parse_config(struct wn_node_conf *p, const char *path, int depth)
{
	char line[512];
	unsigned int lineno = 0;
	FILE *f;
	int ret = 0;

	if (depth > 4)
		return -ELOOP;
	f = fopen(path, "r");
	if (f == NULL) {
		fprintf(stderr, "warpnicd: config %s: %s\n", path, strerror(errno));
		return -errno;
	}
	while (ret == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *name, *val, *save = NULL;
		const struct option *o;

		lineno++;
		line[strcspn(line, "#\r\n")] = '\0';
		name = strtok_r(line, " \t=", &save);
		if (name == NULL)
			continue;
		val = strtok_r(NULL, " \t=", &save);
		for (o = opts; o->name != NULL; o++)
			if (strcmp(o->name, name) == 0)
				break;
		if (o->name == NULL || o->val == O_HELP ||
		    (o->has_arg == required_argument) != (val != NULL)) {
			fprintf(stderr, "warpnicd: %s:%u: bad line\n", path, lineno);
			ret = -EINVAL;
			break;
		}
		ret = apply(p, o->val, val, depth);
		if (ret != 0)
			fprintf(stderr, "warpnicd: %s:%u: bad value for %s\n", path, lineno, name);
	}
	fclose(f);
	return ret;
}

void
wn_node_defaults(struct wn_node_conf *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->ctl_path, sizeof(p->ctl_path), "%s", WN_CTL_DEFAULT_PATH);
	snprintf(p->dev_name, sizeof(p->dev_name), "wn0");
	p->port = -1;
	p->mbufs = 16383;
	p->offload = true;
	p->ctl.mtu = 1500;
	p->dp.mtu = 1500;
	p->dp.idle = WN_DP_IDLE_SLEEP;
	p->dp.idle_us = 20;
	p->dp.idle_spin_us = 20;
	p->dp.max_conns = 1024;
	p->dp.sockbuf = 1u << 20;
	p->dp.mpa_rev = 2;
	p->dp.crc = true;
	p->dp.p2p = true;
	p->dp.rtr = WN_MPA_RTR_ALL;
	p->dp.rfc7306 = true;
	/* a busy server may take its time to accept; Linux's siw waits 20 s */
	p->dp.mpa_timeout_us = 20u * 1000 * 1000;
	p->dp.zero_copy_tx = false;
	p->dp.zero_copy_min = 16384;
	p->dp.rnr_hold_us = 10u * 1000 * 1000;
	p->dp.llp = WN_CTL_LLP_MPA;
	p->ctl.llp = WN_CTL_LLP_MPA;
	p->main_shard = true;
}

void
wn_node_conf_free(struct wn_node_conf *p)
{
	free((void *)(uintptr_t)p->pcap);
	free((void *)(uintptr_t)p->impair);
	p->pcap = NULL;
	p->impair = NULL;
}

int
wn_node_option(struct wn_node_conf *p, const char *name, const char *arg)
{
	const struct option *o;

	for (o = opts; o->name != NULL; o++)
		if (strcmp(o->name, name) == 0)
			break;
	if (o->name == NULL || o->val == O_HELP)
		return -ENOENT;
	if ((o->has_arg == required_argument) != (arg != NULL))
		return -EINVAL;
	return apply(p, o->val, arg, 0);
}

/* The long name of option @p o (opts[] is not in the order of the O_ values). */
static const char *
opt_name(int o)
{
	const struct option *x;

	for (x = opts; x->name != NULL; x++)
		if (x->val == o)
			break;
	return x->name != NULL ? x->name : "?";
}

int
wn_node_parse_args(struct wn_node_conf *p, int argc, char **argv)
{
	int o, ret;

	optind = 1;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == O_HELP) {
			wn_node_usage(argv[0]);
			exit(0);
		}
		if (o == '?') {
			wn_node_usage(argv[0]);
			return -EINVAL;
		}
		ret = apply(p, o, optarg, 0);
		if (ret != 0) {
			fprintf(stderr, "warpnicd: bad value for --%s: '%s'\n", opt_name(o),
				optarg != NULL ? optarg : "");
			return ret;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "warpnicd: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (p->dp.n_addrs == 0) {
		fprintf(stderr, "warpnicd: give the port an address with --ip ADDR/PREFIX\n");
		return -EINVAL;
	}
	return 0;
}

