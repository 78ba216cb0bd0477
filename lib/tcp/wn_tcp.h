/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * warpnic per-lcore TCP (RFC 9293) with the FPDU-aligning segmenter of RFC 5044 Appendix A.
 *
 * One struct wn_tcp_ctx per lcore owns its connection table (rte_hash), timer wheel, send
 * queue and deferred-free list; nothing is shared, nothing locks. The library does no I/O:
 *
 *   wn_tcp_rx_bulk(ctx, pkts, n, now)   TCP packets from wn_net_rx_bulk (IP header first)
 *   wn_tcp_process(ctx, now)            timers, deferred output, deferred frees
 *   wn_tcp_tx_bulk(ctx, pkts, n)        IP packets for wn_net_output_bulk
 *
 * Upper layers use a socket-like API (listen/connect/send/recv/close/abort) with event
 * callbacks. Callbacks run on the owning lcore from inside rx_bulk/process and may call
 * any function of this API on the same context (including close/abort of the connection the
 * event is about); a connection's memory stays valid until after its closed event.
 *
 * Implemented: RFC 9293 state machine incl. simultaneous open/close and TIME_WAIT, RFC 5961
 * challenge ACKs, RFC 6528 ISNs, MSS / window scale / timestamps (RFC 7323) / SACK
 * (RFC 2018), RFC 6298 RTO with backoff, RFC 5681 + RFC 6582 NewReno, RFC 6675 SACK
 * recovery, RFC 8985 tail loss probes, D-SACK undo of spurious recoveries (RFC 3708),
 * undo of spurious timeouts (RFC 3522 detection by timestamps, RFC 4015 response),
 * delayed ACK, zero-window probes, bounded out-of-order queue, NewReno and CUBIC (RFC 9438)
 * behind struct wn_tcp_cc_ops, SYN backlog bound, per-context connection limit.
 */
#ifndef WN_TCP_H
#define WN_TCP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rte_mbuf.h>

#include "wn_net.h"

