/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnicd's options and config file (wn_node.h): one table, opts[], says for every option
 * its name, the form of its value, what it does and where it goes. --help is printed from it,
 * the command line and "name value" lines of a config file are applied through it, and every
 * mistake names the option and the form the table gives.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "wn_cm.h"
#include "wn_mpa.h"
#include "wn_node.h"

/* A field of struct wn_node_conf: its offset and size. */
#define FIELD(f) \
	.off = offsetof(struct wn_node_conf, f), .size = sizeof(((struct wn_node_conf *)0)->f)

enum opt_kind {
	K_NUM,	   /* a number in [min, max] stored as value * mul + add */
	K_FLAG,	   /* no value: a bool field set to `set` */
	K_SPECIAL, /* its own parser in apply_special() */
};

enum {
	O_IP = 256, O_GW, O_PORT, O_MTU, O_MBUFS, O_NOOFF, O_PCAP, O_IMPAIR, O_NETDEV,
	O_IDLEMODE, O_IDLESPIN, O_IDLE, O_CTL, O_CTLSPIN, O_CTLMODE, O_CTLGROUP, O_NAME, O_MAXMR,
	O_MAXMRSZ, O_DAEMON, O_PIDFILE, O_MAXC, O_SOCKBUF, O_TXBUDGET, O_STAGED, O_ZC, O_ZCMIN, O_REV, O_MARKERS,
	O_NOCRC, O_NOP2P, O_RTR, O_MPATO, O_RNR, O_IBPORT, O_LLP, O_UDPORT, O_CONFIG, O_HELP,
};

/* One option. @form is the value's form for --help and for error messages (NULL: a flag). */
struct opt {
	const char *name;
	int id;
	const char *form;
	const char *group; /* the --help heading that starts here */
	const char *help;  /* --help's text; '\n' continues on the next line */
	enum opt_kind kind;
	unsigned long min, max; /* K_NUM */
	size_t off, size;	/* K_NUM, K_FLAG */
	uint32_t mul, add;	/* K_NUM */
	bool set;		/* K_FLAG */
};

#define NUM(n, i, f, g, h, lo, hi, fld, m, a) \
	{.name = n, .id = i, .form = f, .group = g, .help = h, .kind = K_NUM, .min = lo, \
	 .max = hi, FIELD(fld), .mul = m, .add = a}
#define FLAG(n, i, g, h, fld, s) \
	{.name = n, .id = i, .group = g, .help = h, .kind = K_FLAG, FIELD(fld), .set = s}
#define SPECIAL(n, i, f, g, h) \
	{.name = n, .id = i, .form = f, .group = g, .help = h, .kind = K_SPECIAL}

