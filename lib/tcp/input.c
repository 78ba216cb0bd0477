/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Input: header/option parsing and the RFC 9293 §3.10.7 SEGMENT ARRIVES processing, with
 * RFC 5961 (RST/SYN/ACK hardening), RFC 7323 (PAWS, TS.Recent), RFC 6298 (RTT), RFC 5681 /
 * RFC 6582 / RFC 6675 (duplicate ACKs and recovery) and the out-of-order queue.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_tcp.h>

#include "tcp_priv.h"

/* ---- parsing ---- */

static int
parse_options(struct wn_tcp_ctx *ctx, const uint8_t *o, uint32_t olen, struct tcp_seg *s)
{
	uint32_t i = 0;

	while (i < olen) {
		uint8_t kind = o[i], len;

		if (kind == TCPOPT_EOL)
			break;
		if (kind == TCPOPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= olen)
			goto bad;
		len = o[i + 1];
		if (len < 2 || i + len > olen)
			goto bad;
		switch (kind) {
		case TCPOPT_MSS:
			if (len != 4)
				goto bad;
			s->has_mss = true;
			s->mss = (uint16_t)(o[i + 2] << 8 | o[i + 3]);
			break;
		case TCPOPT_WS:
			if (len != 3)
				goto bad;
			s->has_ws = true;
			/* RFC 7323 §2.3: a shift above 14 is used as 14. */
			s->ws = RTE_MIN(o[i + 2], (uint8_t)TCP_MAX_WSCALE);
			break;
		case TCPOPT_SACK_PERM:
			if (len != 2)
				goto bad;
			s->has_sackp = true;
			break;
		case TCPOPT_SACK: {
			uint32_t n = (len - 2u) / 8;

			if ((len - 2u) % 8 != 0 || n == 0 || n > TCP_MAX_SACK_BLOCKS)
				goto bad;
			for (uint32_t b = 0; b < n; b++) {
				const uint8_t *p = o + i + 2 + 8 * b;

				s->sack[b].start = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
						   (uint32_t)p[2] << 8 | p[3];
				s->sack[b].end = (uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 |
						 (uint32_t)p[6] << 8 | p[7];
			}
			s->nsack = (uint8_t)n;
			break;
		}
		case TCPOPT_TS:
			if (len != 10)
				goto bad;
			s->has_ts = true;
			s->tsval = (uint32_t)o[i + 2] << 24 | (uint32_t)o[i + 3] << 16 |
				   (uint32_t)o[i + 4] << 8 | o[i + 5];
			s->tsecr = (uint32_t)o[i + 6] << 24 | (uint32_t)o[i + 7] << 16 |
				   (uint32_t)o[i + 8] << 8 | o[i + 9];
			break;
		default:
			break; /* unknown options are skipped (RFC 9293 §3.1) */
		}
		i += len;
	}
	return 0;
bad:
	ctx->st.rx_drop_opts++;
	return -EINVAL;
}

/* The port's verdict on the segment's checksum: 1 bad, 0 good, -1 none (check it here). */
static inline int
cksum_rx_flag(const struct rte_mbuf *m)
{
	uint64_t f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;

	if (f == RTE_MBUF_F_RX_L4_CKSUM_BAD)
		return 1;
	if (f == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
		return 0;
	return -1;
}

/*
 * The common segment: IPv4 that lib/net checked (header, length, our address) and whose TCP
 * checksum it found good, the headers in the first mbuf, options none or timestamps alone in
 * RFC 7323 Appendix A's layout. @return 0 when it was one (@p s filled), -1 when
 * wn_tcp_parse() must look at it in full.
 */
static inline int
parse_fast(struct rte_mbuf *m, struct tcp_seg *s)
{
	const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, const struct rte_ipv4_hdr *);
	const struct rte_tcp_hdr *th;
	const uint8_t *o;
	uint32_t l3 = m->l3_len, l4len, doff;

	if (m->packet_type != (RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP) ||
	    (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) != RTE_MBUF_F_RX_L4_CKSUM_GOOD ||
	    rte_pktmbuf_data_len(m) < l3 + TCP_HDR_LEN + TCP_TS_OPTLEN)
		return -1;
	th = (const struct rte_tcp_hdr *)((const uint8_t *)ip + l3);
	doff = (uint32_t)(th->data_off >> 4) * 4;
	o = (const uint8_t *)(th + 1);
	l4len = rte_be_to_cpu_16(ip->total_length) - l3;
	if ((doff != TCP_HDR_LEN + TCP_TS_OPTLEN || o[0] != TCPOPT_NOP || o[1] != TCPOPT_NOP ||
	     o[2] != TCPOPT_TS || o[3] != 10) && doff != TCP_HDR_LEN)
		return -1;
	if (doff > l4len)
		return -1;
	s->m = m;
	s->src.addr.family = s->dst.addr.family = WN_AF_INET;
	s->src.addr.v4 = ip->src_addr;
	s->dst.addr.v4 = ip->dst_addr;
	s->src.port = rte_be_to_cpu_16(th->src_port);
	s->dst.port = rte_be_to_cpu_16(th->dst_port);
	s->seq = rte_be_to_cpu_32(th->sent_seq);
	s->ack = rte_be_to_cpu_32(th->recv_ack);
	s->wnd = rte_be_to_cpu_16(th->rx_win);
	s->flags = th->tcp_flags & 0x3f;
	s->off = l3 + doff;
	s->len = l4len - doff;
	s->has_mss = s->has_ws = s->has_sackp = false;
	s->nsack = 0;
	s->has_ts = doff != TCP_HDR_LEN;
	if (s->has_ts) {
		uint32_t v, e;

		memcpy(&v, o + 4, 4);
		memcpy(&e, o + 8, 4);
		s->tsval = rte_be_to_cpu_32(v);
		s->tsecr = rte_be_to_cpu_32(e);
	}
	return 0;
}

int
wn_tcp_parse(struct wn_tcp_ctx *ctx, struct rte_mbuf *m, struct tcp_seg *s)
{
	uint8_t ipbuf[sizeof(struct rte_ipv6_hdr)], thbuf[TCP_HDR_LEN], obuf[TCP_MAX_OPTLEN];
	const struct rte_tcp_hdr *th;
	const uint8_t *first;
	const uint8_t *opts;
	uint32_t l4off, l4len, doff;
	uint8_t ver;
	int bad;

	if (parse_fast(m, s) == 0)
		return 0;
	memset(s, 0, offsetof(struct tcp_seg, sack));
	s->m = m;
	first = rte_pktmbuf_read(m, 0, 1, ipbuf);
	if (first == NULL) {
		ctx->st.rx_drop_short++;
		return -EINVAL;
	}
	ver = first[0] >> 4;
	if (ver == 4) {
		const struct rte_ipv4_hdr *ip = rte_pktmbuf_read(m, 0, sizeof(*ip), ipbuf);
		uint32_t hl, tot;

		if (ip == NULL) {
			ctx->st.rx_drop_short++;
			return -EINVAL;
		}
		hl = rte_ipv4_hdr_len(ip);
		tot = rte_be_to_cpu_16(ip->total_length);
		if (ip->next_proto_id != IPPROTO_TCP ||
		    (ip->fragment_offset &
		     rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0) {
			ctx->st.rx_drop_family++;
			return -EINVAL;
		}
		if (hl < sizeof(*ip) || tot < hl || tot > rte_pktmbuf_pkt_len(m)) {
			ctx->st.rx_drop_short++;
			return -EINVAL;
		}
		l4off = hl;
		l4len = tot - hl;
		s->src.addr.family = s->dst.addr.family = WN_AF_INET;
		s->src.addr.v4 = ip->src_addr;
		s->dst.addr.v4 = ip->dst_addr;
		bad = cksum_rx_flag(m);
		if (bad < 0)
			bad = l4len < TCP_HDR_LEN ? 0 :
				rte_ipv4_udptcp_cksum_mbuf_verify(m, ip, (uint16_t)l4off);
	} else if (ver == 6) {
		const struct rte_ipv6_hdr *ip6 = rte_pktmbuf_read(m, 0, sizeof(*ip6), ipbuf);

		if (ip6 == NULL) {
			ctx->st.rx_drop_short++;
			return -EINVAL;
		}
		if (ip6->proto != IPPROTO_TCP) {
			ctx->st.rx_drop_family++;
			return -EINVAL;
		}
		l4off = sizeof(*ip6);
		l4len = rte_be_to_cpu_16(ip6->payload_len);
		if (l4off + l4len > rte_pktmbuf_pkt_len(m)) {
			ctx->st.rx_drop_short++;
			return -EINVAL;
		}
		s->src.addr.family = s->dst.addr.family = WN_AF_INET6;
		memcpy(s->src.addr.v6, WN_IP6_SRC(ip6), 16);
		memcpy(s->dst.addr.v6, WN_IP6_DST(ip6), 16);
		bad = cksum_rx_flag(m);
		if (bad < 0)
			bad = l4len < TCP_HDR_LEN ? 0 :
				rte_ipv6_udptcp_cksum_mbuf_verify(m, ip6, (uint16_t)l4off);
	} else {
		ctx->st.rx_drop_family++;
		return -EINVAL;
	}
	if (l4len < TCP_HDR_LEN) {
		ctx->st.rx_drop_short++;
		return -EINVAL;
	}
	th = rte_pktmbuf_read(m, l4off, TCP_HDR_LEN, thbuf);
	doff = (uint32_t)(th->data_off >> 4) * 4;
	if (doff < TCP_HDR_LEN || doff > l4len) {
		ctx->st.rx_drop_short++;
		return -EINVAL;
	}
	if (bad) {
		ctx->st.rx_drop_cksum++;
		return -EINVAL;
	}
	s->src.port = rte_be_to_cpu_16(th->src_port);
	s->dst.port = rte_be_to_cpu_16(th->dst_port);
	s->seq = rte_be_to_cpu_32(th->sent_seq);
	s->ack = rte_be_to_cpu_32(th->recv_ack);
	s->wnd = rte_be_to_cpu_16(th->rx_win);
	s->flags = th->tcp_flags & 0x3f;
	s->off = l4off + doff;
	s->len = l4len - doff;
	if (doff > TCP_HDR_LEN) {
		opts = rte_pktmbuf_read(m, l4off + TCP_HDR_LEN, doff - TCP_HDR_LEN, obuf);
		if (parse_options(ctx, opts, doff - TCP_HDR_LEN, s) != 0)
			return -EINVAL;
	}
	return 0;
}

/* ---- helpers ---- */

static void
mbuf_copy(const struct rte_mbuf *m, uint32_t off, uint32_t len, uint8_t *dst)
{
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (m != NULL && len > 0) {
		uint32_t n = RTE_MIN(len, (uint32_t)m->data_len - off);

		memcpy(dst, rte_pktmbuf_mtod_offset(m, const uint8_t *, off), n);
		dst += n;
		len -= n;
		off = 0;
		m = m->next;
	}
}

static void
rtt_sample(struct wn_tcp_conn *c, uint32_t r)
{
	const struct wn_tcp_ctx_conf *cf = &c->ctx->conf;
	uint32_t k;

	if (!c->rtt_valid) { /* RFC 6298 §2.2 */
		c->srtt = r;
		c->rttvar = r / 2;
		c->rtt_valid = true;
	} else { /* §2.3, alpha = 1/8, beta = 1/4 */
		uint32_t d = c->srtt > r ? c->srtt - r : r - c->srtt;

		c->rttvar = (3 * c->rttvar + d) / 4;
		c->srtt = (7 * c->srtt + r) / 8;
	}
	k = RTE_MAX((uint32_t)TCP_TICK_US, 4 * c->rttvar); /* max(G, K*RTTVAR) */
	c->rto = c->srtt + k;
	c->rto = RTE_MAX(c->rto, cf->rto_min_us); /* §2.4 */
	c->rto = RTE_MIN(c->rto, cf->rto_max_us); /* §2.5 */
}

static void
rtt_from_ack(struct wn_tcp_conn *c, const struct tcp_seg *s)
{
	/* a SYN cookie's TSecr carries options in its low bits: no RTT sample from it */
	if ((c->flags & CF_SYNCOOKIE) && c->state == WN_TCP_SYN_RCVD)
		return;
	if (c->ts_ok && s->has_ts && s->tsecr != 0) {
		uint32_t ms = wn_tcp_ts_now(c) - s->tsecr;

		if (ms < 60000) /* RFC 7323 §4.1: RTTM from the echoed timestamp */
			rtt_sample(c, ms * 1000);
	} else if ((c->flags & CF_RTT_TIMING) && SEQ_GEQ(s->ack, c->rtt_seq)) {
		c->flags &= ~CF_RTT_TIMING;
		rtt_sample(c, (uint32_t)RTE_MIN(c->ctx->now - c->rtt_start, (uint64_t)UINT32_MAX));
	}
}

static void
negotiate(struct wn_tcp_conn *c, const struct tcp_seg *s)
{
	uint32_t f = c->ctx->conf.flags;

	if (s->has_mss && s->mss >= 64)
		c->snd.mss = s->mss;
	c->ws_ok = (f & WN_TCP_F_WSCALE) && s->has_ws;
	if (c->ws_ok) {
		c->snd.wscale = s->ws;
	} else {
		c->snd.wscale = 0;
		c->rcv.wscale = 0;
	}
	c->sack_ok = (f & WN_TCP_F_SACK) && s->has_sackp;
	c->ts_ok = (f & WN_TCP_F_TIMESTAMPS) && s->has_ts;
	if (c->ts_ok)
		c->ts_recent = s->tsval;
	c->snd.optlen = c->ts_ok ? TCP_TS_OPTLEN : 0;
}

static void
enter_time_wait(struct wn_tcp_conn *c)
{
	c->state = WN_TCP_TIME_WAIT;
	c->t_rto = c->t_persist = 0;
	c->t_tw = c->ctx->now + 2ull * c->ctx->conf.msl_us; /* RFC 9293 §3.10.7.4 */
	if (c->t_tw == 0)
		c->t_tw = 1;
	wn_tcp_timer_update(c);
	wn_tcp_tw_enter(c);
}

static void
set_ack_now(struct wn_tcp_conn *c)
{
	c->flags |= CF_ACK_NOW;
	wn_tcp_mark_pending(c);
}

/* ---- SYN cookies (RFC 4987 §3.6) ---- */

static void conn_input(struct wn_tcp_conn *c, const struct tcp_seg *s);

/* The cookie keeps 2 bits of the peer's MSS: the largest entry not above it (Linux's). */
static const uint16_t cookie_mss4[] = { 536, 1300, 1440, 1460 };
static const uint16_t cookie_mss6[] = { 1220, 1420, 1440, 8940 };
#define COOKIE_MSS_N RTE_DIM(cookie_mss4)
#define COOKIE_TS_NO_WS 0xfu     /* TSval low bits: no window scale agreed */
#define COOKIE_TS_SACK 0x10u     /* TSval low bits: SACK agreed */

static const uint16_t *
cookie_mss_table(uint8_t family)
{
	return family == WN_AF_INET ? cookie_mss4 : cookie_mss6;
}

/*
 * Answer a SYN over the full backlog with a SYN cookie: no state kept. With timestamps the
 * peer's window scale and SACK-permitted travel in the low bits of our TSval (Linux's
 * cookie_init_timestamp()); without timestamps neither is offered, as on Linux.
 */
static void
send_cookie(struct wn_tcp_ctx *ctx, const struct tcp_seg *s)
{
	const uint16_t *tab = cookie_mss_table(s->dst.addr.family);
	uint32_t f = ctx->conf.flags, idx = 0, opts = COOKIE_TS_NO_WS, now_ts, tsval = 0, iss;
	uint16_t peer_mss = s->has_mss && s->mss >= 64 ? s->mss : tab[0];
	bool ts = (f & WN_TCP_F_TIMESTAMPS) && s->has_ts, sackp = false;
	int ws = -1;

	while (idx + 1 < COOKIE_MSS_N && tab[idx + 1] <= peer_mss)
		idx++;
	if (ts) {
		if ((f & WN_TCP_F_WSCALE) && s->has_ws) {
			ws = wn_tcp_rcv_wscale(ctx);
			opts = s->ws;
		}
		sackp = (f & WN_TCP_F_SACK) && s->has_sackp;
		if (sackp)
			opts |= COOKIE_TS_SACK;
		/* a clock value not above the current one, its low bits replaced */
		now_ts = (uint32_t)(ctx->now / 1000) + wn_tcp_ts_offset(ctx, &s->dst, &s->src);
		tsval = (now_ts & ~((1u << TCP_COOKIE_TS_BITS) - 1)) | opts;
		if (SEQ_GT(tsval, now_ts))
			tsval -= 1u << TCP_COOKIE_TS_BITS;
	}
	iss = wn_tcp_cookie_make(ctx, &s->dst, &s->src, s->seq, idx, ctx->now);
	wn_tcp_send_synack_cookie(ctx, s, iss, wn_tcp_rcv_mss(ctx, s->dst.addr.family), ws, sackp,
				  ts, tsval);
	ctx->cookie_sent_at = ctx->now != 0 ? ctx->now : 1;
}

/*
 * An ACK to a listener while cookies were sent lately: if it returns a valid cookie, the
 * connection is made from it (MSS from the cookie, window scale and SACK from TSecr) and
 * the segment processed as in SYN-RECEIVED. @return 1 (connection made), 0 (valid but
 * dropped at a limit) or -1 (not a cookie of ours).
 */
static int
cookie_ack(struct wn_tcp_ctx *ctx, struct wn_tcp_listener *l, const struct tcp_seg *s)
{
	uint32_t f = ctx->conf.flags, opts = COOKIE_TS_NO_WS;
	int64_t idx = wn_tcp_cookie_check(ctx, &s->dst, &s->src, s->seq - 1, s->ack - 1, ctx->now);
	bool ts = (f & WN_TCP_F_TIMESTAMPS) && s->has_ts;
	struct wn_tcp_conn *c;

	if (idx < 0 || idx >= (int64_t)COOKIE_MSS_N)
		return -1;
	if (ts)
		opts = s->tsecr & ((1u << TCP_COOKIE_TS_BITS) - 1);
	if (!wn_tcp_conn_room(ctx)) {
		ctx->st.rx_drop_conn_limit++;
		return 0;
	}
	c = wn_tcp_conn_alloc(ctx, &s->dst, &s->src);
	if (c == NULL) {
		ctx->st.rx_drop_conn_limit++;
		return 0;
	}
	ctx->st.syncookies_ok++;
	c->flags |= CF_PASSIVE | CF_SYNCOOKIE;
	c->listener = l;
	c->cb = l->cb;
	c->arg = l->arg;
	c->state = WN_TCP_SYN_RCVD;
	c->rcv.irs = s->seq - 1;
	c->rcv.nxt = s->seq;
	c->rcv.adv = s->seq + RTE_MIN(ctx->conf.rcvbuf, 65535u); /* the SYN-ACK's window */
	c->rcv.last_ack_sent = s->seq;
	c->snd.mss = cookie_mss_table(s->dst.addr.family)[idx];
	c->ws_ok = (f & WN_TCP_F_WSCALE) && (opts & COOKIE_TS_NO_WS) <= TCP_MAX_WSCALE;
	c->snd.wscale = c->ws_ok ? (uint8_t)(opts & COOKIE_TS_NO_WS) : 0;
	if (!c->ws_ok)
		c->rcv.wscale = 0;
	c->sack_ok = (f & WN_TCP_F_SACK) && (opts & COOKIE_TS_SACK);
	c->ts_ok = ts;
	c->ts_recent = s->tsval;
	c->snd.optlen = ts ? TCP_TS_OPTLEN : 0;
	c->snd.iss = s->ack - 1;
	c->snd.una = c->snd.iss;
	c->snd.nxt = c->snd.max = c->snd.iss + 1;
	c->snd.wl1 = s->seq;
	c->snd.wl2 = c->snd.iss;
	c->recover = c->snd.iss;
	c->high_rxt = c->snd.iss;
	c->sbase = c->snd.iss + 1;
	conn_input(c, s);
	return 1;
}

/* ---- LISTEN (RFC 9293 §3.10.7.2) ---- */

static int
listen_input(struct wn_tcp_ctx *ctx, struct wn_tcp_listener *l, const struct tcp_seg *s)
{
	struct wn_tcp_conn *c;

	if (s->flags & TH_RST) {
		ctx->st.rx_drop_state++; /* RFC 9293 §3.10.7.2: ignored */
		return 0;
	}
	if (s->flags & TH_ACK) {
		/* the ACK of a SYN cookie sent in the last TCP_COOKIE_AGE minutes? */
		if (!(s->flags & TH_SYN) && ctx->cookie_sent_at != 0 &&
		    ctx->now - ctx->cookie_sent_at < TCP_COOKIE_AGE * TCP_COOKIE_PERIOD_US) {
			int r = cookie_ack(ctx, l, s);

			if (r >= 0)
				return r;
			ctx->st.syncookies_failed++;
			/*
			 * The cookie is checked against SEG.SEQ - 1, so only the peer's first
			 * segment after the handshake proves it. A later one (its ACK and first
			 * segments lost in the burst that filled the backlog) is dropped without a
			 * RST: the peer resends from its first unacknowledged octet, which
			 * passes. A RST here reset such connections in the 1000-connection test.
			 */
			if (s->len > 0) {
				ctx->st.rx_drop_noconn++;
				return 0;
			}
		}
		wn_tcp_send_rst_for(ctx, s);
		ctx->st.rx_drop_noconn++;
		return 0;
	}
	if (!(s->flags & TH_SYN) || (s->flags & TH_FIN)) {
		ctx->st.rx_drop_badflags++;
		return 0;
	}
	if (!wn_tcp_conn_room(ctx)) {
		ctx->st.rx_drop_conn_limit++;
		return 0;
	}
	if (ctx->syn_rcvd >= ctx->conf.syn_backlog) {
		ctx->st.rx_drop_backlog++;
		if (ctx->conf.flags & WN_TCP_F_SYNCOOKIES)
			send_cookie(ctx, s);
		return 0;
	}
	c = wn_tcp_conn_alloc(ctx, &s->dst, &s->src);
	if (c == NULL) {
		ctx->st.rx_drop_conn_limit++;
		return 0;
	}
	c->flags |= CF_PASSIVE | CF_SYN_RCVD_COUNTED;
	ctx->syn_rcvd++;
	c->listener = l;
	c->cb = l->cb;
	c->arg = l->arg;
	c->state = WN_TCP_SYN_RCVD;
	c->rcv.irs = s->seq;
	c->rcv.nxt = s->seq + 1;
	c->rcv.adv = c->rcv.nxt;
	negotiate(c, s);
	c->snd.wnd = s->wnd; /* RFC 7323 §2.2: not scaled in a SYN */
	c->snd.max_wnd = c->snd.wnd;
	c->snd.wl1 = s->seq;
	c->snd.iss = wn_tcp_isn(ctx, &s->dst, &s->src, ctx->now);
	c->snd.una = c->snd.nxt = c->snd.max = c->snd.iss;
	c->snd.wl2 = c->snd.iss;
	c->recover = c->snd.iss;
	c->high_rxt = c->snd.iss;
	c->sbase = c->snd.iss + 1;
	wn_tcp_mark_pending(c); /* SYN-ACK on the next output */
	return 1;
}

/* ---- SYN-SENT (RFC 9293 §3.10.7.3) ---- */

static void
syn_sent_input(struct wn_tcp_conn *c, const struct tcp_seg *s)
{
	struct wn_tcp_ctx *ctx = c->ctx;
	bool ack_ok = false;

	if (s->flags & TH_ACK) {
		if (SEQ_LEQ(s->ack, c->snd.iss) || SEQ_GT(s->ack, c->snd.max)) {
			if (!(s->flags & TH_RST))
				wn_tcp_send_rst_for(ctx, s);
			ctx->st.rx_drop_ack++;
			return;
		}
		ack_ok = true;
	}
	if (s->flags & TH_RST) {
		/* RFC 5961 §3.2 / RFC 9293: only an RST acknowledging our SYN is believed. */
		if (ack_ok) {
			ctx->st.rx_rst++;
			wn_tcp_conn_closed(c, WN_TCP_CLOSE_REFUSED);
		} else {
			ctx->st.rx_drop_badflags++;
		}
		return;
	}
	if (!(s->flags & TH_SYN)) {
		ctx->st.rx_drop_badflags++;
		return;
	}
	c->rcv.irs = s->seq;
	c->rcv.nxt = s->seq + 1;
	c->rcv.adv = c->rcv.nxt;
	negotiate(c, s);
	c->snd.wnd = s->wnd;
	c->snd.max_wnd = c->snd.wnd;
	c->snd.wl1 = s->seq;
	c->snd.wl2 = s->ack;
	c->recover = c->snd.iss;
	c->high_rxt = c->snd.iss;
	if (ack_ok) {
		c->snd.una = s->ack;
		rtt_from_ack(c, s);
		c->t_rto = 0;
		c->flags |= CF_ACK_NOW;
		wn_tcp_established(c);
		if (!(c->flags & CF_DEAD)) {
			c->retries = 0;
			c->backoff = 0;
			wn_tcp_timer_update(c);
		}
		/* Data on a SYN-ACK is not taken; the peer retransmits it. */
		return;
	}
	/* Simultaneous open (RFC 9293 Figure 8): SYN-RECEIVED, send SYN,ACK. */
	c->state = WN_TCP_SYN_RCVD;
	c->flags |= CF_SYN_AGAIN;
	wn_tcp_mark_pending(c);
}

/* ---- ACK processing ---- */

/*
 * RFC 3522 (Eifel detection) with the RFC 4015 response: the first ACK of new data after a
 * timeout echoes a timestamp older than the first retransmission's, so it acknowledges the
 * original transmission: the ACKs were late (a starved peer, a long queue), not lost. Resume
 * sending new data from SND.MAX instead of resending the whole window, and restore the
 * congestion state the timeout took away. Linux does the same (tcp_try_undo_loss()).
 */
static void
eifel_check(struct wn_tcp_conn *c, const struct tcp_seg *s)
{
	c->rto_eifel = false;
	if (!s->has_ts || s->tsecr == 0 || !SEQ_LT(s->tsecr, c->rto_tsval))
		return;
	c->ctx->st.rto_spurious++;
	c->cwnd = RTE_MAX(c->cwnd, c->rto_cwnd);
	c->ssthresh = RTE_MAX(c->ssthresh, c->rto_ssthresh);
	/* a FIN already sent stays where it is: only data is skipped over */
	if (!(c->flags & CF_FIN_PENDING) && SEQ_LT(c->snd.nxt, c->snd.max))
		c->snd.nxt = c->snd.max;
}

static void
new_ack(struct wn_tcp_conn *c, const struct tcp_seg *s)
{
	struct wn_tcp_ctx *ctx = c->ctx;
	uint32_t acked = s->ack - c->snd.una, before = c->slen, data_acked;

	if (c->rto_eifel)
		eifel_check(c, s);
	rtt_from_ack(c, s);
	c->snd.una = s->ack;
	wn_tcp_sbuf_acked(c);
	data_acked = before - c->slen;
	if (SEQ_LT(c->snd.nxt, c->snd.una))
		c->snd.nxt = c->snd.una;
	if (SEQ_LT(c->high_rxt, c->snd.una))
		c->high_rxt = c->snd.una;
	wn_tcp_sb_trim(c);
	c->backoff = 0;
	c->retries = 0;
	if (c->in_recovery) {
		if (SEQ_GEQ(s->ack, c->recover)) {
			/* RFC 6582 §3.2 step 3 / RFC 6675 §5: full acknowledgment */
			c->in_recovery = false;
			c->dupacks = 0;
			ctx->conf.cc->on_recovery_end(c, ctx->now);
		} else if (c->sack_ok) {
			/* Partial ACK: the new first hole is retransmitted at once unless that
			 * already happened (RFC 6582 §3.2 step 5 applied to SACK recovery; with
			 * a small window, RFC 6675 IsLost() would otherwise wait for an RTO). */
			if (SEQ_LEQ(c->high_rxt, c->snd.una))
				wn_tcp_retransmit_una(c);
		} else {
			/* RFC 6582 §3.2 step 5: partial ACK, retransmit and deflate */
			uint32_t smss = tcp_smss(c);

			wn_tcp_retransmit_una(c);
			c->cwnd = c->cwnd > acked ? c->cwnd - acked : 0;
			c->cwnd += smss;
			wn_tcp_set_rto_timer(c);
		}
	} else {
		c->dupacks = 0;
		ctx->conf.cc->on_ack(c, acked, ctx->now);
	}
	/* RFC 6298 §5.2 / §5.3 */
	if (c->snd.una == c->snd.max)
		c->t_rto = 0;
	else
		wn_tcp_set_rto_timer(c);
	wn_tcp_tlp_arm(c); /* RFC 8985 §7.2: restart the PTO on an ACK of new data */
	wn_tcp_mark_pending(c);
	if (data_acked > 0 && c->cb != NULL && c->cb->sent != NULL)
		c->cb->sent(c, c->arg, data_acked);
}

/* RFC 6675 §5 step (4) (RFC 5681 §3.2 step 2 without SACK): fast retransmit, recovery. */
static void
enter_recovery(struct wn_tcp_conn *c)
{
	struct wn_tcp_ctx *ctx = c->ctx;

	c->rto_eifel = false;
	/* RFC 6582 §3.2 step 2 / RFC 6675 §5.1: no new recovery before SND.UNA passes the
	 * RecoveryPoint of the previous one (or of the last RTO). */
	if (SEQ_LT(c->snd.una, c->recover) && c->recover != c->snd.iss)
		return;
	ctx->st.fast_retrans++;
	c->in_recovery = true;
	c->t_tlp = 0;
	c->tlp_out = false;
	c->recover = c->snd.max;
	c->undo_ok = c->sack_ok;
	c->undo_retrans = 0;
	c->undo_start = c->snd.una;
	c->undo_end = c->snd.una;
	c->prior_cwnd = c->cwnd;
	c->prior_ssthresh = c->ssthresh;
	ctx->conf.cc->on_loss(c, ctx->now);
	if (!c->sack_ok)
		c->cwnd = c->ssthresh + TCP_DUPTHRESH * tcp_smss(c);
	c->high_rxt = c->snd.una;
	wn_tcp_retransmit_una(c);
	wn_tcp_tlp_arm(c);
	wn_tcp_mark_pending(c);
}

static void
dup_ack(struct wn_tcp_conn *c)
{
	struct wn_tcp_ctx *ctx = c->ctx;

	ctx->st.rx_dupack++;
	c->dupacks++;
	if (c->in_recovery) {
		if (!c->sack_ok)
			c->cwnd += tcp_smss(c); /* RFC 6582 §3.2 step 4 (RFC 5681 §3.2 step 5) */
		wn_tcp_mark_pending(c);
		return;
	}
	/* RFC 6675 §5 steps (1)-(3): DupThresh duplicates, or IsLost(HighACK + 1). */
	if (c->dupacks < c->dupthresh && !(c->sack_ok && wn_tcp_sb_is_lost(c, c->snd.una))) {
		wn_tcp_mark_pending(c); /* Limited Transmit (RFC 3042) may send */
		return;
	}
	enter_recovery(c);
}

/*
 * RFC 5681 §2 DUPLICATE ACKNOWLEDGMENT without SACK: same ACK, no data, no SYN/FIN, same
 * window, data outstanding. With SACK, RFC 6675 §2: an ACK whose SACK blocks cover octets
 * not SACKed before is a duplicate whatever its window or payload (a Linux receiver
 * changes its window on most ACKs as its application reads).
 */
static bool
is_dup_ack(const struct wn_tcp_conn *c, const struct tcp_seg *s, uint32_t wnd,
	   uint32_t sacked_new)
{
	if (s->ack != c->snd.una || c->snd.max == c->snd.una)
		return false;
	if (c->sack_ok && s->nsack > 0)
		return sacked_new > 0;
	return s->len == 0 && !(s->flags & (TH_SYN | TH_FIN)) && wnd == c->snd.wnd;
}

/*
 * Loss detection from the scoreboard on any ACK that SACKed new octets (RFC 6675 §5).
 * Outside recovery, a cumulative ACK may still leave IsLost(HighACK + 1) true. In recovery,
 * retransmissions are checked for loss: octets sent after the last retransmission are
 * SACKed beyond DupThresh segments while a retransmitted hole is still missing, so the
 * holes below HighRxt are lost again and NextSeg() starts over from SND.UNA (Linux's
 * lost-retransmit detection; without it every lost retransmission costs an RTO).
 */
static void
sack_loss_check(struct wn_tcp_conn *c)
{
	uint32_t smss = tcp_smss(c);

	if (!c->in_recovery) {
		/* RFC 8985 §7.4.1 (RACK's view of a probe): the probe, sent after everything
		 * outstanding, was SACKed, so SND.UNA's segment sent before it is lost. */
		if (c->nsb > 0 && (wn_tcp_sb_is_lost(c, c->snd.una) ||
				   (c->tlp_out && SEQ_GEQ(c->sb[c->nsb - 1].end, c->tlp_high))))
			enter_recovery(c);
		return;
	}
	if (SEQ_GT(c->high_rxt, c->snd.una) && c->nsb > 0 &&
	    SEQ_LT(c->snd.una, c->sb[0].start) &&
	    SEQ_GT(c->sb[c->nsb - 1].end, c->rxt_mark + TCP_DUPTHRESH * smss)) {
		c->ctx->st.rxt_lost++;
		c->high_rxt = c->snd.una;
		c->rxt_mark = c->snd.max;
	}
	if (!c->tlp_out)
		wn_tcp_tlp_arm(c); /* the peer is alive: the probe waits for silence */
	wn_tcp_mark_pending(c);
}

/*
 * RFC 3708 §3 / RFC 4015: every retransmission of the last recovery reported as a duplicate
 * (D-SACK) means the "loss" was reordering; the window reduction is undone (as Linux does;
 * the 1% reorder of the interop tests made half of all recoveries spurious).
 */
static void
dsack_undo(struct wn_tcp_conn *c, const struct tcp_seg *s)
{
	struct wn_tcp_ctx *ctx = c->ctx;
	uint32_t a = s->sack[0].start, b = s->sack[0].end, emss = tcp_emss(c), n;

	if (SEQ_LT(a, c->undo_start) || SEQ_GT(b, c->undo_end) || !SEQ_LT(a, b))
		return;
	n = (b - a + emss - 1) / emss;
	c->undo_retrans = (uint16_t)(c->undo_retrans > n ? c->undo_retrans - n : 0);
	if (c->undo_retrans > 0)
		return;
	c->undo_ok = false;
	ctx->st.undo_spurious++;
	/* Reordering made DupThresh segments arrive before a late one: wait for one more
	 * next time (RFC 4653 §3.1's adaptive DupThresh in spirit; Linux's tp->reordering). */
	if (c->dupthresh < TCP_DUPTHRESH_MAX)
		c->dupthresh++;
	c->cwnd = RTE_MAX(c->cwnd, c->prior_cwnd);
	c->ssthresh = RTE_MAX(c->ssthresh, c->prior_ssthresh);
	if (c->in_recovery) {
		c->in_recovery = false;
		c->dupacks = 0;
		c->recover = c->snd.una; /* a real hole left may start a new recovery */
	}
	wn_tcp_mark_pending(c);
}

/* RFC 2883 §4: a D-SACK block lies below the ACK or inside the block after it. */
static bool
has_dsack(const struct tcp_seg *s)
{
	if (s->nsack == 0)
		return false;
	if (SEQ_LEQ(s->sack[0].end, s->ack))
		return true;
	return s->nsack > 1 && SEQ_GEQ(s->sack[0].start, s->sack[1].start) &&
	       SEQ_LEQ(s->sack[0].end, s->sack[1].end);
}

/*
 * RFC 8985 §7.4: close a tail loss probe's episode. A probe of new data, or a
 * retransmission the peer reports as a duplicate (D-SACK), repaired nothing. An ACK
 * beyond the probe without D-SACK means the probe repaired a loss: congestion response.
 * An ACK of exactly the probe may still be followed by its D-SACK, so it waits (Linux's
 * tcp_process_tlp_ack()), unless it is a pure duplicate.
 */
static void
tlp_ack(struct wn_tcp_conn *c, const struct tcp_seg *s, bool advanced, uint32_t sacked_new)
{
	struct wn_tcp_ctx *ctx = c->ctx;

	if (!c->tlp_out || SEQ_LT(s->ack, c->tlp_high))
		return;
	if (!c->tlp_retrans || has_dsack(s)) {
		c->tlp_out = false;
	} else if (SEQ_GT(s->ack, c->tlp_high)) {
		c->tlp_out = false;
		ctx->st.tlp_recovered++;
		if (!c->tlp_rec && !c->in_recovery) {
			ctx->conf.cc->on_loss(c, ctx->now);
			ctx->conf.cc->on_recovery_end(c, ctx->now);
		}
	} else if (!advanced && sacked_new == 0) {
		c->tlp_out = false;
	}
	if (!c->tlp_out)
		wn_tcp_tlp_arm(c);
}

static bool
our_fin_acked(const struct wn_tcp_conn *c)
{
	return (c->flags & CF_FIN_PENDING) && SEQ_GT(c->snd.una, c->snd.fin_seq);
}

/* @return false when the segment must not be processed further. */
static bool
ack_input(struct wn_tcp_conn *c, const struct tcp_seg *s)
{
	struct wn_tcp_ctx *ctx = c->ctx;
	uint32_t wnd = (uint32_t)s->wnd << c->snd.wscale, sacked_new = 0;
	bool advanced;

	if (c->state == WN_TCP_SYN_RCVD) {
		if (!SEQ_LT(c->snd.una, s->ack) || SEQ_GT(s->ack, c->snd.max)) {
			wn_tcp_send_rst_for(ctx, s); /* <SEQ=SEG.ACK><CTL=RST> */
			ctx->st.rx_drop_ack++;
			return false;
		}
		rtt_from_ack(c, s);
		c->snd.una = s->ack;
		c->snd.wnd = wnd;
		c->snd.max_wnd = RTE_MAX(c->snd.max_wnd, wnd);
		c->snd.wl1 = s->seq;
		c->snd.wl2 = s->ack;
		c->t_rto = 0;
		wn_tcp_established(c);
		if (c->flags & CF_DEAD)
			return false;
		c->retries = 0;
		c->backoff = 0;
		wn_tcp_timer_update(c);
		return true;
	}
	/* RFC 5961 §5.2: acceptable ACKs lie in [SND.UNA - MAX.SND.WND, SND.NXT]. */
	if (SEQ_GT(s->ack, c->snd.max) ||
	    SEQ_LT(s->ack, c->snd.una - RTE_MAX(c->snd.max_wnd, 65535u))) {
		ctx->st.rx_drop_ack++;
		wn_tcp_send_challenge_ack(c);
		return false;
	}
	if (c->sack_ok && s->nsack > 0)
		sacked_new = wn_tcp_sb_update(c, s);
	advanced = SEQ_GT(s->ack, c->snd.una);
	if (advanced) {
		new_ack(c, s);
		if (c->flags & CF_DEAD)
			return false;
	} else if (is_dup_ack(c, s, wnd, sacked_new)) {
		dup_ack(c);
	}
	if (c->undo_ok && c->undo_retrans > 0 && c->sack_ok && has_dsack(s))
		dsack_undo(c, s);
	tlp_ack(c, s, advanced, sacked_new);
	if (sacked_new > 0 && c->snd.una != c->snd.max)
		sack_loss_check(c);
	/* RFC 9293 §3.10.7.4 window update rule */
	if (SEQ_LT(c->snd.wl1, s->seq) ||
	    (c->snd.wl1 == s->seq && SEQ_LEQ(c->snd.wl2, s->ack))) {
		if (wnd > c->snd.wnd)
			wn_tcp_mark_pending(c);
		c->snd.wnd = wnd;
		c->snd.max_wnd = RTE_MAX(c->snd.max_wnd, wnd);
		c->snd.wl1 = s->seq;
		c->snd.wl2 = s->ack;
	}
	switch (c->state) {
	case WN_TCP_FIN_WAIT_1:
		if (our_fin_acked(c)) {
			c->state = WN_TCP_FIN_WAIT_2;
			/* the ULP is done with it: do not wait forever for the peer's FIN */
			c->t_tw = c->ctx->now + c->ctx->conf.fin_wait2_us;
			wn_tcp_timer_update(c);
		}
		break;
	case WN_TCP_CLOSING:
		if (our_fin_acked(c))
			enter_time_wait(c);
		break;
	case WN_TCP_LAST_ACK:
		if (our_fin_acked(c)) {
			wn_tcp_conn_closed(c, WN_TCP_CLOSE_NORMAL);
			return false;
		}
		break;
	default:
		break;
	}
	return true;
}

/* ---- data ---- */

static void
ooo_pop_front(struct wn_tcp_conn *c)
{
	memmove(&c->ooo[0], &c->ooo[1], (c->nooo - 1u) * sizeof(c->ooo[0]));
	c->nooo--;
	if (c->ooo_recent == 0)
		c->ooo_recent = TCP_OOO_MAX;
	else if (c->ooo_recent != TCP_OOO_MAX)
		c->ooo_recent--;
}

static void rcv_ack_policy(struct wn_tcp_conn *c, const struct tcp_seg *s);

static void
data_input(struct wn_tcp_conn *c, const struct tcp_seg *s)
{
	struct wn_tcp_ctx *ctx = c->ctx;
	uint32_t seq = s->seq, len = s->len, off = s->off, rwnd, pos, first;

	if (SEQ_LT(seq, c->rcv.nxt)) {
		uint32_t d = c->rcv.nxt - seq;

		if (d >= len) {
			ctx->st.rx_dup_data++;
			wn_tcp_dsack_note(c, seq, seq + len);
			set_ack_now(c);
			return;
		}
		wn_tcp_dsack_note(c, seq, c->rcv.nxt); /* RFC 2883 §4.1.1: the duplicated part */
		seq += d;
		off += d;
		len -= d;
	}
	rwnd = wn_tcp_rcv_window(c);
	if (SEQ_GT(seq + len, c->rcv.nxt + rwnd)) {
		uint32_t keep = SEQ_GT(c->rcv.nxt + rwnd, seq) ? c->rcv.nxt + rwnd - seq : 0;

		ctx->st.rx_drop_rcvbuf++;
		len = keep;
	}
	if (len == 0) {
		set_ack_now(c);
		return;
	}
	if (seq != c->rcv.nxt && wn_tcp_ooo_covers(c, seq, seq + len)) {
		/* RFC 2883 §4.1.2: out of order and received before; no data to keep */
		ctx->st.rx_dup_data++;
		wn_tcp_dsack_note(c, seq, seq + len);
		wn_tcp_send_ack(c);
		return;
	}
	if (seq != c->rcv.nxt && wn_tcp_ooo_add(c, seq, seq + len) != 0) {
		ctx->st.rx_drop_ooo_full++;
		set_ack_now(c);
		return;
	}
	if (seq == c->rcv.nxt && c->nooo == 0 && c->cb != NULL && c->cb->recv_seg != NULL &&
	    off + len <= rte_pktmbuf_data_len(s->m)) {
		/* in order, nothing queued behind it: the upper layer takes what it can in place */
		uint32_t took = c->cb->recv_seg(c, c->arg,
						rte_pktmbuf_mtod_offset(s->m, const uint8_t *, off),
						len);

		if (c->flags & CF_DEAD)
			return;
		took = RTE_MIN(took, len);
		ctx->st.rx_inplace_bytes += took;
		c->rcv.nxt += took;
		seq += took;
		off += took;
		len -= took;
		if (len == 0) {
			rcv_ack_policy(c, s);
			return;
		}
	}
	/* the receive buffer grows with the data it holds (up to the window's base) */
	if (wn_tcp_rbuf_reserve(c, c->rlen + (seq - c->rcv.nxt) + len) != 0) {
		ctx->st.rx_drop_rcvbuf++;
		set_ack_now(c);
		return;
	}
	pos = (c->rhead + c->rlen + (seq - c->rcv.nxt)) % c->rcap;
	first = RTE_MIN(len, c->rcap - pos);
	mbuf_copy(s->m, off, first, c->rbuf + pos);
	if (first < len)
		mbuf_copy(s->m, off + first, len - first, c->rbuf);
	if (seq != c->rcv.nxt) {
		/* RFC 5681 §4.2: every out-of-order segment gets its own immediate duplicate
		 * ACK (with SACK), even inside a burst, so the sender can count them. */
		ctx->st.rx_ooo++;
		wn_tcp_send_ack(c);
		if (first == len && c->cb != NULL && c->cb->recv_ooo != NULL)
			c->cb->recv_ooo(c, c->arg, seq, c->rbuf + pos, len);
		return;
	}
	c->rcv.nxt += len;
	c->rlen += len;
	if (c->nooo > 0 && SEQ_LEQ(c->ooo[0].start, c->rcv.nxt)) {
		while (c->nooo > 0 && SEQ_LEQ(c->ooo[0].start, c->rcv.nxt)) {
			if (SEQ_GT(c->ooo[0].end, c->rcv.nxt)) {
				c->rlen += c->ooo[0].end - c->rcv.nxt;
				c->rcv.nxt = c->ooo[0].end;
			}
			ooo_pop_front(c);
		}
		set_ack_now(c); /* a hole was filled: ACK now (RFC 5681 §4.2) */
		return;
	}
	rcv_ack_policy(c, s);
}

/* In-order data arrived without filling a hole: when to acknowledge it. */
static void
rcv_ack_policy(struct wn_tcp_conn *c, const struct tcp_seg *s)
{
	struct wn_tcp_ctx *ctx = c->ctx;

	if (++c->rcv.unacked_segs >= 2 || c->nooo > 0 || (s->flags & TH_PSH)) {
		/* At least every second full-sized segment (RFC 5681 §4.2), small segments, or
		 * the end of a sender's write (PSH): one ACK when the receive burst has been
		 * processed (wn_tcp_tx_bulk/wn_tcp_process), as Linux acknowledges a GRO
		 * aggregate: a burst (32 frames in our loops) is a fraction of a window, so a
		 * lost ACK is covered by the next one. A delayed ACK here would only make the
		 * sender's tail-loss probe fire. */
		set_ack_now(c);
	} else if (c->t_delack == 0) {
		c->t_delack = ctx->now + ctx->conf.delack_us;
		wn_tcp_timer_update(c);
	}
}

static void
fin_input(struct wn_tcp_conn *c)
{
	if (!(c->flags & CF_FIN_RCVD) || c->rcv.nxt != c->rcv.fin_seq)
		return;
	switch (c->state) {
	case WN_TCP_SYN_RCVD:
	case WN_TCP_ESTABLISHED:
		c->state = WN_TCP_CLOSE_WAIT;
		break;
	case WN_TCP_FIN_WAIT_1:
		if (our_fin_acked(c))
			enter_time_wait(c);
		else
			c->state = WN_TCP_CLOSING;
		break;
	case WN_TCP_FIN_WAIT_2:
		enter_time_wait(c);
		break;
	case WN_TCP_TIME_WAIT:
		enter_time_wait(c); /* restart the 2 MSL timeout */
		set_ack_now(c);
		return;
	default:
		return;
	}
	c->rcv.nxt++;
	set_ack_now(c);
	if (c->cb != NULL && c->cb->eof != NULL)
		c->cb->eof(c, c->arg);
}

static bool
seq_acceptable(const struct wn_tcp_conn *c, const struct tcp_seg *s, uint32_t seglen)
{
	uint32_t w = wn_tcp_rcv_window(c), nxt = c->rcv.nxt;

	/* RFC 9293 §3.10.7.4 table; a zero window still takes the ACK at RCV.NXT. */
	if (seglen == 0)
		return w == 0 ? s->seq == nxt : SEQ_LEQ(nxt, s->seq) && SEQ_LT(s->seq, nxt + w);
	if (w == 0)
		return s->seq == nxt;
	return (SEQ_LEQ(nxt, s->seq) && SEQ_LT(s->seq, nxt + w)) ||
	       (SEQ_LEQ(nxt, s->seq + seglen - 1) && SEQ_LT(s->seq + seglen - 1, nxt + w));
}

/*
 * Header prediction (RFC 9293 §3.10.7.4 taken in the order of Van Jacobson's fast path):
 * an ESTABLISHED connection receives the next in-order segment, ACK (and PSH) only, its
 * timestamp not older, no SACK blocks, the same window, while nothing is out of order or in
 * recovery on either side. Every check conn_input() would make then passes, so only its
 * effects remain: TS.Recent, a new ACK, the window's wl1/wl2, the data. @return false when
 * the segment is not such a one (conn_input() takes it).
 */
static bool
conn_input_fast(struct wn_tcp_conn *c, const struct tcp_seg *s)
{
	uint32_t wnd = (uint32_t)s->wnd << c->snd.wscale, before;

	if (c->state != WN_TCP_ESTABLISHED || (s->flags & ~TH_PSH) != TH_ACK ||
	    s->seq != c->rcv.nxt || s->nsack != 0 || c->ts_ok != s->has_ts ||
	    (c->ts_ok && SEQ_LT(s->tsval, c->ts_recent)) || wnd != c->snd.wnd ||
	    c->nooo != 0 || c->dsack.start != c->dsack.end || c->in_recovery ||
	    c->dupacks != 0 || c->tlp_out || c->rto_eifel || c->nsb != 0 ||
	    (c->flags & CF_FIN_RCVD) ||
	    SEQ_LT(s->ack, c->snd.una) || SEQ_GT(s->ack, c->snd.max) ||
	    s->len > wn_tcp_rcv_window(c) || (s->ack == c->snd.una && s->len == 0))
		return false;
	/* RFC 7323 §4.3 */
	if (c->ts_ok && SEQ_LEQ(s->seq, c->rcv.last_ack_sent))
		c->ts_recent = s->tsval;
	if (SEQ_GT(s->ack, c->snd.una)) {
		new_ack(c, s);
		if (c->flags & CF_DEAD)
			return true;
	}
	/* RFC 9293 §3.10.7.4 window update rule: SND.WND is unchanged, its reference moves */
	if (SEQ_LT(c->snd.wl1, s->seq) || (c->snd.wl1 == s->seq && SEQ_LEQ(c->snd.wl2, s->ack))) {
		c->snd.wl1 = s->seq;
		c->snd.wl2 = s->ack;
	}
	if (s->len == 0)
		return true;
	before = c->rlen;
	data_input(c, s);
	if (c->rlen != before && !(c->flags & CF_DEAD) && c->cb != NULL && c->cb->recv != NULL)
		c->cb->recv(c, c->arg);
	return true;
}

static void
conn_input(struct wn_tcp_conn *c, const struct tcp_seg *s)
{
	struct wn_tcp_ctx *ctx = c->ctx;
	uint32_t seglen = s->len + !!(s->flags & TH_SYN) + !!(s->flags & TH_FIN);
	bool had_data;

	if (conn_input_fast(c, s))
		return;

	if (c->state == WN_TCP_SYN_SENT) {
		syn_sent_input(c, s);
		return;
	}
	/* Our SYN-ACK was lost and the peer repeats its SYN: answer with the SYN-ACK again. */
	if (c->state == WN_TCP_SYN_RCVD && (s->flags & TH_SYN) && !(s->flags & (TH_ACK | TH_RST)) &&
	    s->seq == c->rcv.irs) {
		c->flags |= CF_SYN_AGAIN;
		wn_tcp_mark_pending(c);
		return;
	}
	/* Simultaneous open: the peer's SYN,ACK acknowledging our SYN completes it. */
	if (c->state == WN_TCP_SYN_RCVD && (s->flags & (TH_SYN | TH_ACK | TH_RST)) ==
	    (TH_SYN | TH_ACK) && s->seq == c->rcv.irs) {
		if (ack_input(c, s))
			set_ack_now(c);
		return;
	}
	/* RFC 7323 §5.3 R1: PAWS */
	if (c->ts_ok && s->has_ts && !(s->flags & TH_RST) && SEQ_LT(s->tsval, c->ts_recent)) {
		ctx->st.rx_drop_paws++;
		set_ack_now(c);
		return;
	}
	if (!seq_acceptable(c, s, seglen)) {
		if (seglen > 0 && SEQ_LEQ(s->seq + seglen, c->rcv.nxt)) {
			/* an old duplicate: our ACK was lost or delayed, or the sender took
			 * reordering for a loss (RFC 2883 §4.1.1: tell it with a D-SACK) */
			ctx->st.rx_dup_data++;
			if (s->len > 0)
				wn_tcp_dsack_note(c, s->seq, s->seq + s->len);
		} else
			ctx->st.rx_drop_unacceptable++;
		if (!(s->flags & TH_RST))
			set_ack_now(c);
		return;
	}
	if (s->flags & TH_RST) {
		/* RFC 5961 §3.2: exact match resets, otherwise a challenge ACK. */
		if (s->seq != c->rcv.nxt) {
			wn_tcp_send_challenge_ack(c);
			return;
		}
		ctx->st.rx_rst++;
		if (c->state == WN_TCP_SYN_RCVD && !(c->flags & CF_PASSIVE))
			wn_tcp_conn_closed(c, WN_TCP_CLOSE_REFUSED);
		else if (c->state == WN_TCP_CLOSING || c->state == WN_TCP_LAST_ACK ||
			 c->state == WN_TCP_TIME_WAIT)
			wn_tcp_conn_closed(c, WN_TCP_CLOSE_NORMAL);
		else
			wn_tcp_conn_closed(c, WN_TCP_CLOSE_RESET);
		return;
	}
	if (s->flags & TH_SYN) {
		/* RFC 5961 §4.2: any SYN in a synchronized state gets a challenge ACK. */
		wn_tcp_send_challenge_ack(c);
		return;
	}
	if (!(s->flags & TH_ACK)) {
		ctx->st.rx_drop_badflags++;
		return;
	}
	/* RFC 7323 §4.3: TS.Recent from segments covering Last.ACK.sent */
	if (c->ts_ok && s->has_ts && SEQ_GEQ(s->tsval, c->ts_recent) &&
	    SEQ_LEQ(s->seq, c->rcv.last_ack_sent))
		c->ts_recent = s->tsval;
	if (!ack_input(c, s))
		return;
	had_data = s->len > 0;
	if (had_data) {
		switch (c->state) {
		case WN_TCP_ESTABLISHED:
		case WN_TCP_FIN_WAIT_1:
		case WN_TCP_FIN_WAIT_2: {
			uint32_t before = c->rlen;

			data_input(c, s);
			if (c->rlen != before && c->cb != NULL && c->cb->recv != NULL) {
				c->cb->recv(c, c->arg);
				if (c->flags & CF_DEAD)
					return;
			}
			break;
		}
		default:
			ctx->st.rx_drop_state++; /* RFC 9293: data after the peer's FIN is ignored */
			break;
		}
	}
	if (s->flags & TH_FIN) {
		uint32_t fseq = s->seq + s->len;

		if (c->state == WN_TCP_TIME_WAIT) {
			enter_time_wait(c);
			set_ack_now(c);
		} else if (!(c->flags & CF_FIN_RCVD) &&
			   SEQ_LEQ(fseq, c->rcv.nxt + wn_tcp_rcv_window(c))) {
			c->flags |= CF_FIN_RCVD;
			c->rcv.fin_seq = fseq;
		}
	}
	fin_input(c);
}

/* Segments parsed and looked up together (rte_hash bulk lookup) per chunk. */
#define RX_CHUNK 32

static uint16_t
rx_one(struct wn_tcp_ctx *ctx, struct tcp_seg *s, struct wn_tcp_conn *c)
{
	struct tcp_key k;
	struct wn_tcp_listener *l;

	/* A miss (or a connection closed earlier in this burst) is looked up again: the
	 * burst itself may have created or removed the connection. */
	if (c == NULL || (c->flags & CF_DEAD)) {
		tcp_key_make(&k, &s->dst, &s->src);
		if (rte_hash_lookup_data(ctx->hash, &k, (void **)&c) < 0)
			c = NULL;
	}
	if (c != NULL) {
		ctx->last_rx = c;
		conn_input(c, s);
		/* any segment shows the peer alive (keepalive) */
		c->last_rx = ctx->now;
		if (c->ka_idle != 0 && !(c->flags & CF_DEAD) && (c->t_ka == 0 || c->ka_sent != 0))
			wn_tcp_keepalive_arm(c);
		return 1;
	}
	l = wn_tcp_listener_find(ctx, &s->dst);
	if (l != NULL)
		return (uint16_t)listen_input(ctx, l, s);
	ctx->st.rx_drop_noconn++;
	wn_tcp_send_rst_for(ctx, s);
	return 0;
}

/* Is @p c (alive) the connection of segment @p s? */
static inline bool
seg_of(const struct wn_tcp_conn *c, const struct tcp_seg *s)
{
	return c->local.port == s->dst.port && c->remote.port == s->src.port &&
	       !(c->flags & CF_DEAD) && wn_ip_addr_eq(&c->remote.addr, &s->src.addr) &&
	       wn_ip_addr_eq(&c->local.addr, &s->dst.addr);
}

/* Do segments @p a and @p b belong to the same connection (the same four-tuple)? */
static inline bool
same_tuple(const struct tcp_seg *a, const struct tcp_seg *b)
{
	return a->dst.port == b->dst.port && a->src.port == b->src.port &&
	       wn_ip_addr_eq(&a->src.addr, &b->src.addr) &&
	       wn_ip_addr_eq(&a->dst.addr, &b->dst.addr);
}

uint16_t
wn_tcp_rx_bulk(struct wn_tcp_ctx *ctx, struct rte_mbuf **pkts, uint16_t n, uint64_t now)
{
	struct tcp_seg segs[RX_CHUNK];
	struct wn_tcp_conn *conn[RX_CHUNK];
	struct tcp_key keys[RX_CHUNK];
	const void *kp[RX_CHUNK];
	void *data[RX_CHUNK];
	uint8_t miss[RX_CHUNK], same[RX_CHUNK];
	uint16_t ok = 0;

	if (now > ctx->now)
		ctx->now = now;
	for (uint16_t base = 0; base < n; base += RX_CHUNK) {
		uint16_t cnt = (uint16_t)RTE_MIN(n - base, RX_CHUNK), nk = 0, nm = 0;
		uint64_t hits = 0;

		for (uint16_t j = 0; j < cnt; j++) {
			ctx->st.rx_segs++;
			if (wn_tcp_parse(ctx, pkts[base + j], &segs[nk]) != 0)
				continue;
			/* the last segment's connection; else the one of the segment before it in
			 * this chunk (a sender's burst: runs of one connection's segments, however
			 * many connections are interleaved); else a lookup for the chunk's misses */
			conn[nk] = NULL;
			same[nk] = UINT8_MAX;
			if (ctx->last_rx != NULL && seg_of(ctx->last_rx, &segs[nk])) {
				conn[nk] = ctx->last_rx;
			} else if (nk > 0 && same_tuple(&segs[nk - 1], &segs[nk])) {
				same[nk] = (uint8_t)(nk - 1); /* taken in order below */
			} else {
				tcp_key_make(&keys[nm], &segs[nk].dst, &segs[nk].src);
				kp[nm] = &keys[nm];
				miss[nm++] = (uint8_t)nk;
			}
			nk++;
		}
		if (nm > 0)
			rte_hash_lookup_bulk_data(ctx->hash, kp, nm, &hits, data);
		for (uint16_t k = 0; k < nm; k++)
			if (hits & (1ull << k))
				conn[miss[k]] = data[k];
		for (uint16_t k = 0; k < nk; k++) {
			if (same[k] != UINT8_MAX)
				conn[k] = conn[same[k]];
			ok += rx_one(ctx, &segs[k], conn[k]);
		}
		rte_pktmbuf_free_bulk(&pkts[base], cnt);
	}
	return ok;
}
