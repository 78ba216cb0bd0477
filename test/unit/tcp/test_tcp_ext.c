/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Records with external pieces (wn_tcp_send_record_ext, zero-copy transmit): the octets
 * arrive intact under loss and reordering (every retransmission attaches the same memory
 * again), records longer than the EMSS are cut at arbitrary offsets inside external pieces,
 * the release callback fires exactly once per record and never before SND.UNA passed the
 * record's end, and an abort or a freed context releases everything, but only once the mbufs
 * still holding the memory are freed too. The application scribbles over a record's memory
 * as soon as it is released, so any later use by TCP corrupts the received stream.
 * The same records with WN_TCP_REC_COPY (external pieces copied into each segment, the
 * default transmit of warpnicd) and WN_TCP_REC_CRC32C (the trailer computed at the first
 * transmission, over the segment or, for a record the segment cuts, where its octets live):
 * the stream must carry the CRC32c of each record's octets, retransmissions the same one.
 * What breaks if this fails: warpnicd's zero-copy transmit (wrong data on the wire,
 * completions before the ACK, buffers leaked or read after release), and its copying transmit
 * (wrong octets or MPA CRCs on the wire).
 */
#include "app.h"

#include "wn_wire_crc.h"

struct xctx;

struct xrec {
	struct rte_mbuf_ext_shared_info sh;
	struct xctx *x;
	uint32_t end;              /* sequence number after the record */
	uint32_t off, len;         /* its octets in the stream (and in x->mem) */
	bool ext;                  /* has external pieces (a release is expected) */
	uint32_t released;
};

struct xctx {
	struct tapp *cli;
	uint32_t flags;            /* WN_TCP_REC_* of every record */
	uint32_t crcs;             /* records appended with WN_TCP_REC_CRC32C */
	struct xrec *recs;
	uint32_t n, cap;
	uint8_t *data;             /* the expected stream */
	uint8_t *mem;              /* external memory: a copy of it, scribbled when released */
	size_t total;
	bool closing;              /* releases without an ACK are expected (abort, free) */
	uint32_t early;            /* releases before SND.UNA passed the record's end */
	uint32_t released;
	uint32_t seed;
};

static void
xrec_free(void *addr, void *opaque)
{
	struct xrec *r = opaque;
	struct xctx *x = r->x;

	(void)addr;
	r->released++;
	x->released++;
	if (!x->closing && x->cli->conn != NULL) {
		struct wn_tcp_info i;

		wn_tcp_conn_info(x->cli->conn, &i);
		if ((int32_t)(r->end - i.snd_una) > 0)
			x->early++;
	}
	/* the application reuses its buffer at once */
	memset(x->mem + r->off, 0xee, r->len);
}

static void
xctx_init(struct xctx *x, struct tapp *cli, uint32_t cap, size_t bytes)
{
	memset(x, 0, sizeof(*x));
	x->cli = cli;
	x->cap = cap;
	x->recs = calloc(cap, sizeof(*x->recs));
	x->data = hx_pattern(bytes, 3);
	x->mem = malloc(bytes);
	memcpy(x->mem, x->data, bytes);
	x->seed = 17;
}

static void
xctx_fini(struct xctx *x)
{
	free(x->recs);
	free(x->data);
	free(x->mem);
}

static uint32_t
xrand(struct xctx *x)
{
	x->seed = x->seed * 1103515245u + 12345u;
	return x->seed >> 16;
}

/*
 * Append the next record of @p len octets: MPA-like [copied header][external payload in
 * one or two pieces][copied trailer], every fifth record copied only.
 * @return wn_tcp_send_record_ext's result.
 */
