/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive side: Ethernet, ARP (RFC 826), IPv4 (RFC 791) + reassembly, ICMP echo (RFC 792),
 * IPv6 (RFC 8200), ICMPv6 echo (RFC 4443) and NDP NS/NA (RFC 4861). */
#include <errno.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "net_priv.h"
#include "wn_dpdk_compat.h"

#define ICMP6_ECHO_REQUEST 128
#define ICMP6_ECHO_REPLY 129
#define ICMP6_NS 135
#define ICMP6_NA 136
#define ETH_HLEN ((uint16_t)sizeof(struct rte_ether_hdr))

static void
drop(struct rte_mbuf *m, uint64_t *counter)
{
	(*counter)++;
	rte_pktmbuf_free(m);
}

/*
 * WN_NET_CKSUM_LOCAL: a TCP segment (IP header at the data offset) whose checksum field holds
 * its pseudo-header sum was sent by a peer on the same local link that left the sum to
 * "offload": mark it good, as a NIC that verified it would. Any other value, the full sum
 * of a peer that computes it or a segment an impairer corrupted (it completes the sum
 * first), is left to TCP to verify.
 */
static inline void
local_cksum_check(const struct wn_netif *nif, struct rte_mbuf *m)
{
	const struct rte_tcp_hdr *th;

	if (!nif->local_cksum || (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) != 0 ||
	    rte_pktmbuf_data_len(m) < m->l3_len + sizeof(*th))
		return;
	th = rte_pktmbuf_mtod_offset(m, const struct rte_tcp_hdr *, m->l3_len);
	if (th->cksum == wn_net_tcp_phdr_cksum(rte_pktmbuf_mtod(m, const void *)))
		m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
}

/* The slot of @p proto's receive hook, or WN_NETIF_MAX_PROTO_HOOKS. */
static inline unsigned int
hook_of(const struct wn_netif *nif, uint8_t proto)
{
	unsigned int i;

	for (i = 0; i < WN_NETIF_MAX_PROTO_HOOKS; i++)
		if (nif->hooks[i].fn != NULL && nif->hooks[i].proto == proto)
			break;
	return i;
}

/* A packet (Ethernet first) of a hooked protocol: IP header first, to the hook. */
static bool
hook_input(struct wn_netif *nif, struct rte_mbuf *m, uint8_t proto, uint32_t l3_len,
	   uint32_t ptype, uint64_t now)
{
	unsigned int h = hook_of(nif, proto);

	if (h == WN_NETIF_MAX_PROTO_HOOKS)
		return false;
	rte_pktmbuf_adj(m, ETH_HLEN);
	m->l2_len = 0;
	m->l3_len = l3_len;
	m->packet_type = ptype;
	nif->st.rx_proto++;
	nif->hooks[h].fn(nif->hooks[h].arg, m, now);
	return true;
}

int
wn_net_if_proto_rx(struct wn_netif *nif, uint8_t proto, wn_net_proto_rx_fn fn, void *arg)
{
	unsigned int h;

	if (proto == IPPROTO_TCP || proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6)
		return -EINVAL;
	h = hook_of(nif, proto);
	if (h == WN_NETIF_MAX_PROTO_HOOKS) {
		if (fn == NULL)
			return 0;
		for (h = 0; h < WN_NETIF_MAX_PROTO_HOOKS && nif->hooks[h].fn != NULL; h++)
			;
		if (h == WN_NETIF_MAX_PROTO_HOOKS)
			return -ENOSPC;
	}
	nif->hooks[h].proto = proto;
	nif->hooks[h].fn = fn;
	nif->hooks[h].arg = arg;
	return 0;
}

