/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnicd as a library (wn_dpapp.h): options and config file, then the port (any ethdev;
 * optionally wrapped by the net_wn_impair fault injector), the control thread serving clients
 * on a unix socket (ctl.c) and the dataplane shards (dp.c) on the EAL lcores. warpnicd's
 * main.c runs shard 0 on the main lcore; an embedding app (warpnic-perf) keeps the main lcore
 * and runs the shards on the workers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "wn_dpapp.h"
#include "wn_mpa.h"
#include "wn_impair.h"
#include "wn_port.h"

#define CTL_RING_SIZE 4096

static volatile int quit;
static struct wn_server *ctl_srv;

struct shard_arg {
	struct wn_dp_group *g;
	uint16_t idx;
};

/* The one dataplane of the process (wn_dpapp_start .. wn_dpapp_stop). */
static struct {
	bool started;
	struct wn_dpapp_conf p;
	struct wn_server *srv;
	struct rte_rcu_qsbr *qs;
	struct wn_dp_group *dp;
	struct shard_arg shard_args[DP_MAX_SHARDS];
	unsigned int shard_lcore[DP_MAX_SHARDS]; /* lcore of each shard; main: shard 0 */
	uint16_t n_shards;
	uint16_t port;
	bool port_set;
	int efd;
	bool used;                     /* started once (and stopped) */
} app = { .efd = -1 };

static int
shard_main(void *arg)
{
	struct shard_arg *a = arg;
	int ret = wn_dp_run(a->g, a->idx, &quit);

	if (ret != 0) {
		fprintf(stderr, "warpnicd: lcore shard %u stopped: %s\n", a->idx, strerror(-ret));
		quit = 1;
	}
	return ret;
}

/* rte_telemetry "/warpnic/ctl": control thread object counts (dpdk-telemetry.py). */
static int
tel_ctl(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_server_stats st;

	(void)cmd;
	(void)params;
	if (ctl_srv == NULL)
		return -ENODEV;
	wn_server_stats(ctl_srv, &st);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "clients", st.clients);
	rte_tel_data_add_dict_u64(d, "pds", st.pds);
	rte_tel_data_add_dict_u64(d, "mrs", st.mrs);
	rte_tel_data_add_dict_u64(d, "mws", st.mws);
	rte_tel_data_add_dict_u64(d, "cqs", st.cqs);
	rte_tel_data_add_dict_u64(d, "srqs", st.srqs);
	rte_tel_data_add_dict_u64(d, "qps", st.qps);
	rte_tel_data_add_dict_u64(d, "cm_channels", st.channels);
	rte_tel_data_add_dict_u64(d, "cm_ids", st.cm_ids);
	rte_tel_data_add_dict_u64(d, "requests", st.requests);
	rte_tel_data_add_dict_u64(d, "bad_requests", st.bad_requests);
	return 0;
}

void
wn_dpapp_quit(void)
{
	quit = 1;
}

bool
wn_dpapp_running(void)
{
	return app.started && !quit;
}

