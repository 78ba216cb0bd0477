/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RNIC modes' common part (perf_rnic.c): one control connection and --qps data connections to
 * the peer, all set up with the CM, on a device (struct perf_dev_ops: a warpnicd through
 * lib/client, or the dataplane shard the benchmark runs in, --rtc); the control messages that
 * drive each size; posting and polling through the lib/queue rings; the measurement loop that
 * calls the mode's step every iteration (struct perf_rnic_ops, testpmd's forwarding engines).
 *
 * Connections: the client connects the control QP first; its MPA private data (struct
 * perf_cm_pd) says which mode, how many QPs, the depth and the largest size, so the server
 * can size its resources (or reject a mismatch with a reason). Then each data QP, whose
 * private data in both directions carries the address and STag of the side's receive half.
 *
 * Memory: one MR per side holds, for data connection i, a receive half and a transmit half of
 * max_size octets each (rx at 2i * max, tx at (2i + 1) * max). Peers write/read/send into
 * rx halves; the pattern is sent from tx halves. A second, small MR holds the control
 * message slots and the send_bw credit words.
 *
 * Per size (client → server over the control QP, Send/Recv):
 *   START {size, iters, seed} → server prepares its buffers → READY
 *   the measurement (modes decide who does what; bw modes: ALIVE about every second)
 *   END {count: operations done} → server checks what it received → RESULT {status, count}
 * and BYE at the end. Both sides check their receive halves against the pattern of the
 * size's seed, so a dataplane that moves nothing, or the wrong octets, fails the run.
 */
#ifndef WN_PERF_RNIC_H
#define WN_PERF_RNIC_H

#include <stdbool.h>
#include <stdint.h>

#include "wn_ctl.h"
#include "wn_queue.h"

#include "perf.h"

/** Largest message the RNIC modes move. */
#define PERF_RNIC_MAX_SIZE (8u << 20)
/** Most data QPs. */
#define PERF_RNIC_MAX_QPS WN_PERF_MAX_QPS
/** Control receive slots (and CQ entries of the control QP). */
#define PERF_CTL_SLOTS 16
/** Octets of one control slot. */
#define PERF_CTL_SLOT 64
/** Receives a lat-mode side keeps posted, and the credit receives of a send_bw sender. */
#define PERF_SMALL_RQ 16

#define PERF_MAGIC 0x574e504du   /* "WNPM" */
#define PERF_VERSION 2

/** wr_id kinds (low 8 bits; bits 8..31: connection index; 32..63: slot). */
enum perf_wr_kind {
	PERF_WR_CTL_RECV = 1,
	PERF_WR_CTL_SEND,
	PERF_WR_DATA,       /**< Write, Read or Send of the measurement */
	PERF_WR_RECV,       /**< receive of a Send of the measurement */
	PERF_WR_CREDIT,     /**< send_bw: credit Send (receiver) or its receive (sender) */
};

static inline uint64_t
perf_wr_id(uint32_t conn, enum perf_wr_kind kind, uint32_t slot)
{
	return (uint64_t)slot << 32 | (uint64_t)conn << 8 | (uint64_t)kind;
}

static inline enum perf_wr_kind
perf_wr_kind_of(uint64_t wr_id)
{
	return (enum perf_wr_kind)(wr_id & 0xff);
}

static inline uint32_t
perf_wr_conn(uint64_t wr_id)
{
	return (uint32_t)(wr_id >> 8) & 0xffffff;
}

static inline uint32_t
perf_wr_slot(uint64_t wr_id)
{
	return (uint32_t)(wr_id >> 32);
}

/** MPA private data of the connections. */
struct perf_cm_pd {
	uint32_t magic;
	uint16_t version;
	uint16_t index;      /**< 0: the control connection; 1..qps: data */
	int32_t status;      /**< server's answer: 0, or -errno with @c reason */
	uint32_t qps;        /**< control: data QPs that follow */
	uint32_t depth;      /**< control: outstanding WRs per QP */
	uint32_t max_size;   /**< control: largest size of the run */
	uint32_t bufs;       /**< control: data buffer pairs (--buffers) */
	uint64_t addr;       /**< data: the sender's receive half */
	uint32_t rkey;
	uint32_t len;        /**< data, server's answer: send_bw credits (receives posted) */
	char mode[16];       /**< control: the client's --mode */
	char reason[64];     /**< rejection: why */
};

enum perf_msg_type {
	PERF_MSG_START = 1,
	PERF_MSG_READY,
	PERF_MSG_END,
	PERF_MSG_RESULT,
	PERF_MSG_BYE,
	/** client → server about once a second of a bw measurement: a Write or Read server sees
	 *  no other sign of progress before END */
	PERF_MSG_ALIVE,
};

