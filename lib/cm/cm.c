/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connection manager's state machine (wn_cm.h): one table, state × input → action.
 *
 * An action returns the endpoint's next state, or KEEP when it called into the lower layer
 * or the owner and an event raised from inside that call (dispatched through the same table)
 * may already have moved the endpoint on. A cell left empty means the input is not valid in
 * that state: ULP requests get -EINVAL, lower-layer events are ignored.
 *
 * InfiniBand-style connections (wn_cm.h) are endpoints of the same table: a QP's (IB_WAIT,
 * IB_BACKOFF, IB_CONNECTING, IB_ACCEPTING, then RTS as any connection) and a stream on the
 * listener's (IB_AWAIT, IB_HELD), which hands its stream to the QP's endpoint its request
 * names (the input IB_OFFER) or is refused.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "wn_cm.h"

RTE_LOG_REGISTER_DEFAULT(wn_cm_logtype, NOTICE);
#define CM_LOG(lvl, ...) rte_log(RTE_LOG_##lvl, wn_cm_logtype, "cm: " __VA_ARGS__)

/* Inputs of the table. */
enum cm_input {
	IN_NONE = 0,   /* not an input (unmapped lower-layer event) */
	IN_ACCEPT,
	IN_REJECT,
	IN_DISCONNECT,
	IN_DESTROY,
	IN_QP_ERROR,   /* the ULP moved the QP to Error */
	IN_QP_DESTROY, /* the ULP destroyed the QP */
	IN_TERMINATE,  /* the engine sent or received a Terminate */
	IN_REQUEST,    /* lower layer: the request arrived */
	IN_ESTABLISHED,
	IN_TX_READY,
	IN_REJECTED,
	IN_ERROR,
	IN_EOF,
	IN_CLOSED,
	IN_UNANSWERED, /* EOF or CLOSED while our enhanced request was unanswered */
	IN_MULPDU,
	IN_IB_OFFER,   /* InfiniBand-style: a request for this QP arrived (@c other) */
	IN_IB_TIMER,   /* ... the next attempt is due */
	IN_IB_EXPIRED, /* ... the retry budget ran out */
	IN_N
};

/* What the QP's endpoint did with a request offered to it (IN_IB_OFFER). */
enum ib_offer {
	OFFER_BUSY = 0, /* connected, or about to be: refuse it (BUSY) */
	OFFER_TAKEN,    /* its stream is the QP's now */
	OFFER_CROSSED,  /* our own attempt wins: refuse it (CROSSED) */
};

/* One input with what it carries. */
struct cm_in {
	enum cm_input type;
	const struct wn_llp_event *ev;  /* lower-layer inputs */
	const struct wn_llp_caps *caps; /* IN_ACCEPT */
	const uint8_t *pd;              /* IN_ACCEPT, IN_REJECT */
	uint16_t pd_len;
	struct wn_cm_ep *other;         /* IN_IB_OFFER: the listener's endpoint of the request */
	enum ib_offer *offer;           /* IN_IB_OFFER: the answer */
};

/* "the state an input left behind" */
#define KEEP WN_CM_NSTATES

typedef enum wn_cm_state (*cm_action)(struct wn_cm_ep *ep, const struct cm_in *in);

static int dispatch(struct wn_cm_ep *ep, const struct cm_in *in);

/* ---------------------------------------------------------------- helpers */

/*
 * Every state change goes through here: an InfiniBand-style QP's endpoint is listed (for the
 * requests that name it and for its timers) until CLOSED, a listener's endpoint while it
 * holds its request.
 */
static void
set_state(struct wn_cm_ep *ep, enum wn_cm_state s)
{
	struct wn_cm *cm = ep->cm;
	bool want;

	ep->state = s;
	if (ep->ib_qp)
		want = s != WN_CM_CLOSED;
	else if (ep->ib_in)
		want = s == WN_CM_IB_HELD;
	else
		return;
	if (want == ep->ib_listed)
		return;
	ep->ib_listed = want;
	if (ep->ib_qp && want) {
		TAILQ_INSERT_TAIL(&cm->ib_qps, ep, ib_link);
	} else if (ep->ib_qp) {
		TAILQ_REMOVE(&cm->ib_qps, ep, ib_link);
	} else if (want) {
		TAILQ_INSERT_TAIL(&cm->ib_held, ep, ib_link);
		cm->n_held++;
	} else {
		TAILQ_REMOVE(&cm->ib_held, ep, ib_link);
		cm->n_held--;
	}
}

static void
final(struct wn_cm_ep *ep, enum wn_cm_event_type type, int32_t status,
      const struct wn_llp_peer *peer)
{
	struct wn_cm_event ev = {.type = type, .status = status};

	if (ep->final_sent)
		return;
	ep->final_sent = true;
	if (peer != NULL) {
		ev.pd = peer->pd;
		ev.pd_len = peer->pd_len;
		ev.peer_ird = peer->ird;
		ev.peer_ord = peer->ord;
	}
	(void)ep->cm->ops->event(ep, &ev);
}

/* The endpoint is CLOSED: counted, and its owner frees it. */
static void
ep_closed(struct wn_cm_ep *ep)
{
	ep->cm->st.conns_closed++;
	ep->cm->ops->closed(ep);
}

static void
detach(struct wn_cm_ep *ep)
{
	ep->cm->ops->qp_detach(ep);
}

/* Graceful close after what is queued. */
static enum wn_cm_state
close_llp(struct wn_cm_ep *ep)
{
	if (ep->llp != NULL)
		(void)wn_llp_close(ep->llp);
	return WN_CM_CLOSING;
}

/* A protocol or local failure: the final event, the QP flushed, the stream aborted. */
static enum wn_cm_state
fail(struct wn_cm_ep *ep, const char *why)
{
	CM_LOG(NOTICE, "connection failed: %s\n", why);
	ep->why = why;
	ep->cm->st.conns_aborted++;
	if (ep->established)
		final(ep, WN_CM_EV_DISCONNECTED, -ECONNRESET, NULL);
	else if (ep->active)
		final(ep, WN_CM_EV_CONNECT_ERROR, -EPROTO, NULL);
	else
		final(ep, WN_CM_EV_DISCONNECTED, -EPROTO, NULL);
	detach(ep);
	if (ep->llp != NULL)
		wn_llp_abort(ep->llp); /* CLOSED comes from inside */
	return KEEP;
}

