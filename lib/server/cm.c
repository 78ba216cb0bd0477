/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CM channels and ids: address binding and resolution, listen, connect/accept/reject/
 * disconnect handed to the dataplane, its events delivered on the id's channel, and the local
 * connection manager used while no dataplane is attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_common.h>

#include "server_priv.h"

#define EPHEMERAL_LO 32768
#define EPHEMERAL_HI 60999

/* ---------------------------------------------------------------- channels and events */

int
srv_h_cm_create_channel(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	struct obj *ch;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return -errno;
	ch = srv_obj_new(srv, rq->c, OBJ_CHAN);
	if (ch == NULL) {
		close(sv[0]);
		close(sv[1]);
		return -ENOMEM;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	shutdown(sv[1], SHUT_WR);
	ch->u.chan.fd = sv[0];
	rs->fd = sv[1];
	rs->u.hd.handle = ch->handle;
	return 0;
}

int
srv_chan_destroy(struct wn_server *srv, struct obj *ch)
{
	close(ch->u.chan.fd);
	srv_obj_free(srv, ch);
	return 0;
}

static void
cm_event(struct wn_server *srv, struct obj *id, uint32_t type, int status,
	 uint32_t listen_id, const struct wn_ctl_conn_param *param)
{
	struct {
		struct wn_ctl_hdr h;
		struct wn_ctl_cm_event ev;
	} m;
	struct obj *ch = id->u.id.chan;

	/*
	 * A connect that failed takes its QP to Error, flushing what was posted on it, as
	 * Linux siw does (siw_qp_cm_drop): nothing would ever complete those WRs otherwise.
	 */
	if ((type == WN_CTL_CM_EV_REJECTED || type == WN_CTL_CM_EV_CONNECT_ERROR ||
	     type == WN_CTL_CM_EV_UNREACHABLE) && id->u.id.qp != 0) {
		struct obj *qp = srv_obj_get(srv, NULL, id->u.id.qp, OBJ_QP);

		if (qp != NULL && qp->u.qp.dp.state != WN_CTL_QPS_ERR)
			srv_qp_set_state(srv, qp, WN_CTL_QPS_ERR);
	}
	memset(&m, 0, sizeof(m));
	wn_ctl_hdr_init(&m.h, WN_CTL_CM_EVENT, ++ch->u.chan.seq, sizeof(m.ev));
	m.ev.event = type;
	m.ev.status = status;
	m.ev.id = id->handle;
	m.ev.listen_id = listen_id;
	m.ev.cookie = id->u.id.cookie;
	m.ev.src = id->u.id.src;
	m.ev.dst = id->u.id.dst;
	if (param != NULL)
		m.ev.param = *param;
	if (wn_ctl_send(ch->u.chan.fd, &m.h, NULL, 0) != 0)
		SRV_LOG(WARNING, "CM event %u for id %#x lost", type, id->handle);
}

/* ---------------------------------------------------------------- ids and addresses */

/* A new id on @p ch for @p owner, with @p cookie. */
static struct obj *
cmid_new(struct wn_server *srv, struct client *owner, struct obj *ch, uint64_t cookie)
{
	struct obj *id = srv_obj_new(srv, owner, OBJ_CMID);

	if (id == NULL)
		return NULL;
	id->u.id.chan = ch;
	ch->refs++;
	id->u.id.cookie = cookie;
	return id;
}

int
srv_h_cm_create_id(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_create_id_req *r = rq->body;
	struct obj *ch = srv_obj_get(srv, rq->c, r->channel, OBJ_CHAN), *id;

	if (ch == NULL)
		return -EINVAL;
	id = cmid_new(srv, rq->c, ch, r->cookie);
	if (id == NULL)
		return -ENOMEM;
	rs->u.hd.handle = id->handle;
	return 0;
}

/* rdma_migrate_id: the id's later events go to another channel of the client. */
int
srv_h_cm_migrate_id(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_migrate_req *r = rq->body;
	struct obj *id = srv_obj_get(srv, rq->c, r->id, OBJ_CMID);
	struct obj *ch = srv_obj_get(srv, rq->c, r->channel, OBJ_CHAN);

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

static bool
port_in_use(struct wn_server *srv, const struct wn_ctl_addr *a, bool listen_only)
{
	uint32_t i;

	for (i = 0; i < srv->cap; i++) {
		struct obj *o = srv->tab[i];

		if (o == NULL || o->type != OBJ_CMID || o->u.id.src.port != a->port ||
		    o->u.id.state == CM_IDLE || o->u.id.listener != 0)
			continue;
		if (listen_only && o->u.id.state != CM_LISTEN)
			continue;
		if (addr_is_any(&o->u.id.src) || addr_is_any(a) ||
		    memcmp(o->u.id.src.addr, a->addr, 16) == 0)
			return true;
	}
	return false;
}

static uint16_t
ephemeral_port(struct wn_server *srv, const struct wn_ctl_addr *a)
{
	struct wn_ctl_addr t = *a;
	int n;

	for (n = 0; n <= EPHEMERAL_HI - EPHEMERAL_LO; n++) {
		if (srv->next_port < EPHEMERAL_LO || srv->next_port > EPHEMERAL_HI)
			srv->next_port = EPHEMERAL_LO;
		t.port = srv->next_port++;
		if (!port_in_use(srv, &t, false))
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
	struct obj *id = srv_obj_get(srv, rq->c, r->id, OBJ_CMID);

	if (id != NULL) {
		rs->u.addr.src = id->u.id.src;
		rs->u.addr.dst = id->u.id.dst;
	}
	return id;
}

int
srv_h_cm_bind(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_addr_req *r = rq->body;
	struct obj *id = addr_req_id(srv, rq, rs);
	struct wn_ctl_addr a = r->src;

	if (id == NULL || id->u.id.state != CM_IDLE)
		return -EINVAL;
	if (!addr_is_any(&a) && !addr_is_local(srv, &a))
		return -EADDRNOTAVAIL;
	loopback_to_port(srv, &a);
	if (a.port == 0)
		a.port = ephemeral_port(srv, &a);
	else if (port_in_use(srv, &a, false))
		return -EADDRINUSE;
	if (a.port == 0)
		return -EADDRINUSE;
	id->u.id.src = a;
	id->u.id.state = CM_BOUND;
	rs->u.addr.src = a;
	return 0;
}

int
srv_h_cm_resolve_addr(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_addr_req *r = rq->body;
	struct obj *id = addr_req_id(srv, rq, rs);
	struct wn_ctl_addr a;

	if (id == NULL || (id->u.id.state != CM_IDLE && id->u.id.state != CM_BOUND))
		return -EINVAL;
	id->u.id.dst = r->dst;
	if (id->u.id.state == CM_IDLE) {
		if (r->src.family != WN_CTL_AF_NONE)
			a = r->src;
		else
			local_src_for(srv, &r->dst, &a);
		a.port = ephemeral_port(srv, &a);
		id->u.id.src = a;
	}
	if (!addr_is_local(srv, &r->dst) && srv->to_dp == NULL) {
		/* neighbour resolution is the dataplane's; none attached */
		cm_event(srv, id, WN_CTL_CM_EV_ADDR_ERROR, -EHOSTUNREACH, 0, NULL);
	} else {
		/*
		 * With a dataplane every connection runs over it, also between two clients
		 * of this instance (the dataplane loops such segments back); loopback
		 * addresses mean the port's own address then.
		 */
		id->u.id.remote = srv->to_dp != NULL || !addr_is_local(srv, &r->dst);
		loopback_to_port(srv, &id->u.id.dst);
		loopback_to_port(srv, &id->u.id.src);
		id->u.id.state = CM_ADDR_RESOLVED;
		cm_event(srv, id, WN_CTL_CM_EV_ADDR_RESOLVED, 0, 0, NULL);
	}
	rs->u.addr.src = id->u.id.src;
	rs->u.addr.dst = id->u.id.dst;
	return 0;
}

int
srv_h_cm_resolve_route(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	struct obj *id = addr_req_id(srv, rq, rs);

	if (id == NULL || id->u.id.state != CM_ADDR_RESOLVED)
		return -EINVAL;
	id->u.id.state = CM_ROUTE_RESOLVED;
	cm_event(srv, id, WN_CTL_CM_EV_ROUTE_RESOLVED, 0, 0, NULL);
	return 0;
}

int
srv_h_cm_listen(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_addr_req *r = rq->body;
	struct obj *id = addr_req_id(srv, rq, rs);
	struct wn_server_dp_msg *m;

	if (id == NULL || id->u.id.state != CM_BOUND)
		return -EINVAL;
	if (port_in_use(srv, &id->u.id.src, true))
		return -EADDRINUSE;
	id->u.id.state = CM_LISTEN;
	id->u.id.backlog = r->timeout_ms == 0 ? 128 : RTE_MIN(r->timeout_ms, 4096u);
	m = srv_dp_msg(srv, WN_SERVER_DP_CM_LISTEN, id->handle, NULL);
	if (m != NULL) {
		m->u.cm.id = id->handle;
		m->u.cm.src = id->u.id.src;
		srv_dp_post(srv, m);
	}
	return 0;
}

/* ---------------------------------------------------------------- connections */

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
	qp = srv_obj_get(srv, NULL, qph, OBJ_QP);
	if (qp == NULL || (qp->owner != id->owner &&
			   (qp->owner->pid == 0 || qp->owner->pid != id->owner->pid)))
		return -EINVAL;
	if (qp->u.qp.cm_id != 0 && qp->u.qp.cm_id != id->handle)
		return -EINVAL;
	qp->u.qp.cm_id = id->handle;
	id->u.id.qp = qph;
	return 0;
}

/* CONNECT/ACCEPT: bind the QP, keep the IRD/ORD asked for (RFC 6581 §5). */
static int
cm_conn_setup(struct wn_server *srv, struct obj *id, const struct wn_ctl_cm_conn_req *r)
{
	int ret = cm_bind_qp(srv, id, r->qp);

	if (ret != 0)
		return ret;
	id->u.id.ird = RTE_MIN(r->param.ird, (uint32_t)MAX_RD_ATOM);
	id->u.id.ord = RTE_MIN(r->param.ord, (uint32_t)MAX_RD_ATOM);
	return 0;
}

static void
cm_established(struct wn_server *srv, struct obj *id, uint32_t peer_ird)
{
	struct obj *qp = id->u.id.qp ? srv_obj_get(srv, NULL, id->u.id.qp, OBJ_QP) : NULL;

	id->u.id.state = CM_CONNECTED;
	if (qp != NULL) {
		/* RFC 6581 §5: our ORD may not exceed the peer's IRD */
		qp->u.qp.dp.ord = RTE_MIN(id->u.id.ord, peer_ird);
		qp->u.qp.dp.ird = id->u.id.ird;
		srv_qp_set_state(srv, qp, WN_CTL_QPS_RTS);
	}
}

static void
cm_disconnected(struct wn_server *srv, struct obj *id, bool notify)
{
	struct obj *qp = id->u.id.qp ? srv_obj_get(srv, NULL, id->u.id.qp, OBJ_QP) : NULL;

	if (qp != NULL && qp->u.qp.dp.state != WN_CTL_QPS_RESET)
		srv_qp_set_state(srv, qp, WN_CTL_QPS_ERR);
	id->u.id.state = CM_DISCONNECTED;
	id->u.id.peer = 0;
	if (notify)
		cm_event(srv, id, WN_CTL_CM_EV_DISCONNECTED, 0, 0, NULL);
}

/* The peer of @p id went away or disconnected. */
static void
cm_peer_gone(struct wn_server *srv, struct obj *id)
{
	struct obj *peer = id->u.id.peer ? srv_obj_get(srv, NULL, id->u.id.peer, OBJ_CMID) : NULL;

	if (peer == NULL)
		return;
	switch (peer->u.id.state) {
	case CM_CONNECTED:
		cm_disconnected(srv, peer, true);
		break;
	case CM_CONNECTING:
		/* active side whose request died with the passive id: TCP reset */
		peer->u.id.peer = 0;
		peer->u.id.state = CM_ROUTE_RESOLVED;
		cm_event(srv, peer, WN_CTL_CM_EV_REJECTED, -ECONNRESET, 0, NULL);
		break;
	case CM_REQ_PENDING:
		/* passive id whose initiator vanished before accept */
		peer->u.id.peer = 0;
		peer->u.id.state = CM_DISCONNECTED;
		cm_event(srv, peer, WN_CTL_CM_EV_DISCONNECTED, 0, 0, NULL);
		break;
	default:
		peer->u.id.peer = 0;
		break;
	}
}

static struct obj *
find_listener(struct wn_server *srv, const struct wn_ctl_addr *dst)
{
	uint32_t i;

	for (i = 0; i < srv->cap; i++) {
		struct obj *o = srv->tab[i];

		if (o == NULL || o->type != OBJ_CMID || o->u.id.state != CM_LISTEN ||
		    o->u.id.src.port != dst->port)
			continue;
		if (addr_is_any(&o->u.id.src) ||
		    (o->u.id.src.family == dst->family &&
		     memcmp(o->u.id.src.addr, dst->addr, 16) == 0))
			return o;
	}
	return NULL;
}

/* A passive id for a request on listener @p l (CONNECT_REQUEST delivered on it next). */
static struct obj *
cm_passive_new(struct wn_server *srv, struct obj *l, const struct wn_ctl_addr *src,
	       const struct wn_ctl_addr *dst)
{
	struct obj *n = cmid_new(srv, l->owner, l->u.id.chan, l->u.id.cookie);

	if (n == NULL)
		return NULL;
	n->u.id.state = CM_REQ_PENDING;
	n->u.id.src = *src;
	n->u.id.dst = *dst;
	n->u.id.listener = l->handle;
	l->u.id.pending++;
	return n;
}

static int
cm_connect_local(struct wn_server *srv, struct obj *id, const struct wn_ctl_conn_param *p)
{
	struct obj *l = find_listener(srv, &id->u.id.dst), *n;

	id->u.id.state = CM_CONNECTING;
	if (l == NULL || l->u.id.pending >= l->u.id.backlog) {
		/* no listener: the peer's TCP answers with RST (RFC 9293 §3.10.7.1) */
		id->u.id.state = CM_ROUTE_RESOLVED;
		cm_event(srv, id, WN_CTL_CM_EV_REJECTED, -ECONNREFUSED, 0, NULL);
		return 0;
	}
	n = cm_passive_new(srv, l, &id->u.id.dst, &id->u.id.src);
	if (n == NULL)
		return -ENOMEM;
	n->u.id.peer = id->handle;
	id->u.id.peer = n->handle;
	/* The passive side sees the initiator's IRD and ORD (RFC 6581 §5, MPA Request). */
	cm_event(srv, n, WN_CTL_CM_EV_CONNECT_REQUEST, 0, l->handle, p);
	return 0;
}

static int
cm_forward(struct wn_server *srv, uint32_t type, struct obj *id,
	   const struct wn_ctl_cm_conn_req *r)
{
	struct wn_server_dp_msg *m = srv_dp_msg(srv, type, id->handle, NULL);

	if (m == NULL)
		return srv->to_dp == NULL ? -ENOTCONN : -ENOMEM;
	m->u.cm.id = id->handle;
	m->u.cm.conn = id->u.id.dp_conn;
	m->u.cm.src = id->u.id.src;
	m->u.cm.dst = id->u.id.dst;
	if (r != NULL) {
		m->u.cm.qp = r->qp;
		m->u.cm.param = r->param;
	}
	return srv_dp_post(srv, m);
}

/* The connection request behind passive id @p id is answered: its listener may take more. */
static void
cm_request_answered(struct wn_server *srv, struct obj *id)
{
	struct obj *l = srv_obj_get(srv, NULL, id->u.id.listener, OBJ_CMID);

	if (l != NULL && l->u.id.pending > 0)
		l->u.id.pending--;
}

int
srv_h_cm_connect(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_conn_req *r = rq->body;
	struct obj *id = srv_obj_get(srv, rq->c, r->id, OBJ_CMID);
	int ret;

	(void)rs;
	if (id == NULL || id->u.id.state != CM_ROUTE_RESOLVED)
		return -EINVAL;
	ret = cm_conn_setup(srv, id, r);
	if (ret != 0)
		return ret;
	if (id->u.id.remote) {
		id->u.id.state = CM_CONNECTING;
		return cm_forward(srv, WN_SERVER_DP_CM_CONNECT, id, r);
	}
	return cm_connect_local(srv, id, &r->param);
}

int
srv_h_cm_accept(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_conn_req *r = rq->body;
	struct obj *id = srv_obj_get(srv, rq->c, r->id, OBJ_CMID), *peer;
	int ret;

	(void)rs;
	if (id == NULL || id->u.id.state != CM_REQ_PENDING)
		return -EINVAL;
	ret = cm_conn_setup(srv, id, r);
	if (ret != 0)
		return ret;
	if (id->u.id.remote) {
		cm_request_answered(srv, id);
		/* ESTABLISHED comes from the dataplane once the MPA Reply is out */
		return cm_forward(srv, WN_SERVER_DP_CM_ACCEPT, id, r);
	}
	peer = srv_obj_get(srv, NULL, id->u.id.peer, OBJ_CMID);
	if (peer == NULL || peer->u.id.state != CM_CONNECTING)
		return -ECONNRESET;
	cm_request_answered(srv, id);
	/* MPA Reply carries the responder's private data and IRD/ORD (RFC 6581 §5) */
	cm_established(srv, id, peer->u.id.ird);
	cm_established(srv, peer, id->u.id.ird);
	cm_event(srv, id, WN_CTL_CM_EV_ESTABLISHED, 0, 0, NULL);
	cm_event(srv, peer, WN_CTL_CM_EV_ESTABLISHED, 0, 0, &r->param);
	return 0;
}

int
srv_h_cm_reject(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_cm_conn_req *r = rq->body;
	struct obj *id = srv_obj_get(srv, rq->c, r->id, OBJ_CMID), *peer;
	struct wn_ctl_conn_param p;

	(void)rs;
	if (id == NULL || id->u.id.state != CM_REQ_PENDING)
		return -EINVAL;
	cm_request_answered(srv, id);
	id->u.id.state = CM_DISCONNECTED;
	if (id->u.id.remote)
		return cm_forward(srv, WN_SERVER_DP_CM_REJECT, id, r);
	peer = srv_obj_get(srv, NULL, id->u.id.peer, OBJ_CMID);
	id->u.id.peer = 0;
	if (peer != NULL && peer->u.id.state == CM_CONNECTING) {
		/* MPA Reject frame: private data, R bit (RFC 5044 §7.1.1) */
		memset(&p, 0, sizeof(p));
		p.pd_len = r->param.pd_len;
		memcpy(p.pd, r->param.pd, p.pd_len);
		peer->u.id.state = CM_ROUTE_RESOLVED;
		peer->u.id.peer = 0;
		cm_event(srv, peer, WN_CTL_CM_EV_REJECTED, -ECONNREFUSED, 0, &p);
	}
	return 0;
}

int
srv_h_cm_disconnect(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_handle *r = rq->body;
	struct obj *id = srv_obj_get(srv, rq->c, r->handle, OBJ_CMID);
	int ret;

	(void)rs;
	if (id == NULL)
		return -EINVAL;
	if (id->u.id.state != CM_CONNECTED && id->u.id.state != CM_CONNECTING)
		return -EINVAL;
	if (id->u.id.remote) {
		ret = cm_forward(srv, WN_SERVER_DP_CM_DISCONNECT, id, NULL);
		cm_disconnected(srv, id, false);
		return ret;
	}
	cm_peer_gone(srv, id);
	/* both sides see DISCONNECTED, like a graceful TCP close */
	cm_disconnected(srv, id, true);
	return 0;
}

int
srv_cmid_destroy(struct wn_server *srv, struct obj *id)
{
	struct wn_server_dp_msg *m;

	if (id->u.id.state == CM_CONNECTED || id->u.id.state == CM_CONNECTING ||
	    id->u.id.state == CM_REQ_PENDING)
		cm_peer_gone(srv, id);
	if (id->u.id.state == CM_REQ_PENDING && id->u.id.listener != 0)
		cm_request_answered(srv, id);
	if (id->u.id.qp != 0) {
		struct obj *qp = srv_obj_get(srv, NULL, id->u.id.qp, OBJ_QP);

		if (qp != NULL)
			qp->u.qp.cm_id = 0;
	}
	/* the dataplane knows CM ids by handle only: no DONE needed */
	if (id->u.id.remote || id->u.id.state == CM_LISTEN) {
		m = srv_dp_msg(srv, WN_SERVER_DP_CM_DESTROY, id->handle, NULL);
		if (m != NULL) {
			m->u.cm.id = id->handle;
			m->u.cm.conn = id->u.id.dp_conn;
			srv_dp_post(srv, m);
		}
	}
	id->u.id.chan->refs--;
	srv_obj_free(srv, id);
	return 0;
}

/* ---------------------------------------------------------------- dataplane events */

/* A connection request arrived on listener ev->listen_id (ev->id: the dataplane's key). */
static void
cm_dp_request(struct wn_server *srv, const struct wn_ctl_cm_event *e)
{
	struct obj *l = srv_obj_get(srv, NULL, e->listen_id, OBJ_CMID);
	struct obj *n = l != NULL ? cm_passive_new(srv, l, &e->src, &e->dst) : NULL;

	if (n == NULL)
		return;
	n->u.id.remote = true;
	n->u.id.dp_conn = e->id;
	cm_event(srv, n, e->event, 0, l->handle, &e->param);
}

void
srv_cm_dp_event(struct wn_server *srv, struct wn_server_dp_msg *m)
{
	struct obj *id = srv_obj_get(srv, NULL, m->u.cm.id, OBJ_CMID);
	const struct wn_ctl_cm_event *e = &m->u.cm.ev;
	struct obj *qp;

	if (e->event == WN_CTL_CM_EV_CONNECT_REQUEST) {
		cm_dp_request(srv, e);
		return;
	}
	if (id == NULL)
		return;
	if (e->event == WN_CTL_CM_EV_ESTABLISHED) {
		qp = id->u.id.qp != 0 ? srv_obj_get(srv, NULL, id->u.id.qp, OBJ_QP) : NULL;
		cm_established(srv, id, e->param.ird);
		/* what MPA negotiated (RFC 6581), as the engine uses it */
		if (qp != NULL && m->u.cm.param.ird != 0) {
			qp->u.qp.dp.ird = m->u.cm.param.ird;
			qp->u.qp.dp.ord = m->u.cm.param.ord;
		}
	} else if (e->event == WN_CTL_CM_EV_DISCONNECTED) {
		cm_disconnected(srv, id, false);
	}
	cm_event(srv, id, e->event, e->status, 0, &e->param);
}
