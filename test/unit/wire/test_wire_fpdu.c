/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FPDU framer, deframer and Marker locator (RFC 5044 §4, §5, §8). A failure
 * here means warpnic puts wrong Markers, PAD or CRC on the wire, loses or
 * corrupts ULPDUs on receive, or misses CRC (error 2) / Marker (error 3)
 * faults.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/uio.h>

#include <cmocka.h>

#include "wn_wire_crc.h"
#include "wn_wire_mpa.h"

/* RFC 5044 Figure 5. */
static const uint8_t fig5[52] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, 0x41, 0x43, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x52, 0x23, 0x99, 0x83,
};

/* RFC 5044 Figure 6, stream offsets 0x1ec-0x21f. */
static const uint8_t fig6[52] = {
	0x00, 0x2a, 0x41, 0x43, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x84, 0x92, 0x58, 0x98,
};

/* The untagged Send ULPDU of both figures, MSN @p msn. */
static void
fig_ulpdu(uint8_t u[42], uint8_t msn)
{
	memset(u, 0, 42);
	u[0] = 0x41;
	u[1] = 0x43;
	u[13] = msn; /* MSN at U+10..13 */
}

static uint32_t rng_state = 0x9e3779b9u;

static uint32_t
rnd(void)
{
	uint32_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	rng_state = x;
	return x;
}

static void
test_rfc5044_figures(void **state)
{
	struct wn_mpa_stream st = {.markers = true, .crc = true};
	uint8_t u[42], out[128];
	struct iovec iov;
	(void)state;

	/* Several SeqStart values, including just below the 2^32 wrap. */
	static const uint32_t starts[] = {0, 11, 0xFFFFFFF0u, 0x80000000u, 0xFFFFFE14u};
	for (unsigned int i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		st.seq_start = starts[i];
		fig_ulpdu(u, 1);
		iov.iov_base = u;
		iov.iov_len = 42;
		assert_int_equal(wn_wire_mpa_fpdu_wire_len(st.seq_start, st.seq_start, true, 42),
				 52);
		assert_int_equal(
			wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, st.seq_start, &st), 52);
		assert_memory_equal(out, fig5, 52);

		/* first FPDU of Figure 6's stream occupied 0x000-0x1eb: 482-octet ULPDU */
		assert_int_equal(wn_wire_mpa_fpdu_wire_len(st.seq_start, st.seq_start, true, 482),
				 492);
		fig_ulpdu(u, 2);
		uint32_t seq = st.seq_start + 0x1ec;
		assert_int_equal(wn_wire_mpa_fpdu_wire_len(seq, st.seq_start, true, 42), 52);
		assert_int_equal(wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, seq, &st), 52);
		assert_memory_equal(out, fig6, 52);
	}

	/* the same ULPDU split over pieces (header + payload in "registered memory") */
	struct iovec parts[3] = {{u, 18}, {u + 18, 0}, {u + 18, 24}};
	st.seq_start = 7;
	assert_int_equal(wn_wire_mpa_fpdu_build(out, sizeof(out), parts, 3, 7 + 0x1ec, &st), 52);
	assert_memory_equal(out, fig6, 52);
}

static void
test_extra_vectors(void **state)
{
	/* More vectors in the RFC 5044 Figure 5 form, Markers off, CRC on. */
	static const uint8_t write_rtr[20] = {0x00, 0x0e, 0xc1, 0x40, 0x00, 0x00, 0x00,
					      0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
					      0x00, 0x00, 0xeb, 0xd3, 0x4c, 0x5f};
	static const uint8_t term[28] = {0x00, 0x16, 0x41, 0x47, 0x00, 0x00, 0x00,
					 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
					 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
					 0xff, 0x00, 0x00, 0x51, 0x89, 0x6a, 0x8c};
	uint8_t read_rtr[52] = {0x00, 0x2e, 0x41, 0x41, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
				0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
				0x00, 0x00, 0x00, 0x01};
	struct wn_mpa_stream st = {.seq_start = 1000, .markers = false, .crc = true};
	uint8_t out[64];
	struct iovec iov;
	(void)state;

	read_rtr[24 + 8 + 7] = 0x01; /* source STag 1 after 8 zero octets of sink TO */
	read_rtr[48] = 0x27;
	read_rtr[49] = 0xdb;
	read_rtr[50] = 0xd7;
	read_rtr[51] = 0xe7;

	iov.iov_base = (void *)(uintptr_t)(write_rtr + 2);
	iov.iov_len = 14;
	assert_int_equal(wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, 12345, &st), 20);
	assert_memory_equal(out, write_rtr, 20);
	iov.iov_base = read_rtr + 2;
	iov.iov_len = 46;
	assert_int_equal(wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, 3, &st), 52);
	assert_memory_equal(out, read_rtr, 52);
	iov.iov_base = (void *)(uintptr_t)(term + 2);
	iov.iov_len = 22;
	assert_int_equal(wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, 0xFFFFFFFEu, &st), 28);
	assert_memory_equal(out, term, 28);

	/* CRC off: field sent as zeros */
	st.crc = false;
	iov.iov_base = (void *)(uintptr_t)(write_rtr + 2);
	iov.iov_len = 14;
	assert_int_equal(wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, 0, &st), 20);
	assert_memory_equal(out, write_rtr, 16);
	assert_int_equal(wn_crc32c_get_wire(out + 16), 0);
}

static void
test_mulpdu(void **state)
{
	(void)state;
	/* RFC 5044 §4.5 MULPDU examples */
	assert_int_equal(wn_wire_mpa_mulpdu(1460, false), 1454);
	assert_int_equal(wn_wire_mpa_mulpdu(1460, true), 1442);
	assert_int_equal(wn_wire_mpa_mulpdu(1448, false), 1442);
	assert_int_equal(wn_wire_mpa_mulpdu(1448, true), 1430);
	assert_int_equal(wn_wire_mpa_mulpdu(8960, false), 8954);
	assert_int_equal(wn_wire_mpa_mulpdu(8960, true), 8882);
	/* EMSS mod 4 and ceil() */
	assert_int_equal(wn_wire_mpa_mulpdu(1463, false), 1463 - 6 - 3);
	assert_int_equal(wn_wire_mpa_mulpdu(1025, true), 1025 - (6 + 12 + 1));
	/* clamp to 128..64768 */
	assert_int_equal(wn_wire_mpa_mulpdu(100, false), 128);
	assert_int_equal(wn_wire_mpa_mulpdu(0, true), 128);
	assert_int_equal(wn_wire_mpa_mulpdu(134, false), 128);
	assert_int_equal(wn_wire_mpa_mulpdu(65535, false), 64768);
	assert_int_equal(wn_wire_mpa_mulpdu(0xFFFFFFFFu, true), 64768);
}

static void
test_build_errors(void **state)
{
	static uint8_t big[WN_MPA_MULPDU_MAX + 1];
	struct wn_mpa_stream st = {.seq_start = 0, .markers = true, .crc = true};
	uint8_t out[64];
	struct iovec iov = {big, 10};
	(void)state;

	assert_int_equal(wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, 2, &st), -EINVAL);
	assert_int_equal(wn_wire_mpa_fpdu_build(out, 15, &iov, 1, 4, &st), -ENOSPC);
	assert_int_equal(wn_wire_mpa_fpdu_build(out, 19, &iov, 1, 0, &st), -ENOSPC); /* + Marker */
	iov.iov_len = sizeof(big);
	assert_int_equal(wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, 0, &st), -EMSGSIZE);
	iov.iov_base = NULL;
	iov.iov_len = 1;
	assert_int_equal(wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, 0, &st), -EINVAL);
	/* without Markers any sequence number is fine */
	st.markers = false;
	iov.iov_base = big;
	iov.iov_len = 10;
	assert_int_equal(wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, 3, &st), 16);
	/* empty ULPDU: length, 2 PAD, CRC */
	assert_int_equal(wn_wire_mpa_fpdu_build(out, sizeof(out), NULL, 0, 3, &st), 8);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 0);
}


