/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-rpc-blob --client --test: every message form of RPC-over-RDMA through the blob
 * service, with the data checked octet for octet.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "blob_app.h"

struct io {
	struct wn_rpcrdma_call call;
	uint8_t *buf;
	uint64_t offset;
	uint32_t len;
	bool busy;
	bool failed;
	union blob_args a;
	union blob_res res;
};

struct test {
	const struct blob_params *p;
	struct wn_rpcrdma_clnt *c;
	struct io *ios;
	uint8_t *mem;
	uint32_t errors;
	uint32_t how_seen; /* union of every call's wn_rpcrdma_how bits */
	uint64_t mismatch_at;
};

static uint64_t
mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

void
blob_pattern(uint8_t *buf, uint32_t len, uint64_t offset, uint32_t seed)
{
	for (uint32_t i = 0; i < len;) {
		uint64_t pos = offset + i, w = mix(((uint64_t)seed << 40) ^ (pos >> 3));
		uint32_t k = 8 - (uint32_t)(pos & 7);

		if (k > len - i)
			k = len - i;
		for (uint32_t j = 0; j < k; j++)
			buf[i + j] = (uint8_t)(w >> (8 * ((pos & 7) + j)));
		i += k;
	}
}

void
blob_print_info(const char *who, const struct wn_rpcrdma_info *in)
{
	printf("%s: calls %" PRIu64 " read_chunks %" PRIu64 " write_chunks %" PRIu64
	       " reply_chunks %" PRIu64 " long_calls %" PRIu64 " read_replies %" PRIu64
	       " remote_inv %" PRIu64 " rdma_errors_sent %" PRIu64 " rdma_errors_recv %" PRIu64
	       " discarded %" PRIu64 " disconnects %" PRIu64 " placed %" PRIu64 " copied %" PRIu64
	       " credits %u max_outstanding %" PRIu64 " reg %s\n",
	       who, in->calls, in->read_chunks, in->write_chunks, in->reply_chunks, in->long_calls,
	       in->read_replies, in->remote_inv_count, in->rdma_errors_sent, in->rdma_errors_recv,
	       in->discarded, in->disconnects, in->bytes_placed, in->bytes_copied, in->credits,
	       in->max_outstanding, in->reg == WN_RPCRDMA_REG_MW ? "mw" : "pool");
	fflush(stdout);
}

struct wn_rpcrdma_clnt *
blob_connect(const struct blob_params *p)
{
	struct wn_rpcrdma_clnt *c = wn_rpcrdma_clnt_create(p->addr, &p->o);
	struct wn_rpcrdma_info in;

	if (c == NULL) {
		fprintf(stderr, "wn-rpc-blob: connecting to %s port %u: %s\n", p->addr, p->o.port,
			strerror(errno));
		return NULL;
	}
	wn_rpcrdma_clnt_info(c, &in);
	printf("connected: inline call %u reply %u, peer private data %s, remote invalidation "
	       "%s, registration %s\n",
	       in.call_inline, in.reply_inline, in.peer_cp ? "yes" : "no",
	       in.remote_inv ? "yes" : "no", in.reg == WN_RPCRDMA_REG_MW ? "mw" : "pool");
	return c;
}

static void
fail(struct test *t, const char *what, const struct wn_rpcrdma_call *call)
{
	t->errors++;
	fprintf(stderr, "FAIL: %s: %s (xid %#x, rdma_err %u)\n", what, clnt_sperrno(call->stat),
		call->xid, call->rdma_err);
}

static void
call_init(struct wn_rpcrdma_call *call, uint32_t proc, xdrproc_t xa, const void *a, xdrproc_t xr,
	  void *r)
{
	memset(call, 0, sizeof(*call));
	call->prog = BLOB_PROG;
	call->vers = BLOB_V1;
	call->proc = proc;
	call->xargs = xa;
	call->args = a;
	call->xres = xr;
	call->res = r;
}

static void
io_done(struct wn_rpcrdma_call *call)
{
	struct io *io = call->arg;

	io->busy = false;
	io->failed = call->stat != RPC_SUCCESS;
}

/* Run every call of a phase through @p depth slots: @p prep fills the next, @p check checks. */
static int
pipeline(struct test *t, uint64_t total, bool (*prep)(struct test *, struct io *, uint64_t),
	 void (*check)(struct test *, struct io *))
{
	uint64_t next = 0, done = 0;
	uint32_t depth = t->p->depth;

	while (done < total) {
		for (uint32_t i = 0; i < depth && next < total; i++) {
			struct io *io = &t->ios[i];

			if (io->busy)
				continue;
			if (!prep(t, io, next))
				return -1;
			io->busy = true;
			io->call.done = io_done;
			io->call.arg = io;
			if (wn_rpcrdma_clnt_start(t->c, &io->call) != 0) {
				fprintf(stderr, "FAIL: start: connection lost\n");
				return -1;
			}
			next++;
		}
		int n = wn_rpcrdma_clnt_poll(t->c, 1000);

		if (n < 0 && wn_rpcrdma_clnt_outstanding(t->c) == 0) {
			fprintf(stderr, "FAIL: connection lost\n");
			return -1;
		}
		for (uint32_t i = 0; i < depth; i++) {
			struct io *io = &t->ios[i];

			if (!io->busy && io->call.prog != 0) {
				t->how_seen |= io->call.how;
				if (io->failed)
					fail(t, "call", &io->call);
				else
					check(t, io);
				io->call.prog = 0;
				done++;
			}
		}
	}
	return 0;
}

