/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * Protection domains, memory regions, memory windows and STags (RFC 5040 §2, RFC 5042 §2.2,
 * §5; RFC 5041 §7.1), and the lookup-and-check the dataplane runs for every placement.
 *
 * @par STags
 * An STag is a 24-bit index into the region table and an 8-bit key chosen by the consumer
 * (RFC 5040 §2.1 "STag"; the key is the low octet, as in verbs' ibv_inc_rkey()). Index 0 is
 * never allocated. An STag is valid only while the entry at its index is valid and carries
 * the same key, so a stale STag of a re-registered or invalidated region is rejected as
 * "Invalid STag".
 *
 * @par Addressing
 * A region covers the Tagged Offsets [base, base + length), base = iova for VA-based regions
 * and 0 for zero-based ones (WN_MEM_ACCESS_ZERO_BASED). TO t maps to host byte
 * host + (t - base). Every check first rejects TO + length wrapping 2^64 (RFC 5041 §7.1
 * "TO wrap"), then bounds.
 *
 * @par Association (RFC 5042 §5)
 * MRs, fast-register MRs and type 1 windows are associated with a PD: valid on every stream
 * (QP) of that PD. Type 2 windows are associated with the one QP they were bound through.
 * Using an STag from another PD or QP is "STag not associated with this stream".
 *
 * @par Concurrency: who writes, who reads, and why lookups take no lock
 * The control thread creates and destroys entries (register, allocate, deregister); the
 * dataplane lcore that owns a QP changes entries on that QP's behalf (fast-register, local
 * and remote invalidate, bind). Lookups run on every dataplane lcore.
 *  - Each entry is guarded by a DPDK seqlock (rte_seqlock_t): writers serialise on its
 *    spinlock and bump the sequence; a lookup copies the entry between
 *    rte_seqlock_read_begin() and rte_seqlock_read_retry() and retries on a concurrent
 *    write, so it never takes a lock and never sees a half-written region.
 *  - Host memory must outlive any lookup that returned a pointer into it. Deregistration
 *    first makes the entry invalid (no new lookup succeeds), then waits for an RCU grace
 *    period on the table's rte_rcu_qsbr (every dataplane lcore reports
 *    rte_rcu_qsbr_quiescent() between bursts, never in the middle of a placement), and only
 *    then frees the index and returns, after which the control thread may unmap. Without a
 *    QSBR variable (NULL: single-threaded tools and tests) there is no wait.
 *  - Invalidation (local or remote) does not unmap anything, so it needs no grace period.
 *
 * Thread safety is stated per function: "control thread" functions must be serialised by
 * the caller (one control thread); "dataplane" functions may run on any lcore concurrently.
 */
#ifndef WN_MEM_H
#define WN_MEM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rte_rcu_qsbr;
struct wn_mem_table;

/** Access rights: ibv_access_flags values (identical to WN_QUEUE_ACCESS_*). */
#define WN_MEM_ACCESS_LOCAL_WRITE   (1u << 0)
#define WN_MEM_ACCESS_REMOTE_WRITE  (1u << 1)
#define WN_MEM_ACCESS_REMOTE_READ   (1u << 2)
#define WN_MEM_ACCESS_REMOTE_ATOMIC (1u << 3)
#define WN_MEM_ACCESS_MW_BIND       (1u << 4)
#define WN_MEM_ACCESS_ZERO_BASED    (1u << 5)
/** Access flags a caller may pass. */
#define WN_MEM_ACCESS_MASK          0x3fu
/**
 * Requested access of a local SGE read (the source of a Send or Write): every MR allows it,
 * no window does (windows are for remote access only).
 */
#define WN_MEM_ACCESS_LOCAL_READ    (1u << 8)

/** Largest table: STag index is 24 bits. */
#define WN_MEM_MAX_ENTRIES (1u << 24)
/** Protection domains a table holds (numbers 1..WN_MEM_MAX_PDS). */
#define WN_MEM_MAX_PDS 4095u

/** @return the 24-bit index of @p stag. */
static inline uint32_t
wn_mem_stag_index(uint32_t stag)
{
	return stag >> 8;
}

/** @return the 8-bit key of @p stag. */
static inline uint8_t
wn_mem_stag_key(uint32_t stag)
{
	return (uint8_t)stag;
}

/** @return the STag of (@p index, @p key). */
static inline uint32_t
wn_mem_stag(uint32_t index, uint8_t key)
{
	return index << 8 | key;
}

/** Kinds of table entries. */
enum wn_mem_type {
	WN_MEM_T_FREE = 0,
	WN_MEM_T_MR,      /**< registered MR: valid from registration to deregistration */
	WN_MEM_T_FRMR,    /**< fast-register MR: valid between fast-register and invalidate */
	WN_MEM_T_MW1,     /**< type 1 window: PD-associated, not invalidatable */
	WN_MEM_T_MW2,     /**< type 2 window: QP-associated, invalidatable */
};

