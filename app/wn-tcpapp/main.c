/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-tcpapp: EAL, port and stack set-up, and the run-to-completion loop
 *   rx_burst → net → tcp → mode → tcp tx → net output → tx_burst
 * on the main lcore.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>

#include "wn_impair.h"
#include "wn_port.h"
#include "tcpapp.h"

#define NB_DESC 1024
#define LINGER_US 200000 /* keep the stack running after the mode finished: final ACKs */
#define IDLE_CLOCK_LOOPS 8 /* empty loop iterations per clock read (well below 1 us) */

static volatile sig_atomic_t quit;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static int
pick_port(struct tcpapp *app, const uint16_t *pending, int nb_pending)
{
	uint16_t pid;

	if (app->p.port >= 0) {
		if (!rte_eth_dev_is_valid_port((uint16_t)app->p.port))
			return -ENODEV;
		app->port_id = (uint16_t)app->p.port;
		return 0;
	}
	if (nb_pending > 0) {
		app->port_id = pending[0];
		return 0;
	}
	RTE_ETH_FOREACH_DEV(pid) {
		app->port_id = pid;
		return 0;
	}
	return -ENODEV;
}

static int
wrap_port(struct tcpapp *app)
{
	char name[RTE_ETH_NAME_MAX_LEN], args[1024];
	int face;

	if (app->p.impair == NULL)
		return 0;
	if (rte_eth_dev_get_name_by_port(app->port_id, name) != 0)
		return -ENODEV;
	if ((size_t)snprintf(args, sizeof(args), "port=%s,%s", name, app->p.impair) >= sizeof(args))
		return -E2BIG;
	face = wn_impair_create("net_wn_impair_app", args, app->pool);
	if (face < 0)
		return face;
	app->port_id = (uint16_t)face;
	return 0;
}

static int
port_setup(struct tcpapp *app, uint64_t *tx_capa, uint64_t *rx_capa)
{
	struct wn_port_conf pc = {
		.port_id = app->port_id,
		.nb_desc = NB_DESC,
		.mtu = app->p.mtu,
		.offload = app->p.offload,
		.set_mtu = !wn_impair_is_face(app->port_id),
		.pool = app->pool,
	};

	return wn_net_port_setup(&pc, tx_capa, rx_capa);
}

static int
stack_setup(struct tcpapp *app, uint64_t tx_capa, uint64_t rx_capa, uint64_t now)
{
	struct wn_netif_conf nc;
	struct wn_tcp_ctx_conf tc;
	unsigned int i;
	int ret;

	memset(&nc, 0, sizeof(nc));
	nc.port_id = app->port_id;
	nc.socket_id = SOCKET_ID_ANY;
	nc.mtu = app->p.mtu;
	nc.pool = app->pool;
	nc.tx_offload_capa = tx_capa;
	nc.rx_offload_capa = rx_capa;
	nc.neigh_entries = 1024;
	nc.cksum = app->p.cksum;
	rte_eth_macaddr_get(app->port_id, &nc.mac);
	app->nif = wn_net_if_create(&nc);
	if (app->nif == NULL)
		return -errno;
	for (i = 0; i < app->p.nb_addr; i++) {
		ret = wn_net_if_addr_add(app->nif, &app->p.addr[i], app->p.prefix[i]);
		if (ret < 0)
			return ret;
	}
	if (app->p.has_gw) {
		ret = wn_net_if_gateway_set(app->nif, &app->p.gw);
		if (ret < 0)
			return ret;
	}
	memset(&tc, 0, sizeof(tc));
	tc.socket_id = SOCKET_ID_ANY;
	tc.pool = app->pool;
	tc.max_conns = app->p.max_conns;
	tc.sndbuf = app->p.bufsize;
	tc.rcvbuf = app->p.bufsize;
	tc.mtu = app->p.mtu;
	tc.rto_min_us = app->p.rto_min_us;
	app->tcp = wn_tcp_ctx_create(&tc);
	if (app->tcp == NULL)
		return -errno;
	app->nb_slots = app->p.mode == &tcpapp_mode_source ? app->p.conns : app->p.max_conns;
	app->conns = calloc(app->nb_slots, sizeof(*app->conns));
	if (app->conns == NULL)
		return -ENOMEM;
	return wn_net_start(app->nif, now);
}