static void
arp_input(struct wn_netif *nif, struct rte_mbuf *m, uint64_t now)
{
	const struct rte_arp_hdr *ah;
	struct wn_ip_addr sip = { .family = WN_AF_INET }, tip = { .family = WN_AF_INET };
	struct rte_ether_addr sha;
	struct neigh *n;
	bool merge = false;
	uint16_t op;

	if (rte_pktmbuf_data_len(m) < ETH_HLEN + sizeof(*ah))
		return drop(m, &nif->st.rx_drop_short);
	ah = rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *, ETH_HLEN);
	op = rte_be_to_cpu_16(ah->arp_opcode);
	if (ah->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    ah->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    ah->arp_hlen != RTE_ETHER_ADDR_LEN || ah->arp_plen != 4 ||
	    (op != RTE_ARP_OP_REQUEST && op != RTE_ARP_OP_REPLY) ||
	    !rte_is_unicast_ether_addr(&ah->arp_data.arp_sha))
		return drop(m, &nif->st.rx_drop_arp);
	sip.v4 = ah->arp_data.arp_sip;
	tip.v4 = ah->arp_data.arp_tip;
	sha = ah->arp_data.arp_sha;
	nif->st.rx_arp++;
	/* RFC 826 "Packet Reception": update an existing entry first (merge flag). */
	if (sip.v4 != 0) {
		n = wn_net_neigh_find(nif, &sip);
		if (n != NULL) {
			wn_net_neigh_resolved(nif, n, &sha, now);
			merge = true;
		}
	}
	if (!wn_net_if_is_local(nif, &tip)) {
		rte_pktmbuf_free(m);
		return;
	}
	if (!merge && sip.v4 != 0 && sip.v4 != tip.v4) {
		n = wn_net_neigh_create(nif, &sip);
		if (n != NULL)
			wn_net_neigh_resolved(nif, n, &sha, now);
	}
	rte_pktmbuf_free(m);
	if (op == RTE_ARP_OP_REQUEST && sip.v4 != tip.v4 && !nif->conf.secondary)
		wn_net_arp_send(nif, RTE_ARP_OP_REPLY, &sha, tip.v4, sip.v4, &sha);
}

/* Turn a received frame around in place: swap MACs and queue it. */
static void
reflect_l2(struct wn_netif *nif, struct rte_mbuf *m)
{
	struct rte_ether_hdr *eh;

	eh = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, ETH_HLEN);
	if (eh == NULL)
		return drop(m, &nif->st.tx_drop_nombuf);
	rte_ether_addr_copy(&eh->src_addr, &eh->dst_addr);
	rte_ether_addr_copy(&nif->conf.mac, &eh->src_addr);
	m->ol_flags = 0;
	wn_net_if_txq_push(nif, m);
}

/* RFC 792 echo: reply in place, same identifier, sequence and data. */
static void
icmp4_input(struct wn_netif *nif, struct rte_mbuf *m, struct rte_ipv4_hdr *ip, uint16_t hl)
{
	uint16_t len = (uint16_t)(rte_be_to_cpu_16(ip->total_length) - hl);
	struct rte_icmp_hdr *ic;
	uint16_t sum;
	rte_be32_t a;

	if (len < sizeof(*ic) || rte_pktmbuf_data_len(m) < ETH_HLEN + hl + sizeof(*ic))
		return drop(m, &nif->st.rx_drop_icmp);
	ic = (struct rte_icmp_hdr *)((uint8_t *)ip + hl);
	if (rte_raw_cksum_mbuf(m, ETH_HLEN + hl, len, &sum) != 0 || sum != 0xffff)
		return drop(m, &nif->st.rx_drop_icmp);
	if (ic->icmp_type != RTE_ICMP_TYPE_ECHO_REQUEST || ic->icmp_code != 0)
		return drop(m, &nif->st.rx_drop_ip_proto);
	nif->st.rx_icmp_echo++;
	ic->icmp_type = RTE_ICMP_TYPE_ECHO_REPLY;
	ic->icmp_cksum = 0;
	rte_raw_cksum_mbuf(m, ETH_HLEN + hl, len, &sum);
	ic->icmp_cksum = (uint16_t)~sum;
	a = ip->src_addr;
	ip->src_addr = ip->dst_addr;
	ip->dst_addr = a;
	ip->time_to_live = 64;
	ip->packet_id = rte_cpu_to_be_16(nif->ip_id++);
	ip->fragment_offset = 0;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	rte_pktmbuf_adj(m, ETH_HLEN);
	reflect_l2(nif, m);
}

