/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnicd dataplane connections: the connection manager (listen, connect, accept,
 * reject, disconnect) and the glue TCP ↔ MPA (startup + Full Operation) ↔ RDMAP/DDP
 * engine of one iWARP stream (dp.h).
 *
 * Life of a connection:
 *   active:  CM_CONNECT → TCP SYN → established → MPA Request → Reply → RDMA mode
 *            (ESTABLISHED event) → [RTR if peer-to-peer] → data
 *   passive: listener accepts TCP → MPA Request → CONNECT_REQUEST event → CM_ACCEPT →
 *            Reply → RDMA mode (ESTABLISHED) → first FPDU from the initiator → data
 * The last CM event of a connection (REJECTED, CONNECT_ERROR, UNREACHABLE or
 * DISCONNECTED) is sent once; the connection is freed after TCP's closed event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_log.h>

#include "dp.h"

#define CONN_LOG(lvl, ...) rte_log(RTE_LOG_##lvl, RTE_LOGTYPE_USER1, "warpnicd cm: " __VA_ARGS__)

/* Startup timer and deferred frees run at most this often. */
#define TICK_US 1000u

static const struct wn_tcp_cb conn_cb;
static const struct wn_tcp_cb listen_cb;

/* ---------------------------------------------------------------- addresses */

static void
addr_of(const struct wn_tcp_endpoint *e, struct wn_ctl_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (e->addr.family == WN_AF_INET6) {
		a->family = WN_CTL_AF_INET6;
		memcpy(a->addr, e->addr.v6, 16);
	} else {
		a->family = WN_CTL_AF_INET;
		memcpy(a->addr, &e->addr.v4, 4);
	}
	a->port = e->port;
}

/* ---------------------------------------------------------------- CM table */

static int
cm_add(struct wn_dp *dp, uint32_t key, void *o)
{
	return rte_hash_add_key_data(dp->cm, &key, o);
}

static void *
cm_get(struct wn_dp *dp, uint32_t key)
{
	void *p;

	if (key == 0 || rte_hash_lookup_data(dp->cm, &key, &p) < 0)
		return NULL;
	return p;
}

static void
cm_del(struct wn_dp *dp, uint32_t key)
{
	if (key != 0)
		rte_hash_del_key(dp->cm, &key);
}

/* A passive connection's key while it has no CM id: high bit set, never a handle. */
static uint32_t
token_new(struct wn_dp *dp)
{
	uint32_t t;

	/* bits 30..24: the shard, so shard 0 can route messages about it */
	do {
		t = 0x80000000u | (uint32_t)dp->idx << 24 | (dp->next_token++ & 0xffffffu);
	} while (cm_get(dp, t) != NULL);
	return t;
}

/* ---------------------------------------------------------------- events */

static void
conn_event(struct dp_conn *c, uint32_t type, int32_t status, const struct wn_ctl_conn_param *p)
{
	struct wn_ctl_cm_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.event = type;
	ev.status = status;
	ev.src = c->src;
	ev.dst = c->dst;
	if (p != NULL)
		ev.param = *p;
	if (c->id != 0)
		dp_cm_event(c->dp, c->id, &ev);
}

/* The final CM event of @p c, once. */
static void
conn_final(struct dp_conn *c, uint32_t type, int32_t status, const struct wn_ctl_conn_param *p)
{
	if (c->cm_done)
		return;
	c->cm_done = true;
	if (c->id == 0)
		return; /* a request the ULP never saw, or already destroyed */
	conn_event(c, type, status, p);
}

static void
param_of_frame(const struct wn_mpa_frame *f, struct wn_ctl_conn_param *p)
{
	memset(p, 0, sizeof(*p));
	if (f == NULL)
		return;
	p->pd_len = RTE_MIN((uint32_t)f->pd_len, (uint32_t)WN_CTL_PD_MAX);
	if (p->pd_len > 0)
		memcpy(p->pd, f->pd, p->pd_len);
	/* an unenhanced peer announces nothing: it is bounded by our own limits only */
	p->ird = f->enhanced ? f->ird : 0x3fff;
	p->ord = f->enhanced ? f->ord : 0x3fff;
}

