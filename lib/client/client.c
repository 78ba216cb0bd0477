/* SPDX-License-Identifier: BSD-3-Clause */
/* lib/client: connection, control calls, objects and the CM over the control protocol. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client_priv.h"
#include "wn_client.h"

struct wn_client {
	int fd;
	uint32_t seq;
	uint32_t client_id;
	pthread_mutex_t lock;
	char dev_name[WN_CTL_NAME_LEN];
	/* the dataplane lcores' doorbells (wn_queue.h): read-only page, one eventfd each */
	const struct wn_queue_bell *bells;
	uint32_t n_bells;
	int bell_efd[WN_QUEUE_BELLS];
	/* the lcores' ready maps (read-write, after the bell page), or NULL */
	struct wn_queue_ready_map *ready;
};

/*
 * Map the bell page and take the lcores' eventfds. A server without bells (-ENOENT), or any
 * failure, leaves the client without them: it never rings, and lcores that sleep wake on
 * their own (timers) only: logged, not fatal.
 */
static void
bells_open(struct wn_client *c)
{
	struct wn_ctl_bell_req req = { .bell = WN_CTL_BELL_PAGE };
	struct wn_ctl_bell_resp resp;
	struct wn_queue_ready_map *maps = NULL;
	struct stat st;
	uint32_t n, i;
	void *page;
	int fd, ret;

	ret = wn_client_call(c, WN_CTL_BELL, &req, NULL, 0, &resp, &fd);
	if (ret != 0 || fd < 0)
		return;
	page = mmap(NULL, WN_QUEUE_BELL_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	/* the ready maps follow (wn_queue.h): an SQ the lcore parked is marked there */
	if (page != MAP_FAILED && fstat(fd, &st) == 0 && st.st_size >= (off_t)WN_QUEUE_BELLS_SIZE) {
		maps = mmap(NULL, WN_QUEUE_BELLS_SIZE - WN_QUEUE_READY_MAPS_OFFSET,
			    PROT_READ | PROT_WRITE, MAP_SHARED, fd, WN_QUEUE_READY_MAPS_OFFSET);
		if (maps == MAP_FAILED)
			maps = NULL;
	}
	close(fd);
	if (page == MAP_FAILED)
		return;
	n = resp.n_bells < WN_QUEUE_BELLS ? resp.n_bells : WN_QUEUE_BELLS;
	for (i = 0; i < n; i++) {
		req.bell = i;
		if (wn_client_call(c, WN_CTL_BELL, &req, NULL, 0, &resp, &c->bell_efd[i]) != 0 ||
		    c->bell_efd[i] < 0)
			break;
	}
	if (i < n) {
		while (i-- > 0)
			close(c->bell_efd[i]);
		munmap(page, WN_QUEUE_BELL_PAGE_SIZE);
		if (maps != NULL)
			munmap(maps, WN_QUEUE_BELLS_SIZE - WN_QUEUE_READY_MAPS_OFFSET);
		return;
	}
	c->bells = page;
	c->n_bells = n;
	c->ready = maps;
}

static void
bells_close(struct wn_client *c)
{
	uint32_t i;

	for (i = 0; i < c->n_bells; i++)
		close(c->bell_efd[i]);
	if (c->bells != NULL)
		munmap((void *)(uintptr_t)c->bells, WN_QUEUE_BELL_PAGE_SIZE);
	if (c->ready != NULL)
		munmap(c->ready, WN_QUEUE_BELLS_SIZE - WN_QUEUE_READY_MAPS_OFFSET);
	c->bells = NULL;
	c->ready = NULL;
	c->n_bells = 0;
}

struct wn_client *
wn_client_open(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct wn_ctl_hello_req req;
	struct wn_ctl_hello_resp resp;
	struct wn_client *c;
	int ret;

	if (path == NULL)
		path = getenv(WN_CTL_ENV);
	if (path == NULL || path[0] == '\0')
		path = WN_CTL_DEFAULT_PATH;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		goto err;
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		goto err;
	memset(&req, 0, sizeof(req));
	req.pid = (uint32_t)getpid();
	ret = wn_ctl_llp_parse(getenv(WN_CTL_LLP_ENV));
	if (ret < 0) {
		errno = EINVAL; /* a lower layer nobody knows: say so, rather than pick another */
		goto err;
	}
	req.llp = (uint32_t)ret;
#ifdef _GNU_SOURCE
	snprintf(req.name, sizeof(req.name), "%s", program_invocation_short_name);
#endif
	ret = wn_client_call(c, WN_CTL_HELLO, &req, NULL, 0, &resp, NULL);
	if (ret != 0) {
		errno = -ret;
		goto err;
	}
	if (resp.server_version != WN_CTL_VERSION) {
		errno = EPROTO;
		goto err;
	}
	c->client_id = resp.client_id;
	resp.dev_name[sizeof(resp.dev_name) - 1] = '\0';
	memcpy(c->dev_name, resp.dev_name, sizeof(c->dev_name));
	bells_open(c);
	return c;
err:
	{
		int err = errno;

		if (c->fd >= 0)
			close(c->fd);
		pthread_mutex_destroy(&c->lock);
		free(c);
		errno = err;
	}
	return NULL;
}

void
wn_client_close(struct wn_client *c)
{
	if (c == NULL)
		return;
	bells_close(c);
	close(c->fd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

const char *
wn_client_dev_name(const struct wn_client *c)
{
	return c->dev_name;
}

int
wn_client_fd(const struct wn_client *c)
{
	return c->fd;
}

/*
 * The next datagram of @p fd (wn_ctl_recv()): polled for, yielding the CPU between polls, for
 * up to wn_client_call_spin_ns(), then waited for (poll.c says why). A yield that gave the
 * CPU away (another thread had work there) ends the polling at once: on a busy machine a
 * poller takes time from the threads that would produce the answer.
 */
static long
recv_answer(int fd, void *buf, int *fds, unsigned int *nfds)
{
	uint64_t spin = wn_client_call_spin_ns(), t0 = 0, t;
	long n;

	while (spin > 0) {
		n = wn_ctl_recv_flags(fd, buf, fds, nfds, MSG_DONTWAIT);
		if (n != -EAGAIN)
			return n;
		t = wn_client_now_ns();
		if (t0 == 0)
			t0 = t;
		else if (t - t0 >= spin)
			break;
		if (wn_client_yield_ns() > WN_CLIENT_YIELD_BUSY_NS)
			break;
	}
	return wn_ctl_recv(fd, buf, fds, nfds);
}

int
wn_client_call(struct wn_client *c, uint16_t op, const void *req, const int *fds,
	       unsigned int nfds, void *resp, int *rfd)
{
	const struct wn_ctl_op_info *info = wn_ctl_op_info(op);
	union {
		struct wn_ctl_hdr h;
		uint8_t b[WN_CTL_MSG_MAX];
	} m;
	int rfds[WN_CTL_MAX_FDS];
	unsigned int rn = 0, i;
	uint32_t seq;
	long n;
	int ret;

	if (rfd != NULL)
		*rfd = -1;
	if (info == NULL || op == WN_CTL_CM_EVENT)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	seq = ++c->seq;
	wn_ctl_hdr_init(&m.h, op, seq, info->req_len);
	if (info->req_len > 0)
		memcpy(m.b + sizeof(m.h), req, info->req_len);
	ret = wn_ctl_send(c->fd, &m.h, fds, nfds);
	if (ret != 0)
		goto out;
	for (;;) {
		n = recv_answer(c->fd, m.b, rfds, &rn);
		if (n == 0) {
			ret = -ECONNRESET;
			goto out;
		}
		if (n < 0) {
			ret = (int)n;
			goto out;
		}
		if ((size_t)n >= sizeof(m.h) && m.h.magic == WN_CTL_MAGIC && m.h.seq == seq)
			break;
		/* not ours (cannot happen with a conforming server): drop it */
		for (i = 0; i < rn; i++)
			close(rfds[i]);
	}
	if (m.h.version != WN_CTL_VERSION || m.h.op != op || (size_t)n != m.h.len) {
		ret = -EPROTO;
	} else if (m.h.status != 0) {
		ret = m.h.status < 0 ? m.h.status : -EPROTO;
	} else if ((size_t)n != sizeof(m.h) + info->resp_len || rn != info->resp_fds) {
		ret = -EPROTO;
	} else {
		if (resp != NULL && info->resp_len > 0)
			memcpy(resp, m.b + sizeof(m.h), info->resp_len);
		if (rn == 1 && rfd != NULL) {
			*rfd = rfds[0];
			rn = 0;
		}
		ret = 0;
	}
	for (i = 0; i < rn; i++)
		close(rfds[i]);
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int
wn_client_query_device(struct wn_client *c, struct wn_ctl_device_attr *attr)
{
	return wn_client_call(c, WN_CTL_QUERY_DEVICE, NULL, NULL, 0, attr, NULL);
}

int
wn_client_query_port(struct wn_client *c, uint32_t port, struct wn_ctl_port_attr *attr)
{
	struct wn_ctl_port_req r = {.port = port};

	return wn_client_call(c, WN_CTL_QUERY_PORT, &r, NULL, 0, attr, NULL);
}

int
wn_client_alloc_pd(struct wn_client *c, uint32_t *pd)
{
	struct wn_ctl_handle h;
	int ret = wn_client_call(c, WN_CTL_ALLOC_PD, NULL, NULL, 0, &h, NULL);

	if (ret == 0)
		*pd = h.handle;
	return ret;
}

static int
call_handle(struct wn_client *c, uint16_t op, uint32_t handle)
{
	struct wn_ctl_handle h = {.handle = handle};

	return wn_client_call(c, op, &h, NULL, 0, NULL, NULL);
}

int
wn_client_dealloc_pd(struct wn_client *c, uint32_t pd)
{
	return call_handle(c, WN_CTL_DEALLOC_PD, pd);
}

/*
 * Copy pieces [from, from + n) of @p sh into @p dst with each one's fd index among the
 * message's fds (@p fds, *nfds), an object's fd once per message.
 */
static void
pieces_fill(const struct wn_client_share *sh, uint32_t from, uint32_t n,
	    struct wn_ctl_mr_piece *dst, int *fds, unsigned int *nfds)
{
	uint32_t i, k;

	*nfds = 0;
	for (i = 0; i < n; i++) {
		int fd = sh->fd[from + i];

		dst[i] = sh->piece[from + i];
		if (dst[i].src != WN_CTL_MR_SRC_FD)
			continue;
		for (k = 0; k < *nfds && fds[k] != fd; k++)
			;
		if (k == *nfds)
			fds[(*nfds)++] = fd;
		dst[i].fd_index = (uint8_t)k;
	}
}

/* REG_MR, then MR_PIECES until the server has every piece. @return 0 or -errno. */
static int
reg_mr_send(struct wn_client *c, struct wn_ctl_reg_mr_req *req,
	    const struct wn_client_share *sh, struct wn_ctl_reg_mr_resp *resp)
{
	int fds[WN_CTL_MAX_FDS];
	unsigned int nfds;
	uint32_t done;
	int ret;

	req->span = sh->span;
	req->align_shift = sh->align_shift;
	req->n_total = sh->n;
	req->n_pieces = sh->n < WN_CTL_MR_MSG_PIECES ? sh->n : WN_CTL_MR_MSG_PIECES;
	pieces_fill(sh, 0, req->n_pieces, req->piece, fds, &nfds);
	ret = wn_client_call(c, WN_CTL_REG_MR, req, fds, nfds, resp, NULL);
	for (done = req->n_pieces; ret == 0 && done < sh->n; done += WN_CTL_MR_MSG_PIECES) {
		struct wn_ctl_mr_pieces_req mp;

		memset(&mp, 0, sizeof(mp));
		mp.mr = resp->mr;
		mp.n_pieces = sh->n - done < WN_CTL_MR_MSG_PIECES ? sh->n - done
								 : WN_CTL_MR_MSG_PIECES;
		pieces_fill(sh, done, mp.n_pieces, mp.piece, fds, &nfds);
		/* the server drops the MR when this fails */
		ret = wn_client_call(c, WN_CTL_MR_PIECES, &mp, fds, nfds, resp, NULL);
	}
	if (ret == 0 && resp->pending != 0)
		ret = -EPROTO;
	return ret;
}

static struct wn_client_mr *
reg_mr(struct wn_client *c, uint32_t pd, void *addr, size_t length, uint64_t iova,
       uint32_t access, uint32_t flags)
{
	struct wn_ctl_reg_mr_req req;
	struct wn_ctl_reg_mr_resp resp;
	struct wn_client_share sh;
	struct wn_client_mr *mr;
	bool writable;
	int ret;

	if (addr == NULL || length == 0 || (access & ~WN_CTL_ACCESS_MASK) != 0) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return NULL;
	/* as ib_umem_get() pins for writing; a fast-register MR may be given write rights */
	writable = (access & WN_CTL_ACCESS_WRITABLE) != 0 || (flags & WN_CTL_MR_F_FAST_REG) != 0;
	ret = wn_client_share(addr, length, writable, &sh);
	if (ret != 0) {
		free(mr);
		errno = -ret;
		return NULL;
	}
	memset(&req, 0, sizeof(req));
	req.pd = pd;
	req.access = access;
	req.addr = (uintptr_t)addr;
	req.length = length;
	req.iova = iova;
	req.flags = flags;
	ret = reg_mr_send(c, &req, &sh, &resp);
	mr->span_lo = sh.piece[0].addr;
	mr->span_len = sh.span;
	wn_client_share_done(&sh);
	if (ret != 0) {
		wn_client_unshare(sh.segs, sh.n_segs);
		free(sh.segs);
		free(mr);
		errno = -ret;
		return NULL;
	}
	mr->segs = sh.segs;
	mr->n_segs = sh.n_segs;
	mr->handle = resp.mr;
	mr->lkey = resp.lkey;
	mr->rkey = resp.rkey;
	mr->access = access;
	mr->addr = addr;
	mr->length = length;
	mr->iova = iova;
	mr->pd = pd;
	mr->flags = flags;
	wn_client_span_add(mr->span_lo, mr->span_len);
	return mr;
}

struct wn_client_mr *
wn_client_reg_mr(struct wn_client *c, uint32_t pd, void *addr, size_t length, uint64_t iova,
		 uint32_t access)
{
	return reg_mr(c, pd, addr, length, iova, access, 0);
}

struct wn_client_mr *
wn_client_alloc_frmr(struct wn_client *c, uint32_t pd, void *addr, size_t length)
{
	return reg_mr(c, pd, addr, length, 0, 0, WN_CTL_MR_F_FAST_REG);
}

int
wn_client_alloc_mw(struct wn_client *c, uint32_t pd, uint32_t type, uint32_t *mw,
		   uint32_t *rkey)
{
	struct wn_ctl_alloc_mw_req req = {.pd = pd, .type = type};
	struct wn_ctl_alloc_mw_resp resp;
	int ret;

	if (type != 1 && type != 2)
		return -EINVAL;
	ret = wn_client_call(c, WN_CTL_ALLOC_MW, &req, NULL, 0, &resp, NULL);
	if (ret != 0)
		return ret;
	*mw = resp.mw;
	*rkey = resp.rkey;
	return 0;
}

int
wn_client_dealloc_mw(struct wn_client *c, uint32_t mw)
{
	return call_handle(c, WN_CTL_DEALLOC_MW, mw);
}

/* Drop what a deregistered @p mr holds here; the struct stays. */
static void
mr_drop_local(struct wn_client_mr *mr)
{
	wn_client_span_del(mr->span_lo, mr->span_len);
	wn_client_unshare(mr->segs, mr->n_segs);
	free(mr->segs);
	mr->segs = NULL;
	mr->n_segs = 0;
}

int
wn_client_dereg_mr(struct wn_client *c, struct wn_client_mr *mr)
{
	int ret = call_handle(c, WN_CTL_DEREG_MR, mr->handle);

	if (ret != 0 && ret != -ECONNRESET && ret != -EPIPE)
		return ret;
	mr_drop_local(mr);
	free(mr);
	return 0;
}

int
wn_client_rereg_mr(struct wn_client *c, struct wn_client_mr *mr, uint32_t flags, uint32_t pd,
		   void *addr, size_t length, uint32_t access)
{
	struct wn_ctl_rereg_mr_req req;
	struct wn_ctl_reg_mr_resp resp;
	struct wn_client_mr *n;
	uint64_t iova = mr->iova;
	int ret;

	if ((flags & ~(uint32_t)WN_CLIENT_REREG_MASK) != 0 || flags == 0 ||
	    (mr->flags & WN_CTL_MR_F_FAST_REG) != 0)
		return -EINVAL;
	if (!(flags & WN_CLIENT_REREG_PD))
		pd = mr->pd;
	if (!(flags & WN_CLIENT_REREG_ACCESS))
		access = mr->access;
	if (flags & WN_CLIENT_REREG_TRANSLATION) {
		iova = (uintptr_t)addr;
	} else {
		addr = mr->addr;
		length = mr->length;
	}
	/*
	 * The new registration first (its STag reaches nothing): where its pages are the old
	 * one's nothing is made shareable again, and if it fails the old MR is as it was. Then
	 * it takes the old one's STag and the old one goes, in one request.
	 */
	n = reg_mr(c, pd, addr, length, iova, access, WN_CTL_MR_F_REREG);
	if (n == NULL)
		return -errno;
	req.mr = n->handle;
	req.old = mr->handle;
	ret = wn_client_call(c, WN_CTL_REREG_MR, &req, NULL, 0, &resp, NULL);
	if (ret != 0) {
		wn_client_dereg_mr(c, n); /* -EBUSY: windows are bound to the old one */
		return ret;
	}
	mr_drop_local(mr);
	n->lkey = resp.lkey;
	n->rkey = resp.rkey;
	n->flags = 0;
	*mr = *n;
	free(n);
	return 0;
}

static void *
map_ring(int fd, uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

struct wn_client_cq *
wn_client_create_cq(struct wn_client *c, uint32_t cqe, int notify_fd, uint64_t cookie)
{
	struct wn_ctl_create_cq_req req = {.cqe = cqe, .cookie = cookie};
	struct wn_ctl_ring_resp resp;
	struct wn_client_cq *cq;
	int ret, rfd;

	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return NULL;
	if (notify_fd >= 0)
		req.flags = WN_CTL_CQ_NOTIFY_FD;
	ret = wn_client_call(c, WN_CTL_CREATE_CQ, &req, &notify_fd, notify_fd >= 0 ? 1 : 0,
			     &resp, &rfd);
	if (ret != 0) {
		free(cq);
		errno = -ret;
		return NULL;
	}
	cq->ring = map_ring(rfd, resp.ring_size);
	if (cq->ring == NULL) {
		call_handle(c, WN_CTL_DESTROY_CQ, resp.handle);
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->handle = resp.handle;
	cq->depth = resp.depth[0];
	cq->ring_size = resp.ring_size;
	cq->cookie = cookie;
	if (wn_queue_cons_attach(&cq->cqr, cq->ring, cq->ring_size, WN_QUEUE_KIND_CQ) != 0) {
		munmap(cq->ring, cq->ring_size);
		call_handle(c, WN_CTL_DESTROY_CQ, resp.handle);
		free(cq);
		errno = EPROTO;
		return NULL;
	}
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return cq;
}

int
wn_client_destroy_cq(struct wn_client *c, struct wn_client_cq *cq)
{
	int ret = call_handle(c, WN_CTL_DESTROY_CQ, cq->handle);

	if (ret != 0 && ret != -ECONNRESET && ret != -EPIPE)
		return ret;
	munmap(cq->ring, cq->ring_size);
	free(cq);
	return 0;
}

struct wn_client_srq *
wn_client_create_srq(struct wn_client *c, uint32_t pd, uint32_t max_wr, uint32_t max_sge,
		     uint32_t srq_limit)
{
	struct wn_ctl_create_srq_req req = {.pd = pd, .max_wr = max_wr, .max_sge = max_sge,
					    .srq_limit = srq_limit};
	struct wn_ctl_ring_resp resp;
	struct wn_client_srq *srq;
	int ret, rfd;

	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return NULL;
	ret = wn_client_call(c, WN_CTL_CREATE_SRQ, &req, NULL, 0, &resp, &rfd);
	if (ret != 0) {
		free(srq);
		errno = -ret;
		return NULL;
	}
	srq->ring = map_ring(rfd, resp.ring_size);
	if (srq->ring == NULL) {
		call_handle(c, WN_CTL_DESTROY_SRQ, resp.handle);
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	srq->handle = resp.handle;
	srq->c = c;
	srq->depth = resp.depth[0];
	srq->max_sge = resp.sge[0];
	srq->ring_size = resp.ring_size;
	if (wn_queue_prod_attach(&srq->rq, srq->ring, srq->ring_size, WN_QUEUE_KIND_SRQ) != 0) {
		munmap(srq->ring, srq->ring_size);
		call_handle(c, WN_CTL_DESTROY_SRQ, resp.handle);
		free(srq);
		errno = EPROTO;
		return NULL;
	}
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	return srq;
}

int
wn_client_destroy_srq(struct wn_client *c, struct wn_client_srq *srq)
{
	int ret = call_handle(c, WN_CTL_DESTROY_SRQ, srq->handle);

	if (ret != 0 && ret != -ECONNRESET && ret != -EPIPE)
		return ret;
	munmap(srq->ring, srq->ring_size);
	free(srq);
	return 0;
}

/* SQ at offset 0, RQ (if any) at wn_queue_qp_rq_offset() of the QP memfd (wn_queue.h). */
static int
qp_attach(struct wn_client_qp *qp)
{
	uint64_t off = wn_queue_qp_rq_offset(qp->sq_depth, qp->max_send_sge, qp->max_inline);

	if (off == 0 || off > qp->ring_size ||
	    wn_queue_prod_attach(&qp->sq, qp->ring, off, WN_QUEUE_KIND_SQ) != 0)
		return -EPROTO;
	if (qp->rq_depth == 0)
		return 0;
	return wn_queue_prod_attach(&qp->rq, (uint8_t *)qp->ring + off, qp->ring_size - off,
				    WN_QUEUE_KIND_RQ);
}

struct wn_client_qp *
wn_client_create_qp(struct wn_client *c, const struct wn_ctl_create_qp_req *attr)
{
	struct wn_ctl_ring_resp resp;
	struct wn_client_qp *qp;
	int ret, rfd;

	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return NULL;
	ret = wn_client_call(c, WN_CTL_CREATE_QP, attr, NULL, 0, &resp, &rfd);
	if (ret != 0) {
		free(qp);
		errno = -ret;
		return NULL;
	}
	qp->ring = map_ring(rfd, resp.ring_size);
	if (qp->ring == NULL) {
		call_handle(c, WN_CTL_DESTROY_QP, resp.handle);
		free(qp);
		errno = ENOMEM;
		return NULL;
	}
	qp->handle = resp.handle;
	qp->c = c;
	qp->qpn = resp.qpn;
	qp->sq_depth = resp.depth[0];
	qp->rq_depth = resp.depth[1];
	qp->max_send_sge = resp.sge[0];
	qp->max_recv_sge = resp.sge[1];
	qp->max_inline = resp.max_inline;
	qp->ring_size = resp.ring_size;
	qp->state = WN_CTL_QPS_RESET;
	if (qp_attach(qp) != 0) {
		munmap(qp->ring, qp->ring_size);
		call_handle(c, WN_CTL_DESTROY_QP, resp.handle);
		free(qp);
		errno = EPROTO;
		return NULL;
	}
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	return qp;
}

int
wn_client_modify_qp(struct wn_client *c, struct wn_client_qp *qp,
		    const struct wn_ctl_modify_qp_req *req, struct wn_ctl_qp_attr *out)
{
	struct wn_ctl_modify_qp_req r = *req;
	struct wn_ctl_qp_attr a;
	int ret;

	r.qp = qp->handle;
	ret = wn_client_call(c, WN_CTL_MODIFY_QP, &r, NULL, 0, &a, NULL);
	if (ret != 0)
		return ret;
	qp->state = a.qp_state;
	if (out != NULL)
		*out = a;
	return 0;
}

int
wn_client_query_qp(struct wn_client *c, struct wn_client_qp *qp, struct wn_ctl_qp_attr *out)
{
	struct wn_ctl_handle h = {.handle = qp->handle};
	int ret = wn_client_call(c, WN_CTL_QUERY_QP, &h, NULL, 0, out, NULL);

	if (ret == 0)
		qp->state = out->qp_state;
	return ret;
}

int
wn_client_destroy_qp(struct wn_client *c, struct wn_client_qp *qp)
{
	int ret = call_handle(c, WN_CTL_DESTROY_QP, qp->handle);

	if (ret != 0 && ret != -ECONNRESET && ret != -EPIPE)
		return ret;
	munmap(qp->ring, qp->ring_size);
	free(qp);
	return 0;
}

/* ---------------------------------------------------------------- data path */

static void
wq_pick(struct wn_client_qp *qp, struct wn_client_srq *srq, bool rq, struct wn_queue_ring **r,
	pthread_spinlock_t **l)
{
	if (srq != NULL) {
		*r = &srq->rq;
		*l = &srq->lock;
	} else if (rq) {
		*r = &qp->rq;
		*l = &qp->rq_lock;
	} else {
		*r = &qp->sq;
		*l = &qp->sq_lock;
	}
}

int64_t
wn_client_wq_begin(struct wn_client_qp *qp, struct wn_client_srq *srq, bool rq)
{
	struct wn_queue_ring *r;
	pthread_spinlock_t *l;
	int64_t space;

	if (qp == NULL && srq == NULL)
		return -EINVAL;
	wq_pick(qp, srq, rq, &r, &l);
	if (r->hdr == NULL)
		return -EINVAL;
	pthread_spin_lock(l);
	space = wn_queue_prod_space(r);
	if (space < 0)
		pthread_spin_unlock(l);
	return space;
}

void *
wn_client_wq_slot(struct wn_client_qp *qp, struct wn_client_srq *srq, bool rq, uint32_t i)
{
	struct wn_queue_ring *r;
	pthread_spinlock_t *l;

	wq_pick(qp, srq, rq, &r, &l);
	return wn_queue_prod_slot(r, i);
}

void
wn_client_wq_end(struct wn_client_qp *qp, struct wn_client_srq *srq, bool rq, uint32_t n)
{
	struct wn_queue_ring *r;
	pthread_spinlock_t *l;

	struct wn_client *c;
	int bell = -1;

	wq_pick(qp, srq, rq, &r, &l);
	c = qp != NULL ? qp->c : srq->c;
	/* ring the doorbell only when the consumer may be idle (wn_queue.h, Dekker rule) */
	if (n > 0) {
		if (wn_queue_prod_commit(r, n)) {
			wn_queue_prod_ring(r);
			/* an SQ the lcore parked: mark it ready (wn_queue.h, ready maps) */
			wn_queue_ready_mark(r, c->ready, c->n_bells);
		}
		/* after commit's fence: the lcore serving the ring sleeps? (lcore doorbells) */
		bell = wn_queue_prod_bell(r, c->bells, c->n_bells);
	}
	pthread_spin_unlock(l);
	if (bell >= 0) {
		uint64_t one = 1;

		/* EAGAIN: the count is already non-zero, the lcore wakes anyway */
		(void)!write(c->bell_efd[bell], &one, sizeof(one));
	}
}

int
wn_client_poll_cq(struct wn_client_cq *cq, struct wn_queue_cqe *out, int n)
{
	int64_t avail;
	int i;

	if (n <= 0)
		return 0;
	pthread_spin_lock(&cq->lock);
	avail = wn_queue_cons_avail(&cq->cqr);
	if (avail < 0) {
		pthread_spin_unlock(&cq->lock);
		return -EPROTO;
	}
	if (avail < n)
		n = (int)avail;
	for (i = 0; i < n; i++)
		memcpy(&out[i], wn_queue_cons_slot(&cq->cqr, (uint32_t)i), sizeof(out[i]));
	if (n > 0)
		wn_queue_cons_release(&cq->cqr, (uint32_t)n);
	pthread_spin_unlock(&cq->lock);
	return n;
}

uint32_t
wn_client_cq_clean(struct wn_client_cq *cq, uint32_t qpn)
{
	uint32_t head, i, gone = 0;
	int64_t avail;

	pthread_spin_lock(&cq->lock);
	avail = wn_queue_cons_avail(&cq->cqr);
	head = cq->cqr.head;
	/*
	 * Newest to oldest, the survivors slide towards the newest end: every slot written is
	 * one the server published and cannot touch until the consumer index passes it.
	 */
	for (i = avail > 0 ? (uint32_t)avail : 0; i-- > 0;) {
		struct wn_queue_cqe *e = wn_queue_entry(&cq->cqr, head + i);

		if (e->qp_num == qpn)
			gone++;
		else if (gone > 0)
			memcpy(wn_queue_entry(&cq->cqr, head + i + gone), e, sizeof(*e));
	}
	if (gone > 0)
		wn_queue_cons_release(&cq->cqr, gone);
	pthread_spin_unlock(&cq->lock);
	return gone;
}

void
wn_client_cq_arm(struct wn_client_cq *cq, bool solicited_only)
{
	wn_queue_cq_arm(&cq->cqr, solicited_only);
}

/* ---------------------------------------------------------------- CM */

struct wn_client_cm_channel *
wn_client_cm_channel_create(struct wn_client *c)
{
	struct wn_client_cm_channel *ch = calloc(1, sizeof(*ch));
	struct wn_ctl_handle h;
	int ret, rfd;

	if (ch == NULL)
		return NULL;
	ret = wn_client_call(c, WN_CTL_CM_CREATE_CHANNEL, NULL, NULL, 0, &h, &rfd);
	if (ret != 0) {
		free(ch);
		errno = -ret;
		return NULL;
	}
	ch->handle = h.handle;
	ch->fd = rfd;
	return ch;
}

int
wn_client_cm_channel_destroy(struct wn_client *c, struct wn_client_cm_channel *ch)
{
	int ret = call_handle(c, WN_CTL_CM_DESTROY_CHANNEL, ch->handle);

	if (ret != 0 && ret != -ECONNRESET && ret != -EPIPE)
		return ret;
	close(ch->fd);
	free(ch);
	return 0;
}

/*
 * One datagram of an event socket, checked by @p check, its body (@p len octets after the
 * header) to @p out. A plain recv(): a cancellation point, unlike recvmsg with fds handling.
 * @return 0, -EPIPE (the server closed it), -EBADMSG or -errno.
 */
static int
event_recv(int fd, int (*check)(const void *buf, size_t len), void *out, size_t len)
{
	union {
		struct wn_ctl_hdr h;
		uint8_t b[WN_CTL_MSG_MAX];
	} m;
	ssize_t n;

	do {
		n = recv(fd, m.b, sizeof(m.b), 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EPIPE;
	if (check(m.b, (size_t)n) != 0)
		return -EBADMSG;
	memcpy(out, m.b + sizeof(m.h), len);
	return 0;
}

int
wn_client_cm_get_event(struct wn_client_cm_channel *ch, struct wn_ctl_cm_event *ev)
{
	return event_recv(ch->fd, wn_ctl_event_check, ev, sizeof(*ev));
}

int
wn_client_async_open(struct wn_client *c)
{
	int fd = -1;
	int ret = wn_client_call(c, WN_CTL_ASYNC_CHANNEL, NULL, NULL, 0, NULL, &fd);

	return ret != 0 ? ret : fd;
}

int
wn_client_async_read(int fd, struct wn_ctl_async_event *ev)
{
	return event_recv(fd, wn_ctl_async_check, ev, sizeof(*ev));
}

int
wn_client_cm_create_id(struct wn_client *c, struct wn_client_cm_channel *ch, uint64_t cookie,
		       uint32_t *id)
{
	return wn_client_cm_create_id_ps(c, ch, WN_CTL_PS_TCP, cookie, id);
}

int
wn_client_cm_create_id_ps(struct wn_client *c, struct wn_client_cm_channel *ch, uint32_t ps,
			  uint64_t cookie, uint32_t *id)
{
	struct wn_ctl_cm_create_id_req r = {.channel = ch->handle, .ps = ps, .cookie = cookie};
	struct wn_ctl_handle h;
	int ret = wn_client_call(c, WN_CTL_CM_CREATE_ID, &r, NULL, 0, &h, NULL);

	if (ret == 0)
		*id = h.handle;
	return ret;
}

int
wn_client_cm_destroy_id(struct wn_client *c, uint32_t id)
{
	return call_handle(c, WN_CTL_CM_DESTROY_ID, id);
}

int
wn_client_cm_migrate_id(struct wn_client *c, uint32_t id, struct wn_client_cm_channel *ch)
{
	struct wn_ctl_cm_migrate_req r = {.id = id, .channel = ch->handle};

	return wn_client_call(c, WN_CTL_CM_MIGRATE_ID, &r, NULL, 0, NULL, NULL);
}

int
wn_client_cm_addr(struct wn_client *c, uint16_t op, uint32_t id, const struct wn_ctl_addr *src,
		  const struct wn_ctl_addr *dst, uint32_t arg, struct wn_ctl_cm_addr_resp *out)
{
	struct wn_ctl_cm_addr_req r;
	struct wn_ctl_cm_addr_resp tmp;

	if (op != WN_CTL_CM_BIND && op != WN_CTL_CM_RESOLVE_ADDR &&
	    op != WN_CTL_CM_RESOLVE_ROUTE && op != WN_CTL_CM_LISTEN)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.id = id;
	r.timeout_ms = arg;
	if (src != NULL)
		r.src = *src;
	if (dst != NULL)
		r.dst = *dst;
	return wn_client_call(c, op, &r, NULL, 0, out != NULL ? out : &tmp, NULL);
}

int
wn_client_cm_conn(struct wn_client *c, uint16_t op, uint32_t id, uint32_t qp,
		  const struct wn_ctl_conn_param *param)
{
	struct wn_ctl_cm_conn_req r;

	if (op != WN_CTL_CM_CONNECT && op != WN_CTL_CM_ACCEPT && op != WN_CTL_CM_REJECT)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.id = id;
	r.qp = op == WN_CTL_CM_REJECT ? 0 : qp;
	if (param != NULL) {
		if (param->pd_len > WN_CTL_PD_MAX)
			return -EINVAL;
		r.param.ird = param->ird;
		r.param.ord = param->ord;
		r.param.flags = param->flags;
		r.param.pd_len = param->pd_len;
		memcpy(r.param.pd, param->pd, param->pd_len);
	} else {
		r.param.ird = 1;
		r.param.ord = 1;
	}
	return wn_client_call(c, op, &r, NULL, 0, NULL, NULL);
}

int
wn_client_cm_disconnect(struct wn_client *c, uint32_t id)
{
	return call_handle(c, WN_CTL_CM_DISCONNECT, id);
}

int
wn_client_addr_from_sockaddr(struct wn_ctl_addr *out, const void *sa)
{
	const struct sockaddr *s = sa;

	memset(out, 0, sizeof(*out));
	if (s->sa_family == AF_INET) {
		const struct sockaddr_in *in = sa;

		out->family = WN_CTL_AF_INET;
		out->port = ntohs(in->sin_port);
		memcpy(out->addr, &in->sin_addr, 4);
		return 0;
	}
	if (s->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = sa;

		out->family = WN_CTL_AF_INET6;
		out->port = ntohs(in6->sin6_port);
		out->scope_id = in6->sin6_scope_id;
		memcpy(out->addr, &in6->sin6_addr, 16);
		return 0;
	}
	return -EAFNOSUPPORT;
}

unsigned int
wn_client_addr_to_sockaddr(void *ss, const struct wn_ctl_addr *a)
{
	if (a->family == WN_CTL_AF_INET) {
		struct sockaddr_in *in = ss;

		memset(in, 0, sizeof(*in));
		in->sin_family = AF_INET;
		in->sin_port = htons(a->port);
		memcpy(&in->sin_addr, a->addr, 4);
		return sizeof(*in);
	}
	if (a->family == WN_CTL_AF_INET6) {
		struct sockaddr_in6 *in6 = ss;

		memset(in6, 0, sizeof(*in6));
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(a->port);
		in6->sin6_scope_id = a->scope_id;
		memcpy(&in6->sin6_addr, a->addr, 16);
		return sizeof(*in6);
	}
	return 0;
}
