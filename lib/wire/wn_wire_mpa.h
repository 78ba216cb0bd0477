/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * MPA wire formats and codecs: the Request/Reply frame (RFC 5044 §7.1.1) with
 * the RFC 6581 enhanced data, the RFC 6581 IRD/ORD and RTR negotiation, the
 * FPDU framer and deframer with Markers and CRC32c (RFC 5044 §4), the Marker
 * locator for out-of-order segments and MULPDU (RFC 5044 §4.5).
 *
 * Layouts follow RFC 5044 §7.1 and §4, RFC 6581 §6. Multi-octet fields are
 * big-endian; the structs below only document offsets (no bitfields), the
 * codecs read octets explicitly so that no unaligned access happens.
 *
 * Thread safety: nothing here keeps global state. Pure functions may be
 * called from any thread; a struct wn_mpa_deframer must be used by one
 * thread at a time (it belongs to the lcore that owns the connection).
 */
#ifndef WN_WIRE_MPA_H
#define WN_WIRE_MPA_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Big-endian 16-bit wire field (documentation type; lib/wire has no DPDK). */
typedef uint16_t wn_be16_t;
/** Big-endian 32-bit wire field. */
typedef uint32_t wn_be32_t;

/* ---------------------------------------------------------------------------------------------
 * MPA Request / Reply frame (RFC 5044 §7.1.1, RFC 6581 §6)
 */

/** Length of the Key field. */
#define WN_MPA_KEY_LEN 16
/** Request key "MPA ID Req Frame" (RFC 5044 §7.1.1). */
#define WN_MPA_KEY_REQ "MPA ID Req Frame"
/** Reply key "MPA ID Rep Frame" (RFC 5044 §7.1.1). */
#define WN_MPA_KEY_REP "MPA ID Rep Frame"

/** Byte masks of the flag octet at R+16. */
#define WN_MPA_FLAG_M   0x80u /**< Markers required in the peer's FPDUs. */
#define WN_MPA_FLAG_C   0x40u /**< CRC preferred. */
#define WN_MPA_FLAG_R   0x20u /**< Rejected (Reply only). */
#define WN_MPA_FLAG_S   0x10u /**< Enhanced data present (RFC 6581 §6). */
#define WN_MPA_FLAG_RES 0x0Fu /**< Reserved: zero on send, never checked. */

/** Host masks of the 32-bit unit at R+16 after ntohl(). */
#define WN_MPA_HDR_M          0x80000000u
#define WN_MPA_HDR_C          0x40000000u
#define WN_MPA_HDR_R          0x20000000u
#define WN_MPA_HDR_S          0x10000000u
#define WN_MPA_HDR_RES        0x0F000000u
#define WN_MPA_HDR_REV_MASK   0x00FF0000u
#define WN_MPA_HDR_REV_SHIFT  16
#define WN_MPA_HDR_PDLEN_MASK 0x0000FFFFu

/** MPA revisions (RFC 5044 §7.1.1, App. C; RFC 6581 §6). */
#define WN_MPA_REV_RDMAC 0
#define WN_MPA_REV_1     1
#define WN_MPA_REV_2     2
/** Highest revision this implementation knows; anything above is rejected. */
#define WN_MPA_REV_MAX 2

/** Largest PD_Length (RFC 5044 §7.1.1). */
#define WN_MPA_PD_MAX 512
/** Octets before the Private Data. */
#define WN_MPA_FRAME_HDR_LEN 20
/** Octets of RFC 6581 enhanced data at the start of the Private Data when S=1. */
#define WN_MPA_ENH_LEN 4
/** Largest whole frame. */
#define WN_MPA_FRAME_MAX (WN_MPA_FRAME_HDR_LEN + WN_MPA_PD_MAX)

/** Fixed part of an MPA Request/Reply frame (RFC 5044 §7.1.1). */
struct wn_mpa_frame_hdr {
	uint8_t key[WN_MPA_KEY_LEN];
	uint8_t flags;       /**< M C R S Res, WN_MPA_FLAG_* */
	uint8_t rev;         /**< MPA revision */
	wn_be16_t pd_length; /**< Private Data octets that follow, 0..512 */
} __attribute__((packed));
static_assert(sizeof(struct wn_mpa_frame_hdr) == WN_MPA_FRAME_HDR_LEN, "MPA frame header");

