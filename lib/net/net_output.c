/* SPDX-License-Identifier: BSD-3-Clause */
/* IP output: IP header, checksums (offload or software), next hop, neighbour resolution. */
#include <errno.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_ethdev.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "net_priv.h"

#define WN_IP_TTL 64

/* ---- IP output ---- */

int
wn_net_ip_prepend(struct rte_mbuf *m, const struct wn_ip_addr *src,
		  const struct wn_ip_addr *dst, uint8_t proto)
{
	uint32_t l4len = rte_pktmbuf_pkt_len(m);

	if (src->family != dst->family)
		return -EINVAL;
	if (src->family == WN_AF_INET) {
		struct rte_ipv4_hdr *ip;

		if (l4len > UINT16_MAX - sizeof(*ip))
			return -EINVAL;
		ip = (struct rte_ipv4_hdr *)rte_pktmbuf_prepend(m, sizeof(*ip));
		if (ip == NULL)
			return -ENOSPC;
		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->type_of_service = 0;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(l4len + sizeof(*ip)));
		ip->packet_id = 0;
		/* We never fragment: DF (RFC 791 §3.1), path MTU is the link MTU. */
		ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
		ip->time_to_live = WN_IP_TTL;
		ip->next_proto_id = proto;
		ip->hdr_checksum = 0;
		ip->src_addr = src->v4;
		ip->dst_addr = dst->v4;
		m->l3_len = sizeof(*ip);
		m->packet_type = RTE_PTYPE_L3_IPV4;
	} else if (src->family == WN_AF_INET6) {
		struct rte_ipv6_hdr *ip6;

		if (l4len > UINT16_MAX)
			return -EINVAL;
		ip6 = (struct rte_ipv6_hdr *)rte_pktmbuf_prepend(m, sizeof(*ip6));
		if (ip6 == NULL)
			return -ENOSPC;
		ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
		ip6->payload_len = rte_cpu_to_be_16((uint16_t)l4len);
		ip6->proto = proto;
		ip6->hop_limits = WN_IP_TTL;
		memcpy(WN_IP6_SRC(ip6), src->v6, 16);
		memcpy(WN_IP6_DST(ip6), dst->v6, 16);
		m->l3_len = sizeof(*ip6);
		m->packet_type = RTE_PTYPE_L3_IPV6;
	} else {
		return -EINVAL;
	}
	m->l2_len = 0;
	return 0;
}

/*
 * Raw one's complement sum of [off, off + len) of a chain. DPDK 22.11's rte_raw_cksum_mbuf()
 * truncates a segment's 32-bit partial sum to 16 bits before swapping the bytes of a segment
 * that starts at an odd offset, losing its carries: chains with odd-length segments (zero-copy
 * transmit, lib/tcp) got wrong checksums. Here each partial sum is folded first.
 */
uint16_t
wn_net_chain_raw_cksum(const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	uint32_t sum = 0, done = 0;

	for (; m != NULL && done < len; m = m->next) {
		uint32_t dl = rte_pktmbuf_data_len(m), n, tmp;

		if (off >= dl) {
			off -= dl;
			continue;
		}
		n = RTE_MIN(dl - off, len - done);
		tmp = __rte_raw_cksum_reduce(__rte_raw_cksum(rte_pktmbuf_mtod_offset(m, const char *,
										    off),
							     n, 0));
		if (done & 1)
			tmp = rte_bswap16((uint16_t)tmp);
		sum += tmp;
		done += n;
		off = 0;
	}
	return __rte_raw_cksum_reduce(sum);
}

/* TCP checksum (RFC 9293 §3.1) of a chain behind IPv4 or IPv6 pseudo-header sum @p phdr. */
static uint16_t
chain_l4_cksum(const struct rte_mbuf *m, uint32_t l3, uint16_t phdr)
{
	uint32_t c = (uint32_t)wn_net_chain_raw_cksum(m, l3, rte_pktmbuf_pkt_len(m) - l3) + phdr;

	c = ((c & 0xffff0000) >> 16) + (c & 0xffff);
	c = ((c & 0xffff0000) >> 16) + (c & 0xffff);
	return (uint16_t)~c;
}

