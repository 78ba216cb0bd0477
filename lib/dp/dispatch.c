/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp: the control thread's messages. Shard 0 takes them from the to_dp ring: objects
 * (created in the table shared by the shards), MR deregistrations, and what concerns a QP
 * or a connection, which it forwards to the shard that owns it (fixed when it forwards the
 * CONNECT or ACCEPT); listens go to every shard, and the last shard to have put one in
 * place acknowledges it. Each shard then runs its own (wn_dp_local_msg).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <rte_hash.h>

#include "dp_priv.h"

/*
 * A LISTEN's acknowledgement, shared by the shards it went to (its obj): the last one to
 * have tried tells the control thread, which answers rdma_listen only then.
 */
struct listen_ack {
	atomic_uint left;  /* shards still to try */
	atomic_int status; /* the first failure (-errno), 0: none */
};

static void
listen_tried(struct wn_dp *dp, struct wn_server_dp_msg *m, int rc)
{
	struct listen_ack *a = m->obj;
	int none = 0;

	if (a == NULL)
		return;
	if (rc < 0)
		(void)atomic_compare_exchange_strong(&a->status, &none, rc);
	if (atomic_fetch_sub(&a->left, 1) == 1) {
		wn_dp_ctl_listening(dp, m->u.cm.id, atomic_load(&a->status));
		free(a);
	}
}

/* A message that cannot reach its shard: a LISTEN counts as tried, and failed. */
static void
msg_lost(struct wn_dp *dp, struct wn_server_dp_msg *m, int rc)
{
	dp->st.ctl_drop++;
	if (m->type == WN_SERVER_DP_CM_LISTEN)
		listen_tried(dp, m, rc);
}

static void
local_msg(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	dp->st.ctl_msgs++;
	switch (m->type) {
	case WN_SERVER_DP_QP_MODIFY: {
		struct dp_qp *qp = wn_dp_obj(dp, m->handle, DPO_QP);

		/* a UD QP's state is the program's to set (with its Q_Key) */
		if (qp != NULL && qp->ud != NULL) {
			wn_dp_qp_ud_modify(dp, qp, m->u.ud.state, m->u.ud.qkey);
			break;
		}
		/* RTS comes from the connection itself; Error tears it down and flushes */
		if (qp != NULL && m->u.qp_state == WN_CTL_QPS_ERR) {
			if (qp->conn != NULL)
				wn_dp_conn_qp_gone(dp, qp->conn, false);
			wn_dp_qp_disconnect(dp, qp);
		} else if (qp != NULL && m->u.qp_state == WN_CTL_QPS_RESET &&
			   (qp->conn != NULL ? wn_cm_is_ib(&qp->conn->ep) : qp->eng != NULL)) {
			/*
			 * Back to RESET after a connection (or an InfiniBand-style one under
			 * way): the engine goes, the rings are emptied, and the QP may be
			 * connected again (a QP an rdma_cm id carries keeps it: its id owns it)
			 */
			if (qp->conn != NULL) {
				qp->conn->ib_qp = 0; /* its end is no Error to report */
				wn_dp_conn_qp_gone(dp, qp->conn, false);
			}
			wn_dp_qp_reset(dp, qp);
		}
		break;
	}
	case WN_SERVER_DP_QP_IB:
		wn_dp_qp_ib(dp, m);
		break;
	case WN_SERVER_DP_QP_DESTROY: {
		/* shard 0 took it out of the table and put the QP in m->obj */
		struct dp_qp *qp = m->obj;

		if (qp->conn != NULL)
			wn_dp_conn_qp_gone(dp, qp->conn, true);
		wn_dp_obj_qp_destroy(dp, qp);
		break;
	}
	case WN_SERVER_DP_CM_LISTEN:
		listen_tried(dp, m, wn_dp_cm_msg(dp, m));
		break;
	default:
		(void)wn_dp_cm_msg(dp, m);
		break;
	}
	free(m);
}

void
wn_dp_local_msg(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	local_msg(dp, m);
}

/* ---------------------------------------------------------------- shard 0: dispatch */

static void
forward(struct wn_dp *dp, uint16_t to, struct wn_server_dp_msg *m)
{
	struct wn_dp_group *g = dp->g;

	if (to >= g->n)
		to = 0;
	if (to == dp->idx) {
		local_msg(dp, m);
		return;
	}
	/* a full ring: the message waits in order (dp_msgq), flushed by every poll */
	if (wn_dp_msgq_post(dp, &dp->fwd_wait[to], g->shard[to]->ctl, m) < 0) {
		DP_LOG(ERR, "shard %u control ring full, no memory: message %u dropped\n", to,
		       m->type);
		msg_lost(dp, m, -ENOBUFS);
		free(m);
		return;
	}
	wn_dp_wake(g, to);
}

static void
broadcast(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	for (uint16_t i = 1; i < dp->g->n; i++) {
		struct wn_server_dp_msg *c = malloc(sizeof(*c));

		if (c == NULL) {
			msg_lost(dp, m, -ENOMEM);
			continue;
		}
		*c = *m;
		forward(dp, i, c);
	}
	forward(dp, 0, m);
}

