/* SPDX-License-Identifier: BSD-3-Clause */
/* Netif lifetime, addresses, timers (reassembly, neighbour expiry and solicitation). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_hash_crc.h>
#include <rte_arp.h>
#include <rte_malloc.h>

#include "net_priv.h"
#include "wn_port.h"

RTE_LOG_REGISTER_DEFAULT(wn_net_logtype, NOTICE);

/* Neighbour expiry scan period: walking the table every loop iteration would be waste. */
#define NEIGH_SCAN_US 10000
/* Reassembly table associativity (rte_ip_frag wants a power of two). */
#define FRAG_BUCKET_ENTRIES 4

/*
 * Microseconds = cycles * 10^6 / hz as one multiplication and a shift (mult = 10^6 * 2^64 /
 * hz, below 2^53 for any hz above 2 MHz, so the 128-bit product of a 64-bit cycle count
 * never overflows, and the rounding error stays below a microsecond for 2^64 cycles): no
 * division and no call for hz on the loop's path. Computing
 * cycles * 10^6 in 64 bits first, as before, wrapped once the cycle counter passed
 * 2^64 / 10^6 (about 1.7 hours of uptime at 3 GHz) and the clock jumped back by as much.
 */
#define NOW_SHIFT 64

uint64_t
wn_net_now_us(void)
{
	static uint64_t mult; /* every thread computes the same value: a benign race */
	uint64_t m = __atomic_load_n(&mult, __ATOMIC_RELAXED);

	if (unlikely(m == 0)) {
		m = (uint64_t)(((unsigned __int128)1000000 << NOW_SHIFT) / rte_get_timer_hz());
		__atomic_store_n(&mult, m, __ATOMIC_RELAXED);
	}
	return (uint64_t)(((unsigned __int128)rte_get_timer_cycles() * m) >> NOW_SHIFT);
}

/*
 * TX TCP checksum offload, unless the port's driver writes 0xffff for a TCP checksum that
 * computes to 0x0000: RFC 768's rule, for UDP only (RFC 9293 §3.1 sends the sum as it is).
 * DPDK 22.11's net_tap does (it sums in software anyway, so nothing is lost).
 */
static bool
tx_tcp_cksum_offload(const struct wn_netif_conf *conf)
{
	static const char *const zero_as_ffff[] = { "net_tap" };
	struct rte_eth_dev_info info;

	if (!(conf->tx_offload_capa & RTE_ETH_TX_OFFLOAD_TCP_CKSUM))
		return false;
	if (!rte_eth_dev_is_valid_port(conf->port_id) ||
	    rte_eth_dev_info_get(conf->port_id, &info) != 0 || info.driver_name == NULL)
		return true;
	for (unsigned int i = 0; i < RTE_DIM(zero_as_ffff); i++)
		if (strcmp(info.driver_name, zero_as_ffff[i]) == 0)
			return false;
	return true;
}

/*
 * WN_NET_CKSUM_AUTO: links between processes of one host that cannot corrupt a frame take
 * WN_NET_CKSUM_LOCAL (wn_net_port_local()). net_memif is shared memory (its frames are copied
 * by the CPU, never cross a wire); af_packet, tap, PCI NICs and an impairer's face keep full
 * checksums.
 */
bool
wn_net_port_local(uint16_t port_id)
{
	static const char *const local[] = { "net_memif" };

	return wn_port_driver_is(port_id, local, RTE_DIM(local));
}

static bool
local_cksum(const struct wn_netif_conf *conf)
{
	if (conf->cksum != WN_NET_CKSUM_AUTO)
		return conf->cksum == WN_NET_CKSUM_LOCAL;
	return wn_net_port_local(conf->port_id);
}

