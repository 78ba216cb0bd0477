/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * warpnicd dataplane: one run-to-completion lcore that owns a port queue, the TCP/IP stack
 * (lib/net, lib/tcp), every iWARP connection (lib/mpa) and every QP engine (lib/rnic).
 *
 *   rx_burst → wn_net → wn_tcp → recv callback → MPA startup / deframer → wn_rnic_rx
 *   SQ rings → wn_rnic_tx_poll → FPDU framing (markers, CRC) → wn_tcp_send_record → tx_burst
 *
 * Objects arrive from the control thread on the to_dp ring (ctl_dp.h) and CM events go back
 * on to_ctl followed by an eventfd write. dp.c holds the loop, port and object tables;
 * dp_conn.c the per-connection glue and the connection manager.
 *
 * Thread safety: everything here runs on the dataplane lcore, except wn_dp_create/free
 * (main lcore, before/after the loop) and the telemetry snapshot (mutex).
 */
#ifndef WN_DP_H
#define WN_DP_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_hash.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <rte_tailq.h>

#include "ctl_dp.h"
#include "wn_mem.h"
#include "wn_mpa.h"
#include "wn_net.h"
#include "wn_port.h"
#include "wn_queue.h"
#include "wn_rnic.h"
#include "wn_tcp.h"

#define DP_BURST 32
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
};

/** Kind tag: first member of every object in wn_dp::objs. */
enum dp_obj_kind { DPO_CQ = 1, DPO_SRQ, DPO_QP, DPO_LISTEN, DPO_CONN };

struct dp_cq {
	enum dp_obj_kind kind;
	uint32_t handle;
	struct wn_ctl_dp_cq *d;
	struct wn_queue_ring prod;    /**< producer view (the engines write CQEs here) */
	uint32_t refs;                /**< QP engines using it */
};

struct dp_srq {
	enum dp_obj_kind kind;
	uint32_t handle;
	struct wn_ctl_dp_srq *d;
	struct wn_queue_ring cons;
};

struct dp_conn;

struct dp_qp {
	enum dp_obj_kind kind;
	uint32_t handle;
	struct wn_ctl_dp_qp *d;
	struct wn_queue_ring sq, rq;  /**< consumer views */
	struct dp_cq *scq, *rcq;
	struct dp_srq *srq;
	struct wn_rnic_qp *eng;       /**< created when the connection reaches RDMA mode */
	struct dp_conn *conn;
	TAILQ_ENTRY(dp_qp) next;      /**< in dp->active while it has an engine */
	bool active;
};

enum dp_conn_state {
	DPC_TCP = 0,     /**< TCP handshake */
	DPC_MPA,         /**< MPA startup */
	DPC_REQ,         /**< responder: Request reported, waiting for accept/reject */
	DPC_FULL,        /**< Full Operation: RDMA mode */
	DPC_CLOSING,     /**< FIN sent or Reject out; waiting for TCP to finish */
	DPC_DEAD,        /**< TCP gone; freed after the loop iteration */
};

struct dp_listen {
	enum dp_obj_kind kind;        /**< DPO_LISTEN (wn_dp::cm holds both kinds) */
	uint32_t id;
	struct wn_tcp_listener *l;
	struct wn_ctl_addr src;
	struct wn_dp *dp;
};

struct dp_conn {
	enum dp_obj_kind kind;        /**< DPO_CONN */
	struct wn_dp *dp;
	enum dp_conn_state st;
	bool active;
	uint32_t id;                  /**< CM id handle (0: passive, not accepted yet) */
	uint32_t token;               /**< passive: our key until the CM id is known */
	uint32_t listen_id;
	struct wn_ctl_addr src, dst;  /**< local, remote */
	struct wn_ctl_conn_param param; /**< connect/accept parameters */
	struct wn_tcp_conn *tcp;
	struct dp_qp *qp;
	struct wn_mpa_conn mpa;
	bool mpa_started;
	bool tx_ok;                   /**< FPDUs may be sent (RFC 5044 §7.1.2 fencing) */
	bool record_mode;             /**< TCP segments on FPDU boundaries */
	bool cm_done;                 /**< final CM event (DISCONNECTED/REJECTED/ERROR) sent */
	bool established_sent;
	uint32_t mulpdu;
	uint8_t *rxbuf;               /**< one ULPDU being gathered */
	uint8_t *txbuf;               /**< one FPDU being framed */
	uint32_t txcap;
	uint16_t rx_len;
	TAILQ_ENTRY(dp_conn) next;
};

