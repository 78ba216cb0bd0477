/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-rpc-blob --server: the blob store. Blobs live in one registered region (the store), so
 * READ results go to the client's write chunk by RDMA Write straight from the store.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "blob_app.h"

#define MAX_BLOBS 64

struct blob {
	char name[BLOB_NAME_MAX + 1];
	uint8_t *base;
	uint64_t cap;
	uint64_t size;
	bool used;
};

struct store {
	uint8_t *mem;
	uint64_t len;
	uint64_t next; /* bump allocator: a removed blob's space goes to the next new blob */
	uint64_t blob_cap;
	struct blob blobs[MAX_BLOBS];
};

static struct blob *
lookup(struct store *st, const char *name, bool create, uint64_t blob_cap)
{
	struct blob *free_b = NULL;

	for (int i = 0; i < MAX_BLOBS; i++) {
		struct blob *b = &st->blobs[i];

		if (b->used && strcmp(b->name, name) == 0)
			return b;
		if (!b->used && free_b == NULL)
			free_b = b;
	}
	if (!create || free_b == NULL)
		return NULL;
	if (free_b->base == NULL) {
		/* a new blob takes --blob-mb of the store, or what is left of it */
		uint64_t cap = st->len - st->next < blob_cap ? st->len - st->next : blob_cap;

		if (cap == 0)
			return NULL;
		free_b->base = st->mem + st->next;
		free_b->cap = cap;
		st->next += cap;
	}
	free_b->used = true;
	free_b->size = 0;
	snprintf(free_b->name, sizeof(free_b->name), "%s", name);
	return free_b;
}

static enum accept_stat
proc_null(void *args, void *res, struct wn_rpcrdma_req *rq)
{
	(void)args;
	(void)res;
	(void)rq;
	return SUCCESS;
}

static enum accept_stat
proc_write(void *args, void *res, struct wn_rpcrdma_req *rq)
{
	struct store *st = wn_rpcrdma_req_ctx(rq);
	blob_write_args *a = args;
	blob_write_res *r = res;
	struct blob *b = lookup(st, a->name, true, st->blob_cap);
	uint64_t end = a->offset + a->data.data_len;

	if (b == NULL) {
		r->status = BLOB_NOSPC;
		return SUCCESS;
	}
	if (end < a->offset || end > b->cap) {
		r->status = BLOB_NOSPC;
		return SUCCESS;
	}
	memcpy(b->base + a->offset, a->data.data_val, a->data.data_len);
	if (end > b->size)
		b->size = end;
	r->status = BLOB_OK;
	r->count = a->data.data_len;
	r->size = b->size;
	return SUCCESS;
}

static enum accept_stat
proc_read(void *args, void *res, struct wn_rpcrdma_req *rq)
{
	struct store *st = wn_rpcrdma_req_ctx(rq);
	blob_read_args *a = args;
	blob_read_res *r = res;
	struct blob *b = lookup(st, a->name, false, 0);
	uint64_t n;

	if (b == NULL) {
		r->status = BLOB_NOENT;
		return SUCCESS;
	}
	if (a->count > BLOB_DATA_MAX) {
		r->status = BLOB_INVAL;
		return SUCCESS;
	}
	n = a->offset >= b->size ? 0 : b->size - a->offset;
	if (n > a->count)
		n = a->count;
	r->status = BLOB_OK;
	/* by reference into the registered store: the transport RDMA-Writes from here */
	r->blob_read_res_u.ok.data.data_val = n > 0 ? (char *)b->base + a->offset : NULL;
	r->blob_read_res_u.ok.data.data_len = (u_int)n;
	r->blob_read_res_u.ok.eof = a->offset + n >= b->size;
	return SUCCESS;
}

/* READ's data points into the store: nothing to free */
static void
free_read(void *res, void *ctx)
{
	(void)res;
	(void)ctx;
}

static enum accept_stat
proc_list(void *args, void *res, struct wn_rpcrdma_req *rq)
{
	struct store *st = wn_rpcrdma_req_ctx(rq);
	blob_list_res *r = res;
	blob_entry **tail = &r->entries;

	(void)args;
	for (int i = 0; i < MAX_BLOBS; i++) {
		struct blob *b = &st->blobs[i];
		blob_entry *e;

		if (!b->used)
			continue;
		e = calloc(1, sizeof(*e));
		if (e == NULL)
			return SYSTEM_ERR;
		e->name = strdup(b->name);
		e->size = b->size;
		*tail = e;
		tail = &e->next;
		if (e->name == NULL)
			return SYSTEM_ERR;
	}
	return SUCCESS;
}

