/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to lib/server: the server, its clients and handle table, and what the files share.
 *
 * From the top down (a file calls only the files below it):
 *   server.c  socket, epoll, clients; dispatch: requests (the op table), destruction by type
 *             (DESTROY requests, reclaim on EOF), the dataplane's answers; attaching its rings
 *   dev.c     HELLO, QUERY_DEVICE, QUERY_PORT, BELL
 *   server_cm.c      CM channels and ids
 *   server_mr.c      PDs, MRs, memory windows, fast-register MRs (lib/mem)
 *   server_queue.c   CQs, SRQs, QPs and their rings (lib/queue); flushing without a dataplane
 *   server_obj.c     handle table, object lifetimes, zombies waiting for the dataplane's DONE
 *   mr_sigbus.c  the SIGBUS guard over mapped client memory
 *   server_msg.c     messages to the dataplane; the log type
 *   ring.c    ring sizes and initialisation (ring.h)
 *
 * Everything here runs on the server's thread with srv->lock held (see wn_server.h).
 */
#ifndef SRV_PRIV_H
#define SRV_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <rte_log.h>

#include "wn_ctl.h"
#include "wn_queue.h"
#include "wn_server.h"
#include "wn_server_dp.h"

extern int wn_server_logtype;
#define SRV_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, wn_server_logtype, "warpnicd ctl: " fmt "\n", ##__VA_ARGS__)

/*
 * epoll data of a CM channel whose socket is full (server_cm.c): its handle in the high half, this
 * tag in the low bits (server.c's clients are aligned pointers, its other entries 1 and 2).
 */
#define SRV_EP_CHAN  ((uint64_t)3)

/* A handler's return: it answers the request later itself (wn_server_reply()). */
#define SRV_REPLY_LATER 1

#define MAX_OBJS     (1u << 20)   /* handle = gen << 20 | (index + 1) */
#define MAX_CLIENTS  1024
#define MAX_CQE      WN_QUEUE_MAX_DEPTH /* the deepest ring; libfabric's ofi_rxm asks for 262144 */
#define MAX_QP_WR    (1u << 14)
#define MAX_SGE      16
#define MAX_INLINE   256
#define MAX_RD_ATOM  16           /* IRD/ORD limit (RFC 6581 §5) */
#define MAX_QP       65536u       /* QPs when wn_server_conf.max_qp is 0 */
#define MEM_ENTRIES  (1u << 16)  /* lib/mem region table (STag index space) */

enum obj_type {
	OBJ_PD = 1, OBJ_MR, OBJ_CQ, OBJ_SRQ, OBJ_QP, OBJ_CHAN, OBJ_CMID, OBJ_MW, OBJ_NTYPES
};

/* An id's address, as rdma_cm's id states name it. */
enum cm_addr {
	CM_ADDR_NONE,
	CM_ADDR_BOUND,           /* BIND */
	CM_ADDR_RESOLVED,        /* RESOLVE_ADDR */
	CM_ROUTE_RESOLVED,       /* RESOLVE_ROUTE: ready to CONNECT */
};

/*
 * What an id has done toward a connection. The connection itself (TCP, MPA, RTS, close) is
 * the dataplane's; this only answers rdma_cm's questions: may it connect, accept, reject,
 * disconnect?
 */
enum cm_conn {
	CM_CONN_NONE,
	CM_CONN_REQUESTED,       /* active: CONNECT sent; passive: CONNECT_REQUEST unanswered */
	CM_CONN_ACCEPTED,        /* passive: ACCEPT sent; active: ESTABLISHED received */
	CM_CONN_FINISHED,        /* rejected, failed or disconnected (either side) */
};

struct client;
struct chan_ev;
struct srv_notify;

