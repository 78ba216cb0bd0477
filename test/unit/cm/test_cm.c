/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cm without EAL: the connection manager's table driven by a fake lower layer (which
 * records the calls and raises events, from inside accept() and abort() as MPA/TCP does) and
 * a fake owner (which records the ULP's events and the QP calls).
 *
 * What would break if these failed: a connection that reports two final events or none, an
 * event after the ULP destroyed its id, a QP left unflushed or started twice, a Terminate not
 * sent for an MPA error in RDMA mode, a close that forgets the stream.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wn_cm.h"

/* ---------------------------------------------------------------- fake lower layer */

struct fake_llp {
	struct wn_llp l;
	unsigned int accepts, rejects, closes, aborts, releases;
	bool accept_fails;        /* accept(): RFC 6581 negotiation fails (ERROR, reject_sent) */
	bool abort_closes;        /* abort(): CLOSED from inside, as TCP does */
	uint8_t pd[8];
	uint16_t pd_len;
	struct wn_llp_params params;
	/* connect(): what the stream was opened with */
	unsigned int connects;
	uint8_t rev;
	struct wn_llp_caps caps;
	struct wn_llp_ep remote;
	uint8_t conn_pd[8];
	uint16_t conn_pd_len;
};

static struct fake_llp *g_llp;   /* what connect() hands out */
static int g_connect_errno;      /* non-zero: connect() fails with it */

static struct fake_llp *
fl(struct wn_llp *l)
{
	return (struct fake_llp *)l;
}

static void
raise_ev(struct fake_llp *f, struct wn_llp_event *ev)
{
	if (f->l.up != NULL)
		f->l.up->event(f->l.up_arg, &f->l, ev);
}

static struct wn_llp_peer peer = {.pd = (const uint8_t *)"peer!", .pd_len = 5,
				  .enhanced = true, .ird = 3, .ord = 2};

static int
f_accept(struct wn_llp *l, const struct wn_llp_caps *caps, const uint8_t *pd, uint16_t len)
{
	struct fake_llp *f = fl(l);
	struct wn_llp_event ev = {.peer = &peer, .params = &f->params};

	(void)caps;
	f->accepts++;
	f->pd_len = len;
	memcpy(f->pd, pd, len < sizeof(f->pd) ? len : sizeof(f->pd));
	if (f->accept_fails) {
		ev.type = WN_LLP_EV_ERROR;
		ev.reject_sent = true;
		ev.err = 6;
		ev.reason = "insufficient IRD";
	} else {
		ev.type = WN_LLP_EV_ESTABLISHED;
	}
	raise_ev(f, &ev);
	return f->accept_fails ? -ECONNREFUSED : 0;
}

static int
f_reject(struct wn_llp *l, const uint8_t *pd, uint16_t len)
{
	(void)pd;
	(void)len;
	fl(l)->rejects++;
	return 0;
}

static int
f_close(struct wn_llp *l)
{
	fl(l)->closes++;
	return 0;
}

static void
f_abort(struct wn_llp *l)
{
	struct fake_llp *f = fl(l);
	struct wn_llp_event ev = {.type = WN_LLP_EV_CLOSED, .why = WN_LLP_CLOSE_RESET};

	f->aborts++;
	if (f->abort_closes)
		raise_ev(f, &ev);
}

static void
f_release(struct wn_llp *l)
{
	fl(l)->releases++;
	l->up = NULL;
}

static struct wn_llp *
f_connect(struct wn_llp_proto *p, const struct wn_llp_connect *c)
{
	(void)p;
	if (g_connect_errno != 0) {
		errno = g_connect_errno;
		return NULL;
	}
	wn_llp_set_up(&g_llp->l, c->up, c->up_arg);
	g_llp->l.active = true;
	g_llp->connects++;
	g_llp->rev = c->rev;
	g_llp->caps = c->caps;
	g_llp->remote = c->remote;
	g_llp->conn_pd_len = c->pd_len;
	memcpy(g_llp->conn_pd, c->pd, c->pd_len < 8 ? c->pd_len : 8);
	return &g_llp->l;
}

static const struct wn_llp_ops fake_ops = {
	.name = "fake",
	.connect = f_connect,
	.accept = f_accept,
	.reject = f_reject,
	.close = f_close,
	.abort = f_abort,
	.release = f_release,
};

static struct wn_llp_proto fake_proto = {.ops = &fake_ops};

/* ---------------------------------------------------------------- fake owner */

struct owner {
	struct wn_cm cm;
	struct wn_cm_ep ep;
	unsigned int events[WN_CM_EV_DISCONNECTED + 1];
	unsigned int finals;        /* REJECTED, CONNECT_ERROR, UNREACHABLE, DISCONNECTED */
	struct wn_cm_event last;
	uint8_t last_pd[8];
	unsigned int qp_starts, rtrs, terms, detaches, mulpdus, closed;
	uint8_t rtr_recv, rtr_sent;
	int qp_start_ret, qp_term_ret, request_ret;
	uint8_t term_layer, term_etype, term_code;
	bool destroyed;             /* the ULP destroyed its id: nothing may be reported */
};

static struct owner *g_own;

static int
o_event(struct wn_cm_ep *ep, const struct wn_cm_event *ev)
{
	struct owner *o = g_own;

	assert_ptr_equal(ep, &o->ep);
	assert_false(o->destroyed);
	o->events[ev->type]++;
	o->last = *ev;
	if (ev->pd_len > 0)
		memcpy(o->last_pd, ev->pd, ev->pd_len < 8 ? ev->pd_len : 8);
	if (ev->type >= WN_CM_EV_REJECTED)
		o->finals++;
	assert_true(o->finals <= 1); /* exactly one final event, ever */
	return ev->type == WN_CM_EV_CONNECT_REQUEST ? o->request_ret : 0;
}

static int
o_qp_start(struct wn_cm_ep *ep, struct wn_llp *llp, const struct wn_llp_params *p,
	   uint8_t rtr_recv)
{
	(void)ep;
	(void)p;
	assert_non_null(llp);
	g_own->qp_starts++;
	g_own->rtr_recv = rtr_recv;
	return g_own->qp_start_ret;
}

static int
o_qp_rtr(struct wn_cm_ep *ep, uint8_t rtr)
{
	(void)ep;
	g_own->rtrs++;
	g_own->rtr_sent = rtr;
	return 0;
}

static int
o_qp_terminate(struct wn_cm_ep *ep, uint8_t layer, uint8_t etype, uint8_t code)
{
	(void)ep;
	g_own->terms++;
	g_own->term_layer = layer;
	g_own->term_etype = etype;
	g_own->term_code = code;
	return g_own->qp_term_ret;
}

static void
o_qp_detach(struct wn_cm_ep *ep)
{
	(void)ep;
	g_own->detaches++;
}

static void
o_qp_mulpdu(struct wn_cm_ep *ep, uint32_t m)
{
	(void)ep;
	(void)m;
	g_own->mulpdus++;
}

static int
o_ulpdu(void *ep, const uint8_t *u, size_t len)
{
	(void)ep;
	(void)u;
	(void)len;
	return 0;
}

static void
o_tx_release(void *ep, uint32_t wqe)
{
	(void)ep;
	(void)wqe;
}

static void
o_closed(struct wn_cm_ep *ep)
{
	(void)ep;
	g_own->closed++;
	assert_int_equal(g_own->closed, 1);
}

static const struct wn_cm_ops owner_ops = {
	.event = o_event,
	.qp_start = o_qp_start,
	.qp_rtr = o_qp_rtr,
	.qp_terminate = o_qp_terminate,
	.qp_detach = o_qp_detach,
	.qp_mulpdu = o_qp_mulpdu,
	.ulpdu = o_ulpdu,
	.tx_release = o_tx_release,
	.closed = o_closed,
};

/* ---------------------------------------------------------------- set-up helpers */

static struct owner own;
static struct fake_llp llp;

static int
setup(void **state)
{
	(void)state;
	memset(&own, 0, sizeof(own));
	memset(&llp, 0, sizeof(llp));
	llp.l.ops = &fake_ops;
	llp.abort_closes = true;
	llp.params.ird = 4;
	llp.params.ord = 2;
	llp.params.mulpdu = 1448;
	g_own = &own;
	g_llp = &llp;
	g_connect_errno = 0;
	wn_cm_init(&own.cm, &owner_ops);
	return 0;
}

static void
llp_ev(enum wn_llp_event_type type)
{
	struct wn_llp_event ev = {.type = type, .peer = &peer, .params = &llp.params};

	raise_ev(&llp, &ev);
}

static void
llp_closed(enum wn_llp_close why)
{
	struct wn_llp_event ev = {.type = WN_LLP_EV_CLOSED, .why = why};

	raise_ev(&llp, &ev);
}

static void
active_connect(void)
{
	struct wn_cm_connect c = {.caps = {.ird = 4, .ord = 2}};

	assert_int_equal(wn_cm_connect(&own.cm, &own.ep, &fake_proto, &c), 0);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CONNECTING);
}

