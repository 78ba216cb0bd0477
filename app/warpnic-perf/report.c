/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnic-perf results: aligned text, one JSON object or CSV per run; latency percentiles;
 * the test pattern.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf.h"

double
wn_perf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t
wn_perf_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void
wn_perf_pattern_fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t off)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = wn_perf_pattern(seed, off + i);
}

int64_t
wn_perf_pattern_check(const uint8_t *buf, size_t len, uint64_t seed, uint64_t off)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != wn_perf_pattern(seed, off + i))
			return (int64_t)i;
	return -1;
}

struct wn_perf_row *
wn_perf_report_row(struct wn_perf_report *r, const char *name, uint32_t size,
		   const char *markers, const char *crc)
{
	struct wn_perf_row *row;

	if (r->nb_rows == WN_PERF_MAX_ROWS)
		return NULL;
	row = &r->row[r->nb_rows++];
	memset(row, 0, sizeof(*row));
	snprintf(row->name, sizeof(row->name), "%s", name);
	row->size = size;
	row->markers = markers != NULL ? markers : "-";
	row->crc = crc != NULL ? crc : "-";
	for (unsigned int c = 0; c < WN_PERF_MAX_COLS; c++)
		row->val[c] = NAN;
	return row;
}

void
wn_perf_row_median(struct wn_perf_row *out, const struct wn_perf_row *rows, unsigned int n,
		   unsigned int col)
{
	unsigned int order[WN_PERF_MAX_REPS], k = 0;
	char name[sizeof(out->name)];
	uint32_t size = out->size;

	for (unsigned int i = 0; i < n && i < WN_PERF_MAX_REPS; i++) {
		unsigned int j = k++;

		/* insertion sort of the indices by the column */
		while (j > 0 && rows[order[j - 1]].val[col] > rows[i].val[col]) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	if (k == 0)
		return;
	memcpy(name, out->name, sizeof(name));
	*out = rows[order[(k - 1) / 2]];
	memcpy(out->name, name, sizeof(name));
	out->size = size;
}

static void
json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.4f", v);
	else
		fprintf(f, "null");
}

void
wn_perf_report_json(const struct wn_perf_report *r, FILE *f)
{
	fprintf(f, "{\"mode\": \"%s\", \"iters\": %" PRIu64, r->mode, r->iters);
	if (r->qps != 0)
		fprintf(f, ", \"qps\": %u, \"depth\": %u", r->qps, r->depth);
	if (r->reps != 0)
		fprintf(f, ", \"reps\": %u", r->reps);
	fprintf(f, ", \"results\": [");
	for (unsigned int i = 0; i < r->nb_rows; i++) {
		const struct wn_perf_row *row = &r->row[i];

		fprintf(f, "%s\n  {\"name\": \"%s\", \"size\": %" PRIu32, i ? "," : "", row->name,
			row->size);
		if (r->wire_cols)
			fprintf(f, ", \"markers\": \"%s\", \"crc\": \"%s\"", row->markers, row->crc);
		for (unsigned int c = 0; c < r->nb_cols; c++) {
			fprintf(f, ", \"%s\": ", r->col[c]);
			json_num(f, row->val[c]);
		}
		fprintf(f, "}");
	}
	fprintf(f, "\n]}\n");
}

void
wn_perf_report_csv(const struct wn_perf_report *r, FILE *f)
{
	fprintf(f, "mode,name,size");
	if (r->wire_cols)
		fprintf(f, ",markers,crc");
	for (unsigned int c = 0; c < r->nb_cols; c++)
		fprintf(f, ",%s", r->col[c]);
	fprintf(f, "\n");
	for (unsigned int i = 0; i < r->nb_rows; i++) {
		const struct wn_perf_row *row = &r->row[i];

		fprintf(f, "%s,\"%s\",%" PRIu32, r->mode, row->name, row->size);
		if (r->wire_cols)
			fprintf(f, ",%s,%s", row->markers, row->crc);
		for (unsigned int c = 0; c < r->nb_cols; c++) {
			if (isfinite(row->val[c]))
				fprintf(f, ",%.4f", row->val[c]);
			else
				fprintf(f, ",");
		}
		fprintf(f, "\n");
	}
}