static void
test_gather_equals_build(void **state)
{
	static uint8_t payload[20000];
	static uint8_t built[21000], joined[21000];
	uint8_t scratch[WN_MPA_GATHER_SCRATCH];
	struct iovec sg[400];
	(void)state;

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)rnd();
	for (int it = 0; it < 400; it++) {
		struct wn_mpa_stream st = {.seq_start = rnd(), .markers = it & 1,
					   .crc = (it & 2) == 0};
		uint32_t seq = st.seq_start + ((rnd() % 4096) & ~3u);
		size_t len = it % 7 == 0 ? rnd() % sizeof(payload) : rnd() % 1500;
		size_t cut = len ? rnd() % len : 0;
		struct iovec iov[3] = {{payload, cut}, {payload + cut, 0}, {payload + cut, len - cut}};

		int w = wn_wire_mpa_fpdu_build(built, sizeof(built), iov, 3, seq, &st);
		assert_true(w > 0);
		int n = wn_wire_mpa_fpdu_gather(sg, 400, scratch, sizeof(scratch), iov, 3, seq,
						&st);
		assert_true(n > 0);
		size_t off = 0;
		bool refs_payload = false;
		for (int k = 0; k < n; k++) {
			const uint8_t *b = sg[k].iov_base;
			assert_true(off + sg[k].iov_len <= sizeof(joined));
			memcpy(joined + off, b, sg[k].iov_len);
			off += sg[k].iov_len;
			/* every piece lives in the payload or in the scratch area */
			bool in_pl = b >= payload && b + sg[k].iov_len <= payload + sizeof(payload);
			bool in_scr = b >= scratch && b + sg[k].iov_len <= scratch + sizeof(scratch);
			assert_true(in_pl || in_scr);
			refs_payload = refs_payload || in_pl;
		}
		assert_int_equal(off, (size_t)w);
		assert_memory_equal(joined, built, (size_t)w);
		if (len > 0)
			assert_true(refs_payload); /* zero copy: the ULPDU is referenced */
	}

	/* Figure 6 through the gather path */
	uint8_t u[42];
	struct wn_mpa_stream st = {.seq_start = 0, .markers = true, .crc = true};
	struct iovec one = {u, 42};
	fig_ulpdu(u, 2);
	int n = wn_wire_mpa_fpdu_gather(sg, 400, scratch, sizeof(scratch), &one, 1, 0x1ec, &st);
	assert_int_equal(n, 5); /* length | ULPDU up to 0x200 | Marker | rest | CRC */
	size_t off = 0;
	for (int k = 0; k < n; k++) {
		memcpy(joined + off, sg[k].iov_base, sg[k].iov_len);
		off += sg[k].iov_len;
	}
	assert_int_equal(off, 52);
	assert_memory_equal(joined, fig6, 52);
	/* limits */
	assert_int_equal(
		wn_wire_mpa_fpdu_gather(sg, 2, scratch, sizeof(scratch), &one, 1, 0x1ec, &st),
		-ENOSPC);
	assert_int_equal(wn_wire_mpa_fpdu_gather(sg, 400, scratch, 5, &one, 1, 0x1ec, &st),
			 -ENOSPC);
	assert_int_equal(
		wn_wire_mpa_fpdu_gather(sg, 400, scratch, sizeof(scratch), &one, 1, 2, &st),
		-EINVAL);
}

/* ---- receive side ------------------------------------------------------------------------ */

#define MAX_ULPDUS 64

struct rx_log {
	unsigned int n;            /* ULPDUs completed */
	uint16_t len[MAX_ULPDUS];
	uint32_t fpdu_seq[MAX_ULPDUS];
	uint8_t *data[MAX_ULPDUS]; /* reassembled from header + payload events */
	enum wn_mpa_err verdict[MAX_ULPDUS];
	uint32_t next_off;         /* next payload offset expected */
	bool in_fpdu;
	uint16_t hdr_want;         /* 0: use DDP rule (14 tagged / 18 untagged) */
	unsigned int delivered;    /* collector deliveries */
};

static size_t
ddp_hdr_len(void *arg, const uint8_t *hdr, size_t have, uint16_t ulpdu_len)
{
	struct rx_log *l = arg;

	(void)ulpdu_len;
	if (l->hdr_want != 0)
		return l->hdr_want;
	if (have < 1)
		return 1;
	return (hdr[0] & 0x80) ? 14 : 18; /* RFC 5041 §4.2/§4.3 */
}

static int
log_header(void *arg, const struct wn_mpa_rx_hdr *h)
{
	struct rx_log *l = arg;

	assert_false(l->in_fpdu);
	assert_true(l->n < MAX_ULPDUS);
	assert_true(h->hdr_len <= h->ulpdu_len);
	l->in_fpdu = true;
	l->len[l->n] = h->ulpdu_len;
	l->fpdu_seq[l->n] = h->fpdu_seq;
	l->data[l->n] = malloc(h->ulpdu_len + 1u);
	assert_non_null(l->data[l->n]);
	memcpy(l->data[l->n], h->hdr, h->hdr_len);
	l->next_off = h->hdr_len;
	return 0;
}

static int
log_payload(void *arg, const uint8_t *p, size_t len, uint32_t off)
{
	struct rx_log *l = arg;

	assert_true(l->in_fpdu);
	assert_int_equal(off, l->next_off);
	assert_true(off + len <= l->len[l->n]);
	memcpy(l->data[l->n] + off, p, len);
	l->next_off += (uint32_t)len;
	return 0;
}

static int
log_end(void *arg, const struct wn_mpa_rx_hdr *h, enum wn_mpa_err verdict)
{
	struct rx_log *l = arg;

	assert_true(l->in_fpdu);
	assert_int_equal(l->next_off, h->ulpdu_len);
	l->verdict[l->n] = verdict;
	l->in_fpdu = false;
	l->n++;
	return 0;
}

static const struct wn_mpa_rx_ops log_ops = {
	.hdr_len = ddp_hdr_len,
	.header = log_header,
	.payload = log_payload,
	.end = log_end,
};

static void
log_free(struct rx_log *l)
{
	for (unsigned int i = 0; i < l->n + (l->in_fpdu ? 1 : 0); i++)
		free(l->data[i]);
	memset(l, 0, sizeof(*l));
}

/* Feed @p len octets in chunks: mode 0 = 1 octet, 1 = random small, 2 = random large. */
static int
feed(struct wn_mpa_deframer *d, const uint8_t *buf, size_t len, int mode)
{
	size_t i = 0;

	while (i < len) {
		size_t k = mode == 0 ? 1 : mode == 1 ? 1 + rnd() % 7 : 1 + rnd() % 3000;
		size_t used = 0;
		uint8_t *chunk;
		int rc;

		if (k > len - i)
			k = len - i;
		/* exact-size heap copy: payload pointers must stay inside the chunk */
		chunk = malloc(k);
		assert_non_null(chunk);
		memcpy(chunk, buf + i, k);
		rc = wn_wire_mpa_deframer_input(d, chunk, k, &used);
		free(chunk);
		if (rc < 0)
			return rc;
		assert_int_equal(used, k);
		i += k;
	}
	return 0;
}