static void
active_rts(void)
{
	active_connect();
	llp_ev(WN_LLP_EV_ESTABLISHED);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_RTS);
}

static void
passive_request(void)
{
	wn_cm_incoming(&own.cm, &own.ep, &llp.l);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_AWAIT_REQ);
	llp_ev(WN_LLP_EV_REQUEST);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_REQ_RCVD);
}

/* The stream's end, and what must hold afterwards. */
static void
end_closed(void)
{
	llp_closed(WN_LLP_CLOSE_NORMAL);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
	assert_int_equal(own.closed, 1);
	assert_int_equal(llp.releases, 1);
	assert_null(wn_cm_llp(&own.ep));
}

/* ---------------------------------------------------------------- tests */

static void
test_active_lifecycle(void **state)
{
	(void)state;
	llp.params.p2p = true;
	llp.params.rtr = WN_LLP_RTR_WRITE;
	active_rts();
	assert_int_equal(own.qp_starts, 1);
	assert_int_equal(own.rtr_recv, 0); /* the initiator sends the RTR, absorbs none */
	assert_int_equal(own.events[WN_CM_EV_ESTABLISHED], 1);
	assert_int_equal(own.last.ird, 4);
	assert_int_equal(own.last.ord, 2);
	assert_int_equal(own.last.peer_ird, 3); /* what the Reply announced */
	assert_int_equal(own.last.pd_len, 5);   /* the Reply's Private Data */
	llp_ev(WN_LLP_EV_TX_READY);
	assert_int_equal(own.rtrs, 1);
	assert_int_equal(own.rtr_sent, WN_LLP_RTR_WRITE);
	llp_ev(WN_LLP_EV_TX_READY); /* once */
	assert_int_equal(own.rtrs, 1);
	assert_int_equal(wn_cm_disconnect(&own.ep), 0);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSING);
	assert_int_equal(own.events[WN_CM_EV_DISCONNECTED], 1);
	assert_int_equal(own.last.status, 0);
	assert_int_equal(llp.closes, 1);
	assert_true(own.detaches >= 1);
	end_closed();
	assert_int_equal(own.finals, 1);
	assert_int_equal(own.cm.st.conns_established, 1);
	assert_int_equal(wn_cm_disconnect(&own.ep), -EINVAL); /* nothing left to disconnect */
}

