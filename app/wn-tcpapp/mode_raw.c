/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rawtx / rawrx: the port's own packet path without the stack, the baseline the
 * TCP numbers are compared with. rawtx sends --bytes in --pkt-size frames of
 * ethertype 0x88B5 (IEEE local experimental) to --peer-mac; rawrx counts them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "tcpapp.h"

#define RAW_ETHERTYPE 0x88B5
#define RAW_IDLE_US 500000

static int
raw_start(struct tcpapp *app, uint64_t now)
{
	(void)now;
	return rte_eth_macaddr_get(app->port_id, &app->mac);
}

static int
rawtx_poll(struct tcpapp *app, uint64_t now)
{
	struct rte_mbuf *pkts[TCPAPP_BURST];
	struct rte_ether_hdr *eh;
	uint16_t n = 0, sent, i;

	if (app->t_first == 0)
		app->t_first = now;
	while (n < TCPAPP_BURST && app->raw_bytes + (uint64_t)(n + 1) * app->p.pkt_size <=
					   app->p.bytes + app->p.pkt_size - 1) {
		pkts[n] = rte_pktmbuf_alloc(app->pool);
		if (pkts[n] == NULL)
			break;
		eh = (struct rte_ether_hdr *)rte_pktmbuf_append(pkts[n], app->p.pkt_size);
		if (eh == NULL) {
			rte_pktmbuf_free(pkts[n]);
			break;
		}
		eh->dst_addr = app->p.peer_mac;
		eh->src_addr = app->mac;
		eh->ether_type = rte_cpu_to_be_16(RAW_ETHERTYPE);
		n++;
	}
	sent = n > 0 ? rte_eth_tx_burst(app->port_id, 0, pkts, n) : 0;
	for (i = sent; i < n; i++)
		rte_pktmbuf_free(pkts[i]);
	app->tx_pkts += sent;
	app->raw_bytes += (uint64_t)sent * app->p.pkt_size;
	if (app->raw_bytes >= app->p.bytes) {
		app->t_last = now;
		return 1;
	}
	return 0;
}

static int
rawrx_poll(struct tcpapp *app, uint64_t now)
{
	struct rte_mbuf *pkts[TCPAPP_BURST];
	uint16_t n, i;

	n = rte_eth_rx_burst(app->port_id, 0, pkts, TCPAPP_BURST);
	for (i = 0; i < n; i++) {
		const struct rte_ether_hdr *eh =
			rte_pktmbuf_mtod(pkts[i], const struct rte_ether_hdr *);

		if (pkts[i]->data_len >= sizeof(*eh) &&
		    eh->ether_type == rte_cpu_to_be_16(RAW_ETHERTYPE)) {
			if (app->t_first == 0)
				app->t_first = now;
			app->raw_bytes += pkts[i]->pkt_len;
			app->rx_pkts++;
			app->t_last = now;
		}
		rte_pktmbuf_free(pkts[i]);
	}
	/* done at --bytes, or when the sender went quiet (frames lost on the way) */
	return app->raw_bytes >= app->p.bytes ||
	       (app->t_first != 0 && now - app->t_last > RAW_IDLE_US);
}

static int
raw_report(struct tcpapp *app)
{
	double secs = app->t_last > app->t_first ? (app->t_last - app->t_first) / 1e6 : 0;

	printf("%s: packets %" PRIu64 " bytes %" PRIu64 " seconds %.3f gbps %.3f mpps %.3f\n",
	       app->p.mode->name, app->p.mode == &tcpapp_mode_rawtx ? app->tx_pkts : app->rx_pkts,
	       app->raw_bytes, secs, secs > 0 ? app->raw_bytes * 8 / secs / 1e9 : 0.0,
	       secs > 0 ? (app->p.mode == &tcpapp_mode_rawtx ? app->tx_pkts : app->rx_pkts) /
				  secs / 1e6
			: 0.0);
	fflush(stdout);
	if (app->p.mode == &tcpapp_mode_rawrx)
		return app->rx_pkts == 0;
	return app->raw_bytes < app->p.bytes;
}

const struct tcpapp_mode tcpapp_mode_rawtx = {
	.name = "rawtx",
	.help = "baseline: send --bytes of raw frames, no TCP/IP",
	.start = raw_start,
	.poll = rawtx_poll,
	.report = raw_report,
};

const struct tcpapp_mode tcpapp_mode_rawrx = {
	.name = "rawrx",
	.help = "baseline: receive --bytes of raw frames from rawtx",
	.start = raw_start,
	.poll = rawrx_poll,
	.report = raw_report,
};
