/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control server's dataplane interface (lib/server's wn_server_dp.h), with this test
 * playing the dataplane: object descriptors arrive on the to_dp ring with usable memory,
 * retired objects are counted gone at once, CM operations are forwarded, and the events the
 * dataplane posts reach the client. Connections between two clients of this server are
 * played the way the dataplane's loopback runs them, with what rdma_cm refuses (second
 * connect or accept, accept without a request), the backlog, reject with private data, and
 * the QP states the server sets (RTS on ESTABLISHED with IRD/ORD, Error when it ends). The
 * MR hooks (wn_server_conf mr_map/mr_unmap: lib/dp maps regions for a NIC there) come in
 * their order: mapped before the dataplane or the client learn the STag, unmapped only after
 * the dataplane's DONE and while the memory is still there.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
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

#include <rte_ring.h>

#include "wn_client.h"
#include "wn_server.h"
#include "wn_server_dp.h"

#include "dp_rings.h"

static struct wn_server *srv;
static struct rte_ring *to_dp, *to_ctl;
static int efd;
static char sock_path[108];

/* what the MR hooks saw (the server's thread) */
struct hook_call {
	uint32_t stag;
	void *map;
	size_t len;
};
static struct {
	atomic_uint maps, unmaps;
	struct hook_call map, unmap;
	unsigned int to_dp_at_map; /* messages waiting for the dataplane when it was mapped */
	size_t probe;              /* an offset into the mapping ... */
	uint8_t probed;            /* ... and the octet there, read in mr_unmap */
} hk;

static void
hook_map(void *arg, uint32_t stag, void *map, size_t len)
{
	(void)arg;
	hk.map = (struct hook_call){ stag, map, len };
	hk.to_dp_at_map = rte_ring_count(to_dp);
	atomic_fetch_add(&hk.maps, 1);
}

