/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The DDP/SCTP adaptation layer's wire formats (RFC 5043 §5, RFC 6581 §7; RFC 6580 §3.5): the
 * Adaptation Layer Indication for DDP, the two Payload Protocol Identifiers, and the payloads
 * of the two kinds of DATA chunk it sends: a DDP Segment Chunk (DDP-SSN, then the DDP
 * segment) and a DDP Stream Session Control message (DDP-SSN, Function Code, Private Data,
 * which for the RFC 6581 enhanced codes starts with the 4 octets of IRD/ORD/RTR data).
 *
 * The published RFC 5043 is implemented, not the 2002 draft (draft-stewart-rddp-sctp-01):
 * PPIDs 16 and 17 (the draft's 1 and 2), a 16-bit DDP-SSN in every DATA chunk and 16-bit
 * Function Codes (the draft had one 32-bit "DDP Stream Reset").
 *
 * Thread safety: pure functions without state; any thread.
 */
#ifndef WN_WIRE_SCTP_H
#define WN_WIRE_SCTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wn_wire_mpa.h"

#ifdef __cplusplus
extern "C" {
#endif

/** IP protocol number of SCTP (RFC 4960 §1.7). */
#define WN_SCTP_IPPROTO 132
/** Adaptation Layer Indication parameter type in INIT/INIT-ACK (RFC 5061 §4.2.7). */
#define WN_SCTP_PARAM_ADAPTATION 0xC006u
/** Adaptation Indication of DDP (RFC 5043 §5.1). */
#define WN_SCTP_ADAPTATION_DDP 0x00000001u
/** Payload Protocol Identifier of a DDP Segment Chunk (RFC 5043 §5.2). */
#define WN_SCTP_PPID_DDP 16u
/** Payload Protocol Identifier of DDP Stream Session Control (RFC 5043 §5.2). */
#define WN_SCTP_PPID_CTL 17u

/** Octets of the DDP-SSN that starts every DATA chunk payload (RFC 5043 §5.2.1). */
#define WN_SCTP_SSN_LEN 2
/** Octets of DDP-SSN + Function Code before a session control message's Private Data. */
#define WN_SCTP_CTL_HDR_LEN 4
/** Most Private Data in a session control message, enhanced data included (§5.2.3). */
#define WN_SCTP_PD_MAX 512
/** Largest session control message. */
#define WN_SCTP_CTL_MAX (WN_SCTP_CTL_HDR_LEN + WN_SCTP_PD_MAX)
/** Smallest maximum DDP segment an adaptation layer may announce (RFC 5043 §9). */
#define WN_SCTP_MULPDU_MIN 516
/**
 * DDP-SSNs a receiver can order without ambiguity (RFC 5043 §10: fewer than 32768 DATA
 * chunks of one stream in flight).
 */
#define WN_SCTP_SSN_WINDOW 32768u

/** DDP Stream Session Control Function Codes (RFC 5043 §5.2.3, RFC 6581 §7). */
enum wn_sctp_func {
	WN_SCTP_INITIATE = 0x0001,
	WN_SCTP_ACCEPT = 0x0002,
	WN_SCTP_REJECT = 0x0003,
	WN_SCTP_TERMINATE = 0x0004,
	WN_SCTP_ENH_INITIATE = 0x0005, /**< RFC 6581: Private Data starts with IRD/ORD data */
	WN_SCTP_ENH_ACCEPT = 0x0006,   /**< RFC 6581: Private Data starts with IRD/ORD data */
	WN_SCTP_ENH_REJECT = 0x0007,   /**< RFC 6581: as sent here, with our IRD/ORD/RTR data */
};

/** A decoded (or to-be-encoded) DDP Stream Session Control message. */
struct wn_sctp_ctl {
	uint16_t ssn;      /**< DDP-SSN */
	uint16_t func;     /**< enum wn_sctp_func */
	/**
	 * The RFC 6581 §9 data at the start of the Private Data (enhanced codes only); when
	 * encoding, the function code decides whether it is written.
	 */
	bool p2p;          /**< A */
	uint8_t rtr;       /**< B/C/D as enum wn_mpa_rtr bits (0 when A=0) */
	uint16_t ird, ord; /**< 14-bit IRD and ORD (0x3FFF each in a plain message) */
	uint16_t pd_len;   /**< ULP Private Data octets, after the enhanced data */
	const uint8_t *pd; /**< ULP Private Data (decoding: points into the input) */
};

/** Outcome of wn_wire_sctp_ctl_decode(). */
enum wn_sctp_ctl_status {
	WN_SCTP_CTL_OK = 0,
	WN_SCTP_CTL_SHORT,        /**< fewer than 4 octets */
	WN_SCTP_CTL_BAD_FUNC,     /**< a Function Code not defined by RFC 5043 / RFC 6581 */
	WN_SCTP_CTL_PD_TOO_LONG,  /**< more than 512 octets of Private Data */
	WN_SCTP_CTL_ENH_SHORT,    /**< an enhanced code with fewer than 4 octets of data */
	WN_SCTP_CTL_TERM_PD,      /**< a Terminate with Private Data (§5.2.3: MUST NOT) */
	WN_SCTP_CTL_STATUS_COUNT, /**< number of values */
};

/** @return a constant description of @p st. */
const char *wn_wire_sctp_ctl_status_str(enum wn_sctp_ctl_status st);

/** @return a constant name of Function Code @p func ("initiate", ...), or "unknown". */
const char *wn_wire_sctp_func_str(uint16_t func);

/** @return true for the RFC 6581 enhanced codes (5, 6, 7). */
static inline bool
wn_sctp_func_enhanced(uint16_t func)
{
	return func >= WN_SCTP_ENH_INITIATE && func <= WN_SCTP_ENH_REJECT;
}

/**
 * Decode the payload of a DATA chunk with PPID 17 (@p len octets at @p buf): DDP-SSN,
 * Function Code, Private Data (at most 512 octets; none in a Terminate; an enhanced code's
 * starting with 4 octets of IRD/ORD/RTR data). @p c->pd points into @p buf.
 * @return WN_SCTP_CTL_OK, or the rule the message breaks.
 */
enum wn_sctp_ctl_status wn_wire_sctp_ctl_decode(const uint8_t *buf, size_t len,
					   struct wn_sctp_ctl *c);

/**
 * Encode @p c (the enhanced data written for codes 5-7) into @p out.
 * @return octets written, -EINVAL (unknown code, Private Data over 512 octets in total, PD in
 *   a Terminate, IRD/ORD above 0x3FFF, pd NULL with pd_len) or -ENOSPC (@p cap too small).
 */
int wn_wire_sctp_ctl_encode(const struct wn_sctp_ctl *c, uint8_t *out, size_t cap);

/**
 * The RFC 6581 view of @p c for wn_wire_mpa_negotiate_responder()/_initiator(): enhanced for the
 * codes 5-7, with its IRD/ORD/RTR; 0x3FFF each otherwise.
 */
void wn_wire_sctp_ctl_to_mpa(const struct wn_sctp_ctl *c, struct wn_mpa_frame *f);

/** @return the DDP-SSN at the start of a DATA chunk payload of at least 2 octets. */
static inline uint16_t
wn_sctp_ssn_get(const uint8_t *payload)
{
	return (uint16_t)(payload[0] << 8 | payload[1]);
}

/** Write DDP-SSN @p ssn at the start of a DATA chunk payload. */
static inline void
wn_sctp_ssn_put(uint8_t *payload, uint16_t ssn)
{
	payload[0] = (uint8_t)(ssn >> 8);
	payload[1] = (uint8_t)ssn;
}

/**
 * @return the largest DDP segment (MULPDU) over SCTP for an IP path MTU of @p mtu with an IP
 *   header of @p ip_hdr octets: no IP and no SCTP fragmentation (RFC 5043 §9), room left for
 *   a SACK chunk to be bundled, and never below 516.
 */
uint32_t wn_wire_sctp_mulpdu(uint32_t mtu, uint32_t ip_hdr);

#ifdef __cplusplus
}
#endif

#endif /* WN_WIRE_SCTP_H */