/*
 * Fill checksums: offload when the port enabled it, only the pseudo-header sum on a local
 * link (WN_NET_CKSUM_LOCAL), software otherwise. TCP (RFC 9293 §3.1) sends the sum as
 * computed, 0x0000 included (0xffff for zero is UDP's rule, RFC 768); net_tap's offload
 * applies the UDP rule to TCP, so netif.c keeps TCP checksums in software there.
 */
static void
ip4_cksums(struct wn_netif *nif, struct rte_mbuf *m, struct rte_ipv4_hdr *ip)
{
	uint16_t l3 = (uint16_t)rte_ipv4_hdr_len(ip);
	uint8_t proto = ip->next_proto_id;
	struct rte_tcp_hdr *th = NULL;

	if (proto == IPPROTO_TCP && rte_pktmbuf_data_len(m) >= l3 + sizeof(*th))
		th = rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *, l3);
	m->l3_len = l3;
	ip->hdr_checksum = 0;
	if (th != NULL && (nif->hw_l4_cksum_tx || nif->local_cksum)) {
		/* the port sums (offload), or nothing does: a local link (WN_NET_CKSUM_LOCAL) */
		m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_CKSUM;
		th->cksum = 0;
		th->cksum = rte_ipv4_phdr_cksum(ip, m->ol_flags);
	} else if (th != NULL && m->nb_segs > 1) {
		th->cksum = 0;
		th->cksum = chain_l4_cksum(m, l3, rte_ipv4_phdr_cksum(ip, 0));
	} else if (th != NULL) {
		th->cksum = 0;
		th->cksum = rte_ipv4_udptcp_cksum_mbuf(m, ip, l3);
	}
	if (nif->hw_ip4_cksum_tx)
		m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
	else
		ip->hdr_checksum = rte_ipv4_cksum(ip);
}

static void
ip6_cksums(struct wn_netif *nif, struct rte_mbuf *m, struct rte_ipv6_hdr *ip6)
{
	struct rte_tcp_hdr *th;

	m->l3_len = sizeof(*ip6);
	if (ip6->proto != IPPROTO_TCP || rte_pktmbuf_data_len(m) < sizeof(*ip6) + sizeof(*th))
		return;
	th = (struct rte_tcp_hdr *)(ip6 + 1);
	th->cksum = 0;
	if (nif->hw_l4_cksum_tx || nif->local_cksum) {
		m->ol_flags |= RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_TCP_CKSUM;
		th->cksum = rte_ipv6_phdr_cksum(ip6, m->ol_flags);
	} else if (m->nb_segs > 1) {
		th->cksum = chain_l4_cksum(m, sizeof(*ip6), rte_ipv6_phdr_cksum(ip6, 0));
	} else {
		th->cksum = rte_ipv6_udptcp_cksum_mbuf(m, ip6, sizeof(*ip6));
	}
}

/*
 * The pseudo-header sum a TCP segment behind the IPv4 or IPv6 header @p l3 carries when its
 * checksum is left to offload (what WN_NET_CKSUM_LOCAL sends).
 */
uint16_t
wn_net_tcp_phdr_cksum(const void *l3)
{
	if ((*(const uint8_t *)l3 >> 4) == 4)
		return rte_ipv4_phdr_cksum(l3, 0);
	return rte_ipv6_phdr_cksum(l3, 0);
}

/*
 * Complete what a frame (Ethernet first) leaves to checksum offload: the IPv4 header sum
 * (RTE_MBUF_F_TX_IP_CKSUM) and the TCP sum (RTE_MBUF_F_TX_TCP_CKSUM, over chains too),
 * and clear those flags. For captures (wn_net_pcap_capture): the file shows the frame as the
 * wire of a NIC that computes them would carry it.
 */