static int
xappend(struct xctx *x, struct wn_tcp_conn *c, uint32_t len)
{
	struct xrec *r = &x->recs[x->n];
	struct wn_tcp_part p[4];
	unsigned int np = 0;
	uint32_t off = (uint32_t)x->total, hl, tl, mid, cut, fl = x->flags;
	static const uint8_t zero[4];
	int ret;

	memset(r, 0, sizeof(*r));
	r->x = x;
	r->off = off;
	r->len = len;
	r->sh.free_cb = xrec_free;
	r->sh.fcb_opaque = r;
	rte_mbuf_ext_refcnt_set(&r->sh, 1);
	if (len <= 4)
		fl &= ~WN_TCP_REC_CRC32C;
	if (fl & WN_TCP_REC_CRC32C) {
		/* the stream carries the CRC32c of the record's octets in its last 4 */
		wn_crc32c_put_wire(x->data + off + len - 4,
				   wn_crc32c(x->data + off, len - 4));
		memcpy(x->mem + off + len - 4, x->data + off + len - 4, 4);
	}
	if ((len < 12 || x->n % 5 == 4) && (fl & WN_TCP_REC_CRC32C)) {
		p[np++] = (struct wn_tcp_part){ .base = x->data + off, .len = len - 4 };
		p[np++] = (struct wn_tcp_part){ .base = zero, .len = 4 }; /* TCP fills it */
	} else if (len < 12 || x->n % 5 == 4) {
		p[np++] = (struct wn_tcp_part){ .base = x->data + off, .len = len };
	} else {
		hl = 2 + xrand(x) % 6;
		tl = 4;
		mid = len - hl - tl;
		cut = x->n % 3 == 0 ? xrand(x) % mid : mid; /* sometimes two external pieces */
		p[np++] = (struct wn_tcp_part){ .base = x->data + off, .len = hl };
		p[np++] = (struct wn_tcp_part){ .base = x->mem + off + hl, .len = cut, .ext = true,
						.iova = RTE_BAD_IOVA };
		p[np++] = (struct wn_tcp_part){ .base = x->mem + off + hl + cut, .len = mid - cut,
						.ext = true, .iova = RTE_BAD_IOVA };
		p[np++] = (struct wn_tcp_part){ .base = (fl & WN_TCP_REC_CRC32C) ? zero :
						x->data + off + len - tl, .len = tl };
		r->ext = true;
	}
	ret = wn_tcp_send_record_ref(c, p, np, r->ext ? &r->sh : NULL, fl);
	if (ret == 0) {
		r->end = wn_tcp_next_seq(c);
		x->total += len;
		x->n++;
		x->crcs += (fl & WN_TCP_REC_CRC32C) != 0;
	}
	return ret;
}

static void
check_all_released_once(const struct xctx *x)
{
	uint32_t want = 0;

	for (uint32_t i = 0; i < x->n; i++) {
		assert_int_equal(x->recs[i].released, x->recs[i].ext ? 1 : 0);
		want += x->recs[i].ext;
	}
	assert_int_equal(x->released, want);
	assert_true(want > 0);
}

/*
 * Send @p nrec records of up to @p maxlen octets client -> server with loss/reorder; with
 * @p early_queue the records are queued before the handshake, so those longer than the
 * EMSS are split at arbitrary offsets.
 */
