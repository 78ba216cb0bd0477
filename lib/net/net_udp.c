/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * UDP (RFC 768; over IPv6, RFC 8200 §8.1): datagrams to bound ports handed to their owner,
 * and datagrams built with their checksum. No sockets: a port is bound to a function.
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "net_priv.h"

static void
udp_drop(struct rte_mbuf *m, uint64_t *counter)
{
	(*counter)++;
	rte_pktmbuf_free(m);
}

/* The pseudo-header sum of the IPv4 or IPv6 header @p l3 for @p ulen UDP octets. */
static uint32_t
udp_phdr_sum(const uint8_t *l3, uint32_t ulen)
{
	uint32_t sum = rte_cpu_to_be_16(IPPROTO_UDP) + rte_cpu_to_be_16((uint16_t)ulen);

	if ((l3[0] >> 4) == 4) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)l3;

		sum += __rte_raw_cksum(&ip->src_addr, 8, 0);
	} else {
		const struct rte_ipv6_hdr *ip6 = (const struct rte_ipv6_hdr *)l3;

		sum += __rte_raw_cksum(WN_IP6_SRC(ip6), 32, 0);
	}
	return sum;
}

/* The one's complement sum over the pseudo-header and the @p ulen UDP octets at @p l3_len. */
static uint16_t
udp_sum(const struct rte_mbuf *m, uint32_t l3_len, uint32_t ulen)
{
	uint32_t c = udp_phdr_sum(rte_pktmbuf_mtod(m, const uint8_t *), ulen) +
		     wn_net_chain_raw_cksum(m, l3_len, ulen);

	c = (c >> 16) + (c & 0xffff);
	c = (c >> 16) + (c & 0xffff);
	return (uint16_t)c;
}

static void
udp_hook(void *arg, struct rte_mbuf *m, uint64_t now)
{
	wn_net_udp_input(arg, m, now);
}

void
wn_net_udp_input(struct wn_netif *nif, struct rte_mbuf *m, uint64_t now)
{
	const uint8_t *l3 = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t l3_len = m->l3_len, avail, ulen;
	struct wn_net_udp_info info;
	const struct rte_udp_hdr *hp;
	struct rte_udp_hdr uh;
	unsigned int i;

	avail = rte_pktmbuf_pkt_len(m) >= l3_len ? rte_pktmbuf_pkt_len(m) - l3_len : 0;
	if (l3_len < sizeof(struct rte_ipv4_hdr) || avail < sizeof(uh) ||
	    rte_pktmbuf_data_len(m) < l3_len) {
		udp_drop(m, &nif->st.rx_drop_udp);
		return;
	}
	hp = rte_pktmbuf_read(m, l3_len, sizeof(uh), &uh);
	uh = *hp;
	ulen = rte_be_to_cpu_16(uh.dgram_len);
	if (ulen < sizeof(uh) || ulen > avail) {
		udp_drop(m, &nif->st.rx_drop_udp);
		return;
	}
	memset(&info, 0, sizeof(info));
	if ((l3[0] >> 4) == 4) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)l3;

		info.src.family = info.dst.family = WN_AF_INET;
		info.src.v4 = ip->src_addr;
		info.dst.v4 = ip->dst_addr;
		info.ttl = ip->time_to_live;
		info.tclass = ip->type_of_service;
	} else {
		const struct rte_ipv6_hdr *ip6 = (const struct rte_ipv6_hdr *)l3;
		uint32_t vtc = rte_be_to_cpu_32(ip6->vtc_flow);

		if (rte_pktmbuf_data_len(m) < sizeof(*ip6) || uh.dgram_cksum == 0) {
			/* RFC 8200 §8.1: a zero UDP checksum over IPv6 is discarded */
			udp_drop(m, &nif->st.rx_drop_udp);
			return;
		}
		info.src.family = info.dst.family = WN_AF_INET6;
		memcpy(info.src.v6, WN_IP6_SRC(ip6), 16);
		memcpy(info.dst.v6, WN_IP6_DST(ip6), 16);
		info.ttl = ip6->hop_limits;
		info.tclass = (uint8_t)(vtc >> 20);
		info.flow = vtc & 0xfffff;
	}
	/* RFC 768: a zero checksum (IPv4) was not computed; the sum over everything is 0xffff */
	if (uh.dgram_cksum != 0 && (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) !=
					   RTE_MBUF_F_RX_L4_CKSUM_GOOD &&
	    udp_sum(m, l3_len, ulen) != 0xffff) {
		udp_drop(m, &nif->st.rx_drop_udp);
		return;
	}
	/* octets past the UDP length (Ethernet padding of a short IPv6 frame) go */
	if (avail > ulen)
		rte_pktmbuf_trim(m, (uint16_t)(avail - ulen));
	info.sport = rte_be_to_cpu_16(uh.src_port);
	info.dport = rte_be_to_cpu_16(uh.dst_port);
	info.len = ulen - (uint32_t)sizeof(uh);
	for (i = 0; i < WN_NET_UDP_PORTS; i++)
		if (nif->udp[i].fn != NULL && nif->udp[i].port == info.dport)
			break;
	if (i == WN_NET_UDP_PORTS) {
		udp_drop(m, &nif->st.rx_drop_udp_port);
		return;
	}
	nif->st.rx_udp++;
	m->l4_len = sizeof(uh);
	nif->udp[i].fn(nif->udp[i].arg, m, &info, now);
}

