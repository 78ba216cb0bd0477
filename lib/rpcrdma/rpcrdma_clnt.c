/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RPC-over-RDMA version 1 requester (client): connection setup with RFC 8797 private data,
 * credit-limited calls matched by XID, chunk marshalling, reply checks, memory window
 * invalidation, timeouts. See wn_rpcrdma_xprt.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "rpcrdma_priv.h"

/* One credit's worth of call state. */
struct slot {
	struct rpcrdma_wr swr; /* Sends (the call, RDMA_DONE) */
	struct rpcrdma_wr bwr; /* window binds */
	struct rpcrdma_wr iwr; /* local invalidations */
	struct rpcrdma_wr rwr; /* RDMA Reads of a long reply */
	struct wn_rpcrdma_clnt *clnt;
	bool busy;
	struct wn_rpcrdma_call *call; /* NULL once delivered */
	uint32_t xid;
	uint8_t *hdr;		      /* header buffer (pool) */
	uint8_t *inl;		      /* inline Payload stream buffer (pool) */
	void *bufs[RPCRDMA_CALL_MWS + WN_RPCRDMA_MAX_READ_SEGS + 1]; /* pool blocks to free */
	uint32_t nbufs;
	struct rpcrdma_mw *mws[RPCRDMA_CALL_MWS];
	uint32_t nmws;
	uint32_t wr_out; /* send work requests posted, not completed */
	uint32_t inv_out;
	bool sent;	  /* the call's Send completed */
	bool replied;	  /* a reply (or RDMA_ERROR) arrived */
	bool timed_out;
	bool answered;	  /* a reply came that had to be discarded: the server's credit is back */
	bool decoding;	  /* a reply is held, to decode once invalidations are done */
	struct rpcrdma_offer offer;
	uint8_t *wbuf;	  /* exposed write chunk memory */
	uint8_t *rbuf;	  /* exposed reply chunk memory */
	/* the held reply */
	struct rpcrdma_rbuf *held;
	uint32_t held_len;
	uint32_t inv_rkey;   /* the key the server invalidated, 0: none */
	struct wn_rpcrdma_hdr rh;
	struct rpcrdma_reply_plan plan;
	uint8_t *land[WN_RPCRDMA_MAX_READ_SEGS]; /* read chunk landing buffers */
	uint32_t rd_next_chunk;
	uint32_t rd_next_seg;
	uint32_t rd_off;
	uint32_t rd_out;
};

struct wn_rpcrdma_clnt {
	struct wn_rpcrdma_opts o;
	struct rdma_event_channel *ech;
	struct rdma_cm_id *id;
	struct rpcrdma_dom dom;
	struct rpcrdma_conn conn;
	bool dom_ok;
	bool conn_ok;
	uint32_t call_inline;
	uint32_t reply_inline;
	uint32_t granted; /* 1 until the first reply (RFC 8166 §3.3.3) */
	uint32_t active;  /* busy slots, timed-out ones included (their credit is still used) */
	uint32_t nslots;
	struct slot *slots;
	struct wn_rpcrdma_call *backlog, *backlog_tail;
	uint32_t started; /* calls started and not yet delivered */
	uint32_t next_xid;
	uint32_t sq_avail; /* send queue slots not reserved */
	int completed;	   /* calls delivered during the current poll */
	struct wn_rpcrdma_info st;
	struct wn_rpcrdma_hdr scratch; /* a received header being decoded */
};

static void slot_try_release(struct wn_rpcrdma_clnt *c, struct slot *s);
static void try_issue(struct wn_rpcrdma_clnt *c);

/* ---- connection ------------------------------------------------------------------------------- */

static int
cm_wait(struct wn_rpcrdma_clnt *c, enum rdma_cm_event_type want, struct rdma_cm_event **out,
	int timeout_ms)
{
	uint64_t end = wn_rpcrdma_now_ms() + (uint64_t)timeout_ms;
	struct rdma_cm_event *ev;
	int fd = c->ech->fd;

	for (;;) {
		if (rdma_get_cm_event(c->ech, &ev) == 0) {
			if (ev->event == want) {
				if (out != NULL)
					*out = ev;
				else
					rdma_ack_cm_event(ev);
				return 0;
			}
			int st = ev->status;
			enum rdma_cm_event_type e = ev->event;

			rdma_ack_cm_event(ev);
			RLOG(INFO, "connect: %s (status %d) while waiting for %s", rdma_event_str(e),
			     st, rdma_event_str(want));
			if (e == RDMA_CM_EVENT_REJECTED)
				return -ECONNREFUSED;
			if (e == RDMA_CM_EVENT_UNREACHABLE || e == RDMA_CM_EVENT_ADDR_ERROR ||
			    e == RDMA_CM_EVENT_ROUTE_ERROR)
				return -EHOSTUNREACH;
			return st < 0 ? st : -ECONNREFUSED;
		}
		if (errno != EAGAIN)
			return -errno;
		uint64_t now = wn_rpcrdma_now_ms();

		if (now >= end)
			return -ETIMEDOUT;
		wn_rpcrdma_wait_fds(&fd, 1, (int)(end - now));
	}
}

static int
resolve(const char *host, uint16_t port, struct sockaddr_in *sa)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	if (inet_pton(AF_INET, host, &sa->sin_addr) == 1)
		return 0;
	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return -EHOSTUNREACH;
	sa->sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
	freeaddrinfo(res);
	return 0;
}

static void on_wc(struct rpcrdma_conn *cn, struct ibv_wc *wc, struct rpcrdma_wr *wr);

static size_t
pool_size_for(const struct wn_rpcrdma_opts *o)
{
	if (o->pool_size != 0)
		return o->pool_size;
	/* buffers per credit, plus room for bounce buffers and long messages */
	return (size_t)o->credits * (RPCRDMA_HDR_MAX * 2 + o->inline_send * 2 + o->inline_recv * 2) +
	       (size_t)8 * 2 * o->max_msg;
}

