/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * usrsctp below the dataplane (wn_sctp.h): the stack's start (no threads of its own for
 * timers or receive, the AF_CONN lower layer, CRC32c left to us), the AF_CONN paths, SCTP
 * packets in (CRC32c checked with isa-l, then usrsctp_conninput) and out (usrsctp's output
 * callback: the packet copied into an mbuf behind an IP header, CRC32c filled in, queued to
 * the instance that owns the path), and usrsctp's timers.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "sctp_priv.h"
#include "wn_wire_crc.h"

RTE_LOG_REGISTER_DEFAULT(wn_sctp_logtype, NOTICE);

__thread struct sctp_proto *wn_sctp_cur;

/* usrsctp's timers: one driver for the process, the first poll of each millisecond. */
static _Atomic uint64_t timers_ms;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool started;

/* SCTP input since the timers' last poll (any instance); polls in a row that found some */
static _Atomic bool rx_seen;
static _Atomic unsigned int rx_polls;

/*
 * Most polls in a row the timers wait for the input queued before them (wn_sctp_timers): a
 * port's receive ring read one burst (32 packets) per loop, twice over.
 */
#define TIMER_DEFER_POLLS 64

/* SCTP common header (RFC 4960 §3.1): ports, verification tag, checksum. */
#define SCTP_HDR_LEN 12
#define SCTP_CKSUM_OFF 8

/* CRC32c of an SCTP packet whose checksum field reads as zero (RFC 4960 App. B). */
static uint32_t
sctp_crc(const uint8_t *pkt, size_t len)
{
	static const uint8_t zero[4];
	uint32_t c;

	c = wn_wire_crc32c_update(wn_crc32c_init(), pkt, SCTP_CKSUM_OFF);
	c = wn_wire_crc32c_update(c, zero, sizeof(zero));
	c = wn_wire_crc32c_update(c, pkt + SCTP_HDR_LEN, len - SCTP_HDR_LEN);
	/* the final inversion; on the wire in the CRC's own (little-endian) octet order, as
	 * usrsctp and Linux store it */
	return ~c;
}

/* ---------------------------------------------------------------- output */

/*
 * usrsctp's output callback: @p addr is the path. Runs on whichever thread called usrsctp
 * (the owner, or another instance's lcore running the timers): the packet is copied into an
 * mbuf and queued to the owner, whose wn_sctp_tx_bulk() hands it out.
 */
static int
conn_output(void *addr, void *buf, size_t len, uint8_t tos, uint8_t set_df)
{
	struct sctp_path *path = addr;
	struct sctp_proto *p = path->p;
	struct rte_mbuf *m, *seg;
	uint32_t c;
	size_t done = 0;

	(void)tos;
	(void)set_df; /* lib/net sets DF on every datagram: we never fragment */
	if (len < SCTP_HDR_LEN)
		return 0;
	c = sctp_crc(buf, len);
	memcpy((uint8_t *)buf + SCTP_CKSUM_OFF, &c, 4);
	m = rte_pktmbuf_alloc(p->c.pool);
	if (m == NULL)
		goto drop;
	/* the headroom stays for the IP and Ethernet headers; a jumbo MTU chains segments */
	for (seg = m; done < len; seg = seg->next) {
		uint16_t n = (uint16_t)RTE_MIN((size_t)rte_pktmbuf_tailroom(seg), len - done);

		memcpy(rte_pktmbuf_append(m, n), (const uint8_t *)buf + done, n);
		done += n;
		if (done < len) {
			struct rte_mbuf *nx = rte_pktmbuf_alloc(p->c.pool);

			if (nx == NULL || rte_pktmbuf_chain(m, nx) != 0) {
				rte_pktmbuf_free(nx);
				rte_pktmbuf_free(m);
				goto drop;
			}
			nx->data_off = 0;
		}
	}
	if (wn_net_ip_prepend(m, &path->local, &path->remote, WN_SCTP_IPPROTO) != 0 ||
	    rte_ring_mp_enqueue(p->txq, m) != 0) {
		rte_pktmbuf_free(m);
		goto drop;
	}
	p->sx.tx_pkts++;
	return 0;
drop:
	p->sx.tx_drop++; /* as a loss on the wire: SCTP sends it again */
	return 0;
}

