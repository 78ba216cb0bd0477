/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * DDP (RFC 5041) and RDMAP (RFC 5040, RFC 7306) wire formats and codecs:
 * control octets, tagged/untagged segment headers, the RDMAP headers (Read
 * Request, Terminate, Atomic Request/Response, Immediate Data), the opcode
 * table shared by transmit and receive, a strict ULPDU parser that maps every
 * rejection to its Terminate (layer, etype, code), header builders, the
 * segmentation helper and the Terminate codec.
 *
 * Layouts follow RFC 5041 §4 and RFC 5040 §4 (RFC 7306 §4 for atomics). The packed structs below
 * document offsets and sizes (fields are big-endian, no bitfields); the codecs
 * read and write octets explicitly so that no unaligned access happens.
 *
 * Thread safety: nothing here keeps mutable global state; every function is
 * pure and may be called from any thread. A caller-owned opcode table
 * (wn_wire_rdmap_op_table_init()) belongs to whoever filled it.
 */
#ifndef WN_WIRE_DDP_H
#define WN_WIRE_DDP_H

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Big-endian 16-bit wire field (same definition as in wn_wire_mpa.h; C11 allows the repeat). */
typedef uint16_t wn_be16_t;
/** Big-endian 32-bit wire field. */
typedef uint32_t wn_be32_t;
/** Big-endian 64-bit wire field. */
typedef uint64_t wn_be64_t;

/* ---------------------------------------------------------------------------------------------
 * Octet access helpers (big-endian, any alignment)
 */

/** @return the big-endian 16-bit value at @p p. */
static inline uint16_t
wn_wire_get_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

/** @return the big-endian 32-bit value at @p p. */
static inline uint32_t
wn_wire_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/** @return the big-endian 64-bit value at @p p. */
static inline uint64_t
wn_wire_get_be64(const uint8_t *p)
{
	return (uint64_t)wn_wire_get_be32(p) << 32 | wn_wire_get_be32(p + 4);
}

/** Store @p v big-endian at @p p. */
static inline void
wn_wire_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/** Store @p v big-endian at @p p. */
static inline void
wn_wire_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/** Store @p v big-endian at @p p. */
static inline void
wn_wire_put_be64(uint8_t *p, uint64_t v)
{
	wn_wire_put_be32(p, (uint32_t)(v >> 32));
	wn_wire_put_be32(p + 4, (uint32_t)v);
}

/* ---------------------------------------------------------------------------------------------
 * DDP control octets (RFC 5041 §4.1) and the RDMAP control octet (RFC 5040 §4.1)
 */

/** Byte masks of the DDP control octet (U+0). */
#define WN_DDP_CTRL_T	    0x80u /**< tagged */
#define WN_DDP_CTRL_L	    0x40u /**< last segment of the message */
#define WN_DDP_CTRL_RSVD    0x3Cu /**< zero on send, not checked */
#define WN_DDP_CTRL_DV_MASK 0x03u /**< DDP version */
/** Byte masks of the RDMAP control octet (U+1, DDP RsvdULP[0:7]). */
#define WN_RDMAP_CTRL_RV_MASK  0xC0u /**< RDMAP version */
#define WN_RDMAP_CTRL_RV_SHIFT 6
#define WN_RDMAP_CTRL_RSV      0x30u /**< zero on send, ignored */
#define WN_RDMAP_CTRL_OP_MASK  0x0Fu /**< RDMAP opcode */

/** Host masks of the 16-bit unit at U+0 after ntohs(). */
#define WN_DDP_HCTRL_T	    0x8000u
#define WN_DDP_HCTRL_L	    0x4000u
#define WN_DDP_HCTRL_RSVD   0x3C00u
#define WN_DDP_HCTRL_DV	    0x0300u
#define WN_DDP_HCTRL_RV	    0x00C0u
#define WN_DDP_HCTRL_RSV    0x0030u
#define WN_DDP_HCTRL_OPCODE 0x000Fu

/** DDP version of RFC 5041 (0 is the RDMA Consortium version, RFC 5041 §4.1). */
#define WN_DDP_VERSION 1
/** RDMAP version of RFC 5040 (0 is the RDMA Consortium version, RFC 5040 §4.1). */
#define WN_RDMAP_VERSION 1

/** DDP control octet and RDMAP control octet (RFC 5041 §4.1, RFC 5040 §4.1). */
struct wn_ddp_ctrl_hdr {
	uint8_t ddp;   /**< T L Rsvd DV, WN_DDP_CTRL_* */
	uint8_t rdmap; /**< RV Rsv Opcode, WN_RDMAP_CTRL_* */
} __attribute__((packed));
static_assert(sizeof(struct wn_ddp_ctrl_hdr) == 2, "DDP control octets");

/** @return true when the tagged bit of DDP control octet @p ddp is set. */
static inline bool
wn_ddp_ctrl_tagged(uint8_t ddp)
{
	return (ddp & WN_DDP_CTRL_T) != 0;
}