static void
conf_defaults(struct wn_netif_conf *c)
{
	if (c->mtu == 0)
		c->mtu = 1500;
	if (c->neigh_entries == 0)
		c->neigh_entries = 256;
	if (c->neigh_reachable_us == 0)
		c->neigh_reachable_us = 300u * 1000000u;
	if (c->neigh_retrans_us == 0)
		c->neigh_retrans_us = 1000000u;
	if (c->neigh_max_probes == 0)
		c->neigh_max_probes = 3;
	if (c->neigh_queue_len == 0)
		c->neigh_queue_len = 8;
	if (c->frag_max_flows == 0)
		c->frag_max_flows = 64;
	if (c->frag_ttl_us == 0)
		c->frag_ttl_us = 30u * 1000000u;
	if (c->tx_queue_len == 0)
		c->tx_queue_len = 1024;
}

struct wn_netif *
wn_net_if_create(const struct wn_netif_conf *conf)
{
	static unsigned int seq;
	struct wn_netif *nif;
	char name[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters hp = { 0 };

	if (conf == NULL || conf->pool == NULL || conf->mtu > 9000 ||
	    (conf->mtu != 0 && conf->mtu < 576) || (unsigned int)conf->cksum > WN_NET_CKSUM_LOCAL) {
		rte_errno = errno = EINVAL;
		return NULL;
	}
	nif = rte_zmalloc_socket("wn_netif", sizeof(*nif), RTE_CACHE_LINE_SIZE, conf->socket_id);
	if (nif == NULL)
		goto nomem;
	nif->conf = *conf;
	conf_defaults(&nif->conf);
	nif->hw_ip4_cksum_tx = (conf->tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) != 0;
	nif->hw_l4_cksum_tx = tx_tcp_cksum_offload(conf);
	nif->local_cksum = local_cksum(conf);
	nif->neigh = rte_zmalloc_socket("wn_neigh", sizeof(*nif->neigh) * nif->conf.neigh_entries,
					RTE_CACHE_LINE_SIZE, conf->socket_id);
	nif->neigh_q = rte_zmalloc_socket("wn_neigh_q", sizeof(struct rte_mbuf *) *
					  nif->conf.neigh_entries * nif->conf.neigh_queue_len,
					  RTE_CACHE_LINE_SIZE, conf->socket_id);
	nif->txq = rte_zmalloc_socket("wn_txq", sizeof(struct rte_mbuf *) * nif->conf.tx_queue_len,
				      RTE_CACHE_LINE_SIZE, conf->socket_id);
	if (nif->neigh == NULL || nif->neigh_q == NULL || nif->txq == NULL)
		goto nomem;
	for (uint32_t i = 0; i < nif->conf.neigh_entries; i++)
		nif->neigh[i].q = nif->neigh_q + (size_t)i * nif->conf.neigh_queue_len;

	snprintf(name, sizeof(name), "wn_nb_%u_%u", conf->port_id,
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	hp.name = name;
	hp.entries = nif->conf.neigh_entries;
	hp.key_len = sizeof(struct wn_ip_addr);
	hp.hash_func = rte_hash_crc;
	hp.socket_id = conf->socket_id;
	nif->neigh_hash = rte_hash_create(&hp);
	if (nif->neigh_hash == NULL)
		goto nomem;

	if (nif->conf.frag_max_flows != WN_NETIF_NO_REASSEMBLY) {
		uint32_t flows = nif->conf.frag_max_flows;

		/* tms is our microsecond clock, so max_cycles is the TTL in microseconds. */
		nif->frag_tbl = rte_ip_frag_table_create(flows, FRAG_BUCKET_ENTRIES,
							 flows, nif->conf.frag_ttl_us,
							 conf->socket_id);
		if (nif->frag_tbl == NULL)
			goto nomem;
	}
	return nif;
nomem:
	wn_net_if_free(nif);
	rte_errno = errno = ENOMEM;
	return NULL;
}

void
wn_net_if_free(struct wn_netif *nif)
{
	if (nif == NULL)
		return;
	if (nif->neigh != NULL) {
		for (uint32_t i = 0; i < nif->conf.neigh_entries; i++)
			rte_pktmbuf_free_bulk(nif->neigh[i].q, nif->neigh[i].qlen);
	}
	for (uint32_t i = 0; i < nif->txq_len; i++)
		rte_pktmbuf_free(nif->txq[(nif->txq_head + i) % nif->conf.tx_queue_len]);
	if (nif->frag_tbl != NULL) {
		rte_ip_frag_free_death_row(&nif->dr, 0);
		rte_ip_frag_table_destroy(nif->frag_tbl);
	}
	rte_hash_free(nif->neigh_hash);
	rte_free(nif->neigh);
	rte_free(nif->neigh_q);
	rte_free(nif->txq);
	rte_free(nif);
}

static bool
prefix_match(const struct wn_ip_addr *a, const struct wn_ip_addr *b, uint8_t prefix)
{
	const uint8_t *x, *y;
	unsigned int full, rem;

	if (a->family != b->family)
		return false;
	if (a->family == WN_AF_INET) {
		uint32_t mask = prefix == 0 ? 0 : ~0u << (32 - prefix);

		return ((rte_be_to_cpu_32(a->v4) ^ rte_be_to_cpu_32(b->v4)) & mask) == 0;
	}
	x = a->v6;
	y = b->v6;
	full = prefix / 8;
	rem = prefix % 8;
	if (memcmp(x, y, full) != 0)
		return false;
	if (rem != 0 && ((x[full] ^ y[full]) & (uint8_t)(0xff << (8 - rem))) != 0)
		return false;
	return true;
}

int
wn_net_if_addr_add(struct wn_netif *nif, const struct wn_ip_addr *addr, uint8_t prefix)
{
	if (addr == NULL || (addr->family != WN_AF_INET && addr->family != WN_AF_INET6))
		return -EINVAL;
	if (prefix > (addr->family == WN_AF_INET ? 32 : 128))
		return -EINVAL;
	if (wn_net_if_addr_find(nif, addr) != NULL)
		return -EEXIST;
	/* the last slot is kept for the link-local address wn_net_start() forms */
	if (nif->nb_addrs >= WN_NETIF_MAX_ADDRS)
		return -ENOSPC;
	return wn_net_if_addr_append(nif, addr, prefix);
}

unsigned int
wn_net_if_addrs(const struct wn_netif *nif, struct wn_netif_addr_info *out, unsigned int max)
{
	for (unsigned int i = 0; i < nif->nb_addrs && i < max; i++) {
		out[i].addr = nif->addrs[i].addr;
		out[i].prefix = nif->addrs[i].prefix;
		out[i].state = nif->addrs[i].state;
		out[i].auto_ll = nif->addrs[i].auto_ll;
	}
	return nif->nb_addrs;
}

const char *
wn_net_if_addr_state_str(uint8_t state)
{
	switch (state) {
	case WN_ADDR_PREFERRED:
		return "preferred";
	case WN_ADDR_TENTATIVE:
		return "tentative";
	case WN_ADDR_DUPLICATE:
		return "duplicate";
	default:
		return "?";
	}
}

int
wn_net_if_gateway_set(struct wn_netif *nif, const struct wn_ip_addr *gw)
{
	if (gw == NULL)
		return -EINVAL;
	nif->last_nh = NULL; /* next hops may change */
	if (gw->family == WN_AF_INET)
		nif->gw4 = *gw;
	else if (gw->family == WN_AF_INET6)
		nif->gw6 = *gw;
	else
		return -EINVAL;
	return 0;
}

bool
wn_net_if_is_local(const struct wn_netif *nif, const struct wn_ip_addr *addr)
{
	for (unsigned int i = 0; i < nif->nb_addrs; i++)
		if (wn_ip_addr_eq(&nif->addrs[i].addr, addr))
			return nif->addrs[i].state == WN_ADDR_PREFERRED;
	return false;
}

/* The usable address whose subnet holds @p dst, else the first usable of the family. */
const struct netif_addr *
wn_net_if_addr_for(const struct wn_netif *nif, const struct wn_ip_addr *dst)
{
	const struct netif_addr *any = NULL;

	for (unsigned int i = 0; i < nif->nb_addrs; i++) {
		const struct netif_addr *a = &nif->addrs[i];

		if (a->addr.family != dst->family || a->state != WN_ADDR_PREFERRED)
			continue;
		if (prefix_match(&a->addr, dst, a->prefix))
			return a;
		if (any == NULL)
			any = a;
	}
	return any;
}

int
wn_net_if_src_addr(const struct wn_netif *nif, const struct wn_ip_addr *dst,
		  struct wn_ip_addr *src)
{
	const struct netif_addr *a = wn_net_if_addr_for(nif, dst);

	if (a == NULL)
		return -ENETUNREACH;
	*src = a->addr;
	return 0;
}

uint16_t
wn_net_if_mtu(const struct wn_netif *nif)
{
	return nif->conf.mtu;
}

const struct rte_ether_addr *
wn_net_if_mac(const struct wn_netif *nif)
{
	return &nif->conf.mac;
}

void
wn_net_stats_get(const struct wn_netif *nif, struct wn_net_stats *st)
{
	*st = nif->st;
}

/* ---- neighbour expiry and solicitation (the table: neigh.c) ---- */

void
wn_net_neigh_solicit(struct wn_netif *nif, struct neigh *n)
{
	const struct netif_addr *src = wn_net_if_addr_for(nif, &n->addr);

	if (src == NULL)
		return;
	if (n->addr.family == WN_AF_INET)
		wn_net_arp_send(nif, RTE_ARP_OP_REQUEST, NULL, src->addr.v4, n->addr.v4, NULL);
	else
		wn_net_ndp_send_ns(nif, &src->addr, &n->addr);
}

void
wn_net_process(struct wn_netif *nif, uint64_t now)
{
	/* called on every loop iteration: the reassembly TTL (seconds) and the neighbour
	 * lifetimes need no scan more often than every NEIGH_SCAN_US */
	if (now < nif->next_neigh_scan)
		return;
	wn_net_dad_process(nif, now);
	if (nif->frag_tbl != NULL) {
		rte_ip_frag_table_del_expired_entries(nif->frag_tbl, &nif->dr, now);
		rte_ip_frag_free_death_row(&nif->dr, 0);
	}
	nif->next_neigh_scan = now + NEIGH_SCAN_US;
	if (now < nif->neigh_due)
		return;
	nif->neigh_due = UINT64_MAX;
	for (uint32_t i = 0; i < nif->conf.neigh_entries; i++) {
		struct neigh *n = &nif->neigh[i];

		if (n->state != NEIGH_REACHABLE && n->state != NEIGH_INCOMPLETE)
			continue;
		if (now < n->expire) {
			nif->neigh_due = RTE_MIN(nif->neigh_due, n->expire);
		} else if (n->state == NEIGH_REACHABLE) {
			wn_net_neigh_delete(nif, n);
		} else if (n->probes >= nif->conf.neigh_max_probes) {
			/* Resolution failed: drop what waited (counted in delete). */
			wn_net_neigh_delete(nif, n);
		} else {
			n->probes++;
			neigh_expire_at(nif, n, now + nif->conf.neigh_retrans_us);
			wn_net_neigh_solicit(nif, n);
		}
	}
}

int
wn_net_start(struct wn_netif *nif, uint64_t now)
{
	int rc = 0;

	wn_net_dad_start(nif, now); /* forms the link-local address on the first call */
	if (nif->conf.secondary)
		return 0;
	for (unsigned int i = 0; i < nif->nb_addrs; i++) {
		const struct wn_ip_addr *a = &nif->addrs[i].addr;
		int r;

		if (nif->addrs[i].state != WN_ADDR_PREFERRED)
			continue; /* announced when its DAD ends (dad.c) */
		if (a->family == WN_AF_INET) {
			/* RFC 5227 §3: ARP Announcement, sender = target = our address. */
			r = wn_net_arp_send(nif, RTE_ARP_OP_REQUEST, NULL, a->v4, a->v4, NULL);
		} else {
			struct wn_ip_addr all;

			wn_net_ip6_all_nodes(&all);
			r = wn_net_ndp_send_na(nif, a, &all, NULL, false);
		}
		if (r == 0)
			nif->st.tx_garp++;
		else
			rc = r;
	}
	return rc;
}
