/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * The shared-memory ABI between client processes and warpnicd: SQ, RQ, SRQ and CQ rings,
 * WQE and CQE layouts, doorbells and CQ arming.
 *
 * Plain C11 (no DPDK, no libibverbs): the verbs shim includes it in arbitrary programs.
 * Every field is fixed-width with explicit padding; sizes and offsets are pinned with
 * static_assert, so a layout change is a compile error, not a silent ABI break.
 *
 * @par Memory
 * warpnicd creates each ring in a memfd, initialises it (wn_queue_ring_init(),
 * wn_queue_qp_init()) and passes the fd to the client, which maps it MAP_SHARED and attaches
 * a private view (wn_queue_ring_attach()). A QP's memfd holds its SQ ring at offset 0 and its
 * RQ ring at wn_queue_qp_rq_offset() (no RQ when the QP uses an SRQ). A CQ or SRQ memfd holds
 * one ring at offset 0.
 *
 * @par Ring layout
 * A ring is a 256-octet header of four cache lines followed by @c depth entries of
 * @c stride octets (entry i at hdr + WN_QUEUE_HDR_SIZE + (i & mask) * stride):
 *  - line 0, config: written once by warpnicd before the fd is handed out, never again;
 *  - line 1, producer: the producer index and the doorbell word;
 *  - line 2, consumer: the consumer index and the "consumer may be idle" flag;
 *  - line 3, notify: CQ arm state (client-written) and status flags (warpnicd-written).
 * Indices are free-running uint32_t (slot = index & mask, count = prod - cons modulo 2^32);
 * depth is a power of two, so a full ring has prod - cons == depth and no slot is wasted.
 * One producer and one consumer per ring: the client produces SQ/RQ/SRQ entries and
 * consumes CQEs; warpnicd's owning lcore does the opposite.
 *
 * @par Trust
 * The other side of a ring may be a buggy or hostile process. Each side therefore keeps the
 * geometry in its private struct wn_queue_ring view (read once from line 0 at attach, or taken
 * from the creation parameters) and never re-reads line 0; a peer index that claims more than
 * @c depth entries is reported as -EPROTO by the accessors, and WQE contents (num_sge,
 * lengths, opcodes) must be validated by the consumer before use.
 *
 * @par Ordering (C11 memory model; each accessor states its rule)
 *  - Producer: write the entry with plain stores, then store-release the producer index.
 *    Consumer: load-acquire the producer index, then read entries below it.
 *  - Consumer: finish reading the entries, then store-release the consumer index.
 *    Producer: load-acquire the consumer index before overwriting a freed slot.
 *  - Doorbell (Dekker pattern): the consumer stores idle = 1, issues a seq_cst fence and
 *    re-reads the producer index before it sleeps; the producer stores the producer index,
 *    issues a seq_cst fence and reads idle. At least one of them sees the other's store, so
 *    either the consumer finds the new entry or the producer rings the doorbell.
 *  - Lcore doorbell (the same pattern, one flag per dataplane lcore for all its rings): see
 *    "Lcore doorbells" below.
 *  - CQ arm: the client stores the arm word (seq_cst exchange); warpnicd, after publishing
 *    a CQE, fences (seq_cst) and atomically exchanges an armed word back to 0; exactly one
 *    notification per arming.
 *
 * Thread safety: a struct wn_queue_ring view belongs to one thread of one side (the ring's
 * single producer or single consumer); the two sides run concurrently in different processes.
 */
#ifndef WN_QUEUE_H
#define WN_QUEUE_H

#include <assert.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ABI version in every ring header; bump on any incompatible change. */
#define WN_QUEUE_ABI_VERSION 1u
/** "WNQR" */
#define WN_QUEUE_MAGIC 0x574e5152u
/** Cache line the header is split on (x86-64 and most arm64). */
#define WN_QUEUE_CACHE_LINE 64u
/** Octets of a ring header; entries follow. */
#define WN_QUEUE_HDR_SIZE (4u * WN_QUEUE_CACHE_LINE)
/** Page size QP rings are rounded to (RQ ring starts on a page). */
#define WN_QUEUE_PAGE_SIZE 4096u
/** Largest ring depth (entries). */
#define WN_QUEUE_MAX_DEPTH (1u << 20)
/** Largest number of SGEs in one WQE. */
#define WN_QUEUE_MAX_SGE 32u
/** Largest inline payload in one send WQE. */
#define WN_QUEUE_MAX_INLINE 1024u

static_assert(ATOMIC_INT_LOCK_FREE == 2, "shared-memory indices need lock-free 32-bit atomics");

/** Kind of a ring (header field @c kind). */
enum wn_queue_kind {
	WN_QUEUE_KIND_SQ = 1,  /**< send queue: struct wn_queue_swqe entries */
	WN_QUEUE_KIND_RQ = 2,  /**< receive queue: struct wn_queue_rwqe entries */
	WN_QUEUE_KIND_SRQ = 3, /**< shared receive queue: struct wn_queue_rwqe entries */
	WN_QUEUE_KIND_CQ = 4,  /**< completion queue: struct wn_queue_cqe entries */
};

/** Ring header: four cache lines, one writer each (see the file comment). */
struct wn_queue_ring_hdr {
	/* line 0: config, written once by warpnicd before the fd is shared */
	uint32_t magic;       /**< WN_QUEUE_MAGIC */
	uint16_t version;     /**< WN_QUEUE_ABI_VERSION */
	uint16_t kind;        /**< enum wn_queue_kind */
	uint32_t depth;       /**< entries, power of two */
	uint32_t stride;      /**< octets per entry, multiple of 16 */
	uint32_t max_sge;     /**< SGEs an entry can hold (0 for CQ) */
	uint32_t max_inline;  /**< inline octets a send WQE can hold (SQ only) */
	uint64_t ring_size;   /**< octets of this ring: header + entries */
	uint8_t pad0[WN_QUEUE_CACHE_LINE - 32];

	/* line 1: producer-owned */
	_Atomic uint32_t prod;     /**< producer index (free-running) */
	_Atomic uint32_t doorbell; /**< producer index at the last doorbell ring */
	uint8_t pad1[WN_QUEUE_CACHE_LINE - 8];

	/* line 2: consumer-owned */
	_Atomic uint32_t cons;     /**< consumer index (free-running) */
	_Atomic uint32_t cons_idle; /**< 1: consumer may be idle, the producer must ring */
	_Atomic uint32_t bell;     /**< lcore doorbell of the consumer: index + 1 (0: none) */
	_Atomic uint32_t ready;    /**< SQ: the consumer's ready slot + 1 (0: none), below */
	uint8_t pad2[WN_QUEUE_CACHE_LINE - 16];

