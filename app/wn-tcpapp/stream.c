/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Seeded, offset-addressable test data, per-connection bookkeeping and results.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "tcpapp.h"

/* splitmix64 of a counter: the 8 octets at offset 8*b of the stream of @seed */
static inline uint64_t
block(uint64_t seed, uint64_t b)
{
	uint64_t z = seed + (b + 1) * 0x9E3779B97F4A7C15ull;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline uint8_t
octet(uint64_t seed, uint64_t off)
{
	return (uint8_t)(block(seed, off >> 3) >> ((off & 7) * 8));
}

void
tcpapp_gen(uint64_t seed, uint64_t offset, uint8_t *buf, uint32_t len)
{
	uint32_t i = 0;

	for (; i < len && ((offset + i) & 7) != 0; i++)
		buf[i] = octet(seed, offset + i);
	for (; i + 8 <= len; i += 8) {
		uint64_t v = block(seed, (offset + i) >> 3);

		memcpy(buf + i, &v, 8); /* little-endian host: octet k = bits 8k..8k+7 */
	}
	for (; i < len; i++)
		buf[i] = octet(seed, offset + i);
}

uint64_t
tcpapp_verify(uint64_t seed, uint64_t offset, const uint8_t *buf, uint32_t len)
{
	uint8_t tmp[4096];
	uint64_t bad = 0;
	uint32_t done, k, i;

	for (done = 0; done < len; done += k) {
		k = len - done < sizeof(tmp) ? len - done : (uint32_t)sizeof(tmp);
		tcpapp_gen(seed, offset + done, tmp, k);
		if (memcmp(tmp, buf + done, k) == 0)
			continue;
		for (i = 0; i < k; i++)
			bad += tmp[i] != buf[done + i];
	}
	return bad;
}

void
tcpapp_fmt_ep(const struct wn_tcp_endpoint *ep, char *buf, size_t len)
{
	char a[64];

	wn_net_addr_fmt(&ep->addr, a, sizeof(a));
	if (ep->addr.family == WN_AF_INET6)
		snprintf(buf, len, "[%s]:%u", a, ep->port);
	else
		snprintf(buf, len, "%s:%u", a, ep->port);
}

struct tcpapp_conn *
tcpapp_conn_new(struct tcpapp *app, struct wn_tcp_conn *c)
{
	struct tcpapp_conn *ac;
	struct wn_tcp_info info;
	uint32_t i;

	for (i = 0; i < app->nb_slots; i++) {
		ac = &app->conns[(app->nb_open + i) % app->nb_slots];
		if (ac->c == NULL && ac->sha == NULL)
			break;
	}
	if (i == app->nb_slots)
		return NULL;
	memset(ac, 0, sizeof(*ac));
	ac->magic = TCPAPP_MAGIC_CONN;
	ac->sha = EVP_MD_CTX_new();
	if (ac->sha == NULL || EVP_DigestInit_ex(ac->sha, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(ac->sha);
		ac->sha = NULL;
		return NULL;
	}
	ac->c = c;
	ac->app = app;
	ac->idx = app->nb_open++;
	if (c != NULL) {
		wn_tcp_conn_info(c, &info);
		ac->local = info.local;
		ac->remote = info.remote;
	}
	return ac;
}

/* Print the result line of a connection and free its digest. */
void
tcpapp_conn_finish(struct tcpapp_conn *ac, uint64_t now)
{
	struct tcpapp *app = ac->app;
	unsigned char md[EVP_MAX_MD_SIZE];
	char hex[2 * EVP_MAX_MD_SIZE + 1], l[80], r[80], tcb[96] = "";
	unsigned int mdlen = 0, i;

	if (ac->done)
		return;
	ac->done = true;
	ac->t_end = now;
	if (ac->sha != NULL) {
		EVP_DigestFinal_ex(ac->sha, md, &mdlen);
		EVP_MD_CTX_free(ac->sha);
		ac->sha = NULL;
	}
	for (i = 0; i < mdlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[2 * mdlen] = '\0';
	tcpapp_fmt_ep(&ac->local, l, sizeof(l));
	tcpapp_fmt_ep(&ac->remote, r, sizeof(r));
	app->nb_done++;
	app->total_bytes += ac->bytes;
	app->total_mismatch += ac->mismatch;
	if (app->t_last < now)
		app->t_last = now;
	if (ac->c != NULL && !ac->closed) {
		struct wn_tcp_info info;

		wn_tcp_conn_info(ac->c, &info);
		snprintf(tcb, sizeof(tcb), " srtt_us %u rto_us %u retrans %" PRIu64, info.srtt_us,
			 info.rto_us, info.retrans);
	}
	if (!app->p.quiet || app->p.conns <= 1)
		printf("conn %u local %s remote %s bytes %" PRIu64 " sha256 %s%s%s\n", ac->idx, l,
		       r, ac->bytes, hex, ac->mismatch ? " MISMATCH" : "", tcb);
	fflush(stdout);
}

int
tcpapp_report_common(struct tcpapp *app, const char *what)
{
	double secs = app->t_last > app->t_first ? (app->t_last - app->t_first) / 1e6 : 0;
	struct wn_tcp_stats ts;
	struct wn_net_stats ns;

	memset(&ts, 0, sizeof(ts));
	memset(&ns, 0, sizeof(ns));
	if (app->tcp != NULL)
		wn_tcp_stats_get(app->tcp, &ts);
	if (app->nif != NULL)
		wn_net_stats_get(app->nif, &ns);
	printf("%s: conns %u done %u failed %u bytes %" PRIu64 " errors %" PRIu64
	       " seconds %.3f gbps %.3f\n",
	       what, app->nb_open, app->nb_done, app->nb_failed, app->total_bytes,
	       app->total_mismatch, secs, secs > 0 ? app->total_bytes * 8 / secs / 1e9 : 0.0);
	printf("tcp: rx_segs %" PRIu64 " tx_segs %" PRIu64 " retrans %" PRIu64 " rto %" PRIu64
	       " fast_retrans %" PRIu64 " rx_ooo %" PRIu64 " rx_dup_data %" PRIu64
	       " rx_drop_cksum %" PRIu64 " rx_drop_backlog %" PRIu64 " conns_opened %" PRIu64
	       "\n",
	       ts.rx_segs, ts.tx_segs, ts.tx_retrans, ts.rto_fired, ts.fast_retrans, ts.rx_ooo,
	       ts.rx_dup_data, ts.rx_drop_cksum, ts.rx_drop_backlog, ts.conns_opened);
	printf("tcp_drops: noconn %" PRIu64 " tx_rst %" PRIu64 " syncookies_sent %" PRIu64
	       " syncookies_ok %" PRIu64 " syncookies_failed %" PRIu64 " conn_limit %" PRIu64
	       " unacceptable %" PRIu64 " paws %" PRIu64 " ack %" PRIu64 " badflags %" PRIu64
	       " state %" PRIu64 " timeouts %" PRIu64 "\n",
	       ts.rx_drop_noconn, ts.tx_rst, ts.syncookies_sent, ts.syncookies_ok,
	       ts.syncookies_failed, ts.rx_drop_conn_limit, ts.rx_drop_unacceptable,
	       ts.rx_drop_paws, ts.rx_drop_ack, ts.rx_drop_badflags, ts.rx_drop_state,
	       ts.conns_timeout);
	printf("port: rx %" PRIu64 " tx %" PRIu64 " tx_drop %" PRIu64 " net_rx_drop_mac %" PRIu64
	       " net_tx_drop_neigh %" PRIu64 "\n",
	       app->rx_pkts, app->tx_pkts, app->tx_drop, ns.rx_drop_mac, ns.tx_drop_neigh);
	fflush(stdout);
	return 0;
}

/* Listen on --listen PORT, any address of the family of the first --ip. */
int
tcpapp_listen(struct tcpapp *app, const struct wn_tcp_cb *cb)
{
	struct wn_tcp_endpoint ep;

	memset(&ep, 0, sizeof(ep));
	ep.addr.family = app->p.addr[0].family;
	ep.port = app->p.listen_port;
	app->listener = wn_tcp_listen(app->tcp, &ep, cb, app);
	if (app->listener == NULL)
		return -errno;
	printf("%s: listening on port %u\n", app->p.mode->name, ep.port);
	fflush(stdout);
	return 0;
}

/* Accept: a slot for the connection, or refuse it. */
int
tcpapp_accept(struct wn_tcp_conn *c, void *arg, uint64_t now)
{
	struct tcpapp *app = arg;
	struct tcpapp_conn *ac = tcpapp_conn_new(app, c);

	if (ac == NULL)
		return -1;
	ac->established = true;
	ac->t_start = now;
	if (app->t_first == 0)
		app->t_first = now;
	wn_tcp_conn_set_arg(c, ac);
	return 0;
}

/* Closed event of a server connection. */
void
tcpapp_server_closed(struct wn_tcp_conn *c, void *arg, enum wn_tcp_close_reason why)
{
	struct tcpapp_conn *ac = arg;
	struct tcpapp *app;

	(void)c;
	if (ac == NULL || ac->magic != TCPAPP_MAGIC_CONN)
		return; /* never established: the argument is still the listener's */
	app = ac->app;
	if (!ac->done) {
		app->nb_failed++;
		ac->why = why;
		tcpapp_conn_finish(ac, wn_net_now_us());
	}
	ac->c = NULL;
	ac->closed = true;
}

/*
 * Servers: finished when --conns N connections have ended and none is open, or a grace
 * period after the last one ended: our FIN may wait in LAST_ACK for a peer that is gone.
 */
int
tcpapp_server_poll(struct tcpapp *app, uint64_t now)
{
	if (app->p.conns == 0 || app->nb_done < app->p.conns)
		return 0;
	if (app->t_all_done == 0)
		app->t_all_done = now;
	return wn_tcp_conn_count(app->tcp) == 0 || now - app->t_all_done > TCPAPP_GRACE_US;
}
