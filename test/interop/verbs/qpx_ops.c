/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The extended verbs end to end: two ids of this process connect through warpnicd (its
 * dataplane loops the connection back), each with a QP from rdma_create_qp_ex with
 * send_ops_flags and an extended CQ (ibv_create_cq_ex) polled with ibv_start_poll /
 * ibv_next_poll / ibv_end_poll and the ibv_wc_read_* accessors. The client posts every
 * ibv_wr_* operation of an RC QP: Send with an SGE list, Send with Immediate as inline data,
 * RDMA Write, Write with Immediate, Read, compare-and-swap and fetch-and-add, a Send with
 * Invalidate of a type 2 window the server bound with ibv_wr_bind_mw, then a window the
 * server invalidated locally (ibv_wr_local_inv), which the client's Write must find gone (the
 * server terminates the connection: QP_ACCESS_ERR on its QP).
 * Each result is checked in memory and in the completions. A batch with an error posts
 * nothing and ibv_wr_complete returns the error; ibv_wr_abort drops a batch.
 *   qpx_ops ADDRESS [PORT]
 * Exit status 0 = pass; the failing check is printed otherwise.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define CHECK(c)                                                                        \
	do {                                                                            \
		if (!(c)) {                                                             \
			fprintf(stderr, "qpx_ops: check failed line %d: %s (errno %d)\n", \
				__LINE__, #c, errno);                                   \
			exit(1);                                                        \
		}                                                                       \
	} while (0)

#define OPS                                                                                   \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_SEND_WITH_INV |     \
	 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |                       \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |                          \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW)
#define BUF 4096

struct side {
	struct rdma_cm_id *id;
	struct ibv_cq_ex *cq;
	struct ibv_qp_ex *qpx;
	struct ibv_mr *mr;
	uint8_t *buf;
};

struct comp {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len, qp_num, imm;
	unsigned int flags;
};

static struct rdma_cm_event *
expect(struct rdma_event_channel *ch, enum rdma_cm_event_type t)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *ev;

	CHECK(poll(&p, 1, 10000) == 1);
	CHECK(rdma_get_cm_event(ch, &ev) == 0);
	if (ev->event != t)
		fprintf(stderr, "qpx_ops: got %s, want %s\n", rdma_event_str(ev->event),
			rdma_event_str(t));
	CHECK(ev->event == t);
	return ev;
}

/* One completion of @p s, waiting up to 10 s, read through the extended CQ's accessors. */
static struct comp
next_comp(struct side *s)
{
	struct ibv_poll_cq_attr pa = {0};
	struct comp c;
	int ret, i;

	for (i = 0; i < 10000000; i++) {
		ret = ibv_start_poll(s->cq, &pa);
		if (ret != ENOENT)
			break;
	}
	CHECK(ret == 0);
	c.wr_id = s->cq->wr_id;
	c.status = s->cq->status;
	c.opcode = ibv_wc_read_opcode(s->cq);
	c.byte_len = ibv_wc_read_byte_len(s->cq);
	c.qp_num = ibv_wc_read_qp_num(s->cq);
	c.flags = ibv_wc_read_wc_flags(s->cq);
	c.imm = (c.flags & IBV_WC_WITH_INV) ? ibv_wc_read_invalidated_rkey(s->cq) :
					      be32toh(ibv_wc_read_imm_data(s->cq));
	CHECK(ibv_wc_read_src_qp(s->cq) == 0 && ibv_wc_read_slid(s->cq) == 0);
	/* one at a time: the next one stays queued for the next call */
	ibv_end_poll(s->cq);
	return c;
}

static void
expect_comp(struct side *s, uint64_t wr_id, enum ibv_wc_opcode op, uint32_t len)
{
	struct comp c = next_comp(s);

	if (c.wr_id != wr_id || c.status != IBV_WC_SUCCESS || c.opcode != op ||
	    (len != UINT32_MAX && c.byte_len != len))
		fprintf(stderr, "qpx_ops: completion wr_id %lu status %s opcode %d len %u, want "
			"wr_id %lu opcode %d len %u\n", (unsigned long)c.wr_id,
			ibv_wc_status_str(c.status), c.opcode, c.byte_len, (unsigned long)wr_id,
			op, len);
	CHECK(c.wr_id == wr_id && c.status == IBV_WC_SUCCESS && c.opcode == op);
	CHECK(len == UINT32_MAX || c.byte_len == len);
	CHECK(c.qp_num == s->id->qp->qp_num);
}

