/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * source: open --conns connections to --connect, send --bytes octets of the
 * seeded stream on each, close (FIN) and report throughput and sha256. A
 * connection is finished when our FIN is acknowledged (so is all its data).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

#include "tcpapp.h"

static void
source_fill(struct tcpapp_conn *ac)
{
	struct tcpapp *app = ac->app;
	uint64_t left;
	uint32_t space, k;
	int sent;

	while (ac->bytes < app->p.bytes) {
		space = wn_tcp_send_space(ac->c);
		if (space == 0)
			break;
		left = app->p.bytes - ac->bytes;
		k = space < TCPAPP_CHUNK ? space : TCPAPP_CHUNK;
		if (k > left)
			k = (uint32_t)left;
		tcpapp_gen(app->p.seed, ac->bytes, app->buf, k);
		sent = wn_tcp_send(ac->c, app->buf, k);
		if (sent <= 0)
			break;
		EVP_DigestUpdate(ac->sha, app->buf, (size_t)sent);
		ac->bytes += (uint32_t)sent;
	}
	if (ac->bytes == app->p.bytes && !ac->fin) {
		ac->fin = true;
		wn_tcp_close(ac->c);
	}
}

static int
source_established(struct wn_tcp_conn *c, void *arg)
{
	struct tcpapp_conn *ac = arg;
	struct wn_tcp_info info;
	uint64_t now = wn_net_now_us();

	wn_tcp_conn_info(c, &info);
	ac->local = info.local;
	ac->established = true;
	ac->t_start = now;
	if (ac->app->t_first == 0)
		ac->app->t_first = now;
	source_fill(ac);
	return 0;
}

static void
source_sent(struct wn_tcp_conn *c, void *arg, uint32_t acked)
{
	(void)c;
	(void)acked;
	source_fill(arg);
}

static void
source_recv(struct wn_tcp_conn *c, void *arg)
{
	uint8_t tmp[2048];

	(void)arg;
	while (wn_tcp_recv(c, tmp, sizeof(tmp)) > 0)
		; /* a source ignores what the server says */
}

static void
source_closed(struct wn_tcp_conn *c, void *arg, enum wn_tcp_close_reason why)
{
	struct tcpapp_conn *ac = arg;

	(void)c;
	if (!ac->done) {
		if (why != WN_TCP_CLOSE_NORMAL || ac->bytes < ac->app->p.bytes)
			ac->app->nb_failed++;
		ac->why = why;
		tcpapp_conn_finish(ac, wn_net_now_us());
	}
	ac->c = NULL;
	ac->closed = true;
}

static const struct wn_tcp_cb source_cb = {
	.established = source_established,
	.recv = source_recv,
	.sent = source_sent,
	.closed = source_closed,
};

static int
source_start(struct tcpapp *app, uint64_t now)
{
	struct wn_tcp_endpoint local;
	struct tcpapp_conn *ac;
	uint32_t i;
	int ret;

	(void)now;
	memset(&local, 0, sizeof(local));
	ret = wn_net_if_src_addr(app->nif, &app->p.remote.addr, &local.addr);
	if (ret < 0)
		return ret;
	for (i = 0; i < app->p.conns; i++) {
		ac = tcpapp_conn_new(app, NULL);
		if (ac == NULL)
			return -ENOMEM;
		ac->remote = app->p.remote;
		ac->local = local;
		ac->c = wn_tcp_connect(app->tcp, &local, &app->p.remote, &source_cb, ac);
		if (ac->c == NULL) {
			ret = -errno;
			fprintf(stderr, "source: connect %u failed: %s\n", i, strerror(errno));
			return ret;
		}
	}
	return 0;
}

static int
source_poll(struct tcpapp *app, uint64_t now)
{
	static uint64_t last_scan;
	enum wn_tcp_state st;
	uint32_t i;

	if (now - last_scan >= 200) {
		last_scan = now;
		for (i = 0; i < app->nb_slots; i++) {
			struct tcpapp_conn *ac = &app->conns[i];

			if (ac->c == NULL || ac->done || !ac->fin)
				continue;
			st = wn_tcp_conn_state(ac->c);
			/* our FIN was acknowledged, hence every octet before it */
			if (st == WN_TCP_FIN_WAIT_2 || st == WN_TCP_TIME_WAIT)
				tcpapp_conn_finish(ac, now);
		}
	}
	return app->nb_done >= app->p.conns;
}

static int
source_report(struct tcpapp *app)
{
	tcpapp_report_common(app, "source");
	return app->nb_failed > 0 || app->nb_done < app->p.conns;
}

const struct tcpapp_mode tcpapp_mode_source = {
	.name = "source",
	.help = "client: send --bytes of the seeded stream on --conns connections",
	.uses_tcp = true,
	.start = source_start,
	.poll = source_poll,
	.report = source_report,
	.cb = &source_cb,
};
