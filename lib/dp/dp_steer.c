/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp: software flow steering between shards (a connection lives on the shard its 4-tuple
 * hashes to; frames that arrive on another shard's queue are handed over on its ring) and the
 * loopback of segments to our own addresses (dp_priv.h); a control-protocol address as an
 * endpoint (wn_dp_ep_of_ctl(), wn_dp_embed.h), which steering and conn.c read.
 */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "dp_priv.h"
#include "wn_wire_ud.h"

void
wn_dp_ep_of_ctl(const struct wn_ctl_addr *a, struct wn_llp_ep *e)
{
	memset(e, 0, sizeof(*e));
	if (a->family == WN_CTL_AF_INET6) {
		e->addr.family = WN_AF_INET6;
		memcpy(e->addr.v6, a->addr, 16);
	} else {
		e->addr.family = WN_AF_INET;
		memcpy(&e->addr.v4, a->addr, 4);
	}
	e->port = a->port;
}

/*
 * The shard of a flow: the Toeplitz hash of its endpoints in a canonical order, so both ends
 * of a connection between two warpnicd instances with the same number of lcores pick the
 * same index; a peer then sends on the queue (memif queue pair) of the owning shard and no
 * frame has to cross shards. InfiniBand-style connections (the IB port at either end) live
 * on shard 0, where their QPs' endpoints wait for them (lib/cm).
 */
static uint16_t
steer_ep(const struct wn_dp_group *g, const struct wn_tcp_endpoint *l,
	 const struct wn_tcp_endpoint *r)
{
	uint16_t n = g->n;
	int c = memcmp(&l->addr, &r->addr, sizeof(l->addr));

	if (g->c.ib_port != 0 && (l->port == g->c.ib_port || r->port == g->c.ib_port))
		return 0;

	if (c > 0 || (c == 0 && l->port > r->port))
		return (uint16_t)wn_tcp_flow_steer(r, l, n);
	return (uint16_t)wn_tcp_flow_steer(l, r, n);
}

uint16_t
wn_dp_steer(const struct wn_dp_group *g, const struct wn_ctl_addr *local,
	 const struct wn_ctl_addr *remote)
{
	struct wn_llp_ep le, re;
	struct wn_tcp_endpoint l, r;

	if (g->n == 1)
		return 0;
	wn_dp_ep_of_ctl(local, &le);
	wn_dp_ep_of_ctl(remote, &re);
	memset(&l, 0, sizeof(l));
	memset(&r, 0, sizeof(r));
	l.addr = le.addr;
	l.port = le.port;
	r.addr = re.addr;
	r.port = re.port;
	return steer_ep(g, &l, &r);
}

/* ---------------------------------------------------------------- steering */

enum { STEER_BCAST = 0xffff };

/* A UDP datagram to the UD port: shard 0's, with every UD QP (dp_ud.c). */
static bool
steer_ud(const struct wn_dp *dp, const uint8_t *l4)
{
	uint16_t port = dp->c.ud_port != 0 ? dp->c.ud_port : WN_UD_PORT;

	return (uint16_t)(l4[2] << 8 | l4[3]) == port;
}

/*
 * Which shard a frame belongs to: the owner of its TCP flow (or SCTP association: its
 * ports sit where TCP's do), shard 0 for datagrams to the UD port, every shard for ARP and
 * NDP (neighbour tables, DAD), this shard for the rest (ICMP and ICMPv6 echo, fragments).
 */
static uint16_t
steer_frame(const struct wn_dp *dp, const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint16_t type = rte_be_to_cpu_16(eh->ether_type);
	struct wn_tcp_endpoint l, r;
	const uint8_t *l4;

	memset(&l, 0, sizeof(l));
	memset(&r, 0, sizeof(r));
	if (type == RTE_ETHER_TYPE_ARP)
		return STEER_BCAST;
	if (type == RTE_ETHER_TYPE_IPV4 &&
	    rte_pktmbuf_data_len(m) >= sizeof(*eh) + sizeof(struct rte_ipv4_hdr) + 4) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eh + 1);
		uint32_t hl = (ip->version_ihl & 0xf) * 4u;

		if (ip->next_proto_id == IPPROTO_UDP && hl >= 20 &&
		    rte_pktmbuf_data_len(m) >= sizeof(*eh) + hl + 4 &&
		    steer_ud(dp, (const uint8_t *)ip + hl))
			return 0;
		if ((ip->next_proto_id != IPPROTO_TCP && ip->next_proto_id != IPPROTO_SCTP) ||
		    hl < 20 ||
		    (rte_be_to_cpu_16(ip->fragment_offset) &
		     (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0 ||
		    rte_pktmbuf_data_len(m) < sizeof(*eh) + hl + 4)
			return dp->idx;
		l.addr.family = r.addr.family = WN_AF_INET;
		l.addr.v4 = ip->dst_addr;
		r.addr.v4 = ip->src_addr;
		l4 = (const uint8_t *)ip + hl;
	} else if (type == RTE_ETHER_TYPE_IPV6 &&
		   rte_pktmbuf_data_len(m) >= sizeof(*eh) + sizeof(struct rte_ipv6_hdr) + 4) {
		const struct rte_ipv6_hdr *ip6 = (const struct rte_ipv6_hdr *)(eh + 1);

		/* neighbour discovery (RFC 4861 types 133..137) feeds every shard's table; an
		 * echo request is answered where it arrived, once */
		if (ip6->proto == IPPROTO_ICMPV6) {
			uint8_t t = *(const uint8_t *)(ip6 + 1);

			return t >= 133 && t <= 137 ? STEER_BCAST : dp->idx;
		}
		if (ip6->proto == IPPROTO_UDP && steer_ud(dp, (const uint8_t *)(ip6 + 1)))
			return 0;
		if (ip6->proto != IPPROTO_TCP && ip6->proto != IPPROTO_SCTP)
			return dp->idx;
		l.addr.family = r.addr.family = WN_AF_INET6;
		memcpy(l.addr.v6, WN_IP6_DST(ip6), 16);
		memcpy(r.addr.v6, WN_IP6_SRC(ip6), 16);
		l4 = (const uint8_t *)(ip6 + 1);
	} else {
		return dp->idx;
	}
	r.port = (uint16_t)(l4[0] << 8 | l4[1]);
	l.port = (uint16_t)(l4[2] << 8 | l4[3]);
	return steer_ep(dp->g, &l, &r);
}

static void
handoff(struct wn_dp *dp, uint16_t to, struct rte_mbuf *m)
{
	if (rte_ring_mp_enqueue(dp->g->shard[to]->handoff, m) != 0) {
		dp->st.handoff_drop++;
		rte_pktmbuf_free(m);
		return;
	}
	dp->st.handoff_tx++;
	dp->wake_mask |= 1u << to; /* rung at the end of the burst if it sleeps */
}

/* Keep this shard's frames at the front of @p pkts, hand the others over. @return kept. */
uint16_t
wn_dp_steer_burst(struct wn_dp *dp, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i, k = 0;

	for (i = 0; i < n; i++) {
		uint16_t to = steer_frame(dp, pkts[i]);

		if (to == dp->idx) {
			pkts[k++] = pkts[i];
		} else if (to == STEER_BCAST) {
			for (uint16_t s = 0; s < dp->g->n; s++) {
				struct rte_mbuf *c;

				if (s == dp->idx)
					continue;
				c = rte_pktmbuf_copy(pkts[i], dp->c.pool, 0, UINT32_MAX);
				if (c == NULL)
					dp->st.handoff_drop++;
				else
					handoff(dp, s, c);
			}
			pkts[k++] = pkts[i];
		} else {
			handoff(dp, to, pkts[i]);
		}
	}
	return k;
}

/*
 * Segments to one of our own addresses (a client connecting to a listener of this same
 * instance) never reach the wire: they go back into TCP input, as the kernel's loopback
 * does, with their checksums marked good (never computed). A segment whose connection lives
 * on another shard gets an Ethernet header and goes through that shard's handoff ring.
 * @return the packets left for the port, compacted at the front of @p pkts.
 */
uint16_t
wn_dp_loopback(struct wn_dp *dp, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *loop[DP_BURST];
	uint16_t i, k = 0, nl = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);
		struct wn_ip_addr dst;
		struct rte_ether_hdr *eh;
		uint32_t l3;
		uint16_t to;
		bool sctp;

		memset(&dst, 0, sizeof(dst));
		if ((ip[0] >> 4) == 4) {
			dst.family = WN_AF_INET;
			memcpy(&dst.v4, ip + 16, 4);
		} else {
			dst.family = WN_AF_INET6;
			memcpy(dst.v6, ip + 24, 16);
		}
		if (!wn_net_if_is_local(dp->nif, &dst)) {
			pkts[k++] = m;
			continue;
		}
		/* SCTP's (one segment each) go to lib/sctp as lib/net's receive hook would */
		l3 = dst.family == WN_AF_INET ? (ip[0] & 0xfu) * 4u : 40u;
		sctp = ip[dst.family == WN_AF_INET ? 9 : 6] == IPPROTO_SCTP;
		dp->st.loopback_pkts++;
		if (m->nb_segs > 1) {
			/* a zero-copy chain: TCP input wants one contiguous frame, as a NIC's */
			struct rte_mbuf *f = rte_pktmbuf_copy(m, dp->c.pool, 0, UINT32_MAX);

			rte_pktmbuf_free(m);
			if (f == NULL) {
				dp->st.tx_drop++;
				continue;
			}
			dp->st.loopback_copies++;
			m = f;
		}
		m->ol_flags = RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		eh = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, sizeof(*eh));
		if (eh == NULL) {
			rte_pktmbuf_free(m);
			continue;
		}
		rte_eth_macaddr_get(dp->c.port_id, &eh->src_addr);
		eh->dst_addr = eh->src_addr;
		eh->ether_type = rte_cpu_to_be_16(dst.family == WN_AF_INET ? RTE_ETHER_TYPE_IPV4
									    : RTE_ETHER_TYPE_IPV6);
		to = dp->g->n > 1 ? steer_frame(dp, m) : dp->idx;
		if (to != dp->idx && to != STEER_BCAST) {
			handoff(dp, to, m);
			continue;
		}
		rte_pktmbuf_adj(m, sizeof(*eh));
		if (sctp) {
			m->l3_len = l3;
			wn_sctp_input(dp->llp[DP_LLP_SCTP], m, dp->now);
			continue;
		}
		loop[nl++] = m;
	}
	if (nl > 0)
		wn_tcp_rx_bulk(dp->tcp, loop, nl, dp->now);
	return k;
}

