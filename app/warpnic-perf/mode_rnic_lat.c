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

/* Post the measured operation on QP 0, waiting for SQ room. */
static int
lat_post(struct perf_rnic *r, uint32_t size)
{
	struct perf_conn *c = &r->conn[0];

	for (;;) {
		int n = perf_post_data(r, c, r->ops->opcode, size, 1);

		if (n != 0)
			return n < 0 ? n : 0;
		n = lat_reap(r);
		if (n < 0)
			return n;
	}
}

/*
 * Wait for the peer's message of iteration @p i: write_lat polls the tag octet, send_lat the
 * receive CQ, read_lat the Read's completion. @return the tag seen (>0) or -errno.
 */
static int
lat_wait(struct perf_rnic *r, uint32_t size, uint64_t i, double limit)
{
	struct perf_conn *c = &r->conn[0];
	uint8_t want = lat_tag(i);
	uint32_t spins = 0;
	double t0 = 0;

	for (;;) {
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
		if (n < 0)
			return n;
		perf_relax(&spins);
		if (spins % 4096 == 0) {
			double now = wn_perf_now();

			if (t0 == 0) {
				t0 = now;
			} else if (now - t0 > limit) {
				fprintf(stderr, "%s: size %" PRIu32 ": iteration %" PRIu64
					" unanswered for %.0f s (dataplane stalled?)\n", r->ops->name,
					size, i, limit);
				return -ETIMEDOUT;
			}
		}
	}
}

static int
lat_client(struct perf_rnic *r, const struct perf_msg *start, const struct perf_msg *ready,
	   struct perf_msg *end, struct wn_perf_row *row)
{
	struct perf_conn *c = &r->conn[0];
	bool read = r->ops->opcode == WN_QUEUE_WR_RDMA_READ;
	double deadline = start->ms ? wn_perf_now() + start->ms / 1e3 : INFINITY;
	uint64_t total = LAT_WARMUP + (start->iters < LAT_MAX_SAMPLES ? start->iters
								     : LAT_MAX_SAMPLES);
	struct wn_perf_lat lat;
	uint64_t i;
	int rc = 0;

	(void)ready;
	rc = wn_perf_lat_init(&lat, total - LAT_WARMUP);
	if (rc != 0)
		return rc;
	c->bad_len = 0;
	for (i = 0; i < total; i++) {
		bool last = i + 1 == total || (i >= LAT_WARMUP && wn_perf_now() > deadline);
		uint8_t tag = (uint8_t)(lat_tag(i) | (last ? LAT_FINAL : 0));
		uint64_t t0, t1;
		int t;

		c->tx[start->size - 1] = tag;
		t0 = wn_perf_now_ns();
		rc = lat_post(r, start->size);
		if (rc != 0)
			break;
		t = lat_wait(r, start->size, i, r->p->timeout);
		t1 = wn_perf_now_ns();
		if (t < 0) {
			rc = t;
			break;
		}
		c->done++;
		if (i >= LAT_WARMUP)
			lat.ns[lat.n++] = (double)(t1 - t0) / (read ? 1 : 2);
		if (last) {
			end->aux = tag;
			break;
		}
	}
	/* let the last completions come home */
	while (rc == 0 && c->outstanding > 0) {
		int n = lat_reap(r);

		if (n < 0)
			rc = n;
	}
	end->count = c->done;
	if (rc == 0)
		wn_perf_lat_fill(&lat, row, 0);
	wn_perf_lat_free(&lat);
	return rc;
}

static int
lat_server(struct perf_rnic *r, const struct perf_msg *start, struct perf_msg *end)
{
	struct perf_conn *c = &r->conn[0];
	double limit = r->p->timeout + start->ms / 1e3;
	int rc = 0;

	c->bad_len = 0;
	if (r->ops->opcode == WN_QUEUE_WR_RDMA_READ) /* the Reads need nothing from us */
		return perf_ctl_recv(r, end, PERF_MSG_END, limit);
	for (uint64_t i = 0;; i++) {
		int t = lat_wait(r, start->size, i, limit);

		if (t < 0)
			return t;
		c->tx[start->size - 1] = (uint8_t)t;
		rc = lat_post(r, start->size);
		if (rc != 0)
			return rc;
		c->done++;
		if (t & LAT_FINAL)
			break;
	}
	while (c->outstanding > 0) {
		int n = lat_reap(r);

		if (n < 0)
			return n;
	}
	return perf_ctl_recv(r, end, PERF_MSG_END, r->p->timeout);
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
		.title = #nm ": " what " latency through warpnicd, " how " (us)",               \
		.lat = true,                                                                    \
		.send = snd,                                                                    \
		.opcode = op,                                                                   \
		.def_size = 2,                                                                  \
		.def_iters = 1000,                                                              \
		.prepare = lat_prepare,                                                         \
		.client = lat_client,                                                           \
		.server = lat_server,                                                           \
		.check = lat_check,                                                             \
	};                                                                                      \
	PERF_RNIC_MODE(nm, "RDMA " what " latency (client of warpnicd; --server / --client)")

LAT_OPS(write_lat, WN_QUEUE_WR_RDMA_WRITE, false, "Write", "half the ping-pong round trip");
LAT_OPS(read_lat, WN_QUEUE_WR_RDMA_READ, false, "Read", "one whole Read");
LAT_OPS(send_lat, WN_QUEUE_WR_SEND, true, "Send", "half the ping-pong round trip");
