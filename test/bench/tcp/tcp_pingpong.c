/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-tcp-pingpong: TCP ping-pong latency for tcp_bench.sh. One side echoes, the other sends
 * --size octets, waits for all of them to come back, and times that round trip --count
 * times (after --warmup untimed ones).
 *
 *   EAL... -- --server --ip A/P --port N              warpnic echo server on the EAL port
 *   EAL... -- --client --ip A/P --connect B:N [--size S] [--count N] [--warmup W]
 *   --linux [--size S] [--count N] [--warmup W]       kernel TCP over 127.0.0.1 (no EAL):
 *                                                     an echo thread and the client
 * The client prints "pingpong: path P size S count N p50_us X p99_us Y mean_us Z" and
 * exits 0; any error (connection refused or reset, echo mismatch, --timeout) exits 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "wn_net.h"
#include "wn_port.h"
#include "wn_tcp.h"

#define BURST 32
#define MAX_SIZE 65536

static struct {
	bool server, client, linux_tcp;
	struct wn_ip_addr ip, peer;
	uint8_t prefix;
	uint16_t port;
	uint32_t size, count, warmup;
	double timeout;
} opt = { .port = 5001, .size = 64, .count = 10000, .warmup = 1000, .timeout = 60 };

static volatile sig_atomic_t quit;
static uint8_t out[MAX_SIZE], in[MAX_SIZE];
static uint32_t got;       /* client: echoed octets of the current round trip */
static int failed;
static bool established, closed;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
report(const char *path, double *us, uint32_t n)
{
	double sum = 0;

	for (uint32_t i = 0; i < n; i++)
		sum += us[i];
	qsort(us, n, sizeof(*us), cmp_double);
	printf("pingpong: path %s size %u count %u p50_us %.2f p99_us %.2f mean_us %.2f\n", path,
	       opt.size, n, us[n / 2], us[(uint64_t)n * 99 / 100], sum / n);
	fflush(stdout);
}

/* ---- kernel TCP over loopback ---- */

static int
full_io(int fd, uint8_t *buf, uint32_t len, bool wr)
{
	uint32_t done = 0;

	while (done < len) {
		ssize_t r = wr ? send(fd, buf + done, len - done, 0) :
			recv(fd, buf + done, len - done, 0);

		if (r <= 0)
			return -1;
		done += (uint32_t)r;
	}
	return 0;
}

static void *
linux_echo(void *arg)
{
	int ls = *(int *)arg, fd, one = 1;
	static uint8_t buf[MAX_SIZE];
	ssize_t r;

	fd = accept(ls, NULL, NULL);
	if (fd < 0)
		return NULL;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	while ((r = recv(fd, buf, sizeof(buf), 0)) > 0)
		if (full_io(fd, buf, (uint32_t)r, true) != 0)
			break;
	close(fd);
	return NULL;
}

static int
run_linux(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int ls, fd, one = 1;
	pthread_t th;
	double *us;

	ls = socket(AF_INET, SOCK_STREAM, 0);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(ls, 1) != 0 ||
	    getsockname(ls, (struct sockaddr *)&a, &alen) != 0)
		return 1;
	if (pthread_create(&th, NULL, linux_echo, &ls) != 0)
		return 1;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		return 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	us = calloc(opt.count, sizeof(*us));
	if (us == NULL)
		return 1;
	for (uint32_t i = 0; i < opt.warmup + opt.count; i++) {
		double t0 = now_s();

		out[0] = (uint8_t)i;
		if (full_io(fd, out, opt.size, true) != 0 ||
		    full_io(fd, in, opt.size, false) != 0 || memcmp(in, out, opt.size) != 0)
			return 1;
		if (i >= opt.warmup)
			us[i - opt.warmup] = (now_s() - t0) * 1e6;
	}
	close(fd);
	pthread_join(th, NULL);
	close(ls);
	report("linux_loopback", us, opt.count);
	free(us);
	return 0;
}

/* ---- warpnic TCP ---- */

static int
srv_established(struct wn_tcp_conn *c, void *arg)
{
	(void)c;
	(void)arg;
	established = true;
	return 0;
}

/* Echo what arrived (ping-pong sizes fit the send buffer). */
static void
srv_recv(struct wn_tcp_conn *c, void *arg)
{
	const uint8_t *data;
	uint32_t n, space;

	(void)arg;
	while ((n = wn_tcp_recv_peek(c, &data)) > 0) {
		space = wn_tcp_send_space(c);
		n = RTE_MIN(n, space);
		if (n == 0)
			break;
		if (wn_tcp_send(c, data, n) != (int)n) {
			failed = 1;
			return;
		}
		wn_tcp_recv_consume(c, n);
	}
}

