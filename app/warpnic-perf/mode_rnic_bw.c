/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Modes write_bw, read_bw, send_bw (ib_write_bw, ib_read_bw, ib_send_bw): the client keeps
 * --depth work requests outstanding on each of --qps QPs, every one signaled, until --iters
 * per QP or --duration; bandwidth is message octets completed over the time from the first
 * post to the last completion. The client sends ALIVE on the control QP every second, so a
 * server whose CPU sees nothing of the Writes or Reads does not time out on a long run.
 *
 * write_bw: client tx half → server rx half; the server checks its rx halves.
 * read_bw:  server rx half (the pattern) → client rx half; the client checks.
 * send_bw:  client tx half → a receive the server posted in its rx half. An iWARP Send
 *           that finds no receive is fatal (RFC 5040 §7.1: Terminate), so the sender only
 *           sends against credits: the server starts with one receive per RQ slot and
 *           returns the cumulative count of receives it has posted in a small Send every
 *           quarter of the RQ. The server checks every length and its rx halves.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wn_queue.h"

#include "perf.h"
#include "perf_rnic.h"

#define BW_BATCH 32
/* wr_id slot of write_bw's closing Reads (bw_write_flush) */
#define BW_FLUSH 1
/* seconds between the client's ALIVE messages (the server's timeout counts from the last) */
#define BW_ALIVE_S 1.0

static int
bw_prepare(struct perf_rnic *r, const struct perf_msg *start, struct perf_msg *ready)
{
	bool read = r->ops->opcode == WN_QUEUE_WR_RDMA_READ;

	(void)ready;
	/* read_bw: the server's rx halves are the source */
	perf_buffers_reset(r, start->size, start->seed, read && r->server);
	return 0;
}

/* send_bw sender: take credit Sends, repost their receives. */
/* @p c may post again: on the due list once. */
static void
bw_due(struct perf_rnic *r, struct perf_conn *c)
{
	if (!c->due) {
		c->due = true;
		r->due[r->run.due_n++] = c->index - 1;
	}
}

static int
bw_credits(struct perf_rnic *r)
{
	struct wn_queue_cqe e[BW_BATCH];
	int n = perf_poll(r, r->rcq, e, BW_BATCH);

	for (int i = 0; i < n; i++) {
		struct perf_conn *c = perf_conn_of(r, e[i].wr_id);
		uint64_t v;
		int rc;

		if (c == NULL || perf_wr_kind_of(e[i].wr_id) != PERF_WR_CREDIT)
			return -EPROTO;
		/* cumulative: a newer credit overwriting an older one loses nothing */
		v = __atomic_load_n(c->credit_slot, __ATOMIC_ACQUIRE);
		if (v > c->credits) {
			c->credits = v;
			bw_due(r, c);
		}
		rc = perf_repost(r, &e[i]);
		if (rc != 0)
			return rc;
	}
	return n;
}

static int
bw_client_begin(struct perf_rnic *r, const struct perf_msg *start)
{
	struct perf_run *u = &r->run;

	u->open = true;
	u->deadline = start->ms ? wn_perf_now() + start->ms / 1e3 : INFINITY;
	u->t0 = u->t_last = u->last_progress = u->alive_at = wn_perf_now();
	for (uint32_t i = 0; i < r->qps; i++) {
		struct perf_conn *c = &r->conn[i];

		c->due = false;
		bw_due(r, c);
		u->outstanding += c->outstanding;
		u->unposted += c->posted < start->iters;
	}
	return 0;
}

/*
 * write_bw, the Writes completed: one 1-octet Read per QP, signaled (slot BW_FLUSH). A Write
 * completes at the requester once TCP has it, and END goes on another connection; the Read's
 * response follows the QP's Writes placed at the server (RFC 5040 ordering), so the server
 * checks its rx halves only after every octet is there. Not counted, not timed.
 */
static int
bw_write_flush(struct perf_rnic *r)
{
	r->run.phase = 1;
	for (uint32_t i = 0; i < r->qps; i++) {
		struct perf_conn *c = &r->conn[i];
		int rc = perf_post_send(r, c, WN_QUEUE_WR_RDMA_READ, WN_QUEUE_SEND_SIGNALED, c->rx,
					1, r->key, c->raddr, c->rkey,
					perf_wr_id(c->index, PERF_WR_DATA, BW_FLUSH));

		if (rc != 0)
			return rc == -EAGAIN ? -EIO : rc;
		r->run.outstanding++;
	}
	return 0;
}

