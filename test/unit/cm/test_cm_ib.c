/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/cm's InfiniBand-style connections without EAL: QP endpoints (wn_cm_ib_start) and the
 * listener's endpoints (wn_cm_ib_incoming) driven by a fake lower layer with many streams and
 * a fake owner, and the Private Data codec.
 *
 * What would break if these failed: both ends connecting (or neither), a request bound to the
 * wrong QP, a request that came before its QP reached RTR lost, crossed connects that leave
 * two connections or none, a QP without its peer that never fails (or fails without send
 * work, or before its budget), a stream leaked or used after its release.
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

#define NSTREAMS 64

struct fstream {
	struct wn_llp l;
	bool used;
	unsigned int accepts, rejects, closes, aborts, releases;
	struct wn_cm_ib_pd accept_pd, reject_pd; /* decoded from accept()/reject() */
	struct wn_cm_ib_pd conn_pd;              /* connect(): the request */
	struct wn_llp_ep local, remote;
	struct wn_llp_caps caps;
};

static struct fstream streams[NSTREAMS];
static bool accept_sync = true; /* accept(): ESTABLISHED from inside (as MPA/TCP) */
static int connect_errno;       /* non-zero: connect() fails with it */
static unsigned int connects;

static struct fstream *
fs(struct wn_llp *l)
{
	return (struct fstream *)l;
}

static struct wn_llp_params params = {.ird = 4, .ord = 4, .mulpdu = 1448};

static void
raise_ev(struct fstream *f, const struct wn_llp_event *ev)
{
	assert_int_equal(f->releases, 0); /* nothing after release */
	if (f->l.up != NULL)
		f->l.up->event(f->l.up_arg, &f->l, ev);
}

static int
f_accept(struct wn_llp *l, const struct wn_llp_caps *caps, const uint8_t *pd, uint16_t len)
{
	struct fstream *f = fs(l);
	struct wn_llp_event ev = {.type = WN_LLP_EV_ESTABLISHED, .params = &params};

	assert_int_equal(f->releases, 0);
	f->accepts++;
	f->caps = *caps;
	assert_int_equal(wn_cm_ib_pd_decode(pd, len, &f->accept_pd), 0);
	if (accept_sync)
		raise_ev(f, &ev);
	return 0;
}

static int
f_reject(struct wn_llp *l, const uint8_t *pd, uint16_t len)
{
	struct fstream *f = fs(l);

	assert_int_equal(f->releases, 0);
	f->rejects++;
	assert_int_equal(wn_cm_ib_pd_decode(pd, len, &f->reject_pd), 0);
	return 0;
}

static int
f_close(struct wn_llp *l)
{
	fs(l)->closes++;
	return 0;
}

static void
f_abort(struct wn_llp *l)
{
	struct fstream *f = fs(l);
	struct wn_llp_event ev = {.type = WN_LLP_EV_CLOSED, .why = WN_LLP_CLOSE_RESET};

	assert_int_equal(f->releases, 0);
	f->aborts++;
	raise_ev(f, &ev); /* CLOSED from inside, as TCP's abort */
}

static void
f_release(struct wn_llp *l)
{
	fs(l)->releases++;
	assert_int_equal(fs(l)->releases, 1);
	l->up = NULL;
}

static void
f_info(const struct wn_llp *l, struct wn_llp_info *in)
{
	memset(in, 0, sizeof(*in));
	in->local = ((const struct fstream *)l)->local;
	in->remote = ((const struct fstream *)l)->remote;
}

static struct fstream *
stream_new(void)
{
	for (int i = 0; i < NSTREAMS; i++)
		if (!streams[i].used) {
			memset(&streams[i], 0, sizeof(streams[i]));
			streams[i].used = true;
			return &streams[i];
		}
	fail_msg("out of fake streams");
	return NULL;
}

static const struct wn_llp_ops fake_ops;

static struct wn_llp *
f_connect(struct wn_llp_proto *p, const struct wn_llp_connect *c)
{
	struct fstream *f;

	(void)p;
	if (connect_errno != 0) {
		errno = connect_errno;
		return NULL;
	}
	f = stream_new();
	f->l.ops = &fake_ops;
	f->l.active = true;
	f->local = c->local;
	f->remote = c->remote;
	f->caps = c->caps;
	assert_int_equal(wn_cm_ib_pd_decode(c->pd, c->pd_len, &f->conn_pd), 0);
	wn_llp_set_up(&f->l, c->up, c->up_arg);
	connects++;
	return &f->l;
}

static const struct wn_llp_ops fake_ops = {
	.name = "fake",
	.connect = f_connect,
	.accept = f_accept,
	.reject = f_reject,
	.close = f_close,
	.abort = f_abort,
	.release = f_release,
	.info = f_info,
};

static struct wn_llp_proto proto = {.ops = &fake_ops};

/* ---------------------------------------------------------------- fake owner */

#define NEPS 16

struct oep {
	struct wn_cm_ep ep;
	bool used;
	unsigned int established, finals, closed, detaches, starts, retry_exceeded, parks;
	enum wn_cm_event_type last_final;
	bool sq_busy;
};

static struct oep eps[NEPS];
static struct wn_cm cm;

static struct oep *
oe(struct wn_cm_ep *ep)
{
	return (struct oep *)ep;
}

