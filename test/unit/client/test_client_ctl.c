/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/client against a real control server (lib/server) without a dataplane: device queries,
 * PD/MR/CQ/QP/SRQ lifetimes, MR sharing (malloc, memalign, mmap, SysV shm) seen byte for byte
 * from the server's mapping, MRs of many objects (MR_PIECES), read-only and kernel memory,
 * the server's SIGBUS guard over a truncated object, writers that lose nothing while their
 * buffer is registered over and over, CM addresses (connections need a dataplane:
 * test_client_dp), malformed requests, and reclaim of a SIGKILLed client's objects.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
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
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "wn_client.h"
#include "wn_mem.h"
#include "wn_server.h"

static struct wn_server *srv;
static char sock_path[108];

static void
stats(struct wn_server_stats *st)
{
	wn_server_stats(srv, st);
}

static int
setup(void **state)
{
	struct wn_server_conf conf;

	(void)state;
	memset(&conf, 0, sizeof(conf));
	snprintf(sock_path, sizeof(sock_path), "/tmp/wn-test-client-%d.sock", (int)getpid());
	conf.path = sock_path;
	conf.dev_name = "wntest0";
	memcpy(conf.mac, "\x02\x00\x00\x00\x00\x01", 6);
	conf.n_addrs = 1;
	conf.addrs[0].family = WN_CTL_AF_INET;
	inet_pton(AF_INET, "198.18.0.1", conf.addrs[0].addr);
	/* the control thread polls after a request, the client for its answers */
	conf.spin_us = 50;
	setenv("WARPNIC_CALL_SPIN_US", "50", 1);
	srv = wn_server_create(&conf);
	if (srv == NULL)
		return -1;
	return wn_server_start(srv);
}

static int
teardown(void **state)
{
	(void)state;
	wn_server_destroy(srv);
	return 0;
}

static void
test_hello_and_queries(void **state)
{
	struct wn_ctl_device_attr dev;
	struct wn_ctl_port_attr port;
	struct wn_client *c;
	static const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
					   198, 18, 0, 1};

	(void)state;
	setenv(WN_CTL_ENV, sock_path, 1);
	c = wn_client_open(NULL); /* picks WARPNIC_CTL */
	assert_non_null(c);
	assert_string_equal(wn_client_dev_name(c), "wntest0");
	assert_int_equal(wn_client_query_device(c, &dev), 0);
	assert_int_equal(dev.phys_port_cnt, 1);
	assert_true(dev.max_qp_rd_atom > 0);
	assert_true(dev.max_qp_init_rd_atom > 0);
	/* node GUID = EUI-64 of the MAC (U/L bit flipped), network order */
	assert_int_equal(dev.node_guid, __builtin_bswap64(0x000000fffe000001ull));
	assert_int_equal(wn_client_query_port(c, 1, &port), 0);
	assert_int_equal(port.state, 4);
	assert_int_equal(port.n_gids, 1);
	assert_memory_equal(port.gid[0], mapped, 16);
	assert_int_equal(port.active_mtu, 3); /* 1024 fits a 1500 L3 MTU, 2048 does not */
	assert_int_equal(wn_client_query_port(c, 2, &port), -EINVAL);
	wn_client_close(c);
	unsetenv(WN_CTL_ENV);
}

struct late_call {
	struct wn_client *c;
	uint32_t pd;
	int ret;
};

static void *
late_alloc_pd(void *arg)
{
	struct late_call *lc = arg;

	lc->ret = wn_client_alloc_pd(lc->c, &lc->pd);
	return NULL;
}

/*
 * An answer that comes long after the client stopped polling for it (WARPNIC_CALL_SPIN_US,
 * 50 us here): the control thread is stopped while the request is made, started 20 ms later. The
 * call waits for it and gets it; so do the calls after it (polled for again).
 */
