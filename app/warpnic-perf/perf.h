/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnic-perf internals: parameters, the mode table and the report helpers.
 * Everything runs on the main thread (the main lcore when EAL is up).
 */
#ifndef WN_PERF_H
#define WN_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** Largest number of sizes a --sweep may produce. */
#define WN_PERF_MAX_SIZES 32
/** Default TCP port of the RNIC modes (perftest's). */
#define WN_PERF_DEFAULT_PORT 18515
/** Default seconds to wait for the peer (connection, control messages, a stalled run). */
#define WN_PERF_DEFAULT_TIMEOUT 20.0
/** Most dataplane options (--ip, --config, ...) one command line may give. */
#define WN_PERF_MAX_DP_OPTS 32
/** Default cap of one measurement when neither --iters nor --duration is given. */
#define WN_PERF_DEFAULT_DURATION 2.0

/** Command-line parameters (DESIGN.md "Interfaces": warpnic-perf). */
struct wn_perf_params {
	const char *mode;            /**< --mode */
	bool server;                 /**< --server */
	const char *client;          /**< --client ADDR */
	const char *bind;            /**< --bind ADDR (server side; NULL: any) */
	uint16_t port;               /**< --port */
	const char *ctl;             /**< --ctl PATH (NULL: $WARPNIC_CTL or the default) */
	/** warpnicd options (--ip ...) for the embedded dataplane, in order: name, value */
	const char *dp_opt[WN_PERF_MAX_DP_OPTS][2];
	unsigned int nb_dp_opts;     /**< > 0: run the RNIC in-process (embed.c) */
	bool rtc;                    /**< --rtc: run to completion in the shard (dev_rtc.c) */
	uint32_t sizes[WN_PERF_MAX_SIZES]; /**< --size N, or the --sweep list */
	unsigned int nb_sizes;       /**< 0: the mode's defaults */
	bool sweep;                  /**< --sweep without a list: the mode's full range */
	unsigned int qps;            /**< --qps */
	unsigned int depth;          /**< --depth */
	unsigned int bufs;           /**< --buffers: data buffer pairs the QPs take in turn */
	uint64_t iters;              /**< --iters (0: the mode's default) */
	bool iters_set;              /**< --iters was given */
	double duration;             /**< --duration in s (0: none) */
	bool duration_set;           /**< --duration was given */
	double timeout;              /**< --timeout in s */
	bool timeout_set;            /**< --timeout given (else a server waits for ever) */
	unsigned int reps;           /**< --reps: measurements per size, the median is kept */
	const char *json;            /**< --json FILE ("-": stdout) */
	const char *csv;             /**< --csv FILE ("-": stdout) */
};

/** One test mode; each mode_<name>.c defines one or more of these. */
struct wn_perf_mode {
	const char *name;
	const char *help;  /**< one line for --help */
	bool needs_eal;    /**< EAL is initialised (with the options before "--") */
	bool rnic;         /**< a client of warpnicd, or of the embedded dataplane */
	/** Check/complete @p p for this mode; 0 or -EINVAL (message on stderr). */
	int (*parse)(struct wn_perf_params *p);
	/** Run and report; 0 or -errno. */
	int (*run)(const struct wn_perf_params *p);
};

extern const struct wn_perf_mode wn_perf_mode_wire_bw;
extern const struct wn_perf_mode wn_perf_mode_raw_bw;
extern const struct wn_perf_mode wn_perf_mode_raw_lat;
extern const struct wn_perf_mode wn_perf_mode_write_bw;
extern const struct wn_perf_mode wn_perf_mode_read_bw;
extern const struct wn_perf_mode wn_perf_mode_send_bw;
extern const struct wn_perf_mode wn_perf_mode_write_lat;
extern const struct wn_perf_mode wn_perf_mode_read_lat;
extern const struct wn_perf_mode wn_perf_mode_send_lat;

/** @return the mode called @p name, or NULL. */
const struct wn_perf_mode *wn_perf_mode_find(const char *name);
/** Print the mode list (name and help) to @p f. */
void wn_perf_modes_usage(FILE *f);

/** Parse app options (after EAL's). @return 0, 1 for --help (print wn_perf_usage()), -EINVAL. */
int wn_perf_parse_args(int argc, char **argv, struct wn_perf_params *p);
/** Print the options part of the usage text for program @p prog to stdout. */
void wn_perf_usage(const char *prog);

/**
 * Run mode @p m with the embedded dataplane (lib/dp, wn_node.h) built from
 * p->dp_opt: start it, point p->ctl at its control socket, run the mode (on the main lcore,
 * the dataplane on the workers; with the main lcore alone, the dataplane there and the mode
 * on a thread), let the connections close, stop it. After rte_eal_init(), main lcore.
 * @return the mode's result, else 0 or -errno of the dataplane (message on stderr;
 *   -ENOTSUP when built without it).
 */
int wn_perf_embed_run(struct wn_perf_params *p, const struct wn_perf_mode *m);
/**
 * Fill p->sizes for a network mode: --sweep gives the powers of two from 2 to 1 MiB, no size
 * gives @p def. Sizes must be within [@p min, @p max]. @return 0 or -EINVAL (message printed).
 */
