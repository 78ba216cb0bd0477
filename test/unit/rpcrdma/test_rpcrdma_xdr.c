/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pure parts of lib/rpcrdma's transport: RFC 8797 private data, the XDR streams that
 * reduce a Payload stream into chunks and put them back (RFC 8166 §3.4), the receiver
 * checks of headers (§3.4.5, §4.3, §4.5), the registered-pool allocator and the option
 * parser. A failure means the transport would place chunk data at the wrong XDR position,
 * keep or lose roundup padding against the RFC, accept a header it must refuse (or refuse
 * a valid one), or hand out overlapping pool memory.
 */
#include <errno.h>
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rpcrdma_pool.h"
#include "rpcrdma_proto.h"
#include "rpcrdma_xdr.h"
#include "wn_rpcrdma.h"
#include "wn_rpcrdma_xprt.h"

/* ---- RFC 8797 private data ---- */

static void
test_cp(void **state)
{
	/* what Linux's xprtrdma sends with 4 KiB inline and remote invalidation */
	static const uint8_t linux_pd[8] = {0xf6, 0xab, 0x0e, 0x18, 0x01, 0x01, 0x03, 0x03};
	struct wn_rpcrdma_cp cp = {.version = 1, .flags = WN_RPCRDMA_CP_F_REMOTE_INV,
				   .inline_send = 4096, .inline_recv = 4096}, d;
	uint8_t b[16];
	(void)state;

	assert_int_equal(wn_rpcrdma_cp_encode(&cp, b), WN_RPCRDMA_CP_LEN);
	assert_memory_equal(b, linux_pd, 8);
	assert_int_equal(wn_rpcrdma_cp_decode(linux_pd, 8, &d), 0);
	assert_int_equal(d.inline_send, 4096);
	assert_int_equal(d.inline_recv, 4096);
	assert_int_equal(d.flags, WN_RPCRDMA_CP_F_REMOTE_INV);
	/* sizes clamp to 1 KiB .. 256 KiB and round down to whole KiB */
	cp.inline_send = 100;
	cp.inline_recv = 1u << 30;
	wn_rpcrdma_cp_encode(&cp, b);
	assert_int_equal(wn_rpcrdma_cp_decode(b, 8, &d), 0);
	assert_int_equal(d.inline_send, 1024);
	assert_int_equal(d.inline_recv, 256 * 1024);
	cp.inline_send = 5000;
	wn_rpcrdma_cp_encode(&cp, b);
	wn_rpcrdma_cp_decode(b, 8, &d);
	assert_int_equal(d.inline_send, 4096);
	/* none, short, another magic: the 1024 defaults; another version: ignored */
	assert_int_equal(wn_rpcrdma_cp_decode(NULL, 0, &d), -ENOENT);
	assert_int_equal(d.inline_send, 1024);
	assert_int_equal(wn_rpcrdma_cp_decode(linux_pd, 7, &d), -ENOENT);
	memcpy(b, linux_pd, 8);
	b[0] ^= 1;
	assert_int_equal(wn_rpcrdma_cp_decode(b, 8, &d), -ENOENT);
	memcpy(b, linux_pd, 8);
	b[4] = 2;
	assert_int_equal(wn_rpcrdma_cp_decode(b, 8, &d), -EPROTONOSUPPORT);
	assert_int_equal(d.inline_recv, 1024);
	assert_int_equal(d.flags, 0);
	/* longer private data (padding by some CMs) is fine */
	memset(b, 0, sizeof(b));
	memcpy(b, linux_pd, 8);
	assert_int_equal(wn_rpcrdma_cp_decode(b, sizeof(b), &d), 0);
}

/* ---- XDR streams ---- */

struct msg {
	u_int a;
	char *data;
	u_int len;
	u_int b;
	char *s;
};

static bool_t
xdr_msg(XDR *x, struct msg *m)
{
	return xdr_u_int(x, &m->a) && xdr_bytes(x, &m->data, &m->len, 1u << 20) &&
	       xdr_u_int(x, &m->b) && xdr_string(x, &m->s, 1000);
}

