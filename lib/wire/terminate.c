/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Terminate message codec (RFC 5040 §4.8, §7.1 Fig. 10) and the names of
 * every Terminate cause (RFC 5040 Fig. 9, RFC 5041 §7.2, RFC 5044 §8,
 * RFC 6581 §8; registry RFC 6580 §3).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wn_wire_ddp.h"

struct cause_name {
	uint8_t layer, etype;
	int code; /* -1: any code */
	const char *name;
};

static const struct cause_name causes[] = {
	{WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_LOCAL_CATA, -1, "RDMAP local catastrophic error"},
	{WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_PROT, WN_TERM_RP_INVALID_STAG,
	 "RDMAP remote protection: invalid STag"},
	{WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_PROT, WN_TERM_RP_BASE_BOUNDS,
	 "RDMAP remote protection: base or bounds violation"},
	{WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_PROT, WN_TERM_RP_ACCESS,
	 "RDMAP remote protection: access rights violation"},
	{WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_PROT, WN_TERM_RP_STAG_NOT_ASSOC,
	 "RDMAP remote protection: STag not associated with RDMAP stream"},
	{WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_PROT, WN_TERM_RP_TO_WRAP,
	 "RDMAP remote protection: TO wrap"},
	{WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_PROT, WN_TERM_RP_CANT_INVALIDATE,
	 "RDMAP remote protection: STag cannot be invalidated"},
	{WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_PROT, WN_TERM_RP_UNSPECIFIED,
	 "RDMAP remote protection: unspecified error"},
	{WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP, WN_TERM_RO_INVALID_VERSION,
	 "RDMAP remote operation: invalid RDMAP version"},
	{WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP, WN_TERM_RO_UNEXPECTED_OP,
	 "RDMAP remote operation: unexpected opcode"},
	{WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP, WN_TERM_RO_CATA_STREAM,
	 "RDMAP remote operation: catastrophic error, localized to RDMAP stream"},
	{WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP, WN_TERM_RO_CATA_GLOBAL,
	 "RDMAP remote operation: catastrophic error, global"},
	{WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP, WN_TERM_RO_CANT_INVALIDATE,
	 "RDMAP remote operation: STag cannot be invalidated"},
	{WN_TERM_LAYER_RDMAP, WN_TERM_RDMAP_REMOTE_OP, WN_TERM_RO_UNSPECIFIED,
	 "RDMAP remote operation: unspecified error"},
	{WN_TERM_LAYER_DDP, WN_TERM_DDP_CATA, 0x00, "DDP local catastrophic error"},
	{WN_TERM_LAYER_DDP, WN_TERM_DDP_TAGGED, WN_TERM_DT_INVALID_STAG,
	 "DDP tagged buffer: invalid STag"},
	{WN_TERM_LAYER_DDP, WN_TERM_DDP_TAGGED, WN_TERM_DT_BASE_BOUNDS,
	 "DDP tagged buffer: base or bounds violation"},
	{WN_TERM_LAYER_DDP, WN_TERM_DDP_TAGGED, WN_TERM_DT_STAG_NOT_ASSOC,
	 "DDP tagged buffer: STag not associated with DDP stream"},
	{WN_TERM_LAYER_DDP, WN_TERM_DDP_TAGGED, WN_TERM_DT_TO_WRAP, "DDP tagged buffer: TO wrap"},
	{WN_TERM_LAYER_DDP, WN_TERM_DDP_TAGGED, WN_TERM_DT_INVALID_VERSION,
	 "DDP tagged buffer: invalid DDP version"},
	{WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_INVALID_QN,
	 "DDP untagged buffer: invalid QN"},
	{WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_MSN_NO_BUFFER,
	 "DDP untagged buffer: invalid MSN, no buffer available"},
	{WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_MSN_RANGE,
	 "DDP untagged buffer: invalid MSN, MSN range is not valid"},
	{WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_INVALID_MO,
	 "DDP untagged buffer: invalid MO"},
	{WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_TOO_LONG,
	 "DDP untagged buffer: DDP message too long for available buffer"},
	{WN_TERM_LAYER_DDP, WN_TERM_DDP_UNTAGGED, WN_TERM_DU_INVALID_VERSION,
	 "DDP untagged buffer: invalid DDP version"},
	{WN_TERM_LAYER_LLP, WN_TERM_LLP_MPA, 0x01,
	 "LLP (MPA): TCP connection closed, terminated or lost"},
	{WN_TERM_LAYER_LLP, WN_TERM_LLP_MPA, 0x02, "LLP (MPA): received MPA CRC does not match"},
	{WN_TERM_LAYER_LLP, WN_TERM_LLP_MPA, 0x03,
	 "LLP (MPA): received Marker and ULPDU_Length disagree"},
	{WN_TERM_LAYER_LLP, WN_TERM_LLP_MPA, 0x04, "LLP (MPA): invalid MPA Request or Reply frame"},
	{WN_TERM_LAYER_LLP, WN_TERM_LLP_MPA, 0x05, "LLP (MPA): local catastrophic error"},
	{WN_TERM_LAYER_LLP, WN_TERM_LLP_MPA, 0x06, "LLP (MPA): insufficient IRD resources"},
	{WN_TERM_LAYER_LLP, WN_TERM_LLP_MPA, 0x07, "LLP (MPA): no matching RTR option"},
};

