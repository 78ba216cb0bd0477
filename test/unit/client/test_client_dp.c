/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control server's dataplane interface (lib/server's wn_server_dp.h), with this test
 * playing the dataplane: object descriptors arrive on the to_dp ring with usable memory, retired
 * objects are counted gone at once, CM operations toward non-local peers are forwarded,
 * and events the dataplane posts reach the client (ESTABLISHED, CONNECT_REQUEST).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_common.h>
#include <rte_ring.h>

#include "wn_client.h"
#include "wn_server.h"
#include "wn_server_dp.h"

static struct wn_server *srv;
static struct rte_ring *to_dp, *to_ctl;
static int efd;
static char sock_path[108];

static struct rte_ring *
ring_new(const char *name)
{
	ssize_t sz = rte_ring_get_memsize(1024);
	struct rte_ring *r = aligned_alloc(RTE_CACHE_LINE_SIZE,
					   RTE_ALIGN_CEIL((size_t)sz, RTE_CACHE_LINE_SIZE));

	if (r == NULL || rte_ring_init(r, name, 1024, RING_F_SP_ENQ | RING_F_SC_DEQ) != 0)
		return NULL;
	return r;
}

static int
setup(void **state)
{
	struct wn_server_conf conf;

	(void)state;
	memset(&conf, 0, sizeof(conf));
	snprintf(sock_path, sizeof(sock_path), "/tmp/wn-test-dp-%d.sock", (int)getpid());
	conf.path = sock_path;
	conf.n_addrs = 1;
	conf.addrs[0].family = WN_CTL_AF_INET;
	inet_pton(AF_INET, "198.18.0.1", conf.addrs[0].addr);
	srv = wn_server_create(&conf);
	to_dp = ring_new("to_dp");
	to_ctl = ring_new("to_ctl");
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (srv == NULL || to_dp == NULL || to_ctl == NULL || efd < 0)
		return -1;
	if (wn_server_dp_attach(srv, to_dp, to_ctl, efd) != 0)
		return -1;
	return wn_server_start(srv);
}

static int
teardown(void **state)
{
	struct wn_server_dp_msg *m;

	(void)state;
	wn_server_destroy(srv);
	while (rte_ring_dequeue(to_dp, (void **)&m) == 0)
		free(m);
	free(to_dp);
	free(to_ctl);
	close(efd);
	return 0;
}

/* Dataplane side: the next message of @p type (others are dropped). */
static struct wn_server_dp_msg *
dp_next(uint32_t type)
{
	struct wn_server_dp_msg *m;

	/* every message is enqueued before the server answers the request that caused it */
	while (rte_ring_dequeue(to_dp, (void **)&m) == 0) {
		if (m->type == type)
			return m;
		free(m);
	}
	fail_msg("no dataplane message of type %u", type);
	return NULL;
}

static void
dp_post(struct wn_server_dp_msg *m)
{
	uint64_t one = 1;

	assert_int_equal(rte_ring_enqueue(to_ctl, m), 0);
	assert_int_equal(write(efd, &one, sizeof(one)), (ssize_t)sizeof(one));
}

static void
get_event(struct wn_client_cm_channel *ch, uint32_t type, struct wn_ctl_cm_event *ev)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};

	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(wn_client_cm_get_event(ch, ev), 0);
	assert_int_equal(ev->event, type);
}

static void
addr4(struct wn_ctl_addr *a, const char *ip, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	a->family = WN_CTL_AF_INET;
	a->port = port;
	inet_pton(AF_INET, ip, a->addr);
}

