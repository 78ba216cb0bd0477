/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DDP segment parser (RFC 5041 §4, §5, §7) with the RDMAP checks decidable
 * from one segment (RFC 5040 §7.2, RFC 7306 §6.3, §8.2), and the segmentation
 * helper. The header builder is rdmap.c's (the opcode table drives it).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wn_wire_ddp.h"

#define CAUSE(l, e, c)                                                                             \
	{                                                                                          \
		.layer = (l), .etype = (e), .code = (c)                                            \
	}

static const struct {
	struct wn_term_cause cause;
	const char *name;
} reasons[WN_DDP_R_COUNT] = {
	[WN_DDP_R_OK] = {CAUSE(0, 0, 0), "ok"},
	/* No code is named for a truncated header; RDMAP cannot act on it. */
	[WN_DDP_R_TRUNCATED] = {CAUSE(WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP,
				      WN_TERM_RO_UNSPECIFIED),
				"DDP header truncated"},
	/* RFC 5041 §7.2: invalid DDP version (tagged 0x04, untagged 0x06; set per T bit) */
	[WN_DDP_R_DDP_VERSION] = {CAUSE(WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED,
					WN_TERM_DU_INVALID_VERSION),
				  "invalid DDP version"},
	/* RFC 5040 §7.2 item 3 */
	[WN_DDP_R_RDMAP_VERSION] = {CAUSE(WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP,
					  WN_TERM_RO_INVALID_VERSION),
				    "invalid RDMAP version"},
	/* RFC 5040 §7.2 item 2 */
	[WN_DDP_R_OPCODE] = {CAUSE(WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP,
				   WN_TERM_RO_UNEXPECTED_OP),
			     "unexpected opcode"},
	[WN_DDP_R_OPCODE_T] = {CAUSE(WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP,
				     WN_TERM_RO_UNEXPECTED_OP),
			       "opcode in the wrong buffer model"},
	/* RFC 5041 §7.1: QN valid for the stream */
	[WN_DDP_R_QN] = {CAUSE(WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_INVALID_QN),
			 "invalid QN for the opcode"},
	/* the QN 1/2/3 buffer holds exactly one header: a longer message does not fit */
	[WN_DDP_R_NOT_LAST] = {CAUSE(WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_TOO_LONG),
			       "single-segment opcode without L"},
	[WN_DDP_R_MO] = {CAUSE(WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_INVALID_MO),
			 "single-segment opcode with MO != 0"},
	[WN_DDP_R_HDR_SHORT] = {CAUSE(WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP,
				      WN_TERM_RO_UNSPECIFIED),
				"RDMAP header or Immediate Data too short"},
	[WN_DDP_R_TOO_LONG] = {CAUSE(WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_TOO_LONG),
			       "DDP message too long"},
	/* RFC 5041 §7.1: TO + length must not wrap */
	[WN_DDP_R_TO_WRAP] = {CAUSE(WN_TERM_LAYER_DDP, WN_TERM_DDP_TAGGED, WN_TERM_DT_TO_WRAP),
			      "tagged offset wraps"},
	/* RFC 5040 §7.2 item 4e */
	[WN_DDP_R_READ_WRAP] = {CAUSE(WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_PROT,
				      WN_TERM_RP_TO_WRAP),
				"Read Request source offset wraps"},
	[WN_DDP_R_AOPCODE] = {CAUSE(WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP,
				    WN_TERM_RO_UNEXPECTED_OP),
			      "invalid atomic AOpCode"},
	/* RFC 7306 §8.2 */
	[WN_DDP_R_ATOMIC_ALIGN] = {CAUSE(WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP,
					 WN_TERM_RO_CATA_STREAM),
				   "atomic target not 64-bit aligned"},
};

struct wn_term_cause
wn_wire_ddp_reason_cause(enum wn_ddp_reason r)
{
	struct wn_term_cause none = {0};

	if ((unsigned int)r >= WN_DDP_R_COUNT)
		return none;
	return reasons[r].cause;
}

const char *
wn_wire_ddp_reason_str(enum wn_ddp_reason r)
{
	if ((unsigned int)r >= WN_DDP_R_COUNT)
		return "unknown";
	return reasons[r].name;
}

static int
reject(struct wn_ddp_error *err, enum wn_ddp_reason r, bool tagged, bool hdr_valid)
{
	if (err != NULL) {
		err->reason = r;
		err->cause = reasons[r].cause;
		if (r == WN_DDP_R_DDP_VERSION && tagged) {
			err->cause.etype = WN_TERM_DDP_TAGGED;
			err->cause.code = WN_TERM_DT_INVALID_VERSION;
		}
		err->hdr_valid = hdr_valid;
	}
	return -EBADMSG;
}

