/* SPDX-License-Identifier: BSD-3-Clause */
/* The connection of the registered memory tests: see mr_pair.h. */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mr_pair.h"

#define CHUNK (4u << 20) /* the driver's buffer: Writes and Reads go in pieces of it */

const char *mrp_name = "mr";

static uint64_t
word(uint64_t seed, uint64_t off)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull ^ (off / 8 + 1) * 0xbf58476d1ce4e5b9ull;

	return x ^ (x >> 29);
}

void
mrp_fill(void *p, size_t len, uint64_t seed, uint64_t off)
{
	uint64_t *w = p;
	size_t i;

	for (i = 0; i < len / 8; i++)
		w[i] = word(seed, off + i * 8);
}

size_t
mrp_bad(const void *p, size_t len, uint64_t seed, uint64_t off)
{
	const uint64_t *w = p;
	size_t i, bad = 0;

	for (i = 0; i < len / 8; i++)
		bad += w[i] != word(seed, off + i * 8);
	return bad;
}

static struct rdma_cm_event *
expect(struct mrp *c, enum rdma_cm_event_type type)
{
	struct rdma_cm_event *ev;

	MRP_CHECK(rdma_get_cm_event(c->ch, &ev) == 0);
	if (ev->event != type) {
		fprintf(stderr, "%s: CM event %s, expected %s (status %d)\n", mrp_name,
			rdma_event_str(ev->event), rdma_event_str(type), ev->status);
		exit(2);
	}
	return ev;
}

static void
setup(struct mrp *c)
{
	struct ibv_qp_init_attr qa;

	c->pd = ibv_alloc_pd(c->id->verbs);
	MRP_CHECK(c->pd != NULL);
	c->cq = ibv_create_cq(c->id->verbs, 64, NULL, NULL, 0);
	c->rcq = ibv_create_cq(c->id->verbs, 64, NULL, NULL, 0);
	MRP_CHECK(c->cq != NULL && c->rcq != NULL);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = c->cq;
	qa.recv_cq = c->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 16;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	MRP_CHECK(rdma_create_qp(c->id, c->pd, &qa) == 0);
	c->ctl = calloc(2, sizeof(*c->ctl));
	MRP_CHECK(c->ctl != NULL);
	c->ctl_mr = ibv_reg_mr(c->pd, c->ctl, 2 * sizeof(*c->ctl), IBV_ACCESS_LOCAL_WRITE);
	MRP_CHECK(c->ctl_mr != NULL);
}

static void
post_recv(struct mrp *c, void *p, size_t len, uint32_t lkey, uint64_t wr_id)
{
	struct ibv_sge sge = {.addr = (uintptr_t)p, .length = (uint32_t)len, .lkey = lkey};
	struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1}, *bad;

	MRP_CHECK(ibv_post_recv(c->id->qp, &wr, &bad) == 0);
}

/* One operation of @p opcode from [p, p+len) of lkey; @return its completion status. */
static int
post_send(struct mrp *c, enum ibv_wr_opcode opcode, const void *p, size_t len, uint32_t lkey,
	  uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {.addr = (uintptr_t)p, .length = (uint32_t)len, .lkey = lkey};
	struct ibv_send_wr wr, *bad;
	struct ibv_wc wc;
	int n;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 1;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = opcode;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	MRP_CHECK(ibv_post_send(c->id->qp, &wr, &bad) == 0);
	while ((n = ibv_poll_cq(c->cq, 1, &wc)) == 0)
		;
	MRP_CHECK(n == 1 && wc.wr_id == 1);
	return wc.status;
}

/* The next receive's completion (the ctl slot or a data buffer): its status and length. */
static int
wait_recv(struct mrp *c, uint32_t *len)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(c->rcq, 1, &wc)) == 0)
		;
	MRP_CHECK(n == 1 && wc.wr_id >= 2);
	*len = wc.byte_len;
	return wc.status;
}

static void
send_ctl(struct mrp *c, const struct mrp_msg *m)
{
	c->ctl[1] = *m;
	MRP_CHECK(post_send(c, IBV_WR_SEND, &c->ctl[1], sizeof(*m), c->ctl_mr->lkey, 0, 0) ==
		  IBV_WC_SUCCESS);
}