/* ---------------------------------------------------------------- teardown */

static void
conn_detach_qp(struct dp_conn *c)
{
	struct dp_qp *qp = c->qp;

	c->qp = NULL;
	if (qp != NULL && qp->conn == c)
		dp_qp_disconnect(c->dp, qp);
	else if (qp != NULL)
		qp->conn = NULL;
}

/* Close TCP gracefully (FIN after what is queued). */
static void
conn_close(struct dp_conn *c)
{
	c->tx_ok = false;
	if (c->st < DPC_CLOSING)
		c->st = DPC_CLOSING;
	if (c->tcp != NULL)
		(void)wn_tcp_close(c->tcp);
}

/* Protocol failure: abort TCP (RST), flush the QP, final event. */
static void
conn_fail(struct dp_conn *c, const char *why)
{
	CONN_LOG(NOTICE, "connection id %u: %s\n", c->id, why);
	c->dp->st.mpa_errors++;
	if (c->established_sent)
		conn_final(c, WN_CTL_CM_EV_DISCONNECTED, -ECONNRESET, NULL);
	else if (c->active)
		conn_final(c, WN_CTL_CM_EV_CONNECT_ERROR, -EPROTO, NULL);
	else
		conn_final(c, WN_CTL_CM_EV_DISCONNECTED, -EPROTO, NULL);
	conn_detach_qp(c);
	c->tx_ok = false;
	if (c->tcp != NULL)
		wn_tcp_abort(c->tcp); /* closed event: st = DEAD */
}

void
dp_conn_close(struct dp_conn *c)
{
	conn_close(c);
}

void
dp_conn_qp_gone(struct wn_dp *dp, struct dp_conn *c, bool abort)
{
	(void)dp;
	c->qp = NULL;
	c->tx_ok = false;
	if (c->established_sent && !abort)
		conn_final(c, WN_CTL_CM_EV_DISCONNECTED, 0, NULL);
	if (c->tcp == NULL)
		return;
	if (abort)
		wn_tcp_abort(c->tcp);
	else
		conn_close(c);
}

/* ---------------------------------------------------------------- MPA */

static void
conn_flush_startup(struct dp_conn *c)
{
	uint8_t buf[WN_MPA_FRAME_MAX];

	while (c->tcp != NULL && wn_mpa_conn_output_pending(&c->mpa) > 0) {
		uint32_t space = wn_tcp_send_space(c->tcp);
		size_t n;

		if (space == 0)
			break;
		n = wn_mpa_conn_output(&c->mpa, buf, RTE_MIN((size_t)space, sizeof(buf)));
		if (n == 0 || wn_tcp_send(c->tcp, buf, (uint32_t)n) != (int)n) {
			conn_fail(c, "TCP refused the MPA startup frame");
			return;
		}
	}
	/* FPDUs are records (RFC 5044 Appendix A), once the startup frame is queued whole */
	if (c->tcp != NULL && c->st == DPC_FULL && !c->record_mode &&
	    wn_mpa_conn_output_pending(&c->mpa) == 0) {
		if (wn_tcp_set_mode(c->tcp, WN_TCP_MODE_RECORD) != 0) {
			conn_fail(c, "record mode refused");
			return;
		}
		c->record_mode = true;
	}
}

static uint32_t
conn_mulpdu(const struct dp_conn *c)
{
	uint32_t m = wn_mpa_mulpdu(wn_tcp_emss(c->tcp), c->mpa.params.tx.markers);

	return RTE_MIN(RTE_MAX(m, (uint32_t)WN_RNIC_MULPDU_MIN), (uint32_t)WN_RNIC_MULPDU_MAX);
}

