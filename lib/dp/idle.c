/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/dp: the run loop (wn_dp_run(): wn_dp_poll() while there is work, else sleep) and what an
 * idle shard sleeps on. The doorbells themselves are bell.c's.
 *
 * Wake-up sources, in one epoll instance per shard:
 *  - its bell (lib/queue's "Lcore doorbells"): a line in the group's bell page, which clients
 *    map read-only, and an eventfd. Clients ring it after posting to an SQ the shard
 *    consumes, the control thread after a message to shard 0, shards after handing over
 *    frames or messages; all only while the shard announced that it sleeps.
 *  - its port queue's Rx interrupt (wn_port_wake_*: ethdev Rx interrupts, net_memif's
 *    interrupt mode); without one the sleep is a nap of at most idle_us.
 *  - a timeout: the next TCP timer, the millisecond tick while something waits for it, the
 *    telemetry snapshot's period, and IDLE_MAX_US.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rte_epoll.h>

#include "dp_priv.h"

/* Longest sleep with an Rx wake-up: bounds a wake-up lost to a foreign memif peer. */
#define IDLE_MAX_US 10000u

/* epdata.data of the shard's wake-up events */
static char ev_bell, ev_rx;

int
wn_dp_idle_start(struct wn_dp *dp)
{
	struct wn_dp_group *g = dp->g;

	dp->bell = &g->bells[dp->idx];
	wn_queue_bell_wake(dp->bell);
	dp->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (dp->epfd < 0)
		return -errno;
	memset(&dp->bell_ev, 0, sizeof(dp->bell_ev));
	dp->bell_ev.epdata.event = EPOLLIN;
	dp->bell_ev.epdata.data = &ev_bell;
	if (rte_epoll_ctl(dp->epfd, EPOLL_CTL_ADD, g->bell_efd[dp->idx], &dp->bell_ev) != 0)
		return -EIO;
	/* none: the shard naps (af_packet, the fault injector's face, ...) */
	dp->wake = wn_net_port_wake_open(dp->c.port_id, dp->idx, dp->epfd, &ev_rx);
	DP_LOG(INFO, "shard %u: idle %s, Rx wake-up %s\n", dp->idx,
	       dp->c.idle == WN_DP_IDLE_POLL || dp->c.idle_us == 0 ? "poll" : "sleep",
	       dp->wake != NULL ? "yes" : "no (naps)");
	return 0;
}

void
wn_dp_idle_stop(struct wn_dp *dp)
{
	wn_net_port_wake_close(dp->wake);
	dp->wake = NULL;
	if (dp->epfd >= 0) {
		(void)rte_epoll_ctl(dp->epfd, EPOLL_CTL_DEL, dp->g->bell_efd[dp->idx], &dp->bell_ev);
		close(dp->epfd);
	}
	dp->epfd = -1;
}

/* How long the shard may sleep from now (0: not at all). */
static uint64_t
sleep_budget(struct wn_dp *dp, bool rx_wake)
{
	uint64_t budget = rx_wake ? IDLE_MAX_US : dp->c.idle_us;
	uint64_t t = wn_tcp_next_timer(dp->tcp);

	if (t <= dp->now)
		return 0;
	budget = RTE_MIN(budget, t - dp->now);
	/* rdma_cm's UDP exchanges: a SIDR REQ sent again, a kept REP dropped (dp_ud.c) */
	t = wn_dp_ud_next_timer(dp);
	if (t != UINT64_MAX)
		budget = RTE_MIN(budget, t <= dp->now ? 1 : t - dp->now);
	/* the tick's work: QPs in Error flush what clients post, deregistrations wait; a
	 * stream held for a receive rechecks its SRQ and its time limit */
	if (!TAILQ_EMPTY(&dp->errq) || dp->n_dereg != 0 || dp->st.rnr_held != 0 ||
	    wn_dp_dma_tx_pending(dp) || /* ... and a NIC's sent mbufs are freed (zero-copy pins) */
	    wn_dp_msgs_waiting(dp)) /* ... messages wait for room in a full ring */
		budget = RTE_MIN(budget, (uint64_t)DP_TICK_US);
	/* lib/cm: an InfiniBand-style attempt due, a QP's retry budget that runs */
	t = wn_cm_next_timer(&dp->cm);
	if (t <= dp->now)
		return 0;
	if (t != UINT64_MAX)
		budget = RTE_MIN(budget, t - dp->now);
	/* the telemetry snapshot is refreshed every period, as when polling */
	t = dp->tel_at + DP_TEL_PERIOD_US;
	return t <= dp->now ? 0 : RTE_MIN(budget, t - dp->now);
}

