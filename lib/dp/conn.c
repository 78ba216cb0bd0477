/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnicd dataplane connections: the owner's side of lib/cm (dp_priv.h). A connection is a
 * struct dp_conn embedding its lib/cm endpoint; its state lives there, its lower-layer
 * stream (MPA/TCP, lib/mpa; DDP over SCTP, lib/sctp) behind lib/llp. This file keys
 * connections by CM id (or, for a passive one the control thread has not named yet, by a
 * token), turns the control thread's CM messages into lib/cm inputs and lib/cm's events into
 * CM events for the control thread, and binds the QP's engine to the stream. A QP connected
 * InfiniBand-style has a connection keyed by nothing but the QP (shard 0, qp->conn); its
 * events become the QP's state (Error when it ends) instead of CM events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "wn_wire_ddp.h"

#include "dp_priv.h"

/* ---------------------------------------------------------------- addresses */

void
wn_dp_ctl_addr_of(const struct wn_llp_ep *e, struct wn_ctl_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (e->addr.family == WN_AF_INET6) {
		a->family = WN_CTL_AF_INET6;
		memcpy(a->addr, e->addr.v6, 16);
	} else {
		a->family = WN_CTL_AF_INET;
		memcpy(a->addr, &e->addr.v4, 4);
	}
	a->port = e->port;
}

/* ---------------------------------------------------------------- CM table */

static int
cm_add(struct wn_dp *dp, uint32_t key, void *o)
{
	return rte_hash_add_key_data(dp->cm_tab, &key, o);
}

static void *
cm_get(struct wn_dp *dp, uint32_t key)
{
	void *p;

	if (key == 0 || rte_hash_lookup_data(dp->cm_tab, &key, &p) < 0)
		return NULL;
	return p;
}

static void
cm_del(struct wn_dp *dp, uint32_t key)
{
	if (key != 0)
		rte_hash_del_key(dp->cm_tab, &key);
}

/* A passive connection's key while it has no CM id: high bit set, never a handle. */
static uint32_t
token_new(struct wn_dp *dp)
{
	uint32_t t;

	/* bits 30..24: the shard, so shard 0 can route messages about it */
	do {
		t = 0x80000000u | (uint32_t)dp->idx << 24 | (dp->next_token++ & 0xffffffu);
	} while (cm_get(dp, t) != NULL);
	return t;
}

static struct dp_conn *
conn_of(struct wn_cm_ep *ep)
{
	return container_of(ep, struct dp_conn, ep);
}

struct dp_conn *
wn_dp_conn_new(struct wn_dp *dp)
{
	struct dp_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->kind = DPO_CONN;
	c->dp = dp;
	TAILQ_INSERT_TAIL(&dp->conns, c, next);
	return c;
}

static void
conn_free(struct wn_dp *dp, struct dp_conn *c)
{
	TAILQ_REMOVE(&dp->conns, c, next);
	if (c->on_reap)
		TAILQ_REMOVE(&dp->reap, c, reap_next);
	free(c);
}

void
wn_dp_conn_reap_mark(struct wn_dp *dp, struct dp_conn *c)
{
	if (c->on_reap || c->held || wn_cm_state(&c->ep) != WN_CM_CLOSED)
		return;
	c->on_reap = true;
	TAILQ_INSERT_TAIL(&dp->reap, c, reap_next);
}

/* ---------------------------------------------------------------- lib/cm's owner ops */

static const uint32_t ctl_event_of[] = {
	[WN_CM_EV_CONNECT_REQUEST] = WN_CTL_CM_EV_CONNECT_REQUEST,
	[WN_CM_EV_ESTABLISHED] = WN_CTL_CM_EV_ESTABLISHED,
	[WN_CM_EV_REJECTED] = WN_CTL_CM_EV_REJECTED,
	[WN_CM_EV_CONNECT_ERROR] = WN_CTL_CM_EV_CONNECT_ERROR,
	[WN_CM_EV_UNREACHABLE] = WN_CTL_CM_EV_UNREACHABLE,
	[WN_CM_EV_DISCONNECTED] = WN_CTL_CM_EV_DISCONNECTED,
};

uint32_t
wn_dp_ctl_event_of(enum wn_cm_event_type t)
{
	return ctl_event_of[t];
}

