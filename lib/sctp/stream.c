/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DDP over SCTP's lower-layer ops (wn_llp.h, wn_sctp.h): a stream is one DDP Stream Session
 * (session.c) on one stream pair of an association (assoc.c); the instance's ops and its
 * creation.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_tailq.h>
#include <rte_errno.h>

#include "sctp_priv.h"

/* A session whose Terminate went out waits this long for the peer's. */
#define LINGER_US 2000000u

static_assert(WN_SCTP_PD_MAX - WN_MPA_ENH_LEN <= WN_LLP_PD_MAX,
	      "an Initiate's Private Data fits wn_llp_req");

static const struct wn_llp_ops sctp_ops;
static atomic_uint sctp_serial;
static const struct wn_sctp_sess_ops sess_ops;

static struct sctp_stream *
stream_of(struct wn_llp *l)
{
	return (struct sctp_stream *)l;
}

static void
up_event(struct sctp_stream *s, struct wn_llp_event *ev)
{
	if (!s->released && s->l.up != NULL && s->l.up->event != NULL)
		s->l.up->event(s->l.up_arg, &s->l, ev);
}

void
wn_sctp_stream_ready(struct sctp_stream *s)
{
	s->l.tx_ready = s->a != NULL && !s->a->gone && !s->a->blocked && !s->closed &&
			wn_sctp_sess_tx_ok(&s->sess);
}

/* Out of its association's slot: the stream id may start another session. */
static void
detach(struct sctp_stream *s)
{
	struct sctp_assoc *a = s->a;

	if (s->detached)
		return;
	s->detached = true;
	if (a != NULL && a->slot[s->sid] == s)
		a->slot[s->sid] = NULL;
}

/* ---------------------------------------------------------------- the session's ops */

static int
sess_send(void *arg, uint32_t ppid, const uint8_t *msg, size_t len)
{
	struct sctp_stream *s = arg;
	struct sctp_assoc *a = s->a;
	struct sctp_sndinfo si = {
		.snd_sid = s->sid,
		.snd_flags = SCTP_UNORDERED, /* RFC 5043 §10: every chunk */
		.snd_ppid = rte_cpu_to_be_32(ppid),
	};

	if (a == NULL || a->so == NULL || a->gone || a->shutting)
		return -EPIPE;
	wn_sctp_cur = s->p;
	if (usrsctp_sendv(a->so, msg, len, NULL, 0, &si, sizeof(si), SCTP_SENDV_SNDINFO, 0) < 0) {
		if (errno != EWOULDBLOCK && errno != EAGAIN)
			return -errno;
		a->blocked = true; /* until usrsctp says it is writable again */
		for (uint16_t i = 0; i < a->n_streams; i++)
			if (a->slot[i] != NULL)
				wn_sctp_stream_ready(a->slot[i]);
		return -EAGAIN;
	}
	if (ppid == WN_SCTP_PPID_CTL && len == WN_SCTP_CTL_HDR_LEN && msg[3] == WN_SCTP_TERMINATE)
		s->p->sx.terms_sent++;
	return 0;
}

/* A session without an owner (passive, before the listener took it) failed or ended. */
static void
orphan_end(struct sctp_stream *s)
{
	(void)wn_sctp_sess_terminate(&s->sess);
	s->closed = true;
	s->released = true;
	detach(s);
	if (s->a != NULL)
		wn_sctp_assoc_maybe_shutdown(s->a);
}

static void
sess_event(void *arg, const struct wn_llp_event *cev)
{
	struct sctp_stream *s = arg;
	struct wn_llp_event ev = *cev;
	struct sctp_listener *ls = s->a != NULL ? s->a->ls : NULL;

	switch (ev.type) {
	case WN_LLP_EV_REQUEST:
		/* RFC 5043 §6.4: a session the listener does not take gets a Terminate */
		if (ls == NULL || ls->incoming(ls->arg, &s->l) != 0) {
			orphan_end(s);
			return;
		}
		s->incoming_done = true;
		break;
	case WN_LLP_EV_ESTABLISHED:
		s->p->sx.sessions++;
		break;
	case WN_LLP_EV_EOF:
		s->p->sx.terms_recv++;
		break;
	case WN_LLP_EV_ERROR:
		s->p->base.st.errors++;
		if (!s->l.active && !s->incoming_done) {
			orphan_end(s);
			return;
		}
		break;
	default:
		break;
	}
	wn_sctp_stream_ready(s);
	up_event(s, &ev);
}

