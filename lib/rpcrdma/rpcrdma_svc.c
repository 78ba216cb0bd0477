/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RPC-over-RDMA version 1 responder (server): listen and accept with RFC 8797 private
 * data, credit enforcement, read chunk pulls, dispatch to rpcgen-style procedure tables,
 * write/reply chunk pushes, RFC 5666 long replies by read chunk (RDMA_DONE), RDMA_ERROR.
 * See wn_rpcrdma_xprt.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma_priv.h"

/* How long a long reply by read chunk waits for the client's RDMA_DONE (RFC 5666 §5.1). */
#define DONE_TIMEOUT_MS 30000

struct svc_prog {
	uint32_t prog;
	uint32_t vers;
	const struct wn_rpcrdma_svc_proc *procs;
	uint32_t nprocs;
	void *ctx;
};

enum req_state {
	RQ_WAIT,       /* waiting for send queue room or pool memory */
	RQ_READING,    /* pulling read chunks */
	RQ_SENDING,    /* reply (or RDMA_ERROR) posted */
	RQ_AWAIT_DONE, /* long reply exposed by read chunk until RDMA_DONE */
	RQ_INVAL,      /* invalidating that exposure */
};

struct sconn;

/* One call being served (struct wn_rpcrdma_req to the handlers). */
struct wn_rpcrdma_req {
	struct wn_rpcrdma_req *next; /* wait or read queue */
	struct wn_rpcrdma_req *all_next;
	struct rpcrdma_wr wr; /* every send work request of this request */
	struct sconn *sc;
	enum req_state state;
	struct rpcrdma_rbuf *rb; /* the call's receive buffer, until decoded */
	uint32_t rlen;
	uint32_t resv; /* send queue reservation */
	uint32_t wr_out;
	bool counted;  /* counts against the credits granted */
	struct wn_rpcrdma_hdr h;
	struct rpcrdma_call_plan plan;
	uint8_t *land[WN_RPCRDMA_MAX_READ_SEGS];
	uint32_t rd_chunk, rd_seg, rd_off, rd_out;
	void *bufs[WN_RPCRDMA_MAX_READ_SEGS + WN_RPCRDMA_MAX_WRITE_CHUNKS + 4];
	uint32_t nbufs;
	struct rpcrdma_mw *mw; /* long reply exposure */
	uint64_t done_deadline;
	/* dispatch */
	const struct svc_prog *prog;
	const struct wn_rpcrdma_svc_proc *proc;
	uint32_t procnum;
	struct opaque_auth cred;
	char credbuf[MAX_AUTH_BYTES];
	void *res;
};

struct sconn {
	struct sconn *next;
	struct wn_rpcrdma_svc *svc;
	struct rpcrdma_conn conn;
	bool conn_ok;
	bool closing;
	uint32_t granted;
	uint32_t active;     /* calls received and not yet answered */
	uint32_t await_done; /* long replies waiting for RDMA_DONE */
	uint32_t sq_avail;
	struct wn_rpcrdma_req *all; /* every request */
	struct wn_rpcrdma_req *waitq, *waitq_tail;
	struct wn_rpcrdma_req *readq, *readq_tail;
	struct wn_rpcrdma_hdr scratch;
};

struct pending_reg {
	struct pending_reg *next;
	void *addr;
	size_t len;
};

struct wn_rpcrdma_svc {
	struct wn_rpcrdma_opts o;
	struct rdma_event_channel *ech;
	struct rdma_cm_id *listen;
	struct rpcrdma_dom dom;
	bool dom_ok;
	struct pending_reg *pending;
	struct sconn *conns;
	struct svc_prog *progs;
	uint32_t nprogs;
	int dispatched;
	struct wn_rpcrdma_info st;
};

static void sconn_close(struct sconn *sc, const char *why);
static void req_start(struct wn_rpcrdma_req *rq);
static void on_wc(struct rpcrdma_conn *cn, struct ibv_wc *wc, struct rpcrdma_wr *wr);

/* ---- requests -------------------------------------------------------------------------------- */

static struct wn_rpcrdma_req *
req_new(struct sconn *sc)
{
	struct wn_rpcrdma_req *rq = calloc(1, sizeof(*rq));

	if (rq == NULL)
		return NULL;
	rq->sc = sc;
	rq->wr.kind = RPCRDMA_WR_SEND;
	rq->wr.owner = rq;
	rq->all_next = sc->all;
	sc->all = rq;
	return rq;
}

static void *
req_buf(struct wn_rpcrdma_req *rq, size_t len)
{
	void *p;

	if (rq->nbufs == sizeof(rq->bufs) / sizeof(rq->bufs[0]))
		return NULL;
	p = wn_rpcrdma_pool_alloc(&rq->sc->svc->dom.pool, len);
	if (p != NULL)
		rq->bufs[rq->nbufs++] = p;
	return p;
}

static void
req_free_bufs(struct wn_rpcrdma_req *rq)
{
	for (uint32_t i = 0; i < rq->nbufs; i++)
		wn_rpcrdma_pool_free(&rq->sc->svc->dom.pool, rq->bufs[i]);
	rq->nbufs = 0;
}

static void
req_free_res(struct wn_rpcrdma_req *rq)
{
	if (rq->res == NULL)
		return;
	if (rq->proc->free_res != NULL)
		rq->proc->free_res(rq->res, rq->prog->ctx);
	else
		xdr_free(rpcrdma_xdr_or_void(rq->proc->xres), rq->res);
	free(rq->res);
	rq->res = NULL;
}

/* The call is answered: its credit is free again (the client may send the next call). */
static void
req_uncount(struct wn_rpcrdma_req *rq)
{
	if (rq->counted) {
		rq->counted = false;
		rq->sc->active--;
	}
}

