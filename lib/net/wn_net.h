/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * warpnic L2/L3: Ethernet, ARP (RFC 826), IPv4 (RFC 791) with reassembly, ICMP echo,
 * IPv6 (RFC 8200) + NDP as a second family, checksums (offloaded when the port says so).
 *
 * One struct wn_netif exists per (port, queue) and is owned by exactly one lcore. The
 * library does no NIC I/O: the caller's loop is
 *
 *   n = rte_eth_rx_burst(port, q, pkts, N);
 *   n = wn_net_rx_bulk(nif, pkts, n, now);        // ARP/ICMP consumed, TCP left in pkts
 *   wn_tcp_rx_bulk(ctx, pkts, n, now);
 *   wn_tcp_process(ctx, now);
 *   n = wn_tcp_tx_bulk(ctx, pkts, N);             // IP packets (IP header first)
 *   wn_net_output_bulk(nif, pkts, n, now);        // + Ethernet, ARP resolution
 *   wn_net_process(nif, now);                     // ARP/fragment timers
 *   n = wn_net_tx_bulk(nif, pkts, N);             // frames ready for the wire
 *   rte_eth_tx_burst(port, q, pkts, n);
 *
 * Time is a caller-supplied monotonic microsecond count (wn_net_now_us() is one source),
 * so tests drive timers deterministically.
 */
#ifndef WN_NET_H
#define WN_NET_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

/** rte_log type name of this library. */
#define WN_NET_LOGTYPE_NAME "lib.wn.net"

/** Address families (values match AF_INET / AF_INET6). */
#define WN_AF_INET 2
#define WN_AF_INET6 10

/** An IPv4 or IPv6 address; v4 and v6 are in network byte order. */
struct wn_ip_addr {
	uint8_t family; /**< WN_AF_INET or WN_AF_INET6 */
	uint8_t pad[3];
	union {
		rte_be32_t v4;
		uint8_t v6[16];
	};
};

/*
 * An IPv6 header's source and destination addresses as 16 octets, whatever type DPDK gives
 * the fields (uint8_t[16] up to 23.11, struct rte_ipv6_addr since 24.11).
 */
#define WN_IP6_SRC(h) ((uint8_t *)&(h)->src_addr)
#define WN_IP6_DST(h) ((uint8_t *)&(h)->dst_addr)

/** Build an IPv4 wn_ip_addr from four dotted-quad octets. */
static inline struct wn_ip_addr
wn_ip_addr_v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	struct wn_ip_addr x = { .family = WN_AF_INET };

	x.v4 = rte_cpu_to_be_32((uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d);
	return x;
}

/** @return true when @p a and @p b are the same family and address. Pure; any thread. */
static inline bool
wn_ip_addr_eq(const struct wn_ip_addr *a, const struct wn_ip_addr *b)
{
	if (a->family != b->family)
		return false;
	if (a->family == WN_AF_INET)
		return a->v4 == b->v4;
	return memcmp(a->v6, b->v6, 16) == 0;
}

/**
 * Parse "198.18.0.1" or "2001:db8::1" (optionally followed by "/prefix").
 * @return 0, or -EINVAL. @p prefix (may be NULL) gets the prefix length or the full length.
 * Thread safety: pure; any thread.
 */
int wn_net_addr_parse(const char *s, struct wn_ip_addr *addr, uint8_t *prefix);

/** Format @p a into @p buf (at least 48 octets). @return @p buf. Any thread. */
const char *wn_net_addr_fmt(const struct wn_ip_addr *a, char *buf, size_t len);

/**
 * TCP checksums on a port without checksum offload (a port's real offloads are used in
 * every mode).
 */
enum wn_net_cksum {
	/** WN_NET_CKSUM_LOCAL on net_memif, WN_NET_CKSUM_SOFTWARE on any other port. */
	WN_NET_CKSUM_AUTO = 0,
	/** Compute every checksum sent, verify every checksum received. */
	WN_NET_CKSUM_SOFTWARE,
	/**
	 * The link cannot corrupt a frame (shared memory between processes of one host, as
	 * Linux treats veth and loopback): sent segments carry the pseudo-header sum only,
	 * as for a NIC that offloads the checksum (RTE_MBUF_F_TX_TCP_CKSUM set), and a
	 * received segment whose checksum field is its pseudo-header sum is accepted without
	 * summing its payload; any other value is verified in full. Both ends of the link
	 * must use it (a peer that verifies every checksum drops such segments).
	 */
	WN_NET_CKSUM_LOCAL,
};