static struct rte_mbuf *
ip4_input(struct wn_netif *nif, struct rte_mbuf *m, uint64_t now)
{
	struct rte_ipv4_hdr *ip;
	struct wn_ip_addr dst = { .family = WN_AF_INET };
	uint32_t tot, hl, avail;

	if (rte_pktmbuf_data_len(m) < ETH_HLEN + sizeof(*ip)) {
		drop(m, &nif->st.rx_drop_short);
		return NULL;
	}
	ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, ETH_HLEN);
	hl = rte_ipv4_hdr_len(ip);
	tot = rte_be_to_cpu_16(ip->total_length);
	avail = rte_pktmbuf_pkt_len(m) - ETH_HLEN;
	/* RFC 791 §3.1 / RFC 1122 §3.2.1: version, IHL, total length sanity. */
	if ((ip->version_ihl >> 4) != 4 || hl < sizeof(*ip) || tot < hl || tot > avail ||
	    rte_pktmbuf_data_len(m) < ETH_HLEN + hl) {
		drop(m, &nif->st.rx_drop_ip_hdr);
		return NULL;
	}
	if (avail > tot) { /* Ethernet padding */
		if (m->nb_segs != 1) {
			drop(m, &nif->st.rx_drop_ip_hdr);
			return NULL;
		}
		rte_pktmbuf_trim(m, (uint16_t)(avail - tot));
	}
	switch (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) {
	case RTE_MBUF_F_RX_IP_CKSUM_GOOD:
		break;
	case RTE_MBUF_F_RX_IP_CKSUM_BAD:
		drop(m, &nif->st.rx_drop_ip_cksum);
		return NULL;
	default:
		if (rte_raw_cksum(ip, hl) != 0xffff) {
			drop(m, &nif->st.rx_drop_ip_cksum);
			return NULL;
		}
	}
	dst.v4 = ip->dst_addr;
	if (!wn_net_if_is_local(nif, &dst)) {
		drop(m, &nif->st.rx_drop_ip_addr);
		return NULL;
	}
	if (rte_ipv4_frag_pkt_is_fragmented(ip)) {
		struct rte_mbuf *mo;

		nif->st.rx_frag++;
		if (nif->frag_tbl == NULL) {
			drop(m, &nif->st.rx_frag_drop);
			return NULL;
		}
		m->l2_len = ETH_HLEN;
		m->l3_len = hl;
		mo = rte_ipv4_frag_reassemble_packet(nif->frag_tbl, &nif->dr, m, now, ip);
		if (mo == NULL)
			return NULL; /* held, or dropped into the death row */
		nif->st.rx_reassembled++;
		m = mo;
		ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, m->l2_len);
		hl = rte_ipv4_hdr_len(ip);
		/* the library rewrote the header; keep it self-consistent for checksums */
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	switch (ip->next_proto_id) {
	case IPPROTO_TCP:
		rte_pktmbuf_adj(m, ETH_HLEN);
		m->l2_len = 0;
		m->l3_len = hl;
		m->packet_type = RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP;
		local_cksum_check(nif, m);
		return m;
	case IPPROTO_ICMP:
		icmp4_input(nif, m, ip, (uint16_t)hl);
		return NULL;
	default:
		if (!hook_input(nif, m, ip->next_proto_id, hl, RTE_PTYPE_L3_IPV4, now))
			drop(m, &nif->st.rx_drop_ip_proto);
		return NULL;
	}
}

