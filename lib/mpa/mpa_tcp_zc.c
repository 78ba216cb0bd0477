/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA over TCP: FPDUs whose payload is registered memory, referenced by TCP where it lives
 * instead of copied into its send buffer: copied once into each segment (by reference, the
 * default) or attached to the segments' mbufs (zero-copy). One token per message pins its
 * regions until TCP's ACK of its last FPDU and the last mbuf that carries any of it are done;
 * then the owner's WQE is released.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bitops.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "wn_wire_crc.h"

#include "mpa_tcp_priv.h"

static struct rte_mempool *zc_pool;
static struct rte_ring *zc_ring[WN_MPA_TCP_MAX_INSTANCES];

static void zc_free_cb(void *addr, void *opaque);

static_assert(WN_MPA_ULPDU_LEN_SIZE + WN_LLP_HDR_MAX + 3 + WN_MPA_CRC_SIZE <=
	      WN_MPA_GATHER_SCRATCH, "an FPDU's copied octets without Markers fit the scratch");
static_assert(WN_LLP_MAX_IOV + 2 <= ZC_SG_MAX, "an FPDU without Markers fits the parts");

/* A held message's WQE may complete: the peer has all of it (or TCP is gone). */
static void
zc_ack(struct mpa_stream *s, struct mpa_zc *z)
{
	TAILQ_REMOVE(&s->zc_acks, z, q);
	z->queued = false;
	if (z->held && !s->released && s->l.up != NULL && s->l.up->tx_release != NULL)
		s->l.up->tx_release(s->l.up_arg, z->wqe);
	z->held = false;
}

/*
 * SND.UNA moved: release the WQEs of the messages it passed. Ack-held WQEs of copied messages
 * (ack completions) wait until the data that came with this acknowledgement was delivered
 * (wn_mpa_rx_input, or op_poll when none came): a Terminate behind the ACK reaches the QP
 * before the WQE completes.
 */
void
wn_mpa_zc_sent(struct wn_tcp_conn *tc, void *arg, uint32_t acked)
{
	struct mpa_stream *s = arg;
	uint32_t una = wn_tcp_snd_una(tc);
	struct mpa_zc *z;

	(void)acked;
	while ((z = TAILQ_FIRST(&s->zc_acks)) != NULL && (int32_t)(una - z->end_seq) >= 0)
		zc_ack(s, z);
	if (s->ackw_head != s->ackw_tail) {
		s->ackw_una = una;
		if (!s->ackw_queued) {
			TAILQ_INSERT_TAIL(&s->p->ackw_due, s, ackw_next);
			s->ackw_queued = true;
		}
	}
	/* a send refused for room: there is more now */
	if (s->l.tx_room_wait) {
		s->l.tx_room_wait = false;
		if (!s->released && s->l.up != NULL && s->l.up->tx_room != NULL)
			s->l.up->tx_room(s->l.up_arg);
	}
}

