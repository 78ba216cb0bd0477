/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * warpnicd dataplane: run-to-completion lcores ("shards"), each owning one port queue, its
 * own TCP/IP stack (lib/net, lib/tcp), its iWARP connections (lib/mpa) and the QP engines of
 * those connections (lib/rnic). A connection lives on the shard wn_tcp_flow_steer() picks for
 * its 4-tuple; frames that arrive on another shard's queue are handed over on that shard's
 * handoff ring (software steering: memif and many vdevs have no RSS), ARP/ND frames are
 * copied to every shard. Shard 0 takes the control thread's messages and dispatches them:
 * objects (CQ, SRQ, QP) live in a table shared by the shards, a QP's messages go to the
 * shard of its connection, listeners exist on every shard.
 *
 *   rx_burst → wn_net → wn_tcp → recv callback → MPA startup / deframer → wn_rnic_rx
 *   SQ rings → wn_rnic_tx_poll → FPDU framing (markers, CRC) → wn_tcp_send_record → tx_burst
 *
 * Objects arrive from the control thread on the to_dp ring (wn_server_dp.h) and CM events go back
 * on to_ctl followed by an eventfd write. dp.c holds the loop, port and object tables;
 * dp_conn.c the per-connection glue and the connection manager.
 *
 * Thread safety: a shard's state is used by its lcore only; the object table (rte_hash with
 * reader-writer concurrency) is written by shard 0 only; CQ/SRQ structures are reference
 * counted (atomics) and their rings locked when several shards run; wn_dp_create/free run on
 * the main lcore before/after the loops; the telemetry snapshot has a mutex.
 */
#ifndef WN_DP_H
#define WN_DP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_hash.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <rte_spinlock.h>
#include <rte_tailq.h>

#include "wn_cm.h"
#include "wn_llp.h"
#include "wn_server_dp.h"
#include "wn_mem.h"
#include "wn_mpa_tcp.h"
#include "wn_net.h"
#include "wn_port.h"
#include "wn_queue.h"
#include "wn_rnic.h"
#include "wn_tcp.h"

#define DP_BURST 32
/** Most dataplane lcores. */
#define DP_MAX_SHARDS 16
/** dp_qp::owner before a connection binds the QP. */
#define DP_NO_OWNER UINT16_MAX
/** Most QPs the telemetry snapshot lists. */
#define DP_TEL_QPS 64

/** Dataplane configuration (from the command line / config file). */
struct wn_dp_conf {
	uint16_t port_id;
	struct rte_mempool *pool;
	uint16_t mtu;
	uint64_t tx_offload_capa, rx_offload_capa;
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
	uint32_t idle_us;             /**< sleep when idle (0: always poll) */
	uint32_t max_conns;
	uint32_t sockbuf;             /**< TCP send/receive buffer per connection */
	/* MPA policy */
	uint8_t mpa_rev;              /**< 1 or 2 (RFC 6581) */
	bool markers;                 /**< ask the peer for Markers (our M bit) */
	bool crc;                     /**< ask for CRC (our C bit) */
	bool p2p;                     /**< initiator asks for peer-to-peer mode (RFC 6581) */
	uint8_t rtr;                  /**< RTR types offered (WN_MPA_RTR_* bits) */
	uint32_t mpa_timeout_us;
	bool rfc7306;
	bool zero_copy_tx;            /**< send registered memory in place (port: MULTI_SEGS) */
	uint32_t zero_copy_min;       /**< ... for messages of at least this many octets */
};

