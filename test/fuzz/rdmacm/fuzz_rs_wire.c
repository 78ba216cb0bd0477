/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the rsockets wire formats (drivers/rdmacm/rs_wire.h), as they come
 * from a peer. Octet 0 picks the parser (bits 1..0) and a byte order (bit 2): private data
 * (rs_wire_conn_parse), a message word (rs_wire_msg_parse, read in that order), a grant or
 * an iomap entry (rs_wire_sge_get / rs_wire_iomap_get); the rest is the input. Accepted
 * private data must have credits, a target SGL of 2..RS_SGL_MAX entries, a first grant and
 * an iomap size the scale can express; an accepted message must be of an operation a peer
 * sends, with an argument that fits. What the parsers accept must survive being made again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rs_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
conn(const uint8_t *p, size_t n)
{
	struct rs_wire_conn w;
	struct rs_conn c, c2;

	if (rs_wire_conn_parse(p, n, &c) != 0)
		return;
	check(n >= sizeof(w));
	check(c.credits > 0 && c.data_buf.length > 0);
	check(c.target_sgl.length >= 2 && c.target_sgl.length <= RS_SGL_MAX);
	check(c.iomap_size == rs_wire_iomap_size(c.iomap_size));
	rs_wire_conn_make(&w, c.credits, c.iomap_size, &c.target_sgl, &c.data_buf);
	check(rs_wire_conn_parse(&w, sizeof(w), &c2) == 0);
	check(c2.credits == c.credits && c2.iomap_size == c.iomap_size);
	check(c2.big_endian == rs_wire_host_be());
	check(memcmp(&c2.target_sgl, &c.target_sgl, sizeof(c.target_sgl)) == 0);
	check(memcmp(&c2.data_buf, &c.data_buf, sizeof(c.data_buf)) == 0);
}

static void
msg(const uint8_t *p, size_t n, bool be)
{
	uint8_t buf[RS_MSG_SIZE];
	struct rs_msg m, m2;
	uint32_t word;

	if (n < RS_MSG_SIZE)
		return;
	word = rs_wire_word_get(p, be);
	if (rs_wire_msg_parse(word, &m) != 0)
		return;
	check(m.op == RS_OP_DATA || m.op == RS_OP_SGL || m.op == RS_OP_IOMAP_SGL ||
	      m.op == RS_OP_CTRL);
	check(m.arg <= RS_MSG_ARG_MASK);
	check(m.op != RS_OP_IOMAP_SGL || m.arg <= 0xffff);
	check(m.op != RS_OP_CTRL || m.arg <= RS_CTRL_SHUTDOWN);
	rs_wire_word_put(buf, rs_wire_msg(m.op, m.arg), be);
	check(memcmp(buf, p, RS_MSG_SIZE) == 0);
	check(rs_wire_msg_parse(rs_wire_word_get(buf, be), &m2) == 0);
	check(m2.op == m.op && m2.arg == m.arg);
}

static void
sge(const uint8_t *p, size_t n, bool be)
{
	uint8_t buf[sizeof(struct rs_wire_iomap)];
	struct rs_sge s, s2;
	uint64_t off, off2;

	if (n >= sizeof(struct rs_wire_iomap)) {
		rs_wire_iomap_get(p, &off, &s, be);
		rs_wire_iomap_put(buf, off, &s, be);
		check(memcmp(buf, p, sizeof(buf)) == 0);
		rs_wire_iomap_get(buf, &off2, &s2, be);
		check(off2 == off && memcmp(&s, &s2, sizeof(s)) == 0);
	} else if (n >= sizeof(struct rs_wire_sge)) {
		rs_wire_sge_get(p, &s, be);
		rs_wire_sge_put(buf, &s, be);
		check(memcmp(buf, p, sizeof(struct rs_wire_sge)) == 0);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool be;

	if (size < 1)
		return 0;
	be = (data[0] & 4) != 0;
	switch (data[0] & 3) {
	case 0:
		conn(data + 1, size - 1);
		break;
	case 1:
		msg(data + 1, size - 1, be);
		break;
	default:
		sge(data + 1, size - 1, be);
		break;
	}
	return 0;
}