static void
test_deframe_figures(void **state)
{
	struct wn_mpa_deframer d;
	struct rx_log l = {0};
	uint8_t stream[600], u[482];
	struct wn_mpa_stream st = {.seq_start = 0xFFFFFF00u, .markers = true, .crc = true};
	struct wn_mpa_deframer_cfg cfg = {.stream = st, .seq = st.seq_start,
					  .check_markers = true};
	struct iovec iov = {u, sizeof(u)};
	(void)state;

	/* Figure 6's stream: a 482-octet ULPDU (492 wire octets), then Figure 6 */
	for (unsigned int i = 0; i < sizeof(u); i++)
		u[i] = (uint8_t)(i * 3);
	u[0] = 0x41; /* untagged: 18-octet header */
	assert_int_equal(wn_wire_mpa_fpdu_build(stream, sizeof(stream), &iov, 1, st.seq_start, &st),
			 492);
	memcpy(stream + 492, fig6, 52);
	for (int mode = 0; mode < 3; mode++) {
		assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &log_ops, &l), 0);
		assert_int_equal(feed(&d, stream, 544, mode), 0);
		assert_int_equal(l.n, 2);
		assert_int_equal(l.len[0], 482);
		assert_memory_equal(l.data[0], u, 482);
		assert_int_equal(l.len[1], 42);
		assert_int_equal(l.fpdu_seq[0], st.seq_start + 4);
		assert_int_equal(l.fpdu_seq[1], st.seq_start + 0x1ec);
		uint8_t f6[42];
		fig_ulpdu(f6, 2);
		assert_memory_equal(l.data[1], f6, 42);
		assert_int_equal(l.verdict[0], WN_MPA_ERR_NONE);
		assert_int_equal(l.verdict[1], WN_MPA_ERR_NONE);
		assert_int_equal(wn_mpa_deframer_seq(&d), st.seq_start + 544);
		log_free(&l);
	}

	/* Figure 5 alone, deframed with a fixed header size */
	cfg.stream.seq_start = 0;
	cfg.seq = 0;
	cfg.hdr_len = 18;
	struct wn_mpa_rx_ops fixed = log_ops;
	fixed.hdr_len = NULL;
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &fixed, &l), 0);
	assert_int_equal(feed(&d, fig5, 52, 0), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.len[0], 42);
	log_free(&l);
}

/* Frame a random stream; returns its length. Records ULPDUs and ownership of octets. */
struct tx_stream {
	uint8_t *buf;
	size_t len;
	unsigned int n;
	uint8_t *ulpdu[MAX_ULPDUS];
	uint16_t ulen[MAX_ULPDUS];
	uint32_t len_seq[MAX_ULPDUS]; /* seq of each ULPDU_Length */
	size_t start_off[MAX_ULPDUS]; /* stream offset of each FPDU's first wire octet */
	size_t end_off[MAX_ULPDUS];
	uint32_t *owner;              /* per octet: seq of its FPDU's ULPDU_Length */
};

static void
tx_stream_make(struct tx_stream *s, const struct wn_mpa_stream *st, uint32_t seq,
	       unsigned int count, size_t max_len)
{
	size_t cap = 0;

	memset(s, 0, sizeof(*s));
	for (unsigned int i = 0; i < count; i++) {
		size_t ul = rnd() % (max_len + 1);
		/* make the first octet a DDP control octet, tagged or untagged */
		s->ulpdu[i] = malloc(ul + 1);
		assert_non_null(s->ulpdu[i]);
		for (size_t k = 0; k < ul; k++)
			s->ulpdu[i][k] = (uint8_t)rnd();
		s->ulen[i] = (uint16_t)ul;
		cap += wn_wire_mpa_fpdu_wire_len(0, 0, st->markers, ul) + 8;
	}
	s->n = count;
	s->buf = malloc(cap);
	s->owner = malloc(cap * sizeof(uint32_t));
	assert_non_null(s->buf);
	assert_non_null(s->owner);
	for (unsigned int i = 0; i < count; i++) {
		struct iovec iov[2];
		size_t cut = s->ulen[i] ? rnd() % s->ulen[i] : 0;
		uint32_t fseq = seq + (uint32_t)s->len;

		iov[0].iov_base = s->ulpdu[i];
		iov[0].iov_len = cut;
		iov[1].iov_base = s->ulpdu[i] + cut;
		iov[1].iov_len = s->ulen[i] - cut;
		size_t w = wn_wire_mpa_fpdu_wire_len(fseq, st->seq_start, st->markers, s->ulen[i]);
		int rc = wn_wire_mpa_fpdu_build(s->buf + s->len, cap - s->len, iov, 2, fseq, st);
		assert_int_equal(rc, (int)w);
		bool lead = st->markers && ((fseq - st->seq_start) & 511) == 0;
		s->len_seq[i] = fseq + (lead ? 4 : 0);
		s->start_off[i] = s->len;
		s->end_off[i] = s->len + w;
		for (size_t k = 0; k < w; k++)
			s->owner[s->len + k] = s->len_seq[i];
		s->len += w;
	}
}

static void
tx_stream_free(struct tx_stream *s)
{
	for (unsigned int i = 0; i < s->n; i++)
		free(s->ulpdu[i]);
	free(s->buf);
	free(s->owner);
}

static void
test_roundtrip_random(void **state)
{
	(void)state;
	for (int it = 0; it < 240; it++) {
		struct wn_mpa_stream st = {.seq_start = rnd(), .markers = it & 1,
					   .crc = (it >> 1) & 1};
		uint32_t seq = st.seq_start;
		struct tx_stream s;
		struct wn_mpa_deframer d;
		struct rx_log l = {0};

		/* every 3rd run starts close to the 2^32 wrap, others mid-stream */
		if (it % 3 == 0)
			st.seq_start = 0xFFFFFFFFu - (rnd() % 4000);
		seq = st.seq_start + (st.markers ? (rnd() % 5000) & ~3u : rnd() % 5000);
		if (it % 3 == 0)
			seq = st.seq_start;
		size_t max_len = it % 10 == 9 ? 20000 : 1600;
		tx_stream_make(&s, &st, seq, 1 + rnd() % 12, max_len);
		struct wn_mpa_deframer_cfg cfg = {.stream = st, .seq = seq,
						  .check_markers = true};
		l.hdr_want = it % 4 == 0 ? (uint16_t)(rnd() % 80) : 0;
		assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &log_ops, &l), 0);
		int mode = max_len > 1600 ? 2 : it % 3;
		assert_int_equal(feed(&d, s.buf, s.len, mode), 0);
		assert_int_equal(l.n, s.n);
		for (unsigned int i = 0; i < s.n; i++) {
			assert_int_equal(l.len[i], s.ulen[i]);
			assert_int_equal(l.fpdu_seq[i], s.len_seq[i]);
			assert_int_equal(l.verdict[i], WN_MPA_ERR_NONE);
			if (s.ulen[i])
				assert_memory_equal(l.data[i], s.ulpdu[i], s.ulen[i]);
		}
		assert_false(l.in_fpdu);
		assert_int_equal(wn_mpa_deframer_seq(&d), seq + (uint32_t)s.len);
		log_free(&l);
		tx_stream_free(&s);
	}
}


/*
 * Walk @p s (cut into pieces at random offsets, or one piece) with wn_wire_mpa_fpdu_view(): every
 * FPDU found whole where it lies, its ULPDU the one sent, nothing copied, the verdict
 * @p want (of the FPDU @p bad, the others NONE); a truncated stream stops before its last one.
 */
