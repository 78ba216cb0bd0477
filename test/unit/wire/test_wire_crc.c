/* SPDX-License-Identifier: BSD-3-Clause */
/* CRC32c: RFC 3720 B.4 vectors, the check value, the residue, and chunked updates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "wn_wire_crc.h"

static void
test_check_value(void **state)
{
	(void)state;
	assert_int_equal(wn_crc32c("123456789", 9), 0xE3069283u);
}

static void
wire_crc_of(const uint8_t *buf, size_t len, uint8_t out[4])
{
	wn_crc32c_put_wire(out, wn_crc32c(buf, len));
}

static void
test_rfc3720_vectors(void **state)
{
	uint8_t buf[32], out[4];
	static const uint8_t zeros[4] = {0xaa, 0x36, 0x91, 0x8a};
	static const uint8_t ones[4] = {0x43, 0xab, 0xa8, 0x62};
	static const uint8_t incr[4] = {0x4e, 0x79, 0xdd, 0x46};
	static const uint8_t decr[4] = {0x5c, 0xdb, 0x3f, 0x11};
	(void)state;

	memset(buf, 0, sizeof(buf));
	wire_crc_of(buf, sizeof(buf), out);
	assert_memory_equal(out, zeros, 4);
	memset(buf, 0xff, sizeof(buf));
	wire_crc_of(buf, sizeof(buf), out);
	assert_memory_equal(out, ones, 4);
	for (unsigned int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	wire_crc_of(buf, sizeof(buf), out);
	assert_memory_equal(out, incr, 4);
	for (unsigned int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	wire_crc_of(buf, sizeof(buf), out);
	assert_memory_equal(out, decr, 4);
}

static void
test_chunked_equals_whole(void **state)
{
	uint8_t buf[1000];
	(void)state;

	for (unsigned int i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	uint32_t whole = wn_crc32c(buf, sizeof(buf));
	for (size_t split = 0; split <= sizeof(buf); split += 37) {
		uint32_t c = wn_crc32c_init();
		c = wn_wire_crc32c_update(c, buf, split);
		c = wn_wire_crc32c_update(c, buf + split, sizeof(buf) - split);
		assert_int_equal(wn_crc32c_final(c), whole);
	}
}

static void
test_residue(void **state)
{
	uint8_t buf[64];
	(void)state;

	for (unsigned int i = 0; i < 60; i++)
		buf[i] = (uint8_t)(i ^ 0x5a);
	wn_crc32c_put_wire(buf + 60, wn_crc32c(buf, 60));
	assert_int_equal(wn_crc32c(buf, 64), WN_CRC32C_RESIDUE);
	assert_int_equal(wn_crc32c_get_wire(buf + 60), wn_crc32c(buf, 60));
	buf[3] ^= 1;
	assert_int_not_equal(wn_crc32c(buf, 64), WN_CRC32C_RESIDUE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_value),
		cmocka_unit_test(test_rfc3720_vectors),
		cmocka_unit_test(test_chunked_equals_whole),
		cmocka_unit_test(test_residue),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
