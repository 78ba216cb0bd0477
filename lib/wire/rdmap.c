/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RDMAP opcode table, the DDP header builder it drives (RFC 5041 §4) and the
 * message builders (RFC 5040 §4, RFC 7306 §4-§6).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wn_wire_ddp.h"

#define RV_BITS	  (WN_RDMAP_VERSION << WN_RDMAP_CTRL_RV_SHIFT)
#define UNBOUNDED WN_DDP_ULPDU_MAX
#define T_LEN	  WN_DDP_TAGGED_HDR_LEN
#define U_LEN	  WN_DDP_UNTAGGED_HDR_LEN

/* Payload-carrying opcodes (RFC 5040 §4.2 Fig. 4/5). */
#define OP_DATA(nm, t, q, inv, se, opc)                                                            \
	{                                                                                          \
		.name = (nm), .valid = true, .tagged = (t), .qn = (q), .payload = true,            \
		.invalidate = (inv), .solicited = (se), .ddp_hdr_len = (t) ? T_LEN : U_LEN,        \
		.min_ulpdu = (t) ? T_LEN : U_LEN, .max_ulpdu = UNBOUNDED,                          \
		.ctrl_rdmap = RV_BITS | (opc)                                                      \
	}

/* Single-segment untagged opcodes with a fixed RDMAP header. */
#define OP_FIXED(nm, q, hl, se, x, opc)                                                            \
	{                                                                                          \
		.name = (nm), .valid = true, .rfc7306 = (x), .qn = (q), .single = true,            \
		.solicited = (se), .ddp_hdr_len = U_LEN, .rdmap_hdr_len = (hl),                    \
		.min_ulpdu = U_LEN + (hl), .max_ulpdu = U_LEN + (hl),                              \
		.ctrl_rdmap = RV_BITS | (opc)                                                      \
	}

#define OP_NONE(nm, opc)                                                                           \
	{                                                                                          \
		.name = (nm), .ctrl_rdmap = RV_BITS | (opc)                                        \
	}

const struct wn_rdmap_op wn_wire_rdmap_ops[WN_RDMAP_OPCODE_COUNT] = {
	[WN_RDMAP_WRITE] = OP_DATA("RDMA Write", true, 0, false, false, WN_RDMAP_WRITE),
	[WN_RDMAP_READ_REQ] = OP_FIXED("RDMA Read Request", WN_DDP_QN_RREQ,
				       WN_RDMAP_READ_REQ_HDR_LEN, false, false, WN_RDMAP_READ_REQ),
	[WN_RDMAP_READ_RESP] =
		OP_DATA("RDMA Read Response", true, 0, false, false, WN_RDMAP_READ_RESP),
	[WN_RDMAP_SEND] = OP_DATA("Send", false, WN_DDP_QN_SEND, false, false, WN_RDMAP_SEND),
	[WN_RDMAP_SEND_INV] = OP_DATA("Send with Invalidate", false, WN_DDP_QN_SEND, true, false,
				      WN_RDMAP_SEND_INV),
	[WN_RDMAP_SEND_SE] = OP_DATA("Send with Solicited Event", false, WN_DDP_QN_SEND, false,
				     true, WN_RDMAP_SEND_SE),
	[WN_RDMAP_SEND_SE_INV] = OP_DATA("Send with Solicited Event and Invalidate", false,
					 WN_DDP_QN_SEND, true, true, WN_RDMAP_SEND_SE_INV),
	/* RFC 5040 §4.8: 4-octet control word, + 2 + 14/18 with D, + 28 with R */
	[WN_RDMAP_TERMINATE] = {.name = "Terminate",
				.valid = true,
				.qn = WN_DDP_QN_TERM,
				.single = true,
				.ddp_hdr_len = U_LEN,
				.rdmap_hdr_len = WN_TERM_CTRL_LEN,
				.min_ulpdu = U_LEN + WN_TERM_CTRL_LEN,
				.max_ulpdu = U_LEN + WN_RDMAP_TERM_HDR_MAX,
				.ctrl_rdmap = RV_BITS | WN_RDMAP_TERMINATE},
	[WN_RDMAP_IMMEDIATE] = OP_FIXED("Immediate Data", WN_DDP_QN_SEND, WN_RDMAP_IMMEDIATE_LEN,
					false, true, WN_RDMAP_IMMEDIATE),
	[WN_RDMAP_IMMEDIATE_SE] =
		OP_FIXED("Immediate Data with Solicited Event", WN_DDP_QN_SEND,
			 WN_RDMAP_IMMEDIATE_LEN, true, true, WN_RDMAP_IMMEDIATE_SE),
	[WN_RDMAP_ATOMIC_REQ] =
		OP_FIXED("Atomic Request", WN_DDP_QN_RREQ, WN_RDMAP_ATOMIC_REQ_HDR_LEN, false, true,
			 WN_RDMAP_ATOMIC_REQ),
	[WN_RDMAP_ATOMIC_RESP] =
		OP_FIXED("Atomic Response", WN_DDP_QN_ARESP, WN_RDMAP_ATOMIC_RESP_HDR_LEN, false,
			 true, WN_RDMAP_ATOMIC_RESP),
	[0xC] = OP_NONE("unassigned", 0xC),
	[0xD] = OP_NONE("unassigned", 0xD),
	[0xE] = OP_NONE("unassigned", 0xE),
	[0xF] = OP_NONE("reserved (experimental)", 0xF),
};