static int
o_event(struct wn_cm_ep *ep, const struct wn_cm_event *ev)
{
	struct oep *o = oe(ep);

	assert_true(ep->ib_qp); /* a listener's endpoint reports nothing */
	assert_int_equal(o->closed, 0);
	if (ev->type == WN_CM_EV_ESTABLISHED) {
		o->established++;
	} else {
		assert_true(ev->type >= WN_CM_EV_REJECTED);
		o->finals++;
		o->last_final = ev->type;
	}
	assert_true(o->finals <= 1);
	return 0;
}

static int
o_qp_start(struct wn_cm_ep *ep, struct wn_llp *llp, const struct wn_llp_params *p,
	   uint8_t rtr_recv)
{
	(void)p;
	(void)rtr_recv;
	assert_ptr_equal(llp, ep->llp);
	oe(ep)->starts++;
	assert_int_equal(oe(ep)->starts, 1);
	return 0;
}

static int
o_qp_rtr(struct wn_cm_ep *ep, uint8_t rtr)
{
	(void)ep;
	(void)rtr;
	return 0;
}

static int
o_qp_terminate(struct wn_cm_ep *ep, uint8_t layer, uint8_t etype, uint8_t code)
{
	(void)ep;
	(void)layer;
	(void)etype;
	(void)code;
	return 0;
}

static void
o_qp_detach(struct wn_cm_ep *ep)
{
	oe(ep)->detaches++;
}

static void
o_qp_mulpdu(struct wn_cm_ep *ep, uint32_t m)
{
	(void)ep;
	(void)m;
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
	oe(ep)->closed++;
	assert_int_equal(oe(ep)->closed, 1);
	assert_int_equal(wn_cm_state(ep), WN_CM_CLOSED);
}

static bool
o_qp_sq_busy(struct wn_cm_ep *ep)
{
	return oe(ep)->sq_busy;
}

static void
o_qp_retry_exceeded(struct wn_cm_ep *ep)
{
	oe(ep)->retry_exceeded++;
}

static void
o_qp_park(struct wn_cm_ep *ep)
{
	oe(ep)->parks++;
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
	.qp_sq_busy = o_qp_sq_busy,
	.qp_retry_exceeded = o_qp_retry_exceeded,
	.qp_park = o_qp_park,
};

static struct oep *
oep_new(void)
{
	for (int i = 0; i < NEPS; i++)
		if (!eps[i].used) {
			memset(&eps[i], 0, sizeof(eps[i]));
			eps[i].used = true;
			return &eps[i];
		}
	fail_msg("out of endpoints");
	return NULL;
}

static int
setup(void **state)
{
	(void)state;
	memset(streams, 0, sizeof(streams));
	memset(eps, 0, sizeof(eps));
	accept_sync = true;
	connect_errno = 0;
	connects = 0;
	wn_cm_init(&cm, &owner_ops);
	wn_cm_poll(&cm, 1000000);
	return 0;
}

/* ---------------------------------------------------------------- helpers */

static struct wn_llp_ep
addr4(uint8_t d, uint16_t port)
{
	struct wn_llp_ep e = {.addr = wn_ip_addr_v4(198, 19, 0, d), .port = port};

	return e;
}

/* A QP's endpoint: QP @p qpn at 198.19.0.@p me, its peer QP @p rqpn at 198.19.0.@p peer. */
static struct oep *
qp_start(uint8_t me, uint32_t qpn, uint8_t peer, uint32_t rqpn)
{
	struct oep *o = oep_new();
	struct wn_cm_ib ib = {.local = addr4(me, 0), .remote = addr4(peer, WN_CM_IB_PORT),
			      .qpn = qpn, .rqpn = rqpn, .caps = {.ird = 8, .ord = 8}};

	assert_int_equal(wn_cm_ib_start(&cm, &o->ep, &proto, &ib), 0);
	return o;
}

/* A stream on the listener from 198.19.0.@p from whose request names @p src and @p dst. */
static struct oep *
incoming(uint8_t from, uint32_t src, uint32_t dst, struct fstream **fp)
{
	struct oep *t = oep_new();
	struct fstream *f = stream_new();
	struct wn_cm_ib_pd req = {.type = WN_CM_IB_REQUEST, .src_qpn = src, .dst_qpn = dst};
	uint8_t pd[WN_CM_IB_PD_LEN];
	struct wn_llp_peer peer = {.pd = pd, .pd_len = sizeof(pd), .enhanced = true};
	struct wn_llp_event ev = {.type = WN_LLP_EV_REQUEST, .peer = &peer};

	f->l.ops = &fake_ops;
	f->local = addr4(1, WN_CM_IB_PORT);
	f->remote = addr4(from, 61234);
	wn_cm_ib_incoming(&cm, &t->ep, &f->l);
	assert_int_equal(wn_cm_state(&t->ep), WN_CM_IB_AWAIT);
	assert_int_equal(wn_cm_ib_pd_encode(&req, pd, sizeof(pd)), WN_CM_IB_PD_LEN);
	raise_ev(f, &ev);
	if (fp != NULL)
		*fp = f;
	return t;
}

