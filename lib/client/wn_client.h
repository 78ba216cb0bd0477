/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * lib/client: the native client API of warpnic, over the control protocol (wn_ctl.h) and
 * the shared rings. The verbs and rdmacm shims are thin ABI adapters over it.
 *
 * A struct wn_client is one connection to a warpnicd instance (WARPNIC_CTL=PATH, default
 * WN_CTL_DEFAULT_PATH) and one device context. Control calls are synchronous request /
 * response; they are serialized internally, so any thread may call them concurrently.
 * Objects returned by the constructors are owned by the caller until destroyed; all of them
 * are reclaimed by warpnicd when the connection closes (wn_client_close() or process exit).
 *
 * Memory registration hands warpnicd the objects that hold the registered pages, and
 * warpnicd maps them itself: what it places there, the program and everyone sharing the
 * object see at once; the program's mapping is not changed. A file mapped MAP_SHARED (of
 * any filesystem), a memfd, POSIX or SysV shared memory, MAP_SHARED|MAP_ANONYMOUS memory and
 * hugetlbfs (2 MiB and 1 GiB pages: a DPDK heap, MAP_HUGETLB) go as they are, nothing copied.
 * Private memory (malloc, the stack, .data/.bss, anonymous or MAP_PRIVATE mappings) is in no
 * object warpnicd could map: a run of it is copied once into a sealed memfd (hugetlbfs for
 * hugepages) mapped over it at the same address with the same protections, while writes to
 * it wait (userfaultfd write protection, or mprotect and a SIGSEGV handler: mr_wp.c), so no
 * write is lost; the next MR over those pages reuses it, and when the last one goes the pages
 * become private memory again the same way. Memory that cannot be read, kernel pages and
 * holes fail with EFAULT; so does read-only memory when the access needs writable memory
 * (local or remote write, atomics, MW bind), as pinning it fails; read-only memory registers
 * as a source. What the program munmaps while registered stays alive for warpnicd until
 * deregistration. What is left, each for a reason:
 *   - private memory costs a copy at its first registration and another when its last MR
 *     goes (Linux cannot make anonymous pages shmem), at 4 KiB granularity (or its
 *     hugepage's): its neighbours in those pages go with it, their content kept;
 *   - while it is copied, a system call that writes into it waits, except where only
 *     mprotect protects it (a MAP_PRIVATE file mapping such as .data; no userfaultfd for
 *     kernel faults in this process): there it fails with EFAULT; a device's write under
 *     direct I/O (O_DIRECT, io_uring fixed buffers) in that moment lands in the old page;
 *   - while registered, such memory is shmem: MADV_DONTNEED and MADV_FREE keep its content
 *     (a pinned page is desynchronised by them instead); its mlock and madvise state is
 *     that of a fresh mapping;
 *   - fork(): the child makes its copies private just after fork(): writes other threads
 *     of the parent make in that moment may show in them (Linux copies pinned pages inside
 *     fork()); a thread that registered its own stack must not fork; shared objects stay
 *     shared;
 *   - a file of a disk filesystem (ext4, xfs) registers, unlike a hardware RNIC's pin on
 *     Linux >= 6.5 (EFAULT): warpnicd writes it through the page cache (dirty tracking,
 *     writeback, msync work), and its dataplane may then wait on that filesystem;
 *   - a shared object truncated under an MR (or a hugetlbfs page with no free hugepage, a
 *     disk error): warpnicd's access gets anonymous memory in that page's place, counted
 *     (telemetry mr_sigbus), as a pinned page is written though the file dropped it;
 *   - a shared mapping this process cannot open itself (unprivileged: SysV, shared
 *     anonymous memory, a deleted file, a closed memfd) is opened by warpnicd through
 *     /proc/PID/map_files, which needs it to run as root in this PID namespace.
 */
#ifndef WN_CLIENT_H
#define WN_CLIENT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wn_ctl.h"
#include "wn_queue.h"

#ifdef __cplusplus
extern "C" {
#endif

struct wn_client;

/** A registered memory region. */
struct wn_client_mr {
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
	uint32_t access;
	void *addr;
	uint64_t length;
	uint64_t iova;
	uint32_t pd;
	uint32_t flags;             /**< WN_CTL_MR_F_* */
	uint64_t span_lo, span_len; /**< private: the pages (hugepages) it covers */
	uint32_t n_segs;
	struct wn_client_seg **segs; /**< private: private memory made shareable, used */
};

/** A completion queue and its shared ring (this process is the CQ's consumer). */
struct wn_client_cq {
	uint32_t handle;
	uint32_t depth;
	void *ring;
	uint64_t ring_size;
	uint64_t cookie;
	struct wn_queue_ring cqr; /**< consumer view */
	pthread_spinlock_t lock;
};

/** A shared receive queue and its shared ring (this process produces WQEs). */
struct wn_client_srq {
	uint32_t handle;
	uint32_t depth;
	uint32_t max_sge;
	void *ring;
	uint64_t ring_size;
	struct wn_queue_ring rq; /**< producer view */
	pthread_spinlock_t lock;
	struct wn_client *c;     /**< private: its connection (lcore doorbells) */
};

/** A queue pair and its shared rings (this process produces SQ and RQ WQEs). */
struct wn_client_qp {
	uint32_t handle;
	uint32_t qpn;
	uint32_t sq_depth, rq_depth;
	uint32_t max_send_sge, max_recv_sge, max_inline;
	uint32_t state; /**< last state reported by the server (enum wn_ctl_qp_state) */
	void *ring;
	uint64_t ring_size;
	struct wn_queue_ring sq; /**< producer view */
	struct wn_queue_ring rq; /**< producer view; unused (hdr NULL) with an SRQ */
	pthread_spinlock_t sq_lock, rq_lock;
	struct wn_client *c;     /**< private: its connection (lcore doorbells) */
};

/** A CM event channel: @c fd becomes readable when an event is queued. */
struct wn_client_cm_channel {
	uint32_t handle;
	int fd;
};

/**
 * Connect to warpnicd and say hello.
 * @param path
 *   Control socket; NULL: $WARPNIC_CTL, else WN_CTL_DEFAULT_PATH.
 * @return the client, or NULL with errno: ENOENT/ECONNREFUSED (no daemon), EPROTO
 *   (protocol version mismatch), ENOMEM. Any thread.
 */
struct wn_client *wn_client_open(const char *path);

/** Close the connection; the server reclaims every object. Unmaps nothing. NULL: no-op. */
void wn_client_close(struct wn_client *c);

/** @return the device name announced by the server (e.g. "wn0"). Any thread. */
const char *wn_client_dev_name(const struct wn_client *c);

/** @return the control socket fd (for poll()-style liveness checks). Any thread. */
int wn_client_fd(const struct wn_client *c);

/**
 * Send one request and wait for its response (the generic control call).
 * @param op
 *   enum wn_ctl_op.
 * @param req
 *   Request body of wn_ctl_op_info(op)->req_len octets.
 * @param fds, nfds
 *   Fds to pass.
 * @param resp
 *   Response body buffer (resp_len octets) or NULL.
 * @param rfd
 *   Out: the fd the response carried, or -1 (may be NULL: then it is closed).
 * @return 0, the server's -errno, -EPIPE/-ECONNRESET when warpnicd is gone, or -EPROTO.
 *   Any thread (serialized internally).
 */
int wn_client_call(struct wn_client *c, uint16_t op, const void *req, const int *fds,
		   unsigned int nfds, void *resp, int *rfd);

/** Query device attributes. @return 0 or -errno. Any thread. */
int wn_client_query_device(struct wn_client *c, struct wn_ctl_device_attr *attr);

/** Query port @p port (1-based). @return 0 or -errno (-EINVAL: no such port). Any thread. */
int wn_client_query_port(struct wn_client *c, uint32_t port, struct wn_ctl_port_attr *attr);

/** Allocate a PD. @return 0 and *pd, or -errno. Any thread. */
int wn_client_alloc_pd(struct wn_client *c, uint32_t *pd);

/** Deallocate a PD. @return 0, -EBUSY (objects still use it), -EINVAL. Any thread. */
int wn_client_dealloc_pd(struct wn_client *c, uint32_t pd);

/**
 * Register [addr, addr+length) (the file comment says what it does to the memory).
 * @param iova
 *   Address remote peers use for the first byte (usually addr).
 * @param access
 *   WN_CTL_ACCESS_* bits.
 * @return the MR, or NULL with errno: EINVAL (bad range/access), EFAULT (a hole, memory that
 *   cannot be read, read-only memory for an access that writes), ENOMEM (also: no free
 *   hugepage to copy private hugepages into), E2BIG (more than WN_CTL_MR_PIECES_MAX objects),
 *   or the server's error. Any thread.
 */
struct wn_client_mr *wn_client_reg_mr(struct wn_client *c, uint32_t pd, void *addr,
				      size_t length, uint64_t iova, uint32_t access);

/**
 * Allocate a fast-register MR (RFC 5042 §4.2) whose backing memory is [addr, addr+length),
 * shared like wn_client_reg_mr(). Its STag (lkey = rkey, key included) stays invalid until a
 * WN_QUEUE_WR_FAST_REG WQE on a QP of @p pd gives it a new key, a range inside the backing,
 * a TO and rights; LOCAL_INV or a peer's Send with Invalidate makes it invalid again.
 * @return the MR, or NULL with errno as wn_client_reg_mr(). Any thread.
 */
struct wn_client_mr *wn_client_alloc_frmr(struct wn_client *c, uint32_t pd, void *addr,
					  size_t length);

/**
 * Allocate a memory window of @p type 1 (PD-associated) or 2 (QP-associated, invalidatable
 * by LOCAL_INV or a peer's Send with Invalidate). Bind it with a WN_QUEUE_WR_BIND_MW WQE
 * (a new 8-bit key in u.bind_mw.mw_stag, an MR with WN_CTL_ACCESS_MW_BIND).
 * @param[out] mw handle for wn_client_dealloc_mw().
 * @param[out] rkey the window's STag, invalid until bound.
 * @return 0 or -errno (-EINVAL: bad PD or type, -ENOSPC). Any thread.
 */
int wn_client_alloc_mw(struct wn_client *c, uint32_t pd, uint32_t type, uint32_t *mw,
		       uint32_t *rkey);

/** Deallocate a window (invalidating it if bound). @return 0 or -errno. Any thread. */
int wn_client_dealloc_mw(struct wn_client *c, uint32_t mw);

/** Deregister and free @p mr. @return 0, -EBUSY (windows bound to it), -errno. Any thread. */
int wn_client_dereg_mr(struct wn_client *c, struct wn_client_mr *mr);

/** wn_client_rereg_mr() flags, IBV_REREG_MR_CHANGE_* values. */
#define WN_CLIENT_REREG_TRANSLATION (1u << 0)
#define WN_CLIENT_REREG_PD          (1u << 1)
#define WN_CLIENT_REREG_ACCESS      (1u << 2)
#define WN_CLIENT_REREG_MASK        0x7u

/**
 * Change what @p mr is (ibv_rereg_mr): its range (@p addr, @p length; the iova becomes
 * @p addr), PD or access, as @p flags says; the others stay. It is registered anew, the new
 * registration takes the old one's keys (a peer's rkey reaches the new memory at once) and
 * the old registration goes; pages both cover are not made shareable again.
 * @return 0, or -errno as wn_client_reg_mr() or -EBUSY (windows are bound to @p mr), with
 *   @p mr unchanged. Not for fast-register MRs (-EINVAL). Any thread.
 */
int wn_client_rereg_mr(struct wn_client *c, struct wn_client_mr *mr, uint32_t flags,
		       uint32_t pd, void *addr, size_t length, uint32_t access);

/**
 * rdma-core's fork support for kernels without copy on fork (ibv_fork_init() with
 * RDMAV_USE_MADVISE): from now on every registered page is MADV_DONTFORK (a child has no
 * mapping there) until no MR covers it. Without it, a child gets a private copy of
 * registered private memory (copy on fork). Process-wide.
 * @return 0, or -EINVAL when an MR was registered before (as rdma-core). Any thread.
 */
int wn_client_fork_madvise(void);

/**
 * ibv_dontfork_range() / ibv_dofork_range(): in wn_client_fork_madvise()'s mode, keep the
 * pages of [base, base+size) from a child (@p keep_from_child) or give them back (the same
 * range as kept); otherwise nothing, but wn_client_fork_madvise() is too late from now on.
 * @return 0. Any thread.
 */
int wn_client_fork_range(void *base, size_t size, bool keep_from_child);

/**
 * Create a CQ of at least @p cqe entries.
 * @param notify_fd
 *   Fd (pipe or eventfd write side) the dataplane writes @p cookie to (8 octets) when an
 *   armed CQ gets a completion; -1 for none. The server keeps a duplicate.
 * @return the CQ with its ring mapped, or NULL with errno. Any thread.
 */
struct wn_client_cq *wn_client_create_cq(struct wn_client *c, uint32_t cqe, int notify_fd,
					 uint64_t cookie);

/** Destroy a CQ. @return 0, -EBUSY (QPs use it), -errno. Any thread. */
int wn_client_destroy_cq(struct wn_client *c, struct wn_client_cq *cq);

/** Create an SRQ. @return the SRQ or NULL with errno. Any thread. */
struct wn_client_srq *wn_client_create_srq(struct wn_client *c, uint32_t pd, uint32_t max_wr,
					   uint32_t max_sge, uint32_t srq_limit);

/** Destroy an SRQ. @return 0, -EBUSY, -errno. Any thread. */
int wn_client_destroy_srq(struct wn_client *c, struct wn_client_srq *srq);

/**
 * Create an RC QP.
 * @param attr
 *   Request as sent (handles of PD, CQs, SRQ; capacities).
 * @return the QP (capacities rounded up by the server), or NULL with errno. Any thread.
 */
struct wn_client_qp *wn_client_create_qp(struct wn_client *c,
					 const struct wn_ctl_create_qp_req *attr);

/** Modify a QP; @p out (may be NULL) receives the attributes after the change. */
int wn_client_modify_qp(struct wn_client *c, struct wn_client_qp *qp,
			const struct wn_ctl_modify_qp_req *req, struct wn_ctl_qp_attr *out);

/** Query a QP. @return 0 or -errno. Any thread. */
int wn_client_query_qp(struct wn_client *c, struct wn_client_qp *qp, struct wn_ctl_qp_attr *out);

/** Destroy a QP and unmap its rings. @return 0 or -errno. Any thread. */
int wn_client_destroy_qp(struct wn_client *c, struct wn_client_qp *qp);

/*
 * Data path. Posting is begin / slot / end on a work ring: begin takes the ring's lock and
 * returns the free slots, the caller fills up to that many entries in place (slot i, in
 * lib/queue's WQE layout), and end publishes them (store-release of the producer index)
 * and rings the doorbell when the consumer may be idle; when the dataplane lcore serving the
 * ring sleeps, end also writes its eventfd (lib/queue's "Lcore doorbells"; no system call
 * while it is awake). Thread-safe: the lock serializes posters of one ring, as verbs
 * requires.
 */

/**
 * Start posting to a QP's SQ (@p rq false) or RQ (@p rq true), or an SRQ (@p srq non-NULL,
 * @p qp NULL).
 * @return free slots (>= 0; the lock is held), or -EINVAL (no such ring), -EPROTO (the
 *   ring's consumer index is corrupt; lock not held).
 */
int64_t wn_client_wq_begin(struct wn_client_qp *qp, struct wn_client_srq *srq, bool rq);

/** Slot @p i (< the count begin returned) of the ring being posted to. */
void *wn_client_wq_slot(struct wn_client_qp *qp, struct wn_client_srq *srq, bool rq,
			uint32_t i);

/** Publish @p n filled slots (may be 0) and drop the lock taken by begin. */
void wn_client_wq_end(struct wn_client_qp *qp, struct wn_client_srq *srq, bool rq, uint32_t n);

/**
 * Take up to @p n completions from a CQ.
 * @return completions copied to @p out (0..n), or -EPROTO if the producer index is corrupt.
 *   Any thread (serialized per CQ).
 */
int wn_client_poll_cq(struct wn_client_cq *cq, struct wn_queue_cqe *out, int n);

/**
 * Remove the completions of QP @p qpn that wait in @p cq, keeping the others in order (as
 * mlx4 and mlx5 clean a CQ when a QP is destroyed). For a QP the server has destroyed: it
 * adds none after. @return the completions removed. Any thread (serialized per CQ).
 */
uint32_t wn_client_cq_clean(struct wn_client_cq *cq, uint32_t qpn);

/** Back-off state of one loop polling a CQ (zero-initialised). */
struct wn_client_backoff {
	uint64_t empty_since; /**< ns (CLOCK_MONOTONIC) of the first empty poll in a row; 0 */
};

/**
 * Call after each poll of a CQ that found @p got completions. While polls keep finding
 * nothing, after WARPNIC_POLL_SPIN_US (default 5 us; -1: never) it yields the CPU on each
 * call (sched_yield), and after 1 ms it sleeps 20 us per call, so that a dataplane lcore
 * sharing the CPU runs instead of the spinning poller. The thread owning @p b.
 */
void wn_client_poll_backoff(struct wn_client_backoff *b, int got);

/**
 * Arm a CQ: the next completion (solicited or error only, if @p solicited_only) makes
 * warpnicd write the CQ's cookie to its notification fd once. Any thread.
 */
void wn_client_cq_arm(struct wn_client_cq *cq, bool solicited_only);

/** Create a CM event channel. @return it, or NULL with errno. Any thread. */
struct wn_client_cm_channel *wn_client_cm_channel_create(struct wn_client *c);

/** Destroy a CM event channel. @return 0, -EBUSY (ids use it), -errno. Any thread. */
int wn_client_cm_channel_destroy(struct wn_client *c, struct wn_client_cm_channel *ch);

/**
 * Read the next CM event of a channel (blocks unless the fd was made non-blocking; a
 * cancellation point).
 * @return 0, -EAGAIN (non-blocking, none queued), -EPIPE (warpnicd gone), -EBADMSG.
 *   One thread per channel at a time.
 */
int wn_client_cm_get_event(struct wn_client_cm_channel *ch, struct wn_ctl_cm_event *ev);

/**
 * Open the client's async event socket (ibv_context.async_fd): a receive-only datagram socket
 * that becomes readable when warpnicd reports an event about one of this client's QPs, SRQs
 * or CQs (struct wn_ctl_async_event). One per client; closing it is the caller's.
 * @return the fd, or -errno (-EBUSY: already open). Any thread.
 */
int wn_client_async_open(struct wn_client *c);

/**
 * Read the next async event from @p fd (blocks unless the fd was made non-blocking; a
 * cancellation point).
 * @return 0, -EAGAIN (non-blocking, none queued), -EPIPE (warpnicd gone), -EBADMSG.
 *   Any thread; one reader at a time.
 */
int wn_client_async_read(int fd, struct wn_ctl_async_event *ev);

/** Create a CM id on @p ch; events for it carry @p cookie. @return 0 + *id, or -errno. */
int wn_client_cm_create_id(struct wn_client *c, struct wn_client_cm_channel *ch,
			   uint64_t cookie, uint32_t *id);

/**
 * Create a CM id of port space @p ps on @p ch: WN_CTL_PS_TCP (connections, as
 * wn_client_cm_create_id()) or WN_CTL_PS_UDP (UD QPs: CONNECT resolves the passive side's QP
 * number and Q_Key, given in ESTABLISHED). @return 0 + *id, or -errno (-EINVAL: @p ps).
 */
int wn_client_cm_create_id_ps(struct wn_client *c, struct wn_client_cm_channel *ch, uint32_t ps,
			      uint64_t cookie, uint32_t *id);

/** Destroy a CM id (a connected peer sees DISCONNECTED). @return 0 or -errno. */
int wn_client_cm_destroy_id(struct wn_client *c, uint32_t id);

/**
 * Send the later events of CM id @p id to channel @p ch (rdma_migrate_id); events already
 * queued on its old channel stay there.
 * @return 0 or -errno (-EINVAL: no such id or channel). Any thread.
 */
int wn_client_cm_migrate_id(struct wn_client *c, uint32_t id, struct wn_client_cm_channel *ch);

/**
 * Address operations: op is WN_CTL_CM_BIND (addr = local address), WN_CTL_CM_RESOLVE_ADDR
 * (addr = destination, src optional), WN_CTL_CM_RESOLVE_ROUTE, or WN_CTL_CM_LISTEN
 * (arg = backlog; RESOLVE_*: arg = timeout in ms).
 * @param out
 *   May be NULL; the id's addresses after the call.
 * @return 0 or -errno (-EADDRINUSE, -EADDRNOTAVAIL, -EINVAL). Any thread.
 */
int wn_client_cm_addr(struct wn_client *c, uint16_t op, uint32_t id,
		      const struct wn_ctl_addr *src, const struct wn_ctl_addr *dst, uint32_t arg,
		      struct wn_ctl_cm_addr_resp *out);

/**
 * Connection operations: op is WN_CTL_CM_CONNECT, WN_CTL_CM_ACCEPT or WN_CTL_CM_REJECT.
 * @param qp
 *   QP handle bound to the connection (0: none); ignored by REJECT.
 * @param param
 *   IRD/ORD (RFC 6581 §5) and private data; may be NULL (no private data, IRD=ORD=1).
 * @return 0 or -errno. Any thread.
 */
int wn_client_cm_conn(struct wn_client *c, uint16_t op, uint32_t id, uint32_t qp,
		      const struct wn_ctl_conn_param *param);

/** Disconnect: both sides get DISCONNECTED. @return 0 or -errno. Any thread. */
int wn_client_cm_disconnect(struct wn_client *c, uint32_t id);

/** Convert a sockaddr (AF_INET/AF_INET6) to a wn_ctl_addr. @return 0 or -EAFNOSUPPORT. */
int wn_client_addr_from_sockaddr(struct wn_ctl_addr *out, const void *sa);

/**
 * Convert a wn_ctl_addr to a sockaddr in @p ss (struct sockaddr_storage).
 * @return the sockaddr length, or 0 for WN_CTL_AF_NONE.
 */
unsigned int wn_client_addr_to_sockaddr(void *ss, const struct wn_ctl_addr *a);

#ifdef __cplusplus
}
#endif

#endif /* WN_CLIENT_H */