int wn_perf_sizes_default(struct wn_perf_params *p, const char *mode, uint32_t def, uint32_t min,
			  uint32_t max);
/**
 * Iterations and time cap of one measurement from --iters/--duration: neither given means
 * @p def_iters capped at WN_PERF_DEFAULT_DURATION; only --iters means no time cap; only
 * --duration means no iteration cap (UINT64_MAX).
 */
void wn_perf_budget(const struct wn_perf_params *p, uint64_t def_iters, uint64_t *iters,
		    double *secs);

/** A result table: rows of named numeric columns. */
#define WN_PERF_MAX_ROWS 160
#define WN_PERF_MAX_COLS 8

struct wn_perf_row {
	char name[32];
	uint32_t size;
	const char *markers; /**< "on", "off" or "-" (wire modes only) */
	const char *crc;     /**< "on", "off" or "-" (wire modes only) */
	double val[WN_PERF_MAX_COLS];
};

struct wn_perf_report {
	const char *mode;
	const char *title;
	uint64_t iters;
	bool wire_cols;                       /**< print the markers/crc columns */
	unsigned int qps;                     /**< network modes: --qps (0: not shown) */
	unsigned int depth;                   /**< network modes: --depth */
	unsigned int reps;                    /**< network modes: --reps (0: not shown) */
	unsigned int nb_cols;
	const char *col[WN_PERF_MAX_COLS];    /**< column keys (JSON/CSV) and headers */
	unsigned int nb_rows;
	struct wn_perf_row row[WN_PERF_MAX_ROWS];
};

/** Most --reps. */
#define WN_PERF_MAX_REPS 9
/** Most data QPs of the RNIC modes (--qps). */
#define WN_PERF_MAX_QPS 16384
#define WN_PERF_DEFAULT_BUFS 256 /* --buffers */

/**
 * Copy into @p out the row of @p rows[0..n) whose column @p col is the median (the lower
 * middle for even @p n); name and size are kept from @p out.
 */
void wn_perf_row_median(struct wn_perf_row *out, const struct wn_perf_row *rows, unsigned int n,
			unsigned int col);

/** Append a row; @return it, or NULL when the table is full. */
struct wn_perf_row *wn_perf_report_row(struct wn_perf_report *r, const char *name,
				       uint32_t size, const char *markers, const char *crc);
/** Print @p r as a text table to @p f. */
void wn_perf_report_table(const struct wn_perf_report *r, FILE *f);
/** Write @p r as one JSON object to @p f. */
void wn_perf_report_json(const struct wn_perf_report *r, FILE *f);
/** Write @p r as CSV (header line, one line per row) to @p f. */
void wn_perf_report_csv(const struct wn_perf_report *r, FILE *f);
/**
 * Emit @p r as the parameters ask: JSON to --json, CSV to --csv ("-" is stdout), and the text
 * table to stdout, or to stderr when stdout carries JSON or CSV. @return 0 or -errno.
 */
int wn_perf_report_emit(const struct wn_perf_report *r, const struct wn_perf_params *p);

/** Latency samples of one measurement. */
struct wn_perf_lat {
	double *ns;      /**< samples in ns */
	uint64_t n;      /**< samples taken */
	uint64_t cap;    /**< room in @c ns */
};

/** Allocate room for @p cap samples. @return 0 or -ENOMEM. */
int wn_perf_lat_init(struct wn_perf_lat *l, uint64_t cap);
void wn_perf_lat_free(struct wn_perf_lat *l);
/**
 * Sort the samples and fill @p row's columns from @p col: min, p50, p99, p99.9, avg (µs)
 * and the sample count.
 */
void wn_perf_lat_fill(struct wn_perf_lat *l, struct wn_perf_row *row, unsigned int col);
/** Column keys matching wn_perf_lat_fill(); @return how many (6). */
unsigned int wn_perf_lat_cols(struct wn_perf_report *r, unsigned int col);

/** @return seconds from a monotonic clock. */
double wn_perf_now(void);
/** @return nanoseconds from a monotonic clock. */
uint64_t wn_perf_now_ns(void);

/**
 * The test pattern: octet @p off of a message sent with @p seed. Every size and run uses a
 * different seed, so stale data never passes a check.
 */
static inline uint8_t
wn_perf_pattern(uint64_t seed, uint64_t off)
{
	uint64_t x = (off + 1) * 0x9e3779b97f4a7c15ull ^ seed * 0xbf58476d1ce4e5b9ull;

	return (uint8_t)(x >> 56);
}

/** Fill @p buf[0..len) with the pattern of @p seed starting at message offset @p off. */
void wn_perf_pattern_fill(uint8_t *buf, size_t len, uint64_t seed, uint64_t off);
/**
 * Check @p buf[0..len) against the pattern. @return -1 if it matches, else the first offset
 * that differs.
 */
int64_t wn_perf_pattern_check(const uint8_t *buf, size_t len, uint64_t seed, uint64_t off);

#endif /* WN_PERF_H */