static int
op_event(struct wn_cm_ep *ep, const struct wn_cm_event *e)
{
	struct dp_conn *c = conn_of(ep);
	struct wn_ctl_cm_event ev;

	if (wn_cm_is_ib(ep)) {
		/* no CM id: the end of the connection is the QP's move to Error */
		if (e->type != WN_CM_EV_ESTABLISHED && c->ib_qp != 0)
			wn_dp_qp_error(c->dp, c->ib_qp);
		return 0;
	}
	if (c->event != NULL)
		return c->event(c->dp, c, e); /* an application on this lcore (embed.c) */
	memset(&ev, 0, sizeof(ev));
	ev.event = ctl_event_of[e->type];
	ev.status = e->status;
	ev.src = c->src;
	ev.dst = c->dst;
	ev.param.pd_len = RTE_MIN((uint32_t)e->pd_len, (uint32_t)WN_CTL_PD_MAX);
	if (ev.param.pd_len > 0)
		memcpy(ev.param.pd, e->pd, ev.param.pd_len);
	ev.param.ird = e->peer_ird;
	ev.param.ord = e->peer_ord;
	switch (e->type) {
	case WN_CM_EV_CONNECT_REQUEST:
		c->token = token_new(c->dp);
		if (cm_add(c->dp, c->token, c) < 0) {
			c->token = 0;
			return -ENOSPC; /* CM table full */
		}
		ev.listen_id = c->listen_id;
		/*
		 * wn_dp_cm_event_post() puts the key in ev.id; the control thread allocates the id
		 */
		wn_dp_cm_event_post(c->dp, c->token, &ev);
		return 0;
	case WN_CM_EV_ESTABLISHED:
		wn_dp_cm_event_post_neg(c->dp, c->id, &ev, e->ird, e->ord);
		return 0;
	default:
		/* a request the ULP never saw, or an id already destroyed: nobody to tell */
		if (c->id != 0)
			wn_dp_cm_event_post(c->dp, c->id, &ev);
		return 0;
	}
}

/*
 * The async event of a Terminate (wn_ctl.h, as Linux siw raises them): the QP that terminated
 * the stream for a remote access violation (RDMAP Remote Protection, RFC 5040 §7.2; DDP
 * tagged buffer errors, RFC 5041 §7.2) gets QP_ACCESS_ERR, any other Terminate sent or a
 * Terminate received is QP_FATAL.
 */
static uint32_t
qp_async_of(const struct wn_rnic_event *ev)
{
	bool access = (ev->term.layer == WN_TERM_LAYER_RDMAP &&
		       ev->term.etype == WN_TERM_RDMAP_REMOTE_PROT) ||
		      (ev->term.layer == WN_TERM_LAYER_DDP && ev->term.etype == WN_TERM_DDP_TAGGED);

	return ev->type == WN_RNIC_EV_TERM_SENT && access ? WN_CTL_ASYNC_QP_ACCESS_ERR :
							    WN_CTL_ASYNC_QP_FATAL;
}

/* Events of a connected QP's engine. */
static void
qp_event(void *arg, struct wn_rnic_qp *eng, const struct wn_rnic_event *ev)
{
	struct dp_qp *qp = arg;
	struct dp_conn *c = qp->conn;
	struct wn_dp *dp = c != NULL ? c->dp : NULL;
	uint32_t cause = (uint32_t)ev->term.layer << 12 | (uint32_t)ev->term.etype << 8 |
			 ev->term.code;

	(void)eng;
	switch (ev->type) {
	case WN_RNIC_EV_CQ_NOTIFY:
		wn_dp_cq_notify(dp, ev->cq);
		break;
	case WN_RNIC_EV_TERM_SENT:
	case WN_RNIC_EV_TERM_RECV:
		DP_LOG(NOTICE, "QP %u: Terminate %s: layer %u etype %u code %u\n", qp->d->qpn,
		       ev->type == WN_RNIC_EV_TERM_SENT ? "sent" : "received", ev->term.layer,
		       ev->term.etype, ev->term.code);
		if (dp != NULL && ev->type == WN_RNIC_EV_TERM_SENT) {
			dp->st.term_sent++;
			dp->st.term_sent_last = cause;
		} else if (dp != NULL) {
			dp->st.term_recv++;
			dp->st.term_recv_last = cause;
		}
		if (dp != NULL && !qp->local)
			wn_dp_async_event(dp, qp->handle, qp_async_of(ev), cause);
		/* RFC 5040 §6.3: the stream closes behind the Terminate; the QP is flushed then */
		if (c != NULL)
			wn_cm_terminated(&c->ep);
		break;
	case WN_RNIC_EV_CQ_OVERFLOW:
		/* a CQE was lost: the CQ is in error (IBV_EVENT_CQ_ERR) */
		if (dp != NULL && !qp->local)
			wn_dp_async_event(dp, ev->cq == &qp->scq->prod ? qp->scq->handle :
					   qp->rcq->handle, WN_CTL_ASYNC_CQ_ERR, 0);
		break;
	case WN_RNIC_EV_SRQ_LIMIT:
		/* an armed limit crossed (ibv_modify_srq IBV_SRQ_LIMIT), disarmed by the engine */
		if (dp != NULL && !qp->local && qp->srq != NULL)
			wn_dp_async_event(dp, qp->srq->handle, WN_CTL_ASYNC_SRQ_LIMIT_REACHED, 0);
		break;
	default:
		break;
	}
}