static void
view_walk(const struct tx_stream *s, const struct wn_mpa_stream *st, uint32_t seq, bool cut,
	  unsigned int bad, enum wn_mpa_err want)
{
	struct wn_mpa_deframer_cfg cfg = {.stream = *st, .check_markers = true};
	struct iovec in[16], rest[17];
	struct wn_wire_mpa_fpdu_view f;
	unsigned int n_in = 0, nr;
	size_t pos = 0, off = 0;

	/* the stream in up to 16 pieces */
	while (pos < s->len) {
		size_t k = cut && n_in < 15 ? 1 + rnd() % 2000 : s->len - pos;

		if (k > s->len - pos)
			k = s->len - pos;
		in[n_in].iov_base = s->buf + pos;
		in[n_in].iov_len = k;
		n_in++;
		pos += k;
	}
	for (unsigned int i = 0; i < s->n; i++) {
		size_t skip = off, got = 0;

		/* the pieces from FPDU i on */
		nr = 0;
		for (unsigned int j = 0; j < n_in; j++) {
			if (skip >= in[j].iov_len) {
				skip -= in[j].iov_len;
				continue;
			}
			rest[nr].iov_base = (uint8_t *)in[j].iov_base + skip;
			rest[nr].iov_len = in[j].iov_len - skip;
			skip = 0;
			nr++;
		}
		/* one octet short of this FPDU: not complete */
		if (nr > 0 && rest[nr - 1].iov_len > 0 && i == s->n - 1) {
			rest[nr - 1].iov_len--;
			assert_int_equal(
				wn_wire_mpa_fpdu_view(rest, nr, seq + (uint32_t)off, &cfg, &f), 0);
			rest[nr - 1].iov_len++;
		}
		assert_int_equal(wn_wire_mpa_fpdu_view(rest, nr, seq + (uint32_t)off, &cfg, &f), 1);
		assert_int_equal(f.ulpdu_len, s->ulen[i]);
		assert_int_equal(f.fpdu_seq, s->len_seq[i]);
		assert_int_equal(off + f.wire_len, s->end_off[i]);
		assert_int_equal(f.verdict, i == bad ? want : WN_MPA_ERR_NONE);
		for (unsigned int k = 0; k < f.n; k++) {
			/* in place: every piece points into the stream */
			assert_true((uint8_t *)f.v[k].iov_base >= s->buf &&
				    (uint8_t *)f.v[k].iov_base + f.v[k].iov_len <= s->buf + s->len);
			if (i != bad)
				assert_memory_equal(f.v[k].iov_base, s->ulpdu[i] + got,
						    f.v[k].iov_len);
			got += f.v[k].iov_len;
		}
		assert_int_equal(got, s->ulen[i]);
		off += f.wire_len;
	}
	assert_int_equal(off, s->len);
}

/* wn_wire_mpa_fpdu_view() against what the framer built: clean, cut anywhere, a CRC, a Marker. */
static void
test_view_random(void **state)
{
	struct wn_wire_mpa_fpdu_view f;
	struct wn_mpa_deframer_cfg cfg = {0};
	struct iovec one;
	uint8_t z[8] = {0};
	uint32_t rng_saved = rng_state; /* the tests after this one draw what they drew before */

	(void)state;
	for (int it = 0; it < 400; it++) {
		struct wn_mpa_stream st = {.seq_start = rnd(), .markers = it & 1,
					   .crc = ((it >> 1) & 3) != 0};
		struct tx_stream s;
		uint32_t seq;
		size_t max_len = it % 10 == 9 ? 9000 : 1600;

		if (it % 3 == 0)
			st.seq_start = 0xFFFFFFFFu - (rnd() % 4000);
		seq = st.seq_start + (st.markers ? (rnd() % 5000) & ~3u : rnd() % 5000);
		tx_stream_make(&s, &st, seq, 1 + rnd() % 12, max_len);
		view_walk(&s, &st, seq, it % 2 == 0, UINT32_MAX, WN_MPA_ERR_NONE);
		if (st.crc) {
			/* one octet flipped: that FPDU's CRC, the others still good */
			unsigned int i = rnd() % s.n;

			/* the last octet before the CRC field: PAD, payload or a Marker */
			s.buf[s.end_off[i] - 5] ^= 0x10;
			view_walk(&s, &st, seq, it % 4 == 0, i, WN_MPA_ERR_CRC);
		}
		tx_stream_free(&s);
	}
	/* a wrong FPDUPTR under a good CRC: the Marker's verdict */
	{
		struct wn_mpa_stream st = {.seq_start = 0x12345670u, .markers = true, .crc = true};
		uint8_t u[1200], out[1400];
		struct iovec iov = {u, sizeof(u)};
		uint32_t seq = st.seq_start + 200;
		int w;

		memset(u, 7, sizeof(u));
		w = wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, seq, &st);
		out[312 + 3] = 0x40;
		wn_crc32c_put_wire(out + w - 4, wn_crc32c(out, (size_t)w - 4));
		cfg.stream = st;
		cfg.check_markers = true;
		one.iov_base = out;
		one.iov_len = (size_t)w;
		assert_int_equal(wn_wire_mpa_fpdu_view(&one, 1, seq, &cfg, &f), 1);
		assert_int_equal(f.verdict, WN_MPA_ERR_MARKER);
		cfg.check_markers = false; /* RFC 5044 §5.2: not checked, contents ignored */
		assert_int_equal(wn_wire_mpa_fpdu_view(&one, 1, seq, &cfg, &f), 1);
		assert_int_equal(f.verdict, WN_MPA_ERR_NONE);
	}
	/* too short for ULPDU_Length; NULL arguments */
	one.iov_base = z;
	one.iov_len = 1;
	assert_int_equal(wn_wire_mpa_fpdu_view(&one, 1, 0, &cfg, &f), 0);
	assert_int_equal(wn_wire_mpa_fpdu_view(NULL, 0, 0, &cfg, &f), -EINVAL);
	rng_state = rng_saved;
}

static void
test_segment_fpdus(void **state)
{
	unsigned int found_markers = 0, found_aligned = 0;
	(void)state;

	for (int it = 0; it < 400; it++) {
		struct wn_mpa_stream st = {.seq_start = rnd(), .markers = it % 3 != 0, .crc = true};
		uint32_t seq = st.seq_start + ((rnd() % 3000) & ~3u);
		struct tx_stream s;
		struct rx_log l = {0};
		uint32_t first = 0, end = 0;

		if (it % 5 == 0)
			st.seq_start = 0xFFFFFFFFu - (rnd() % 3000);
		seq = st.seq_start + ((rnd() % 3000) & ~3u);
		tx_stream_make(&s, &st, seq, 10, 1400);
		size_t off, len;
		int j = -1;
		if (st.markers) {
			off = rnd() % s.len;
			len = rnd() % (s.len - off + 1);
			/* expected: the first Marker in the window whose FPDU starts inside it */
			for (size_t k = 0; k + 4 <= len && j < 0; k++) {
				uint32_t q = seq + (uint32_t)(off + k);
				if (((q - st.seq_start) & 511) != 0)
					continue;
				for (unsigned int f = 0; f < s.n; f++)
					if (s.len_seq[f] == s.owner[off + k] && s.start_off[f] >= off)
						j = (int)f;
			}
		} else {
			j = (int)(rnd() % s.n);
			off = s.start_off[j];
			len = rnd() % (s.len - off + 1);
		}
		struct wn_mpa_deframer_cfg cfg = {.stream = st, .check_markers = true};
		int rc = wn_wire_mpa_segment_fpdus(seq + (uint32_t)off, s.buf + off, len, &cfg,
					      !st.markers, &log_ops, &l, &first, &end);
		unsigned int expect = 0;
		if (j >= 0) {
			for (unsigned int f = (unsigned int)j; f < s.n && s.end_off[f] <= off + len;
			     f++)
				expect++;
		}
		assert_int_equal(rc, (int)expect);
		assert_int_equal(l.n, expect);
		for (unsigned int k = 0; k < expect; k++) {
			assert_int_equal(l.len[k], s.ulen[j + (int)k]);
			if (l.len[k])
				assert_memory_equal(l.data[k], s.ulpdu[j + (int)k], l.len[k]);
		}
		if (expect > 0) {
			if (st.markers)
				found_markers++;
			else
				found_aligned++;
			assert_int_equal(first, seq + (uint32_t)s.start_off[j]);
			assert_int_equal(end, seq + (uint32_t)s.end_off[j + (int)expect - 1]);
			/* a damaged FPDU in the segment: drop it (RFC 5044 §8) */
			log_free(&l);
			s.buf[s.end_off[j] - 5] ^= 0x80;
			rc = wn_wire_mpa_segment_fpdus(seq + (uint32_t)off, s.buf + off, len, &cfg,
						  !st.markers, &log_ops, &l, NULL, NULL);
			assert_int_equal(rc, -EBADMSG);
		}
		/* without Markers and without alignment nothing can be found */
		if (!st.markers) {
			log_free(&l);
			rc = wn_wire_mpa_segment_fpdus(seq + (uint32_t)off, s.buf + off, len, &cfg,
						       false, &log_ops, &l, NULL, NULL);
			assert_int_equal(rc, 0);
			assert_int_equal(l.n, 0);
		}
		log_free(&l);
		tx_stream_free(&s);
	}
	/* the cases above really exercised both ways of finding an FPDU */
	assert_true(found_markers > 50);
	assert_true(found_aligned > 30);
}

