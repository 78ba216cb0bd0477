/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-direction impairment pipeline of net_wn_impair.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_net.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "impair_pipe.h"

/* splitmix64: small, fast, and every seed (including 0) gives a full-period stream */
static inline uint64_t
rng_next(struct impair_pipe *p)
{
	uint64_t z = (p->rng += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline bool
rng_hit(struct impair_pipe *p, uint64_t thr)
{
	if (thr == 0)
		return false;
	if (thr == UINT64_MAX)
		return true;
	return rng_next(p) < thr;
}

static uint64_t
rate_threshold(double rate)
{
	if (rate <= 0.0)
		return 0;
	if (rate >= 1.0)
		return UINT64_MAX;
	return (uint64_t)(rate * 18446744073709551616.0);
}

int
impair_pipe_init(struct impair_pipe *p, const struct wn_impair_dir_conf *dc,
		 const struct wn_impair_conf *conf, uint64_t seed, bool is_tx, int socket,
		 uint32_t *mangle_next, const uint64_t *down_until)
{
	uint64_t hz = rte_get_tsc_hz();

	memset(p, 0, sizeof(*p));
	p->rng = seed;
	(void)rng_next(p); /* decorrelate neighbouring seeds */
	p->thr_drop = rate_threshold(dc->drop);
	p->thr_dup = rate_threshold(dc->dup);
	p->thr_reorder = rate_threshold(dc->reorder);
	p->thr_corrupt = rate_threshold(dc->corrupt);
	p->thr_mangle = rate_threshold(dc->mangle);
	p->mangle_next = mangle_next;
	p->down_until = down_until;
	p->delay_cycles = hz * dc->delay_us / 1000000;
	p->jitter_cycles = hz * dc->jitter_us / 1000000;
	p->reorder_cycles = hz * conf->reorder_us / 1000000;
	p->gap = conf->reorder_gap;
	p->is_tx = is_tx;
	p->out = rte_zmalloc_socket("wn_impair_out", sizeof(*p->out) * IMPAIR_OUT_SIZE, 0, socket);
	if (p->out == NULL)
		return -ENOMEM;
	if (dc->delay_us > 0 || dc->jitter_us > 0) {
		p->delay = rte_zmalloc_socket("wn_impair_delay",
					      sizeof(*p->delay) * IMPAIR_DELAY_SIZE, 0, socket);
		if (p->delay == NULL) {
			rte_free(p->out);
			p->out = NULL;
			return -ENOMEM;
		}
	}
	return 0;
}

void
impair_pipe_fini(struct impair_pipe *p)
{
	unsigned int i;

	for (i = 0; i < p->nb_held; i++)
		rte_pktmbuf_free(p->held[i].m);
	p->nb_held = 0;
	if (p->delay != NULL) {
		for (; p->d_head != p->d_tail; p->d_head++)
			rte_pktmbuf_free(p->delay[p->d_head & (IMPAIR_DELAY_SIZE - 1)].m);
	}
	if (p->out != NULL) {
		for (; p->o_head != p->o_tail; p->o_head++)
			rte_pktmbuf_free(p->out[p->o_head & (IMPAIR_OUT_SIZE - 1)]);
	}
	rte_free(p->delay);
	rte_free(p->out);
	p->delay = NULL;
	p->out = NULL;
}

/* The link is down (wn_impair_link_down()): frames are lost whichever way they go. */
static inline bool
link_down(const struct impair_pipe *p)
{
	uint64_t until = p->down_until != NULL ? __atomic_load_n(p->down_until, __ATOMIC_RELAXED)
					       : 0;

	return until != 0 && (int64_t)(until - p->now) > 0;
}

static void
out_push(struct impair_pipe *p, struct rte_mbuf *m)
{
	if (link_down(p)) {
		p->st.down++;
		rte_pktmbuf_free(m);
		return;
	}
	if (impair_pipe_out_room(p) == 0) {
		p->st.overflow++;
		rte_pktmbuf_free(m);
		return;
	}
	p->out[p->o_tail & (IMPAIR_OUT_SIZE - 1)] = m;
	p->o_tail++;
}

static void
held_remove(struct impair_pipe *p, unsigned int i)
{
	p->nb_held--;
	memmove(&p->held[i], &p->held[i + 1], sizeof(p->held[0]) * (p->nb_held - i));
}

/* Reorder stage: hold @m back, or emit it and count it against the held ones. */
static void
stage_reorder(struct impair_pipe *p, struct rte_mbuf *m)
{
	unsigned int i;

	if (p->nb_held < IMPAIR_HELD_MAX && rng_hit(p, p->thr_reorder)) {
		p->held[p->nb_held].m = m;
		p->held[p->nb_held].left = p->gap;
		p->held[p->nb_held].deadline = p->now + p->reorder_cycles;
		p->nb_held++;
		p->st.reorder++;
		return;
	}
	out_push(p, m);
	for (i = 0; i < p->nb_held;) {
		if (--p->held[i].left == 0) {
			out_push(p, p->held[i].m);
			held_remove(p, i);
		} else {
			i++;
		}
	}
}

static void
stage_delay(struct impair_pipe *p, struct rte_mbuf *m)
{
	struct impair_delayed *d;

	uint64_t due;

	if (p->delay_cycles == 0 && p->jitter_cycles == 0) {
		stage_reorder(p, m);
		return;
	}
	due = p->now + p->delay_cycles;
	if (p->jitter_cycles > 0)
		due += rng_next(p) % (p->jitter_cycles + 1);
	/* jitter never reorders: a packet leaves no earlier than the one before it */
	if (p->d_tail != p->d_head && (int64_t)(due - p->last_due) < 0)
		due = p->last_due;
	p->last_due = due;
	if (p->d_tail - p->d_head == IMPAIR_DELAY_SIZE) {
		/* line full: release the oldest early rather than lose a packet */
		d = &p->delay[p->d_head & (IMPAIR_DELAY_SIZE - 1)];
		p->d_head++;
		p->st.overflow++;
		stage_reorder(p, d->m);
	}
	d = &p->delay[p->d_tail & (IMPAIR_DELAY_SIZE - 1)];
	d->m = m;
	d->due = due;
	p->d_tail++;
	p->st.delay++;
}

/*
 * Finish pending TX checksum offloads in software, so that the corruption is
 * not covered by a checksum the port computes afterwards.
 */
static void
resolve_tx_cksum(struct rte_mbuf *m)
{
	uint64_t fl = m->ol_flags;
	uint64_t l4 = fl & RTE_MBUF_F_TX_L4_MASK;
	uint16_t l4_off = m->l2_len + m->l3_len;

	if ((fl & (RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK)) == 0)
		return;
	if (rte_pktmbuf_data_len(m) < l4_off + sizeof(struct rte_tcp_hdr))
		return;
	if (fl & RTE_MBUF_F_TX_IPV4) {
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *,
								  m->l2_len);

		if (fl & RTE_MBUF_F_TX_IP_CKSUM) {
			ip->hdr_checksum = 0;
			ip->hdr_checksum = rte_ipv4_cksum(ip);
		}
		if (l4 == RTE_MBUF_F_TX_TCP_CKSUM) {
			struct rte_tcp_hdr *t = rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *,
									l4_off);
			t->cksum = 0;
			t->cksum = rte_ipv4_udptcp_cksum_mbuf(m, ip, l4_off);
		} else if (l4 == RTE_MBUF_F_TX_UDP_CKSUM) {
			struct rte_udp_hdr *u = rte_pktmbuf_mtod_offset(m, struct rte_udp_hdr *,
									l4_off);
			u->dgram_cksum = 0;
			u->dgram_cksum = rte_ipv4_udptcp_cksum_mbuf(m, ip, l4_off);
		}
	} else if (fl & RTE_MBUF_F_TX_IPV6) {
		struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *,
								  m->l2_len);

		if (l4 == RTE_MBUF_F_TX_TCP_CKSUM) {
			struct rte_tcp_hdr *t = rte_pktmbuf_mtod_offset(m, struct rte_tcp_hdr *,
									l4_off);
			t->cksum = 0;
			t->cksum = rte_ipv6_udptcp_cksum_mbuf(m, ip, l4_off);
		} else if (l4 == RTE_MBUF_F_TX_UDP_CKSUM) {
			struct rte_udp_hdr *u = rte_pktmbuf_mtod_offset(m, struct rte_udp_hdr *,
									l4_off);
			u->dgram_cksum = 0;
			u->dgram_cksum = rte_ipv6_udptcp_cksum_mbuf(m, ip, l4_off);
		}
	}
	m->ol_flags &= ~(RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK);
}

