/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz the client-written side of the ABI: arbitrary send WQEs (and a hostile producer
 * index) in a QP's SQ ring, processed by the engine. The client is not trusted, so:
 * every outbound ULPDU must parse, gather only from registered regions, local operations
 * (fast-register, bind, local invalidate) must keep the arena's guard bytes intact, and
 * completions must be well formed. Also covers wn_queue_ring_attach() on a corrupted header.
 *
 * Input: flags octet (bit 0: corrupt the producer index with the next 4 octets; bit 1:
 * corrupt the ring header's geometry before attaching), then WQEs of 128 octets each.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_mem.h"
#include "wn_queue.h"
#include "wn_rnic.h"
#include "wn_wire_ddp.h"

#define G 64
#define R_LEN 2048
#define ARENA (3 * G + 2 * R_LEN)
#define R0 (G)
#define R1 (G + R_LEN + G)
#define GUARD 0x5a
#define STRIDE 128

static uint8_t *arena;

static int
tx(void *arg, const struct wn_llp_ulpdu *u)
{
	uint8_t buf[70000];
	struct wn_ddp_seg seg;
	uint32_t n = u->hdr_len;

	(void)arg;
	memcpy(buf, u->hdr, u->hdr_len);
	for (unsigned int i = 0; i < u->n_iov; i++) {
		const uint8_t *b = u->iov[i].base;
		uint32_t l = u->iov[i].len;
		bool ok = (b >= arena + R0 && b + l <= arena + R0 + R_LEN) ||
			  (b >= arena + R1 && b + l <= arena + R1 + R_LEN);

		/* inline data is copied into the engine's QP; allow what is not the arena */
		if (!ok && b >= arena && b < arena + ARENA)
			abort();
		memcpy(buf + n, b, l);
		n += l;
	}
	if (n != u->len || wn_wire_ddp_parse(buf, n, WN_DDP_F_RFC7306, &seg, NULL) != 0)
		abort();
	return 0;
}

static int
llp_send(struct wn_llp *l, const struct wn_llp_ulpdu *u)
{
	return tx(l->up_arg, u);
}

static const struct wn_llp_ops llp_ops = { .name = "fuzz", .send = llp_send };
static struct wn_llp llp = { .ops = &llp_ops };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t sq_size = wn_queue_ring_size(WN_QUEUE_KIND_SQ, 16, 4, 64);
	uint64_t rq_size = wn_queue_ring_size(WN_QUEUE_KIND_RQ, 16, 1, 0);
	uint64_t cq_size = wn_queue_ring_size(WN_QUEUE_KIND_CQ, 64, 0, 0);
	struct wn_queue_ring sq_e, sq_c, rq_e, scq_e, scq_c, rcq_e;
	struct wn_rnic_qp_conf c = { 0 };
	struct wn_mem_table *mem;
	struct wn_rnic_qp *qp;
	void *sqm = NULL, *rqm = NULL, *scqm = NULL, *rcqm = NULL;
	uint32_t pd, s0, s1, fr, mw;
	size_t pos = 1;

	if (size < 1 || wn_queue_entry_stride(WN_QUEUE_KIND_SQ, 4, 64) != STRIDE)
		return 0;
	if (arena == NULL)
		arena = malloc(ARENA);
	memset(arena, GUARD, ARENA);
	memset(arena + R0, 1, R_LEN);
	memset(arena + R1, 2, R_LEN);
	if (posix_memalign(&sqm, 4096, sq_size) || posix_memalign(&rqm, 4096, rq_size) ||
	    posix_memalign(&scqm, 4096, cq_size) || posix_memalign(&rcqm, 4096, cq_size))
		abort();
	wn_queue_ring_init(sqm, WN_QUEUE_KIND_SQ, 16, 4, 64);
	wn_queue_ring_init(rqm, WN_QUEUE_KIND_RQ, 16, 1, 0);
	wn_queue_ring_init(scqm, WN_QUEUE_KIND_CQ, 64, 0, 0);
	wn_queue_ring_init(rcqm, WN_QUEUE_KIND_CQ, 64, 0, 0);
	if ((data[0] & 2) && size >= 5) {
		/* a hostile client rewrote the header: attach must refuse or stay in bounds */
		struct wn_queue_ring_hdr *h = sqm;
		struct wn_queue_ring tmp;

		memcpy(&h->depth, data + 1, 4);
		if (wn_queue_ring_attach(&tmp, sqm, sq_size, WN_QUEUE_KIND_SQ) == 0 &&
		    WN_QUEUE_HDR_SIZE + (uint64_t)tmp.depth * tmp.stride > sq_size)
			abort();
		h->depth = 16;
	}
	wn_queue_cons_attach(&sq_e, sqm, sq_size, WN_QUEUE_KIND_SQ);
	wn_queue_prod_attach(&sq_c, sqm, sq_size, WN_QUEUE_KIND_SQ);
	wn_queue_cons_attach(&rq_e, rqm, rq_size, WN_QUEUE_KIND_RQ);
	wn_queue_prod_attach(&scq_e, scqm, cq_size, WN_QUEUE_KIND_CQ);
	wn_queue_cons_attach(&scq_c, scqm, cq_size, WN_QUEUE_KIND_CQ);
	wn_queue_prod_attach(&rcq_e, rcqm, cq_size, WN_QUEUE_KIND_CQ);

	mem = wn_mem_table_create(16, NULL);
	pd = (uint32_t)wn_mem_pd_alloc(mem);
	wn_mem_mr_reg(mem, pd, arena + R0, R_LEN, 0x1000, 0x1f, 0x11, &s0);  /* 0x111 */
	wn_mem_mr_reg(mem, pd, arena + R1, R_LEN, 0x2000, 0x1, 0x22, &s1);   /* 0x222 */
	wn_mem_frmr_alloc(mem, pd, arena + R1, R_LEN, 0x33, &fr);            /* 0x333 */
	wn_mem_mw_alloc(mem, pd, 2, 0x44, &mw);                              /* 0x444 */

	c.qpn = 1;
	c.pd = pd;
	c.mem = mem;
	c.sq = &sq_e;
	c.rq = &rq_e;
	c.scq = &scq_e;
	c.rcq = &rcq_e;
	c.mulpdu = 128;
	c.ord = 2;
	c.ird = 2;
	c.rfc7306 = true;
	c.llp = &llp;
	qp = wn_rnic_qp_create(&c);
	if (qp == NULL)
		abort();
	wn_rnic_qp_start(qp);

	if (data[0] & 1) {
		pos = 5;
		if (size >= 5) {
			uint32_t prod;

			memcpy(&prod, data + 1, 4);
			atomic_store(&((struct wn_queue_ring_hdr *)sqm)->prod, prod);
		}
	}
	while (pos + STRIDE <= size) {
		if (wn_queue_prod_space(&sq_c) <= 0)
			break;
		memcpy(wn_queue_prod_slot(&sq_c, 0), data + pos, STRIDE);
		wn_queue_prod_commit(&sq_c, 1);
		pos += STRIDE;
		wn_rnic_tx_poll(qp, 64);
		while (wn_queue_cons_avail(&scq_c) > 0) {
			const struct wn_queue_cqe *e = wn_queue_cons_slot(&scq_c, 0);

			if (e->qp_num != 1)
				abort();
			wn_queue_cons_release(&scq_c, 1);
		}
	}
	wn_rnic_tx_poll(qp, 64);
	wn_rnic_qp_disconnect(qp);
	for (uint32_t i = 0; i < G; i++)
		if (arena[i] != GUARD || arena[R0 + R_LEN + i] != GUARD ||
		    arena[R1 + R_LEN + i] != GUARD)
			abort();
	wn_rnic_qp_destroy(qp);
	wn_mem_table_free(mem);
	free(sqm);
	free(rqm);
	free(scqm);
	free(rcqm);
	return 0;
}
