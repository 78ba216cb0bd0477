/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One rdma_cm connection between a program that registers memory of some kind (the server,
 * which says what to do) and a generic peer (the driver), for the registered memory tests
 * (mr_kinds.c, mr_dpdk.c). Both use unmodified verbs calls, through the shims.
 *
 * The server sends one request at a time and waits for its answer: RDMA Write a pattern
 * into [addr, addr+len) of an rkey, RDMA Read it back and check it, receive a Send of a
 * pattern and check it, or end. The driver answers each with a status (0: done and right).
 * Patterns are 64-bit words that depend on a seed and the word's offset in its region.
 */
#ifndef MR_PAIR_H
#define MR_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define MRP_CHECK(c)                                                                     \
	do {                                                                             \
		if (!(c)) {                                                              \
			fprintf(stderr, "%s: check failed at %s:%d: %s (errno %d: %s)\n",  \
				mrp_name, __FILE__, __LINE__, #c, errno, strerror(errno)); \
			exit(2);                                                         \
		}                                                                        \
	} while (0)

enum mrp_op {
	MRP_WRITE = 1, /* RDMA Write the pattern */
	MRP_READ,      /* RDMA Read and check the pattern */
	MRP_RECV,      /* receive a Send of len octets (answered twice: posted, then checked) */
	MRP_BYE,
	MRP_ACK,       /* the driver's answer */
};

struct mrp_msg {
	uint32_t op;
	uint32_t rkey;
	uint64_t addr;
	uint64_t len;
	uint64_t seed;
	uint64_t off;   /* offset of addr in the pattern's region */
	int32_t status; /* MRP_ACK: 0, a work completion status + 1000, or -1 (pattern) */
	uint32_t rsvd;
};

struct mrp {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq, *rcq; /* sends, receives */
	struct mrp_msg *ctl; /* [0] receive, [1] send */
	struct ibv_mr *ctl_mr;
	uint8_t *buf;        /* the driver's data */
	size_t buf_len;
	struct ibv_mr *buf_mr;
};

extern const char *mrp_name;

/* Fill / check [p, p+len) as offset @p off of the pattern of @p seed (len a word multiple). */
void mrp_fill(void *p, size_t len, uint64_t seed, uint64_t off);
/* @return the number of words that differ. */
size_t mrp_bad(const void *p, size_t len, uint64_t seed, uint64_t off);

/* The server: listen on ip:port, accept one driver (c->pd is then its PD). */
void mrp_serve(struct mrp *c, const char *ip, const char *port);
/* The driver: connect and answer requests until MRP_BYE. @return 0 if all went well. */
int mrp_drive(const char *ip, const char *port);

/* Ask the driver; @return its status. */
int mrp_write(struct mrp *c, const void *region, uint32_t rkey, uint64_t off, uint64_t len,
	      uint64_t seed);
int mrp_read(struct mrp *c, const void *region, uint32_t rkey, uint64_t off, uint64_t len,
	     uint64_t seed);
/* Send [p, p+len) of @p mr (a pattern of @p seed at offset 0) for the driver to check. */
int mrp_send(struct mrp *c, struct ibv_mr *mr, const void *p, uint64_t len, uint64_t seed);
void mrp_bye(struct mrp *c);

#endif /* MR_PAIR_H */
