/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wake-up sources of a port queue for an lcore that sleeps when idle (wn_port.h): the ethdev
 * Rx interrupt (rte_eth_dev_rx_intr_*, as DPDK's l3fwd-power uses it), or net_memif's
 * interrupt mode.
 *
 * net_memif in DPDK 22.11 has the memif protocol's interrupt mode but no ethdev op for it:
 * each ring has an eventfd shared by both ends, and a sender writes it after a burst unless the
 * receiver set MEMIF_RING_FLAG_MASK_INT in the ring's flags (it does, at connect: polling).
 * Clearing that flag before sleeping and waiting on the eventfd is what rx_intr_enable would
 * do. The PMD keeps the eventfd and the ring address in its private structures; they are
 * mirrored below from DPDK 22.11 (drivers/net/memif/rte_eth_memif.h, memif.h; the start of
 * struct rte_eth_dev from lib/ethdev/ethdev_driver.h, whose array rte_eth_devices the PMDs
 * share). Each use checks what it reads (the ethdev's receive function against
 * rte_eth_fp_ops, the queue's port, region bounds, the ring's cookie, an eventfd), and anything
 * unexpected (another DPDK) leaves the queue without a wake-up: the lcore then naps.
 *
 * The PMD's control thread (EAL interrupt thread) unmaps the regions and closes the eventfds
 * when the peer disconnects; it marks the link down first (memif_disconnect), so every peek
 * checks the link before it reads a region: the same guard as the PMD's own rx_burst (which
 * checks its CONNECTED flag). The window between that check and the read is closed by the
 * caller: lib/node's unmap fence (node_fence.c) holds the unmapping until every lcore passed a
 * quiescent state. An eventfd closed that way left the epoll set; the next attach registers
 * the new one.
 *
 * The memif sender (the peer's PMD) stores the ring's head and then reads the flag without a
 * fence, so a receiver that unmasks at that moment could miss the eventfd write: senders that
 * use wn_net_port_wake_tx_burst() check the flag again after a fence; other peers are covered by
 * the sleeping lcore's longest sleep.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_epoll.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_version.h>

#include "wn_port.h"

/* ---- DPDK 22.11's private layouts (see the file comment) ---- */
#define MEMIF_COOKIE 0x3E31F20u
#define MEMIF_RING_FLAG_MASK_INT 1u
#define MEMIF_MAX_REGIONS 256
/* struct rte_eth_dev: 6 function pointers, data, process_private, ...; 16512 octets with
 * RTE_MAX_QUEUES_PER_PORT 1024 (two callback arrays of that many pointers) */
#define ETHDEV_SIZE 16512u

struct ethdev_head {
	void *fn[6];
	void *data;
	void *process_private;
};

struct memif_region {
	void *addr;
	uint64_t region_size;
	int fd;
	uint32_t pkt_buffer_offset;
};

struct memif_queue {
	struct rte_mempool *mempool;
	void *pmd;
	int type;
	uint16_t region;
	uint16_t in_port;
	uint32_t ring_offset;
	uint16_t last_head;
	uint16_t last_tail;
	struct rte_mbuf **buffers;
	uint64_t n_pkts;
	uint64_t n_bytes;
	struct rte_intr_handle *intr_handle;
	uint8_t log2_ring_size;
};

struct memif_proc {
	struct memif_region *regions[MEMIF_MAX_REGIONS];
	uint16_t regions_num;
};

struct memif_ring {
	uint32_t cookie;
	_Atomic uint16_t flags;
	uint16_t head;
};

/* librte_ethdev's device array (an internal symbol of DPDK 22.11) */
extern unsigned char rte_eth_devices[];

enum wake_kind { WAKE_ETHDEV = 1, WAKE_MEMIF };

struct wn_port_wake {
	enum wake_kind kind;
	uint16_t port, queue;
	int epfd;
	void *data;
	/* memif: the Rx ring we unmask and its eventfd (registered in epfd), the Tx ring's */
	struct rte_epoll_event ev;
	int rx_fd;                  /* fd registered in epfd (-1: none) */
	int rx_ok, tx_ok;           /* the last fds found to be eventfds */
	bool armed;
};

/*
 * The memif ring and eventfd of queue @p q (@p tx: its transmit side), or NULL; no system
 * call (the caller checks a new fd with is_eventfd()).
 */
static struct memif_ring *
memif_peek(uint16_t port, uint16_t q, bool tx, int *fd)
{
	const struct rte_eth_fp_ops *fpo = &rte_eth_fp_ops[port];
	const struct ethdev_head *dev;
	const struct memif_queue *mq;
	const struct memif_proc *pp;
	const struct memif_region *r;
	struct memif_ring *ring;
	struct rte_eth_link link;

	if (RTE_VERSION < RTE_VERSION_NUM(22, 11, 0, 0) ||
	    RTE_VERSION >= RTE_VERSION_NUM(22, 12, 0, 0) || RTE_MAX_QUEUES_PER_PORT != 1024)
		return NULL;
	/* down: the regions may be unmapped at any moment (file comment) */
	if (rte_eth_link_get_nowait(port, &link) != 0 || link.link_status == RTE_ETH_LINK_DOWN)
		return NULL;
	dev = (const struct ethdev_head *)(rte_eth_devices + (size_t)port * ETHDEV_SIZE);
	if (dev->fn[0] != (void *)fpo->rx_pkt_burst || dev->process_private == NULL)
		return NULL;
	mq = tx ? (fpo->txq.data != NULL ? fpo->txq.data[q] : NULL)
		: (fpo->rxq.data != NULL ? fpo->rxq.data[q] : NULL);
	if (mq == NULL || mq->in_port != port || mq->intr_handle == NULL)
		return NULL;
	pp = dev->process_private;
	if (pp->regions_num == 0 || mq->region >= pp->regions_num)
		return NULL;
	r = pp->regions[mq->region];
	if (r == NULL || r->addr == NULL || (uint64_t)mq->ring_offset + 64 > r->region_size)
		return NULL;
	ring = (struct memif_ring *)((uint8_t *)r->addr + mq->ring_offset);
	if (ring->cookie != MEMIF_COOKIE)
		return NULL;
	*fd = rte_intr_fd_get(mq->intr_handle);
	return *fd >= 0 ? ring : NULL;
}

/* An eventfd is an anonymous inode: no file type bits. */
static bool
is_eventfd(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == 0;
}

/* The memif ring of queue @p q whose eventfd passed is_eventfd() (*checked caches it). */
static struct memif_ring *
memif_ring(uint16_t port, uint16_t q, bool tx, int *fd, int *checked)
{
	struct memif_ring *ring = memif_peek(port, q, tx, fd);

	if (ring == NULL)
		return NULL;
	if (*fd != *checked) {
		if (!is_eventfd(*fd))
			return NULL;
		*checked = *fd;
	}
	return ring;
}

static bool
is_memif(uint16_t port)
{
	struct rte_eth_dev_info info;

	return rte_eth_dev_info_get(port, &info) == 0 && info.driver_name != NULL &&
	       strcmp(info.driver_name, "net_memif") == 0;
}

/* Consume the eventfd's count (epoll callback, also before polling again). */
static void
drain(int fd, void *arg)
{
	uint64_t v;

	(void)arg;
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
}

struct wn_port_wake *
wn_net_port_wake_open(uint16_t port_id, uint16_t queue, int epfd, void *data)
{
	struct wn_port_wake *w;

	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return NULL;
	w->port = port_id;
	w->queue = queue;
	w->epfd = epfd;
	w->data = data;
	w->rx_fd = w->rx_ok = w->tx_ok = -1;
	if (is_memif(port_id)) {
		w->kind = WAKE_MEMIF;
		return w;
	}
	if (rte_eth_dev_rx_intr_ctl_q(port_id, queue, epfd, RTE_INTR_EVENT_ADD, data) == 0) {
		w->kind = WAKE_ETHDEV;
		(void)rte_eth_dev_rx_intr_disable(port_id, queue);
		return w;
	}
	free(w);
	errno = ENOTSUP;
	return NULL;
}

void
wn_net_port_wake_close(struct wn_port_wake *w)
{
	if (w == NULL)
		return;
	wn_net_port_wake_disarm(w);
	if (w->kind == WAKE_ETHDEV)
		(void)rte_eth_dev_rx_intr_ctl_q(w->port, w->queue, w->epfd, RTE_INTR_EVENT_DEL,
						w->data);
	else if (w->rx_fd >= 0)
		(void)rte_epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->rx_fd, &w->ev);
	free(w);
}

