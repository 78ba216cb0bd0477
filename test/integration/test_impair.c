/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_wn_impair over a net_ring "wire": the test plays the far end through the
 * underlying port's rings, so every packet the impairer emits is seen exactly.
 * If this fails, the fault injector used by the integration and interop suites
 * misbehaves: wrong rates, lost or altered data, or non-reproducible runs.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "wn_impair.h"

#define PAYLOAD 64
#define HDRS                                                                                       \
	(sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_udp_hdr))

static struct rte_mempool *pool;
static unsigned int wire_no;

/* A wire: the underlying port U and the two rings behind it. */
struct wire {
	char uname[64];
	struct rte_ring *to_u;   /* what U receives */
	struct rte_ring *from_u; /* what U sent */
	uint16_t u;
	int face;
};

static void
wire_open(struct wire *w, const char *fmt, ...)
{
	char rname[32], args[256], base[32];
	va_list ap;
	int id;

	memset(w, 0, sizeof(*w));
	snprintf(base, sizeof(base), "u%u", wire_no);
	snprintf(rname, sizeof(rname), "w%u_in", wire_no);
	w->to_u = rte_ring_create(rname, 16384, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(rname, sizeof(rname), "w%u_out", wire_no);
	w->from_u = rte_ring_create(rname, 16384, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	assert_non_null(w->to_u);
	assert_non_null(w->from_u);
	id = rte_eth_from_rings(base, &w->to_u, 1, &w->from_u, 1, 0);
	assert_true(id >= 0);
	w->u = (uint16_t)id;
	assert_int_equal(rte_eth_dev_get_name_by_port(w->u, w->uname), 0);

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(base, sizeof(base), "net_wn_impair%u", wire_no);
	wire_no++;
	{
		char full[640];
		struct rte_eth_conf pc;

		snprintf(full, sizeof(full), "port=%s%s%s", w->uname, args[0] ? "," : "", args);
		w->face = wn_impair_create(base, full, pool);
		assert_true(w->face >= 0);
		memset(&pc, 0, sizeof(pc));
		assert_int_equal(rte_eth_dev_configure(w->face, 1, 1, &pc), 0);
		assert_int_equal(rte_eth_rx_queue_setup(w->face, 0, 512, 0, NULL, pool), 0);
		assert_int_equal(rte_eth_tx_queue_setup(w->face, 0, 512, 0, NULL), 0);
		assert_int_equal(rte_eth_dev_start(w->face), 0);
	}
}

static void
wire_close(struct wire *w)
{
	void *m;

	assert_int_equal(wn_impair_destroy(w->face), 0);
	assert_int_equal(rte_vdev_uninit(w->uname), 0);
	while (rte_ring_dequeue(w->to_u, &m) == 0)
		rte_pktmbuf_free(m);
	while (rte_ring_dequeue(w->from_u, &m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(w->to_u);
	rte_ring_free(w->from_u);
}

static uint8_t
pattern(uint32_t seq, unsigned int i)
{
	return (uint8_t)(seq * 31u + i * 7u + (seq >> 8));
}

static struct rte_mbuf *
make_pkt(uint32_t seq)
{
	uint8_t frame[HDRS + PAYLOAD];
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)frame;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eh + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint8_t *pl = (uint8_t *)(udp + 1);
	char *dst;
	unsigned int i;

	assert_non_null(m);
	memset(frame, 0, sizeof(frame));
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	eh->dst_addr.addr_bytes[0] = 0x02;
	eh->src_addr.addr_bytes[0] = 0x02;
	eh->src_addr.addr_bytes[5] = 1;
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(sizeof(*ip) + sizeof(*udp) + PAYLOAD);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(0xC6120001); /* 198.18.0.1 */
	ip->dst_addr = rte_cpu_to_be_32(0xC6120002);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16(9);
	udp->dst_port = rte_cpu_to_be_16(9);
	udp->dgram_len = rte_cpu_to_be_16(sizeof(*udp) + PAYLOAD);
	memcpy(pl, &seq, sizeof(seq));
	for (i = sizeof(seq); i < PAYLOAD; i++)
		pl[i] = pattern(seq, i);
	dst = rte_pktmbuf_append(m, sizeof(frame));
	assert_non_null(dst);
	memcpy(dst, frame, sizeof(frame));
	return m;
}

/* @return the sequence number, or -1 if any octet differs from what make_pkt built. */
static int64_t
check_pkt(const struct rte_mbuf *m)
{
	struct rte_mbuf *ref;
	uint32_t seq;
	int64_t ret;

	if (m->pkt_len != HDRS + PAYLOAD || m->nb_segs != 1)
		return -1;
	memcpy(&seq, rte_pktmbuf_mtod_offset(m, const uint8_t *, HDRS), sizeof(seq));
	ref = make_pkt(seq);
	ret = memcmp(rte_pktmbuf_mtod(ref, void *), rte_pktmbuf_mtod(m, void *),
		     HDRS + PAYLOAD) == 0 ? (int64_t)seq : -1;
	rte_pktmbuf_free(ref);
	return ret;
}

/* Arrival log of one run. */
struct arrivals {
	uint32_t *seq;
	uint32_t n;
	uint32_t bad; /* packets whose content differs from what was sent */
};

static void
arrivals_add(struct arrivals *a, struct rte_mbuf *m, uint32_t cap)
{
	int64_t s = check_pkt(m);

	if (s < 0)
		a->bad++;
	else if (a->n < cap)
		a->seq[a->n++] = (uint32_t)s;
	rte_pktmbuf_free(m);
}

/*
 * Push @n packets through one direction and collect what comes out, until every
 * packet is accounted for by the counters (held/delayed ones are released by the
 * impairer's own timeout). The deadline only stops a broken build from hanging.
 */
static void
run(struct wire *w, bool tx_dir, uint32_t n, struct arrivals *a, struct wn_impair_stats *st)
{
	struct rte_mbuf *burst[32];
	uint64_t deadline = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	uint32_t sent = 0, cap = 3 * n;
	unsigned int i, k;

	a->seq = calloc(cap, sizeof(*a->seq));
	a->n = 0;
	a->bad = 0;
	assert_non_null(a->seq);
	for (;;) {
		if (sent < n) {
			k = RTE_MIN(32u, n - sent);
			for (i = 0; i < k; i++)
				burst[i] = make_pkt(sent + i);
			if (tx_dir) {
				k = rte_eth_tx_burst(w->face, 0, burst, (uint16_t)k);
			} else {
				k = rte_ring_enqueue_burst(w->to_u, (void **)burst, k, NULL);
			}
			for (i = k; i < RTE_MIN(32u, n - sent); i++)
				rte_pktmbuf_free(burst[i]);
			sent += k;
		}
		assert_true(wn_impair_poll(w->face) >= 0);
		if (tx_dir) {
			while ((k = rte_ring_dequeue_burst(w->from_u, (void **)burst, 32,
							   NULL)) > 0)
				for (i = 0; i < k; i++)
					arrivals_add(a, burst[i], cap);
		} else {
			while ((k = rte_eth_rx_burst(w->face, 0, burst, 32)) > 0)
				for (i = 0; i < k; i++)
					arrivals_add(a, burst[i], cap);
		}
		assert_int_equal(wn_impair_stats_get(w->face, tx_dir ? NULL : st,
						     tx_dir ? st : NULL), 0);
		if (sent == n && st->in == n &&
		    a->n + a->bad == st->in - st->drop + st->dup - st->overflow)
			break;
		assert_true(rte_get_tsc_cycles() < deadline);
	}
}

static void
assert_rate(uint64_t got, uint64_t trials, double p)
{
	double mean = trials * p, sd = sqrt(trials * p * (1 - p));

	/* 6 sigma: a correct implementation essentially never fails, a wrong rate does */
	assert_true((double)got >= mean - 6 * sd - 1);
	assert_true((double)got <= mean + 6 * sd + 1);
}

static void
test_passthrough(void **state)
{
	struct wn_impair_stats st;
	struct arrivals a;
	struct wire w;
	uint32_t i;
	int dir;

	(void)state;
	for (dir = 0; dir < 2; dir++) {
		wire_open(&w, "seed=7");
		run(&w, dir == 1, 3000, &a, &st);
		assert_int_equal(a.bad, 0);
		assert_int_equal(a.n, 3000);
		for (i = 0; i < a.n; i++)
			assert_int_equal(a.seq[i], i);
		assert_int_equal(st.in, 3000);
		assert_int_equal(st.out, 3000);
		assert_int_equal(st.drop + st.dup + st.reorder + st.corrupt + st.delay, 0);
		free(a.seq);
		wire_close(&w);
	}
}

static void
check_rates_run(bool tx_dir)
{
	const uint32_t n = 20000;
	struct wn_impair_stats st, other;
	struct arrivals a;
	struct wire w;
	uint8_t *seen;
	uint32_t i, distinct = 0, extra = 0, inversions = 0, max_seen = 0;

	wire_open(&w, "%s_drop=0.1,%s_dup=0.05,%s_reorder=0.05,seed=42", tx_dir ? "tx" : "rx",
		  tx_dir ? "tx" : "rx", tx_dir ? "tx" : "rx");
	run(&w, tx_dir, n, &a, &st);
	assert_int_equal(a.bad, 0); /* corrupt=0: data intact */
	assert_int_equal(st.overflow, 0);
	assert_int_equal(st.nomem, 0);
	assert_int_equal(a.n, n - st.drop + st.dup);
	assert_int_equal(st.out, a.n);
	assert_rate(st.drop, n, 0.1);
	assert_rate(st.dup, n - st.drop, 0.05);
	assert_rate(st.reorder, n - st.drop + st.dup, 0.05);

	seen = calloc(n, 1);
	assert_non_null(seen);
	for (i = 0; i < a.n; i++) {
		assert_true(a.seq[i] < n);
		if (seen[a.seq[i]]++ == 0)
			distinct++;
		else
			extra++;
		if (i > 0 && a.seq[i] < max_seen)
			inversions++;
		if (a.seq[i] > max_seen)
			max_seen = a.seq[i];
	}
	/* what was not dropped arrived, exactly once more for each duplicate */
	assert_int_equal(distinct, n - st.drop);
	assert_int_equal(extra, st.dup);
	/* held packets arrive after later ones */
	assert_true(inversions > 0);
	assert_true(inversions <= st.reorder);
	assert_true(inversions >= st.reorder / 2);
	/* the other direction was left alone */
	assert_int_equal(wn_impair_stats_get(w.face, tx_dir ? &other : NULL,
					     tx_dir ? NULL : &other), 0);
	assert_int_equal(other.drop + other.dup + other.reorder, 0);
	free(seen);
	free(a.seq);
	wire_close(&w);
}

static void
test_rates_tx(void **state)
{
	(void)state;
	check_rates_run(true);
}

static void
test_rates_rx(void **state)
{
	(void)state;
	check_rates_run(false);
}

static void
test_seed_reproducible(void **state)
{
	struct wn_impair_stats st;
	struct arrivals a[3];
	struct wire w;
	uint64_t seeds[3] = {5, 5, 6};
	int r;

	(void)state;
	for (r = 0; r < 3; r++) {
		wire_open(&w, "drop=0.05,dup=0.05,reorder=0.05,reorder_us=1000000,seed=%" PRIu64,
			  seeds[r]);
		run(&w, false, 4000, &a[r], &st);
		wire_close(&w);
	}
	assert_int_equal(a[0].n, a[1].n);
	assert_memory_equal(a[0].seq, a[1].seq, a[0].n * sizeof(uint32_t));
	assert_true(a[0].n != a[2].n ||
		    memcmp(a[0].seq, a[2].seq, a[0].n * sizeof(uint32_t)) != 0);
	for (r = 0; r < 3; r++)
		free(a[r].seq);
}

static void
test_corrupt_payload_only(void **state)
{
	const uint32_t n = 500;
	struct rte_mbuf *burst[32], *ref;
	struct wn_impair_stats st;
	struct wire w;
	uint32_t got = 0, sent = 0, i, k, j;
	uint64_t deadline = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();

	(void)state;
	wire_open(&w, "rx_corrupt=1");
	while (got < n) {
		if (sent < n) {
			/* keep the seq readable: feed in order, match by arrival order */
			burst[0] = make_pkt(sent);
			if (rte_ring_enqueue(w.to_u, burst[0]) == 0)
				sent++;
			else
				rte_pktmbuf_free(burst[0]);
		}
		assert_true(wn_impair_poll(w.face) >= 0);
		k = rte_eth_rx_burst(w.face, 0, burst, 32);
		for (i = 0; i < k; i++, got++) {
			const uint8_t *p = rte_pktmbuf_mtod(burst[i], const uint8_t *);
			unsigned int diff = 0, where = 0;

			ref = make_pkt(got);
			assert_int_equal(burst[i]->pkt_len, ref->pkt_len);
			for (j = 0; j < ref->pkt_len; j++) {
				if (p[j] != rte_pktmbuf_mtod(ref, const uint8_t *)[j]) {
					diff++;
					where = j;
				}
			}
			/* exactly one octet, past Ethernet/IPv4/UDP headers */
			assert_int_equal(diff, 1);
			assert_true(where >= HDRS);
			rte_pktmbuf_free(ref);
			rte_pktmbuf_free(burst[i]);
		}
		assert_true(rte_get_tsc_cycles() < deadline);
	}
	assert_int_equal(wn_impair_stats_get(w.face, &st, NULL), 0);
	assert_int_equal(st.corrupt, n);
	wire_close(&w);
}

static void
test_delay_keeps_order(void **state)
{
	struct wn_impair_stats st;
	struct arrivals a;
	struct wire w;
	uint32_t i;

	(void)state;
	wire_open(&w, "delay_us=300,dir=tx");
	run(&w, true, 2000, &a, &st);
	assert_int_equal(a.bad, 0);
	assert_int_equal(a.n, 2000);
	assert_int_equal(st.delay, 2000);
	for (i = 0; i < a.n; i++)
		assert_int_equal(a.seq[i], i);
	free(a.seq);
	wire_close(&w);
}

static void
test_xstats_names(void **state)
{
	struct rte_eth_xstat_name names[2 * WN_IMPAIR_NB_XSTATS_PER_DIR];
	uint64_t values[2 * WN_IMPAIR_NB_XSTATS_PER_DIR];
	struct wn_impair_stats st;
	struct arrivals a;
	struct wire w;
	int n, i, found = 0;

	(void)state;
	wire_open(&w, "tx_drop=0.5,seed=3");
	run(&w, true, 1000, &a, &st);
	n = wn_impair_xstats_get(w.face, NULL, NULL, 0);
	assert_int_equal(n, 2 * WN_IMPAIR_NB_XSTATS_PER_DIR);
	assert_int_equal(wn_impair_xstats_get(w.face, names, values, n), n);
	for (i = 0; i < n; i++) {
		if (strcmp(names[i].name, "tx_impair_drop") == 0) {
			assert_int_equal(values[i], st.drop);
			assert_true(values[i] > 0);
			found++;
		}
		if (strcmp(names[i].name, "rx_impair_drop") == 0) {
			assert_int_equal(values[i], 0);
			found++;
		}
	}
	assert_int_equal(found, 2);
	free(a.seq);
	wire_close(&w);
}

static void
test_create_errors(void **state)
{
	struct wire w;
	char args[128];

	(void)state;
	wire_open(&w, "");
	assert_int_equal(wn_impair_create("bad0", "drop=0.1", pool), -EINVAL);
	assert_int_equal(wn_impair_create("bad1", "port=no_such_port", pool), -ENODEV);
	snprintf(args, sizeof(args), "port=%s,drop=1.5", w.uname);
	assert_int_equal(wn_impair_create("bad2", args, pool), -EINVAL);
	snprintf(args, sizeof(args), "port=%s,bogus=1", w.uname);
	assert_int_equal(wn_impair_create("bad3", args, pool), -EINVAL);
	/* the underlying port is owned by the first impairer */
	snprintf(args, sizeof(args), "port=%s", w.uname);
	assert_int_equal(wn_impair_create("bad4", args, pool), -EBUSY);
	assert_int_equal(wn_impair_poll(RTE_MAX_ETHPORTS - 1), -ENODEV);
	assert_false(wn_impair_is_face(w.u));
	assert_true(wn_impair_is_face(w.face));
	wire_close(&w);
}

static void
test_conf_parse(void **state)
{
	struct wn_impair_conf c;

	(void)state;
	assert_int_equal(wn_impair_conf_parse("port=net_tap0,drop=1%,rx_drop=0.5,dir=tx,"
					      "delay_us=20,reorder_gap=5,seed=0x10,queues=2",
					      &c),
			 0);
	assert_string_equal(c.port, "net_tap0");
	assert_true(fabs(c.tx.drop - 0.01) < 1e-12);
	assert_true(fabs(c.rx.drop - 0.5) < 1e-12);
	assert_int_equal(c.tx.delay_us, 20);
	assert_int_equal(c.rx.delay_us, 0);
	assert_int_equal(c.reorder_gap, 5);
	assert_int_equal(c.reorder_us, 1000);
	assert_int_equal(c.seed, 16);
	assert_int_equal(c.queues, 2);
	assert_int_equal(wn_impair_conf_parse("port=p,mangle=2%,jitter_us=300,rx_jitter_us=5", &c),
			 0);
	assert_true(fabs(c.rx.mangle - 0.02) < 1e-12 && fabs(c.tx.mangle - 0.02) < 1e-12);
	assert_int_equal(c.tx.jitter_us, 300);
	assert_int_equal(c.rx.jitter_us, 5);
	assert_int_equal(wn_impair_conf_parse("port=p,jitter_us=x", &c), -EINVAL);
	assert_int_equal(wn_impair_conf_parse("port=p,mangle=2", &c), -EINVAL);
	assert_int_equal(wn_impair_conf_parse("port=p,dup=0.25", &c), 0);
	assert_true(c.rx.dup == 0.25 && c.tx.dup == 0.25);
	assert_int_equal(wn_impair_conf_parse("port=p,dir=up", &c), -EINVAL);
	assert_int_equal(wn_impair_conf_parse("port=p,drop=-0.1", &c), -EINVAL);
	assert_int_equal(wn_impair_conf_parse("port=p,drop=0.1x", &c), -EINVAL);
	assert_int_equal(wn_impair_conf_parse("port=p,queues=0", &c), -EINVAL);
	assert_int_equal(wn_impair_conf_parse("port=p,reorder_gap=0", &c), -EINVAL);
	assert_int_equal(wn_impair_conf_parse("port=p,seed=-1", &c), -EINVAL);
	assert_int_equal(wn_impair_conf_parse("", &c), -EINVAL);
	assert_int_equal(wn_impair_conf_parse(NULL, &c), -EINVAL);
}

static void
test_argv_extract(void **state)
{
	char a0[] = "app", a1[] = "-l", a2[] = "0", a3[] = "--vdev", a4[] = "net_tap0",
	     a5[] = "--vdev", a6[] = "net_wn_impair0,port=net_tap0,drop=0.01",
	     a7[] = "--vdev=net_wn_impair1,port=1", a8[] = "--", a9[] = "--vdev",
	     a10[] = "net_wn_impair9,port=x";
	char *argv[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, NULL};
	int argc;

	(void)state;
	argc = wn_impair_argv_extract(11, argv);
	assert_int_equal(argc, 8);
	assert_string_equal(argv[3], "--vdev");
	assert_string_equal(argv[4], "net_tap0");
	assert_string_equal(argv[5], "--");
	assert_string_equal(argv[6], "--vdev"); /* application options are not touched */
	assert_string_equal(argv[7], "net_wn_impair9,port=x");
	assert_null(argv[8]);
	/* the two taken ones are created in order; port 1 may not exist here */
	assert_true(wn_impair_create_pending(pool, NULL, 0) < 0);
}

static void
test_jitter_keeps_order(void **state)
{
	struct wn_impair_stats st;
	struct arrivals a;
	struct wire w;
	uint32_t i;

	(void)state;
	wire_open(&w, "delay_us=50,jitter_us=500,dir=tx,seed=3");
	run(&w, true, 3000, &a, &st);
	assert_int_equal(a.bad, 0);
	assert_int_equal(a.n, 3000);
	assert_int_equal(st.delay, 3000);
	for (i = 0; i < a.n; i++)
		assert_int_equal(a.seq[i], i);
	free(a.seq);
	wire_close(&w);
}

/* A TCP segment with @p pay payload octets (seq = @p seq), its checksum right. */
static struct rte_mbuf *
make_tcp(uint32_t seq, uint16_t pay)
{
	const uint16_t hl = sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) + 20;
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct rte_ether_hdr *eh;
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;
	uint8_t *pl;

	assert_non_null(m);
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, hl + pay);
	assert_non_null(eh);
	memset(eh, 0, hl);
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip = (struct rte_ipv4_hdr *)(eh + 1);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + 20 + pay));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->src_addr = rte_cpu_to_be_32(0xC6120001);
	ip->dst_addr = rte_cpu_to_be_32(0xC6120002);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	th = (struct rte_tcp_hdr *)(ip + 1);
	th->src_port = rte_cpu_to_be_16(4000);
	th->dst_port = rte_cpu_to_be_16(5000);
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->data_off = 5 << 4;
	th->tcp_flags = RTE_TCP_ACK_FLAG;
	pl = (uint8_t *)(th + 1);
	for (uint16_t i = 0; i < pay; i++)
		pl[i] = pattern(seq, i);
	th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	return m;
}