/* Full Operation begins: the QP enters RDMA mode. */
static void
conn_rdma_mode(struct dp_conn *c, const struct wn_mpa_event *ev)
{
	const struct wn_mpa_params *p = ev->params;
	struct wn_ctl_conn_param cp;
	uint32_t rtr_recv = 0;
	int ret;

	if (c->rxbuf == NULL) {
		c->rxbuf = malloc(WN_MPA_ULPDU_MAX);
		c->gather.buf = c->rxbuf;
		c->txcap = WN_MPA_ULPDU_MAX + 1024;
		c->txbuf = malloc(c->txcap);
		if (c->rxbuf == NULL || c->txbuf == NULL) {
			conn_fail(c, "out of memory");
			return;
		}
	}
	if (c->qp == NULL) {
		conn_fail(c, "no QP bound to the connection");
		return;
	}
	c->mulpdu = conn_mulpdu(c);
	if (!c->active && p->neg.p2p)
		rtr_recv = p->neg.rtr; /* RFC 6581 §9.2: absorbed, no CQE */
	ret = dp_qp_engine(c->dp, c->qp, c, c->mulpdu, p->neg.ird, p->neg.ord, rtr_recv);
	if (ret != 0 || wn_rnic_qp_start(c->qp->eng) != 0) {
		conn_fail(c, "QP engine refused");
		return;
	}
	c->st = DPC_FULL;
	c->dp->st.conns_established++;
	param_of_frame(wn_mpa_conn_peer_frame(&c->mpa), &cp);
	if (!c->active)
		cp.pd_len = 0; /* the responder's application saw the Request already */
	c->established_sent = true;
	{
		struct wn_ctl_cm_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.event = WN_CTL_CM_EV_ESTABLISHED;
		ev.src = c->src;
		ev.dst = c->dst;
		ev.param = cp;
		dp_cm_event_neg(c->dp, c->id, &ev, RTE_MAX(p->neg.ird, 1u),
				RTE_MAX(p->neg.ord, 1u));
	}
	conn_flush_startup(c);
}

static void
mpa_event(void *arg, const struct wn_mpa_event *ev)
{
	struct dp_conn *c = arg;
	struct wn_ctl_conn_param cp;

	switch (ev->type) {
	case WN_MPA_EV_REQUEST: {
		struct wn_ctl_cm_event e;

		c->st = DPC_REQ;
		c->token = token_new(c->dp);
		if (cm_add(c->dp, c->token, c) < 0) {
			conn_fail(c, "CM table full");
			return;
		}
		memset(&e, 0, sizeof(e));
		e.event = WN_CTL_CM_EV_CONNECT_REQUEST;
		e.listen_id = c->listen_id;
		e.src = c->src;
		e.dst = c->dst;
		param_of_frame(ev->frame, &e.param);
		/* dp_cm_event() puts the key in ev.id; the control thread allocates the id */
		dp_cm_event(c->dp, c->token, &e);
		break;
	}
	case WN_MPA_EV_ESTABLISHED:
		conn_rdma_mode(c, ev);
		break;
	case WN_MPA_EV_TX_READY:
		if (c->st != DPC_FULL)
			break;
		c->tx_ok = true;
		if (c->active && ev->params->neg.p2p && ev->params->neg.rtr != 0 &&
		    c->qp != NULL && c->qp->eng != NULL &&
		    wn_rnic_send_rtr(c->qp->eng, ev->params->neg.rtr) != 0)
			conn_fail(c, "RTR could not be sent");
		break;
	case WN_MPA_EV_REJECTED:
		c->dp->st.conns_rejected++;
		param_of_frame(ev->frame, &cp);
		conn_final(c, WN_CTL_CM_EV_REJECTED, -ECONNREFUSED, &cp);
		conn_detach_qp(c);
		conn_close(c);
		break;
	case WN_MPA_EV_ERROR:
		if (ev->err == WN_MPA_ERR_CRC)
			c->dp->st.mpa_crc_errors++;
		/*
		 * A responder whose RFC 6581 negotiation failed has queued a Reject carrying
		 * its requirements: send it, then close. Everything else resets.
		 */
		if (!c->active && wn_mpa_conn_output_pending(&c->mpa) > 0) {
			conn_flush_startup(c);
			c->dp->st.mpa_errors++;
			conn_final(c, WN_CTL_CM_EV_DISCONNECTED, -ECONNREFUSED, NULL);
			conn_detach_qp(c);
			conn_close(c);
			break;
		}
		if (c->active && !c->established_sent && ev->err == WN_MPA_ERR_INSUFFICIENT_IRD) {
			c->dp->st.mpa_errors++;
			param_of_frame(ev->frame, &cp);
			conn_final(c, WN_CTL_CM_EV_REJECTED, -ECONNREFUSED, &cp);
			conn_detach_qp(c);
			conn_close(c);
			break;
		}
		/*
		 * RFC 5044 §8 / RFC 5040 §7.1: in RDMA mode an MPA error is reported to the
		 * peer with a Terminate (Layer LLP, EType MPA, the error code) before the
		 * stream is closed; the engine sends it first and TERM_SENT closes TCP.
		 */
		if (ev->send_terminate && c->st == DPC_FULL && c->qp != NULL &&
		    c->qp->eng != NULL &&
		    wn_rnic_terminate(c->qp->eng, WN_TERM_LAYER_LLP, WN_TERM_LLP_MPA,
				      (uint8_t)ev->err) == 0) {
			CONN_LOG(NOTICE, "connection id %u: MPA %s: Terminate\n", c->id,
				 wn_mpa_err_str(ev->err));
			c->dp->st.mpa_errors++;
			c->tx_ok = c->record_mode;
			break;
		}
		conn_fail(c, ev->reason != NULL ? ev->reason : wn_mpa_err_str(ev->err));
		break;
	}
}

