/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One direction of one queue of an impairer: drop → corrupt → dup → delay line
 * → reorder stage → output FIFO. Single-threaded; the owner feeds packets with
 * impair_pipe_push(), releases due packets with impair_pipe_tick() and takes the
 * result from the output FIFO.
 */
#ifndef IMPAIR_PIPE_H
#define IMPAIR_PIPE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "wn_impair.h"

/** Packets that may be held back for reordering at once. */
#define IMPAIR_HELD_MAX 64
/** Delay line capacity (power of two). */
#define IMPAIR_DELAY_SIZE 16384
/** Output FIFO capacity (power of two). */
#define IMPAIR_OUT_SIZE 4096

struct impair_held {
	struct rte_mbuf *m;
	uint32_t left;     /* later packets still to pass */
	uint64_t deadline; /* TSC */
};

struct impair_delayed {
	struct rte_mbuf *m;
	uint64_t due; /* TSC */
};

struct impair_pipe {
	uint64_t rng;
	uint64_t thr_drop;
	uint64_t thr_dup;
	uint64_t thr_reorder;
	uint64_t thr_corrupt;
	uint64_t thr_mangle;
	uint32_t *mangle_next;        /* the port's "mangle the next N" counter of this direction */
	const uint64_t *down_until;   /* the port's link-down deadline (TSC; 0: up) */
	uint64_t delay_cycles;
	uint64_t jitter_cycles;
	uint64_t last_due;            /* due time of the last packet into the delay line */
	uint64_t reorder_cycles;
	uint32_t gap;
	bool is_tx; /* resolve TX checksum offloads before corrupting */
	uint64_t now;

	struct impair_held held[IMPAIR_HELD_MAX];
	unsigned int nb_held;

	struct impair_delayed *delay; /* IMPAIR_DELAY_SIZE entries */
	uint32_t d_head, d_tail;

	struct rte_mbuf **out; /* IMPAIR_OUT_SIZE entries */
	uint32_t o_head, o_tail;

	struct wn_impair_stats st;
};

int impair_pipe_init(struct impair_pipe *p, const struct wn_impair_dir_conf *dc,
		     const struct wn_impair_conf *conf, uint64_t seed, bool is_tx, int socket,
		     uint32_t *mangle_next, const uint64_t *down_until);
void impair_pipe_fini(struct impair_pipe *p);
void impair_pipe_push(struct impair_pipe *p, struct rte_mbuf *m);
void impair_pipe_tick(struct impair_pipe *p, uint64_t now);

static inline uint32_t
impair_pipe_out_count(const struct impair_pipe *p)
{
	return p->o_tail - p->o_head;
}

static inline uint32_t
impair_pipe_out_room(const struct impair_pipe *p)
{
	return IMPAIR_OUT_SIZE - impair_pipe_out_count(p);
}

/* Packets that may still reach the output FIFO without a push: held and delayed. */
static inline uint32_t
impair_pipe_pending(const struct impair_pipe *p)
{
	return p->nb_held + (p->d_tail - p->d_head);
}

/* Contiguous run at the head of the output FIFO. */
static inline struct rte_mbuf **
impair_pipe_out_peek(struct impair_pipe *p, uint32_t *n)
{
	uint32_t idx = p->o_head & (IMPAIR_OUT_SIZE - 1);
	uint32_t cnt = impair_pipe_out_count(p);

	if (cnt > IMPAIR_OUT_SIZE - idx)
		cnt = IMPAIR_OUT_SIZE - idx;
	*n = cnt;
	return &p->out[idx];
}

static inline void
impair_pipe_out_consume(struct impair_pipe *p, uint32_t n)
{
	p->o_head += n;
	p->st.out += n;
}

#endif /* IMPAIR_PIPE_H */