/** Outcome of a check; 0 is success. Mapped to Terminates and CQE statuses below. */
enum wn_mem_verdict {
	WN_MEM_OK = 0,
	WN_MEM_E_INVALID_STAG,   /**< no such index, wrong key, or not valid */
	WN_MEM_E_NOT_ASSOC,      /**< other PD, or type 2 window of another QP (RFC 5042 §5) */
	WN_MEM_E_ACCESS,         /**< rights do not include the requested access */
	WN_MEM_E_TO_WRAP,        /**< TO + length wraps 2^64 */
	WN_MEM_E_BOUNDS,         /**< [TO, TO + length) not inside [base, base + length) */
	WN_MEM_E_CANT_INVALIDATE, /**< the STag may not be invalidated (RFC 5040 §5.3) */
};

/** Which protocol layer reports a failed check. */
enum wn_mem_layer {
	/**
	 * DDP tagged placement (Write, Read Response sinks): RFC 5041 §7.2 Layer 1 EType 1;
	 * an access-rights violation, for which DDP has no code, is reported as RDMAP Remote
	 * Protection "Access rights violation" (RFC 5040 §7.2 Fig. 9).
	 */
	WN_MEM_LAYER_DDP = 1,
	/** RDMAP (Read Request source, Atomic target, Send with Invalidate): Layer 0 EType 1. */
	WN_MEM_LAYER_RDMAP = 0,
};

/** One Terminate cause (RFC 5040 §4.8 Terminate Control). */
struct wn_mem_term {
	uint8_t layer; /**< 0 RDMAP, 1 DDP */
	uint8_t etype;
	uint8_t code;
};

/**
 * Terminate cause of a verdict as reported by @p layer.
 * RDMAP (RFC 5040 Fig. 9, EType 1 Remote Protection): Invalid STag 0x00, Base or bounds
 * 0x01, Access rights 0x02, STag not associated 0x03, TO wrap 0x04, cannot invalidate 0x09.
 * DDP (RFC 5041 §7.2, EType 1 Tagged Buffer): Invalid STag 0x00, Base or bounds 0x01,
 * STag not associated 0x02, TO wrap 0x03; access rights as RDMAP 0/1/0x02.
 * @return the cause; {0, 0, 0} (RDMAP local catastrophic) for WN_MEM_OK. Any thread.
 */
struct wn_mem_term wn_mem_term_of(enum wn_mem_verdict v, enum wn_mem_layer layer);

/**
 * CQE status for a failed local (lkey) check: IBV_WC_LOC_PROT_ERR (4) for every verdict,
 * IBV_WC_SUCCESS (0) for WN_MEM_OK. Any thread.
 */
uint8_t wn_mem_local_wc_status(enum wn_mem_verdict v);

/** @return a constant name of @p v. Any thread. */
const char *wn_mem_verdict_str(enum wn_mem_verdict v);

/**
 * Create a region table.
 * @param capacity entries (index space), 2..WN_MEM_MAX_ENTRIES; index 0 is reserved.
 * @param qs QSBR variable the dataplane lcores report to, or NULL (no grace periods).
 * @return the table, or NULL with errno EINVAL or ENOMEM. Control thread.
 */
struct wn_mem_table *wn_mem_table_create(uint32_t capacity, struct rte_rcu_qsbr *qs);

/** Free a table (no grace period: the dataplane must be stopped). NULL: no-op. Control. */
void wn_mem_table_free(struct wn_mem_table *t);

/**
 * Allocate a protection domain.
 * @return the PD number (> 0), or -ENOSPC. Control thread.
 */
int wn_mem_pd_alloc(struct wn_mem_table *t);

/**
 * Free a protection domain.
 * @return 0, -ENOENT (not allocated), -EBUSY (regions or windows still use it). Control.
 */
int wn_mem_pd_free(struct wn_mem_table *t, uint32_t pd);

/**
 * Register a memory region (valid at once).
 * @param host host address of the first byte (client memory mapped by the control thread).
 * @param iova TO of the first byte for VA-based regions; ignored with ZERO_BASED.
 * @param key 8-bit key of the new STag.
 * @param[out] stag the STag (lkey = rkey).
 * @return 0, -EINVAL (NULL, zero length, unknown access bits, remote write/atomic without
 *   local write, base + length wrapping), -ENOENT (PD), -ENOSPC (table full). Control.
 */
int wn_mem_mr_reg(struct wn_mem_table *t, uint32_t pd, void *host, uint64_t length,
		  uint64_t iova, uint32_t access, uint8_t key, uint32_t *stag);