/** Counters of the dataplane (besides lib/net, lib/tcp, lib/rnic's own). */
struct wn_dp_stats {
	uint64_t rx_pkts, tx_pkts, tx_drop;
	uint64_t loops, idle_sleeps;
	uint64_t ctl_msgs, cm_events, ctl_drop;
	uint64_t conns_active, conns_passive, conns_established, conns_failed, conns_rejected;
	uint64_t mpa_errors;          /**< MPA startup or Full Operation errors */
	uint64_t mpa_crc_errors;
	uint64_t rx_fpdus, tx_fpdus, tx_again;
	uint64_t cq_notify;
	uint64_t loopback_pkts;      /**< segments between two connections of this instance */
	uint64_t handoff_tx;         /**< frames steered to another lcore */
	uint64_t handoff_rx;         /**< frames steered here by another lcore */
	uint64_t handoff_drop;       /**< handoff ring full or no mbuf for a copy */
	uint64_t zc_fpdus;           /**< FPDUs sent zero-copy (payload referenced) */
	uint64_t zc_bytes;           /**< ... their payload octets */
	uint64_t zc_released;        /**< ... whose references all went (ACKed + mbufs freed) */
	uint64_t zc_fallback;        /**< zero-copy FPDUs copied instead (no token, a window) */
	uint64_t copy_fpdus;         /**< FPDUs framed by copying (payload included) */
	uint64_t copy_bytes;         /**< ... their payload octets */
	uint64_t mr_dereg_deferred;  /**< MR deregistrations that waited for zero-copy pins */
	uint64_t mr_dereg_waiting;   /**< ... still waiting (gauge, shard 0) */
	uint64_t loopback_copies;    /**< zero-copy chains copied for the loopback path */
	uint64_t term_sent;          /**< Terminates sent (RFC 5040 §5.4) */
	uint64_t term_recv;          /**< Terminates received */
	uint32_t term_sent_last;     /**< the last one's layer << 12 | etype << 8 | code */
	uint32_t term_recv_last;
};

/** Kind tag: first member of every object in wn_dp::objs. */
enum dp_obj_kind { DPO_CQ = 1, DPO_SRQ, DPO_QP, DPO_LISTEN, DPO_CONN };

struct dp_cq {
	enum dp_obj_kind kind;
	uint32_t handle;
	struct wn_server_dp_cq *d;
	struct wn_queue_ring prod;    /**< producer view (the engines write CQEs here) */
	rte_spinlock_t lock;          /**< serialises producers on several shards */
	_Atomic uint32_t refs;    /**< the table + QPs using it; 0: freed, DONE sent */
};

struct dp_srq {
	enum dp_obj_kind kind;
	uint32_t handle;
	struct wn_server_dp_srq *d;
	struct wn_queue_ring cons;
	rte_spinlock_t lock;
	_Atomic uint32_t refs;
};

struct dp_conn;

struct dp_qp {
	enum dp_obj_kind kind;
	uint32_t handle;
	struct wn_server_dp_qp *d;
	struct wn_queue_ring sq, rq;  /**< consumer views */
	struct dp_cq *scq, *rcq;
	struct dp_srq *srq;
	struct wn_rnic_qp *eng;       /**< created when the connection reaches RDMA mode */
	struct dp_conn *conn;
	struct wn_llp *llp;           /**< the stream the engine sends to (while active) */
	TAILQ_ENTRY(dp_qp) next;      /**< in dp->active while it has an engine */
	bool active;
	uint16_t owner;               /**< shard of its connection (set by shard 0) */
	TAILQ_ENTRY(dp_qp) errnext;   /**< in dp->errq while its engine is in ERROR */
	bool in_errq;
};

struct dp_listen {
	enum dp_obj_kind kind;        /**< DPO_LISTEN (wn_dp::cm_tab holds both kinds) */
	uint32_t id;
	struct wn_llp_listener *l;
	struct wn_ctl_addr src;
	struct wn_dp *dp;
};

/**
 * One connection: its lib/cm endpoint (the state) and what the dataplane keys it by. Its
 * lower-layer stream is the endpoint's (wn_cm_llp()).
 */
