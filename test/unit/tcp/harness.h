/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test harness: two warpnic stacks (netif + TCP context each) wired back to back through
 * their tx/rx functions, a virtual clock, seeded loss/reorder, a per-frame filter, a NIC that
 * keeps the mbuf chains it sent (as PMDs that free them only when they reuse the
 * descriptors), and helpers to craft and parse Ethernet/IPv4/TCP frames. Header-only so
 * each test binary stays one file plus this.
 */
#ifndef WN_TEST_HARNESS_H
#define WN_TEST_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "wn_net.h"
#include "wn_tcp.h"

#define HX_BURST 64
#define HX_CAP 4096
#define HX_KEEP 256

struct hx;
/* Return true to drop the frame; may modify it. @p from is the sending side. */
typedef bool (*hx_filter_t)(struct hx *h, int from, struct rte_mbuf *m, void *arg);

struct hx_side {
	struct wn_netif *nif;
	struct wn_tcp_ctx *tcp;     /* NULL: raw side, frames to it are captured */
	struct wn_ip_addr ip;
	struct rte_ether_addr mac;
};

struct hx {
	struct rte_mempool *pool;
	struct hx_side s[2];
	uint64_t now;
	uint32_t drop_pm, reorder_pm; /* per mille, TCP frames only */
	uint32_t dup_pm, corrupt_pm;  /* per mille, TCP frames only */
	uint64_t rng;
	hx_filter_t filter;
	void *filter_arg;
	struct rte_mbuf *held[2];   /* reorder: frame delayed behind the next one */
	struct rte_mbuf *cap[HX_CAP]; /* frames sent to a raw side */
	unsigned int ncap;
	uint64_t frames[2], dropped;
	bool nic_keep;              /* sent chains are kept in kept[] until hx_nic_free() */
	struct rte_mbuf *kept[HX_KEEP];
	unsigned int nkept;
};

static struct rte_mempool *hx_pool;

static inline void
hx_eal_init(const char *prefix)
{
	char *argv[] = { "test", "--no-huge", "--no-shconf", "--no-pci", "-l", "0", "-m", "256",
			 "--file-prefix", (char *)prefix, "--log-level", "*:error", NULL };

	if (rte_eal_init(12, argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		exit(1);
	}
	hx_pool = rte_pktmbuf_pool_create("hx_pool", 8191, 256, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (hx_pool == NULL) {
		fprintf(stderr, "pool create failed\n");
		exit(1);
	}
}

static inline uint32_t
hx_rand(struct hx *h)
{
	h->rng ^= h->rng << 13;
	h->rng ^= h->rng >> 7;
	h->rng ^= h->rng << 17;
	return (uint32_t)(h->rng >> 16);
}

/* side i: 198.18.0.(i+1)/24, MAC 02:00:00:00:00:0(i+1). raw[i]: no TCP context. */
static inline void
hx_init_conf(struct hx *h, const struct wn_tcp_ctx_conf *tconf, bool raw0, bool raw1)
{
	memset(h, 0, sizeof(*h));
	h->pool = hx_pool;
	h->rng = 0x9e3779b97f4a7c15ull;
	h->now = 1000000;
	for (int i = 0; i < 2; i++) {
		struct wn_netif_conf nc = { 0 };
		struct wn_tcp_ctx_conf tc = { 0 };

		nc.pool = hx_pool;
		nc.socket_id = SOCKET_ID_ANY;
		nc.mac.addr_bytes[0] = 0x02;
		nc.mac.addr_bytes[5] = (uint8_t)(i + 1);
		h->s[i].mac = nc.mac;
		h->s[i].nif = wn_net_if_create(&nc);
		assert_non_null(h->s[i].nif);
		h->s[i].ip = wn_ip_addr_v4(198, 18, 0, (uint8_t)(i + 1));
		assert_int_equal(wn_net_if_addr_add(h->s[i].nif, &h->s[i].ip, 24), 0);
		if ((i == 0 && raw0) || (i == 1 && raw1))
			continue;
		if (tconf != NULL)
			tc = *tconf;
		tc.pool = hx_pool;
		tc.socket_id = SOCKET_ID_ANY;
		h->s[i].tcp = wn_tcp_ctx_create(&tc);
		assert_non_null(h->s[i].tcp);
	}
	/* a raw side never answers ARP, so its peer learns it statically */
	for (int i = 0; i < 2; i++)
		if (h->s[1 - i].tcp == NULL)
			wn_net_neigh_add(h->s[i].nif, &h->s[1 - i].ip, &h->s[1 - i].mac, true, h->now);
}

static inline void
hx_init(struct hx *h)
{
	hx_init_conf(h, NULL, false, false);
}

/* The NIC frees the chains it kept (it reuses their descriptors). */
static inline void
hx_nic_free(struct hx *h)
{
	for (unsigned int i = 0; i < h->nkept; i++)
		rte_pktmbuf_free(h->kept[i]);
	h->nkept = 0;
}

static inline void
hx_fini(struct hx *h)
{
	hx_nic_free(h);
	for (int i = 0; i < 2; i++) {
		wn_tcp_ctx_free(h->s[i].tcp);
		wn_net_if_free(h->s[i].nif);
		rte_pktmbuf_free(h->held[i]);
	}
	for (unsigned int i = 0; i < h->ncap; i++)
		rte_pktmbuf_free(h->cap[i]);
}

static inline bool
hx_is_tcp(struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eh + 1);

	return eh->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) &&
	       ip->next_proto_id == IPPROTO_TCP;
}

