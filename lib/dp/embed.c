/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp: RDMA for an application inside the shard's loop (wn_dp_embed.h). Its objects are
 * the dataplane's own (struct dp_cq, dp_qp, dp_conn, dp_listen, built around local
 * descriptors instead of the control thread's), marked local: not in the shared object table,
 * no lock on their rings, no DONE to a control thread; its connections' lib/cm events go to
 * a per-shard queue that wn_dp_cm_poll() drains instead of the control ring.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bitops.h>
#include <rte_common.h>
#include <rte_rcu_qsbr.h>

#include "dp_priv.h"
#include "wn_dp_embed.h"

/* Connection events a shard keeps for its application. */
/* First size of the events' queue (it doubles when full: no event is lost). */
#define EMBED_EVENTS 128
/* First local port wn_dp_connect() tries when it must pick one that steers to its shard. */
#define EMBED_PORT_LO 32768u
#define EMBED_PORT_HI 60999u

struct wn_dp_listener {
	struct dp_listen l;           /* first: wn_dp_conn_incoming()'s argument */
	TAILQ_ENTRY(wn_dp_listener) next;
};

struct dp_embed {
	struct wn_dp_cm_event *q;     /* events not polled yet: a ring that grows */
	uint32_t head, n, cap;
	uint32_t next_qpn;
	uint16_t next_port;
	uint8_t next_key;
	TAILQ_HEAD(, wn_dp_listener) listeners;
};

struct wn_dp_cq {
	struct dp_cq q;               /* first: the engines' view (cq_of_ring) */
	struct wn_server_dp_cq d;
	struct wn_queue_ring cons;    /* the application's view */
	struct wn_dp *dp;
	void *ring;
};

struct wn_dp_qp {
	struct dp_qp q;               /* first: freed by wn_dp_qp_free() */
	struct wn_server_dp_qp d;
	struct wn_queue_ring sq, rq;  /* the application's (producer) views */
	struct wn_dp *dp;
	void *ring;
};

static struct dp_embed *
embed_of(struct wn_dp *dp)
{
	if (dp->emb == NULL) {
		dp->emb = calloc(1, sizeof(*dp->emb));
		if (dp->emb == NULL)
			return NULL;
		dp->emb->next_qpn = 1;
		dp->emb->next_port = (uint16_t)(EMBED_PORT_LO + dp->idx * 977u % 4096u);
		TAILQ_INIT(&dp->emb->listeners);
	}
	return dp->emb;
}

static struct dp_conn *
conn_of(struct wn_dp_conn *c)
{
	return (struct dp_conn *)c;
}

static struct wn_dp_conn *
handle_of(struct dp_conn *c)
{
	return (struct wn_dp_conn *)c;
}

/* ---------------------------------------------------------------- memory */

/* lib/mem's writers are serialised: no control thread may write the table too. */
static int
mem_writable(const struct wn_dp *dp)
{
	if (dp->c.to_dp != NULL)
		return -EBUSY;
	return dp->c.mem != NULL ? 0 : -ENODEV;
}

int
wn_dp_pd_alloc(struct wn_dp *dp)
{
	int rc = mem_writable(dp);

	return rc != 0 ? rc : wn_mem_pd_alloc(dp->c.mem);
}

int
wn_dp_pd_free(struct wn_dp *dp, uint32_t pd)
{
	int rc = mem_writable(dp);

	return rc != 0 ? rc : wn_mem_pd_free(dp->c.mem, pd);
}

int
wn_dp_mr_reg(struct wn_dp *dp, uint32_t pd, void *addr, uint64_t len, uint32_t access,
	     uint32_t *stag)
{
	struct dp_embed *e = embed_of(dp);
	int rc = mem_writable(dp);

	if (rc != 0)
		return rc;
	if (e == NULL)
		return -ENOMEM;
	return wn_mem_mr_reg(dp->c.mem, pd, addr, len, (uint64_t)(uintptr_t)addr,
			     access & WN_MEM_ACCESS_MASK, e->next_key++, stag);
}