static void
test_passive_accept(void **state)
{
	(void)state;
	llp.params.p2p = true;
	llp.params.rtr = WN_LLP_RTR_SEND | WN_LLP_RTR_READ;
	passive_request();
	assert_int_equal(own.events[WN_CM_EV_CONNECT_REQUEST], 1);
	assert_int_equal(own.last.peer_ird, 3);
	assert_int_equal(own.last.peer_ord, 2);
	assert_memory_equal(own.last_pd, "peer!", 5);
	assert_int_equal(wn_cm_accept(&own.ep, &(struct wn_llp_caps){4, 4},
				      (const uint8_t *)"ok", 2), 0);
	/* ESTABLISHED came from inside the accept and moved the endpoint on */
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_RTS);
	assert_int_equal(llp.accepts, 1);
	assert_int_equal(llp.pd_len, 2);
	assert_int_equal(own.rtr_recv, WN_LLP_RTR_SEND | WN_LLP_RTR_READ); /* absorbed */
	assert_int_equal(own.events[WN_CM_EV_ESTABLISHED], 1);
	assert_int_equal(own.last.pd_len, 0); /* the ULP saw the request's data already */
	llp_ev(WN_LLP_EV_TX_READY);
	assert_int_equal(own.rtrs, 0); /* only the initiator sends an RTR */
	llp_ev(WN_LLP_EV_EOF);         /* the peer closed */
	assert_int_equal(own.events[WN_CM_EV_DISCONNECTED], 1);
	assert_int_equal(own.last.status, 0);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSING);
	end_closed();
	/* a second accept has nothing to accept */
	assert_int_equal(wn_cm_accept(&own.ep, NULL, NULL, 0), -EINVAL);
}