/* A whole ULPDU whose CRC was checked (wn_mpa_gather_ops): to the QP's engine. */
static int
conn_ulpdu(void *arg, const uint8_t *ulpdu, uint16_t len, enum wn_mpa_err verdict)
{
	struct dp_conn *c = arg;

	if (verdict != WN_MPA_ERR_NONE)
		return 0; /* reported through the connection's ERROR event */
	c->dp->st.rx_fpdus++;
	if (c->qp != NULL && c->qp->eng != NULL)
		(void)wn_rnic_rx(c->qp->eng, ulpdu, len);
	return 0;
}

static int
conn_mpa_start(struct dp_conn *c)
{
	struct wn_dp *dp = c->dp;
	struct wn_mpa_conn_cfg cfg;
	struct wn_tcp_info ti;

	wn_tcp_conn_info(c->tcp, &ti);
	memset(&cfg, 0, sizeof(cfg));
	cfg.initiator = c->active;
	cfg.rev = dp->c.mpa_rev;
	cfg.markers = dp->c.markers;
	cfg.crc = dp->c.crc;
	cfg.caps.ird = (uint16_t)RTE_MIN(c->param.ird, 0x3fffu);
	cfg.caps.ord = (uint16_t)RTE_MIN(c->param.ord, 0x3fffu);
	cfg.caps.p2p = c->active && dp->c.p2p;
	cfg.caps.rtr = dp->c.rtr;
	if (c->active) {
		cfg.pd = c->param.pd;
		cfg.pd_len = (uint16_t)c->param.pd_len;
	}
	cfg.tx_seq = wn_tcp_next_seq(c->tcp);
	cfg.rx_seq = ti.irs + 1;
	cfg.timeout_us = dp->c.mpa_timeout_us;
	c->gather.done = conn_ulpdu;
	c->gather.arg = c;
	cfg.rx_ops = &wn_mpa_gather_ops;
	cfg.rx_arg = &c->gather;
	cfg.rx_hdr_len = 2;
	cfg.check_markers = true;
	cfg.check_rtr = true;
	cfg.event = mpa_event;
	cfg.event_arg = c;
	if (wn_mpa_conn_init(&c->mpa, &cfg) != 0 || wn_mpa_conn_start(&c->mpa, dp->now) != 0)
		return -EINVAL;
	c->mpa_started = true;
	c->st = DPC_MPA;
	conn_flush_startup(c);
	return 0;
}

/* In-order stream octets: MPA startup frames, then FPDUs. */
static void
conn_input(struct dp_conn *c)
{
	const uint8_t *p;
	uint32_t n;

	while (c->tcp != NULL && c->mpa_started && (n = wn_tcp_recv_peek(c->tcp, &p)) > 0) {
		size_t used = 0;
		int rc = wn_mpa_conn_input(&c->mpa, p, n, c->dp->now, &used);

		if (c->tcp == NULL)
			return; /* aborted from an event */
		if (used > 0)
			(void)wn_tcp_recv_consume(c->tcp, (uint32_t)used);
		if (rc < 0 || used < n)
			break;
	}
	if (c->tcp != NULL)
		conn_flush_startup(c);
}

