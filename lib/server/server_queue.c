/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQs, SRQs and QPs: their ring memfds (lib/queue's ABI, shared with the client and the
 * dataplane), QP attributes and states, and flushing a QP in Error while no dataplane runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_common.h>

#include "ring.h"
#include "srv_priv.h"

/* A sealed memfd of @p size octets mapped here; its fd in *fdp. */
static void *
ring_create(uint64_t size, int *fdp)
{
	void *p;
	int fd;

	fd = memfd_create("warpnic-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)size) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
		goto err;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto err;
	*fdp = fd;
	return p;
err:
	close(fd);
	return NULL;
}

/*
 * A new object of @p type with a zeroed ring of @p size octets (*ringp, its memfd in
 * rs->fd); NULL with *err set (nothing left behind).
 */
static struct obj *
ring_obj_new(struct wn_server *srv, struct client *c, enum obj_type type, uint64_t size,
	     void **ringp, struct srv_resp *rs, int *err)
{
	struct obj *o;
	int fd;
	void *ring = ring_create(size, &fd);

	if (ring == NULL) {
		*err = -errno;
		return NULL;
	}
	o = wn_server_obj_new(srv, c, type);
	if (o == NULL) {
		munmap(ring, size);
		close(fd);
		*err = -ENOMEM;
		return NULL;
	}
	*ringp = ring;
	rs->fd = fd;
	return o;
}

/* ---------------------------------------------------------------- CQ */

int
wn_server_h_create_cq(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_create_cq_req *r = rq->body;
	struct wn_server_dp_cq *d;
	uint32_t depth;
	uint64_t size;
	struct obj *cq;
	void *ring;
	int ret;

	if (r->cqe > MAX_CQE)
		return -EINVAL;
	depth = wn_server_ring_cq_depth(r->cqe);
	size = wn_server_ring_cq_size(depth);
	cq = ring_obj_new(srv, rq->c, OBJ_CQ, size, &ring, rs, &ret);
	if (cq == NULL)
		return ret;
	wn_server_ring_cq_init(ring, depth);
	wn_queue_prod_attach(&cq->u.cq.prod, ring, size, WN_QUEUE_KIND_CQ);
	d = &cq->u.cq.dp;
	d->handle = cq->handle;
	d->depth = depth;
	d->ring = ring;
	d->ring_size = size;
	d->cookie = r->cookie;
	d->notify_fd = -1;
	if (rq->nfds == 1)
		d->notify_fd = wn_server_notify_get(srv, rq->fds[0]);
	wn_server_dp_tell(srv, WN_SERVER_DP_CQ_CREATE, cq->handle, d);
	rs->u.ring.handle = cq->handle;
	rs->u.ring.depth[0] = depth;
	rs->u.ring.ring_size = size;
	return 0;
}

int
wn_server_cq_destroy(struct wn_server *srv, struct obj *cq)
{
	wn_server_obj_retire(srv, cq, WN_SERVER_DP_CQ_DESTROY, &cq->u.cq.dp);
	return 0;
}

/* Append one CQE as the CQ's producer; a full CQ is an overrun (IBV_EVENT_CQ_ERR). */
static void
cq_push(struct obj *cq, const struct wn_queue_cqe *e)
{
	struct wn_queue_ring *r = &cq->u.cq.prod;

	if (wn_queue_prod_space(r) <= 0) {
		wn_queue_status_set(r, WN_QUEUE_ST_OVERFLOW);
		return;
	}
	memcpy(wn_queue_prod_slot(r, 0), e, sizeof(*e));
	wn_queue_prod_commit(r, 1);
}

static void
cq_notify(struct obj *cq)
{
	uint64_t cookie = cq->u.cq.dp.cookie;

	/* error completions count as solicited for ARM_SOLICITED (verbs rule) */
	if (wn_queue_cq_notify_check(&cq->u.cq.prod, true) && cq->u.cq.dp.notify_fd >= 0 &&
	    write(cq->u.cq.dp.notify_fd, &cookie, sizeof(cookie)) < 0)
		SRV_LOG(DEBUG, "CQ %#x: notification lost", cq->handle);
}

/* ---------------------------------------------------------------- SRQ */

int
wn_server_h_create_srq(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_create_srq_req *r = rq->body;
	struct obj *pd = wn_server_obj_get(srv, rq->c, r->pd, OBJ_PD), *srq;
	uint32_t depth, sge = RTE_MAX(r->max_sge, 1u);
	uint64_t size;
	void *ring;
	int ret;

	if (pd == NULL || r->max_wr > MAX_QP_WR || r->max_sge > MAX_SGE)
		return -EINVAL;
	depth = wn_server_ring_wq_depth(r->max_wr);
	size = wn_server_ring_srq_size(depth, sge);
	srq = ring_obj_new(srv, rq->c, OBJ_SRQ, size, &ring, rs, &ret);
	if (srq == NULL)
		return ret;
	wn_server_ring_srq_init(ring, depth, sge);
	pd->refs++;
	srq->u.srq.pd = pd;
	srq->u.srq.dp = (struct wn_server_dp_srq){
		.handle = srq->handle, .pd = pd->u.pd.num, .depth = depth, .max_sge = sge,
		.ring = ring, .ring_size = size};
	wn_server_dp_tell(srv, WN_SERVER_DP_SRQ_CREATE, srq->handle, &srq->u.srq.dp);
	rs->u.ring.handle = srq->handle;
	rs->u.ring.depth[0] = depth;
	rs->u.ring.sge[0] = sge;
	rs->u.ring.ring_size = size;
	return 0;
}

int
wn_server_h_modify_srq(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_modify_srq_req *r = rq->body;
	struct obj *srq = wn_server_obj_get(srv, rq->c, r->srq, OBJ_SRQ);

	(void)rs;
	if (srq == NULL)
		return -EINVAL;
	if ((r->mask & 1) != 0)
		return -EOPNOTSUPP; /* resizing is not offered */
	if ((r->mask & 2) != 0) {
		/* IBV_SRQ_LIMIT: armed in the ring; the dataplane raises the event once
		 * (WN_CTL_ASYNC_SRQ_LIMIT_REACHED) and disarms it; 0 disarms */
		struct wn_queue_ring v = {.hdr = srq->u.srq.dp.ring};

		if (r->srq_limit > srq->u.srq.dp.depth)
			return -EINVAL;
		wn_queue_srq_limit_arm(&v, r->srq_limit);
	}
	return 0;
}

int
wn_server_srq_destroy(struct wn_server *srv, struct obj *srq)
{
	srq->u.srq.pd->refs--;
	wn_server_obj_retire(srv, srq, WN_SERVER_DP_SRQ_DESTROY, &srq->u.srq.dp);
	return 0;
}

/* ---------------------------------------------------------------- QP */

/* The objects a CREATE_QP names, all owned by the client; -EINVAL otherwise. */
static int
qp_deps_get(struct wn_server *srv, const struct srv_req *rq, struct obj *deps[4])
{
	const struct wn_ctl_create_qp_req *r = rq->body;

	deps[0] = wn_server_obj_get(srv, rq->c, r->pd, OBJ_PD);
	deps[1] = wn_server_obj_get(srv, rq->c, r->send_cq, OBJ_CQ);
	deps[2] = wn_server_obj_get(srv, rq->c, r->recv_cq, OBJ_CQ);
	deps[3] = r->srq ? wn_server_obj_get(srv, rq->c, r->srq, OBJ_SRQ) : NULL;
	if (deps[0] == NULL || deps[1] == NULL || deps[2] == NULL ||
	    (r->srq != 0 && deps[3] == NULL))
		return -EINVAL;
	if (r->max_send_wr > MAX_QP_WR || r->max_recv_wr > MAX_QP_WR ||
	    r->max_send_sge > MAX_SGE || r->max_recv_sge > MAX_SGE ||
	    r->max_inline_data > MAX_INLINE)
		return -EINVAL;
	return 0;
}

/* Reference the QP's PD, CQs and SRQ; fill the dataplane's descriptor but ring and QPN. */
static void
qp_link(struct obj *qp, struct obj *deps[4], const struct wn_ctl_create_qp_req *r)
{
	struct wn_server_dp_qp *d = &qp->u.qp.dp;
	uint32_t i;

	for (i = 0; i < 4; i++)
		if (deps[i] != NULL)
			deps[i]->refs++;
	qp->u.qp.pd = deps[0];
	qp->u.qp.scq = deps[1];
	qp->u.qp.rcq = deps[2];
	qp->u.qp.srq = deps[3];
	qp->u.qp.cookie = r->cookie;
	d->handle = qp->handle;
	d->pd = deps[0]->u.pd.num;
	d->state = WN_CTL_QPS_RESET;
	d->send_cq = &deps[1]->u.cq.dp;
	d->recv_cq = &deps[2]->u.cq.dp;
	d->srq = deps[3] != NULL ? &deps[3]->u.srq.dp : NULL;
	d->max_inline = r->max_inline_data;
	d->sq_sig_all = r->sq_sig_all;
	d->qp_type = r->qp_type;
	d->ird = r->qp_type == WN_CTL_QPT_RC ? MAX_RD_ATOM : 0;
	d->ord = d->ird;
}

int
wn_server_h_create_qp(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_create_qp_req *r = rq->body;
	struct wn_server_dp_qp *d;
	struct obj *deps[4], *qp;
	uint32_t sqd, rqd, ssge, rsge;
	uint64_t size, off;
	void *ring;
	int ret = qp_deps_get(srv, rq, deps);

	if (ret != 0)
		return ret;
	/* max_qp as QUERY_DEVICE tells it */
	if (srv->counts[OBJ_QP] >= (srv->conf.max_qp != 0 ? srv->conf.max_qp : MAX_QP))
		return -ENOMEM;
	sqd = wn_server_ring_wq_depth(r->max_send_wr);
	rqd = deps[3] != NULL ? 0 : wn_server_ring_wq_depth(r->max_recv_wr);
	ssge = RTE_MAX(r->max_send_sge, 1u);
	rsge = RTE_MAX(r->max_recv_sge, 1u);
	size = wn_server_ring_qp_size(sqd, ssge, rqd, rsge, r->max_inline_data);
	qp = ring_obj_new(srv, rq->c, OBJ_QP, size, &ring, rs, &ret);
	if (qp == NULL)
		return ret;
	wn_server_ring_qp_init(ring, sqd, ssge, rqd, rsge, r->max_inline_data);
	off = wn_queue_qp_rq_offset(sqd, ssge, r->max_inline_data);
	wn_queue_cons_attach(&qp->u.qp.sqc, ring, off, WN_QUEUE_KIND_SQ);
	if (rqd != 0)
		wn_queue_cons_attach(&qp->u.qp.rqc, (uint8_t *)ring + off, size - off,
				     WN_QUEUE_KIND_RQ);
	qp_link(qp, deps, r);
	d = &qp->u.qp.dp;
	d->qpn = ++srv->next_qpn & 0xffffff;
	d->sq_depth = sqd;
	d->rq_depth = rqd;
	d->max_send_sge = ssge;
	d->max_recv_sge = rsge;
	d->ring = ring;
	d->ring_size = size;
	wn_server_dp_tell(srv, WN_SERVER_DP_QP_CREATE, qp->handle, d);
	rs->u.ring = (struct wn_ctl_ring_resp){.handle = qp->handle, .qpn = d->qpn,
					       .depth = {sqd, rqd}, .sge = {ssge, rsge},
					       .max_inline = d->max_inline, .ring_size = size};
	return 0;
}

static void qp_flush(struct wn_server *srv, struct obj *qp);

static void
qp_attr(const struct obj *qp, struct wn_ctl_qp_attr *a)
{
	const struct wn_server_dp_qp *d = &qp->u.qp.dp;

	memset(a, 0, sizeof(*a));
	a->qp_state = d->state;
	a->access = qp->u.qp.access;
	a->max_rd_atomic = d->ord;
	a->max_dest_rd_atomic = d->ird;
	a->max_send_wr = d->sq_depth;
	a->max_recv_wr = d->rq_depth;
	a->max_send_sge = d->max_send_sge;
	a->max_recv_sge = d->max_recv_sge;
	a->max_inline_data = d->max_inline;
	a->qpn = d->qpn;
	a->path_mask = qp->u.qp.path_mask;
	a->path = qp->u.qp.path;
	a->qp_type = d->qp_type;
	a->ud = qp->u.qp.ud;
}

int
wn_server_h_query_qp(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_handle *r = rq->body;
	struct obj *qp = wn_server_obj_get(srv, rq->c, r->handle, OBJ_QP);

	if (qp == NULL)
		return -EINVAL;
	qp_attr(qp, &rs->u.qp);
	return 0;
}

/*
 * RFC 5040 §6.2 / the verbs QP state diagram: RESET → INIT → RTR → RTS; any state → ERR or
 * RESET; an iWARP QP reaches RTS through the CM (connection set up) or directly when the
 * application drives the transitions itself.
 */
static bool
qp_transition_ok(uint32_t cur, uint32_t to)
{
	return to == WN_CTL_QPS_ERR || to == WN_CTL_QPS_RESET ||
	       (cur == WN_CTL_QPS_RESET && to == WN_CTL_QPS_INIT) ||
	       (cur == WN_CTL_QPS_INIT && to == WN_CTL_QPS_RTR) ||
	       (cur == WN_CTL_QPS_INIT && to == WN_CTL_QPS_INIT) ||
	       (cur == WN_CTL_QPS_RTR && to == WN_CTL_QPS_RTS) ||
	       (cur == WN_CTL_QPS_RTS && to == WN_CTL_QPS_SQD) ||
	       (cur == WN_CTL_QPS_SQD && to == WN_CTL_QPS_RTS);
}

/* The IB path attributes of @p qp with those a MODIFY_QP names (reported by QUERY_QP). */
static void
qp_path_merge(const struct obj *qp, const struct wn_ctl_modify_qp_req *r,
	      struct wn_ctl_qp_path *p, uint32_t *mask)
{
	const struct wn_ctl_qp_path *n = &r->path;

	*p = qp->u.qp.path;
	if (r->mask & WN_CTL_QP_AV) {
		memcpy(p->dgid, n->dgid, sizeof(p->dgid));
		p->is_global = n->is_global;
		p->sgid_index = n->sgid_index;
	}
	if (r->mask & WN_CTL_QP_DEST_QPN)
		p->dest_qp_num = n->dest_qp_num;
	if (r->mask & WN_CTL_QP_RQ_PSN)
		p->rq_psn = n->rq_psn;
	if (r->mask & WN_CTL_QP_SQ_PSN)
		p->sq_psn = n->sq_psn;
	if (r->mask & WN_CTL_QP_PATH_MTU)
		p->path_mtu = n->path_mtu;
	if (r->mask & WN_CTL_QP_TIMEOUT)
		p->timeout = n->timeout;
	if (r->mask & WN_CTL_QP_RETRY_CNT)
		p->retry_cnt = n->retry_cnt;
	if (r->mask & WN_CTL_QP_RNR_RETRY)
		p->rnr_retry = n->rnr_retry;
	if (r->mask & WN_CTL_QP_MIN_RNR_TIMER)
		p->min_rnr_timer = n->min_rnr_timer;
	*mask = qp->u.qp.path_mask |
		(r->mask & ~(WN_CTL_QP_STATE | WN_CTL_QP_ACCESS_FLAGS | WN_CTL_QP_MAX_QP_RD_ATOMIC |
			     WN_CTL_QP_MAX_DEST_RD_ATOMIC));
}

/* A GID as an address: IPv4-mapped IPv6 (::ffff:a.b.c.d) is IPv4, anything else IPv6. */
static void
gid_addr(const uint8_t gid[16], struct wn_ctl_addr *a)
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	memset(a, 0, sizeof(*a));
	if (memcmp(gid, v4mapped, sizeof(v4mapped)) == 0) {
		a->family = WN_CTL_AF_INET;
		memcpy(a->addr, gid + 12, 4);
	} else {
		a->family = WN_CTL_AF_INET6;
		memcpy(a->addr, gid, 16);
	}
}

