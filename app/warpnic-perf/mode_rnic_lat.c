/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Modes write_lat, read_lat, send_lat (ib_write_lat, ib_read_lat, ib_send_lat) on one QP,
 * one message in flight.
 *
 * write_lat: ping-pong of RDMA Writes. Each side polls the last octet of its rx half, which
 *            the peer's Write sets to the iteration's tag (1..127, bit 7 on the last one),
 *            and answers with a Write carrying the same tag. Latency: half the round trip.
 * send_lat:  ping-pong of Sends into posted receives; the tag rides in the last octet.
 *            Latency: half the round trip.
 * read_lat:  the client reads the server's rx half (the pattern) and waits for the
 *            completion. Latency: the whole Read (as ib_read_lat).
 * The server's loop ends at the tag with bit 7, so --duration needs no count up front.
 * Both sides then check their rx half: the pattern up to the last octet, then the last tag.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "wn_queue.h"

#include "perf.h"
#include "perf_rnic.h"

#define LAT_WARMUP 8
#define LAT_FINAL 0x80u
#define LAT_MAX_SAMPLES (1u << 20)

static uint8_t
lat_tag(uint64_t i)
{
	return (uint8_t)(1 + i % 127);
}

static uint8_t
lat_peek(const uint8_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static int
lat_prepare(struct perf_rnic *r, const struct perf_msg *start, struct perf_msg *ready)
{
	(void)ready;
	/* read_lat: the server's rx half is the source */
	perf_buffers_reset(r, start->size, start->seed,
			   r->ops->opcode == WN_QUEUE_WR_RDMA_READ && r->server);
	r->conn[0].tx[start->size - 1] = 0;
	return 0;
}

/* Reap send completions (errors end the run). @return completions or -errno. */
static int
lat_reap(struct perf_rnic *r)
{
	struct wn_queue_cqe e[8];
	int n = perf_poll(r, r->scq, e, 8);

	for (int i = 0; i < n; i++)
		r->conn[0].outstanding--;
	return n;
}

/*
 * Post the measured operation on QP 0. @return 1 posted, 0 when the SQ is full (its
 * completions reaped: try again in the next step), -errno.
 */
static int
lat_post(struct perf_rnic *r, uint32_t size)
{
	int n = perf_post_data(r, &r->conn[0], r->ops->opcode, size, 1);

	if (n == 0)
		n = lat_reap(r) < 0 ? -EIO : 0;
	return n;
}

/*
 * Has the peer's message of iteration @p i arrived? write_lat looks at the tag octet,
 * send_lat at the receive CQ, read_lat at the Read's completion.
 * @return the tag seen (> 0), 0 when not yet, or -errno.
 */
static int
lat_check_once(struct perf_rnic *r, uint32_t size, uint64_t i)
{
	struct perf_conn *c = &r->conn[0];
	uint8_t want = lat_tag(i);
	struct wn_queue_cqe e;
	int n;

	if (r->ops->opcode == WN_QUEUE_WR_RDMA_WRITE) {
		uint8_t t = lat_peek(c->rx + size - 1);

		if ((t & ~LAT_FINAL) == want)
			return t;
		n = lat_reap(r);
	} else if (r->ops->opcode == WN_QUEUE_WR_SEND) {
		n = perf_poll(r, r->rcq, &e, 1);
		if (n == 1) {
			uint8_t t = lat_peek(c->rx + size - 1);

			if (e.byte_len != size)
				c->bad_len++;
			n = perf_repost(r, &e);
			if (n != 0)
				return n;
			c->received++;
			if ((t & ~LAT_FINAL) != want) {
				fprintf(stderr, "%s: iteration %" PRIu64 ": tag %u, want %u\n",
					r->ops->name, i, t, want);
				return -EIO;
			}
			return t;
		}
		if (n == 0)
			n = lat_reap(r);
	} else {
		n = perf_poll(r, r->scq, &e, 1);
		if (n == 1) {
			c->outstanding--;
			return want;
		}
	}
	return n < 0 ? n : 0;
}

/* Nothing arrived in this step: fail once the peer has been silent for @p limit seconds. */
static int
lat_idle(struct perf_rnic *r, uint32_t size, double limit)
{
	struct perf_run *u = &r->run;
	double now;

	r->idle = true;
	if (++u->got % 4096 != 0)
		return 0;
	now = wn_perf_now();
	if (u->last_progress == 0) {
		u->last_progress = now;
	} else if (now - u->last_progress > limit) {
		fprintf(stderr, "%s: size %" PRIu32 ": iteration %" PRIu64
			" unanswered for %.0f s (dataplane stalled?)\n", r->ops->name, size, u->iter,
			limit);
		return -ETIMEDOUT;
	}
	return 0;
}

enum { LAT_POST = 0, LAT_WAIT, LAT_DRAIN, LAT_END };

static int
lat_client_begin(struct perf_rnic *r, const struct perf_msg *start)
{
	struct perf_run *u = &r->run;

	u->deadline = start->ms ? wn_perf_now() + start->ms / 1e3 : INFINITY;
	u->total = LAT_WARMUP + (start->iters < LAT_MAX_SAMPLES ? start->iters : LAT_MAX_SAMPLES);
	u->phase = LAT_POST;
	r->conn[0].bad_len = 0;
	return wn_perf_lat_init(&u->lat, u->total - LAT_WARMUP);
}

/*
 * One iteration: post the next ping (tag in the last octet), or look for the pong; a pong
 * that arrived is answered by the next ping in the same step, so that it leaves in this
 * iteration's transmit.
 */
static int
lat_client_step(struct perf_rnic *r, const struct perf_msg *start)
{
	struct perf_run *u = &r->run;
	struct perf_conn *c = &r->conn[0];
	bool read = r->ops->opcode == WN_QUEUE_WR_RDMA_READ;
	int t;

	switch (u->phase) {
	case LAT_WAIT:
		t = lat_check_once(r, start->size, u->iter);
		if (t <= 0)
			return t < 0 ? t : lat_idle(r, start->size, r->p->timeout);
		c->done++;
		u->last_progress = 0;
		if (u->iter >= LAT_WARMUP)
			u->lat.ns[u->lat.n++] =
				(double)(wn_perf_now_ns() - u->tstart) / (read ? 1 : 2);
		if (u->tag & LAT_FINAL) {
			u->phase = LAT_DRAIN;
			return 0;
		}
		u->iter++;
		u->phase = LAT_POST; /* the next ping now */
		/* fall through */
	case LAT_POST: {
		bool last = u->iter + 1 == u->total ||
			    (u->iter >= LAT_WARMUP && wn_perf_now() > u->deadline);

		u->tag = (uint8_t)(lat_tag(u->iter) | (last ? LAT_FINAL : 0));
		c->tx[start->size - 1] = u->tag;
		u->tstart = wn_perf_now_ns();
		t = lat_post(r, start->size);
		if (t > 0)
			u->phase = LAT_WAIT;
		return t < 0 ? t : 0;
	}
	default: /* LAT_DRAIN: let the last completions come home */
		if (c->outstanding == 0)
			return 1;
		t = lat_reap(r);
		if (t == 0)
			r->idle = true;
		return t < 0 ? t : 0;
	}
}

static int
lat_client_end(struct perf_rnic *r, const struct perf_msg *start, struct perf_msg *end,
	       struct wn_perf_row *row)
{
	struct perf_run *u = &r->run;

	(void)start;
	end->count = r->conn[0].done;
	end->aux = u->tag;
	if (u->phase == LAT_DRAIN && r->conn[0].outstanding == 0)
		wn_perf_lat_fill(&u->lat, row, 0);
	wn_perf_lat_free(&u->lat);
	return 0;
}

static int
lat_server_begin(struct perf_rnic *r, const struct perf_msg *start)
{
	struct perf_run *u = &r->run;

	r->conn[0].bad_len = 0;
	u->limit = r->p->timeout + start->ms / 1e3;
	/* the Reads need nothing from us */
	u->phase = r->ops->opcode == WN_QUEUE_WR_RDMA_READ ? LAT_END : LAT_WAIT;
	return 0;
}

/* One iteration: answer the ping with a pong of the same tag; after the last, the END. */
static int
lat_server_step(struct perf_rnic *r, const struct perf_msg *start)
{
	struct perf_run *u = &r->run;
	struct perf_conn *c = &r->conn[0];
	int t;

	switch (u->phase) {
	case LAT_WAIT:
		t = lat_check_once(r, start->size, u->iter);
		if (t <= 0)
			return t < 0 ? t : lat_idle(r, start->size, u->limit);
		u->last_progress = 0;
		u->tag = (uint8_t)t;
		c->tx[start->size - 1] = u->tag;
		u->phase = LAT_POST; /* the pong now */
		/* fall through */
	case LAT_POST:
		t = lat_post(r, start->size);
		if (t <= 0)
			return t;
		c->done++;
		u->iter++;
		u->phase = u->tag & LAT_FINAL ? LAT_DRAIN : LAT_WAIT;
		return 0;
	case LAT_DRAIN:
		if (c->outstanding > 0) {
			t = lat_reap(r);
			return t < 0 ? t : 0;
		}
		u->phase = LAT_END;
		return 0;
	default: /* LAT_END */
		t = perf_ctl_try_recv(r, &u->end);
		if (t < 0)
			return t;
		if (t > 0)
			return u->end.type == PERF_MSG_END ? 1 : -EPROTO;
		return lat_idle(r, start->size, r->p->timeout + u->limit);
	}
}

static int
lat_check(struct perf_rnic *r, const struct perf_msg *start, const struct perf_msg *end,
	  uint64_t *aux)
{
	struct perf_conn *c = &r->conn[0];
	uint32_t last = start->size - 1;
	int rc;

	if (r->ops->opcode == WN_QUEUE_WR_RDMA_READ)
		return r->server ? 0 : perf_check_rx(r, start->size, start->seed, aux);
	if (c->bad_len != 0) {
		fprintf(stderr, "%s: %" PRIu32 " receptions of a length other than %" PRIu32 "\n",
			r->ops->name, c->bad_len, start->size);
		return -EIO;
	}
	rc = perf_check_rx(r, last, start->seed, aux);
	if (rc == 0 && c->rx[last] != (uint8_t)end->aux) {
		fprintf(stderr, "%s: last octet 0x%02x, the last tag was 0x%02x\n", r->ops->name,
			c->rx[last], (uint8_t)end->aux);
		*aux = (uint64_t)last + 1;
		rc = -EIO;
	}
	return rc;
}

#define LAT_OPS(nm, op, snd, what, how)                                                         \
	static const struct perf_rnic_ops nm##_ops = {                                          \
		.name = #nm,                                                                    \
		.title = #nm ": RDMA " what " latency, " how " (us)",                           \
		.lat = true,                                                                    \
		.send = snd,                                                                    \
		.opcode = op,                                                                   \
		.def_size = 2,                                                                  \
		.def_iters = 1000,                                                              \
		.prepare = lat_prepare,                                                         \
		.client_begin = lat_client_begin,                                               \
		.client_step = lat_client_step,                                                 \
		.client_end = lat_client_end,                                                   \
		.server_begin = lat_server_begin,                                               \
		.server_step = lat_server_step,                                                 \
		.check = lat_check,                                                             \
	};                                                                                      \
	PERF_RNIC_MODE(nm, "RDMA " what " latency (--server / --client; warpnicd, --ip, --rtc)")

LAT_OPS(write_lat, WN_QUEUE_WR_RDMA_WRITE, false, "Write", "half the ping-pong round trip");
LAT_OPS(read_lat, WN_QUEUE_WR_RDMA_READ, false, "Read", "one whole Read");
LAT_OPS(send_lat, WN_QUEUE_WR_SEND, true, "Send", "half the ping-pong round trip");
