/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for TCP input on a live context: every input starts from a fresh
 * ESTABLISHED connection (handshake crafted with MSS/WS/SACK-permitted/TS) holding unsent
 * and unacknowledged data in record mode, then feeds a sequence of segments described by
 * the input. Each segment record (8 octets + options):
 *   u8 flags | u8 advance (ms) | i16 seq offset from RCV.NXT | i16 ack offset from SND.UNA
 *   | u8 window (<<8) | u8 optlen (<=40, option octets follow) ; payload = 0..255 octets of
 *   pattern, length taken from the low byte of the seq offset.
 * Checksums are made valid so the state machine, not the checksum check, is exercised.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "wn_net.h"
#include "wn_tcp.h"

static struct rte_mempool *pool;
static uint64_t now;
static struct wn_tcp_conn *conn;
static int closed;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char *eal[] = { "fuzz", "--no-huge", "--no-shconf", "--no-pci", "-l", "0", "-m", "128",
			"--log-level", "*:error", NULL };

	(void)argc;
	(void)argv;
	if (rte_eal_init(10, eal) < 0)
		abort();
	pool = rte_pktmbuf_pool_create("fz", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL)
		abort();
	return 0;
}

static struct rte_mbuf *
craft(uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win, const uint8_t *opts,
      uint8_t optlen, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;
	uint32_t thl = 20u + ((optlen + 3u) & ~3u);

	if (m == NULL)
		abort();
	ip = (struct rte_ipv4_hdr *)rte_pktmbuf_append(m, (uint16_t)(20 + thl + len));
	memset(ip, 0, 20 + thl);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + thl + len));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->src_addr = rte_cpu_to_be_32(0xC6120002);
	ip->dst_addr = rte_cpu_to_be_32(0xC6120001);
	th = (struct rte_tcp_hdr *)(ip + 1);
	th->src_port = rte_cpu_to_be_16(40000);
	th->dst_port = rte_cpu_to_be_16(5000);
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = rte_cpu_to_be_32(ack);
	th->data_off = (uint8_t)((thl / 4) << 4);
	th->tcp_flags = flags;
	th->rx_win = rte_cpu_to_be_16(win);
	memcpy(th + 1, opts, optlen);
	for (uint32_t i = 0; i < len; i++)
		((uint8_t *)th)[thl + i] = (uint8_t)(i * 7);
	th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	return m;
}

static void
drain(struct wn_tcp_ctx *ctx)
{
	struct rte_mbuf *pkts[64];
	uint16_t n;

	wn_tcp_process(ctx, now);
	while ((n = wn_tcp_tx_bulk(ctx, pkts, 64)) > 0)
		rte_pktmbuf_free_bulk(pkts, n);
}

static int
on_est(struct wn_tcp_conn *c, void *arg)
{
	(void)arg;
	conn = c;
	return 0;
}

static void
on_recv(struct wn_tcp_conn *c, void *arg)
{
	uint8_t buf[512];

	(void)arg;
	while (wn_tcp_recv(c, buf, sizeof(buf)) > 0)
		;
}

static void
on_closed(struct wn_tcp_conn *c, void *arg, enum wn_tcp_close_reason why)
{
	(void)c;
	(void)arg;
	(void)why;
	closed = 1;
	conn = NULL;
}

static const struct wn_tcp_cb cb = {
	.established = on_est, .recv = on_recv, .closed = on_closed,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t synopts[] = { 2, 4, 0x02, 0x00, 1, 3, 3, 2, 1, 1, 4, 2,
					   1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0 };
	struct wn_tcp_ctx_conf tc = { .pool = NULL, .max_conns = 8, .sndbuf = 16384,
				      .rcvbuf = 16384, .ooo_max = 4 };
	struct wn_tcp_endpoint l = { .addr = wn_ip_addr_v4(198, 18, 0, 1), .port = 5000 };
	struct wn_tcp_info ci;
	struct wn_tcp_ctx *ctx;
	struct rte_mbuf *m, *pkts[8];
	uint32_t peer = 1000, tsv = 2;
	uint8_t rec[400];
	size_t off = 0;
	uint16_t n;

	tc.pool = pool;
	tc.socket_id = SOCKET_ID_ANY;
	ctx = wn_tcp_ctx_create(&tc);
	if (ctx == NULL)
		abort();
	now = 1000000;
	conn = NULL;
	closed = 0;
	wn_tcp_listen(ctx, &l, &cb, NULL);
	m = craft(peer, 0, RTE_TCP_SYN_FLAG, 65535, synopts, sizeof(synopts), 0);
	wn_tcp_rx_bulk(ctx, &m, 1, now);
	n = wn_tcp_tx_bulk(ctx, pkts, 8);
	if (n != 1)
		abort();
	{
		struct rte_tcp_hdr *th = rte_pktmbuf_mtod_offset(pkts[0], struct rte_tcp_hdr *, 20);
		uint32_t siss = rte_be_to_cpu_32(th->sent_seq);
		uint8_t ts[12] = { 1, 1, 8, 10, 0, 0, 0, 2, 0, 0, 0, 0 };

		rte_pktmbuf_free(pkts[0]);
		m = craft(peer + 1, siss + 1, RTE_TCP_ACK_FLAG, 1024, ts, sizeof(ts), 0);
		wn_tcp_rx_bulk(ctx, &m, 1, now);
	}
	if (conn == NULL)
		abort();
	/* queued data in record mode: some sent, some waiting for window */
	wn_tcp_set_mode(conn, WN_TCP_MODE_RECORD);
	for (int i = 0; i < 20; i++) {
		uint8_t r[300];

		memset(r, i, sizeof(r));
		if (wn_tcp_send_record(conn, r, 100 + 10 * (uint32_t)i) != 0)
			break;
	}
	drain(ctx);
	while (off + 8 <= size && conn != NULL) {
		const uint8_t *d = data + off;
		uint8_t flags = d[0] & 0x3f, optlen = (uint8_t)(d[7] % 41);
		int16_t so = (int16_t)(d[2] << 8 | d[3]), ao = (int16_t)(d[4] << 8 | d[5]);
		uint32_t len = (uint8_t)so;

		if (off + 8 + optlen > size)
			break;
		memcpy(rec, d + 8, optlen);
		off += 8u + optlen;
		wn_tcp_conn_info(conn, &ci);
		now += (uint64_t)d[1] * 1000;
		tsv += d[1];
		m = craft(ci.rcv_nxt + (uint32_t)(int32_t)so, ci.snd_una + (uint32_t)(int32_t)ao,
			  flags, (uint16_t)(d[6] << 8), rec, optlen, len);
		wn_tcp_rx_bulk(ctx, &m, 1, now);
		drain(ctx);
		if (conn != NULL && (d[0] & 0x40))
			wn_tcp_close(conn);
		if (conn != NULL && (d[0] & 0x80)) {
			uint8_t r[64] = { 0 };

			wn_tcp_send_record(conn, r, sizeof(r));
		}
	}
	(void)tsv;
	now += 300ull * 1000000;
	drain(ctx);
	wn_tcp_ctx_free(ctx);
	return 0;
}