static const struct cause_name *
cause_find(uint8_t layer, uint8_t etype, uint8_t code)
{
	for (size_t i = 0; i < sizeof(causes) / sizeof(causes[0]); i++) {
		const struct cause_name *c = &causes[i];

		if (c->layer == layer && c->etype == etype && (c->code < 0 || c->code == code))
			return c;
	}
	return NULL;
}

bool
wn_wire_term_cause_known(uint8_t layer, uint8_t etype, uint8_t code)
{
	return cause_find(layer, etype, code) != NULL;
}

const char *
wn_wire_term_cause_str(uint8_t layer, uint8_t etype, uint8_t code)
{
	const struct cause_name *c = cause_find(layer, etype, code);

	return c == NULL ? "unknown" : c->name;
}

static const char *const status_names[WN_TERM_STATUS_COUNT] = {
	[WN_TERM_OK] = "ok",
	[WN_TERM_SHORT] = "Terminate header shorter than its control word",
	[WN_TERM_UNKNOWN_CAUSE] = "layer/etype/code not defined by the RFCs",
	[WN_TERM_M_WITHOUT_D] = "M set without D (no DDP Segment Length)",
	[WN_TERM_D_SHORT] = "D set but the terminated DDP header does not fit",
	[WN_TERM_R_SHORT] = "R set but the terminated RDMA header does not fit",
	[WN_TERM_TRAILING] = "octets after the announced parts",
};

const char *
wn_wire_term_status_str(enum wn_term_status st)
{
	if ((unsigned int)st >= WN_TERM_STATUS_COUNT)
		return "unknown";
	return status_names[st];
}

/* @return the length of the DDP header starting at @p h (its T bit decides). */
static size_t
ddp_hdr_len_of(const uint8_t *h)
{
	return wn_ddp_ctrl_tagged(h[0]) ? WN_DDP_TAGGED_HDR_LEN : WN_DDP_UNTAGGED_HDR_LEN;
}

static void
put_read_req(uint8_t *p, const struct wn_rdmap_read_req *rr)
{
	wn_wire_put_be32(p + offsetof(struct wn_rdmap_read_req_hdr, sink_stag), rr->sink_stag);
	wn_wire_put_be64(p + offsetof(struct wn_rdmap_read_req_hdr, sink_to), rr->sink_to);
	wn_wire_put_be32(p + offsetof(struct wn_rdmap_read_req_hdr, size), rr->size);
	wn_wire_put_be32(p + offsetof(struct wn_rdmap_read_req_hdr, src_stag), rr->src_stag);
	wn_wire_put_be64(p + offsetof(struct wn_rdmap_read_req_hdr, src_to), rr->src_to);
}

static void
get_read_req(const uint8_t *p, struct wn_rdmap_read_req *rr)
{
	rr->sink_stag = wn_wire_get_be32(p + offsetof(struct wn_rdmap_read_req_hdr, sink_stag));
	rr->sink_to = wn_wire_get_be64(p + offsetof(struct wn_rdmap_read_req_hdr, sink_to));
	rr->size = wn_wire_get_be32(p + offsetof(struct wn_rdmap_read_req_hdr, size));
	rr->src_stag = wn_wire_get_be32(p + offsetof(struct wn_rdmap_read_req_hdr, src_stag));
	rr->src_to = wn_wire_get_be64(p + offsetof(struct wn_rdmap_read_req_hdr, src_to));
}