static bool
ip6_is_solicited_node_of(const struct wn_netif *nif, const uint8_t *d)
{
	static const uint8_t pfx[13] = { 0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff };

	if (memcmp(d, pfx, 13) != 0)
		return false;
	for (unsigned int i = 0; i < nif->nb_addrs; i++)
		if (nif->addrs[i].addr.family == WN_AF_INET6 &&
		    memcmp(nif->addrs[i].addr.v6 + 13, d + 13, 3) == 0)
			return true;
	return false;
}

static bool
ip6_is_all_nodes(const uint8_t *d)
{
	static const uint8_t all[16] = { 0xff, 0x02, [15] = 0x01 };

	return memcmp(d, all, 16) == 0;
}

/*
 * Find NDP option @p type (a link-layer address, 1 or 2, or a Nonce, 14: each at least 8
 * octets) in the options of an NDP message: @return its data (6 octets at least), or NULL.
 */
static const uint8_t *
ndp_opt(const uint8_t *opt, uint32_t len, uint8_t type, bool *bad)
{
	const uint8_t *found = NULL;

	while (len >= 2) {
		uint32_t ol = (uint32_t)opt[1] * 8;

		if (ol == 0 || ol > len) { /* RFC 4861 §4.6: zero length is invalid */
			*bad = true;
			return NULL;
		}
		if (opt[0] == type && ol >= 8)
			found = opt + 2;
		opt += ol;
		len -= ol;
	}
	return found;
}