static int
clnt_connect(struct wn_rpcrdma_clnt *c, const char *host)
{
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev = NULL;
	struct sockaddr_in sa;
	uint8_t pd[WN_RPCRDMA_CP_LEN];
	struct wn_rpcrdma_cp peer;
	uint32_t sq, rq;
	int ret;

	ret = resolve(host, c->o.port, &sa);
	if (ret != 0)
		return ret;
	c->ech = wn_rpcrdma_event_channel();
	if (c->ech == NULL)
		return errno != 0 ? -errno : -ENODEV;
	if (rdma_create_id(c->ech, &c->id, c, RDMA_PS_TCP) != 0)
		return -errno;
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&sa, 5000) != 0)
		return -errno;
	ret = cm_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, 10000);
	if (ret != 0)
		return ret;
	if (rdma_resolve_route(c->id, 5000) != 0)
		return -errno;
	ret = cm_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, 10000);
	if (ret != 0)
		return ret;
	ret = wn_rpcrdma_dom_init(&c->dom, c->id->verbs, c->o.reg, pool_size_for(&c->o));
	if (ret != 0)
		return ret;
	c->dom_ok = true;
	/* QP sizing from the credit limit: every call may need RPCRDMA_CALL_WRS send work
	 * requests; replies need one receive each, plus slack for an unexpected message */
	sq = c->o.credits * RPCRDMA_CALL_WRS;
	rq = c->o.credits + 2;
	ret = wn_rpcrdma_conn_setup(&c->conn, &c->dom, c->id, sq, rq, c->o.inline_recv, on_wc, c);
	if (ret != 0)
		return ret;
	c->conn_ok = true;
	c->sq_avail = c->conn.sq_size;
	if (c->sq_avail / RPCRDMA_CALL_WRS < c->o.credits) {
		c->o.credits = c->sq_avail / RPCRDMA_CALL_WRS;
		RLOG(WARN, "send queue of %u: credits lowered to %u", c->sq_avail, c->o.credits);
		if (c->o.credits == 0)
			return -ENOMEM;
	}
	memset(&cp, 0, sizeof(cp));
	c->conn.remote_inv = !c->o.no_remote_inv && !c->o.no_private_data &&
			     c->dom.reg == WN_RPCRDMA_REG_MW;
	if (!c->o.no_private_data) {
		wn_rpcrdma_cp_make(&c->o, c->conn.remote_inv, pd);
		cp.private_data = pd;
		cp.private_data_len = sizeof(pd);
	}
	/* the server reads our chunks: offer what the device allows; we read only long
	 * replies (RFC 5666), so a few of our own */
	cp.responder_resources = (uint8_t)(c->dom.attr.max_qp_rd_atom > 255 ? 255 :
					   c->dom.attr.max_qp_rd_atom);
	cp.initiator_depth = (uint8_t)(c->dom.attr.max_qp_init_rd_atom < 4 ?
				       c->dom.attr.max_qp_init_rd_atom : 4);
	cp.retry_count = 7;
	cp.rnr_retry_count = 7;
	if (rdma_connect(c->id, &cp) != 0)
		return -errno;
	ret = cm_wait(c, RDMA_CM_EVENT_ESTABLISHED, &ev, 30000);
	if (ret != 0)
		return ret;
	c->conn.established = true;
	c->conn.ord = ev->param.conn.initiator_depth != 0 ? ev->param.conn.initiator_depth
							  : cp.initiator_depth;
	if (c->conn.ord == 0)
		c->conn.ord = 1;
	ret = wn_rpcrdma_cp_decode(ev->param.conn.private_data, ev->param.conn.private_data_len,
				   &peer);
	rdma_ack_cm_event(ev);
	c->conn.peer_cp = ret == 0;
	/* RFC 8797: without private data both thresholds are 1024 */
	c->call_inline = c->o.inline_send < peer.inline_recv ? c->o.inline_send : peer.inline_recv;
	c->reply_inline = c->o.inline_recv < peer.inline_send ? c->o.inline_recv : peer.inline_send;
	if (c->o.no_private_data) {
		c->call_inline = c->o.inline_send < WN_RPCRDMA_INLINE_DEFAULT ?
					 c->o.inline_send : WN_RPCRDMA_INLINE_DEFAULT;
		c->reply_inline = c->o.inline_recv < WN_RPCRDMA_INLINE_DEFAULT ?
					  c->o.inline_recv : WN_RPCRDMA_INLINE_DEFAULT;
	}
	RLOG(INFO, "connected to %s: inline call %u reply %u, peer private data %s, ORD %u",
	     host, c->call_inline, c->reply_inline, c->conn.peer_cp ? "yes" : "no", c->conn.ord);
	if (c->o.settle_ms != 0)
		wn_rpcrdma_wait_fds(NULL, 0, (int)c->o.settle_ms);
	return 0;
}

static int
slots_init(struct wn_rpcrdma_clnt *c)
{
	c->nslots = c->o.credits;
	c->slots = calloc(c->nslots, sizeof(*c->slots));
	if (c->slots == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->nslots; i++) {
		struct slot *s = &c->slots[i];

		s->clnt = c;
		s->swr = (struct rpcrdma_wr){.kind = RPCRDMA_WR_SEND, .owner = s};
		s->bwr = (struct rpcrdma_wr){.kind = RPCRDMA_WR_BIND, .owner = s};
		s->iwr = (struct rpcrdma_wr){.kind = RPCRDMA_WR_INV, .owner = s};
		s->rwr = (struct rpcrdma_wr){.kind = RPCRDMA_WR_READ, .owner = s};
		s->hdr = wn_rpcrdma_pool_alloc(&c->dom.pool, RPCRDMA_HDR_MAX);
		s->inl = wn_rpcrdma_pool_alloc(&c->dom.pool, c->call_inline);
		if (s->hdr == NULL || s->inl == NULL)
			return -ENOMEM;
	}
	return 0;
}

