/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the packet input path: one Ethernet frame through wn_net_rx_bulk
 * (Ethernet, ARP, IPv4 + reassembly, ICMP, IPv6, NDP) and whatever is handed up through
 * wn_tcp_rx_bulk (TCP header and option parsing, listener), then the tx paths.
 * Input: the frame. Counters may move; nothing may crash or leak.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "wn_net.h"
#include "wn_tcp.h"

static struct rte_mempool *pool;
static struct wn_netif *nif;
static struct wn_tcp_ctx *tcp;
static uint64_t now = 1000000;

static void drain(void);
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char *eal[] = { "fuzz", "--no-huge", "--no-shconf", "--no-pci", "-l", "0", "-m", "128",
			"--log-level", "*:error", NULL };
	struct wn_netif_conf nc = { 0 };
	struct wn_tcp_ctx_conf tc = { 0 };
	struct wn_ip_addr a;
	struct wn_tcp_endpoint l;

	(void)argc;
	(void)argv;
	if (rte_eal_init(10, eal) < 0)
		abort();
	pool = rte_pktmbuf_pool_create("fz", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL)
		abort();
	nc.pool = pool;
	nc.socket_id = SOCKET_ID_ANY;
	nc.mac.addr_bytes[0] = 0x02;
	nc.mac.addr_bytes[5] = 0x01;
	nc.frag_max_flows = 16;
	nif = wn_net_if_create(&nc);
	a = wn_ip_addr_v4(198, 18, 0, 1);
	wn_net_if_addr_add(nif, &a, 24);
	wn_net_addr_parse("2001:db8::1", &a, NULL);
	wn_net_if_addr_add(nif, &a, 64);
	tc.pool = pool;
	tc.socket_id = SOCKET_ID_ANY;
	tc.max_conns = 64;
	tcp = wn_tcp_ctx_create(&tc);
	if (nif == NULL || tcp == NULL)
		abort();
	l.addr = wn_ip_addr_v4(0, 0, 0, 0);
	l.port = 5000;
	wn_tcp_listen(tcp, &l, NULL, NULL);
	/* DAD of 2001:db8::1 and the link-local address passes (no answer); 2001:db8::3 is
	 * added after the start and stays tentative (its DAD never starts) */
	wn_net_start(nif, now);
	now += 3000000;
	drain();
	wn_net_addr_parse("2001:db8::3", &a, NULL);
	wn_net_if_addr_add(nif, &a, 64);
	return 0;
}

static void
drain(void)
{
	struct rte_mbuf *pkts[64];
	uint16_t n;

	wn_tcp_process(tcp, now);
	while ((n = wn_tcp_tx_bulk(tcp, pkts, 64)) > 0)
		wn_net_output_bulk(nif, pkts, n, now);
	wn_net_process(nif, now);
	while ((n = wn_net_tx_bulk(nif, pkts, 64)) > 0)
		rte_pktmbuf_free_bulk(pkts, n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rte_mbuf *m;
	uint16_t n;

	if (size > 2000)
		return 0;
	m = rte_pktmbuf_alloc(pool);
	if (m == NULL)
		abort();
	if (size > 0)
		memcpy(rte_pktmbuf_append(m, (uint16_t)size), data, size);
	n = wn_net_rx_bulk(nif, &m, 1, now);
	if (n > 0)
		wn_tcp_rx_bulk(tcp, &m, n, now);
	now += 1000000; /* let timers (neighbour, reassembly, SYN-RECEIVED) run and expire */
	drain();
	/*
	 * Every input starts from an empty table: run the clock until the connections this
	 * one opened (SYN-RECEIVED retransmissions, TIME-WAIT) have given up, so their buffers
	 * are freed before the input ends (libFuzzer's per-input leak check; the context's
	 * own rte_malloc memory is not scanned by LeakSanitizer).
	 */
	for (int i = 0; i < 64 && wn_tcp_conn_count(tcp) > 0; i++) {
		now += 10 * 1000000ull;
		drain();
	}
	drain();
	return 0;
}
