/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Output: segment building, the record-aligned segmenter (RFC 5044 Appendix A), RFC 6298
 * retransmission timer, RFC 6675 loss-recovery transmissions, zero-window probes, ACK/RST.
 */
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_tcp.h>

#include "wn_wire_crc.h"

#include "tcp_priv.h"

uint32_t
wn_tcp_ts_now(const struct wn_tcp_conn *c)
{
	/* RFC 7323 §5.4: 1 ms clock with a per-connection random offset. */
	return (uint32_t)(c->ctx->now / 1000) + c->ts_offset;
}

uint32_t
wn_tcp_flight(const struct wn_tcp_conn *c)
{
	return c->snd.nxt - c->snd.una;
}

uint32_t
wn_tcp_rcv_window(const struct wn_tcp_conn *c)
{
	uint32_t w = c->rmax - c->rlen;
	uint32_t edge = c->rcv.adv - c->rcv.nxt;

	/* Never shrink the window (RFC 9293 §3.8.6.2.2): keep the advertised right edge. */
	if (SEQ_GT(c->rcv.adv, c->rcv.nxt) && edge > w)
		w = edge;
	if (w > (65535u << c->rcv.wscale))
		w = 65535u << c->rcv.wscale;
	return w;
}

void
wn_tcp_txq_push(struct wn_tcp_ctx *ctx, struct rte_mbuf *m)
{
	if (ctx->txq_len == ctx->txq_cap) {
		ctx->st.tx_drop_queue++;
		rte_pktmbuf_free(m);
		return;
	}
	ctx->txq[(ctx->txq_head + ctx->txq_len) % ctx->txq_cap] = m;
	ctx->txq_len++;
}

/* New data fits in the tx queue, leaving room for ACKs and control segments. */
static bool
txq_room(const struct wn_tcp_ctx *ctx)
{
	return ctx->txq_len + TCP_TXQ_CTL_ROOM < ctx->txq_cap;
}

/* @p c's data waits for room in the tx queue (wn_tcp_txq_resume). */
static void
txq_wait(struct wn_tcp_conn *c)
{
	if (c->flags & CF_TXQ_WAIT)
		return;
	c->flags |= CF_TXQ_WAIT;
	TAILQ_INSERT_TAIL(&c->ctx->txq_wait, c, txw_link);
	c->ctx->st.tx_queue_waits++;
}

void
wn_tcp_txq_unwait(struct wn_tcp_conn *c)
{
	if (!(c->flags & CF_TXQ_WAIT))
		return;
	TAILQ_REMOVE(&c->ctx->txq_wait, c, txw_link);
	c->flags &= ~CF_TXQ_WAIT;
}

/*
 * Oldest first, while the queue has room: a connection that fills it again goes back to the
 * end of the waiters, so thousands of connections opening their windows at once take turns.
 */
void
wn_tcp_txq_resume(struct wn_tcp_ctx *ctx)
{
	struct wn_tcp_conn *c;

	while (txq_room(ctx) && (c = TAILQ_FIRST(&ctx->txq_wait)) != NULL) {
		wn_tcp_txq_unwait(c);
		wn_tcp_output(c);
	}
}

/* A segment's mbuf, from a few taken from the pool at a time. */
static inline struct rte_mbuf *
tcp_mbuf_alloc(struct wn_tcp_ctx *ctx)
{
	if (ctx->mcache_n == 0) {
		if (rte_pktmbuf_alloc_bulk(ctx->conf.pool, ctx->mcache, TCP_MCACHE) != 0)
			return rte_pktmbuf_alloc(ctx->conf.pool);
		ctx->mcache_n = TCP_MCACHE;
	}
	return ctx->mcache[--ctx->mcache_n];
}

/* Index (from rec_head) of the first record whose end is above @p seq. */
static uint32_t
rec_find(struct wn_tcp_conn *c, uint32_t seq)
{
	uint32_t lo = 0, hi = c->rec_len, h = c->rec_hint - c->rec_gone;

	/* the hint, or the record after it */
	for (uint32_t k = h; k < c->rec_len && k <= h + 1; k++) {
		const struct seq_range *r = &c->rec[(c->rec_head + k) % TCP_RECORDS_PER_CONN];

		if (!SEQ_GT(r->end, seq))
			continue;
		if (k == 0 || !SEQ_GT(c->rec[(c->rec_head + k - 1) % TCP_RECORDS_PER_CONN].end,
				      seq)) {
			c->rec_hint = c->rec_gone + k;
			return k;
		}
		break;
	}
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const struct seq_range *r = &c->rec[(c->rec_head + mid) % TCP_RECORDS_PER_CONN];

		if (SEQ_GT(r->end, seq))
			hi = mid;
		else
			lo = mid + 1;
	}
	c->rec_hint = c->rec_gone + lo;
	return lo;
}

uint32_t
wn_tcp_seg_len(struct wn_tcp_conn *c, uint32_t seq, uint32_t emss, uint32_t allowed,
	    bool *split)
{
	uint32_t end = c->sbase + c->slen, avail, idx, len, cap;
	const struct seq_range *r;

	*split = false;
	if (!SEQ_LT(seq, end) || SEQ_LT(seq, c->sbase))
		return 0;
	avail = end - seq;
	cap = RTE_MIN(emss, allowed);
	idx = rec_find(c, seq);
	if (idx == c->rec_len)
		return RTE_MIN(avail, cap); /* stream bytes */
	r = &c->rec[(c->rec_head + idx) % TCP_RECORDS_PER_CONN];
	if (SEQ_LT(seq, r->start))
		return RTE_MIN(r->start - seq, cap); /* stream bytes queued before the records */
	len = r->end - seq;
	if (len > emss) {
		/* Only a record larger than the EMSS (queued before the EMSS was known or after
		 * it shrank) is ever cut. */
		*split = true;
		return cap;
	}
	if (len > allowed)
		return 0; /* wait for window: never cut a record to fit it */
	/* Pack whole records that follow contiguously while they fit. */
	for (uint32_t j = idx + 1; j < c->rec_len; j++) {
		const struct seq_range *n = &c->rec[(c->rec_head + j) % TCP_RECORDS_PER_CONN];

		if (n->start != seq + len || len + (n->end - n->start) > cap)
			break;
		len += n->end - n->start;
	}
	return len;
}

/* Drop TCP's reference to a record's external memory (wn_tcp_send_record_ext). */
static void
ext_put(struct wn_tcp_ctx *ctx, struct rte_mbuf_ext_shared_info *sh)
{
	ctx->st.ext_released++;
	if (rte_mbuf_ext_refcnt_update(sh, -1) == 0)
		sh->free_cb(NULL, sh->fcb_opaque);
}