static bool
prep_null(struct test *t, struct io *io, uint64_t i)
{
	(void)t;
	(void)i;
	call_init(&io->call, BLOBPROC_NULL, NULL, NULL, NULL, NULL);
	return true;
}

static void
check_none(struct test *t, struct io *io)
{
	(void)t;
	(void)io;
}

static bool
prep_write(struct test *t, struct io *io, uint64_t i)
{
	const struct blob_params *p = t->p;

	io->offset = i * p->io;
	io->len = p->size - io->offset < p->io ? (uint32_t)(p->size - io->offset) : p->io;
	blob_pattern(io->buf, io->len, io->offset, p->seed);
	memset(&io->a.w, 0, sizeof(io->a.w));
	memset(&io->res.w, 0, sizeof(io->res.w));
	io->a.w.name = (char *)p->name;
	io->a.w.offset = io->offset;
	io->a.w.data.data_val = (char *)io->buf;
	io->a.w.data.data_len = io->len;
	call_init(&io->call, BLOBPROC_WRITE, (xdrproc_t)xdr_blob_write_args, &io->a.w,
		  (xdrproc_t)xdr_blob_write_res, &io->res.w);
	io->call.flags = WN_RPCRDMA_CALL_DDP_ARGS; /* the data is DDP-eligible */
	return true;
}

static void
check_write(struct test *t, struct io *io)
{
	if (io->res.w.status != BLOB_OK || io->res.w.count != io->len) {
		t->errors++;
		fprintf(stderr, "FAIL: WRITE at %" PRIu64 ": status %d count %u\n", io->offset,
			io->res.w.status, io->res.w.count);
	}
}

static bool
prep_read(struct test *t, struct io *io, uint64_t i)
{
	const struct blob_params *p = t->p;

	io->offset = i * p->io;
	io->len = p->size - io->offset < p->io ? (uint32_t)(p->size - io->offset) : p->io;
	memset(io->buf, 0xA5, io->len);
	memset(&io->a.r, 0, sizeof(io->a.r));
	memset(&io->res.r, 0, sizeof(io->res.r));
	io->a.r.name = (char *)p->name;
	io->a.r.offset = io->offset;
	io->a.r.count = io->len;
	/* decode the data in place: the write chunk is this same buffer */
	io->res.r.blob_read_res_u.ok.data.data_val = (char *)io->buf;
	call_init(&io->call, BLOBPROC_READ, (xdrproc_t)xdr_blob_read_args, &io->a.r,
		  (xdrproc_t)xdr_blob_read_res, &io->res.r);
	io->call.ddp_buf = io->buf;
	io->call.ddp_len = io->len;
	/* a reply chunk only if the data comes back inline (no write chunk) */
	io->call.reply_max = io->len >= t->p->o.ddp_min ? 0 : io->len + 512;
	return true;
}

static void
check_read(struct test *t, struct io *io)
{
	blob_read_ok *ok = &io->res.r.blob_read_res_u.ok;
	uint8_t want[4096];

	if (io->res.r.status != BLOB_OK || ok->data.data_len != io->len ||
	    ok->data.data_val != (char *)io->buf) {
		t->errors++;
		fprintf(stderr, "FAIL: READ at %" PRIu64 ": status %d, %u octets\n", io->offset,
			io->res.r.status, ok->data.data_len);
		return;
	}
	for (uint32_t off = 0; off < io->len; off += sizeof(want)) {
		uint32_t k = io->len - off < sizeof(want) ? io->len - off : sizeof(want);

		blob_pattern(want, k, io->offset + off, t->p->seed);
		if (memcmp(want, io->buf + off, k) != 0) {
			for (uint32_t j = 0; j < k; j++)
				if (want[j] != io->buf[off + j]) {
					t->mismatch_at = io->offset + off + j;
					break;
				}
			t->errors++;
			fprintf(stderr, "FAIL: READ at %" PRIu64 ": data differs at octet %" PRIu64
					"\n",
				io->offset, t->mismatch_at);
			return;
		}
	}
}