static void
req_release(struct wn_rpcrdma_req *rq)
{
	struct sconn *sc = rq->sc;
	struct wn_rpcrdma_req **pp;

	req_uncount(rq);
	req_free_res(rq);
	req_free_bufs(rq);
	if (rq->rb != NULL && sc->conn_ok)
		wn_rpcrdma_conn_repost(&sc->conn, rq->rb);
	if (rq->mw != NULL && sc->conn_ok)
		wn_rpcrdma_conn_mw_put(&sc->conn, rq->mw);
	sc->sq_avail += rq->resv;
	for (pp = &sc->all; *pp != NULL; pp = &(*pp)->all_next)
		if (*pp == rq) {
			*pp = rq->all_next;
			break;
		}
	free(rq);
	/* room may have freed for a waiting request */
	while (sc->waitq != NULL && !sc->closing) {
		struct wn_rpcrdma_req *w = sc->waitq;

		if (w->plan.nwr + 2 > sc->sq_avail)
			break;
		sc->waitq = w->next;
		if (sc->waitq == NULL)
			sc->waitq_tail = NULL;
		w->next = NULL;
		req_start(w);
		if (w->state == RQ_WAIT)
			break; /* still short of pool memory */
	}
}

static void
wait_push(struct sconn *sc, struct wn_rpcrdma_req *rq, bool head)
{
	rq->state = RQ_WAIT;
	if (head) {
		rq->next = sc->waitq;
		sc->waitq = rq;
		if (sc->waitq_tail == NULL)
			sc->waitq_tail = rq;
		return;
	}
	rq->next = NULL;
	if (sc->waitq_tail != NULL)
		sc->waitq_tail->next = rq;
	else
		sc->waitq = rq;
	sc->waitq_tail = rq;
}

/* ---- replies --------------------------------------------------------------------------------- */

/* Post the RDMA_ERROR answering @p rq's call. */
static void
send_error(struct wn_rpcrdma_req *rq, uint32_t vers, uint32_t err)
{
	struct sconn *sc = rq->sc;
	uint8_t *b = req_buf(rq, 64);
	int n;

	sc->svc->st.rdma_errors_sent++;
	RLOG(INFO, "call %#x: RDMA_ERROR %s", rq->h.xid,
	     err == WN_RPCRDMA_ERR_VERS ? "ERR_VERS" : "ERR_CHUNK");
	if (rq->rb != NULL) {
		wn_rpcrdma_conn_repost(&sc->conn, rq->rb);
		rq->rb = NULL;
	}
	n = b == NULL ? -ENOMEM
		      : wn_rpcrdma_error_build_vers(b, 64, rq->h.xid, vers, sc->granted, err);
	req_uncount(rq);
	if (n < 0 || wn_rpcrdma_conn_send(&sc->conn, b, (uint32_t)n, NULL, 0, 0, &rq->wr) != 0) {
		/* RFC 8166 §4.5.4: no way to answer: close the connection */
		sconn_close(sc, "cannot send RDMA_ERROR");
		req_release(rq);
		return;
	}
	rq->wr_out++;
	rq->state = RQ_SENDING;
}

/* RDMA Write @p len octets of @p src (registered) into chunk @p ch from its start. */
static int
write_chunk(struct wn_rpcrdma_req *rq, const uint8_t *src, uint32_t len,
	    struct wn_rpcrdma_chunk *ch)
{
	struct sconn *sc = rq->sc;
	uint32_t off = 0;
	int ret;

	for (uint32_t i = 0; i < ch->nsegs; i++) {
		struct wn_rpcrdma_seg *sg = &ch->segs[i];
		uint32_t k = len - off < sg->length ? len - off : sg->length;

		sg->length = k; /* RFC 8166 §3.4.6: the length actually written */
		if (k == 0)
			continue;
		ret = wn_rpcrdma_conn_write(&sc->conn, src + off, k, sg->handle, sg->offset,
					    &rq->wr);
		if (ret != 0)
			return ret;
		rq->wr_out++;
		off += k;
	}
	sc->svc->st.bytes_placed += len;
	return 0;
}

/* @return @p p if registered, else a pool copy of it (NULL: no memory). */
static const uint8_t *
registered(struct wn_rpcrdma_req *rq, const uint8_t *p, uint32_t len)
{
	uint8_t *b;

	if (wn_rpcrdma_dom_mr(&rq->sc->svc->dom, p, len) != NULL)
		return p;
	b = req_buf(rq, len);
	if (b != NULL) {
		memcpy(b, p, len);
		rq->sc->svc->st.bytes_copied += len;
	}
	return b;
}

static uint32_t
reply_hdr_len(const struct wn_rpcrdma_hdr *h)
{
	uint32_t n = WN_RPCRDMA_MIN_MSG_LEN;

	for (uint32_t i = 0; i < h->nwrites; i++)
		n += 8 + 16 * h->writes[i].nsegs;
	if (h->has_reply)
		n += 4 + 16 * h->reply.nsegs;
	return n;
}

static bool
encode_reply(struct wn_rpcrdma_req *rq, struct rpc_msg *m, uint8_t *buf, uint32_t cap,
	     struct rpcrdma_xitem *items, uint32_t nitems, struct rpcrdma_xenc *e)
{
	XDR x;

	wn_rpcrdma_xenc_init(&x, e, buf, cap, nitems > 0 ? 1 : 0, items, nitems);
	(void)rq;
	return xdr_replymsg(&x, m);
}

