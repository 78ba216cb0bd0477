/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnicd dataplane: shard creation, the run-to-completion loop of each lcore, software
 * flow steering between shards, loopback and the port's transmit path (dp.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_hash.h>
#include <rte_ip.h>
#include <rte_jhash.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_tcp.h>

#include "dp.h"
#include "wn_impair.h"

#define DP_LOG(lvl, ...) rte_log(RTE_LOG_##lvl, RTE_LOGTYPE_USER1, "warpnicd dp: " __VA_ARGS__)

/* Loop iterations with nothing to do before the lcore naps for idle_us. */
#define IDLE_SPINS 2048
/* Telemetry snapshot period. */
#define TEL_PERIOD_US 100000
/* Frames in flight from one shard to another. */
#define HANDOFF_RING 4096
/* Control messages queued for one shard. */
#define SHARD_CTL_RING 1024

static struct rte_hash *
hash_create(const char *name, uint32_t entries, uint8_t flags)
{
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = entries,
		.key_len = sizeof(uint32_t),
		.hash_func = rte_jhash,
		.socket_id = (int)rte_socket_id(),
		.extra_flag = flags,
	};

	return rte_hash_create(&hp);
}

static struct wn_dp *
shard_create(struct wn_dp_group *g, uint16_t idx)
{
	const struct wn_dp_conf *conf = &g->c;
	struct wn_netif_conf nc;
	struct wn_tcp_ctx_conf tc;
	char name[RTE_RING_NAMESIZE];
	struct wn_dp *dp;
	uint32_t i;

	dp = calloc(1, sizeof(*dp));
	if (dp == NULL)
		return NULL;
	g->shard[idx] = dp;
	dp->c = *conf;
	dp->g = g;
	dp->idx = idx;
	dp->objs = g->objs;
	TAILQ_INIT(&dp->active);
	TAILQ_INIT(&dp->errq);
	TAILQ_INIT(&dp->conns);
	pthread_mutex_init(&dp->tel_lock, NULL);
	snprintf(name, sizeof(name), "wn_dp_cm%u", idx);
	dp->cm_tab = hash_create(name, 2 * (conf->max_conns ? conf->max_conns : 1024) + 64, 0);
	snprintf(name, sizeof(name), "wn_dp_ho%u", idx);
	dp->handoff = rte_ring_create(name, HANDOFF_RING, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (dp->cm_tab == NULL || dp->handoff == NULL)
		return NULL;
	if (idx > 0) {
		snprintf(name, sizeof(name), "wn_dp_ctl%u", idx);
		dp->ctl = rte_ring_create(name, SHARD_CTL_RING, SOCKET_ID_ANY,
					  RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (dp->ctl == NULL)
			return NULL;
	}

	memset(&nc, 0, sizeof(nc));
	nc.port_id = conf->port_id;
	nc.queue_id = idx;
	nc.socket_id = SOCKET_ID_ANY;
	nc.mtu = conf->mtu;
	nc.pool = conf->pool;
	nc.tx_offload_capa = conf->tx_offload_capa;
	nc.rx_offload_capa = conf->rx_offload_capa;
	nc.neigh_entries = 1024;
	rte_eth_macaddr_get(conf->port_id, &nc.mac);
	dp->nif = wn_netif_create(&nc);
	if (dp->nif == NULL)
		return NULL;
	for (i = 0; i < conf->n_addrs; i++)
		if (wn_netif_addr_add(dp->nif, &conf->addrs[i], conf->prefix[i]) < 0)
			return NULL;
	if (conf->has_gw && wn_netif_gateway_set(dp->nif, &conf->gw) < 0)
		return NULL;

	memset(&tc, 0, sizeof(tc));
	tc.socket_id = SOCKET_ID_ANY;
	tc.pool = conf->pool;
	tc.max_conns = conf->max_conns;
	tc.sndbuf = conf->sockbuf;
	tc.rcvbuf = conf->sockbuf;
	tc.mtu = conf->mtu;
	dp->tcp = wn_tcp_ctx_create(&tc);
	if (dp->tcp == NULL || dp_llp_create(dp) != 0)
		return NULL;
	dp_conns_init(dp);
	dp->next_token = 1;
	return dp;
}

struct wn_dp_group *
wn_dp_create(const struct wn_dp_conf *conf, uint16_t n_shards)
{
	struct wn_dp_group *g;
	uint16_t i;

	if (n_shards == 0 || n_shards > DP_MAX_SHARDS) {
		errno = EINVAL;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return NULL;
	g->c = *conf;
	g->n = n_shards;
	/* one writer (shard 0), readers on every shard */
	g->objs = hash_create("wn_dp_objs", 16384, RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY);
	g->cm_owner = hash_create("wn_dp_cmown", 16384, 0);
	if (g->objs == NULL || g->cm_owner == NULL)
		goto fail;
	for (i = 0; i < n_shards; i++)
		if (shard_create(g, i) == NULL)
			goto fail;
	return g;
fail:
	wn_dp_free(g);
	errno = errno ? errno : ENOMEM;
	return NULL;
}

void
dp_ep_of(const struct wn_ctl_addr *a, struct wn_tcp_endpoint *e)
{
	memset(e, 0, sizeof(*e));
	if (a->family == WN_CTL_AF_INET6) {
		e->addr.family = WN_AF_INET6;
		memcpy(e->addr.v6, a->addr, 16);
	} else {
		e->addr.family = WN_AF_INET;
		memcpy(&e->addr.v4, a->addr, 4);
	}
	e->port = a->port;
}

/*
 * The shard of a flow: the Toeplitz hash of its endpoints in a canonical order, so both ends
 * of a connection between two warpnicd instances with the same number of lcores pick the
 * same index; a peer then sends on the queue (memif queue pair) of the owning shard and no
 * frame has to cross shards.
 */
static uint16_t
steer_ep(uint16_t n, const struct wn_tcp_endpoint *l, const struct wn_tcp_endpoint *r)
{
	int c = memcmp(&l->addr, &r->addr, sizeof(l->addr));

	if (c > 0 || (c == 0 && l->port > r->port))
		return (uint16_t)wn_tcp_flow_steer(r, l, n);
	return (uint16_t)wn_tcp_flow_steer(l, r, n);
}

uint16_t
dp_steer(const struct wn_dp_group *g, const struct wn_ctl_addr *local,
	 const struct wn_ctl_addr *remote)
{
	struct wn_tcp_endpoint l, r;

	if (g->n == 1)
		return 0;
	dp_ep_of(local, &l);
	dp_ep_of(remote, &r);
	return steer_ep(g->n, &l, &r);
}

/* ---------------------------------------------------------------- steering */

enum { STEER_BCAST = 0xffff };

/*
 * Which shard a frame belongs to: the owner of its TCP flow, every shard for ARP and
 * ICMPv6 (neighbour tables), this shard for the rest (ICMP echo, fragments).
 */
static uint16_t
steer_frame(const struct wn_dp *dp, const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint16_t type = rte_be_to_cpu_16(eh->ether_type);
	struct wn_tcp_endpoint l, r;
	const uint8_t *l4;

	memset(&l, 0, sizeof(l));
	memset(&r, 0, sizeof(r));
	if (type == RTE_ETHER_TYPE_ARP)
		return STEER_BCAST;
	if (type == RTE_ETHER_TYPE_IPV4 &&
	    rte_pktmbuf_data_len(m) >= sizeof(*eh) + sizeof(struct rte_ipv4_hdr) + 4) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eh + 1);
		uint32_t hl = (ip->version_ihl & 0xf) * 4u;

		if (ip->next_proto_id != IPPROTO_TCP || hl < 20 ||
		    (rte_be_to_cpu_16(ip->fragment_offset) &
		     (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0 ||
		    rte_pktmbuf_data_len(m) < sizeof(*eh) + hl + 4)
			return dp->idx;
		l.addr.family = r.addr.family = WN_AF_INET;
		l.addr.v4 = ip->dst_addr;
		r.addr.v4 = ip->src_addr;
		l4 = (const uint8_t *)ip + hl;
	} else if (type == RTE_ETHER_TYPE_IPV6 &&
		   rte_pktmbuf_data_len(m) >= sizeof(*eh) + sizeof(struct rte_ipv6_hdr) + 4) {
		const struct rte_ipv6_hdr *ip6 = (const struct rte_ipv6_hdr *)(eh + 1);

		if (ip6->proto == IPPROTO_ICMPV6)
			return STEER_BCAST;
		if (ip6->proto != IPPROTO_TCP)
			return dp->idx;
		l.addr.family = r.addr.family = WN_AF_INET6;
		memcpy(l.addr.v6, ip6->dst_addr, 16);
		memcpy(r.addr.v6, ip6->src_addr, 16);
		l4 = (const uint8_t *)(ip6 + 1);
	} else {
		return dp->idx;
	}
	r.port = (uint16_t)(l4[0] << 8 | l4[1]);
	l.port = (uint16_t)(l4[2] << 8 | l4[3]);
	return steer_ep(dp->g->n, &l, &r);
}

static void
handoff(struct wn_dp *dp, uint16_t to, struct rte_mbuf *m)
{
	if (rte_ring_mp_enqueue(dp->g->shard[to]->handoff, m) != 0) {
		dp->st.handoff_drop++;
		rte_pktmbuf_free(m);
		return;
	}
	dp->st.handoff_tx++;
}

/* Keep this shard's frames at the front of @p pkts, hand the others over. @return kept. */
static uint16_t
steer_burst(struct wn_dp *dp, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t i, k = 0;

	for (i = 0; i < n; i++) {
		uint16_t to = steer_frame(dp, pkts[i]);

		if (to == dp->idx) {
			pkts[k++] = pkts[i];
		} else if (to == STEER_BCAST) {
			for (uint16_t s = 0; s < dp->g->n; s++) {
				struct rte_mbuf *c;

				if (s == dp->idx)
					continue;
				c = rte_pktmbuf_copy(pkts[i], dp->c.pool, 0, UINT32_MAX);
				if (c == NULL)
					dp->st.handoff_drop++;
				else
					handoff(dp, s, c);
			}
			pkts[k++] = pkts[i];
		} else {
			handoff(dp, to, pkts[i]);
		}
	}
	return k;
}

/*
 * Segments to one of our own addresses (a client connecting to a listener of this same
 * instance) never reach the wire: they go back into TCP input, as the kernel's loopback
 * does, with their checksums marked good (never computed). A segment whose connection lives
 * on another shard gets an Ethernet header and goes through that shard's handoff ring.
 * @return the packets left for the port, compacted at the front of @p pkts.
 */
static uint16_t
loopback(struct wn_dp *dp, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *loop[DP_BURST];
	uint16_t i, k = 0, nl = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);
		struct wn_ip_addr dst;
		struct rte_ether_hdr *eh;
		uint16_t to;

		memset(&dst, 0, sizeof(dst));
		if ((ip[0] >> 4) == 4) {
			dst.family = WN_AF_INET;
			memcpy(&dst.v4, ip + 16, 4);
		} else {
			dst.family = WN_AF_INET6;
			memcpy(dst.v6, ip + 24, 16);
		}
		if (!wn_netif_is_local(dp->nif, &dst)) {
			pkts[k++] = m;
			continue;
		}
		dp->st.loopback_pkts++;
		if (m->nb_segs > 1) {
			/* a zero-copy chain: TCP input wants one contiguous frame, as a NIC's */
			struct rte_mbuf *f = rte_pktmbuf_copy(m, dp->c.pool, 0, UINT32_MAX);

			rte_pktmbuf_free(m);
			if (f == NULL) {
				dp->st.tx_drop++;
				continue;
			}
			dp->st.loopback_copies++;
			m = f;
		}
		m->ol_flags = RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		eh = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, sizeof(*eh));
		if (eh == NULL) {
			rte_pktmbuf_free(m);
			continue;
		}
		rte_eth_macaddr_get(dp->c.port_id, &eh->src_addr);
		eh->dst_addr = eh->src_addr;
		eh->ether_type = rte_cpu_to_be_16(dst.family == WN_AF_INET ? RTE_ETHER_TYPE_IPV4
									    : RTE_ETHER_TYPE_IPV6);
		to = dp->g->n > 1 ? steer_frame(dp, m) : dp->idx;
		if (to != dp->idx && to != STEER_BCAST) {
			handoff(dp, to, m);
			continue;
		}
		rte_pktmbuf_adj(m, sizeof(*eh));
		loop[nl++] = m;
	}
	if (nl > 0)
		wn_tcp_rx_bulk(dp->tcp, loop, nl, dp->now);
	return k;
}