/**
 * wn_mem_mr_reg() of a region that stays invalid (no lookup succeeds) until wn_mem_mr_swap()
 * gives its contents to a valid MR: the new registration of an ibv_rereg_mr.
 * @return as wn_mem_mr_reg(). Control thread.
 */
int wn_mem_mr_reserve(struct wn_mem_table *t, uint32_t pd, void *host, uint64_t length,
		      uint64_t iova, uint32_t access, uint8_t key, uint32_t *stag);

/**
 * Allocate a fast-register MR over @p max_len octets of backing memory at @p host; it stays
 * invalid until wn_mem_fast_reg() (RFC 5042 §4.2 "fast-register").
 * @return 0, -EINVAL, -ENOENT (PD), -ENOSPC. Control thread.
 */
int wn_mem_frmr_alloc(struct wn_mem_table *t, uint32_t pd, void *host, uint64_t max_len,
		      uint8_t key, uint32_t *stag);

/**
 * Allocate a memory window (invalid until bound).
 * @param type 1 or 2.
 * @return 0, -EINVAL, -ENOENT (PD), -ENOSPC. Control thread.
 */
int wn_mem_mw_alloc(struct wn_mem_table *t, uint32_t pd, int type, uint8_t key,
		    uint32_t *stag);

/**
 * Destroy an MR, fast-register MR or window: invalidate it, wait for a grace period (see the
 * file comment), free the index. On return no lcore uses the host memory any more.
 * @return 0, -ENOENT (no such STag), -EBUSY (an MR with windows still bound). Control thread.
 */
int wn_mem_destroy(struct wn_mem_table *t, uint32_t stag);

/**
 * Swap what two MRs describe (ibv_rereg_mr keeping the keys): valid MR @p a's STag reaches
 * @p b's PD, rights, range and memory and @p b's STag @p a's, with @p b's validity (a
 * wn_mem_mr_reserve() region: invalid); each index keeps its key and windows. Both entries
 * change under their write locks at once, so a lookup sees one region or the other, never a
 * mix. No grace period here: a lookup of @p a that began before may still hold @p a's old
 * memory, and zero-copy pins taken through @p a before may reference it. The caller destroys
 * @p b next (wn_mem_destroy()'s grace period covers those lookups of @p a too) and keeps its
 * memory mapped until neither index is pinned.
 * @return 0, -ENOENT (no such STag), -EINVAL (not two MRs, @p a invalid, the same index),
 *   -EBUSY (windows bound to either). Nothing changes on failure. Control thread.
 */
int wn_mem_mr_swap(struct wn_mem_table *t, uint32_t a, uint32_t b);

/**
 * Pin the memory of @p stag's index for zero-copy transmit (a reference an mbuf or TCP's
 * retransmission queue still holds after the lookup). lib/mem itself unmaps nothing: the
 * owner of the mapping keeps it until wn_mem_pinned() is 0 after wn_mem_destroy() (warpnicd
 * delays the dataplane's DONE for a deregistered MR). Counted per index, so a pin taken on
 * an index that is reused later holds up the new region's unmapping too (safe, rare). Call
 * between a successful lookup and the next quiescent state, so that the count is visible
 * before wn_mem_destroy()'s grace period ends.
 * @return 0, -ENOENT (bad index), -EINVAL (not a valid MR or fast-register MR: a window's
 *   memory belongs to its MR). Any lcore.
 */
int wn_mem_pin(struct wn_mem_table *t, uint32_t stag);

/** Drop a pin taken by wn_mem_pin(). Any thread. */
void wn_mem_unpin(struct wn_mem_table *t, uint32_t stag);

/** @return the pins on @p stag's index. Any thread. */
uint32_t wn_mem_pinned(const struct wn_mem_table *t, uint32_t stag);

/**
 * The hot-path lookup: resolve [@p to, @p to + @p len) of @p stag for @p access on a QP of
 * @p pd (number @p qp).
 * Checks, in order: STag valid (index, key, state) → associated with @p pd / @p qp (RFC 5042
 * §5) → rights include @p access → TO + len does not wrap → inside the region's bounds.
 * Local checks (@p access WN_MEM_ACCESS_LOCAL_READ or LOCAL_WRITE) accept MRs only.
 * RFC 5041 §5.2: callers skip this for zero-length tagged segments.
 * @param[out] host on success, host address of TO @p to.
 * @return WN_MEM_OK or the first violation; no memory is touched. Dataplane, any lcore.
 */
enum wn_mem_verdict wn_mem_check(const struct wn_mem_table *t, uint32_t stag, uint64_t to,
				 uint64_t len, uint32_t access, uint32_t pd, uint32_t qp,
				 uint8_t **host);