#ifdef __cplusplus
extern "C" {
#endif

/** rte_log type name of this library. */
#define WN_TCP_LOGTYPE_NAME "lib.wn.tcp"

/** RFC 9293 §3.3.2 connection states. */
enum wn_tcp_state {
	WN_TCP_CLOSED = 0,
	WN_TCP_LISTEN,
	WN_TCP_SYN_SENT,
	WN_TCP_SYN_RCVD,
	WN_TCP_ESTABLISHED,
	WN_TCP_FIN_WAIT_1,
	WN_TCP_FIN_WAIT_2,
	WN_TCP_CLOSE_WAIT,
	WN_TCP_CLOSING,
	WN_TCP_LAST_ACK,
	WN_TCP_TIME_WAIT,
	WN_TCP_STATE_MAX,
};

/** @return the RFC name of @p s ("ESTABLISHED"...). Any thread. */
const char *wn_tcp_state_name(enum wn_tcp_state s);

/** Segmentation mode of a connection's send side. */
enum wn_tcp_mode {
	/** Plain byte stream: segments are cut anywhere (tests, MPA startup phase). */
	WN_TCP_MODE_STREAM = 0,
	/**
	 * Record mode (RFC 5044 Appendix A): data is appended as whole records (FPDUs); every
	 * segment starts on a record boundary and packs whole records up to the EMSS;
	 * retransmissions keep the same boundaries.
	 */
	WN_TCP_MODE_RECORD = 1,
};

/** Why a connection ended (argument of the closed event). */
enum wn_tcp_close_reason {
	WN_TCP_CLOSE_NORMAL = 0,  /**< orderly close (FIN both ways, TIME_WAIT/LAST_ACK done) */
	WN_TCP_CLOSE_RESET,       /**< peer sent an acceptable RST */
	WN_TCP_CLOSE_ABORT,       /**< local wn_tcp_abort */
	WN_TCP_CLOSE_TIMEOUT,     /**< retransmission/SYN/keepalive limit reached */
	WN_TCP_CLOSE_REFUSED,     /**< RST in answer to our SYN */
};

struct wn_tcp_ctx;
struct wn_tcp_conn;
struct wn_tcp_listener;

/**
 * Event callbacks of a connection (all optional). @p arg is the connection's user pointer
 * (wn_tcp_conn_set_arg, or the listener's/connect's arg until changed).
 */
struct wn_tcp_cb {
	/**
	 * A connection reached ESTABLISHED: an accepted one (from a listener) or a connect.
	 * Return non-zero from an accepted connection to refuse it (it is reset).
	 */
	int (*established)(struct wn_tcp_conn *c, void *arg);
	/** New in-order data can be read (wn_tcp_recv / wn_tcp_recv_peek). */
	void (*recv)(struct wn_tcp_conn *c, void *arg);
	/**
	 * Optional: the in-order octets of one segment, @p data and @p len where they lie (the
	 * received mbuf), before TCP copies them into the receive buffer: what the buffer holds
	 * (wn_tcp_recv_peek()) comes before them. The upper layer may take octets in place, from
	 * the front: first the buffer's (wn_tcp_recv_consume()), then these. @return how many
	 * of @p data it took; TCP appends the rest to the receive buffer and calls recv() when it
	 * did. Offered while no out-of-order data is queued (that goes through the buffer).
	 */
	uint32_t (*recv_seg)(struct wn_tcp_conn *c, void *arg, const uint8_t *data, uint32_t len);
	/**
	 * Optional: a segment arrived above RCV.NXT (a hole before it) and was queued; its new
	 * octets [@p seq, @p seq + @p len) are at @p data (the receive buffer, contiguous; a
	 * segment that wraps the buffer is not reported). They are delivered again through
	 * recv() once the hole is filled. For an upper layer that can place early (RFC 5044
	 * Markers). Must not read, consume or send on @p c.
	 */
	void (*recv_ooo)(struct wn_tcp_conn *c, void *arg, uint32_t seq, const uint8_t *data,
			 uint32_t len);
	/** The peer sent FIN: no more data will arrive (after what is readable now). */
	void (*eof)(struct wn_tcp_conn *c, void *arg);
	/** @p acked bytes left the send queue; wn_tcp_send_space() grew. */
	void (*sent)(struct wn_tcp_conn *c, void *arg, uint32_t acked);
	/** The EMSS (largest payload per segment) changed, e.g. after the handshake. */
	void (*emss)(struct wn_tcp_conn *c, void *arg, uint16_t emss);
	/** Last event: the connection is gone after this returns. */
	void (*closed)(struct wn_tcp_conn *c, void *arg, enum wn_tcp_close_reason why);
};

/** Congestion control algorithm: a small ops table (RFC 5681 style hooks). */
struct wn_tcp_cc_ops {
	const char *name;
	/** Connection established: set cwnd/ssthresh (RFC 5681 §3.1 IW). */
	void (*init)(struct wn_tcp_conn *c);
	/** @p acked new bytes acknowledged outside recovery (slow start / avoidance). */
	void (*on_ack)(struct wn_tcp_conn *c, uint32_t acked, uint64_t now);
	/** Loss detected by duplicate ACKs / SACK: entering fast recovery; set ssthresh. */
	void (*on_loss)(struct wn_tcp_conn *c, uint64_t now);
	/** Fast recovery ended (RFC 6582 full ACK). */
	void (*on_recovery_end)(struct wn_tcp_conn *c, uint64_t now);
	/** Retransmission timeout (RFC 5681 §3.1 eq. 4, cwnd = LW). */
	void (*on_rto)(struct wn_tcp_conn *c, uint64_t now);
	/** Per-connection private state size (<= WN_TCP_CC_PRIV_SIZE). */
	uint32_t priv_size;
};

/** Bytes of per-connection congestion-control state available to an algorithm. */
#define WN_TCP_CC_PRIV_SIZE 64

/** NewReno (RFC 5681 + RFC 6582). */
extern const struct wn_tcp_cc_ops wn_tcp_cc_newreno;
/** CUBIC (RFC 9438). */
extern const struct wn_tcp_cc_ops wn_tcp_cc_cubic;

/** Feature flags of a context (defaults: all on). */
#define WN_TCP_F_SACK (1u << 0)       /**< offer/accept SACK (RFC 2018) */
#define WN_TCP_F_WSCALE (1u << 1)     /**< offer/accept window scale (RFC 7323 §2) */
#define WN_TCP_F_TIMESTAMPS (1u << 2) /**< offer/accept timestamps (RFC 7323 §3) */
#define WN_TCP_F_SYNCOOKIES (1u << 3) /**< SYN cookies (RFC 4987 §3.6) once the SYN backlog
				       *   is full; without, such SYNs are dropped */
#define WN_TCP_F_NODELAY (1u << 4)    /**< do not wait (Nagle off); default on */
/**
 * A connection entering TIME-WAIT is reported closed (WN_TCP_CLOSE_NORMAL, after its EOF)
 * and keeps no buffers, as a kernel's TIME-WAIT entry: its 4-tuple stays taken for 2 MSL
 * and a repeated FIN is still ACKed. With the connection table full the oldest such entry
 * ends early to make room, and an active open on a 4-tuple in TIME-WAIT ends that entry
 * (RFC 6191: timestamps and the clock-driven ISN of RFC 6528 keep the new incarnation
 * apart from the old one's segments). Off by default: the closed callback then comes at
 * the end of TIME-WAIT.
 */
#define WN_TCP_F_TW_DETACH (1u << 5)
#define WN_TCP_F_DEFAULTS (WN_TCP_F_SACK | WN_TCP_F_WSCALE | WN_TCP_F_TIMESTAMPS | \
			   WN_TCP_F_SYNCOOKIES | WN_TCP_F_NODELAY)

