/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Associations (wn_sctp.h): one one-to-one usrsctp socket each. What a socket has to read
 * (notifications, DATA chunks with their stream and PPID) is read when usrsctp's upcall marks
 * it, after the call into usrsctp that caused it; chunks go to the session of their stream
 * (a passive association makes one for each stream a peer starts). The Adaptation Layer
 * Indication is judged when the association comes up (RFC 5043 §11.1). Listening sockets
 * are per port for the process; what they accept goes to the instance that owns its path.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_tailq.h>

#include "sctp_priv.h"

/* Listening sockets of the process, by port. */
static TAILQ_HEAD(, sctp_lsock) lsocks = TAILQ_HEAD_INITIALIZER(lsocks);
static pthread_mutex_t lsock_lock = PTHREAD_MUTEX_INITIALIZER;

/* A socket another lcore accepted for us. */
struct adopt {
	struct socket *so;
	struct sctp_path *path;
	uint16_t lport, rport;
};

/* Largest message read at once: a DDP segment is at most the MULPDU (RFC 5043 §9). */
#define RX_MAX 65536

/* How long a closed association's memory outlives its socket (an upcall in flight). */
#define ASSOC_GRACE_US 10000

/* usrsctp's upcall: the socket is readable or writable or failed. Any thread. */
static void
upcall(struct socket *so, void *arg, int flags)
{
	struct sctp_assoc *a = arg;

	(void)so;
	(void)flags;
	atomic_store_explicit(&a->ready, true, memory_order_release);
	if (wn_sctp_cur == a->p && !a->on_ready) {
		a->on_ready = true;
		TAILQ_INSERT_TAIL(&a->p->ready, a, rnext);
	}
}

struct sctp_assoc *
wn_sctp_assoc_new(struct sctp_proto *p, struct socket *so, struct sctp_path *path, uint16_t lport,
	       uint16_t rport, bool active)
{
	struct sctp_assoc *a = calloc(1, sizeof(*a));

	if (a != NULL)
		a->slot = calloc(p->c.streams, sizeof(*a->slot));
	if (a == NULL || a->slot == NULL) {
		free(a);
		usrsctp_close(so);
		return NULL;
	}
	a->p = p;
	a->so = so;
	a->path = path;
	a->lport = lport;
	a->rport = rport;
	a->active = active;
	a->n_streams = p->c.streams;
	a->deadline = p->now + p->c.timeout_us;
	TAILQ_INSERT_TAIL(&p->assocs, a, next);
	p->sx.assocs_open++;
	usrsctp_set_upcall(so, upcall, a);
	return a;
}

/* ---------------------------------------------------------------- the end */

static void
sock_close(struct sctp_assoc *a, bool abort)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	if (a->so == NULL)
		return;
	usrsctp_set_upcall(a->so, NULL, NULL);
	if (abort)
		(void)usrsctp_setsockopt(a->so, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	wn_sctp_cur = a->p;
	usrsctp_close(a->so); /* with linger 0: an ABORT goes out */
	a->so = NULL;
	a->deadline = a->p->now + ASSOC_GRACE_US;
}

/* The association is over: its sessions see CLOSED, the socket goes. */
static void
assoc_end(struct sctp_assoc *a, enum wn_llp_close why, bool abort)
{
	if (a->gone)
		return;
	a->gone = true;
	a->why = why;
	if (abort || why == WN_LLP_CLOSE_RESET)
		a->p->sx.aborts++;
	sock_close(a, abort);
	for (uint16_t i = 0; i < a->n_streams; i++)
		if (a->slot[i] != NULL)
			a->p->up->gone(a->slot[i], why);
}

void
wn_sctp_assoc_abort(struct sctp_assoc *a, enum wn_llp_close why)
{
	assoc_end(a, why, true);
}

/* A session that may still send: not ended, or a control message still waiting for room. */
static bool
stream_live(const struct sctp_stream *s)
{
	return (!s->sess.sent_term && wn_sctp_sess_state(&s->sess) != WN_SCTP_SESS_DONE) ||
	       s->sess.ctl_len != 0;
}

void
wn_sctp_assoc_maybe_shutdown(struct sctp_assoc *a)
{
	if (a->gone || a->shutting)
		return;
	for (uint16_t i = 0; i < a->n_streams; i++)
		if (a->slot[i] != NULL && stream_live(a->slot[i]))
			return;
	a->shutting = true;
	wn_sctp_cur = a->p;
	/* RFC 4960 §9.2: SHUTDOWN once everything queued is acknowledged */
	if (!a->up || usrsctp_shutdown(a->so, SHUT_WR) != 0)
		assoc_end(a, WN_LLP_CLOSE_RESET, true);
}