static const struct opt opts[] = {
	SPECIAL("ip", O_IP, "ADDR/PREFIX", "The port",
		"the port's address, e.g. 198.18.0.1/24 or fd77:6e::1/64 (repeatable; IPv6:\n"
		"the port also forms a link-local address, and each IPv6 address is usable\n"
		"once Duplicate Address Detection passed, ~1 s)"),
	SPECIAL("gw", O_GW, "ADDR", NULL, "default gateway (none)"),
	NUM("port", O_PORT, "N", NULL, "ethdev port id (default: the first the EAL options made)",
	    0, RTE_MAX_ETHPORTS - 1, port, 1, 0),
	/* and ctl.mtu: apply() */
	NUM("mtu", O_MTU, "N", NULL, "L3 MTU, 576..9000 (default 1500)", 576, 9000, dp.mtu, 1, 0),
	NUM("mbufs", O_MBUFS, "N", NULL, "mbuf pool size (default 16383)", 1023, 1u << 22, mbufs,
	    1, 0),
	FLAG("no-offload", O_NOOFF, NULL, "software checksums even when the port offloads them",
	     offload, false),
	SPECIAL("pcap", O_PCAP, "FILE", NULL, "write every frame of the port to FILE (pcapng)"),
	SPECIAL("impair", O_IMPAIR, "SPEC", NULL,
		"wrap the port with the fault injector, e.g.\n"
		"drop=0.01,reorder=0.01,dup=0.001,corrupt=0,seed=1"),
	SPECIAL("netdev", O_NETDEV, "NAME", NULL,
		"put the --ip addresses on a kernel interface NAME too (a veth pair made\n"
		"for it, removed at exit), as an RDMA NIC's netdev carries them: programs\n"
		"that find the device with getifaddrs or open a TCP side channel to its\n"
		"address work on this host (no prefix route is added)"),
	SPECIAL("idle", O_IDLEMODE, "sleep|poll", "Cores",
		"what an idle dataplane lcore does (default sleep). sleep: for shared\n"
		"cores; after --idle-spin-us without work it sleeps until a program posts to\n"
		"one of its queues, its port queue receives (Rx interrupt) or a timer is due;\n"
		"a port without Rx interrupts (af_packet, --impair) makes it nap at most\n"
		"--idle-us. poll: for dedicated cores; never sleeps, lowest latency"),
	NUM("idle-spin-us", O_IDLESPIN, "N", NULL,
	    "keep polling N us without work before sleeping (default 20)", 0, 1000000,
	    dp.idle_spin_us, 1, 0),
	NUM("idle-us", O_IDLE, "N", NULL,
	    "longest nap without an Rx interrupt (default 20; 0: --idle poll)", 0, 100000,
	    dp.idle_us, 1, 0),
	SPECIAL("ctl", O_CTL, "PATH", "Programs",
		"the control socket programs connect to (default " WN_CTL_DEFAULT_PATH ";\n"
		"its directory is made; a socket another process serves is never taken)"),
	NUM("ctl-spin-us", O_CTLSPIN, "N", NULL,
	    "the control thread keeps polling N us after a request before it sleeps:\n"
	    "a program's requests come in runs, and a sleeping thread's wake-up costs\n"
	    "tens of us on a VM; with WARPNIC_CALL_SPIN_US in the programs (default 0:\n"
	    "sleep at once)", 0, 1000000, ctl.spin_us, 1, 0),
	SPECIAL("ctl-mode", O_CTLMODE, "MODE", NULL,
		"the control socket's permissions, octal (default 0660)"),
	SPECIAL("ctl-group", O_CTLGROUP, "GROUP", NULL,
		"the control socket's group (default rdma where that group exists, as\n"
		"rdma-core gives /dev/infiniband; else the daemon's)"),
	SPECIAL("name", O_NAME, "DEV", NULL, "the verbs device name (default wn0)"),
	NUM("max-mrs", O_MAXMR, "N", NULL,
	    "memory regions and windows at most, all programs together (default 65535)",
	    16, WN_MEM_MAX_ENTRIES - 1, ctl.mem_entries, 1, 1), /* lib/mem's index 0: reserved */
	NUM("max-mr-size", O_MAXMRSZ, "MB", NULL,
	    "largest memory region, MiB (default: the host's memory)", 1, 1u << 24,
	    ctl.max_mr_mb, 1, 0),
	FLAG("daemon", O_DAEMON, "Running",
	     "detach once serving: the command returns 0 then, or the failure's exit\n"
	     "status (warpnicd's own output stays where it was sent)", daemon, true),
	SPECIAL("pidfile", O_PIDFILE, "FILE", NULL,
		"write the daemon's pid to FILE once it serves (removed at exit)"),
	NUM("max-conns", O_MAXC, "N", "TCP", "TCP connections per lcore, TIME-WAIT included "
	    "(default 65536; QPs: this times the lcores)",
	    1, 1u << 20, dp.max_conns, 1, 0),
	NUM("sockbuf", O_SOCKBUF, "BYTES", NULL,
	    "TCP send and receive buffer per connection (default 1048576)", 16384, 64u << 20,
	    dp.sockbuf, 1, 0),
	NUM("tx-budget", O_TXBUDGET, "BYTES", NULL,
	    "TCP send buffer octets per lcore, all its connections together, shared equally\n"
	    "among those that hold data (two segments each at least): what is in flight stays\n"
	    "in the CPU's cache however many QPs send (default 131072; 0: sockbuf per\n"
	    "connection only, for long round trips)", 0, 1u << 30, dp.tx_budget, 1, 0),
	SPECIAL("tx-staged", O_STAGED, "on|off", "Transmit",
		"default on: frame every FPDU, CRC included, in a staging buffer and copy it into\n"
		"TCP (the fastest on ports that copy); off: registered memory (messages of 2 KiB\n"
		"or more) stays where it is until the ACK (completions after it), copied once\n"
		"into each segment with its CRC computed there"),
	SPECIAL("zero-copy-tx", O_ZC, "on|off", NULL,
		"send registered memory in place (mbuf chains, completions after the ACK;\n"
		"on a PCI NIC from regions DMA-mapped for it, else copied; default off)"),
	NUM("zero-copy-min", O_ZCMIN, "BYTES", NULL,
	    "... only for messages of at least BYTES (default 16384)", 0, UINT32_MAX,
	    dp.zero_copy_min, 1, 0),
	NUM("mpa-rev", O_REV, "1|2", "MPA",
	    "MPA revision (default 2: RFC 6581 enhanced; a connect whose Rev 2 Request a\n"
	    "Rev 1 responder closes is retried with Rev 1)", 1, 2, dp.mpa_rev, 1, 0),
	FLAG("markers", O_MARKERS, NULL, "ask the peer to send MPA Markers (default off)",
	     dp.markers, true),
	FLAG("no-crc", O_NOCRC, NULL, "do not ask for the MPA CRC (it is used if the peer asks)",
	     dp.crc, false),
	FLAG("no-p2p", O_NOP2P, NULL, "as initiator, do not ask for RFC 6581 peer-to-peer mode",
	     dp.p2p, false),
	SPECIAL("rtr", O_RTR, "LIST", NULL,
		"RTR types offered and accepted: any of send,write,read, or none\n"
		"(default send,write,read)"),
	NUM("mpa-timeout", O_MPATO, "MS", NULL,
	    "MPA startup and SCTP session setup timeout (default 20000, as siw)", 1, 3600000,
	    dp.mpa_timeout_us, 1000, 0),
	NUM("rnr-hold-ms", O_RNR, "MS", "RDMA",
	    "a Send that finds no receive posted waits up to MS for one, its stream held\n"
	    "(the sender's TCP window closes), as an InfiniBand RNR retry would; then\n"
	    "DDP's Terminate 'no buffer' (default 10000; 0: at once, as RFC 5041 and\n"
	    "siw; DDP over SCTP: always at once); at most 1000 once the peer closed\n"
	    "behind the held Send or the program stopped polling the receive CQ",
	    0, 3600000, dp.rnr_hold_us, 1000, 0),
	/* and ctl.ib_port: apply() */
	NUM("ib-port", O_IBPORT, "N", NULL,
	    "TCP and SCTP port where QPs that programs connect as on InfiniBand\n"
	    "(ibv_modify_qp to RTR with the peer's GID and QP number, no rdma_cm) meet\n"
	    "their peers (default 4791; 0: no such connections; the same on both ends)",
	    0, 65535, dp.ib_port, 1, 0),
	SPECIAL("llp", O_LLP, "mpa|sctp", NULL,
		"lower layer below DDP of connections whose program does not choose\n"
		"(WARPNIC_LLP): MPA over TCP (default) or DDP over SCTP (RFC 5043)"),
	NUM("ud-port", O_UDPORT, "PORT", NULL,
	    "UDP port of UD QPs' datagrams and rdma_cm's UDP port space between warpnic\n"
	    "instances, the same on every one (a warpnic extension; default 4793)",
	    1, 65535, dp.ud_port, 1, 0),
	SPECIAL("config", O_CONFIG, "FILE", "Files",
		"read options from FILE: one per line, \"name value\" or \"name\", without\n"
		"the dashes; \"eal ...\" lines add EAL options; '#' starts a comment"),
	{.name = "help", .id = O_HELP, .help = "this text", .kind = K_SPECIAL},
};