int
wn_dp_mr_dereg(struct wn_dp *dp, uint32_t stag)
{
	int rc = mem_writable(dp);

	if (rc != 0)
		return rc;
	if (wn_mem_pinned(dp->c.mem, stag) != 0)
		return -EBUSY; /* a zero-copy FPDU still references it */
	/* the grace period waits for every online lcore; this one holds no lookup now */
	if (dp->c.qs != NULL)
		rte_rcu_qsbr_thread_offline(dp->c.qs, dp->idx);
	rc = wn_mem_destroy(dp->c.mem, stag);
	if (dp->c.qs != NULL)
		rte_rcu_qsbr_thread_online(dp->c.qs, dp->idx);
	return rc;
}

/* ---------------------------------------------------------------- CQs */

static void *
ring_alloc(size_t align, uint64_t size)
{
	void *p = NULL;

	size = (size + align - 1) & ~(uint64_t)(align - 1);
	if (posix_memalign(&p, align, size) != 0)
		return NULL;
	memset(p, 0, size);
	return p;
}

struct wn_dp_cq *
wn_dp_cq_create(struct wn_dp *dp, uint32_t depth)
{
	struct wn_dp_cq *cq;
	uint64_t size;

	if (depth == 0 || depth > WN_QUEUE_MAX_DEPTH) {
		errno = EINVAL;
		return NULL;
	}
	depth = rte_align32pow2(depth);
	size = wn_queue_ring_size(WN_QUEUE_KIND_CQ, depth, 0, 0);
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return NULL;
	cq->ring = ring_alloc(WN_QUEUE_CACHE_LINE, size);
	if (cq->ring == NULL ||
	    wn_queue_ring_init(cq->ring, WN_QUEUE_KIND_CQ, depth, 0, 0) != 0)
		goto fail;
	cq->dp = dp;
	cq->d.depth = depth;
	cq->d.ring = cq->ring;
	cq->d.ring_size = size;
	cq->d.notify_fd = -1;
	if (wn_dp_cq_init(&cq->q, &cq->d) != 0 ||
	    wn_queue_cons_attach(&cq->cons, cq->ring, size, WN_QUEUE_KIND_CQ) != 0)
		goto fail;
	cq->q.local = true;
	return cq;
fail:
	free(cq->ring);
	free(cq);
	errno = ENOMEM;
	return NULL;
}

int
wn_dp_cq_poll(struct wn_dp_cq *cq, struct wn_queue_cqe *out, unsigned int n)
{
	int64_t avail = wn_queue_cons_avail(&cq->cons);
	unsigned int i;

	if (avail < 0)
		return -EPROTO;
	if ((uint64_t)avail < n)
		n = (unsigned int)avail;
	for (i = 0; i < n; i++)
		memcpy(&out[i], wn_queue_cons_slot(&cq->cons, i), sizeof(out[i]));
	if (n > 0)
		wn_queue_cons_release(&cq->cons, n);
	return (int)n;
}

bool
wn_dp_cq_overflowed(const struct wn_dp_cq *cq)
{
	return (wn_queue_status(&cq->cons) & WN_QUEUE_ST_OVERFLOW) != 0;
}

int
wn_dp_cq_destroy(struct wn_dp_cq *cq)
{
	if (cq == NULL)
		return 0;
	if (atomic_load(&cq->q.refs) > 1)
		return -EBUSY; /* a QP still completes into it */
	free(cq->ring);
	free(cq);
	return 0;
}

/* ---------------------------------------------------------------- QPs */