/** Host masks of the RFC 6581 §9 enhanced data, ntohl() at R+20. */
#define WN_MPA_ENH_A         0x80000000u /**< peer-to-peer model */
#define WN_MPA_ENH_B         0x40000000u /**< zero-length Send RTR */
#define WN_MPA_ENH_IRD_MASK  0x3FFF0000u
#define WN_MPA_ENH_IRD_SHIFT 16
#define WN_MPA_ENH_C         0x00008000u /**< zero-length RDMA Write RTR */
#define WN_MPA_ENH_D         0x00004000u /**< zero-length RDMA Read RTR */
#define WN_MPA_ENH_ORD_MASK  0x00003FFFu
/** Largest IRD/ORD, and the value meaning "ULP negotiates" (RFC 6581 §9.1). */
#define WN_MPA_IRD_ORD_MAX   0x3FFFu
#define WN_MPA_IRD_ORD_NONEG 0x3FFFu

/** RFC 6581 §9 enhanced connection data (R+20). */
struct wn_mpa_enh_hdr {
	wn_be16_t a_b_ird; /**< A, B, 14-bit IRD */
	wn_be16_t c_d_ord; /**< C, D, 14-bit ORD */
} __attribute__((packed));
static_assert(sizeof(struct wn_mpa_enh_hdr) == WN_MPA_ENH_LEN, "MPA enhanced data");

/** RTR message types (RFC 6581 §9.2), used as a bit set. */
enum wn_mpa_rtr {
	WN_MPA_RTR_SEND = 1u << 0,  /**< B: zero-length Send (FULPDU) */
	WN_MPA_RTR_WRITE = 1u << 1, /**< C: zero-length RDMA Write */
	WN_MPA_RTR_READ = 1u << 2,  /**< D: zero-length RDMA Read Request */
};
/** All RTR bits. */
#define WN_MPA_RTR_ALL (WN_MPA_RTR_SEND | WN_MPA_RTR_WRITE | WN_MPA_RTR_READ)

/** MPA / LLP error codes, Layer 0x2, EType 0x0 (RFC 5044 §8, RFC 6581 §8). */
enum wn_mpa_err {
	WN_MPA_ERR_NONE = 0,
	WN_MPA_ERR_CONN_LOST = 1,       /**< TCP connection closed, terminated or lost */
	WN_MPA_ERR_CRC = 2,             /**< received MPA CRC does not match */
	WN_MPA_ERR_MARKER = 3,          /**< Marker and ULPDU_Length disagree */
	WN_MPA_ERR_BAD_FRAME = 4,       /**< invalid MPA Request or Reply frame */
	WN_MPA_ERR_LOCAL = 5,           /**< local catastrophic (RFC 6581) */
	WN_MPA_ERR_INSUFFICIENT_IRD = 6, /**< insufficient IRD resources (RFC 6581) */
	WN_MPA_ERR_NO_RTR = 7,          /**< no matching RTR option (RFC 6581) */
};

/**
 * @return a constant name for MPA error @p err ("crc", "marker", ...), or
 *   "unknown" for values outside 0..7. Any thread.
 */
const char *wn_wire_mpa_err_str(enum wn_mpa_err err);

/** Which frame a Key identifies. */
enum wn_mpa_frame_type {
	WN_MPA_FRAME_REQUEST = 0,
	WN_MPA_FRAME_REPLY = 1,
};

/** A decoded (or to-be-encoded) MPA Request/Reply frame. */
struct wn_mpa_frame {
	enum wn_mpa_frame_type type;
	bool markers;  /**< M */
	bool crc;      /**< C */
	bool rejected; /**< R; always false for a decoded Request (R is ignored there) */
	uint8_t rev;   /**< Rev */
	uint8_t res;   /**< Res bits as received (informational; zero on send) */
	bool enhanced; /**< S=1 with Rev >= 2: @p p2p .. @p ord are valid */
	bool p2p;      /**< A */
	uint8_t rtr;   /**< B/C/D as enum wn_mpa_rtr bits; 0 when A=0 (ignored on receive) */
	uint16_t ird;  /**< 14-bit IRD */
	uint16_t ord;  /**< 14-bit ORD */
	uint16_t pd_len;   /**< ULP Private Data octets (without the enhanced data) */
	const uint8_t *pd; /**< ULP Private Data; points into the decoder's input */
};

/** Receive rules for the frame decoder. */
struct wn_mpa_frame_rules {
	uint8_t rev_mask; /**< accepted revisions, bit n = Rev n (n <= 2) */
	bool enhanced;    /**< RFC 6581 implemented (else S=1 at Rev >= 2 is malformed) */
	uint16_t pd_max;  /**< largest PD_Length accepted (0 or above 512: 512; siw uses 256) */
};

