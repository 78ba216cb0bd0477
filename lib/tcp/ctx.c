/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Context, connection table, the timers' dispatch and the socket-like API. The wheel
 * itself is timer.c.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "tcp_priv.h"

RTE_LOG_REGISTER_DEFAULT(wn_tcp_logtype, NOTICE);

static void
conf_defaults(struct wn_tcp_ctx_conf *c)
{
	static const uint8_t zero[16];

	if (c->max_conns == 0)
		c->max_conns = 1024;
	if (c->max_listeners == 0)
		c->max_listeners = 16;
	if (c->syn_backlog == 0)
		c->syn_backlog = c->max_conns / 4 > 0 ? c->max_conns / 4 : 1;
	if (c->sndbuf == 0)
		c->sndbuf = 256 * 1024;
	if (c->rcvbuf == 0)
		c->rcvbuf = 256 * 1024;
	if (c->mtu == 0)
		c->mtu = 1500;
	if (c->flags == 0)
		c->flags = WN_TCP_F_DEFAULTS;
	if (c->cc == NULL)
		c->cc = &wn_tcp_cc_newreno;
	if (memcmp(c->isn_secret, zero, 16) == 0) {
		for (int i = 0; i < 16; i += 8) {
			uint64_t r = rte_rand();

			memcpy(c->isn_secret + i, &r, 8);
		}
	}
	if (c->rto_init_us == 0)
		c->rto_init_us = 1000000;
	if (c->rto_min_us == 0)
		c->rto_min_us = 200000;
	if (c->rto_max_us == 0)
		c->rto_max_us = 60000000;
	if (c->max_retries == 0)
		c->max_retries = 12;
	if (c->syn_retries == 0)
		c->syn_retries = 6;
	if (c->delack_us == 0)
		c->delack_us = 40000;
	if (c->msl_us == 0)
		c->msl_us = 30000000;
	if (c->fin_wait2_us == 0)
		c->fin_wait2_us = 60000000;
	if (c->ooo_max == 0 || c->ooo_max > TCP_OOO_MAX)
		c->ooo_max = c->ooo_max == 0 ? 16 : TCP_OOO_MAX;
	if (c->ephemeral_lo == 0)
		c->ephemeral_lo = 32768;
	if (c->ephemeral_hi == 0 || c->ephemeral_hi < c->ephemeral_lo)
		c->ephemeral_hi = 60999;
	if (c->challenge_ack_limit == 0)
		c->challenge_ack_limit = 1000;
	if (c->keepalive_intvl_us == 0)
		c->keepalive_intvl_us = 75000000;
	if (c->keepalive_probes == 0)
		c->keepalive_probes = 9;
}