static void
fill(uint8_t *b, uint32_t n, uint8_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed + i * 7);
}

/* Reference encoding with libtirpc's own memory stream. */
static uint32_t
ref_encode(struct msg *m, uint8_t *out, uint32_t cap)
{
	XDR x;

	xdrmem_create(&x, (char *)out, cap, XDR_ENCODE);
	assert_true(xdr_msg(&x, m));
	return xdr_getpos(&x);
}

static void
check_reduce(uint32_t len, uint32_t ddp_min, bool reduced)
{
	static uint8_t data[9000], ref[10000], red[10000], out[9000];
	struct msg m = {.a = 0x11111111, .data = (char *)data, .len = len, .b = 0x22222222,
			.s = "tail"};
	struct rpcrdma_xitem items[4];
	struct rpcrdma_xins ins;
	struct rpcrdma_xenc e;
	struct rpcrdma_xdec d;
	struct msg got;
	uint32_t rlen;
	XDR x;

	fill(data, len, (uint8_t)len);
	rlen = ref_encode(&m, ref, sizeof(ref));
	/* counting: same unreduced size, reduced size without the item and its roundup */
	wn_rpcrdma_xenc_init(&x, &e, NULL, 0, ddp_min, items, 4);
	assert_true(xdr_msg(&x, &m));
	assert_int_equal(e.upos, rlen);
	assert_int_equal(e.nitems, reduced ? 1 : 0);
	assert_int_equal(e.off, reduced ? rlen - ((len + 3) & ~3u) : rlen);
	/* writing */
	wn_rpcrdma_xenc_init(&x, &e, red, sizeof(red), ddp_min, items, 4);
	assert_true(xdr_msg(&x, &m));
	assert_false(e.overflow);
	if (!reduced) {
		assert_int_equal(e.off, rlen);
		assert_memory_equal(red, ref, rlen);
		return;
	}
	/* the item sits after a and the length word: XDR position 8 (RFC 8166 §3.4.5) */
	assert_int_equal(items[0].pos, 8);
	assert_int_equal(items[0].len, len);
	assert_ptr_equal(items[0].ptr, data);
	/* the reduced stream is the unreduced one without the item and its roundup */
	assert_memory_equal(red, ref, 8);
	assert_memory_equal(red + 8, ref + 8 + ((len + 3) & ~3u), rlen - 8 - ((len + 3) & ~3u));
	/* decode it back with the chunk put in at its position */
	ins = (struct rpcrdma_xins){.pos = items[0].pos, .len = len, .ptr = data};
	memset(&got, 0, sizeof(got));
	wn_rpcrdma_xdec_init(&x, &d, red, e.off, &ins, 1, NULL, 0);
	assert_true(xdr_msg(&x, &got));
	assert_true(wn_rpcrdma_xdec_done(&d));
	assert_int_equal(got.a, m.a);
	assert_int_equal(got.b, m.b);
	assert_int_equal(got.len, len);
	assert_memory_equal(got.data, data, len);
	assert_string_equal(got.s, "tail");
	assert_int_equal(xdr_getpos(&x), rlen);
	assert_int_equal(d.copied, len); /* xdr_bytes allocated: one copy */
	xdr_free((xdrproc_t)xdr_msg, (char *)&got);
	/* decoding into the chunk's own memory copies nothing (direct placement) */
	memcpy(out, data, len);
	memset(&got, 0, sizeof(got));
	got.data = (char *)out;
	ins.ptr = out;
	wn_rpcrdma_xdec_init(&x, &d, red, e.off, &ins, 1, NULL, 0);
	assert_true(xdr_msg(&x, &got));
	assert_int_equal(d.copied, 0);
	free(got.s);
	/* a chunk that includes its roundup (RFC 8166 §3.4.5.2, first option) */
	memset(data + len, 0, 3);
	ins = (struct rpcrdma_xins){.pos = 8, .len = (len + 3) & ~3u, .ptr = data};
	memset(&got, 0, sizeof(got));
	wn_rpcrdma_xdec_init(&x, &d, red, e.off, &ins, 1, NULL, 0);
	assert_true(xdr_msg(&x, &got));
	assert_true(wn_rpcrdma_xdec_done(&d));
	assert_int_equal(got.b, m.b);
	xdr_free((xdrproc_t)xdr_msg, (char *)&got);
	/* the same item as a write chunk (no position: matched by length) */
	struct rpcrdma_xins w = {.len = len, .ptr = data};

	memset(&got, 0, sizeof(got));
	wn_rpcrdma_xdec_init(&x, &d, red, e.off, NULL, 0, &w, 1);
	assert_true(xdr_msg(&x, &got));
	assert_true(wn_rpcrdma_xdec_done(&d));
	assert_int_equal(got.b, m.b);
	assert_memory_equal(got.data, data, len);
	xdr_free((xdrproc_t)xdr_msg, (char *)&got);
}