/** @return true when the last bit of DDP control octet @p ddp is set. */
static inline bool
wn_ddp_ctrl_last(uint8_t ddp)
{
	return (ddp & WN_DDP_CTRL_L) != 0;
}

/** @return the DDP version of control octet @p ddp. */
static inline uint8_t
wn_ddp_ctrl_dv(uint8_t ddp)
{
	return ddp & WN_DDP_CTRL_DV_MASK;
}

/** @return the RDMAP version of RDMAP control octet @p rdmap. */
static inline uint8_t
wn_rdmap_ctrl_rv(uint8_t rdmap)
{
	return (uint8_t)((rdmap & WN_RDMAP_CTRL_RV_MASK) >> WN_RDMAP_CTRL_RV_SHIFT);
}

/** @return the opcode of RDMAP control octet @p rdmap. */
static inline uint8_t
wn_rdmap_ctrl_opcode(uint8_t rdmap)
{
	return rdmap & WN_RDMAP_CTRL_OP_MASK;
}

/** Tagged buffer segment header, T=1 (RFC 5041 §4.2). */
struct wn_ddp_tagged_hdr {
	struct wn_ddp_ctrl_hdr ctrl;
	wn_be32_t stag; /**< Data Sink STag */
	wn_be64_t to;	/**< Tagged Offset */
} __attribute__((packed));
#define WN_DDP_TAGGED_HDR_LEN 14
static_assert(sizeof(struct wn_ddp_tagged_hdr) == WN_DDP_TAGGED_HDR_LEN, "DDP tagged header");
static_assert(offsetof(struct wn_ddp_tagged_hdr, to) == 6, "DDP TO offset");

/** Untagged buffer segment header, T=0 (RFC 5041 §4.3). */
struct wn_ddp_untagged_hdr {
	struct wn_ddp_ctrl_hdr ctrl;
	wn_be32_t inv_stag; /**< RsvdULP[8:39]: Invalidate STag of 0x4/0x6 (RFC 5040 §4.1) */
	wn_be32_t qn;	    /**< Queue Number */
	wn_be32_t msn;	    /**< Message Sequence Number */
	wn_be32_t mo;	    /**< Message Offset */
} __attribute__((packed));
#define WN_DDP_UNTAGGED_HDR_LEN 18
static_assert(sizeof(struct wn_ddp_untagged_hdr) == WN_DDP_UNTAGGED_HDR_LEN, "DDP untagged header");
static_assert(offsetof(struct wn_ddp_untagged_hdr, mo) == 14, "DDP MO offset");

/** Untagged queue numbers (RFC 5040 §4.1, RFC 7306 §10.2). */
#define WN_DDP_QN_SEND	0 /**< Sends, Immediate Data */
#define WN_DDP_QN_RREQ	1 /**< RDMA Read Request, Atomic Request */
#define WN_DDP_QN_TERM	2 /**< Terminate */
#define WN_DDP_QN_ARESP 3 /**< Atomic Response (RFC 7306) */

/* ---------------------------------------------------------------------------------------------
 * RDMAP headers (RFC 5040 §4.4, §4.8; RFC 7306 §5.2, §6)
 */

/** RDMA Read Request header, after the untagged DDP header (RFC 5040 §4.4). */
struct wn_rdmap_read_req_hdr {
	wn_be32_t sink_stag; /**< Data Sink STag */
	wn_be64_t sink_to;   /**< Data Sink Tagged Offset */
	wn_be32_t size;	     /**< RDMA Read Message Size */
	wn_be32_t src_stag;  /**< Data Source STag */
	wn_be64_t src_to;    /**< Data Source Tagged Offset */
} __attribute__((packed));
#define WN_RDMAP_READ_REQ_HDR_LEN 28
static_assert(sizeof(struct wn_rdmap_read_req_hdr) == WN_RDMAP_READ_REQ_HDR_LEN,
	      "RDMA Read Request header");

/** Host masks of the Terminate Control word, ntohl() at U+18 (RFC 5040 §4.8 Fig. 8). */
#define WN_TERM_CTRL_LAYER_MASK	 0xF0000000u
#define WN_TERM_CTRL_LAYER_SHIFT 28
#define WN_TERM_CTRL_ETYPE_MASK	 0x0F000000u
#define WN_TERM_CTRL_ETYPE_SHIFT 24
#define WN_TERM_CTRL_CODE_MASK	 0x00FF0000u
#define WN_TERM_CTRL_CODE_SHIFT	 16
#define WN_TERM_CTRL_M		 0x00008000u /**< DDP Segment Length valid */
#define WN_TERM_CTRL_D		 0x00004000u /**< Terminated DDP header included */
#define WN_TERM_CTRL_R		 0x00002000u /**< Terminated RDMA header included */
#define WN_TERM_CTRL_RSVD	 0x00001FFFu /**< zero on send, ignored */