/* ---------------------------------------------------------------- actions: the ULP */

static enum wn_cm_state
act_accept(struct wn_cm_ep *ep, const struct cm_in *in)
{
	/* ESTABLISHED, or ERROR with a Reject when RFC 6581 negotiation fails, from inside */
	(void)wn_llp_accept(ep->llp, in->caps, in->pd, in->pd_len);
	return KEEP;
}

static enum wn_cm_state
act_reject(struct wn_cm_ep *ep, const struct cm_in *in)
{
	ep->final_sent = true; /* the ULP finished its id itself */
	ep->cm->st.conns_rejected++;
	(void)wn_llp_reject(ep->llp, in->pd, in->pd_len);
	return close_llp(ep);
}

static enum wn_cm_state
act_disconnect(struct wn_cm_ep *ep, const struct cm_in *in)
{
	(void)in;
	/* rdma_disconnect: our side sees its event now, the peer when our close arrives */
	if (ep->active && !ep->established)
		final(ep, WN_CM_EV_CONNECT_ERROR, -ECONNABORTED, NULL);
	else
		final(ep, WN_CM_EV_DISCONNECTED, 0, NULL);
	detach(ep);
	return close_llp(ep);
}

static enum wn_cm_state
act_destroy(struct wn_cm_ep *ep, const struct cm_in *in)
{
	(void)in;
	ep->final_sent = true; /* no id to report to any more */
	detach(ep);
	if (ep->llp == NULL) {
		set_state(ep, WN_CM_CLOSED); /* never started */
		ep_closed(ep);
		return KEEP;
	}
	if (ep->state >= WN_CM_CLOSING)
		return KEEP;
	wn_llp_abort(ep->llp); /* CLOSED comes from inside, or later */
	return WN_CM_CLOSING;  /* nothing but the stream's end matters any more */
}

static enum wn_cm_state
act_qp_gone(struct wn_cm_ep *ep, const struct cm_in *in)
{
	if (in->type == IN_QP_DESTROY) {
		if (ep->llp == NULL)
			return KEEP;
		/* Like a socket's close (and siw's sock_release): what the stream holds still
		 * goes, then the FIN. A Write completes when its FPDUs are handed to TCP, not when
		 * they are acknowledged, so rsockets' rclose (all sends complete, then
		 * rdma_destroy_qp) reset a stream whose last segments waited for a retransmission,
		 * and the peer lost them. A stream not yet in RTS is aborted. */
		if (ep->state == WN_CM_RTS || ep->state == WN_CM_CLOSING)
			return close_llp(ep);
		wn_llp_abort(ep->llp);
		return KEEP;
	}
	if (ep->established)
		final(ep, WN_CM_EV_DISCONNECTED, 0, NULL);
	return close_llp(ep);
}

static enum wn_cm_state
act_terminated(struct wn_cm_ep *ep, const struct cm_in *in)
{
	(void)in;
	ep->terminated = true;
	/* RFC 5040 §6.3: after a Terminate the stream is closed (FIN behind the Terminate) */
	return close_llp(ep);
}

/* ---------------------------------------------------------------- actions: the lower layer */

static enum wn_cm_state
act_request(struct wn_cm_ep *ep, const struct cm_in *in)
{
	const struct wn_llp_peer *pe = in->ev->peer;
	struct wn_cm_event ev = {
		.type = WN_CM_EV_CONNECT_REQUEST,
		.pd = pe->pd,
		.pd_len = pe->pd_len,
		.peer_ird = pe->ird,
		.peer_ord = pe->ord,
	};

	if (ep->cm->ops->event(ep, &ev) != 0) {
		ep->final_sent = true;
		return fail(ep, "the request could not be reported");
	}
	return WN_CM_REQ_RCVD;
}

static enum wn_cm_state
act_established(struct wn_cm_ep *ep, const struct cm_in *in)
{
	const struct wn_llp_params *p = in->ev->params;
	const struct wn_llp_peer *pe = in->ev->peer;
	struct wn_cm_event ev = {.type = WN_CM_EV_ESTABLISHED, .ird = p->ird, .ord = p->ord};
	/* RFC 6581 §9.2: the responder absorbs the agreed RTR without a completion */
	uint8_t rtr_recv = !ep->active && p->p2p ? p->rtr : 0;

	ep->mulpdu = p->mulpdu;
	ep->rtr = ep->active && p->p2p ? p->rtr : 0;
	if (ep->cm->ops->qp_start(ep, ep->llp, p, rtr_recv) != 0)
		return fail(ep, "the QP could not enter RDMA mode");
	ep->established = true;
	ep->cm->st.conns_established++;
	if (pe != NULL) {
		/* the responder's ULP saw the request's Private Data already */
		ev.pd = ep->active ? pe->pd : NULL;
		ev.pd_len = ep->active ? pe->pd_len : 0;
		ev.peer_ird = pe->ird;
		ev.peer_ord = pe->ord;
	}
	(void)ep->cm->ops->event(ep, &ev);
	return WN_CM_RTS;
}

static enum wn_cm_state
act_tx_ready(struct wn_cm_ep *ep, const struct cm_in *in)
{
	(void)in;
	if (ep->rtr != 0 && ep->cm->ops->qp_rtr(ep, ep->rtr) != 0)
		return fail(ep, "the RTR could not be sent");
	ep->rtr = 0;
	return KEEP;
}

static enum wn_cm_state
act_rejected(struct wn_cm_ep *ep, const struct cm_in *in)
{
	ep->cm->st.conns_rejected++;
	final(ep, WN_CM_EV_REJECTED, -ECONNREFUSED, in->ev->peer);
	detach(ep);
	return close_llp(ep);
}