/* Hand one frame to side @p to (net rx, then TCP rx). */
static inline void
hx_deliver(struct hx *h, int to, struct rte_mbuf *m)
{
	struct rte_mbuf *pkts[1] = { m };
	uint16_t n;

	if (h->s[to].tcp == NULL) {
		if (h->ncap < HX_CAP)
			h->cap[h->ncap++] = m;
		else
			rte_pktmbuf_free(m);
		return;
	}
	n = wn_net_rx_bulk(h->s[to].nif, pkts, 1, h->now);
	if (n > 0)
		wn_tcp_rx_bulk(h->s[to].tcp, pkts, n, h->now);
}

/* One loop iteration of side @p i, frames delivered to the other side. */
static inline unsigned int
hx_side_step(struct hx *h, int i)
{
	struct rte_mbuf *pkts[HX_BURST];
	unsigned int total = 0;
	uint16_t n;

	if (h->s[i].tcp != NULL) {
		wn_tcp_process(h->s[i].tcp, h->now);
		while ((n = wn_tcp_tx_bulk(h->s[i].tcp, pkts, HX_BURST)) > 0)
			wn_net_output_bulk(h->s[i].nif, pkts, n, h->now);
	}
	wn_net_process(h->s[i].nif, h->now);
	while ((n = wn_net_tx_bulk(h->s[i].nif, pkts, HX_BURST)) > 0) {
		for (uint16_t k = 0; k < n; k++) {
			struct rte_mbuf *m = pkts[k];
			bool tcp;

			if (m->nb_segs > 1 || RTE_MBUF_HAS_EXTBUF(m)) {
				/* a chain (zero-copy segment) reaches the peer as one frame, as
				 * from a NIC; the sender's memory is never modified below */
				struct rte_mbuf *f = rte_pktmbuf_copy(m, h->pool, 0, UINT32_MAX);

				assert_non_null(f);
				assert_int_equal(f->nb_segs, 1);
				if (h->nic_keep && h->nkept < HX_KEEP)
					h->kept[h->nkept++] = m;
				else
					rte_pktmbuf_free(m);
				m = f;
			}
			tcp = hx_is_tcp(m);

			total++;
			h->frames[i]++;
			if (h->filter != NULL && h->filter(h, i, m, h->filter_arg)) {
				h->dropped++;
				rte_pktmbuf_free(m);
				continue;
			}
			if (tcp && h->drop_pm != 0 && hx_rand(h) % 1000 < h->drop_pm) {
				h->dropped++;
				rte_pktmbuf_free(m);
				continue;
			}
			if (tcp && h->corrupt_pm != 0 && hx_rand(h) % 1000 < h->corrupt_pm) {
				uint32_t off = 14 + 20 + hx_rand(h) % (rte_pktmbuf_pkt_len(m) - 34);

				/* one flipped bit anywhere in TCP header or payload */
				*rte_pktmbuf_mtod_offset(m, uint8_t *, off) ^=
					(uint8_t)(1u << (hx_rand(h) % 8));
			}
			if (tcp && h->dup_pm != 0 && hx_rand(h) % 1000 < h->dup_pm) {
				struct rte_mbuf *d = rte_pktmbuf_copy(m, h->pool, 0, UINT32_MAX);

				if (d != NULL)
					hx_deliver(h, 1 - i, d);
			}
			if (tcp && h->reorder_pm != 0 && h->held[i] == NULL &&
			    hx_rand(h) % 1000 < h->reorder_pm) {
				h->held[i] = m;
				continue;
			}
			hx_deliver(h, 1 - i, m);
			if (h->held[i] != NULL) {
				struct rte_mbuf *x = h->held[i];

				h->held[i] = NULL;
				hx_deliver(h, 1 - i, x);
			}
		}
	}
	return total;
}