/** Octets of the Terminate Control word (with its 13 reserved bits). */
#define WN_TERM_CTRL_LEN 4
/** Octets of the DDP Segment Length field (present when D=1). */
#define WN_TERM_SEGLEN_LEN 2

/**
 * Terminate header (RFC 5040 §4.8 Fig. 7) drawn at its largest: D=1 with an
 * untagged terminated DDP header and R=1. With a tagged terminated header the
 * RDMA header starts 4 octets earlier; without D/R the header ends earlier.
 */
struct wn_rdmap_term_hdr {
	wn_be32_t ctrl;				  /**< Layer, EType, Error Code, M D R, Reserved */
	wn_be16_t seg_len;			  /**< DDP Segment Length (D=1) */
	uint8_t ddp_hdr[WN_DDP_UNTAGGED_HDR_LEN]; /**< Terminated DDP header, 14 or 18 (D=1) */
	struct wn_rdmap_read_req_hdr rdma_hdr;	  /**< Terminated RDMA header (R=1) */
} __attribute__((packed));
#define WN_RDMAP_TERM_HDR_MAX 52
static_assert(sizeof(struct wn_rdmap_term_hdr) == WN_RDMAP_TERM_HDR_MAX, "Terminate header");

/** Atomic Request header (RFC 7306 §5.2.1 Fig. 4). */
struct wn_rdmap_atomic_req_hdr {
	wn_be32_t aopcode;	 /**< 28 reserved bits, AOpCode in the low 4 bits */
	wn_be32_t req_id;	 /**< Request Identifier */
	wn_be32_t stag;		 /**< Remote STag */
	wn_be64_t to;		 /**< Remote Tagged Offset (64-bit aligned) */
	wn_be64_t add_swap;	 /**< Add Data or Swap Data */
	wn_be64_t add_swap_mask; /**< Add Mask or Swap Mask */
	wn_be64_t compare;	 /**< Compare Data */
	wn_be64_t compare_mask;	 /**< Compare Mask */
} __attribute__((packed));
#define WN_RDMAP_ATOMIC_REQ_HDR_LEN 52
static_assert(sizeof(struct wn_rdmap_atomic_req_hdr) == WN_RDMAP_ATOMIC_REQ_HDR_LEN,
	      "Atomic Request header");
/** Host mask of the AOpCode, ntohl() at U+18. */
#define WN_RDMAP_AOPCODE_MASK 0x0000000Fu

/** Atomic operation codes (RFC 7306 §10.1). */
#define WN_RDMAP_AOP_FETCH_ADD 0x0
#define WN_RDMAP_AOP_CMP_SWAP  0x2

/** Atomic Response header (RFC 7306 §5.2.2 Fig. 6: 12 octets, not the 32 of its §4). */
struct wn_rdmap_atomic_resp_hdr {
	wn_be32_t req_id; /**< Original Request Identifier */
	wn_be64_t orig;	  /**< Original Remote Data Value */
} __attribute__((packed));
#define WN_RDMAP_ATOMIC_RESP_HDR_LEN 12
static_assert(sizeof(struct wn_rdmap_atomic_resp_hdr) == WN_RDMAP_ATOMIC_RESP_HDR_LEN,
	      "Atomic Response header");

/** Immediate Data (RFC 7306 §6.2: exactly 8 octets after the untagged DDP header). */
struct wn_rdmap_immediate_hdr {
	wn_be64_t data;
} __attribute__((packed));
#define WN_RDMAP_IMMEDIATE_LEN 8
static_assert(sizeof(struct wn_rdmap_immediate_hdr) == WN_RDMAP_IMMEDIATE_LEN, "Immediate Data");

/* ---------------------------------------------------------------------------------------------
 * Opcodes and the opcode table (RFC 5040 §4.2, RFC 7306 §10, RFC 6580 §3.4)
 */

/** RDMAP opcodes. */
enum wn_rdmap_opcode {
	WN_RDMAP_WRITE = 0x0,
	WN_RDMAP_READ_REQ = 0x1,
	WN_RDMAP_READ_RESP = 0x2,
	WN_RDMAP_SEND = 0x3,
	WN_RDMAP_SEND_INV = 0x4,
	WN_RDMAP_SEND_SE = 0x5,
	WN_RDMAP_SEND_SE_INV = 0x6,
	WN_RDMAP_TERMINATE = 0x7,
	WN_RDMAP_IMMEDIATE = 0x8,    /**< RFC 7306 */
	WN_RDMAP_IMMEDIATE_SE = 0x9, /**< RFC 7306 */
	WN_RDMAP_ATOMIC_REQ = 0xA,   /**< RFC 7306 */
	WN_RDMAP_ATOMIC_RESP = 0xB,  /**< RFC 7306 */
	/* 0xC-0xE unassigned, 0xF reserved (experimental, RFC 6580 §3.4) */
};
/** Number of opcode values (4-bit field). */
#define WN_RDMAP_OPCODE_COUNT 16

