/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for lib/cm's InfiniBand-style connections (wn_cm.h) and the Private Data
 * they carry (wn_cm_ib_pd_decode): each record of the input is one step, a request on the
 * listener with Private Data as a peer could send it (any octets, or a well-formed record
 * with any QP numbers), a QP moved to RTR or RTS, the answer to an attempt (a Reply or
 * Reject with any Private Data), a stream's end, time passing, send work, the ULP going away.
 * A decoded record encodes back to the same octets; a QP's endpoint reports at most one final
 * event and a listener's none; every stream is released once and never touched after; the
 * held requests are counted right; at the end everything reaches CLOSED.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_cm.h"

#define NSTREAMS 96
#define NEPS     32

static void
check(int cond)
{
	if (!cond)
		abort();
}

/* ---------------------------------------------------------------- fake lower layer */

struct fstream {
	struct wn_llp l;
	bool used;
	unsigned int releases;
	struct wn_llp_ep local, remote;
};

static struct fstream streams[NSTREAMS];
static bool accept_sync;
static bool connect_fails;
static struct wn_llp_params params = {.ird = 2, .ord = 2, .mulpdu = 1000};

static struct fstream *
fs(struct wn_llp *l)
{
	return (struct fstream *)l;
}

static void
raise_ev(struct fstream *f, const struct wn_llp_event *ev)
{
	check(f->releases == 0);
	if (f->l.up != NULL)
		f->l.up->event(f->l.up_arg, &f->l, ev);
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
	return NULL;
}

static int
f_accept(struct wn_llp *l, const struct wn_llp_caps *caps, const uint8_t *pd, uint16_t len)
{
	struct wn_llp_event ev = {.type = WN_LLP_EV_ESTABLISHED, .params = &params};
	struct wn_cm_ib_pd rep;

	(void)caps;
	check(fs(l)->releases == 0);
	check(wn_cm_ib_pd_decode(pd, len, &rep) == 0 && rep.type == WN_CM_IB_REPLY);
	if (accept_sync)
		raise_ev(fs(l), &ev);
	return 0;
}

static int
f_reject(struct wn_llp *l, const uint8_t *pd, uint16_t len)
{
	struct wn_cm_ib_pd rej;

	check(fs(l)->releases == 0);
	check(wn_cm_ib_pd_decode(pd, len, &rej) == 0 && rej.type == WN_CM_IB_REJECT);
	return 0;
}

static int
f_close(struct wn_llp *l)
{
	check(fs(l)->releases == 0);
	return 0;
}

static void
f_abort(struct wn_llp *l)
{
	struct wn_llp_event ev = {.type = WN_LLP_EV_CLOSED, .why = WN_LLP_CLOSE_RESET};

	raise_ev(fs(l), &ev);
}

static void
f_release(struct wn_llp *l)
{
	check(++fs(l)->releases == 1);
	l->up = NULL;
}

static void
f_info(const struct wn_llp *l, struct wn_llp_info *in)
{
	memset(in, 0, sizeof(*in));
	in->local = ((const struct fstream *)l)->local;
	in->remote = ((const struct fstream *)l)->remote;
}

static const struct wn_llp_ops fake_ops;

static struct wn_llp *
f_connect(struct wn_llp_proto *p, const struct wn_llp_connect *c)
{
	struct wn_cm_ib_pd req;
	struct fstream *f;

	(void)p;
	if (connect_fails || (f = stream_new()) == NULL) {
		errno = connect_fails ? ECONNREFUSED : ENOMEM;
		return NULL;
	}
	check(wn_cm_ib_pd_decode(c->pd, c->pd_len, &req) == 0 && req.type == WN_CM_IB_REQUEST);
	check(c->remote.port == WN_CM_IB_PORT && c->local.port >= WN_CM_IB_SPORT_LO);
	f->l.ops = &fake_ops;
	f->l.active = true;
	f->local = c->local;
	f->remote = c->remote;
	wn_llp_set_up(&f->l, c->up, c->up_arg);
	return &f->l;
}