/*
 * The TCP checksum field (unaligned) of frame @p m (Ethernet first, headers in the first segment) and
 * the pseudo-header sum a sender that leaves the checksum to offload writes there.
 * @return the field, or NULL when @p m is no TCP segment over IPv4/IPv6.
 */
static uint8_t *
tcp_cksum_field(struct rte_mbuf *m, uint16_t *phdr, uint32_t *l4_off, void **l3p)
{
	struct rte_net_hdr_lens hl;
	uint32_t ptype;
	void *l3;

	memset(&hl, 0, sizeof(hl));
	ptype = rte_net_get_ptype(m, &hl, RTE_PTYPE_L2_MASK | RTE_PTYPE_L3_MASK |
				  RTE_PTYPE_L4_MASK);
	if ((ptype & RTE_PTYPE_L4_MASK) != RTE_PTYPE_L4_TCP ||
	    rte_pktmbuf_data_len(m) < hl.l2_len + hl.l3_len + sizeof(struct rte_tcp_hdr))
		return NULL;
	l3 = rte_pktmbuf_mtod_offset(m, void *, hl.l2_len);
	*l3p = l3;
	*l4_off = hl.l2_len + hl.l3_len;
	if (RTE_ETH_IS_IPV4_HDR(ptype))
		*phdr = rte_ipv4_phdr_cksum(l3, 0);
	else if (RTE_ETH_IS_IPV6_HDR(ptype))
		*phdr = rte_ipv6_phdr_cksum(l3, 0);
	else
		return NULL;
	return rte_pktmbuf_mtod_offset(m, uint8_t *, *l4_off + offsetof(struct rte_tcp_hdr, cksum));
}

