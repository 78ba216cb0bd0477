/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * CRC32c for MPA (RFC 5044 §4.4; algorithm of RFC 3720 §12.1), isa-l as the engine.
 *
 * The running value is the raw CRC register (initial 0xFFFFFFFF, no final
 * inversion), so a CRC over discontiguous pieces (FPDU header, payload in
 * registered memory, markers, pad) is init, update..., final. The wire form is
 * the standard (inverted) CRC stored least-significant octet first.
 *
 * Thread safety: all functions are pure; any thread may call them.
 */
#ifndef WN_WIRE_CRC_H
#define WN_WIRE_CRC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Initial value of the CRC32c register. */
#define WN_CRC32C_INIT 0xFFFFFFFFu

/**
 * Standard CRC32c over "covered || 4 received CRC octets" when the CRC is
 * good (RFC 3720 B.4 residue, as a standard/inverted value).
 */
#define WN_CRC32C_RESIDUE 0x48674BC7u

/** @return the initial CRC32c register. */
static inline uint32_t
wn_crc32c_init(void)
{
	return WN_CRC32C_INIT;
}

/**
 * Feed @p len octets at @p buf into the running register @p crc.
 * @return the new register value.
 */
uint32_t wn_wire_crc32c_update(uint32_t crc, const void *buf, size_t len);

/** @return the standard CRC32c (final inversion applied) of register @p crc. */
static inline uint32_t
wn_crc32c_final(uint32_t crc)
{
	return ~crc;
}

/** @return the standard CRC32c of one contiguous buffer. */
static inline uint32_t
wn_crc32c(const void *buf, size_t len)
{
	return wn_crc32c_final(wn_wire_crc32c_update(wn_crc32c_init(), buf, len));
}

/** Store standard CRC @p crc in MPA wire order (little-endian) at @p out (4 octets). */
static inline void
wn_crc32c_put_wire(uint8_t *out, uint32_t crc)
{
	out[0] = (uint8_t)crc;
	out[1] = (uint8_t)(crc >> 8);
	out[2] = (uint8_t)(crc >> 16);
	out[3] = (uint8_t)(crc >> 24);
}

/** @return the standard CRC read from 4 octets in MPA wire order at @p in. */
static inline uint32_t
wn_crc32c_get_wire(const uint8_t *in)
{
	return (uint32_t)in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16 |
	       (uint32_t)in[3] << 24;
}

#ifdef __cplusplus
}
#endif

#endif /* WN_WIRE_CRC_H */
