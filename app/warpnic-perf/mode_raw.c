/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Modes raw_bw and raw_lat: the baseline every RNIC figure is divided by. Two warpnic-perf
 * processes, each with EAL and one DPDK port (net_memif between them, like the two warpnicd
 * of scripts/wn-pair.sh), exchange raw Ethernet frames: no IP, no TCP, no MPA, no DDP, no
 * rings to another process. What is left is the port's own packet path: mbuf allocation, a
 * copy of the message into the frames, the PMD and the wire.
 *
 * A message of size octets travels as ceil(size / (MTU - 16)) frames of ethertype 0x88B5
 * (IEEE local experimental), each carrying a 16-octet header (struct raw_hdr) and the next
 * piece of the message, padded to the 60-octet Ethernet minimum.
 *
 * raw_bw:  the client streams messages, the server counts and checks them; bandwidth is
 *          message octets the server received whole over the client's time from the first
 *          frame to the server's result.
 * raw_lat: ping-pong; the server answers a whole received message with a whole message of
 *          the same size; latency is half the round trip.
 * The client drives each size with a START / END / RESULT exchange (control frames are
 * resent until answered). The server checks the payload of one message in RAW_CHECK_EVERY
 * (raw_bw) or of every message (raw_lat, both sides); a frame missing or damaged fails the
 * run.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "wn_port.h"

#include "perf.h"

#define RAW_ETHERTYPE 0x88B5
#define RAW_MAGIC 0x574e5046u /* "WNPF" */
#define RAW_BURST 32
#define RAW_NB_DESC 1024
#define RAW_POOL_SIZE 8191
#define RAW_MIN_PAYLOAD 46     /* 60-octet frame without FCS */
#define RAW_MAX_SIZE (8u << 20)
#define RAW_CHECK_EVERY 64     /* raw_bw: messages between payload checks */
#define RAW_RESEND_NS 100000000ull /* control frame resend interval */
#define RAW_LAT_WARMUP 8

enum raw_type {
	RAW_START = 1, /**< client → server: struct raw_ctl run, size, seed; hdr.lat */
	RAW_START_ACK, /**< server → client */
	RAW_DATA,      /**< a piece of message hdr.seq */
	RAW_END,       /**< client → server: ctl.msgs sent */
	RAW_RESULT,    /**< server → client: counters */
	RAW_BYE,       /**< client → server: done, exit */
	RAW_BYE_ACK,
};

struct raw_hdr {
	rte_be32_t magic;
	uint8_t type;      /**< enum raw_type */
	uint8_t lat;       /**< START: 1 for ping-pong */
	rte_be16_t rsvd;
	rte_be32_t seq;    /**< DATA: message number */
	rte_be32_t frag;   /**< DATA: frame index within the message */
} __rte_packed;
static_assert(sizeof(struct raw_hdr) == 16, "raw header size");

struct raw_ctl {
	rte_be32_t run;
	rte_be32_t size;
	rte_be64_t seed;
	rte_be64_t msgs;     /**< END: sent; RESULT: received whole */
	rte_be64_t frames;   /**< RESULT: DATA frames received */
	rte_be64_t lost;     /**< RESULT: frames missing or out of order */
	rte_be64_t bad;      /**< RESULT: frames whose payload differs */
	rte_be64_t checked;  /**< RESULT: messages whose payload was compared */
} __rte_packed;

struct raw_ctx {
	const struct wn_perf_params *p;
	uint16_t port;
	struct rte_mempool *pool;
	struct rte_ether_addr mac, peer;
	uint32_t frag;       /* message octets per frame */
	/* the current size */
	uint32_t run, size, frags;
	uint64_t seed;
	uint8_t *pat;        /* the message as it must arrive */
	bool lat;
	/* receive state */
	uint32_t rx_seq, rx_frag;
	uint64_t rx_msgs, rx_frames, rx_lost, rx_bad, rx_checked;
	bool rx_check;       /* compare the payload of the message being received */
};