/*
 * The addresses of an InfiniBand-style connection of QP number @p qpn over path @p p: the
 * peer's from the AV's GID, ours the GID at its sgid_index, or our first address of the
 * peer's family when that one is of the other.
 * @return 0, or -EINVAL (no GRH: iWARP reaches a peer by its address, there are no LIDs; an
 *   unknown GID index; no address of the peer's family; the QP connected to itself).
 */
static int
qp_ib_addrs(const struct wn_server *srv, const struct wn_ctl_qp_path *p, uint32_t qpn,
	    struct wn_ctl_addr *src, struct wn_ctl_addr *dst)
{
	uint32_t i;

	if (!p->is_global || p->sgid_index >= srv->conf.n_addrs)
		return -EINVAL;
	gid_addr(p->dgid, dst);
	*src = srv->conf.addrs[p->sgid_index];
	for (i = 0; src->family != dst->family && i < srv->conf.n_addrs; i++)
		*src = srv->conf.addrs[i];
	if (src->family != dst->family)
		return -EINVAL;
	src->port = dst->port = 0;
	if (memcmp(src->addr, dst->addr, 16) == 0 && p->dest_qp_num == qpn)
		return -EINVAL;
	return 0;
}

/*
 * Tell the dataplane about the QP's InfiniBand-style connection over @p p: at RTR it connects
 * to the peer's QP (with IRD/ORD @p ird, @p ord and remote rights @p access), at RTS its retry
 * budget (timeout, retry_cnt) starts. @return 0 or -errno (nothing sent).
 */
