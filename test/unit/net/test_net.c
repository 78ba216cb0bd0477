/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/net: ARP (RFC 826) requests/replies/neighbour table/pending queue/expiry, gratuitous
 * ARP, IPv4 header checks, reassembly, ICMP echo, checksum offload vs software, MTU,
 * gateway, IPv6 NDP and echo. What breaks if this fails: anything reaching the wire.
 */
#define ALLOW_EXPERIMENTAL_API 1
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "wn_dpdk_compat.h"
#include "wn_net.h"

static struct rte_mempool *pool;
static const struct rte_ether_addr our_mac = { .addr_bytes = { 2, 0, 0, 0, 0, 1 } };
static const struct rte_ether_addr peer_mac = { .addr_bytes = { 2, 0, 0, 0, 0, 2 } };

static struct wn_netif *
mk(uint64_t txcapa, uint32_t frag_flows)
{
	struct wn_netif_conf c = { .pool = pool, .socket_id = SOCKET_ID_ANY, .mac = our_mac,
				   .tx_offload_capa = txcapa, .frag_max_flows = frag_flows,
				   .neigh_queue_len = 2, .dad_transmits = WN_NETIF_NO_DAD,
				   .no_link_local = true };
	struct wn_netif *n = wn_net_if_create(&c);
	struct wn_ip_addr a = wn_ip_addr_v4(198, 18, 0, 1), a6;

	assert_non_null(n);
	assert_int_equal(wn_net_if_addr_add(n, &a, 24), 0);
	assert_int_equal(wn_net_if_addr_add(n, &a, 24), -EEXIST);
	assert_int_equal(wn_net_addr_parse("2001:db8::1/64", &a6, NULL), 0);
	assert_int_equal(wn_net_if_addr_add(n, &a6, 64), 0);
	return n;
}

static struct wn_net_stats
st(struct wn_netif *n)
{
	struct wn_net_stats s;

	wn_net_stats_get(n, &s);
	return s;
}

static struct rte_mbuf *
frame(const struct rte_ether_addr *dst, uint16_t et, const void *payload, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct rte_ether_hdr *eh;

	assert_non_null(m);
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, (uint16_t)(sizeof(*eh) + len));
	eh->dst_addr = *dst;
	eh->src_addr = peer_mac;
	eh->ether_type = rte_cpu_to_be_16(et);
	memcpy(eh + 1, payload, len);
	return m;
}

static uint16_t
rx1(struct wn_netif *n, struct rte_mbuf **m)
{
	return wn_net_rx_bulk(n, m, 1, 1000000);
}

static struct rte_mbuf *
tx1(struct wn_netif *n)
{
	struct rte_mbuf *m = NULL;

	return wn_net_tx_bulk(n, &m, 1) == 1 ? m : NULL;
}

static void
arp_payload(struct rte_arp_hdr *ah, uint16_t op, const struct rte_ether_addr *sha, uint32_t sip,
	    uint32_t tip)
{
	memset(ah, 0, sizeof(*ah));
	ah->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	ah->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ah->arp_hlen = 6;
	ah->arp_plen = 4;
	ah->arp_opcode = rte_cpu_to_be_16(op);
	ah->arp_data.arp_sha = *sha;
	ah->arp_data.arp_sip = rte_cpu_to_be_32(sip);
	ah->arp_data.arp_tip = rte_cpu_to_be_32(tip);
}

#define IP_US 0xC6120001u   /* 198.18.0.1 */
#define IP_PEER 0xC6120002u /* 198.18.0.2 */

static void
test_arp_reply_and_learn(void **state)
{
	struct wn_netif *n = mk(0, 0);
	struct rte_arp_hdr ah;
	struct rte_mbuf *m;
	struct rte_ether_addr mac;
	struct wn_ip_addr peer = wn_ip_addr_v4(198, 18, 0, 2), other = wn_ip_addr_v4(198, 18, 0, 3);
	const struct rte_arp_hdr *r;
	static const struct rte_ether_addr bcast = { .addr_bytes = { 255, 255, 255, 255, 255, 255 } };
	(void)state;

	/* request for someone else: no reply, nothing learned */
	arp_payload(&ah, RTE_ARP_OP_REQUEST, &peer_mac, IP_PEER, 0xC6120009u);
	m = frame(&bcast, RTE_ETHER_TYPE_ARP, &ah, sizeof(ah));
	assert_int_equal(rx1(n, &m), 0);
	assert_null(tx1(n));
	assert_int_equal(wn_net_neigh_lookup(n, &peer, &mac), -ENOENT);
	/* request for us: reply and learn the sender */
	arp_payload(&ah, RTE_ARP_OP_REQUEST, &peer_mac, IP_PEER, IP_US);
	m = frame(&bcast, RTE_ETHER_TYPE_ARP, &ah, sizeof(ah));
	assert_int_equal(rx1(n, &m), 0);
	m = tx1(n);
	assert_non_null(m);
	r = rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *, 14);
	assert_int_equal(rte_be_to_cpu_16(r->arp_opcode), RTE_ARP_OP_REPLY);
	assert_memory_equal(&r->arp_data.arp_sha, &our_mac, 6);
	assert_int_equal(r->arp_data.arp_sip, rte_cpu_to_be_32(IP_US));
	assert_memory_equal(&r->arp_data.arp_tha, &peer_mac, 6);
	assert_int_equal(r->arp_data.arp_tip, rte_cpu_to_be_32(IP_PEER));
	assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), &peer_mac, 6);
	rte_pktmbuf_free(m);
	assert_int_equal(wn_net_neigh_lookup(n, &peer, &mac), 0);
	assert_memory_equal(&mac, &peer_mac, 6);
	assert_int_equal(wn_net_neigh_lookup(n, &other, &mac), -ENOENT);
	/* malformed: wrong hardware length */
	arp_payload(&ah, RTE_ARP_OP_REQUEST, &peer_mac, IP_PEER, IP_US);
	ah.arp_hlen = 8;
	m = frame(&bcast, RTE_ETHER_TYPE_ARP, &ah, sizeof(ah));
	rx1(n, &m);
	assert_int_equal(st(n).rx_drop_arp, 1);
	/* truncated */
	m = frame(&bcast, RTE_ETHER_TYPE_ARP, &ah, 10);
	rx1(n, &m);
	assert_int_equal(st(n).rx_drop_short, 1);
	wn_net_if_free(n);
}

static void
test_gratuitous_arp_on_start(void **state)
{
	struct wn_netif *n = mk(0, 0);
	struct rte_mbuf *m;
	const struct rte_arp_hdr *r;
	(void)state;

	assert_int_equal(wn_net_start(n, 0), 0);
	m = tx1(n);
	assert_non_null(m);
	assert_true(rte_is_broadcast_ether_addr(rte_pktmbuf_mtod(m, struct rte_ether_addr *)));
	r = rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *, 14);
	assert_int_equal(r->arp_data.arp_sip, rte_cpu_to_be_32(IP_US));
	assert_int_equal(r->arp_data.arp_tip, rte_cpu_to_be_32(IP_US));
	rte_pktmbuf_free(m);
	m = tx1(n); /* unsolicited NA for the IPv6 address */
	assert_non_null(m);
	assert_int_equal(rte_pktmbuf_mtod_offset(m, uint8_t *, 14 + 40)[0], 136);
	rte_pktmbuf_free(m);
	assert_int_equal(st(n).tx_garp, 2);
	wn_net_if_free(n);
}

static struct rte_mbuf *
l4_packet(const char *payload, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct rte_tcp_hdr *th;

	assert_non_null(m);
	if (rte_pktmbuf_append(m, (uint16_t)(20 + len)) == NULL)
		fail();
	th = rte_pktmbuf_mtod(m, struct rte_tcp_hdr *);
	th->sent_seq = 0;
	th->recv_ack = 0;
	th->tcp_flags = 0;
	th->rx_win = 0;
	th->cksum = 0;
	th->tcp_urp = 0;
	th->src_port = rte_cpu_to_be_16(1);
	th->dst_port = rte_cpu_to_be_16(2);
	th->data_off = 5 << 4;
	memcpy(th + 1, payload, len);
	return m;
}

