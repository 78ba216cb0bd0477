/* SPDX-License-Identifier: BSD-3-Clause */
/* The control protocol codec: op table, request/event validation, SCM_RIGHTS send/receive. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wn_ctl.h"

#define OP(o, n, rq, rs, fmax, rfds) \
	[o] = {.name = n, .req_len = rq, .resp_len = rs, .req_fds_max = fmax, .resp_fds = rfds}

static const struct wn_ctl_op_info op_table[WN_CTL_OP_MAX] = {
	OP(WN_CTL_HELLO, "hello", sizeof(struct wn_ctl_hello_req),
	   sizeof(struct wn_ctl_hello_resp), 0, 0),
	OP(WN_CTL_QUERY_DEVICE, "query_device", 0, sizeof(struct wn_ctl_device_attr), 0, 0),
	OP(WN_CTL_QUERY_PORT, "query_port", sizeof(struct wn_ctl_port_req),
	   sizeof(struct wn_ctl_port_attr), 0, 0),
	OP(WN_CTL_ALLOC_PD, "alloc_pd", 0, sizeof(struct wn_ctl_handle), 0, 0),
	OP(WN_CTL_DEALLOC_PD, "dealloc_pd", sizeof(struct wn_ctl_handle), 0, 0, 0),
	OP(WN_CTL_REG_MR, "reg_mr", sizeof(struct wn_ctl_reg_mr_req),
	   sizeof(struct wn_ctl_reg_mr_resp), WN_CTL_MR_MSG_PIECES, 0),
	OP(WN_CTL_DEREG_MR, "dereg_mr", sizeof(struct wn_ctl_handle), 0, 0, 0),
	OP(WN_CTL_CREATE_CQ, "create_cq", sizeof(struct wn_ctl_create_cq_req),
	   sizeof(struct wn_ctl_ring_resp), 1, 1),
	OP(WN_CTL_DESTROY_CQ, "destroy_cq", sizeof(struct wn_ctl_handle), 0, 0, 0),
	OP(WN_CTL_CREATE_SRQ, "create_srq", sizeof(struct wn_ctl_create_srq_req),
	   sizeof(struct wn_ctl_ring_resp), 0, 1),
	OP(WN_CTL_MODIFY_SRQ, "modify_srq", sizeof(struct wn_ctl_modify_srq_req), 0, 0, 0),
	OP(WN_CTL_DESTROY_SRQ, "destroy_srq", sizeof(struct wn_ctl_handle), 0, 0, 0),
	OP(WN_CTL_CREATE_QP, "create_qp", sizeof(struct wn_ctl_create_qp_req),
	   sizeof(struct wn_ctl_ring_resp), 0, 1),
	OP(WN_CTL_MODIFY_QP, "modify_qp", sizeof(struct wn_ctl_modify_qp_req),
	   sizeof(struct wn_ctl_qp_attr), 0, 0),
	OP(WN_CTL_QUERY_QP, "query_qp", sizeof(struct wn_ctl_handle),
	   sizeof(struct wn_ctl_qp_attr), 0, 0),
	OP(WN_CTL_DESTROY_QP, "destroy_qp", sizeof(struct wn_ctl_handle), 0, 0, 0),
	OP(WN_CTL_CM_CREATE_CHANNEL, "cm_create_channel", 0, sizeof(struct wn_ctl_handle), 0, 1),
	OP(WN_CTL_CM_DESTROY_CHANNEL, "cm_destroy_channel", sizeof(struct wn_ctl_handle), 0, 0,
	   0),
	OP(WN_CTL_CM_CREATE_ID, "cm_create_id", sizeof(struct wn_ctl_cm_create_id_req),
	   sizeof(struct wn_ctl_handle), 0, 0),
	OP(WN_CTL_CM_DESTROY_ID, "cm_destroy_id", sizeof(struct wn_ctl_handle), 0, 0, 0),
	OP(WN_CTL_CM_BIND, "cm_bind", sizeof(struct wn_ctl_cm_addr_req),
	   sizeof(struct wn_ctl_cm_addr_resp), 0, 0),
	OP(WN_CTL_CM_RESOLVE_ADDR, "cm_resolve_addr", sizeof(struct wn_ctl_cm_addr_req),
	   sizeof(struct wn_ctl_cm_addr_resp), 0, 0),
	OP(WN_CTL_CM_RESOLVE_ROUTE, "cm_resolve_route", sizeof(struct wn_ctl_cm_addr_req),
	   sizeof(struct wn_ctl_cm_addr_resp), 0, 0),
	OP(WN_CTL_CM_LISTEN, "cm_listen", sizeof(struct wn_ctl_cm_addr_req),
	   sizeof(struct wn_ctl_cm_addr_resp), 0, 0),
	OP(WN_CTL_CM_CONNECT, "cm_connect", sizeof(struct wn_ctl_cm_conn_req), 0, 0, 0),
	OP(WN_CTL_CM_ACCEPT, "cm_accept", sizeof(struct wn_ctl_cm_conn_req), 0, 0, 0),
	OP(WN_CTL_CM_REJECT, "cm_reject", sizeof(struct wn_ctl_cm_conn_req), 0, 0, 0),
	OP(WN_CTL_CM_DISCONNECT, "cm_disconnect", sizeof(struct wn_ctl_handle), 0, 0, 0),
	OP(WN_CTL_ALLOC_MW, "alloc_mw", sizeof(struct wn_ctl_alloc_mw_req),
	   sizeof(struct wn_ctl_alloc_mw_resp), 0, 0),
	OP(WN_CTL_DEALLOC_MW, "dealloc_mw", sizeof(struct wn_ctl_handle), 0, 0, 0),
	OP(WN_CTL_CM_MIGRATE_ID, "cm_migrate_id", sizeof(struct wn_ctl_cm_migrate_req), 0, 0, 0),
	OP(WN_CTL_BELL, "bell", sizeof(struct wn_ctl_bell_req), sizeof(struct wn_ctl_bell_resp), 0,
	   1),
	OP(WN_CTL_ASYNC_CHANNEL, "async_channel", 0, 0, 0, 1),
	OP(WN_CTL_MR_PIECES, "mr_pieces", sizeof(struct wn_ctl_mr_pieces_req),
	   sizeof(struct wn_ctl_reg_mr_resp), WN_CTL_MR_MSG_PIECES, 0),
	OP(WN_CTL_REREG_MR, "rereg_mr", sizeof(struct wn_ctl_rereg_mr_req),
	   sizeof(struct wn_ctl_reg_mr_resp), 0, 0),
};

const struct wn_ctl_op_info *
wn_ctl_op_info(uint32_t op)
{
	if (op == 0 || op >= WN_CTL_OP_MAX || op_table[op].name == NULL)
		return NULL;
	return &op_table[op];
}

void
wn_ctl_hdr_init(struct wn_ctl_hdr *h, uint16_t op, uint32_t seq, size_t body_len)
{
	memset(h, 0, sizeof(*h));
	h->magic = WN_CTL_MAGIC;
	h->version = WN_CTL_VERSION;
	h->op = op;
	h->seq = seq;
	h->len = (uint32_t)(sizeof(*h) + body_len);
}

static int
addr_check(const struct wn_ctl_addr *a, int may_be_none)
{
	if (a->family == WN_CTL_AF_NONE) {
		static const struct wn_ctl_addr zero;

		return (may_be_none && memcmp(a, &zero, sizeof(zero)) == 0) ? 0 : -EINVAL;
	}
	if (a->family == WN_CTL_AF_INET) {
		static const uint8_t zero12[12];

		/* IPv4 uses the first four octets; the rest must be zero. */
		if (memcmp(a->addr + 4, zero12, sizeof(zero12)) != 0 || a->scope_id != 0)
			return -EINVAL;
		return 0;
	}
	return a->family == WN_CTL_AF_INET6 ? 0 : -EINVAL;
}