	/* line 3: notification */
	_Atomic uint32_t arm;      /**< CQ: enum wn_queue_cq_arm, client sets, warpnicd clears */
	_Atomic uint32_t arm_sn;   /**< CQ: incremented by warpnicd on each notification sent */
	_Atomic uint32_t status;   /**< WN_QUEUE_ST_* flags, warpnicd-written */
	_Atomic uint32_t srq_limit; /**< SRQ: armed limit (0: disarmed), see wn_queue_srq_limit_hit() */
	uint8_t pad3[WN_QUEUE_CACHE_LINE - 16];
};
static_assert(sizeof(struct wn_queue_ring_hdr) == WN_QUEUE_HDR_SIZE, "ring header size");
static_assert(offsetof(struct wn_queue_ring_hdr, prod) == 1 * WN_QUEUE_CACHE_LINE, "prod line");
static_assert(offsetof(struct wn_queue_ring_hdr, cons) == 2 * WN_QUEUE_CACHE_LINE, "cons line");
static_assert(offsetof(struct wn_queue_ring_hdr, arm) == 3 * WN_QUEUE_CACHE_LINE, "arm line");
static_assert(sizeof(_Atomic uint32_t) == 4, "atomic index size");

/** Status flags (header @c status). */
#define WN_QUEUE_ST_ERROR    (1u << 0) /**< QP/CQ in error: consumer flushes, producer stops */
#define WN_QUEUE_ST_OVERFLOW (1u << 1) /**< CQ overrun: a CQE was lost (IBV_EVENT_CQ_ERR) */

/** CQ arm word values (ibv_req_notify_cq). */
enum wn_queue_cq_arm {
	WN_QUEUE_CQ_DISARMED = 0,
	WN_QUEUE_CQ_ARM_NEXT = 1,      /**< notify on the next CQE */
	WN_QUEUE_CQ_ARM_SOLICITED = 2, /**< notify on the next solicited or error CQE */
};

/** Scatter/gather element, same layout as struct ibv_sge. */
struct wn_queue_sge {
	uint64_t addr;   /**< client virtual address */
	uint32_t length; /**< octets */
	uint32_t lkey;   /**< local STag of the region holding [addr, addr + length) */
};
static_assert(sizeof(struct wn_queue_sge) == 16, "sge size");

/** Send WQE opcodes: ibv_wr_opcode values, plus warpnic's fast-register. */
enum wn_queue_wr_opcode {
	WN_QUEUE_WR_RDMA_WRITE = 0,          /**< IBV_WR_RDMA_WRITE */
	WN_QUEUE_WR_RDMA_WRITE_WITH_IMM = 1, /**< Write + RFC 7306 Immediate Data */
	WN_QUEUE_WR_SEND = 2,                /**< IBV_WR_SEND */
	WN_QUEUE_WR_SEND_WITH_IMM = 3,       /**< RFC 7306 Immediate Data + Send (lib/rnic) */
	WN_QUEUE_WR_RDMA_READ = 4,           /**< IBV_WR_RDMA_READ */
	WN_QUEUE_WR_ATOMIC_CMP_AND_SWP = 5,  /**< IBV_WR_ATOMIC_CMP_AND_SWP (RFC 7306 CmpSwap) */
	WN_QUEUE_WR_ATOMIC_FETCH_AND_ADD = 6, /**< IBV_WR_ATOMIC_FETCH_AND_ADD (RFC 7306) */
	WN_QUEUE_WR_LOCAL_INV = 7,           /**< IBV_WR_LOCAL_INV */
	WN_QUEUE_WR_BIND_MW = 8,             /**< IBV_WR_BIND_MW */
	WN_QUEUE_WR_SEND_WITH_INV = 9,       /**< IBV_WR_SEND_WITH_INV */
	WN_QUEUE_WR_FAST_REG = 32,           /**< fast-register an MR (RFC 5042 §4.2 "FMR") */
};

/** Send WQE flags: ibv_send_flags values. */
#define WN_QUEUE_SEND_FENCE     (1u << 0) /**< IBV_SEND_FENCE: wait for prior Reads/atomics */
#define WN_QUEUE_SEND_SIGNALED  (1u << 1) /**< IBV_SEND_SIGNALED: CQE on success */
#define WN_QUEUE_SEND_SOLICITED (1u << 2) /**< IBV_SEND_SOLICITED: Send with SE */
#define WN_QUEUE_SEND_INLINE    (1u << 3) /**< IBV_SEND_INLINE: payload follows the header */

/** Access flags: ibv_access_flags values (MR, MW bind, fast-register, QP). */
#define WN_QUEUE_ACCESS_LOCAL_WRITE   (1u << 0)
#define WN_QUEUE_ACCESS_REMOTE_WRITE  (1u << 1)
#define WN_QUEUE_ACCESS_REMOTE_READ   (1u << 2)
#define WN_QUEUE_ACCESS_REMOTE_ATOMIC (1u << 3)
#define WN_QUEUE_ACCESS_MW_BIND       (1u << 4)
#define WN_QUEUE_ACCESS_ZERO_BASED    (1u << 5)

/**
 * Send WQE: a 64-octet header, then either @c num_sge struct wn_queue_sge or (INLINE)
 * @c inline_len payload octets. Stride = WN_QUEUE_SWQE_HDR + max(16 * max_sge, max_inline),
 * rounded up to 64.
 */
