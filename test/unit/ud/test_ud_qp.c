/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/ud: two UD QP engines whose Sends are encoded as warpnic datagrams (wn_wire_ud.h),
 * decoded and handed to the other's wn_ud_rx() with the GRH of an IPv4 header. A failure
 * here means a UD receive gets the wrong octets, GRH, source QP, immediate data or status,
 * a datagram with the wrong Q_Key reaches a program, or a QP's state does not gate its
 * traffic (RTR, RTS, Error flushes, RESET empties).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wn_mem.h"
#include "wn_queue.h"
#include "wn_ud.h"
#include "wn_wire_ud.h"

#define DEPTH 16
#define BUF 8192
#define MTU 1024

struct side {
	struct wn_mem_table *mem;
	uint32_t pd, lkey;
	void *ring[5]; /* sq, rq, scq, rcq, srq */
	struct wn_queue_ring sq_e, rq_e, scq_e, rcq_e, srq_e;
	struct wn_queue_ring sq_c, rq_c, scq_c, rcq_c, srq_c;
	struct wn_ud_qp *qp;
	uint8_t *buf;
	unsigned int n_notify, n_overflow, n_srq_limit;
};

/* The wire between the two: datagrams as sent, in order. */
static struct {
	uint8_t b[8][WN_UD_HDR_LEN + WN_UD_IMM_LEN + MTU];
	size_t len[8];
	uint8_t dgid[8][16];
	unsigned int n;
	int refuse; /* > 0: the next sends get -EAGAIN */
} wire;

static void
ring(enum wn_queue_kind kind, uint32_t depth, uint32_t sge, uint32_t inl, void **mem,
     struct wn_queue_ring *eng, struct wn_queue_ring *cli, bool engine_consumes)
{
	uint64_t size = wn_queue_ring_size(kind, depth, sge, inl);

	assert_int_equal(posix_memalign(mem, 4096, size), 0);
	assert_int_equal(wn_queue_ring_init(*mem, kind, depth, sge, inl), 0);
	if (engine_consumes) {
		assert_int_equal(wn_queue_cons_attach(eng, *mem, size, kind), 0);
		assert_int_equal(wn_queue_prod_attach(cli, *mem, size, kind), 0);
	} else {
		assert_int_equal(wn_queue_prod_attach(eng, *mem, size, kind), 0);
		assert_int_equal(wn_queue_cons_attach(cli, *mem, size, kind), 0);
	}
}

static void
on_event(void *arg, struct wn_ud_qp *qp, const struct wn_ud_event *ev)
{
	struct side *s = arg;

	(void)qp;
	if (ev->type == WN_UD_EV_CQ_NOTIFY)
		s->n_notify++;
	else if (ev->type == WN_UD_EV_CQ_OVERFLOW)
		s->n_overflow++;
	else if (ev->type == WN_UD_EV_SRQ_LIMIT)
		s->n_srq_limit++;
}

static void
side_init(struct side *s, uint32_t qpn, bool srq, uint32_t cq_depth)
{
	struct wn_ud_qp_conf c = {0};

	memset(s, 0, sizeof(*s));
	s->mem = wn_mem_table_create(64, NULL);
	s->pd = (uint32_t)wn_mem_pd_alloc(s->mem);
	ring(WN_QUEUE_KIND_SQ, DEPTH, 4, 64, &s->ring[0], &s->sq_e, &s->sq_c, true);
	if (!srq)
		ring(WN_QUEUE_KIND_RQ, DEPTH, 4, 0, &s->ring[1], &s->rq_e, &s->rq_c, true);
	else
		ring(WN_QUEUE_KIND_SRQ, DEPTH, 4, 0, &s->ring[4], &s->srq_e, &s->srq_c, true);
	ring(WN_QUEUE_KIND_CQ, cq_depth, 0, 0, &s->ring[2], &s->scq_e, &s->scq_c, false);
	ring(WN_QUEUE_KIND_CQ, cq_depth, 0, 0, &s->ring[3], &s->rcq_e, &s->rcq_c, false);
	s->buf = calloc(1, BUF);
	assert_int_equal(wn_mem_mr_reg(s->mem, s->pd, s->buf, BUF, (uintptr_t)s->buf,
				       WN_MEM_ACCESS_LOCAL_WRITE, 7, &s->lkey), 0);
	c.qpn = qpn;
	c.pd = s->pd;
	c.mem = s->mem;
	c.sq = &s->sq_e;
	c.rq = srq ? NULL : &s->rq_e;
	c.srq = srq ? &s->srq_e : NULL;
	c.scq = &s->scq_e;
	c.rcq = &s->rcq_e;
	c.max_msg = MTU;
	c.event = on_event;
	c.event_arg = s;
	s->qp = wn_ud_qp_create(&c);
	assert_non_null(s->qp);
	assert_int_equal(wn_ud_qp_state(s->qp), WN_UD_QPS_RESET);
}