static void
test_passive_reject(void **state)
{
	(void)state;
	passive_request();
	assert_int_equal(wn_cm_reject(&own.ep, (const uint8_t *)"no", 2), 0);
	assert_int_equal(llp.rejects, 1);
	assert_int_equal(llp.closes, 1);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSING);
	end_closed();
	assert_int_equal(own.finals, 0); /* the ULP finished the id itself */
	assert_int_equal(own.cm.st.conns_rejected, 1);
}

static void
test_passive_negotiation_fails(void **state)
{
	(void)state;
	llp.accept_fails = true;
	passive_request();
	assert_int_equal(wn_cm_accept(&own.ep, NULL, NULL, 0), 0);
	/* RFC 6581 §9.1: the Reject names what we need; the ULP's id gets its final event */
	assert_int_equal(own.events[WN_CM_EV_DISCONNECTED], 1);
	assert_int_equal(own.last.status, -ECONNREFUSED);
	assert_int_equal(own.qp_starts, 0);
	assert_int_equal(llp.closes, 1);
	assert_int_equal(llp.aborts, 0);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSING);
	end_closed();
}

static void
test_rejected_by_peer(void **state)
{
	(void)state;
	active_connect();
	llp_ev(WN_LLP_EV_REJECTED);
	assert_int_equal(own.events[WN_CM_EV_REJECTED], 1);
	assert_int_equal(own.last.status, -ECONNREFUSED);
	assert_int_equal(own.last.pd_len, 5);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSING);
	end_closed();
	assert_int_equal(own.finals, 1);
}

static void
test_insufficient_ird(void **state)
{
	struct wn_llp_event ev = {.type = WN_LLP_EV_ERROR, .err = 6, .insufficient_ird = true,
				  .peer = &peer, .reason = "insufficient IRD"};

	(void)state;
	active_connect();
	raise_ev(&llp, &ev);
	assert_int_equal(own.events[WN_CM_EV_REJECTED], 1);
	assert_int_equal(own.last.status, -ECONNREFUSED);
	assert_int_equal(llp.closes, 1);
	end_closed();
}

/* A connect that never got there: how the stream ended decides the final event. */
static void
test_connect_failures(void **state)
{
	static const struct {
		enum wn_llp_close why;
		enum wn_cm_event_type ev;
		int32_t status;
	} rows[] = {
		{WN_LLP_CLOSE_REFUSED, WN_CM_EV_REJECTED, -ECONNREFUSED},
		{WN_LLP_CLOSE_TIMEOUT, WN_CM_EV_UNREACHABLE, -ETIMEDOUT},
		{WN_LLP_CLOSE_RESET, WN_CM_EV_CONNECT_ERROR, -ECONNRESET},
		{WN_LLP_CLOSE_NORMAL, WN_CM_EV_CONNECT_ERROR, -ECONNRESET},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		setup(state);
		active_connect();
		llp_closed(rows[i].why);
		assert_int_equal(own.events[rows[i].ev], 1);
		assert_int_equal(own.last.status, rows[i].status);
		assert_int_equal(own.finals, 1);
		assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
		assert_int_equal(own.cm.st.conns_failed, 1);
	}
	/* the lower layer refuses the connect itself */
	setup(state);
	g_connect_errno = ENETUNREACH;
	assert_int_equal(wn_cm_connect(&own.cm, &own.ep, &fake_proto,
				       &(struct wn_cm_connect){0}), -ENETUNREACH);
	assert_int_equal(own.events[WN_CM_EV_CONNECT_ERROR], 1);
	assert_int_equal(own.last.status, -ENETUNREACH);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
	assert_int_equal(own.closed, 1);
}

/*
 * RFC 6581 §10: an unenhanced responder closes the stream on our enhanced request; the
 * endpoint connects once more, unenhanced (rev 1), with the same remote, IRD/ORD and Private
 * Data, still CONNECTING and silent; the old stream is released (aborted first if it only
 * reached EOF) and its late events ignored; the retry's outcome is the connect's.
 */
static struct fake_llp llp2;

static void
retry_setup(void)
{
	memset(&llp2, 0, sizeof(llp2));
	llp2.l.ops = &fake_ops;
	llp2.abort_closes = true;
	llp2.params = llp.params;
	llp2.params.rev = 1;
}