static const struct wn_llp_ops fake_ops = {
	.name = "fuzz",
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

struct oep {
	struct wn_cm_ep ep;
	bool used;
	unsigned int finals, closed, starts;
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
	check(ep->ib_qp && oe(ep)->closed == 0);
	if (ev->type != WN_CM_EV_ESTABLISHED)
		check(++oe(ep)->finals == 1);
	return 0;
}

static int
o_qp_start(struct wn_cm_ep *ep, struct wn_llp *llp, const struct wn_llp_params *p,
	   uint8_t rtr_recv)
{
	(void)p;
	(void)rtr_recv;
	check(ep->ib_qp && llp == ep->llp && ++oe(ep)->starts == 1);
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
o_nop(struct wn_cm_ep *ep)
{
	(void)ep;
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
	check(++oe(ep)->closed == 1 && wn_cm_state(ep) == WN_CM_CLOSED);
}

static bool
o_qp_sq_busy(struct wn_cm_ep *ep)
{
	return oe(ep)->sq_busy;
}

static const struct wn_cm_ops owner_ops = {
	.event = o_event,
	.qp_start = o_qp_start,
	.qp_rtr = o_qp_rtr,
	.qp_terminate = o_qp_terminate,
	.qp_detach = o_nop,
	.qp_mulpdu = o_qp_mulpdu,
	.ulpdu = o_ulpdu,
	.tx_release = o_tx_release,
	.closed = o_closed,
	.qp_sq_busy = o_qp_sq_busy,
	.qp_retry_exceeded = o_nop,
	.qp_park = o_nop,
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
	return NULL;
}

/* ---------------------------------------------------------------- the input */

struct input {
	const uint8_t *p;
	size_t n;
};

static uint8_t
take(struct input *in)
{
	uint8_t v = 0;

	if (in->n > 0) {
		v = *in->p++;
		in->n--;
	}
	return v;
}

static struct wn_llp_ep
addr(uint8_t d, uint16_t port)
{
	struct wn_llp_ep e = {.addr = wn_ip_addr_v4(198, 19, 0, d), .port = port};

	return e;
}

/* Private Data from the input: any octets, or a well-formed record of any type. */
static uint16_t
pd_of(struct input *in, uint8_t *pd, uint8_t want_type)
{
	uint8_t how = take(in);
	uint16_t len;

	if (how & 1) {
		struct wn_cm_ib_pd r = {.type = want_type, .src_qpn = take(in) & 7,
					.dst_qpn = take(in) & 7};

		if (want_type == WN_CM_IB_REJECT)
			r.reason = (uint8_t)(1 + take(in) % 4);
		if (how & 2)
			r.type = (uint8_t)(1 + take(in) % 3); /* the wrong type, maybe */
		if (r.type != WN_CM_IB_REJECT)
			r.reason = 0;
		return (uint16_t)wn_cm_ib_pd_encode(&r, pd, WN_CM_IB_PD_LEN);
	}
	len = (uint16_t)(take(in) % 24);
	for (uint16_t i = 0; i < len; i++)
		pd[i] = take(in);
	return len;
}

/* A decoded record encodes back to its octets. */
static void
pd_roundtrip(const uint8_t *pd, uint16_t len)
{
	struct wn_cm_ib_pd r;
	uint8_t again[WN_CM_IB_PD_LEN];

	if (wn_cm_ib_pd_decode(pd, len, &r) != 0)
		return;
	check(wn_cm_ib_pd_encode(&r, again, sizeof(again)) == WN_CM_IB_PD_LEN);
	check(memcmp(again, pd, WN_CM_IB_PD_LEN) == 0);
}

static void
held_consistent(void)
{
	struct wn_cm_ep *e;
	uint32_t n = 0;

	TAILQ_FOREACH(e, &cm.ib_held, ib_link) {
		check(wn_cm_state(e) == WN_CM_IB_HELD);
		n++;
	}
	check(n == cm.n_held);
}

/* A live endpoint picked by the input (NULL: none). */
static struct oep *
pick(struct input *in, bool qp)
{
	uint8_t k = take(in);

	for (int i = 0; i < NEPS; i++) {
		struct oep *o = &eps[(k + i) % NEPS];

		if (o->used && o->closed == 0 && o->ep.ib_qp == qp)
			return o;
	}
	return NULL;
}

static void
step(struct input *in)
{
	uint8_t op = take(in), pd[32];
	struct wn_llp_peer peer = {.pd = pd};
	struct wn_llp_event ev = {.peer = &peer, .params = &params};
	struct fstream *f;
	struct oep *o;

	switch (op % 11) {
	case 0: { /* a QP reaches RTR */
		struct wn_cm_ib ib = {.local = addr(1 + (take(in) & 3), 0),
				      .remote = addr(1 + (take(in) & 3), WN_CM_IB_PORT),
				      .qpn = take(in) & 7, .rqpn = take(in) & 7};

		o = oep_new();
		if (o != NULL && wn_cm_ib_start(&cm, &o->ep, &proto, &ib) != 0)
			o->used = false;
		break;
	}
	case 1: /* a request on the listener */
		o = oep_new();
		f = o != NULL ? stream_new() : NULL;
		if (f == NULL) {
			if (o != NULL)
				o->used = false;
			break;
		}
		f->l.ops = &fake_ops;
		f->remote = addr(1 + (take(in) & 3), 61000);
		wn_cm_ib_incoming(&cm, &o->ep, &f->l);
		peer.pd_len = pd_of(in, pd, WN_CM_IB_REQUEST);
		pd_roundtrip(pd, peer.pd_len);
		ev.type = WN_LLP_EV_REQUEST;
		raise_ev(f, &ev);
		break;
	case 2: /* our attempt answered: a Reply, or a Reject */
		o = pick(in, true);
		if (o == NULL || o->ep.llp == NULL || wn_cm_state(&o->ep) != WN_CM_IB_CONNECTING)
			break;
		ev.type = take(in) & 1 ? WN_LLP_EV_ESTABLISHED : WN_LLP_EV_REJECTED;
		peer.pd_len = pd_of(in, pd, ev.type == WN_LLP_EV_REJECTED ? WN_CM_IB_REJECT :
								    WN_CM_IB_REPLY);
		pd_roundtrip(pd, peer.pd_len);
		raise_ev(fs(o->ep.llp), &ev);
		break;
	case 3: /* a stream ends: EOF, an error, or gone */
	case 4:
		o = pick(in, (op & 1) != 0);
		if (o == NULL || o->ep.llp == NULL)
			break;
		ev.type = (enum wn_llp_event_type[]){WN_LLP_EV_EOF, WN_LLP_EV_ERROR,
						     WN_LLP_EV_CLOSED}[take(in) % 3];
		ev.why = (enum wn_llp_close)(take(in) & 3);
		ev.peer = NULL;
		raise_ev(fs(o->ep.llp), &ev);
		break;
	case 5: /* an accept that completes later */
		o = pick(in, true);
		if (o != NULL && o->ep.llp != NULL && wn_cm_state(&o->ep) == WN_CM_IB_ACCEPTING) {
			ev.type = WN_LLP_EV_ESTABLISHED;
			ev.peer = NULL;
			raise_ev(fs(o->ep.llp), &ev);
		}
		break;
	case 6:
		cm.now += (uint64_t)take(in) << 10;
		wn_cm_poll(&cm, cm.now);
		break;
	case 7:
		o = pick(in, true);
		if (o != NULL)
			o->sq_busy = !o->sq_busy;
		break;
	case 8:
		o = pick(in, true);
		if (o != NULL)
			wn_cm_ib_rts(&o->ep, take(in) & 15, take(in) & 7);
		break;
	case 9:
		o = pick(in, true);
		if (o != NULL) {
			uint8_t how = take(in) % 3;

			if (how == 0)
				wn_cm_destroy(&o->ep);
			else
				wn_cm_qp_gone(&o->ep, how == 2);
		}
		break;
	default:
		accept_sync = take(in) & 1;
		connect_fails = take(in) & 1;
		o = pick(in, true);
		if (o != NULL)
			wn_cm_terminated(&o->ep);
		break;
	}
	held_consistent();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = {data, size};
	int rounds = 0;

	memset(streams, 0, sizeof(streams));
	memset(eps, 0, sizeof(eps));
	accept_sync = true;
	connect_fails = false;
	wn_cm_init(&cm, &owner_ops);
	wn_cm_poll(&cm, 1000000);
	while (in.n > 0 && rounds++ < 256)
		step(&in);
	/* the end: the QPs go, every stream ends */
	for (int i = 0; i < NEPS; i++)
		if (eps[i].used && eps[i].closed == 0 && eps[i].ep.ib_qp)
			wn_cm_destroy(&eps[i].ep);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < NEPS; i++) {
			struct wn_llp_event ev = {.type = WN_LLP_EV_CLOSED, .why = WN_LLP_CLOSE_RESET};

			if (eps[i].used && eps[i].closed == 0 && eps[i].ep.llp != NULL)
				raise_ev(fs(eps[i].ep.llp), &ev);
		}
	for (int i = 0; i < NEPS; i++)
		check(!eps[i].used || eps[i].closed == 1);
	for (int i = 0; i < NSTREAMS; i++)
		check(!streams[i].used || streams[i].releases == 1);
	check(TAILQ_EMPTY(&cm.ib_qps) && TAILQ_EMPTY(&cm.ib_held) && cm.n_held == 0);
	return 0;
}
