/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnicd dataplane: the run-to-completion loop, the port, object tables fed by the
 * control thread, QP engines and telemetry (dp.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_telemetry.h>

#include "dp.h"
#include "wn_impair.h"

#define DP_LOG(lvl, ...) rte_log(RTE_LOG_##lvl, RTE_LOGTYPE_USER1, "warpnicd dp: " __VA_ARGS__)

/* Loop iterations with nothing to do before the lcore naps for idle_us. */
#define IDLE_SPINS 2048
/* Telemetry snapshot period. */
#define TEL_PERIOD_US 100000

static struct wn_dp *tel_dp;

void *
dp_obj(struct wn_dp *dp, uint32_t handle, enum dp_obj_kind kind)
{
	void *p;

	if (rte_hash_lookup_data(dp->objs, &handle, &p) < 0 || *(enum dp_obj_kind *)p != kind)
		return NULL;
	return p;
}

static struct rte_hash *
hash_create(const char *name, uint32_t entries)
{
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = entries,
		.key_len = sizeof(uint32_t),
		.hash_func = rte_jhash,
		.socket_id = (int)rte_socket_id(),
	};

	return rte_hash_create(&hp);
}

struct wn_dp *
wn_dp_create(const struct wn_dp_conf *conf)
{
	struct wn_netif_conf nc;
	struct wn_tcp_ctx_conf tc;
	struct wn_dp *dp;
	uint32_t i;

	dp = calloc(1, sizeof(*dp));
	if (dp == NULL)
		return NULL;
	dp->c = *conf;
	TAILQ_INIT(&dp->active);
	TAILQ_INIT(&dp->conns);
	pthread_mutex_init(&dp->tel_lock, NULL);
	dp->objs = hash_create("wn_dp_objs", 16384);
	dp->cm = hash_create("wn_dp_cm", 2 * (conf->max_conns ? conf->max_conns : 1024) + 64);
	if (dp->objs == NULL || dp->cm == NULL)
		goto fail;

	memset(&nc, 0, sizeof(nc));
	nc.port_id = conf->port_id;
	nc.socket_id = SOCKET_ID_ANY;
	nc.mtu = conf->mtu;
	nc.pool = conf->pool;
	nc.tx_offload_capa = conf->tx_offload_capa;
	nc.rx_offload_capa = conf->rx_offload_capa;
	nc.neigh_entries = 1024;
	rte_eth_macaddr_get(conf->port_id, &nc.mac);
	dp->nif = wn_netif_create(&nc);
	if (dp->nif == NULL)
		goto fail;
	for (i = 0; i < conf->n_addrs; i++)
		if (wn_netif_addr_add(dp->nif, &conf->addrs[i], conf->prefix[i]) < 0)
			goto fail;
	if (conf->has_gw && wn_netif_gateway_set(dp->nif, &conf->gw) < 0)
		goto fail;

	memset(&tc, 0, sizeof(tc));
	tc.socket_id = SOCKET_ID_ANY;
	tc.pool = conf->pool;
	tc.max_conns = conf->max_conns;
	tc.sndbuf = conf->sockbuf;
	tc.rcvbuf = conf->sockbuf;
	tc.mtu = conf->mtu;
	dp->tcp = wn_tcp_ctx_create(&tc);
	if (dp->tcp == NULL)
		goto fail;
	dp->next_token = 1;
	return dp;
fail:
	wn_dp_free(dp);
	errno = errno ? errno : ENOMEM;
	return NULL;
}

/* ---------------------------------------------------------------- notifications */

