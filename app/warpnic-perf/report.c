/* SPDX-License-Identifier: BSD-3-Clause */
/* warpnic-perf result tables: aligned text, or one JSON object per run. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
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
	row->markers = markers;
	row->crc = crc;
	return row;
}

static void
json_num(double v)
{
	if (isfinite(v))
		printf("%.4f", v);
	else
		printf("null");
}

void
wn_perf_report_print(const struct wn_perf_report *r, bool json)
{
	if (json) {
		printf("{\"mode\": \"%s\", \"iters\": %" PRIu64 ", \"results\": [", r->mode,
		       r->iters);
		for (unsigned int i = 0; i < r->nb_rows; i++) {
			const struct wn_perf_row *row = &r->row[i];

			printf("%s\n  {\"name\": \"%s\", \"size\": %" PRIu32
			       ", \"markers\": \"%s\", \"crc\": \"%s\"",
			       i ? "," : "", row->name, row->size, row->markers, row->crc);
			for (unsigned int c = 0; c < r->nb_cols; c++) {
				printf(", \"%s\": ", r->col[c]);
				json_num(row->val[c]);
			}
			printf("}");
		}
		printf("\n]}\n");
		return;
	}
	printf("%s\n", r->title);
	printf("%-18s %8s %7s %4s", "case", "size", "markers", "crc");
	for (unsigned int c = 0; c < r->nb_cols; c++)
		printf(" %11s", r->col[c]);
	printf("\n");
	for (unsigned int i = 0; i < r->nb_rows; i++) {
		const struct wn_perf_row *row = &r->row[i];

		printf("%-18s %8" PRIu32 " %7s %4s", row->name, row->size, row->markers, row->crc);
		for (unsigned int c = 0; c < r->nb_cols; c++) {
			if (isfinite(row->val[c]))
				printf(" %11.3f", row->val[c]);
			else
				printf(" %11s", "-");
		}
		printf("\n");
	}
}
