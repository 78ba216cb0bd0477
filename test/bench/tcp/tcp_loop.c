/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-tcp-loop: the per-packet cost of lib/net + lib/tcp, without a port and without a clock.
 *
 * Two stacks (netif + TCP context each) in one process move --bytes of bulk data from the
 * sending side to the receiving side. Frames go from one side's wn_net_tx_bulk straight to
 * the other's wn_net_rx_bulk, their offload flags cleared as a port's receive path leaves
 * them; time is virtual (one microsecond per loop iteration), so a run is the same
 * instruction sequence every time. Each side's work is one function, send_side() and
 * recv_side(): under `valgrind --tool=callgrind` their inclusive instruction counts divided
 * by the data segments give the instructions per packet of TCP bulk send and receive
 * (tcp_cost.sh does that). What each side does per iteration is what a dataplane loop does:
 *
 *   wn_net_rx_bulk → wn_tcp_rx_bulk → application (send / peek+consume) → wn_tcp_process →
 *   wn_tcp_tx_bulk → wn_net_output_bulk → wn_net_process → wn_net_tx_bulk
 *
 * The application's own work is a copy into the send buffer (wn_tcp_send) and nothing on
 * receive (wn_tcp_recv_peek + wn_tcp_recv_consume): no hashing, no verification.
 *
 * Usage: wn-tcp-loop [--bytes N] [--mtu N] [--cksum auto|software|local] [--copy]
 *                    [--rate-mbps R --delay-us D [--drop P] [--reorder P] [--seed S]]
 *                    [--cc newreno|cubic]
 *   --copy  every frame is copied into a new mbuf on the way, as the memif PMD does
 *
 * With --rate-mbps the wire is a link model instead, for TCP's behaviour under loss: each
 * direction serialises frames at R Mbit/s and delivers them D us later (one-way), dropping
 * each with probability P and holding one back behind the next few with probability
 * --reorder (seeded: the same run every time). Virtual time then stands for wall time: the
 * goodput it prints (octets over virtual microseconds) is what TCP's loss recovery and
 * congestion control make of the link, whatever the machine's load.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "wn_net.h"
#include "wn_tcp.h"

#define BURST 32
#define WIRE_CAP 4096
#define LINK_CAP 65536

struct wire {
	struct rte_mbuf *q[WIRE_CAP];
	uint32_t n;
};

/* One direction of the link model: frames in flight with their delivery times, in order. */
struct link {
	struct rte_mbuf *m[LINK_CAP];
	uint64_t at[LINK_CAP];
	uint32_t head, n;
	double free_at;      /* when the sender's end of the link is idle again (us) */
	uint64_t dropped, reordered;
};

static struct {
	bool on;
	double mbps, drop, reorder;
	uint64_t delay_us;
	uint64_t rnd;
} lm;

