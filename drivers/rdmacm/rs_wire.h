/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsockets' wire formats as rdma-core's librdmacm defines them (its protocol version 1), so
 * that rsocket.c talks to librdmacm's rsockets on any iWARP device. Parsed only by the
 * rs_wire_*() functions here; no state.
 *
 * - The connection's private data (struct rs_wire_conn, big-endian) names where the peer may
 *   write: its target SGL (the array into which we write grants of receive buffer), its
 *   first grant (half of its receive buffer), its iomap table (riomap() regions) and its
 *   credits (data messages it takes before it says more).
 * - A message is one 32-bit word: the operation in bits 31..29, its argument in 28..0.
 *   librdmacm on an iWARP device sends it as the 4-octet payload of a Send (no RDMA Write
 *   with Immediate Data there), in the byte order of the host that sends it, right behind
 *   the RDMA Write it describes; on other devices it is the immediate data of the RDMA Write
 *   (big-endian). A receiver reads the Send's word in its own byte order, so two librdmacm
 *   hosts of different byte order would not agree; rsocket.c reads and writes words in the
 *   peer's byte order (RS_CONN_FLAG_NET), which agrees with librdmacm on either.
 * - Grants (struct rs_wire_sge) and iomap entries (struct rs_wire_iomap) are RDMA-written
 *   into the peer's memory in the peer's byte order (librdmacm swaps them when the orders
 *   differ).
 */
#ifndef WN_RS_WIRE_H
#define WN_RS_WIRE_H

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RS_WIRE_VERSION	   1
#define RS_CONN_FLAG_NET   (1u << 0) /* the sender is big-endian */
#define RS_CONN_FLAG_IOMAP (1u << 1) /* target_iomap_size is valid */
#define RS_SGL_SIZE	   2	     /* entries of librdmacm's target SGL */
#define RS_SGL_MAX	   255	     /* the most entries a peer's target SGL may announce */

/* Message operations (bits 31..29 of the word) */
enum rs_wire_op {
	RS_OP_DATA = 0,		  /* argument: octets of the RDMA Write before it */
	RS_OP_RSVD_DATA_MORE = 1, /* reserved */
	RS_OP_WRITE = 2,	  /* riowrite(): never sent as a message */
	RS_OP_RSVD_DRA_MORE = 3,  /* reserved */
	RS_OP_SGL = 4,		  /* argument: the sender's new credit limit (sequence number) */
	RS_OP_RSVD = 5,		  /* reserved */
	RS_OP_IOMAP_SGL = 6,	  /* argument: the iomap entry just written (bits 15..0) */
	RS_OP_CTRL = 7,		  /* argument: enum rs_wire_ctrl */
};

/* RS_OP_CTRL arguments */
enum rs_wire_ctrl {
	RS_CTRL_DISCONNECT = 0, /* the sender neither sends nor receives any more */
	RS_CTRL_KEEPALIVE = 1,	/* an RDMA Write of no octets on iWARP: no message at all */
	RS_CTRL_SHUTDOWN = 2,	/* the sender sends no more data (shutdown(SHUT_WR)) */
};

#define RS_MSG_ARG_MASK 0x1fffffffu
#define RS_MSG_SIZE	4u

/* A region of the sender's memory: where to RDMA-write, with which STag, how many octets */
struct rs_wire_sge {
	uint64_t addr;
	uint32_t key;
	uint32_t length;
} __attribute__((packed));
static_assert(sizeof(struct rs_wire_sge) == 16, "rs_wire_sge");

/* rdma_connect()/rdma_accept() private data, every field big-endian */
struct rs_wire_conn {
	uint8_t version;
	uint8_t flags;
	uint16_t credits; /* data messages the sender takes before it grants more */
	uint8_t reserved[3];
	uint8_t target_iomap_size;     /* entries of the iomap table, scaled (rs_wire_iomap_size) */
	struct rs_wire_sge target_sgl; /* length: entries of the target SGL (16 octets each);
					* the iomap table follows them, same STag */
	struct rs_wire_sge data_buf;   /* the first grant: where the first data goes */
} __attribute__((packed));
static_assert(sizeof(struct rs_wire_conn) == 40, "rs_wire_conn");