struct wn_rpcrdma_clnt *
wn_rpcrdma_clnt_create(const char *host, const struct wn_rpcrdma_opts *o)
{
	struct wn_rpcrdma_clnt *c;
	int ret;

	if (host == NULL || o == NULL || o->credits == 0 || o->credits > 1024 ||
	    o->inline_send < WN_RPCRDMA_MIN_MSG_LEN + 64 || o->inline_recv < 256 ||
	    o->max_msg < o->inline_send) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->o = *o;
	if (c->o.timeout_ms == 0)
		c->o.timeout_ms = 30000;
	c->granted = 1;
	if (getrandom(&c->next_xid, sizeof(c->next_xid), GRND_NONBLOCK) != sizeof(c->next_xid))
		c->next_xid = (uint32_t)wn_rpcrdma_now_ms() * 2654435761u;
	ret = clnt_connect(c, host);
	if (ret == 0)
		ret = slots_init(c);
	if (ret != 0) {
		RLOG(INFO, "connect to %s port %u: %s", host, c->o.port, strerror(-ret));
		wn_rpcrdma_clnt_destroy(c);
		errno = -ret;
		return NULL;
	}
	c->st.reg = c->dom.reg;
	return c;
}

static void
deliver(struct wn_rpcrdma_clnt *c, struct slot *s, enum clnt_stat st)
{
	struct wn_rpcrdma_call *call = s->call;

	if (call == NULL)
		return;
	s->call = NULL;
	call->stat = st;
	call->slot_ = NULL;
	c->started--;
	c->completed++;
	c->st.calls++;
	if (call->done != NULL)
		call->done(call);
}

/* The connection is gone: fail every call, free every slot. */
static void
conn_lost(struct wn_rpcrdma_clnt *c)
{
	struct wn_rpcrdma_call *call;

	if (!c->conn_ok)
		return;
	if (!c->conn.dead)
		RLOG(INFO, "connection lost: %u calls fail", c->started);
	c->conn.dead = true;
	wn_rpcrdma_conn_teardown(&c->conn);
	c->conn_ok = false;
	for (uint32_t i = 0; i < c->nslots; i++) {
		struct slot *s = &c->slots[i];

		if (!s->busy)
			continue;
		deliver(c, s, RPC_CANTRECV);
		s->held = NULL; /* the receive buffers went with the connection */
		s->wr_out = s->inv_out = s->rd_out = 0;
		s->nmws = 0;
		s->sent = s->replied = true;
		s->decoding = false;
		slot_try_release(c, s);
	}
	while ((call = c->backlog) != NULL) {
		c->backlog = call->next_;
		call->stat = RPC_CANTRECV;
		c->started--;
		c->completed++;
		if (call->done != NULL)
			call->done(call);
	}
	c->backlog_tail = NULL;
}

void
wn_rpcrdma_clnt_destroy(struct wn_rpcrdma_clnt *c)
{
	if (c == NULL)
		return;
	if (c->conn_ok && c->conn.established)
		rdma_disconnect(c->id);
	conn_lost(c);
	if (c->slots != NULL) {
		for (uint32_t i = 0; i < c->nslots; i++) {
			wn_rpcrdma_pool_free(&c->dom.pool, c->slots[i].hdr);
			wn_rpcrdma_pool_free(&c->dom.pool, c->slots[i].inl);
		}
		free(c->slots);
	}
	if (c->id != NULL)
		rdma_destroy_id(c->id);
	if (c->dom_ok)
		wn_rpcrdma_dom_fini(&c->dom);
	if (c->ech != NULL)
		rdma_destroy_event_channel(c->ech);
	free(c);
}

int
wn_rpcrdma_clnt_reg(struct wn_rpcrdma_clnt *c, void *addr, size_t len)
{
	return wn_rpcrdma_dom_reg(&c->dom, addr, len);
}

int
wn_rpcrdma_clnt_dereg(struct wn_rpcrdma_clnt *c, void *addr)
{
	if (c->started != 0)
		return -EBUSY; /* a call may have its chunks in it */
	return wn_rpcrdma_dom_dereg(&c->dom, addr);
}

uint32_t
wn_rpcrdma_clnt_outstanding(const struct wn_rpcrdma_clnt *c)
{
	return c->started;
}

void
wn_rpcrdma_clnt_info(const struct wn_rpcrdma_clnt *c, struct wn_rpcrdma_info *info)
{
	*info = c->st;
	info->credits = c->granted;
	info->call_inline = c->call_inline;
	info->reply_inline = c->reply_inline;
	info->remote_inv = c->conn.remote_inv;
	info->peer_cp = c->conn.peer_cp;
	info->reg = c->dom.reg;
}

/* ---- issuing a call --------------------------------------------------------------------------- */

static void *
slot_buf(struct wn_rpcrdma_clnt *c, struct slot *s, size_t len)
{
	void *p;

	if (s->nbufs == sizeof(s->bufs) / sizeof(s->bufs[0]))
		return NULL;
	p = wn_rpcrdma_pool_alloc(&c->dom.pool, len);
	if (p != NULL)
		s->bufs[s->nbufs++] = p;
	return p;
}

static void
slot_free_bufs(struct wn_rpcrdma_clnt *c, struct slot *s)
{
	for (uint32_t i = 0; i < s->nbufs; i++)
		wn_rpcrdma_pool_free(&c->dom.pool, s->bufs[i]);
	s->nbufs = 0;
}

/* Encode the call message into @p buf (NULL: count) with reduction at @p ddp_min (0: none). */
static bool
encode_call(struct wn_rpcrdma_clnt *c, struct wn_rpcrdma_call *call, uint32_t xid, uint8_t *buf,
	    uint32_t cap, uint32_t ddp_min, struct rpcrdma_xitem *items, struct rpcrdma_xenc *e)
{
	struct rpc_msg m;
	XDR x;

	(void)c;
	memset(&m, 0, sizeof(m));
	m.rm_xid = xid;
	m.rm_direction = CALL;
	m.rm_call.cb_rpcvers = RPC_MSG_VERSION;
	m.rm_call.cb_prog = call->prog;
	m.rm_call.cb_vers = call->vers;
	m.rm_call.cb_proc = call->proc;
	if (call->cred != NULL)
		m.rm_call.cb_cred = *call->cred;
	else
		m.rm_call.cb_cred = _null_auth;
	m.rm_call.cb_verf = _null_auth;
	wn_rpcrdma_xenc_init(&x, e, buf, cap, ddp_min, items, RPCRDMA_CALL_ITEMS);
	return xdr_callmsg(&x, &m) &&
	       rpcrdma_xdr_or_void(call->xargs)(&x, (void *)(uintptr_t)call->args);
}