/* Drop acknowledged bytes and records from the send buffer. */
void
wn_tcp_sbuf_acked(struct wn_tcp_conn *c)
{
	uint32_t n;

	if (SEQ_LEQ(c->snd.una, c->sbase))
		return;
	n = RTE_MIN(c->snd.una - c->sbase, c->slen);
	c->shead = c->scap != 0 ? (c->shead + n) % c->scap : 0;
	tcp_slen_sub(c, n);
	if (c->slen == 0)
		c->shead = 0; /* emptied: the next data starts at the front (pages stay few) */
	c->sbase += n;
	while (c->xp_len > 0 && SEQ_LEQ(c->xp[c->xp_head].seq + c->xp[c->xp_head].len, c->sbase)) {
		c->xp_attach -= !c->xp[c->xp_head].copy;
		c->xp_head = (c->xp_head + 1) % TCP_XPARTS_PER_CONN;
		c->xp_len--;
		c->xp_gone++;
	}
	while (c->rec_len > 0 && SEQ_LEQ(c->rec[c->rec_head].end, c->sbase)) {
		/* SND.UNA passed the record's end: TCP needs its external memory no more */
		if (c->rec_sh != NULL && c->rec_sh[c->rec_head] != NULL) {
			struct rte_mbuf_ext_shared_info *sh = c->rec_sh[c->rec_head];

			c->rec_sh[c->rec_head] = NULL;
			ext_put(c->ctx, sh);
		}
		if (c->rec_fl != NULL && (c->rec_fl[c->rec_head] & REC_F_CRC)) {
			c->rec_fl[c->rec_head] = 0;
			c->crc_pending--;
		}
		c->rec_head = (c->rec_head + 1) % TCP_RECORDS_PER_CONN;
		c->rec_len--;
		c->rec_gone++;
	}
}

/*
 * The connection closed (or is freed): drop every reference to external memory. Nothing
 * is sent from it any more; a segment still built from those octets would carry whatever
 * the send buffer holds there, never the released memory.
 */
void
wn_tcp_ext_release_all(struct wn_tcp_conn *c)
{
	if (c->rec_sh == NULL)
		return;
	c->xp_len = 0;
	c->xp_attach = 0;
	c->crc_pending = 0;
	for (uint32_t i = 0; i < c->rec_len; i++) {
		uint32_t k = (c->rec_head + i) % TCP_RECORDS_PER_CONN;
		struct rte_mbuf_ext_shared_info *sh = c->rec_sh[k];

		c->rec_fl[k] = 0;
		if (sh != NULL) {
			c->rec_sh[k] = NULL;
			ext_put(c->ctx, sh);
		}
	}
}

/* Index (from xp_head) of the first external piece whose end is above @p seq. */
static uint32_t
xp_find(struct wn_tcp_conn *c, uint32_t seq)
{
	uint32_t lo = 0, hi = c->xp_len, h = c->xp_hint - c->xp_gone;

	/* the hint, or the piece after it */
	for (uint32_t k = h; k < c->xp_len && k <= h + 1; k++) {
		const struct tcp_xpart *x = &c->xp[(c->xp_head + k) % TCP_XPARTS_PER_CONN];
		const struct tcp_xpart *p;

		if (!SEQ_GT(x->seq + x->len, seq))
			continue;
		p = k > 0 ? &c->xp[(c->xp_head + k - 1) % TCP_XPARTS_PER_CONN] : NULL;
		if (p == NULL || !SEQ_GT(p->seq + p->len, seq)) {
			c->xp_hint = c->xp_gone + k;
			return k;
		}
		break;
	}
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const struct tcp_xpart *x = &c->xp[(c->xp_head + mid) % TCP_XPARTS_PER_CONN];

		if (SEQ_GT(x->seq + x->len, seq))
			hi = mid;
		else
			lo = mid + 1;
	}
	c->xp_hint = c->xp_gone + lo;
	return lo;
}

static uint8_t *
put_ts(uint8_t *o, const struct wn_tcp_conn *c)
{
	uint32_t v = rte_cpu_to_be_32(wn_tcp_ts_now(c)), e = rte_cpu_to_be_32(c->ts_recent);

	o[0] = TCPOPT_NOP;
	o[1] = TCPOPT_NOP;
	o[2] = TCPOPT_TS;
	o[3] = 10;
	memcpy(o + 4, &v, 4);
	memcpy(o + 8, &e, 4);
	return o + 12;
}

/* Options of a SYN or SYN-ACK (RFC 9293 §3.2, RFC 7323, RFC 2018). */
static unsigned int
syn_options(const struct wn_tcp_conn *c, uint8_t *o)
{
	uint8_t *p = o;
	uint16_t mss = rte_cpu_to_be_16(c->rcv.mss);
	bool synack = c->state == WN_TCP_SYN_RCVD && (c->flags & CF_PASSIVE);
	uint32_t f = c->ctx->conf.flags;

	*p++ = TCPOPT_MSS;
	*p++ = 4;
	memcpy(p, &mss, 2);
	p += 2;
	if ((f & WN_TCP_F_WSCALE) && (!synack || c->ws_ok)) {
		*p++ = TCPOPT_NOP;
		*p++ = TCPOPT_WS;
		*p++ = 3;
		*p++ = c->rcv.wscale;
	}
	if ((f & WN_TCP_F_SACK) && (!synack || c->sack_ok)) {
		*p++ = TCPOPT_NOP;
		*p++ = TCPOPT_NOP;
		*p++ = TCPOPT_SACK_PERM;
		*p++ = 2;
	}
	if ((f & WN_TCP_F_TIMESTAMPS) && (!synack || c->ts_ok))
		p = put_ts(p, c);
	return (unsigned int)(p - o);
}

static void
copy_out(const struct wn_tcp_conn *c, uint32_t seq, uint32_t len, uint8_t *dst)
{
	uint32_t pos = c->shead + (seq - c->sbase), first;

	if (pos >= c->scap)
		pos -= c->scap;
	first = RTE_MIN(len, c->scap - pos);
	memcpy(dst, c->sbuf + pos, first);
	if (first < len)
		memcpy(dst + first, c->sbuf, len - first);
}

/*
 * Copy [seq, seq + len) of the send buffer to @p dst: from the ring, and external pieces
 * from where they live (the caller attaches those it does not want copied).
 */
