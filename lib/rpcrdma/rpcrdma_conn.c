/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verbs layer under the RPC-over-RDMA client and server: a protection domain with its
 * registered pool, one connection's CQ/QP/receive buffers, memory windows, and posting of
 * Sends, RDMA Reads and RDMA Writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rpcrdma_priv.h"

/* ---- logging, time ---------------------------------------------------------------------------- */

static int log_level = -1;

int
wn_rpcrdma_log_level(void)
{
	if (log_level < 0) {
		const char *e = getenv("WN_RPCRDMA_LOG");

		log_level = RPCRDMA_LOG_WARN;
		if (e != NULL) {
			if (strcmp(e, "err") == 0)
				log_level = RPCRDMA_LOG_ERR;
			else if (strcmp(e, "info") == 0)
				log_level = RPCRDMA_LOG_INFO;
			else if (strcmp(e, "debug") == 0)
				log_level = RPCRDMA_LOG_DEBUG;
		}
	}
	return log_level;
}

void
wn_rpcrdma_log(int level, const char *fmt, ...)
{
	static const char *const names[] = {"ERR", "WARN", "INFO", "DEBUG"};
	va_list ap;

	fprintf(stderr, "rpcrdma %s: ", names[level]);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

uint64_t
wn_rpcrdma_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int
wn_rpcrdma_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0 ? -errno : 0;
}

struct rdma_event_channel *
wn_rpcrdma_event_channel(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	int ret;

	if (ch != NULL && (ret = wn_rpcrdma_nonblock(ch->fd)) != 0) {
		rdma_destroy_event_channel(ch);
		errno = -ret;
		return NULL;
	}
	return ch;
}

int
wn_rpcrdma_wait_fds(const int *fds, int n, int timeout_ms)
{
	struct pollfd p[4];

	for (int i = 0; i < n; i++) {
		p[i].fd = fds[i];
		p[i].events = POLLIN;
		p[i].revents = 0;
	}
	return poll(p, (nfds_t)n, timeout_ms);
}

