/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receiver checks of RPC-over-RDMA headers (RFC 8166 §3.4, §4.3, §4.5); see rpcrdma_proto.h.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rpcrdma_proto.h"

int
wn_rpcrdma_proto_read_chunks(const struct wn_rpcrdma_hdr *h, uint32_t max,
			     struct rpcrdma_rchunk *out, uint32_t cap)
{
	uint64_t total = 0;
	uint32_t n = 0;

	for (uint32_t i = 0; i < h->nreads; i++) {
		const struct wn_rpcrdma_read_seg *rs = &h->reads[i];

		if (rs->position % 4 != 0)
			return -1;
		if (n > 0 && out[n - 1].pos == rs->position) {
			out[n - 1].nsegs++;
			out[n - 1].len += rs->seg.length;
		} else {
			if (n > 0 && rs->position < out[n - 1].pos)
				return -1; /* not ascending, or a chunk split in the list */
			if (n == cap)
				return -1;
			out[n].pos = rs->position;
			out[n].first = i;
			out[n].nsegs = 1;
			out[n].len = rs->seg.length;
			n++;
		}
		total += rs->seg.length;
		if (total > max || out[n - 1].len > max)
			return -1;
	}
	return (int)n;
}

static void
inv_key(uint32_t *key, bool *mixed, uint32_t handle)
{
	if (*key == 0)
		*key = handle;
	else if (*key != handle)
		*mixed = true;
}

int
wn_rpcrdma_proto_call_plan(const struct wn_rpcrdma_hdr *h, uint32_t len, uint32_t max,
			struct rpcrdma_call_plan *plan)
{
	uint64_t cap;
	bool mixed = false;
	int n;

	memset(plan, 0, sizeof(*plan));
	if (len < WN_RPCRDMA_MIN_MSG_LEN)
		return RPCRDMA_PLAN_DISCARD;
	n = wn_rpcrdma_proto_read_chunks(h, max, plan->rch, WN_RPCRDMA_MAX_READ_SEGS);
	if (n < 0)
		return WN_RPCRDMA_ERR_CHUNK;
	plan->nrch = (uint32_t)n;
	plan->p0 = n > 0 && plan->rch[0].pos == 0;
	for (uint32_t i = 0; i < plan->nrch; i++)
		plan->read_bytes += plan->rch[i].len;
	/* RDMA_NOMSG: the Payload stream is in a position-zero read chunk (a call has no other
	 * way to send it); RDMA_MSG: the Payload stream follows the header */
	if (h->proc == WN_RPCRDMA_NOMSG && !plan->p0)
		return WN_RPCRDMA_ERR_CHUNK;
	if (h->proc != WN_RPCRDMA_NOMSG && plan->p0)
		return WN_RPCRDMA_ERR_CHUNK;
	if (h->proc != WN_RPCRDMA_NOMSG && h->hdr_len + 4 > len)
		return WN_RPCRDMA_ERR_CHUNK; /* no room for an XID after the header */
	plan->nwr = 1;
	for (uint32_t i = 0; i < h->nreads; i++) {
		if (h->reads[i].seg.length == 0)
			continue;
		plan->nwr++;
		inv_key(&plan->inv_rkey, &mixed, h->reads[i].seg.handle);
	}
	for (uint32_t i = 0; i < h->nwrites; i++) {
		cap = 0;
		for (uint32_t j = 0; j < h->writes[i].nsegs; j++) {
			cap += h->writes[i].segs[j].length;
			inv_key(&plan->inv_rkey, &mixed, h->writes[i].segs[j].handle);
		}
		plan->wcap[i] = cap > max ? max : (uint32_t)cap;
		plan->nwr += h->writes[i].nsegs;
	}
	if (h->has_reply) {
		cap = 0;
		for (uint32_t j = 0; j < h->reply.nsegs; j++) {
			cap += h->reply.segs[j].length;
			inv_key(&plan->inv_rkey, &mixed, h->reply.segs[j].handle);
		}
		plan->reply_cap = cap > max ? max : (uint32_t)cap;
		plan->nwr += h->reply.nsegs;
	}
	/* Send With Invalidate names one handle: only when every chunk uses the same one */
	if (mixed)
		plan->inv_rkey = 0;
	return 0;
}

/* A returned chunk must be the offered one with a length not larger. */
static bool
seg_ok(const struct wn_rpcrdma_chunk *c, const struct wn_rpcrdma_seg *offered, uint32_t *used)
{
	if (c->nsegs != 1 || c->segs[0].handle != offered->handle ||
	    c->segs[0].offset != offered->offset || c->segs[0].length > offered->length)
		return false;
	*used = c->segs[0].length;
	return true;
}

int
wn_rpcrdma_proto_reply_check(const struct wn_rpcrdma_hdr *h, const struct rpcrdma_offer *o,
			  uint32_t max, struct rpcrdma_reply_plan *plan)
{
	uint32_t used = 0;
	int n;

	memset(plan, 0, sizeof(*plan));
	if (h->proc != WN_RPCRDMA_MSG && h->proc != WN_RPCRDMA_NOMSG && h->proc != WN_RPCRDMA_MSGP)
		return -1;
	if (h->nwrites != (o->write ? 1u : 0u))
		return -1;
	if (h->nwrites == 1 && !seg_ok(&h->writes[0], &o->wseg, &plan->placed))
		return -1;
	if (h->has_reply) {
		if (!o->reply || !seg_ok(&h->reply, &o->rseg, &used))
			return -1;
	}
	n = wn_rpcrdma_proto_read_chunks(h, max, plan->rch, WN_RPCRDMA_MAX_READ_SEGS);
	if (n < 0)
		return -1;
	plan->nrch = (uint32_t)n;
	plan->p0 = n > 0 && plan->rch[0].pos == 0;
	for (uint32_t i = 0; i < plan->nrch; i++)
		plan->read_bytes += plan->rch[i].len;
	if (h->proc == WN_RPCRDMA_NOMSG) {
		/* the Payload stream is in exactly one place */
		if ((used > 0) == plan->p0)
			return -1;
		plan->reply_len = used;
	} else if (plan->p0) {
		return -1;
	}
	return 0;
}
