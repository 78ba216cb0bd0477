/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA over TCP: zero-copy transmit. An FPDU whose payload is registered memory is described
 * with the payload referenced in place; one token per such FPDU pins its regions until TCP's
 * ACK and the last mbuf that carries it are done, then the owner's WQE is released.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_bitops.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "mpa_tcp_priv.h"

static struct rte_mempool *zc_pool;
static struct rte_ring *zc_ring[WN_MPA_TCP_MAX_INSTANCES];

/* A held zero-copy FPDU's WQE may complete: the peer has all of it (or TCP is gone). */
static void
zc_ack(struct mpa_stream *s, struct mpa_zc *z)
{
	TAILQ_REMOVE(&s->zc_acks, z, q);
	z->queued = false;
	if (z->held && !s->released && s->l.up != NULL && s->l.up->tx_release != NULL)
		s->l.up->tx_release(s->l.up_arg, z->wqe);
	z->held = false;
}

/* SND.UNA moved: release the WQEs of the zero-copy FPDUs it passed. */
void
wn_mpa_zc_sent(struct wn_tcp_conn *tc, void *arg, uint32_t acked)
{
	struct mpa_stream *s = arg;
	uint32_t una = wn_tcp_snd_una(tc);
	struct mpa_zc *z;

	(void)acked;
	while ((z = TAILQ_FIRST(&s->zc_acks)) != NULL && (int32_t)(una - z->end_seq) >= 0)
		zc_ack(s, z);
}

static void
zc_put(struct mpa_proto *p, struct mpa_zc *z)
{
	for (unsigned int k = 0; k < z->n_pins; k++)
		p->c.unpin(p->c.pin_arg, z->pins[k]);
	rte_mempool_put(zc_pool, z);
}

/* Zero-copy FPDUs ACKed and in no mbuf any more: unpin, release the WQE. */
unsigned int
wn_mpa_zc_poll(struct mpa_proto *p)
{
	void *objs[ZC_BURST];
	unsigned int n, i, total = 0;

	if (p->zc_done == NULL)
		return 0;
	do {
		n = rte_ring_sc_dequeue_burst(p->zc_done, objs, ZC_BURST, NULL);
		for (i = 0; i < n; i++) {
			struct mpa_zc *z = objs[i];
			struct mpa_stream *s = z->s;

			/* not ACKed (the connection closed or aborted): released now */
			if (z->queued)
				zc_ack(s, z);
			s->zc_out--;
			p->base.st.zc_released++;
			zc_put(p, z);
			wn_mpa_stream_maybe_dead(s);
		}
		total += n;
	} while (n == ZC_BURST);
	return total;
}

/* The last reference went (any thread): back to the owning instance. */
static void
zc_free_cb(void *addr, void *opaque)
{
	struct mpa_zc *z = opaque;

	(void)addr;
	/* the ring holds every token of the pool: never full */
	(void)rte_ring_mp_enqueue(z->done, z);
}

/* Pin every region @p u's payload comes from. @return 0, or -ENOTSUP (copy it). */
static int
zc_pin(struct mpa_proto *p, struct mpa_zc *z, const struct wn_llp_ulpdu *u)
{
	z->n_pins = 0;
	for (unsigned int i = 0; i < u->n_iov; i++) {
		bool dup = false;

		for (unsigned int k = 0; k < z->n_pins; k++)
			dup |= z->pins[k] == u->iov[i].stag;
		if (dup)
			continue;
		if (u->iov[i].stag == 0 || p->c.pin(p->c.pin_arg, u->iov[i].stag) != 0)
			return -ENOTSUP; /* a window (its MR owns the pages) or inline data */
		z->pins[z->n_pins++] = u->iov[i].stag;
	}
	return 0;
}

static bool
in_payload(const struct wn_llp_ulpdu *u, const struct iovec *v)
{
	const uint8_t *b = v->iov_base;

	for (unsigned int i = 0; i < u->n_iov; i++)
		if (b >= u->iov[i].base && b + v->iov_len <= u->iov[i].base + u->iov[i].len)
			return true;
	return false;
}