static void
connect_pd(void)
{
	struct wn_cm_connect c = {.caps = {.ird = 4, .ord = 2}, .pd = (const uint8_t *)"hello",
				  .pd_len = 5, .remote = {.port = 7471}};

	assert_int_equal(wn_cm_connect(&own.cm, &own.ep, &fake_proto, &c), 0);
	assert_int_equal(llp.connects, 1);
	assert_int_equal(llp.rev, 0); /* the instance's policy (Rev 2) first */
}

static void
unanswered(struct fake_llp *f, enum wn_llp_event_type type, enum wn_llp_close why)
{
	struct wn_llp_event ev = {.type = type, .why = why, .enh_unanswered = true};

	raise_ev(f, &ev);
}

static void
test_unenhanced_retry(void **state)
{
	for (int eof = 0; eof < 2; eof++) {
		setup(state);
		retry_setup();
		connect_pd();
		g_llp = &llp2; /* what the retry's connect hands out */
		if (eof)
			unanswered(&llp, WN_LLP_EV_EOF, WN_LLP_CLOSE_NORMAL);
		else
			unanswered(&llp, WN_LLP_EV_CLOSED, WN_LLP_CLOSE_RESET);
		assert_int_equal(wn_cm_state(&own.ep), WN_CM_CONNECTING);
		assert_int_equal(own.finals, 0);
		assert_int_equal(own.closed, 0);
		assert_int_equal(own.cm.st.conns_unenhanced, 1);
		assert_int_equal(own.cm.st.conns_failed, 0);
		assert_int_equal(llp.releases, 1);
		assert_int_equal(llp.aborts, eof ? 1u : 0u); /* a half-open stream is reset */
		assert_ptr_equal(wn_cm_llp(&own.ep), &llp2.l);
		assert_int_equal(llp2.connects, 1);
		assert_int_equal(llp2.rev, 1);
		assert_int_equal(llp2.caps.ird, 4);
		assert_int_equal(llp2.caps.ord, 2);
		assert_int_equal(llp2.remote.port, 7471);
		assert_int_equal(llp2.conn_pd_len, 5);
		assert_memory_equal(llp2.conn_pd, "hello", 5);
		/* the old stream's late end is not ours */
		llp_closed(WN_LLP_CLOSE_RESET);
		assert_int_equal(own.finals, 0);
		assert_int_equal(wn_cm_state(&own.ep), WN_CM_CONNECTING);
		/* the unenhanced Reply: RDMA mode as usual */
		raise_ev(&llp2, &(struct wn_llp_event){.type = WN_LLP_EV_ESTABLISHED, .peer = &peer,
						       .params = &llp2.params});
		assert_int_equal(wn_cm_state(&own.ep), WN_CM_RTS);
		assert_int_equal(own.events[WN_CM_EV_ESTABLISHED], 1);
		assert_int_equal(own.qp_starts, 1);
		assert_int_equal(own.cm.st.conns_established, 1);
	}

	/* the retry ends unanswered too (it cannot: it is unenhanced): the connect's end */
	setup(state);
	retry_setup();
	connect_pd();
	g_llp = &llp2;
	unanswered(&llp, WN_LLP_EV_CLOSED, WN_LLP_CLOSE_RESET);
	unanswered(&llp2, WN_LLP_EV_CLOSED, WN_LLP_CLOSE_RESET);
	assert_int_equal(own.events[WN_CM_EV_CONNECT_ERROR], 1);
	assert_int_equal(own.last.status, -ECONNRESET);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
	assert_int_equal(own.closed, 1);
	assert_int_equal(llp2.releases, 1);
	assert_int_equal(own.cm.st.conns_unenhanced, 1);
	assert_int_equal(own.cm.st.conns_failed, 1);

	/* the retry refused by the peer's TCP: REJECTED, as any refused connect */
	setup(state);
	retry_setup();
	connect_pd();
	g_llp = &llp2;
	unanswered(&llp, WN_LLP_EV_CLOSED, WN_LLP_CLOSE_RESET);
	raise_ev(&llp2, &(struct wn_llp_event){.type = WN_LLP_EV_CLOSED,
					       .why = WN_LLP_CLOSE_REFUSED});
	assert_int_equal(own.events[WN_CM_EV_REJECTED], 1);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);

	/* the lower layer cannot open the retry: CONNECT_ERROR with its errno, CLOSED */
	setup(state);
	retry_setup();
	connect_pd();
	g_connect_errno = EADDRINUSE;
	unanswered(&llp, WN_LLP_EV_CLOSED, WN_LLP_CLOSE_RESET);
	assert_int_equal(own.events[WN_CM_EV_CONNECT_ERROR], 1);
	assert_int_equal(own.last.status, -EADDRINUSE);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
	assert_int_equal(own.closed, 1);
	assert_int_equal(llp.releases, 1);

	/* the ULP gave up first (CLOSING): the unanswered end is just the end, no retry */
	setup(state);
	connect_pd();
	assert_int_equal(wn_cm_disconnect(&own.ep), 0);
	assert_int_equal(own.events[WN_CM_EV_CONNECT_ERROR], 1);
	unanswered(&llp, WN_LLP_EV_CLOSED, WN_LLP_CLOSE_RESET);
	assert_int_equal(llp.connects, 1);
	assert_int_equal(own.cm.st.conns_unenhanced, 0);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
	assert_int_equal(own.closed, 1);

	/* Private Data too long to keep: no retry, the connect's end */
	setup(state);
	{
		static uint8_t big[WN_CM_PD_MAX + 1];
		struct wn_cm_connect c = {.pd = big, .pd_len = sizeof(big)};

		assert_int_equal(wn_cm_connect(&own.cm, &own.ep, &fake_proto, &c), 0);
	}
	unanswered(&llp, WN_LLP_EV_CLOSED, WN_LLP_CLOSE_RESET);
	assert_int_equal(own.events[WN_CM_EV_CONNECT_ERROR], 1);
	assert_int_equal(llp.connects, 1);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
}