static void
ctl_kick(struct wn_dp *dp)
{
	uint64_t one = 1;

	if (write(dp->c.ctl_efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		DP_LOG(ERR, "control eventfd: %s\n", strerror(errno));
}

static void
ctl_post(struct wn_dp *dp, struct wn_ctl_dp_msg *m)
{
	if (rte_ring_enqueue(dp->c.to_ctl, m) != 0) {
		dp->st.ctl_drop++;
		free(m);
		return;
	}
	ctl_kick(dp);
}

static void
ctl_done(struct wn_dp *dp, uint32_t handle)
{
	struct wn_ctl_dp_msg *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		dp->st.ctl_drop++;
		return;
	}
	m->type = WN_CTL_DP_DONE;
	m->handle = handle;
	ctl_post(dp, m);
}

void
dp_cm_event(struct wn_dp *dp, uint32_t id, const struct wn_ctl_cm_event *ev)
{
	struct wn_ctl_dp_msg *m = calloc(1, sizeof(*m));

	if (m == NULL) {
		dp->st.ctl_drop++;
		return;
	}
	m->type = WN_CTL_DP_CM_EVENT;
	m->handle = id;
	m->u.cm.id = id;
	m->u.cm.ev = *ev;
	m->u.cm.ev.id = id;
	dp->st.cm_events++;
	ctl_post(dp, m);
}

static struct dp_cq *
cq_of_ring(struct wn_queue_ring *r)
{
	return (struct dp_cq *)((uint8_t *)r - offsetof(struct dp_cq, prod));
}

void
dp_qp_event(void *arg, struct wn_rnic_qp *eng, const struct wn_rnic_event *ev)
{
	struct dp_qp *qp = arg;
	struct wn_dp *dp = qp->conn != NULL ? qp->conn->dp : tel_dp;

	(void)eng;
	switch (ev->type) {
	case WN_RNIC_EV_CQ_NOTIFY: {
		struct dp_cq *cq = cq_of_ring(ev->cq);

		if (cq->d->notify_fd >= 0 &&
		    write(cq->d->notify_fd, &cq->d->cookie, sizeof(cq->d->cookie)) < 0 &&
		    errno != EAGAIN)
			DP_LOG(WARNING, "CQ %u notify: %s\n", cq->handle, strerror(errno));
		if (dp != NULL)
			dp->st.cq_notify++;
		break;
	}
	case WN_RNIC_EV_TERM_SENT:
	case WN_RNIC_EV_TERM_RECV:
		DP_LOG(NOTICE, "QP %u: Terminate %s: layer %u etype %u code %u\n", qp->d->qpn,
		       ev->type == WN_RNIC_EV_TERM_SENT ? "sent" : "received", ev->term.layer,
		       ev->term.etype, ev->term.code);
		/*
		 * RFC 5040 §6.3: after a Terminate the LLP stream is closed (FIN after the
		 * Terminate we queued); the QP is flushed when TCP is gone.
		 */
		if (qp->conn != NULL)
			dp_conn_close(qp->conn);
		break;
	default:
		break;
	}
}

/* ---------------------------------------------------------------- QP engines */

int
dp_qp_engine(struct wn_dp *dp, struct dp_qp *qp, struct dp_conn *conn, uint32_t mulpdu,
	     uint32_t ird, uint32_t ord, uint32_t rtr_recv)
{
	struct wn_rnic_qp_conf rc;

	if (qp->eng != NULL)
		return -EBUSY;
	memset(&rc, 0, sizeof(rc));
	rc.qpn = qp->d->qpn;
	rc.pd = qp->d->pd;
	rc.mem = dp->c.mem;
	rc.sq = &qp->sq;
	rc.rq = qp->srq == NULL ? &qp->rq : NULL;
	rc.srq = qp->srq != NULL ? &qp->srq->cons : NULL;
	rc.scq = &qp->scq->prod;
	rc.rcq = &qp->rcq->prod;
	rc.mulpdu = mulpdu;
	rc.ird = RTE_MAX(ird, 1u);
	rc.ord = RTE_MAX(ord, 1u);
	rc.sq_sig_all = qp->d->sq_sig_all != 0;
	rc.rfc7306 = dp->c.rfc7306;
	rc.rtr_recv = rtr_recv;
	rc.tx = dp_conn_tx;
	rc.tx_arg = conn;
	rc.event = dp_qp_event;
	rc.event_arg = qp;
	qp->eng = wn_rnic_qp_create(&rc);
	if (qp->eng == NULL)
		return -errno;
	qp->conn = conn;
	qp->scq->refs++;
	qp->rcq->refs++;
	TAILQ_INSERT_TAIL(&dp->active, qp, next);
	qp->active = true;
	return 0;
}

static int
no_tx(void *arg, const struct wn_rnic_ulpdu *u)
{
	(void)arg;
	(void)u;
	return -EAGAIN;
}

void
dp_qp_disconnect(struct wn_dp *dp, struct dp_qp *qp)
{
	if (qp->eng == NULL) {
		/*
		 * Never connected (or the ULP moved it to Error first): a throw-away engine
		 * flushes the rings exactly as a connected one would.
		 */
		struct wn_rnic_qp_conf rc;

		memset(&rc, 0, sizeof(rc));
		rc.qpn = qp->d->qpn;
		rc.pd = qp->d->pd;
		rc.mem = dp->c.mem;
		rc.sq = &qp->sq;
		rc.rq = qp->srq == NULL ? &qp->rq : NULL;
		rc.srq = qp->srq != NULL ? &qp->srq->cons : NULL;
		rc.scq = &qp->scq->prod;
		rc.rcq = &qp->rcq->prod;
		rc.mulpdu = WN_RNIC_MULPDU_MIN;
		rc.ird = rc.ord = 1;
		rc.tx = no_tx;
		rc.event = dp_qp_event;
		rc.event_arg = qp;
		qp->eng = wn_rnic_qp_create(&rc);
		if (qp->eng == NULL)
			return;
		qp->scq->refs++;
		qp->rcq->refs++;
	}
	if (wn_rnic_qp_state(qp->eng) != WN_RNIC_QPS_ERROR)
		wn_rnic_qp_disconnect(qp->eng);
	if (qp->active) {
		TAILQ_REMOVE(&dp->active, qp, next);
		qp->active = false;
	}
	qp->conn = NULL;
}

static void
qp_free(struct wn_dp *dp, struct dp_qp *qp)
{
	if (qp->conn != NULL)
		dp_conn_qp_gone(dp, qp->conn, true);
	if (qp->active)
		TAILQ_REMOVE(&dp->active, qp, next);
	if (qp->eng != NULL) {
		qp->scq->refs--;
		qp->rcq->refs--;
		wn_rnic_qp_destroy(qp->eng);
	}
	free(qp);
}

/* ---------------------------------------------------------------- control messages */

static int
obj_add(struct wn_dp *dp, uint32_t handle, void *o)
{
	int ret = rte_hash_add_key_data(dp->objs, &handle, o);

	if (ret < 0)
		DP_LOG(ERR, "object table: handle %u: %s\n", handle, strerror(-ret));
	return ret;
}

static void
ctl_qp_create(struct wn_dp *dp, struct wn_ctl_dp_qp *d)
{
	struct dp_qp *qp = calloc(1, sizeof(*qp));
	uint64_t off;

	if (qp == NULL)
		return;
	qp->kind = DPO_QP;
	qp->handle = d->handle;
	qp->d = d;
	qp->scq = dp_obj(dp, d->send_cq->handle, DPO_CQ);
	qp->rcq = dp_obj(dp, d->recv_cq->handle, DPO_CQ);
	qp->srq = d->srq != NULL ? dp_obj(dp, d->srq->handle, DPO_SRQ) : NULL;
	off = wn_queue_qp_rq_offset(d->sq_depth, d->max_send_sge, d->max_inline);
	if (qp->scq == NULL || qp->rcq == NULL || (d->srq != NULL && qp->srq == NULL) ||
	    wn_queue_cons_attach(&qp->sq, d->ring, off, WN_QUEUE_KIND_SQ) != 0 ||
	    (d->srq == NULL && wn_queue_cons_attach(&qp->rq, (uint8_t *)d->ring + off,
						    d->ring_size - off, WN_QUEUE_KIND_RQ) != 0) ||
	    obj_add(dp, d->handle, qp) < 0) {
		DP_LOG(ERR, "QP %u: bad descriptor\n", d->handle);
		free(qp);
	}
}

static void
ctl_msg(struct wn_dp *dp, struct wn_ctl_dp_msg *m)
{
	void *o;

	dp->st.ctl_msgs++;
	switch (m->type) {
	case WN_CTL_DP_MR_REG:
		break; /* regions live in the shared lib/mem table */
	case WN_CTL_DP_MR_DEREG:
		ctl_done(dp, m->handle);
		break;
	case WN_CTL_DP_CQ_CREATE: {
		struct wn_ctl_dp_cq *d = m->obj;
		struct dp_cq *cq = calloc(1, sizeof(*cq));

		if (cq == NULL)
			break;
		cq->kind = DPO_CQ;
		cq->handle = d->handle;
		cq->d = d;
		if (wn_queue_prod_attach(&cq->prod, d->ring, d->ring_size, WN_QUEUE_KIND_CQ) != 0 ||
		    obj_add(dp, d->handle, cq) < 0)
			free(cq);
		break;
	}
	case WN_CTL_DP_SRQ_CREATE: {
		struct wn_ctl_dp_srq *d = m->obj;
		struct dp_srq *srq = calloc(1, sizeof(*srq));

		if (srq == NULL)
			break;
		srq->kind = DPO_SRQ;
		srq->handle = d->handle;
		srq->d = d;
		if (wn_queue_cons_attach(&srq->cons, d->ring, d->ring_size, WN_QUEUE_KIND_SRQ) !=
			    0 ||
		    obj_add(dp, d->handle, srq) < 0)
			free(srq);
		break;
	}
	case WN_CTL_DP_QP_CREATE:
		ctl_qp_create(dp, m->obj);
		break;
	case WN_CTL_DP_QP_MODIFY: {
		struct dp_qp *qp = dp_obj(dp, m->handle, DPO_QP);

		if (qp == NULL)
			break;
		/* RTS comes from the connection itself; Error tears it down and flushes */
		if (m->u.qp_state == WN_CTL_QPS_ERR) {
			if (qp->conn != NULL)
				dp_conn_qp_gone(dp, qp->conn, false);
			dp_qp_disconnect(dp, qp);
		}
		break;
	}
	case WN_CTL_DP_QP_DESTROY:
	case WN_CTL_DP_CQ_DESTROY:
	case WN_CTL_DP_SRQ_DESTROY:
		o = dp_obj(dp, m->handle,
			   m->type == WN_CTL_DP_QP_DESTROY   ? DPO_QP
			   : m->type == WN_CTL_DP_CQ_DESTROY ? DPO_CQ
							     : DPO_SRQ);
		if (o != NULL) {
			rte_hash_del_key(dp->objs, &m->handle);
			if (m->type == WN_CTL_DP_QP_DESTROY)
				qp_free(dp, o);
			else
				free(o);
		}
		ctl_done(dp, m->handle);
		break;
	default:
		dp_cm_msg(dp, m);
		break;
	}
	free(m);
}

/* ---------------------------------------------------------------- loop */

static void
port_tx(struct wn_dp *dp, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent = 0, i;
	unsigned int tries;

	wn_pcap_capture(dp->c.pcap, dp->c.port_id, 0, pkts, n, RTE_PCAPNG_DIRECTION_OUT);
	for (tries = 0; sent < n && tries < 64; tries++) {
		sent += rte_eth_tx_burst(dp->c.port_id, 0, pkts + sent, n - sent);
		if (sent < n)
			wn_impair_poll_all(); /* a face's tx ring drains only when polled */
	}
	dp->st.tx_pkts += sent;
	for (i = sent; i < n; i++) {
		rte_pktmbuf_free(pkts[i]);
		dp->st.tx_drop++;
	}
}

/*
 * Segments to one of our own addresses (a client connecting to a listener of this same
 * instance) never reach the wire: they go straight back into TCP input, as the kernel's
 * loopback does; their checksums are not computed (marked good).
 * @return the packets left for the port, compacted at the front of @p pkts.
 */
static uint16_t
loopback(struct wn_dp *dp, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *loop[DP_BURST];
	uint16_t i, k = 0, nl = 0;

	for (i = 0; i < n; i++) {
		const uint8_t *ip = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
		struct wn_ip_addr dst;

		memset(&dst, 0, sizeof(dst));
		if ((ip[0] >> 4) == 4) {
			dst.family = WN_AF_INET;
			memcpy(&dst.v4, ip + 16, 4);
		} else {
			dst.family = WN_AF_INET6;
			memcpy(dst.v6, ip + 24, 16);
		}
		if (!wn_netif_is_local(dp->nif, &dst)) {
			pkts[k++] = pkts[i];
			continue;
		}
		pkts[i]->ol_flags = RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		loop[nl++] = pkts[i];
	}
	if (nl > 0) {
		dp->st.loopback_pkts += nl;
		wn_tcp_rx_bulk(dp->tcp, loop, nl, dp->now);
	}
	return k;
}

static void
tel_refresh(struct wn_dp *dp)
{
	struct dp_conn *c;
	struct dp_qp *qp;
	uint32_t n = 0;

	pthread_mutex_lock(&dp->tel_lock);
	dp->tel_dp = dp->st;
	wn_net_stats_get(dp->nif, &dp->tel_net);
	wn_tcp_stats_get(dp->tcp, &dp->tel_tcp);
	TAILQ_FOREACH(qp, &dp->active, next) {
		if (n == DP_TEL_QPS)
			break;
		dp->tel_qp[n].handle = qp->handle;
		dp->tel_qp[n].qpn = qp->d->qpn;
		dp->tel_qp[n].state = wn_rnic_qp_state(qp->eng);
		dp->tel_qp[n].conn_state = qp->conn != NULL ? qp->conn->st : DPC_DEAD;
		wn_rnic_qp_stats(qp->eng, &dp->tel_qp[n].s);
		n++;
	}
	dp->tel_nqp = n;
	n = 0;
	TAILQ_FOREACH(c, &dp->conns, next) {
		const struct wn_mpa_params *mp = wn_mpa_conn_params(&c->mpa);

		if (n == DP_TEL_QPS)
			break;
		if (c->tcp == NULL)
			continue;
		dp->tel_conn[n].id = c->id;
		dp->tel_conn[n].qpn = c->qp != NULL ? c->qp->d->qpn : 0;
		dp->tel_conn[n].state = c->st;
		dp->tel_conn[n].mulpdu = c->mulpdu;
		dp->tel_conn[n].active = c->active;
		dp->tel_conn[n].markers_tx = c->st == DPC_FULL && mp->tx.markers;
		dp->tel_conn[n].markers_rx = c->st == DPC_FULL && mp->rx.markers;
		dp->tel_conn[n].crc = c->st == DPC_FULL && mp->tx.crc;
		dp->tel_conn[n].fpdus_rx = c->mpa.fpdus_rx;
		wn_tcp_conn_info(c->tcp, &dp->tel_conn[n].tcp);
		n++;
	}
	dp->tel_nconn = n;
	pthread_mutex_unlock(&dp->tel_lock);
}

int
wn_dp_run(struct wn_dp *dp, volatile int *quit)
{
	struct rte_mbuf *pkts[DP_BURST];
	void *msgs[DP_BURST];
	unsigned int idle = 0, i;
	uint16_t n;
	int ret;

	dp->quit = quit;
	tel_dp = dp;
	if (dp->c.qs != NULL) {
		ret = rte_rcu_qsbr_thread_register(dp->c.qs, 0);
		if (ret != 0)
			return ret;
		rte_rcu_qsbr_thread_online(dp->c.qs, 0);
	}
	dp->now = wn_net_now_us();
	ret = wn_net_start(dp->nif, dp->now);
	if (ret < 0)
		return ret;
	while (!*quit) {
		unsigned int work = 0;
		struct dp_qp *qp, *tmp;

		dp->now = wn_net_now_us();
		dp->st.loops++;
		wn_impair_poll_all();
		n = rte_eth_rx_burst(dp->c.port_id, 0, pkts, DP_BURST);
		if (n > 0) {
			work += n;
			dp->st.rx_pkts += n;
			wn_pcap_capture(dp->c.pcap, dp->c.port_id, 0, pkts, n,
					RTE_PCAPNG_DIRECTION_IN);
			n = wn_net_rx_bulk(dp->nif, pkts, n, dp->now);
			if (n > 0)
				wn_tcp_rx_bulk(dp->tcp, pkts, n, dp->now);
		}
		n = (uint16_t)rte_ring_dequeue_burst(dp->c.to_dp, msgs, DP_BURST, NULL);
		for (i = 0; i < n; i++)
			ctl_msg(dp, msgs[i]);
		work += n;
		RTE_TAILQ_FOREACH_SAFE(qp, &dp->active, next, tmp) {
			if (qp->conn == NULL || !qp->conn->tx_ok)
				continue;
			work += wn_rnic_tx_poll(qp->eng, DP_BURST);
		}
		wn_tcp_process(dp->tcp, dp->now);
		while ((n = wn_tcp_tx_bulk(dp->tcp, pkts, DP_BURST)) > 0) {
			work += n;
			n = loopback(dp, pkts, n);
			wn_net_output_bulk(dp->nif, pkts, n, dp->now);
		}
		wn_net_process(dp->nif, dp->now);
		while ((n = wn_net_tx_bulk(dp->nif, pkts, DP_BURST)) > 0)
			port_tx(dp, pkts, n);
		dp_conns_tick(dp);
		if (dp->c.qs != NULL)
			rte_rcu_qsbr_quiescent(dp->c.qs, 0);
		if (dp->now - dp->tel_at >= TEL_PERIOD_US) {
			dp->tel_at = dp->now;
			tel_refresh(dp);
		}
		if (work != 0) {
			idle = 0;
		} else if (dp->c.idle_us != 0 && ++idle >= IDLE_SPINS) {
			struct timespec ts = { 0, (long)dp->c.idle_us * 1000 };

			dp->st.idle_sleeps++;
			nanosleep(&ts, NULL);
		}
	}
	dp_conns_free(dp);
	/* the last FINs/RSTs */
	wn_tcp_process(dp->tcp, wn_net_now_us());
	while ((n = wn_tcp_tx_bulk(dp->tcp, pkts, DP_BURST)) > 0)
		wn_net_output_bulk(dp->nif, pkts, n, dp->now);
	while ((n = wn_net_tx_bulk(dp->nif, pkts, DP_BURST)) > 0)
		port_tx(dp, pkts, n);
	if (dp->c.qs != NULL) {
		rte_rcu_qsbr_thread_offline(dp->c.qs, 0);
		rte_rcu_qsbr_thread_unregister(dp->c.qs, 0);
	}
	return 0;
}

void
wn_dp_free(struct wn_dp *dp)
{
	const void *key;
	void *data;
	uint32_t it = 0;

	if (dp == NULL)
		return;
	if (tel_dp == dp)
		tel_dp = NULL;
	if (dp->objs != NULL) {
		/* QPs first: their engines write into CQs and read SRQs */
		for (int pass = 0; pass < 2; pass++) {
			it = 0;
			while (rte_hash_iterate(dp->objs, &key, &data, &it) >= 0) {
				enum dp_obj_kind k = *(enum dp_obj_kind *)data;

				if (pass == 0 && k == DPO_QP)
					qp_free(dp, data);
				else if (pass == 1 && k != DPO_QP)
					free(data);
			}
		}
	}
	wn_tcp_ctx_free(dp->tcp);
	wn_netif_free(dp->nif);
	rte_hash_free(dp->objs);
	rte_hash_free(dp->cm);
	pthread_mutex_destroy(&dp->tel_lock);
	free(dp);
}

/* ---------------------------------------------------------------- telemetry */

#define TEL_U64(d, s, f) rte_tel_data_add_dict_u64(d, #f, (s)->f)

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_dp *dp = tel_dp;

	(void)cmd;
	(void)params;
	if (dp == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&dp->tel_lock);
	TEL_U64(d, &dp->tel_dp, rx_pkts);
	TEL_U64(d, &dp->tel_dp, tx_pkts);
	TEL_U64(d, &dp->tel_dp, tx_drop);
	TEL_U64(d, &dp->tel_dp, loops);
	TEL_U64(d, &dp->tel_dp, idle_sleeps);
	TEL_U64(d, &dp->tel_dp, ctl_msgs);
	TEL_U64(d, &dp->tel_dp, cm_events);
	TEL_U64(d, &dp->tel_dp, ctl_drop);
	TEL_U64(d, &dp->tel_dp, conns_active);
	TEL_U64(d, &dp->tel_dp, conns_passive);
	TEL_U64(d, &dp->tel_dp, conns_established);
	TEL_U64(d, &dp->tel_dp, conns_failed);
	TEL_U64(d, &dp->tel_dp, conns_rejected);
	TEL_U64(d, &dp->tel_dp, mpa_errors);
	TEL_U64(d, &dp->tel_dp, mpa_crc_errors);
	TEL_U64(d, &dp->tel_dp, rx_fpdus);
	TEL_U64(d, &dp->tel_dp, tx_fpdus);
	TEL_U64(d, &dp->tel_dp, tx_again);
	TEL_U64(d, &dp->tel_dp, cq_notify);
	TEL_U64(d, &dp->tel_dp, loopback_pkts);
	rte_tel_data_add_dict_u64(d, "active_qps", dp->tel_nqp);
	pthread_mutex_unlock(&dp->tel_lock);
	return 0;
}