static void
side_fini(struct side *s)
{
	wn_ud_qp_destroy(s->qp);
	wn_mem_table_free(s->mem);
	for (int i = 0; i < 5; i++)
		free(s->ring[i]);
	free(s->buf);
}

static void
to_rts(struct side *s, uint32_t qkey)
{
	assert_int_equal(wn_ud_qp_set_state(s->qp, WN_UD_QPS_INIT), 0);
	wn_ud_qp_set_qkey(s->qp, qkey);
	assert_int_equal(wn_ud_qp_set_state(s->qp, WN_UD_QPS_RTR), 0);
	assert_int_equal(wn_ud_qp_set_state(s->qp, WN_UD_QPS_RTS), 0);
}

/* Post a Send of [off, off + len) of the side's buffer to QP @p dqpn with Q_Key @p qkey. */
static void
post_send(struct side *s, uint64_t wr_id, uint32_t off, uint32_t len, uint32_t dqpn,
	  uint32_t qkey, uint8_t opcode, uint8_t flags, uint32_t lkey)
{
	struct wn_queue_swqe *w;
	struct wn_queue_sge *sge;

	assert_true(wn_queue_prod_space(&s->sq_c) > 0);
	w = wn_queue_prod_slot(&s->sq_c, 0);
	memset(w, 0, WN_QUEUE_SWQE_HDR);
	w->wr_id = wr_id;
	w->opcode = opcode;
	w->flags = flags;
	w->u.ud.remote_qpn = dqpn;
	w->u.ud.remote_qkey = qkey;
	w->u.ud.dgid[10] = w->u.ud.dgid[11] = 0xff;
	w->u.ud.dgid[12] = 198;
	w->u.ud.dgid[13] = 19;
	w->u.ud.dgid[15] = 2;
	w->u.ud.hop_limit = 64;
	w->ex.imm_data = 0x78563412; /* network order 0x12345678 */
	if (flags & WN_QUEUE_SEND_INLINE) {
		w->inline_len = len;
		memcpy((uint8_t *)w + WN_QUEUE_SWQE_HDR, s->buf + off, len);
	} else {
		w->num_sge = 1;
		sge = (struct wn_queue_sge *)((uint8_t *)w + WN_QUEUE_SWQE_HDR);
		sge->addr = (uintptr_t)(s->buf + off);
		sge->length = len;
		sge->lkey = lkey;
	}
	wn_queue_prod_commit(&s->sq_c, 1);
}

/* Post a receive of @p n pieces of @p piece octets each, from [off ...) of the buffer. */
static void
post_recv(struct side *s, uint64_t wr_id, uint32_t off, uint32_t piece, uint32_t n)
{
	struct wn_queue_ring *r = s->ring[1] != NULL ? &s->rq_c : &s->srq_c;
	struct wn_queue_rwqe *w;
	struct wn_queue_sge *sge;

	assert_true(wn_queue_prod_space(r) > 0);
	w = wn_queue_prod_slot(r, 0);
	w->wr_id = wr_id;
	w->num_sge = n;
	w->rsvd = 0;
	sge = (struct wn_queue_sge *)(w + 1);
	for (uint32_t i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)(s->buf + off + i * piece);
		sge[i].length = piece;
		sge[i].lkey = s->lkey;
	}
	wn_queue_prod_commit(r, 1);
}