static void
seg_copy(struct wn_tcp_conn *c, uint32_t seq, uint32_t len, uint8_t *dst)
{
	uint32_t i;

	if (c->xp_len == 0) {
		copy_out(c, seq, len, dst);
		return;
	}
	i = xp_find(c, seq);
	while (len > 0) {
		const struct tcp_xpart *x = i < c->xp_len ?
			&c->xp[(c->xp_head + i) % TCP_XPARTS_PER_CONN] : NULL;
		uint32_t n, off;

		if (x == NULL || !SEQ_LT(x->seq, seq + len)) {
			copy_out(c, seq, len, dst);
			return;
		}
		if (SEQ_LT(seq, x->seq)) {
			n = x->seq - seq;
			copy_out(c, seq, n, dst);
		} else {
			off = seq - x->seq;
			n = RTE_MIN(x->len - off, len);
			memcpy(dst, x->ptr + off, n);
			c->ctx->st.tx_ref_bytes += n;
			i++;
		}
		dst += n;
		seq += n;
		len -= n;
	}
}

/* The CRC32c register over [seq, seq + len) of the send buffer, read where it lives. */
static uint32_t
seg_crc(struct wn_tcp_conn *c, uint32_t seq, uint32_t len, uint32_t crc)
{
	uint32_t i = c->xp_len != 0 ? xp_find(c, seq) : 0;

	while (len > 0) {
		const struct tcp_xpart *x = i < c->xp_len ?
			&c->xp[(c->xp_head + i) % TCP_XPARTS_PER_CONN] : NULL;
		uint32_t n, pos;

		if (x != NULL && SEQ_LEQ(x->seq, seq)) {
			n = RTE_MIN(x->len - (seq - x->seq), len);
			crc = wn_wire_crc32c_update(crc, x->ptr + (seq - x->seq), n);
			i++;
		} else {
			n = x != NULL && SEQ_LT(x->seq, seq + len) ? x->seq - seq : len;
			pos = (c->shead + (seq - c->sbase)) % c->scap;
			n = RTE_MIN(n, c->scap - pos);
			crc = wn_wire_crc32c_update(crc, c->sbuf + pos, n);
		}
		seq += n;
		len -= n;
	}
	return crc;
}

/* Store the 4-octet trailer @p v (wire order) at @p seq of the send ring. */
static void
sbuf_poke4(struct wn_tcp_conn *c, uint32_t seq, const uint8_t *v)
{
	uint32_t pos = c->shead + (seq - c->sbase);

	if (pos >= c->scap)
		pos -= c->scap;
	if (pos + 4 <= c->scap) {
		memcpy(c->sbuf + pos, v, 4);
		return;
	}
	for (unsigned int k = 0; k < 4; k++, pos++)
		c->sbuf[pos < c->scap ? pos : pos - c->scap] = v[k];
}

/* Most records whose CRC one segment computes over its own octets. */
#define SEG_CRC_MAX 32

/*
 * WN_TCP_REC_CRC32C: the records of [seq, seq + len) whose trailer is still to be computed.
 * Those wholly inside a segment built by copying (@p whole) are listed in @p idx for
 * seg_crc_fill() over the segment; the others (split by the segment, or sent attached) get
 * theirs now, read from where their octets live. @return how many were listed.
 */
static unsigned int
seg_crc_plan(struct wn_tcp_conn *c, uint32_t seq, uint32_t len, bool whole, uint32_t *idx)
{
	unsigned int n = 0;

	for (uint32_t j = rec_find(c, seq); j < c->rec_len; j++) {
		uint32_t k = (c->rec_head + j) % TCP_RECORDS_PER_CONN;
		const struct seq_range *r = &c->rec[k];
		uint8_t w[4];

		if (!SEQ_LT(r->start, seq + len))
			break;
		if (!(c->rec_fl[k] & REC_F_CRC))
			continue;
		if (whole && n < SEG_CRC_MAX && SEQ_GEQ(r->start, seq) &&
		    SEQ_LEQ(r->end, seq + len)) {
			idx[n++] = k;
			continue;
		}
		wn_crc32c_put_wire(w, wn_crc32c_final(seg_crc(c, r->start, r->end - r->start - 4,
							       wn_crc32c_init())));
		sbuf_poke4(c, r->end - 4, w);
		c->rec_fl[k] = 0;
		c->crc_pending--;
		c->ctx->st.rec_crc++;
	}
	return n;
}

/* The listed records' trailers, summed over the segment's copy @p dst of [seq, ...). */
static void
seg_crc_fill(struct wn_tcp_conn *c, uint32_t seq, uint8_t *dst, const uint32_t *idx,
	     unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		const struct seq_range *r = &c->rec[idx[i]];
		uint8_t *p = dst + (r->start - seq);
		uint32_t l = r->end - r->start - 4;

		wn_crc32c_put_wire(p + l, wn_crc32c_final(wn_wire_crc32c_update(wn_crc32c_init(), p,
									  l)));
		sbuf_poke4(c, r->end - 4, p + l);
		c->rec_fl[idx[i]] = 0;
		c->crc_pending--;
		c->ctx->st.rec_crc++;
	}
}

/* Append @p len octets at @p seq from the send ring to the chain @p head (ordinary mbufs). */
static int
chain_copy(struct wn_tcp_conn *c, struct rte_mbuf *head, struct rte_mbuf **last, uint32_t seq,
	   uint32_t len)
{
	while (len > 0) {
		uint32_t room = RTE_MBUF_HAS_EXTBUF(*last) ? 0 : rte_pktmbuf_tailroom(*last), n;
		uint8_t *d;

		if (room == 0) {
			struct rte_mbuf *m = rte_pktmbuf_alloc(c->ctx->conf.pool);

			if (m == NULL)
				return -ENOBUFS;
			if (rte_pktmbuf_chain(head, m) != 0) {
				rte_pktmbuf_free(m);
				return -ENOBUFS;
			}
			*last = m;
			room = rte_pktmbuf_tailroom(m);
		}
		n = RTE_MIN(len, room);
		d = rte_pktmbuf_mtod_offset(*last, uint8_t *, (*last)->data_len);
		(*last)->data_len = (uint16_t)((*last)->data_len + n);
		head->pkt_len += n;
		seg_copy(c, seq, n, d);
		seq += n;
		len -= n;
	}
	return 0;
}

/*
 * Payload [seq, seq + len) as an mbuf chain behind @p head (which holds the TCP header):
 * copied octets into ordinary mbufs, external pieces attached (one reference each).
 */