int
wn_wire_rdmap_term_build(uint8_t *out, size_t cap, uint32_t msn, const struct wn_rdmap_term *t)
{
	if (out == NULL || t == NULL || t->cause.layer > 0xF || t->cause.etype > 0xF)
		return -EINVAL;
	if (t->m && !t->d)
		return -EINVAL; /* the Segment Length is present only with D (RFC 5040 §4.8) */
	if (t->d && (t->ddp_hdr == NULL || t->ddp_hdr_len != ddp_hdr_len_of(t->ddp_hdr)))
		return -EINVAL;

	size_t len = WN_DDP_UNTAGGED_HDR_LEN + WN_TERM_CTRL_LEN;
	if (t->d)
		len += WN_TERM_SEGLEN_LEN + t->ddp_hdr_len;
	if (t->r)
		len += WN_RDMAP_READ_REQ_HDR_LEN;
	if (cap < len)
		return -ENOSPC;

	/* RFC 5040 §4.8 / App. A.6: untagged, L=1, QN 2, MO 0 */
	struct wn_ddp_hdr h = {.opcode = WN_RDMAP_TERMINATE, .last = true, .msn = msn};
	int n = wn_wire_ddp_hdr_build(out, cap, &h);
	if (n < 0)
		return n;
	uint8_t *p = out + n;
	uint32_t ctrl = (uint32_t)t->cause.layer << WN_TERM_CTRL_LAYER_SHIFT |
			(uint32_t)t->cause.etype << WN_TERM_CTRL_ETYPE_SHIFT |
			(uint32_t)t->cause.code << WN_TERM_CTRL_CODE_SHIFT |
			(t->m ? WN_TERM_CTRL_M : 0) | (t->d ? WN_TERM_CTRL_D : 0) |
			(t->r ? WN_TERM_CTRL_R : 0);
	wn_wire_put_be32(p, ctrl);
	p += WN_TERM_CTRL_LEN;
	if (t->d) {
		wn_wire_put_be16(p, t->seg_len);
		p += WN_TERM_SEGLEN_LEN;
		memcpy(p, t->ddp_hdr, t->ddp_hdr_len);
		p += t->ddp_hdr_len;
	}
	if (t->r) {
		put_read_req(p, &t->rdma);
		p += WN_RDMAP_READ_REQ_HDR_LEN;
	}
	return (int)(p - out);
}

int
wn_wire_rdmap_term_from_cause(struct wn_rdmap_term *t, struct wn_term_cause cause,
			      const uint8_t *bad, size_t bad_len)
{
	if (t == NULL)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->cause = cause;

	bool have = bad != NULL && bad_len >= 1 && bad_len >= ddp_hdr_len_of(bad);
	bool ddp = false, rdma = false;
	/* RFC 5040 Fig. 10 */
	switch (cause.layer) {
	case WN_TERM_LAYER_RDMAP:
		if (cause.etype == WN_TERM_RDMAP_REMOTE_PROT) {
			ddp = have;
			/* §4.8: the RDMA header is defined only for Read Requests */
			rdma = have && !wn_ddp_ctrl_tagged(bad[0]) &&
			       wn_rdmap_ctrl_opcode(bad[1]) == WN_RDMAP_READ_REQ &&
			       bad_len >= WN_DDP_UNTAGGED_HDR_LEN + WN_RDMAP_READ_REQ_HDR_LEN;
		} else if (cause.etype == WN_TERM_RDMAP_REMOTE_OP) {
			ddp = have;
		}
		break;
	case WN_TERM_LAYER_DDP:
		ddp = have;
		break;
	default: /* LLP errors and local catastrophic ones carry nothing */
		break;
	}
	if (ddp) {
		t->d = true;
		t->m = true;
		t->seg_len = bad_len > UINT16_MAX ? UINT16_MAX : (uint16_t)bad_len;
		t->ddp_hdr = bad;
		t->ddp_hdr_len = (uint8_t)ddp_hdr_len_of(bad);
	}
	if (rdma) {
		t->r = true;
		get_read_req(bad + WN_DDP_UNTAGGED_HDR_LEN, &t->rdma);
	}
	return 0;
}

static void
term_fail(struct wn_rdmap_term *t, enum wn_term_status st)
{
	if (t->status == WN_TERM_OK)
		t->status = st; /* the first broken rule is reported */
}