static int
wire_send(void *arg, struct wn_ud_qp *qp, const struct wn_ud_send *s)
{
	size_t k;
	int n;

	(void)arg;
	(void)qp;
	if (wire.refuse > 0) {
		wire.refuse--;
		return -EAGAIN;
	}
	assert_true(wire.n < 8);
	n = wn_wire_ud_encode(&s->hdr, wire.b[wire.n], sizeof(wire.b[0]));
	assert_true(n > 0);
	k = (size_t)n;
	for (uint32_t i = 0; i < s->n_iov; i++) {
		memcpy(wire.b[wire.n] + k, s->iov[i].base, s->iov[i].len);
		k += s->iov[i].len;
	}
	assert_int_equal(k - (size_t)n, s->len);
	wire.len[wire.n] = k;
	memcpy(wire.dgid[wire.n], s->dgid, 16);
	wire.n++;
	return 0;
}

/* An IPv4 header from 198.19.0.1 to 198.19.0.2 as a GRH. */
static void
grh_v4(uint8_t grh[WN_UD_GRH_LEN])
{
	const uint8_t ip[20] = {0x45, 0, 0, 60, 0, 0, 0x40, 0, 64, 17, 0, 0,
				198, 19, 0, 1, 198, 19, 0, 2};

	assert_int_equal(wn_wire_ud_grh_from_ip(ip, 20, grh), 0);
}

/* Every datagram on the wire to @p to. @return the last wn_ud_rx() result. */
static int
deliver(struct side *to)
{
	uint8_t grh[WN_UD_GRH_LEN];
	int rc = 0;

	grh_v4(grh);
	for (unsigned int i = 0; i < wire.n; i++) {
		struct wn_ud_msg m;
		struct wn_ud_iov iov;
		struct wn_ud_recv r = {0};

		assert_int_equal(wn_wire_ud_decode(wire.b[i], wire.len[i], &m), WN_UD_OK);
		assert_int_equal(m.type, WN_UD_DATA);
		assert_int_equal(m.dqpn, wn_ud_qp_num(to->qp));
		iov.base = m.payload;
		iov.len = m.len;
		r.src_qpn = m.sqpn;
		r.qkey = m.qkey;
		r.has_imm = (m.flags & WN_UD_F_IMM) != 0;
		r.se = (m.flags & WN_UD_F_SE) != 0;
		r.imm = m.imm;
		r.grh = grh;
		r.len = m.len;
		r.n_iov = 1;
		r.iov = &iov;
		rc = wn_ud_rx(to->qp, &r);
	}
	wire.n = 0;
	return rc;
}

/* The next CQE of @p cq (client view), which must exist. */
static struct wn_queue_cqe
cqe(struct wn_queue_ring *cq)
{
	struct wn_queue_cqe e;

	assert_true(wn_queue_cons_avail(cq) > 0);
	memcpy(&e, wn_queue_cons_slot(cq, 0), sizeof(e));
	wn_queue_cons_release(cq, 1);
	return e;
}

static void
no_cqe(struct wn_queue_ring *cq)
{
	assert_int_equal(wn_queue_cons_avail(cq), 0);
}

static struct wn_ud_stats
stats(const struct side *s)
{
	struct wn_ud_stats st;

	wn_ud_qp_stats(s->qp, &st);
	return st;
}

static int
setup(void **state)
{
	struct side *p = calloc(2, sizeof(*p));

	side_init(&p[0], 0x10, false, 64);
	side_init(&p[1], 0x20, false, 64);
	to_rts(&p[0], 0x11111111);
	to_rts(&p[1], 0x11111111);
	memset(&wire, 0, sizeof(wire));
	*state = p;
	return 0;
}

static int
teardown(void **state)
{
	struct side *p = *state;

	side_fini(&p[0]);
	side_fini(&p[1]);
	free(p);
	return 0;
}

