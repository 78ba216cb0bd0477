/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RNIC modes' common part (see perf_rnic.h): set-up on the device (dev_client.c: a
 * warpnicd through lib/client; dev_rtc.c: the dataplane shard this thread runs), CM
 * connection of the control and data QPs, control messages, posting and polling the lib/queue
 * rings the way the verbs shim does (drivers/verbs/dp.c), the per-size driver both roles run,
 * and the measurement loop around the mode's step.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "wn_ctl.h"
#include "wn_queue.h"

#include "perf.h"
#include "perf_rnic.h"

#define PERF_CTL_TX 4                  /* control transmit slots */
#define PERF_CTL_CREDIT0 (PERF_CTL_SLOTS + PERF_CTL_TX) /* first credit slot */
#define PERF_CQ_BATCH 32
/*
 * Pairs of data buffers (rx and tx halves): QP i uses pair i % bufs (--buffers, default
 * WN_PERF_DEFAULT_BUFS). Every tx half holds the same pattern, so QPs sharing an rx half
 * write the same octets and the check still sees each of them; 16,384 QPs of 64 KiB would
 * otherwise map 2 GiB a side.
 */

void
perf_yield(void)
{
	sched_yield();
}

static uint32_t
umax(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static uint32_t
umin(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t
pow2_at_least(uint32_t v)
{
	uint32_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

uint32_t
perf_nconn(const struct perf_rnic *r)
{
	return r->ops->lat ? 1 : r->qps;
}

static const char *
cm_event_name(uint32_t e)
{
	static const char *const n[] = {
		"ADDR_RESOLVED", "ADDR_ERROR", "ROUTE_RESOLVED", "ROUTE_ERROR", "CONNECT_REQUEST",
		"CONNECT_RESPONSE", "CONNECT_ERROR", "UNREACHABLE", "REJECTED", "ESTABLISHED",
		"DISCONNECTED", "DEVICE_REMOVAL",
	};

	return e < sizeof(n) / sizeof(n[0]) ? n[e] : "?";
}

static const char *
wc_status_name(uint8_t s)
{
	switch (s) {
	case WN_QUEUE_WC_SUCCESS: return "success";
	case WN_QUEUE_WC_LOC_LEN_ERR: return "local length error";
	case WN_QUEUE_WC_LOC_QP_OP_ERR: return "local QP operation error";
	case WN_QUEUE_WC_LOC_PROT_ERR: return "local protection error";
	case WN_QUEUE_WC_WR_FLUSH_ERR: return "flushed";
	case WN_QUEUE_WC_BAD_RESP_ERR: return "bad response";
	case WN_QUEUE_WC_LOC_ACCESS_ERR: return "local access error";
	case WN_QUEUE_WC_REM_INV_REQ_ERR: return "remote invalid request";
	case WN_QUEUE_WC_REM_ACCESS_ERR: return "remote access error";
	case WN_QUEUE_WC_REM_OP_ERR: return "remote operation error";
	case WN_QUEUE_WC_RETRY_EXC_ERR: return "retry exceeded";
	case WN_QUEUE_WC_FATAL_ERR: return "fatal error";
	default: return "error";
	}
}

/* ------------------------------------------------------------------------ rings */

int
perf_post_send(struct perf_rnic *r, struct perf_conn *c, uint8_t opcode, uint8_t flags,
	       const void *laddr, uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey,
	       uint64_t wr_id)
{
	struct wn_queue_swqe *w;
	struct wn_queue_sge *sge;
	int64_t space;

	space = r->dv->wq_begin(c->qp, false);
	if (space < 0)
		return -EIO;
	if (space == 0) {
		r->dv->wq_end(c->qp, false, 0);
		return -EAGAIN;
	}
	w = r->dv->wq_slot(c->qp, false, 0);
	memset(w, 0, WN_QUEUE_SWQE_HDR);
	w->wr_id = wr_id;
	w->opcode = opcode;
	w->flags = flags;
	w->u.rdma.remote_addr = raddr;
	w->u.rdma.rkey = rkey;
	if (flags & WN_QUEUE_SEND_INLINE) {
		/* the octets are the WQE's: the caller may reuse its buffer at once */
		memcpy((uint8_t *)w + WN_QUEUE_SWQE_HDR, laddr, len);
		w->inline_len = len;
		r->dv->wq_end(c->qp, false, 1);
		if (flags & WN_QUEUE_SEND_SIGNALED)
			c->outstanding++;
		return 0;
	}
	w->num_sge = 1;
	sge = (struct wn_queue_sge *)((uint8_t *)w + WN_QUEUE_SWQE_HDR);
	sge->addr = (uint64_t)(uintptr_t)laddr;
	sge->length = len;
	sge->lkey = lkey;
	r->dv->wq_end(c->qp, false, 1);
	if (flags & WN_QUEUE_SEND_SIGNALED)
		c->outstanding++;
	return 0;
}

int
perf_post_data(struct perf_rnic *r, struct perf_conn *c, uint8_t opcode, uint32_t size,
	       uint32_t n)
{
	const uint8_t *laddr = opcode == WN_QUEUE_WR_RDMA_READ ? c->rx : c->tx;
	uint64_t wr_id = perf_wr_id(c->index, PERF_WR_DATA, 0);
	int64_t space;
	uint32_t k;

	space = r->dv->wq_begin(c->qp, false);
	if (space < 0)
		return -EIO;
	k = (uint64_t)space < n ? (uint32_t)space : n;
	for (uint32_t i = 0; i < k; i++) {
		struct wn_queue_swqe *w = r->dv->wq_slot(c->qp, false, i);
		struct wn_queue_sge *sge = (struct wn_queue_sge *)((uint8_t *)w +
								   WN_QUEUE_SWQE_HDR);

		memset(w, 0, WN_QUEUE_SWQE_HDR);
		w->wr_id = wr_id;
		w->opcode = opcode;
		w->flags = WN_QUEUE_SEND_SIGNALED;
		w->num_sge = 1;
		if (opcode != WN_QUEUE_WR_SEND) {
			w->u.rdma.remote_addr = c->raddr;
			w->u.rdma.rkey = c->rkey;
		}
		sge->addr = (uint64_t)(uintptr_t)laddr;
		sge->length = size;
		sge->lkey = r->key;
	}
	r->dv->wq_end(c->qp, false, k);
	c->outstanding += k;
	c->posted += k;
	return (int)k;
}

int
perf_post_recv(struct perf_rnic *r, struct perf_conn *c, void *addr, uint32_t len, uint32_t lkey,
	       uint64_t wr_id)
{
	struct wn_queue_rwqe *w;
	struct wn_queue_sge *sge;
	int64_t space;

	space = r->dv->wq_begin(c->qp, true);
	if (space < 0)
		return -EIO;
	if (space == 0) {
		r->dv->wq_end(c->qp, true, 0);
		return -EAGAIN;
	}
	w = r->dv->wq_slot(c->qp, true, 0);
	w->wr_id = wr_id;
	w->num_sge = 1;
	w->rsvd = 0;
	sge = (struct wn_queue_sge *)((uint8_t *)w + WN_QUEUE_RWQE_HDR);
	sge->addr = (uint64_t)(uintptr_t)addr;
	sge->length = len;
	sge->lkey = lkey;
	r->dv->wq_end(c->qp, true, 1);
	return 0;
}

struct perf_conn *
perf_conn_of(struct perf_rnic *r, uint64_t wr_id)
{
	uint32_t i = perf_wr_conn(wr_id);

	return i >= 1 && i <= r->qps ? &r->conn[i - 1] : NULL;
}

/* Post the receive a data connection keeps: the rx half, or (send_bw sender) the credit. */
static int
post_data_recv(struct perf_rnic *r, struct perf_conn *c, enum perf_wr_kind kind)
{
	if (kind == PERF_WR_CREDIT)
		return perf_post_recv(r, c, c->credit_slot, PERF_CTL_SLOT, r->ctl_key,
				      perf_wr_id(c->index, PERF_WR_CREDIT, 0));
	return perf_post_recv(r, c, c->rx, r->max_size, r->key,
			      perf_wr_id(c->index, PERF_WR_RECV, 0));
}

int
perf_repost(struct perf_rnic *r, const struct wn_queue_cqe *e)
{
	struct perf_conn *c = perf_conn_of(r, e->wr_id);

	if (c == NULL)
		return -EPROTO;
	return post_data_recv(r, c, perf_wr_kind_of(e->wr_id));
}

static void
report_wc(const struct perf_rnic *r, const struct wn_queue_cqe *e)
{
	fprintf(stderr, "%s: completion error on QP %" PRIu32 ": %s (status %u, vendor_err 0x%"
		PRIx32 ", opcode %u, wr kind %u, connection %" PRIu32 ")\n", r->ops->name,
		e->qp_num, wc_status_name(e->status), e->status, e->vendor_err, e->opcode,
		perf_wr_kind_of(e->wr_id), perf_wr_conn(e->wr_id));
}

int
perf_poll(struct perf_rnic *r, struct perf_cq *cq, struct wn_queue_cqe *e, int n)
{
	int got;

	/* an error completion found behind good ones in the last batch */
	if (r->wc_err.status != WN_QUEUE_WC_SUCCESS) {
		report_wc(r, &r->wc_err);
		r->wc_err.status = WN_QUEUE_WC_SUCCESS;
		return -EIO;
	}
	got = r->dv->poll_cq(cq, e, n);
	if (got < 0) {
		fprintf(stderr, "%s: CQ ring corrupt (%s)\n", r->ops->name, strerror(-got));
		return got;
	}
	for (int i = 0; i < got; i++) {
		if (e[i].status == WN_QUEUE_WC_SUCCESS)
			continue;
		if (i == 0) {
			report_wc(r, &e[i]);
			return -EIO;
		}
		/* hand out the good ones first (a BYE before the flush of a closing peer) */
		r->wc_err = e[i];
		return i;
	}
	return got;
}

/* ---------------------------------------------------------------------- control */

static struct perf_msg *
ctl_slot(struct perf_rnic *r, uint32_t i)
{
	return (struct perf_msg *)(r->ctl_mem + (size_t)i * PERF_CTL_SLOT);
}

static int
ctl_post_recv(struct perf_rnic *r, uint32_t slot)
{
	return perf_post_recv(r, &r->ctl, ctl_slot(r, slot), PERF_CTL_SLOT, r->ctl_key,
			      perf_wr_id(0, PERF_WR_CTL_RECV, slot));
}

/* Take what the control CQ holds. @return completions handled, or -errno. */
static int
ctl_poll(struct perf_rnic *r)
{
	struct wn_queue_cqe e[PERF_CTL_SLOTS];
	int n = perf_poll(r, r->ctl_cq, e, PERF_CTL_SLOTS);

	for (int i = 0; i < n; i++) {
		uint32_t slot = perf_wr_slot(e[i].wr_id);
		struct perf_msg m;
		int rc;

		if (perf_wr_kind_of(e[i].wr_id) == PERF_WR_CTL_SEND) {
			r->ctl_outstanding--;
			continue;
		}
		if (slot >= PERF_CTL_SLOTS || e[i].byte_len != sizeof(m)) {
			fprintf(stderr, "%s: control message of %" PRIu32 " octets\n",
				r->ops->name, e[i].byte_len);
			return -EPROTO;
		}
		memcpy(&m, ctl_slot(r, slot), sizeof(m));
		if (m.magic != PERF_MAGIC || r->ctl_q_n == PERF_CTL_SLOTS) {
			fprintf(stderr, "%s: garbled control message\n", r->ops->name);
			return -EPROTO;
		}
		r->ctl_q[(r->ctl_q_head + r->ctl_q_n++) % PERF_CTL_SLOTS] = m;
		rc = ctl_post_recv(r, slot);
		if (rc != 0)
			return rc;
	}
	return n;
}

/* Wait for control completions (the device decides how: spin and sleep, or run the shard). */
static int
ctl_wait(struct perf_rnic *r, double deadline)
{
	uint32_t spins = 0;

	for (;;) {
		int n = ctl_poll(r);

		if (n != 0)
			return n < 0 ? n : 0;
		if (wn_perf_now() > deadline)
			return -ETIMEDOUT;
		n = r->dv->wait(r, r->ctl_cq, &spins);
		if (n != 0)
			return n;
		n = ctl_poll(r); /* a completion that came before the arming notifies nobody */
		if (n != 0)
			return n < 0 ? n : 0;
	}
}

int
perf_ctl_send(struct perf_rnic *r, const struct perf_msg *m)
{
	double deadline = wn_perf_now() + r->p->timeout;
	struct perf_msg *slot;
	int rc;

	while (r->ctl_outstanding >= PERF_CTL_TX) {
		rc = ctl_wait(r, deadline);
		if (rc != 0)
			return rc;
	}
	slot = ctl_slot(r, PERF_CTL_SLOTS + r->ctl_tx_next);
	r->ctl_tx_next = (r->ctl_tx_next + 1) % PERF_CTL_TX;
	memcpy(slot, m, sizeof(*m));
	slot->magic = PERF_MAGIC;
	rc = perf_post_send(r, &r->ctl, WN_QUEUE_WR_SEND, WN_QUEUE_SEND_SIGNALED, slot,
			    sizeof(*m), r->ctl_key, 0, 0, perf_wr_id(0, PERF_WR_CTL_SEND, 0));
	if (rc == 0)
		r->ctl_outstanding++;
	return rc;
}

int
perf_ctl_try_recv(struct perf_rnic *r, struct perf_msg *m)
{
	if (r->ctl_q_n == 0) {
		int n = ctl_poll(r);

		if (n < 0)
			return n;
		if (r->ctl_q_n == 0)
			return 0;
	}
	*m = r->ctl_q[r->ctl_q_head];
	r->ctl_q_head = (r->ctl_q_head + 1) % PERF_CTL_SLOTS;
	r->ctl_q_n--;
	return 1;
}

int
perf_ctl_recv(struct perf_rnic *r, struct perf_msg *m, uint16_t want, double secs)
{
	double deadline = wn_perf_now() + secs;
	int rc;

	while ((rc = perf_ctl_try_recv(r, m)) == 0) {
		rc = ctl_wait(r, deadline);
		if (rc != 0)
			break;
	}
	if (rc == -ETIMEDOUT)
		fprintf(stderr, "%s: no control message from the peer for %.0f s\n", r->ops->name,
			secs);
	if (rc < 0)
		return rc;
	if (want != 0 && m->type != want) {
		fprintf(stderr, "%s: control message %u where %u was expected\n", r->ops->name,
			m->type, want);
		return -EPROTO;
	}
	return 0;
}

/* ---------------------------------------------------------------------- buffers */

void
perf_buffers_reset(struct perf_rnic *r, uint32_t size, uint64_t seed, bool pattern_rx)
{
	for (uint32_t i = 0; i < perf_nconn(r); i++) {
		struct perf_conn *c = &r->conn[i];

		wn_perf_pattern_fill(c->tx, size, seed, 0);
		if (pattern_rx)
			memcpy(c->rx, c->tx, size);
		else
			memset(c->rx, 0, size);
	}
}

int
perf_check_rx(struct perf_rnic *r, uint32_t len, uint64_t seed, uint64_t *aux)
{
	for (uint32_t i = 0; i < perf_nconn(r); i++) {
		int64_t bad = wn_perf_pattern_check(r->conn[i].rx, len, seed, 0);

		if (bad >= 0) {
			fprintf(stderr, "%s: QP %u: received data differs at octet %" PRId64
				" of %" PRIu32 " (0x%02x, want 0x%02x)\n", r->ops->name, i, bad,
				len, r->conn[i].rx[bad], wn_perf_pattern(seed, (uint64_t)bad));
			*aux = (uint64_t)bad + 1;
			return -EIO;
		}
	}
	return 0;
}

static void *
map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* MRs and CQs once the run's geometry (qps, depth, max_size) is known. */
static int
resources(struct perf_rnic *r)
{
	size_t half = r->max_size;
	uint32_t cqe;
	int rc;

	r->sq_depth = pow2_at_least(r->ops->lat ? PERF_SMALL_RQ : r->depth + PERF_SMALL_RQ);
	r->rq_depth = r->ops->send && !r->ops->lat ?
			      pow2_at_least(umax(2 * r->depth, PERF_SMALL_RQ)) :
			      PERF_SMALL_RQ;
	if (r->sq_depth > r->dev.max_qp_wr || r->rq_depth > r->dev.max_qp_wr) {
		fprintf(stderr, "%s: --depth %u needs %u WRs per queue; warpnicd allows %u\n",
			r->ops->name, r->depth, umax(r->sq_depth, r->rq_depth),
			r->dev.max_qp_wr);
		return -EINVAL;
	}
	/* control slots, then send_bw's credit words, one slot per QP */
	r->ctl_len = umax(8192, ((PERF_CTL_CREDIT0 + r->qps) * PERF_CTL_SLOT + 4095) & ~4095u);
	r->mem_len = (2 * half * umin(r->qps, r->bufs) + 4095) & ~(size_t)4095;
	r->ctl_mem = map_anon(r->ctl_len);
	r->mem = map_anon(r->mem_len);
	if (r->ctl_mem == NULL || r->mem == NULL)
		return -ENOMEM;
	rc = r->dv->reg_mr(r, r->ctl_mem, r->ctl_len, &r->ctl_key);
	if (rc == 0)
		rc = r->dv->reg_mr(r, r->mem, r->mem_len, &r->key);
	if (rc != 0) {
		fprintf(stderr, "%s: memory registration failed: %s\n", r->ops->name,
			strerror(-rc));
		return rc;
	}
	for (uint32_t i = 0; i < r->qps; i++) {
		struct perf_conn *c = &r->conn[i];

		c->index = i + 1;
		c->rx = r->mem + 2 * half * (i % r->bufs);
		c->tx = c->rx + half;
		c->credit_slot = (uint64_t *)(r->ctl_mem + (PERF_CTL_CREDIT0 + i) * PERF_CTL_SLOT);
	}
	r->ctl.index = 0;
	r->ctl_cq = r->dv->cq_create(r, 4 * PERF_CTL_SLOTS, true);
	cqe = umin(r->qps * r->sq_depth, r->dev.max_cqe);
	r->scq = r->ctl_cq == NULL ? NULL : r->dv->cq_create(r, cqe, false);
	cqe = umin(r->qps * r->rq_depth, r->dev.max_cqe);
	r->rcq = r->scq == NULL ? NULL : r->dv->cq_create(r, cqe, false);
	if (r->rcq == NULL) {
		fprintf(stderr, "%s: CQ creation failed: %s\n", r->ops->name, strerror(errno));
		return -errno;
	}
	return 0;
}

/* A QP for connection @p c (control: its own CQ) with its receives posted. */
static int
qp_create(struct perf_rnic *r, struct perf_conn *c)
{
	struct wn_ctl_create_qp_req q;
	bool ctl = c == &r->ctl;
	uint32_t nrecv = 0;
	int rc = 0;

	memset(&q, 0, sizeof(q));
	q.qp_type = WN_CTL_QPT_RC;
	q.max_send_wr = ctl ? PERF_CTL_SLOTS : r->sq_depth;
	q.max_recv_wr = ctl ? PERF_CTL_SLOTS : r->rq_depth;
	q.max_send_sge = 1;
	q.max_recv_sge = 1;
	q.max_inline_data = sizeof(uint64_t); /* send_bw credits */
	q.cookie = c->index;
	c->qp = r->dv->qp_create(r, &q, ctl ? r->ctl_cq : r->scq, ctl ? r->ctl_cq : r->rcq);
	if (c->qp == NULL) {
		fprintf(stderr, "%s: QP creation failed: %s\n", r->ops->name, strerror(errno));
		return -errno;
	}
	/* receives go in before the peer can send (RFC 5040 §5.3: no buffer, no Send) */
	if (ctl) {
		for (uint32_t s = 0; s < PERF_CTL_SLOTS && rc == 0; s++)
			rc = ctl_post_recv(r, s);
		return rc;
	}
	if (!r->ops->send)
		return 0;
	if (r->ops->lat)
		nrecv = PERF_SMALL_RQ;
	else
		nrecv = r->server ? r->rq_depth : PERF_SMALL_RQ;
	for (uint32_t k = 0; k < nrecv && rc == 0; k++)
		rc = post_data_recv(r, c, !r->ops->lat && !r->server ? PERF_WR_CREDIT
								    : PERF_WR_RECV);
	if (!r->ops->lat && r->server)
		c->credit_sent = r->rq_depth; /* the sender starts with one credit per receive */
	return rc;
}

/* --------------------------------------------------------------------------- CM */

static int
parse_addr(const char *s, uint16_t port, struct wn_ctl_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->port = port;
	if (s == NULL) {
		a->family = WN_CTL_AF_INET; /* INADDR_ANY, as rdma_bind_addr() would say */
		return 0;
	}
	if (inet_pton(AF_INET, s, a->addr) == 1)
		a->family = WN_CTL_AF_INET;
	else if (inet_pton(AF_INET6, s, a->addr) == 1)
		a->family = WN_CTL_AF_INET6;
	else
		return -EINVAL;
	return 0;
}

/* Next CM event within --timeout (a server's first: without limit unless --timeout). */
static int
cm_next(struct perf_rnic *r, struct wn_ctl_cm_event *ev)
{
	bool forever = r->server && r->ctl.qp == NULL && !r->p->timeout_set;
	int rc = r->dv->cm_next(r, ev, forever ? -1 : (int)(r->p->timeout * 1000));

	if (rc == -ETIMEDOUT)
		fprintf(stderr, "%s: no connection event for %.0f s\n", r->ops->name,
			r->p->timeout);
	else if (rc != 0)
		fprintf(stderr, "%s: CM events: %s\n", r->ops->name, strerror(-rc));
	return rc;
}

int
perf_cm_wait(struct perf_rnic *r, uint32_t id, uint32_t want, struct wn_ctl_cm_event *ev)
{
	for (;;) {
		int rc = cm_next(r, ev);

		if (rc != 0)
			return rc;
		if (ev->id != id)
			continue;
		if (ev->event == want)
			return 0;
		if (ev->event == WN_CTL_CM_EV_REJECTED && ev->param.pd_len >= sizeof(struct
										     perf_cm_pd)) {
			struct perf_cm_pd pd;

			memcpy(&pd, ev->param.pd, sizeof(pd));
			pd.reason[sizeof(pd.reason) - 1] = '\0';
			fprintf(stderr, "%s: the server refused: %s\n", r->ops->name, pd.reason);
		} else {
			fprintf(stderr, "%s: %s (status %d) while waiting for %s\n", r->ops->name,
				cm_event_name(ev->event), ev->status, cm_event_name(want));
		}
		return -ECONNREFUSED;
	}
}

static void
conn_param(struct perf_rnic *r, struct wn_ctl_conn_param *cp, const struct perf_cm_pd *pd)
{
	memset(cp, 0, sizeof(*cp));
	cp->ird = r->dev.max_qp_rd_atom;
	cp->ord = r->dev.max_qp_init_rd_atom;
	cp->pd_len = sizeof(*pd);
	memcpy(cp->pd, pd, sizeof(*pd));
}

static int
pd_from(const struct wn_ctl_cm_event *ev, struct perf_cm_pd *pd)
{
	if (ev->param.pd_len < sizeof(*pd))
		return -EPROTO;
	memcpy(pd, ev->param.pd, sizeof(*pd));
	if (pd->magic != PERF_MAGIC || pd->version != PERF_VERSION)
		return -EPROTO;
	pd->mode[sizeof(pd->mode) - 1] = '\0';
	return 0;
}

/* Client: connect @p c (control, or a data QP) to the server. */
static int
client_connect(struct perf_rnic *r, struct perf_conn *c, const struct wn_ctl_addr *dst,
	       struct perf_cm_pd *pd)
{
	struct wn_ctl_conn_param cp;
	struct wn_ctl_cm_event ev;
	int rc;

	rc = r->dv->resolve(r, c, dst);
	if (rc == 0)
		rc = qp_create(r, c);
	if (rc != 0) {
		fprintf(stderr, "%s: connection %u set-up: %s\n", r->ops->name, c->index,
			strerror(-rc));
		return rc;
	}
	conn_param(r, &cp, pd);
	rc = r->dv->connect(r, c, dst, &cp);
	if (rc == 0)
		rc = perf_cm_wait(r, c->id, WN_CTL_CM_EV_ESTABLISHED, &ev);
	if (rc == 0 && (rc = pd_from(&ev, pd)) != 0)
		fprintf(stderr, "%s: the server's answer is not warpnic-perf's\n", r->ops->name);
	if (rc == 0 && pd->status != 0) {
		pd->reason[sizeof(pd->reason) - 1] = '\0';
		fprintf(stderr, "%s: the server refused: %s\n", r->ops->name, pd->reason);
		rc = pd->status;
	}
	return rc;
}

static int
client_setup(struct perf_rnic *r)
{
	struct wn_ctl_addr dst;
	struct perf_cm_pd pd;
	int rc;

	if (parse_addr(r->p->client, r->p->port, &dst) != 0) {
		fprintf(stderr, "%s: --client wants an IPv4 or IPv6 address, not '%s'\n",
			r->ops->name, r->p->client);
		return -EINVAL;
	}
	rc = resources(r);
	if (rc != 0)
		return rc;
	memset(&pd, 0, sizeof(pd));
	pd.magic = PERF_MAGIC;
	pd.version = PERF_VERSION;
	pd.qps = r->qps;
	pd.depth = r->depth;
	pd.max_size = r->max_size;
	pd.bufs = r->bufs;
	snprintf(pd.mode, sizeof(pd.mode), "%s", r->ops->name);
	rc = client_connect(r, &r->ctl, &dst, &pd);
	for (uint32_t i = 0; i < r->qps && rc == 0; i++) {
		struct perf_conn *c = &r->conn[i];

		memset(&pd, 0, sizeof(pd));
		pd.magic = PERF_MAGIC;
		pd.version = PERF_VERSION;
		pd.index = (uint16_t)c->index;
		pd.addr = (uint64_t)(uintptr_t)c->rx;
		pd.rkey = r->key;
		pd.len = r->max_size;
		rc = client_connect(r, c, &dst, &pd);
		c->raddr = pd.addr;
		c->rkey = pd.rkey;
		c->credits = pd.len; /* send_bw: the receives the server posted */
		if (rc == 0 && pd.index != c->index)
			rc = -EPROTO;
	}
	return rc;
}

/* Server: answer one CONNECT_REQUEST. @return 0, or -errno (the request was rejected). */
static int
server_request(struct perf_rnic *r, const struct wn_ctl_cm_event *ev, uint32_t *pending)
{
	struct perf_cm_pd pd, ans;
	struct wn_ctl_conn_param cp;
	struct perf_conn *c = NULL;
	int rc = pd_from(ev, &pd);

	memset(&ans, 0, sizeof(ans));
	ans.magic = PERF_MAGIC;
	ans.version = PERF_VERSION;
	if (rc != 0) {
		snprintf(ans.reason, sizeof(ans.reason), "not a warpnic-perf %s client",
			 r->ops->name);
	} else if (pd.index == 0 && r->ctl.qp != NULL) {
		rc = -EBUSY;
		snprintf(ans.reason, sizeof(ans.reason), "busy with another client");
	} else if (pd.index == 0) {
		if (strcmp(pd.mode, r->ops->name) != 0) {
			rc = -EINVAL;
			snprintf(ans.reason, sizeof(ans.reason), "server runs --mode %s, not %s",
				 r->ops->name, pd.mode);
		} else if (pd.qps < 1 || pd.qps > PERF_RNIC_MAX_QPS || pd.depth < 1 ||
			   pd.depth > 4096 || pd.max_size < 1 || pd.max_size > PERF_RNIC_MAX_SIZE ||
			   pd.bufs < 1 || pd.bufs > PERF_RNIC_MAX_QPS) {
			rc = -EINVAL;
			snprintf(ans.reason, sizeof(ans.reason), "bad geometry");
		} else {
			r->qps = pd.qps;
			r->depth = pd.depth;
			r->max_size = pd.max_size;
			r->bufs = pd.bufs;
			rc = resources(r);
			if (rc != 0)
				snprintf(ans.reason, sizeof(ans.reason), "no resources: %s",
					 strerror(-rc));
			else
				c = &r->ctl;
		}
	} else if (r->ctl.qp == NULL || pd.index > r->qps || r->conn[pd.index - 1].qp != NULL) {
		rc = -EINVAL;
		snprintf(ans.reason, sizeof(ans.reason), "unexpected data connection %u",
			 pd.index);
	} else {
		c = &r->conn[pd.index - 1];
		c->raddr = pd.addr;
		c->rkey = pd.rkey;
		ans.index = pd.index;
		ans.addr = (uint64_t)(uintptr_t)c->rx;
		ans.rkey = r->key;
		ans.len = r->ops->send && !r->ops->lat ? r->rq_depth : r->max_size;
	}
	if (c != NULL) {
		c->id = ev->id;
		rc = qp_create(r, c);
		if (rc != 0)
			snprintf(ans.reason, sizeof(ans.reason), "QP creation: %s", strerror(-rc));
	}
	ans.status = rc;
	conn_param(r, &cp, &ans);
	if (rc != 0) {
		fprintf(stderr, "%s: refused a connection: %s\n", r->ops->name, ans.reason);
		r->dv->answer(r, ev->id, NULL, &cp);
		return rc;
	}
	rc = r->dv->answer(r, ev->id, c, &cp);
	if (rc == 0)
		(*pending)++;
	return rc;
}

static int
server_setup(struct perf_rnic *r)
{
	struct wn_ctl_addr a;
	uint32_t pending = 0, established = 0;
	int rc;

	if (parse_addr(r->p->bind, r->p->port, &a) != 0) {
		fprintf(stderr, "%s: --bind wants an IPv4 or IPv6 address, not '%s'\n",
			r->ops->name, r->p->bind);
		return -EINVAL;
	}
	rc = r->dv->listen(r, &a, PERF_RNIC_MAX_QPS + 1);
	if (rc != 0) {
		fprintf(stderr, "%s: listening on port %u: %s\n", r->ops->name, r->p->port,
			strerror(-rc));
		return rc;
	}
	fprintf(stderr, "%s: server listening on port %u\n", r->ops->name, r->p->port);
	/* the control connection, then --qps data connections, in whatever order */
	while (r->ctl.qp == NULL || established < r->qps + 1) {
		struct wn_ctl_cm_event ev;

		rc = cm_next(r, &ev);
		if (rc != 0)
			return rc;
		switch (ev.event) {
		case WN_CTL_CM_EV_CONNECT_REQUEST:
			rc = server_request(r, &ev, &pending);
			if (rc != 0 && r->ctl.qp != NULL)
				return rc; /* the accepted client sent garbage */
			break;
		case WN_CTL_CM_EV_ESTABLISHED:
			if (pending > 0) {
				pending--;
				established++;
			}
			break;
		case WN_CTL_CM_EV_DISCONNECTED:
		case WN_CTL_CM_EV_CONNECT_ERROR:
			fprintf(stderr, "%s: %s while the client connected\n", r->ops->name,
				cm_event_name(ev.event));
			return -ECONNRESET;
		default:
			break;
		}
	}
	return 0;
}

/* ----------------------------------------------------------------------- driver */

int
perf_rnic_parse(struct wn_perf_params *p, const struct perf_rnic_ops *ops)
{
	if (!p->server && p->client == NULL) {
		fprintf(stderr, "%s: give --server or --client ADDR\n", ops->name);
		return -EINVAL;
	}
	if (ops->lat && p->qps != 1) {
		fprintf(stderr, "%s: latency modes use one QP\n", ops->name);
		return -EINVAL;
	}
	if (p->server && (p->nb_sizes > 0 || p->sweep || p->iters_set || p->duration_set ||
			  p->json != NULL || p->csv != NULL)) {
		fprintf(stderr, "%s: the client chooses sizes and iterations and reports\n",
			ops->name);
		return -EINVAL;
	}
	if (p->client != NULL && p->bind != NULL) {
		fprintf(stderr, "%s: --bind is for --server\n", ops->name);
		return -EINVAL;
	}
	if (p->server)
		return 0;
	return wn_perf_sizes_default(p, ops->name, ops->def_size, 1, PERF_RNIC_MAX_SIZE);
}

/*
 * The measurement loop (testpmd's forwarding loop): every iteration the device's receive half
 * (run to completion: the shard's rx_burst through placement and CQEs), the mode's step (post,
 * poll), the device's transmit half (SQs, FPDUs, TCP, tx_burst). @return 0 or -errno.
 */
static int
engine_loop(struct perf_rnic *r, const struct perf_msg *start,
	    int (*step)(struct perf_rnic *r, const struct perf_msg *start))
{
	for (;;) {
		int rc;

		r->dv->loop_rx(r);
		r->idle = false;
		rc = step(r, start);
		r->dv->loop_tx(r, r->idle);
		if (rc != 0)
			return rc < 0 ? rc : 0;
	}
}

static int
serve(struct perf_rnic *r)
{
	for (;;) {
		struct perf_msg start, ready, end, res;
		int rc;

		rc = perf_ctl_recv(r, &start, 0, r->p->timeout);
		if (rc != 0)
			return rc;
		if (start.type == PERF_MSG_BYE)
			return 0;
		if (start.type != PERF_MSG_START || start.size < 1 || start.size > r->max_size) {
			fprintf(stderr, "%s: unexpected control message %u (size %" PRIu32 ")\n",
				r->ops->name, start.type, start.size);
			return -EPROTO;
		}
		for (uint32_t i = 0; i < r->qps; i++)
			r->conn[i].done = r->conn[i].posted = 0;
		memset(&ready, 0, sizeof(ready));
		ready.type = PERF_MSG_READY;
		ready.status = r->ops->prepare(r, &start, &ready);
		rc = perf_ctl_send(r, &ready);
		if (rc != 0 || ready.status != 0)
			return rc != 0 ? rc : ready.status;
		memset(&r->run, 0, sizeof(r->run));
		rc = r->ops->server_begin(r, &start);
		if (rc == 0)
			rc = engine_loop(r, &start, r->ops->server_step);
		if (rc != 0)
			return rc;
		end = r->run.end;
		memset(&res, 0, sizeof(res));
		res.type = PERF_MSG_RESULT;
		res.status = r->ops->check(r, &start, &end, &res.aux);
		for (uint32_t i = 0; i < perf_nconn(r); i++)
			res.count += r->conn[i].done;
		rc = perf_ctl_send(r, &res);
		if (rc != 0)
			return rc;
	}
}

/* Client: one measurement of one size (START ... RESULT, both sides' checks). */
static int
drive_size(struct perf_rnic *r, uint32_t size, uint64_t iters, double secs,
	   struct wn_perf_row *row)
{
	struct perf_msg start, ready, end, res;
	uint64_t aux = 0;
	int rc, ret;

	memset(&start, 0, sizeof(start));
	start.type = PERF_MSG_START;
	start.size = size;
	start.iters = iters;
	start.seed = wn_perf_now_ns() * 0x9e3779b97f4a7c15ull + size;
	start.ms = isinf(secs) ? 0 : (uint32_t)(secs * 1000) + 1;
	rc = r->ops->prepare(r, &start, NULL);
	if (rc == 0)
		rc = perf_ctl_send(r, &start);
	if (rc == 0)
		rc = perf_ctl_recv(r, &ready, PERF_MSG_READY, r->p->timeout);
	if (rc == 0 && ready.status != 0) {
		fprintf(stderr, "%s: the server could not prepare size %" PRIu32 ": %s\n",
			r->ops->name, size, strerror(-ready.status));
		rc = ready.status;
	}
	if (rc != 0)
		return rc;
	for (uint32_t k = 0; k < r->qps; k++)
		r->conn[k].done = r->conn[k].posted = 0;
	memset(&end, 0, sizeof(end));
	memset(&r->run, 0, sizeof(r->run));
	rc = r->ops->client_begin(r, &start);
	if (rc == 0)
		rc = engine_loop(r, &start, r->ops->client_step);
	/* the end runs after a failed step too: it frees what begin took */
	ret = r->ops->client_end(r, &start, &end, row);
	if (rc == 0)
		rc = ret;
	if (rc != 0)
		return rc;
	end.type = PERF_MSG_END;
	rc = perf_ctl_send(r, &end);
	if (rc == 0)
		rc = perf_ctl_recv(r, &res, PERF_MSG_RESULT, r->p->timeout);
	if (rc == 0 && res.status != 0) {
		fprintf(stderr, "%s: size %" PRIu32 ": the server's check failed (%s%s%" PRIu64
			")\n", r->ops->name, size, strerror(-res.status),
			res.aux ? ", first bad octet " : ", received ",
			res.aux ? res.aux - 1 : res.count);
		return res.status;
	}
	if (rc != 0)
		return rc;
	rc = r->ops->check(r, &start, &end, &aux);
	if (rc != 0)
		fprintf(stderr, "%s: size %" PRIu32 ": received data is wrong\n", r->ops->name,
			size);
	return rc;
}

static int
drive(struct perf_rnic *r, struct wn_perf_report *rep)
{
	struct wn_perf_row rows[WN_PERF_MAX_REPS];
	uint64_t iters;
	double secs;
	int rc = 0;

	wn_perf_budget(r->p, r->ops->def_iters, &iters, &secs);
	for (unsigned int i = 0; i < r->p->nb_sizes && rc == 0; i++) {
		struct wn_perf_row *row = wn_perf_report_row(rep, r->ops->name, r->p->sizes[i],
							     NULL, NULL);

		if (row == NULL)
			return -ENOSPC;
		for (unsigned int k = 0; k < r->p->reps && rc == 0; k++) {
			rows[k] = *row;
			rc = drive_size(r, row->size, iters, secs, &rows[k]);
		}
		if (rc == 0)
			wn_perf_row_median(row, rows, r->p->reps, r->ops->lat ? 1 : 0);
	}
	return rc;
}

int
perf_rnic_run(const struct wn_perf_params *p, const struct perf_rnic_ops *ops)
{
	static struct perf_rnic r;
	static struct wn_perf_report rep;
	int rc;

	memset(&r, 0, sizeof(r));
	r.p = p;
	r.ops = ops;
	r.dv = p->rtc ? &perf_dev_rtc : &perf_dev_client;
	r.server = p->server;
	r.qps = p->qps;
	r.depth = p->depth;
	r.bufs = p->bufs;
	for (unsigned int i = 0; i < p->nb_sizes; i++)
		r.max_size = umax(r.max_size, p->sizes[i]);
	rc = r.dv->open(&r);
	if (rc == 0)
		rc = p->server ? server_setup(&r) : client_setup(&r);
	if (rc == 0 && p->server) {
		rc = serve(&r);
		if (rc == 0)
			fprintf(stderr, "%s: served one client\n", ops->name);
	} else if (rc == 0) {
		struct perf_msg bye;

		memset(&rep, 0, sizeof(rep));
		rep.mode = ops->name;
		rep.title = ops->title;
		rep.iters = p->iters;
		rep.qps = r.qps;
		rep.depth = ops->lat ? 1 : r.depth;
		rep.reps = p->reps;
		if (ops->lat) {
			rep.nb_cols = wn_perf_lat_cols(&rep, 0);
		} else {
			rep.nb_cols = 6;
			rep.col[0] = "Gbit/s";
			rep.col[1] = "Mmsg/s";
			rep.col[2] = "iters";
			/* each QP's share: the least, the median and the most (fairness) */
			rep.col[3] = "qp_min_Gbit/s";
			rep.col[4] = "qp_p50_Gbit/s";
			rep.col[5] = "qp_max_Gbit/s";
		}
		rc = drive(&r, &rep);
		memset(&bye, 0, sizeof(bye));
		bye.type = PERF_MSG_BYE;
		if (perf_ctl_send(&r, &bye) == 0) {
			/* let the BYE leave before the connection goes */
			double deadline = wn_perf_now() + 1.0;

			while (r.ctl_outstanding > 0 && ctl_wait(&r, deadline) == 0)
				;
		}
		if (rc == 0)
			rc = wn_perf_report_emit(&rep, p);
	}
	r.dv->close(&r);
	if (r.ctl_mem != NULL)
		munmap(r.ctl_mem, r.ctl_len);
	if (r.mem != NULL)
		munmap(r.mem, r.mem_len);
	return rc;
}