/* The peer's answer on QP endpoint @p o's attempt: a Reply naming @p src and @p dst. */
static void
reply(struct oep *o, uint32_t src, uint32_t dst)
{
	struct wn_cm_ib_pd rep = {.type = WN_CM_IB_REPLY, .src_qpn = src, .dst_qpn = dst};
	uint8_t pd[WN_CM_IB_PD_LEN];
	struct wn_llp_peer peer = {.pd = pd, .pd_len = sizeof(pd), .enhanced = true};
	struct wn_llp_event ev = {.type = WN_LLP_EV_ESTABLISHED, .peer = &peer,
				  .params = &params};

	assert_int_equal(wn_cm_ib_pd_encode(&rep, pd, sizeof(pd)), WN_CM_IB_PD_LEN);
	raise_ev(fs(o->ep.llp), &ev);
}

static void
rejected(struct oep *o, uint8_t reason)
{
	struct wn_cm_ib_pd rej = {.type = WN_CM_IB_REJECT, .reason = reason,
				  .src_qpn = o->ep.ib.rqpn, .dst_qpn = o->ep.ib.qpn};
	uint8_t pd[WN_CM_IB_PD_LEN];
	struct wn_llp_peer peer = {.pd = pd, .pd_len = sizeof(pd)};
	struct wn_llp_event ev = {.type = WN_LLP_EV_REJECTED, .peer = &peer};

	assert_int_equal(wn_cm_ib_pd_encode(&rej, pd, sizeof(pd)), WN_CM_IB_PD_LEN);
	raise_ev(fs(o->ep.llp), &ev);
}

static void
closed(struct fstream *f, enum wn_llp_close why)
{
	struct wn_llp_event ev = {.type = WN_LLP_EV_CLOSED, .why = why};

	raise_ev(f, &ev);
}

/* ---------------------------------------------------------------- the codec */

static void
test_pd_codec(void **state)
{
	struct wn_cm_ib_pd in = {.type = WN_CM_IB_REJECT, .reason = WN_CM_IB_R_CROSSED,
				 .src_qpn = 0xabcdef, .dst_qpn = 7}, out;
	static const uint8_t wire[WN_CM_IB_PD_LEN] = {'W', 'N', 'I', 'B', 1, 3, 2, 0,
						      0, 0xab, 0xcd, 0xef, 0, 0, 0, 7};
	uint8_t b[WN_CM_IB_PD_LEN + 4];

	(void)state;
	assert_int_equal(wn_cm_ib_pd_encode(&in, b, sizeof(b)), WN_CM_IB_PD_LEN);
	assert_memory_equal(b, wire, sizeof(wire));
	assert_int_equal(wn_cm_ib_pd_decode(b, WN_CM_IB_PD_LEN, &out), 0);
	assert_int_equal(out.type, in.type);
	assert_int_equal(out.reason, in.reason);
	assert_int_equal(out.src_qpn, in.src_qpn);
	assert_int_equal(out.dst_qpn, in.dst_qpn);
	assert_int_equal(wn_cm_ib_pd_encode(&in, b, WN_CM_IB_PD_LEN - 1), -ENOSPC);
	/* only Rejects have a reason, QP numbers have 24 bits, types 1..3 */
	in.type = WN_CM_IB_REQUEST;
	assert_int_equal(wn_cm_ib_pd_encode(&in, b, sizeof(b)), -EINVAL);
	in.reason = 0;
	in.src_qpn = 1u << 24;
	assert_int_equal(wn_cm_ib_pd_encode(&in, b, sizeof(b)), -EINVAL);
	in.src_qpn = 1;
	in.type = 4;
	assert_int_equal(wn_cm_ib_pd_encode(&in, b, sizeof(b)), -EINVAL);
	/* every octet of the header matters; the length is exact */
	for (size_t i = 0; i < 8; i++) {
		memcpy(b, wire, sizeof(wire));
		b[i] ^= 0x40;
		assert_int_equal(wn_cm_ib_pd_decode(b, WN_CM_IB_PD_LEN, &out), -EBADMSG);
	}
	memcpy(b, wire, sizeof(wire));
	b[8] = 1; /* a 25-bit QP number */
	assert_int_equal(wn_cm_ib_pd_decode(b, WN_CM_IB_PD_LEN, &out), -EBADMSG);
	assert_int_equal(wn_cm_ib_pd_decode(wire, WN_CM_IB_PD_LEN - 1, &out), -EBADMSG);
	assert_int_equal(wn_cm_ib_pd_decode(wire, WN_CM_IB_PD_LEN + 1, &out), -EBADMSG);
	assert_int_equal(wn_cm_ib_pd_decode(NULL, 0, &out), -EBADMSG);
}

/* ---------------------------------------------------------------- roles */