static void
sess_ulpdu(void *arg, const uint8_t *ulpdu, size_t len)
{
	struct sctp_stream *s = arg;

	s->p->base.st.rx_ulpdus++;
	if (!s->released && s->l.up != NULL && s->l.up->ulpdu != NULL)
		(void)s->l.up->ulpdu(s->l.up_arg, ulpdu, len);
}

static const struct wn_sctp_sess_ops sess_ops = {
	.send = sess_send,
	.event = sess_event,
	.ulpdu = sess_ulpdu,
};

/* ---------------------------------------------------------------- streams */

static void
ep_of(struct wn_llp_ep *e, const struct wn_ip_addr *addr, uint16_t port)
{
	memset(e, 0, sizeof(*e));
	e->addr = *addr;
	e->port = port;
}

struct sctp_stream *
wn_sctp_stream_new(struct sctp_assoc *a, uint16_t sid, bool active)
{
	struct sctp_proto *p = a->p;
	struct sctp_stream *s = calloc(1, sizeof(*s));
	struct wn_sctp_sess_cfg cfg;

	if (s == NULL)
		return NULL;
	s->l.ops = &sctp_ops;
	s->l.active = active;
	s->p = p;
	s->a = a;
	s->sid = sid;
	s->mulpdu = wn_wire_sctp_mulpdu(p->c.mtu, wn_sctp_path_ip_hdr(a->path));
	s->txbuf = malloc(s->mulpdu + WN_SCTP_SSN_LEN);
	ep_of(&s->local, &a->path->local, a->lport);
	ep_of(&s->remote, &a->path->remote, a->rport);
	memset(&cfg, 0, sizeof(cfg));
	cfg.initiator = active;
	cfg.caps.rtr = p->c.rtr;
	cfg.mulpdu = s->mulpdu;
	cfg.timeout_us = p->c.timeout_us;
	cfg.ops = &sess_ops;
	cfg.arg = s;
	if (s->txbuf == NULL || wn_sctp_sess_init(&s->sess, &cfg, p->now) != 0) {
		free(s->txbuf);
		free(s);
		return NULL;
	}
	a->slot[sid] = s;
	a->refs++;
	TAILQ_INSERT_TAIL(&p->streams, s, next);
	p->sx.streams_open++;
	return s;
}

void
wn_sctp_stream_start(struct sctp_stream *s)
{
	struct sctp_proto *p = s->p;
	struct wn_sctp_sess_cfg cfg = s->sess.cfg;

	/* the Initiate carries what the ULP asked for */
	cfg.enhanced = p->c.enhanced;
	cfg.caps.ird = RTE_MIN(s->req.caps.ird, (uint16_t)WN_MPA_IRD_ORD_MAX);
	cfg.caps.ord = RTE_MIN(s->req.caps.ord, (uint16_t)WN_MPA_IRD_ORD_MAX);
	cfg.caps.p2p = p->c.p2p;
	cfg.caps.rtr = p->c.rtr;
	cfg.pd = s->req.pd;
	cfg.pd_len = s->req.pd_len;
	if (wn_sctp_sess_init(&s->sess, &cfg, p->now) != 0 ||
	    wn_sctp_sess_start(&s->sess, p->now) != 0)
		wn_sctp_assoc_abort(s->a, WN_LLP_CLOSE_RESET);
}