/* ---------------------------------------------------------------- engine output */

int
dp_conn_tx(void *arg, const struct wn_rnic_ulpdu *u)
{
	struct dp_conn *c = arg;
	struct iovec iov[WN_RNIC_MAX_IOV + 1];
	const struct wn_mpa_params *p;
	size_t need;
	int w, ret;
	unsigned int i;

	if (c == NULL || c->tcp == NULL || !c->tx_ok || !c->record_mode)
		return -EAGAIN;
	p = wn_mpa_conn_params(&c->mpa);
	if (c->dp->zc_on && u->src != WN_RNIC_SRC_NONE && u->n_iov > 0 &&
	    u->msg_len >= c->dp->c.zero_copy_min && c->mpa.state == WN_MPA_CONN_FULL &&
	    wn_mpa_conn_tx_allowed(&c->mpa)) {
		ret = dp_zc_tx(c, u, &p->tx);
		if (ret == -EAGAIN)
			c->dp->st.tx_again++;
		if (ret != -ENOTSUP)
			return ret;
		/* this FPDU cannot go zero-copy: copy it */
	}
	need = wn_mpa_fpdu_wire_len(c->mpa.tx_next, p->tx.seq_start, p->tx.markers, u->len);
	if (need > wn_tcp_send_space(c->tcp) || need > c->txcap) {
		c->dp->st.tx_again++;
		return -EAGAIN;
	}
	iov[0].iov_base = (void *)(uintptr_t)u->hdr;
	iov[0].iov_len = u->hdr_len;
	for (i = 0; i < u->n_iov; i++) {
		iov[i + 1].iov_base = (void *)(uintptr_t)u->iov[i].base;
		iov[i + 1].iov_len = u->iov[i].len;
	}
	w = wn_mpa_conn_frame(&c->mpa, iov, u->n_iov + 1u, c->txbuf, c->txcap);
	if (w < 0) {
		c->dp->st.tx_again++;
		return -EAGAIN;
	}
	ret = wn_tcp_send_record(c->tcp, c->txbuf, (uint32_t)w);
	if (ret != 0) {
		/* not sent: the next FPDU starts where this one would have */
		c->mpa.tx_next -= (uint32_t)w;
		c->dp->st.tx_again++;
		return -EAGAIN;
	}
	c->dp->st.tx_fpdus++;
	if (u->n_iov > 0) {
		c->dp->st.copy_fpdus++;
		c->dp->st.copy_bytes += u->len - u->hdr_len;
	}
	return 0;
}

/* ---------------------------------------------------------------- TCP callbacks */

static struct dp_conn *
conn_new(struct wn_dp *dp)
{
	struct dp_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->kind = DPO_CONN;
	c->dp = dp;
	TAILQ_INSERT_TAIL(&dp->conns, c, next);
	return c;
}

static int
conn_established(struct wn_tcp_conn *tc, void *arg)
{
	struct dp_conn *c = arg;

	c->tcp = tc;
	if (conn_mpa_start(c) != 0) {
		conn_fail(c, "MPA start failed");
		return 0;
	}
	return 0;
}

static int
listen_established(struct wn_tcp_conn *tc, void *arg)
{
	struct dp_listen *l = arg;
	struct dp_conn *c = conn_new(l->dp);
	struct wn_tcp_info ti;

	if (c == NULL)
		return -ENOMEM; /* refused: reset */
	l->dp->st.conns_passive++;
	c->listen_id = l->id;
	c->tcp = tc;
	wn_tcp_conn_info(tc, &ti);
	addr_of(&ti.local, &c->src);
	addr_of(&ti.remote, &c->dst);
	/* the responder's IRD/ORD come with the accept; the Request is judged then */
	wn_tcp_conn_set_arg(tc, c);
	wn_tcp_conn_set_cb(tc, &conn_cb);
	if (conn_mpa_start(c) != 0) {
		conn_fail(c, "MPA start failed");
		return 0;
	}
	return 0;
}

