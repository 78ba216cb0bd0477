/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connection lifecycle: handshake variants, every state transition, simultaneous open and
 * close, TIME_WAIT, RST rules and RFC 5961 challenge ACKs, option negotiation, malformed
 * headers/options, limits. What breaks if this fails: connection setup or teardown.
 */
#include "app.h"

#define RAW_PORT 40000
#define SRV_PORT 5000

static void
test_handshake_and_echo(void **state)
{
	struct hx h;
	struct tapp cli, srv;
	struct wn_tcp_info ci, si;
	(void)state;

	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	wn_tcp_conn_info(cli.conn, &ci);
	wn_tcp_conn_info(srv.conn, &si);
	assert_int_equal(ci.state, WN_TCP_ESTABLISHED);
	assert_int_equal(si.state, WN_TCP_ESTABLISHED);
	assert_true(ci.ts_ok && ci.sack_ok && si.ts_ok && si.sack_ok);
	assert_int_equal(ci.mss, 1460);
	assert_int_equal(ci.emss, 1448); /* 1460 - 12 octets of timestamps */
	assert_int_equal(cli.emss, 1448);
	assert_int_equal(ci.snd_nxt, ci.iss + 1);
	assert_int_equal(ci.rcv_nxt, si.iss + 1);
	assert_int_equal(si.rcv_nxt, ci.iss + 1);
	assert_int_not_equal(ci.rcv_wscale, 0); /* 256 KiB buffer needs scaling */
	assert_int_equal(ci.snd_wscale, si.rcv_wscale);
	assert_int_equal(wn_tcp_conn_count(h.s[0].tcp), 1);

	assert_int_equal(wn_tcp_send(cli.conn, "hello", 5), 5);
	hx_run(&h, 100000, 1000);
	assert_int_equal(srv.rx_len, 5);
	assert_memory_equal(srv.rx, "hello", 5);
	assert_int_equal(cli.sent_acked, 5);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_handshake_no_options(void **state)
{
	struct wn_tcp_ctx_conf tc = { .flags = WN_TCP_F_NODELAY };
	struct hx h;
	struct tapp cli, srv;
	struct wn_tcp_info ci;
	(void)state;

	hx_init_conf(&h, &tc, false, false);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	wn_tcp_conn_info(cli.conn, &ci);
	assert_false(ci.ts_ok);
	assert_false(ci.sack_ok);
	assert_int_equal(ci.snd_wscale, 0);
	assert_int_equal(ci.rcv_wscale, 0);
	assert_int_equal(ci.emss, 1460);
	assert_true(ci.rcv_wnd <= 65535);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

/* Raw side 0 opens a connection to the listener on side 1; returns the server's ISS. */
static uint32_t
raw_open(struct hx *h, struct tapp *srv, uint32_t iss, const uint8_t *opts, uint8_t optlen,
	 struct hx_parsed *synack)
{
	struct wn_tcp_endpoint l = hx_ep(h, 1, SRV_PORT);
	struct hx_seg sg = { .seq = iss, .flags = RTE_TCP_SYN_FLAG, .win = 65535,
			     .sport = RAW_PORT, .dport = SRV_PORT, .opts = opts, .optlen = optlen };
	struct hx_parsed p;

	assert_non_null(wn_tcp_listen(h->s[1].tcp, &l, &tapp_cb, srv));
	hx_inject(h, 1, &sg);
	assert_true(hx_cap_tcp(h, &p));
	assert_int_equal(p.flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
	assert_int_equal(p.ack, iss + 1);
	if (synack != NULL)
		*synack = p;
	sg.flags = RTE_TCP_ACK_FLAG;
	sg.seq = iss + 1;
	sg.ack = p.seq + 1;
	sg.opts = NULL;
	sg.optlen = 0;
	hx_inject(h, 1, &sg);
	assert_int_equal(srv->established, 1);
	return p.seq;
}

static void
test_mss_negotiation_and_default(void **state)
{
	static const uint8_t mss536[] = { 2, 4, 0x02, 0x18 };
	struct hx h;
	struct tapp srv;
	struct hx_parsed syn;
	(void)state;

	hx_init_conf(&h, NULL, true, false);
	tapp_init(&srv);
	raw_open(&h, &srv, 1000, mss536, sizeof(mss536), &syn);
	/* the peer offered no TS/SACK/WS: the SYN-ACK must not carry them (RFC 7323 §2.2) */
	assert_true(syn.has_mss);
	assert_int_equal(syn.mss, 1460);
	assert_false(syn.has_ts);
	assert_false(syn.has_sackp);
	assert_false(syn.has_ws);
	assert_int_equal(wn_tcp_emss(srv.conn), 536);
	tapp_fini(&srv);
	hx_fini(&h);

	/* no MSS option at all: RFC 9293 §3.7.1 default 536 */
	hx_init_conf(&h, NULL, true, false);
	tapp_init(&srv);
	raw_open(&h, &srv, 1000, NULL, 0, NULL);
	assert_int_equal(wn_tcp_emss(srv.conn), 536);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_active_and_passive_close(void **state)
{
	struct wn_tcp_ctx_conf tc = { .msl_us = 1000000 };
	struct hx h;
	struct tapp cli, srv;
	struct wn_tcp_conn *cc, *sc;
	(void)state;

	hx_init_conf(&h, &tc, false, false);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	cc = cli.conn;
	sc = srv.conn;
	assert_int_equal(wn_tcp_close(cc), 0);
	assert_int_equal(wn_tcp_conn_state(cc), WN_TCP_FIN_WAIT_1);
	assert_int_equal(wn_tcp_close(cc), -ENOTCONN);
	assert_int_equal(wn_tcp_send(cc, "x", 1), -ENOTCONN);
	hx_run(&h, 1000, 1000);
	assert_int_equal(wn_tcp_conn_state(cc), WN_TCP_FIN_WAIT_2);
	assert_int_equal(wn_tcp_conn_state(sc), WN_TCP_CLOSE_WAIT);
	assert_int_equal(srv.eofs, 1);
	/* half-close: the passive side may still send */
	assert_int_equal(wn_tcp_send(sc, "bye", 3), 3);
	hx_run(&h, 100000, 1000);
	assert_int_equal(cli.rx_len, 3);
	assert_int_equal(wn_tcp_close(sc), 0);
	assert_int_equal(wn_tcp_conn_state(sc), WN_TCP_LAST_ACK);
	hx_run(&h, 1000, 1000);
	assert_int_equal(srv.closed, 1);
	assert_int_equal(srv.why, WN_TCP_CLOSE_NORMAL);
	assert_int_equal(wn_tcp_conn_state(cc), WN_TCP_TIME_WAIT);
	assert_int_equal(cli.closed, 0);
	/* TIME-WAIT lasts 2 MSL */
	hx_run(&h, 1900000, 10000);
	assert_int_equal(cli.closed, 0);
	hx_run(&h, 200000, 10000);
	assert_int_equal(cli.closed, 1);
	assert_int_equal(cli.why, WN_TCP_CLOSE_NORMAL);
	assert_int_equal(wn_tcp_conn_count(h.s[0].tcp), 0);
	assert_int_equal(wn_tcp_conn_count(h.s[1].tcp), 0);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

/*
 * WN_TCP_F_TW_DETACH: TIME-WAIT reported closed after the EOF, the entry keeps its 4-tuple
 * (counted as a connection, a repeated FIN still ACKed) without its user; a connect on that
 * 4-tuple, and one that needs its slot, end it early (tw_recycled); the rest end at 2 MSL.
 */
static void
test_time_wait_detached(void **state)
{
	struct wn_tcp_ctx_conf tc = { .msl_us = 1000000, .max_conns = 1,
				      .flags = WN_TCP_F_DEFAULTS | WN_TCP_F_TW_DETACH };
	struct wn_tcp_endpoint lc, r;
	struct wn_tcp_stats st;
	struct wn_tcp_info ti;
	struct hx h;
	struct tapp cli, srv, cli2;
	(void)state;

	hx_init_conf(&h, &tc, false, false);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	wn_tcp_conn_info(cli.conn, &ti);
	lc = ti.local;
	r = ti.remote;
	assert_int_equal(wn_tcp_close(cli.conn), 0);
	hx_run(&h, 1000, 1000);
	assert_int_equal(srv.eofs, 1);
	assert_int_equal(wn_tcp_close(srv.conn), 0);
	hx_run(&h, 1000, 1000);
	/* the active closer is in TIME-WAIT: its user has the EOF, then closed */
	assert_int_equal(srv.closed, 1);
	assert_int_equal(cli.eofs, 1);
	assert_int_equal(cli.closed, 1);
	assert_int_equal(cli.why, WN_TCP_CLOSE_NORMAL);
	assert_int_equal(wn_tcp_conn_count(h.s[0].tcp), 1);
	/* the same 4-tuple again: the TIME-WAIT entry gives it up */
	tapp_init(&cli2);
	cli2.conn = wn_tcp_connect(h.s[0].tcp, &lc, &r, &tapp_cb, &cli2);
	assert_non_null(cli2.conn);
	wn_tcp_stats_get(h.s[0].tcp, &st);
	assert_int_equal(st.tw_recycled, 1);
	hx_run(&h, 10000, 1000);
	assert_int_equal(cli2.established, 1);
	assert_int_equal(srv.established, 2);
	/* close again; a new connect needs the only slot: the oldest TIME-WAIT entry goes */
	assert_int_equal(wn_tcp_close(cli2.conn), 0);
	hx_run(&h, 1000, 1000);
	assert_int_equal(wn_tcp_close(srv.conn), 0);
	hx_run(&h, 1000, 1000);
	assert_int_equal(cli2.closed, 1);
	assert_int_equal(wn_tcp_conn_count(h.s[0].tcp), 1);
	lc.port = 0;
	tapp_init(&cli);
	cli.conn = wn_tcp_connect(h.s[0].tcp, &lc, &r, &tapp_cb, &cli);
	assert_non_null(cli.conn);
	wn_tcp_stats_get(h.s[0].tcp, &st);
	assert_int_equal(st.tw_recycled, 2);
	/* and that one, closed, ends at 2 MSL on its own */
	hx_run(&h, 10000, 1000);
	assert_int_equal(cli.established, 1);
	assert_int_equal(wn_tcp_close(cli.conn), 0);
	hx_run(&h, 1000, 1000);
	assert_int_equal(wn_tcp_close(srv.conn), 0);
	hx_run(&h, 1000, 1000);
	assert_int_equal(wn_tcp_conn_count(h.s[0].tcp), 1);
	hx_run(&h, 2100000, 10000);
	assert_int_equal(wn_tcp_conn_count(h.s[0].tcp), 0);
	wn_tcp_stats_get(h.s[0].tcp, &st);
	assert_int_equal(st.tw_recycled, 2);
	tapp_fini(&cli);
	tapp_fini(&srv);
	tapp_fini(&cli2);
	hx_fini(&h);
}

/* A peer that never closes its half: FIN-WAIT-2 ends after fin_wait2_us. */
static void
test_fin_wait2_timeout(void **state)
{
	struct wn_tcp_ctx_conf tc = { .fin_wait2_us = 2000000 };
	struct hx h;
	struct tapp cli, srv;
	(void)state;

	hx_init_conf(&h, &tc, false, false);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	assert_int_equal(wn_tcp_close(cli.conn), 0);
	hx_run(&h, 10000, 1000);
	assert_int_equal(wn_tcp_conn_state(cli.conn), WN_TCP_FIN_WAIT_2);
	hx_run(&h, 1800000, 10000);
	assert_int_equal(cli.closed, 0);
	hx_run(&h, 300000, 10000);
	assert_int_equal(cli.closed, 1);
	assert_int_equal(cli.why, WN_TCP_CLOSE_TIMEOUT);
	assert_int_equal(srv.closed, 0); /* CLOSE-WAIT: its ULP still holds it */
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_simultaneous_close(void **state)
{
	struct wn_tcp_ctx_conf tc = { .msl_us = 1000000 };
	struct hx h;
	struct tapp cli, srv;
	struct wn_tcp_conn *cc, *sc;
	(void)state;

	hx_init_conf(&h, &tc, false, false);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	cc = cli.conn;
	sc = srv.conn;
	/* both FINs are emitted before either side sees the other's */
	wn_tcp_close(cc);
	wn_tcp_close(sc);
	{
		struct rte_mbuf *p0[4], *p1[4];
		uint16_t n0, n1;

		n0 = wn_tcp_tx_bulk(h.s[0].tcp, p0, 4);
		n1 = wn_tcp_tx_bulk(h.s[1].tcp, p1, 4);
		assert_int_equal(n0, 1);
		assert_int_equal(n1, 1);
		wn_net_output_bulk(h.s[0].nif, p0, n0, h.now);
		wn_net_output_bulk(h.s[1].nif, p1, n1, h.now);
		n0 = wn_net_tx_bulk(h.s[0].nif, p0, 4);
		n1 = wn_net_tx_bulk(h.s[1].nif, p1, 4);
		hx_deliver(&h, 1, p0[0]);
		hx_deliver(&h, 0, p1[0]);
	}
	assert_int_equal(wn_tcp_conn_state(cc), WN_TCP_CLOSING);
	assert_int_equal(wn_tcp_conn_state(sc), WN_TCP_CLOSING);
	hx_run(&h, 1000, 1000);
	assert_int_equal(wn_tcp_conn_state(cc), WN_TCP_TIME_WAIT);
	assert_int_equal(wn_tcp_conn_state(sc), WN_TCP_TIME_WAIT);
	hx_run(&h, 2100000, 10000);
	assert_int_equal(cli.closed, 1);
	assert_int_equal(srv.closed, 1);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_simultaneous_open(void **state)
{
	struct hx h;
	struct tapp a, b;
	struct wn_tcp_endpoint ea, eb;
	(void)state;

	hx_init(&h);
	ea = hx_ep(&h, 0, 7000);
	eb = hx_ep(&h, 1, 7001);
	tapp_init(&a);
	tapp_init(&b);
	/* ARP first, so that both SYNs really cross */
	wn_net_neigh_add(h.s[0].nif, &h.s[1].ip, &h.s[1].mac, true, h.now);
	wn_net_neigh_add(h.s[1].nif, &h.s[0].ip, &h.s[0].mac, true, h.now);
	a.conn = wn_tcp_connect(h.s[0].tcp, &ea, &eb, &tapp_cb, &a);
	b.conn = wn_tcp_connect(h.s[1].tcp, &eb, &ea, &tapp_cb, &b);
	assert_non_null(a.conn);
	assert_non_null(b.conn);
	{
		struct rte_mbuf *p0[4], *p1[4];
		uint16_t n0 = wn_tcp_tx_bulk(h.s[0].tcp, p0, 4);
		uint16_t n1 = wn_tcp_tx_bulk(h.s[1].tcp, p1, 4);

		assert_int_equal(n0, 1);
		assert_int_equal(n1, 1);
		wn_net_output_bulk(h.s[0].nif, p0, n0, h.now);
		wn_net_output_bulk(h.s[1].nif, p1, n1, h.now);
		wn_net_tx_bulk(h.s[0].nif, p0, 4);
		wn_net_tx_bulk(h.s[1].nif, p1, 4);
		hx_deliver(&h, 1, p0[0]);
		hx_deliver(&h, 0, p1[0]);
	}
	assert_int_equal(wn_tcp_conn_state(a.conn), WN_TCP_SYN_RCVD);
	assert_int_equal(wn_tcp_conn_state(b.conn), WN_TCP_SYN_RCVD);
	hx_run(&h, 10000, 1000);
	assert_int_equal(a.established, 1);
	assert_int_equal(b.established, 1);
	assert_int_equal(wn_tcp_send(a.conn, "ping", 4), 4);
	hx_run(&h, 100000, 1000);
	assert_int_equal(b.rx_len, 4);
	tapp_fini(&a);
	tapp_fini(&b);
	hx_fini(&h);
}

static void
test_rst_rules_rfc5961(void **state)
{
	struct hx h;
	struct tapp srv;
	struct hx_parsed p;
	uint32_t siss;
	struct wn_tcp_stats st;
	struct hx_seg sg = { .win = 65535, .sport = RAW_PORT, .dport = SRV_PORT };
	(void)state;

	hx_init_conf(&h, NULL, true, false);
	tapp_init(&srv);
	siss = raw_open(&h, &srv, 5000, NULL, 0, NULL);
	hx_cap_clear(&h);

	/* in-window but not exact: challenge ACK, connection survives (RFC 5961 §3.2) */
	sg.seq = 5001 + 100;
	sg.flags = RTE_TCP_RST_FLAG;
	hx_inject(&h, 1, &sg);
	st = hx_stats(&h, 1);
	assert_int_equal(st.challenge_acks, 1);
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.flags, RTE_TCP_ACK_FLAG);
	assert_int_equal(p.seq, siss + 1);
	assert_int_equal(p.ack, 5001);
	assert_int_equal(wn_tcp_conn_state(srv.conn), WN_TCP_ESTABLISHED);

	/* out of window: silently dropped */
	sg.seq = 5001 + 10000000;
	hx_inject(&h, 1, &sg);
	assert_false(hx_cap_tcp(&h, &p));
	assert_int_equal(wn_tcp_conn_state(srv.conn), WN_TCP_ESTABLISHED);

	/* SYN on an established connection: challenge ACK (RFC 5961 §4.2) */
	sg.seq = 5001;
	sg.flags = RTE_TCP_SYN_FLAG;
	hx_inject(&h, 1, &sg);
	assert_int_equal(hx_stats(&h, 1).challenge_acks, 2);
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.flags, RTE_TCP_ACK_FLAG);
	assert_int_equal(wn_tcp_conn_state(srv.conn), WN_TCP_ESTABLISHED);

	/* ACK of data never sent: dropped, challenge ACK (RFC 5961 §5.2) */
	sg.flags = RTE_TCP_ACK_FLAG;
	sg.ack = siss + 1 + 5000;
	hx_inject(&h, 1, &sg);
	st = hx_stats(&h, 1);
	assert_int_equal(st.rx_drop_ack, 1);
	assert_int_equal(st.challenge_acks, 3);
	hx_cap_clear(&h);

	/* exact RST: reset */
	sg.seq = 5001;
	sg.flags = RTE_TCP_RST_FLAG;
	hx_inject(&h, 1, &sg);
	assert_int_equal(srv.closed, 1);
	assert_int_equal(srv.why, WN_TCP_CLOSE_RESET);
	assert_int_equal(hx_stats(&h, 1).rx_rst, 1);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_challenge_ack_rate_limit(void **state)
{
	struct wn_tcp_ctx_conf tc = { .challenge_ack_limit = 2 };
	struct hx h;
	struct tapp srv;
	struct wn_tcp_stats st;
	struct hx_seg sg = { .seq = 5001 + 10, .flags = RTE_TCP_RST_FLAG, .win = 65535,
			     .sport = RAW_PORT, .dport = SRV_PORT };
	(void)state;

	hx_init_conf(&h, &tc, true, false);
	tapp_init(&srv);
	raw_open(&h, &srv, 5000, NULL, 0, NULL);
	for (int i = 0; i < 3; i++)
		hx_inject(&h, 1, &sg);
	st = hx_stats(&h, 1);
	assert_int_equal(st.challenge_acks, 2);
	assert_int_equal(st.challenge_acks_limited, 1);
	hx_run(&h, 1000000, 100000); /* a new second: allowed again */
	hx_inject(&h, 1, &sg);
	assert_int_equal(hx_stats(&h, 1).challenge_acks, 3);
	assert_int_equal(wn_tcp_conn_state(srv.conn), WN_TCP_ESTABLISHED);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_burst_with_reset_then_data(void **state)
{
	struct hx h;
	struct tapp srv;
	struct hx_parsed p;
	struct rte_mbuf *pkts[2];
	uint16_t n;
	uint32_t siss;
	struct hx_seg rst = { .seq = 5001, .flags = RTE_TCP_RST_FLAG, .win = 65535,
			      .sport = RAW_PORT, .dport = SRV_PORT };
	struct hx_seg dat = { .seq = 5001, .flags = RTE_TCP_ACK_FLAG, .win = 65535,
			      .sport = RAW_PORT, .dport = SRV_PORT, .data = "late", .len = 4 };
	(void)state;

	hx_init_conf(&h, NULL, true, false);
	tapp_init(&srv);
	siss = raw_open(&h, &srv, 5000, NULL, 0, NULL);
	hx_cap_clear(&h);
	dat.ack = siss + 1;
	/* one receive burst: the RST closes the connection the second segment was looked
	 * up for in bulk; that segment must meet a closed port, not a freed connection */
	pkts[0] = hx_craft(&h, 0, 1, &rst);
	pkts[1] = hx_craft(&h, 0, 1, &dat);
	n = wn_net_rx_bulk(h.s[1].nif, pkts, 2, h.now);
	assert_int_equal(n, 2);
	assert_int_equal(wn_tcp_rx_bulk(h.s[1].tcp, pkts, n, h.now), 1);
	assert_int_equal(srv.closed, 1);
	assert_int_equal(srv.rx_len, 0);
	assert_int_equal(hx_stats(&h, 1).rx_drop_noconn, 1);
	hx_step(&h);
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.flags, RTE_TCP_RST_FLAG);
	assert_int_equal(p.seq, siss + 1);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_closed_port_gets_rst(void **state)
{
	struct hx h;
	struct hx_parsed p;
	struct hx_seg sg = { .seq = 777, .flags = RTE_TCP_SYN_FLAG, .win = 1000,
			     .sport = RAW_PORT, .dport = 9 };
	(void)state;

	hx_init_conf(&h, NULL, true, false);
	hx_inject(&h, 1, &sg);
	/* RFC 9293 §3.10.7.1: <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK> */
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.flags, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG);
	assert_int_equal(p.seq, 0);
	assert_int_equal(p.ack, 778);
	/* with ACK: <SEQ=SEG.ACK><CTL=RST> */
	sg.flags = RTE_TCP_ACK_FLAG;
	sg.ack = 4242;
	hx_inject(&h, 1, &sg);
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.flags, RTE_TCP_RST_FLAG);
	assert_int_equal(p.seq, 4242);
	/* RST to a closed port: never answered */
	sg.flags = RTE_TCP_RST_FLAG;
	hx_inject(&h, 1, &sg);
	assert_false(hx_cap_tcp(&h, &p));
	assert_int_equal(hx_stats(&h, 1).rx_drop_noconn, 3);
	hx_fini(&h);
}

static void
test_connect_refused(void **state)
{
	struct hx h;
	struct tapp cli;
	struct wn_tcp_endpoint lc, r;
	(void)state;

	hx_init(&h);
	tapp_init(&cli);
	lc = hx_ep(&h, 0, 0);
	r = hx_ep(&h, 1, 9999);
	assert_non_null(wn_tcp_connect(h.s[0].tcp, &lc, &r, &tapp_cb, &cli));
	hx_run(&h, 10000, 1000);
	assert_int_equal(cli.closed, 1);
	assert_int_equal(cli.why, WN_TCP_CLOSE_REFUSED);
	assert_int_equal(cli.established, 0);
	tapp_fini(&cli);
	hx_fini(&h);
}

static void
test_syn_retries_backoff_timeout(void **state)
{
	struct wn_tcp_ctx_conf tc = { .syn_retries = 3, .rto_init_us = 1000000 };
	struct hx h;
	struct tapp cli;
	struct wn_tcp_endpoint lc, r;
	uint64_t times[8];
	unsigned int n = 0;
	struct hx_parsed p;
	(void)state;

	hx_init_conf(&h, &tc, false, true);
	tapp_init(&cli);
	lc = hx_ep(&h, 0, 0);
	r = hx_ep(&h, 1, 80);
	assert_non_null(wn_tcp_connect(h.s[0].tcp, &lc, &r, &tapp_cb, &cli));
	for (int i = 0; i < 20000 && cli.closed == 0; i++) {
		hx_run(&h, 1000, 1000);
		while (hx_cap_tcp(&h, &p)) {
			assert_int_equal(p.flags, RTE_TCP_SYN_FLAG);
			if (n < 8)
				times[n++] = h.now;
		}
	}
	assert_int_equal(cli.closed, 1);
	assert_int_equal(cli.why, WN_TCP_CLOSE_TIMEOUT);
	assert_int_equal(n, 4); /* SYN + 3 retries */
	/* RFC 6298 §5.5: the interval doubles each time: 1 s, 2 s, 4 s */
	assert_in_range(times[1] - times[0], 990000, 1010000);
	assert_in_range(times[2] - times[1], 1990000, 2010000);
	assert_in_range(times[3] - times[2], 3990000, 4010000);
	tapp_fini(&cli);
	hx_fini(&h);
}

static void
test_malformed_segments_counted(void **state)
{
	struct hx h;
	struct tapp srv;
	struct wn_tcp_stats st;
	struct rte_mbuf *m;
	static const uint8_t bad_len[] = { 2, 40, 1, 1 };    /* MSS length overruns */
	static const uint8_t zero_len[] = { 8, 0, 0, 0 };    /* length 0 option */
	static const uint8_t bad_sack[] = { 5, 7, 0, 0, 0, 0, 0, 1 };
	struct hx_seg sg = { .seq = 1, .flags = RTE_TCP_SYN_FLAG, .win = 100,
			     .sport = RAW_PORT, .dport = SRV_PORT };
	struct wn_tcp_endpoint l;
	(void)state;

	hx_init_conf(&h, NULL, true, false);
	tapp_init(&srv);
	l = hx_ep(&h, 1, SRV_PORT);
	assert_non_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
	sg.opts = bad_len;
	sg.optlen = sizeof(bad_len);
	hx_inject(&h, 1, &sg);
	sg.opts = zero_len;
	sg.optlen = sizeof(zero_len);
	hx_inject(&h, 1, &sg);
	sg.opts = bad_sack;
	sg.optlen = sizeof(bad_sack);
	hx_inject(&h, 1, &sg);
	st = hx_stats(&h, 1);
	assert_int_equal(st.rx_drop_opts, 3);
	assert_int_equal(wn_tcp_conn_count(h.s[1].tcp), 0);

	/* bad checksum */
	sg.opts = NULL;
	sg.optlen = 0;
	m = hx_craft(&h, 0, 1, &sg);
	*rte_pktmbuf_mtod_offset(m, uint8_t *, 14 + 20 + 4) ^= 0x5a;
	hx_deliver(&h, 1, m);
	assert_int_equal(hx_stats(&h, 1).rx_drop_cksum, 1);

	/* data offset below 5 words */
	m = hx_craft(&h, 0, 1, &sg);
	{
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);

		th->data_off = 3 << 4;
		th->cksum = 0;
		th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	}
	hx_deliver(&h, 1, m);
	/* data offset beyond the segment */
	m = hx_craft(&h, 0, 1, &sg);
	{
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);
		struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);

		th->data_off = 15 << 4;
		th->cksum = 0;
		th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	}
	hx_deliver(&h, 1, m);
	st = hx_stats(&h, 1);
	assert_int_equal(st.rx_drop_short, 2);
	assert_int_equal(wn_tcp_conn_count(h.s[1].tcp), 0);
	/* SYN+FIN to a listener is not an open */
	sg.flags = RTE_TCP_SYN_FLAG | RTE_TCP_FIN_FLAG;
	hx_inject(&h, 1, &sg);
	assert_int_equal(hx_stats(&h, 1).rx_drop_badflags, 1);
	assert_int_equal(wn_tcp_conn_count(h.s[1].tcp), 0);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_syn_backlog_and_conn_limit(void **state)
{
	struct wn_tcp_ctx_conf tc = { .max_conns = 3, .syn_backlog = 2 };
	struct hx h;
	struct tapp srv;
	struct wn_tcp_endpoint l;
	struct hx_seg sg = { .seq = 1, .flags = RTE_TCP_SYN_FLAG, .win = 100, .dport = SRV_PORT };
	struct wn_tcp_endpoint lc, r;
	(void)state;

	hx_init_conf(&h, &tc, true, false);
	tapp_init(&srv);
	l = hx_ep(&h, 1, SRV_PORT);
	assert_non_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
	for (uint16_t i = 0; i < 3; i++) {
		sg.sport = (uint16_t)(RAW_PORT + i);
		hx_inject(&h, 1, &sg);
	}
	assert_int_equal(wn_tcp_conn_count(h.s[1].tcp), 2);
	assert_int_equal(hx_stats(&h, 1).rx_drop_backlog, 1);
	/* the connection limit bounds active opens too */
	lc = hx_ep(&h, 1, 0);
	r = hx_ep(&h, 0, 80);
	assert_non_null(wn_tcp_connect(h.s[1].tcp, &lc, &r, NULL, NULL));
	assert_null(wn_tcp_connect(h.s[1].tcp, &lc, &r, NULL, NULL));
	assert_int_equal(errno, ENOSPC);
	tapp_fini(&srv);
	hx_fini(&h);
}

/* ---- SYN cookies (RFC 4987 §3.6) ---- */

/* Fill side 1's SYN backlog (1) with a half-open connection from raw side 0. */
static void
cookie_fill_backlog(struct hx *h)
{
	struct hx_seg sg = { .seq = 77, .flags = RTE_TCP_SYN_FLAG, .win = 100, .sport = 39999,
			     .dport = SRV_PORT };
	struct hx_parsed p;

	hx_inject(h, 1, &sg);
	assert_true(hx_cap_tcp(h, &p)); /* the ordinary SYN-ACK */
	assert_int_equal(wn_tcp_conn_count(h->s[1].tcp), 1);
	hx_cap_clear(h);
}

/* A SYN from raw side 0 port @p sport with options @p opts: @return side 1's SYN-ACK. */
static void
cookie_syn(struct hx *h, uint16_t sport, uint32_t seq, const uint8_t *opts, uint8_t optlen,
	   struct hx_parsed *synack)
{
	struct hx_seg sg = { .seq = seq, .flags = RTE_TCP_SYN_FLAG, .win = 65535, .sport = sport,
			     .dport = SRV_PORT, .opts = opts, .optlen = optlen };

	hx_inject(h, 1, &sg);
	assert_true(hx_cap_tcp(h, synack));
	assert_int_equal(synack->flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
	assert_int_equal(synack->ack, seq + 1);
}

/*
 * A SYN flood (issue 15): 10 000 SYNs from as many ports, none completed. The listener keeps
 * no more half-open connections than its SYN backlog, answers every other SYN with a cookie
 * and no state, still opens a connection whose handshake completes, and the half-open ones
 * go once their SYN-ACK retransmissions give up.
 */
static void
test_syn_flood(void **state)
{
	struct wn_tcp_ctx_conf tc = { .max_conns = 64, .syn_backlog = 16 };
	struct hx h;
	struct tapp srv;
	struct wn_tcp_endpoint l;
	struct hx_parsed sa;
	struct hx_seg ack = { .flags = RTE_TCP_ACK_FLAG, .win = 512, .sport = 60000,
			      .dport = SRV_PORT, .seq = 5001 };
	(void)state;

	hx_init_conf(&h, &tc, true, false);
	tapp_init(&srv);
	l = hx_ep(&h, 1, SRV_PORT);
	assert_non_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
	for (unsigned int i = 0; i < 10000; i++) {
		cookie_syn(&h, (uint16_t)(1024 + i), 1000 + i, NULL, 0, &sa);
		hx_cap_clear(&h);
	}
	assert_int_equal(wn_tcp_conn_count(h.s[1].tcp), 16);
	assert_int_equal(hx_stats(&h, 1).syncookies_sent, 10000 - 16);
	/* a real client among them: its ACK returns the cookie */
	cookie_syn(&h, 60000, 5000, NULL, 0, &sa);
	ack.ack = sa.seq + 1;
	hx_inject(&h, 1, &ack);
	assert_int_equal(srv.established, 1);
	assert_int_equal(wn_tcp_conn_count(h.s[1].tcp), 17);
	/* the half-open ones give up (SYN-ACK retransmissions, then dropped) */
	hx_run(&h, 600ull * 1000 * 1000, 500 * 1000);
	hx_cap_clear(&h);
	assert_int_equal(wn_tcp_conn_count(h.s[1].tcp), 1);
	tapp_fini(&srv);
	hx_fini(&h);
}

/*
 * With the SYN backlog full, a SYN gets a SYN-ACK whose ISN is a cookie and no state is
 * kept; the ACK returning it opens the connection with the MSS, window scale, SACK and
 * timestamps of the SYN (MSS from the cookie, the rest from the TSecr), data on it
 * included. A forged ACK gets an RST.
 */
static void
test_syn_cookies(void **state)
{
	/* MSS 1400, WS 7, SACK permitted, TS 1000/0 */
	static const uint8_t opts[] = { 2, 4, 0x05, 0x78, 1, 3, 3, 7, 1, 1, 4, 2,
					1, 1, 8, 10, 0, 0, 0x03, 0xe8, 0, 0, 0, 0 };
	struct wn_tcp_ctx_conf tc = { .max_conns = 8, .syn_backlog = 1 };
	struct hx h;
	struct tapp srv;
	struct wn_tcp_endpoint l;
	struct hx_parsed sa, p;
	struct wn_tcp_info si;
	uint8_t ackopts[12] = { 1, 1, 8, 10 }, data[100];
	struct hx_seg ack = { .flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, .win = 512,
			      .sport = RAW_PORT, .dport = SRV_PORT, .opts = ackopts,
			      .optlen = sizeof(ackopts), .data = data, .len = sizeof(data) };
	uint32_t v;
	(void)state;

	memset(data, 'c', sizeof(data));
	hx_init_conf(&h, &tc, true, false);
	tapp_init(&srv);
	l = hx_ep(&h, 1, SRV_PORT);
	assert_non_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
	cookie_fill_backlog(&h);
	cookie_syn(&h, RAW_PORT, 5000, opts, sizeof(opts), &sa);
	assert_int_equal(hx_stats(&h, 1).syncookies_sent, 1);
	assert_int_equal(hx_stats(&h, 1).rx_drop_backlog, 1);
	assert_int_equal(wn_tcp_conn_count(h.s[1].tcp), 1); /* no state for it */
	assert_true(sa.has_mss && sa.has_ws && sa.has_sackp && sa.has_ts);
	assert_int_equal(sa.mss, 1460);
	assert_int_equal(sa.tsecr, 1000);
	assert_int_equal(sa.tsval & 0x3f, 7 | 0x10); /* peer's wscale and SACK ride in TSval */
	/* a forged ACK (a hash bit of the cookie flipped) is refused */
	ack.seq = 5001;
	ack.ack = (sa.seq ^ 0x00400000u) + 1;
	ack.len = 0;
	v = rte_cpu_to_be_32(2000);
	memcpy(ackopts + 4, &v, 4);
	v = rte_cpu_to_be_32(sa.tsval);
	memcpy(ackopts + 8, &v, 4);
	hx_inject(&h, 1, &ack);
	assert_true(hx_cap_tcp(&h, &p));
	assert_true(p.flags & RTE_TCP_RST_FLAG);
	assert_int_equal(hx_stats(&h, 1).syncookies_failed, 1);
	assert_int_equal(srv.established, 0);
	/* the real ACK, with data */
	ack.ack = sa.seq + 1;
	ack.len = sizeof(data);
	hx_inject(&h, 1, &ack);
	assert_int_equal(srv.established, 1);
	assert_int_equal(hx_stats(&h, 1).syncookies_ok, 1);
	assert_int_equal(srv.rx_len, sizeof(data));
	wn_tcp_conn_info(srv.conn, &si);
	assert_int_equal(si.state, WN_TCP_ESTABLISHED);
	assert_int_equal(si.mss, 1300); /* the cookie's table entry not above 1400 */
	assert_int_equal(si.snd_wscale, 7);
	assert_int_not_equal(si.rcv_wscale, 0);
	assert_true(si.sack_ok && si.ts_ok);
	assert_int_equal(si.snd_wnd, 512u << 7);
	assert_int_equal(si.rcv_nxt, 5001 + sizeof(data));
	assert_true(hx_cap_tcp(&h, &p)); /* the data is acknowledged */
	assert_int_equal(p.ack, 5001 + sizeof(data));
	tapp_fini(&srv);
	hx_fini(&h);
}

/*
 * Without timestamps a cookie SYN-ACK offers MSS only (window scale and SACK could not be
 * remembered), and the connection works without them. A cookie is good for up to two
 * minutes: an older one fails.
 */
static void
test_syn_cookies_no_timestamps_and_expiry(void **state)
{
	static const uint8_t opts[] = { 2, 4, 0x05, 0xb4, 1, 3, 3, 7, 1, 1, 4, 2 };
	struct wn_tcp_ctx_conf tc = { .max_conns = 8, .syn_backlog = 1, .syn_retries = 250,
				      .rto_max_us = 1000000 };
	struct hx h;
	struct tapp srv;
	struct wn_tcp_endpoint l;
	struct hx_parsed sa, old, p;
	struct wn_tcp_info si;
	struct hx_seg ack = { .seq = 9001, .flags = RTE_TCP_ACK_FLAG, .win = 4000,
			      .sport = RAW_PORT, .dport = SRV_PORT };
	(void)state;

	hx_init_conf(&h, &tc, true, false);
	tapp_init(&srv);
	l = hx_ep(&h, 1, SRV_PORT);
	assert_non_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
	cookie_fill_backlog(&h);
	cookie_syn(&h, RAW_PORT, 9000, opts, sizeof(opts), &sa);
	assert_true(sa.has_mss);
	assert_false(sa.has_ws || sa.has_sackp || sa.has_ts);
	ack.ack = sa.seq + 1;
	hx_inject(&h, 1, &ack);
	assert_int_equal(srv.established, 1);
	wn_tcp_conn_info(srv.conn, &si);
	assert_int_equal(si.mss, 1460);
	assert_int_equal(si.snd_wscale, 0);
	assert_int_equal(si.rcv_wscale, 0);
	assert_false(si.sack_ok || si.ts_ok);
	assert_int_equal(si.snd_wnd, 4000);
	/* a cookie kept for three minutes: the backlog is still full (SYN-ACK retries), a
	 * fresh cookie was sent meanwhile, the old one no longer checks */
	cookie_syn(&h, RAW_PORT + 1, 7000, opts, sizeof(opts), &old);
	hx_run(&h, 180ull * 1000000, 100000);
	hx_cap_clear(&h);
	assert_int_equal(wn_tcp_conn_count(h.s[1].tcp), 2);
	cookie_syn(&h, RAW_PORT + 2, 8000, opts, sizeof(opts), &p);
	ack.sport = RAW_PORT + 1;
	ack.seq = 7001;
	ack.ack = old.seq + 1;
	hx_inject(&h, 1, &ack);
	assert_true(hx_cap_tcp(&h, &p));
	assert_true(p.flags & RTE_TCP_RST_FLAG);
	assert_int_equal(hx_stats(&h, 1).syncookies_failed, 1);
	assert_int_equal(srv.established, 1);
	tapp_fini(&srv);
	hx_fini(&h);
}

/* Frames to the backlog filler's port are lost, so its half-open entry stays. */
static bool
drop_to_filler(struct hx *h, int from, struct rte_mbuf *m, void *arg)
{
	struct hx_parsed p;

	(void)h;
	(void)arg;
	return from == 1 && hx_parse(m, &p) && p.dport == 39999;
}

/* Two stacks: a client meeting a full backlog connects through a cookie; data both ways. */
static void
test_syn_cookie_connection_carries_data(void **state)
{
	struct wn_tcp_ctx_conf tc = { .syn_backlog = 1 };
	struct hx_seg sg = { .seq = 77, .flags = RTE_TCP_SYN_FLAG, .win = 100, .sport = 39999,
			     .dport = SRV_PORT };
	struct hx h;
	struct tapp cli, srv;
	struct wn_tcp_endpoint l, lc, r;
	struct wn_tcp_info si;
	static uint8_t up[300000], down[200000];
	size_t uoff = 0, doff = 0;
	(void)state;

	for (size_t i = 0; i < sizeof(up); i++)
		up[i] = (uint8_t)(i * 7);
	for (size_t i = 0; i < sizeof(down); i++)
		down[i] = (uint8_t)(i * 13);
	hx_init_conf(&h, &tc, false, false);
	tapp_init(&cli);
	tapp_init(&srv);
	h.filter = drop_to_filler;
	l = hx_ep(&h, 1, SRV_PORT);
	assert_non_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
	hx_run(&h, 1000, 1000); /* ARP */
	hx_inject(&h, 1, &sg);
	assert_int_equal(wn_tcp_conn_count(h.s[1].tcp), 1);
	lc = hx_ep(&h, 0, 0);
	r = hx_ep(&h, 1, SRV_PORT);
	cli.conn = wn_tcp_connect(h.s[0].tcp, &lc, &r, &tapp_cb, &cli);
	assert_non_null(cli.conn);
	hx_run(&h, 10000, 1000);
	assert_int_equal(cli.established, 1);
	assert_int_equal(srv.established, 1);
	assert_int_equal(hx_stats(&h, 1).syncookies_ok, 1);
	wn_tcp_conn_info(srv.conn, &si);
	assert_true(si.ts_ok && si.sack_ok);
	assert_int_equal(si.mss, 1460);
	while ((srv.rx_len < sizeof(up) || cli.rx_len < sizeof(down)) && h.now < 60000000) {
		if (uoff < sizeof(up))
			uoff += (size_t)wn_tcp_send(cli.conn, up + uoff,
						    (uint32_t)(sizeof(up) - uoff));
		if (doff < sizeof(down))
			doff += (size_t)wn_tcp_send(srv.conn, down + doff,
						    (uint32_t)(sizeof(down) - doff));
		hx_run(&h, 1000, 1000);
	}
	assert_int_equal(srv.rx_len, sizeof(up));
	assert_memory_equal(srv.rx, up, sizeof(up));
	assert_int_equal(cli.rx_len, sizeof(down));
	assert_memory_equal(cli.rx, down, sizeof(down));
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

/* Frames to the filler are lost, and the cookie client's first two segments after the
 * SYN-ACK (its ACK, its first data) too: the listener first sees a later data segment. */
struct late_first {
	uint32_t dropped;
};

static bool
drop_first_after_cookie(struct hx *h, int from, struct rte_mbuf *m, void *arg)
{
	struct late_first *w = arg;
	struct hx_parsed p;

	(void)h;
	if (!hx_parse(m, &p))
		return false;
	if (from == 1 && p.dport == 39999)
		return true;
	if (from == 0 && !(p.flags & RTE_TCP_SYN_FLAG) && w->dropped < 2) {
		w->dropped++;
		return true;
	}
	return false;
}

static void
test_syn_cookie_later_segment_first(void **state)
{
	struct wn_tcp_ctx_conf tc = { .syn_backlog = 1 };
	struct hx_seg sg = { .seq = 77, .flags = RTE_TCP_SYN_FLAG, .win = 100, .sport = 39999,
			     .dport = SRV_PORT };
	struct late_first w = { 0 };
	struct hx h;
	struct tapp cli, srv;
	struct wn_tcp_endpoint l, lc, r;
	static uint8_t up[20000];
	(void)state;

	for (size_t i = 0; i < sizeof(up); i++)
		up[i] = (uint8_t)(i * 11);
	hx_init_conf(&h, &tc, false, false);
	tapp_init(&cli);
	tapp_init(&srv);
	h.filter = drop_first_after_cookie;
	h.filter_arg = &w;
	l = hx_ep(&h, 1, SRV_PORT);
	assert_non_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
	hx_run(&h, 1000, 1000); /* ARP */
	hx_inject(&h, 1, &sg);
	lc = hx_ep(&h, 0, 0);
	r = hx_ep(&h, 1, SRV_PORT);
	cli.conn = wn_tcp_connect(h.s[0].tcp, &lc, &r, &tapp_cb, &cli);
	assert_non_null(cli.conn);
	assert_int_equal(wn_tcp_send(cli.conn, up, sizeof(up)), (int)sizeof(up));
	hx_run(&h, 2000000, 1000);
	assert_int_equal(w.dropped, 2);
	assert_true(hx_stats(&h, 1).syncookies_failed >= 1); /* the later segment came first */
	assert_int_equal(hx_stats(&h, 1).tx_rst, 0);         /* ... and was not answered by RST */
	assert_int_equal(cli.closed, 0);
	assert_int_equal(srv.established, 1);
	assert_int_equal(hx_stats(&h, 1).syncookies_ok, 1);
	assert_int_equal(srv.rx_len, sizeof(up));
	assert_memory_equal(srv.rx, up, sizeof(up));
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_listener_refuses(void **state)
{
	struct hx h;
	struct tapp cli, srv;
	struct wn_tcp_endpoint l, lc, r;
	(void)state;

	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	srv.refuse = 1;
	l = hx_ep(&h, 1, SRV_PORT);
	lc = hx_ep(&h, 0, 0);
	r = hx_ep(&h, 1, SRV_PORT);
	assert_non_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
	assert_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
	assert_int_equal(errno, EADDRINUSE);
	assert_non_null(wn_tcp_connect(h.s[0].tcp, &lc, &r, &tapp_cb, &cli));
	hx_run(&h, 10000, 1000);
	assert_int_equal(srv.closed, 1);
	assert_int_equal(srv.why, WN_TCP_CLOSE_ABORT);
	assert_int_equal(cli.closed, 1);
	assert_int_equal(cli.why, WN_TCP_CLOSE_RESET);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_abort_sends_rst(void **state)
{
	struct hx h;
	struct tapp cli, srv;
	(void)state;

	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	hx_connect_pair(&h, &cli, &srv);
	wn_tcp_abort(cli.conn);
	assert_int_equal(cli.closed, 1);
	assert_int_equal(cli.why, WN_TCP_CLOSE_ABORT);
	hx_run(&h, 1000, 1000);
	assert_int_equal(srv.closed, 1);
	assert_int_equal(srv.why, WN_TCP_CLOSE_RESET);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_isn_rfc6528(void **state)
{
	struct hx h;
	struct wn_tcp_endpoint lc, r;
	struct wn_tcp_conn *a, *b;
	struct wn_tcp_info ia, ib;
	(void)state;

	hx_init_conf(&h, NULL, false, true);
	hx_step(&h);
	lc = hx_ep(&h, 0, 1111);
	r = hx_ep(&h, 1, 80);
	a = wn_tcp_connect(h.s[0].tcp, &lc, &r, NULL, NULL);
	wn_tcp_conn_info(a, &ia);
	wn_tcp_abort(a);
	hx_run(&h, 4000, 1000); /* 4 ms later, same 4-tuple: ISN moved by the 4 us clock */
	b = wn_tcp_connect(h.s[0].tcp, &lc, &r, NULL, NULL);
	wn_tcp_conn_info(b, &ib);
	assert_int_equal(ib.iss - ia.iss, 1000);
	/* another 4-tuple at the same instant: unrelated ISN */
	lc.port = 1112;
	a = wn_tcp_connect(h.s[0].tcp, &lc, &r, NULL, NULL);
	wn_tcp_conn_info(a, &ia);
	assert_true(ia.iss - ib.iss > 1000000 || ib.iss - ia.iss > 1000000);
	hx_fini(&h);
}

static void
test_paws_drops_old_timestamp(void **state)
{
	static const uint8_t ts_syn[] = { 1, 1, 8, 10, 0, 0, 0x10, 0, 0, 0, 0, 0 };
	uint8_t ts_old[12] = { 1, 1, 8, 10, 0, 0, 0x0f, 0, 0, 0, 0, 0 };
	struct hx h;
	struct tapp srv;
	uint32_t siss;
	struct hx_seg sg = { .win = 65535, .sport = RAW_PORT, .dport = SRV_PORT };
	(void)state;

	hx_init_conf(&h, NULL, true, false);
	tapp_init(&srv);
	siss = raw_open(&h, &srv, 100, ts_syn, sizeof(ts_syn), NULL);
	(void)siss;
	sg.seq = 101;
	sg.ack = siss + 1;
	sg.flags = RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG;
	sg.data = "abc";
	sg.len = 3;
	sg.opts = ts_old;
	sg.optlen = sizeof(ts_old);
	hx_inject(&h, 1, &sg);
	assert_int_equal(hx_stats(&h, 1).rx_drop_paws, 1);
	assert_int_equal(srv.rx_len, 0);
	ts_old[6] = 0x11; /* newer: accepted */
	hx_inject(&h, 1, &sg);
	assert_int_equal(srv.rx_len, 3);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_time_wait_acks_retransmitted_fin(void **state)
{
	struct wn_tcp_ctx_conf tc = { .msl_us = 1000000 };
	struct hx h;
	struct tapp srv;
	struct hx_parsed p;
	uint32_t siss;
	struct hx_seg sg = { .win = 65535, .sport = RAW_PORT, .dport = SRV_PORT };
	struct wn_tcp_conn *c;
	(void)state;

	hx_init_conf(&h, &tc, true, false);
	tapp_init(&srv);
	siss = raw_open(&h, &srv, 100, NULL, 0, NULL);
	c = srv.conn;
	wn_tcp_close(c);
	hx_step(&h);
	assert_true(hx_cap_tcp(&h, &p));
	assert_true(p.flags & RTE_TCP_FIN_FLAG);
	/* peer ACKs our FIN and sends its own */
	sg.seq = 101;
	sg.ack = siss + 2;
	sg.flags = RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG;
	hx_inject(&h, 1, &sg);
	assert_int_equal(wn_tcp_conn_state(c), WN_TCP_TIME_WAIT);
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.ack, 102);
	/* the FIN again (our ACK was lost): ACKed again from TIME-WAIT */
	hx_inject(&h, 1, &sg);
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.flags, RTE_TCP_ACK_FLAG);
	assert_int_equal(p.ack, 102);
	assert_int_equal(wn_tcp_conn_state(c), WN_TCP_TIME_WAIT);
	hx_run(&h, 2100000, 10000);
	assert_int_equal(srv.closed, 1);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_lost_synack_is_repeated(void **state)
{
	struct hx h;
	struct tapp srv;
	struct wn_tcp_endpoint l;
	struct hx_parsed p1, p2;
	struct hx_seg sg = { .seq = 9, .flags = RTE_TCP_SYN_FLAG, .win = 100,
			     .sport = RAW_PORT, .dport = SRV_PORT };
	(void)state;

	hx_init_conf(&h, NULL, true, false);
	tapp_init(&srv);
	l = hx_ep(&h, 1, SRV_PORT);
	assert_non_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
	hx_inject(&h, 1, &sg);
	assert_true(hx_cap_tcp(&h, &p1));
	hx_inject(&h, 1, &sg); /* duplicate SYN */
	assert_true(hx_cap_tcp(&h, &p2));
	assert_int_equal(p2.flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
	assert_int_equal(p2.seq, p1.seq);
	assert_int_equal(wn_tcp_conn_count(h.s[1].tcp), 1);
	/* and the timer repeats it too */
	hx_run(&h, 1100000, 10000);
	assert_true(hx_cap_tcp(&h, &p2));
	assert_int_equal(p2.flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_ipv6_connection(void **state)
{
	struct hx h;
	struct tapp cli, srv;
	struct wn_ip_addr a0, a1;
	struct wn_tcp_endpoint l, lc, r;
	struct wn_tcp_info ci;
	(void)state;

	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	assert_int_equal(wn_net_addr_parse("2001:db8::1", &a0, NULL), 0);
	assert_int_equal(wn_net_addr_parse("2001:db8::2", &a1, NULL), 0);
	assert_int_equal(wn_net_if_addr_add(h.s[0].nif, &a0, 64), 0);
	assert_int_equal(wn_net_if_addr_add(h.s[1].nif, &a1, 64), 0);
	/* the interfaces come up: both addresses pass DAD (RFC 4862 §5.4: 1 s), then serve */
	assert_int_equal(wn_net_start(h.s[0].nif, h.now), 0);
	assert_int_equal(wn_net_start(h.s[1].nif, h.now), 0);
	hx_run(&h, 1200000, 10000);
	l.addr = a1;
	l.port = 80;
	lc.addr = a0;
	lc.port = 0;
	r = l;
	assert_non_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
	cli.conn = wn_tcp_connect(h.s[0].tcp, &lc, &r, &tapp_cb, &cli);
	assert_non_null(cli.conn);
	hx_run(&h, 20000, 1000); /* neighbour discovery, then the handshake */
	assert_int_equal(cli.established, 1);
	assert_int_equal(srv.established, 1);
	wn_tcp_conn_info(cli.conn, &ci);
	assert_int_equal(ci.mss, 1440); /* 1500 - 40 - 20 */
	assert_int_equal(wn_tcp_send(cli.conn, "over-v6", 7), 7);
	hx_run(&h, 100000, 1000);
	assert_int_equal(srv.rx_len, 7);
	assert_memory_equal(srv.rx, "over-v6", 7);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_synrcvd_ack_fin_to_close_wait(void **state)
{
	struct hx h;
	struct tapp srv;
	struct wn_tcp_endpoint l;
	struct hx_parsed p;
	struct hx_seg sg = { .seq = 50, .flags = RTE_TCP_SYN_FLAG, .win = 1000,
			     .sport = RAW_PORT, .dport = SRV_PORT, .data = "tail", .len = 0 };
	(void)state;

	hx_init_conf(&h, NULL, true, false);
	tapp_init(&srv);
	l = hx_ep(&h, 1, SRV_PORT);
	assert_non_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
	hx_inject(&h, 1, &sg);
	assert_true(hx_cap_tcp(&h, &p));
	/* the third segment carries data and FIN: ESTABLISHED, data, then CLOSE-WAIT */
	sg.seq = 51;
	sg.ack = p.seq + 1;
	sg.flags = RTE_TCP_ACK_FLAG | RTE_TCP_FIN_FLAG | RTE_TCP_PSH_FLAG;
	sg.len = 4;
	hx_inject(&h, 1, &sg);
	assert_int_equal(srv.established, 1);
	assert_int_equal(srv.rx_len, 4);
	assert_memory_equal(srv.rx, "tail", 4);
	assert_int_equal(srv.eofs, 1);
	assert_int_equal(wn_tcp_conn_state(srv.conn), WN_TCP_CLOSE_WAIT);
	assert_true(hx_cap_tcp(&h, &p));
	assert_int_equal(p.ack, 51 + 4 + 1);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_data_queued_before_established(void **state)
{
	struct hx h;
	struct tapp cli, srv;
	struct wn_tcp_endpoint l, lc, r;
	(void)state;

	hx_init(&h);
	tapp_init(&cli);
	tapp_init(&srv);
	l = hx_ep(&h, 1, SRV_PORT);
	lc = hx_ep(&h, 0, 0);
	r = l;
	assert_non_null(wn_tcp_listen(h.s[1].tcp, &l, &tapp_cb, &srv));
	cli.conn = wn_tcp_connect(h.s[0].tcp, &lc, &r, &tapp_cb, &cli);
	assert_int_equal(wn_tcp_conn_state(cli.conn), WN_TCP_SYN_SENT);
	assert_int_equal(wn_tcp_send(cli.conn, "early", 5), 5);
	{
		struct wn_tcp_info ci;

		wn_tcp_conn_info(cli.conn, &ci);
		assert_int_equal(wn_tcp_next_seq(cli.conn), ci.iss + 1 + 5);
	}
	hx_run(&h, 100000, 1000);
	assert_int_equal(srv.rx_len, 5);
	assert_memory_equal(srv.rx, "early", 5);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

static void
test_flow_steer_matches_rss(void **state)
{
	/* Microsoft RSS verification suite, IPv4 with TCP ports: 0x51ccc178 */
	struct wn_tcp_endpoint local = { .addr = wn_ip_addr_v4(161, 142, 100, 80), .port = 1766 };
	struct wn_tcp_endpoint remote = { .addr = wn_ip_addr_v4(66, 9, 149, 187), .port = 2794 };
	(void)state;

	assert_int_equal(wn_tcp_flow_steer(&local, &remote, 0xFFFFFFFFu), 0x51ccc178u);
	assert_int_equal(wn_tcp_flow_steer(&local, &remote, 4), 0x51ccc178u % 4);
	assert_int_equal(wn_tcp_flow_steer(&local, &remote, 1), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake_and_echo),
		cmocka_unit_test(test_handshake_no_options),
		cmocka_unit_test(test_mss_negotiation_and_default),
		cmocka_unit_test(test_active_and_passive_close),
		cmocka_unit_test(test_time_wait_detached),
		cmocka_unit_test(test_fin_wait2_timeout),
		cmocka_unit_test(test_simultaneous_close),
		cmocka_unit_test(test_simultaneous_open),
		cmocka_unit_test(test_rst_rules_rfc5961),
		cmocka_unit_test(test_challenge_ack_rate_limit),
		cmocka_unit_test(test_burst_with_reset_then_data),
		cmocka_unit_test(test_closed_port_gets_rst),
		cmocka_unit_test(test_connect_refused),
		cmocka_unit_test(test_syn_retries_backoff_timeout),
		cmocka_unit_test(test_malformed_segments_counted),
		cmocka_unit_test(test_syn_backlog_and_conn_limit),
		cmocka_unit_test(test_syn_cookies),
		cmocka_unit_test(test_syn_flood),
		cmocka_unit_test(test_syn_cookies_no_timestamps_and_expiry),
		cmocka_unit_test(test_syn_cookie_connection_carries_data),
		cmocka_unit_test(test_syn_cookie_later_segment_first),
		cmocka_unit_test(test_listener_refuses),
		cmocka_unit_test(test_abort_sends_rst),
		cmocka_unit_test(test_isn_rfc6528),
		cmocka_unit_test(test_paws_drops_old_timestamp),
		cmocka_unit_test(test_time_wait_acks_retransmitted_fin),
		cmocka_unit_test(test_lost_synack_is_repeated),
		cmocka_unit_test(test_ipv6_connection),
		cmocka_unit_test(test_synrcvd_ack_fin_to_close_wait),
		cmocka_unit_test(test_data_queued_before_established),
		cmocka_unit_test(test_flow_steer_matches_rss),
	};

	hx_eal_init("wn_tcp_conn");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
