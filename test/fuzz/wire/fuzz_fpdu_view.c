/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for wn_wire_mpa_fpdu_view(), the walk over whole FPDUs in place, against the
 * deframer: both must find the same FPDUs (ULPDU octets, lengths, verdicts) in the same
 * octets, whatever they are. Octet 0: bit 0 Markers, bit 1 CRC, bit 2 FPDUPTR checking.
 * Octets 1-4 SeqStart, 5-6 start offset, 7 where to cut the input into pieces, the rest is
 * the stream.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "wn_wire_mpa.h"

#define MAX_FPDUS 64

/* What the deframer delivered. */
struct log {
	unsigned int n;
	uint8_t *ulpdu[MAX_FPDUS];
	uint16_t len[MAX_FPDUS];
	uint32_t fpdu_seq[MAX_FPDUS];
	enum wn_mpa_err verdict[MAX_FPDUS];
	uint32_t end_seq[MAX_FPDUS]; /* the deframer's sequence number after it */
	struct wn_mpa_deframer *d;
};

static void
check(int cond)
{
	if (!cond)
		abort();
}

static int
on_header(void *arg, const struct wn_mpa_rx_hdr *h)
{
	struct log *l = arg;

	if (l->n == MAX_FPDUS)
		return -ENOSPC;
	l->ulpdu[l->n] = malloc(h->ulpdu_len + 1u);
	check(l->ulpdu[l->n] != NULL);
	memcpy(l->ulpdu[l->n], h->hdr, h->hdr_len);
	l->len[l->n] = h->ulpdu_len;
	l->fpdu_seq[l->n] = h->fpdu_seq;
	return 0;
}

static int
on_payload(void *arg, const uint8_t *p, size_t len, uint32_t off)
{
	struct log *l = arg;

	memcpy(l->ulpdu[l->n] + off, p, len);
	return 0;
}

static int
on_end(void *arg, const struct wn_mpa_rx_hdr *h, enum wn_mpa_err verdict)
{
	struct log *l = arg;

	(void)h;
	l->verdict[l->n] = verdict;
	l->n++;
	return 0;
}

static const struct wn_mpa_rx_ops ops = {
	.header = on_header, .payload = on_payload, .end = on_end};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wn_mpa_deframer_cfg cfg = {0};
	struct wn_mpa_deframer d;
	struct wn_wire_mpa_fpdu_view f;
	struct iovec in[4], rest[4];
	struct log l = {0};
	uint8_t *copy;
	size_t off = 0, cut1, cut2, used = 0;
	unsigned int i;
	uint32_t seq;

	if (size < 8)
		return 0;
	cfg.stream.markers = data[0] & 1;
	cfg.stream.crc = (data[0] & 2) != 0;
	cfg.check_markers = (data[0] & 4) != 0;
	cfg.hdr_len = 0;
	cfg.stream.seq_start = (uint32_t)data[1] << 24 | (uint32_t)data[2] << 16 |
			       (uint32_t)data[3] << 8 | data[4];
	seq = (uint32_t)data[5] << 8 | data[6];
	if (cfg.stream.markers)
		seq &= ~3u;
	seq += cfg.stream.seq_start;
	cfg.seq = seq;
	cut1 = data[7] % 16 == 0 ? 0 : (size_t)data[7] * 7;
	data += 8;
	size -= 8;
	/* exact-size heap copy, so a read past the stream is an ASan report */
	copy = malloc(size + 1);
	check(copy != NULL);
	memcpy(copy, data, size);
	check(wn_wire_mpa_deframer_init(&d, &cfg, &ops, &l) == 0);
	(void)wn_wire_mpa_deframer_input(&d, copy, size, &used);

	/* the same octets in three pieces (some empty) */
	cut1 = cut1 < size ? cut1 : size;
	cut2 = cut1 + (size - cut1) / 2;
	in[0] = (struct iovec){copy, cut1};
	in[1] = (struct iovec){copy + cut1, cut2 - cut1};
	in[2] = (struct iovec){copy + cut2, size - cut2};
	for (i = 0;; i++) {
		size_t skip = off, got = 0;
		unsigned int nr = 0;
		int rc;

		for (unsigned int j = 0; j < 3; j++) {
			if (skip >= in[j].iov_len) {
				skip -= in[j].iov_len;
				continue;
			}
			rest[nr].iov_base = (uint8_t *)in[j].iov_base + skip;
			rest[nr++].iov_len = in[j].iov_len - skip;
			skip = 0;
		}
		rc = wn_wire_mpa_fpdu_view(rest, nr, seq + (uint32_t)off, &cfg, &f);
		check(rc == 0 || rc == 1 || rc == -E2BIG);
		if (rc != 1 || i == MAX_FPDUS) {
			/* the deframer found no more whole FPDUs either (-E2BIG: it may have) */
			check(rc == -E2BIG || i == MAX_FPDUS || i == l.n);
			break;
		}
		check(i < l.n);
		check(f.ulpdu_len == l.len[i] && f.fpdu_seq == l.fpdu_seq[i]);
		check(f.verdict == l.verdict[i]);
		for (unsigned int k = 0; k < f.n; k++) {
			check((uint8_t *)f.v[k].iov_base >= copy &&
			      (uint8_t *)f.v[k].iov_base + f.v[k].iov_len <= copy + size);
			check(got + f.v[k].iov_len <= f.ulpdu_len);
			check(memcmp(f.v[k].iov_base, l.ulpdu[i] + got, f.v[k].iov_len) == 0);
			got += f.v[k].iov_len;
		}
		check(got == f.ulpdu_len);
		off += f.wire_len;
		check(off <= size);
		if (f.verdict != WN_MPA_ERR_NONE) {
			check(i + 1 == l.n); /* the deframer stops after an error (RFC 5044 §8) */
			break;
		}
	}
	for (i = 0; i < MAX_FPDUS; i++)
		free(l.ulpdu[i]); /* a partial last one was allocated too */
	free(copy);
	return 0;
}