void
wn_sctp_stream_gone(struct sctp_stream *s, enum wn_llp_close why)
{
	struct wn_llp_event ev = {.type = WN_LLP_EV_CLOSED, .why = why};

	if (s->closed)
		return;
	s->closed = true;
	s->why = why;
	detach(s);
	wn_sctp_stream_ready(s);
	if (!s->l.active && !s->incoming_done)
		s->released = true; /* nobody ever owned it */
	up_event(s, &ev);
}

void
wn_sctp_stream_eof(struct sctp_stream *s)
{
	wn_sctp_sess_eof(&s->sess);
}

static void
stream_free(struct sctp_stream *s)
{
	struct sctp_assoc *a = s->a;

	TAILQ_REMOVE(&s->p->streams, s, next);
	s->p->sx.streams_open--;
	detach(s);
	wn_sctp_sess_fini(&s->sess);
	if (a != NULL) {
		a->refs--;
		wn_sctp_assoc_put(a);
	}
	free(s->txbuf);
	free(s);
}

/* Every millisecond: control messages that waited, deadlines, sessions over, frees. */
void
wn_sctp_streams_reap(struct sctp_proto *p)
{
	struct sctp_stream *s, *tmp;

	RTE_TAILQ_FOREACH_SAFE(s, &p->streams, next, tmp) {
		struct sctp_assoc *a = s->a;

		if (!s->closed && a != NULL && !a->gone) {
			wn_sctp_cur = p;
			wn_sctp_sess_poll(&s->sess, p->now);
			wn_sctp_stream_ready(s);
			if (s->sess.sent_term && s->linger == 0)
				s->linger = p->now + LINGER_US; /* below */
			if (wn_sctp_sess_done(&s->sess) ||
			    (s->sess.sent_term && s->sess.ctl_len == 0)) {
				bool others = false;

				for (uint16_t i = 0; i < a->n_streams; i++)
					others |= a->slot[i] != NULL && a->slot[i] != s;
				/* over while its association carries other sessions: CLOSED now
				 * (or after the linger, when the peer's Terminate does not come) */
				if (others && (wn_sctp_sess_done(&s->sess) ||
					       p->now >= s->linger))
					wn_sctp_stream_gone(s, WN_LLP_CLOSE_NORMAL);
				else if (!others)
					wn_sctp_assoc_maybe_shutdown(a);
			}
		}
		if (s->released && s->closed)
			stream_free(s);
	}
}

/* ---------------------------------------------------------------- instance ops */

