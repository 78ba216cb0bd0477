/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Ethernet port bring-up and packet capture shared by warpnicd and wn-tcpapp.
 *
 * wn_net_port_setup() configures one RX and one TX queue per lcore that polls the port,
 * enables the checksum offloads the port has (the stack falls back to rte_net software
 * checksums for the rest), sets the MTU and starts the port.
 * wn_pcap_*() write what a port receives and sends to a pcapng file with rte_pcapng, so
 * tshark's iwarp dissectors can read a run.
 *
 * Thread safety: set-up on the main lcore before the polling lcores start; the lcores of a
 * port may share one struct wn_pcap (a spinlock orders their writes).
 */
#ifndef WN_PORT_H
#define WN_PORT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Port configuration. */
struct wn_port_conf {
	uint16_t port_id;
	uint16_t nb_queues;        /**< RX and TX queue pairs (0: 1) */
	uint16_t nb_desc;          /**< descriptors per queue (0: 1024, adjusted to the port) */
	uint16_t mtu;              /**< L3 MTU to set (0: leave the port's) */
	bool offload;              /**< enable IPv4/TCP checksum offloads the port offers */
	bool set_mtu;              /**< call rte_eth_dev_set_mtu (false for wrapper ports) */
	bool multi_segs;           /**< enable RTE_ETH_TX_OFFLOAD_MULTI_SEGS if the port has it
				    *   (reported in tx_capa: mbuf chains may be sent) */
	bool rx_intr;              /**< ask for Rx queue interrupts (intr_conf.rxq) where the
				    *   port takes them, for wn_net_port_wake_open() */
	struct rte_mempool *pool;  /**< RX mbufs */
};

/**
 * @return true when port @p port_id's driver is one of @p names (its driver_name, e.g.
 * "net_memif"); false for an invalid port.
 */
static inline bool
wn_port_driver_is(uint16_t port_id, const char *const names[], unsigned int n)
{
	struct rte_eth_dev_info info;

	if (!rte_eth_dev_is_valid_port(port_id) || rte_eth_dev_info_get(port_id, &info) != 0 ||
	    info.driver_name == NULL)
		return false;
	for (unsigned int i = 0; i < n; i++)
		if (strcmp(info.driver_name, names[i]) == 0)
			return true;
	return false;
}

/**
 * @return true when port @p port_id copies the frames it sends or hands their virtual
 * addresses on (memif, af_packet, tap, ring, pcap, null): client memory may be sent in place
 * without a DMA mapping. False for a port that reads frames by DMA (a PCI NIC). Any lcore.
 */
bool wn_net_port_copies(uint16_t port_id);

/**
 * Configure and start a port: wn_net_port_configure(), then wn_net_port_start().
 * @param conf     the configuration.
 * @param tx_capa  out: TX offloads enabled (for wn_netif_conf).
 * @param rx_capa  out: RX offloads enabled.
 * @return 0 or a negative errno from ethdev. An MTU the port refuses is reported on stderr
 *   and not fatal. Main lcore.
 */
int wn_net_port_setup(const struct wn_port_conf *conf, uint64_t *tx_capa, uint64_t *rx_capa);

/**
 * Configure a port (offloads, queues, MTU) without starting it.
 * @return as wn_net_port_setup(). Main lcore.
 */
int wn_net_port_configure(const struct wn_port_conf *conf, uint64_t *tx_capa, uint64_t *rx_capa);

/**
 * Start a configured port (and let every frame in: promiscuous). A port whose peer is not
 * there yet may refuse (a net_memif client whose server is not up: -EPERM); configured,
 * it can be started again later, like a NIC whose cable is plugged in.
 * @return 0 or the negative errno of rte_eth_dev_start(). Control thread; nothing may
 *   poll the port meanwhile.
 */
int wn_net_port_start(uint16_t port_id);

/**
 * @return whether a lost link of @p port_id comes back only by stopping and starting the
 *   port again: a net_memif client (DPDK 22.11's PMD connects when started and does not
 *   reconnect after its server went away). Any thread.
 */
bool wn_net_port_reconnects_by_restart(uint16_t port_id);

