/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shard's lower layers (MPA/TCP, lib/mpa; DDP over SCTP, lib/sctp), the choice of one per
 * connection, and what zero-copy transmit needs from the
 * dataplane: whether the port can send client memory in place (a NIC: only regions lib/node
 * DMA-mapped for it, wn_dp_dma_map), region pins (lib/mem) for the FPDUs in flight, and MR
 * deregistrations that wait for those pins before the control thread may unmap the memory.
 */
#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_log.h>

#include "dp_priv.h"
#include "wn_wire_sctp.h"

/* May the region behind @p stag be sent in place: a port that copies, or a mapped region. */
static bool
dma_region_ok(const struct wn_dp_dma_map *d, uint32_t stag)
{
	uint32_t i = wn_mem_stag_index(stag);

	if (d == NULL || !d->needed)
		return true;
	return d->usable && i < d->cap && __atomic_load_n(&d->gen[i], __ATOMIC_ACQUIRE) != 0;
}

/*
 * A region pinned while TCP references it (and an mbuf sends it in place, @p dma: for a NIC
 * only if it is DMA-mapped).
 */
static int
pin(void *arg, uint32_t stag, bool dma)
{
	struct wn_dp *dp = arg;

	if (dma && !dma_region_ok(dp->c.dma, stag)) {
		dp->st.zc_unmapped++;
		return -ENOTSUP; /* copied */
	}
	return wn_mem_pin(dp->c.mem, stag);
}

static void
unpin(void *arg, uint32_t stag)
{
	struct wn_dp *dp = arg;

	wn_mem_unpin(dp->c.mem, stag);
}

/*
 * Zero-copy transmit if configured and the port can send client memory: as it is (ports
 * that copy or pass virtual addresses), or from regions DMA-mapped for it (lib/node).
 */
static bool
zc_possible(const struct wn_dp *dp)
{
	if (!dp->c.zero_copy_tx)
		return false;
	if (dp->c.dma != NULL) {
		if (dp->c.dma->needed && !dp->c.dma->usable)
			return false; /* lib/node logged why */
	} else if (!wn_net_port_copies(dp->c.port_id)) {
		/* nobody maps regions for this NIC (a dataplane without lib/node) */
		if (dp->idx == 0)
			DP_LOG(WARNING, "port %u may DMA from IOVAs; client memory is not "
			       "DMA-mapped: zero-copy transmit off\n", dp->c.port_id);
		return false;
	}
	if (!(dp->c.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)) {
		if (dp->idx == 0)
			DP_LOG(WARNING, "port %u cannot send mbuf chains: zero-copy transmit off\n",
			       dp->c.port_id);
		return false;
	}
	return true;
}

int
wn_dp_llp_create(struct wn_dp *dp)
{
	struct wn_mpa_tcp_conf mc = {
		.tcp = dp->tcp,
		.index = dp->idx,
		.rev = dp->c.mpa_rev,
		.markers = dp->c.markers,
		.crc = dp->c.crc,
		.p2p = dp->c.p2p,
		.rtr = dp->c.rtr,
		.timeout_us = dp->c.mpa_timeout_us,
		.ref_tx = dp->c.tx_ref,
		.ref_min = dp->c.tx_ref_min != 0 ? dp->c.tx_ref_min : DP_TX_REF_MIN,
		.zero_copy = zc_possible(dp),
		.zero_copy_min = dp->c.zero_copy_min,
		.pin = pin,
		.unpin = unpin,
		.pin_arg = dp,
		.iova_va = dp->c.dma != NULL && dp->c.dma->usable,
	};

	struct wn_sctp_conf sc = {
		.pool = dp->c.pool,
		.index = dp->idx,
		.mtu = dp->c.mtu,
		.enhanced = dp->c.mpa_rev >= 2, /* RFC 6581's session control, as for MPA */
		.p2p = dp->c.p2p,
		.rtr = dp->c.rtr,
		.timeout_us = dp->c.mpa_timeout_us,
		.sockbuf = dp->c.sockbuf,
	};

	dp->llp[DP_LLP_MPA] = wn_mpa_tcp_create(&mc);
	if (dp->llp[DP_LLP_MPA] == NULL)
		return -errno;
	/* usrsctp copies every message: zero-copy is MPA/TCP's only */
	dp->llp[DP_LLP_SCTP] = wn_sctp_create(&sc);
	if (dp->llp[DP_LLP_SCTP] == NULL)
		return -errno;
	return wn_net_if_proto_rx(dp->nif, WN_SCTP_IPPROTO, wn_sctp_input, dp->llp[DP_LLP_SCTP]);
}

void
wn_dp_llp_free(struct wn_dp *dp)
{
	wn_sctp_free(dp->llp[DP_LLP_SCTP]);
	wn_mpa_tcp_free(dp->llp[DP_LLP_MPA]);
}