void
wn_net_tx_cksum_complete(struct rte_mbuf *m)
{
	uint32_t l3 = m->l2_len, l4 = l3 + m->l3_len;

	if ((m->ol_flags & (RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK)) == 0 ||
	    rte_pktmbuf_data_len(m) < l4 + sizeof(struct rte_tcp_hdr))
		return;
	if (m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM) {
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, l3);

		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	if ((m->ol_flags & RTE_MBUF_F_TX_L4_MASK) == RTE_MBUF_F_TX_TCP_CKSUM) {
		struct rte_tcp_hdr *th = rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *, l4);
		const void *ip = rte_pktmbuf_mtod_offset(m, const void *, l3);

		th->cksum = 0;
		th->cksum = chain_l4_cksum(m, l4, (m->ol_flags & RTE_MBUF_F_TX_IPV4) ?
					   rte_ipv4_phdr_cksum(ip, 0) : rte_ipv6_phdr_cksum(ip, 0));
	}
	m->ol_flags &= ~(RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK);
}

/*
 * A received frame (Ethernet first) whose TCP checksum field holds only the pseudo-header
 * sum (a WN_NET_CKSUM_LOCAL sender's) gets its full sum, for captures of local links.
 */
void
wn_net_rx_cksum_complete(struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh;
	const uint8_t *ip;
	struct rte_tcp_hdr *th;
	uint32_t l4, need;
	uint16_t et;

	if (rte_pktmbuf_data_len(m) < sizeof(*eh) + sizeof(struct rte_ipv4_hdr))
		return;
	eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	et = rte_be_to_cpu_16(eh->ether_type);
	ip = (const uint8_t *)(eh + 1);
	if (et == RTE_ETHER_TYPE_IPV4 && (ip[0] >> 4) == 4 && ip[9] == IPPROTO_TCP)
		l4 = sizeof(*eh) + rte_ipv4_hdr_len((const struct rte_ipv4_hdr *)ip);
	else if (et == RTE_ETHER_TYPE_IPV6 && (ip[0] >> 4) == 6 && ip[6] == IPPROTO_TCP)
		l4 = sizeof(*eh) + sizeof(struct rte_ipv6_hdr);
	else
		return;
	need = (ip[0] >> 4) == 4 ? sizeof(*eh) + rte_be_to_cpu_16(((const struct rte_ipv4_hdr *)
								      ip)->total_length) :
		l4 + rte_be_to_cpu_16(((const struct rte_ipv6_hdr *)ip)->payload_len);
	if (rte_pktmbuf_data_len(m) < l4 + sizeof(*th) || rte_pktmbuf_pkt_len(m) < need ||
	    need < l4 + sizeof(*th))
		return;
	th = rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *, l4);
	if (th->cksum != wn_net_tcp_phdr_cksum(ip))
		return;
	th->cksum = 0;
	{
		uint32_t c = (uint32_t)wn_net_chain_raw_cksum(m, l4, need - l4) +
			     wn_net_tcp_phdr_cksum(ip);

		c = (c >> 16) + (c & 0xffff);
		c = (c >> 16) + (c & 0xffff);
		th->cksum = (uint16_t)~c;
	}
}

/* Next hop: on-link destination itself, else the gateway (RFC 1122 §3.3.1). */
static int
next_hop(const struct wn_netif *nif, const struct wn_ip_addr *dst, struct wn_ip_addr *nh)
{
	for (unsigned int i = 0; i < nif->nb_addrs; i++) {
		const struct netif_addr *a = &nif->addrs[i];
		struct wn_ip_addr x = *dst;

		if (a->addr.family != dst->family)
			continue;
		if (a->addr.family == WN_AF_INET) {
			uint32_t mask = a->prefix == 0 ? 0 : ~0u << (32 - a->prefix);

			if (((rte_be_to_cpu_32(a->addr.v4) ^ rte_be_to_cpu_32(x.v4)) & mask) == 0) {
				*nh = x;
				return 0;
			}
		} else {
			unsigned int full = a->prefix / 8, rem = a->prefix % 8;

			if (memcmp(a->addr.v6, x.v6, full) == 0 &&
			    (rem == 0 || ((a->addr.v6[full] ^ x.v6[full]) &
					  (uint8_t)(0xff << (8 - rem))) == 0)) {
				*nh = x;
				return 0;
			}
		}
	}
	if (dst->family == WN_AF_INET && nif->gw4.family == WN_AF_INET) {
		*nh = nif->gw4;
		return 0;
	}
	if (dst->family == WN_AF_INET6 && nif->gw6.family == WN_AF_INET6) {
		*nh = nif->gw6;
		return 0;
	}
	return -ENETUNREACH;
}

