/* SPDX-License-Identifier: BSD-3-Clause */
/* Port bring-up and pcapng capture (wn_port.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_spinlock.h>

#include "wn_dpdk_compat.h"

#include "net_priv.h"
#include "wn_port.h"

#define PCAP_BURST 32

int
wn_net_port_configure(const struct wn_port_conf *c, uint64_t *tx_capa, uint64_t *rx_capa)
{
	const uint64_t want_tx = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM |
				 RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	const uint64_t want_rx = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM;
	uint16_t nq = c->nb_queues ? c->nb_queues : 1;
	uint16_t nb_rxd = c->nb_desc ? c->nb_desc : 1024, nb_txd = nb_rxd, q;
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	int socket = rte_eth_dev_socket_id(c->port_id);
	int ret;

	ret = rte_eth_dev_info_get(c->port_id, &info);
	if (ret < 0)
		return ret;
	if (nq > info.max_rx_queues || nq > info.max_tx_queues)
		return -EINVAL;
	memset(&conf, 0, sizeof(conf));
	if (c->offload) {
		conf.txmode.offloads = info.tx_offload_capa & want_tx;
		conf.rxmode.offloads = info.rx_offload_capa & want_rx;
	}
	/* mbuf chains (zero-copy transmit): independent of the checksum offloads */
	if (c->multi_segs)
		conf.txmode.offloads |= info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	/* several queues: RSS where the port has it; the caller steers in software anyway */
	if (nq > 1 && (info.flow_type_rss_offloads & (RTE_ETH_RSS_TCP | RTE_ETH_RSS_IP)) != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = info.flow_type_rss_offloads &
						   (RTE_ETH_RSS_TCP | RTE_ETH_RSS_IP);
	}
	*tx_capa = conf.txmode.offloads;
	*rx_capa = conf.rxmode.offloads;
	conf.intr_conf.rxq = c->rx_intr ? 1 : 0;
	ret = rte_eth_dev_configure(c->port_id, nq, nq, &conf);
	if (ret < 0 && c->rx_intr) {
		/* a PMD that refuses Rx interrupts: without them (its lcores nap) */
		conf.intr_conf.rxq = 0;
		ret = rte_eth_dev_configure(c->port_id, nq, nq, &conf);
	}
	if (ret < 0)
		return ret;
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(c->port_id, &nb_rxd, &nb_txd);
	if (ret < 0)
		return ret;
	if (socket < 0)
		socket = (int)rte_socket_id();
	for (q = 0; q < nq; q++) {
		ret = rte_eth_rx_queue_setup(c->port_id, q, nb_rxd, socket, NULL, c->pool);
		if (ret < 0)
			return ret;
		ret = rte_eth_tx_queue_setup(c->port_id, q, nb_txd, socket, NULL);
		if (ret < 0)
			return ret;
	}
	if (c->mtu != 0 && c->set_mtu) {
		ret = rte_eth_dev_set_mtu(c->port_id, c->mtu);
		if (ret < 0)
			fprintf(stderr, "port %u: MTU %u not set: %s\n", c->port_id, c->mtu,
				strerror(-ret));
	}
	return 0;
}

int
wn_net_port_start(uint16_t port_id)
{
	int ret = rte_eth_dev_start(port_id);

	if (ret < 0)
		return ret;
	(void)rte_eth_promiscuous_enable(port_id);
	return 0;
}

int
wn_net_port_setup(const struct wn_port_conf *c, uint64_t *tx_capa, uint64_t *rx_capa)
{
	int ret = wn_net_port_configure(c, tx_capa, rx_capa);

	return ret < 0 ? ret : wn_net_port_start(c->port_id);
}

bool
wn_net_port_reconnects_by_restart(uint16_t port_id)
{
	struct rte_eth_dev_info info;
	const struct rte_devargs *da;

	if (rte_eth_dev_info_get(port_id, &info) != 0 || info.driver_name == NULL ||
	    strcmp(info.driver_name, "net_memif") != 0 || info.device == NULL)
		return false;
	da = rte_dev_devargs(info.device);
	/* role=client (the PMD's default role is server) */
	return da != NULL && da->args != NULL && strstr(da->args, "role=client") != NULL;
}

void
wn_net_port_shutdown(void)
{
	struct rte_eth_dev_info info;
	uint16_t pid;

	RTE_ETH_FOREACH_DEV(pid) {
		if (rte_eth_dev_info_get(pid, &info) == 0 && info.driver_name != NULL &&
		    strcmp(info.driver_name, "net_memif") == 0)
			return;
	}
	RTE_ETH_FOREACH_DEV(pid) {
		(void)rte_eth_dev_stop(pid);
		(void)rte_eth_dev_close(pid);
	}
	rte_eal_cleanup();
}