/* Describe the FPDU of @p u in @p parts (payload referenced). @return parts, or <= 0. */
static int
zc_describe(struct mpa_stream *s, const struct wn_llp_ulpdu *u, struct wn_tcp_part *parts,
	    uint8_t *scratch, uint32_t *wire, uint32_t *ext)
{
	const struct wn_mpa_params *mp = wn_mpa_conn_params(&s->mpa);
	struct iovec in[WN_LLP_MAX_IOV + 1], sg[ZC_SG_MAX];
	int n;

	in[0].iov_base = (void *)(uintptr_t)u->hdr;
	in[0].iov_len = u->hdr_len;
	for (unsigned int i = 0; i < u->n_iov; i++) {
		in[i + 1].iov_base = (void *)(uintptr_t)u->iov[i].base;
		in[i + 1].iov_len = u->iov[i].len;
	}
	n = wn_mpa_fpdu_gather(sg, ZC_SG_MAX, scratch, WN_MPA_GATHER_SCRATCH, in,
			       u->n_iov + 1u, s->mpa.tx_next, &mp->tx);
	*wire = *ext = 0;
	for (int k = 0; k < n; k++) {
		parts[k].base = sg[k].iov_base;
		parts[k].len = (uint32_t)sg[k].iov_len;
		parts[k].ext = in_payload(u, &sg[k]);
		/* a NIC reads it by DMA: the region is mapped at IOVA = VA (lib/node node_dma.c) */
		parts[k].iova = s->p->c.iova_va && parts[k].ext ?
			(rte_iova_t)(uintptr_t)sg[k].iov_base : RTE_BAD_IOVA;
		*wire += parts[k].len;
		if (parts[k].ext)
			*ext += parts[k].len;
	}
	return n;
}

/*
 * Send one ULPDU zero-copy. @return 0 or WN_LLP_TX_HELD (taken), -EAGAIN (TCP has no room:
 * retry), -ENOTSUP (not possible for this FPDU: copy it).
 */
int
wn_mpa_zc_send(struct mpa_stream *s, const struct wn_llp_ulpdu *u)
{
	struct mpa_proto *p = s->p;
	struct wn_tcp_part parts[ZC_SG_MAX];
	uint8_t scratch[WN_MPA_GATHER_SCRATCH];
	uint32_t wire, ext;
	struct mpa_zc *z;
	int n, ret;

	if (rte_mempool_get(zc_pool, (void **)&z) != 0)
		return -ENOTSUP;
	if (zc_pin(p, z, u) != 0 ||
	    (n = zc_describe(s, u, parts, scratch, &wire, &ext)) <= 0) {
		zc_put(p, z);
		return -ENOTSUP;
	}
	memset(&z->sh, 0, sizeof(z->sh));
	z->sh.free_cb = zc_free_cb;
	z->sh.fcb_opaque = z;
	rte_mbuf_ext_refcnt_set(&z->sh, 1);
	z->done = p->zc_done;
	z->s = s;
	z->wqe = u->wqe;
	z->held = u->src == WN_LLP_SRC_SQ;
	z->queued = false;
	ret = wn_tcp_send_record_ext(s->tcp, parts, (unsigned int)n, &z->sh);
	if (ret != 0) {
		zc_put(p, z);
		return ret == -ENOBUFS ? -EAGAIN : -ENOTSUP;
	}
	s->mpa.tx_next += wire;
	if (z->held) {
		z->end_seq = wn_tcp_next_seq(s->tcp);
		z->queued = true;
		TAILQ_INSERT_TAIL(&s->zc_acks, z, q);
	}
	s->zc_out++;
	p->base.st.zc_ulpdus++;
	p->base.st.zc_bytes += ext;
	return z->held ? WN_LLP_TX_HELD : 0;
}

int
wn_mpa_zc_init(struct mpa_proto *p)
{
	char name[RTE_RING_NAMESIZE];
	void *stale;

	if (zc_pool == NULL) {
		zc_pool = rte_mempool_create("wn_zc", ZC_TOKENS, sizeof(struct mpa_zc), 256, 0,
					     NULL, NULL, NULL, NULL, SOCKET_ID_ANY, 0);
		if (zc_pool == NULL)
			return -rte_errno;
	}
	if (zc_ring[p->c.index] == NULL) {
		snprintf(name, sizeof(name), "wn_zc_%u", p->c.index);
		zc_ring[p->c.index] = rte_ring_create(name, rte_align32pow2(ZC_TOKENS + 1),
						      SOCKET_ID_ANY, RING_F_SC_DEQ);
		if (zc_ring[p->c.index] == NULL)
			return -rte_errno;
	}
	/* tokens of an earlier instance (freed after it stopped) point nowhere now */
	while (rte_ring_sc_dequeue(zc_ring[p->c.index], &stale) == 0)
		rte_mempool_put(zc_pool, stale);
	p->zc_done = zc_ring[p->c.index];
	return 0;
}