struct wn_queue_swqe {
	uint64_t wr_id;      /**< returned in the CQE */
	uint8_t opcode;      /**< enum wn_queue_wr_opcode */
	uint8_t flags;       /**< WN_QUEUE_SEND_* */
	uint8_t num_sge;     /**< SGEs following (0 with INLINE) */
	uint8_t rsvd0;
	uint32_t inline_len; /**< octets following with INLINE */
	union {
		uint32_t imm_data;       /**< WITH_IMM: network byte order, as ibv_send_wr */
		uint32_t invalidate_rkey; /**< SEND_WITH_INV: the peer's STag to invalidate */
	} ex;
	uint32_t rsvd1;
	union {
		struct {
			uint64_t remote_addr; /**< data sink (Write) or source (Read) TO */
			uint32_t rkey;        /**< remote STag */
			uint32_t rsvd;
		} rdma;
		struct {
			uint64_t remote_addr; /**< 8-octet aligned TO (RFC 7306 §5.2.1) */
			uint64_t compare_add; /**< CmpSwap: compare; FetchAdd: add */
			uint64_t swap;        /**< CmpSwap: swap */
			uint32_t rkey;
			uint32_t rsvd;
		} atomic;
		struct {
			uint32_t invalidate_stag; /**< LOCAL_INV: the local STag */
			uint32_t rsvd[7];
		} local_inv;
		struct {
			uint64_t iova;     /**< first TO (VA-based); ignored if ZERO_BASED */
			uint64_t length;   /**< octets */
			uint64_t offset;   /**< octet offset into the MR's backing memory */
			uint32_t stag;     /**< allocated MR index with the new 8-bit key */
			uint32_t access;   /**< WN_QUEUE_ACCESS_* */
		} fast_reg;
		struct {
			uint64_t addr;     /**< first client VA of the window inside the MR */
			uint64_t length;   /**< octets; 0 unbinds */
			uint32_t mw_stag;  /**< window STag with the new 8-bit key */
			uint32_t mr_lkey;  /**< MR the window is bound to */
			uint32_t access;   /**< WN_QUEUE_ACCESS_REMOTE_* */
			uint32_t rsvd;
		} bind_mw;
		/** A UD QP's Send: the address handle's contents, copied in (no AH object). */
		struct {
			uint8_t dgid[16];     /**< the destination's GID: IPv4-mapped IPv4, or IPv6 */
			uint32_t remote_qpn;  /**< < 2^24 */
			uint32_t remote_qkey; /**< high bit set: the QP's own Q_Key (IBTA 10.2.5) */
			uint8_t sgid_index;   /**< our GID (address) to send from */
			uint8_t hop_limit;
			uint8_t traffic_class;
			uint8_t rsvd;
			uint32_t flow_label;
		} ud;
		uint8_t raw[40];
	} u;
	/* struct wn_queue_sge sge[] or uint8_t inline_data[] at offset 64 */
};
#define WN_QUEUE_SWQE_HDR 64u
static_assert(sizeof(struct wn_queue_swqe) == WN_QUEUE_SWQE_HDR, "send WQE header size");
static_assert(offsetof(struct wn_queue_swqe, u) == 24, "send WQE union offset");

/** Receive WQE (RQ and SRQ): a 16-octet header, then @c num_sge SGEs. */
struct wn_queue_rwqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t rsvd;
	/* struct wn_queue_sge sge[] at offset 16 */
};
#define WN_QUEUE_RWQE_HDR 16u
static_assert(sizeof(struct wn_queue_rwqe) == WN_QUEUE_RWQE_HDR, "recv WQE header size");

/** CQE status: enum ibv_wc_status values. */
enum wn_queue_wc_status {
	WN_QUEUE_WC_SUCCESS = 0,
	WN_QUEUE_WC_LOC_LEN_ERR = 1,
	WN_QUEUE_WC_LOC_QP_OP_ERR = 2,
	WN_QUEUE_WC_LOC_PROT_ERR = 4,
	WN_QUEUE_WC_WR_FLUSH_ERR = 5,
	WN_QUEUE_WC_MW_BIND_ERR = 6,
	WN_QUEUE_WC_BAD_RESP_ERR = 7,
	WN_QUEUE_WC_LOC_ACCESS_ERR = 8,
	WN_QUEUE_WC_REM_INV_REQ_ERR = 9,
	WN_QUEUE_WC_REM_ACCESS_ERR = 10,
	WN_QUEUE_WC_REM_OP_ERR = 11,
	WN_QUEUE_WC_RETRY_EXC_ERR = 12,
	WN_QUEUE_WC_RNR_RETRY_EXC_ERR = 13,
	WN_QUEUE_WC_FATAL_ERR = 19,
	WN_QUEUE_WC_GENERAL_ERR = 21,
};

/** CQE opcode: enum ibv_wc_opcode values. */
enum wn_queue_wc_opcode {
	WN_QUEUE_WC_SEND = 0,
	WN_QUEUE_WC_RDMA_WRITE = 1,
	WN_QUEUE_WC_RDMA_READ = 2,
	WN_QUEUE_WC_COMP_SWAP = 3,
	WN_QUEUE_WC_FETCH_ADD = 4,
	WN_QUEUE_WC_BIND_MW = 5,
	WN_QUEUE_WC_LOCAL_INV = 6,
	WN_QUEUE_WC_FAST_REG = 32, /**< no ibv value (7 is IBV_WC_TSO) */
	WN_QUEUE_WC_RECV = 128,
	WN_QUEUE_WC_RECV_RDMA_WITH_IMM = 129,
};

/**
 * The completion opcode of a send WQE's opcode, as verbs pairs IBV_WR_* with IBV_WC_*: every
 * kind of Send completes as SEND, RDMA Write with Immediate as RDMA_WRITE.
 * @param wr_opcode
 *   enum wn_queue_wr_opcode value (unknown values give SEND).
 * @return the enum wn_queue_wc_opcode value. Thread-safe (pure).
 */
static inline uint8_t
wn_queue_wc_opcode(uint8_t wr_opcode)
{
	switch (wr_opcode) {
	case WN_QUEUE_WR_RDMA_WRITE:
	case WN_QUEUE_WR_RDMA_WRITE_WITH_IMM:
		return WN_QUEUE_WC_RDMA_WRITE;
	case WN_QUEUE_WR_RDMA_READ:
		return WN_QUEUE_WC_RDMA_READ;
	case WN_QUEUE_WR_ATOMIC_CMP_AND_SWP:
		return WN_QUEUE_WC_COMP_SWAP;
	case WN_QUEUE_WR_ATOMIC_FETCH_AND_ADD:
		return WN_QUEUE_WC_FETCH_ADD;
	case WN_QUEUE_WR_LOCAL_INV:
		return WN_QUEUE_WC_LOCAL_INV;
	case WN_QUEUE_WR_BIND_MW:
		return WN_QUEUE_WC_BIND_MW;
	case WN_QUEUE_WR_FAST_REG:
		return WN_QUEUE_WC_FAST_REG;
	default:
		return WN_QUEUE_WC_SEND;
	}
}

/** CQE flags: ibv_wc_flags values where one exists. */
#define WN_QUEUE_WC_F_GRH       (1u << 0) /**< IBV_WC_GRH: a UD receive, 40-octet GRH first */
#define WN_QUEUE_WC_F_WITH_IMM  (1u << 1) /**< IBV_WC_WITH_IMM: imm_data valid */
#define WN_QUEUE_WC_F_WITH_INV  (1u << 3) /**< IBV_WC_WITH_INV: invalidated_rkey valid */
#define WN_QUEUE_WC_F_SOLICITED (1u << 8) /**< the message carried SE (for arm SOLICITED) */

/**
 * Completion queue entry. @c vendor_err carries the Terminate that caused an error
 * completion: layer << 12 | etype << 8 | code (RFC 5040 §4.8), 0 otherwise.
 */