static void
make_qp(struct side *s)
{
	struct ibv_cq_init_attr_ex ca = {.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_RC, .sq_sig_all = 0,
		.cap = {.max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 4, .max_recv_sge = 4,
			.max_inline_data = 64},
		.comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .send_ops_flags = OPS};

	s->cq = ibv_create_cq_ex(s->id->verbs, &ca);
	CHECK(s->cq != NULL);
	qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(s->cq);
	CHECK(rdma_create_qp_ex(s->id, &qa) == 0);
	CHECK(s->id->pd != NULL && s->id->qp->pd == s->id->pd);
	s->qpx = ibv_qp_to_qp_ex(s->id->qp);
	CHECK(s->qpx != NULL);
	s->buf = aligned_alloc(4096, BUF);
	CHECK(s->buf != NULL);
	memset(s->buf, 0, BUF);
	s->mr = ibv_reg_mr(s->id->pd, s->buf, BUF,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
	CHECK(s->mr != NULL);
}

static void
post_recvs(struct side *s, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct ibv_sge sge = {.addr = (uintptr_t)s->buf + 1024 + 128 * i, .length = 128,
				      .lkey = s->mr->lkey};
		struct ibv_recv_wr wr = {.wr_id = 100 + i, .sg_list = &sge, .num_sge = 1}, *bad;

		CHECK(ibv_post_recv(s->id->qp, &wr, &bad) == 0);
	}
}

/* Start a one-operation batch (signaled, id @p wr_id). */
static struct ibv_qp_ex *
one(struct side *s, uint64_t wr_id)
{
	ibv_wr_start(s->qpx);
	s->qpx->wr_id = wr_id;
	s->qpx->wr_flags = IBV_SEND_SIGNALED;
	return s->qpx;
}

