/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RNIC modes' common part (rnic.c): a warpnicd client (lib/client) with one control
 * connection and --qps data connections to the peer, all set up with the CM; the control
 * messages that drive each size; posting and polling through the shared rings.
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
 *   the measurement (modes decide who does what)
 *   END {count: operations done} → server checks what it received → RESULT {status, count}
 * and BYE at the end. Both sides check their receive halves against the pattern of the
 * size's seed, so a dataplane that moves nothing, or the wrong octets, fails the run.
 */
#ifndef WN_PERF_RNIC_H
#define WN_PERF_RNIC_H

#include <stdbool.h>
#include <stdint.h>

#include "wn_client.h"

#include "perf.h"

/** Largest message the RNIC modes move. */
#define PERF_RNIC_MAX_SIZE (8u << 20)
/** Most data QPs. */
#define PERF_RNIC_MAX_QPS 64
/** Control receive slots (and CQ entries of the control QP). */
#define PERF_CTL_SLOTS 16
/** Octets of one control slot. */
#define PERF_CTL_SLOT 64
/** Receives a lat-mode side keeps posted, and the credit receives of a send_bw sender. */
#define PERF_SMALL_RQ 16

#define PERF_MAGIC 0x574e504du   /* "WNPM" */
#define PERF_VERSION 1

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

struct perf_conn {
	uint32_t index;          /**< 0: control; else data connection index + 1 */
	uint32_t id;             /**< CM id */
	struct wn_client_qp *qp;
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
};

struct perf_rnic_ops;

struct perf_rnic {
	const struct wn_perf_params *p;
	const struct perf_rnic_ops *ops;
	struct wn_client *cl;
	struct wn_ctl_device_attr dev;
	uint32_t pd;
	struct wn_client_cm_channel *ch;
	uint32_t listen_id;
	uint32_t qps, depth, max_size;
	uint32_t sq_depth, rq_depth;
	int notify[2];           /**< control CQ notification pipe */
	struct wn_client_cq *ctl_cq, *scq, *rcq;
	struct perf_conn ctl;
	struct perf_conn conn[PERF_RNIC_MAX_QPS];
	uint8_t *ctl_mem;
	size_t ctl_len;
	struct wn_client_mr *ctl_mr;
	uint8_t *mem;
	size_t mem_len;
	struct wn_client_mr *mr;
	bool server;
	unsigned int ctl_tx_next;     /**< next control transmit slot */
	unsigned int ctl_outstanding; /**< control Sends not completed */
	struct perf_msg ctl_q[PERF_CTL_SLOTS]; /**< received, not yet consumed */
	unsigned int ctl_q_head, ctl_q_n;
	struct wn_queue_cqe wc_err;   /**< error completion not reported yet (status != 0) */
};

/** One RNIC mode. */
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
	/** Client: the measurement; fills @p row and end->count. */
	int (*client)(struct perf_rnic *r, const struct perf_msg *start,
		      const struct perf_msg *ready, struct perf_msg *end, struct wn_perf_row *row);
	/** Server: from READY until the client's END, which it stores in @p end. */
	int (*server)(struct perf_rnic *r, const struct perf_msg *start, struct perf_msg *end);
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
int perf_post_send(struct perf_conn *c, uint8_t opcode, uint8_t flags, const void *laddr,
		   uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t wr_id);
/** Post up to @p n data WRs (the mode's opcode, @p size) on @p c; @return posted or -EIO. */
int perf_post_data(struct perf_rnic *r, struct perf_conn *c, uint8_t opcode, uint32_t size,
		   uint32_t n);
/** Post one receive of @p len octets at @p addr. @return 0, -EAGAIN, -EIO. */
int perf_post_recv(struct perf_conn *c, void *addr, uint32_t len, uint32_t lkey,
		   uint64_t wr_id);
/** Repost the receive a data CQE consumed (rx half, or credit slot). @return 0 or -errno. */
int perf_repost(struct perf_rnic *r, const struct wn_queue_cqe *e);

/** Poll a CQ; an error completion is reported and returned as -EIO. @return n or -errno. */
int perf_poll(struct perf_rnic *r, struct wn_client_cq *cq, struct wn_queue_cqe *e, int n);
/** @return the data connection a CQE's wr_id names, or NULL. */
struct perf_conn *perf_conn_of(struct perf_rnic *r, uint64_t wr_id);

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
