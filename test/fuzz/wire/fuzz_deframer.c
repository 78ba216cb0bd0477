/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the FPDU deframer. Octet 0: bit 0 Markers, bit 1 CRC,
 * bit 2 FPDUPTR checking, bits 3-4 header-size mode, bit 7 round-trip mode.
 * Octets 1-4 SeqStart, 5-6 start offset, 7 chunking seed, the rest is data.
 *
 * Raw mode feeds the data as a TCP stream in chunks chosen by the input and
 * checks event ordering and bounds. Round-trip mode cuts the data into
 * ULPDUs, frames them and requires the deframer to return them unchanged.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "wn_wire_mpa.h"

#define MAX_ULPDUS 32

struct ctx {
	unsigned int mode;
	bool in_fpdu;
	uint32_t next_off;
	uint16_t len;
	unsigned int n;
	/* round trip: expected ULPDUs */
	const uint8_t *exp[MAX_ULPDUS];
	uint16_t exp_len[MAX_ULPDUS];
	unsigned int exp_n;
	uint8_t *got;
	bool roundtrip;
};

static void
check(int cond)
{
	if (!cond)
		abort();
}

static size_t
hdr_len(void *arg, const uint8_t *hdr, size_t have, uint16_t ulpdu_len)
{
	struct ctx *c = arg;

	(void)ulpdu_len;
	switch (c->mode) {
	case 1:
		return have < 1 ? 1 : (hdr[0] & 0x80) ? 14 : 18;
	case 2:
		return have < 2 ? 2 : (size_t)hdr[1]; /* may exceed the maximum: clipped */
	default:
		return 0;
	}
}

static int
on_header(void *arg, const struct wn_mpa_rx_hdr *h)
{
	struct ctx *c = arg;

	check(!c->in_fpdu);
	check(h->hdr_len <= h->ulpdu_len && h->hdr_len <= WN_MPA_RX_HDR_MAX);
	c->in_fpdu = true;
	c->next_off = h->hdr_len;
	c->len = h->ulpdu_len;
	if (c->roundtrip) {
		check(c->n < c->exp_n && h->ulpdu_len == c->exp_len[c->n]);
		check(memcmp(h->hdr, c->exp[c->n], h->hdr_len) == 0);
	}
	return 0;
}

static int
on_payload(void *arg, const uint8_t *p, size_t len, uint32_t off)
{
	struct ctx *c = arg;

	check(c->in_fpdu && off == c->next_off && off + len <= c->len && len > 0);
	if (c->roundtrip)
		check(memcmp(p, c->exp[c->n] + off, len) == 0);
	else
		memcpy(c->got, p, len); /* touch every octet for ASan */
	c->next_off += (uint32_t)len;
	return 0;
}

static int
on_end(void *arg, const struct wn_mpa_rx_hdr *h, enum wn_mpa_err verdict)
{
	struct ctx *c = arg;

	check(c->in_fpdu && c->next_off == h->ulpdu_len);
	check(verdict == WN_MPA_ERR_NONE || verdict == WN_MPA_ERR_CRC ||
	      verdict == WN_MPA_ERR_MARKER);
	if (c->roundtrip)
		check(verdict == WN_MPA_ERR_NONE);
	c->in_fpdu = false;
	c->n++;
	return 0;
}

static const struct wn_mpa_rx_ops ops = {
	.hdr_len = hdr_len, .header = on_header, .payload = on_payload, .end = on_end};