/* Run both sides until quiet for this instant; then release held frames. */
static inline void
hx_step(struct hx *h)
{
	for (int round = 0; round < 64; round++) {
		unsigned int t = hx_side_step(h, 0) + hx_side_step(h, 1);

		if (t == 0)
			break;
	}
	for (int i = 0; i < 2; i++) {
		if (h->held[i] != NULL) {
			struct rte_mbuf *x = h->held[i];

			h->held[i] = NULL;
			hx_deliver(h, 1 - i, x);
		}
	}
}

/* Side @p side's TCP counters. */
static inline struct wn_tcp_stats
hx_stats(struct hx *h, int side)
{
	struct wn_tcp_stats st;

	wn_tcp_stats_get(h->s[side].tcp, &st);
	return st;
}

/* @p n pseudo-random octets from @p seed (malloc'd; the caller frees). */
static inline uint8_t *
hx_pattern(size_t n, uint32_t seed)
{
	uint8_t *p = malloc(n);

	assert_non_null(p);
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
	return p;
}

/* Advance the clock by @p us in steps of @p step_us, stepping both sides each time. */
static inline void
hx_run(struct hx *h, uint64_t us, uint64_t step_us)
{
	uint64_t end = h->now + us;

	hx_step(h);
	while (h->now < end) {
		h->now += step_us;
		hx_step(h);
	}
}

static inline struct wn_tcp_endpoint
hx_ep(struct hx *h, int side, uint16_t port)
{
	struct wn_tcp_endpoint e = { .addr = h->s[side].ip, .port = port };

	return e;
}

/* ---- frame crafting / parsing (IPv4) ---- */

struct hx_seg {
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t win;
	uint16_t sport, dport;
	const uint8_t *opts;
	uint8_t optlen;
	const void *data;
	uint32_t len;
};

/* Build a frame from side @p from to side @p to with a correct TCP checksum. */
static inline struct rte_mbuf *
hx_craft(struct hx *h, int from, int to, const struct hx_seg *sg)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(h->pool);
	struct rte_ether_hdr *eh;
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;
	uint32_t thl = 20u + ((sg->optlen + 3u) & ~3u);

	assert_non_null(m);
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, (uint16_t)(14 + 20 + thl + sg->len));
	assert_non_null(eh);
	eh->dst_addr = h->s[to].mac;
	eh->src_addr = h->s[from].mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eh + 1);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + thl + sg->len));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->src_addr = h->s[from].ip.v4;
	ip->dst_addr = h->s[to].ip.v4;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	th = (struct rte_tcp_hdr *)(ip + 1);
	memset(th, 0, thl);
	th->src_port = rte_cpu_to_be_16(sg->sport);
	th->dst_port = rte_cpu_to_be_16(sg->dport);
	th->sent_seq = rte_cpu_to_be_32(sg->seq);
	th->recv_ack = rte_cpu_to_be_32(sg->ack);
	th->data_off = (uint8_t)((thl / 4) << 4);
	th->tcp_flags = sg->flags;
	th->rx_win = rte_cpu_to_be_16(sg->win);
	if (sg->optlen)
		memcpy(th + 1, sg->opts, sg->optlen);
	if (sg->len)
		memcpy((uint8_t *)th + thl, sg->data, sg->len);
	th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	return m;
}