static void
test_resolution_queue_and_failure(void **state)
{
	struct wn_netif *n = mk(0, 0);
	struct wn_ip_addr src = wn_ip_addr_v4(198, 18, 0, 1), dst = wn_ip_addr_v4(198, 18, 0, 2);
	struct rte_mbuf *m;
	struct rte_arp_hdr ah;
	const struct rte_ether_hdr *eh;
	uint64_t now = 1000000;
	(void)state;

	/* first packet triggers one request and waits; queue bound 2 */
	assert_int_equal(wn_net_output_l4(n, l4_packet("a", 1), &src, &dst, IPPROTO_TCP, now), 0);
	assert_int_equal(wn_net_output_l4(n, l4_packet("b", 1), &src, &dst, IPPROTO_TCP, now), 0);
	assert_int_equal(wn_net_output_l4(n, l4_packet("c", 1), &src, &dst, IPPROTO_TCP, now),
			 -ENOBUFS);
	assert_int_equal(st(n).tx_drop_neigh, 1);
	assert_int_equal(st(n).tx_arp_req, 1);
	m = tx1(n);
	assert_non_null(m);
	assert_int_equal(rte_be_to_cpu_16(rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->ether_type),
			 RTE_ETHER_TYPE_ARP);
	rte_pktmbuf_free(m);
	assert_null(tx1(n));
	assert_int_equal(wn_net_neigh_lookup(n, &dst, NULL), -EAGAIN);
	/* the reply releases both packets, addressed to the peer */
	arp_payload(&ah, RTE_ARP_OP_REPLY, &peer_mac, IP_PEER, IP_US);
	m = frame(&our_mac, RTE_ETHER_TYPE_ARP, &ah, sizeof(ah));
	rx1(n, &m);
	for (int i = 0; i < 2; i++) {
		const struct rte_ipv4_hdr *ip;

		m = tx1(n);
		assert_non_null(m);
		eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
		assert_memory_equal(&eh->dst_addr, &peer_mac, 6);
		ip = (const struct rte_ipv4_hdr *)(eh + 1);
		assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
		assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, ip + 1), 0);
		assert_int_equal(*((const char *)(ip + 1) + 20), 'a' + i);
		rte_pktmbuf_free(m);
	}
	/* the entry expires after its reachable time */
	wn_net_process(n, now + 299u * 1000000);
	assert_int_equal(wn_net_neigh_lookup(n, &dst, NULL), 0);
	wn_net_process(n, now + 301u * 1000000);
	assert_int_equal(wn_net_neigh_lookup(n, &dst, NULL), -ENOENT);
	/* nobody answers: 3 requests, then the entry and its queue are dropped */
	dst = wn_ip_addr_v4(198, 18, 0, 7);
	now += 302u * 1000000;
	assert_int_equal(wn_net_output_l4(n, l4_packet("x", 1), &src, &dst, IPPROTO_TCP, now), 0);
	for (int i = 1; i <= 5; i++)
		wn_net_process(n, now + (uint64_t)i * 1000001);
	assert_int_equal(wn_net_neigh_lookup(n, &dst, NULL), -ENOENT);
	assert_int_equal(st(n).tx_arp_req, 4);
	assert_int_equal(st(n).tx_drop_neigh, 2);
	while ((m = tx1(n)) != NULL)
		rte_pktmbuf_free(m);
	wn_net_if_free(n);
}

/* Output remembers the last next hop: a changed MAC, an expired or a reused entry and a new
 * route are all seen on the next packet. */
static void
test_next_hop_cache(void **state)
{
	static const struct rte_ether_addr mac2 = { .addr_bytes = { 2, 0, 0, 0, 0, 3 } };
	struct wn_netif *n = mk(0, 0);
	struct wn_ip_addr src = wn_ip_addr_v4(198, 18, 0, 1), dst = wn_ip_addr_v4(198, 18, 0, 2);
	struct wn_ip_addr far = wn_ip_addr_v4(203, 0, 113, 9), gw = wn_ip_addr_v4(198, 18, 0, 3);
	uint64_t now = 1000000;
	struct rte_mbuf *m;
	(void)state;

	/* resolved: sent to its MAC; the MAC changes: the next packet follows */
	wn_net_neigh_add(n, &dst, &peer_mac, false, now);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(wn_net_output_l4(n, l4_packet("a", 1), &src, &dst, IPPROTO_TCP,
						  now), 0);
		m = tx1(n);
		assert_memory_equal(&rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->dst_addr,
				    i == 0 ? &peer_mac : &mac2, 6);
		rte_pktmbuf_free(m);
		wn_net_neigh_add(n, &dst, &mac2, false, now);
	}
	/* expired: the next packet waits for resolution (one request goes out) */
	wn_net_process(n, now + 301u * 1000000);
	assert_int_equal(wn_net_neigh_lookup(n, &dst, NULL), -ENOENT);
	assert_int_equal(wn_net_output_l4(n, l4_packet("b", 1), &src, &dst, IPPROTO_TCP,
					  now + 302u * 1000000), 0);
	assert_int_equal(st(n).tx_arp_req, 1);
	m = tx1(n);
	assert_int_equal(rte_be_to_cpu_16(rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->ether_type),
			 RTE_ETHER_TYPE_ARP);
	rte_pktmbuf_free(m);
	assert_null(tx1(n));
	/* off-link: no route until a gateway is set, then the gateway's MAC */
	wn_net_neigh_add(n, &gw, &mac2, true, now);
	assert_int_equal(wn_net_output_l4(n, l4_packet("c", 1), &src, &far, IPPROTO_TCP, now),
			 -ENETUNREACH);
	assert_int_equal(wn_net_if_gateway_set(n, &gw), 0);
	assert_int_equal(wn_net_output_l4(n, l4_packet("c", 1), &src, &far, IPPROTO_TCP, now), 0);
	m = tx1(n);
	assert_memory_equal(&rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->dst_addr, &mac2, 6);
	rte_pktmbuf_free(m);
	wn_net_if_free(n);
}

static void
test_gateway_mtu_noroute(void **state)
{
	struct wn_netif *n = mk(0, 0);
	struct wn_ip_addr src = wn_ip_addr_v4(198, 18, 0, 1), far = wn_ip_addr_v4(10, 1, 2, 3);
	struct wn_ip_addr gw = wn_ip_addr_v4(198, 18, 0, 254);
	struct rte_ether_addr gwmac = { .addr_bytes = { 2, 0, 0, 0, 0, 0xfe } };
	struct rte_mbuf *m;
	char big[1500];
	(void)state;

	assert_int_equal(wn_net_output_l4(n, l4_packet("a", 1), &src, &far, IPPROTO_TCP, 0),
			 -ENETUNREACH);
	assert_int_equal(st(n).tx_drop_noroute, 1);
	assert_int_equal(wn_net_if_gateway_set(n, &gw), 0);
	assert_int_equal(wn_net_neigh_add(n, &gw, &gwmac, true, 0), 0);
	assert_int_equal(wn_net_output_l4(n, l4_packet("a", 1), &src, &far, IPPROTO_TCP, 0), 0);
	m = tx1(n);
	assert_non_null(m);
	assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), &gwmac, 6);
	rte_pktmbuf_free(m);
	/* never fragment: 20 + 20 + 1500 > 1500 */
	memset(big, 0, sizeof(big));
	assert_int_equal(wn_net_output_l4(n, l4_packet(big, 1500), &src, &far, IPPROTO_TCP, 0),
			 -EMSGSIZE);
	assert_int_equal(st(n).tx_drop_mtu, 1);
	wn_net_if_free(n);
}

static void
test_checksum_offload_vs_software(void **state)
{
	struct wn_netif *hw = mk(RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM, 0);
	struct wn_netif *sw = mk(0, 0);
	struct wn_ip_addr src = wn_ip_addr_v4(198, 18, 0, 1), dst = wn_ip_addr_v4(198, 18, 0, 2);
	struct rte_mbuf *m;
	struct rte_ipv4_hdr *ip;
	struct rte_tcp_hdr *th;
	(void)state;

	wn_net_neigh_add(hw, &dst, &peer_mac, true, 0);
	wn_net_neigh_add(sw, &dst, &peer_mac, true, 0);
	wn_net_output_l4(hw, l4_packet("hello", 5), &src, &dst, IPPROTO_TCP, 0);
	m = tx1(hw);
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);
	th = (struct rte_tcp_hdr *)(ip + 1);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM);
	assert_int_equal(m->l2_len, 14);
	assert_int_equal(m->l3_len, 20);
	assert_int_equal(ip->hdr_checksum, 0);
	assert_int_equal(th->cksum, rte_ipv4_phdr_cksum(ip, m->ol_flags));
	rte_pktmbuf_free(m);
	wn_net_output_l4(sw, l4_packet("hello", 5), &src, &dst, IPPROTO_TCP, 0);
	m = tx1(sw);
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);
	assert_int_equal(m->ol_flags & (RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM), 0);
	assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
	assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, ip + 1), 0);
	assert_int_equal(rte_be_to_cpu_16(ip->fragment_offset), RTE_IPV4_HDR_DF_FLAG);
	rte_pktmbuf_free(m);
	wn_net_if_free(hw);
	wn_net_if_free(sw);
}

/*
 * A TCP segment whose checksum comes out as 0x0000: the payload's first word is chosen so
 * that the one's complement sum of pseudo header and segment is 0xffff. @p v6: IPv6.
 */
static struct rte_mbuf *
zero_sum_segment(bool v6, const struct wn_ip_addr *src, const struct wn_ip_addr *dst)
{
	struct rte_mbuf *m = l4_packet("\0\0zero-sum", 10);
	struct rte_tcp_hdr *th = rte_pktmbuf_mtod(m, struct rte_tcp_hdr *);
	uint16_t raw = 0, fix;
	uint32_t sum;

	assert_int_equal(rte_raw_cksum_mbuf(m, 0, 30, &raw), 0);
	if (v6) {
		struct rte_ipv6_hdr ip6 = { .payload_len = rte_cpu_to_be_16(30),
					    .proto = IPPROTO_TCP };

		memcpy(WN_IP6_SRC(&ip6), src->v6, 16);
		memcpy(WN_IP6_DST(&ip6), dst->v6, 16);
		sum = (uint32_t)raw + rte_ipv6_phdr_cksum(&ip6, 0);
	} else {
		struct rte_ipv4_hdr ip = { .version_ihl = RTE_IPV4_VHL_DEF,
					   .total_length = rte_cpu_to_be_16(50),
					   .next_proto_id = IPPROTO_TCP,
					   .src_addr = src->v4, .dst_addr = dst->v4 };

		sum = (uint32_t)raw + rte_ipv4_phdr_cksum(&ip, 0);
	}
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	fix = (uint16_t)~sum; /* the word that brings the sum to 0xffff */
	memcpy(th + 1, &fix, 2);
	return m;
}

