/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for lib/rpcrdma's decoding XDR stream (rpcrdma_xdr.c) carrying what the
 * programs decode with it: RPC call and reply headers (libtirpc's xdr_callmsg /
 * xdr_replymsg) and the rpcgen routines of the blob service, NFSv3 and MOUNT. The table
 * holds every argument a server of ours decodes from an untrusted call (the blob service's
 * WRITE, READ, ECHO and REMOVE; NFSv3's GETATTR, LOOKUP, READ, WRITE, FSINFO; MOUNT's
 * dirpath; an AUTH_SYS credential) and every result our clients decode from a reply. The
 * input is a control block (chunk positions and lengths, MSGP alignment, which routine) and
 * the octets the chunks and the reduced stream are cut from. Whatever decodes is freed
 * (leaks fail under ASan) and, for the calls, encoded again with reduction and decoded to
 * the same values.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "blob.h"
#include "nfs3.h"
#include "rpcrdma_xdr.h"

struct rt {
	xdrproc_t proc;
	size_t size;
};

static const struct rt routines[] = {
	{(xdrproc_t)xdr_blob_write_args, sizeof(blob_write_args)},
	{(xdrproc_t)xdr_blob_read_res, sizeof(blob_read_res)},
	{(xdrproc_t)xdr_blob_list_res, sizeof(blob_list_res)},
	{(xdrproc_t)xdr_WRITE3args, sizeof(WRITE3args)},
	{(xdrproc_t)xdr_READ3res, sizeof(READ3res)},
	{(xdrproc_t)xdr_LOOKUP3res, sizeof(LOOKUP3res)},
	{(xdrproc_t)xdr_FSINFO3res, sizeof(FSINFO3res)},
	{(xdrproc_t)xdr_GETATTR3res, sizeof(GETATTR3res)},
	{(xdrproc_t)xdr_mountres3, sizeof(mountres3)},
	{(xdrproc_t)xdr_WRITE3res, sizeof(WRITE3res)},
	/* what wn-rpc-nfsd and wn-rpc-blob's server decode from a client's call */
	{(xdrproc_t)xdr_READ3args, sizeof(READ3args)},
	{(xdrproc_t)xdr_LOOKUP3args, sizeof(LOOKUP3args)},
	{(xdrproc_t)xdr_GETATTR3args, sizeof(GETATTR3args)},
	{(xdrproc_t)xdr_FSINFO3args, sizeof(FSINFO3args)},
	{(xdrproc_t)xdr_dirpath, sizeof(dirpath)},
	{(xdrproc_t)xdr_blob_read_args, sizeof(blob_read_args)},
	{(xdrproc_t)xdr_blob_echo, sizeof(blob_echo)},
	{(xdrproc_t)xdr_blob_name, sizeof(blob_name)},
	/* the rest of what wn-rpc-blob's client decodes from a reply */
	{(xdrproc_t)xdr_blob_write_res, sizeof(blob_write_res)},
	{(xdrproc_t)xdr_blob_stat, sizeof(blob_stat)},
	/* an AUTH_SYS credential, as wn_rpcrdma_req_auth_sys() decodes it for a server */
	{(xdrproc_t)xdr_authunix_parms, sizeof(struct authunix_parms)},
};

static void
check(int cond)
{
	if (!cond)
		abort();
}

static uint32_t
get16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t obj[4096], again[4096], enc[1 << 16];
	struct rpcrdma_xins rch[2], wch[1];
	struct rpcrdma_xitem items[4];
	struct rpcrdma_xdec d;
	struct rpcrdma_xenc e;
	const struct rt *r;
	uint32_t nr, nw, off;
	XDR x;

	/* control: routine, kind, 2 read chunks (pos, len), 1 write chunk (len), msgp */
	if (size < 16)
		return 0;
	r = &routines[data[0] % (sizeof(routines) / sizeof(routines[0]))];
	nr = data[1] & 3;
	nw = (data[1] >> 2) & 1;
	if (nr > 2)
		nr = 2;
	off = 16;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t len = get16(data + 2 + 4 * i + 2) % 512;

		rch[i].pos = (get16(data + 2 + 4 * i) % 256) * 4 + (i > 0 ? rch[0].pos : 0);
		if (off + len > size)
			len = 0;
		rch[i].len = len;
		rch[i].ptr = data + off;
		off += len;
	}
	wch[0].len = get16(data + 10) % 512;
	if (off + wch[0].len > size)
		wch[0].len = 0;
	wch[0].ptr = data + off;
	off += nw ? wch[0].len : 0;
	wn_rpcrdma_xdec_init(&x, &d, data + off, (uint32_t)(size - off), rch, nr, wch, nw);
	if (data[12] & 1)
		wn_rpcrdma_xdec_msgp(&d, 1u << (data[12] >> 4), data[13], data[14]);
	/* an RPC header, then the routine's data */
	if (data[15] & 1) {
		struct rpc_msg m;
		char cred[MAX_AUTH_BYTES], verf[MAX_AUTH_BYTES];

		memset(&m, 0, sizeof(m));
		m.rm_call.cb_cred.oa_base = cred;
		m.rm_call.cb_verf.oa_base = verf;
		if (!xdr_callmsg(&x, &m))
			return 0;
	} else if (data[15] & 2) {
		struct rpc_msg m;
		char verf[MAX_AUTH_BYTES];

		memset(&m, 0, sizeof(m));
		memset(obj, 0, r->size);
		m.acpted_rply.ar_verf.oa_base = verf;
		m.acpted_rply.ar_results.where = (char *)obj;
		m.acpted_rply.ar_results.proc = r->proc;
		xdr_replymsg(&x, &m);
		xdr_free(r->proc, (char *)obj); /* what a partial decode allocated, too */
		return 0;
	}
	memset(obj, 0, r->size);
	if (!r->proc(&x, obj)) {
		xdr_free(r->proc, (char *)obj);
		return 0;
	}
	/* what decoded encodes again, reduced, and decodes to the same encoding */
	wn_rpcrdma_xenc_init(&x, &e, enc, sizeof(enc), 64, items, 4);
	if (r->proc(&x, obj) && !e.overflow) {
		struct rpcrdma_xins ins[4];
		uint8_t enc2[1 << 16];
		struct rpcrdma_xenc e2;

		for (uint32_t i = 0; i < e.nitems; i++)
			ins[i] = (struct rpcrdma_xins){.pos = items[i].pos, .len = items[i].len,
						       .ptr = items[i].ptr};
		memset(again, 0, r->size);
		wn_rpcrdma_xdec_init(&x, &d, enc, e.off, ins, e.nitems, NULL, 0);
		check(r->proc(&x, again) && wn_rpcrdma_xdec_done(&d));
		wn_rpcrdma_xenc_init(&x, &e2, enc2, sizeof(enc2), 0, NULL, 0);
		check(r->proc(&x, again) && e2.upos == e.upos);
		xdr_free(r->proc, (char *)again);
	}
	xdr_free(r->proc, (char *)obj);
	return 0;
}