uint16_t
wn_sctp_tx_bulk(struct wn_llp_proto *bp, struct rte_mbuf **pkts, uint16_t n)
{
	struct sctp_proto *p = (struct sctp_proto *)bp;

	return (uint16_t)rte_ring_sc_dequeue_burst(p->txq, (void **)pkts, n, NULL);
}

/* ---------------------------------------------------------------- input */

/* The addresses of a datagram (IP header first). @return 0, or -1 for other families. */
static int
ip_addrs(const struct rte_mbuf *m, struct wn_ip_addr *local, struct wn_ip_addr *remote)
{
	const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *);

	memset(local, 0, sizeof(*local));
	memset(remote, 0, sizeof(*remote));
	if ((ip[0] >> 4) == 4 && m->l3_len >= sizeof(struct rte_ipv4_hdr)) {
		const struct rte_ipv4_hdr *h = (const struct rte_ipv4_hdr *)ip;

		local->family = remote->family = WN_AF_INET;
		local->v4 = h->dst_addr;
		remote->v4 = h->src_addr;
		return 0;
	}
	if ((ip[0] >> 4) == 6 && m->l3_len >= sizeof(struct rte_ipv6_hdr)) {
		const struct rte_ipv6_hdr *h = (const struct rte_ipv6_hdr *)ip;

		local->family = remote->family = WN_AF_INET6;
		memcpy(local->v6, WN_IP6_DST(h), 16);
		memcpy(remote->v6, WN_IP6_SRC(h), 16);
		return 0;
	}
	return -1;
}

int
wn_sctp_pkt_input(struct sctp_proto *p, struct rte_mbuf *m, uint64_t now, uint16_t *dport)
{
	struct wn_ip_addr local, remote;
	struct sctp_path *path;
	const uint8_t *pkt;
	uint32_t len, got;
	bool cookie;

	p->sx.rx_pkts++;
	p->now = now;
	atomic_store_explicit(&rx_seen, true, memory_order_relaxed);
	if (rte_pktmbuf_data_len(m) < m->l3_len || ip_addrs(m, &local, &remote) != 0)
		goto bad;
	len = rte_pktmbuf_pkt_len(m) - m->l3_len;
	if (len < SCTP_HDR_LEN + 4 || len > UINT16_MAX)
		goto bad;
	if (m->nb_segs == 1)
		pkt = rte_pktmbuf_mtod_offset(m, const uint8_t *, m->l3_len);
	else
		pkt = rte_pktmbuf_read(m, m->l3_len, len, p->rxbuf); /* a reassembled datagram */
	if (pkt == NULL)
		goto bad;
	memcpy(&got, pkt + SCTP_CKSUM_OFF, 4);
	if (got != sctp_crc(pkt, len)) {
		p->base.st.crc_errors++;
		goto bad;
	}
	path = wn_sctp_path_get(p, &local, &remote);
	if (path == NULL)
		goto bad;
	*dport = (uint16_t)(pkt[2] << 8 | pkt[3]);
	cookie = pkt[SCTP_HDR_LEN] == 10; /* COOKIE ECHO: an association may come up */
	wn_sctp_cur = p;
	usrsctp_conninput(path, pkt, len, 0);
	rte_pktmbuf_free(m);
	return cookie ? 1 : 0;
bad:
	p->sx.rx_bad++;
	rte_pktmbuf_free(m);
	return -1;
}

/* ---------------------------------------------------------------- paths */

struct sctp_path *
wn_sctp_path_get(struct sctp_proto *p, const struct wn_ip_addr *local,
	      const struct wn_ip_addr *remote)
{
	struct sctp_path *path;

	TAILQ_FOREACH(path, &p->paths, next)
		if (wn_ip_addr_eq(&path->local, local) && wn_ip_addr_eq(&path->remote, remote))
			return path;
	path = calloc(1, sizeof(*path));
	if (path == NULL)
		return NULL;
	path->p = p;
	path->local = *local;
	path->remote = *remote;
	TAILQ_INSERT_TAIL(&p->paths, path, next);
	usrsctp_register_address(path);
	return path;
}