static void
test_terminate_on_llp_error(void **state)
{
	struct wn_llp_event ev = {.type = WN_LLP_EV_ERROR, .err = 2, .crc = true,
				  .send_terminate = true, .term_layer = 2, .term_etype = 0,
				  .reason = "CRC error"};

	(void)state;
	active_rts();
	raise_ev(&llp, &ev);
	/* RFC 5044 §8: reported with a Terminate (Layer LLP, EType MPA, code 2) first */
	assert_int_equal(own.terms, 1);
	assert_int_equal(own.term_layer, 2);
	assert_int_equal(own.term_etype, 0);
	assert_int_equal(own.term_code, 2);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_RTS);
	assert_int_equal(llp.aborts, 0);
	wn_cm_terminated(&own.ep); /* the Terminate went out: close behind it */
	assert_int_equal(llp.closes, 1);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSING);
	llp_closed(WN_LLP_CLOSE_NORMAL);
	assert_int_equal(own.events[WN_CM_EV_DISCONNECTED], 1);

	/* no engine to send it: the stream is aborted, the ULP told once */
	setup(state);
	active_rts();
	own.qp_term_ret = -ENODEV;
	raise_ev(&llp, &ev);
	assert_int_equal(llp.aborts, 1);
	assert_int_equal(own.events[WN_CM_EV_DISCONNECTED], 1);
	assert_int_equal(own.last.status, -ECONNRESET);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
	assert_int_equal(own.cm.st.conns_aborted, 1);
}

static void
test_setup_errors_abort(void **state)
{
	struct wn_llp_event ev = {.type = WN_LLP_EV_ERROR, .err = 4, .reason = "bad frame"};

	(void)state;
	/* an initiator's malformed Reply: CONNECT_ERROR, reset */
	active_connect();
	raise_ev(&llp, &ev);
	assert_int_equal(own.events[WN_CM_EV_CONNECT_ERROR], 1);
	assert_int_equal(own.last.status, -EPROTO);
	assert_int_equal(llp.aborts, 1);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
	/* a responder's startup timeout while the ULP decides */
	setup(state);
	passive_request();
	raise_ev(&llp, &ev);
	assert_int_equal(own.events[WN_CM_EV_DISCONNECTED], 1);
	assert_int_equal(own.last.status, -EPROTO);
	/* the QP cannot enter RDMA mode (none bound) */
	setup(state);
	own.qp_start_ret = -ENODEV;
	active_connect();
	llp_ev(WN_LLP_EV_ESTABLISHED);
	assert_int_equal(own.events[WN_CM_EV_ESTABLISHED], 0);
	assert_int_equal(own.events[WN_CM_EV_CONNECT_ERROR], 1);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
	/* the owner could not report the request (its table is full) */
	setup(state);
	own.request_ret = -ENOSPC;
	wn_cm_incoming(&own.cm, &own.ep, &llp.l);
	llp_ev(WN_LLP_EV_REQUEST);
	assert_int_equal(llp.aborts, 1);
	assert_int_equal(own.finals, 0);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
}