/** Configuration of a per-lcore context; zero fields take the stated default. */
struct wn_tcp_ctx_conf {
	int socket_id;              /**< NUMA socket (SOCKET_ID_ANY ok) */
	struct rte_mempool *pool;   /**< mbufs for outgoing segments (required) */
	uint32_t max_conns;         /**< connection limit incl. TIME_WAIT/SYN_RCVD (0: 1024) */
	uint32_t max_listeners;     /**< (0: 16) */
	uint32_t syn_backlog;       /**< SYN_RCVD connections at most (0: max_conns / 4) */
	uint32_t sndbuf;            /**< send buffer bytes per connection (0: 256 KiB) */
	uint32_t rcvbuf;            /**< receive buffer bytes per connection (0: 256 KiB) */
	uint32_t send_budget;       /**< send buffer octets of all connections together, shared
				     *   equally among those holding data, never less than two
				     *   segments each (0: sndbuf per connection only) */
	uint16_t mtu;               /**< L3 MTU for the MSS we advertise (0: 1500) */
	uint32_t flags;             /**< WN_TCP_F_* (0: WN_TCP_F_DEFAULTS) */
	const struct wn_tcp_cc_ops *cc; /**< (NULL: NewReno) */
	uint8_t isn_secret[16];     /**< RFC 6528 F() key (all zero: random) */
	uint32_t rto_init_us;       /**< RFC 6298 §2.1 initial RTO (0: 1 s) */
	uint32_t rto_min_us;        /**< RFC 6298 §2.4 lower bound (0: 200 ms, RFC asks 1 s) */
	uint32_t rto_max_us;        /**< (0: 60 s) */
	uint32_t max_retries;       /**< retransmissions before giving up (0: 12) */
	uint32_t syn_retries;       /**< SYN retransmissions (0: 6) */
	uint32_t delack_us;         /**< delayed ACK timer (0: 40 ms; RFC 9293 < 0.5 s) */
	uint32_t msl_us;            /**< MSL; TIME_WAIT lasts 2*MSL (0: 30 s) */
	uint32_t fin_wait2_us;      /**< FIN-WAIT-2 without the peer's FIN closes with
				     *   WN_TCP_CLOSE_TIMEOUT after this (0: 60 s, Linux's
				     *   tcp_fin_timeout) */
	uint32_t ooo_max;           /**< out-of-order intervals kept (0: 16) */
	uint16_t ephemeral_lo;      /**< local port range for connect (0: 32768) */
	uint16_t ephemeral_hi;      /**< (0: 60999) */
	uint32_t challenge_ack_limit; /**< RFC 5961 §7 challenge ACKs per second (0: 1000) */
	uint64_t keepalive_idle_us;   /**< keepalive of new connections after this much silence
				       *   (0: off, the default; RFC 1122 §4.2.3.6) */
	uint32_t keepalive_intvl_us;  /**< between unanswered probes (0: 75 s) */
	uint32_t keepalive_probes;    /**< unanswered probes before giving up (0: 9) */
};

