/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RPC-over-RDMA v1 transport header codec (RFC 5666 §4.3) over a bounded
 * XDR reader and writer.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wn_rpcrdma.h"

/* ---- bounded XDR ---------------------------------------------------------------------------- */

struct xdr_rd {
	const uint8_t *p;
	size_t len;
	size_t off;
};

static bool
rd_u32(struct xdr_rd *r, uint32_t *v)
{
	if (r->len - r->off < 4)
		return false;
	const uint8_t *p = r->p + r->off;
	*v = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	r->off += 4;
	return true;
}

static bool
rd_u64(struct xdr_rd *r, uint64_t *v)
{
	uint32_t hi = 0, lo = 0;

	if (!rd_u32(r, &hi) || !rd_u32(r, &lo))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

struct xdr_wr {
	uint8_t *p;
	size_t cap;
	size_t off;
	bool overflow;
};

static void
wr_u32(struct xdr_wr *w, uint32_t v)
{
	if (w->cap - w->off < 4) {
		w->overflow = true;
		return;
	}
	uint8_t *p = w->p + w->off;
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	w->off += 4;
}

static void
wr_u64(struct xdr_wr *w, uint64_t v)
{
	wr_u32(w, (uint32_t)(v >> 32));
	wr_u32(w, (uint32_t)v);
}

/* ---- decode --------------------------------------------------------------------------------- */

static const char *const status_names[WN_RPCRDMA_STATUS_COUNT] = {
	[WN_RPCRDMA_OK] = "ok",
	[WN_RPCRDMA_SHORT] = "header truncated",
	[WN_RPCRDMA_BAD_VERS] = "unsupported RPC-over-RDMA version",
	[WN_RPCRDMA_BAD_PROC] = "unknown message type",
	[WN_RPCRDMA_BAD_DISCRIM] = "optional-data discriminator not 0 or 1",
	[WN_RPCRDMA_TOO_MANY] = "too many chunks or segments",
	[WN_RPCRDMA_TRAILING] = "octets after a header that carries no RPC message",
};

const char *
wn_rpcrdma_status_str(enum wn_rpcrdma_status st)
{
	if ((unsigned int)st >= WN_RPCRDMA_STATUS_COUNT)
		return "unknown";
	return status_names[st];
}

uint32_t
wn_rpcrdma_status_errcode(enum wn_rpcrdma_status st)
{
	if (st == WN_RPCRDMA_OK)
		return 0;
	/* RFC 5666 §4.2 */
	return st == WN_RPCRDMA_BAD_VERS ? WN_RPCRDMA_ERR_VERS : WN_RPCRDMA_ERR_CHUNK;
}

/* XDR optional-data discriminator: @return 0/1, or -1 (short), -2 (not a bool). */
static int
rd_present(struct xdr_rd *r)
{
	uint32_t v;

	if (!rd_u32(r, &v))
		return -1;
	return v > 1 ? -2 : (int)v;
}

static enum wn_rpcrdma_status
present_err(int d)
{
	return d == -1 ? WN_RPCRDMA_SHORT : WN_RPCRDMA_BAD_DISCRIM;
}

static bool
rd_seg(struct xdr_rd *r, struct wn_rpcrdma_seg *s)
{
	return rd_u32(r, &s->handle) && rd_u32(r, &s->length) && rd_u64(r, &s->offset);
}

/* A counted array of segments (xdr_write_chunk). */
static enum wn_rpcrdma_status
rd_chunk(struct xdr_rd *r, struct wn_rpcrdma_chunk *c)
{
	uint32_t n;

	if (!rd_u32(r, &n))
		return WN_RPCRDMA_SHORT;
	if (n > WN_RPCRDMA_MAX_CHUNK_SEGS)
		return WN_RPCRDMA_TOO_MANY;
	c->nsegs = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!rd_seg(r, &c->segs[i]))
			return WN_RPCRDMA_SHORT;
		c->nsegs = i + 1;
	}
	return WN_RPCRDMA_OK;
}

/* Read list, write list, reply chunk (rpc_rdma_header). */
static enum wn_rpcrdma_status
rd_lists(struct xdr_rd *r, struct wn_rpcrdma_hdr *h)
{
	enum wn_rpcrdma_status st;
	int d;

	/* read list: linked list of read chunks, each "1 P H L OO", ended by 0 */
	while ((d = rd_present(r)) == 1) {
		if (h->nreads == WN_RPCRDMA_MAX_READ_SEGS)
			return WN_RPCRDMA_TOO_MANY;
		struct wn_rpcrdma_read_seg *rs = &h->reads[h->nreads];
		if (!rd_u32(r, &rs->position) || !rd_seg(r, &rs->seg))
			return WN_RPCRDMA_SHORT;
		h->nreads++;
	}
	if (d < 0)
		return present_err(d);
	/* write list: linked list of counted arrays */
	while ((d = rd_present(r)) == 1) {
		if (h->nwrites == WN_RPCRDMA_MAX_WRITE_CHUNKS)
			return WN_RPCRDMA_TOO_MANY;
		st = rd_chunk(r, &h->writes[h->nwrites]);
		if (st != WN_RPCRDMA_OK)
			return st;
		h->nwrites++;
	}
	if (d < 0)
		return present_err(d);
	/* reply chunk: optional counted array */
	d = rd_present(r);
	if (d < 0)
		return present_err(d);
	if (d == 1) {
		st = rd_chunk(r, &h->reply);
		if (st != WN_RPCRDMA_OK)
			return st;
		h->has_reply = true;
	}
	return WN_RPCRDMA_OK;
}