/** Most addresses a netif holds. */
#define WN_NETIF_MAX_ADDRS 8

/** Configuration of one network interface (port, queue). */
struct wn_netif_conf {
	uint16_t port_id;          /**< informative; the library does no I/O */
	uint16_t queue_id;         /**< informative */
	int socket_id;             /**< NUMA socket for tables (SOCKET_ID_ANY ok) */
	struct rte_ether_addr mac; /**< our MAC */
	uint16_t mtu;              /**< L3 MTU (0: 1500) */
	struct rte_mempool *pool;  /**< mbufs for ARP/ICMP/NDP replies and requests */
	uint64_t tx_offload_capa;  /**< RTE_ETH_TX_OFFLOAD_* the port enabled (0: software);
				    *   TCP checksums stay in software on net_tap (it writes
				    *   0xffff for a sum of 0x0000, RFC 768's UDP rule) */
	uint64_t rx_offload_capa;  /**< RTE_ETH_RX_OFFLOAD_* the port enabled (0: software) */
	uint32_t neigh_entries;    /**< neighbour table size (0: 256) */
	uint32_t neigh_reachable_us; /**< lifetime of a resolved entry (0: 300 s) */
	uint32_t neigh_retrans_us; /**< ARP/NS retransmit interval (0: 1 s) */
	uint32_t neigh_max_probes; /**< requests before an entry fails (0: 3) */
	uint32_t neigh_queue_len;  /**< packets held per unresolved neighbour (0: 8) */
	uint32_t frag_max_flows;   /**< reassembly flows (0: 64; WN_NETIF_NO_REASSEMBLY: drop) */
	uint32_t frag_ttl_us;      /**< reassembly timeout (0: 30 s) */
	uint32_t tx_queue_len;     /**< frames buffered until wn_net_tx_bulk (0: 1024) */
	enum wn_net_cksum cksum;   /**< checksums without offload (0: WN_NET_CKSUM_AUTO) */
	/**
	 * Duplicate Address Detection probes per IPv6 address (RFC 4862 §5.1
	 * DupAddrDetectTransmits; 0: 1; WN_NETIF_NO_DAD: none, an address is usable once
	 * added). An IPv6 address is tentative from wn_net_if_addr_add() until its DAD ends
	 * neigh_retrans_us after the last probe, which wn_net_start() begins.
	 */
	uint8_t dad_transmits;
	/**
	 * Form no link-local address. By default wn_net_start() adds one (fe80::/64, RFC 4291
	 * §2.1, RFC 4862 §5.3) when the netif has an IPv6 address and no link-local one, with a
	 * stable opaque interface identifier (RFC 7217 as RFC 8064 recommends: hashed from the
	 * MAC and a DAD counter, not the EUI-64 of the MAC, which the host kernel's own stack
	 * on the same interface, e.g. under net_af_packet, already uses).
	 */
	bool no_link_local;
	/**
	 * Another netif on the same port answers for these addresses (the port's queues are
	 * served by several netifs that all see every ARP and NDP frame): this one learns
	 * neighbours and solicits its own, but answers no ARP request or neighbour
	 * solicitation and sends no announcement and no DAD probe; it runs DAD on what it
	 * receives, reaching the same verdicts as the netif that probes.
	 */
	bool secondary;
	/** The DAD nonces' seed (RFC 7527); the netifs of one port share it. */
	uint64_t dad_seed;
};

/** dad_transmits value that turns Duplicate Address Detection off. */
#define WN_NETIF_NO_DAD UINT8_MAX

/** frag_max_flows value that disables reassembly: every fragment is dropped and counted. */
#define WN_NETIF_NO_REASSEMBLY UINT32_MAX