void
wn_dpapp_usage(const char *prog)
{
	printf("Usage: %s [EAL options] -- [options]\n"
	       "The port is the first ethdev (or --port N), e.g. EAL --vdev net_memif0,... or\n"
	       "--vdev net_af_packet0,iface=veth0 or --vdev net_tap0. A fault injector wraps it\n"
	       "with EAL --vdev 'net_wn_impair0,drop=0.01,reorder=0.01,...'.\n"
	       "Options (also accepted one per line, without the dashes, in --config FILE):\n"
	       "  --ip ADDR/PREFIX   port address (repeatable; IPv4 or IPv6)\n"
	       "  --gw ADDR          default gateway\n"
	       "  --port N           ethdev port id (default: the first)\n"
	       "  --ctl PATH         control socket (default %s)\n"
	       "  --name DEV         verbs device name (default wn0)\n"
	       "  --mtu N            L3 MTU (default 1500)\n"
	       "  --pcap FILE        write every packet of the port to FILE (pcapng)\n"
	       "  --impair SPEC      wrap the port with the fault injector, e.g.\n"
	       "                     drop=0.01,reorder=0.01,dup=0.001,corrupt=0,seed=1\n"
	       "  --idle-us N        sleep N us after ~2000 idle loop iterations (default 20;\n"
	       "                     0 = poll without pause)\n"
	       "  --max-conns N      TCP connections (default 1024)\n"
	       "  --sockbuf BYTES    TCP send/receive buffer per connection (default 1 MiB)\n"
	       "  --mbufs N          mbuf pool size (default 16383)\n"
	       "  --no-offload       software checksums even when the port offloads them\n"
	       "  --zero-copy-tx on|off  send registered memory in place (mbuf chains, CQEs after\n"
	       "                     the ACK; memif/af_packet/tap, else copied; default off)\n"
	       "  --zero-copy-min BYTES  ... for messages of at least BYTES (default 16384;\n"
	       "                     smaller ones are copied)\n"
	       "  --mpa-rev 1|2      MPA revision (default 2: RFC 6581 enhanced)\n"
	       "  --markers          ask the peer to send MPA Markers (default off)\n"
	       "  --no-crc           do not ask for MPA CRC (used if the peer asks)\n"
	       "  --no-p2p           initiator does not ask for RFC 6581 peer-to-peer mode\n"
	       "  --rtr LIST         RTR types offered/accepted: any of send,write,read\n"
	       "                     (default send,write,read)\n"
	       "  --mpa-timeout MS   MPA startup timeout (default 20000, as siw)\n"
	       "  --config FILE      read options from FILE (see config/warpnicd.conf)\n"
	       "  --help             this text\n"
	       "Telemetry (dpdk-telemetry.py): /warpnic/ctl, /warpnic/dp/stats, /warpnic/dp/tcp,\n"
	       "/warpnic/dp/port, /warpnic/dp/conns, /warpnic/dp/qp[,QPN].\n",
	       prog, WN_CTL_DEFAULT_PATH);
}

static int
parse_ip(struct wn_dpapp_conf *p, const char *arg)
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
	O_ZC, O_ZCMIN, O_HELP,
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
	{"help", no_argument, NULL, O_HELP},
	{NULL, 0, NULL, 0},
};

static int parse_config(struct wn_dpapp_conf *p, const char *path, int depth);