static int
qp_ib_tell(struct wn_server *srv, struct obj *qp, const struct wn_ctl_qp_path *p,
	   uint32_t state, uint32_t ird, uint32_t ord, uint32_t access)
{
	struct wn_ctl_addr src, dst;
	struct wn_server_dp_msg *m;
	int ret = qp_ib_addrs(srv, p, qp->u.qp.dp.qpn, &src, &dst);

	if (ret != 0)
		return ret;
	m = wn_server_dp_msg_new(srv, WN_SERVER_DP_QP_IB, qp->handle, &qp->u.qp.dp);
	if (m == NULL)
		return srv->to_dp == NULL ? -ENETDOWN : -ENOMEM;
	m->u.ib.src = src;
	m->u.ib.dst = dst;
	m->u.ib.qp_state = state;
	m->u.ib.llp = qp->owner != NULL ? qp->owner->llp : WN_CTL_LLP_DEFAULT;
	m->u.ib.rqpn = p->dest_qp_num;
	m->u.ib.ird = ird;
	m->u.ib.ord = ord;
	m->u.ib.timeout = p->timeout;
	m->u.ib.retry_cnt = p->retry_cnt;
	m->u.ib.access = access;
	return wn_server_dp_post(srv, m);
}

/*
 * The attributes a UD QP's transition from @p cur to @p to requires and may carry (IBTA
 * 11.2.1.2, Table 91's UD column): RESET→INIT needs the P_Key index, port and Q_Key; RTR→RTS
 * the SQ PSN; the Q_Key may change on most moves.
 */