/* ---------------------------------------------------------------- loop */

static void
port_tx(struct wn_dp *dp, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent = 0, i;
	unsigned int tries;

	wn_pcap_capture(dp->c.pcap, dp->c.port_id, dp->idx, pkts, n, RTE_PCAPNG_DIRECTION_OUT);
	for (tries = 0; sent < n && tries < 64; tries++) {
		sent += rte_eth_tx_burst(dp->c.port_id, dp->idx, pkts + sent, n - sent);
		if (sent < n && dp->idx == 0)
			wn_impair_poll_all(); /* a face's tx ring drains only when polled */
	}
	dp->st.tx_pkts += sent;
	for (i = sent; i < n; i++) {
		rte_pktmbuf_free(pkts[i]);
		dp->st.tx_drop++;
	}
}

/* The counters lib/cm and the lower layer keep, under the dataplane's names. */
static void
stats_collect(struct wn_dp *dp)
{
	struct wn_llp_stats ls;
	const struct wn_cm_stats *cs = &dp->cm.st;

	wn_llp_stats(dp->llp, &ls);
	dp->st.conns_active = cs->conns_active;
	dp->st.conns_passive = cs->conns_passive;
	dp->st.conns_established = cs->conns_established;
	dp->st.conns_failed = cs->conns_failed;
	dp->st.conns_rejected = cs->conns_rejected;
	dp->st.mpa_errors = ls.errors;
	dp->st.mpa_crc_errors = ls.crc_errors;
	dp->st.rx_fpdus = ls.rx_ulpdus;
	dp->st.tx_fpdus = ls.tx_ulpdus;
	dp->st.tx_again = ls.tx_again;
	dp->st.zc_fpdus = ls.zc_ulpdus;
	dp->st.zc_bytes = ls.zc_bytes;
	dp->st.zc_released = ls.zc_released;
	dp->st.zc_fallback = ls.zc_fallback;
	dp->st.copy_fpdus = ls.copy_ulpdus;
	dp->st.copy_bytes = ls.copy_bytes;
}