void
wn_wire_rdmap_op_table_init(struct wn_rdmap_op *tbl)
{
	if (tbl != NULL)
		memcpy(tbl, wn_wire_rdmap_ops, sizeof(wn_wire_rdmap_ops));
}

const char *
wn_wire_rdmap_opcode_str(uint8_t op)
{
	return wn_wire_rdmap_ops[op & WN_RDMAP_CTRL_OP_MASK].name;
}

int
wn_wire_ddp_hdr_build(uint8_t *out, size_t cap, const struct wn_ddp_hdr *h)
{
	if (out == NULL || h == NULL)
		return -EINVAL;
	const struct wn_rdmap_op *op = &wn_wire_rdmap_ops[h->opcode & WN_RDMAP_CTRL_OP_MASK];
	if (h->opcode >= WN_RDMAP_OPCODE_COUNT || !op->valid)
		return -EINVAL;
	if (cap < op->ddp_hdr_len)
		return -ENOSPC;
	out[0] = (uint8_t)((op->tagged ? WN_DDP_CTRL_T : 0) | (h->last ? WN_DDP_CTRL_L : 0) |
			   WN_DDP_VERSION);
	out[1] = op->ctrl_rdmap;
	if (op->tagged) {
		wn_wire_put_be32(out + offsetof(struct wn_ddp_tagged_hdr, stag), h->stag);
		wn_wire_put_be64(out + offsetof(struct wn_ddp_tagged_hdr, to), h->to);
	} else {
		/* RFC 5040 §4.1: Invalidate STag only for 0x4/0x6, else zero */
		wn_wire_put_be32(out + offsetof(struct wn_ddp_untagged_hdr, inv_stag),
				 op->invalidate ? h->inv_stag : 0);
		wn_wire_put_be32(out + offsetof(struct wn_ddp_untagged_hdr, qn), op->qn);
		wn_wire_put_be32(out + offsetof(struct wn_ddp_untagged_hdr, msn), h->msn);
		wn_wire_put_be32(out + offsetof(struct wn_ddp_untagged_hdr, mo), h->mo);
	}
	return op->ddp_hdr_len;
}

int
wn_wire_rdmap_write_build(uint8_t *out, size_t cap, uint32_t stag, uint64_t to, bool last)
{
	struct wn_ddp_hdr h = {.opcode = WN_RDMAP_WRITE, .last = last, .stag = stag, .to = to};

	return wn_wire_ddp_hdr_build(out, cap, &h);
}

int
wn_wire_rdmap_read_resp_build(uint8_t *out, size_t cap, uint32_t sink_stag, uint64_t sink_to,
			      bool last)
{
	struct wn_ddp_hdr h = {
		.opcode = WN_RDMAP_READ_RESP, .last = last, .stag = sink_stag, .to = sink_to};

	return wn_wire_ddp_hdr_build(out, cap, &h);
}

int
wn_wire_rdmap_send_build(uint8_t *out, size_t cap, uint8_t opcode, uint32_t inv_stag, uint32_t msn,
		    uint32_t mo, bool last)
{
	struct wn_ddp_hdr h = {
		.opcode = opcode, .last = last, .inv_stag = inv_stag, .msn = msn, .mo = mo};

	if (opcode < WN_RDMAP_SEND || opcode > WN_RDMAP_SEND_SE_INV)
		return -EINVAL;
	return wn_wire_ddp_hdr_build(out, cap, &h);
}

/* Untagged, L=1, MO=0 header of a single-segment message; @return 18 or -errno. */
static int
single_hdr(uint8_t *out, size_t cap, uint8_t opcode, uint32_t msn)
{
	struct wn_ddp_hdr h = {.opcode = opcode, .last = true, .msn = msn};

	if (cap < wn_wire_rdmap_ops[opcode].min_ulpdu)
		return -ENOSPC;
	return wn_wire_ddp_hdr_build(out, cap, &h);
}

