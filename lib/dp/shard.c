/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp: creating and freeing the shards of a dataplane (wn_dp.h, dp_priv.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_random.h>

#include "dp_priv.h"

RTE_LOG_REGISTER_DEFAULT(wn_dp_logtype, INFO);

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
		.hash_func = rte_hash_crc,
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
	dp->epfd = -1;
	TAILQ_INIT(&dp->active);
	TAILQ_INIT(&dp->ready);
	dp->rmap = g->ready != NULL ? &g->ready[idx] : NULL;
	TAILQ_INIT(&dp->errq);
	TAILQ_INIT(&dp->conns);
	TAILQ_INIT(&dp->reap);
	pthread_mutex_init(&dp->tel_lock, NULL);
	snprintf(name, sizeof(name), "wn_dp%u_cm%u", g->seq, idx);
	dp->cm_tab = hash_create(name, 2 * (conf->max_conns ? conf->max_conns : 1024) + 64, 0);
	snprintf(name, sizeof(name), "wn_dp%u_ho%u", g->seq, idx);
	dp->handoff = rte_ring_create(name, HANDOFF_RING, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (dp->cm_tab == NULL || dp->handoff == NULL)
		return NULL;
	if (idx > 0) {
		snprintf(name, sizeof(name), "wn_dp%u_ctl%u", g->seq, idx);
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
	nc.cksum = conf->cksum;
	nc.neigh_entries = 1024;
	/* every shard sees every ARP and NDP frame (dp_steer.c); shard 0 answers them */
	nc.secondary = idx > 0;
	nc.dad_seed = g->dad_seed;
	rte_eth_macaddr_get(conf->port_id, &nc.mac);
	dp->nif = wn_net_if_create(&nc);
	if (dp->nif == NULL)
		return NULL;
	for (i = 0; i < conf->n_addrs; i++)
		if (wn_net_if_addr_add(dp->nif, &conf->addrs[i], conf->prefix[i]) < 0)
			return NULL;
	if (conf->has_gw && wn_net_if_gateway_set(dp->nif, &conf->gw) < 0)
		return NULL;

	memset(&tc, 0, sizeof(tc));
	tc.socket_id = SOCKET_ID_ANY;
	tc.pool = conf->pool;
	tc.max_conns = conf->max_conns;
	/* a connection in TIME-WAIT is over for MPA and lib/cm (its stream and endpoint go);
	 * lib/tcp keeps its 4-tuple without buffers, and recycles it when the table is full */
	tc.flags = WN_TCP_F_DEFAULTS | WN_TCP_F_TW_DETACH;
	tc.sndbuf = conf->sockbuf;
	tc.rcvbuf = conf->sockbuf;
	tc.send_budget = conf->tx_budget;
	tc.mtu = conf->mtu;
	dp->tcp = wn_tcp_ctx_create(&tc);
	if (dp->tcp == NULL || wn_dp_llp_create(dp) != 0 || (idx == 0 && wn_dp_ud_create(dp) != 0))
		return NULL;
	wn_dp_conns_init(dp);
	dp->next_token = 1;
	if (idx == 0 && wn_dp_ib_listen(dp) != 0)
		return NULL;
	return dp;
}

struct wn_dp_group *
wn_dp_create(const struct wn_dp_conf *conf, uint16_t n_shards)
{
	static uint32_t seq; /* names of the DPDK objects of each dataplane of the process */
	char name[RTE_HASH_NAMESIZE];
	struct wn_dp_group *g;
	uint32_t max_conns;
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
	g->seq = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);
	g->bell_fd = -1;
	for (i = 0; i < DP_MAX_SHARDS; i++)
		g->bell_efd[i] = -1;
	errno = -wn_dp_bells_create(g);
	if (errno != 0)
		goto fail;
	/*
	 * one writer (shard 0), readers on every shard; room for a QP and its two CQs (and
	 * some to spare) per connection of every shard, and a CM id per connection
	 */
	max_conns = (conf->max_conns != 0 ? conf->max_conns : 1024) * n_shards;
	snprintf(name, sizeof(name), "wn_dp%u_objs", g->seq);
	g->objs = hash_create(name, RTE_MAX(16384u, 4 * max_conns),
			      RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY);
	snprintf(name, sizeof(name), "wn_dp%u_cmown", g->seq);
	g->cm_owner = hash_create(name, RTE_MAX(16384u, 2 * max_conns + 64), 0);
	if (g->objs == NULL || g->cm_owner == NULL)
		goto fail;
	g->dad_seed = rte_rand();
	for (i = 0; i < n_shards; i++)
		if (shard_create(g, i) == NULL)
			goto fail;
	return g;
fail:
	wn_dp_free(g);
	errno = errno ? errno : ENOMEM;
	return NULL;
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
	wn_dp_msgq_free(&dp->ctl_wait);
	wn_dp_qps_free(dp);
	for (uint16_t i = 0; i < DP_MAX_SHARDS; i++)
		wn_dp_msgq_free(&dp->fwd_wait[i]);
	wn_dp_embed_free(dp); /* its listeners are the lower layer's */
	wn_dp_ib_unlisten(dp);
	wn_dp_ud_free(dp);
	wn_dp_llp_free(dp);
	wn_tcp_ctx_free(dp->tcp);
	wn_net_if_free(dp->nif);
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
	wn_dp_tel_unregister(g);
	wn_dp_objs_free(g);
	for (uint16_t i = 0; i < DP_MAX_SHARDS; i++)
		shard_free(g->shard[i]);
	rte_hash_free(g->objs);
	rte_hash_free(g->cm_owner);
	wn_dp_bells_free(g);
	free(g);
}