/* Send @p n TCP segments of @p pay octets through the tx side; @return how many arrived
 * with one payload octet flipped (each checked: past the first 32 payload octets, before the
 * last 8, checksum right); unchanged ones are checked intact. */
static uint32_t
tcp_run(struct wire *w, uint32_t n, uint16_t pay, uint32_t *arrived)
{
	const uint32_t hl = sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr) + 20;
	uint64_t deadline = rte_get_tsc_cycles() + 10 * rte_get_tsc_hz();
	uint32_t mangled = 0, got = 0, sent = 0;
	struct rte_mbuf *burst[32];
	struct wn_impair_stats st, st0;

	assert_int_equal(wn_impair_stats_get(w->face, NULL, &st0), 0);
	for (;;) {
		unsigned int k;

		if (sent < n) {
			struct rte_mbuf *m = make_tcp(sent, pay);

			if (rte_eth_tx_burst(w->face, 0, &m, 1) == 1)
				sent++;
			else
				rte_pktmbuf_free(m);
		}
		assert_true(wn_impair_poll(w->face) >= 0);
		k = rte_ring_dequeue_burst(w->from_u, (void **)burst, 32, NULL);
		for (unsigned int i = 0; i < k; i++, got++) {
			struct rte_mbuf *ref = make_tcp(got, pay);
			const uint8_t *p = rte_pktmbuf_mtod(burst[i], const uint8_t *);
			const uint8_t *r = rte_pktmbuf_mtod(ref, const uint8_t *);
			struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(burst[i], void *,
							sizeof(struct rte_ether_hdr));
			struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);
			uint16_t sum = th->cksum;
			unsigned int diff = 0, where = 0;

			assert_int_equal(burst[i]->pkt_len, ref->pkt_len);
			for (uint32_t j = 0; j < ref->pkt_len; j++)
				if (p[j] != r[j] && (j < hl - 4 || j >= hl - 2)) { /* not the cksum */
					diff++;
					where = j;
				}
			assert_true(diff <= 1);
			if (diff == 1) {
				assert_true(where >= hl + 32 && where < hl + pay - 8u);
				mangled++;
			}
			/* TCP takes it: the checksum is right */
			th->cksum = 0;
			assert_int_equal(rte_ipv4_udptcp_cksum(ip, th), sum);
			rte_pktmbuf_free(ref);
			rte_pktmbuf_free(burst[i]);
		}
		if (sent == n) {
			assert_int_equal(wn_impair_stats_get(w->face, NULL, &st), 0);
			if (got == st.out - st0.out && st.in - st0.in == n &&
			    st.drop - st0.drop + st.down - st0.down + got == n)
				break;
		}
		assert_true(rte_get_tsc_cycles() < deadline);
	}
	*arrived = got;
	return mangled;
}