static int
tel_tcp(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_dp *dp = tel_dp;
	struct wn_tcp_stats s;

	(void)cmd;
	(void)params;
	if (dp == NULL)
		return -ENODEV;
	pthread_mutex_lock(&dp->tel_lock);
	s = dp->tel_tcp;
	pthread_mutex_unlock(&dp->tel_lock);
	rte_tel_data_start_dict(d);
	TEL_U64(d, &s, rx_segs);
	TEL_U64(d, &s, rx_drop_cksum);
	TEL_U64(d, &s, rx_drop_noconn);
	TEL_U64(d, &s, rx_dupack);
	TEL_U64(d, &s, rx_ooo);
	TEL_U64(d, &s, rx_dup_data);
	TEL_U64(d, &s, rx_rst);
	TEL_U64(d, &s, tx_segs);
	TEL_U64(d, &s, tx_data_bytes);
	TEL_U64(d, &s, tx_retrans);
	TEL_U64(d, &s, tx_rst);
	TEL_U64(d, &s, tx_drop_nombuf);
	TEL_U64(d, &s, rto_fired);
	TEL_U64(d, &s, fast_retrans);
	TEL_U64(d, &s, conns_opened);
	TEL_U64(d, &s, conns_closed);
	TEL_U64(d, &s, record_split);
	return 0;
}