static void
get_ddp_hdr(const uint8_t *h, struct wn_ddp_hdr *d)
{
	d->tagged = wn_ddp_ctrl_tagged(h[0]);
	d->last = wn_ddp_ctrl_last(h[0]);
	d->opcode = wn_rdmap_ctrl_opcode(h[1]);
	if (d->tagged) {
		d->stag = wn_wire_get_be32(h + offsetof(struct wn_ddp_tagged_hdr, stag));
		d->to = wn_wire_get_be64(h + offsetof(struct wn_ddp_tagged_hdr, to));
	} else {
		d->inv_stag = wn_wire_get_be32(h + offsetof(struct wn_ddp_untagged_hdr, inv_stag));
		d->qn = wn_wire_get_be32(h + offsetof(struct wn_ddp_untagged_hdr, qn));
		d->msn = wn_wire_get_be32(h + offsetof(struct wn_ddp_untagged_hdr, msn));
		d->mo = wn_wire_get_be32(h + offsetof(struct wn_ddp_untagged_hdr, mo));
	}
}

int
wn_wire_rdmap_term_parse(const uint8_t *p, size_t len, struct wn_rdmap_term *t)
{
	if (t == NULL || (p == NULL && len != 0))
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	if (len < WN_TERM_CTRL_LEN) {
		t->status = WN_TERM_SHORT;
		return -EBADMSG;
	}

	uint32_t ctrl = wn_wire_get_be32(p);
	t->cause.layer = (uint8_t)((ctrl & WN_TERM_CTRL_LAYER_MASK) >> WN_TERM_CTRL_LAYER_SHIFT);
	t->cause.etype = (uint8_t)((ctrl & WN_TERM_CTRL_ETYPE_MASK) >> WN_TERM_CTRL_ETYPE_SHIFT);
	t->cause.code = (uint8_t)((ctrl & WN_TERM_CTRL_CODE_MASK) >> WN_TERM_CTRL_CODE_SHIFT);
	t->m = (ctrl & WN_TERM_CTRL_M) != 0;
	t->d = (ctrl & WN_TERM_CTRL_D) != 0;
	t->r = (ctrl & WN_TERM_CTRL_R) != 0;
	if (ctrl & WN_TERM_CTRL_RSVD)
		t->quirks |= WN_TERM_Q_RSVD; /* RFC 5040 §4.8: ignored on receive */
	if (!wn_wire_term_cause_known(t->cause.layer, t->cause.etype, t->cause.code)) {
		term_fail(t, WN_TERM_UNKNOWN_CAUSE);
		/* Linux siw writes EType in the Layer nibble and vice versa */
		t->swapped.layer = t->cause.etype;
		t->swapped.etype = t->cause.layer;
		t->swapped.code = t->cause.code;
		if (wn_wire_term_cause_known(t->swapped.layer, t->swapped.etype, t->swapped.code))
			t->quirks |= WN_TERM_Q_SWAPPED;
	}
	if (t->m && !t->d)
		term_fail(t, WN_TERM_M_WITHOUT_D);

	size_t off = WN_TERM_CTRL_LEN;
	if (t->d) {
		/* Segment Length, then a DDP header sized by its own T bit */
		if (len < off + WN_TERM_SEGLEN_LEN + 1 ||
		    len < off + WN_TERM_SEGLEN_LEN + ddp_hdr_len_of(p + off + WN_TERM_SEGLEN_LEN)) {
			term_fail(t, WN_TERM_D_SHORT);
			return -EBADMSG;
		}
		t->seg_len = wn_wire_get_be16(p + off);
		off += WN_TERM_SEGLEN_LEN;
		t->ddp_hdr = p + off;
		t->ddp_hdr_len = (uint8_t)ddp_hdr_len_of(t->ddp_hdr);
		get_ddp_hdr(t->ddp_hdr, &t->ddp);
		off += t->ddp_hdr_len;
	}
	if (t->r) {
		if (len < off + WN_RDMAP_READ_REQ_HDR_LEN) {
			t->quirks |= WN_TERM_Q_R_NO_HDR;
			term_fail(t, WN_TERM_R_SHORT);
			return -EBADMSG;
		}
		get_read_req(p + off, &t->rdma);
		off += WN_RDMAP_READ_REQ_HDR_LEN;
	}
	if (off != len)
		term_fail(t, WN_TERM_TRAILING);
	return t->status == WN_TERM_OK ? 0 : -EBADMSG;
}