/* Octets of an RDMA_MSG/NOMSG header with @p nread read segments and the offered chunks. */
static uint32_t
hdr_len(uint32_t nread, bool write, bool reply)
{
	return WN_RPCRDMA_MIN_MSG_LEN + 24 * nread + (write ? 24 : 0) + (reply ? 20 : 0);
}

/* Expose [@p p, @p p + @p len) (registered) to the peer; the window is the slot's. */
static int
slot_expose(struct wn_rpcrdma_clnt *c, struct slot *s, uint8_t *p, uint32_t len, int access,
	    struct wn_rpcrdma_seg *seg)
{
	struct rpcrdma_mw *mw;
	int ret;

	ret = wn_rpcrdma_conn_expose(&c->conn, p, len, access, seg, &mw, &s->bwr);
	if (ret != 0)
		return ret;
	if (mw != NULL) {
		s->mws[s->nmws++] = mw;
		s->wr_out++;
	}
	return 0;
}

/* @return @p p if registered, else a pool block (with @p p's octets when @p copy_in). */
static uint8_t *
placeable(struct wn_rpcrdma_clnt *c, struct slot *s, uint8_t *p, uint32_t len, bool copy_in,
	  struct wn_rpcrdma_call *call)
{
	uint8_t *b;

	if (wn_rpcrdma_dom_mr(&c->dom, p, len) != NULL)
		return p;
	b = slot_buf(c, s, len);
	if (b == NULL)
		return NULL;
	if (copy_in) {
		memcpy(b, p, len);
		c->st.bytes_copied += len;
	}
	call->how |= WN_RPCRDMA_HOW_BOUNCE;
	return b;
}

/*
 * Marshal and send @p call on @p s. @return 0; -EAGAIN (pool memory short: retry when a
 * call completes; nothing was posted); another -errno fails the call.
 */
static int
issue(struct wn_rpcrdma_clnt *c, struct slot *s, struct wn_rpcrdma_call *call)
{
	struct rpcrdma_xitem items[RPCRDMA_CALL_ITEMS];
	uint8_t *src[RPCRDMA_CALL_ITEMS];
	struct wn_rpcrdma_hdr *h = &s->rh;
	struct rpcrdma_xenc e;
	uint32_t ddp = (call->flags & WN_RPCRDMA_CALL_DDP_ARGS) ? c->o.ddp_min : 0;
	uint32_t xid = c->next_xid++, nitems = 0, plen;
	uint8_t *payload = s->inl, *wp = NULL, *rp = NULL;
	bool want_write, want_reply, long_call = false;
	int n, ret;

	call->how = 0;
	want_write = call->ddp_buf != NULL && call->ddp_len >= c->o.ddp_min;
	want_reply = call->reply_max > c->reply_inline;
	if (want_reply && call->reply_max > c->o.max_msg)
		return -EMSGSIZE;
	/* a Short message when it fits (RFC 8166 §3.5.1) */
	if (!encode_call(c, call, xid, s->inl, c->call_inline - hdr_len(0, want_write, want_reply),
			 0, NULL, &e)) {
		if (!e.overflow)
			return -EINVAL;
		/* count the unreduced and reduced sizes, then pick Chunked or Long (§3.5) */
		if (!encode_call(c, call, xid, NULL, 0, ddp, items, &e))
			return -EINVAL;
		nitems = e.nitems;
		plen = e.off;
		uint32_t cap = c->call_inline - hdr_len(nitems, want_write, want_reply);

		if (plen + hdr_len(nitems, want_write, want_reply) > c->call_inline) {
			long_call = true;
			if (plen > c->o.max_msg)
				return -EMSGSIZE;
			payload = slot_buf(c, s, plen);
			if (payload == NULL)
				return -EAGAIN;
			cap = plen;
		}
		if (!encode_call(c, call, xid, payload, cap, ddp, items, &e) || e.nitems != nitems ||
		    e.off != plen)
			return -EINVAL; /* the arguments changed between the passes */
	}
	plen = e.off;
	/* all pool memory before anything is posted */
	for (uint32_t i = 0; i < nitems; i++) {
		src[i] = placeable(c, s, (uint8_t *)(uintptr_t)items[i].ptr, items[i].len, true,
				   call);
		if (src[i] == NULL)
			return -EAGAIN;
	}
	if (want_write) {
		wp = placeable(c, s, call->ddp_buf, call->ddp_len, false, call);
		if (wp == NULL)
			return -EAGAIN;
	}
	if (want_reply) {
		rp = slot_buf(c, s, call->reply_max);
		if (rp == NULL)
			return -EAGAIN;
	}
	memset(h, 0, sizeof(*h));
	h->xid = xid;
	h->vers = WN_RPCRDMA_VERSION;
	h->credits = c->o.credits;
	h->proc = long_call ? WN_RPCRDMA_NOMSG : WN_RPCRDMA_MSG;
	s->xid = xid;
	s->call = call;
	call->xid = xid;
	s->offer.write = want_write;
	s->offer.reply = want_reply;
	s->wbuf = wp;
	s->rbuf = rp;
	if (long_call) {
		struct wn_rpcrdma_read_seg *rs = &h->reads[h->nreads++];

		rs->position = 0;
		ret = slot_expose(c, s, payload, plen, IBV_ACCESS_REMOTE_READ, &rs->seg);
		if (ret != 0)
			return ret;
		call->how |= WN_RPCRDMA_HOW_LONG_CALL;
		c->st.long_calls++;
	}
	for (uint32_t i = 0; i < nitems; i++) {
		struct wn_rpcrdma_read_seg *rs = &h->reads[h->nreads++];

		rs->position = items[i].pos;
		ret = slot_expose(c, s, src[i], items[i].len, IBV_ACCESS_REMOTE_READ, &rs->seg);
		if (ret != 0)
			return ret;
		call->how |= WN_RPCRDMA_HOW_READ_CHUNK;
		c->st.read_chunks++;
		c->st.bytes_placed += items[i].len;
	}
	if (want_write) {
		h->nwrites = 1;
		h->writes[0].nsegs = 1;
		ret = slot_expose(c, s, wp, call->ddp_len,
				  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE,
				  &h->writes[0].segs[0]);
		if (ret != 0)
			return ret;
		s->offer.wseg = h->writes[0].segs[0];
	}
	if (want_reply) {
		h->has_reply = true;
		h->reply.nsegs = 1;
		ret = slot_expose(c, s, rp, call->reply_max,
				  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE, &h->reply.segs[0]);
		if (ret != 0)
			return ret;
		s->offer.rseg = h->reply.segs[0];
	}
	n = wn_rpcrdma_encode(h, s->hdr, RPCRDMA_HDR_MAX - 64);
	if (n < 0)
		return n;
	ret = wn_rpcrdma_conn_send(&c->conn, s->hdr, (uint32_t)n, payload, long_call ? 0 : plen, 0,
				&s->swr);
	if (ret != 0)
		return ret;
	s->wr_out++;
	return 0;
}

