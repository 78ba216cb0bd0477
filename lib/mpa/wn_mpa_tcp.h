/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * MPA over TCP as a lower layer of DDP (wn_llp.h): lib/mpa's own binding to lib/tcp. One
 * instance per lcore over that lcore's TCP context; each stream owns one TCP connection and
 * one struct wn_mpa_conn, and nothing outside lib/mpa touches either.
 *
 * What a stream does:
 *  - connection setup: the TCP handshake, then the MPA Request/Reply exchange (RFC 5044
 *    §7.1, RFC 6581) with the instance's policy (revision, Markers, CRC, peer-to-peer, RTR
 *    types, startup timeout), the startup frames written into TCP as room allows;
 *  - Full Operation: TCP in record mode, so every segment starts on an FPDU boundary and
 *    keeps it on retransmission (RFC 5044 Appendix A); received FPDUs deframed (CRC,
 *    Markers) and each ULPDU handed up whole once its CRC is verified (RFC 5044 §4.4, §8);
 *  - transmit: each ULPDU is one FPDU (PAD, Markers, CRC32c) appended to TCP as one record.
 *    A payload of registered memory is described by wn_wire_mpa_fpdu_gather() and referenced
 *    where it lives, not copied into TCP: with ref_tx TCP copies it once into each
 *    segment that carries it and computes the CRC32c over that copy (WN_TCP_REC_COPY,
 *    WN_TCP_REC_CRC32C); with zero-copy on, a message of at least zero_copy_min octets is
 *    attached to the segments' mbufs instead. One token per message pins its regions
 *    (conf.pin) until TCP's ACK of its last FPDU and the last mbuf are done, then the
 *    stream's tx_release upcall runs once for it. Everything else (inline data, a region
 *    that cannot be pinned, ref_tx off) is framed in place in TCP's send buffer (a record
 *    that would wrap around it: into a staging buffer, then copied); the counters say why
 *    (struct wn_llp_stats copy_*);
 *  - errors: an MPA error in Full Operation is reported as an ERROR event with
 *    send_terminate (Layer LLP, EType MPA, RFC 5044 §8 code) and the transmit direction
 *    stays usable for that Terminate; setup errors reset the connection.
 *
 * Thread safety: an instance and its streams are used by one lcore (the owner of the TCP
 * context). A zero-copy token's last reference may be dropped on any thread (a PMD freeing an
 * mbuf): it is queued on the instance's ring and processed by wn_llp_poll().
 */
#ifndef WN_MPA_TCP_H
#define WN_MPA_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include "wn_llp.h"
#include "wn_tcp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most instances with zero-copy transmit in one process (one per lcore). */
#define WN_MPA_TCP_MAX_INSTANCES 64

/** Configuration of an instance. */
struct wn_mpa_tcp_conf {
	struct wn_tcp_ctx *tcp;    /**< the lcore's TCP context (required) */
	uint16_t index;            /**< instance number: names its zero-copy ring */
	/* MPA policy (RFC 5044 §7.1.1, RFC 6581) */
	uint8_t rev;               /**< 1, or 2 (RFC 6581); 0 = 2 */
	bool markers;              /**< ask the peer for Markers (our M bit) */
	bool crc;                  /**< ask for CRC (our C bit) */
	bool p2p;                  /**< initiator: ask for peer-to-peer mode */
	uint8_t rtr;               /**< RTR types offered (initiator) / accepted (responder) */
	uint32_t timeout_us;       /**< startup timeout; 0 = WN_MPA_STARTUP_TIMEOUT_US */
	/* transmit of registered memory */
	bool ref_tx;               /**< referenced by TCP, copied once into each segment
				    *   (off: staged, warpnicd's default) */
	uint32_t ref_min;          /**< ... for messages of at least this many octets (smaller
				    *   ones are copied: a copy costs less than a token then) */
	bool zero_copy;            /**< send registered memory in place (the port sends chains
				    *   and reaches client memory by virtual address) */
	uint32_t zero_copy_min;    /**< ... for messages of at least this many octets */
	/**
	 * Pin the region behind STag @p stag while TCP or an mbuf references it; @p dma: for an
	 * mbuf the port's device reads (zero-copy). @return 0, or non-zero when it cannot be
	 * pinned (a window; not mapped for the device): the FPDU is copied. Required with
	 * ref_tx or zero_copy.
	 */
	int (*pin)(void *arg, uint32_t stag, bool dma);
	void (*unpin)(void *arg, uint32_t stag);
	void *pin_arg;
	/**
	 * The port's device reads payload at IOVA = virtual address (EAL IOVA as VA, the
	 * regions DMA-mapped for it: pin() refuses the others); false: no IOVA (RTE_BAD_IOVA,
	 * for ports that copy or pass virtual addresses).
	 */
	bool iova_va;
};

/**
 * Create an instance.
 * @return its wn_llp_proto, or NULL with errno EINVAL (no TCP context; ref_tx or zero-copy
 *   without pin callbacks or index out of range) or ENOMEM. Both are turned off (with a log
 *   line) when the token pool or ring cannot be had; wn_mpa_tcp_zero_copy() tells. Any
 *   thread.
 */
struct wn_llp_proto *wn_mpa_tcp_create(const struct wn_mpa_tcp_conf *conf);

/**
 * Free an instance: every listener is closed, every stream aborted without upcalls and freed;
 * zero-copy tokens still
 * out are orphaned safely (the pool and ring outlive the instance). NULL: no-op. Its lcore,
 * or after it stopped.
 */
void wn_mpa_tcp_free(struct wn_llp_proto *p);

/** @return true when the instance sends zero-copy. */
bool wn_mpa_tcp_zero_copy(const struct wn_llp_proto *p);

/** @return streams that exist (including those closing and waiting for their tokens). */
uint32_t wn_mpa_tcp_streams(const struct wn_llp_proto *p);

#ifdef __cplusplus
}
#endif

#endif /* WN_MPA_TCP_H */