static int
conn_param_check(const struct wn_ctl_conn_param *p)
{
	if (p->pd_len > WN_CTL_PD_MAX || (p->flags & ~3u) != 0)
		return -EINVAL;
	/* IRD/ORD travel in 14 bits in the MPA v2 header (RFC 6581 §5). */
	if (p->ird > 0x3fff || p->ord > 0x3fff)
		return -EINVAL;
	return 0;
}

static int
page_shift_ok(uint32_t shift)
{
	return shift == 12 || shift == 21 || shift == 30;
}

/*
 * The pieces of one message: each aligned to its page size (at most @p align_shift), a
 * multiple of it, following the one before in the client's address space (from @p addr),
 * its source known, its fd among the @p nfds the message brought; the slots after them
 * zero. @p total gets the octets they cover.
 */
static int
pieces_check(const struct wn_ctl_mr_piece *piece, uint32_t n, uint32_t align_shift,
	     uint64_t addr, unsigned int nfds, uint64_t *total)
{
	static const struct wn_ctl_mr_piece zero;
	uint32_t i;

	*total = 0;
	if (n == 0 || n > WN_CTL_MR_MSG_PIECES)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const struct wn_ctl_mr_piece *p = &piece[i];
		uint64_t mask;

		if (!page_shift_ok(p->page_shift) || p->page_shift > align_shift)
			return -EINVAL;
		mask = ((uint64_t)1 << p->page_shift) - 1;
		if (p->addr != addr || (p->addr & mask) != 0 || p->len == 0 ||
		    (p->len & mask) != 0 || (p->offset & mask) != 0 ||
		    p->addr > UINT64_MAX - p->len || p->offset > INT64_MAX - p->len)
			return -EINVAL;
		if (p->rsvd0 != 0 || p->rsvd != 0)
			return -EINVAL;
		if (p->src == WN_CTL_MR_SRC_FD) {
			if (p->fd_index >= nfds)
				return -EINVAL;
		} else if (p->src != WN_CTL_MR_SRC_PEER || p->fd_index != 0) {
			return -EINVAL;
		}
		addr += p->len;
		*total += p->len;
	}
	for (; i < WN_CTL_MR_MSG_PIECES; i++)
		if (memcmp(&piece[i], &zero, sizeof(zero)) != 0)
			return -EINVAL;
	return 0;
}