struct dp_conn {
	enum dp_obj_kind kind;        /**< DPO_CONN */
	struct wn_cm_ep ep;
	struct wn_dp *dp;
	uint32_t id;                  /**< CM id handle (0: passive, not accepted yet) */
	uint32_t token;               /**< passive: our key until the CM id is known */
	uint32_t listen_id;
	struct wn_ctl_addr src, dst;  /**< local, remote */
	struct dp_qp *qp;
	TAILQ_ENTRY(dp_conn) next;
};

TAILQ_HEAD(dp_qp_list, dp_qp);
TAILQ_HEAD(dp_conn_list, dp_conn);

struct wn_dp_group;

/** One dataplane lcore. */
struct wn_dp {
	struct wn_dp_conf c;          /**< the group's configuration */
	struct wn_dp_group *g;
	uint16_t idx;                 /**< shard index = port queue = QSBR thread id */
	struct rte_ring *handoff;     /**< frames steered here by other shards (MP/SC) */
	struct rte_ring *ctl;         /**< control messages dispatched by shard 0 (SP/SC) */
	struct wn_netif *nif;
	struct wn_tcp_ctx *tcp;
	struct rte_hash *objs;        /**< the group's handle → dp_cq / dp_srq / dp_qp */
	struct rte_hash *cm_tab;      /**< CM id handle or passive token → dp_conn / dp_listen */
	struct wn_cm cm;              /**< lib/cm: the connections' state machine */
	struct wn_llp_proto *llp;     /**< MPA/TCP over this shard's TCP (lib/mpa) */
	struct dp_qp_list active;
	struct dp_qp_list errq;       /**< QPs in Error: later postings are flushed */
	struct dp_conn_list conns;
	uint32_t next_token;
	uint64_t now;
	struct wn_dp_stats st;
	/* zero-copy transmit: MR deregistrations waiting for pins (dp_zc.c) */
	struct { uint32_t handle, stag; } *dereg; /**< shard 0: DONEs waiting for unpinning */
	uint32_t n_dereg, cap_dereg;
	uint64_t last_tick;
	volatile int *quit;
	/* telemetry snapshot, refreshed by the lcore */
	pthread_mutex_t tel_lock;
	uint64_t tel_at;
	struct wn_dp_stats tel_dp;
	struct wn_net_stats tel_net;
	struct wn_tcp_stats tel_tcp;
	uint32_t tel_nconn;
	struct {
		uint32_t id, qpn;
		enum wn_cm_state state;
		struct wn_llp_info llp;
	} tel_conn[DP_TEL_QPS];
	uint32_t tel_nqp;
	struct {
		uint32_t handle, qpn, state, conn_state;
		struct wn_rnic_stats s;
	} tel_qp[DP_TEL_QPS];
};

/** The dataplane of one instance: its shards and what they share. */
struct wn_dp_group {
	struct wn_dp_conf c;
	uint16_t n;                   /**< shards */
	struct wn_dp *shard[DP_MAX_SHARDS];
	struct rte_hash *objs;        /**< handle → object; written by shard 0 only */
	struct rte_hash *cm_owner;    /**< shard 0 only: CM id → shard (DP_OWNER_LISTEN: all) */
	_Atomic uint32_t running;
};

/** cm_owner value of a listener (it exists on every shard). */
#define DP_OWNER_LISTEN 0xffffu

/**
 * Create the dataplane with @p n_shards lcores (port queues 0..n-1, QSBR threads 0..n-1).
 * @return NULL with errno. Main lcore.
 */
struct wn_dp_group *wn_dp_create(const struct wn_dp_conf *conf, uint16_t n_shards);

/** Run shard @p idx until *quit becomes non-zero. Its lcore. */
int wn_dp_run(struct wn_dp_group *g, uint16_t idx, volatile int *quit);

/** Free everything (after every wn_dp_run returned). */
void wn_dp_free(struct wn_dp_group *g);

/** Register the /warpnic/dp/... telemetry commands for @p g. */
void wn_dp_telemetry_register(struct wn_dp_group *g);

