/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Sizing and initialisation of the shared rings the control thread creates for CQs, SRQs
 * and QPs, in lib/queue's ABI (wn_queue.h): a CQ/SRQ memfd holds one ring at offset 0, a
 * QP memfd its SQ ring at 0 and its RQ ring at wn_queue_qp_rq_offset().
 *
 * Thread safety: pure functions / operate on caller-owned memory; any thread.
 */
#ifndef SERVER_RING_H
#define SERVER_RING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** @return the CQ depth (power of two >= @p cqe, at least 16). */
uint32_t wn_server_ring_cq_depth(uint32_t cqe);
/** @return the work queue depth (power of two >= @p wr, at least 16). */
uint32_t wn_server_ring_wq_depth(uint32_t wr);
/** @return octets of a CQ ring of @p depth entries (page multiple). */
uint64_t wn_server_ring_cq_size(uint32_t depth);
/** @return octets of an SRQ ring (page multiple). */
uint64_t wn_server_ring_srq_size(uint32_t depth, uint32_t sge);
/** @return octets of a QP's SQ+RQ rings (page multiple); @p rqd 0 when an SRQ is used. */
uint64_t wn_server_ring_qp_size(uint32_t sqd, uint32_t ssge, uint32_t rqd, uint32_t rsge,
			     uint32_t inline_len);
/** Initialise a zeroed CQ ring. */
void wn_server_ring_cq_init(void *ring, uint32_t depth);
/** Initialise a zeroed SRQ ring. */
void wn_server_ring_srq_init(void *ring, uint32_t depth, uint32_t sge);
/** Initialise zeroed QP rings. */
void wn_server_ring_qp_init(void *ring, uint32_t sqd, uint32_t ssge, uint32_t rqd, uint32_t rsge,
			 uint32_t inline_len);

#ifdef __cplusplus
}
#endif

#endif /* SERVER_RING_H */
