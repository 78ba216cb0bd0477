/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp: one iteration of a shard (receive, lower layer, control messages, QP engines,
 * TCP, transmit), start and stop, and the port's transmit (wn_dp.h); the run loop with its
 * idle policy is idle.c's.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>

#include <rte_ethdev.h>

#include "dp_priv.h"

/* @p n frames to the port, up to @p tries times. @return how many it took. */
static uint16_t
port_try(struct wn_dp *dp, struct rte_mbuf **pkts, uint16_t n, unsigned int tries)
{
	uint16_t sent = 0;

	for (; sent < n && tries > 0; tries--) {
		/* a memif peer that sleeps gets its interrupt (wn_net_port_wake_tx_burst) */
		sent += dp->wake != NULL ?
			wn_net_port_wake_tx_burst(dp->wake, pkts + sent, n - sent) :
			rte_eth_tx_burst(dp->c.port_id, dp->idx, pkts + sent, n - sent);
		if (sent < n && dp->idx == 0 && dp->c.port_poll != NULL)
			(void)dp->c.port_poll(); /* e.g. a fault injector's face drains only when polled */
	}
	dp->st.tx_pkts += sent;
	return sent;
}

/* The frames held back go first. @return true when none is left. */
static bool
port_hold_flush(struct wn_dp *dp)
{
	uint16_t sent;

	if (dp->tx_hold_n == 0)
		return true;
	if (!dp_link_up(dp)) {
		rte_pktmbuf_free_bulk(dp->tx_hold, dp->tx_hold_n);
		dp->st.tx_nolink += dp->tx_hold_n;
		dp->tx_hold_n = 0;
		return true;
	}
	sent = port_try(dp, dp->tx_hold, dp->tx_hold_n, 4);
	memmove(dp->tx_hold, dp->tx_hold + sent, (dp->tx_hold_n - sent) * sizeof(dp->tx_hold[0]));
	dp->tx_hold_n = (uint16_t)(dp->tx_hold_n - sent);
	return dp->tx_hold_n == 0;
}

/*
 * Frames out to the port, nothing held back before them (port_hold_flush()). What its full
 * ring does not take after a few tries is held, in order, for the next iteration: the
 * sender waits for the peer to drain its ring instead of losing frames (TCP would resend
 * them after a timeout). @return how many went now.
 */
static uint16_t
port_tx(struct wn_dp *dp, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent, i;

	if (!dp_link_up(dp)) {
		/* a NIC without a cable: what would go out is lost (TCP retransmits) */
		rte_pktmbuf_free_bulk(pkts, n);
		dp->st.tx_nolink += n;
		return 0;
	}
	wn_net_pcap_capture(dp->c.pcap, dp->c.port_id, dp->idx, pkts, n, RTE_PCAPNG_DIRECTION_OUT);
	sent = port_try(dp, pkts, n, 64);
	for (i = sent; i < n; i++) {
		if (dp->tx_hold_n < RTE_DIM(dp->tx_hold)) {
			dp->tx_hold[dp->tx_hold_n++] = pkts[i];
			dp->st.tx_held++;
		} else {
			rte_pktmbuf_free(pkts[i]);
			dp->st.tx_drop++;
		}
	}
	return sent;
}

/* lib/net's frames out to the port. @return false when the port did not take them all. */
static bool
net_drain(struct wn_dp *dp)
{
	struct rte_mbuf *pkts[DP_BURST];
	uint16_t n;

	if (!port_hold_flush(dp))
		return false;
	while ((n = wn_net_tx_bulk(dp->nif, pkts, DP_BURST)) > 0)
		if (port_tx(dp, pkts, n) < n)
			return false;
	return true;
}

/* Frames from the port queue and from other shards into TCP. @return frames. */
static unsigned int
poll_rx(struct wn_dp *dp)
{
	struct rte_mbuf *pkts[2 * DP_BURST];
	unsigned int work = 0;
	uint16_t n, k;

	n = dp_link_up(dp) ? rte_eth_rx_burst(dp->c.port_id, dp->idx, pkts, DP_BURST) : 0;
	if (n > 0) {
		work += n;
		dp->st.rx_pkts += n;
		wn_net_pcap_capture(dp->c.pcap, dp->c.port_id, dp->idx, pkts, n,
				RTE_PCAPNG_DIRECTION_IN);
		if (dp->g->n > 1)
			n = wn_dp_steer_burst(dp, pkts, n);
	}
	if (dp->g->n > 1) {
		k = (uint16_t)rte_ring_sc_dequeue_burst(dp->handoff, (void **)pkts + n, DP_BURST,
							 NULL);
		dp->st.handoff_rx += k;
		work += k;
		n += k;
	}
	if (n > 0) {
		n = wn_net_rx_bulk(dp->nif, pkts, n, dp->now);
		if (n > 0)
			wn_tcp_rx_bulk(dp->tcp, pkts, n, dp->now);
	}
	return work;
}