int
wn_wire_rdmap_read_req_build(uint8_t *out, size_t cap, uint32_t msn,
			     const struct wn_rdmap_read_req *rr)
{
	if (rr == NULL)
		return -EINVAL;
	int n = single_hdr(out, cap, WN_RDMAP_READ_REQ, msn);
	if (n < 0)
		return n;
	uint8_t *p = out + n;
	wn_wire_put_be32(p + offsetof(struct wn_rdmap_read_req_hdr, sink_stag), rr->sink_stag);
	wn_wire_put_be64(p + offsetof(struct wn_rdmap_read_req_hdr, sink_to), rr->sink_to);
	wn_wire_put_be32(p + offsetof(struct wn_rdmap_read_req_hdr, size), rr->size);
	wn_wire_put_be32(p + offsetof(struct wn_rdmap_read_req_hdr, src_stag), rr->src_stag);
	wn_wire_put_be64(p + offsetof(struct wn_rdmap_read_req_hdr, src_to), rr->src_to);
	return n + WN_RDMAP_READ_REQ_HDR_LEN;
}

int
wn_wire_rdmap_immediate_build(uint8_t *out, size_t cap, uint8_t opcode, uint32_t msn, uint64_t data)
{
	if (opcode != WN_RDMAP_IMMEDIATE && opcode != WN_RDMAP_IMMEDIATE_SE)
		return -EINVAL;
	int n = single_hdr(out, cap, opcode, msn);
	if (n < 0)
		return n;
	wn_wire_put_be64(out + n, data);
	return n + WN_RDMAP_IMMEDIATE_LEN;
}

int
wn_wire_rdmap_atomic_req_build(uint8_t *out, size_t cap, uint32_t msn,
			  const struct wn_rdmap_atomic_req *ar)
{
	if (ar == NULL)
		return -EINVAL;
	/* RFC 7306 §10.1: only FetchAdd and CmpSwap; §5.2.1: 64-bit aligned target */
	if ((ar->aopcode != WN_RDMAP_AOP_FETCH_ADD && ar->aopcode != WN_RDMAP_AOP_CMP_SWAP) ||
	    (ar->to & 7u) != 0)
		return -EINVAL;
	int n = single_hdr(out, cap, WN_RDMAP_ATOMIC_REQ, msn);
	if (n < 0)
		return n;
	uint8_t *p = out + n;
	bool fadd = ar->aopcode == WN_RDMAP_AOP_FETCH_ADD;
	wn_wire_put_be32(p + offsetof(struct wn_rdmap_atomic_req_hdr, aopcode), ar->aopcode);
	wn_wire_put_be32(p + offsetof(struct wn_rdmap_atomic_req_hdr, req_id), ar->req_id);
	wn_wire_put_be32(p + offsetof(struct wn_rdmap_atomic_req_hdr, stag), ar->stag);
	wn_wire_put_be64(p + offsetof(struct wn_rdmap_atomic_req_hdr, to), ar->to);
	wn_wire_put_be64(p + offsetof(struct wn_rdmap_atomic_req_hdr, add_swap), ar->add_swap);
	wn_wire_put_be64(p + offsetof(struct wn_rdmap_atomic_req_hdr, add_swap_mask),
			 ar->add_swap_mask);
	/* RFC 7306 §5.2.1: FetchAdd sends Compare Data 0 and Compare Mask all ones */
	wn_wire_put_be64(p + offsetof(struct wn_rdmap_atomic_req_hdr, compare),
			 fadd ? 0 : ar->compare);
	wn_wire_put_be64(p + offsetof(struct wn_rdmap_atomic_req_hdr, compare_mask),
			 fadd ? UINT64_MAX : ar->compare_mask);
	return n + WN_RDMAP_ATOMIC_REQ_HDR_LEN;
}

int
wn_wire_rdmap_atomic_resp_build(uint8_t *out, size_t cap, uint32_t msn,
			   const struct wn_rdmap_atomic_resp *as)
{
	if (as == NULL)
		return -EINVAL;
	int n = single_hdr(out, cap, WN_RDMAP_ATOMIC_RESP, msn);
	if (n < 0)
		return n;
	wn_wire_put_be32(out + n + offsetof(struct wn_rdmap_atomic_resp_hdr, req_id), as->req_id);
	wn_wire_put_be64(out + n + offsetof(struct wn_rdmap_atomic_resp_hdr, orig), as->orig);
	return n + WN_RDMAP_ATOMIC_RESP_HDR_LEN;
}
