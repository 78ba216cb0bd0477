/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsockets' wire formats between two warpnic shims (rsocket.c): the connection's private
 * data and the header of every Send. Big-endian on the wire; parsed only by rs_wire_*().
 */
#ifndef WN_RS_WIRE_H
#define WN_RS_WIRE_H

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RS_WIRE_MAGIC 0x574e5253u /* "WNRS" */
#define RS_WIRE_VERSION 1
#define RS_SLOT_MIN 1024u
#define RS_SLOT_MAX (1u << 20)
#define RS_SLOTS_MIN 4u
#define RS_SLOTS_MAX 1024u

/* rdma_connect()/rdma_accept() private data: the sender's receive slots */
struct rs_wire_conn {
	uint32_t magic;
	uint8_t version;
	uint8_t rsvd[3];
	uint32_t slots;     /* receives the sender keeps posted */
	uint32_t slot_size; /* octets each, header included */
} __attribute__((packed));
static_assert(sizeof(struct rs_wire_conn) == 16, "rs_wire_conn");

/* Message kinds (rs_wire_hdr.op) */
enum rs_op {
	RS_OP_DATA = 1,   /* stream octets follow the header */
	RS_OP_CREDIT = 2, /* nothing follows: only the acknowledgement */
	RS_OP_FIN = 3,    /* the sender will send no more data (shutdown SHUT_WR) */
	RS_OP_IOMAP = 4,  /* struct rs_wire_iomap follows: a region open to riowrite() */
};

/* Every Send starts with this header */
struct rs_wire_hdr {
	uint8_t op;
	uint8_t rsvd[3];
	uint32_t ack; /* how many of the receiver's messages the sender has consumed, mod 2^32 */
} __attribute__((packed));
static_assert(sizeof(struct rs_wire_hdr) == 8, "rs_wire_hdr");

struct rs_wire_iomap {
	uint64_t offset; /* riomap() offset the region starts at */
	uint64_t addr;   /* its address for RDMA Write */
	uint64_t len;
	uint32_t rkey;
	uint32_t rsvd;
} __attribute__((packed));
static_assert(sizeof(struct rs_wire_iomap) == 32, "rs_wire_iomap");

/** A message as parsed: op, ack, payload (DATA) or region (IOMAP). */
struct rs_msg {
	enum rs_op op;
	uint32_t ack;
	size_t len; /* DATA: payload octets after the header */
	struct rs_wire_iomap map; /* IOMAP, host order */
};

static inline void
rs_wire_conn_make(struct rs_wire_conn *c, uint32_t slots, uint32_t slot_size)
{
	memset(c, 0, sizeof(*c));
	c->magic = htobe32(RS_WIRE_MAGIC);
	c->version = RS_WIRE_VERSION;
	c->slots = htobe32(slots);
	c->slot_size = htobe32(slot_size);
}

/**
 * Parse a peer's private data.
 * @return 0, or -EPROTO (not ours, another version, or sizes out of range).
 */
static inline int
rs_wire_conn_parse(const void *pd, size_t len, uint32_t *slots, uint32_t *slot_size)
{
	struct rs_wire_conn c;

	if (pd == NULL || len < sizeof(c))
		return -EPROTO;
	memcpy(&c, pd, sizeof(c));
	*slots = be32toh(c.slots);
	*slot_size = be32toh(c.slot_size);
	if (be32toh(c.magic) != RS_WIRE_MAGIC || c.version != RS_WIRE_VERSION ||
	    *slots < RS_SLOTS_MIN || *slots > RS_SLOTS_MAX || *slot_size < RS_SLOT_MIN ||
	    *slot_size > RS_SLOT_MAX)
		return -EPROTO;
	return 0;
}

static inline void
rs_wire_hdr_make(void *buf, enum rs_op op, uint32_t ack)
{
	struct rs_wire_hdr h = {.op = (uint8_t)op, .ack = htobe32(ack)};

	memcpy(buf, &h, sizeof(h));
}

/**
 * Parse a received message of @p len octets.
 * @return 0, or -EPROTO (too short, unknown kind, or trailing octets where none belong).
 */
static inline int
rs_wire_msg_parse(const void *buf, size_t len, struct rs_msg *m)
{
	struct rs_wire_hdr h;

	if (len < sizeof(h))
		return -EPROTO;
	memcpy(&h, buf, sizeof(h));
	m->op = (enum rs_op)h.op;
	m->ack = be32toh(h.ack);
	m->len = len - sizeof(h);
	switch (m->op) {
	case RS_OP_DATA:
		return m->len > 0 ? 0 : -EPROTO;
	case RS_OP_CREDIT:
	case RS_OP_FIN:
		return m->len == 0 ? 0 : -EPROTO;
	case RS_OP_IOMAP:
		if (m->len != sizeof(m->map))
			return -EPROTO;
		memcpy(&m->map, (const uint8_t *)buf + sizeof(h), sizeof(m->map));
		m->map.offset = be64toh(m->map.offset);
		m->map.addr = be64toh(m->map.addr);
		m->map.len = be64toh(m->map.len);
		m->map.rkey = be32toh(m->map.rkey);
		m->map.rsvd = 0; /* ignored */
		if (m->map.len == 0 || m->map.offset + m->map.len < m->map.offset)
			return -EPROTO;
		return 0;
	}
	return -EPROTO;
}

static inline void
rs_wire_iomap_make(void *buf, uint64_t offset, uint64_t addr, uint64_t len, uint32_t rkey)
{
	struct rs_wire_iomap m = {.offset = htobe64(offset), .addr = htobe64(addr),
				  .len = htobe64(len), .rkey = htobe32(rkey)};

	memcpy(buf, &m, sizeof(m));
}

#endif
