/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zero-copy transmit (DESIGN.md "As built", Transmit copies).
 *
 * An FPDU whose payload is registered memory (a Send/Write WQE's, or a Read Response's) is
 * described by wn_mpa_fpdu_gather(): ULPDU_Length, PAD, Markers and CRC in scratch octets
 * (copied into TCP's send buffer), the payload in place (CRC32c computed over it there), and
 * appended with wn_tcp_send_record_ext(): TCP sends it as mbuf chains with the client's
 * pages attached. One token (struct dp_zc) per FPDU carries the rte_mbuf_ext_shared_info that
 * counts TCP's reference and one per mbuf; the regions behind it are pinned (wn_mem_pin), so
 * a deregistration (or a dying client) does not get its DONE, hence no munmap, before every
 * token is back.
 *
 * The last reference may go on any thread (a PMD freeing the mbuf): the free callback only
 * enqueues the token on its shard's ring. The shard drains that ring every loop iteration:
 * unpins, tells the engine (wn_rnic_tx_release: the WQE's CQE waits for all its FPDUs, in SQ
 * order) and returns the token. A connection is freed only when none of its tokens is out.
 * The pool and the rings live as long as the process: a PMD may free an mbuf after the
 * dataplane is gone.
 */
#include <errno.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mempool.h>

#include "dp.h"

#define ZC_LOG(lvl, ...) rte_log(RTE_LOG_##lvl, RTE_LOGTYPE_USER1, "warpnicd zc: " __VA_ARGS__)

/** Tokens (FPDUs in flight zero-copy) of the whole process. */
#define ZC_TOKENS 65535
/** Gather pieces of one FPDU (length, header, payload pieces split by Markers, PAD, CRC). */
#define ZC_SG_MAX 64

struct dp_zc {
	struct rte_mbuf_ext_shared_info sh; /* TCP's reference + one per mbuf */
	struct rte_ring *done;              /* the owning shard's ring */
	struct dp_conn *conn;
	uint32_t wqe;
	bool held;                          /* the engine holds WQE @c wqe's completion */
	uint8_t n_pins;
	uint32_t pins[WN_RNIC_MAX_IOV];
};

static struct rte_mempool *zc_pool;
static struct rte_ring *zc_ring[DP_MAX_SHARDS];

/* The last reference went (any thread): back to the owning shard. */
static void
zc_free_cb(void *addr, void *opaque)
{
	struct dp_zc *z = opaque;

	(void)addr;
	/* the ring holds every token of the pool: never full */
	(void)rte_ring_mp_enqueue(z->done, z);
}

/*
 * Ports whose transmit path copies (or hands over) the mbuf's virtual addresses: client
 * memory (a memfd mapped by the control thread) has no IOVA a device could DMA from; a NIC
 * would need rte_extmem_register() + rte_dev_dma_map() of every region first (not done).
 * net_ring is the fault injector's face (it wraps one of these).
 */
static bool
port_copies(uint16_t port)
{
	static const char *const ok[] = { "net_memif", "net_af_packet", "net_tap", "net_ring",
					  "net_pcap", "net_null" };
	struct rte_eth_dev_info info;

	if (rte_eth_dev_info_get(port, &info) != 0 || info.driver_name == NULL)
		return false;
	for (unsigned int i = 0; i < RTE_DIM(ok); i++)
		if (strcmp(info.driver_name, ok[i]) == 0)
			return true;
	return false;
}

int
dp_zc_init(struct wn_dp *dp)
{
	char name[RTE_RING_NAMESIZE];
	void *stale;

	if (!dp->c.zero_copy_tx)
		return 0;
	if (!port_copies(dp->c.port_id)) {
		if (dp->idx == 0)
			ZC_LOG(WARNING, "port %u may DMA from IOVAs; client memory is not DMA-mapped: "
			       "zero-copy transmit off\n", dp->c.port_id);
		return 0;
	}
	if (!(dp->c.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)) {
		if (dp->idx == 0)
			ZC_LOG(WARNING, "port %u cannot send mbuf chains: zero-copy transmit off\n",
			       dp->c.port_id);
		return 0;
	}
	if (zc_pool == NULL) {
		zc_pool = rte_mempool_create("wn_zc", ZC_TOKENS, sizeof(struct dp_zc), 256, 0,
					     NULL, NULL, NULL, NULL, SOCKET_ID_ANY, 0);
		if (zc_pool == NULL)
			goto fail;
	}
	if (zc_ring[dp->idx] == NULL) {
		snprintf(name, sizeof(name), "wn_zc_%u", dp->idx);
		zc_ring[dp->idx] = rte_ring_create(name, rte_align32pow2(ZC_TOKENS + 1),
						   SOCKET_ID_ANY, RING_F_SC_DEQ);
		if (zc_ring[dp->idx] == NULL)
			goto fail;
	}
	/* tokens of an earlier run (freed after its dataplane stopped) point nowhere now */
	while (rte_ring_sc_dequeue(zc_ring[dp->idx], &stale) == 0)
		rte_mempool_put(zc_pool, stale);
	dp->zc_done = zc_ring[dp->idx];
	dp->zc_on = true;
	return 0;
fail:
	ZC_LOG(WARNING, "no memory for zero-copy tokens (%s): zero-copy transmit off\n",
	       rte_strerror(rte_errno));
	return 0;
}

void
dp_zc_poll(struct wn_dp *dp)
{
	void *objs[DP_BURST];
	unsigned int n, i;

	if (dp->zc_done == NULL)
		return;
	do {
		n = rte_ring_sc_dequeue_burst(dp->zc_done, objs, DP_BURST, NULL);
		for (i = 0; i < n; i++) {
			struct dp_zc *z = objs[i];
			struct dp_conn *c = z->conn;

			for (unsigned int k = 0; k < z->n_pins; k++)
				wn_mem_unpin(dp->c.mem, z->pins[k]);
			if (z->held && c->qp != NULL && c->qp->eng != NULL)
				wn_rnic_tx_release(c->qp->eng, z->wqe);
			c->zc_out--;
			dp->st.zc_released++;
			rte_mempool_put(zc_pool, z);
		}
	} while (n == DP_BURST);
}

static bool
in_payload(const struct wn_rnic_ulpdu *u, const struct iovec *v)
{
	const uint8_t *p = v->iov_base;

	for (unsigned int i = 0; i < u->n_iov; i++)
		if (p >= u->iov[i].base && p + v->iov_len <= u->iov[i].base + u->iov[i].len)
			return true;
	return false;
}

static void
zc_put(struct wn_dp *dp, struct dp_zc *z)
{
	for (unsigned int k = 0; k < z->n_pins; k++)
		wn_mem_unpin(dp->c.mem, z->pins[k]);
	rte_mempool_put(zc_pool, z);
}

/*
 * Send one ULPDU zero-copy.
 * @return 0 or WN_RNIC_TX_HELD (taken), -EAGAIN (TCP has no room: retry), -ENOTSUP (not
 *   possible for this FPDU: copy it).
 */
int
dp_zc_tx(struct dp_conn *c, const struct wn_rnic_ulpdu *u, const struct wn_mpa_stream *st)
{
	struct wn_dp *dp = c->dp;
	struct iovec in[WN_RNIC_MAX_IOV + 1], sg[ZC_SG_MAX];
	struct wn_tcp_part parts[ZC_SG_MAX];
	uint8_t scratch[WN_MPA_GATHER_SCRATCH];
	uint32_t wire = 0, ext = 0;
	struct dp_zc *z;
	int n, ret;

	if (rte_mempool_get(zc_pool, (void **)&z) != 0) {
		dp->st.zc_fallback++;
		return -ENOTSUP;
	}
	z->n_pins = 0;
	in[0].iov_base = (void *)(uintptr_t)u->hdr;
	in[0].iov_len = u->hdr_len;
	for (unsigned int i = 0; i < u->n_iov; i++) {
		bool dup = false;

		in[i + 1].iov_base = (void *)(uintptr_t)u->iov[i].base;
		in[i + 1].iov_len = u->iov[i].len;
		for (unsigned int k = 0; k < z->n_pins; k++)
			dup |= z->pins[k] == u->iov[i].stag;
		if (dup)
			continue;
		if (u->iov[i].stag == 0 || wn_mem_pin(dp->c.mem, u->iov[i].stag) != 0) {
			zc_put(dp, z); /* a window (its MR owns the pages) or inline data */
			dp->st.zc_fallback++;
			return -ENOTSUP;
		}
		z->pins[z->n_pins++] = u->iov[i].stag;
	}
	n = wn_mpa_fpdu_gather(sg, ZC_SG_MAX, scratch, sizeof(scratch), in, u->n_iov + 1u,
			       c->mpa.tx_next, st);
	if (n <= 0) {
		zc_put(dp, z);
		dp->st.zc_fallback++;
		return -ENOTSUP;
	}
	for (int k = 0; k < n; k++) {
		parts[k].base = sg[k].iov_base;
		parts[k].len = (uint32_t)sg[k].iov_len;
		parts[k].ext = in_payload(u, &sg[k]);
		parts[k].iova = RTE_BAD_IOVA; /* ports that copy; a NIC needs rte_extmem_register */
		wire += parts[k].len;
		if (parts[k].ext)
			ext += parts[k].len;
	}
	memset(&z->sh, 0, sizeof(z->sh));
	z->sh.free_cb = zc_free_cb;
	z->sh.fcb_opaque = z;
	rte_mbuf_ext_refcnt_set(&z->sh, 1);
	z->done = dp->zc_done;
	z->conn = c;
	z->wqe = u->wqe;
	z->held = u->src == WN_RNIC_SRC_SQ;
	ret = wn_tcp_send_record_ext(c->tcp, parts, (unsigned int)n, &z->sh);
	if (ret != 0) {
		zc_put(dp, z);
		if (ret == -ENOBUFS)
			return -EAGAIN;
		dp->st.zc_fallback++;
		return -ENOTSUP;
	}
	c->mpa.tx_next += wire;
	c->zc_out++;
	dp->st.tx_fpdus++;
	dp->st.zc_fpdus++;
	dp->st.zc_bytes += ext;
	return z->held ? WN_RNIC_TX_HELD : 0;
}

/* ---------------------------------------------------------------- deregistration */

void
dp_zc_dereg(struct wn_dp *dp, uint32_t handle, uint32_t stag)
{
	if (wn_mem_pinned(dp->c.mem, stag) == 0) {
		dp_ctl_done(dp, handle);
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
	dp->n_dereg++;
	dp->st.mr_dereg_deferred++;
}

void
dp_zc_tick(struct wn_dp *dp)
{
	uint32_t i = 0;

	while (i < dp->n_dereg) {
		if (wn_mem_pinned(dp->c.mem, dp->dereg[i].stag) != 0) {
			i++;
			continue;
		}
		/* the last mbuf referencing the region is gone: it may be unmapped now */
		dp_ctl_done(dp, dp->dereg[i].handle);
		dp->dereg[i] = dp->dereg[--dp->n_dereg];
	}
}
