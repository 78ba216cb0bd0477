/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DDP over SCTP as a DDP lower layer (wn_sctp.h): two instances over two lib/net interfaces
 * wired back to back (test/unit/tcp/harness.h, virtual clock, SCTP as IP protocol 132 through
 * lib/net's receive hook), driven through the lib/llp ops the way lib/cm and lib/rnic drive
 * them, and a third party speaking raw usrsctp (the same stack, its own sockets) for what a
 * peer may do wrong. Every packet on the wire is checked: CRC32c (against usrsctp's own),
 * the Adaptation Layer Indication of DDP in INIT and INIT-ACK, DATA chunks unordered and
 * never fragmented, PPID 16 or 17, no packet above the MTU.
 *
 * What would break if these failed: iWARP connection setup over SCTP (session control with
 * Private Data and RFC 6581 IRD/ORD), ULPDUs in DDP-SSN order under loss and reordering, the
 * RFC 5043 rules against a misbehaving peer (Terminate or a clean teardown), association
 * teardown, streams leaking.
 */
#include "../tcp/harness.h"

#include <errno.h>

#include <usrsctp.h>

#include "wn_sctp.h"
#include "wn_wire_sctp.h"

#define PORT 5001
#define MAXEV 32

struct owner {
	struct wn_llp *l;
	enum wn_llp_event_type ev[MAXEV];
	unsigned int n_ev;
	struct wn_llp_event last_err;
	enum wn_llp_close why;
	uint16_t peer_ird, peer_ord;
	bool peer_enh;
	uint8_t pd[16];
	uint16_t pd_len;
	struct wn_llp_params params;
	uint8_t *rx;          /* received ULPDUs, concatenated */
	size_t rx_len;
	unsigned int rx_n;
	bool accept_in_request;
	bool reject_in_request;
	bool close_on_eof;
};

static struct wn_llp_proto *proto[2];
static struct owner own[2];
static struct hx h;

/* ---------------------------------------------------------------- wire checks */

static struct {
	unsigned int pkts, data, inits, adapt_ind, ctl, ddp, aborts, errors, shutdowns;
	uint32_t max_len;
	bool bad;
	bool raw_side0;           /* side 0 is the raw peer: its DATA may be fragmented */
	int drop_pm, reorder_pm;  /* SCTP frames: loss and reordering, per mille */
	struct rte_mbuf *held;
	int held_from;
	bool (*rewrite)(uint8_t *sctp, uint32_t len);
	bool capture_from1;       /* side 1's frames kept in cap[] instead of delivered */
	struct rte_mbuf *cap[64];
	unsigned int ncap;
} wire;

/* Look at every SCTP packet: the rules RFC 5043 and RFC 4960 set for what we send. */
static void
inspect(const uint8_t *sctp, uint32_t len, int from)
{
	uint32_t off = 12, got, want;

	memcpy(&got, sctp + 8, 4);
	{
		uint8_t *c = malloc(len);

		memcpy(c, sctp, len);
		memset(c + 8, 0, 4);
		want = usrsctp_crc32c(c, len);
		free(c);
	}
	if (got != want)
		wire.bad = true;
	wire.pkts++;
	wire.max_len = RTE_MAX(wire.max_len, len + 20);
	while (off + 4 <= len) {
		uint8_t type = sctp[off], flags = sctp[off + 1];
		uint16_t clen = (uint16_t)(sctp[off + 2] << 8 | sctp[off + 3]);

		if (clen < 4 || off + clen > len)
			break;
		switch (type) {
		case 0: /* DATA: U, B, E all set (RFC 5043 §9, §10) */
			wire.data++;
			if ((flags & 7) != 7 && !(from == 0 && wire.raw_side0))
				wire.bad = true;
			if (clen >= 16) {
				uint32_t ppid = (uint32_t)sctp[off + 12] << 24 |
						(uint32_t)sctp[off + 13] << 16 |
						(uint32_t)sctp[off + 14] << 8 | sctp[off + 15];

				wire.ctl += ppid == WN_SCTP_PPID_CTL;
				wire.ddp += ppid == WN_SCTP_PPID_DDP;
			}
			break;
		case 1: /* INIT */
		case 2: /* INIT ACK */
			wire.inits++;
			for (uint32_t p = off + 20; p + 8 <= off + clen;) {
				uint16_t pt = (uint16_t)(sctp[p] << 8 | sctp[p + 1]);
				uint16_t pl = (uint16_t)(sctp[p + 2] << 8 | sctp[p + 3]);

				if (pt == WN_SCTP_PARAM_ADAPTATION && pl == 8 && sctp[p + 4] == 0 &&
				    sctp[p + 5] == 0 && sctp[p + 6] == 0 && sctp[p + 7] == 1)
					wire.adapt_ind++;
				if (pl < 4)
					break;
				p += (pl + 3u) & ~3u;
			}
			break;
		case 6:
			wire.aborts++;
			break;
		case 7:
			wire.shutdowns++;
			break;
		case 9:
			wire.errors++;
			break;
		default:
			break;
		}
		off += (clen + 3u) & ~3u;
	}
}

static bool
sctp_filter(struct hx *hh, int from, struct rte_mbuf *m, void *arg)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t len = rte_pktmbuf_pkt_len(m);

	(void)arg;
	if (len < 14 + 20 + 12 || f[14 + 9] != WN_SCTP_IPPROTO)
		return false;
	if (wire.rewrite != NULL && wire.rewrite(f + 34, len - 34)) {
		uint32_t c;

		memset(f + 34 + 8, 0, 4);
		c = usrsctp_crc32c(f + 34, len - 34);
		memcpy(f + 34 + 8, &c, 4);
	}
	inspect(f + 34, len - 34, from);
	if (wire.capture_from1 && from == 1) {
		assert_true(wire.ncap < RTE_DIM(wire.cap));
		wire.cap[wire.ncap++] = rte_pktmbuf_copy(m, hx_pool, 0, UINT32_MAX);
		return true;
	}
	if (wire.drop_pm != 0 && hx_rand(hh) % 1000 < (uint32_t)wire.drop_pm)
		return true;
	if (wire.held != NULL && wire.held_from == from) {
		/* the frame held back goes behind this one (the harness frees the original) */
		struct rte_mbuf *x = wire.held;

		wire.held = NULL;
		hx_deliver(hh, 1 - from, rte_pktmbuf_copy(m, hx_pool, 0, UINT32_MAX));
		hx_deliver(hh, 1 - from, x);
		return true;
	}
	if (wire.held == NULL && wire.reorder_pm != 0 &&
	    hx_rand(hh) % 1000 < (uint32_t)wire.reorder_pm) {
		wire.held = rte_pktmbuf_copy(m, hx_pool, 0, UINT32_MAX);
		wire.held_from = from;
		return true;
	}
	return false;
}

/* A frame still held back goes now. */
static void
wire_flush(void)
{
	if (wire.held != NULL) {
		struct rte_mbuf *x = wire.held;

		wire.held = NULL;
		hx_deliver(&h, 1 - wire.held_from, x);
	}
}

/* ---------------------------------------------------------------- the owners */

static unsigned int
count(const struct owner *o, enum wn_llp_event_type t)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < o->n_ev; i++)
		n += o->ev[i] == t;
	return n;
}