/*
 * An object made or gone (a CQ, QP, SRQ, MR, CM id): no network traffic follows it, unlike
 * a connection's step (listen, connect, accept, reject, disconnect, a QP's modify).
 */
static bool
msg_is_object(const struct wn_server_dp_msg *m)
{
	switch (m->type) {
	case WN_SERVER_DP_MR_REG:
	case WN_SERVER_DP_MR_DEREG:
	case WN_SERVER_DP_CQ_CREATE:
	case WN_SERVER_DP_CQ_DESTROY:
	case WN_SERVER_DP_SRQ_CREATE:
	case WN_SERVER_DP_SRQ_DESTROY:
	case WN_SERVER_DP_QP_CREATE:
	case WN_SERVER_DP_QP_DESTROY:
	case WN_SERVER_DP_CM_DESTROY:
		return true;
	default:
		return false;
	}
}

/*
 * Control messages: shard 0 dispatches the control thread's, the others run theirs.
 * dp->ctl_objs: how many of them were objects made or gone (msg_is_object()).
 */
static unsigned int
poll_ctl(struct wn_dp *dp)
{
	void *msgs[DP_BURST];
	unsigned int n, i;

	dp->ctl_objs = 0;
	/* messages that waited for room in a full ring go first */
	if (dp->ctl_wait.len > 0)
		(void)wn_dp_ctl_flush(dp);
	if (dp->idx == 0) {
		if (dp->c.to_dp == NULL)
			return 0; /* no control thread (embedded applications only) */
		for (i = 1; i < dp->g->n; i++)
			if (dp->fwd_wait[i].len > 0 &&
			    wn_dp_msgq_flush(&dp->fwd_wait[i], dp->g->shard[i]->ctl) > 0)
				wn_dp_wake(dp->g, (uint16_t)i);
		n = rte_ring_dequeue_burst(dp->c.to_dp, msgs, DP_BURST, NULL);
		for (i = 0; i < n; i++) {
			dp->ctl_objs += msg_is_object(msgs[i]);
			wn_dp_dispatch(dp, msgs[i]);
		}
	} else {
		n = rte_ring_dequeue_burst(dp->ctl, msgs, DP_BURST, NULL);
		for (i = 0; i < n; i++) {
			dp->ctl_objs += msg_is_object(msgs[i]);
			wn_dp_local_msg(dp, msgs[i]);
		}
	}
	return n;
}

/* TCP's segments and SCTP's packets (ours, or looped back to our own addresses) out to the port. */
static unsigned int
poll_tx(struct wn_dp *dp)
{
	struct rte_mbuf *pkts[DP_BURST];
	unsigned int work = 0;
	uint16_t n;

	wn_tcp_process(dp->tcp, dp->now);
	/*
	 * TCP's segments go through lib/net to the port a burst at a time, and only while lib/net's
	 * queue has room for a burst and the port takes them: the rest waits in TCP's queue (and
	 * then in its connections) instead of being dropped where a queue is shorter. Thousands
	 * of connections opening their windows at once used to overflow lib/net's queue.
	 */
	while (wn_net_tx_room(dp->nif) >= DP_BURST &&
	       (n = wn_tcp_tx_bulk(dp->tcp, pkts, DP_BURST)) > 0) {
		work += n;
		n = wn_dp_loopback(dp, pkts, n);
		wn_net_output_bulk(dp->nif, pkts, n, dp->now);
		if (!net_drain(dp))
			break;
	}
	work += wn_dp_llp_tx(dp);
	if (dp_link_up(dp) != dp->link_seen) {
		/* the link came (back) up: announce our addresses, run DAD of tentative ones */
		dp->link_seen = !dp->link_seen;
		if (dp->link_seen)
			(void)wn_net_start(dp->nif, dp->now);
	}
	wn_net_process(dp->nif, dp->now);
	if (!net_drain(dp) || dp->tx_hold_n > 0)
		work++; /* frames wait for the port: this shard is not idle */
	return work;
}