void
wn_sctp_assoc_put(struct sctp_assoc *a)
{
	if (a->refs != 0 || a->so != NULL || a->on_ready)
		return;
	TAILQ_REMOVE(&a->p->assocs, a, next);
	a->p->sx.assocs_open--;
	free(a->slot);
	free(a);
}

/* ---------------------------------------------------------------- reading */

/* The close reason behind a socket error (what recvv reports once the association died). */
static enum wn_llp_close
why_of_errno(int err, enum wn_llp_close dflt)
{
	switch (err) {
	case ECONNREFUSED:
		return WN_LLP_CLOSE_REFUSED;
	case ETIMEDOUT:
		return WN_LLP_CLOSE_TIMEOUT;
	case ECONNRESET:
	case ECONNABORTED:
		return WN_LLP_CLOSE_RESET;
	default:
		return dflt;
	}
}

static void
on_assoc_change(struct sctp_assoc *a, const struct sctp_assoc_change *ac)
{
	switch (ac->sac_state) {
	case SCTP_COMM_UP:
		a->up = true;
		a->p->sx.assocs++;
		break;
	case SCTP_SHUTDOWN_COMP:
		a->why = WN_LLP_CLOSE_NORMAL;
		a->shutting = true;
		break;
	case SCTP_COMM_LOST:
	case SCTP_RESTART: /* the peer restarted: our sessions' state is gone with it */
		a->why = WN_LLP_CLOSE_RESET;
		a->shutting = true;
		break;
	case SCTP_CANT_STR_ASSOC:
		a->why = WN_LLP_CLOSE_TIMEOUT; /* refined by the socket's error */
		a->shutting = true;
		break;
	default:
		break;
	}
	if (ac->sac_state != SCTP_COMM_UP)
		a->ended = true;
}

static void
notification(struct sctp_assoc *a, const uint8_t *buf, size_t len)
{
	const union sctp_notification *sn = (const void *)buf;

	if (len < sizeof(sn->sn_header))
		return;
	switch (sn->sn_header.sn_type) {
	case SCTP_ASSOC_CHANGE:
		if (len >= sizeof(sn->sn_assoc_change))
			on_assoc_change(a, &sn->sn_assoc_change);
		break;
	case SCTP_ADAPTATION_INDICATION:
		if (len >= sizeof(sn->sn_adaptation_event))
			a->ddp = sn->sn_adaptation_event.sai_adaptation_ind ==
				 WN_SCTP_ADAPTATION_DDP;
		break;
	case SCTP_SHUTDOWN_EVENT:
		/* the peer sends nothing more: each session's stream ends here */
		a->peer_shut = true;
		for (uint16_t i = 0; i < a->n_streams; i++)
			if (a->slot[i] != NULL)
				a->p->up->eof(a->slot[i]);
		break;
	default:
		break;
	}
}

/* RFC 5043 §11.1: an association whose peer does not indicate DDP carries no DDP. */
static bool
judge(struct sctp_assoc *a)
{
	if (!a->up || a->checked)
		return !a->gone;
	a->checked = true;
	if (!a->ddp) {
		SCTP_LOG(NOTICE, "the peer of port %u does not indicate DDP: association aborted\n",
			 a->lport);
		a->p->sx.assoc_refused++;
		assoc_end(a, WN_LLP_CLOSE_REFUSED, true);
		return false;
	}
	if (a->active && a->slot[0] != NULL)
		a->p->up->start(a->slot[0]);
	return !a->gone;
}

/* A chunk of stream @p sid: to its session (a passive association makes one). */
static void
chunk(struct sctp_assoc *a, uint16_t sid, uint32_t ppid, const uint8_t *buf, size_t len)
{
	struct sctp_stream *s;

	if (!judge(a) || sid >= a->n_streams)
		return;
	s = a->slot[sid];
	if (s == NULL) {
		if (a->active || a->shutting) {
			/* RFC 5043 §6.1: no session here and none may start: a Terminate ends
			 * it (but no Terminate answers a Terminate) */
			static const uint8_t term[4] = {0, 0, 0, WN_SCTP_TERMINATE};
			struct sctp_sndinfo si = {.snd_sid = sid, .snd_flags = SCTP_UNORDERED,
						  .snd_ppid = rte_cpu_to_be_32(WN_SCTP_PPID_CTL)};

			if (ppid == WN_SCTP_PPID_CTL && len >= 4 && buf[3] == WN_SCTP_TERMINATE)
				return;
			(void)usrsctp_sendv(a->so, term, sizeof(term), NULL, 0, &si, sizeof(si),
					    SCTP_SENDV_SNDINFO, 0);
			a->p->sx.terms_sent++;
			return;
		}
		s = a->p->up->new_stream(a, sid, false);
		if (s == NULL)
			return;
	}
	(void)wn_sctp_sess_input(&s->sess, ppid, buf, len, a->p->now);
}

