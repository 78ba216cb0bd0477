/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_cm's UDP port space: SIDR REQ/REP exchanges (wn_cm_sidr.h). The transitions:
 *
 *   (none)    connect      → REQ_SENT  REQ out, retry timer
 *   REQ_SENT  REP          → (gone)    done(status, REP)
 *   REQ_SENT  timer        → REQ_SENT  REQ again; after max_tries: (gone), done(-ETIMEDOUT)
 *   REQ_SENT  forget       → (gone)
 *   (none)    REQ          → REQ_RCVD  request() to the owner; or REPLIED at once with its
 *                                      status when the owner answers one (no listener)
 *   REQ_RCVD  REQ (again)  → REQ_RCVD  ignored
 *   REQ_RCVD  accept       → REPLIED   REP OK (QP number, Q_Key, private data), hold timer
 *   REQ_RCVD  reject       → REPLIED   REP with the status
 *   REQ_RCVD  forget       → REPLIED   REP REJECT
 *   REPLIED   REQ (again)  → REPLIED   the REP again
 *   REPLIED   timer        → (gone)
 *   REPLIED   forget       → REPLIED   (the REP still answers retransmissions)
 *
 * A passive exchange is found by (peer address, request id), as InfiniBand's CM matches a
 * SIDR REQ by its requester and request id; an active one by its CM id, and its REP by
 * (peer address, request id).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wn_cm_sidr.h"

#define SIDR_RETRY_US (500u * 1000u)
#define SIDR_MAX_TRIES 8u
#define SIDR_HOLD_US (10u * 1000u * 1000u)
#define SIDR_MAX_ENTS 1024u

struct sidr_ent {
	enum wn_cm_sidr_state state; /* 0: a free slot */
	uint32_t key;                /* active: the CM id; passive: the token */
	uint32_t req_id;
	struct wn_ip_addr local, peer;
	uint64_t next;               /* REQ_SENT: the next REQ; REPLIED: expiry; else never */
	uint32_t tries;              /* REQ_SENT: REQs sent */
	struct wn_ud_msg msg;        /* REQ_SENT: our REQ; REPLIED: our REP (pd: into @c pd) */
	uint8_t pd[WN_UD_SIDR_REQ_PD_MAX];
};

struct wn_cm_sidr {
	struct wn_cm_sidr_conf c;
	struct sidr_ent *ents;
	uint32_t n;                  /* live exchanges */
	uint32_t next_req_id;
	uint32_t next_token;
	struct wn_cm_sidr_stats st;
};

struct wn_cm_sidr *
wn_cm_sidr_create(const struct wn_cm_sidr_conf *conf)
{
	struct wn_cm_sidr *t;

	if (conf == NULL || conf->ops == NULL || conf->ops->send == NULL ||
	    conf->ops->done == NULL || conf->ops->request == NULL) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->c = *conf;
	if (t->c.retry_us == 0)
		t->c.retry_us = SIDR_RETRY_US;
	if (t->c.max_tries == 0)
		t->c.max_tries = SIDR_MAX_TRIES;
	if (t->c.hold_us == 0)
		t->c.hold_us = SIDR_HOLD_US;
	if (t->c.max_ents == 0)
		t->c.max_ents = SIDR_MAX_ENTS;
	t->ents = calloc(t->c.max_ents, sizeof(*t->ents));
	if (t->ents == NULL) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	/* request ids differ from one table (and process start) to the next */
	t->next_req_id = (uint32_t)(uintptr_t)t ^ 0x5a5a0001u;
	return t;
}

void
wn_cm_sidr_free(struct wn_cm_sidr *t)
{
	if (t == NULL)
		return;
	free(t->ents);
	free(t);
}

static struct sidr_ent *
by_key(const struct wn_cm_sidr *t, uint32_t key)
{
	for (uint32_t i = 0; i < t->c.max_ents; i++)
		if (t->ents[i].state != 0 && t->ents[i].key == key)
			return &t->ents[i];
	return NULL;
}

/* The exchange @p active or not with @p peer under request id @p req_id. */
static struct sidr_ent *
by_req(const struct wn_cm_sidr *t, const struct wn_ip_addr *peer, uint32_t req_id, bool active)
{
	for (uint32_t i = 0; i < t->c.max_ents; i++) {
		const struct sidr_ent *e = &t->ents[i];

		if (e->state != 0 && e->req_id == req_id &&
		    (e->state == WN_CM_SIDR_REQ_SENT) == active && wn_ip_addr_eq(&e->peer, peer))
			return &t->ents[i];
	}
	return NULL;
}