static void
conn_recv(struct wn_tcp_conn *tc, void *arg)
{
	(void)tc;
	conn_input(arg);
}

static void
conn_eof(struct wn_tcp_conn *tc, void *arg)
{
	struct dp_conn *c = arg;

	(void)tc;
	conn_input(c);
	/* the peer closed its side: the stream is over (RFC 5044 §7.1.2, RFC 5040 §6.3) */
	if (c->established_sent)
		conn_final(c, WN_CTL_CM_EV_DISCONNECTED, 0, NULL);
	else if (c->active)
		conn_final(c, WN_CTL_CM_EV_CONNECT_ERROR, -ECONNRESET, NULL);
	else
		conn_final(c, WN_CTL_CM_EV_DISCONNECTED, -ECONNRESET, NULL);
	conn_detach_qp(c);
	conn_close(c);
}

static void
conn_emss(struct wn_tcp_conn *tc, void *arg, uint16_t emss)
{
	struct dp_conn *c = arg;

	(void)tc;
	(void)emss;
	if (c->st == DPC_FULL && c->qp != NULL && c->qp->eng != NULL) {
		c->mulpdu = conn_mulpdu(c);
		(void)wn_rnic_set_mulpdu(c->qp->eng, c->mulpdu);
	}
}

static void
conn_closed(struct wn_tcp_conn *tc, void *arg, enum wn_tcp_close_reason why)
{
	struct dp_conn *c = arg;

	(void)tc;
	c->tcp = NULL;
	c->tx_ok = false;
	if (c->active && !c->established_sent) {
		c->dp->st.conns_failed++;
		if (why == WN_TCP_CLOSE_REFUSED)
			conn_final(c, WN_CTL_CM_EV_REJECTED, -ECONNREFUSED, NULL);
		else if (why == WN_TCP_CLOSE_TIMEOUT)
			conn_final(c, WN_CTL_CM_EV_UNREACHABLE, -ETIMEDOUT, NULL);
		else
			conn_final(c, WN_CTL_CM_EV_CONNECT_ERROR, -ECONNRESET, NULL);
	} else {
		conn_final(c, WN_CTL_CM_EV_DISCONNECTED,
			   why == WN_TCP_CLOSE_NORMAL ? 0 : -ECONNRESET, NULL);
	}
	conn_detach_qp(c);
	cm_del(c->dp, c->id);
	cm_del(c->dp, c->token);
	c->id = 0;
	c->token = 0;
	c->st = DPC_DEAD;
}

static void
listen_closed(struct wn_tcp_conn *tc, void *arg, enum wn_tcp_close_reason why)
{
	/* a connection that died before it was established: nothing of ours exists */
	(void)tc;
	(void)arg;
	(void)why;
}

static const struct wn_tcp_cb conn_cb = {
	.established = conn_established,
	.recv = conn_recv,
	.eof = conn_eof,
	.emss = conn_emss,
	.closed = conn_closed,
};

static const struct wn_tcp_cb listen_cb = {
	.established = listen_established,
	.closed = listen_closed,
};

/* ---------------------------------------------------------------- CM messages */

static void
cm_listen(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	struct dp_listen *l = calloc(1, sizeof(*l));
	struct wn_tcp_endpoint ep;

	if (l == NULL)
		return;
	l->kind = DPO_LISTEN;
	l->id = m->u.cm.id;
	l->src = m->u.cm.src;
	l->dp = dp;
	dp_ep_of(&m->u.cm.src, &ep);
	l->l = wn_tcp_listen(dp->tcp, &ep, &listen_cb, l);
	if (l->l == NULL || cm_add(dp, l->id, l) < 0) {
		CONN_LOG(ERR, "listen on port %u: %s\n", ep.port, strerror(errno));
		if (l->l != NULL)
			wn_tcp_unlisten(l->l);
		free(l);
	}
}

