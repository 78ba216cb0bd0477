/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control server: unix SOCK_SEQPACKET server of the control protocol (wn_ctl.h). Its
 * socket and epoll loop, clients (reclaim on EOF), and dispatch: requests through the op
 * table, destruction through one function per object type, the dataplane's answers (DONE, CM
 * events) to server_obj.c and server_cm.c, and the attachment of its rings (wn_server_dp.h). The
 * objects themselves: server_obj.c, dev.c, server_mr.c, server_queue.c, server_cm.c; messages to
 * the dataplane: server_msg.c (srv_priv.h). Nothing below calls back into this file.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_ring.h>

#include "srv_priv.h"
#include "wn_mem.h"

/* epoll data: clients are tagged pointers, the listener and dp eventfd are fixed values */
#define EP_LISTEN ((uint64_t)1)
#define EP_DP     ((uint64_t)2)

/* ---------------------------------------------------------------- dataplane */

/* Act on every message the dataplane has sent (srv->lock held). */
static void
dp_drain(struct wn_server *srv)
{
	struct wn_server_dp_msg *m;

	if (srv->to_ctl == NULL)
		return;
	while (rte_ring_dequeue(srv->to_ctl, (void **)&m) == 0) {
		if (m->type == WN_SERVER_DP_DONE)
			wn_server_zombie_done(srv, m->handle);
		else if (m->type == WN_SERVER_DP_CM_EVENT) {
			srv->dp_cm_events++;
			wn_server_cm_dp_event(srv, m);
		}
		else if (m->type == WN_SERVER_DP_ASYNC_EVENT)
			wn_server_async_dp_event(srv, m);
		else if (m->type == WN_SERVER_DP_QP_ERROR)
			wn_server_qp_dp_error(srv, m->handle);
		else if (m->type == WN_SERVER_DP_CM_LISTENING)
			wn_server_cm_dp_listening(srv, m);
		free(m);
	}
}

static void
dp_readable(struct wn_server *srv)
{
	uint64_t v;

	if (read(srv->dp_efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return;
	pthread_mutex_lock(&srv->lock);
	dp_drain(srv);
	pthread_mutex_unlock(&srv->lock);
}

int
wn_server_dp_attach(struct wn_server *srv, struct rte_ring *to_dp, struct rte_ring *to_ctl,
		    int efd)
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

int
wn_server_dp_bells(struct wn_server *srv, int page_fd, const struct wn_queue_bell *page,
		   const int *efds, uint32_t n_bells)
{
	if (srv->to_dp == NULL || page_fd < 0 || page == NULL || n_bells == 0 ||
	    n_bells > WN_QUEUE_BELLS)
		return -EINVAL;
	srv->bell_page_fd = page_fd;
	srv->bells = page;
	memcpy(srv->bell_efd, efds, n_bells * sizeof(*efds));
	srv->n_bells = n_bells;
	return 0;
}

void
wn_server_dp_detach(struct wn_server *srv)
{
	wn_server_dp_wait_free(srv);
	if (srv->to_dp != NULL)
		(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, srv->dp_efd, NULL);
	srv->to_dp = NULL;
	srv->to_ctl = NULL;
	srv->dp_efd = -1;
	srv->bells = NULL;
	srv->n_bells = 0;
}

/* ---------------------------------------------------------------- destruction */

/* How each type goes (0, or -EBUSY when something still needs it). */
static int (*const destroy_of[OBJ_NTYPES])(struct wn_server *srv, struct obj *o) = {
	[OBJ_PD] = wn_server_pd_destroy,
	[OBJ_MR] = wn_server_mr_destroy,
	[OBJ_MW] = wn_server_mw_destroy,
	[OBJ_CQ] = wn_server_cq_destroy,
	[OBJ_SRQ] = wn_server_srq_destroy,
	[OBJ_QP] = wn_server_qp_destroy,
	[OBJ_CHAN] = wn_server_chan_destroy,
	[OBJ_CMID] = wn_server_cmid_destroy,
};

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

			if (o != NULL && !o->zombie && o->owner == c && o->type == order[k])
				destroy_of[o->type](srv, o);
		}
	}
}