/*
 * RFC 9293 §3.1: a TCP checksum that computes to 0x0000 is sent as 0x0000. Writing 0xffff
 * instead (RFC 768's rule, for UDP only) still verifies, but it is not what TCP computes:
 * tshark flags it and a bit-exact comparison (offload engines, middleboxes) sees a
 * different segment. And the received 0x0000 is a valid checksum, not "no checksum".
 */
static void
test_tcp_checksum_zero_is_sent_as_zero(void **state)
{
	struct wn_netif *sw = mk(0, 0);
	struct wn_ip_addr src = wn_ip_addr_v4(198, 18, 0, 1), dst = wn_ip_addr_v4(198, 18, 0, 2);
	struct wn_ip_addr src6, dst6;
	struct rte_mbuf *m;
	struct rte_ipv4_hdr *ip;
	struct rte_ipv6_hdr *ip6;
	struct rte_tcp_hdr *th;
	(void)state;

	assert_int_equal(wn_net_addr_parse("2001:db8::1", &src6, NULL), 0);
	assert_int_equal(wn_net_addr_parse("2001:db8::2", &dst6, NULL), 0);
	wn_net_neigh_add(sw, &dst, &peer_mac, true, 0);
	wn_net_neigh_add(sw, &dst6, &peer_mac, true, 0);
	/* IPv4 */
	assert_int_equal(wn_net_output_l4(sw, zero_sum_segment(false, &src, &dst), &src, &dst,
					  IPPROTO_TCP, 0), 0);
	m = tx1(sw);
	assert_non_null(m);
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);
	th = (struct rte_tcp_hdr *)(ip + 1);
	assert_int_equal(th->cksum, 0x0000);
	assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, th), 0);
	rte_pktmbuf_free(m);
	/* IPv6 */
	assert_int_equal(wn_net_output_l4(sw, zero_sum_segment(true, &src6, &dst6), &src6, &dst6,
					  IPPROTO_TCP, 0), 0);
	m = tx1(sw);
	assert_non_null(m);
	ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, 14);
	th = (struct rte_tcp_hdr *)(ip6 + 1);
	assert_int_equal(th->cksum, 0x0000);
	assert_int_equal(rte_ipv6_udptcp_cksum_verify(ip6, th), 0);
	rte_pktmbuf_free(m);
	/* an ordinary segment keeps a checksum that verifies (and is never 0xffff) */
	assert_int_equal(wn_net_output_l4(sw, l4_packet("hello", 5), &src, &dst, IPPROTO_TCP, 0),
			 0);
	m = tx1(sw);
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);
	th = (struct rte_tcp_hdr *)(ip + 1);
	assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, th), 0);
	assert_int_not_equal(th->cksum, 0xffff);
	rte_pktmbuf_free(m);
	wn_net_if_free(sw);
}

static uint16_t
ip4_build(uint8_t *b, uint8_t proto, uint32_t dst, const void *l4, uint16_t l4len,
	  uint16_t frag, uint16_t id)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)b;

	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(20 + l4len));
	ip->packet_id = rte_cpu_to_be_16(id);
	ip->fragment_offset = rte_cpu_to_be_16(frag);
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->src_addr = rte_cpu_to_be_32(IP_PEER);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	memcpy(b + 20, l4, l4len);
	return (uint16_t)(20 + l4len);
}

static void
test_ipv4_header_checks(void **state)
{
	struct wn_netif *n = mk(0, 0);
	uint8_t b[200], tcp[40];
	struct rte_mbuf *m;
	uint16_t len;
	(void)state;

	memset(tcp, 0, sizeof(tcp));
	tcp[12] = 5 << 4;
	/* good TCP: handed up, Ethernet padding trimmed, data offset at IP */
	len = ip4_build(b, IPPROTO_TCP, IP_US, tcp, 20, 0, 1);
	memset(b + len, 0xee, 10);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, (uint16_t)(len + 10));
	assert_int_equal(rx1(n, &m), 1);
	assert_int_equal(rte_pktmbuf_pkt_len(m), 40);
	assert_int_equal(m->l3_len, 20);
	assert_int_equal(m->packet_type, RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP);
	rte_pktmbuf_free(m);
	/* bad header checksum */
	len = ip4_build(b, IPPROTO_TCP, IP_US, tcp, 20, 0, 1);
	b[10] ^= 1;
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(st(n).rx_drop_ip_cksum, 1);
	/* ... unless the NIC already vouched for it */
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD;
	assert_int_equal(rx1(n, &m), 1);
	rte_pktmbuf_free(m);
	/* total length beyond the frame */
	len = ip4_build(b, IPPROTO_TCP, IP_US, tcp, 20, 0, 1);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, (uint16_t)(len - 4));
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(st(n).rx_drop_ip_hdr, 1);
	/* not our address */
	len = ip4_build(b, IPPROTO_TCP, IP_US + 5, tcp, 20, 0, 1);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(st(n).rx_drop_ip_addr, 1);
	/* unknown protocol */
	len = ip4_build(b, 99, IP_US, tcp, 20, 0, 1);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(st(n).rx_drop_ip_proto, 1);
	/* foreign MAC, unknown ethertype, runt */
	{
		struct rte_ether_addr o = { .addr_bytes = { 2, 9, 9, 9, 9, 9 } };

		m = frame(&o, RTE_ETHER_TYPE_IPV4, b, len);
		rx1(n, &m);
		m = frame(&our_mac, 0x88b5, b, len);
		rx1(n, &m);
		m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, 5);
		rx1(n, &m);
		assert_int_equal(st(n).rx_drop_mac, 1);
		assert_int_equal(st(n).rx_drop_ethertype, 1);
		assert_int_equal(st(n).rx_drop_short, 1);
	}
	wn_net_if_free(n);
}

/*
 * WN_NET_CKSUM_LOCAL (a link that cannot corrupt, e.g. memif): sent segments carry the
 * pseudo-header sum and the offload flag, as for a NIC; a received segment carrying its
 * pseudo-header sum is marked good, any other sum is left to TCP to verify. A netif in
 * software mode (and the default on a port that is not memif) marks nothing.
 */
static void
test_local_link_checksums(void **state)
{
	struct wn_netif_conf c = { .pool = pool, .socket_id = SOCKET_ID_ANY, .mac = our_mac,
				   .cksum = WN_NET_CKSUM_LOCAL };
	struct wn_ip_addr src = wn_ip_addr_v4(198, 18, 0, 1), dst = wn_ip_addr_v4(198, 18, 0, 2);
	struct wn_ip_addr src6, dst6;
	struct wn_netif *ln, *sw = mk(0, 0);
	uint8_t b[200], tcp[40];
	struct rte_ipv4_hdr *ip;
	struct rte_ipv6_hdr *ip6;
	struct rte_tcp_hdr *th;
	struct rte_mbuf *m;
	uint16_t len, phdr;
	(void)state;

	c.cksum = (enum wn_net_cksum)7;
	assert_null(wn_net_if_create(&c));
	c.cksum = WN_NET_CKSUM_LOCAL;
	ln = wn_net_if_create(&c);
	assert_non_null(ln);
	assert_int_equal(wn_net_if_addr_add(ln, &src, 24), 0);
	assert_int_equal(wn_net_addr_parse("2001:db8::1", &src6, NULL), 0);
	assert_int_equal(wn_net_addr_parse("2001:db8::2", &dst6, NULL), 0);
	assert_int_equal(wn_net_if_addr_add(ln, &src6, 64), 0);
	wn_net_neigh_add(ln, &dst, &peer_mac, true, 0);
	wn_net_neigh_add(ln, &dst6, &peer_mac, true, 0);
	/* transmit: IPv4 header summed in software, TCP left at the pseudo-header sum */
	assert_int_equal(wn_net_output_l4(ln, l4_packet("hello", 5), &src, &dst, IPPROTO_TCP, 0),
			 0);
	m = tx1(ln);
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);
	th = (struct rte_tcp_hdr *)(ip + 1);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM);
	assert_false(m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM);
	assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
	assert_int_equal(th->cksum, rte_ipv4_phdr_cksum(ip, 0));
	rte_pktmbuf_free(m);
	assert_int_equal(wn_net_output_l4(ln, l4_packet("hello", 5), &src6, &dst6, IPPROTO_TCP,
					  0), 0);
	m = tx1(ln);
	ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, 14);
	th = (struct rte_tcp_hdr *)(ip6 + 1);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM);
	assert_int_equal(th->cksum, rte_ipv6_phdr_cksum(ip6, 0));
	rte_pktmbuf_free(m);
	/* receive: the pseudo-header sum is vouched for on the local link only */
	memset(tcp, 0, sizeof(tcp));
	tcp[12] = 5 << 4;
	memcpy(tcp + 20, "payload!", 8);
	len = ip4_build(b, IPPROTO_TCP, IP_US, tcp, 28, 0, 1);
	phdr = rte_ipv4_phdr_cksum((struct rte_ipv4_hdr *)b, 0);
	memcpy(b + 20 + 16, &phdr, 2);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	assert_int_equal(rx1(ln, &m), 1);
	assert_int_equal(m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK, RTE_MBUF_F_RX_L4_CKSUM_GOOD);
	rte_pktmbuf_free(m);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	assert_int_equal(rx1(sw, &m), 1);
	assert_int_equal(m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK, 0);
	rte_pktmbuf_free(m);
	/* a full sum (a peer that computes it), right or corrupted, is TCP's to verify */
	memset(b + 20 + 16, 0, 2);
	phdr = rte_ipv4_udptcp_cksum((struct rte_ipv4_hdr *)b, b + 20);
	memcpy(b + 20 + 16, &phdr, 2);
	b[20 + 24] ^= 0x40;
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	assert_int_equal(rx1(ln, &m), 1);
	assert_int_equal(m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK, 0);
	rte_pktmbuf_free(m);
	wn_net_if_free(ln);
	wn_net_if_free(sw);
}