static enum wn_cm_state
act_error(struct wn_cm_ep *ep, const struct cm_in *in)
{
	const struct wn_llp_event *e = in->ev;

	if (e->reject_sent) {
		/* our RFC 6581 negotiation failed: the Reject names what we need, then close */
		ep->cm->st.conns_rejected++;
		final(ep, WN_CM_EV_DISCONNECTED, -ECONNREFUSED, NULL);
		detach(ep);
		return close_llp(ep);
	}
	if (ep->active && !ep->established && e->insufficient_ird) {
		/* RFC 6581 §9.1: the responder needs more than we can give: a refusal */
		ep->cm->st.conns_rejected++;
		final(ep, WN_CM_EV_REJECTED, -ECONNREFUSED, e->peer);
		detach(ep);
		return close_llp(ep);
	}
	/*
	 * RFC 5044 §8, RFC 5040 §7.1: in RDMA mode the error is reported to the peer with a
	 * Terminate before the stream is closed (wn_cm_terminated() follows its sending).
	 */
	if (e->send_terminate && ep->state == WN_CM_RTS &&
	    ep->cm->ops->qp_terminate(ep, e->term_layer, e->term_etype, e->err) == 0) {
		CM_LOG(NOTICE, "lower-layer error %u (%s): Terminate\n", e->err, e->reason);
		ep->why = e->reason;
		return KEEP;
	}
	return fail(ep, e->reason != NULL ? e->reason : "lower-layer error");
}

static enum wn_cm_state act_ib_orphan(struct wn_cm_ep *ep, const struct cm_in *in);

/*
 * An InfiniBand-style QP's connection that the peer ends in RDMA mode without a Terminate
 * (not our own abort: the ULP going away has its final event sent already).
 */
static bool
ib_orphaned(const struct wn_cm_ep *ep)
{
	return ep->ib_qp && ep->state == WN_CM_RTS && !ep->terminated && !ep->final_sent;
}

static enum wn_cm_state
act_eof(struct wn_cm_ep *ep, const struct cm_in *in)
{
	if (ib_orphaned(ep))
		return act_ib_orphan(ep, in);
	/* the peer closed its side: the stream is over (RFC 5044 §7.1.2, RFC 5040 §6.3) */
	if (ep->established)
		final(ep, WN_CM_EV_DISCONNECTED, 0, NULL);
	else if (ep->active)
		final(ep, WN_CM_EV_CONNECT_ERROR, -ECONNRESET, NULL);
	else
		final(ep, WN_CM_EV_DISCONNECTED, -ECONNRESET, NULL);
	detach(ep);
	return close_llp(ep);
}

static enum wn_cm_state
act_closed(struct wn_cm_ep *ep, const struct cm_in *in)
{
	enum wn_llp_close why = in->ev->why;

	if (ib_orphaned(ep))
		return act_ib_orphan(ep, in);
	if (ep->active && !ep->established) {
		ep->cm->st.conns_failed++;
		if (why == WN_LLP_CLOSE_REFUSED)
			final(ep, WN_CM_EV_REJECTED, -ECONNREFUSED, NULL);
		else if (why == WN_LLP_CLOSE_TIMEOUT)
			final(ep, WN_CM_EV_UNREACHABLE, -ETIMEDOUT, NULL);
		else
			final(ep, WN_CM_EV_CONNECT_ERROR, -ECONNRESET, NULL);
	} else {
		final(ep, WN_CM_EV_DISCONNECTED, why == WN_LLP_CLOSE_NORMAL ? 0 : -ECONNRESET,
		      NULL);
	}
	detach(ep);
	wn_llp_release(ep->llp);
	ep->llp = NULL;
	set_state(ep, WN_CM_CLOSED);
	ep_closed(ep);
	return KEEP;
}

/* The stream's end as such (EOF or CLOSED), whatever the request was. */
static enum wn_cm_state
act_end(struct wn_cm_ep *ep, const struct cm_in *in)
{
	return in->ev->type == WN_LLP_EV_EOF ? act_eof(ep, in) : act_closed(ep, in);
}

/*
 * Active, CONNECTING: the responder ended the stream on our enhanced request. RFC 6581 §10:
 * an unenhanced responder closes the connection, and the initiator MAY try again with the
 * unenhanced format (RFC 5044 §7.1), leaving IRD/ORD and peer-to-peer mode to the ULP. Once:
 * a retry's request is unenhanced, and a lower layer that did not keep the parameters
 * cannot retry; either way the end is then the connect's end.
 */
static enum wn_cm_state
act_unanswered(struct wn_cm_ep *ep, const struct cm_in *in)
{
	struct wn_llp *old = ep->llp;
	struct wn_llp_connect lc = {
		.local = ep->conn.local,
		.remote = ep->conn.remote,
		.caps = ep->conn.caps,
		.pd = ep->conn.pd,
		.pd_len = ep->conn.pd_len,
		.rev = 1,
		.up = &ep->cm->up,
		.up_arg = ep,
	};
	int err;

	if (ep->unenhanced || ep->proto == NULL)
		return act_end(ep, in);
	CM_LOG(NOTICE, "the responder closed the stream on our enhanced (RFC 6581) request: "
	       "connecting again unenhanced (MPA Rev 1, RFC 6581 §10)\n");
	ep->unenhanced = true;
	ep->cm->st.conns_unenhanced++;
	/* the old stream's last events are not ours any more: an abort reports CLOSED */
	ep->llp = NULL;
	if (in->ev->type == WN_LLP_EV_EOF)
		wn_llp_abort(old);
	wn_llp_release(old);
	ep->llp = wn_llp_connect(ep->proto, &lc);
	if (ep->llp != NULL)
		return KEEP; /* CONNECTING, on the new stream */
	err = errno != 0 ? errno : EINVAL;
	ep->cm->st.conns_failed++;
	final(ep, WN_CM_EV_CONNECT_ERROR, -err, NULL);
	detach(ep);
	set_state(ep, WN_CM_CLOSED);
	ep_closed(ep);
	return KEEP;
}

static enum wn_cm_state
act_mulpdu(struct wn_cm_ep *ep, const struct cm_in *in)
{
	ep->mulpdu = in->ev->params->mulpdu;
	ep->cm->ops->qp_mulpdu(ep, ep->mulpdu);
	return KEEP;
}

