/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two RNIC engines wired back to back in memory: A's ULPDUs are fed to B's wn_rnic_rx() and
 * vice versa. Each side has its own region table (a separate host), rings created the way
 * warpnicd creates them, and a client-side view of each ring to post WQEs and poll CQEs.
 */
#ifndef TEST_RNIC_HARNESS_H
#define TEST_RNIC_HARNESS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_mem.h"
#include "wn_queue.h"
#include "wn_rnic.h"
#include "wn_wire_ddp.h"

#define H_DEPTH 64
#define H_MAX_PDU 512
#define H_BUF 65536
#define H_GUARD 64

struct h_pdu {
	uint32_t len;
	uint8_t *b;
};

struct h_side {
	const char *name;
	struct wn_mem_table *mem;
	uint32_t pd;
	void *ring_mem[4];                     /* sq, rq, scq, rcq */
	struct wn_queue_ring sq_e, rq_e, scq_e, rcq_e; /* engine views */
	struct wn_queue_ring sq_c, rq_c, scq_c, rcq_c; /* client views */
	struct wn_rnic_qp *qp;
	struct wn_llp llp;                     /* the lower layer the engine sends to: h_tx */
	struct h_pdu out[H_MAX_PDU];
	unsigned int n_out;
	int tx_refuse;                         /* > 0: refuse that many tx calls (-EAGAIN) */
	bool hold;                             /* zero-copy: take payloads WN_LLP_TX_HELD */
	uint32_t held[H_MAX_PDU];              /* ... their WQE indices (SQ payloads) */
	unsigned int n_held, n_resp_stag;
	uint32_t mulpdu;                       /* every ULPDU must fit (RFC 5041 §5.2) */
	/* events */
	unsigned int n_term_recv, n_term_sent, n_rtr, n_notify, n_srq_limit;
	int64_t sq_space_at_notify;            /* client's SQ space when the last CQ notify fired */
	struct wn_mem_term term_recv, term_sent;
	/* memory: one big buffer with guard areas at both ends */
	uint8_t *raw;
	uint8_t *buf;
};

static int
h_tx(void *arg, const struct wn_llp_ulpdu *u)
{
	struct h_side *s = arg;
	struct h_pdu *p;
	uint32_t off;

	if (s->tx_refuse > 0) {
		s->tx_refuse--;
		return -EAGAIN;
	}
	if (s->n_out == H_MAX_PDU)
		return -EAGAIN;
	p = &s->out[s->n_out++];
	p->len = u->len;
	p->b = malloc(u->len);
	memcpy(p->b, u->hdr, u->hdr_len);
	off = u->hdr_len;
	for (unsigned int i = 0; i < u->n_iov; i++) {
		memcpy(p->b + off, u->iov[i].base, u->iov[i].len);
		off += u->iov[i].len;
	}
	if (off != u->len || u->len > s->mulpdu)
		abort();
	for (unsigned int i = 0; i < u->n_iov; i++)
		if ((u->src != WN_LLP_SRC_NONE) != (u->iov[i].stag != 0))
			abort(); /* registered memory names its STag, engine memory none */
	if (u->src == WN_LLP_SRC_RESP && u->n_iov > 0)
		s->n_resp_stag++;
	if (s->hold && u->src != WN_LLP_SRC_NONE && u->n_iov > 0) {
		if (u->src == WN_LLP_SRC_SQ)
			s->held[s->n_held++] = u->wqe;
		return WN_LLP_TX_HELD;
	}
	return 0;
}

/* The test's lower layer: every ULPDU goes to h_tx() of the side in up_arg. */
static int
h_llp_send(struct wn_llp *l, const struct wn_llp_ulpdu *u)
{
	return h_tx(l->up_arg, u);
}

static const struct wn_llp_ops h_llp_ops = { .name = "test", .send = h_llp_send };

static void
h_llp_init(struct h_side *s)
{
	s->llp.ops = &h_llp_ops;
	s->llp.up_arg = s;
}

