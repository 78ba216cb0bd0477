/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RPC-over-RDMA v1 transport header codec (RFC 5666 §4.3). A failure here
 * means warpnic's NFS/RDMA-style transport writes headers a peer cannot read,
 * misreads chunk lists, or accepts malformed headers instead of answering
 * RDMA_ERROR (ERR_VERS / ERR_CHUNK, RFC 5666 §4.2).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "wn_rpcrdma.h"

static size_t
words(uint8_t *out, const uint32_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		out[4 * i] = (uint8_t)(w[i] >> 24);
		out[4 * i + 1] = (uint8_t)(w[i] >> 16);
		out[4 * i + 2] = (uint8_t)(w[i] >> 8);
		out[4 * i + 3] = (uint8_t)w[i];
	}
	return 4 * n;
}

/* A header written word by word from RFC 5666 §4.3 (independent of the encoder). */
static const uint32_t chunked[] = {
	0x11223344, 1,	 32,   0,			     /* xid vers credits RDMA_MSG */
	1,	    0,	 0xA1, 4096, 0x00000001, 0x00000000, /* read: P 0, H, L, OO */
	1,	    0,	 0xA2, 100,  0x00000001, 0x00001000, /* read: P 0, next segment */
	1,	    136, 0xA3, 8192, 0xFFFFFFFF, 0xFFFF0000, /* read: P 136 */
	0,						     /* end of read list */
	1,	    2,	 0xB1, 512,  0,		 64,
	0xB2,	    512, 0,    1024,			     /* write chunk of 2 segments */
	1,	    1,	 0xB3, 32,   0x12345678, 0x9ABCDEF0, /* write chunk of 1 */
	0,						     /* end of write list */
	1,	    1,	 0xC1, 1024, 0,		 0x2000,     /* reply chunk */
};

static void
test_decode_vector(void **state)
{
	uint8_t b[512];
	struct wn_rpcrdma_hdr h;
	(void)state;

	size_t n = words(b, chunked, sizeof(chunked) / 4);
	memcpy(b + n, "RPC!", 4); /* the RPC message follows */
	assert_int_equal(wn_rpcrdma_decode(b, n + 4, &h), WN_RPCRDMA_OK);
	assert_int_equal(h.hdr_len, n);
	assert_int_equal(h.xid, 0x11223344);
	assert_int_equal(h.credits, 32);
	assert_int_equal(h.proc, WN_RPCRDMA_MSG);
	assert_int_equal(h.nreads, 3);
	assert_int_equal(h.reads[0].position, 0);
	assert_int_equal(h.reads[0].seg.handle, 0xA1);
	assert_int_equal(h.reads[0].seg.length, 4096);
	assert_int_equal(h.reads[0].seg.offset, 0x100000000ull);
	assert_int_equal(h.reads[1].seg.offset, 0x100001000ull);
	assert_int_equal(h.reads[2].position, 136);
	assert_int_equal(h.reads[2].seg.offset, 0xFFFFFFFFFFFF0000ull);
	assert_int_equal(h.nwrites, 2);
	assert_int_equal(h.writes[0].nsegs, 2);
	assert_int_equal(h.writes[0].segs[1].handle, 0xB2);
	assert_int_equal(h.writes[0].segs[1].offset, 1024);
	assert_int_equal(h.writes[1].nsegs, 1);
	assert_int_equal(h.writes[1].segs[0].offset, 0x123456789ABCDEF0ull);
	assert_true(h.has_reply);
	assert_int_equal(h.reply.nsegs, 1);
	assert_int_equal(h.reply.segs[0].handle, 0xC1);
	assert_int_equal(h.reply.segs[0].length, 1024);

	/* and the encoder writes exactly those octets */
	uint8_t e[512];
	assert_int_equal(wn_rpcrdma_encode(&h, e, sizeof(e)), (int)n);
	assert_memory_equal(e, b, n);
}