static enum wn_cm_state
act_keep(struct wn_cm_ep *ep, const struct cm_in *in)
{
	(void)ep;
	(void)in;
	return KEEP;
}

/* ---------------------------------------------------------------- InfiniBand-style */

/* A lower-layer address as a GID: IPv4 as IPv4-mapped IPv6 (RFC 4291 §2.5.5.2). */
static void
ib_gid(const struct wn_ip_addr *a, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (a->family == WN_AF_INET6) {
		memcpy(gid, a->v6, 16);
		return;
	}
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, &a->v4, 4);
}

/*
 * The order both ends compute: (address as a GID, QP number), lexicographic. The lower end of
 * a pair connects; of two crossed attempts, the one whose initiator is lower wins.
 */
static int
ib_cmp(const struct wn_llp_ep *a, uint32_t aq, const struct wn_llp_ep *b, uint32_t bq)
{
	uint8_t ga[16], gb[16];
	int c;

	ib_gid(&a->addr, ga);
	ib_gid(&b->addr, gb);
	c = memcmp(ga, gb, sizeof(ga));
	if (c != 0)
		return c < 0 ? -1 : 1;
	return aq < bq ? -1 : aq > bq;
}

/* The endpoint reached its end without a stream (or gave its stream away). */
static enum wn_cm_state
ib_end(struct wn_cm_ep *ep)
{
	set_state(ep, WN_CM_CLOSED);
	ep_closed(ep);
	return KEEP;
}

/*
 * Let go of the QP's stream (its attempt, or the peer's stream it was accepting): aborted
 * unless it is gone already (@p ev CLOSED), then released; its last events are not ours.
 */
static void
ib_drop_stream(struct wn_cm_ep *ep, const struct wn_llp_event *ev)
{
	struct wn_llp *l = ep->llp;

	if (l == NULL)
		return;
	ep->llp = NULL;
	if (ev == NULL || ev->type != WN_LLP_EV_CLOSED)
		wn_llp_abort(l);
	wn_llp_release(l);
}

/* Wait for the next attempt (one retry interval), or for the peer when it connects. */
static enum wn_cm_state
ib_idle(struct wn_cm_ep *ep)
{
	if (!ep->ib_initiator)
		return WN_CM_IB_WAIT;
	ep->ib_next = ep->cm->now + ep->ib_retry_us;
	return WN_CM_IB_BACKOFF;
}

/* One attempt: a stream from a source port of ours to the peer's listener, our request. */
static enum wn_cm_state
ib_attempt(struct wn_cm_ep *ep)
{
	struct wn_cm *cm = ep->cm;
	struct wn_cm_ib_pd req = {.type = WN_CM_IB_REQUEST, .src_qpn = ep->ib.qpn,
				  .dst_qpn = ep->ib.rqpn};
	uint8_t pd[WN_CM_IB_PD_LEN];
	struct wn_llp_connect lc = {
		.local = ep->ib.local,
		.remote = ep->ib.remote,
		.caps = ep->ib.caps,
		.pd = pd,
		.pd_len = sizeof(pd),
		.up = &cm->up,
		.up_arg = ep,
	};
	int tries;

	(void)wn_cm_ib_pd_encode(&req, pd, sizeof(pd));
	for (tries = 0; tries < 16; tries++) {
		if (cm->ib_next_port < WN_CM_IB_SPORT_LO || cm->ib_next_port >= WN_CM_IB_SPORT_HI)
			cm->ib_next_port = WN_CM_IB_SPORT_LO;
		lc.local.port = cm->ib_next_port++;
		errno = 0;
		ep->llp = wn_llp_connect(ep->proto, &lc);
		if (ep->llp != NULL) {
			cm->st.ib_attempts++;
			ep->active = true;
			return WN_CM_IB_CONNECTING;
		}
		if (errno != EADDRINUSE)
			break;
	}
	CM_LOG(DEBUG, "QP %u: cannot connect to QP %u: %s\n", ep->ib.qpn, ep->ib.rqpn,
	       strerror(errno));
	return ib_idle(ep);
}

/*
 * Refuse the request of listener endpoint @p t: an MPA Reject (or a session Reject) whose
 * Private Data says why, then the stream closes. @return its next state.
 */
static enum wn_cm_state
ib_refuse(struct wn_cm_ep *t, uint8_t reason)
{
	struct wn_cm_ib_pd rej = {.type = WN_CM_IB_REJECT, .reason = reason,
				  .src_qpn = t->ib_req.dst_qpn, .dst_qpn = t->ib_req.src_qpn};
	uint8_t pd[WN_CM_IB_PD_LEN];
	int n = wn_cm_ib_pd_encode(&rej, pd, sizeof(pd));

	t->cm->st.ib_refused++;
	(void)wn_llp_reject(t->llp, pd, n > 0 ? (uint16_t)n : 0);
	return close_llp(t);
}

/* The QP's endpoint takes the stream of listener endpoint @p t and accepts it. */
static void
ib_take(struct wn_cm_ep *ep, struct wn_cm_ep *t)
{
	struct wn_cm_ib_pd rep = {.type = WN_CM_IB_REPLY, .src_qpn = ep->ib.qpn,
				  .dst_qpn = ep->ib.rqpn};
	struct wn_llp *l = t->llp;
	uint8_t pd[WN_CM_IB_PD_LEN];

	t->llp = NULL;
	(void)ib_end(t);
	ib_drop_stream(ep, NULL); /* our own attempt, if one was out */
	ep->llp = l;
	ep->active = false;
	wn_llp_set_up(l, &ep->cm->up, ep);
	set_state(ep, WN_CM_IB_ACCEPTING);
	(void)wn_cm_ib_pd_encode(&rep, pd, sizeof(pd));
	/* ESTABLISHED, or an error, from inside (or later, for a lower layer that waits) */
	(void)wn_llp_accept(l, &ep->ib.caps, pd, sizeof(pd));
}

/* The listener's endpoint @p t offers its request to the QP's endpoint @p e. */
static enum ib_offer
ib_offer(struct wn_cm_ep *e, struct wn_cm_ep *t)
{
	enum ib_offer res = OFFER_BUSY;
	struct cm_in in = {.type = IN_IB_OFFER, .other = t, .offer = &res};

	if (dispatch(e, &in) != 0)
		return OFFER_BUSY; /* closed meanwhile */
	return res;
}

