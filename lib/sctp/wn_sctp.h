/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * DDP over SCTP (RFC 5043, with RFC 6581's enhanced session setup) as a lower layer of DDP
 * (wn_llp.h): the second implementation of the seam, beside MPA/TCP (wn_mpa_tcp.h). Its
 * flags say WN_LLP_F_MESSAGES: ULPDUs travel whole, one per DATA chunk, with no MPA framing,
 * Markers or CRC at this layer (SCTP's CRC32c covers each packet).
 *
 * SCTP itself is usrsctp (Debian's libusrsctp, 0.9.5) in its no-threads mode with the AF_CONN
 * lower layer: this library is the "connection" below it. Received IP datagrams of protocol
 * 132 go in through wn_sctp_input() (a lib/net receive hook, wn_net_if_proto_rx), their CRC32c
 * checked here (isa-l), and SCTP's packets come out as IP datagrams through wn_sctp_tx_bulk()
 * for the owner to send (wn_net_output_bulk), as lib/tcp's segments do; usrsctp's timers run
 * from wn_llp_poll(), after the SCTP input queued before them (a poll that follows input
 * leaves them for the next, for at most 64 polls in a row). Each association has the
 * Adaptation Layer Indication of DDP in its INIT/INIT-ACK (an association whose peer
 * indicates anything else is aborted, RFC 5043 §11.1), the same number of streams both ways
 * (§8), no path MTU discovery but the link's MTU, and carries DDP streams on like-numbered
 * SCTP stream pairs: a connect opens an association and one DDP Stream Session on stream 0;
 * an association accepted by a listener may carry a session on each of its streams, each one
 * a stream of this layer handed to the listener when its Initiate arrives. Every DATA chunk is
 * unordered (§10) and starts with its DDP-SSN; what arrives is put back in DDP-SSN order
 * before the ULP sees it (wn_sctp_sess.h).
 *
 * Teardown: wn_llp_close() sends the session's Terminate; an association whose sessions have
 * all ended is shut down (SCTP SHUTDOWN, after everything queued is acknowledged) and the
 * streams see CLOSED when it is gone; wn_llp_abort() aborts the association (SCTP ABORT) when
 * the stream is its only session. A peer's ABORT, a failed path or a restart ends every
 * session of the association (CLOSED, reset or timeout).
 *
 * usrsctp is one stack per process: every instance (one per lcore) shares it. Each instance
 * owns the associations whose packets are steered to it (the owner steers IP protocol 132 by
 * addresses and SCTP ports as it steers TCP); a packet usrsctp emits on another thread (its
 * timers run on whichever lcore polls first) is queued to the owning instance, whose lcore
 * sends it. usrsctp stays initialised until the process exits.
 *
 * Thread safety: an instance and its streams belong to one lcore; wn_sctp_create() and
 * wn_sctp_free() from any thread while that lcore does not poll.
 */
#ifndef WN_SCTP_H
#define WN_SCTP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "wn_llp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most instances in one process. */
#define WN_SCTP_MAX_INSTANCES 64

/** Configuration of an instance. */
struct wn_sctp_conf {
	struct rte_mempool *pool;  /**< mbufs for the packets sent (required) */
	uint16_t index;            /**< instance number (its lcore), < WN_SCTP_MAX_INSTANCES */
	uint16_t mtu;              /**< IP MTU of the link (0: 1500) */
	/* session policy (RFC 6581) */
	bool enhanced;             /**< initiator: enhanced Initiate (IRD/ORD, RTR) */
	bool p2p;                  /**< initiator: ask for peer-to-peer mode */
	uint8_t rtr;               /**< RTR types offered / accepted (WN_LLP_RTR_* bits) */
	uint32_t timeout_us;       /**< session setup timeout (0: 20 s) */
	uint32_t sockbuf;          /**< SCTP send and receive buffer per association (0: 1 MiB) */
	uint16_t streams;          /**< streams each way per association (0: 16) */
};

/** Counters of an instance beyond wn_llp_stats. */
struct wn_sctp_stats {
	uint64_t rx_pkts;          /**< SCTP packets received */
	uint64_t rx_bad;           /**< ... dropped: bad CRC32c or shorter than the header */
	uint64_t tx_pkts;          /**< SCTP packets handed to the owner */
	uint64_t tx_drop;          /**< ... lost: no mbuf or the queue full (SCTP resends) */
	uint64_t assocs;           /**< associations that came up */
	uint64_t assoc_refused;    /**< ... aborted: the peer does not indicate DDP (§11.1) */
	uint64_t aborts;           /**< associations that ended by ABORT (either side) */
	uint64_t sessions;         /**< DDP Stream Sessions that reached RDMA mode */
	uint64_t terms_sent;       /**< DDP Stream Session Terminates sent */
	uint64_t terms_recv;       /**< ... received */
	uint64_t rx_early;         /**< chunks held until their DDP-SSN turn */
	uint32_t assocs_open;      /**< associations that exist now */
	uint32_t streams_open;     /**< streams (sessions) that exist now */
};

/**
 * usrsctp's own counters (its struct sctpstat): one stack per process, so these count every
 * association of every instance. All zero before the first instance exists.
 */
struct wn_sctp_stack_stats {
	uint64_t rx_packets;       /**< SCTP packets received (usrsctp counts none it sends
				    *   over AF_CONN: wn_sctp_stats tx_pkts counts those) */
	uint64_t tx_data;          /**< DATA chunks sent */
	uint64_t rx_data;          /**< DATA chunks received */
	uint64_t rx_pkts_data;     /**< packets received with DATA in them */
	uint64_t rx_dup_data;      /**< duplicate DATA chunks received */
	uint64_t tx_retrans;       /**< DATA chunks sent again (T3 or fast retransmission) */
	uint64_t fast_retrans;     /**< ... of them by fast retransmission */
	uint64_t t3_timeouts;      /**< T3-rtx (retransmission) timer expiries */
	uint64_t tx_sacks;         /**< SACK chunks sent */
	uint64_t rx_sacks;         /**< ... received */
	uint64_t sack_timeouts;    /**< delayed-SACK timer expiries (a SACK sent late) */
	uint64_t window_probes;    /**< zero-window probes sent */
	uint64_t rx_drop_rwnd;     /**< DATA dropped for want of receive window */
	uint64_t cwnd_full;        /**< sends held back: congestion window full */
	uint64_t maxburst_held;    /**< ... held back by the max burst limit */
};

/** Read usrsctp's counters (any thread; each counter read alone, so torn across counters). */
void wn_sctp_stack_stats_get(struct wn_sctp_stack_stats *st);

/**
 * Create an instance (the first one initialises usrsctp).
 * @return its wn_llp_proto, or NULL with errno EINVAL (no pool, index out of range, in use)
 *   or ENOMEM. Any thread.
 */
struct wn_llp_proto *wn_sctp_create(const struct wn_sctp_conf *conf);

/**
 * Free an instance: its associations aborted, its listeners closed, its streams freed
 * without upcalls. NULL: no-op. Its lcore, or after it stopped.
 */
void wn_sctp_free(struct wn_llp_proto *p);

/**
 * One received IP datagram of protocol 132 (IP header at the data offset, l3_len set, as
 * lib/net's receive hook hands it; @p proto is the instance, a wn_net_proto_rx_fn's arg).
 * Consumes @p m. Upcalls follow from inside. The instance's lcore.
 */
void wn_sctp_input(void *proto, struct rte_mbuf *m, uint64_t now);

/**
 * Take up to @p n packets to send: IP datagrams, IP header first (for wn_net_output_bulk).
 * @return how many were stored in @p pkts. The instance's lcore.
 */
uint16_t wn_sctp_tx_bulk(struct wn_llp_proto *p, struct rte_mbuf **pkts, uint16_t n);

/** Read the instance's counters. The instance's lcore (or torn reads accepted). */
void wn_sctp_stats_get(const struct wn_llp_proto *p, struct wn_sctp_stats *st);

/**
 * For tests and tools that speak SCTP through usrsctp themselves (the same stack): the AF_CONN
 * address (a usrsctp sconn_addr) of the path between @p local and @p remote on instance @p p,
 * created on first use. A usrsctp socket bound and connected to it sends and receives its
 * packets through @p p like the instance's own. @return it, or NULL (no memory). Its lcore.
 */
void *wn_sctp_path(struct wn_llp_proto *p, const struct wn_ip_addr *local,
		   const struct wn_ip_addr *remote);

#ifdef __cplusplus
}
#endif

#endif /* WN_SCTP_H */
