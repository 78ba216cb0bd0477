/* SPDX-License-Identifier: BSD-3-Clause */
/* Control protocol validation (wn_ctl_req_check / wn_ctl_event_check / wn_ctl_async_check):
 * what the server accepts and what it must refuse before touching any state. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "wn_ctl.h"

struct msg {
	struct wn_ctl_hdr h;
	union {
		struct wn_ctl_reg_mr_req mr;
		struct wn_ctl_mr_pieces_req mp;
		struct wn_ctl_rereg_mr_req rr;
		struct wn_ctl_create_cq_req cq;
		struct wn_ctl_create_qp_req qp;
		struct wn_ctl_modify_qp_req mqp;
		struct wn_ctl_cm_addr_req addr;
		struct wn_ctl_cm_conn_req conn;
		struct wn_ctl_cm_migrate_req mig;
		struct wn_ctl_cm_create_id_req cid;
		struct wn_ctl_modify_qp_req mq;
		struct wn_ctl_hello_req hello;
		struct wn_ctl_handle hd;
	} b;
};

static size_t
mk(struct msg *m, uint16_t op)
{
	size_t bl = wn_ctl_op_info(op)->req_len;

	memset(m, 0, sizeof(*m));
	wn_ctl_hdr_init(&m->h, op, 1, bl);
	return sizeof(m->h) + bl;
}

static void
test_header(void **state)
{
	struct msg m;
	size_t len;

	(void)state;
	len = mk(&m, WN_CTL_ALLOC_PD);
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
	assert_int_equal(wn_ctl_req_check(&m, len - 1, 0), -EBADMSG);
	m.h.magic ^= 1;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EBADMSG);
	len = mk(&m, WN_CTL_ALLOC_PD);
	m.h.version = WN_CTL_VERSION + 1;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EPROTO);
	len = mk(&m, WN_CTL_ALLOC_PD);
	m.h.op = WN_CTL_OP_MAX;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EOPNOTSUPP);
	m.h.op = WN_CTL_CM_EVENT; /* server-to-client only */
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EOPNOTSUPP);
	len = mk(&m, WN_CTL_ALLOC_PD);
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL); /* no fds expected */
	/* body size must match the op exactly */
	len = mk(&m, WN_CTL_DEALLOC_PD);
	m.b.hd.handle = 5;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
	m.h.len = (uint32_t)(len + 4);
	assert_int_equal(wn_ctl_req_check(&m, len + 4, 0), -EBADMSG);
	/* handle 0 is never valid */
	len = mk(&m, WN_CTL_DEALLOC_PD);
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	/* hello name must be terminated */
	len = mk(&m, WN_CTL_HELLO);
	memset(m.b.hello.name, 'x', sizeof(m.b.hello.name));
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	/* the lower layer a client asks for: a known one or the daemon's choice */
	len = mk(&m, WN_CTL_HELLO);
	m.b.hello.llp = WN_CTL_LLP_SCTP;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
	m.b.hello.llp = WN_CTL_LLP_MAX;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
}

static void
test_llp_names(void **state)
{
	(void)state;
	assert_int_equal(wn_ctl_llp_parse(NULL), WN_CTL_LLP_DEFAULT);
	assert_int_equal(wn_ctl_llp_parse(""), WN_CTL_LLP_DEFAULT);
	assert_int_equal(wn_ctl_llp_parse("mpa"), WN_CTL_LLP_MPA);
	assert_int_equal(wn_ctl_llp_parse("tcp"), WN_CTL_LLP_MPA);
	assert_int_equal(wn_ctl_llp_parse("sctp"), WN_CTL_LLP_SCTP);
	assert_int_equal(wn_ctl_llp_parse("SCTP "), -EINVAL);
	assert_string_equal(wn_ctl_llp_name(WN_CTL_LLP_SCTP), "sctp");
	assert_string_equal(wn_ctl_llp_name(WN_CTL_LLP_MPA), "mpa-tcp");
	assert_string_equal(wn_ctl_llp_name(7), "unknown");
}

