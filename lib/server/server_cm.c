/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CM channels and ids, as rdma_cm sees them: address binding and resolution, listen and
 * backlog, the bound QP, and what an id did toward a connection (requested, accepted,
 * finished: enough to refuse what librdmacm refuses). Connections themselves are the
 * dataplane's: CONNECT/ACCEPT/REJECT/DISCONNECT go to it and its events come back on the id's
 * channel. Without a dataplane, CONNECT and LISTEN fail with ENETDOWN.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_common.h>

#include "srv_priv.h"

/* Most requests a listener keeps unanswered: as many as the device has QPs. */
#define CM_BACKLOG_MAX 65536u

#define EPHEMERAL_LO 32768
#define EPHEMERAL_HI 60999

/* ---------------------------------------------------------------- channels and events */

/* One CM event as it goes on a channel's socket. */
struct cm_event_msg {
	struct wn_ctl_hdr h;
	struct wn_ctl_cm_event ev;
};

/*
 * An event the channel's socket could not take (the client reads slower than connections
 * come and go): it waits here, in order, until the socket drains. Nothing is dropped for a
 * full socket; only a channel destroyed, or whose reader has gone, takes its queue with it.
 */
struct chan_ev {
	struct chan_ev *next;
	struct cm_event_msg m;
};

int
wn_server_h_cm_create_channel(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	struct obj *ch;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return -errno;
	ch = wn_server_obj_new(srv, rq->c, OBJ_CHAN);
	if (ch == NULL) {
		close(sv[0]);
		close(sv[1]);
		return -ENOMEM;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	shutdown(sv[1], SHUT_WR);
	ch->u.chan.fd = sv[0];
	ch->u.chan.qtail = &ch->u.chan.qhead;
	rs->fd = sv[1];
	rs->u.hd.handle = ch->handle;
	return 0;
}

/* Watch (@p on) or stop watching @p ch's socket for room. */
static void
chan_watch(struct wn_server *srv, struct obj *ch, bool on)
{
	struct epoll_event ev = {.events = EPOLLOUT,
				 .data.u64 = (uint64_t)ch->handle << 32 | SRV_EP_CHAN};

	if (epoll_ctl(srv->epfd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, ch->u.chan.fd, &ev) != 0)
		SRV_LOG(ERR, "CM channel %#x: epoll: %s", ch->handle, strerror(errno));
}

/* Drop @p ch's queue (its reader is gone). */
static void
chan_drop(struct wn_server *srv, struct obj *ch)
{
	struct chan_ev *e;

	if (ch->u.chan.qhead != NULL)
		chan_watch(srv, ch, false);
	while ((e = ch->u.chan.qhead) != NULL) {
		ch->u.chan.qhead = e->next;
		free(e);
		srv->cm_events_dropped++;
	}
	ch->u.chan.qtail = &ch->u.chan.qhead;
	ch->u.chan.qlen = 0;
}

/* Write what @p ch's queue holds while its socket takes it. */
static void
chan_flush(struct wn_server *srv, struct obj *ch)
{
	struct chan_ev *e;
	int ret;

	while ((e = ch->u.chan.qhead) != NULL) {
		ret = wn_ctl_send(ch->u.chan.fd, &e->m.h, NULL, 0);
		if (ret == -EAGAIN || ret == -ENOBUFS)
			return;
		if (ret != 0) {
			chan_drop(srv, ch); /* the client closed its end: reclaim follows */
			return;
		}
		ch->u.chan.qhead = e->next;
		ch->u.chan.qlen--;
		free(e);
		srv->cm_events++;
	}
	ch->u.chan.qtail = &ch->u.chan.qhead;
	chan_watch(srv, ch, false);
}

void
wn_server_chan_writable(struct wn_server *srv, uint32_t handle)
{
	struct obj *ch = wn_server_obj_get(srv, NULL, handle, OBJ_CHAN);

	if (ch != NULL && ch->u.chan.qhead != NULL)
		chan_flush(srv, ch);
}

int
wn_server_chan_destroy(struct wn_server *srv, struct obj *ch)
{
	chan_drop(srv, ch);
	close(ch->u.chan.fd);
	wn_server_obj_free(srv, ch);
	return 0;
}

/* Queue @p m on @p ch behind what waits there; the socket is watched for room. */
static void
chan_queue(struct wn_server *srv, struct obj *ch, const struct cm_event_msg *m)
{
	struct chan_ev *e = malloc(sizeof(*e));

	if (e == NULL) {
		/* no memory for one event: the one case where it goes, and it is counted */
		srv->cm_events_dropped++;
		SRV_LOG(ERR, "CM channel %#x: no memory to keep event %u", ch->handle, m->ev.event);
		return;
	}
	e->next = NULL;
	e->m = *m;
	if (ch->u.chan.qhead == NULL)
		chan_watch(srv, ch, true);
	*ch->u.chan.qtail = e;
	ch->u.chan.qtail = &e->next;
	ch->u.chan.qlen++;
	srv->cm_events_waited++;
	if (ch->u.chan.qlen > srv->cm_queue_max)
		srv->cm_queue_max = ch->u.chan.qlen;
}

/*
 * Deliver an event about @p id on its channel, in order; a full socket makes it wait.
 * @p qpn and @p qkey: a UDP id's ESTABLISHED (the passive QP's), else 0.
 */
static void
cm_event_ud(struct wn_server *srv, struct obj *id, uint32_t type, int status,
	    uint32_t listen_id, const struct wn_ctl_conn_param *param, uint32_t qpn,
	    uint32_t qkey)
{
	struct cm_event_msg m;
	struct obj *ch = id->u.id.chan;
	int ret;

	memset(&m, 0, sizeof(m));
	wn_ctl_hdr_init(&m.h, WN_CTL_CM_EVENT, ++ch->u.chan.seq, sizeof(m.ev));
	m.ev.event = type;
	m.ev.status = status;
	m.ev.id = id->handle;
	m.ev.listen_id = listen_id;
	m.ev.cookie = id->u.id.cookie;
	m.ev.src = id->u.id.src;
	m.ev.dst = id->u.id.dst;
	m.ev.qpn = qpn;
	m.ev.qkey = qkey;
	if (param != NULL)
		m.ev.param = *param;
	if (ch->u.chan.qhead != NULL) {
		chan_queue(srv, ch, &m);
		return;
	}
	ret = wn_ctl_send(ch->u.chan.fd, &m.h, NULL, 0);
	if (ret == 0)
		srv->cm_events++;
	else if (ret == -EAGAIN || ret == -ENOBUFS)
		chan_queue(srv, ch, &m);
	else
		srv->cm_events_dropped++; /* the client closed its end: reclaim follows */
}

static void
cm_event(struct wn_server *srv, struct obj *id, uint32_t type, int status,
	 uint32_t listen_id, const struct wn_ctl_conn_param *param)
{
	cm_event_ud(srv, id, type, status, listen_id, param, 0, 0);
}

/* ---------------------------------------------------------------- ids and addresses */

/* A new id on @p ch for @p owner, with @p cookie. */
static struct obj *
cmid_new(struct wn_server *srv, struct client *owner, struct obj *ch, uint64_t cookie)
{
	struct obj *id = wn_server_obj_new(srv, owner, OBJ_CMID);

	if (id == NULL)
		return NULL;
	id->u.id.chan = ch;
	ch->refs++;
	id->u.id.cookie = cookie;
	return id;
}

int
wn_server_h_cm_create_id(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_create_id_req *r = rq->body;
	struct obj *ch = wn_server_obj_get(srv, rq->c, r->channel, OBJ_CHAN), *id;

	if (ch == NULL)
		return -EINVAL;
	id = cmid_new(srv, rq->c, ch, r->cookie);
	if (id == NULL)
		return -ENOMEM;
	id->u.id.ps = r->ps;
	rs->u.hd.handle = id->handle;
	return 0;
}

/* rdma_migrate_id: the id's later events go to another channel of the client. */
int
wn_server_h_cm_migrate_id(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_migrate_req *r = rq->body;
	struct obj *id = wn_server_obj_get(srv, rq->c, r->id, OBJ_CMID);
	struct obj *ch = wn_server_obj_get(srv, rq->c, r->channel, OBJ_CHAN);

	(void)rs;
	if (id == NULL || ch == NULL)
		return -EINVAL;
	/* events already written to the old channel stay there (the client reads them) */
	id->u.id.chan->refs--;
	id->u.id.chan = ch;
	ch->refs++;
	return 0;
}

static bool
addr_is_local(const struct wn_server *srv, const struct wn_ctl_addr *a)
{
	uint32_t i;

	if (a->family == WN_CTL_AF_INET && a->addr[0] == 127)
		return true;
	for (i = 0; i < srv->conf.n_addrs; i++) {
		const struct wn_ctl_addr *l = &srv->conf.addrs[i];

		if (l->family == a->family && memcmp(l->addr, a->addr, 16) == 0)
			return true;
	}
	return false;
}

static bool
addr_is_any(const struct wn_ctl_addr *a)
{
	static const uint8_t zero[16];

	return memcmp(a->addr, zero, 16) == 0;
}

static void
port_unlink(struct obj *id)
{
	if (id->u.id.pprev == NULL)
		return;
	*id->u.id.pprev = id->u.id.pnext;
	if (id->u.id.pnext != NULL)
		id->u.id.pnext->u.id.pprev = id->u.id.pprev;
	id->u.id.pprev = NULL;
}

/* Ids by local port: each id with a local address (not a listener's child) is on its list. */
static int
port_link(struct wn_server *srv, struct obj *id)
{
	struct obj **head;

	port_unlink(id);
	if (srv->ports == NULL) {
		srv->ports = calloc(65536, sizeof(*srv->ports));
		if (srv->ports == NULL)
			return -ENOMEM;
	}
	head = &srv->ports[id->u.id.src.port];
	id->u.id.pnext = *head;
	if (*head != NULL)
		(*head)->u.id.pprev = &id->u.id.pnext;
	*head = id;
	id->u.id.pprev = head;
	return 0;
}

void
wn_server_ports_free(struct wn_server *srv)
{
	free(srv->ports);
	srv->ports = NULL;
}

/* Port @p a->port of port space @p ps (TCP's and UDP's are apart) taken at @p a's address. */
static bool
port_in_use(struct wn_server *srv, const struct wn_ctl_addr *a, uint32_t ps, bool listen_only)
{
	struct obj *o;

	if (srv->ports == NULL)
		return false;
	for (o = srv->ports[a->port]; o != NULL; o = o->u.id.pnext) {
		if ((listen_only && !o->u.id.listening) || o->u.id.ps != ps)
			continue;
		if (addr_is_any(&o->u.id.src) || addr_is_any(a) ||
		    memcmp(o->u.id.src.addr, a->addr, 16) == 0)
			return true;
	}
	return false;
}

static uint16_t
ephemeral_port(struct wn_server *srv, const struct wn_ctl_addr *a, uint32_t ps)
{
	struct wn_ctl_addr t = *a;
	int n;

	for (n = 0; n <= EPHEMERAL_HI - EPHEMERAL_LO; n++) {
		if (srv->next_port < EPHEMERAL_LO || srv->next_port > EPHEMERAL_HI)
			srv->next_port = EPHEMERAL_LO;
		t.port = srv->next_port++;
		if (!port_in_use(srv, &t, ps, false))
			return t.port;
	}
	return 0;
}

static void
local_src_for(struct wn_server *srv, const struct wn_ctl_addr *dst, struct wn_ctl_addr *src)
{
	uint32_t i;

	memset(src, 0, sizeof(*src));
	src->family = dst->family;
	if (dst->family == WN_CTL_AF_INET && dst->addr[0] == 127) {
		memcpy(src->addr, dst->addr, 4);
		return;
	}
	for (i = 0; i < srv->conf.n_addrs; i++)
		if (srv->conf.addrs[i].family == dst->family) {
			memcpy(src->addr, srv->conf.addrs[i].addr, 16);
			return;
		}
}

/*
 * With a dataplane, 127.0.0.0/8 stands for the port's first IPv4 address: the dataplane's
 * TCP/IP stack owns the port's addresses only (and loops segments between them back).
 */
static void
loopback_to_port(const struct wn_server *srv, struct wn_ctl_addr *a)
{
	uint32_t i;

	if (srv->to_dp == NULL || a->family != WN_CTL_AF_INET || a->addr[0] != 127)
		return;
	for (i = 0; i < srv->conf.n_addrs; i++)
		if (srv->conf.addrs[i].family == WN_CTL_AF_INET) {
			memcpy(a->addr, srv->conf.addrs[i].addr, 4);
			return;
		}
}

/* The id named by an address request, owned by the client; its addresses answer it. */
static struct obj *
addr_req_id(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_addr_req *r = rq->body;
	struct obj *id = wn_server_obj_get(srv, rq->c, r->id, OBJ_CMID);

	if (id != NULL) {
		rs->u.addr.src = id->u.id.src;
		rs->u.addr.dst = id->u.id.dst;
	}
	return id;
}

int
wn_server_h_cm_bind(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_addr_req *r = rq->body;
	struct obj *id = addr_req_id(srv, rq, rs);
	struct wn_ctl_addr a = r->src;

	if (id == NULL || id->u.id.addr != CM_ADDR_NONE)
		return -EINVAL;
	if (!addr_is_any(&a) && !addr_is_local(srv, &a))
		return -EADDRNOTAVAIL;
	loopback_to_port(srv, &a);
	if (a.port == 0)
		a.port = ephemeral_port(srv, &a, id->u.id.ps);
	else if (port_in_use(srv, &a, id->u.id.ps, false) ||
		 (a.port == srv->conf.ib_port && a.port != 0))
		return -EADDRINUSE; /* in use, or where the dataplane meets InfiniBand-style QPs */
	if (a.port == 0)
		return -EADDRINUSE;
	id->u.id.src = a;
	if (port_link(srv, id) != 0)
		return -ENOMEM;
	id->u.id.addr = CM_ADDR_BOUND;
	rs->u.addr.src = a;
	return 0;
}

int
wn_server_h_cm_resolve_addr(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_addr_req *r = rq->body;
	struct obj *id = addr_req_id(srv, rq, rs);
	struct wn_ctl_addr a;

	if (id == NULL || id->u.id.addr > CM_ADDR_BOUND || id->u.id.listening)
		return -EINVAL;
	id->u.id.dst = r->dst;
	if (id->u.id.addr == CM_ADDR_NONE) {
		if (r->src.family != WN_CTL_AF_NONE)
			a = r->src;
		else
			local_src_for(srv, &r->dst, &a);
		a.port = ephemeral_port(srv, &a, id->u.id.ps);
		id->u.id.src = a;
		if (port_link(srv, id) != 0)
			return -ENOMEM;
	}
	if (!addr_is_local(srv, &r->dst) && srv->to_dp == NULL) {
		/* neighbour resolution is the dataplane's; none attached */
		cm_event(srv, id, WN_CTL_CM_EV_ADDR_ERROR, -EHOSTUNREACH, 0, NULL);
	} else {
		/* loopback addresses mean the port's own address (the dataplane loops back) */
		loopback_to_port(srv, &id->u.id.dst);
		loopback_to_port(srv, &id->u.id.src);
		id->u.id.addr = CM_ADDR_RESOLVED;
		cm_event(srv, id, WN_CTL_CM_EV_ADDR_RESOLVED, 0, 0, NULL);
	}
	rs->u.addr.src = id->u.id.src;
	rs->u.addr.dst = id->u.id.dst;
	return 0;
}

int
wn_server_h_cm_resolve_route(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	struct obj *id = addr_req_id(srv, rq, rs);

	if (id == NULL || id->u.id.addr != CM_ADDR_RESOLVED)
		return -EINVAL;
	id->u.id.addr = CM_ROUTE_RESOLVED;
	cm_event(srv, id, WN_CTL_CM_EV_ROUTE_RESOLVED, 0, 0, NULL);
	return 0;
}

int
wn_server_h_cm_listen(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_addr_req *r = rq->body;
	struct obj *id = addr_req_id(srv, rq, rs);
	struct wn_server_dp_msg *m;

	if (id == NULL || id->u.id.addr != CM_ADDR_BOUND || id->u.id.listening)
		return -EINVAL;
	if (port_in_use(srv, &id->u.id.src, id->u.id.ps, true))
		return -EADDRINUSE;
	m = wn_server_dp_msg_new(srv, WN_SERVER_DP_CM_LISTEN, id->handle, NULL);
	if (m == NULL)
		return srv->to_dp == NULL ? -ENETDOWN : -ENOMEM;
	m->u.cm.id = id->handle;
	m->u.cm.ps = id->u.id.ps;
	m->u.cm.src = id->u.id.src;
	m->u.cm.llp = id->owner != NULL ? id->owner->llp : WN_CTL_LLP_DEFAULT;
	if (wn_server_dp_post(srv, m) != 0)
		return -ENOBUFS;
	id->u.id.listening = true;
	/* as the kernel's rdma_listen, 0 asks for the most (requests unanswered, here) */
	id->u.id.backlog = r->timeout_ms == 0 ? CM_BACKLOG_MAX :
					     RTE_MIN(r->timeout_ms, CM_BACKLOG_MAX);
	/*
	 * The answer waits until every lcore has the listener: a peer the program tells to
	 * connect as soon as rdma_listen returns must not find one without it (a reset).
	 */
	id->u.id.listen_wait = true;
	id->u.id.listen_req = *rq->h;
	return SRV_REPLY_LATER;
}

/*
 * The dataplane has put listener m->u.cm.id in place (status 0) or could not: the LISTEN
 * waiting for it gets its answer. A listener missing somewhere is taken down everywhere, and
 * the id may listen again.
 */
void
wn_server_cm_dp_listening(struct wn_server *srv, const struct wn_server_dp_msg *m)
{
	struct obj *id = wn_server_obj_get(srv, NULL, m->u.cm.id, OBJ_CMID);
	struct wn_ctl_cm_addr_resp resp;
	struct wn_server_dp_msg *d;
	int status = m->u.cm.ev.status;

	if (id == NULL || !id->u.id.listen_wait)
		return;
	id->u.id.listen_wait = false;
	if (status != 0) {
		d = wn_server_dp_msg_new(srv, WN_SERVER_DP_CM_DESTROY, id->handle, NULL);
		if (d != NULL) {
			d->u.cm.id = id->handle;
			d->u.cm.ps = id->u.id.ps;
			(void)wn_server_dp_post(srv, d);
		}
		id->u.id.listening = false;
		status = status < 0 ? status : -EIO;
	}
	resp.src = id->u.id.src;
	resp.dst = id->u.id.dst;
	wn_server_reply(id->owner, &id->u.id.listen_req, status, &resp, sizeof(resp), -1);
}

/* ---------------------------------------------------------------- connections */

/* An id of rdma_cm's UDP port space: a UD QP, a resolution (SIDR) instead of a connection. */
static bool
cm_udp(const struct obj *id)
{
	return id->u.id.ps == WN_CTL_PS_UDP;
}

/* Bind QP @p qph to CM id @p id. */
static int
cm_bind_qp(struct wn_server *srv, struct obj *id, uint32_t qph)
{
	struct obj *qp;

	if (qph == 0)
		return 0;
	/*
	 * The QP may belong to another device context of the same process (an application
	 * that opened the device itself and uses rdma_cm's id->verbs for nothing else).
	 */
	qp = wn_server_obj_get(srv, NULL, qph, OBJ_QP);
	if (qp == NULL || (qp->owner != id->owner &&
			   (qp->owner->pid == 0 || qp->owner->pid != id->owner->pid)))
		return -EINVAL;
	/* a UDP id's QP is a UD QP, a TCP id's an RC QP */
	if ((qp->u.qp.dp.qp_type == WN_CTL_QPT_UD) != cm_udp(id))
		return -EINVAL;
	if (qp->u.qp.cm_id != 0 && qp->u.qp.cm_id != id->handle)
		return -EINVAL;
	qp->u.qp.cm_id = id->handle;
	id->u.id.qp = qph;
	return 0;
}

/*
 * Move @p id's connection to @p to. A passive id leaving REQUESTED has its request answered:
 * its listener may take another (backlog).
 */
static void
cm_conn_set(struct wn_server *srv, struct obj *id, enum cm_conn to)
{
	struct obj *l;

	if (id->u.id.conn == CM_CONN_REQUESTED && id->u.id.listener != 0) {
		l = wn_server_obj_get(srv, NULL, id->u.id.listener, OBJ_CMID);
		if (l != NULL && l->u.id.pending > 0)
			l->u.id.pending--;
	}
	id->u.id.conn = to;
}

/* The id's bound QP (NULL: none). */
static struct obj *
cm_qp(struct wn_server *srv, struct obj *id)
{
	return id->u.id.qp != 0 ? wn_server_obj_get(srv, NULL, id->u.id.qp, OBJ_QP) : NULL;
}

/*
 * The connection is over for @p id (a failed connect, or a disconnect): its QP goes to Error
 * unless it is in state @p spare, flushing what was posted, as Linux siw does
 * (siw_qp_cm_drop): nothing would ever complete those WRs otherwise.
 */
static void
cm_finished(struct wn_server *srv, struct obj *id, uint32_t spare)
{
	struct obj *qp = cm_qp(srv, id);

	if (qp != NULL && qp->u.qp.dp.state != spare && qp->u.qp.dp.state != WN_CTL_QPS_ERR)
		wn_server_qp_set_state(srv, qp, WN_CTL_QPS_ERR);
	cm_conn_set(srv, id, CM_CONN_FINISHED);
}


/* The dataplane's CONNECT/ACCEPT/REJECT/DISCONNECT for @p id (@p r: the request, if any). */
static int
cm_forward(struct wn_server *srv, uint32_t type, struct obj *id,
	   const struct wn_ctl_cm_conn_req *r)
{
	struct wn_server_dp_msg *m = wn_server_dp_msg_new(srv, type, id->handle, NULL);

	if (m == NULL)
		return srv->to_dp == NULL ? -ENETDOWN : -ENOMEM;
	m->u.cm.id = id->handle;
	m->u.cm.conn = id->u.id.dp_conn;
	m->u.cm.ps = id->u.id.ps;
	m->u.cm.src = id->u.id.src;
	m->u.cm.dst = id->u.id.dst;
	m->u.cm.llp = id->owner != NULL ? id->owner->llp : WN_CTL_LLP_DEFAULT;
	if (r != NULL) {
		m->u.cm.qp = r->qp;
		m->u.cm.param = r->param;
	}
	return wn_server_dp_post(srv, m);
}

/* The id named by a CONNECT/ACCEPT/REJECT, owned by the client. */
static struct obj *
conn_req_id(struct wn_server *srv, const struct srv_req *rq)
{
	const struct wn_ctl_cm_conn_req *r = rq->body;

	return wn_server_obj_get(srv, rq->c, r->id, OBJ_CMID);
}

/*
 * CONNECT/ACCEPT: bind the QP, keep the IRD/ORD asked for (RFC 6581 §5), hand the request
 * (@p type) to the dataplane, and the id's connection is @p to.
 */
static int
cm_conn_start(struct wn_server *srv, struct obj *id, const struct wn_ctl_cm_conn_req *r,
	      uint32_t type, enum cm_conn to)
{
	int ret;

	/* a UDP id's private data travels in a SIDR REQ or REP (IBTA 12.11; wn_wire_ud.h) */
	if (cm_udp(id) && r->param.pd_len > (type == WN_SERVER_DP_CM_CONNECT ?
					     WN_CTL_UDP_REQ_PD_MAX : WN_CTL_UDP_REP_PD_MAX))
		return -EINVAL;
	ret = cm_bind_qp(srv, id, r->qp);
	if (ret != 0)
		return ret;
	id->u.id.ird = RTE_MIN(r->param.ird, (uint32_t)MAX_RD_ATOM);
	id->u.id.ord = RTE_MIN(r->param.ord, (uint32_t)MAX_RD_ATOM);
	ret = cm_forward(srv, type, id, r);
	if (ret == 0)
		cm_conn_set(srv, id, to);
	return ret;
}

int
wn_server_h_cm_connect(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_conn_req *r = rq->body;
	struct obj *id = conn_req_id(srv, rq);

	(void)rs;
	/* rdma_connect: only from ROUTE_RESOLVED, once (EINVAL, as the kernel's rdma_cm) */
	if (id == NULL || id->u.id.addr != CM_ROUTE_RESOLVED || id->u.id.conn != CM_CONN_NONE)
		return -EINVAL;
	if (srv->to_dp == NULL)
		return -ENETDOWN;
	return cm_conn_start(srv, id, r, WN_SERVER_DP_CM_CONNECT, CM_CONN_REQUESTED);
}

/* An id that got a CONNECT_REQUEST and has not answered it. */
static bool
cm_request_pending(const struct obj *id)
{
	return id->u.id.listener != 0 && id->u.id.conn == CM_CONN_REQUESTED;
}

int
wn_server_h_cm_accept(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_conn_req *r = rq->body;
	struct obj *id = conn_req_id(srv, rq);

	(void)rs;
	if (id == NULL || !cm_request_pending(id))
		return -EINVAL;
	/*
	 * ESTABLISHED comes from the dataplane once the MPA Reply is out; a UDP id's accept is
	 * its SIDR REP, and no event follows on the passive side (as with rdma_cm)
	 */
	return cm_conn_start(srv, id, r, WN_SERVER_DP_CM_ACCEPT, CM_CONN_ACCEPTED);
}

int
wn_server_h_cm_reject(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_conn_req *r = rq->body;
	struct obj *id = conn_req_id(srv, rq);

	(void)rs;
	if (id == NULL || !cm_request_pending(id) ||
	    (cm_udp(id) && r->param.pd_len > WN_CTL_UDP_REP_PD_MAX))
		return -EINVAL;
	/* the dataplane answers with an MPA Reject carrying the private data (RFC 5044 §7.1.1),
	 * or a UDP id's SIDR REP with status REJECT */
	cm_conn_set(srv, id, CM_CONN_FINISHED);
	return cm_forward(srv, WN_SERVER_DP_CM_REJECT, id, r);
}

/*
 * rdma_disconnect, with iw_cm_disconnect()'s answers: EINVAL for an id that never took part
 * in a connection (or a listener), 0 when it is already over or the request was never
 * answered; a live connection is closed by the dataplane (our side sees DISCONNECTED now,
 * the peer when our FIN arrives) and the QP goes to Error.
 */
int
wn_server_h_cm_disconnect(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_handle *r = rq->body;
	struct obj *id = wn_server_obj_get(srv, rq->c, r->handle, OBJ_CMID);
	int ret;

	(void)rs;
	if (id == NULL || id->u.id.conn == CM_CONN_NONE)
		return -EINVAL;
	if (id->u.id.conn == CM_CONN_FINISHED || cm_request_pending(id))
		return 0;
	if (cm_udp(id)) {
		/* nothing is connected: its QP goes to Error, as rdma_cm's cma_modify_qp_err() */
		cm_finished(srv, id, WN_CTL_QPS_ERR);
		return 0;
	}
	ret = cm_forward(srv, WN_SERVER_DP_CM_DISCONNECT, id, NULL);
	cm_finished(srv, id, WN_CTL_QPS_RESET);
	return ret;
}

int
wn_server_cmid_destroy(struct wn_server *srv, struct obj *id)
{
	bool dp_knows = id->u.id.listening || id->u.id.conn != CM_CONN_NONE;
	struct obj *qp = cm_qp(srv, id);
	struct wn_server_dp_msg *m;

	cm_conn_set(srv, id, CM_CONN_FINISHED);
	port_unlink(id);
	if (qp != NULL)
		qp->u.qp.cm_id = 0;
	/* the dataplane knows CM ids by handle (and key) only: no DONE needed */
	if (dp_knows) {
		m = wn_server_dp_msg_new(srv, WN_SERVER_DP_CM_DESTROY, id->handle, NULL);
		if (m != NULL) {
			m->u.cm.id = id->handle;
			m->u.cm.conn = id->u.id.dp_conn;
			m->u.cm.ps = id->u.id.ps;
			wn_server_dp_post(srv, m);
		}
	}
	id->u.id.chan->refs--;
	wn_server_obj_free(srv, id);
	return 0;
}

/* ---------------------------------------------------------------- dataplane events */

/* Refuse connection @p key before any id exists for it (the dataplane sends an MPA Reject). */
static void
cm_dp_refuse(struct wn_server *srv, uint32_t key)
{
	struct wn_server_dp_msg *m = wn_server_dp_msg_new(srv, WN_SERVER_DP_CM_REJECT, 0, NULL);

	if (m == NULL)
		return;
	m->u.cm.conn = key;
	wn_server_dp_post(srv, m);
}

/*
 * A connection request arrived on listener e->listen_id (e->id: the dataplane's key): a new
 * passive id on the listener's channel, or a refusal when the listener is gone or has
 * backlog requests unanswered already.
 */
static void
cm_dp_request(struct wn_server *srv, const struct wn_ctl_cm_event *e)
{
	struct obj *l = wn_server_obj_get(srv, NULL, e->listen_id, OBJ_CMID), *n = NULL;

	if (l != NULL && l->u.id.listening && l->u.id.pending < l->u.id.backlog)
		n = cmid_new(srv, l->owner, l->u.id.chan, l->u.id.cookie);
	if (n == NULL) {
		cm_dp_refuse(srv, e->id);
		return;
	}
	n->u.id.addr = CM_ROUTE_RESOLVED;
	n->u.id.conn = CM_CONN_REQUESTED;
	n->u.id.ps = l->u.id.ps;
	n->u.id.src = e->src;
	n->u.id.dst = e->dst;
	n->u.id.listener = l->handle;
	n->u.id.dp_conn = e->id;
	l->u.id.pending++;
	/* the initiator's private data and IRD/ORD (RFC 6581 §5, MPA Request) */
	cm_event(srv, n, e->event, 0, l->handle, &e->param);
}

/*
 * The connection is up: the QP goes to RTS with the IRD/ORD MPA negotiated (RFC 6581 §5), or
 * when the dataplane did not say, ours with the ORD capped by the peer's IRD.
 */
static void
cm_dp_established(struct wn_server *srv, struct obj *id, const struct wn_server_dp_msg *m)
{
	struct obj *qp = cm_qp(srv, id);

	if (id->u.id.conn == CM_CONN_FINISHED)
		return; /* disconnected meanwhile: the dataplane's DISCONNECTED follows */
	cm_conn_set(srv, id, CM_CONN_ACCEPTED);
	/* a UDP id's UD QP has been in RTS since rdma_create_qp: only the peer's QP is new */
	if (qp == NULL || cm_udp(id))
		return;
	if (m->u.cm.param.ird != 0) {
		qp->u.qp.dp.ird = m->u.cm.param.ird;
		qp->u.qp.dp.ord = m->u.cm.param.ord;
	} else {
		qp->u.qp.dp.ird = id->u.id.ird;
		qp->u.qp.dp.ord = RTE_MIN(id->u.id.ord, m->u.cm.ev.param.ird);
	}
	wn_server_qp_set_state(srv, qp, WN_CTL_QPS_RTS);
}

void
wn_server_cm_dp_event(struct wn_server *srv, struct wn_server_dp_msg *m)
{
	struct obj *id = wn_server_obj_get(srv, NULL, m->u.cm.id, OBJ_CMID);
	const struct wn_ctl_cm_event *e = &m->u.cm.ev;

	if (e->event == WN_CTL_CM_EV_CONNECT_REQUEST) {
		cm_dp_request(srv, e);
		return;
	}
	if (id == NULL)
		return;
	switch (e->event) {
	case WN_CTL_CM_EV_ESTABLISHED:
		cm_dp_established(srv, id, m);
		break;
	case WN_CTL_CM_EV_DISCONNECTED:
		cm_finished(srv, id, WN_CTL_QPS_RESET);
		break;
	case WN_CTL_CM_EV_REJECTED:
	case WN_CTL_CM_EV_CONNECT_ERROR:
	case WN_CTL_CM_EV_UNREACHABLE:
		if (cm_udp(id))
			cm_conn_set(srv, id, CM_CONN_FINISHED);
		else
			cm_finished(srv, id, WN_CTL_QPS_ERR);
		break;
	default:
		break;
	}
	cm_event_ud(srv, id, e->event, e->status, 0, &e->param, e->qpn, e->qkey);
}