static void
cm_connect(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	struct wn_tcp_endpoint local, remote;
	struct dp_conn *c = conn_new(dp);
	struct wn_ctl_cm_event ev;
	struct wn_tcp_conn *tc;

	memset(&ev, 0, sizeof(ev));
	ev.src = m->u.cm.src;
	ev.dst = m->u.cm.dst;
	if (c == NULL) {
		ev.event = WN_CTL_CM_EV_CONNECT_ERROR;
		ev.status = -ENOMEM;
		dp_cm_event(dp, m->u.cm.id, &ev);
		return;
	}
	dp->st.conns_active++;
	c->active = true;
	c->id = m->u.cm.id;
	c->src = m->u.cm.src;
	c->dst = m->u.cm.dst;
	c->param = m->u.cm.param;
	c->qp = m->u.cm.qp != 0 ? dp_obj(dp, m->u.cm.qp, DPO_QP) : NULL;
	if (c->qp != NULL && c->qp->conn != NULL)
		c->qp = NULL; /* already carrying a connection */
	dp_ep_of(&c->src, &local);
	dp_ep_of(&c->dst, &remote);
	if (cm_add(dp, c->id, c) < 0) {
		c->st = DPC_DEAD;
		c->id = 0;
		ev.event = WN_CTL_CM_EV_CONNECT_ERROR;
		ev.status = -ENOSPC;
		dp_cm_event(dp, m->u.cm.id, &ev);
		return;
	}
	tc = wn_tcp_connect(dp->tcp, &local, &remote, &conn_cb, c);
	if (tc == NULL) {
		int err = errno;

		c->cm_done = true;
		cm_del(dp, c->id);
		c->id = 0;
		c->st = DPC_DEAD;
		dp->st.conns_failed++;
		ev.event = WN_CTL_CM_EV_CONNECT_ERROR;
		ev.status = -err;
		dp_cm_event(dp, m->u.cm.id, &ev);
		return;
	}
	c->tcp = tc;
	c->st = DPC_TCP;
}

static struct dp_conn *
cm_conn_of(struct wn_dp *dp, const struct wn_server_dp_msg *m)
{
	struct dp_conn *c = cm_get(dp, m->u.cm.id);

	if (c == NULL && m->u.cm.conn != 0)
		c = cm_get(dp, m->u.cm.conn);
	return c != NULL && c->kind == DPO_CONN ? c : NULL;
}

static void
cm_accept(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	struct dp_conn *c = cm_conn_of(dp, m);
	struct wn_mpa_caps caps;
	struct wn_ctl_cm_event ev;

	if (c == NULL || c->st != DPC_REQ) {
		/* the initiator went away before the accept */
		memset(&ev, 0, sizeof(ev));
		ev.event = WN_CTL_CM_EV_DISCONNECTED;
		ev.status = -ECONNRESET;
		dp_cm_event(dp, m->u.cm.id, &ev);
		return;
	}
	cm_del(dp, c->token);
	c->token = 0;
	c->id = m->u.cm.id;
	if (cm_add(dp, c->id, c) < 0) {
		c->id = 0;
		conn_fail(c, "CM table full");
		return;
	}
	c->param = m->u.cm.param;
	c->qp = m->u.cm.qp != 0 ? dp_obj(dp, m->u.cm.qp, DPO_QP) : NULL;
	if (c->qp != NULL && c->qp->conn != NULL)
		c->qp = NULL;
	memset(&caps, 0, sizeof(caps));
	caps.ird = (uint16_t)RTE_MIN(c->param.ird, 0x3fffu);
	caps.ord = (uint16_t)RTE_MIN(c->param.ord, 0x3fffu);
	caps.rtr = dp->c.rtr;
	/* ESTABLISHED (RDMA mode) or ERROR come from inside the call */
	(void)wn_mpa_conn_accept(&c->mpa, &caps, c->param.pd, (uint16_t)c->param.pd_len, dp->now);
	conn_flush_startup(c);
	/* octets that arrived behind the Request while the ULP decided */
	conn_input(c);
}

