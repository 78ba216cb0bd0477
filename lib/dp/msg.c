/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp: messages to the control thread (lib/server, wn_server_dp.h): DONE for released
 * objects, CM events and async events, on the to_ctl ring (every shard produces) followed
 * by an eventfd
 * write.
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

static void
ctl_post(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	if (dp->c.to_ctl == NULL) {
		free(m); /* no control thread: nobody to tell (embedded applications only) */
		return;
	}
	/* several shards produce: the ring is multi-producer */
	if (rte_ring_enqueue(dp->c.to_ctl, m) != 0) {
		dp->st.ctl_drop++;
		free(m);
		return;
	}
	ctl_kick(dp);
}

void
dp_ctl_done(struct wn_dp *dp, uint32_t handle)
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
dp_cm_event(struct wn_dp *dp, uint32_t id, const struct wn_ctl_cm_event *ev)
{
	dp_cm_event_neg(dp, id, ev, 0, 0);
}

void
dp_cm_event_neg(struct wn_dp *dp, uint32_t id, const struct wn_ctl_cm_event *ev, uint32_t ird,
		uint32_t ord)
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
dp_async_event(struct wn_dp *dp, uint32_t handle, uint32_t event, uint32_t vendor_err)
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
