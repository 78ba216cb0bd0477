/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/net internals shared by its files (netif.c, neigh.c, net_rx.c, net_output.c, l2.c,
 * net_udp.c). */
#ifndef NET_PRIV_H
#define NET_PRIV_H

#include <stdint.h>

#include <rte_hash.h>
#include <rte_ip_frag.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "wn_net.h"

#define NET_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, wn_net_logtype, "wn_net: " fmt "\n", ##__VA_ARGS__)

/** Neighbour entry states (RFC 4861 §7.3.2 names, ARP uses the same ones). */
enum neigh_state {
	NEIGH_FREE = 0,
	NEIGH_INCOMPLETE, /**< request sent, packets queued */
	NEIGH_REACHABLE,  /**< resolved until expire */
	NEIGH_PERMANENT,  /**< static */
};

struct neigh {
	struct wn_ip_addr addr;
	struct rte_ether_addr mac;
	uint8_t state;
	uint8_t probes;
	uint16_t qlen;
	uint64_t expire;        /**< REACHABLE: end of life; INCOMPLETE: next retransmit */
	struct rte_mbuf **q;    /**< conf.neigh_queue_len slots (preallocated) */
};

struct netif_addr {
	struct wn_ip_addr addr;
	uint8_t prefix;
	uint8_t state;          /**< enum wn_netif_addr_state */
	bool auto_ll;           /**< formed by the netif (dad.c) */
	uint8_t dad_left;       /**< TENTATIVE: probes still to send */
	uint8_t dad_count;      /**< auto_ll: RFC 7217 DAD_Counter of its identifier */
	uint8_t nonce[6];       /**< TENTATIVE: the nonce of our probes (RFC 7527) */
	uint64_t dad_next;      /**< TENTATIVE: next probe or the verdict (0: not started) */
};

struct wn_netif {
	struct wn_netif_conf conf;
	/* the configured addresses and the link-local one the netif may form */
	struct netif_addr addrs[WN_NETIF_MAX_ADDRS + 1];
	unsigned int nb_addrs;
	bool started;               /* wn_net_start() ran (the link-local address is formed) */
	struct wn_ip_addr gw4, gw6;
	uint16_t ip_id;
	bool hw_ip4_cksum_tx, hw_l4_cksum_tx; /* hw_l4: TCP, v4 and v6 (see netif.c) */
	bool local_cksum;           /* WN_NET_CKSUM_LOCAL in force (see netif.c) */

	struct rte_hash *neigh_hash; /**< key: struct wn_ip_addr -> index in neigh[] */
	struct neigh *neigh;
	struct rte_mbuf **neigh_q;
	uint64_t next_neigh_scan;
	/* the earliest expiry of a REACHABLE or INCOMPLETE entry (UINT64_MAX: none), so the
	 * periodic scan of the table runs only when one may be due */
	uint64_t neigh_due;
	uint32_t neigh_used;        /* entries not NEIGH_FREE */
	/* the last destination sent to and its next hop's entry: most bursts go to one peer,
	 * so most packets need no hash lookup. Valid while the entry is resolved and still
	 * holds last_nh_addr (a freed entry may be reused); routes changing clear it. */
	struct wn_ip_addr last_dst, last_nh_addr;
	struct neigh *last_nh;

	struct {
		uint8_t proto;
		wn_net_proto_rx_fn fn;
		void *arg;
	} hooks[WN_NETIF_MAX_PROTO_HOOKS]; /**< fn NULL: a free slot */
	struct {
		uint16_t port;
		wn_net_udp_rx_fn fn;
		void *arg;
	} udp[WN_NET_UDP_PORTS];           /**< UDP ports bound (net_udp.c); fn NULL: free */

	struct rte_ip_frag_tbl *frag_tbl; /**< NULL: reassembly off */
	struct rte_ip_frag_death_row dr;

	/* tx FIFO of complete frames */
	struct rte_mbuf **txq;
	uint32_t txq_head, txq_len;

	struct wn_net_stats st;
};

/* netif.c */
bool wn_net_port_local(uint16_t port_id);
struct netif_addr *wn_net_if_addr_find(struct wn_netif *nif, const struct wn_ip_addr *addr);
int wn_net_if_addr_append(struct wn_netif *nif, const struct wn_ip_addr *addr, uint8_t prefix);
const struct netif_addr *wn_net_if_addr_for(const struct wn_netif *nif,
					    const struct wn_ip_addr *dst);
void wn_net_neigh_solicit(struct wn_netif *nif, struct neigh *n);

/* neigh.c */
/* Arm entry @p n's expiry at @p when. */
static inline void
neigh_expire_at(struct wn_netif *nif, struct neigh *n, uint64_t when)
{
	n->expire = when;
	if (when < nif->neigh_due)
		nif->neigh_due = when;
}

struct neigh *wn_net_neigh_find(const struct wn_netif *nif, const struct wn_ip_addr *addr);
struct neigh *wn_net_neigh_create(struct wn_netif *nif, const struct wn_ip_addr *addr);
void wn_net_neigh_resolved(struct wn_netif *nif, struct neigh *n, const struct rte_ether_addr *mac,
		    uint64_t now);
void wn_net_neigh_delete(struct wn_netif *nif, struct neigh *n);

/* net_output.c */
uint16_t wn_net_chain_raw_cksum(const struct rte_mbuf *m, uint32_t off, uint32_t len);
uint16_t wn_net_tcp_phdr_cksum(const void *l3);
void wn_net_tx_cksum_complete(struct rte_mbuf *m);
void wn_net_rx_cksum_complete(struct rte_mbuf *m);

/* l2.c */
int wn_net_if_txq_push(struct wn_netif *nif, struct rte_mbuf *m);
int wn_net_send_l2(struct wn_netif *nif, struct rte_mbuf *m, const struct rte_ether_addr *dst,
		uint16_t ethertype);
int wn_net_arp_send(struct wn_netif *nif, uint16_t op, const struct rte_ether_addr *tha,
	     rte_be32_t sip, rte_be32_t tip, const struct rte_ether_addr *dst_mac);
int wn_net_ndp_send_ns(struct wn_netif *nif, const struct wn_ip_addr *src,
		       const struct wn_ip_addr *tgt);
int wn_net_ndp_send_na(struct wn_netif *nif, const struct wn_ip_addr *src,
		       const struct wn_ip_addr *dst, const struct rte_ether_addr *dst_mac,
		       bool solicited);
int wn_net_ndp_send_dad(struct wn_netif *nif, const struct wn_ip_addr *tgt, const uint8_t nonce[6]);
void wn_net_ip6_all_nodes(struct wn_ip_addr *a);

/* dad.c: IPv6 address autoconfiguration (RFC 4862): the link-local address and DAD */
void wn_net_dad_start(struct wn_netif *nif, uint64_t now);
void wn_net_dad_process(struct wn_netif *nif, uint64_t now);
void wn_net_dad_ns_input(struct wn_netif *nif, struct netif_addr *a, const uint8_t *nonce,
		  uint64_t now);
void wn_net_dad_na_input(struct wn_netif *nif, struct netif_addr *a, uint64_t now);

#endif /* NET_PRIV_H */