static void
test_late_answer(void **state)
{
	struct late_call lc = {0};
	struct timespec ts = {0, 20 * 1000 * 1000};
	pthread_t t;
	uint32_t pd;
	int i;

	(void)state;
	lc.c = wn_client_open(sock_path);
	assert_non_null(lc.c);
	wn_server_stop(srv);
	assert_int_equal(pthread_create(&t, NULL, late_alloc_pd, &lc), 0);
	nanosleep(&ts, NULL);
	assert_int_equal(wn_server_start(srv), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(lc.ret, 0);
	assert_int_equal(wn_client_dealloc_pd(lc.c, lc.pd), 0);
	for (i = 0; i < 100; i++) {
		assert_int_equal(wn_client_alloc_pd(lc.c, &pd), 0);
		assert_int_equal(wn_client_dealloc_pd(lc.c, pd), 0);
	}
	wn_client_close(lc.c);
}

static void
test_no_daemon(void **state)
{
	(void)state;
	assert_null(wn_client_open("/tmp/wn-test-no-such-daemon.sock"));
	assert_true(errno == ENOENT || errno == ECONNREFUSED);
}

/*
 * Memory windows and fast-register MRs through the control protocol. The test plays the
 * dataplane's part (lib/mem's fast-register, bind and invalidate, which change keys) on the
 * server's table, so deallocation must find the entries whatever key they have now.
 */
static void
test_windows_and_frmr(void **state)
{
	struct wn_server_stats st0, st;
	struct wn_ctl_alloc_mw_req bad = {.pd = 0, .type = 1};
	struct wn_ctl_alloc_mw_resp br;
	struct wn_mem_table *mt = wn_server_mem(srv);
	struct wn_client_mr *m, *f;
	struct wn_mem_info info;
	struct wn_client *c;
	uint32_t pd, mw1, mw2, k1, k2, fkey;
	uint8_t *buf, *fbuf, *host;

	(void)state;
	stats(&st0);
	c = wn_client_open(sock_path);
	assert_non_null(c);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	buf = aligned_alloc(4096, 16384);
	fbuf = aligned_alloc(4096, 8192);
	assert_true(buf != NULL && fbuf != NULL);
	memset(fbuf, 0x5a, 8192);
	m = wn_client_reg_mr(c, pd, buf, 16384, (uintptr_t)buf,
			     WN_CTL_ACCESS_LOCAL_WRITE | WN_CTL_ACCESS_REMOTE_WRITE |
				     WN_CTL_ACCESS_MW_BIND);
	assert_non_null(m);

	/* windows: invalid until bound; type 3 and foreign PDs refused */
	assert_int_equal(wn_client_alloc_mw(c, pd, 1, &mw1, &k1), 0);
	assert_int_equal(wn_client_alloc_mw(c, pd, 2, &mw2, &k2), 0);
	assert_int_equal(wn_client_alloc_mw(c, pd, 3, &mw2, &k2), -EINVAL);
	bad.pd = pd + 1000;
	assert_int_equal(wn_client_call(c, WN_CTL_ALLOC_MW, &bad, NULL, 0, &br, NULL), -EINVAL);
	bad.pd = pd;
	bad.type = 0;
	assert_int_equal(wn_client_call(c, WN_CTL_ALLOC_MW, &bad, NULL, 0, &br, NULL), -EINVAL);
	assert_int_equal(wn_mem_info(mt, k1, &info), 0);
	assert_int_equal(info.type, WN_MEM_T_MW1);
	assert_false(info.valid);
	assert_int_equal(wn_mem_info(mt, k2, &info), 0);
	assert_int_equal(info.type, WN_MEM_T_MW2);
	stats(&st);
	assert_int_equal(st.mws, st0.mws + 2);

	/* a window bound (with a new key, as the BIND_MW WQE does) pins its MR */
	assert_int_equal(wn_mem_mw_bind(mt, (k2 & ~0xffu) | ((k2 + 1) & 0xff), m->lkey,
					info.pd, 7, (uintptr_t)buf + 4096, 4096,
					WN_MEM_ACCESS_REMOTE_WRITE),
			 WN_MEM_OK);
	assert_int_equal(wn_client_dereg_mr(c, m), -EBUSY);
	/* type 1 unbind names no MR */
	assert_int_equal(wn_mem_mw_bind(mt, k1, m->lkey, info.pd, 7, (uintptr_t)buf, 4096,
					WN_MEM_ACCESS_REMOTE_WRITE),
			 WN_MEM_OK);
	assert_int_equal(wn_mem_mw_bind(mt, k1, 0, info.pd, 7, 0, 0, 0), WN_MEM_OK);
	assert_int_equal(wn_mem_info(mt, k1, &info), 0);
	assert_false(info.valid);
	/* deallocating the rekeyed, bound type 2 window unbinds it: then the MR may go */
	assert_int_equal(wn_client_dealloc_mw(c, mw2), 0);
	assert_int_equal(wn_client_dealloc_mw(c, mw2), -EINVAL);
	assert_int_equal(wn_client_dealloc_mw(c, mw1), 0);
	assert_int_equal(wn_client_dereg_mr(c, m), 0);

	/* fast-register MR: the backing is shared, the STag invalid until FAST_REG */
	f = wn_client_alloc_frmr(c, pd, fbuf, 8192);
	assert_non_null(f);
	assert_int_equal(wn_mem_info(mt, f->lkey, &info), 0);
	assert_int_equal(info.type, WN_MEM_T_FRMR);
	assert_false(info.valid);
	assert_int_equal(wn_mem_check(mt, f->rkey, 0, 16, WN_MEM_ACCESS_REMOTE_READ, info.pd, 7,
				      &host),
			 WN_MEM_E_INVALID_STAG);
	fkey = (f->lkey & ~0xffu) | ((f->lkey + 9) & 0xff);
	assert_int_equal(wn_mem_fast_reg(mt, fkey, info.pd, 0x10000, 4096, 4096,
					 WN_MEM_ACCESS_LOCAL_WRITE | WN_MEM_ACCESS_REMOTE_READ),
			 WN_MEM_OK);
	assert_int_equal(wn_mem_check(mt, fkey, 0x10000 + 100, 16, WN_MEM_ACCESS_REMOTE_READ,
				      info.pd, 7, &host),
			 WN_MEM_OK);
	/* the server reaches the client's backing at the fast-registered offset */
	fbuf[4096 + 100] = 0xc3;
	assert_int_equal(host[0], 0xc3);
	assert_int_equal(wn_mem_invalidate(mt, fkey, info.pd, 7, true), WN_MEM_OK);
	assert_int_equal(wn_mem_check(mt, fkey, 0x10000, 16, WN_MEM_ACCESS_REMOTE_READ, info.pd,
				      7, &host),
			 WN_MEM_E_INVALID_STAG);
	/* an FRMR request with rights or a TO is malformed */
	{
		struct wn_ctl_reg_mr_req r;
		struct wn_ctl_reg_mr_resp rr;
		int fd = -1;

		memset(&r, 0, sizeof(r));
		r.pd = pd;
		r.flags = WN_CTL_MR_F_FAST_REG;
		r.access = WN_CTL_ACCESS_LOCAL_WRITE;
		r.addr = 4096;
		r.length = 4096;
		r.span = 4096;
		r.n_total = 1;
		r.n_pieces = 1;
		r.align_shift = 12;
		r.piece[0].addr = 4096;
		r.piece[0].len = 4096;
		r.piece[0].src = WN_CTL_MR_SRC_FD;
		r.piece[0].page_shift = 12;
		fd = memfd_create("frmr", 0);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, 4096), 0);
		assert_int_equal(wn_client_call(c, WN_CTL_REG_MR, &r, &fd, 1, &rr, NULL), -EINVAL);
		r.flags = 4;
		r.access = 0;
		assert_int_equal(wn_client_call(c, WN_CTL_REG_MR, &r, &fd, 1, &rr, NULL), -EINVAL);
		r.flags = WN_CTL_MR_F_FAST_REG | WN_CTL_MR_F_REREG;
		assert_int_equal(wn_client_call(c, WN_CTL_REG_MR, &r, &fd, 1, &rr, NULL), -EINVAL);
		r.flags = WN_CTL_MR_F_FAST_REG; /* well formed: allocated, then deregistered */
		assert_int_equal(wn_client_call(c, WN_CTL_REG_MR, &r, &fd, 1, &rr, NULL), 0);
		assert_int_equal(rr.pending, 0);
		{
			struct wn_ctl_handle h = {.handle = rr.mr};

			assert_int_equal(wn_client_call(c, WN_CTL_DEREG_MR, &h, NULL, 0, NULL,
							NULL), 0);
		}
		close(fd);
	}
	assert_int_equal(wn_client_dereg_mr(c, f), 0);

	/* a client's windows go with it */
	assert_int_equal(wn_client_alloc_mw(c, pd, 2, &mw2, &k2), 0);
	wn_client_close(c);
	for (int i = 0; i < 200; i++) {
		stats(&st);
		if (st.mws == st0.mws && st.pds == st0.pds)
			break;
		usleep(10000);
	}
	assert_int_equal(st.mws, st0.mws);
	assert_int_equal(st.mrs, st0.mrs);
	assert_int_equal(st.pds, st0.pds);
	free(buf);
	free(fbuf);
}

/*
 * A UD QP's moves need the attributes InfiniBand requires (IBTA 11.2.1.2: P_Key index, port
 * and Q_Key into INIT, the SQ PSN into RTS) and take no RC attribute; the Q_Key, SQ PSN and
 * type come back from QUERY_QP, and RESET forgets them.
 */
static void
ud_states(struct wn_client *c, struct wn_client_qp *ud)
{
	struct wn_ctl_modify_qp_req mr;
	struct wn_ctl_qp_attr qa;

	memset(&mr, 0, sizeof(mr));
	mr.mask = WN_CTL_QP_STATE | WN_CTL_QP_PORT | WN_CTL_QP_QKEY;
	mr.qp_state = WN_CTL_QPS_INIT;
	mr.ud.port_num = 1;
	mr.ud.qkey = 0x11111111;
	assert_int_equal(wn_client_modify_qp(c, ud, &mr, NULL), -EINVAL); /* no P_Key index */
	mr.mask |= WN_CTL_QP_PKEY_INDEX | WN_CTL_QP_ACCESS_FLAGS;
	assert_int_equal(wn_client_modify_qp(c, ud, &mr, NULL), -EINVAL); /* an RC attribute */
	mr.mask &= ~WN_CTL_QP_ACCESS_FLAGS;
	mr.ud.port_num = 2;
	assert_int_equal(wn_client_modify_qp(c, ud, &mr, NULL), -EINVAL); /* one port */
	mr.ud.port_num = 1;
	assert_int_equal(wn_client_modify_qp(c, ud, &mr, &qa), 0);
	assert_int_equal(qa.qp_state, WN_CTL_QPS_INIT);
	assert_int_equal(qa.qp_type, WN_CTL_QPT_UD);
	assert_int_equal(qa.ud.qkey, 0x11111111);
	assert_int_equal(qa.ud.port_num, 1);
	mr.mask = WN_CTL_QP_STATE;
	mr.qp_state = WN_CTL_QPS_RTR;
	assert_int_equal(wn_client_modify_qp(c, ud, &mr, NULL), 0);
	mr.qp_state = WN_CTL_QPS_RTS;
	assert_int_equal(wn_client_modify_qp(c, ud, &mr, NULL), -EINVAL); /* no SQ PSN */
	mr.mask |= WN_CTL_QP_SQ_PSN | WN_CTL_QP_QKEY;
	mr.ud.sq_psn = 0x45;
	mr.ud.qkey = 0x22;
	assert_int_equal(wn_client_modify_qp(c, ud, &mr, NULL), 0);
	/* in RTS the Q_Key alone may change */
	mr.mask = WN_CTL_QP_QKEY;
	mr.ud.qkey = 0x33;
	assert_int_equal(wn_client_modify_qp(c, ud, &mr, NULL), 0);
	mr.mask = WN_CTL_QP_SQ_PSN;
	assert_int_equal(wn_client_modify_qp(c, ud, &mr, NULL), -EINVAL);
	assert_int_equal(wn_client_query_qp(c, ud, &qa), 0);
	assert_int_equal(qa.qp_state, WN_CTL_QPS_RTS);
	assert_int_equal(qa.ud.qkey, 0x33);
	assert_int_equal(qa.ud.sq_psn, 0x45);
	mr.mask = WN_CTL_QP_STATE;
	mr.qp_state = WN_CTL_QPS_RESET;
	assert_int_equal(wn_client_modify_qp(c, ud, &mr, &qa), 0);
	assert_int_equal(qa.ud.qkey, 0);
	assert_int_equal(qa.ud.sq_psn, 0);
}

