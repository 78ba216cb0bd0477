/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * rdma_cm's UDP port space (RDMA_PS_UDP) between warpnic instances: the service-ID resolution
 * InfiniBand does with SIDR REQ and SIDR REP (IBTA 12.11), carried in warpnic's datagrams
 * (wn_wire_ud.h). The active side learns the QP number and Q_Key of the passive side's UD
 * QP; nothing is connected, and nothing more is exchanged.
 *
 * One exchange per entry, each in one state:
 *  - REQ_SENT (active, keyed by its CM id): the REQ went out; it goes out again every
 *    @c retry_us until a REP with its request id comes from the peer, or @c max_tries went
 *    out: then the outcome (@c done: the REP's status and contents, or -ETIMEDOUT).
 *  - REQ_RCVD (passive, keyed by a token the library makes): the owner was told of the
 *    request (@c request) and named it to its ULP; a retransmitted REQ is ignored; the ULP
 *    accepts (the QP number, Q_Key and private data go back in an OK REP) or rejects
 *    (status REJECT, as does destroying the request unanswered).
 *  - REPLIED (passive): the REP is kept @c hold_us for REQs retransmitted before it arrived,
 *    each answered with it again; then the entry goes. A request no listener takes is
 *    answered at once (status UNSUPPORTED) and kept this way too.
 *
 * Plain C without EAL or I/O: the owner puts the messages it is given on the wire, hands
 * received SIDR messages in, and runs wn_cm_sidr_poll() for the timers.
 *
 * Thread safety: a table is used by one lcore.
 */
#ifndef WN_CM_SIDR_H
#define WN_CM_SIDR_H

#include <stdbool.h>
#include <stdint.h>

#include "wn_llp.h"
#include "wn_wire_ud.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Passive keys: high bits 11, never a CM id handle nor a connection's token (lib/dp). */
#define WN_CM_SIDR_TOKEN 0xc0000000u
#define WN_CM_SIDR_TOKEN_MASK 0xc0000000u

/** @return true when @p key is a passive SIDR exchange's token. */
static inline bool
wn_cm_sidr_is_token(uint32_t key)
{
	return (key & WN_CM_SIDR_TOKEN_MASK) == WN_CM_SIDR_TOKEN;
}

/** States of an exchange. */
enum wn_cm_sidr_state {
	WN_CM_SIDR_REQ_SENT = 1,
	WN_CM_SIDR_REQ_RCVD,
	WN_CM_SIDR_REPLIED,
};

struct wn_cm_sidr;

/** What the library asks of its owner. */
struct wn_cm_sidr_ops {
	/** Send @p m from @p local to @p peer (addresses; the UD port is the owner's). */
	void (*send)(void *arg, const struct wn_ip_addr *local, const struct wn_ip_addr *peer,
		     const struct wn_ud_msg *m);
	/**
	 * An active exchange is over: @p status 0 with the passive QP's number and Q_Key and the
	 * private data in @p rep; a SIDR status (enum wn_ud_sidr_status, > 0) with @p rep; or
	 * -ETIMEDOUT with @p rep NULL. The entry is gone when this returns.
	 */
	void (*done)(void *arg, uint32_t id, int status, const struct wn_ud_msg *rep);
	/**
	 * A new request from @p peer (the REQ in @p req: port space, ports, private data) to
	 * @p local, known to the ULP by @p token from now on. @return 0 (the ULP will answer),
	 * or a SIDR status to answer with at once (WN_UD_SIDR_UNSUPPORTED: no listener).
	 */
	int (*request)(void *arg, uint32_t token, const struct wn_ip_addr *local,
		       const struct wn_ip_addr *peer, const struct wn_ud_msg *req);
};

/** Configuration; zero fields take their defaults. */
struct wn_cm_sidr_conf {
	uint32_t retry_us;  /**< REQ sent again after this (0: 500 ms) */
	uint32_t max_tries; /**< REQs sent in all before -ETIMEDOUT (0: 8) */
	uint32_t hold_us;   /**< a REP kept for retransmitted REQs (0: 10 s) */
	uint32_t max_ents;  /**< exchanges at once (0: 1024); a REQ beyond is dropped */
	const struct wn_cm_sidr_ops *ops;
	void *arg;
};

/** Counters. */
struct wn_cm_sidr_stats {
	uint64_t req_tx, req_rx, rep_tx, rep_rx;
	uint64_t req_retx;     /**< REQs sent again (timer) */
	uint64_t req_dup;      /**< retransmitted REQs received (ignored, or answered again) */
	uint64_t rep_stray;    /**< REPs no exchange waits for */
	uint64_t timeouts;     /**< active exchanges that got no REP */
	uint64_t unsupported;  /**< requests no listener took */
	uint64_t full;         /**< requests or connects refused: max_ents exchanges at once */
};

/** @return a table, or NULL with errno EINVAL (no ops) or ENOMEM. */
struct wn_cm_sidr *wn_cm_sidr_create(const struct wn_cm_sidr_conf *conf);

/** Free it and every exchange (no messages, no outcomes). NULL: no-op. */
void wn_cm_sidr_free(struct wn_cm_sidr *t);

/**
 * Start an active exchange for CM id @p id: a REQ from @p local to @p peer for port
 * @p dport of port space @p ps, from port @p sport, with @p pd_len octets of private data.
 * @return 0, -EEXIST (the id has one), -EINVAL (private data above WN_UD_SIDR_REQ_PD_MAX, a
 *   token as id), -ENOSPC (max_ents).
 */
int wn_cm_sidr_request(struct wn_cm_sidr *t, uint32_t id, const struct wn_ip_addr *local,
		       const struct wn_ip_addr *peer, uint16_t ps, uint16_t dport, uint16_t sport,
		       const uint8_t *pd, uint16_t pd_len, uint64_t now);

/**
 * A SIDR REQ or REP @p m from @p peer to @p local (other types are ignored).
 * @return 0, or -ENOENT (a REP nobody waits for), -ENOSPC (a REQ beyond max_ents).
 */
int wn_cm_sidr_rx(struct wn_cm_sidr *t, const struct wn_ip_addr *local,
		  const struct wn_ip_addr *peer, const struct wn_ud_msg *m, uint64_t now);

/**
 * The ULP accepts request @p token: a REP with status OK, QP @p qpn and Q_Key @p qkey.
 * @return 0, -ENOENT (no such request waiting), -EINVAL (private data too long).
 */
int wn_cm_sidr_accept(struct wn_cm_sidr *t, uint32_t token, uint32_t qpn, uint32_t qkey,
		      const uint8_t *pd, uint16_t pd_len, uint64_t now);

/**
 * The ULP refuses request @p token: a REP with @p status (WN_UD_SIDR_REJECT, or NO_QP).
 * @return 0, -ENOENT, -EINVAL (status OK or unknown, private data too long).
 */
int wn_cm_sidr_reject(struct wn_cm_sidr *t, uint32_t token, uint8_t status, const uint8_t *pd,
		      uint16_t pd_len, uint64_t now);

/**
 * The ULP's id @p key (an active id, or a request's token) is gone: an active exchange ends
 * without an outcome; a request not answered yet is rejected. @return 0 or -ENOENT.
 */
int wn_cm_sidr_forget(struct wn_cm_sidr *t, uint32_t key, uint64_t now);

/** Timers: REQs sent again, exchanges given up, kept REPs dropped. */
void wn_cm_sidr_poll(struct wn_cm_sidr *t, uint64_t now);

/** @return when wn_cm_sidr_poll() has work next (UINT64_MAX: never). */
uint64_t wn_cm_sidr_next(const struct wn_cm_sidr *t);

/** @return the state of the exchange @p key, or 0 when there is none. */
enum wn_cm_sidr_state wn_cm_sidr_state(const struct wn_cm_sidr *t, uint32_t key);

/** @return how many exchanges there are. */
uint32_t wn_cm_sidr_count(const struct wn_cm_sidr *t);

/** Copy the counters. */
void wn_cm_sidr_stats(const struct wn_cm_sidr *t, struct wn_cm_sidr_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* WN_CM_SIDR_H */
