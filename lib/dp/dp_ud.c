/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp: unreliable datagrams (UD QPs, lib/ud) and rdma_cm's UDP port space (SIDR
 * exchanges, lib/cm's wn_cm_sidr.h), a warpnic extension over UDP (wn_wire_ud.h). Both live
 * on shard 0: every UD QP is created and polled there, and every datagram to the UD port is
 * steered there (dp_steer.c). A UD Send becomes one UDP datagram from the UD port to the UD
 * port; one for an address of ours goes straight back into the receive path. A datagram
 * received finds its QP by the destination QP number; a SIDR message goes to the exchanges.
 */
#include <errno.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_lcore.h>

#include "dp_priv.h"
#include "wn_wire_ud.h"

static_assert(WN_CTL_UDP_REQ_PD_MAX == WN_UD_SIDR_REQ_PD_MAX &&
	      WN_CTL_UDP_REP_PD_MAX == WN_UD_SIDR_REP_PD_MAX, "rdma_cm UDP private data bounds");
static_assert(WN_CTL_UD_OVERHEAD == 40 + 8 + WN_UD_HDR_LEN + WN_UD_IMM_LEN,
	      "UD datagram overhead");
static_assert(WN_CTL_PS_UDP <= UINT16_MAX, "port space in a SIDR REQ");

/* Listeners of the UDP port space (rdma_listen on a UDP id). */
struct dp_ud_listen {
	uint32_t id;
	struct wn_ctl_addr src; /* its address (any) and port */
};

struct dp_ud {
	struct rte_hash *qpns;       /* QP number -> struct dp_qp (UD QPs) */
	struct wn_cm_sidr *sidr;
	struct dp_ud_listen *ls;
	uint32_t n_ls, cap_ls;
	uint16_t port;
	uint32_t max_msg;
};

/* ---------------------------------------------------------------- addresses */

static void
addr_of_gid(const uint8_t gid[16], struct wn_ip_addr *a)
{
	static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	memset(a, 0, sizeof(*a));
	if (memcmp(gid, v4mapped, sizeof(v4mapped)) == 0) {
		a->family = WN_AF_INET;
		memcpy(&a->v4, gid + 12, 4);
	} else {
		a->family = WN_AF_INET6;
		memcpy(a->v6, gid, 16);
	}
}

static void
ip_of_ctl(const struct wn_ctl_addr *c, struct wn_ip_addr *a)
{
	struct wn_llp_ep ep;

	wn_dp_ep_of_ctl(c, &ep);
	*a = ep.addr;
}

static void
ctl_of_ip(const struct wn_ip_addr *a, uint16_t port, struct wn_ctl_addr *c)
{
	memset(c, 0, sizeof(*c));
	if (a->family == WN_AF_INET) {
		c->family = WN_CTL_AF_INET;
		memcpy(c->addr, &a->v4, 4);
	} else {
		c->family = WN_CTL_AF_INET6;
		memcpy(c->addr, a->v6, 16);
	}
	c->port = port;
}

/*
 * The address a datagram to @p dst goes from: our GID @p sgid_index (warpnicd's --ip
 * addresses, in order) when it is of @p dst's family, else the netif's choice for @p dst.
 */
static int
src_for(struct wn_dp *dp, uint8_t sgid_index, const struct wn_ip_addr *dst, struct wn_ip_addr *src)
{
	if (sgid_index < dp->c.n_addrs && dp->c.addrs[sgid_index].family == dst->family) {
		*src = dp->c.addrs[sgid_index];
		return 0;
	}
	return wn_net_if_src_addr(dp->nif, dst, src);
}

/* ---------------------------------------------------------------- output */