bool_t
wn_rpcrdma_xdr_none(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

void
wn_rpcrdma_opts_default(struct wn_rpcrdma_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = WN_RPCRDMA_PORT;
	o->credits = 32;
	o->inline_send = WN_RPCRDMA_INLINE_DEFAULT;
	o->inline_recv = WN_RPCRDMA_INLINE_DEFAULT;
	o->max_msg = (1u << 20) + (64u << 10);
	o->ddp_min = 1024;
	o->timeout_ms = 30000;
}

void
wn_rpcrdma_cp_make(const struct wn_rpcrdma_opts *o, bool remote_inv, uint8_t *out)
{
	struct wn_rpcrdma_cp cp = {
		.version = WN_RPCRDMA_CP_VERSION,
		.flags = remote_inv ? WN_RPCRDMA_CP_F_REMOTE_INV : 0,
		.inline_send = o->inline_send,
		.inline_recv = o->inline_recv,
	};

	wn_rpcrdma_cp_encode(&cp, out);
}

int
wn_rpcrdma_auth_sys(struct opaque_auth *oa, void *buf, size_t cap, const char *machine,
		    uint32_t uid, uint32_t gid)
{
	struct authunix_parms p = {
		.aup_time = (u_long)time(NULL),
		.aup_machname = (char *)(machine != NULL ? machine : "localhost"),
		.aup_uid = uid,
		.aup_gid = gid,
		.aup_len = 0,
		.aup_gids = NULL,
	};
	XDR x;

	if (cap > MAX_AUTH_BYTES)
		cap = MAX_AUTH_BYTES;
	xdrmem_create(&x, buf, (u_int)cap, XDR_ENCODE);
	if (!xdr_authunix_parms(&x, &p))
		return -ENOSPC;
	oa->oa_flavor = AUTH_SYS;
	oa->oa_base = buf;
	oa->oa_length = xdr_getpos(&x);
	return 0;
}

/* ---- protection domain, pool, regions --------------------------------------------------------- */

static int
region_add(struct rpcrdma_dom *d, struct rpcrdma_region *r, void *addr, size_t len)
{
	r->addr = addr;
	r->len = len;
	r->mr = ibv_reg_mr(d->pd, addr, len, d->mr_access);
	if (r->mr == NULL)
		return errno != 0 ? -errno : -ENOMEM;
	r->next = NULL;
	/* append: lookups try the pool first */
	struct rpcrdma_region **pp = &d->regions;

	while (*pp != NULL)
		pp = &(*pp)->next;
	*pp = r;
	return 0;
}

int
wn_rpcrdma_dom_init(struct rpcrdma_dom *d, struct ibv_context *ctx, enum wn_rpcrdma_reg_mode reg,
		 size_t pool_size)
{
	int ret;

	memset(d, 0, sizeof(*d));
	d->ctx = ctx;
	if (ibv_query_device(ctx, &d->attr) != 0)
		return errno != 0 ? -errno : -EIO;
	if (reg == WN_RPCRDMA_REG_AUTO)
		reg = d->attr.max_mw > 0 ? WN_RPCRDMA_REG_MW : WN_RPCRDMA_REG_POOL;
	if (reg == WN_RPCRDMA_REG_MW && d->attr.max_mw == 0)
		return -EOPNOTSUPP;
	d->reg = reg;
	d->mr_access = IBV_ACCESS_LOCAL_WRITE |
		       (reg == WN_RPCRDMA_REG_MW ? IBV_ACCESS_MW_BIND
						 : IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	d->pd = ibv_alloc_pd(ctx);
	d->ch = ibv_create_comp_channel(ctx);
	if (d->pd == NULL || d->ch == NULL) {
		ret = errno != 0 ? -errno : -ENOMEM;
		goto fail;
	}
	ret = wn_rpcrdma_nonblock(d->ch->fd);
	if (ret != 0)
		goto fail;
	pool_size = (pool_size + 0xfffff) & ~(size_t)0xfffff;
	d->arena = mmap(NULL, pool_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d->arena == MAP_FAILED) {
		d->arena = NULL;
		ret = -ENOMEM;
		goto fail;
	}
	d->arena_len = pool_size;
	ret = wn_rpcrdma_pool_init(&d->pool, d->arena, pool_size, 10);
	if (ret != 0)
		goto fail;
	ret = region_add(d, &d->arena_reg, d->arena, pool_size);
	if (ret != 0)
		goto fail;
	RLOG(INFO, "domain on %s: %s registration, pool %zu KiB",
	     ibv_get_device_name(ctx->device), reg == WN_RPCRDMA_REG_MW ? "memory window" : "pool",
	     pool_size >> 10);
	return 0;
fail:
	wn_rpcrdma_dom_fini(d);
	return ret;
}

void
wn_rpcrdma_dom_fini(struct rpcrdma_dom *d)
{
	struct rpcrdma_region *r = d->regions, *n;

	for (; r != NULL; r = n) {
		n = r->next;
		ibv_dereg_mr(r->mr);
		if (r != &d->arena_reg)
			free(r);
	}
	d->regions = NULL;
	if (d->pool.nblocks != 0)
		wn_rpcrdma_pool_fini(&d->pool);
	if (d->arena != NULL)
		munmap(d->arena, d->arena_len);
	if (d->ch != NULL)
		ibv_destroy_comp_channel(d->ch);
	if (d->pd != NULL)
		ibv_dealloc_pd(d->pd);
	memset(d, 0, sizeof(*d));
}

int
wn_rpcrdma_dom_reg(struct rpcrdma_dom *d, void *addr, size_t len)
{
	const uint8_t *a = addr;
	struct rpcrdma_region *r;
	int ret;

	if (addr == NULL || len == 0)
		return -EINVAL;
	for (r = d->regions; r != NULL; r = r->next)
		if (a < r->addr + r->len && r->addr < a + len)
			return -EEXIST;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	ret = region_add(d, r, addr, len);
	if (ret != 0)
		free(r);
	return ret;
}

int
wn_rpcrdma_dom_dereg(struct rpcrdma_dom *d, void *addr)
{
	struct rpcrdma_region **pp, *r;

	for (pp = &d->regions; (r = *pp) != NULL; pp = &r->next)
		if (r->addr == addr && r != &d->arena_reg) {
			*pp = r->next;
			ibv_dereg_mr(r->mr);
			free(r);
			return 0;
		}
	return -ENOENT;
}

struct ibv_mr *
wn_rpcrdma_dom_mr(const struct rpcrdma_dom *d, const void *p, size_t len)
{
	const uint8_t *a = p;

	for (const struct rpcrdma_region *r = d->regions; r != NULL; r = r->next)
		if (a >= r->addr && len <= r->len && (size_t)(a - r->addr) <= r->len - len)
			return r->mr;
	return NULL;
}

/* ---- connection ------------------------------------------------------------------------------- */

int
wn_rpcrdma_conn_setup(struct rpcrdma_conn *c, struct rpcrdma_dom *d, struct rdma_cm_id *id,
		   uint32_t sq, uint32_t rq, uint32_t recv_size, rpcrdma_wc_fn on_wc, void *owner)
{
	struct ibv_qp_init_attr qa;
	int ret;

	c->dom = d;
	c->id = id;
	c->on_wc = on_wc;
	c->owner = owner;
	if (sq > (uint32_t)d->attr.max_qp_wr)
		sq = (uint32_t)d->attr.max_qp_wr;
	if (rq > (uint32_t)d->attr.max_qp_wr)
		rq = (uint32_t)d->attr.max_qp_wr;
	c->sq_size = c->sq_free = sq;
	c->rq_size = rq;
	c->recv_size = recv_size;
	c->cq = ibv_create_cq(d->ctx, (int)(sq + rq), c, d->ch, 0);
	if (c->cq == NULL)
		return errno != 0 ? -errno : -ENOMEM;
	c->dom_next = d->conns;
	d->conns = c;
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = sq;
	qa.cap.max_recv_wr = rq;
	qa.cap.max_send_sge = 2;
	qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, d->pd, &qa) != 0) {
		ret = errno != 0 ? -errno : -ENOMEM;
		goto fail;
	}
	c->qp = id->qp;
	c->rbufs = calloc(rq, sizeof(*c->rbufs));
	if (c->rbufs == NULL) {
		ret = -ENOMEM;
		goto fail;
	}
	for (uint32_t i = 0; i < rq; i++) {
		c->rbufs[i].wr.kind = RPCRDMA_WR_RECV;
		c->rbufs[i].wr.owner = &c->rbufs[i];
		c->rbufs[i].buf = wn_rpcrdma_pool_alloc(&d->pool, recv_size);
		if (c->rbufs[i].buf == NULL) {
			ret = -ENOMEM;
			goto fail;
		}
		ret = wn_rpcrdma_conn_repost(c, &c->rbufs[i]);
		if (ret != 0)
			goto fail;
	}
	wn_rpcrdma_conn_arm(c);
	return 0;
fail:
	wn_rpcrdma_conn_teardown(c);
	return ret;
}