/* One synchronous call; @return its status. */
static enum clnt_stat
sync_call(struct test *t, struct wn_rpcrdma_call *call)
{
	enum clnt_stat st = wn_rpcrdma_clnt_call(t->c, call);

	t->how_seen |= call->how;
	if (t->p->verbose)
		printf("  proc %u: %s, how %#x\n", call->proc, clnt_sperrno(st), call->how);
	return st;
}

/*
 * ECHO @p len octets with @p reply_max; the transport must have done @p want_how, or, with
 * @p want_err, the server must have answered RDMA_ERROR @p want_err.
 */
static void
test_echo(struct test *t, uint32_t len, uint32_t reply_max, uint32_t want_how, uint32_t want_err,
	  const char *what)
{
	blob_echo a = {0}, r = {0};
	struct wn_rpcrdma_call call;
	uint8_t *b = malloc(len);

	if (b == NULL)
		return;
	blob_pattern(b, len, 12345, t->p->seed);
	a.data.data_val = (char *)b;
	a.data.data_len = len;
	call_init(&call, BLOBPROC_ECHO, (xdrproc_t)xdr_blob_echo, &a, (xdrproc_t)xdr_blob_echo, &r);
	call.reply_max = reply_max;
	if (want_err != 0) {
		if (sync_call(t, &call) != RPC_CANTSEND || call.rdma_err != want_err)
			fail(t, what, &call);
		else
			printf("ok: %s (RDMA_ERROR %u)\n", what, call.rdma_err);
	} else if (sync_call(t, &call) != RPC_SUCCESS) {
		fail(t, what, &call);
	} else if (r.data.data_len != len || memcmp(r.data.data_val, b, len) != 0) {
		t->errors++;
		fprintf(stderr, "FAIL: %s: %u octets came back different\n", what, len);
	} else if ((call.how & want_how) != want_how) {
		t->errors++;
		fprintf(stderr, "FAIL: %s: transport did %#x, expected %#x\n", what, call.how,
			want_how);
	} else {
		printf("ok: %s (%u octets, how %#x)\n", what, len, call.how);
	}
	xdr_free((xdrproc_t)xdr_blob_echo, (char *)&r);
	free(b);
}

static void
test_list(struct test *t, uint64_t want_size)
{
	blob_list_res r = {0};
	struct wn_rpcrdma_call call;
	bool found = false;

	call_init(&call, BLOBPROC_LIST, NULL, NULL, (xdrproc_t)xdr_blob_list_res, &r);
	call.reply_max = 64 << 10;
	if (sync_call(t, &call) != RPC_SUCCESS) {
		fail(t, "LIST", &call);
		return;
	}
	for (blob_entry *e = r.entries; e != NULL; e = e->next)
		if (strcmp(e->name, t->p->name) == 0 && e->size == want_size)
			found = true;
	if (!found) {
		t->errors++;
		fprintf(stderr, "FAIL: LIST: %s of %" PRIu64 " octets not listed\n", t->p->name,
			want_size);
	} else {
		printf("ok: LIST\n");
	}
	xdr_free((xdrproc_t)xdr_blob_list_res, (char *)&r);
}

/* RPC-level errors the server must report (RFC 5531): unknown program, version, procedure. */
static void
test_rpc_errors(struct test *t)
{
	static const struct {
		uint32_t prog, vers, proc;
		enum clnt_stat want;
	} cases[] = {
		{BLOB_PROG + 1, BLOB_V1, BLOBPROC_NULL, RPC_PROGUNAVAIL},
		{BLOB_PROG, BLOB_V1 + 1, BLOBPROC_NULL, RPC_PROGVERSMISMATCH},
		{BLOB_PROG, BLOB_V1, 99, RPC_PROCUNAVAIL},
	};
	struct wn_rpcrdma_call call;
	uint32_t errors = t->errors;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		call_init(&call, cases[i].proc, NULL, NULL, NULL, NULL);
		call.prog = cases[i].prog;
		call.vers = cases[i].vers;
		if (sync_call(t, &call) != cases[i].want) {
			t->errors++;
			fprintf(stderr, "FAIL: prog %#x vers %u proc %u: %s, expected %s\n",
				cases[i].prog, cases[i].vers, cases[i].proc,
				clnt_sperrno(call.stat), clnt_sperrno(cases[i].want));
		}
	}
	if (t->errors == errors)
		printf("ok: RPC errors (PROG_UNAVAIL, PROG_MISMATCH, PROC_UNAVAIL)\n");
}