/* One iteration: keep --depth WRs outstanding per QP (send_bw: within the credits), reap. */
static int
bw_client_step(struct perf_rnic *r, const struct perf_msg *start)
{
	struct perf_run *u = &r->run;
	struct wn_queue_cqe e[BW_BATCH];
	bool send = r->ops->send, busy = false;
	double now;
	int n;

	r->idle = true;
	/* the due QPs only (all at first; then those with completions or credits): one that
	 * could not post all it wanted stays due */
	for (uint32_t i = 0, k = u->due_n, w = 0; u->open && i < k; i++) {
		struct perf_conn *c = &r->conn[r->due[i]];
		uint64_t want = r->depth - c->outstanding, left = start->iters - c->posted;

		c->due = false;
		if (left < want)
			want = left;
		if (send && c->credits - c->sent < want)
			want = c->credits - c->sent;
		n = want == 0 ? 0 : perf_post_data(r, c, r->ops->opcode, start->size,
						   (uint32_t)want);
		if (n < 0)
			return n;
		if (send)
			c->sent += (uint64_t)n;
		u->outstanding += (uint64_t)n;
		if (left > 0 && c->posted >= start->iters)
			u->unposted--;
		if ((uint64_t)n < want) {
			c->due = true;
			r->due[w++] = r->due[i];
		}
		if (i + 1 == k)
			u->due_n = w;
	}
	n = perf_poll(r, r->scq, e, BW_BATCH);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		struct perf_conn *c = perf_conn_of(r, e[i].wr_id);

		if (c == NULL || perf_wr_kind_of(e[i].wr_id) != PERF_WR_DATA)
			return -EPROTO;
		c->outstanding--;
		u->outstanding--;
		if (perf_wr_slot(e[i].wr_id) == BW_FLUSH)
			continue;
		c->done++;
		u->total++;
		bw_due(r, c);
	}
	now = wn_perf_now();
	if (n > 0) {
		if (u->phase == 0)
			u->t_last = now;
		u->last_progress = now;
		r->idle = false;
	}
	if (send) {
		n = bw_credits(r);
		if (n < 0)
			return n;
		if (n > 0)
			r->idle = false;
	}
	if (u->open && now > u->deadline)
		u->open = false;
	if (now - u->alive_at >= BW_ALIVE_S) {
		struct perf_msg a = { .type = PERF_MSG_ALIVE };

		u->alive_at = now;
		n = perf_ctl_send(r, &a);
		if (n < 0)
			return n;
	}
	busy = u->outstanding > 0 || (u->open && u->unposted > 0);
	if (!busy && (r->ops->opcode != WN_QUEUE_WR_RDMA_WRITE || u->phase == 1))
		return 1;
	if (!busy)
		return bw_write_flush(r);
	if (r->idle && now - u->last_progress > r->p->timeout) {
		fprintf(stderr, "%s: size %" PRIu32 ": no completion for %.0f s after %" PRIu64
			" (dataplane stalled?)\n", r->ops->name, start->size, r->p->timeout,
			u->total);
		return -ETIMEDOUT;
	}
	return 0;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Each QP's goodput over the run: the least, the median and the most (columns 3-5). */
static void
qp_shares(struct perf_rnic *r, uint32_t size, double secs, struct wn_perf_row *row)
{
	uint64_t *done = malloc(r->qps * sizeof(*done));

	if (done == NULL)
		return;
	for (uint32_t i = 0; i < r->qps; i++)
		done[i] = r->conn[i].done;
	qsort(done, r->qps, sizeof(*done), cmp_u64);
	row->val[3] = (double)done[0] * size * 8 / secs / 1e9;
	row->val[4] = (double)done[r->qps / 2] * size * 8 / secs / 1e9;
	row->val[5] = (double)done[r->qps - 1] * size * 8 / secs / 1e9;
	free(done);
}

static int
bw_client_end(struct perf_rnic *r, const struct perf_msg *start, struct perf_msg *end,
	      struct wn_perf_row *row)
{
	struct perf_run *u = &r->run;
	double secs = u->t_last - u->t0;

	end->count = u->total;
	if (secs <= 0)
		secs = 1e-9;
	row->val[0] = (double)u->total * start->size * 8 / secs / 1e9;
	row->val[1] = (double)u->total / secs / 1e6;
	row->val[2] = (double)u->total;
	qp_shares(r, start->size, secs, row);
	return 0;
}

/* send_bw receiver: count, repost, and return credits every quarter of the RQ. */
static int
bw_receive(struct perf_rnic *r, uint32_t size, uint64_t *got)
{
	struct wn_queue_cqe e[BW_BATCH];
	int n = perf_poll(r, r->rcq, e, BW_BATCH);

	for (int i = 0; i < n; i++) {
		struct perf_conn *c = perf_conn_of(r, e[i].wr_id);
		int rc;

		if (c == NULL || perf_wr_kind_of(e[i].wr_id) != PERF_WR_RECV)
			return -EPROTO;
		c->received++;
		c->done++;
		(*got)++;
		if (e[i].byte_len != size)
			c->bad_len++;
		rc = perf_repost(r, &e[i]);
		if (rc != 0)
			return rc;
		c->reposted++;
	}
	for (uint32_t i = 0; i < r->qps; i++) {
		struct perf_conn *c = &r->conn[i];
		uint64_t posted = r->rq_depth + c->reposted;
		int rc;

		if (posted - c->credit_sent < r->rq_depth / 4)
			continue;
		/* inline: the credit word is copied into the WQE, so a later credit may be
		 * written while this Send is still outstanding (verbs: a posted buffer is the
		 * RNIC's until its completion) */
		rc = perf_post_send(r, c, WN_QUEUE_WR_SEND,
				    WN_QUEUE_SEND_SIGNALED | WN_QUEUE_SEND_INLINE, &posted,
				    sizeof(uint64_t), 0, 0, 0,
				    perf_wr_id(c->index, PERF_WR_CREDIT, 0));
		if (rc == 0)
			c->credit_sent = posted;
		else if (rc != -EAGAIN)
			return rc;
	}
	/* reap the credit Sends */
	int k = perf_poll(r, r->scq, e, BW_BATCH);

	if (k < 0)
		return k;
	for (int i = 0; i < k; i++) {
		struct perf_conn *c = perf_conn_of(r, e[i].wr_id);

		if (c != NULL)
			c->outstanding--;
	}
	return n + k;
}