static int
reg_mr_check(const struct wn_ctl_reg_mr_req *r, unsigned int nfds)
{
	uint64_t first, total;
	int ret;

	if (r->n_total == 0 || r->n_total > WN_CTL_MR_PIECES_MAX || r->n_pieces > r->n_total ||
	    nfds > r->n_pieces || !page_shift_ok(r->align_shift))
		return -EINVAL;
	if (r->length == 0 || r->addr + r->length < r->addr ||
	    (r->flags & ~(WN_CTL_MR_F_FAST_REG | WN_CTL_MR_F_REREG)) != 0 ||
	    r->flags == (WN_CTL_MR_F_FAST_REG | WN_CTL_MR_F_REREG) ||
	    (r->access & ~WN_CTL_ACCESS_MASK) != 0)
		return -EINVAL;
	/* a fast-register MR gets its rights and TO from the FAST_REG WQE */
	if ((r->flags & WN_CTL_MR_F_FAST_REG) != 0 && (r->access != 0 || r->iova != 0))
		return -EINVAL;
	/* Remote write/atomic access requires local write (IBTA 10.6.3.1 / RFC 5040 §2.4). */
	if ((r->access & (WN_CTL_ACCESS_REMOTE_WRITE | WN_CTL_ACCESS_REMOTE_ATOMIC)) != 0 &&
	    (r->access & WN_CTL_ACCESS_LOCAL_WRITE) == 0)
		return -EINVAL;
	/* the span starts at the page of the first octet and ends at the page of the last */
	first = r->piece[0].addr;
	if (first > r->addr || r->addr - first >= ((uint64_t)1 << r->align_shift) ||
	    r->span == 0 || (r->span & (WN_CTL_PAGE_SIZE - 1)) != 0 ||
	    first > UINT64_MAX - r->span || first + r->span < r->addr + r->length ||
	    first + r->span - (r->addr + r->length) >= ((uint64_t)1 << r->align_shift))
		return -EINVAL;
	ret = pieces_check(r->piece, r->n_pieces, r->align_shift, first, nfds, &total);
	if (ret != 0)
		return ret;
	/* the pieces still to come need a page each at least */
	if (total > r->span || (r->n_pieces == r->n_total && total != r->span) ||
	    (r->span - total) / WN_CTL_PAGE_SIZE < r->n_total - r->n_pieces)
		return -EINVAL;
	return 0;
}