struct wn_queue_cqe {
	uint64_t wr_id;
	uint8_t status;            /**< enum wn_queue_wc_status */
	uint8_t opcode;            /**< enum wn_queue_wc_opcode */
	uint16_t flags;            /**< WN_QUEUE_WC_F_* */
	uint32_t byte_len;         /**< octets received (RECV) or transferred */
	uint32_t imm_data;         /**< network byte order, with WITH_IMM */
	union {
		uint32_t invalidated_rkey; /**< with WITH_INV */
		uint32_t src_qp;           /**< with GRH: the sender's QP (UD receives) */
	};
	uint32_t qp_num;
	uint32_t vendor_err;
};
static_assert(sizeof(struct wn_queue_cqe) == 32, "CQE size");

/** Private view of a ring, one per side (never in shared memory). */
struct wn_queue_ring {
	struct wn_queue_ring_hdr *hdr;
	uint8_t *entries;
	uint32_t depth;
	uint32_t mask;
	uint32_t stride;
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t kind;
	uint32_t head;   /**< this side's index: prod (producer) or cons (consumer) */
	uint32_t peer;   /**< last value read of the other side's index */
};

/* ---------------------------------------------------------------------------------------- */
/* Sizing and initialisation                                                                  */

/** @return @p v rounded up to @p a (a power of two). Internal helper; any thread. */
static inline uint32_t
wn_queue__round_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/**
 * Entry stride of a ring.
 * @param kind enum wn_queue_kind. @param max_sge SGEs per entry (SQ/RQ/SRQ).
 * @param max_inline inline octets (SQ only).
 * @return octets per entry, or 0 for invalid arguments. Any thread.
 */
static inline uint32_t
wn_queue_entry_stride(enum wn_queue_kind kind, uint32_t max_sge, uint32_t max_inline)
{
	uint32_t body;

	if (max_sge > WN_QUEUE_MAX_SGE || max_inline > WN_QUEUE_MAX_INLINE)
		return 0;
	switch (kind) {
	case WN_QUEUE_KIND_SQ:
		body = max_sge * (uint32_t)sizeof(struct wn_queue_sge);
		if (max_inline > body)
			body = max_inline;
		return wn_queue__round_up(WN_QUEUE_SWQE_HDR + body, 64);
	case WN_QUEUE_KIND_RQ:
	case WN_QUEUE_KIND_SRQ:
		return wn_queue__round_up(WN_QUEUE_RWQE_HDR +
					  max_sge * (uint32_t)sizeof(struct wn_queue_sge), 16);
	case WN_QUEUE_KIND_CQ:
		return (uint32_t)sizeof(struct wn_queue_cqe);
	}
	return 0;
}

/**
 * Octets a ring of @p depth entries needs (header + entries).
 * @return the size, or 0 if @p depth is not a power of two in [1, WN_QUEUE_MAX_DEPTH] or
 *   the other arguments are invalid. Any thread.
 */
static inline uint64_t
wn_queue_ring_size(enum wn_queue_kind kind, uint32_t depth, uint32_t max_sge,
		   uint32_t max_inline)
{
	uint32_t stride = wn_queue_entry_stride(kind, max_sge, max_inline);

	if (stride == 0 || depth == 0 || depth > WN_QUEUE_MAX_DEPTH || (depth & (depth - 1)) != 0)
		return 0;
	return WN_QUEUE_HDR_SIZE + (uint64_t)depth * stride;
}

/**
 * Initialise a ring in (zeroed or not) memory of at least wn_queue_ring_size() octets,
 * 64-octet aligned. Called by warpnicd before the memory is shared.
 * @return 0, or -EINVAL for invalid geometry or a misaligned @p mem. Control thread.
 */
static inline int
wn_queue_ring_init(void *mem, enum wn_queue_kind kind, uint32_t depth, uint32_t max_sge,
		   uint32_t max_inline)
{
	struct wn_queue_ring_hdr *h = (struct wn_queue_ring_hdr *)mem;
	uint64_t size = wn_queue_ring_size(kind, depth, max_sge, max_inline);
	uint8_t *p = (uint8_t *)mem;
	uint32_t i;

	if (mem == NULL || size == 0 || ((uintptr_t)mem & (WN_QUEUE_CACHE_LINE - 1)) != 0)
		return -EINVAL;
	for (i = 0; i < WN_QUEUE_HDR_SIZE; i++)
		p[i] = 0;
	h->magic = WN_QUEUE_MAGIC;
	h->version = WN_QUEUE_ABI_VERSION;
	h->kind = (uint16_t)kind;
	h->depth = depth;
	h->stride = wn_queue_entry_stride(kind, max_sge, max_inline);
	h->max_sge = kind == WN_QUEUE_KIND_CQ ? 0 : max_sge;
	h->max_inline = kind == WN_QUEUE_KIND_SQ ? max_inline : 0;
	h->ring_size = size;
	atomic_init(&h->prod, 0);
	atomic_init(&h->doorbell, 0);
	atomic_init(&h->cons, 0);
	atomic_init(&h->cons_idle, 0);
	atomic_init(&h->bell, 0);
	atomic_init(&h->arm, WN_QUEUE_CQ_DISARMED);
	atomic_init(&h->arm_sn, 0);
	atomic_init(&h->status, 0);
	atomic_init(&h->srq_limit, 0);
	atomic_thread_fence(memory_order_release);
	return 0;
}

/**
 * Offset of a QP's RQ ring inside its memfd: the SQ ring rounded up to a page.
 * @return the offset, or 0 for an invalid SQ geometry. Any thread.
 */
static inline uint64_t
wn_queue_qp_rq_offset(uint32_t sq_depth, uint32_t max_send_sge, uint32_t max_inline)
{
	uint64_t sq = wn_queue_ring_size(WN_QUEUE_KIND_SQ, sq_depth, max_send_sge, max_inline);

	return (sq + WN_QUEUE_PAGE_SIZE - 1) & ~(uint64_t)(WN_QUEUE_PAGE_SIZE - 1);
}

/**
 * Octets of a QP's memfd (SQ ring, then RQ ring on a page boundary), page-rounded.
 * @param rq_depth 0 when the QP uses an SRQ (no RQ ring).
 * @return the size, or 0 for invalid geometry. Any thread.
 */
static inline uint64_t
wn_queue_qp_size(uint32_t sq_depth, uint32_t max_send_sge, uint32_t max_inline,
		 uint32_t rq_depth, uint32_t max_recv_sge)
{
	uint64_t off = wn_queue_qp_rq_offset(sq_depth, max_send_sge, max_inline);
	uint64_t rq = 0;

	if (off == 0)
		return 0;
	if (rq_depth != 0) {
		rq = wn_queue_ring_size(WN_QUEUE_KIND_RQ, rq_depth, max_recv_sge, 0);
		if (rq == 0)
			return 0;
	}
	return off + ((rq + WN_QUEUE_PAGE_SIZE - 1) & ~(uint64_t)(WN_QUEUE_PAGE_SIZE - 1));
}