/* A Send with immediate data and SE: the receive has the GRH, then the message. */
static void
test_send_recv(void **state)
{
	struct side *a = *state, *b = a + 1;
	struct wn_queue_cqe e;

	for (int i = 0; i < 100; i++)
		a->buf[i] = (uint8_t)(i + 1);
	post_recv(b, 77, 0, 512, 1);
	post_send(a, 5, 0, 100, 0x20, 0x11111111, WN_QUEUE_WR_SEND_WITH_IMM,
		  WN_QUEUE_SEND_SIGNALED | WN_QUEUE_SEND_SOLICITED, a->lkey);
	assert_true(wn_ud_tx_pending(a->qp));
	assert_int_equal(wn_ud_tx_poll(a->qp, 8, wire_send, NULL), 1);
	assert_false(wn_ud_tx_pending(a->qp));
	assert_int_equal(wire.n, 1);
	assert_int_equal(wire.dgid[0][12], 198);
	e = cqe(&a->scq_c);
	assert_int_equal(e.wr_id, 5);
	assert_int_equal(e.status, WN_QUEUE_WC_SUCCESS);
	assert_int_equal(e.opcode, WN_QUEUE_WC_SEND);
	assert_int_equal(deliver(b), 0);
	e = cqe(&b->rcq_c);
	assert_int_equal(e.wr_id, 77);
	assert_int_equal(e.status, WN_QUEUE_WC_SUCCESS);
	assert_int_equal(e.opcode, WN_QUEUE_WC_RECV);
	assert_int_equal(e.byte_len, WN_UD_GRH_LEN + 100);
	assert_int_equal(e.flags, WN_QUEUE_WC_F_GRH | WN_QUEUE_WC_F_WITH_IMM |
				 WN_QUEUE_WC_F_SOLICITED);
	assert_int_equal(e.imm_data, 0x78563412);
	assert_int_equal(e.src_qp, 0x10);
	assert_int_equal(e.qp_num, 0x20);
	/* GRH: 20 zero octets and the IPv4 header, source 198.19.0.1 */
	for (int i = 0; i < 20; i++)
		assert_int_equal(b->buf[i], 0);
	assert_int_equal(b->buf[20], 0x45);
	assert_memory_equal(b->buf + 20 + 12, ((const uint8_t[]){198, 19, 0, 1}), 4);
	assert_memory_equal(b->buf + WN_UD_GRH_LEN, a->buf, 100);
	assert_int_equal(stats(a).tx_msgs, 1);
	assert_int_equal(stats(b).rx_msgs, 1);
	assert_int_equal(stats(b).rx_bytes, 100);
}