/* Ack completions: hold copied WQE @p wqe until the peer acknowledges what TCP has now. */
int
wn_mpa_ackw_push(struct mpa_stream *s, uint32_t wqe)
{
	if (s->ackw_tail - s->ackw_head == s->ackw_cap) {
		uint32_t cap = s->ackw_cap != 0 ? 2 * s->ackw_cap : 64;
		struct mpa_ackw *n = malloc(cap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM; /* completes as copies do: when TCP took it */
		for (uint32_t i = 0; i < s->ackw_tail - s->ackw_head; i++)
			n[i] = s->ackw[(s->ackw_head + i) & (s->ackw_cap - 1)];
		s->ackw_tail -= s->ackw_head;
		s->ackw_head = 0;
		free(s->ackw);
		s->ackw = n;
		s->ackw_cap = cap;
	}
	s->ackw[s->ackw_tail & (s->ackw_cap - 1)] =
		(struct mpa_ackw){.end_seq = wn_tcp_next_seq(s->tcp), .wqe = wqe};
	s->ackw_tail++;
	return 0;
}

/* Ack completions: release the held WQEs SND.UNA has passed. */
void
wn_mpa_ackw_release(struct mpa_stream *s)
{
	if (s->ackw_queued) {
		TAILQ_REMOVE(&s->p->ackw_due, s, ackw_next);
		s->ackw_queued = false;
	}
	while (s->ackw_head != s->ackw_tail) {
		const struct mpa_ackw *a = &s->ackw[s->ackw_head & (s->ackw_cap - 1)];

		if ((int32_t)(s->ackw_una - a->end_seq) < 0)
			break;
		s->ackw_head++;
		if (!s->released && s->l.up != NULL && s->l.up->tx_release != NULL)
			s->l.up->tx_release(s->l.up_arg, a->wqe);
	}
}

static void
zc_put(struct mpa_proto *p, struct mpa_zc *z)
{
	for (unsigned int k = 0; k < z->n_pins; k++)
		p->c.unpin(p->c.pin_arg, z->pins[k]);
	rte_mempool_put(zc_pool, z);
}

/* Messages ACKed and in no mbuf any more: unpin, release the WQE. */
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
			if (z->used)
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

/*
 * Pin every region @p u's payload comes from that @p z has not pinned yet (@p z->attach: for
 * the device). @return 0, or -ENOTSUP (copy the FPDU).
 */
static int
zc_pin(struct mpa_proto *p, struct mpa_zc *z, const struct wn_llp_ulpdu *u)
{
	for (unsigned int i = 0; i < u->n_iov; i++) {
		bool dup = false;

		for (unsigned int k = 0; k < z->n_pins; k++)
			dup |= z->pins[k] == u->iov[i].stag;
		if (dup)
			continue;
		if (u->iov[i].stag == 0 || z->n_pins == WN_LLP_MAX_IOV ||
		    p->c.pin(p->c.pin_arg, u->iov[i].stag, z->attach) != 0)
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

/*
 * The FPDU of @p u without Markers (RFC 5044 §4.1): ULPDU_Length and the header copied into
 * @p scratch, the payload pieces referenced, PAD and CRC in @p scratch (the CRC computed here
 * over all of it when @p crc, else a placeholder). @return parts.
 */
static int
describe_plain(struct mpa_stream *s, const struct wn_llp_ulpdu *u, bool attach, bool crc,
	       struct wn_tcp_part *parts, uint8_t *scratch, uint32_t *wire, uint32_t *ext)
{
	unsigned int pad = wn_mpa_pad_len(u->len), n = 0;
	uint8_t *tail = scratch + WN_MPA_ULPDU_LEN_SIZE + u->hdr_len;
	uint32_t reg = wn_crc32c_init();

	scratch[0] = (uint8_t)(u->len >> 8);
	scratch[1] = (uint8_t)u->len;
	memcpy(scratch + WN_MPA_ULPDU_LEN_SIZE, u->hdr, u->hdr_len);
	parts[n++] = (struct wn_tcp_part){ .base = scratch, .len = (uint32_t)(tail - scratch),
					   .iova = RTE_BAD_IOVA };
	for (unsigned int i = 0; i < u->n_iov; i++) {
		const uint8_t *b = u->iov[i].base;

		parts[n++] = (struct wn_tcp_part){
			.base = b, .len = u->iov[i].len, .ext = true,
			/* a NIC reads it by DMA: mapped at IOVA = VA (lib/node node_dma.c) */
			.iova = attach && s->p->c.iova_va ? (rte_iova_t)(uintptr_t)b : RTE_BAD_IOVA,
		};
	}
	memset(tail, 0, pad + WN_MPA_CRC_SIZE);
	if (crc) {
		/* RFC 5044 §4.4: everything but the CRC field; the payload read where it lives */
		reg = wn_wire_crc32c_update(reg, scratch, (size_t)(tail - scratch));
		for (unsigned int i = 0; i < u->n_iov; i++)
			reg = wn_wire_crc32c_update(reg, u->iov[i].base, u->iov[i].len);
		reg = wn_wire_crc32c_update(reg, tail, pad);
		wn_crc32c_put_wire(tail + pad, wn_crc32c_final(reg));
	}
	parts[n++] = (struct wn_tcp_part){ .base = tail, .len = pad + WN_MPA_CRC_SIZE,
					   .iova = RTE_BAD_IOVA };
	*wire = WN_MPA_ULPDU_LEN_SIZE + u->len + pad + WN_MPA_CRC_SIZE;
	*ext = u->len - u->hdr_len;
	return (int)n;
}

/*
 * Describe the FPDU of @p u in @p parts (payload referenced). Attached, its CRC is computed
 * here, reading the payload where it lives; by reference TCP computes it over its copy
 * (WN_TCP_REC_CRC32C) and the field is a placeholder. @return parts, or <= 0.
 */
static int
zc_describe(struct mpa_stream *s, const struct wn_llp_ulpdu *u, bool attach,
	    struct wn_tcp_part *parts, uint8_t *scratch, uint32_t *wire, uint32_t *ext)
{
	const struct wn_mpa_params *mp = wn_mpa_conn_params(&s->mpa);
	struct iovec in[WN_LLP_MAX_IOV + 1], sg[ZC_SG_MAX];
	struct wn_mpa_stream st = mp->tx;
	int n;

	if (!attach)
		st.crc = false;
	if (!st.markers)
		return describe_plain(s, u, attach, st.crc, parts, scratch, wire, ext);
	in[0].iov_base = (void *)(uintptr_t)u->hdr;
	in[0].iov_len = u->hdr_len;
	for (unsigned int i = 0; i < u->n_iov; i++) {
		in[i + 1].iov_base = (void *)(uintptr_t)u->iov[i].base;
		in[i + 1].iov_len = u->iov[i].len;
	}
	n = wn_wire_mpa_fpdu_gather(sg, ZC_SG_MAX, scratch, WN_MPA_GATHER_SCRATCH, in,
			       u->n_iov + 1u, s->mpa.tx_next, &st);
	*wire = *ext = 0;
	for (int k = 0; k < n; k++) {
		parts[k].base = sg[k].iov_base;
		parts[k].len = (uint32_t)sg[k].iov_len;
		parts[k].ext = in_payload(u, &sg[k]);
		/* a NIC reads it by DMA: the region is mapped at IOVA = VA (lib/node node_dma.c) */
		parts[k].iova = attach && s->p->c.iova_va && parts[k].ext ?
			(rte_iova_t)(uintptr_t)sg[k].iov_base : RTE_BAD_IOVA;
		*wire += parts[k].len;
		if (parts[k].ext)
			*ext += parts[k].len;
	}
	return n;
}

/* A token for the message @p u begins (MPA's reference counted): NULL when none is free. */
static struct mpa_zc *
zc_open(struct mpa_stream *s, const struct wn_llp_ulpdu *u, bool attach)
{
	struct mpa_proto *p = s->p;
	struct mpa_zc *z;

	if (rte_mempool_get(zc_pool, (void **)&z) != 0)
		return NULL;
	memset(&z->sh, 0, sizeof(z->sh));
	z->sh.free_cb = zc_free_cb;
	z->sh.fcb_opaque = z;
	rte_mbuf_ext_refcnt_set(&z->sh, 1);
	z->done = p->zc_done;
	z->s = s;
	z->wqe = u->wqe;
	z->src = u->src;
	z->attach = attach;
	z->held = u->src == WN_LLP_SRC_SQ;
	z->queued = false;
	z->used = false;
	z->n_pins = 0;
	s->tx_tok = z;
	s->zc_out++;
	return z;
}

/*
 * The open token's message has no more FPDUs: its WQE waits for the ACK of the last one, MPA's
 * reference goes. A token that holds no FPDU is released at once, its WQE never held.
 */
void
wn_mpa_zc_close(struct mpa_stream *s)
{
	struct mpa_zc *z = s->tx_tok;

	if (z == NULL)
		return;
	s->tx_tok = NULL;
	if (z->held) {
		z->queued = true;
		TAILQ_INSERT_TAIL(&s->zc_acks, z, q);
	}
	if (rte_mbuf_ext_refcnt_update(&z->sh, -1) == 0)
		zc_free_cb(NULL, z);
}

/*
 * Send one ULPDU whose payload TCP references (@p attach: zero-copy, else copied once into
 * each segment). The FPDUs of one message share a token: the first one taken returns
 * WN_LLP_TX_HELD, the others 0, and @c last closes it.
 * @return 0 or WN_LLP_TX_HELD (taken), -EAGAIN (TCP has no room: retry); or copy the FPDU:
 * -ENOSPC (no token free), -EPERM (a region cannot be pinned), -ENOTSUP (TCP refused it).
 */
int
wn_mpa_zc_send(struct mpa_stream *s, const struct wn_llp_ulpdu *u, bool attach)
{
	struct mpa_proto *p = s->p;
	struct wn_tcp_part parts[ZC_SG_MAX];
	uint8_t scratch[WN_MPA_GATHER_SCRATCH];
	struct mpa_zc *z = s->tx_tok;
	uint32_t wire, ext, flags = 0;
	bool fresh = false;
	int n, ret;

	/* another message while one is open (its last FPDU never came): that one is done */
	if (z != NULL && (z->wqe != u->wqe || z->src != u->src || z->attach != attach)) {
		wn_mpa_zc_close(s);
		z = NULL;
	}
	if (z == NULL) {
		z = zc_open(s, u, attach);
		if (z == NULL)
			return -ENOSPC;
		fresh = true;
	}
	if (zc_pin(p, z, u) != 0) {
		ret = -EPERM;
		goto fail;
	}
	n = zc_describe(s, u, attach, parts, scratch, &wire, &ext);
	if (n <= 0) {
		ret = -ENOTSUP;
		goto fail;
	}
	if (!attach)
		flags = WN_TCP_REC_COPY |
			(wn_mpa_conn_params(&s->mpa)->tx.crc ? WN_TCP_REC_CRC32C : 0);
	rte_mbuf_ext_refcnt_update(&z->sh, 1); /* TCP's, for this record */
	ret = wn_tcp_send_record_ref(s->tcp, parts, (unsigned int)n, &z->sh, flags);
	if (ret != 0) {
		rte_mbuf_ext_refcnt_update(&z->sh, -1); /* MPA's is still counted */
		ret = ret == -ENOBUFS ? -EAGAIN : -ENOTSUP;
		goto fail;
	}
	s->mpa.tx_next += wire;
	z->end_seq = wn_tcp_next_seq(s->tcp);
	if (!z->used) {
		z->used = true;
		p->base.st.tokens++;
	}
	if (attach) {
		p->base.st.zc_ulpdus++;
		p->base.st.zc_bytes += ext;
	} else {
		p->base.st.ref_ulpdus++;
		p->base.st.ref_bytes += ext;
	}
	ret = fresh && z->held ? WN_LLP_TX_HELD : 0;
	if (u->last)
		wn_mpa_zc_close(s);
	return ret;
fail:
	if (fresh) {
		z->held = false; /* nothing of it was taken: nothing to release */
		wn_mpa_zc_close(s);
	}
	return ret;
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
