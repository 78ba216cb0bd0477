/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timer wheel: a hashed timer wheel of our own per context (TCP_WHEEL_SLOTS slots of 1 ms)
 * rather than rte_timer, because time is the caller's `now` (tests drive it
 * deterministically, no global timer state or TSC reads inside the library) and each
 * connection sits in exactly one slot (its earliest deadline), so arming a timer is O(1)
 * and a connection's RTO/delayed-ACK/persist/TIME_WAIT timers cost one list entry. ctx.c
 * walks it (wn_tcp_process) and fires the timers.
 */
#include "tcp_priv.h"

void
wn_tcp_wheel_remove(struct wn_tcp_conn *c)
{
	if (c->flags & CF_IN_WHEEL) {
		TAILQ_REMOVE(&c->ctx->wheel[c->slot], c, wheel_link);
		c->flags &= ~CF_IN_WHEEL;
	}
}

void
wn_tcp_timer_update(struct wn_tcp_conn *c)
{
	struct wn_tcp_ctx *ctx = c->ctx;
	uint64_t d = UINT64_MAX;
	uint64_t t[6] = { c->t_rto, c->t_delack, c->t_persist, c->t_tw, c->t_tlp, c->t_ka };
	uint64_t tick;
	uint32_t slot;

	if (c->flags & CF_DEAD)
		return;
	for (int i = 0; i < 6; i++)
		if (t[i] != 0 && t[i] < d)
			d = t[i];
	if (d == UINT64_MAX) {
		wn_tcp_wheel_remove(c);
		c->deadline = 0;
		return;
	}
	/* Round up: the slot is visited once now >= its tick, so the deadline has passed
	 * then; rounding down would leave a deadline inside the current tick for a whole
	 * wheel rotation. */
	tick = (d + TCP_TICK_US - 1) / TCP_TICK_US;
	if (tick < ctx->wheel_tick)
		tick = ctx->wheel_tick;
	slot = (uint32_t)(tick % TCP_WHEEL_SLOTS);
	c->deadline = d;
	if ((c->flags & CF_IN_WHEEL) && c->slot == slot)
		return;
	wn_tcp_wheel_remove(c);
	c->slot = slot;
	TAILQ_INSERT_TAIL(&ctx->wheel[slot], c, wheel_link);
	c->flags |= CF_IN_WHEEL;
}