static void
icmp6_input(struct wn_netif *nif, struct rte_mbuf *m, struct rte_ipv6_hdr *ip6, uint64_t now)
{
	uint16_t plen = rte_be_to_cpu_16(ip6->payload_len);
	struct wn_ip_addr src = { .family = WN_AF_INET6 }, tgt = { .family = WN_AF_INET6 };
	const uint8_t *lla;
	uint8_t *ic;
	bool bad = false;
	struct neigh *n;
	struct netif_addr *na;

	if (plen < 8 || rte_pktmbuf_data_len(m) < ETH_HLEN + sizeof(*ip6) + 8)
		return drop(m, &nif->st.rx_drop_icmp);
	ic = (uint8_t *)(ip6 + 1);
	if (rte_ipv6_udptcp_cksum_mbuf_verify(m, ip6, ETH_HLEN + sizeof(*ip6)) != 0)
		return drop(m, &nif->st.rx_drop_icmp);
	memcpy(src.v6, WN_IP6_SRC(ip6), 16);
	switch (ic[0]) {
	case ICMP6_ECHO_REQUEST: {
		uint8_t tmp[16];
		uint16_t ck;

		if (WN_IP6_DST(ip6)[0] == 0xff) /* no echo to multicast */
			return drop(m, &nif->st.rx_drop_ip_addr);
		nif->st.rx_icmp_echo++;
		ic[0] = ICMP6_ECHO_REPLY;
		memcpy(tmp, WN_IP6_SRC(ip6), 16);
		memcpy(WN_IP6_SRC(ip6), WN_IP6_DST(ip6), 16);
		memcpy(WN_IP6_DST(ip6), tmp, 16);
		ip6->hop_limits = 64;
		ic[2] = ic[3] = 0;
		rte_pktmbuf_adj(m, ETH_HLEN);
		ck = rte_ipv6_udptcp_cksum_mbuf(m, ip6, sizeof(*ip6));
		memcpy(ic + 2, &ck, 2);
		return reflect_l2(nif, m);
	}
	case ICMP6_NS:
	case ICMP6_NA:
		break;
	default:
		return drop(m, &nif->st.rx_drop_ip_proto);
	}
	/* RFC 4861 §7.1.1 / §7.1.2 validation. */
	if (ip6->hop_limits != 255 || ic[1] != 0 || plen < 24 ||
	    rte_pktmbuf_data_len(m) < ETH_HLEN + sizeof(*ip6) + plen)
		return drop(m, &nif->st.rx_drop_icmp);
	memcpy(tgt.v6, ic + 8, 16);
	na = wn_net_if_addr_find(nif, &tgt);
	if (ic[0] == ICMP6_NS) {
		bool dad = memcmp(src.v6, (uint8_t[16]){ 0 }, 16) == 0;
		const uint8_t *nonce = NULL;

		lla = ndp_opt(ic + 24, plen - 24u, 1, &bad);
		if (dad && !bad)
			nonce = ndp_opt(ic + 24, plen - 24u, 14, &bad);
		/* RFC 4861 §7.1.1: from the unspecified address, to a solicited-node group and
		 * without a source link-layer address option */
		if (bad || (dad && (lla != NULL || !ip6_is_solicited_node_of(nif, WN_IP6_DST(ip6)))))
			return drop(m, &nif->st.rx_drop_icmp);
		if (na == NULL) {
			rte_pktmbuf_free(m);
			return;
		}
		nif->st.rx_ndp++;
		if (na->state != WN_ADDR_PREFERRED) {
			/* a tentative target: a probe tells a duplicate (dad.c); an ordinary
			 * solicitation is ignored (RFC 4862 §5.4.3), as for a duplicate one */
			if (dad)
				wn_net_dad_ns_input(nif, na, nonce, now);
			rte_pktmbuf_free(m);
			return;
		}
		if (lla != NULL) {
			n = wn_net_neigh_find(nif, &src);
			if (n == NULL)
				n = wn_net_neigh_create(nif, &src);
			if (n != NULL)
				wn_net_neigh_resolved(nif, n, (const struct rte_ether_addr *)lla,
						      now);
		}
		if (nif->conf.secondary) {
			/* another netif of the port answers */
		} else if (dad) {
			/* RFC 4861 §7.2.4: defend it, to all-nodes, not solicited */
			struct wn_ip_addr all;

			wn_net_ip6_all_nodes(&all);
			wn_net_ndp_send_na(nif, &tgt, &all, NULL, false);
		} else {
			struct rte_ether_addr dmac;
			const struct rte_ether_hdr *eh =
				rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

			dmac = lla != NULL ? *(const struct rte_ether_addr *)lla : eh->src_addr;
			wn_net_ndp_send_na(nif, &tgt, &src, &dmac, true);
		}
		rte_pktmbuf_free(m);
		return;
	}
	/* NA: update an entry we have (RFC 4861 §7.2.5); never create one. */
	lla = ndp_opt(ic + 24, plen - 24u, 2, &bad);
	/* RFC 4861 §7.1.2: a multicast NA must not be solicited */
	if (bad || (WN_IP6_DST(ip6)[0] == 0xff && (ic[4] & 0x40) != 0))
		return drop(m, &nif->st.rx_drop_icmp);
	nif->st.rx_ndp++;
	/* (an address found duplicate is the other node's: its NA is a neighbour's) */
	if (na != NULL && na->state != WN_ADDR_DUPLICATE) {
		const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

		/* another node advertises an address of ours (not our own frame looped back) */
		if (!rte_is_same_ether_addr(&eh->src_addr, &nif->conf.mac))
			wn_net_dad_na_input(nif, na, now);
		rte_pktmbuf_free(m);
		return;
	}
	n = wn_net_neigh_find(nif, &tgt);
	if (n != NULL && lla != NULL)
		wn_net_neigh_resolved(nif, n, (const struct rte_ether_addr *)lla, now);
	rte_pktmbuf_free(m);
}