struct wn_tcp_ctx *
wn_tcp_ctx_create(const struct wn_tcp_ctx_conf *conf)
{
	static unsigned int seq;
	struct rte_hash_parameters hp = { 0 };
	char name[RTE_HASH_NAMESIZE];
	struct wn_tcp_ctx *ctx;

	if (conf == NULL || conf->pool == NULL || (conf->mtu != 0 && conf->mtu < 576) ||
	    (conf->sndbuf != 0 && conf->sndbuf < 4096) ||
	    (conf->rcvbuf != 0 && conf->rcvbuf < 4096)) {
		rte_errno = errno = EINVAL;
		return NULL;
	}
	ctx = rte_zmalloc_socket("wn_tcp_ctx", sizeof(*ctx), RTE_CACHE_LINE_SIZE,
				 conf->socket_id);
	if (ctx == NULL)
		goto nomem;
	ctx->conf = *conf;
	conf_defaults(&ctx->conf);
	TAILQ_INIT(&ctx->free_conns);
	TAILQ_INIT(&ctx->tw_new);
	TAILQ_INIT(&ctx->tw);
	TAILQ_INIT(&ctx->pending);
	TAILQ_INIT(&ctx->txq_wait);
	TAILQ_INIT(&ctx->dead);
	for (unsigned int i = 0; i < TCP_WHEEL_SLOTS; i++)
		TAILQ_INIT(&ctx->wheel[i]);
	ctx->listeners = rte_zmalloc_socket("wn_tcp_lst",
					    sizeof(*ctx->listeners) * ctx->conf.max_listeners,
					    0, conf->socket_id);
	ctx->txq_cap = 4096;
	ctx->txq = rte_zmalloc_socket("wn_tcp_txq", sizeof(*ctx->txq) * ctx->txq_cap, 0,
				      conf->socket_id);
	if (ctx->listeners == NULL || ctx->txq == NULL)
		goto nomem;

	snprintf(name, sizeof(name), "wn_tcp_%u", __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	hp.name = name;
	hp.entries = ctx->conf.max_conns < 8 ? 8 : ctx->conf.max_conns;
	hp.key_len = sizeof(struct tcp_key);
	hp.hash_func = rte_hash_crc; /* SSE4.2 crc32: a fraction of jhash's instructions */
	hp.socket_id = conf->socket_id;
	ctx->hash = rte_hash_create(&hp);
	if (ctx->hash == NULL)
		goto nomem;
	ctx->seg_room = rte_pktmbuf_data_room_size(conf->pool) - RTE_PKTMBUF_HEADROOM;
	ctx->next_port = (uint16_t)(ctx->conf.ephemeral_lo +
		rte_rand_max((uint64_t)ctx->conf.ephemeral_hi - ctx->conf.ephemeral_lo + 1));
	return ctx;
nomem:
	wn_tcp_ctx_free(ctx);
	rte_errno = errno = ENOMEM;
	return NULL;
}

static void
conn_release(struct wn_tcp_conn *c)
{
	wn_tcp_ext_release_all(c);
	free(c->rec_sh);
	free(c->rec_fl);
	free(c->xp);
	c->rec_sh = NULL;
	c->rec_fl = NULL;
	c->xp = NULL;
	free(c->sbuf);
	free(c->rbuf);
	free(c->rec);
	if (c->ctx != NULL) {
		c->ctx->st.buf_bytes -= (uint64_t)c->scap + c->rcap;
		tcp_slen_sub(c, c->slen);
	}
	c->slen = 0;
	c->sbuf = c->rbuf = NULL;
	c->scap = c->rcap = c->shead = c->rhead = 0;
	c->rec = NULL;
}

static void
free_dead(struct wn_tcp_ctx *ctx)
{
	struct wn_tcp_conn *c;

	while ((c = TAILQ_FIRST(&ctx->dead)) != NULL) {
		TAILQ_REMOVE(&ctx->dead, c, free_link);
		if (ctx->last_rx == c)
			ctx->last_rx = NULL;
		conn_release(c);
		memset(c, 0, sizeof(*c));
		TAILQ_INSERT_TAIL(&ctx->free_conns, c, free_link);
		ctx->st.conns_closed++;
	}
}

/*
 * More connections: a chunk of TCP_CONN_CHUNK on the free list, so a context costs nothing
 * per connection it never had. Up to one chunk beyond max_conns: connections closed in this
 * iteration (a TIME-WAIT entry recycled for a new one among them) are reused only once
 * wn_tcp_process() frees them, while max_conns bounds the live ones. The chunks come from
 * DPDK's heap, as the context does. @return 0 or -ENOMEM.
 */
static int
conns_grow(struct wn_tcp_ctx *ctx)
{
	uint32_t lim = ctx->conf.max_conns + TCP_CONN_CHUNK, i;
	uint32_t n = RTE_MIN((uint32_t)TCP_CONN_CHUNK, lim - ctx->n_conns);
	struct wn_tcp_conn **nc, *chunk;

	if (n == 0)
		return -ENOMEM;
	nc = rte_realloc(ctx->chunks, (ctx->n_chunks + 1) * sizeof(*nc), 0);
	if (nc == NULL)
		return -ENOMEM;
	ctx->chunks = nc;
	chunk = rte_zmalloc("wn_tcp_conns", TCP_CONN_CHUNK * sizeof(*chunk), RTE_CACHE_LINE_SIZE);
	if (chunk == NULL)
		return -ENOMEM;
	ctx->chunks[ctx->n_chunks++] = chunk;
	ctx->n_conns += n;
	for (i = 0; i < n; i++)
		TAILQ_INSERT_TAIL(&ctx->free_conns, &chunk[i], free_link);
	return 0;
}

void
wn_tcp_ctx_free(struct wn_tcp_ctx *ctx)
{
	if (ctx == NULL)
		return;
	for (uint32_t k = 0; k < ctx->n_chunks; k++) {
		for (uint32_t i = 0; i < TCP_CONN_CHUNK; i++)
			conn_release(&ctx->chunks[k][i]);
		rte_free(ctx->chunks[k]);
	}
	rte_free(ctx->chunks);
	for (uint32_t i = 0; i < ctx->txq_len; i++)
		rte_pktmbuf_free(ctx->txq[(ctx->txq_head + i) % ctx->txq_cap]);
	if (ctx->mcache_n > 0)
		rte_pktmbuf_free_bulk(ctx->mcache, ctx->mcache_n);
	rte_hash_free(ctx->hash);
	rte_free(ctx->listeners);
	rte_free(ctx->txq);
	rte_free(ctx);
}

static uint8_t
wscale_for(uint32_t buf)
{
	uint8_t s = 0;

	while (s < TCP_MAX_WSCALE && (65535u << s) < buf)
		s++;
	return s;
}

uint8_t
wn_tcp_rcv_wscale(const struct wn_tcp_ctx *ctx)
{
	return (ctx->conf.flags & WN_TCP_F_WSCALE) ? wscale_for(ctx->conf.rcvbuf) : 0;
}

uint16_t
wn_tcp_rcv_mss(const struct wn_tcp_ctx *ctx, uint8_t family)
{
	return (uint16_t)(ctx->conf.mtu - (family == WN_AF_INET ? 40 : 60));
}

struct wn_tcp_conn *
wn_tcp_conn_alloc(struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *l,
	       const struct wn_tcp_endpoint *r)
{
	struct wn_tcp_conn *c = TAILQ_FIRST(&ctx->free_conns);
	int pos;

	if (c == NULL && conns_grow(ctx) == 0)
		c = TAILQ_FIRST(&ctx->free_conns);
	if (c == NULL) {
		errno = ENOSPC;
		return NULL;
	}
	TAILQ_REMOVE(&ctx->free_conns, c, free_link);
	memset(c, 0, sizeof(*c));
	c->ctx = ctx;
	c->local = *l;
	c->remote = *r;
	tcp_key_make(&c->key, l, r);
	/* buffers come with the data (tcp_sbuf_reserve, wn_tcp_rbuf_reserve, rec_ready) */
	c->smax = ctx->conf.sndbuf;
	c->rmax = ctx->conf.rcvbuf;
	pos = rte_hash_add_key_data(ctx->hash, &c->key, c);
	if (pos < 0) {
		conn_release(c);
		TAILQ_INSERT_HEAD(&ctx->free_conns, c, free_link);
		errno = ENOSPC;
		return NULL;
	}
	c->flags |= CF_HASHED;
	c->rto = ctx->conf.rto_init_us;   /* RFC 6298 §2.1 */
	c->rcv.mss = wn_tcp_rcv_mss(ctx, l->addr.family);
	c->rcv.wscale = wn_tcp_rcv_wscale(ctx);
	c->snd.mss = l->addr.family == WN_AF_INET ? TCP_DEFAULT_MSS4 : TCP_DEFAULT_MSS6;
	c->ts_offset = wn_tcp_ts_offset(ctx, l, r);
	c->ssthresh = UINT32_MAX; /* RFC 5681 §3.1: arbitrarily high */
	c->dupthresh = TCP_DUPTHRESH;
	c->ka_idle = ctx->conf.keepalive_idle_us;
	c->ka_intvl = ctx->conf.keepalive_intvl_us;
	c->ka_probes = ctx->conf.keepalive_probes;
	ctx->live++;
	ctx->st.conns_opened++;
	return c;
}

void
wn_tcp_mark_pending(struct wn_tcp_conn *c)
{
	if (c->flags & (CF_PENDING | CF_DEAD))
		return;
	c->flags |= CF_PENDING;
	TAILQ_INSERT_TAIL(&c->ctx->pending, c, pend_link);
}

void
wn_tcp_conn_closed(struct wn_tcp_conn *c, enum wn_tcp_close_reason why)
{
	struct wn_tcp_ctx *ctx = c->ctx;

	if (c->flags & CF_DEAD)
		return;
	if (c->flags & CF_HASHED) {
		rte_hash_del_key(ctx->hash, &c->key);
		c->flags &= ~CF_HASHED;
	}
	if (c->flags & CF_SYN_RCVD_COUNTED) {
		ctx->syn_rcvd--;
		c->flags &= ~CF_SYN_RCVD_COUNTED;
	}
	wn_tcp_wheel_remove(c);
	c->t_rto = c->t_delack = c->t_persist = c->t_tw = c->t_tlp = c->t_ka = 0;
	if (c->flags & CF_PENDING) {
		TAILQ_REMOVE(&ctx->pending, c, pend_link);
		c->flags &= ~CF_PENDING;
	}
	wn_tcp_txq_unwait(c);
	if (c->flags & CF_TW_LISTED) {
		TAILQ_REMOVE(c->flags & CF_TW_DETACHED ? &ctx->tw : &ctx->tw_new, c, tw_link);
		c->flags &= ~CF_TW_LISTED;
	}
	c->state = WN_TCP_CLOSED;
	c->flags |= CF_DEAD;
	/* nothing is sent any more: external record memory goes back now, before the event */
	wn_tcp_ext_release_all(c);
	ctx->live--;
	if (why == WN_TCP_CLOSE_TIMEOUT)
		ctx->st.conns_timeout++;
	TAILQ_INSERT_TAIL(&ctx->dead, c, free_link);
	/* Passive connections never seen by the user get no event. */
	if (c->cb != NULL && c->cb->closed != NULL &&
	    (!(c->flags & CF_PASSIVE) || (c->flags & CF_ESTAB_NOTIFIED)))
		c->cb->closed(c, c->arg, why);
}

/*
 * WN_TCP_F_TW_DETACH: @p c entered TIME-WAIT (again: its 2 MSL restarted). Reported closed
 * at the next wn_tcp_process(), after whatever its segment delivers (the EOF).
 */
void
wn_tcp_tw_enter(struct wn_tcp_conn *c)
{
	struct wn_tcp_ctx *ctx = c->ctx;

	if (!(ctx->conf.flags & WN_TCP_F_TW_DETACH))
		return;
	if (c->flags & CF_TW_DETACHED) {
		/* oldest first: the restarted one goes last */
		TAILQ_REMOVE(&ctx->tw, c, tw_link);
		TAILQ_INSERT_TAIL(&ctx->tw, c, tw_link);
		return;
	}
	if (c->flags & CF_TW_LISTED)
		return;
	c->flags |= CF_TW_LISTED;
	TAILQ_INSERT_TAIL(&ctx->tw_new, c, tw_link);
}

/* Report the new TIME-WAIT entries closed; they keep their 4-tuple and their timer only. */
static void
tw_detach_new(struct wn_tcp_ctx *ctx)
{
	struct wn_tcp_conn *c;
	const struct wn_tcp_cb *cb;

	while ((c = TAILQ_FIRST(&ctx->tw_new)) != NULL) {
		TAILQ_REMOVE(&ctx->tw_new, c, tw_link);
		TAILQ_INSERT_TAIL(&ctx->tw, c, tw_link);
		c->flags |= CF_TW_DETACHED;
		cb = c->cb;
		c->cb = NULL;
		/* nothing is sent from the buffers any more: a TIME-WAIT entry keeps none */
		conn_release(c);
		c->slen = c->rlen = c->rec_len = c->xp_len = 0;
		if (cb != NULL && cb->closed != NULL &&
		    (!(c->flags & CF_PASSIVE) || (c->flags & CF_ESTAB_NOTIFIED)))
			cb->closed(c, c->arg, WN_TCP_CLOSE_NORMAL);
	}
}

/* End TIME-WAIT entry @p c early (its 4-tuple or its slot is wanted). */
static void
tw_recycle(struct wn_tcp_conn *c)
{
	c->ctx->st.tw_recycled++;
	wn_tcp_conn_closed(c, WN_TCP_CLOSE_NORMAL);
}

/*
 * May one more connection be created? With the table full, the oldest detached TIME-WAIT
 * entry makes room (WN_TCP_F_TW_DETACH), as a kernel drops TIME-WAIT entries beyond its
 * limit.
 */
bool
wn_tcp_conn_room(struct wn_tcp_ctx *ctx)
{
	if (ctx->live < ctx->conf.max_conns)
		return true;
	if (TAILQ_EMPTY(&ctx->tw))
		return false;
	tw_recycle(TAILQ_FIRST(&ctx->tw));
	return ctx->live < ctx->conf.max_conns;
}

void
wn_tcp_established(struct wn_tcp_conn *c)
{
	uint32_t emss;

	c->state = WN_TCP_ESTABLISHED;
	if (c->flags & CF_SYN_RCVD_COUNTED) {
		c->ctx->syn_rcvd--;
		c->flags &= ~CF_SYN_RCVD_COUNTED;
	}
	c->ctx->conf.cc->init(c);
	if (c->flags & CF_FIN_PENDING)
		c->state = WN_TCP_FIN_WAIT_1;
	c->flags |= CF_ESTAB_NOTIFIED;
	emss = tcp_emss(c);
	if (c->cb != NULL && c->cb->emss != NULL)
		c->cb->emss(c, c->arg, (uint16_t)emss);
	if (c->flags & CF_DEAD)
		return;
	if (c->cb != NULL && c->cb->established != NULL) {
		int rc = c->cb->established(c, c->arg);

		if (rc != 0 && !(c->flags & CF_DEAD) && (c->flags & CF_PASSIVE))
			wn_tcp_abort(c);
	}
	if (!(c->flags & CF_DEAD))
		wn_tcp_mark_pending(c);
}

static void
flush_pending(struct wn_tcp_ctx *ctx)
{
	struct wn_tcp_conn *c;

	while ((c = TAILQ_FIRST(&ctx->pending)) != NULL) {
		TAILQ_REMOVE(&ctx->pending, c, pend_link);
		c->flags &= ~CF_PENDING;
		wn_tcp_output(c);
	}
}

static void
run_timers(struct wn_tcp_conn *c, uint64_t now)
{
	if (c->t_tw != 0 && c->t_tw <= now) {
		c->t_tw = 0;
		/* RFC 9293 §3.10.8 TIME-WAIT timeout, or a peer that never sent its FIN */
		wn_tcp_conn_closed(c, c->state == WN_TCP_FIN_WAIT_2 ? WN_TCP_CLOSE_TIMEOUT
								 : WN_TCP_CLOSE_NORMAL);
		return;
	}
	if (c->t_delack != 0 && c->t_delack <= now) {
		c->t_delack = 0;
		c->ctx->st.delack_fired++;
		c->flags |= CF_ACK_NOW;
		wn_tcp_mark_pending(c);
	}
	if (c->t_tlp != 0 && c->t_tlp <= now) {
		c->t_tlp = 0;
		if (c->t_rto == 0 || c->t_rto > now)
			wn_tcp_tlp_fire(c);
	}
	if (c->t_rto != 0 && c->t_rto <= now) {
		c->t_rto = 0;
		if (wn_tcp_rto_fire(c)) {
			wn_tcp_conn_closed(c, WN_TCP_CLOSE_TIMEOUT);
			return;
		}
		if (c->flags & CF_DEAD)
			return;
	}
	if (c->t_persist != 0 && c->t_persist <= now) {
		c->t_persist = 0;
		wn_tcp_persist_fire(c);
	}
	if (c->t_ka != 0 && c->t_ka <= now) {
		c->t_ka = 0;
		if (wn_tcp_keepalive_fire(c))
			wn_tcp_conn_closed(c, WN_TCP_CLOSE_TIMEOUT);
	}
}

void
wn_tcp_process(struct wn_tcp_ctx *ctx, uint64_t now)
{
	struct conn_list exp;
	struct wn_tcp_conn *c, *tmp;
	uint64_t target = now / TCP_TICK_US;

	if (now > ctx->now)
		ctx->now = now;
	TAILQ_INIT(&exp);
	if (target >= ctx->wheel_tick) {
		uint64_t steps = target - ctx->wheel_tick + 1;

		if (steps > TCP_WHEEL_SLOTS)
			steps = TCP_WHEEL_SLOTS;
		for (uint64_t i = 0; i < steps; i++) {
			struct conn_list *sl = &ctx->wheel[(ctx->wheel_tick + i) % TCP_WHEEL_SLOTS];

			for (c = TAILQ_FIRST(sl); c != NULL; c = tmp) {
				tmp = TAILQ_NEXT(c, wheel_link);
				if (c->deadline <= now) {
					TAILQ_REMOVE(sl, c, wheel_link);
					c->flags &= ~CF_IN_WHEEL;
					TAILQ_INSERT_TAIL(&exp, c, wheel_link);
				}
			}
		}
		ctx->wheel_tick = target + 1;
	}
	while ((c = TAILQ_FIRST(&exp)) != NULL) {
		TAILQ_REMOVE(&exp, c, wheel_link);
		run_timers(c, now);
		wn_tcp_timer_update(c);
	}
	flush_pending(ctx);
	tw_detach_new(ctx);
	free_dead(ctx);
}

uint64_t
wn_tcp_next_timer(const struct wn_tcp_ctx *ctx)
{
	uint64_t i;

	if (!TAILQ_EMPTY(&ctx->pending))
		return ctx->now;
	/* a timer in slot s fires once now reaches its tick (wn_tcp_timer_update rounds up) */
	for (i = 0; i < TCP_WHEEL_SLOTS; i++)
		if (!TAILQ_EMPTY(&ctx->wheel[(ctx->wheel_tick + i) % TCP_WHEEL_SLOTS]))
			return (ctx->wheel_tick + i) * TCP_TICK_US;
	return UINT64_MAX;
}

uint16_t
wn_tcp_tx_bulk(struct wn_tcp_ctx *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t k = 0;

	flush_pending(ctx);
	wn_tcp_txq_resume(ctx);
	while (k < n && ctx->txq_len > 0) {
		pkts[k++] = ctx->txq[ctx->txq_head];
		ctx->txq_head = (ctx->txq_head + 1) % ctx->txq_cap;
		ctx->txq_len--;
	}
	return k;
}

/* ---- listeners and connect ---- */

static bool
ep_valid(const struct wn_tcp_endpoint *e)
{
	return e != NULL && (e->addr.family == WN_AF_INET || e->addr.family == WN_AF_INET6);
}

struct wn_tcp_listener *
wn_tcp_listen(struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *local,
	      const struct wn_tcp_cb *cb, void *arg)
{
	struct wn_tcp_listener *free_l = NULL;

	if (ctx == NULL || !ep_valid(local) || local->port == 0) {
		errno = EINVAL;
		return NULL;
	}
	for (uint32_t i = 0; i < ctx->conf.max_listeners; i++) {
		struct wn_tcp_listener *l = &ctx->listeners[i];

		if (!l->used) {
			if (free_l == NULL)
				free_l = l;
			continue;
		}
		if (l->local.port == local->port && wn_ip_addr_eq(&l->local.addr, &local->addr)) {
			errno = EADDRINUSE;
			return NULL;
		}
	}
	if (free_l == NULL) {
		errno = ENOSPC;
		return NULL;
	}
	free_l->used = true;
	free_l->ctx = ctx;
	free_l->local = *local;
	free_l->cb = cb;
	free_l->arg = arg;
	return free_l;
}

int
wn_tcp_unlisten(struct wn_tcp_listener *l)
{
	if (l == NULL)
		return -EINVAL;
	l->used = false;
	return 0;
}

static bool
addr_is_any(const struct wn_ip_addr *a)
{
	static const uint8_t z[16];

	return a->family == WN_AF_INET ? a->v4 == 0 : memcmp(a->v6, z, 16) == 0;
}

struct wn_tcp_listener *
wn_tcp_listener_find(struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *l)
{
	struct wn_tcp_listener *wild = NULL;

	for (uint32_t i = 0; i < ctx->conf.max_listeners; i++) {
		struct wn_tcp_listener *x = &ctx->listeners[i];

		if (!x->used || x->local.port != l->port || x->local.addr.family != l->addr.family)
			continue;
		if (wn_ip_addr_eq(&x->local.addr, &l->addr))
			return x;
		if (addr_is_any(&x->local.addr))
			wild = x;
	}
	return wild;
}

struct wn_tcp_conn *
wn_tcp_connect_iss(struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *local,
		   const struct wn_tcp_endpoint *remote, const struct wn_tcp_cb *cb, void *arg,
		   uint32_t iss)
{
	struct wn_tcp_endpoint l;
	struct wn_tcp_conn *c;
	struct tcp_key k;

	if (ctx == NULL || !ep_valid(local) || !ep_valid(remote) ||
	    local->addr.family != remote->addr.family || remote->port == 0 ||
	    addr_is_any(&local->addr)) {
		errno = EINVAL;
		return NULL;
	}
	if (!wn_tcp_conn_room(ctx)) {
		errno = ENOSPC;
		return NULL;
	}
	l = *local;
	if (l.port == 0) {
		uint32_t range = (uint32_t)ctx->conf.ephemeral_hi - ctx->conf.ephemeral_lo + 1;
		uint32_t tries;

		for (tries = 0; tries < range; tries++) {
			uint16_t p = ctx->next_port;

			ctx->next_port = p >= ctx->conf.ephemeral_hi ? ctx->conf.ephemeral_lo :
				(uint16_t)(p + 1);
			l.port = p;
			tcp_key_make(&k, &l, remote);
			if (rte_hash_lookup(ctx->hash, &k) < 0)
				break;
		}
		if (tries == range) {
			errno = EADDRINUSE;
			return NULL;
		}
	} else {
		void *old;

		tcp_key_make(&k, &l, remote);
		if (rte_hash_lookup_data(ctx->hash, &k, &old) >= 0) {
			/* a detached TIME-WAIT entry gives its 4-tuple up (WN_TCP_F_TW_DETACH) */
			if (!(((struct wn_tcp_conn *)old)->flags & CF_TW_DETACHED)) {
				errno = EADDRINUSE;
				return NULL;
			}
			tw_recycle(old);
		}
	}
	c = wn_tcp_conn_alloc(ctx, &l, remote);
	if (c == NULL)
		return NULL;
	c->cb = cb;
	c->arg = arg;
	c->state = WN_TCP_SYN_SENT;
	c->snd.iss = iss;
	c->snd.una = iss;
	c->snd.nxt = iss;
	c->snd.max = iss;
	c->sbase = iss + 1;
	wn_tcp_mark_pending(c);
	return c;
}

struct wn_tcp_conn *
wn_tcp_connect(struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *local,
	       const struct wn_tcp_endpoint *remote, const struct wn_tcp_cb *cb, void *arg)
{
	if (ctx == NULL || !ep_valid(local) || !ep_valid(remote)) {
		errno = EINVAL;
		return NULL;
	}
	return wn_tcp_connect_iss(ctx, local, remote, cb, arg,
				  wn_tcp_isn(ctx, local, remote, ctx->now));
}

/* ---- per-connection API ---- */

void
wn_tcp_conn_set_arg(struct wn_tcp_conn *c, void *arg)
{
	c->arg = arg;
}

int
wn_tcp_set_keepalive(struct wn_tcp_conn *c, uint64_t idle_us, uint32_t intvl_us,
		     uint32_t probes)
{
	if (c == NULL || (idle_us != 0 && (intvl_us == 0 || probes == 0)))
		return -EINVAL;
	c->ka_idle = idle_us;
	c->ka_intvl = intvl_us;
	c->ka_probes = probes;
	if (c->last_rx == 0)
		c->last_rx = c->ctx->now;
	wn_tcp_keepalive_arm(c);
	return 0;
}

void
wn_tcp_conn_set_cb(struct wn_tcp_conn *c, const struct wn_tcp_cb *cb)
{
	c->cb = cb;
}

void *
wn_tcp_conn_arg(const struct wn_tcp_conn *c)
{
	return c->arg;
}

struct wn_tcp_ctx *
wn_tcp_conn_ctx(const struct wn_tcp_conn *c)
{
	return c->ctx;
}

int
wn_tcp_set_mode(struct wn_tcp_conn *c, enum wn_tcp_mode mode)
{
	if (mode != WN_TCP_MODE_STREAM && mode != WN_TCP_MODE_RECORD)
		return -EINVAL;
	c->mode = mode;
	return 0;
}

static bool
can_send(const struct wn_tcp_conn *c)
{
	if (c->flags & (CF_DEAD | CF_FIN_PENDING))
		return false;
	switch (c->state) {
	case WN_TCP_SYN_SENT:
	case WN_TCP_SYN_RCVD:
	case WN_TCP_ESTABLISHED:
	case WN_TCP_CLOSE_WAIT:
		return true;
	default:
		return false;
	}
}

uint32_t
wn_tcp_send_space(const struct wn_tcp_conn *c)
{
	const struct wn_tcp_ctx *x = c->ctx;
	uint32_t own = c->smax - c->slen, floor, fair, left;

	if (x->conf.send_budget == 0)
		return own;
	/*
	 * What is left of the budget, up to an equal share among the connections holding data
	 * (this one counted): the context's total stays within the budget however many send,
	 * and none takes more than its share. Two segments are always allowed (beyond the
	 * budget if need be): no connection starves, and the peer's delayed ACK never waits
	 * for a second segment.
	 */
	floor = 2 * tcp_emss(c);
	fair = RTE_MAX(x->conf.send_budget / ((uint32_t)x->st.snd_conns + (c->slen == 0)), floor);
	if (c->slen >= fair)
		return 0;
	left = x->st.snd_bytes < x->conf.send_budget ?
		       (uint32_t)(x->conf.send_budget - x->st.snd_bytes) : 0;
	if (c->slen < floor)
		left = RTE_MAX(left, floor - c->slen);
	return RTE_MIN(own, RTE_MIN(fair - c->slen, left));
}

/*
 * A ring of @p *cap octets at @p *buf whose @p used octets from @p *head on are kept (in
 * order) grows to hold @p need, by doubling from TCP_BUF_MIN, up to @p max: linearised
 * at offset 0. @return 0 or -ENOMEM (unchanged).
 */
static int
ring_grow(struct wn_tcp_ctx *ctx, uint8_t **buf, uint32_t *cap, uint32_t *head, uint32_t used,
	  uint32_t need, uint32_t max)
{
	uint32_t ncap = *cap != 0 ? *cap : RTE_MIN((uint32_t)TCP_BUF_MIN, max), first;
	uint8_t *nb;

	if (need <= *cap)
		return 0;
	if (need > max)
		return -ENOMEM;
	while (ncap < need)
		ncap = ncap > max / 2 ? max : 2 * ncap;
	nb = malloc(ncap);
	if (nb == NULL)
		return -ENOMEM;
	if (used > 0) {
		first = RTE_MIN(used, *cap - *head);
		memcpy(nb, *buf + *head, first);
		memcpy(nb + first, *buf, used - first);
	}
	free(*buf);
	ctx->st.buf_bytes += ncap - *cap;
	*buf = nb;
	*cap = ncap;
	*head = 0;
	return 0;
}

/* Room for @p len more octets in the send buffer (within smax). @return 0 or -ENOMEM. */
static int
sbuf_reserve(struct wn_tcp_conn *c, uint32_t len)
{
	return ring_grow(c->ctx, &c->sbuf, &c->scap, &c->shead, c->slen, c->slen + len, c->smax);
}

/*
 * Room in the receive buffer for in-window data up to @p need octets past RCV.NXT's
 * readable ones. Everything kept lies below the allocated size, so the whole ring moves
 * (out-of-order data included). @return 0 or -ENOMEM.
 */
int
wn_tcp_rbuf_reserve(struct wn_tcp_conn *c, uint32_t need)
{
	return ring_grow(c->ctx, &c->rbuf, &c->rcap, &c->rhead, c->rcap, need, c->rmax);
}

/* The ring of record boundaries, allocated with the first record. @return 0 or -ENOBUFS. */
static int
rec_ready(struct wn_tcp_conn *c)
{
	if (c->rec == NULL)
		c->rec = malloc(sizeof(*c->rec) * TCP_RECORDS_PER_CONN);
	return c->rec != NULL ? 0 : -ENOBUFS;
}

uint32_t
wn_tcp_next_seq(const struct wn_tcp_conn *c)
{
	return c->sbase + c->slen;
}

uint32_t
wn_tcp_snd_una(const struct wn_tcp_conn *c)
{
	return c->snd.una;
}

uint16_t
wn_tcp_emss(const struct wn_tcp_conn *c)
{
	return (uint16_t)tcp_emss(c);
}

static void
sbuf_put(struct wn_tcp_conn *c, const void *buf, uint32_t len)
{
	uint32_t tail = c->shead + c->slen, first;

	if (tail >= c->scap)
		tail -= c->scap;
	first = RTE_MIN(len, c->scap - tail);
	memcpy(c->sbuf + tail, buf, first);
	if (first < len)
		memcpy(c->sbuf, (const uint8_t *)buf + first, len - first);
	tcp_slen_add(c, len);
}

int
wn_tcp_send(struct wn_tcp_conn *c, const void *buf, uint32_t len)
{
	uint32_t n;

	if (!can_send(c))
		return -ENOTCONN;
	if (c->mode != WN_TCP_MODE_STREAM)
		return -EINVAL;
	n = RTE_MIN(len, wn_tcp_send_space(c));
	if (n == 0)
		return 0;
	if (sbuf_reserve(c, n) != 0)
		return -ENOMEM;
	sbuf_put(c, buf, n);
	wn_tcp_mark_pending(c);
	return (int)n;
}

int
wn_tcp_send_recordv(struct wn_tcp_conn *c, const struct iovec *iov, unsigned int iovcnt)
{
	uint64_t len = 0;
	struct seq_range *r;

	if (!can_send(c))
		return -ENOTCONN;
	if (c->mode != WN_TCP_MODE_RECORD || (iov == NULL && iovcnt != 0))
		return -EINVAL;
	for (unsigned int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (len == 0)
		return -EINVAL;
	/* Before the handshake the EMSS is not known yet; afterwards it bounds a record. */
	if ((c->state == WN_TCP_ESTABLISHED || c->state == WN_TCP_CLOSE_WAIT) &&
	    len > tcp_emss(c))
		return -EMSGSIZE;
	if (len > wn_tcp_send_space(c) || c->rec_len == TCP_RECORDS_PER_CONN)
		return -ENOBUFS;
	if (rec_ready(c) != 0 || sbuf_reserve(c, (uint32_t)len) != 0)
		return -ENOBUFS;
	r = &c->rec[(c->rec_head + c->rec_len) % TCP_RECORDS_PER_CONN];
	r->start = wn_tcp_next_seq(c);
	r->end = r->start + (uint32_t)len;
	if (c->rec_sh != NULL) {
		c->rec_sh[(c->rec_head + c->rec_len) % TCP_RECORDS_PER_CONN] = NULL;
		c->rec_fl[(c->rec_head + c->rec_len) % TCP_RECORDS_PER_CONN] = 0;
	}
	c->rec_len++;
	for (unsigned int i = 0; i < iovcnt; i++)
		sbuf_put(c, iov[i].iov_base, (uint32_t)iov[i].iov_len);
	wn_tcp_mark_pending(c);
	return 0;
}

/* The arrays of external records, made on a connection's first one. @return 0 or -ENOBUFS. */
static int
ext_alloc(struct wn_tcp_conn *c)
{
	c->rec_sh = calloc(TCP_RECORDS_PER_CONN, sizeof(*c->rec_sh));
	c->rec_fl = calloc(TCP_RECORDS_PER_CONN, sizeof(*c->rec_fl));
	c->xp = calloc(TCP_XPARTS_PER_CONN, sizeof(*c->xp));
	if (c->rec_sh == NULL || c->rec_fl == NULL || c->xp == NULL) {
		free(c->rec_sh);
		free(c->rec_fl);
		free(c->xp);
		c->rec_sh = NULL;
		c->rec_fl = NULL;
		c->xp = NULL;
		return -ENOBUFS;
	}
	/* records already queued have no external pieces */
	return 0;
}

int
wn_tcp_send_record_ref(struct wn_tcp_conn *c, const struct wn_tcp_part *parts, unsigned int n,
		       struct rte_mbuf_ext_shared_info *sh, uint32_t flags)
{
	uint64_t len = 0;
	unsigned int next = 0;
	uint32_t slot;
	struct seq_range *r;

	if (!can_send(c))
		return -ENOTCONN;
	if (c->mode != WN_TCP_MODE_RECORD || (parts == NULL && n != 0) ||
	    (flags & ~(WN_TCP_REC_COPY | WN_TCP_REC_CRC32C)) != 0)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		len += parts[i].len;
		next += parts[i].ext && parts[i].len != 0;
	}
	if (len == 0 || (next != 0 && (sh == NULL || sh->free_cb == NULL)))
		return -EINVAL;
	if (flags & WN_TCP_REC_CRC32C) {
		unsigned int k = n;

		while (k > 0 && parts[k - 1].len == 0)
			k--;
		/* the trailer is written into the send buffer: it must be in a copied piece */
		if (len <= 4 || k == 0 || parts[k - 1].ext || parts[k - 1].len < 4)
			return -EINVAL;
	}
	if ((c->state == WN_TCP_ESTABLISHED || c->state == WN_TCP_CLOSE_WAIT) &&
	    len > tcp_emss(c))
		return -EMSGSIZE;
	if ((next != 0 || flags != 0) && c->xp == NULL && ext_alloc(c) != 0)
		return -ENOBUFS;
	if (len > wn_tcp_send_space(c) || c->rec_len == TCP_RECORDS_PER_CONN ||
	    (next != 0 && c->xp_len + next > TCP_XPARTS_PER_CONN))
		return -ENOBUFS;
	/* external pieces take ring space too (their octets are not copied) */
	if (rec_ready(c) != 0 || sbuf_reserve(c, (uint32_t)len) != 0)
		return -ENOBUFS;
	slot = (c->rec_head + c->rec_len) % TCP_RECORDS_PER_CONN;
	r = &c->rec[slot];
	r->start = wn_tcp_next_seq(c);
	r->end = r->start + (uint32_t)len;
	if (c->rec_sh != NULL) {
		c->rec_sh[slot] = next != 0 ? sh : NULL;
		c->rec_fl[slot] = (flags & WN_TCP_REC_CRC32C) ? REC_F_CRC : 0;
		c->crc_pending += (flags & WN_TCP_REC_CRC32C) != 0;
	}
	c->rec_len++;
	for (unsigned int i = 0; i < n; i++) {
		if (parts[i].len == 0)
			continue;
		if (parts[i].ext) {
			struct tcp_xpart *x = &c->xp[(c->xp_head + c->xp_len) % TCP_XPARTS_PER_CONN];

			x->seq = wn_tcp_next_seq(c);
			x->len = parts[i].len;
			x->ptr = parts[i].base;
			x->iova = parts[i].iova;
			x->sh = sh;
			x->copy = (flags & WN_TCP_REC_COPY) != 0;
			c->xp_attach += !x->copy;
			c->xp_len++;
			tcp_slen_add(c, parts[i].len); /* space taken, nothing copied */
		} else {
			sbuf_put(c, parts[i].base, parts[i].len);
		}
	}
	if (next != 0)
		c->ctx->st.ext_records++;
	wn_tcp_mark_pending(c);
	return 0;
}

int
wn_tcp_send_record_ext(struct wn_tcp_conn *c, const struct wn_tcp_part *parts, unsigned int n,
		       struct rte_mbuf_ext_shared_info *sh)
{
	return wn_tcp_send_record_ref(c, parts, n, sh, 0);
}

uint8_t *
wn_tcp_record_claim(struct wn_tcp_conn *c, uint32_t len, int *err)
{
	uint32_t tail;

	*err = -ENOTCONN;
	if (!can_send(c))
		return NULL;
	*err = -EINVAL;
	if (c->mode != WN_TCP_MODE_RECORD || len == 0)
		return NULL;
	*err = -EMSGSIZE;
	if ((c->state == WN_TCP_ESTABLISHED || c->state == WN_TCP_CLOSE_WAIT) &&
	    len > tcp_emss(c))
		return NULL;
	*err = -ENOBUFS;
	if (len > wn_tcp_send_space(c) || c->rec_len == TCP_RECORDS_PER_CONN ||
	    rec_ready(c) != 0 || sbuf_reserve(c, len) != 0)
		return NULL;
	*err = 0;
	tail = c->shead + c->slen;
	if (tail >= c->scap)
		tail -= c->scap;
	return tail + len <= c->scap ? c->sbuf + tail : NULL;
}

void
wn_tcp_record_commit(struct wn_tcp_conn *c, uint32_t len)
{
	uint32_t slot = (c->rec_head + c->rec_len) % TCP_RECORDS_PER_CONN;
	struct seq_range *r = &c->rec[slot];

	assert(len > 0 && c->slen + len <= c->scap);
	r->start = wn_tcp_next_seq(c);
	r->end = r->start + len;
	if (c->rec_sh != NULL) {
		c->rec_sh[slot] = NULL;
		c->rec_fl[slot] = 0;
	}
	c->rec_len++;
	tcp_slen_add(c, len);
	wn_tcp_mark_pending(c);
}

int
wn_tcp_send_record(struct wn_tcp_conn *c, const void *buf, uint32_t len)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)buf, .iov_len = len };

	return wn_tcp_send_recordv(c, &iov, 1);
}