/** Per-context counters; every drop has one. */
struct wn_tcp_stats {
	uint64_t rx_segs;           /**< segments given to rx_bulk */
	uint64_t rx_drop_short;     /**< truncated IP/TCP header, bad data offset */
	uint64_t rx_drop_cksum;     /**< bad TCP checksum */
	uint64_t rx_drop_opts;      /**< malformed options */
	uint64_t rx_drop_noconn;    /**< no connection or listener (RST sent unless RST) */
	uint64_t rx_drop_badflags;  /**< SYN+FIN, no ACK in synchronized state, etc. */
	uint64_t rx_drop_unacceptable; /**< failed the RFC 9293 §3.10.7.4 acceptability test */
	uint64_t rx_drop_paws;      /**< RFC 7323 §5 PAWS */
	uint64_t rx_drop_ooo_full;  /**< out-of-order segment with no free interval */
	uint64_t rx_drop_rcvbuf;    /**< data beyond the receive window (trimmed) */
	uint64_t rx_drop_ack;       /**< ACK of data never sent (RFC 5961 §5) */
	uint64_t rx_drop_backlog;   /**< SYN over a full backlog: not queued (dropped, or
				     *   answered with a SYN cookie with WN_TCP_F_SYNCOOKIES) */
	uint64_t syncookies_sent;   /**< SYN-ACKs carrying a SYN cookie */
	uint64_t syncookies_ok;     /**< connections opened by an ACK returning a cookie */
	uint64_t syncookies_failed; /**< ACKs to a listener whose cookie did not check */
	uint64_t rx_drop_conn_limit; /**< SYN dropped: max_conns reached */
	uint64_t rx_drop_family;    /**< not IPv4/IPv6 TCP */
	uint64_t rx_dupack;         /**< duplicate ACKs */
	uint64_t rx_ooo;            /**< out-of-order segments queued */
	uint64_t rx_dup_data;       /**< fully duplicate data segments */
	uint64_t rx_rst;            /**< acceptable RSTs */
	uint64_t challenge_acks;    /**< RFC 5961 challenge ACKs sent */
	uint64_t challenge_acks_limited; /**< challenge ACKs suppressed by the RFC 5961 §7 limit */
	uint64_t rx_drop_state;     /**< data after the peer's FIN, RST to a listener */
	uint64_t rx_inplace_bytes;  /**< in-order octets the upper layer took from the segment
				     *   (recv_seg), never copied into the receive buffer */
	uint64_t tx_segs;           /**< segments built */
	uint64_t tx_data_bytes;     /**< payload bytes sent (incl. retransmissions) */
	uint64_t tx_retrans;        /**< retransmitted segments (any cause) */
	uint64_t tx_rst;            /**< RSTs sent */
	uint64_t tx_drop_nombuf;    /**< mempool empty */
	uint64_t tx_drop_queue;     /**< context tx queue full (an ACK or control segment) */
	uint64_t tx_queue_waits;    /**< data held back: the context tx queue was full */
	uint64_t rto_fired;         /**< retransmission timeouts */
	uint64_t fast_retrans;      /**< fast retransmits (entering recovery) */
	uint64_t rxt_lost;          /**< retransmissions found lost by SACK (sent again) */
	uint64_t tlp_probes;        /**< RFC 8985 tail loss probes sent */
	uint64_t tlp_recovered;     /**< ... that repaired a loss (congestion response taken) */
	uint64_t undo_spurious;     /**< recoveries undone: every retransmission D-SACKed */
	uint64_t rto_spurious;      /**< timeouts undone: the ACK that followed was for the
				     *   original transmission (RFC 3522 timestamps) */
	uint64_t zwp_sent;          /**< zero-window probes */
	uint64_t delack_fired;      /**< delayed ACK timer expirations */
	uint64_t keepalive_probes;  /**< keepalive probes sent */
	uint64_t keepalive_timeouts; /**< connections closed by unanswered keepalives */
	uint64_t conns_opened;      /**< connections created (active + passive) */
	uint64_t conns_closed;      /**< connections freed */
	uint64_t conns_timeout;     /**< given up after retries */
	uint64_t tw_recycled;       /**< TIME-WAIT entries ended early: the table was full, or
				     *   a new connection took their 4-tuple (WN_TCP_F_TW_DETACH) */
	uint64_t buf_bytes;         /**< gauge: send and receive buffer octets allocated now
				     *   (they grow with the data held, up to sndbuf/rcvbuf) */
	uint64_t snd_bytes;         /**< gauge: octets held in all send buffers (unsent and
				     *   unacknowledged), what send_budget bounds */
	uint64_t snd_conns;         /**< gauge: connections holding any */
	uint64_t record_split;      /**< records larger than EMSS that had to be split */
	uint64_t tx_ext_segs;       /**< segments carrying external (zero-copy) octets */
	uint64_t tx_ext_bytes;      /**< payload octets attached from external memory */
	uint64_t tx_ref_bytes;      /**< external octets copied into segments (WN_TCP_REC_COPY) */
	uint64_t rec_crc;           /**< record CRC32c trailers computed (WN_TCP_REC_CRC32C) */
	uint64_t ext_records;       /**< records appended with wn_tcp_send_record_ext */
	uint64_t ext_released;      /**< ... whose reference TCP dropped (ACKed or closed) */
};

