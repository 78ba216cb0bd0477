/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnic-perf internals: parameters, the mode table and the report helpers.
 * Everything runs on the main lcore.
 */
#ifndef WN_PERF_H
#define WN_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Largest number of sizes a --sweep may produce. */
#define WN_PERF_MAX_SIZES 32

/** Command-line parameters (DESIGN.md "Interfaces": warpnic-perf). */
struct wn_perf_params {
	const char *mode;            /**< --mode */
	bool server;                 /**< --server */
	const char *client;          /**< --client ADDR */
	uint32_t sizes[WN_PERF_MAX_SIZES]; /**< --size N, or the --sweep list */
	unsigned int nb_sizes;       /**< 0: the mode's defaults */
	bool sweep;                  /**< --sweep */
	unsigned int qps;            /**< --qps */
	unsigned int depth;          /**< --depth */
	uint64_t iters;              /**< --iters (0: the mode's default) */
	bool json;                   /**< --json */
};

/** One test mode; each mode_<name>.c defines one of these. */
struct wn_perf_mode {
	const char *name;
	const char *help; /**< one line for --help */
	/** Check/complete @p p for this mode; 0 or -EINVAL (message on stderr). */
	int (*parse)(struct wn_perf_params *p);
	/** Run and report; 0 or -errno. */
	int (*run)(const struct wn_perf_params *p);
};

extern const struct wn_perf_mode wn_perf_mode_wire_bw;

/** @return the mode called @p name, or NULL. */
const struct wn_perf_mode *wn_perf_mode_find(const char *name);
/** Print the mode list (name and help) to @p f. */
void wn_perf_modes_usage(void *f);

/** Parse app options (after EAL's). @return 0, 1 when --help was shown, -EINVAL. */
int wn_perf_parse_args(int argc, char **argv, struct wn_perf_params *p);
/** Print the usage text for program @p prog to stdout. */
void wn_perf_usage(const char *prog);

/** A result table: rows of named numeric columns. */
#define WN_PERF_MAX_ROWS 160
#define WN_PERF_MAX_COLS 8

struct wn_perf_row {
	char name[32];
	uint32_t size;
	const char *markers; /**< "on", "off" or "-" */
	const char *crc;     /**< "on", "off" or "-" */
	double val[WN_PERF_MAX_COLS];
};

struct wn_perf_report {
	const char *mode;
	const char *title;
	uint64_t iters;
	unsigned int nb_cols;
	const char *col[WN_PERF_MAX_COLS];    /**< column keys (JSON) and headers */
	unsigned int nb_rows;
	struct wn_perf_row row[WN_PERF_MAX_ROWS];
};

/** Append a row; @return it, or NULL when the table is full. */
struct wn_perf_row *wn_perf_report_row(struct wn_perf_report *r, const char *name,
				       uint32_t size, const char *markers, const char *crc);
/** Print @p r as a text table, or as one JSON object when @p json. */
void wn_perf_report_print(const struct wn_perf_report *r, bool json);

/** @return seconds from a monotonic clock. */
double wn_perf_now(void);

#endif /* WN_PERF_H */