static void
test_objects_lifetime(void **state)
{
	struct wn_server_stats st0, st;
	struct wn_ctl_create_qp_req qr;
	struct wn_ctl_modify_qp_req mr;
	struct wn_ctl_qp_attr qa;
	struct wn_client_cq *cq;
	struct wn_client_qp *qp, *ud;
	struct wn_client_srq *srq;
	struct wn_client_mr *m;
	struct wn_client *c;
	uint32_t pd;
	void *buf;

	(void)state;
	stats(&st0);
	c = wn_client_open(sock_path);
	assert_non_null(c);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	buf = malloc(10000);
	assert_non_null(buf);
	m = wn_client_reg_mr(c, pd, buf, 10000, (uintptr_t)buf, WN_CTL_ACCESS_LOCAL_WRITE);
	assert_non_null(m);
	/* a PD in use cannot go away */
	assert_int_equal(wn_client_dealloc_pd(c, pd), -EBUSY);
	cq = wn_client_create_cq(c, 100, -1, 7);
	assert_non_null(cq);
	assert_true(cq->depth >= 100);
	assert_non_null(cq->ring);
	srq = wn_client_create_srq(c, pd, 64, 2, 0);
	assert_non_null(srq);
	memset(&qr, 0, sizeof(qr));
	qr.pd = pd;
	qr.send_cq = cq->handle;
	qr.recv_cq = cq->handle;
	qr.qp_type = WN_CTL_QPT_RC;
	qr.max_send_wr = 33;
	qr.max_recv_wr = 17;
	qr.max_send_sge = 2;
	qr.max_recv_sge = 1;
	qp = wn_client_create_qp(c, &qr);
	assert_non_null(qp);
	assert_true(qp->sq_depth >= 33 && qp->rq_depth >= 17);
	assert_true(qp->qpn != 0);
	/* a UD QP is (a warpnic extension); a UC QP is not */
	qr.qp_type = WN_CTL_QPT_UD;
	ud = wn_client_create_qp(c, &qr);
	assert_non_null(ud);
	ud_states(c, ud);
	assert_int_equal(wn_client_destroy_qp(c, ud), 0);
	qr.qp_type = 3;
	assert_null(wn_client_create_qp(c, &qr));
	assert_int_equal(errno, EINVAL);
	stats(&st);
	assert_int_equal(st.pds, st0.pds + 1);
	assert_int_equal(st.mrs, st0.mrs + 1);
	assert_int_equal(st.cqs, st0.cqs + 1);
	assert_int_equal(st.srqs, st0.srqs + 1);
	assert_int_equal(st.qps, st0.qps + 1);
	/* CQ used by a QP */
	assert_int_equal(wn_client_destroy_cq(c, cq), -EBUSY);
	/* QP state machine: RESET -> INIT -> RTR -> RTS, RTS -> INIT refused, -> ERR */
	memset(&mr, 0, sizeof(mr));
	mr.mask = WN_CTL_QP_STATE;
	mr.qp_state = WN_CTL_QPS_INIT;
	assert_int_equal(wn_client_modify_qp(c, qp, &mr, &qa), 0);
	assert_int_equal(qa.qp_state, WN_CTL_QPS_INIT);
	mr.qp_state = WN_CTL_QPS_RTS;
	assert_int_equal(wn_client_modify_qp(c, qp, &mr, NULL), -EINVAL);
	mr.qp_state = WN_CTL_QPS_RTR;
	assert_int_equal(wn_client_modify_qp(c, qp, &mr, NULL), 0);
	mr.mask = WN_CTL_QP_STATE | WN_CTL_QP_MAX_QP_RD_ATOMIC;
	mr.qp_state = WN_CTL_QPS_RTS;
	mr.max_rd_atomic = 4;
	assert_int_equal(wn_client_modify_qp(c, qp, &mr, &qa), 0);
	assert_int_equal(qa.qp_state, WN_CTL_QPS_RTS);
	assert_int_equal(qa.max_rd_atomic, 4);
	assert_int_equal(wn_client_query_qp(c, qp, &qa), 0);
	assert_int_equal(qa.qpn, qp->qpn);
	mr.mask = WN_CTL_QP_STATE;
	mr.qp_state = WN_CTL_QPS_INIT;
	assert_int_equal(wn_client_modify_qp(c, qp, &mr, NULL), -EINVAL);
	assert_int_equal(wn_client_destroy_qp(c, qp), 0);
	assert_int_equal(wn_client_destroy_srq(c, srq), 0);
	assert_int_equal(wn_client_destroy_cq(c, cq), 0);
	assert_int_equal(wn_client_dereg_mr(c, m), 0);
	assert_int_equal(wn_client_dealloc_pd(c, pd), 0);
	/* handles are dead now */
	assert_int_equal(wn_client_dealloc_pd(c, pd), -EINVAL);
	stats(&st);
	assert_int_equal(st.pds, st0.pds);
	assert_int_equal(st.mrs, st0.mrs);
	assert_int_equal(st.qps, st0.qps);
	wn_client_close(c);
	free(buf);
}

/* Register @p buf (filled with a pattern) and check the server's view both ways. */
static void
check_shared(struct wn_client *c, uint32_t pd, uint8_t *buf, size_t len, uint8_t seed)
{
	struct wn_client_mr *m;
	uint64_t slen = 0;
	uint8_t *sv;
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (uint8_t)(seed + i * 7);
	m = wn_client_reg_mr(c, pd, buf, len, (uintptr_t)buf,
			     WN_CTL_ACCESS_LOCAL_WRITE | WN_CTL_ACCESS_REMOTE_WRITE);
	assert_non_null(m);
	sv = wn_server_mr_lookup(srv, m->rkey, &slen);
	assert_non_null(sv);
	assert_int_equal(slen, len);
	/* the content survived the remap and the server sees exactly the app's bytes */
	assert_memory_equal(sv, buf, len);
	for (i = 0; i < len; i++)
		assert_int_equal(buf[i], (uint8_t)(seed + i * 7));
	/* live sharing: app writes show up in the server, server writes (placement) in the app */
	buf[0] ^= 0xff;
	buf[len - 1] ^= 0x5a;
	assert_int_equal(sv[0], buf[0]);
	assert_int_equal(sv[len - 1], buf[len - 1]);
	sv[len / 2] = 0xa5;
	assert_int_equal(buf[len / 2], 0xa5);
	assert_int_equal(wn_client_dereg_mr(c, m), 0);
	/* after dereg the app's memory is still its own and intact */
	assert_int_equal(buf[len / 2], 0xa5);
	assert_null(wn_server_mr_lookup(srv, m == NULL ? 0 : 0xffffffffu, NULL));
}

/*
 * ibv_rereg_mr keeps the keys: the STag reaches the new range, rights and PD at once and the
 * old range through it no more; the new registration's own STag never reaches anything; a
 * bound window or a malformed REREG_MR fails with both MRs as they were.
 */