/*
 * Request body checks, one per op (or family of ops) in check_of[]: the fields a handler may
 * rely on. @p op is the request's, @p nfds the descriptors that came with it.
 */
typedef int check_fn(uint16_t op, const void *body, unsigned int nfds);

static int
hello_check(uint16_t op, const void *body, unsigned int nfds)
{
	const struct wn_ctl_hello_req *r = body;

	(void)op;
	(void)nfds;
	if (r->llp >= WN_CTL_LLP_MAX || memchr(r->name, 0, sizeof(r->name)) == NULL)
		return -EINVAL;
	return 0;
}

static int
port_check(uint16_t op, const void *body, unsigned int nfds)
{
	(void)op;
	(void)nfds;
	return ((const struct wn_ctl_port_req *)body)->rsvd == 0 ? 0 : -EINVAL;
}

/* The destroy requests, QUERY_QP and CM_DISCONNECT: one handle. */
static int
handle_check(uint16_t op, const void *body, unsigned int nfds)
{
	const struct wn_ctl_handle *h = body;

	(void)op;
	(void)nfds;
	return (h->handle != 0 && h->rsvd == 0) ? 0 : -EINVAL;
}

/* REREG_MR: two MRs, not one twice (that they are MRs is the server's to check). */
static int
rereg_mr_check(uint16_t op, const void *body, unsigned int nfds)
{
	const struct wn_ctl_rereg_mr_req *r = body;

	(void)op;
	(void)nfds;
	return (r->mr != 0 && r->old != 0 && r->mr != r->old) ? 0 : -EINVAL;
}

static int
reg_mr_req_check(uint16_t op, const void *body, unsigned int nfds)
{
	(void)op;
	return reg_mr_check(body, nfds);
}

/* MR_PIECES: where they start is the server's to check (the MR's next address). */
static int
mr_pieces_check(uint16_t op, const void *body, unsigned int nfds)
{
	const struct wn_ctl_mr_pieces_req *r = body;
	uint64_t total;

	(void)op;
	if (r->mr == 0 || nfds > r->n_pieces)
		return -EINVAL;
	return pieces_check(r->piece, r->n_pieces, 30, r->piece[0].addr, nfds, &total);
}

static int
alloc_mw_check(uint16_t op, const void *body, unsigned int nfds)
{
	const struct wn_ctl_alloc_mw_req *r = body;

	(void)op;
	(void)nfds;
	return (r->pd != 0 && (r->type == 1 || r->type == 2)) ? 0 : -EINVAL;
}

static int
migrate_check(uint16_t op, const void *body, unsigned int nfds)
{
	const struct wn_ctl_cm_migrate_req *r = body;

	(void)op;
	(void)nfds;
	return (r->id != 0 && r->channel != 0) ? 0 : -EINVAL;
}

static int
bell_check(uint16_t op, const void *body, unsigned int nfds)
{
	(void)op;
	(void)nfds;
	return ((const struct wn_ctl_bell_req *)body)->rsvd == 0 ? 0 : -EINVAL;
}

static int
create_cq_check(uint16_t op, const void *body, unsigned int nfds)
{
	const struct wn_ctl_create_cq_req *r = body;

	(void)op;
	if ((r->flags & ~WN_CTL_CQ_NOTIFY_FD) != 0 || r->cqe == 0)
		return -EINVAL;
	return nfds == ((r->flags & WN_CTL_CQ_NOTIFY_FD) ? 1u : 0u) ? 0 : -EINVAL;
}

static int
create_srq_check(uint16_t op, const void *body, unsigned int nfds)
{
	const struct wn_ctl_create_srq_req *r = body;

	(void)op;
	(void)nfds;
	return (r->pd != 0 && r->max_wr != 0 && r->srq_limit <= r->max_wr) ? 0 : -EINVAL;
}