static void
tel_refresh(struct wn_dp *dp)
{
	struct dp_conn *c;
	struct dp_qp *qp;
	uint32_t n = 0;

	pthread_mutex_lock(&dp->tel_lock);
	stats_collect(dp);
	dp->tel_dp = dp->st;
	wn_net_stats_get(dp->nif, &dp->tel_net);
	wn_tcp_stats_get(dp->tcp, &dp->tel_tcp);
	TAILQ_FOREACH(qp, &dp->active, next) {
		if (n == DP_TEL_QPS)
			break;
		dp->tel_qp[n].handle = qp->handle;
		dp->tel_qp[n].qpn = qp->d->qpn;
		dp->tel_qp[n].state = wn_rnic_qp_state(qp->eng);
		dp->tel_qp[n].conn_state = qp->conn != NULL ? wn_cm_state(&qp->conn->ep)
							    : WN_CM_CLOSED;
		wn_rnic_qp_stats(qp->eng, &dp->tel_qp[n].s);
		n++;
	}
	dp->tel_nqp = n;
	n = 0;
	TAILQ_FOREACH(c, &dp->conns, next) {
		struct wn_llp *l = wn_cm_llp(&c->ep);

		if (n == DP_TEL_QPS)
			break;
		if (l == NULL)
			continue;
		dp->tel_conn[n].id = c->id;
		dp->tel_conn[n].qpn = c->qp != NULL ? c->qp->d->qpn : 0;
		dp->tel_conn[n].state = wn_cm_state(&c->ep);
		wn_llp_info(l, &dp->tel_conn[n].llp);
		n++;
	}
	dp->tel_nconn = n;
	pthread_mutex_unlock(&dp->tel_lock);
}