static struct rte_mbuf *
ip6_input(struct wn_netif *nif, struct rte_mbuf *m, uint64_t now)
{
	struct rte_ipv6_hdr *ip6;
	struct wn_ip_addr dst = { .family = WN_AF_INET6 };
	uint32_t plen, avail;

	if (rte_pktmbuf_data_len(m) < ETH_HLEN + sizeof(*ip6)) {
		drop(m, &nif->st.rx_drop_short);
		return NULL;
	}
	ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, ETH_HLEN);
	plen = rte_be_to_cpu_16(ip6->payload_len);
	avail = rte_pktmbuf_pkt_len(m) - ETH_HLEN - (uint32_t)sizeof(*ip6);
	if ((rte_be_to_cpu_32(ip6->vtc_flow) >> 28) != 6 || plen > avail) {
		drop(m, &nif->st.rx_drop_ip_hdr);
		return NULL;
	}
	if (avail > plen) {
		if (m->nb_segs != 1) {
			drop(m, &nif->st.rx_drop_ip_hdr);
			return NULL;
		}
		rte_pktmbuf_trim(m, (uint16_t)(avail - plen));
	}
	memcpy(dst.v6, WN_IP6_DST(ip6), 16);
	if (!wn_net_if_is_local(nif, &dst) &&
	    !(ip6->proto == IPPROTO_ICMPV6 &&
	      (ip6_is_all_nodes(WN_IP6_DST(ip6)) || ip6_is_solicited_node_of(nif, WN_IP6_DST(ip6))))) {
		drop(m, &nif->st.rx_drop_ip_addr);
		return NULL;
	}
	switch (ip6->proto) {
	case IPPROTO_TCP:
		rte_pktmbuf_adj(m, ETH_HLEN);
		m->l2_len = 0;
		m->l3_len = sizeof(*ip6);
		m->packet_type = RTE_PTYPE_L3_IPV6 | RTE_PTYPE_L4_TCP;
		local_cksum_check(nif, m);
		return m;
	case IPPROTO_ICMPV6:
		icmp6_input(nif, m, ip6, now);
		return NULL;
	case IPPROTO_FRAGMENT:
		/* IPv6 reassembly is not implemented: counted and dropped. */
		nif->st.rx_frag++;
		drop(m, &nif->st.rx_frag_drop);
		return NULL;
	case IPPROTO_HOPOPTS:
	case IPPROTO_ROUTING:
	case IPPROTO_DSTOPTS:
		drop(m, &nif->st.rx_drop_ip_opts);
		return NULL;
	default:
		if (!hook_input(nif, m, ip6->proto, sizeof(*ip6), RTE_PTYPE_L3_IPV6, now))
			drop(m, &nif->st.rx_drop_ip_proto);
		return NULL;
	}
}

uint16_t
wn_net_rx_bulk(struct wn_netif *nif, struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	uint16_t k = 0;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct rte_ether_hdr *eh;
		struct rte_mbuf *up = NULL;

		nif->st.rx_pkts++;
		if (rte_pktmbuf_data_len(m) < ETH_HLEN) {
			drop(m, &nif->st.rx_drop_short);
			continue;
		}
		eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
		if (!rte_is_same_ether_addr(&eh->dst_addr, &nif->conf.mac) &&
		    !rte_is_broadcast_ether_addr(&eh->dst_addr) &&
		    !(eh->dst_addr.addr_bytes[0] == 0x33 && eh->dst_addr.addr_bytes[1] == 0x33)) {
			drop(m, &nif->st.rx_drop_mac);
			continue;
		}
		switch (rte_be_to_cpu_16(eh->ether_type)) {
		case RTE_ETHER_TYPE_ARP:
			arp_input(nif, m, now);
			break;
		case RTE_ETHER_TYPE_IPV4:
			up = ip4_input(nif, m, now);
			break;
		case RTE_ETHER_TYPE_IPV6:
			up = ip6_input(nif, m, now);
			break;
		default:
			drop(m, &nif->st.rx_drop_ethertype);
		}
		if (up != NULL)
			pkts[k++] = up;
	}
	if (nif->frag_tbl != NULL)
		rte_ip_frag_free_death_row(&nif->dr, 0);
	nif->st.rx_l4 += k;
	return k;
}