/* Encode, push and send the reply @p m to @p rq's call. */
static void
send_reply(struct wn_rpcrdma_req *rq, struct rpc_msg *m)
{
	struct sconn *sc = rq->sc;
	struct wn_rpcrdma_svc *s = sc->svc;
	struct wn_rpcrdma_hdr *h = &rq->h;
	struct rpcrdma_xitem items[WN_RPCRDMA_MAX_WRITE_CHUNKS];
	uint32_t nitems = 0, hl = reply_hdr_len(h), plen, inv = 0;
	uint8_t *hdr = req_buf(rq, RPCRDMA_HDR_MAX), *inl, *payload;
	bool nomsg = false, by_read = false;
	struct rpcrdma_xenc e;
	int n, ret;

	if (rq->proc != NULL && (rq->proc->flags & WN_RPCRDMA_PROC_DDP_RESULT) &&
	    m->rm_reply.rp_stat == MSG_ACCEPTED && m->acpted_rply.ar_stat == SUCCESS)
		nitems = h->nwrites; /* RFC 8166 §4.3.2: results go to the write chunks offered */
	if (hdr == NULL || hl >= sc->conn.send_max)
		goto err_chunk;
	inl = req_buf(rq, sc->conn.send_max);
	if (inl == NULL)
		goto err_chunk;
	payload = inl;
	if (!encode_reply(rq, m, inl, sc->conn.send_max - hl, items, nitems, &e)) {
		if (!e.overflow)
			goto err_chunk;
		/* a Long Reply: count, then a reply chunk, or (RFC 5666) a read chunk */
		if (!encode_reply(rq, m, NULL, 0, items, nitems, &e))
			goto err_chunk;
		plen = e.off;
		if (h->has_reply && plen <= rq->plan.reply_cap) {
			nomsg = true;
		} else if (!s->o.no_read_reply && sc->await_done < sc->granted &&
			   plen <= s->o.max_msg) {
			nomsg = by_read = true;
		} else {
			RLOG(INFO, "call %#x: reply of %u octets has no way back", h->xid, plen);
			goto err_chunk;
		}
		payload = req_buf(rq, plen);
		if (payload == NULL ||
		    !encode_reply(rq, m, payload, plen, items, nitems, &e) || e.off != plen)
			goto err_chunk;
	}
	plen = e.off;
	/* DDP-eligible results into the write chunks, in order; unused chunks return empty */
	for (uint32_t i = 0; i < h->nwrites; i++) {
		if (i < e.nitems) {
			const uint8_t *src;

			if (e.items[i].len > rq->plan.wcap[i])
				goto err_chunk; /* the chunk offered is too small */
			src = registered(rq, e.items[i].ptr, e.items[i].len);
			if (src == NULL)
				goto err_chunk;
			if (write_chunk(rq, src, e.items[i].len, &h->writes[i]) != 0)
				goto fatal;
			s->st.write_chunks++;
		} else {
			for (uint32_t j = 0; j < h->writes[i].nsegs; j++)
				h->writes[i].segs[j].length = 0;
		}
	}
	if (h->has_reply) {
		if (nomsg && !by_read) {
			if (write_chunk(rq, payload, plen, &h->reply) != 0)
				goto fatal;
			s->st.reply_chunks++;
		} else {
			for (uint32_t j = 0; j < h->reply.nsegs; j++)
				h->reply.segs[j].length = 0;
		}
	}
	h->nreads = 0;
	if (by_read) {
		h->nreads = 1;
		h->reads[0].position = 0;
		ret = wn_rpcrdma_conn_expose(&sc->conn, payload, plen, IBV_ACCESS_REMOTE_READ,
					  &h->reads[0].seg, &rq->mw, &rq->wr);
		if (ret != 0)
			goto fatal;
		if (rq->mw != NULL)
			rq->wr_out++;
		sc->await_done++;
		s->st.read_replies++;
	}
	h->vers = WN_RPCRDMA_VERSION;
	h->credits = sc->granted;
	h->proc = nomsg ? WN_RPCRDMA_NOMSG : WN_RPCRDMA_MSG;
	n = wn_rpcrdma_encode(h, hdr, RPCRDMA_HDR_MAX);
	if (n < 0)
		goto fatal;
	if (sc->conn.remote_inv && !s->o.no_remote_inv)
		inv = rq->plan.inv_rkey;
	req_uncount(rq);
	if (wn_rpcrdma_conn_send(&sc->conn, hdr, (uint32_t)n, payload, nomsg ? 0 : plen, inv,
			      &rq->wr) != 0)
		goto fatal;
	if (inv != 0)
		s->st.remote_inv_count++;
	rq->wr_out++;
	rq->state = by_read ? RQ_AWAIT_DONE : RQ_SENDING;
	if (by_read)
		rq->done_deadline = wn_rpcrdma_now_ms() + DONE_TIMEOUT_MS;
	return;
err_chunk:
	/* RFC 8166 §4.5.3: no RPC-level reply is possible for this XID */
	req_free_bufs(rq);
	req_free_res(rq);
	send_error(rq, h->vers, WN_RPCRDMA_ERR_CHUNK);
	return;
fatal:
	sconn_close(sc, "cannot post the reply");
}

/* ---- dispatch -------------------------------------------------------------------------------- */

static const struct svc_prog *
find_prog(const struct wn_rpcrdma_svc *s, uint32_t prog, uint32_t vers, uint32_t *low,
	  uint32_t *high, bool *prog_known)
{
	const struct svc_prog *hit = NULL;

	*prog_known = false;
	*low = UINT32_MAX;
	*high = 0;
	for (uint32_t i = 0; i < s->nprogs; i++) {
		if (s->progs[i].prog != prog)
			continue;
		*prog_known = true;
		if (s->progs[i].vers < *low)
			*low = s->progs[i].vers;
		if (s->progs[i].vers > *high)
			*high = s->progs[i].vers;
		if (s->progs[i].vers == vers)
			hit = &s->progs[i];
	}
	return hit;
}