static struct wn_llp *
op_connect(struct wn_llp_proto *bp, const struct wn_llp_connect *c)
{
	struct sctp_proto *p = (struct sctp_proto *)bp;
	struct sockaddr_conn sa;
	struct sctp_path *path;
	struct sctp_stream *s;
	struct sctp_assoc *a;
	struct socket *so;
	int err;

	if (c->pd_len > WN_SCTP_PD_MAX - WN_MPA_ENH_LEN || (c->pd_len != 0 && c->pd == NULL) ||
	    c->local.addr.family != c->remote.addr.family) {
		errno = EINVAL;
		return NULL;
	}
	path = wn_sctp_path_get(p, &c->local.addr, &c->remote.addr);
	if (path == NULL)
		return NULL;
	wn_sctp_cur = p;
	so = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
	if (so == NULL)
		return NULL;
	err = -wn_sctp_socket_setup(p, so, wn_sctp_path_ip_hdr(path));
	wn_sctp_sconn(&sa, path, c->local.port);
	if (err == 0 && usrsctp_bind(so, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		err = errno;
	wn_sctp_sconn(&sa, path, c->remote.port);
	if (err == 0 && usrsctp_connect(so, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
	    errno != EINPROGRESS)
		err = errno;
	if (err != 0) {
		usrsctp_close(so);
		errno = err;
		return NULL;
	}
	a = wn_sctp_assoc_new(p, so, path, c->local.port, c->remote.port, true);
	if (a == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	s = wn_sctp_stream_new(a, 0, true);
	if (s == NULL) {
		wn_sctp_assoc_abort(a, WN_LLP_CLOSE_RESET);
		errno = ENOMEM;
		return NULL;
	}
	wn_llp_connect_keep(&s->l, &s->req, c);
	return &s->l;
}

static struct wn_llp_listener *
op_listen(struct wn_llp_proto *bp, const struct wn_llp_ep *ep, wn_llp_incoming_fn incoming,
	  void *arg)
{
	struct sctp_proto *p = (struct sctp_proto *)bp;
	struct sctp_listener *l;

	TAILQ_FOREACH(l, &p->listeners, next)
		if (l->ep.port == ep->port) {
			errno = EADDRINUSE;
			return NULL;
		}
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return NULL;
	l->ls = wn_sctp_lsock_get(p, ep->port);
	if (l->ls == NULL) {
		int err = errno;

		free(l);
		errno = err;
		return NULL;
	}
	l->p = p;
	l->ep = *ep;
	l->incoming = incoming;
	l->arg = arg;
	TAILQ_INSERT_TAIL(&p->listeners, l, next);
	return (struct wn_llp_listener *)l;
}

static void
op_unlisten(struct wn_llp_listener *bl)
{
	struct sctp_listener *l = (struct sctp_listener *)bl;
	struct sctp_assoc *a;

	if (l == NULL)
		return;
	TAILQ_FOREACH(a, &l->p->assocs, next)
		if (a->ls == l)
			a->ls = NULL; /* streams already handed over stay */
	TAILQ_REMOVE(&l->p->listeners, l, next);
	wn_sctp_lsock_put(l->ls);
	free(l);
}

static unsigned int
op_poll(struct wn_llp_proto *bp, uint64_t now)
{
	struct sctp_proto *p = (struct sctp_proto *)bp;
	unsigned int n;

	p->now = now;
	wn_sctp_cur = p;
	wn_sctp_timers(now);
	n = wn_sctp_adopt_poll(p);
	n += wn_sctp_ready_run(p);
	if (now - p->last_tick >= SCTP_TICK_US) {
		p->last_tick = now;
		wn_sctp_assoc_tick(p);
		wn_sctp_streams_reap(p);
		n += wn_sctp_ready_run(p);
	}
	return n;
}

/* ---------------------------------------------------------------- stream ops */

static int
op_accept(struct wn_llp *l, const struct wn_llp_caps *caps, const uint8_t *pd, uint16_t pd_len)
{
	struct sctp_stream *s = stream_of(l);
	uint16_t ird = caps != NULL ? caps->ird : 0, ord = caps != NULL ? caps->ord : 0;

	wn_sctp_cur = s->p;
	return wn_sctp_sess_accept(&s->sess, RTE_MIN(ird, (uint16_t)WN_MPA_IRD_ORD_MAX),
				   RTE_MIN(ord, (uint16_t)WN_MPA_IRD_ORD_MAX), pd, pd_len);
}

static int
op_reject(struct wn_llp *l, const uint8_t *pd, uint16_t pd_len)
{
	struct sctp_stream *s = stream_of(l);

	wn_sctp_cur = s->p;
	return wn_sctp_sess_reject(&s->sess, pd, pd_len);
}

static int
op_send(struct wn_llp *l, const struct wn_llp_ulpdu *u)
{
	struct sctp_stream *s = stream_of(l);
	struct sctp_proto *p = s->p;
	int rc;

	if (!l->tx_ready) {
		p->base.st.tx_again++;
		return -EAGAIN;
	}
	rc = wn_sctp_sess_send(&s->sess, u, s->txbuf);
	if (rc != 0) {
		p->base.st.tx_again++;
		return -EAGAIN; /* no room, or the association is ending: CLOSED follows */
	}
	p->base.st.tx_ulpdus++;
	if (u->n_iov > 0) {
		/* usrsctp copies every message */
		p->base.st.copy_ulpdus++;
		p->base.st.copy_staged++;
		p->base.st.copy_bytes += u->len - u->hdr_len;
	}
	return 0;
}

static int
op_close(struct wn_llp *l)
{
	struct sctp_stream *s = stream_of(l);
	struct sctp_assoc *a = s->a;

	l->tx_ready = false;
	if (a == NULL || a->gone || s->closed)
		return 0;
	if (!a->up) {
		wn_sctp_assoc_abort(a, WN_LLP_CLOSE_RESET); /* nothing said yet: nothing to close */
		return 0;
	}
	wn_sctp_cur = s->p;
	(void)wn_sctp_sess_terminate(&s->sess);
	wn_sctp_assoc_maybe_shutdown(a);
	return 0;
}

static void
op_abort(struct wn_llp *l)
{
	struct sctp_stream *s = stream_of(l);
	struct sctp_assoc *a = s->a;
	bool others = false;

	l->tx_ready = false;
	if (a == NULL || a->gone || s->closed)
		return;
	for (uint16_t i = 0; i < a->n_streams; i++)
		others |= a->slot[i] != NULL && a->slot[i] != s;
	if (!others) {
		wn_sctp_assoc_abort(a, WN_LLP_CLOSE_RESET); /* SCTP ABORT; CLOSED from inside */
		return;
	}
	wn_sctp_cur = s->p;
	(void)wn_sctp_sess_terminate(&s->sess);
	wn_sctp_stream_gone(s, WN_LLP_CLOSE_RESET);
}

static void
op_release(struct wn_llp *l)
{
	struct sctp_stream *s = stream_of(l);

	s->released = true;
	s->l.up = NULL;
	s->l.up_arg = NULL;
}

static const char *
assoc_state(const struct sctp_stream *s)
{
	const struct sctp_assoc *a = s->a;

	if (a == NULL || a->gone)
		return "CLOSED";
	if (a->shutting)
		return "SHUTDOWN";
	return a->up ? "ESTABLISHED" : "COOKIE_WAIT";
}

static void
op_info(const struct wn_llp *l, struct wn_llp_info *in)
{
	const struct sctp_stream *s = (const struct sctp_stream *)l;
	struct sctp_status ss;
	socklen_t sl = sizeof(ss);

	memset(in, 0, sizeof(*in));
	in->local = s->local;
	in->remote = s->remote;
	in->state = wn_sctp_sess_state_str(wn_sctp_sess_state(&s->sess));
	in->active = l->active;
	in->full = wn_sctp_sess_state(&s->sess) >= WN_SCTP_SESS_FULL;
	in->params = s->sess.params;
	in->rx_ulpdus = s->sess.st.rx_ulpdus;
	in->tx_ulpdus = s->sess.st.tx_ulpdus;
	in->transport.state = assoc_state(s);
	in->transport.quiet = s->a == NULL || s->a->gone || s->closed;
	if (in->transport.quiet || s->a->so == NULL)
		return;
	memset(&ss, 0, sizeof(ss));
	if (usrsctp_getsockopt(s->a->so, IPPROTO_SCTP, SCTP_STATUS, &ss, &sl) != 0)
		return;
	in->transport.cwnd = ss.sstat_primary.spinfo_cwnd;
	in->transport.srtt_us = ss.sstat_primary.spinfo_srtt * 1000u;
	in->transport.rto_us = ss.sstat_primary.spinfo_rto * 1000u;
	in->transport.snd_queued = ss.sstat_penddata + ss.sstat_unackdata;
	in->transport.rcv_wnd = ss.sstat_rwnd;
	in->transport.rcv_queued = s->sess.st.held;
}

static const struct wn_llp_ops sctp_ops = {
	.name = "sctp",
	.flags = WN_LLP_F_MESSAGES,
	.connect = op_connect,
	.listen = op_listen,
	.unlisten = op_unlisten,
	.poll = op_poll,
	.accept = op_accept,
	.reject = op_reject,
	.send = op_send,
	.close = op_close,
	.abort = op_abort,
	.release = op_release,
	.info = op_info,
};

/* ---------------------------------------------------------------- instance */

/* What the associations tell the streams (sctp_priv.h). */
static const struct sctp_stream_up stream_up = {
	.new_stream = wn_sctp_stream_new,
	.start = wn_sctp_stream_start,
	.gone = wn_sctp_stream_gone,
	.eof = wn_sctp_stream_eof,
	.ready = wn_sctp_stream_ready,
};

struct wn_llp_proto *
wn_sctp_create(const struct wn_sctp_conf *conf)
{
	char name[RTE_RING_NAMESIZE];
	struct sctp_proto *p;
	unsigned int serial;

	if (conf == NULL || conf->pool == NULL || conf->index >= WN_SCTP_MAX_INSTANCES) {
		errno = EINVAL;
		return NULL;
	}
	if (wn_sctp_global_init() != 0)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->base.ops = &sctp_ops;
	p->up = &stream_up;
	p->c = *conf;
	if (p->c.mtu == 0)
		p->c.mtu = 1500;
	if (p->c.timeout_us == 0)
		p->c.timeout_us = 20000000u;
	if (p->c.sockbuf == 0)
		p->c.sockbuf = 1u << 20;
	if (p->c.streams == 0)
		p->c.streams = 16;
	TAILQ_INIT(&p->paths);
	TAILQ_INIT(&p->listeners);
	TAILQ_INIT(&p->assocs);
	TAILQ_INIT(&p->ready);
	TAILQ_INIT(&p->streams);
	p->now = wn_net_now_us();
	p->last_tick = p->now;
	p->rxbuf = malloc(65536 + 64);
	/* several dataplanes may live in one process (tests, embedders): names by creation */
	serial = atomic_fetch_add(&sctp_serial, 1);
	snprintf(name, sizeof(name), "wn_sctp_tx%u_%u", conf->index, serial);
	p->txq = rte_ring_create(name, 4096, SOCKET_ID_ANY, RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "wn_sctp_ad%u_%u", conf->index, serial);
	p->adopt = rte_ring_create(name, 256, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (p->rxbuf == NULL || p->txq == NULL || p->adopt == NULL) {
		int err = p->rxbuf == NULL ? ENOMEM : rte_errno;

		rte_ring_free(p->txq);
		rte_ring_free(p->adopt);
		free(p->rxbuf);
		free(p);
		errno = err == EEXIST ? EINVAL : err;
		return NULL;
	}
	return &p->base;
}

void
wn_sctp_free(struct wn_llp_proto *bp)
{
	struct sctp_proto *p = (struct sctp_proto *)bp;
	struct sctp_stream *s;
	struct sctp_assoc *a;
	void *m;

	if (p == NULL)
		return;
	wn_sctp_cur = p;
	TAILQ_FOREACH(s, &p->streams, next)
		s->released = true; /* no upcalls from here on */
	wn_sctp_assocs_free(p);
	while ((s = TAILQ_FIRST(&p->streams)) != NULL) {
		s->closed = true;
		stream_free(s);
	}
	while ((a = TAILQ_FIRST(&p->assocs)) != NULL) {
		a->refs = 0;
		a->on_ready = false;
		wn_sctp_assoc_put(a);
	}
	wn_sctp_paths_free(p);
	while (rte_ring_dequeue(p->txq, &m) == 0)
		rte_pktmbuf_free(m);
	rte_ring_free(p->txq);
	rte_ring_free(p->adopt);
	free(p->rxbuf);
	free(p);
	wn_sctp_cur = NULL;
}

void
wn_sctp_stats_get(const struct wn_llp_proto *bp, struct wn_sctp_stats *st)
{
	const struct sctp_proto *p = (const struct sctp_proto *)bp;
	const struct sctp_stream *s;

	*st = p->sx;
	st->rx_early = 0;
	TAILQ_FOREACH(s, &p->streams, next)
		st->rx_early += s->sess.st.rx_early;
}

void *
wn_sctp_path(struct wn_llp_proto *bp, const struct wn_ip_addr *local,
	     const struct wn_ip_addr *remote)
{
	return wn_sctp_path_get((struct sctp_proto *)bp, local, remote);
}