void
wn_sctp_assoc_drain(struct sctp_assoc *a)
{
	struct sctp_proto *p = a->p;
	bool partial = false;

	atomic_store_explicit(&a->ready, false, memory_order_relaxed);
	while (a->so != NULL && !a->gone) {
		struct sctp_rcvinfo ri;
		socklen_t il = sizeof(ri);
		unsigned int it = 0;
		int flags = 0;
		ssize_t n;

		wn_sctp_cur = p;
		n = usrsctp_recvv(a->so, p->rxbuf, RX_MAX, NULL, NULL, &ri, &il, &it, &flags);
		if (n < 0) {
			if (errno != EWOULDBLOCK && errno != EAGAIN)
				assoc_end(a, why_of_errno(errno, a->why), false);
			break;
		}
		if (n == 0) {
			/* everything read and the association shut down */
			assoc_end(a, a->ended ? a->why : WN_LLP_CLOSE_NORMAL, false);
			break;
		}
		if (flags & MSG_NOTIFICATION) {
			notification(a, p->rxbuf, (size_t)n);
			continue;
		}
		if (partial || !(flags & MSG_EOR)) {
			/* larger than any DDP segment: RFC 5043 §9 MUST reject; the session that
			 * got it fails, the pieces are dropped */
			partial = !(flags & MSG_EOR);
			if (it == SCTP_RECVV_RCVINFO && ri.rcv_sid < a->n_streams &&
			    a->slot[ri.rcv_sid] != NULL)
				(void)wn_sctp_sess_broken(&a->slot[ri.rcv_sid]->sess,
							  "a message above the DDP segment size");
			continue;
		}
		if (it != SCTP_RECVV_RCVINFO)
			continue;
		chunk(a, ri.rcv_sid, rte_be_to_cpu_32(ri.rcv_ppid), p->rxbuf, (size_t)n);
	}
	if (a->gone)
		return;
	if (a->ended) {
		/* the association ended (the socket's error says how when it has one) */
		assoc_end(a, a->why, false);
		return;
	}
	(void)judge(a);
	if (a->blocked && a->so != NULL && (usrsctp_get_events(a->so) & SCTP_EVENT_WRITE)) {
		a->blocked = false;
		for (uint16_t i = 0; i < a->n_streams; i++)
			if (a->slot[i] != NULL)
				a->p->up->ready(a->slot[i]);
	}
}

/* lib/net's receive hook for IP protocol 132: the packet to usrsctp, then what it made ready. */
void
wn_sctp_input(void *arg, struct rte_mbuf *m, uint64_t now)
{
	struct sctp_proto *p = arg;
	uint16_t dport = 0;
	int rc = wn_sctp_pkt_input(p, m, now, &dport);

	if (rc < 0)
		return;
	if (rc == 1)
		wn_sctp_accept_port(p, dport);
	(void)wn_sctp_ready_run(p);
}

unsigned int
wn_sctp_ready_run(struct sctp_proto *p)
{
	struct sctp_assoc *a;
	unsigned int n = 0;

	while ((a = TAILQ_FIRST(&p->ready)) != NULL) {
		TAILQ_REMOVE(&p->ready, a, rnext);
		a->on_ready = false;
		wn_sctp_assoc_drain(a);
		n++;
	}
	return n;
}

/* ---------------------------------------------------------------- listening */

