/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtirpc XDR streams that reduce a Payload stream into chunks (encoding) and put the
 * chunks back (decoding); see rpcrdma_xdr.h.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rpc/rpc.h>

#include "rpcrdma_xdr.h"

#define XUNIT 4u

static uint32_t
pad_of(uint32_t len)
{
	return (XUNIT - (len & (XUNIT - 1))) & (XUNIT - 1);
}

/* ---- encoding ------------------------------------------------------------------------------- */

static struct rpcrdma_xenc *
enc_of(XDR *x)
{
	return (struct rpcrdma_xenc *)x->x_private;
}

static bool_t
enc_put(struct rpcrdma_xenc *e, const void *p, uint32_t n)
{
	if (e->buf != NULL) {
		if (e->cap - e->off < n) {
			e->overflow = true;
			return FALSE;
		}
		memcpy(e->buf + e->off, p, n);
	}
	e->off += n;
	e->upos += n;
	return TRUE;
}

static bool_t
enc_putlong(XDR *x, const long *lp)
{
	struct rpcrdma_xenc *e = enc_of(x);
	uint32_t v = htonl((uint32_t)*lp);

	e->pad_skip = 0;
	return enc_put(e, &v, XUNIT);
}

static bool_t
enc_putbytes(XDR *x, const char *p, u_int n)
{
	struct rpcrdma_xenc *e = enc_of(x);

	if (e->pad_skip != 0) {
		/* xdr_opaque() writes the roundup of the item just reduced: drop it (§3.4.4.4) */
		uint32_t skip = e->pad_skip;

		e->pad_skip = 0;
		if (n == skip) {
			e->upos += n;
			return TRUE;
		}
	}
	if (e->ddp_min != 0 && n >= e->ddp_min && e->nitems < e->max_items && e->upos % XUNIT == 0) {
		struct rpcrdma_xitem *it = &e->items[e->nitems++];

		it->pos = e->upos;
		it->len = n;
		it->ptr = (const uint8_t *)p;
		e->upos += n;
		e->pad_skip = pad_of(n);
		return TRUE;
	}
	return enc_put(e, p, n);
}

static bool_t
enc_getlong(XDR *x, long *lp)
{
	(void)x;
	(void)lp;
	return FALSE;
}

static bool_t
enc_getbytes(XDR *x, char *p, u_int n)
{
	(void)x;
	(void)p;
	(void)n;
	return FALSE;
}

static u_int
enc_getpos(XDR *x)
{
	return enc_of(x)->upos;
}

static bool_t
enc_setpos(XDR *x, u_int pos)
{
	return pos == enc_of(x)->upos;
}

static int32_t *
no_inline(XDR *x, u_int n)
{
	(void)x;
	(void)n;
	return NULL;
}

static void
no_destroy(XDR *x)
{
	(void)x;
}

static bool_t
no_control(XDR *x, int req, void *info)
{
	(void)x;
	(void)req;
	(void)info;
	return FALSE;
}

static const struct xdr_ops enc_ops = {
	.x_getlong = enc_getlong,
	.x_putlong = enc_putlong,
	.x_getbytes = enc_getbytes,
	.x_putbytes = enc_putbytes,
	.x_getpostn = enc_getpos,
	.x_setpostn = enc_setpos,
	.x_inline = no_inline,
	.x_destroy = no_destroy,
	.x_control = no_control,
};

void
wn_rpcrdma_xenc_init(XDR *x, struct rpcrdma_xenc *e, uint8_t *buf, uint32_t cap,
		  uint32_t ddp_min, struct rpcrdma_xitem *items, uint32_t max_items)
{
	memset(e, 0, sizeof(*e));
	e->buf = buf;
	e->cap = buf == NULL ? 0 : cap;
	e->ddp_min = items == NULL ? 0 : ddp_min;
	e->items = items;
	e->max_items = items == NULL ? 0 : max_items;
	memset(x, 0, sizeof(*x));
	x->x_op = XDR_ENCODE;
	x->x_ops = &enc_ops;
	x->x_private = (char *)e;
}

/* ---- decoding ------------------------------------------------------------------------------- */

static struct rpcrdma_xdec *
dec_of(XDR *x)
{
	return (struct rpcrdma_xdec *)x->x_private;
}

static void
enter_chunk(struct rpcrdma_xdec *d, const struct rpcrdma_xins *c)
{
	d->cptr = c->ptr;
	d->clen = c->len;
	d->coff = 0;
	d->cpad = pad_of(c->len);
}

/*
 * Copy @p n octets of the virtual stream to @p out (NULL: skip them). Crosses from the
 * reduced stream into read chunks at their positions and out of a chunk after its padding.
 */