static void
test_xdr_reduce(void **state)
{
	(void)state;
	for (uint32_t len = 1020; len < 1030; len++)
		check_reduce(len, 1024, len >= 1024);
	check_reduce(8192, 1024, true);
	check_reduce(5, 5, true);
	check_reduce(100, 0, false); /* 0: no reduction */
}

static void
test_xdr_errors(void **state)
{
	static uint8_t data[2048], red[4096];
	struct msg m = {.a = 1, .data = (char *)data, .len = 2000, .b = 2, .s = "x"}, got;
	struct rpcrdma_xitem items[1];
	struct rpcrdma_xins ins;
	struct rpcrdma_xenc e;
	struct rpcrdma_xdec d;
	XDR x;
	(void)state;

	/* overflow is reported and leaves the output unusable */
	wn_rpcrdma_xenc_init(&x, &e, red, 100, 0, NULL, 0);
	assert_false(xdr_msg(&x, &m));
	assert_true(e.overflow);
	/* items beyond the capacity stay inline */
	struct msg two = m;

	wn_rpcrdma_xenc_init(&x, &e, red, sizeof(red), 1, items, 1);
	two.s = "a string of some length";
	assert_true(xdr_msg(&x, &two));
	assert_int_equal(e.nitems, 1);
	assert_int_equal(e.off, 4 + 4 + 4 + 4 + 24); /* a, len, b, string (length + 24) */
	uint32_t off = e.off;

	/* a read chunk whose position lies inside an item already read */
	ins = (struct rpcrdma_xins){.pos = 6, .len = 2000, .ptr = data};
	memset(&got, 0, sizeof(got));
	wn_rpcrdma_xdec_init(&x, &d, red, off, &ins, 1, NULL, 0);
	assert_false(xdr_msg(&x, &got));
	xdr_free((xdrproc_t)xdr_msg, (char *)&got);
	/* a chunk the message never reaches: not done */
	ins = (struct rpcrdma_xins){.pos = 4000, .len = 4, .ptr = data};
	memset(&got, 0, sizeof(got));
	wn_rpcrdma_xenc_init(&x, &e, red, sizeof(red), 0, NULL, 0);
	assert_true(xdr_msg(&x, &m));
	wn_rpcrdma_xdec_init(&x, &d, red, e.off, &ins, 1, NULL, 0);
	assert_true(xdr_msg(&x, &got));
	assert_false(wn_rpcrdma_xdec_done(&d));
	xdr_free((xdrproc_t)xdr_msg, (char *)&got);
	/* a truncated reduced stream */
	memset(&got, 0, sizeof(got));
	wn_rpcrdma_xdec_init(&x, &d, red, 10, NULL, 0, NULL, 0);
	assert_false(xdr_msg(&x, &got));
	xdr_free((xdrproc_t)xdr_msg, (char *)&got);
	/* a write chunk nobody consumed */
	struct rpcrdma_xins w = {.len = 77, .ptr = data};

	memset(&got, 0, sizeof(got));
	wn_rpcrdma_xdec_init(&x, &d, red, e.off, NULL, 0, &w, 1);
	assert_true(xdr_msg(&x, &got));
	assert_false(wn_rpcrdma_xdec_done(&d));
	xdr_free((xdrproc_t)xdr_msg, (char *)&got);
}