/*
 * A TCP segment received from a local link (lib/net's WN_NET_CKSUM_LOCAL, e.g. net_memif)
 * may carry only its pseudo-header sum, left to an "offload" nothing performs: complete it,
 * so that the frame leaves the impairer as a frame of an ordinary link (the face is not a
 * local link for lib/net, its receiver verifies every sum) and a corruption after this is
 * caught. A received frame is ours alone; a shared one is left as it is.
 */
static void
resolve_rx_partial(struct rte_mbuf *m)
{
	uint16_t phdr, v;
	uint32_t l4_off;
	uint8_t *f;
	void *l3;

	if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)
		return;
	f = tcp_cksum_field(m, &phdr, &l4_off, &l3);
	if (f == NULL || memcmp(f, &phdr, 2) != 0)
		return;
	memset(f, 0, 2);
	if ((*(const uint8_t *)l3 >> 4) == 4)
		v = rte_ipv4_udptcp_cksum_mbuf(m, l3, (uint16_t)l4_off);
	else
		v = rte_ipv6_udptcp_cksum_mbuf(m, l3, (uint16_t)l4_off);
	memcpy(f, &v, 2);
}

/*
 * Flip one octet past the headers of a private copy of @m (the original may be
 * shared, e.g. kept by TCP for retransmission). @return the packet to go on with.
 * A TCP segment whose full checksum happens to equal its pseudo-header sum would pass a
 * local-link receiver unverified (lib/net's WN_NET_CKSUM_LOCAL): its checksum field is
 * flipped instead of a payload octet, so the corruption is still caught.
 */