uint32_t
wn_tcp_recv_avail(const struct wn_tcp_conn *c)
{
	return c->rlen;
}

uint32_t
wn_tcp_recv_cap(const struct wn_tcp_conn *c)
{
	return c->rcap;
}

uint32_t
wn_tcp_recv_peek(struct wn_tcp_conn *c, const uint8_t **data)
{
	uint32_t n = RTE_MIN(c->rlen, c->rcap - c->rhead);

	*data = c->rbuf + c->rhead;
	return n;
}

unsigned int
wn_tcp_recv_peekv(struct wn_tcp_conn *c, struct iovec v[2])
{
	uint32_t first = RTE_MIN(c->rlen, c->rcap - c->rhead);

	if (c->rlen == 0)
		return 0;
	v[0].iov_base = c->rbuf + c->rhead;
	v[0].iov_len = first;
	if (first == c->rlen)
		return 1;
	v[1].iov_base = c->rbuf;
	v[1].iov_len = c->rlen - first;
	return 2;
}

int
wn_tcp_recv_consume(struct wn_tcp_conn *c, uint32_t len)
{
	uint32_t before;

	if (len > c->rlen)
		return -EINVAL;
	if (len == 0)
		return 0;
	before = wn_tcp_rcv_window(c);
	c->rhead = (c->rhead + len) % c->rcap;
	c->rlen -= len;
	/* emptied: start again at the front, so a connection that never holds much keeps
	 * touching the same few pages */
	if (c->rlen == 0 && c->nooo == 0)
		c->rhead = 0;
	/* Receiver SWS avoidance (RFC 9293 §3.8.6.2.2): announce once the window grew by
	 * min(rcvbuf/2, MSS) or opened from zero. */
	if (!(c->flags & CF_DEAD) && c->state >= WN_TCP_ESTABLISHED) {
		uint32_t after = wn_tcp_rcv_window(c);
		uint32_t thresh = RTE_MIN(c->rmax / 2, (uint32_t)c->rcv.mss);

		if (before < thresh || after - before >= thresh || after >= before + 2 * c->rcv.mss) {
			c->flags |= CF_WND_UPDATE;
			wn_tcp_mark_pending(c);
		}
	}
	return 0;
}