static struct sidr_ent *
ent_new(struct wn_cm_sidr *t)
{
	if (t->n >= t->c.max_ents)
		return NULL;
	for (uint32_t i = 0; i < t->c.max_ents; i++)
		if (t->ents[i].state == 0) {
			memset(&t->ents[i], 0, sizeof(t->ents[i]));
			t->n++;
			return &t->ents[i];
		}
	return NULL;
}

static void
ent_free(struct wn_cm_sidr *t, struct sidr_ent *e)
{
	e->state = 0;
	t->n--;
}

static void
send_msg(struct wn_cm_sidr *t, struct sidr_ent *e)
{
	if (e->msg.type == WN_UD_SIDR_REQ)
		t->st.req_tx++;
	else
		t->st.rep_tx++;
	t->c.ops->send(t->c.arg, &e->local, &e->peer, &e->msg);
}

/* Keep @p pd in the entry's message. */
static void
msg_pd(struct sidr_ent *e, const uint8_t *pd, uint16_t pd_len)
{
	e->msg.pd_len = pd_len;
	e->msg.pd = pd_len != 0 ? e->pd : NULL;
	if (pd_len != 0)
		memcpy(e->pd, pd, pd_len);
}

int
wn_cm_sidr_request(struct wn_cm_sidr *t, uint32_t id, const struct wn_ip_addr *local,
		   const struct wn_ip_addr *peer, uint16_t ps, uint16_t dport, uint16_t sport,
		   const uint8_t *pd, uint16_t pd_len, uint64_t now)
{
	struct sidr_ent *e;

	if (pd_len > WN_UD_SIDR_REQ_PD_MAX || (pd_len != 0 && pd == NULL) ||
	    wn_cm_sidr_is_token(id) || id == 0)
		return -EINVAL;
	if (by_key(t, id) != NULL)
		return -EEXIST;
	e = ent_new(t);
	if (e == NULL) {
		t->st.full++;
		return -ENOSPC;
	}
	e->state = WN_CM_SIDR_REQ_SENT;
	e->key = id;
	e->req_id = t->next_req_id++;
	e->local = *local;
	e->peer = *peer;
	e->msg.type = WN_UD_SIDR_REQ;
	e->msg.req_id = e->req_id;
	e->msg.ps = ps;
	e->msg.dport = dport;
	e->msg.sport = sport;
	msg_pd(e, pd, pd_len);
	e->tries = 1;
	e->next = now + t->c.retry_us;
	send_msg(t, e);
	return 0;
}

/* Answer passive exchange @p e with a REP of @p status; it is kept hold_us. */
static void
reply(struct wn_cm_sidr *t, struct sidr_ent *e, uint8_t status, uint32_t qpn, uint32_t qkey,
      const uint8_t *pd, uint16_t pd_len, uint64_t now)
{
	memset(&e->msg, 0, sizeof(e->msg));
	e->msg.type = WN_UD_SIDR_REP;
	e->msg.req_id = e->req_id;
	e->msg.status = status;
	e->msg.sqpn = status == WN_UD_SIDR_OK ? qpn & WN_UD_QPN_MASK : 0;
	e->msg.qkey = status == WN_UD_SIDR_OK ? qkey : 0;
	msg_pd(e, pd, pd_len);
	e->state = WN_CM_SIDR_REPLIED;
	e->next = now + t->c.hold_us;
	send_msg(t, e);
}

static int
rx_req(struct wn_cm_sidr *t, const struct wn_ip_addr *local, const struct wn_ip_addr *peer,
       const struct wn_ud_msg *m, uint64_t now)
{
	struct sidr_ent *e = by_req(t, peer, m->req_id, false);
	int status;

	t->st.req_rx++;
	if (e != NULL) {
		/* a retransmission: the answer again, or nothing while the ULP thinks */
		t->st.req_dup++;
		if (e->state == WN_CM_SIDR_REPLIED)
			send_msg(t, e);
		return 0;
	}
	e = ent_new(t);
	if (e == NULL) {
		t->st.full++;
		return -ENOSPC;
	}
	e->state = WN_CM_SIDR_REQ_RCVD;
	e->req_id = m->req_id;
	e->local = *local;
	e->peer = *peer;
	e->next = UINT64_MAX;
	do {
		e->key = WN_CM_SIDR_TOKEN | (t->next_token++ & ~WN_CM_SIDR_TOKEN_MASK);
	} while (by_key(t, e->key) != e);
	status = t->c.ops->request(t->c.arg, e->key, local, peer, m);
	if (status != 0) {
		t->st.unsupported++;
		reply(t, e, (uint8_t)status, 0, 0, NULL, 0, now);
	}
	return 0;
}