int
wn_dp_run(struct wn_dp_group *g, uint16_t idx, volatile int *quit)
{
	struct wn_dp *dp = g->shard[idx];
	struct rte_mbuf *pkts[2 * DP_BURST];
	void *msgs[DP_BURST];
	unsigned int idle = 0, i;
	uint16_t n, k;
	int ret;

	dp->quit = quit;
	/* naps of --idle-us must not be stretched by the default 50 us timer slack */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	if (dp->c.qs != NULL) {
		ret = rte_rcu_qsbr_thread_register(dp->c.qs, idx);
		if (ret != 0)
			return ret;
		rte_rcu_qsbr_thread_online(dp->c.qs, idx);
	}
	dp->now = wn_net_now_us();
	ret = wn_net_start(dp->nif, dp->now);
	if (ret < 0)
		return ret;
	atomic_fetch_add(&g->running, 1);
	while (!*quit) {
		unsigned int work = 0;
		struct dp_qp *qp, *tmp;

		dp->now = wn_net_now_us();
		dp->st.loops++;
		if (idx == 0)
			wn_impair_poll_all();
		n = rte_eth_rx_burst(dp->c.port_id, idx, pkts, DP_BURST);
		if (n > 0) {
			work += n;
			dp->st.rx_pkts += n;
			wn_pcap_capture(dp->c.pcap, dp->c.port_id, idx, pkts, n,
					RTE_PCAPNG_DIRECTION_IN);
			if (g->n > 1)
				n = steer_burst(dp, pkts, n);
		}
		if (g->n > 1) {
			k = (uint16_t)rte_ring_sc_dequeue_burst(dp->handoff, (void **)pkts + n,
								 DP_BURST, NULL);
			dp->st.handoff_rx += k;
			work += k;
			n += k;
		}
		if (n > 0) {
			n = wn_net_rx_bulk(dp->nif, pkts, n, dp->now);
			if (n > 0)
				wn_tcp_rx_bulk(dp->tcp, pkts, n, dp->now);
		}
		/* lower-layer timers; zero-copy FPDUs ACKed and in no mbuf: unpin, complete */
		work += wn_llp_poll(dp->llp, dp->now);
		if (idx == 0) {
			n = (uint16_t)rte_ring_dequeue_burst(dp->c.to_dp, msgs, DP_BURST, NULL);
			for (i = 0; i < n; i++)
				dp_dispatch(dp, msgs[i]);
		} else {
			n = (uint16_t)rte_ring_dequeue_burst(dp->ctl, msgs, DP_BURST, NULL);
			for (i = 0; i < n; i++)
				dp_local_msg(dp, msgs[i]);
		}
		work += n;
		RTE_TAILQ_FOREACH_SAFE(qp, &dp->active, next, tmp) {
			if (qp->llp == NULL || !wn_llp_tx_ready(qp->llp))
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
			rte_rcu_qsbr_quiescent(dp->c.qs, idx);
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
		rte_rcu_qsbr_thread_offline(dp->c.qs, idx);
		rte_rcu_qsbr_thread_unregister(dp->c.qs, idx);
	}
	atomic_fetch_sub(&g->running, 1);
	return 0;
}

static void
shard_free(struct wn_dp *dp)
{
	void *m;

	if (dp == NULL)
		return;
	if (dp->handoff != NULL)
		while (rte_ring_dequeue(dp->handoff, &m) == 0)
			rte_pktmbuf_free(m);
	if (dp->ctl != NULL)
		while (rte_ring_dequeue(dp->ctl, &m) == 0)
			free(m);
	rte_ring_free(dp->handoff);
	rte_ring_free(dp->ctl);
	wn_mpa_tcp_free(dp->llp);
	wn_tcp_ctx_free(dp->tcp);
	wn_netif_free(dp->nif);
	rte_hash_free(dp->cm_tab);
	pthread_mutex_destroy(&dp->tel_lock);
	free(dp->dereg);
	free(dp);
}

void
wn_dp_free(struct wn_dp_group *g)
{
	if (g == NULL)
		return;
	dp_tel_unregister(g);
	dp_objs_free(g);
	for (uint16_t i = 0; i < DP_MAX_SHARDS; i++)
		shard_free(g->shard[i]);
	rte_hash_free(g->objs);
	rte_hash_free(g->cm_owner);
	free(g);
}
