/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Link-layer transmit, the bottom of lib/net's transmit side: the interface's tx FIFO
 * (drained by wn_net_tx_bulk), the Ethernet header, and the ARP (RFC 826) and NDP
 * (RFC 4861 §4.3, §4.4) messages the neighbour code and the receive path send.
 */
#include <errno.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_ethdev.h>
#include <rte_ip.h>

#include "net_priv.h"

#define ICMP6_NS 135
#define ICMP6_NA 136

int
wn_net_if_txq_push(struct wn_netif *nif, struct rte_mbuf *m)
{
	if (nif->txq_len == nif->conf.tx_queue_len) {
		nif->st.tx_drop_queue++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	nif->txq[(nif->txq_head + nif->txq_len) % nif->conf.tx_queue_len] = m;
	nif->txq_len++;
	return 0;
}

uint32_t
wn_net_tx_room(const struct wn_netif *nif)
{
	return nif->conf.tx_queue_len - nif->txq_len;
}

uint16_t
wn_net_tx_bulk(struct wn_netif *nif, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t k = 0;

	while (k < n && nif->txq_len > 0) {
		pkts[k++] = nif->txq[nif->txq_head];
		nif->txq_head = (nif->txq_head + 1) % nif->conf.tx_queue_len;
		nif->txq_len--;
	}
	nif->st.tx_pkts += k;
	return k;
}

int
wn_net_send_l2(struct wn_netif *nif, struct rte_mbuf *m, const struct rte_ether_addr *dst,
	    uint16_t ethertype)
{
	struct rte_ether_hdr *eh;

	eh = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, sizeof(*eh));
	if (eh == NULL) {
		nif->st.tx_drop_nombuf++;
		rte_pktmbuf_free(m);
		return -ENOSPC;
	}
	rte_ether_addr_copy(dst, &eh->dst_addr);
	rte_ether_addr_copy(&nif->conf.mac, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(ethertype);
	m->l2_len = sizeof(*eh);
	return wn_net_if_txq_push(nif, m);
}

int
wn_net_arp_send(struct wn_netif *nif, uint16_t op, const struct rte_ether_addr *tha, rte_be32_t sip,
	 rte_be32_t tip, const struct rte_ether_addr *dst_mac)
{
	static const struct rte_ether_addr bcast = {
		.addr_bytes = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
	struct rte_mbuf *m = rte_pktmbuf_alloc(nif->conf.pool);
	struct rte_arp_hdr *ah;

	if (m == NULL) {
		nif->st.tx_drop_nombuf++;
		return -ENOBUFS;
	}
	ah = (struct rte_arp_hdr *)rte_pktmbuf_append(m, sizeof(*ah));
	if (ah == NULL) {
		rte_pktmbuf_free(m);
		return -ENOSPC;
	}
	/* RFC 826 packet format. */
	ah->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	ah->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ah->arp_hlen = RTE_ETHER_ADDR_LEN;
	ah->arp_plen = 4;
	ah->arp_opcode = rte_cpu_to_be_16(op);
	rte_ether_addr_copy(&nif->conf.mac, &ah->arp_data.arp_sha);
	ah->arp_data.arp_sip = sip;
	if (tha != NULL)
		rte_ether_addr_copy(tha, &ah->arp_data.arp_tha);
	else
		memset(&ah->arp_data.arp_tha, 0, sizeof(ah->arp_data.arp_tha));
	ah->arp_data.arp_tip = tip;
	if (op == RTE_ARP_OP_REQUEST)
		nif->st.tx_arp_req += sip != tip;
	else
		nif->st.tx_arp_reply++;
	return wn_net_send_l2(nif, m, dst_mac != NULL ? dst_mac : &bcast, RTE_ETHER_TYPE_ARP);
}

static void
ip6_multicast_mac(const uint8_t *ip6, struct rte_ether_addr *mac)
{
	/* RFC 2464 §7: 33:33 + last four octets. */
	mac->addr_bytes[0] = 0x33;
	mac->addr_bytes[1] = 0x33;
	memcpy(&mac->addr_bytes[2], ip6 + 12, 4);
}

static int
icmp6_send(struct wn_netif *nif, struct rte_mbuf *m, const struct wn_ip_addr *src,
	   const struct wn_ip_addr *dst, const struct rte_ether_addr *dst_mac)
{
	struct rte_ipv6_hdr *ip6;
	struct rte_ether_addr mac;
	uint16_t plen = (uint16_t)rte_pktmbuf_pkt_len(m);
	uint8_t *icmp;

	ip6 = (struct rte_ipv6_hdr *)rte_pktmbuf_prepend(m, sizeof(*ip6));
	if (ip6 == NULL) {
		rte_pktmbuf_free(m);
		return -ENOSPC;
	}
	ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip6->payload_len = rte_cpu_to_be_16(plen);
	ip6->proto = IPPROTO_ICMPV6;
	ip6->hop_limits = 255; /* RFC 4861 §7.1.1: NDP needs 255 */
	memcpy(WN_IP6_SRC(ip6), src->v6, 16);
	memcpy(WN_IP6_DST(ip6), dst->v6, 16);
	icmp = (uint8_t *)(ip6 + 1);
	icmp[2] = icmp[3] = 0;
	{
		uint16_t ck = rte_ipv6_udptcp_cksum(ip6, icmp);

		memcpy(icmp + 2, &ck, 2);
	}
	if (dst_mac == NULL) {
		ip6_multicast_mac(dst->v6, &mac);
		dst_mac = &mac;
	}
	return wn_net_send_l2(nif, m, dst_mac, RTE_ETHER_TYPE_IPV6);
}

/* An NDP message of 32 octets (NS or NA with one link-layer address option), zeroed. */
static struct rte_mbuf *
ndp_alloc(struct wn_netif *nif, uint8_t **p)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(nif->conf.pool);

	if (m == NULL) {
		nif->st.tx_drop_nombuf++;
		return NULL;
	}
	*p = (uint8_t *)rte_pktmbuf_append(m, 32);
	if (*p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(*p, 0, 32);
	return m;
}

/* @p tgt's solicited-node multicast group ff02::1:ffXX:XXXX (RFC 4291 §2.7.1). */
static void
solicited_node(const struct wn_ip_addr *tgt, struct wn_ip_addr *snm)
{
	memset(snm, 0, sizeof(*snm));
	snm->family = WN_AF_INET6;
	snm->v6[0] = 0xff;
	snm->v6[1] = 0x02;
	snm->v6[11] = 0x01;
	snm->v6[12] = 0xff;
	memcpy(&snm->v6[13], &tgt->v6[13], 3);
}

/*
 * A Neighbor Solicitation for @p tgt (RFC 4861 §4.3: type, code, cksum, reserved, target)
 * from @p src to its solicited-node group, with one 8-octet option (@p opt_type, 6 octets of
 * @p opt); @p sent counts it once built.
 */
static int
ns_send(struct wn_netif *nif, const struct wn_ip_addr *src, const struct wn_ip_addr *tgt,
	uint8_t opt_type, const uint8_t opt[6], uint64_t *sent)
{
	struct wn_ip_addr snm = { .family = WN_AF_INET6 };
	uint8_t *p;
	struct rte_mbuf *m = ndp_alloc(nif, &p);

	if (m == NULL)
		return -ENOBUFS;
	p[0] = ICMP6_NS;
	memcpy(p + 8, tgt->v6, 16);
	p[24] = opt_type;
	p[25] = 1; /* length in units of 8 octets */
	memcpy(p + 26, opt, 6);
	solicited_node(tgt, &snm);
	(*sent)++;
	return icmp6_send(nif, m, src, &snm, NULL);
}

int
wn_net_ndp_send_ns(struct wn_netif *nif, const struct wn_ip_addr *src, const struct wn_ip_addr *tgt)
{
	return ns_send(nif, src, tgt, 1 /* source link-layer address */,
		       nif->conf.mac.addr_bytes, &nif->st.tx_arp_req);
}

/*
 * A DAD probe (RFC 4862 §5.4.2): a Neighbor Solicitation for tentative address @p tgt from
 * the unspecified address to its solicited-node group, without a source link-layer option,
 * with a Nonce option (RFC 7527 §4.1, format of RFC 3971 §5.3.2) so that a looped-back
 * probe is told from another node's.
 */
int
wn_net_ndp_send_dad(struct wn_netif *nif, const struct wn_ip_addr *tgt, const uint8_t nonce[6])
{
	static const struct wn_ip_addr any = { .family = WN_AF_INET6 };
	return ns_send(nif, &any, tgt, 14 /* Nonce */, nonce, &nif->st.dad_probes);
}

/* ff02::1, the link-local all-nodes group (RFC 4291 §2.7.1). */
void
wn_net_ip6_all_nodes(struct wn_ip_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->family = WN_AF_INET6;
	a->v6[0] = 0xff;
	a->v6[1] = 0x02;
	a->v6[15] = 0x01;
}

int
wn_net_ndp_send_na(struct wn_netif *nif, const struct wn_ip_addr *src, const struct wn_ip_addr *dst,
	    const struct rte_ether_addr *dst_mac, bool solicited)
{
	uint8_t *p;
	struct rte_mbuf *m = ndp_alloc(nif, &p);

	if (m == NULL)
		return -ENOBUFS;
	/* RFC 4861 §4.4: R=0, S=solicited, O=1; target link-layer address option. */
	p[0] = ICMP6_NA;
	p[4] = (uint8_t)((solicited ? 0x40 : 0) | 0x20);
	memcpy(p + 8, src->v6, 16);
	p[24] = 2;
	p[25] = 1;
	memcpy(p + 26, nif->conf.mac.addr_bytes, 6);
	if (solicited)
		nif->st.tx_arp_reply++;
	return icmp6_send(nif, m, src, dst, dst_mac);
}