struct collect_ctx {
	unsigned int n;
	const struct tx_stream *s;
};

static int
collect_deliver(void *arg, const uint8_t *u, size_t len)
{
	struct collect_ctx *c = arg;

	assert_true(c->n < c->s->n);
	assert_int_equal(len, c->s->ulen[c->n]);
	if (len)
		assert_memory_equal(u, c->s->ulpdu[c->n], len);
	c->n++;
	return 0;
}

static void
test_collector(void **state)
{
	static uint8_t room[2000];
	struct wn_mpa_stream st = {.seq_start = 0xFFFFFFF8u, .markers = true, .crc = true};
	struct tx_stream s;
	struct wn_mpa_deframer d;
	struct collect_ctx cc = {0};
	(void)state;

	tx_stream_make(&s, &st, st.seq_start, 20, 1999);
	cc.s = &s;
	struct wn_mpa_collector c = {.buf = room, .cap = sizeof(room), .deliver = collect_deliver,
				     .arg = &cc};
	struct wn_mpa_deframer_cfg cfg = {.stream = st, .seq = st.seq_start};
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &wn_wire_mpa_collect_ops, &c), 0);
	assert_int_equal(feed(&d, s.buf, s.len, 1), 0);
	assert_int_equal(cc.n, 20);

	/* a ULPDU bigger than the buffer is refused, not written out of bounds */
	c.cap = 10;
	cc.n = 0;
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &wn_wire_mpa_collect_ops, &c), 0);
	size_t used = 0;
	int rc = 0;
	rc = wn_wire_mpa_deframer_input(&d, s.buf, s.len, &used);
	bool any_big = false;
	for (unsigned int i = 0; i < s.n; i++)
		any_big = any_big || s.ulen[i] > 10;
	if (any_big)
		assert_int_equal(rc, -EMSGSIZE);
	tx_stream_free(&s);
}

static void
test_crc_error(void **state)
{
	(void)state;
	for (int it = 0; it < 60; it++) {
		struct wn_mpa_stream st = {.seq_start = rnd(), .markers = it & 1, .crc = true};
		struct tx_stream s;
		struct wn_mpa_deframer d;
		struct rx_log l = {0};

		tx_stream_make(&s, &st, st.seq_start, 4, 1500);
		/* flip one bit anywhere in FPDU 2 (ULPDU_Length excluded: it would reframe) */
		size_t start = 0;
		for (unsigned int i = 0; i < s.len; i++)
			if (s.owner[i] == s.len_seq[2]) {
				start = i;
				break;
			}
		size_t w = wn_wire_mpa_fpdu_wire_len(s.len_seq[2], st.seq_start, st.markers,
						s.ulen[2]);
		bool lead = s.len_seq[2] == st.seq_start + (uint32_t)start + 4;
		size_t lo = start + (lead ? 6 : 2);
		size_t pos = lo + rnd() % (start + w - lo);
		s.buf[pos] ^= (uint8_t)(1u << (rnd() % 8));

		struct wn_mpa_deframer_cfg cfg = {.stream = st, .seq = st.seq_start};
		assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &log_ops, &l), 0);
		assert_int_equal(feed(&d, s.buf, s.len, it % 3), -EBADMSG);
		assert_int_equal(wn_mpa_deframer_error(&d), WN_MPA_ERR_CRC);
		assert_int_equal(l.n, 3);
		assert_int_equal(l.verdict[0], WN_MPA_ERR_NONE);
		assert_int_equal(l.verdict[2], WN_MPA_ERR_CRC);
		/* stays failed: nothing further is delivered (RFC 5044 §8) */
		size_t used = 99;
		assert_int_equal(wn_wire_mpa_deframer_input(&d, s.buf, 4, &used), -EBADMSG);
		assert_int_equal(used, 0);
		assert_int_equal(l.n, 3);
		log_free(&l);

		/* the same damage with CRC off goes unnoticed */
		cfg.stream.crc = false;
		assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &log_ops, &l), 0);
		assert_int_equal(feed(&d, s.buf, s.len, 2), 0);
		assert_int_equal(l.n, 4);
		log_free(&l);
		tx_stream_free(&s);
	}
}

static void
test_marker_error(void **state)
{
	struct wn_mpa_stream st = {.seq_start = 0x12345670u, .markers = true, .crc = true};
	struct wn_mpa_deframer d;
	struct rx_log l = {0};
	uint8_t u[1200], out[1400];
	struct iovec iov = {u, sizeof(u)};
	(void)state;

	for (unsigned int i = 0; i < sizeof(u); i++)
		u[i] = (uint8_t)(i + 1);
	uint32_t seq = st.seq_start + 200;
	int w = wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, seq, &st);
	assert_true(w > 0);
	/* first Marker of this FPDU at wire offset 312; FPDUPTR = 312 */
	assert_int_equal(out[312 + 2] << 8 | out[312 + 3], 312);
	struct wn_mpa_deframer_cfg cfg = {.stream = st, .seq = seq, .check_markers = true};

	/* wrong FPDUPTR with a recomputed (valid) CRC: error 3 */
	out[312 + 3] = 0x40;
	wn_crc32c_put_wire(out + w - 4, wn_crc32c(out, (size_t)w - 4));
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &log_ops, &l), 0);
	assert_int_equal(feed(&d, out, (size_t)w, 1), -EPROTO);
	assert_int_equal(wn_mpa_deframer_error(&d), WN_MPA_ERR_MARKER);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.verdict[0], WN_MPA_ERR_MARKER);
	log_free(&l);

	/* low two bits of FPDUPTR are ignored */
	out[312 + 3] = (uint8_t)(312 & 0xFF) | 3;
	wn_crc32c_put_wire(out + w - 4, wn_crc32c(out, (size_t)w - 4));
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &log_ops, &l), 0);
	assert_int_equal(feed(&d, out, (size_t)w, 2), 0);
	assert_int_equal(l.verdict[0], WN_MPA_ERR_NONE);
	log_free(&l);

	/* bad FPDUPTR and bad CRC: the CRC error wins (error 3 needs a valid CRC) */
	out[312 + 3] = 0x40;
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &log_ops, &l), 0);
	assert_int_equal(feed(&d, out, (size_t)w, 2), -EBADMSG);
	log_free(&l);

	/* Marker checking off: contents ignored (RFC 5044 §5.2) */
	wn_crc32c_put_wire(out + w - 4, wn_crc32c(out, (size_t)w - 4));
	cfg.check_markers = false;
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &log_ops, &l), 0);
	assert_int_equal(feed(&d, out, (size_t)w, 0), 0);
	assert_int_equal(l.n, 1);
	assert_memory_equal(l.data[0], u, sizeof(u));
	log_free(&l);

	/* a leading Marker (between FPDUs) must carry FPDUPTR 0 */
	cfg.check_markers = true;
	w = wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, st.seq_start + 512, &st);
	assert_int_equal(out[3], 0);
	out[3] = 8;
	wn_crc32c_put_wire(out + w - 4, wn_crc32c(out, (size_t)w - 4));
	cfg.seq = st.seq_start + 512;
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &log_ops, &l), 0);
	assert_int_equal(feed(&d, out, (size_t)w, 2), -EPROTO);
	log_free(&l);
}

