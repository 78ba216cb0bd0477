/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * echo: accept connections and send every received octet back; close after
 * the peer's FIN once everything was echoed.
 */
#include <openssl/evp.h>

#include "tcpapp.h"

static int
echo_established(struct wn_tcp_conn *c, void *arg)
{
	return tcpapp_accept(c, arg, wn_net_now_us());
}

/* Echo what fits in the send buffer; the rest waits in the receive buffer (back-pressure). */
static void
echo_pump(struct wn_tcp_conn *c, struct tcpapp_conn *ac)
{
	const uint8_t *data;
	uint32_t n, space;
	int sent;

	while ((n = wn_tcp_recv_peek(c, &data)) > 0) {
		space = wn_tcp_send_space(c);
		if (space == 0)
			break;
		if (n > space)
			n = space;
		sent = wn_tcp_send(c, data, n);
		if (sent <= 0)
			break;
		EVP_DigestUpdate(ac->sha, data, (size_t)sent);
		ac->bytes += (uint32_t)sent;
		wn_tcp_recv_consume(c, (uint32_t)sent);
	}
	if (ac->fin && !ac->done && wn_tcp_recv_avail(c) == 0) {
		tcpapp_conn_finish(ac, wn_net_now_us());
		wn_tcp_close(c);
	}
}

static void
echo_recv(struct wn_tcp_conn *c, void *arg)
{
	echo_pump(c, arg);
}

static void
echo_sent(struct wn_tcp_conn *c, void *arg, uint32_t acked)
{
	(void)acked;
	echo_pump(c, arg);
}

static void
echo_eof(struct wn_tcp_conn *c, void *arg)
{
	struct tcpapp_conn *ac = arg;

	ac->fin = true;
	echo_pump(c, ac);
}

static const struct wn_tcp_cb echo_cb = {
	.established = echo_established,
	.recv = echo_recv,
	.eof = echo_eof,
	.sent = echo_sent,
	.closed = tcpapp_server_closed,
};

static int
echo_start(struct tcpapp *app, uint64_t now)
{
	(void)now;
	return tcpapp_listen(app, &echo_cb);
}

static int
echo_report(struct tcpapp *app)
{
	tcpapp_report_common(app, "echo");
	return app->nb_failed > 0 || (app->p.conns > 0 && app->nb_done < app->p.conns);
}

const struct tcpapp_mode tcpapp_mode_echo = {
	.name = "echo",
	.help = "server: send every received octet back",
	.uses_tcp = true,
	.start = echo_start,
	.poll = tcpapp_server_poll,
	.report = echo_report,
	.cb = &echo_cb,
};