/**
 * Initialise both rings of a QP memfd of wn_queue_qp_size() octets.
 * @return 0 or -EINVAL. Control thread.
 */
static inline int
wn_queue_qp_init(void *mem, uint32_t sq_depth, uint32_t max_send_sge, uint32_t max_inline,
		 uint32_t rq_depth, uint32_t max_recv_sge)
{
	uint64_t off = wn_queue_qp_rq_offset(sq_depth, max_send_sge, max_inline);
	int rc;

	if (off == 0)
		return -EINVAL;
	rc = wn_queue_ring_init(mem, WN_QUEUE_KIND_SQ, sq_depth, max_send_sge, max_inline);
	if (rc != 0 || rq_depth == 0)
		return rc;
	return wn_queue_ring_init((uint8_t *)mem + off, WN_QUEUE_KIND_RQ, rq_depth, max_recv_sge,
				  0);
}

/**
 * Attach a private view to a ring: validate line 0 against @p kind and @p len, copy the
 * geometry, and start from the current indices.
 * @param len octets mapped at @p mem (from the fd's size).
 * @return 0, -EINVAL (NULL), -EPROTO (bad magic/version/kind/geometry or larger than @p len).
 *   Either side, once, before use.
 */
static inline int
wn_queue_ring_attach(struct wn_queue_ring *r, void *mem, uint64_t len, enum wn_queue_kind kind)
{
	struct wn_queue_ring_hdr *h = (struct wn_queue_ring_hdr *)mem;
	uint64_t size;

	if (r == NULL || mem == NULL)
		return -EINVAL;
	*r = (struct wn_queue_ring){ .hdr = NULL };
	if (len < WN_QUEUE_HDR_SIZE || h->magic != WN_QUEUE_MAGIC ||
	    h->version != WN_QUEUE_ABI_VERSION || h->kind != (uint16_t)kind)
		return -EPROTO;
	size = wn_queue_ring_size(kind, h->depth, h->max_sge, h->max_inline);
	if (size == 0 || size > len || h->stride != wn_queue_entry_stride(kind, h->max_sge,
									  h->max_inline))
		return -EPROTO;
	r->hdr = h;
	r->entries = (uint8_t *)mem + WN_QUEUE_HDR_SIZE;
	r->depth = h->depth;
	r->mask = h->depth - 1;
	r->stride = h->stride;
	r->max_sge = h->max_sge;
	r->max_inline = h->max_inline;
	r->kind = (uint32_t)kind;
	r->head = 0;
	r->peer = 0;
	return 0;
}

/** Attach as the producer: resume at the published producer index. Same returns. */
static inline int
wn_queue_prod_attach(struct wn_queue_ring *r, void *mem, uint64_t len, enum wn_queue_kind kind)
{
	int rc = wn_queue_ring_attach(r, mem, len, kind);

	if (rc == 0) {
		r->head = atomic_load_explicit(&r->hdr->prod, memory_order_relaxed);
		r->peer = atomic_load_explicit(&r->hdr->cons, memory_order_acquire);
	}
	return rc;
}

/** Attach as the consumer: resume at the published consumer index. Same returns. */
static inline int
wn_queue_cons_attach(struct wn_queue_ring *r, void *mem, uint64_t len, enum wn_queue_kind kind)
{
	int rc = wn_queue_ring_attach(r, mem, len, kind);

	if (rc == 0) {
		r->head = atomic_load_explicit(&r->hdr->cons, memory_order_relaxed);
		r->peer = atomic_load_explicit(&r->hdr->prod, memory_order_acquire);
	}
	return rc;
}

/** @return the entry at free-running index @p idx. The view's owner thread. */
static inline void *
wn_queue_entry(const struct wn_queue_ring *r, uint32_t idx)
{
	return r->entries + (size_t)(idx & r->mask) * r->stride;
}

/* ---------------------------------------------------------------------------------------- */
/* Producer side                                                                              */

/**
 * Free slots for the producer.
 * Ordering: load-acquire of @c cons, so the consumer's reads of the freed slots happen
 * before the producer overwrites them.
 * @return free entries (0..depth), or -EPROTO if the consumer index is impossible.
 *   The ring's producer thread.
 */
static inline int64_t
wn_queue_prod_space(struct wn_queue_ring *r)
{
	uint32_t cons = atomic_load_explicit(&r->hdr->cons, memory_order_acquire);
	uint32_t used = r->head - cons;

	if (used > r->depth)
		return -EPROTO;
	r->peer = cons;
	return (int64_t)(r->depth - used);
}

/** Slot @p i past the unpublished producer index (caller checked space). Producer thread. */
static inline void *
wn_queue_prod_slot(const struct wn_queue_ring *r, uint32_t i)
{
	return wn_queue_entry(r, r->head + i);
}

/**
 * Publish @p n filled slots.
 * Ordering: store-release of @c prod after the entry stores, then a seq_cst fence and a
 * load of @c cons_idle (the producer half of the doorbell Dekker pattern).
 * @return true if the consumer may be idle: call wn_queue_prod_ring() (and wake it by
 *   whatever out-of-band means the ring's owner set up). Producer thread.
 */