static int
op_qp_start(struct wn_cm_ep *ep, struct wn_llp *llp, const struct wn_llp_params *p,
	    uint8_t rtr_recv)
{
	struct dp_conn *c = conn_of(ep);
	int ret;

	if (c->qp == NULL)
		return -ENODEV; /* no QP bound to the connection */
	ret = wn_dp_qp_engine(c->dp, c->qp, c, llp, p, rtr_recv, qp_event);
	if (ret == 0)
		ret = wn_rnic_qp_start(c->qp->eng);
	return ret;
}

static int
op_qp_rtr(struct wn_cm_ep *ep, uint8_t rtr)
{
	struct dp_conn *c = conn_of(ep);

	if (c->qp == NULL || c->qp->eng == NULL)
		return -ENODEV;
	return wn_rnic_send_rtr(c->qp->eng, rtr);
}

static int
op_qp_terminate(struct wn_cm_ep *ep, uint8_t layer, uint8_t etype, uint8_t code)
{
	struct dp_conn *c = conn_of(ep);

	int ret;

	if (c->qp == NULL || c->qp->eng == NULL)
		return -ENODEV;
	ret = wn_rnic_terminate(c->qp->eng, layer, etype, code);
	if (ret == 0)
		wn_dp_qp_ready(c->dp, c->qp); /* the Terminate leaves when the QP is polled */
	return ret;
}

static void
op_qp_detach(struct wn_cm_ep *ep)
{
	struct dp_conn *c = conn_of(ep);
	struct dp_qp *qp = c->qp;

	c->qp = NULL;
	if (qp != NULL && qp->conn == c)
		wn_dp_qp_disconnect(c->dp, qp);
	else if (qp != NULL && qp->conn == NULL)
		qp->conn = NULL;
}

static void
op_qp_mulpdu(struct wn_cm_ep *ep, uint32_t mulpdu)
{
	struct dp_conn *c = conn_of(ep);

	if (c->qp != NULL && c->qp->eng != NULL)
		(void)wn_rnic_set_mulpdu(c->qp->eng, mulpdu);
}

/* A whole ULPDU whose CRC was checked: to the QP's engine. */
static int
op_ulpdu(void *arg, const uint8_t *ulpdu, size_t len)
{
	struct dp_conn *c = conn_of(arg);

	if (c->qp == NULL || c->qp->eng == NULL)
		return 0;
	/* a Send without a receive posted (rnr_hold_us): the stream holds it, see dp_obj.c */
	if (wn_rnic_rx(c->qp->eng, ulpdu, len) == -EAGAIN) {
		wn_dp_qp_rx_hold(c->dp, c->qp);
		return -EAGAIN;
	}
	/* a Read to answer, a Read Response or Terminate to act on: poll the QP */
	wn_dp_qp_ready(c->dp, c->qp);
	return 0;
}

/* A ULPDU found out of order through MPA Markers: its data may be placed at once. */
static void
op_ulpdu_ooo(void *arg, const uint8_t *ulpdu, size_t len)
{
	struct dp_conn *c = conn_of(arg);
	int n;

	if (c->qp == NULL || c->qp->eng == NULL)
		return;
	n = wn_rnic_rx_place(c->qp->eng, ulpdu, len);
	if (n > 0) {
		c->dp->st.ooo_placed++;
		c->dp->st.ooo_bytes += (uint64_t)n;
	}
}