/** Default rules: Rev 1 and 2, RFC 6581 on, 512 octets of Private Data. */
#define WN_MPA_FRAME_RULES_DEFAULT                                                                 \
	{                                                                                          \
		.rev_mask = (1u << WN_MPA_REV_1) | (1u << WN_MPA_REV_2), .enhanced = true,         \
		.pd_max = WN_MPA_PD_MAX                                                            \
	}

/** Outcome of wn_wire_mpa_frame_decode(): which rule decided. */
enum wn_mpa_frame_status {
	WN_MPA_FRAME_OK = 0,       /**< a whole valid frame was decoded */
	WN_MPA_FRAME_NEED_MORE,    /**< no rule broken yet, more octets needed */
	WN_MPA_FRAME_BAD_KEY,      /**< Key is neither Request nor Reply */
	WN_MPA_FRAME_BAD_REV,      /**< Rev above WN_MPA_REV_MAX */
	WN_MPA_FRAME_REV_REFUSED,  /**< Rev 0..2 but not in the accepted set */
	WN_MPA_FRAME_PD_TOO_LONG,  /**< PD_Length above 512 or the configured limit */
	WN_MPA_FRAME_ENH_SHORT,    /**< S=1 but PD_Length < 4 (RFC 6581 §6) */
	WN_MPA_FRAME_ENH_REFUSED,  /**< S=1 at Rev >= 2 while RFC 6581 is off (RFC 6581 §10) */
	WN_MPA_FRAME_STATUS_COUNT, /**< number of values */
};

/** @return a constant description of @p st. Any thread. */
const char *wn_wire_mpa_frame_status_str(enum wn_mpa_frame_status st);

/**
 * Decode one MPA Request or Reply frame from the start of @p buf.
 *
 * Checks, in stream order, only the octets present: the Key (either key is
 * accepted, @p f->type tells which), Rev, PD_Length <= limit, S=1 needs
 * PD_Length >= 4; Res bits are ignored (RFC 5044 §7.1.1), R is ignored in a
 * Request, B/C/D are ignored when A=0 (RFC 6581 §9.2). S is a Res bit for
 * Rev < 2. Never reads beyond @p len.
 *
 * @param buf octets received so far (may be NULL when @p len is 0)
 * @param len number of octets at @p buf
 * @param rules receive rules, NULL for WN_MPA_FRAME_RULES_DEFAULT
 * @param f filled on WN_MPA_FRAME_OK; @p f->pd points into @p buf
 * @param consumed on WN_MPA_FRAME_OK the frame length (20 + PD_Length); octets
 *   after it belong to the next protocol phase. May be NULL.
 * @return WN_MPA_FRAME_OK, WN_MPA_FRAME_NEED_MORE, or the rule that failed
 *   (each of which is MPA error 4 for the connection).
 * Thread safety: pure, any thread.
 */
enum wn_mpa_frame_status wn_wire_mpa_frame_decode(const uint8_t *buf, size_t len,
					     const struct wn_mpa_frame_rules *rules,
					     struct wn_mpa_frame *f, size_t *consumed);

/**
 * Encode @p f (Key from @p f->type, M/C/R, Rev, S and the enhanced data when
 * @p f->enhanced, then @p f->pd_len octets at @p f->pd). Res is sent as zero,
 * R only in a Reply, and B/C/D as zero when A=0 (RFC 6581 §9.2).
 *
 * @return octets written, or -EINVAL (Rev > 2, enhanced with Rev < 2, IRD/ORD
 *   above 0x3FFF, Private Data over 512 octets in total, pd NULL with pd_len),
 *   -ENOSPC (@p cap too small).
 * Thread safety: pure, any thread.
 */
int wn_wire_mpa_frame_encode(const struct wn_mpa_frame *f, uint8_t *out, size_t cap);

/**
 * Read the 4 octets of RFC 6581 §9 enhanced data at @p p into @p f's @c p2p, @c rtr, @c ird
 * and @c ord (B/C/D ignored when A=0). Used for MPA frames and RFC 5043 session control
 * (RFC 6581 §7). Thread safety: pure, any thread.
 */
void wn_wire_mpa_enh_unpack(const uint8_t *p, struct wn_mpa_frame *f);

/**
 * Write @p f's @c p2p, @c rtr, @c ird, @c ord as 4 octets of RFC 6581 §9 enhanced data at
 * @p p (B/C/D zero when A=0; IRD/ORD must be <= 0x3FFF). Thread safety: pure, any thread.
 */
void wn_wire_mpa_enh_pack(const struct wn_mpa_frame *f, uint8_t *p);

/* ---------------------------------------------------------------------------------------------
 * RFC 6581 §9 negotiation
 */