/* DEALLOC_PD, DEREG_MR, DEALLOC_MW, DESTROY_CQ/SRQ/QP, CM_DESTROY_CHANNEL/ID. */
static int
h_destroy(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs)
{
	static const enum obj_type type_of[WN_CTL_OP_MAX] = {
		[WN_CTL_DEALLOC_PD] = OBJ_PD, [WN_CTL_DEREG_MR] = OBJ_MR,
		[WN_CTL_DESTROY_CQ] = OBJ_CQ, [WN_CTL_DESTROY_SRQ] = OBJ_SRQ,
		[WN_CTL_DESTROY_QP] = OBJ_QP, [WN_CTL_CM_DESTROY_CHANNEL] = OBJ_CHAN,
		[WN_CTL_CM_DESTROY_ID] = OBJ_CMID, [WN_CTL_DEALLOC_MW] = OBJ_MW,
	};
	const struct wn_ctl_handle *r = rq->body;
	struct obj *o = wn_server_obj_get(srv, rq->c, r->handle, type_of[rq->h->op]);

	(void)rs;
	if (o == NULL)
		return -EINVAL;
	if (o->refs != 0)
		return -EBUSY;
	return destroy_of[o->type](srv, o);
}

/* ---------------------------------------------------------------- requests */

/* One handler per op, and the least request body it reads (wn_ctl_req_check() checks more). */
static const struct {
	uint16_t req_len;
	int (*fn)(struct wn_server *srv, const struct srv_req *rq, struct srv_resp *rs);
} ops[WN_CTL_OP_MAX] = {
	[WN_CTL_HELLO] = {sizeof(struct wn_ctl_hello_req), wn_server_h_hello},
	[WN_CTL_QUERY_DEVICE] = {0, wn_server_h_query_device},
	[WN_CTL_QUERY_PORT] = {sizeof(struct wn_ctl_port_req), wn_server_h_query_port},
	[WN_CTL_ALLOC_PD] = {0, wn_server_h_alloc_pd},
	[WN_CTL_DEALLOC_PD] = {sizeof(struct wn_ctl_handle), h_destroy},
	[WN_CTL_REG_MR] = {sizeof(struct wn_ctl_reg_mr_req), wn_server_h_reg_mr},
	[WN_CTL_DEREG_MR] = {sizeof(struct wn_ctl_handle), h_destroy},
	[WN_CTL_CREATE_CQ] = {sizeof(struct wn_ctl_create_cq_req), wn_server_h_create_cq},
	[WN_CTL_DESTROY_CQ] = {sizeof(struct wn_ctl_handle), h_destroy},
	[WN_CTL_CREATE_SRQ] = {sizeof(struct wn_ctl_create_srq_req), wn_server_h_create_srq},
	[WN_CTL_MODIFY_SRQ] = {sizeof(struct wn_ctl_modify_srq_req), wn_server_h_modify_srq},
	[WN_CTL_DESTROY_SRQ] = {sizeof(struct wn_ctl_handle), h_destroy},
	[WN_CTL_CREATE_QP] = {sizeof(struct wn_ctl_create_qp_req), wn_server_h_create_qp},
	[WN_CTL_MODIFY_QP] = {sizeof(struct wn_ctl_modify_qp_req), wn_server_h_modify_qp},
	[WN_CTL_QUERY_QP] = {sizeof(struct wn_ctl_handle), wn_server_h_query_qp},
	[WN_CTL_DESTROY_QP] = {sizeof(struct wn_ctl_handle), h_destroy},
	[WN_CTL_CM_CREATE_CHANNEL] = {0, wn_server_h_cm_create_channel},
	[WN_CTL_CM_DESTROY_CHANNEL] = {sizeof(struct wn_ctl_handle), h_destroy},
	[WN_CTL_CM_CREATE_ID] = {sizeof(struct wn_ctl_cm_create_id_req), wn_server_h_cm_create_id},
	[WN_CTL_CM_DESTROY_ID] = {sizeof(struct wn_ctl_handle), h_destroy},
	[WN_CTL_CM_BIND] = {sizeof(struct wn_ctl_cm_addr_req), wn_server_h_cm_bind},
	[WN_CTL_CM_RESOLVE_ADDR] = {sizeof(struct wn_ctl_cm_addr_req), wn_server_h_cm_resolve_addr},
	[WN_CTL_CM_RESOLVE_ROUTE] = {sizeof(struct wn_ctl_cm_addr_req),
				     wn_server_h_cm_resolve_route},
	[WN_CTL_CM_LISTEN] = {sizeof(struct wn_ctl_cm_addr_req), wn_server_h_cm_listen},
	[WN_CTL_CM_CONNECT] = {sizeof(struct wn_ctl_cm_conn_req), wn_server_h_cm_connect},
	[WN_CTL_CM_ACCEPT] = {sizeof(struct wn_ctl_cm_conn_req), wn_server_h_cm_accept},
	[WN_CTL_CM_REJECT] = {sizeof(struct wn_ctl_cm_conn_req), wn_server_h_cm_reject},
	[WN_CTL_CM_DISCONNECT] = {sizeof(struct wn_ctl_handle), wn_server_h_cm_disconnect},
	[WN_CTL_ALLOC_MW] = {sizeof(struct wn_ctl_alloc_mw_req), wn_server_h_alloc_mw},
	[WN_CTL_DEALLOC_MW] = {sizeof(struct wn_ctl_handle), h_destroy},
	[WN_CTL_CM_MIGRATE_ID] = {sizeof(struct wn_ctl_cm_migrate_req), wn_server_h_cm_migrate_id},
	[WN_CTL_BELL] = {sizeof(struct wn_ctl_bell_req), wn_server_h_bell},
	[WN_CTL_ASYNC_CHANNEL] = {0, wn_server_h_async_channel},
	[WN_CTL_MR_PIECES] = {sizeof(struct wn_ctl_mr_pieces_req), wn_server_h_mr_pieces},
	[WN_CTL_REREG_MR] = {sizeof(struct wn_ctl_rereg_mr_req), wn_server_h_rereg_mr},
};

