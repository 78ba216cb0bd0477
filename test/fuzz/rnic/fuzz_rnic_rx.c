/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz a live QP with arbitrary ULPDUs. Regions (an MR, a read-only MR, the receive/sink MR,
 * a fast-registered MR and a type 2 window) live in one arena with guard bytes between them;
 * posted receives, an outstanding Read and an outstanding Atomic let responses be placed.
 * Invariants: guard bytes never change, every outbound ULPDU parses and gathers only from
 * inside a region, and the engine never crashes (ASan/UBSan).
 *
 * Input: one flags octet (bit 0-1: RTR types accepted, bit 2-3: MULPDU choice), then records
 * of a 16-bit big-endian length and that many ULPDU octets.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_mem.h"
#include "wn_queue.h"
#include "wn_rnic.h"
#include "wn_wire_ddp.h"

#define G 64
#define A_LEN 1024
#define B_LEN 1024
#define C_LEN 2048
#define D_LEN 1024
#define ARENA (5 * G + A_LEN + B_LEN + C_LEN + D_LEN)
#define A_OFF (G)
#define B_OFF (A_OFF + A_LEN + G)
#define C_OFF (B_OFF + B_LEN + G)
#define D_OFF (C_OFF + C_LEN + G)
#define GUARD 0xa5

static uint8_t *arena;
static void *rings[4];
static struct wn_queue_ring sq_e, rq_e, scq_e, rcq_e, sq_c, rq_c, scq_c, rcq_c;

static bool
in_region(const uint8_t *p, uint32_t len)
{
	static const uint32_t off[4] = { A_OFF, B_OFF, C_OFF, D_OFF };
	static const uint32_t sz[4] = { A_LEN, B_LEN, C_LEN, D_LEN };

	for (int i = 0; i < 4; i++)
		if (p >= arena + off[i] && p + len <= arena + off[i] + sz[i])
			return true;
	return false;
}

static int
tx(void *arg, const struct wn_llp_ulpdu *u)
{
	uint8_t buf[70000];
	struct wn_ddp_seg seg;
	uint32_t n = u->hdr_len;

	(void)arg;
	memcpy(buf, u->hdr, u->hdr_len);
	for (unsigned int i = 0; i < u->n_iov; i++) {
		if (u->iov[i].len != 0 && !in_region(u->iov[i].base, u->iov[i].len))
			abort(); /* gathered from outside every region */
		memcpy(buf + n, u->iov[i].base, u->iov[i].len);
		n += u->iov[i].len;
	}
	if (n != u->len || wn_wire_ddp_parse(buf, n, WN_DDP_F_RFC7306, &seg, NULL) != 0)
		abort(); /* the engine emitted a malformed ULPDU */
	return 0;
}

static int
llp_send(struct wn_llp *l, const struct wn_llp_ulpdu *u)
{
	return tx(l->up_arg, u);
}

static const struct wn_llp_ops llp_ops = { .name = "fuzz", .send = llp_send };
static struct wn_llp llp = { .ops = &llp_ops };

static void *
ring(enum wn_queue_kind k, uint32_t depth, uint32_t sge, struct wn_queue_ring *e,
     struct wn_queue_ring *c, bool engine_consumes)
{
	uint64_t size = wn_queue_ring_size(k, depth, sge, 0);
	void *m = NULL;

	if (posix_memalign(&m, 4096, size) != 0)
		abort();
	if (wn_queue_ring_init(m, k, depth, sge, 0) != 0)
		abort();
	if (engine_consumes) {
		wn_queue_cons_attach(e, m, size, k);
		wn_queue_prod_attach(c, m, size, k);
	} else {
		wn_queue_prod_attach(e, m, size, k);
		wn_queue_cons_attach(c, m, size, k);
	}
	return m;
}

static void
post_recv(uint64_t id, uint32_t off, uint32_t len, uint32_t lkey)
{
	struct wn_queue_rwqe *w = wn_queue_prod_slot(&rq_c, 0);
	struct wn_queue_sge *g = (struct wn_queue_sge *)(w + 1);

	w->wr_id = id;
	w->num_sge = 2;
	g[0] = (struct wn_queue_sge){ 0x3000 + off, len / 2, lkey };
	g[1] = (struct wn_queue_sge){ 0x3000 + off + len / 2 + 16, len / 2 - 16, lkey };
	wn_queue_prod_commit(&rq_c, 1);
}

static struct wn_queue_swqe *
swqe(void)
{
	struct wn_queue_swqe *w = wn_queue_prod_slot(&sq_c, 0);

	memset(w, 0, sq_c.stride);
	return w;
}

