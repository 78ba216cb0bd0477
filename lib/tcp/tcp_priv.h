/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/tcp internals: the TCB (snd/rcv split as RFC 9293 §3.3.1 names it), the context. */
#ifndef TCP_PRIV_H
#define TCP_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_hash.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "wn_tcp.h"

#define TCP_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, wn_tcp_logtype, "wn_tcp: " fmt "\n", ##__VA_ARGS__)

/* Sequence-space comparisons (RFC 9293 §3.4, modulo 2^32). */
#define SEQ_LT(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) < 0)
#define SEQ_LEQ(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) <= 0)
#define SEQ_GT(a, b) SEQ_LT(b, a)
#define SEQ_GEQ(a, b) SEQ_LEQ(b, a)
#define SEQ_MAX(a, b) (SEQ_GT(a, b) ? (a) : (b))
#define SEQ_MIN(a, b) (SEQ_LT(a, b) ? (a) : (b))

/* TCP header flags. */
#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10
#define TH_URG 0x20

/* Option kinds (RFC 9293 §3.2, RFC 7323, RFC 2018). */
#define TCPOPT_EOL 0
#define TCPOPT_NOP 1
#define TCPOPT_MSS 2
#define TCPOPT_WS 3
#define TCPOPT_SACK_PERM 4
#define TCPOPT_SACK 5
#define TCPOPT_TS 8

#define TCP_HDR_LEN 20
#define TCP_MAX_OPTLEN 40
#define TCP_TS_OPTLEN 12          /* NOP NOP TS(10), RFC 7323 Appendix A layout */
#define TCP_MAX_WSCALE 14         /* RFC 7323 §2.3 */
#define TCP_DEFAULT_MSS4 536      /* RFC 9293 §3.7.1 */
#define TCP_DEFAULT_MSS6 1220     /* RFC 8200 §5: 1280 - 60 */
#define TCP_DUPTHRESH 3           /* RFC 5681 §3.2, RFC 6675 §2 */
#define TCP_DUPTHRESH_MAX 8       /* raised by observed reordering (RFC 4653 §3.1, Linux) */
#define TCP_WCDELACK_US 200000    /* RFC 8985 §7.2 WCDelAckT: a peer's worst delayed ACK */
#define TCP_MAX_SACK_BLOCKS 4
#define TCP_SCOREBOARD_MAX 32     /* sender-side SACKed intervals kept */
#define TCP_OOO_MAX 32            /* hard bound for conf.ooo_max */
#define TCP_WHEEL_SLOTS 1024
#define TCP_TICK_US 1000          /* timer wheel granularity */
#define TCP_RECORDS_PER_CONN 4096 /* record boundaries a connection can queue */
#define TCP_XPARTS_PER_CONN 4096  /* external (referenced, not copied) pieces queued */
#define TCP_CONN_CHUNK 256        /* connections allocated at once when more are needed */
#define TCP_BUF_MIN 16384         /* a buffer's first allocation; it doubles as needed */
#define TCP_COOKIE_BITS 24        /* SYN cookie: low bits hash + data, high bits the minute */
#define TCP_COOKIE_MASK ((1u << TCP_COOKIE_BITS) - 1)
#define TCP_COOKIE_PERIOD_US 60000000ull /* the cookie clock ticks once a minute */
#define TCP_COOKIE_AGE 2          /* a cookie is good for the minute it was made and the next */
#define TCP_COOKIE_TS_BITS 6      /* TSval low bits carrying wscale (4) and SACK (1) */
#define TCP_MCACHE 16             /* mbufs a context takes from its pool at a time */
/* tx queue slots new data leaves to ACKs, retransmissions and control segments */
#define TCP_TXQ_CTL_ROOM 256

struct seq_range {
	uint32_t start, end; /* [start, end) */
};

/*
 * An external piece of a record (wn_tcp_send_record_ext): its octets occupy send-buffer
 * space (so SND arithmetic is unchanged) but live at @c ptr; segments attach them.
 */
struct tcp_xpart {
	uint32_t seq, len;          /* [seq, seq + len) */
	const uint8_t *ptr;
	rte_iova_t iova;
	struct rte_mbuf_ext_shared_info *sh;
	bool copy;                  /* copied into each segment, never attached (WN_TCP_REC_COPY) */
};

/* Per-record flags (c->rec_fl). */
#define REC_F_CRC 0x01 /* WN_TCP_REC_CRC32C: the trailer is still to be computed */

