/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-rpc-blob: the sample blob-store service over RPC-over-RDMA (lib/rpcrdma).
 */
#ifndef BLOB_APP_H
#define BLOB_APP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "blob.h"
#include "wn_rpcrdma.h"
#include "wn_rpcrdma_xprt.h"

struct blob_params {
	const char *addr; /* --server ADDR / --client ADDR */
	bool server;
	bool test;  /* client: the functional test */
	bool bench; /* client: the benchmark */
	struct wn_rpcrdma_opts o;
	/* server */
	uint32_t store_mb;
	uint32_t blob_mb;
	uint64_t max_calls; /* exit after this many calls (0: never) */
	/* client */
	const char *name;
	uint64_t size;
	uint32_t io;
	uint32_t depth;
	uint32_t seed;
	uint32_t nulls;
	bool no_reg;   /* do not register the client's buffers: chunks bounce through the pool */
	bool verbose;
	double seconds; /* bench: per figure */
	bool json;
};

extern volatile sig_atomic_t blob_quit;

int blob_server(const struct blob_params *p);
int blob_client_test(const struct blob_params *p);
int blob_client_bench(const struct blob_params *p);

/* client helpers shared by the test and the benchmark */
/** One call's arguments, WRITE or READ. */
union blob_args {
	blob_write_args w;
	blob_read_args r;
};
/** One call's results, WRITE or READ. */
union blob_res {
	blob_write_res w;
	blob_read_res r;
};
struct wn_rpcrdma_clnt *blob_connect(const struct blob_params *p);
void blob_pattern(uint8_t *buf, uint32_t len, uint64_t offset, uint32_t seed);
void blob_print_info(const char *who, const struct wn_rpcrdma_info *in);

#endif /* BLOB_APP_H */