/* Every read chunk is in: decode the call, run the handler, answer. */
static void
dispatch(struct wn_rpcrdma_req *rq)
{
	struct sconn *sc = rq->sc;
	struct wn_rpcrdma_svc *s = sc->svc;
	const struct rpcrdma_call_plan *pl = &rq->plan;
	struct rpcrdma_xins rch[WN_RPCRDMA_MAX_READ_SEGS];
	struct rpcrdma_xdec d;
	struct rpc_msg m, r;
	char verf[MAX_AUTH_BYTES];
	const uint8_t *buf;
	uint32_t len, nr = 0, low, high;
	bool known, args_ok;
	void *args = NULL;
	XDR x;

	if (pl->p0) {
		buf = rq->land[0];
		len = pl->rch[0].len;
	} else {
		buf = rq->rb->buf + rq->h.hdr_len;
		len = rq->rlen - rq->h.hdr_len;
	}
	for (uint32_t i = pl->p0 ? 1 : 0; i < pl->nrch; i++)
		rch[nr++] = (struct rpcrdma_xins){.pos = pl->rch[i].pos, .len = pl->rch[i].len,
						  .ptr = rq->land[i]};
	wn_rpcrdma_xdec_init(&x, &d, buf, len, rch, nr, NULL, 0);
	if (rq->h.proc == WN_RPCRDMA_MSGP)
		wn_rpcrdma_xdec_msgp(&d, rq->h.align, rq->h.thresh, rq->h.hdr_len);
	memset(&m, 0, sizeof(m));
	m.rm_call.cb_cred.oa_base = rq->credbuf;
	m.rm_call.cb_verf.oa_base = verf;
	/* RFC 8166 §4.5.2: an XID that differs from rdma_xid is an XDR error: ERR_CHUNK */
	if (!xdr_callmsg(&x, &m) || m.rm_direction != CALL || m.rm_xid != rq->h.xid) {
		send_error(rq, rq->h.vers, WN_RPCRDMA_ERR_CHUNK);
		return;
	}
	rq->cred = m.rm_call.cb_cred;
	rq->procnum = m.rm_call.cb_proc;
	memset(&r, 0, sizeof(r));
	r.rm_xid = m.rm_xid;
	r.rm_direction = REPLY;
	s->st.calls++;
	s->dispatched++;
	if (m.rm_call.cb_rpcvers != RPC_MSG_VERSION) {
		r.rm_reply.rp_stat = MSG_DENIED;
		r.rjcted_rply.rj_stat = RPC_MISMATCH;
		r.rjcted_rply.rj_vers.low = RPC_MSG_VERSION;
		r.rjcted_rply.rj_vers.high = RPC_MSG_VERSION;
		goto reply;
	}
	if (rq->cred.oa_flavor != AUTH_NONE && rq->cred.oa_flavor != AUTH_SYS) {
		r.rm_reply.rp_stat = MSG_DENIED;
		r.rjcted_rply.rj_stat = AUTH_ERROR;
		r.rjcted_rply.rj_why = AUTH_BADCRED;
		goto reply;
	}
	r.rm_reply.rp_stat = MSG_ACCEPTED;
	r.acpted_rply.ar_verf = _null_auth;
	rq->prog = find_prog(s, m.rm_call.cb_prog, m.rm_call.cb_vers, &low, &high, &known);
	if (rq->prog == NULL) {
		r.acpted_rply.ar_stat = known ? PROG_MISMATCH : PROG_UNAVAIL;
		r.acpted_rply.ar_vers.low = low;
		r.acpted_rply.ar_vers.high = high;
		goto reply;
	}
	if (rq->procnum >= rq->prog->nprocs || rq->prog->procs[rq->procnum].fn == NULL) {
		r.acpted_rply.ar_stat = PROC_UNAVAIL;
		goto reply;
	}
	rq->proc = &rq->prog->procs[rq->procnum];
	args = calloc(1, rq->proc->args_size > 0 ? rq->proc->args_size : 1);
	rq->res = calloc(1, rq->proc->res_size > 0 ? rq->proc->res_size : 1);
	if (args == NULL || rq->res == NULL) {
		r.acpted_rply.ar_stat = SYSTEM_ERR;
		goto reply;
	}
	args_ok = rpcrdma_xdr_or_void(rq->proc->xargs)(&x, args) && wn_rpcrdma_xdec_done(&d);
	s->st.bytes_copied += d.copied;
	/* the arguments are decoded: the receive buffer and landing buffers can go (RFC 8166
	 * §3.3.1: receive resources are back before the reply is sent) */
	wn_rpcrdma_conn_repost(&sc->conn, rq->rb);
	rq->rb = NULL;
	req_free_bufs(rq);
	if (!args_ok) {
		r.acpted_rply.ar_stat = GARBAGE_ARGS;
	} else {
		r.acpted_rply.ar_stat = rq->proc->fn(args, rq->res, rq);
		r.acpted_rply.ar_results.where = rq->res;
		r.acpted_rply.ar_results.proc = rpcrdma_xdr_or_void(rq->proc->xres);
	}
	xdr_free(rpcrdma_xdr_or_void(rq->proc->xargs), args);
reply:
	free(args);
	if (rq->rb != NULL) {
		wn_rpcrdma_conn_repost(&sc->conn, rq->rb);
		rq->rb = NULL;
	}
	req_free_bufs(rq);
	if (r.rm_reply.rp_stat != MSG_ACCEPTED || r.acpted_rply.ar_stat != SUCCESS)
		req_free_res(rq);
	send_reply(rq, &r);
}

/* ---- read chunks ----------------------------------------------------------------------------- */

static void
post_reads(struct sconn *sc)
{
	while (sc->readq != NULL && sc->conn.reads_out < sc->conn.ord && !sc->closing) {
		struct wn_rpcrdma_req *rq = sc->readq;
		const struct rpcrdma_rchunk *ch = &rq->plan.rch[rq->rd_chunk];
		const struct wn_rpcrdma_seg *seg = &rq->h.reads[ch->first + rq->rd_seg].seg;

		if (seg->length > 0) {
			if (wn_rpcrdma_conn_read(&sc->conn, rq->land[rq->rd_chunk] + rq->rd_off,
						 seg, &rq->wr) != 0) {
				sconn_close(sc, "cannot post an RDMA Read");
				return;
			}
			rq->rd_out++;
			rq->wr_out++;
			sc->svc->st.bytes_placed += seg->length;
		}
		rq->rd_off += seg->length;
		if (++rq->rd_seg == ch->nsegs) {
			rq->rd_chunk++;
			rq->rd_seg = 0;
			rq->rd_off = 0;
		}
		if (rq->rd_chunk == rq->plan.nrch) {
			/* every read of this request is posted */
			sc->readq = rq->next;
			if (sc->readq == NULL)
				sc->readq_tail = NULL;
			rq->next = NULL;
			if (rq->rd_out == 0)
				dispatch(rq);
		}
	}
}

