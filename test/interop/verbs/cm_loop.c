/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_cm through the warpnic shims, as an application sees it: two ids of this process
 * connect to each other through warpnicd (its dataplane loops the connection back). Checks
 * event channel fds, CONNECT_REQUEST private data and IRD/ORD, ESTABLISHED on both sides
 * with the QP in RTS, re-listen refused while the listener is active, DISCONNECTED on both
 * sides, reject with private data, rdma_getaddrinfo/rdma_create_ep (rsockets: rs_loop.c).
 * Exit status 0 = pass; the failing check is printed otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define CHECK(c)                                                                   \
	do {                                                                       \
		if (!(c)) {                                                        \
			fprintf(stderr, "cm_loop: check failed line %d: %s (errno %d)\n", \
				__LINE__, #c, errno);                              \
			exit(1);                                                   \
		}                                                                  \
	} while (0)

static struct rdma_cm_event *
expect(struct rdma_event_channel *ch, enum rdma_cm_event_type t)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *ev;

	CHECK(poll(&p, 1, 5000) == 1);
	CHECK(rdma_get_cm_event(ch, &ev) == 0);
	if (ev->event != t)
		fprintf(stderr, "cm_loop: got %s, want %s\n", rdma_event_str(ev->event),
			rdma_event_str(t));
	CHECK(ev->event == t);
	return ev;
}

static void *
cq_waiter(void *arg)
{
	struct ibv_comp_channel *ch = arg;
	struct ibv_cq *cq;
	void *ctx;

	ibv_get_cq_event(ch, &cq, &ctx); /* blocks: nothing will complete */
	return NULL;
}

static void *
cm_waiter(void *arg)
{
	struct rdma_cm_event *ev;

	rdma_get_cm_event(arg, &ev); /* blocks: no event will come */
	return NULL;
}

/* rping cancels its CQ and CM threads: both blocking calls must be cancellation points */
static void
check_cancel(void *(*fn)(void *), void *arg)
{
	pthread_t th;
	void *ret;

	CHECK(pthread_create(&th, NULL, fn, arg) == 0);
	usleep(100000); /* let it block; cancellation works whether or not it got there */
	CHECK(pthread_cancel(th) == 0);
	CHECK(pthread_join(th, &ret) == 0);
	CHECK(ret == PTHREAD_CANCELED);
}

struct waiter {
	void *(*fn)(void *);
	void *arg;
	pid_t tid;
	int returned;
};

static void *
waiter_run(void *arg)
{
	struct waiter *w = arg;

	void *ret;

	__atomic_store_n(&w->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	ret = w->fn(w->arg);
	__atomic_store_n(&w->returned, 1, __ATOMIC_RELEASE);
	return ret;
}

/* The system call thread @p tid is in (-1 when it runs in user space or is gone). */
static long
thread_syscall(pid_t tid)
{
	char path[64], buf[64];
	FILE *f;
	long nr = -1;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "r");
	if (f == NULL)
		return -1;
	if (fgets(buf, sizeof(buf), f) != NULL && buf[0] != 'r')
		nr = strtol(buf, NULL, 10);
	fclose(f);
	return nr;
}

/* wait until thread @p tid is blocked in system call @p nr */
static void
wait_syscall(pid_t tid, long nr)
{
	int i;

	for (i = 0; i < 5000 && thread_syscall(tid) != nr; i++)
		usleep(1000);
	CHECK(thread_syscall(tid) == nr);
}

/*
 * A thread blocked reading a channel that another thread destroys stays blocked, as with
 * the kernel's fds (rping's CM thread exit()s on an error): destroy() is called once the
 * waiter sits in its read; the waiter is woken (EOF) and must block again in another system
 * call instead of returning; it is then cancelled.
 */
static void
check_destroy_under_reader(void *(*fn)(void *), void *arg, long nr, void (*destroy)(void *))
{
	struct waiter w = {.fn = fn, .arg = arg};
	pthread_t th;
	void *ret;
	long now;
	int i;

	CHECK(pthread_create(&th, NULL, waiter_run, &w) == 0);
	for (i = 0; i < 5000 && __atomic_load_n(&w.tid, __ATOMIC_ACQUIRE) == 0; i++)
		usleep(1000);
	CHECK(w.tid != 0);
	wait_syscall(w.tid, nr);
	destroy(arg);
	for (i = 0; i < 5000; i++) {
		if (__atomic_load_n(&w.returned, __ATOMIC_ACQUIRE))
			break;
		now = thread_syscall(w.tid);
		if (now != -1 && now != nr)
			break; /* blocked elsewhere */
		usleep(1000);
	}
	CHECK(!__atomic_load_n(&w.returned, __ATOMIC_ACQUIRE));
	CHECK(pthread_cancel(th) == 0);
	CHECK(pthread_join(th, &ret) == 0);
	CHECK(ret == PTHREAD_CANCELED);
}