static void
h_event(void *arg, struct wn_rnic_qp *qp, const struct wn_rnic_event *ev)
{
	struct h_side *s = arg;

	(void)qp;
	switch (ev->type) {
	case WN_RNIC_EV_TERM_RECV:
		s->n_term_recv++;
		s->term_recv = ev->term;
		break;
	case WN_RNIC_EV_TERM_SENT:
		s->n_term_sent++;
		s->term_sent = ev->term;
		break;
	case WN_RNIC_EV_RTR_RECV:
		s->n_rtr++;
		break;
	case WN_RNIC_EV_CQ_NOTIFY:
		s->n_notify++;
		/* the CQE is visible now: what a client polling it would see of its SQ */
		s->sq_space_at_notify = wn_queue_prod_space(&s->sq_c);
		break;
	case WN_RNIC_EV_SRQ_LIMIT:
		s->n_srq_limit++;
		break;
	default:
		break;
	}
}

static void *
h_ring(enum wn_queue_kind kind, uint32_t depth, uint32_t sge, uint32_t inl,
       struct wn_queue_ring *eng, struct wn_queue_ring *cli, bool engine_consumes)
{
	uint64_t size = wn_queue_ring_size(kind, depth, sge, inl);
	void *m = NULL;

	if (posix_memalign(&m, 4096, size) != 0 || wn_queue_ring_init(m, kind, depth, sge, inl))
		abort();
	if (engine_consumes) {
		if (wn_queue_cons_attach(eng, m, size, kind) ||
		    wn_queue_prod_attach(cli, m, size, kind))
			abort();
	} else {
		if (wn_queue_prod_attach(eng, m, size, kind) ||
		    wn_queue_cons_attach(cli, m, size, kind))
			abort();
	}
	return m;
}

struct h_opts {
	uint32_t mulpdu, ord, ird, rtr_recv;
	bool sig_all;
	bool rnr_hold;
	bool no_rfc7306;  /* the peer is not known to speak RFC 7306 */
	bool ib_rc;       /* InfiniBand RC completions */
	uint32_t qp_access; /* ... and the QP's remote rights */
};

static void
h_side_init(struct h_side *s, const char *name, uint32_t qpn, const struct h_opts *o)
{
	struct wn_rnic_qp_conf c = { 0 };

	memset(s, 0, sizeof(*s));
	s->name = name;
	s->mem = wn_mem_table_create(256, NULL);
	s->pd = (uint32_t)wn_mem_pd_alloc(s->mem);
	s->ring_mem[0] = h_ring(WN_QUEUE_KIND_SQ, H_DEPTH, 4, 256, &s->sq_e, &s->sq_c, true);
	s->ring_mem[1] = h_ring(WN_QUEUE_KIND_RQ, H_DEPTH, 4, 0, &s->rq_e, &s->rq_c, true);
	s->ring_mem[2] = h_ring(WN_QUEUE_KIND_CQ, 4 * H_DEPTH, 0, 0, &s->scq_e, &s->scq_c, false);
	s->ring_mem[3] = h_ring(WN_QUEUE_KIND_CQ, 4 * H_DEPTH, 0, 0, &s->rcq_e, &s->rcq_c, false);
	s->raw = malloc(H_BUF + 2 * H_GUARD);
	memset(s->raw, 0xcc, H_BUF + 2 * H_GUARD);
	s->buf = s->raw + H_GUARD;
	memset(s->buf, 0, H_BUF);
	c.qpn = qpn;
	c.pd = s->pd;
	c.mem = s->mem;
	c.sq = &s->sq_e;
	c.rq = &s->rq_e;
	c.scq = &s->scq_e;
	c.rcq = &s->rcq_e;
	c.mulpdu = o->mulpdu;
	s->mulpdu = o->mulpdu;
	c.ord = o->ord;
	c.ird = o->ird;
	c.sq_sig_all = o->sig_all;
	c.rfc7306 = !o->no_rfc7306;
	c.rtr_recv = o->rtr_recv;
	c.rnr_hold = o->rnr_hold;
	c.ib_rc = o->ib_rc;
	c.qp_access = o->qp_access;
	h_llp_init(s);
	c.llp = &s->llp;
	c.event = h_event;
	c.event_arg = s;
	s->qp = wn_rnic_qp_create(&c);
	if (s->qp == NULL || wn_rnic_qp_start(s->qp) != 0)
		abort();
}