static int
raw_port_setup(struct raw_ctx *c)
{
	struct wn_port_conf pc = {0};
	struct rte_eth_link link;
	uint64_t deadline, tx_capa, rx_capa;
	uint16_t mtu = 1500, pid;
	int socket, rc;
	bool found = false;

	RTE_ETH_FOREACH_DEV(pid) {
		c->port = pid;
		found = true;
		break;
	}
	if (!found) {
		fprintf(stderr, "raw modes need a port: give one in the EAL options, e.g. "
				"--vdev net_memif0,role=server,socket=/tmp/perf.sock\n");
		return -ENODEV;
	}
	socket = rte_eth_dev_socket_id(c->port);
	if (socket < 0)
		socket = 0;
	c->pool = rte_pktmbuf_pool_create("perf_raw", RAW_POOL_SIZE, 256, 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE, socket);
	if (c->pool == NULL)
		return -ENOMEM;
	pc.port_id = c->port;
	pc.nb_queues = 1;
	pc.nb_desc = RAW_NB_DESC;
	pc.pool = c->pool;
	rc = wn_net_port_setup(&pc, &tx_capa, &rx_capa);
	if (rc != 0) {
		fprintf(stderr, "raw: port %u set-up: %s\n", c->port, strerror(-rc));
		return rc;
	}
	rte_eth_macaddr_get(c->port, &c->mac);
	if (rte_eth_dev_get_mtu(c->port, &mtu) != 0 || mtu > 1500)
		mtu = 1500; /* frames of the MTU warpnicd uses by default */
	c->frag = mtu - (uint32_t)sizeof(struct raw_hdr);
	/* net_memif: the link comes up when the peer process connects; a memif server must be
	 * started before its client connects (scripts wait for this line) */
	if (c->p->server) {
		printf("raw: port %u started, waiting for the peer\n", c->port);
		fflush(stdout);
	}
	deadline = wn_perf_now_ns() + (uint64_t)(c->p->timeout * 1e9);
	if (c->p->server && !c->p->timeout_set)
		deadline = UINT64_MAX; /* a server waits for its client */
	for (;;) {
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(c->port, &link) != 0)
			link.link_status = RTE_ETH_LINK_DOWN;
		if (link.link_status == RTE_ETH_LINK_UP)
			return 0;
		if (wn_perf_now_ns() > deadline) {
			fprintf(stderr, "raw: port %u: link still down after %.0f s (is the peer "
					"running?)\n", c->port, c->p->timeout);
			return -ETIMEDOUT;
		}
		rte_delay_us_sleep(10000);
	}
}

/* Start a frame of @p payload octets (at least RAW_MIN_PAYLOAD); @return the header. */
static struct raw_hdr *
raw_frame(struct raw_ctx *c, struct rte_mbuf *m, uint8_t type, uint32_t payload)
{
	struct rte_ether_hdr *eh;
	struct raw_hdr *h;

	if (payload < RAW_MIN_PAYLOAD)
		payload = RAW_MIN_PAYLOAD;
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, sizeof(*eh) + payload);
	if (eh == NULL)
		return NULL;
	eh->dst_addr = c->peer;
	eh->src_addr = c->mac;
	eh->ether_type = rte_cpu_to_be_16(RAW_ETHERTYPE);
	h = (struct raw_hdr *)(eh + 1);
	memset(h, 0, sizeof(*h));
	h->magic = rte_cpu_to_be_32(RAW_MAGIC);
	h->type = type;
	return h;
}

/* Send all @p n frames (the PMD may take fewer per call). */
static void
raw_tx_all(struct raw_ctx *c, struct rte_mbuf **m, uint16_t n)
{
	uint16_t sent = 0;

	while (sent < n)
		sent += rte_eth_tx_burst(c->port, 0, m + sent, n - sent);
}

static int
raw_send_ctl(struct raw_ctx *c, uint8_t type, const struct raw_ctl *ctl)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(c->pool);
	struct raw_hdr *h;

	if (m == NULL)
		return -ENOMEM;
	h = raw_frame(c, m, type, sizeof(*h) + sizeof(*ctl));
	if (h == NULL) {
		rte_pktmbuf_free(m);
		return -ENOSPC;
	}
	h->lat = c->lat;
	memcpy(h + 1, ctl, sizeof(*ctl));
	raw_tx_all(c, &m, 1);
	return 0;
}