/* The microsecond clock agrees with cycles / hz (no overflow, no drift) and never goes back. */
static void
test_now_us(void **state)
{
	uint64_t a = wn_net_now_us();
	long double ref = (long double)rte_get_timer_cycles() * 1e6L / rte_get_timer_hz();
	uint64_t b = wn_net_now_us();
	(void)state;

	assert_true(b >= a);
	assert_true(ref >= (long double)a - 1 && ref <= (long double)b + 1);
}

static void
test_icmp_echo_reply(void **state)
{
	struct wn_netif *n = mk(0, 0);
	uint8_t b[200], icmp[40];
	struct rte_icmp_hdr *ic = (struct rte_icmp_hdr *)icmp;
	struct rte_mbuf *m;
	const struct rte_ipv4_hdr *ip;
	const struct rte_icmp_hdr *r;
	uint16_t len;
	(void)state;

	memset(icmp, 0, sizeof(icmp));
	ic->icmp_type = RTE_ICMP_TYPE_ECHO_REQUEST;
	ic->icmp_ident = rte_cpu_to_be_16(77);
	ic->icmp_seq_nb = rte_cpu_to_be_16(3);
	memcpy(icmp + 8, "payload-payload-payload-payload!", 32);
	ic->icmp_cksum = (uint16_t)~rte_raw_cksum(icmp, sizeof(icmp));
	len = ip4_build(b, IPPROTO_ICMP, IP_US, icmp, sizeof(icmp), 0, 5);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	assert_int_equal(rx1(n, &m), 0);
	m = tx1(n);
	assert_non_null(m);
	assert_memory_equal(rte_pktmbuf_mtod(m, uint8_t *), &peer_mac, 6);
	ip = rte_pktmbuf_mtod_offset(m, const struct rte_ipv4_hdr *, 14);
	assert_int_equal(ip->src_addr, rte_cpu_to_be_32(IP_US));
	assert_int_equal(ip->dst_addr, rte_cpu_to_be_32(IP_PEER));
	assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
	r = (const struct rte_icmp_hdr *)(ip + 1);
	assert_int_equal(r->icmp_type, RTE_ICMP_TYPE_ECHO_REPLY);
	assert_int_equal(r->icmp_ident, rte_cpu_to_be_16(77));
	assert_int_equal(rte_raw_cksum(r, sizeof(icmp)), 0xffff);
	assert_memory_equal((const uint8_t *)r + 8, icmp + 8, 32);
	rte_pktmbuf_free(m);
	assert_int_equal(st(n).rx_icmp_echo, 1);
	/* a corrupted echo is dropped, not answered */
	icmp[20] ^= 0xff;
	len = ip4_build(b, IPPROTO_ICMP, IP_US, icmp, sizeof(icmp), 0, 6);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	rx1(n, &m);
	assert_null(tx1(n));
	assert_int_equal(st(n).rx_drop_icmp, 1);
	wn_net_if_free(n);
}

static void
test_fragments_reassembled_or_dropped(void **state)
{
	struct wn_netif *n = mk(0, 16), *off = mk(0, WN_NETIF_NO_REASSEMBLY);
	uint8_t tcp[60], b[200];
	struct rte_mbuf *m;
	uint16_t len;
	uint8_t out[60];
	(void)state;

	for (unsigned int i = 0; i < sizeof(tcp); i++)
		tcp[i] = (uint8_t)i;
	tcp[12] = 5 << 4;
	/* second half first: reassembly copes with order */
	len = ip4_build(b, IPPROTO_TCP, IP_US, tcp + 24, 36, 24 / 8, 42);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	assert_int_equal(rx1(n, &m), 0);
	len = ip4_build(b, IPPROTO_TCP, IP_US, tcp, 24, RTE_IPV4_HDR_MF_FLAG, 42);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	assert_int_equal(rx1(n, &m), 1);
	assert_int_equal(rte_pktmbuf_pkt_len(m), 20 + 60);
	assert_non_null(rte_pktmbuf_read(m, 20, 60, out));
	assert_memory_equal(rte_pktmbuf_read(m, 20, 60, out), tcp, 60);
	rte_pktmbuf_free(m);
	assert_int_equal(st(n).rx_frag, 2);
	assert_int_equal(st(n).rx_reassembled, 1);
	/* reassembly disabled: dropped with a counter */
	len = ip4_build(b, IPPROTO_TCP, IP_US, tcp, 24, RTE_IPV4_HDR_MF_FLAG, 43);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	assert_int_equal(rx1(off, &m), 0);
	assert_int_equal(st(off).rx_frag_drop, 1);
	wn_net_if_free(n);
	wn_net_if_free(off);
}

/* What a hook saw (wn_net_if_proto_rx). */
static struct {
	unsigned int calls;
	uint32_t l3_len, ptype, len;
	uint8_t first;
} seen;

static void
hook_rx(void *arg, struct rte_mbuf *m, uint64_t now)
{
	assert_ptr_equal(arg, &seen);
	assert_int_equal(now, 1000000);
	seen.calls++;
	seen.l3_len = m->l3_len;
	seen.ptype = m->packet_type;
	seen.len = rte_pktmbuf_pkt_len(m);
	seen.first = *rte_pktmbuf_mtod(m, uint8_t *);
	rte_pktmbuf_free(m);
}

/*
 * IP protocols other than TCP/ICMP (SCTP for DDP over SCTP): a hook takes them, IPv4 after
 * reassembly and IPv6; without one they are dropped and counted; they go out through
 * wn_net_output_l4 with no L4 checksum written.
 */
static void
test_proto_hook(void **state)
{
	struct wn_netif *n = mk(0, 16);
	uint8_t b[200], pl[60], out[60];
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)b;
	struct wn_ip_addr me, peer;
	struct rte_mbuf *m;
	uint16_t len;
	(void)state;

	for (unsigned int i = 0; i < sizeof(pl); i++)
		pl[i] = (uint8_t)(0xa0 + i);
	assert_int_equal(wn_net_if_proto_rx(n, IPPROTO_TCP, hook_rx, &seen), -EINVAL);
	assert_int_equal(wn_net_if_proto_rx(n, IPPROTO_ICMP, hook_rx, &seen), -EINVAL);
	assert_int_equal(wn_net_if_proto_rx(n, IPPROTO_ICMPV6, hook_rx, &seen), -EINVAL);
	/* no hook: dropped */
	len = ip4_build(b, IPPROTO_SCTP, IP_US, pl, 40, 0, 1);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(st(n).rx_drop_ip_proto, 1);
	/* hooked: the IP header at the data offset, Ethernet padding gone */
	assert_int_equal(wn_net_if_proto_rx(n, IPPROTO_SCTP, hook_rx, &seen), 0);
	memset(b + len, 0xee, 6);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, (uint16_t)(len + 6));
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(seen.calls, 1);
	assert_int_equal(seen.l3_len, 20);
	assert_int_equal(seen.len, 60);
	assert_int_equal(seen.first, 0x45);
	assert_int_equal(seen.ptype, RTE_PTYPE_L3_IPV4);
	assert_int_equal(st(n).rx_proto, 1);
	assert_int_equal(st(n).rx_l4, 0);
	/* fragments are reassembled first */
	len = ip4_build(b, IPPROTO_SCTP, IP_US, pl + 24, 36, 24 / 8, 7);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	assert_int_equal(rx1(n, &m), 0);
	len = ip4_build(b, IPPROTO_SCTP, IP_US, pl, 24, RTE_IPV4_HDR_MF_FLAG, 7);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV4, b, len);
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(seen.calls, 2);
	assert_int_equal(seen.len, 80);
	/* IPv6 */
	assert_int_equal(wn_net_addr_parse("2001:db8::1", &me, NULL), 0);
	assert_int_equal(wn_net_addr_parse("2001:db8::2", &peer, NULL), 0);
	memset(ip6, 0, sizeof(*ip6));
	ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip6->payload_len = rte_cpu_to_be_16(40);
	ip6->proto = IPPROTO_SCTP;
	ip6->hop_limits = 64;
	memcpy(WN_IP6_SRC(ip6), peer.v6, 16);
	memcpy(WN_IP6_DST(ip6), me.v6, 16);
	memcpy(ip6 + 1, pl, 40);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV6, b, 80);
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(seen.calls, 3);
	assert_int_equal(seen.l3_len, 40);
	assert_int_equal(seen.ptype, RTE_PTYPE_L3_IPV6);
	/* unhooked again */
	assert_int_equal(wn_net_if_proto_rx(n, IPPROTO_SCTP, NULL, NULL), 0);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV6, b, 80);
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(seen.calls, 3);
	assert_int_equal(st(n).rx_drop_ip_proto, 2);
	/* at most WN_NETIF_MAX_PROTO_HOOKS protocols */
	for (uint8_t p = 0; p < WN_NETIF_MAX_PROTO_HOOKS; p++)
		assert_int_equal(wn_net_if_proto_rx(n, (uint8_t)(200 + p), hook_rx, &seen), 0);
	assert_int_equal(wn_net_if_proto_rx(n, IPPROTO_SCTP, hook_rx, &seen), -ENOSPC);
	/* out: the payload leaves as given (lib/net sums TCP's checksum only) */
	assert_int_equal(wn_net_neigh_add(n, &(struct wn_ip_addr){.family = WN_AF_INET,
				.v4 = rte_cpu_to_be_32(IP_PEER)}, &peer_mac, true, 0), 0);
	m = rte_pktmbuf_alloc(pool);
	memcpy(rte_pktmbuf_append(m, 60), pl, 60);
	assert_int_equal(wn_net_output_l4(n, m, &(struct wn_ip_addr){.family = WN_AF_INET,
				.v4 = rte_cpu_to_be_32(IP_US)},
			 &(struct wn_ip_addr){.family = WN_AF_INET, .v4 = rte_cpu_to_be_32(IP_PEER)},
			 IPPROTO_SCTP, 0), 0);
	m = tx1(n);
	assert_non_null(m);
	assert_int_equal(rte_pktmbuf_pkt_len(m), 14 + 20 + 60);
	assert_int_equal(((const uint8_t *)rte_pktmbuf_read(m, 14 + 9, 1, out))[0], IPPROTO_SCTP);
	assert_memory_equal(rte_pktmbuf_read(m, 14 + 20, 60, out), pl, 60);
	rte_pktmbuf_free(m);
	wn_net_if_free(n);
}

