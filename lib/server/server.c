/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control server: unix SOCK_SEQPACKET server of the control protocol (wn_ctl.h).
 * Object tables, ring memfds, client memory mappings, reclaim on EOF, dataplane hand-off
 * (wn_server_dp.h) and the local connection manager used while no dataplane is attached.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_ring.h>

#include "wn_server.h"
#include "wn_server_dp.h"
#include "ring.h"
#include "wn_build_config.h"
#include "wn_mem.h"
#include "wn_queue.h"

RTE_LOG_REGISTER_SUFFIX(wn_ctl_logtype, ctl, INFO);
#define CTL_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, wn_ctl_logtype, "warpnicd ctl: " fmt "\n", ##__VA_ARGS__)

#define MAX_OBJS     (1u << 20)   /* handle = gen << 20 | (index + 1) */
#define MAX_CLIENTS  1024
#define MAX_CQE      (1u << 16)
#define MAX_QP_WR    (1u << 14)
#define MAX_SGE      16
#define MAX_INLINE   256
#define MAX_RD_ATOM  16           /* IRD/ORD limit (RFC 6581 §5) */
#define MEM_ENTRIES  (1u << 16)  /* lib/mem region table (STag index space) */
#define EPHEMERAL_LO 32768
#define EPHEMERAL_HI 60999

enum obj_type {
	OBJ_PD = 1, OBJ_MR, OBJ_CQ, OBJ_SRQ, OBJ_QP, OBJ_CHAN, OBJ_CMID, OBJ_MW, OBJ_NTYPES
};

enum cm_state {
	CM_IDLE,
	CM_BOUND,
	CM_ADDR_RESOLVED,
	CM_ROUTE_RESOLVED,
	CM_LISTEN,
	CM_CONNECTING,   /* active: request sent, waiting for accept/reject */
	CM_REQ_PENDING,  /* passive: CONNECT_REQUEST delivered, waiting for accept/reject */
	CM_CONNECTED,
	CM_DISCONNECTED,
};

struct client;

struct obj {
	struct obj *znext; /* retired, waiting for the dataplane's DONE */
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
			void *map;
			size_t map_len;
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
			struct wn_server_dp_qp dp;
			struct wn_queue_ring sqc, rqc; /* consumer views, used while no dataplane */
		} qp;
		struct {
			int fd; /* server end of the event socketpair */
			uint32_t seq;
		} chan;
		struct {
			struct obj *chan;
			uint64_t cookie;
			enum cm_state state;
			struct wn_ctl_addr src, dst;
			uint32_t backlog, pending;
			uint32_t peer;     /* connected/connecting peer id */
			uint32_t listener; /* passive ids: the listener that got the request */
			uint32_t qp;
			uint32_t ird, ord;
			bool remote;       /* handled by the dataplane */
			uint32_t dp_conn;  /* passive remote ids: the dataplane's connection key */
		} id;
	} u;
};

struct client {
	struct client *next;
	int fd;
	pid_t pid;   /* SO_PEERCRED; 0 if unknown */
	uint32_t id;
	uint32_t nobjs;
};

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
	uint32_t next_free_hint;
	uint32_t next_client_id;
	uint32_t nclients;
	struct client *clients;
	uint32_t counts[OBJ_NTYPES];
	uint64_t requests, bad_requests;
	uint32_t next_qpn;
	uint8_t next_key;
	uint16_t next_port;
	struct rte_ring *to_dp, *to_ctl;
	int dp_efd;
	struct obj *zombies;
	struct wn_mem_table *mem;
};

/* epoll data: clients are tagged pointers, the listener and dp eventfd are fixed values */
#define EP_LISTEN ((uint64_t)1)
#define EP_DP     ((uint64_t)2)

/* ---------------------------------------------------------------- object table */

static struct obj *
obj_get(struct wn_server *srv, struct client *c, uint32_t h, enum obj_type t)
{
	uint32_t idx = (h & (MAX_OBJS - 1)) - 1;
	struct obj *o;

	if ((h & (MAX_OBJS - 1)) == 0 || idx >= srv->cap)
		return NULL;
	o = srv->tab[idx];
	if (o == NULL || o->handle != h || o->type != t || (c != NULL && o->owner != c))
		return NULL;
	return o;
}

static struct obj *
obj_new(struct wn_server *srv, struct client *owner, enum obj_type t)
{
	uint32_t i, idx;
	struct obj *o;

	for (i = 0; i < srv->cap; i++) {
		idx = (srv->next_free_hint + i) % srv->cap;
		if (srv->tab[idx] == NULL)
			goto found;
	}
	if (srv->cap == MAX_OBJS - 1)
		return NULL;
	{
		uint32_t ncap = srv->cap == 0 ? 256 : RTE_MIN(srv->cap * 2, MAX_OBJS - 1);
		struct obj **nt = realloc(srv->tab, ncap * sizeof(*nt));
		uint16_t *ng;

		if (nt == NULL)
			return NULL;
		srv->tab = nt;
		ng = realloc(srv->gen, ncap * sizeof(*ng));
		if (ng == NULL)
			return NULL;
		srv->gen = ng;
		memset(&nt[srv->cap], 0, (ncap - srv->cap) * sizeof(*nt));
		memset(&ng[srv->cap], 0, (ncap - srv->cap) * sizeof(*ng));
		idx = srv->cap;
		srv->cap = ncap;
	}
found:
	o = calloc(1, sizeof(*o));
	if (o == NULL)
		return NULL;
	srv->gen[idx] = (uint16_t)((srv->gen[idx] + 1) & 0xfff);
	o->handle = ((uint32_t)srv->gen[idx] << 20) | (idx + 1);
	o->type = t;
	o->owner = owner;
	srv->tab[idx] = o;
	srv->next_free_hint = idx + 1;
	srv->counts[t]++;
	owner->nobjs++;
	return o;
}

static void
obj_unlink(struct wn_server *srv, struct obj *o)
{
	uint32_t idx = (o->handle & (MAX_OBJS - 1)) - 1;

	srv->tab[idx] = NULL;
	srv->counts[o->type]--;
	o->owner->nobjs--;
	o->owner = NULL;
}

static void
obj_free(struct wn_server *srv, struct obj *o)
{
	obj_unlink(srv, o);
	free(o);
}

/* ---------------------------------------------------------------- dataplane */

static int
dp_send(struct wn_server *srv, uint32_t type, uint32_t handle, void *obj,
	struct wn_server_dp_msg **out)
{
	struct wn_server_dp_msg *m;

	if (out != NULL)
		*out = NULL;
	if (srv->to_dp == NULL)
		return 0;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->type = type;
	m->handle = handle;
	m->obj = obj;
	if (out != NULL) {
		/* caller fills u before the enqueue below becomes visible: build, then send */
		*out = m;
		return 0;
	}
	if (rte_ring_enqueue(srv->to_dp, m) != 0) {
		free(m);
		CTL_LOG(ERR, "dataplane queue full, message %u dropped", type);
		return -ENOBUFS;
	}
	return 0;
}

static int
dp_post(struct wn_server *srv, struct wn_server_dp_msg *m)
{
	if (rte_ring_enqueue(srv->to_dp, m) != 0) {
		free(m);
		return -ENOBUFS;
	}
	return 0;
}

/* ---------------------------------------------------------------- shared memory */