/* Append @p len octets at @p src to @p m, chaining segments from the pool when it is full. */
static int
append(struct wn_dp *dp, struct rte_mbuf *m, const void *src, uint32_t len)
{
	const uint8_t *p = src;

	while (len > 0) {
		struct rte_mbuf *last = rte_pktmbuf_lastseg(m);
		uint32_t room = rte_pktmbuf_tailroom(last), n;

		if (room == 0) {
			struct rte_mbuf *s = rte_pktmbuf_alloc(dp->c.pool);

			if (s == NULL)
				return -ENOMEM;
			last->next = s;
			m->nb_segs++;
			continue;
		}
		n = RTE_MIN(room, len);
		memcpy(rte_pktmbuf_mtod_offset(last, uint8_t *, rte_pktmbuf_data_len(last)), p, n);
		last->data_len = (uint16_t)(last->data_len + n);
		m->pkt_len += n;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * A UD datagram (its UD header and message in @p m) from @p src to @p dst: onto the port,
 * or straight into our receive path when @p dst is ours. @return 0 (sent, or dropped and
 * counted).
 */
static int
ud_output(struct wn_dp *dp, struct rte_mbuf *m, const struct wn_ip_addr *src,
	  const struct wn_ip_addr *dst, uint8_t tclass, uint8_t ttl)
{
	uint16_t port = dp->ud->port;

	if (wn_net_udp_prepend(dp->nif, m, src, port, dst, port, tclass, ttl) != 0) {
		rte_pktmbuf_free(m);
		dp->st.ud_tx_drop++;
		return 0;
	}
	if (wn_net_if_is_local(dp->nif, dst)) {
		/* as the kernel's loopback: never on the wire, its checksum never verified */
		m->ol_flags = RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		dp->st.ud_loopback++;
		wn_net_udp_input(dp->nif, m, dp->now);
		return 0;
	}
	/* no route, too long, no neighbour: lib/net counts it (tx_drop_*), and so do we */
	if (wn_net_output(dp->nif, m, dp->now) != 0)
		dp->st.ud_tx_drop++;
	return 0;
}

/* The engine's send function (wn_ud_send_fn): one Send, one datagram. */
static int
ud_send(void *arg, struct wn_ud_qp *uqp, const struct wn_ud_send *s)
{
	struct wn_dp *dp = arg;
	uint8_t hdr[WN_UD_HDR_LEN + WN_UD_IMM_LEN];
	struct wn_ip_addr dst, src;
	struct rte_mbuf *m;
	int n;

	(void)uqp;
	addr_of_gid(s->dgid, &dst);
	if (src_for(dp, s->sgid_index, &dst, &src) != 0) {
		/* no address of the destination's family: lost, as on a network without a route */
		dp->st.ud_tx_drop++;
		return 0;
	}
	n = wn_wire_ud_encode(&s->hdr, hdr, sizeof(hdr));
	m = rte_pktmbuf_alloc(dp->c.pool);
	if (m == NULL || n < 0) {
		rte_pktmbuf_free(m);
		dp->st.ud_tx_nombuf++;
		return -EAGAIN;
	}
	if (append(dp, m, hdr, (uint32_t)n) != 0)
		goto nombuf;
	for (uint32_t i = 0; i < s->n_iov; i++)
		if (append(dp, m, s->iov[i].base, s->iov[i].len) != 0)
			goto nombuf;
	dp->st.ud_tx_msgs++;
	return ud_output(dp, m, &src, &dst, s->traffic_class, s->hop_limit);
nombuf:
	rte_pktmbuf_free(m);
	dp->st.ud_tx_nombuf++;
	return -EAGAIN;
}

unsigned int
wn_dp_ud_tx(struct wn_dp *dp, struct dp_qp *qp, unsigned int budget)
{
	if (wn_ud_qp_state(qp->ud) == WN_UD_QPS_ERROR)
		return wn_ud_qp_flush(qp->ud);
	return wn_ud_tx_poll(qp->ud, budget, ud_send, dp);
}

/* A SIDR message (wn_cm_sidr_ops.send). */
static void
sidr_send(void *arg, const struct wn_ip_addr *local, const struct wn_ip_addr *peer,
	  const struct wn_ud_msg *msg)
{
	struct wn_dp *dp = arg;
	uint8_t b[WN_UD_HDR_LEN + WN_UD_SIDR_REQ_LEN + WN_UD_SIDR_REQ_PD_MAX];
	struct rte_mbuf *m = rte_pktmbuf_alloc(dp->c.pool);
	int n = wn_wire_ud_encode(msg, b, sizeof(b));

	/* a lost SIDR message is a lost datagram: the REQ is sent again, the REP with it */
	if (m == NULL || n < 0 || append(dp, m, b, (uint32_t)n) != 0) {
		rte_pktmbuf_free(m);
		dp->st.ud_tx_nombuf++;
		return;
	}
	(void)ud_output(dp, m, local, peer, 0, 0);
}

/* ---------------------------------------------------------------- input */

/* A DATA message for one of our QPs; its payload starts at @p off of @p m. */
static void
rx_data(struct wn_dp *dp, struct rte_mbuf *m, const struct wn_ud_msg *msg, uint32_t off,
	uint32_t len)
{
	struct wn_ud_iov iov[WN_QUEUE_MAX_SGE];
	uint8_t grh[WN_UD_GRH_LEN];
	struct wn_ud_recv r;
	struct dp_qp *qp;
	void *v;
	int rc;

	if (rte_hash_lookup_data(dp->ud->qpns, &msg->dqpn, &v) < 0) {
		dp->st.ud_rx_noqp++;
		return;
	}
	qp = v;
	/* the GRH RoCEv2 gives: the IPv6 header, or the IPv4 header in its last 20 octets */
	if (wn_wire_ud_grh_from_ip(rte_pktmbuf_mtod(m, const uint8_t *), m->l3_len, grh) != 0) {
		dp->st.ud_rx_bad++;
		return;
	}
	memset(&r, 0, sizeof(r));
	r.src_qpn = msg->sqpn;
	r.qkey = msg->qkey;
	r.has_imm = (msg->flags & WN_UD_F_IMM) != 0;
	r.se = (msg->flags & WN_UD_F_SE) != 0;
	r.imm = msg->imm;
	r.grh = grh;
	r.len = len;
	r.iov = iov;
	/* the message where it lies, segment by segment */
	for (struct rte_mbuf *s = m; s != NULL && r.n_iov < RTE_DIM(iov) && len > 0; s = s->next) {
		uint32_t dl = rte_pktmbuf_data_len(s), n;

		if (off >= dl) {
			off -= dl;
			continue;
		}
		n = RTE_MIN(dl - off, len);
		iov[r.n_iov].base = rte_pktmbuf_mtod_offset(s, const uint8_t *, off);
		iov[r.n_iov].len = n;
		r.n_iov++;
		len -= n;
		off = 0;
	}
	if (len > 0) {
		dp->st.ud_rx_bad++;
		return;
	}
	rc = wn_ud_rx(qp->ud, &r);
	switch (rc) {
	case 0:
		dp->st.ud_rx_msgs++;
		break;
	case -EPERM:
		dp->st.ud_rx_drop_qkey++;
		break;
	case -ENOBUFS:
		dp->st.ud_rx_drop_norecv++;
		break;
	default:
		dp->st.ud_rx_drop_state++;
		break;
	}
}

/* A datagram to the UD port (wn_net_udp_rx_fn; shard 0). */
static void
ud_rx(void *arg, struct rte_mbuf *m, const struct wn_net_udp_info *info, uint64_t now)
{
	struct wn_dp *dp = arg;
	uint8_t b[WN_UD_HDR_LEN + WN_UD_SIDR_REQ_LEN + WN_UD_SIDR_REQ_PD_MAX];
	uint32_t off = m->l3_len + m->l4_len;
	const uint8_t *p;
	struct wn_ud_msg msg;
	uint32_t peek;

	/* SIDR messages whole; of a longer DATA message its header (and immediate data) */
	peek = info->len <= sizeof(b) ? info->len : WN_UD_HDR_LEN + WN_UD_IMM_LEN;
	p = rte_pktmbuf_read(m, off, peek, b);
	if (p == NULL || wn_wire_ud_decode(p, peek, &msg) != WN_UD_OK ||
	    (msg.type != WN_UD_DATA && peek != info->len)) {
		dp->st.ud_rx_bad++;
		rte_pktmbuf_free(m);
		return;
	}
	if (msg.type == WN_UD_DATA) {
		uint32_t hs = (uint32_t)wn_wire_ud_hdr_size(&msg);

		rx_data(dp, m, &msg, off + hs, info->len - hs);
	} else {
		dp->st.ud_rx_sidr++;
		(void)wn_cm_sidr_rx(dp->ud->sidr, &info->dst, &info->src, &msg, now);
	}
	rte_pktmbuf_free(m);
}

/* ---------------------------------------------------------------- rdma_cm's UDP port space */

static struct dp_ud_listen *
listener_for(struct dp_ud *ud, const struct wn_ip_addr *local, uint16_t port)
{
	for (uint32_t i = 0; i < ud->n_ls; i++) {
		struct dp_ud_listen *l = &ud->ls[i];
		struct wn_ip_addr a;

		if (l->src.port != port)
			continue;
		ip_of_ctl(&l->src, &a);
		if (wn_ip_addr_eq(&a, local))
			return l;
		/* any address of the listener's family (or either, for an IPv6 wildcard) */
		if ((l->src.family == WN_CTL_AF_INET || l->src.family == WN_CTL_AF_INET6) &&
		    memcmp(l->src.addr, (const uint8_t[16]){0}, 16) == 0 &&
		    (l->src.family == WN_CTL_AF_INET6 || local->family == WN_AF_INET))
			return l;
	}
	return NULL;
}

/* A request from @p peer (wn_cm_sidr_ops.request): CONNECT_REQUEST on a listener. */
static int
sidr_request(void *arg, uint32_t token, const struct wn_ip_addr *local,
	     const struct wn_ip_addr *peer, const struct wn_ud_msg *req)
{
	struct wn_dp *dp = arg;
	struct dp_ud_listen *l = req->ps == WN_CTL_PS_UDP ?
					 listener_for(dp->ud, local, req->dport) : NULL;
	struct wn_ctl_cm_event ev;

	if (l == NULL)
		return WN_UD_SIDR_UNSUPPORTED; /* IBTA 12.11.4: no such service */
	memset(&ev, 0, sizeof(ev));
	ev.event = WN_CTL_CM_EV_CONNECT_REQUEST;
	ev.listen_id = l->id;
	ctl_of_ip(local, req->dport, &ev.src);
	ctl_of_ip(peer, req->sport, &ev.dst);
	ev.param.pd_len = req->pd_len;
	if (req->pd_len != 0)
		memcpy(ev.param.pd, req->pd, req->pd_len);
	/* the control thread allocates the passive id, named by the token from now on */
	wn_dp_cm_event_post(dp, token, &ev);
	return 0;
}

/* An active exchange is over (wn_cm_sidr_ops.done): ESTABLISHED or UNREACHABLE. */
static void
sidr_done(void *arg, uint32_t id, int status, const struct wn_ud_msg *rep)
{
	struct wn_dp *dp = arg;
	struct wn_ctl_cm_event ev;

	memset(&ev, 0, sizeof(ev));
	if (status == 0) {
		ev.event = WN_CTL_CM_EV_ESTABLISHED;
		ev.qpn = rep->sqpn;
		ev.qkey = rep->qkey;
	} else {
		/* as rdma_cm: a SIDR REP's status as it came (> 0), or -ETIMEDOUT */
		ev.event = WN_CTL_CM_EV_UNREACHABLE;
		ev.status = status;
	}
	if (rep != NULL && rep->pd_len != 0) {
		ev.param.pd_len = rep->pd_len;
		memcpy(ev.param.pd, rep->pd, rep->pd_len);
	}
	wn_dp_cm_event_post(dp, id, &ev);
}

static const struct wn_cm_sidr_ops sidr_ops = {
	.send = sidr_send,
	.done = sidr_done,
	.request = sidr_request,
};

static int
udp_listen(struct wn_dp *dp, const struct wn_server_dp_msg *m)
{
	struct dp_ud *ud = dp->ud;

	if (ud->n_ls == ud->cap_ls) {
		uint32_t cap = ud->cap_ls == 0 ? 8 : 2 * ud->cap_ls;
		struct dp_ud_listen *n = realloc(ud->ls, cap * sizeof(*n));

		if (n == NULL) {
			DP_LOG(ERR, "UDP listen on port %u: no memory\n", m->u.cm.src.port);
			return -ENOMEM;
		}
		ud->ls = n;
		ud->cap_ls = cap;
	}
	ud->ls[ud->n_ls].id = m->u.cm.id;
	ud->ls[ud->n_ls].src = m->u.cm.src;
	ud->n_ls++;
	dp->st.listens++;
	return 0;
}

static void
udp_connect(struct wn_dp *dp, const struct wn_server_dp_msg *m)
{
	struct wn_ip_addr local, peer;
	struct wn_ctl_cm_event ev;
	int rc;

	ip_of_ctl(&m->u.cm.src, &local);
	ip_of_ctl(&m->u.cm.dst, &peer);
	rc = wn_cm_sidr_request(dp->ud->sidr, m->u.cm.id, &local, &peer, WN_CTL_PS_UDP,
				m->u.cm.dst.port, m->u.cm.src.port, m->u.cm.param.pd,
				(uint16_t)m->u.cm.param.pd_len, dp->now);
	if (rc == 0)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.event = WN_CTL_CM_EV_UNREACHABLE;
	ev.status = rc;
	wn_dp_cm_event_post(dp, m->u.cm.id, &ev);
}

/* rdma_accept on a UDP id: the SIDR REP names its QP (a UD QP of ours) and Q_Key. */
static void
udp_accept(struct wn_dp *dp, const struct wn_server_dp_msg *m)
{
	struct dp_qp *qp = m->u.cm.qp != 0 ? wn_dp_obj(dp, m->u.cm.qp, DPO_QP) : NULL;
	const uint8_t *pd = m->u.cm.param.pd;
	uint16_t len = (uint16_t)m->u.cm.param.pd_len;

	if (qp == NULL || qp->ud == NULL)
		(void)wn_cm_sidr_reject(dp->ud->sidr, m->u.cm.conn, WN_UD_SIDR_NO_QP, pd, len,
					dp->now);
	else
		(void)wn_cm_sidr_accept(dp->ud->sidr, m->u.cm.conn, qp->d->qpn,
					wn_ud_qp_qkey(qp->ud), pd, len, dp->now);
}

static void
udp_destroy(struct wn_dp *dp, const struct wn_server_dp_msg *m)
{
	struct dp_ud *ud = dp->ud;

	for (uint32_t i = 0; i < ud->n_ls; i++)
		if (ud->ls[i].id == m->u.cm.id) {
			ud->ls[i] = ud->ls[--ud->n_ls];
			return;
		}
	(void)wn_cm_sidr_forget(ud->sidr, m->u.cm.id, dp->now);
	if (m->u.cm.conn != 0)
		(void)wn_cm_sidr_forget(ud->sidr, m->u.cm.conn, dp->now);
}

bool
wn_dp_ud_cm_msg(struct wn_dp *dp, struct wn_server_dp_msg *m, int *rc)
{
	if (dp->ud == NULL ||
	    (m->u.cm.ps != WN_CTL_PS_UDP && !wn_cm_sidr_is_token(m->u.cm.conn)))
		return false;
	switch (m->type) {
	case WN_SERVER_DP_CM_LISTEN:
		*rc = udp_listen(dp, m);
		break;
	case WN_SERVER_DP_CM_CONNECT:
		udp_connect(dp, m);
		break;
	case WN_SERVER_DP_CM_ACCEPT:
		udp_accept(dp, m);
		break;
	case WN_SERVER_DP_CM_REJECT:
		/* the ULP's, or the control thread's for a listener over its backlog */
		(void)wn_cm_sidr_reject(dp->ud->sidr, m->u.cm.conn, WN_UD_SIDR_REJECT,
					m->u.cm.param.pd, (uint16_t)m->u.cm.param.pd_len,
					dp->now);
		break;
	case WN_SERVER_DP_CM_DESTROY:
		udp_destroy(dp, m);
		break;
	default:
		break; /* nothing is connected: no DISCONNECT */
	}
	return true;
}

/* ---------------------------------------------------------------- QPs, life */

uint32_t
wn_dp_ud_max_msg(const struct wn_dp *dp)
{
	uint32_t mtu = dp->c.mtu != 0 ? dp->c.mtu : 1500, msg = WN_UD_MSG_MAX;

	/* the largest IB MTU a message fits with its headers (QUERY_PORT's active MTU) */
	while (msg > WN_UD_MSG_MIN && msg + WN_CTL_UD_OVERHEAD > mtu)
		msg /= 2;
	return msg;
}

int
wn_dp_ud_qp_add(struct wn_dp *dp, struct dp_qp *qp)
{
	if (dp->ud == NULL)
		return -ENOTSUP;
	return rte_hash_add_key_data(dp->ud->qpns, &qp->d->qpn, qp);
}

void
wn_dp_ud_qp_del(struct wn_dp *dp, struct dp_qp *qp)
{
	if (dp != NULL && dp->ud != NULL)
		(void)rte_hash_del_key(dp->ud->qpns, &qp->d->qpn);
}

void
wn_dp_ud_tick(struct wn_dp *dp)
{
	if (dp->ud != NULL && wn_cm_sidr_count(dp->ud->sidr) != 0)
		wn_cm_sidr_poll(dp->ud->sidr, dp->now);
}

uint64_t
wn_dp_ud_next_timer(const struct wn_dp *dp)
{
	return dp->ud != NULL ? wn_cm_sidr_next(dp->ud->sidr) : UINT64_MAX;
}

void
wn_dp_ud_stats(const struct wn_dp *dp, struct wn_dp_stats *st)
{
	struct wn_cm_sidr_stats s;

	if (dp->ud == NULL)
		return;
	wn_cm_sidr_stats(dp->ud->sidr, &s);
	st->sidr_req_tx = s.req_tx;
	st->sidr_req_rx = s.req_rx;
	st->sidr_rep_tx = s.rep_tx;
	st->sidr_rep_rx = s.rep_rx;
	st->sidr_req_retx = s.req_retx;
	st->sidr_timeouts = s.timeouts;
	st->sidr_unsupported = s.unsupported;
}

int
wn_dp_ud_create(struct wn_dp *dp)
{
	struct wn_cm_sidr_conf sc = {.ops = &sidr_ops, .arg = dp};
	struct rte_hash_parameters hp = {
		.entries = RTE_MAX(1024u, dp->c.max_conns != 0 ? dp->c.max_conns : 1024u),
		.key_len = sizeof(uint32_t),
		.hash_func = rte_jhash,
		.socket_id = (int)rte_socket_id(),
	};
	char name[RTE_HASH_NAMESIZE];
	struct dp_ud *ud;
	int ret;

	ud = calloc(1, sizeof(*ud));
	if (ud == NULL)
		return -ENOMEM;
	dp->ud = ud;
	ud->port = dp->c.ud_port != 0 ? dp->c.ud_port : WN_UD_PORT;
	ud->max_msg = wn_dp_ud_max_msg(dp);
	snprintf(name, sizeof(name), "wn_dp%u_udqp", dp->g->seq);
	hp.name = name;
	ud->qpns = rte_hash_create(&hp);
	ud->sidr = wn_cm_sidr_create(&sc);
	if (ud->qpns == NULL || ud->sidr == NULL)
		return -ENOMEM;
	ret = wn_net_udp_bind(dp->nif, ud->port, ud_rx, dp);
	if (ret != 0)
		DP_LOG(ERR, "UD port %u: %s\n", ud->port, strerror(-ret));
	return ret;
}

void
wn_dp_ud_free(struct wn_dp *dp)
{
	struct dp_ud *ud = dp->ud;

	if (ud == NULL)
		return;
	rte_hash_free(ud->qpns);
	wn_cm_sidr_free(ud->sidr);
	free(ud->ls);
	free(ud);
	dp->ud = NULL;
}