int
wn_rpcrdma_dom_events(struct rpcrdma_dom *d, struct ibv_cq *dying)
{
	struct ibv_cq *cq;
	void *ctx;
	int n = 0;

	while (ibv_get_cq_event(d->ch, &cq, &ctx) == 0) {
		struct rpcrdma_conn *c;

		n++;
		for (c = d->conns; c != NULL && c->cq != cq; c = c->dom_next)
			;
		if (c == NULL)
			continue; /* a destroyed CQ's: its memory is gone */
		ibv_ack_cq_events(cq, 1);
		if (cq != dying)
			wn_rpcrdma_conn_arm(c);
	}
	return n;
}

static void
dom_unlink(struct rpcrdma_conn *c)
{
	struct rpcrdma_conn **pp;

	for (pp = &c->dom->conns; *pp != NULL; pp = &(*pp)->dom_next)
		if (*pp == c) {
			*pp = c->dom_next;
			break;
		}
}

void
wn_rpcrdma_conn_teardown(struct rpcrdma_conn *c)
{
	struct ibv_wc wc[16];

	if (c->qp != NULL) {
		rdma_destroy_qp(c->id);
		c->qp = NULL;
	}
	if (c->cq != NULL) {
		/* every event of the CQ must be acknowledged before it is destroyed */
		wn_rpcrdma_dom_events(c->dom, c->cq);
		while (ibv_poll_cq(c->cq, 16, wc) > 0)
			;
		dom_unlink(c);
		ibv_destroy_cq(c->cq);
		c->cq = NULL;
		wn_rpcrdma_dom_events(c->dom, NULL); /* drops any that came in meanwhile */
	}
	for (uint32_t i = 0; i < c->nmw; i++) {
		ibv_dealloc_mw(c->mw_all[i]->mw);
		free(c->mw_all[i]);
	}
	c->nmw = 0;
	c->mw_free = NULL;
	if (c->rbufs != NULL) {
		for (uint32_t i = 0; i < c->rq_size; i++)
			wn_rpcrdma_pool_free(&c->dom->pool, c->rbufs[i].buf);
		free(c->rbufs);
		c->rbufs = NULL;
	}
}

