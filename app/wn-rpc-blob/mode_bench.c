/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-rpc-blob --client --bench: the figures of the RPC-over-RDMA benchmark table: 1 MiB
 * READ (result by write chunk) and WRITE (argument by read chunk) throughput with --depth
 * calls outstanding, NULL round trip with one outstanding (p50), NULL rate with 32.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "blob_app.h"

struct slot {
	struct wn_rpcrdma_call call;
	uint8_t *buf;
	bool busy;
	uint64_t t0;
	union blob_args a;
	union blob_res res;
};

struct run {
	struct wn_rpcrdma_clnt *c;
	const struct blob_params *p;
	struct slot *slots;
	uint64_t done;
	uint64_t errors;
	uint64_t bytes;
	uint64_t *lat; /* round trips (ns), when measured */
	uint64_t nlat, cap_lat;
	uint32_t check_how; /* every call must have used these paths */
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
on_done(struct wn_rpcrdma_call *call)
{
	struct slot *s = call->arg;

	s->busy = false;
}

enum kind { K_NULL, K_READ, K_WRITE };

static void
prep(struct run *r, struct slot *s, enum kind k, uint64_t i)
{
	const struct blob_params *p = r->p;
	uint64_t off = (i % 16) * p->io;

	memset(&s->call, 0, sizeof(s->call));
	s->call.prog = BLOB_PROG;
	s->call.vers = BLOB_V1;
	switch (k) {
	case K_NULL:
		s->call.proc = BLOBPROC_NULL;
		break;
	case K_WRITE:
		memset(&s->a.w, 0, sizeof(s->a.w));
		s->a.w.name = "bench";
		s->a.w.offset = off;
		s->a.w.data.data_val = (char *)s->buf;
		s->a.w.data.data_len = p->io;
		s->call.proc = BLOBPROC_WRITE;
		s->call.xargs = (xdrproc_t)xdr_blob_write_args;
		s->call.args = &s->a.w;
		s->call.xres = (xdrproc_t)xdr_blob_write_res;
		s->call.res = &s->res.w;
		s->call.flags = WN_RPCRDMA_CALL_DDP_ARGS;
		break;
	case K_READ:
		memset(&s->a.r, 0, sizeof(s->a.r));
		memset(&s->res.r, 0, sizeof(s->res.r));
		s->a.r.name = "bench";
		s->a.r.offset = off;
		s->a.r.count = p->io;
		s->res.r.blob_read_res_u.ok.data.data_val = (char *)s->buf;
		s->call.proc = BLOBPROC_READ;
		s->call.xargs = (xdrproc_t)xdr_blob_read_args;
		s->call.args = &s->a.r;
		s->call.xres = (xdrproc_t)xdr_blob_read_res;
		s->call.res = &s->res.r;
		s->call.ddp_buf = s->buf;
		s->call.ddp_len = p->io;
		break;
	}
	s->call.done = on_done;
	s->call.arg = s;
}

static void
finish(struct run *r, struct slot *s, enum kind k, uint64_t t)
{
	bool ok = s->call.stat == RPC_SUCCESS && (s->call.how & r->check_how) == r->check_how;

	if (k == K_READ)
		ok = ok && s->res.r.status == BLOB_OK &&
		     s->res.r.blob_read_res_u.ok.data.data_len == r->p->io;
	if (k == K_WRITE)
		ok = ok && s->res.w.status == BLOB_OK && s->res.w.count == r->p->io;
	if (!ok) {
		if (r->errors++ == 0)
			fprintf(stderr, "bench: call failed: %s, how %#x\n",
				clnt_sperrno(s->call.stat), s->call.how);
		return;
	}
	r->done++;
	if (k != K_NULL)
		r->bytes += r->p->io;
	if (r->lat != NULL && r->nlat < r->cap_lat)
		r->lat[r->nlat++] = t - s->t0;
}

/* Keep @p depth calls of kind @p k going for @p seconds (after @p warm calls). */
static int
phase(struct run *r, enum kind k, uint32_t depth, double seconds, uint32_t warm)
{
	uint64_t end = 0, i = 0, t;
	bool measuring = warm == 0;

	r->done = r->bytes = r->errors = 0;
	r->nlat = 0;
	if (measuring)
		end = now_ns() + (uint64_t)(seconds * 1e9);
	for (;;) {
		t = now_ns();
		if (measuring && t >= end)
			break;
		for (uint32_t j = 0; j < depth; j++) {
			struct slot *s = &r->slots[j];

			if (s->busy)
				continue;
			prep(r, s, k, i++);
			s->busy = true;
			s->t0 = now_ns();
			if (wn_rpcrdma_clnt_start(r->c, &s->call) != 0)
				return -ENOTCONN;
		}
		if (wn_rpcrdma_clnt_poll(r->c, 1000) < 0)
			return -ENOTCONN;
		t = now_ns();
		for (uint32_t j = 0; j < depth; j++) {
			struct slot *s = &r->slots[j];

			if (s->busy || s->call.prog == 0)
				continue;
			if (measuring)
				finish(r, s, k, t);
			else if (--warm == 0) {
				measuring = true;
				end = now_ns() + (uint64_t)(seconds * 1e9);
			}
			s->call.prog = 0;
		}
		if (blob_quit)
			return -EINTR;
	}
	/* drain what is still outstanding (not counted) */
	while (wn_rpcrdma_clnt_outstanding(r->c) > 0)
		if (wn_rpcrdma_clnt_poll(r->c, 1000) < 0)
			break;
	for (uint32_t j = 0; j < depth; j++)
		r->slots[j].call.prog = 0;
	return r->errors == 0 ? 0 : -EIO;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
blob_client_bench(const struct blob_params *p)
{
	struct run r = {.p = p};
	uint32_t depth = p->depth, ndepth = 32;
	size_t slots = depth > ndepth ? depth : ndepth;
	size_t mem_len = (size_t)depth * p->io;
	double read_mbs = 0, write_mbs = 0, null_rate = 0, p50 = 0, p99 = 0;
	uint64_t reads = 0, writes = 0, nulls = 0;
	struct wn_rpcrdma_info in;
	uint8_t *mem;
	int ret;

	r.c = blob_connect(p);
	if (r.c == NULL)
		return 1;
	r.slots = calloc(slots, sizeof(*r.slots));
	mem = mmap(NULL, mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	r.cap_lat = 1u << 20;
	r.lat = calloc(r.cap_lat, sizeof(*r.lat));
	if (r.slots == NULL || mem == MAP_FAILED || r.lat == NULL)
		return 1;
	for (uint32_t i = 0; i < depth; i++) {
		r.slots[i].buf = mem + (size_t)i * p->io;
		blob_pattern(r.slots[i].buf, p->io, (uint64_t)i * p->io, p->seed);
	}
	if (!p->no_reg && wn_rpcrdma_clnt_reg(r.c, mem, mem_len) != 0)
		return 1;
	/* WRITE (read chunks) first: it also fills the blob the READs read */
	r.check_how = p->io > 2048 ? WN_RPCRDMA_HOW_READ_CHUNK : 0;
	ret = phase(&r, K_WRITE, depth, p->seconds, depth);
	write_mbs = r.bytes / p->seconds / 1e6;
	writes = r.done;
	if (ret == 0) {
		r.check_how = p->io >= p->o.ddp_min ? WN_RPCRDMA_HOW_WRITE_CHUNK : 0;
		ret = phase(&r, K_READ, depth, p->seconds, depth);
		read_mbs = r.bytes / p->seconds / 1e6;
		reads = r.done;
	}
	r.check_how = 0;
	if (ret == 0) {
		if (ndepth > p->o.credits)
			ndepth = p->o.credits;
		ret = phase(&r, K_NULL, ndepth, p->seconds, 64);
		null_rate = r.done / p->seconds;
		nulls = r.done;
	}
	if (ret == 0) {
		ret = phase(&r, K_NULL, 1, p->seconds, 64);
		qsort(r.lat, r.nlat, sizeof(*r.lat), cmp_u64);
		if (r.nlat > 0) {
			p50 = r.lat[r.nlat / 2] / 1e3;
			p99 = r.lat[r.nlat * 99 / 100] / 1e3;
		}
	}
	wn_rpcrdma_clnt_info(r.c, &in);
	if (p->json) {
		printf("{\"size\": %u, \"depth\": %u, \"seconds\": %.3f, \"read_MBps\": %.1f, "
		       "\"reads\": %" PRIu64 ", \"write_MBps\": %.1f, \"writes\": %" PRIu64
		       ", \"null_rate\": %.0f, \"null_depth\": %u, \"nulls\": %" PRIu64
		       ", \"null_p50_us\": %.1f, \"null_p99_us\": %.1f, \"null_samples\": %" PRIu64
		       ", \"ok\": %s}\n",
		       p->io, depth, p->seconds, read_mbs, reads, write_mbs, writes, null_rate,
		       ndepth, nulls, p50, p99, r.nlat, ret == 0 ? "true" : "false");
	} else {
		printf("READ %u B by write chunk, %u outstanding: %.1f MB/s (%" PRIu64 " calls)\n",
		       p->io, depth, read_mbs, reads);
		printf("WRITE %u B by read chunk, %u outstanding: %.1f MB/s (%" PRIu64 " calls)\n",
		       p->io, depth, write_mbs, writes);
		printf("NULL rate, %u outstanding: %.0f calls/s\n", ndepth, null_rate);
		printf("NULL round trip, 1 outstanding: p50 %.1f us, p99 %.1f us (%" PRIu64
		       " calls)\n",
		       p50, p99, r.nlat);
		blob_print_info("client", &in);
	}
	wn_rpcrdma_clnt_destroy(r.c);
	munmap(mem, mem_len);
	free(r.lat);
	free(r.slots);
	return ret == 0 ? 0 : 1;
}