static void
ext_run(uint32_t nrec, uint32_t maxlen, uint32_t drop_pm, uint32_t reorder_pm, bool early_queue,
	uint32_t flags)
{
	struct hx h;
	struct tapp cli, srv;
	struct xctx x;
	struct wn_tcp_stats st;
	uint64_t start;

	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	xctx_init(&x, &cli, nrec, (size_t)nrec * maxlen);
	x.flags = flags;
	if (early_queue) {
		struct wn_tcp_endpoint l = hx_ep(&h, 1, 5000), lc = hx_ep(&h, 0, 0);

		assert_non_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
		cli.conn = wn_tcp_connect(h.s[0].tcp, &lc, &l, &tapp_cb, &cli);
		assert_non_null(cli.conn);
	} else {
		hx_connect_pair(&h, &cli, &srv);
		assert_int_equal(wn_tcp_emss(cli.conn), 1448);
	}
	assert_int_equal(wn_tcp_set_mode(cli.conn, WN_TCP_MODE_RECORD), 0);
	h.drop_pm = drop_pm;
	h.reorder_pm = reorder_pm;
	start = h.now;
	while ((x.n < nrec || srv.rx_len < x.total) && h.now - start < 600ull * 1000000) {
		while (x.n < nrec) {
			uint32_t len = 1 + xrand(&x) % maxlen;
			int rc;

			assert_non_null(cli.conn);
			if (wn_tcp_conn_state(cli.conn) == WN_TCP_ESTABLISHED &&
			    len > wn_tcp_emss(cli.conn))
				len = wn_tcp_emss(cli.conn);
			rc = xappend(&x, cli.conn, len);
			if (rc == -ENOBUFS)
				break;
			assert_int_equal(rc, 0);
		}
		hx_run(&h, 1000, 1000);
	}
	hx_run(&h, 500000, 1000); /* the last ACKs */
	assert_int_equal(x.n, nrec);
	assert_int_equal(srv.rx_len, x.total);
	assert_memory_equal(srv.rx, x.data, x.total);
	assert_int_equal(x.early, 0);
	check_all_released_once(&x);
	st = hx_stats(&h, 0);
	if (flags & WN_TCP_REC_COPY) {
		/* copied from where they live, never attached */
		assert_int_equal(st.tx_ext_segs, 0);
		assert_true(st.tx_ref_bytes > 0);
	} else {
		assert_true(st.tx_ext_segs > 0);
		assert_true(st.tx_ext_bytes > 0);
	}
	assert_int_equal(st.rec_crc, x.crcs);
	assert_int_equal(st.ext_released, st.ext_records);
	if (drop_pm > 0)
		assert_true(st.tx_retrans > 0);
	if (early_queue)
		assert_true(st.record_split > 0);
	xctx_fini(&x);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_ext_records_clean(void **state)
{
	(void)state;
	ext_run(2000, 1448, 0, 0, false, 0);
}

static void
test_ext_records_loss(void **state)
{
	(void)state;
	ext_run(3000, 1448, 30, 30, false, 0);
}

static void
test_ext_records_split_anywhere(void **state)
{
	(void)state;
	/* queued before the handshake: cut at the EMSS, so inside external pieces */
	ext_run(100, 4000, 20, 20, true, 0);
}

/* Copied from where they live, with the trailer CRC computed at the first transmission. */
static void
test_ref_records_crc_loss(void **state)
{
	(void)state;
	ext_run(3000, 1448, 30, 30, false, WN_TCP_REC_COPY | WN_TCP_REC_CRC32C);
}

/* ... and records the EMSS cuts: their CRC read from the ring and the external memory. */
static void
test_ref_records_crc_split(void **state)
{
	(void)state;
	ext_run(100, 4000, 20, 20, true, WN_TCP_REC_COPY | WN_TCP_REC_CRC32C);
}

/* Attached (zero-copy) records with the trailer CRC computed by TCP. */
static void
test_ext_records_crc(void **state)
{
	(void)state;
	ext_run(1000, 1448, 20, 20, false, WN_TCP_REC_CRC32C);
}

static bool
drop_from_1(struct hx *h, int from, struct rte_mbuf *m, void *arg)
{
	(void)h;
	(void)m;
	(void)arg;
	return from == 1;
}

/* Without ACKs nothing is released, retransmissions included; the ACKs release each once. */
static void
test_ext_no_release_before_ack(void **state)
{
	struct hx h;
	struct tapp cli, srv;
	struct xctx x;

	(void)state;
	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	xctx_init(&x, &cli, 20, 20 * 1448);
	hx_connect_pair(&h, &cli, &srv);
	assert_int_equal(wn_tcp_set_mode(cli.conn, WN_TCP_MODE_RECORD), 0);
	h.filter = drop_from_1;
	while (x.n < 20)
		assert_int_equal(xappend(&x, cli.conn, 1000 + x.n * 20), 0);
	hx_run(&h, 3000000, 1000); /* several RTOs */
	assert_true(hx_stats(&h, 0).rto_fired > 0);
	assert_true(hx_stats(&h, 0).rto_fired >= 2); /* retransmitted from the same memory */
	assert_true(hx_stats(&h, 0).tx_ext_segs > hx_stats(&h, 0).rto_fired);
	assert_int_equal(x.released, 0);
	assert_true(srv.rx_len > 0); /* delivered, only the ACKs are lost */
	h.filter = NULL;
	hx_run(&h, 5000000, 1000);
	assert_int_equal(x.early, 0);
	check_all_released_once(&x);
	assert_memory_equal(srv.rx, x.data, x.total);
	xctx_fini(&x);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

/*
 * Abort while segments are still held (a PMD not done with them): TCP drops its references
 * at once, the release waits for the last mbuf; records never sent are released at once.
 */
static void
test_ext_abort_waits_for_mbufs(void **state)
{
	struct rte_mbuf *pkts[64];
	struct hx h;
	struct tapp cli, srv;
	struct xctx x;
	uint16_t n;
	uint32_t chains = 0;

	(void)state;
	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	xctx_init(&x, &cli, 8, 8 * 1448);
	hx_connect_pair(&h, &cli, &srv);
	assert_int_equal(wn_tcp_set_mode(cli.conn, WN_TCP_MODE_RECORD), 0);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(xappend(&x, cli.conn, 1400), 0);
	wn_tcp_process(h.s[0].tcp, h.now);
	n = wn_tcp_tx_bulk(h.s[0].tcp, pkts, 64);
	assert_true(n > 0);
	for (uint16_t i = 0; i < n; i++)
		chains += pkts[i]->nb_segs > 1;
	assert_true(chains > 0);
	x.closing = true;
	wn_tcp_abort(cli.conn);
	assert_int_equal(cli.closed, 1);
	/* initial window: some records were never sent and are released by the abort itself */
	for (uint32_t i = 0; i < x.n; i++) {
		bool held = false;

		for (uint16_t k = 0; k < n; k++) {
			struct rte_mbuf *s;

			for (s = pkts[k]; s != NULL; s = s->next)
				if (RTE_MBUF_HAS_EXTBUF(s) && s->shinfo == &x.recs[i].sh)
					held = true;
		}
		assert_int_equal(x.recs[i].released, x.recs[i].ext && !held ? 1 : 0);
	}
	rte_pktmbuf_free_bulk(pkts, n);
	check_all_released_once(&x);
	xctx_fini(&x);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

/* Freeing the context releases records of live connections (no callbacks, no ACK). */
static void
test_ext_ctx_free_releases(void **state)
{
	struct hx h;
	struct tapp cli, srv;
	struct xctx x;

	(void)state;
	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	xctx_init(&x, &cli, 8, 8 * 1448);
	hx_connect_pair(&h, &cli, &srv);
	assert_int_equal(wn_tcp_set_mode(cli.conn, WN_TCP_MODE_RECORD), 0);
	h.filter = drop_from_1;
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(xappend(&x, cli.conn, 700), 0);
	hx_run(&h, 10000, 1000);
	assert_int_equal(x.released, 0);
	x.closing = true;
	wn_tcp_ctx_free(h.s[0].tcp);
	h.s[0].tcp = NULL;
	check_all_released_once(&x);
	xctx_fini(&x);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

/* Argument checks: no reference for an external piece, stream mode, empty record. */
static void
test_ext_args(void **state)
{
	struct hx h;
	struct tapp cli, srv;
	uint8_t buf[16] = { 0 };
	struct wn_tcp_part p = { .base = buf, .len = 16, .ext = true, .iova = RTE_BAD_IOVA };
	struct rte_mbuf_ext_shared_info sh = { .free_cb = xrec_free };

	(void)state;
	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	assert_int_equal(wn_tcp_send_record_ext(cli.conn, &p, 1, &sh), -EINVAL); /* stream */
	assert_int_equal(wn_tcp_set_mode(cli.conn, WN_TCP_MODE_RECORD), 0);
	assert_int_equal(wn_tcp_send_record_ext(cli.conn, &p, 1, NULL), -EINVAL);
	assert_int_equal(wn_tcp_send_record_ext(cli.conn, &p, 0, &sh), -EINVAL);
	/* the CRC trailer must be copied octets; unknown flags */
	assert_int_equal(wn_tcp_send_record_ref(cli.conn, &p, 1, &sh, WN_TCP_REC_CRC32C),
			 -EINVAL);
	assert_int_equal(wn_tcp_send_record_ref(cli.conn, &p, 1, &sh, 1u << 7), -EINVAL);
	p.len = 2000;
	assert_int_equal(wn_tcp_send_record_ext(cli.conn, &p, 1, &sh), -EMSGSIZE);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ext_args),
		cmocka_unit_test(test_ext_records_clean),
		cmocka_unit_test(test_ext_records_loss),
		cmocka_unit_test(test_ext_records_split_anywhere),
		cmocka_unit_test(test_ref_records_crc_loss),
		cmocka_unit_test(test_ref_records_crc_split),
		cmocka_unit_test(test_ext_records_crc),
		cmocka_unit_test(test_ext_no_release_before_ack),
		cmocka_unit_test(test_ext_abort_waits_for_mbufs),
		cmocka_unit_test(test_ext_ctx_free_releases),
	};

	hx_eal_init("test_tcp_ext");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