/* Admit a planned call: reserve the send queue, land the read chunks, dispatch. */
static void
req_start(struct wn_rpcrdma_req *rq)
{
	struct sconn *sc = rq->sc;
	uint32_t need = rq->plan.nwr + 2; /* + a bind and an invalidation for a long reply */

	if (rq->resv == 0) {
		if (need > sc->conn.sq_size) {
			send_error(rq, rq->h.vers, WN_RPCRDMA_ERR_CHUNK);
			return;
		}
		if (need > sc->sq_avail || sc->waitq != NULL) {
			wait_push(sc, rq, false);
			return;
		}
		sc->sq_avail -= need;
		rq->resv = need;
	}
	for (uint32_t i = 0; i < rq->plan.nrch; i++) {
		if (rq->land[i] != NULL)
			continue;
		rq->land[i] = req_buf(rq, rq->plan.rch[i].len);
		if (rq->land[i] == NULL) {
			bool others = false;

			for (struct sconn *o = sc->svc->conns; o != NULL && !others; o = o->next)
				for (struct wn_rpcrdma_req *r = o->all; r != NULL; r = r->all_next)
					if (r != rq && r->state != RQ_WAIT) {
						others = true;
						break;
					}
			if (!others) {
				RLOG(INFO, "call %#x: %u octets of read chunks exceed the pool",
				     rq->h.xid, rq->plan.read_bytes);
				send_error(rq, rq->h.vers, WN_RPCRDMA_ERR_CHUNK);
				return;
			}
			wait_push(sc, rq, true); /* memory frees as other calls finish */
			return;
		}
	}
	if (rq->plan.nrch == 0) {
		rq->state = RQ_READING;
		dispatch(rq);
		return;
	}
	sc->svc->st.read_chunks += rq->plan.nrch - (rq->plan.p0 ? 1 : 0);
	if (rq->plan.p0)
		sc->svc->st.long_calls++;
	rq->state = RQ_READING;
	rq->rd_chunk = rq->rd_seg = rq->rd_off = 0;
	if (sc->readq_tail != NULL)
		sc->readq_tail->next = rq;
	else
		sc->readq = rq;
	sc->readq_tail = rq;
	post_reads(sc);
}

/* ---- receive --------------------------------------------------------------------------------- */

static struct wn_rpcrdma_req *
find_done(struct sconn *sc, uint32_t xid)
{
	for (struct wn_rpcrdma_req *r = sc->all; r != NULL; r = r->all_next)
		if (r->state == RQ_AWAIT_DONE && r->h.xid == xid)
			return r;
	return NULL;
}

/* A long reply's buffer is no longer needed (RDMA_DONE or timeout): withdraw it. */
static void
done_release(struct wn_rpcrdma_req *rq)
{
	struct sconn *sc = rq->sc;

	sc->await_done--;
	if (rq->mw != NULL) {
		rq->state = RQ_INVAL;
		if (wn_rpcrdma_conn_invalidate(&sc->conn, rq->mw, &rq->wr) != 0) {
			sconn_close(sc, "cannot invalidate a long reply");
			return;
		}
		rq->wr_out++;
		return;
	}
	if (rq->wr_out != 0) {
		rq->state = RQ_SENDING; /* released when its Send completes */
		return;
	}
	req_release(rq);
}

static void
on_recv(struct sconn *sc, struct rpcrdma_rbuf *rb, uint32_t len)
{
	struct wn_rpcrdma_hdr *h = &sc->scratch;
	struct wn_rpcrdma_req *rq;
	enum wn_rpcrdma_status st;
	int ret;

	st = len >= WN_RPCRDMA_FIXED_LEN ? wn_rpcrdma_decode(rb->buf, len, h) : WN_RPCRDMA_SHORT;
	if (st == WN_RPCRDMA_OK && h->proc == WN_RPCRDMA_DONE) {
		rq = find_done(sc, h->xid);
		wn_rpcrdma_conn_repost(&sc->conn, rb);
		if (rq != NULL)
			done_release(rq);
		else
			sc->svc->st.discarded++;
		return;
	}
	/* RFC 8166 §4.5: shorter than a minimal header: the XID cannot be trusted; a
	 * responder discards RDMA_ERROR */
	if (len < WN_RPCRDMA_MIN_MSG_LEN || (st == WN_RPCRDMA_OK && h->proc == WN_RPCRDMA_ERROR)) {
		sc->svc->st.discarded++;
		wn_rpcrdma_conn_repost(&sc->conn, rb);
		return;
	}
	/* every other message is a call and costs a credit (RFC 8166 §3.3.1) */
	if (sc->active >= sc->granted) {
		wn_rpcrdma_conn_repost(&sc->conn, rb);
		sc->svc->st.disconnects++;
		sconn_close(sc, "credit overrun");
		return;
	}
	rq = req_new(sc);
	if (rq == NULL) {
		wn_rpcrdma_conn_repost(&sc->conn, rb);
		sconn_close(sc, "out of memory");
		return;
	}
	rq->counted = true;
	sc->active++;
	if (sc->active > sc->svc->st.max_outstanding)
		sc->svc->st.max_outstanding = sc->active;
	rq->rb = rb;
	rq->rlen = len;
	rq->h = *h;
	/* RDMA_ERROR replies use the headroom kept for them (one per credit) */
	if (st != WN_RPCRDMA_OK) {
		/* RFC 8166 §4.5.1/§4.5.2: ERR_VERS with our range, ERR_CHUNK for the rest */
		send_error(rq, h->vers, wn_rpcrdma_status_errcode(st));
		return;
	}
	ret = wn_rpcrdma_proto_call_plan(h, len, sc->svc->o.max_msg, &rq->plan);
	if (ret != 0) {
		send_error(rq, h->vers, WN_RPCRDMA_ERR_CHUNK);
		return;
	}
	req_start(rq);
}

