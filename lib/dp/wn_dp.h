/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The warpnic dataplane as a library: run-to-completion "shards", one per lcore, each owning
 * one port queue, its own TCP/IP stack (lib/net, lib/tcp), its two lower layers (MPA over
 * TCP, lib/mpa; DDP over SCTP, lib/sctp; both through lib/llp, the one a connection uses
 * chosen per connection: the client's, else wn_dp_conf @c llp), its iWARP connections
 * (lib/cm) and the QP engines of those connections (lib/rnic). A connection lives on the
 * shard wn_tcp_flow_steer() picks for its 4-tuple (SCTP's ports as TCP's); frames that
 * arrive on another shard's queue are handed over on that shard's ring
 * (software steering: memif and many vdevs have no RSS), ARP/ND frames are copied to every
 * shard. Shard 0 takes the control thread's messages (lib/server, wn_server_dp.h) and
 * dispatches them: objects (CQ, SRQ, QP) live in a table shared by the shards, a QP's messages
 * go to the shard of its connection, listeners exist on every shard.
 *
 * One iteration of a shard (wn_dp_poll()):
 *
 *   rx_burst → steer → wn_net → wn_tcp → lower layer (MPA startup / deframer) → wn_rnic_rx
 *                             → (IP protocol 132) wn_sctp_input → usrsctp → wn_rnic_rx
 *   control messages → lib/cm; SQ rings → wn_rnic_tx_poll → wn_llp_send (FPDU, CRC;
 *   or a DATA chunk) → TCP records → wn_tcp_tx_bulk (wn_sctp_tx_bulk) → wn_net → tx_burst
 *
 * wn_dp_run() loops over it with the idle policy; an application that runs its own loop
 * calls wn_dp_start(), then wn_dp_poll() as often as it likes, then wn_dp_stop(), all on the
 * shard's lcore (wn_dp_poll_rx() and wn_dp_poll_tx() are its two halves, with the
 * application's step between them: wn_dp_embed.h). wn_node.h starts a whole dataplane the
 * way warpnicd does (port, control thread, shards).
 *
 * Thread safety: a shard's state is used by its lcore only; the object table (rte_hash with
 * reader-writer concurrency) is written by shard 0 only; CQ/SRQ structures are reference
 * counted (atomics) and their rings locked when several shards run; wn_dp_create/free run on
 * the main lcore before/after the loops; the telemetry snapshot has a mutex.
 */
#ifndef WN_DP_H
#define WN_DP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "wn_mem.h"
#include "wn_net.h"
#include "wn_port.h"
#include "wn_queue.h"

/* The shard's TCP send budget warpnicd and warpnic-perf use unless told: what a few dozen
 * connections keep in flight on a memif or a NIC at tens of Gbit/s, small enough to stay in
 * a core's L2 cache with the mbufs (docs/performance.md, "QPs") */
#define WN_DP_TX_BUDGET_DEFAULT (128u * 1024)

