/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stand-in libefa.so.1 (every version node of rdma-core 44's, EFA_1.0 to EFA_1.2) for
 * programs that link EFA direct verbs (perftest, libfabric). warpnic's device is not an EFA
 * device, and libefa answers exactly that for any other device: EOPNOTSUPP.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT void *
efadv_create_driver_qp(void *pd, void *attr, uint32_t driver_qp_type)
{
	(void)pd;
	(void)attr;
	(void)driver_qp_type;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT void *
efadv_create_qp_ex(void *ctx, void *attr, void *efa_attr, uint32_t inlen)
{
	(void)ctx;
	(void)attr;
	(void)efa_attr;
	(void)inlen;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int
efadv_query_device(void *ctx, void *attr, uint32_t inlen)
{
	(void)ctx;
	(void)attr;
	(void)inlen;
	return EOPNOTSUPP;
}

EXPORT int
efadv_query_ah(void *ah, void *attr, uint32_t inlen)
{
	(void)ah;
	(void)attr;
	(void)inlen;
	return EOPNOTSUPP;
}

EXPORT void *
efadv_create_cq(void *ctx, void *attr_ex, void *efa_attr, uint32_t inlen)
{
	(void)ctx;
	(void)attr_ex;
	(void)efa_attr;
	(void)inlen;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT void *
efadv_cq_from_ibv_cq_ex(void *cq)
{
	(void)cq;
	errno = EOPNOTSUPP;
	return NULL;
}
