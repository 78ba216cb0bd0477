/* SPDX-License-Identifier: BSD-3-Clause */
/* Stand-in libefa.so.1 for programs (perftest) that link EFA direct verbs: not supported. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

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
