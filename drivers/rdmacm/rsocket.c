/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsockets (rdma/rsocket.h): stream sockets over an RC QP, built on this shim's own rdma_cm
 * and the verbs shim, as rdma-core's librdmacm offers them (rstream, riostream and
 * librspreload call these). Both ends are warpnic shims; the protocol (rs_wire.h) follows
 * rdma-core's rsockets in spirit, not on the wire:
 *
 * - each side keeps `slots` receives posted, each on its own slot of a registered receive
 *   buffer, and tells the peer how many and how large in the connection's private data;
 * - data travels in Sends of at most one slot (an 8-octet header, then the octets), so a
 *   message never needs more than the receive it lands in;
 * - every message carries a cumulative acknowledgement: how many of the peer's messages
 *   the sender has consumed (their slots read and their receives posted again). A side
 *   sends while its unacknowledged messages are fewer than the peer's slots (data keeps
 *   RS_CTRL_RESERVE of them for control messages), so a Send always finds a receive and a
 *   slow reader holds the writer back instead of losing data (iWARP has no RNR retry);
 * - a reader that has consumed half of its slots since it last said so and has nothing to
 *   send sends a CREDIT message; FIN says "no more data" (shutdown); IOMAP opens a region
 *   of the sender's memory to the peer's riowrite(), which is an RDMA Write into it.
 *
 * The socket number is the fd of the socket's rdma_cm event channel (as in rdma-core), so
 * it never collides with the program's own fds. Blocking calls and rpoll() sleep on the
 * completion channel and the event channel with ppoll() (not poll(): under librspreload
 * poll() is rpoll() again).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

#include "rs_wire.h"

#define EXPORT __attribute__((visibility("default")))

#define RS_SLOT 16384u           /* octets per slot, both buffers */
#define RS_BUF_DEFAULT (1u << 19) /* SO_SNDBUF / SO_RCVBUF before the program sets them */
#define RS_CTRL_RESERVE 2u        /* peer receives only control messages may take */
#define RS_CLOSE_WAIT_MS 2000     /* rclose(): longest wait for the disconnect */
#define RS_CLOSE_IDLE_MS 10000    /* rclose(): gives up on sends that made no progress so long */
#define RS_CONNECT_MS 30000       /* longest wait for a connection's events */
#define RS_NAP_MS 1000            /* longest sleep before looking again (a safety net) */

enum rs_state {
	RS_INIT,
	RS_LISTENING,
	RS_RESOLVING, /* address, then route */
	RS_CONNECTING,
	RS_CONNECTED,
	RS_FAILED,
};

struct rs_req {
	struct rdma_cm_id *id;
	uint8_t pd[sizeof(struct rs_wire_conn)];
	uint8_t pd_len;
	struct rs_req *next;
};

struct rs_lmap { /* a region of ours open to the peer's riowrite() */
	void *buf;
	size_t len;
	uint64_t offset;
	struct ibv_mr *mr;
	struct rs_lmap *next;
};

struct rs_rmap { /* a region of the peer's, from its IOMAP message */
	struct rs_wire_iomap m;
	struct rs_rmap *next;
};

struct rs {
	int fd; /* the socket number: ec->fd */
	pthread_mutex_t lock;
	enum rs_state state;
	int err;   /* SO_ERROR, cleared when read */
	int fatal; /* why the connection is gone (sends fail with it) */
	bool nonblock;
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct rs_req *reqs; /* listener: connect requests not accepted yet */
	/* options */
	int sndbuf, rcvbuf, nodelay, keepalive, keepidle, reuseaddr, reuseport, inline_size;
	int iomapsize;
	int sqsize, rqsize;
	struct linger linger;
	/* connection */
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	bool armed;
	uint8_t *rbuf, *sbuf;
	struct ibv_mr *rmr, *smr;
	uint32_t nr, ns;          /* receive slots (posted), send slots */
	uint32_t s_next, s_busy;  /* send slot to take next; slots whose WR is not complete */
	uint32_t *rxq, *rxlen;    /* DATA slots received and not read yet, in order */
	uint32_t rx_head, rx_cnt, rx_off;
	uint32_t rx_done, rx_told; /* messages consumed / acknowledged to the peer */
	uint32_t tx_sent, tx_acked;
	uint32_t peer_nr, peer_slot;
	bool rx_fin, fin_want, fin_sent, disc, disc_sent, shut_rd, shut_wr;
	struct rs_lmap *lmaps;
	uint64_t lmap_next;
	struct rs_rmap *rmaps;
};

static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rs **tab;
static int tab_len;

static int
fail(int err)
{
	errno = err;
	return -1;
}

/*
 * EAGAIN from a data call. Programs written for RNICs retry at once (rstream's default
 * mode spins on rsend/rrecv); here the peer's data moves through warpnicd's threads on the
 * same cores, so give the CPU away first.
 */
static int
again(void)
{
	sched_yield();
	return fail(EAGAIN);
}

static int64_t
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ the socket table */

static struct rs *
rs_get(int s)
{
	struct rs *rs = NULL;

	pthread_mutex_lock(&tab_lock);
	if (s >= 0 && s < tab_len)
		rs = tab[s];
	pthread_mutex_unlock(&tab_lock);
	return rs;
}

static int
rs_tab_set(int s, struct rs *rs)
{
	struct rs **t;
	int n;

	pthread_mutex_lock(&tab_lock);
	if (s >= tab_len) {
		n = s + 64;
		t = realloc(tab, (size_t)n * sizeof(*t));
		if (t == NULL) {
			pthread_mutex_unlock(&tab_lock);
			return -ENOMEM;
		}
		memset(t + tab_len, 0, (size_t)(n - tab_len) * sizeof(*t));
		tab = t;
		tab_len = n;
	}
	tab[s] = rs;
	pthread_mutex_unlock(&tab_lock);
	return 0;
}

/* A socket around an id on its own channel; NULL with errno set. */
static struct rs *
rs_new(struct rdma_event_channel *ec, struct rdma_cm_id *id)
{
	struct rs *rs = calloc(1, sizeof(*rs));

	if (rs == NULL)
		return NULL;
	rs->fd = ec->fd;
	rs->ec = ec;
	rs->id = id;
	rs->sndbuf = RS_BUF_DEFAULT;
	rs->rcvbuf = RS_BUF_DEFAULT;
	pthread_mutex_init(&rs->lock, NULL);
	if (rs_tab_set(rs->fd, rs) != 0) {
		free(rs);
		errno = ENOMEM;
		return NULL;
	}
	return rs;
}