/* Parsed segment. */
struct tcp_seg {
	struct rte_mbuf *m;
	struct wn_tcp_endpoint src, dst;
	uint32_t seq, ack;
	uint32_t len;      /* payload octets */
	uint32_t off;      /* payload offset in m */
	uint16_t wnd;      /* raw window field */
	uint8_t flags;
	/* options */
	bool has_mss, has_ws, has_sackp, has_ts;
	uint16_t mss;
	uint8_t ws;
	uint32_t tsval, tsecr;
	uint8_t nsack;
	struct seq_range sack[TCP_MAX_SACK_BLOCKS];
};

/* Connection hash key: both endpoints, addresses of either family. */
struct tcp_key {
	uint8_t family;
	uint8_t pad;
	uint16_t lport, rport; /* host order */
	uint8_t pad2[2];
	uint8_t laddr[16], raddr[16];
};

/* Conn flags. */
#define CF_ACK_NOW (1u << 0)     /* send an ACK on the next output */
#define CF_PENDING (1u << 1)     /* on ctx->pending */
#define CF_DEAD (1u << 2)        /* closed; on ctx->dead */
#define CF_FIN_PENDING (1u << 3) /* close() called: FIN after the queued data */
#define CF_FIN_SENT (1u << 4)
#define CF_FIN_RCVD (1u << 5)    /* peer's FIN seen (maybe out of order) */
#define CF_PASSIVE (1u << 6)     /* from a listener */
#define CF_HASHED (1u << 7)
#define CF_IN_WHEEL (1u << 8)
#define CF_SYN_RCVD_COUNTED (1u << 9)
#define CF_ESTAB_NOTIFIED (1u << 10)
#define CF_RTT_TIMING (1u << 11) /* Karn timing of rtt_seq running */
#define CF_PERSIST (1u << 12)    /* persist (zero window) mode */
#define CF_WND_UPDATE (1u << 13) /* window opened: advertise */
#define CF_SYN_AGAIN (1u << 14)  /* repeat our SYN / SYN-ACK now */
#define CF_SYNCOOKIE (1u << 15)  /* created from a SYN cookie's ACK */
#define CF_TW_LISTED (1u << 16)  /* on ctx->tw_new or ctx->tw (WN_TCP_F_TW_DETACH) */
#define CF_TW_DETACHED (1u << 17) /* reported closed in TIME-WAIT: no user, no buffers */
#define CF_TXQ_WAIT (1u << 18)   /* data waits for room in ctx->txq (on ctx->txq_wait) */

struct wn_tcp_listener {
	struct wn_tcp_ctx *ctx;
	struct wn_tcp_endpoint local;
	const struct wn_tcp_cb *cb;
	void *arg;
	bool used;
};

struct wn_tcp_conn {
	struct wn_tcp_ctx *ctx;
	enum wn_tcp_state state;
	uint32_t flags;
	struct tcp_key key;
	struct wn_tcp_endpoint local, remote;
	const struct wn_tcp_cb *cb;
	void *arg;
	enum wn_tcp_mode mode;

	/* RFC 9293 §3.3.1 send sequence variables */
	struct {
		uint32_t una, nxt, max; /* max: highest sequence sent + 1 */
		uint32_t wnd;           /* scaled */
		uint32_t max_wnd;       /* largest window seen (RFC 5961 §5.2 MAX.SND.WND) */
		uint32_t wl1, wl2, iss;
		uint32_t fin_seq;       /* valid with CF_FIN_PENDING */
		uint16_t mss;           /* peer MSS (data octets) */
		uint8_t wscale;
		uint8_t optlen;         /* option octets on every segment (timestamps) */
	} snd;
	/* receive sequence variables */
	struct {
		uint32_t nxt, irs;
		uint32_t adv;           /* right edge last advertised (never shrinks) */
		uint32_t fin_seq;
		uint32_t last_ack_sent;
		uint16_t mss;           /* what we advertised */
		uint8_t wscale;
		uint8_t unacked_segs;   /* full-sized segments not yet ACKed (delayed ACK) */
	} rcv;

	bool ws_ok, ts_ok, sack_ok;
	uint32_t ts_recent;
	uint32_t ts_offset;

	/* RFC 6298 */
	uint32_t srtt, rttvar, rto; /* microseconds; srtt == 0: no sample yet */
	uint32_t rtt_seq;
	uint64_t rtt_start;
	uint8_t backoff;
	uint8_t retries;
	bool rtt_valid;