static int
chain_payload(struct wn_tcp_conn *c, struct rte_mbuf *head, uint32_t seq, uint32_t len)
{
	struct rte_mbuf *last = head;
	uint32_t i = xp_find(c, seq), end = seq + len;
	int ret;

	while (seq != end) {
		const struct tcp_xpart *x = i < c->xp_len ?
			&c->xp[(c->xp_head + i) % TCP_XPARTS_PER_CONN] : NULL;
		struct rte_mbuf *m;
		uint32_t off, n;

		if (x == NULL || !SEQ_LT(x->seq, end) || SEQ_LT(seq, x->seq) || x->copy) {
			/* ring octets, or a piece copied rather than attached */
			if (x == NULL || !SEQ_LT(x->seq, end)) {
				n = end - seq;
			} else if (SEQ_LT(seq, x->seq)) {
				n = x->seq - seq;
			} else {
				n = RTE_MIN(x->len - (seq - x->seq), end - seq);
				i++;
			}
			ret = chain_copy(c, head, &last, seq, n);
			if (ret != 0)
				return ret;
			seq += n;
			continue;
		}
		off = seq - x->seq;
		n = RTE_MIN(x->len - off, end - seq);
		m = rte_pktmbuf_alloc(c->ctx->conf.pool);
		if (m == NULL)
			return -ENOBUFS;
		rte_mbuf_ext_refcnt_update(x->sh, 1);
		rte_pktmbuf_attach_extbuf(m, (void *)(uintptr_t)(x->ptr + off),
					  x->iova == RTE_BAD_IOVA ? RTE_BAD_IOVA : x->iova + off,
					  (uint16_t)n, x->sh);
		m->data_len = (uint16_t)n;
		m->pkt_len = n;
		if (rte_pktmbuf_chain(head, m) != 0) {
			rte_pktmbuf_free(m); /* drops the reference again */
			return -ENOBUFS;
		}
		last = m;
		c->ctx->st.tx_ext_bytes += n;
		seq += n;
		i++;
	}
	return 0;
}

/*
 * Build and queue one segment. @p len payload octets from the send buffer at @p seq.
 * SYN segments carry SYN options; others carry timestamps and, room permitting, SACK.
 */
static int
seg_emit(struct wn_tcp_conn *c, uint32_t seq, uint32_t len, uint8_t flags)
{
	struct wn_tcp_ctx *ctx = c->ctx;
	uint8_t opts[TCP_MAX_OPTLEN];
	unsigned int optlen = 0;
	struct rte_mbuf *m;
	struct rte_tcp_hdr *th;
	uint32_t wnd, crc_idx[SEG_CRC_MAX];
	uint16_t wfield;
	unsigned int ncrc;
	bool ext, dsack = false;

	if (flags & TH_SYN) {
		optlen = syn_options(c, opts);
	} else {
		if (c->ts_ok)
			optlen = (unsigned int)(put_ts(opts, c) - opts);
		if (c->sack_ok && (c->nooo > 0 || c->dsack.start != c->dsack.end) &&
		    (flags & TH_ACK) && !(flags & TH_RST)) {
			struct seq_range b[TCP_MAX_SACK_BLOCKS];
			uint32_t mss = RTE_MIN((uint32_t)c->snd.mss, (uint32_t)c->rcv.mss);
			unsigned int room = TCP_MAX_OPTLEN - optlen, n;

			if (len > 0) /* data segments: only what fits next to the payload */
				room = RTE_MIN(room, mss > len + optlen ? mss - len - optlen : 0);
			n = room >= 12 ? (room - 4) / 8 : 0;
			n = wn_tcp_rcv_sack_blocks(c, b,
						   RTE_MIN(n, (unsigned int)TCP_MAX_SACK_BLOCKS));
			dsack = n > 0 && c->dsack.start != c->dsack.end;
			if (n > 0) {
				uint8_t *p = opts + optlen;

				*p++ = TCPOPT_NOP;
				*p++ = TCPOPT_NOP;
				*p++ = TCPOPT_SACK;
				*p++ = (uint8_t)(2 + 8 * n);
				for (unsigned int i = 0; i < n; i++) {
					uint32_t s = rte_cpu_to_be_32(b[i].start);
					uint32_t e = rte_cpu_to_be_32(b[i].end);

					memcpy(p, &s, 4);
					memcpy(p + 4, &e, 4);
					p += 8;
				}
				optlen = (unsigned int)(p - opts);
			}
		}
	}
	m = tcp_mbuf_alloc(ctx);
	if (m == NULL) {
		ctx->st.tx_drop_nombuf++;
		return -ENOBUFS;
	}
	ext = false;
	if (len > 0 && c->xp_attach > 0) {
		/* a chain when an external piece in it is to be attached */
		for (uint32_t i = xp_find(c, seq); i < c->xp_len && !ext; i++) {
			const struct tcp_xpart *x = &c->xp[(c->xp_head + i) % TCP_XPARTS_PER_CONN];

			if (!SEQ_LT(x->seq, seq + len))
				break;
			ext = !x->copy;
		}
	}
	ncrc = len > 0 && c->crc_pending != 0 ? seg_crc_plan(c, seq, len, !ext, crc_idx) : 0;
	th = (struct rte_tcp_hdr *)rte_pktmbuf_append(m, (uint16_t)(TCP_HDR_LEN + optlen +
								    (ext ? 0 : len)));
	if (th == NULL) {
		rte_pktmbuf_free(m);
		ctx->st.tx_drop_nombuf++;
		return -ENOSPC;
	}
	th->src_port = rte_cpu_to_be_16(c->local.port);
	th->dst_port = rte_cpu_to_be_16(c->remote.port);
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = (flags & TH_ACK) ? rte_cpu_to_be_32(c->rcv.nxt) : 0;
	th->data_off = (uint8_t)(((TCP_HDR_LEN + optlen) / 4) << 4);
	th->tcp_flags = flags;
	wnd = wn_tcp_rcv_window(c);
	if (flags & TH_SYN) {
		wfield = (uint16_t)RTE_MIN(wnd, 65535u); /* RFC 7323 §2.2: SYN never scaled */
	} else {
		wfield = (uint16_t)(wnd >> c->rcv.wscale);
	}
	if (flags & TH_RST)
		wfield = 0;
	th->rx_win = rte_cpu_to_be_16(wfield);
	th->cksum = 0;
	th->tcp_urp = 0;
	memcpy(th + 1, opts, optlen);
	if (ext) {
		if (chain_payload(c, m, seq, len) != 0) {
			rte_pktmbuf_free(m);
			ctx->st.tx_drop_nombuf++;
			return -ENOBUFS;
		}
		ctx->st.tx_ext_segs++;
	} else if (len > 0) {
		seg_copy(c, seq, len, (uint8_t *)(th + 1) + optlen);
		if (ncrc > 0)
			seg_crc_fill(c, seq, (uint8_t *)(th + 1) + optlen, crc_idx, ncrc);
	}
	if (wn_net_ip_prepend(m, &c->local.addr, &c->remote.addr, IPPROTO_TCP) != 0) {
		rte_pktmbuf_free(m);
		ctx->st.tx_drop_nombuf++;
		return -ENOSPC;
	}
	m->l4_len = (uint16_t)(TCP_HDR_LEN + optlen);
	if ((flags & TH_ACK) && !(flags & TH_RST)) {
		uint32_t adv = c->rcv.nxt + ((uint32_t)wfield << ((flags & TH_SYN) ? 0 : c->rcv.wscale));

		if (SEQ_GT(adv, c->rcv.adv) || c->rcv.adv == 0)
			c->rcv.adv = adv;
		c->rcv.last_ack_sent = c->rcv.nxt;
		c->rcv.unacked_segs = 0;
		c->t_delack = 0;
		c->flags &= ~(CF_ACK_NOW | CF_WND_UPDATE);
		if (dsack)
			c->dsack.end = c->dsack.start; /* RFC 2883 §4: reported once */
	}
	ctx->st.tx_segs++;
	ctx->st.tx_data_bytes += len;
	wn_tcp_txq_push(ctx, m);
	return 0;
}

