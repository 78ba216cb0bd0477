/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Mode wire_bw: MPA FPDU framer and deframer throughput on one lcore, next to
 * memcpy and isa-l CRC32c measured in the same run, so the cost of framing is
 * read as a ratio to the memory system rather than as an absolute number.
 *
 * framer:   ULPDU (header iovec + payload iovec) -> FPDU (Markers, PAD, CRC)
 * framer (gather): the zero-copy form: a gather list referencing the ULPDU,
 *           so only the CRC reads the payload
 * deframer: ordered stream in one-MSS chunks -> events, payload placed with
 *           memcpy into a destination buffer (what receive placement does)
 * Throughput counts ULPDU octets.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "wn_wire.h"

#include "perf.h"

/** Octets processed per case when --iters is not given. */
#define WIRE_BW_DEFAULT_BYTES (256ull << 20)
/** Deframer input chunk: the payload of one 1500-MTU TCP segment with timestamps. */
#define WIRE_BW_CHUNK 1448
/** Prebuilt receive stream size (re-fed as often as needed). */
#define WIRE_BW_STREAM_BYTES (4u << 20)
/** Each figure is the best of this many runs (the machine is shared and noisy). */
#define WIRE_BW_REPS 5
/** DDP untagged header gathered before payload events. */
#define WIRE_BW_HDR 18

static const uint32_t default_sizes[] = {4096, WN_MPA_MULPDU_MAX};

#define COMPILER_BARRIER(p) __asm__ volatile("" : : "r"(p) : "memory")

static uint64_t
iters_for(const struct wn_perf_params *p, uint32_t size)
{
	uint64_t n;

	if (p->iters != 0)
		return p->iters;
	n = WIRE_BW_DEFAULT_BYTES / size;
	return n < 64 ? 64 : n;
}

static double
gbps(uint64_t bytes, double secs)
{
	return secs > 0 ? (double)bytes / secs / 1e9 : NAN;
}

static double
run_memcpy(uint8_t *dst, const uint8_t *src, uint32_t size, uint64_t iters)
{
	double t0 = wn_perf_now();

	for (uint64_t i = 0; i < iters; i++) {
		memcpy(dst, src, size);
		COMPILER_BARRIER(dst);
	}
	return gbps(size * iters, wn_perf_now() - t0);
}

static double
run_crc(const uint8_t *src, uint32_t size, uint64_t iters, uint32_t *sink)
{
	uint32_t c = 0;
	double t0 = wn_perf_now();

	for (uint64_t i = 0; i < iters; i++)
		c ^= wn_crc32c(src, size);
	*sink ^= c;
	return gbps(size * iters, wn_perf_now() - t0);
}

static double
run_framer(uint8_t *out, size_t cap, const uint8_t *ulpdu, uint32_t size, uint64_t iters,
	   const struct wn_mpa_stream *st, int *err)
{
	struct iovec iov[2] = {
		{(void *)(uintptr_t)ulpdu, WIRE_BW_HDR},
		{(void *)(uintptr_t)(ulpdu + WIRE_BW_HDR), size - WIRE_BW_HDR},
	};
	uint32_t seq = st->seq_start;
	double t0 = wn_perf_now();

	for (uint64_t i = 0; i < iters; i++) {
		int w = wn_wire_mpa_fpdu_build(out, cap, iov, 2, seq, st);
		if (w < 0) {
			*err = w;
			return NAN;
		}
		COMPILER_BARRIER(out);
		seq += (uint32_t)w; /* Markers move through the FPDU like on a real stream */
	}
	return gbps(size * iters, wn_perf_now() - t0);
}

struct place_ctx {
	uint64_t done;
	uint64_t bad;
};

/* The dataplane's receive path: whole ULPDUs gathered by wn_wire_mpa_gather_ops. */
static int
place_done(void *arg, const uint8_t *ulpdu, uint16_t len, enum wn_mpa_err verdict)
{
	struct place_ctx *c = arg;

	(void)ulpdu;
	(void)len;
	if (verdict != WN_MPA_ERR_NONE)
		c->bad++;
	c->done++;
	return 0;
}