struct sctp_lsock *
wn_sctp_lsock_get(struct sctp_proto *p, uint16_t port)
{
	struct sockaddr_conn sa;
	struct sctp_lsock *ls;
	int err = 0;

	pthread_mutex_lock(&lsock_lock);
	TAILQ_FOREACH(ls, &lsocks, next)
		if (ls->port == port)
			break;
	if (ls == NULL) {
		ls = calloc(1, sizeof(*ls));
		if (ls == NULL) {
			err = ENOMEM;
			goto out;
		}
		ls->port = port;
		wn_sctp_cur = p;
		ls->so = usrsctp_socket(AF_CONN, SOCK_STREAM, IPPROTO_SCTP, NULL, NULL, 0, NULL);
		wn_sctp_sconn(&sa, NULL, port); /* any path: the instance that owns it decides */
		if (ls->so == NULL || (err = -wn_sctp_socket_setup(p, ls->so, 20)) != 0 ||
		    usrsctp_bind(ls->so, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
		    usrsctp_listen(ls->so, 128) != 0) {
			err = err != 0 ? err : errno;
			if (ls->so != NULL)
				usrsctp_close(ls->so);
			free(ls);
			ls = NULL;
			goto out;
		}
		TAILQ_INSERT_TAIL(&lsocks, ls, next);
	}
	ls->refs++;
out:
	pthread_mutex_unlock(&lsock_lock);
	if (ls == NULL)
		errno = err;
	return ls;
}

void
wn_sctp_lsock_put(struct sctp_lsock *ls)
{
	pthread_mutex_lock(&lsock_lock);
	if (--ls->refs == 0) {
		TAILQ_REMOVE(&lsocks, ls, next);
		usrsctp_close(ls->so);
		free(ls);
	}
	pthread_mutex_unlock(&lsock_lock);
}

/* Our socket now: the listener of its port takes it, or it is aborted. */
static void
adopt(struct sctp_proto *p, struct socket *so, struct sctp_path *path, uint16_t lport,
      uint16_t rport)
{
	struct sctp_listener *l;
	struct sctp_assoc *a;

	TAILQ_FOREACH(l, &p->listeners, next)
		if (l->ep.port == lport && (l->ep.addr.family == 0 ||
					    wn_ip_addr_eq(&l->ep.addr, &path->local) ||
					    (l->ep.addr.family == WN_AF_INET && l->ep.addr.v4 == 0)))
			break;
	if (l == NULL) {
		struct linger lg = {.l_onoff = 1, .l_linger = 0};

		(void)usrsctp_setsockopt(so, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		usrsctp_close(so);
		return;
	}
	(void)usrsctp_set_non_blocking(so, 1);
	a = wn_sctp_assoc_new(p, so, path, lport, rport, false);
	if (a == NULL)
		return;
	a->ls = l;
	wn_sctp_assoc_drain(a);
}

void
wn_sctp_accept_port(struct sctp_proto *p, uint16_t port)
{
	struct adopt got[16];
	struct sctp_lsock *ls;
	unsigned int n = 0;

	pthread_mutex_lock(&lsock_lock);
	TAILQ_FOREACH(ls, &lsocks, next)
		if (ls->port == port)
			break;
	while (ls != NULL && n < RTE_DIM(got)) {
		struct sockaddr_conn sa;
		socklen_t sl = sizeof(sa);
		struct socket *so;

		wn_sctp_cur = p;
		so = usrsctp_accept(ls->so, (struct sockaddr *)&sa, &sl);
		if (so == NULL)
			break;
		got[n].so = so;
		got[n].path = sa.sconn_addr;
		got[n].lport = port;
		got[n].rport = rte_be_to_cpu_16(sa.sconn_port);
		n++;
	}
	pthread_mutex_unlock(&lsock_lock);
	for (unsigned int i = 0; i < n; i++) {
		struct sctp_proto *owner = got[i].path != NULL ? got[i].path->p : NULL;
		struct adopt *ad;

		if (owner == p) {
			adopt(p, got[i].so, got[i].path, got[i].lport, got[i].rport);
			continue;
		}
		/* steered elsewhere: its instance takes it on its lcore */
		ad = malloc(sizeof(*ad));
		if (owner == NULL || ad == NULL || rte_ring_mp_enqueue(owner->adopt, ad) != 0) {
			free(ad);
			usrsctp_close(got[i].so);
			continue;
		}
		*ad = got[i];
	}
}

unsigned int
wn_sctp_adopt_poll(struct sctp_proto *p)
{
	void *ad;
	unsigned int n = 0;

	while (rte_ring_sc_dequeue(p->adopt, &ad) == 0) {
		struct adopt *x = ad;

		adopt(p, x->so, x->path, x->lport, x->rport);
		free(x);
		n++;
	}
	return n;
}

/* ---------------------------------------------------------------- periodic */

void
wn_sctp_assoc_tick(struct sctp_proto *p)
{
	struct sctp_assoc *a, *tmp;

	RTE_TAILQ_FOREACH_SAFE(a, &p->assocs, next, tmp) {
		if (atomic_load_explicit(&a->ready, memory_order_acquire) && !a->gone)
			wn_sctp_assoc_drain(a); /* marked by usrsctp on another thread */
		if (!a->gone && !a->active && !a->checked_session && p->now >= a->deadline) {
			/* accepted, and no session started in time */
			bool any = false;

			for (uint16_t i = 0; i < a->n_streams; i++)
				any |= a->slot[i] != NULL;
			if (any)
				a->checked_session = true;
			else
				assoc_end(a, WN_LLP_CLOSE_TIMEOUT, true);
		}
		if (a->gone && a->so == NULL && p->now >= a->deadline)
			wn_sctp_assoc_put(a);
	}
}

void
wn_sctp_assocs_free(struct sctp_proto *p)
{
	struct sctp_assoc *a;
	struct sctp_listener *l;
	void *ad;

	while (rte_ring_sc_dequeue(p->adopt, &ad) == 0) {
		usrsctp_close(((struct adopt *)ad)->so);
		free(ad);
	}
	TAILQ_FOREACH(a, &p->assocs, next)
		sock_close(a, true);
	while ((l = TAILQ_FIRST(&p->listeners)) != NULL) {
		TAILQ_REMOVE(&p->listeners, l, next);
		wn_sctp_lsock_put(l->ls);
		free(l);
	}
}
