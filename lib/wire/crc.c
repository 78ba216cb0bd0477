/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stdint.h>

#include <immintrin.h>
#include <isa-l/crc.h>

#include "wn_wire_crc.h"

/*
 * isa-l's AVX-512 CRC (crc32_iscsi_by16_10 in isa-l 2.30) returns with the upper halves of the
 * vector registers dirty (no VZEROUPPER): until something clears them, every legacy-SSE
 * instruction the compiler emits for our code (movd, pinsrd, ...) runs with a false
 * dependency on them, and the core stays in its wide-vector power state. Clear them after
 * each call, on a CPU that has AVX.
 */
static bool has_avx;

static void __attribute__((constructor))
crc_cpu_probe(void)
{
	has_avx = __builtin_cpu_supports("avx");
}

static __attribute__((target("avx"))) void
crc_vzeroupper(void)
{
	_mm256_zeroupper();
}

static uint32_t
crc_run(const void *buf, int len, uint32_t crc)
{
	crc = crc32_iscsi((unsigned char *)(uintptr_t)buf, len, crc);
	if (has_avx)
		crc_vzeroupper();
	return crc;
}

uint32_t
wn_wire_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	/* isa-l's crc32_iscsi takes and returns the raw register (no inversion). */
	while (len > INT32_MAX) {
		crc = crc_run(buf, INT32_MAX, crc);
		buf = (const uint8_t *)buf + INT32_MAX;
		len -= INT32_MAX;
	}
	return len == 0 ? crc : crc_run(buf, (int)len, crc);
}