static uint16_t
icmp6_cksum(const uint8_t *src, const uint8_t *dst, uint8_t *msg, uint16_t len)
{
	struct rte_ipv6_hdr ip6;

	memset(&ip6, 0, sizeof(ip6));
	ip6.payload_len = rte_cpu_to_be_16(len);
	ip6.proto = IPPROTO_ICMPV6;
	memcpy(WN_IP6_SRC(&ip6), src, 16);
	memcpy(WN_IP6_DST(&ip6), dst, 16);
	msg[2] = msg[3] = 0;
	return rte_ipv6_udptcp_cksum(&ip6, msg);
}

/* What a UDP port's function saw (wn_net_udp_bind). */
static struct {
	unsigned int calls;
	struct wn_net_udp_info info;
	uint32_t l3_len, l4_len;
	uint8_t data[64];
} useen;

static void
udp_rx(void *arg, struct rte_mbuf *m, const struct wn_net_udp_info *info, uint64_t now)
{
	assert_ptr_equal(arg, &useen);
	(void)now;
	useen.calls++;
	useen.info = *info;
	useen.l3_len = m->l3_len;
	useen.l4_len = m->l4_len;
	assert_true(info->len <= sizeof(useen.data));
	assert_int_equal(rte_pktmbuf_pkt_len(m), m->l3_len + 8 + info->len);
	memcpy(useen.data, rte_pktmbuf_read(m, m->l3_len + 8, info->len, useen.data), info->len);
	rte_pktmbuf_free(m);
}

/* A UDP datagram from @p src:4000 to @p dst:@p dport built by wn_net_udp_prepend, as a frame. */
static struct rte_mbuf *
udp_frame(const struct wn_ip_addr *src, const struct wn_ip_addr *dst, uint16_t dport,
	  const void *pl, uint16_t len, bool chain)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool), *f;
	struct rte_ether_hdr *eh;

	assert_non_null(m);
	if (chain && len > 1) {
		/* an odd first piece in one segment, the rest in a second: the sum over chains */
		struct rte_mbuf *t = rte_pktmbuf_alloc(pool);

		memcpy(rte_pktmbuf_append(m, 1), pl, 1);
		memcpy(rte_pktmbuf_append(t, (uint16_t)(len - 1)), (const uint8_t *)pl + 1,
		       len - 1u);
		assert_int_equal(rte_pktmbuf_chain(m, t), 0);
	} else if (len > 0) {
		memcpy(rte_pktmbuf_append(m, len), pl, len);
	}
	assert_int_equal(wn_net_udp_prepend(NULL, m, src, 4000, dst, dport, 0x28, 0), 0);
	/* what the wire carries: one contiguous frame */
	f = rte_pktmbuf_copy(m, pool, 0, UINT32_MAX);
	rte_pktmbuf_free(m);
	assert_non_null(f);
	if (f->nb_segs > 1)
		assert_int_equal(rte_pktmbuf_linearize(f), 0);
	eh = (struct rte_ether_hdr *)rte_pktmbuf_prepend(f, sizeof(*eh));
	eh->dst_addr = our_mac;
	eh->src_addr = peer_mac;
	eh->ether_type = rte_cpu_to_be_16(src->family == WN_AF_INET ? RTE_ETHER_TYPE_IPV4 :
							       RTE_ETHER_TYPE_IPV6);
	return f;
}

/*
 * UDP (RFC 768): datagrams to a bound port reach its function with the IP header's addresses,
 * TTL and traffic class; the checksum is built right over chains (odd segments) and IPv6,
 * checked on receipt; unbound ports, bad sums, IPv6 without a sum and a short UDP length are
 * dropped and counted; the last port unbound drops protocol 17 again.
 */
static void
test_udp(void **state)
{
	struct wn_netif *n = mk(0, 16);
	struct wn_ip_addr me = wn_ip_addr_v4(198, 18, 0, 1), peer = wn_ip_addr_v4(198, 18, 0, 2);
	struct wn_ip_addr me6, peer6;
	uint8_t pl[33], out[64];
	struct rte_mbuf *m;
	uint8_t *p;
	(void)state;

	for (unsigned int i = 0; i < sizeof(pl); i++)
		pl[i] = (uint8_t)(0x30 + i);
	assert_int_equal(wn_net_addr_parse("2001:db8::1", &me6, NULL), 0);
	assert_int_equal(wn_net_addr_parse("2001:db8::2", &peer6, NULL), 0);
	/* nothing bound: protocol 17 is not served */
	m = udp_frame(&peer, &me, 4793, pl, sizeof(pl), false);
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(st(n).rx_drop_ip_proto, 1);
	assert_int_equal(wn_net_udp_bind(n, 4793, udp_rx, &useen), 0);
	assert_int_equal(wn_net_udp_bind(n, 4793, udp_rx, &useen), -EEXIST);
	assert_int_equal(wn_net_udp_bind(n, 9, NULL, NULL), -ENOENT);
	/* IPv4, single and chained payload */
	for (int chain = 0; chain < 2; chain++) {
		m = udp_frame(&peer, &me, 4793, pl, sizeof(pl), chain);
		assert_int_equal(rx1(n, &m), 0);
		assert_int_equal(useen.calls, 1u + (unsigned int)chain);
		assert_true(wn_ip_addr_eq(&useen.info.src, &peer));
		assert_true(wn_ip_addr_eq(&useen.info.dst, &me));
		assert_int_equal(useen.info.sport, 4000);
		assert_int_equal(useen.info.dport, 4793);
		assert_int_equal(useen.info.ttl, 64);
		assert_int_equal(useen.info.tclass, 0x28);
		assert_int_equal(useen.info.len, sizeof(pl));
		assert_int_equal(useen.l3_len, 20);
		assert_int_equal(useen.l4_len, 8);
		assert_memory_equal(useen.data, pl, sizeof(pl));
	}
	/* the sum is DPDK's (RFC 768) */
	m = udp_frame(&peer, &me, 4793, pl, sizeof(pl), true);
	p = rte_pktmbuf_mtod_offset(m, uint8_t *, 14);
	{
		struct rte_udp_hdr *uh = (struct rte_udp_hdr *)(p + 20);
		uint16_t got = uh->dgram_cksum;

		uh->dgram_cksum = 0;
		assert_int_equal(got, rte_ipv4_udptcp_cksum((struct rte_ipv4_hdr *)p, uh));
		assert_int_equal(rte_ipv4_cksum((struct rte_ipv4_hdr *)p), 0);
		uh->dgram_cksum = got;
		/* a flipped payload octet: dropped */
		p[20 + 8 + 3] ^= 0x40;
	}
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(st(n).rx_drop_udp, 1);
	/* a UDP length beyond the IP payload: dropped */
	m = udp_frame(&peer, &me, 4793, pl, sizeof(pl), false);
	p = rte_pktmbuf_mtod_offset(m, uint8_t *, 14 + 20 + 4);
	p[1] += 1;
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(st(n).rx_drop_udp, 2);
	/* IPv4 without a sum (0) is taken */
	m = udp_frame(&peer, &me, 4793, pl, sizeof(pl), false);
	p = rte_pktmbuf_mtod_offset(m, uint8_t *, 14 + 20 + 6);
	p[0] = p[1] = 0;
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(useen.calls, 3);
	/* another port: dropped */
	m = udp_frame(&peer, &me, 4794, pl, sizeof(pl), false);
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(st(n).rx_drop_udp_port, 1);
	/* IPv6: traffic class, a zero-length datagram; no sum is refused (RFC 8200 §8.1) */
	m = udp_frame(&peer6, &me6, 4793, pl, 0, false);
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(useen.calls, 4);
	assert_true(wn_ip_addr_eq(&useen.info.src, &peer6));
	assert_int_equal(useen.info.tclass, 0x28);
	assert_int_equal(useen.info.len, 0);
	assert_int_equal(useen.l3_len, 40);
	m = udp_frame(&peer6, &me6, 4793, pl, 7, true);
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(useen.calls, 5);
	assert_memory_equal(useen.data, pl, 7);
	m = udp_frame(&peer6, &me6, 4793, pl, 7, false);
	p = rte_pktmbuf_mtod_offset(m, uint8_t *, 14 + 40 + 6);
	p[0] = p[1] = 0;
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(st(n).rx_drop_udp, 3);
	assert_int_equal(st(n).rx_udp, 5);
	/* the loopback way: straight into wn_net_udp_input, checksum marked good */
	m = rte_pktmbuf_alloc(pool);
	memcpy(rte_pktmbuf_append(m, 5), pl, 5);
	assert_int_equal(wn_net_udp_prepend(n, m, &me, 1, &me, 4793, 0, 0), 0);
	assert_int_equal(st(n).tx_udp, 1);
	m->ol_flags = RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	wn_net_udp_input(n, m, 1000000);
	assert_int_equal(useen.calls, 6);
	assert_int_equal(useen.info.sport, 1);
	/* families must match */
	m = rte_pktmbuf_alloc(pool);
	assert_int_equal(wn_net_udp_prepend(n, m, &me, 1, &me6, 2, 0, 0), -EINVAL);
	rte_pktmbuf_free(m);
	/* sent through wn_net_output, the sum survives */
	assert_int_equal(wn_net_neigh_add(n, &peer, &peer_mac, true, 0), 0);
	m = rte_pktmbuf_alloc(pool);
	memcpy(rte_pktmbuf_append(m, 9), pl, 9);
	assert_int_equal(wn_net_udp_prepend(n, m, &me, 4793, &peer, 4793, 0, 7), 0);
	assert_int_equal(wn_net_output(n, m, 0), 0);
	m = tx1(n);
	assert_non_null(m);
	p = rte_pktmbuf_mtod_offset(m, uint8_t *, 14);
	assert_int_equal(rte_ipv4_udptcp_cksum_verify((struct rte_ipv4_hdr *)p,
						      (struct rte_udp_hdr *)(p + 20)), 0);
	assert_int_equal(rte_ipv4_cksum((struct rte_ipv4_hdr *)p), 0);
	assert_int_equal(((struct rte_ipv4_hdr *)p)->time_to_live, 7);
	assert_memory_equal(rte_pktmbuf_read(m, 14 + 28, 9, out), pl, 9);
	rte_pktmbuf_free(m);
	/* the last port unbound: protocol 17 is dropped again */
	assert_int_equal(wn_net_udp_bind(n, 4793, NULL, NULL), 0);
	m = udp_frame(&peer, &me, 4793, pl, sizeof(pl), false);
	assert_int_equal(rx1(n, &m), 0);
	assert_int_equal(st(n).rx_drop_ip_proto, 2);
	/* at most WN_NET_UDP_PORTS */
	for (uint16_t port = 1; port <= WN_NET_UDP_PORTS; port++)
		assert_int_equal(wn_net_udp_bind(n, port, udp_rx, &useen), 0);
	assert_int_equal(wn_net_udp_bind(n, 99, udp_rx, &useen), -ENOSPC);
	wn_net_if_free(n);
}