uint32_t
wn_sctp_path_ip_hdr(const struct sctp_path *path)
{
	return path->local.family == WN_AF_INET6 ? sizeof(struct rte_ipv6_hdr) :
						    sizeof(struct rte_ipv4_hdr);
}

void
wn_sctp_paths_free(struct sctp_proto *p)
{
	struct sctp_path *path;

	while ((path = TAILQ_FIRST(&p->paths)) != NULL) {
		TAILQ_REMOVE(&p->paths, path, next);
		usrsctp_deregister_address(path);
		free(path);
	}
}

void
wn_sctp_sconn(struct sockaddr_conn *sa, struct sctp_path *path, uint16_t port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sconn_family = AF_CONN;
	sa->sconn_port = rte_cpu_to_be_16(port);
	sa->sconn_addr = path;
}

/* ---------------------------------------------------------------- the stack */

int
wn_sctp_global_init(void)
{
	pthread_mutex_lock(&init_lock);
	if (!started) {
		/* no timer or receive threads: the lcores drive it (usrsctp's iterator thread
		 * still exists; with ASCONF off it has nothing to do) */
		usrsctp_init_nothreads(0, conn_output, NULL);
		usrsctp_enable_crc32c_offload(); /* isa-l does it, in pkt.c */
		/* what DDP needs of SCTP (RFC 5043 §3): no ECN (lib/net has none), none of the
		 * extensions an association for DDP never uses */
		usrsctp_sysctl_set_sctp_ecn_enable(0);
		usrsctp_sysctl_set_sctp_asconf_enable(0);
		usrsctp_sysctl_set_sctp_auto_asconf(0);
		usrsctp_sysctl_set_sctp_auth_enable(0);
		usrsctp_sysctl_set_sctp_pr_enable(0);
		usrsctp_sysctl_set_sctp_reconfig_enable(0);
		usrsctp_sysctl_set_sctp_nrsack_enable(0);
		usrsctp_sysctl_set_sctp_pktdrop_enable(0);
		/* RFC 4960 §15 asks 1 s / 3 s / 60 s; a LAN's RTT is microseconds: lib/tcp's 200 ms
		 * floor, and failures noticed within seconds */
		usrsctp_sysctl_set_sctp_rto_min_default(200);
		usrsctp_sysctl_set_sctp_rto_initial_default(1000);
		usrsctp_sysctl_set_sctp_rto_max_default(10000);
		usrsctp_sysctl_set_sctp_init_rto_max_default(2000);
		/* a SACK held back must come before the peer's RTO runs out: usrsctp's 200 ms
		 * default delay equals that RTO floor, and a lone chunk (a session's first, a
		 * burst's odd last) was sent again whenever its SACK waited out the delay.
		 * lib/tcp's delayed ACK, 40 ms (RFC 4960 §6.2 allows up to 500 ms beside an
		 * RTO.min of 1 s) */
		usrsctp_sysctl_set_sctp_delayed_sack_time_default(40);
		started = true;
	}
	pthread_mutex_unlock(&init_lock);
	return 0;
}