/** Largest ULPDU the MPA layer can carry (16-bit ULPDU_Length). */
#define WN_DDP_ULPDU_MAX 65535u

struct wn_ddp_seg;

/**
 * Receive handler slot of the opcode table, filled by the RNIC engine.
 * @param ctx engine context (the connection)
 * @param seg a segment wn_wire_ddp_parse() accepted
 * @return 0 or a negative errno chosen by the engine.
 */
typedef int (*wn_rdmap_rx_fn)(void *ctx, const struct wn_ddp_seg *seg);

/** One opcode's properties; one table entry per opcode value. */
struct wn_rdmap_op {
	const char *name;      /**< "RDMA Write", ... ; "unassigned"/"reserved" otherwise */
	bool valid;	       /**< assigned by RFC 5040 or RFC 7306 */
	bool rfc7306;	       /**< defined by RFC 7306 (optional for a peer) */
	bool tagged;	       /**< carried in tagged segments */
	uint8_t qn;	       /**< untagged queue number */
	bool payload;	       /**< carries ULP payload after its headers */
	bool single;	       /**< single segment only: L=1, MO=0 */
	bool invalidate;       /**< RsvdULP[8:39] carries an Invalidate STag */
	bool solicited;	       /**< Solicited Event */
	uint8_t ddp_hdr_len;   /**< 14 tagged, 18 untagged */
	uint8_t rdmap_hdr_len; /**< RDMAP header after the DDP header (Terminate: its minimum 4) */
	uint16_t min_ulpdu;    /**< smallest valid ULPDU */
	uint16_t max_ulpdu;    /**< largest valid ULPDU (WN_DDP_ULPDU_MAX when unbounded) */
	uint8_t ctrl_rdmap;    /**< RDMAP control octet template (RV 1, opcode) */
	wn_rdmap_rx_fn rx;     /**< receive handler; NULL in wn_wire_rdmap_ops */
};

/** The opcode table indexed by opcode 0x0-0xF; rx slots are NULL. */
extern const struct wn_rdmap_op wn_wire_rdmap_ops[WN_RDMAP_OPCODE_COUNT];

/**
 * Copy wn_wire_rdmap_ops into an engine-owned table whose rx slots the engine then
 * fills. @param tbl WN_RDMAP_OPCODE_COUNT entries.
 * Thread safety: writes only @p tbl.
 */
void wn_wire_rdmap_op_table_init(struct wn_rdmap_op *tbl);

/** @return the name of opcode @p op (low 4 bits used). Any thread. */
const char *wn_wire_rdmap_opcode_str(uint8_t op);

/* ---------------------------------------------------------------------------------------------
 * Terminate causes (RFC 5040 §4.8 Fig. 9, RFC 5041 §7.2, RFC 5044 §8, RFC 6581 §8; RFC 6580)
 */

/** Terminate layers. */
#define WN_TERM_LAYER_RDMAP 0x0
#define WN_TERM_LAYER_DDP   0x1
#define WN_TERM_LAYER_LLP   0x2

/** RDMAP error types. */
#define WN_TERM_RDMAP_LOCAL_CATA  0x0
#define WN_TERM_RDMAP_REMOTE_PROT 0x1
#define WN_TERM_RDMAP_REMOTE_OP	  0x2
/** RDMAP remote protection codes. */
#define WN_TERM_RP_INVALID_STAG	   0x00
#define WN_TERM_RP_BASE_BOUNDS	   0x01
#define WN_TERM_RP_ACCESS	   0x02
#define WN_TERM_RP_STAG_NOT_ASSOC  0x03
#define WN_TERM_RP_TO_WRAP	   0x04
#define WN_TERM_RP_CANT_INVALIDATE 0x09
#define WN_TERM_RP_UNSPECIFIED	   0xFF
/** RDMAP remote operation codes. */
#define WN_TERM_RO_INVALID_VERSION 0x05
#define WN_TERM_RO_UNEXPECTED_OP   0x06
#define WN_TERM_RO_CATA_STREAM	   0x07
#define WN_TERM_RO_CATA_GLOBAL	   0x08
#define WN_TERM_RO_CANT_INVALIDATE 0x09
#define WN_TERM_RO_UNSPECIFIED	   0xFF

/** DDP error types. */
#define WN_TERM_DDP_CATA     0x0
#define WN_TERM_DDP_TAGGED   0x1
#define WN_TERM_DDP_UNTAGGED 0x2
/** DDP tagged buffer codes. */
#define WN_TERM_DT_INVALID_STAG	   0x00
#define WN_TERM_DT_BASE_BOUNDS	   0x01
#define WN_TERM_DT_STAG_NOT_ASSOC  0x02
#define WN_TERM_DT_TO_WRAP	   0x03
#define WN_TERM_DT_INVALID_VERSION 0x04
/** DDP untagged buffer codes. */
#define WN_TERM_DU_INVALID_QN	   0x01
#define WN_TERM_DU_MSN_NO_BUFFER   0x02
#define WN_TERM_DU_MSN_RANGE	   0x03
#define WN_TERM_DU_INVALID_MO	   0x04
#define WN_TERM_DU_TOO_LONG	   0x05
#define WN_TERM_DU_INVALID_VERSION 0x06