/* A send refused for room may go now: poll the QP again (wn_dp_qps_poll parked it). */
static void
op_tx_room(void *arg)
{
	struct dp_conn *c = conn_of(arg);

	if (c->qp != NULL && c->qp->eng != NULL)
		wn_dp_qp_ready(c->dp, c->qp);
}

/* Zero-copy: a WQE's payload is ACKed and in no mbuf any more. */
static void
op_tx_release(void *arg, uint32_t wqe)
{
	struct dp_conn *c = conn_of(arg);

	if (c->qp != NULL && c->qp->eng != NULL) {
		wn_rnic_tx_release(c->qp->eng, wqe);
		wn_dp_qp_ready(c->dp, c->qp); /* its completion may be due */
	}
}

static void
op_closed(struct wn_cm_ep *ep)
{
	struct dp_conn *c = conn_of(ep);

	cm_del(c->dp, c->id);
	cm_del(c->dp, c->token);
	c->id = 0;
	c->token = 0;
	wn_dp_conn_reap_mark(c->dp, c); /* its stream was released: lib/mpa frees it */
}

/* InfiniBand-style: the QP has send work that waits for its connection. */
static bool
op_qp_sq_busy(struct wn_cm_ep *ep)
{
	struct dp_conn *c = conn_of(ep);

	return c->qp != NULL && wn_queue_cons_avail(&c->qp->sq) > 0;
}

/* InfiniBand-style: no connection within the retry budget (IBV_WC_RETRY_EXC_ERR). */
static void
op_qp_retry_exceeded(struct wn_cm_ep *ep)
{
	struct dp_conn *c = conn_of(ep);

	if (c->qp != NULL && c->qp->conn == c) {
		/* the control thread learns of the Error before the completions show it */
		if (c->ib_qp != 0)
			wn_dp_qp_error(c->dp, c->ib_qp);
		wn_dp_qp_fail(c->dp, c->qp, WN_QUEUE_WC_RETRY_EXC_ERR);
	}
}

/* InfiniBand-style: the peer's QP went; ours keeps its queues (no flush). */
static void
op_qp_park(struct wn_cm_ep *ep)
{
	struct dp_conn *c = conn_of(ep);

	if (c->qp != NULL && c->qp->conn == c)
		wn_dp_qp_park(c->dp, c->qp);
}

static const struct wn_cm_ops cm_ops = {
	.event = op_event,
	.qp_start = op_qp_start,
	.qp_rtr = op_qp_rtr,
	.qp_terminate = op_qp_terminate,
	.qp_detach = op_qp_detach,
	.qp_mulpdu = op_qp_mulpdu,
	.ulpdu = op_ulpdu,
	.ulpdu_ooo = op_ulpdu_ooo,
	.tx_release = op_tx_release,
	.tx_room = op_tx_room,
	.closed = op_closed,
	.qp_sq_busy = op_qp_sq_busy,
	.qp_retry_exceeded = op_qp_retry_exceeded,
	.qp_park = op_qp_park,
};

void
wn_dp_conns_init(struct wn_dp *dp)
{
	wn_cm_init(&dp->cm, &cm_ops);
}

void
wn_dp_conn_qp_gone(struct wn_dp *dp, struct dp_conn *c, bool abort)
{
	(void)dp;
	c->qp = NULL;
	wn_cm_qp_gone(&c->ep, abort);
}

/* ---------------------------------------------------------------- listeners */

int
wn_dp_conn_incoming(void *arg, struct wn_llp *llp)
{
	struct dp_listen *l = arg;
	struct dp_conn *c = wn_dp_conn_new(l->dp);
	struct wn_llp_info in;

	if (c == NULL)
		return -ENOMEM; /* refused: reset */
	c->listen_id = l->id;
	c->embedded = l->embedded;
	c->event = l->event;
	c->elisten = l->embedded ? l : NULL;
	wn_llp_info(llp, &in);
	wn_dp_ctl_addr_of(&in.local, &c->src);
	wn_dp_ctl_addr_of(&in.remote, &c->dst);
	/* the responder's IRD/ORD come with the accept; the request is judged then */
	wn_cm_incoming(&l->dp->cm, &c->ep, llp);
	return 0;
}

/* ---------------------------------------------------------------- CM messages */