/* Wait on the epoll set for at most @p us; count what woke the shard. */
static void
wait_events(struct wn_dp *dp, uint64_t us)
{
	struct epoll_event evs[4];
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
	int n, i;

	n = epoll_pwait2(dp->epfd, evs, RTE_DIM(evs), &ts, NULL);
	if (n == 0)
		dp->st.wake_timer++;
	for (i = 0; i < n; i++) {
		struct rte_epoll_event *rev = evs[i].data.ptr;
		uint32_t valid = RTE_EPOLL_VALID;

		/* as rte_epoll_wait(): the event's callback consumes it (eventfd, vfio) */
		if (rev == NULL || !__atomic_compare_exchange_n(&rev->status, &valid,
								RTE_EPOLL_EXEC, 0, __ATOMIC_ACQUIRE,
								__ATOMIC_RELAXED))
			continue;
		if (rev->epdata.cb_fun != NULL)
			rev->epdata.cb_fun(rev->fd, rev->epdata.cb_arg);
		if (rev->epdata.data == &ev_bell) {
			uint64_t v;

			dp->st.wake_bell++;
			if (read(rev->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				DP_LOG(ERR, "bell: %s\n", strerror(errno));
		} else {
			dp->st.wake_rx++;
		}
		__atomic_store_n(&rev->status, RTE_EPOLL_VALID, __ATOMIC_RELEASE);
	}
}

/* Mask the Rx wake-up again; with the gate closed, the port is not ours to touch. */
static void
rx_disarm(struct wn_dp *dp)
{
	if (dp_link_up(dp))
		wn_net_port_wake_disarm(dp->wake);
	else
		wn_net_port_wake_forget(dp->wake);
}

bool
wn_dp_idle_sleep(struct wn_dp *dp)
{
	bool rx_wake = dp->wake != NULL && dp_link_up(dp) && wn_net_port_wake_arm(dp->wake) == 0;
	uint64_t us = sleep_budget(dp, rx_wake);

	if (us == 0) {
		if (rx_wake)
			rx_disarm(dp);
		return false;
	}
	/* announce it, then look once more (lib/queue: the Dekker rule of lcore doorbells) */
	wn_queue_bell_sleep(dp->bell);
	if (wn_dp_poll(dp) != 0) {
		wn_queue_bell_wake(dp->bell);
		if (rx_wake)
			rx_disarm(dp);
		return false;
	}
	atomic_fetch_add_explicit(&dp->bell->sleeps, 1, memory_order_relaxed);
	dp->st.idle_sleeps++;
	dp->st.idle_naps += !rx_wake;
	if (dp->c.qs != NULL)
		rte_rcu_qsbr_thread_offline(dp->c.qs, dp->idx);
	wait_events(dp, us);
	if (dp->c.qs != NULL)
		rte_rcu_qsbr_thread_online(dp->c.qs, dp->idx);
	wn_queue_bell_wake(dp->bell);
	if (rx_wake)
		rx_disarm(dp); /* online again: the gate read now is covered by QSBR */
	return true;
}

int
wn_dp_run(struct wn_dp_group *g, uint16_t idx, volatile int *quit)
{
	struct wn_dp *dp = g->shard[idx];
	bool poll_only = dp->c.idle == WN_DP_IDLE_POLL || dp->c.idle_us == 0;
	int ret;

	/* naps and timeouts must not be stretched by the default 50 us timer slack */
	(void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	ret = wn_dp_start(dp);
	if (ret != 0)
		return ret;
	/* also when polling: its transmit wakes a memif peer that sleeps */
	ret = wn_dp_idle_start(dp);
	while (ret == 0 && !*quit) {
		unsigned int work = wn_dp_poll(dp);

		/*
		 * Objects made or gone alone do not keep the shard spinning: the program and the
		 * control thread that sent them want its CPU next. A connection's steps do: its
		 * segments follow.
		 */
		if (work > dp->ctl_objs)
			dp->last_work = dp->now;
		else if (work == 0 && !poll_only &&
			 dp->now - dp->last_work >= dp->c.idle_spin_us)
			(void)wn_dp_idle_sleep(dp);
	}
	wn_dp_idle_stop(dp);
	wn_dp_stop(dp);
	return ret;
}
