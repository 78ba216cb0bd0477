/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsockets' wire formats (drivers/rdmacm/rs_wire.h) octet by octet as librdmacm lays them
 * out: the private data librdmacm 44 sends from an x86 host, message words in either byte
 * order, grants and iomap entries, the 8-bit size scale, and what a peer's private data
 * may not say. A layout that drifts from librdmacm's fails here before it fails on the wire.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rs_wire.h"

/* librdmacm's private data from a little-endian host: version 1, RS_CONN_FLAG_IOMAP,
 * 384 credits, one iomap entry, target SGL of 2 entries, a 64 KiB first grant */
/* clang-format off */
static const uint8_t librdmacm_pd[40] = {
	0x01, 0x02, 0x01, 0x80, 0x00, 0x00, 0x00, 0x01,	/* version flags credits rsvd iomap */
	0x00, 0x00, 0x55, 0xd0, 0xc0, 0xa0, 0x10, 0x00,	/* target_sgl: addr */
	0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x00, 0x02,	/* key, length (entries) */
	0x00, 0x00, 0x7f, 0x12, 0x34, 0x50, 0x00, 0x00,	/* data_buf: addr */
	0x00, 0x00, 0x12, 0x35, 0x00, 0x01, 0x00, 0x00,	/* key, length */
};
/* clang-format on */

static void
test_conn_librdmacm(void **state)
{
	struct rs_wire_conn w;
	struct rs_conn c;
	(void)state;

	assert_int_equal(rs_wire_conn_parse(librdmacm_pd, sizeof(librdmacm_pd), &c), 0);
	assert_false(c.big_endian);
	assert_int_equal(c.credits, 384);
	assert_int_equal(c.iomap_size, 1);
	assert_true(c.target_sgl.addr == 0x55d0c0a01000ull);
	assert_int_equal(c.target_sgl.key, 0x1234);
	assert_int_equal(c.target_sgl.length, 2);
	assert_true(c.data_buf.addr == 0x7f1234500000ull);
	assert_int_equal(c.data_buf.key, 0x1235);
	assert_int_equal(c.data_buf.length, 0x10000);
	/* ours from the same values is the same 40 octets (on a little-endian host) */
	rs_wire_conn_make(&w, 384, 1, &c.target_sgl, &c.data_buf);
	if (!rs_wire_host_be())
		assert_memory_equal(&w, librdmacm_pd, sizeof(librdmacm_pd));
	/* octets after the 40 are ignored, as librdmacm ignores them */
	uint8_t longer[56];
	memset(longer, 0xee, sizeof(longer));
	memcpy(longer, librdmacm_pd, sizeof(librdmacm_pd));
	assert_int_equal(rs_wire_conn_parse(longer, sizeof(longer), &c), 0);
}

static void
test_conn_refused(void **state)
{
	uint8_t pd[40];
	struct rs_conn c;
	(void)state;

	assert_int_equal(rs_wire_conn_parse(NULL, 0, &c), -EPROTO);
	assert_int_equal(rs_wire_conn_parse(librdmacm_pd, 39, &c), -EPROTO);
	memcpy(pd, librdmacm_pd, sizeof(pd));
	pd[0] = 2; /* another version */
	assert_int_equal(rs_wire_conn_parse(pd, sizeof(pd), &c), -EPROTO);
	memcpy(pd, librdmacm_pd, sizeof(pd));
	pd[2] = pd[3] = 0; /* no credits */
	assert_int_equal(rs_wire_conn_parse(pd, sizeof(pd), &c), -EPROTO);
	memcpy(pd, librdmacm_pd, sizeof(pd));
	pd[23] = 1; /* a target SGL of one entry: librdmacm writes its first grant to entry 1 */
	assert_int_equal(rs_wire_conn_parse(pd, sizeof(pd), &c), -EPROTO);
	pd[22] = 1; /* 257 entries */
	assert_int_equal(rs_wire_conn_parse(pd, sizeof(pd), &c), -EPROTO);
	memcpy(pd, librdmacm_pd, sizeof(pd));
	memset(pd + 36, 0, 4); /* an empty first grant */
	assert_int_equal(rs_wire_conn_parse(pd, sizeof(pd), &c), -EPROTO);
	/* without RS_CONN_FLAG_IOMAP the size is not read; RS_CONN_FLAG_NET: a big-endian peer */
	memcpy(pd, librdmacm_pd, sizeof(pd));
	pd[1] = RS_CONN_FLAG_NET;
	assert_int_equal(rs_wire_conn_parse(pd, sizeof(pd), &c), 0);
	assert_int_equal(c.iomap_size, 0);
	assert_true(c.big_endian);
}