static void
backlog_push_head(struct wn_rpcrdma_clnt *c, struct wn_rpcrdma_call *call)
{
	call->next_ = c->backlog;
	c->backlog = call;
	if (c->backlog_tail == NULL)
		c->backlog_tail = call;
}

static struct wn_rpcrdma_call *
backlog_pop(struct wn_rpcrdma_clnt *c)
{
	struct wn_rpcrdma_call *call = c->backlog;

	if (call != NULL) {
		c->backlog = call->next_;
		if (c->backlog == NULL)
			c->backlog_tail = NULL;
		call->next_ = NULL;
	}
	return call;
}

static struct slot *
free_slot(struct wn_rpcrdma_clnt *c)
{
	for (uint32_t i = 0; i < c->nslots; i++)
		if (!c->slots[i].busy)
			return &c->slots[i];
	return NULL;
}

static uint32_t
window(const struct wn_rpcrdma_clnt *c)
{
	/* RFC 8166 §3.3.1: the lower of the requested and granted values */
	return c->granted < c->o.credits ? c->granted : c->o.credits;
}

static void
fail_unsent(struct wn_rpcrdma_clnt *c, struct wn_rpcrdma_call *call, enum clnt_stat st)
{
	call->stat = st;
	c->started--;
	c->completed++;
	if (call->done != NULL)
		call->done(call);
}

static void
try_issue(struct wn_rpcrdma_clnt *c)
{

	while (c->backlog != NULL && c->conn_ok && !c->conn.dead && c->active < window(c) &&
	       c->sq_avail >= RPCRDMA_CALL_WRS) {
		struct slot *s = free_slot(c);
		struct wn_rpcrdma_call *call;
		int ret;

		if (s == NULL)
			return;
		call = backlog_pop(c);
		s->busy = true;
		s->nmws = s->nbufs = 0;
		s->wr_out = s->inv_out = s->rd_out = 0;
		s->sent = s->replied = s->timed_out = s->decoding = s->answered = false;
		s->held = NULL;
		s->inv_rkey = 0;
		c->active++;
		c->sq_avail -= RPCRDMA_CALL_WRS;
		ret = issue(c, s, call);
		if (ret == 0) {
			call->slot_ = s;
			if (c->active > c->st.max_outstanding)
				c->st.max_outstanding = c->active;
			continue;
		}
		if (s->wr_out != 0 || s->nmws != 0) {
			/* work requests were posted: the connection is unusable */
			s->call = call;
			RLOG(ERR, "posting call %#x failed: %s", s->xid, strerror(-ret));
			conn_lost(c);
			return;
		}
		s->call = NULL;
		slot_free_bufs(c, s);
		s->busy = false;
		c->active--;
		c->sq_avail += RPCRDMA_CALL_WRS;
		if (ret == -EAGAIN && c->active > 0) {
			backlog_push_head(c, call); /* pool memory frees as calls complete */
			return;
		}
		RLOG(INFO, "call %#x not sent: %s", call->xid, strerror(-ret));
		fail_unsent(c, call, ret == -EINVAL || ret == -EMSGSIZE ? RPC_CANTENCODEARGS
									  : RPC_CANTSEND);
	}
}

int
wn_rpcrdma_clnt_start(struct wn_rpcrdma_clnt *c, struct wn_rpcrdma_call *call)
{
	if (c == NULL || call == NULL)
		return -EINVAL;
	if (!c->conn_ok || c->conn.dead)
		return -ENOTCONN;
	call->stat = RPC_SUCCESS;
	call->how = 0;
	call->rdma_err = 0;
	call->ddp_bytes = 0;
	call->slot_ = NULL;
	call->next_ = NULL;
	call->deadline_ = wn_rpcrdma_now_ms() + (call->timeout_ms != 0 ? call->timeout_ms
								  : c->o.timeout_ms);
	if (c->backlog_tail != NULL)
		c->backlog_tail->next_ = call;
	else
		c->backlog = call;
	c->backlog_tail = call;
	c->started++;
	try_issue(c);
	return 0;
}

/* ---- replies ---------------------------------------------------------------------------------- */

static void
slot_try_release(struct wn_rpcrdma_clnt *c, struct slot *s)
{
	if (!s->busy || s->call != NULL || !s->sent || !(s->replied || s->answered) ||
	    s->wr_out != 0 || s->decoding || s->held != NULL)
		return;
	slot_free_bufs(c, s);
	for (uint32_t i = 0; i < s->nmws; i++)
		wn_rpcrdma_conn_mw_put(&c->conn, s->mws[i]);
	s->nmws = 0;
	s->busy = false;
	c->active--;
	c->sq_avail += RPCRDMA_CALL_WRS;
}