#ifdef __cplusplus
extern "C" {
#endif

/** Most dataplane lcores (shards). */
#define DP_MAX_SHARDS 16

struct wn_dp;
struct wn_dp_group;

/**
 * The port's link as the shards see it, kept by whoever starts the port (wn_node.h: a
 * port whose peer is absent comes up with the link down, like a NIC without a cable, and
 * is started when the peer appears).
 */
struct wn_dp_link {
	uint32_t up;          /**< shards poll and transmit only while non-zero (atomic) */
	uint64_t ups;         /**< times the link came up (the port started, or its link did) */
	uint64_t downs;       /**< times it went down */
	uint64_t starts_failed; /**< starts refused while the peer was absent */
	uint64_t restarts;    /**< stops and starts to reconnect to a peer that came back */
};

/** What an idle lcore does in wn_dp_run() (warpnicd --idle). */
enum wn_dp_idle {
	/**
	 * Shared cores (the default): after idle_spin_us without work the lcore sleeps until
	 * its bell rings (a client posted to an SQ it serves, the control thread or another
	 * lcore gave it work), its port queue's Rx interrupt fires, or a timer is due; a port
	 * without Rx interrupts makes it nap at most idle_us.
	 */
	WN_DP_IDLE_SLEEP = 0,
	/** Dedicated cores: poll without pause. */
	WN_DP_IDLE_POLL = 1,
};

/**
 * Client regions a port that reads frames by DMA may send in place (zero-copy transmit). Whoever
 * maps regions for the port's device keeps it (lib/node); the shards only read it.
 */
struct wn_dp_dma_map {
	bool needed;                  /**< the port reads client memory by DMA */
	bool usable;                  /**< ... and regions can be mapped for it */
	bool tx_cleanup;              /**< the PMD frees sent mbufs on demand */
	uint16_t port;                /**< the port whose device DMAs (under a wrapper's face) */
	uint32_t cap;                 /**< STag indexes in @c gen */
	uint32_t *gen;                /**< by STag index: != 0 while mapped (atomic) */
};

/** Dataplane configuration (from the command line / config file). */
struct wn_dp_conf {
	uint16_t port_id;
	struct rte_mempool *pool;
	uint16_t mtu;
	uint64_t tx_offload_capa, rx_offload_capa;
	/** TCP checksums without offload (0: WN_NET_CKSUM_AUTO, local on net_memif) */
	enum wn_net_cksum cksum;
	uint32_t n_addrs;
	struct wn_ip_addr addrs[WN_NETIF_MAX_ADDRS];
	uint8_t prefix[WN_NETIF_MAX_ADDRS];
	bool has_gw;
	struct wn_ip_addr gw;
	struct rte_ring *to_dp, *to_ctl;
	int ctl_efd;                  /**< eventfd of the control thread */
	struct wn_mem_table *mem;
	struct rte_rcu_qsbr *qs;      /**< QSBR of lib/mem; the lcore is thread 0 */
	struct wn_pcap *pcap;         /**< NULL: no capture */
	uint8_t idle;                 /**< enum wn_dp_idle */
	uint32_t idle_us;             /**< longest nap without an Rx wake-up (0: always poll) */
	uint32_t idle_spin_us;        /**< poll this long without work before sleeping */
	uint32_t max_conns;
	uint32_t sockbuf;             /**< TCP send/receive buffer per connection */
	uint32_t tx_budget;           /**< TCP send buffer octets per shard, shared by its
				       *   connections (lib/tcp send_budget; 0: none;
				       *   warpnicd's default WN_DP_TX_BUDGET_DEFAULT) */
	/* MPA policy */
	uint8_t mpa_rev;              /**< 1 or 2 (RFC 6581) */
	bool markers;                 /**< ask the peer for Markers (our M bit) */
	bool crc;                     /**< ask for CRC (our C bit) */
	bool p2p;                     /**< initiator asks for peer-to-peer mode (RFC 6581) */
	uint8_t rtr;                  /**< RTR types offered (WN_MPA_RTR_* bits) */
	uint32_t mpa_timeout_us;      /**< setup timeout (MPA startup, SCTP session setup) */
	uint8_t llp;                  /**< lower layer of connections whose client chose none:
				       *   WN_CTL_LLP_MPA or WN_CTL_LLP_SCTP (0: MPA) */
	bool rfc7306;
	/**
	 * Registered memory referenced by TCP and copied once into each segment, its CRC32c
	 * computed over that copy (completions after the ACK). Off (the default): every FPDU is
	 * framed, CRC included, in a staging buffer and copied into TCP's send buffer, which on
	 * a port that copies (memif, af_packet, tap) costs fewer instructions and less time.
	 */
	bool tx_ref;
	uint32_t tx_ref_min;          /**< ... messages below this are copied (0: 2048) */
	bool zero_copy_tx;            /**< send registered memory in place (port: MULTI_SEGS) */
	/**
	 * Client regions DMA-mapped for the port's device (lib/node). A port that DMAs sends
	 * zero-copy only from mapped regions; with NULL only a port that copies sends zero-copy.
	 */
	const struct wn_dp_dma_map *dma;
	/**
	 * Receiver not ready: a Send that finds no receive posted holds its stream this long
	 * (the peer's window closes) before the Terminate of RFC 5041 §7.1; 0: at once. Capped
	 * by DP_RNR_EOF_US and DP_RNR_IDLE_US (dp_priv.h); DDP over SCTP cannot hold.
	 */
	uint32_t rnr_hold_us;
	uint32_t zero_copy_min;       /**< ... for messages of at least this many octets */
	/**
	 * The port InfiniBand-style connections meet on (lib/cm, wn_cm.h; 0: none): shard 0
	 * listens there on every address and both lower layers, and every flow with this port
	 * at either end is steered to shard 0, where the QPs' endpoints wait.
	 */
	uint16_t ib_port;
	/**
	 * The UDP port UD QPs' datagrams and rdma_cm's UDP port space go between warpnic
	 * instances on (wn_wire_ud.h; 0: WN_UD_PORT, 4793). Every instance of a network must
	 * use the same one.
	 */
	uint16_t ud_port;
	/**
	 * Called by shard 0 every iteration and when the port's transmit queue is full (NULL:
	 * nothing): a port that needs polling to move frames, e.g. the fault injector's face.
	 */
	int (*port_poll)(void);
	/**
	 * The port's link (NULL: always up). While link->up is 0 the shards neither poll nor
	 * call port_poll and drop what they would send (counted in tx_nolink), so that the
	 * port can be started, stopped and started again; closing the gate takes effect once
	 * every shard passed a quiescent state of @c qs (rte_rcu_qsbr).
	 */
	struct wn_dp_link *link;
	/**
	 * Unmappings of a departing peer's rings that waited until every shard had left the
	 * port (lib/node's unmap fence; read atomically for telemetry). NULL: no fence.
	 */
	const uint64_t *unmap_fences;
};

/** Counters of the dataplane (besides lib/net, lib/tcp, lib/rnic's own). */
struct wn_dp_stats {
	uint64_t rx_pkts, tx_pkts, tx_drop;
	uint64_t tx_held;            /**< frames the port took only at a later try (its ring
				      *   was full: held, not dropped) */
	uint64_t tx_nolink;          /**< frames dropped because the link was down */
	uint64_t loops, idle_sleeps;
	uint64_t wake_bell;          /**< sleeps ended by the lcore's bell (clients, control) */
	uint64_t wake_rx;            /**< ... by the port queue's Rx interrupt */
	uint64_t wake_timer;         /**< ... by the timeout (a timer, a nap's end) */
	uint64_t idle_naps;          /**< sleeps without the Rx wake-up (none, or link down) */
	uint64_t ctl_msgs, cm_events, ctl_drop;
	uint64_t ctl_waited;          /**< messages a full ring made wait (in order; none lost) */
	uint64_t qp_polls;            /**< QP engines polled for transmit */
	uint64_t qp_parks;            /**< QPs found idle and parked (not polled until marked) */
	uint64_t qp_room_waits;       /**< QPs parked until TCP has room for their next FPDU */
	uint64_t qp_marks;            /**< parked QPs their clients marked ready (ready maps) */
	uint64_t qp_sweep_found;      /**< parked QPs with work found by the tick's sweep (a mark
				       *   missed: should stay 0) */
	uint64_t qps_ready;           /**< QPs being polled now (gauge) */
	uint64_t async_events;        /**< async events sent to clients (QP, SRQ, CQ) */
	uint64_t conns_active, conns_passive, conns_established, conns_failed, conns_rejected;
	uint64_t conns_unenhanced;    /**< connects retried with MPA Rev 1 (RFC 6581 §10) */
	uint64_t conns_closed;        /**< connections whose stream is gone (lib/cm CLOSED) */
	/* InfiniBand-style connections (lib/cm's struct wn_cm_stats, same names) */
	uint64_t ib_qps, ib_attempts, ib_established, ib_requests, ib_held, ib_refused;
	uint64_t ib_crossed, ib_crossed_refused, ib_retry_exceeded;
	uint64_t mpa_errors;          /**< MPA startup or Full Operation errors */
	uint64_t mpa_crc_errors;
	uint64_t rx_fpdus, tx_fpdus, tx_again;
	uint64_t cq_notify;
	uint64_t loopback_pkts;      /**< segments between two connections of this instance */
	uint64_t handoff_tx;         /**< frames steered to another lcore */
	uint64_t handoff_rx;         /**< frames steered here by another lcore */
	uint64_t handoff_drop;       /**< handoff ring full or no mbuf for a copy */
	uint64_t zc_fpdus;           /**< FPDUs sent zero-copy (payload attached to mbufs) */
	uint64_t zc_bytes;           /**< ... their payload octets */
	uint64_t ref_fpdus;          /**< FPDUs whose payload TCP references and copies once
				      *   into each segment (the default transmit) */
	uint64_t ref_bytes;          /**< ... their payload octets */
	uint64_t tx_tokens;          /**< messages sent by reference or zero-copy */
	uint64_t zc_released;        /**< ... whose references all went (ACKed + mbufs freed) */
	uint64_t zc_fallback;        /**< zero-copy FPDUs not sent zero-copy (no token, a window,
				      *   a region not DMA-mapped) */
	uint64_t zc_unmapped;        /**< ... of them because a region was not DMA-mapped */
	uint64_t tx_reclaimed;       /**< mbufs a NIC had sent, freed by the tick (zero-copy) */
	uint64_t copy_fpdus;         /**< FPDUs framed by copying (payload included) */
	uint64_t copy_bytes;         /**< ... their payload octets */
	/* why a payload was copied, one per such FPDU (struct wn_llp_stats copy_*) */
	uint64_t copy_inline, copy_unpinned, copy_no_token, copy_staged, copy_small, copy_other;
	uint64_t mr_dereg_deferred;  /**< MR deregistrations that waited for zero-copy pins */
	uint64_t mr_dereg_waiting;   /**< ... still waiting (gauge, shard 0) */
	uint64_t loopback_copies;    /**< zero-copy chains copied for the loopback path */
	uint64_t listens;            /**< listeners installed (a listen counts once per shard) */
	uint64_t term_sent;          /**< Terminates sent (RFC 5040 §5.4) */
	uint64_t term_recv;          /**< Terminates received */
	uint32_t term_sent_last;     /**< the last one's layer << 12 | etype << 8 | code */
	uint64_t rnr_holds;          /**< streams held: a Send found no receive (rnr_hold_us) */
	uint64_t rnr_resumed;        /**< ... offered again once a receive was posted */
	uint64_t rnr_timeouts;       /**< ... given up after rnr_hold_us: Terminate */
	uint64_t rnr_held;           /**< streams held now (gauge) */
	uint64_t rx_ooo_fpdus;       /**< FPDUs found out of order through Markers (RFC 5044) */
	uint64_t ooo_placed;         /**< ... whose data was placed at once (wn_rnic_rx_place) */
	uint64_t ooo_bytes;          /**< ... their payload octets */
	uint32_t term_recv_last;
	/* DDP over SCTP (lib/sctp, wn_sctp_stats); the fpdu counters above are MPA/TCP's */
	uint64_t sctp_rx_pkts, sctp_tx_pkts;   /**< SCTP packets in and out */
	uint64_t sctp_rx_bad;                  /**< ... dropped: bad CRC32c or short */
	uint64_t sctp_assocs;                  /**< associations that came up */
	uint64_t sctp_aborts;                  /**< ... that ended by ABORT (either side) */
	uint64_t sctp_sessions;                /**< DDP Stream Sessions in RDMA mode */
	uint64_t sctp_rx_ulpdus, sctp_tx_ulpdus; /**< DDP segments received and sent */
	uint64_t sctp_errors;                  /**< session control or DDP-SSN errors */
	uint64_t sctp_terms_sent, sctp_terms_recv; /**< session Terminates */
	/* unreliable datagrams (dp_ud.c, shard 0) */
	uint64_t ud_tx_msgs;         /**< UD messages sent (datagrams built) */
	uint64_t ud_tx_drop;         /**< ... lost on the way out: no route, no address of the
				      *   destination's family, or lib/net refused it */
	uint64_t ud_tx_nombuf;       /**< Sends put off for want of an mbuf (sent later) */
	uint64_t ud_loopback;        /**< ... to an address of ours: never on the wire */
	uint64_t ud_rx_msgs;         /**< UD messages placed into a receive */
	uint64_t ud_rx_noqp;         /**< datagrams for a QP number that is not a UD QP here */
	uint64_t ud_rx_drop_qkey;    /**< ... whose Q_Key was not their QP's (IBTA 10.2.5) */
	uint64_t ud_rx_drop_norecv;  /**< ... that found no receive posted */
	uint64_t ud_rx_drop_state;   /**< ... for a QP not in RTR/RTS/SQD (or a corrupt ring) */
	uint64_t ud_rx_bad;          /**< datagrams to the UD port that do not decode */
	uint64_t ud_rx_sidr;         /**< SIDR messages received (rdma_cm's UDP port space) */
	uint64_t sidr_req_tx, sidr_req_rx, sidr_rep_tx, sidr_rep_rx;
	uint64_t sidr_req_retx;      /**< SIDR REQs sent again (no REP yet) */
	uint64_t sidr_timeouts;      /**< connects on UDP ids that got no REP: UNREACHABLE */
	uint64_t sidr_unsupported;   /**< requests no listener took (REP UNSUPPORTED) */
};

/**
 * Create the dataplane with @p n_shards lcores (port queues 0..n-1, QSBR threads 0..n-1).
 * @return NULL with errno. Main lcore.
 */
struct wn_dp_group *wn_dp_create(const struct wn_dp_conf *conf, uint16_t n_shards);

/** @return shard @p idx of @p g, or NULL. Any thread. */
struct wn_dp *wn_dp_shard(struct wn_dp_group *g, uint16_t idx);

/**
 * Prepare shard @p dp to be polled on the calling lcore (QSBR thread, the port's first
 * neighbour solicitations). @return 0 or -errno. The shard's lcore, once.
 */
int wn_dp_start(struct wn_dp *dp);

/**
 * One iteration of the shard: receive (port queue, other shards' frames), the lower layer's
 * timers and releases, control messages, the QPs' send queues, TCP, transmit, periodic work.
 * @return units of work done (frames, messages, ULPDUs); 0 when it found nothing to do.
 * The shard's lcore, between wn_dp_start() and wn_dp_stop().
 */
unsigned int wn_dp_poll(struct wn_dp *dp);

/**
 * The first half of wn_dp_poll(): the clock, receive (port queue, other shards' frames)
 * through TCP, the lower layer and the QP engines (placement, CQEs), the lower layer's
 * timers and releases, control messages. An application that runs its workload inside the
 * shard's loop (wn_dp_embed.h) calls wn_dp_poll_rx(), does its step (post, poll), then
 * wn_dp_poll_tx(), so what it posts leaves in the same iteration.
 * @return units of work done. The shard's lcore.
 */
unsigned int wn_dp_poll_rx(struct wn_dp *dp);

/**
 * The second half of wn_dp_poll(): the QPs' send queues, TCP (output, timers, the ACKs of
 * this iteration's receive burst), transmit, periodic work.
 * @return units of work done. The shard's lcore, after wn_dp_poll_rx() of the same iteration.
 */
unsigned int wn_dp_poll_tx(struct wn_dp *dp);

/**
 * The shard stops: its connections are aborted (without events) and the last segments
 * (RSTs) go out. The shard's lcore, after the last wn_dp_poll().
 */
void wn_dp_stop(struct wn_dp *dp);

/**
 * Run shard @p idx until *quit becomes non-zero: wn_dp_start(), wn_dp_poll() in a loop with
 * the idle policy of conf.idle (enum wn_dp_idle; idle_us 0 polls too), wn_dp_stop().
 * @return 0 or -errno of wn_dp_start() or of setting up the wake-up sources. Its lcore.
 */
int wn_dp_run(struct wn_dp_group *g, uint16_t idx, volatile int *quit);

/**
 * The lcore doorbells of @p g, for the control server to hand to clients
 * (wn_server_dp_bells(); lib/queue's "Lcore doorbells"): the bell page memfd and mapping, and
 * one eventfd per shard in @p efds (DP_MAX_SHARDS entries). Only shards in wn_dp_run() sleep;
 * the others never ask to be rung. The fds stay @p g's.
 * @return the number of bells (shards). Main lcore.
 */
uint32_t wn_dp_bells(struct wn_dp_group *g, int *page_fd, struct wn_queue_bell **page,
		     int *efds);

/** Free everything (after every wn_dp_run returned). */
void wn_dp_free(struct wn_dp_group *g);

/** Register the /warpnic/dp/... telemetry commands for @p g. */
void wn_dp_telemetry_register(struct wn_dp_group *g);

/**
 * Connections of group @p g not yet closed or in TIME_WAIT (both FINs went through and ours
 * was acked), as the shards' telemetry snapshots (every 100 ms) say.
 * @return how many, or -EAGAIN when a shard's snapshot is older than @p since_us
 *   (wn_net_now_us()). Any thread but the shards'.
 */
int wn_dp_busy_conns(struct wn_dp_group *g, uint64_t since_us);

#ifdef __cplusplus
}
#endif

#endif /* WN_DP_H */
