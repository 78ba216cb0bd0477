/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA over TCP as a DDP lower layer (wn_mpa_tcp.h, wn_llp.h): the instance, its listeners
 * and streams, the TCP callbacks of a stream and the lib/llp operations. One TCP connection and
 * one MPA connection per stream; startup, transmit, receive and zero-copy live in the other
 * mpa_tcp_*.c files.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_log.h>
#include <rte_tailq.h>

#include "mpa_tcp_priv.h"

RTE_LOG_REGISTER_DEFAULT(wn_mpa_logtype, NOTICE);

static_assert(WN_MPA_PD_MAX <= WN_LLP_PD_MAX, "a Request's Private Data fits wn_llp_req");

static const struct wn_llp_ops mpa_tcp_ops;
static const struct wn_tcp_cb stream_cb;
static const struct wn_tcp_cb listen_cb;

static struct mpa_stream *
stream_new(struct mpa_proto *p, bool active)
{
	struct mpa_stream *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->l.ops = &mpa_tcp_ops;
	s->l.active = active;
	s->p = p;
	TAILQ_INIT(&s->zc_acks);
	TAILQ_INSERT_TAIL(&p->streams, s, next);
	p->n_streams++;
	return s;
}

/* Off the startup list (its startup is over, or the stream goes). */
static void
stream_free(struct mpa_stream *s)
{
	wn_mpa_startup_leave(s);
	if (s->on_dead)
		TAILQ_REMOVE(&s->p->dead, s, tnext);
	if (s->ackw_queued)
		TAILQ_REMOVE(&s->p->ackw_due, s, ackw_next);
	free(s->ackw);
	TAILQ_REMOVE(&s->p->streams, s, next);
	s->p->n_streams--;
	free(s->rxbuf);
	free(s->ooobuf);
	free(s->txbuf);
	free(s);
}

static int
wn_tcp_established(struct wn_tcp_conn *tc, void *arg)
{
	struct mpa_stream *s = arg;

	s->tcp = tc;
	if (wn_mpa_stream_start(s) != 0) {
		MPA_LOG(NOTICE, "MPA start failed\n");
		wn_tcp_abort(tc);
	}
	return 0;
}

static void
tcp_emss(struct wn_tcp_conn *tc, void *arg, uint16_t emss)
{
	struct mpa_stream *s = arg;
	struct wn_llp_event ev = {.type = WN_LLP_EV_MULPDU};
	uint32_t m;

	(void)tc;
	(void)emss;
	if (!s->full)
		return;
	m = wn_mpa_stream_mulpdu(s);
	if (m == s->params.mulpdu)
		return;
	s->params.mulpdu = m;
	ev.params = &s->params;
	wn_mpa_up_event(s, &ev);
}

static enum wn_llp_close
close_of(enum wn_tcp_close_reason why)
{
	switch (why) {
	case WN_TCP_CLOSE_NORMAL:
		return WN_LLP_CLOSE_NORMAL;
	case WN_TCP_CLOSE_REFUSED:
		return WN_LLP_CLOSE_REFUSED;
	case WN_TCP_CLOSE_TIMEOUT:
		return WN_LLP_CLOSE_TIMEOUT;
	default:
		return WN_LLP_CLOSE_RESET;
	}
}

static void
tcp_closed(struct wn_tcp_conn *tc, void *arg, enum wn_tcp_close_reason why)
{
	struct mpa_stream *s = arg;
	struct wn_llp_event ev = {.type = WN_LLP_EV_CLOSED, .why = close_of(why)};

	(void)tc;
	/* closed or reset by the peer (not aborted by us, not timed out): RFC 6581 §10's
	 * unenhanced responder */
	ev.enh_unanswered = (why == WN_TCP_CLOSE_NORMAL || why == WN_TCP_CLOSE_RESET) &&
			    wn_mpa_enh_unanswered(s);
	s->tcp = NULL;
	s->gone = true;
	s->tx_ok = false;
	wn_mpa_zc_close(s); /* TCP dropped its references: the message's token goes */
	wn_mpa_update_ready(s);
	wn_mpa_up_event(s, &ev); /* freed later (poll): callers up the stack may still hold it */
	wn_mpa_stream_maybe_dead(s);
}

static const struct wn_tcp_cb stream_cb = {
	.established = wn_tcp_established,
	.recv = wn_mpa_rx_recv,
	.recv_seg = wn_mpa_rx_seg,
	.recv_ooo = wn_mpa_ooo_recv,
	.eof = wn_mpa_rx_eof,
	.sent = wn_mpa_zc_sent,
	.emss = tcp_emss,
	.closed = tcp_closed,
};