static enum clnt_stat
reply_stat(const struct rpc_msg *m)
{
	if (m->rm_reply.rp_stat == MSG_ACCEPTED) {
		switch (m->acpted_rply.ar_stat) {
		case SUCCESS:
			return RPC_SUCCESS;
		case PROG_UNAVAIL:
			return RPC_PROGUNAVAIL;
		case PROG_MISMATCH:
			return RPC_PROGVERSMISMATCH;
		case PROC_UNAVAIL:
			return RPC_PROCUNAVAIL;
		case GARBAGE_ARGS:
			return RPC_CANTDECODEARGS;
		default:
			return RPC_SYSTEMERROR;
		}
	}
	return m->rjcted_rply.rj_stat == RPC_MISMATCH ? RPC_VERSMISMATCH : RPC_AUTHERROR;
}

/* Decode the held reply into the call's results (every window already invalidated). */
static void
decode_reply(struct wn_rpcrdma_clnt *c, struct slot *s)
{
	struct wn_rpcrdma_call *call = s->call;
	struct rpcrdma_xins rch[WN_RPCRDMA_MAX_READ_SEGS], wch[1];
	struct rpcrdma_reply_plan *pl = &s->plan;
	const uint8_t *buf;
	uint32_t len, nr = 0, nw = 0;
	struct rpcrdma_xdec d;
	char verf[MAX_AUTH_BYTES];
	struct rpc_msg m;
	enum clnt_stat st;
	XDR x;

	if (s->rh.proc == WN_RPCRDMA_NOMSG) {
		buf = pl->p0 ? s->land[0] : s->rbuf;
		len = pl->p0 ? pl->rch[0].len : pl->reply_len;
	} else {
		buf = s->held->buf + s->rh.hdr_len;
		len = s->held_len - s->rh.hdr_len;
	}
	for (uint32_t i = pl->p0 ? 1 : 0; i < pl->nrch; i++)
		rch[nr++] = (struct rpcrdma_xins){.pos = pl->rch[i].pos, .len = pl->rch[i].len,
						  .ptr = s->land[i]};
	if (s->offer.write)
		wch[nw++] = (struct rpcrdma_xins){.len = pl->placed, .ptr = s->wbuf};
	wn_rpcrdma_xdec_init(&x, &d, buf, len, rch, nr, wch, nw);
	if (s->rh.proc == WN_RPCRDMA_MSGP) {
		wn_rpcrdma_xdec_msgp(&d, s->rh.align, s->rh.thresh, s->rh.hdr_len);
		call->how |= WN_RPCRDMA_HOW_MSGP;
	}
	memset(&m, 0, sizeof(m));
	m.acpted_rply.ar_verf.oa_base = verf;
	m.acpted_rply.ar_results.where = call->res;
	m.acpted_rply.ar_results.proc = rpcrdma_xdr_or_void(call->xres);
	if (!xdr_replymsg(&x, &m) || m.rm_direction != REPLY || m.rm_xid != s->xid) {
		st = RPC_CANTDECODERES;
	} else {
		st = reply_stat(&m);
		if (st == RPC_SUCCESS && !wn_rpcrdma_xdec_done(&d))
			st = RPC_CANTDECODERES;
	}
	c->st.bytes_copied += d.copied;
	if (pl->placed > 0) {
		call->how |= WN_RPCRDMA_HOW_WRITE_CHUNK;
		call->ddp_bytes = pl->placed;
		c->st.write_chunks++;
		c->st.bytes_placed += pl->placed;
	}
	if (pl->reply_len > 0) {
		call->how |= WN_RPCRDMA_HOW_REPLY_CHUNK;
		c->st.reply_chunks++;
	}
	deliver(c, s, st);
}

/* Invalidations done: decode (if a reply is held), give the receive buffer back, deliver. */
static void
finish(struct wn_rpcrdma_clnt *c, struct slot *s)
{
	if (s->inv_out != 0 || s->rd_out != 0)
		return;
	if (s->decoding) {
		s->decoding = false;
		if (s->call != NULL)
			decode_reply(c, s);
	} else if (s->timed_out) {
		deliver(c, s, RPC_TIMEDOUT);
	} else if (s->replied) {
		deliver(c, s, RPC_CANTSEND); /* RDMA_ERROR */
	}
	if (s->held != NULL) {
		wn_rpcrdma_conn_repost(&c->conn, s->held);
		s->held = NULL;
	}
	slot_try_release(c, s);
}

/* Withdraw the peer's access to every window of @p s not already invalidated. */
static void
invalidate_all(struct wn_rpcrdma_clnt *c, struct slot *s)
{
	for (uint32_t i = 0; i < s->nmws; i++) {
		if (s->mws[i] == NULL)
			continue;
		if (s->inv_rkey != 0 && s->mws[i]->rkey == s->inv_rkey) {
			s->inv_rkey = 0; /* the server's Send With Invalidate did it */
			continue;
		}
		if (wn_rpcrdma_conn_invalidate(&c->conn, s->mws[i], &s->iwr) != 0) {
			/* RFC 8166 §4.5.4: cannot protect the memory: close the connection */
			conn_lost(c);
			return;
		}
		s->inv_out++;
		s->wr_out++;
	}
}

static void
post_reads(struct wn_rpcrdma_clnt *c, struct slot *s)
{
	const struct rpcrdma_reply_plan *pl = &s->plan;

	while (s->rd_next_chunk < pl->nrch && c->conn.reads_out < c->conn.ord) {
		const struct rpcrdma_rchunk *ch = &pl->rch[s->rd_next_chunk];
		const struct wn_rpcrdma_seg *seg = &s->rh.reads[ch->first + s->rd_next_seg].seg;

		if (seg->length > 0) {
			if (wn_rpcrdma_conn_read(&c->conn, s->land[s->rd_next_chunk] + s->rd_off,
						 seg, &s->rwr) != 0) {
				conn_lost(c);
				return;
			}
			s->rd_out++;
			s->wr_out++;
			c->st.bytes_placed += seg->length;
		}
		s->rd_off += seg->length;
		if (++s->rd_next_seg == ch->nsegs) {
			s->rd_next_chunk++;
			s->rd_next_seg = 0;
			s->rd_off = 0;
		}
	}
}