int
wn_rpcrdma_conn_repost(struct rpcrdma_conn *c, struct rpcrdma_rbuf *rb)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)rb->buf,
		.length = c->recv_size,
		.lkey = c->dom->arena_reg.mr->lkey,
	};
	struct ibv_recv_wr wr = {.wr_id = (uintptr_t)&rb->wr, .sg_list = &sge, .num_sge = 1};
	struct ibv_recv_wr *bad;
	int ret;

	if (c->dead)
		return -ENOTCONN;
	ret = ibv_post_recv(c->qp, &wr, &bad);
	if (ret != 0)
		return -ret;
	rb->posted = true;
	return 0;
}

void
wn_rpcrdma_conn_arm(struct rpcrdma_conn *c)
{
	if (c->cq != NULL)
		ibv_req_notify_cq(c->cq, 0);
}

int
wn_rpcrdma_conn_drain(struct rpcrdma_conn *c)
{
	struct ibv_wc wc[32];
	int n = 0, total = 0;

	while (c->cq != NULL && (n = ibv_poll_cq(c->cq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			struct rpcrdma_wr *wr = (struct rpcrdma_wr *)(uintptr_t)wc[i].wr_id;

			if (wr->kind != RPCRDMA_WR_RECV)
				c->sq_free++;
			else
				((struct rpcrdma_rbuf *)wr->owner)->posted = false;
			c->on_wc(c, &wc[i], wr);
			if (c->cq == NULL)
				return total + i + 1; /* the owner tore the connection down */
		}
		total += n;
	}
	return n < 0 ? -EIO : total;
}

static int
post_send(struct rpcrdma_conn *c, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int ret;

	if (c->dead)
		return -ENOTCONN;
	if (c->sq_free == 0)
		return -ENOBUFS;
	ret = ibv_post_send(c->qp, wr, &bad);
	if (ret != 0) {
		RLOG(ERR, "ibv_post_send: %s", strerror(ret));
		return -ret;
	}
	c->sq_free--;
	return 0;
}

static struct rpcrdma_mw *
mw_get(struct rpcrdma_conn *c)
{
	struct rpcrdma_mw *m = c->mw_free;

	if (m != NULL) {
		c->mw_free = m->next;
		return m;
	}
	if (c->nmw == sizeof(c->mw_all) / sizeof(c->mw_all[0]))
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->mw = ibv_alloc_mw(c->dom->pd, IBV_MW_TYPE_2);
	if (m->mw == NULL) {
		RLOG(ERR, "ibv_alloc_mw: %s", strerror(errno));
		free(m);
		return NULL;
	}
	m->rkey = m->mw->rkey;
	c->mw_all[c->nmw++] = m;
	return m;
}

void
wn_rpcrdma_conn_mw_put(struct rpcrdma_conn *c, struct rpcrdma_mw *mw)
{
	mw->next = c->mw_free;
	c->mw_free = mw;
}

int
wn_rpcrdma_conn_expose(struct rpcrdma_conn *c, void *p, uint32_t len, int access,
		    struct wn_rpcrdma_seg *seg, struct rpcrdma_mw **mw, struct rpcrdma_wr *wr)
{
	struct ibv_mr *mr = wn_rpcrdma_dom_mr(c->dom, p, len);
	struct ibv_send_wr bw;
	struct rpcrdma_mw *m;
	int ret;

	*mw = NULL;
	if (mr == NULL)
		return -EFAULT;
	seg->length = len;
	seg->offset = (uintptr_t)p;
	if (c->dom->reg == WN_RPCRDMA_REG_POOL) {
		seg->handle = mr->rkey;
		return 0;
	}
	m = mw_get(c);
	if (m == NULL)
		return -ENOMEM;
	memset(&bw, 0, sizeof(bw));
	bw.wr_id = (uintptr_t)wr;
	bw.opcode = IBV_WR_BIND_MW;
	bw.send_flags = IBV_SEND_SIGNALED;
	bw.bind_mw.mw = m->mw;
	bw.bind_mw.rkey = ibv_inc_rkey(m->rkey);
	bw.bind_mw.bind_info.mr = mr;
	bw.bind_mw.bind_info.addr = (uintptr_t)p;
	bw.bind_mw.bind_info.length = len;
	bw.bind_mw.bind_info.mw_access_flags = (unsigned int)access;
	ret = post_send(c, &bw);
	if (ret != 0) {
		wn_rpcrdma_conn_mw_put(c, m);
		return ret;
	}
	m->rkey = bw.bind_mw.rkey;
	m->mw->rkey = m->rkey;
	seg->handle = m->rkey;
	*mw = m;
	return 0;
}

int
wn_rpcrdma_conn_invalidate(struct rpcrdma_conn *c, struct rpcrdma_mw *mw, struct rpcrdma_wr *wr)
{
	struct ibv_send_wr iw;

	memset(&iw, 0, sizeof(iw));
	iw.wr_id = (uintptr_t)wr;
	iw.opcode = IBV_WR_LOCAL_INV;
	iw.send_flags = IBV_SEND_SIGNALED;
	iw.invalidate_rkey = mw->rkey;
	return post_send(c, &iw);
}

int
wn_rpcrdma_conn_send(struct rpcrdma_conn *c, const uint8_t *hdr, uint32_t hdr_len,
		     const uint8_t *pl, uint32_t pl_len, uint32_t inv_rkey, struct rpcrdma_wr *wr)
{
	uint32_t lkey = c->dom->arena_reg.mr->lkey;
	struct ibv_sge sge[2] = {
		{.addr = (uintptr_t)hdr, .length = hdr_len, .lkey = lkey},
		{.addr = (uintptr_t)pl, .length = pl_len, .lkey = lkey},
	};
	struct ibv_send_wr sw;

	memset(&sw, 0, sizeof(sw));
	sw.wr_id = (uintptr_t)wr;
	sw.sg_list = sge;
	sw.num_sge = pl_len > 0 ? 2 : 1;
	sw.send_flags = IBV_SEND_SIGNALED;
	if (inv_rkey != 0) {
		sw.opcode = IBV_WR_SEND_WITH_INV;
		sw.invalidate_rkey = inv_rkey;
	} else {
		sw.opcode = IBV_WR_SEND;
	}
	return post_send(c, &sw);
}

/* An RDMA Read into or an RDMA Write from registered [@p local, @p local + @p len). */
static int
post_rdma(struct rpcrdma_conn *c, enum ibv_wr_opcode op, void *local, uint32_t len,
	  uint32_t rkey, uint64_t raddr, struct rpcrdma_wr *wr)
{
	struct ibv_mr *mr = wn_rpcrdma_dom_mr(c->dom, local, len);
	struct ibv_sge sge = {.addr = (uintptr_t)local, .length = len};
	struct ibv_send_wr rw;

	if (mr == NULL)
		return -EFAULT;
	sge.lkey = mr->lkey;
	memset(&rw, 0, sizeof(rw));
	rw.wr_id = (uintptr_t)wr;
	rw.opcode = op;
	rw.send_flags = IBV_SEND_SIGNALED;
	rw.sg_list = &sge;
	rw.num_sge = 1;
	rw.wr.rdma.remote_addr = raddr;
	rw.wr.rdma.rkey = rkey;
	return post_send(c, &rw);
}

int
wn_rpcrdma_conn_read(struct rpcrdma_conn *c, void *dst, const struct wn_rpcrdma_seg *seg,
		  struct rpcrdma_wr *wr)
{
	int ret = post_rdma(c, IBV_WR_RDMA_READ, dst, seg->length, seg->handle, seg->offset, wr);

	if (ret == 0)
		c->reads_out++;
	return ret;
}

int
wn_rpcrdma_conn_write(struct rpcrdma_conn *c, const void *src, uint32_t len, uint32_t rkey,
		   uint64_t raddr, struct rpcrdma_wr *wr)
{
	return post_rdma(c, IBV_WR_RDMA_WRITE, (void *)(uintptr_t)src, len, rkey, raddr, wr);
}