/* Every millisecond: QPs in Error flushed, closed connections freed, deregistrations. */
static void
tick(struct wn_dp *dp)
{
	if (dp->now - dp->last_tick < DP_TICK_US)
		return;
	dp->last_tick = dp->now;
	/* InfiniBand-style connections' attempts and retry budgets (lib/cm) */
	wn_cm_poll(&dp->cm, dp->now);
	wn_dp_errq_flush(dp);
	wn_dp_conns_reap(dp);
	wn_dp_qps_sweep(dp);
	wn_dp_ud_tick(dp);
	wn_dp_dma_tx_reclaim(dp);
	if (dp->idx == 0) {
		wn_dp_zc_tick(dp);
		dp->st.mr_dereg_waiting = dp->n_dereg;
	}
}

unsigned int
wn_dp_poll_rx(struct wn_dp *dp)
{
	unsigned int work = 0;

	dp->now = wn_net_now_us();
	dp->st.loops++;
	if (dp->c.port_poll != NULL && dp->idx == 0 && dp_link_up(dp))
		(void)dp->c.port_poll();
	/* control first: a listen (or a connect) is in place before frames that follow it */
	work += poll_ctl(dp);
	work += poll_rx(dp);
	if (dp->wake_mask != 0)
		wn_dp_wake_handoffs(dp);
	/* lower-layer timers; zero-copy FPDUs ACKed and in no mbuf: unpin, complete */
	work += wn_dp_llp_poll(dp);
	return work;
}

unsigned int
wn_dp_poll_tx(struct wn_dp *dp)
{
	unsigned int work = 0;

	/* the QPs with work or marked by their clients, not every QP (dp_obj.c) */
	work += wn_dp_qps_poll(dp);
	work += poll_tx(dp);
	if (dp->wake_mask != 0)
		wn_dp_wake_handoffs(dp); /* frames looped back to another shard */
	tick(dp);
	if (dp->c.qs != NULL)
		rte_rcu_qsbr_quiescent(dp->c.qs, dp->idx);
	if (dp->now - dp->tel_at >= DP_TEL_PERIOD_US) {
		dp->tel_at = dp->now;
		wn_dp_tel_refresh(dp);
	}
	return work;
}

unsigned int
wn_dp_poll(struct wn_dp *dp)
{
	unsigned int work = wn_dp_poll_rx(dp);

	return work + wn_dp_poll_tx(dp);
}

int
wn_dp_start(struct wn_dp *dp)
{
	int ret;

	if (dp->c.qs != NULL) {
		ret = rte_rcu_qsbr_thread_register(dp->c.qs, dp->idx);
		if (ret != 0)
			return ret;
		rte_rcu_qsbr_thread_online(dp->c.qs, dp->idx);
	}
	dp->now = wn_net_now_us();
	/* lib/net starts (announcements, DAD) once the link is up: now, or in poll_tx() */
	dp->link_seen = dp_link_up(dp);
	ret = dp->link_seen ? wn_net_start(dp->nif, dp->now) : 0;
	if (ret < 0) {
		if (dp->c.qs != NULL) {
			rte_rcu_qsbr_thread_offline(dp->c.qs, dp->idx);
			rte_rcu_qsbr_thread_unregister(dp->c.qs, dp->idx);
		}
		return ret;
	}
	atomic_fetch_add(&dp->g->running, 1);
	return 0;
}

void
wn_dp_stop(struct wn_dp *dp)
{
	struct rte_mbuf *pkts[DP_BURST];
	uint16_t n;

	wn_dp_conns_free(dp);
	wn_dp_embed_free(dp);
	/* the last FINs/RSTs */
	dp->now = wn_net_now_us();
	wn_tcp_process(dp->tcp, dp->now);
	while ((n = wn_tcp_tx_bulk(dp->tcp, pkts, DP_BURST)) > 0)
		wn_net_output_bulk(dp->nif, pkts, n, dp->now);
	(void)port_hold_flush(dp);
	while ((n = wn_net_tx_bulk(dp->nif, pkts, DP_BURST)) > 0)
		port_tx(dp, pkts, n);
	/* what the port still would not take is lost with the shard */
	rte_pktmbuf_free_bulk(dp->tx_hold, dp->tx_hold_n);
	dp->st.tx_drop += dp->tx_hold_n;
	dp->tx_hold_n = 0;
	if (dp->c.qs != NULL) {
		rte_rcu_qsbr_thread_offline(dp->c.qs, dp->idx);
		rte_rcu_qsbr_thread_unregister(dp->c.qs, dp->idx);
	}
	atomic_fetch_sub(&dp->g->running, 1);
}

struct wn_dp *
wn_dp_shard(struct wn_dp_group *g, uint16_t idx)
{
	return idx < g->n ? g->shard[idx] : NULL;
}