int
wn_tcp_recv(struct wn_tcp_conn *c, void *buf, uint32_t len)
{
	uint32_t n, first;

	if (c->flags & CF_DEAD)
		return -ENOTCONN;
	n = RTE_MIN(len, c->rlen);
	first = RTE_MIN(n, c->rcap - c->rhead);
	memcpy(buf, c->rbuf + c->rhead, first);
	memcpy((uint8_t *)buf + first, c->rbuf, n - first);
	wn_tcp_recv_consume(c, n);
	return (int)n;
}

int
wn_tcp_close(struct wn_tcp_conn *c)
{
	if ((c->flags & (CF_DEAD | CF_FIN_PENDING)) != 0)
		return -ENOTCONN;
	switch (c->state) {
	case WN_TCP_SYN_SENT:
		/* RFC 9293 §3.10.4: delete the TCB. */
		wn_tcp_conn_closed(c, WN_TCP_CLOSE_NORMAL);
		return 0;
	case WN_TCP_SYN_RCVD:
		break; /* FIN once established */
	case WN_TCP_ESTABLISHED:
		c->state = WN_TCP_FIN_WAIT_1;
		break;
	case WN_TCP_CLOSE_WAIT:
		c->state = WN_TCP_LAST_ACK;
		break;
	default:
		return -ENOTCONN;
	}
	c->flags |= CF_FIN_PENDING;
	c->snd.fin_seq = wn_tcp_next_seq(c);
	wn_tcp_mark_pending(c);
	return 0;
}