/** LLP (MPA) error type; codes are enum wn_mpa_err 1-7 of wn_wire_mpa.h. */
#define WN_TERM_LLP_MPA 0x0

/** One Terminate cause. */
struct wn_term_cause {
	uint8_t layer; /**< WN_TERM_LAYER_* (4 bits) */
	uint8_t etype; /**< error type (4 bits) */
	uint8_t code;  /**< error code */
};

/**
 * @return true when (@p layer, @p etype, @p code) is a value of RFC 5040
 *   Fig. 9 / RFC 5041 §7.2 / RFC 5044 §8 / RFC 6581 §8 (RDMAP local
 *   catastrophic accepts any code, DDP local catastrophic only 0x00). Any thread.
 */
bool wn_wire_term_cause_known(uint8_t layer, uint8_t etype, uint8_t code);

/**
 * @return a constant description such as "DDP untagged: invalid QN", or
 *   "unknown" when wn_wire_term_cause_known() is false. Any thread.
 */
const char *wn_wire_term_cause_str(uint8_t layer, uint8_t etype, uint8_t code);

/* ---------------------------------------------------------------------------------------------
 * Parsed segment and the strict ULPDU parser
 */

/** DDP header fields (host order), both for parsing and building. */
struct wn_ddp_hdr {
	uint8_t opcode;	   /**< RDMAP opcode */
	bool tagged;	   /**< T (implied by the opcode when building) */
	bool last;	   /**< L */
	uint32_t stag;	   /**< tagged: STag */
	uint64_t to;	   /**< tagged: TO */
	uint32_t inv_stag; /**< untagged: RsvdULP[8:39] (Invalidate STag for 0x4/0x6) */
	uint32_t qn;	   /**< untagged: QN (the opcode's QN when building) */
	uint32_t msn;	   /**< untagged: MSN */
	uint32_t mo;	   /**< untagged: MO */
};

/** Read Request header, host order (RFC 5040 §4.4). */
struct wn_rdmap_read_req {
	uint32_t sink_stag;
	uint64_t sink_to;
	uint32_t size;
	uint32_t src_stag;
	uint64_t src_to;
};

/** Atomic Request header, host order (RFC 7306 §5.2.1). */
struct wn_rdmap_atomic_req {
	uint8_t aopcode; /**< WN_RDMAP_AOP_* */
	uint32_t req_id;
	uint32_t stag;
	uint64_t to;
	uint64_t add_swap;
	uint64_t add_swap_mask;
	uint64_t compare;
	uint64_t compare_mask;
};

/** Atomic Response header, host order (RFC 7306 §5.2.2). */
struct wn_rdmap_atomic_resp {
	uint32_t req_id;
	uint64_t orig;
};

/** Quirks seen in a received Terminate (bit set in wn_rdmap_term::quirks). */
#define WN_TERM_Q_SWAPPED  0x01u /**< unknown cause, but known with Layer/EType swapped (siw) */
#define WN_TERM_Q_R_NO_HDR 0x02u /**< R=1 without room for the RDMA header (siw) */
#define WN_TERM_Q_RSVD	   0x04u /**< reserved control bits set (ignored) */

/** Outcome of wn_wire_rdmap_term_parse(). */
enum wn_term_status {
	WN_TERM_OK = 0,
	WN_TERM_SHORT,	       /**< fewer than 4 octets */
	WN_TERM_UNKNOWN_CAUSE, /**< (layer, etype, code) not in the RFC tables */
	WN_TERM_M_WITHOUT_D,   /**< M=1 but no DDP Segment Length present (needs D) */
	WN_TERM_D_SHORT,       /**< D=1 but the terminated DDP header does not fit */
	WN_TERM_R_SHORT,       /**< R=1 but the RDMA header does not fit */
	WN_TERM_TRAILING,      /**< octets after the last announced part */
	WN_TERM_STATUS_COUNT,
};

/** @return a constant description of @p st. Any thread. */
const char *wn_wire_term_status_str(enum wn_term_status st);