int
wn_net_output(struct wn_netif *nif, struct rte_mbuf *m, uint64_t now)
{
	struct wn_ip_addr dst = { 0 }, nh;
	struct neigh *n;
	uint16_t et;
	uint8_t ver;

	if (rte_pktmbuf_data_len(m) < sizeof(struct rte_ipv4_hdr))
		goto bad;
	ver = *rte_pktmbuf_mtod(m, uint8_t *) >> 4;
	if (rte_pktmbuf_pkt_len(m) > nif->conf.mtu) {
		nif->st.tx_drop_mtu++;
		rte_pktmbuf_free(m);
		return -EMSGSIZE;
	}
	if (ver == 4) {
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, struct rte_ipv4_hdr *);

		ip->packet_id = rte_cpu_to_be_16(nif->ip_id++);
		ip4_cksums(nif, m, ip);
		dst.family = WN_AF_INET;
		dst.v4 = ip->dst_addr;
		et = RTE_ETHER_TYPE_IPV4;
	} else if (ver == 6 && rte_pktmbuf_data_len(m) >= sizeof(struct rte_ipv6_hdr)) {
		struct rte_ipv6_hdr *ip6 = rte_pktmbuf_mtod(m, struct rte_ipv6_hdr *);

		ip6_cksums(nif, m, ip6);
		dst.family = WN_AF_INET6;
		memcpy(dst.v6, WN_IP6_DST(ip6), 16);
		et = RTE_ETHER_TYPE_IPV6;
	} else {
		goto bad;
	}
	n = nif->last_nh;
	if (n != NULL && (n->state == NEIGH_REACHABLE || n->state == NEIGH_PERMANENT) &&
	    wn_ip_addr_eq(&dst, &nif->last_dst) && wn_ip_addr_eq(&n->addr, &nif->last_nh_addr))
		return wn_net_send_l2(nif, m, &n->mac, et);
	if (next_hop(nif, &dst, &nh) != 0)
		goto noroute;
	n = wn_net_neigh_find(nif, &nh);
	if (n != NULL && (n->state == NEIGH_REACHABLE || n->state == NEIGH_PERMANENT)) {
		nif->last_dst = dst;
		nif->last_nh_addr = n->addr;
		nif->last_nh = n;
		return wn_net_send_l2(nif, m, &n->mac, et);
	}
	if (n == NULL) {
		n = wn_net_neigh_create(nif, &nh);
		if (n == NULL) {
			nif->st.tx_drop_neigh++;
			rte_pktmbuf_free(m);
			return -ENOBUFS;
		}
		n->probes = 1;
		neigh_expire_at(nif, n, now + nif->conf.neigh_retrans_us);
		wn_net_neigh_solicit(nif, n);
	}
	/* INCOMPLETE: hold a bounded number of packets (RFC 1122 §2.3.2.2 asks for >= 1). */
	if (n->qlen >= nif->conf.neigh_queue_len) {
		nif->st.tx_drop_neigh++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	n->q[n->qlen++] = m;
	return 0;
bad:
noroute:
	nif->st.tx_drop_noroute++;
	rte_pktmbuf_free(m);
	return -ENETUNREACH;
}

uint16_t
wn_net_output_bulk(struct wn_netif *nif, struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	uint16_t ok = 0;

	for (uint16_t i = 0; i < n; i++)
		ok += wn_net_output(nif, pkts[i], now) == 0;
	return ok;
}

int
wn_net_output_l4(struct wn_netif *nif, struct rte_mbuf *m, const struct wn_ip_addr *src,
		 const struct wn_ip_addr *dst, uint8_t proto, uint64_t now)
{
	int rc = wn_net_ip_prepend(m, src, dst, proto);

	if (rc != 0) {
		nif->st.tx_drop_noroute++;
		rte_pktmbuf_free(m);
		return rc;
	}
	return wn_net_output(nif, m, now);
}