static int
listen_established(struct wn_tcp_conn *tc, void *arg)
{
	struct mpa_listener *ls = arg;
	struct mpa_stream *s = stream_new(ls->p, false);
	struct wn_tcp_info ti;

	if (s == NULL)
		return -ENOMEM; /* refused: reset */
	s->tcp = tc;
	/* the addresses, for wn_llp_info() in the upcall (the CM's connect request) */
	wn_tcp_conn_info(tc, &ti);
	s->local = ti.local;
	s->remote = ti.remote;
	if (ls->incoming(ls->arg, &s->l) != 0) {
		stream_free(s); /* TCP resets it; its callbacks are still the listener's */
		return -ECONNREFUSED;
	}
	wn_tcp_conn_set_arg(tc, s);
	wn_tcp_conn_set_cb(tc, &stream_cb);
	/* the responder's IRD/ORD come with the accept; the Request is judged then */
	if (wn_mpa_stream_start(s) != 0) {
		MPA_LOG(NOTICE, "MPA start failed\n");
		wn_tcp_abort(tc);
	}
	return 0;
}

static void
listen_closed(struct wn_tcp_conn *tc, void *arg, enum wn_tcp_close_reason why)
{
	/* a connection that died before it was established: nothing of ours exists */
	(void)tc;
	(void)arg;
	(void)why;
}

static const struct wn_tcp_cb listen_cb = {
	.established = listen_established,
	.closed = listen_closed,
};

/* ---------------------------------------------------------------- instance ops */

static void
ep_to_tcp(const struct wn_llp_ep *e, struct wn_tcp_endpoint *t)
{
	memset(t, 0, sizeof(*t));
	t->addr = e->addr;
	t->port = e->port;
}

static void
ep_of_tcp(const struct wn_tcp_endpoint *t, struct wn_llp_ep *e)
{
	memset(e, 0, sizeof(*e));
	e->addr = t->addr;
	e->port = t->port;
}

static struct wn_llp *
op_connect(struct wn_llp_proto *bp, const struct wn_llp_connect *c)
{
	struct mpa_proto *p = (struct mpa_proto *)bp;
	struct wn_tcp_endpoint local, remote;
	struct mpa_stream *s;
	int err;

	if (c->pd_len > WN_MPA_PD_MAX || (c->pd_len != 0 && c->pd == NULL)) {
		errno = EINVAL;
		return NULL;
	}
	s = stream_new(p, true);
	if (s == NULL)
		return NULL;
	if (c->rev > WN_MPA_REV_MAX) {
		stream_free(s);
		errno = EINVAL;
		return NULL;
	}
	s->rev = c->rev;
	wn_llp_connect_keep(&s->l, &s->req, c);
	ep_to_tcp(&c->local, &local);
	ep_to_tcp(&c->remote, &remote);
	s->local = local;
	s->remote = remote;
	s->tcp = wn_tcp_connect(p->c.tcp, &local, &remote, &stream_cb, s);
	if (s->tcp == NULL) {
		err = errno;
		stream_free(s);
		errno = err;
		return NULL;
	}
	return &s->l;
}

static struct wn_llp_listener *
op_listen(struct wn_llp_proto *bp, const struct wn_llp_ep *ep, wn_llp_incoming_fn incoming,
	  void *arg)
{
	struct mpa_listener *ls = calloc(1, sizeof(*ls));
	struct wn_tcp_endpoint te;
	int err;

	if (ls == NULL)
		return NULL;
	ls->p = (struct mpa_proto *)bp;
	ls->incoming = incoming;
	ls->arg = arg;
	ep_to_tcp(ep, &te);
	ls->tl = wn_tcp_listen(ls->p->c.tcp, &te, &listen_cb, ls);
	if (ls->tl == NULL) {
		err = errno;
		free(ls);
		errno = err;
		return NULL;
	}
	TAILQ_INSERT_TAIL(&ls->p->listeners, ls, next);
	return (struct wn_llp_listener *)ls;
}

static void
op_unlisten(struct wn_llp_listener *bl)
{
	struct mpa_listener *ls = (struct mpa_listener *)bl;

	if (ls == NULL)
		return;
	TAILQ_REMOVE(&ls->p->listeners, ls, next);
	wn_tcp_unlisten(ls->tl);
	free(ls);
}

/*
 * Free the dead streams; run the startup timers that expired. The startup list is in
 * deadline order: a stream whose startup is over leaves it, the first that has not expired
 * ends the walk.
 */