/* Handle one request that passed wn_ctl_req_check() (@p body_len octets of body); replies. */
static void
req_handle(struct wn_server *srv, const struct srv_req *rq, size_t body_len)
{
	uint16_t op = rq->h->op;
	struct srv_resp rs;
	int ret;

	memset(&rs, 0, sizeof(rs));
	rs.fd = -1;
	if (op >= WN_CTL_OP_MAX || ops[op].fn == NULL)
		ret = -EOPNOTSUPP;
	else if (body_len < ops[op].req_len)
		ret = -EBADMSG;
	else {
		/*
		 * A QP the dataplane moved to Error flushed its WQEs after it said so: a client
		 * that saw a flushed completion finds the state it implies.
		 */
		if (op == WN_CTL_QUERY_QP)
			dp_drain(srv);
		ret = ops[op].fn(srv, rq, &rs);
		if (ret == SRV_REPLY_LATER)
			return;
	}
	wn_server_reply(rq->c, rq->h, ret, &rs.u, wn_ctl_op_info(op)->resp_len, rs.fd);
	if (rs.fd >= 0)
		close(rs.fd);
}

/* ---------------------------------------------------------------- clients */

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
	SRV_LOG(INFO, "client %u gone, its objects reclaimed", c->id);
	close(c->fd);
	if (c->async_fd >= 0)
		close(c->async_fd);
	free(c);
}

