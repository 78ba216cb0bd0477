/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the RPC-over-RDMA v1 header decoder: whatever decodes
 * is re-encoded and must reproduce the input's header octets exactly (XDR has
 * one encoding per value), and decode again to the same length; whatever
 * fails maps to ERR_VERS or ERR_CHUNK and the error reply decodes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_rpcrdma.h"

static void
check(int cond)
{
	if (!cond)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct wn_rpcrdma_hdr h, g;
	static uint8_t out[4096];

	enum wn_rpcrdma_status st = wn_rpcrdma_decode(size ? data : NULL, size, &h);
	check(wn_rpcrdma_status_str(st) != NULL);
	if (st != WN_RPCRDMA_OK) {
		uint32_t err = wn_rpcrdma_status_errcode(st);
		check(err == (st == WN_RPCRDMA_BAD_VERS ? 1u : 2u));
		int n = wn_rpcrdma_error_build(out, sizeof(out), h.xid, 1, err);
		check(n == (err == 1 ? 28 : 20));
		check(wn_rpcrdma_decode(out, (size_t)n, &g) == WN_RPCRDMA_OK && g.err == err);
		return 0;
	}
	check(h.hdr_len <= size && h.hdr_len >= 16 && h.hdr_len % 4 == 0);
	check(h.nreads <= WN_RPCRDMA_MAX_READ_SEGS && h.nwrites <= WN_RPCRDMA_MAX_WRITE_CHUNKS);
	if (h.proc != WN_RPCRDMA_MSG && h.proc != WN_RPCRDMA_MSGP)
		check(h.hdr_len == size);
	int n = wn_rpcrdma_encode(&h, out, sizeof(out));
	check(n == (int)h.hdr_len);
	check(memcmp(out, data, (size_t)n) == 0);
	check(wn_rpcrdma_decode(out, (size_t)n, &g) == WN_RPCRDMA_OK && g.hdr_len == h.hdr_len);
	return 0;
}