static void
test_objects_to_dataplane(void **state)
{
	struct wn_server_stats st;
	struct wn_ctl_create_qp_req qr;
	struct wn_ctl_modify_qp_req mq;
	struct wn_server_dp_msg *m, *done;
	struct wn_server_dp_cq *dcq;
	struct wn_server_dp_mr *dmr;
	struct wn_server_dp_qp *dqp;
	struct wn_client_cq *cq;
	struct wn_client_qp *qp;
	struct wn_client_mr *mr;
	struct wn_client *c;
	uint8_t *buf;
	uint32_t pd;

	(void)state;
	c = wn_client_open(sock_path);
	assert_non_null(c);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	cq = wn_client_create_cq(c, 32, -1, 0x77);
	assert_non_null(cq);
	m = dp_next(WN_SERVER_DP_CQ_CREATE);
	dcq = m->obj;
	assert_int_equal(m->handle, cq->handle);
	assert_int_equal(dcq->depth, cq->depth);
	assert_int_equal(dcq->cookie, 0x77);
	/* the ring the dataplane gets is the memory the client mapped */
	((volatile uint8_t *)dcq->ring)[64] = 0x5c;
	assert_int_equal(((volatile uint8_t *)cq->ring)[64], 0x5c);
	free(m);

	buf = malloc(3000);
	assert_non_null(buf);
	memset(buf, 0xab, 3000);
	mr = wn_client_reg_mr(c, pd, buf, 3000, 0x1000, WN_CTL_ACCESS_LOCAL_WRITE |
			      WN_CTL_ACCESS_REMOTE_WRITE);
	assert_non_null(mr);
	m = dp_next(WN_SERVER_DP_MR_REG);
	dmr = m->obj;
	assert_int_equal(dmr->stag, mr->rkey);
	assert_int_equal(dmr->iova, 0x1000);
	assert_int_equal(dmr->length, 3000);
	/* placement by the dataplane lands in the application's buffer */
	dmr->base[2999] = 0x01;
	assert_int_equal(buf[2999], 0x01);
	free(m);

	memset(&qr, 0, sizeof(qr));
	qr.pd = pd;
	qr.send_cq = cq->handle;
	qr.recv_cq = cq->handle;
	qr.qp_type = WN_CTL_QPT_RC;
	qr.max_send_wr = 8;
	qr.max_recv_wr = 8;
	qp = wn_client_create_qp(c, &qr);
	assert_non_null(qp);
	m = dp_next(WN_SERVER_DP_QP_CREATE);
	dqp = m->obj;
	assert_ptr_equal(dqp->send_cq, dcq);
	assert_ptr_equal(dqp->recv_cq, dcq);
	assert_int_equal(dqp->qpn, qp->qpn);
	assert_int_equal(dqp->state, WN_CTL_QPS_RESET);
	free(m);
	memset(&mq, 0, sizeof(mq));
	mq.mask = WN_CTL_QP_STATE;
	mq.qp_state = WN_CTL_QPS_INIT;
	assert_int_equal(wn_client_modify_qp(c, qp, &mq, NULL), 0);
	m = dp_next(WN_SERVER_DP_QP_MODIFY);
	assert_int_equal(m->u.qp_state, WN_CTL_QPS_INIT);
	free(m);

	/* destroy: gone for the client at once, memory kept until the dataplane's DONE */
	assert_int_equal(wn_client_destroy_qp(c, qp), 0);
	m = dp_next(WN_SERVER_DP_QP_DESTROY);
	assert_ptr_equal(m->obj, dqp);
	((volatile uint8_t *)dqp->ring)[0] = 1; /* still mapped (ASan/segv would tell) */
	wn_server_stats(srv, &st);
	assert_int_equal(st.qps, 0);
	done = calloc(1, sizeof(*done));
	done->type = WN_SERVER_DP_DONE;
	done->handle = m->handle;
	free(m);
	dp_post(done);
	assert_int_equal(wn_client_dereg_mr(c, mr), 0);
	m = dp_next(WN_SERVER_DP_MR_DEREG);
	assert_ptr_equal(m->obj, dmr);
	assert_int_equal(dmr->base[0], 0xab);
	free(m);
	free(buf);
	/* the client dies without acks for the MR and CQ: the server frees them at exit */
	wn_client_close(c);
	free(cq); /* its handle died with the connection; only our copy is left */
}