static void
destroy_comp_channel(void *ch)
{
	CHECK(ibv_destroy_comp_channel(ch) == 0);
}

static void
destroy_event_channel(void *ch)
{
	rdma_destroy_event_channel(ch);
}

/* rdma_server's half of a synchronous endpoint connection */
static void *
ep_server(void *arg)
{
	struct rdma_cm_id *listen = arg, *id = NULL;

	if (rdma_get_request(listen, &id) != 0 || id->qp == NULL || id->recv_cq == NULL ||
	    rdma_accept(id, NULL) != 0)
		return NULL;
	return id;
}

static struct ibv_qp *
make_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = 4;
	a.cap.max_recv_wr = 4;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	/* NULL CQs: rdma_create_qp creates CQs + channels with cq_context = id */
	CHECK(rdma_create_qp(id, NULL, &a) == 0);
	CHECK(id->send_cq != NULL && id->recv_cq_channel != NULL && id->qp != NULL);
	CHECK(id->send_cq->cq_context == id);
	return id->qp;
}

int
main(int argc, char **argv)
{
	const char *ip = argc > 1 ? argv[1] : "198.18.0.1";
	struct rdma_event_channel *sch, *cch;
	struct rdma_cm_id *lid, *cid, *pid, *lid2;
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct sockaddr_in sa;
	struct rdma_addrinfo hints, *res;

	sch = rdma_create_event_channel();
	cch = rdma_create_event_channel();
	CHECK(sch != NULL && cch != NULL && sch->fd >= 0 && cch->fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(18515);
	CHECK(inet_pton(AF_INET, ip, &sa.sin_addr) == 1);

	CHECK(rdma_create_id(sch, &lid, (void *)0x5151, RDMA_PS_TCP) == 0);
	CHECK(rdma_bind_addr(lid, (struct sockaddr *)&sa) == 0);
	CHECK(rdma_listen(lid, 8) == 0);
	CHECK(lid->verbs != NULL);
	CHECK(lid->verbs->device->transport_type == IBV_TRANSPORT_IWARP);
	CHECK(rdma_create_id(sch, &lid2, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_bind_addr(lid2, (struct sockaddr *)&sa) != 0 && errno == EADDRINUSE);
	/* an id that never took part in a connection, and a listener, cannot disconnect */
	CHECK(rdma_disconnect(lid2) != 0 && errno == EINVAL);
	CHECK(rdma_disconnect(lid) != 0 && errno == EINVAL);
	CHECK(rdma_destroy_id(lid2) == 0);

	CHECK(rdma_create_id(cch, &cid, (void *)0xc1c1, RDMA_PS_TCP) == 0);
	CHECK(rdma_resolve_addr(cid, NULL, (struct sockaddr *)&sa, 2000) == 0);
	ev = expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED);
	CHECK(ev->id == cid && cid->context == (void *)0xc1c1);
	rdma_ack_cm_event(ev);
	CHECK(rdma_resolve_route(cid, 2000) == 0);
	rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	make_qp(cid);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = "ping";
	cp.private_data_len = 4;
	cp.responder_resources = 4;
	cp.initiator_depth = 2;
	CHECK(rdma_connect(cid, &cp) == 0);

	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	pid = ev->id;
	CHECK(ev->listen_id == lid && pid != lid);
	CHECK(pid->context == (void *)0x5151);
	CHECK(ev->param.conn.private_data_len >= 4 &&
	      memcmp(ev->param.conn.private_data, "ping", 4) == 0);
	CHECK(ev->param.conn.responder_resources == 4 && ev->param.conn.initiator_depth == 2);
	rdma_ack_cm_event(ev);
	make_qp(pid);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = "pong";
	cp.private_data_len = 4;
	cp.responder_resources = 2;
	cp.initiator_depth = 2;
	CHECK(rdma_accept(pid, &cp) == 0);
	rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_ESTABLISHED));
	ev = expect(cch, RDMA_CM_EVENT_ESTABLISHED);
	CHECK(ev->param.conn.private_data_len >= 4 &&
	      memcmp(ev->param.conn.private_data, "pong", 4) == 0);
	rdma_ack_cm_event(ev);
	CHECK(cid->qp->state == IBV_QPS_RTS && pid->qp->state == IBV_QPS_RTS);
	{
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qi;

		CHECK(ibv_query_qp(cid->qp, &qa, IBV_QP_STATE, &qi) == 0);
		CHECK(qa.qp_state == IBV_QPS_RTS);
	}

	/* receives outstanding at disconnect complete with WR_FLUSH_ERR via the channel */
	{
		struct ibv_recv_wr rw[2], *bad = NULL;
		struct ibv_sge sge[2];
		struct ibv_wc wc[4];
		struct ibv_cq *ecq;
		struct ibv_mr *mr;
		struct pollfd p;
		void *ectx;
		char *buf = malloc(8192);
		int i, n;

		CHECK(buf != NULL);
		mr = ibv_reg_mr(pid->pd != NULL ? pid->pd : pid->qp->pd, buf, 8192,
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		CHECK(mr != NULL && mr->lkey != 0);
		memset(rw, 0, sizeof(rw));
		for (i = 0; i < 2; i++) {
			sge[i].addr = (uintptr_t)buf + 4096 * (unsigned int)i;
			sge[i].length = 4096;
			sge[i].lkey = mr->lkey;
			rw[i].wr_id = 0x100 + (uint64_t)i;
			rw[i].sg_list = &sge[i];
			rw[i].num_sge = 1;
			rw[i].next = i == 0 ? &rw[1] : NULL;
		}
		CHECK(ibv_post_recv(pid->qp, rw, &bad) == 0);
		CHECK(ibv_poll_cq(pid->recv_cq, 4, wc) == 0);
		CHECK(ibv_req_notify_cq(pid->recv_cq, 0) == 0);

		/* disconnect: DISCONNECTED on both sides */
		CHECK(rdma_disconnect(cid) == 0);
		rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED));
		rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_DISCONNECTED));
		/* as iw_cm: disconnecting again, or after the peer did, succeeds (perftest does) */
		CHECK(rdma_disconnect(pid) == 0);
		CHECK(rdma_disconnect(cid) == 0);

		p.fd = pid->recv_cq_channel->fd;
		p.events = POLLIN;
		CHECK(poll(&p, 1, 5000) == 1);
		CHECK(ibv_get_cq_event(pid->recv_cq_channel, &ecq, &ectx) == 0);
		CHECK(ecq == pid->recv_cq && ectx == pid);
		ibv_ack_cq_events(ecq, 1);
		/* the event comes with the first flushed WQE; the second may still be on its way */
		for (n = 0, i = 0; n < 2 && i < 5000; i++) {
			int got = ibv_poll_cq(pid->recv_cq, 4 - n, wc + n);

			CHECK(got >= 0);
			n += got;
			if (n < 2)
				usleep(1000);
		}
		CHECK(n == 2 && ibv_poll_cq(pid->recv_cq, 4, wc + 2) == 0);
		for (i = 0; i < 2; i++) {
			CHECK(wc[i].status == IBV_WC_WR_FLUSH_ERR);
			CHECK(wc[i].opcode == IBV_WC_RECV);
			CHECK(wc[i].wr_id == 0x100 + (uint64_t)i);
			CHECK(wc[i].qp_num == pid->qp->qp_num);
		}

		/*
		 * ibv_destroy_qp takes the QP's completions not yet polled with it, as mlx4's
		 * and mlx5's do (libfabric's rxm drains the CQ after closing a QP and reposts
		 * to the QP a receive for each receive it finds): two receives posted to the
		 * QP in Error complete flushed, the first one's event says they are in the CQ,
		 * the QP goes, and the CQ is empty.
		 */
		CHECK(ibv_req_notify_cq(pid->recv_cq, 0) == 0);
		CHECK(ibv_post_recv(pid->qp, rw, &bad) == 0);
		CHECK(poll(&p, 1, 5000) == 1);
		CHECK(ibv_get_cq_event(pid->recv_cq_channel, &ecq, &ectx) == 0);
		ibv_ack_cq_events(ecq, 1);
		usleep(20 * 1000); /* the second one too, usually: both go */
		CHECK(ibv_destroy_qp(pid->qp) == 0);
		pid->qp = NULL;
		CHECK(ibv_poll_cq(pid->recv_cq, 4, wc) == 0);
		CHECK(ibv_dereg_mr(mr) == 0);
		free(buf);
	}
	rdma_destroy_qp(pid);
	rdma_destroy_qp(cid);
	CHECK(rdma_destroy_id(pid) == 0);
	CHECK(rdma_destroy_id(cid) == 0);

	/* reject with private data */
	CHECK(rdma_create_id(cch, &cid, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_resolve_addr(cid, NULL, (struct sockaddr *)&sa, 2000) == 0);
	rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ADDR_RESOLVED));
	CHECK(rdma_resolve_route(cid, 2000) == 0);
	rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	CHECK(rdma_connect(cid, NULL) == 0);
	ev = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
	pid = ev->id;
	rdma_ack_cm_event(ev);
	CHECK(rdma_reject(pid, "busy", 4) == 0);
	ev = expect(cch, RDMA_CM_EVENT_REJECTED);
	CHECK(ev->status == -ECONNREFUSED || ev->status == ECONNREFUSED);
	CHECK(ev->param.conn.private_data_len == 4 &&
	      memcmp(ev->param.conn.private_data, "busy", 4) == 0);
	rdma_ack_cm_event(ev);
	rdma_destroy_id(pid);
	rdma_destroy_id(cid);
	rdma_destroy_id(lid);

	/* rdma_getaddrinfo + synchronous endpoints (rdma_server/rdma_client style) */
	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_PASSIVE;
	hints.ai_port_space = RDMA_PS_TCP;
	CHECK(rdma_getaddrinfo(ip, "7471", &hints, &res) == 0);
	CHECK(res->ai_src_addr != NULL && res->ai_port_space == RDMA_PS_TCP);
	{
		struct ibv_qp_init_attr a;

		memset(&a, 0, sizeof(a));
		a.cap.max_send_wr = a.cap.max_recv_wr = 1;
		a.cap.max_send_sge = a.cap.max_recv_sge = 1;
		a.qp_type = IBV_QPT_RC;
		struct rdma_addrinfo *cres;
		struct rdma_cm_id *aid, *sid;
		pthread_t th;
		void *ret;

		CHECK(rdma_create_ep(&lid, res, NULL, &a) == 0);
		CHECK(rdma_listen(lid, 1) == 0);
		CHECK(pthread_create(&th, NULL, ep_server, lid) == 0);
		hints.ai_flags = 0;
		CHECK(rdma_getaddrinfo(ip, "7471", &hints, &cres) == 0);
		CHECK(cres->ai_dst_addr != NULL);
		/* synchronous: resolve, create the QP (with CQs + channels), connect and wait */
		CHECK(rdma_create_ep(&aid, cres, NULL, &a) == 0);
		CHECK(aid->qp != NULL && aid->send_cq_channel != NULL && aid->pd != NULL);
		CHECK(rdma_connect(aid, NULL) == 0);
		CHECK(pthread_join(th, &ret) == 0);
		sid = ret;
		CHECK(sid != NULL && sid->qp->state == IBV_QPS_RTS);
		CHECK(aid->qp->state == IBV_QPS_RTS);
		CHECK(rdma_disconnect(aid) == 0);
		rdma_destroy_ep(aid);
		rdma_destroy_ep(sid);
		rdma_freeaddrinfo(cres);
	}
	rdma_freeaddrinfo(res);
	rdma_destroy_ep(lid);

	{
		struct ibv_device **l = ibv_get_device_list(NULL);
		struct ibv_context *ctx = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
		struct ibv_comp_channel *cc = ctx != NULL ? ibv_create_comp_channel(ctx) : NULL;

		CHECK(cc != NULL && cc->fd >= 0);
		check_cancel(cq_waiter, cc);
		check_cancel(cm_waiter, sch);
		CHECK(ibv_destroy_comp_channel(cc) == 0);
		cc = ibv_create_comp_channel(ctx);
		CHECK(cc != NULL);
		check_destroy_under_reader(cq_waiter, cc, SYS_read, destroy_comp_channel);
		{
			struct rdma_event_channel *ech = rdma_create_event_channel();

			CHECK(ech != NULL);
			check_destroy_under_reader(cm_waiter, ech, SYS_recvfrom,
						   destroy_event_channel);
		}
		CHECK(ibv_close_device(ctx) == 0);
		ibv_free_device_list(l);
	}

	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
	printf("cm_loop: ok\n");
	return 0;
}