static void
hook_unmap(void *arg, uint32_t stag, void *map, size_t len)
{
	(void)arg;
	hk.unmap = (struct hook_call){ stag, map, len };
	/* munmap comes after; the probe is test_mr_hooks' offset, other regions may be smaller */
	if (hk.probe < len)
		hk.probed = ((volatile uint8_t *)map)[hk.probe];
	atomic_fetch_add(&hk.unmaps, 1);
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
	conf.mr_map = hook_map;
	conf.mr_unmap = hook_unmap;
	srv = wn_server_create(&conf);
	to_dp = test_ring_new("to_dp");
	to_ctl = test_ring_new("to_ctl");
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

/*
 * What the listen thread (cm_listen()) took from to_dp while the test waited for rdma_listen's
 * answer, oldest first: the dataplane side reads these before the ring.
 */
#define STASH_MAX 64
static struct wn_server_dp_msg *stash[STASH_MAX];
static unsigned int stash_head, stash_len;

static int
dp_take(struct wn_server_dp_msg **m)
{
	if (stash_len > 0) {
		*m = stash[stash_head];
		stash_head = (stash_head + 1) % STASH_MAX;
		stash_len--;
		return 0;
	}
	return rte_ring_dequeue(to_dp, (void **)m);
}

/* Dataplane side: the next message of @p type (others are dropped). */
static struct wn_server_dp_msg *
dp_next(uint32_t type)
{
	struct wn_server_dp_msg *m;

	/* every message is enqueued before the server answers the request that caused it */
	while (dp_take(&m) == 0) {
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

/* Dataplane side: DONE for the retired object @p m names (freed). */
static void
dp_done(struct wn_server_dp_msg *m)
{
	struct wn_server_dp_msg *done = calloc(1, sizeof(*done));

	assert_non_null(done);
	done->type = WN_SERVER_DP_DONE;
	done->handle = m->handle;
	free(m);
	dp_post(done);
}

/* A new client with a PD. */
static struct wn_client *
client_pd(uint32_t *pd)
{
	struct wn_client *c = wn_client_open(sock_path);

	assert_non_null(c);
	assert_int_equal(wn_client_alloc_pd(c, pd), 0);
	return c;
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

#define ANY UINT32_MAX

/*
 * Dataplane side: wait (5 s at most) for the CM message @p type about id @p id with key
 * @p conn (ANY: any); others are dropped. Clients of earlier tests may still be reclaimed
 * meanwhile, hence the ids.
 */
static struct wn_server_dp_msg *
dp_wait(uint32_t type, uint32_t id, uint32_t conn)
{
	struct wn_server_dp_msg *m;
	int i;

	for (i = 0; i < 5000; i++) {
		while (dp_take(&m) == 0) {
			if (m->type == type && (id == ANY || m->u.cm.id == id) &&
			    (conn == ANY || m->u.cm.conn == conn))
				return m;
			free(m);
		}
		usleep(1000);
	}
	fail_msg("no dataplane message of type %u for id %#x", type, id);
	return NULL;
}

static void
dp_expect(uint32_t type, uint32_t id, uint32_t conn)
{
	free(dp_wait(type, id, conn));
}

/*
 * rdma_listen's answer waits for the dataplane's CM_LISTENING: while the test's thread waits
 * for it, this thread plays the dataplane, keeping what it takes (stash) and answering each
 * LISTEN with ls.status. ls.early: an answer came before the acknowledgement.
 */
static struct {
	atomic_bool returned, stop, early;
	int status;
} ls;

static void *
listen_thread(void *arg)
{
	struct wn_server_dp_msg *m, *ack;

	(void)arg;
	while (!atomic_load(&ls.stop)) {
		if (rte_ring_dequeue(to_dp, (void **)&m) != 0) {
			usleep(100);
			continue;
		}
		if (stash_len == STASH_MAX)
			abort();
		stash[(stash_head + stash_len++) % STASH_MAX] = m;
		if (m->type != WN_SERVER_DP_CM_LISTEN)
			continue;
		if (atomic_load(&ls.returned))
			atomic_store(&ls.early, true);
		ack = calloc(1, sizeof(*ack));
		if (ack == NULL)
			abort();
		ack->type = WN_SERVER_DP_CM_LISTENING;
		ack->handle = ack->u.cm.id = m->u.cm.id;
		ack->u.cm.ev.status = ls.status;
		dp_post(ack);
	}
	return NULL;
}

/* WN_CTL_CM_LISTEN of id @p lid, its dataplane answering @p status. @return the answer. */
static int
cm_listen_status(struct wn_client *c, uint32_t lid, uint32_t backlog, int status)
{
	pthread_t t;
	int ret;

	atomic_store(&ls.returned, false);
	atomic_store(&ls.stop, false);
	atomic_store(&ls.early, false);
	ls.status = status;
	assert_int_equal(pthread_create(&t, NULL, listen_thread, NULL), 0);
	ret = wn_client_cm_addr(c, WN_CTL_CM_LISTEN, lid, NULL, NULL, backlog, NULL);
	atomic_store(&ls.returned, true);
	atomic_store(&ls.stop, true);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_false(atomic_load(&ls.early));
	return ret;
}

static int
cm_listen(struct wn_client *c, uint32_t lid, uint32_t backlog)
{
	return cm_listen_status(c, lid, backlog, 0);
}

/* Until the server counts @p n clients (earlier tests' may still be closing). */
static void
wait_clients(uint32_t n)
{
	struct wn_server_stats st;
	int i;

	for (i = 0; i < 5000; i++) {
		wn_server_stats(srv, &st);
		if (st.clients == n)
			return;
		usleep(1000);
	}
	fail_msg("%u clients, want %u", st.clients, n);
}

/* Dataplane side: event @p type for id @p id (IRD/ORD as negotiated: 0 = not said). */
static void
dp_event(uint32_t id, uint32_t type, int32_t status, const struct wn_ctl_conn_param *p,
	 uint32_t ird, uint32_t ord)
{
	struct wn_server_dp_msg *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	m->type = WN_SERVER_DP_CM_EVENT;
	m->handle = id;
	m->u.cm.id = id;
	m->u.cm.ev.event = type;
	m->u.cm.ev.status = status;
	m->u.cm.ev.id = id;
	if (p != NULL)
		m->u.cm.ev.param = *p;
	m->u.cm.param.ird = ird;
	m->u.cm.param.ord = ord;
	dp_post(m);
}

/* Dataplane side: a connection request (key @p key) on listener @p lid. */
static void
dp_request(uint32_t lid, uint32_t key, const struct wn_ctl_addr *src,
	   const struct wn_ctl_addr *dst, const struct wn_ctl_conn_param *p)
{
	struct wn_server_dp_msg *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	m->type = WN_SERVER_DP_CM_EVENT;
	m->u.cm.ev.event = WN_CTL_CM_EV_CONNECT_REQUEST;
	m->u.cm.ev.id = key;
	m->u.cm.ev.listen_id = lid;
	m->u.cm.ev.src = *src;
	m->u.cm.ev.dst = *dst;
	if (p != NULL)
		m->u.cm.ev.param = *p;
	dp_post(m);
}

static void
conn_param(struct wn_ctl_conn_param *p, uint32_t ird, uint32_t ord, const char *pd)
{
	memset(p, 0, sizeof(*p));
	p->ird = ird;
	p->ord = ord;
	p->pd_len = (uint32_t)strlen(pd);
	memcpy(p->pd, pd, p->pd_len);
}

struct cm_side {
	struct wn_client *c;
	struct wn_client_cm_channel *ch;
	uint32_t pd;
	struct wn_client_cq *cq;
	struct wn_client_qp *qp;
};

static void
side_init(struct cm_side *s)
{
	struct wn_ctl_create_qp_req qr;

	s->c = wn_client_open(sock_path);
	assert_non_null(s->c);
	s->ch = wn_client_cm_channel_create(s->c);
	assert_non_null(s->ch);
	assert_int_equal(wn_client_alloc_pd(s->c, &s->pd), 0);
	s->cq = wn_client_create_cq(s->c, 16, -1, 0);
	assert_non_null(s->cq);
	memset(&qr, 0, sizeof(qr));
	qr.pd = s->pd;
	qr.send_cq = s->cq->handle;
	qr.recv_cq = s->cq->handle;
	qr.qp_type = WN_CTL_QPT_RC;
	qr.max_send_wr = 8;
	qr.max_recv_wr = 8;
	s->qp = wn_client_create_qp(s->c, &qr);
	assert_non_null(s->qp);
}

static void
side_fini(struct cm_side *s)
{
	wn_client_close(s->c);
	free(s->ch);
	free(s->qp);
	free(s->cq);
}

static uint32_t
qp_state(struct cm_side *s, uint32_t *ord)
{
	struct wn_ctl_qp_attr qa;

	assert_int_equal(wn_client_query_qp(s->c, s->qp, &qa), 0);
	if (ord != NULL)
		*ord = qa.max_rd_atomic;
	return qa.qp_state;
}

/* An active id of @p s resolved to @p dst, ready to connect. */
static uint32_t
active_id(struct cm_side *s, uint64_t cookie, const struct wn_ctl_addr *dst,
	  struct wn_ctl_addr *src)
{
	struct wn_ctl_cm_event ev;
	uint32_t aid;

	assert_int_equal(wn_client_cm_create_id(s->c, s->ch, cookie, &aid), 0);
	assert_int_equal(wn_client_cm_addr(s->c, WN_CTL_CM_RESOLVE_ADDR, aid, NULL, dst, 2000,
					   NULL), 0);
	get_event(s->ch, WN_CTL_CM_EV_ADDR_RESOLVED, &ev);
	assert_int_equal(ev.cookie, cookie);
	assert_true(ev.src.port != 0);
	*src = ev.src;
	assert_int_equal(wn_client_cm_addr(s->c, WN_CTL_CM_RESOLVE_ROUTE, aid, NULL, NULL, 2000,
					   NULL), 0);
	get_event(s->ch, WN_CTL_CM_EV_ROUTE_RESOLVED, &ev);
	return aid;
}

static void
test_objects_to_dataplane(void **state)
{
	struct wn_server_stats st;
	struct wn_ctl_create_qp_req qr;
	struct wn_ctl_modify_qp_req mq;
	struct wn_server_dp_msg *m;
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
	c = client_pd(&pd);
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
	dp_done(m);
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

/* The MR hooks: mapped before anyone learns the STag, unmapped after DONE, before munmap. */
static void
test_mr_hooks(void **state)
{
	struct wn_server_dp_msg *m = NULL;
	struct wn_server_dp_mr *dmr;
	struct wn_client_mr *mr;
	struct wn_client *c;
	unsigned int maps0, unmaps0, before;
	uint8_t *buf;
	uint32_t pd;

	(void)state;
	c = client_pd(&pd);
	buf = malloc(5000);
	assert_non_null(buf);
	memset(buf, 0x5a, 5000);
	maps0 = atomic_load(&hk.maps);
	unmaps0 = atomic_load(&hk.unmaps);
	mr = wn_client_reg_mr(c, pd, buf, 5000, (uintptr_t)buf, WN_CTL_ACCESS_LOCAL_WRITE);
	assert_non_null(mr);
	/* mapped before the reply that gives the client its STag */
	assert_int_equal(atomic_load(&hk.maps), maps0 + 1);
	assert_int_equal(hk.map.stag, mr->lkey);
	assert_true(hk.map.len >= 5000);
	/* ... and before the dataplane was told: every message waiting then comes before */
	for (before = 0;; before++) {
		assert_int_equal(rte_ring_dequeue(to_dp, (void **)&m), 0);
		if (m->type == WN_SERVER_DP_MR_REG)
			break;
		free(m);
	}
	assert_true(hk.to_dp_at_map <= before);
	dmr = m->obj;
	assert_int_equal(dmr->stag, mr->lkey);
	/* the hook got the server's mapping of the client's memory */
	assert_true((uint8_t *)hk.map.map <= dmr->base &&
		    dmr->base + 5000 <= (uint8_t *)hk.map.map + hk.map.len);
	hk.probe = (size_t)(dmr->base + 4999 - (uint8_t *)hk.map.map);
	free(m);

	/* deregistered: gone for the client, but not unmapped while the dataplane holds it */
	assert_int_equal(wn_client_dereg_mr(c, mr), 0);
	m = dp_next(WN_SERVER_DP_MR_DEREG);
	assert_ptr_equal(m->obj, dmr);
	usleep(50000);
	assert_int_equal(atomic_load(&hk.unmaps), unmaps0);
	dp_done(m);
	for (int i = 0; i < 5000 && atomic_load(&hk.unmaps) == unmaps0; i++)
		usleep(1000);
	assert_int_equal(atomic_load(&hk.unmaps), unmaps0 + 1);
	assert_memory_equal(&hk.unmap, &hk.map, sizeof(hk.map));
	assert_int_equal(hk.probed, 0x5a); /* the client's memory, still mapped */
	hk.probe = 0; /* later regions may be smaller */
	wn_client_close(c);
	free(buf);
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
	assert_int_equal(cm_listen(c, lid, 2), 0);
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

/*
 * Two clients of this server connect to each other, the test doing what the dataplane's
 * loopback does: CONNECT becomes a CONNECT_REQUEST on the listener, ACCEPT an ESTABLISHED on
 * both sides, DISCONNECT a DISCONNECTED on both. The server refuses what rdma_cm refuses.
 */
static void
test_cm_loopback(void **state)
{
	struct wn_server_dp_msg *m;
	struct wn_ctl_conn_param p, rp;
	struct wn_ctl_cm_event ev;
	struct wn_ctl_addr la, da, asrc;
	struct cm_side srvs, cli;
	uint32_t lid, lid2, aid, pid, ord;

	(void)state;
	side_init(&srvs);
	side_init(&cli);
	/* passive: bind + listen on 198.18.0.1:7471; the port is taken */
	assert_int_equal(wn_client_cm_create_id(srvs.c, srvs.ch, 0x1111, &lid), 0);
	addr4(&la, "198.18.0.1", 7471);
	assert_int_equal(wn_client_cm_addr(srvs.c, WN_CTL_CM_BIND, lid, &la, NULL, 0, NULL), 0);
	assert_int_equal(cm_listen(srvs.c, lid, 4), 0);
	dp_expect(WN_SERVER_DP_CM_LISTEN, lid, 0);
	assert_int_equal(wn_client_cm_create_id(srvs.c, srvs.ch, 0x2222, &lid2), 0);
	assert_int_equal(wn_client_cm_addr(srvs.c, WN_CTL_CM_BIND, lid2, &la, NULL, 0, NULL),
			 -EADDRINUSE);
	assert_int_equal(wn_client_cm_destroy_id(srvs.c, lid2), 0);
	/* active: connect with private data and IRD/ORD, once */
	addr4(&da, "198.18.0.1", 7471);
	aid = active_id(&cli, 0xabcd, &da, &asrc);
	conn_param(&p, 3, 2, "hello");
	assert_int_equal(wn_client_cm_conn(cli.c, WN_CTL_CM_CONNECT, aid, cli.qp->handle, &p), 0);
	assert_int_equal(wn_client_cm_conn(cli.c, WN_CTL_CM_CONNECT, aid, cli.qp->handle, &p),
			 -EINVAL);
	m = dp_wait(WN_SERVER_DP_CM_CONNECT, aid, 0);
	assert_int_equal(m->u.cm.qp, cli.qp->handle);
	assert_int_equal(m->u.cm.dst.port, 7471);
	free(m);
	/* the request reaches the listener with the initiator's private data and IRD/ORD */
	dp_request(lid, 0x77, &la, &asrc, &p);
	get_event(srvs.ch, WN_CTL_CM_EV_CONNECT_REQUEST, &ev);
	assert_int_equal(ev.listen_id, lid);
	assert_int_equal(ev.cookie, 0x1111);
	assert_int_equal(ev.param.pd_len, 5);
	assert_memory_equal(ev.param.pd, "hello", 5);
	assert_int_equal(ev.param.ird, 3);
	assert_int_equal(ev.param.ord, 2);
	assert_int_equal(ev.src.port, 7471);
	pid = ev.id;
	assert_true(pid != lid);
	/* accept once, with our private data; the dataplane gets the key back */
	conn_param(&rp, 1, 1, "ack");
	assert_int_equal(wn_client_cm_conn(srvs.c, WN_CTL_CM_ACCEPT, pid, srvs.qp->handle, &rp),
			 0);
	assert_int_equal(wn_client_cm_conn(srvs.c, WN_CTL_CM_ACCEPT, pid, srvs.qp->handle, &rp),
			 -EINVAL);
	assert_int_equal(wn_client_cm_conn(srvs.c, WN_CTL_CM_REJECT, pid, 0, NULL), -EINVAL);
	m = dp_wait(WN_SERVER_DP_CM_ACCEPT, pid, 0x77);
	assert_int_equal(m->u.cm.qp, srvs.qp->handle);
	assert_int_equal(m->u.cm.param.pd_len, 3);
	free(m);
	/* ESTABLISHED: QPs in RTS; without negotiated values IRD 1 caps the initiator's ORD */
	dp_event(pid, WN_CTL_CM_EV_ESTABLISHED, 0, &p, 1, 1);
	dp_event(aid, WN_CTL_CM_EV_ESTABLISHED, 0, &rp, 0, 0);
	get_event(srvs.ch, WN_CTL_CM_EV_ESTABLISHED, &ev);
	assert_int_equal(ev.id, pid);
	get_event(cli.ch, WN_CTL_CM_EV_ESTABLISHED, &ev);
	assert_int_equal(ev.id, aid);
	assert_memory_equal(ev.param.pd, "ack", 3);
	assert_int_equal(qp_state(&cli, &ord), WN_CTL_QPS_RTS);
	assert_int_equal(ord, 1);
	assert_int_equal(qp_state(&srvs, NULL), WN_CTL_QPS_RTS);
	/* the listener keeps listening; re-listen on the port of a live connection works */
	assert_int_equal(cm_listen(srvs.c, lid, 4),
			 -EINVAL);
	assert_int_equal(wn_client_cm_destroy_id(srvs.c, lid), 0);
	dp_expect(WN_SERVER_DP_CM_DESTROY, lid, 0);
	assert_int_equal(wn_client_cm_create_id(srvs.c, srvs.ch, 0x1111, &lid), 0);
	assert_int_equal(wn_client_cm_addr(srvs.c, WN_CTL_CM_BIND, lid, &la, NULL, 0, NULL), 0);
	assert_int_equal(cm_listen(srvs.c, lid, 4), 0);
	/* disconnect: our QP in Error at once, DISCONNECTED from the dataplane on both sides */
	assert_int_equal(wn_client_cm_disconnect(cli.c, aid), 0);
	dp_expect(WN_SERVER_DP_CM_DISCONNECT, aid, 0);
	assert_int_equal(qp_state(&cli, NULL), WN_CTL_QPS_ERR);
	dp_event(aid, WN_CTL_CM_EV_DISCONNECTED, 0, NULL, 0, 0);
	dp_event(pid, WN_CTL_CM_EV_DISCONNECTED, 0, NULL, 0, 0);
	get_event(cli.ch, WN_CTL_CM_EV_DISCONNECTED, &ev);
	get_event(srvs.ch, WN_CTL_CM_EV_DISCONNECTED, &ev);
	assert_int_equal(ev.id, pid);
	assert_int_equal(qp_state(&srvs, NULL), WN_CTL_QPS_ERR);
	/* over: disconnecting again is a no-op (iw_cm), connecting again is refused */
	assert_int_equal(wn_client_cm_disconnect(cli.c, aid), 0);
	assert_int_equal(wn_client_cm_disconnect(srvs.c, pid), 0);
	assert_int_equal(wn_client_cm_conn(cli.c, WN_CTL_CM_CONNECT, aid, 0, NULL), -EINVAL);
	assert_int_equal(wn_client_cm_destroy_id(srvs.c, pid), 0);
	dp_expect(WN_SERVER_DP_CM_DESTROY, pid, 0x77);
	assert_int_equal(wn_client_cm_destroy_id(cli.c, aid), 0);
	side_fini(&cli);
	side_fini(&srvs);
}

/*
 * Reject with private data; a QP of another device context of the same process; the backlog
 * (requests not yet answered) refused beyond the listen depth; a refused connect's QP in Error.
 */
/*
 * rdma_listen returns once the dataplane has put the listener in place (a peer may connect
 * at once), with the dataplane's error when it could not: the listener is then taken down
 * and the id may listen again.
 */
static void
test_cm_listen_waits(void **state)
{
	struct wn_ctl_addr la;
	struct cm_side srvs;
	uint32_t lid;

	(void)state;
	side_init(&srvs);
	assert_int_equal(wn_client_cm_create_id(srvs.c, srvs.ch, 0x3333, &lid), 0);
	addr4(&la, "198.18.0.1", 7473);
	assert_int_equal(wn_client_cm_addr(srvs.c, WN_CTL_CM_BIND, lid, &la, NULL, 0, NULL), 0);
	assert_int_equal(cm_listen_status(srvs.c, lid, 4, -EADDRINUSE), -EADDRINUSE);
	dp_expect(WN_SERVER_DP_CM_LISTEN, lid, 0);
	dp_expect(WN_SERVER_DP_CM_DESTROY, lid, 0);
	assert_int_equal(cm_listen(srvs.c, lid, 4), 0);
	dp_expect(WN_SERVER_DP_CM_LISTEN, lid, 0);
	/* listening already */
	assert_int_equal(cm_listen(srvs.c, lid, 4), -EINVAL);
	assert_int_equal(wn_client_cm_destroy_id(srvs.c, lid), 0);
	dp_expect(WN_SERVER_DP_CM_DESTROY, lid, 0);
	side_fini(&srvs);
}

static void
test_cm_reject_and_backlog(void **state)
{
	struct wn_server_stats st0, st;
	struct wn_server_dp_msg *m;
	struct wn_ctl_conn_param p;
	struct wn_ctl_cm_event ev;
	struct wn_ctl_addr la, da, asrc;
	struct cm_side srvs, cli;
	uint32_t lid, aid, pid;

	(void)state;
	side_init(&srvs);
	side_init(&cli);
	wait_clients(2);
	assert_int_equal(wn_client_cm_create_id(srvs.c, srvs.ch, 0x1111, &lid), 0);
	addr4(&la, "198.18.0.1", 7472);
	assert_int_equal(wn_client_cm_addr(srvs.c, WN_CTL_CM_BIND, lid, &la, NULL, 0, NULL), 0);
	assert_int_equal(cm_listen(srvs.c, lid, 1), 0);
	addr4(&da, "198.18.0.1", 7472);
	aid = active_id(&cli, 0xbeef, &da, &asrc);
	/* verbs apps that open the device themselves bind a QP of their own context */
	assert_int_equal(wn_client_cm_conn(cli.c, WN_CTL_CM_CONNECT, aid, srvs.qp->handle, NULL),
			 0);
	m = dp_wait(WN_SERVER_DP_CM_CONNECT, aid, 0);
	assert_int_equal(m->u.cm.qp, srvs.qp->handle);
	free(m);
	dp_request(lid, 0x91, &la, &asrc, NULL);
	get_event(srvs.ch, WN_CTL_CM_EV_CONNECT_REQUEST, &ev);
	pid = ev.id;
	/* backlog 1 and one request unanswered: the next is refused before any id exists */
	wn_server_stats(srv, &st0);
	dp_request(lid, 0x92, &la, &asrc, NULL);
	dp_expect(WN_SERVER_DP_CM_REJECT, 0, 0x92);
	wn_server_stats(srv, &st);
	assert_int_equal(st.cm_ids, st0.cm_ids);
	/* reject with private data: the dataplane sends the MPA Reject, the initiator hears */
	conn_param(&p, 0, 0, "nope");
	assert_int_equal(wn_client_cm_conn(srvs.c, WN_CTL_CM_REJECT, pid, 0, &p), 0);
	m = dp_wait(WN_SERVER_DP_CM_REJECT, pid, 0x91);
	assert_memory_equal(m->u.cm.param.pd, "nope", 4);
	free(m);
	assert_int_equal(wn_client_cm_disconnect(srvs.c, pid), 0);
	dp_event(aid, WN_CTL_CM_EV_REJECTED, -ECONNREFUSED, &p, 0, 0);
	get_event(cli.ch, WN_CTL_CM_EV_REJECTED, &ev);
	assert_int_equal(ev.status, -ECONNREFUSED);
	assert_memory_equal(ev.param.pd, "nope", 4);
	assert_int_equal(qp_state(&srvs, NULL), WN_CTL_QPS_ERR);
	assert_int_equal(wn_client_cm_disconnect(cli.c, aid), 0);
	/* the answered request freed the backlog: the next request gets an id */
	dp_request(lid, 0x93, &la, &asrc, NULL);
	get_event(srvs.ch, WN_CTL_CM_EV_CONNECT_REQUEST, &ev);
	/* an unanswered request's id destroyed: the dataplane drops the key, the backlog frees */
	assert_int_equal(wn_client_cm_disconnect(srvs.c, ev.id), 0);
	assert_int_equal(wn_client_cm_destroy_id(srvs.c, ev.id), 0);
	dp_expect(WN_SERVER_DP_CM_DESTROY, ANY, 0x93);
	dp_request(lid, 0x94, &la, &asrc, NULL);
	get_event(srvs.ch, WN_CTL_CM_EV_CONNECT_REQUEST, &ev);
	/* the listener's client goes away: its ids go, the dataplane is told */
	wn_client_close(srvs.c);
	srvs.c = NULL;
	dp_expect(WN_SERVER_DP_CM_DESTROY, ANY, 0x94);
	free(srvs.ch);
	free(srvs.qp);
	free(srvs.cq);
	side_fini(&cli);
}

/* Dataplane side: post async event @p ev about @p handle. */
static void
dp_async(uint32_t handle, uint32_t ev, uint32_t vendor_err)
{
	struct wn_server_dp_msg *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	m->type = WN_SERVER_DP_ASYNC_EVENT;
	m->handle = handle;
	m->u.async.event = ev;
	m->u.async.vendor_err = vendor_err;
	dp_post(m);
}

static void
async_expect(int fd, uint32_t ev, uint32_t handle, uint32_t vendor_err)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	struct wn_ctl_async_event e;

	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(wn_client_async_read(fd, &e), 0);
	assert_int_equal(e.event, ev);
	assert_int_equal(e.handle, handle);
	assert_int_equal(e.vendor_err, vendor_err);
}

/*
 * Async events (ibv_get_async_event's source): the client's async socket, one per client;
 * the dataplane's events about a QP, an SRQ and a CQ reach the client that owns them, and
 * only it; an event about an object that is gone (or another client's) is not delivered;
 * ibv_modify_srq's limit is armed in the SRQ ring the dataplane consumes.
 */
static void
test_async_events(void **state)
{
	struct wn_ctl_modify_srq_req ms = {.mask = 2, .srq_limit = 5};
	struct wn_ctl_create_qp_req qr;
	struct wn_server_dp_msg *m;
	struct wn_server_dp_srq *dsrq;
	struct wn_ctl_async_event e;
	struct wn_client_srq *srq;
	struct wn_client_cq *cq, *cq2;
	struct wn_client_qp *qp;
	struct wn_client *c, *c2;
	uint32_t pd, qh;
	int fd, fd2;

	(void)state;
	c = wn_client_open(sock_path);
	c2 = wn_client_open(sock_path);
	assert_non_null(c);
	assert_non_null(c2);
	fd = wn_client_async_open(c);
	assert_true(fd >= 0);
	assert_int_equal(wn_client_async_open(c), -EBUSY); /* one per client */
	fd2 = wn_client_async_open(c2);
	assert_true(fd2 >= 0);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	cq = wn_client_create_cq(c, 32, -1, 0);
	assert_non_null(cq);
	cq2 = wn_client_create_cq(c2, 32, -1, 0);
	assert_non_null(cq2);
	srq = wn_client_create_srq(c, pd, 16, 1, 0);
	assert_non_null(srq);
	m = dp_next(WN_SERVER_DP_SRQ_CREATE);
	dsrq = m->obj;
	free(m);
	memset(&qr, 0, sizeof(qr));
	qr.pd = pd;
	qr.send_cq = cq->handle;
	qr.recv_cq = cq->handle;
	qr.srq = srq->handle;
	qr.qp_type = WN_CTL_QPT_RC;
	qr.max_send_wr = 8;
	qp = wn_client_create_qp(c, &qr);
	assert_non_null(qp);

	/* IBV_SRQ_LIMIT: armed in the ring the dataplane consumes; above the depth: EINVAL */
	ms.srq = srq->handle;
	assert_int_equal(wn_client_call(c, WN_CTL_MODIFY_SRQ, &ms, NULL, 0, NULL, NULL), 0);
	assert_int_equal(atomic_load(&((struct wn_queue_ring_hdr *)dsrq->ring)->srq_limit), 5);
	ms.srq_limit = dsrq->depth + 1;
	assert_int_equal(wn_client_call(c, WN_CTL_MODIFY_SRQ, &ms, NULL, 0, NULL, NULL),
			 -EINVAL);

	/* the owner gets each event, in order, with the Terminate's cause for QP events */
	dp_async(qp->handle, WN_CTL_ASYNC_QP_FATAL, 0x2002);
	dp_async(srq->handle, WN_CTL_ASYNC_SRQ_LIMIT_REACHED, 0);
	dp_async(cq->handle, WN_CTL_ASYNC_CQ_ERR, 0);
	dp_async(qp->handle, WN_CTL_ASYNC_QP_ACCESS_ERR, 0x0102);
	async_expect(fd, WN_CTL_ASYNC_QP_FATAL, qp->handle, 0x2002);
	async_expect(fd, WN_CTL_ASYNC_SRQ_LIMIT_REACHED, srq->handle, 0);
	async_expect(fd, WN_CTL_ASYNC_CQ_ERR, cq->handle, 0);
	async_expect(fd, WN_CTL_ASYNC_QP_ACCESS_ERR, qp->handle, 0x0102);
	/* not to another client: c2's first event is the one about its own CQ */
	dp_async(cq2->handle, WN_CTL_ASYNC_CQ_ERR, 0);
	async_expect(fd2, WN_CTL_ASYNC_CQ_ERR, cq2->handle, 0);
	/* an event whose object is gone (or of the wrong kind) is dropped */
	dp_async(qp->handle, WN_CTL_ASYNC_CQ_ERR, 0);
	qh = qp->handle;
	assert_int_equal(wn_client_destroy_qp(c, qp), 0);
	dp_async(qh, WN_CTL_ASYNC_QP_FATAL, 0x2002);
	dp_async(cq->handle, WN_CTL_ASYNC_CQ_ERR, 0);
	async_expect(fd, WN_CTL_ASYNC_CQ_ERR, cq->handle, 0);
	/* non-blocking and empty: EAGAIN */
	assert_int_equal(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(wn_client_async_read(fd, &e), -EAGAIN);
	/* warpnicd gone for the client (its connection closed): end of the socket */
	wn_client_close(c);
	assert_int_equal(fcntl(fd, F_SETFL, 0), 0);
	assert_int_equal(wn_client_async_read(fd, &e), -EPIPE);
	close(fd);
	close(fd2);
	wn_client_close(c2);
	free(cq);
	free(cq2);
	free(srq);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_objects_to_dataplane),
		cmocka_unit_test(test_mr_hooks),
		cmocka_unit_test(test_cm_through_dataplane),
		cmocka_unit_test(test_cm_loopback),
		cmocka_unit_test(test_cm_listen_waits),
		cmocka_unit_test(test_cm_reject_and_backlog),
		cmocka_unit_test(test_async_events),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