static void
test_marker_between_fpdus(void **state)
{
	/* an FPDU that ends exactly on a Marker boundary: the Marker goes to the next one */
	struct wn_mpa_stream st = {.seq_start = 100, .markers = true, .crc = true};
	uint8_t u[600], out[1200];
	struct iovec iov = {u, 0};
	(void)state;

	memset(u, 0xAB, sizeof(u));
	/* FPDU at offset 4 (after the leading Marker of FPDU 0 ... ) : 2 + L + pad + 4 = 508 */
	iov.iov_len = 502;
	assert_int_equal(wn_wire_mpa_fpdu_wire_len(104, 100, true, 502), 508);
	int w = wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, 104, &st);
	assert_int_equal(w, 508);
	/* next FPDU at 612 = 100 + 512 starts with its own Marker, FPDUPTR 0 */
	iov.iov_len = 10;
	int w2 = wn_wire_mpa_fpdu_build(out + w, sizeof(out) - (size_t)w, &iov, 1, 612, &st);
	assert_int_equal(w2, 4 + 2 + 10 + 0 + 4);
	assert_int_equal(out[w + 2], 0);
	assert_int_equal(out[w + 3], 0);
	assert_int_equal(out[w + 4], 0);
	assert_int_equal(out[w + 5], 10);
	/* its CRC covers the Marker */
	assert_int_equal(wn_crc32c_get_wire(out + w + w2 - 4),
			 wn_crc32c(out + w, (size_t)w2 - 4));

	/* a Marker between PAD and CRC belongs to the FPDU (FPDUPTR != 0) */
	iov.iov_len = 504; /* 2 + 504 + 2 pad = 508 octets before the CRC */
	w = wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, 104, &st);
	assert_int_equal(w, 508 + 4 + 4);
	assert_int_equal(out[508 + 2] << 8 | out[508 + 3], 508);
	assert_int_equal(wn_crc32c_get_wire(out + w - 4), wn_crc32c(out, (size_t)w - 4));
}

static void
test_marker_locate(void **state)
{
	(void)state;
	for (int it = 0; it < 100; it++) {
		struct wn_mpa_stream st = {.seq_start = rnd(), .markers = true, .crc = true};
		uint32_t seq = st.seq_start + ((rnd() % 3000) & ~3u);
		struct tx_stream s;
		struct wn_mpa_marker_hit hits[16];

		if (it % 4 == 0)
			st.seq_start = 0xFFFFFFFFu - (rnd() % 2000);
		seq = st.seq_start + ((rnd() % 3000) & ~3u);
		tx_stream_make(&s, &st, seq, 6, 1400);
		size_t off = rnd() % s.len;
		size_t len = rnd() % (s.len - off + 1);
		uint32_t seg_seq = seq + (uint32_t)off;
		unsigned int n = wn_wire_mpa_marker_locate(seg_seq, s.buf + off, len, st.seq_start,
							   hits, 16);
		/* expected: every Marker position wholly inside the window */
		unsigned int expect = 0;
		for (size_t k = 0; k + 4 <= len; k++) {
			uint32_t q = seg_seq + (uint32_t)k;
			if (((q - st.seq_start) & 511) != 0)
				continue;
			assert_true(expect < 16);
			assert_int_equal(hits[expect].marker_seq, q);
			/* it points at the ULPDU_Length of the FPDU owning the Marker */
			assert_int_equal(hits[expect].fpdu_seq, s.owner[off + k]);
			expect++;
		}
		assert_int_equal(n, expect);
		tx_stream_free(&s);
	}

	/* counts beyond @max, nothing stored when max is 0 */
	uint8_t z[2048] = {0};
	assert_int_equal(wn_wire_mpa_marker_locate(0, z, sizeof(z), 0, NULL, 0), 4);
	struct wn_mpa_marker_hit one;
	assert_int_equal(wn_wire_mpa_marker_locate(2, z, sizeof(z), 0, &one, 1), 3);
	assert_int_equal(one.marker_seq, 512);
	assert_int_equal(one.fpdu_seq, 516);
	/* a Marker cut by the segment end is not reported */
	assert_int_equal(wn_wire_mpa_marker_locate(510, z, 5, 0, &one, 1), 0);
	assert_int_equal(wn_wire_mpa_marker_locate(510, z, 6, 0, &one, 1), 1);
}

static void
test_hdr_len_callback(void **state)
{
	/* tagged (14) and untagged (18) headers picked from the first octet */
	struct wn_mpa_stream st = {.seq_start = 0, .markers = false, .crc = true};
	uint8_t t[100], u[30], out[300];
	struct wn_mpa_deframer d;
	struct rx_log l = {0};
	struct iovec iov;
	(void)state;

	memset(t, 0x11, sizeof(t));
	t[0] = 0xC1;
	memset(u, 0x22, sizeof(u));
	u[0] = 0x41;
	iov.iov_base = t;
	iov.iov_len = sizeof(t);
	int a = wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, 0, &st);
	iov.iov_base = u;
	iov.iov_len = sizeof(u);
	int b = wn_wire_mpa_fpdu_build(out + a, sizeof(out) - (size_t)a, &iov, 1, (uint32_t)a, &st);
	/* a ULPDU shorter than any header: 1 octet */
	iov.iov_len = 1;
	int c = wn_wire_mpa_fpdu_build(out + a + b, sizeof(out) - (size_t)(a + b), &iov, 1,
				  (uint32_t)(a + b), &st);

	struct hdr_seen {
		int n;
		uint16_t len[3];
	} seen = {0};
	struct wn_mpa_deframer_cfg cfg = {.stream = st, .seq = 0};
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &log_ops, &l), 0);
	for (int i = 0; i < a + b + c; i++) {
		assert_int_equal(wn_wire_mpa_deframer_input(&d, out + i, 1, NULL), 0);
		if (i == a - 1 || i == a + b - 1 || i == a + b + c - 1)
			seen.len[seen.n++] = (uint16_t)l.n;
	}
	assert_int_equal(l.n, 3);
	assert_memory_equal(l.data[0], t, sizeof(t));
	assert_memory_equal(l.data[1], u, sizeof(u));
	assert_memory_equal(l.data[2], u, 1);
	/* ULPDUs complete exactly at their last octet (CRC), not later */
	assert_int_equal(seen.len[0], 1);
	assert_int_equal(seen.len[1], 2);
	assert_int_equal(seen.len[2], 3);
	log_free(&l);

	/* init argument checks */
	cfg.hdr_len = WN_MPA_RX_HDR_MAX + 1;
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &log_ops, &l), -EINVAL);
	cfg.hdr_len = 0;
	struct wn_mpa_rx_ops bad = log_ops;
	bad.end = NULL;
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &bad, &l), -EINVAL);
}