static void
send_done_msg(struct wn_rpcrdma_clnt *c, struct slot *s)
{
	struct wn_rpcrdma_hdr h = {.xid = s->xid,
				   .vers = WN_RPCRDMA_VERSION,
				   .credits = c->o.credits,
				   .proc = WN_RPCRDMA_DONE};
	uint8_t *b = s->hdr + RPCRDMA_HDR_MAX - 64; /* the call's Send may still use s->hdr */
	int n = wn_rpcrdma_encode(&h, b, 64);

	/* RFC 5666 §3.5: the client tells the server it may free the long reply's buffer */
	if (n < 0 || wn_rpcrdma_conn_send(&c->conn, b, (uint32_t)n, NULL, 0, 0, &s->swr) != 0) {
		conn_lost(c);
		return;
	}
	s->wr_out++;
}

/* A valid reply for @p s arrived in @p rb. */
static void
on_reply(struct wn_rpcrdma_clnt *c, struct slot *s, struct rpcrdma_rbuf *rb, uint32_t len)
{
	s->replied = true;
	if (s->call == NULL || s->timed_out) {
		/* late reply of a timed-out call: its credit comes back now */
		wn_rpcrdma_conn_repost(&c->conn, rb);
		slot_try_release(c, s);
		return;
	}
	s->held = rb;
	s->held_len = len;
	if (s->rh.proc == WN_RPCRDMA_ERROR) {
		s->call->rdma_err = s->rh.err;
		c->st.rdma_errors_recv++;
		invalidate_all(c, s);
		if (c->conn_ok)
			finish(c, s);
		return;
	}
	s->decoding = true;
	if (s->plan.nrch > 0) {
		/* RFC 5666 long reply by read chunk: pull it, then RDMA_DONE */
		for (uint32_t i = 0; i < s->plan.nrch; i++) {
			s->land[i] = slot_buf(c, s, s->plan.rch[i].len);
			if (s->land[i] == NULL) {
				RLOG(ERR, "no pool memory for a %u-octet long reply",
				     s->plan.rch[i].len);
				conn_lost(c);
				return;
			}
		}
		s->rd_next_chunk = s->rd_next_seg = s->rd_off = 0;
		s->call->how |= WN_RPCRDMA_HOW_READ_REPLY;
		c->st.read_replies++;
		post_reads(c, s);
		return;
	}
	invalidate_all(c, s);
	if (c->conn_ok)
		finish(c, s);
}

static struct slot *
slot_by_xid(struct wn_rpcrdma_clnt *c, uint32_t xid)
{
	for (uint32_t i = 0; i < c->nslots; i++)
		if (c->slots[i].busy && c->slots[i].xid == xid && !c->slots[i].replied)
			return &c->slots[i];
	return NULL;
}

/*
 * A reply to @p s that must be discarded (RFC 8166 §4.5): the call keeps waiting (and times
 * out), but the server has answered it, so its credit is free once the call ends.
 */
static void
discard(struct wn_rpcrdma_clnt *c, struct slot *s, struct rpcrdma_rbuf *rb)
{
	c->st.discarded++;
	if (s != NULL)
		s->answered = true;
	wn_rpcrdma_conn_repost(&c->conn, rb);
}

static void
on_recv(struct wn_rpcrdma_clnt *c, struct rpcrdma_rbuf *rb, const struct ibv_wc *wc)
{
	struct wn_rpcrdma_hdr *h = &c->scratch;
	enum wn_rpcrdma_status st;
	struct slot *s;

	st = wn_rpcrdma_decode(rb->buf, wc->byte_len, h);
	s = wc->byte_len >= WN_RPCRDMA_FIXED_LEN ? slot_by_xid(c, h->xid) : NULL;
	if (s == NULL || st != WN_RPCRDMA_OK || h->proc == WN_RPCRDMA_DONE) {
		/* RFC 8166 §4.5: a requester silently discards replies it cannot use */
		RLOG(DEBUG, "reply discarded: %s, xid %#x%s", wn_rpcrdma_status_str(st), h->xid,
		     s == NULL ? " (no such call)" : "");
		discard(c, s, rb);
		return;
	}
	if (h->proc != WN_RPCRDMA_ERROR &&
	    wn_rpcrdma_proto_reply_check(h, &s->offer, c->o.max_msg, &s->plan) != 0) {
		RLOG(INFO, "reply %#x does not match its call's chunks: discarded", h->xid);
		discard(c, s, rb);
		return;
	}
	/* RFC 8166 §4.5.2: the RPC message's XID must be rdma_xid (inline payloads; a long
	 * reply's is checked when it is decoded) */
	if ((h->proc == WN_RPCRDMA_MSG || h->proc == WN_RPCRDMA_MSGP) &&
	    (wc->byte_len < h->hdr_len + 4 || ntohl(*(const uint32_t *)(rb->buf + h->hdr_len)) !=
						      h->xid)) {
		RLOG(INFO, "reply %#x carries another RPC XID: discarded", h->xid);
		discard(c, s, rb);
		return;
	}
	/* a zero grant would deadlock (RFC 8166 §3.3.1): treat it as one */
	c->granted = h->credits == 0 ? 1 : h->credits;
	s->rh = *h;
	if ((wc->wc_flags & IBV_WC_WITH_INV) && s->call != NULL) {
		s->inv_rkey = wc->invalidated_rkey;
		s->call->how |= WN_RPCRDMA_HOW_REMOTE_INV;
		c->st.remote_inv_count++;
	}
	on_reply(c, s, rb, wc->byte_len);
}