/** Control message (one Send on the control QP). */
struct perf_msg {
	uint32_t magic;
	uint16_t type;     /**< enum perf_msg_type */
	uint16_t rsvd;
	int32_t status;    /**< READY/RESULT: 0 or -errno */
	uint32_t size;     /**< START: message size */
	uint64_t iters;    /**< START: operations per QP (UINT64_MAX: until the last tag) */
	uint64_t seed;     /**< START: pattern seed */
	uint64_t count;    /**< END: operations done; RESULT: what the server counted */
	uint64_t aux;      /**< END: lat modes' last tag; RESULT: first bad offset + 1 */
	uint32_t ms;       /**< START: the client's time budget in ms (0: none) */
	uint32_t rsvd2;
};

struct perf_rnic;
struct perf_conn;

/** A QP or CQ of the device (perf_dev_ops); the device's own object behind @c h. */
struct perf_qp {
	void *h;
	uint32_t handle;         /**< lib/client: the QP handle the CM binds */
};

struct perf_cq {
	void *h;
};

/** Device limits the modes size their queues by (wn_ctl_device_attr's). */
struct perf_dev_attr {
	uint32_t max_qp_wr, max_cqe, max_qp_rd_atom, max_qp_init_rd_atom;
};

/**
 * The RNIC the modes drive: a warpnicd (or the embedded dataplane's control thread) through
 * lib/client (dev_client.c), or the dataplane shard the mode runs in, run to completion
 * (dev_rtc.c, --rtc: lib/dp's wn_dp_embed.h). Connection ids are small numbers of the
 * device; events use the control protocol's struct wn_ctl_cm_event.
 */
struct perf_dev_ops {
	const char *name;
	/** Device limits, PD, CM channel. @return 0 or -errno (message printed). */
	int (*open)(struct perf_rnic *r);
	/** Disconnect everything, let the connections close (their FINs), free. */
	void (*close)(struct perf_rnic *r);
	/** Register [addr, addr + len) for local and remote access. @return 0, -errno. */
	int (*reg_mr)(struct perf_rnic *r, void *addr, size_t len, uint32_t *key);
	/** A CQ; @p notify: its completions can wake wait(). NULL with errno. */
	struct perf_cq *(*cq_create)(struct perf_rnic *r, uint32_t depth, bool notify);
	/** A QP for connection @p c (sizes from @p q). NULL with errno. */
	struct perf_qp *(*qp_create)(struct perf_rnic *r, const struct wn_ctl_create_qp_req *q,
				     struct perf_cq *scq, struct perf_cq *rcq);
	/** Posting: free slots (or -errno), a slot past them, publish @p n of them. */
	int64_t (*wq_begin)(struct perf_qp *qp, bool rq);
	void *(*wq_slot)(struct perf_qp *qp, bool rq, uint32_t i);
	void (*wq_end)(struct perf_qp *qp, bool rq, uint32_t n);
	/** Take up to @p n completions. @return n or -errno. */
	int (*poll_cq)(struct perf_cq *cq, struct wn_queue_cqe *e, int n);
	/** Server: listen on @p a. @return 0 or -errno. */
	int (*listen)(struct perf_rnic *r, const struct wn_ctl_addr *a, uint32_t backlog);
	/** Client: a connection id for @p c resolved to @p dst (before the QP). */
	int (*resolve)(struct perf_rnic *r, struct perf_conn *c, const struct wn_ctl_addr *dst);
	/** Client: connect @p c (id, QP) to @p dst. @return 0 or -errno. */
	int (*connect)(struct perf_rnic *r, struct perf_conn *c, const struct wn_ctl_addr *dst,
		       const struct wn_ctl_conn_param *cp);
	/** Server: accept request @p id on @p c's QP, or reject it (@p c NULL). */
	int (*answer)(struct perf_rnic *r, uint32_t id, struct perf_conn *c,
		      const struct wn_ctl_conn_param *cp);
	/** The next CM event within @p timeout_ms (-1: none). @return 0, -ETIMEDOUT, -errno. */
	int (*cm_next)(struct perf_rnic *r, struct wn_ctl_cm_event *ev, int timeout_ms);
	/**
	 * Nothing to do: let time pass until something may have happened (lib/client: spin a
	 * little, then sleep on @p cq's notification; run to completion: one iteration of the
	 * shard). @return 0 or -errno.
	 */
	int (*wait)(struct perf_rnic *r, struct perf_cq *cq, uint32_t *spins);
	/**
	 * The measurement loop around the engine's step (testpmd's forwarding loop): before the
	 * step (run to completion: receive, wn_dp_poll_rx) and after it (wn_dp_poll_tx;
	 * lib/client: yield now and then when the step found nothing, @p idle).
	 */
	void (*loop_rx)(struct perf_rnic *r);
	void (*loop_tx)(struct perf_rnic *r, bool idle);
};