/** Terminate header (RFC 5040 §4.8): parse result and builder input. */
struct wn_rdmap_term {
	struct wn_term_cause cause;    /**< as received (RFC reading) */
	struct wn_term_cause swapped;  /**< parse: nibbles swapped, valid with WN_TERM_Q_SWAPPED */
	bool m;			       /**< DDP Segment Length valid */
	bool d;			       /**< Terminated DDP header included */
	bool r;			       /**< Terminated RDMA header included */
	uint16_t seg_len;	       /**< DDP Segment Length (D=1) */
	uint8_t ddp_hdr_len;	       /**< 14 or 18 (D=1) */
	const uint8_t *ddp_hdr;	       /**< Terminated DDP header (D=1) */
	struct wn_ddp_hdr ddp;	       /**< parse: its fields (D=1) */
	struct wn_rdmap_read_req rdma; /**< Terminated RDMA header (R=1 and present) */
	uint8_t quirks;		       /**< parse: WN_TERM_Q_* */
	enum wn_term_status status;    /**< parse: strict verdict */
};

/** Parse flags. */
#define WN_DDP_F_RFC7306 0x1u /**< accept the RFC 7306 opcodes 0x8-0xB */

/** A parsed ULPDU (one DDP segment). */
struct wn_ddp_seg {
	struct wn_ddp_hdr h;	/**< DDP header */
	uint8_t dv;		/**< DDP version seen */
	uint8_t rv;		/**< RDMAP version seen */
	uint16_t hdr_len;	/**< DDP + RDMAP header octets */
	const uint8_t *payload; /**< ULP payload (points into the input) */
	uint32_t payload_len;	/**< ULP payload octets */
	/** the opcode's RDMAP header; only the member of the parsed opcode is written */
	union {
		struct wn_rdmap_read_req rreq;	   /**< opcode 0x1 */
		struct wn_rdmap_term term;	   /**< opcode 0x7 */
		uint64_t imm;			   /**< opcodes 0x8/0x9 */
		struct wn_rdmap_atomic_req areq;   /**< opcode 0xA */
		struct wn_rdmap_atomic_resp aresp; /**< opcode 0xB */
	} u;
};

/** Why wn_wire_ddp_parse() rejected a ULPDU. */
enum wn_ddp_reason {
	WN_DDP_R_OK = 0,
	WN_DDP_R_TRUNCATED,	/**< DDP header incomplete */
	WN_DDP_R_DDP_VERSION,	/**< DV != 1 */
	WN_DDP_R_RDMAP_VERSION, /**< RV != 1 */
	WN_DDP_R_OPCODE,	/**< unassigned/reserved opcode, or RFC 7306 not enabled */
	WN_DDP_R_OPCODE_T,	/**< opcode in the wrong buffer model (T bit) */
	WN_DDP_R_QN,		/**< QN not the opcode's queue */
	WN_DDP_R_NOT_LAST,	/**< single-segment opcode with L=0 */
	WN_DDP_R_MO,		/**< single-segment opcode with MO != 0 */
	WN_DDP_R_HDR_SHORT,	/**< RDMAP header incomplete / Immediate Data under 8 octets */
	WN_DDP_R_TOO_LONG,	/**< longer than the opcode allows (or MO + length >= 2^32) */
	WN_DDP_R_TO_WRAP,	/**< tagged: last payload octet beyond TO 2^64 - 1 */
	WN_DDP_R_READ_WRAP,	/**< Read Request: source TO + size - 1 beyond 2^64 - 1 */
	WN_DDP_R_AOPCODE,	/**< Atomic Request AOpCode not FetchAdd/CmpSwap */
	WN_DDP_R_ATOMIC_ALIGN,	/**< Atomic Request TO not 64-bit aligned */
	WN_DDP_R_COUNT,
};

/** A rejection and the Terminate it maps to. */
struct wn_ddp_error {
	enum wn_ddp_reason reason;
	struct wn_term_cause cause;
	/** the offending segment's DDP header was complete (it may go in the Terminate) */
	bool hdr_valid;
};

/** @return the Terminate cause of @p r (RFC 5040 §7.2, RFC 5041 §7). Any thread. */
struct wn_term_cause wn_wire_ddp_reason_cause(enum wn_ddp_reason r);

/** @return a constant description of @p r. Any thread. */
const char *wn_wire_ddp_reason_str(enum wn_ddp_reason r);

/**
 * Strict parse of one whole ULPDU (the DDP segment MPA delivered).
 *
 * Checks, in this order, everything decidable from the segment alone: DDP
 * version (RFC 5041 §7.2: tagged 1/1/0x04, untagged 1/2/0x06), DDP header
 * complete (else 0/2/0xFF), RDMAP version (RFC 5040 §7.2: 0/2/0x05), opcode
 * assigned and enabled and in its buffer model (0/2/0x06); tagged: the last
 * payload octet's TO does not wrap (1/1/0x03; not for zero-length segments,
 * RFC 5041 §5.2); untagged: QN of the opcode (1/2/0x01), single-segment
 * opcodes with L=1 (else 1/2/0x05) and MO=0 (else 1/2/0x04), MO + payload
 * < 2^32 (1/2/0x05), the opcode's exact header length (short: 0/2/0xFF, long:
 * 1/2/0x05; Immediate Data exactly 8 octets, RFC 7306 §6.3), Read Request
 * source TO + size - 1 no wrap when size != 0 (RFC 5040 §7.2: 0/1/0x04),
 * Atomic Request AOpCode 0 or 2 (0/2/0x06) and TO 64-bit aligned (RFC 7306
 * §8.2: 0/2/0x07). A Terminate (opcode 0x7) is accepted when it has 4..52
 * header octets; its strict verdict is in @p seg->u.term.status.
 * Reserved bits are ignored. Never reads beyond @p len.
 *
 * @param u the ULPDU
 * @param len its length
 * @param flags WN_DDP_F_*
 * @param seg filled on success (pointers into @p u); partly filled on error
 * @param err filled on error; may be NULL
 * @return 0, or -EBADMSG (@p err says why and which Terminate), -EINVAL
 *   (NULL @p seg, or NULL @p u with @p len).
 * Thread safety: pure, any thread.
 */