static int
bw_server_begin(struct perf_rnic *r, const struct perf_msg *start)
{
	struct perf_run *u = &r->run;

	u->limit = r->p->timeout + start->ms / 1e3;
	u->last_progress = wn_perf_now();
	for (uint32_t i = 0; i < r->qps; i++)
		r->conn[i].bad_len = 0;
	return 0;
}

/*
 * One iteration: send_bw counts and reposts receives and returns credits; Write and Read need
 * nothing from the server's CPU. Done when the client's END is there (and, send_bw, every
 * message it counted).
 */
static int
bw_server_step(struct perf_rnic *r, const struct perf_msg *start)
{
	struct perf_run *u = &r->run;
	int n = 0, m = 0;

	if (r->ops->send) {
		n = bw_receive(r, start->size, &u->got);
		if (n < 0)
			return n;
	}
	if (!u->have_end) {
		m = perf_ctl_try_recv(r, &u->end);
		if (m < 0)
			return m;
		if (m > 0 && u->end.type != PERF_MSG_END && u->end.type != PERF_MSG_ALIVE)
			return -EPROTO;
		u->have_end = m > 0 && u->end.type == PERF_MSG_END;
	}
	if (u->have_end && (!r->ops->send || u->got >= u->end.count))
		return 1;
	if (n > 0 || m > 0) {
		u->last_progress = wn_perf_now();
		return 0;
	}
	r->idle = true;
	if (++u->iter % 1024 == 0 && wn_perf_now() - u->last_progress > u->limit) {
		fprintf(stderr, "%s: size %" PRIu32 ": got %" PRIu64 " of %s%" PRIu64
			" messages, then nothing for %.0f s\n", r->ops->name, start->size, u->got,
			u->have_end ? "" : "at least ", u->have_end ? u->end.count : u->got,
			u->limit);
		return -ETIMEDOUT;
	}
	return 0;
}

static int
bw_check(struct perf_rnic *r, const struct perf_msg *start, const struct perf_msg *end,
	 uint64_t *aux)
{
	bool read = r->ops->opcode == WN_QUEUE_WR_RDMA_READ;

	/* whoever received checks: the server for Write and Send, the client for Read */
	if (read == r->server)
		return 0;
	if (r->ops->send) {
		uint64_t got = 0;

		for (uint32_t i = 0; i < r->qps; i++) {
			got += r->conn[i].done;
			if (r->conn[i].bad_len != 0) {
				fprintf(stderr, "%s: QP %u: %" PRIu32 " receptions of a length "
					"other than %" PRIu32 "\n", r->ops->name, i,
					r->conn[i].bad_len, start->size);
				return -EIO;
			}
		}
		if (got != end->count) {
			fprintf(stderr, "%s: received %" PRIu64 " messages, the client sent %"
				PRIu64 "\n", r->ops->name, got, end->count);
			return -EIO;
		}
	}
	return perf_check_rx(r, start->size, start->seed, aux);
}

#define BW_OPS(nm, op, snd, what)                                                               \
	static const struct perf_rnic_ops nm##_ops = {                                          \
		.name = #nm,                                                                    \
		.title = #nm ": RDMA " what ", message octets (Gbit/s)",                        \
		.send = snd,                                                                    \
		.opcode = op,                                                                   \
		.def_size = 65536,                                                              \
		.def_iters = 5000,                                                              \
		.prepare = bw_prepare,                                                          \
		.client_begin = bw_client_begin,                                                \
		.client_step = bw_client_step,                                                  \
		.client_end = bw_client_end,                                                    \
		.server_begin = bw_server_begin,                                                \
		.server_step = bw_server_step,                                                  \
		.check = bw_check,                                                              \
	};                                                                                      \
	PERF_RNIC_MODE(nm, "RDMA " what " (--server / --client; warpnicd, --ip, --rtc)")

BW_OPS(write_bw, WN_QUEUE_WR_RDMA_WRITE, false, "Write bandwidth");
BW_OPS(read_bw, WN_QUEUE_WR_RDMA_READ, false, "Read bandwidth");
BW_OPS(send_bw, WN_QUEUE_WR_SEND, true, "Send bandwidth");