static void
on_wc(struct rpcrdma_conn *cn, struct ibv_wc *wc, struct rpcrdma_wr *wr)
{
	struct wn_rpcrdma_clnt *c = cn->owner;
	struct slot *s = wr->owner;

	if (wc->status != IBV_WC_SUCCESS) {
		if (!cn->dead)
			RLOG(INFO, "work request failed: %s (kind %u)",
			     ibv_wc_status_str(wc->status), wr->kind);
		conn_lost(c);
		return;
	}
	switch (wr->kind) {
	case RPCRDMA_WR_RECV:
		on_recv(c, (struct rpcrdma_rbuf *)wr->owner, wc);
		return;
	case RPCRDMA_WR_SEND:
		s->wr_out--;
		s->sent = true;
		break;
	case RPCRDMA_WR_BIND:
		s->wr_out--;
		break;
	case RPCRDMA_WR_INV:
		s->wr_out--;
		s->inv_out--;
		finish(c, s);
		break;
	case RPCRDMA_WR_READ:
		s->wr_out--;
		s->rd_out--;
		cn->reads_out--;
		post_reads(c, s);
		if (s->rd_out == 0 && s->rd_next_chunk == s->plan.nrch && c->conn_ok) {
			send_done_msg(c, s);
			invalidate_all(c, s);
			if (c->conn_ok)
				finish(c, s);
		}
		/* another slot may be waiting for read credits */
		for (uint32_t i = 0; i < c->nslots && c->conn_ok; i++)
			if (c->slots[i].busy && c->slots[i].rd_next_chunk < c->slots[i].plan.nrch &&
			    c->slots[i].decoding && &c->slots[i] != s)
				post_reads(c, &c->slots[i]);
		break;
	default:
		break;
	}
	slot_try_release(c, s);
}

/* ---- polling ---------------------------------------------------------------------------------- */

static void
cm_events(struct wn_rpcrdma_clnt *c)
{
	struct rdma_cm_event *ev;

	while (c->ech != NULL && rdma_get_cm_event(c->ech, &ev) == 0) {
		enum rdma_cm_event_type e = ev->event;

		rdma_ack_cm_event(ev);
		if (e == RDMA_CM_EVENT_DISCONNECTED || e == RDMA_CM_EVENT_DEVICE_REMOVAL ||
		    e == RDMA_CM_EVENT_TIMEWAIT_EXIT) {
			RLOG(INFO, "rdma_cm: %s", rdma_event_str(e));
			conn_lost(c);
		}
	}
}

static void
timeouts(struct wn_rpcrdma_clnt *c, uint64_t now)
{
	struct wn_rpcrdma_call **pp = &c->backlog, *call;

	for (uint32_t i = 0; i < c->nslots; i++) {
		struct slot *s = &c->slots[i];

		if (!s->busy || s->call == NULL || s->timed_out || s->decoding ||
		    s->call->deadline_ > now)
			continue;
		/* the server may still use our chunks: withdraw them, then report */
		s->timed_out = true;
		invalidate_all(c, s);
		if (!c->conn_ok)
			return;
		finish(c, s);
	}
	while ((call = *pp) != NULL) {
		if (call->deadline_ <= now) {
			*pp = call->next_;
			if (c->backlog_tail == call)
				c->backlog_tail = NULL;
			fail_unsent(c, call, RPC_TIMEDOUT);
			continue;
		}
		pp = &call->next_;
	}
	if (c->backlog_tail == NULL && c->backlog != NULL)
		for (c->backlog_tail = c->backlog; c->backlog_tail->next_ != NULL;)
			c->backlog_tail = c->backlog_tail->next_;
}

static uint64_t
next_deadline(const struct wn_rpcrdma_clnt *c)
{
	uint64_t d = UINT64_MAX;

	for (uint32_t i = 0; i < c->nslots; i++)
		if (c->slots[i].busy && c->slots[i].call != NULL && !c->slots[i].timed_out &&
		    c->slots[i].call->deadline_ < d)
			d = c->slots[i].call->deadline_;
	for (const struct wn_rpcrdma_call *call = c->backlog; call != NULL; call = call->next_)
		if (call->deadline_ < d)
			d = call->deadline_;
	return d;
}

static void
progress(struct wn_rpcrdma_clnt *c)
{
	cm_events(c);
	if (!c->conn_ok)
		return;
	wn_rpcrdma_dom_events(&c->dom, NULL);
	if (wn_rpcrdma_conn_drain(&c->conn) < 0)
		conn_lost(c);
	try_issue(c);
}

int
wn_rpcrdma_clnt_poll(struct wn_rpcrdma_clnt *c, int timeout_ms)
{
	uint64_t start = wn_rpcrdma_now_ms(), end, now;
	int fds[2];

	c->completed = 0;
	end = timeout_ms < 0 ? UINT64_MAX : start + (uint64_t)timeout_ms;
	for (;;) {
		progress(c);
		now = wn_rpcrdma_now_ms();
		timeouts(c, now);
		if (c->completed > 0 || now >= end)
			break;
		if (!c->conn_ok && c->started == 0)
			return -ENOTCONN;
		if (c->o.busy_poll_us != 0) {
			uint64_t spin_end = now + (c->o.busy_poll_us + 999) / 1000;

			while (c->completed == 0 && wn_rpcrdma_now_ms() < spin_end && c->conn_ok) {
				if (wn_rpcrdma_conn_drain(&c->conn) < 0)
					conn_lost(c);
				try_issue(c);
			}
			if (c->completed > 0)
				break;
		}
		uint64_t wake = next_deadline(c);

		if (wake > end)
			wake = end;
		now = wn_rpcrdma_now_ms();
		fds[0] = c->ech->fd;
		fds[1] = c->dom.ch->fd;
		wn_rpcrdma_wait_fds(fds, c->conn_ok ? 2 : 1,
				 wake == UINT64_MAX ? -1 : (int)(wake > now ? wake - now : 0));
	}
	return c->completed;
}

static void
sync_done(struct wn_rpcrdma_call *call)
{
	*(bool *)call->arg = true;
}

enum clnt_stat
wn_rpcrdma_clnt_call(struct wn_rpcrdma_clnt *c, struct wn_rpcrdma_call *call)
{
	bool done = false;
	int ret;

	call->done = sync_done;
	call->arg = &done;
	ret = wn_rpcrdma_clnt_start(c, call);
	if (ret != 0) {
		call->stat = RPC_CANTSEND;
		return call->stat;
	}
	while (!done)
		if (wn_rpcrdma_clnt_poll(c, -1) < 0 && !done) {
			call->stat = RPC_CANTRECV;
			break;
		}
	return call->stat;
}