/** Connection endpoint. */
struct wn_tcp_endpoint {
	struct wn_ip_addr addr;
	uint16_t port;              /**< host byte order */
};

/** Snapshot of a connection's TCB for tests and telemetry. */
struct wn_tcp_info {
	enum wn_tcp_state state;
	struct wn_tcp_endpoint local, remote;
	uint32_t iss, irs;
	uint32_t snd_una, snd_nxt, snd_max, snd_wnd;
	uint32_t rcv_nxt, rcv_wnd;
	uint8_t snd_wscale, rcv_wscale;
	bool ts_ok, sack_ok;
	uint16_t mss;               /**< peer's MSS (send side) */
	uint16_t emss;              /**< payload per segment after options */
	uint32_t cwnd, ssthresh;
	uint32_t srtt_us, rttvar_us, rto_us;
	uint32_t backoff;           /**< RTO backoff exponent */
	bool in_recovery;
	uint8_t dupthresh;          /**< DupThresh (3, raised after spurious recoveries) */
	uint32_t sacked_bytes;      /**< scoreboard: bytes SACKed above snd_una */
	uint32_t sack_blocks;       /**< scoreboard intervals */
	uint32_t ooo_intervals;     /**< receive side out-of-order intervals */
	uint32_t snd_queued;        /**< bytes in the send buffer (unacked + unsent) */
	uint32_t rcv_queued;        /**< readable bytes */
	uint32_t snd_alloc, rcv_alloc; /**< buffer octets allocated (grown with the data held) */
	enum wn_tcp_mode mode;
	uint64_t retrans;           /**< retransmitted segments */
};

/**
 * Create a per-lcore context.
 * @param conf  configuration; zero fields take their defaults, conf->pool is required.
 * @return the context, or NULL with errno EINVAL (no pool, bad conf) or ENOMEM.
 * Thread safety: any thread; the context is then used by one lcore only.
 */
struct wn_tcp_ctx *wn_tcp_ctx_create(const struct wn_tcp_ctx_conf *conf);

/**
 * Free a context: every connection is dropped silently (no RST, no callbacks) and every
 * mbuf is freed; references to external record memory are dropped (wn_tcp_send_record_ext,
 * whose release callbacks may run). NULL is a no-op. Owning lcore.
 * @param ctx  the context.
 */
void wn_tcp_ctx_free(struct wn_tcp_ctx *ctx);

/**
 * Feed TCP packets (IP header at the data offset, as wn_net_rx_bulk leaves them).
 * Every mbuf is consumed.
 * @param ctx   the context.
 * @param pkts  the packets.
 * @param n     how many.
 * @param now   current time in microseconds (monotonic). @return how many were accepted by a connection or listener.
 * Owning lcore.
 */
uint16_t wn_tcp_rx_bulk(struct wn_tcp_ctx *ctx, struct rte_mbuf **pkts, uint16_t n,
			uint64_t now);

/**
 * Run expired timers (RTO, delayed ACK, persist, TIME_WAIT, SYN), pending output and
 * deferred frees. Call once per loop iteration. Owning lcore.
 * @param ctx  the context.
 * @param now  current time in microseconds (monotonic, never going back).
 */
void wn_tcp_process(struct wn_tcp_ctx *ctx, uint64_t now);

/**
 * When wn_tcp_process() has timer work next, for a caller that sleeps when idle: the start
 * of the first timer-wheel tick (TCP_TICK_US, 1 ms) holding an armed timer, when
 * wn_tcp_process() runs it.
 * @return absolute microseconds (may be now or past: call wn_tcp_process()), or UINT64_MAX
 *   when no timer is armed and no output is pending. Owning lcore.
 */
uint64_t wn_tcp_next_timer(const struct wn_tcp_ctx *ctx);

/**
 * Take up to @p n queued segments as IP packets (for wn_net_output_bulk).
 * @param ctx   the context.
 * @param pkts  where to store them.
 * @param n     room in @p pkts.
 * @return how many were stored in @p pkts. Owning lcore.
 */
uint16_t wn_tcp_tx_bulk(struct wn_tcp_ctx *ctx, struct rte_mbuf **pkts, uint16_t n);

/**
 * Listen on @p local (address of family WN_AF_INET/6; all-zero address: any of that family).
 * Accepted connections start with @p cb and @p arg.
 * @param ctx    the context.
 * @param local  local address and port (port != 0).
 * @param cb     callbacks of accepted connections (may be NULL).
 * @param arg    their initial user pointer.
 * @return the listener, or NULL with errno EINVAL, EADDRINUSE, ENOSPC. Owning lcore.
 */