/* An iomap table entry: the riomap() offset a region starts at, and the region */
struct rs_wire_iomap {
	uint64_t offset;
	struct rs_wire_sge sge;
} __attribute__((packed));
static_assert(sizeof(struct rs_wire_iomap) == 24, "rs_wire_iomap");

/** A region in host byte order. */
struct rs_sge {
	uint64_t addr;
	uint32_t key;
	uint32_t length;
};

/** The peer's private data in host byte order. */
struct rs_conn {
	bool big_endian; /* RS_CONN_FLAG_NET */
	uint16_t credits;
	uint32_t iomap_size; /* entries, 0 without RS_CONN_FLAG_IOMAP */
	struct rs_sge target_sgl;
	struct rs_sge data_buf;
};

/** A message word taken apart. */
struct rs_msg {
	enum rs_wire_op op;
	uint32_t arg;
};

static inline bool
rs_wire_host_be(void)
{
	return __BYTE_ORDER == __BIG_ENDIAN;
}

/* librdmacm's 8-bit scale for sizes up to 32640: up to 128 as is, above in units of 256 */
static inline uint8_t
rs_wire_scale(uint32_t v)
{
	if (v > 0x7fu << 8)
		v = 0x7fu << 8;
	return v <= 128 ? (uint8_t)v : (uint8_t)(0x80u | (v >> 8));
}

static inline uint32_t
rs_wire_unscale(uint8_t s)
{
	return s <= 128 ? s : (uint32_t)(s & 0x7fu) << 8;
}

/** An iomap table size as both ends will see it (librdmacm rounds RDMA_IOMAPSIZE so). */
static inline uint32_t
rs_wire_iomap_size(uint32_t v)
{
	return rs_wire_unscale(rs_wire_scale(v));
}

/* host order to the wire's (big-endian when @p be, else little-endian) and back */
static inline uint64_t
rs_wire_64(uint64_t v, bool be)
{
	return be ? htobe64(v) : htole64(v);
}

static inline uint32_t
rs_wire_32(uint32_t v, bool be)
{
	return be ? htobe32(v) : htole32(v);
}

static inline uint64_t
rs_wire_64_host(uint64_t v, bool be)
{
	return be ? be64toh(v) : le64toh(v);
}

static inline uint32_t
rs_wire_32_host(uint32_t v, bool be)
{
	return be ? be32toh(v) : le32toh(v);
}

static inline void
rs_wire_sge_put(void *buf, const struct rs_sge *s, bool be)
{
	struct rs_wire_sge w = {.addr = rs_wire_64(s->addr, be),
				.key = rs_wire_32(s->key, be),
				.length = rs_wire_32(s->length, be)};

	memcpy(buf, &w, sizeof(w));
}

static inline void
rs_wire_sge_get(const void *buf, struct rs_sge *s, bool be)
{
	struct rs_wire_sge w;

	memcpy(&w, buf, sizeof(w));
	s->addr = rs_wire_64_host(w.addr, be);
	s->key = rs_wire_32_host(w.key, be);
	s->length = rs_wire_32_host(w.length, be);
}

static inline void
rs_wire_iomap_put(void *buf, uint64_t offset, const struct rs_sge *s, bool be)
{
	uint64_t o = rs_wire_64(offset, be);

	memcpy(buf, &o, sizeof(o));
	rs_wire_sge_put((uint8_t *)buf + sizeof(o), s, be);
}

static inline void
rs_wire_iomap_get(const void *buf, uint64_t *offset, struct rs_sge *s, bool be)
{
	uint64_t o;

	memcpy(&o, buf, sizeof(o));
	*offset = rs_wire_64_host(o, be);
	rs_wire_sge_get((const uint8_t *)buf + sizeof(o), s, be);
}