static enum accept_stat
proc_echo(void *args, void *res, struct wn_rpcrdma_req *rq)
{
	blob_echo *a = args, *r = res;

	(void)rq;
	/* hand the argument's buffer over to the result (freed with it) */
	*r = *a;
	a->data.data_val = NULL;
	a->data.data_len = 0;
	return SUCCESS;
}

static enum accept_stat
proc_remove(void *args, void *res, struct wn_rpcrdma_req *rq)
{
	struct store *st = wn_rpcrdma_req_ctx(rq);
	blob_name *a = args;
	blob_stat *r = res;
	struct blob *b = lookup(st, *a, false, 0);

	if (b == NULL) {
		*r = BLOB_NOENT;
		return SUCCESS;
	}
	b->used = false;
	b->size = 0;
	*r = BLOB_OK;
	return SUCCESS;
}

static const struct wn_rpcrdma_svc_proc blob_procs[] = {
	[BLOBPROC_NULL] = {.fn = proc_null},
	[BLOBPROC_WRITE] = {.fn = proc_write,
			    .xargs = (xdrproc_t)xdr_blob_write_args,
			    .args_size = sizeof(blob_write_args),
			    .xres = (xdrproc_t)xdr_blob_write_res,
			    .res_size = sizeof(blob_write_res)},
	[BLOBPROC_READ] = {.fn = proc_read,
			   .xargs = (xdrproc_t)xdr_blob_read_args,
			   .args_size = sizeof(blob_read_args),
			   .xres = (xdrproc_t)xdr_blob_read_res,
			   .res_size = sizeof(blob_read_res),
			   .flags = WN_RPCRDMA_PROC_DDP_RESULT,
			   .free_res = free_read},
	[BLOBPROC_LIST] = {.fn = proc_list,
			   .xres = (xdrproc_t)xdr_blob_list_res,
			   .res_size = sizeof(blob_list_res)},
	[BLOBPROC_ECHO] = {.fn = proc_echo,
			   .xargs = (xdrproc_t)xdr_blob_echo,
			   .args_size = sizeof(blob_echo),
			   .xres = (xdrproc_t)xdr_blob_echo,
			   .res_size = sizeof(blob_echo)},
	[BLOBPROC_REMOVE] = {.fn = proc_remove,
			     .xargs = (xdrproc_t)xdr_blob_name,
			     .args_size = sizeof(blob_name),
			     .xres = (xdrproc_t)xdr_blob_stat,
			     .res_size = sizeof(blob_stat)},
};

int
blob_server(const struct blob_params *p)
{
	struct store st = {.len = (uint64_t)p->store_mb << 20, .blob_cap = (uint64_t)p->blob_mb << 20};
	struct wn_rpcrdma_info in;
	struct wn_rpcrdma_svc *s;
	uint64_t calls = 0;
	int n, ret;

	st.mem = mmap(NULL, st.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (st.mem == MAP_FAILED) {
		perror("wn-rpc-blob: store");
		return 1;
	}
	s = wn_rpcrdma_svc_create(p->addr, &p->o);
	if (s == NULL) {
		fprintf(stderr, "wn-rpc-blob: listening on %s port %u: %s\n", p->addr, p->o.port,
			strerror(errno));
		return 1;
	}
	ret = wn_rpcrdma_svc_register(s, BLOB_PROG, BLOB_V1, blob_procs,
				      sizeof(blob_procs) / sizeof(blob_procs[0]), &st);
	if (ret == 0)
		ret = wn_rpcrdma_svc_reg(s, st.mem, st.len);
	if (ret != 0) {
		fprintf(stderr, "wn-rpc-blob: %s\n", strerror(-ret));
		wn_rpcrdma_svc_destroy(s);
		return 1;
	}
	printf("wn-rpc-blob: serving BLOB_PROG on %s port %u (store %u MiB, %u MiB per blob)\n",
	       p->addr, p->o.port, p->store_mb, p->blob_mb);
	fflush(stdout);
	while (!blob_quit && (p->max_calls == 0 || calls < p->max_calls)) {
		n = wn_rpcrdma_svc_poll(s, 200);
		if (n < 0) {
			fprintf(stderr, "wn-rpc-blob: %s\n", strerror(-n));
			break;
		}
		calls += (uint64_t)n;
	}
	/* let the last replies reach the wire before disconnecting */
	for (int i = 0; i < 3; i++)
		wn_rpcrdma_svc_poll(s, 100);
	wn_rpcrdma_svc_info(s, &in);
	blob_print_info("server", &in);
	wn_rpcrdma_svc_destroy(s);
	munmap(st.mem, st.len);
	return 0;
}