static enum wn_rpcrdma_status
rd_error(struct xdr_rd *r, struct wn_rpcrdma_hdr *h)
{
	if (!rd_u32(r, &h->err))
		return WN_RPCRDMA_SHORT;
	switch (h->err) {
	case WN_RPCRDMA_ERR_VERS:
		if (!rd_u32(r, &h->vers_low) || !rd_u32(r, &h->vers_high))
			return WN_RPCRDMA_SHORT;
		break;
	case WN_RPCRDMA_ERR_CHUNK:
		break;
	default:
		/* RFC 5666 / draft-08 default arm: uint32 rdma_extra[8] (RFC 8166 drops it) */
		for (unsigned int i = 0; i < WN_RPCRDMA_ERR_EXTRA_WORDS; i++)
			if (!rd_u32(r, &h->extra[i]))
				return WN_RPCRDMA_SHORT;
		break;
	}
	return WN_RPCRDMA_OK;
}

enum wn_rpcrdma_status
wn_rpcrdma_decode(const uint8_t *buf, size_t len, struct wn_rpcrdma_hdr *h)
{
	struct xdr_rd r = {.p = buf, .len = buf == NULL ? 0 : len, .off = 0};
	enum wn_rpcrdma_status st = WN_RPCRDMA_OK;

	memset(h, 0, sizeof(*h));
	if (!rd_u32(&r, &h->xid) || !rd_u32(&r, &h->vers) || !rd_u32(&r, &h->credits) ||
	    !rd_u32(&r, &h->proc))
		return WN_RPCRDMA_SHORT;
	/* RFC 5666 §4.2: an unknown version cannot be parsed further */
	if (h->vers != WN_RPCRDMA_VERSION)
		return WN_RPCRDMA_BAD_VERS;
	switch (h->proc) {
	case WN_RPCRDMA_MSGP:
		if (!rd_u32(&r, &h->align) || !rd_u32(&r, &h->thresh))
			return WN_RPCRDMA_SHORT;
		/* fall through */
	case WN_RPCRDMA_MSG:
	case WN_RPCRDMA_NOMSG:
		st = rd_lists(&r, h);
		break;
	case WN_RPCRDMA_DONE:
		break;
	case WN_RPCRDMA_ERROR:
		st = rd_error(&r, h);
		break;
	default:
		return WN_RPCRDMA_BAD_PROC;
	}
	if (st != WN_RPCRDMA_OK)
		return st;
	h->hdr_len = (uint32_t)r.off;
	if (r.off != r.len && h->proc != WN_RPCRDMA_MSG && h->proc != WN_RPCRDMA_MSGP)
		return WN_RPCRDMA_TRAILING;
	return WN_RPCRDMA_OK;
}

/* ---- encode --------------------------------------------------------------------------------- */

static void
wr_seg(struct xdr_wr *w, const struct wn_rpcrdma_seg *s)
{
	wr_u32(w, s->handle);
	wr_u32(w, s->length);
	wr_u64(w, s->offset);
}

static void
wr_chunk(struct xdr_wr *w, const struct wn_rpcrdma_chunk *c)
{
	wr_u32(w, c->nsegs);
	for (uint32_t i = 0; i < c->nsegs; i++)
		wr_seg(w, &c->segs[i]);
}