static int
apply(struct wn_dpapp_conf *p, int o, const char *arg, int depth)
{
	unsigned long v;

	switch (o) {
	case O_IP:
		return parse_ip(p, arg);
	case O_GW:
		p->dp.has_gw = true;
		return wn_ip_addr_parse(arg, &p->dp.gw, NULL);
	case O_PORT:
		if (num(arg, 0, RTE_MAX_ETHPORTS - 1, &v) != 0)
			return -EINVAL;
		p->port = (int)v;
		return 0;
	case O_CTL:
		snprintf(p->ctl_path, sizeof(p->ctl_path), "%s", arg);
		return 0;
	case O_NAME:
		snprintf(p->dev_name, sizeof(p->dev_name), "%s", arg);
		return 0;
	case O_MTU:
		if (num(arg, 576, 9000, &v) != 0)
			return -EINVAL;
		p->ctl.mtu = (uint32_t)v;
		p->dp.mtu = (uint16_t)v;
		return 0;
	case O_PCAP:
		free((void *)(uintptr_t)p->pcap); /* the last one given counts */
		p->pcap = strdup(arg);
		return p->pcap != NULL ? 0 : -ENOMEM;
	case O_IDLE:
		if (num(arg, 0, 100000, &v) != 0)
			return -EINVAL;
		p->dp.idle_us = (uint32_t)v;
		return 0;
	case O_MAXC:
		if (num(arg, 1, 1u << 20, &v) != 0)
			return -EINVAL;
		p->dp.max_conns = (uint32_t)v;
		return 0;
	case O_SOCKBUF:
		if (num(arg, 16384, 64u << 20, &v) != 0)
			return -EINVAL;
		p->dp.sockbuf = (uint32_t)v;
		return 0;
	case O_MBUFS:
		if (num(arg, 1023, 1u << 22, &v) != 0)
			return -EINVAL;
		p->mbufs = (uint32_t)v;
		return 0;
	case O_NOOFF:
		p->offload = false;
		return 0;
	case O_REV:
		if (num(arg, 1, 2, &v) != 0)
			return -EINVAL;
		p->dp.mpa_rev = (uint8_t)v;
		return 0;
	case O_MARKERS:
		p->dp.markers = true;
		return 0;
	case O_NOCRC:
		p->dp.crc = false;
		return 0;
	case O_NOP2P:
		p->dp.p2p = false;
		return 0;
	case O_RTR:
		return parse_rtr(arg, &p->dp.rtr);
	case O_MPATO:
		if (num(arg, 1, 3600000, &v) != 0)
			return -EINVAL;
		p->dp.mpa_timeout_us = (uint32_t)v * 1000;
		return 0;
	case O_CONFIG:
		return parse_config(p, arg, depth + 1);
	case O_IMPAIR:
		free((void *)(uintptr_t)p->impair);
		p->impair = strdup(arg);
		return p->impair != NULL ? 0 : -ENOMEM;
	case O_ZC:
		if (strcmp(arg, "on") != 0 && strcmp(arg, "off") != 0)
			return -EINVAL;
		p->dp.zero_copy_tx = strcmp(arg, "on") == 0;
		return 0;
	case O_ZCMIN:
		if (num(arg, 0, UINT32_MAX, &v) != 0)
			return -EINVAL;
		p->dp.zero_copy_min = (uint32_t)v;
		return 0;
	default:
		return -EINVAL;
	}
}

/* A config file: "name value" or "name" per line, '#' comments; names as the long options. */
static int
parse_config(struct wn_dpapp_conf *p, const char *path, int depth)
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
wn_dpapp_defaults(struct wn_dpapp_conf *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->ctl_path, sizeof(p->ctl_path), "%s", WN_CTL_DEFAULT_PATH);
	snprintf(p->dev_name, sizeof(p->dev_name), "wn0");
	p->port = -1;
	p->mbufs = 16383;
	p->offload = true;
	p->ctl.mtu = 1500;
	p->dp.mtu = 1500;
	p->dp.idle_us = 20;
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
	p->main_shard = true;
}

void
wn_dpapp_conf_free(struct wn_dpapp_conf *p)
{
	free((void *)(uintptr_t)p->pcap);
	free((void *)(uintptr_t)p->impair);
	p->pcap = NULL;
	p->impair = NULL;
}

int
wn_dpapp_option(struct wn_dpapp_conf *p, const char *name, const char *arg)
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