static void
test_xdr_msgp(void **state)
{
	static uint8_t data[300], red[1024], padded[1024];
	struct msg m = {.a = 1, .data = (char *)data, .len = 300, .b = 2, .s = "p"}, got;
	struct rpcrdma_xenc e;
	struct rpcrdma_xdec d;
	XDR x;
	(void)state;

	fill(data, 300, 9);
	wn_rpcrdma_xenc_init(&x, &e, red, sizeof(red), 0, NULL, 0);
	assert_true(xdr_msg(&x, &m));
	/* RFC 5666 §3.9: the body of an opaque >= thresh starts on an align boundary of the
	 * receive buffer (header of 36 octets here: a, len at 36..43, pad to 64) */
	memcpy(padded, red, 8);
	memset(padded + 8, 0xEE, 20);
	memcpy(padded + 28, red + 8, e.off - 8);
	memset(&got, 0, sizeof(got));
	wn_rpcrdma_xdec_init(&x, &d, padded, e.off + 20, NULL, 0, NULL, 0);
	wn_rpcrdma_xdec_msgp(&d, 32, 256, 36);
	assert_true(xdr_msg(&x, &got));
	assert_memory_equal(got.data, data, 300);
	assert_int_equal(got.b, 2);
	xdr_free((xdrproc_t)xdr_msg, (char *)&got);
}

/* ---- receiver checks ---- */

static void
rseg(struct wn_rpcrdma_hdr *h, uint32_t pos, uint32_t handle, uint32_t len)
{
	struct wn_rpcrdma_read_seg *r = &h->reads[h->nreads++];

	r->position = pos;
	r->seg.handle = handle;
	r->seg.length = len;
	r->seg.offset = 0x1000 * h->nreads;
}