static void
rs_teardown(struct rs *rs)
{
	struct rs_lmap *l;
	struct rs_rmap *r;
	struct rs_req *q;

	while ((q = rs->reqs) != NULL) {
		rs->reqs = q->next;
		rdma_reject(q->id, NULL, 0);
		rdma_destroy_id(q->id);
		free(q);
	}
	while ((l = rs->lmaps) != NULL) {
		rs->lmaps = l->next;
		ibv_dereg_mr(l->mr);
		free(l);
	}
	while ((r = rs->rmaps) != NULL) {
		rs->rmaps = r->next;
		free(r);
	}
	if (rs->id != NULL && rs->id->qp != NULL)
		rdma_destroy_qp(rs->id);
	if (rs->rmr != NULL)
		ibv_dereg_mr(rs->rmr);
	if (rs->smr != NULL)
		ibv_dereg_mr(rs->smr);
	if (rs->cq != NULL)
		ibv_destroy_cq(rs->cq);
	if (rs->cc != NULL)
		ibv_destroy_comp_channel(rs->cc);
	if (rs->pd != NULL)
		ibv_dealloc_pd(rs->pd);
	free(rs->rbuf);
	free(rs->sbuf);
	free(rs->rxq);
	free(rs->rxlen);
	if (rs->id != NULL)
		rdma_destroy_id(rs->id);
	rs_tab_set(rs->fd, NULL);
	rdma_destroy_event_channel(rs->ec);
	pthread_mutex_destroy(&rs->lock);
	free(rs);
}

/* ------------------------------------------------------------------ resources */

static uint32_t
slots_for(int bytes)
{
	uint32_t n = (uint32_t)(bytes > 0 ? bytes : 0) / RS_SLOT;

	if (n < 8)
		n = 8;
	return n > 256 ? 256 : n;
}

static int
rs_post_recv(struct rs *rs, uint32_t slot)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(rs->rbuf + (size_t)slot * RS_SLOT),
			      .length = RS_SLOT, .lkey = rs->rmr->lkey};
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;

	return ibv_post_recv(rs->id->qp, &wr, &bad);
}

/* PD, CQ on a completion channel, the QP, both buffers registered, every receive posted. */
static int
rs_setup(struct rs *rs)
{
	struct ibv_context *ctx = rs->id->verbs;
	struct ibv_qp_init_attr a;
	uint32_t i;

	rs->nr = rs->rqsize > 0 ? (uint32_t)rs->rqsize : slots_for(rs->rcvbuf);
	rs->ns = rs->sqsize > 0 ? (uint32_t)rs->sqsize : slots_for(rs->sndbuf);
	if (rs->nr < RS_SLOTS_MIN)
		rs->nr = RS_SLOTS_MIN;
	if (rs->nr > RS_SLOTS_MAX)
		rs->nr = RS_SLOTS_MAX;
	if (rs->ns < 2)
		rs->ns = 2;
	if (rs->ns > RS_SLOTS_MAX)
		rs->ns = RS_SLOTS_MAX;
	rs->pd = ibv_alloc_pd(ctx);
	rs->cc = rs->pd != NULL ? ibv_create_comp_channel(ctx) : NULL;
	rs->cq = rs->cc != NULL ? ibv_create_cq(ctx, (int)(rs->nr + rs->ns + 8), rs, rs->cc, 0)
				: NULL;
	if (rs->cq == NULL)
		return -1;
	if (posix_memalign((void **)&rs->rbuf, 4096, (size_t)rs->nr * RS_SLOT) != 0 ||
	    posix_memalign((void **)&rs->sbuf, 4096, (size_t)rs->ns * RS_SLOT) != 0)
		return fail(ENOMEM);
	rs->rxq = calloc(rs->nr, sizeof(*rs->rxq));
	rs->rxlen = calloc(rs->nr, sizeof(*rs->rxlen));
	if (rs->rxq == NULL || rs->rxlen == NULL)
		return fail(ENOMEM);
	rs->rmr = ibv_reg_mr(rs->pd, rs->rbuf, (size_t)rs->nr * RS_SLOT, IBV_ACCESS_LOCAL_WRITE);
	rs->smr = ibv_reg_mr(rs->pd, rs->sbuf, (size_t)rs->ns * RS_SLOT, 0);
	if (rs->rmr == NULL || rs->smr == NULL)
		return -1;
	memset(&a, 0, sizeof(a));
	a.send_cq = rs->cq;
	a.recv_cq = rs->cq;
	a.qp_type = IBV_QPT_RC;
	a.sq_sig_all = 1;
	a.cap.max_send_wr = rs->ns + 4;
	a.cap.max_recv_wr = rs->nr;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	if (rdma_create_qp(rs->id, rs->pd, &a) != 0)
		return -1;
	for (i = 0; i < rs->nr; i++)
		if (rs_post_recv(rs, i) != 0)
			return fail(ENOMEM);
	return 0;
}

static void
rs_conn_param(struct rs *rs, struct rdma_conn_param *p, struct rs_wire_conn *pd)
{
	rs_wire_conn_make(pd, rs->nr, RS_SLOT);
	memset(p, 0, sizeof(*p));
	p->private_data = pd;
	p->private_data_len = sizeof(*pd);
	p->responder_resources = 1;
	p->initiator_depth = 1;
}

/* ------------------------------------------------------------------ sending */

static uint32_t
rs_outstanding(const struct rs *rs)
{
	return rs->tx_sent - rs->tx_acked;
}

/* Room for one more message: a free send slot and a receive at the peer. */
static bool
rs_can_send(const struct rs *rs, bool ctrl)
{
	uint32_t limit = ctrl ? rs->peer_nr : rs->peer_nr - RS_CTRL_RESERVE;

	return rs->state == RS_CONNECTED && !rs->disc && rs->fatal == 0 && rs->s_busy < rs->ns &&
	       rs_outstanding(rs) < limit;
}

static uint8_t *
rs_slot_take(struct rs *rs, uint32_t *slot)
{
	*slot = rs->s_next;
	rs->s_next = (rs->s_next + 1) % rs->ns;
	rs->s_busy++;
	return rs->sbuf + (size_t)*slot * RS_SLOT;
}

static int
rs_post(struct rs *rs, struct ibv_send_wr *wr, uint32_t slot, uint32_t len)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(rs->sbuf + (size_t)slot * RS_SLOT),
			      .length = len, .lkey = rs->smr->lkey};
	struct ibv_send_wr *bad;
	int ret;

	wr->wr_id = (1ull << 32) | slot;
	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	ret = ibv_post_send(rs->id->qp, wr, &bad);
	if (ret != 0) {
		rs->s_busy--;
		rs->s_next = slot;
		rs->fatal = rs->fatal ? rs->fatal : ECONNRESET;
		return -1;
	}
	return 0;
}

/* One message: header (with our acknowledgement), then @p len octets of @p data. */
static int
rs_send_msg(struct rs *rs, enum rs_op op, const void *data, uint32_t len)
{
	struct ibv_send_wr wr;
	uint32_t slot;
	uint8_t *p = rs_slot_take(rs, &slot);

	rs_wire_hdr_make(p, op, rs->rx_done);
	if (len > 0)
		memcpy(p + sizeof(struct rs_wire_hdr), data, len);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_SEND;
	if (rs_post(rs, &wr, slot, (uint32_t)sizeof(struct rs_wire_hdr) + len) != 0)
		return -1;
	rs->tx_sent++;
	rs->rx_told = rs->rx_done;
	return 0;
}

/* FIN when wanted, a CREDIT when half of our slots were consumed since we last told. */
static void
rs_send_ctrl(struct rs *rs)
{
	if (rs->fin_want && !rs->fin_sent && rs_can_send(rs, true)) {
		if (rs_send_msg(rs, RS_OP_FIN, NULL, 0) == 0)
			rs->fin_sent = true;
	}
	if (rs->rx_done - rs->rx_told >= rs->nr / 2 && rs_can_send(rs, true))
		rs_send_msg(rs, RS_OP_CREDIT, NULL, 0);
}