static void
up_event(void *arg, struct wn_llp *l, const struct wn_llp_event *ev)
{
	struct owner *o = arg;

	assert_ptr_equal(l, o->l);
	assert_true(o->n_ev < MAXEV);
	o->ev[o->n_ev++] = ev->type;
	if (ev->peer != NULL) {
		o->peer_ird = ev->peer->ird;
		o->peer_ord = ev->peer->ord;
		o->peer_enh = ev->peer->enhanced;
		o->pd_len = ev->peer->pd_len;
		if (ev->peer->pd_len > 0)
			memcpy(o->pd, ev->peer->pd,
			       RTE_MIN(ev->peer->pd_len, (uint16_t)sizeof(o->pd)));
	}
	if (ev->params != NULL)
		o->params = *ev->params;
	if (ev->type == WN_LLP_EV_ERROR)
		o->last_err = *ev;
	if (ev->type == WN_LLP_EV_CLOSED)
		o->why = ev->why;
	if (ev->type == WN_LLP_EV_REQUEST && o->accept_in_request)
		assert_int_equal(wn_llp_accept(l, &(struct wn_llp_caps){8, 8},
					       (const uint8_t *)"yes", 3), 0);
	if (ev->type == WN_LLP_EV_REQUEST && o->reject_in_request)
		assert_int_equal(wn_llp_reject(l, (const uint8_t *)"no!", 3), 0);
	if (ev->type == WN_LLP_EV_EOF && o->close_on_eof)
		(void)wn_llp_close(l);
}

static int
up_ulpdu(void *arg, const uint8_t *u, size_t len)
{
	struct owner *o = arg;

	o->rx = realloc(o->rx, o->rx_len + len);
	memcpy(o->rx + o->rx_len, u, len);
	o->rx_len += len;
	o->rx_n++;
	return 0;
}

static const struct wn_llp_up ups = {
	.event = up_event,
	.ulpdu = up_ulpdu,
};

/* Sessions a listener takes after the first one (test_two_sessions). */
static struct owner *next_owner;

static int
incoming(void *arg, struct wn_llp *l)
{
	struct owner *o = arg;

	if (o->l != NULL && next_owner != NULL) {
		o = next_owner;
		next_owner = NULL;
	}
	assert_null(o->l);
	o->l = l;
	wn_llp_set_up(l, &ups, o);
	return 0;
}

/* ---------------------------------------------------------------- driving */

/* Each side's SCTP packets to its interface, usrsctp's timers and the deferred work. */
static void
pump(void)
{
	for (int round = 0; round < 64; round++) {
		unsigned int t = 0;

		for (int i = 0; i < 2; i++) {
			struct rte_mbuf *pkts[HX_BURST];
			uint16_t n;

			t += wn_llp_poll(proto[i], h.now);
			while ((n = wn_sctp_tx_bulk(proto[i], pkts, HX_BURST)) > 0) {
				t += n;
				wn_net_output_bulk(h.s[i].nif, pkts, n, h.now);
			}
		}
		hx_step(&h);
		wire_flush();
		if (t == 0)
			break;
	}
}

static void
run(uint64_t us, uint64_t step)
{
	uint64_t end = h.now + us;

	pump();
	while (h.now < end) {
		h.now += step;
		pump();
	}
}

static void
teardown_pair(void)
{
	for (int i = 0; i < 2; i++) {
		wn_sctp_free(proto[i]);
		proto[i] = NULL;
		free(own[i].rx);
		own[i].rx = NULL;
	}
	rte_pktmbuf_free(wire.held);
	wire.held = NULL;
	hx_fini(&h);
	assert_false(wire.bad);
}

