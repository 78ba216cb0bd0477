/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stand-in libmlx5.so.1 for programs (perftest) that link mlx5 direct verbs: warpnic is
 * not an mlx5 device, so every entry answers "not supported". Signatures are kept
 * generic (the callers never reach here for a non-mlx5 device).
 */
#include <errno.h>
#include <stddef.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT void *
mlx5dv_create_qp(void *ctx, void *attr, void *mlx5_attr)
{
	(void)ctx;
	(void)attr;
	(void)mlx5_attr;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT void *
mlx5dv_open_device(void *device, void *attr)
{
	(void)device;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int
mlx5dv_devx_general_cmd(void *ctx, const void *in, size_t inlen, void *out, size_t outlen)
{
	(void)ctx;
	(void)in;
	(void)inlen;
	(void)out;
	(void)outlen;
	return EOPNOTSUPP;
}

EXPORT void *
mlx5dv_create_mkey(void *attr)
{
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int
mlx5dv_destroy_mkey(void *mkey)
{
	(void)mkey;
	return EOPNOTSUPP;
}

EXPORT void *
mlx5dv_qp_ex_from_ibv_qp_ex(void *qp)
{
	(void)qp;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int
mlx5dv_crypto_login(void *ctx, void *attr)
{
	(void)ctx;
	(void)attr;
	return EOPNOTSUPP;
}

EXPORT void *
mlx5dv_dek_create(void *ctx, void *attr)
{
	(void)ctx;
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int
mlx5dv_dek_destroy(void *dek)
{
	(void)dek;
	return EOPNOTSUPP;
}