static void
test_messages(void **state)
{
	static const uint8_t data_le[4] = {0x00, 0x00, 0x01, 0x00}; /* RS_OP_DATA 65536 */
	static const uint8_t ctrl_be[4] = {0xe0, 0x00, 0x00, 0x02}; /* RS_CTRL_SHUTDOWN */
	uint8_t b[4];
	struct rs_msg m;
	(void)state;

	rs_wire_word_put(b, rs_wire_msg(RS_OP_DATA, 65536), false);
	assert_memory_equal(b, data_le, 4);
	assert_int_equal(rs_wire_msg_parse(rs_wire_word_get(data_le, false), &m), 0);
	assert_int_equal(m.op, RS_OP_DATA);
	assert_int_equal(m.arg, 65536);
	rs_wire_word_put(b, rs_wire_msg(RS_OP_CTRL, RS_CTRL_SHUTDOWN), true);
	assert_memory_equal(b, ctrl_be, 4);
	assert_int_equal(rs_wire_msg_parse(rs_wire_word_get(ctrl_be, true), &m), 0);
	assert_int_equal(m.op, RS_OP_CTRL);
	assert_int_equal(m.arg, RS_CTRL_SHUTDOWN);
	/* librdmacm's RS_OP_SGL carries rseq_no + rq_size without wrapping it at 16 bits */
	assert_int_equal(rs_wire_msg_parse(rs_wire_msg(RS_OP_SGL, 65535 + 384), &m), 0);
	assert_int_equal((uint16_t)m.arg, 383);
	assert_int_equal(rs_wire_msg_parse(rs_wire_msg(RS_OP_IOMAP_SGL, 7), &m), 0);
	assert_int_equal(m.arg, 7);
	/* what no peer sends */
	assert_int_equal(rs_wire_msg_parse(rs_wire_msg(RS_OP_WRITE, 1), &m), -EPROTO);
	assert_int_equal(rs_wire_msg_parse(rs_wire_msg(RS_OP_RSVD_DATA_MORE, 1), &m), -EPROTO);
	assert_int_equal(rs_wire_msg_parse(rs_wire_msg(RS_OP_RSVD_DRA_MORE, 1), &m), -EPROTO);
	assert_int_equal(rs_wire_msg_parse(rs_wire_msg(RS_OP_RSVD, 1), &m), -EPROTO);
	assert_int_equal(rs_wire_msg_parse(rs_wire_msg(RS_OP_CTRL, 3), &m), -EPROTO);
	assert_int_equal(rs_wire_msg_parse(rs_wire_msg(RS_OP_IOMAP_SGL, 0x10000), &m), -EPROTO);
}

static void
test_sge_iomap(void **state)
{
	static const uint8_t grant_le[16] = {0x00, 0x00, 0x01, 0x00, 0x00, 0x7f, 0x00, 0x00,
					     0x35, 0x12, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00};
	struct rs_sge g = {.addr = 0x7f0000010000ull, .key = 0x1235, .length = 0x10000}, g2;
	uint8_t b[sizeof(struct rs_wire_iomap)];
	uint64_t off;
	(void)state;

	rs_wire_sge_put(b, &g, false);
	assert_memory_equal(b, grant_le, 16);
	rs_wire_sge_get(grant_le, &g2, false);
	assert_memory_equal(&g, &g2, sizeof(g));
	/* an iomap entry: offset, then the region; 24 octets (librdmacm's struct rs_iomap) */
	assert_int_equal(sizeof(struct rs_wire_iomap), 24);
	rs_wire_iomap_put(b, 0x1122334455667788ull, &g, true);
	assert_int_equal(b[0], 0x11);
	assert_int_equal(b[7], 0x88);
	assert_int_equal(b[8 + 2], 0x7f);
	rs_wire_iomap_get(b, &off, &g2, true);
	assert_true(off == 0x1122334455667788ull);
	assert_memory_equal(&g, &g2, sizeof(g));
}

static void
test_scale(void **state)
{
	(void)state;
	assert_int_equal(rs_wire_iomap_size(0), 0);
	assert_int_equal(rs_wire_iomap_size(1), 1);
	assert_int_equal(rs_wire_iomap_size(128), 128);
	assert_int_equal(rs_wire_scale(129), 0x80);
	assert_int_equal(rs_wire_iomap_size(129), 128); /* librdmacm rounds so: 0x80 reads 128 */
	assert_int_equal(rs_wire_iomap_size(1000), 768);
	assert_int_equal(rs_wire_unscale(0x83), 768);
	assert_int_equal(rs_wire_iomap_size(1u << 20), 0x7f00);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conn_librdmacm), cmocka_unit_test(test_conn_refused),
		cmocka_unit_test(test_messages),       cmocka_unit_test(test_sge_iomap),
		cmocka_unit_test(test_scale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