int
wn_net_udp_bind(struct wn_netif *nif, uint16_t port, wn_net_udp_rx_fn fn, void *arg)
{
	unsigned int i, slot = WN_NET_UDP_PORTS, bound = 0;
	int ret;

	for (i = 0; i < WN_NET_UDP_PORTS; i++) {
		if (nif->udp[i].fn == NULL) {
			if (slot == WN_NET_UDP_PORTS && fn != NULL)
				slot = i;
			continue;
		}
		bound++;
		if (nif->udp[i].port == port) {
			if (fn != NULL)
				return -EEXIST;
			slot = i;
		}
	}
	if (fn == NULL) {
		if (slot == WN_NET_UDP_PORTS)
			return -ENOENT;
		nif->udp[slot].fn = NULL;
		/* the last port unbound: protocol 17 is dropped again (rx_drop_ip_proto) */
		if (bound == 1)
			(void)wn_net_if_proto_rx(nif, IPPROTO_UDP, NULL, NULL);
		return 0;
	}
	if (slot == WN_NET_UDP_PORTS)
		return -ENOSPC;
	if (bound == 0) {
		ret = wn_net_if_proto_rx(nif, IPPROTO_UDP, udp_hook, nif);
		if (ret != 0)
			return ret;
	}
	nif->udp[slot].port = port;
	nif->udp[slot].arg = arg;
	nif->udp[slot].fn = fn;
	return 0;
}

int
wn_net_udp_prepend(struct wn_netif *nif, struct rte_mbuf *m, const struct wn_ip_addr *src,
		   uint16_t sport, const struct wn_ip_addr *dst, uint16_t dport, uint8_t tclass,
		   uint8_t ttl)
{
	uint32_t ulen = rte_pktmbuf_pkt_len(m) + (uint32_t)sizeof(struct rte_udp_hdr);
	struct rte_udp_hdr *uh;
	uint16_t sum;
	int ret;

	if (ulen > UINT16_MAX || src->family != dst->family)
		return -EINVAL;
	uh = (struct rte_udp_hdr *)rte_pktmbuf_prepend(m, sizeof(*uh));
	if (uh == NULL)
		return -ENOSPC;
	uh->src_port = rte_cpu_to_be_16(sport);
	uh->dst_port = rte_cpu_to_be_16(dport);
	uh->dgram_len = rte_cpu_to_be_16((uint16_t)ulen);
	uh->dgram_cksum = 0;
	ret = wn_net_ip_prepend(m, src, dst, IPPROTO_UDP);
	if (ret != 0) {
		rte_pktmbuf_adj(m, sizeof(*uh));
		return ret;
	}
	if (src->family == WN_AF_INET) {
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, struct rte_ipv4_hdr *);

		ip->type_of_service = tclass;
		if (ttl != 0)
			ip->time_to_live = ttl;
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	} else {
		struct rte_ipv6_hdr *ip6 = rte_pktmbuf_mtod(m, struct rte_ipv6_hdr *);

		ip6->vtc_flow = rte_cpu_to_be_32(6u << 28 | (uint32_t)tclass << 20);
		if (ttl != 0)
			ip6->hop_limits = ttl;
	}
	m->l4_len = sizeof(*uh);
	sum = (uint16_t)~udp_sum(m, m->l3_len, ulen);
	uh->dgram_cksum = sum == 0 ? 0xffff : sum; /* RFC 768: zero means none */
	if (nif != NULL)
		nif->st.tx_udp++;
	return 0;
}