static int
rx_rep(struct wn_cm_sidr *t, const struct wn_ip_addr *peer, const struct wn_ud_msg *m)
{
	struct sidr_ent *e = by_req(t, peer, m->req_id, true);
	uint32_t id;

	t->st.rep_rx++;
	if (e == NULL) {
		t->st.rep_stray++;
		return -ENOENT;
	}
	id = e->key;
	ent_free(t, e);
	t->c.ops->done(t->c.arg, id, m->status, m);
	return 0;
}

int
wn_cm_sidr_rx(struct wn_cm_sidr *t, const struct wn_ip_addr *local, const struct wn_ip_addr *peer,
	      const struct wn_ud_msg *m, uint64_t now)
{
	if (m->type == WN_UD_SIDR_REQ)
		return rx_req(t, local, peer, m, now);
	if (m->type == WN_UD_SIDR_REP)
		return rx_rep(t, peer, m);
	return 0;
}

/* The passive exchange @p token waiting for its ULP, or NULL. */
static struct sidr_ent *
waiting(const struct wn_cm_sidr *t, uint32_t token)
{
	struct sidr_ent *e = wn_cm_sidr_is_token(token) ? by_key(t, token) : NULL;

	return e != NULL && e->state == WN_CM_SIDR_REQ_RCVD ? e : NULL;
}

int
wn_cm_sidr_accept(struct wn_cm_sidr *t, uint32_t token, uint32_t qpn, uint32_t qkey,
		  const uint8_t *pd, uint16_t pd_len, uint64_t now)
{
	struct sidr_ent *e = waiting(t, token);

	if (e == NULL)
		return -ENOENT;
	if (pd_len > WN_UD_SIDR_REP_PD_MAX || (pd_len != 0 && pd == NULL))
		return -EINVAL;
	reply(t, e, WN_UD_SIDR_OK, qpn, qkey, pd, pd_len, now);
	return 0;
}

int
wn_cm_sidr_reject(struct wn_cm_sidr *t, uint32_t token, uint8_t status, const uint8_t *pd,
		  uint16_t pd_len, uint64_t now)
{
	struct sidr_ent *e = waiting(t, token);

	if (e == NULL)
		return -ENOENT;
	if (status == WN_UD_SIDR_OK || status > WN_UD_SIDR_NO_QP ||
	    pd_len > WN_UD_SIDR_REP_PD_MAX || (pd_len != 0 && pd == NULL))
		return -EINVAL;
	reply(t, e, status, 0, 0, pd, pd_len, now);
	return 0;
}

int
wn_cm_sidr_forget(struct wn_cm_sidr *t, uint32_t key, uint64_t now)
{
	struct sidr_ent *e = by_key(t, key);

	if (e == NULL)
		return -ENOENT;
	switch (e->state) {
	case WN_CM_SIDR_REQ_SENT:
		ent_free(t, e);
		break;
	case WN_CM_SIDR_REQ_RCVD:
		/* IBTA 12.11: a SIDR REQ whose service goes away is answered REJECT */
		reply(t, e, WN_UD_SIDR_REJECT, 0, 0, NULL, 0, now);
		break;
	default:
		break;
	}
	return 0;
}

void
wn_cm_sidr_poll(struct wn_cm_sidr *t, uint64_t now)
{
	for (uint32_t i = 0; i < t->c.max_ents && t->n > 0; i++) {
		struct sidr_ent *e = &t->ents[i];
		uint32_t id;

		if (e->state == 0 || e->next > now)
			continue;
		if (e->state == WN_CM_SIDR_REPLIED) {
			ent_free(t, e);
		} else if (e->tries < t->c.max_tries) {
			e->tries++;
			e->next = now + t->c.retry_us;
			t->st.req_retx++;
			send_msg(t, e);
		} else {
			id = e->key;
			ent_free(t, e);
			t->st.timeouts++;
			t->c.ops->done(t->c.arg, id, -ETIMEDOUT, NULL);
		}
	}
}

uint64_t
wn_cm_sidr_next(const struct wn_cm_sidr *t)
{
	uint64_t next = UINT64_MAX;

	for (uint32_t i = 0; i < t->c.max_ents && t->n > 0; i++)
		if (t->ents[i].state != 0 && t->ents[i].next < next)
			next = t->ents[i].next;
	return next;
}

enum wn_cm_sidr_state
wn_cm_sidr_state(const struct wn_cm_sidr *t, uint32_t key)
{
	const struct sidr_ent *e = by_key(t, key);

	return e != NULL ? e->state : 0;
}

uint32_t
wn_cm_sidr_count(const struct wn_cm_sidr *t)
{
	return t->n;
}

void
wn_cm_sidr_stats(const struct wn_cm_sidr *t, struct wn_cm_sidr_stats *st)
{
	*st = t->st;
}
