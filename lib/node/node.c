/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A whole dataplane as warpnicd runs it (wn_node.h): the port (any ethdev; optionally
 * wrapped by a port wrapper the application gives, the fault injector), the control thread
 * serving clients on a unix socket (lib/server) and the shards (lib/dp) on the EAL lcores.
 * warpnicd's main.c runs shard 0 on the main lcore; an embedding app (warpnic-perf) keeps
 * the main lcore and runs the shards on the workers. The options and the config file are
 * node_options.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "node_priv.h"
#include "wn_dpdk_compat.h"
#include "wn_node.h"
#include "wn_port.h"

#define CTL_RING_SIZE 4096
/* Regions of a run-to-completion dataplane's own lib/mem table (no --mem-entries). */
#define RTC_MEM_ENTRIES 65536
/* STag indexes node_dma.c tracks when --max-mrs is not given (lib/server's default table) */
#define DMA_ENTRIES 65536
/* How often the link watcher looks at a port whose peer may come and go. */
#define LINK_WATCH_MS 100
/*
 * A started port whose link stays down this long is started again (its peer refused it:
 * a memif server whose port was not started yet answers "ID not found"). Long: stopping a
 * memif client while the server is still in the handshake (a loaded machine) can make
 * DPDK 22.11's server panic in its interrupt thread ("Error adding fd ... epoll_ctl").
 */
#define LINK_GRACE_MS 10000
/* Faces of the port wrapper given as EAL --vdev options. */
#define NODE_MAX_FACES 8

static volatile int quit;
static struct wn_server *ctl_srv;

struct shard_arg {
	struct wn_dp_group *g;
	uint16_t idx;
};

/* The one dataplane of the process (wn_node_start .. wn_node_stop). */
static struct {
	bool started;
	struct wn_node_conf p;
	struct wn_server *srv;
	struct wn_mem_table *mem;      /* rtc: the dataplane's own (else the server's) */
	struct wn_node_dma *dma;       /* client regions DMA-mapped for the port (node_dma.c) */
	struct rte_rcu_qsbr *qs;
	struct wn_dp_group *dp;
	struct shard_arg shard_args[DP_MAX_SHARDS];
	unsigned int shard_lcore[DP_MAX_SHARDS]; /* lcore of each shard; main: shard 0 */
	uint16_t n_shards;
	uint16_t port;
	bool port_set;
	int efd;
	bool used;                     /* started once (and stopped) */
	/* a port that reconnects only by a restart (a net_memif client): started by the link
	 * watcher whenever its peer is absent, the shards gated by link */
	struct wn_dp_link link;
	bool port_started;
	unsigned int start_wait, start_backoff; /* watcher polls until the next start */
	bool watching;
	bool netdev;                   /* --netdev made (node_netdev.c) */
	volatile int watch_quit;
	pthread_t watcher;
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
	wn_tel_dict_u64(d, "clients", st.clients);
	wn_tel_dict_u64(d, "pds", st.pds);
	wn_tel_dict_u64(d, "mrs", st.mrs);
	wn_tel_dict_u64(d, "mws", st.mws);
	wn_tel_dict_u64(d, "cqs", st.cqs);
	wn_tel_dict_u64(d, "srqs", st.srqs);
	wn_tel_dict_u64(d, "qps", st.qps);
	wn_tel_dict_u64(d, "cm_channels", st.channels);
	wn_tel_dict_u64(d, "cm_ids", st.cm_ids);
	wn_tel_dict_u64(d, "requests", st.requests);
	wn_tel_dict_u64(d, "bad_requests", st.bad_requests);
	wn_tel_dict_u64(d, "cm_events", st.cm_events);
	wn_tel_dict_u64(d, "cm_events_waited", st.cm_events_waited);
	wn_tel_dict_u64(d, "cm_events_dropped", st.cm_events_dropped);
	wn_tel_dict_u64(d, "cm_queue_max", st.cm_queue_max);
	wn_tel_dict_u64(d, "mr_sigbus", st.mr_sigbus);
	return 0;
}

void
wn_node_quit(void)
{
	quit = 1;
}