static double
run_gather(const uint8_t *ulpdu, uint32_t size, uint64_t iters, const struct wn_mpa_stream *st,
	   int *err)
{
	struct iovec iov[2] = {
		{(void *)(uintptr_t)ulpdu, WIRE_BW_HDR},
		{(void *)(uintptr_t)(ulpdu + WIRE_BW_HDR), size - WIRE_BW_HDR},
	};
	static struct iovec sg[2 * (WN_MPA_MULPDU_MAX / 508 + 8)];
	static uint8_t scratch[WN_MPA_GATHER_SCRATCH];
	uint32_t seq = st->seq_start;
	double t0 = wn_perf_now();

	for (uint64_t i = 0; i < iters; i++) {
		int n = wn_wire_mpa_fpdu_gather(sg, sizeof(sg) / sizeof(sg[0]), scratch,
					   sizeof(scratch), iov, 2, seq, st);
		if (n < 0) {
			*err = n;
			return NAN;
		}
		COMPILER_BARRIER(sg);
		seq += (uint32_t)wn_wire_mpa_fpdu_wire_len(seq, st->seq_start, st->markers, size);
	}
	return gbps(size * iters, wn_perf_now() - t0);
}

static double
run_deframer(uint8_t *dst, const uint8_t *ulpdu, uint32_t size, uint64_t iters,
	     const struct wn_mpa_stream *st, int *err)
{
	struct iovec iov = {(void *)(uintptr_t)ulpdu, size};
	size_t per = wn_wire_mpa_fpdu_wire_len(0, 0, st->markers, size) + WN_MPA_MARKER_SIZE;
	uint64_t k = WIRE_BW_STREAM_BYTES / per;
	size_t cap, len = 0;
	uint8_t *stream;

	if (k == 0)
		k = 1;
	if (k > iters)
		k = iters;
	cap = per * k;
	stream = malloc(cap);
	if (stream == NULL) {
		*err = -ENOMEM;
		return NAN;
	}
	for (uint64_t i = 0; i < k; i++) {
		int w = wn_wire_mpa_fpdu_build(stream + len, cap - len, &iov, 1,
					  st->seq_start + (uint32_t)len, st);
		if (w < 0) {
			free(stream);
			*err = w;
			return NAN;
		}
		len += (size_t)w;
	}

	struct wn_mpa_deframer_cfg cfg = {.stream = *st, .seq = st->seq_start,
					  .check_markers = st->markers, .hdr_len = WIRE_BW_HDR};
	struct place_ctx pc = {0};
	struct wn_mpa_gather g = {.buf = dst, .done = place_done, .arg = &pc};
	struct wn_mpa_deframer d;
	uint64_t passes = (iters + k - 1) / k;
	double t0 = wn_perf_now();

	for (uint64_t p = 0; p < passes; p++) {
		wn_wire_mpa_deframer_init(&d, &cfg, &wn_wire_mpa_gather_ops, &g);
		for (size_t off = 0; off < len; off += WIRE_BW_CHUNK) {
			size_t n = len - off < WIRE_BW_CHUNK ? len - off : WIRE_BW_CHUNK;
			int rc = wn_wire_mpa_deframer_input(&d, stream + off, n, NULL);
			if (rc < 0) {
				*err = rc;
				free(stream);
				return NAN;
			}
		}
	}
	double secs = wn_perf_now() - t0;

	free(stream);
	/* the last placed ULPDU must equal what was framed */
	if (pc.bad != 0 || pc.done != passes * k || memcmp(dst, ulpdu, size) != 0) {
		*err = -EIO;
		return NAN;
	}
	return gbps((uint64_t)size * passes * k, secs);
}

static void
set_ratios(struct wn_perf_row *r, double mc, double crc)
{
	r->val[1] = r->val[0] / mc;
	r->val[2] = r->val[0] / crc;
	r->val[3] = (double)r->size / r->val[0]; /* GB/s = octets per ns */
}