void
wn_tcp_abort(struct wn_tcp_conn *c)
{
	if (c->flags & CF_DEAD)
		return;
	/* RFC 9293 §3.10.5: RST in SYN-RECEIVED and synchronized states. */
	if (c->state != WN_TCP_SYN_SENT && c->state != WN_TCP_TIME_WAIT)
		wn_tcp_send_rst(c);
	wn_tcp_conn_closed(c, WN_TCP_CLOSE_ABORT);
}

enum wn_tcp_state
wn_tcp_conn_state(const struct wn_tcp_conn *c)
{
	return c->state;
}

void
wn_tcp_conn_info(const struct wn_tcp_conn *c, struct wn_tcp_info *i)
{
	memset(i, 0, sizeof(*i));
	i->state = c->state;
	i->local = c->local;
	i->remote = c->remote;
	i->iss = c->snd.iss;
	i->irs = c->rcv.irs;
	i->snd_una = c->snd.una;
	i->snd_nxt = c->snd.nxt;
	i->snd_max = c->snd.max;
	i->snd_wnd = c->snd.wnd;
	i->rcv_nxt = c->rcv.nxt;
	i->rcv_wnd = wn_tcp_rcv_window(c);
	i->snd_wscale = c->snd.wscale;
	i->rcv_wscale = c->rcv.wscale;
	i->ts_ok = c->ts_ok;
	i->sack_ok = c->sack_ok;
	i->mss = c->snd.mss;
	i->emss = (uint16_t)tcp_emss(c);
	i->cwnd = c->cwnd;
	i->ssthresh = c->ssthresh;
	i->srtt_us = c->srtt;
	i->rttvar_us = c->rttvar;
	i->rto_us = c->rto;
	i->backoff = c->backoff;
	i->in_recovery = c->in_recovery;
	i->dupthresh = c->dupthresh;
	i->sacked_bytes = wn_tcp_sb_sacked_bytes(c);
	i->sack_blocks = c->nsb;
	i->ooo_intervals = c->nooo;
	i->snd_alloc = c->scap;
	i->rcv_alloc = c->rcap;
	i->snd_queued = c->slen;
	i->rcv_queued = c->rlen;
	i->mode = c->mode;
	i->retrans = c->retrans;
}

void
wn_tcp_stats_get(const struct wn_tcp_ctx *ctx, struct wn_tcp_stats *st)
{
	*st = ctx->st;
}

uint32_t
wn_tcp_conn_count(const struct wn_tcp_ctx *ctx)
{
	return ctx->live;
}