static void
setup_pair(void)
{
	struct wn_sctp_conf c = {.pool = hx_pool, .enhanced = true, .p2p = true,
				 .rtr = WN_LLP_RTR_SEND | WN_LLP_RTR_WRITE | WN_LLP_RTR_READ,
				 .timeout_us = 2000000};

	if (proto[0] != NULL)
		teardown_pair(); /* what a failed test left */
	hx_init(&h);
	h.filter = sctp_filter;
	memset(&wire, 0, sizeof(wire));
	memset(own, 0, sizeof(own));
	for (int i = 0; i < 2; i++) {
		c.index = (uint16_t)i;
		proto[i] = wn_sctp_create(&c);
		assert_non_null(proto[i]);
		assert_int_equal(wn_net_if_proto_rx(h.s[i].nif, WN_SCTP_IPPROTO, wn_sctp_input,
						   proto[i]), 0);
	}
}

static struct wn_llp_ep
ep(int side, uint16_t port)
{
	struct wn_llp_ep e = {.addr = h.s[side].ip, .port = port};

	return e;
}

/* A connects to B's listener with Private Data "hi" and IRD/ORD @p ird/@p ord. */
static struct wn_llp_listener *
connect_pair(uint16_t ird, uint16_t ord)
{
	struct wn_llp_ep le = {.port = PORT};
	struct wn_llp_listener *ls = wn_llp_listen(proto[1], &le, incoming, &own[1]);
	struct wn_llp_connect cc = {
		.local = ep(0, 40000), .remote = ep(1, PORT), .caps = {ird, ord},
		.pd = (const uint8_t *)"hi", .pd_len = 2, .up = &ups, .up_arg = &own[0],
	};

	assert_non_null(ls);
	own[0].l = wn_llp_connect(proto[0], &cc);
	assert_non_null(own[0].l);
	assert_string_equal(wn_llp_kind(own[0].l), "sctp");
	run(50000, 1000);
	return ls;
}

static struct wn_llp_ulpdu
ulpdu_of(const uint8_t *hdr, uint16_t hlen, const uint8_t *payload, uint32_t plen)
{
	struct wn_llp_ulpdu u = {.hdr_len = hlen, .n_iov = plen ? 1 : 0};

	memcpy(u.hdr, hdr, hlen);
	u.iov[0].base = payload;
	u.iov[0].len = plen;
	u.len = hlen + plen;
	u.msg_len = plen;
	return u;
}

/* Send @p n ULPDUs of pattern from @p side, as many as SCTP takes each step. */
static void
send_many(int side, unsigned int n, const uint8_t *pat, uint32_t size)
{
	unsigned int sent = 0;

	for (int guard = 0; sent < n && guard < 100000; guard++) {
		while (sent < n && wn_llp_tx_ready(own[side].l)) {
			uint8_t hdr[4] = {(uint8_t)(sent >> 24), (uint8_t)(sent >> 16),
					  (uint8_t)(sent >> 8), (uint8_t)sent};
			struct wn_llp_ulpdu u = ulpdu_of(hdr, 4, pat + (sent % 64), size);
			int rc = wn_llp_send(own[side].l, &u);

			if (rc == -EAGAIN)
				break;
			assert_int_equal(rc, 0);
			sent++;
		}
		h.now += 100;
		pump();
	}
	assert_int_equal(sent, n);
}