struct wn_tcp_listener *wn_tcp_listen(struct wn_tcp_ctx *ctx,
				      const struct wn_tcp_endpoint *local,
				      const struct wn_tcp_cb *cb, void *arg);

/** Stop listening (connections already accepted live on). @return 0. Owning lcore. */
int wn_tcp_unlisten(struct wn_tcp_listener *l);

/**
 * Open a connection (SYN sent on the next wn_tcp_tx_bulk). @p local port 0 picks an
 * ephemeral port; @p local address must be set (see wn_net_if_src_addr).
 * @param ctx     the context.
 * @param local   local endpoint.
 * @param remote  remote endpoint (same family, port != 0).
 * @param cb      callbacks (may be NULL).
 * @param arg     user pointer passed to them.
 * @return the connection in SYN_SENT, or NULL with errno EINVAL, EADDRINUSE (4-tuple
 * taken or no free port), ENOSPC (connection limit), ENOMEM. Owning lcore.
 */
struct wn_tcp_conn *wn_tcp_connect(struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *local,
				   const struct wn_tcp_endpoint *remote,
				   const struct wn_tcp_cb *cb, void *arg);

/**
 * Open a connection with a chosen initial send sequence number (tests: wraparound).
 * Otherwise as wn_tcp_connect.
 */
struct wn_tcp_conn *wn_tcp_connect_iss(struct wn_tcp_ctx *ctx,
				       const struct wn_tcp_endpoint *local,
				       const struct wn_tcp_endpoint *remote,
				       const struct wn_tcp_cb *cb, void *arg, uint32_t iss);

/** Set the user pointer passed to callbacks. Owning lcore. */
void wn_tcp_conn_set_arg(struct wn_tcp_conn *c, void *arg);

/**
 * Keepalive of one connection (RFC 9293 §3.8.4, RFC 1122 §4.2.3.6): after @p idle_us with
 * nothing received and nothing outstanding, send an ACK probe (SEG.SEQ = SND.UNA - 1, no
 * data) every @p intvl_us; after @p probes unanswered ones the connection closes with
 * WN_TCP_CLOSE_TIMEOUT. Any segment from the peer resets it. @p idle_us 0 turns it off.
 * @return 0 or -EINVAL (intvl_us or probes 0 with idle_us set). Owning lcore.
 */
int wn_tcp_set_keepalive(struct wn_tcp_conn *c, uint64_t idle_us, uint32_t intvl_us,
			 uint32_t probes);

/** Replace the callbacks (e.g. when MPA takes over). Owning lcore. */
void wn_tcp_conn_set_cb(struct wn_tcp_conn *c, const struct wn_tcp_cb *cb);

/** @return the user pointer. Owning lcore. */
void *wn_tcp_conn_arg(const struct wn_tcp_conn *c);

/** @return the connection's context. Owning lcore. */
struct wn_tcp_ctx *wn_tcp_conn_ctx(const struct wn_tcp_conn *c);

/**
 * Switch segmentation mode. Switching to record mode takes effect for data appended
 * afterwards; bytes already queued in stream mode are sent as they are.
 * @return 0 or -EINVAL. Owning lcore.
 */
int wn_tcp_set_mode(struct wn_tcp_conn *c, enum wn_tcp_mode mode);

/**
 * Queue stream bytes (stream mode). Sending starts in ESTABLISHED/CLOSE_WAIT; bytes may be
 * queued in SYN_SENT/SYN_RCVD.
 * @param c    the connection.
 * @param buf  the bytes (copied).
 * @param len  how many.
 * @return bytes accepted (0..len, limited by wn_tcp_send_space), or -ENOTCONN (closed or
 * after close), -EINVAL (record mode). Owning lcore.
 */
int wn_tcp_send(struct wn_tcp_conn *c, const void *buf, uint32_t len);

/**
 * Append one record (record mode) gathered from @p iov: all or nothing. The record starts
 * at wn_tcp_next_seq() as read just before this call.
 * @param c       the connection.
 * @param iov     the pieces (copied).
 * @param iovcnt  how many pieces.
 * @return 0, -ENOBUFS (send space or record slots short: retry after a sent event),
 * -EMSGSIZE (longer than the current EMSS), -ENOTCONN, -EINVAL. Owning lcore.
 */
int wn_tcp_send_recordv(struct wn_tcp_conn *c, const struct iovec *iov, unsigned int iovcnt);