static const struct opt *
opt_by_id(int id)
{
	for (size_t i = 0; i < RTE_DIM(opts); i++)
		if (opts[i].id == id)
			return &opts[i];
	return NULL;
}

static const struct opt *
opt_by_name(const char *name)
{
	for (size_t i = 0; i < RTE_DIM(opts); i++)
		if (strcmp(opts[i].name, name) == 0)
			return &opts[i];
	return NULL;
}

void
wn_node_usage(const char *prog)
{
	const char *slash = strrchr(prog, '/');

	printf("Usage: %s [EAL options] -- [options]\n"
	       "The software iWARP RDMA NIC: a DPDK dataplane serving RDMA programs on this\n"
	       "host (run them with warpnic-run). The port is the first ethdev the EAL options\n"
	       "make, e.g. -a 0000:03:00.0 (a NIC bound to vfio-pci), --vdev\n"
	       "net_af_packet0,iface=eth1, --vdev net_memif0,..., or --vdev net_null0,no-rx=1\n"
	       "(this host only). A fault injector wraps it: --vdev 'net_wn_impair0,drop=0.01'.\n",
	       slash != NULL ? slash + 1 : prog);
	for (size_t i = 0; i < RTE_DIM(opts); i++) {
		const struct opt *o = &opts[i];
		char head[48];
		const char *h = o->help;
		int n;

		if (o->group != NULL)
			printf("%s:\n", o->group);
		n = snprintf(head, sizeof(head), "  --%s%s%s", o->name, o->form != NULL ? " " : "",
			     o->form != NULL ? o->form : "");
		printf("%s", head);
		/* the help from column 23, its words wrapped before column 80 */
		for (int col = n; h != NULL && *h != '\0';) {
			size_t w = strcspn(h, " \n");

			if (col > 21 && (col + 1 + (int)w > 79 || col == n)) {
				printf("\n%22s", "");
				col = 22;
			} else if (col < 22) {
				printf("%*s", 22 - col, "");
				col = 22;
			}
			printf(" %.*s", (int)w, h);
			col += 1 + (int)w;
			h += w;
			h += strspn(h, " \n");
		}
		printf("\n");
	}
	printf("Telemetry (dpdk-telemetry.py): /warpnic/ctl, /warpnic/dp/stats,\n"
	       "/warpnic/dp/tcp, /warpnic/dp/port, /warpnic/dp/net, /warpnic/dp/dma,\n"
	       "/warpnic/dp/conns, /warpnic/dp/qp[,QPN].\n"
	       "Exit status: 0 stopped by SIGINT or SIGTERM; 1 could not start or failed while\n"
	       "running; 2 a mistake in the options or the config file.\n");
}