static void
drain(void)
{
	while (wn_queue_cons_avail(&scq_c) > 0)
		wn_queue_cons_release(&scq_c, 1);
	while (wn_queue_cons_avail(&rcq_c) > 0)
		wn_queue_cons_release(&rcq_c, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t mulpdus[4] = { 128, 256, 1024, 9000 };
	struct wn_rnic_qp_conf c = { 0 };
	struct wn_mem_table *mem;
	struct wn_rnic_qp *qp;
	struct wn_queue_swqe *w;
	struct wn_queue_sge *g;
	uint32_t pd, sa, sb, sc, sd, mw;
	size_t pos = 1;

	if (size < 1)
		return 0;
	if (arena == NULL)
		arena = malloc(ARENA);
	memset(arena, GUARD, ARENA);
	for (uint32_t i = 0; i < A_LEN; i++)
		arena[A_OFF + i] = (uint8_t)i;
	memset(arena + B_OFF, 0x0b, B_LEN);
	memset(arena + C_OFF, 0, C_LEN);
	memset(arena + D_OFF, 0x0d, D_LEN);
	for (int i = 0; i < 4; i++)
		free(rings[i]);
	rings[0] = ring(WN_QUEUE_KIND_SQ, 16, 2, &sq_e, &sq_c, true);
	rings[1] = ring(WN_QUEUE_KIND_RQ, 16, 2, &rq_e, &rq_c, true);
	rings[2] = ring(WN_QUEUE_KIND_CQ, 64, 0, &scq_e, &scq_c, false);
	rings[3] = ring(WN_QUEUE_KIND_CQ, 64, 0, &rcq_e, &rcq_c, false);

	/* deterministic STags: index 1.. in creation order, keys as written (seeds use them) */
	mem = wn_mem_table_create(16, NULL);
	pd = (uint32_t)wn_mem_pd_alloc(mem);
	wn_mem_mr_reg(mem, pd, arena + A_OFF, A_LEN, 0x1000, 0x1f, 0x11, &sa);   /* 0x111 */
	wn_mem_mr_reg(mem, pd, arena + B_OFF, B_LEN, 0x2000, WN_MEM_ACCESS_REMOTE_READ, 0x22,
		      &sb);                                                       /* 0x222 */
	wn_mem_mr_reg(mem, pd, arena + C_OFF, C_LEN, 0x3000, WN_MEM_ACCESS_LOCAL_WRITE, 0x33,
		      &sc);                                                       /* 0x333 */
	wn_mem_frmr_alloc(mem, pd, arena + D_OFF, D_LEN, 0x44, &sd);             /* 0x444 */
	wn_mem_fast_reg(mem, sd + 1, pd, 0x4000, 512, 256, 0x7);                 /* 0x445 */
	wn_mem_mw_alloc(mem, pd, 2, 0x55, &mw);                                  /* 0x555 */
	wn_mem_mw_bind(mem, mw + 1, sa, pd, 1, 0x1100, 256, WN_MEM_ACCESS_REMOTE_WRITE); /* 556 */

	c.qpn = 1;
	c.pd = pd;
	c.mem = mem;
	c.sq = &sq_e;
	c.rq = &rq_e;
	c.scq = &scq_e;
	c.rcq = &rcq_e;
	c.mulpdu = mulpdus[data[0] >> 2 & 3];
	c.ord = 4;
	c.ird = 4;
	c.rfc7306 = true;
	c.rtr_recv = data[0] & 3;
	c.llp = &llp;
	qp = wn_rnic_qp_create(&c);
	if (qp == NULL)
		abort();
	wn_rnic_qp_start(qp);

	for (int i = 0; i < 4; i++)
		post_recv((uint64_t)i, 256u * (uint32_t)i, 256, sc);
	/* an outstanding Read (sink C + 1024, 300 octets; response STag 0x333 TO 0x3400) */
	w = swqe();
	w->opcode = WN_QUEUE_WR_RDMA_READ;
	w->u.rdma.rkey = 0x99;
	w->u.rdma.remote_addr = 0x10;
	g = (struct wn_queue_sge *)(w + 1);
	g[0] = (struct wn_queue_sge){ 0x3000 + 1024, 300, sc };
	w->num_sge = 1;
	wn_queue_prod_commit(&sq_c, 1);
	/* an outstanding FetchAdd, result at C + 2000 (request id 0) */
	w = swqe();
	w->opcode = WN_QUEUE_WR_ATOMIC_FETCH_AND_ADD;
	w->u.atomic.rkey = 0x99;
	w->u.atomic.remote_addr = 0x10;
	g = (struct wn_queue_sge *)(w + 1);
	g[0] = (struct wn_queue_sge){ 0x3000 + 2000, 8, sc };
	w->num_sge = 1;
	wn_queue_prod_commit(&sq_c, 1);
	wn_rnic_tx_poll(qp, 8);

	while (pos + 2 <= size) {
		size_t len = (size_t)data[pos] << 8 | data[pos + 1];

		pos += 2;
		if (len > size - pos)
			len = size - pos;
		wn_rnic_rx(qp, data + pos, len);
		wn_rnic_tx_poll(qp, 64);
		drain();
		pos += len;
	}
	wn_rnic_qp_disconnect(qp);
	drain();
	for (uint32_t i = 0; i < G; i++)
		if (arena[i] != GUARD || arena[A_OFF + A_LEN + i] != GUARD ||
		    arena[B_OFF + B_LEN + i] != GUARD || arena[C_OFF + C_LEN + i] != GUARD ||
		    arena[D_OFF + D_LEN + i] != GUARD)
			abort(); /* placement outside a region */
	for (uint32_t i = 0; i < B_LEN; i++)
		if (arena[B_OFF + i] != 0x0b)
			abort(); /* the read-only region was written */
	for (uint32_t i = 0; i < 256; i++)
		if (arena[D_OFF + i] != 0x0d || arena[D_OFF + 768 + i] != 0x0d)
			abort(); /* the fast-register MR's backing outside its registration */
	wn_rnic_qp_destroy(qp);
	wn_mem_table_free(mem);
	return 0;
}