static void
owner_set(struct wn_dp *dp, uint32_t id, uint16_t shard)
{
	uintptr_t v = shard;

	if (id != 0)
		(void)rte_hash_add_key_data(dp->g->cm_owner, &id, (void *)v);
}

/* Shard of CM id @p id (or of passive key @p conn); DP_OWNER_LISTEN for a listener. */
static uint16_t
owner_get(struct wn_dp *dp, uint32_t id, uint32_t conn)
{
	void *v;

	if (id != 0 && rte_hash_lookup_data(dp->g->cm_owner, &id, &v) >= 0)
		return (uint16_t)(uintptr_t)v;
	return conn != 0 ? dp_token_shard(conn) : 0;
}

static void
qp_owner_set(struct wn_dp *dp, uint32_t handle, uint16_t shard)
{
	struct dp_qp *qp = handle != 0 ? wn_dp_obj(dp, handle, DPO_QP) : NULL;

	if (qp != NULL)
		qp->owner = shard;
}

void
wn_dp_dispatch(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	struct wn_dp_group *g = dp->g;
	uint16_t to;

	switch (m->type) {
	case WN_SERVER_DP_MR_REG:
		break; /* regions live in the shared lib/mem table */
	case WN_SERVER_DP_MR_DEREG: {
		const struct wn_server_dp_mr *mr = m->obj;

		/* lib/mem's grace period already passed; zero-copy mbufs may still hold pages */
		wn_dp_zc_dereg(dp, m->handle, mr->stag, mr->stag_pins);
		break;
	}
	case WN_SERVER_DP_CQ_CREATE:
		wn_dp_obj_cq_create(dp, m->obj);
		break;
	case WN_SERVER_DP_SRQ_CREATE:
		wn_dp_srq_create(dp, m->obj);
		break;
	case WN_SERVER_DP_QP_CREATE:
		wn_dp_obj_qp_create(dp, m->obj);
		break;
	case WN_SERVER_DP_CQ_DESTROY:
		wn_dp_queue_destroy(dp, m->handle, DPO_CQ);
		break;
	case WN_SERVER_DP_SRQ_DESTROY:
		wn_dp_queue_destroy(dp, m->handle, DPO_SRQ);
		break;
	case WN_SERVER_DP_QP_MODIFY: {
		struct dp_qp *qp = wn_dp_obj(dp, m->handle, DPO_QP);

		if (qp == NULL)
			break;
		forward(dp, qp->owner == DP_NO_OWNER ? 0 : qp->owner, m);
		return;
	}
	case WN_SERVER_DP_QP_IB:
		/* InfiniBand-style connections live on shard 0 (dp_steer.c) */
		qp_owner_set(dp, m->handle, 0);
		forward(dp, 0, m);
		return;
	case WN_SERVER_DP_QP_DESTROY: {
		struct dp_qp *qp = wn_dp_qp_unlink(dp, m->handle);

		if (qp == NULL) {
			wn_dp_ctl_done(dp, m->handle);
			break;
		}
		m->obj = qp;
		forward(dp, qp->owner == DP_NO_OWNER ? 0 : qp->owner, m);
		return;
	}
	case WN_SERVER_DP_CM_LISTEN: {
		struct listen_ack *a = malloc(sizeof(*a));

		if (a == NULL) {
			wn_dp_ctl_listening(dp, m->u.cm.id, -ENOMEM);
			break;
		}
		atomic_init(&a->left, m->u.cm.ps == WN_CTL_PS_UDP ? 1u : g->n);
		atomic_init(&a->status, 0);
		m->obj = a;
		if (m->u.cm.ps == WN_CTL_PS_UDP) {
			/* rdma_cm's UDP port space lives on shard 0 with the UD QPs (dp_ud.c) */
			owner_set(dp, m->u.cm.id, 0);
			forward(dp, 0, m);
			return;
		}
		owner_set(dp, m->u.cm.id, DP_OWNER_LISTEN);
		broadcast(dp, m);
		return;
	}
	case WN_SERVER_DP_CM_CONNECT:
		to = m->u.cm.ps == WN_CTL_PS_UDP ? 0 : wn_dp_steer(g, &m->u.cm.src, &m->u.cm.dst);
		owner_set(dp, m->u.cm.id, to);
		qp_owner_set(dp, m->u.cm.qp, to);
		forward(dp, to, m);
		return;
	case WN_SERVER_DP_CM_ACCEPT:
		to = dp_token_shard(m->u.cm.conn);
		owner_set(dp, m->u.cm.id, to);
		qp_owner_set(dp, m->u.cm.qp, to);
		forward(dp, to, m);
		return;
	case WN_SERVER_DP_CM_REJECT:
	case WN_SERVER_DP_CM_DISCONNECT:
		forward(dp, owner_get(dp, m->u.cm.id, m->u.cm.conn), m);
		return;
	case WN_SERVER_DP_CM_DESTROY:
		to = owner_get(dp, m->u.cm.id, m->u.cm.conn);
		rte_hash_del_key(g->cm_owner, &m->u.cm.id);
		if (to == DP_OWNER_LISTEN)
			broadcast(dp, m);
		else
			forward(dp, to, m);
		return;
	default:
		DP_LOG(WARNING, "unknown control message %u\n", m->type);
		break;
	}
	free(m);
}

