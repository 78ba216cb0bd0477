/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-ctl-cost: what one control request costs a program through the shim (issue 26's
 * connection set-up is a run of them). Times N pairs of each, one after the other, and prints
 * the time per request (half a pair):
 *   pd    ibv_alloc_pd + ibv_dealloc_pd
 *   cq    ibv_create_cq + ibv_destroy_cq (64 entries)
 *   qp    ibv_create_qp + ibv_destroy_qp (RC, 64 + 64 WRs, one CQ)
 *   mr    ibv_reg_mr + ibv_dereg_mr (4 KiB of malloc'd memory)
 *   id    rdma_create_id + rdma_destroy_id (RDMA_PS_TCP, one event channel)
 *
 *   wn-ctl-cost [-n N] [--json]        (default N 1000)
 *
 * Exit status 0, 1 when a request fails (the first device; WARPNIC_CTL picks the daemon).
 */
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
fail(const char *what)
{
	perror(what);
	return 1;
}

int
main(int argc, char **argv)
{
	struct ibv_qp_init_attr qa;
	struct rdma_event_channel *ch;
	struct ibv_device **devs;
	struct ibv_context *ctx;
	struct rdma_cm_id *id;
	struct ibv_pd *pd, *p;
	struct ibv_cq *cq, *q;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	double t, us[5];
	bool json = false;
	int n = 1000, i;
	void *buf;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			n = atoi(argv[++i]);
		else if (strcmp(argv[i], "--json") == 0)
			json = true;
		else {
			fprintf(stderr, "usage: wn-ctl-cost [-n N] [--json]\n");
			return 1;
		}
	}
	if (n <= 0)
		n = 1;
	devs = ibv_get_device_list(NULL);
	if (devs == NULL || devs[0] == NULL)
		return fail("no RDMA device");
	ctx = ibv_open_device(devs[0]);
	if (ctx == NULL)
		return fail("ibv_open_device");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	buf = calloc(1, 4096);
	ch = rdma_create_event_channel();
	if (pd == NULL || cq == NULL || buf == NULL || ch == NULL)
		return fail("set-up");

	t = now_us();
	for (i = 0; i < n; i++) {
		p = ibv_alloc_pd(ctx);
		if (p == NULL || ibv_dealloc_pd(p) != 0)
			return fail("pd");
	}
	us[0] = (now_us() - t) / (2.0 * n);
	t = now_us();
	for (i = 0; i < n; i++) {
		q = ibv_create_cq(ctx, 64, NULL, NULL, 0);
		if (q == NULL || ibv_destroy_cq(q) != 0)
			return fail("cq");
	}
	us[1] = (now_us() - t) / (2.0 * n);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = 64;
	qa.cap.max_recv_wr = 64;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	t = now_us();
	for (i = 0; i < n; i++) {
		qp = ibv_create_qp(pd, &qa);
		if (qp == NULL || ibv_destroy_qp(qp) != 0)
			return fail("qp");
	}
	us[2] = (now_us() - t) / (2.0 * n);
	t = now_us();
	for (i = 0; i < n; i++) {
		mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (mr == NULL || ibv_dereg_mr(mr) != 0)
			return fail("mr");
	}
	us[3] = (now_us() - t) / (2.0 * n);
	t = now_us();
	for (i = 0; i < n; i++) {
		if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0 || rdma_destroy_id(id) != 0)
			return fail("id");
	}
	us[4] = (now_us() - t) / (2.0 * n);

	if (json)
		printf("{\"n\": %d, \"pd_us\": %.2f, \"cq_us\": %.2f, \"qp_us\": %.2f, "
		       "\"mr_us\": %.2f, \"id_us\": %.2f}\n", n, us[0], us[1], us[2], us[3], us[4]);
	else
		printf("per request (%d pairs each): pd %.1f us, cq %.1f, qp %.1f, mr %.1f, "
		       "id %.1f\n", n, us[0], us[1], us[2], us[3], us[4]);
	rdma_destroy_event_channel(ch);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(devs);
	free(buf);
	return 0;
}