static void
cli_recv(struct wn_tcp_conn *c, void *arg)
{
	int n;

	(void)arg;
	while (got < opt.size && (n = wn_tcp_recv(c, in + got, opt.size - got)) > 0)
		got += (uint32_t)n;
}

static void
on_eof(struct wn_tcp_conn *c, void *arg)
{
	(void)arg;
	wn_tcp_close(c);
}

static void
on_closed(struct wn_tcp_conn *c, void *arg, enum wn_tcp_close_reason why)
{
	(void)c;
	(void)arg;
	/* before it was established (refused: the server is not up yet) the client retries */
	if (established && why != WN_TCP_CLOSE_NORMAL)
		failed = 1;
	closed = true;
}

static const struct wn_tcp_cb srv_cb = {
	.established = srv_established, .recv = srv_recv, .eof = on_eof, .closed = on_closed,
};
static const struct wn_tcp_cb cli_cb = {
	.established = srv_established, .recv = cli_recv, .eof = on_eof, .closed = on_closed,
};

struct stack {
	uint16_t port;
	struct wn_netif *nif;
	struct wn_tcp_ctx *tcp;
};

static bool
link_up(uint16_t port)
{
	struct rte_eth_link l;

	return rte_eth_link_get_nowait(port, &l) == 0 && l.link_status == RTE_ETH_LINK_UP;
}

/* One iteration of the run-to-completion loop (see lib/tcp/README.md). */
static void
poll_once(struct stack *s)
{
	struct rte_mbuf *pkts[BURST];
	uint64_t now = wn_net_now_us();
	uint16_t n, sent;

	n = rte_eth_rx_burst(s->port, 0, pkts, BURST);
	if (n > 0) {
		n = wn_net_rx_bulk(s->nif, pkts, n, now);
		if (n > 0)
			wn_tcp_rx_bulk(s->tcp, pkts, n, now);
	}
	wn_tcp_process(s->tcp, now);
	while ((n = wn_tcp_tx_bulk(s->tcp, pkts, BURST)) > 0)
		wn_net_output_bulk(s->nif, pkts, n, now);
	wn_net_process(s->nif, now);
	while ((n = wn_net_tx_bulk(s->nif, pkts, BURST)) > 0) {
		sent = 0;
		for (int tries = 0; sent < n && tries < 1000; tries++)
			sent += rte_eth_tx_burst(s->port, 0, pkts + sent, n - sent);
		if (sent < n)
			rte_pktmbuf_free_bulk(pkts + sent, n - sent);
	}
}

static int
stack_init(struct stack *s)
{
	struct wn_port_conf pc = { 0 };
	struct wn_netif_conf nc = { 0 };
	struct wn_tcp_ctx_conf tc = { 0 };
	struct rte_mempool *pool;
	uint64_t tx_capa = 0, rx_capa = 0;

	if (rte_eth_dev_count_avail() == 0)
		return -ENODEV;
	RTE_ETH_FOREACH_DEV(s->port)
		break;
	pool = rte_pktmbuf_pool_create("pp", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       rte_socket_id());
	if (pool == NULL)
		return -ENOMEM;
	pc.port_id = s->port;
	pc.pool = pool;
	pc.set_mtu = true;
	if (wn_net_port_setup(&pc, &tx_capa, &rx_capa) != 0)
		return -EIO;
	nc.port_id = s->port;
	nc.socket_id = SOCKET_ID_ANY;
	nc.pool = pool;
	nc.tx_offload_capa = tx_capa;
	nc.rx_offload_capa = rx_capa;
	rte_eth_macaddr_get(s->port, &nc.mac);
	s->nif = wn_net_if_create(&nc);
	if (s->nif == NULL || wn_net_if_addr_add(s->nif, &opt.ip, opt.prefix) != 0)
		return -EINVAL;
	tc.socket_id = SOCKET_ID_ANY;
	tc.pool = pool;
	s->tcp = wn_tcp_ctx_create(&tc);
	if (s->tcp == NULL)
		return -ENOMEM;
	return wn_net_start(s->nif, wn_net_now_us());
}