struct wn_dp_qp *
wn_dp_qp_create(struct wn_dp *dp, const struct wn_dp_qp_attr *a)
{
	struct dp_embed *e = embed_of(dp);
	uint32_t sq_depth, rq_depth, ssge, rsge;
	struct wn_dp_qp *qp;
	uint64_t size, off;

	if (e == NULL)
		return NULL;
	if (a == NULL || a->send_cq == NULL || a->recv_cq == NULL || a->sq_depth == 0 ||
	    a->rq_depth == 0 || a->sq_depth > WN_QUEUE_MAX_DEPTH ||
	    a->rq_depth > WN_QUEUE_MAX_DEPTH || a->send_cq->dp != dp || a->recv_cq->dp != dp) {
		errno = EINVAL;
		return NULL;
	}
	sq_depth = rte_align32pow2(a->sq_depth);
	rq_depth = rte_align32pow2(a->rq_depth);
	ssge = RTE_MAX(a->max_send_sge, 1u);
	rsge = RTE_MAX(a->max_recv_sge, 1u);
	size = wn_queue_qp_size(sq_depth, ssge, a->max_inline, rq_depth, rsge);
	if (size == 0) {
		errno = EINVAL;
		return NULL;
	}
	off = wn_queue_qp_rq_offset(sq_depth, ssge, a->max_inline);
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return NULL;
	qp->ring = ring_alloc(WN_QUEUE_PAGE_SIZE, size);
	if (qp->ring == NULL ||
	    wn_queue_qp_init(qp->ring, sq_depth, ssge, a->max_inline, rq_depth, rsge) != 0)
		goto fail;
	qp->dp = dp;
	qp->d.qpn = (uint32_t)dp->idx << 20 | (e->next_qpn++ & 0xfffff);
	qp->d.pd = a->pd;
	qp->d.state = WN_CTL_QPS_INIT;
	qp->d.send_cq = &a->send_cq->d;
	qp->d.recv_cq = &a->recv_cq->d;
	qp->d.sq_depth = sq_depth;
	qp->d.rq_depth = rq_depth;
	qp->d.max_send_sge = ssge;
	qp->d.max_recv_sge = rsge;
	qp->d.max_inline = a->max_inline;
	qp->d.sq_sig_all = a->sq_sig_all;
	qp->d.ring = qp->ring;
	qp->d.ring_size = size;
	if (wn_queue_prod_attach(&qp->sq, qp->ring, off, WN_QUEUE_KIND_SQ) != 0 ||
	    wn_queue_prod_attach(&qp->rq, (uint8_t *)qp->ring + off, size - off,
				 WN_QUEUE_KIND_RQ) != 0 ||
	    wn_dp_qp_init(&qp->q, &qp->d, &a->send_cq->q, &a->recv_cq->q, NULL) != 0)
		goto fail;
	qp->q.local = true;
	qp->q.owner = dp->idx;
	return qp;
fail:
	free(qp->ring);
	free(qp);
	errno = EINVAL;
	return NULL;
}

uint32_t
wn_dp_qp_num(const struct wn_dp_qp *qp)
{
	return qp->d.qpn;
}

uint32_t
wn_dp_qp_state(const struct wn_dp_qp *qp)
{
	if (qp->q.eng == NULL)
		return WN_CTL_QPS_INIT;
	return wn_rnic_qp_state_ibv(wn_rnic_qp_state(qp->q.eng));
}

struct wn_queue_ring *
wn_dp_qp_sq(struct wn_dp_qp *qp)
{
	return &qp->sq;
}

struct wn_queue_ring *
wn_dp_qp_rq(struct wn_dp_qp *qp)
{
	return &qp->rq;
}

int
wn_dp_post_send(struct wn_dp_qp *qp, const struct wn_queue_swqe *w, const void *body)
{
	struct wn_queue_ring *r = &qp->sq;
	size_t len = w->flags & WN_QUEUE_SEND_INLINE ? w->inline_len :
		     (size_t)w->num_sge * sizeof(struct wn_queue_sge);
	int64_t space;
	uint8_t *slot;

	if (w->flags & WN_QUEUE_SEND_INLINE ? w->inline_len > r->max_inline :
					      w->num_sge > r->max_sge)
		return -EINVAL;
	space = wn_queue_prod_space(r);
	if (space <= 0)
		return space < 0 ? -EPROTO : -EAGAIN;
	slot = wn_queue_prod_slot(r, 0);
	memcpy(slot, w, WN_QUEUE_SWQE_HDR);
	if (len > 0)
		memcpy(slot + WN_QUEUE_SWQE_HDR, body, len);
	(void)wn_queue_prod_commit(r, 1); /* no doorbell: the shard's own thread posts */
	wn_dp_qp_ready(qp->dp, &qp->q);   /* back to polling if it was parked idle */
	return 0;
}

int
wn_dp_post_recv(struct wn_dp_qp *qp, uint64_t wr_id, const struct wn_queue_sge *sge,
		uint32_t num_sge)
{
	struct wn_queue_ring *r = &qp->rq;
	struct wn_queue_rwqe *w;
	int64_t space;

	if (num_sge > r->max_sge)
		return -EINVAL;
	space = wn_queue_prod_space(r);
	if (space <= 0)
		return space < 0 ? -EPROTO : -EAGAIN;
	w = wn_queue_prod_slot(r, 0);
	w->wr_id = wr_id;
	w->num_sge = num_sge;
	w->rsvd = 0;
	if (num_sge > 0)
		memcpy((uint8_t *)w + WN_QUEUE_RWQE_HDR, sge, num_sge * sizeof(*sge));
	(void)wn_queue_prod_commit(r, 1);
	if (qp->q.rx_held)
		wn_dp_qp_ready(qp->dp, &qp->q); /* a held Send may land now */
	return 0;
}

