/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lib/client: waiting without holding a CPU another thread needs.
 *
 * A program that spins on an empty CQ (perftest, most benchmarks) holds its CPU; when the
 * dataplane lcore that will produce the completion shares that CPU, every microsecond spent
 * spinning delays the completion. So after a short spin the poller yields on each empty poll
 * (the lcore, if runnable there, runs at once), and after a longer wait it sleeps briefly
 * between polls (wn_client_poll_backoff()). WARPNIC_POLL_SPIN_US sets the spin (default 5;
 * "-1" never backs off).
 *
 * The answer to a control request is the other way round: it comes within microseconds when
 * warpnicd's control thread is awake, and a thread that blocks for it pays a wake-up that on
 * a VM costs tens of microseconds (an idle virtual CPU halts). wn_client_call() can poll for
 * it, yielding, for WARPNIC_CALL_SPIN_US before it blocks (default 0: blocks at once; on a
 * 2-core machine polling made sequential requests 3 x faster and 1,000 connections at once
 * 25 % slower, docs/configuration.md).
 */
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "wn_client.h"

/* After this long without a completion, sleep NAP_NS between polls. */
#define NAP_AFTER_NS 1000000ull
#define NAP_NS 20000L

uint64_t
wn_client_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Environment variable @p name in microseconds (@p def_us when unset), read once into
 * @p cache: ns, or UINT64_MAX for a negative value.
 */
static uint64_t
env_ns(const char *name, long def_us, _Atomic uint64_t *cache)
{
	uint64_t v = *cache;
	const char *e;
	long us;

	if (v != 0)
		return v - 1;
	e = getenv(name);
	us = e != NULL && *e != '\0' ? strtol(e, NULL, 10) : def_us;
	v = us < 0 ? UINT64_MAX : (uint64_t)us * 1000;
	*cache = v == UINT64_MAX ? v : v + 1;
	return v;
}

/* The spin from WARPNIC_POLL_SPIN_US: ns, or UINT64_MAX (never back off). */
static uint64_t
spin_ns(void)
{
	static _Atomic uint64_t cached;

	return env_ns("WARPNIC_POLL_SPIN_US", 5, &cached);
}

uint64_t
wn_client_yield_ns(void)
{
	uint64_t t = wn_client_now_ns();

	(void)sched_yield();
	return wn_client_now_ns() - t;
}

uint64_t
wn_client_call_spin_ns(void)
{
	static _Atomic uint64_t cached;
	uint64_t v = env_ns("WARPNIC_CALL_SPIN_US", 0, &cached);

	return v == UINT64_MAX ? 0 : v;
}

void
wn_client_poll_backoff(struct wn_client_backoff *b, int got)
{
	uint64_t t, spin;

	if (got != 0) {
		b->empty_since = 0;
		return;
	}
	t = wn_client_now_ns();
	if (b->empty_since == 0) {
		b->empty_since = t;
		return;
	}
	spin = spin_ns();
	if (spin == UINT64_MAX || t - b->empty_since < spin)
		return;
	if (t - b->empty_since < NAP_AFTER_NS) {
		(void)sched_yield();
	} else {
		struct timespec ts = { 0, NAP_NS };

		(void)nanosleep(&ts, NULL);
	}
}