static int
run_warpnic(void)
{
	struct stack s;
	struct wn_tcp_endpoint l = { .addr = opt.ip, .port = 0 };
	struct wn_tcp_endpoint r = { .addr = opt.peer, .port = opt.port };
	struct wn_tcp_conn *c = NULL;
	double start = now_s(), t0 = 0, *us = NULL;
	uint32_t i = 0;
	bool sent = false;

	if (stack_init(&s) != 0) {
		fprintf(stderr, "wn-tcp-pingpong: port/stack set-up failed\n");
		return 1;
	}
	if (opt.server) {
		l.port = opt.port;
		if (wn_tcp_listen(s.tcp, &l, &srv_cb, NULL) == NULL)
			return 1;
		printf("pingpong: listening on port %u\n", opt.port);
		fflush(stdout);
	} else {
		us = calloc(opt.count, sizeof(*us));
		if (us == NULL)
			return 1;
		/* the peer's server may start later: connect again after a refusal */
	}
	while (!quit && !failed && now_s() - start < opt.timeout) {
		poll_once(&s);
		if (opt.server) {
			if (closed)
				break;
			continue;
		}
		if (c == NULL || (closed && !established)) {
			closed = false;
			c = wn_tcp_connect(s.tcp, &l, &r, &cli_cb, NULL);
			if (c == NULL)
				return 1;
			continue;
		}
		if (!established)
			continue;
		if (!sent) {
			out[0] = (uint8_t)i;
			got = 0;
			t0 = now_s();
			if (wn_tcp_send(c, out, opt.size) != (int)opt.size)
				return 1;
			sent = true;
		} else if (got == opt.size) {
			if (memcmp(in, out, opt.size) != 0) {
				failed = 1;
				break;
			}
			if (i >= opt.warmup)
				us[i - opt.warmup] = (now_s() - t0) * 1e6;
			sent = false;
			if (++i == opt.warmup + opt.count)
				break;
		}
	}
	if (!opt.server && i == opt.warmup + opt.count && !failed) {
		report("warpnic_memif", us, opt.count);
		wn_tcp_close(c);
		/* let the FIN exchange finish so the server exits too: TIME-WAIT (our FIN acked,
		 * the server's acked in the same iteration), then no more polling until the server
		 * has left (memif link down): DPDK 22.11's memif unmaps the rings in its interrupt
		 * thread when the peer leaves, under a burst that is still polling */
		for (double t = now_s(); !closed && wn_tcp_conn_state(c) != WN_TCP_TIME_WAIT &&
		     now_s() - t < 2;)
			poll_once(&s);
		for (double t = now_s(); link_up(s.port) && now_s() - t < 2;)
			usleep(1000);
		return 0;
	}
	if (opt.server && closed && !failed) {
		for (double t = now_s(); now_s() - t < 0.2;)
			poll_once(&s);
		return 0;
	}
	fprintf(stderr, "wn-tcp-pingpong: %s after %u round trips\n",
		failed ? "failed" : "timed out", i);
	return 1;
}

static int
parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "server", no_argument, NULL, 's' }, { "client", no_argument, NULL, 'c' },
		{ "linux", no_argument, NULL, 'L' }, { "ip", required_argument, NULL, 'i' },
		{ "port", required_argument, NULL, 'p' },
		{ "connect", required_argument, NULL, 'C' },
		{ "size", required_argument, NULL, 'S' }, { "count", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "timeout", required_argument, NULL, 't' }, { NULL, 0, NULL, 0 },
	};
	char buf[64], *colon;
	int o;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 's':
			opt.server = true;
			break;
		case 'c':
			opt.client = true;
			break;
		case 'L':
			opt.linux_tcp = true;
			break;
		case 'i':
			if (wn_net_addr_parse(optarg, &opt.ip, &opt.prefix) != 0)
				return -1;
			break;
		case 'p':
			opt.port = (uint16_t)atoi(optarg);
			break;
		case 'C':
			snprintf(buf, sizeof(buf), "%s", optarg);
			colon = strrchr(buf, ':');
			if (colon == NULL)
				return -1;
			*colon = '\0';
			opt.port = (uint16_t)atoi(colon + 1);
			if (wn_net_addr_parse(buf, &opt.peer, NULL) != 0)
				return -1;
			break;
		case 'S':
			opt.size = (uint32_t)atoi(optarg);
			break;
		case 'n':
			opt.count = (uint32_t)atoi(optarg);
			break;
		case 'w':
			opt.warmup = (uint32_t)atoi(optarg);
			break;
		case 't':
			opt.timeout = atof(optarg);
			break;
		default:
			return -1;
		}
	}
	if (opt.size == 0 || opt.size > MAX_SIZE || opt.count == 0 ||
	    opt.server + opt.client + opt.linux_tcp != 1)
		return -1;
	for (uint32_t i = 0; i < opt.size; i++)
		out[i] = (uint8_t)(i * 31 + 7);
	return 0;
}

int
main(int argc, char **argv)
{
	int n;

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--linux") == 0) { /* no EAL */
			if (parse(argc, argv) != 0)
				goto usage;
			return run_linux();
		}
	}
	n = rte_eal_init(argc, argv);
	if (n < 0)
		return 1;
	argv[n] = argv[0];
	if (parse(argc - n, argv + n) != 0)
		goto usage;
	return run_warpnic();
usage:
	fprintf(stderr, "usage: see the header of test/bench/tcp/tcp_pingpong.c\n");
	return 2;
}