/** Per-netif counters; every drop has one. */
struct wn_net_stats {
	uint64_t rx_pkts;          /**< frames given to wn_net_rx_bulk */
	uint64_t rx_l4;            /**< TCP packets handed up */
	uint64_t rx_proto;         /**< packets handed to a protocol hook (wn_net_if_proto_rx) */
	uint64_t rx_drop_short;    /**< truncated Ethernet/IP/ARP/ICMP headers */
	uint64_t rx_drop_mac;      /**< not for our MAC, broadcast or IPv6 multicast */
	uint64_t rx_drop_ethertype; /**< unknown ethertype */
	uint64_t rx_drop_ip_hdr;   /**< bad version/IHL/total length */
	uint64_t rx_drop_ip_cksum; /**< bad IPv4 header checksum */
	uint64_t rx_drop_ip_addr;  /**< destination not ours */
	uint64_t rx_drop_ip_proto; /**< protocol we do not serve */
	uint64_t rx_drop_ip_opts;  /**< IPv4 options / IPv6 extension headers we do not take */
	uint64_t rx_frag;          /**< fragments received */
	uint64_t rx_frag_drop;     /**< fragments dropped (reassembly off, table full, bad) */
	uint64_t rx_reassembled;   /**< datagrams rebuilt from fragments */
	uint64_t rx_arp;           /**< ARP packets accepted */
	uint64_t rx_drop_arp;      /**< malformed or foreign ARP */
	uint64_t rx_icmp_echo;     /**< echo requests answered (v4 and v6) */
	uint64_t rx_drop_icmp;     /**< malformed ICMP / ICMPv6, bad checksum */
	uint64_t rx_ndp;           /**< neighbour solicitations/advertisements accepted */
	uint64_t tx_pkts;          /**< frames handed out by wn_net_tx_bulk */
	uint64_t tx_arp_req;       /**< ARP requests / neighbour solicitations sent */
	uint64_t tx_arp_reply;     /**< ARP replies / neighbour advertisements sent */
	uint64_t tx_garp;          /**< gratuitous ARPs / unsolicited NAs sent */
	uint64_t tx_drop_noroute;  /**< no source address / no route */
	uint64_t tx_drop_mtu;      /**< IP packet larger than the MTU (we never fragment) */
	uint64_t tx_drop_neigh;    /**< dropped waiting for resolution (queue full or failed) */
	uint64_t tx_drop_queue;    /**< tx queue full */
	uint64_t tx_drop_nombuf;   /**< mempool empty for a reply */
	uint64_t neigh_full;       /**< neighbour table full */
	uint64_t dad_probes;       /**< DAD neighbour solicitations sent (RFC 4862 §5.4.2) */
	uint64_t dad_duplicates;   /**< tentative addresses another node turned out to have */
	uint64_t dad_looped;       /**< our own DAD probes received back (nonce, RFC 7527) */
	uint64_t na_conflicts;     /**< advertisements of one of our usable addresses by another
				    *   node (RFC 4862 §5.4.4: logged, the address kept) */
	uint64_t rx_udp;           /**< UDP datagrams handed to a bound port (wn_net_udp_bind) */
	uint64_t rx_drop_udp;      /**< UDP datagrams with a bad length or checksum */
	uint64_t rx_drop_udp_port; /**< UDP datagrams to a port nothing is bound to */
	uint64_t tx_udp;           /**< UDP datagrams built (wn_net_udp_prepend) */
};

struct wn_netif;

/**
 * Create a netif.
 * @param conf  configuration; zero fields take their defaults, conf->pool is required.
 * @return the netif, or NULL with rte_errno/errno EINVAL (bad conf) or ENOMEM.
 * Thread safety: any thread; the netif is then used by one lcore only.
 */
struct wn_netif *wn_net_if_create(const struct wn_netif_conf *conf);

/** Free a netif and every mbuf it holds. NULL is a no-op. Owning lcore only. */
void wn_net_if_free(struct wn_netif *nif);

/**
 * Add a local address with its prefix length (on-link subnet).
 * @param nif     the netif.
 * @param addr    the address.
 * @param prefix  on-link prefix length (0..32 or 0..128).
 * @return 0, -EINVAL (bad family/prefix), -ENOSPC (WN_NETIF_MAX_ADDRS), -EEXIST.
 * Thread safety: owning lcore.
 */
int wn_net_if_addr_add(struct wn_netif *nif, const struct wn_ip_addr *addr, uint8_t prefix);