/* One client-visible object; handle-table entry. */
struct obj {
	bool zombie;       /* retired, waiting for the dataplane's DONE (kept in its slot) */
	enum obj_type type;
	uint32_t handle;
	struct client *owner;
	uint32_t refs; /* objects that depend on this one */
	union {
		struct {
			uint32_t num; /* lib/mem PD number */
		} pd;
		struct {
			struct obj *pd;
			struct wn_server_dp_mr dp;
			void *map;        /* the pieces, one after the other (a span) */
			size_t map_len;
			uint64_t first;   /* client address of the first piece */
			uint64_t next;    /* ... and of the one MR_PIECES brings next */
			uint32_t pending; /* pieces still to come (0: registered) */
			uint32_t flags;   /* REG_MR's: the registration when complete */
			uint64_t addr;
			uint32_t access;
			bool writable;    /* mapped PROT_WRITE */
			bool dma;         /* a NIC DMA-maps it (conf.mr_map) */
			bool hooked;      /* given to conf.mr_map */
			uint64_t run_off; /* where the run of pieces of one page size began */
			uint32_t run_shift;
			uint32_t n_guards;
			int *guards;      /* SIGBUS guard slots (mr_sigbus.c), one per run */
		} mr;
		struct {
			struct obj *pd;
			uint32_t stag; /* as allocated; binds change the key */
		} mw;
		struct {
			struct wn_server_dp_cq dp;
			struct wn_queue_ring prod; /* producer view, used while no dataplane */
		} cq;
		struct {
			struct obj *pd;
			struct wn_server_dp_srq dp;
		} srq;
		struct {
			struct obj *pd, *scq, *rcq, *srq;
			uint32_t cm_id;
			uint32_t access;
			uint64_t cookie;
			uint32_t path_mask;  /* IB path attributes set (WN_CTL_QP_AV, ...) */
			struct wn_ctl_qp_path path;
			bool ib;             /* connected InfiniBand-style (RTR with a path) */
			struct wn_ctl_qp_ud ud; /* UD QPs: Q_Key, SQ PSN, P_Key index, port */
			struct wn_server_dp_qp dp;
			struct wn_queue_ring sqc, rqc; /* consumer views, used while no dataplane */
		} qp;
		struct {
			int fd; /* server end of the event socketpair */
			uint32_t seq;
			/* events its full socket could not take yet, oldest first (server_cm.c) */
			struct chan_ev *qhead, **qtail;
			uint32_t qlen;
		} chan;
		struct {
			struct obj *chan;
			uint64_t cookie;
			uint32_t ps;       /* WN_CTL_PS_TCP or WN_CTL_PS_UDP */
			struct wn_ctl_addr src, dst;
			enum cm_addr addr;
			enum cm_conn conn;
			bool listening;
			/* LISTEN's reply waits for the dataplane's CM_LISTENING: the request */
			bool listen_wait;
			struct wn_ctl_hdr listen_req;
			uint32_t backlog;  /* listeners: most unanswered requests */
			uint32_t pending;  /* listeners: requests not yet accepted/rejected */
			uint32_t listener; /* passive ids: the listener that got the request */
			uint32_t qp;       /* bound QP (0: none) */
			uint32_t ird, ord; /* asked for in CONNECT/ACCEPT (RFC 6581 §5) */
			uint32_t dp_conn;  /* passive ids: the dataplane's connection key */
			/* ids with a local address (not a listener's): by port (server_cm.c) */
			struct obj *pnext, **pprev;
		} id;
	} u;
};

struct client {
	struct client *next;
	int fd;
	pid_t pid;   /* SO_PEERCRED; 0 if unknown */
	uint32_t id;
	uint32_t llp; /* enum wn_ctl_llp from HELLO: the lower layer of its connections */
	uint32_t nobjs;
	int async_fd;       /* server end of its async event socket (-1: none asked for) */
	uint32_t async_seq;
	uint64_t async_lost; /* events its full socket could not take */
};

/*
 * A client memfd mapped once for every MR of one piece inside it: the client keeps an MR's
 * pages in segments (lib/client server_mr.c), so mappings stay one per segment, not one per MR
 * (vm.max_map_count bounds a process's mappings, 65530 by default).
 */
