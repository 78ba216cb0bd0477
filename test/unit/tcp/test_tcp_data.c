/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data transfer: bulk stream, random loss/reorder (SACK/RFC 6675, NewReno/RFC 6582, CUBIC),
 * sequence wraparound, the record segmenter (records never split, boundaries kept on
 * retransmission), RTO backoff, zero window and probes, SACK scoreboard, delayed ACK,
 * bounded out-of-order queue. What breaks if this fails: data integrity or recovery.
 */
#include "app.h"

#define RAW_PORT 40000

/* Stream @p total bytes client -> server; @return simulated microseconds used. */
static uint64_t
transfer(struct hx *h, struct tapp *cli, struct tapp *srv, const uint8_t *data, size_t total,
	 uint64_t limit_us)
{
	size_t off = 0;
	uint64_t start = h->now;

	while ((off < total || srv->rx_len < total) && h->now - start < limit_us) {
		if (off < total) {
			int n = wn_tcp_send(cli->conn, data + off,
					    (uint32_t)RTE_MIN(total - off, (size_t)65536));

			assert_true(n >= 0);
			off += (size_t)n;
		}
		hx_run(h, 1000, 1000);
	}
	return h->now - start;
}

static void
run_transfer(const struct wn_tcp_ctx_conf *tc, uint32_t drop_pm, uint32_t reorder_pm,
	     size_t total, bool expect_loss_recovery)
{
	struct hx h;
	struct tapp cli, srv;
	uint8_t *data = hx_pattern(total, 7);
	struct wn_tcp_stats st;

	hx_init_conf(&h, tc, false, false);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	h.drop_pm = drop_pm;
	h.reorder_pm = reorder_pm;
	transfer(&h, &cli, &srv, data, total, 600ull * 1000000);
	assert_int_equal(srv.rx_len, total);
	assert_memory_equal(srv.rx, data, total);
	assert_int_equal(cli.sent_acked, total);
	st = hx_stats(&h, 0);
	if (expect_loss_recovery) {
		assert_true(h.dropped > 0);
		assert_true(st.tx_retrans > 0);
		assert_true(st.fast_retrans > 0);
	} else {
		assert_int_equal(st.tx_retrans, 0);
	}
	free(data);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_bulk_stream(void **state)
{
	(void)state;
	run_transfer(NULL, 0, 0, 4u << 20, false);
}

/*
 * Buffers come with the data: none after the handshake, the first size for a small
 * message, grown (out-of-order data kept across the moves) by a transfer under loss and
 * reordering to at most sndbuf/rcvbuf, and gone with the connection.
 */
static void
test_buffers_on_demand(void **state)
{
	struct wn_tcp_ctx_conf tc = { .sndbuf = 262144, .rcvbuf = 262144 };
	size_t total = 2u << 20;
	uint8_t *data = hx_pattern(total, 9);
	struct wn_tcp_info ci, si;
	struct hx h;
	struct tapp cli, srv;
	(void)state;

	hx_init_conf(&h, &tc, false, false);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	wn_tcp_conn_info(cli.conn, &ci);
	wn_tcp_conn_info(srv.conn, &si);
	assert_int_equal(ci.snd_alloc + ci.rcv_alloc + si.snd_alloc + si.rcv_alloc, 0);
	assert_int_equal(hx_stats(&h, 0).buf_bytes + hx_stats(&h, 1).buf_bytes, 0);
	assert_int_equal(wn_tcp_send(cli.conn, data, 100), 100);
	hx_run(&h, 100000, 1000);
	assert_int_equal(srv.rx_len, 100);
	wn_tcp_conn_info(cli.conn, &ci);
	wn_tcp_conn_info(srv.conn, &si);
	assert_int_equal(ci.snd_alloc, 16384);
	assert_int_equal(si.rcv_alloc, 16384);
	assert_int_equal(ci.rcv_alloc + si.snd_alloc, 0);
	/* the rest under loss and reordering: out-of-order data moves with each growth */
	srv.rx_len = 0;
	h.drop_pm = 10;
	h.reorder_pm = 50;
	transfer(&h, &cli, &srv, data, total, 600ull * 1000000);
	assert_int_equal(srv.rx_len, total);
	assert_memory_equal(srv.rx, data, total);
	wn_tcp_conn_info(cli.conn, &ci);
	wn_tcp_conn_info(srv.conn, &si);
	assert_true(ci.snd_alloc > 16384 && ci.snd_alloc <= 262144);
	assert_true(si.rcv_alloc > 16384 && si.rcv_alloc <= 262144);
	assert_int_equal(hx_stats(&h, 0).buf_bytes, ci.snd_alloc + ci.rcv_alloc);
	assert_int_equal(hx_stats(&h, 1).buf_bytes, si.snd_alloc + si.rcv_alloc);
	assert_true(hx_stats(&h, 1).rx_ooo > 0);
	h.drop_pm = h.reorder_pm = 0;
	assert_int_equal(wn_tcp_close(cli.conn), 0);
	hx_run(&h, 10000, 1000);
	assert_int_equal(wn_tcp_close(srv.conn), 0);
	hx_run(&h, 70000000, 100000); /* past TIME-WAIT */
	assert_int_equal(hx_stats(&h, 0).buf_bytes + hx_stats(&h, 1).buf_bytes, 0);
	free(data);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_loss_reorder_sack(void **state)
{
	(void)state;
	run_transfer(NULL, 20, 50, 2u << 20, true);
}

static void
test_fault_injector_mix(void **state)
{
	struct hx h;
	struct tapp cli, srv;
	size_t total = 1u << 20;
	uint8_t *data = hx_pattern(total, 13), *back;
	struct wn_tcp_stats st;
	size_t off = 0, boff = 0;
	(void)state;

	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	h.drop_pm = 10;
	h.reorder_pm = 20;
	h.dup_pm = 20;
	h.corrupt_pm = 10;
	/* both directions carry data at once */
	back = hx_pattern(total, 17);
	while ((srv.rx_len < total || cli.rx_len < total) && h.now < 600ull * 1000000) {
		if (off < total)
			off += (size_t)wn_tcp_send(cli.conn, data + off, (uint32_t)(total - off));
		if (boff < total)
			boff += (size_t)wn_tcp_send(srv.conn, back + boff, (uint32_t)(total - boff));
		hx_run(&h, 1000, 1000);
	}
	assert_int_equal(srv.rx_len, total);
	assert_memory_equal(srv.rx, data, total);
	assert_int_equal(cli.rx_len, total);
	assert_memory_equal(cli.rx, back, total);
	st = hx_stats(&h, 1);
	assert_true(st.rx_drop_cksum > 0); /* corruption was caught by the checksum */
	assert_true(st.rx_dup_data > 0);   /* duplicates were recognised */
	free(data);
	free(back);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_loss_reorder_newreno_nosack(void **state)
{
	struct wn_tcp_ctx_conf tc = { .flags = WN_TCP_F_WSCALE | WN_TCP_F_TIMESTAMPS |
					       WN_TCP_F_NODELAY };
	(void)state;
	run_transfer(&tc, 20, 50, 1u << 20, true);
}

static void
test_loss_cubic(void **state)
{
	struct wn_tcp_ctx_conf tc = { .cc = &wn_tcp_cc_cubic };
	(void)state;
	run_transfer(&tc, 20, 20, 2u << 20, true);
}

static void
test_sequence_wraparound(void **state)
{
	struct hx h;
	struct tapp cli, srv;
	struct wn_tcp_endpoint l, lc, r;
	size_t total = 1u << 20;
	uint8_t *data = hx_pattern(total, 3);
	struct wn_tcp_info ci;
	(void)state;

	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	l = hx_ep(&h, 1, 5000);
	lc = hx_ep(&h, 0, 0);
	r = hx_ep(&h, 1, 5000);
	assert_non_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
	cli.conn = wn_tcp_connect_iss(h.s[0].tcp, &lc, &r, &tapp_cb, &cli, 0xFFFFFFFFu - 20000);
	hx_run(&h, 10000, 1000);
	assert_int_equal(cli.established, 1);
	h.drop_pm = 10;
	transfer(&h, &cli, &srv, data, total, 600ull * 1000000);
	wn_tcp_conn_info(cli.conn, &ci);
	assert_true(ci.snd_una < 0x80000000u); /* it wrapped */
	assert_int_equal(ci.snd_una, (uint32_t)(0xFFFFFFFFu - 20000 + 1 + total));
	assert_int_equal(srv.rx_len, total);
	assert_memory_equal(srv.rx, data, total);
	free(data);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

/* ---- records ---- */

struct rec_check {
	uint32_t *starts;   /* record start sequence numbers, ascending from base */
	uint32_t n;
	uint32_t end;       /* sequence after the last record */
	uint64_t segs, multi, bad, retrans_segs;
	uint32_t max_seen;
	uint16_t cport;
};

static bool
rec_is_boundary(const struct rec_check *rc, uint32_t seq)
{
	uint32_t lo = 0, hi = rc->n;

	if (seq == rc->end)
		return true;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if ((int32_t)(rc->starts[mid] - seq) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rc->n && rc->starts[lo] == seq;
}

static bool
rec_filter(struct hx *h, int from, struct rte_mbuf *m, void *arg)
{
	struct rec_check *rc = arg;
	struct hx_parsed p;
	uint32_t recs = 0;

	(void)h;
	if (from != 0 || !hx_parse(m, &p) || p.len == 0)
		return false;
	rc->segs++;
	if (!rec_is_boundary(rc, p.seq) || !rec_is_boundary(rc, p.seq + p.len))
		rc->bad++;
	for (uint32_t s = 0; s < rc->n; s++)
		if ((int32_t)(rc->starts[s] - p.seq) >= 0 &&
		    (int32_t)(rc->starts[s] - (p.seq + p.len)) < 0)
			recs++;
	if (recs > 1)
		rc->multi++;
	if ((int32_t)(p.seq - rc->max_seen) < 0)
		rc->retrans_segs++;
	else
		rc->max_seen = p.seq;
	return false;
}

static void
records_run(uint32_t drop_pm, uint32_t reorder_pm)
{
	struct hx h;
	struct tapp cli, srv;
	struct rec_check rc = { 0 };
	uint32_t nrec = 3000, i = 0, seed = 11;
	size_t total = 0;
	uint8_t *data = hx_pattern(nrec * 1448u, 5);
	uint16_t emss;
	uint64_t start;

	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	emss = wn_tcp_emss(cli.conn);
	assert_int_equal(emss, 1448);
	assert_int_equal(wn_tcp_send_record(cli.conn, "x", 1), -EINVAL); /* stream mode */
	assert_int_equal(wn_tcp_set_mode(cli.conn, WN_TCP_MODE_RECORD), 0);
	assert_int_equal(wn_tcp_send(cli.conn, "x", 1), -EINVAL);
	assert_int_equal(wn_tcp_send_record(cli.conn, data, emss + 1u), -EMSGSIZE);
	rc.starts = calloc(nrec, sizeof(uint32_t));
	rc.max_seen = wn_tcp_next_seq(cli.conn);
	h.filter = rec_filter;
	h.filter_arg = &rc;
	h.drop_pm = drop_pm;
	h.reorder_pm = reorder_pm;
	start = h.now;
	while ((i < nrec || srv.rx_len < total) && h.now - start < 600ull * 1000000) {
		while (i < nrec) {
			uint32_t len;
			uint32_t next = wn_tcp_next_seq(cli.conn);
			int rcv;

			seed = seed * 1103515245u + 12345u;
			len = 8 + (seed >> 16) % (emss - 8u);
			if (i % 7 == 0)
				len = emss; /* exactly one per segment */
			rcv = wn_tcp_send_record(cli.conn, data + total, len);
			if (rcv == -ENOBUFS)
				break;
			assert_int_equal(rcv, 0);
			rc.starts[i] = next;
			rc.n = i + 1;
			rc.end = next + len;
			assert_int_equal(wn_tcp_next_seq(cli.conn), next + len);
			total += len;
			i++;
		}
		hx_run(&h, 1000, 1000);
	}
	assert_int_equal(i, nrec);
	assert_int_equal(srv.rx_len, total);
	assert_memory_equal(srv.rx, data, total);
	assert_int_equal(rc.bad, 0);
	assert_true(rc.segs > 0);
	assert_true(rc.multi > 0); /* small records were packed together */
	assert_int_equal(hx_stats(&h, 0).record_split, 0);
	if (drop_pm > 0)
		assert_true(rc.retrans_segs > 0); /* and retransmissions were checked as well */
	free(rc.starts);
	free(data);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_records_never_split(void **state)
{
	(void)state;
	records_run(0, 0);
}

static void
test_records_boundaries_kept_on_retransmission(void **state)
{
	(void)state;
	records_run(30, 30);
}

/* ---- RTO ---- */

struct rto_watch {
	uint64_t t[16];
	uint32_t seq[16];
	unsigned int n;
	bool drop;
};

static bool
rto_filter(struct hx *h, int from, struct rte_mbuf *m, void *arg)
{
	struct rto_watch *w = arg;
	struct hx_parsed p;

	if (from != 0 || !hx_parse(m, &p) || p.len == 0)
		return false;
	if (w->n < 16) {
		w->t[w->n] = h->now;
		w->seq[w->n] = p.seq;
		w->n++;
	}
	return w->drop;
}

static void
test_rto_backoff(void **state)
{
	struct hx h;
	struct tapp cli, srv;
	struct rto_watch w = { .drop = true };
	struct wn_tcp_info ci;
	(void)state;

	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	h.filter = rto_filter;
	h.filter_arg = &w;
	h.now += 350; /* off the 1 ms timer tick grid */
	assert_int_equal(wn_tcp_send(cli.conn, "0123456789", 10), 10);
	hx_run(&h, 3500000, 100); /* steps finer than the 1 ms timer tick */
	/* first send + retransmissions at RTO, 2 RTO, 4 RTO (RFC 6298 §5.5) */
	assert_true(w.n >= 4);
	for (unsigned int i = 0; i < w.n; i++)
		assert_int_equal(w.seq[i], w.seq[0]);
	{
		uint64_t d1 = w.t[1] - w.t[0], d2 = w.t[2] - w.t[1], d3 = w.t[3] - w.t[2];

		/* the handshake measured ~0 RTT: RTO = the 200 ms floor, fired on time */
		assert_in_range(d1, 200000, 201100);
		assert_in_range(d2, 2 * d1 - 2000, 2 * d1 + 2000);
		assert_in_range(d3, 4 * d1 - 4000, 4 * d1 + 4000);
	}
	wn_tcp_conn_info(cli.conn, &ci);
	assert_true(ci.backoff >= 3);
	assert_int_equal(ci.cwnd, ci.emss); /* loss window after RTO */
	assert_true(hx_stats(&h, 0).rto_fired >= 3);
	/* the path heals: data delivered, backoff cleared by the new ACK */
	w.drop = false;
	hx_run(&h, 10000000, 1000);
	assert_int_equal(srv.rx_len, 10);
	wn_tcp_conn_info(cli.conn, &ci);
	assert_int_equal(ci.backoff, 0);
	assert_int_equal(ci.snd_una, ci.snd_max);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

/* Holds the server's ACKs (late ACKs: a starved peer) or drops the client's data. */
struct late_acks {
	bool hold_acks, drop_data;
	struct rte_mbuf *held[256];
	unsigned int nheld;
	uint32_t first_seq;
	unsigned int data, resent; /* client data segments, ... at or below first_seq */
};

static bool
late_filter(struct hx *h, int from, struct rte_mbuf *m, void *arg)
{
	struct late_acks *w = arg;
	struct hx_parsed p;

	if (!hx_parse(m, &p))
		return false;
	if (from == 0 && p.len > 0) {
		if (w->data++ == 0)
			w->first_seq = p.seq;
		else if (p.seq == w->first_seq)
			w->resent++;
		return w->drop_data;
	}
	if (from == 1 && w->hold_acks && w->nheld < RTE_DIM(w->held)) {
		w->held[w->nheld] = rte_pktmbuf_copy(m, h->pool, 0, UINT32_MAX);
		assert_non_null(w->held[w->nheld]);
		w->nheld++;
		return true;
	}
	return false;
}

/*
 * RFC 3522/4015: ACKs held back past the RTO (the receiver got everything) make the
 * timeout spurious; the first late ACK echoes the original transmission's timestamp, so the
 * sender restores cwnd and goes on from SND.MAX instead of resending the window. A real
 * loss (the ACK echoes the retransmission) is not undone.
 */
static void
test_spurious_rto_undone(void **state)
{
	struct hx h;
	struct tapp cli, srv;
	struct late_acks w = { 0 };
	struct wn_tcp_info ci;
	static uint8_t buf[64 * 1024];
	uint32_t prior;
	(void)state;

	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	memset(buf, 'e', sizeof(buf));
	/* grow the window first */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(wn_tcp_send(cli.conn, buf, sizeof(buf)), (int)sizeof(buf));
		hx_run(&h, 20000, 1000);
	}
	wn_tcp_conn_info(cli.conn, &ci);
	assert_int_equal(ci.snd_una, ci.snd_max);
	prior = ci.cwnd;
	assert_true(prior > 4u * ci.emss);
	h.filter = late_filter;
	h.filter_arg = &w;
	w.hold_acks = true;
	assert_int_equal(wn_tcp_send(cli.conn, buf, 16000), 16000);
	hx_run(&h, 250000, 1000); /* past the 200 ms RTO: one retransmission */
	assert_int_equal(hx_stats(&h, 0).rto_fired, 1);
	assert_int_equal(w.resent, 1);
	wn_tcp_conn_info(cli.conn, &ci);
	assert_int_equal(ci.cwnd, ci.emss); /* loss window */
	/* the late ACKs arrive: they acknowledge the originals */
	w.hold_acks = false;
	for (unsigned int i = 0; i < w.nheld; i++)
		hx_deliver(&h, 0, w.held[i]);
	wn_tcp_conn_info(cli.conn, &ci);
	assert_int_equal(hx_stats(&h, 0).rto_spurious, 1);
	assert_true(ci.cwnd >= prior);
	assert_int_equal(ci.snd_nxt, ci.snd_max);
	hx_run(&h, 50000, 1000);
	wn_tcp_conn_info(cli.conn, &ci);
	assert_int_equal(ci.snd_una, ci.snd_max);
	assert_int_equal(w.resent, 1); /* the window was not sent again */
	assert_int_equal(srv.rx_len, 4 * sizeof(buf) + 16000);

	/* a real loss: data dropped until the RTO, the ACK echoes the retransmission */
	memset(&w, 0, sizeof(w));
	w.drop_data = true;
	assert_int_equal(wn_tcp_send(cli.conn, buf, 8000), 8000);
	for (int i = 0; i < 200 && hx_stats(&h, 0).rto_fired < 2; i++)
		hx_run(&h, 10000, 1000);
	assert_int_equal(hx_stats(&h, 0).rto_fired, 2);
	w.drop_data = false; /* the next retransmission gets through */
	hx_run(&h, 2000000, 1000);
	wn_tcp_conn_info(cli.conn, &ci);
	assert_int_equal(ci.snd_una, ci.snd_max);
	assert_int_equal(srv.rx_len, 4 * sizeof(buf) + 16000 + 8000);
	assert_int_equal(hx_stats(&h, 0).rto_spurious, 1); /* not undone */
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_retries_exhausted_times_out(void **state)
{
	struct wn_tcp_ctx_conf tc = { .max_retries = 3, .rto_max_us = 1000000 };
	struct hx h;
	struct tapp cli, srv;
	struct rto_watch w = { .drop = true };
	(void)state;

	hx_init_conf(&h, &tc, false, false);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	h.filter = rto_filter;
	h.filter_arg = &w;
	wn_tcp_send(cli.conn, "abc", 3);
	hx_run(&h, 20000000, 10000);
	assert_int_equal(cli.closed, 1);
	assert_int_equal(cli.why, WN_TCP_CLOSE_TIMEOUT);
	assert_int_equal(hx_stats(&h, 0).conns_timeout, 1);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

/* ---- keepalive ---- */

static bool
drop_filter(struct hx *h, int from, struct rte_mbuf *m, void *arg)
{
	(void)h;
	(void)from;
	(void)m;
	return *(bool *)arg;
}

static void
test_keepalive(void **state)
{
	struct hx h;
	struct tapp cli, srv;
	bool drop = false;
	uint64_t probes;
	(void)state;

	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	h.filter = drop_filter;
	h.filter_arg = &drop;
	assert_int_equal(wn_tcp_set_keepalive(cli.conn, 1000000, 0, 3), -EINVAL);
	assert_int_equal(wn_tcp_set_keepalive(cli.conn, 1000000, 200000, 3), 0);
	/* an answering peer: a probe after each idle second, the connection lives */
	hx_run(&h, 4500000, 1000);
	assert_in_range(hx_stats(&h, 0).keepalive_probes, 3, 5);
	assert_int_equal(cli.closed, 0);
	assert_int_equal(hx_stats(&h, 1).keepalive_probes, 0); /* off by default */
	/* the path dies (last answer ~0.5 s ago): the idle second runs out, 3 unanswered
	 * probes 200 ms apart, then the connection is given up */
	probes = hx_stats(&h, 0).keepalive_probes;
	drop = true;
	hx_run(&h, 400000, 1000);
	assert_int_equal(cli.closed, 0);
	hx_run(&h, 1500000, 1000);
	assert_int_equal(cli.closed, 1);
	assert_int_equal(hx_stats(&h, 0).keepalive_probes, probes + 3);
	assert_int_equal(cli.why, WN_TCP_CLOSE_TIMEOUT);
	assert_int_equal(hx_stats(&h, 0).keepalive_timeouts, 1);
	assert_int_equal(srv.closed, 0);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

/* ---- zero window ---- */

static void
test_zero_window_probe_and_reopen(void **state)
{
	struct wn_tcp_ctx_conf tc = { .rcvbuf = 16384 };
	struct hx h;
	struct tapp cli, srv;
	size_t total = 65536;
	uint8_t *data = hx_pattern(total, 9);
	struct wn_tcp_info ci, si;
	size_t off = 0;
	uint64_t zwp;
	(void)state;

	hx_init_conf(&h, &tc, false, false);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	srv.auto_read = false;
	off += (size_t)wn_tcp_send(cli.conn, data, (uint32_t)total);
	hx_run(&h, 5000000, 1000);
	wn_tcp_conn_info(srv.conn, &si);
	wn_tcp_conn_info(cli.conn, &ci);
	assert_int_equal(si.rcv_queued, 16384);
	assert_int_equal(si.rcv_wnd, 0);
	assert_int_equal(ci.snd_wnd, 0);
	zwp = hx_stats(&h, 0).zwp_sent;
	assert_true(zwp >= 3);
	assert_true(zwp <= 8); /* probes back off */
	assert_int_equal(cli.closed, 0);
	/* the reader drains: the window reopens, everything arrives intact */
	srv.auto_read = true;
	tapp_drain(&srv);
	while (srv.rx_len < total && h.now < 200ull * 1000000) {
		if (off < total)
			off += (size_t)wn_tcp_send(cli.conn, data + off, (uint32_t)(total - off));
		hx_run(&h, 1000, 1000);
	}
	assert_int_equal(srv.rx_len, total);
	assert_memory_equal(srv.rx, data, total);
	free(data);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

/* ---- crafted peer: SACK scoreboard, delayed ACK, out-of-order queue ---- */

/* Side 1 (real stack) connects to raw side 0; the raw peer answers with @p opts. */
static struct wn_tcp_conn *
raw_peer_accept(struct hx *h, struct tapp *cli, const uint8_t *opts, uint8_t optlen,
		uint32_t peer_iss, struct hx_parsed *syn)
{
	struct wn_tcp_endpoint lc = hx_ep(h, 1, 6000), r = hx_ep(h, 0, RAW_PORT);
	struct hx_seg sg = { .flags = RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, .win = 65535,
			     .sport = RAW_PORT, .dport = 6000, .opts = opts, .optlen = optlen };
	struct wn_tcp_conn *c = wn_tcp_connect(h->s[1].tcp, &lc, &r, &tapp_cb, cli);

	assert_non_null(c);
	hx_step(h);
	assert_true(hx_cap_tcp(h, syn));
	assert_int_equal(syn->flags, RTE_TCP_SYN_FLAG);
	sg.seq = peer_iss;
	sg.ack = syn->seq + 1;
	hx_inject(h, 1, &sg);
	assert_int_equal(cli->established, 1);
	hx_cap_clear(h);
	return c;
}

static void
sack_scenario(const struct wn_tcp_cc_ops *cc, uint32_t expect_ssthresh)
{
	/* MSS 1000, SACK permitted, window scale 0 */
	static const uint8_t opts[] = { 2, 4, 0x03, 0xe8, 1, 1, 4, 2 };
	uint8_t sack[12] = { 1, 1, 5, 10 };
	struct hx h;
	struct tapp cli;
	struct hx_parsed syn, p;
	struct wn_tcp_conn *c;
	struct wn_tcp_info ci;
	uint8_t buf[10000];
	uint32_t base;
	struct hx_seg ack = { .seq = 501, .flags = RTE_TCP_ACK_FLAG, .win = 65535,
			      .sport = RAW_PORT, .dport = 6000 };
	struct wn_tcp_ctx_conf tc = { .flags = WN_TCP_F_SACK | WN_TCP_F_NODELAY, .cc = cc };
	unsigned int nseg = 0;

	hx_init_conf(&h, &tc, true, false);
	tapp_init(&cli);
	c = raw_peer_accept(&h, &cli, opts, sizeof(opts), 500, &syn);
	wn_tcp_conn_info(c, &ci);
	assert_true(ci.sack_ok);
	assert_int_equal(ci.emss, 1000);
	base = syn.seq + 1;
	memset(buf, 'a', sizeof(buf));
	/* slow start lets 4 segments out (IW = 4 * 1000 <= 4380) */
	assert_int_equal(wn_tcp_send(c, buf, 4000), 4000);
	hx_step(&h);
	while (hx_cap_tcp(&h, &p))
		nseg++;
	assert_int_equal(nseg, 4);
	/* segment 1 lost; 2, 3, 4 SACKed one by one: three duplicate ACKs */
	ack.ack = base;
	ack.opts = sack;
	ack.optlen = sizeof(sack);
	for (uint32_t k = 1; k <= 3; k++) {
		uint32_t s = rte_cpu_to_be_32(base + 1000), e = rte_cpu_to_be_32(base + 1000 * (k + 1));

		memcpy(sack + 4, &s, 4);
		memcpy(sack + 8, &e, 4);
		hx_inject(&h, 1, &ack);
		wn_tcp_conn_info(c, &ci);
		assert_int_equal(ci.sack_blocks, 1);
		assert_int_equal(ci.sacked_bytes, 1000 * k);
	}
	/* RFC 6675: loss detected -> the hole (and only the hole) is retransmitted */
	wn_tcp_conn_info(c, &ci);
	assert_true(ci.in_recovery);
	/* RFC 5681 eq. 4 halves FlightSize (4000); CUBIC keeps beta = 0.7 (RFC 9438 §4.6) */
	assert_int_equal(ci.ssthresh, expect_ssthresh);
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.seq, base);
	assert_int_equal(p.len, 1000);
	while (hx_cap_tcp(&h, &p))
		assert_true(p.seq != base + 1000 && p.seq != base + 2000 && p.seq != base + 3000);
	assert_int_equal(hx_stats(&h, 1).fast_retrans, 1);
	/* an invalid SACK block (above SND.MAX) is ignored */
	{
		uint32_t s = rte_cpu_to_be_32(base + 100000), e = rte_cpu_to_be_32(base + 101000);

		memcpy(sack + 4, &s, 4);
		memcpy(sack + 8, &e, 4);
		hx_inject(&h, 1, &ack);
		wn_tcp_conn_info(c, &ci);
		assert_int_equal(ci.sacked_bytes, 3000);
	}
	/* full ACK ends recovery and empties the scoreboard */
	ack.ack = base + 4000;
	ack.opts = NULL;
	ack.optlen = 0;
	hx_inject(&h, 1, &ack);
	wn_tcp_conn_info(c, &ci);
	assert_false(ci.in_recovery);
	assert_int_equal(ci.sack_blocks, 0);
	assert_int_equal(ci.snd_una, base + 4000);
	assert_int_equal(cli.sent_acked, 4000);
	assert_int_equal(ci.cwnd, expect_ssthresh); /* recovery ends at ssthresh */
	tapp_fini(&cli);
	hx_fini(&h);
}

static void
test_sack_scoreboard_and_recovery_newreno(void **state)
{
	(void)state;
	sack_scenario(&wn_tcp_cc_newreno, 2000);
}

static void
test_sack_scoreboard_and_recovery_cubic(void **state)
{
	(void)state;
	sack_scenario(&wn_tcp_cc_cubic, 2800);
}

/* ---- loss detection against a receiver that changes its window (as Linux does) ---- */

struct sack_peer {
	struct hx h;
	struct tapp cli;
	struct wn_tcp_conn *c;
	uint32_t base;      /* first data sequence number */
};

/* Raw side 0 accepts side 1's connection: MSS 1000, SACK, no timestamps, no scaling. */
static void
sack_peer_init(struct sack_peer *sp, const struct wn_tcp_ctx_conf *tc)
{
	static const uint8_t opts[] = { 2, 4, 0x03, 0xe8, 1, 1, 4, 2 };
	struct hx_parsed syn;

	hx_init_conf(&sp->h, tc, true, false);
	tapp_init(&sp->cli);
	sp->c = raw_peer_accept(&sp->h, &sp->cli, opts, sizeof(opts), 500, &syn);
	sp->base = syn.seq + 1;
}

static void
sack_peer_fini(struct sack_peer *sp)
{
	tapp_fini(&sp->cli);
	hx_fini(&sp->h);
}

/* The peer ACKs @p ack (offset from base) with window @p win and SACK blocks (offsets). */
static void
sack_peer_ack(struct sack_peer *sp, uint32_t ack, uint16_t win, unsigned int nblocks,
	      const uint32_t (*blocks)[2])
{
	uint8_t opts[4 + 8 * 4] = { 1, 1, 5, (uint8_t)(2 + 8 * nblocks) };
	struct hx_seg a = { .seq = 501, .ack = sp->base + ack, .flags = RTE_TCP_ACK_FLAG,
			    .win = win, .sport = RAW_PORT, .dport = 6000 };

	for (unsigned int i = 0; i < nblocks; i++) {
		uint32_t b = rte_cpu_to_be_32(sp->base + blocks[i][0]);
		uint32_t e = rte_cpu_to_be_32(sp->base + blocks[i][1]);

		memcpy(opts + 4 + 8 * i, &b, 4);
		memcpy(opts + 8 + 8 * i, &e, 4);
	}
	if (nblocks > 0) {
		a.opts = opts;
		a.optlen = (uint8_t)(4 + 8 * nblocks);
	}
	hx_inject(&sp->h, 1, &a);
}

/* Collect the data segments side 1 sent (offsets from base); @return how many. */
static unsigned int
sack_peer_sent(struct sack_peer *sp, uint32_t *off, unsigned int max)
{
	struct hx_parsed p;
	unsigned int n = 0;

	while (hx_cap_tcp(&sp->h, &p))
		if (p.len > 0 && n < max)
			off[n++] = p.seq - sp->base;
	return n;
}

static bool
sent_has(const uint32_t *off, unsigned int n, uint32_t want)
{
	for (unsigned int i = 0; i < n; i++)
		if (off[i] == want)
			return true;
	return false;
}

/* Slow start to a window of 8 segments: 4 sent and ACKed one at a time. */
static void
sack_peer_grow(struct sack_peer *sp)
{
	uint8_t buf[4000];
	uint32_t off[16];
	struct wn_tcp_info ci;

	memset(buf, 'g', sizeof(buf));
	assert_int_equal(wn_tcp_send(sp->c, buf, 4000), 4000);
	hx_step(&sp->h);
	assert_int_equal(sack_peer_sent(sp, off, 16), 4);
	for (uint32_t k = 1; k <= 4; k++)
		sack_peer_ack(sp, 1000 * k, 65535, 0, NULL);
	wn_tcp_conn_info(sp->c, &ci);
	assert_int_equal(ci.cwnd, 8000);
	sack_peer_sent(sp, off, 16);
}

/*
 * RFC 6675 §2: SACK-carrying ACKs that SACK new data are duplicates even when the window
 * changes with each (a Linux receiver's window moves as its application reads). Counting
 * only RFC 5681 duplicates left such a sender waiting for the RTO.
 */
static void
test_sack_dupacks_with_changing_window(void **state)
{
	struct wn_tcp_ctx_conf tc = { .flags = WN_TCP_F_SACK | WN_TCP_F_NODELAY };
	struct sack_peer sp;
	struct wn_tcp_info ci;
	uint8_t buf[4000];
	uint32_t off[16];
	unsigned int n;
	(void)state;

	sack_peer_init(&sp, &tc);
	memset(buf, 'w', sizeof(buf));
	assert_int_equal(wn_tcp_send(sp.c, buf, 4000), 4000);
	hx_step(&sp.h);
	assert_int_equal(sack_peer_sent(&sp, off, 16), 4);
	/* segment 0 lost; 1, 2, 3 SACKed one by one, each ACK with another window */
	for (uint32_t k = 1; k <= 3; k++) {
		const uint32_t blk[1][2] = { { 1000, 1000 * (k + 1) } };

		sack_peer_ack(&sp, 0, (uint16_t)(60000 - 1000 * k), 1, blk);
	}
	wn_tcp_conn_info(sp.c, &ci);
	assert_true(ci.in_recovery);
	assert_int_equal(hx_stats(&sp.h, 1).rx_dupack, 3);
	assert_int_equal(hx_stats(&sp.h, 1).fast_retrans, 1);
	n = sack_peer_sent(&sp, off, 16);
	assert_true(n >= 1);
	assert_int_equal(off[0], 0); /* the hole, at once */
	assert_int_equal(hx_stats(&sp.h, 1).rto_fired, 0);
	/* an ACK repeating the same SACK information (a duplicated frame) is no news */
	{
		const uint32_t blk[1][2] = { { 1000, 4000 } };

		sack_peer_ack(&sp, 0, 50000, 1, blk);
		assert_int_equal(hx_stats(&sp.h, 1).rx_dupack, 3);
	}
	sack_peer_fini(&sp);
}

/*
 * RFC 6675 §5 IsLost(HighACK + 1) on a cumulative ACK: the ACK that moves SND.UNA may also
 * SACK three segments above a new hole. That hole is lost now, not after three more
 * duplicates.
 */
static void
test_sack_cumulative_ack_detects_loss(void **state)
{
	struct wn_tcp_ctx_conf tc = { .flags = WN_TCP_F_SACK | WN_TCP_F_NODELAY };
	const uint32_t blk[1][2] = { { 6000, 9000 } };
	struct sack_peer sp;
	struct wn_tcp_info ci;
	uint8_t buf[8000];
	uint32_t off[16];
	unsigned int n;
	(void)state;

	sack_peer_init(&sp, &tc);
	sack_peer_grow(&sp);
	memset(buf, 'c', sizeof(buf));
	assert_int_equal(wn_tcp_send(sp.c, buf, 8000), 8000);
	hx_step(&sp.h);
	assert_int_equal(sack_peer_sent(&sp, off, 16), 8); /* [4000, 12000) */
	/* 4000 arrived, 5000 lost, 6000..8000 arrived: one ACK says so */
	sack_peer_ack(&sp, 5000, 40000, 1, blk);
	wn_tcp_conn_info(sp.c, &ci);
	assert_true(ci.in_recovery);
	assert_int_equal(ci.snd_una, sp.base + 5000);
	n = sack_peer_sent(&sp, off, 16);
	assert_true(n >= 1);
	assert_int_equal(off[0], 5000);
	assert_int_equal(hx_stats(&sp.h, 1).fast_retrans, 1);
	sack_peer_fini(&sp);
}

/*
 * A retransmission lost in recovery: data sent after it is SACKed more than DupThresh
 * segments beyond, so the hole is sent again in the same recovery instead of by the RTO.
 * The second hole is the one whose retransmission is lost (not SND.UNA).
 */
static void
test_sack_lost_retransmission_resent(void **state)
{
	struct wn_tcp_ctx_conf tc = { .flags = WN_TCP_F_SACK | WN_TCP_F_NODELAY };
	struct sack_peer sp;
	struct wn_tcp_info ci;
	uint8_t buf[32000];
	uint32_t off[64], top;
	unsigned int n, resent = 0;
	(void)state;

	sack_peer_init(&sp, &tc);
	sack_peer_grow(&sp);
	memset(buf, 'r', sizeof(buf));
	assert_int_equal(wn_tcp_send(sp.c, buf, 32000), 32000);
	hx_step(&sp.h);
	assert_int_equal(sack_peer_sent(&sp, off, 64), 8); /* [4000, 12000) */
	/* 4000 and 6000 lost, the rest SACKed; the window shrinks as the peer buffers */
	{
		const uint32_t blk[2][2] = { { 7000, 12000 }, { 5000, 6000 } };

		sack_peer_ack(&sp, 0 + 4000, 30000, 2, blk);
	}
	wn_tcp_conn_info(sp.c, &ci);
	assert_true(ci.in_recovery);
	n = sack_peer_sent(&sp, off, 64);
	assert_true(sent_has(off, n, 4000));
	assert_true(sent_has(off, n, 6000));
	/* 4000's retransmission arrives, 6000's is lost; new data keeps being SACKed */
	top = 12000;
	for (unsigned int i = 0; i < n; i++)
		if (off[i] >= top)
			top = off[i] + 1000;
	{
		const uint32_t blk[1][2] = { { 7000, top } };

		sack_peer_ack(&sp, 6000, 29000, 1, blk);
	}
	for (int round = 0; round < 8 && resent == 0; round++) {
		const uint32_t blk[1][2] = { { 7000, top } };

		n = sack_peer_sent(&sp, off, 64);
		for (unsigned int i = 0; i < n; i++) {
			if (off[i] == 6000)
				resent++;
			if (off[i] >= top)
				top = off[i] + 1000;
		}
		if (resent > 0)
			break;
		sack_peer_ack(&sp, 6000, (uint16_t)(28000 - 1000 * round), 1, blk);
	}
	assert_int_equal(resent, 1);
	assert_true(top > 12000 + 3 * 1000);
	assert_int_equal(hx_stats(&sp.h, 1).rxt_lost, 1);
	assert_int_equal(hx_stats(&sp.h, 1).rto_fired, 0);
	wn_tcp_conn_info(sp.c, &ci);
	assert_true(ci.in_recovery);
	/* the second copy arrives: everything up to the SACKed top is acknowledged */
	sack_peer_ack(&sp, top, 30000, 0, NULL);
	wn_tcp_conn_info(sp.c, &ci);
	assert_int_equal(ci.snd_una, sp.base + top);
	sack_peer_fini(&sp);
}

/*
 * RFC 8985 §7 tail loss probe. The ACK of a whole flight is lost: a probe (the last
 * segment again) goes out after about two RTTs instead of the 200 ms RTO, and the peer's
 * D-SACK shows nothing was lost (no congestion response). With data waiting and the
 * window open, the probe carries new data instead.
 */
static void
test_tail_loss_probe(void **state)
{
	struct wn_tcp_ctx_conf tc = { .flags = WN_TCP_F_SACK | WN_TCP_F_NODELAY };
	struct sack_peer sp;
	struct wn_tcp_info ci;
	uint8_t buf[16000];
	uint32_t off[64], cwnd;
	unsigned int n;
	(void)state;

	sack_peer_init(&sp, &tc);
	sack_peer_grow(&sp); /* also an RTT sample */
	memset(buf, 't', sizeof(buf));
	assert_int_equal(wn_tcp_send(sp.c, buf, 4000), 4000);
	hx_step(&sp.h);
	assert_int_equal(sack_peer_sent(&sp, off, 64), 4); /* [4000, 8000) */
	wn_tcp_conn_info(sp.c, &ci);
	cwnd = ci.cwnd;
	/* no ACK comes: 10 ms later (far below the RTO) one probe went out */
	hx_run(&sp.h, 10000, 1000);
	n = sack_peer_sent(&sp, off, 64);
	assert_int_equal(n, 1);
	assert_int_equal(off[0], 7000);
	assert_int_equal(hx_stats(&sp.h, 1).tlp_probes, 1);
	assert_int_equal(hx_stats(&sp.h, 1).rto_fired, 0);
	/* one probe per tail */
	hx_run(&sp.h, 10000, 1000);
	assert_int_equal(sack_peer_sent(&sp, off, 64), 0);
	/* everything had arrived: ACK with a D-SACK of the probe, no cwnd reduction */
	{
		const uint32_t blk[1][2] = { { 7000, 8000 } };

		sack_peer_ack(&sp, 8000, 65535, 1, blk);
	}
	wn_tcp_conn_info(sp.c, &ci);
	assert_true(ci.cwnd >= cwnd); /* slow start goes on */
	assert_false(ci.in_recovery);
	assert_int_equal(hx_stats(&sp.h, 1).tlp_recovered, 0);
	cwnd = ci.cwnd;
	/* cwnd-limited with data queued: the probe is new data */
	assert_int_equal(wn_tcp_send(sp.c, buf, 16000), 16000);
	hx_step(&sp.h);
	n = sack_peer_sent(&sp, off, 64);
	assert_int_equal(n, cwnd / 1000);
	hx_run(&sp.h, 10000, 1000);
	n = sack_peer_sent(&sp, off, 64);
	assert_int_equal(n, 1);
	assert_int_equal(off[0], 8000 + cwnd);
	assert_int_equal(hx_stats(&sp.h, 1).tlp_probes, 2);
	assert_int_equal(hx_stats(&sp.h, 1).rto_fired, 0);
	sack_peer_fini(&sp);
}

/*
 * A probe that repairs a loss (its ACK goes beyond it without D-SACK) takes the congestion
 * response of RFC 8985 §7.4.2.
 */
static void
test_tail_loss_probe_repairs_loss(void **state)
{
	struct wn_tcp_ctx_conf tc = { .flags = WN_TCP_F_SACK | WN_TCP_F_NODELAY };
	struct sack_peer sp;
	struct wn_tcp_info ci;
	uint8_t buf[8000];
	uint32_t off[64], cwnd;
	(void)state;

	sack_peer_init(&sp, &tc);
	sack_peer_grow(&sp);
	memset(buf, 'p', sizeof(buf));
	assert_int_equal(wn_tcp_send(sp.c, buf, 4000), 4000);
	hx_step(&sp.h);
	assert_int_equal(sack_peer_sent(&sp, off, 64), 4); /* [4000, 8000) */
	wn_tcp_conn_info(sp.c, &ci);
	cwnd = ci.cwnd;
	/* 4000..7000 arrived and were ACKed; the ACK was lost, and so was 7000 */
	hx_run(&sp.h, 10000, 1000);
	assert_int_equal(sack_peer_sent(&sp, off, 64), 1);
	assert_int_equal(off[0], 7000);
	/* the probe fills the hole: ACK of it, no D-SACK; then new data is ACKed */
	sack_peer_ack(&sp, 8000, 65535, 0, NULL);
	assert_int_equal(hx_stats(&sp.h, 1).tlp_recovered, 0); /* a D-SACK could still come */
	assert_int_equal(wn_tcp_send(sp.c, buf, 1000), 1000);
	hx_step(&sp.h);
	assert_int_equal(sack_peer_sent(&sp, off, 64), 1);
	sack_peer_ack(&sp, 9000, 65535, 0, NULL);
	assert_int_equal(hx_stats(&sp.h, 1).tlp_recovered, 1);
	wn_tcp_conn_info(sp.c, &ci);
	assert_true(ci.cwnd < cwnd);
	sack_peer_fini(&sp);
}

/*
 * RFC 8985 §7.4.1: a probe (the last segment again) that the peer SACKs while SND.UNA stays
 * unacknowledged shows SND.UNA's segment lost: recovery starts without three duplicates.
 */
static void
test_tail_loss_probe_sacked_starts_recovery(void **state)
{
	struct wn_tcp_ctx_conf tc = { .flags = WN_TCP_F_SACK | WN_TCP_F_NODELAY };
	const uint32_t blk[1][2] = { { 5000, 6000 } };
	struct sack_peer sp;
	struct wn_tcp_info ci;
	uint8_t buf[2000];
	uint32_t off[64];
	(void)state;

	sack_peer_init(&sp, &tc);
	sack_peer_grow(&sp);
	memset(buf, 's', sizeof(buf));
	assert_int_equal(wn_tcp_send(sp.c, buf, 2000), 2000);
	hx_step(&sp.h);
	assert_int_equal(sack_peer_sent(&sp, off, 64), 2); /* [4000, 6000) */
	hx_run(&sp.h, 10000, 1000);
	assert_int_equal(sack_peer_sent(&sp, off, 64), 1);
	assert_int_equal(off[0], 5000); /* the probe */
	/* 4000 was lost: the peer SACKs the probe */
	sack_peer_ack(&sp, 4000, 65535, 1, blk);
	wn_tcp_conn_info(sp.c, &ci);
	assert_true(ci.in_recovery);
	assert_int_equal(sack_peer_sent(&sp, off, 64), 1);
	assert_int_equal(off[0], 4000);
	assert_int_equal(hx_stats(&sp.h, 1).fast_retrans, 1);
	sack_peer_ack(&sp, 6000, 65535, 0, NULL);
	wn_tcp_conn_info(sp.c, &ci);
	assert_false(ci.in_recovery);
	assert_int_equal(hx_stats(&sp.h, 1).rto_fired, 0);
	sack_peer_fini(&sp);
}

/*
 * In recovery, silence after the last retransmission (its ACK, or the retransmission,
 * lost) is answered by a probe of SND.UNA well before the RTO.
 */
static void
test_probe_in_recovery(void **state)
{
	struct wn_tcp_ctx_conf tc = { .flags = WN_TCP_F_SACK | WN_TCP_F_NODELAY };
	struct sack_peer sp;
	struct wn_tcp_info ci;
	uint8_t buf[4000];
	uint32_t off[64];
	unsigned int n;
	(void)state;

	sack_peer_init(&sp, &tc);
	sack_peer_grow(&sp);
	memset(buf, 'i', sizeof(buf));
	assert_int_equal(wn_tcp_send(sp.c, buf, 4000), 4000);
	hx_step(&sp.h);
	assert_int_equal(sack_peer_sent(&sp, off, 64), 4); /* [4000, 8000) */
	for (uint32_t k = 1; k <= 3; k++) {
		const uint32_t blk[1][2] = { { 5000, 5000 + 1000 * k } };

		sack_peer_ack(&sp, 4000, 65535, 1, blk);
	}
	wn_tcp_conn_info(sp.c, &ci);
	assert_true(ci.in_recovery);
	n = sack_peer_sent(&sp, off, 64);
	assert_true(sent_has(off, n, 4000));
	/* the ACK completing the recovery is lost: silence */
	hx_run(&sp.h, 10000, 1000);
	n = sack_peer_sent(&sp, off, 64);
	assert_int_equal(n, 1);
	assert_int_equal(off[0], 4000);
	assert_int_equal(hx_stats(&sp.h, 1).tlp_probes, 1);
	assert_int_equal(hx_stats(&sp.h, 1).rto_fired, 0);
	{
		const uint32_t blk[1][2] = { { 4000, 5000 } };

		sack_peer_ack(&sp, 8000, 65535, 1, blk); /* with the D-SACK of the probe */
	}
	wn_tcp_conn_info(sp.c, &ci);
	assert_false(ci.in_recovery);
	assert_int_equal(ci.snd_una, sp.base + 8000);
	assert_int_equal(hx_stats(&sp.h, 1).tlp_recovered, 0);
	sack_peer_fini(&sp);
}

/*
 * RFC 3708 / RFC 4015: a recovery whose only retransmission the peer reports as a duplicate
 * (D-SACK) was caused by reordering: the window reduction is undone. A recovery whose
 * retransmission repaired a loss is not.
 */
static void
test_dsack_undoes_spurious_recovery(void **state)
{
	struct wn_tcp_ctx_conf tc = { .flags = WN_TCP_F_SACK | WN_TCP_F_NODELAY };
	struct sack_peer sp;
	struct wn_tcp_info ci;
	uint8_t buf[8000];
	uint32_t off[64], prior;
	unsigned int n;
	(void)state;

	sack_peer_init(&sp, &tc);
	sack_peer_grow(&sp);
	memset(buf, 'u', sizeof(buf));
	wn_tcp_conn_info(sp.c, &ci);
	prior = ci.cwnd;
	assert_int_equal(wn_tcp_send(sp.c, buf, 8000), 8000);
	hx_step(&sp.h);
	assert_int_equal(sack_peer_sent(&sp, off, 64), 8); /* [4000, 12000) */
	/* 4000 is late: 5000..7000 SACKed first */
	for (uint32_t k = 1; k <= 3; k++) {
		const uint32_t blk[1][2] = { { 5000, 5000 + 1000 * k } };

		sack_peer_ack(&sp, 4000, 65535, 1, blk);
	}
	wn_tcp_conn_info(sp.c, &ci);
	assert_true(ci.in_recovery);
	assert_true(ci.cwnd < prior);
	n = sack_peer_sent(&sp, off, 64);
	assert_true(sent_has(off, n, 4000));
	/* the original arrives: full ACK, recovery over at ssthresh */
	sack_peer_ack(&sp, 12000, 65535, 0, NULL);
	wn_tcp_conn_info(sp.c, &ci);
	assert_false(ci.in_recovery);
	assert_true(ci.cwnd < prior);
	/* then the retransmission: D-SACK, and the reduction is undone */
	{
		const uint32_t blk[1][2] = { { 4000, 5000 } };

		sack_peer_ack(&sp, 12000, 65535, 1, blk);
	}
	wn_tcp_conn_info(sp.c, &ci);
	assert_true(ci.cwnd >= prior);
	assert_int_equal(hx_stats(&sp.h, 1).undo_spurious, 1);
	/* reordering seen: DupThresh is 4 now, three SACKed segments past a late one wait */
	assert_int_equal(ci.dupthresh, 4);
	assert_int_equal(wn_tcp_send(sp.c, buf, 8000), 8000);
	hx_step(&sp.h);
	assert_true(sack_peer_sent(&sp, off, 64) >= 5); /* from 12000 */
	for (uint32_t k = 1; k <= 3; k++) {
		const uint32_t blk[1][2] = { { 13000, 13000 + 1000 * k } };

		sack_peer_ack(&sp, 12000, 65535, 1, blk);
	}
	wn_tcp_conn_info(sp.c, &ci);
	assert_false(ci.in_recovery);
	{
		const uint32_t blk[1][2] = { { 13000, 17000 } };

		sack_peer_ack(&sp, 12000, 65535, 1, blk);
	}
	wn_tcp_conn_info(sp.c, &ci);
	assert_true(ci.in_recovery); /* the fourth one: lost after all */
	assert_int_equal(hx_stats(&sp.h, 1).fast_retrans, 2);
	/* a real loss: the retransmission is not reported as a duplicate, no undo */
	sack_peer_fini(&sp);
	sack_peer_init(&sp, &tc);
	sack_peer_grow(&sp);
	assert_int_equal(wn_tcp_send(sp.c, buf, 8000), 8000);
	hx_step(&sp.h);
	sack_peer_sent(&sp, off, 64);
	for (uint32_t k = 1; k <= 3; k++) {
		const uint32_t blk[1][2] = { { 5000, 5000 + 1000 * k } };

		sack_peer_ack(&sp, 4000, 65535, 1, blk);
	}
	sack_peer_ack(&sp, 12000, 65535, 0, NULL);
	{
		const uint32_t blk[1][2] = { { 11000, 12000 } }; /* a duplicate, not ours */

		sack_peer_ack(&sp, 12000, 65535, 1, blk);
	}
	wn_tcp_conn_info(sp.c, &ci);
	assert_true(ci.cwnd < prior);
	assert_int_equal(hx_stats(&sp.h, 1).undo_spurious, 0);
	wn_tcp_conn_info(sp.c, &ci);
	assert_int_equal(ci.dupthresh, 3);
	sack_peer_fini(&sp);
}

static void
test_delayed_ack(void **state)
{
	static const uint8_t opts[] = { 2, 4, 0x05, 0xb4 };
	struct hx h;
	struct tapp cli;
	struct hx_parsed syn, p;
	uint8_t buf[1460];
	struct hx_seg d = { .seq = 1001, .flags = RTE_TCP_ACK_FLAG, .win = 65535,
			    .sport = RAW_PORT, .dport = 6000, .data = buf, .len = 100 };
	struct wn_tcp_ctx_conf tc = { .delack_us = 40000 };
	(void)state;

	memset(buf, 'z', sizeof(buf));
	hx_init_conf(&h, &tc, true, false);
	tapp_init(&cli);
	raw_peer_accept(&h, &cli, opts, sizeof(opts), 1000, &syn);
	d.ack = syn.seq + 1;
	hx_inject(&h, 1, &d);
	assert_int_equal(cli.rx_len, 100);
	assert_false(hx_cap_tcp(&h, &p)); /* held back */
	hx_run(&h, 30000, 1000);
	assert_false(hx_cap_tcp(&h, &p));
	hx_run(&h, 15000, 1000);
	assert_true(hx_cap_tcp(&h, &p)); /* the timer fired */
	assert_int_equal(p.ack, 1101);
	assert_int_equal(hx_stats(&h, 1).delack_fired, 1);
	/* two full-sized segments: ACK at once (RFC 5681 §4.2) */
	d.seq = 1101;
	d.len = 1460;
	hx_inject(&h, 1, &d);
	assert_false(hx_cap_tcp(&h, &p));
	d.seq = 1101 + 1460;
	hx_inject(&h, 1, &d);
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.ack, 1101 + 2920);
	tapp_fini(&cli);
	hx_fini(&h);
}

/* A data segment whose TCP checksum computes to 0x0000; the field is then set to @p field. */
static struct rte_mbuf *
zero_sum_frame(struct hx *h, struct hx_seg *d, uint8_t *payload, uint16_t field)
{
	struct rte_mbuf *m;
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;
	uint16_t fix;

	payload[0] = payload[1] = 0;
	m = hx_craft(h, 0, 1, d);
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);
	th = (struct rte_tcp_hdr *)(ip + 1);
	fix = th->cksum; /* adding ~sum to the sum makes it 0xffff: checksum 0x0000 */
	memcpy((uint8_t *)th + 20, &fix, 2);
	memcpy(payload, &fix, 2);
	th->cksum = 0;
	assert_int_equal(rte_ipv4_udptcp_cksum(ip, th), 0x0000);
	th->cksum = field;
	return m;
}

/*
 * RFC 9293 §3.1: 0x0000 is a TCP checksum like any other (not "no checksum" as in UDP), and
 * 0xffff written for it (RFC 768's UDP rule, as DPDK 22.11's net_tap offload does) sums the
 * same; both are accepted, a wrong checksum is not.
 */
static void
test_rx_checksum_zero_accepted(void **state)
{
	static const uint8_t opts[] = { 2, 4, 0x05, 0xb4 };
	struct hx h;
	struct tapp cli;
	struct hx_parsed syn;
	uint8_t buf[64];
	struct hx_seg d = { .seq = 1001, .flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG,
			    .win = 65535, .sport = RAW_PORT, .dport = 6000, .data = buf,
			    .len = sizeof(buf) };
	struct rte_mbuf *m;
	(void)state;

	memset(buf, 'k', sizeof(buf));
	hx_init_conf(&h, NULL, true, false);
	tapp_init(&cli);
	raw_peer_accept(&h, &cli, opts, sizeof(opts), 1000, &syn);
	d.ack = syn.seq + 1;
	hx_deliver(&h, 1, zero_sum_frame(&h, &d, buf, 0x0000));
	hx_step(&h);
	assert_int_equal(cli.rx_len, sizeof(buf));
	assert_memory_equal(cli.rx, buf, sizeof(buf));
	d.seq += sizeof(buf);
	hx_deliver(&h, 1, zero_sum_frame(&h, &d, buf, 0xffff));
	hx_step(&h);
	assert_int_equal(cli.rx_len, 2 * sizeof(buf));
	assert_memory_equal(cli.rx + sizeof(buf), buf, sizeof(buf));
	assert_int_equal(hx_stats(&h, 1).rx_drop_cksum, 0);
	/* a checksum that is simply wrong is still caught */
	d.seq += sizeof(buf);
	m = zero_sum_frame(&h, &d, buf, 0x0001);
	hx_deliver(&h, 1, m);
	hx_step(&h);
	assert_int_equal(cli.rx_len, 2 * sizeof(buf));
	assert_int_equal(hx_stats(&h, 1).rx_drop_cksum, 1);
	tapp_fini(&cli);
	hx_fini(&h);
}

static void
test_ooo_queue_bounded_and_sack_blocks(void **state)
{
	static const uint8_t opts[] = { 2, 4, 0x05, 0xb4, 1, 1, 4, 2 };
	struct hx h;
	struct tapp cli;
	struct hx_parsed syn, p;
	uint8_t buf[100];
	struct hx_seg d = { .flags = RTE_TCP_ACK_FLAG, .win = 65535, .sport = RAW_PORT,
			    .dport = 6000, .data = buf, .len = 100 };
	struct wn_tcp_ctx_conf tc = { .ooo_max = 3, .flags = WN_TCP_F_SACK | WN_TCP_F_NODELAY };
	struct wn_tcp_info ci;
	(void)state;

	for (unsigned int i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)i;
	hx_init_conf(&h, &tc, true, false);
	tapp_init(&cli);
	raw_peer_accept(&h, &cli, opts, sizeof(opts), 1000, &syn);
	d.ack = syn.seq + 1;
	/* islands at +200, +400, +600: three intervals, each ACKed at once with SACK */
	for (uint32_t k = 1; k <= 3; k++) {
		d.seq = 1001 + 200 * k;
		hx_inject(&h, 1, &d);
		/* the upper layer sees each island's octets at once (recv_ooo: early placement) */
		assert_int_equal(cli.n_ooo, k);
		assert_int_equal(cli.ooo_seq, 1001 + 200 * k);
		assert_int_equal(cli.ooo_len, 100);
		assert_memory_equal(cli.ooo_data, buf, 100);
		assert_true(hx_cap_tcp(&h, &p));
		assert_int_equal(p.ack, 1001);
		assert_int_equal(p.nsack, k);
		/* RFC 2018 §4: the first block is the most recent segment */
		assert_int_equal(p.sack[0][0], 1001 + 200 * k);
		assert_int_equal(p.sack[0][1], 1001 + 200 * k + 100);
	}
	/* a duplicate island is not reported again */
	d.seq = 1001 + 200;
	hx_inject(&h, 1, &d);
	assert_int_equal(cli.n_ooo, 3);
	/* a fourth island exceeds the bound: dropped and counted, not reported */
	d.seq = 1001 + 800;
	hx_inject(&h, 1, &d);
	assert_int_equal(hx_stats(&h, 1).rx_drop_ooo_full, 1);
	assert_int_equal(cli.n_ooo, 3);
	wn_tcp_conn_info(cli.conn, &ci);
	assert_int_equal(ci.ooo_intervals, 3);
	assert_int_equal(cli.rx_len, 0);
	/* extending an island does not need a new interval */
	d.seq = 1001 + 300;
	hx_inject(&h, 1, &d);
	wn_tcp_conn_info(cli.conn, &ci);
	assert_int_equal(ci.ooo_intervals, 2);
	/* filling the first hole delivers everything contiguous, in order (not out of order) */
	d.seq = 1001;
	d.len = 100;
	hx_inject(&h, 1, &d);
	assert_int_equal(cli.rx_len, 100);
	assert_int_equal(cli.n_ooo, 4); /* the extension at +300 above was one */
	d.seq = 1101;
	hx_inject(&h, 1, &d);
	assert_int_equal(cli.rx_len, 500);
	for (unsigned int i = 0; i < 5; i++)
		assert_memory_equal(cli.rx + 100 * i, buf, 100);
	wn_tcp_conn_info(cli.conn, &ci);
	assert_int_equal(ci.rcv_nxt, 1501);
	assert_int_equal(ci.ooo_intervals, 1); /* +600 still waits */
	tapp_fini(&cli);
	hx_fini(&h);
}

/*
 * RFC 2883 §4: the receiver reports a duplicate segment in the first SACK block of the next
 * ACK (D-SACK), once: below RCV.NXT (a retransmission of something that arrived late) and
 * inside an out-of-order interval, followed by the interval that holds it (§4.1.2). Without
 * it a warpnic sender never learns that reordering was taken for loss.
 */
static void
test_dsack_sent_for_duplicates(void **state)
{
	static const uint8_t opts[] = { 2, 4, 0x05, 0xb4, 1, 1, 4, 2 };
	struct hx h;
	struct tapp cli;
	struct hx_parsed syn, p;
	uint8_t buf[100] = { 0 };
	struct hx_seg d = { .flags = RTE_TCP_ACK_FLAG, .win = 65535, .sport = RAW_PORT,
			    .dport = 6000, .data = buf, .len = 100 };
	struct wn_tcp_ctx_conf tc = { .flags = WN_TCP_F_SACK | WN_TCP_F_NODELAY };
	(void)state;

	hx_init_conf(&h, &tc, true, false);
	tapp_init(&cli);
	raw_peer_accept(&h, &cli, opts, sizeof(opts), 1000, &syn);
	d.ack = syn.seq + 1;
	/* in order, PSH: ACKed without SACK */
	d.seq = 1001;
	d.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
	hx_inject(&h, 1, &d);
	hx_run(&h, 0, 1);
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.ack, 1101);
	assert_int_equal(p.nsack, 0);
	/* the same segment again: D-SACK below the ACK */
	hx_inject(&h, 1, &d);
	hx_run(&h, 0, 1);
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.ack, 1101);
	assert_int_equal(p.nsack, 1);
	assert_int_equal(p.sack[0][0], 1001);
	assert_int_equal(p.sack[0][1], 1101);
	assert_int_equal(hx_stats(&h, 1).rx_dup_data, 1);
	/* reported once: the next ACK (new data) carries no SACK */
	d.seq = 1101;
	hx_inject(&h, 1, &d);
	hx_run(&h, 0, 1);
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.ack, 1201);
	assert_int_equal(p.nsack, 0);
	/* an island at +300, a second one at +500, then the first one again: D-SACK of it,
	 * followed by the interval that holds it */
	d.flags = RTE_TCP_ACK_FLAG;
	d.seq = 1301;
	hx_inject(&h, 1, &d);
	d.seq = 1501;
	hx_inject(&h, 1, &d);
	while (hx_cap_tcp(&h, &p))
		;
	d.seq = 1301;
	hx_inject(&h, 1, &d);
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.ack, 1201);
	assert_int_equal(p.nsack, 3);
	assert_int_equal(p.sack[0][0], 1301);
	assert_int_equal(p.sack[0][1], 1401);
	assert_int_equal(p.sack[1][0], 1301);
	assert_int_equal(p.sack[1][1], 1401);
	assert_int_equal(p.sack[2][0], 1501);
	/* the hole filled (RCV.NXT 1401), then a segment partly below RCV.NXT: the duplicated
	 * part is reported, the new part kept */
	d.seq = 1201;
	hx_inject(&h, 1, &d);
	while (hx_cap_tcp(&h, &p))
		;
	assert_int_equal(cli.rx_len, 400);
	d.seq = 1351; /* 1351..1401 old, 1401..1451 new */
	hx_inject(&h, 1, &d);
	hx_run(&h, 0, 1);
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.ack, 1451);
	assert_int_equal(p.nsack, 2);
	assert_int_equal(p.sack[0][0], 1351);
	assert_int_equal(p.sack[0][1], 1401);
	assert_int_equal(p.sack[1][0], 1501);
	assert_int_equal(cli.rx_len, 450);
	tapp_fini(&cli);
	hx_fini(&h);
}

/* Reorders side 0's data segments: about one in 30 is held back behind 3 later ones. */
struct deep_reorder {
	struct rte_mbuf *held;
	unsigned int behind;
	uint64_t held_total;
};

static bool
deep_reorder_filter(struct hx *h, int from, struct rte_mbuf *m, void *arg)
{
	struct deep_reorder *r = arg;
	struct hx_parsed p;

	if (from != 0 || !hx_parse(m, &p) || p.len == 0)
		return false;
	if (r->held != NULL) {
		if (++r->behind < 3)
			return false;
		/* the held one arrives right after this, the third one behind it */
		hx_deliver(h, 1, rte_pktmbuf_copy(m, h->pool, 0, UINT32_MAX));
		hx_deliver(h, 1, r->held);
		r->held = NULL;
		return true;
	}
	if (hx_rand(h) % 30 != 0)
		return false;
	r->held = rte_pktmbuf_copy(m, h->pool, 0, UINT32_MAX);
	assert_non_null(r->held);
	r->behind = 0;
	r->held_total++;
	return true;
}

/*
 * Two warpnic stacks, a link that reorders 3 deep and loses nothing: the first reordered
 * segment is taken for a loss (DupThresh 3), the retransmission arrives as a duplicate, the
 * receiver's D-SACK reports it and the sender undoes the reduction and raises DupThresh
 * (RFC 3708, RFC 4653's idea). Before the receiver sent D-SACKs, every reordered segment
 * cost the sender half its window.
 */
static void
test_reorder_undone_between_stacks(void **state)
{
	struct hx h;
	struct tapp cli, srv;
	size_t total = 4u << 20;
	uint8_t *data = hx_pattern(total, 21);
	struct deep_reorder r = { 0 };
	struct wn_tcp_stats st;
	struct wn_tcp_info ci;
	(void)state;

	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	h.filter = deep_reorder_filter;
	h.filter_arg = &r;
	transfer(&h, &cli, &srv, data, total, 600ull * 1000000);
	h.filter = NULL;
	rte_pktmbuf_free(r.held);
	assert_int_equal(srv.rx_len, total);
	assert_memory_equal(srv.rx, data, total);
	st = hx_stats(&h, 0);
	assert_true(r.held_total > 50);
	assert_true(hx_stats(&h, 1).rx_dup_data > 0);
	assert_true(st.undo_spurious > 0);
	/* after the first undo, reordering 3 deep no longer looks like loss */
	assert_true(st.fast_retrans < 10);
	wn_tcp_conn_info(cli.conn, &ci);
	assert_true(ci.dupthresh > 3);
	free(data);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

/*
 * send_budget: the connections holding data share it equally (two segments each at
 * least), the context's total stays near it, and every connection's data gets through.
 */
static void
test_send_budget_shared(void **state)
{
	struct wn_tcp_ctx_conf tc = { .sndbuf = 256 * 1024, .rcvbuf = 256 * 1024,
				      .send_budget = 64 * 1024 };
	const size_t total = 2u << 20;
	uint8_t *data = hx_pattern(total, 11), chunk[40 * 1024] = { 0 };
	struct tapp cli[3], srv[3];
	size_t off[3] = { 0 };
	uint64_t peak = 0;
	struct hx h;
	uint32_t emss;

	(void)state;
	hx_init_conf(&h, &tc, false, false);
	for (int i = 0; i < 3; i++) {
		tapp_init(&cli[i]);
		tapp_init(&srv[i]);
		hx_connect_port(&h, &cli[i], &srv[i], (uint16_t)(5000 + i));
	}
	emss = cli[0].emss;
	/* nobody holds data: the whole budget; A takes 40 KiB of it */
	assert_int_equal(wn_tcp_send_space(cli[0].conn), 64 * 1024);
	assert_int_equal(wn_tcp_send(cli[0].conn, chunk, sizeof(chunk)), (int)sizeof(chunk));
	assert_int_equal(hx_stats(&h, 0).snd_bytes, sizeof(chunk));
	assert_int_equal(hx_stats(&h, 0).snd_conns, 1);
	/* A alone: the rest of the budget; B, the second, would have half, but only the rest
	 * is left */
	assert_int_equal(wn_tcp_send_space(cli[0].conn), 24 * 1024);
	assert_int_equal(wn_tcp_send_space(cli[1].conn), 24 * 1024);
	assert_int_equal(wn_tcp_send(cli[1].conn, chunk, sizeof(chunk)), 24 * 1024);
	/* the budget is spent and A is over its half: nothing more for A or B; C, holding
	 * nothing, two segments all the same */
	assert_int_equal(wn_tcp_send_space(cli[0].conn), 0);
	assert_int_equal(wn_tcp_send_space(cli[1].conn), 0);
	assert_int_equal(wn_tcp_send_space(cli[2].conn), 2 * emss);
	/* acknowledged, the buffers are empty again and the budget is whole */
	hx_run(&h, 50000, 1000);
	assert_int_equal(hx_stats(&h, 0).snd_bytes, 0);
	assert_int_equal(hx_stats(&h, 0).snd_conns, 0);
	assert_int_equal(wn_tcp_send_space(cli[2].conn), 64 * 1024);

	/* three streams at once: each gets through, byte-exact; the total stays near the budget */
	for (int i = 0; i < 3; i++)
		srv[i].rx_len = 0;
	while (srv[0].rx_len < total || srv[1].rx_len < total || srv[2].rx_len < total) {
		for (int i = 0; i < 3; i++) {
			int n = wn_tcp_send(cli[i].conn, data + off[i],
					    (uint32_t)RTE_MIN(total - off[i], (size_t)65536));

			assert_true(n >= 0);
			off[i] += (size_t)n;
		}
		peak = RTE_MAX(peak, hx_stats(&h, 0).snd_bytes);
		hx_run(&h, 1000, 1000);
		assert_true(h.now < 600ull * 1000000);
	}
	for (int i = 0; i < 3; i++)
		assert_memory_equal(srv[i].rx, data, total);
	assert_true(peak > 0 && peak <= 64 * 1024 + 3 * 2 * emss);

	/* a budget smaller than two segments a connection: two segments each all the same */
	for (int i = 0; i < 3; i++)
		tapp_fini(&cli[i]), tapp_fini(&srv[i]);
	hx_fini(&h);
	tc.send_budget = 1000;
	hx_init_conf(&h, &tc, false, false);
	tapp_init(&cli[0]);
	tapp_init(&srv[0]);
	hx_connect_port(&h, &cli[0], &srv[0], 5000);
	assert_int_equal(wn_tcp_send_space(cli[0].conn), 2 * emss);
	tapp_fini(&cli[0]);
	tapp_fini(&srv[0]);
	hx_fini(&h);
	free(data);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bulk_stream),
		cmocka_unit_test(test_buffers_on_demand),
		cmocka_unit_test(test_loss_reorder_sack),
		cmocka_unit_test(test_fault_injector_mix),
		cmocka_unit_test(test_loss_reorder_newreno_nosack),
		cmocka_unit_test(test_loss_cubic),
		cmocka_unit_test(test_sequence_wraparound),
		cmocka_unit_test(test_records_never_split),
		cmocka_unit_test(test_records_boundaries_kept_on_retransmission),
		cmocka_unit_test(test_rto_backoff),
		cmocka_unit_test(test_spurious_rto_undone),
		cmocka_unit_test(test_retries_exhausted_times_out),
		cmocka_unit_test(test_keepalive),
		cmocka_unit_test(test_zero_window_probe_and_reopen),
		cmocka_unit_test(test_sack_scoreboard_and_recovery_newreno),
		cmocka_unit_test(test_sack_scoreboard_and_recovery_cubic),
		cmocka_unit_test(test_sack_dupacks_with_changing_window),
		cmocka_unit_test(test_sack_cumulative_ack_detects_loss),
		cmocka_unit_test(test_sack_lost_retransmission_resent),
		cmocka_unit_test(test_tail_loss_probe),
		cmocka_unit_test(test_tail_loss_probe_repairs_loss),
		cmocka_unit_test(test_tail_loss_probe_sacked_starts_recovery),
		cmocka_unit_test(test_probe_in_recovery),
		cmocka_unit_test(test_dsack_undoes_spurious_recovery),
		cmocka_unit_test(test_delayed_ack),
		cmocka_unit_test(test_ooo_queue_bounded_and_sack_blocks),
		cmocka_unit_test(test_dsack_sent_for_duplicates),
		cmocka_unit_test(test_reorder_undone_between_stacks),
		cmocka_unit_test(test_rx_checksum_zero_accepted),
		cmocka_unit_test(test_send_budget_shared),
	};

	hx_eal_init("wn_tcp_data");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