/* The lower (address, QP number) connects, to the peer's IB port; the other waits. */
static void
test_roles(void **state)
{
	struct oep *a, *b, *c, *self;
	struct wn_cm_ib ib = {.local = addr4(1, 0), .remote = addr4(1, WN_CM_IB_PORT), .qpn = 5,
			      .rqpn = 5};

	(void)state;
	a = qp_start(1, 900, 2, 3);
	assert_int_equal(wn_cm_state(&a->ep), WN_CM_IB_CONNECTING);
	assert_int_equal(connects, 1);
	assert_int_equal(fs(a->ep.llp)->remote.port, WN_CM_IB_PORT);
	assert_true(fs(a->ep.llp)->local.port >= WN_CM_IB_SPORT_LO);
	assert_int_equal(fs(a->ep.llp)->conn_pd.type, WN_CM_IB_REQUEST);
	assert_int_equal(fs(a->ep.llp)->conn_pd.src_qpn, 900);
	assert_int_equal(fs(a->ep.llp)->conn_pd.dst_qpn, 3);
	assert_int_equal(fs(a->ep.llp)->caps.ird, 8);
	b = qp_start(2, 3, 1, 900);
	assert_int_equal(wn_cm_state(&b->ep), WN_CM_IB_WAIT);
	assert_int_equal(connects, 1);
	/* one address: the QP numbers decide */
	c = qp_start(1, 7, 1, 8);
	assert_int_equal(wn_cm_state(&c->ep), WN_CM_IB_CONNECTING);
	assert_int_equal(connects, 2);
	/* a QP connected to itself: refused */
	self = oep_new();
	assert_int_equal(wn_cm_ib_start(&cm, &self->ep, &proto, &ib), -EINVAL);
	/* an IPv6 peer sorts after every IPv4 address (::ffff:0:0/96 is low) */
	struct oep *v6 = oep_new();
	struct wn_cm_ib ib6 = {.local = addr4(200, 0), .qpn = 1, .rqpn = 1};

	ib6.remote.addr.family = WN_AF_INET6;
	ib6.remote.addr.v6[0] = 0x20;
	ib6.remote.port = WN_CM_IB_PORT;
	assert_int_equal(wn_cm_ib_start(&cm, &v6->ep, &proto, &ib6), 0);
	assert_int_equal(wn_cm_state(&v6->ep), WN_CM_IB_CONNECTING);
}

/* The initiator: the Reply must name both QPs; then RTS, ESTABLISHED, the QP started. */
static void
test_initiator(void **state)
{
	struct oep *a;
	struct fstream *first;

	(void)state;
	a = qp_start(1, 10, 2, 20);
	first = fs(a->ep.llp);
	reply(a, 21, 10); /* another QP answers: not ours */
	assert_int_equal(first->aborts, 1);
	assert_int_equal(first->releases, 1);
	assert_int_equal(wn_cm_state(&a->ep), WN_CM_IB_BACKOFF);
	assert_int_equal(a->established, 0);
	/* the next attempt after the retry interval (100 ms before the QP's RTS) */
	wn_cm_poll(&cm, 1000000 + WN_CM_IB_RETRY_US - 1);
	assert_int_equal(connects, 1);
	wn_cm_poll(&cm, 1000000 + WN_CM_IB_RETRY_US);
	assert_int_equal(connects, 2);
	assert_int_equal(wn_cm_state(&a->ep), WN_CM_IB_CONNECTING);
	reply(a, 20, 10);
	assert_int_equal(wn_cm_state(&a->ep), WN_CM_RTS);
	assert_int_equal(a->starts, 1);
	assert_int_equal(a->established, 1);
	assert_int_equal(cm.st.ib_established, 1);
	/* after a Terminate, the end of the connection is the QP's end */
	wn_cm_terminated(&a->ep);
	assert_int_equal(wn_cm_state(&a->ep), WN_CM_CLOSING);
	closed(fs(a->ep.llp), WN_LLP_CLOSE_RESET);
	assert_int_equal(a->finals, 1);
	assert_int_equal(a->last_final, WN_CM_EV_DISCONNECTED);
	assert_int_equal(a->detaches, 1);
	assert_int_equal(a->closed, 1);
	assert_int_equal(a->parks, 0);
}

/*
 * The peer's QP goes (its stream ends without a Terminate): as on InfiniBand ours is not
 * flushed; send work it has then fails after the retry budget, and only then.
 */