struct wn_server {
	struct wn_server_conf conf;
	char dev_name[WN_CTL_NAME_LEN];
	int lfd;
	int epfd;
	pthread_mutex_t lock;
	pthread_t thread;
	bool running;
	volatile bool stop;
	struct obj **tab;
	uint16_t *gen;
	uint32_t cap;
	/* free slots of tab, oldest first (a slot freed last is reused last) */
	uint32_t *free_idx;
	uint32_t free_head, free_len;
	uint32_t next_client_id;
	uint32_t nclients;
	struct client *clients;
	uint32_t counts[OBJ_NTYPES];
	uint64_t requests, bad_requests;
	uint32_t next_qpn;
	uint8_t next_key;
	uint16_t next_port;
	struct rte_ring *to_dp, *to_ctl;
	/* messages a full to_dp could not take, oldest first (server_msg.c) */
	struct wn_server_dp_msg **dp_wait;
	uint32_t dp_wait_head, dp_wait_len, dp_wait_cap;
	uint64_t dp_waited;
	int dp_efd;
	/* the dataplane's lcore doorbells (wn_server_dp_bells()), borrowed */
	int bell_page_fd;
	const struct wn_queue_bell *bells;
	int bell_efd[WN_QUEUE_BELLS];
	uint32_t n_bells;
	uint32_t n_zombies;
	struct wn_mem_table *mem;
	struct obj **ports; /* 65,536 lists of the ids bound to each port (server_cm.c) */
	/* CQ notification descriptors, one per pipe however many CQs use it (server_queue.c) */
	struct srv_notify *notify;
	uint32_t notify_cap, notify_n;
	/* CM events: delivered, made to wait for their channel's socket, the longest wait
	 * queue, and those whose reader was gone (server_cm.c) */
	uint64_t cm_events, cm_events_waited, cm_events_dropped;
	uint64_t dp_cm_events; /* of them, from the dataplane (the control thread's spin) */
	uint32_t cm_queue_max;
	uint64_t max_mr_size;     /* octets: conf.max_mr_mb, else physical memory */
};

/* One validated request, as a handler sees it. */
struct srv_req {
	struct client *c;
	const struct wn_ctl_hdr *h;
	const void *body;  /* the op's request body (wn_ctl_op_info()->req_len octets) */
	const int *fds;    /* borrowed: closed after the reply */
	unsigned int nfds;
};

/* A handler's answer: the op's response body and at most one fd (closed after the reply). */
struct srv_resp {
	union {
		struct wn_ctl_hello_resp hello;
		struct wn_ctl_device_attr dev;
		struct wn_ctl_port_attr port;
		struct wn_ctl_handle hd;
		struct wn_ctl_reg_mr_resp mr;
		struct wn_ctl_alloc_mw_resp mw;
		struct wn_ctl_ring_resp ring;
		struct wn_ctl_qp_attr qp;
		struct wn_ctl_cm_addr_resp addr;
		struct wn_ctl_bell_resp bell;
	} u;
	int fd; /* -1: none; set only on success */
};

/*
 * Request handlers (srv_h_*): one per op, listed in server.c's op table. Each returns 0 or
 * -errno, the response's status, or SRV_REPLY_LATER. Destruction (srv_*_destroy): one per
 * type, in server.c's table.
 */
/* ---- server_msg.c: the answer to client @p c's request @p req (a body of @p len octets, @p fd) */
void wn_server_reply(struct client *c, const struct wn_ctl_hdr *req, int status,
		     const void *body, size_t len, int fd);

/* messages to the dataplane (NULL: none attached, or no memory) */
struct wn_server_dp_msg *wn_server_dp_msg_new(struct wn_server *srv, uint32_t type, uint32_t handle,
				    void *obj);
int wn_server_dp_post(struct wn_server *srv, struct wn_server_dp_msg *m);
void srv_mr_unmap(struct wn_server *srv, struct obj *mr);
int wn_server_dp_tell(struct wn_server *srv, uint32_t type, uint32_t handle, void *obj);
/** Move what waits for room in to_dp onto it. @return true while some still waits. */
bool wn_server_dp_flush(struct wn_server *srv);
/** Free what still waits (the dataplane is detached). */
void wn_server_dp_wait_free(struct wn_server *srv);

