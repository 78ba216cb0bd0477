/* SPDX-License-Identifier: BSD-3-Clause */
/* A small test application on the wn_tcp API: records events, collects received bytes. */
#ifndef WN_TEST_APP_H
#define WN_TEST_APP_H

#include "harness.h"

struct tapp {
	struct wn_tcp_conn *conn;
	int established, eofs, closed;
	enum wn_tcp_close_reason why;
	uint64_t sent_acked;
	uint16_t emss;
	uint8_t *rx;
	size_t rx_len, rx_cap;
	bool auto_read;     /* read everything on recv events */
	bool close_on_eof;
	int refuse;
	/* out-of-order segments reported (recv_ooo): the last one's sequence and octets */
	unsigned int n_ooo;
	uint32_t ooo_seq, ooo_len;
	uint8_t ooo_data[2048];
};

static int
tapp_established(struct wn_tcp_conn *c, void *arg)
{
	struct tapp *a = arg;

	a->conn = c;
	a->established++;
	return a->refuse;
}

static void
tapp_drain(struct tapp *a)
{
	for (;;) {
		uint8_t buf[4096];
		int n = wn_tcp_recv(a->conn, buf, sizeof(buf));

		if (n <= 0)
			break;
		if (a->rx_len + (size_t)n > a->rx_cap) {
			a->rx_cap = (a->rx_len + (size_t)n) * 2;
			a->rx = realloc(a->rx, a->rx_cap);
		}
		memcpy(a->rx + a->rx_len, buf, (size_t)n);
		a->rx_len += (size_t)n;
	}
}

static void
tapp_recv(struct wn_tcp_conn *c, void *arg)
{
	struct tapp *a = arg;

	a->conn = c;
	if (a->auto_read)
		tapp_drain(a);
}

static void
tapp_recv_ooo(struct wn_tcp_conn *c, void *arg, uint32_t seq, const uint8_t *data, uint32_t len)
{
	struct tapp *a = arg;

	(void)c;
	a->n_ooo++;
	a->ooo_seq = seq;
	a->ooo_len = len;
	memcpy(a->ooo_data, data, len < sizeof(a->ooo_data) ? len : sizeof(a->ooo_data));
}

static void
tapp_eof(struct wn_tcp_conn *c, void *arg)
{
	struct tapp *a = arg;

	a->eofs++;
	if (a->close_on_eof)
		wn_tcp_close(c);
}

static void
tapp_sent(struct wn_tcp_conn *c, void *arg, uint32_t acked)
{
	struct tapp *a = arg;

	(void)c;
	a->sent_acked += acked;
}

static void
tapp_emss(struct wn_tcp_conn *c, void *arg, uint16_t emss)
{
	struct tapp *a = arg;

	(void)c;
	a->emss = emss;
}

static void
tapp_closed(struct wn_tcp_conn *c, void *arg, enum wn_tcp_close_reason why)
{
	struct tapp *a = arg;

	(void)c;
	a->closed++;
	a->why = why;
	a->conn = NULL;
}

static const struct wn_tcp_cb tapp_cb = {
	.established = tapp_established,
	.recv = tapp_recv,
	.recv_ooo = tapp_recv_ooo,
	.eof = tapp_eof,
	.sent = tapp_sent,
	.emss = tapp_emss,
	.closed = tapp_closed,
};

static inline void
tapp_init(struct tapp *a)
{
	memset(a, 0, sizeof(*a));
	a->auto_read = true;
}

static inline void
tapp_fini(struct tapp *a)
{
	free(a->rx);
}

/* Listen on side 1 port 5000, connect from side 0; run until both are established. */
/* Connect @p cli (side 0) to @p srv listening on side 1's @p port. */
static inline void
hx_connect_port(struct hx *h, struct tapp *cli, struct tapp *srv, uint16_t port)
{
	struct wn_tcp_endpoint l = hx_ep(h, 1, port), lc = hx_ep(h, 0, 0), r = hx_ep(h, 1, port);

	assert_non_null(wn_tcp_listen(h->s[1].tcp, &l, &tapp_cb, srv));
	cli->conn = wn_tcp_connect(h->s[0].tcp, &lc, &r, &tapp_cb, cli);
	assert_non_null(cli->conn);
	hx_run(h, 10000, 1000);
	assert_int_equal(cli->established, 1);
	assert_int_equal(srv->established, 1);
}

static inline void
hx_connect_pair(struct hx *h, struct tapp *cli, struct tapp *srv)
{
	hx_connect_port(h, cli, srv, 5000);
}

#endif /* WN_TEST_APP_H */