static void
test_ipv6_ndp_and_echo(void **state)
{
	struct wn_netif *n = mk(0, 0);
	uint8_t b[200], ns[32], echo[16];
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)b;
	struct wn_ip_addr me, peer;
	struct rte_ether_addr mac, snm_mac = { .addr_bytes = { 0x33, 0x33, 0xff, 0, 0, 1 } };
	struct rte_mbuf *m;
	const uint8_t *r;
	uint16_t ck;
	(void)state;

	wn_net_addr_parse("2001:db8::1", &me, NULL);
	wn_net_addr_parse("2001:db8::2", &peer, NULL);
	memset(b, 0, sizeof(b));
	ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip6->payload_len = rte_cpu_to_be_16(32);
	ip6->proto = IPPROTO_ICMPV6;
	ip6->hop_limits = 255;
	memcpy(WN_IP6_SRC(ip6), peer.v6, 16);
	memcpy(WN_IP6_DST(ip6), me.v6, 16);
	WN_IP6_DST(ip6)[0] = 0xff; /* solicited-node multicast ff02::1:ff00:1 */
	memset(WN_IP6_DST(ip6) + 1, 0, 15);
	WN_IP6_DST(ip6)[1] = 0x02;
	WN_IP6_DST(ip6)[11] = 0x01;
	WN_IP6_DST(ip6)[12] = 0xff;
	WN_IP6_DST(ip6)[15] = 0x01;
	memset(ns, 0, sizeof(ns));
	ns[0] = 135;
	memcpy(ns + 8, me.v6, 16);
	ns[24] = 1;
	ns[25] = 1;
	memcpy(ns + 26, &peer_mac, 6);
	ck = icmp6_cksum(WN_IP6_SRC(ip6), WN_IP6_DST(ip6), ns, 32);
	memcpy(ns + 2, &ck, 2);
	memcpy(b + 40, ns, 32);
	m = frame(&snm_mac, RTE_ETHER_TYPE_IPV6, b, 72);
	assert_int_equal(rx1(n, &m), 0);
	/* solicited NA with our MAC, and the peer learned from its option */
	m = tx1(n);
	assert_non_null(m);
	r = rte_pktmbuf_mtod_offset(m, const uint8_t *, 14 + 40);
	assert_int_equal(r[0], 136);
	assert_true(r[4] & 0x40);
	assert_memory_equal(r + 8, me.v6, 16);
	assert_int_equal(r[24], 2);
	assert_memory_equal(r + 26, &our_mac, 6);
	assert_int_equal(rte_ipv6_udptcp_cksum_verify(
		rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, 14), r), 0);
	rte_pktmbuf_free(m);
	assert_int_equal(wn_net_neigh_lookup(n, &peer, &mac), 0);
	assert_memory_equal(&mac, &peer_mac, 6);
	/* NS with hop limit != 255 is invalid (RFC 4861 §7.1.1) */
	ip6->hop_limits = 64;
	m = frame(&snm_mac, RTE_ETHER_TYPE_IPV6, b, 72);
	rx1(n, &m);
	assert_null(tx1(n));
	assert_int_equal(st(n).rx_drop_icmp, 1);
	/* echo */
	memset(echo, 0, sizeof(echo));
	echo[0] = 128;
	memcpy(echo + 8, "v6-ping!", 8);
	memcpy(WN_IP6_DST(ip6), me.v6, 16);
	ip6->hop_limits = 64;
	ip6->payload_len = rte_cpu_to_be_16(16);
	ck = icmp6_cksum(WN_IP6_SRC(ip6), WN_IP6_DST(ip6), echo, 16);
	memcpy(echo + 2, &ck, 2);
	memcpy(b + 40, echo, 16);
	m = frame(&our_mac, RTE_ETHER_TYPE_IPV6, b, 56);
	assert_int_equal(rx1(n, &m), 0);
	m = tx1(n);
	assert_non_null(m);
	r = rte_pktmbuf_mtod_offset(m, const uint8_t *, 14);
	assert_memory_equal(r + 8, me.v6, 16);   /* source is us */
	assert_memory_equal(r + 24, peer.v6, 16);
	assert_int_equal(r[40], 129);
	assert_memory_equal(r + 48, "v6-ping!", 8);
	assert_int_equal(rte_ipv6_udptcp_cksum_verify((const struct rte_ipv6_hdr *)r, r + 40), 0);
	rte_pktmbuf_free(m);
	/* output to an unknown IPv6 neighbour sends a neighbour solicitation */
	{
		struct wn_ip_addr other;

		wn_net_addr_parse("2001:db8::99", &other, NULL);
		assert_int_equal(wn_net_output_l4(n, l4_packet("q", 1), &me, &other, IPPROTO_TCP, 0),
				 0);
		m = tx1(n);
		assert_non_null(m);
		r = rte_pktmbuf_mtod(m, const uint8_t *);
		assert_int_equal(r[0], 0x33);
		assert_int_equal(r[14 + 40], 135);
		assert_memory_equal(r + 14 + 40 + 8, other.v6, 16);
		rte_pktmbuf_free(m);
	}
	wn_net_if_free(n);
}