/* Build frames @p first.. of message @p seq into @p m (at most @p room); @return how many. */
static uint16_t
raw_build_msg(struct raw_ctx *c, struct rte_mbuf **m, uint16_t room, uint32_t seq,
	      uint32_t first)
{
	uint16_t n = 0;

	if (rte_pktmbuf_alloc_bulk(c->pool, m, room) != 0)
		return 0;
	for (uint32_t f = first; f < c->frags && n < room; f++, n++) {
		uint32_t off = f * c->frag;
		uint32_t len = RTE_MIN(c->frag, c->size - off);
		struct raw_hdr *h = raw_frame(c, m[n], RAW_DATA, sizeof(*h) + len);

		h->seq = rte_cpu_to_be_32(seq);
		h->frag = rte_cpu_to_be_32(f);
		memcpy(h + 1, c->pat + off, len);
	}
	for (uint16_t i = n; i < room; i++)
		rte_pktmbuf_free(m[i]);
	return n;
}

/* Send message @p seq whole. */
static int
raw_send_msg(struct raw_ctx *c, uint32_t seq)
{
	struct rte_mbuf *m[RAW_BURST];

	for (uint32_t f = 0; f < c->frags;) {
		uint16_t n = raw_build_msg(c, m, (uint16_t)RTE_MIN(c->frags - f, (uint32_t)RAW_BURST), seq,
					   f);
		if (n == 0)
			return -ENOMEM;
		raw_tx_all(c, m, n);
		f += n;
	}
	return 0;
}

static void
raw_rx_reset(struct raw_ctx *c)
{
	c->rx_seq = 0;
	c->rx_frag = 0;
	c->rx_msgs = c->rx_frames = c->rx_lost = c->rx_bad = c->rx_checked = 0;
	c->rx_check = false;
}

/*
 * Account one DATA frame. @return true when it completed a message (in order, every frame
 * seen). Frames are expected in (seq, frag) order; a gap counts the frames skipped as lost.
 */
static bool
raw_rx_data(struct raw_ctx *c, const struct raw_hdr *h, uint32_t len, bool check_all)
{
	uint32_t seq = rte_be_to_cpu_32(h->seq), frag = rte_be_to_cpu_32(h->frag);
	uint32_t off = frag * c->frag, want, room = c->size - off;

	c->rx_frames++;
	if (frag >= c->frags) {
		c->rx_bad++;
		return false;
	}
	if (seq != c->rx_seq || frag != c->rx_frag) {
		uint64_t exp = (uint64_t)c->rx_seq * c->frags + c->rx_frag;
		uint64_t got = (uint64_t)seq * c->frags + frag;

		c->rx_lost += got > exp ? got - exp : 1;
		c->rx_seq = seq;
		c->rx_frag = frag;
		c->rx_check = false;
		if (frag != 0)
			return false; /* the message is incomplete: wait for the next one */
	}
	if (frag == 0)
		c->rx_check = check_all || seq % RAW_CHECK_EVERY == 0;
	want = RTE_MIN(c->frag, room);
	if (len < sizeof(*h) + want ||
	    (c->rx_check && memcmp(h + 1, c->pat + off, want) != 0))
		c->rx_bad++;
	if (++c->rx_frag < c->frags)
		return false;
	c->rx_frag = 0;
	c->rx_seq++;
	c->rx_msgs++;
	if (c->rx_check)
		c->rx_checked++;
	return true;
}

/* @return the warpnic-perf header of @p m, or NULL for a foreign frame. */
static const struct raw_hdr *
raw_hdr_of(const struct rte_mbuf *m, uint32_t *len)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct raw_hdr *h = (const struct raw_hdr *)(eh + 1);

	if (m->data_len < sizeof(*eh) + sizeof(*h) ||
	    eh->ether_type != rte_cpu_to_be_16(RAW_ETHERTYPE) ||
	    h->magic != rte_cpu_to_be_32(RAW_MAGIC))
		return NULL;
	*len = m->data_len - (uint32_t)sizeof(*eh);
	return h;
}

static int
raw_set_size(struct raw_ctx *c, uint32_t run, uint32_t size, uint64_t seed, bool lat)
{
	uint8_t *pat = realloc(c->pat, size);

	if (pat == NULL)
		return -ENOMEM;
	c->pat = pat;
	c->run = run;
	c->size = size;
	c->seed = seed;
	c->lat = lat;
	c->frags = (size + c->frag - 1) / c->frag;
	wn_perf_pattern_fill(c->pat, size, seed, 0);
	raw_rx_reset(c);
	return 0;
}