static void
on_wc(struct rpcrdma_conn *cn, struct ibv_wc *wc, struct rpcrdma_wr *wr)
{
	struct sconn *sc = cn->owner;
	struct wn_rpcrdma_req *rq;

	if (wc->status != IBV_WC_SUCCESS) {
		if (!sc->closing)
			RLOG(INFO, "work request failed: %s (opcode %d)",
			     ibv_wc_status_str(wc->status), wc->opcode);
		if (wr->kind == RPCRDMA_WR_RECV)
			((struct rpcrdma_rbuf *)wr->owner)->posted = false;
		else
			((struct wn_rpcrdma_req *)wr->owner)->wr_out--;
		/* RFC 8166 §4.5.3: RDMA operational errors are fatal to the connection */
		sconn_close(sc, "RDMA operation failed");
		return;
	}
	if (wr->kind == RPCRDMA_WR_RECV) {
		if (!sc->closing)
			on_recv(sc, (struct rpcrdma_rbuf *)wr->owner, wc->byte_len);
		return;
	}
	rq = wr->owner;
	rq->wr_out--;
	if (wc->opcode == IBV_WC_RDMA_READ) {
		rq->rd_out--;
		cn->reads_out--;
		if (rq->rd_out == 0 && rq->rd_chunk == rq->plan.nrch && rq->state == RQ_READING)
			dispatch(rq);
		post_reads(sc);
		return;
	}
	if (rq->wr_out != 0)
		return;
	if (rq->state == RQ_SENDING || rq->state == RQ_INVAL)
		req_release(rq);
	else if (rq->state == RQ_AWAIT_DONE)
		req_free_res(rq); /* the reply is on the wire; its buffer stays exposed */
}

/* ---- connections ----------------------------------------------------------------------------- */

static void
sconn_free(struct sconn *sc)
{
	struct wn_rpcrdma_svc *s = sc->svc;
	struct sconn **pp;

	sc->closing = true;
	if (sc->conn_ok) {
		wn_rpcrdma_conn_teardown(&sc->conn);
		sc->conn_ok = false;
	}
	while (sc->all != NULL) {
		struct wn_rpcrdma_req *rq = sc->all;

		rq->rb = NULL;
		rq->mw = NULL;
		req_release(rq);
	}
	for (pp = &s->conns; *pp != NULL; pp = &(*pp)->next)
		if (*pp == sc) {
			*pp = sc->next;
			break;
		}
	if (sc->conn.id != NULL)
		rdma_destroy_id(sc->conn.id);
	s->st.connections--;
	free(sc);
}

/* Disconnect (the DISCONNECTED event frees the connection). */
static void
sconn_close(struct sconn *sc, const char *why)
{
	if (sc->closing)
		return;
	RLOG(INFO, "closing a connection: %s", why);
	sc->closing = true;
	sc->conn.dead = true;
	rdma_disconnect(sc->conn.id);
}

static int
dom_ready(struct wn_rpcrdma_svc *s, struct ibv_context *ctx)
{
	size_t pool;
	int ret;

	if (s->dom_ok)
		return s->dom.ctx == ctx ? 0 : -EXDEV;
	pool = s->o.pool_size;
	if (pool == 0)
		pool = (size_t)s->o.credits * 4 * (s->o.inline_recv + s->o.inline_send) +
		       (size_t)16 * 2 * s->o.max_msg;
	ret = wn_rpcrdma_dom_init(&s->dom, ctx, s->o.reg, pool);
	if (ret != 0)
		return ret;
	s->dom_ok = true;
	s->st.reg = s->dom.reg;
	while (s->pending != NULL) {
		struct pending_reg *p = s->pending;

		s->pending = p->next;
		ret = wn_rpcrdma_dom_reg(&s->dom, p->addr, p->len);
		if (ret != 0)
			RLOG(WARN, "registering %zu octets at %p: %s", p->len, p->addr,
			     strerror(-ret));
		free(p);
	}
	return 0;
}