extern const struct perf_dev_ops perf_dev_client;
extern const struct perf_dev_ops perf_dev_rtc;

struct perf_conn {
	uint32_t index;          /**< 0: control; else data connection index + 1 */
	uint32_t id;             /**< CM id (the device's) */
	struct perf_qp *qp;
	uint8_t *rx, *tx;        /**< this connection's halves of the data MR */
	uint64_t raddr;          /**< the peer's receive half */
	uint32_t rkey;
	uint32_t outstanding;    /**< signaled WRs posted and not completed */
	uint64_t done;           /**< operations completed in this measurement */
	uint64_t posted;         /**< operations posted in this measurement */
	/* send_bw flow control: cumulative counts over the whole run */
	uint64_t sent, credits;  /**< sender: Sends posted, receives the peer posted */
	uint64_t received, reposted, credit_sent; /**< receiver */
	uint64_t *credit_slot;   /**< credit word in the control MR */
	uint32_t bad_len;        /**< receptions whose length was not the size */
	bool due;                /**< bw client: on the run's due list */
};

struct perf_rnic_ops;

/** The state of one measurement between its engine's steps (the modes' own). */
struct perf_run {
	double t0, t_last, last_progress, deadline, limit;
	double alive_at;          /**< bw client: when the last ALIVE went */
	uint64_t total, iter, got;
	/* bw client: the QPs that may post (r->due[0..due_n)), the WRs outstanding on all
	 * QPs, the QPs that have not posted all their iterations: a step costs what completed,
	 * not the number of QPs */
	uint32_t due_n, unposted;
	uint64_t outstanding;
	bool open, have_end;
	int phase;
	uint8_t tag;
	uint64_t tstart;
	struct wn_perf_lat lat;
	struct perf_msg end;      /**< server: the client's END */
};

struct perf_rnic {
	const struct wn_perf_params *p;
	const struct perf_rnic_ops *ops;
	const struct perf_dev_ops *dv;
	void *dvs;               /**< the device's state */
	struct perf_dev_attr dev;
	uint32_t qps, depth, max_size, bufs;
	uint32_t sq_depth, rq_depth;
	struct perf_cq *ctl_cq, *scq, *rcq;
	struct perf_conn ctl;
	struct perf_conn conn[PERF_RNIC_MAX_QPS];
	uint32_t due[PERF_RNIC_MAX_QPS];  /**< struct perf_run @c due_n */
	uint8_t *ctl_mem;
	size_t ctl_len;
	uint32_t ctl_key;
	uint8_t *mem;
	size_t mem_len;
	uint32_t key;
	bool server;
	bool idle;                    /**< the last step found nothing to do */
	unsigned int ctl_tx_next;     /**< next control transmit slot */
	unsigned int ctl_outstanding; /**< control Sends not completed */
	struct perf_msg ctl_q[PERF_CTL_SLOTS]; /**< received, not yet consumed */
	unsigned int ctl_q_head, ctl_q_n;
	struct wn_queue_cqe wc_err;   /**< error completion not reported yet (status != 0) */
	struct perf_run run;
};

/**
 * One RNIC mode, a forwarding engine in testpmd's sense: per size, prepare (both sides),
 * then begin and a step that the measurement loop calls every iteration (between the
 * device's loop_rx and loop_tx: inside the dataplane's loop when run to completion) until it
 * says done, then end (client) and check (both).
 */
struct perf_rnic_ops {
	const char *name;
	const char *title;
	bool lat;            /**< ping-pong on data QP 0 */
	bool send;           /**< the data path uses Sends and posted receives */
	uint8_t opcode;      /**< WN_QUEUE_WR_* of the measured operation */
	uint32_t def_size;
	uint64_t def_iters;
	/** Both sides: buffers for a size, before START (client, @p ready NULL) / READY. */
	int (*prepare)(struct perf_rnic *r, const struct perf_msg *start, struct perf_msg *ready);
	/** Client: the measurement starts (r->run is zeroed). @return 0 or -errno. */
	int (*client_begin)(struct perf_rnic *r, const struct perf_msg *start);
	/** Client: one iteration. @return 0 (go on), 1 (done), -errno. Sets r->idle. */
	int (*client_step)(struct perf_rnic *r, const struct perf_msg *start);
	/** Client: the measurement is over; fill @p row and end->count. */
	int (*client_end)(struct perf_rnic *r, const struct perf_msg *start, struct perf_msg *end,
			  struct wn_perf_row *row);
	/** Server: from READY on (r->run is zeroed). */
	int (*server_begin)(struct perf_rnic *r, const struct perf_msg *start);
	/** Server: one iteration; done (1) once the client's END is in r->run.end. */
	int (*server_step)(struct perf_rnic *r, const struct perf_msg *start);
	/** Both: check the receive halves after END; 0 or -EIO (@p aux: offset + 1). */
	int (*check)(struct perf_rnic *r, const struct perf_msg *start, const struct perf_msg *end,
		     uint64_t *aux);
};