static void
parse_read_req(const uint8_t *p, struct wn_rdmap_read_req *rr)
{
	rr->sink_stag = wn_wire_get_be32(p + offsetof(struct wn_rdmap_read_req_hdr, sink_stag));
	rr->sink_to = wn_wire_get_be64(p + offsetof(struct wn_rdmap_read_req_hdr, sink_to));
	rr->size = wn_wire_get_be32(p + offsetof(struct wn_rdmap_read_req_hdr, size));
	rr->src_stag = wn_wire_get_be32(p + offsetof(struct wn_rdmap_read_req_hdr, src_stag));
	rr->src_to = wn_wire_get_be64(p + offsetof(struct wn_rdmap_read_req_hdr, src_to));
}

static void
parse_atomic_req(const uint8_t *p, struct wn_rdmap_atomic_req *ar)
{
	ar->aopcode = (uint8_t)(wn_wire_get_be32(p) & WN_RDMAP_AOPCODE_MASK);
	ar->req_id = wn_wire_get_be32(p + offsetof(struct wn_rdmap_atomic_req_hdr, req_id));
	ar->stag = wn_wire_get_be32(p + offsetof(struct wn_rdmap_atomic_req_hdr, stag));
	ar->to = wn_wire_get_be64(p + offsetof(struct wn_rdmap_atomic_req_hdr, to));
	ar->add_swap = wn_wire_get_be64(p + offsetof(struct wn_rdmap_atomic_req_hdr, add_swap));
	ar->add_swap_mask =
		wn_wire_get_be64(p + offsetof(struct wn_rdmap_atomic_req_hdr, add_swap_mask));
	ar->compare = wn_wire_get_be64(p + offsetof(struct wn_rdmap_atomic_req_hdr, compare));
	ar->compare_mask =
		wn_wire_get_be64(p + offsetof(struct wn_rdmap_atomic_req_hdr, compare_mask));
}

/* The opcode's own header: lengths and RDMAP field checks. */
static int
parse_rdmap(const uint8_t *u, size_t len, const struct wn_rdmap_op *op, struct wn_ddp_seg *seg,
	    struct wn_ddp_error *err)
{
	const uint8_t *p = u + op->ddp_hdr_len;
	size_t body = len - op->ddp_hdr_len;

	if (len < op->min_ulpdu)
		return reject(err, WN_DDP_R_HDR_SHORT, false, true);
	if (len > op->max_ulpdu)
		return reject(err, WN_DDP_R_TOO_LONG, false, true);
	switch (seg->h.opcode) {
	case WN_RDMAP_READ_REQ:
		parse_read_req(p, &seg->u.rreq);
		/* RFC 5040 §7.2 4e; a zero-length Read is not validated (§5.2) */
		if (seg->u.rreq.size != 0 &&
		    seg->u.rreq.src_to + (seg->u.rreq.size - 1) < seg->u.rreq.src_to)
			return reject(err, WN_DDP_R_READ_WRAP, false, true);
		break;
	case WN_RDMAP_TERMINATE:
		/* strict verdict kept in seg->u.term.status; the ULP gets it anyway */
		(void)wn_wire_rdmap_term_parse(p, body, &seg->u.term);
		break;
	case WN_RDMAP_IMMEDIATE:
	case WN_RDMAP_IMMEDIATE_SE:
		/* RFC 7306 §6.3: exactly 8 octets (length checked above) */
		seg->u.imm = wn_wire_get_be64(p);
		break;
	case WN_RDMAP_ATOMIC_REQ:
		parse_atomic_req(p, &seg->u.areq);
		if (seg->u.areq.aopcode != WN_RDMAP_AOP_FETCH_ADD &&
		    seg->u.areq.aopcode != WN_RDMAP_AOP_CMP_SWAP)
			return reject(err, WN_DDP_R_AOPCODE, false, true);
		/* RFC 7306 §8.2: Remote Operation / catastrophic, localized */
		if ((seg->u.areq.to & 7u) != 0)
			return reject(err, WN_DDP_R_ATOMIC_ALIGN, false, true);
		break;
	case WN_RDMAP_ATOMIC_RESP:
		seg->u.aresp.req_id = wn_wire_get_be32(p);
		seg->u.aresp.orig = wn_wire_get_be64(p + 4);
		break;
	default:
		break;
	}
	return 0;
}

int
wn_wire_ddp_parse(const uint8_t *u, size_t len, unsigned int flags, struct wn_ddp_seg *seg,
	     struct wn_ddp_error *err)
{
	if (seg == NULL || (u == NULL && len != 0))
		return -EINVAL;
	/* the opcode's union member is written whole by parse_rdmap(); skip it here */
	memset(&seg->h, 0, sizeof(seg->h));
	seg->dv = seg->rv = 0;
	seg->hdr_len = 0;
	seg->payload = NULL;
	seg->payload_len = 0;
	if (err != NULL)
		memset(err, 0, sizeof(*err));
	if (len < 1)
		return reject(err, WN_DDP_R_TRUNCATED, false, false);