static int
feed(struct wn_mpa_deframer *d, const uint8_t *buf, size_t len, uint32_t seed)
{
	size_t i = 0;

	while (i < len) {
		seed = seed * 1103515245u + 12345u;
		size_t k = (seed >> 16) % 8 == 0 ? 1 + (seed >> 8) % 2000 : 1 + (seed >> 8) % 9;
		if (k > len - i)
			k = len - i;
		uint8_t *chunk = malloc(k);
		if (chunk == NULL)
			abort();
		memcpy(chunk, buf + i, k);
		size_t used = 0;
		int rc = wn_wire_mpa_deframer_input(d, chunk, k, &used);
		free(chunk);
		check(used <= k);
		if (rc < 0) {
			check(rc == -EBADMSG || rc == -EPROTO);
			check(wn_mpa_deframer_error(d) != WN_MPA_ERR_NONE);
			return rc;
		}
		check(used == k);
		i += k;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t scratch[65536];
	struct wn_mpa_deframer_cfg cfg = {0};
	struct wn_mpa_deframer d;
	struct ctx c = {0};

	if (size < 8)
		return 0;
	cfg.stream.markers = data[0] & 1;
	cfg.stream.crc = (data[0] & 2) != 0;
	cfg.check_markers = (data[0] & 4) != 0;
	c.mode = (data[0] >> 3) & 3;
	c.roundtrip = (data[0] & 0x80) != 0;
	cfg.hdr_len = c.mode == 3 ? 18 : 0;
	cfg.stream.seq_start = (uint32_t)data[1] << 24 | (uint32_t)data[2] << 16 |
			       (uint32_t)data[3] << 8 | data[4];
	uint32_t off = (uint32_t)data[5] << 8 | data[6];
	if (cfg.stream.markers)
		off &= ~3u;
	cfg.seq = cfg.stream.seq_start + off;
	uint32_t seed = data[7];
	data += 8;
	size -= 8;
	c.got = scratch;
	const struct wn_mpa_rx_ops *o = &ops;
	struct wn_mpa_rx_ops fixed = ops;
	if (c.mode == 3) {
		fixed.hdr_len = NULL;
		o = &fixed;
	}

	if (!c.roundtrip) {
		check(wn_wire_mpa_deframer_init(&d, &cfg, o, &c) == 0);
		feed(&d, data, size, seed);
		return 0;
	}

	/* round trip: ULPDU sizes from the data itself */
	size_t pos = 0, wire = 0;
	while (pos + 2 <= size && c.exp_n < MAX_ULPDUS) {
		size_t l = ((size_t)data[pos] << 8 | data[pos + 1]) % 3000;
		pos += 2;
		if (l > size - pos)
			l = size - pos;
		c.exp[c.exp_n] = data + pos;
		c.exp_len[c.exp_n] = (uint16_t)l;
		c.exp_n++;
		pos += l;
		wire += wn_wire_mpa_fpdu_wire_len(0, 0, cfg.stream.markers, l) + 4;
	}
	uint8_t *stream = malloc(wire + 1);
	if (stream == NULL)
		return 0;
	size_t slen = 0;
	for (unsigned int i = 0; i < c.exp_n; i++) {
		struct iovec iov = {(void *)(uintptr_t)c.exp[i], c.exp_len[i]};
		uint32_t seq = cfg.seq + (uint32_t)slen;
		int w = wn_wire_mpa_fpdu_build(stream + slen, wire + 1 - slen, &iov, 1, seq,
					       &cfg.stream);
		check(w > 0 && (size_t)w == wn_wire_mpa_fpdu_wire_len(seq, cfg.stream.seq_start,
								  cfg.stream.markers, c.exp_len[i]));
		/* the zero-copy gather form must describe the same octets */
		static struct iovec sg[64];
		static uint8_t scratch[WN_MPA_GATHER_SCRATCH];
		int n = wn_wire_mpa_fpdu_gather(sg, 64, scratch, sizeof(scratch), &iov, 1, seq,
					   &cfg.stream);
		check(n > 0);
		size_t at = slen;
		for (int k = 0; k < n; k++) {
			check(at + sg[k].iov_len <= slen + (size_t)w);
			check(memcmp(stream + at, sg[k].iov_base, sg[k].iov_len) == 0);
			at += sg[k].iov_len;
		}
		check(at == slen + (size_t)w);
		slen += (size_t)w;
	}
	check(wn_wire_mpa_deframer_init(&d, &cfg, o, &c) == 0);
	check(feed(&d, stream, slen, seed) == 0);
	check(c.n == c.exp_n && !c.in_fpdu);
	check(wn_mpa_deframer_seq(&d) == cfg.seq + (uint32_t)slen);
	free(stream);
	return 0;
}