static void
test_orphan(void **state)
{
	const uint64_t budget = 4194 * 3; /* timeout 10, retry_cnt 2 */
	struct oep *a, *t;
	struct fstream *f;

	(void)state;
	a = qp_start(1, 10, 2, 20);
	wn_cm_ib_rts(&a->ep, 10, 2);
	a->sq_busy = true; /* work posted early: the connection came in time */
	wn_cm_poll(&cm, 1000000 + 100);
	f = fs(a->ep.llp);
	reply(a, 20, 10);
	assert_int_equal(wn_cm_state(&a->ep), WN_CM_RTS);
	wn_cm_poll(&cm, 1000000 + 10 * budget);
	assert_int_equal(a->retry_exceeded, 0); /* connected: no budget */
	a->sq_busy = false;
	struct wn_llp_event eof = {.type = WN_LLP_EV_EOF};

	raise_ev(f, &eof);
	assert_int_equal(wn_cm_state(&a->ep), WN_CM_IB_ORPHAN);
	assert_int_equal(a->parks, 1);
	assert_int_equal(a->finals, 0);
	assert_int_equal(a->detaches, 0);
	assert_int_equal(f->closes, 1); /* our side of the stream closes too */
	closed(f, WN_LLP_CLOSE_NORMAL);
	assert_int_equal(f->releases, 1);
	assert_null(a->ep.llp);
	/* a request for it now: BUSY (its engine served the peer that went) */
	t = incoming(2, 20, 10, &f);
	assert_int_equal(f->reject_pd.reason, WN_CM_IB_R_BUSY);
	closed(f, WN_LLP_CLOSE_NORMAL);
	assert_int_equal(t->closed, 1);
	/* no send work: nothing happens, however long */
	wn_cm_poll(&cm, 1000000 + 100 * budget);
	assert_int_equal(wn_cm_state(&a->ep), WN_CM_IB_ORPHAN);
	/* send work: RETRY_EXC_ERR after the budget */
	a->sq_busy = true;
	wn_cm_poll(&cm, 1000000 + 101 * budget);
	wn_cm_poll(&cm, 1000000 + 102 * budget - 1);
	assert_int_equal(a->retry_exceeded, 0);
	wn_cm_poll(&cm, 1000000 + 102 * budget);
	assert_int_equal(a->retry_exceeded, 1);
	assert_int_equal(a->last_final, WN_CM_EV_UNREACHABLE);
	assert_int_equal(a->closed, 1);
	/* a stream reset under the QP: the same */
	struct oep *b = qp_start(2, 30, 1, 40);
	struct fstream *g;

	(void)incoming(1, 40, 30, &g);
	assert_int_equal(wn_cm_state(&b->ep), WN_CM_RTS);
	closed(g, WN_LLP_CLOSE_RESET);
	assert_int_equal(wn_cm_state(&b->ep), WN_CM_IB_ORPHAN);
	assert_int_equal(g->releases, 1);
	assert_int_equal(b->finals, 0);
	wn_cm_qp_gone(&b->ep, false); /* the ULP moves it to Error */
	assert_int_equal(b->closed, 1);
	assert_int_equal(b->detaches, 1);
	assert_int_equal(b->finals, 0);
}

/* The responder: the request names it, it takes the stream and accepts with a Reply. */
static void
test_responder(void **state)
{
	struct oep *b, *t;
	struct fstream *f;

	(void)state;
	b = qp_start(2, 20, 1, 10);
	t = incoming(1, 10, 20, &f);
	assert_int_equal(t->closed, 1);  /* its stream went to the QP */
	assert_int_equal(f->releases, 0);
	assert_int_equal(f->accepts, 1);
	assert_int_equal(f->accept_pd.type, WN_CM_IB_REPLY);
	assert_int_equal(f->accept_pd.src_qpn, 20);
	assert_int_equal(f->accept_pd.dst_qpn, 10);
	assert_int_equal(f->caps.ird, 8);
	assert_ptr_equal(b->ep.llp, &f->l);
	assert_int_equal(wn_cm_state(&b->ep), WN_CM_RTS);
	assert_int_equal(b->established, 1);
	/* another request for the connected QP: BUSY */
	t = incoming(1, 10, 20, &f);
	assert_int_equal(f->rejects, 1);
	assert_int_equal(f->reject_pd.reason, WN_CM_IB_R_BUSY);
	assert_int_equal(wn_cm_state(&t->ep), WN_CM_CLOSING);
	closed(f, WN_LLP_CLOSE_NORMAL);
	assert_int_equal(t->closed, 1);
	assert_int_equal(f->releases, 1);
}

/* A request before its QP's RTR is held, then taken; one for another pairing is refused. */
static void
test_held(void **state)
{
	struct oep *t1, *t2, *t3, *b;
	struct fstream *f1, *f2, *f3;

	(void)state;
	t1 = incoming(1, 10, 20, &f1);
	t2 = incoming(1, 11, 20, &f2); /* QP 20 will wait for QP 10, not 11 */
	t3 = incoming(1, 12, 30, &f3); /* its peer goes away first */
	assert_int_equal(wn_cm_state(&t1->ep), WN_CM_IB_HELD);
	assert_int_equal(cm.n_held, 3);
	assert_int_equal(cm.st.ib_held, 3);
	closed(f3, WN_LLP_CLOSE_RESET);
	assert_int_equal(t3->closed, 1);
	assert_int_equal(cm.n_held, 2);
	b = qp_start(2, 20, 1, 10);
	assert_int_equal(wn_cm_state(&b->ep), WN_CM_RTS);
	assert_int_equal(t1->closed, 1);
	assert_ptr_equal(b->ep.llp, &f1->l);
	assert_int_equal(f2->rejects, 1);
	assert_int_equal(f2->reject_pd.reason, WN_CM_IB_R_MISMATCH);
	assert_int_equal(f2->reject_pd.src_qpn, 20);
	assert_int_equal(f2->reject_pd.dst_qpn, 11);
	assert_int_equal(wn_cm_state(&t2->ep), WN_CM_CLOSING);
	assert_int_equal(cm.n_held, 0);
	assert_int_equal(connects, 0); /* it was the responder: it never connected */
}

/* A request that is not ours, or on the listener's stream after the ULP: refused. */
static void
test_malformed(void **state)
{
	struct oep *t = oep_new();
	struct fstream *f = stream_new();
	static const uint8_t junk[] = "not a request, just private data";
	struct wn_llp_peer peer = {.pd = junk, .pd_len = sizeof(junk)};
	struct wn_llp_event ev = {.type = WN_LLP_EV_REQUEST, .peer = &peer};

	(void)state;
	f->l.ops = &fake_ops;
	wn_cm_ib_incoming(&cm, &t->ep, &f->l);
	raise_ev(f, &ev);
	assert_int_equal(f->rejects, 1);
	assert_int_equal(f->reject_pd.reason, WN_CM_IB_R_MALFORMED);
	assert_int_equal(cm.st.ib_refused, 1);
	assert_int_equal(wn_cm_state(&t->ep), WN_CM_CLOSING);
	closed(f, WN_LLP_CLOSE_NORMAL);
	assert_int_equal(t->closed, 1);
}