static struct rte_mbuf *
corrupt_packet(struct impair_pipe *p, struct rte_mbuf *m)
{
	struct rte_net_hdr_lens hl;
	struct rte_mbuf *c, *seg;
	uint32_t ptype, hdr, off;

	if (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG)
		return m; /* a TSO super-frame would be cut after the flip: leave it */
	c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
	if (c == NULL) {
		p->st.nomem++;
		return m;
	}
	rte_pktmbuf_free(m);
	if (p->is_tx)
		resolve_tx_cksum(c);
	memset(&hl, 0, sizeof(hl));
	ptype = rte_net_get_ptype(c, &hl, RTE_PTYPE_ALL_MASK);
	hdr = hl.l2_len;
	if ((ptype & RTE_PTYPE_L3_MASK) != 0) {
		hdr += hl.l3_len;
		if ((ptype & RTE_PTYPE_L4_MASK) == RTE_PTYPE_L4_TCP ||
		    (ptype & RTE_PTYPE_L4_MASK) == RTE_PTYPE_L4_UDP)
			hdr += hl.l4_len;
	}
	if (c->pkt_len <= hdr)
		hdr = hl.l2_len;
	if (c->pkt_len <= hdr)
		return c;
	if ((ptype & RTE_PTYPE_L4_MASK) == RTE_PTYPE_L4_TCP) {
		uint32_t l4_off;
		uint16_t phdr;
		void *l3;
		uint8_t *f = tcp_cksum_field(c, &phdr, &l4_off, &l3);

		if (f != NULL && memcmp(f, &phdr, 2) == 0) {
			*f ^= (uint8_t)(1 + rng_next(p) % 255);
			p->st.corrupt++;
			return c;
		}
	}
	off = hdr + (uint32_t)(rng_next(p) % (c->pkt_len - hdr));
	for (seg = c; off >= seg->data_len; seg = seg->next)
		off -= seg->data_len;
	*rte_pktmbuf_mtod_offset(seg, uint8_t *, off) ^= (uint8_t)(1 + rng_next(p) % 255);
	p->st.corrupt++;
	return c;
}

/*
 * Where mangle= may flip an octet of TCP segment @p m: @return how many octets it may choose
 * from (0: the segment is not eligible), from frame offset *from on; *l3_off and *l4_off are
 * the IP and TCP headers' offsets.
 */
static uint32_t
mangle_room(struct rte_mbuf *m, uint32_t *from, uint32_t *l3_off, uint32_t *l4_off)
{
	struct rte_net_hdr_lens hl;
	uint32_t ptype, l3_len, pay;
	void *l3;

	if (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG)
		return 0;
	memset(&hl, 0, sizeof(hl));
	ptype = rte_net_get_ptype(m, &hl, RTE_PTYPE_ALL_MASK);
	if ((ptype & RTE_PTYPE_L4_MASK) != RTE_PTYPE_L4_TCP ||
	    rte_pktmbuf_data_len(m) < hl.l2_len + hl.l3_len + hl.l4_len)
		return 0;
	l3 = rte_pktmbuf_mtod_offset(m, void *, hl.l2_len);
	if (RTE_ETH_IS_IPV4_HDR(ptype))
		l3_len = rte_be_to_cpu_16(((struct rte_ipv4_hdr *)l3)->total_length);
	else if (RTE_ETH_IS_IPV6_HDR(ptype))
		l3_len = sizeof(struct rte_ipv6_hdr) +
			 rte_be_to_cpu_16(((struct rte_ipv6_hdr *)l3)->payload_len);
	else
		return 0;
	if (l3_len < hl.l3_len + hl.l4_len || hl.l2_len + l3_len > m->pkt_len)
		return 0;
	pay = l3_len - hl.l3_len - hl.l4_len;
	if (pay <= 40)
		return 0;
	*l3_off = hl.l2_len;
	*l4_off = hl.l2_len + hl.l3_len;
	*from = *l4_off + hl.l4_len + 32;
	return pay - 40;
}