int
wn_rpcrdma_encode(const struct wn_rpcrdma_hdr *h, uint8_t *out, size_t cap)
{
	struct xdr_wr w = {.p = out, .cap = out == NULL ? 0 : cap};

	if (h == NULL || h->proc > WN_RPCRDMA_ERROR || h->nreads > WN_RPCRDMA_MAX_READ_SEGS ||
	    h->nwrites > WN_RPCRDMA_MAX_WRITE_CHUNKS ||
	    (h->has_reply && h->reply.nsegs > WN_RPCRDMA_MAX_CHUNK_SEGS))
		return -EINVAL;
	for (uint32_t i = 0; i < h->nwrites; i++)
		if (h->writes[i].nsegs > WN_RPCRDMA_MAX_CHUNK_SEGS)
			return -EINVAL;
	if (out == NULL)
		return -EINVAL;

	wr_u32(&w, h->xid);
	wr_u32(&w, h->vers);
	wr_u32(&w, h->credits);
	wr_u32(&w, h->proc);
	switch (h->proc) {
	case WN_RPCRDMA_MSGP:
		wr_u32(&w, h->align);
		wr_u32(&w, h->thresh);
		/* fall through */
	case WN_RPCRDMA_MSG:
	case WN_RPCRDMA_NOMSG:
		for (uint32_t i = 0; i < h->nreads; i++) {
			wr_u32(&w, 1);
			wr_u32(&w, h->reads[i].position);
			wr_seg(&w, &h->reads[i].seg);
		}
		wr_u32(&w, 0);
		for (uint32_t i = 0; i < h->nwrites; i++) {
			wr_u32(&w, 1);
			wr_chunk(&w, &h->writes[i]);
		}
		wr_u32(&w, 0);
		wr_u32(&w, h->has_reply ? 1 : 0);
		if (h->has_reply)
			wr_chunk(&w, &h->reply);
		break;
	case WN_RPCRDMA_DONE:
		break;
	case WN_RPCRDMA_ERROR:
		wr_u32(&w, h->err);
		if (h->err == WN_RPCRDMA_ERR_VERS) {
			wr_u32(&w, h->vers_low);
			wr_u32(&w, h->vers_high);
		} else if (h->err != WN_RPCRDMA_ERR_CHUNK) {
			for (unsigned int i = 0; i < WN_RPCRDMA_ERR_EXTRA_WORDS; i++)
				wr_u32(&w, h->extra[i]);
		}
		break;
	}
	if (w.overflow)
		return -ENOSPC;
	return (int)w.off;
}

int
wn_rpcrdma_error_build(uint8_t *out, size_t cap, uint32_t xid, uint32_t credits, uint32_t err)
{
	return wn_rpcrdma_error_build_vers(out, cap, xid, WN_RPCRDMA_VERSION, credits, err);
}

int
wn_rpcrdma_error_build_vers(uint8_t *out, size_t cap, uint32_t xid, uint32_t vers,
			    uint32_t credits, uint32_t err)
{
	struct wn_rpcrdma_hdr h = {.xid = xid,
				   .vers = vers,
				   .credits = credits,
				   .proc = WN_RPCRDMA_ERROR,
				   .err = err,
				   .vers_low = WN_RPCRDMA_VERSION,
				   .vers_high = WN_RPCRDMA_VERSION};

	if (err != WN_RPCRDMA_ERR_VERS && err != WN_RPCRDMA_ERR_CHUNK)
		return -EINVAL;
	return wn_rpcrdma_encode(&h, out, cap);
}

/* ---- connection private data (RFC 8797) ------------------------------------------------------ */

static uint8_t
cp_size_code(uint32_t size)
{
	if (size < WN_RPCRDMA_CP_SIZE_MIN)
		size = WN_RPCRDMA_CP_SIZE_MIN;
	if (size > WN_RPCRDMA_CP_SIZE_MAX)
		size = WN_RPCRDMA_CP_SIZE_MAX;
	return (uint8_t)((size >> 10) - 1);
}

int
wn_rpcrdma_cp_encode(const struct wn_rpcrdma_cp *cp, uint8_t *out)
{
	struct xdr_wr w = {.p = out, .cap = WN_RPCRDMA_CP_LEN};

	if (cp == NULL || out == NULL)
		return -EINVAL;
	wr_u32(&w, WN_RPCRDMA_CP_MAGIC);
	out[4] = cp->version;
	out[5] = cp->flags;
	out[6] = cp_size_code(cp->inline_send);
	out[7] = cp_size_code(cp->inline_recv);
	return WN_RPCRDMA_CP_LEN;
}

int
wn_rpcrdma_cp_decode(const void *pd, size_t len, struct wn_rpcrdma_cp *cp)
{
	struct xdr_rd r = {.p = pd, .len = pd == NULL ? 0 : len};
	const uint8_t *p = pd;
	uint32_t magic;

	cp->version = 0;
	cp->flags = 0;
	cp->inline_send = WN_RPCRDMA_INLINE_DEFAULT;
	cp->inline_recv = WN_RPCRDMA_INLINE_DEFAULT;
	if (r.len < WN_RPCRDMA_CP_LEN || !rd_u32(&r, &magic) || magic != WN_RPCRDMA_CP_MAGIC)
		return -ENOENT;
	if (p[4] != WN_RPCRDMA_CP_VERSION)
		return -EPROTONOSUPPORT;
	cp->version = p[4];
	cp->flags = p[5];
	cp->inline_send = ((uint32_t)p[6] + 1) << 10;
	cp->inline_recv = ((uint32_t)p[7] + 1) << 10;
	return 0;
}