bool
wn_node_running(void)
{
	return app.started && !quit;
}

/* @return true when @p port is a face of the application's port wrapper. */
static bool
is_face(const struct wn_node_conf *p, uint16_t port)
{
	return p->wrap != NULL && p->wrap->under(port) >= 0;
}

/* The port whose device reads the frames: under a wrapper's face, the port it wraps. */
static uint16_t
port_under(const struct wn_node_conf *p, uint16_t port)
{
	int under = p->wrap != NULL ? p->wrap->under(port) : -1;

	return under >= 0 ? (uint16_t)under : port;
}

static int
pick_port(const struct wn_node_conf *p, const uint16_t *pending, int nb_pending, uint16_t nq,
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
		*port = pending[0]; /* EAL --vdev of the wrapper, e.g. net_wn_impair0: its face */
	} else {
		RTE_ETH_FOREACH_DEV(pid)
			break;
		if (pid >= RTE_MAX_ETHPORTS)
			return -ENODEV;
		*port = pid;
	}
	if (p->impair == NULL)
		return 0;
	if (p->wrap == NULL)
		return -ENOTSUP;
	if (rte_eth_dev_get_name_by_port(*port, name) != 0)
		return -ENODEV;
	/* the face needs a queue per dataplane lcore */
	if ((size_t)snprintf(args, sizeof(args), "port=%s,queues=%u,%s", name, nq, p->impair) >=
	    sizeof(args))
		return -E2BIG;
	face = p->wrap->create("net_wn_impair_dp", args, p->dp.pool);
	if (face < 0)
		return face;
	*port = (uint16_t)face;
	return 0;
}

/*
 * A memif port: its PMD unmaps a departing peer's rings in the interrupt thread; fence that
 * (node_fence.c) so that no shard is inside them then.
 */
static void
fence_port(uint16_t port)
{
	static const char *const memif[] = { "net_memif" };
	int ret;

	if (!wn_port_driver_is(port, memif, 1))
		return;
	ret = wn_node_fence_install();
	if (ret == 0)
		app.p.dp.unmap_fences = wn_node_fence_count();
	else
		NODE_LOG(WARNING, "port %u: no unmap fence for net_memif (%s): a peer that leaves "
			 "while a shard reads its rings can crash this process\n", port,
			 ret == -ENOENT ? "the PMD is not a loaded plugin" : strerror(-ret));
}

/* Start the port, unless backing off; a refusal (its peer absent) leaves the link down. */
static void
link_try_start(void)
{
	int ret;

	if (app.start_wait > 0) {
		app.start_wait--;
		return;
	}
	ret = wn_net_port_start(app.port);
	if (ret == 0) {
		app.port_started = true;
		app.start_backoff = 0;
		return;
	}
	/* the PMD logs every refusal: try again after 1, 2, 4 .. 16 watcher polls */
	app.start_wait = app.start_backoff;
	app.start_backoff = app.start_backoff == 0 ? 1 : RTE_MIN(app.start_backoff * 2, 16u);
	if (app.link.starts_failed++ == 0)
		rte_log(RTE_LOG_NOTICE, wn_node_logtype,
			"warpnicd: port %u: link down (%s), waiting for its peer\n", app.port,
			strerror(-ret));
}

/*
 * The link watcher: a net_memif client connects when it is started and not again once its
 * server went away. While the link is down the shards leave the port alone (wn_dp_conf.link);
 * the watcher starts it until the peer is there, opens the gate once the link is up, and
 * when the link goes down closes the gate, waits until every shard passed a quiescent state,
 * and stops the port to start it again.
 */