static void
test_proto_call(void **state)
{
	struct wn_rpcrdma_hdr h;
	struct rpcrdma_call_plan pl;
	(void)state;

	memset(&h, 0, sizeof(h));
	h.proc = WN_RPCRDMA_MSG;
	h.hdr_len = 28;
	assert_int_equal(wn_rpcrdma_proto_call_plan(&h, 27, 1 << 20, &pl), RPCRDMA_PLAN_DISCARD);
	assert_int_equal(wn_rpcrdma_proto_call_plan(&h, 28, 1 << 20, &pl), WN_RPCRDMA_ERR_CHUNK);
	assert_int_equal(wn_rpcrdma_proto_call_plan(&h, 100, 1 << 20, &pl), 0);
	assert_int_equal(pl.nwr, 1);
	/* two segments at one position make one chunk; a later position another */
	rseg(&h, 40, 7, 1000);
	rseg(&h, 40, 7, 500);
	rseg(&h, 60, 7, 4);
	h.hdr_len = 28 + 3 * 24;
	assert_int_equal(wn_rpcrdma_proto_call_plan(&h, 200, 1 << 20, &pl), 0);
	assert_int_equal(pl.nrch, 2);
	assert_int_equal(pl.rch[0].len, 1500);
	assert_int_equal(pl.rch[0].nsegs, 2);
	assert_int_equal(pl.rch[1].pos, 60);
	assert_false(pl.p0);
	assert_int_equal(pl.read_bytes, 1504);
	assert_int_equal(pl.inv_rkey, 7);
	/* too much data */
	assert_int_equal(wn_rpcrdma_proto_call_plan(&h, 200, 1000, &pl), WN_RPCRDMA_ERR_CHUNK);
	/* a position not a multiple of 4, or going back */
	h.reads[2].position = 62;
	assert_int_equal(wn_rpcrdma_proto_call_plan(&h, 200, 1 << 20, &pl), WN_RPCRDMA_ERR_CHUNK);
	h.reads[2].position = 36;
	assert_int_equal(wn_rpcrdma_proto_call_plan(&h, 200, 1 << 20, &pl), WN_RPCRDMA_ERR_CHUNK);
	/* RDMA_MSG with a position-zero chunk, RDMA_NOMSG without one */
	memset(&h, 0, sizeof(h));
	h.proc = WN_RPCRDMA_MSG;
	h.hdr_len = 52;
	rseg(&h, 0, 9, 3000);
	assert_int_equal(wn_rpcrdma_proto_call_plan(&h, 100, 1 << 20, &pl), WN_RPCRDMA_ERR_CHUNK);
	h.proc = WN_RPCRDMA_NOMSG;
	assert_int_equal(wn_rpcrdma_proto_call_plan(&h, 52, 1 << 20, &pl), 0);
	assert_true(pl.p0);
	h.reads[0].position = 8;
	assert_int_equal(wn_rpcrdma_proto_call_plan(&h, 52, 1 << 20, &pl), WN_RPCRDMA_ERR_CHUNK);
	/* write and reply chunks: capacity, work requests, a second handle: no invalidation */
	memset(&h, 0, sizeof(h));
	h.proc = WN_RPCRDMA_MSG;
	h.hdr_len = 100;
	h.nwrites = 1;
	h.writes[0].nsegs = 2;
	h.writes[0].segs[0] = (struct wn_rpcrdma_seg){.handle = 5, .length = 4096};
	h.writes[0].segs[1] = (struct wn_rpcrdma_seg){.handle = 5, .length = 100};
	h.has_reply = true;
	h.reply.nsegs = 1;
	h.reply.segs[0] = (struct wn_rpcrdma_seg){.handle = 6, .length = 8192};
	assert_int_equal(wn_rpcrdma_proto_call_plan(&h, 200, 1 << 20, &pl), 0);
	assert_int_equal(pl.wcap[0], 4196);
	assert_int_equal(pl.reply_cap, 8192);
	assert_int_equal(pl.nwr, 4);
	assert_int_equal(pl.inv_rkey, 0);
	h.reply.segs[0].handle = 5;
	assert_int_equal(wn_rpcrdma_proto_call_plan(&h, 200, 1 << 20, &pl), 0);
	assert_int_equal(pl.inv_rkey, 5);
}

static void
test_proto_reply(void **state)
{
	struct rpcrdma_offer o = {.write = true,
				  .wseg = {.handle = 3, .length = 65536, .offset = 0x7000},
				  .reply = true,
				  .rseg = {.handle = 4, .length = 8192, .offset = 0x9000}};
	struct rpcrdma_reply_plan pl;
	struct wn_rpcrdma_hdr h;
	(void)state;

	memset(&h, 0, sizeof(h));
	h.proc = WN_RPCRDMA_MSG;
	h.nwrites = 1;
	h.writes[0].nsegs = 1;
	h.writes[0].segs[0] = o.wseg;
	h.writes[0].segs[0].length = 1000;
	assert_int_equal(wn_rpcrdma_proto_reply_check(&h, &o, 1 << 20, &pl), 0);
	assert_int_equal(pl.placed, 1000);
	/* longer than offered, another handle or offset, or a missing write chunk */
	h.writes[0].segs[0].length = 65537;
	assert_int_equal(wn_rpcrdma_proto_reply_check(&h, &o, 1 << 20, &pl), -1);
	h.writes[0].segs[0].length = 10;
	h.writes[0].segs[0].handle = 33;
	assert_int_equal(wn_rpcrdma_proto_reply_check(&h, &o, 1 << 20, &pl), -1);
	h.writes[0].segs[0].handle = 3;
	h.writes[0].segs[0].offset = 0;
	assert_int_equal(wn_rpcrdma_proto_reply_check(&h, &o, 1 << 20, &pl), -1);
	h.writes[0].segs[0].offset = 0x7000;
	h.nwrites = 0;
	assert_int_equal(wn_rpcrdma_proto_reply_check(&h, &o, 1 << 20, &pl), -1);
	h.nwrites = 1;
	/* RDMA_NOMSG: the reply chunk used, or a position-zero read chunk, not both */
	h.proc = WN_RPCRDMA_NOMSG;
	assert_int_equal(wn_rpcrdma_proto_reply_check(&h, &o, 1 << 20, &pl), -1);
	h.has_reply = true;
	h.reply.nsegs = 1;
	h.reply.segs[0] = o.rseg;
	h.reply.segs[0].length = 5000;
	assert_int_equal(wn_rpcrdma_proto_reply_check(&h, &o, 1 << 20, &pl), 0);
	assert_int_equal(pl.reply_len, 5000);
	rseg(&h, 0, 8, 100);
	assert_int_equal(wn_rpcrdma_proto_reply_check(&h, &o, 1 << 20, &pl), -1);
	h.has_reply = false;
	assert_int_equal(wn_rpcrdma_proto_reply_check(&h, &o, 1 << 20, &pl), 0);
	assert_true(pl.p0);
	assert_int_equal(pl.read_bytes, 100);
	/* a reply chunk nobody offered; RDMA_DONE is no reply */
	o.reply = false;
	h.has_reply = true;
	assert_int_equal(wn_rpcrdma_proto_reply_check(&h, &o, 1 << 20, &pl), -1);
	h.proc = WN_RPCRDMA_DONE;
	assert_int_equal(wn_rpcrdma_proto_reply_check(&h, &o, 1 << 20, &pl), -1);
}

