/* SPDX-License-Identifier: BSD-3-Clause */
/* NewReno congestion control: RFC 5681 slow start / congestion avoidance, RFC 6582 recovery. */
#include <string.h>

#include "tcp_priv.h"

struct newreno {
	uint32_t bytes_acked; /* RFC 5681 §3.1 congestion-avoidance byte counting */
};

static void
newreno_init(struct wn_tcp_conn *c)
{
	uint32_t smss = tcp_smss(c);

	/* RFC 5681 §3.1 eq. 1 (RFC 3390 initial window). */
	c->cwnd = RTE_MIN(4 * smss, RTE_MAX(2 * smss, 4380u));
	if (c->backoff > 0 || c->retries > 0)
		c->cwnd = smss; /* SYN or SYN-ACK was lost: IW = 1 segment */
	memset(c->cc_priv, 0, sizeof(c->cc_priv));
}

static void
newreno_on_ack(struct wn_tcp_conn *c, uint32_t acked, uint64_t now)
{
	struct newreno *p = (struct newreno *)c->cc_priv;
	uint32_t smss = tcp_smss(c);

	(void)now;
	if (c->cwnd < c->ssthresh) {
		/* slow start, RFC 5681 eq. 2 with RFC 3465's byte counting: an ACK for a
		 * whole receive burst (ours, a GRO receiver's) grows cwnd by what it
		 * acknowledges, up to ssthresh, as Linux's tcp_slow_start() does */
		c->cwnd = RTE_MIN(c->cwnd + acked, RTE_MAX(c->ssthresh, c->cwnd + smss));
		return;
	}
	p->bytes_acked += acked;
	if (p->bytes_acked >= c->cwnd) { /* one SMSS per RTT */
		p->bytes_acked -= c->cwnd;
		c->cwnd += smss;
	}
}

static uint32_t
half_flight(const struct wn_tcp_conn *c)
{
	uint32_t flight = c->snd.max - c->snd.una;

	/* RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2 * SMSS) */
	return RTE_MAX(flight / 2, 2 * tcp_smss(c));
}

static void
newreno_on_loss(struct wn_tcp_conn *c, uint64_t now)
{
	(void)now;
	c->ssthresh = half_flight(c);
	c->cwnd = c->ssthresh;
}

static void
newreno_on_recovery_end(struct wn_tcp_conn *c, uint64_t now)
{
	struct newreno *p = (struct newreno *)c->cc_priv;

	(void)now;
	c->cwnd = c->ssthresh; /* RFC 6582 §3.2 step 3, option (2) */
	p->bytes_acked = 0;
}

static void
newreno_on_rto(struct wn_tcp_conn *c, uint64_t now)
{
	struct newreno *p = (struct newreno *)c->cc_priv;

	(void)now;
	c->ssthresh = half_flight(c);
	c->cwnd = tcp_smss(c); /* loss window, RFC 5681 §3.1 */
	p->bytes_acked = 0;
}

const struct wn_tcp_cc_ops wn_tcp_cc_newreno = {
	.name = "newreno",
	.init = newreno_init,
	.on_ack = newreno_on_ack,
	.on_loss = newreno_on_loss,
	.on_recovery_end = newreno_on_recovery_end,
	.on_rto = newreno_on_rto,
	.priv_size = sizeof(struct newreno),
};