/*
 * mangle= (corruption below TCP): one payload octet flipped where no MPA header lies, the
 * TCP checksum right again; segments of 40 payload octets or fewer are left alone.
 * wn_impair_mangle_next() mangles exactly the next N eligible segments.
 */
static void
test_mangle_below_tcp(void **state)
{
	struct wn_impair_stats st;
	struct wire w;
	uint32_t got;

	(void)state;
	wire_open(&w, "tx_mangle=1");
	assert_int_equal(tcp_run(&w, 200, 1000, &got), 200);
	assert_int_equal(tcp_run(&w, 50, 40, &got), 0);
	assert_int_equal(wn_impair_stats_get(w.face, NULL, &st), 0);
	assert_int_equal(st.mangle, 200);
	assert_int_equal(st.corrupt, 0);
	wire_close(&w);

	wire_open(&w, "");
	assert_int_equal(wn_impair_mangle_next(w.face, 1, 3), 0);
	assert_int_equal(tcp_run(&w, 10, 40, &got), 0);   /* not eligible: not counted */
	assert_int_equal(tcp_run(&w, 20, 100, &got), 3);  /* the next three */
	assert_int_equal(tcp_run(&w, 20, 100, &got), 0);
	assert_int_equal(wn_impair_mangle_next(RTE_MAX_ETHPORTS - 1, 1, 1), -ENODEV);
	wire_close(&w);
}