/** What the local side can do, for one connection. */
struct wn_mpa_caps {
	uint16_t ird;     /**< inbound RDMA Read depth this side can provide (<= 0x3FFF) */
	uint16_t ord;     /**< outbound RDMA Read depth this side wants (<= 0x3FFF) */
	uint16_t ord_min; /**< ORD the ULP needs at least; 0 = no requirement (responder) */
	bool p2p;         /**< initiator: ask for peer-to-peer (A=1) */
	uint8_t rtr;      /**< RTR types this side can send (initiator) or accept (responder) */
};

/** Result of a negotiation step. */
struct wn_mpa_neg {
	bool enhanced;      /**< the peer spoke RFC 6581 (S=1, Rev >= 2) */
	uint16_t ird;       /**< local IRD to configure */
	uint16_t ord;       /**< local ORD to configure */
	uint16_t peer_ird;  /**< raw IRD the peer sent (0x3FFF if it sent none) */
	uint16_t peer_ord;  /**< raw ORD the peer sent (0x3FFF if it sent none) */
	bool p2p;           /**< peer-to-peer model agreed (A=1) */
	/**
	 * Responder: the RTR types announced in the Reply (any of them may arrive).
	 * Initiator: the single RTR type to send first, 0 when none is due.
	 */
	uint8_t rtr;
	/** Responder only: A/B/C/D/IRD/ORD to put in the Reply's enhanced data. */
	uint16_t reply_ird;
	uint16_t reply_ord;
};

/**
 * Responder side of RFC 6581 §9: from the decoded Request @p req and the local
 * capabilities compute the Reply's enhanced data and the local IRD/ORD.
 *
 * For a Request without enhanced data (Rev 1 or S=0) no negotiation happens:
 * IRD/ORD are the local values (RFC 6581 §10; the Reply must be unenhanced).
 * Initiator ORD 0x3FFF leaves the local IRD alone and answers IRD 0x3FFF;
 * initiator IRD 0x3FFF leaves the local ORD alone and answers ORD 0x3FFF.
 * Otherwise IRD = min(local IRD, initiator ORD) and ORD = min(local ORD,
 * initiator IRD). With A=1 the Reply carries A=1 and the common RTR types, or
 * all local ones if nothing is common (the initiator then sends Terminate 7);
 * a zero-length Read RTR needs IRD >= 1, which is granted when possible.
 *
 * @return WN_MPA_ERR_NONE, WN_MPA_ERR_INSUFFICIENT_IRD (initiator IRD below
 *   @p local->ord_min; reject with Reply ORD = ord_min), WN_MPA_ERR_NO_RTR
 *   (A=1 and no RTR type can be accepted), WN_MPA_ERR_LOCAL (bad @p local).
 * Thread safety: pure, any thread.
 */
enum wn_mpa_err wn_wire_mpa_negotiate_responder(const struct wn_mpa_caps *local,
					   const struct wn_mpa_frame *req, struct wn_mpa_neg *out);

/**
 * Initiator side of RFC 6581 §9: from the decoded Reply @p rep and the values
 * the initiator sent (@p local) compute the final IRD/ORD and the RTR to send.
 * ORD becomes min(local ORD, responder IRD) unless that is 0x3FFF; responder
 * ORD 0x3FFF leaves IRD alone, otherwise IRD must be >= responder ORD. The RTR
 * is picked from the Reply's bits (Linux siw and iw_cxgb4 do the same: not from what was offered),
 * preferring Write, then Read, then Send.
 *
 * @return WN_MPA_ERR_NONE, WN_MPA_ERR_INSUFFICIENT_IRD (responder ORD above
 *   local IRD), WN_MPA_ERR_NO_RTR (A=1 asked and no common RTR or A=0 in the
 *   Reply), WN_MPA_ERR_LOCAL (bad @p local).
 * Thread safety: pure, any thread.
 */
enum wn_mpa_err wn_wire_mpa_negotiate_initiator(const struct wn_mpa_caps *local,
					   const struct wn_mpa_frame *rep, struct wn_mpa_neg *out);

/* ---------------------------------------------------------------------------------------------
 * FPDU (RFC 5044 §4)
 */

/** ULPDU_Length field size. */
#define WN_MPA_ULPDU_LEN_SIZE 2
/** CRC field size. */
#define WN_MPA_CRC_SIZE 4
/** Marker size. */
#define WN_MPA_MARKER_SIZE 4
/** Marker interval in sequence space (RFC 5044 §4.2). */
#define WN_MPA_MARKER_INTERVAL 512
/** MULPDU bounds (RFC 5044 §4.5). */
#define WN_MPA_MULPDU_MIN 128
#define WN_MPA_MULPDU_MAX 64768
/** Largest ULPDU header the deframer gathers (DDP 18 + RDMAP Terminate up to 52). */
#define WN_MPA_RX_HDR_MAX 72