static int
modify_srq_check(uint16_t op, const void *body, unsigned int nfds)
{
	const struct wn_ctl_modify_srq_req *r = body;

	(void)op;
	(void)nfds;
	return (r->srq != 0 && (r->mask & ~3u) == 0) ? 0 : -EINVAL;
}

static int
create_qp_check(uint16_t op, const void *body, unsigned int nfds)
{
	const struct wn_ctl_create_qp_req *r = body;

	(void)op;
	(void)nfds;
	if (r->pd == 0 || r->send_cq == 0 || r->recv_cq == 0 || r->rsvd != 0 ||
	    (r->qp_type != WN_CTL_QPT_RC && r->qp_type != WN_CTL_QPT_UD) || r->sq_sig_all > 1)
		return -EINVAL;
	if (r->max_send_wr == 0 || (r->srq == 0 && r->max_recv_wr == 0))
		return -EINVAL;
	return 0;
}

/* The IB path attributes @p mask names are in their ranges (IBTA 9.7, struct ibv_qp_attr). */
static int
qp_path_check(uint32_t mask, const struct wn_ctl_qp_path *p)
{
	if (p->rsvd != 0 || p->is_global > 1)
		return -EINVAL;
	if ((mask & WN_CTL_QP_DEST_QPN) && p->dest_qp_num > 0xffffff)
		return -EINVAL;
	if (((mask & WN_CTL_QP_RQ_PSN) && p->rq_psn > 0xffffff) ||
	    ((mask & WN_CTL_QP_SQ_PSN) && p->sq_psn > 0xffffff))
		return -EINVAL;
	if ((mask & WN_CTL_QP_PATH_MTU) && (p->path_mtu < 1 || p->path_mtu > 5))
		return -EINVAL;
	if (((mask & WN_CTL_QP_TIMEOUT) && p->timeout > 31) ||
	    ((mask & WN_CTL_QP_RETRY_CNT) && p->retry_cnt > 7) ||
	    ((mask & WN_CTL_QP_RNR_RETRY) && p->rnr_retry > 7) ||
	    ((mask & WN_CTL_QP_MIN_RNR_TIMER) && p->min_rnr_timer > 31))
		return -EINVAL;
	return 0;
}

static int
modify_qp_check(uint16_t op, const void *body, unsigned int nfds)
{
	const struct wn_ctl_modify_qp_req *r = body;

	(void)op;
	(void)nfds;
	if (r->qp == 0 || (r->mask & ~WN_CTL_QP_MASK) != 0)
		return -EINVAL;
	if ((r->mask & WN_CTL_QP_STATE) && r->qp_state >= WN_CTL_QPS_MAX)
		return -EINVAL;
	if ((r->mask & WN_CTL_QP_ACCESS_FLAGS) && (r->access & ~WN_CTL_ACCESS_MASK) != 0)
		return -EINVAL;
	/* a PSN has 24 bits (IBTA 9.7.1) */
	if (r->ud.rsvd != 0 || ((r->mask & WN_CTL_QP_SQ_PSN) && r->ud.sq_psn > 0xffffffu))
		return -EINVAL;
	return qp_path_check(r->mask, &r->path);
}

static int
cm_create_id_check(uint16_t op, const void *body, unsigned int nfds)
{
	const struct wn_ctl_cm_create_id_req *r = body;

	(void)op;
	(void)nfds;
	return (r->channel != 0 && (r->ps == WN_CTL_PS_TCP || r->ps == WN_CTL_PS_UDP)) ? 0 :
									       -EINVAL;
}

/* CM_BIND needs a source address, CM_RESOLVE_ADDR a destination; the others may omit them. */
static int
cm_addr_check(uint16_t op, const void *body, unsigned int nfds)
{
	const struct wn_ctl_cm_addr_req *r = body;

	(void)nfds;
	if (r->id == 0)
		return -EINVAL;
	if (addr_check(&r->src, op != WN_CTL_CM_BIND) != 0)
		return -EINVAL;
	return addr_check(&r->dst, op != WN_CTL_CM_RESOLVE_ADDR);
}