/* The connection that carries (or is about to carry) @p qp, or NULL. */
static struct dp_conn *
conn_of_qp(struct wn_dp *dp, const struct dp_qp *qp)
{
	struct dp_conn *c;

	if (qp->conn != NULL)
		return qp->conn;
	TAILQ_FOREACH(c, &dp->conns, next)
		if (c->qp == qp)
			return c;
	return NULL;
}

int
wn_dp_qp_destroy(struct wn_dp_qp *qp)
{
	struct wn_dp *dp;
	struct dp_conn *c;
	void *ring;

	if (qp == NULL)
		return 0;
	dp = qp->dp;
	c = conn_of_qp(dp, &qp->q);
	if (c != NULL)
		wn_dp_conn_qp_gone(dp, c,
				   true); /* the stream closes (lib/cm: gracefully from RTS) */
	ring = qp->ring;
	wn_dp_qp_free(dp, &qp->q, false); /* frees qp */
	free(ring);
	return 0;
}

/* ---------------------------------------------------------------- connection events */

/* Double the events' queue (no memory: -ENOMEM). */
static int
events_grow(struct dp_embed *em)
{
	uint32_t ncap = em->cap == 0 ? EMBED_EVENTS : 2 * em->cap;
	struct wn_dp_cm_event *nq = malloc(ncap * sizeof(*nq));

	if (nq == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < em->n; i++)
		nq[i] = em->q[(em->head + i) % em->cap];
	free(em->q);
	em->q = nq;
	em->head = 0;
	em->cap = ncap;
	return 0;
}

/* An embedded connection's lib/cm event (its dp_conn_event_fn): queued for wn_dp_cm_poll(). */
static int
embed_event(struct wn_dp *dp, struct dp_conn *c, const struct wn_cm_event *e)
{
	struct dp_embed *em = embed_of(dp);
	struct wn_dp_cm_event *ev;

	if (em == NULL || (em->n == em->cap && events_grow(em) != 0)) {
		dp->st.ctl_drop++;
		/* a request nobody will see is refused; a lost final event leaves the handle */
		return e->type == WN_CM_EV_CONNECT_REQUEST ? -ENOSPC : 0;
	}
	ev = &em->q[(em->head + em->n++) % em->cap];
	memset(ev, 0, offsetof(struct wn_dp_cm_event, pd));
	ev->type = e->type;
	ev->status = e->status;
	ev->conn = handle_of(c);
	ev->peer_ird = e->peer_ird;
	ev->peer_ord = e->peer_ord;
	ev->ird = e->ird;
	ev->ord = e->ord;
	ev->pd_len = (uint16_t)RTE_MIN((uint32_t)e->pd_len, (uint32_t)WN_DP_PD_MAX);
	if (ev->pd_len > 0)
		memcpy(ev->pd, e->pd, ev->pd_len);
	if (e->type == WN_CM_EV_CONNECT_REQUEST) {
		c->held = true; /* the application owns the new handle */
		ev->listener = (struct wn_dp_listener *)c->elisten;
		ev->user = c->elisten != NULL ? c->elisten->user : NULL;
	} else {
		ev->user = c->user;
	}
	dp->st.cm_events++;
	return 0;
}

int
wn_dp_cm_poll(struct wn_dp *dp, struct wn_dp_cm_event *ev)
{
	struct dp_embed *em = dp->emb;

	if (em == NULL || em->n == 0)
		return 0;
	*ev = em->q[em->head];
	em->head = (em->head + 1) % em->cap;
	em->n--;
	return 1;
}