static int
pcap_setup(struct tcpapp *app)
{
	if (app->p.pcap == NULL)
		return 0;
	app->pcap =
		wn_net_pcap_open(app->p.pcap, (app->p.mtu ? app->p.mtu : 1500) + 64u, "wn-tcpapp");
	return app->pcap != NULL ? 0 : -errno;
}

static void
capture(struct tcpapp *app, struct rte_mbuf **pkts, uint16_t n, enum rte_pcapng_direction dir)
{
	wn_net_pcap_capture(app->pcap, app->port_id, 0, pkts, n, dir);
}

static void
port_tx(struct tcpapp *app, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent = 0, i;
	unsigned int tries;

	capture(app, pkts, n, RTE_PCAPNG_DIRECTION_OUT);
	for (tries = 0; sent < n && tries < 1000; tries++) {
		sent += rte_eth_tx_burst(app->port_id, 0, pkts + sent, n - sent);
		if (sent < n)
			wn_impair_poll_all(); /* a face's tx ring drains only when polled */
	}
	app->tx_pkts += sent;
	for (i = sent; i < n; i++) {
		rte_pktmbuf_free(pkts[i]);
		app->tx_drop++;
	}
}

static int
run(struct tcpapp *app)
{
	const struct tcpapp_mode *mode = app->p.mode;
	struct rte_mbuf *pkts[TCPAPP_BURST];
	uint64_t now = wn_net_now_us(), start = now, done_at = 0;
	unsigned int idle = 0;
	uint16_t n;

	while (!quit) {
		/* reading the clock costs ~100 cycles on a VM (rdtsc): TCP reads it once per
		 * iteration that received something, once per IDLE_CLOCK_LOOPS empty ones (the
		 * raw baselines every iteration, as before) */
		if (!mode->uses_tcp || idle++ % IDLE_CLOCK_LOOPS == 0)
			now = wn_net_now_us();
		wn_impair_poll_all();
		if (!mode->uses_tcp) {
			if (mode->poll(app, now))
				break;
		} else {
			n = rte_eth_rx_burst(app->port_id, 0, pkts, TCPAPP_BURST);
			if (n > 0) {
				if (idle > 1) /* the clock was not read this iteration */
					now = wn_net_now_us();
				idle = 0;
				app->rx_pkts += n;
				capture(app, pkts, n, RTE_PCAPNG_DIRECTION_IN);
				n = wn_net_rx_bulk(app->nif, pkts, n, now);
				if (n > 0)
					wn_tcp_rx_bulk(app->tcp, pkts, n, now);
			}
			if (done_at == 0 && mode->poll(app, now))
				done_at = now;
			wn_tcp_process(app->tcp, now);
			while ((n = wn_tcp_tx_bulk(app->tcp, pkts, TCPAPP_BURST)) > 0)
				wn_net_output_bulk(app->nif, pkts, n, now);
			wn_net_process(app->nif, now);
			while ((n = wn_net_tx_bulk(app->nif, pkts, TCPAPP_BURST)) > 0)
				port_tx(app, pkts, n);
			if (done_at != 0 && now - done_at > LINGER_US)
				break;
		}
		if (app->p.timeout > 0 && (now - start) / 1e6 > app->p.timeout) {
			fprintf(stderr, "wn-tcpapp: timeout after %.1f s\n", app->p.timeout);
			break;
		}
	}
	return mode->report(app);
}

/*
 * --park: the port is no longer polled but stays open until a signal (or --timeout). DPDK
 * 22.11's memif PMD unmaps the shared rings in the EAL interrupt thread when the peer
 * disconnects (memif_disconnect → memif_free_regions), racing an rx/tx burst on the
 * lcore; a script parks both ends before it lets either close.
 */
static void
park(const struct tcpapp *app)
{
	uint64_t start = wn_net_now_us();

	printf("parked\n");
	fflush(stdout);
	while (!quit && (app->p.timeout == 0 || (wn_net_now_us() - start) / 1e6 < app->p.timeout))
		usleep(10000);
}