/* An NS or NA from the link (peer_mac, hop limit 255): @p opt_type 0: no option. */
static struct rte_mbuf *
ndp_frame(uint8_t type, uint8_t flags, const uint8_t *src, const uint8_t *dst,
	  const uint8_t *tgt, uint8_t opt_type, const uint8_t *opt6)
{
	uint8_t b[40 + 32];
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)b;
	uint8_t *icmp = b + 40;
	struct rte_ether_addr dmac = { .addr_bytes = { 0x33, 0x33, dst[12], dst[13], dst[14],
						       dst[15] } };
	uint16_t len = opt_type != 0 ? 32 : 24, ck;

	memset(b, 0, sizeof(b));
	ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip6->payload_len = rte_cpu_to_be_16(len);
	ip6->proto = IPPROTO_ICMPV6;
	ip6->hop_limits = 255;
	memcpy(WN_IP6_SRC(ip6), src, 16);
	memcpy(WN_IP6_DST(ip6), dst, 16);
	icmp[0] = type;
	icmp[4] = flags;
	memcpy(icmp + 8, tgt, 16);
	if (opt_type != 0) {
		icmp[24] = opt_type;
		icmp[25] = 1;
		memcpy(icmp + 26, opt6, 6);
	}
	ck = icmp6_cksum(WN_IP6_SRC(ip6), WN_IP6_DST(ip6), icmp, len);
	memcpy(icmp + 2, &ck, 2);
	if (dst[0] != 0xff)
		dmac = our_mac;
	return frame(&dmac, RTE_ETHER_TYPE_IPV6, b, (uint16_t)(40 + len));
}

static struct wn_netif *
mk_dad(bool secondary)
{
	struct wn_netif_conf c = { .pool = pool, .socket_id = SOCKET_ID_ANY, .mac = our_mac,
				   .secondary = secondary, .dad_seed = 42 };
	struct wn_netif *n = wn_net_if_create(&c);
	struct wn_ip_addr a6;

	assert_non_null(n);
	assert_int_equal(wn_net_addr_parse("2001:db8::1", &a6, NULL), 0);
	assert_int_equal(wn_net_if_addr_add(n, &a6, 64), 0);
	return n;
}

static uint8_t
addr_state(struct wn_netif *n, unsigned int i)
{
	struct wn_netif_addr_info ai[WN_NETIF_MAX_ADDRS + 1];

	assert_true(wn_net_if_addrs(n, ai, RTE_DIM(ai)) > i);
	return ai[i].state;
}

static const uint8_t v6_any[16];
static const uint8_t v6_all_nodes[16] = { 0xff, 0x02, [15] = 1 };
static const uint8_t v6_snm1[16] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff, [15] = 0x01 };

/*
 * A DAD probe of 2001:db8::1 in @p m (RFC 4862 §5.4.2): from ::, to its solicited-node group,
 * hop limit 255, a Nonce option and no source link-layer option. @return the nonce.
 */
static const uint8_t *
assert_dad_probe(struct rte_mbuf *m, const uint8_t *tgt)
{
	const uint8_t *r = rte_pktmbuf_mtod(m, const uint8_t *);

	assert_int_equal(rte_pktmbuf_pkt_len(m), 14 + 40 + 32);
	assert_int_equal(r[0], 0x33);
	assert_int_equal(r[2], 0xff);
	assert_memory_equal(r + 3, tgt + 13, 3);
	assert_int_equal(r[14 + 7], 255);
	assert_memory_equal(r + 14 + 8, v6_any, 16);
	assert_memory_equal(r + 14 + 24, v6_snm1, 13);
	assert_memory_equal(r + 14 + 24 + 13, tgt + 13, 3);
	assert_int_equal(r[54], 135);
	assert_memory_equal(r + 54 + 8, tgt, 16);
	assert_int_equal(r[54 + 24], 14); /* Nonce, not a source link-layer address */
	assert_int_equal(r[54 + 25], 1);
	assert_int_equal(rte_ipv6_udptcp_cksum_verify(
		rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, 14), r + 54), 0);
	return r + 54 + 26;
}

/* Duplicate Address Detection (RFC 4862 §5.4, RFC 7527) and the link-local address. */
static void
test_ipv6_dad(void **state)
{
	struct wn_netif *n = mk_dad(false);
	struct wn_netif_addr_info ai[WN_NETIF_MAX_ADDRS + 1];
	struct wn_ip_addr me, ll, src;
	uint8_t nonce[6], other_nonce[6] = { 1, 2, 3, 4, 5, 6 };
	struct rte_mbuf *m, *echo;
	const uint8_t *r;
	(void)state;

	wn_net_addr_parse("2001:db8::1", &me, NULL);
	/* tentative from the start: not ours yet, no source */
	assert_int_equal(addr_state(n, 0), WN_ADDR_TENTATIVE);
	assert_false(wn_net_if_is_local(n, &me));
	assert_int_equal(wn_net_if_src_addr(n, &me, &src), -ENETUNREACH);
	/* start: a link-local address is formed, one probe for each, nothing announced */
	assert_int_equal(wn_net_start(n, 0), 0);
	assert_int_equal(wn_net_if_addrs(n, ai, RTE_DIM(ai)), 2);
	assert_true(ai[1].auto_ll);
	assert_int_equal(ai[1].prefix, 64);
	ll = ai[1].addr;
	assert_int_equal(ll.v6[0], 0xfe);
	assert_int_equal(ll.v6[1], 0x80);
	assert_memory_equal(ll.v6 + 2, v6_any, 6);
	/* not the modified EUI-64 of the MAC (RFC 4291 App. A: ...ff:fe... in the middle) */
	assert_false(ll.v6[11] == 0xff && ll.v6[12] == 0xfe);
	m = tx1(n);
	assert_non_null(m);
	memcpy(nonce, assert_dad_probe(m, me.v6), 6);
	/* our own probe, looped back, is no conflict (its nonce) */
	echo = m;
	rx1(n, &echo);
	assert_int_equal(st(n).dad_looped, 1);
	assert_int_equal(addr_state(n, 0), WN_ADDR_TENTATIVE);
	m = tx1(n);
	assert_non_null(m); /* the link-local's probe */
	assert_int_equal(rte_pktmbuf_mtod(m, const uint8_t *)[54], 135);
	assert_memory_equal(rte_pktmbuf_mtod_offset(m, const uint8_t *, 54 + 8), ll.v6, 16);
	rte_pktmbuf_free(m);
	assert_null(tx1(n));
	assert_int_equal(st(n).dad_probes, 2);
	/* an ordinary solicitation for a tentative address is not answered (§5.4.3) */
	m = ndp_frame(135, 0, (const uint8_t[16]){ 0x20, 0x01, 0x0d, 0xb8, [15] = 2 }, v6_snm1,
		      me.v6, 1, peer_mac.addr_bytes);
	rx1(n, &m);
	assert_null(tx1(n));
	assert_int_equal(addr_state(n, 0), WN_ADDR_TENTATIVE);
	/* no answer within RetransTimer (1 s): usable, and announced to all nodes */
	wn_net_process(n, 999000);
	assert_int_equal(addr_state(n, 0), WN_ADDR_TENTATIVE);
	wn_net_process(n, 1020000); /* timers are looked at every 10 ms */
	assert_int_equal(addr_state(n, 0), WN_ADDR_PREFERRED);
	assert_int_equal(addr_state(n, 1), WN_ADDR_PREFERRED);
	assert_true(wn_net_if_is_local(n, &me));
	for (int i = 0; i < 2; i++) {
		m = tx1(n);
		assert_non_null(m);
		r = rte_pktmbuf_mtod(m, const uint8_t *);
		assert_int_equal(r[54], 136);
		assert_int_equal(r[54 + 4], 0x20); /* O, not S */
		assert_memory_equal(r + 14 + 24, v6_all_nodes, 16);
		rte_pktmbuf_free(m);
	}
	/* another node probing our address: we defend it, to all nodes (RFC 4861 §7.2.4) */
	m = ndp_frame(135, 0, v6_any, v6_snm1, me.v6, 14, other_nonce);
	assert_int_equal(rx1(n, &m), 0);
	m = tx1(n);
	assert_non_null(m);
	r = rte_pktmbuf_mtod(m, const uint8_t *);
	assert_memory_equal(r, "\x33\x33\x00\x00\x00\x01", 6);
	assert_memory_equal(r + 14 + 8, me.v6, 16);
	assert_memory_equal(r + 14 + 24, v6_all_nodes, 16);
	assert_int_equal(r[54], 136);
	assert_int_equal(r[54 + 4], 0x20);
	assert_memory_equal(r + 54 + 8, me.v6, 16);
	assert_int_equal(r[54 + 24], 2);
	assert_memory_equal(r + 54 + 26, &our_mac, 6);
	assert_int_equal(rte_ipv6_udptcp_cksum_verify(
		rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, 14), r + 54), 0);
	rte_pktmbuf_free(m);
	assert_int_equal(addr_state(n, 0), WN_ADDR_PREFERRED);
	/* a probe with a source link-layer option is invalid (RFC 4861 §7.1.1) */
	m = ndp_frame(135, 0, v6_any, v6_snm1, me.v6, 1, peer_mac.addr_bytes);
	rx1(n, &m);
	assert_null(tx1(n));
	assert_int_equal(st(n).rx_drop_icmp, 1);
	/* an advertisement of our usable address by another node: noted, kept */
	m = ndp_frame(136, 0x20, me.v6, v6_all_nodes, me.v6, 2, peer_mac.addr_bytes);
	rx1(n, &m);
	assert_int_equal(st(n).na_conflicts, 1);
	assert_int_equal(addr_state(n, 0), WN_ADDR_PREFERRED);
	assert_int_equal(wn_net_neigh_lookup(n, &me, NULL), -ENOENT);
	wn_net_if_free(n);
}

/* A tentative address another node has: never used (RFC 4862 §5.4.5); an own link-local
 * address that collides gets a new identifier (RFC 7217 §6). */