/** Marker (RFC 5044 §4.3). */
struct wn_mpa_marker {
	wn_be16_t reserved; /**< zero on send, CRC-covered, ignored */
	wn_be16_t fpduptr;  /**< octets back to the FPDU's ULPDU_Length; low 2 bits ignored */
} __attribute__((packed));
static_assert(sizeof(struct wn_mpa_marker) == WN_MPA_MARKER_SIZE, "MPA marker");

/** Mask applied to a received FPDUPTR (low two bits are treated as 0). */
#define WN_MPA_FPDUPTR_MASK 0xFFFCu

/** Framing parameters of one half connection (one direction). */
struct wn_mpa_stream {
	uint32_t seq_start; /**< SeqStart: sequence number of the first Full Operation octet */
	bool markers;       /**< Markers present in this direction */
	bool crc;           /**< CRC computed/checked (the field is always present) */
};

/**
 * MULPDU for an EMSS (RFC 5044 §4.5):
 * markers on: EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS mod 4);
 * off: EMSS - (6 + EMSS mod 4); clamped to 128..64768.
 * Thread safety: pure, any thread.
 */
uint32_t wn_wire_mpa_mulpdu(uint32_t emss, bool markers);

/**
 * @return octets of PAD after a ULPDU of @p ulpdu_len (RFC 5044 §4.1).
 */
static inline unsigned int
wn_mpa_pad_len(size_t ulpdu_len)
{
	return (unsigned int)(-(ulpdu_len + WN_MPA_ULPDU_LEN_SIZE) & 3u);
}

/**
 * Wire length of an FPDU carrying @p ulpdu_len octets whose first octet (its
 * leading Marker if one is due there) has sequence number @p seq, including
 * every Marker that belongs to it (a Marker right after its CRC belongs to the
 * next FPDU). Thread safety: pure, any thread.
 */
size_t wn_wire_mpa_fpdu_wire_len(uint32_t seq, uint32_t seq_start, bool markers, size_t ulpdu_len);

/**
 * Build one FPDU: ULPDU_Length, the ULPDU gathered from @p iov, PAD, the
 * Markers due at 512-octet boundaries of sequence space (RFC 5044 §4.2-4.3,
 * FPDUPTR relative to ULPDU_Length, 0 for a leading Marker) and the CRC over
 * everything but the CRC field (RFC 5044 §4.4); with CRC off the field is 0.
 *
 * @param out destination, wn_wire_mpa_fpdu_wire_len() octets are written
 * @param cap room at @p out
 * @param iov ULPDU pieces (e.g. header, then payload in registered memory)
 * @param iovcnt number of pieces
 * @param seq sequence number of the FPDU's first octet (4-aligned to SeqStart
 *   when Markers are on)
 * @param st framing of this direction
 * @return wire length, or -EMSGSIZE (ULPDU over 64768), -EINVAL (misaligned
 *   @p seq with Markers, NULL piece), -ENOSPC (@p cap too small).
 * Thread safety: pure, any thread.
 */
int wn_wire_mpa_fpdu_build(uint8_t *out, size_t cap, const struct iovec *iov, unsigned int iovcnt,
		      uint32_t seq, const struct wn_mpa_stream *st);

/** Scratch octets wn_wire_mpa_fpdu_gather() needs at most (Markers, length, PAD, CRC). */
#define WN_MPA_GATHER_SCRATCH                                                                      \
	(WN_MPA_ULPDU_LEN_SIZE + 3 + WN_MPA_CRC_SIZE +                                             \
	 WN_MPA_MARKER_SIZE * (2 + (WN_MPA_MULPDU_MAX + 12) / (WN_MPA_MARKER_INTERVAL - 4)))

/**
 * Zero-copy form of wn_wire_mpa_fpdu_build(): describe the FPDU as a gather list
 * whose pieces point either into @p scratch (ULPDU_Length, Markers, PAD, CRC)
 * or into the caller's @p iov (the ULPDU, e.g. registered memory that an
 * mbuf can reference as an external buffer). The CRC is computed while
 * reading the ULPDU once; nothing is copied. Concatenating the pieces gives
 * exactly the octets wn_wire_mpa_fpdu_build() would write.
 *
 * @param out gather list to fill, @p max_out entries
 * @param scratch at least WN_MPA_GATHER_SCRATCH octets (or less for small FPDUs)
 * @return number of entries used, -ENOSPC (@p max_out or @p scratch_len too
 *   small), or the argument errors of wn_wire_mpa_fpdu_build().
 * Thread safety: pure, any thread.
 */