/* The ULP destroys its id in every state: no event follows; aborted unless already closing. */
static void
test_destroy_everywhere(void **state)
{
	for (int st = WN_CM_CONNECTING; st <= WN_CM_CLOSED; st++) {
		if ((st >= WN_CM_IB_WAIT && st <= WN_CM_IB_HELD) || st == WN_CM_IB_ORPHAN)
			continue; /* InfiniBand-style endpoints: test_cm_ib */
		setup(state);
		switch (st) {
		case WN_CM_CONNECTING:
			active_connect();
			break;
		case WN_CM_AWAIT_REQ:
			wn_cm_incoming(&own.cm, &own.ep, &llp.l);
			break;
		case WN_CM_REQ_RCVD:
			passive_request();
			break;
		case WN_CM_RTS:
			active_rts();
			break;
		case WN_CM_CLOSING:
			active_rts();
			assert_int_equal(wn_cm_disconnect(&own.ep), 0);
			break;
		default:
			active_rts();
			llp_closed(WN_LLP_CLOSE_NORMAL);
			break;
		}
		assert_int_equal(wn_cm_state(&own.ep), st);
		unsigned int finals = own.finals;

		own.destroyed = true; /* o_event fails the test if anything is reported now */
		wn_cm_destroy(&own.ep);
		assert_int_equal(own.finals, finals);
		assert_int_equal(llp.aborts, st < WN_CM_CLOSING ? 1u : 0u);
		if (st == WN_CM_CLOSING)
			llp_closed(WN_LLP_CLOSE_NORMAL); /* the close finishes, silently */
		assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
		assert_int_equal(own.closed, 1);
	}
}

static void
test_qp_gone(void **state)
{
	(void)state;
	/* the ULP moved the QP to Error: DISCONNECTED, graceful close */
	active_rts();
	wn_cm_qp_gone(&own.ep, false);
	assert_int_equal(own.events[WN_CM_EV_DISCONNECTED], 1);
	assert_int_equal(own.last.status, 0);
	assert_int_equal(llp.closes, 1);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSING);
	/* the ULP destroyed the QP in RTS: a socket's close, what is queued still goes, then
	 * the FIN; the id (still there) hears of the end when the stream has closed */
	setup(state);
	active_rts();
	wn_cm_qp_gone(&own.ep, true);
	assert_int_equal(llp.aborts, 0);
	assert_int_equal(llp.closes, 1);
	assert_int_equal(own.events[WN_CM_EV_DISCONNECTED], 0);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSING);
	llp_closed(WN_LLP_CLOSE_NORMAL);
	assert_int_equal(own.events[WN_CM_EV_DISCONNECTED], 1);
	assert_int_equal(own.last.status, 0);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
	/* after rdma_disconnect (CLOSING) too: the graceful close goes on */
	setup(state);
	active_rts();
	assert_int_equal(wn_cm_disconnect(&own.ep), 0);
	wn_cm_qp_gone(&own.ep, true);
	assert_int_equal(llp.aborts, 0);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSING);
	/* before RTS (the request unanswered): reset */
	setup(state);
	active_connect();
	wn_cm_qp_gone(&own.ep, true);
	assert_int_equal(llp.aborts, 1);
	assert_int_equal(own.events[WN_CM_EV_CONNECT_ERROR], 1);
	assert_int_equal(own.last.status, -ECONNRESET);
	assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
}

static void
test_invalid_requests(void **state)
{
	(void)state;
	active_connect();
	assert_int_equal(wn_cm_accept(&own.ep, NULL, NULL, 0), -EINVAL);
	assert_int_equal(wn_cm_reject(&own.ep, NULL, 0), -EINVAL);
	llp_ev(WN_LLP_EV_REQUEST); /* a request on the active side: ignored */
	assert_int_equal(own.events[WN_CM_EV_CONNECT_REQUEST], 0);
	llp_ev(WN_LLP_EV_ESTABLISHED);
	assert_int_equal(wn_cm_accept(&own.ep, NULL, NULL, 0), -EINVAL);
	llp_ev(WN_LLP_EV_ESTABLISHED); /* repeated: not a second start */
	assert_int_equal(own.qp_starts, 1);
	llp_ev(WN_LLP_EV_MULPDU);
	assert_int_equal(own.mulpdus, 1);
}

