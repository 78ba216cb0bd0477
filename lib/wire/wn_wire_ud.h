/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * warpnic's unreliable datagrams on the wire: a documented warpnic extension, not a standard.
 * InfiniBand's UD service is carried the way RoCEv2 carries it in spirit, one UDP datagram per
 * message, but the payload of the datagram is warpnic's own header, not an InfiniBand BTH, so
 * it interoperates only with warpnic and goes to its own port (WN_UD_PORT, not RoCEv2's 4791,
 * where a RoCE NIC or Wireshark would take it for a BTH).
 *
 * Every datagram starts with a 16-octet header (all fields big-endian):
 *
 * @verbatim
 *    0       1       2       3
 *  +-------+-------+-------+-------+
 *  |  'W'  |  'U'  |version| type  |  version 1; type: 1 DATA, 2 SIDR REQ, 3 SIDR REP
 *  +-------+-------+-------+-------+
 *  | flags |  destination QP number|  flags (DATA): 0x01 immediate data follows, 0x02 SE
 *  +-------+-------+-------+-------+
 *  | rsvd  |     source QP number  |  the sender's QP
 *  +-------+-------+-------+-------+
 *  |             Q_Key             |  DATA: the receiver must have it; SIDR REP: the QP's
 *  +-------+-------+-------+-------+
 * @endverbatim
 *
 * DATA: with the immediate flag, 4 octets of immediate data (as the work request gave them,
 * network order) follow the header; then the message, the rest of the datagram (at most the
 * path MTU of the port, IBV_MTU_*; a message never spans datagrams).
 *
 * SIDR REQ and SIDR REP are rdma_cm's UDP port space (RDMA_PS_UDP): the service-ID
 * resolution InfiniBand does with SIDR REQ/REP (IBTA 12.11), which gives the active side the
 * QP number and Q_Key of the passive side's QP. Both use the header with QP numbers and Q_Key
 * as the sender knows them (REQ: destination 0; REP: source and Q_Key are the accepting
 * QP's). Then:
 *
 * @verbatim
 *  SIDR REQ:  request id (4) | port space (2) | destination port (2) |
 *             source port (2) | private data length (2) | private data (<= 180)
 *  SIDR REP:  request id (4) | status (1) | reserved (1) | private data length (2) |
 *             private data (<= 136)
 * @endverbatim
 *
 * The request id is the requester's; a retransmitted REQ carries the same one. Status values
 * are InfiniBand's SIDR REP statuses (IBTA 12.11.4, Table 133).
 *
 * Thread safety: pure functions; any thread.
 */
#ifndef WN_WIRE_UD_H
#define WN_WIRE_UD_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wn_wire_ddp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The UDP port warpnicd sends and receives unreliable datagrams on (warpnicd --ud-port). */
#define WN_UD_PORT 4793
/** "WU" */
#define WN_UD_MAGIC0 0x57u
#define WN_UD_MAGIC1 0x55u
/** Version of this format. */
#define WN_UD_VERSION 1
/** Octets of the common header. */
#define WN_UD_HDR_LEN 16u
/** Octets of immediate data after a DATA header with WN_UD_F_IMM. */
#define WN_UD_IMM_LEN 4u
/** Octets of a SIDR REQ body before its private data. */
#define WN_UD_SIDR_REQ_LEN 12u
/** Octets of a SIDR REP body before its private data. */
#define WN_UD_SIDR_REP_LEN 8u
/** Most private data in a SIDR REQ: InfiniBand's 216 less rdma_cm's 36-octet header. */
#define WN_UD_SIDR_REQ_PD_MAX 180u
/** Most private data in a SIDR REP (IBTA 12.11.4). */
#define WN_UD_SIDR_REP_PD_MAX 136u
/** QP numbers are 24 bits. */
#define WN_UD_QPN_MASK 0xffffffu

/** Message types (header octet 3). */
enum wn_ud_type {
	WN_UD_DATA = 1,
	WN_UD_SIDR_REQ = 2,
	WN_UD_SIDR_REP = 3,
};

/** DATA flags (header octet 4). */
#define WN_UD_F_IMM 0x01u /**< immediate data follows the header */
#define WN_UD_F_SE  0x02u /**< solicited event */
#define WN_UD_F_MASK (WN_UD_F_IMM | WN_UD_F_SE)

/** SIDR REP statuses (IBTA 12.11.4). */
enum wn_ud_sidr_status {
	WN_UD_SIDR_OK = 0,          /**< the QP number and Q_Key are valid */
	WN_UD_SIDR_UNSUPPORTED = 1, /**< no such service (nobody listens on the port) */
	WN_UD_SIDR_REJECT = 2,      /**< the service refused (rdma_reject) */
	WN_UD_SIDR_NO_QP = 3,       /**< the service has no QP */
};

/** The common header, as it lies on the wire (documentation of offsets; see the codecs). */
struct wn_ud_hdr {
	uint8_t magic[2];
	uint8_t version;
	uint8_t type;
	wn_be32_t flags_dqpn; /**< flags << 24 | destination QP number */
	wn_be32_t sqpn;       /**< reserved (0) << 24 | source QP number */
	wn_be32_t qkey;
} __attribute__((packed));
static_assert(sizeof(struct wn_ud_hdr) == WN_UD_HDR_LEN, "UD header size");

/** A decoded datagram, or one to encode. */
struct wn_ud_msg {
	uint8_t type;          /**< enum wn_ud_type */
	uint8_t flags;         /**< WN_UD_F_* (DATA) */
	uint32_t dqpn;         /**< destination QP number */
	uint32_t sqpn;         /**< source QP number */
	uint32_t qkey;
	uint32_t imm;          /**< DATA with WN_UD_F_IMM: as the work request gave it (network
				*   order in memory: the 4 octets on the wire, unchanged) */
	uint32_t req_id;       /**< SIDR */
	uint16_t ps;           /**< SIDR REQ: rdma_cm port space (RDMA_PS_UDP = 0x0111) */
	uint16_t dport;        /**< SIDR REQ: the service's port in that space */
	uint16_t sport;        /**< SIDR REQ: the requester's port */
	uint8_t status;        /**< SIDR REP: enum wn_ud_sidr_status */
	uint16_t pd_len;       /**< SIDR: private data octets */
	const uint8_t *pd;     /**< SIDR: private data (decoding: into the input) */
	uint32_t len;          /**< DATA: message octets (decoding: the rest of the datagram) */
	const uint8_t *payload; /**< DATA decoding: the message (into the input) */
};

/** Why a datagram was refused (wn_wire_ud_decode()). */
enum wn_ud_status {
	WN_UD_OK = 0,
	WN_UD_SHORT,        /**< shorter than its header (or its SIDR body, or its immediate) */
	WN_UD_BAD_MAGIC,    /**< not "WU" */
	WN_UD_BAD_VERSION,  /**< not WN_UD_VERSION */
	WN_UD_BAD_TYPE,     /**< unknown type */
	WN_UD_BAD_FLAGS,    /**< unknown flags, or flags on a SIDR message */
	WN_UD_BAD_RSVD,     /**< a reserved field is not zero */
	WN_UD_BAD_PD,       /**< SIDR private data length above its bound or the datagram */
	WN_UD_BAD_STATUS,   /**< unknown SIDR REP status */
	WN_UD_STATUS_COUNT
};

/** @return a printable reason for @p st. Any thread. */
const char *wn_wire_ud_status_str(enum wn_ud_status st);

/**
 * Decode one datagram (the UDP payload, @p len octets at @p buf).
 * Every field is checked before it is returned: magic, version, type, flags (DATA only),
 * reserved octets zero, QP numbers within 24 bits by construction, SIDR private data within
 * its bound and the datagram (trailing octets after a SIDR message are refused: WN_UD_BAD_PD).
 * @return WN_UD_OK with @p m filled (pointers into @p buf), or why not (@p m undefined).
 */
enum wn_ud_status wn_wire_ud_decode(const uint8_t *buf, size_t len, struct wn_ud_msg *m);

/**
 * The header (and for SIDR the body with its private data; for DATA with WN_UD_F_IMM the
 * immediate data) of @p m into @p buf; a DATA message's octets are the caller's to append.
 * QP numbers are masked to 24 bits.
 * @return octets written, or -EINVAL (unknown type or flags, private data above its bound,
 *   @p m->pd NULL with a length) or -ENOSPC (@p cap too small).
 */
int wn_wire_ud_encode(const struct wn_ud_msg *m, uint8_t *buf, size_t cap);

/** @return the octets wn_wire_ud_encode() writes for @p m (its header part). */
size_t wn_wire_ud_hdr_size(const struct wn_ud_msg *m);

/** Octets of an InfiniBand GRH, which a UD receive buffer gets before the message. */
#define WN_UD_GRH_LEN 40u

/**
 * The 40-octet GRH a UD receive gets in front of the message, as RoCEv2 gives it: for IPv6,
 * the IPv6 header of the datagram (version 6, traffic class, flow label, payload length,
 * next header, hop limit, source GID, destination GID); for IPv4, 20 zero octets and the
 * 20-octet IPv4 header (libibverbs' ibv_init_ah_from_wc() tells the two apart by the IPv4
 * header checksum).
 * @param l3 the datagram's IP header (IPv4 without options, or IPv6).
 * @param l3_len its length: 20 (IPv4) or 40 (IPv6).
 * @return 0, or -EINVAL (another length, or a version that does not match it).
 */
int wn_wire_ud_grh_from_ip(const uint8_t *l3, size_t l3_len, uint8_t grh[WN_UD_GRH_LEN]);

#ifdef __cplusplus
}
#endif

#endif /* WN_WIRE_UD_H */