static double
lm_rand(void)
{
	/* xorshift64*: a fixed sequence per --seed */
	lm.rnd ^= lm.rnd >> 12;
	lm.rnd ^= lm.rnd << 25;
	lm.rnd ^= lm.rnd >> 27;
	return (double)((lm.rnd * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

struct side {
	struct wn_netif *nif;
	struct wn_tcp_ctx *tcp;
	struct wn_tcp_conn *conn;
	struct wn_ip_addr ip;
	struct wire in;      /* frames waiting for this side's rx */
	struct link to;      /* link model: frames on their way to this side */
	uint64_t moved;      /* octets sent (sender) or consumed (receiver) */
};

static struct rte_mempool *pool;
static struct side sides[2];
static uint64_t total;
static bool copy_frames;
static uint8_t chunk[64 * 1024];

static void
on_recv(struct wn_tcp_conn *c, void *arg)
{
	struct side *s = arg;
	const uint8_t *data;
	uint32_t n;

	while ((n = wn_tcp_recv_peek(c, &data)) > 0) {
		s->moved += n;
		wn_tcp_recv_consume(c, n);
	}
}

static int
on_established(struct wn_tcp_conn *c, void *arg)
{
	struct side *s = arg;

	s->conn = c;
	return 0;
}

static const struct wn_tcp_cb cb = {
	.established = on_established,
	.recv = on_recv,
};

static void
wire_in(struct side *to, struct rte_mbuf *m)
{
	/* what a port without offloads reports on receive */
	m->ol_flags = 0;
	m->packet_type = 0;
	m->l2_len = m->l3_len = m->l4_len = 0;
	if (to->in.n == WIRE_CAP) {
		rte_pktmbuf_free(m);
		return;
	}
	to->in.q[to->in.n++] = m;
}

/* Link model: serialise, delay, drop or hold back one frame towards @p to. */
static void
link_put(struct side *to, struct rte_mbuf *m, uint64_t now)
{
	struct link *l = &to->to;
	double tx = rte_pktmbuf_pkt_len(m) * 8.0 / lm.mbps;
	uint32_t i, k;

	l->free_at = (l->free_at > (double)now ? l->free_at : (double)now) + tx;
	if (lm_rand() < lm.drop || l->n == LINK_CAP) {
		l->dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	i = (l->head + l->n) % LINK_CAP;
	l->m[i] = m;
	l->at[i] = (uint64_t)l->free_at + lm.delay_us;
	l->n++;
	/* reorder: this frame arrives after the next 1..3 (it takes their place in line) */
	if (lm_rand() < lm.reorder) {
		l->reordered++;
		k = 1 + (uint32_t)(lm_rand() * 3);
		l->at[i] += (uint64_t)(k * tx) + 1;
	}
}

/* Link model: frames due by @p now enter @p s's receive queue, earliest first. */
static void
link_deliver(struct side *s, uint64_t now)
{
	struct link *l = &s->to;

	while (l->n > 0) {
		uint32_t best = l->head, j;

		/* at most a few frames are out of order: look a little ahead */
		for (j = 1; j < 4 && j < l->n; j++) {
			uint32_t x = (l->head + j) % LINK_CAP;

			if (l->at[x] < l->at[best])
				best = x;
		}
		if (l->at[best] > now)
			break;
		if (best != l->head) {
			struct rte_mbuf *m = l->m[best];
			uint64_t at = l->at[best];

			l->m[best] = l->m[l->head];
			l->at[best] = l->at[l->head];
			l->m[l->head] = m;
			l->at[l->head] = at;
		}
		wire_in(s, l->m[l->head]);
		l->head = (l->head + 1) % LINK_CAP;
		l->n--;
	}
}

/* The "wire": frames of one side become the other side's received frames. */
static void
wire_put(struct side *to, struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		if (lm.on) {
			link_put(to, m, now);
			continue;
		}

		if (copy_frames) {
			struct rte_mbuf *c = rte_pktmbuf_copy(m, pool, 0, UINT32_MAX);

			rte_pktmbuf_free(m);
			if (c == NULL)
				continue;
			m = c;
		}
		wire_in(to, m);
	}
}

/* One loop iteration of side @p s at time @p now, frames out to @p peer. */
static void
step(struct side *s, struct side *peer, uint64_t now, bool sender)
{
	struct rte_mbuf *pkts[BURST];
	uint32_t done = 0;
	uint16_t n;

	if (lm.on)
		link_deliver(s, now);
	while (done < s->in.n) {
		n = (uint16_t)RTE_MIN(s->in.n - done, (uint32_t)BURST);
		memcpy(pkts, s->in.q + done, n * sizeof(pkts[0]));
		done += n;
		n = wn_net_rx_bulk(s->nif, pkts, n, now);
		if (n > 0)
			wn_tcp_rx_bulk(s->tcp, pkts, n, now);
	}
	s->in.n = 0;
	if (sender && s->conn != NULL) {
		while (s->moved < total) {
			uint64_t left = total - s->moved;
			uint32_t k = left < sizeof(chunk) ? (uint32_t)left : (uint32_t)sizeof(chunk);
			int sent = wn_tcp_send(s->conn, chunk, k);

			if (sent <= 0)
				break;
			s->moved += (uint32_t)sent;
		}
	}
	wn_tcp_process(s->tcp, now);
	while ((n = wn_tcp_tx_bulk(s->tcp, pkts, BURST)) > 0)
		wn_net_output_bulk(s->nif, pkts, n, now);
	wn_net_process(s->nif, now);
	while ((n = wn_net_tx_bulk(s->nif, pkts, BURST)) > 0)
		wire_put(peer, pkts, n, now);
}

/* Separate functions, so that a profile attributes each side's work to one symbol. */
static void __attribute__((noinline))
send_side(uint64_t now)
{
	step(&sides[0], &sides[1], now, true);
}

static void __attribute__((noinline))
recv_side(uint64_t now)
{
	step(&sides[1], &sides[0], now, false);
}

static const struct wn_tcp_cc_ops *cc_ops;

static int
side_init(struct side *s, int idx, uint16_t mtu, enum wn_net_cksum cksum)
{
	struct wn_netif_conf nc;
	struct wn_tcp_ctx_conf tc;

	memset(&nc, 0, sizeof(nc));
	nc.port_id = UINT16_MAX; /* no port: nothing to look up */
	nc.socket_id = SOCKET_ID_ANY;
	nc.mtu = mtu;
	nc.pool = pool;
	nc.cksum = cksum;
	nc.mac = (struct rte_ether_addr){ { 0x02, 0x77, 0x6e, 0, 0, (uint8_t)(idx + 1) } };
	nc.frag_max_flows = WN_NETIF_NO_REASSEMBLY;
	s->nif = wn_net_if_create(&nc);
	if (s->nif == NULL)
		return -1;
	s->ip = wn_ip_addr_v4(198, 18, 0, (uint8_t)(idx + 1));
	if (wn_net_if_addr_add(s->nif, &s->ip, 24) != 0)
		return -1;
	memset(&tc, 0, sizeof(tc));
	tc.socket_id = SOCKET_ID_ANY;
	tc.pool = pool;
	tc.mtu = mtu;
	tc.cc = cc_ops;
	if (lm.on) /* the dataplane's buffers (warpnicd --sockbuf) */
		tc.sndbuf = tc.rcvbuf = 1u << 20;
	s->tcp = wn_tcp_ctx_create(&tc);
	return s->tcp != NULL ? 0 : -1;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bytes", required_argument, NULL, 'b' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "cksum", required_argument, NULL, 'c' },
		{ "copy", no_argument, NULL, 'p' },
		{ "rate-mbps", required_argument, NULL, 'r' },
		{ "delay-us", required_argument, NULL, 'd' },
		{ "drop", required_argument, NULL, 'x' },
		{ "reorder", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{ "cc", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	char *eal[] = { argv[0], "--no-huge", "--no-shconf", "--no-pci", "-l", "0",
			"-m", "512", "--log-level", "*:error", NULL };
	enum wn_net_cksum cksum = WN_NET_CKSUM_AUTO;
	struct wn_tcp_endpoint l, r;
	struct wn_tcp_stats ts0, ts1;
	uint16_t mtu = 1500;
	uint64_t now = 1000000;
	int opt;

	total = 64ull << 20;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			total = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			mtu = (uint16_t)strtoul(optarg, NULL, 0);
			break;
		case 'c':
			if (strcmp(optarg, "auto") == 0)
				cksum = WN_NET_CKSUM_AUTO;
			else if (strcmp(optarg, "software") == 0)
				cksum = WN_NET_CKSUM_SOFTWARE;
			else if (strcmp(optarg, "local") == 0)
				cksum = WN_NET_CKSUM_LOCAL;
			else
				goto usage;
			break;
		case 'p':
			copy_frames = true;
			break;
		case 'r':
			lm.on = true;
			lm.mbps = strtod(optarg, NULL);
			break;
		case 'd':
			lm.delay_us = strtoull(optarg, NULL, 0);
			break;
		case 'x':
			lm.drop = strtod(optarg, NULL);
			break;
		case 'o':
			lm.reorder = strtod(optarg, NULL);
			break;
		case 's':
			lm.rnd = strtoull(optarg, NULL, 0);
			break;
		case 'C':
			if (strcmp(optarg, "newreno") == 0)
				cc_ops = &wn_tcp_cc_newreno;
			else if (strcmp(optarg, "cubic") == 0)
				cc_ops = &wn_tcp_cc_cubic;
			else
				goto usage;
			break;
		default:
			goto usage;
		}
	}
	if (lm.on && (lm.mbps <= 0 || lm.drop < 0 || lm.drop >= 1 || lm.reorder < 0 ||
		      lm.reorder >= 1))
		goto usage;
	lm.rnd = lm.rnd != 0 ? lm.rnd : 1;
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "wn-tcp-loop: EAL init failed\n");
		return 1;
	}
	pool = rte_pktmbuf_pool_create("loop_pool", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	if (pool == NULL || side_init(&sides[0], 0, mtu, cksum) != 0 ||
	    side_init(&sides[1], 1, mtu, cksum) != 0) {
		fprintf(stderr, "wn-tcp-loop: set-up failed\n");
		return 1;
	}
	wn_net_neigh_add(sides[0].nif, &sides[1].ip, wn_net_if_mac(sides[1].nif), true, now);
	wn_net_neigh_add(sides[1].nif, &sides[0].ip, wn_net_if_mac(sides[0].nif), true, now);
	memset(&l, 0, sizeof(l));
	memset(&r, 0, sizeof(r));
	r.addr = sides[1].ip;
	r.port = 5001;
	l.addr = sides[0].ip;
	if (wn_tcp_listen(sides[1].tcp, &r, &cb, &sides[1]) == NULL ||
	    wn_tcp_connect(sides[0].tcp, &l, &r, &cb, &sides[0]) == NULL) {
		fprintf(stderr, "wn-tcp-loop: listen/connect failed\n");
		return 1;
	}
	memset(chunk, 0xa5, sizeof(chunk));
	while (sides[1].moved < total && now < 1000000 + 600ull * 1000000) {
		send_side(now);
		recv_side(now);
		now++;
	}
	wn_tcp_stats_get(sides[0].tcp, &ts0);
	wn_tcp_stats_get(sides[1].tcp, &ts1);
	printf("loop: bytes %" PRIu64 " sender_segs %" PRIu64 " receiver_segs %" PRIu64
	       " retrans %" PRIu64 " rx_drop_cksum %" PRIu64 " virtual_us %" PRIu64 "\n",
	       sides[1].moved, ts0.tx_segs, ts1.tx_segs, ts0.tx_retrans,
	       ts0.rx_drop_cksum + ts1.rx_drop_cksum, now - 1000000);
	if (lm.on)
		printf("link: %.0f Mbit/s, %" PRIu64 " us one way, drop %.4f, reorder %.4f; "
		       "goodput %.1f Mbit/s (%.3f of the link); data dropped %" PRIu64
		       " reordered %" PRIu64 ", ACKs dropped %" PRIu64 "; fast retransmits %" PRIu64
		       ", RTOs %" PRIu64 ", TLPs %" PRIu64 ", recoveries undone %" PRIu64 "\n",
		       lm.mbps, lm.delay_us, lm.drop, lm.reorder,
		       sides[1].moved * 8.0 / (double)(now - 1000000),
		       sides[1].moved * 8.0 / (double)(now - 1000000) / lm.mbps,
		       sides[1].to.dropped, sides[1].to.reordered, sides[0].to.dropped,
		       ts0.fast_retrans, ts0.rto_fired, ts0.tlp_probes, ts0.undo_spurious);
	return sides[1].moved == total ? 0 : 1;
usage:
	fprintf(stderr, "usage: %s [--bytes N] [--mtu N] [--cksum auto|software|local] [--copy]\n"
		"       [--rate-mbps R --delay-us D [--drop P] [--reorder P] [--seed S]]"
		" [--cc newreno|cubic]\n", argv[0]);
	return 2;
}