/* Two 4 KiB pieces of one fd for the 8000 octets at 0x10000 + 100. */
static size_t
mk_reg_mr(struct msg *m)
{
	size_t len = mk(m, WN_CTL_REG_MR);

	m->b.mr.pd = 1;
	m->b.mr.addr = 0x10000 + 100;
	m->b.mr.length = 8000; /* pages 0x10000..0x12000 */
	m->b.mr.span = 8192;
	m->b.mr.n_total = 2;
	m->b.mr.n_pieces = 2;
	m->b.mr.align_shift = 12;
	m->b.mr.piece[0].addr = 0x10000;
	m->b.mr.piece[0].len = 4096;
	m->b.mr.piece[0].src = WN_CTL_MR_SRC_FD;
	m->b.mr.piece[0].page_shift = 12;
	m->b.mr.piece[1] = m->b.mr.piece[0];
	m->b.mr.piece[1].addr = 0x11000;
	m->b.mr.piece[1].offset = 8192;
	m->b.mr.access = WN_CTL_ACCESS_LOCAL_WRITE | WN_CTL_ACCESS_REMOTE_WRITE;
	return len;
}

static void
test_reg_mr(void **state)
{
	struct msg m;
	size_t len;

	(void)state;
	len = mk_reg_mr(&m);
	assert_int_equal(wn_ctl_req_check(&m, len, 1), 0);
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);  /* fd index 0 not there */
	assert_int_equal(wn_ctl_req_check(&m, len, 3), -EINVAL);  /* more fds than pieces */
	m.b.mr.piece[1].fd_index = 1;
	assert_int_equal(wn_ctl_req_check(&m, len, 2), 0);
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	len = mk_reg_mr(&m);
	m.b.mr.piece[1].len = 8192;                               /* pieces exceed the span */
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	len = mk_reg_mr(&m);
	m.b.mr.piece[1].offset = 100;                             /* unaligned offset */
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	len = mk_reg_mr(&m);
	m.b.mr.piece[1].addr = 0x12000;                           /* a hole between pieces */
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	len = mk_reg_mr(&m);
	m.b.mr.piece[1].src = 3;                                  /* unknown source */
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	m.b.mr.piece[1].src = WN_CTL_MR_SRC_PEER;                 /* warpnicd opens it */
	assert_int_equal(wn_ctl_req_check(&m, len, 1), 0);
	m.b.mr.piece[1].fd_index = 1;                             /* ... with no fd */
	assert_int_equal(wn_ctl_req_check(&m, len, 2), -EINVAL);
	len = mk_reg_mr(&m);
	m.b.mr.piece[2].len = 4096;                               /* a slot after the last */
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	len = mk_reg_mr(&m);
	m.b.mr.piece[0].rsvd = 1;
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	len = mk_reg_mr(&m);
	m.b.mr.span = 12288;                                      /* ends a page after the MR */
	m.b.mr.n_total = 3;
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	len = mk_reg_mr(&m);
	m.b.mr.piece[0].addr = 0xf000;                            /* starts a page before it */
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	len = mk_reg_mr(&m);
	m.b.mr.n_total = 5;                                       /* more to come */
	m.b.mr.span = 16384;
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);  /* but the MR ends earlier */
	m.b.mr.span = 8192;
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);  /* no room for them */
	len = mk_reg_mr(&m);
	m.b.mr.access = WN_CTL_ACCESS_REMOTE_WRITE;               /* needs local write */
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	len = mk_reg_mr(&m);
	m.b.mr.addr = UINT64_MAX - 10;                            /* wraps */
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	len = mk_reg_mr(&m);
	m.b.mr.flags = WN_CTL_MR_F_REREG;                         /* an ibv_rereg_mr's */
	assert_int_equal(wn_ctl_req_check(&m, len, 1), 0);
	m.b.mr.flags = WN_CTL_MR_F_REREG | WN_CTL_MR_F_FAST_REG;
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	m.b.mr.flags = 1u << 2;
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);

	/* REREG_MR: two MRs, not one twice, no fd */
	len = mk(&m, WN_CTL_REREG_MR);
	m.b.rr.mr = 0x10002;
	m.b.rr.old = 0x10001;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	assert_int_equal(wn_ctl_req_check(&m, len - 1, 0), -EBADMSG);
	m.b.rr.old = m.b.rr.mr;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	m.b.rr.old = 0;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	m.b.rr.old = 0x10001;
	m.b.rr.mr = 0;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
}

/*
 * A 2 MiB hugetlbfs page holding a 100-octet MR: the piece starts before the MR and ends
 * after it; then 40 such pages, the first 16 in REG_MR and the rest in MR_PIECES.
 */