TAILQ_HEAD(dp_qp_list, dp_qp);
TAILQ_HEAD(dp_conn_list, dp_conn);

struct wn_dp {
	struct wn_dp_conf c;
	struct wn_netif *nif;
	struct wn_tcp_ctx *tcp;
	struct rte_hash *objs;        /**< handle → dp_cq / dp_srq / dp_qp */
	struct rte_hash *cm;          /**< CM id handle or passive token → dp_conn / dp_listen */
	struct dp_qp_list active;
	struct dp_conn_list conns;
	uint32_t next_token;
	uint64_t now;
	struct wn_dp_stats st;
	volatile int *quit;
	/* telemetry snapshot, refreshed by the lcore */
	pthread_mutex_t tel_lock;
	uint64_t tel_at;
	struct wn_dp_stats tel_dp;
	struct wn_net_stats tel_net;
	struct wn_tcp_stats tel_tcp;
	uint32_t tel_nconn;
	struct {
		uint32_t id, qpn, state, mulpdu;
		bool active, markers_tx, markers_rx, crc;
		struct wn_tcp_info tcp;
		uint64_t fpdus_rx;
	} tel_conn[DP_TEL_QPS];
	uint32_t tel_nqp;
	struct {
		uint32_t handle, qpn, state, conn_state;
		struct wn_rnic_stats s;
	} tel_qp[DP_TEL_QPS];
};

/** Create the dataplane (tables, netif, TCP context). @return NULL with errno. Main lcore. */
struct wn_dp *wn_dp_create(const struct wn_dp_conf *conf);

/** Run the loop until *quit becomes non-zero. The dataplane lcore. */
int wn_dp_run(struct wn_dp *dp, volatile int *quit);

/** Free everything (after wn_dp_run returned). */
void wn_dp_free(struct wn_dp *dp);

/** Register the /warpnic/dp/... telemetry commands for @p dp. */
void wn_dp_telemetry_register(struct wn_dp *dp);

/* ---- internal, shared by dp.c and dp_conn.c ---- */

/** Send a CM event for CM id @p id to the control thread. */
void dp_cm_event(struct wn_dp *dp, uint32_t id, const struct wn_ctl_cm_event *ev);
/** Create the QP's engine for a connection in RDMA mode. @return 0 or -errno. */
int dp_qp_engine(struct wn_dp *dp, struct dp_qp *qp, struct dp_conn *conn, uint32_t mulpdu,
		 uint32_t ird, uint32_t ord, uint32_t rtr_recv);
/** The QP's connection is gone: flush (engine or rings) and detach. */
void dp_qp_disconnect(struct wn_dp *dp, struct dp_qp *qp);
/** Look up an object by handle. */
void *dp_obj(struct wn_dp *dp, uint32_t handle, enum dp_obj_kind kind);

/** CM messages from the control thread (dp_conn.c). */
void dp_cm_msg(struct wn_dp *dp, struct wn_ctl_dp_msg *m);
/** Startup timers, deferred frees. */
void dp_conns_tick(struct wn_dp *dp);
/** Free every connection (shutdown). */
void dp_conns_free(struct wn_dp *dp);
/** The engine of the connection's QP has ULPDUs/events: engine tx callback target. */
int dp_conn_tx(void *arg, const struct wn_rnic_ulpdu *u);
/** Engine event callback. */
void dp_qp_event(void *arg, struct wn_rnic_qp *qp, const struct wn_rnic_event *ev);
/** Close TCP gracefully after what is queued (a Terminate went out or came in). */
void dp_conn_close(struct dp_conn *c);
/** Abort a connection whose QP is being destroyed or moved to error by the ULP. */
void dp_conn_qp_gone(struct wn_dp *dp, struct dp_conn *c, bool abort);

#endif /* WN_DP_H */