static void
test_remove(struct test *t)
{
	blob_name name = (char *)t->p->name;
	blob_stat st = BLOB_IO;
	blob_read_args ra = {.name = (char *)t->p->name, .offset = 0, .count = 16};
	blob_read_res rr = {0};
	struct wn_rpcrdma_call call;

	call_init(&call, BLOBPROC_REMOVE, (xdrproc_t)xdr_blob_name, &name,
		  (xdrproc_t)xdr_blob_stat, &st);
	if (sync_call(t, &call) != RPC_SUCCESS || st != BLOB_OK) {
		fail(t, "REMOVE", &call);
		return;
	}
	call_init(&call, BLOBPROC_READ, (xdrproc_t)xdr_blob_read_args, &ra,
		  (xdrproc_t)xdr_blob_read_res, &rr);
	if (sync_call(t, &call) != RPC_SUCCESS || rr.status != BLOB_NOENT) {
		t->errors++;
		fprintf(stderr, "FAIL: READ after REMOVE: %s status %d\n", clnt_sperrno(call.stat),
			rr.status);
	}
	else
		printf("ok: REMOVE\n");
	xdr_free((xdrproc_t)xdr_blob_read_res, (char *)&rr);
}

int
blob_client_test(const struct blob_params *p)
{
	struct test t = {.p = p};
	struct wn_rpcrdma_info in;
	uint64_t pieces = (p->size + p->io - 1) / p->io;
	size_t mem_len = (size_t)p->depth * p->io;
	uint32_t inl, want;

	t.c = blob_connect(p);
	if (t.c == NULL)
		return 1;
	wn_rpcrdma_clnt_info(t.c, &in);
	inl = in.call_inline;
	t.ios = calloc(p->depth, sizeof(*t.ios));
	t.mem = mmap(NULL, mem_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t.ios == NULL || t.mem == MAP_FAILED) {
		fprintf(stderr, "wn-rpc-blob: no memory for %u x %u octets\n", p->depth, p->io);
		return 1;
	}
	for (uint32_t i = 0; i < p->depth; i++)
		t.ios[i].buf = t.mem + (size_t)i * p->io;
	/* direct placement: the server reads and writes these buffers themselves */
	if (!p->no_reg && wn_rpcrdma_clnt_reg(t.c, t.mem, mem_len) != 0) {
		fprintf(stderr, "wn-rpc-blob: registering the data buffers failed\n");
		return 1;
	}
	if (pipeline(&t, p->nulls, prep_null, check_none) == 0)
		printf("ok: %u NULL calls, %u outstanding\n", p->nulls, p->depth);
	if (pipeline(&t, pieces, prep_write, check_write) == 0)
		printf("ok: WRITE %" PRIu64 " octets in %" PRIu64 " calls\n", p->size, pieces);
	if (pipeline(&t, pieces, prep_read, check_read) == 0 && t.mismatch_at == 0)
		printf("ok: READ %" PRIu64 " octets back, identical\n", p->size);
	test_list(&t, p->size);
	test_echo(&t, 200, 0, 0, 0, "ECHO short");
	test_echo(&t, 3 * inl, 8 * inl, WN_RPCRDMA_HOW_LONG_CALL | WN_RPCRDMA_HOW_REPLY_CHUNK, 0,
		  "ECHO long call, reply chunk");
	/* no reply chunk for a long reply: RFC 5666 read chunk and RDMA_DONE, or ERR_CHUNK from
	 * a server that does not do those (--no-read-reply) */
	if (p->o.no_read_reply)
		test_echo(&t, 3 * inl, 0, 0, WN_RPCRDMA_ERR_CHUNK,
			  "ECHO long call, long reply without a reply chunk");
	else
		test_echo(&t, 3 * inl, 0, WN_RPCRDMA_HOW_LONG_CALL | WN_RPCRDMA_HOW_READ_REPLY, 0,
			  "ECHO long call, long reply by read chunk (RDMA_DONE)");
	test_echo(&t, 200 << 10, 256 << 10, WN_RPCRDMA_HOW_LONG_CALL | WN_RPCRDMA_HOW_REPLY_CHUNK,
		  0, "ECHO 200 KiB");
	test_rpc_errors(&t);
	test_remove(&t);
	/* what the run must have used: DDP when the data is large enough */
	want = WN_RPCRDMA_HOW_LONG_CALL | WN_RPCRDMA_HOW_REPLY_CHUNK;
	if (p->io >= p->o.ddp_min)
		want |= WN_RPCRDMA_HOW_WRITE_CHUNK;
	if (p->io >= p->o.ddp_min && p->io + 256 > inl)
		want |= WN_RPCRDMA_HOW_READ_CHUNK;
	if ((t.how_seen & want) != want) {
		t.errors++;
		fprintf(stderr, "FAIL: transport paths used %#x, expected at least %#x\n",
			t.how_seen, want);
	}
	wn_rpcrdma_clnt_info(t.c, &in);
	blob_print_info("client", &in);
	wn_rpcrdma_clnt_destroy(t.c);
	munmap(t.mem, mem_len);
	free(t.ios);
	printf("%s: %u error(s)\n", t.errors == 0 ? "PASS" : "FAIL", t.errors);
	return t.errors == 0 ? 0 : 1;
}