/**
 * Our private data: @p credits, the target SGL (@p target_sgl: its length counts entries)
 * followed by an iomap table of @p iomap_size entries (as rs_wire_iomap_size() rounds it),
 * the first grant @p data_buf; RS_CONN_FLAG_NET when this host is big-endian.
 */
static inline void
rs_wire_conn_make(struct rs_wire_conn *c, uint16_t credits, uint32_t iomap_size,
		  const struct rs_sge *target_sgl, const struct rs_sge *data_buf)
{
	memset(c, 0, sizeof(*c));
	c->version = RS_WIRE_VERSION;
	c->flags = (uint8_t)(RS_CONN_FLAG_IOMAP | (rs_wire_host_be() ? RS_CONN_FLAG_NET : 0));
	c->credits = htobe16(credits);
	c->target_iomap_size = rs_wire_scale(iomap_size);
	rs_wire_sge_put(&c->target_sgl, target_sgl, true);
	rs_wire_sge_put(&c->data_buf, data_buf, true);
}

/**
 * Parse a peer's private data (anything after the first 40 octets is ignored, as librdmacm
 * does).
 * @return 0, or -EPROTO: too short, another version, no credits, a target SGL of fewer
 *   than 2 or more than RS_SGL_MAX entries (librdmacm writes its first grant into entry 1),
 *   or an empty first grant.
 */
static inline int
rs_wire_conn_parse(const void *pd, size_t len, struct rs_conn *out)
{
	struct rs_wire_conn c;

	if (pd == NULL || len < sizeof(c))
		return -EPROTO;
	memcpy(&c, pd, sizeof(c));
	if (c.version != RS_WIRE_VERSION)
		return -EPROTO;
	out->big_endian = (c.flags & RS_CONN_FLAG_NET) != 0;
	out->credits = be16toh(c.credits);
	out->iomap_size = (c.flags & RS_CONN_FLAG_IOMAP) ? rs_wire_unscale(c.target_iomap_size) : 0;
	rs_wire_sge_get(&c.target_sgl, &out->target_sgl, true);
	rs_wire_sge_get(&c.data_buf, &out->data_buf, true);
	if (out->credits == 0 || out->target_sgl.length < 2 ||
	    out->target_sgl.length > RS_SGL_MAX || out->data_buf.length == 0)
		return -EPROTO;
	return 0;
}

static inline uint32_t
rs_wire_msg(enum rs_wire_op op, uint32_t arg)
{
	return ((uint32_t)op << 29) | (arg & RS_MSG_ARG_MASK);
}

/**
 * Take a received word apart.
 * @return 0, or -EPROTO: a reserved operation, RS_OP_WRITE (never a message), an unknown
 *   control code, or an iomap index with reserved bits set.
 */
static inline int
rs_wire_msg_parse(uint32_t word, struct rs_msg *m)
{
	m->op = (enum rs_wire_op)(word >> 29);
	m->arg = word & RS_MSG_ARG_MASK;
	switch (m->op) {
	case RS_OP_DATA:
	case RS_OP_SGL:
		return 0;
	case RS_OP_IOMAP_SGL:
		return m->arg <= 0xffffu ? 0 : -EPROTO;
	case RS_OP_CTRL:
		return m->arg == RS_CTRL_DISCONNECT || m->arg == RS_CTRL_KEEPALIVE ||
				       m->arg == RS_CTRL_SHUTDOWN
			       ? 0
			       : -EPROTO;
	default:
		return -EPROTO;
	}
}

/** A Send's 4-octet payload, written in the byte order @p be says. */
static inline void
rs_wire_word_put(void *buf, uint32_t word, bool be)
{
	uint32_t w = rs_wire_32(word, be);

	memcpy(buf, &w, sizeof(w));
}

static inline uint32_t
rs_wire_word_get(const void *buf, bool be)
{
	uint32_t w;

	memcpy(&w, buf, sizeof(w));
	return rs_wire_32_host(w, be);
}

#endif