int wn_wire_mpa_fpdu_gather(struct iovec *out, unsigned int max_out, uint8_t *scratch,
		       size_t scratch_len, const struct iovec *iov, unsigned int iovcnt,
		       uint32_t seq, const struct wn_mpa_stream *st);

/* ---------------------------------------------------------------------------------------------
 * FPDU deframer
 */

/** Header description handed to wn_mpa_rx_ops::header. */
struct wn_mpa_rx_hdr {
	uint32_t fpdu_seq;     /**< sequence number of ULPDU_Length */
	uint16_t ulpdu_len;    /**< ULPDU_Length */
	uint16_t hdr_len;      /**< octets at @p hdr (<= ulpdu_len, <= WN_MPA_RX_HDR_MAX) */
	const uint8_t *hdr;    /**< first octets of the ULPDU, Markers removed */
};

/**
 * Event callbacks of the deframer. A negative return stops
 * wn_wire_mpa_deframer_input(), which returns that value; the event counts as
 * delivered and the deframer can be fed again.
 */
struct wn_mpa_rx_ops {
	/**
	 * How many ULPDU octets to gather before header(): called with the
	 * octets gathered so far (initially min(2, ULPDU_Length)); return a
	 * larger number to gather more (it is asked again), or a number <= @p have
	 * when enough. NULL: use wn_mpa_deframer_cfg::hdr_len.
	 */
	size_t (*hdr_len)(void *arg, const uint8_t *hdr, size_t have, uint16_t ulpdu_len);
	/** The ULPDU header is complete. */
	int (*header)(void *arg, const struct wn_mpa_rx_hdr *h);
	/**
	 * Payload octets (Markers removed) at ULPDU offset @p off, pointing into
	 * the caller's input chunk (zero copy). Not yet CRC-verified.
	 */
	int (*payload)(void *arg, const uint8_t *p, size_t len, uint32_t off);
	/**
	 * End of the FPDU: @p verdict is WN_MPA_ERR_NONE, WN_MPA_ERR_CRC or
	 * WN_MPA_ERR_MARKER (Marker disagreed while the CRC was good). After an
	 * error no further event is given (RFC 5044 §8).
	 */
	int (*end)(void *arg, const struct wn_mpa_rx_hdr *h, enum wn_mpa_err verdict);
};

/** Deframer configuration. */
struct wn_mpa_deframer_cfg {
	struct wn_mpa_stream stream; /**< SeqStart, Markers, CRC of the receive direction */
	uint32_t seq;                /**< sequence number of the first octet fed (an FPDU start) */
	bool check_markers;          /**< compare FPDUPTR with the FPDU start (error 3) */
	uint16_t hdr_len;            /**< header octets to gather when ops->hdr_len is NULL */
};

/** Deframer states (internal). */
enum wn_mpa_rx_state {
	WN_MPA_RX_LEN = 0,
	WN_MPA_RX_HDR,
	WN_MPA_RX_DATA,
	WN_MPA_RX_PAD,
	WN_MPA_RX_CRC,
	WN_MPA_RX_ERROR,
};

/** Resumable FPDU deframer for one receive half connection. Treat as opaque. */
struct wn_mpa_deframer {
	struct wn_mpa_deframer_cfg cfg;
	const struct wn_mpa_rx_ops *ops;
	void *arg;
	enum wn_mpa_rx_state state;
	enum wn_mpa_err error;
	bool marker_bad;     /**< a Marker of this FPDU disagreed */
	uint32_t seq;        /**< sequence number of the next octet */
	uint32_t crc;        /**< running CRC register over the covered octets */
	const uint8_t *pend; /**< covered octets of the current input not yet in @p crc */
	size_t pend_len;
	uint32_t got;        /**< octets gathered in the current state */
	uint32_t want;       /**< header octets to gather */
	uint32_t marker_seq; /**< sequence number of the Marker being read */
	struct wn_mpa_rx_hdr h;
	uint8_t mk[WN_MPA_MARKER_SIZE];
	uint8_t len_buf[2];
	uint8_t crc_buf[WN_MPA_CRC_SIZE];
	uint8_t hdr[WN_MPA_RX_HDR_MAX];
};

/**
 * Initialise @p d. @return 0, or -EINVAL (NULL argument, hdr_len over
 * WN_MPA_RX_HDR_MAX, ops without header/payload/end).
 * Thread safety: @p d must not be in use elsewhere.
 */