static int
cm_listen(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	struct dp_listen *l = calloc(1, sizeof(*l));
	struct wn_llp_ep ep;
	int rc;

	if (l == NULL)
		return -ENOMEM;
	l->kind = DPO_LISTEN;
	l->id = m->u.cm.id;
	l->src = m->u.cm.src;
	l->dp = dp;
	wn_dp_ep_of_ctl(&m->u.cm.src, &ep);
	rc = wn_dp_llp_listen(dp, l, &ep);
	if (rc == 0)
		rc = cm_add(dp, l->id, l); /* rte_hash: 0 or -errno */
	if (rc < 0) {
		DP_LOG(ERR, "listen on port %u: %s\n", ep.port, strerror(-rc));
		wn_dp_llp_unlisten(dp, l);
		free(l);
		return rc;
	}
	dp->st.listens++;
	return 0;
}

static void
cm_connect(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	struct dp_conn *c = wn_dp_conn_new(dp);
	struct wn_cm_connect cc;
	struct wn_ctl_cm_event ev;

	if (c == NULL) {
		memset(&ev, 0, sizeof(ev));
		ev.src = m->u.cm.src;
		ev.dst = m->u.cm.dst;
		ev.event = WN_CTL_CM_EV_CONNECT_ERROR;
		ev.status = -ENOMEM;
		wn_dp_cm_event_post(dp, m->u.cm.id, &ev);
		return;
	}
	c->id = m->u.cm.id;
	c->src = m->u.cm.src;
	c->dst = m->u.cm.dst;
	c->qp = m->u.cm.qp != 0 ? wn_dp_obj(dp, m->u.cm.qp, DPO_QP) : NULL;
	if (c->qp != NULL && c->qp->conn != NULL)
		c->qp = NULL; /* already carrying a connection */
	memset(&cc, 0, sizeof(cc));
	wn_dp_ep_of_ctl(&c->src, &cc.local);
	wn_dp_ep_of_ctl(&c->dst, &cc.remote);
	cc.caps.ird = (uint16_t)RTE_MIN(m->u.cm.param.ird, 0x3fffu);
	cc.caps.ord = (uint16_t)RTE_MIN(m->u.cm.param.ord, 0x3fffu);
	cc.pd = m->u.cm.param.pd;
	cc.pd_len = (uint16_t)RTE_MIN(m->u.cm.param.pd_len, (uint32_t)WN_CTL_PD_MAX);
	if (cm_add(dp, c->id, c) < 0) {
		memset(&ev, 0, sizeof(ev));
		ev.src = c->src;
		ev.dst = c->dst;
		ev.event = WN_CTL_CM_EV_CONNECT_ERROR;
		ev.status = -ENOSPC;
		/* never started (lib/cm has not seen it): nothing to close */
		conn_free(dp, c);
		wn_dp_cm_event_post(dp, m->u.cm.id, &ev);
		return;
	}
	/* a failure is reported (CONNECT_ERROR) and the connection CLOSED from inside */
	(void)wn_cm_connect(&dp->cm, &c->ep, dp->llp[wn_dp_llp_pick(dp, m->u.cm.llp)], &cc);
}

static struct dp_conn *
cm_conn_of(struct wn_dp *dp, const struct wn_server_dp_msg *m)
{
	struct dp_conn *c = cm_get(dp, m->u.cm.id);

	if (c == NULL && m->u.cm.conn != 0)
		c = cm_get(dp, m->u.cm.conn);
	return c != NULL && c->kind == DPO_CONN ? c : NULL;
}

static void
cm_accept(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	struct dp_conn *c = cm_conn_of(dp, m);
	struct wn_llp_caps caps;
	struct wn_ctl_cm_event ev;

	if (c == NULL || wn_cm_state(&c->ep) != WN_CM_REQ_RCVD) {
		/* the initiator went away before the accept */
		memset(&ev, 0, sizeof(ev));
		ev.event = WN_CTL_CM_EV_DISCONNECTED;
		ev.status = -ECONNRESET;
		wn_dp_cm_event_post(dp, m->u.cm.id, &ev);
		return;
	}
	cm_del(dp, c->token);
	c->token = 0;
	c->id = m->u.cm.id;
	if (cm_add(dp, c->id, c) < 0) {
		c->id = 0;
		wn_cm_destroy(&c->ep);
		return;
	}
	c->qp = m->u.cm.qp != 0 ? wn_dp_obj(dp, m->u.cm.qp, DPO_QP) : NULL;
	if (c->qp != NULL && c->qp->conn != NULL)
		c->qp = NULL;
	caps.ird = (uint16_t)RTE_MIN(m->u.cm.param.ird, 0x3fffu);
	caps.ord = (uint16_t)RTE_MIN(m->u.cm.param.ord, 0x3fffu);
	(void)wn_cm_accept(&c->ep, &caps, m->u.cm.param.pd,
			   (uint16_t)RTE_MIN(m->u.cm.param.pd_len, (uint32_t)WN_CTL_PD_MAX));
}