/* ---- pool ---- */

static void
test_pool(void **state)
{
	size_t size = (1u << 20) + 3 * 1024; /* not a power of two */
	uint8_t *base = aligned_alloc(1024, size);
	struct rpcrdma_pool p;
	void *a[64];
	(void)state;

	assert_non_null(base);
	assert_int_equal(wn_rpcrdma_pool_init(&p, base + 1, size, 10), -EINVAL);
	assert_int_equal(wn_rpcrdma_pool_init(&p, base, size, 10), 0);
	/* everything in 1 KiB blocks, then all back: one 1 MiB block again */
	for (int round = 0; round < 2; round++) {
		size_t n = 0;
		void *q;

		while ((q = wn_rpcrdma_pool_alloc(&p, 1000)) != NULL) {
			assert_true(wn_rpcrdma_pool_owns(&p, q, 1000));
			((uint8_t *)q)[0] = (uint8_t)n;
			if (n < 64)
				a[n] = q;
			n++;
		}
		assert_int_equal(n, 1024 + 3);
		assert_int_equal(p.used, size);
		for (size_t i = 0; i < 64; i++)
			assert_int_equal(((uint8_t *)a[i])[0], (uint8_t)i);
		for (uint8_t *b = base; b < base + size; b += 1024)
			wn_rpcrdma_pool_free(&p, b);
		assert_int_equal(p.used, 0);
		q = wn_rpcrdma_pool_alloc(&p, 1u << 20);
		assert_ptr_equal(q, base);
		wn_rpcrdma_pool_free(&p, q);
	}
	/* sizes round up to powers of two, aligned; too big fails */
	void *x = wn_rpcrdma_pool_alloc(&p, 3000), *y = wn_rpcrdma_pool_alloc(&p, 5000);

	assert_int_equal(((uintptr_t)x - (uintptr_t)base) % 4096, 0);
	assert_int_equal(((uintptr_t)y - (uintptr_t)base) % 8192, 0);
	assert_true((uint8_t *)y >= (uint8_t *)x + 4096 || (uint8_t *)x >= (uint8_t *)y + 8192);
	assert_null(wn_rpcrdma_pool_alloc(&p, 2u << 20));
	assert_false(wn_rpcrdma_pool_owns(&p, base + size - 10, 11));
	wn_rpcrdma_pool_free(&p, x);
	wn_rpcrdma_pool_free(&p, y);
	wn_rpcrdma_pool_free(&p, NULL);
	assert_int_equal(p.used, 0);
	wn_rpcrdma_pool_fini(&p);
	free(base);
}