static int
tel_port(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_dp *dp = tel_dp;
	struct wn_net_stats s;
	struct rte_eth_stats es;

	(void)cmd;
	(void)params;
	if (dp == NULL)
		return -ENODEV;
	pthread_mutex_lock(&dp->tel_lock);
	s = dp->tel_net;
	pthread_mutex_unlock(&dp->tel_lock);
	memset(&es, 0, sizeof(es));
	rte_eth_stats_get(dp->c.port_id, &es);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "port_id", dp->c.port_id);
	rte_tel_data_add_dict_u64(d, "ipackets", es.ipackets);
	rte_tel_data_add_dict_u64(d, "opackets", es.opackets);
	rte_tel_data_add_dict_u64(d, "ibytes", es.ibytes);
	rte_tel_data_add_dict_u64(d, "obytes", es.obytes);
	rte_tel_data_add_dict_u64(d, "imissed", es.imissed);
	rte_tel_data_add_dict_u64(d, "ierrors", es.ierrors);
	rte_tel_data_add_dict_u64(d, "oerrors", es.oerrors);
	TEL_U64(d, &s, rx_pkts);
	return 0;
}

static int
tel_qps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_dp *dp = tel_dp;
	uint32_t i, want = 0;
	bool one = params != NULL && *params != '\0';

	(void)cmd;
	if (dp == NULL)
		return -ENODEV;
	if (one)
		want = (uint32_t)strtoul(params, NULL, 0);
	pthread_mutex_lock(&dp->tel_lock);
	if (!one) {
		rte_tel_data_start_array(d, RTE_TEL_U64_VAL);
		for (i = 0; i < dp->tel_nqp; i++)
			rte_tel_data_add_array_u64(d, dp->tel_qp[i].qpn);
		pthread_mutex_unlock(&dp->tel_lock);
		return 0;
	}
	for (i = 0; i < dp->tel_nqp; i++)
		if (dp->tel_qp[i].qpn == want)
			break;
	if (i == dp->tel_nqp) {
		pthread_mutex_unlock(&dp->tel_lock);
		return -ENOENT;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "qpn", dp->tel_qp[i].qpn);
	rte_tel_data_add_dict_u64(d, "handle", dp->tel_qp[i].handle);
	rte_tel_data_add_dict_u64(d, "state", dp->tel_qp[i].state);
	rte_tel_data_add_dict_u64(d, "conn_state", dp->tel_qp[i].conn_state);
	TEL_U64(d, &dp->tel_qp[i].s, rx_ulpdu);
	TEL_U64(d, &dp->tel_qp[i].s, tx_ulpdu);
	TEL_U64(d, &dp->tel_qp[i].s, rx_bytes_placed);
	TEL_U64(d, &dp->tel_qp[i].s, tx_payload);
	TEL_U64(d, &dp->tel_qp[i].s, cqe);
	TEL_U64(d, &dp->tel_qp[i].s, terminates_sent);
	TEL_U64(d, &dp->tel_qp[i].s, ord_stalls);
	pthread_mutex_unlock(&dp->tel_lock);
	return 0;
}