static void
h_side_fini(struct h_side *s)
{
	for (unsigned int i = 0; i < s->n_out; i++)
		free(s->out[i].b);
	wn_rnic_qp_destroy(s->qp);
	wn_mem_table_free(s->mem);
	for (int i = 0; i < 4; i++)
		free(s->ring_mem[i]);
	free(s->raw);
}

static bool
h_guards_intact(const struct h_side *s)
{
	for (unsigned int i = 0; i < H_GUARD; i++)
		if (s->raw[i] != 0xcc || s->raw[H_GUARD + H_BUF + i] != 0xcc)
			return false;
	return true;
}

/* Register [off, off + len) of the side's buffer at iova 0x10000 + off. */
static uint32_t
h_reg(struct h_side *s, uint32_t off, uint32_t len, uint32_t access)
{
	static uint8_t key = 1;
	uint32_t stag;

	if (wn_mem_mr_reg(s->mem, s->pd, s->buf + off, len, 0x10000 + off, access, key++, &stag))
		abort();
	return stag;
}

static uint64_t
h_va(uint32_t off)
{
	return 0x10000 + off;
}

/* Deliver everything @p from emitted to @p to, in order. @return ULPDUs delivered. */
static unsigned int
h_deliver(struct h_side *from, struct h_side *to)
{
	unsigned int n = from->n_out;

	for (unsigned int i = 0; i < n; i++) {
		(void)wn_rnic_rx(to->qp, from->out[i].b, from->out[i].len);
		free(from->out[i].b);
	}
	from->n_out = 0;
	return n;
}

/* Run both engines until neither has anything to say. */
static void
h_pump(struct h_side *a, struct h_side *b)
{
	for (int guard = 0; guard < 100000; guard++) {
		unsigned int n = 0;

		n += wn_rnic_tx_poll(a->qp, 32);
		n += h_deliver(a, b);
		n += wn_rnic_tx_poll(b->qp, 32);
		n += h_deliver(b, a);
		if (n == 0)
			return;
	}
	abort();
}

static struct wn_queue_swqe *
h_swqe(struct h_side *s)
{
	struct wn_queue_swqe *w;

	if (wn_queue_prod_space(&s->sq_c) <= 0)
		abort();
	w = wn_queue_prod_slot(&s->sq_c, 0);
	memset(w, 0, s->sq_c.stride);
	return w;
}

static void
h_post_send(struct h_side *s)
{
	wn_queue_prod_commit(&s->sq_c, 1);
}

static void
h_sge(struct wn_queue_swqe *w, uint64_t addr, uint32_t len, uint32_t lkey)
{
	struct wn_queue_sge *g = (struct wn_queue_sge *)(w + 1);

	g[w->num_sge].addr = addr;
	g[w->num_sge].length = len;
	g[w->num_sge].lkey = lkey;
	w->num_sge++;
}

static void
h_post_recv(struct h_side *s, uint64_t wr_id, unsigned int n, const struct wn_queue_sge *sge)
{
	struct wn_queue_rwqe *w;

	if (wn_queue_prod_space(&s->rq_c) <= 0)
		abort();
	w = wn_queue_prod_slot(&s->rq_c, 0);
	w->wr_id = wr_id;
	w->num_sge = n;
	memcpy(w + 1, sge, n * sizeof(*sge));
	wn_queue_prod_commit(&s->rq_c, 1);
}

/* Poll one CQE. @return true if there was one. */
static bool
h_poll(struct wn_queue_ring *cq, struct wn_queue_cqe *e)
{
	if (wn_queue_cons_avail(cq) <= 0)
		return false;
	memcpy(e, wn_queue_cons_slot(cq, 0), sizeof(*e));
	wn_queue_cons_release(cq, 1);
	return true;
}

static void
h_fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

#endif /* TEST_RNIC_HARNESS_H */