/* The accepted form of @p o's value, for an error message. */
static void
form_of(const struct opt *o, char *buf, size_t len)
{
	if (o->kind == K_NUM && o->min != o->max && strchr(o->form, '|') == NULL)
		snprintf(buf, len, "%s, a number from %lu to %lu", o->form, o->min, o->max);
	else if (o->kind == K_SPECIAL && o->id == O_IP)
		snprintf(buf, len, "ADDR/PREFIX, e.g. 198.18.0.1/24 or fd77:6e::1/64");
	else if (o->kind == K_SPECIAL && o->id == O_CTLMODE)
		snprintf(buf, len, "an octal mode from 0 to 0777, e.g. 0660");
	else if (o->kind == K_SPECIAL && o->id == O_NETDEV)
		snprintf(buf, len, "an interface name of 1 to %d characters", IFNAMSIZ - 1);
	else if (o->kind == K_SPECIAL && o->id == O_RTR)
		snprintf(buf, len, "send, write and/or read separated by commas, or none");
	else if (o->form != NULL && strchr(o->form, '|') != NULL)
		snprintf(buf, len, "%.*s or %s", (int)strcspn(o->form, "|"), o->form,
			 strchr(o->form, '|') + 1);
	else
		snprintf(buf, len, "%s", o->form != NULL ? o->form : "no value");
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
	/* the prefix is not optional: a silent /32 or /128 makes every neighbour unreachable */
	if (strchr(arg, '/') == NULL || wn_net_addr_parse(arg, &ip, &prefix) != 0)
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
num(const char *arg, unsigned long lo, unsigned long hi, int base, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, base);
	if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

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
	unsigned long v;
	int l;

	switch (o) {
	case O_IP:
		return parse_ip(p, arg);
	case O_GW:
		p->dp.has_gw = true;
		return wn_net_addr_parse(arg, &p->dp.gw, NULL);
	case O_CTL:
		if (arg[0] == '\0' || strlen(arg) >= sizeof(p->ctl_path))
			return -EINVAL;
		snprintf(p->ctl_path, sizeof(p->ctl_path), "%s", arg);
		return 0;
	case O_CTLMODE:
		if (num(arg, 0, 0777, 8, &v) != 0)
			return -EINVAL;
		p->ctl.sock_mode = (uint32_t)v;
		return 0;
	case O_CTLGROUP:
		if (getgrnam(arg) == NULL)
			return -ENOENT;
		return dup_arg(&p->ctl.sock_group, arg);
	case O_NAME:
		if (arg[0] == '\0' || strlen(arg) >= sizeof(p->dev_name))
			return -EINVAL;
		snprintf(p->dev_name, sizeof(p->dev_name), "%s", arg);
		return 0;
	case O_NETDEV:
		if (arg[0] == '\0' || strlen(arg) >= IFNAMSIZ || strchr(arg, '/') != NULL ||
		    strchr(arg, ' ') != NULL)
			return -EINVAL;
		return dup_arg(&p->netdev, arg);
	case O_PCAP:
		return dup_arg(&p->pcap, arg);
	case O_PIDFILE:
		return dup_arg(&p->pidfile, arg);
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
	case O_STAGED:
		if (strcmp(arg, "on") != 0 && strcmp(arg, "off") != 0)
			return -EINVAL;
		p->dp.tx_ref = strcmp(arg, "off") == 0;
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
apply(struct wn_node_conf *p, const struct opt *o, const char *arg, int depth)
{
	unsigned long v;

	switch (o->kind) {
	case K_NUM:
		if (num(arg, o->min, o->max, 0, &v) != 0)
			return -EINVAL;
		store(p, o->off, o->size, (uint32_t)v * o->mul + o->add);
		if (o->id == O_MTU)
			p->ctl.mtu = p->dp.mtu;
		if (o->id == O_IBPORT)
			p->ctl.ib_port = p->dp.ib_port;
		return 0;
	case K_FLAG:
		*(bool *)((uint8_t *)p + o->off) = o->set;
		return 0;
	default:
		return apply_special(p, o->id, arg, depth);
	}
}

/*
 * Say what was wrong with @p o's value @p arg (errno @p err) and what is accepted.
 * @p where: "FILE:LINE: " for a config file line, "" on the command line.
 */
static void
bad_value(const char *where, const struct opt *o, const char *arg, int err)
{
	char form[96];

	if (o->id == O_CONFIG) /* parse_config() said it */
		return;
	/* in a config file the option has no dashes */
	const char *dash = where[0] == '\0' ? "--" : "";

	form_of(o, form, sizeof(form));
	if (o->id == O_CTLGROUP && err == -ENOENT)
		fprintf(stderr, "warpnicd: %s%sctl-group %s: no such group\n", where, dash, arg);
	else if (o->id == O_IP && err == -ENOSPC)
		fprintf(stderr, "warpnicd: %s%sip %s: at most %d addresses\n", where, dash, arg,
			RTE_MIN(WN_SERVER_MAX_ADDRS, WN_NETIF_MAX_ADDRS));
	else if (o->id == O_IP && strchr(arg, '/') == NULL)
		fprintf(stderr, "warpnicd: %s%sip %s: give the prefix length too, e.g. %s/24\n",
			where, dash, arg, arg);
	else
		fprintf(stderr, "warpnicd: %sbad value for %s%s: '%s' (expected %s)\n", where,
			dash, o->name, arg, form);
}

/* Words of an "eal" line, at most @p max, into @p out (pointers into @p line). */
static int
split_words(char *line, char **out, int max)
{
	char *save = NULL, *w;
	int n = 0;

	for (w = strtok_r(line, " \t", &save); w != NULL; w = strtok_r(NULL, " \t", &save)) {
		if (n == max)
			return -E2BIG;
		out[n++] = w;
	}
	return n;
}

/*
 * A config file: "name value" or "name" per line, '#' comments; names as the long options.
 * "eal ..." lines were taken before the EAL started (wn_node_eal_args()).
 */
static int
parse_config(struct wn_node_conf *p, const char *path, int depth)
{
	char line[512], where[300];
	unsigned int lineno = 0;
	FILE *f;
	int ret = 0;

	if (depth > 4) {
		fprintf(stderr, "warpnicd: --config %s: configs include each other too deep\n", path);
		return -ELOOP;
	}
	f = fopen(path, "r");
	if (f == NULL) {
		ret = -errno;
		fprintf(stderr, "warpnicd: --config %s: %s\n", path, strerror(errno));
		return ret;
	}
	while (ret == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *name, *val, *extra, *save = NULL;
		const struct opt *o;

		lineno++;
		snprintf(where, sizeof(where), "%s:%u: ", path, lineno);
		line[strcspn(line, "#\r\n")] = '\0';
		name = strtok_r(line, " \t=", &save);
		if (name == NULL || strcmp(name, "eal") == 0)
			continue;
		val = strtok_r(NULL, " \t=", &save);
		extra = strtok_r(NULL, " \t", &save);
		o = opt_by_name(name);
		if (o == NULL || o->id == O_HELP || o->id == O_DAEMON) {
			fprintf(stderr, "warpnicd: %sunknown option '%s'%s\n", where, name,
				o != NULL && o->id == O_DAEMON ? " (a command-line option)" :
				" (warpnicd --help lists them)");
			ret = -EINVAL;
		} else if (o->form != NULL && val == NULL) {
			fprintf(stderr, "warpnicd: %s%s needs a value: %s %s\n", where, name, name,
				o->form);
			ret = -EINVAL;
		} else if ((o->form == NULL && val != NULL) || extra != NULL) {
			fprintf(stderr, "warpnicd: %s%s: one value at most%s\n", where, name,
				o->form == NULL ? " (it takes none)" : "");
			ret = -EINVAL;
		} else {
			ret = apply(p, o, val, depth);
			if (ret != 0)
				bad_value(where, o, val, ret);
		}
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
	p->ctl.sock_mode = 0660;
	p->dp.mtu = 1500;
	p->dp.idle = WN_DP_IDLE_SLEEP;
	p->dp.idle_us = 20;
	p->dp.idle_spin_us = 20;
	p->dp.max_conns = 65536;
	p->dp.sockbuf = 1u << 20;
	p->dp.tx_budget = WN_DP_TX_BUDGET_DEFAULT;
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
	p->dp.ib_port = WN_CM_IB_PORT;
	p->ctl.ib_port = WN_CM_IB_PORT;
	p->dp.llp = WN_CTL_LLP_MPA;
	p->ctl.llp = WN_CTL_LLP_MPA;
	p->main_shard = true;
}

void
wn_node_conf_free(struct wn_node_conf *p)
{
	free((void *)(uintptr_t)p->pcap);
	free((void *)(uintptr_t)p->impair);
	free((void *)(uintptr_t)p->netdev);
	free((void *)(uintptr_t)p->pidfile);
	free((void *)(uintptr_t)p->ctl.sock_group);
	p->pcap = NULL;
	p->impair = NULL;
	p->netdev = NULL;
	p->pidfile = NULL;
	p->ctl.sock_group = NULL;
}

int
wn_node_option(struct wn_node_conf *p, const char *name, const char *arg)
{
	const struct opt *o = opt_by_name(name);
	int ret;

	if (o == NULL || o->id == O_HELP)
		return -ENOENT;
	if ((o->form != NULL) != (arg != NULL))
		return -EINVAL;
	ret = apply(p, o, arg, 0);
	if (ret != 0)
		bad_value("", o, arg != NULL ? arg : "", ret);
	return ret;
}

int
wn_node_parse_args(struct wn_node_conf *p, int argc, char **argv)
{
	struct option lo[RTE_DIM(opts) + 1];
	const struct opt *o;
	int c, ret;

	for (size_t i = 0; i < RTE_DIM(opts); i++)
		lo[i] = (struct option){opts[i].name,
					opts[i].form != NULL ? required_argument : no_argument,
					NULL, opts[i].id};
	lo[RTE_DIM(opts)] = (struct option){NULL, 0, NULL, 0};
	optind = 1;
	opterr = 0; /* the messages below say more */
	while ((c = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
		if (c == O_HELP) {
			wn_node_usage(argv[0]);
			exit(0);
		}
		if (c == '?' || c == ':') {
			const char *bad = argv[optind - 1];

			o = c == ':' ? opt_by_name(bad + 2) : NULL;
			if (o != NULL)
				fprintf(stderr, "warpnicd: %s needs a value: %s %s\n", bad, bad, o->form);
			else if (strncmp(bad, "--", 2) == 0 && strchr(bad, '=') == NULL)
				fprintf(stderr, "warpnicd: unknown option '%s' (warpnicd --help lists "
					"them; EAL options go before --)\n", bad);
			else
				fprintf(stderr, "warpnicd: unknown option '%s' (warpnicd --help lists "
					"them)\n", bad);
			return -EINVAL;
		}
		o = opt_by_id(c);
		ret = apply(p, o, optarg, 0);
		if (ret != 0) {
			bad_value("", o, optarg != NULL ? optarg : "", ret);
			return ret;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "warpnicd: unexpected argument '%s' (each option is --NAME [VALUE])\n",
			argv[optind]);
		return -EINVAL;
	}
	if (p->dp.n_addrs == 0) {
		fprintf(stderr, "warpnicd: give the port an address with --ip ADDR/PREFIX, e.g. "
			"--ip 198.18.0.1/24\n");
		return -EINVAL;
	}
	return 0;
}

/* EAL words the config files may give in all (their "eal" lines, nested configs included) */
#define WN_NODE_EAL_CONFIG_WORDS 256

/* Append the "eal" lines of config file @p path (and of configs it names) to @p out. */
static int
eal_from_config(const char *path, char **out, int *n, int max, int depth)
{
	char line[512];
	FILE *f;
	int ret = 0;

	if (depth > 4)
		return 0; /* parse_config() says it */
	f = fopen(path, "r");
	if (f == NULL)
		return 0; /* parse_config() says it, after the EAL */
	while (ret == 0 && fgets(line, sizeof(line), f) != NULL) {
		char *w[64];
		int k;

		line[strcspn(line, "#\r\n")] = '\0';
		k = split_words(line, w, (int)RTE_DIM(w));
		if (k < 0) {
			fprintf(stderr, "warpnicd: --config %s: an eal line with too many words\n",
				path);
			ret = -E2BIG;
		} else if (k >= 2 && strcmp(w[0], "config") == 0) {
			ret = eal_from_config(w[1], out, n, max, depth + 1);
		} else if (k >= 1 && strcmp(w[0], "eal") == 0) {
			for (int i = 1; ret == 0 && i < k; i++) {
				if (*n == max) {
					ret = -E2BIG;
					break;
				}
				out[(*n)++] = strdup(w[i]);
				if (out[*n - 1] == NULL)
					ret = -ENOMEM;
			}
		}
	}
	fclose(f);
	return ret;
}

int
wn_node_eal_args(int argc, char **argv, char ***eal_argv, bool *daemon)
{
	/* out[0] is argv[0], then at most WN_NODE_EAL_CONFIG_WORDS from the config files,
	 * then argv[1..argc): the array is sized for all three */
	int sep = argc, n = 0, max = argc + WN_NODE_EAL_CONFIG_WORDS, ret = 0;
	char **out;

	*daemon = false;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			sep = i;
			break;
		}
	out = calloc((size_t)max + 1, sizeof(*out));
	if (out == NULL)
		return -ENOMEM;
	out[n++] = argv[0];
	/* the config files' EAL options first: the command line's own come after them */
	for (int i = sep + 1; ret == 0 && i < argc; i++) {
		if (strcmp(argv[i], "--daemon") == 0)
			*daemon = true;
		else if (strcmp(argv[i], "--config") == 0 && i + 1 < argc)
			ret = eal_from_config(argv[++i], out, &n, 1 + WN_NODE_EAL_CONFIG_WORDS, 1);
		else if (strncmp(argv[i], "--config=", 9) == 0)
			ret = eal_from_config(argv[i] + 9, out, &n, 1 + WN_NODE_EAL_CONFIG_WORDS, 1);
	}
	for (int i = 1; ret == 0 && i < argc; i++)
		out[n++] = argv[i];
	if (ret != 0) {
		/* out[1..n) are the config files' own copies: none of argv is there yet */
		for (int i = 1; i < n; i++)
			free(out[i]);
		free(out);
		return ret;
	}
	out[n] = NULL;
	*eal_argv = out;
	return n;
}

void
wn_node_eal_args_free(char **eal_argv, int n, int argc)
{
	/* the config files' words are at [1, 1 + n - argc) */
	for (int i = 1; i < 1 + n - argc; i++)
		free(eal_argv[i]);
	free(eal_argv);
}