static void
test_ipv6_dad_duplicate(void **state)
{
	struct wn_netif *n = mk_dad(false);
	struct wn_netif_addr_info ai[WN_NETIF_MAX_ADDRS + 1];
	uint8_t other_nonce[6] = { 9, 9, 9, 9, 9, 9 };
	uint8_t snm_ll[16] = { 0xff, 0x02, [11] = 1, [12] = 0xff };
	struct wn_ip_addr me, ll, src;
	struct rte_mbuf *m;
	(void)state;

	wn_net_addr_parse("2001:db8::1", &me, NULL);
	assert_int_equal(wn_net_start(n, 0), 0);
	while ((m = tx1(n)) != NULL)
		rte_pktmbuf_free(m);
	/* the address is advertised while we probe: duplicate */
	m = ndp_frame(136, 0x20, (const uint8_t[16]){ 0xfe, 0x80, [15] = 9 }, v6_all_nodes, me.v6,
		      2, peer_mac.addr_bytes);
	rx1(n, &m);
	assert_int_equal(addr_state(n, 0), WN_ADDR_DUPLICATE);
	assert_int_equal(st(n).dad_duplicates, 1);
	/* another node's probe for our tentative link-local address: a new identifier */
	wn_net_if_addrs(n, ai, RTE_DIM(ai));
	ll = ai[1].addr;
	memcpy(snm_ll + 13, ll.v6 + 13, 3);
	m = ndp_frame(135, 0, v6_any, snm_ll, ll.v6, 14, other_nonce);
	rx1(n, &m);
	wn_net_if_addrs(n, ai, RTE_DIM(ai));
	assert_int_equal(ai[1].state, WN_ADDR_TENTATIVE);
	assert_false(wn_ip_addr_eq(&ai[1].addr, &ll));
	assert_int_equal(ai[1].addr.v6[0], 0xfe);
	m = tx1(n); /* the new one's probe */
	assert_non_null(m);
	assert_memory_equal(rte_pktmbuf_mtod_offset(m, const uint8_t *, 54 + 8), ai[1].addr.v6, 16);
	rte_pktmbuf_free(m);
	wn_net_process(n, 2000000);
	assert_int_equal(addr_state(n, 0), WN_ADDR_DUPLICATE);
	assert_int_equal(addr_state(n, 1), WN_ADDR_PREFERRED);
	/* the duplicate is neither local nor a source; the link-local is, for itself */
	assert_false(wn_net_if_is_local(n, &me));
	assert_int_equal(wn_net_if_src_addr(n, &me, &src), 0);
	assert_true(src.v6[0] == 0xfe);
	while ((m = tx1(n)) != NULL)
		rte_pktmbuf_free(m);
	/* a duplicate address is not defended */
	m = ndp_frame(135, 0, v6_any, v6_snm1, me.v6, 14, other_nonce);
	rx1(n, &m);
	assert_null(tx1(n));
	/* it is the other node's: reachable through it, its NA resolves it */
	assert_int_equal(wn_net_output_l4(n, l4_packet("q", 1), &src, &me, IPPROTO_TCP, 2000000),
			 0);
	m = tx1(n);
	assert_non_null(m);
	assert_int_equal(rte_pktmbuf_mtod(m, const uint8_t *)[54], 135);
	rte_pktmbuf_free(m);
	m = ndp_frame(136, 0x60, me.v6, src.v6, me.v6, 2, peer_mac.addr_bytes);
	rx1(n, &m);
	{
		struct rte_ether_addr mac;

		assert_int_equal(wn_net_neigh_lookup(n, &me, &mac), 0);
		assert_memory_equal(&mac, &peer_mac, 6);
	}
	m = tx1(n); /* the packet that waited */
	assert_non_null(m);
	assert_memory_equal(rte_pktmbuf_mtod(m, const uint8_t *), &peer_mac, 6);
	rte_pktmbuf_free(m);
	wn_net_if_free(n);
}

/* A secondary netif (another one answers for the port): DAD by listening, no frame sent. */
static void
test_ipv6_secondary(void **state)
{
	struct wn_netif *n = mk_dad(true), *p = mk_dad(false);
	struct wn_ip_addr me, peer;
	struct rte_ether_addr mac;
	struct rte_mbuf *m, *c;
	const uint8_t peer6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
	(void)state;

	wn_net_addr_parse("2001:db8::1", &me, NULL);
	wn_net_addr_parse("2001:db8::2", &peer, NULL);
	assert_int_equal(wn_net_start(n, 0), 0);
	assert_int_equal(wn_net_start(p, 0), 0);
	assert_null(tx1(n));
	assert_int_equal(st(n).dad_probes, 0);
	/* the primary's probe reaches the secondary too (steering copies NDP): no conflict,
	 * the same seed gives the same nonce */
	m = tx1(p);
	assert_non_null(m);
	rx1(n, &m);
	assert_int_equal(st(n).dad_looped, 1);
	while ((m = tx1(p)) != NULL)
		rte_pktmbuf_free(m);
	wn_net_process(n, 1500000);
	assert_int_equal(addr_state(n, 0), WN_ADDR_PREFERRED);
	assert_null(tx1(n)); /* no announcement */
	/* a solicitation: learned, not answered */
	m = ndp_frame(135, 0, peer6, v6_snm1, me.v6, 1, peer_mac.addr_bytes);
	c = rte_pktmbuf_copy(m, pool, 0, UINT32_MAX);
	rx1(n, &m);
	assert_null(tx1(n));
	assert_int_equal(wn_net_neigh_lookup(n, &peer, &mac), 0);
	assert_memory_equal(&mac, &peer_mac, 6);
	/* the primary answers the same frame */
	wn_net_process(p, 1500000);
	while ((m = tx1(p)) != NULL)
		rte_pktmbuf_free(m);
	rx1(p, &c);
	m = tx1(p);
	assert_non_null(m);
	assert_int_equal(rte_pktmbuf_mtod(m, const uint8_t *)[54], 136);
	rte_pktmbuf_free(m);
	/* an ARP request: not answered by the secondary */
	{
		struct rte_arp_hdr ah;
		struct wn_ip_addr a4 = wn_ip_addr_v4(198, 18, 0, 1);
		const struct rte_ether_addr bc = { .addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff,
								   0xff } };

		assert_int_equal(wn_net_if_addr_add(n, &a4, 24), 0);
		arp_payload(&ah, RTE_ARP_OP_REQUEST, &peer_mac, IP_PEER, IP_US);
		m = frame(&bc, RTE_ETHER_TYPE_ARP, &ah, sizeof(ah));
		rx1(n, &m);
		assert_null(tx1(n));
		assert_int_equal(st(n).rx_arp, 1);
	}
	wn_net_if_free(n);
	wn_net_if_free(p);
}

static void
test_addr_helpers(void **state)
{
	struct wn_ip_addr a, b;
	uint8_t p;
	char buf[64];
	(void)state;

	assert_int_equal(wn_net_addr_parse("198.18.0.1/24", &a, &p), 0);
	assert_int_equal(p, 24);
	b = wn_ip_addr_v4(198, 18, 0, 1);
	assert_true(wn_ip_addr_eq(&a, &b));
	assert_string_equal(wn_net_addr_fmt(&a, buf, sizeof(buf)), "198.18.0.1");
	assert_int_equal(wn_net_addr_parse("2001:db8::5/129", &a, &p), -EINVAL);
	assert_int_equal(wn_net_addr_parse("2001:db8::5", &a, &p), 0);
	assert_int_equal(p, 128);
	assert_string_equal(wn_net_addr_fmt(&a, buf, sizeof(buf)), "2001:db8::5");
	assert_int_equal(wn_net_addr_parse("1.2.3", &a, NULL), -EINVAL);
	assert_int_equal(wn_net_addr_parse("1.2.3.4/x", &a, NULL), -EINVAL);
}

int
main(int argc, char **argv)
{
	char *eal[] = { "test_net", "--no-huge", "--no-shconf", "--no-pci", "-l", "0", "-m", "128",
			"--log-level", "*:error", NULL };
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arp_reply_and_learn),
		cmocka_unit_test(test_gratuitous_arp_on_start),
		cmocka_unit_test(test_resolution_queue_and_failure),
		cmocka_unit_test(test_next_hop_cache),
		cmocka_unit_test(test_gateway_mtu_noroute),
		cmocka_unit_test(test_checksum_offload_vs_software),
		cmocka_unit_test(test_tcp_checksum_zero_is_sent_as_zero),
		cmocka_unit_test(test_local_link_checksums),
		cmocka_unit_test(test_now_us),
		cmocka_unit_test(test_ipv4_header_checks),
		cmocka_unit_test(test_icmp_echo_reply),
		cmocka_unit_test(test_fragments_reassembled_or_dropped),
		cmocka_unit_test(test_proto_hook),
		cmocka_unit_test(test_udp),
		cmocka_unit_test(test_ipv6_ndp_and_echo),
		cmocka_unit_test(test_ipv6_dad),
		cmocka_unit_test(test_ipv6_dad_duplicate),
		cmocka_unit_test(test_ipv6_secondary),
		cmocka_unit_test(test_addr_helpers),
	};

	(void)argc;
	(void)argv;
	if (rte_eal_init(10, eal) < 0)
		return 1;
	pool = rte_pktmbuf_pool_create("tn", 2047, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
