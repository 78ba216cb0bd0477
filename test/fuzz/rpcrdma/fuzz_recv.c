/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for what an RPC-over-RDMA receiver parses from the wire before it
 * touches memory: the transport header (wn_rpcrdma_decode), the server's plan for a call
 * (wn_rpcrdma_proto_call_plan: ERR_CHUNK, discard or a plan within bounds), the client's check
 * of a reply against the chunks its call offered (wn_rpcrdma_proto_reply_check), RFC 8797
 * connection private data, and the transport's option parser. The first octet picks the
 * offer; invariants: plans stay inside the limits they were given, accepted replies never
 * claim more than was offered.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rpcrdma_proto.h"
#include "wn_rpcrdma.h"
#include "wn_rpcrdma_xprt.h"

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
	static struct wn_rpcrdma_hdr h;
	static struct rpcrdma_call_plan cp;
	static struct rpcrdma_reply_plan rp;
	struct rpcrdma_offer o;
	struct wn_rpcrdma_cp pd;
	struct wn_rpcrdma_opts opts;
	const uint32_t max = 1u << 20;
	uint8_t sel;
	int ret;

	if (size < 1)
		return 0;
	sel = data[0];
	data++;
	size--;
	/* connection private data: decodes to sizes in 1..256 KiB or to the defaults */
	ret = wn_rpcrdma_cp_decode(data, size, &pd);
	check(pd.inline_send >= 1024 && pd.inline_send <= 256 * 1024);
	check(pd.inline_recv >= 1024 && pd.inline_recv <= 256 * 1024);
	check(ret == 0 || (pd.inline_send == 1024 && pd.inline_recv == 1024 && pd.flags == 0));
	/* an option "name=value" from the input */
	if (size > 0 && size < 64) {
		char s[64], *eq;

		memcpy(s, data, size);
		s[size] = '\0';
		eq = strchr(s, '=');
		if (eq != NULL)
			*eq++ = '\0';
		wn_rpcrdma_opts_default(&opts);
		wn_rpcrdma_opts_set(&opts, s, eq);
		check(opts.credits >= 1 && opts.credits <= 1024);
		check(opts.inline_send >= 256 && opts.inline_recv >= 256);
	}
	if (wn_rpcrdma_decode(data, size, &h) != WN_RPCRDMA_OK)
		return 0;
	ret = wn_rpcrdma_proto_call_plan(&h, (uint32_t)size, max, &cp);
	check(ret == 0 || ret == WN_RPCRDMA_ERR_CHUNK || ret == RPCRDMA_PLAN_DISCARD);
	if (ret == 0) {
		check(cp.read_bytes <= max && cp.nrch <= h.nreads);
		check(cp.reply_cap <= max);
		check(!cp.p0 || cp.rch[0].pos == 0);
		check(h.proc != WN_RPCRDMA_NOMSG || cp.p0);
		for (uint32_t i = 0; i + 1 < cp.nrch; i++)
			check(cp.rch[i].pos < cp.rch[i + 1].pos && cp.rch[i].pos % 4 == 0);
		for (uint32_t i = 0; i < h.nwrites; i++)
			check(cp.wcap[i] <= max);
	}
	/* a client that offered a write and/or a reply chunk */
	memset(&o, 0, sizeof(o));
	o.write = sel & 1;
	o.reply = sel & 2;
	o.wseg = (struct wn_rpcrdma_seg){.handle = 0x100 | (sel >> 4), .length = 4096 * (sel >> 2),
					 .offset = 0x1000};
	o.rseg = (struct wn_rpcrdma_seg){.handle = 0x200, .length = 8192, .offset = 0x3000};
	if (wn_rpcrdma_proto_reply_check(&h, &o, max, &rp) == 0) {
		check(h.nwrites == (o.write ? 1u : 0u));
		check(rp.placed <= o.wseg.length && rp.reply_len <= o.rseg.length);
		check(rp.read_bytes <= max);
		if (h.proc == WN_RPCRDMA_NOMSG)
			check((rp.reply_len > 0) != rp.p0);
	}
	return 0;
}