/* ------------------------------------------------------------------------------- server */

static void
raw_free(struct rte_mbuf **m, uint16_t from, uint16_t n)
{
	for (uint16_t k = from; k < n; k++)
		rte_pktmbuf_free(m[k]);
}

static int
raw_serve(struct raw_ctx *c)
{
	struct rte_mbuf *m[RAW_BURST];
	uint64_t idle_since = wn_perf_now_ns(), limit = (uint64_t)(c->p->timeout * 1e9);
	uint64_t sizes = 0;
	bool started = false;

	for (;;) {
		uint16_t n = rte_eth_rx_burst(c->port, 0, m, RAW_BURST);
		uint64_t now = wn_perf_now_ns();

		if (n == 0 && now - idle_since > limit && (started || c->p->timeout_set)) {
			fprintf(stderr, "raw server: no frame from the client for %.0f s\n",
				c->p->timeout);
			return -ETIMEDOUT;
		}
		if (n > 0)
			idle_since = now;
		for (uint16_t i = 0; i < n; i++) {
			uint32_t len;
			const struct raw_hdr *h = raw_hdr_of(m[i], &len);
			struct raw_ctl ctl;
			int rc = 0;

			if (h == NULL) {
				rte_pktmbuf_free(m[i]);
				continue;
			}
			memset(&ctl, 0, sizeof(ctl));
			if (h->type != RAW_DATA) {
				struct rte_ether_hdr *eh =
					rte_pktmbuf_mtod(m[i], struct rte_ether_hdr *);

				c->peer = eh->src_addr; /* answer whoever drives us */
				if (len >= sizeof(*h) + sizeof(ctl))
					memcpy(&ctl, h + 1, sizeof(ctl));
			}
			switch (h->type) {
			case RAW_DATA:
				if (started && raw_rx_data(c, h, len, c->lat) && c->lat)
					rc = raw_send_msg(c, c->rx_seq - 1);
				break;
			case RAW_START:
				if (!started || rte_be_to_cpu_32(ctl.run) != c->run) {
					uint32_t size = rte_be_to_cpu_32(ctl.size);

					if (size == 0 || size > RAW_MAX_SIZE) {
						rc = -EPROTO;
						break;
					}
					rc = raw_set_size(c, rte_be_to_cpu_32(ctl.run), size,
							  rte_be_to_cpu_64(ctl.seed), h->lat != 0);
					started = rc == 0;
					sizes++;
				}
				if (rc == 0)
					rc = raw_send_ctl(c, RAW_START_ACK, &ctl);
				break;
			case RAW_END:
				ctl.msgs = rte_cpu_to_be_64(c->rx_msgs);
				ctl.frames = rte_cpu_to_be_64(c->rx_frames);
				ctl.lost = rte_cpu_to_be_64(c->rx_lost);
				ctl.bad = rte_cpu_to_be_64(c->rx_bad);
				ctl.checked = rte_cpu_to_be_64(c->rx_checked);
				rc = raw_send_ctl(c, RAW_RESULT, &ctl);
				break;
			case RAW_BYE:
				raw_free(m, i, n);
				rc = raw_send_ctl(c, RAW_BYE_ACK, &ctl);
				fprintf(stderr, "raw server: served %" PRIu64 " sizes\n", sizes);
				return rc;
			default:
				break;
			}
			rte_pktmbuf_free(m[i]);
			if (rc != 0) {
				raw_free(m, i + 1, n);
				return rc;
			}
		}
	}
}

/* ------------------------------------------------------------------------------- client */

/*
 * Send control frame @p type (body @p ctl) every RAW_RESEND_NS until a frame of type @p want
 * for the current run arrives, within @p secs; its body replaces @p ctl. Other frames that
 * arrive meanwhile (late DATA) are dropped.
 */