/**
 * A region found good by wn_mem_check_cached() for one STag, access, PD and QP: the next
 * check of the same STag only compares the region's version (it changes with every write to
 * the entry: deregistration, invalidation, a bind) and the bounds. One per QP and direction,
 * used by the QP's lcore; zero-initialised it holds nothing.
 */
struct wn_mem_cached {
	uint32_t stag, access, pd, qp;
	uint32_t sn;            /**< the entry's version when it was checked */
	const void *e;          /**< the entry (NULL: nothing cached) */
	uint64_t base, len;
	uint8_t *host;
};

/**
 * wn_mem_check() for a STag checked before into @p c: the same verdict, computed from @p c
 * while its entry is unchanged, else checked again (and @p c refilled when it passes).
 * Dataplane, the lcore owning @p c.
 */
enum wn_mem_verdict wn_mem_check_cached(const struct wn_mem_table *t, struct wn_mem_cached *c,
					uint32_t stag, uint64_t to, uint64_t len, uint32_t access,
					uint32_t pd, uint32_t qp, uint8_t **host);

/**
 * wn_mem_check() with the Terminate cause of a failure as seen by @p layer.
 * @return the host address, or NULL with @p term filled. Dataplane, any lcore.
 */
uint8_t *wn_mem_resolve(const struct wn_mem_table *t, uint32_t stag, uint64_t to, uint64_t len,
			uint32_t access, uint32_t pd, uint32_t qp, enum wn_mem_layer layer,
			struct wn_mem_term *term);

/**
 * Fast-register (FAST_REG WQE): make an allocated fast-register MR valid with key
 * @p new_stag's key over [offset, offset + length) of its backing, at @p iova (ignored with
 * ZERO_BASED), with @p access.
 * @return WN_MEM_OK; WN_MEM_E_INVALID_STAG (not an FRMR, or still valid: RFC 5042 §4.2
 *   requires an invalid STag), WN_MEM_E_NOT_ASSOC (other PD), WN_MEM_E_BOUNDS (outside the
 *   backing), WN_MEM_E_ACCESS (bad access bits). Dataplane, the QP's lcore.
 */
enum wn_mem_verdict wn_mem_fast_reg(struct wn_mem_table *t, uint32_t new_stag, uint32_t pd,
				    uint64_t iova, uint64_t length, uint64_t offset,
				    uint32_t access);

/**
 * Bind (BIND_MW WQE) window @p mw_stag's index with @p mw_stag's key to
 * [@p addr, @p addr + @p length) of MR @p mr_lkey, on QP @p qp of @p pd.
 * Rules: window and MR in @p pd; MR valid with MW_BIND access; range inside the MR (TO
 * space of the MR); remote write or atomic needs LOCAL_WRITE on the MR; a type 2 window must
 * be invalid (unbound) before it is bound again; length 0 unbinds a type 1 window.
 * @return WN_MEM_OK or the violation (WN_MEM_E_ACCESS covers the rights rules). Dataplane,
 *   the QP's lcore.
 */
enum wn_mem_verdict wn_mem_mw_bind(struct wn_mem_table *t, uint32_t mw_stag, uint32_t mr_lkey,
				   uint32_t pd, uint32_t qp, uint64_t addr, uint64_t length,
				   uint32_t access);

/**
 * Invalidate an STag: local invalidate (LOCAL_INV WQE, @p remote false) or the STag of an
 * incoming Send with Invalidate (@p remote true, RFC 5040 §5.3). Only fast-register MRs and
 * type 2 windows can be invalidated; a type 2 window only through its own QP.
 * @return WN_MEM_OK, WN_MEM_E_INVALID_STAG, WN_MEM_E_NOT_ASSOC,
 *   WN_MEM_E_CANT_INVALIDATE. Dataplane, the QP's lcore.
 */
enum wn_mem_verdict wn_mem_invalidate(struct wn_mem_table *t, uint32_t stag, uint32_t pd,
				      uint32_t qp, bool remote);

/** Snapshot of an entry for tests and telemetry. */
struct wn_mem_info {
	enum wn_mem_type type;
	bool valid;
	uint8_t key;
	uint32_t pd;
	uint32_t qp;
	uint32_t access;
	uint64_t base;
	uint64_t length;
	uint8_t *host;
	uint32_t bound; /**< MR: windows bound to it */
};

/**
 * Read the entry at @p stag's index (the key is not checked).
 * @return 0 or -ENOENT (index out of range or free). Any thread.
 */
int wn_mem_info(const struct wn_mem_table *t, uint32_t stag, struct wn_mem_info *info);

#ifdef __cplusplus
}
#endif

#endif /* WN_MEM_H */