int
wn_sctp_socket_setup(struct sctp_proto *p, struct socket *so, uint32_t ip_hdr)
{
	static const uint16_t events[] = {
		SCTP_ASSOC_CHANGE, SCTP_ADAPTATION_INDICATION, SCTP_SHUTDOWN_EVENT,
	};
	struct sctp_setadaptation ad = {.ssb_adaptation_ind = WN_SCTP_ADAPTATION_DDP};
	/* RFC 5043 §8: as many streams in as out, on every association */
	struct sctp_initmsg im = {
		.sinit_num_ostreams = p->c.streams,
		.sinit_max_instreams = p->c.streams,
		.sinit_max_attempts = 6,
		.sinit_max_init_timeo = 2000,
	};
	struct sctp_paddrparams pp;
	const int one = 1;
	int buf = (int)p->c.sockbuf;

	memset(&pp, 0, sizeof(pp));
	pp.spp_assoc_id = SCTP_FUTURE_ASSOC;
	/* RFC 5043 §9: the link's MTU, never more: DDP segments are sized to fit */
	pp.spp_flags = SPP_PMTUD_DISABLE;
	pp.spp_pathmtu = p->c.mtu - ip_hdr;
	if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_ADAPTATION_LAYER, &ad, sizeof(ad)) != 0 ||
	    usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_INITMSG, &im, sizeof(im)) != 0 ||
	    usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_NODELAY, &one, sizeof(one)) != 0 ||
	    usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_RECVRCVINFO, &one, sizeof(one)) != 0 ||
	    usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_PEER_ADDR_PARAMS, &pp, sizeof(pp)) != 0 ||
	    usrsctp_setsockopt(so, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf)) != 0 ||
	    usrsctp_setsockopt(so, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf)) != 0)
		return -errno;
	for (unsigned int i = 0; i < RTE_DIM(events); i++) {
		struct sctp_event e = {.se_assoc_id = SCTP_FUTURE_ASSOC, .se_type = events[i],
				       .se_on = 1};

		if (usrsctp_setsockopt(so, IPPROTO_SCTP, SCTP_EVENT, &e, sizeof(e)) != 0)
			return -errno;
	}
	if (usrsctp_set_non_blocking(so, 1) != 0)
		return -errno;
	return 0;
}

void
wn_sctp_stack_stats_get(struct wn_sctp_stack_stats *st)
{
	struct sctpstat s;
	bool up;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&init_lock);
	up = started;
	pthread_mutex_unlock(&init_lock);
	if (!up)
		return;
	usrsctp_get_stat(&s);
	st->rx_packets = s.sctps_recvpackets;
	st->tx_data = s.sctps_senddata;
	st->rx_data = s.sctps_recvdata;
	st->rx_pkts_data = s.sctps_recvpktwithdata;
	st->rx_dup_data = s.sctps_recvdupdata;
	st->tx_retrans = s.sctps_sendretransdata;
	st->fast_retrans = s.sctps_sendfastretrans;
	st->t3_timeouts = s.sctps_timodata;
	st->tx_sacks = s.sctps_sendsacks;
	st->rx_sacks = s.sctps_recvsacks;
	st->sack_timeouts = s.sctps_timosack;
	st->window_probes = s.sctps_windowprobed;
	st->rx_drop_rwnd = s.sctps_datadroprwnd;
	st->cwnd_full = s.sctps_send_cwnd_avoid;
	st->maxburst_held = s.sctps_maxburstqueued;
}

void
wn_sctp_timers(uint64_t now)
{
	uint64_t ms = now / 1000, last = atomic_load(&timers_ms);

	if (ms < last) {
		/* a clock that went back (a test's virtual clock starting again) */
		(void)atomic_compare_exchange_strong(&timers_ms, &last, ms);
		return;
	}
	/*
	 * Input first: after a stall (an lcore descheduled on a shared core, or asleep) the
	 * port's ring still holds the SACKs that arrived in time, one burst of them read per
	 * loop; a T3-rtx timer run before them fires for chunks that were acknowledged, and
	 * usrsctp, which has no spurious-timeout undo, takes the congestion window down to one
	 * packet and sends them all again. So while polls keep finding SCTP input the timers
	 * wait, for at most TIMER_DEFER_POLLS polls, for one that finds the ring drained.
	 */
	if (atomic_load_explicit(&rx_seen, memory_order_relaxed) &&
	    atomic_exchange(&rx_seen, false) &&
	    atomic_fetch_add(&rx_polls, 1) + 1 < TIMER_DEFER_POLLS)
		return;
	if (ms == last)
		return;
	if (!atomic_compare_exchange_strong(&timers_ms, &last, ms))
		return;
	atomic_store(&rx_polls, 0);
	if (last != 0)
		usrsctp_handle_timers((uint32_t)RTE_MIN(ms - last, (uint64_t)1000));
}