int
main(int argc, char **argv)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct rdma_conn_param cp = {.responder_resources = 4, .initiator_depth = 4};
	struct side cl = {0}, sv = {0};
	struct rdma_cm_id *lid;
	struct rdma_cm_event *ev;
	uint64_t raddr, *atom;
	struct ibv_mw *mw;
	uint32_t rkey;
	struct comp c;
	int i;

	CHECK(argc >= 2 && inet_pton(AF_INET, argv[1], &a.sin_addr) == 1);
	a.sin_port = htons(argc > 2 ? (uint16_t)atoi(argv[2]) : 7473);
	CHECK(ch != NULL);
	CHECK(rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_bind_addr(lid, (struct sockaddr *)&a) == 0);
	CHECK(rdma_listen(lid, 1) == 0);
	CHECK(rdma_create_id(ch, &cl.id, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_resolve_addr(cl.id, NULL, (struct sockaddr *)&a, 2000) == 0);
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	CHECK(rdma_resolve_route(cl.id, 2000) == 0);
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	make_qp(&cl);
	CHECK(rdma_connect(cl.id, &cp) == 0);
	ev = expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST);
	sv.id = ev->id;
	rdma_ack_cm_event(ev);
	make_qp(&sv);
	post_recvs(&sv, 8);
	CHECK(rdma_accept(sv.id, &cp) == 0);
	for (i = 0; i < 2; i++) /* both sides' ESTABLISHED, in either order */
		rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ESTABLISHED));
	raddr = (uintptr_t)sv.buf;

	/* Send from two SGEs, then Send with Immediate from inline data */
	memcpy(cl.buf, "0123456789abcdef", 16);
	memcpy(cl.buf + 512, "ghijklmnopqrstuv", 16);
	ibv_wr_start(cl.qpx);
	cl.qpx->wr_id = 1;
	cl.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(cl.qpx);
	ibv_wr_set_sge_list(cl.qpx, 2, (struct ibv_sge[]){
		{.addr = (uintptr_t)cl.buf, .length = 16, .lkey = cl.mr->lkey},
		{.addr = (uintptr_t)cl.buf + 512, .length = 16, .lkey = cl.mr->lkey}});
	cl.qpx->wr_id = 2;
	cl.qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send_imm(cl.qpx, htobe32(0x1234abcd));
	ibv_wr_set_inline_data(cl.qpx, "inline!!", 8);
	CHECK(ibv_wr_complete(cl.qpx) == 0);
	expect_comp(&cl, 1, IBV_WC_SEND, UINT32_MAX);
	expect_comp(&cl, 2, IBV_WC_SEND, UINT32_MAX);
	expect_comp(&sv, 100, IBV_WC_RECV, 32);
	CHECK(memcmp(sv.buf + 1024, "0123456789abcdefghijklmnopqrstuv", 32) == 0);
	c = next_comp(&sv);
	CHECK(c.wr_id == 101 && c.status == IBV_WC_SUCCESS && c.opcode == IBV_WC_RECV &&
	      c.byte_len == 8 && (c.flags & IBV_WC_WITH_IMM) && c.imm == 0x1234abcd);
	CHECK(memcmp(sv.buf + 1024 + 128, "inline!!", 8) == 0);

	/*
	 * RDMA Write, then Write with Immediate (a receive completes with the immediate). A
	 * Write completes at its source once sent; the sink's completion of the later Write
	 * with Immediate says both are placed (in order, RFC 5040 §5.5).
	 */
	memset(cl.buf, 0x5a, 256);
	memset(cl.buf + 256, 0xa5, 64);
	ibv_wr_rdma_write(one(&cl, 3), sv.mr->rkey, raddr + 2048);
	ibv_wr_set_sge(cl.qpx, cl.mr->lkey, (uintptr_t)cl.buf, 256);
	cl.qpx->wr_id = 4;
	ibv_wr_rdma_write_imm(cl.qpx, sv.mr->rkey, raddr + 2304, htobe32(77));
	ibv_wr_set_sge(cl.qpx, cl.mr->lkey, (uintptr_t)cl.buf + 256, 64);
	CHECK(ibv_wr_complete(cl.qpx) == 0);
	expect_comp(&cl, 3, IBV_WC_RDMA_WRITE, UINT32_MAX);
	expect_comp(&cl, 4, IBV_WC_RDMA_WRITE, UINT32_MAX);
	c = next_comp(&sv);
	CHECK(c.wr_id == 102 && c.status == IBV_WC_SUCCESS &&
	      c.opcode == IBV_WC_RECV_RDMA_WITH_IMM && (c.flags & IBV_WC_WITH_IMM) && c.imm == 77);
	for (i = 0; i < 256; i++)
		CHECK(sv.buf[2048 + i] == 0x5a);
	CHECK(sv.buf[2304] == 0xa5 && sv.buf[2304 + 63] == 0xa5);

	/* RDMA Read of what the Write left */
	memset(cl.buf + 3072, 0, 256);
	ibv_wr_rdma_read(one(&cl, 5), sv.mr->rkey, raddr + 2048);
	ibv_wr_set_sge(cl.qpx, cl.mr->lkey, (uintptr_t)cl.buf + 3072, 256);
	CHECK(ibv_wr_complete(cl.qpx) == 0);
	expect_comp(&cl, 5, IBV_WC_RDMA_READ, 256);
	CHECK(memcmp(cl.buf + 3072, sv.buf + 2048, 256) == 0);

	/* both atomics on one 8-octet word: 5 -> cmp_swp(5, 9) -> fetch_add(3) = 12 */
	atom = (uint64_t *)(sv.buf + 3968);
	*atom = 5;
	ibv_wr_atomic_cmp_swp(one(&cl, 6), sv.mr->rkey, (uintptr_t)atom, 5, 9);
	ibv_wr_set_sge(cl.qpx, cl.mr->lkey, (uintptr_t)cl.buf + 3968, 8);
	cl.qpx->wr_id = 7;
	ibv_wr_atomic_fetch_add(cl.qpx, sv.mr->rkey, (uintptr_t)atom, 3);
	ibv_wr_set_sge(cl.qpx, cl.mr->lkey, (uintptr_t)cl.buf + 3976, 8);
	CHECK(ibv_wr_complete(cl.qpx) == 0);
	expect_comp(&cl, 6, IBV_WC_COMP_SWAP, 8);
	expect_comp(&cl, 7, IBV_WC_FETCH_ADD, 8);
	CHECK(*(uint64_t *)(cl.buf + 3968) == 5 && *(uint64_t *)(cl.buf + 3976) == 9);
	CHECK(*atom == 12);

	/* a batch with an error posts nothing; an aborted one neither */
	ibv_wr_start(cl.qpx);
	cl.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(cl.qpx);
	ibv_wr_set_sge_list(cl.qpx, 5, (struct ibv_sge[5]){{0}}); /* more SGEs than the QP has */
	CHECK(ibv_wr_complete(cl.qpx) == EINVAL);
	ibv_wr_start(cl.qpx);
	ibv_wr_send(cl.qpx);
	ibv_wr_set_sge(cl.qpx, cl.mr->lkey, (uintptr_t)cl.buf, 4);
	ibv_wr_abort(cl.qpx);

	/* a type 2 window bound by the server's ibv_wr_bind_mw, written, then invalidated by
	 * the client's Send with Invalidate */
	mw = ibv_alloc_mw(sv.id->pd, IBV_MW_TYPE_2);
	CHECK(mw != NULL);
	rkey = ibv_inc_rkey(mw->rkey);
	ibv_wr_bind_mw(one(&sv, 200), mw, rkey, &(struct ibv_mw_bind_info){
		.mr = sv.mr, .addr = raddr + 256, .length = 256,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE});
	CHECK(ibv_wr_complete(sv.qpx) == 0);
	expect_comp(&sv, 200, IBV_WC_BIND_MW, UINT32_MAX);
	CHECK(mw->rkey == rkey);
	memset(cl.buf, 0x3c, 32);
	ibv_wr_rdma_write(one(&cl, 8), rkey, raddr + 256);
	ibv_wr_set_sge(cl.qpx, cl.mr->lkey, (uintptr_t)cl.buf, 32);
	cl.qpx->wr_id = 9;
	ibv_wr_send_inv(cl.qpx, rkey);
	ibv_wr_set_sge(cl.qpx, cl.mr->lkey, (uintptr_t)cl.buf, 4);
	CHECK(ibv_wr_complete(cl.qpx) == 0);
	expect_comp(&cl, 8, IBV_WC_RDMA_WRITE, UINT32_MAX);
	expect_comp(&cl, 9, IBV_WC_SEND, UINT32_MAX);
	c = next_comp(&sv);
	CHECK(c.wr_id == 103 && c.status == IBV_WC_SUCCESS && c.opcode == IBV_WC_RECV &&
	      (c.flags & IBV_WC_WITH_INV) && c.imm == rkey);
	CHECK(sv.buf[256] == 0x3c && sv.buf[256 + 31] == 0x3c); /* placed before the Send */

	/* bound again, then invalidated by the server itself: the client's Write finds it gone */
	rkey = ibv_inc_rkey(mw->rkey);
	ibv_wr_bind_mw(one(&sv, 201), mw, rkey, &(struct ibv_mw_bind_info){
		.mr = sv.mr, .addr = raddr + 256, .length = 256,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE});
	sv.qpx->wr_id = 202;
	ibv_wr_local_inv(sv.qpx, rkey);
	CHECK(ibv_wr_complete(sv.qpx) == 0);
	expect_comp(&sv, 201, IBV_WC_BIND_MW, UINT32_MAX);
	expect_comp(&sv, 202, IBV_WC_LOCAL_INV, UINT32_MAX);
	memset(cl.buf, 0x77, 32);
	ibv_wr_rdma_write(one(&cl, 10), rkey, raddr + 256);
	ibv_wr_set_sge(cl.qpx, cl.mr->lkey, (uintptr_t)cl.buf, 32);
	CHECK(ibv_wr_complete(cl.qpx) == 0);
	/* the sink terminates the connection for the access violation (RFC 5040 §7.3) */
	{
		struct pollfd p = {.fd = sv.id->verbs->async_fd, .events = POLLIN};
		struct ibv_async_event ae;
		int seen = 0;

		while (!seen) {
			CHECK(poll(&p, 1, 10000) == 1);
			CHECK(ibv_get_async_event(sv.id->verbs, &ae) == 0);
			seen = ae.event_type == IBV_EVENT_QP_ACCESS_ERR && ae.element.qp == sv.id->qp;
			ibv_ack_async_event(&ae);
		}
	}
	CHECK(sv.buf[256] == 0x3c && sv.buf[256 + 31] == 0x3c); /* not overwritten */
	printf("qpx_ops: every ibv_wr_* operation of an RC QP, polled with ibv_start_poll\n");
	return 0;
}