int wn_wire_ddp_parse(const uint8_t *u, size_t len, unsigned int flags, struct wn_ddp_seg *seg,
		 struct wn_ddp_error *err);

/**
 * Call the receive handler of @p seg's opcode in the engine table @p tbl.
 * @return the handler's value, or -ENOTSUP when the slot is empty.
 * Thread safety: the lcore that owns @p ctx.
 */
static inline int
wn_rdmap_rx_dispatch(const struct wn_rdmap_op *tbl, void *ctx, const struct wn_ddp_seg *seg)
{
	wn_rdmap_rx_fn fn = tbl[seg->h.opcode & WN_RDMAP_CTRL_OP_MASK].rx;

	return fn == NULL ? -ENOTSUP : fn(ctx, seg);
}

/* ---------------------------------------------------------------------------------------------
 * Builders
 */

/**
 * Write a DDP segment header (14 octets tagged, 18 untagged) for opcode
 * @p h->opcode: T and QN come from the opcode table (h->tagged and h->qn are
 * ignored), DV = RV = 1, reserved bits 0, RsvdULP[8:39] = @p h->inv_stag for
 * opcodes 0x4/0x6 and 0 otherwise.
 * @return octets written, -EINVAL (unassigned opcode, NULL argument), -ENOSPC.
 * Thread safety: pure, any thread.
 */
int wn_wire_ddp_hdr_build(uint8_t *out, size_t cap, const struct wn_ddp_hdr *h);

/** @return octets written (14), -EINVAL, -ENOSPC: tagged RDMA Write segment header. */
int wn_wire_rdmap_write_build(uint8_t *out, size_t cap, uint32_t stag, uint64_t to, bool last);

/**
 * Read Response segment header (14): STag/TO are the Read Request's Data Sink
 * STag and TO (+ offset) copied verbatim (RFC 5040 §5.2).
 * @return 14, -ENOSPC.
 */
int wn_wire_rdmap_read_resp_build(uint8_t *out, size_t cap, uint32_t sink_stag, uint64_t sink_to,
			     bool last);

/**
 * Send segment header (18) for @p opcode 0x3-0x6; @p inv_stag is sent only
 * for 0x4/0x6 (RFC 5040 §4.1).
 * @return 18, -EINVAL (not a Send opcode), -ENOSPC.
 */
int wn_wire_rdmap_send_build(uint8_t *out, size_t cap, uint8_t opcode, uint32_t inv_stag,
			     uint32_t msn, uint32_t mo, bool last);

/**
 * Whole RDMA Read Request ULPDU (46 octets, QN 1, L=1, MO 0).
 * @return 46, -EINVAL, -ENOSPC.
 */
int wn_wire_rdmap_read_req_build(uint8_t *out, size_t cap, uint32_t msn,
			    const struct wn_rdmap_read_req *rr);

/**
 * Whole Immediate Data ULPDU (26 octets, @p opcode 0x8 or 0x9, QN 0, L=1).
 * @return 26, -EINVAL, -ENOSPC.
 */
int wn_wire_rdmap_immediate_build(uint8_t *out, size_t cap, uint8_t opcode, uint32_t msn,
				  uint64_t data);

/**
 * Whole Atomic Request ULPDU (70 octets, QN 1). For FetchAdd the Compare Data
 * is sent as 0 and the Compare Mask as all ones (RFC 7306 §5.2.1).
 * @return 70, -EINVAL (AOpCode not 0/2, TO not 8-aligned, NULL), -ENOSPC.
 */
int wn_wire_rdmap_atomic_req_build(uint8_t *out, size_t cap, uint32_t msn,
			      const struct wn_rdmap_atomic_req *ar);

/**
 * Whole Atomic Response ULPDU (30 octets, QN 3; @p msn is the QN 3 MSN).
 * @return 30, -EINVAL, -ENOSPC.
 */
int wn_wire_rdmap_atomic_resp_build(uint8_t *out, size_t cap, uint32_t msn,
			       const struct wn_rdmap_atomic_resp *as);