static struct mrp_msg
recv_ctl(struct mrp *c)
{
	uint32_t len;

	MRP_CHECK(wait_recv(c, &len) == IBV_WC_SUCCESS && len == sizeof(struct mrp_msg));
	return c->ctl[0];
}

void
mrp_serve(struct mrp *c, const char *ip, const char *port)
{
	struct rdma_conn_param cp;
	struct addrinfo hints, *ai;
	struct rdma_cm_event *ev;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
	MRP_CHECK(getaddrinfo(ip, port, &hints, &ai) == 0);
	c->ch = rdma_create_event_channel();
	MRP_CHECK(c->ch != NULL);
	MRP_CHECK(rdma_create_id(c->ch, &c->listen, NULL, RDMA_PS_TCP) == 0);
	MRP_CHECK(rdma_bind_addr(c->listen, ai->ai_addr) == 0);
	MRP_CHECK(rdma_listen(c->listen, 1) == 0);
	freeaddrinfo(ai);
	printf("%s: listening\n", mrp_name);
	fflush(stdout);
	ev = expect(c, RDMA_CM_EVENT_CONNECT_REQUEST);
	c->id = ev->id;
	MRP_CHECK(rdma_ack_cm_event(ev) == 0);
	setup(c);
	post_recv(c, &c->ctl[0], sizeof(c->ctl[0]), c->ctl_mr->lkey, 2);
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = cp.initiator_depth = 4;
	MRP_CHECK(rdma_accept(c->id, &cp) == 0);
	MRP_CHECK(rdma_ack_cm_event(expect(c, RDMA_CM_EVENT_ESTABLISHED)) == 0);
}

/* Send a request and wait for its answer (the receive for it is posted first). */
static int
request(struct mrp *c, const struct mrp_msg *m)
{
	struct mrp_msg a;

	send_ctl(c, m);
	a = recv_ctl(c);
	post_recv(c, &c->ctl[0], sizeof(c->ctl[0]), c->ctl_mr->lkey, 2);
	MRP_CHECK(a.op == MRP_ACK);
	return a.status;
}

static struct mrp_msg
req(uint32_t op, const void *region, uint32_t rkey, uint64_t off, uint64_t len, uint64_t seed)
{
	struct mrp_msg m = {.op = op, .rkey = rkey, .addr = (uintptr_t)region + off, .len = len,
			    .seed = seed, .off = off};

	return m;
}

int
mrp_write(struct mrp *c, const void *region, uint32_t rkey, uint64_t off, uint64_t len,
	  uint64_t seed)
{
	struct mrp_msg m = req(MRP_WRITE, region, rkey, off, len, seed);

	return request(c, &m);
}

int
mrp_read(struct mrp *c, const void *region, uint32_t rkey, uint64_t off, uint64_t len,
	 uint64_t seed)
{
	struct mrp_msg m = req(MRP_READ, region, rkey, off, len, seed);

	return request(c, &m);
}

int
mrp_send(struct mrp *c, struct ibv_mr *mr, const void *p, uint64_t len, uint64_t seed)
{
	struct mrp_msg m = req(MRP_RECV, p, 0, 0, len, seed);
	int ret = request(c, &m);
	struct mrp_msg a;

	if (ret != 0)
		return ret;
	ret = post_send(c, IBV_WR_SEND, p, len, mr->lkey, 0, 0);
	if (ret != IBV_WC_SUCCESS)
		return 1000 + ret;
	a = recv_ctl(c);
	post_recv(c, &c->ctl[0], sizeof(c->ctl[0]), c->ctl_mr->lkey, 2);
	MRP_CHECK(a.op == MRP_ACK);
	return a.status;
}

void
mrp_bye(struct mrp *c)
{
	struct mrp_msg m = {.op = MRP_BYE};

	send_ctl(c, &m);
	MRP_CHECK(rdma_ack_cm_event(expect(c, RDMA_CM_EVENT_DISCONNECTED)) == 0);
}

/* ---------------------------------------------------------------- the driver */