/** The parse and run callbacks every RNIC mode table uses. */
int perf_rnic_parse(struct wn_perf_params *p, const struct perf_rnic_ops *ops);
int perf_rnic_run(const struct wn_perf_params *p, const struct perf_rnic_ops *ops);

/**
 * Define the warpnic-perf mode wn_perf_mode_<nm> over the ops table nm_ops (parse and run
 * through perf_rnic_parse/perf_rnic_run).
 */
#define PERF_RNIC_MODE(nm, helptext)                                                            \
	static int                                                                              \
	nm##_parse(struct wn_perf_params *p)                                                    \
	{                                                                                       \
		return perf_rnic_parse(p, &nm##_ops);                                           \
	}                                                                                       \
	static int                                                                              \
	nm##_run(const struct wn_perf_params *p)                                                \
	{                                                                                       \
		return perf_rnic_run(p, &nm##_ops);                                             \
	}                                                                                       \
	const struct wn_perf_mode wn_perf_mode_##nm = {                                         \
		.name = #nm,                                                                    \
		.help = helptext,                                                               \
		.rnic = true,                                                                   \
		.parse = nm##_parse,                                                            \
		.run = nm##_run,                                                                \
	}

/** Post one send-queue WR on @p c. @return 0, -EAGAIN (SQ full), -EIO. */
int perf_post_send(struct perf_rnic *r, struct perf_conn *c, uint8_t opcode, uint8_t flags,
		   const void *laddr, uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey,
		   uint64_t wr_id);
/** Post up to @p n data WRs (the mode's opcode, @p size) on @p c; @return posted or -EIO. */
int perf_post_data(struct perf_rnic *r, struct perf_conn *c, uint8_t opcode, uint32_t size,
		   uint32_t n);
/** Post one receive of @p len octets at @p addr. @return 0, -EAGAIN, -EIO. */
int perf_post_recv(struct perf_rnic *r, struct perf_conn *c, void *addr, uint32_t len,
		   uint32_t lkey, uint64_t wr_id);
/** Repost the receive a data CQE consumed (rx half, or credit slot). @return 0 or -errno. */
int perf_repost(struct perf_rnic *r, const struct wn_queue_cqe *e);

/** Poll a CQ; an error completion is reported and returned as -EIO. @return n or -errno. */
int perf_poll(struct perf_rnic *r, struct perf_cq *cq, struct wn_queue_cqe *e, int n);
/** @return the data connection a CQE's wr_id names, or NULL. */
struct perf_conn *perf_conn_of(struct perf_rnic *r, uint64_t wr_id);

/**
 * Wait for CM event @p want of connection @p id; its connection errors end the wait
 * (-ECONNREFUSED, with a message). @return 0 or -errno.
 */
int perf_cm_wait(struct perf_rnic *r, uint32_t id, uint32_t want, struct wn_ctl_cm_event *ev);

/** Send a control message. @return 0 or -errno. */
int perf_ctl_send(struct perf_rnic *r, const struct perf_msg *m);
/**
 * Wait up to @p secs for the next control message; it must be of type @p want (0: any).
 * @return 0, -ETIMEDOUT, -EPROTO (another type), -EIO (the control QP failed).
 */
int perf_ctl_recv(struct perf_rnic *r, struct perf_msg *m, uint16_t want, double secs);
/** Non-blocking: @return 1 and *m when a control message is there, 0 if none, -errno. */
int perf_ctl_try_recv(struct perf_rnic *r, struct perf_msg *m);

/** Fill the tx halves of the data QPs used with the pattern; rx: the pattern too, or 0. */
void perf_buffers_reset(struct perf_rnic *r, uint32_t size, uint64_t seed, bool pattern_rx);
/** Check the rx halves [0, len) of the data QPs used; @return 0 or -EIO (@p aux set). */
int perf_check_rx(struct perf_rnic *r, uint32_t len, uint64_t seed, uint64_t *aux);
/** @return the data QPs a mode uses (lat modes: 1). */
uint32_t perf_nconn(const struct perf_rnic *r);

/** Give the CPU to whoever shares it (sched_yield). */
void perf_yield(void);

/** Busy-poll courtesy: after a run of empty polls, yield the CPU to whoever shares it. */
static inline void
perf_relax(uint32_t *spins)
{
	if (++*spins % 64 == 0)
		perf_yield();
}

#endif /* WN_PERF_RNIC_H */