/* ---- server_obj.c */
struct obj *wn_server_obj_get(struct wn_server *srv, struct client *c, uint32_t h, enum obj_type t);
struct obj *wn_server_obj_new(struct wn_server *srv, struct client *owner, enum obj_type t);
void wn_server_obj_free(struct wn_server *srv, struct obj *o);
void wn_server_obj_retire(struct wn_server *srv, struct obj *o, uint32_t dp_type, void *desc);
void wn_server_zombie_done(struct wn_server *srv, uint32_t handle);
void wn_server_zombies_free(struct wn_server *srv);
void wn_server_tab_free(struct wn_server *srv);
void wn_server_mr_release(struct wn_server *srv, struct obj *mr);

/* ---- dev.c */
int wn_server_h_hello(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_query_device(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_query_port(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_bell(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_async_channel(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
void wn_server_async_dp_event(struct wn_server *srv, const struct wn_server_dp_msg *m);

/* ---- server_mr.c */
int wn_server_h_alloc_pd(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_reg_mr(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_mr_pieces(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_rereg_mr(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_alloc_mw(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_pd_destroy(struct wn_server *srv, struct obj *pd);
int wn_server_mr_destroy(struct wn_server *srv, struct obj *mr);
int wn_server_mw_destroy(struct wn_server *srv, struct obj *mw);

/* ---- mr_sigbus.c: a range of client memory mapped here; its slot, or -errno */
int wn_server_sigbus_add(void *start, size_t len, uint32_t shift);
void wn_server_sigbus_del(int slot);
uint64_t wn_server_sigbus_hits(void);

/* ---- server_queue.c */
int wn_server_h_create_cq(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_create_srq(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_modify_srq(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_create_qp(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_modify_qp(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_query_qp(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
void wn_server_qp_set_state(struct wn_server *srv, struct obj *qp, uint32_t state);
void wn_server_qp_dp_error(struct wn_server *srv, uint32_t handle);
int wn_server_cq_destroy(struct wn_server *srv, struct obj *cq);
int wn_server_srq_destroy(struct wn_server *srv, struct obj *srq);
int wn_server_qp_destroy(struct wn_server *srv, struct obj *qp);

/* ---- server_notify.c: CQ notification descriptors, one per pipe */
/** The descriptor to notify through for the pipe of @p fd (borrowed), or -1. */
int wn_server_notify_get(struct wn_server *srv, int fd);
/** A CQ's notification descriptor is no longer used by it (closed with its last user). */
void wn_server_notify_put(struct wn_server *srv, int fd);
/** Close every notification descriptor (the server goes). */
void wn_server_notify_free(struct wn_server *srv);

/* ---- server_cm.c */
int wn_server_h_cm_create_channel(struct wn_server *srv, const struct srv_req *rq,
				  struct srv_resp *rs);
int wn_server_h_cm_create_id(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_cm_migrate_id(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_cm_bind(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_cm_resolve_addr(struct wn_server *srv, const struct srv_req *rq,
				struct srv_resp *rs);
int wn_server_h_cm_resolve_route(struct wn_server *srv, const struct srv_req *rq,
				 struct srv_resp *rs);
int wn_server_h_cm_listen(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_cm_connect(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_cm_accept(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_cm_reject(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
int wn_server_h_cm_disconnect(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
void wn_server_cm_dp_event(struct wn_server *srv, struct wn_server_dp_msg *m);
void wn_server_cm_dp_listening(struct wn_server *srv, const struct wn_server_dp_msg *m);
int wn_server_chan_destroy(struct wn_server *srv, struct obj *ch);
void wn_server_chan_writable(struct wn_server *srv, uint32_t handle);
int wn_server_cmid_destroy(struct wn_server *srv, struct obj *id);
void wn_server_ports_free(struct wn_server *srv);

#endif /* SRV_PRIV_H */