/* The QP's endpoint of QP number @p qpn (one that has not reached RDMA mode first). */
static struct wn_cm_ep *
ib_find(struct wn_cm *cm, uint32_t qpn)
{
	struct wn_cm_ep *e, *any = NULL;

	TAILQ_FOREACH(e, &cm->ib_qps, ib_link) {
		if (e->ib.qpn != qpn)
			continue;
		if (e->state < WN_CM_RTS)
			return e;
		any = e;
	}
	return any;
}

/*
 * Listener endpoint @p t's request (decoded) meets the QP it names: taken, refused, or held
 * while no such QP waits. @return t's next state.
 */
static enum wn_cm_state
ib_match(struct wn_cm_ep *t)
{
	struct wn_cm *cm = t->cm;
	struct wn_cm_ep *e = ib_find(cm, t->ib_req.dst_qpn);

	if (e == NULL) {
		if (cm->n_held >= WN_CM_IB_HELD_MAX)
			return ib_refuse(t, WN_CM_IB_R_BUSY);
		cm->st.ib_held++;
		return WN_CM_IB_HELD;
	}
	if (e->ib.rqpn != t->ib_req.src_qpn)
		return ib_refuse(t, WN_CM_IB_R_MISMATCH);
	switch (ib_offer(e, t)) {
	case OFFER_TAKEN:
		return KEEP; /* t is CLOSED: its stream went to the QP */
	case OFFER_CROSSED:
		cm->st.ib_crossed_refused++;
		return ib_refuse(t, WN_CM_IB_R_CROSSED);
	default:
		return ib_refuse(t, WN_CM_IB_R_BUSY);
	}
}

/* The requests held for the QP of endpoint @p e now that it waits. */
static void
ib_offer_held(struct wn_cm_ep *e)
{
	struct wn_cm_ep *t, *next;

	for (t = TAILQ_FIRST(&e->cm->ib_held); t != NULL; t = next) {
		enum wn_cm_state s;

		next = TAILQ_NEXT(t, ib_link);
		if (t->ib_req.dst_qpn != e->ib.qpn)
			continue;
		s = ib_match(t);
		if (s != KEEP && t->state != WN_CM_CLOSED)
			set_state(t, s);
	}
}

/* Listener endpoint, IB_AWAIT: the request arrived. */
static enum wn_cm_state
act_ib_request(struct wn_cm_ep *t, const struct cm_in *in)
{
	const struct wn_llp_peer *pe = in->ev->peer;

	t->cm->st.ib_requests++;
	if (pe == NULL || wn_cm_ib_pd_decode(pe->pd, pe->pd_len, &t->ib_req) != 0 ||
	    t->ib_req.type != WN_CM_IB_REQUEST) {
		CM_LOG(NOTICE, "a request on the InfiniBand-style port that is not one: refused\n");
		memset(&t->ib_req, 0, sizeof(t->ib_req));
		return ib_refuse(t, WN_CM_IB_R_MALFORMED);
	}
	return ib_match(t);
}

/*
 * QP endpoint before RDMA mode: a request for it. A QP that waits for its peer takes it; one
 * that connects itself (crossed attempts) takes it only when the request's initiator is the
 * lower end, (address as seen on the wire, QP number), and gives up its own attempt then;
 * else its own attempt wins and the request is refused.
 */
static enum wn_cm_state
act_ib_offer(struct wn_cm_ep *ep, const struct cm_in *in)
{
	struct wn_cm_ep *t = in->other;

	if (ep->ib_initiator) {
		if (ib_cmp(&t->ib_from, t->ib_req.src_qpn, &ep->ib.local, ep->ib.qpn) >= 0) {
			*in->offer = OFFER_CROSSED;
			return KEEP;
		}
		CM_LOG(INFO, "QP %u: crossed connects: the peer's attempt wins\n", ep->ib.qpn);
		ep->cm->st.ib_crossed++;
		ep->ib_initiator = false;
	}
	ib_take(ep, t);
	*in->offer = OFFER_TAKEN;
	return KEEP;
}

/* QP endpoint accepting, in RDMA mode or closing: a request for it is refused (BUSY). */
static enum wn_cm_state
act_ib_busy(struct wn_cm_ep *ep, const struct cm_in *in)
{
	(void)ep;
	*in->offer = OFFER_BUSY;
	return KEEP;
}

static enum wn_cm_state
act_ib_attempt(struct wn_cm_ep *ep, const struct cm_in *in)
{
	(void)in;
	return ib_attempt(ep);
}

/* QP endpoint: its stream failed before RDMA mode: let it go, wait or try again later. */
static enum wn_cm_state
act_ib_failed(struct wn_cm_ep *ep, const struct cm_in *in)
{
	ib_drop_stream(ep, in->ev);
	return ib_idle(ep);
}

/* QP endpoint, IB_CONNECTING: the peer refused our request. */
static enum wn_cm_state
act_ib_rejected(struct wn_cm_ep *ep, const struct cm_in *in)
{
	const struct wn_llp_peer *pe = in->ev->peer;
	struct wn_cm_ib_pd rej;
	struct wn_llp *l = ep->llp;

	if (pe != NULL && wn_cm_ib_pd_decode(pe->pd, pe->pd_len, &rej) == 0 &&
	    rej.type == WN_CM_IB_REJECT && rej.reason == WN_CM_IB_R_CROSSED) {
		/* the peer connects too, and its attempt wins: ours is over, we wait for it */
		CM_LOG(INFO, "QP %u: crossed connects: ours refused, the peer's wins\n",
		       ep->ib.qpn);
		ep->cm->st.ib_crossed++;
		ep->ib_initiator = false;
	}
	/* the Reject went, the stream closes behind it (RFC 5044 §7.1.2) */
	ep->llp = NULL;
	(void)wn_llp_close(l);
	wn_llp_release(l);
	return ib_idle(ep);
}