static void *
ring_create(uint64_t size, int *fdp)
{
	void *p;
	int fd;

	fd = memfd_create("warpnic-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)size) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
		goto err;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto err;
	*fdp = fd;
	return p;
err:
	close(fd);
	return NULL;
}

/*
 * Map the pieces of a client MR contiguously. Each piece must be a memfd sealed against
 * shrinking, so a client can never make our accesses fault (SIGBUS) by truncating it.
 */
static int
mr_map(const struct wn_ctl_reg_mr_req *r, const int *fds, void **mapp, size_t *lenp)
{
	size_t total = 0, off = 0;
	uint8_t *base;
	uint32_t i;

	for (i = 0; i < r->n_pieces; i++)
		total += r->piece[i].len;
	for (i = 0; i < r->n_pieces; i++) {
		struct stat st;
		int seals = fcntl(fds[i], F_GET_SEALS);

		if (fstat(fds[i], &st) != 0 || !S_ISREG(st.st_mode))
			return -EINVAL;
		if (seals < 0 || (seals & F_SEAL_SHRINK) == 0)
			return -EPERM;
		if ((uint64_t)st.st_size < r->piece[i].fd_offset + r->piece[i].len)
			return -EINVAL;
	}
	base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	for (i = 0; i < r->n_pieces; i++) {
		void *p = mmap(base + off, r->piece[i].len, PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_FIXED, fds[i], (off_t)r->piece[i].fd_offset);

		if (p == MAP_FAILED) {
			int err = errno;

			munmap(base, total);
			return -err;
		}
		off += r->piece[i].len;
	}
	*mapp = base;
	*lenp = total;
	return 0;
}

/* ---------------------------------------------------------------- responses */

struct resp {
	struct wn_ctl_hdr h;
	uint8_t body[WN_CTL_MSG_MAX - sizeof(struct wn_ctl_hdr)];
};

static void
reply(struct client *c, const struct wn_ctl_hdr *req, int status, const void *body,
      size_t len, const int *fds, unsigned int nfds)
{
	struct resp r;

	if (status != 0) {
		len = 0;
		nfds = 0;
	}
	wn_ctl_hdr_init(&r.h, req->op, req->seq, len);
	r.h.status = status;
	if (len > 0)
		memcpy(r.body, body, len);
	if (wn_ctl_send(c->fd, &r.h, fds, nfds) != 0)
		CTL_LOG(DEBUG, "client %u: reply to %u lost", c->id, req->op);
}

/* ---------------------------------------------------------------- CM */

static bool
addr_is_local(const struct wn_server *srv, const struct wn_ctl_addr *a)
{
	uint32_t i;

	if (a->family == WN_CTL_AF_INET && a->addr[0] == 127)
		return true;
	for (i = 0; i < srv->conf.n_addrs; i++) {
		const struct wn_ctl_addr *l = &srv->conf.addrs[i];

		if (l->family == a->family && memcmp(l->addr, a->addr, 16) == 0)
			return true;
	}
	return false;
}

static bool
addr_is_any(const struct wn_ctl_addr *a)
{
	static const uint8_t zero[16];

	return memcmp(a->addr, zero, 16) == 0;
}

static void qp_set_state(struct wn_server *srv, struct obj *qp, uint32_t state);

static void
cm_event(struct wn_server *srv, struct obj *id, uint32_t type, int status,
	 uint32_t listen_id, const struct wn_ctl_conn_param *param)
{
	struct {
		struct wn_ctl_hdr h;
		struct wn_ctl_cm_event ev;
	} m;
	struct obj *ch = id->u.id.chan;

	/*
	 * A connect that failed takes its QP to Error, flushing what was posted on it, as
	 * Linux siw does (siw_qp_cm_drop): nothing would ever complete those WRs otherwise.
	 */
	if ((type == WN_CTL_CM_EV_REJECTED || type == WN_CTL_CM_EV_CONNECT_ERROR ||
	     type == WN_CTL_CM_EV_UNREACHABLE) && id->u.id.qp != 0) {
		struct obj *qp = obj_get(srv, NULL, id->u.id.qp, OBJ_QP);

		if (qp != NULL && qp->u.qp.dp.state != WN_CTL_QPS_ERR)
			qp_set_state(srv, qp, WN_CTL_QPS_ERR);
	}
	memset(&m, 0, sizeof(m));
	wn_ctl_hdr_init(&m.h, WN_CTL_CM_EVENT, ++ch->u.chan.seq, sizeof(m.ev));
	m.ev.event = type;
	m.ev.status = status;
	m.ev.id = id->handle;
	m.ev.listen_id = listen_id;
	m.ev.cookie = id->u.id.cookie;
	m.ev.src = id->u.id.src;
	m.ev.dst = id->u.id.dst;
	if (param != NULL)
		m.ev.param = *param;
	if (wn_ctl_send(ch->u.chan.fd, &m.h, NULL, 0) != 0)
		CTL_LOG(WARNING, "CM event %u for id %#x lost", type, id->handle);
}

static bool
port_in_use(struct wn_server *srv, const struct wn_ctl_addr *a, bool listen_only)
{
	uint32_t i;

	for (i = 0; i < srv->cap; i++) {
		struct obj *o = srv->tab[i];

		if (o == NULL || o->type != OBJ_CMID || o->u.id.src.port != a->port ||
		    o->u.id.state == CM_IDLE || o->u.id.listener != 0)
			continue;
		if (listen_only && o->u.id.state != CM_LISTEN)
			continue;
		if (addr_is_any(&o->u.id.src) || addr_is_any(a) ||
		    memcmp(o->u.id.src.addr, a->addr, 16) == 0)
			return true;
	}
	return false;
}

static uint16_t
ephemeral_port(struct wn_server *srv, const struct wn_ctl_addr *a)
{
	struct wn_ctl_addr t = *a;
	int n;

	for (n = 0; n <= EPHEMERAL_HI - EPHEMERAL_LO; n++) {
		if (srv->next_port < EPHEMERAL_LO || srv->next_port > EPHEMERAL_HI)
			srv->next_port = EPHEMERAL_LO;
		t.port = srv->next_port++;
		if (!port_in_use(srv, &t, false))
			return t.port;
	}
	return 0;
}

static void
local_src_for(struct wn_server *srv, const struct wn_ctl_addr *dst, struct wn_ctl_addr *src)
{
	uint32_t i;

	memset(src, 0, sizeof(*src));
	src->family = dst->family;
	if (dst->family == WN_CTL_AF_INET && dst->addr[0] == 127) {
		memcpy(src->addr, dst->addr, 4);
		return;
	}
	for (i = 0; i < srv->conf.n_addrs; i++)
		if (srv->conf.addrs[i].family == dst->family) {
			memcpy(src->addr, srv->conf.addrs[i].addr, 16);
			return;
		}
}

static struct obj *
find_listener(struct wn_server *srv, const struct wn_ctl_addr *dst)
{
	uint32_t i;

	for (i = 0; i < srv->cap; i++) {
		struct obj *o = srv->tab[i];

		if (o == NULL || o->type != OBJ_CMID || o->u.id.state != CM_LISTEN ||
		    o->u.id.src.port != dst->port)
			continue;
		if (addr_is_any(&o->u.id.src) ||
		    (o->u.id.src.family == dst->family &&
		     memcmp(o->u.id.src.addr, dst->addr, 16) == 0))
			return o;
	}
	return NULL;
}

/* Append one CQE as the CQ's producer; a full CQ is an overrun (IBV_EVENT_CQ_ERR). */
static void
cq_push(struct obj *cq, const struct wn_queue_cqe *e)
{
	struct wn_queue_ring *r = &cq->u.cq.prod;

	if (wn_queue_prod_space(r) <= 0) {
		wn_queue_status_set(r, WN_QUEUE_ST_OVERFLOW);
		return;
	}
	memcpy(wn_queue_prod_slot(r, 0), e, sizeof(*e));
	wn_queue_prod_commit(r, 1);
}

static void
cq_notify(struct obj *cq)
{
	uint64_t cookie = cq->u.cq.dp.cookie;

	/* error completions count as solicited for ARM_SOLICITED (verbs rule) */
	if (wn_queue_cq_notify_check(&cq->u.cq.prod, true) && cq->u.cq.dp.notify_fd >= 0 &&
	    write(cq->u.cq.dp.notify_fd, &cookie, sizeof(cookie)) < 0)
		CTL_LOG(DEBUG, "CQ %#x: notification lost", cq->handle);
}

static uint8_t
wc_opcode_of(uint8_t wr)
{
	switch (wr) {
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

/* Complete every WQE of one work ring with WR_FLUSH_ERR into @p cq. */
static uint32_t
wq_flush(struct wn_queue_ring *wq, struct obj *cq, uint32_t qpn, bool recv)
{
	int64_t avail = wq->hdr != NULL ? wn_queue_cons_avail(wq) : 0;
	uint32_t i;

	if (avail <= 0)
		return 0;
	for (i = 0; i < (uint32_t)avail; i++) {
		struct wn_queue_cqe e;
		uint64_t wr_id;
		uint8_t op = 0;

		/* copy out of client-written memory before use (wn_queue.h, Trust) */
		memcpy(&wr_id, wn_queue_cons_slot(wq, i), sizeof(wr_id));
		if (!recv)
			op = ((volatile struct wn_queue_swqe *)wn_queue_cons_slot(wq, i))->opcode;
		memset(&e, 0, sizeof(e));
		e.wr_id = wr_id;
		e.status = WN_QUEUE_WC_WR_FLUSH_ERR;
		e.opcode = recv ? WN_QUEUE_WC_RECV : wc_opcode_of(op);
		e.qp_num = qpn;
		cq_push(cq, &e);
	}
	wn_queue_cons_release(wq, (uint32_t)avail);
	return (uint32_t)avail;
}

/*
 * QP in Error with no dataplane attached: the control thread is the only consumer of its
 * rings, so it flushes them itself (outstanding WRs complete with WR_FLUSH_ERR, armed CQs
 * notify), as an RNIC does when a connection is torn down (RFC 5040 §6.3: no further
 * placement; WRs complete in error). SRQ WQEs are not the QP's and stay.
 */
static void
qp_flush(struct wn_server *srv, struct obj *qp)
{
	uint32_t n;

	if (srv->to_dp != NULL)
		return;
	n = wq_flush(&qp->u.qp.sqc, qp->u.qp.scq, qp->u.qp.dp.qpn, false);
	if (n > 0)
		cq_notify(qp->u.qp.scq);
	if (qp->u.qp.srq == NULL) {
		n = wq_flush(&qp->u.qp.rqc, qp->u.qp.rcq, qp->u.qp.dp.qpn, true);
		if (n > 0)
			cq_notify(qp->u.qp.rcq);
	}
}

static void
qp_set_state(struct wn_server *srv, struct obj *qp, uint32_t state)
{
	struct wn_server_dp_msg *m;

	qp->u.qp.dp.state = state;
	if (state == WN_CTL_QPS_ERR)
		qp_flush(srv, qp);
	if (dp_send(srv, WN_SERVER_DP_QP_MODIFY, qp->handle, &qp->u.qp.dp, &m) == 0 && m != NULL) {
		m->u.qp_state = state;
		dp_post(srv, m);
	}
}

/* Bind QP @p qph (owned by @p owner) to CM id @p id, negotiating IRD/ORD. */
static int
cm_bind_qp(struct wn_server *srv, struct obj *id, uint32_t qph)
{
	struct obj *qp;

	if (qph == 0)
		return 0;
	/*
	 * The QP may belong to another device context of the same process (an application
	 * that opened the device itself and uses rdma_cm's id->verbs for nothing else).
	 */
	qp = obj_get(srv, NULL, qph, OBJ_QP);
	if (qp == NULL || (qp->owner != id->owner &&
			   (qp->owner->pid == 0 || qp->owner->pid != id->owner->pid)))
		return -EINVAL;
	if (qp->u.qp.cm_id != 0 && qp->u.qp.cm_id != id->handle)
		return -EINVAL;
	qp->u.qp.cm_id = id->handle;
	id->u.id.qp = qph;
	return 0;
}

static void
cm_established(struct wn_server *srv, struct obj *id, uint32_t peer_ird)
{
	struct obj *qp = id->u.id.qp ? obj_get(srv, NULL, id->u.id.qp, OBJ_QP) : NULL;

	id->u.id.state = CM_CONNECTED;
	if (qp != NULL) {
		/* RFC 6581 §5: our ORD may not exceed the peer's IRD */
		qp->u.qp.dp.ord = RTE_MIN(id->u.id.ord, peer_ird);
		qp->u.qp.dp.ird = id->u.id.ird;
		qp_set_state(srv, qp, WN_CTL_QPS_RTS);
	}
}

static void
cm_disconnected(struct wn_server *srv, struct obj *id, bool notify)
{
	struct obj *qp = id->u.id.qp ? obj_get(srv, NULL, id->u.id.qp, OBJ_QP) : NULL;

	if (qp != NULL && qp->u.qp.dp.state != WN_CTL_QPS_RESET)
		qp_set_state(srv, qp, WN_CTL_QPS_ERR);
	id->u.id.state = CM_DISCONNECTED;
	id->u.id.peer = 0;
	if (notify)
		cm_event(srv, id, WN_CTL_CM_EV_DISCONNECTED, 0, 0, NULL);
}

/* The peer of @p id went away or disconnected. */
static void
cm_peer_gone(struct wn_server *srv, struct obj *id)
{
	struct obj *peer = id->u.id.peer ? obj_get(srv, NULL, id->u.id.peer, OBJ_CMID) : NULL;

	if (peer == NULL)
		return;
	switch (peer->u.id.state) {
	case CM_CONNECTED:
		cm_disconnected(srv, peer, true);
		break;
	case CM_CONNECTING:
		/* active side whose request died with the passive id: TCP reset */
		peer->u.id.peer = 0;
		peer->u.id.state = CM_ROUTE_RESOLVED;
		cm_event(srv, peer, WN_CTL_CM_EV_REJECTED, -ECONNRESET, 0, NULL);
		break;
	case CM_REQ_PENDING:
		/* passive id whose initiator vanished before accept */
		peer->u.id.peer = 0;
		peer->u.id.state = CM_DISCONNECTED;
		cm_event(srv, peer, WN_CTL_CM_EV_DISCONNECTED, 0, 0, NULL);
		break;
	default:
		peer->u.id.peer = 0;
		break;
	}
}

static int
cm_connect_local(struct wn_server *srv, struct obj *id, const struct wn_ctl_conn_param *p)
{
	struct obj *l = find_listener(srv, &id->u.id.dst), *n;
	struct wn_ctl_conn_param req = *p;

	id->u.id.state = CM_CONNECTING;
	if (l == NULL || l->u.id.pending >= l->u.id.backlog) {
		/* no listener: the peer's TCP answers with RST (RFC 9293 §3.10.7.1) */
		id->u.id.state = CM_ROUTE_RESOLVED;
		cm_event(srv, id, WN_CTL_CM_EV_REJECTED, -ECONNREFUSED, 0, NULL);
		return 0;
	}
	n = obj_new(srv, l->owner, OBJ_CMID);
	if (n == NULL)
		return -ENOMEM;
	n->u.id.chan = l->u.id.chan;
	l->u.id.chan->refs++;
	n->u.id.cookie = l->u.id.cookie;
	n->u.id.state = CM_REQ_PENDING;
	n->u.id.src = id->u.id.dst;
	n->u.id.dst = id->u.id.src;
	n->u.id.listener = l->handle;
	n->u.id.peer = id->handle;
	l->u.id.pending++;
	id->u.id.peer = n->handle;
	/* The passive side sees the initiator's IRD and ORD (RFC 6581 §5, MPA Request). */
	req.flags = p->flags;
	cm_event(srv, n, WN_CTL_CM_EV_CONNECT_REQUEST, 0, l->handle, &req);
	return 0;
}

/* ---------------------------------------------------------------- object destruction */

/* Free the memory of an object nobody (client, table, dataplane) references any more. */
static void
obj_release(struct obj *o)
{
	switch (o->type) {
	case OBJ_QP:
		munmap(o->u.qp.dp.ring, o->u.qp.dp.ring_size);
		break;
	case OBJ_MR:
		munmap(o->u.mr.map, o->u.mr.map_len);
		break;
	case OBJ_CQ:
		if (o->u.cq.dp.notify_fd >= 0)
			close(o->u.cq.dp.notify_fd);
		munmap(o->u.cq.dp.ring, o->u.cq.dp.ring_size);
		break;
	case OBJ_SRQ:
		munmap(o->u.srq.dp.ring, o->u.srq.dp.ring_size);
		break;
	default:
		break;
	}
	free(o);
}

/*
 * Take an object out of the handle table. Without a dataplane its memory goes at once;
 * with one, the dataplane is told (@p dp_type) and the memory stays until its DONE.
 */
static void
obj_retire(struct wn_server *srv, struct obj *o, uint32_t dp_type, void *desc)
{
	obj_unlink(srv, o);
	if (srv->to_dp == NULL || dp_send(srv, dp_type, o->handle, desc, NULL) != 0) {
		obj_release(o);
		return;
	}
	o->znext = srv->zombies;
	srv->zombies = o;
}

static void
zombie_done(struct wn_server *srv, uint32_t handle)
{
	struct obj **pp;

	for (pp = &srv->zombies; *pp != NULL; pp = &(*pp)->znext)
		if ((*pp)->handle == handle) {
			struct obj *o = *pp;

			*pp = o->znext;
			obj_release(o);
			return;
		}
}

static void
qp_destroy(struct wn_server *srv, struct obj *qp)
{
	struct obj *id = qp->u.qp.cm_id ? obj_get(srv, NULL, qp->u.qp.cm_id, OBJ_CMID) : NULL;

	if (id != NULL && id->u.id.qp == qp->handle)
		id->u.id.qp = 0;
	qp->u.qp.pd->refs--;
	qp->u.qp.scq->refs--;
	qp->u.qp.rcq->refs--;
	if (qp->u.qp.srq != NULL)
		qp->u.qp.srq->refs--;
	obj_retire(srv, qp, WN_SERVER_DP_QP_DESTROY, &qp->u.qp.dp);
}

static void
cmid_destroy(struct wn_server *srv, struct obj *id)
{
	struct obj *l;

	if (id->u.id.state == CM_CONNECTED || id->u.id.state == CM_CONNECTING ||
	    id->u.id.state == CM_REQ_PENDING)
		cm_peer_gone(srv, id);
	if (id->u.id.state == CM_REQ_PENDING && id->u.id.listener != 0) {
		l = obj_get(srv, NULL, id->u.id.listener, OBJ_CMID);
		if (l != NULL && l->u.id.pending > 0)
			l->u.id.pending--;
	}
	if (id->u.id.qp != 0) {
		struct obj *qp = obj_get(srv, NULL, id->u.id.qp, OBJ_QP);

		if (qp != NULL)
			qp->u.qp.cm_id = 0;
	}
	/* the dataplane knows CM ids by handle only: no DONE needed */
	if (id->u.id.remote || id->u.id.state == CM_LISTEN) {
		struct wn_server_dp_msg *m;

		if (dp_send(srv, WN_SERVER_DP_CM_DESTROY, id->handle, NULL, &m) == 0 && m != NULL) {
			m->u.cm.id = id->handle;
			m->u.cm.conn = id->u.id.dp_conn;
			dp_post(srv, m);
		}
	}
	id->u.id.chan->refs--;
	obj_free(srv, id);
}

/*
 * Destroy the lib/mem entry at @p stag's index whatever its key is now: fast-register and
 * bind WQEs give FRMRs and windows new keys (RFC 5040 §2.1 "STag") on the dataplane.
 */
static int
stag_destroy(struct wn_server *srv, uint32_t stag)
{
	struct wn_mem_info info;
	int ret = -ENOENT, tries;

	for (tries = 0; tries < 256 && ret == -ENOENT; tries++) {
		if (wn_mem_info(srv->mem, stag, &info) != 0)
			return -ENOENT;
		ret = wn_mem_destroy(srv->mem, (stag & ~0xffu) | info.key);
	}
	return ret;
}

static int
mr_destroy(struct wn_server *srv, struct obj *mr)
{
	/* invalid for every lookup, and no lcore still inside it (QSBR grace period) */
	int ret = stag_destroy(srv, mr->u.mr.dp.stag);

	if (ret == -EBUSY)
		return ret; /* windows are still bound to it */
	mr->u.mr.pd->refs--;
	obj_retire(srv, mr, WN_SERVER_DP_MR_DEREG, &mr->u.mr.dp);
	return 0;
}

static void
mw_destroy(struct wn_server *srv, struct obj *mw)
{
	stag_destroy(srv, mw->u.mw.stag); /* unbinds it; after the grace period */
	mw->u.mw.pd->refs--;
	obj_free(srv, mw);
}

static void
cq_destroy(struct wn_server *srv, struct obj *cq)
{
	obj_retire(srv, cq, WN_SERVER_DP_CQ_DESTROY, &cq->u.cq.dp);
}

static void
srq_destroy(struct wn_server *srv, struct obj *srq)
{
	srq->u.srq.pd->refs--;
	obj_retire(srv, srq, WN_SERVER_DP_SRQ_DESTROY, &srq->u.srq.dp);
}

static void
pd_destroy(struct wn_server *srv, struct obj *pd)
{
	wn_mem_pd_free(srv->mem, pd->u.pd.num);
	obj_free(srv, pd);
}

static void
chan_destroy(struct wn_server *srv, struct obj *ch)
{
	close(ch->u.chan.fd);
	obj_free(srv, ch);
}

/* Destroy everything @p c owns, dependents first (socket EOF or client death). */
static void
client_reclaim(struct wn_server *srv, struct client *c)
{
	static const enum obj_type order[] = {OBJ_CMID, OBJ_QP, OBJ_MW, OBJ_SRQ, OBJ_CQ, OBJ_MR,
					      OBJ_PD, OBJ_CHAN};
	size_t k;
	uint32_t i;

	for (k = 0; k < RTE_DIM(order); k++) {
		for (i = 0; i < srv->cap; i++) {
			struct obj *o = srv->tab[i];

			if (o == NULL || o->owner != c || o->type != order[k])
				continue;
			switch (o->type) {
			case OBJ_CMID: cmid_destroy(srv, o); break;
			case OBJ_QP: qp_destroy(srv, o); break;
			case OBJ_SRQ: srq_destroy(srv, o); break;
			case OBJ_CQ: cq_destroy(srv, o); break;
			case OBJ_MW: mw_destroy(srv, o); break;
			case OBJ_MR: mr_destroy(srv, o); break;
			case OBJ_PD: pd_destroy(srv, o); break;
			case OBJ_CHAN: chan_destroy(srv, o); break;
			default: break;
			}
		}
	}
}

/* ---------------------------------------------------------------- request handlers */

static uint64_t
node_guid(const struct wn_server *srv)
{
	const uint8_t *m = srv->conf.mac;
	/* EUI-64 from the MAC, as Linux siw does for its node GUID */
	uint8_t g[8] = {m[0] ^ 2, m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]};
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = (v << 8) | g[i];
	return v;
}

static void
query_device(struct wn_server *srv, struct wn_ctl_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", WN_VERSION);
	/* GUIDs in network order, as verbs reports them */
	a->node_guid = __builtin_bswap64(node_guid(srv));
	a->sys_image_guid = a->node_guid;
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = WN_CTL_PAGE_SIZE;
	a->vendor_id = 0x626d74;   /* same "unknown vendor" Linux siw reports */
	a->vendor_part_id = 0x7770;
	a->hw_ver = 0;
	a->max_qp = 4096;
	a->max_qp_wr = MAX_QP_WR;
	a->max_sge = MAX_SGE;
	a->max_cq = 4096;
	a->max_cqe = MAX_CQE;
	a->max_mr = 65536;
	a->max_mw = 65536;
	a->max_pd = 4096;
	a->max_qp_rd_atom = MAX_RD_ATOM;
	a->max_qp_init_rd_atom = MAX_RD_ATOM;
	a->max_srq = 1024;
	a->max_srq_wr = MAX_QP_WR;
	a->max_srq_sge = MAX_SGE;
	a->max_inline_data = MAX_INLINE;
	a->phys_port_cnt = 1;
}

static uint32_t
ib_mtu_enum(uint32_t mtu)
{
	/* IBV_MTU_256 = 1 ... IBV_MTU_4096 = 5: largest not above the L3 MTU */
	uint32_t e = 1, v = 256;

	while (e < 5 && v * 2 <= mtu) {
		v *= 2;
		e++;
	}
	return e;
}

static void
query_port(struct wn_server *srv, struct wn_ctl_port_attr *a)
{
	uint32_t i;

	memset(a, 0, sizeof(*a));
	a->state = 4; /* ACTIVE */
	a->mtu_bytes = srv->conf.mtu;
	a->max_mtu = ib_mtu_enum(srv->conf.mtu);
	a->active_mtu = a->max_mtu;
	a->max_msg_sz = 1u << 31;
	a->speed_mbps = 10000;
	memcpy(a->mac, srv->conf.mac, 6);
	for (i = 0; i < srv->conf.n_addrs; i++) {
		const struct wn_ctl_addr *ad = &srv->conf.addrs[i];

		if (ad->family == WN_CTL_AF_INET) {
			/* IPv4-mapped IPv6 (RFC 4291 §2.5.5.2), as iWARP GIDs are built */
			a->gid[i][10] = 0xff;
			a->gid[i][11] = 0xff;
			memcpy(&a->gid[i][12], ad->addr, 4);
		} else {
			memcpy(a->gid[i], ad->addr, 16);
		}
	}
	a->n_gids = srv->conf.n_addrs;
	if (a->n_gids == 0) {
		/* no address configured: keep GID 0 queryable, derived from the MAC */
		uint64_t g = node_guid(srv);

		a->gid[0][0] = 0xfe;
		a->gid[0][1] = 0x80;
		for (i = 0; i < 8; i++)
			a->gid[0][8 + i] = (uint8_t)(g >> (56 - 8 * i));
		a->n_gids = 1;
	}
}

static int
h_reg_mr(struct wn_server *srv, struct client *c, const struct wn_ctl_reg_mr_req *r,
	 const int *fds, struct wn_ctl_reg_mr_resp *out)
{
	struct obj *pd = obj_get(srv, c, r->pd, OBJ_PD), *mr;
	void *map = NULL;
	size_t len = 0;
	int ret;

	if (pd == NULL)
		return -EINVAL;
	ret = mr_map(r, fds, &map, &len);
	if (ret != 0)
		return ret;
	mr = obj_new(srv, c, OBJ_MR);
	if (mr == NULL) {
		munmap(map, len);
		return -ENOMEM;
	}
	mr->u.mr.dp.base = (uint8_t *)map + (r->addr & (WN_CTL_PAGE_SIZE - 1));
	/* STag = 24-bit table index + 8-bit key (RFC 5040 §2.1 "STag"), from lib/mem */
	if (r->flags & WN_CTL_MR_F_FAST_REG)
		ret = wn_mem_frmr_alloc(srv->mem, pd->u.pd.num, mr->u.mr.dp.base, r->length,
					srv->next_key++, &mr->u.mr.dp.stag);
	else
		ret = wn_mem_mr_reg(srv->mem, pd->u.pd.num, mr->u.mr.dp.base, r->length,
				    r->iova, r->access, srv->next_key++, &mr->u.mr.dp.stag);
	if (ret != 0) {
		obj_free(srv, mr);
		munmap(map, len);
		return ret;
	}
	pd->refs++;
	mr->u.mr.pd = pd;
	mr->u.mr.map = map;
	mr->u.mr.map_len = len;
	mr->u.mr.dp.handle = mr->handle;
	mr->u.mr.dp.pd = pd->u.pd.num;
	mr->u.mr.dp.access = r->access;
	mr->u.mr.dp.iova = r->iova;
	mr->u.mr.dp.length = r->length;
	dp_send(srv, WN_SERVER_DP_MR_REG, mr->handle, &mr->u.mr.dp, NULL);
	out->mr = mr->handle;
	out->lkey = mr->u.mr.dp.stag;
	out->rkey = mr->u.mr.dp.stag;
	out->rsvd = 0;
	return 0;
}

static int
h_alloc_mw(struct wn_server *srv, struct client *c, const struct wn_ctl_alloc_mw_req *r,
	   struct wn_ctl_alloc_mw_resp *out)
{
	struct obj *pd = obj_get(srv, c, r->pd, OBJ_PD), *mw;
	int ret;

	if (pd == NULL)
		return -EINVAL;
	mw = obj_new(srv, c, OBJ_MW);
	if (mw == NULL)
		return -ENOMEM;
	ret = wn_mem_mw_alloc(srv->mem, pd->u.pd.num, (int)r->type, srv->next_key++,
			      &mw->u.mw.stag);
	if (ret != 0) {
		obj_free(srv, mw);
		return ret;
	}
	pd->refs++;
	mw->u.mw.pd = pd;
	out->mw = mw->handle;
	out->rkey = mw->u.mw.stag;
	return 0;
}

static int
h_create_cq(struct wn_server *srv, struct client *c, const struct wn_ctl_create_cq_req *r,
	    const int *fds, unsigned int nfds, struct wn_ctl_ring_resp *out, int *ring_fd)
{
	struct obj *cq;
	uint32_t depth;
	uint64_t size;
	void *ring;

	if (r->cqe > MAX_CQE)
		return -EINVAL;
	depth = server_ring_cq_depth(r->cqe);
	size = server_ring_cq_size(depth);
	ring = ring_create(size, ring_fd);
	if (ring == NULL)
		return -errno;
	server_ring_cq_init(ring, depth);
	cq = obj_new(srv, c, OBJ_CQ);
	if (cq == NULL) {
		munmap(ring, size);
		close(*ring_fd);
		return -ENOMEM;
	}
	wn_queue_prod_attach(&cq->u.cq.prod, ring, size, WN_QUEUE_KIND_CQ);
	cq->u.cq.dp.handle = cq->handle;
	cq->u.cq.dp.depth = depth;
	cq->u.cq.dp.ring = ring;
	cq->u.cq.dp.ring_size = size;
	cq->u.cq.dp.cookie = r->cookie;
	cq->u.cq.dp.notify_fd = -1;
	if (nfds == 1) {
		int fl = fcntl(fds[0], F_GETFL);

		if (fl >= 0)
			fcntl(fds[0], F_SETFL, fl | O_NONBLOCK);
		cq->u.cq.dp.notify_fd = fcntl(fds[0], F_DUPFD_CLOEXEC, 3);
	}
	dp_send(srv, WN_SERVER_DP_CQ_CREATE, cq->handle, &cq->u.cq.dp, NULL);
	memset(out, 0, sizeof(*out));
	out->handle = cq->handle;
	out->depth[0] = depth;
	out->ring_size = size;
	return 0;
}

static int
h_create_srq(struct wn_server *srv, struct client *c, const struct wn_ctl_create_srq_req *r,
	     struct wn_ctl_ring_resp *out, int *ring_fd)
{
	struct obj *pd = obj_get(srv, c, r->pd, OBJ_PD), *srq;
	uint32_t depth;
	uint64_t size;
	void *ring;

	if (pd == NULL || r->max_wr > MAX_QP_WR || r->max_sge > MAX_SGE)
		return -EINVAL;
	depth = server_ring_wq_depth(r->max_wr);
	size = server_ring_srq_size(depth, RTE_MAX(r->max_sge, 1u));
	ring = ring_create(size, ring_fd);
	if (ring == NULL)
		return -errno;
	server_ring_srq_init(ring, depth, RTE_MAX(r->max_sge, 1u));
	srq = obj_new(srv, c, OBJ_SRQ);
	if (srq == NULL) {
		munmap(ring, size);
		close(*ring_fd);
		return -ENOMEM;
	}
	pd->refs++;
	srq->u.srq.pd = pd;
	srq->u.srq.dp = (struct wn_server_dp_srq){
		.handle = srq->handle, .pd = pd->u.pd.num, .depth = depth,
		.max_sge = RTE_MAX(r->max_sge, 1u), .ring = ring, .ring_size = size};
	dp_send(srv, WN_SERVER_DP_SRQ_CREATE, srq->handle, &srq->u.srq.dp, NULL);
	memset(out, 0, sizeof(*out));
	out->handle = srq->handle;
	out->depth[0] = depth;
	out->sge[0] = srq->u.srq.dp.max_sge;
	out->ring_size = size;
	return 0;
}

static int
h_create_qp(struct wn_server *srv, struct client *c, const struct wn_ctl_create_qp_req *r,
	    struct wn_ctl_ring_resp *out, int *ring_fd)
{
	struct obj *pd = obj_get(srv, c, r->pd, OBJ_PD);
	struct obj *scq = obj_get(srv, c, r->send_cq, OBJ_CQ);
	struct obj *rcq = obj_get(srv, c, r->recv_cq, OBJ_CQ);
	struct obj *srq = r->srq ? obj_get(srv, c, r->srq, OBJ_SRQ) : NULL;
	struct wn_server_dp_qp *d;
	uint32_t sqd, rqd, ssge, rsge;
	struct obj *qp;
	uint64_t size;
	void *ring;

	if (pd == NULL || scq == NULL || rcq == NULL || (r->srq != 0 && srq == NULL))
		return -EINVAL;
	if (r->max_send_wr > MAX_QP_WR || r->max_recv_wr > MAX_QP_WR ||
	    r->max_send_sge > MAX_SGE || r->max_recv_sge > MAX_SGE ||
	    r->max_inline_data > MAX_INLINE)
		return -EINVAL;
	sqd = server_ring_wq_depth(r->max_send_wr);
	rqd = srq != NULL ? 0 : server_ring_wq_depth(r->max_recv_wr);
	ssge = RTE_MAX(r->max_send_sge, 1u);
	rsge = RTE_MAX(r->max_recv_sge, 1u);
	size = server_ring_qp_size(sqd, ssge, rqd, rsge, r->max_inline_data);
	ring = ring_create(size, ring_fd);
	if (ring == NULL)
		return -errno;
	server_ring_qp_init(ring, sqd, ssge, rqd, rsge, r->max_inline_data);
	qp = obj_new(srv, c, OBJ_QP);
	if (qp == NULL) {
		munmap(ring, size);
		close(*ring_fd);
		return -ENOMEM;
	}
	pd->refs++;
	scq->refs++;
	rcq->refs++;
	if (srq != NULL)
		srq->refs++;
	qp->u.qp.pd = pd;
	qp->u.qp.scq = scq;
	qp->u.qp.rcq = rcq;
	qp->u.qp.srq = srq;
	qp->u.qp.cookie = r->cookie;
	{
		uint64_t off = wn_queue_qp_rq_offset(sqd, ssge, r->max_inline_data);

		wn_queue_cons_attach(&qp->u.qp.sqc, ring, off, WN_QUEUE_KIND_SQ);
		if (rqd != 0)
			wn_queue_cons_attach(&qp->u.qp.rqc, (uint8_t *)ring + off, size - off,
					     WN_QUEUE_KIND_RQ);
	}
	d = &qp->u.qp.dp;
	d->handle = qp->handle;
	d->qpn = ++srv->next_qpn & 0xffffff;
	d->pd = pd->u.pd.num;
	d->state = WN_CTL_QPS_RESET;
	d->send_cq = &scq->u.cq.dp;
	d->recv_cq = &rcq->u.cq.dp;
	d->srq = srq != NULL ? &srq->u.srq.dp : NULL;
	d->sq_depth = sqd;
	d->rq_depth = rqd;
	d->max_send_sge = ssge;
	d->max_recv_sge = rsge;
	d->max_inline = r->max_inline_data;
	d->sq_sig_all = r->sq_sig_all;
	d->ird = MAX_RD_ATOM;
	d->ord = MAX_RD_ATOM;
	d->ring = ring;
	d->ring_size = size;
	dp_send(srv, WN_SERVER_DP_QP_CREATE, qp->handle, d, NULL);
	memset(out, 0, sizeof(*out));
	out->handle = qp->handle;
	out->qpn = d->qpn;
	out->depth[0] = sqd;
	out->depth[1] = rqd;
	out->sge[0] = ssge;
	out->sge[1] = rsge;
	out->max_inline = d->max_inline;
	out->ring_size = size;
	return 0;
}

static void
qp_attr(const struct obj *qp, struct wn_ctl_qp_attr *a)
{
	const struct wn_server_dp_qp *d = &qp->u.qp.dp;

	memset(a, 0, sizeof(*a));
	a->qp_state = d->state;
	a->access = qp->u.qp.access;
	a->max_rd_atomic = d->ord;
	a->max_dest_rd_atomic = d->ird;
	a->max_send_wr = d->sq_depth;
	a->max_recv_wr = d->rq_depth;
	a->max_send_sge = d->max_send_sge;
	a->max_recv_sge = d->max_recv_sge;
	a->max_inline_data = d->max_inline;
	a->qpn = d->qpn;
}

static int
h_modify_qp(struct wn_server *srv, struct client *c, const struct wn_ctl_modify_qp_req *r,
	    struct wn_ctl_qp_attr *out)
{
	struct obj *qp = obj_get(srv, c, r->qp, OBJ_QP);

	if (qp == NULL)
		return -EINVAL;
	if ((r->mask & WN_CTL_QP_MAX_QP_RD_ATOMIC) != 0) {
		if (r->max_rd_atomic > MAX_RD_ATOM)
			return -EINVAL;
		qp->u.qp.dp.ord = r->max_rd_atomic;
	}
	if ((r->mask & WN_CTL_QP_MAX_DEST_RD_ATOMIC) != 0) {
		if (r->max_dest_rd_atomic > MAX_RD_ATOM)
			return -EINVAL;
		qp->u.qp.dp.ird = r->max_dest_rd_atomic;
	}
	if ((r->mask & WN_CTL_QP_ACCESS_FLAGS) != 0)
		qp->u.qp.access = r->access;
	if ((r->mask & WN_CTL_QP_STATE) != 0 && r->qp_state != qp->u.qp.dp.state) {
		uint32_t cur = qp->u.qp.dp.state, to = r->qp_state;

		/*
		 * RFC 5040 §6.2 / the verbs QP state diagram: RESET → INIT → RTR → RTS; any
		 * state → ERR or RESET; an iWARP QP reaches RTS through the CM (connection set
		 * up) or directly when the application drives the transitions itself.
		 */
		if (!(to == WN_CTL_QPS_ERR || to == WN_CTL_QPS_RESET ||
		      (cur == WN_CTL_QPS_RESET && to == WN_CTL_QPS_INIT) ||
		      (cur == WN_CTL_QPS_INIT && to == WN_CTL_QPS_RTR) ||
		      (cur == WN_CTL_QPS_INIT && to == WN_CTL_QPS_INIT) ||
		      (cur == WN_CTL_QPS_RTR && to == WN_CTL_QPS_RTS) ||
		      (cur == WN_CTL_QPS_RTS && to == WN_CTL_QPS_SQD) ||
		      (cur == WN_CTL_QPS_SQD && to == WN_CTL_QPS_RTS)))
			return -EINVAL;
		qp_set_state(srv, qp, to);
	}
	qp_attr(qp, out);
	return 0;
}

/*
 * With a dataplane, 127.0.0.0/8 stands for the port's first IPv4 address: the dataplane's
 * TCP/IP stack owns the port's addresses only (and loops segments between them back).
 */
static void
loopback_to_port(const struct wn_server *srv, struct wn_ctl_addr *a)
{
	uint32_t i;

	if (srv->to_dp == NULL || a->family != WN_CTL_AF_INET || a->addr[0] != 127)
		return;
	for (i = 0; i < srv->conf.n_addrs; i++)
		if (srv->conf.addrs[i].family == WN_CTL_AF_INET) {
			memcpy(a->addr, srv->conf.addrs[i].addr, 4);
			return;
		}
}

static int
h_cm_addr(struct wn_server *srv, struct client *c, uint16_t op,
	  const struct wn_ctl_cm_addr_req *r, struct wn_ctl_cm_addr_resp *out)
{
	struct obj *id = obj_get(srv, c, r->id, OBJ_CMID);
	struct wn_ctl_addr a;

	if (id == NULL)
		return -EINVAL;
	switch (op) {
	case WN_CTL_CM_BIND:
		if (id->u.id.state != CM_IDLE)
			return -EINVAL;
		a = r->src;
		if (!addr_is_any(&a) && !addr_is_local(srv, &a))
			return -EADDRNOTAVAIL;
		loopback_to_port(srv, &a);
		if (a.port == 0)
			a.port = ephemeral_port(srv, &a);
		else if (port_in_use(srv, &a, false))
			return -EADDRINUSE;
		if (a.port == 0)
			return -EADDRINUSE;
		id->u.id.src = a;
		id->u.id.state = CM_BOUND;
		break;
	case WN_CTL_CM_RESOLVE_ADDR:
		if (id->u.id.state != CM_IDLE && id->u.id.state != CM_BOUND)
			return -EINVAL;
		id->u.id.dst = r->dst;
		if (id->u.id.state == CM_IDLE) {
			if (r->src.family != WN_CTL_AF_NONE)
				a = r->src;
			else
				local_src_for(srv, &r->dst, &a);
			a.port = ephemeral_port(srv, &a);
			id->u.id.src = a;
		}
		if (!addr_is_local(srv, &r->dst) && srv->to_dp == NULL) {
			/* neighbour resolution is the dataplane's; none attached */
			cm_event(srv, id, WN_CTL_CM_EV_ADDR_ERROR, -EHOSTUNREACH, 0, NULL);
			break;
		}
		/*
		 * With a dataplane every connection runs over it, also between two clients
		 * of this instance (the dataplane loops such segments back); loopback
		 * addresses mean the port's own address then.
		 */
		id->u.id.remote = srv->to_dp != NULL || !addr_is_local(srv, &r->dst);
		loopback_to_port(srv, &id->u.id.dst);
		loopback_to_port(srv, &id->u.id.src);
		id->u.id.state = CM_ADDR_RESOLVED;
		cm_event(srv, id, WN_CTL_CM_EV_ADDR_RESOLVED, 0, 0, NULL);
		break;
	case WN_CTL_CM_RESOLVE_ROUTE:
		if (id->u.id.state != CM_ADDR_RESOLVED)
			return -EINVAL;
		id->u.id.state = CM_ROUTE_RESOLVED;
		cm_event(srv, id, WN_CTL_CM_EV_ROUTE_RESOLVED, 0, 0, NULL);
		break;
	case WN_CTL_CM_LISTEN:
		if (id->u.id.state != CM_BOUND)
			return -EINVAL;
		if (port_in_use(srv, &id->u.id.src, true))
			return -EADDRINUSE;
		id->u.id.state = CM_LISTEN;
		id->u.id.backlog = r->timeout_ms == 0 ? 128 : RTE_MIN(r->timeout_ms, 4096u);
		if (srv->to_dp != NULL) {
			struct wn_server_dp_msg *m;

			if (dp_send(srv, WN_SERVER_DP_CM_LISTEN, id->handle, NULL, &m) == 0 &&
			    m != NULL) {
				m->u.cm.id = id->handle;
				m->u.cm.src = id->u.id.src;
				dp_post(srv, m);
			}
		}
		break;
	default:
		return -EINVAL;
	}
	out->src = id->u.id.src;
	out->dst = id->u.id.dst;
	return 0;
}

static int
cm_forward(struct wn_server *srv, uint32_t type, struct obj *id,
	   const struct wn_ctl_cm_conn_req *r)
{
	struct wn_server_dp_msg *m;
	int ret = dp_send(srv, type, id->handle, NULL, &m);

	if (ret != 0 || m == NULL)
		return ret != 0 ? ret : -ENOTCONN;
	m->u.cm.id = id->handle;
	m->u.cm.conn = id->u.id.dp_conn;
	m->u.cm.src = id->u.id.src;
	m->u.cm.dst = id->u.id.dst;
	if (r != NULL) {
		m->u.cm.qp = r->qp;
		m->u.cm.param = r->param;
	}
	return dp_post(srv, m);
}

static int
h_cm_conn(struct wn_server *srv, struct client *c, uint16_t op,
	  const struct wn_ctl_cm_conn_req *r)
{
	struct obj *id = obj_get(srv, c, r->id, OBJ_CMID), *peer;
	int ret;

	if (id == NULL)
		return -EINVAL;
	switch (op) {
	case WN_CTL_CM_CONNECT:
		if (id->u.id.state != CM_ROUTE_RESOLVED)
			return -EINVAL;
		ret = cm_bind_qp(srv, id, r->qp);
		if (ret != 0)
			return ret;
		id->u.id.ird = RTE_MIN(r->param.ird, (uint32_t)MAX_RD_ATOM);
		id->u.id.ord = RTE_MIN(r->param.ord, (uint32_t)MAX_RD_ATOM);
		if (id->u.id.remote) {
			id->u.id.state = CM_CONNECTING;
			return cm_forward(srv, WN_SERVER_DP_CM_CONNECT, id, r);
		}
		return cm_connect_local(srv, id, &r->param);
	case WN_CTL_CM_ACCEPT:
		if (id->u.id.state != CM_REQ_PENDING)
			return -EINVAL;
		ret = cm_bind_qp(srv, id, r->qp);
		if (ret != 0)
			return ret;
		id->u.id.ird = RTE_MIN(r->param.ird, (uint32_t)MAX_RD_ATOM);
		id->u.id.ord = RTE_MIN(r->param.ord, (uint32_t)MAX_RD_ATOM);
		if (id->u.id.remote) {
			struct obj *l = obj_get(srv, NULL, id->u.id.listener, OBJ_CMID);

			if (l != NULL && l->u.id.pending > 0)
				l->u.id.pending--;
			/* ESTABLISHED comes from the dataplane once the MPA Reply is out */
			return cm_forward(srv, WN_SERVER_DP_CM_ACCEPT, id, r);
		}
		peer = obj_get(srv, NULL, id->u.id.peer, OBJ_CMID);
		if (peer == NULL || peer->u.id.state != CM_CONNECTING)
			return -ECONNRESET;
		{
			struct obj *l = obj_get(srv, NULL, id->u.id.listener, OBJ_CMID);

			if (l != NULL && l->u.id.pending > 0)
				l->u.id.pending--;
		}
		/* MPA Reply carries the responder's private data and IRD/ORD (RFC 6581 §5) */
		cm_established(srv, id, peer->u.id.ird);
		cm_established(srv, peer, id->u.id.ird);
		cm_event(srv, id, WN_CTL_CM_EV_ESTABLISHED, 0, 0, NULL);
		cm_event(srv, peer, WN_CTL_CM_EV_ESTABLISHED, 0, 0, &r->param);
		return 0;
	case WN_CTL_CM_REJECT:
		if (id->u.id.state != CM_REQ_PENDING)
			return -EINVAL;
		{
			struct obj *l = obj_get(srv, NULL, id->u.id.listener, OBJ_CMID);

			if (l != NULL && l->u.id.pending > 0)
				l->u.id.pending--;
		}
		if (id->u.id.remote) {
			id->u.id.state = CM_DISCONNECTED;
			return cm_forward(srv, WN_SERVER_DP_CM_REJECT, id, r);
		}
		peer = obj_get(srv, NULL, id->u.id.peer, OBJ_CMID);
		id->u.id.state = CM_DISCONNECTED;
		id->u.id.peer = 0;
		if (peer != NULL && peer->u.id.state == CM_CONNECTING) {
			struct wn_ctl_conn_param p;

			/* MPA Reject frame: private data, R bit (RFC 5044 §7.1.1) */
			memset(&p, 0, sizeof(p));
			p.pd_len = r->param.pd_len;
			memcpy(p.pd, r->param.pd, p.pd_len);
			peer->u.id.state = CM_ROUTE_RESOLVED;
			peer->u.id.peer = 0;
			cm_event(srv, peer, WN_CTL_CM_EV_REJECTED, -ECONNREFUSED, 0, &p);
		}
		return 0;
	default:
		return -EINVAL;
	}
}

static int
h_cm_disconnect(struct wn_server *srv, struct client *c, uint32_t h)
{
	struct obj *id = obj_get(srv, c, h, OBJ_CMID);

	if (id == NULL)
		return -EINVAL;
	if (id->u.id.state != CM_CONNECTED && id->u.id.state != CM_CONNECTING)
		return -EINVAL;
	if (id->u.id.remote) {
		int ret = cm_forward(srv, WN_SERVER_DP_CM_DISCONNECT, id, NULL);

		cm_disconnected(srv, id, false);
		return ret;
	}
	cm_peer_gone(srv, id);
	/* both sides see DISCONNECTED, like a graceful TCP close */
	cm_disconnected(srv, id, true);
	return 0;
}

static int
h_cm_create_channel(struct wn_server *srv, struct client *c, struct wn_ctl_handle *out,
		    int *cfd)
{
	struct obj *ch;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return -errno;
	ch = obj_new(srv, c, OBJ_CHAN);
	if (ch == NULL) {
		close(sv[0]);
		close(sv[1]);
		return -ENOMEM;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	shutdown(sv[1], SHUT_WR);
	ch->u.chan.fd = sv[0];
	*cfd = sv[1];
	out->handle = ch->handle;
	out->rsvd = 0;
	return 0;
}

static int
h_destroy(struct wn_server *srv, struct client *c, uint16_t op, uint32_t h)
{
	static const enum obj_type types[WN_CTL_OP_MAX] = {
		[WN_CTL_DEALLOC_PD] = OBJ_PD, [WN_CTL_DEREG_MR] = OBJ_MR,
		[WN_CTL_DESTROY_CQ] = OBJ_CQ, [WN_CTL_DESTROY_SRQ] = OBJ_SRQ,
		[WN_CTL_DESTROY_QP] = OBJ_QP, [WN_CTL_CM_DESTROY_CHANNEL] = OBJ_CHAN,
		[WN_CTL_CM_DESTROY_ID] = OBJ_CMID, [WN_CTL_DEALLOC_MW] = OBJ_MW,
	};
	struct obj *o = obj_get(srv, c, h, types[op]);

	if (o == NULL)
		return -EINVAL;
	if (o->refs != 0)
		return -EBUSY;
	switch (o->type) {
	case OBJ_PD: pd_destroy(srv, o); break;
	case OBJ_MR: return mr_destroy(srv, o);
	case OBJ_MW: mw_destroy(srv, o); break;
	case OBJ_CQ: cq_destroy(srv, o); break;
	case OBJ_SRQ: srq_destroy(srv, o); break;
	case OBJ_QP: qp_destroy(srv, o); break;
	case OBJ_CHAN: chan_destroy(srv, o); break;
	case OBJ_CMID: cmid_destroy(srv, o); break;
	default: return -EINVAL;
	}
	return 0;
}

/* Handle one validated request; always replies. */
static void
handle(struct wn_server *srv, struct client *c, const struct wn_ctl_hdr *h,
       const void *body, const int *fds, unsigned int nfds)
{
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
	} o;
	const struct wn_ctl_op_info *info = wn_ctl_op_info(h->op);
	int out_fd = -1, ret = 0;

	memset(&o, 0, sizeof(o));
	switch (h->op) {
	case WN_CTL_HELLO:
		o.hello.server_version = WN_CTL_VERSION;
		o.hello.client_id = c->id;
		snprintf(o.hello.dev_name, sizeof(o.hello.dev_name), "%s", srv->dev_name);
		CTL_LOG(DEBUG, "client %u: hello from pid %u",
			c->id, ((const struct wn_ctl_hello_req *)body)->pid);
		break;
	case WN_CTL_QUERY_DEVICE:
		query_device(srv, &o.dev);
		break;
	case WN_CTL_QUERY_PORT:
		if (((const struct wn_ctl_port_req *)body)->port != 1)
			ret = -EINVAL;
		else
			query_port(srv, &o.port);
		break;
	case WN_CTL_ALLOC_PD: {
		int num = wn_mem_pd_alloc(srv->mem);
		struct obj *pd = num > 0 ? obj_new(srv, c, OBJ_PD) : NULL;

		if (pd == NULL) {
			if (num > 0)
				wn_mem_pd_free(srv->mem, (uint32_t)num);
			ret = num > 0 ? -ENOMEM : num;
		} else {
			pd->u.pd.num = (uint32_t)num;
			o.hd.handle = pd->handle;
		}
		break;
	}
	case WN_CTL_REG_MR:
		ret = h_reg_mr(srv, c, body, fds, &o.mr);
		break;
	case WN_CTL_ALLOC_MW:
		ret = h_alloc_mw(srv, c, body, &o.mw);
		break;
	case WN_CTL_CREATE_CQ:
		ret = h_create_cq(srv, c, body, fds, nfds, &o.ring, &out_fd);
		break;
	case WN_CTL_CREATE_SRQ:
		ret = h_create_srq(srv, c, body, &o.ring, &out_fd);
		break;
	case WN_CTL_MODIFY_SRQ: {
		const struct wn_ctl_modify_srq_req *r = body;
		struct obj *srq = obj_get(srv, c, r->srq, OBJ_SRQ);

		if (srq == NULL || (r->mask & 1) != 0)
			ret = srq == NULL ? -EINVAL : -EOPNOTSUPP;
		break;
	}
	case WN_CTL_CREATE_QP:
		ret = h_create_qp(srv, c, body, &o.ring, &out_fd);
		break;
	case WN_CTL_MODIFY_QP:
		ret = h_modify_qp(srv, c, body, &o.qp);
		break;
	case WN_CTL_QUERY_QP: {
		struct obj *qp = obj_get(srv, c, ((const struct wn_ctl_handle *)body)->handle,
					 OBJ_QP);

		if (qp == NULL)
			ret = -EINVAL;
		else
			qp_attr(qp, &o.qp);
		break;
	}
	case WN_CTL_CM_CREATE_CHANNEL:
		ret = h_cm_create_channel(srv, c, &o.hd, &out_fd);
		break;
	case WN_CTL_CM_CREATE_ID: {
		const struct wn_ctl_cm_create_id_req *r = body;
		struct obj *ch = obj_get(srv, c, r->channel, OBJ_CHAN), *id;

		if (ch == NULL) {
			ret = -EINVAL;
			break;
		}
		id = obj_new(srv, c, OBJ_CMID);
		if (id == NULL) {
			ret = -ENOMEM;
			break;
		}
		id->u.id.chan = ch;
		ch->refs++;
		id->u.id.cookie = r->cookie;
		o.hd.handle = id->handle;
		break;
	}
	case WN_CTL_CM_BIND:
	case WN_CTL_CM_RESOLVE_ADDR:
	case WN_CTL_CM_RESOLVE_ROUTE:
	case WN_CTL_CM_LISTEN:
		ret = h_cm_addr(srv, c, h->op, body, &o.addr);
		break;
	case WN_CTL_CM_CONNECT:
	case WN_CTL_CM_ACCEPT:
	case WN_CTL_CM_REJECT:
		ret = h_cm_conn(srv, c, h->op, body);
		break;
	case WN_CTL_CM_DISCONNECT:
		ret = h_cm_disconnect(srv, c, ((const struct wn_ctl_handle *)body)->handle);
		break;
	case WN_CTL_CM_MIGRATE_ID: {
		/* events already written to the old channel stay there (the client reads them) */
		const struct wn_ctl_cm_migrate_req *r = body;
		struct obj *id = obj_get(srv, c, r->id, OBJ_CMID);
		struct obj *ch = obj_get(srv, c, r->channel, OBJ_CHAN);

		if (id == NULL || ch == NULL) {
			ret = -EINVAL;
			break;
		}
		id->u.id.chan->refs--;
		id->u.id.chan = ch;
		ch->refs++;
		break;
	}
	default:
		ret = h_destroy(srv, c, h->op, ((const struct wn_ctl_handle *)body)->handle);
		break;
	}
	reply(c, h, ret, &o, info->resp_len, &out_fd, out_fd >= 0 ? 1 : 0);
	if (out_fd >= 0)
		close(out_fd);
}

/* ---------------------------------------------------------------- clients and loop */

static void
client_close(struct wn_server *srv, struct client *c)
{
	struct client **pp;

	pthread_mutex_lock(&srv->lock);
	client_reclaim(srv, c);
	srv->nclients--;
	for (pp = &srv->clients; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	pthread_mutex_unlock(&srv->lock);
	epoll_ctl(srv->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	CTL_LOG(INFO, "client %u gone, its objects reclaimed", c->id);
	close(c->fd);
	free(c);
}

static void
client_readable(struct wn_server *srv, struct client *c)
{
	union {
		struct wn_ctl_hdr h;
		uint8_t b[WN_CTL_MSG_MAX];
	} m;
	int fds[WN_CTL_MAX_FDS];
	unsigned int nfds, i;
	long n;
	int ret;

	n = wn_ctl_recv(c->fd, m.b, fds, &nfds);
	if (n == 0 || (n < 0 && n != -EAGAIN && n != -EMSGSIZE)) {
		client_close(srv, c);
		return;
	}
	if (n < 0)
		return;
	pthread_mutex_lock(&srv->lock);
	srv->requests++;
	ret = (size_t)n > WN_CTL_MSG_MAX ? -EBADMSG : wn_ctl_req_check(m.b, (size_t)n, nfds);
	if (ret != 0) {
		srv->bad_requests++;
		CTL_LOG(DEBUG, "client %u: bad request (%d)", c->id, ret);
		/* answer what we can attribute to a request, so the client does not hang */
		if ((size_t)n >= sizeof(m.h) && (size_t)n <= WN_CTL_MSG_MAX &&
		    m.h.magic == WN_CTL_MAGIC) {
			struct wn_ctl_hdr r;

			wn_ctl_hdr_init(&r, m.h.op, m.h.seq, 0);
			r.status = ret;
			wn_ctl_send(c->fd, &r, NULL, 0);
		}
	} else {
		handle(srv, c, &m.h, m.b + sizeof(m.h), fds, nfds);
	}
	pthread_mutex_unlock(&srv->lock);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
}

int
wn_server_adopt(struct wn_server *srv, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct client *c;

	if (srv->nclients >= MAX_CLIENTS)
		return -EMFILE;
	/*
	 * Non-blocking: a client that stops reading its responses must not stall the control
	 * thread; its replies are dropped instead (wn_ctl_send() returns -EAGAIN).
	 */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
		return -errno;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->fd = fd;
	c->id = ++srv->next_client_id;
	{
		struct ucred cr;
		socklen_t l = sizeof(cr);

		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) == 0)
			c->pid = cr.pid;
	}
	ev.data.ptr = c;
	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		int err = errno;

		free(c);
		return -err;
	}
	pthread_mutex_lock(&srv->lock);
	srv->nclients++;
	c->next = srv->clients;
	srv->clients = c;
	pthread_mutex_unlock(&srv->lock);
	return 0;
}

static void
dp_readable(struct wn_server *srv)
{
	struct wn_server_dp_msg *m;
	uint64_t v;

	if (read(srv->dp_efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&srv->lock);
	while (rte_ring_dequeue(srv->to_ctl, (void **)&m) == 0) {
		if (m->type == WN_SERVER_DP_DONE) {
			zombie_done(srv, m->handle);
		} else if (m->type == WN_SERVER_DP_CM_EVENT) {
			struct obj *id = obj_get(srv, NULL, m->u.cm.id, OBJ_CMID);
			struct wn_ctl_cm_event *e = &m->u.cm.ev;

			if (e->event == WN_CTL_CM_EV_CONNECT_REQUEST) {
				struct obj *l = obj_get(srv, NULL, e->listen_id, OBJ_CMID);
				struct obj *n = l != NULL ? obj_new(srv, l->owner, OBJ_CMID) : NULL;

				if (n != NULL) {
					n->u.id.chan = l->u.id.chan;
					l->u.id.chan->refs++;
					n->u.id.cookie = l->u.id.cookie;
					n->u.id.state = CM_REQ_PENDING;
					n->u.id.remote = true;
					n->u.id.src = e->src;
					n->u.id.dst = e->dst;
					n->u.id.listener = l->handle;
					n->u.id.dp_conn = e->id;
					l->u.id.pending++;
					cm_event(srv, n, e->event, 0, l->handle, &e->param);
				}
			} else if (id != NULL) {
				if (e->event == WN_CTL_CM_EV_ESTABLISHED) {
					struct obj *qp = id->u.id.qp != 0
						? obj_get(srv, NULL, id->u.id.qp, OBJ_QP) : NULL;

					cm_established(srv, id, e->param.ird);
					/* what MPA negotiated (RFC 6581), as the engine uses it */
					if (qp != NULL && m->u.cm.param.ird != 0) {
						qp->u.qp.dp.ird = m->u.cm.param.ird;
						qp->u.qp.dp.ord = m->u.cm.param.ord;
					}
				}
				else if (e->event == WN_CTL_CM_EV_DISCONNECTED)
					cm_disconnected(srv, id, false);
				cm_event(srv, id, e->event, e->status, 0, &e->param);
			}
		}
		free(m);
	}
	pthread_mutex_unlock(&srv->lock);
}

int
wn_server_poll(struct wn_server *srv, int timeout_ms)
{
	struct epoll_event evs[16];
	int n, i;

	n = epoll_wait(srv->epfd, evs, RTE_DIM(evs), timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++) {
		if (evs[i].data.u64 == EP_LISTEN) {
			int fd = accept4(srv->lfd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0 && wn_server_adopt(srv, fd) != 0)
				close(fd);
		} else if (evs[i].data.u64 == EP_DP) {
			dp_readable(srv);
		} else {
			client_readable(srv, evs[i].data.ptr);
		}
	}
	return n;
}

static void *
server_thread(void *arg)
{
	struct wn_server *srv = arg;

	while (!srv->stop)
		wn_server_poll(srv, 100);
	return NULL;
}

int
wn_server_start(struct wn_server *srv)
{
	int ret;

	if (srv->running)
		return -EALREADY;
	srv->stop = false;
	ret = pthread_create(&srv->thread, NULL, server_thread, srv);
	if (ret != 0)
		return -ret;
	pthread_setname_np(srv->thread, "wn-ctl");
	srv->running = true;
	return 0;
}

void
wn_server_stop(struct wn_server *srv)
{
	if (!srv->running)
		return;
	srv->stop = true;
	pthread_join(srv->thread, NULL);
	srv->running = false;
}

static int
listen_on(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char dir[sizeof(sa.sun_path)];
	char *slash;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		mkdir(dir, 0755); /* the usual /run/warpnic; errors show at bind() */
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 64) != 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	chmod(path, 0666);
	return fd;
}

struct wn_server *
wn_server_create(const struct wn_server_conf *conf)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = EP_LISTEN};
	struct wn_server *srv;

	if (conf == NULL || conf->n_addrs > WN_SERVER_MAX_ADDRS) {
		errno = EINVAL;
		return NULL;
	}
	srv = calloc(1, sizeof(*srv));
	if (srv == NULL)
		return NULL;
	srv->conf = *conf;
	if (srv->conf.mtu == 0)
		srv->conf.mtu = 1500;
	snprintf(srv->dev_name, sizeof(srv->dev_name), "%s",
		 conf->dev_name != NULL ? conf->dev_name : "wn0");
	srv->lfd = -1;
	srv->epfd = -1;
	srv->dp_efd = -1;
	srv->next_port = EPHEMERAL_LO;
	pthread_mutex_init(&srv->lock, NULL);
	srv->mem = wn_mem_table_create(conf->mem_entries != 0 ? conf->mem_entries : MEM_ENTRIES,
				       conf->mem_qs);
	if (srv->mem == NULL)
		goto err;
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (srv->epfd < 0)
		goto err;
	if (conf->path != NULL) {
		srv->lfd = listen_on(conf->path);
		if (srv->lfd < 0) {
			errno = -srv->lfd;
			goto err;
		}
		if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->lfd, &ev) != 0)
			goto err;
		CTL_LOG(INFO, "control socket %s, device %s", conf->path, srv->dev_name);
	}
	return srv;