	bool tagged = wn_ddp_ctrl_tagged(u[0]);
	size_t dlen = tagged ? WN_DDP_TAGGED_HDR_LEN : WN_DDP_UNTAGGED_HDR_LEN;
	seg->h.tagged = tagged;
	seg->h.last = wn_ddp_ctrl_last(u[0]);
	seg->dv = wn_ddp_ctrl_dv(u[0]);
	/* RFC 5041 §7.2: DDP version first; it is decidable from octet 0 alone */
	if (seg->dv != WN_DDP_VERSION)
		return reject(err, WN_DDP_R_DDP_VERSION, tagged, len >= dlen);
	if (len < dlen)
		return reject(err, WN_DDP_R_TRUNCATED, tagged, false);
	seg->rv = wn_rdmap_ctrl_rv(u[1]);
	seg->h.opcode = wn_rdmap_ctrl_opcode(u[1]);
	if (tagged) {
		seg->h.stag = wn_wire_get_be32(u + offsetof(struct wn_ddp_tagged_hdr, stag));
		seg->h.to = wn_wire_get_be64(u + offsetof(struct wn_ddp_tagged_hdr, to));
	} else {
		seg->h.inv_stag =
			wn_wire_get_be32(u + offsetof(struct wn_ddp_untagged_hdr, inv_stag));
		seg->h.qn = wn_wire_get_be32(u + offsetof(struct wn_ddp_untagged_hdr, qn));
		seg->h.msn = wn_wire_get_be32(u + offsetof(struct wn_ddp_untagged_hdr, msn));
		seg->h.mo = wn_wire_get_be32(u + offsetof(struct wn_ddp_untagged_hdr, mo));
	}
	seg->hdr_len = (uint16_t)dlen;
	seg->payload = u + dlen;
	seg->payload_len = (uint32_t)(len - dlen);

	/* RFC 5040 §7.2 items 2-3 */
	if (seg->rv != WN_RDMAP_VERSION)
		return reject(err, WN_DDP_R_RDMAP_VERSION, tagged, true);
	const struct wn_rdmap_op *op = &wn_wire_rdmap_ops[seg->h.opcode];
	if (!op->valid || (op->rfc7306 && !(flags & WN_DDP_F_RFC7306)))
		return reject(err, WN_DDP_R_OPCODE, tagged, true);
	if (op->tagged != tagged)
		return reject(err, WN_DDP_R_OPCODE_T, tagged, true);

	if (tagged) {
		/*
		 * RFC 5041 §7.1: the last octet's TO must not wrap; zero-length
		 * tagged segments are not checked (§5.2)
		 */
		if (seg->payload_len != 0 && seg->h.to + (seg->payload_len - 1) < seg->h.to)
			return reject(err, WN_DDP_R_TO_WRAP, tagged, true);
		return 0;
	}
	/* RFC 5041 §7.1: QN valid (each opcode owns exactly one queue) */
	if (seg->h.qn != op->qn)
		return reject(err, WN_DDP_R_QN, tagged, true);
	if (op->single) {
		if (!seg->h.last)
			return reject(err, WN_DDP_R_NOT_LAST, tagged, true);
		if (seg->h.mo != 0)
			return reject(err, WN_DDP_R_MO, tagged, true);
	}
	/* RFC 5041 §5.2: message length (MO + last payload) below 2^32 */
	if ((uint64_t)seg->h.mo + seg->payload_len > UINT32_MAX)
		return reject(err, WN_DDP_R_TOO_LONG, tagged, true);
	int rc = parse_rdmap(u, len, op, seg, err);
	if (rc < 0)
		return rc;
	seg->hdr_len = (uint16_t)(op->payload ? dlen : len);
	seg->payload = u + seg->hdr_len;
	seg->payload_len = (uint32_t)(len - seg->hdr_len);
	return 0;
}

int
wn_wire_ddp_seg_iter_init(struct wn_ddp_seg_iter *it, uint32_t msg_len, uint32_t mulpdu,
			  bool tagged)
{
	uint32_t hl = tagged ? WN_DDP_TAGGED_HDR_LEN : WN_DDP_UNTAGGED_HDR_LEN;

	if (it == NULL || mulpdu <= hl)
		return -EINVAL;
	it->msg_len = msg_len;
	it->max = mulpdu - hl; /* RFC 5041 §5.2: MULPDU minus the DDP header */
	it->off = 0;
	it->done = false;
	return 0;
}

bool
wn_wire_ddp_seg_iter_next(struct wn_ddp_seg_iter *it, struct wn_ddp_span *s)
{
	if (it->done)
		return false;
	uint32_t left = it->msg_len - it->off;
	s->off = it->off;
	s->len = left < it->max ? left : it->max;
	s->last = s->len == left; /* a zero-length message is one L segment */
	it->off += s->len;
	it->done = s->last;
	return true;
}

uint32_t
wn_wire_ddp_seg_count(uint32_t msg_len, uint32_t mulpdu, bool tagged)
{
	uint32_t hl = tagged ? WN_DDP_TAGGED_HDR_LEN : WN_DDP_UNTAGGED_HDR_LEN;

	if (mulpdu <= hl)
		return 0;
	uint32_t max = mulpdu - hl;
	return msg_len == 0 ? 1 : (uint32_t)(((uint64_t)msg_len + max - 1) / max);
}