/* @return a connection to free (its id too) once the event is acknowledged, or NULL. */
static struct sconn *
on_connect_request(struct wn_rpcrdma_svc *s, struct rdma_cm_event *ev, bool *destroy_id)
{
	struct rdma_cm_id *id = ev->id;
	struct wn_rpcrdma_cp peer;
	struct rdma_conn_param cp;
	uint8_t pd[WN_RPCRDMA_CP_LEN];
	struct sconn *sc;
	uint32_t sq, rq;
	int ret;

	ret = dom_ready(s, id->verbs);
	sc = ret == 0 ? calloc(1, sizeof(*sc)) : NULL;
	if (sc == NULL) {
		RLOG(WARN, "connect request rejected: %s", strerror(ret != 0 ? -ret : ENOMEM));
		rdma_reject(id, NULL, 0);
		*destroy_id = true;
		return NULL;
	}
	sc->svc = s;
	sc->granted = s->o.credits;
	/* QP sizing from the credit limit: per call a few reads/writes and the Send; receives
	 * for every credit, the RDMA_DONEs of long replies and slack */
	sq = s->o.credits * 8 < 256 ? 256 : s->o.credits * 8;
	rq = 2 * s->o.credits + 2;
	ret = wn_rpcrdma_conn_setup(&sc->conn, &s->dom, id, sq, rq, s->o.inline_recv, on_wc, sc);
	if (ret != 0) {
		RLOG(WARN, "connect request rejected: %s", strerror(-ret));
		free(sc);
		rdma_reject(id, NULL, 0);
		*destroy_id = true;
		return NULL;
	}
	sc->conn_ok = true;
	sc->sq_avail = sc->conn.sq_size - sc->granted; /* headroom: an RDMA_ERROR per credit */
	id->context = sc;
	ret = wn_rpcrdma_cp_decode(ev->param.conn.private_data, ev->param.conn.private_data_len,
				   &peer);
	sc->conn.peer_cp = ret == 0;
	sc->conn.send_max = s->o.inline_send < peer.inline_recv ? s->o.inline_send
								: peer.inline_recv;
	if (s->o.no_private_data && sc->conn.send_max > WN_RPCRDMA_INLINE_DEFAULT)
		sc->conn.send_max = WN_RPCRDMA_INLINE_DEFAULT;
	sc->conn.remote_inv = (peer.flags & WN_RPCRDMA_CP_F_REMOTE_INV) && !s->o.no_remote_inv;
	memset(&cp, 0, sizeof(cp));
	if (!s->o.no_private_data) {
		wn_rpcrdma_cp_make(&s->o, false, pd);
		cp.private_data = pd;
		cp.private_data_len = sizeof(pd);
	}
	/* we read the client's chunks (our ORD, its IRD); it reads only RFC 5666 long replies */
	cp.initiator_depth = ev->param.conn.responder_resources;
	if (cp.initiator_depth > s->dom.attr.max_qp_init_rd_atom)
		cp.initiator_depth = (uint8_t)s->dom.attr.max_qp_init_rd_atom;
	cp.responder_resources = ev->param.conn.initiator_depth;
	if (cp.responder_resources > s->dom.attr.max_qp_rd_atom)
		cp.responder_resources = (uint8_t)s->dom.attr.max_qp_rd_atom;
	sc->conn.ord = cp.initiator_depth != 0 ? cp.initiator_depth : 1;
	sc->next = s->conns;
	s->conns = sc;
	s->st.connections++;
	if (rdma_accept(id, &cp) != 0) {
		RLOG(WARN, "rdma_accept: %s", strerror(errno));
		return sc;
	}
	RLOG(INFO, "connection accepted: inline send %u recv %u, peer private data %s, "
		   "remote invalidation %s, ORD %u",
	     sc->conn.send_max, s->o.inline_recv, sc->conn.peer_cp ? "yes" : "no",
	     sc->conn.remote_inv ? "yes" : "no", sc->conn.ord);
	return NULL;
}

static void
cm_events(struct wn_rpcrdma_svc *s)
{
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(s->ech, &ev) == 0) {
		struct sconn *sc = ev->id != s->listen ? ev->id->context : NULL;

		switch (ev->event) {
		case RDMA_CM_EVENT_CONNECT_REQUEST: {
			struct rdma_cm_id *id = ev->id;
			bool destroy = false;

			/* rdma_destroy_id() waits for the id's events to be acknowledged */
			sc = on_connect_request(s, ev, &destroy);
			rdma_ack_cm_event(ev);
			if (sc != NULL)
				sconn_free(sc);
			else if (destroy)
				rdma_destroy_id(id);
			continue;
		}
		case RDMA_CM_EVENT_ESTABLISHED:
			if (sc != NULL)
				sc->conn.established = true;
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
		case RDMA_CM_EVENT_REJECTED:
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			if (sc != NULL) {
				RLOG(INFO, "connection: %s", rdma_event_str(ev->event));
				ev->id->context = NULL;
				rdma_ack_cm_event(ev);
				sconn_free(sc);
				continue;
			}
			break;
		default:
			break;
		}
		rdma_ack_cm_event(ev);
	}
}

/* ---- public ---------------------------------------------------------------------------------- */