int
wn_dpapp_parse_args(struct wn_dpapp_conf *p, int argc, char **argv)
{
	int o, ret;

	optind = 1;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (o == O_HELP) {
			wn_dpapp_usage(argv[0]);
			exit(0);
		}
		if (o == '?') {
			wn_dpapp_usage(argv[0]);
			return -EINVAL;
		}
		ret = apply(p, o, optarg, 0);
		if (ret != 0) {
			fprintf(stderr, "warpnicd: bad value for --%s: '%s'\n", opts[o - O_IP].name,
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

static int
pick_port(const struct wn_dpapp_conf *p, const uint16_t *pending, int nb_pending, uint16_t nq,
	  uint16_t *port)
{
	char name[RTE_ETH_NAME_MAX_LEN], args[1024];
	uint16_t pid;
	int face;

	if (p->port >= 0) {
		if (!rte_eth_dev_is_valid_port((uint16_t)p->port))
			return -ENODEV;
		*port = (uint16_t)p->port;
	} else if (nb_pending > 0) {
		*port = pending[0]; /* EAL --vdev net_wn_impair0,port=...: its face */
	} else {
		RTE_ETH_FOREACH_DEV(pid)
			break;
		if (pid >= RTE_MAX_ETHPORTS)
			return -ENODEV;
		*port = pid;
	}
	if (p->impair == NULL)
		return 0;
	if (rte_eth_dev_get_name_by_port(*port, name) != 0)
		return -ENODEV;
	/* the face needs a queue per dataplane lcore */
	if ((size_t)snprintf(args, sizeof(args), "port=%s,queues=%u,%s", name, nq, p->impair) >=
	    sizeof(args))
		return -E2BIG;
	face = wn_impair_create("net_wn_impair_dp", args, p->dp.pool);
	if (face < 0)
		return face;
	*port = (uint16_t)face;
	return 0;
}

/* Everything start() created, in reverse; the ports stay for wn_port_shutdown(). */
static void
teardown(void)
{
	struct wn_dpapp_conf *p = &app.p;

	if (app.srv != NULL)
		wn_server_stop(app.srv);
	ctl_srv = NULL;
	wn_dp_free(app.dp);
	wn_server_destroy(app.srv);
	wn_pcap_close(p->dp.pcap);
	if (app.efd >= 0)
		close(app.efd);
	rte_ring_free(p->dp.to_dp);
	rte_ring_free(p->dp.to_ctl);
	rte_free(app.qs);
	if (app.port_set && rte_eth_dev_is_valid_port(app.port) && wn_impair_is_face(app.port))
		wn_impair_destroy(app.port);
	/* the mbuf pool stays: the port's queues hold its mbufs until wn_port_shutdown() */
	wn_dpapp_conf_free(p);
	memset(&app, 0, sizeof(app));
	app.efd = -1;
	app.used = true;
}

static int
launch_workers(void)
{
	unsigned int lcore;
	uint16_t n = app.p.main_shard ? 1 : 0;
	int ret = 0;

	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (n == app.n_shards)
			break;
		app.shard_args[n].g = app.dp;
		app.shard_args[n].idx = n;
		app.shard_lcore[n] = lcore;
		if (rte_eal_remote_launch(shard_main, &app.shard_args[n], lcore) != 0) {
			fprintf(stderr, "warpnicd: lcore %u: launch failed\n", lcore);
			quit = 1;
			app.shard_lcore[n] = RTE_MAX_LCORE;
			ret = -EBUSY;
		}
		n++;
	}
	return ret;
}

int
wn_dpapp_start(const struct wn_dpapp_conf *conf)
{
	uint16_t pending[WN_IMPAIR_MAX_PENDING];
	struct wn_dpapp_conf *p = &app.p;
	struct wn_port_conf pc;
	unsigned int lcores;
	uint32_t room;
	int ret, nb_pending;
	size_t qsz;

	/* once per process: the mbuf pool stays for the port, telemetry cannot unregister */
	if (app.started || app.used)
		return -EALREADY;
	if (conf->dp.n_addrs == 0) {
		fprintf(stderr, "warpnicd: give the port an address with --ip ADDR/PREFIX\n");
		return -EINVAL;
	}
	/* the embedded dataplane needs lcores of its own: the main one is the caller's */
	lcores = conf->main_shard ? rte_lcore_count() : rte_lcore_count() - 1;
	if (lcores == 0) {
		fprintf(stderr, "warpnicd: an embedded dataplane needs a worker lcore (EAL -l)\n");
		return -ENOTSUP;
	}
	*p = *conf;
	/* the copy owns the strings now */
	p->pcap = conf->pcap != NULL ? strdup(conf->pcap) : NULL;
	p->impair = conf->impair != NULL ? strdup(conf->impair) : NULL;
	p->ctl.path = p->ctl_path;
	p->ctl.dev_name = p->dev_name;
	p->dp.pool = NULL;
	p->dp.pcap = NULL;
	p->dp.to_dp = NULL;
	p->dp.to_ctl = NULL;
	/* quit stays as it is: a SIGTERM during start-up still stops warpnicd */
	ret = -ENOMEM;
	if ((conf->pcap != NULL && p->pcap == NULL) || (conf->impair != NULL && p->impair == NULL))
		goto fail;

	room = RTE_MBUF_DEFAULT_BUF_SIZE;
	if (p->dp.mtu + 18u + RTE_PKTMBUF_HEADROOM > room)
		room = p->dp.mtu + 18u + RTE_PKTMBUF_HEADROOM;
	p->dp.pool = rte_pktmbuf_pool_create("warpnicd", p->mbufs, 256, 0, (uint16_t)room,
					     (int)rte_socket_id());
	if (p->dp.pool == NULL) {
		fprintf(stderr, "warpnicd: mbuf pool: %s\n", rte_strerror(rte_errno));
		ret = -rte_errno;
		goto fail;
	}
	nb_pending = wn_impair_create_pending(p->dp.pool, pending, RTE_DIM(pending));
	if (nb_pending < 0) {
		fprintf(stderr, "warpnicd: net_wn_impair: %s\n", strerror(-nb_pending));
		ret = nb_pending;
		goto fail;
	}
	/* one shard (port queue) per dataplane lcore */
	app.n_shards = (uint16_t)RTE_MIN(lcores, (unsigned int)DP_MAX_SHARDS);
	ret = pick_port(p, pending, nb_pending, app.n_shards, &app.port);
	if (ret < 0) {
		fprintf(stderr, "warpnicd: no port (give one with EAL --vdev, e.g. net_memif0)%s%s\n",
			p->impair != NULL ? " or --impair: " : "",
			p->impair != NULL ? strerror(-ret) : "");
		goto fail;
	}
	app.port_set = true;
	memset(&pc, 0, sizeof(pc));
	pc.port_id = app.port;
	pc.nb_queues = app.n_shards;
	pc.mtu = p->dp.mtu;
	pc.offload = p->offload;
	pc.set_mtu = !wn_impair_is_face(app.port);
	pc.multi_segs = p->dp.zero_copy_tx;
	pc.pool = p->dp.pool;
	ret = wn_port_setup(&pc, &p->dp.tx_offload_capa, &p->dp.rx_offload_capa);
	if (ret < 0) {
		fprintf(stderr, "warpnicd: port %u set-up: %s\n", app.port, strerror(-ret));
		goto fail;
	}
	p->dp.port_id = app.port;
	{
		struct rte_ether_addr mac;

		if (rte_eth_macaddr_get(app.port, &mac) == 0)
			memcpy(p->ctl.mac, mac.addr_bytes, 6);
	}
	if (p->pcap != NULL) {
		p->dp.pcap = wn_pcap_open(p->pcap, p->dp.mtu + 64u, "warpnicd");
		if (p->dp.pcap == NULL) {
			ret = -errno;
			fprintf(stderr, "warpnicd: --pcap %s: %s\n", p->pcap, strerror(errno));
			goto fail;
		}
	}

	/* control thread ↔ dataplane */
	p->dp.to_dp = rte_ring_create("wn_to_dp", CTL_RING_SIZE, SOCKET_ID_ANY,
				      RING_F_SP_ENQ | RING_F_SC_DEQ);
	/* every lcore posts CM events and DONEs: multi-producer */
	p->dp.to_ctl = rte_ring_create("wn_to_ctl", CTL_RING_SIZE, SOCKET_ID_ANY, RING_F_SC_DEQ);
	app.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	qsz = rte_rcu_qsbr_get_memsize(app.n_shards);
	app.qs = rte_zmalloc("wn_mem_qs", qsz, RTE_CACHE_LINE_SIZE);
	if (p->dp.to_dp == NULL || p->dp.to_ctl == NULL || app.efd < 0 || app.qs == NULL ||
	    rte_rcu_qsbr_init(app.qs, app.n_shards) != 0) {
		fprintf(stderr, "warpnicd: control rings: %s\n", rte_strerror(rte_errno));
		ret = -ENOMEM;
		goto fail;
	}
	p->ctl.mem_qs = app.qs;
	app.srv = wn_server_create(&p->ctl);
	if (app.srv == NULL) {
		ret = -errno;
		fprintf(stderr, "warpnicd: control socket %s: %s\n", p->ctl_path, strerror(errno));
		goto fail;
	}
	p->dp.ctl_efd = app.efd;
	p->dp.mem = wn_server_mem(app.srv);
	p->dp.qs = app.qs;
	app.dp = wn_dp_create(&p->dp, app.n_shards);
	if (app.dp == NULL) {
		ret = -errno;
		fprintf(stderr, "warpnicd: dataplane: %s\n", strerror(errno));
		goto fail;
	}
	if (wn_server_dp_attach(app.srv, p->dp.to_dp, p->dp.to_ctl, app.efd) != 0 ||
	    wn_server_start(app.srv) != 0) {
		fprintf(stderr, "warpnicd: control thread failed to start\n");
		ret = -EIO;
		goto fail;
	}
	ctl_srv = app.srv;
	rte_telemetry_register_cmd("/warpnic/ctl", tel_ctl,
				   "Control thread object counts. Takes no parameters");
	wn_dp_telemetry_register(app.dp);
	rte_log(RTE_LOG_NOTICE, RTE_LOGTYPE_USER1,
		"warpnicd: serving %s on %s, port %u, %u dataplane lcore(s)\n", p->dev_name,
		p->ctl_path, app.port, app.n_shards);
	fflush(stdout);
	for (unsigned int i = 0; i < RTE_DIM(app.shard_lcore); i++)
		app.shard_lcore[i] = RTE_MAX_LCORE;
	app.started = true;
	(void)launch_workers();
	return 0;
fail:
	teardown();
	return ret;
}

int
wn_dpapp_run_main(void)
{
	if (!app.started || !app.p.main_shard)
		return -EINVAL;
	app.shard_args[0].g = app.dp;
	app.shard_args[0].idx = 0;
	return shard_main(&app.shard_args[0]);
}

int
wn_dpapp_wait_idle(unsigned int timeout_ms)
{
	/* the snapshot is refreshed every 100 ms; trust only one begun after the call */
	uint64_t t0 = wn_net_now_us(), since = t0 + 200 * 1000;
	uint64_t end = t0 + (uint64_t)timeout_ms * 1000;

	if (!app.started)
		return 0;
	while (wn_dpapp_running() && wn_net_now_us() < end) {
		uint32_t busy = 0;
		bool fresh = true;

		for (uint16_t i = 0; i < app.n_shards; i++) {
			struct wn_dp *dp = app.dp->shard[i];

			pthread_mutex_lock(&dp->tel_lock);
			/* TIME_WAIT: both FINs went through and ours was acked */
			for (uint32_t k = 0; k < dp->tel_nconn; k++)
				busy += !dp->tel_conn[k].llp.transport.quiet;
			fresh &= dp->tel_at >= since;
			pthread_mutex_unlock(&dp->tel_lock);
		}
		if (fresh && busy == 0)
			return 0;
		rte_delay_us_sleep(20 * 1000);
	}
	return wn_dpapp_running() ? -ETIMEDOUT : 0;
}

int
wn_dpapp_stop(void)
{
	int ret, status = 0;

	if (!app.started)
		return 0;
	quit = 1;
	for (unsigned int i = 0; i < app.n_shards; i++) {
		if (app.shard_lcore[i] == RTE_MAX_LCORE)
			continue;
		ret = rte_eal_wait_lcore(app.shard_lcore[i]);
		if (ret != 0 && status == 0)
			status = ret < 0 ? ret : -EIO;
	}
	teardown();
	return status;
}