	/* congestion control */
	uint32_t cwnd, ssthresh;
	uint32_t dupacks;
	uint8_t dupthresh;          /* DupThresh: TCP_DUPTHRESH, raised by spurious recoveries */
	uint32_t recover;           /* RFC 6582 "recover" */
	uint32_t high_rxt;          /* RFC 6675 HighRxt */
	uint32_t rxt_mark;          /* SND.MAX when a hole was last retransmitted */
	uint32_t tlp_high;          /* RFC 8985 §7.3 TLP.end_seq (valid with tlp_out) */
	bool tlp_out;               /* a tail loss probe's episode is open */
	bool tlp_retrans;           /* ... and the probe was a retransmission */
	bool tlp_rec;               /* ... sent in recovery (no congestion response) */
	/* RFC 3708 / RFC 4015: undo a recovery whose retransmissions were all spurious */
	bool undo_ok;
	uint16_t undo_retrans;      /* retransmissions not (yet) reported as duplicates */
	uint32_t undo_start, undo_end; /* the episode's retransmissions lie in [start, end) */
	uint32_t prior_cwnd, prior_ssthresh;
	/* RFC 3522 / RFC 4015: an RTO whose first ACK echoes a timestamp older than the
	 * retransmission's was spurious (the ACKs were late, nothing was lost): undo it */
	bool rto_eifel;
	uint32_t rto_tsval;         /* TSval of the episode's first retransmission */
	uint32_t rto_cwnd, rto_ssthresh; /* before the episode's first RTO */
	uint64_t cc_priv[WN_TCP_CC_PRIV_SIZE / 8];
	bool in_recovery;

	/* RFC 6675 scoreboard */
	struct seq_range sb[TCP_SCOREBOARD_MAX];
	uint8_t nsb;

	/* receive out-of-order intervals, sorted; ooo_recent = last updated (RFC 2018 §4) */
	struct seq_range ooo[TCP_OOO_MAX];
	uint8_t nooo;
	uint8_t ooo_recent;
	/* RFC 2883: a duplicate received since the last ACK, reported once as the first SACK
	 * block of the next one (dsack.start == dsack.end: none) */
	struct seq_range dsack;

	/*
	 * send buffer: ring whose first byte is snd.una (or iss+1 before the SYN is acked);
	 * scap octets allocated (0: none yet), grown as data comes up to smax (ctx.c)
	 */
	uint8_t *sbuf;
	uint32_t scap, shead, slen, smax;
	uint32_t sbase;             /* sequence number of sbuf[shead] */
	/* record boundaries: ring of [start, end) sequence ranges */
	struct seq_range *rec;
	uint32_t rec_head, rec_len;
	/* where the last lookups found the record and the external piece for a sequence number,
	 * counted from the first ever queued (segments are mostly built in order: the next
	 * lookup finds it there or one further) */
	uint32_t rec_hint, rec_gone, xp_hint, xp_gone;
	/* external pieces (allocated on the first wn_tcp_send_record_ext): the release reference
	 * of each record slot (NULL: none), and the pieces in sequence order */
	struct rte_mbuf_ext_shared_info **rec_sh;
	uint8_t *rec_fl;            /* REC_F_* of each record slot (with rec_sh) */
	uint32_t crc_pending;       /* records with REC_F_CRC */
	struct tcp_xpart *xp;
	uint32_t xp_head, xp_len;
	uint32_t xp_attach;         /* of them attached to segments (not WN_TCP_REC_COPY) */

	/* receive buffer: readable bytes then space for in-window data; rcap octets allocated
	 * (0: none yet), grown as in-window data comes up to rmax, the window's base */
	uint8_t *rbuf;
	uint32_t rcap, rhead, rlen, rmax;

	/* timers (absolute microseconds, 0 = off) */
	uint64_t t_rto, t_delack, t_persist, t_tw, t_tlp, t_ka;
	/* keepalive (RFC 9293 §3.8.4, RFC 1122 §4.2.3.6): off while ka_idle is 0 */
	uint64_t ka_idle, ka_intvl, last_rx;
	uint32_t ka_probes, ka_sent;
	uint64_t deadline;
	uint32_t slot;
	uint64_t retrans;

	struct wn_tcp_listener *listener;
	TAILQ_ENTRY(wn_tcp_conn) pend_link;
	TAILQ_ENTRY(wn_tcp_conn) wheel_link;
	TAILQ_ENTRY(wn_tcp_conn) free_link;
	TAILQ_ENTRY(wn_tcp_conn) tw_link;
	TAILQ_ENTRY(wn_tcp_conn) txw_link;
};

TAILQ_HEAD(conn_list, wn_tcp_conn);