/* ---- options ---- */

static void
test_opts(void **state)
{
	struct wn_rpcrdma_opts o;
	(void)state;

	wn_rpcrdma_opts_default(&o);
	assert_int_equal(o.inline_send, 1024);
	assert_int_equal(o.port, WN_RPCRDMA_PORT);
	assert_int_equal(wn_rpcrdma_opts_set(&o, "inline", "4k"), 0);
	assert_int_equal(o.inline_send, 4096);
	assert_int_equal(o.inline_recv, 4096);
	assert_int_equal(wn_rpcrdma_opts_set(&o, "credits", "128"), 0);
	assert_int_equal(o.credits, 128);
	assert_int_equal(wn_rpcrdma_opts_set(&o, "credits", "0"), -EINVAL);
	assert_int_equal(wn_rpcrdma_opts_set(&o, "credits", "12x"), -EINVAL);
	assert_int_equal(wn_rpcrdma_opts_set(&o, "credits", NULL), -EINVAL);
	assert_int_equal(wn_rpcrdma_opts_set(&o, "port", "70000"), -EINVAL);
	assert_int_equal(wn_rpcrdma_opts_set(&o, "pool-mb", "64"), 0);
	assert_int_equal(o.pool_size, 64u << 20);
	assert_int_equal(wn_rpcrdma_opts_set(&o, "reg", "pool"), 0);
	assert_int_equal(o.reg, WN_RPCRDMA_REG_POOL);
	assert_int_equal(wn_rpcrdma_opts_set(&o, "reg", "frmr"), -EINVAL);
	assert_int_equal(wn_rpcrdma_opts_set(&o, "no-cp", NULL), 0);
	assert_true(o.no_private_data);
	assert_int_equal(wn_rpcrdma_opts_set(&o, "no-cp", "1"), -EINVAL);
	assert_int_equal(wn_rpcrdma_opts_set(&o, "bogus", "1"), -ENOENT);
	assert_int_equal(wn_rpcrdma_opts_has_value("inline"), 1);
	assert_int_equal(wn_rpcrdma_opts_has_value("no-remote-inv"), 0);
	assert_int_equal(wn_rpcrdma_opts_has_value("bogus"), -1);
	/* sizes */
	uint64_t v;

	assert_int_equal(wn_rpcrdma_parse_size("64m", &v), 0);
	assert_int_equal(v, 64u << 20);
	assert_int_equal(wn_rpcrdma_parse_size("3G", &v), 0);
	assert_int_equal(v, 3ull << 30);
	assert_int_equal(wn_rpcrdma_parse_size("", &v), -EINVAL);
	assert_int_equal(wn_rpcrdma_parse_size("-1", &v), -EINVAL);
	assert_int_equal(wn_rpcrdma_parse_size("1kb", &v), -EINVAL);
	assert_int_equal(wn_rpcrdma_parse_size("99999999999999999999g", &v), -EINVAL);
	/* a getopt table: the program's options, the transport's, the zero entry */
	static const struct option app[] = {{"server", required_argument, NULL, 1},
					    {NULL, 0, NULL, 0}};
	struct option lo[32];
	int n = wn_rpcrdma_opts_long(lo, 32, app, 7);

	assert_true(n > 10);
	assert_string_equal(lo[0].name, "server");
	assert_int_equal(lo[1].val, 7);
	assert_null(lo[n].name);
	for (int i = 1; i < n; i++)
		assert_int_equal(lo[i].has_arg == required_argument,
				 wn_rpcrdma_opts_has_value(lo[i].name) == 1);
	assert_int_equal(wn_rpcrdma_opts_long(lo, 5, app, 7), -ENOSPC);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cp),	   cmocka_unit_test(test_xdr_reduce),
		cmocka_unit_test(test_xdr_errors), cmocka_unit_test(test_xdr_msgp),
		cmocka_unit_test(test_proto_call), cmocka_unit_test(test_proto_reply),
		cmocka_unit_test(test_pool),	   cmocka_unit_test(test_opts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