/* QP endpoint: the setup is done (our attempt's Reply, or the accept of the peer's). */
static enum wn_cm_state
act_ib_established(struct wn_cm_ep *ep, const struct cm_in *in)
{
	const struct wn_llp_peer *pe = in->ev->peer;
	struct wn_cm_ib_pd rep;
	enum wn_cm_state next;

	if (ep->active &&
	    (pe == NULL || wn_cm_ib_pd_decode(pe->pd, pe->pd_len, &rep) != 0 ||
	     rep.type != WN_CM_IB_REPLY || rep.src_qpn != ep->ib.rqpn ||
	     rep.dst_qpn != ep->ib.qpn)) {
		CM_LOG(NOTICE, "QP %u: the Reply does not name QP %u and ours: dropped\n",
		       ep->ib.qpn, ep->ib.rqpn);
		return act_ib_failed(ep, in);
	}
	next = act_established(ep, in);
	if (ep->established)
		ep->cm->st.ib_established++;
	return next;
}

/* QP endpoint before RDMA mode: the QP has had send work for its whole retry budget. */
static enum wn_cm_state
act_ib_expired(struct wn_cm_ep *ep, const struct cm_in *in)
{
	(void)in;
	CM_LOG(NOTICE, "QP %u: no connection to QP %u within its retry budget: RETRY_EXC_ERR\n",
	       ep->ib.qpn, ep->ib.rqpn);
	ep->cm->st.ib_retry_exceeded++;
	ep->why = "retry budget exceeded";
	ib_drop_stream(ep, NULL);
	ep->cm->ops->qp_retry_exceeded(ep);
	final(ep, WN_CM_EV_UNREACHABLE, -ETIMEDOUT, NULL);
	detach(ep);
	return ib_end(ep);
}

/*
 * QP endpoint in RDMA mode: its stream ended (EOF, or gone) without a Terminate: the peer's
 * QP went. An InfiniBand QP learns nothing of it: ours keeps its receives and send work; the
 * retry budget runs again from the next send work seen (IB_ORPHAN).
 */
static enum wn_cm_state
act_ib_orphan(struct wn_cm_ep *ep, const struct cm_in *in)
{
	CM_LOG(INFO, "QP %u: the connection to QP %u ended; the QP keeps its work\n",
	       ep->ib.qpn, ep->ib.rqpn);
	ep->cm->ops->qp_park(ep);
	ep->ib_busy = false;
	if (in->ev->type == WN_LLP_EV_CLOSED)
		ib_drop_stream(ep, in->ev);
	else if (ep->llp != NULL)
		(void)wn_llp_close(ep->llp); /* our side too; CLOSED releases it */
	return WN_CM_IB_ORPHAN;
}

/* IB_ORPHAN: the rest of the stream's end. */
static enum wn_cm_state
act_ib_stream_end(struct wn_cm_ep *ep, const struct cm_in *in)
{
	ib_drop_stream(ep, in->ev);
	return KEEP;
}

/* QP endpoint before RDMA mode: the ULP moved the QP to Error (or RESET) or destroyed it. */
static enum wn_cm_state
act_ib_gone(struct wn_cm_ep *ep, const struct cm_in *in)
{
	(void)in;
	ep->final_sent = true; /* the ULP did it: nothing to tell it */
	ib_drop_stream(ep, NULL);
	detach(ep);
	return ib_end(ep);
}

/* ---------------------------------------------------------------- the table */

/* What every state before CLOSED does with the end of the stream and the ULP going away. */
#define OPEN_ROW                                                                                 \
	[IN_DISCONNECT] = act_disconnect, [IN_DESTROY] = act_destroy,                              \
	[IN_QP_ERROR] = act_qp_gone, [IN_QP_DESTROY] = act_qp_gone, [IN_ERROR] = act_error,        \
	[IN_EOF] = act_eof, [IN_CLOSED] = act_closed

/* The request is answered (or the ULP is gone): an unanswered end is just the end. */
#define END_ROW OPEN_ROW, [IN_UNANSWERED] = act_end

/*
 * An InfiniBand-style QP's endpoint before RDMA mode: the ULP going away, the retry budget
 * running out; with a stream of its own (its attempt, or the peer's it accepts), that
 * stream failing sends it back to waiting.
 */
#define IB_QP_ROW                                                                                \
	[IN_DESTROY] = act_ib_gone, [IN_QP_ERROR] = act_ib_gone, [IN_QP_DESTROY] = act_ib_gone,   \
	[IN_IB_EXPIRED] = act_ib_expired
#define IB_STREAM_ROW                                                                            \
	IB_QP_ROW, [IN_ERROR] = act_ib_failed, [IN_EOF] = act_ib_failed,                          \
	[IN_CLOSED] = act_ib_failed, [IN_UNANSWERED] = act_ib_failed,                             \
	[IN_ESTABLISHED] = act_ib_established

static const cm_action table[WN_CM_NSTATES][IN_N] = {
	[WN_CM_IDLE] = { [IN_DESTROY] = act_destroy },
	[WN_CM_CONNECTING] = { OPEN_ROW, [IN_ESTABLISHED] = act_established,
			       [IN_REJECTED] = act_rejected, [IN_UNANSWERED] = act_unanswered },
	[WN_CM_AWAIT_REQ] = { END_ROW, [IN_REQUEST] = act_request },
	[WN_CM_REQ_RCVD] = { END_ROW, [IN_ACCEPT] = act_accept, [IN_REJECT] = act_reject,
			     [IN_ESTABLISHED] = act_established },
	[WN_CM_IB_WAIT] = { IB_QP_ROW, [IN_IB_OFFER] = act_ib_offer },
	[WN_CM_IB_BACKOFF] = { IB_QP_ROW, [IN_IB_OFFER] = act_ib_offer,
			       [IN_IB_TIMER] = act_ib_attempt },
	[WN_CM_IB_CONNECTING] = { IB_STREAM_ROW, [IN_IB_OFFER] = act_ib_offer,
				  [IN_REJECTED] = act_ib_rejected },
	[WN_CM_IB_ACCEPTING] = { IB_STREAM_ROW, [IN_IB_OFFER] = act_ib_busy },
	[WN_CM_IB_AWAIT] = { END_ROW, [IN_REQUEST] = act_ib_request },
	[WN_CM_IB_HELD] = { END_ROW },
	[WN_CM_RTS] = { END_ROW, [IN_TX_READY] = act_tx_ready, [IN_TERMINATE] = act_terminated,
			[IN_MULPDU] = act_mulpdu, [IN_IB_OFFER] = act_ib_busy },
	[WN_CM_IB_ORPHAN] = { IB_QP_ROW, [IN_IB_OFFER] = act_ib_busy, [IN_EOF] = act_keep,
			      [IN_ERROR] = act_ib_stream_end, [IN_CLOSED] = act_ib_stream_end,
			      [IN_UNANSWERED] = act_ib_stream_end },
	[WN_CM_CLOSING] = { END_ROW, [IN_MULPDU] = act_mulpdu, [IN_IB_OFFER] = act_ib_busy },
	[WN_CM_CLOSED] = { [IN_DESTROY] = act_keep },
};

