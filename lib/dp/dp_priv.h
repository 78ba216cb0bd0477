/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp's private structures (wn_dp.h has the public API). A shard owns one port queue, its
 * own TCP/IP stack (lib/net, lib/tcp), its lower layers (MPA/TCP, lib/mpa; DDP over SCTP,
 * lib/sctp), its connections
 * (lib/cm endpoints, conn.c) and the QP engines of those connections (lib/rnic, dp_obj.c).
 *
 * Files: shard.c (creation), dp_steer.c (software flow steering, handoff, loopback), idle.c (the
 * run loop and what an idle shard sleeps on), loop.c (one iteration, start and stop, the
 * port's transmit), bell.c (the shards' doorbells), dispatch.c (the control thread's messages:
 * shard 0 takes them and forwards them to the owning shard), dp_obj.c (CQ/SRQ/QP objects and
 * their engines), conn.c (lib/cm's owner: keys, CM messages and events), dp_msg.c (messages to
 * the control thread: DONE and CM events), dp_llp.c (the lower layers, zero-copy's region pins
 * and the MR deregistrations that wait for them, a NIC's sent mbufs), embed.c (RDMA for an
 * application in the shard's loop, wn_dp_embed.h), tel.c (telemetry). The daemon around the
 * engine (options, port, control server, DMA mapping) is lib/node.
 */
#ifndef WN_DP_PRIV_H
#define WN_DP_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_epoll.h>
#include <rte_hash.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <rte_spinlock.h>
#include <rte_tailq.h>

#include "wn_cm.h"
#include "wn_cm_sidr.h"
#include "wn_dp.h"
#include "wn_dp_embed.h"
#include "wn_llp.h"
#include "wn_mem.h"
#include "wn_mpa_tcp.h"
#include "wn_net.h"
#include "wn_port.h"
#include "wn_queue.h"
#include "wn_rnic.h"
#include "wn_sctp.h"
#include "wn_server_dp.h"
#include "wn_tcp.h"
#include "wn_ud.h"

#define DP_BURST 32
/* Flushing of QPs in Error, deferred frees and deregistrations run at most this often. */
#define DP_TICK_US 1000u
/*
 * A stream held for a receive (rnr_hold_us) behind which the peer has closed waits at most
 * this long: an application that reposts as it completes (fio) posts within it, one that
 * stopped posting and waits for the disconnect (qperf's server: its client's next test
 * gives up after 5 s) gets it then, with the Terminate 'no buffer' for the Send.
 */
#define DP_RNR_EOF_US (1000u * 1000u)
/*
 * ... and so does a stream held for a QP whose consumer has stopped: completions wait in its
 * receive CQ and it has not polled one since the hold began. qperf's server stops polling
 * and posting at the end of its test while its client still Sends, then waits for the
 * disconnect; the client's FIN waits behind more Sends than the held stream's window takes,
 * so the cap above never sees it. A consumer that reposts as it completes (fio, qperf while
 * it runs) polls its CQ and keeps the full rnr_hold_us.
 */
#define DP_RNR_IDLE_US (1000u * 1000u)
/* Telemetry snapshot period. */
#define DP_TEL_PERIOD_US 100000u

/** lib.wn.dp (shard.c). */
extern int wn_dp_logtype;
#define DP_LOG(lvl, ...) rte_log(RTE_LOG_##lvl, wn_dp_logtype, "warpnicd dp: " __VA_ARGS__)
/** dp_qp::owner before a connection binds the QP. */
#define DP_NO_OWNER UINT16_MAX
/** Most QPs the telemetry snapshot lists. */
#define DP_TEL_QPS 64
/* neighbour entries in a shard's telemetry snapshot */
#define DP_TEL_NEIGH 32
/*
 * Messages below this many octets are copied into TCP rather than referenced: for them a
 * copy costs less than a token, its pins and the wait for the ACK (rdma_cost.sh).
 */
#define DP_TX_REF_MIN 2048

/** The lower layers of a shard (wn_dp::llp), by the control protocol's numbering less one. */
enum dp_llp { DP_LLP_MPA = 0, DP_LLP_SCTP, DP_LLP_N };

/** InfiniBand-style listeners of shard 0: MPA/TCP on IPv4 and on IPv6, DDP over SCTP. */
#define DP_IB_LISTENERS 3

/** Kind tag: first member of every object in wn_dp::objs. */
enum dp_obj_kind { DPO_CQ = 1, DPO_SRQ, DPO_QP, DPO_LISTEN, DPO_CONN };

struct dp_cq {
	enum dp_obj_kind kind;
	uint32_t handle;
	struct wn_server_dp_cq *d;
	struct wn_queue_ring prod;    /**< producer view (the engines write CQEs here) */
	rte_spinlock_t lock;          /**< serialises producers on several shards */
	_Atomic uint32_t refs;    /**< the table + QPs using it; 0: freed, DONE sent */
	bool local;                   /**< an embedded application's (embed.c): one shard, no
				       *   lock, not in the table, no DONE */
};

struct dp_srq {
	enum dp_obj_kind kind;
	uint32_t handle;
	struct wn_server_dp_srq *d;
	struct wn_queue_ring cons;
	rte_spinlock_t lock;
	_Atomic uint32_t refs;
	bool local;
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
	struct wn_ud_qp *ud;          /**< a UD QP's engine (dp_ud.c), from its creation */
	struct dp_conn *conn;
	struct wn_llp *llp;           /**< the stream the engine sends to (while active) */
	TAILQ_ENTRY(dp_qp) next;      /**< in dp->active while it has an engine */
	bool active;
	/*
	 * Ready polling (dp_obj.c): an active QP is polled while on dp->ready; one found idle is
	 * parked (its SQ's cons_idle set) and comes back when its client marks it in the
	 * shard's ready map (slot), its stream delivers or releases something, or the sweep
	 * finds it. A local QP (an embedded application's, embed.c) comes back when its
	 * application posts (wn_dp_post_send(), in the shard's own thread).
	 */
	TAILQ_ENTRY(dp_qp) rnext;
	bool on_ready;
	uint32_t slot;                /**< ready map slot + 1 (0: none, never parked) */
	uint16_t owner;               /**< shard of its connection (set by shard 0) */
	TAILQ_ENTRY(dp_qp) errnext;   /**< in dp->errq: in Error, postings to flush at the tick */
	bool in_errq;                 /**< in Error: its postings are flushed (its slot kept) */
	bool errq_linked;             /**< on dp->errq */
	bool local;                   /**< an embedded application's (embed.c) */
	bool rx_held;                 /**< its stream holds a Send waiting for a receive */
	uint64_t held_since;          /**< ... since then (wn_net_now_us()) */
	uint32_t held_cq_cons;        /**< ... and its receive CQ's consumer index then */
};

struct dp_conn;

/** Where an embedded connection's lib/cm events go (embed.c) instead of the control thread. */
typedef int (*dp_conn_event_fn)(struct wn_dp *dp, struct dp_conn *c, const struct wn_cm_event *e);

struct dp_listen {
	enum dp_obj_kind kind;        /**< DPO_LISTEN (wn_dp::cm_tab holds both kinds) */
	uint32_t id;
	struct wn_llp_listener *l[DP_LLP_N]; /**< on each lower layer it listens on (or NULL) */
	struct wn_ctl_addr src;
	struct wn_dp *dp;
	void *user;                   /**< embedded listener (embed.c): its events' @c user */
	bool embedded;
	dp_conn_event_fn event;       /**< embedded: its connections' event sink */
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
	uint32_t ib_qp;               /**< InfiniBand-style: the handle of the QP it connects */
	uint32_t ib_access;           /**< ... the QP's remote rights (WN_CTL_ACCESS_*) */
	TAILQ_ENTRY(dp_conn) next;
	TAILQ_ENTRY(dp_conn) reap_next; /**< in dp->reap: CLOSED and not held, to be freed */
	bool on_reap;
	/* embedded (embed.c): events go to the shard's queue, not the control thread */
	bool embedded;
	dp_conn_event_fn event;       /**< embedded: where its events go (else the control thread) */
	bool held;                    /**< the application holds the handle: not freed */
	void *user;                   /**< the application's pointer, in its events */
	struct dp_listen *elisten;    /**< passive: the embedded listener it came from */
};

/**
 * Messages a full ring could not take, oldest first (dp_msg.c): they go before anything newer
 * to the same ring, and the queue grows rather than dropping one.
 */
struct dp_msgq {
	void **v;
	uint32_t head, len, cap;
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
	/** The lower layers: MPA/TCP over this shard's TCP (lib/mpa), DDP over SCTP (lib/sctp) */
	struct wn_llp_proto *llp[DP_LLP_N];
	struct dp_qp_list active;
	struct dp_qp_list ready;      /**< active QPs to poll (dp_obj.c) */
	struct wn_queue_ready_map *rmap; /**< its ready map (bell.c) */
	struct dp_qp **slot_qp;       /**< ready map slot -> QP */
	uint32_t *slot_free;          /**< free slots (a stack) */
	uint32_t n_slot_free;
	struct dp_qp *sweep;          /**< the next parked QP the tick looks at */
	struct dp_qp_list errq;       /**< QPs in Error with postings to flush (the others
				       *   parked, brought back by their slots' marks) */
	struct dp_conn_list conns;
	struct dp_conn_list reap;     /**< connections to free at the next tick */
	struct dp_msgq ctl_wait;      /**< to the control thread (to_ctl full) */
	struct dp_msgq fwd_wait[DP_MAX_SHARDS]; /**< shard 0: to each shard (its ctl full) */
	/** Shard 0: the InfiniBand-style listeners (wn_dp_conf.ib_port; conn.c) */
	struct wn_llp_listener *ib_listen[DP_IB_LISTENERS];
	uint32_t next_token;
	uint64_t now;
	struct wn_dp_stats st;
	/* zero-copy transmit: MR deregistrations waiting for pins (dp_llp.c) */
	struct { uint32_t handle, stag, stag2; } *dereg; /**< shard 0: DONEs waiting for unpinning */
	uint32_t n_dereg, cap_dereg;
	uint64_t last_tick;
	struct dp_embed *emb;         /**< embedded applications' CM events (embed.c), or NULL */
	struct dp_ud *ud;             /**< shard 0: UD QPs, the UD port, rdma_cm's UDP port
				       *   space (dp_ud.c); NULL elsewhere */
	/* idle policy (idle.c), wake-ups of other shards (dp_steer.c, bell.c) */
	uint64_t last_work;           /**< when wn_dp_poll() last found work */
	uint32_t ctl_objs;            /**< objects made or gone the last wn_dp_poll() took */
	struct wn_queue_bell *bell;   /**< this shard's line of the group's bell page */
	int epfd;                     /**< its bell's eventfd and the port's Rx wake-up */
	struct rte_epoll_event bell_ev;
	struct wn_port_wake *wake;    /**< the port queue's Rx wake-up (NULL: naps) */
	uint32_t wake_mask;           /**< shards given frames this iteration: ring them */
	/* frames the port's full ring did not take yet: they go first (loop.c) */
	struct rte_mbuf *tx_hold[DP_BURST];
	uint16_t tx_hold_n;
	/* telemetry snapshot, refreshed by the lcore */
	pthread_mutex_t tel_lock;
	uint64_t tel_at;
	struct wn_dp_stats tel_dp;
	struct wn_net_stats tel_net;
	struct wn_tcp_stats tel_tcp;
	uint32_t tel_tcp_conns;       /**< TCP connections now (half-open ones included) */
	uint32_t tel_nconn;
	struct {
		uint32_t id, qpn;
		enum wn_cm_state state;
		struct wn_llp_info llp;
		const char *kind;         /**< its lower layer's name (wn_llp_kind) */
	} tel_conn[DP_TEL_QPS];
	/* lib/net: the addresses (state of their DAD) and the neighbour table */
	unsigned int tel_naddr, tel_nneigh;
	struct wn_netif_addr_info tel_addr[WN_NETIF_MAX_ADDRS + 1];
	struct wn_net_neigh_info tel_neigh[DP_TEL_NEIGH];
	bool link_seen;               /**< the link was up at the last iteration (loop.c) */
	uint32_t tel_nqp;
	struct {
		uint32_t handle, qpn, state, conn_state;
		const char *llp;          /**< its lower layer's name */
		struct wn_rnic_stats s;
	} tel_qp[DP_TEL_QPS];
};

/**
 * The link is up (wn_dp_conf.link): the port may be polled, sent to and its wake-up armed.
 * A port's link watcher closes the gate, then waits for every shard's quiescent state before
 * it stops the port, so a shard that saw the gate open may use the port until its next one.
 */
static inline bool
dp_link_up(const struct wn_dp *dp)
{
	return dp->c.link == NULL || __atomic_load_n(&dp->c.link->up, __ATOMIC_ACQUIRE) != 0;
}

/** The dataplane of one instance: its shards and what they share. */
struct wn_dp_group {
	struct wn_dp_conf c;
	uint32_t seq;                 /**< the process's dataplane number (DPDK object names) */
	uint16_t n;                   /**< shards */
	struct wn_dp *shard[DP_MAX_SHARDS];
	struct rte_hash *objs;        /**< handle → object; written by shard 0 only */
	struct rte_hash *cm_owner;    /**< shard 0 only: CM id → shard (DP_OWNER_LISTEN: all) */
	_Atomic uint32_t running;
	uint64_t dad_seed;            /**< the shards' DAD nonces (wn_netif_conf.dad_seed) */
	/* lcore doorbells (bell.c): the bell page clients map, one eventfd per shard */
	int bell_fd;
	struct wn_queue_bell *bells;
	struct wn_queue_ready_map *ready; /**< after the bell page: one per shard */
	int bell_efd[DP_MAX_SHARDS];
};

/** cm_owner value of a listener (it exists on every shard). */
#define DP_OWNER_LISTEN 0xffffu

/* ---- shared by the files of lib/dp, by file, top-down ---- */

/* dispatch.c: the control thread's messages */
/** Shard 0: a message from the control thread (handled, or forwarded to a shard). */
void wn_dp_dispatch(struct wn_dp *dp, struct wn_server_dp_msg *m);
/** A control message dispatched to this shard. */
void wn_dp_local_msg(struct wn_dp *dp, struct wn_server_dp_msg *m);

/* dp_steer.c: software steering, loopback */
/** Keep this shard's frames at the front of @p pkts, hand the others over. @return kept. */
uint16_t wn_dp_steer_burst(struct wn_dp *dp, struct rte_mbuf **pkts, uint16_t n);
/**
 * Segments to one of our own addresses go back into TCP input (or another shard's ring).
 * @return the packets left for the port, compacted at the front of @p pkts.
 */
uint16_t wn_dp_loopback(struct wn_dp *dp, struct rte_mbuf **pkts, uint16_t n);
/** Shard that owns the connection (local, remote) (wn_tcp_flow_steer). */
uint16_t wn_dp_steer(const struct wn_dp_group *g, const struct wn_ctl_addr *local,
		  const struct wn_ctl_addr *remote);
/** Shard index encoded in a passive connection's token. */
static inline uint16_t
dp_token_shard(uint32_t token)
{
	return (uint16_t)((token >> 24) & 0x7f);
}

/* conn.c: lib/cm's owner */
/** lib/cm of this shard. */
void wn_dp_conns_init(struct wn_dp *dp);
/** A new connection in the shard's list (zeroed). @return it, or NULL (ENOMEM). */
struct dp_conn *wn_dp_conn_new(struct wn_dp *dp);
/** A listener's incoming upcall (wn_llp_incoming_fn; @p arg: struct dp_listen). */
int wn_dp_conn_incoming(void *arg, struct wn_llp *llp);
/** A lower-layer endpoint as a control-protocol address. */
void wn_dp_ctl_addr_of(const struct wn_llp_ep *e, struct wn_ctl_addr *a);
/** CM messages from the control thread. @return LISTEN's 0 or -errno; 0 for the others. */
int wn_dp_cm_msg(struct wn_dp *dp, struct wn_server_dp_msg *m);
/** Detach a connection whose QP the ULP destroys (@p abort) or moves to Error. */
void wn_dp_conn_qp_gone(struct wn_dp *dp, struct dp_conn *c, bool abort);
/** A connection that may be freed now (CLOSED, not held) goes on the reap list. */
void wn_dp_conn_reap_mark(struct wn_dp *dp, struct dp_conn *c);
/** Free connections whose stream is gone (the reap list). */
void wn_dp_conns_reap(struct wn_dp *dp);
/** Free every connection (shutdown). */
void wn_dp_conns_free(struct wn_dp *dp);
/** Shard 0: the InfiniBand-style listener (wn_dp_conf.ib_port). @return 0 or -errno. */
int wn_dp_ib_listen(struct wn_dp *dp);
void wn_dp_ib_unlisten(struct wn_dp *dp);
/** Shard 0: a QP's InfiniBand-style connection starts (RTR) or its retry budget (RTS). */
void wn_dp_qp_ib(struct wn_dp *dp, struct wn_server_dp_msg *m);

/* dp_llp.c: the lower layer, zero-copy pins, MR deregistrations */
/**
 * This shard's lower layers: MPA/TCP, zero-copy if configured and possible, and DDP over
 * SCTP with its receive hook on the shard's interface. @return 0/-errno.
 */
int wn_dp_llp_create(struct wn_dp *dp);
/** Free them. */
void wn_dp_llp_free(struct wn_dp *dp);
/** The lower layer a connection of a client that asked for @p ctl_llp (wn_ctl_llp) uses. */
enum dp_llp wn_dp_llp_pick(const struct wn_dp *dp, uint32_t ctl_llp);
/** Listen on @p ep on every lower layer (upcalls to wn_dp_conn_incoming). @return 0/-errno. */
int wn_dp_llp_listen(struct wn_dp *dp, struct dp_listen *l, const struct wn_llp_ep *ep);
/** Stop listening on every lower layer. */
void wn_dp_llp_unlisten(struct wn_dp *dp, struct dp_listen *l);
/** The lower layers' timers. @return work done. */
unsigned int wn_dp_llp_poll(struct wn_dp *dp);
/** SCTP's packets out (TCP's go with lib/tcp's). @return packets. */
unsigned int wn_dp_llp_tx(struct wn_dp *dp);
/**
 * Shard 0: an MR deregistration; DONE once nothing references its memory: no pin on @p stag's
 * index nor on @p stag2's (0: none; the STag an ibv_rereg_mr took from it).
 */
void wn_dp_zc_dereg(struct wn_dp *dp, uint32_t handle, uint32_t stag, uint32_t stag2);
/** Shard 0: deregistrations whose pins went. Every tick. */
void wn_dp_zc_tick(struct wn_dp *dp);

/** @return true when zero-copy FPDUs of this shard wait for mbufs the tick can free (a NIC). */
bool wn_dp_dma_tx_pending(struct wn_dp *dp);
/** Free the mbufs the NIC has sent on this shard's queue (zero-copy region pins). */
void wn_dp_dma_tx_reclaim(struct wn_dp *dp);

/* dp_obj.c: CQs, SRQs, QPs and their engines */
/* The object of @p kind that @p handle names in this shard, or NULL. */
static inline void *
wn_dp_obj(struct wn_dp *dp, uint32_t handle, enum dp_obj_kind kind)
{
	void *p;

	if (rte_hash_lookup_data(dp->objs, &handle, &p) < 0 || *(enum dp_obj_kind *)p != kind)
		return NULL;
	return p;
}
/** Fill @p cq for descriptor @p d (one reference: the creator's). @return 0 or -EINVAL. */
int wn_dp_cq_init(struct dp_cq *cq, struct wn_server_dp_cq *d);
/** Fill @p qp for descriptor @p d with its queues (referenced). @return 0 or -EINVAL. */
int wn_dp_qp_init(struct dp_qp *qp, struct wn_server_dp_qp *d, struct dp_cq *scq, struct dp_cq *rcq,
	       struct dp_srq *srq);
/**
 * Tear a QP down on its owner shard (engine, queue references) and free it; @p ack: DONE to
 * the control thread.
 */
void wn_dp_qp_free(struct wn_dp *dp, struct dp_qp *qp, bool ack);
/** Shard 0: objects announced by the control thread. */
void wn_dp_obj_cq_create(struct wn_dp *dp, struct wn_server_dp_cq *d);
void wn_dp_srq_create(struct wn_dp *dp, struct wn_server_dp_srq *d);
void wn_dp_obj_qp_create(struct wn_dp *dp, struct wn_server_dp_qp *d);
/** Shard 0: a CQ or SRQ leaves the table; its last QP frees it and acknowledges. */
void wn_dp_queue_destroy(struct wn_dp *dp, uint32_t handle, enum dp_obj_kind kind);
/** Shard 0: take a QP out of the table for its owner to destroy. @return it, or NULL. */
struct dp_qp *wn_dp_qp_unlink(struct wn_dp *dp, uint32_t handle);
/** Destroy a QP taken out of the table (its connection detached) and acknowledge. */
void wn_dp_obj_qp_destroy(struct wn_dp *dp, struct dp_qp *qp);
/**
 * Create the QP's engine for a connection in RDMA mode on stream @p llp with the negotiated
 * @p p; @p event gets the engine's events. @return 0 or -errno.
 */
int wn_dp_qp_engine(struct wn_dp *dp, struct dp_qp *qp, struct dp_conn *conn, struct wn_llp *llp,
		 const struct wn_llp_params *p, uint8_t rtr_recv, wn_rnic_event_fn event);
/** The QP's connection is gone: flush (engine or rings) and detach. */
void wn_dp_qp_disconnect(struct wn_dp *dp, struct dp_qp *qp);
/**
 * The QP's connection never came (InfiniBand-style retry exhaustion): as wn_dp_qp_disconnect(),
 * its first send work request completing with @p status (WN_QUEUE_WC_RETRY_EXC_ERR).
 */
void wn_dp_qp_fail(struct wn_dp *dp, struct dp_qp *qp, uint8_t status);
/**
 * The QP's InfiniBand-style connection ended without a Terminate: its engine stops (no more
 * sending, the stream is not its any more) and keeps its queues, unflushed.
 */
void wn_dp_qp_park(struct wn_dp *dp, struct dp_qp *qp);
/**
 * The ULP moved the QP to RESET: its engine goes, what its rings hold is dropped without
 * completions, and it may be connected again.
 */
void wn_dp_qp_reset(struct wn_dp *dp, struct dp_qp *qp);
/** The QP's engine refused a Send for want of a receive: its stream holds it (rnr_hold_us). */
void wn_dp_qp_rx_hold(struct wn_dp *dp, struct dp_qp *qp);
/** A held stream: offer its Send again once a receive is posted, or give up. @return work. */
unsigned int wn_dp_qp_rx_retry(struct wn_dp *dp, struct dp_qp *qp);
/** Poll @p qp from the next iteration on (it has work, or may have). */
void wn_dp_qp_ready(struct wn_dp *dp, struct dp_qp *qp);
/** Poll the ready QPs (the SQs their clients marked, and those with work). @return work. */
unsigned int wn_dp_qps_poll(struct wn_dp *dp);
/** Every tick: look at some parked QPs (a mark a client failed to make). */
void wn_dp_qps_sweep(struct wn_dp *dp);
/** Free the shard's ready slots. */
void wn_dp_qps_free(struct wn_dp *dp);
/** Flush what clients posted to QPs in Error (every tick). */
void wn_dp_errq_flush(struct wn_dp *dp);
/** Shard 0: a UD QP's new state and Q_Key (QP_MODIFY's u.ud). */
void wn_dp_qp_ud_modify(struct wn_dp *dp, struct dp_qp *qp, uint32_t state, uint32_t qkey);
/** A CQ's notification (its eventfd); @p dp for the counter, or NULL. */
void wn_dp_cq_notify(struct wn_dp *dp, struct wn_queue_ring *ring);
/** Free every object (after the loops stopped). */
void wn_dp_objs_free(struct wn_dp_group *g);

/* dp_ud.c: UD QPs and rdma_cm's UDP port space (shard 0) */
struct dp_ud;
/** Shard 0: the UD port bound, the SIDR exchanges, the QP number table. @return 0/-errno. */
int wn_dp_ud_create(struct wn_dp *dp);
void wn_dp_ud_free(struct wn_dp *dp);
/** The largest UD message: the largest IB MTU that fits the MTU with its headers. */
uint32_t wn_dp_ud_max_msg(const struct wn_dp *dp);
/** A UD QP's number in the table datagrams find it by. @return 0 or -errno. */
int wn_dp_ud_qp_add(struct wn_dp *dp, struct dp_qp *qp);
/** ... and out of it (@p dp NULL: nothing). */
void wn_dp_ud_qp_del(struct wn_dp *dp, struct dp_qp *qp);
/** A UD QP's Sends out, up to @p budget (RTS), or its postings flushed (Error). @return how many. */
unsigned int wn_dp_ud_tx(struct wn_dp *dp, struct dp_qp *qp, unsigned int budget);
/** A CM message of a UDP id (or a SIDR token): handled, @return true (LISTEN's result in @p rc). */
bool wn_dp_ud_cm_msg(struct wn_dp *dp, struct wn_server_dp_msg *m, int *rc);
/** The SIDR timers (every tick). */
void wn_dp_ud_tick(struct wn_dp *dp);
/** When wn_dp_ud_tick() has work next (UINT64_MAX: never). */
uint64_t wn_dp_ud_next_timer(const struct wn_dp *dp);
/** The SIDR counters into @p st. */
void wn_dp_ud_stats(const struct wn_dp *dp, struct wn_dp_stats *st);

/* bell.c: the shards' doorbells */
/** The group's bell page and one eventfd per shard. @return 0 or -errno. */
int wn_dp_bells_create(struct wn_dp_group *g);
void wn_dp_bells_free(struct wn_dp_group *g);
/** Wake shard @p idx if it sleeps, after giving it work (lib/queue's bell rule). */
void wn_dp_wake(struct wn_dp_group *g, uint16_t idx);
/** Wake the shards wn_dp_steer_burst() handed frames to (wake_mask). */
void wn_dp_wake_handoffs(struct wn_dp *dp);

/* idle.c: the run loop's wake-up sources */
/** The shard's epoll set: its bell, its port queue's Rx wake-up. @return 0 or -errno. */
int wn_dp_idle_start(struct wn_dp *dp);
void wn_dp_idle_stop(struct wn_dp *dp);
/**
 * Sleep until a wake-up source fires or the budget runs out (announce, poll once more,
 * wait). @return false if it did not sleep (work, or a timer due).
 */
bool wn_dp_idle_sleep(struct wn_dp *dp);

/* dp_msg.c: messages to the control thread; rings that wait rather than drop */
/**
 * Put @p m on @p r behind what @p q holds (@p q keeps it while @p r is full). @return 1 when
 * it went on the ring now, 0 when it waits, -ENOMEM (not queued: the caller frees it).
 */
int wn_dp_msgq_post(struct wn_dp *dp, struct dp_msgq *q, struct rte_ring *r, void *m);
/** Move what @p q holds onto @p r while it has room. @return messages moved. */
unsigned int wn_dp_msgq_flush(struct dp_msgq *q, struct rte_ring *r);
/** Free what @p q holds (with free()). */
void wn_dp_msgq_free(struct dp_msgq *q);
/** Messages that waited for the control thread's ring. @return messages moved. */
unsigned int wn_dp_ctl_flush(struct wn_dp *dp);
/** @return true when messages of this shard wait for room in a ring. */
bool wn_dp_msgs_waiting(const struct wn_dp *dp);
/** Send a CM event for CM id @p id to the control thread. */
void wn_dp_cm_event_post(struct wn_dp *dp, uint32_t id, const struct wn_ctl_cm_event *ev);
/** The same with the IRD/ORD MPA negotiated (ESTABLISHED). */
void wn_dp_cm_event_post_neg(struct wn_dp *dp, uint32_t id, const struct wn_ctl_cm_event *ev,
		     uint32_t ird, uint32_t ord);
/** Tell the control thread an object is released. */
void wn_dp_ctl_done(struct wn_dp *dp, uint32_t handle);
/** Tell the control thread listener @p id is in place everywhere (0) or not (-errno). */
void wn_dp_ctl_listening(struct wn_dp *dp, uint32_t id, int status);
/**
 * An async event (enum wn_ctl_async_type) about the QP, SRQ or CQ @p handle for the client
 * that owns it (WN_SERVER_DP_ASYNC_EVENT); @p vendor_err: a QP event's Terminate cause.
 */
void wn_dp_async_event(struct wn_dp *dp, uint32_t handle, uint32_t event, uint32_t vendor_err);
/** QP @p handle went to Error by itself (its InfiniBand-style connection ended or never came). */
void wn_dp_qp_error(struct wn_dp *dp, uint32_t handle);

/* embed.c: objects and connections of an application on the shard's lcore */
/** Free the shard's embedded state (queued events). */
void wn_dp_embed_free(struct wn_dp *dp);

/* tel.c */
/** Refresh the shard's telemetry snapshot (its lcore). */
void wn_dp_tel_refresh(struct wn_dp *dp);
/** Telemetry no longer reads @p g. */
void wn_dp_tel_unregister(struct wn_dp_group *g);

#endif /* WN_DP_PRIV_H */