/** Set the default gateway of the address's family. @return 0 or -EINVAL. Owning lcore. */
int wn_net_if_gateway_set(struct wn_netif *nif, const struct wn_ip_addr *gw);

/**
 * @return true when @p addr is one of the netif's usable addresses (not an IPv6 address
 * still tentative or found duplicate). Owning lcore.
 */
bool wn_net_if_is_local(const struct wn_netif *nif, const struct wn_ip_addr *addr);

/** The state of an address (RFC 4862 §5.4); IPv4 addresses are always usable. */
enum wn_netif_addr_state {
	WN_ADDR_PREFERRED = 0, /**< usable */
	WN_ADDR_TENTATIVE,     /**< IPv6: Duplicate Address Detection not finished */
	WN_ADDR_DUPLICATE,     /**< IPv6: another node on the link has it: never used */
};

/** One address of a netif (wn_net_if_addrs). */
struct wn_netif_addr_info {
	struct wn_ip_addr addr;
	uint8_t prefix;
	uint8_t state;         /**< enum wn_netif_addr_state */
	bool auto_ll;          /**< the link-local address the netif formed itself */
};

/**
 * Copy up to @p max of the netif's addresses to @p out, in the order they were added (the
 * link-local address wn_net_start() forms comes last).
 * @return how many the netif has. Owning lcore.
 */
unsigned int wn_net_if_addrs(const struct wn_netif *nif, struct wn_netif_addr_info *out,
			    unsigned int max);

/** @return a printable name of an enum wn_netif_addr_state value. Any thread. */
const char *wn_net_if_addr_state_str(uint8_t state);

/**
 * Pick the source address for reaching @p dst (same family, on-link subnet preferred).
 * @return 0, or -ENETUNREACH. Owning lcore.
 */
int wn_net_if_src_addr(const struct wn_netif *nif, const struct wn_ip_addr *dst,
		      struct wn_ip_addr *src);

/** @return the L3 MTU. Any thread (read-only after create). */
uint16_t wn_net_if_mtu(const struct wn_netif *nif);

/** @return our MAC. Any thread (read-only after create). */
const struct rte_ether_addr *wn_net_if_mac(const struct wn_netif *nif);

/**
 * The interface is up (call it at start once the link is up, and again whenever the link
 * comes back): forms the link-local address on the first call (see no_link_local), starts
 * Duplicate Address Detection of every tentative IPv6 address (RFC 4862 §5.4: a Neighbor
 * Solicitation from the unspecified address with a nonce, RFC 7527; the address becomes
 * usable when no answer came within neigh_retrans_us of the last probe), and announces
 * the usable ones: a gratuitous ARP for every IPv4 address (RFC 5227 §3 form: request with
 * sender = target = our address), an unsolicited NA for every IPv6 address (an address
 * that passes DAD later is announced then). A secondary netif sends none of it.
 * @return 0, or -ENOBUFS. Owning lcore.
 */
int wn_net_start(struct wn_netif *nif, uint64_t now);

/** Most IP protocols with a receive hook on one netif. */
#define WN_NETIF_MAX_PROTO_HOOKS 4

/**
 * A receive hook (wn_net_if_proto_rx): one IPv4 or IPv6 packet of the hooked protocol,
 * addressed to us, with the IP header at the data offset, l2_len = 0, l3_len set and
 * packet_type RTE_PTYPE_L3_IPV4/6. The hook owns @p m.
 */
typedef void (*wn_net_proto_rx_fn)(void *arg, struct rte_mbuf *m, uint64_t now);

/**
 * Hand received packets of IP protocol @p proto (any but TCP, ICMP and ICMPv6, which lib/net
 * serves itself) to @p fn from inside wn_net_rx_bulk(), instead of dropping them
 * (rx_drop_ip_proto): IPv4 after reassembly, IPv6 without extension headers. Sending such
 * packets needs nothing new: wn_net_output_l4() with @p proto (lib/net sums only TCP's L4
 * checksum). @p fn NULL removes the hook.
 * @return 0, -EINVAL (a protocol lib/net serves) or -ENOSPC (WN_NETIF_MAX_PROTO_HOOKS).
 * Owning lcore.
 */