/* CM_CONNECT, CM_ACCEPT, CM_REJECT. */
static int
cm_conn_check(uint16_t op, const void *body, unsigned int nfds)
{
	const struct wn_ctl_cm_conn_req *r = body;

	(void)op;
	(void)nfds;
	return r->id != 0 ? conn_param_check(&r->param) : -EINVAL;
}

/* Ops without an entry have nothing to check beyond their length (no body, or any). */
static check_fn *const check_of[WN_CTL_OP_MAX] = {
	[WN_CTL_HELLO] = hello_check,
	[WN_CTL_QUERY_PORT] = port_check,
	[WN_CTL_DEALLOC_PD] = handle_check,
	[WN_CTL_REG_MR] = reg_mr_req_check,
	[WN_CTL_DEREG_MR] = handle_check,
	[WN_CTL_CREATE_CQ] = create_cq_check,
	[WN_CTL_DESTROY_CQ] = handle_check,
	[WN_CTL_CREATE_SRQ] = create_srq_check,
	[WN_CTL_MODIFY_SRQ] = modify_srq_check,
	[WN_CTL_DESTROY_SRQ] = handle_check,
	[WN_CTL_CREATE_QP] = create_qp_check,
	[WN_CTL_MODIFY_QP] = modify_qp_check,
	[WN_CTL_QUERY_QP] = handle_check,
	[WN_CTL_DESTROY_QP] = handle_check,
	[WN_CTL_CM_DESTROY_CHANNEL] = handle_check,
	[WN_CTL_CM_CREATE_ID] = cm_create_id_check,
	[WN_CTL_CM_DESTROY_ID] = handle_check,
	[WN_CTL_CM_BIND] = cm_addr_check,
	[WN_CTL_CM_RESOLVE_ADDR] = cm_addr_check,
	[WN_CTL_CM_RESOLVE_ROUTE] = cm_addr_check,
	[WN_CTL_CM_LISTEN] = cm_addr_check,
	[WN_CTL_CM_CONNECT] = cm_conn_check,
	[WN_CTL_CM_ACCEPT] = cm_conn_check,
	[WN_CTL_CM_REJECT] = cm_conn_check,
	[WN_CTL_CM_DISCONNECT] = handle_check,
	[WN_CTL_ALLOC_MW] = alloc_mw_check,
	[WN_CTL_DEALLOC_MW] = handle_check,
	[WN_CTL_CM_MIGRATE_ID] = migrate_check,
	[WN_CTL_BELL] = bell_check,
	[WN_CTL_MR_PIECES] = mr_pieces_check,
	[WN_CTL_REREG_MR] = rereg_mr_check,
};

static int
body_check(uint16_t op, const void *body, unsigned int nfds)
{
	check_fn *check = op < WN_CTL_OP_MAX ? check_of[op] : NULL;

	return check != NULL ? check(op, body, nfds) : 0;
}

int
wn_ctl_req_check(const void *buf, size_t len, unsigned int nfds)
{
	const struct wn_ctl_op_info *info;
	struct wn_ctl_hdr h;
	/* aligned copy of the body: callers may pass unaligned datagrams */
	union {
		uint64_t align;
		uint8_t b[WN_CTL_MSG_MAX];
	} body;

	if (len < sizeof(h) || len > WN_CTL_MSG_MAX)
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != WN_CTL_MAGIC || h.len != len)
		return -EBADMSG;
	if (h.version != WN_CTL_VERSION)
		return -EPROTO;
	if (h.status != 0 || h.rsvd != 0)
		return -EBADMSG;
	info = wn_ctl_op_info(h.op);
	if (info == NULL || h.op == WN_CTL_CM_EVENT)
		return -EOPNOTSUPP;
	if (len != sizeof(h) + info->req_len)
		return -EBADMSG;
	if (nfds > info->req_fds_max)
		return -EINVAL;
	memcpy(body.b, (const uint8_t *)buf + sizeof(h), info->req_len);
	return body_check(h.op, body.b, nfds);
}