static int
drive_rw(struct mrp *c, const struct mrp_msg *m)
{
	uint64_t done;

	for (done = 0; done < m->len; done += CHUNK) {
		uint64_t n = m->len - done < CHUNK ? m->len - done : CHUNK;
		int st;

		if (m->op == MRP_WRITE)
			mrp_fill(c->buf, n, m->seed, m->off + done);
		st = post_send(c, m->op == MRP_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ,
			       c->buf, n, c->buf_mr->lkey, m->addr + done, m->rkey);
		if (st != IBV_WC_SUCCESS)
			return 1000 + st;
		if (m->op == MRP_READ && mrp_bad(c->buf, n, m->seed, m->off + done) != 0)
			return -1;
	}
	return 0;
}

int
mrp_drive(const char *ip, const char *port)
{
	struct mrp cs, *c = &cs;
	struct rdma_conn_param cp;
	struct addrinfo hints, *ai;
	struct mrp_msg m, a = {.op = MRP_ACK};
	int failed = 0;

	memset(c, 0, sizeof(*c));
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST;
	MRP_CHECK(getaddrinfo(ip, port, &hints, &ai) == 0);
	c->ch = rdma_create_event_channel();
	MRP_CHECK(c->ch != NULL);
	MRP_CHECK(rdma_create_id(c->ch, &c->id, NULL, RDMA_PS_TCP) == 0);
	MRP_CHECK(rdma_resolve_addr(c->id, NULL, ai->ai_addr, 5000) == 0);
	MRP_CHECK(rdma_ack_cm_event(expect(c, RDMA_CM_EVENT_ADDR_RESOLVED)) == 0);
	MRP_CHECK(rdma_resolve_route(c->id, 5000) == 0);
	MRP_CHECK(rdma_ack_cm_event(expect(c, RDMA_CM_EVENT_ROUTE_RESOLVED)) == 0);
	freeaddrinfo(ai);
	setup(c);
	c->buf_len = CHUNK;
	c->buf = aligned_alloc(4096, CHUNK);
	MRP_CHECK(c->buf != NULL);
	c->buf_mr = ibv_reg_mr(c->pd, c->buf, CHUNK, IBV_ACCESS_LOCAL_WRITE);
	MRP_CHECK(c->buf_mr != NULL);
	post_recv(c, &c->ctl[0], sizeof(c->ctl[0]), c->ctl_mr->lkey, 2);
	memset(&cp, 0, sizeof(cp));
	cp.responder_resources = cp.initiator_depth = 4;
	MRP_CHECK(rdma_connect(c->id, &cp) == 0);
	MRP_CHECK(rdma_ack_cm_event(expect(c, RDMA_CM_EVENT_ESTABLISHED)) == 0);
	for (;;) {
		uint32_t len;

		m = recv_ctl(c);
		if (m.op == MRP_BYE)
			break;
		if (m.op == MRP_RECV) {
			/* the data's receive first, then the next request's, then the answers */
			MRP_CHECK(m.len <= c->buf_len);
			post_recv(c, c->buf, m.len, c->buf_mr->lkey, 3);
			a.status = 0;
			send_ctl(c, &a);
			a.status = wait_recv(c, &len);
			a.status = a.status != IBV_WC_SUCCESS ? 1000 + a.status
				   : len != m.len || mrp_bad(c->buf, len, m.seed, 0) != 0 ? -1 : 0;
		} else {
			a.status = drive_rw(c, &m);
		}
		failed |= a.status != 0;
		post_recv(c, &c->ctl[0], sizeof(c->ctl[0]), c->ctl_mr->lkey, 2);
		send_ctl(c, &a);
	}
	MRP_CHECK(rdma_disconnect(c->id) == 0);
	MRP_CHECK(rdma_ack_cm_event(expect(c, RDMA_CM_EVENT_DISCONNECTED)) == 0);
	rdma_destroy_qp(c->id);
	ibv_dereg_mr(c->buf_mr);
	ibv_dereg_mr(c->ctl_mr);
	ibv_destroy_cq(c->cq);
	ibv_destroy_cq(c->rcq);
	ibv_dealloc_pd(c->pd);
	rdma_destroy_id(c->id);
	rdma_destroy_event_channel(c->ch);
	free(c->buf);
	free(c->ctl);
	return failed;
}