static int
stop_payload(void *arg, const uint8_t *p, size_t len, uint32_t off)
{
	int *calls = arg;

	(void)p;
	(void)len;
	(void)off;
	(*calls)++;
	return -EAGAIN;
}

static int
ok_header(void *arg, const struct wn_mpa_rx_hdr *h)
{
	(void)arg;
	(void)h;
	return 0;
}

static int
ok_end(void *arg, const struct wn_mpa_rx_hdr *h, enum wn_mpa_err v)
{
	(void)h;
	(void)v;
	(*(int *)arg) += 100;
	return 0;
}

static void
test_callback_stop(void **state)
{
	/* a callback's negative value stops input; the rest can be fed again */
	static const struct wn_mpa_rx_ops ops = {
		.header = ok_header, .payload = stop_payload, .end = ok_end};
	struct wn_mpa_deframer_cfg cfg = {.stream = {.seq_start = 0, .markers = true,
						     .crc = true},
					  .seq = 0, .hdr_len = 18};
	struct wn_mpa_deframer d;
	int calls = 0;
	size_t used = 0;
	(void)state;

	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &ops, &calls), 0);
	int rc = wn_wire_mpa_deframer_input(&d, fig5, sizeof(fig5), &used);
	assert_int_equal(rc, -EAGAIN);
	assert_int_equal(calls, 1);
	assert_int_equal(used, 4 + 2 + 42); /* Marker, length, whole ULPDU */
	assert_int_equal(wn_wire_mpa_deframer_input(&d, fig5 + used, sizeof(fig5) - used, &used),
			 0);
	assert_int_equal(calls, 101);
}


/* ---- real siw traffic (test/data/siw) --------------------------------------------------- */

static const char *src_root;

struct flow {
	uint16_t sport, dport;
	uint32_t next;
	bool synced;
	uint8_t *data;
	size_t len, cap;
};

#define MAX_FLOWS 8

static void
flow_add(struct flow *f, uint32_t seq, bool syn, const uint8_t *p, size_t n)
{
	if (syn) {
		f->next = seq + 1;
		f->synced = true;
		return;
	}
	if (!f->synced) {
		f->next = seq;
		f->synced = true;
	}
	uint32_t skip = f->next - seq; /* retransmitted prefix */
	if ((int32_t)skip < 0 || skip >= n)
		return; /* gap or pure retransmission (none in these captures) */
	p += skip;
	n -= skip;
	if (f->len + n > f->cap) {
		f->cap = (f->len + n) * 2;
		f->data = realloc(f->data, f->cap);
		assert_non_null(f->data);
	}
	memcpy(f->data + f->len, p, n);
	f->len += n;
	f->next += (uint32_t)n;
}

/* Minimal pcap (Ethernet, IPv4/IPv6, TCP) reader: ordered payload per direction. */
static unsigned int
load_flows(const char *name, struct flow *flows)
{
	char path[512];
	unsigned int nf = 0;

	snprintf(path, sizeof(path), "%s/test/data/siw/%s", src_root, name);
	FILE *fp = fopen(path, "rb");
	if (fp == NULL)
		fail_msg("%s: not found in %s/test/data/siw", name, src_root);
	static uint8_t file[1 << 20];
	size_t len = fread(file, 1, sizeof(file), fp);
	fclose(fp);
	assert_true(len > 24 && len < sizeof(file));
	assert_int_equal(file[0] | file[1] << 8 | file[2] << 16 | (uint32_t)file[3] << 24,
			 0xa1b2c3d4u);
	for (size_t off = 24; off + 16 <= len;) {
		const uint8_t *r = file + off;
		uint32_t incl = r[8] | r[9] << 8 | r[10] << 16 | (uint32_t)r[11] << 24;
		const uint8_t *e = r + 16;
		off += 16 + incl;
		assert_true(off <= len);
		if (incl < 14)
			continue;
		size_t l3 = 14;
		uint16_t et = (uint16_t)(e[12] << 8 | e[13]);
		if (et == 0x8100) {
			et = (uint16_t)(e[16] << 8 | e[17]);
			l3 = 18;
		}
		const uint8_t *ip = e + l3;
		size_t iph, plen;
		if (et == 0x0800) {
			if (ip[9] != 6)
				continue;
			iph = (size_t)(ip[0] & 15) * 4;
			plen = (size_t)(ip[2] << 8 | ip[3]) - iph;
		} else if (et == 0x86DD) {
			if (ip[6] != 6)
				continue;
			iph = 40;
			plen = (size_t)(ip[4] << 8 | ip[5]);
		} else {
			continue;
		}
		const uint8_t *tcp = ip + iph;
		size_t th = (size_t)(tcp[12] >> 4) * 4;
		uint16_t sp = (uint16_t)(tcp[0] << 8 | tcp[1]);
		uint16_t dp = (uint16_t)(tcp[2] << 8 | tcp[3]);
		uint32_t seq = (uint32_t)tcp[4] << 24 | (uint32_t)tcp[5] << 16 |
			       (uint32_t)tcp[6] << 8 | tcp[7];
		struct flow *f = NULL;
		for (unsigned int i = 0; i < nf; i++)
			if (flows[i].sport == sp && flows[i].dport == dp)
				f = &flows[i];
		if (f == NULL) {
			assert_true(nf < MAX_FLOWS);
			f = &flows[nf++];
			memset(f, 0, sizeof(*f));
			f->sport = sp;
			f->dport = dp;
		}
		flow_add(f, seq, (tcp[13] & 0x02) != 0, tcp + th, plen - th);
	}
	return nf;
}

struct count_ctx {
	unsigned int ok, bad;
};

static int
cnt_header(void *arg, const struct wn_mpa_rx_hdr *h)
{
	(void)arg;
	/* every siw ULPDU starts with DDP control: DV = 1, RV = 1 (RFC 5041 §4.1, RFC 5040 §4.1) */
	if (h->hdr_len >= 2) {
		assert_int_equal(h->hdr[0] & 0x03, 1);
		assert_int_equal(h->hdr[1] >> 6, 1);
	}
	return 0;
}

static int
cnt_payload(void *arg, const uint8_t *p, size_t len, uint32_t off)
{
	(void)arg;
	(void)p;
	(void)len;
	(void)off;
	return 0;
}

static int
cnt_end(void *arg, const struct wn_mpa_rx_hdr *h, enum wn_mpa_err v)
{
	struct count_ctx *c = arg;

	(void)h;
	if (v == WN_MPA_ERR_NONE)
		c->ok++;
	else
		c->bad++;
	return 0;
}

static const struct wn_mpa_rx_ops cnt_ops = {
	.header = cnt_header, .payload = cnt_payload, .end = cnt_end};

