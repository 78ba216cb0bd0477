/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The neighbour table (ARP RFC 826, NDP RFC 4861 §7.3.2 states): entries in an rte_hash by
 * address, frames queued while an entry is INCOMPLETE and sent when it resolves. Expiry and
 * solicitation are the interface's (netif.c: wn_net_process, wn_net_neigh_solicit).
 */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_hash.h>

#include "net_priv.h"

static void
neigh_key(const struct wn_ip_addr *addr, struct wn_ip_addr *key)
{
	memset(key, 0, sizeof(*key));
	key->family = addr->family;
	if (addr->family == WN_AF_INET)
		key->v4 = addr->v4;
	else
		memcpy(key->v6, addr->v6, 16);
}

struct neigh *
wn_net_neigh_find(const struct wn_netif *nif, const struct wn_ip_addr *addr)
{
	struct wn_ip_addr key;
	int pos;

	neigh_key(addr, &key);
	pos = rte_hash_lookup(nif->neigh_hash, &key);
	if (pos < 0)
		return NULL;
	return &nif->neigh[pos];
}

struct neigh *
wn_net_neigh_create(struct wn_netif *nif, const struct wn_ip_addr *addr)
{
	struct wn_ip_addr key;
	struct neigh *n;
	int pos;

	neigh_key(addr, &key);
	pos = rte_hash_add_key(nif->neigh_hash, &key);
	if (pos < 0 || (uint32_t)pos >= nif->conf.neigh_entries) {
		if (pos >= 0)
			rte_hash_del_key(nif->neigh_hash, &key);
		nif->st.neigh_full++;
		return NULL;
	}
	n = &nif->neigh[pos];
	if (n->state != NEIGH_FREE)
		return n; /* already there */
	nif->neigh_used++;
	n->addr = key;
	n->state = NEIGH_INCOMPLETE;
	n->probes = 0;
	n->qlen = 0;
	neigh_expire_at(nif, n, 0); /* the next scan looks at it */
	return n;
}

void
wn_net_neigh_delete(struct wn_netif *nif, struct neigh *n)
{
	if (n->qlen != 0) {
		nif->st.tx_drop_neigh += n->qlen;
		rte_pktmbuf_free_bulk(n->q, n->qlen);
		n->qlen = 0;
	}
	rte_hash_del_key(nif->neigh_hash, &n->addr);
	n->state = NEIGH_FREE;
	nif->neigh_used--;
}

void
wn_net_neigh_resolved(struct wn_netif *nif, struct neigh *n, const struct rte_ether_addr *mac,
	       uint64_t now)
{
	uint16_t et;

	n->mac = *mac;
	if (n->state != NEIGH_PERMANENT) {
		n->state = NEIGH_REACHABLE;
		neigh_expire_at(nif, n, now + nif->conf.neigh_reachable_us);
	}
	et = n->addr.family == WN_AF_INET ? RTE_ETHER_TYPE_IPV4 : RTE_ETHER_TYPE_IPV6;
	for (uint16_t i = 0; i < n->qlen; i++)
		wn_net_send_l2(nif, n->q[i], &n->mac, et);
	n->qlen = 0;
}

int
wn_net_neigh_add(struct wn_netif *nif, const struct wn_ip_addr *addr,
		 const struct rte_ether_addr *mac, bool permanent, uint64_t now)
{
	struct neigh *n;

	if (addr == NULL || mac == NULL ||
	    (addr->family != WN_AF_INET && addr->family != WN_AF_INET6))
		return -EINVAL;
	n = wn_net_neigh_find(nif, addr);
	if (n == NULL)
		n = wn_net_neigh_create(nif, addr);
	if (n == NULL)
		return -ENOSPC;
	if (permanent)
		n->state = NEIGH_PERMANENT;
	wn_net_neigh_resolved(nif, n, mac, now);
	return 0;
}

int
wn_net_neigh_lookup(const struct wn_netif *nif, const struct wn_ip_addr *addr,
		    struct rte_ether_addr *mac)
{
	const struct neigh *n = wn_net_neigh_find(nif, addr);

	if (n == NULL)
		return -ENOENT;
	if (n->state == NEIGH_INCOMPLETE)
		return -EAGAIN;
	if (mac != NULL)
		*mac = n->mac;
	return 0;
}

unsigned int
wn_net_neigh_list(const struct wn_netif *nif, struct wn_net_neigh_info *out, unsigned int max)
{
	unsigned int k = 0;

	for (uint32_t i = 0, seen = 0; i < nif->conf.neigh_entries && k < max &&
	     seen < nif->neigh_used; i++) {
		const struct neigh *n = &nif->neigh[i];

		if (n->state == NEIGH_FREE)
			continue;
		seen++;
		out[k].addr = n->addr;
		if (n->state == NEIGH_INCOMPLETE)
			memset(&out[k].mac, 0, sizeof(out[k].mac));
		else
			out[k].mac = n->mac;
		out[k].state = n->state;
		k++;
	}
	return k;
}