static int
raw_xchg(struct raw_ctx *c, uint8_t type, uint8_t want, struct raw_ctl *ctl, double secs)
{
	struct rte_mbuf *m[RAW_BURST];
	uint64_t start = wn_perf_now_ns(), last = 0, limit = (uint64_t)(secs * 1e9);
	uint32_t run = c->run;

	for (;;) {
		uint64_t now = wn_perf_now_ns();
		uint16_t n;

		if (now - last > RAW_RESEND_NS) {
			int rc = raw_send_ctl(c, type, ctl);

			if (rc != 0)
				return rc;
			last = now;
		}
		if (now - start > limit)
			return -ETIMEDOUT;
		n = rte_eth_rx_burst(c->port, 0, m, RAW_BURST);
		for (uint16_t i = 0; i < n; i++) {
			uint32_t len;
			const struct raw_hdr *h = raw_hdr_of(m[i], &len);

			if (h != NULL && h->type == want && len >= sizeof(*h) + sizeof(*ctl)) {
				struct raw_ctl r;

				memcpy(&r, h + 1, sizeof(r));
				if (rte_be_to_cpu_32(r.run) == run) {
					*ctl = r;
					raw_free(m, i, n);
					return 0;
				}
			}
			rte_pktmbuf_free(m[i]);
		}
	}
}

static int
raw_start(struct raw_ctx *c, uint32_t size, bool lat)
{
	struct raw_ctl ctl;
	int rc = raw_set_size(c, c->run + 1, size, wn_perf_now_ns() ^ ((uint64_t)size << 40),
			      lat);

	if (rc != 0)
		return rc;
	memset(&ctl, 0, sizeof(ctl));
	ctl.run = rte_cpu_to_be_32(c->run);
	ctl.size = rte_cpu_to_be_32(size);
	ctl.seed = rte_cpu_to_be_64(c->seed);
	rc = raw_xchg(c, RAW_START, RAW_START_ACK, &ctl, c->p->timeout);
	if (rc == -ETIMEDOUT)
		fprintf(stderr, "raw client: no answer from the server for %.0f s\n",
			c->p->timeout);
	return rc;
}

/* END / RESULT; fails the size when the server missed or saw damaged frames. */
static int
raw_end(struct raw_ctx *c, uint64_t sent, uint64_t *msgs)
{
	struct raw_ctl ctl;
	uint64_t lost, bad, checked;
	int rc;

	memset(&ctl, 0, sizeof(ctl));
	ctl.run = rte_cpu_to_be_32(c->run);
	ctl.msgs = rte_cpu_to_be_64(sent);
	rc = raw_xchg(c, RAW_END, RAW_RESULT, &ctl, c->p->timeout);
	if (rc != 0) {
		fprintf(stderr, "raw client: the server did not report size %" PRIu32 "\n",
			c->size);
		return rc;
	}
	*msgs = rte_be_to_cpu_64(ctl.msgs);
	lost = rte_be_to_cpu_64(ctl.lost);
	bad = rte_be_to_cpu_64(ctl.bad);
	checked = rte_be_to_cpu_64(ctl.checked);
	if (*msgs != sent || lost != 0 || bad != 0 || checked == 0) {
		fprintf(stderr, "raw: size %" PRIu32 ": sent %" PRIu64 " messages, server got %"
			PRIu64 " whole, %" PRIu64 " frames lost, %" PRIu64 " damaged, %" PRIu64
			" checked\n", c->size, sent, *msgs, lost, bad, checked);
		return -EIO;
	}
	return 0;
}

static int
raw_bw_size(struct raw_ctx *c, struct wn_perf_row *row)
{
	struct rte_mbuf *m[RAW_BURST];
	uint64_t iters, msgs = 0, got, frames = 0;
	uint32_t seq = 0, frag = 0;
	double secs, t0, t1, deadline;
	int rc;

	wn_perf_budget(c->p, 5000, &iters, &secs);
	rc = raw_start(c, row->size, false);
	if (rc != 0)
		return rc;
	t0 = wn_perf_now();
	deadline = t0 + secs;
	while (msgs < iters) {
		uint16_t n = 0, sent = 0;

		/* whole messages only: a burst may span several */
		while (n < RAW_BURST && msgs < iters) {
			uint16_t k = raw_build_msg(c, m + n,
						   (uint16_t)RTE_MIN(c->frags - frag,
								     (uint32_t)(RAW_BURST - n)),
						   seq, frag);
			if (k == 0)
				break;
			n += k;
			frag += k;
			if (frag == c->frags) {
				frag = 0;
				seq++;
				msgs++;
			}
		}
		if (n == 0) {
			if (wn_perf_now() > deadline + c->p->timeout)
				return -ENOMEM; /* mbufs never came back */
			continue;
		}
		while (sent < n)
			sent += rte_eth_tx_burst(c->port, 0, m + sent, n - sent);
		frames += n;
		if (frag == 0 && wn_perf_now() > deadline)
			break;
	}
	rc = raw_end(c, msgs, &got);
	t1 = wn_perf_now();
	if (rc != 0)
		return rc;
	row->val[0] = (double)got * c->size * 8 / (t1 - t0) / 1e9;
	row->val[1] = (double)got / (t1 - t0) / 1e6;
	row->val[2] = (double)frames / (t1 - t0) / 1e6;
	row->val[3] = (double)got;
	return 0;
}