/** One piece of a record for wn_tcp_send_record_ext(). */
struct wn_tcp_part {
	const void *base;           /**< first octet */
	uint32_t len;               /**< octets (a piece of 0 octets is skipped) */
	bool ext;                   /**< true: referenced in place; false: copied now */
	rte_iova_t iova;            /**< IOVA of @c base for an external piece (RTE_BAD_IOVA:
				     *   unknown; fine for ports that copy, as memif/af_packet) */
};

/**
 * Append one record (record mode) whose external pieces TCP references instead of copying
 * (zero-copy transmit). Their octets take send-buffer space like copied ones; every segment
 * that carries some is an mbuf chain: the headers and copied octets in ordinary mbufs, each
 * external run attached with rte_pktmbuf_attach_extbuf() to @p sh. Retransmissions (RTO,
 * fast retransmit, SACK, TLP) and re-segmentation at any offset attach the same memory again.
 *
 * Release: @p sh counts references (rte_mbuf_ext_refcnt_*). On success TCP takes over one
 * reference the caller counted in @p sh (e.g. its refcnt set to 1 for one record), each
 * segment mbuf carrying its memory adds one, and TCP drops its own when SND.UNA passes the
 * record's end, or when the connection closes, aborts, times out or the context is freed.
 * @c sh->free_cb(addr, sh->fcb_opaque) therefore runs exactly once, when both TCP and every
 * mbuf (possibly still held by a PMD) are done: on the owning lcore from wn_tcp_rx_bulk,
 * wn_tcp_process, wn_tcp_abort or wn_tcp_ctx_free, or on whatever thread frees the last mbuf.
 * Until then the external memory must stay valid (a NIC may still read it by DMA); its octets
 * must stay unchanged until SND.UNA passes the record (wn_tcp_snd_una(), the sent event):
 * after that a segment still carrying them reaches a peer that has them already and
 * discards them (or, its checksum no longer matching, drops it as lost).
 * @param c       the connection.
 * @param parts   the pieces in order.
 * @param n       how many.
 * @param sh      release reference; required when a piece is external, else ignored.
 * @return 0 (the reference is TCP's now), or as wn_tcp_send_recordv (-ENOBUFS also when the
 * external-piece slots are short) with @p sh untouched. Owning lcore.
 */
int wn_tcp_send_record_ext(struct wn_tcp_conn *c, const struct wn_tcp_part *parts,
			   unsigned int n, struct rte_mbuf_ext_shared_info *sh);

/**
 * Record flag of wn_tcp_send_record_ref(): its external pieces are copied into each segment
 * that carries them (one copy, from where they live) instead of attached: a plain mbuf per
 * segment, for ports where copying a segment costs less than a chain. TCP still only
 * references them (the release rules of wn_tcp_send_record_ext() hold).
 */
#define WN_TCP_REC_COPY (1u << 0)
/**
 * Record flag of wn_tcp_send_record_ref(): its last 4 octets (which must not be external)
 * are computed when the record is first transmitted, as a NIC's framing offload would: the
 * CRC32c (Castagnoli; the register's complement, least significant octet first, as iSCSI and
 * MPA send it) of every octet before them, summed over the segment just built while it is in
 * cache. Retransmissions carry the same value.
 */
#define WN_TCP_REC_CRC32C (1u << 1)

/**
 * wn_tcp_send_record_ext() with WN_TCP_REC_* @p flags.
 * @return as wn_tcp_send_record_ext(); -EINVAL also for WN_TCP_REC_CRC32C on a record
 * shorter than 5 octets or whose last 4 are external. Owning lcore.
 */
int wn_tcp_send_record_ref(struct wn_tcp_conn *c, const struct wn_tcp_part *parts,
			   unsigned int n, struct rte_mbuf_ext_shared_info *sh, uint32_t flags);

/** Append one contiguous record; as wn_tcp_send_recordv. */
int wn_tcp_send_record(struct wn_tcp_conn *c, const void *buf, uint32_t len);

/**
 * Room for one record of at most @p len octets, to be written in place in the send buffer
 * and appended with wn_tcp_record_commit() before anything else is sent on @p c (a framer
 * builds it there instead of in a buffer of its own that would be copied).
 * @return where to write, or NULL: no room for it now, or the room would wrap around the
 * ring (then append it with wn_tcp_send_record()); @p *err says which (-ENOBUFS, -EMSGSIZE,
 * -ENOTCONN, -EINVAL as wn_tcp_send_recordv, 0 for a wrap). Owning lcore.
 */