/* Take one from the shared "mangle the next N" counter; false when it is 0. */
static bool
mangle_take(uint32_t *cnt)
{
	uint32_t v;

	if (cnt == NULL)
		return false;
	v = __atomic_load_n(cnt, __ATOMIC_RELAXED);
	while (v > 0)
		if (__atomic_compare_exchange_n(cnt, &v, v - 1, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return true;
	return false;
}

/*
 * Corruption below TCP (mangle=): a private copy of TCP segment @p m with one payload octet
 * flipped and its TCP checksum computed again, so that TCP takes it and only a check above
 * (MPA's CRC32c) can see the damage. @return the packet to go on with.
 */
static struct rte_mbuf *
mangle_packet(struct impair_pipe *p, struct rte_mbuf *m)
{
	struct rte_mbuf *c, *seg;
	uint32_t from, room, off, l3_off, l4_off;
	uint16_t sum;
	void *l3;
	uint8_t *f;

	room = mangle_room(m, &from, &l3_off, &l4_off);
	if (room == 0 || (!rng_hit(p, p->thr_mangle) && !mangle_take(p->mangle_next)))
		return m;
	c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
	if (c == NULL) {
		p->st.nomem++;
		return m;
	}
	rte_pktmbuf_free(m);
	if (rte_pktmbuf_linearize(c) != 0) {
		p->st.nomem++;
		return c;
	}
	c->ol_flags &= ~(RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_L4_MASK);
	l3 = rte_pktmbuf_mtod_offset(c, void *, l3_off);
	if ((*(const uint8_t *)l3 >> 4) == 4) {
		struct rte_ipv4_hdr *ip = l3;

		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
	}
	off = from + (uint32_t)(rng_next(p) % room);
	for (seg = c; off >= seg->data_len; seg = seg->next)
		off -= seg->data_len;
	*rte_pktmbuf_mtod_offset(seg, uint8_t *, off) ^= (uint8_t)(1 + rng_next(p) % 255);
	f = rte_pktmbuf_mtod_offset(c, uint8_t *, l4_off + offsetof(struct rte_tcp_hdr, cksum));
	memset(f, 0, 2);
	if ((*(const uint8_t *)l3 >> 4) == 4)
		sum = rte_ipv4_udptcp_cksum_mbuf(c, l3, (uint16_t)l4_off);
	else
		sum = rte_ipv6_udptcp_cksum_mbuf(c, l3, (uint16_t)l4_off);
	memcpy(f, &sum, 2);
	p->st.mangle++;
	return c;
}

void
impair_pipe_push(struct impair_pipe *p, struct rte_mbuf *m)
{
	struct rte_mbuf *c = NULL;

	p->st.in++;
	if (link_down(p)) {
		p->st.down++;
		rte_pktmbuf_free(m);
		return;
	}
	if (!p->is_tx)
		resolve_rx_partial(m);
	if (rng_hit(p, p->thr_drop)) {
		p->st.drop++;
		rte_pktmbuf_free(m);
		return;
	}
	if (rng_hit(p, p->thr_corrupt))
		m = corrupt_packet(p, m);
	if (p->thr_mangle != 0 || (p->mangle_next != NULL &&
				   __atomic_load_n(p->mangle_next, __ATOMIC_RELAXED) != 0))
		m = mangle_packet(p, m);
	if (rng_hit(p, p->thr_dup)) {
		c = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
		if (c == NULL)
			p->st.nomem++;
		else
			p->st.dup++;
	}
	stage_delay(p, m);
	if (c != NULL)
		stage_delay(p, c);
}

void
impair_pipe_tick(struct impair_pipe *p, uint64_t now)
{
	unsigned int i;

	p->now = now;
	while (p->d_head != p->d_tail) {
		struct impair_delayed *d = &p->delay[p->d_head & (IMPAIR_DELAY_SIZE - 1)];

		if ((int64_t)(d->due - now) > 0)
			break;
		p->d_head++;
		stage_reorder(p, d->m);
	}
	for (i = 0; i < p->nb_held;) {
		if ((int64_t)(p->held[i].deadline - now) <= 0) {
			out_push(p, p->held[i].m);
			held_remove(p, i);
		} else {
			i++;
		}
	}
}