/*
 * Crossed connects (both ends think they connect): the attempt whose initiator is lower wins
 * at both ends. Here A (198.19.0.1, QP 10) and B (198.19.0.2, QP 20) both connect: A's wins.
 */
static void
test_crossed(void **state)
{
	struct oep *a, *b, *t;
	struct fstream *fa, *fb, *f;

	(void)state;
	/* B's view of A is another address of A's (198.19.0.3): it connects too */
	b = qp_start(2, 20, 3, 10);
	assert_int_equal(wn_cm_state(&b->ep), WN_CM_IB_CONNECTING);
	fb = fs(b->ep.llp);
	a = qp_start(1, 10, 2, 20);
	assert_int_equal(wn_cm_state(&a->ep), WN_CM_IB_CONNECTING);
	fa = fs(a->ep.llp);
	/* A gets B's request: A's own attempt wins, B's is refused (CROSSED) */
	t = incoming(2, 20, 10, &f);
	assert_int_equal(f->rejects, 1);
	assert_int_equal(f->reject_pd.reason, WN_CM_IB_R_CROSSED);
	assert_int_equal(cm.st.ib_crossed_refused, 1);
	assert_int_equal(wn_cm_state(&a->ep), WN_CM_IB_CONNECTING);
	closed(f, WN_LLP_CLOSE_NORMAL);
	assert_int_equal(t->closed, 1);
	/* B gets A's request: B gives way, its own attempt goes, it accepts A's */
	t = incoming(1, 10, 20, &f);
	assert_int_equal(t->closed, 1);
	assert_int_equal(fb->aborts, 1);
	assert_int_equal(fb->releases, 1);
	assert_ptr_equal(b->ep.llp, &f->l);
	assert_int_equal(wn_cm_state(&b->ep), WN_CM_RTS);
	assert_int_equal(cm.st.ib_crossed, 1);
	/* A's attempt is answered: one connection */
	reply(a, 20, 10);
	assert_int_equal(wn_cm_state(&a->ep), WN_CM_RTS);
	assert_ptr_equal(a->ep.llp, &fa->l);
	assert_int_equal(a->established + b->established, 2);
}

/* ... and the loser that learns it from the Reject waits instead of trying again. */
static void
test_crossed_rejected(void **state)
{
	struct oep *b, *t;
	struct fstream *fb, *f;

	(void)state;
	b = qp_start(2, 20, 3, 10);
	fb = fs(b->ep.llp);
	rejected(b, WN_CM_IB_R_CROSSED);
	assert_int_equal(fb->closes, 1);
	assert_int_equal(fb->releases, 1);
	assert_int_equal(wn_cm_state(&b->ep), WN_CM_IB_WAIT);
	assert_int_equal(cm.st.ib_crossed, 1);
	wn_cm_poll(&cm, 60000000);
	assert_int_equal(connects, 1); /* no more attempts */
	t = incoming(1, 10, 20, &f);
	assert_int_equal(t->closed, 1);
	assert_int_equal(wn_cm_state(&b->ep), WN_CM_RTS);
	/* a Reject for any other reason: tried again */
	struct oep *c = qp_start(2, 30, 3, 40);

	rejected(c, WN_CM_IB_R_MISMATCH);
	assert_int_equal(wn_cm_state(&c->ep), WN_CM_IB_BACKOFF);
}

/* A held request meets its QP when that QP connects too: the lower initiator wins. */
static void
test_crossed_held(void **state)
{
	struct oep *t, *b, *t2, *b2;
	struct fstream *f, *f2;

	(void)state;
	/* A (198.19.0.1, 10) connected before B's QP was ready; B would connect too: A wins */
	t = incoming(1, 10, 20, &f);
	b = qp_start(2, 20, 3, 10);
	assert_int_equal(wn_cm_state(&b->ep), WN_CM_RTS);
	assert_int_equal(t->closed, 1);
	assert_int_equal(connects, 0);
	assert_int_equal(cm.st.ib_crossed, 1);
	/* the other way round: the held request's initiator is higher: refused, B connects */
	t2 = incoming(5, 50, 60, &f2);
	b2 = qp_start(2, 60, 5, 50);
	assert_int_equal(f2->rejects, 1);
	assert_int_equal(f2->reject_pd.reason, WN_CM_IB_R_CROSSED);
	assert_int_equal(wn_cm_state(&t2->ep), WN_CM_CLOSING);
	assert_int_equal(wn_cm_state(&b2->ep), WN_CM_IB_CONNECTING);
	assert_int_equal(connects, 1);
}