static void
test_reg_mr_huge(void **state)
{
	const uint64_t huge = 2u << 20, base = 0x7f0000000000ull;
	struct msg m;
	size_t len;
	uint32_t i;

	(void)state;
	len = mk(&m, WN_CTL_REG_MR);
	m.b.mr.pd = 1;
	m.b.mr.addr = base + 5000;
	m.b.mr.length = 100;
	m.b.mr.span = huge;
	m.b.mr.n_total = 1;
	m.b.mr.n_pieces = 1;
	m.b.mr.align_shift = 21;
	m.b.mr.piece[0].addr = base;
	m.b.mr.piece[0].len = huge;
	m.b.mr.piece[0].src = WN_CTL_MR_SRC_FD;
	m.b.mr.piece[0].page_shift = 21;
	assert_int_equal(wn_ctl_req_check(&m, len, 1), 0);
	m.b.mr.align_shift = 12;                       /* smaller than a piece's page */
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	m.b.mr.align_shift = 21;
	m.b.mr.piece[0].offset = 4096;                 /* not a hugepage of the file */
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);
	m.b.mr.piece[0].offset = huge;
	m.b.mr.piece[0].page_shift = 16;               /* no such page size */
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL);

	len = mk(&m, WN_CTL_REG_MR);
	m.b.mr.pd = 1;
	m.b.mr.addr = base;
	m.b.mr.length = 40 * huge;
	m.b.mr.span = 40 * huge;
	m.b.mr.n_total = 40;
	m.b.mr.n_pieces = WN_CTL_MR_MSG_PIECES;
	m.b.mr.align_shift = 21;
	for (i = 0; i < WN_CTL_MR_MSG_PIECES; i++) {
		m.b.mr.piece[i].addr = base + i * huge;
		m.b.mr.piece[i].len = huge;
		m.b.mr.piece[i].src = WN_CTL_MR_SRC_FD;
		m.b.mr.piece[i].page_shift = 21;
		m.b.mr.piece[i].fd_index = (uint8_t)i;
	}
	assert_int_equal(wn_ctl_req_check(&m, len, WN_CTL_MR_MSG_PIECES), 0);
	m.b.mr.n_total = WN_CTL_MR_PIECES_MAX + 1;
	assert_int_equal(wn_ctl_req_check(&m, len, WN_CTL_MR_MSG_PIECES), -EINVAL);

	len = mk(&m, WN_CTL_MR_PIECES);
	m.b.mp.mr = 7;
	m.b.mp.n_pieces = 2;
	for (i = 0; i < 2; i++) {
		m.b.mp.piece[i].addr = base + (16 + i) * huge;
		m.b.mp.piece[i].len = huge;
		m.b.mp.piece[i].src = WN_CTL_MR_SRC_FD;
		m.b.mp.piece[i].page_shift = 21;
		m.b.mp.piece[i].fd_index = (uint8_t)i;
	}
	assert_int_equal(wn_ctl_req_check(&m, len, 2), 0);
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL); /* piece 1's fd is missing */
	m.b.mp.piece[1].addr += huge;                              /* not after piece 0 */
	assert_int_equal(wn_ctl_req_check(&m, len, 2), -EINVAL);
	m.b.mp.piece[1].addr -= huge;
	m.b.mp.n_pieces = 0;
	assert_int_equal(wn_ctl_req_check(&m, len, 2), -EINVAL);
	m.b.mp.n_pieces = 2;
	m.b.mp.mr = 0;
	assert_int_equal(wn_ctl_req_check(&m, len, 2), -EINVAL);
}