/* Drop the queued events of a connection whose handle goes away. */
static void
events_purge(struct wn_dp *dp, struct dp_conn *c)
{
	struct dp_embed *em = dp->emb;
	uint32_t k = 0;

	if (em == NULL)
		return;
	for (uint32_t i = 0; i < em->n; i++) {
		struct wn_dp_cm_event *ev = &em->q[(em->head + i) % em->cap];

		if (ev->conn == handle_of(c))
			continue;
		if (k != i)
			em->q[(em->head + k) % em->cap] = *ev;
		k++;
	}
	em->n = k;
}

/* ---------------------------------------------------------------- connections */

struct wn_dp_listener *
wn_dp_listen(struct wn_dp *dp, const struct wn_llp_ep *local, void *user)
{
	struct dp_embed *em = embed_of(dp);
	struct wn_dp_listener *l;

	if (em == NULL)
		return NULL;
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return NULL;
	l->l.kind = DPO_LISTEN;
	l->l.dp = dp;
	l->l.user = user;
	l->l.embedded = true;
	l->l.event = embed_event;
	wn_dp_ctl_addr_of(local, &l->l.src);
	if (wn_dp_llp_listen(dp, &l->l, local) < 0) {
		int err = errno;

		free(l);
		errno = err;
		return NULL;
	}
	TAILQ_INSERT_TAIL(&em->listeners, l, next);
	return l;
}

void
wn_dp_unlisten(struct wn_dp_listener *l)
{
	struct wn_dp *dp;
	struct dp_conn *c;

	if (l == NULL)
		return;
	dp = l->l.dp;
	TAILQ_REMOVE(&dp->emb->listeners, l, next);
	wn_dp_llp_unlisten(dp, &l->l);
	TAILQ_FOREACH(c, &dp->conns, next)
		if (c->elisten == &l->l)
			c->elisten = NULL;
	free(l);
}

/* A local port for @p local → @p remote whose flow this shard owns. @return 0 or -EBUSY. */
static int
steered_port(struct wn_dp *dp, struct dp_embed *em, struct wn_llp_ep *local,
	     const struct wn_llp_ep *remote)
{
	struct wn_ctl_addr l, r;

	if (local->port != 0 || dp->g->n == 1)
		return 0;
	wn_dp_ctl_addr_of(remote, &r);
	for (uint32_t tries = 0; tries < 64u * DP_MAX_SHARDS; tries++) {
		uint16_t p = em->next_port;

		em->next_port = p >= EMBED_PORT_HI ? (uint16_t)EMBED_PORT_LO : (uint16_t)(p + 1);
		local->port = p;
		wn_dp_ctl_addr_of(local, &l);
		if (wn_dp_steer(dp->g, &l, &r) == dp->idx)
			return 0;
	}
	local->port = 0;
	return -EBUSY;
}

static bool
addr_is_any(const struct wn_ip_addr *a)
{
	static const uint8_t zero[16];

	if (a->family == WN_AF_INET6)
		return memcmp(a->v6, zero, sizeof(zero)) == 0;
	return a->v4 == 0;
}

static void
caps_of(const struct wn_dp_conn_param *p, struct wn_llp_caps *caps)
{
	caps->ird = p != NULL ? (uint16_t)RTE_MIN(p->ird, 0x3fffu) : 1;
	caps->ord = p != NULL ? (uint16_t)RTE_MIN(p->ord, 0x3fffu) : 1;
}

struct wn_dp_conn *
wn_dp_connect(struct wn_dp *dp, struct wn_dp_qp *qp, const struct wn_llp_ep *local,
	      const struct wn_llp_ep *remote, const struct wn_dp_conn_param *p, void *user)
{
	struct dp_embed *em = embed_of(dp);
	struct wn_cm_connect cc;
	struct dp_conn *c;
	int rc;

	if (em == NULL)
		return NULL;
	if (qp == NULL || qp->dp != dp || conn_of_qp(dp, &qp->q) != NULL || local == NULL ||
	    remote == NULL || (p != NULL && (p->pd_len > WN_DP_PD_MAX ||
					     (p->pd_len > 0 && p->pd == NULL)))) {
		errno = EINVAL;
		return NULL;
	}
	memset(&cc, 0, sizeof(cc));
	cc.local = *local;
	cc.remote = *remote;
	if (addr_is_any(&cc.local.addr) &&
	    wn_net_if_src_addr(dp->nif, &remote->addr, &cc.local.addr) != 0) {
		errno = ENETUNREACH;
		return NULL;
	}
	if (steered_port(dp, em, &cc.local, remote) != 0) {
		errno = EBUSY;
		return NULL;
	}
	caps_of(p, &cc.caps);
	cc.pd = p != NULL ? p->pd : NULL;
	cc.pd_len = p != NULL ? p->pd_len : 0;
	c = wn_dp_conn_new(dp);
	if (c == NULL)
		return NULL;
	c->embedded = true;
	c->event = embed_event;
	c->held = true;
	c->user = user;
	c->qp = &qp->q;
	wn_dp_ctl_addr_of(&cc.local, &c->src);
	wn_dp_ctl_addr_of(remote, &c->dst);
	rc = wn_cm_connect(&dp->cm, &c->ep, dp->llp[wn_dp_llp_pick(dp, WN_CTL_LLP_DEFAULT)], &cc);
	if (rc != 0) {
		/* CONNECT_ERROR was queued from inside; the caller gets the errno instead */
		events_purge(dp, c);
		c->held = false;
		c->qp = NULL;
		wn_dp_conn_reap_mark(dp, c);
		errno = -rc;
		return NULL;
	}
	return handle_of(c);
}