static bool
ud_transition_ok(uint32_t cur, uint32_t to, uint32_t mask)
{
	const uint32_t ud = WN_CTL_QP_PKEY_INDEX | WN_CTL_QP_PORT | WN_CTL_QP_QKEY;
	uint32_t need = 0, may = 0;

	if (!(mask & WN_CTL_QP_STATE)) {
		to = cur;
		may = WN_CTL_QP_QKEY; /* no move: the Q_Key of a QP in RTS or SQD */
		if (cur != WN_CTL_QPS_RTS && cur != WN_CTL_QPS_SQD)
			return (mask & WN_CTL_QP_UD_MASK) == 0;
	} else if (to == WN_CTL_QPS_RESET || to == WN_CTL_QPS_ERR) {
		may = 0;
	} else if (cur == WN_CTL_QPS_RESET && to == WN_CTL_QPS_INIT) {
		need = ud;
	} else if (cur == WN_CTL_QPS_INIT && to == WN_CTL_QPS_INIT) {
		may = ud;
	} else if (cur == WN_CTL_QPS_INIT && to == WN_CTL_QPS_RTR) {
		may = WN_CTL_QP_PKEY_INDEX | WN_CTL_QP_QKEY;
	} else if (cur == WN_CTL_QPS_RTR && to == WN_CTL_QPS_RTS) {
		need = WN_CTL_QP_SQ_PSN;
		may = WN_CTL_QP_QKEY;
	} else if ((cur == WN_CTL_QPS_RTS || cur == WN_CTL_QPS_SQD) && to == WN_CTL_QPS_RTS) {
		may = WN_CTL_QP_QKEY;
	} else if (cur == WN_CTL_QPS_RTS && to == WN_CTL_QPS_SQD) {
		may = 0;
	} else if (cur == WN_CTL_QPS_SQD && to == WN_CTL_QPS_SQD) {
		may = WN_CTL_QP_PKEY_INDEX | WN_CTL_QP_QKEY;
	} else {
		return false;
	}
	mask &= ~(uint32_t)WN_CTL_QP_STATE;
	return (mask & need) == need && (mask & ~(need | may)) == 0;
}