struct wn_rpcrdma_svc *
wn_rpcrdma_svc_create(const char *addr, const struct wn_rpcrdma_opts *o)
{
	struct wn_rpcrdma_svc *s;
	struct sockaddr_in sa;
	int ret = 0;

	if (addr == NULL || o == NULL || o->credits == 0 || o->credits > 1024 ||
	    o->inline_send < 256 || o->inline_recv < WN_RPCRDMA_MIN_MSG_LEN + 64) {
		errno = EINVAL;
		return NULL;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(o->port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->o = *o;
	s->ech = wn_rpcrdma_event_channel();
	if (s->ech == NULL)
		goto fail;
	if (rdma_create_id(s->ech, &s->listen, s, RDMA_PS_TCP) != 0 ||
	    rdma_bind_addr(s->listen, (struct sockaddr *)&sa) != 0 || rdma_listen(s->listen, 64) != 0)
		goto fail;
	if (s->listen->verbs != NULL) {
		ret = dom_ready(s, s->listen->verbs);
		if (ret != 0) {
			errno = -ret;
			goto fail;
		}
	}
	RLOG(INFO, "listening on %s port %u", addr, o->port);
	return s;
fail:
	ret = errno;
	wn_rpcrdma_svc_destroy(s);
	errno = ret;
	return NULL;
}

void
wn_rpcrdma_svc_destroy(struct wn_rpcrdma_svc *s)
{
	if (s == NULL)
		return;
	while (s->conns != NULL) {
		struct sconn *sc = s->conns;

		if (!sc->closing)
			rdma_disconnect(sc->conn.id);
		sconn_free(sc);
	}
	if (s->listen != NULL)
		rdma_destroy_id(s->listen);
	if (s->dom_ok)
		wn_rpcrdma_dom_fini(&s->dom);
	while (s->pending != NULL) {
		struct pending_reg *p = s->pending;

		s->pending = p->next;
		free(p);
	}
	if (s->ech != NULL)
		rdma_destroy_event_channel(s->ech);
	free(s->progs);
	free(s);
}

int
wn_rpcrdma_svc_register(struct wn_rpcrdma_svc *s, uint32_t prog, uint32_t vers,
			const struct wn_rpcrdma_svc_proc *procs, uint32_t nprocs, void *ctx)
{
	struct svc_prog *p;

	if (s == NULL || procs == NULL || nprocs == 0)
		return -EINVAL;
	for (uint32_t i = 0; i < s->nprogs; i++)
		if (s->progs[i].prog == prog && s->progs[i].vers == vers)
			return -EEXIST;
	p = realloc(s->progs, (s->nprogs + 1) * sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	s->progs = p;
	s->progs[s->nprogs++] = (struct svc_prog){.prog = prog, .vers = vers, .procs = procs,
						  .nprocs = nprocs, .ctx = ctx};
	return 0;
}

int
wn_rpcrdma_svc_reg(struct wn_rpcrdma_svc *s, void *addr, size_t len)
{
	struct pending_reg *p;

	if (s->dom_ok)
		return wn_rpcrdma_dom_reg(&s->dom, addr, len);
	if (addr == NULL || len == 0)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	p->addr = addr;
	p->len = len;
	p->next = s->pending;
	s->pending = p;
	return 0;
}

int
wn_rpcrdma_svc_dereg(struct wn_rpcrdma_svc *s, void *addr)
{
	struct pending_reg **pp, *p;

	if (!s->dom_ok) {
		for (pp = &s->pending; (p = *pp) != NULL; pp = &p->next)
			if (p->addr == addr) {
				*pp = p->next;
				free(p);
				return 0;
			}
		return -ENOENT;
	}
	for (struct sconn *sc = s->conns; sc != NULL; sc = sc->next)
		if (sc->all != NULL)
			return -EBUSY; /* a reply may be RDMA-Written from it */
	return wn_rpcrdma_dom_dereg(&s->dom, addr);
}

static void
done_timeouts(struct wn_rpcrdma_svc *s, uint64_t now)
{
	for (struct sconn *sc = s->conns; sc != NULL; sc = sc->next)
		for (struct wn_rpcrdma_req *r = sc->all; r != NULL; r = r->all_next)
			if (r->state == RQ_AWAIT_DONE && r->wr_out == 0 && r->done_deadline <= now) {
				RLOG(INFO, "call %#x: no RDMA_DONE for its long reply", r->h.xid);
				done_release(r);
				break; /* the list may have changed */
			}
}

static void
progress(struct wn_rpcrdma_svc *s)
{
	cm_events(s);
	if (!s->dom_ok)
		return;
	wn_rpcrdma_dom_events(&s->dom, NULL);
	for (struct sconn *sc = s->conns, *next; sc != NULL; sc = next) {
		next = sc->next;
		if (sc->conn_ok && wn_rpcrdma_conn_drain(&sc->conn) < 0)
			sconn_close(sc, "CQ poll failed");
	}
}

int
wn_rpcrdma_svc_poll(struct wn_rpcrdma_svc *s, int timeout_ms)
{
	uint64_t now = wn_rpcrdma_now_ms(), end = timeout_ms < 0 ? UINT64_MAX : now + timeout_ms;
	int fds[2];

	s->dispatched = 0;
	for (;;) {
		progress(s);
		now = wn_rpcrdma_now_ms();
		done_timeouts(s, now);
		if (s->dispatched > 0 || now >= end)
			break;
		if (s->o.busy_poll_us != 0) {
			uint64_t spin_end = now + (s->o.busy_poll_us + 999) / 1000;

			while (s->dispatched == 0 && wn_rpcrdma_now_ms() < spin_end)
				for (struct sconn *sc = s->conns; sc != NULL; sc = sc->next)
					if (sc->conn_ok)
						wn_rpcrdma_conn_drain(&sc->conn);
			if (s->dispatched > 0)
				break;
		}
		fds[0] = s->ech->fd;
		fds[1] = s->dom_ok ? s->dom.ch->fd : -1;
		uint64_t wait = end - now;

		wn_rpcrdma_wait_fds(fds, s->dom_ok ? 2 : 1,
				 end == UINT64_MAX ? 1000 : (int)(wait > 1000 ? 1000 : wait));
	}
	return s->dispatched;
}

void
wn_rpcrdma_svc_info(const struct wn_rpcrdma_svc *s, struct wn_rpcrdma_info *info)
{
	*info = s->st;
	info->credits = s->o.credits;
	info->reply_inline = s->o.inline_send;
	info->call_inline = s->o.inline_recv;
	info->remote_inv = !s->o.no_remote_inv;
}

void *
wn_rpcrdma_req_ctx(const struct wn_rpcrdma_req *rq)
{
	return rq->prog != NULL ? rq->prog->ctx : NULL;
}

const struct opaque_auth *
wn_rpcrdma_req_cred(const struct wn_rpcrdma_req *rq)
{
	return &rq->cred;
}

uint32_t
wn_rpcrdma_req_xid(const struct wn_rpcrdma_req *rq)
{
	return rq->h.xid;
}

uint32_t
wn_rpcrdma_req_proc(const struct wn_rpcrdma_req *rq)
{
	return rq->procnum;
}

int
wn_rpcrdma_req_auth_sys(const struct wn_rpcrdma_req *rq, struct authunix_parms *p)
{
	XDR x;

	memset(p, 0, sizeof(*p));
	if (rq->cred.oa_flavor != AUTH_SYS)
		return -ENOENT;
	xdrmem_create(&x, rq->cred.oa_base, rq->cred.oa_length, XDR_DECODE);
	if (!xdr_authunix_parms(&x, p)) {
		xdr_free((xdrproc_t)xdr_authunix_parms, (char *)p);
		memset(p, 0, sizeof(*p));
		return -EBADMSG;
	}
	return 0;
}