static void
tick(struct mpa_proto *p)
{
	struct mpa_stream *s;

	while ((s = TAILQ_FIRST(&p->dead)) != NULL)
		stream_free(s);
	while ((s = TAILQ_FIRST(&p->startup)) != NULL) {
		enum wn_mpa_conn_state st = wn_mpa_conn_state(&s->mpa);

		if (s->tcp == NULL || (st != WN_MPA_CONN_REQ_SENT && st != WN_MPA_CONN_WAIT_REQ &&
				       st != WN_MPA_CONN_REQ_RCVD)) {
			wn_mpa_startup_leave(s);
			continue;
		}
		if (p->now < wn_mpa_conn_deadline(&s->mpa))
			break;
		wn_mpa_startup_leave(s);
		(void)wn_mpa_conn_tick(&s->mpa, p->now); /* ERROR event on expiry */
	}
}

static unsigned int
op_poll(struct wn_llp_proto *bp, uint64_t now)
{
	struct mpa_proto *p = (struct mpa_proto *)bp;
	unsigned int n;

	p->now = now;
	n = wn_mpa_zc_poll(p);
	while (!TAILQ_EMPTY(&p->ackw_due)) {
		wn_mpa_ackw_release(TAILQ_FIRST(&p->ackw_due));
		n++;
	}
	if (now - p->last_tick >= TICK_US) {
		p->last_tick = now;
		tick(p);
	}
	return n;
}

/* ---------------------------------------------------------------- stream ops */

static int
op_accept(struct wn_llp *l, const struct wn_llp_caps *caps, const uint8_t *pd, uint16_t pd_len)
{
	struct mpa_stream *s = mpa_stream_of(l);
	struct wn_mpa_caps mc;
	int rc;

	if (s->tcp == NULL || wn_mpa_conn_state(&s->mpa) != WN_MPA_CONN_REQ_RCVD)
		return -EINVAL;
	memset(&mc, 0, sizeof(mc));
	if (caps == NULL)
		caps = &s->req.caps;
	mc.ird = RTE_MIN(caps->ird, (uint16_t)WN_MPA_IRD_ORD_MAX);
	mc.ord = RTE_MIN(caps->ord, (uint16_t)WN_MPA_IRD_ORD_MAX);
	mc.rtr = s->p->c.rtr;
	/* ESTABLISHED (Full Operation) or ERROR come from inside the call */
	rc = wn_mpa_conn_accept(&s->mpa, &mc, pd, pd_len, s->p->now);
	if (s->tcp != NULL) {
		wn_mpa_flush_startup(s);
		/*
		 * Octets that arrived behind the Request while the ULP decided; an accept from
		 * inside the REQUEST upcall leaves them to the wn_mpa_rx_input() that raised it
		 * (which has not consumed the Request yet).
		 */
		if (!s->in_input)
			wn_mpa_rx_input(s);
	}
	return rc;
}

static int
op_reject(struct wn_llp *l, const uint8_t *pd, uint16_t pd_len)
{
	struct mpa_stream *s = mpa_stream_of(l);
	int rc = wn_mpa_conn_reject(&s->mpa, pd, pd_len);

	if (rc == 0)
		wn_mpa_flush_startup(s);
	return rc;
}


static int
op_close(struct wn_llp *l)
{
	struct mpa_stream *s = mpa_stream_of(l);

	s->tx_ok = false;
	wn_mpa_update_ready(s);
	return s->tcp != NULL ? wn_tcp_close(s->tcp) : 0;
}

static void
op_abort(struct wn_llp *l)
{
	struct mpa_stream *s = mpa_stream_of(l);

	s->tx_ok = false;
	wn_mpa_update_ready(s);
	if (s->tcp != NULL)
		wn_tcp_abort(s->tcp); /* CLOSED comes from inside */
}

static int
op_ack_completions(struct wn_llp *l)
{
	mpa_stream_of(l)->ack_completions = true;
	return 0;
}

static void
op_release(struct wn_llp *l)
{
	struct mpa_stream *s = mpa_stream_of(l);

	s->released = true;
	s->l.up = NULL;
	s->l.up_arg = NULL;
	wn_mpa_stream_maybe_dead(s);
}

