/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnic direct verbs: what an RNIC offers beyond libibverbs' user-space API, in the way
 * mlx5dv.h does for mlx5. Exported by warpnic's libibverbs.so.1 (version node WARPNIC_1);
 * a program that uses them runs on warpnic only.
 *
 * Fast-register MRs (RFC 5042 §4.2, "FMR"/"FRMR"; the kernel's IB_WR_REG_MR): memory is
 * registered once as backing, and a FAST_REG work request on a QP of the same PD gives it a
 * new 8-bit key, a range inside the backing, a TO and rights, without a system call. LOCAL_INV
 * (IBV_WR_LOCAL_INV) or the peer's Send with Invalidate makes it invalid again, and only an
 * invalid FRMR can be fast-registered again. This is how NFS/RDMA-style ULPs expose a buffer
 * for a single RPC.
 */
#ifndef WNV_H
#define WNV_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Allocate a fast-register MR over [addr, addr+length) of this process's memory (shared with
 * warpnicd as ibv_reg_mr does). Its lkey = rkey names an invalid STag until
 * wnv_post_fast_reg(). Free it with ibv_dereg_mr().
 * @return the MR, or NULL with errno.
 */
struct ibv_mr *wnv_alloc_frmr(struct ibv_pd *pd, void *addr, size_t length);

/** A fast-register work request. */
struct wnv_fast_reg_wr {
	uint64_t wr_id;
	unsigned int send_flags; /**< IBV_SEND_SIGNALED, IBV_SEND_FENCE */
	struct ibv_mr *mr;       /**< from wnv_alloc_frmr() */
	uint32_t key;            /**< the new STag: mr's index with a new key (ibv_inc_rkey) */
	uint32_t access;         /**< IBV_ACCESS_LOCAL_WRITE | REMOTE_* | ZERO_BASED */
	uint64_t iova;           /**< TO of the first byte (ignored with ZERO_BASED) */
	uint64_t length;         /**< octets */
	uint64_t offset;         /**< octet offset of the first byte in the backing */
};

/**
 * Post a FAST_REG WQE (it completes as opcode WNV_WC_FAST_REG). On success mr->lkey and
 * mr->rkey become @c key at once (the WQE is ordered before everything posted after it).
 * @return 0, or an errno (EINVAL: not an FRMR or a key of another index; ENOMEM: SQ full).
 */
int wnv_post_fast_reg(struct ibv_qp *qp, const struct wnv_fast_reg_wr *wr);

/** ibv_wc.opcode of a fast-register completion (no libibverbs value exists). */
#define WNV_WC_FAST_REG 32

#ifdef __cplusplus
}
#endif

#endif /* WNV_H */