int
main(int argc, char **argv)
{
	struct tcpapp app;
	uint16_t pending[WN_IMPAIR_MAX_PENDING];
	uint64_t tx_capa = 0, rx_capa = 0;
	int nb_pending, ret, i, status;
	uint32_t room;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			tcpapp_usage(argv[0]);
			return 0;
		}
	}
	memset(&app, 0, sizeof(app));
	app.magic = TCPAPP_MAGIC_APP;
	argc = wn_impair_argv_extract(argc, argv);
	if (argc < 0)
		rte_exit(2, "too many --vdev net_wn_impair\n");
	ret = rte_eal_init(argc, argv);
	if (ret < 0)
		rte_exit(2, "EAL init failed: %s\n", rte_strerror(rte_errno));
	ret = tcpapp_params_parse(&app.p, argc - ret, argv + ret);
	if (ret == 1) {
		tcpapp_usage(argv[0]);
		rte_eal_cleanup();
		return 0;
	}
	if (ret < 0) {
		rte_eal_cleanup();
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	room = RTE_MBUF_DEFAULT_BUF_SIZE;
	if (app.p.mtu + 18u + RTE_PKTMBUF_HEADROOM > room)
		room = app.p.mtu + 18u + RTE_PKTMBUF_HEADROOM;
	app.pool = rte_pktmbuf_pool_create("tcpapp", app.p.mbufs, 256, 0, (uint16_t)room,
					   (int)rte_socket_id());
	if (app.pool == NULL)
		rte_exit(1, "mbuf pool: %s\n", rte_strerror(rte_errno));
	app.buf = malloc(TCPAPP_CHUNK);
	if (app.buf == NULL)
		rte_exit(1, "out of memory\n");
	nb_pending = wn_impair_create_pending(app.pool, pending, RTE_DIM(pending));
	if (nb_pending < 0)
		rte_exit(1, "net_wn_impair: %s\n", strerror(-nb_pending));
	ret = pick_port(&app, pending, nb_pending);
	if (ret < 0)
		rte_exit(1, "no port (give one with --vdev, e.g. net_tap0 or net_memif0)\n");
	ret = wrap_port(&app);
	if (ret < 0)
		rte_exit(1, "--impair: %s\n", strerror(-ret));
	ret = port_setup(&app, &tx_capa, &rx_capa);
	if (ret < 0)
		rte_exit(1, "port %u set-up: %s\n", app.port_id, strerror(-ret));
	ret = pcap_setup(&app);
	if (ret < 0)
		rte_exit(1, "--pcap %s: %s\n", app.p.pcap, strerror(-ret));
	if (app.p.mode->uses_tcp) {
		ret = stack_setup(&app, tx_capa, rx_capa, wn_net_now_us());
		if (ret < 0)
			rte_exit(1, "stack set-up: %s\n", strerror(-ret));
	}
	ret = app.p.mode->start(&app, wn_net_now_us());
	if (ret < 0)
		rte_exit(1, "%s: start: %s\n", app.p.mode->name, strerror(-ret));

	status = run(&app);

	if (wn_impair_is_face(app.port_id)) {
		struct wn_impair_stats rx, tx;

		wn_impair_stats_get(app.port_id, &rx, &tx);
		printf("impair: rx in %" PRIu64 " drop %" PRIu64 " dup %" PRIu64 " reorder %" PRIu64
		       " corrupt %" PRIu64 "; tx in %" PRIu64 " drop %" PRIu64 " dup %" PRIu64
		       " reorder %" PRIu64 " corrupt %" PRIu64 "\n",
		       rx.in, rx.drop, rx.dup, rx.reorder, rx.corrupt, tx.in, tx.drop, tx.dup,
		       tx.reorder, tx.corrupt);
		fflush(stdout);
	}
	if (app.p.park && !quit)
		park(&app);
	wn_net_pcap_close(app.pcap);
	for (i = 0; i < (int)app.nb_slots; i++)
		if (app.conns[i].sha != NULL)
			EVP_MD_CTX_free(app.conns[i].sha);
	wn_tcp_ctx_free(app.tcp);
	wn_net_if_free(app.nif);
	free(app.conns);
	free(app.buf);
	if (wn_impair_is_face(app.port_id))
		wn_impair_destroy(app.port_id);
	wn_net_port_shutdown();
	return status;
}