int wn_net_if_proto_rx(struct wn_netif *nif, uint8_t proto, wn_net_proto_rx_fn fn, void *arg);

/** Most UDP ports bound on one netif. */
#define WN_NET_UDP_PORTS 4

/** What the IP and UDP headers of a received datagram said (wn_net_udp_bind). */
struct wn_net_udp_info {
	struct wn_ip_addr src;     /**< the sender's address */
	struct wn_ip_addr dst;     /**< ours */
	uint16_t sport, dport;     /**< host order */
	uint8_t ttl;               /**< IPv4 TTL, IPv6 hop limit */
	uint8_t tclass;            /**< IPv4 type of service, IPv6 traffic class */
	uint32_t flow;             /**< IPv6 flow label (0 for IPv4) */
	uint32_t len;              /**< UDP payload octets */
};

/**
 * A UDP datagram for a bound port: @p m has its IP header at the data offset, l3_len set
 * (l4_len = 8: the payload starts at l3_len + 8, @p info->len octets, which may span
 * segments); the length and checksum are checked. The function owns @p m.
 */
typedef void (*wn_net_udp_rx_fn)(void *arg, struct rte_mbuf *m,
				 const struct wn_net_udp_info *info, uint64_t now);

/**
 * Deliver UDP datagrams to @p port (host order) to @p fn from inside wn_net_rx_bulk() (IP
 * protocol 17 through the receive hooks: it takes one of WN_NETIF_MAX_PROTO_HOOKS while a
 * port is bound). Datagrams to other ports are dropped and counted (rx_drop_udp_port), as
 * are those whose UDP length or checksum is wrong (rx_drop_udp: RFC 768; RFC 8200 §8.1, an
 * IPv6 datagram without a checksum). @p fn NULL unbinds.
 * @return 0, -EEXIST (bound already), -ENOENT (unbinding a port not bound), -ENOSPC
 *   (WN_NET_UDP_PORTS, or no free receive hook). Owning lcore.
 */
int wn_net_udp_bind(struct wn_netif *nif, uint16_t port, wn_net_udp_rx_fn fn, void *arg);

/**
 * Take one UDP datagram as received (IP header at the data offset, l3_len set: what a
 * receive hook gets, or a datagram wn_net_udp_prepend() built for one of our own addresses):
 * checks and delivery as for one received from the port (wn_net_udp_bind). A checksum is
 * not verified when @p m carries RTE_MBUF_F_RX_L4_CKSUM_GOOD. Consumes @p m. Owning lcore.
 */
void wn_net_udp_input(struct wn_netif *nif, struct rte_mbuf *m, uint64_t now);

/**
 * Make the UDP payload at @p m's data offset an IP datagram from @p src port @p sport to
 * @p dst port @p dport (host order), with IPv4 type of service or IPv6 traffic class
 * @p tclass and TTL or hop limit @p ttl (0: 64): UDP header with its checksum (RFC 768, over
 * chains too; 0xffff for a sum of zero), IP header with its IPv4 header checksum
 * (wn_net_output() fills them again when it sends: a datagram for one of our own addresses
 * can go straight to wn_net_udp_input()). Counted in tx_udp when @p nif is not NULL.
 * @return 0, -EINVAL (families differ, too long) or -ENOSPC (no headroom). Any lcore.
 */
int wn_net_udp_prepend(struct wn_netif *nif, struct rte_mbuf *m, const struct wn_ip_addr *src,
		       uint16_t sport, const struct wn_ip_addr *dst, uint16_t dport,
		       uint8_t tclass, uint8_t ttl);

/**
 * Receive a burst of frames (@p n frames in @p pkts of netif @p nif at time @p now). ARP, ICMP echo and NDP are consumed (replies are queued for
 * wn_net_tx_bulk), bad frames are freed and counted, IPv4 fragments are reassembled.
 * Packets of a hooked protocol (wn_net_if_proto_rx) go to their hook.
 * TCP packets are compacted at the front of @p pkts with the data offset at the IP
 * header, l2_len = 0, l3_len set and packet_type RTE_PTYPE_L3_IPV4/6 | RTE_PTYPE_L4_TCP.
 * @return how many packets remain in @p pkts (all TCP). Owning lcore.
 */