err:
	{
		int err = errno;

		if (srv->lfd >= 0)
			close(srv->lfd);
		if (srv->epfd >= 0)
			close(srv->epfd);
		wn_mem_table_free(srv->mem);
		free(srv);
		errno = err;
	}
	return NULL;
}

int
wn_server_dp_attach(struct wn_server *srv, struct rte_ring *to_dp,
		    struct rte_ring *to_ctl, int efd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.u64 = EP_DP};

	if (srv->to_dp != NULL)
		return -EBUSY;
	if (to_dp == NULL || to_ctl == NULL || efd < 0)
		return -EINVAL;
	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, efd, &ev) != 0)
		return -errno;
	srv->to_dp = to_dp;
	srv->to_ctl = to_ctl;
	srv->dp_efd = efd;
	return 0;
}

void
wn_server_destroy(struct wn_server *srv)
{
	if (srv == NULL)
		return;
	wn_server_stop(srv);
	while (srv->clients != NULL)
		client_close(srv, srv->clients);
	/* the dataplane is gone by now: nothing can still reference retired objects */
	while (srv->zombies != NULL) {
		struct obj *o = srv->zombies;

		srv->zombies = o->znext;
		obj_release(o);
	}
	if (srv->lfd >= 0) {
		close(srv->lfd);
		if (srv->conf.path != NULL)
			unlink(srv->conf.path);
	}
	close(srv->epfd);
	wn_mem_table_free(srv->mem);
	free(srv->tab);
	free(srv->gen);
	pthread_mutex_destroy(&srv->lock);
	free(srv);
}