/* ------------------------------------------------------------------ progress */

static void
rs_consumed(struct rs *rs, uint32_t slot)
{
	if (rs_post_recv(rs, slot) != 0)
		rs->fatal = rs->fatal ? rs->fatal : ECONNRESET;
	rs->rx_done++;
}

static void
rs_rmap_add(struct rs *rs, const struct rs_wire_iomap *m)
{
	struct rs_rmap *r = calloc(1, sizeof(*r));

	if (r == NULL) {
		rs->fatal = ENOMEM;
		return;
	}
	r->m = *m;
	r->next = rs->rmaps;
	rs->rmaps = r;
}

static void
rs_recv_done(struct rs *rs, const struct ibv_wc *wc)
{
	uint32_t slot = (uint32_t)wc->wr_id;
	struct rs_msg m;

	if (slot >= rs->nr || rs_wire_msg_parse(rs->rbuf + (size_t)slot * RS_SLOT, wc->byte_len,
						&m) != 0) {
		rs->fatal = EPROTO;
		return;
	}
	if ((int32_t)(m.ack - rs->tx_acked) > 0)
		rs->tx_acked = m.ack;
	switch (m.op) {
	case RS_OP_DATA:
		rs->rxq[(rs->rx_head + rs->rx_cnt) % rs->nr] = slot;
		rs->rxlen[(rs->rx_head + rs->rx_cnt) % rs->nr] = (uint32_t)m.len;
		rs->rx_cnt++;
		return;
	case RS_OP_FIN:
		rs->rx_fin = true;
		break;
	case RS_OP_IOMAP:
		rs_rmap_add(rs, &m.map);
		break;
	case RS_OP_CREDIT:
		break;
	}
	rs_consumed(rs, slot);
}

static void
rs_poll_cq(struct rs *rs)
{
	struct ibv_wc wc[16];
	int i, n;

	if (rs->cq == NULL)
		return;
	do {
		n = ibv_poll_cq(rs->cq, 16, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				bool send = (wc[i].wr_id >> 32) != 0;

				if (send)
					rs->s_busy--;
				/* Flushed by a disconnect: the data before it was delivered. The
				 * flush may be seen before the DISCONNECTED event (another
				 * channel); a receive flushed after the peer's FIN lost nothing. */
				if (!rs->disc && !(rs->rx_fin && !send) && rs->fatal == 0)
					rs->fatal = ECONNRESET;
				continue;
			}
			if (wc[i].wr_id >> 32)
				rs->s_busy--;
			else
				rs_recv_done(rs, &wc[i]);
		}
	} while (n == 16);
}

static void
rs_fail_conn(struct rs *rs, int err)
{
	rs->state = RS_FAILED;
	rs->err = err;
	rs->fatal = err;
}

static int
rs_start_connect(struct rs *rs)
{
	struct rdma_conn_param p;
	struct rs_wire_conn pd;

	if (rs_setup(rs) != 0)
		return -errno;
	rs_conn_param(rs, &p, &pd);
	if (rdma_connect(rs->id, &p) != 0)
		return -errno;
	rs->state = RS_CONNECTING;
	return 0;
}

static void
rs_established(struct rs *rs, const struct rdma_cm_event *ev)
{
	if (rs->peer_nr == 0 &&
	    rs_wire_conn_parse(ev->param.conn.private_data, ev->param.conn.private_data_len,
			       &rs->peer_nr, &rs->peer_slot) != 0) {
		rs_fail_conn(rs, EPROTO);
		rdma_disconnect(rs->id);
		return;
	}
	rs->state = RS_CONNECTED;
}

static void
rs_listen_event(struct rs *rs, struct rdma_cm_event *ev)
{
	struct rs_req *q, **pp;

	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* a request that went away before it was accepted: raccept() skips it */
		return;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		return;
	}
	q->id = ev->id;
	q->pd_len = ev->param.conn.private_data_len > sizeof(q->pd)
			    ? sizeof(q->pd)
			    : ev->param.conn.private_data_len;
	if (q->pd_len > 0)
		memcpy(q->pd, ev->param.conn.private_data, q->pd_len);
	for (pp = &rs->reqs; *pp != NULL; pp = &(*pp)->next)
		;
	*pp = q;
}

static void
rs_cm_event(struct rs *rs, struct rdma_cm_event *ev)
{
	int ret;

	if (rs->state == RS_LISTENING) {
		rs_listen_event(rs, ev);
		return;
	}
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(rs->id, 2000) != 0)
			rs_fail_conn(rs, errno);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = rs_start_connect(rs);
		if (ret != 0)
			rs_fail_conn(rs, -ret);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		rs_established(rs, ev);
		break;
	case RDMA_CM_EVENT_REJECTED:
		rs_fail_conn(rs, ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		rs_fail_conn(rs, rs->state == RS_RESOLVING ? EHOSTUNREACH : ETIMEDOUT);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		rs_fail_conn(rs, ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		rs->disc = true;
		if (rs->state != RS_CONNECTED)
			rs_fail_conn(rs, ECONNRESET);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		rs_fail_conn(rs, ENODEV);
		break;
	default:
		break;
	}
}

static bool
fd_readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	struct timespec zero = {0, 0};

	return ppoll(&p, 1, &zero, NULL) > 0 && (p.revents & POLLIN);
}

/* Everything that arrived: CM events, completions; then control messages due. */
static void
rs_progress(struct rs *rs)
{
	struct rdma_cm_event *ev;

	while (fd_readable(rs->ec->fd) && rdma_get_cm_event(rs->ec, &ev) == 0) {
		rs_cm_event(rs, ev);
		rdma_ack_cm_event(ev);
	}
	rs_poll_cq(rs);
	if (rs->state == RS_CONNECTED)
		rs_send_ctrl(rs);
}

/*
 * Arm the CQ (once per wakeup): false if completions arrived meanwhile (look again), true
 * when sleeping on the channels is safe.
 */
static bool
rs_arm(struct rs *rs)
{
	if (rs->cq == NULL || rs->armed)
		return true;
	if (ibv_req_notify_cq(rs->cq, 0) != 0)
		return true;
	rs->armed = true;
	return false; /* completions may have come before the arm: progress once more */
}