static void
test_mr_rereg(void **state)
{
	struct wn_server_stats st0, st;
	struct wn_mem_table *mt = wn_server_mem(srv);
	struct wn_ctl_rereg_mr_req rq;
	struct wn_ctl_reg_mr_resp rr;
	struct wn_client_mr *m, *n;
	struct wn_mem_info info;
	struct wn_client *c;
	uint32_t pd, pd2, mw, k, key, pdn, pdn2;
	uint8_t *a, *b, *host;

	(void)state;
	stats(&st0);
	c = wn_client_open(sock_path);
	assert_non_null(c);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	assert_int_equal(wn_client_alloc_pd(c, &pd2), 0);
	a = aligned_alloc(4096, 8192);
	b = aligned_alloc(4096, 4096);
	assert_true(a != NULL && b != NULL);
	m = wn_client_reg_mr(c, pd, a, 8192, (uintptr_t)a,
			     WN_CTL_ACCESS_LOCAL_WRITE | WN_CTL_ACCESS_REMOTE_WRITE |
				     WN_CTL_ACCESS_MW_BIND);
	assert_non_null(m);
	key = m->rkey;
	assert_int_equal(wn_mem_info(mt, key, &info), 0);
	pdn = info.pd;

	/* translation: the same keys reach the second buffer, and the first no more */
	assert_int_equal(wn_client_rereg_mr(c, m, WN_CLIENT_REREG_TRANSLATION, 0, b, 4096, 0), 0);
	assert_int_equal(m->rkey, key);
	assert_int_equal(m->lkey, key);
	assert_int_equal(wn_mem_check(mt, key, (uintptr_t)b + 8, 8, WN_MEM_ACCESS_REMOTE_WRITE,
				      pdn, 1, &host), WN_MEM_OK);
	host[0] = 0x77;
	assert_int_equal(b[8], 0x77);
	assert_int_equal(wn_mem_check(mt, key, (uintptr_t)a, 8, WN_MEM_ACCESS_REMOTE_WRITE, pdn, 1,
				      NULL), WN_MEM_E_BOUNDS);
	/* access and PD: the same keys, the new rights and PD */
	assert_int_equal(wn_client_rereg_mr(c, m, WN_CLIENT_REREG_ACCESS | WN_CLIENT_REREG_PD, pd2,
					    NULL, 0, WN_CTL_ACCESS_REMOTE_READ), 0);
	assert_int_equal(m->rkey, key);
	assert_int_equal(wn_mem_info(mt, key, &info), 0);
	pdn2 = info.pd;
	assert_true(pdn2 != pdn && info.valid && info.length == 4096);
	assert_int_equal(wn_mem_check(mt, key, (uintptr_t)b, 8, WN_MEM_ACCESS_REMOTE_READ, pdn2, 1,
				      NULL), WN_MEM_OK);
	assert_int_equal(wn_mem_check(mt, key, (uintptr_t)b, 8, WN_MEM_ACCESS_REMOTE_WRITE, pdn2,
				      1, NULL), WN_MEM_E_ACCESS);
	assert_int_equal(wn_mem_check(mt, key, (uintptr_t)b, 8, WN_MEM_ACCESS_REMOTE_READ, pdn, 1,
				      NULL), WN_MEM_E_NOT_ASSOC);
	stats(&st);
	assert_int_equal(st.mrs, st0.mrs + 1); /* the old registrations went */

	/* a bound window: -EBUSY, the MR as it was */
	assert_int_equal(wn_client_rereg_mr(c, m, WN_CLIENT_REREG_ACCESS | WN_CLIENT_REREG_PD, pd,
					    NULL, 0,
					    WN_CTL_ACCESS_LOCAL_WRITE | WN_CTL_ACCESS_MW_BIND), 0);
	assert_int_equal(wn_client_alloc_mw(c, pd, 1, &mw, &k), 0);
	assert_int_equal(wn_mem_mw_bind(mt, k, key, pdn, 7, (uintptr_t)b, 64,
					WN_MEM_ACCESS_REMOTE_READ), WN_MEM_OK);
	assert_int_equal(wn_client_rereg_mr(c, m, WN_CLIENT_REREG_TRANSLATION, 0, a, 8192, 0),
			 -EBUSY);
	assert_int_equal(m->rkey, key);
	assert_int_equal(wn_mem_check(mt, key, (uintptr_t)b, 8, WN_MEM_ACCESS_LOCAL_WRITE, pdn, 1,
				      NULL), WN_MEM_OK);
	stats(&st);
	assert_int_equal(st.mrs, st0.mrs + 1);
	assert_int_equal(wn_mem_mw_bind(mt, k, 0, pdn, 7, 0, 0, 0), WN_MEM_OK);

	/* REREG_MR by hand: a registration not made for it, or twice the same MR, is refused */
	n = wn_client_reg_mr(c, pd, a, 4096, (uintptr_t)a, WN_CTL_ACCESS_LOCAL_WRITE);
	assert_non_null(n);
	rq.mr = n->handle;
	rq.old = m->handle;
	assert_int_equal(wn_client_call(c, WN_CTL_REREG_MR, &rq, NULL, 0, &rr, NULL), -EINVAL);
	rq.old = n->handle;
	assert_int_equal(wn_client_call(c, WN_CTL_REREG_MR, &rq, NULL, 0, &rr, NULL), -EINVAL);
	rq.mr = m->handle;
	rq.old = n->handle + 0x10000;
	assert_int_equal(wn_client_call(c, WN_CTL_REREG_MR, &rq, NULL, 0, &rr, NULL), -EINVAL);
	assert_int_equal(wn_mem_check(mt, n->lkey, (uintptr_t)a, 8, WN_MEM_ACCESS_LOCAL_WRITE, pdn,
				      1, NULL), WN_MEM_OK);
	assert_int_equal(wn_mem_check(mt, key, (uintptr_t)b, 8, WN_MEM_ACCESS_LOCAL_WRITE, pdn, 1,
				      NULL), WN_MEM_OK);

	assert_int_equal(wn_client_dealloc_mw(c, mw), 0);
	assert_int_equal(wn_client_dereg_mr(c, n), 0);
	assert_int_equal(wn_client_dereg_mr(c, m), 0);
	assert_int_equal(wn_mem_check(mt, key, (uintptr_t)b, 8, WN_MEM_ACCESS_LOCAL_WRITE, pdn, 1,
				      NULL), WN_MEM_E_INVALID_STAG);
	assert_int_equal(wn_client_dealloc_pd(c, pd2), 0);
	assert_int_equal(wn_client_dealloc_pd(c, pd), 0);
	stats(&st);
	assert_int_equal(st.mrs, st0.mrs);
	wn_client_close(c);
	free(a);
	free(b);
}

