/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sink: accept connections, count and hash (sha256) every received octet,
 * optionally check it against the seeded stream; close after the peer's FIN.
 */
#include <openssl/evp.h>

#include "tcpapp.h"

static int
sink_established(struct wn_tcp_conn *c, void *arg)
{
	return tcpapp_accept(c, arg, wn_net_now_us());
}

static void
sink_recv(struct wn_tcp_conn *c, void *arg)
{
	struct tcpapp_conn *ac = arg;
	const uint8_t *data;
	uint32_t n;

	while ((n = wn_tcp_recv_peek(c, &data)) > 0) {
		EVP_DigestUpdate(ac->sha, data, n);
		if (ac->app->p.verify)
			ac->mismatch += tcpapp_verify(ac->app->p.seed, ac->bytes, data, n);
		ac->bytes += n;
		wn_tcp_recv_consume(c, n);
	}
}

static void
sink_eof(struct wn_tcp_conn *c, void *arg)
{
	struct tcpapp_conn *ac = arg;

	sink_recv(c, arg);
	tcpapp_conn_finish(ac, wn_net_now_us());
	wn_tcp_close(c);
}

static const struct wn_tcp_cb sink_cb = {
	.established = sink_established,
	.recv = sink_recv,
	.eof = sink_eof,
	.closed = tcpapp_server_closed,
};

static int
sink_start(struct tcpapp *app, uint64_t now)
{
	(void)now;
	return tcpapp_listen(app, &sink_cb);
}

static int
sink_report(struct tcpapp *app)
{
	tcpapp_report_common(app, "sink");
	return app->nb_failed > 0 || app->total_mismatch > 0 ||
	       (app->p.conns > 0 && app->nb_done < app->p.conns);
}

const struct tcpapp_mode tcpapp_mode_sink = {
	.name = "sink",
	.help = "server: count, sha256 (and --verify) received data",
	.uses_tcp = true,
	.start = sink_start,
	.poll = tcpapp_server_poll,
	.report = sink_report,
	.cb = &sink_cb,
};