uint8_t *wn_tcp_record_claim(struct wn_tcp_conn *c, uint32_t len, int *err);

/**
 * Append the record of @p len octets (at most what was claimed, at least 1) written where
 * wn_tcp_record_claim() said. Owning lcore.
 */
void wn_tcp_record_commit(struct wn_tcp_conn *c, uint32_t len);

/**
 * @return the TCP sequence number at which the next appended byte (the next record in
 * record mode) will start; MPA markers (RFC 5044 §4.2) are placed relative to it.
 * Owning lcore.
 */
uint32_t wn_tcp_next_seq(const struct wn_tcp_conn *c);

/**
 * @return SND.UNA: every octet before it is acknowledged by the peer (and dropped from the
 * send buffer). Owning lcore.
 */
uint32_t wn_tcp_snd_una(const struct wn_tcp_conn *c);

/**
 * @return the octets @p c may append now: free send-buffer space, and with a send_budget
 * no more than its share of it (the budget over the connections holding data, two
 * segments at least). A connection held back by its share holds data, so its own ACKs
 * (the sent() callback) say when to try again. Owning lcore.
 */
uint32_t wn_tcp_send_space(const struct wn_tcp_conn *c);

/** @return the current EMSS: payload bytes a segment can carry after options. Owning lcore. */
uint16_t wn_tcp_emss(const struct wn_tcp_conn *c);

/**
 * Copy up to @p len in-order bytes out of the receive buffer; opens the window.
 * @param c    the connection.
 * @param buf  destination.
 * @param len  its size.
 * @return bytes copied (0 if none), or -ENOTCONN after the connection is gone. Owning lcore.
 */
int wn_tcp_recv(struct wn_tcp_conn *c, void *buf, uint32_t len);

/**
 * Zero-copy read: point @p data at the first contiguous readable run.
 * @return its length (0 if nothing readable). Owning lcore.
 */
uint32_t wn_tcp_recv_peek(struct wn_tcp_conn *c, const uint8_t **data);

/**
 * Zero-copy read of everything readable: the receive buffer is a ring, so up to two runs.
 * @return how many of @p v (0, 1 or 2) were filled. Owning lcore.
 */
unsigned int wn_tcp_recv_peekv(struct wn_tcp_conn *c, struct iovec v[2]);

/** Consume @p len bytes after wn_tcp_recv_peek. @return 0 or -EINVAL. Owning lcore. */
int wn_tcp_recv_consume(struct wn_tcp_conn *c, uint32_t len);

/** @return readable bytes. Owning lcore. */
uint32_t wn_tcp_recv_avail(const struct wn_tcp_conn *c);

/** @return the receive buffer's size: the most octets it can ever hold. Owning lcore. */
uint32_t wn_tcp_recv_cap(const struct wn_tcp_conn *c);

/**
 * Orderly close (RFC 9293 §3.10.4): FIN after queued data. The connection lives until its
 * closed event. @return 0, or -ENOTCONN if already closing. Owning lcore.
 */
int wn_tcp_close(struct wn_tcp_conn *c);

/**
 * Abort (RFC 9293 §3.10.5): send RST, drop queues, closed event (WN_TCP_CLOSE_ABORT)
 * is delivered before this returns. Owning lcore.
 */
void wn_tcp_abort(struct wn_tcp_conn *c);

/** @return the connection's state. Owning lcore. */
enum wn_tcp_state wn_tcp_conn_state(const struct wn_tcp_conn *c);

/** Fill @p info with a TCB snapshot. Owning lcore. */
void wn_tcp_conn_info(const struct wn_tcp_conn *c, struct wn_tcp_info *info);

/** Copy the counters. Owning lcore. */
void wn_tcp_stats_get(const struct wn_tcp_ctx *ctx, struct wn_tcp_stats *st);

/** @return live connections (all states but LISTEN). Owning lcore. */
uint32_t wn_tcp_conn_count(const struct wn_tcp_ctx *ctx);

/**
 * Software steering: the queue/lcore index in [0, n) for a flow, the Toeplitz hash of
 * (remote addr, local addr, remote port, local port) with the default RSS key, so it
 * matches what a NIC's RSS would choose for the incoming direction.
 * Thread safety: pure; any thread.
 */
uint32_t wn_tcp_flow_steer(const struct wn_tcp_endpoint *local,
			   const struct wn_tcp_endpoint *remote, uint32_t n);

/** Registered rte_log type of lib.wn.tcp. */
extern int wn_tcp_logtype;

#ifdef __cplusplus
}
#endif

#endif /* WN_TCP_H */
