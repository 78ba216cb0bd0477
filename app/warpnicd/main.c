/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnicd: the warpnic dataplane process.
 *
 *   warpnicd [EAL options] -- [--ip ADDR/PREFIX]... [--ctl PATH] [--mtu N] [--name DEV]
 *
 * Today it brings up EAL and the control thread (ctl.c); the dataplane lcores attach to
 * the control thread through wn_ctl_server_dp_attach() (ctl_dp.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_telemetry.h>

#include "ctl.h"

struct params {
	struct wn_ctl_server_conf ctl;
	char ctl_path[108];
	char dev_name[WN_CTL_NAME_LEN];
};

static volatile sig_atomic_t quit;
static struct wn_ctl_server *ctl_srv;

/* rte_telemetry "/warpnic/ctl": control thread object counts (dpdk-telemetry.py). */
static int
tel_ctl(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_ctl_server_stats st;

	(void)cmd;
	(void)params;
	if (ctl_srv == NULL)
		return -ENODEV;
	wn_ctl_server_stats(ctl_srv, &st);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "clients", st.clients);
	rte_tel_data_add_dict_u64(d, "pds", st.pds);
	rte_tel_data_add_dict_u64(d, "mrs", st.mrs);
	rte_tel_data_add_dict_u64(d, "cqs", st.cqs);
	rte_tel_data_add_dict_u64(d, "srqs", st.srqs);
	rte_tel_data_add_dict_u64(d, "qps", st.qps);
	rte_tel_data_add_dict_u64(d, "cm_channels", st.channels);
	rte_tel_data_add_dict_u64(d, "cm_ids", st.cm_ids);
	rte_tel_data_add_dict_u64(d, "requests", st.requests);
	rte_tel_data_add_dict_u64(d, "bad_requests", st.bad_requests);
	return 0;
}

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static void
usage(const char *prog)
{
	printf("Usage: %s [EAL options] -- [options]\n"
	       "  --ip ADDR/PREFIX   port address (repeatable; IPv4 or IPv6)\n"
	       "  --ctl PATH         control socket (default %s)\n"
	       "  --mtu N            L3 MTU (default 1500)\n"
	       "  --name DEV         verbs device name (default wn0)\n"
	       "  --help             this text\n",
	       prog, WN_CTL_DEFAULT_PATH);
}

static int
parse_ip(struct wn_ctl_server_conf *c, const char *arg)
{
	char buf[64];
	char *slash;
	struct wn_ctl_addr *a;

	if (c->n_addrs == WN_CTL_SERVER_MAX_ADDRS)
		return -ENOSPC;
	snprintf(buf, sizeof(buf), "%s", arg);
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash = '\0';
	a = &c->addrs[c->n_addrs];
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, buf, a->addr) == 1)
		a->family = WN_CTL_AF_INET;
	else if (inet_pton(AF_INET6, buf, a->addr) == 1)
		a->family = WN_CTL_AF_INET6;
	else
		return -EINVAL;
	c->n_addrs++;
	return 0;
}

static int
parse_args(struct params *p, int argc, char **argv)
{
	static const struct option opts[] = {
		{"ip", required_argument, NULL, 'i'},
		{"ctl", required_argument, NULL, 'c'},
		{"mtu", required_argument, NULL, 'm'},
		{"name", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int o;

	snprintf(p->ctl_path, sizeof(p->ctl_path), "%s", WN_CTL_DEFAULT_PATH);
	snprintf(p->dev_name, sizeof(p->dev_name), "wn0");
	p->ctl.mtu = 1500;
	optind = 1;
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'i':
			if (parse_ip(&p->ctl, optarg) != 0) {
				fprintf(stderr, "warpnicd: bad --ip '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case 'c':
			snprintf(p->ctl_path, sizeof(p->ctl_path), "%s", optarg);
			break;
		case 'm':
			p->ctl.mtu = (uint32_t)strtoul(optarg, NULL, 0);
			if (p->ctl.mtu < 576 || p->ctl.mtu > 9000)
				return -EINVAL;
			break;
		case 'n':
			snprintf(p->dev_name, sizeof(p->dev_name), "%s", optarg);
			break;
		case 'h':
			usage(argv[0]);
			exit(0);
		default:
			usage(argv[0]);
			return -EINVAL;
		}
	}
	p->ctl.path = p->ctl_path;
	p->ctl.dev_name = p->dev_name;
	return 0;
}

int
main(int argc, char **argv)
{
	struct wn_ctl_server *srv;
	struct params p;
	uint16_t port;
	int n;

	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "warpnicd: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	memset(&p, 0, sizeof(p));
	argv[n] = argv[0];
	if (parse_args(&p, argc - n, argv + n) != 0)
		goto out;
	RTE_ETH_FOREACH_DEV(port) {
		struct rte_ether_addr mac;

		if (rte_eth_macaddr_get(port, &mac) == 0) {
			memcpy(p.ctl.mac, mac.addr_bytes, 6);
			break;
		}
	}
	srv = wn_ctl_server_create(&p.ctl);
	if (srv == NULL) {
		fprintf(stderr, "warpnicd: control socket %s: %s\n", p.ctl_path, strerror(errno));
		goto out;
	}
	if (wn_ctl_server_start(srv) != 0) {
		wn_ctl_server_destroy(srv);
		goto out;
	}
	ctl_srv = srv;
	rte_telemetry_register_cmd("/warpnic/ctl", tel_ctl,
				   "Control thread object counts. Takes no parameters");
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	rte_log(RTE_LOG_NOTICE, RTE_LOGTYPE_USER1, "warpnicd: serving %s on %s\n",
		p.dev_name, p.ctl_path);
	while (!quit)
		pause();
	ctl_srv = NULL;
	wn_ctl_server_destroy(srv);
	rte_eal_cleanup();
	return 0;
out:
	rte_eal_cleanup();
	return 1;
}
