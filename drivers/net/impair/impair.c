/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_wn_impair: the face port (net_ring), ownership of the underlying port,
 * the poll loop, counters and the --vdev argument bridge.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "impair_pipe.h"
#include "wn_dpdk_compat.h"
#include "wn_impair.h"

RTE_LOG_REGISTER_DEFAULT(wn_impair_logtype, INFO);
#define IMPAIR_LOG(level, fmt, ...)                                                                \
	rte_log(RTE_LOG_##level, wn_impair_logtype, "wn_impair: " fmt "\n", ##__VA_ARGS__)

#define IMPAIR_BURST 32
#define IMPAIR_RING_SIZE 4096
#define IMPAIR_NB_DESC 1024

struct impair_queue {
	struct rte_ring *rx_ring; /* face rx: the impairer produces, the application consumes */
	struct rte_ring *tx_ring; /* face tx: the application produces, the impairer consumes */
	struct impair_pipe rx;
	struct impair_pipe tx;
};

struct impair_port {
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t face_id;
	uint16_t under_id;
	struct rte_eth_dev_owner owner;
	struct wn_impair_conf conf;
	uint64_t down_until;       /* link down until this TSC (0: up); any thread writes */
	uint32_t mangle_next[2];   /* rx, tx: segments still to mangle; any thread adds */
	struct impair_queue q[WN_IMPAIR_MAX_QUEUES];
};

static struct impair_port *impair_ports[RTE_MAX_ETHPORTS];
/* the face ids in impair_ports, so that wn_impair_poll_all(), called on every loop
 * iteration of an lcore (most of them finding nothing), does not scan the whole table */
static uint16_t faces[RTE_MAX_ETHPORTS];
static unsigned int nb_faces;

static void
faces_update(void)
{
	nb_faces = 0;
	for (uint16_t p = 0; p < RTE_MAX_ETHPORTS; p++)
		if (impair_ports[p] != NULL)
			faces[nb_faces++] = p;
}

static struct {
	char *spec[WN_IMPAIR_MAX_PENDING];
	unsigned int n;
} pending;

static struct impair_port *
port_get(uint16_t port_id)
{
	if (port_id >= RTE_MAX_ETHPORTS)
		return NULL;
	return impair_ports[port_id];
}

int
wn_impair_is_face(uint16_t port_id)
{
	return port_get(port_id) != NULL;
}

int
wn_impair_under(uint16_t port_id)
{
	const struct impair_port *ip = port_get(port_id);

	return ip != NULL ? ip->under_id : -ENODEV;
}

static int
resolve_port(const char *spec, uint16_t *id)
{
	char *end;
	unsigned long v;

	if (rte_eth_dev_get_port_by_name(spec, id) == 0)
		return 0;
	v = strtoul(spec, &end, 10);
	if (*spec != '\0' && *end == '\0' && v < RTE_MAX_ETHPORTS && rte_eth_dev_is_valid_port(v)) {
		*id = (uint16_t)v;
		return 0;
	}
	return -ENODEV;
}

static int
under_start(struct impair_port *ip, struct rte_mempool *mp)
{
	struct rte_eth_conf pconf;
	struct rte_eth_dev_info info;
	uint16_t nb_rxd = IMPAIR_NB_DESC, nb_txd = IMPAIR_NB_DESC;
	uint16_t nq = ip->conf.queues, q;
	int socket = rte_eth_dev_socket_id(ip->under_id);
	int ret;

	ret = rte_eth_dev_info_get(ip->under_id, &info);
	if (ret < 0)
		return ret;
	if (nq > info.max_rx_queues || nq > info.max_tx_queues) {
		IMPAIR_LOG(ERR, "%s: port %s has fewer than %u queues", ip->name, ip->conf.port,
			   nq);
		return -EINVAL;
	}
	memset(&pconf, 0, sizeof(pconf));
	ret = rte_eth_dev_configure(ip->under_id, nq, nq, &pconf);
	if (ret < 0)
		return ret;
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(ip->under_id, &nb_rxd, &nb_txd);
	if (ret < 0)
		return ret;
	if (socket < 0)
		socket = (int)rte_socket_id();
	for (q = 0; q < nq; q++) {
		ret = rte_eth_rx_queue_setup(ip->under_id, q, nb_rxd, socket, NULL, mp);
		if (ret < 0)
			return ret;
		ret = rte_eth_tx_queue_setup(ip->under_id, q, nb_txd, socket, NULL);
		if (ret < 0)
			return ret;
	}
	ret = rte_eth_dev_start(ip->under_id);
	if (ret < 0)
		return ret;
	/* transparent: let everything through, the application filters */
	(void)rte_eth_promiscuous_enable(ip->under_id);
	(void)rte_eth_allmulticast_enable(ip->under_id);
	return 0;
}

static void
port_free(struct impair_port *ip)
{
	unsigned int q;
	void *m;

	for (q = 0; q < WN_IMPAIR_MAX_QUEUES; q++) {
		struct impair_queue *iq = &ip->q[q];

		impair_pipe_fini(&iq->rx);
		impair_pipe_fini(&iq->tx);
		if (iq->rx_ring != NULL) {
			while (rte_ring_dequeue(iq->rx_ring, &m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(iq->rx_ring);
		}
		if (iq->tx_ring != NULL) {
			while (rte_ring_dequeue(iq->tx_ring, &m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(iq->tx_ring);
		}
	}
	rte_free(ip);
}

static int
queues_create(struct impair_port *ip, int socket)
{
	char rname[RTE_RING_NAMESIZE];
	uint16_t q;
	int ret;

	for (q = 0; q < ip->conf.queues; q++) {
		struct impair_queue *iq = &ip->q[q];
		/* one independent stream per (seed, queue, direction) */
		uint64_t s = ip->conf.seed * 0x100000001B3ull + (uint64_t)q * 2;

		snprintf(rname, sizeof(rname), "wnimp_r%u_%u", ip->under_id, q);
		iq->rx_ring = rte_ring_create(rname, IMPAIR_RING_SIZE, socket,
					      RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(rname, sizeof(rname), "wnimp_t%u_%u", ip->under_id, q);
		iq->tx_ring = rte_ring_create(rname, IMPAIR_RING_SIZE, socket,
					      RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (iq->rx_ring == NULL || iq->tx_ring == NULL)
			return -rte_errno;
		ret = impair_pipe_init(&iq->rx, &ip->conf.rx, &ip->conf, s, false, socket,
				       &ip->mangle_next[0], &ip->down_until);
		if (ret < 0)
			return ret;
		ret = impair_pipe_init(&iq->tx, &ip->conf.tx, &ip->conf, s + 1, true, socket,
				       &ip->mangle_next[1], &ip->down_until);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int
face_create(struct impair_port *ip, int socket)
{
	struct rte_ring *rx[WN_IMPAIR_MAX_QUEUES], *tx[WN_IMPAIR_MAX_QUEUES];
	struct rte_ether_addr mac;
	uint16_t q;
	int id;

	for (q = 0; q < ip->conf.queues; q++) {
		rx[q] = ip->q[q].rx_ring;
		tx[q] = ip->q[q].tx_ring;
	}
	id = rte_eth_from_rings(ip->name, rx, ip->conf.queues, tx, ip->conf.queues,
			       (unsigned int)socket);
	if (id < 0)
		return -rte_errno;
	ip->face_id = (uint16_t)id;
	if (rte_eth_macaddr_get(ip->under_id, &mac) == 0 &&
	    rte_eth_dev_default_mac_addr_set(ip->face_id, &mac) < 0)
		IMPAIR_LOG(DEBUG, "%s: face keeps its own MAC address", ip->name);
	return 0;
}

int
wn_impair_create(const char *name, const char *args, struct rte_mempool *mp)
{
	struct impair_port *ip;
	int socket, ret;

	if (name == NULL || mp == NULL || strlen(name) >= RTE_ETH_NAME_MAX_LEN - 16)
		return -EINVAL;
	ip = rte_zmalloc("wn_impair", sizeof(*ip), RTE_CACHE_LINE_SIZE);
	if (ip == NULL)
		return -ENOMEM;
	snprintf(ip->name, sizeof(ip->name), "%s", name);
	ret = wn_impair_conf_parse(args, &ip->conf);
	if (ret < 0) {
		IMPAIR_LOG(ERR, "%s: bad arguments '%s'", name, args != NULL ? args : "");
		goto fail;
	}
	ret = resolve_port(ip->conf.port, &ip->under_id);
	if (ret < 0) {
		IMPAIR_LOG(ERR, "%s: no port '%s'", name, ip->conf.port);
		goto fail;
	}
	ret = rte_eth_dev_owner_new(&ip->owner.id);
	if (ret < 0)
		goto fail;
	snprintf(ip->owner.name, sizeof(ip->owner.name), "wn_impair:%s", name);
	ret = rte_eth_dev_owner_set(ip->under_id, &ip->owner);
	if (ret < 0) {
		IMPAIR_LOG(ERR, "%s: port %s is owned already", name, ip->conf.port);
		ret = -EBUSY;
		goto fail;
	}
	socket = rte_eth_dev_socket_id(ip->under_id);
	if (socket < 0)
		socket = (int)rte_socket_id();
	ret = queues_create(ip, socket);
	if (ret < 0)
		goto fail_owned;
	ret = under_start(ip, mp);
	if (ret < 0) {
		IMPAIR_LOG(ERR, "%s: starting port %s failed: %s", name, ip->conf.port,
			   strerror(-ret));
		goto fail_owned;
	}
	ret = face_create(ip, socket);
	if (ret < 0)
		goto fail_started;
	impair_ports[ip->face_id] = ip;
	faces_update();
	IMPAIR_LOG(INFO,
		   "%s: port %u wraps %s (port %u); rx drop=%g dup=%g reorder=%g corrupt=%g "
		   "mangle=%g delay=%uus jitter=%uus; tx drop=%g dup=%g reorder=%g corrupt=%g "
		   "mangle=%g delay=%uus jitter=%uus; seed=%" PRIu64,
		   name, ip->face_id, ip->conf.port, ip->under_id, ip->conf.rx.drop,
		   ip->conf.rx.dup, ip->conf.rx.reorder, ip->conf.rx.corrupt, ip->conf.rx.mangle,
		   ip->conf.rx.delay_us, ip->conf.rx.jitter_us, ip->conf.tx.drop, ip->conf.tx.dup,
		   ip->conf.tx.reorder, ip->conf.tx.corrupt, ip->conf.tx.mangle,
		   ip->conf.tx.delay_us, ip->conf.tx.jitter_us, ip->conf.seed);
	return ip->face_id;

fail_started:
	(void)rte_eth_dev_stop(ip->under_id);
fail_owned:
	(void)rte_eth_dev_owner_unset(ip->under_id, ip->owner.id);
fail:
	port_free(ip);
	return ret;
}

/* underlying rx → impairer → face rx ring */
static unsigned int
poll_rx(struct impair_port *ip, uint16_t q, uint64_t now)
{
	struct impair_queue *iq = &ip->q[q];
	struct rte_mbuf *pkts[IMPAIR_BURST];
	struct rte_mbuf **head;
	uint32_t n, room, sent;
	uint16_t nb = 0, i;

	impair_pipe_tick(&iq->rx, now);
	room = impair_pipe_out_room(&iq->rx);
	if (room >= 2 * IMPAIR_BURST + IMPAIR_HELD_MAX) {
		nb = rte_eth_rx_burst(ip->under_id, q, pkts, IMPAIR_BURST);
		for (i = 0; i < nb; i++)
			impair_pipe_push(&iq->rx, pkts[i]);
	}
	while (impair_pipe_out_count(&iq->rx) > 0) {
		head = impair_pipe_out_peek(&iq->rx, &n);
		sent = rte_ring_enqueue_burst(iq->rx_ring, (void **)head, n, NULL);
		impair_pipe_out_consume(&iq->rx, sent);
		if (sent < n)
			break;
	}
	return nb;
}

/* face tx ring → impairer → underlying tx */
static unsigned int
poll_tx(struct impair_port *ip, uint16_t q, uint64_t now)
{
	struct impair_queue *iq = &ip->q[q];
	struct rte_mbuf *pkts[IMPAIR_BURST];
	struct rte_mbuf **head;
	uint32_t n, room, sent;
	unsigned int nb = 0, i;

	impair_pipe_tick(&iq->tx, now);
	room = impair_pipe_out_room(&iq->tx);
	if (room >= 2 * IMPAIR_BURST + IMPAIR_HELD_MAX) {
		nb = rte_ring_dequeue_burst(iq->tx_ring, (void **)pkts, IMPAIR_BURST, NULL);
		for (i = 0; i < nb; i++)
			impair_pipe_push(&iq->tx, pkts[i]);
	}
	while (impair_pipe_out_count(&iq->tx) > 0) {
		head = impair_pipe_out_peek(&iq->tx, &n);
		if (n > UINT16_MAX)
			n = UINT16_MAX;
		sent = rte_eth_tx_burst(ip->under_id, q, head, (uint16_t)n);
		impair_pipe_out_consume(&iq->tx, sent);
		if (sent < n)
			break;
	}
	return nb;
}

int
wn_impair_poll(uint16_t port_id)
{
	struct impair_port *ip = port_get(port_id);
	uint64_t now;
	unsigned int n = 0;
	uint16_t q;

	if (ip == NULL)
		return -ENODEV;
	now = rte_get_tsc_cycles();
	for (q = 0; q < ip->conf.queues; q++) {
		n += poll_rx(ip, q, now);
		n += poll_tx(ip, q, now);
	}
	return (int)n;
}

int
wn_impair_poll_all(void)
{
	int n = 0;

	for (unsigned int i = 0; i < nb_faces; i++)
		n += wn_impair_poll(faces[i]);
	return n;
}

static void
stats_add(struct wn_impair_stats *sum, const struct wn_impair_stats *s)
{
	sum->in += s->in;
	sum->out += s->out;
	sum->drop += s->drop;
	sum->dup += s->dup;
	sum->reorder += s->reorder;
	sum->delay += s->delay;
	sum->corrupt += s->corrupt;
	sum->overflow += s->overflow;
	sum->nomem += s->nomem;
	sum->mangle += s->mangle;
	sum->down += s->down;
}

int
wn_impair_stats_get(uint16_t port_id, struct wn_impair_stats *rx, struct wn_impair_stats *tx)
{
	struct impair_port *ip = port_get(port_id);
	struct wn_impair_stats r, t;
	uint16_t q;

	if (ip == NULL)
		return -ENODEV;
	memset(&r, 0, sizeof(r));
	memset(&t, 0, sizeof(t));
	for (q = 0; q < ip->conf.queues; q++) {
		stats_add(&r, &ip->q[q].rx.st);
		stats_add(&t, &ip->q[q].tx.st);
	}
	if (rx != NULL)
		*rx = r;
	if (tx != NULL)
		*tx = t;
	return 0;
}

int
wn_impair_xstats_get(uint16_t port_id, struct rte_eth_xstat_name *names, uint64_t *values,
		     unsigned int n)
{
	static const char *const field[WN_IMPAIR_NB_XSTATS_PER_DIR] = {
		"in",	   "out",   "drop",   "dup",    "reorder", "delay",
		"corrupt", "overflow", "nomem", "mangle", "down",
	};
	struct wn_impair_stats st[2];
	unsigned int d, i, k = 0;
	int ret;

	ret = wn_impair_stats_get(port_id, &st[0], &st[1]);
	if (ret < 0)
		return ret;
	if (n < 2 * WN_IMPAIR_NB_XSTATS_PER_DIR)
		return 2 * WN_IMPAIR_NB_XSTATS_PER_DIR;
	for (d = 0; d < 2; d++) {
		const uint64_t v[WN_IMPAIR_NB_XSTATS_PER_DIR] = {
			st[d].in,      st[d].out,	 st[d].drop,  st[d].dup,
			st[d].reorder, st[d].delay,	 st[d].corrupt, st[d].overflow,
			st[d].nomem,   st[d].mangle, st[d].down,
		};

		for (i = 0; i < WN_IMPAIR_NB_XSTATS_PER_DIR; i++, k++) {
			if (names != NULL)
				snprintf(names[k].name, sizeof(names[k].name), "%s_impair_%s",
					 d == 0 ? "rx" : "tx", field[i]);
			if (values != NULL)
				values[k] = v[i];
		}
	}
	return (int)k;
}

int
wn_impair_link_down(uint16_t port_id, uint32_t ms)
{
	struct impair_port *ip = port_get(port_id);
	uint64_t until = 0;

	if (ip == NULL)
		return -ENODEV;
	if (ms > 0) {
		until = rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000 * ms;
		if (until == 0)
			until = 1;
	}
	__atomic_store_n(&ip->down_until, until, __ATOMIC_RELAXED);
	IMPAIR_LOG(INFO, "%s: link %s", ip->name, ms > 0 ? "down" : "up");
	return 0;
}

int
wn_impair_mangle_next(uint16_t port_id, int tx, uint32_t n)
{
	struct impair_port *ip = port_get(port_id);

	if (ip == NULL)
		return -ENODEV;
	__atomic_fetch_add(&ip->mangle_next[tx ? 1 : 0], n, __ATOMIC_RELAXED);
	return 0;
}

int
wn_impair_destroy(uint16_t port_id)
{
	struct impair_port *ip = port_get(port_id);
	char face[RTE_ETH_NAME_MAX_LEN];

	if (ip == NULL)
		return -ENODEV;
	impair_ports[port_id] = NULL;
	faces_update();
	(void)rte_eth_dev_stop(ip->face_id);
	/* remove the face's vdev too, so that the name can be used again */
	if (rte_eth_dev_get_name_by_port(ip->face_id, face) != 0 || rte_vdev_uninit(face) != 0)
		(void)rte_eth_dev_close(ip->face_id);
	(void)rte_eth_dev_stop(ip->under_id);
	(void)rte_eth_dev_owner_unset(ip->under_id, ip->owner.id);
	port_free(ip);
	return 0;
}

static int
take_spec(const char *spec)
{
	if (strncmp(spec, WN_IMPAIR_VDEV_PREFIX, strlen(WN_IMPAIR_VDEV_PREFIX)) != 0)
		return 0;
	if (pending.n == WN_IMPAIR_MAX_PENDING)
		return -E2BIG;
	pending.spec[pending.n] = strdup(spec);
	if (pending.spec[pending.n] == NULL)
		return -ENOMEM;
	pending.n++;
	return 1;
}

int
wn_impair_argv_extract(int argc, char **argv)
{
	int i, o = 0, ret;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			/* application options follow: leave them alone */
			for (; i < argc; i++)
				argv[o++] = argv[i];
			break;
		}
		if (strcmp(argv[i], "--vdev") == 0 && i + 1 < argc) {
			ret = take_spec(argv[i + 1]);
			if (ret < 0)
				return ret;
			if (ret == 1) {
				i++;
				continue;
			}
		} else if (strncmp(argv[i], "--vdev=", 7) == 0) {
			ret = take_spec(argv[i] + 7);
			if (ret < 0)
				return ret;
			if (ret == 1)
				continue;
		}
		argv[o++] = argv[i];
	}
	if (o < argc)
		argv[o] = NULL;
	return o;
}

int
wn_impair_create_pending(struct rte_mempool *mp, uint16_t *port_ids, unsigned int n)
{
	unsigned int i, done = 0;
	char name[RTE_ETH_NAME_MAX_LEN];
	int ret = 0;

	for (i = 0; i < pending.n; i++) {
		const char *spec = pending.spec[i];
		const char *comma = strchr(spec, ',');
		size_t len = comma != NULL ? (size_t)(comma - spec) : strlen(spec);

		if (len >= sizeof(name)) {
			ret = -EINVAL;
			break;
		}
		memcpy(name, spec, len);
		name[len] = '\0';
		ret = wn_impair_create(name, comma != NULL ? comma + 1 : "", mp);
		if (ret < 0)
			break;
		if (port_ids != NULL && done < n)
			port_ids[done] = (uint16_t)ret;
		done++;
	}
	for (i = 0; i < pending.n; i++)
		free(pending.spec[i]);
	pending.n = 0;
	return ret < 0 ? ret : (int)done;
}

/* Telemetry: /wn_impair/list and /wn_impair/xstats,<face port id> */
static int
tel_list(const char *cmd, const char *params, struct rte_tel_data *d)
{
	uint16_t p;

	(void)cmd;
	(void)params;
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (p = 0; p < RTE_MAX_ETHPORTS; p++)
		if (impair_ports[p] != NULL)
			rte_tel_data_add_array_int(d, p);
	return 0;
}

static int
tel_xstats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct rte_eth_xstat_name names[2 * WN_IMPAIR_NB_XSTATS_PER_DIR];
	uint64_t values[2 * WN_IMPAIR_NB_XSTATS_PER_DIR];
	unsigned long port;
	char *end;
	int n, i;

	(void)cmd;
	if (params == NULL || *params == '\0')
		return -EINVAL;
	port = strtoul(params, &end, 10);
	if (*end != '\0' || port >= RTE_MAX_ETHPORTS)
		return -EINVAL;
	n = wn_impair_xstats_get((uint16_t)port, names, values, RTE_DIM(values));
	if (n < 0)
		return n;
	rte_tel_data_start_dict(d);
	for (i = 0; i < n; i++)
		wn_tel_dict_u64(d, names[i].name, values[i]);
	return 0;
}

/* "PORT,REST": the face's port id and what follows it; -EINVAL if malformed */
static int
tel_port_arg(const char *params, uint16_t *port, const char **rest)
{
	unsigned long v;
	char *end;

	if (params == NULL || *params < '0' || *params > '9')
		return -EINVAL;
	v = strtoul(params, &end, 10);
	if (*end != ',' || v >= RTE_MAX_ETHPORTS)
		return -EINVAL;
	*port = (uint16_t)v;
	*rest = end + 1;
	return 0;
}

static int
tel_u32(const char *s, uint32_t *out)
{
	unsigned long v;
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int
tel_link_down(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const char *rest;
	uint16_t port;
	uint32_t ms;
	int ret;

	(void)cmd;
	if (tel_port_arg(params, &port, &rest) < 0 || tel_u32(rest, &ms) < 0)
		return -EINVAL;
	ret = wn_impair_link_down(port, ms);
	if (ret < 0)
		return ret;
	rte_tel_data_start_dict(d);
	wn_tel_dict_u64(d, "down_ms", ms);
	return 0;
}

static int
tel_mangle(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const char *rest;
	uint16_t port;
	uint32_t n;
	int tx, ret;

	(void)cmd;
	if (tel_port_arg(params, &port, &rest) < 0)
		return -EINVAL;
	if (strncmp(rest, "rx,", 3) == 0)
		tx = 0;
	else if (strncmp(rest, "tx,", 3) == 0)
		tx = 1;
	else
		return -EINVAL;
	if (tel_u32(rest + 3, &n) < 0)
		return -EINVAL;
	ret = wn_impair_mangle_next(port, tx, n);
	if (ret < 0)
		return ret;
	rte_tel_data_start_dict(d);
	wn_tel_dict_u64(d, tx ? "tx_mangle_next" : "rx_mangle_next", n);
	return 0;
}

/* (DPDK refuses a command whose help text is longer than 128 octets) */
RTE_INIT(wn_impair_telemetry)
{
	rte_telemetry_register_cmd("/wn_impair/link_down", tel_link_down,
				   "Drops every frame either way for a while (a link flap). "
				   "Parameters: int port_id, int milliseconds (0: up again)");
	rte_telemetry_register_cmd("/wn_impair/mangle", tel_mangle,
				   "Corrupts the next N TCP segments below TCP. "
				   "Parameters: int port_id, rx|tx, int N");
	rte_telemetry_register_cmd("/wn_impair/list", tel_list,
				   "Returns the port ids of net_wn_impair faces. No parameters");
	rte_telemetry_register_cmd("/wn_impair/xstats", tel_xstats,
				   "Returns the impairment counters. Parameters: int port_id");
}