/* Answer what we can attribute to a request, so the client does not hang. */
static void
reply_bad(struct client *c, const void *msg, size_t len, int status)
{
	struct wn_ctl_hdr h, r;

	if (len < sizeof(h) || len > WN_CTL_MSG_MAX)
		return;
	memcpy(&h, msg, sizeof(h));
	if (h.magic != WN_CTL_MAGIC)
		return;
	wn_ctl_hdr_init(&r, h.op, h.seq, 0);
	r.status = status;
	wn_ctl_send(c->fd, &r, NULL, 0);
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
		SRV_LOG(DEBUG, "client %u: bad request (%d)", c->id, ret);
		reply_bad(c, m.b, (size_t)n, ret);
	} else {
		struct srv_req rq = {.c = c, .h = &m.h, .body = m.b + sizeof(m.h), .fds = fds,
				     .nfds = nfds};

		req_handle(srv, &rq, (size_t)n - sizeof(m.h));
	}
	pthread_mutex_unlock(&srv->lock);
	for (i = 0; i < nfds; i++)
		close(fds[i]);
}

int
wn_server_adopt(struct wn_server *srv, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct ucred cr;
	socklen_t l = sizeof(cr);
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
	c->async_fd = -1;
	c->id = ++srv->next_client_id;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &l) == 0)
		c->pid = cr.pid;
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

/* ---------------------------------------------------------------- the server */

int
wn_server_poll(struct wn_server *srv, int timeout_ms)
{
	struct epoll_event evs[16];
	bool waiting;
	int n, i;

	pthread_mutex_lock(&srv->lock);
	waiting = wn_server_dp_flush(srv);
	pthread_mutex_unlock(&srv->lock);
	/* messages wait for room in the dataplane's ring: look again soon */
	if (waiting && (timeout_ms < 0 || timeout_ms > 1))
		timeout_ms = 1;
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
		} else if ((evs[i].data.u64 & 0xf) == SRV_EP_CHAN) {
			pthread_mutex_lock(&srv->lock);
			wn_server_chan_writable(srv, (uint32_t)(evs[i].data.u64 >> 32));
			pthread_mutex_unlock(&srv->lock);
		} else {
			client_readable(srv, evs[i].data.ptr);
		}
	}
	return n;
}

/* A sched_yield() that took longer than this gave the CPU to another thread (µs). */
#define YIELD_BUSY_US 10u
/* No spin this long after the dataplane's last CM event (µs). */
#define STORM_US 2000u

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/*
 * The control thread. After a program's request it keeps polling, yielding the CPU between
 * polls, for conf.spin_us: requests come in runs (a QP's creation is several), and on a VM
 * a blocked thread's wake-up costs tens of microseconds, more than most requests take.
 * On a busy machine a spinning thread takes CPU time from the lcores, so the spin stops
 * when a yield gave the CPU away (another thread had work there), and for STORM_US after
 * the dataplane's last CM event: connections by the hundred come and go then, and each
 * lcore needs its CPU. Idle, it blocks.
 */
static void *
server_thread(void *arg)
{
	struct wn_server *srv = arg;
	uint64_t spin_until = 0, calm_at = 0, t, reqs, evs;

	while (!srv->stop) {
		if (srv->conf.spin_us == 0) {
			(void)wn_server_poll(srv, 100);
			continue;
		}
		t = now_us();
		reqs = srv->requests;
		evs = srv->dp_cm_events;
		(void)wn_server_poll(srv, t < spin_until ? 0 : 100);
		if (srv->dp_cm_events != evs) {
			calm_at = now_us() + STORM_US;
			spin_until = 0;
		} else if (srv->requests != reqs) {
			t = now_us();
			spin_until = t >= calm_at ? t + srv->conf.spin_us : 0;
		} else if (t < spin_until) {
			(void)sched_yield();
			if (now_us() - t > YIELD_BUSY_US)
				spin_until = 0;
		}
	}
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

/* mkdir -p of @p path's directory (mode 0755): the usual /run/warpnic may not exist yet. */
static int
make_parents(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];

	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + 1; (p = strchr(p, '/')) != NULL; p++) {
		*p = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

pid_t
wn_server_sock_owner(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct stat st;
	pid_t pid;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int err = errno;

		close(fd);
		/* nobody listens: a socket file its daemon left behind */
		return err == ECONNREFUSED || err == ENOENT ? 0 : -err;
	}
	pid = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? cred.pid : -errno;
	close(fd);
	return pid > 0 ? pid : -EADDRINUSE;
}

