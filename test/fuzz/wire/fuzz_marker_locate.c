/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the Marker locator: octets 0-3 segment sequence
 * number, 4-7 SeqStart, the rest the segment. Every hit must be a 512-octet
 * boundary inside the segment and point where its FPDUPTR says.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_wire_mpa.h"

struct seg_ctx {
	bool in;
	uint32_t next;
	uint16_t len;
	unsigned int ends;
};

static int
seg_header(void *arg, const struct wn_mpa_rx_hdr *h)
{
	struct seg_ctx *c = arg;

	if (c->in || h->hdr_len > h->ulpdu_len)
		abort();
	c->in = true;
	c->next = h->hdr_len;
	c->len = h->ulpdu_len;
	return 0;
}

static int
seg_payload(void *arg, const uint8_t *p, size_t len, uint32_t off)
{
	struct seg_ctx *c = arg;
	volatile uint8_t x = 0;

	if (!c->in || off != c->next || off + len > c->len)
		abort();
	for (size_t i = 0; i < len; i++)
		x ^= p[i];
	(void)x;
	c->next += (uint32_t)len;
	return 0;
}

static int
seg_end(void *arg, const struct wn_mpa_rx_hdr *h, enum wn_mpa_err v)
{
	struct seg_ctx *c = arg;

	(void)v;
	if (!c->in || c->next != h->ulpdu_len)
		abort();
	c->in = false;
	c->ends++;
	return 0;
}

static const struct wn_mpa_rx_ops seg_ops = {
	.header = seg_header, .payload = seg_payload, .end = seg_end};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wn_mpa_marker_hit hits[8];
	uint32_t seg_seq, seq_start;

	if (size < 8)
		return 0;
	memcpy(&seg_seq, data, 4);
	memcpy(&seq_start, data + 4, 4);
	data += 8;
	size -= 8;
	/* an exactly sized copy so that any over-read is caught */
	uint8_t *seg = malloc(size ? size : 1);
	if (seg == NULL)
		return 0;
	memcpy(seg, data, size);
	unsigned int n = wn_wire_mpa_marker_locate(seg_seq, seg, size, seq_start, hits, 8);
	if (n > size / 4 + 1)
		abort();
	for (unsigned int i = 0; i < n && i < 8; i++) {
		uint32_t off = hits[i].marker_seq - seg_seq;
		if (off + 4 > size || ((hits[i].marker_seq - seq_start) & 511) != 0)
			abort();
		uint16_t ptr = (uint16_t)((seg[off + 2] << 8 | seg[off + 3]) & 0xFFFC);
		if (ptr != hits[i].fpduptr)
			abort();
		if (hits[i].fpdu_seq != (ptr ? hits[i].marker_seq - ptr : hits[i].marker_seq + 4))
			abort();
	}
	/* out-of-order deframing of the same segment (Markers on; or aligned, off) */
	for (int mode = 0; mode < 2; mode++) {
		struct wn_mpa_deframer_cfg cfg = {
			.stream = {.seq_start = seq_start, .markers = mode == 0,
				   .crc = (seg_seq & 1) != 0},
			.check_markers = true, .hdr_len = (uint16_t)(seq_start % 40)};
		struct seg_ctx c = {0};
		uint32_t first = 0, end = 0;
		int r = wn_wire_mpa_segment_fpdus(seg_seq, seg, size, &cfg, mode == 1, &seg_ops, &c,
					     &first, &end);
		if (r > 0) {
			if (c.ends != (unsigned int)r || c.in)
				abort();
			if (first - seg_seq > size || end - seg_seq > size || end - first > size)
				abort();
		}
	}
	free(seg);
	return 0;
}