/* MODIFY_QP of a UD QP: its attributes kept, its engine told every time (u.ud). */
static int
ud_modify(struct wn_server *srv, struct obj *qp, const struct wn_ctl_modify_qp_req *r)
{
	struct wn_ctl_qp_ud *ud = &qp->u.qp.ud;
	struct wn_server_dp_msg *m;
	uint32_t to = (r->mask & WN_CTL_QP_STATE) ? r->qp_state : qp->u.qp.dp.state;

	if (!ud_transition_ok(qp->u.qp.dp.state, to, r->mask))
		return -EINVAL;
	/* one port, one P_Key (pkey_tbl_len 1) */
	if (((r->mask & WN_CTL_QP_PORT) && r->ud.port_num != 1) ||
	    ((r->mask & WN_CTL_QP_PKEY_INDEX) && r->ud.pkey_index != 0))
		return -EINVAL;
	if (to == WN_CTL_QPS_RESET)
		memset(ud, 0, sizeof(*ud));
	if (r->mask & WN_CTL_QP_QKEY)
		ud->qkey = r->ud.qkey;
	if (r->mask & WN_CTL_QP_SQ_PSN)
		ud->sq_psn = r->ud.sq_psn;
	if (r->mask & WN_CTL_QP_PORT)
		ud->port_num = r->ud.port_num;
	if (r->mask & WN_CTL_QP_PKEY_INDEX)
		ud->pkey_index = r->ud.pkey_index;
	qp->u.qp.dp.state = to;
	if (to == WN_CTL_QPS_ERR)
		qp_flush(srv, qp);
	m = wn_server_dp_msg_new(srv, WN_SERVER_DP_QP_MODIFY, qp->handle, &qp->u.qp.dp);
	if (m != NULL) {
		m->u.ud.state = to;
		m->u.ud.qkey = ud->qkey;
		wn_server_dp_post(srv, m);
	}
	return 0;
}

