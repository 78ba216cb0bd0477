/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the rsockets wire formats (drivers/rdmacm/rs_wire.h). Octet 0 bit 0
 * picks the parser: private data (rs_wire_conn_parse) or a received message
 * (rs_wire_msg_parse); the rest is the input. Accepted private data must have its sizes in
 * range; an accepted message must be of a known kind with the payload its kind allows, and
 * an IOMAP region must not wrap. What the parsers accept must survive being made again.
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
	struct rs_wire_conn c;
	uint32_t slots, slot_size, s2, z2;

	if (rs_wire_conn_parse(p, n, &slots, &slot_size) != 0)
		return;
	check(slots >= RS_SLOTS_MIN && slots <= RS_SLOTS_MAX);
	check(slot_size >= RS_SLOT_MIN && slot_size <= RS_SLOT_MAX);
	rs_wire_conn_make(&c, slots, slot_size);
	check(rs_wire_conn_parse(&c, sizeof(c), &s2, &z2) == 0 && s2 == slots && z2 == slot_size);
}

static void
msg(const uint8_t *p, size_t n)
{
	uint8_t buf[sizeof(struct rs_wire_hdr) + sizeof(struct rs_wire_iomap)];
	struct rs_msg m, m2;

	if (rs_wire_msg_parse(p, n, &m) != 0)
		return;
	check(m.len == n - sizeof(struct rs_wire_hdr));
	switch (m.op) {
	case RS_OP_DATA:
		check(m.len > 0);
		return;
	case RS_OP_CREDIT:
	case RS_OP_FIN:
		check(m.len == 0);
		break;
	case RS_OP_IOMAP:
		check(m.len == sizeof(struct rs_wire_iomap) && m.map.len > 0 &&
		      m.map.offset + m.map.len > m.map.offset);
		break;
	default:
		check(0);
	}
	rs_wire_hdr_make(buf, m.op, m.ack);
	if (m.op == RS_OP_IOMAP)
		rs_wire_iomap_make(buf + sizeof(struct rs_wire_hdr), m.map.offset, m.map.addr,
				   m.map.len, m.map.rkey);
	check(rs_wire_msg_parse(buf, sizeof(struct rs_wire_hdr) + m.len, &m2) == 0);
	check(m2.op == m.op && m2.ack == m.ack && m2.len == m.len);
	check(m.op != RS_OP_IOMAP || memcmp(&m.map, &m2.map, sizeof(m.map)) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		conn(data + 1, size - 1);
	else
		msg(data + 1, size - 1);
	return 0;
}