static int
wire_bw_case(struct wn_perf_report *rep, uint32_t size, uint64_t iters)
{
	static const bool onoff[] = {true, false};
	size_t cap = wn_wire_mpa_fpdu_wire_len(0, 0, true, size) + 2 * WN_MPA_MARKER_SIZE;
	uint8_t *src = malloc(size), *dst = malloc(size), *out = malloc(cap);
	uint32_t sink = 0;
	int err = 0;

	if (src == NULL || dst == NULL || out == NULL) {
		err = -ENOMEM;
		goto done;
	}
	for (uint32_t i = 0; i < size; i++)
		src[i] = (uint8_t)(i * 131 + 7);
	src[0] = 0x41; /* untagged DDP control octet */
	memset(dst, 0, size);
	memset(out, 0, cap);

	/* warm caches and clocks once */
	run_memcpy(dst, src, size, iters / 8 + 1);
	run_crc(src, size, iters / 8 + 1, &sink);

	double mc = 0, crc = 0;
	for (int k = 0; k < WIRE_BW_REPS; k++) {
		mc = fmax(mc, run_memcpy(dst, src, size, iters));
		crc = fmax(crc, run_crc(src, size, iters, &sink));
	}
	struct wn_perf_row *r = wn_perf_report_row(rep, "memcpy", size, "-", "-");
	if (r == NULL)
		return -ENOSPC;
	r->val[0] = mc;
	set_ratios(r, mc, crc);
	r = wn_perf_report_row(rep, "crc32c (isa-l)", size, "-", "-");
	if (r == NULL)
		return -ENOSPC;
	r->val[0] = crc;
	set_ratios(r, mc, crc);

	static const char *const names[] = {"framer", "framer (gather)", "deframer"};
	for (int dir = 0; dir < 3 && err == 0; dir++) {
		for (unsigned int m = 0; m < 2 && err == 0; m++) {
			struct wn_mpa_stream st = {.seq_start = 0x1000, .markers = onoff[m],
						   .crc = true};
			double v = 0;
			for (int k = 0; k < WIRE_BW_REPS && err == 0; k++) {
				double x = dir == 0 ? run_framer(out, cap, src, size, iters, &st, &err)
					   : dir == 1
						? run_gather(src, size, iters, &st, &err)
						: run_deframer(dst, src, size, iters, &st, &err);
				v = fmax(v, x);
			}

			r = wn_perf_report_row(rep, names[dir], size, onoff[m] ? "on" : "off",
					       "on");
			if (r == NULL)
				return -ENOSPC;
			r->val[0] = v;
			set_ratios(r, mc, crc);
		}
	}
	if (sink == 0x12345678u)
		fprintf(stderr, "(crc sink)\n"); /* keeps the CRC loop observable */
done:
	free(src);
	free(dst);
	free(out);
	return err;
}

static int
wire_bw_parse(struct wn_perf_params *p)
{
	if (p->server || p->client != NULL) {
		fprintf(stderr, "wire_bw runs locally: --server/--client do not apply\n");
		return -EINVAL;
	}
	if (p->duration_set) {
		fprintf(stderr, "wire_bw: --duration does not apply (use --iters)\n");
		return -EINVAL;
	}
	for (unsigned int i = 0; i < p->nb_sizes; i++) {
		if (p->sizes[i] < WIRE_BW_HDR || p->sizes[i] > WN_MPA_MULPDU_MAX) {
			fprintf(stderr, "wire_bw: --size must be %u..%u (RFC 5044 §4.5 MULPDU)\n",
				WIRE_BW_HDR, WN_MPA_MULPDU_MAX);
			return -EINVAL;
		}
	}
	if (p->sweep) {
		for (uint32_t s = 64; s <= 32768; s *= 2)
			p->sizes[p->nb_sizes++] = s;
		p->sizes[p->nb_sizes++] = WN_MPA_MULPDU_MAX;
	} else if (p->nb_sizes == 0) {
		for (size_t i = 0; i < sizeof(default_sizes) / sizeof(default_sizes[0]); i++)
			p->sizes[p->nb_sizes++] = default_sizes[i];
	}
	return 0;
}

static int
wire_bw_run(const struct wn_perf_params *p)
{
	static struct wn_perf_report rep;
	int rc = 0;

	memset(&rep, 0, sizeof(rep));
	rep.mode = "wire_bw";
	rep.title = "wire_bw: ULPDU octets/s on one lcore (GB/s = 1e9 B/s, best of 5 runs); ratios "
		    "to memcpy and isa-l crc32c of the same run; deframer fed 1448-octet chunks";
	rep.iters = p->iters;
	rep.wire_cols = true;
	rep.nb_cols = 4;
	rep.col[0] = "GB/s";
	rep.col[1] = "vs_memcpy";
	rep.col[2] = "vs_crc32c";
	rep.col[3] = "ns_per_op";
	for (unsigned int i = 0; i < p->nb_sizes && rc == 0; i++)
		rc = wire_bw_case(&rep, p->sizes[i], iters_for(p, p->sizes[i]));
	if (rc == 0)
		rc = wn_perf_report_emit(&rep, p);
	return rc;
}

const struct wn_perf_mode wn_perf_mode_wire_bw = {
	.name = "wire_bw",
	.help = "MPA framer/deframer throughput vs memcpy and CRC32c (local, no network)",
	.needs_eal = false,
	.parse = wire_bw_parse,
	.run = wire_bw_run,
};