/* Deframe one direction after its startup frame; @return FPDUs with a good verdict. */
static unsigned int
deframe_flow(const struct flow *f, size_t start, bool crc, bool corrupt)
{
	struct wn_mpa_deframer_cfg cfg = {.stream = {.seq_start = 1000, .markers = false,
						     .crc = crc},
					  .seq = 1000, .check_markers = true, .hdr_len = 2};
	struct count_ctx c = {0};
	struct wn_mpa_deframer d;
	uint8_t *copy = malloc(f->len - start + 1);

	assert_non_null(copy);
	memcpy(copy, f->data + start, f->len - start);
	if (corrupt)
		copy[(f->len - start) / 2] ^= 0x01;
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &cnt_ops, &c), 0);
	int rc = feed(&d, copy, f->len - start, 1);
	free(copy);
	if (corrupt) {
		assert_int_equal(rc, -EBADMSG);
		assert_int_equal(c.bad, 1);
		return c.ok;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(c.bad, 0);
	/* the capture ends on an FPDU boundary: every octet was part of a good FPDU */
	assert_int_equal(d.state, WN_MPA_RX_LEN);
	assert_int_equal(d.got, 0);
	return c.ok;
}

static void
test_siw_captures(void **state)
{
	static const char *const files[] = {"rping-crc.pcap", "rping-p2p.pcap",
					    "rping-mpav1.pcap", "perftest-send-lat.pcap"};
	unsigned int checked = 0;
	(void)state;

	if (src_root == NULL)
		fail_msg("usage: test_wire_fpdu SOURCE_ROOT (the captures are in test/data/siw)");
	for (unsigned int k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		struct flow flows[MAX_FLOWS];
		unsigned int nf = load_flows(files[k], flows);

		for (unsigned int i = 0; i < nf; i++) {
			struct flow *ini = &flows[i], *rsp = NULL;
			struct wn_mpa_frame req, rep;
			size_t rq_len = 0, rp_len = 0;

			if (ini->len < 16 || memcmp(ini->data, WN_MPA_KEY_REQ, 16) != 0)
				continue;
			for (unsigned int j = 0; j < nf; j++)
				if (flows[j].sport == ini->dport && flows[j].dport == ini->sport)
					rsp = &flows[j];
			assert_non_null(rsp);
			assert_int_equal(
				wn_wire_mpa_frame_decode(ini->data, ini->len, NULL, &req, &rq_len),
				WN_MPA_FRAME_OK);
			assert_int_equal(
				wn_wire_mpa_frame_decode(rsp->data, rsp->len, NULL, &rep, &rp_len),
				WN_MPA_FRAME_OK);
			assert_int_equal(req.type, WN_MPA_FRAME_REQUEST);
			assert_int_equal(rep.type, WN_MPA_FRAME_REPLY);
			assert_false(rep.rejected);
			assert_false(req.markers || rep.markers); /* siw never uses Markers */
			if (strcmp(files[k], "rping-mpav1.pcap") == 0) {
				assert_int_equal(req.rev, 1);
				assert_false(req.enhanced);
			} else {
				assert_int_equal(req.rev, 2);
				assert_true(req.enhanced && rep.enhanced);
			}
			if (strcmp(files[k], "rping-p2p.pcap") == 0) {
				/* siw offers Write+Read, the responder picks Write */
				assert_true(req.p2p && rep.p2p);
				assert_int_equal(req.rtr, WN_MPA_RTR_WRITE | WN_MPA_RTR_READ);
				assert_int_equal(rep.rtr, WN_MPA_RTR_WRITE);
				struct wn_mpa_caps me = {.ird = 1, .ord = 1, .p2p = true,
							 .rtr = WN_MPA_RTR_ALL};
				struct wn_mpa_neg neg;
				assert_int_equal(wn_wire_mpa_negotiate_initiator(&me, &rep, &neg),
						 WN_MPA_ERR_NONE);
				assert_int_equal(neg.rtr, WN_MPA_RTR_WRITE);
			}
			/* RFC 5044 §7.1.1: CRC on if either side asked */
			bool crc = req.crc || rep.crc;
			if (strcmp(files[k], "rping-crc.pcap") == 0)
				assert_true(crc);
			unsigned int a = deframe_flow(ini, rq_len, crc, false);
			unsigned int b = deframe_flow(rsp, rp_len, crc, false);
			assert_true(a + b > 0);
			if (crc && a > 1)
				deframe_flow(ini, rq_len, crc, true);
			checked++;
		}
		for (unsigned int i = 0; i < nf; i++)
			free(flows[i].data);
	}
	assert_true(checked >= 4);
}

/* ---- wn_wire_mpa_gather_ops: whole ULPDUs, handed over with the CRC verdict ---- */

struct gather_seen {
	unsigned int n;
	uint16_t len;
	enum wn_mpa_err verdict;
	uint8_t first;
};

static int
gather_done(void *arg, const uint8_t *ulpdu, uint16_t len, enum wn_mpa_err verdict)
{
	struct gather_seen *g = arg;

	g->n++;
	g->len = len;
	g->verdict = verdict;
	g->first = ulpdu[0];
	return 0;
}

static void
test_gather_ops(void **state)
{
	struct wn_mpa_stream st = { .seq_start = 1000, .markers = true, .crc = true };
	struct wn_mpa_deframer_cfg cfg = { .stream = st, .seq = 1000, .check_markers = true,
					   .hdr_len = 2 };
	static uint8_t ulpdu[3000], out[4096], buf[WN_MPA_ULPDU_MAX];
	struct gather_seen seen = { 0 };
	struct wn_mpa_gather g = { .buf = buf, .done = gather_done, .arg = &seen };
	struct iovec iov = { ulpdu, sizeof(ulpdu) };
	struct wn_mpa_deframer d;
	int w;

	(void)state;
	for (size_t i = 0; i < sizeof(ulpdu); i++)
		ulpdu[i] = (uint8_t)(i * 7 + 3);
	w = wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, 1000, &st);
	assert_true(w > (int)sizeof(ulpdu));
	/* one octet at a time: the ULPDU arrives whole, Markers removed, after its CRC */
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &wn_wire_mpa_gather_ops, &g), 0);
	for (int i = 0; i < w; i++) {
		assert_int_equal(seen.n, 0);
		assert_int_equal(wn_wire_mpa_deframer_input(&d, out + i, 1, NULL), 0);
	}
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.len, sizeof(ulpdu));
	assert_int_equal(seen.verdict, WN_MPA_ERR_NONE);
	assert_memory_equal(buf, ulpdu, sizeof(ulpdu));
	/* a bad CRC is the verdict of the (gathered, unusable) ULPDU */
	out[w - 1] ^= 1;
	memset(&seen, 0, sizeof(seen));
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &wn_wire_mpa_gather_ops, &g), 0);
	assert_int_equal(wn_wire_mpa_deframer_input(&d, out, (size_t)w, NULL), -EBADMSG);
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.verdict, WN_MPA_ERR_CRC);
	/* no buffer: input refused */
	g.buf = NULL;
	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &wn_wire_mpa_gather_ops, &g), 0);
	assert_int_equal(wn_wire_mpa_deframer_input(&d, out, (size_t)w, NULL), -ENOMEM);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc5044_figures),
		cmocka_unit_test(test_gather_ops),
		cmocka_unit_test(test_extra_vectors),
		cmocka_unit_test(test_mulpdu),
		cmocka_unit_test(test_build_errors),
		cmocka_unit_test(test_gather_equals_build),
		cmocka_unit_test(test_deframe_figures),
		cmocka_unit_test(test_roundtrip_random),
		cmocka_unit_test(test_view_random),
		cmocka_unit_test(test_collector),
		cmocka_unit_test(test_segment_fpdus),
		cmocka_unit_test(test_crc_error),
		cmocka_unit_test(test_marker_error),
		cmocka_unit_test(test_marker_between_fpdus),
		cmocka_unit_test(test_marker_locate),
		cmocka_unit_test(test_hdr_len_callback),
		cmocka_unit_test(test_callback_stop),
		cmocka_unit_test(test_siw_captures),
	};
	src_root = argc > 1 ? argv[1] : NULL;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