static void
op_info(const struct wn_llp *l, struct wn_llp_info *in)
{
	const struct mpa_stream *s = mpa_stream_of_const(l);
	struct wn_tcp_info t;

	memset(in, 0, sizeof(*in));
	ep_of_tcp(&s->local, &in->local);
	ep_of_tcp(&s->remote, &in->remote);
	in->state = s->started ? wn_mpa_conn_state_str(wn_mpa_conn_state(&s->mpa)) : "tcp";
	in->active = l->active;
	in->full = s->full;
	in->params = s->params;
	in->rx_ulpdus = s->mpa.fpdus_rx;
	in->tx_ulpdus = s->tx_ulpdus;
	if (s->tcp == NULL) {
		in->transport.state = "CLOSED";
		in->transport.quiet = true;
		return;
	}
	wn_tcp_conn_info(s->tcp, &t);
	in->transport.state = wn_tcp_state_name(t.state);
	in->transport.quiet = t.state == WN_TCP_TIME_WAIT || t.state == WN_TCP_CLOSED;
	in->transport.cwnd = t.cwnd;
	in->transport.srtt_us = t.srtt_us;
	in->transport.rto_us = t.rto_us;
	in->transport.backoff = t.backoff;
	in->transport.retrans = t.retrans;
	in->transport.snd_queued = t.snd_queued;
	in->transport.rcv_queued = t.rcv_queued;
	in->transport.snd_una = t.snd_una - t.iss;
	in->transport.snd_nxt = t.snd_nxt - t.iss;
	in->transport.snd_max = t.snd_max - t.iss;
	in->transport.snd_wnd = t.snd_wnd;
	in->transport.rcv_nxt = t.rcv_nxt - t.irs;
	in->transport.rcv_wnd = t.rcv_wnd;
	in->transport.in_recovery = t.in_recovery;
	in->transport.sacked_bytes = t.sacked_bytes;
}

static const struct wn_llp_ops mpa_tcp_ops = {
	.name = "mpa-tcp",
	.flags = WN_LLP_F_RX_HOLD,
	.connect = op_connect,
	.listen = op_listen,
	.unlisten = op_unlisten,
	.poll = op_poll,
	.accept = op_accept,
	.reject = op_reject,
	.send = wn_mpa_tx_send,
	.close = op_close,
	.abort = op_abort,
	.release = op_release,
	.info = op_info,
	.rx_resume = wn_mpa_rx_resume,
	.ack_completions = op_ack_completions,
};

/* ---------------------------------------------------------------- instance */


struct wn_llp_proto *
wn_mpa_tcp_create(const struct wn_mpa_tcp_conf *conf)
{
	struct mpa_proto *p;
	int rc;

	if (conf == NULL || conf->tcp == NULL ||
	    ((conf->zero_copy || conf->ref_tx) &&
	     (conf->pin == NULL || conf->unpin == NULL ||
	      conf->index >= WN_MPA_TCP_MAX_INSTANCES))) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->base.ops = &mpa_tcp_ops;
	p->c = *conf;
	TAILQ_INIT(&p->streams);
	TAILQ_INIT(&p->startup);
	TAILQ_INIT(&p->dead);
	TAILQ_INIT(&p->listeners);
	TAILQ_INIT(&p->ackw_due);
	p->now = wn_net_now_us();
	p->last_tick = p->now;
	if (conf->zero_copy || conf->ref_tx) {
		rc = wn_mpa_zc_init(p);
		if (rc != 0)
			MPA_LOG(WARNING, "no memory for transmit tokens (%s): registered memory is "
				"copied\n", rte_strerror(-rc));
		p->ref = rc == 0 && conf->ref_tx;
		p->attach = rc == 0 && conf->zero_copy;
	}
	return &p->base;
}

void
wn_mpa_tcp_free(struct wn_llp_proto *bp)
{
	struct mpa_proto *p = (struct mpa_proto *)bp;
	struct mpa_stream *s;

	if (p == NULL)
		return;
	TAILQ_FOREACH(s, &p->streams, next) {
		s->released = true;
		if (s->tcp != NULL)
			wn_tcp_abort(s->tcp);
		wn_mpa_zc_close(s);
	}
	while ((s = TAILQ_FIRST(&p->streams)) != NULL)
		stream_free(s);
	while (!TAILQ_EMPTY(&p->listeners))
		op_unlisten((struct wn_llp_listener *)TAILQ_FIRST(&p->listeners));
	free(p);
}

bool
wn_mpa_tcp_zero_copy(const struct wn_llp_proto *bp)
{
	return ((const struct mpa_proto *)bp)->attach;
}

uint32_t
wn_mpa_tcp_streams(const struct wn_llp_proto *bp)
{
	return ((const struct mpa_proto *)bp)->n_streams;
}