#undef IB_STREAM_ROW
#undef IB_QP_ROW
#undef END_ROW
#undef OPEN_ROW

static int
dispatch(struct wn_cm_ep *ep, const struct cm_in *in)
{
	cm_action act = table[ep->state][in->type];
	enum wn_cm_state next;

	if (act == NULL)
		return -EINVAL;
	next = act(ep, in);
	if (next != KEEP && ep->state != WN_CM_CLOSED)
		set_state(ep, next);
	return 0;
}

static int
ulp_input(struct wn_cm_ep *ep, enum cm_input type)
{
	struct cm_in in = {.type = type};

	return dispatch(ep, &in);
}

/* ---------------------------------------------------------------- lower-layer upcall */

static const enum cm_input llp_input[] = {
	[WN_LLP_EV_REQUEST] = IN_REQUEST,   [WN_LLP_EV_ESTABLISHED] = IN_ESTABLISHED,
	[WN_LLP_EV_TX_READY] = IN_TX_READY, [WN_LLP_EV_REJECTED] = IN_REJECTED,
	[WN_LLP_EV_ERROR] = IN_ERROR,       [WN_LLP_EV_EOF] = IN_EOF,
	[WN_LLP_EV_CLOSED] = IN_CLOSED,     [WN_LLP_EV_MULPDU] = IN_MULPDU,
};

static void
llp_event(void *arg, struct wn_llp *l, const struct wn_llp_event *ev)
{
	struct wn_cm_ep *ep = arg;
	struct cm_in in = {.ev = ev};

	if (l != ep->llp || (unsigned int)ev->type >= RTE_DIM(llp_input) ||
	    llp_input[ev->type] == IN_NONE)
		return;
	in.type = llp_input[ev->type];
	if ((in.type == IN_EOF || in.type == IN_CLOSED) && ev->enh_unanswered)
		in.type = IN_UNANSWERED;
	(void)dispatch(ep, &in);
}

/* ---------------------------------------------------------------- API */

void
wn_cm_init(struct wn_cm *cm, const struct wn_cm_ops *ops)
{
	cm->ops = ops;
	cm->up.event = llp_event;
	cm->up.ulpdu = ops->ulpdu;
	cm->up.ulpdu_ooo = ops->ulpdu_ooo;
	cm->up.tx_release = ops->tx_release;
	cm->up.tx_room = ops->tx_room;
	cm->st = (struct wn_cm_stats){0};
	cm->now = 0;
	TAILQ_INIT(&cm->ib_qps);
	TAILQ_INIT(&cm->ib_held);
	cm->n_held = 0;
	cm->ib_next_port = WN_CM_IB_SPORT_LO;
}

int
wn_cm_connect(struct wn_cm *cm, struct wn_cm_ep *ep, struct wn_llp_proto *proto,
	      const struct wn_cm_connect *c)
{
	struct wn_llp_connect lc = {
		.local = c->local,
		.remote = c->remote,
		.caps = c->caps,
		.pd = c->pd,
		.pd_len = c->pd_len,
		.up = &cm->up,
		.up_arg = ep,
	};
	int err;

	ep->cm = cm;
	ep->active = true;
	cm->st.conns_active++;
	set_state(ep, WN_CM_CONNECTING);
	if (c->pd_len <= sizeof(ep->pd) && (c->pd_len == 0 || c->pd != NULL)) {
		/* kept for an unenhanced retry (act_unanswered) */
		ep->proto = proto;
		ep->conn = *c;
		if (c->pd_len != 0)
			memcpy(ep->pd, c->pd, c->pd_len);
		ep->conn.pd = ep->pd;
	}
	ep->llp = wn_llp_connect(proto, &lc);
	if (ep->llp == NULL) {
		err = errno != 0 ? errno : EINVAL;
		cm->st.conns_failed++;
		final(ep, WN_CM_EV_CONNECT_ERROR, -err, NULL);
		set_state(ep, WN_CM_CLOSED);
		ep_closed(ep);
		return -err;
	}
	return 0;
}

void
wn_cm_incoming(struct wn_cm *cm, struct wn_cm_ep *ep, struct wn_llp *llp)
{
	ep->cm = cm;
	ep->llp = llp;
	set_state(ep, WN_CM_AWAIT_REQ);
	cm->st.conns_passive++;
	wn_llp_set_up(llp, &cm->up, ep);
}

int
wn_cm_accept(struct wn_cm_ep *ep, const struct wn_llp_caps *caps, const uint8_t *pd,
	     uint16_t pd_len)
{
	struct cm_in in = {.type = IN_ACCEPT, .caps = caps, .pd = pd, .pd_len = pd_len};

	return dispatch(ep, &in);
}

int
wn_cm_reject(struct wn_cm_ep *ep, const uint8_t *pd, uint16_t pd_len)
{
	struct cm_in in = {.type = IN_REJECT, .pd = pd, .pd_len = pd_len};

	return dispatch(ep, &in);
}

int
wn_cm_disconnect(struct wn_cm_ep *ep)
{
	return ulp_input(ep, IN_DISCONNECT);
}

void
wn_cm_destroy(struct wn_cm_ep *ep)
{
	(void)ulp_input(ep, IN_DESTROY);
}