/* Wait for the answer to message @p seq, whole; @return 0, -ETIMEDOUT, -EIO. */
static int
raw_wait_msg(struct raw_ctx *c, uint32_t seq, uint64_t limit_ns)
{
	struct rte_mbuf *m[RAW_BURST];
	uint64_t start = 0;
	uint32_t spins = 0;

	for (;;) {
		uint16_t n = rte_eth_rx_burst(c->port, 0, m, RAW_BURST);
		bool done = false;

		for (uint16_t i = 0; i < n; i++) {
			uint32_t len;
			const struct raw_hdr *h = raw_hdr_of(m[i], &len);

			if (h != NULL && h->type == RAW_DATA && raw_rx_data(c, h, len, true) &&
			    c->rx_seq - 1 == seq)
				done = true;
			rte_pktmbuf_free(m[i]);
		}
		if (done)
			return c->rx_bad == 0 && c->rx_lost == 0 ? 0 : -EIO;
		if (n == 0 && ++spins % 1024 == 0) {
			uint64_t now = wn_perf_now_ns();

			if (start == 0)
				start = now;
			else if (now - start > limit_ns)
				return -ETIMEDOUT;
		}
	}
}

static int
raw_lat_size(struct raw_ctx *c, struct wn_perf_row *row)
{
	struct wn_perf_lat lat;
	uint64_t iters, got, limit = (uint64_t)(c->p->timeout * 1e9);
	double secs, deadline;
	uint32_t seq = 0;
	int rc;

	wn_perf_budget(c->p, 1000, &iters, &secs);
	rc = wn_perf_lat_init(&lat, iters == UINT64_MAX ? 1u << 20 : iters);
	if (rc != 0)
		return rc;
	rc = raw_start(c, row->size, true);
	deadline = wn_perf_now() + secs;
	for (uint64_t i = 0; rc == 0 && i < RAW_LAT_WARMUP + lat.cap; i++, seq++) {
		uint64_t t0 = wn_perf_now_ns();

		rc = raw_send_msg(c, seq);
		if (rc == 0)
			rc = raw_wait_msg(c, seq, limit);
		if (rc != 0)
			break;
		if (i >= RAW_LAT_WARMUP) {
			lat.ns[lat.n++] = (double)(wn_perf_now_ns() - t0) / 2;
			if (wn_perf_now() > deadline) {
				seq++;
				break;
			}
		}
	}
	if (rc == -ETIMEDOUT)
		fprintf(stderr, "raw_lat: size %" PRIu32 ": no answer to message %" PRIu32
			" within %.0f s\n", c->size, seq, c->p->timeout);
	else if (rc == -EIO)
		fprintf(stderr, "raw_lat: size %" PRIu32 ": answers lost %" PRIu64
			" or damaged %" PRIu64 " frames\n", c->size, c->rx_lost, c->rx_bad);
	if (rc == 0)
		rc = raw_end(c, seq, &got);
	if (rc == 0)
		wn_perf_lat_fill(&lat, row, 0);
	wn_perf_lat_free(&lat);
	return rc;
}