int
wn_ctl_event_check(const void *buf, size_t len)
{
	struct wn_ctl_hdr h;
	struct wn_ctl_cm_event ev;

	if (len != sizeof(h) + sizeof(ev))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != WN_CTL_MAGIC || h.version != WN_CTL_VERSION || h.len != len ||
	    h.op != WN_CTL_CM_EVENT)
		return -EBADMSG;
	memcpy(&ev, (const uint8_t *)buf + sizeof(h), sizeof(ev));
	if (ev.event >= WN_CTL_CM_EV_MAX || ev.id == 0 || ev.qpn > 0xffffffu)
		return -EINVAL;
	return conn_param_check(&ev.param);
}

int
wn_ctl_async_check(const void *buf, size_t len)
{
	struct wn_ctl_hdr h;
	struct wn_ctl_async_event ev;

	if (len != sizeof(h) + sizeof(ev))
		return -EBADMSG;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != WN_CTL_MAGIC || h.version != WN_CTL_VERSION || h.len != len ||
	    h.op != WN_CTL_ASYNC_EVENT || h.status != 0 || h.rsvd != 0)
		return -EBADMSG;
	memcpy(&ev, (const uint8_t *)buf + sizeof(h), sizeof(ev));
	if (ev.handle == 0 || ev.rsvd != 0)
		return -EINVAL;
	switch (ev.event) {
	case WN_CTL_ASYNC_CQ_ERR:
	case WN_CTL_ASYNC_SRQ_LIMIT_REACHED:
		return ev.vendor_err == 0 ? 0 : -EINVAL;
	case WN_CTL_ASYNC_QP_FATAL:
	case WN_CTL_ASYNC_QP_ACCESS_ERR:
		return 0;
	default:
		return -EINVAL;
	}
}

int
wn_ctl_send(int sock, const struct wn_ctl_hdr *msg, const int *fds, unsigned int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * WN_CTL_MAX_FDS)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {.iov_base = (void *)(uintptr_t)msg, .iov_len = msg->len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (nfds > WN_CTL_MAX_FDS)
		return -EINVAL;
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(&cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	do {
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == msg->len ? 0 : -EMSGSIZE;
}

long
wn_ctl_recv(int sock, void *buf, int *fds, unsigned int *nfds)
{
	return wn_ctl_recv_flags(sock, buf, fds, nfds, 0);
}

long
wn_ctl_recv_flags(int sock, void *buf, int *fds, unsigned int *nfds, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * WN_CTL_MAX_FDS)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {.iov_base = buf, .iov_len = WN_CTL_MSG_MAX};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf,
			    .msg_controllen = sizeof(cbuf.buf)};
	struct cmsghdr *c;
	ssize_t n;

	*nfds = 0;
	do {
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_TRUNC | flags);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		size_t cnt, i;
		int tmp;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < cnt; i++) {
			memcpy(&tmp, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*nfds < WN_CTL_MAX_FDS)
				fds[(*nfds)++] = tmp;
			else
				close(tmp);
		}
	}
	if ((mh.msg_flags & MSG_CTRUNC) != 0) {
		/* some fds were lost: the message cannot be trusted */
		while (*nfds > 0)
			close(fds[--(*nfds)]);
		return -EMSGSIZE;
	}
	return (long)n;
}

int
wn_ctl_llp_parse(const char *name)
{
	if (name == NULL || name[0] == '\0')
		return WN_CTL_LLP_DEFAULT;
	if (strcmp(name, "mpa") == 0 || strcmp(name, "tcp") == 0 || strcmp(name, "mpa-tcp") == 0)
		return WN_CTL_LLP_MPA;
	if (strcmp(name, "sctp") == 0)
		return WN_CTL_LLP_SCTP;
	return -EINVAL;
}

const char *
wn_ctl_llp_name(uint32_t llp)
{
	static const char *const names[WN_CTL_LLP_MAX] = {
		[WN_CTL_LLP_DEFAULT] = "default",
		[WN_CTL_LLP_MPA] = "mpa-tcp",
		[WN_CTL_LLP_SCTP] = "sctp",
	};

	return llp < WN_CTL_LLP_MAX ? names[llp] : "unknown";
}