/*
 * memif: the Rx ring, its eventfd registered in epfd (the fd changes on a reconnect); NULL:
 * link down, or not the layout we know.
 */
static struct memif_ring *
memif_attach(struct wn_port_wake *w)
{
	struct memif_ring *ring;
	int fd = -1;

	ring = memif_ring(w->port, w->queue, false, &fd, &w->rx_ok);
	if (ring == NULL) {
		w->rx_fd = -1; /* link down: the PMD closes the eventfd, it leaves the epoll set */
		return NULL;
	}
	if (fd == w->rx_fd)
		return ring;
	/* a new connection's eventfd (its number may be the old one's: not registered yet) */
	if (w->rx_fd >= 0)
		(void)epoll_ctl(w->epfd, EPOLL_CTL_DEL, w->rx_fd, NULL);
	(void)epoll_ctl(w->epfd, EPOLL_CTL_DEL, fd, NULL);
	w->rx_fd = -1;
	memset(&w->ev, 0, sizeof(w->ev));
	w->ev.epdata.event = EPOLLIN;
	w->ev.epdata.data = w->data;
	w->ev.epdata.cb_fun = drain;
	if (rte_epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &w->ev) != 0)
		return NULL;
	w->rx_fd = fd;
	return ring;
}

int
wn_net_port_wake_arm(struct wn_port_wake *w)
{
	struct memif_ring *ring;
	int ret;

	if (w->armed)
		return 0;
	if (w->kind == WAKE_ETHDEV) {
		ret = rte_eth_dev_rx_intr_enable(w->port, w->queue);
		if (ret != 0 && ret != -ENOTSUP) /* tap: its queue fd is always live */
			return -EAGAIN;
	} else {
		ring = memif_attach(w);
		if (ring == NULL)
			return -EAGAIN;
		/* unmask; the caller fences (its bell) and polls once more before waiting */
		atomic_fetch_and_explicit(&ring->flags, (uint16_t)~MEMIF_RING_FLAG_MASK_INT,
					  memory_order_relaxed);
	}
	w->armed = true;
	return 0;
}