static uint64_t
backed_off_rto(const struct wn_tcp_conn *c)
{
	uint64_t r = (uint64_t)c->rto << RTE_MIN(c->backoff, (uint8_t)16);

	return RTE_MIN(r, (uint64_t)c->ctx->conf.rto_max_us);
}

void
wn_tcp_set_rto_timer(struct wn_tcp_conn *c)
{
	c->t_rto = c->ctx->now + backed_off_rto(c);
	if (c->t_rto == 0)
		c->t_rto = 1;
}

void
wn_tcp_send_syn(struct wn_tcp_conn *c)
{
	uint8_t flags = TH_SYN;
	bool rexmit = c->snd.max == c->snd.iss + 1;

	if (c->state == WN_TCP_SYN_RCVD)
		flags |= TH_ACK;
	if (seg_emit(c, c->snd.iss, 0, flags) == 0 && rexmit) {
		c->ctx->st.tx_retrans++;
		c->retrans++;
	}
	c->flags &= ~(CF_ACK_NOW | CF_SYN_AGAIN);
	c->snd.nxt = c->snd.max = c->snd.iss + 1;
	wn_tcp_set_rto_timer(c);
}

void
wn_tcp_send_ack(struct wn_tcp_conn *c)
{
	seg_emit(c, c->snd.nxt, 0, TH_ACK);
}

void
wn_tcp_send_challenge_ack(struct wn_tcp_conn *c)
{
	struct wn_tcp_ctx *ctx = c->ctx;
	uint64_t sec = ctx->now / 1000000;

	/* RFC 5961 §7: bound the challenge ACKs a context sends per second. */
	if (sec != ctx->chal_sec) {
		ctx->chal_sec = sec;
		ctx->chal_count = 0;
	}
	if (ctx->chal_count >= ctx->conf.challenge_ack_limit) {
		ctx->st.challenge_acks_limited++;
		return;
	}
	ctx->chal_count++;
	/* RFC 5961 §3.2 / §4.2: <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>. */
	ctx->st.challenge_acks++;
	wn_tcp_send_ack(c);
}

void
wn_tcp_send_rst(struct wn_tcp_conn *c)
{
	uint8_t flags = TH_RST;

	/* In SYN-RECEIVED the RST acknowledges the peer's SYN. */
	if (c->state == WN_TCP_SYN_RCVD)
		flags |= TH_ACK;
	if (seg_emit(c, c->snd.nxt, 0, flags) == 0)
		c->ctx->st.tx_rst++;
}