static void
test_mr_sharing(void **state)
{
	struct wn_client *c = wn_client_open(sock_path);
	struct wn_client_mr *m1, *m2;
	uint8_t *a, *b, *mm, *shm;
	uint64_t l1, l2;
	uint32_t pd;
	int shmid;

	(void)state;
	assert_non_null(c);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	/* malloc, unaligned start and odd length spanning pages */
	a = malloc(3 * 4096 + 123);
	assert_non_null(a);
	check_shared(c, pd, a + 5, 2 * 4096 + 77, 1);
	/* small malloc sharing its page with malloc's own metadata */
	b = malloc(64);
	assert_non_null(b);
	check_shared(c, pd, b, 64, 2);
	free(b);
	/* memalign */
	assert_int_equal(posix_memalign((void **)&b, 4096, 8192), 0);
	check_shared(c, pd, b, 8192, 3);
	/* two overlapping registrations reuse the shared pages; both views agree */
	m1 = wn_client_reg_mr(c, pd, b, 8192, (uintptr_t)b, WN_CTL_ACCESS_LOCAL_WRITE);
	m2 = wn_client_reg_mr(c, pd, b + 100, 100, (uintptr_t)b + 100, WN_CTL_ACCESS_LOCAL_WRITE);
	assert_non_null(m1);
	assert_non_null(m2);
	b[150] = 0x42;
	assert_int_equal(((uint8_t *)wn_server_mr_lookup(srv, m1->lkey, &l1))[150], 0x42);
	assert_int_equal(((uint8_t *)wn_server_mr_lookup(srv, m2->lkey, &l2))[50], 0x42);
	assert_int_equal(l1, 8192);
	assert_int_equal(l2, 100);
	assert_int_equal(wn_client_dereg_mr(c, m2), 0);
	assert_int_equal(wn_client_dereg_mr(c, m1), 0);
	free(b);
	/* anonymous mmap */
	mm = mmap(NULL, 5 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(mm != MAP_FAILED);
	check_shared(c, pd, mm + 4096, 3 * 4096, 4);
	munmap(mm, 5 * 4096);
	/* SysV shm */
	shmid = shmget(IPC_PRIVATE, 4 * 4096, IPC_CREAT | 0600);
	assert_true(shmid >= 0);
	shm = shmat(shmid, NULL, 0);
	assert_true(shm != (void *)-1);
	shmctl(shmid, IPC_RMID, NULL);
	check_shared(c, pd, shm, 4 * 4096, 5);
	/* unmapped memory is refused */
	mm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(mm, 4096);
	assert_null(wn_client_reg_mr(c, pd, mm, 4096, (uintptr_t)mm, 0));
	assert_int_equal(errno, EFAULT);
	/* remote write without local write is invalid (RFC 5040 §2.4 / verbs rule) */
	assert_null(wn_client_reg_mr(c, pd, a, 16, (uintptr_t)a, WN_CTL_ACCESS_REMOTE_WRITE));
	assert_int_equal(errno, EINVAL);
	free(a);
	assert_int_equal(wn_client_dealloc_pd(c, pd), 0);
	wn_client_close(c);
}

/*
 * No dataplane: a QP moved to Error completes its outstanding WRs with WR_FLUSH_ERR and an
 * armed CQ notifies once through its fd (rping joins its CQ thread on exactly this).
 */
/* An RC QP request on @p cq for both queues: 4 WRs of 1 SGE each way. */
static void
small_rc_qp_req(struct wn_ctl_create_qp_req *qr, uint32_t pd, const struct wn_client_cq *cq)
{
	memset(qr, 0, sizeof(*qr));
	qr->pd = pd;
	qr->send_cq = qr->recv_cq = cq->handle;
	qr->qp_type = WN_CTL_QPT_RC;
	qr->max_send_wr = qr->max_recv_wr = 4;
	qr->max_send_sge = qr->max_recv_sge = 1;
}

static void
test_flush_on_error(void **state)
{
	struct wn_client *c = wn_client_open(sock_path);
	struct wn_ctl_create_qp_req qr;
	struct wn_ctl_modify_qp_req mq;
	struct wn_queue_cqe e[8];
	struct wn_client_cq *cq;
	struct wn_client_qp *qp;
	struct pollfd pfd;
	uint64_t cookie = 0;
	uint32_t pd, i;
	int p[2];

	(void)state;
	assert_non_null(c);
	assert_int_equal(pipe(p), 0);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	cq = wn_client_create_cq(c, 16, p[1], 0xc0ffee);
	assert_non_null(cq);
	small_rc_qp_req(&qr, pd, cq);
	qp = wn_client_create_qp(c, &qr);
	assert_non_null(qp);
	/* three receives and one send */
	assert_true(wn_client_wq_begin(qp, NULL, true) >= 3);
	for (i = 0; i < 3; i++) {
		struct wn_queue_rwqe *w = wn_client_wq_slot(qp, NULL, true, i);

		w->wr_id = 100 + i;
		w->num_sge = 0;
	}
	wn_client_wq_end(qp, NULL, true, 3);
	assert_true(wn_client_wq_begin(qp, NULL, false) >= 1);
	{
		struct wn_queue_swqe *w = wn_client_wq_slot(qp, NULL, false, 0);

		memset(w, 0, sizeof(*w));
		w->wr_id = 7;
		w->opcode = WN_QUEUE_WR_RDMA_READ;
	}
	wn_client_wq_end(qp, NULL, false, 1);
	assert_int_equal(wn_client_poll_cq(cq, e, 8), 0);
	wn_client_cq_arm(cq, false);
	memset(&mq, 0, sizeof(mq));
	mq.mask = WN_CTL_QP_STATE;
	mq.qp_state = WN_CTL_QPS_ERR;
	assert_int_equal(wn_client_modify_qp(c, qp, &mq, NULL), 0);
	/* one notification with the CQ's cookie */
	pfd.fd = p[0];
	pfd.events = POLLIN;
	assert_int_equal(poll(&pfd, 1, 5000), 1);
	assert_int_equal(read(p[0], &cookie, sizeof(cookie)), (ssize_t)sizeof(cookie));
	assert_int_equal(cookie, 0xc0ffee);
	assert_int_equal(wn_client_poll_cq(cq, e, 8), 4);
	assert_int_equal(e[0].wr_id, 7);
	assert_int_equal(e[0].opcode, WN_QUEUE_WC_RDMA_READ);
	for (i = 0; i < 4; i++) {
		assert_int_equal(e[i].status, WN_QUEUE_WC_WR_FLUSH_ERR);
		assert_int_equal(e[i].qp_num, qp->qpn);
	}
	for (i = 1; i < 4; i++) {
		assert_int_equal(e[i].wr_id, 100 + i - 1);
		assert_int_equal(e[i].opcode, WN_QUEUE_WC_RECV);
	}
	assert_int_equal(wn_client_destroy_qp(c, qp), 0);
	assert_int_equal(wn_client_destroy_cq(c, cq), 0);
	/* the arming was consumed: nothing more was written */
	pfd.revents = 0;
	assert_int_equal(poll(&pfd, 1, 0), 0);
	close(p[0]);
	close(p[1]);
	assert_int_equal(wn_client_dealloc_pd(c, pd), 0);
	wn_client_close(c);
}

/*
 * A move to RTR with the peer's GID and QP number (an InfiniBand-style connection): refused
 * without a GRH (iWARP has no LIDs) and without a dataplane to connect it; the path
 * attributes a move carries are kept and reported, and a QP back in RESET has none.
 */
static void
test_ib_path(void **state)
{
	struct wn_client *c = wn_client_open(sock_path);
	struct wn_ctl_create_qp_req qr;
	struct wn_ctl_modify_qp_req mq;
	struct wn_ctl_qp_attr qa;
	struct wn_client_cq *cq;
	struct wn_client_qp *qp;
	uint32_t pd;

	(void)state;
	assert_non_null(c);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	cq = wn_client_create_cq(c, 16, -1, 0);
	assert_non_null(cq);
	small_rc_qp_req(&qr, pd, cq);
	qp = wn_client_create_qp(c, &qr);
	assert_non_null(qp);
	memset(&mq, 0, sizeof(mq));
	mq.mask = WN_CTL_QP_STATE;
	mq.qp_state = WN_CTL_QPS_INIT;
	assert_int_equal(wn_client_modify_qp(c, qp, &mq, NULL), 0);
	mq.mask = WN_CTL_QP_STATE | WN_CTL_QP_IB_PATH | WN_CTL_QP_RQ_PSN;
	mq.qp_state = WN_CTL_QPS_RTR;
	mq.path.dgid[10] = mq.path.dgid[11] = 0xff; /* ::ffff:198.18.0.2 */
	mq.path.dgid[12] = 198;
	mq.path.dgid[13] = 18;
	mq.path.dgid[15] = 2;
	mq.path.dest_qp_num = 77;
	mq.path.rq_psn = 0x123456;
	assert_int_equal(wn_client_modify_qp(c, qp, &mq, &qa), -EINVAL); /* no GRH */
	mq.path.is_global = 1;
	mq.path.sgid_index = 1; /* the device has one GID */
	assert_int_equal(wn_client_modify_qp(c, qp, &mq, &qa), -EINVAL);
	mq.path.sgid_index = 0;
	assert_int_equal(wn_client_modify_qp(c, qp, &mq, &qa), -ENETDOWN);
	assert_int_equal(wn_client_query_qp(c, qp, &qa), 0);
	assert_int_equal(qa.qp_state, WN_CTL_QPS_INIT);
	/* an RTR without the peer's address connects nothing (as rdma_init_qp_attr's) */
	mq.mask = WN_CTL_QP_STATE | WN_CTL_QP_DEST_QPN | WN_CTL_QP_TIMEOUT;
	mq.path.timeout = 14;
	assert_int_equal(wn_client_modify_qp(c, qp, &mq, &qa), 0);
	assert_int_equal(qa.qp_state, WN_CTL_QPS_RTR);
	assert_int_equal(qa.path.dest_qp_num, 77);
	assert_int_equal(qa.path.timeout, 14);
	assert_int_equal(qa.path.rq_psn, 0); /* the refused moves changed nothing */
	assert_true(qa.path_mask & WN_CTL_QP_DEST_QPN);
	assert_false(qa.path_mask & (WN_CTL_QP_AV | WN_CTL_QP_RQ_PSN));
	mq.mask = WN_CTL_QP_STATE;
	mq.qp_state = WN_CTL_QPS_RESET;
	assert_int_equal(wn_client_modify_qp(c, qp, &mq, &qa), 0);
	assert_int_equal(qa.path_mask, 0);
	assert_int_equal(qa.path.dest_qp_num, 0);
	assert_int_equal(wn_client_destroy_qp(c, qp), 0);
	assert_int_equal(wn_client_destroy_cq(c, cq), 0);
	assert_int_equal(wn_client_dealloc_pd(c, pd), 0);
	wn_client_close(c);
}

/*
 * wn_client_cq_clean: three QPs share a CQ, each flushed two receives into it; cleaning the
 * middle one's removes exactly those, and the others' stay, in order (as ibv_destroy_qp
 * leaves the CQ, mlx5-style).
 */
static void
test_cq_clean(void **state)
{
	struct wn_client *c = wn_client_open(sock_path);
	struct wn_ctl_create_qp_req qr;
	struct wn_ctl_modify_qp_req mq;
	struct wn_queue_cqe e[8];
	struct wn_client_cq *cq;
	struct wn_client_qp *qp[3];
	uint32_t pd, i, k;

	(void)state;
	assert_non_null(c);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	cq = wn_client_create_cq(c, 16, -1, 0);
	assert_non_null(cq);
	small_rc_qp_req(&qr, pd, cq);
	memset(&mq, 0, sizeof(mq));
	mq.mask = WN_CTL_QP_STATE;
	mq.qp_state = WN_CTL_QPS_ERR;
	for (k = 0; k < 3; k++) {
		qp[k] = wn_client_create_qp(c, &qr);
		assert_non_null(qp[k]);
		assert_true(wn_client_wq_begin(qp[k], NULL, true) >= 2);
		for (i = 0; i < 2; i++) {
			struct wn_queue_rwqe *w = wn_client_wq_slot(qp[k], NULL, true, i);

			w->wr_id = 10 * k + i;
			w->num_sge = 0;
		}
		wn_client_wq_end(qp[k], NULL, true, 2);
		assert_int_equal(wn_client_modify_qp(c, qp[k], &mq, NULL), 0);
	}
	assert_int_equal(wn_client_cq_clean(cq, qp[1]->qpn), 2);
	assert_int_equal(wn_client_cq_clean(cq, qp[1]->qpn), 0);
	assert_int_equal(wn_client_poll_cq(cq, e, 8), 4);
	for (i = 0; i < 4; i++) {
		k = i < 2 ? 0 : 2;
		assert_int_equal(e[i].qp_num, qp[k]->qpn);
		assert_int_equal(e[i].wr_id, 10 * k + i % 2);
		assert_int_equal(e[i].status, WN_QUEUE_WC_WR_FLUSH_ERR);
	}
	assert_int_equal(wn_client_cq_clean(cq, qp[0]->qpn), 0); /* an empty CQ */
	for (k = 0; k < 3; k++)
		assert_int_equal(wn_client_destroy_qp(c, qp[k]), 0);
	assert_int_equal(wn_client_destroy_cq(c, cq), 0);
	assert_int_equal(wn_client_dealloc_pd(c, pd), 0);
	wn_client_close(c);
}

/*
 * 40 memfds mapped one after the other: 40 pieces, more than REG_MR carries (MR_PIECES
 * brings the rest); the server maps each object, the client's mappings stay theirs.
 */
static void
test_mr_many_objects(void **state)
{
	struct wn_client *c = wn_client_open(sock_path);
	struct wn_client_mr *m;
	uint8_t *base, *sv;
	uint64_t len;
	uint32_t pd;
	int i;

	(void)state;
	assert_non_null(c);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	base = mmap(NULL, 40 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(base != MAP_FAILED);
	for (i = 0; i < 40; i++) {
		int fd = memfd_create("piece", MFD_CLOEXEC);

		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, 4096), 0);
		assert_true(mmap(base + i * 4096, 4096, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_FIXED, fd, 0) == base + i * 4096);
		close(fd); /* found through the mapping */
		memset(base + i * 4096, i, 4096);
	}
	m = wn_client_reg_mr(c, pd, base + 100, 40 * 4096 - 200, (uintptr_t)base + 100,
			     WN_CTL_ACCESS_LOCAL_WRITE | WN_CTL_ACCESS_REMOTE_WRITE);
	assert_non_null(m);
	sv = wn_server_mr_lookup(srv, m->rkey, &len);
	assert_non_null(sv);
	assert_int_equal(len, 40 * 4096 - 200);
	for (i = 0; i < 40; i++) {
		assert_int_equal(sv[i * 4096 + 50], i == 0 ? 0 : i); /* sv starts at base + 100 */
		sv[i * 4096 + 50] = (uint8_t)(0x80 | i);
		assert_int_equal(base[100 + i * 4096 + 50], 0x80 | i);
	}
	assert_int_equal(wn_client_dereg_mr(c, m), 0);
	assert_int_equal(base[100 + 39 * 4096 + 50], 0x80 | 39);
	munmap(base, 40 * 4096);
	assert_int_equal(wn_client_dealloc_pd(c, pd), 0);
	wn_client_close(c);
}

