/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp: messages to the control thread (lib/server, wn_server_dp.h): DONE for released
 * objects, CM events and async events, on the to_ctl ring (every shard produces) followed
 * by an eventfd write. A full ring makes a message wait, in order, in the shard's queue
 * (struct dp_msgq, also used by dispatch.c for the shards' rings): a burst of thousands of
 * connections ending at once loses no event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dp_priv.h"

static void
ctl_kick(struct wn_dp *dp)
{
	uint64_t one = 1;

	if (write(dp->c.ctl_efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		DP_LOG(ERR, "control eventfd: %s\n", strerror(errno));
}

int
wn_dp_msgq_post(struct wn_dp *dp, struct dp_msgq *q, struct rte_ring *r, void *m)
{
	void **nv;
	uint32_t ncap, i;

	if (q->len == 0 && rte_ring_enqueue(r, m) == 0)
		return 1;
	if (q->len == q->cap) {
		ncap = q->cap == 0 ? 64 : 2 * q->cap;
		nv = malloc(ncap * sizeof(*nv));
		if (nv == NULL)
			return -ENOMEM;
		for (i = 0; i < q->len; i++)
			nv[i] = q->v[(q->head + i) % q->cap];
		free(q->v);
		q->v = nv;
		q->head = 0;
		q->cap = ncap;
	}
	q->v[(q->head + q->len) % q->cap] = m;
	q->len++;
	dp->st.ctl_waited++;
	(void)wn_dp_msgq_flush(q, r);
	return 0;
}

unsigned int
wn_dp_msgq_flush(struct dp_msgq *q, struct rte_ring *r)
{
	unsigned int n = 0;

	while (q->len > 0 && rte_ring_enqueue(r, q->v[q->head]) == 0) {
		q->head = (q->head + 1) % q->cap;
		q->len--;
		n++;
	}
	return n;
}

void
wn_dp_msgq_free(struct dp_msgq *q)
{
	while (q->len > 0) {
		free(q->v[q->head]);
		q->head = (q->head + 1) % q->cap;
		q->len--;
	}
	free(q->v);
	*q = (struct dp_msgq){0};
}

unsigned int
wn_dp_ctl_flush(struct wn_dp *dp)
{
	unsigned int n;

	if (dp->ctl_wait.len == 0)
		return 0;
	n = wn_dp_msgq_flush(&dp->ctl_wait, dp->c.to_ctl);
	if (n > 0)
		ctl_kick(dp);
	return n;
}

bool
wn_dp_msgs_waiting(const struct wn_dp *dp)
{
	if (dp->ctl_wait.len > 0)
		return true;
	for (uint16_t i = 0; i < DP_MAX_SHARDS; i++)
		if (dp->fwd_wait[i].len > 0)
			return true;
	return false;
}

static void
ctl_post(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	int ret;

	if (dp->c.to_ctl == NULL) {
		free(m); /* no control thread: nobody to tell (embedded applications only) */
		return;
	}
	/* several shards produce: the ring is multi-producer */
	ret = wn_dp_msgq_post(dp, &dp->ctl_wait, dp->c.to_ctl, m);
	if (ret < 0) {
		dp->st.ctl_drop++;
		free(m);
		return;
	}
	ctl_kick(dp);
}

void
wn_dp_ctl_done(struct wn_dp *dp, uint32_t handle)
{
	struct wn_server_dp_msg *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		dp->st.ctl_drop++;
		return;
	}
	m->type = WN_SERVER_DP_DONE;
	m->handle = handle;
	ctl_post(dp, m);
}

void
wn_dp_ctl_listening(struct wn_dp *dp, uint32_t id, int status)
{
	struct wn_server_dp_msg *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		dp->st.ctl_drop++;
		return;
	}
	m->type = WN_SERVER_DP_CM_LISTENING;
	m->handle = id;
	m->u.cm.id = id;
	m->u.cm.ev.status = status;
	ctl_post(dp, m);
}

void
wn_dp_cm_event_post(struct wn_dp *dp, uint32_t id, const struct wn_ctl_cm_event *ev)
{
	wn_dp_cm_event_post_neg(dp, id, ev, 0, 0);
}

void
wn_dp_cm_event_post_neg(struct wn_dp *dp, uint32_t id, const struct wn_ctl_cm_event *ev,
			uint32_t ird, uint32_t ord)
{
	struct wn_server_dp_msg *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		dp->st.ctl_drop++;
		return;
	}
	m->type = WN_SERVER_DP_CM_EVENT;
	m->handle = id;
	m->u.cm.id = id;
	m->u.cm.ev = *ev;
	m->u.cm.ev.id = id;
	m->u.cm.param.ird = ird;
	m->u.cm.param.ord = ord;
	dp->st.cm_events++;
	ctl_post(dp, m);
}

void
wn_dp_async_event(struct wn_dp *dp, uint32_t handle, uint32_t event, uint32_t vendor_err)
{
	struct wn_server_dp_msg *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		dp->st.ctl_drop++;
		return;
	}
	m->type = WN_SERVER_DP_ASYNC_EVENT;
	m->handle = handle;
	m->u.async.event = event;
	m->u.async.vendor_err = vendor_err;
	dp->st.async_events++;
	ctl_post(dp, m);
}

void
wn_dp_qp_error(struct wn_dp *dp, uint32_t handle)
{
	struct wn_server_dp_msg *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		dp->st.ctl_drop++;
		return;
	}
	m->type = WN_SERVER_DP_QP_ERROR;
	m->handle = handle;
	m->u.qp_state = WN_CTL_QPS_ERR;
	ctl_post(dp, m);
}