static void
cm_reject(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	struct dp_conn *c = cm_conn_of(dp, m);

	if (c == NULL)
		return;
	cm_del(dp, c->token);
	c->token = 0;
	(void)wn_cm_reject(&c->ep, m->u.cm.param.pd,
			   (uint16_t)RTE_MIN(m->u.cm.param.pd_len, (uint32_t)WN_CTL_PD_MAX));
}

static void
cm_disconnect(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	struct dp_conn *c = cm_conn_of(dp, m);

	if (c != NULL)
		(void)wn_cm_disconnect(&c->ep);
}

static void
cm_destroy(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	void *o = cm_get(dp, m->u.cm.id);
	struct dp_conn *c;

	if (o != NULL && *(enum dp_obj_kind *)o == DPO_LISTEN) {
		struct dp_listen *l = o;

		cm_del(dp, l->id);
		wn_dp_llp_unlisten(dp, l);
		free(l);
		return;
	}
	c = cm_conn_of(dp, m);
	if (c == NULL)
		return;
	cm_del(dp, c->id);
	cm_del(dp, c->token);
	c->id = 0;
	c->token = 0;
	wn_cm_destroy(&c->ep);
}

int
wn_dp_cm_msg(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	int rc = 0;

	if (wn_dp_ud_cm_msg(dp, m, &rc))
		return rc; /* rdma_cm's UDP port space (shard 0) */
	switch (m->type) {
	case WN_SERVER_DP_CM_LISTEN:
		return cm_listen(dp, m);
	case WN_SERVER_DP_CM_CONNECT:
		cm_connect(dp, m);
		break;
	case WN_SERVER_DP_CM_ACCEPT:
		cm_accept(dp, m);
		break;
	case WN_SERVER_DP_CM_REJECT:
		cm_reject(dp, m);
		break;
	case WN_SERVER_DP_CM_DISCONNECT:
		cm_disconnect(dp, m);
		break;
	case WN_SERVER_DP_CM_DESTROY:
		cm_destroy(dp, m);
		break;
	default:
		DP_LOG(WARNING, "unknown control message %u\n", m->type);
		break;
	}
	return 0;
}

/* ---------------------------------------------------------------- InfiniBand-style */

/* A stream on the InfiniBand-style listener: lib/cm hands it to the QP its request names. */
static int
ib_incoming(void *arg, struct wn_llp *llp)
{
	struct wn_dp *dp = arg;
	struct dp_conn *c = wn_dp_conn_new(dp);
	struct wn_llp_info in;

	if (c == NULL)
		return -ENOMEM;
	wn_llp_info(llp, &in);
	wn_dp_ctl_addr_of(&in.local, &c->src);
	wn_dp_ctl_addr_of(&in.remote, &c->dst);
	wn_cm_ib_incoming(&dp->cm, &c->ep, llp);
	return 0;
}

/* The InfiniBand-style listeners: MPA/TCP on IPv4 and IPv6, DDP over SCTP on both. */
static const struct {
	enum dp_llp llp;
	uint8_t family; /* 0: any (an SCTP listener takes every address of its port) */
} ib_listeners[DP_IB_LISTENERS] = {
	{DP_LLP_MPA, WN_AF_INET}, {DP_LLP_MPA, WN_AF_INET6}, {DP_LLP_SCTP, 0},
};

int
wn_dp_ib_listen(struct wn_dp *dp)
{
	struct wn_llp_ep ep = {.port = dp->c.ib_port};

	if (dp->c.ib_port == 0)
		return 0;
	/* every address, both lower layers: the peer's client chose one */
	for (unsigned int i = 0; i < DP_IB_LISTENERS; i++) {
		ep.addr.family = ib_listeners[i].family;
		dp->ib_listen[i] = wn_llp_listen(dp->llp[ib_listeners[i].llp], &ep, ib_incoming,
						 dp);
		if (dp->ib_listen[i] == NULL) {
			int err = errno;

			DP_LOG(ERR, "InfiniBand-style listener on port %u: %s\n", ep.port,
			       strerror(err));
			wn_dp_ib_unlisten(dp);
			return -err;
		}
	}
	return 0;
}