static void
cm_reject(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	struct dp_conn *c = cm_conn_of(dp, m);

	if (c == NULL || c->st != DPC_REQ)
		return;
	cm_del(dp, c->token);
	c->token = 0;
	c->cm_done = true; /* the control thread finished the id itself */
	if (wn_mpa_conn_reject(&c->mpa, m->u.cm.param.pd, (uint16_t)m->u.cm.param.pd_len) == 0)
		conn_flush_startup(c);
	dp->st.conns_rejected++;
	conn_close(c);
}

static void
cm_disconnect(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	struct dp_conn *c = cm_conn_of(dp, m);

	if (c == NULL)
		return;
	/* rdma_disconnect: our side sees DISCONNECTED now, the peer when our FIN arrives */
	if (c->active && !c->established_sent)
		conn_final(c, WN_CTL_CM_EV_CONNECT_ERROR, -ECONNABORTED, NULL);
	else
		conn_final(c, WN_CTL_CM_EV_DISCONNECTED, 0, NULL);
	conn_detach_qp(c);
	conn_close(c);
}

static void
cm_destroy(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	void *o = cm_get(dp, m->u.cm.id);
	struct dp_conn *c;

	if (o != NULL && *(enum dp_obj_kind *)o == DPO_LISTEN) {
		struct dp_listen *l = o;

		cm_del(dp, l->id);
		wn_tcp_unlisten(l->l);
		free(l);
		return;
	}
	c = cm_conn_of(dp, m);
	if (c == NULL)
		return;
	cm_del(dp, c->id);
	cm_del(dp, c->token);
	c->id = 0;
	c->token = 0;
	c->cm_done = true;
	conn_detach_qp(c);
	if (c->tcp != NULL && c->st < DPC_CLOSING)
		wn_tcp_abort(c->tcp);
}

void
dp_cm_msg(struct wn_dp *dp, struct wn_server_dp_msg *m)
{
	switch (m->type) {
	case WN_SERVER_DP_CM_LISTEN:
		cm_listen(dp, m);
		break;
	case WN_SERVER_DP_CM_CONNECT:
		cm_connect(dp, m);
		break;
	case WN_SERVER_DP_CM_ACCEPT:
		cm_accept(dp, m);
		break;
	case WN_SERVER_DP_CM_REJECT:
		cm_reject(dp, m);
		break;
	case WN_SERVER_DP_CM_DISCONNECT:
		cm_disconnect(dp, m);
		break;
	case WN_SERVER_DP_CM_DESTROY:
		cm_destroy(dp, m);
		break;
	default:
		CONN_LOG(WARNING, "unknown control message %u\n", m->type);
		break;
	}
}

/* ---------------------------------------------------------------- periodic */

void
dp_conns_tick(struct wn_dp *dp)
{
	struct dp_conn *c, *tmp;

	if (dp->now - dp->last_tick < TICK_US)
		return;
	dp->last_tick = dp->now;
	dp_errq_flush(dp);
	if (dp->idx == 0) {
		dp_zc_tick(dp);
		dp->st.mr_dereg_waiting = dp->n_dereg;
	}
	RTE_TAILQ_FOREACH_SAFE(c, &dp->conns, next, tmp) {
		if (c->st == DPC_DEAD && c->zc_out == 0) {
			TAILQ_REMOVE(&dp->conns, c, next);
			free(c->rxbuf);
			free(c->txbuf);
			free(c);
			continue;
		}
		if ((c->st == DPC_MPA || c->st == DPC_REQ) &&
		    dp->now >= wn_mpa_conn_deadline(&c->mpa))
			(void)wn_mpa_conn_tick(&c->mpa, dp->now); /* ERROR event on expiry */
	}
}

void
dp_conns_free(struct wn_dp *dp)
{
	struct dp_conn *c;

	TAILQ_FOREACH(c, &dp->conns, next) {
		c->cm_done = true;
		conn_detach_qp(c);
		if (c->tcp != NULL)
			wn_tcp_abort(c->tcp);
	}
	while ((c = TAILQ_FIRST(&dp->conns)) != NULL) {
		TAILQ_REMOVE(&dp->conns, c, next);
		free(c->rxbuf);
		free(c->txbuf);
		free(c);
	}
}
