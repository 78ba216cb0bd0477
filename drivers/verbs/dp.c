/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data path of the verbs shim: the ctx->ops entries the verbs.h inlines jump through.
 * WQEs go into the shared SQ/RQ/SRQ rings and CQEs come from the CQ ring, in the layouts
 * of lib/queue (wn_queue.h). Until that ABI is available, posting fails with ENOSYS and
 * polling finds nothing, so control-path users (device queries, object lifetimes, CM)
 * work and data-path users get a clean error rather than silent loss.
 */
#include <errno.h>

#include <infiniband/verbs.h>

#include "verbs_priv.h"

int
wn_verbs_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	(void)cq;
	(void)wc;
	return n < 0 ? -1 : 0;
}

int
wn_verbs_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct wn_vcq *c = (struct wn_vcq *)cq;

	(void)solicited_only;
	c->armed = 1;
	return 0;
}

int
wn_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	(void)qp;
	*bad = wr;
	return ENOSYS;
}

int
wn_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)qp;
	*bad = wr;
	return ENOSYS;
}

int
wn_verbs_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)srq;
	*bad = wr;
	return ENOSYS;
}