int
wn_server_h_modify_qp(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	const struct wn_ctl_modify_qp_req *r = rq->body;
	struct obj *qp = wn_server_obj_get(srv, rq->c, r->qp, OBJ_QP);
	uint32_t to = (r->mask & WN_CTL_QP_STATE) != 0 ? r->qp_state : WN_CTL_QPS_MAX;
	struct wn_ctl_qp_path path;
	uint32_t path_mask, ird, ord, access;
	int ret;

	if (qp == NULL)
		return -EINVAL;
	if (qp->u.qp.dp.qp_type == WN_CTL_QPT_UD) {
		ret = ud_modify(srv, qp, r);
		if (ret == 0)
			qp_attr(qp, &rs->u.qp);
		return ret;
	}
	if (to != WN_CTL_QPS_MAX && to != qp->u.qp.dp.state &&
	    !qp_transition_ok(qp->u.qp.dp.state, to))
		return -EINVAL;
	if (((r->mask & WN_CTL_QP_MAX_QP_RD_ATOMIC) != 0 && r->max_rd_atomic > MAX_RD_ATOM) ||
	    ((r->mask & WN_CTL_QP_MAX_DEST_RD_ATOMIC) != 0 && r->max_dest_rd_atomic > MAX_RD_ATOM))
		return -EINVAL;
	ord = (r->mask & WN_CTL_QP_MAX_QP_RD_ATOMIC) != 0 ? r->max_rd_atomic : qp->u.qp.dp.ord;
	ird = (r->mask & WN_CTL_QP_MAX_DEST_RD_ATOMIC) != 0 ? r->max_dest_rd_atomic :
							      qp->u.qp.dp.ird;
	qp_path_merge(qp, r, &path, &path_mask);
	access = (r->mask & WN_CTL_QP_ACCESS_FLAGS) != 0 ? r->access : qp->u.qp.access;
	/*
	 * A move to RTR with the peer's address and QP number, of a QP no CM id carries, is an
	 * InfiniBand-style connection: the dataplane makes it (wn_cm.h); both are needed. A
	 * move that cannot be made changes nothing.
	 */
	if (to == WN_CTL_QPS_RTR && qp->u.qp.dp.state == WN_CTL_QPS_INIT &&
	    (r->mask & WN_CTL_QP_IB_PATH) == WN_CTL_QP_IB_PATH && qp->u.qp.cm_id == 0) {
		ret = qp_ib_tell(srv, qp, &path, WN_CTL_QPS_RTR, ird, ord, access);
		if (ret != 0)
			return ret;
		qp->u.qp.ib = true;
	}
	qp->u.qp.dp.ord = ord;
	qp->u.qp.dp.ird = ird;
	qp->u.qp.access = access;
	qp->u.qp.path = path;
	qp->u.qp.path_mask = path_mask;
	if (to != WN_CTL_QPS_MAX && to != qp->u.qp.dp.state) {
		wn_server_qp_set_state(srv, qp, to);
		if (to == WN_CTL_QPS_RTS && qp->u.qp.ib)
			(void)qp_ib_tell(srv, qp, &path, WN_CTL_QPS_RTS, ird, ord, access);
		if (to == WN_CTL_QPS_RESET) {
			/* IBTA 10.3.1: a QP in RESET keeps no path */
			qp->u.qp.ib = false;
			qp->u.qp.path_mask = 0;
			memset(&qp->u.qp.path, 0, sizeof(qp->u.qp.path));
		}
	}
	qp_attr(qp, &rs->u.qp);
	return 0;
}