/* RFC 9293 §3.10.7.1: answer a segment that has no connection. */
void
wn_tcp_send_rst_for(struct wn_tcp_ctx *ctx, const struct tcp_seg *s)
{
	struct rte_mbuf *m;
	struct rte_tcp_hdr *th;
	uint32_t seq = 0, ack = 0;
	uint8_t flags = TH_RST;

	if (s->flags & TH_RST)
		return;
	if (s->flags & TH_ACK) {
		seq = s->ack;
	} else {
		ack = s->seq + s->len + !!(s->flags & TH_SYN) + !!(s->flags & TH_FIN);
		flags |= TH_ACK;
	}
	m = rte_pktmbuf_alloc(ctx->conf.pool);
	if (m == NULL) {
		ctx->st.tx_drop_nombuf++;
		return;
	}
	th = (struct rte_tcp_hdr *)rte_pktmbuf_append(m, TCP_HDR_LEN);
	if (th == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memset(th, 0, TCP_HDR_LEN);
	th->src_port = rte_cpu_to_be_16(s->dst.port);
	th->dst_port = rte_cpu_to_be_16(s->src.port);
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = rte_cpu_to_be_32(ack);
	th->data_off = (TCP_HDR_LEN / 4) << 4;
	th->tcp_flags = flags;
	if (wn_net_ip_prepend(m, &s->dst.addr, &s->src.addr, IPPROTO_TCP) != 0) {
		rte_pktmbuf_free(m);
		return;
	}
	ctx->st.tx_rst++;
	ctx->st.tx_segs++;
	wn_tcp_txq_push(ctx, m);
}

/*
 * A SYN-ACK for @p s that keeps no state (RFC 4987 §3.6): SEQ = @p iss (the cookie),
 * options MSS, window scale (@p wscale >= 0), SACK-permitted, timestamps (@p ts: TSval
 * @p tsval carrying the encoded options, TSecr the SYN's TSval); the window unscaled.
 */
void
wn_tcp_send_synack_cookie(struct wn_tcp_ctx *ctx, const struct tcp_seg *s, uint32_t iss,
		       uint16_t mss, int wscale, bool sackp, bool ts, uint32_t tsval)
{
	uint8_t opts[TCP_MAX_OPTLEN], *o = opts;
	struct rte_tcp_hdr *th;
	struct rte_mbuf *m;
	uint32_t optlen, v;
	uint16_t w;

	*o++ = TCPOPT_MSS;
	*o++ = 4;
	w = rte_cpu_to_be_16(mss);
	memcpy(o, &w, 2);
	o += 2;
	if (wscale >= 0) {
		*o++ = TCPOPT_NOP;
		*o++ = TCPOPT_WS;
		*o++ = 3;
		*o++ = (uint8_t)wscale;
	}
	if (sackp) {
		*o++ = TCPOPT_NOP;
		*o++ = TCPOPT_NOP;
		*o++ = TCPOPT_SACK_PERM;
		*o++ = 2;
	}
	if (ts) {
		*o++ = TCPOPT_NOP;
		*o++ = TCPOPT_NOP;
		*o++ = TCPOPT_TS;
		*o++ = 10;
		v = rte_cpu_to_be_32(tsval);
		memcpy(o, &v, 4);
		v = rte_cpu_to_be_32(s->tsval);
		memcpy(o + 4, &v, 4);
		o += 8;
	}
	optlen = (uint32_t)(o - opts);
	m = rte_pktmbuf_alloc(ctx->conf.pool);
	if (m == NULL) {
		ctx->st.tx_drop_nombuf++;
		return;
	}
	th = (struct rte_tcp_hdr *)rte_pktmbuf_append(m, (uint16_t)(TCP_HDR_LEN + optlen));
	if (th == NULL) {
		rte_pktmbuf_free(m);
		ctx->st.tx_drop_nombuf++;
		return;
	}
	memset(th, 0, TCP_HDR_LEN);
	th->src_port = rte_cpu_to_be_16(s->dst.port);
	th->dst_port = rte_cpu_to_be_16(s->src.port);
	th->sent_seq = rte_cpu_to_be_32(iss);
	th->recv_ack = rte_cpu_to_be_32(s->seq + 1);
	th->data_off = (uint8_t)(((TCP_HDR_LEN + optlen) / 4) << 4);
	th->tcp_flags = TH_SYN | TH_ACK;
	/* RFC 7323 §2.2: the window of a SYN is never scaled */
	th->rx_win = rte_cpu_to_be_16((uint16_t)RTE_MIN(ctx->conf.rcvbuf, 65535u));
	memcpy(th + 1, opts, optlen);
	if (wn_net_ip_prepend(m, &s->dst.addr, &s->src.addr, IPPROTO_TCP) != 0) {
		rte_pktmbuf_free(m);
		ctx->st.tx_drop_nombuf++;
		return;
	}
	m->l4_len = (uint16_t)(TCP_HDR_LEN + optlen);
	ctx->st.syncookies_sent++;
	ctx->st.tx_segs++;
	wn_tcp_txq_push(ctx, m);
}

static bool
synchronized_send_state(enum wn_tcp_state s)
{
	return s == WN_TCP_ESTABLISHED || s == WN_TCP_CLOSE_WAIT || s == WN_TCP_FIN_WAIT_1 ||
	       s == WN_TCP_CLOSING || s == WN_TCP_LAST_ACK;
}

/* Send one data segment at @p seq (new or retransmitted); @return its length or 0. */
static uint32_t
send_data(struct wn_tcp_conn *c, uint32_t seq, uint32_t allowed, bool *fin_out)
{
	struct wn_tcp_ctx *ctx = c->ctx;
	uint32_t emss = tcp_emss(c), end = c->sbase + c->slen, len;
	uint8_t flags = TH_ACK;
	bool split;

	*fin_out = false;
	len = wn_tcp_seg_len(c, seq, emss, allowed, &split);
	if (len == 0)
		return 0;
	if (c->mode == WN_TCP_MODE_STREAM && len < RTE_MIN(end - seq, emss) &&
	    wn_tcp_flight(c) > 0 && !SEQ_LT(seq, c->snd.max))
		return 0; /* sender SWS avoidance (RFC 9293 §3.8.6.2.1): wait for a full segment */
	if (seq + len == end)
		flags |= TH_PSH;
	if ((c->flags & CF_FIN_PENDING) && seq + len == c->snd.fin_seq)
		flags |= TH_FIN;
	if (seg_emit(c, seq, len, flags) != 0)
		return 0;
	if (split)
		ctx->st.record_split++;
	if (SEQ_LT(seq, c->snd.max)) {
		ctx->st.tx_retrans++;
		c->retrans++;
		if (c->undo_ok && c->in_recovery && c->undo_retrans < UINT16_MAX) {
			c->undo_retrans++;
			c->undo_end = SEQ_MAX(c->undo_end, seq + len);
		}
		/* Karn (RFC 6298 §3): a retransmitted segment is not timed. */
		if ((c->flags & CF_RTT_TIMING) && SEQ_LT(seq, c->rtt_seq))
			c->flags &= ~CF_RTT_TIMING;
	} else if (!c->ts_ok && !(c->flags & CF_RTT_TIMING)) {
		c->flags |= CF_RTT_TIMING;
		c->rtt_seq = seq + len;
		c->rtt_start = ctx->now;
	}
	*fin_out = (flags & TH_FIN) != 0;
	return len;
}

static void
advance_nxt(struct wn_tcp_conn *c, uint32_t nxt)
{
	bool new_data = SEQ_GT(nxt, c->snd.max);

	c->snd.nxt = nxt;
	if (new_data)
		c->snd.max = nxt;
	if (c->t_rto == 0)
		wn_tcp_set_rto_timer(c); /* RFC 6298 §5.1 */
	if (new_data)
		wn_tcp_tlp_arm(c); /* RFC 8985 §7.2: restart the PTO after new data */
}

/*
 * RFC 8985 §7.2: (re)arm the probe timeout (PTO): SACK in use, no RTO backoff, no probe
 * episode open, an RTT sample, everything sent once. Unlike RFC 8985 it also runs in SACK
 * recovery (see wn_tcp_tlp_fire()).
 * PTO = 2 * SRTT plus two timer ticks (the wheel's and the 1 ms timestamps' granularity);
 * with one segment in flight the peer's delayed ACK is added (WCDelAckT). An RTO due
 * sooner wins.
 */
void
wn_tcp_tlp_arm(struct wn_tcp_conn *c)
{
	uint64_t pto;

	c->t_tlp = 0;
	if (!c->sack_ok || c->tlp_out || c->backoff > 0 || !c->rtt_valid ||
	    c->snd.una == c->snd.max || c->snd.nxt != c->snd.max ||
	    !synchronized_send_state(c->state))
		return;
	pto = 2ull * c->srtt + 2 * TCP_TICK_US;
	if (c->snd.max - c->snd.una <= tcp_emss(c))
		pto += TCP_WCDELACK_US;
	if (c->t_rto != 0 && c->ctx->now + pto >= c->t_rto)
		return;
	c->t_tlp = c->ctx->now + pto;
}

/* TLP probe of new data: one segment the peer's window takes (cwnd does not apply). */
static bool
tlp_new_data(struct wn_tcp_conn *c)
{
	uint32_t end = c->sbase + c->slen, emss = tcp_emss(c), len;
	bool fin;

	if (!SEQ_LT(c->snd.nxt, end) ||
	    SEQ_LT(c->snd.una + c->snd.wnd, c->snd.nxt + RTE_MIN(end - c->snd.nxt, emss)))
		return false;
	len = send_data(c, c->snd.nxt, emss, &fin);
	if (len == 0)
		return false;
	c->snd.nxt += len + (fin ? 1 : 0);
	c->snd.max = c->snd.nxt;
	if (fin)
		c->flags |= CF_FIN_SENT;
	return true;
}

/* TLP probe by retransmission: the last segment (record mode: SND.UNA's). */
static bool
tlp_last_segment(struct wn_tcp_conn *c)
{
	uint32_t data_end = c->snd.max, emss = tcp_emss(c), seq;
	bool fin;

	if ((c->flags & CF_FIN_SENT) && c->snd.max == c->snd.fin_seq + 1)
		data_end = c->snd.fin_seq;
	data_end = SEQ_MIN(data_end, c->sbase + c->slen);
	seq = c->rec_len > 0 ? c->snd.una : SEQ_MAX(c->snd.una, data_end - emss);
	return SEQ_LT(seq, data_end) && send_data(c, seq, data_end - seq, &fin) > 0;
}

/*
 * RFC 8985 §7.3: the PTO expired. Probe with one new segment the peer's window takes, else
 * the last segment again (record mode: SND.UNA's), so that a lost tail or final ACK is
 * answered by an ACK with SACK information before the RTO. In recovery the probe is
 * SND.UNA's segment (a completed recovery's single ACK may be lost); recovery already
 * reduced the window, so the probe takes no congestion response of its own.
 */
void
wn_tcp_tlp_fire(struct wn_tcp_conn *c)
{
	struct wn_tcp_ctx *ctx = c->ctx;
	uint64_t segs = ctx->st.tx_segs;

	if (!c->sack_ok || c->tlp_out || c->snd.una == c->snd.max ||
	    c->snd.nxt != c->snd.max || !synchronized_send_state(c->state))
		return;
	c->tlp_rec = c->in_recovery;
	c->tlp_retrans = true;
	if (c->in_recovery) {
		wn_tcp_retransmit_una(c);
		if (ctx->st.tx_segs == segs)
			return;
	} else if (tlp_new_data(c)) {
		c->tlp_retrans = false;
	} else if (!tlp_last_segment(c)) {
		return;
	}
	ctx->st.tlp_probes++;
	c->tlp_out = true;
	c->tlp_high = c->snd.max;
	wn_tcp_set_rto_timer(c);
}

/* RFC 6675 §5 (C): retransmit lost holes while pipe allows. */
static bool
sack_recovery_send(struct wn_tcp_conn *c)
{
	uint32_t emss = tcp_emss(c), pipe = wn_tcp_sb_pipe(c);
	struct seq_range hole;
	bool sent = false, fin;

	while (c->cwnd >= pipe + emss || (!sent && c->cwnd > pipe)) {
		uint32_t from = SEQ_GT(c->high_rxt, c->snd.una) ? c->high_rxt : c->snd.una;
		uint32_t len;

		if (!wn_tcp_sb_next_lost(c, from, &hole))
			break;
		len = send_data(c, hole.start, hole.end - hole.start, &fin);
		if (len == 0)
			break;
		c->high_rxt = hole.start + len;
		c->rxt_mark = c->snd.max; /* for lost-retransmission detection (input.c) */
		pipe += len;
		sent = true;
		if (c->t_rto == 0)
			wn_tcp_set_rto_timer(c);
	}
	return sent;
}

void
wn_tcp_output(struct wn_tcp_conn *c)
{
	struct wn_tcp_ctx *ctx = c->ctx;
	bool sent = false, fin, unsent;
	uint32_t end;

	if (c->flags & CF_DEAD)
		return;
	switch (c->state) {
	case WN_TCP_SYN_SENT:
	case WN_TCP_SYN_RCVD:
		if (c->snd.max == c->snd.iss || (c->flags & CF_SYN_AGAIN))
			wn_tcp_send_syn(c); /* first, or a duplicate SYN was seen: repeat ours */
		else if (c->flags & CF_ACK_NOW)
			wn_tcp_send_ack(c);
		wn_tcp_timer_update(c);
		return;
	case WN_TCP_CLOSED:
	case WN_TCP_LISTEN:
		return;
	default:
		break;
	}
	/* RFC 9293 §3.3.1: SND.UNA <= SND.NXT <= SND.MAX, and sending starts at the buffer */
	assert(SEQ_LEQ(c->snd.una, c->snd.nxt) && SEQ_LEQ(c->snd.nxt, c->snd.max));
	assert(SEQ_LEQ(c->sbase, c->snd.una));
	end = c->sbase + c->slen;
	if (synchronized_send_state(c->state)) {
		if (c->in_recovery && c->sack_ok)
			sent = sack_recovery_send(c);
		for (;;) {
			uint32_t flight = wn_tcp_flight(c), allowed, swnd, cwl, len;

			if (c->in_recovery && c->sack_ok)
				flight = wn_tcp_sb_pipe(c);
			swnd = SEQ_GT(c->snd.una + c->snd.wnd, c->snd.nxt) ?
				c->snd.una + c->snd.wnd - c->snd.nxt : 0;
			cwl = c->cwnd;
			/* RFC 3042 Limited Transmit: one new segment per each of the first two
			 * duplicate ACKs, so that small windows still reach DupThresh. */
			if (!c->in_recovery && c->dupacks > 0 && c->dupacks < c->dupthresh)
				cwl += c->dupacks * tcp_emss(c);
			cwl = cwl > flight ? cwl - flight : 0;
			allowed = RTE_MIN(swnd, cwl);
			if (SEQ_LT(c->snd.nxt, end)) {
				if (allowed == 0)
					break;
				if (!txq_room(ctx)) {
					txq_wait(c);
					break;
				}
				len = send_data(c, c->snd.nxt, allowed, &fin);
				if (len == 0)
					break;
				advance_nxt(c, c->snd.nxt + len + (fin ? 1 : 0));
				if (fin)
					c->flags |= CF_FIN_SENT;
				sent = true;
				continue;
			}
			if ((c->flags & CF_FIN_PENDING) && c->snd.nxt == c->snd.fin_seq) {
				/* FIN alone (it takes no window, RFC 9293 §3.10.4) */
				if (seg_emit(c, c->snd.nxt, 0, TH_ACK | TH_FIN) == 0) {
					if (SEQ_LT(c->snd.nxt, c->snd.max)) {
						ctx->st.tx_retrans++;
						c->retrans++;
					}
					advance_nxt(c, c->snd.fin_seq + 1);
					c->flags |= CF_FIN_SENT;
					sent = true;
				}
			}
			break;
		}
		/* Persist: data waits, the window will not take it, nothing is in flight. */
		unsent = SEQ_LT(c->snd.nxt, end);
		if (unsent && !(c->flags & CF_TXQ_WAIT) && c->snd.max - c->snd.una <= 1 && !sent &&
		    (c->snd.wnd == 0 || c->snd.una == c->snd.max)) {
			if (c->snd.una != c->snd.max)
				c->t_rto = 0;
			if (c->t_persist == 0) {
				c->t_persist = ctx->now + backed_off_rto(c);
				c->flags |= CF_PERSIST;
			}
		} else if (sent || !unsent) {
			c->t_persist = 0;
			c->flags &= ~CF_PERSIST;
		}
	}
	if (!sent && (c->flags & (CF_ACK_NOW | CF_WND_UPDATE)))
		wn_tcp_send_ack(c);
	wn_tcp_timer_update(c);
}

void
wn_tcp_retransmit_una(struct wn_tcp_conn *c)
{
	uint32_t end = c->sbase + c->slen, len;
	bool fin;

	c->rxt_mark = c->snd.max;
	if (SEQ_LT(c->snd.una, end)) {
		len = send_data(c, c->snd.una, tcp_emss(c), &fin);
		if (len > 0 && c->in_recovery && c->sack_ok &&
		    SEQ_GT(c->snd.una + len, c->high_rxt))
			c->high_rxt = c->snd.una + len;
	} else if ((c->flags & CF_FIN_SENT) && c->snd.una == c->snd.fin_seq) {
		if (seg_emit(c, c->snd.fin_seq, 0, TH_ACK | TH_FIN) == 0) {
			c->ctx->st.tx_retrans++;
			c->retrans++;
		}
	}
}

bool
wn_tcp_rto_fire(struct wn_tcp_conn *c)
{
	struct wn_tcp_ctx *ctx = c->ctx;

	if (c->state == WN_TCP_SYN_SENT || c->state == WN_TCP_SYN_RCVD) {
		if (++c->retries > ctx->conf.syn_retries)
			return true;
		ctx->st.rto_fired++;
		c->backoff++;
		/* RFC 6298 §5.7: after a lost SYN the RTO is reset to 3 s when data starts. */
		wn_tcp_send_syn(c);
		return false;
	}
	if (c->snd.una == c->snd.max)
		return false;
	if (++c->retries > ctx->conf.max_retries) {
		wn_tcp_send_rst(c);
		return true;
	}
	ctx->st.rto_fired++;
	if (c->backoff == 0) {
		/* first timeout of an episode: remember what to restore if it was spurious
		 * (RFC 4015 §3); the retransmission below carries TSval = now */
		c->rto_eifel = c->ts_ok && !c->in_recovery;
		c->rto_tsval = wn_tcp_ts_now(c);
		c->rto_cwnd = c->cwnd;
		c->rto_ssthresh = c->ssthresh;
	}
	/* RFC 5681 §3.1 eq. 4 via the CC module, RFC 6298 §5.5 back off, §5.6 restart. */
	ctx->conf.cc->on_rto(c, ctx->now);
	if (c->backoff < 16)
		c->backoff++;
	c->in_recovery = false;
	c->undo_ok = false;
	c->tlp_out = false;
	c->t_tlp = 0;
	c->dupacks = 0;
	c->nsb = 0;        /* RFC 2018 §8: after a timeout SACK state is not trusted */
	c->recover = c->snd.max; /* RFC 6582 §4 */
	c->high_rxt = c->snd.una;
	c->flags &= ~CF_RTT_TIMING;
	c->snd.nxt = c->snd.una; /* go back: resend from the oldest unacknowledged octet */
	if (c->flags & CF_FIN_SENT && SEQ_LEQ(c->snd.nxt, c->snd.fin_seq))
		c->flags &= ~CF_FIN_SENT;
	c->t_rto = 0;
	wn_tcp_output(c);
	if (c->t_rto == 0 && c->snd.una != c->snd.max)
		wn_tcp_set_rto_timer(c);
	return false;
}

void
wn_tcp_persist_fire(struct wn_tcp_conn *c)
{
	struct wn_tcp_ctx *ctx = c->ctx;
	uint32_t end = c->sbase + c->slen;

	if (!synchronized_send_state(c->state) || !SEQ_LT(c->snd.una, end)) {
		c->flags &= ~CF_PERSIST;
		return;
	}
	ctx->st.zwp_sent++;
	if (c->mode == WN_TCP_MODE_STREAM && c->rec_len == 0) {
		bool fin;

		/* RFC 9293 §3.8.6.1 / RFC 1122 §4.2.2.17: probe with one new octet. */
		if (send_data(c, c->snd.una, 1, &fin) == 1 && SEQ_LT(c->snd.nxt, c->snd.una + 1)) {
			c->snd.nxt = c->snd.una + 1;
			if (SEQ_GT(c->snd.nxt, c->snd.max))
				c->snd.max = c->snd.nxt;
		}
	} else {
		/* Record mode keeps every segment on a record boundary: probe without data
		 * (SEG.SEQ = SND.UNA - 1 elicits an ACK carrying the current window). */
		seg_emit(c, c->snd.una - 1, 0, TH_ACK);
	}
	if (c->backoff < 16)
		c->backoff++;
	c->t_persist = ctx->now + backed_off_rto(c);
}

void
wn_tcp_keepalive_arm(struct wn_tcp_conn *c)
{
	c->ka_sent = 0;
	c->t_ka = c->ka_idle != 0 && (c->state == WN_TCP_ESTABLISHED ||
				      c->state == WN_TCP_CLOSE_WAIT)
			  ? c->last_rx + c->ka_idle
			  : 0;
	wn_tcp_timer_update(c);
}

/*
 * Keepalive timer (RFC 1122 §4.2.3.6): after ka_idle of silence with nothing outstanding,
 * probe with SEG.SEQ = SND.UNA - 1 and no data (the peer answers with an ACK whatever its
 * state), every ka_intvl; ka_probes unanswered ones end the connection. While data or a
 * window probe is outstanding the retransmission and persist timers watch the peer.
 */
bool
wn_tcp_keepalive_fire(struct wn_tcp_conn *c)
{
	struct wn_tcp_ctx *ctx = c->ctx;

	if (c->ka_idle == 0 || (c->state != WN_TCP_ESTABLISHED && c->state != WN_TCP_CLOSE_WAIT))
		return false;
	if (c->ka_sent == 0 && ctx->now < c->last_rx + c->ka_idle) {
		c->t_ka = c->last_rx + c->ka_idle; /* the peer spoke meanwhile */
		wn_tcp_timer_update(c);
		return false;
	}
	if (c->snd.una != c->snd.max || c->t_persist != 0) {
		c->ka_sent = 0;
		c->t_ka = ctx->now + c->ka_idle;
		wn_tcp_timer_update(c);
		return false;
	}
	if (c->ka_sent >= c->ka_probes) {
		ctx->st.keepalive_timeouts++;
		wn_tcp_send_rst(c); /* as Linux does; the peer may only have lost our state */
		return true;
	}
	seg_emit(c, c->snd.una - 1, 0, TH_ACK);
	c->ka_sent++;
	ctx->st.keepalive_probes++;
	c->t_ka = ctx->now + c->ka_intvl;
	wn_tcp_timer_update(c);
	return false;
}