void
wn_server_stats(struct wn_server *srv, struct wn_server_stats *st)
{
	pthread_mutex_lock(&srv->lock);
	memset(st, 0, sizeof(*st));
	st->clients = srv->nclients;
	st->pds = srv->counts[OBJ_PD];
	st->mrs = srv->counts[OBJ_MR];
	st->mws = srv->counts[OBJ_MW];
	st->cqs = srv->counts[OBJ_CQ];
	st->srqs = srv->counts[OBJ_SRQ];
	st->qps = srv->counts[OBJ_QP];
	st->channels = srv->counts[OBJ_CHAN];
	st->cm_ids = srv->counts[OBJ_CMID];
	st->requests = srv->requests;
	st->bad_requests = srv->bad_requests;
	pthread_mutex_unlock(&srv->lock);
}

struct wn_mem_table *
wn_server_mem(struct wn_server *srv)
{
	return srv->mem;
}

void *
wn_server_mr_lookup(struct wn_server *srv, uint32_t stag, uint64_t *len)
{
	void *p = NULL;
	uint32_t i;

	pthread_mutex_lock(&srv->lock);
	for (i = 0; i < srv->cap; i++) {
		struct obj *o = srv->tab[i];

		if (o != NULL && o->type == OBJ_MR && o->u.mr.dp.stag == stag) {
			p = o->u.mr.dp.base;
			if (len != NULL)
				*len = o->u.mr.dp.length;
			break;
		}
	}
	pthread_mutex_unlock(&srv->lock);
	return p;
}
