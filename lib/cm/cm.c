/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The connection manager's state machine (wn_cm.h): one table, state × input → action.
 *
 * An action returns the endpoint's next state, or KEEP when it called into the lower layer
 * or the owner and an event raised from inside that call (dispatched through the same table)
 * may already have moved the endpoint on. A cell left empty means the input is not valid in
 * that state: ULP requests get -EINVAL, lower-layer events are ignored.
 */
#include <errno.h>
#include <stddef.h>
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
	IN_N
};

/* One input with what it carries. */
struct cm_in {
	enum cm_input type;
	const struct wn_llp_event *ev;  /* lower-layer inputs */
	const struct wn_llp_caps *caps; /* IN_ACCEPT */
	const uint8_t *pd;              /* IN_ACCEPT, IN_REJECT */
	uint16_t pd_len;
};

/* "the state an input left behind" */
#define KEEP WN_CM_NSTATES

typedef enum wn_cm_state (*cm_action)(struct wn_cm_ep *ep, const struct cm_in *in);

/* ---------------------------------------------------------------- helpers */

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
		ep->state = WN_CM_CLOSED; /* never started */
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

static enum wn_cm_state
act_eof(struct wn_cm_ep *ep, const struct cm_in *in)
{
	(void)in;
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
	ep->state = WN_CM_CLOSED;
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
	ep->state = WN_CM_CLOSED;
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

/* ---------------------------------------------------------------- the table */

/* What every state before CLOSED does with the end of the stream and the ULP going away. */
#define OPEN_ROW                                                                                 \
	[IN_DISCONNECT] = act_disconnect, [IN_DESTROY] = act_destroy,                              \
	[IN_QP_ERROR] = act_qp_gone, [IN_QP_DESTROY] = act_qp_gone, [IN_ERROR] = act_error,        \
	[IN_EOF] = act_eof, [IN_CLOSED] = act_closed

/* The request is answered (or the ULP is gone): an unanswered end is just the end. */
#define END_ROW OPEN_ROW, [IN_UNANSWERED] = act_end

static const cm_action table[WN_CM_NSTATES][IN_N] = {
	[WN_CM_IDLE] = { [IN_DESTROY] = act_destroy },
	[WN_CM_CONNECTING] = { OPEN_ROW, [IN_ESTABLISHED] = act_established,
			       [IN_REJECTED] = act_rejected, [IN_UNANSWERED] = act_unanswered },
	[WN_CM_AWAIT_REQ] = { END_ROW, [IN_REQUEST] = act_request },
	[WN_CM_REQ_RCVD] = { END_ROW, [IN_ACCEPT] = act_accept, [IN_REJECT] = act_reject,
			     [IN_ESTABLISHED] = act_established },
	[WN_CM_RTS] = { END_ROW, [IN_TX_READY] = act_tx_ready, [IN_TERMINATE] = act_terminated,
			[IN_MULPDU] = act_mulpdu },
	[WN_CM_CLOSING] = { END_ROW, [IN_MULPDU] = act_mulpdu },
	[WN_CM_CLOSED] = { [IN_DESTROY] = act_keep },
};

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
		ep->state = next;
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
	cm->st = (struct wn_cm_stats){0};
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
	ep->state = WN_CM_CONNECTING;
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
		ep->state = WN_CM_CLOSED;
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
	ep->state = WN_CM_AWAIT_REQ;
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

const char *
wn_cm_state_str(enum wn_cm_state s)
{
	static const char *const names[] = {
		[WN_CM_IDLE] = "IDLE",       [WN_CM_CONNECTING] = "CONNECTING",
		[WN_CM_AWAIT_REQ] = "AWAIT_REQUEST", [WN_CM_REQ_RCVD] = "REQUEST",
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