/* A wakeup on the completion channel: take the event, re-arm next time. */
static void
rs_cq_event(struct rs *rs)
{
	struct ibv_cq *cq;
	void *ctx;

	if (rs->cc != NULL && fd_readable(rs->cc->fd) && ibv_get_cq_event(rs->cc, &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		rs->armed = false;
	}
}

/*
 * Sleep (lock released) until something may have happened on @p rs, at most @p ms
 * (-1: RS_NAP_MS at a time). Called with the lock held, after a progress found nothing.
 */
static void
rs_sleep(struct rs *rs, int ms)
{
	struct pollfd p[2] = {{.fd = rs->ec->fd, .events = POLLIN}, {.fd = -1}};
	struct timespec t;

	if (!rs_arm(rs))
		return;
	if (rs->cc != NULL)
		p[1] = (struct pollfd){.fd = rs->cc->fd, .events = POLLIN};
	if (ms < 0 || ms > RS_NAP_MS)
		ms = RS_NAP_MS;
	t.tv_sec = ms / 1000;
	t.tv_nsec = (long)(ms % 1000) * 1000000;
	pthread_mutex_unlock(&rs->lock);
	ppoll(p, 2, &t, NULL);
	pthread_mutex_lock(&rs->lock);
	rs_cq_event(rs);
}

/* ------------------------------------------------------------------ sockets */

EXPORT int
rsocket(int domain, int type, int protocol)
{
	struct rdma_event_channel *ec;
	struct rdma_cm_id *id;
	struct rs *rs;
	int nonblock = type & SOCK_NONBLOCK;

	type &= ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (domain != AF_INET && domain != AF_INET6)
		return fail(EAFNOSUPPORT);
	/* datagram rsockets need UD QPs, which an iWARP device does not have */
	if (type != SOCK_STREAM)
		return fail(ENOTSUP);
	if (protocol != 0 && protocol != IPPROTO_TCP)
		return fail(EPROTONOSUPPORT);
	ec = rdma_create_event_channel();
	if (ec == NULL)
		return -1;
	if (rdma_create_id(ec, &id, NULL, RDMA_PS_TCP) != 0) {
		int err = errno;

		rdma_destroy_event_channel(ec);
		return fail(err);
	}
	rs = rs_new(ec, id);
	if (rs == NULL) {
		int err = errno;

		rdma_destroy_id(id);
		rdma_destroy_event_channel(ec);
		return fail(err);
	}
	id->context = rs;
	rs->nonblock = nonblock != 0;
	return rs->fd;
}

#define RS_GET(var, s) \
	struct rs *var = rs_get(s); \
	if (var == NULL) \
		return fail(EBADF)

EXPORT int
rbind(int s, const struct sockaddr *addr, socklen_t len)
{
	RS_GET(rs, s);
	int ret;

	if (addr == NULL || len < sizeof(struct sockaddr_in))
		return fail(EINVAL);
	pthread_mutex_lock(&rs->lock);
	ret = rs->state == RS_INIT ? rdma_bind_addr(rs->id, (struct sockaddr *)addr)
				   : fail(EINVAL);
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

EXPORT int
rlisten(int s, int backlog)
{
	RS_GET(rs, s);
	int ret;

	pthread_mutex_lock(&rs->lock);
	if (rs->state == RS_LISTENING)
		ret = 0;
	else if (rs->state != RS_INIT)
		ret = fail(EINVAL);
	else if ((ret = rdma_listen(rs->id, backlog)) == 0)
		rs->state = RS_LISTENING;
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

static void
copy_addr(struct sockaddr *addr, socklen_t *len, const struct sockaddr *sa)
{
	socklen_t n = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						: sizeof(struct sockaddr_in);

	if (addr == NULL || len == NULL)
		return;
	memcpy(addr, sa, *len < n ? *len : n);
	*len = n;
}

/* Wait (lock held) until @p done(rs) or the deadline; false on timeout. */
static bool
rs_wait_until(struct rs *rs, bool (*done)(const struct rs *), int64_t deadline)
{
	for (;;) {
		rs_progress(rs);
		if (done(rs))
			return true;
		if (deadline >= 0 && now_ms() >= deadline)
			return false;
		rs_sleep(rs, deadline < 0 ? -1 : (int)(deadline - now_ms()));
	}
}

static bool
rs_settled(const struct rs *rs)
{
	return rs->state == RS_CONNECTED || rs->state == RS_FAILED;
}

/* A socket for a connect request: its own channel, resources, accepted, established. */
static struct rs *
rs_accept_req(struct rs *lrs, struct rs_req *q)
{
	struct rdma_event_channel *ec = rdma_create_event_channel();
	struct rdma_conn_param p;
	struct rs_wire_conn pd;
	struct rs *rs;

	if (ec == NULL)
		return NULL;
	if (rdma_migrate_id(q->id, ec) != 0) {
		rdma_destroy_event_channel(ec);
		return NULL;
	}
	rs = rs_new(ec, q->id);
	if (rs == NULL) {
		rdma_destroy_event_channel(ec);
		return NULL;
	}
	q->id->context = rs;
	q->id = NULL;
	rs->sndbuf = lrs->sndbuf;
	rs->rcvbuf = lrs->rcvbuf;
	rs->sqsize = lrs->sqsize;
	rs->rqsize = lrs->rqsize;
	rs->nodelay = lrs->nodelay;
	rs->keepalive = lrs->keepalive;
	rs->inline_size = lrs->inline_size;
	pthread_mutex_lock(&rs->lock);
	if (rs_wire_conn_parse(q->pd, q->pd_len, &rs->peer_nr, &rs->peer_slot) != 0) {
		rdma_reject(rs->id, NULL, 0);
		errno = ECONNABORTED;
		goto err;
	}
	if (rs_setup(rs) != 0)
		goto err_reject;
	rs_conn_param(rs, &p, &pd);
	if (rdma_accept(rs->id, &p) != 0)
		goto err;
	rs->state = RS_CONNECTING;
	if (!rs_wait_until(rs, rs_settled, now_ms() + RS_CONNECT_MS) ||
	    rs->state != RS_CONNECTED) {
		errno = ECONNABORTED;
		goto err;
	}
	pthread_mutex_unlock(&rs->lock);
	return rs;
err_reject:
	rdma_reject(rs->id, NULL, 0);
err:
	pthread_mutex_unlock(&rs->lock);
	{
		int err = errno;

		rs_teardown(rs);
		errno = err;
	}
	return NULL;
}

static bool
rs_has_req(const struct rs *rs)
{
	return rs->reqs != NULL || rs->state != RS_LISTENING;
}

EXPORT int
raccept(int s, struct sockaddr *addr, socklen_t *addrlen)
{
	RS_GET(lrs, s);
	struct rs_req *q;
	struct rs *rs;

	pthread_mutex_lock(&lrs->lock);
	if (lrs->state != RS_LISTENING) {
		pthread_mutex_unlock(&lrs->lock);
		return fail(EINVAL);
	}
	for (;;) {
		rs_progress(lrs);
		if (lrs->reqs == NULL) {
			if (lrs->nonblock) {
				pthread_mutex_unlock(&lrs->lock);
				return fail(EAGAIN);
			}
			rs_wait_until(lrs, rs_has_req, -1);
			continue;
		}
		q = lrs->reqs;
		lrs->reqs = q->next;
		rs = rs_accept_req(lrs, q);
		if (q->id != NULL)
			rdma_destroy_id(q->id);
		free(q);
		if (rs != NULL)
			break;
		/* that request failed; a nonblocking caller hears of it, others wait on */
		if (lrs->nonblock) {
			pthread_mutex_unlock(&lrs->lock);
			return fail(ECONNABORTED);
		}
	}
	pthread_mutex_unlock(&lrs->lock);
	copy_addr(addr, addrlen, rdma_get_peer_addr(rs->id));
	return rs->fd;
}

EXPORT int
rconnect(int s, const struct sockaddr *addr, socklen_t len)
{
	RS_GET(rs, s);
	int ret = 0;

	if (addr == NULL || len < sizeof(struct sockaddr_in))
		return fail(EINVAL);
	pthread_mutex_lock(&rs->lock);
	switch (rs->state) {
	case RS_INIT:
		if (rdma_resolve_addr(rs->id, NULL, (struct sockaddr *)addr, 2000) != 0) {
			ret = -1;
			goto out;
		}
		rs->state = RS_RESOLVING;
		break;
	case RS_RESOLVING:
	case RS_CONNECTING:
		if (rs->nonblock) {
			ret = fail(EALREADY);
			goto out;
		}
		break;
	case RS_CONNECTED:
		ret = fail(EISCONN);
		goto out;
	default:
		ret = fail(rs->err ? rs->err : EINVAL);
		goto out;
	}
	if (rs->nonblock) {
		rs_progress(rs);
		if (rs->state != RS_CONNECTED) {
			ret = fail(EINPROGRESS);
			goto out;
		}
	} else {
		rs_wait_until(rs, rs_settled, now_ms() + RS_CONNECT_MS);
		if (rs->state != RS_CONNECTED) {
			ret = fail(rs->state == RS_FAILED ? rs->err : ETIMEDOUT);
			rs->err = 0;
		}
	}
out:
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

/* ------------------------------------------------------------------ data */

struct rs_iter {
	const struct iovec *iov;
	int cnt, i;
	size_t off, total;
};

/* Copy n octets between buf and the iovecs at the iterator: out = into the iovecs. */
static size_t
iter_copy(struct rs_iter *it, uint8_t *buf, size_t n, bool out)
{
	size_t done = 0, k;
	uint8_t *v;

	while (done < n && it->i < it->cnt) {
		k = it->iov[it->i].iov_len - it->off;
		if (k > n - done)
			k = n - done;
		v = (uint8_t *)it->iov[it->i].iov_base + it->off;
		memcpy(out ? v : buf + done, out ? buf + done : v, k);
		done += k;
		it->off += k;
		if (it->off == it->iov[it->i].iov_len) {
			it->i++;
			it->off = 0;
		}
	}
	it->total += done;
	return done;
}

static size_t
iov_len(const struct iovec *iov, int cnt)
{
	size_t n = 0;
	int i;

	for (i = 0; i < cnt; i++)
		n += iov[i].iov_len;
	return n;
}

/* Copy what has arrived into @p it; consumed slots go back to the receive queue. */
static void
rs_read_avail(struct rs *rs, struct rs_iter *it, bool peek)
{
	uint32_t h = rs->rx_head, c = rs->rx_cnt, off = rs->rx_off, slot, n;

	while (c > 0 && it->i < it->cnt) {
		slot = rs->rxq[h];
		n = (uint32_t)iter_copy(it, rs->rbuf + (size_t)slot * RS_SLOT +
						    sizeof(struct rs_wire_hdr) + off,
					rs->rxlen[h] - off, true);
		off += n;
		if (off < rs->rxlen[h])
			break;
		if (!peek)
			rs_consumed(rs, slot);
		h = (h + 1) % rs->nr;
		c--;
		off = 0;
	}
	if (!peek) {
		rs->rx_head = h;
		rs->rx_cnt = c;
		rs->rx_off = off;
	}
}

/* Lock a connected socket: 0, or -1 (unlocked, errno: why it is not connected). */
static int
rs_lock_connected(struct rs *rs)
{
	int err;

	pthread_mutex_lock(&rs->lock);
	if (rs->state == RS_CONNECTED)
		return 0;
	err = rs->state == RS_FAILED && rs->fatal ? rs->fatal : ENOTCONN;
	pthread_mutex_unlock(&rs->lock);
	return fail(err);
}

static ssize_t
rs_recv_iov(int s, const struct iovec *iov, int cnt, int flags)
{
	RS_GET(rs, s);
	struct rs_iter it = {.iov = iov, .cnt = cnt};
	size_t want = iov_len(iov, cnt);
	ssize_t ret;

	if (want == 0)
		return 0;
	if (rs_lock_connected(rs) != 0)
		return -1;
	for (;;) {
		rs_progress(rs);
		rs_read_avail(rs, &it, flags & MSG_PEEK);
		if (it.total > 0 && (!(flags & MSG_WAITALL) || it.total == want || rs->rx_fin ||
				     rs->disc || rs->fatal))
			break;
		if (rs->rx_cnt == 0 && (rs->rx_fin || rs->disc || rs->shut_rd))
			break; /* end of stream: what was read, or 0 */
		if (rs->fatal != 0 && rs->rx_cnt == 0) {
			if (it.total == 0) {
				ret = fail(rs->fatal);
				goto out;
			}
			break;
		}
		if (rs->nonblock || (flags & MSG_DONTWAIT)) {
			if (it.total == 0) {
				ret = again();
				goto out;
			}
			break;
		}
		rs_sleep(rs, -1);
	}
	rs_send_ctrl(rs);
	ret = (ssize_t)it.total;
out:
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

static ssize_t
rs_send_iov(int s, const struct iovec *iov, int cnt, int flags)
{
	RS_GET(rs, s);
	struct rs_iter it = {.iov = iov, .cnt = cnt};
	size_t want = iov_len(iov, cnt), max;
	struct ibv_send_wr wr;
	uint32_t slot, n;
	uint8_t *p;
	ssize_t ret;

	if (want == 0)
		return 0;
	if (rs_lock_connected(rs) != 0)
		return -1;
	max = (rs->peer_slot < RS_SLOT ? rs->peer_slot : RS_SLOT) - sizeof(struct rs_wire_hdr);
	while (it.total < want) {
		rs_progress(rs);
		if (rs->shut_wr || rs->disc || rs->fatal != 0) {
			if (it.total > 0)
				break;
			ret = fail(rs->shut_wr || rs->disc ? EPIPE : rs->fatal);
			goto out;
		}
		while (it.total < want && rs_can_send(rs, false)) {
			p = rs_slot_take(rs, &slot);
			n = (uint32_t)iter_copy(&it, p + sizeof(struct rs_wire_hdr), max, false);
			rs_wire_hdr_make(p, RS_OP_DATA, rs->rx_done);
			memset(&wr, 0, sizeof(wr));
			wr.opcode = IBV_WR_SEND;
			if (rs_post(rs, &wr, slot, (uint32_t)sizeof(struct rs_wire_hdr) + n) != 0) {
				it.total -= n;
				break;
			}
			rs->tx_sent++;
			rs->rx_told = rs->rx_done;
		}
		if (it.total == want)
			break;
		if (rs->nonblock || (flags & MSG_DONTWAIT)) {
			if (it.total > 0)
				break;
			ret = again();
			goto out;
		}
		if (!rs_can_send(rs, false))
			rs_sleep(rs, -1);
	}
	ret = (ssize_t)it.total;
out:
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

EXPORT ssize_t
rrecv(int s, void *buf, size_t len, int flags)
{
	struct iovec v = {.iov_base = buf, .iov_len = len};

	return rs_recv_iov(s, &v, 1, flags);
}

EXPORT ssize_t
rrecvfrom(int s, void *buf, size_t len, int flags, struct sockaddr *src, socklen_t *addrlen)
{
	ssize_t ret = rrecv(s, buf, len, flags);
	struct rs *rs;

	if (ret >= 0 && src != NULL && (rs = rs_get(s)) != NULL)
		copy_addr(src, addrlen, rdma_get_peer_addr(rs->id));
	return ret;
}

EXPORT ssize_t
rrecvmsg(int s, struct msghdr *msg, int flags)
{
	msg->msg_controllen = 0;
	msg->msg_flags = 0;
	return rs_recv_iov(s, msg->msg_iov, (int)msg->msg_iovlen, flags);
}

EXPORT ssize_t
rread(int s, void *buf, size_t count)
{
	return rrecv(s, buf, count, 0);
}

EXPORT ssize_t
rreadv(int s, const struct iovec *iov, int iovcnt)
{
	return rs_recv_iov(s, iov, iovcnt, 0);
}

EXPORT ssize_t
rsend(int s, const void *buf, size_t len, int flags)
{
	struct iovec v = {.iov_base = (void *)buf, .iov_len = len};

	return rs_send_iov(s, &v, 1, flags);
}

/* a connected stream socket: the destination is ignored, as TCP's sendto() does */
EXPORT ssize_t
rsendto(int s, const void *buf, size_t len, int flags, const struct sockaddr *dest,
	socklen_t addrlen)
{
	(void)dest;
	(void)addrlen;
	return rsend(s, buf, len, flags);
}

EXPORT ssize_t
rsendmsg(int s, const struct msghdr *msg, int flags)
{
	return rs_send_iov(s, msg->msg_iov, (int)msg->msg_iovlen, flags);
}

EXPORT ssize_t
rwrite(int s, const void *buf, size_t count)
{
	return rsend(s, buf, count, 0);
}

EXPORT ssize_t
rwritev(int s, const struct iovec *iov, int iovcnt)
{
	return rs_send_iov(s, iov, iovcnt, 0);
}

/* ------------------------------------------------------------------ poll, select */

static short
rs_revents(struct rs *rs, short events)
{
	short r = 0;

	switch (rs->state) {
	case RS_LISTENING:
		if (rs->reqs != NULL)
			r |= POLLIN;
		break;
	case RS_CONNECTED:
		if (rs->rx_cnt > 0 || rs->rx_fin || rs->disc || rs->shut_rd)
			r |= POLLIN;
		if (rs_can_send(rs, false) || rs->shut_wr)
			r |= POLLOUT;
		if (rs->disc && rs->rx_cnt == 0)
			r |= POLLHUP;
		if (rs->fatal != 0)
			r |= POLLERR;
		break;
	case RS_FAILED:
		r |= POLLOUT | POLLERR | POLLHUP;
		break;
	default:
		break;
	}
	return r & (events | POLLERR | POLLHUP | POLLNVAL);
}

/* One look at every fd, no sleeping; the number of fds with revents. */
static int
rs_poll_once(struct pollfd *fds, nfds_t nfds, struct pollfd *os, bool *any_os)
{
	struct timespec zero = {0, 0};
	struct rs *rs;
	nfds_t i;
	int n = 0;

	*any_os = false;
	for (i = 0; i < nfds; i++) {
		os[i] = (struct pollfd){.fd = -1};
		fds[i].revents = 0;
		rs = rs_get(fds[i].fd);
		if (rs == NULL) {
			if (fds[i].fd >= 0) {
				os[i] = fds[i];
				*any_os = true;
			}
			continue;
		}
		pthread_mutex_lock(&rs->lock);
		rs_progress(rs);
		fds[i].revents = rs_revents(rs, fds[i].events);
		pthread_mutex_unlock(&rs->lock);
	}
	if (*any_os && ppoll(os, nfds, &zero, NULL) > 0)
		for (i = 0; i < nfds; i++)
			if (os[i].fd >= 0)
				fds[i].revents = os[i].revents;
	for (i = 0; i < nfds; i++)
		n += fds[i].revents != 0;
	return n;
}

/* Arm every rsocket; false if one saw completions on the way (look again first). */
static bool
rs_poll_arm(struct pollfd *fds, nfds_t nfds, struct pollfd *w)
{
	bool ok = true;
	struct rs *rs;
	nfds_t i;

	for (i = 0; i < nfds; i++) {
		rs = rs_get(fds[i].fd);
		if (rs == NULL) {
			w[2 * i] = fds[i];
			w[2 * i + 1] = (struct pollfd){.fd = -1};
			continue;
		}
		pthread_mutex_lock(&rs->lock);
		if (!rs_arm(rs))
			ok = false;
		w[2 * i] = (struct pollfd){.fd = rs->ec->fd, .events = POLLIN};
		w[2 * i + 1] = (struct pollfd){.fd = rs->cc != NULL ? rs->cc->fd : -1,
					       .events = POLLIN};
		pthread_mutex_unlock(&rs->lock);
	}
	return ok;
}

EXPORT int
rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	int64_t deadline = timeout >= 0 ? now_ms() + timeout : -1;
	struct pollfd *os = calloc(nfds * 3 + 1, sizeof(*os)), *w = os + nfds;
	struct timespec t;
	struct rs *rs;
	bool any_os;
	nfds_t i;
	int n, ms;

	if (os == NULL)
		return fail(ENOMEM);
	for (;;) {
		n = rs_poll_once(fds, nfds, os, &any_os);
		if (n > 0 || (deadline >= 0 && now_ms() >= deadline)) {
			if (n == 0 && timeout == 0)
				sched_yield(); /* as again(): a program spinning on rpoll(0) */
			break;
		}
		if (!rs_poll_arm(fds, nfds, w))
			continue;
		ms = deadline < 0 ? RS_NAP_MS : (int)(deadline - now_ms());
		if (ms > RS_NAP_MS)
			ms = RS_NAP_MS;
		if (ms < 0)
			ms = 0;
		t.tv_sec = ms / 1000;
		t.tv_nsec = (long)(ms % 1000) * 1000000;
		if (ppoll(w, nfds * 2, &t, NULL) < 0 && errno == EINTR) {
			n = -1;
			break;
		}
		for (i = 0; i < nfds; i++) {
			rs = rs_get(fds[i].fd);
			if (rs != NULL && (w[2 * i + 1].revents & POLLIN)) {
				pthread_mutex_lock(&rs->lock);
				rs_cq_event(rs);
				pthread_mutex_unlock(&rs->lock);
			}
		}
	}
	free(os);
	return n;
}

EXPORT int
rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout)
{
	struct pollfd *fds = calloc((size_t)(nfds > 0 ? nfds : 1), sizeof(*fds));
	int fd, n = 0, i, ret, cnt = 0;
	short ev;

	if (fds == NULL)
		return fail(ENOMEM);
	for (fd = 0; fd < nfds; fd++) {
		ev = (readfds != NULL && FD_ISSET(fd, readfds)) ? POLLIN : 0;
		if (writefds != NULL && FD_ISSET(fd, writefds))
			ev |= POLLOUT;
		if (ev != 0 || (exceptfds != NULL && FD_ISSET(fd, exceptfds)))
			fds[n++] = (struct pollfd){.fd = fd, .events = ev};
	}
	ret = rpoll(fds, (nfds_t)n,
		    timeout == NULL ? -1
				    : (int)(timeout->tv_sec * 1000 + timeout->tv_usec / 1000));
	if (readfds != NULL)
		FD_ZERO(readfds);
	if (writefds != NULL)
		FD_ZERO(writefds);
	if (exceptfds != NULL)
		FD_ZERO(exceptfds);
	for (i = 0; ret > 0 && i < n; i++) {
		if (readfds != NULL && (fds[i].revents & (POLLIN | POLLHUP))) {
			FD_SET(fds[i].fd, readfds);
			cnt++;
		}
		if (writefds != NULL && (fds[i].revents & POLLOUT)) {
			FD_SET(fds[i].fd, writefds);
			cnt++;
		}
		if (exceptfds != NULL && (fds[i].revents & POLLERR)) {
			FD_SET(fds[i].fd, exceptfds);
			cnt++;
		}
	}
	free(fds);
	return ret < 0 ? ret : cnt;
}

/* ------------------------------------------------------------------ close */

static bool
rs_sends_done(const struct rs *rs)
{
	return rs->s_busy == 0 && (rs->fin_sent || !rs->fin_want || rs->disc || rs->fatal);
}

/* Changes whenever a Send completes, FIN goes or the peer acknowledges a message. */
static uint64_t
rs_send_progress(const struct rs *rs)
{
	return ((uint64_t)rs->tx_acked << 32) | ((uint64_t)rs->s_busy << 1) | rs->fin_sent;
}

static bool
rs_disconnected(const struct rs *rs)
{
	return rs->disc || rs->state != RS_CONNECTED;
}

EXPORT int
rshutdown(int s, int how)
{
	RS_GET(rs, s);

	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		return fail(EINVAL);
	pthread_mutex_lock(&rs->lock);
	if (rs->state != RS_CONNECTED) {
		pthread_mutex_unlock(&rs->lock);
		return fail(ENOTCONN);
	}
	if (how != SHUT_WR)
		rs->shut_rd = true;
	if (how != SHUT_RD) {
		rs->shut_wr = true;
		rs->fin_want = true;
	}
	rs_progress(rs);
	pthread_mutex_unlock(&rs->lock);
	return 0;
}

EXPORT int
rclose(int s)
{
	RS_GET(rs, s);

	pthread_mutex_lock(&rs->lock);
	if (rs->state == RS_CONNECTED) {
		/* What was written leaves first, then FIN, then the connection closes: a
		 * disconnect flushes every Send the QP has not started, data and FIN with it.
		 * Sends wait for the peer's credits and TCP's window (a slow reader, loss), so
		 * rclose() waits as long as they make progress, as rdma-core's rshutdown()
		 * waits for them; only a peer that takes nothing for RS_CLOSE_IDLE_MS is cut. */
		rs->fin_want = true;
		for (;;) {
			uint64_t before = rs_send_progress(rs);

			if (rs_wait_until(rs, rs_sends_done, now_ms() + RS_CLOSE_IDLE_MS) ||
			    rs_send_progress(rs) == before)
				break;
		}
		if (!rs->disc)
			rdma_disconnect(rs->id);
		rs_wait_until(rs, rs_disconnected, now_ms() + RS_CLOSE_WAIT_MS);
	}
	pthread_mutex_unlock(&rs->lock);
	rs_teardown(rs);
	return 0;
}

/* ------------------------------------------------------------------ options, names */

EXPORT int
rgetpeername(int s, struct sockaddr *addr, socklen_t *addrlen)
{
	RS_GET(rs, s);

	if (rs->state != RS_CONNECTED && rs->state != RS_FAILED)
		return fail(ENOTCONN);
	copy_addr(addr, addrlen, rdma_get_peer_addr(rs->id));
	return 0;
}

EXPORT int
rgetsockname(int s, struct sockaddr *addr, socklen_t *addrlen)
{
	RS_GET(rs, s);
	struct sockaddr_in any = {.sin_family = AF_INET};
	const struct sockaddr *sa = rdma_get_local_addr(rs->id);

	copy_addr(addr, addrlen, sa->sa_family != 0 ? sa : (const struct sockaddr *)&any);
	return 0;
}

/* The options kept as an int each (where in struct rs) */
static const struct {
	int level, name;
	size_t off;
} rs_opts[] = {
	{SOL_SOCKET, SO_SNDBUF, offsetof(struct rs, sndbuf)},
	{SOL_SOCKET, SO_RCVBUF, offsetof(struct rs, rcvbuf)},
	{SOL_SOCKET, SO_KEEPALIVE, offsetof(struct rs, keepalive)},
	{SOL_SOCKET, SO_REUSEADDR, offsetof(struct rs, reuseaddr)},
	{SOL_SOCKET, SO_REUSEPORT, offsetof(struct rs, reuseport)},
	{IPPROTO_TCP, TCP_NODELAY, offsetof(struct rs, nodelay)},
	{IPPROTO_TCP, TCP_KEEPIDLE, offsetof(struct rs, keepidle)},
	{SOL_RDMA, RDMA_SQSIZE, offsetof(struct rs, sqsize)},
	{SOL_RDMA, RDMA_RQSIZE, offsetof(struct rs, rqsize)},
	{SOL_RDMA, RDMA_INLINE, offsetof(struct rs, inline_size)},
	{SOL_RDMA, RDMA_IOMAPSIZE, offsetof(struct rs, iomapsize)},
};

static int *
rs_opt(struct rs *rs, int level, int optname)
{
	size_t i;

	for (i = 0; i < sizeof(rs_opts) / sizeof(rs_opts[0]); i++)
		if (rs_opts[i].level == level && rs_opts[i].name == optname)
			return (int *)((uint8_t *)rs + rs_opts[i].off);
	return NULL;
}

/*
 * Sizes (SO_SNDBUF, SO_RCVBUF, RDMA_SQSIZE, RDMA_RQSIZE) take effect at connect/accept.
 * SO_REUSEADDR, SO_REUSEPORT, keepalive, TCP_NODELAY, RDMA_INLINE and RDMA_IOMAPSIZE are
 * kept and reported and change nothing (every message is sent at once; regions have no
 * preset number); RDMA_ROUTE is accepted and not needed (warpnicd resolves the route).
 */
EXPORT int
rsetsockopt(int s, int level, int optname, const void *optval, socklen_t optlen)
{
	RS_GET(rs, s);
	int *p;

	if (level == SOL_RDMA && optname == RDMA_ROUTE)
		return 0;
	if (level == SOL_SOCKET && optname == SO_LINGER) {
		if (optval == NULL || optlen < sizeof(rs->linger))
			return fail(EINVAL);
		memcpy(&rs->linger, optval, sizeof(rs->linger));
		return 0;
	}
	p = rs_opt(rs, level, optname);
	if (p == NULL)
		return fail(ENOTSUP);
	if (optval == NULL || optlen < sizeof(int))
		return fail(EINVAL);
	memcpy(p, optval, sizeof(int));
	return 0;
}

/* TCP_INFO: the state and segment size; no retransmissions (warpnicd's TCP has them). */
static int
rs_tcp_info(struct rs *rs, void *optval, socklen_t *optlen)
{
	struct tcp_info ti;

	memset(&ti, 0, sizeof(ti));
	ti.tcpi_state = rs->state == RS_CONNECTED ? TCP_ESTABLISHED
			: rs->state == RS_LISTENING ? TCP_LISTEN
						    : TCP_CLOSE;
	ti.tcpi_snd_mss = RS_SLOT - sizeof(struct rs_wire_hdr);
	ti.tcpi_rcv_mss = ti.tcpi_snd_mss;
	if (*optlen > sizeof(ti))
		*optlen = sizeof(ti);
	memcpy(optval, &ti, *optlen);
	return 0;
}

EXPORT int
rgetsockopt(int s, int level, int optname, void *optval, socklen_t *optlen)
{
	RS_GET(rs, s);
	int v, *p;

	if (optval == NULL || optlen == NULL)
		return fail(EINVAL);
	if (level == SOL_SOCKET && optname == SO_LINGER) {
		if (*optlen < sizeof(rs->linger))
			return fail(EINVAL);
		memcpy(optval, &rs->linger, sizeof(rs->linger));
		*optlen = sizeof(rs->linger);
		return 0;
	}
	if (level == SOL_SOCKET && optname == SO_ERROR) {
		pthread_mutex_lock(&rs->lock);
		rs_progress(rs);
		v = rs->err;
		rs->err = 0;
		pthread_mutex_unlock(&rs->lock);
	} else if (level == SOL_SOCKET && optname == SO_TYPE) {
		v = SOCK_STREAM;
	} else if (level == IPPROTO_TCP && optname == TCP_MAXSEG) {
		v = (int)(RS_SLOT - sizeof(struct rs_wire_hdr)); /* the most one message carries */
	} else if (level == IPPROTO_TCP && optname == TCP_INFO) {
		return rs_tcp_info(rs, optval, optlen);
	} else {
		p = rs_opt(rs, level, optname);
		if (p == NULL)
			return fail(ENOTSUP);
		v = *p;
	}
	if (*optlen < sizeof(int))
		return fail(EINVAL);
	memcpy(optval, &v, sizeof(int));
	*optlen = sizeof(int);
	return 0;
}

EXPORT int
rfcntl(int s, int cmd, ...)
{
	RS_GET(rs, s);
	va_list ap;
	int arg;

	switch (cmd) {
	case F_GETFL:
		return O_RDWR | (rs->nonblock ? O_NONBLOCK : 0);
	case F_SETFL:
		va_start(ap, cmd);
		arg = va_arg(ap, int);
		va_end(ap);
		rs->nonblock = (arg & O_NONBLOCK) != 0;
		return 0;
	case F_GETFD:
	case F_SETFD:
		va_start(ap, cmd);
		arg = va_arg(ap, int);
		va_end(ap);
		return fcntl(rs->fd, cmd, arg);
	default:
		return fail(ENOTSUP);
	}
}

/* ------------------------------------------------------------------ iomap */

/*
 * riomap(): open [buf, buf + len) to the peer's riowrite() at @p offset (-1: the next free
 * one), told to the peer in an IOMAP message. Only PROT_WRITE regions exist (the peer
 * writes into ours), as in rdma-core.
 */
EXPORT off_t
riomap(int s, void *buf, size_t len, int prot, int flags, off_t offset)
{
	RS_GET(rs, s);
	struct rs_lmap *l;
	uint8_t m[sizeof(struct rs_wire_iomap)];
	off_t ret = -1;

	(void)flags;
	if (prot != PROT_WRITE || buf == NULL || len == 0)
		return fail(EINVAL);
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return fail(ENOMEM);
	pthread_mutex_lock(&rs->lock);
	if (rs->state != RS_CONNECTED) {
		errno = ENOTCONN;
		goto err;
	}
	l->mr = ibv_reg_mr(rs->pd, buf, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (l->mr == NULL)
		goto err;
	l->buf = buf;
	l->len = len;
	l->offset = offset == -1 ? rs->lmap_next : (uint64_t)offset;
	if (l->offset + len > rs->lmap_next)
		rs->lmap_next = l->offset + len;
	rs_wire_iomap_make(m, l->offset, (uintptr_t)buf, len, l->mr->rkey);
	while (!rs_can_send(rs, true)) {
		if (rs->disc || rs->fatal) {
			errno = rs->fatal ? rs->fatal : EPIPE;
			goto err_mr;
		}
		rs_sleep(rs, -1);
		rs_progress(rs);
	}
	if (rs_send_msg(rs, RS_OP_IOMAP, m, sizeof(m)) != 0)
		goto err_mr;
	l->next = rs->lmaps;
	rs->lmaps = l;
	ret = (off_t)l->offset;
	pthread_mutex_unlock(&rs->lock);
	return ret;
err_mr:
	ibv_dereg_mr(l->mr);
err:
	pthread_mutex_unlock(&rs->lock);
	free(l);
	return -1;
}

EXPORT int
riounmap(int s, void *buf, size_t len)
{
	RS_GET(rs, s);
	struct rs_lmap *l, **pp;
	int ret = fail(EINVAL);

	pthread_mutex_lock(&rs->lock);
	for (pp = &rs->lmaps; (l = *pp) != NULL; pp = &l->next)
		if (l->buf == buf && l->len == len) {
			*pp = l->next;
			ret = ibv_dereg_mr(l->mr) != 0 ? -1 : 0;
			free(l);
			break;
		}
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

static const struct rs_wire_iomap *
rs_rmap_find(const struct rs *rs, uint64_t offset, size_t count)
{
	const struct rs_rmap *r;

	for (r = rs->rmaps; r != NULL; r = r->next)
		if (offset >= r->m.offset && offset + count <= r->m.offset + r->m.len)
			return &r->m;
	return NULL;
}

/* riowrite(): RDMA Writes straight into the peer's region; no receive of the peer's used. */
EXPORT size_t
riowrite(int s, const void *buf, size_t count, off_t offset, int flags)
{
	struct rs *rs = rs_get(s);
	const struct rs_wire_iomap *m;
	struct ibv_send_wr wr;
	size_t done = 0, n;
	uint32_t slot;
	uint8_t *p;

	if (rs == NULL) {
		errno = EBADF;
		return (size_t)-1;
	}
	pthread_mutex_lock(&rs->lock);
	rs_progress(rs);
	m = rs_rmap_find(rs, (uint64_t)offset, count);
	if (rs->state != RS_CONNECTED || m == NULL) {
		errno = rs->state != RS_CONNECTED ? ENOTCONN : EINVAL;
		goto err;
	}
	while (done < count) {
		if (rs->disc || rs->fatal != 0) {
			if (done > 0)
				break;
			errno = rs->fatal ? rs->fatal : EPIPE;
			goto err;
		}
		while (done < count && rs->s_busy < rs->ns) {
			n = count - done < RS_SLOT ? count - done : RS_SLOT;
			p = rs_slot_take(rs, &slot);
			memcpy(p, (const uint8_t *)buf + done, n);
			memset(&wr, 0, sizeof(wr));
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.wr.rdma.remote_addr = m->addr + ((uint64_t)offset + done - m->offset);
			wr.wr.rdma.rkey = m->rkey;
			if (rs_post(rs, &wr, slot, (uint32_t)n) != 0)
				break;
			done += n;
		}
		if (done == count)
			break;
		if (rs->nonblock || (flags & MSG_DONTWAIT)) {
			if (done > 0)
				break;
			errno = EAGAIN;
			goto err;
		}
		rs_sleep(rs, -1);
		rs_progress(rs);
	}
	pthread_mutex_unlock(&rs->lock);
	return done;
err:
	pthread_mutex_unlock(&rs->lock);
	return (size_t)-1;
}