int wn_wire_mpa_deframer_init(struct wn_mpa_deframer *d, const struct wn_mpa_deframer_cfg *cfg,
			 const struct wn_mpa_rx_ops *ops, void *arg);

/**
 * Feed the next @p len octets of the ordered stream (any chunking, 1 octet
 * at a time works). Markers are stripped, the CRC is checked when on, and
 * events are raised as FPDUs progress.
 *
 * @param consumed set to the octets consumed (all of them unless an error or
 *   a callback stopped it). May be NULL.
 * @return 0; -EBADMSG (CRC error, error 2), -EPROTO (Marker error 3) — the
 *   deframer then stays failed; or a callback's negative value.
 * Thread safety: the lcore owning @p d.
 */
int wn_wire_mpa_deframer_input(struct wn_mpa_deframer *d, const uint8_t *buf, size_t len,
			  size_t *consumed);

/** Largest ULPDU (ULPDU_Length is 16 bits). */
#define WN_MPA_ULPDU_MAX 65535

/**
 * Whole-ULPDU reception: with struct wn_mpa_rx_ops wn_wire_mpa_gather_ops and this as the
 * deframer's arg, each ULPDU is copied into @c buf and handed to @c done when its FPDU ends,
 * with the verdict (a ULPDU must not be used before its CRC is checked, RFC 5044 §4.4).
 */
struct wn_mpa_gather {
	uint8_t *buf;   /**< room for the largest ULPDU that can arrive (WN_MPA_ULPDU_MAX for
			 *   a peer's stream); NULL: input is refused */
	/** The FPDU ended; @p ulpdu is @c buf. Its return value is the callback's. */
	int (*done)(void *arg, const uint8_t *ulpdu, uint16_t len, enum wn_mpa_err verdict);
	void *arg;
};

/** Deframer callbacks that gather whole ULPDUs (arg: struct wn_mpa_gather). */
extern const struct wn_mpa_rx_ops wn_wire_mpa_gather_ops;

/** @return the MPA error that stopped @p d, WN_MPA_ERR_NONE while healthy. */
static inline enum wn_mpa_err
wn_mpa_deframer_error(const struct wn_mpa_deframer *d)
{
	return d->error;
}

/** @return the sequence number of the next octet @p d expects. */
static inline uint32_t
wn_mpa_deframer_seq(const struct wn_mpa_deframer *d)
{
	return d->seq;
}

/** @return true when @p d is healthy and between two FPDUs (the next octet starts one). */
static inline bool
wn_mpa_deframer_at_boundary(const struct wn_mpa_deframer *d)
{
	return d->state == WN_MPA_RX_LEN && d->got == 0 && d->pend_len == 0;
}

/**
 * Account for one whole FPDU of @p wire_len octets the caller took in place
 * (wn_wire_mpa_fpdu_view()) instead of feeding it: the deframer goes on after it. Only between
 * FPDUs (wn_mpa_deframer_at_boundary()). Thread safety: the lcore owning @p d.
 */
static inline void
wn_mpa_deframer_skip(struct wn_mpa_deframer *d, uint32_t wire_len)
{
	d->seq += wire_len;
}

/* ---------------------------------------------------------------------------------------------
 * Whole FPDUs in place
 */

/** Most ULPDU pieces wn_wire_mpa_fpdu_view() describes (Markers and input boundaries cut them). */
#define WN_MPA_VIEW_MAX 40

/** One whole FPDU found where it lies (wn_wire_mpa_fpdu_view()). */
struct wn_wire_mpa_fpdu_view {
	uint32_t fpdu_seq;       /**< sequence number of its ULPDU_Length */
	uint32_t wire_len;       /**< its octets, from its leading Marker if any to its CRC */
	uint16_t ulpdu_len;      /**< ULPDU_Length */
	enum wn_mpa_err verdict; /**< WN_MPA_ERR_NONE, WN_MPA_ERR_CRC or WN_MPA_ERR_MARKER */
	uint16_t n;              /**< ULPDU pieces in @c v (Markers removed), @c ulpdu_len octets */
	struct iovec v[WN_MPA_VIEW_MAX];
};