int
wn_dp_accept(struct wn_dp_conn *h, struct wn_dp_qp *qp, const struct wn_dp_conn_param *p,
	     void *user)
{
	struct dp_conn *c = conn_of(h);
	struct wn_llp_caps caps;

	if (wn_cm_state(&c->ep) != WN_CM_REQ_RCVD || qp == NULL || qp->dp != c->dp ||
	    conn_of_qp(c->dp, &qp->q) != NULL ||
	    (p != NULL && (p->pd_len > WN_DP_PD_MAX || (p->pd_len > 0 && p->pd == NULL))))
		return -EINVAL;
	c->qp = &qp->q;
	c->user = user;
	caps_of(p, &caps);
	return wn_cm_accept(&c->ep, &caps, p != NULL ? p->pd : NULL, p != NULL ? p->pd_len : 0);
}

int
wn_dp_reject(struct wn_dp_conn *h, const void *pd, uint16_t pd_len)
{
	if (pd_len > WN_DP_PD_MAX || (pd_len > 0 && pd == NULL))
		return -EINVAL;
	return wn_cm_reject(&conn_of(h)->ep, pd, pd_len);
}

int
wn_dp_disconnect(struct wn_dp_conn *h)
{
	return wn_cm_disconnect(&conn_of(h)->ep);
}

void
wn_dp_conn_destroy(struct wn_dp_conn *h)
{
	struct dp_conn *c = conn_of(h);

	if (c == NULL)
		return;
	events_purge(c->dp, c);
	if (wn_cm_state(&c->ep) != WN_CM_CLOSED)
		wn_cm_destroy(&c->ep);
	c->held = false; /* freed once its stream is gone */
	c->user = NULL;
	wn_dp_conn_reap_mark(c->dp, c);
}

void
wn_dp_conn_set_user(struct wn_dp_conn *h, void *user)
{
	conn_of(h)->user = user;
}

int
wn_dp_conn_info(const struct wn_dp_conn *h, struct wn_llp_info *info)
{
	const struct dp_conn *c = (const struct dp_conn *)h;
	struct wn_llp *l = wn_cm_llp(&c->ep);

	if (l == NULL) {
		memset(info, 0, sizeof(*info));
		info->state = "CLOSED";
		info->transport.state = "CLOSED";
		info->transport.quiet = true;
		return -ENOTCONN;
	}
	wn_llp_info(l, info);
	return 0;
}

bool
wn_dp_quiet(struct wn_dp *dp)
{
	struct dp_conn *c;

	TAILQ_FOREACH(c, &dp->conns, next) {
		struct wn_llp *l = wn_cm_llp(&c->ep);
		struct wn_llp_info in;

		if (l == NULL)
			continue;
		wn_llp_info(l, &in);
		if (!in.transport.quiet)
			return false;
	}
	return true;
}

void
wn_dp_embed_free(struct wn_dp *dp)
{
	struct wn_dp_listener *l;

	if (dp->emb == NULL)
		return;
	while ((l = TAILQ_FIRST(&dp->emb->listeners)) != NULL)
		wn_dp_unlisten(l);
	free(dp->emb->q);
	free(dp->emb);
	dp->emb = NULL;
}