struct wn_tcp_ctx {
	struct wn_tcp_ctx_conf conf;
	struct rte_hash *hash;
	/* connections come in chunks of TCP_CONN_CHUNK as the number in use grows (ctx.c) */
	struct wn_tcp_conn **chunks;
	uint32_t n_chunks, n_conns;
	struct conn_list free_conns;
	/* WN_TCP_F_TW_DETACH: connections that entered TIME-WAIT, to report closed at the
	 * next wn_tcp_process(); then the detached ones, oldest first (ctx.c) */
	struct conn_list tw_new, tw;
	struct conn_list pending;
	/* connections whose data waits for room in txq, oldest first (tcp_output.c) */
	struct conn_list txq_wait;
	struct conn_list dead;
	struct conn_list wheel[TCP_WHEEL_SLOTS];
	uint64_t wheel_tick;
	struct wn_tcp_listener *listeners;
	uint32_t live, syn_rcvd;
	uint64_t now;
	uint16_t next_port;
	struct rte_mbuf **txq;
	uint32_t txq_head, txq_len, txq_cap;
	uint64_t chal_sec;          /* RFC 5961 §7 rate limit: current second */
	uint32_t chal_count;        /* challenge ACKs sent in it */
	uint32_t seg_room;          /* largest TCP header+payload an mbuf of the pool holds */
	uint64_t cookie_sent_at;    /* when a SYN cookie was last sent (0: never) */
	/* mbufs taken from the pool in bulk for the segments to build */
	struct rte_mbuf *mcache[TCP_MCACHE];
	uint32_t mcache_n;
	/* the connection of the last segment received: a burst is mostly one flow's, so most
	 * segments need no hash lookup (checked against the segment's endpoints) */
	struct wn_tcp_conn *last_rx;
	struct wn_tcp_stats st;
};

/* @p n octets more (tcp_slen_add) or fewer (tcp_slen_sub) in @p c's send buffer: the
 * context's totals are what send_budget shares (wn_tcp_send_space()). */
static inline void
tcp_slen_add(struct wn_tcp_conn *c, uint32_t n)
{
	if (c->slen == 0 && n != 0)
		c->ctx->st.snd_conns++;
	c->slen += n;
	c->ctx->st.snd_bytes += n;
}

static inline void
tcp_slen_sub(struct wn_tcp_conn *c, uint32_t n)
{
	c->slen -= n;
	c->ctx->st.snd_bytes -= n;
	if (c->slen == 0 && n != 0)
		c->ctx->st.snd_conns--;
}

/* A connection's hash key: local and remote address and port. */
static inline void
tcp_key_make(struct tcp_key *k, const struct wn_tcp_endpoint *l, const struct wn_tcp_endpoint *r)
{
	memset(k, 0, sizeof(*k));
	k->family = l->addr.family;
	k->lport = l->port;
	k->rport = r->port;
	if (k->family == WN_AF_INET) {
		memcpy(k->laddr, &l->addr.v4, 4);
		memcpy(k->raddr, &r->addr.v4, 4);
	} else {
		memcpy(k->laddr, l->addr.v6, 16);
		memcpy(k->raddr, r->addr.v6, 16);
	}
}

/* Effective send MSS: both sides' MSS, what an mbuf holds, less the options. */
static inline uint32_t
tcp_emss(const struct wn_tcp_conn *c)
{
	uint32_t mss = RTE_MIN((uint32_t)c->snd.mss, (uint32_t)c->rcv.mss);
	uint32_t room = c->ctx->seg_room - TCP_HDR_LEN - TCP_MAX_OPTLEN;

	mss = RTE_MIN(mss, room);
	/* RFC 9293 §3.7.1 / RFC 6691: options on every segment reduce the payload. */
	return mss - c->snd.optlen;
}

/* ctx.c */
struct wn_tcp_conn *wn_tcp_conn_alloc(struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *l,
				   const struct wn_tcp_endpoint *r);
void wn_tcp_conn_closed(struct wn_tcp_conn *c, enum wn_tcp_close_reason why);
void wn_tcp_mark_pending(struct wn_tcp_conn *c);
void wn_tcp_established(struct wn_tcp_conn *c);
void wn_tcp_tw_enter(struct wn_tcp_conn *c);
int wn_tcp_rbuf_reserve(struct wn_tcp_conn *c, uint32_t need);
bool wn_tcp_conn_room(struct wn_tcp_ctx *ctx);
uint8_t wn_tcp_rcv_wscale(const struct wn_tcp_ctx *ctx);
uint16_t wn_tcp_rcv_mss(const struct wn_tcp_ctx *ctx, uint8_t family);

/* isn.c */
uint32_t wn_tcp_isn(const struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *l,
		 const struct wn_tcp_endpoint *r, uint64_t now);
uint32_t wn_tcp_ts_offset(const struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *l,
		       const struct wn_tcp_endpoint *r);
