/* SPDX-License-Identifier: BSD-3-Clause */
/* CUBIC congestion control (RFC 9438), windows kept in bytes, time in microseconds. */
#include <math.h>
#include <string.h>

#include "tcp_priv.h"

#define CUBIC_C 0.4     /* RFC 9438 §5 */
#define CUBIC_BETA 0.7  /* RFC 9438 §4.6 beta_cubic */

struct cubic {
	double w_max;      /* segments */
	double w_last_max; /* for fast convergence (§4.7) */
	double k;          /* seconds */
	double w_est;      /* Reno-friendly estimate, segments (§4.3) */
	double cwnd_epoch; /* segments */
	uint64_t t_epoch;  /* microseconds, 0: no epoch */
};

_Static_assert(sizeof(struct cubic) <= WN_TCP_CC_PRIV_SIZE, "CUBIC state too large");

static void
cubic_init(struct wn_tcp_conn *c)
{
	wn_tcp_cc_newreno.init(c);
	memset(c->cc_priv, 0, sizeof(c->cc_priv));
}

static void
cubic_on_ack(struct wn_tcp_conn *c, uint32_t acked, uint64_t now)
{
	struct cubic *p = (struct cubic *)c->cc_priv;
	double smss = tcp_smss(c), cwnd = c->cwnd / smss, t, target, w_cubic;
	double rtt = c->srtt / 1e6;

	if (c->cwnd < c->ssthresh) {
		/* slow start (§4.10) counting bytes (RFC 3465), as newreno_on_ack() */
		c->cwnd = RTE_MIN(c->cwnd + acked, RTE_MAX(c->ssthresh, c->cwnd + (uint32_t)smss));
		return;
	}
	if (p->t_epoch == 0) {
		p->t_epoch = now ? now : 1;
		p->cwnd_epoch = cwnd;
		p->w_est = cwnd;
		if (p->w_max < cwnd) {
			p->w_max = cwnd;
			p->k = 0;
		} else {
			p->k = cbrt((p->w_max - cwnd) / CUBIC_C); /* eq. 2 */
		}
	}
	t = (double)(now - p->t_epoch) / 1e6;
	/* eq. 1 evaluated at t + RTT (§4.2), clamped to [cwnd, 1.5 cwnd] */
	target = CUBIC_C * pow(t + rtt - p->k, 3) + p->w_max;
	if (target < cwnd)
		target = cwnd;
	if (target > 1.5 * cwnd)
		target = 1.5 * cwnd;
	/* §4.3 Reno-friendly region: W_est grows by alpha_cubic per RTT */
	p->w_est += 3.0 * (1 - CUBIC_BETA) / (1 + CUBIC_BETA) * (acked / smss) / cwnd;
	w_cubic = CUBIC_C * pow(t - p->k, 3) + p->w_max;
	if (w_cubic < p->w_est) {
		if (p->w_est > cwnd)
			cwnd = p->w_est;
	} else {
		cwnd += (target - cwnd) / cwnd * (acked / smss); /* §4.4 concave/convex */
	}
	c->cwnd = (uint32_t)(cwnd * smss);
}

static void
cubic_reduce(struct wn_tcp_conn *c)
{
	struct cubic *p = (struct cubic *)c->cc_priv;
	double smss = tcp_smss(c), cwnd = c->cwnd / smss;

	/* §4.7 fast convergence */
	if (cwnd < p->w_last_max)
		p->w_max = cwnd * (1 + CUBIC_BETA) / 2;
	else
		p->w_max = cwnd;
	p->w_last_max = cwnd;
	p->t_epoch = 0;
	c->ssthresh = RTE_MAX((uint32_t)(c->cwnd * CUBIC_BETA), 2 * (uint32_t)smss); /* §4.6 */
}

static void
cubic_on_loss(struct wn_tcp_conn *c, uint64_t now)
{
	(void)now;
	cubic_reduce(c);
	c->cwnd = c->ssthresh;
}

static void
cubic_on_recovery_end(struct wn_tcp_conn *c, uint64_t now)
{
	(void)now;
	c->cwnd = c->ssthresh;
}

static void
cubic_on_rto(struct wn_tcp_conn *c, uint64_t now)
{
	(void)now;
	cubic_reduce(c); /* §4.8 */
	c->cwnd = tcp_smss(c);
}

const struct wn_tcp_cc_ops wn_tcp_cc_cubic = {
	.name = "cubic",
	.init = cubic_init,
	.on_ack = cubic_on_ack,
	.on_loss = cubic_on_loss,
	.on_recovery_end = cubic_on_recovery_end,
	.on_rto = cubic_on_rto,
	.priv_size = sizeof(struct cubic),
};
