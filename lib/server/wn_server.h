/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * lib/server: the daemon side of the control protocol (lib/ctl's wn_ctl.h), warpnicd's control
 * thread.
 *
 * It accepts clients on a SOCK_SEQPACKET socket, keeps per-client object tables (PD, MR,
 * CQ, SRQ, QP, CM channels and ids), creates the ring memfds, maps client-registered memory
 * once, and destroys everything a client owned when its socket reaches EOF. QPs, CQs, MRs
 * and CM requests are handed to the dataplane through the rings of wn_server_dp.h when one is
 * attached. Connections are the dataplane's: the server keeps what rdma_cm knows of an id
 * (addresses, listen and backlog, bound QP, whether a connection was requested, accepted or
 * finished) and sets the bound QP's state (RTS on ESTABLISHED, Error when it ends). Without a
 * dataplane, the device answers queries and creates objects (a QP moved to Error is flushed
 * here), and CONNECT and LISTEN fail with ENETDOWN.
 *
 * Thread safety: wn_server_poll() and everything that mutates state run on one thread
 * (the control thread started by wn_server_start(), or the caller's if it polls
 * itself). wn_server_stats() and wn_server_mr_lookup() take the server lock and may
 * be called from any thread.
 */
#ifndef WN_SERVER_H
#define WN_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wn_ctl.h"
#include "wn_queue.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rte_rcu_qsbr;
struct rte_ring;
struct wn_server;
struct wn_mem_table;

/** Most local addresses (GIDs) of the device. */
#define WN_SERVER_MAX_ADDRS WN_CTL_MAX_GIDS

/** Configuration of a control server. */
struct wn_server_conf {
	const char *path;     /**< socket path (NULL: no listening socket, see adopt()) */
	const char *dev_name; /**< verbs device name (NULL: "wn0") */
	uint8_t mac[6];       /**< port MAC; node GUID is its EUI-64 */
	uint32_t mtu;         /**< L3 MTU (0: 1500) */
	uint32_t n_addrs;
	struct wn_ctl_addr addrs[WN_SERVER_MAX_ADDRS]; /**< port addresses (port field 0) */
	struct rte_rcu_qsbr *mem_qs; /**< QSBR the dataplane lcores report to (NULL: none) */
	uint32_t mem_entries; /**< lib/mem table size (STag index space); 0: 65536 */
	uint32_t max_mr_mb;   /**< largest MR, MiB (0: the host's physical memory, which a
			       *   registration's copy of the pages can never exceed) */
	uint32_t max_qp;      /**< QPs at most, all clients together (max_qp); 0: 65536 */
	uint32_t llp;         /**< enum wn_ctl_llp of clients that choose none (the dataplane's
			       *   default; 0: MPA): QUERY_DEVICE names it in fw_ver */
	/**
	 * Optional (NULL: none), on the control thread: mr_map gets each MR's mapping (@p map,
	 * @p len: what this thread mmapped) once it has its STag and before the client learns
	 * it; mr_unmap gets it again when its memory goes: after the dataplane's DONE for its
	 * deregistration (no zero-copy mbuf points into it any more), just before munmap. A
	 * dataplane whose port reads frames by DMA maps regions for the device here (lib/node
	 * node_dma.c); a region it cannot map is copied, the registration does not fail.
	 */
	void (*mr_map)(void *arg, uint32_t stag, void *map, size_t len);
	void (*mr_unmap)(void *arg, uint32_t stag, void *map, size_t len);
	/**
	 * Optional: an ibv_rereg_mr moves regions between STags. mr_move(@p stag, NULL) before
	 * the move (that index reaches nothing the device may read), mr_move(@p stag, @p map)
	 * once no lookup from before the move can still check the index (the region mapped at
	 * @p map is reached through @p stag's index now).
	 */
	void (*mr_move)(void *arg, uint32_t stag, void *map);
	void *mr_map_arg;
	/**
	 * The port the dataplane's InfiniBand-style connections meet on (its listener on every
	 * address; 0: none): rdma_cm ids cannot bind it.
	 */
	uint16_t ib_port;
	/**
	 * The control thread (wn_server_start()) keeps polling this long after it handled
	 * something, yielding the CPU between polls, before it blocks (0: blocks at once).
	 */
	uint32_t spin_us;
	uint32_t sock_mode;     /**< the control socket's permissions (0: 0660) */
	const char *sock_group; /**< its group's name (NULL: the process's group) */
};

/** Object counts and CM event delivery, for tests and telemetry. */
struct wn_server_stats {
	uint32_t clients;
	uint32_t pds, mrs, mws, cqs, srqs, qps, channels, cm_ids;
	uint64_t requests, bad_requests;
	/**
	 * CM events written to their channels; of those, how many waited in the channel's
	 * queue because its socket was full (none is lost for that); events dropped because
	 * the channel was destroyed or its reader had gone before they could be written; the
	 * longest queue a channel had.
	 */
	uint64_t cm_events, cm_events_waited, cm_events_dropped;
	uint32_t cm_queue_max;
	/** pages of client objects that failed under warpnicd's access (truncated files, no
	 *  free hugepage, I/O errors) and were replaced by anonymous memory, since start */
	uint64_t mr_sigbus;
};

/**
 * Create a server; binds and listens on conf->path with conf->sock_mode and sock_group.
 * Missing parent directories are created (mode 0755); a socket file nobody listens on any
 * more is replaced; a live one is never taken over.
 * @return the server, or NULL with errno set: EADDRINUSE (a process listens on conf->path:
 *   wn_server_sock_owner() says which), ENOTSOCK (conf->path is another kind of file),
 *   ENOENT (no such sock_group), EINVAL, ENOMEM, or a socket/bind errno. Call from the
 *   thread that will own the server.
 */
struct wn_server *wn_server_create(const struct wn_server_conf *conf);

/**
 * Handle whatever is ready: new clients, requests, client EOF, dataplane messages.
 * @param timeout_ms
 *   How long to wait for something (-1: forever, 0: do not block).
 * @return number of events handled (>= 0), or -errno of epoll_wait. Owner thread only.
 */
int wn_server_poll(struct wn_server *srv, int timeout_ms);

/**
 * Run wn_server_poll() on a new control thread until wn_server_stop().
 * @return 0, -EALREADY, or -errno of pthread_create. After it returns 0 only the control
 *   thread may poll.
 */
int wn_server_start(struct wn_server *srv);

/** Stop and join the control thread started by wn_server_start(). Any thread but it. */
void wn_server_stop(struct wn_server *srv);

/**
 * Who serves a control socket.
 * @return the pid of the process listening on @p path, 0 when none does (no such file, or a
 *   socket file left behind), or -errno: ENOTSOCK (@p path is another kind of file), or the
 *   errno of stat/connect (EACCES, ...). Any thread.
 */
pid_t wn_server_sock_owner(const char *path);

/** Destroy the server (stops its thread, reclaims every client). NULL is a no-op. */
void wn_server_destroy(struct wn_server *srv);

/**
 * Serve an already connected SOCK_SEQPACKET socket as a client (tests, fuzzing).
 * @return 0, or -ENOMEM / -errno of epoll_ctl. Owner thread only (before start()).
 */
int wn_server_adopt(struct wn_server *srv, int fd);

/** Copy the object counts. Any thread. */
void wn_server_stats(struct wn_server *srv, struct wn_server_stats *st);

/**
 * Find the server's mapping of a registered region by its key.
 * @param stag
 *   lkey/rkey returned by REG_MR.
 * @param len
 *   Out (may be NULL): registered length.
 * @return the server-side address of the region's first byte, or NULL if no MR has that
 *   key. The mapping lives until the MR is deregistered. Any thread.
 */
void *wn_server_mr_lookup(struct wn_server *srv, uint32_t stag, uint64_t *len);

/**
 * The lib/mem region table holding every PD and MR of every client (STag lookups on the
 * dataplane: wn_mem_resolve()). Lives as long as the server. Any thread.
 */
struct wn_mem_table *wn_server_mem(struct wn_server *srv);

/**
 * Attach a dataplane: from now on objects and CM requests are sent on @p to_dp and
 * answers read from @p to_ctl whenever @p efd (an eventfd the dataplane writes) is ready.
 * @return 0, -EBUSY if one is attached, or -errno. Call before start().
 */
int wn_server_dp_attach(struct wn_server *srv, struct rte_ring *to_dp,
			struct rte_ring *to_ctl, int efd);

/**
 * Hand the dataplane lcores' doorbells to clients (WN_CTL_BELL; wn_queue.h "Lcore
 * doorbells"): the bell page memfd @p page_fd and its mapping @p page, and one eventfd per
 * bell (@p n_bells, at most WN_QUEUE_BELLS). The server rings bell 0 (the lcore that takes
 * the to_dp ring) after each message it posts. The fds and the mapping stay the caller's and
 * must outlive the server's thread. Without this, clients never ring.
 * @return 0, or -EINVAL (bad arguments, no dataplane attached). Call before start().
 */
int wn_server_dp_bells(struct wn_server *srv, int page_fd, const struct wn_queue_bell *page,
		       const int *efds, uint32_t n_bells);

/**
 * The dataplane goes away (its rings and bells are about to be freed): forget them, so that
 * what the server still does (closing the clients in wn_server_destroy()) tells it nothing
 * (-ENOTCONN) and frees objects at once. Call after wn_server_stop(), before the dataplane
 * is freed.
 */
void wn_server_dp_detach(struct wn_server *srv);

#ifdef __cplusplus
}
#endif

#endif /* WN_SERVER_H */