void
wn_perf_report_table(const struct wn_perf_report *r, FILE *f)
{
	fprintf(f, "%s\n", r->title);
	fprintf(f, "%-18s %8s", "case", "size");
	if (r->wire_cols)
		fprintf(f, " %7s %4s", "markers", "crc");
	for (unsigned int c = 0; c < r->nb_cols; c++)
		fprintf(f, " %11s", r->col[c]);
	fprintf(f, "\n");
	for (unsigned int i = 0; i < r->nb_rows; i++) {
		const struct wn_perf_row *row = &r->row[i];

		fprintf(f, "%-18s %8" PRIu32, row->name, row->size);
		if (r->wire_cols)
			fprintf(f, " %7s %4s", row->markers, row->crc);
		for (unsigned int c = 0; c < r->nb_cols; c++) {
			if (isfinite(row->val[c]))
				fprintf(f, " %11.3f", row->val[c]);
			else
				fprintf(f, " %11s", "-");
		}
		fprintf(f, "\n");
	}
	fflush(f);
}

static int
emit_to(const char *path, const struct wn_perf_report *r,
	void (*fn)(const struct wn_perf_report *, FILE *))
{
	FILE *f;
	int rc = 0;

	if (strcmp(path, "-") == 0) {
		fn(r, stdout);
		return fflush(stdout) == 0 ? 0 : -errno;
	}
	f = fopen(path, "w");
	if (f == NULL) {
		rc = -errno;
		fprintf(stderr, "warpnic-perf: %s: %s\n", path, strerror(errno));
		return rc;
	}
	fn(r, f);
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

int
wn_perf_report_emit(const struct wn_perf_report *r, const struct wn_perf_params *p)
{
	bool stdout_taken = (p->json != NULL && strcmp(p->json, "-") == 0) ||
			    (p->csv != NULL && strcmp(p->csv, "-") == 0);
	int rc = 0;

	wn_perf_report_table(r, stdout_taken ? stderr : stdout);
	if (p->json != NULL)
		rc = emit_to(p->json, r, wn_perf_report_json);
	if (p->csv != NULL && rc == 0)
		rc = emit_to(p->csv, r, wn_perf_report_csv);
	return rc;
}

int
wn_perf_lat_init(struct wn_perf_lat *l, uint64_t cap)
{
	l->n = 0;
	l->cap = cap;
	l->ns = malloc(sizeof(double) * (cap > 0 ? cap : 1));
	return l->ns == NULL ? -ENOMEM : 0;
}

void
wn_perf_lat_free(struct wn_perf_lat *l)
{
	free(l->ns);
	l->ns = NULL;
	l->n = l->cap = 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* nearest-rank percentile of sorted samples */
static double
pct(const struct wn_perf_lat *l, double q)
{
	uint64_t k = (uint64_t)ceil(q * (double)l->n);

	if (k == 0)
		k = 1;
	return l->ns[k - 1];
}

unsigned int
wn_perf_lat_cols(struct wn_perf_report *r, unsigned int col)
{
	static const char *const names[] = {"min_us", "p50_us", "p99_us", "p99.9_us", "avg_us",
					    "iters"};

	for (unsigned int i = 0; i < 6; i++)
		r->col[col + i] = names[i];
	return 6;
}

void
wn_perf_lat_fill(struct wn_perf_lat *l, struct wn_perf_row *row, unsigned int col)
{
	double sum = 0;

	row->val[col + 5] = (double)l->n;
	if (l->n == 0)
		return;
	qsort(l->ns, l->n, sizeof(double), cmp_double);
	for (uint64_t i = 0; i < l->n; i++)
		sum += l->ns[i];
	row->val[col + 0] = l->ns[0] / 1e3;
	row->val[col + 1] = pct(l, 0.50) / 1e3;
	row->val[col + 2] = pct(l, 0.99) / 1e3;
	row->val[col + 3] = pct(l, 0.999) / 1e3;
	row->val[col + 4] = sum / (double)l->n / 1e3;
}