static bool_t
dec_get(struct rpcrdma_xdec *d, uint8_t *out, uint32_t n)
{
	while (n > 0) {
		uint32_t k;

		if (d->cptr == NULL && d->rnext < d->nrch && d->rch[d->rnext].pos == d->upos)
			enter_chunk(d, &d->rch[d->rnext++]);
		if (d->cptr != NULL) {
			if (d->coff < d->clen) {
				k = d->clen - d->coff < n ? d->clen - d->coff : n;
				if (out != NULL) {
					if (out != d->cptr + d->coff) {
						memcpy(out, d->cptr + d->coff, k);
						d->copied += k;
					}
					out += k;
				}
				d->coff += k;
			} else {
				k = d->cpad < n ? d->cpad : n;
				if (out != NULL) {
					memset(out, 0, k);
					out += k;
				}
				d->cpad -= k;
			}
			d->upos += k;
			n -= k;
			if (d->coff == d->clen && d->cpad == 0)
				d->cptr = NULL;
			continue;
		}
		/* reduced stream, up to the next read chunk's position */
		k = d->len - d->off;
		if (d->rnext < d->nrch) {
			uint32_t gap = d->rch[d->rnext].pos - d->upos;

			if (d->rch[d->rnext].pos < d->upos || d->rch[d->rnext].pos % XUNIT != 0)
				return FALSE; /* inside an item already read, or not XDR-aligned */
			if (gap < k)
				k = gap;
		}
		if (k == 0)
			return FALSE;
		if (k > n)
			k = n;
		if (out != NULL) {
			memcpy(out, d->buf + d->off, k);
			out += k;
		}
		d->off += k;
		d->upos += k;
		n -= k;
	}
	return TRUE;
}

static bool_t
dec_getlong(XDR *x, long *lp)
{
	uint32_t v;

	if (!dec_get(dec_of(x), (uint8_t *)&v, XUNIT))
		return FALSE;
	*lp = (long)(int32_t)ntohl(v);
	return TRUE;
}

static bool_t
dec_getbytes(XDR *x, char *p, u_int n)
{
	struct rpcrdma_xdec *d = dec_of(x);

	if (n == 0)
		return TRUE;
	if (d->cptr == NULL) {
		/* a write chunk holds the next item whose length it returned (§3.4.6.1) */
		while (d->wnext < d->nwch && d->wch[d->wnext].len == 0)
			d->wnext++;
		if (d->wnext < d->nwch && d->wch[d->wnext].len == n &&
		    !(d->rnext < d->nrch && d->rch[d->rnext].pos == d->upos)) {
			enter_chunk(d, &d->wch[d->wnext++]);
		} else if (d->align > 1 && n >= d->thresh) {
			/* RDMA_MSGP: padding before a large opaque body (RFC 5666 §3.9) */
			uint32_t mis = (d->base + d->off) % d->align;

			if (mis != 0) {
				uint32_t skip = d->align - mis;

				if (d->len - d->off < skip)
					return FALSE;
				d->off += skip;
			}
		}
	}
	return dec_get(d, (uint8_t *)p, n);
}

static bool_t
dec_putlong(XDR *x, const long *lp)
{
	(void)x;
	(void)lp;
	return FALSE;
}

static bool_t
dec_putbytes(XDR *x, const char *p, u_int n)
{
	(void)x;
	(void)p;
	(void)n;
	return FALSE;
}

static u_int
dec_getpos(XDR *x)
{
	return dec_of(x)->upos;
}

static bool_t
dec_setpos(XDR *x, u_int pos)
{
	return pos == dec_of(x)->upos;
}

static const struct xdr_ops dec_ops = {
	.x_getlong = dec_getlong,
	.x_putlong = dec_putlong,
	.x_getbytes = dec_getbytes,
	.x_putbytes = dec_putbytes,
	.x_getpostn = dec_getpos,
	.x_setpostn = dec_setpos,
	.x_inline = no_inline,
	.x_destroy = no_destroy,
	.x_control = no_control,
};

void
wn_rpcrdma_xdec_init(XDR *x, struct rpcrdma_xdec *d, const uint8_t *buf, uint32_t len,
		  const struct rpcrdma_xins *rch, uint32_t nrch, const struct rpcrdma_xins *wch,
		  uint32_t nwch)
{
	memset(d, 0, sizeof(*d));
	d->buf = buf;
	d->len = buf == NULL ? 0 : len;
	d->rch = rch;
	d->nrch = rch == NULL ? 0 : nrch;
	d->wch = wch;
	d->nwch = wch == NULL ? 0 : nwch;
	memset(x, 0, sizeof(*x));
	x->x_op = XDR_DECODE;
	x->x_ops = &dec_ops;
	x->x_private = (char *)d;
}

void
wn_rpcrdma_xdec_msgp(struct rpcrdma_xdec *d, uint32_t align, uint32_t thresh, uint32_t base)
{
	d->align = align;
	d->thresh = thresh;
	d->base = base;
}

bool
wn_rpcrdma_xdec_done(const struct rpcrdma_xdec *d)
{
	uint32_t i;

	if (d->cptr != NULL || d->rnext != d->nrch)
		return false;
	for (i = d->wnext; i < d->nwch; i++)
		if (d->wch[i].len != 0)
			return false;
	return true;
}