enum dp_llp
wn_dp_llp_pick(const struct wn_dp *dp, uint32_t ctl_llp)
{
	if (ctl_llp == WN_CTL_LLP_DEFAULT)
		ctl_llp = dp->c.llp;
	return ctl_llp == WN_CTL_LLP_SCTP ? DP_LLP_SCTP : DP_LLP_MPA;
}

int
wn_dp_llp_listen(struct wn_dp *dp, struct dp_listen *l, const struct wn_llp_ep *ep)
{
	/* a listener takes whichever lower layer the peer connects over */
	for (unsigned int i = 0; i < DP_LLP_N; i++) {
		l->l[i] = wn_llp_listen(dp->llp[i], ep, wn_dp_conn_incoming, l);
		if (l->l[i] == NULL) {
			int err = errno;

			wn_dp_llp_unlisten(dp, l);
			errno = err;
			return -err;
		}
	}
	return 0;
}

void
wn_dp_llp_unlisten(struct wn_dp *dp, struct dp_listen *l)
{
	for (unsigned int i = 0; i < DP_LLP_N; i++) {
		if (l->l[i] != NULL)
			wn_llp_unlisten(dp->llp[i], l->l[i]);
		l->l[i] = NULL;
	}
}

unsigned int
wn_dp_llp_poll(struct wn_dp *dp)
{
	unsigned int work = 0;

	for (unsigned int i = 0; i < DP_LLP_N; i++)
		work += wn_llp_poll(dp->llp[i], dp->now);
	return work;
}

unsigned int
wn_dp_llp_tx(struct wn_dp *dp)
{
	struct rte_mbuf *pkts[DP_BURST];
	unsigned int work = 0;
	uint16_t n;

	while ((n = wn_sctp_tx_bulk(dp->llp[DP_LLP_SCTP], pkts, DP_BURST)) > 0) {
		work += n;
		n = wn_dp_loopback(dp, pkts, n);
		wn_net_output_bulk(dp->nif, pkts, n, dp->now);
	}
	return work;
}

/* ---------------------------------------------------------------- deregistration */

/* Pins that may still reference the memory of a deregistered MR. */
static bool
zc_pinned(struct wn_dp *dp, uint32_t stag, uint32_t stag2)
{
	return wn_mem_pinned(dp->c.mem, stag) != 0 ||
	       (stag2 != 0 && wn_mem_pinned(dp->c.mem, stag2) != 0);
}

void
wn_dp_zc_dereg(struct wn_dp *dp, uint32_t handle, uint32_t stag, uint32_t stag2)
{
	if (!zc_pinned(dp, stag, stag2)) {
		wn_dp_ctl_done(dp, handle);
		return;
	}
	if (dp->n_dereg == dp->cap_dereg) {
		uint32_t cap = dp->cap_dereg != 0 ? 2 * dp->cap_dereg : 16;
		void *p = realloc(dp->dereg, cap * sizeof(*dp->dereg));

		if (p == NULL) {
			/* no DONE: the region stays mapped (leaked) rather than unmapped under
			 * an mbuf that still points into it */
			dp->st.ctl_drop++;
			return;
		}
		dp->dereg = p;
		dp->cap_dereg = cap;
	}
	dp->dereg[dp->n_dereg].handle = handle;
	dp->dereg[dp->n_dereg].stag = stag;
	dp->dereg[dp->n_dereg].stag2 = stag2;
	dp->n_dereg++;
	dp->st.mr_dereg_deferred++;
}

void
wn_dp_zc_tick(struct wn_dp *dp)
{
	uint32_t i = 0;

	while (i < dp->n_dereg) {
		if (zc_pinned(dp, dp->dereg[i].stag, dp->dereg[i].stag2)) {
			i++;
			continue;
		}
		/* the last mbuf referencing the region is gone: it may be unmapped now */
		wn_dp_ctl_done(dp, dp->dereg[i].handle);
		dp->dereg[i] = dp->dereg[--dp->n_dereg];
	}
}

bool
wn_dp_dma_tx_pending(struct wn_dp *dp)
{
	struct wn_llp_stats ls;

	if (dp->c.dma == NULL || !dp->c.dma->tx_cleanup)
		return false;
	wn_llp_stats(dp->llp[DP_LLP_MPA], &ls);
	return ls.tokens != ls.zc_released;
}

void
wn_dp_dma_tx_reclaim(struct wn_dp *dp)
{
	int n;

	if (!wn_dp_dma_tx_pending(dp))
		return;
	/* zero-copy mbufs the NIC has sent: freed now, so their regions' pins go */
	n = rte_eth_tx_done_cleanup(dp->c.dma->port, dp->idx, 0);
	if (n > 0)
		dp->st.tx_reclaimed += (uint64_t)n;
}