/*
 * A buffer on this thread's own stack: the pages are moved by a thread of their own while
 * this one, whose frames are there, waits (and writes there as soon as it may).
 */
static void
test_mr_on_stack(void **state)
{
	struct wn_client *c = wn_client_open(sock_path);
	volatile uint8_t sbuf[3 * 4096];
	struct wn_client_mr *m;
	uint8_t *sv;
	uint32_t pd;
	size_t i;

	(void)state;
	assert_non_null(c);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	for (i = 0; i < sizeof(sbuf); i++)
		sbuf[i] = (uint8_t)i;
	m = wn_client_reg_mr(c, pd, (void *)sbuf, sizeof(sbuf), (uintptr_t)sbuf,
			     WN_CTL_ACCESS_LOCAL_WRITE);
	assert_non_null(m);
	sv = wn_server_mr_lookup(srv, m->lkey, NULL);
	assert_non_null(sv);
	for (i = 0; i < sizeof(sbuf); i++)
		assert_int_equal(sv[i], (uint8_t)i);
	sbuf[7] = 0xee;
	assert_int_equal(sv[7], 0xee);
	assert_int_equal(wn_client_dereg_mr(c, m), 0);
	assert_int_equal(sbuf[7], 0xee);
	assert_int_equal(wn_client_dealloc_pd(c, pd), 0);
	wn_client_close(c);
}

/* Read-only memory is a source only; kernel pages and holes are not memory to register. */
static void
test_mr_readonly_and_kernel(void **state)
{
	struct wn_client *c = wn_client_open(sock_path);
	struct wn_client_mr *m;
	uint8_t *ro, *sv;
	uint32_t pd;
	void *vdso = (void *)getauxval(AT_SYSINFO_EHDR);

	(void)state;
	assert_non_null(c);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	ro = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(ro != MAP_FAILED);
	memset(ro, 0x3c, 8192);
	assert_int_equal(mprotect(ro, 8192, PROT_READ), 0);
	/* every access that writes needs writable memory, as ib_access_writable() says */
	assert_null(wn_client_reg_mr(c, pd, ro, 8192, (uintptr_t)ro, WN_CTL_ACCESS_LOCAL_WRITE));
	assert_int_equal(errno, EFAULT);
	assert_null(wn_client_reg_mr(c, pd, ro, 8192, (uintptr_t)ro, WN_CTL_ACCESS_MW_BIND));
	assert_int_equal(errno, EFAULT);
	m = wn_client_reg_mr(c, pd, ro, 8192, (uintptr_t)ro, WN_CTL_ACCESS_REMOTE_READ);
	assert_non_null(m);
	sv = wn_server_mr_lookup(srv, m->rkey, NULL);
	assert_non_null(sv);
	assert_int_equal(sv[8191], 0x3c);
	assert_int_equal(wn_client_dereg_mr(c, m), 0);
	if (vdso != NULL) {
		assert_null(wn_client_reg_mr(c, pd, vdso, 4096, (uintptr_t)vdso, 0));
		assert_int_equal(errno, EFAULT);
	}
	munmap(ro, 8192);
	assert_int_equal(wn_client_dealloc_pd(c, pd), 0);
	wn_client_close(c);
}