struct wn_pcap {
	rte_spinlock_t lock; /* lcores of one port share the file */
	rte_pcapng_t *w;
	struct rte_mempool *pool;
	uint32_t snaplen;
	uint64_t written, dropped;
};

struct wn_pcap *
wn_net_pcap_open(const char *path, uint32_t snaplen, const char *app)
{
	static unsigned int seq;
	char name[RTE_MEMPOOL_NAMESIZE];
	struct wn_pcap *p;
	int fd;

	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	rte_spinlock_init(&p->lock);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto fail;
	p->w = rte_pcapng_fdopen(fd, NULL, NULL, app, NULL);
	if (p->w == NULL) {
		close(fd);
		errno = rte_errno;
		goto fail;
	}
#if WN_PCAPNG_ADD_PORTS
	{
		uint16_t pid;

		RTE_ETH_FOREACH_DEV(pid)
			if (rte_pcapng_add_interface(p->w, pid, NULL, NULL, NULL) < 0) {
				errno = rte_errno != 0 ? rte_errno : EIO;
				rte_pcapng_close(p->w);
				goto fail;
			}
	}
#endif
	snprintf(name, sizeof(name), "wn_pcap%u", seq++);
	/* a copy is one mbuf: the snap length bounds its data room (16 bits) */
	p->snaplen = RTE_MIN(snaplen, (uint32_t)(UINT16_MAX - RTE_PKTMBUF_HEADROOM - 256));
	p->pool = rte_pktmbuf_pool_create(name, 8191, 256, 0, rte_pcapng_mbuf_size(p->snaplen),
					  SOCKET_ID_ANY);
	if (p->pool == NULL) {
		errno = rte_errno;
		rte_pcapng_close(p->w);
		goto fail;
	}
	return p;
fail:
	free(p);
	return NULL;
}

/*
 * DPDK 22.11's rte_pcapng_write_packets() documents that it frees the copies but does not
 * (dpdk-dumpcap frees them itself), so free them here.
 */
static void
pcap_flush(struct wn_pcap *p, struct rte_mbuf **cp, uint16_t n)
{
	rte_spinlock_lock(&p->lock);
	if (rte_pcapng_write_packets(p->w, cp, n) < 0)
		p->dropped += n;
	else
		p->written += n;
	rte_spinlock_unlock(&p->lock);
	rte_pktmbuf_free_bulk(cp, n);
}

/*
 * The capture shows checksums as a wire would carry them: what a sender left to offload
 * (a NIC's, or nothing on a local link, WN_NET_CKSUM_LOCAL) is computed into the frame
 * before it is copied, and a local link's received pseudo-header sums are completed. Only
 * a capturing run pays for it; the receiver then verifies the full sum it finds.
 */
static void
pcap_cksums(uint16_t port_id, struct rte_mbuf **pkts, uint16_t n, enum rte_pcapng_direction dir)
{
	uint16_t i;

	if (dir == RTE_PCAPNG_DIRECTION_OUT) {
		for (i = 0; i < n; i++)
			wn_net_tx_cksum_complete(pkts[i]);
	} else if (wn_net_port_local(port_id)) {
		for (i = 0; i < n; i++)
			wn_net_rx_cksum_complete(pkts[i]);
	}
}

void
wn_net_pcap_capture(struct wn_pcap *p, uint16_t port_id, uint16_t queue, struct rte_mbuf **pkts,
		uint16_t n, enum rte_pcapng_direction dir)
{
	struct rte_mbuf *cp[PCAP_BURST];
	uint64_t ts;
	uint16_t i, k = 0;

	if (p == NULL || n == 0)
		return;
	ts = rte_get_tsc_cycles();
	pcap_cksums(port_id, pkts, n, dir);
	for (i = 0; i < n; i++) {
		cp[k] = WN_PCAPNG_COPY(port_id, queue, pkts[i], p->pool, p->snaplen, ts, dir);
		if (cp[k] == NULL) {
			rte_spinlock_lock(&p->lock);
			p->dropped++;
			rte_spinlock_unlock(&p->lock);
			continue;
		}
		if (++k == PCAP_BURST) {
			pcap_flush(p, cp, k);
			k = 0;
		}
	}
	if (k > 0)
		pcap_flush(p, cp, k);
}

void
wn_net_pcap_stats(const struct wn_pcap *p, uint64_t *written, uint64_t *dropped)
{
	*written = p != NULL ? p->written : 0;
	*dropped = p != NULL ? p->dropped : 0;
}

void
wn_net_pcap_close(struct wn_pcap *p)
{
	if (p == NULL)
		return;
	rte_pcapng_close(p->w);
	rte_mempool_free(p->pool);
	free(p);
}

bool
wn_net_port_copies(uint16_t port_id)
{
	static const char *const ok[] = { "net_memif", "net_af_packet", "net_tap", "net_ring",
					  "net_pcap", "net_null" };

	return wn_port_driver_is(port_id, ok, RTE_DIM(ok));
}