void
wn_dp_ib_unlisten(struct wn_dp *dp)
{
	for (unsigned int i = 0; i < DP_IB_LISTENERS; i++) {
		if (dp->ib_listen[i] != NULL)
			wn_llp_unlisten(dp->llp[ib_listeners[i].llp], dp->ib_listen[i]);
		dp->ib_listen[i] = NULL;
	}
}

/* RTR: the QP's connection starts (lib/cm decides who connects). */
static void
qp_ib_rtr(struct wn_dp *dp, struct dp_qp *qp, const struct wn_server_dp_msg *m)
{
	struct dp_conn *c;
	struct wn_cm_ib ib;

	if (qp->conn != NULL) {
		DP_LOG(WARNING, "QP %u: already connected; InfiniBand-style RTR ignored\n",
		       qp->d->qpn);
		return;
	}
	c = wn_dp_conn_new(dp);
	if (c == NULL) {
		wn_dp_qp_error(dp, qp->handle);
		wn_dp_qp_disconnect(dp, qp);
		return;
	}
	c->qp = qp;
	c->ib_qp = qp->handle;
	c->ib_access = m->u.ib.access;
	c->src = m->u.ib.src;
	c->dst = m->u.ib.dst;
	c->dst.port = dp->c.ib_port;
	memset(&ib, 0, sizeof(ib));
	wn_dp_ep_of_ctl(&c->src, &ib.local);
	wn_dp_ep_of_ctl(&c->dst, &ib.remote);
	ib.qpn = qp->d->qpn;
	ib.rqpn = m->u.ib.rqpn;
	ib.caps.ird = (uint16_t)RTE_MIN(RTE_MAX(m->u.ib.ird, 1u), 0x3fffu);
	ib.caps.ord = (uint16_t)RTE_MIN(RTE_MAX(m->u.ib.ord, 1u), 0x3fffu);
	qp->conn = c;
	if (wn_cm_ib_start(&dp->cm, &c->ep, dp->llp[wn_dp_llp_pick(dp, m->u.ib.llp)], &ib) != 0) {
		DP_LOG(NOTICE, "QP %u: InfiniBand-style connection to itself refused\n", ib.qpn);
		qp->conn = NULL;
		conn_free(dp, c);
		wn_dp_qp_error(dp, qp->handle);
		wn_dp_qp_disconnect(dp, qp);
	}
}

void
wn_dp_qp_ib(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	struct dp_qp *qp = wn_dp_obj(dp, m->handle, DPO_QP);

	if (qp == NULL)
		return;
	if (m->u.ib.qp_state == WN_CTL_QPS_RTR)
		qp_ib_rtr(dp, qp, m);
	else if (qp->conn != NULL && qp->conn->ep.ib_qp)
		wn_cm_ib_rts(&qp->conn->ep, m->u.ib.timeout, m->u.ib.retry_cnt);
}

/* ---------------------------------------------------------------- periodic */

void
wn_dp_conns_reap(struct wn_dp *dp)
{
	struct dp_conn *c;

	while ((c = TAILQ_FIRST(&dp->reap)) != NULL)
		conn_free(dp, c);
}

void
wn_dp_conns_free(struct wn_dp *dp)
{
	struct dp_conn *c;

	const void *key;
	void *o;
	uint32_t it = 0;

	/* listeners first: the table still points to connections freed below */
	while (rte_hash_iterate(dp->cm_tab, &key, &o, &it) >= 0) {
		if (*(enum dp_obj_kind *)o != DPO_LISTEN)
			continue;
		wn_dp_llp_unlisten(dp, o);
		free(o);
	}
	rte_hash_reset(dp->cm_tab);
	/* no more events; detach the QPs and abort the streams (RSTs go out) */
	TAILQ_FOREACH(c, &dp->conns, next)
		wn_cm_destroy(&c->ep);
	while ((c = TAILQ_FIRST(&dp->conns)) != NULL)
		conn_free(dp, c);
}