/**
 * Shut EAL down at exit: stop and close every port, then rte_eal_cleanup(). Not done when a
 * net_memif port exists: in DPDK 22.11 its interrupt thread handles a peer's disconnect
 * concurrently with stop/close/cleanup and crashes (SIGSEGV in eal-intr-thread); the
 * process exit releases the same resources. Main lcore, after the loops stopped.
 */
void wn_net_port_shutdown(void);

/**
 * Wake-up sources of one port queue for an lcore that sleeps when idle: the ethdev Rx
 * interrupt (ports set up with wn_port_conf.rx_intr whose PMD has one: most NICs, virtio,
 * vhost, tap), or net_memif's interrupt mode (DPDK 22.11 has no ethdev op for it; lib/net
 * reaches it through the PMD's private structures, checked at every use, see wake.c).
 */
struct wn_port_wake;

/**
 * Register the Rx wake-up of queue @p queue of @p port_id (started) in the epoll instance
 * @p epfd with rte_epoll_ctl(): its events carry a struct rte_epoll_event whose epdata.data
 * is @p data and whose epdata.cb_fun consumes the event (call it, as rte_epoll_wait() does).
 * The interrupt stays masked until wn_net_port_wake_arm().
 * @return the wake-up, or NULL with errno ENOTSUP (the port has none: nap instead), ENOMEM.
 *   The queue's lcore.
 */
struct wn_port_wake *wn_net_port_wake_open(uint16_t port_id, uint16_t queue, int epfd,
				       void *data);

/** Unregister and free @p w (NULL: no-op). The queue's lcore. */
void wn_net_port_wake_close(struct wn_port_wake *w);

/**
 * Before sleeping: unmask the queue's Rx interrupt. The caller then fences, polls the queue
 * once more and sleeps only if it found nothing (the interrupt fires for frames that arrive
 * after this call). @return 0, or -EAGAIN: no wake-up now (memif link down): nap instead.
 * The queue's lcore.
 */
int wn_net_port_wake_arm(struct wn_port_wake *w);

/** After sleeping (or finding work): mask the interrupt and consume its event. Its lcore. */
void wn_net_port_wake_disarm(struct wn_port_wake *w);

/**
 * Like wn_net_port_wake_disarm() without touching the port (its owner stopped it or is about
 * to): the wake-up is taken as masked and its event source as gone. The queue's lcore.
 */
void wn_net_port_wake_forget(struct wn_port_wake *w);

/**
 * rte_eth_tx_burst() on the queue of @p w that also wakes a memif peer which unmasked its
 * Rx interrupt while the PMD looked (the PMD reads the peer's mask without a fence).
 * @return packets sent. The queue's lcore.
 */
uint16_t wn_net_port_wake_tx_burst(struct wn_port_wake *w, struct rte_mbuf **pkts, uint16_t n);

/** A pcapng capture. */
struct wn_pcap;

/**
 * Open a capture file (truncated) for packets of up to @p snaplen octets (longer ones are
 * cut; at most 65535 minus mbuf headroom).
 * @param app  application name recorded in the section header.
 * @return the capture, or NULL with errno set. Main lcore.
 */
struct wn_pcap *wn_net_pcap_open(const char *path, uint32_t snaplen, const char *app);

/**
 * Record @p n packets of @p port_id queue @p queue in direction @p dir (copies). The file
 * shows checksums as a wire carries them: before copying, checksums a sent packet leaves
 * to offload (RTE_MBUF_F_TX_IP_CKSUM/TX_TCP_CKSUM, also WN_NET_CKSUM_LOCAL's) are computed
 * into the packet and the flags cleared, and on a local link (net_memif) a received TCP
 * segment carrying only its pseudo-header sum gets its full sum. NULL @p p: no-op. Any lcore.
 */
void wn_net_pcap_capture(struct wn_pcap *p, uint16_t port_id, uint16_t queue,
		     struct rte_mbuf **pkts, uint16_t n, enum rte_pcapng_direction dir);

/** Packets recorded and packets that could not be copied. */
void wn_net_pcap_stats(const struct wn_pcap *p, uint64_t *written, uint64_t *dropped);

/** Flush and close (NULL: no-op). */
void wn_net_pcap_close(struct wn_pcap *p);

#ifdef __cplusplus
}
#endif

#endif /* WN_PORT_H */