/* MODIFY_QP: the IB path attributes are checked against their ranges when the mask names them. */
static void
test_modify_qp_path(void **state)
{
	struct msg m;
	size_t len;

	(void)state;
	len = mk(&m, WN_CTL_MODIFY_QP);
	m.b.mqp.qp = 1;
	m.b.mqp.mask = WN_CTL_QP_STATE | WN_CTL_QP_IB_PATH | WN_CTL_QP_RQ_PSN |
		       WN_CTL_QP_PATH_MTU | WN_CTL_QP_MIN_RNR_TIMER;
	m.b.mqp.qp_state = WN_CTL_QPS_RTR;
	m.b.mqp.path.is_global = 1;
	m.b.mqp.path.dgid[10] = m.b.mqp.path.dgid[11] = 0xff;
	m.b.mqp.path.dest_qp_num = 0xffffff;
	m.b.mqp.path.rq_psn = 0xffffff;
	m.b.mqp.path.path_mtu = 3;
	m.b.mqp.path.min_rnr_timer = 12;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
	m.b.mqp.path.dest_qp_num = 1u << 24; /* QP numbers have 24 bits */
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	m.b.mqp.path.dest_qp_num = 7;
	m.b.mqp.path.path_mtu = 6;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	m.b.mqp.path.path_mtu = 0;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	m.b.mqp.mask &= ~WN_CTL_QP_PATH_MTU; /* a field the mask does not name is not read */
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
	m.b.mqp.mask |= WN_CTL_QP_TIMEOUT | WN_CTL_QP_RETRY_CNT | WN_CTL_QP_RNR_RETRY |
			WN_CTL_QP_SQ_PSN;
	m.b.mqp.path.timeout = 31;
	m.b.mqp.path.retry_cnt = 7;
	m.b.mqp.path.rnr_retry = 7;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
	m.b.mqp.path.timeout = 32; /* 5 bits (IBTA 9.7.6.1.3) */
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	m.b.mqp.path.timeout = 14;
	m.b.mqp.path.retry_cnt = 8; /* 3 bits */
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	m.b.mqp.path.retry_cnt = 7;
	m.b.mqp.path.sq_psn = 1u << 24;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	m.b.mqp.path.sq_psn = 0;
	m.b.mqp.path.rsvd = 1; /* reserved: zero */
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	m.b.mqp.path.rsvd = 0;
	m.b.mqp.mask |= 1u << 30; /* not an attribute of ours */
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
}

static void
test_qp_cq_cm(void **state)
{
	struct msg m;
	size_t len;

	(void)state;
	len = mk(&m, WN_CTL_CREATE_CQ);
	m.b.cq.cqe = 10;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
	assert_int_equal(wn_ctl_req_check(&m, len, 1), -EINVAL); /* fd without the flag */
	m.b.cq.flags = WN_CTL_CQ_NOTIFY_FD;
	assert_int_equal(wn_ctl_req_check(&m, len, 1), 0);
	len = mk(&m, WN_CTL_CREATE_QP);
	m.b.qp.pd = m.b.qp.send_cq = m.b.qp.recv_cq = 1;
	m.b.qp.qp_type = WN_CTL_QPT_RC;
	m.b.qp.max_send_wr = 1;
	m.b.qp.max_recv_wr = 1;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
	m.b.qp.qp_type = WN_CTL_QPT_UD;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
	m.b.qp.qp_type = 3; /* UC */
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	len = mk(&m, WN_CTL_CM_BIND);
	m.b.addr.id = 3;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL); /* bind needs an address */
	m.b.addr.src.family = WN_CTL_AF_INET;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
	m.b.addr.src.addr[8] = 1; /* IPv4 with junk after the 4 octets */
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	len = mk(&m, WN_CTL_CM_CONNECT);
	m.b.conn.id = 3;
	m.b.conn.param.pd_len = WN_CTL_PD_MAX;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
	m.b.conn.param.pd_len = WN_CTL_PD_MAX + 1;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	m.b.conn.param.pd_len = 0;
	m.b.conn.param.ird = 0x4000; /* 14-bit field in MPA v2 (RFC 6581 §5) */
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	/* rdma_cm's port spaces: TCP and UDP (UD QPs) */
	len = mk(&m, WN_CTL_CM_CREATE_ID);
	m.b.cid.channel = 1;
	m.b.cid.ps = WN_CTL_PS_UDP;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
	m.b.cid.ps = 0x0002; /* IPoIB */
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	/* a UD QP's SQ PSN has 24 bits, its reserved octet is zero */
	len = mk(&m, WN_CTL_MODIFY_QP);
	m.b.mq.qp = 1;
	m.b.mq.mask = WN_CTL_QP_SQ_PSN | WN_CTL_QP_QKEY;
	m.b.mq.ud.sq_psn = 0xffffff;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
	m.b.mq.ud.sq_psn = 0x1000000;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	m.b.mq.ud.sq_psn = 0;
	m.b.mq.ud.rsvd = 1;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	len = mk(&m, WN_CTL_CM_MIGRATE_ID); /* rdma_migrate_id: an id and a channel */
	m.b.mig.id = 3;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), -EINVAL);
	m.b.mig.channel = 2;
	assert_int_equal(wn_ctl_req_check(&m, len, 0), 0);
}