static inline bool
wn_queue_prod_commit(struct wn_queue_ring *r, uint32_t n)
{
	r->head += n;
	atomic_store_explicit(&r->hdr->prod, r->head, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit(&r->hdr->cons_idle, memory_order_relaxed) != 0;
}

/**
 * Ring the doorbell: record the published producer index in the doorbell word.
 * Ordering: store-release; a consumer that load-acquires @c doorbell sees the entries.
 * Producer thread.
 */
static inline void
wn_queue_prod_ring(struct wn_queue_ring *r)
{
	atomic_store_explicit(&r->hdr->doorbell, r->head, memory_order_release);
}

/* ---------------------------------------------------------------------------------------- */
/* Consumer side                                                                              */

/**
 * Entries ready for the consumer.
 * Ordering: load-acquire of @c prod, so the producer's entry stores are visible.
 * @return ready entries (0..depth), or -EPROTO if the producer index is impossible
 *   (claims more than depth entries). The ring's consumer thread.
 */
static inline int64_t
wn_queue_cons_avail(struct wn_queue_ring *r)
{
	uint32_t prod = atomic_load_explicit(&r->hdr->prod, memory_order_acquire);
	uint32_t ready = prod - r->head;

	if (ready > r->depth)
		return -EPROTO;
	r->peer = prod;
	return (int64_t)ready;
}

/** Slot @p i past the consumer index (caller checked avail). Consumer thread. */
static inline void *
wn_queue_cons_slot(const struct wn_queue_ring *r, uint32_t i)
{
	return wn_queue_entry(r, r->head + i);
}

/**
 * Release @p n consumed slots to the producer.
 * Ordering: store-release of @c cons after the consumer's last read of those entries.
 * Consumer thread.
 */
static inline void
wn_queue_cons_release(struct wn_queue_ring *r, uint32_t n)
{
	r->head += n;
	atomic_store_explicit(&r->hdr->cons, r->head, memory_order_release);
}

/**
 * Declare the consumer idle (about to stop polling and wait for a doorbell).
 * Ordering: store @c cons_idle = 1, seq_cst fence, then re-read @c prod (the consumer half
 * of the Dekker pattern). If entries arrived meanwhile the flag is cleared again.
 * @return true if the consumer may sleep; false if entries are ready (keep polling).
 *   Consumer thread.
 */
static inline bool
wn_queue_cons_idle_enter(struct wn_queue_ring *r)
{
	atomic_store_explicit(&r->hdr->cons_idle, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	if (wn_queue_cons_avail(r) != 0) {
		atomic_store_explicit(&r->hdr->cons_idle, 0, memory_order_relaxed);
		return false;
	}
	return true;
}

/** Leave idle mode (polling again); the producer stops ringing. Consumer thread. */
static inline void
wn_queue_cons_idle_exit(struct wn_queue_ring *r)
{
	atomic_store_explicit(&r->hdr->cons_idle, 0, memory_order_relaxed);
}

/* ---------------------------------------------------------------------------------------- */
/* Lcore doorbells                                                                            */

/**
 * @par Lcore doorbells
 * A dataplane lcore consumes the SQs of many QPs and may sleep when none has work. Each
 * lcore has a bell: a cache line in the instance's bell page (one WN_QUEUE_BELL_PAGE_SIZE
 * memfd that warpnicd writes and clients map read-only) and an eventfd. A ring's @c bell word
 * (consumer line) names the bell of the lcore consuming it, index + 1, or 0 when no lcore
 * sleeps on it (the producer never rings). Ordering (the Dekker pattern of the per-ring
 * doorbell, with the flag in the bell):
 *  - lcore, before it sleeps: store @c sleeping = 1, seq_cst fence (wn_queue_bell_sleep()),
 *    then poll every ring it consumes once more; work found: store @c sleeping = 0
 *    (wn_queue_bell_wake()) and go on; none: wait on its eventfd (and other wake-up sources),
 *    then store @c sleeping = 0 before polling again.
 *  - producer: store-release @c prod and seq_cst fence (wn_queue_prod_commit()), then load
 *    @c bell and that bell's @c sleeping (wn_queue_prod_bell()); set: write the lcore's
 *    eventfd. While the lcore is awake the producer makes no system call.
 *  - an lcore that takes over a ring stores @c bell (wn_queue_cons_bell_set()) before the
 *    fence of its next sleep, so a producer either sees the new bell or its entry is seen by
 *    the lcore's last poll before sleeping.
 *  - other producers of an lcore's work (threads of warpnicd, other lcores) publish, then
 *    call wn_queue_bell_check() (seq_cst fence, load @c sleeping).
 * A wrong @c bell (a client scribbling over its own ring) only makes that client ring the
 * wrong lcore or none; the bell page is not writable by clients.
 */

/** Bells in a bell page (most dataplane lcores an instance can have). */
#define WN_QUEUE_BELLS 64u
/** Octets of a bell page: one cache line per bell. */
#define WN_QUEUE_BELL_PAGE_SIZE (WN_QUEUE_BELLS * WN_QUEUE_CACHE_LINE)

/** One lcore's bell (a cache line of the bell page, written by that lcore only). */
struct wn_queue_bell {
	_Atomic uint32_t sleeping; /**< 1: the lcore sleeps or is about to: ring its eventfd */
	uint32_t rsvd;
	_Atomic uint64_t sleeps;   /**< informative: times the lcore went to sleep */
	uint8_t pad[WN_QUEUE_CACHE_LINE - 16];
};
static_assert(sizeof(struct wn_queue_bell) == WN_QUEUE_CACHE_LINE, "bell size");
static_assert(WN_QUEUE_BELL_PAGE_SIZE == 4096u, "bell page is one page");

/**
 * Announce that the lcore owning @p b is about to sleep.
 * Ordering: store @c sleeping = 1, then a seq_cst fence; the caller then polls its rings
 * once more (and calls wn_queue_bell_wake() if it found work). The bell's lcore.
 */
static inline void
wn_queue_bell_sleep(struct wn_queue_bell *b)
{
	atomic_store_explicit(&b->sleeping, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
}

/** The lcore owning @p b polls again: producers stop ringing. The bell's lcore. */
static inline void
wn_queue_bell_wake(struct wn_queue_bell *b)
{
	atomic_store_explicit(&b->sleeping, 0, memory_order_relaxed);
}

/**
 * After publishing work for the lcore owning @p b by other means than a lib/queue ring
 * (an rte_ring, a shared list): must the lcore be woken?
 * Ordering: seq_cst fence, then load @c sleeping (pairs with wn_queue_bell_sleep()).
 * @return true: write the lcore's eventfd. Any thread.
 */
static inline bool
wn_queue_bell_check(const struct wn_queue_bell *b)
{
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit(&b->sleeping, memory_order_relaxed) != 0;
}

/**
 * Name the bell of the lcore that consumes ring @p r from now on.
 * @param bell bell index + 1, or 0: no lcore sleeps on this ring (producers never ring).
 * Ordering: relaxed store; the lcore's next wn_queue_bell_sleep() orders it (file comment).
 * The ring's consumer (warpnicd).
 */
static inline void
wn_queue_cons_bell_set(struct wn_queue_ring *r, uint32_t bell)
{
	atomic_store_explicit(&r->hdr->bell, bell, memory_order_relaxed);
}

/**
 * After wn_queue_prod_commit() (whose seq_cst fence this relies on): the bell to ring.
 * @param page the instance's bell page (read-only mapping), or NULL (no bells: never rings).
 * @param n_bells bells in @p page.
 * @return the bell index whose eventfd the producer must write, or -1 (the consumer is
 *   awake, or the ring names no bell). Producer thread.
 */
static inline int
wn_queue_prod_bell(const struct wn_queue_ring *r, const struct wn_queue_bell *page,
		   uint32_t n_bells)
{
	uint32_t bell = atomic_load_explicit(&r->hdr->bell, memory_order_relaxed);

	if (page == NULL || bell == 0 || bell > n_bells || bell > WN_QUEUE_BELLS)
		return -1;
	if (atomic_load_explicit(&page[bell - 1].sleeping, memory_order_relaxed) == 0)
		return -1;
	return (int)(bell - 1);
}

/* ---------------------------------------------------------------------------------------- */
/* Ready maps                                                                                 */

/**
 * @par Ready maps
 * An lcore serving tens of thousands of SQs cannot look at every one each iteration. It
 * parks an SQ it found empty (wn_queue_cons_idle_enter(): @c cons_idle = 1, fence, re-read
 * @c prod) and polls only the SQs it has not parked. A producer whose commit finds
 * @c cons_idle set (wn_queue_prod_commit() returned true) marks the SQ ready: one bit, the
 * ring's @c ready slot, in the ready map of the lcore its @c bell names
 * (wn_queue_ready_mark()). The lcore takes the marked slots each iteration
 * (wn_queue_ready_take()) and polls their SQs again. Two levels: a @c summary bit per
 * word of @c bits, so taking costs a few words when little is ready.
 *  - producer: after wn_queue_prod_commit()'s fence, fetch_or the slot's bit (seq_cst); if
 *    the word was 0, fetch_or its summary bit (seq_cst); a seq_cst fence, then the lcore
 *    bell check (wn_queue_prod_bell()): an lcore about to sleep sees the mark or is woken.
 *  - lcore: exchange a summary word with 0, then each word it names with 0 (acquire), then
 *    read the SQs of the bits it got. A bit set after the exchange is seen next time; its
 *    producer's entries are visible to the lcore's poll that follows the exchange.
 * The maps follow the bell page in the same memfd, one per bell, which clients map
 * read-write (WN_QUEUE_READY_MAPS_OFFSET). A client scribbling over them only makes an
 * lcore poll some SQs for nothing (or its own ones late: the lcore also sweeps parked SQs
 * slowly).
 */

/** Slots in one lcore's ready map: SQs it can park. */
#define WN_QUEUE_READY_SLOTS 65536u

/** One lcore's ready map. */
struct wn_queue_ready_map {
	_Atomic uint64_t summary[WN_QUEUE_READY_SLOTS / 64 / 64]; /**< bit w: bits[w] non-zero */
	_Atomic uint64_t bits[WN_QUEUE_READY_SLOTS / 64];          /**< bit s % 64: slot s ready */
};
static_assert(sizeof(struct wn_queue_ready_map) % WN_QUEUE_CACHE_LINE == 0, "ready map size");

/** Offset of the ready maps in the bell memfd. */
#define WN_QUEUE_READY_MAPS_OFFSET WN_QUEUE_BELL_PAGE_SIZE
/** Octets of the bell memfd with its ready maps (one per bell). */
#define WN_QUEUE_BELLS_SIZE \
	(WN_QUEUE_BELL_PAGE_SIZE + WN_QUEUE_BELLS * sizeof(struct wn_queue_ready_map))

/**
 * Give SQ @p r ready slot @p slot (index + 1; 0: none, the lcore polls it without parking).
 * Ordering: relaxed store; the lcore parks the ring (wn_queue_cons_idle_enter()'s fence)
 * only after it. The ring's consumer (warpnicd).
 */
static inline void
wn_queue_cons_ready_set(struct wn_queue_ring *r, uint32_t slot)
{
	atomic_store_explicit(&r->hdr->ready, slot, memory_order_relaxed);
}

/**
 * After a wn_queue_prod_commit() that returned true: mark the SQ ready in the map of the
 * lcore its ring names. @p maps: the instance's ready maps (NULL: none, nothing to do);
 * @p n_maps: how many. Producer thread.
 */
static inline void
wn_queue_ready_mark(const struct wn_queue_ring *r, struct wn_queue_ready_map *maps,
		    uint32_t n_maps)
{
	uint32_t bell = atomic_load_explicit(&r->hdr->bell, memory_order_relaxed);
	uint32_t slot = atomic_load_explicit(&r->hdr->ready, memory_order_relaxed);
	struct wn_queue_ready_map *m;
	uint32_t w;

	if (maps == NULL || bell == 0 || bell > n_maps || bell > WN_QUEUE_BELLS || slot == 0 ||
	    slot > WN_QUEUE_READY_SLOTS)
		return;
	m = &maps[bell - 1];
	w = (slot - 1) / 64;
	if (atomic_fetch_or(&m->bits[w], 1ull << ((slot - 1) % 64)) == 0)
		(void)atomic_fetch_or(&m->summary[w / 64], 1ull << (w % 64));
	/* before wn_queue_prod_bell()'s load of @c sleeping (the lcore's Dekker half) */
	atomic_thread_fence(memory_order_seq_cst);
}

/**
 * Take the slots marked ready in @p m (each reported once), calling @p fn(@p arg, slot) for
 * each (slot: 0 .. WN_QUEUE_READY_SLOTS - 1). @return how many. The map's lcore.
 */
static inline unsigned int
wn_queue_ready_take(struct wn_queue_ready_map *m, void (*fn)(void *arg, uint32_t slot),
		    void *arg)
{
	unsigned int n = 0;
	uint32_t s;

	for (s = 0; s < WN_QUEUE_READY_SLOTS / 64 / 64; s++) {
		uint64_t sum;

		if (atomic_load_explicit(&m->summary[s], memory_order_relaxed) == 0)
			continue;
		sum = atomic_exchange_explicit(&m->summary[s], 0, memory_order_acquire);
		while (sum != 0) {
			uint32_t w = s * 64 + (uint32_t)__builtin_ctzll(sum);
			uint64_t b = atomic_exchange_explicit(&m->bits[w], 0, memory_order_acquire);

			sum &= sum - 1;
			while (b != 0) {
				fn(arg, w * 64 + (uint32_t)__builtin_ctzll(b));
				b &= b - 1;
				n++;
			}
		}
	}
	return n;
}

/* ---------------------------------------------------------------------------------------- */
/* CQ notification                                                                            */

/**
 * Arm a CQ (ibv_req_notify_cq). A later CQE (solicited or error only if @p solicited_only)
 * triggers one notification. Re-arming NEXT over SOLICITED widens it.
 * Ordering: seq_cst exchange, pairing with the fence in wn_queue_cq_notify_check().
 * CQ consumer (client) thread.
 */
static inline void
wn_queue_cq_arm(struct wn_queue_ring *r, bool solicited_only)
{
	uint32_t want = solicited_only ? WN_QUEUE_CQ_ARM_SOLICITED : WN_QUEUE_CQ_ARM_NEXT;
	uint32_t cur = atomic_load_explicit(&r->hdr->arm, memory_order_relaxed);

	while (cur != WN_QUEUE_CQ_ARM_NEXT &&
	       !atomic_compare_exchange_weak_explicit(&r->hdr->arm, &cur, want,
						      memory_order_seq_cst, memory_order_relaxed))
		;
}

/**
 * The armed word taken back to DISARMED when these CQEs fire it (exactly one notification
 * per arming). The caller has fenced (seq_cst) since its last producer-index store, as
 * wn_queue_prod_commit() does. @return true if the caller must notify. CQ producer thread.
 */
static inline bool
wn_queue_cq_arm_take(struct wn_queue_ring *r, bool solicited)
{
	uint32_t cur = atomic_load_explicit(&r->hdr->arm, memory_order_relaxed);

	for (;;) {
		if (cur == WN_QUEUE_CQ_DISARMED || (cur == WN_QUEUE_CQ_ARM_SOLICITED && !solicited))
			return false;
		if (atomic_compare_exchange_weak_explicit(&r->hdr->arm, &cur,
							  WN_QUEUE_CQ_DISARMED,
							  memory_order_acq_rel,
							  memory_order_relaxed))
			break;
	}
	atomic_fetch_add_explicit(&r->hdr->arm_sn, 1, memory_order_relaxed);
	return true;
}

/**
 * After publishing CQEs with wn_queue_prod_commit(): decide whether to notify.
 * @param solicited the published CQEs include a solicited or error completion.
 * Ordering: seq_cst fence, then an atomic exchange of an armed word back to DISARMED, so
 * one arming yields exactly one notification.
 * @return true if the caller must notify (write the CQ's eventfd). CQ producer thread.
 */
static inline bool
wn_queue_cq_notify_check(struct wn_queue_ring *r, bool solicited)
{
	atomic_thread_fence(memory_order_seq_cst);
	return wn_queue_cq_arm_take(r, solicited);
}

/**
 * Arm the SRQ limit event (ibv_modify_srq with IBV_SRQ_LIMIT): when fewer than @p limit
 * WQEs remain, the dataplane reports IBV_EVENT_SRQ_LIMIT_REACHED once and disarms.
 * 0 disarms. Ordering: release store. Control thread.
 */
static inline void
wn_queue_srq_limit_arm(struct wn_queue_ring *r, uint32_t limit)
{
	atomic_store_explicit(&r->hdr->srq_limit, limit, memory_order_release);
}

/**
 * After taking SRQ WQEs: @p remaining are left. If the armed limit is above that, disarm it
 * (one CAS, so one event per arming) and return true: the caller raises the event.
 * Dataplane (SRQ consumer).
 */
static inline bool
wn_queue_srq_limit_hit(struct wn_queue_ring *r, uint32_t remaining)
{
	uint32_t limit = atomic_load_explicit(&r->hdr->srq_limit, memory_order_acquire);

	return limit != 0 && remaining < limit &&
	       atomic_compare_exchange_strong_explicit(&r->hdr->srq_limit, &limit, 0,
						       memory_order_acq_rel, memory_order_relaxed);
}

/** Set status flags (WN_QUEUE_ST_*); release so earlier CQEs are visible. warpnicd only. */
static inline void
wn_queue_status_set(struct wn_queue_ring *r, uint32_t flags)
{
	atomic_fetch_or_explicit(&r->hdr->status, flags, memory_order_release);
}

/**
 * Produce one CQE @p e into @p cq, its producer's lock held by the caller when the CQ is
 * shared: copied into the next slot, published, the consumer's doorbell rung if it waits,
 * and the arm word checked (@p solicited: a solicited or error completion is among them).
 * A full CQ takes nothing and says so in its status (WN_QUEUE_ST_OVERFLOW).
 * @return 1: the caller must notify (the CQ's eventfd), 0: published, -ENOSPC: full.
 * warpnicd only.
 */
static inline int
wn_queue_cq_push(struct wn_queue_ring *cq, const struct wn_queue_cqe *e, bool solicited)
{
	if (wn_queue_prod_space(cq) <= 0) {
		wn_queue_status_set(cq, WN_QUEUE_ST_OVERFLOW);
		return -ENOSPC;
	}
	memcpy(wn_queue_prod_slot(cq, 0), e, sizeof(*e));
	/* the commit's fence also orders the index store before the arm word's load */
	if (wn_queue_prod_commit(cq, 1))
		wn_queue_prod_ring(cq);
	solicited = solicited || e->status != WN_QUEUE_WC_SUCCESS;
	return wn_queue_cq_arm_take(cq, solicited) ? 1 : 0;
}

/** Clear status flags (a QP moved to RESET leaves its Error behind). warpnicd only. */
static inline void
wn_queue_status_clear(struct wn_queue_ring *r, uint32_t flags)
{
	atomic_fetch_and_explicit(&r->hdr->status, ~flags, memory_order_release);
}

/** @return the status flags (acquire). Either side. */
static inline uint32_t
wn_queue_status(const struct wn_queue_ring *r)
{
	return atomic_load_explicit(&r->hdr->status, memory_order_acquire);
}

/* ---------------------------------------------------------------------------------------- */
/* Validation of client-written entries (out of line, lib/queue)                              */

/**
 * Check a send WQE copied out of a client-written SQ against the ring's geometry: known
 * flags, num_sge <= max_sge, inline_len <= max_inline, per-opcode rules (atomics: 8-octet
 * aligned target and one 8-octet result SGE; memory operations carry no data).
 * The caller must first copy the WQE to private memory (the client may change it).
 * @return 0, -EINVAL (malformed), -EOPNOTSUPP (an opcode with no iWARP form: not one of
 *   enum wn_queue_wr_opcode). Any thread.
 */
int wn_queue_swqe_validate(const struct wn_queue_ring *r, const struct wn_queue_swqe *w);

/**
 * The same for the SQ of a UD QP: Send and Send with Immediate only (-EOPNOTSUPP for the
 * rest), the flags and sizes as above, a remote QP number below 2^24.
 * @return 0, -EINVAL or -EOPNOTSUPP. Any thread.
 */
int wn_queue_swqe_validate_ud(const struct wn_queue_ring *r, const struct wn_queue_swqe *w);

/**
 * Check a receive WQE (RQ or SRQ) copied out of a client-written ring.
 * @return 0 or -EINVAL (num_sge > max_sge). Any thread.
 */
int wn_queue_rwqe_validate(const struct wn_queue_ring *r, const struct wn_queue_rwqe *w);

#ifdef __cplusplus
}
#endif

#endif /* WN_QUEUE_H */