/*
 * The dataplane moved QP @p handle to Error by itself: its InfiniBand-style connection ended
 * or never came (the dataplane flushed its queues).
 */
void
wn_server_qp_dp_error(struct wn_server *srv, uint32_t handle)
{
	struct obj *qp = wn_server_obj_get(srv, NULL, handle, OBJ_QP);

	if (qp != NULL)
		qp->u.qp.dp.state = WN_CTL_QPS_ERR;
}

/* Complete every WQE of one work ring with WR_FLUSH_ERR into @p cq. */
static uint32_t
wq_flush(struct wn_queue_ring *wq, struct obj *cq, uint32_t qpn, bool recv)
{
	int64_t avail = wq->hdr != NULL ? wn_queue_cons_avail(wq) : 0;
	uint32_t i;

	if (avail <= 0)
		return 0;
	for (i = 0; i < (uint32_t)avail; i++) {
		struct wn_queue_cqe e;
		uint64_t wr_id;
		uint8_t op = 0;

		/* copy out of client-written memory before use (wn_queue.h, Trust) */
		memcpy(&wr_id, wn_queue_cons_slot(wq, i), sizeof(wr_id));
		if (!recv)
			op = ((volatile struct wn_queue_swqe *)wn_queue_cons_slot(wq, i))->opcode;
		memset(&e, 0, sizeof(e));
		e.wr_id = wr_id;
		e.status = WN_QUEUE_WC_WR_FLUSH_ERR;
		e.opcode = recv ? WN_QUEUE_WC_RECV : wn_queue_wc_opcode(op);
		e.qp_num = qpn;
		cq_push(cq, &e);
	}
	wn_queue_cons_release(wq, (uint32_t)avail);
	return (uint32_t)avail;
}