static int
raw_parse(struct wn_perf_params *p)
{
	if (!p->server && p->client == NULL) {
		fprintf(stderr, "%s: give --server or --client MAC|any\n", p->mode);
		return -EINVAL;
	}
	if (p->qps != 1 || p->bind != NULL || p->ctl != NULL) {
		fprintf(stderr, "%s: --qps, --bind and --ctl do not apply\n", p->mode);
		return -EINVAL;
	}
	if (p->server && (p->nb_sizes > 0 || p->sweep || p->json != NULL || p->csv != NULL)) {
		fprintf(stderr, "%s: the client chooses sizes and reports\n", p->mode);
		return -EINVAL;
	}
	return wn_perf_sizes_default(p, p->mode, strcmp(p->mode, "raw_bw") == 0 ? 65536 : 2, 1,
				     RAW_MAX_SIZE);
}

static int
raw_run(const struct wn_perf_params *p, bool lat)
{
	static struct wn_perf_report rep;
	struct raw_ctx c;
	struct raw_ctl ctl;
	int rc;

	memset(&c, 0, sizeof(c));
	c.p = p;
	memset(&c.peer, 0xff, sizeof(c.peer));
	if (p->client != NULL && strcmp(p->client, "any") != 0 &&
	    rte_ether_unformat_addr(p->client, &c.peer) != 0) {
		fprintf(stderr, "%s: --client wants a MAC address or \"any\", not '%s'\n", p->mode,
			p->client);
		return -EINVAL;
	}
	rc = raw_port_setup(&c);
	if (rc == 0 && p->server)
		rc = raw_serve(&c);
	if (rc != 0 || p->server)
		goto out;

	memset(&rep, 0, sizeof(rep));
	rep.mode = lat ? "raw_lat" : "raw_bw";
	rep.title = lat ? "raw_lat: raw Ethernet ping-pong over the port, half the round trip (us)"
			: "raw_bw: raw Ethernet frames over the port, message octets (Gbit/s = 1e9 "
			  "bit/s)";
	rep.iters = p->iters;
	rep.reps = p->reps;
	if (lat) {
		rep.nb_cols = wn_perf_lat_cols(&rep, 0);
	} else {
		rep.nb_cols = 4;
		rep.col[0] = "Gbit/s";
		rep.col[1] = "Mmsg/s";
		rep.col[2] = "Mpps";
		rep.col[3] = "iters";
	}
	for (unsigned int i = 0; i < p->nb_sizes && rc == 0; i++) {
		struct wn_perf_row *row = wn_perf_report_row(&rep, rep.mode, p->sizes[i], NULL,
							     NULL);

		struct wn_perf_row rep_rows[WN_PERF_MAX_REPS];

		if (row == NULL) {
			rc = -ENOSPC;
			break;
		}
		for (unsigned int k = 0; k < p->reps && rc == 0; k++) {
			rep_rows[k] = *row;
			rc = lat ? raw_lat_size(&c, &rep_rows[k]) : raw_bw_size(&c, &rep_rows[k]);
		}
		if (rc == 0)
			wn_perf_row_median(row, rep_rows, p->reps, lat ? 1 : 0);
	}
	/* let the server go, even after a failure */
	memset(&ctl, 0, sizeof(ctl));
	ctl.run = rte_cpu_to_be_32(c.run);
	if (raw_xchg(&c, RAW_BYE, RAW_BYE_ACK, &ctl, 1.0) != 0)
		fprintf(stderr, "%s: the server did not acknowledge the end\n", rep.mode);
	if (rc == 0)
		rc = wn_perf_report_emit(&rep, p);
out:
	/* the port stays up: wn_net_port_shutdown() at exit knows what net_memif tolerates */
	free(c.pat);
	return rc;
}

static int
raw_bw_run(const struct wn_perf_params *p)
{
	return raw_run(p, false);
}

static int
raw_lat_run(const struct wn_perf_params *p)
{
	return raw_run(p, true);
}

const struct wn_perf_mode wn_perf_mode_raw_bw = {
	.name = "raw_bw",
	.help = "baseline: raw Ethernet frame bandwidth over the port (two processes)",
	.needs_eal = true,
	.parse = raw_parse,
	.run = raw_bw_run,
};

const struct wn_perf_mode wn_perf_mode_raw_lat = {
	.name = "raw_lat",
	.help = "baseline: raw Ethernet ping-pong latency over the port (two processes)",
	.needs_eal = true,
	.parse = raw_parse,
	.run = raw_lat_run,
};