/**
 * Find the FPDU that starts the octets @p in (@p n_in pieces of one ordered stream, the first
 * octet at sequence number @p seq, an FPDU boundary as the deframer's) where they lie: its
 * ULPDU as pieces of the input with Markers removed, its CRC (RFC 5044 §4.4) and Markers
 * (§4.3, with @p cfg's check_markers) checked as wn_wire_mpa_deframer_input() checks them, nothing
 * copied. @p cfg's stream gives SeqStart, Markers and CRC; seq and hdr_len are ignored.
 * @return 1 (@p f describes it; the next FPDU starts @c f->wire_len octets on), 0 (it is not
 * complete in @p in: @c f->wire_len is its length once ULPDU_Length is there, else 0),
 * -E2BIG (its ULPDU needs more than WN_MPA_VIEW_MAX pieces: feed the deframer), -EINVAL
 * (NULL argument).
 * Thread safety: pure, any thread.
 */
int wn_wire_mpa_fpdu_view(const struct iovec *in, unsigned int n_in, uint32_t seq,
		     const struct wn_mpa_deframer_cfg *cfg, struct wn_wire_mpa_fpdu_view *f);

/**
 * Convenience mode: assemble whole ULPDUs into a caller buffer and hand each
 * verified ULPDU to @p deliver. Use wn_wire_mpa_collect_ops with a struct
 * wn_mpa_collector as the callback argument.
 */
struct wn_mpa_collector {
	uint8_t *buf;  /**< room for one ULPDU */
	size_t cap;    /**< size of @p buf; longer ULPDUs fail with -EMSGSIZE */
	size_t len;    /**< octets of the ULPDU being assembled */
	/** A verified ULPDU; its return value is passed through. */
	int (*deliver)(void *arg, const uint8_t *ulpdu, size_t len);
	void *arg;
};

/** Callbacks implementing the convenience mode over a struct wn_mpa_collector. */
extern const struct wn_mpa_rx_ops wn_wire_mpa_collect_ops;

/* ---------------------------------------------------------------------------------------------
 * Marker locator for out-of-order segments (RFC 5044 §4.3)
 */

/** One Marker found in a segment. */
struct wn_mpa_marker_hit {
	uint32_t marker_seq; /**< sequence number of the Marker's first octet */
	uint32_t fpdu_seq;   /**< sequence number of the ULPDU_Length it points to */
	uint16_t fpduptr;    /**< FPDUPTR as received (low bits cleared) */
};

/**
 * Find the Markers wholly inside a segment and the FPDU starts they point to:
 * ULPDU_Length at marker_seq - FPDUPTR, or right after the Marker when FPDUPTR
 * is 0 (the Marker belongs to the following FPDU).
 *
 * @param seg_seq sequence number of @p buf[0]
 * @param buf segment payload, @p len octets
 * @param seq_start SeqStart of this direction
 * @param hits room for @p max results (may be NULL when @p max is 0)
 * @return number of Markers in the segment (may exceed @p max; only @p max
 *   are stored).
 * Thread safety: pure, any thread.
 */
unsigned int wn_wire_mpa_marker_locate(uint32_t seg_seq, const uint8_t *buf, size_t len,
				  uint32_t seq_start, struct wn_mpa_marker_hit *hits,
				  unsigned int max);

/**
 * Out-of-order receive: deframe the complete FPDUs inside one TCP segment
 * that does not continue the in-order stream, so DDP can place them before
 * the gap is filled (RFC 5044 §4.3 Markers, §5.1-5.2, App. A FPDU alignment).
 *
 * The first FPDU start is taken from the first Marker in the segment whose
 * FPDU begins inside it (FPDUPTR 0: the FPDU begins with that Marker); without
 * Markers, or with none usable, only when @p aligned says the segment starts
 * on an FPDU boundary (the sender aligns FPDUs to segments). From there FPDUs
 * are walked by ULPDU_Length; each one wholly inside the segment is fed to a
 * deframer with @p cfg's stream parameters (SeqStart, Markers, CRC,
 * check_markers, hdr_len; cfg->seq is ignored) and reported through @p ops.
 * A trailing partial FPDU produces no event.
 *
 * @param first set to the sequence number of the first FPDU reported (may be NULL)
 * @param end set to the sequence number just after the last one (may be NULL)
 * @return the number of FPDUs reported (0: none found), -EBADMSG / -EPROTO
 *   (an FPDU failed its CRC / Marker check: drop the segment, RFC 5044 §8),
 *   -EINVAL, or a callback's negative value.
 * Thread safety: pure apart from the callbacks, any thread.
 */
int wn_wire_mpa_segment_fpdus(uint32_t seg_seq, const uint8_t *buf, size_t len,
			 const struct wn_mpa_deframer_cfg *cfg, bool aligned,
			 const struct wn_mpa_rx_ops *ops, void *arg, uint32_t *first, uint32_t *end);

#ifdef __cplusplus
}
#endif

#endif /* WN_WIRE_MPA_H */