/**
 * Whole Terminate ULPDU (RFC 5040 §4.8): untagged, L=1, QN 2, MO 0, then the
 * control word from @p t->cause and M/D/R, the DDP Segment Length and the
 * terminated DDP header (@p t->ddp_hdr, @p t->ddp_hdr_len = 14 or 18) when D,
 * and the Read Request header @p t->rdma when R.
 * @return 22..70, -EINVAL (layer/etype over 15, M without D, bad header
 *   length, NULL header with D), -ENOSPC.
 */
int wn_wire_rdmap_term_build(uint8_t *out, size_t cap, uint32_t msn, const struct wn_rdmap_term *t);

/**
 * Fill @p t for a Terminate answering an incoming ULPDU that failed with
 * @p cause, choosing the parts per RFC 5040 Fig. 10 / §7.1: RDMAP local
 * catastrophic and LLP errors carry nothing; RDMAP remote protection carries
 * the DDP header when available and, for a Read Request, the RDMA header;
 * RDMAP remote operation carries the DDP header when available; DDP errors
 * carry the DDP header and its segment length (M=1). The DDP header is
 * "available" when @p bad holds a whole one (its T bit decides 14 or 18).
 * DDP Segment Length = @p bad_len (the length DDP handed up).
 *
 * @param bad the offending ULPDU (may be NULL: nothing is included)
 * @param bad_len its length
 * @return 0, -EINVAL (NULL @p t).
 * Thread safety: pure; @p t->ddp_hdr points into @p bad.
 */
int wn_wire_rdmap_term_from_cause(struct wn_rdmap_term *t, struct wn_term_cause cause,
			     const uint8_t *bad, size_t bad_len);

/**
 * Strict parse of a Terminate header (the octets after the 18-octet DDP
 * header of an opcode 0x7 ULPDU): cause, M/D/R, the DDP Segment Length and
 * terminated DDP header when D (sized by that header's T bit), the RDMA header
 * when R, every part bounded by @p len. @p t records everything seen, with
 * quirks (siw's swapped Layer/EType nibbles, R=1 without the RDMA header).
 *
 * @return 0 when @p t->status is WN_TERM_OK, -EBADMSG otherwise (the status
 *   says why; @p t is still filled as far as the input allowed), -EINVAL
 *   (NULL @p t, NULL @p p with @p len).
 * Thread safety: pure; @p t->ddp_hdr points into @p p.
 */
int wn_wire_rdmap_term_parse(const uint8_t *p, size_t len, struct wn_rdmap_term *t);

/* ---------------------------------------------------------------------------------------------
 * Segmentation (RFC 5041 §5.2) and MSN arithmetic (RFC 5041 §4.3, §5.4)
 */

/** One segment of a message. */
struct wn_ddp_span {
	uint32_t off; /**< offset of the payload in the message (MO, or TO - initial TO) */
	uint32_t len; /**< payload octets in this segment */
	bool last;    /**< L bit */
};

/** Segmentation iterator; initialise with wn_wire_ddp_seg_iter_init(). */
struct wn_ddp_seg_iter {
	uint32_t msg_len; /**< message length */
	uint32_t max;	  /**< payload per segment: MULPDU - 14 or - 18 */
	uint32_t off;	  /**< next offset */
	bool done;
};

/**
 * Start segmenting a message of @p msg_len octets into ULPDUs of at most
 * @p mulpdu octets: payload per segment MULPDU - 14 (tagged) or - 18
 * (untagged). A zero-length message is one zero-length segment.
 * @return 0, -EINVAL (NULL @p it, @p mulpdu not above the header length).
 * Thread safety: @p it belongs to the caller.
 */
int wn_wire_ddp_seg_iter_init(struct wn_ddp_seg_iter *it, uint32_t msg_len, uint32_t mulpdu,
			 bool tagged);

/**
 * Next segment of @p it into @p s.
 * @return true when @p s was filled, false when the message is done.
 */
bool wn_wire_ddp_seg_iter_next(struct wn_ddp_seg_iter *it, struct wn_ddp_span *s);

/** @return the number of segments a message of @p msg_len needs (>= 1). */
uint32_t wn_wire_ddp_seg_count(uint32_t msg_len, uint32_t mulpdu, bool tagged);

/** @return the MSN after @p msn (modulo 2^32, RFC 5041 §5.4). */
static inline uint32_t
wn_ddp_msn_next(uint32_t msn)
{
	return msn + 1u;
}

/**
 * @return true when @p msn lies in the window [@p first, @p first + @p n)
 *   of modulo-2^32 sequence space (RFC 5041 §7.1: MSN within the range of
 *   available buffers).
 */
static inline bool
wn_ddp_msn_in_window(uint32_t msn, uint32_t first, uint32_t n)
{
	return (uint32_t)(msn - first) < n;
}

#ifdef __cplusplus
}
#endif

#endif /* WN_WIRE_DDP_H */