/*
 * A shared object its owner truncates under the MR: the server's access to it faults
 * (SIGBUS) and gets an anonymous page instead, counted; nothing dies.
 */
static void
test_mr_truncated(void **state)
{
	struct wn_client *c = wn_client_open(sock_path);
	struct wn_server_stats st0, st;
	struct wn_client_mr *m;
	volatile uint8_t *sv;
	uint8_t *p;
	uint32_t pd;
	int fd = memfd_create("truncated", MFD_CLOEXEC);

	(void)state;
	assert_non_null(c);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 3 * 4096), 0);
	p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	memset(p, 7, 3 * 4096);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	m = wn_client_reg_mr(c, pd, p, 3 * 4096, (uintptr_t)p, WN_CTL_ACCESS_LOCAL_WRITE);
	assert_non_null(m);
	sv = wn_server_mr_lookup(srv, m->lkey, NULL);
	assert_non_null(sv);
	assert_int_equal(sv[5000], 7);
	stats(&st0);
	assert_int_equal(ftruncate(fd, 4096), 0); /* the last two pages are gone from the file */
	assert_int_equal(sv[100], 7);
	assert_int_equal(sv[5000], 0);             /* a fresh page in place of the lost one */
	sv[2 * 4096 + 1] = 9;
	assert_int_equal(sv[2 * 4096 + 1], 9);
	stats(&st);
	assert_int_equal(st.mr_sigbus, st0.mr_sigbus + 2);
	assert_int_equal(wn_client_dereg_mr(c, m), 0);
	munmap(p, 3 * 4096);
	close(fd);
	assert_int_equal(wn_client_dealloc_pd(c, pd), 0);
	wn_client_close(c);
}

struct busy_arg {
	uint64_t *w;
	size_t n;
	atomic_int *stop;
	unsigned long lost, writes;
};

static void *
busy_writer(void *p)
{
	struct busy_arg *a = p;
	uint64_t pass;
	size_t i;

	for (pass = 1; !atomic_load(a->stop); pass++)
		for (i = 0; i < a->n; i++) {
			a->lost += a->w[i] != pass - 1;
			a->w[i] = pass;
			a->writes++;
		}
	return NULL;
}

/* Two threads write all the time into a buffer registered and deregistered 200 times. */
static void
test_mr_busy_writers(void **state)
{
	struct wn_client *c = wn_client_open(sock_path);
	struct busy_arg a[2];
	atomic_int stop = 0;
	pthread_t t[2];
	uint64_t *buf;
	uint32_t pd;
	int i;

	(void)state;
	assert_non_null(c);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	buf = calloc(1, 1 << 20);
	assert_non_null(buf);
	for (i = 0; i < 2; i++) {
		a[i] = (struct busy_arg){.w = buf + i * (1 << 16), .n = 1 << 16, .stop = &stop};
		assert_int_equal(pthread_create(&t[i], NULL, busy_writer, &a[i]), 0);
	}
	for (i = 0; i < 200; i++) {
		struct wn_client_mr *m = wn_client_reg_mr(c, pd, buf, 1 << 20, (uintptr_t)buf,
							  WN_CTL_ACCESS_LOCAL_WRITE);

		assert_non_null(m);
		assert_int_equal(wn_client_dereg_mr(c, m), 0);
	}
	atomic_store(&stop, 1);
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(a[i].lost, 0);
		assert_true(a[i].writes > 0);
	}
	free(buf);
	assert_int_equal(wn_client_dealloc_pd(c, pd), 0);
	wn_client_close(c);
}

/* fork() while a malloc'd buffer is registered: the child gets a private copy. */
static void
test_mr_fork(void **state)
{
	struct wn_client *c = wn_client_open(sock_path);
	struct wn_client_mr *m;
	uint64_t len;
	uint8_t *buf, *sv;
	uint32_t pd;
	int status;
	pid_t child;

	(void)state;
	assert_non_null(c);
	assert_int_equal(wn_client_alloc_pd(c, &pd), 0);
	buf = malloc(4 * 4096);
	assert_non_null(buf);
	memset(buf, 0x11, 4 * 4096);
	m = wn_client_reg_mr(c, pd, buf, 4 * 4096, (uintptr_t)buf, WN_CTL_ACCESS_LOCAL_WRITE);
	assert_non_null(m);
	sv = wn_server_mr_lookup(srv, m->lkey, &len);
	assert_non_null(sv);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* the child's writes and mallocs must not reach the parent or the server */
		void *junk[64];
		int i;

		memset(buf, 0x22, 4 * 4096);
		for (i = 0; i < 64; i++)
			junk[i] = malloc(100 + i);
		for (i = 0; i < 64; i++)
			free(junk[i]);
		_exit(buf[100] == 0x22 ? 0 : 1);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(buf[100], 0x11);
	assert_int_equal(sv[100], 0x11);
	/* and the parent's registration still shares with the server */
	buf[7] = 0x33;
	assert_int_equal(sv[7], 0x33);
	assert_int_equal(wn_client_dereg_mr(c, m), 0);
	assert_int_equal(buf[7], 0x33);
	free(buf);
	assert_int_equal(wn_client_dealloc_pd(c, pd), 0);
	wn_client_close(c);
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
get_event(struct wn_client_cm_channel *ch, uint32_t type, struct wn_ctl_cm_event *ev)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};

	/* the event must already be queued: the server sends it before replying */
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(wn_client_cm_get_event(ch, ev), 0);
	assert_int_equal(ev->event, type);
}

/* Without a dataplane, addresses bind and resolve, but nothing connects or listens. */
static void
test_cm_no_dataplane(void **state)
{
	struct wn_ctl_cm_event ev;
	struct wn_client_cm_channel *ch;
	struct wn_ctl_addr la, da;
	struct wn_client *c;
	uint32_t lid, lid2, aid;

	(void)state;
	c = wn_client_open(sock_path);
	assert_non_null(c);
	ch = wn_client_cm_channel_create(c);
	assert_non_null(ch);
	/* bind: a second bind to the same port is refused, an address not ours too */
	assert_int_equal(wn_client_cm_create_id(c, ch, 0x1111, &lid), 0);
	addr4(&la, "198.18.0.1", 7471);
	assert_int_equal(wn_client_cm_addr(c, WN_CTL_CM_BIND, lid, &la, NULL, 0, NULL), 0);
	assert_int_equal(wn_client_cm_create_id(c, ch, 0x2222, &lid2), 0);
	assert_int_equal(wn_client_cm_addr(c, WN_CTL_CM_BIND, lid2, &la, NULL, 0, NULL),
			 -EADDRINUSE);
	addr4(&da, "198.18.9.9", 7000);
	assert_int_equal(wn_client_cm_addr(c, WN_CTL_CM_BIND, lid2, &da, NULL, 0, NULL),
			 -EADDRNOTAVAIL);
	/* listening needs the dataplane's TCP */
	assert_int_equal(wn_client_cm_addr(c, WN_CTL_CM_LISTEN, lid, NULL, NULL, 4, NULL),
			 -ENETDOWN);
	/* a local destination resolves; connecting needs the dataplane */
	assert_int_equal(wn_client_cm_create_id(c, ch, 0xabcd, &aid), 0);
	addr4(&da, "198.18.0.1", 7471);
	assert_int_equal(wn_client_cm_addr(c, WN_CTL_CM_RESOLVE_ADDR, aid, NULL, &da, 2000, NULL),
			 0);
	get_event(ch, WN_CTL_CM_EV_ADDR_RESOLVED, &ev);
	assert_int_equal(ev.cookie, 0xabcd);
	assert_true(ev.src.port != 0);
	assert_int_equal(wn_client_cm_addr(c, WN_CTL_CM_RESOLVE_ROUTE, aid, NULL, NULL, 2000,
					   NULL), 0);
	get_event(ch, WN_CTL_CM_EV_ROUTE_RESOLVED, &ev);
	assert_int_equal(wn_client_cm_conn(c, WN_CTL_CM_CONNECT, aid, 0, NULL), -ENETDOWN);
	/* an id that never took part in a connection: no accept, reject or disconnect */
	assert_int_equal(wn_client_cm_conn(c, WN_CTL_CM_ACCEPT, aid, 0, NULL), -EINVAL);
	assert_int_equal(wn_client_cm_conn(c, WN_CTL_CM_REJECT, aid, 0, NULL), -EINVAL);
	assert_int_equal(wn_client_cm_disconnect(c, aid), -EINVAL);
	/* a destination that is not ours cannot be resolved (neighbours are the dataplane's) */
	assert_int_equal(wn_client_cm_destroy_id(c, aid), 0);
	assert_int_equal(wn_client_cm_create_id(c, ch, 0, &aid), 0);
	addr4(&da, "198.18.5.5", 7471);
	assert_int_equal(wn_client_cm_addr(c, WN_CTL_CM_RESOLVE_ADDR, aid, NULL, &da, 0, NULL), 0);
	get_event(ch, WN_CTL_CM_EV_ADDR_ERROR, &ev);
	wn_client_close(c);
	free(ch);
}