void
wn_net_port_wake_disarm(struct wn_port_wake *w)
{
	struct memif_ring *ring;
	int fd = -1;

	if (!w->armed)
		return;
	w->armed = false;
	if (w->kind == WAKE_ETHDEV) {
		(void)rte_eth_dev_rx_intr_disable(w->port, w->queue);
		return;
	}
	/*
	 * Masked again (the PMD's rx_burst stops reading the eventfd, the peer stops writing);
	 * found again: a reconnect while we slept replaced the regions.
	 */
	ring = memif_peek(w->port, w->queue, false, &fd);
	if (ring == NULL) {
		w->rx_fd = -1; /* link down: its eventfd is closed, the number may be reused */
		return;
	}
	atomic_fetch_or_explicit(&ring->flags, (uint16_t)MEMIF_RING_FLAG_MASK_INT,
				 memory_order_relaxed);
	if (fd == w->rx_fd)
		drain(fd, NULL);
}

void
wn_net_port_wake_forget(struct wn_port_wake *w)
{
	w->armed = false;
	if (w->kind == WAKE_MEMIF)
		w->rx_fd = -1; /* closed with the connection, or registered again (memif_attach) */
}

uint16_t
wn_net_port_wake_tx_burst(struct wn_port_wake *w, struct rte_mbuf **pkts, uint16_t n)
{
	struct memif_ring *ring;
	uint16_t before, sent;
	int fd = -1;

	if (w->kind != WAKE_MEMIF)
		return rte_eth_tx_burst(w->port, w->queue, pkts, n);
	ring = memif_ring(w->port, w->queue, true, &fd, &w->tx_ok);
	if (ring == NULL)
		return rte_eth_tx_burst(w->port, w->queue, pkts, n);
	before = atomic_load_explicit(&ring->flags, memory_order_relaxed);
	sent = rte_eth_tx_burst(w->port, w->queue, pkts, n);
	if (sent == 0 || (before & MEMIF_RING_FLAG_MASK_INT) == 0)
		return sent; /* the peer was armed before: the PMD wrote its eventfd */
	/* the peer may have unmasked while the PMD checked: fence, then look again */
	atomic_thread_fence(memory_order_seq_cst);
	if ((atomic_load_explicit(&ring->flags, memory_order_relaxed) &
	     MEMIF_RING_FLAG_MASK_INT) == 0) {
		uint64_t one = 1;

		if (write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			return sent;
	}
	return sent;
}