/* ---- internal, shared by dp.c and dp_conn.c ---- */

/** Send a CM event for CM id @p id to the control thread. */
void dp_cm_event(struct wn_dp *dp, uint32_t id, const struct wn_ctl_cm_event *ev);
/** The same with the IRD/ORD MPA negotiated (ESTABLISHED). */
void dp_cm_event_neg(struct wn_dp *dp, uint32_t id, const struct wn_ctl_cm_event *ev,
		     uint32_t ird, uint32_t ord);
/** Shard that owns the connection (local, remote) (wn_tcp_flow_steer). */
uint16_t dp_steer(const struct wn_dp_group *g, const struct wn_ctl_addr *local,
		  const struct wn_ctl_addr *remote);
/** Shard index encoded in a passive connection's token. */
static inline uint16_t
dp_token_shard(uint32_t token)
{
	return (uint16_t)((token >> 24) & 0x7f);
}
/**
 * Create the QP's engine for a connection in RDMA mode on stream @p llp with the negotiated
 * @p p. @return 0 or -errno.
 */
int dp_qp_engine(struct wn_dp *dp, struct dp_qp *qp, struct dp_conn *conn, struct wn_llp *llp,
		 const struct wn_llp_params *p, uint8_t rtr_recv);
/** The QP's connection is gone: flush (engine or rings) and detach. */
void dp_qp_disconnect(struct wn_dp *dp, struct dp_qp *qp);
/** Look up an object by handle. */
void *dp_obj(struct wn_dp *dp, uint32_t handle, enum dp_obj_kind kind);

/** Convert a control-protocol address to a TCP endpoint. */
void dp_ep_of(const struct wn_ctl_addr *a, struct wn_tcp_endpoint *e);
/** Shard 0: a message from the control thread (handled, or forwarded to a shard). */
void dp_dispatch(struct wn_dp *dp, struct wn_server_dp_msg *m);
/** A control message dispatched to this shard. */
void dp_local_msg(struct wn_dp *dp, struct wn_server_dp_msg *m);
/** Free every object (after the loops stopped). */
void dp_objs_free(struct wn_dp_group *g);
/** Telemetry no longer reads @p g. */
void dp_tel_unregister(struct wn_dp_group *g);
/** CM messages from the control thread (dp_conn.c). */
void dp_cm_msg(struct wn_dp *dp, struct wn_server_dp_msg *m);
/** Flush what clients posted to QPs in Error (every tick). */
void dp_errq_flush(struct wn_dp *dp);
/** Startup timers, deferred frees. */
void dp_conns_tick(struct wn_dp *dp);
/** Free every connection (shutdown). */
void dp_conns_free(struct wn_dp *dp);
/** Engine event callback. */
void dp_qp_event(void *arg, struct wn_rnic_qp *qp, const struct wn_rnic_event *ev);
/** The connection's QP sent or received a Terminate: close the stream behind it. */
void dp_conn_terminated(struct dp_conn *c);
/** lib/cm of this shard (dp_conn.c). */
void dp_conns_init(struct wn_dp *dp);
/** Zero-copy transmit (dp_zc.c): this shard's MPA/TCP instance, zero-copy if possible. */
int dp_llp_create(struct wn_dp *dp);
/** Shard 0: an MR deregistration; DONE once nothing references its memory. */
void dp_zc_dereg(struct wn_dp *dp, uint32_t handle, uint32_t stag);
/** Shard 0: deregistrations whose pins went. Every tick. */
void dp_zc_tick(struct wn_dp *dp);
/** Tell the control thread an object is released (dp_obj.c). */
void dp_ctl_done(struct wn_dp *dp, uint32_t handle);
/** Detach a connection whose QP is being destroyed or moved to error by the ULP. */
void dp_conn_qp_gone(struct wn_dp *dp, struct dp_conn *c, bool abort);

#endif /* WN_DP_H */