/* wn_impair_link_down(): every frame either way is lost until the deadline, then none. */
static void
test_link_down(void **state)
{
	struct wn_impair_stats st;
	struct wire w;
	uint32_t got;

	(void)state;
	wire_open(&w, "");
	assert_int_equal(wn_impair_link_down(w.face, 200), 0);
	tcp_run(&w, 100, 100, &got);
	assert_int_equal(got, 0);
	assert_int_equal(wn_impair_stats_get(w.face, NULL, &st), 0);
	assert_int_equal(st.down, 100);
	assert_int_equal(wn_impair_link_down(w.face, 0), 0); /* up again */
	tcp_run(&w, 100, 100, &got);
	assert_int_equal(got, 100);
	/* a short flap ends by itself */
	assert_int_equal(wn_impair_link_down(w.face, 20), 0);
	rte_delay_ms(30);
	tcp_run(&w, 100, 100, &got);
	assert_int_equal(got, 100);
	assert_int_equal(wn_impair_link_down(RTE_MAX_ETHPORTS - 1, 1), -ENODEV);
	wire_close(&w);
}

int
main(int argc, char **argv)
{
	char *eal[] = {argv[0], "--no-huge", "--no-shconf", "--no-pci", "-l", "0",
		       "--file-prefix", "wn_impair_ut", "--log-level", "lib.eal:warning", NULL};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conf_parse),
		cmocka_unit_test(test_passthrough),
		cmocka_unit_test(test_rates_tx),
		cmocka_unit_test(test_rates_rx),
		cmocka_unit_test(test_seed_reproducible),
		cmocka_unit_test(test_corrupt_payload_only),
		cmocka_unit_test(test_delay_keeps_order),
		cmocka_unit_test(test_jitter_keeps_order),
		cmocka_unit_test(test_mangle_below_tcp),
		cmocka_unit_test(test_link_down),
		cmocka_unit_test(test_xstats_names),
		cmocka_unit_test(test_create_errors),
		cmocka_unit_test(test_argv_extract),
	};
	int ret;

	(void)argc;
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	pool = rte_pktmbuf_pool_create("impair_ut", 8191, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
	if (pool == NULL) {
		fprintf(stderr, "no mbuf pool\n");
		return 1;
	}
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rte_eal_cleanup();
	return ret;
}