/* ULPDU k (4-octet sequence then size octets of pattern) at @p off of what @p o got. */
static void
check_many(const struct owner *o, unsigned int n, const uint8_t *pat, uint32_t size)
{
	assert_int_equal(o->rx_n, n);
	assert_int_equal(o->rx_len, (size_t)n * (4 + size));
	for (unsigned int k = 0; k < n; k++) {
		const uint8_t *u = o->rx + (size_t)k * (4 + size);

		assert_int_equal((uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 |
				 (uint32_t)u[2] << 8 | u[3], k);
		assert_memory_equal(u + 4, pat + (k % 64), size);
	}
}

/* ---------------------------------------------------------------- tests */

static void
test_setup_data_close(void **state)
{
	struct wn_llp_listener *ls;
	struct wn_sctp_stats sx[2];
	struct wn_llp_info in;
	uint8_t *pat = hx_pattern(2048, 1);
	uint32_t mulpdu;
	(void)state;

	setup_pair();
	own[1].accept_in_request = true;
	own[0].close_on_eof = own[1].close_on_eof = true;
	ls = connect_pair(16, 4);
	/* the Initiate's Private Data and RFC 6581 data reached B; A got B's */
	assert_int_equal(count(&own[1], WN_LLP_EV_REQUEST), 1);
	assert_true(own[1].peer_enh);
	assert_int_equal(own[1].peer_ird, 16);
	assert_int_equal(own[1].peer_ord, 4);
	assert_int_equal(count(&own[0], WN_LLP_EV_ESTABLISHED), 1);
	assert_int_equal(count(&own[0], WN_LLP_EV_TX_READY), 1);
	assert_int_equal(count(&own[1], WN_LLP_EV_ESTABLISHED), 1);
	assert_int_equal(own[0].pd_len, 3);
	assert_memory_equal(own[0].pd, "yes", 3);
	/* RFC 6581 §9.1: A's ORD 4 <= B's IRD 8; A's IRD 16 >= B's ORD 8 */
	assert_int_equal(own[0].params.ord, 4);
	assert_int_equal(own[0].params.ird, 16);
	assert_int_equal(own[1].params.ird, 4);
	assert_int_equal(own[1].params.ord, 8);
	assert_true(own[0].params.p2p);
	mulpdu = own[0].params.mulpdu;
	assert_int_equal(mulpdu, wn_wire_sctp_mulpdu(1500, 20));
	assert_false(own[0].params.crc);
	assert_true(wn_llp_tx_ready(own[0].l) && wn_llp_tx_ready(own[1].l));
	/* both INIT and INIT-ACK carry the DDP indication (RFC 5043 §5.1) */
	assert_int_equal(wire.adapt_ind, 2);
	wn_llp_info(own[0].l, &in);
	assert_string_equal(in.state, "FULL");
	assert_string_equal(in.transport.state, "ESTABLISHED");
	assert_int_equal(in.remote.port, PORT);

	/* ULPDUs both ways, the largest included; nothing fragments */
	send_many(0, 300, pat, mulpdu - 4);
	send_many(1, 300, pat, 100);
	run(10000, 1000);
	check_many(&own[1], 300, pat, mulpdu - 4);
	check_many(&own[0], 300, pat, 100);
	assert_true(wire.max_len <= 1500);
	{
		struct wn_llp_ulpdu big = ulpdu_of(pat, 4, pat, mulpdu - 3);

		assert_int_equal(wn_llp_send(own[0].l, &big), -EAGAIN); /* above the MULPDU */
	}

	/* A closes: B sees EOF (and closes), both see CLOSED when the association is gone */
	assert_int_equal(wn_llp_close(own[0].l), 0);
	run(50000, 1000);
	assert_int_equal(count(&own[1], WN_LLP_EV_EOF), 1);
	assert_int_equal(count(&own[0], WN_LLP_EV_EOF), 1);
	assert_int_equal(count(&own[0], WN_LLP_EV_CLOSED), 1);
	assert_int_equal(count(&own[1], WN_LLP_EV_CLOSED), 1);
	assert_int_equal(own[0].why, WN_LLP_CLOSE_NORMAL);
	assert_int_equal(own[1].why, WN_LLP_CLOSE_NORMAL);
	assert_true(wire.shutdowns >= 1);
	assert_int_equal(wire.aborts, 0);
	wn_llp_info(own[0].l, &in);
	assert_true(in.transport.quiet);
	wn_sctp_stats_get(proto[0], &sx[0]);
	wn_sctp_stats_get(proto[1], &sx[1]);
	assert_int_equal(sx[0].sessions, 1);
	assert_int_equal(sx[1].sessions, 1);
	assert_int_equal(sx[0].terms_sent, 1);
	assert_int_equal(sx[1].terms_recv, 1);
	assert_int_equal(sx[0].rx_bad, 0);
	wn_llp_release(own[0].l);
	wn_llp_release(own[1].l);
	run(20000, 1000);
	for (int i = 0; i < 2; i++) {
		wn_sctp_stats_get(proto[i], &sx[i]);
		assert_int_equal(sx[i].streams_open, 0);
		assert_int_equal(sx[i].assocs_open, 0);
	}
	wn_llp_unlisten(proto[1], ls);
	free(pat);
	teardown_pair();
}

static void
test_reject_and_refused(void **state)
{
	struct wn_llp_listener *ls;
	struct wn_llp_connect cc = {.local = {.port = 40001}, .caps = {1, 1}, .up = &ups,
				    .up_arg = &own[0]};
	(void)state;

	setup_pair();
	/* B's ULP rejects with Private Data: A sees REJECTED with it */
	own[1].reject_in_request = true;
	ls = connect_pair(1, 1);
	assert_int_equal(count(&own[0], WN_LLP_EV_REJECTED), 1);
	assert_int_equal(count(&own[0], WN_LLP_EV_ESTABLISHED), 0);
	assert_int_equal(own[0].pd_len, 3);
	assert_memory_equal(own[0].pd, "no!", 3);
	(void)wn_llp_close(own[0].l);
	(void)wn_llp_close(own[1].l);
	run(50000, 1000);
	assert_int_equal(count(&own[0], WN_LLP_EV_CLOSED), 1);
	assert_int_equal(count(&own[1], WN_LLP_EV_CLOSED), 1);
	wn_llp_release(own[0].l);
	wn_llp_release(own[1].l);
	wn_llp_unlisten(proto[1], ls);
	/* nobody listens: the INIT is answered by an ABORT */
	memset(own, 0, sizeof(own));
	cc.local.addr = h.s[0].ip;
	cc.remote = ep(1, PORT + 1);
	own[0].l = wn_llp_connect(proto[0], &cc);
	assert_non_null(own[0].l);
	run(50000, 1000);
	assert_int_equal(count(&own[0], WN_LLP_EV_CLOSED), 1);
	assert_int_equal(own[0].why, WN_LLP_CLOSE_REFUSED);
	wn_llp_release(own[0].l);
	run(20000, 1000);
	teardown_pair();
}

/*
 * A sender whose lcore did not run for longer than the RTO (a shared core) finds its peer's
 * SACKs queued when it runs again, and reads them a burst per loop with its timers polled in
 * between, as lib/dp does: the timers wait for that input, so no T3-rtx expiry sends again
 * (and takes the congestion window down for) chunks that were acknowledged in time.
 */
static void
test_stall_sacks_first(void **state)
{
	struct wn_llp_listener *ls;
	struct wn_sctp_stack_stats k0, k1;
	uint8_t *pat = hx_pattern(2048, 11);
	(void)state;

	setup_pair();
	own[1].accept_in_request = true;
	ls = connect_pair(4, 4);
	assert_int_equal(count(&own[0], WN_LLP_EV_ESTABLISHED), 1);
	wn_sctp_stack_stats_get(&k0);
	wire.capture_from1 = true;
	send_many(0, 4, pat, 1000);
	run(2000, 1000);
	wire.capture_from1 = false;
	assert_true(wire.ncap >= 2); /* a SACK for every second packet */
	h.now += 300000; /* longer than the RTO (200 ms) without a poll */
	for (unsigned int i = 0; i < wire.ncap; i++) {
		hx_deliver(&h, 0, wire.cap[i]);
		(void)wn_llp_poll(proto[0], h.now);
	}
	wire.ncap = 0;
	run(50000, 1000);
	check_many(&own[1], 4, pat, 1000);
	wn_sctp_stack_stats_get(&k1);
	assert_int_equal(k1.t3_timeouts, k0.t3_timeouts);
	assert_int_equal(k1.tx_retrans, k0.tx_retrans);
	wn_llp_abort(own[0].l);
	run(50000, 1000);
	wn_llp_release(own[0].l);
	wn_llp_release(own[1].l);
	wn_llp_unlisten(proto[1], ls);
	free(pat);
	teardown_pair();
}

/* Loss and reordering of SCTP packets: every ULPDU arrives once, in DDP-SSN order. */
static void
test_loss_and_reorder(void **state)
{
	struct wn_llp_listener *ls;
	struct wn_sctp_stats sx;
	struct wn_sctp_stack_stats k0, k1;
	uint8_t *pat = hx_pattern(2048, 7);
	(void)state;

	setup_pair();
	own[1].accept_in_request = true;
	ls = connect_pair(4, 4);
	assert_int_equal(count(&own[0], WN_LLP_EV_ESTABLISHED), 1);
	wn_sctp_stack_stats_get(&k0);
	wire.drop_pm = 30;
	wire.reorder_pm = 30;
	send_many(0, 3000, pat, 1000);
	send_many(1, 1000, pat, 20);
	run(3000000, 5000);
	check_many(&own[1], 3000, pat, 1000);
	check_many(&own[0], 1000, pat, 20);
	wn_sctp_stats_get(proto[1], &sx);
	assert_true(sx.rx_early > 0); /* unordered chunks did overtake each other */
	/* usrsctp's own counters (both instances share its stack) saw the DATA and the losses */
	wn_sctp_stack_stats_get(&k1);
	assert_true(k1.tx_data - k0.tx_data >= 4000);
	assert_true(k1.rx_data - k0.rx_data >= 4000);
	assert_true(k1.tx_retrans > k0.tx_retrans);
	assert_true(k1.rx_sacks > k0.rx_sacks);
	wire.drop_pm = wire.reorder_pm = 0;
	wn_llp_abort(own[0].l);
	assert_int_equal(count(&own[0], WN_LLP_EV_CLOSED), 1); /* from inside */
	run(50000, 1000);
	assert_int_equal(count(&own[1], WN_LLP_EV_CLOSED), 1);
	assert_int_equal(own[1].why, WN_LLP_CLOSE_RESET);
	assert_true(wire.aborts >= 1);
	wn_llp_release(own[0].l);
	wn_llp_release(own[1].l);
	wn_llp_unlisten(proto[1], ls);
	free(pat);
	teardown_pair();
}

/* ---------------------------------------------------------------- a raw usrsctp peer */

struct raw_msg {
	uint16_t sid;
	uint32_t ppid;
	uint8_t data[64];
	uint32_t len;
};

static struct {
	struct socket *so;
	bool up, lost;
	struct raw_msg msg[64];
	unsigned int n;
} raw;

static void
raw_read(void)
{
	static uint8_t buf[65536];

	for (;;) {
		struct sctp_rcvinfo ri;
		socklen_t il = sizeof(ri);
		unsigned int it = 0;
		int flags = 0;
		ssize_t n = usrsctp_recvv(raw.so, buf, sizeof(buf), NULL, NULL, &ri, &il, &it,
					  &flags);

		if (n <= 0) {
			if (n == 0 || (errno != EWOULDBLOCK && errno != EAGAIN))
				raw.lost = true;
			return;
		}
		if (flags & MSG_NOTIFICATION) {
			const union sctp_notification *sn = (const void *)buf;

			if (sn->sn_header.sn_type == SCTP_ASSOC_CHANGE) {
				raw.up |= sn->sn_assoc_change.sac_state == SCTP_COMM_UP;
				raw.lost |= sn->sn_assoc_change.sac_state == SCTP_COMM_LOST;
			}
			continue;
		}
		if (raw.n < RTE_DIM(raw.msg)) {
			struct raw_msg *m = &raw.msg[raw.n++];

			m->sid = ri.rcv_sid;
			m->ppid = rte_be_to_cpu_32(ri.rcv_ppid);
			m->len = (uint32_t)RTE_MIN((size_t)n, sizeof(m->data));
			memcpy(m->data, buf, m->len);
		}
	}
}

static void
raw_run(uint64_t us)
{
	uint64_t end = h.now + us;

	while (h.now < end) {
		h.now += 1000;
		pump();
		raw_read();
	}
}

/* A usrsctp socket of the test's, through side 0's instance, to B's listener. */
static void
raw_open(bool ddp)
{
	struct sctp_initmsg im = {.sinit_num_ostreams = 16, .sinit_max_instreams = 16};
	struct sctp_setadaptation ad = {.ssb_adaptation_ind = WN_SCTP_ADAPTATION_DDP};
	struct sctp_event e = {.se_assoc_id = SCTP_FUTURE_ASSOC, .se_type = SCTP_ASSOC_CHANGE,
			       .se_on = 1};
	void *path = wn_sctp_path(proto[0], &h.s[0].ip, &h.s[1].ip);
	const int one = 1;
	struct sockaddr_conn sa = {.sconn_family = AF_CONN};

	memset(&raw, 0, sizeof(raw));
	wire.raw_side0 = true;
	raw.so = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
	assert_non_null(raw.so);
	if (ddp)
		assert_int_equal(usrsctp_setsockopt(raw.so, IPPROTO_SCTP, SCTP_ADAPTATION_LAYER,
						    &ad, sizeof(ad)), 0);
	assert_int_equal(usrsctp_setsockopt(raw.so, IPPROTO_SCTP, SCTP_INITMSG, &im,
					    sizeof(im)), 0);
	assert_int_equal(usrsctp_setsockopt(raw.so, IPPROTO_SCTP, SCTP_EVENT, &e, sizeof(e)), 0);
	assert_int_equal(usrsctp_setsockopt(raw.so, IPPROTO_SCTP, SCTP_RECVRCVINFO, &one,
					    sizeof(one)), 0);
	assert_int_equal(usrsctp_setsockopt(raw.so, IPPROTO_SCTP, SCTP_NODELAY, &one,
					    sizeof(one)), 0);
	usrsctp_set_non_blocking(raw.so, 1);
	sa.sconn_addr = path;
	static uint16_t raw_port = 41000;

	sa.sconn_port = rte_cpu_to_be_16(raw_port++);
	assert_int_equal(usrsctp_bind(raw.so, (struct sockaddr *)&sa, sizeof(sa)), 0);
	sa.sconn_port = rte_cpu_to_be_16(PORT);
	(void)usrsctp_connect(raw.so, (struct sockaddr *)&sa, sizeof(sa));
	raw_run(50000);
}

static void
raw_close(bool abort)
{
	if (abort) {
		struct linger lg = {.l_onoff = 1, .l_linger = 0};

		usrsctp_setsockopt(raw.so, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	usrsctp_close(raw.so);
	raw.so = NULL;
}

static void
raw_send(uint16_t sid, uint32_t ppid, const void *buf, size_t len)
{
	struct sctp_sndinfo si = {.snd_sid = sid, .snd_flags = SCTP_UNORDERED,
				  .snd_ppid = rte_cpu_to_be_32(ppid)};

	assert_true(usrsctp_sendv(raw.so, buf, len, NULL, 0, &si, sizeof(si),
				  SCTP_SENDV_SNDINFO, 0) >= 0);
}

/* Session control message @p func with DDP-SSN @p ssn (enhanced: IRD/ORD 4/4). */
static void
raw_ctl(uint16_t sid, uint16_t ssn, uint16_t func)
{
	struct wn_sctp_ctl c = {.ssn = ssn, .func = func, .ird = 4, .ord = 4};
	uint8_t b[WN_SCTP_CTL_MAX];
	int n = wn_wire_sctp_ctl_encode(&c, b, sizeof(b));

	assert_true(n > 0);
	raw_send(sid, WN_SCTP_PPID_CTL, b, (size_t)n);
}

static void
raw_ddp(uint16_t sid, uint16_t ssn, size_t len)
{
	uint8_t b[2048] = {0};

	wn_sctp_ssn_put(b, ssn);
	raw_send(sid, WN_SCTP_PPID_DDP, b, len);
}

/* The raw peer got session control @p func on stream @p sid. */
static bool
raw_got(uint16_t sid, uint16_t func)
{
	for (unsigned int i = 0; i < raw.n; i++) {
		struct wn_sctp_ctl c;

		if (raw.msg[i].sid == sid && raw.msg[i].ppid == WN_SCTP_PPID_CTL &&
		    wn_wire_sctp_ctl_decode(raw.msg[i].data, raw.msg[i].len, &c) ==
			    WN_SCTP_CTL_OK &&
		    c.func == func)
			return true;
	}
	return false;
}

/* B's owner plays lib/cm: an error in RDMA mode is reported (Terminate), then closed. */
static void
owner_close_on_error(void)
{
	if (own[1].l != NULL && count(&own[1], WN_LLP_EV_ERROR) > 0)
		(void)wn_llp_close(own[1].l);
}

/* The raw peer starts a session on stream @p sid and B accepts it. */
static void
raw_session(uint16_t sid)
{
	raw_ctl(sid, 0, WN_SCTP_ENH_INITIATE);
	raw_run(20000);
	assert_int_equal(count(&own[1], WN_LLP_EV_REQUEST), 1);
	assert_int_equal(count(&own[1], WN_LLP_EV_ESTABLISHED), 1);
	assert_true(raw_got(sid, WN_SCTP_ENH_ACCEPT));
}

enum bad_kind {
	BAD_NO_DDP,          /* no DDP Adaptation Layer Indication */
	BAD_PPID_FIRST,      /* an unknown PPID where the Initiate is due */
	BAD_DDP_FIRST,       /* a DDP segment before any Initiate */
	BAD_NO_SSN,          /* a DATA chunk too short for its DDP-SSN */
	BAD_INIT_TWICE,      /* the Initiate repeated (DDP-SSN 0 again) in RDMA mode */
	BAD_ACCEPT_FROM_INI, /* an Accept from the initiator in RDMA mode */
	BAD_PPID_FULL,       /* an unknown PPID in RDMA mode */
	BAD_TOO_BIG,         /* a DDP segment above the MULPDU */
	BAD_SSN_GAP,         /* an Initiate with DDP-SSN 1: 0 never comes */
	BAD_STREAM_RANGE,    /* a DATA chunk on a stream beyond those negotiated */
	BAD_DATA_LEN,        /* a DATA chunk whose length field is malformed */
	BAD_ABORT,           /* the peer aborts the association mid-transfer */
	BAD_TERM_IN_REQ,     /* Initiate then Terminate before the ULP decided */
};

/* Rewrites of the raw peer's packets on their way to B. */
static bool
rw_stream(uint8_t *sctp, uint32_t len)
{
	if (len >= 12 + 16 && sctp[12] == 0 && sctp[12 + 8] == 0 && sctp[12 + 9] == 0) {
		sctp[12 + 9] = 20; /* stream 20 of 16 */
		wire.rewrite = NULL;
		return true;
	}
	return false;
}

static bool
rw_len(uint8_t *sctp, uint32_t len)
{
	if (len >= 12 + 16 && sctp[12] == 0) {
		sctp[12 + 2] = 0;
		sctp[12 + 3] = 8; /* shorter than a DATA chunk header */
		wire.rewrite = NULL;
		return true;
	}
	return false;
}

static void
bad_case(enum bad_kind k)
{
	struct wn_llp_listener *ls;
	struct wn_llp_ep le = {.port = PORT};
	struct wn_sctp_stats sx;

	setup_pair();
	own[1].accept_in_request = k != BAD_TERM_IN_REQ;
	ls = wn_llp_listen(proto[1], &le, incoming, &own[1]);
	assert_non_null(ls);
	raw_open(k != BAD_NO_DDP);
	wn_sctp_stats_get(proto[1], &sx);
	switch (k) {
	case BAD_NO_DDP:
		/* RFC 5043 §11.1: no DDP on an association without the indication */
		assert_true(raw.lost);
		assert_int_equal(sx.assoc_refused, 1);
		assert_true(wire.aborts >= 1);
		assert_null(own[1].l);
		break;
	case BAD_PPID_FIRST:
	case BAD_DDP_FIRST:
	case BAD_NO_SSN:
	case BAD_SSN_GAP:
		assert_true(raw.up);
		if (k == BAD_PPID_FIRST)
			raw_send(0, 99, "\0\0xx", 4);
		else if (k == BAD_DDP_FIRST)
			raw_ddp(0, 0, 40);
		else if (k == BAD_NO_SSN)
			raw_send(0, WN_SCTP_PPID_CTL, "\0", 1);
		else
			raw_ctl(0, 1, WN_SCTP_ENH_INITIATE);
		raw_run(k == BAD_SSN_GAP ? 2500000 : 20000);
		/* RFC 5043 §6.1: the session is terminated; no listener heard of it */
		assert_true(raw_got(0, WN_SCTP_TERMINATE));
		assert_null(own[1].l);
		/* and the association, none of whose sessions lives, shuts down */
		break;
	case BAD_INIT_TWICE:
	case BAD_ACCEPT_FROM_INI:
	case BAD_PPID_FULL:
	case BAD_TOO_BIG:
	case BAD_STREAM_RANGE:
		raw_session(0);
		raw_ddp(0, 1, 40);
		raw_run(20000);
		assert_int_equal(own[1].rx_n, 1);
		if (k == BAD_INIT_TWICE)
			raw_ctl(0, 0, WN_SCTP_ENH_INITIATE);
		else if (k == BAD_ACCEPT_FROM_INI)
			raw_ctl(0, 2, WN_SCTP_ENH_ACCEPT);
		else if (k == BAD_PPID_FULL)
			raw_send(0, 99, "\0\2xx", 4);
		else if (k == BAD_TOO_BIG)
			raw_ddp(0, 2, 1700);
		else {
			wire.rewrite = rw_stream;
			raw_ddp(0, 2, 40);
			raw_ddp(0, 3, 40);
		}
		raw_run(k == BAD_STREAM_RANGE ? 2500000 : 20000);
		if (k == BAD_STREAM_RANGE)
			assert_true(wire.errors >= 1); /* RFC 4960 §6.5: Invalid Stream Identifier */
		/* in RDMA mode: ERROR for an RDMAP Terminate (RFC 5040 0x0/0x2/0x07), then the
		 * session's Terminate once the owner closes; nothing delivered was lost */
		assert_int_equal(count(&own[1], WN_LLP_EV_ERROR), 1);
		assert_true(own[1].last_err.send_terminate);
		assert_int_equal(own[1].last_err.term_layer, 0);
		assert_int_equal(own[1].last_err.term_etype, 2);
		assert_int_equal(own[1].last_err.err, 7);
		assert_int_equal(own[1].rx_n, 1);
		owner_close_on_error();
		raw_run(20000);
		assert_true(raw_got(0, WN_SCTP_TERMINATE));
		break;
	case BAD_DATA_LEN:
		raw_session(0);
		wire.rewrite = rw_len;
		raw_ddp(0, 1, 40);
		raw_run(50000);
		/* SCTP's own rule: a protocol violation aborts the association; clean end */
		assert_true(raw.lost);
		assert_int_equal(count(&own[1], WN_LLP_EV_CLOSED), 1);
		assert_int_equal(own[1].why, WN_LLP_CLOSE_RESET);
		break;
	case BAD_ABORT:
		raw_session(0);
		for (uint16_t i = 1; i <= 10; i++)
			raw_ddp(0, i, 100);
		raw_close(true);
		raw_run(20000);
		/* what arrived before the ABORT was delivered, then CLOSED (reset) */
		assert_int_equal(own[1].rx_n, 10);
		assert_int_equal(count(&own[1], WN_LLP_EV_CLOSED), 1);
		assert_int_equal(own[1].why, WN_LLP_CLOSE_RESET);
		break;
	case BAD_TERM_IN_REQ:
		raw_ctl(0, 0, WN_SCTP_INITIATE);
		raw_ctl(0, 1, WN_SCTP_TERMINATE);
		raw_run(20000);
		assert_int_equal(count(&own[1], WN_LLP_EV_REQUEST), 1);
		assert_int_equal(count(&own[1], WN_LLP_EV_EOF), 1);
		assert_false(own[1].peer_enh);
		break;
	}
	if (raw.so != NULL)
		raw_close(true);
	run(50000, 1000);
	if (own[1].l != NULL) {
		assert_int_equal(count(&own[1], WN_LLP_EV_CLOSED), 1);
		wn_llp_release(own[1].l);
	}
	run(20000, 1000);
	wn_sctp_stats_get(proto[1], &sx);
	assert_int_equal(sx.streams_open, 0);
	assert_int_equal(sx.assocs_open, 0);
	wn_llp_unlisten(proto[1], ls);
	teardown_pair();
}

#define BAD_TEST(name, kind)                                                                      \
	static void name(void **state)                                                             \
	{                                                                                          \
		(void)state;                                                                       \
		bad_case(kind);                                                                    \
	}
BAD_TEST(test_bad_no_ddp, BAD_NO_DDP)
BAD_TEST(test_bad_ppid_first, BAD_PPID_FIRST)
BAD_TEST(test_bad_ddp_first, BAD_DDP_FIRST)
BAD_TEST(test_bad_no_ssn, BAD_NO_SSN)
BAD_TEST(test_bad_init_twice, BAD_INIT_TWICE)
BAD_TEST(test_bad_accept_from_initiator, BAD_ACCEPT_FROM_INI)
BAD_TEST(test_bad_ppid_full, BAD_PPID_FULL)
BAD_TEST(test_bad_too_big, BAD_TOO_BIG)
BAD_TEST(test_bad_ssn_gap, BAD_SSN_GAP)
BAD_TEST(test_bad_stream_range, BAD_STREAM_RANGE)
BAD_TEST(test_bad_data_len, BAD_DATA_LEN)
BAD_TEST(test_bad_abort, BAD_ABORT)
BAD_TEST(test_bad_term_in_request, BAD_TERM_IN_REQ)

/* Two sessions on one association (RFC 5043 §8: like-numbered stream pairs). */
static void
test_two_sessions(void **state)
{
	struct wn_llp_listener *ls;
	struct wn_llp_ep le = {.port = PORT};
	struct owner o3 = {0};
	(void)state;

	setup_pair();
	own[1].accept_in_request = true;
	o3.accept_in_request = true;
	ls = wn_llp_listen(proto[1], &le, incoming, &own[1]);
	raw_open(true);
	raw_session(0);
	/* the second session goes to the listener again, as a stream of its own */
	next_owner = &o3;
	raw_ctl(3, 0, WN_SCTP_INITIATE);
	raw_run(20000);
	assert_non_null(o3.l);
	assert_ptr_not_equal(o3.l, own[1].l);
	assert_true(raw_got(3, WN_SCTP_ACCEPT));
	raw_ddp(3, 1, 33);
	raw_ddp(0, 1, 44);
	raw_run(20000);
	assert_int_equal(own[1].rx_n, 1);
	assert_int_equal(own[1].rx_len, 42);
	assert_int_equal(o3.rx_n, 1);
	assert_int_equal(o3.rx_len, 31);
	/* one ends: the other stays */
	raw_ctl(3, 2, WN_SCTP_TERMINATE);
	raw_run(20000);
	assert_int_equal(count(&o3, WN_LLP_EV_EOF), 1);
	(void)wn_llp_close(o3.l);
	raw_run(20000);
	assert_int_equal(count(&o3, WN_LLP_EV_CLOSED), 1);
	assert_int_equal(count(&own[1], WN_LLP_EV_CLOSED), 0);
	raw_ddp(0, 2, 44);
	raw_run(20000);
	assert_int_equal(own[1].rx_n, 2);
	wn_llp_release(o3.l);
	(void)wn_llp_close(own[1].l);
	raw_run(400000); /* the peer's delayed SACK (200 ms) first: then SHUTDOWN */
	assert_int_equal(count(&own[1], WN_LLP_EV_CLOSED), 1);
	wn_llp_release(own[1].l);
	raw_close(false);
	run(50000, 1000);
	free(o3.rx);
	wn_llp_unlisten(proto[1], ls);
	teardown_pair();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_setup_data_close),
		cmocka_unit_test(test_reject_and_refused),
		cmocka_unit_test(test_loss_and_reorder),
		cmocka_unit_test(test_stall_sacks_first),
		cmocka_unit_test(test_two_sessions),
		cmocka_unit_test(test_bad_no_ddp),
		cmocka_unit_test(test_bad_ppid_first),
		cmocka_unit_test(test_bad_ddp_first),
		cmocka_unit_test(test_bad_no_ssn),
		cmocka_unit_test(test_bad_init_twice),
		cmocka_unit_test(test_bad_accept_from_initiator),
		cmocka_unit_test(test_bad_ppid_full),
		cmocka_unit_test(test_bad_too_big),
		cmocka_unit_test(test_bad_ssn_gap),
		cmocka_unit_test(test_bad_stream_range),
		cmocka_unit_test(test_bad_data_len),
		cmocka_unit_test(test_bad_abort),
		cmocka_unit_test(test_bad_term_in_request),
	};

	hx_eal_init("test_sctp");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