static void
test_minimal(void **state)
{
	struct wn_rpcrdma_hdr h = {.xid = 7, .vers = 1, .credits = 1, .proc = WN_RPCRDMA_MSG};
	uint8_t b[64];
	static const uint8_t msg[28] = {0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0,
					0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	(void)state;

	/* RFC 5666 §4.3: no chunks = three zero words, 28-octet header */
	assert_int_equal(wn_rpcrdma_encode(&h, b, sizeof(b)), WN_RPCRDMA_MIN_MSG_LEN);
	assert_memory_equal(b, msg, 28);
	assert_int_equal(wn_rpcrdma_encode(&h, b, 27), -ENOSPC);
	h.proc = WN_RPCRDMA_DONE;
	assert_int_equal(wn_rpcrdma_encode(&h, b, sizeof(b)), 16);
	assert_int_equal(wn_rpcrdma_decode(b, 16, &h), WN_RPCRDMA_OK);
	assert_int_equal(h.proc, WN_RPCRDMA_DONE);
	h.proc = 5;
	assert_int_equal(wn_rpcrdma_encode(&h, b, sizeof(b)), -EINVAL);
	assert_int_equal(wn_rpcrdma_encode(NULL, b, sizeof(b)), -EINVAL);
	h.proc = WN_RPCRDMA_MSG;
	h.nreads = WN_RPCRDMA_MAX_READ_SEGS + 1;
	assert_int_equal(wn_rpcrdma_encode(&h, b, sizeof(b)), -EINVAL);
}

static void
roundtrip(const struct wn_rpcrdma_hdr *h, size_t expect_len)
{
	static uint8_t b[4096];
	struct wn_rpcrdma_hdr d;

	int n = wn_rpcrdma_encode(h, b, sizeof(b));
	assert_int_equal(n, (int)expect_len);
	assert_int_equal(wn_rpcrdma_decode(b, (size_t)n, &d), WN_RPCRDMA_OK);
	assert_int_equal(d.hdr_len, (uint32_t)n);
	assert_int_equal(d.xid, h->xid);
	assert_int_equal(d.credits, h->credits);
	assert_int_equal(d.proc, h->proc);
	assert_int_equal(d.align, h->align);
	assert_int_equal(d.thresh, h->thresh);
	assert_int_equal(d.nreads, h->nreads);
	for (uint32_t i = 0; i < h->nreads; i++) {
		assert_int_equal(d.reads[i].position, h->reads[i].position);
		assert_int_equal(d.reads[i].seg.handle, h->reads[i].seg.handle);
		assert_int_equal(d.reads[i].seg.length, h->reads[i].seg.length);
		assert_int_equal(d.reads[i].seg.offset, h->reads[i].seg.offset);
	}
	assert_int_equal(d.nwrites, h->nwrites);
	for (uint32_t i = 0; i < h->nwrites; i++) {
		assert_int_equal(d.writes[i].nsegs, h->writes[i].nsegs);
		for (uint32_t j = 0; j < h->writes[i].nsegs; j++) {
			assert_int_equal(d.writes[i].segs[j].handle, h->writes[i].segs[j].handle);
			assert_int_equal(d.writes[i].segs[j].length, h->writes[i].segs[j].length);
			assert_int_equal(d.writes[i].segs[j].offset, h->writes[i].segs[j].offset);
		}
	}
	assert_int_equal(d.has_reply, h->has_reply);
	if (h->has_reply) {
		assert_int_equal(d.reply.nsegs, h->reply.nsegs);
		for (uint32_t j = 0; j < h->reply.nsegs; j++)
			assert_int_equal(d.reply.segs[j].handle, h->reply.segs[j].handle);
	}
	assert_int_equal(d.err, h->err);
	assert_int_equal(d.vers_low, h->vers_low);
	assert_int_equal(d.vers_high, h->vers_high);
	assert_memory_equal(d.extra, h->extra, sizeof(d.extra));
	/* every proper prefix is truncated */
	for (int l = 0; l < n; l++)
		assert_int_equal(wn_rpcrdma_decode(b, (size_t)l, &d), WN_RPCRDMA_SHORT);
}

static void
test_roundtrips(void **state)
{
	static struct wn_rpcrdma_hdr h;
	(void)state;

	/* full limits: 16 reads, 8 write chunks of 16 segments, reply of 16 */
	memset(&h, 0, sizeof(h));
	h.xid = 0xCAFEF00D;
	h.vers = 1;
	h.credits = 128;
	h.proc = WN_RPCRDMA_NOMSG;
	h.nreads = WN_RPCRDMA_MAX_READ_SEGS;
	for (uint32_t i = 0; i < h.nreads; i++)
		h.reads[i] = (struct wn_rpcrdma_read_seg){
			.position = 0, .seg = {.handle = i, .length = 4096, .offset = i * 4096ull}};
	h.nwrites = WN_RPCRDMA_MAX_WRITE_CHUNKS;
	for (uint32_t i = 0; i < h.nwrites; i++) {
		h.writes[i].nsegs = WN_RPCRDMA_MAX_CHUNK_SEGS;
		for (uint32_t j = 0; j < WN_RPCRDMA_MAX_CHUNK_SEGS; j++)
			h.writes[i].segs[j] = (struct wn_rpcrdma_seg){
				.handle = 100 + i, .length = j, .offset = ((uint64_t)i << 40) | j};
	}
	h.has_reply = true;
	h.reply.nsegs = WN_RPCRDMA_MAX_CHUNK_SEGS;
	size_t len = 16 + 16 * (4 + 20) + 4 + 8 * (4 + 4 + 16 * 16) + 4 + 4 + 4 + 16 * 16;
	roundtrip(&h, len);

	/* RDMA_MSGP: align and threshold before the lists */
	memset(&h, 0, sizeof(h));
	h.vers = 1;
	h.proc = WN_RPCRDMA_MSGP;
	h.align = 4096;
	h.thresh = 1024;
	h.nreads = 1;
	h.reads[0].position = 64;
	roundtrip(&h, 16 + 8 + 24 + 4 + 4 + 4);

	/* RDMA_ERROR, each arm */
	memset(&h, 0, sizeof(h));
	h.vers = 1;
	h.proc = WN_RPCRDMA_ERROR;
	h.err = WN_RPCRDMA_ERR_VERS;
	h.vers_low = 1;
	h.vers_high = 1;
	roundtrip(&h, 28);
	h.vers_low = h.vers_high = 0;
	h.err = WN_RPCRDMA_ERR_CHUNK;
	roundtrip(&h, 20);
	h.err = 9; /* draft-08 / RFC 5666 default arm: 8 words */
	for (int i = 0; i < 8; i++)
		h.extra[i] = 0x1000u + (uint32_t)i;
	roundtrip(&h, 20 + 32);
}

static void
test_rejections(void **state)
{
	uint8_t b[512];
	struct wn_rpcrdma_hdr h;
	size_t n;
	(void)state;

	/* version 2: ERR_VERS, with the XID kept for the reply */
	uint32_t v2[] = {0xABCD, 2, 5, 0, 0, 0, 0};
	n = words(b, v2, 7);
	assert_int_equal(wn_rpcrdma_decode(b, n, &h), WN_RPCRDMA_BAD_VERS);
	assert_int_equal(h.xid, 0xABCD);
	assert_int_equal(wn_rpcrdma_status_errcode(WN_RPCRDMA_BAD_VERS), WN_RPCRDMA_ERR_VERS);

	uint32_t p5[] = {1, 1, 5, 5, 0, 0, 0};
	n = words(b, p5, 7);
	assert_int_equal(wn_rpcrdma_decode(b, n, &h), WN_RPCRDMA_BAD_PROC);
	assert_int_equal(wn_rpcrdma_status_errcode(WN_RPCRDMA_BAD_PROC), WN_RPCRDMA_ERR_CHUNK);

	/* discriminator 2 in each of the three positions */
	for (int pos = 0; pos < 3; pos++) {
		uint32_t d[] = {1, 1, 1, 0, 0, 0, 0};
		d[4 + pos] = 2;
		n = words(b, d, 7);
		assert_int_equal(wn_rpcrdma_decode(b, n, &h), WN_RPCRDMA_BAD_DISCRIM);
	}
	/* a discriminator inside the read list after an entry */
	uint32_t d2[] = {1, 1, 1, 0, 1, 0, 1, 2, 0, 0, 0x80000000u, 0, 0};
	n = words(b, d2, 13);
	assert_int_equal(wn_rpcrdma_decode(b, n, &h), WN_RPCRDMA_BAD_DISCRIM);

	/* 17 read entries */
	uint32_t w[16 + 17 * 6 + 3];
	size_t k = 0;
	w[k++] = 1, w[k++] = 1, w[k++] = 1, w[k++] = 0;
	for (int i = 0; i < 17; i++) {
		w[k++] = 1;
		for (int j = 0; j < 5; j++)
			w[k++] = 0;
	}
	w[k++] = 0, w[k++] = 0, w[k++] = 0;
	n = words(b, w, k);
	assert_int_equal(wn_rpcrdma_decode(b, n, &h), WN_RPCRDMA_TOO_MANY);
	assert_int_equal(h.nreads, WN_RPCRDMA_MAX_READ_SEGS);

	/* a write chunk claiming 2^32-1 segments is refused before reading them */
	uint32_t big[] = {1, 1, 1, 0, 0, 1, 0xFFFFFFFFu};
	n = words(b, big, 7);
	assert_int_equal(wn_rpcrdma_decode(b, n, &h), WN_RPCRDMA_TOO_MANY);
	/* 17 segments in the reply chunk */
	uint32_t r17[] = {1, 1, 1, 0, 0, 0, 1, 17};
	n = words(b, r17, 8);
	assert_int_equal(wn_rpcrdma_decode(b, n, &h), WN_RPCRDMA_TOO_MANY);
	/* 9 write chunks */
	uint32_t w9[4 + 9 * 2 + 2];
	k = 0;
	w9[k++] = 1, w9[k++] = 1, w9[k++] = 1, w9[k++] = 0, w9[k++] = 0;
	for (int i = 0; i < 9; i++)
		w9[k++] = 1, w9[k++] = 0;
	w9[k++] = 0;
	n = words(b, w9, k);
	assert_int_equal(wn_rpcrdma_decode(b, n, &h), WN_RPCRDMA_TOO_MANY);
	/* 8 empty write chunks are fine (and the reply discriminator follows) */
	n = words(b, w9, 5 + 16);
	n += words(b + n, (const uint32_t[]){0, 0}, 2);
	assert_int_equal(wn_rpcrdma_decode(b, n, &h), WN_RPCRDMA_OK);
	assert_int_equal(h.nwrites, 8);

	/* octets after headers that carry no RPC message */
	uint32_t nomsg[] = {1, 1, 1, 1, 0, 0, 0, 0x12345678};
	n = words(b, nomsg, 8);
	assert_int_equal(wn_rpcrdma_decode(b, n, &h), WN_RPCRDMA_TRAILING);
	assert_int_equal(wn_rpcrdma_decode(b, n - 4, &h), WN_RPCRDMA_OK);
	uint32_t done[] = {1, 1, 1, 3, 0};
	n = words(b, done, 5);
	assert_int_equal(wn_rpcrdma_decode(b, n, &h), WN_RPCRDMA_TRAILING);
	uint32_t errc[] = {1, 1, 1, 4, 2, 0};
	n = words(b, errc, 6);
	assert_int_equal(wn_rpcrdma_decode(b, n, &h), WN_RPCRDMA_TRAILING);
	/* an unknown error code needs its 8 extra words */
	uint32_t err9[] = {1, 1, 1, 4, 9, 1, 2, 3};
	n = words(b, err9, 8);
	assert_int_equal(wn_rpcrdma_decode(b, n, &h), WN_RPCRDMA_SHORT);

	assert_int_equal(wn_rpcrdma_decode(NULL, 0, &h), WN_RPCRDMA_SHORT);
	for (int s = 0; s < WN_RPCRDMA_STATUS_COUNT; s++)
		assert_string_not_equal(wn_rpcrdma_status_str((enum wn_rpcrdma_status)s),
					"unknown");
	assert_int_equal(wn_rpcrdma_status_errcode(WN_RPCRDMA_OK), 0);
}

static void
test_error_build(void **state)
{
	uint8_t b[64];
	struct wn_rpcrdma_hdr h;
	(void)state;

	assert_int_equal(wn_rpcrdma_error_build(b, sizeof(b), 0x55, 3, WN_RPCRDMA_ERR_VERS), 28);
	static const uint8_t vers[28] = {0, 0, 0, 0x55, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0,
					 0, 4, 0, 0,	0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
	assert_memory_equal(b, vers, 28);
	assert_int_equal(wn_rpcrdma_decode(b, 28, &h), WN_RPCRDMA_OK);
	assert_int_equal(h.err, WN_RPCRDMA_ERR_VERS);
	assert_int_equal(h.vers_low, 1);
	assert_int_equal(h.vers_high, 1);
	assert_int_equal(wn_rpcrdma_error_build(b, sizeof(b), 0x55, 3, WN_RPCRDMA_ERR_CHUNK), 20);
	assert_int_equal(wn_rpcrdma_decode(b, 20, &h), WN_RPCRDMA_OK);
	assert_int_equal(h.err, WN_RPCRDMA_ERR_CHUNK);
	assert_int_equal(wn_rpcrdma_error_build(b, sizeof(b), 0x55, 3, 3), -EINVAL);
	assert_int_equal(wn_rpcrdma_error_build(b, 19, 0x55, 3, WN_RPCRDMA_ERR_CHUNK), -ENOSPC);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_vector), cmocka_unit_test(test_minimal),
		cmocka_unit_test(test_roundtrips),    cmocka_unit_test(test_rejections),
		cmocka_unit_test(test_error_build),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