static void *
link_watch(void *arg)
{
	struct rte_eth_link l;
	const struct timespec ts = { 0, LINK_WATCH_MS * 1000000L };
	unsigned int waited = 0;

	(void)arg;
	while (!app.watch_quit) {
		if (!app.port_started)
			link_try_start();
		memset(&l, 0, sizeof(l));
		if (app.port_started && rte_eth_link_get_nowait(app.port, &l) != 0)
			l.link_status = RTE_ETH_LINK_DOWN;
		if (__atomic_load_n(&app.link.up, __ATOMIC_ACQUIRE) == 0) {
			if (l.link_status == RTE_ETH_LINK_UP) {
				waited = 0;
				app.link.ups++;
				__atomic_store_n(&app.link.up, 1, __ATOMIC_RELEASE);
				rte_log(RTE_LOG_NOTICE, wn_node_logtype, "warpnicd: port %u: link up\n",
					app.port);
			} else if (app.port_started && ++waited >= LINK_GRACE_MS / LINK_WATCH_MS) {
				/* connected to a peer that was not ready (memif: "ID not found") and
				 * dropped: the shards are outside the gate, start it again */
				waited = 0;
				rte_log(RTE_LOG_NOTICE, wn_node_logtype,
					"warpnicd: port %u: no link %u s after the start, again\n",
					app.port, LINK_GRACE_MS / 1000);
				(void)rte_eth_dev_stop(app.port);
				app.port_started = false;
				app.link.restarts++;
			}
		} else if (l.link_status != RTE_ETH_LINK_UP) {
			__atomic_store_n(&app.link.up, 0, __ATOMIC_RELEASE);
			app.link.downs++;
			rte_log(RTE_LOG_NOTICE, wn_node_logtype,
				"warpnicd: port %u: link down, restarting the port\n", app.port);
			/* no shard is inside the port any more (offline shards count as passed) */
			rte_rcu_qsbr_synchronize(app.qs, RTE_QSBR_THRID_INVALID);
			(void)rte_eth_dev_stop(app.port);
			app.port_started = false;
			app.link.restarts++;
			link_try_start();
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Everything start() created, in reverse; the ports stay for wn_net_port_shutdown(). */
static void
teardown(void)
{
	struct wn_node_conf *p = &app.p;

	if (app.netdev)
		wn_node_netdev_down(p->netdev);
	if (app.watching) {
		app.watch_quit = 1;
		pthread_join(app.watcher, NULL);
	}
	if (app.srv != NULL) {
		wn_server_stop(app.srv);
		/* clients still connected are closed below, after the bells are unmapped */
		wn_server_dp_detach(app.srv);
	}
	ctl_srv = NULL;
	wn_dp_free(app.dp);
	/* the NIC may still hold frames that point into regions: their DMA mappings stay
	 * until the port closes (wn_net_port_shutdown) */
	wn_node_dma_closing(app.dma);
	wn_server_destroy(app.srv);
	wn_node_dma_free(app.dma);
	wn_mem_table_free(app.mem);
	wn_net_pcap_close(p->dp.pcap);
	if (app.efd >= 0)
		close(app.efd);
	rte_ring_free(p->dp.to_dp);
	rte_ring_free(p->dp.to_ctl);
	wn_node_fence_set(NULL);
	rte_free(app.qs);
	if (app.port_set && rte_eth_dev_is_valid_port(app.port) && is_face(p, app.port))
		p->wrap->destroy(app.port);
	/* the mbuf pool stays: the port's queues hold its mbufs until wn_net_port_shutdown() */
	wn_node_conf_free(p);
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

/* Copy @p conf into app.p; the copy owns its strings. @return 0, -EINVAL, -ENOTSUP, -ENOMEM. */
static int
conf_take(const struct wn_node_conf *conf)
{
	struct wn_node_conf *p = &app.p;
	unsigned int lcores;

	if (conf->dp.n_addrs == 0) {
		fprintf(stderr, "warpnicd: give the port an address with --ip ADDR/PREFIX\n");
		return -EINVAL;
	}
	/* the embedded dataplane needs lcores of its own: the main one is the caller's; run to
	 * completion: the caller runs every shard, one per lcore */
	lcores = conf->main_shard || conf->rtc ? rte_lcore_count() : rte_lcore_count() - 1;
	if (lcores == 0) {
		fprintf(stderr, "warpnicd: an embedded dataplane needs a worker lcore (EAL -l)\n");
		return -ENOTSUP;
	}
	/* one shard (port queue) per dataplane lcore */
	app.n_shards = (uint16_t)RTE_MIN(lcores, (unsigned int)DP_MAX_SHARDS);
	*p = *conf;
	p->pcap = conf->pcap != NULL ? strdup(conf->pcap) : NULL;
	p->impair = conf->impair != NULL ? strdup(conf->impair) : NULL;
	p->netdev = conf->netdev != NULL ? strdup(conf->netdev) : NULL;
	p->pidfile = conf->pidfile != NULL ? strdup(conf->pidfile) : NULL;
	/* the socket's group: as rdma-core's udev rules give /dev/infiniband, where it exists */
	if (conf->ctl.sock_group == NULL && getgrnam("rdma") != NULL)
		p->ctl.sock_group = strdup("rdma");
	else if (conf->ctl.sock_group != NULL)
		p->ctl.sock_group = strdup(conf->ctl.sock_group);
	p->ctl.path = p->ctl_path;
	p->ctl.dev_name = p->dev_name;
	p->dp.pool = NULL;
	p->dp.pcap = NULL;
	p->dp.to_dp = NULL;
	p->dp.to_ctl = NULL;
	/* a wrapper's face moves frames when polled */
	p->dp.port_poll = p->wrap != NULL ? p->wrap->poll_all : NULL;
	if ((conf->pcap != NULL && p->pcap == NULL) || (conf->impair != NULL && p->impair == NULL) ||
	    (conf->netdev != NULL && p->netdev == NULL) ||
	    (conf->pidfile != NULL && p->pidfile == NULL))
		return -ENOMEM;
	return 0;
}

/*
 * The control socket is free: no process serves it (a live one is never taken over). Said
 * before the port comes up, which can take a while; lib/server refuses it again at bind().
 */
static int
ctl_free(const struct wn_node_conf *p)
{
	pid_t owner = wn_server_sock_owner(p->ctl_path);

	if (owner > 0) {
		fprintf(stderr, "warpnicd: --ctl %s: another process serves it (pid %d%s): stop it, "
			"or give this warpnicd another --ctl\n", p->ctl_path, (int)owner,
			owner == getpid() ? ", this one" : "");
		return -EADDRINUSE;
	}
	if (owner == -ENOTSOCK) {
		fprintf(stderr, "warpnicd: --ctl %s: the file exists and is not a socket\n",
			p->ctl_path);
		return owner;
	}
	return 0;
}

/* --netdev: the kernel interface that carries the port's addresses (node_netdev.c). */
static int
netdev_up(const struct wn_node_conf *p)
{
	struct wn_node_netdev_addr a[WN_NETIF_MAX_ADDRS];
	int owner, ret;

	for (unsigned int i = 0; i < p->dp.n_addrs; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		a[i].prefix = p->dp.prefix[i];
		if (p->dp.addrs[i].family == WN_AF_INET) {
			a[i].family = AF_INET;
			memcpy(a[i].addr, &p->dp.addrs[i].v4, 4);
		} else {
			a[i].family = AF_INET6;
			memcpy(a[i].addr, p->dp.addrs[i].v6, 16);
		}
	}
	ret = wn_node_netdev_up(p->netdev, a, p->dp.n_addrs, &owner);
	if (ret == -EBUSY)
		fprintf(stderr, "warpnicd: --netdev %s: warpnicd pid %d has it; give this one "
			"another name\n", p->netdev, owner);
	else if (ret == -EEXIST)
		fprintf(stderr, "warpnicd: --netdev %s: the host has an interface of that name that "
			"is not warpnicd's; give another name\n", p->netdev);
	else if (ret == -EPERM)
		fprintf(stderr, "warpnicd: --netdev %s: not allowed to make interfaces (needs "
			"CAP_NET_ADMIN: run as root, or without --netdev)\n", p->netdev);
	else if (ret != 0)
		fprintf(stderr, "warpnicd: --netdev %s: %s\n", p->netdev, strerror(-ret));
	if (ret == 0)
		app.netdev = true;
	return ret;
}

/* Say why pick_port() found no port (@p err), with the ports there are. */
static void
port_missing(const struct wn_node_conf *p, int err)
{
	char name[RTE_ETH_NAME_MAX_LEN], list[256] = "";
	unsigned int n = 0;
	size_t len = 0;
	uint16_t pid;

	RTE_ETH_FOREACH_DEV(pid) {
		if (rte_eth_dev_get_name_by_port(pid, name) != 0)
			continue;
		n++;
		if (len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%u %s",
						len > 0 ? ", " : "", pid, name);
	}
	if (p->port >= 0 && !rte_eth_dev_is_valid_port((uint16_t)p->port))
		fprintf(stderr, "warpnicd: --port %d: no such port (the EAL options made %u%s%s)\n",
			p->port, n, n > 0 ? ": " : "", list);
	else if (n == 0)
		fprintf(stderr, "warpnicd: no port: the EAL options made none; give one before "
			"--, e.g. -a 0000:03:00.0 (a NIC bound to vfio-pci), --vdev "
			"net_af_packet0,iface=eth1, or --vdev net_null0,no-rx=1 (this host only)\n");
	else if (p->impair != NULL)
		fprintf(stderr, "warpnicd: --impair %s: %s\n", p->impair, strerror(-err));
	else
		fprintf(stderr, "warpnicd: port: %s\n", strerror(-err));
}

/* The mbuf pool, the port (or the fault injector's face over it), --pcap. @return 0/-errno. */
static int
port_up(void)
{
	uint16_t pending[NODE_MAX_FACES];
	struct wn_node_conf *p = &app.p;
	struct rte_ether_addr mac;
	struct wn_port_conf pc;
	uint32_t room = RTE_MBUF_DEFAULT_BUF_SIZE;
	int ret, nb_pending;

	if (p->dp.mtu + 18u + RTE_PKTMBUF_HEADROOM > room)
		room = p->dp.mtu + 18u + RTE_PKTMBUF_HEADROOM;
	p->dp.pool = rte_pktmbuf_pool_create("warpnicd", p->mbufs, 256, 0, (uint16_t)room,
					     (int)rte_socket_id());
	if (p->dp.pool == NULL) {
		fprintf(stderr, "warpnicd: mbuf pool: %s\n", rte_strerror(rte_errno));
		return -rte_errno;
	}
	nb_pending = p->wrap != NULL ?
		     p->wrap->create_pending(p->dp.pool, pending, RTE_DIM(pending)) : 0;
	if (nb_pending < 0) {
		fprintf(stderr, "warpnicd: port wrapper: %s\n", strerror(-nb_pending));
		return nb_pending;
	}
	ret = pick_port(p, pending, nb_pending, app.n_shards, &app.port);
	if (ret < 0) {
		port_missing(p, ret);
		return ret;
	}
	app.port_set = true;
	memset(&pc, 0, sizeof(pc));
	pc.port_id = app.port;
	pc.nb_queues = app.n_shards;
	pc.mtu = p->dp.mtu;
	pc.offload = p->offload;
	pc.set_mtu = !is_face(p, app.port);
	pc.multi_segs = p->dp.zero_copy_tx;
	pc.rx_intr = true; /* idle lcores sleep on them (--idle sleep) */
	pc.pool = p->dp.pool;
	ret = wn_net_port_configure(&pc, &p->dp.tx_offload_capa, &p->dp.rx_offload_capa);
	if (ret == 0)
		fence_port(port_under(p, app.port));
	if (ret == 0 && wn_net_port_reconnects_by_restart(app.port)) {
		/* like a NIC without a cable: up with the link down when the peer is absent */
		p->dp.link = &app.link;
		link_try_start();
	} else if (ret == 0) {
		ret = wn_net_port_start(app.port);
	}
	if (ret < 0) {
		fprintf(stderr, "warpnicd: port %u set-up: %s\n", app.port, strerror(-ret));
		return ret;
	}
	p->dp.port_id = app.port;
	/* a NIC reads frames by DMA: zero-copy only from regions mapped for it */
	app.dma = wn_node_dma_create(app.port, port_under(p, app.port),
				     p->ctl.mem_entries != 0 ? p->ctl.mem_entries : DMA_ENTRIES,
				     p->dp.zero_copy_tx);
	if (app.dma == NULL)
		return -ENOMEM;
	p->dp.dma = wn_node_dma_map(app.dma);
	if (rte_eth_macaddr_get(app.port, &mac) == 0)
		memcpy(p->ctl.mac, mac.addr_bytes, 6);
	if (p->pcap != NULL) {
		p->dp.pcap = wn_net_pcap_open(p->pcap, p->dp.mtu + 64u, "warpnicd");
		if (p->dp.pcap == NULL) {
			fprintf(stderr, "warpnicd: --pcap %s: %s\n", p->pcap, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/* The rings and eventfd between the control thread and the shards, QSBR, the server. */
static int
server_up(void)
{
	struct wn_node_conf *p = &app.p;
	size_t qsz = rte_rcu_qsbr_get_memsize(app.n_shards);

	p->dp.to_dp = rte_ring_create("wn_to_dp", CTL_RING_SIZE, SOCKET_ID_ANY,
				      RING_F_SP_ENQ | RING_F_SC_DEQ);
	/* every lcore posts CM events and DONEs: multi-producer */
	p->dp.to_ctl = rte_ring_create("wn_to_ctl", CTL_RING_SIZE, SOCKET_ID_ANY, RING_F_SC_DEQ);
	app.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	app.qs = rte_zmalloc("wn_mem_qs", qsz, RTE_CACHE_LINE_SIZE);
	if (p->dp.to_dp == NULL || p->dp.to_ctl == NULL || app.efd < 0 || app.qs == NULL ||
	    rte_rcu_qsbr_init(app.qs, app.n_shards) != 0) {
		fprintf(stderr, "warpnicd: control rings: %s\n", rte_strerror(rte_errno));
		return -ENOMEM;
	}
	p->ctl.mem_qs = app.qs;
	/* a QP per TCP connection the lcores can hold (ibv_devinfo's max_qp) */
	p->ctl.max_qp = p->dp.max_conns * app.n_shards;
	if (wn_node_dma_needed(app.dma)) { /* mapped, or listed as copied with the reason */
		p->ctl.mr_map = wn_node_dma_mr_map;
		p->ctl.mr_unmap = wn_node_dma_mr_unmap;
		p->ctl.mr_move = wn_node_dma_mr_move;
		p->ctl.mr_map_arg = app.dma;
	}
	app.srv = wn_server_create(&p->ctl);
	if (app.srv == NULL) {
		int err = errno;

		if (err == EADDRINUSE) /* it came up since ctl_free() looked */
			(void)ctl_free(p);
		else
			fprintf(stderr, "warpnicd: --ctl %s: %s\n", p->ctl_path, strerror(err));
		return -err;
	}
	p->dp.ctl_efd = app.efd;
	p->dp.mem = wn_server_mem(app.srv);
	p->dp.qs = app.qs;
	return 0;
}

/* Run to completion: no control thread, QSBR for lib/mem's grace periods, its own table. */
static int
mem_up(void)
{
	struct wn_node_conf *p = &app.p;
	size_t qsz = rte_rcu_qsbr_get_memsize(app.n_shards);

	app.qs = rte_zmalloc("wn_mem_qs", qsz, RTE_CACHE_LINE_SIZE);
	if (app.qs == NULL || rte_rcu_qsbr_init(app.qs, app.n_shards) != 0)
		return -ENOMEM;
	app.mem = wn_mem_table_create(p->ctl.mem_entries != 0 ? p->ctl.mem_entries : RTC_MEM_ENTRIES,
				      app.qs);
	if (app.mem == NULL)
		return -errno;
	p->dp.to_dp = NULL;
	p->dp.to_ctl = NULL;
	p->dp.ctl_efd = -1;
	p->dp.mem = app.mem;
	p->dp.qs = app.qs;
	return 0;
}

/* The shards, then the control thread attached to them, telemetry. */
static int
dataplane_up(void)
{
	struct wn_node_conf *p = &app.p;
	int efds[DP_MAX_SHARDS], page_fd;
	struct wn_queue_bell *page;
	uint32_t n;
	int ret;

	app.dp = wn_dp_create(&p->dp, app.n_shards);
	if (app.dp == NULL) {
		fprintf(stderr, "warpnicd: dataplane: %s\n", strerror(errno));
		return -errno;
	}
	n = wn_dp_bells(app.dp, &page_fd, &page, efds);
	if (app.srv != NULL &&
	    (wn_server_dp_attach(app.srv, p->dp.to_dp, p->dp.to_ctl, app.efd) != 0 ||
	     wn_server_dp_bells(app.srv, page_fd, page, efds, n) != 0 ||
	     wn_server_start(app.srv) != 0)) {
		fprintf(stderr, "warpnicd: control thread failed to start\n");
		return -EIO;
	}
	if (p->dp.link != NULL) {
		ret = wn_ctrl_thread_create(&app.watcher, "wn-link", link_watch, NULL);
		if (ret != 0) {
			fprintf(stderr, "warpnicd: link watcher: %s\n", strerror(-ret));
			return ret;
		}
		app.watching = true;
	}
	ctl_srv = app.srv;
	if (app.srv != NULL)
		rte_telemetry_register_cmd("/warpnic/ctl", tel_ctl,
					   "Control thread object counts and CM event delivery. "
					   "Takes no parameters");
	wn_dp_telemetry_register(app.dp);
	wn_node_dma_telemetry_register();
	return 0;
}

int
wn_node_start(const struct wn_node_conf *conf)
{
	int ret;

	/* once per process: the mbuf pool stays for the port, telemetry cannot unregister */
	if (app.started || app.used)
		return -EALREADY;
	/* quit stays as it is: a SIGTERM during start-up still stops warpnicd */
	ret = conf_take(conf);
	if (ret == 0 && !app.p.rtc)
		ret = ctl_free(&app.p);
	if (ret == 0)
		ret = port_up();
	if (ret == 0)
		ret = app.p.rtc ? mem_up() : server_up();
	if (ret == 0)
		ret = dataplane_up();
	if (ret == 0 && app.p.netdev != NULL && !app.p.rtc)
		ret = netdev_up(&app.p);
	if (ret != 0) {
		teardown();
		return ret;
	}
	for (unsigned int i = 0; i < RTE_DIM(app.shard_lcore); i++)
		app.shard_lcore[i] = RTE_MAX_LCORE;
	app.started = true;
	wn_node_fence_set(app.qs); /* the shards register with it as they start */
	if (app.p.rtc) {
		rte_log(RTE_LOG_NOTICE, wn_node_logtype,
			"warpnicd: run to completion on port %u, %u shard(s)\n", app.port,
			app.n_shards);
		return 0; /* the application runs the shards */
	}
	rte_log(RTE_LOG_NOTICE, wn_node_logtype,
		"warpnicd: serving %s on %s, port %u, %u dataplane lcore(s)\n", app.p.dev_name,
		app.p.ctl_path, app.port, app.n_shards);
	fflush(stdout);
	(void)launch_workers();
	return 0;
}

struct wn_dp *
wn_node_shard(uint16_t idx)
{
	return app.started ? wn_dp_shard(app.dp, idx) : NULL;
}

uint16_t
wn_node_shards(void)
{
	return app.started ? app.n_shards : 0;
}

int
wn_node_run_main(void)
{
	if (!app.started || !app.p.main_shard)
		return -EINVAL;
	app.shard_args[0].g = app.dp;
	app.shard_args[0].idx = 0;
	return shard_main(&app.shard_args[0]);
}

int
wn_node_wait_idle(unsigned int timeout_ms)
{
	/* the snapshot is refreshed every 100 ms; trust only one begun after the call */
	uint64_t t0 = wn_net_now_us(), since = t0 + 200 * 1000;
	uint64_t end = t0 + (uint64_t)timeout_ms * 1000;

	if (!app.started)
		return 0;
	while (wn_node_running() && wn_net_now_us() < end) {
		if (wn_dp_busy_conns(app.dp, since) == 0)
			return 0;
		rte_delay_us_sleep(20 * 1000);
	}
	return wn_node_running() ? -ETIMEDOUT : 0;
}

int
wn_node_stop(void)
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