/*
 * QP in Error with no dataplane attached: the control thread is the only consumer of its
 * rings, so it flushes them itself (outstanding WRs complete with WR_FLUSH_ERR, armed CQs
 * notify), as an RNIC does when a connection is torn down (RFC 5040 §6.3: no further
 * placement; WRs complete in error). SRQ WQEs are not the QP's and stay.
 */
static void
qp_flush(struct wn_server *srv, struct obj *qp)
{
	uint32_t n;

	if (srv->to_dp != NULL)
		return;
	n = wq_flush(&qp->u.qp.sqc, qp->u.qp.scq, qp->u.qp.dp.qpn, false);
	if (n > 0)
		cq_notify(qp->u.qp.scq);
	if (qp->u.qp.srq == NULL) {
		n = wq_flush(&qp->u.qp.rqc, qp->u.qp.rcq, qp->u.qp.dp.qpn, true);
		if (n > 0)
			cq_notify(qp->u.qp.rcq);
	}
}

void
wn_server_qp_set_state(struct wn_server *srv, struct obj *qp, uint32_t state)
{
	struct wn_server_dp_msg *m;

	qp->u.qp.dp.state = state;
	if (state == WN_CTL_QPS_ERR)
		qp_flush(srv, qp);
	m = wn_server_dp_msg_new(srv, WN_SERVER_DP_QP_MODIFY, qp->handle, &qp->u.qp.dp);
	if (m != NULL) {
		m->u.qp_state = state;
		if (qp->u.qp.dp.qp_type == WN_CTL_QPT_UD)
			m->u.ud.qkey = qp->u.qp.ud.qkey;
		wn_server_dp_post(srv, m);
	}
}

int
wn_server_qp_destroy(struct wn_server *srv, struct obj *qp)
{
	struct obj *id =
		qp->u.qp.cm_id ? wn_server_obj_get(srv, NULL, qp->u.qp.cm_id, OBJ_CMID) : NULL;

	if (id != NULL && id->u.id.qp == qp->handle)
		id->u.id.qp = 0;
	qp->u.qp.pd->refs--;
	qp->u.qp.scq->refs--;
	qp->u.qp.rcq->refs--;
	if (qp->u.qp.srq != NULL)
		qp->u.qp.srq->refs--;
	wn_server_obj_retire(srv, qp, WN_SERVER_DP_QP_DESTROY, &qp->u.qp.dp);
	return 0;
}