static void
test_cm_through_dataplane(void **state)
{
	struct wn_ctl_create_qp_req qr;
	struct wn_client_cm_channel *ch;
	struct wn_ctl_conn_param p;
	struct wn_ctl_cm_event ev;
	struct wn_ctl_addr la, ra;
	struct wn_ctl_qp_attr qa;
	struct wn_server_dp_msg *m;
	struct wn_client_cq *cq;
	struct wn_client_qp *qp;
	struct wn_client *c;
	uint32_t pd, lid, aid;

	(void)state;
	c = wn_client_open(sock_path);
	assert_non_null(c);
	ch = wn_client_cm_channel_create(c);
	assert_non_null(ch);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	cq = wn_client_create_cq(c, 8, -1, 0);
	assert_non_null(cq);
	memset(&qr, 0, sizeof(qr));
	qr.pd = pd;
	qr.send_cq = qr.recv_cq = cq->handle;
	qr.qp_type = WN_CTL_QPT_RC;
	qr.max_send_wr = qr.max_recv_wr = 4;
	qp = wn_client_create_qp(c, &qr);
	assert_non_null(qp);

	/* listen: the dataplane learns the port */
	assert_int_equal(wn_client_cm_create_id(c, ch, 1, &lid), 0);
	addr4(&la, "198.18.0.1", 4791);
	assert_int_equal(wn_client_cm_addr(c, WN_CTL_CM_BIND, lid, &la, NULL, 0, NULL), 0);
	assert_int_equal(wn_client_cm_addr(c, WN_CTL_CM_LISTEN, lid, NULL, NULL, 2, NULL), 0);
	m = dp_next(WN_SERVER_DP_CM_LISTEN);
	assert_int_equal(m->u.cm.id, lid);
	assert_int_equal(m->u.cm.src.port, 4791);
	free(m);

	/* active open toward a remote peer goes to the dataplane with the MPA parameters */
	assert_int_equal(wn_client_cm_create_id(c, ch, 2, &aid), 0);
	addr4(&ra, "198.18.1.2", 4791);
	assert_int_equal(wn_client_cm_addr(c, WN_CTL_CM_RESOLVE_ADDR, aid, NULL, &ra, 100, NULL),
			 0);
	get_event(ch, WN_CTL_CM_EV_ADDR_RESOLVED, &ev);
	assert_int_equal(wn_client_cm_addr(c, WN_CTL_CM_RESOLVE_ROUTE, aid, NULL, NULL, 100, NULL),
			 0);
	get_event(ch, WN_CTL_CM_EV_ROUTE_RESOLVED, &ev);
	memset(&p, 0, sizeof(p));
	p.ird = 8;
	p.ord = 4;
	p.pd_len = 2;
	memcpy(p.pd, "hi", 2);
	assert_int_equal(wn_client_cm_conn(c, WN_CTL_CM_CONNECT, aid, qp->handle, &p), 0);
	m = dp_next(WN_SERVER_DP_CM_CONNECT);
	assert_int_equal(m->u.cm.id, aid);
	assert_int_equal(m->u.cm.qp, qp->handle);
	assert_memory_equal(m->u.cm.dst.addr, ra.addr, 4);
	assert_int_equal(m->u.cm.param.pd_len, 2);
	assert_int_equal(m->u.cm.param.ird, 8);
	/* the peer's MPA Reply, as the dataplane reports it (no negotiated IRD/ORD in
	 * u.cm.param: the control thread applies RFC 6581's rule itself) */
	memset(&m->u.cm.ev, 0, sizeof(m->u.cm.ev));
	memset(&m->u.cm.param, 0, sizeof(m->u.cm.param));
	m->type = WN_SERVER_DP_CM_EVENT;
	m->u.cm.ev.event = WN_CTL_CM_EV_ESTABLISHED;
	m->u.cm.ev.id = aid;
	m->u.cm.ev.param.ird = 2;
	m->u.cm.ev.param.pd_len = 3;
	memcpy(m->u.cm.ev.param.pd, "yes", 3);
	dp_post(m);
	get_event(ch, WN_CTL_CM_EV_ESTABLISHED, &ev);
	assert_int_equal(ev.id, aid);
	assert_int_equal(ev.cookie, 2);
	assert_memory_equal(ev.param.pd, "yes", 3);
	assert_int_equal(wn_client_query_qp(c, qp, &qa), 0);
	assert_int_equal(qa.qp_state, WN_CTL_QPS_RTS);
	assert_int_equal(qa.max_rd_atomic, 2); /* ORD 4 capped by the peer's IRD 2 */

	/* an incoming connection on the listener */
	m = calloc(1, sizeof(*m));
	m->type = WN_SERVER_DP_CM_EVENT;
	m->u.cm.ev.event = WN_CTL_CM_EV_CONNECT_REQUEST;
	m->u.cm.ev.id = 1; /* placeholder: the control thread allocates the id */
	m->u.cm.ev.listen_id = lid;
	addr4(&m->u.cm.ev.src, "198.18.0.1", 4791);
	addr4(&m->u.cm.ev.dst, "198.18.1.3", 40000);
	m->u.cm.ev.param.pd_len = 1;
	m->u.cm.ev.param.pd[0] = 'x';
	dp_post(m);
	get_event(ch, WN_CTL_CM_EV_CONNECT_REQUEST, &ev);
	assert_int_equal(ev.listen_id, lid);
	assert_int_equal(ev.cookie, 1);
	assert_int_equal(ev.dst.port, 40000);
	assert_true(ev.id != lid && ev.id != aid);
	assert_int_equal(wn_client_cm_conn(c, WN_CTL_CM_REJECT, ev.id, 0, NULL), 0);
	m = dp_next(WN_SERVER_DP_CM_REJECT);
	assert_int_equal(m->u.cm.id, ev.id);
	free(m);
	wn_client_close(c);
	free(ch);
	free(qp);
	free(cq);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_objects_to_dataplane),
		cmocka_unit_test(test_cm_through_dataplane),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