/* The GRH and message scatter over several receive pieces; an inline Send; zero length. */
static void
test_scatter_inline(void **state)
{
	struct side *a = *state, *b = a + 1;
	struct wn_queue_cqe e;

	for (int i = 0; i < 50; i++)
		a->buf[i] = (uint8_t)(0x80 + i);
	/* 7-octet pieces: the GRH ends mid-piece */
	post_recv(b, 1, 1000, 7, 4);
	post_recv(b, 2, 2000, 128, 1);
	post_recv(b, 3, 3000, 40, 1);
	post_send(a, 9, 0, 20, 0x20, 0x11111111, WN_QUEUE_WR_SEND, WN_QUEUE_SEND_SIGNALED,
		  a->lkey);
	post_send(a, 10, 0, 50, 0x20, 0x11111111, WN_QUEUE_WR_SEND,
		  WN_QUEUE_SEND_SIGNALED | WN_QUEUE_SEND_INLINE, a->lkey);
	post_send(a, 11, 0, 0, 0x20, 0x11111111, WN_QUEUE_WR_SEND, WN_QUEUE_SEND_SIGNALED,
		  a->lkey);
	assert_int_equal(wn_ud_tx_poll(a->qp, 8, wire_send, NULL), 3);
	assert_int_equal(wire.n, 3);
	assert_int_equal(deliver(b), 0);
	/* 28 octets in 4 pieces of 7: GRH (40) + 20 does not fit */
	e = cqe(&b->rcq_c);
	assert_int_equal(e.wr_id, 1);
	assert_int_equal(e.status, WN_QUEUE_WC_LOC_LEN_ERR);
	e = cqe(&b->rcq_c);
	assert_int_equal(e.wr_id, 2);
	assert_int_equal(e.status, WN_QUEUE_WC_SUCCESS);
	assert_int_equal(e.byte_len, WN_UD_GRH_LEN + 50);
	assert_memory_equal(b->buf + 2000 + WN_UD_GRH_LEN, a->buf, 50);
	/* a zero-length message still brings its GRH */
	e = cqe(&b->rcq_c);
	assert_int_equal(e.wr_id, 3);
	assert_int_equal(e.byte_len, WN_UD_GRH_LEN);
	assert_int_equal(stats(b).rx_len_errors, 1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(cqe(&a->scq_c).status, WN_QUEUE_WC_SUCCESS);
	/* the GRH ends inside a piece: 4 pieces of 14 take the GRH and 16 octets exactly */
	post_recv(b, 4, 4000, 14, 4);
	post_send(a, 12, 0, 16, 0x20, 0x11111111, WN_QUEUE_WR_SEND, 0, a->lkey);
	assert_int_equal(wn_ud_tx_poll(a->qp, 8, wire_send, NULL), 1);
	no_cqe(&a->scq_c); /* unsignaled */
	assert_int_equal(deliver(b), 0);
	e = cqe(&b->rcq_c);
	assert_int_equal(e.status, WN_QUEUE_WC_SUCCESS);
	assert_int_equal(b->buf[4000 + 20], 0x45);
	assert_memory_equal(b->buf + 4000 + WN_UD_GRH_LEN, a->buf, 16);
}

/* A Q_Key other than the QP's is dropped and counted; the high bit means the QP's own. */
static void
test_qkey(void **state)
{
	struct side *a = *state, *b = a + 1;
	struct wn_queue_cqe e;

	post_recv(b, 1, 0, 256, 1);
	post_send(a, 1, 0, 10, 0x20, 0x22222222, WN_QUEUE_WR_SEND, WN_QUEUE_SEND_SIGNALED,
		  a->lkey);
	assert_int_equal(wn_ud_tx_poll(a->qp, 8, wire_send, NULL), 1);
	assert_int_equal(cqe(&a->scq_c).status, WN_QUEUE_WC_SUCCESS); /* sent: nothing knows */
	assert_int_equal(deliver(b), -EPERM);
	no_cqe(&b->rcq_c);
	assert_int_equal(stats(b).rx_drop_qkey, 1);
	/* the receive is still there for a good one: the QP's own Q_Key by the high bit */
	post_send(a, 2, 0, 10, 0x20, 0x80000000, WN_QUEUE_WR_SEND, WN_QUEUE_SEND_SIGNALED,
		  a->lkey);
	assert_int_equal(wn_ud_tx_poll(a->qp, 8, wire_send, NULL), 1);
	assert_int_equal(deliver(b), 0);
	e = cqe(&b->rcq_c);
	assert_int_equal(e.wr_id, 1);
	assert_int_equal(e.status, WN_QUEUE_WC_SUCCESS);
	/* no receive posted: dropped, counted */
	post_send(a, 3, 0, 10, 0x20, 0x11111111, WN_QUEUE_WR_SEND, 0, a->lkey);
	assert_int_equal(wn_ud_tx_poll(a->qp, 8, wire_send, NULL), 1);
	assert_int_equal(deliver(b), -ENOBUFS);
	assert_int_equal(stats(b).rx_drop_norecv, 1);
}

/* Sends that cannot go complete in error; the QP goes on. */
static void
test_send_errors(void **state)
{
	struct side *a = *state, *b = a + 1;

	post_send(a, 1, 0, MTU + 1, 0x20, 0x11111111, WN_QUEUE_WR_SEND, 0, a->lkey);
	post_send(a, 2, 0, 10, 0x20, 0x11111111, WN_QUEUE_WR_SEND, 0, a->lkey ^ 0x55);
	post_send(a, 3, 0, 10, 0x20, 0x11111111, WN_QUEUE_WR_RDMA_WRITE, 0, a->lkey);
	post_send(a, 4, 0, MTU, 0x20, 0x11111111, WN_QUEUE_WR_SEND, WN_QUEUE_SEND_SIGNALED,
		  a->lkey);
	assert_int_equal(wn_ud_tx_poll(a->qp, 8, wire_send, NULL), 4);
	assert_int_equal(cqe(&a->scq_c).status, WN_QUEUE_WC_LOC_LEN_ERR);
	assert_int_equal(cqe(&a->scq_c).status, WN_QUEUE_WC_LOC_PROT_ERR);
	assert_int_equal(cqe(&a->scq_c).status, WN_QUEUE_WC_LOC_QP_OP_ERR);
	assert_int_equal(cqe(&a->scq_c).status, WN_QUEUE_WC_SUCCESS);
	assert_int_equal(wire.n, 1);
	assert_int_equal(stats(a).tx_errors, 3);
	assert_int_equal(wn_ud_qp_state(a->qp), WN_UD_QPS_RTS);
	/* no buffer for the datagram: the Send stays and goes next time */
	post_recv(b, 1, 0, 2048, 1);
	wire.n = 0;
	wire.refuse = 1;
	post_send(a, 5, 0, 10, 0x20, 0x11111111, WN_QUEUE_WR_SEND, WN_QUEUE_SEND_SIGNALED,
		  a->lkey);
	assert_int_equal(wn_ud_tx_poll(a->qp, 8, wire_send, NULL), 0);
	no_cqe(&a->scq_c);
	assert_int_equal(wn_ud_tx_poll(a->qp, 8, wire_send, NULL), 1);
	assert_int_equal(cqe(&a->scq_c).wr_id, 5);
	/* a receive whose lkey does not allow writing */
	assert_int_equal(deliver(b), 0);
	assert_int_equal(cqe(&b->rcq_c).status, WN_QUEUE_WC_SUCCESS);
	post_recv(b, 2, 0, 2048, 1);
	((struct wn_queue_sge *)((struct wn_queue_rwqe *)wn_queue_entry(&b->rq_c,
		b->rq_c.head - 1) + 1))->lkey ^= 0x55;
	post_send(a, 6, 0, 10, 0x20, 0x11111111, WN_QUEUE_WR_SEND, 0, a->lkey);
	assert_int_equal(wn_ud_tx_poll(a->qp, 8, wire_send, NULL), 1);
	assert_int_equal(deliver(b), 0);
	assert_int_equal(cqe(&b->rcq_c).status, WN_QUEUE_WC_LOC_PROT_ERR);
	assert_int_equal(stats(b).rx_prot_errors, 1);
}

/* RTR receives but does not send; INIT neither; Error flushes; RESET empties. */
static void
test_states(void **state)
{
	struct side *a = *state, *b = a + 1;
	struct wn_queue_cqe e;

	assert_int_equal(wn_ud_qp_set_state(b->qp, WN_UD_QPS_INIT), 0);
	post_recv(b, 1, 0, 256, 1);
	post_send(a, 1, 0, 10, 0x20, 0x11111111, WN_QUEUE_WR_SEND, 0, a->lkey);
	assert_int_equal(wn_ud_tx_poll(a->qp, 8, wire_send, NULL), 1);
	assert_int_equal(deliver(b), -ENOTCONN);
	assert_int_equal(stats(b).rx_drop_state, 1);
	assert_int_equal(wn_ud_qp_set_state(b->qp, WN_UD_QPS_RTR), 0);
	post_send(b, 7, 0, 10, 0x10, 0x11111111, WN_QUEUE_WR_SEND, 0, b->lkey);
	assert_int_equal(wn_ud_tx_poll(b->qp, 8, wire_send, NULL), 0); /* not RTS */
	assert_false(wn_ud_tx_pending(b->qp));
	assert_int_equal(wn_ud_tx_poll(a->qp, 8, wire_send, NULL), 0);
	post_send(a, 2, 0, 10, 0x20, 0x11111111, WN_QUEUE_WR_SEND, 0, a->lkey);
	assert_int_equal(wn_ud_tx_poll(a->qp, 8, wire_send, NULL), 1);
	assert_int_equal(deliver(b), 0);
	assert_int_equal(cqe(&b->rcq_c).wr_id, 1);
	/* Error: the Send waiting in B's SQ and two receives flushed, signaled or not */
	post_recv(b, 2, 0, 256, 1);
	post_recv(b, 3, 0, 256, 1);
	assert_int_equal(wn_ud_qp_set_state(b->qp, WN_UD_QPS_ERROR), 0);
	e = cqe(&b->scq_c);
	assert_int_equal(e.wr_id, 7);
	assert_int_equal(e.status, WN_QUEUE_WC_WR_FLUSH_ERR);
	assert_int_equal(cqe(&b->rcq_c).wr_id, 2);
	e = cqe(&b->rcq_c);
	assert_int_equal(e.wr_id, 3);
	assert_int_equal(e.status, WN_QUEUE_WC_WR_FLUSH_ERR);
	assert_int_equal(e.opcode, WN_QUEUE_WC_RECV);
	/* posted later: flushed by the next flush */
	post_recv(b, 4, 0, 256, 1);
	assert_int_equal(wn_ud_qp_flush(b->qp), 1);
	assert_int_equal(cqe(&b->rcq_c).wr_id, 4);
	assert_int_equal(stats(b).wqe_flushed, 4);
	/* RESET: what is posted goes, no completion; back to RTS, traffic again */
	post_recv(b, 5, 0, 256, 1);
	assert_int_equal(wn_ud_qp_set_state(b->qp, WN_UD_QPS_RESET), 0);
	no_cqe(&b->rcq_c);
	assert_int_equal(wn_ud_qp_flush(b->qp), 0);
	to_rts(b, 0x11111111);
	post_recv(b, 6, 0, 256, 1);
	post_send(a, 3, 0, 10, 0x20, 0x11111111, WN_QUEUE_WR_SEND, 0, a->lkey);
	assert_int_equal(wn_ud_tx_poll(a->qp, 8, wire_send, NULL), 1);
	assert_int_equal(deliver(b), 0);
	assert_int_equal(cqe(&b->rcq_c).wr_id, 6);
	assert_int_equal(wn_ud_qp_set_state(b->qp, (enum wn_ud_qp_state)9), -EINVAL);
}

/* An SRQ's receives, its limit event; a full CQ loses the completion and says so. */
static void
test_srq_and_overflow(void **state)
{
	struct side a, b;

	(void)state;
	side_init(&a, 1, false, 64);
	side_init(&b, 2, true, 1);
	to_rts(&a, 5);
	to_rts(&b, 5);
	memset(&wire, 0, sizeof(wire));
	post_recv(&b, 1, 0, 256, 1);
	post_recv(&b, 2, 256, 256, 1);
	wn_queue_srq_limit_arm(&b.srq_c, 2);
	post_send(&a, 1, 0, 10, 2, 5, WN_QUEUE_WR_SEND, 0, a.lkey);
	post_send(&a, 2, 0, 10, 2, 5, WN_QUEUE_WR_SEND, 0, a.lkey);
	assert_int_equal(wn_ud_tx_poll(a.qp, 8, wire_send, NULL), 2);
	assert_int_equal(deliver(&b), 0);
	assert_int_equal(b.n_srq_limit, 1);
	/* one CQE fits the CQ, the second is lost */
	assert_int_equal(cqe(&b.rcq_c).wr_id, 1);
	no_cqe(&b.rcq_c);
	assert_int_equal(b.n_overflow, 1);
	assert_true(wn_queue_status(&b.rcq_c) & WN_QUEUE_ST_OVERFLOW);
	assert_int_equal(stats(&b).cqe_lost, 1);
	side_fini(&a);
	side_fini(&b);
}

static void
test_conf(void **state)
{
	struct side s;
	struct wn_ud_qp_conf c = {0};

	(void)state;
	side_init(&s, 1, false, 4);
	assert_null(wn_ud_qp_create(NULL));
	assert_int_equal(errno, EINVAL);
	c.mem = s.mem;
	c.sq = &s.sq_e;
	c.rq = &s.rq_e;
	c.scq = &s.scq_e;
	c.rcq = &s.rcq_e;
	c.max_msg = WN_UD_MSG_MAX + 1;
	assert_null(wn_ud_qp_create(&c));
	c.max_msg = MTU;
	c.srq = &s.rq_e; /* an RQ and an SRQ */
	assert_null(wn_ud_qp_create(&c));
	side_fini(&s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_send_recv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scatter_inline, setup, teardown),
		cmocka_unit_test_setup_teardown(test_qkey, setup, teardown),
		cmocka_unit_test_setup_teardown(test_send_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_states, setup, teardown),
		cmocka_unit_test(test_srq_and_overflow),
		cmocka_unit_test(test_conf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