struct hx_parsed {
	uint32_t seq, ack, len;
	uint8_t flags;
	uint16_t win, sport, dport;
	uint8_t optlen;
	uint8_t opts[40];
	const uint8_t *data;
	uint8_t payload[9100];
	bool has_ts;
	uint32_t tsval, tsecr;
	uint8_t nsack;
	uint32_t sack[4][2];
	bool has_mss, has_ws, has_sackp;
	uint16_t mss;
	uint8_t ws;
};

static inline bool
hx_parse(struct rte_mbuf *m, struct hx_parsed *p)
{
	const struct rte_ipv4_hdr *ip;
	const struct rte_tcp_hdr *th;
	uint32_t thl, tot;

	memset(p, 0, sizeof(*p));
	if (!hx_is_tcp(m))
		return false;
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, 14);
	th = (const struct rte_tcp_hdr *)(ip + 1);
	thl = (uint32_t)(th->data_off >> 4) * 4;
	tot = rte_be_to_cpu_16(ip->total_length);
	p->seq = rte_be_to_cpu_32(th->sent_seq);
	p->ack = rte_be_to_cpu_32(th->recv_ack);
	p->flags = th->tcp_flags;
	p->win = rte_be_to_cpu_16(th->rx_win);
	p->sport = rte_be_to_cpu_16(th->src_port);
	p->dport = rte_be_to_cpu_16(th->dst_port);
	p->len = tot - 20 - thl;
	memcpy(p->payload, (const uint8_t *)th + thl, RTE_MIN(p->len, (uint32_t)sizeof(p->payload)));
	p->data = p->payload;
	p->optlen = (uint8_t)(thl - 20);
	memcpy(p->opts, th + 1, p->optlen);
	for (unsigned int i = 0; i < p->optlen;) {
		uint8_t k = p->opts[i];

		if (k == 0)
			break;
		if (k == 1) {
			i++;
			continue;
		}
		if (k == 2) {
			p->has_mss = true;
			p->mss = (uint16_t)(p->opts[i + 2] << 8 | p->opts[i + 3]);
		} else if (k == 3) {
			p->has_ws = true;
			p->ws = p->opts[i + 2];
		} else if (k == 4) {
			p->has_sackp = true;
		} else if (k == 8) {
			p->has_ts = true;
			p->tsval = rte_be_to_cpu_32(*(const unaligned_uint32_t *)&p->opts[i + 2]);
			p->tsecr = rte_be_to_cpu_32(*(const unaligned_uint32_t *)&p->opts[i + 6]);
		} else if (k == 5) {
			p->nsack = (uint8_t)((p->opts[i + 1] - 2) / 8);
			for (unsigned int b = 0; b < p->nsack; b++) {
				p->sack[b][0] = rte_be_to_cpu_32(
					*(const unaligned_uint32_t *)&p->opts[i + 2 + 8 * b]);
				p->sack[b][1] = rte_be_to_cpu_32(
					*(const unaligned_uint32_t *)&p->opts[i + 6 + 8 * b]);
			}
		}
		i += p->opts[i + 1];
	}
	return true;
}

/* Pop the oldest captured frame (raw side); NULL if none. */
static inline struct rte_mbuf *
hx_cap_pop(struct hx *h)
{
	struct rte_mbuf *m;

	if (h->ncap == 0)
		return NULL;
	m = h->cap[0];
	memmove(&h->cap[0], &h->cap[1], (h->ncap - 1) * sizeof(h->cap[0]));
	h->ncap--;
	return m;
}

static inline void
hx_cap_clear(struct hx *h)
{
	while (h->ncap > 0)
		rte_pktmbuf_free(hx_cap_pop(h));
}

/* Pop the next captured TCP frame parsed into @p p; false if none. */
static inline bool
hx_cap_tcp(struct hx *h, struct hx_parsed *p)
{
	struct rte_mbuf *m;

	while ((m = hx_cap_pop(h)) != NULL) {
		bool ok = hx_parse(m, p);

		rte_pktmbuf_free(m);
		if (ok)
			return true;
	}
	return false;
}

/* Inject a crafted segment into side @p to from side 1 - to, then step. */
static inline void
hx_inject(struct hx *h, int to, const struct hx_seg *sg)
{
	hx_deliver(h, to, hx_craft(h, 1 - to, to, sg));
	hx_step(h);
}

#endif /* WN_TEST_HARNESS_H */