static void
test_event(void **state)
{
	struct {
		struct wn_ctl_hdr h;
		struct wn_ctl_cm_event ev;
	} e;

	(void)state;
	memset(&e, 0, sizeof(e));
	wn_ctl_hdr_init(&e.h, WN_CTL_CM_EVENT, 1, sizeof(e.ev));
	e.ev.id = 1;
	e.ev.event = WN_CTL_CM_EV_ESTABLISHED;
	assert_int_equal(wn_ctl_event_check(&e, sizeof(e)), 0);
	e.ev.qpn = 0xffffff; /* a UDP id's ESTABLISHED: the passive QP */
	assert_int_equal(wn_ctl_event_check(&e, sizeof(e)), 0);
	e.ev.qpn = 0x1000000;
	assert_int_equal(wn_ctl_event_check(&e, sizeof(e)), -EINVAL);
	e.ev.qpn = 0;
	e.ev.event = WN_CTL_CM_EV_MAX;
	assert_int_equal(wn_ctl_event_check(&e, sizeof(e)), -EINVAL);
	e.ev.event = 0;
	assert_int_equal(wn_ctl_event_check(&e, sizeof(e) - 1), -EBADMSG);
}

/* Async events: known types only, a handle, vendor_err only on QP events, reserved zero. */
static void
test_async_event(void **state)
{
	struct {
		struct wn_ctl_hdr h;
		struct wn_ctl_async_event ev;
	} e;
	struct msg m;

	(void)state;
	memset(&e, 0, sizeof(e));
	wn_ctl_hdr_init(&e.h, WN_CTL_ASYNC_EVENT, 1, sizeof(e.ev));
	e.ev.event = WN_CTL_ASYNC_QP_FATAL;
	e.ev.handle = 7;
	e.ev.vendor_err = 0x2002;
	assert_int_equal(wn_ctl_async_check(&e, sizeof(e)), 0);
	e.ev.event = WN_CTL_ASYNC_QP_ACCESS_ERR;
	assert_int_equal(wn_ctl_async_check(&e, sizeof(e)), 0);
	e.ev.event = WN_CTL_ASYNC_SRQ_LIMIT_REACHED; /* no Terminate behind it */
	assert_int_equal(wn_ctl_async_check(&e, sizeof(e)), -EINVAL);
	e.ev.vendor_err = 0;
	assert_int_equal(wn_ctl_async_check(&e, sizeof(e)), 0);
	e.ev.event = WN_CTL_ASYNC_CQ_ERR;
	assert_int_equal(wn_ctl_async_check(&e, sizeof(e)), 0);
	e.ev.event = 2; /* QP_REQ_ERR: never raised */
	assert_int_equal(wn_ctl_async_check(&e, sizeof(e)), -EINVAL);
	e.ev.event = WN_CTL_ASYNC_QP_FATAL;
	e.ev.handle = 0;
	assert_int_equal(wn_ctl_async_check(&e, sizeof(e)), -EINVAL);
	e.ev.handle = 7;
	e.ev.rsvd = 1;
	assert_int_equal(wn_ctl_async_check(&e, sizeof(e)), -EINVAL);
	e.ev.rsvd = 0;
	assert_int_equal(wn_ctl_async_check(&e, sizeof(e) - 1), -EBADMSG);
	e.h.op = WN_CTL_CM_EVENT;
	assert_int_equal(wn_ctl_async_check(&e, sizeof(e)), -EBADMSG);
	/* a client cannot send one; ASYNC_CHANNEL has no body and carries no fd */
	e.h.op = WN_CTL_ASYNC_EVENT;
	assert_int_equal(wn_ctl_req_check(&e, sizeof(e), 0), -EOPNOTSUPP);
	memset(&m, 0, sizeof(m));
	wn_ctl_hdr_init(&m.h, WN_CTL_ASYNC_CHANNEL, 1, 0);
	assert_int_equal(wn_ctl_req_check(&m, sizeof(m.h), 0), 0);
	assert_int_equal(wn_ctl_req_check(&m, sizeof(m.h), 1), -EINVAL);
	assert_int_equal(wn_ctl_op_info(WN_CTL_ASYNC_CHANNEL)->resp_fds, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_llp_names),
		cmocka_unit_test(test_reg_mr),
		cmocka_unit_test(test_reg_mr_huge),
		cmocka_unit_test(test_qp_cq_cm),
		cmocka_unit_test(test_modify_qp_path),
		cmocka_unit_test(test_event),
		cmocka_unit_test(test_async_event),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