uint32_t wn_tcp_cookie_make(const struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *l,
			 const struct wn_tcp_endpoint *r, uint32_t peer_isn, uint32_t data,
			 uint64_t now);
int64_t wn_tcp_cookie_check(const struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *l,
			 const struct wn_tcp_endpoint *r, uint32_t peer_isn, uint32_t cookie,
			 uint64_t now);

/* input.c */
int wn_tcp_parse(struct wn_tcp_ctx *ctx, struct rte_mbuf *m, struct tcp_seg *s);
struct wn_tcp_listener *wn_tcp_listener_find(struct wn_tcp_ctx *ctx,
					  const struct wn_tcp_endpoint *l);

/* timer.c: the timer wheel */
void wn_tcp_timer_update(struct wn_tcp_conn *c);
void wn_tcp_wheel_remove(struct wn_tcp_conn *c);

/* tcp_output.c; the *_fire timers return true when the connection gave up (the caller closes it,
 * WN_TCP_CLOSE_TIMEOUT) */
void wn_tcp_output(struct wn_tcp_conn *c);
void wn_tcp_send_ack(struct wn_tcp_conn *c);
void wn_tcp_send_challenge_ack(struct wn_tcp_conn *c);
void wn_tcp_send_rst_for(struct wn_tcp_ctx *ctx, const struct tcp_seg *s);
void wn_tcp_send_synack_cookie(struct wn_tcp_ctx *ctx, const struct tcp_seg *s, uint32_t iss,
			    uint16_t mss, int wscale, bool sackp, bool ts, uint32_t tsval);
void wn_tcp_send_rst(struct wn_tcp_conn *c);
void wn_tcp_send_syn(struct wn_tcp_conn *c);
bool wn_tcp_rto_fire(struct wn_tcp_conn *c);
void wn_tcp_persist_fire(struct wn_tcp_conn *c);
bool wn_tcp_keepalive_fire(struct wn_tcp_conn *c);
void wn_tcp_keepalive_arm(struct wn_tcp_conn *c);
void wn_tcp_retransmit_una(struct wn_tcp_conn *c);
void wn_tcp_set_rto_timer(struct wn_tcp_conn *c);
void wn_tcp_tlp_arm(struct wn_tcp_conn *c);
void wn_tcp_tlp_fire(struct wn_tcp_conn *c);
void wn_tcp_txq_push(struct wn_tcp_ctx *ctx, struct rte_mbuf *m);
/** Let the connections whose data waited for room in the tx queue send, while it has room. */
void wn_tcp_txq_resume(struct wn_tcp_ctx *ctx);
/** Take @p c off the tx queue's waiters (it closes). */
void wn_tcp_txq_unwait(struct wn_tcp_conn *c);
uint32_t wn_tcp_rcv_window(const struct wn_tcp_conn *c);
uint32_t wn_tcp_flight(const struct wn_tcp_conn *c);
uint32_t wn_tcp_seg_len(struct wn_tcp_conn *c, uint32_t seq, uint32_t emss, uint32_t allowed,
		     bool *split);
void wn_tcp_sbuf_acked(struct wn_tcp_conn *c);
void wn_tcp_ext_release_all(struct wn_tcp_conn *c);
uint32_t wn_tcp_ts_now(const struct wn_tcp_conn *c);

/* sack.c */
uint32_t wn_tcp_sb_update(struct wn_tcp_conn *c, const struct tcp_seg *s);
void wn_tcp_sb_trim(struct wn_tcp_conn *c);
uint32_t wn_tcp_sb_sacked_bytes(const struct wn_tcp_conn *c);
uint32_t wn_tcp_sb_pipe(const struct wn_tcp_conn *c);
bool wn_tcp_sb_next_lost(const struct wn_tcp_conn *c, uint32_t from, struct seq_range *hole);
bool wn_tcp_sb_is_lost(const struct wn_tcp_conn *c, uint32_t seq);
int wn_tcp_ooo_add(struct wn_tcp_conn *c, uint32_t start, uint32_t end);
bool wn_tcp_ooo_covers(struct wn_tcp_conn *c, uint32_t start, uint32_t end);
void wn_tcp_dsack_note(struct wn_tcp_conn *c, uint32_t start, uint32_t end);
unsigned int wn_tcp_rcv_sack_blocks(const struct wn_tcp_conn *c, struct seq_range *out,
			     unsigned int max);

/* congestion-control helpers for the ops */
static inline uint32_t
tcp_smss(const struct wn_tcp_conn *c)
{
	return tcp_emss(c);
}

#endif /* TCP_PRIV_H */