static const char *const conn_state_name[] = {
	[DPC_TCP] = "TCP", [DPC_MPA] = "MPA", [DPC_REQ] = "REQUEST", [DPC_FULL] = "RDMA",
	[DPC_CLOSING] = "CLOSING", [DPC_DEAD] = "CLOSED",
};

static int
tel_conns(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_dp *dp = tel_dp;
	uint32_t i;

	(void)cmd;
	(void)params;
	if (dp == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&dp->tel_lock);
	for (i = 0; i < dp->tel_nconn; i++) {
		struct rte_tel_data *c = rte_tel_data_alloc();
		const struct wn_tcp_info *t = &dp->tel_conn[i].tcp;
		char name[32], a[48], b[48], ep[128];

		if (c == NULL)
			break;
		rte_tel_data_start_dict(c);
		snprintf(ep, sizeof(ep), "%s:%u -> %s:%u",
			 wn_ip_addr_fmt(&t->local.addr, a, sizeof(a)), t->local.port,
			 wn_ip_addr_fmt(&t->remote.addr, b, sizeof(b)), t->remote.port);
		rte_tel_data_add_dict_string(c, "tcp", ep);
		rte_tel_data_add_dict_string(c, "state", conn_state_name[dp->tel_conn[i].state]);
		rte_tel_data_add_dict_string(c, "tcp_state", wn_tcp_state_name(t->state));
		rte_tel_data_add_dict_string(c, "role", dp->tel_conn[i].active ? "initiator"
										: "responder");
		rte_tel_data_add_dict_u64(c, "cm_id", dp->tel_conn[i].id);
		rte_tel_data_add_dict_u64(c, "qpn", dp->tel_conn[i].qpn);
		rte_tel_data_add_dict_u64(c, "mulpdu", dp->tel_conn[i].mulpdu);
		rte_tel_data_add_dict_u64(c, "markers_tx", dp->tel_conn[i].markers_tx);
		rte_tel_data_add_dict_u64(c, "markers_rx", dp->tel_conn[i].markers_rx);
		rte_tel_data_add_dict_u64(c, "crc", dp->tel_conn[i].crc);
		rte_tel_data_add_dict_u64(c, "fpdus_rx", dp->tel_conn[i].fpdus_rx);
		rte_tel_data_add_dict_u64(c, "cwnd", t->cwnd);
		rte_tel_data_add_dict_u64(c, "srtt_us", t->srtt_us);
		rte_tel_data_add_dict_u64(c, "rto_us", t->rto_us);
		rte_tel_data_add_dict_u64(c, "retrans", t->retrans);
		rte_tel_data_add_dict_u64(c, "snd_queued", t->snd_queued);
		snprintf(name, sizeof(name), "conn%u", i);
		rte_tel_data_add_dict_container(d, name, c, 0);
	}
	pthread_mutex_unlock(&dp->tel_lock);
	return 0;
}

void
wn_dp_telemetry_register(struct wn_dp *dp)
{
	tel_dp = dp;
	rte_telemetry_register_cmd("/warpnic/dp/stats", tel_stats,
				   "Dataplane counters (packets, connections, FPDUs). No parameters");
	rte_telemetry_register_cmd("/warpnic/dp/tcp", tel_tcp,
				   "TCP stack counters of the dataplane lcore. No parameters");
	rte_telemetry_register_cmd("/warpnic/dp/port", tel_port,
				   "Port counters (ethdev and lib/net). No parameters");
	rte_telemetry_register_cmd("/warpnic/dp/conns", tel_conns,
				   "iWARP connections: TCP endpoints and state, MPA settings, "
				   "congestion state. No parameters");
	rte_telemetry_register_cmd("/warpnic/dp/qp", tel_qps,
				   "Without parameter: QP numbers in RDMA mode. Parameter: QP "
				   "number, its counters");
}