/* No connection for the retry budget with send work posted: RETRY_EXC_ERR, then CLOSED. */
static void
test_retry_exceeded(void **state)
{
	const uint64_t t0 = 1000000;
	/* timeout 10: 4.096 µs x 1024 = 4194 µs; retry_cnt 2: three of them */
	const uint64_t budget = 4194 * 3;
	struct oep *b, *a, *z;

	(void)state;
	b = qp_start(2, 20, 1, 10); /* waits for a peer that never comes */
	wn_cm_ib_rts(&b->ep, 10, 2);
	wn_cm_poll(&cm, t0 + 10 * budget);
	assert_int_equal(wn_cm_state(&b->ep), WN_CM_IB_WAIT); /* nothing to send: no timeout */
	b->sq_busy = true;
	wn_cm_poll(&cm, t0 + 10 * budget + 1);
	assert_true(wn_cm_next_timer(&cm) <= t0 + 10 * budget + 1 + 1000);
	wn_cm_poll(&cm, t0 + 11 * budget);
	assert_int_equal(b->retry_exceeded, 0);
	wn_cm_poll(&cm, t0 + 11 * budget + 1);
	assert_int_equal(b->retry_exceeded, 1);
	assert_int_equal(b->finals, 1);
	assert_int_equal(b->last_final, WN_CM_EV_UNREACHABLE);
	assert_int_equal(b->detaches, 1);
	assert_int_equal(b->closed, 1);
	assert_int_equal(cm.st.ib_retry_exceeded, 1);
	/* an initiator whose peer does not listen: attempts every timeout, then the same */
	setup(state);
	a = qp_start(1, 10, 2, 20);
	wn_cm_ib_rts(&a->ep, 10, 2);
	a->sq_busy = true;
	for (uint64_t t = t0; a->closed == 0 && t < t0 + 4 * budget; t += 500) {
		if (a->ep.llp != NULL && wn_cm_state(&a->ep) == WN_CM_IB_CONNECTING)
			closed(fs(a->ep.llp), WN_LLP_CLOSE_REFUSED);
		wn_cm_poll(&cm, t);
	}
	assert_int_equal(a->retry_exceeded, 1);
	assert_true(connects >= 3);
	for (int i = 0; i < NSTREAMS; i++)
		if (streams[i].used)
			assert_int_equal(streams[i].releases, 1);
	/* timeout 0: InfiniBand waits forever */
	setup(state);
	z = qp_start(2, 20, 1, 10);
	wn_cm_ib_rts(&z->ep, 0, 7);
	z->sq_busy = true;
	wn_cm_poll(&cm, t0 + 3600ull * 1000000);
	assert_int_equal(z->retry_exceeded, 0);
	assert_int_equal(wn_cm_state(&z->ep), WN_CM_IB_WAIT);
}

/* The ULP moves the QP to Error or destroys it before the connection: no event, no stream. */
static void
test_qp_gone(void **state)
{
	struct oep *a, *b;
	struct fstream *fa;

	(void)state;
	a = qp_start(1, 10, 2, 20);
	fa = fs(a->ep.llp);
	wn_cm_qp_gone(&a->ep, false);
	assert_int_equal(fa->aborts, 1);
	assert_int_equal(fa->releases, 1);
	assert_int_equal(a->finals, 0);
	assert_int_equal(a->closed, 1);
	assert_int_equal(a->detaches, 1);
	b = qp_start(2, 20, 1, 10);
	wn_cm_destroy(&b->ep);
	assert_int_equal(b->closed, 1);
	assert_int_equal(b->finals, 0);
	/* a request for a QP that went: held (its QP number may wait again later) */
	struct oep *t = incoming(1, 10, 20, NULL);

	assert_int_equal(wn_cm_state(&t->ep), WN_CM_IB_HELD);
}

/* A lower layer whose accept completes later (an SCTP session): ACCEPTING, then RTS. */
static void
test_accept_async(void **state)
{
	struct oep *b;
	struct fstream *f;
	struct wn_llp_event ev = {.type = WN_LLP_EV_ESTABLISHED, .params = &params};

	(void)state;
	accept_sync = false;
	b = qp_start(2, 20, 1, 10);
	(void)incoming(1, 10, 20, &f);
	assert_int_equal(wn_cm_state(&b->ep), WN_CM_IB_ACCEPTING);
	/* meanwhile another request: BUSY */
	struct fstream *f2;

	(void)incoming(1, 10, 20, &f2);
	assert_int_equal(f2->reject_pd.reason, WN_CM_IB_R_BUSY);
	raise_ev(f, &ev);
	assert_int_equal(wn_cm_state(&b->ep), WN_CM_RTS);
	/* and one that fails while accepting: back to waiting, the stream released */
	struct oep *c = qp_start(2, 30, 1, 40);
	struct fstream *f3;

	(void)incoming(1, 40, 30, &f3);
	assert_int_equal(wn_cm_state(&c->ep), WN_CM_IB_ACCEPTING);
	closed(f3, WN_LLP_CLOSE_RESET);
	assert_int_equal(f3->releases, 1);
	assert_int_equal(wn_cm_state(&c->ep), WN_CM_IB_WAIT);
	assert_int_equal(c->finals, 0);
}

/*
 * Random walks: two QPs' endpoints (one each way) and requests, attempts, their answers and
 * ends (EOF, CLOSED, Terminates), timers and the ULP in any order. At most one final event per QP, none from a
 * listener's endpoint (o_event), every stream released once and never touched after, the
 * held list and its count in step.
 */