static void
test_bad_requests(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct wn_server_stats st0, st;
	struct {
		struct wn_ctl_hdr h;
		struct wn_ctl_handle b;
	} m;
	struct wn_ctl_hdr r;
	struct wn_client *c;
	int fd;

	(void)state;
	stats(&st0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	/* wrong size for the op: answered with -EBADMSG, connection stays usable */
	wn_ctl_hdr_init(&m.h, WN_CTL_ALLOC_PD, 9, sizeof(m.b));
	memset(&m.b, 0, sizeof(m.b));
	assert_int_equal(wn_ctl_send(fd, &m.h, NULL, 0), 0);
	assert_int_equal(recv(fd, &r, sizeof(r), 0), (ssize_t)sizeof(r));
	assert_int_equal(r.seq, 9);
	assert_int_equal(r.status, -EBADMSG);
	/* a handle that was never handed out */
	wn_ctl_hdr_init(&m.h, WN_CTL_DEALLOC_PD, 10, sizeof(m.b));
	m.b.handle = 0x12345;
	assert_int_equal(wn_ctl_send(fd, &m.h, NULL, 0), 0);
	assert_int_equal(recv(fd, &r, sizeof(r), 0), (ssize_t)sizeof(r));
	assert_int_equal(r.status, -EINVAL);
	/* garbage */
	assert_int_equal(send(fd, "xyz", 3, 0), 3);
	close(fd);
	/* the server still serves others */
	c = wn_client_open(sock_path);
	assert_non_null(c);
	wn_client_close(c);
	stats(&st);
	assert_true(st.bad_requests >= st0.bad_requests + 2);
}

/* A client that sends requests but never reads the answers cannot stall the server. */
static void
test_flooding_client(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct wn_server_stats st;
	struct wn_ctl_device_attr dev;
	struct wn_ctl_hdr m;
	struct wn_client *c;
	int fd, i, sent = 0;

	(void)state;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	for (i = 0; i < 20000; i++) {
		wn_ctl_hdr_init(&m, WN_CTL_QUERY_DEVICE, (uint32_t)i, 0);
		if (send(fd, &m, sizeof(m), MSG_NOSIGNAL) < 0)
			break;
		sent++;
	}
	assert_true(sent > 100);
	/* the server answers everyone else meanwhile */
	c = wn_client_open(sock_path);
	assert_non_null(c);
	assert_int_equal(wn_client_query_device(c, &dev), 0);
	wn_client_close(c);
	close(fd);
	for (i = 0; i < 500; i++) {
		wn_server_stats(srv, &st);
		if (st.clients == 0)
			break;
		usleep(10000);
	}
	assert_int_equal(st.clients, 0);
}

static void
test_killed_client_reclaimed(void **state)
{
	struct wn_server_stats st0, st;
	int p[2], i;
	pid_t child;
	char ok;

	(void)state;
	/* earlier tests' clients may still be closing on the server thread: let them go */
	for (i = 0; i < 500; i++) {
		stats(&st0);
		if (st0.clients == 0)
			break;
		usleep(10000);
	}
	assert_int_equal(st0.clients, 0);
	assert_int_equal(pipe(p), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct wn_ctl_create_qp_req qr;

		/* never outlive a failed parent (the child otherwise pauses forever) */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		struct wn_client_cq *cq;
		struct wn_client *c = wn_client_open(sock_path);
		uint32_t pd, id;
		void *buf = malloc(1 << 16);

		if (c == NULL || wn_client_alloc_pd(c, &pd) != 0)
			_exit(1);
		if (wn_client_reg_mr(c, pd, buf, 1 << 16, (uintptr_t)buf, 1) == NULL)
			_exit(2);
		cq = wn_client_create_cq(c, 64, -1, 0);
		if (cq == NULL)
			_exit(3);
		memset(&qr, 0, sizeof(qr));
		qr.pd = pd;
		qr.send_cq = cq->handle;
		qr.recv_cq = cq->handle;
		qr.qp_type = WN_CTL_QPT_RC;
		qr.max_send_wr = 4;
		qr.max_recv_wr = 4;
		if (wn_client_create_qp(c, &qr) == NULL)
			_exit(4);
		struct wn_client_cm_channel *ch = wn_client_cm_channel_create(c);

		if (ch == NULL || wn_client_cm_create_id(c, ch, 1, &id) != 0)
			_exit(5);
		if (write(p[1], "k", 1) != 1)
			_exit(6);
		for (;;)
			pause();
	}
	close(p[1]);
	assert_int_equal(read(p[0], &ok, 1), 1);
	close(p[0]);
	stats(&st);
	assert_int_equal(st.clients, st0.clients + 1);
	assert_int_equal(st.qps, st0.qps + 1);
	assert_int_equal(st.mrs, st0.mrs + 1);
	assert_int_equal(st.cm_ids, st0.cm_ids + 1);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
	/* the server notices EOF on its own thread; wait for it (bounded) */
	for (i = 0; i < 500; i++) {
		stats(&st);
		if (st.clients == st0.clients)
			break;
		usleep(10000);
	}
	assert_int_equal(st.clients, st0.clients);
	assert_int_equal(st.pds, st0.pds);
	assert_int_equal(st.mrs, st0.mrs);
	assert_int_equal(st.cqs, st0.cqs);
	assert_int_equal(st.qps, st0.qps);
	assert_int_equal(st.channels, st0.channels);
	assert_int_equal(st.cm_ids, st0.cm_ids);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello_and_queries),
		cmocka_unit_test(test_no_daemon),
		cmocka_unit_test(test_late_answer),
		cmocka_unit_test(test_objects_lifetime),
		cmocka_unit_test(test_windows_and_frmr),
		cmocka_unit_test(test_mr_rereg),
		cmocka_unit_test(test_mr_sharing),
		cmocka_unit_test(test_mr_fork),
		cmocka_unit_test(test_mr_many_objects),
		cmocka_unit_test(test_mr_on_stack),
		cmocka_unit_test(test_mr_readonly_and_kernel),
		cmocka_unit_test(test_mr_truncated),
		cmocka_unit_test(test_mr_busy_writers),
		cmocka_unit_test(test_flush_on_error),
		cmocka_unit_test(test_ib_path),
		cmocka_unit_test(test_cq_clean),
		cmocka_unit_test(test_cm_no_dataplane),
		cmocka_unit_test(test_bad_requests),
		cmocka_unit_test(test_flooding_client),
		cmocka_unit_test(test_killed_client_reclaimed),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, setup, teardown);
}