void
wn_cm_qp_gone(struct wn_cm_ep *ep, bool abort)
{
	(void)ulp_input(ep, abort ? IN_QP_DESTROY : IN_QP_ERROR);
}

void
wn_cm_terminated(struct wn_cm_ep *ep)
{
	(void)ulp_input(ep, IN_TERMINATE);
}

int
wn_cm_ib_start(struct wn_cm *cm, struct wn_cm_ep *ep, struct wn_llp_proto *proto,
	       const struct wn_cm_ib *ib)
{
	int c = ib_cmp(&ib->local, ib->qpn, &ib->remote, ib->rqpn);

	if (c == 0)
		return -EINVAL;
	ep->cm = cm;
	ep->ib_qp = true;
	ep->ib = *ib;
	ep->proto = proto;
	ep->ib_retry_us = WN_CM_IB_RETRY_US;
	ep->ib_initiator = c < 0;
	cm->st.ib_qps++;
	set_state(ep, WN_CM_IB_WAIT);
	/* a request that came before the QP reached RTR: taken now, or crossed */
	ib_offer_held(ep);
	if (ep->state == WN_CM_IB_WAIT && ep->ib_initiator)
		set_state(ep, ib_attempt(ep));
	return 0;
}

void
wn_cm_ib_rts(struct wn_cm_ep *ep, uint8_t timeout, uint8_t retry_cnt)
{
	uint64_t t_us;

	if (!ep->ib_qp || ep->established)
		return;
	ep->ib_rts = true;
	if (timeout == 0) {
		ep->ib_budget_us = 0; /* InfiniBand: no timeout, retries forever */
		return;
	}
	/* InfiniBand's local ACK timeout: 4.096 µs x 2^timeout (IBTA 9.7.6.1.3) */
	t_us = (4096ull << RTE_MIN(timeout, 31)) / 1000;
	ep->ib_budget_us = t_us * ((uint64_t)RTE_MIN(retry_cnt, 7) + 1);
	ep->ib_retry_us = RTE_MAX(RTE_MIN(t_us, 1000000ull), 1000ull);
}

void
wn_cm_ib_incoming(struct wn_cm *cm, struct wn_cm_ep *ep, struct wn_llp *llp)
{
	struct wn_llp_info li;

	ep->cm = cm;
	ep->llp = llp;
	ep->ib_in = true;
	ep->final_sent = true; /* no ULP of its own */
	wn_llp_info(llp, &li);
	ep->ib_from = li.remote;
	set_state(ep, WN_CM_IB_AWAIT);
	cm->st.conns_passive++;
	wn_llp_set_up(llp, &cm->up, ep);
}

/* Before RDMA mode, with a retry budget: the QP's first send work starts its clock. */
static bool
ib_budget_runs(const struct wn_cm_ep *e)
{
	return (e->state < WN_CM_RTS || e->state == WN_CM_IB_ORPHAN) && e->ib_rts &&
	       e->ib_budget_us != 0;
}

void
wn_cm_poll(struct wn_cm *cm, uint64_t now)
{
	struct wn_cm_ep *e, *next;

	cm->now = now;
	for (e = TAILQ_FIRST(&cm->ib_qps); e != NULL; e = next) {
		next = TAILQ_NEXT(e, ib_link);
		if (e->state == WN_CM_IB_BACKOFF && now >= e->ib_next)
			(void)ulp_input(e, IN_IB_TIMER);
		if (!ib_budget_runs(e))
			continue;
		if (!e->ib_busy && cm->ops->qp_sq_busy(e)) {
			e->ib_busy = true;
			e->ib_busy_since = now;
		}
		if (e->ib_busy && now - e->ib_busy_since >= e->ib_budget_us)
			(void)ulp_input(e, IN_IB_EXPIRED);
	}
}

uint64_t
wn_cm_next_timer(const struct wn_cm *cm)
{
	const struct wn_cm_ep *e;
	uint64_t t = UINT64_MAX;

	TAILQ_FOREACH(e, &cm->ib_qps, ib_link) {
		if (e->state == WN_CM_IB_BACKOFF)
			t = RTE_MIN(t, e->ib_next);
		if (ib_budget_runs(e))
			t = RTE_MIN(t, cm->now + 1000); /* its send work is looked for */
	}
	return t;
}

const char *
wn_cm_state_str(enum wn_cm_state s)
{
	static const char *const names[] = {
		[WN_CM_IDLE] = "IDLE",       [WN_CM_CONNECTING] = "CONNECTING",
		[WN_CM_AWAIT_REQ] = "AWAIT_REQUEST", [WN_CM_REQ_RCVD] = "REQUEST",
		[WN_CM_IB_WAIT] = "IB_WAIT", [WN_CM_IB_BACKOFF] = "IB_BACKOFF",
		[WN_CM_IB_CONNECTING] = "IB_CONNECTING", [WN_CM_IB_ACCEPTING] = "IB_ACCEPTING",
		[WN_CM_IB_AWAIT] = "IB_AWAIT_REQUEST", [WN_CM_IB_HELD] = "IB_HELD",
		[WN_CM_IB_ORPHAN] = "IB_ORPHAN",
		[WN_CM_RTS] = "RDMA",        [WN_CM_CLOSING] = "CLOSING",
		[WN_CM_CLOSED] = "CLOSED",
	};

	if ((unsigned int)s >= RTE_DIM(names))
		return "unknown";
	return names[s];
}

const char *
wn_cm_event_str(enum wn_cm_event_type t)
{
	static const char *const names[] = {
		[WN_CM_EV_CONNECT_REQUEST] = "CONNECT_REQUEST",
		[WN_CM_EV_ESTABLISHED] = "ESTABLISHED",
		[WN_CM_EV_REJECTED] = "REJECTED",
		[WN_CM_EV_CONNECT_ERROR] = "CONNECT_ERROR",
		[WN_CM_EV_UNREACHABLE] = "UNREACHABLE",
		[WN_CM_EV_DISCONNECTED] = "DISCONNECTED",
	};

	if ((unsigned int)t >= RTE_DIM(names) || names[t] == NULL)
		return "unknown";
	return names[t];
}