static void
test_random_walks(void **state)
{
	uint32_t seed = 4242;

	for (int walk = 0; walk < 5000; walk++) {
		struct oep *q[2];
		uint64_t now = 1000000;

		setup(state);
		accept_sync = (walk & 1) != 0;
		q[0] = qp_start(1, 10, 2, 20);
		q[1] = qp_start(2, 30, (walk & 2) ? 3 : 1, 40);
		wn_cm_ib_rts(&q[0]->ep, 8, 3);
		for (int step = 0; step < 24; step++) {
			struct oep *o;
			struct fstream *f;

			seed = seed * 1103515245u + 12345u;
			o = q[(seed >> 4) & 1];
			switch ((seed >> 16) % 12) {
			case 0:
				(void)incoming((seed >> 8) & 1 ? 1 : 3, (seed >> 9) & 1 ? 10 : 40,
					       (seed >> 10) & 1 ? 20 : 30, NULL);
				break;
			case 1:
				if (o->closed == 0 && wn_cm_state(&o->ep) == WN_CM_IB_CONNECTING)
					reply(o, o->ep.ib.rqpn, o->ep.ib.qpn);
				break;
			case 2:
				if (o->closed == 0 && wn_cm_state(&o->ep) == WN_CM_IB_CONNECTING)
					rejected(o, (uint8_t)(1 + (seed >> 8) % 4));
				break;
			case 3:
				f = o->closed == 0 ? (struct fstream *)o->ep.llp : NULL;
				if (f != NULL)
					closed(f, (enum wn_llp_close)((seed >> 8) & 3));
				break;
			case 4:
				now += (seed >> 8) % 200000;
				wn_cm_poll(&cm, now);
				break;
			case 5:
				o->sq_busy = true;
				break;
			case 6:
				if (o->closed == 0)
					wn_cm_qp_gone(&o->ep, (seed >> 8) & 1);
				break;
			case 7:
				if (o->closed == 0 && wn_cm_state(&o->ep) == WN_CM_IB_ACCEPTING) {
					struct wn_llp_event ev = {.type = WN_LLP_EV_ESTABLISHED,
								  .params = &params};

					raise_ev((struct fstream *)o->ep.llp, &ev);
				}
				break;
			case 8:
				/* a held or refused request's stream ends */
				for (int i = 0; i < NEPS; i++)
					if (eps[i].used && eps[i].ep.ib_in && eps[i].closed == 0 &&
					    eps[i].ep.llp != NULL) {
						closed(fs(eps[i].ep.llp), WN_LLP_CLOSE_RESET);
						break;
					}
				break;
			case 9:
				if (o->closed == 0)
					wn_cm_ib_rts(&o->ep, (uint8_t)((seed >> 8) % 12), 7);
				break;
			case 10:
				if (o->closed == 0)
					wn_cm_terminated(&o->ep);
				break;
			default:
				f = o->closed == 0 ? (struct fstream *)o->ep.llp : NULL;
				if (f != NULL) {
					struct wn_llp_event ev = {.type = WN_LLP_EV_EOF};

					raise_ev(f, &ev);
				}
				break;
			}
			unsigned int held = 0;
			struct wn_cm_ep *e;

			TAILQ_FOREACH(e, &cm.ib_held, ib_link) {
				assert_int_equal(wn_cm_state(e), WN_CM_IB_HELD);
				held++;
			}
			assert_int_equal(held, cm.n_held);
		}
		/* everything ends: streams close, the QPs go */
		for (int i = 0; i < NEPS; i++) {
			if (!eps[i].used || eps[i].closed != 0)
				continue;
			if (eps[i].ep.ib_qp)
				wn_cm_destroy(&eps[i].ep);
			else if (eps[i].ep.llp != NULL)
				closed(fs(eps[i].ep.llp), WN_LLP_CLOSE_RESET);
			if (eps[i].closed == 0 && eps[i].ep.llp != NULL)
				closed(fs(eps[i].ep.llp), WN_LLP_CLOSE_RESET);
			assert_int_equal(eps[i].closed, 1);
		}
		for (int i = 0; i < NSTREAMS; i++)
			if (streams[i].used)
				assert_int_equal(streams[i].releases, 1);
		assert_true(TAILQ_EMPTY(&cm.ib_qps));
		assert_true(TAILQ_EMPTY(&cm.ib_held));
		for (int i = 0; i < 2; i++)
			assert_true(q[i]->starts <= 1 && q[i]->finals <= 1);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_pd_codec, setup),
		cmocka_unit_test_setup(test_roles, setup),
		cmocka_unit_test_setup(test_initiator, setup),
		cmocka_unit_test_setup(test_orphan, setup),
		cmocka_unit_test_setup(test_responder, setup),
		cmocka_unit_test_setup(test_held, setup),
		cmocka_unit_test_setup(test_malformed, setup),
		cmocka_unit_test_setup(test_crossed, setup),
		cmocka_unit_test_setup(test_crossed_rejected, setup),
		cmocka_unit_test_setup(test_crossed_held, setup),
		cmocka_unit_test_setup(test_retry_exceeded, setup),
		cmocka_unit_test_setup(test_qp_gone, setup),
		cmocka_unit_test_setup(test_accept_async, setup),
		cmocka_unit_test_setup(test_random_walks, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