/*
 * Random walks through the table: whatever arrives in whatever order, there is at most one
 * final event, none after a destroy, the QP is started at most once, CLOSED is reported once
 * and only once the stream ended, and a stream that ended is released.
 */
static void
test_random_walks(void **state)
{
	uint32_t seed = 12345;

	for (int walk = 0; walk < 20000; walk++) {
		setup(state);
		llp.abort_closes = (walk & 1) != 0;
		llp.accept_fails = (walk & 2) != 0;
		llp.params.p2p = (walk & 4) != 0;
		llp.params.rtr = WN_LLP_RTR_SEND;
		if (walk & 8)
			active_connect();
		else
			wn_cm_incoming(&own.cm, &own.ep, &llp.l);
		for (int step = 0; step < 12 && wn_cm_state(&own.ep) != WN_CM_CLOSED; step++) {
			struct wn_llp_event ev = {.peer = &peer, .params = &llp.params,
						  .reason = "random"};

			seed = seed * 1103515245u + 12345u;
			switch ((seed >> 16) % 14) {
			case 0: (void)wn_cm_accept(&own.ep, NULL, NULL, 0); break;
			case 1: (void)wn_cm_reject(&own.ep, NULL, 0); break;
			case 2: (void)wn_cm_disconnect(&own.ep); break;
			case 3: own.destroyed = true; wn_cm_destroy(&own.ep); break;
			case 4: wn_cm_qp_gone(&own.ep, (seed >> 8) & 1); break;
			case 5: wn_cm_terminated(&own.ep); break;
			case 6: ev.type = WN_LLP_EV_REQUEST; raise_ev(&llp, &ev); break;
			case 7: ev.type = WN_LLP_EV_ESTABLISHED; raise_ev(&llp, &ev); break;
			case 8: ev.type = WN_LLP_EV_TX_READY; raise_ev(&llp, &ev); break;
			case 9: ev.type = WN_LLP_EV_REJECTED; raise_ev(&llp, &ev); break;
			case 10:
				ev.type = WN_LLP_EV_ERROR;
				ev.send_terminate = (seed >> 9) & 1;
				ev.reject_sent = (seed >> 10) & 1;
				raise_ev(&llp, &ev);
				break;
			case 11: ev.type = WN_LLP_EV_EOF; raise_ev(&llp, &ev); break;
			case 12: llp_closed((enum wn_llp_close)((seed >> 8) & 3)); break;
			default: ev.type = WN_LLP_EV_MULPDU; raise_ev(&llp, &ev); break;
			}
			assert_true(own.qp_starts <= 1);
		}
		if (wn_cm_state(&own.ep) != WN_CM_CLOSED)
			llp_closed(WN_LLP_CLOSE_RESET); /* the stream ends sometime */
		assert_int_equal(wn_cm_state(&own.ep), WN_CM_CLOSED);
		assert_int_equal(own.closed, 1);
		assert_int_equal(llp.releases, 1);
		assert_true(own.finals <= 1);
		/* a connect the ULP did not destroy ends with exactly one event */
		if (!own.destroyed && (walk & 8))
			assert_int_equal(own.finals, 1);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_active_lifecycle, setup),
		cmocka_unit_test_setup(test_passive_accept, setup),
		cmocka_unit_test_setup(test_passive_reject, setup),
		cmocka_unit_test_setup(test_passive_negotiation_fails, setup),
		cmocka_unit_test_setup(test_rejected_by_peer, setup),
		cmocka_unit_test_setup(test_insufficient_ird, setup),
		cmocka_unit_test_setup(test_connect_failures, setup),
		cmocka_unit_test_setup(test_unenhanced_retry, setup),
		cmocka_unit_test_setup(test_terminate_on_llp_error, setup),
		cmocka_unit_test_setup(test_setup_errors_abort, setup),
		cmocka_unit_test_setup(test_destroy_everywhere, setup),
		cmocka_unit_test_setup(test_qp_gone, setup),
		cmocka_unit_test_setup(test_invalid_requests, setup),
		cmocka_unit_test_setup(test_random_walks, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