uint16_t wn_net_rx_bulk(struct wn_netif *nif, struct rte_mbuf **pkts, uint16_t n, uint64_t now);

/**
 * Prepend an IPv4 or IPv6 header (@p src to @p dst, protocol @p proto) to the L4 packet
 * @p m at its data offset. Fields the output
 * path owns (IPv4 id, checksum) are filled there.
 * @return 0, -EINVAL (family mismatch) or -ENOSPC (no headroom). Any lcore (touches @p m only).
 */
int wn_net_ip_prepend(struct rte_mbuf *m, const struct wn_ip_addr *src,
		      const struct wn_ip_addr *dst, uint8_t proto);

/**
 * Send IP packet @p m on @p nif at time @p now (IP header at the data offset, e.g. from
 * wn_net_ip_prepend): fills
 * IPv4 id/checksum and the TCP/UDP checksum (offloaded when the port supports it), never
 * fragments, resolves the next hop (the packet waits in a bounded queue while ARP/NDP runs)
 * and prepends Ethernet. The mbuf is always consumed.
 * @return 0 (queued or waiting for resolution), -EMSGSIZE, -ENETUNREACH, -ENOBUFS.
 * Owning lcore.
 */
int wn_net_output(struct wn_netif *nif, struct rte_mbuf *m, uint64_t now);

/** wn_net_output over a burst. @return how many were queued or held. Owning lcore. */
uint16_t wn_net_output_bulk(struct wn_netif *nif, struct rte_mbuf **pkts, uint16_t n,
			    uint64_t now);

/**
 * Prepend IP to an L4 packet and send it (wn_net_ip_prepend + wn_net_output).
 * @return as wn_net_output. Owning lcore.
 */
int wn_net_output_l4(struct wn_netif *nif, struct rte_mbuf *m, const struct wn_ip_addr *src,
		     const struct wn_ip_addr *dst, uint8_t proto, uint64_t now);

/** Run timers: neighbour retransmits/expiry, reassembly timeouts. Owning lcore. */
void wn_net_process(struct wn_netif *nif, uint64_t now);

/**
 * Take up to @p n frames ready for rte_eth_tx_burst.
 * @return how many were stored in @p pkts. Owning lcore.
 */
uint16_t wn_net_tx_bulk(struct wn_netif *nif, struct rte_mbuf **pkts, uint16_t n);

/** @return frames the transmit queue can still take (beyond, they are dropped). Owning lcore. */
uint32_t wn_net_tx_room(const struct wn_netif *nif);

/**
 * Add or refresh a neighbour entry (static when @p permanent).
 * @return 0, -ENOSPC (table full) or -EINVAL. Owning lcore.
 */
int wn_net_neigh_add(struct wn_netif *nif, const struct wn_ip_addr *addr,
		     const struct rte_ether_addr *mac, bool permanent, uint64_t now);

/**
 * Look a neighbour up.
 * @return 0 with @p mac filled, -ENOENT (unknown) or -EAGAIN (resolution running). Owning lcore.
 */
int wn_net_neigh_lookup(const struct wn_netif *nif, const struct wn_ip_addr *addr,
			struct rte_ether_addr *mac);

/** One entry of the neighbour table (wn_net_neigh_list). */
struct wn_net_neigh_info {
	struct wn_ip_addr addr;
	struct rte_ether_addr mac; /**< zero while unresolved */
	uint8_t state;             /**< 1 incomplete, 2 reachable, 3 permanent */
};

/**
 * Copy up to @p max entries of the neighbour table to @p out.
 * @return how many were copied. Owning lcore.
 */
unsigned int wn_net_neigh_list(const struct wn_netif *nif, struct wn_net_neigh_info *out,
			       unsigned int max);

/** Copy the counters. Owning lcore (or any thread accepting torn 64-bit reads). */
void wn_net_stats_get(const struct wn_netif *nif, struct wn_net_stats *st);

/** @return a monotonic microsecond clock (rte_get_timer_cycles based). Any thread. */
uint64_t wn_net_now_us(void);

/** Registered rte_log type of lib.wn.net. */
extern int wn_net_logtype;

#ifdef __cplusplus
}
#endif

#endif /* WN_NET_H */