/*
 * Bind and listen on @p path. A live socket there is never taken over (EADDRINUSE); one
 * nobody listens on is replaced. Between another daemon's bind() and its listen() the check
 * sees no listener: that window is two system calls wide.
 */
static int
listen_on(const char *path, mode_t mode, gid_t gid)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd, ret;
	pid_t owner;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	ret = make_parents(path);
	if (ret != 0)
		return ret;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (ret != 0 && errno == EADDRINUSE) {
		owner = wn_server_sock_owner(path);
		if (owner != 0) {
			close(fd);
			return owner > 0 ? -EADDRINUSE : owner;
		}
		unlink(path);
		ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	}
	if (ret != 0 || chmod(path, mode) != 0 ||
	    (gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) != 0) || listen(fd, 64) != 0) {
		int err = errno;

		if (ret == 0)
			unlink(path);
		close(fd);
		return -err;
	}
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
	srv->max_mr_size = conf->max_mr_mb != 0 ? (uint64_t)conf->max_mr_mb << 20 :
			   (uint64_t)sysconf(_SC_PHYS_PAGES) * (uint64_t)sysconf(_SC_PAGESIZE);
	srv->bell_page_fd = -1;
	pthread_mutex_init(&srv->lock, NULL);
	srv->mem = wn_mem_table_create(conf->mem_entries != 0 ? conf->mem_entries : MEM_ENTRIES,
				       conf->mem_qs);
	if (srv->mem == NULL)
		goto err;
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (srv->epfd < 0)
		goto err;
	if (conf->path != NULL) {
		gid_t gid = (gid_t)-1;

		if (conf->sock_group != NULL) {
			struct group *g = getgrnam(conf->sock_group);

			if (g == NULL) {
				errno = ENOENT;
				goto err;
			}
			gid = g->gr_gid;
		}
		srv->lfd = listen_on(conf->path, conf->sock_mode != 0 ? conf->sock_mode : 0660, gid);
		if (srv->lfd < 0) {
			errno = -srv->lfd;
			goto err;
		}
		if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->lfd, &ev) != 0)
			goto err;
		SRV_LOG(INFO, "control socket %s, device %s", conf->path, srv->dev_name);
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

void
wn_server_destroy(struct wn_server *srv)
{
	if (srv == NULL)
		return;
	wn_server_stop(srv);
	while (srv->clients != NULL)
		client_close(srv, srv->clients);
	/* the dataplane is gone by now: nothing can still reference retired objects */
	wn_server_zombies_free(srv);
	wn_server_dp_wait_free(srv);
	wn_server_notify_free(srv);
	if (srv->lfd >= 0) {
		/* the path, unless another daemon has bound it since (after it was removed) */
		if (srv->conf.path != NULL && wn_server_sock_owner(srv->conf.path) == getpid())
			unlink(srv->conf.path);
		close(srv->lfd);
	}
	close(srv->epfd);
	wn_mem_table_free(srv->mem);
	wn_server_tab_free(srv);
	wn_server_ports_free(srv);
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
	st->cm_events = srv->cm_events;
	st->cm_events_waited = srv->cm_events_waited;
	st->cm_events_dropped = srv->cm_events_dropped;
	st->cm_queue_max = srv->cm_queue_max;
	st->mr_sigbus = wn_server_sigbus_hits();
	pthread_mutex_unlock(&srv->lock);
}

