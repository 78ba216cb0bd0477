/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdint.h>

#include <isa-l/crc.h>

#include "wn_wire_crc.h"

uint32_t
wn_wire_crc32c_update(uint32_t crc, const void *buf, size_t len)
{
	/* isa-l's crc32_iscsi takes and returns the raw register (no inversion). */
	while (len > INT32_MAX) {
		crc = crc32_iscsi((unsigned char *)(uintptr_t)buf, INT32_MAX, crc);
		buf = (const uint8_t *)buf + INT32_MAX;
		len -= INT32_MAX;
	}
	return len == 0 ? crc : crc32_iscsi((unsigned char *)(uintptr_t)buf, (int)len, crc);
}
