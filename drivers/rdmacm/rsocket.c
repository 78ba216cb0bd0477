/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsockets (rdma/rsocket.h): stream sockets over an RC QP, built on this shim's own rdma_cm
 * and the verbs shim, speaking rdma-core librdmacm's rsockets protocol (rs_wire.h) the way
 * librdmacm speaks it on an iWARP device, so either end may be librdmacm's rsockets on
 * another RNIC (Linux siw, a hardware one) or this one. rstream, riostream and librspreload
 * call these.
 *
 * - Each side gives the peer half of its receive buffer in the private data and the other
 *   half at once; data goes by RDMA Write into the part granted, followed by a 4-octet Send
 *   (RS_OP_DATA with the length), so the reader finds it in order in its buffer. When the
 *   reader has read half a buffer it RDMA-writes a new grant (address, STag, length) into
 *   the writer's target SGL, followed by an RS_OP_SGL Send.
 * - Credits count data messages: the writer sends while its sequence number is short of the
 *   limit the reader last sent (RS_OP_SGL's argument: messages read plus its receive count),
 *   so every Send finds a receive (iWARP has no RNR retry). Control messages (grants,
 *   RS_OP_CTRL) are limited to RS_QP_CTRL_SIZE in flight; the reader keeps RS_RECV_SPARE
 *   receives beyond its credits for them.
 * - riomap() regions go by RDMA Write into the peer's iomap table (RS_OP_IOMAP_SGL names the
 *   entry); riowrite() is a plain RDMA Write into one, with no message.
 * - shutdown(SHUT_WR) sends RS_CTRL_SHUTDOWN, close RS_CTRL_DISCONNECT, each after the data.
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
#include <stdatomic.h>
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

/* librdmacm's defaults and limits, so both ends size things alike */
#define RS_DEF_BUF	(1u << 16) /* SO_SNDBUF / SO_RCVBUF before the program sets them (x2) */
#define RS_DEF_QSIZE	384	   /* RDMA_SQSIZE / RDMA_RQSIZE */
#define RS_DEF_INLINE	64	   /* RDMA_INLINE */
#define RS_QP_MIN_SIZE	16
#define RS_QP_MAX_SIZE	0xfffe
#define RS_QP_CTRL_SIZE 4     /* control WRs in flight at most */
#define RS_MAX_TRANSFER 65536 /* octets of one RDMA Write */
#define RS_SNDLOWAT	2048  /* send buffer room a transfer waits for */
#define RS_BUF_MIN	4096u
#define RS_BUF_MAX	(1u << 28)
#define RS_IOMAP_MAX	(0x7fu << 8) /* the largest iomap table the private data can name */
/* ours */
#define RS_RECV_SPARE	 8     /* receives beyond the credits: the peer's control messages */
#define RS_CTRL_INLINE	 32    /* the largest control payload, an iomap entry */
#define RS_CLOSE_WAIT_MS 2000  /* rclose(): longest wait for the disconnect */
#define RS_CLOSE_IDLE_MS 10000 /* rclose(): gives up on sends that made no progress so long */
#define RS_CONNECT_MS	 30000 /* longest wait for a connection's events */
#define RS_NAP_MS	 1000  /* longest sleep before looking again (a safety net) */
#define RS_NUDGE_MS	 200   /* keepalives to a peer not heard from yet: how often */
#define RS_NUDGES	 25    /* and how many */

/* What a send WR gives back when it completes (wr_id bits 63..32; 31..0: send buffer) */
enum rs_wr_kind {
	RS_WR_SQE = 1,	/* a data-side WR: one send queue entry, and its send buffer octets */
	RS_WR_CTRL = 2, /* a control WR: one of RS_QP_CTRL_SIZE */
};
#define RS_WR_RECV (1ull << 63) /* a receive; bits 31..0: its message slot */

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

struct rs_lmap { /* a riomap() region of ours */
	void *buf;
	size_t len;
	uint64_t offset;
	struct ibv_mr *mr;
	int index;    /* entry of the peer's iomap table, -1: local only (PROT_NONE) */
	bool pending; /* not written into the peer's table yet */
	struct rs_lmap *next;
};

struct rs_rmap { /* an entry of our iomap table as the peer wrote it: its region */
	uint64_t offset;
	struct rs_sge sge;
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
	/* connection resources, sized at connect/accept */
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	bool armed;
	uint32_t rbuf_size, sbuf_size, sq_size, rq_size, nrecv, iomap_size;
	uint8_t *rbuf; /* rbuf_size octets the peer writes data into, then nrecv message slots */
	uint8_t *tbuf; /* our target SGL (RS_SGL_SIZE grants), then our iomap table */
	uint8_t *sbuf; /* data on its way: a ring the completions free in order */
	struct ibv_mr *rmr, *tmr, *smr;
	/* the peer */
	bool peer_be;		    /* its byte order: messages, grants and iomap entries */
	struct rs_sge remote_sgl;   /* its target SGL (length: entries) */
	uint32_t remote_sge;	    /* the entry our next grant goes to */
	struct rs_sge remote_iomap; /* its iomap table (length: entries) */
	/* sending */
	uint16_t sseq_no, sseq_comp;	 /* data messages sent; the limit the peer allows */
	uint32_t sqe_avail;		 /* send WRs data may take (control keeps its own) */
	uint32_t ctrl_busy;		 /* control WRs in flight */
	uint32_t s_head, s_used;	 /* send buffer: next free octet, octets in flight */
	struct rs_sge tsgl[RS_SGL_SIZE]; /* grants of the peer's buffer: where data may go */
	uint32_t target_sge;		 /* the grant being filled */
	int ctrl_want;			 /* RS_CTRL_SHUTDOWN / RS_CTRL_DISCONNECT to send, or -1 */
	/* receiving */
	uint16_t rseq_no, rseq_comp; /* data messages read; when to send credits again */
	uint32_t rbuf_offset;	     /* next octet to read */
	uint32_t rbuf_queued;	     /* octets arrived and not read */
	uint32_t rbuf_bytes_avail;   /* octets read and not granted again */
	uint32_t rbuf_free_offset;   /* where the next grant starts */
	uint32_t *rmsg;		     /* DATA messages not read up: octets left in each */
	uint32_t rmsg_head, rmsg_cnt;
	struct rs_rmap *rmaps; /* iomap_size entries (length 0: none) */
	/* the end of the stream */
	bool rx_fin;	/* the peer sends no more data (SHUTDOWN or DISCONNECT) */
	bool peer_disc; /* the peer sent DISCONNECT: it reads no more either */
	bool disc;	/* the connection is gone (CM event) */
	bool disc_sent, shut_sent, shut_rd, shut_wr;
	bool heard;	  /* a message of the peer's has arrived */
	int nudges;	  /* keepalives sent while not */
	int64_t nudge_at; /* when the next one goes */
	struct rs_lmap *lmaps;
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

static uint32_t
clamp_u32(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
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
	rs->sndbuf = RS_DEF_BUF;
	rs->rcvbuf = RS_DEF_BUF;
	rs->sqsize = RS_DEF_QSIZE;
	rs->rqsize = RS_DEF_QSIZE;
	rs->inline_size = RS_DEF_INLINE;
	rs->ctrl_want = -1;
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
	if (rs->id != NULL && rs->id->qp != NULL)
		rdma_destroy_qp(rs->id);
	if (rs->rmr != NULL)
		ibv_dereg_mr(rs->rmr);
	if (rs->tmr != NULL)
		ibv_dereg_mr(rs->tmr);
	if (rs->smr != NULL)
		ibv_dereg_mr(rs->smr);
	if (rs->cq != NULL)
		ibv_destroy_cq(rs->cq);
	if (rs->cc != NULL)
		ibv_destroy_comp_channel(rs->cc);
	if (rs->pd != NULL)
		ibv_dealloc_pd(rs->pd);
	free(rs->rbuf);
	free(rs->tbuf);
	free(rs->sbuf);
	free(rs->rmsg);
	free(rs->rmaps);
	if (rs->id != NULL)
		rdma_destroy_id(rs->id);
	rs_tab_set(rs->fd, NULL);
	rdma_destroy_event_channel(rs->ec);
	pthread_mutex_destroy(&rs->lock);
	free(rs);
}

/* ------------------------------------------------------------------ resources */

static void *
page_alloc(size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *p;

	len = (len + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	if (posix_memalign(&p, (size_t)pg, len) != 0)
		return NULL;
	memset(p, 0, len);
	return p;
}

static int
rs_post_recv(struct rs *rs, uint32_t slot)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(rs->rbuf + rs->rbuf_size + slot * RS_MSG_SIZE),
			      .length = RS_MSG_SIZE,
			      .lkey = rs->rmr->lkey};
	struct ibv_recv_wr wr = {.wr_id = RS_WR_RECV | slot, .sg_list = &sge, .num_sge = 1}, *bad;

	return ibv_post_recv(rs->id->qp, &wr, &bad);
}

/* An option's value, or @p def when it was never set or makes no sense. */
static uint32_t
opt_u32(int v, uint32_t def)
{
	return v > 0 ? (uint32_t)v : def;
}

/* The sizes the options ask for, within what librdmacm and the device allow. */
static void
rs_sizes(struct rs *rs)
{
	struct ibv_device_attr da;
	uint32_t qmax = RS_QP_MAX_SIZE;

	if (ibv_query_device(rs->id->verbs, &da) == 0 && da.max_qp_wr > 0 &&
	    (uint32_t)da.max_qp_wr < qmax + RS_RECV_SPARE)
		qmax = (uint32_t)da.max_qp_wr - RS_RECV_SPARE;
	rs->sq_size = clamp_u32(opt_u32(rs->sqsize, RS_DEF_QSIZE), RS_QP_MIN_SIZE, qmax);
	rs->rq_size = clamp_u32(opt_u32(rs->rqsize, RS_DEF_QSIZE), RS_QP_MIN_SIZE, qmax);
	rs->nrecv = rs->rq_size + RS_RECV_SPARE;
	/* SO_RCVBUF and SO_SNDBUF are doubled, as Linux's (and librdmacm's) are */
	rs->rbuf_size = clamp_u32(opt_u32(rs->rcvbuf, RS_DEF_BUF), RS_BUF_MIN / 2, RS_BUF_MAX / 2);
	rs->rbuf_size = (rs->rbuf_size * 2u) & ~7u; /* two halves of whole words */
	rs->sbuf_size = clamp_u32(opt_u32(rs->sndbuf, RS_DEF_BUF), RS_SNDLOWAT, RS_BUF_MAX / 2);
	rs->sbuf_size *= 2u;
	rs->iomap_size = rs_wire_iomap_size(clamp_u32(opt_u32(rs->iomapsize, 0), 0, RS_IOMAP_MAX));
}

/*
 * PD, CQ on a completion channel, the QP, the buffers registered (the peer writes into the
 * receive buffer and the target table), every receive posted.
 */
static int
rs_setup(struct rs *rs)
{
	struct ibv_context *ctx = rs->id->verbs;
	int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	struct ibv_qp_init_attr a;
	size_t tlen;
	uint32_t i;

	rs_sizes(rs);
	tlen = RS_SGL_SIZE * sizeof(struct rs_wire_sge) +
	       (size_t)rs->iomap_size * sizeof(struct rs_wire_iomap);
	rs->pd = ibv_alloc_pd(ctx);
	rs->cc = rs->pd != NULL ? ibv_create_comp_channel(ctx) : NULL;
	rs->cq = rs->cc != NULL ? ibv_create_cq(ctx, (int)(rs->sq_size + rs->nrecv), rs, rs->cc, 0)
				: NULL;
	if (rs->cq == NULL)
		return -1;
	rs->rbuf = page_alloc(rs->rbuf_size + (size_t)rs->nrecv * RS_MSG_SIZE);
	rs->tbuf = page_alloc(tlen);
	rs->sbuf = page_alloc(rs->sbuf_size);
	rs->rmsg = calloc(rs->nrecv + 1, sizeof(*rs->rmsg));
	rs->rmaps = calloc(rs->iomap_size + 1, sizeof(*rs->rmaps));
	if (rs->rbuf == NULL || rs->tbuf == NULL || rs->sbuf == NULL || rs->rmsg == NULL ||
	    rs->rmaps == NULL)
		return fail(ENOMEM);
	rs->rmr = ibv_reg_mr(rs->pd, rs->rbuf, rs->rbuf_size + (size_t)rs->nrecv * RS_MSG_SIZE, rw);
	rs->tmr = ibv_reg_mr(rs->pd, rs->tbuf, tlen, rw);
	rs->smr = ibv_reg_mr(rs->pd, rs->sbuf, rs->sbuf_size, 0);
	if (rs->rmr == NULL || rs->tmr == NULL || rs->smr == NULL)
		return -1;
	memset(&a, 0, sizeof(a));
	a.send_cq = rs->cq;
	a.recv_cq = rs->cq;
	a.qp_type = IBV_QPT_RC;
	a.sq_sig_all = 1;
	a.cap.max_send_wr = rs->sq_size;
	a.cap.max_recv_wr = rs->nrecv;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = RS_CTRL_INLINE;
	if (rdma_create_qp(rs->id, rs->pd, &a) != 0)
		return -1;
	/* messages, grants and iomap entries go inline, as librdmacm sends them */
	if (a.cap.max_inline_data < RS_CTRL_INLINE)
		return fail(ENOTSUP);
	for (i = 0; i < rs->nrecv; i++)
		if (rs_post_recv(rs, i) != 0)
			return fail(ENOMEM);
	rs->sqe_avail = rs->sq_size - RS_QP_CTRL_SIZE;
	rs->rbuf_free_offset = rs->rbuf_size / 2;
	rs->rbuf_bytes_avail = rs->rbuf_size / 2;
	rs->rseq_comp = (uint16_t)(rs->rq_size / 2);
	return 0;
}

/* Our private data: credits, the target table, the first half of the receive buffer. */
static void
rs_conn_param(struct rs *rs, struct rdma_conn_param *p, struct rs_wire_conn *pd)
{
	struct rs_sge sgl = {
		.addr = (uintptr_t)rs->tbuf, .key = rs->tmr->rkey, .length = RS_SGL_SIZE};
	struct rs_sge data = {
		.addr = (uintptr_t)rs->rbuf, .key = rs->rmr->rkey, .length = rs->rbuf_size / 2};

	rs_wire_conn_make(pd, (uint16_t)rs->rq_size, rs->iomap_size, &sgl, &data);
	memset(p, 0, sizeof(*p));
	p->private_data = pd;
	p->private_data_len = sizeof(*pd);
	p->responder_resources = 1;
	p->initiator_depth = 1;
}

/* What the peer's private data says: where our grants, iomap entries and data go. */
static void
rs_conn_save(struct rs *rs, const struct rs_conn *c)
{
	rs->peer_be = c->big_endian;
	rs->remote_sgl = c->target_sgl;
	rs->remote_sge = 1; /* entry 0 holds the grant of the private data */
	rs->remote_iomap.addr =
		c->target_sgl.addr + (uint64_t)c->target_sgl.length * sizeof(struct rs_wire_sge);
	rs->remote_iomap.key = c->target_sgl.key;
	rs->remote_iomap.length = c->iomap_size;
	rs->tsgl[0] = c->data_buf;
	rs->sseq_comp = c->credits;
}

/* ------------------------------------------------------------------ sending */

static bool
rs_writable(const struct rs *rs)
{
	return rs->state == RS_CONNECTED && !rs->shut_wr && !rs->peer_disc && !rs->disc &&
	       !rs->disc_sent && rs->fatal == 0;
}

/* The connection can still carry control messages (credits, iomap entries, SHUTDOWN). */
static bool
rs_live(const struct rs *rs)
{
	return rs->state == RS_CONNECTED && !rs->peer_disc && !rs->disc && !rs->disc_sent &&
	       rs->fatal == 0;
}

static uint32_t
rs_sbuf_free(const struct rs *rs)
{
	return rs->sbuf_size - rs->s_used;
}

/* Room for one data transfer: two send WRs, buffer, a credit, a grant with room left. */
static bool
rs_can_send(const struct rs *rs)
{
	return rs_writable(rs) && rs->sqe_avail >= 2 && rs_sbuf_free(rs) >= RS_SNDLOWAT &&
	       rs->sseq_no != rs->sseq_comp && rs->tsgl[rs->target_sge].length != 0;
}

/*
 * Up to *n contiguous octets of the send buffer (fewer when the free space is split by the
 * end of the ring); *release: what its completion frees (a skipped tail included).
 */
static uint8_t *
rs_sbuf_take(struct rs *rs, uint32_t *n, uint32_t *release)
{
	uint32_t free = rs_sbuf_free(rs), tail, gap = 0, room = free;
	uint8_t *p;

	if (rs->s_used == 0)
		rs->s_head = 0;
	tail = rs->sbuf_size - rs->s_head;
	if (tail < free) { /* the free space wraps: take the larger piece */
		room = tail;
		if (tail < *n && free - tail > tail) {
			gap = tail;
			rs->s_head = 0;
			room = free - tail;
		}
	}
	if (*n > room)
		*n = room;
	p = rs->sbuf + rs->s_head;
	rs->s_head += *n;
	if (rs->s_head == rs->sbuf_size)
		rs->s_head = 0;
	rs->s_used += gap + *n;
	*release = gap + *n;
	return p;
}

static uint64_t
rs_wr_id(enum rs_wr_kind kind, uint32_t release)
{
	return ((uint64_t)kind << 32) | release;
}

static int
rs_post(struct rs *rs, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	if (ibv_post_send(rs->id->qp, wr, &bad) != 0) {
		rs->fatal = rs->fatal ? rs->fatal : ECONNRESET;
		return -1;
	}
	return 0;
}

/* A message Send (4 octets, inline, in the peer's byte order) to go behind @p first. */
static void
rs_msg_wr(struct rs *rs, struct ibv_send_wr *wr, struct ibv_sge *sge, uint8_t *word_buf,
	  uint32_t word, enum rs_wr_kind kind)
{
	rs_wire_word_put(word_buf, word, rs->peer_be);
	*sge = (struct ibv_sge){.addr = (uintptr_t)word_buf, .length = RS_MSG_SIZE};
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = rs_wr_id(kind, 0);
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = IBV_WR_SEND;
	wr->send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
}

/* An inline RDMA Write of @p len octets (a grant or an iomap entry), then its message. */
static int
rs_post_write_msg(struct rs *rs, const void *data, uint32_t len, uint64_t addr, uint32_t key,
		  uint32_t word, enum rs_wr_kind kind)
{
	struct ibv_sge sge[2] = {{.addr = (uintptr_t)data, .length = len}};
	struct ibv_send_wr wr[2];
	uint8_t w[RS_MSG_SIZE];

	memset(&wr[0], 0, sizeof(wr[0]));
	wr[0].wr_id = rs_wr_id(kind, 0);
	wr[0].sg_list = &sge[0];
	wr[0].num_sge = 1;
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	wr[0].send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	wr[0].wr.rdma.remote_addr = addr;
	wr[0].wr.rdma.rkey = key;
	rs_msg_wr(rs, &wr[1], &sge[1], w, word, kind);
	wr[0].next = &wr[1];
	return rs_post(rs, &wr[0]);
}

/* A control message alone (RS_OP_SGL without a grant, RS_OP_CTRL). */
static int
rs_post_ctrl(struct rs *rs, uint32_t word)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	uint8_t w[RS_MSG_SIZE];

	rs_msg_wr(rs, &wr, &sge, w, word, RS_WR_CTRL);
	if (rs_post(rs, &wr) != 0)
		return -1;
	rs->ctrl_busy++;
	return 0;
}

/*
 * Data: @p n octets at @p p of the send buffer into the grant being filled, by RDMA Write,
 * then RS_OP_DATA. The grant moves on first, so a grant written into the same entry later
 * is never mistaken for this one.
 */
static int
rs_post_data(struct rs *rs, const uint8_t *p, uint32_t n, uint32_t release)
{
	struct rs_sge *g = &rs->tsgl[rs->target_sge];
	struct ibv_sge sge[2] = {{.addr = (uintptr_t)p, .length = n, .lkey = rs->smr->lkey}};
	struct ibv_send_wr wr[2];
	uint8_t w[RS_MSG_SIZE];

	memset(&wr[0], 0, sizeof(wr[0]));
	wr[0].wr_id = rs_wr_id(RS_WR_SQE, release);
	wr[0].sg_list = &sge[0];
	wr[0].num_sge = 1;
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].wr.rdma.remote_addr = g->addr;
	wr[0].wr.rdma.rkey = g->key;
	rs_msg_wr(rs, &wr[1], &sge[1], w, rs_wire_msg(RS_OP_DATA, n), RS_WR_SQE);
	wr[0].next = &wr[1];
	g->addr += n;
	g->length -= n;
	if (g->length == 0)
		rs->target_sge = (rs->target_sge + 1) % RS_SGL_SIZE;
	rs->sseq_no++;
	rs->sqe_avail -= 2;
	return rs_post(rs, &wr[0]);
}

/*
 * Credits when the reader has read half of its receive messages since it last sent them,
 * or has half a buffer free to grant: a grant of that half (RDMA Write into the peer's
 * target SGL) and RS_OP_SGL with the new limit, or RS_OP_SGL alone. Two control WRs must
 * be free either way, as librdmacm asks on iWARP.
 */
static void
rs_update_credits(struct rs *rs)
{
	uint32_t half = rs->rbuf_size / 2, word;
	struct rs_sge g;
	uint8_t e[sizeof(struct rs_wire_sge)];

	if (!rs_live(rs) || RS_QP_CTRL_SIZE - rs->ctrl_busy < 2 ||
	    (rs->rbuf_bytes_avail < half && (int16_t)(rs->rseq_no - rs->rseq_comp) < 0))
		return;
	word = rs_wire_msg(RS_OP_SGL, (uint16_t)(rs->rseq_no + rs->rq_size));
	rs->rseq_comp = (uint16_t)(rs->rseq_no + rs->rq_size / 2);
	if (rs->rbuf_bytes_avail < half) {
		rs_post_ctrl(rs, word);
		return;
	}
	g = (struct rs_sge){.addr = (uintptr_t)(rs->rbuf + rs->rbuf_free_offset),
			    .key = rs->rmr->rkey,
			    .length = half};
	rs_wire_sge_put(e, &g, rs->peer_be);
	if (rs_post_write_msg(rs, e, sizeof(e),
			      rs->remote_sgl.addr + rs->remote_sge * sizeof(struct rs_wire_sge),
			      rs->remote_sgl.key, word, RS_WR_CTRL) != 0)
		return;
	rs->ctrl_busy += 2;
	rs->rbuf_bytes_avail -= half;
	rs->rbuf_free_offset += half;
	if (rs->rbuf_free_offset >= rs->rbuf_size)
		rs->rbuf_free_offset = 0;
	rs->remote_sge = (rs->remote_sge + 1) % rs->remote_sgl.length;
}

/* SHUTDOWN or DISCONNECT, once a control WR is free; nothing follows a DISCONNECT. */
static void
rs_send_ctrl(struct rs *rs)
{
	int c = rs->ctrl_want;

	if (c < 0 || !rs_live(rs) || rs->ctrl_busy >= RS_QP_CTRL_SIZE)
		return;
	if (rs_post_ctrl(rs, rs_wire_msg(RS_OP_CTRL, (uint32_t)c)) != 0)
		return;
	rs->ctrl_want = -1;
	if (c == RS_CTRL_DISCONNECT)
		rs->disc_sent = true;
	else
		rs->shut_sent = true;
}

/*
 * riomap() regions not told yet: each an iomap entry (RDMA Write into the peer's table)
 * and RS_OP_IOMAP_SGL naming it. Each takes a data credit, as in librdmacm.
 */
static void
rs_send_iomaps(struct rs *rs)
{
	uint8_t e[sizeof(struct rs_wire_iomap)];
	struct rs_lmap *l;
	struct rs_sge s;

	for (l = rs->lmaps; l != NULL; l = l->next) {
		if (!l->pending)
			continue;
		if (!rs_writable(rs) || rs->sqe_avail < 2 || rs->sseq_no == rs->sseq_comp)
			return;
		s = (struct rs_sge){
			.addr = (uintptr_t)l->buf, .key = l->mr->rkey, .length = (uint32_t)l->len};
		rs_wire_iomap_put(e, l->offset, &s, rs->peer_be);
		if (rs_post_write_msg(rs, e, sizeof(e),
				      rs->remote_iomap.addr +
					      (uint64_t)l->index * sizeof(struct rs_wire_iomap),
				      rs->remote_iomap.key,
				      rs_wire_msg(RS_OP_IOMAP_SGL, (uint32_t)l->index),
				      RS_WR_SQE) != 0)
			return;
		rs->sseq_no++;
		rs->sqe_avail -= 2;
		l->pending = false;
	}
}

static bool
rs_nudging(const struct rs *rs)
{
	return !rs->heard && rs->nudges < RS_NUDGES && rs_live(rs);
}

/*
 * Linux siw (6.1) can leave FPDUs unprocessed that arrive right behind its MPA Reply, or
 * while it installs its wait for the RDMA-mode RTR (its socket callback ignores them),
 * until more data comes; a peer that waits for our first messages then waits for ever
 * (siw's guest kernel was seen to hit a BUG() in iw_cm seconds after such an RTR). So,
 * until the peer's first message arrives, a socket sends librdmacm's keepalive every
 * RS_NUDGE_MS: on iWARP an RDMA Write of no octets, which uses no receive and completes
 * nothing at the peer.
 */
static void
rs_nudge(struct rs *rs)
{
	struct ibv_send_wr wr;
	int64_t now;

	if (!rs_nudging(rs) || rs->ctrl_busy >= RS_QP_CTRL_SIZE || (now = now_ms()) < rs->nudge_at)
		return;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = rs_wr_id(RS_WR_CTRL, 0);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (rs_post(rs, &wr) != 0)
		return;
	rs->ctrl_busy++;
	rs->nudges++;
	rs->nudge_at = now + RS_NUDGE_MS;
}

/* ------------------------------------------------------------------ progress */

/*
 * Grants the peer wrote into our target SGL, into the entries we have filled. The peer
 * writes each grant, then sends RS_OP_SGL: when that message is seen, the write has been
 * placed. An entry is cleared once taken; the peer writes it again only after we filled it
 * (it grants a half only when the data we wrote into it has been read). A grant whose
 * RS_OP_SGL is still on its way may be half written when an earlier RS_OP_SGL is handled:
 * one without an address or a length is left for the next.
 */
static void
rs_take_grants(struct rs *rs)
{
	struct rs_sge g;
	uint8_t *e;
	int i;

	atomic_thread_fence(memory_order_acquire);
	for (i = 0; i < RS_SGL_SIZE; i++) {
		e = rs->tbuf + (size_t)i * sizeof(struct rs_wire_sge);
		if (rs->tsgl[i].length != 0)
			continue;
		rs_wire_sge_get(e, &g, rs_wire_host_be());
		if (g.length == 0 || g.addr == 0)
			continue;
		rs->tsgl[i] = g;
		memset(e, 0, sizeof(struct rs_wire_sge));
	}
}

static void
rs_protocol_error(struct rs *rs)
{
	rs->fatal = rs->fatal ? rs->fatal : EPROTO;
}

/* One message of the peer's. */
static void
rs_recv_msg(struct rs *rs, uint32_t word)
{
	struct rs_msg m;

	if (rs_wire_msg_parse(word, &m) != 0) {
		rs_protocol_error(rs);
		return;
	}
	switch (m.op) {
	case RS_OP_DATA:
		/* it must fit what we granted: never more than the buffer holds unread */
		if (m.arg > rs->rbuf_size - rs->rbuf_queued || rs->rmsg_cnt > rs->nrecv) {
			rs_protocol_error(rs);
			return;
		}
		rs->rmsg[(rs->rmsg_head + rs->rmsg_cnt) % (rs->nrecv + 1)] = m.arg;
		rs->rmsg_cnt++;
		rs->rbuf_queued += m.arg;
		break;
	case RS_OP_SGL:
		rs->sseq_comp = (uint16_t)m.arg;
		rs_take_grants(rs);
		break;
	case RS_OP_IOMAP_SGL:
		if (m.arg >= rs->iomap_size) {
			rs_protocol_error(rs);
			return;
		}
		atomic_thread_fence(memory_order_acquire);
		rs_wire_iomap_get(rs->tbuf + RS_SGL_SIZE * sizeof(struct rs_wire_sge) +
					  m.arg * sizeof(struct rs_wire_iomap),
				  &rs->rmaps[m.arg].offset, &rs->rmaps[m.arg].sge,
				  rs_wire_host_be());
		/* the entry took one of our credits: give it back with the next ones */
		rs->rseq_no++;
		break;
	case RS_OP_CTRL:
		if (m.arg == RS_CTRL_DISCONNECT)
			rs->rx_fin = rs->peer_disc = true;
		else if (m.arg == RS_CTRL_SHUTDOWN)
			rs->rx_fin = true;
		break;
	default:
		break;
	}
}

static void
rs_recv_done(struct rs *rs, const struct ibv_wc *wc)
{
	uint32_t slot = (uint32_t)wc->wr_id, word;

	if (slot >= rs->nrecv) {
		rs_protocol_error(rs);
		return;
	}
	if (wc->wc_flags & IBV_WC_WITH_IMM) {
		word = be32toh(wc->imm_data); /* RDMA Write with Immediate Data */
	} else if (wc->byte_len == RS_MSG_SIZE) {
		word = rs_wire_word_get(rs->rbuf + rs->rbuf_size + slot * RS_MSG_SIZE, rs->peer_be);
	} else {
		rs_protocol_error(rs);
		return;
	}
	if (rs_post_recv(rs, slot) != 0)
		rs->fatal = rs->fatal ? rs->fatal : ECONNRESET;
	rs->heard = true;
	rs_recv_msg(rs, word);
}

static void
rs_send_done(struct rs *rs, const struct ibv_wc *wc)
{
	if ((wc->wr_id >> 32) == RS_WR_CTRL) {
		rs->ctrl_busy--;
	} else {
		rs->sqe_avail++;
		rs->s_used -= (uint32_t)wc->wr_id;
	}
}

static void
rs_poll_cq(struct rs *rs)
{
	struct ibv_wc wc[16];
	bool recv;
	int i, n;

	if (rs->cq == NULL)
		return;
	do {
		n = ibv_poll_cq(rs->cq, 16, wc);
		for (i = 0; i < n; i++) {
			recv = (wc[i].wr_id & RS_WR_RECV) != 0;
			if (!recv)
				rs_send_done(rs, &wc[i]);
			if (wc[i].status != IBV_WC_SUCCESS) {
				/* Flushed by a disconnect: the data before it was delivered. The
				 * flush may be seen before the DISCONNECTED event (another
				 * channel); after the peer's SHUTDOWN or DISCONNECT nothing of
				 * its was lost. */
				if (!rs->disc && !rs->rx_fin && rs->fatal == 0)
					rs->fatal = ECONNRESET;
				continue;
			}
			if (recv)
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
	struct rs_conn c;

	if (rs->remote_sgl.length == 0) { /* the active side: the peer's private data is here */
		if (rs_wire_conn_parse(ev->param.conn.private_data, ev->param.conn.private_data_len,
				       &c) != 0) {
			rs_fail_conn(rs, EPROTO);
			rdma_disconnect(rs->id);
			return;
		}
		rs_conn_save(rs, &c);
	}
	rs->state = RS_CONNECTED;
	rs->nudge_at = now_ms() + RS_NUDGE_MS;
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

/* Everything that arrived: CM events, completions; then the messages that are due. */
static void
rs_progress(struct rs *rs)
{
	struct rdma_cm_event *ev;

	while (fd_readable(rs->ec->fd) && rdma_get_cm_event(rs->ec, &ev) == 0) {
		rs_cm_event(rs, ev);
		rdma_ack_cm_event(ev);
	}
	rs_poll_cq(rs);
	if (rs->state == RS_CONNECTED) {
		rs_send_ctrl(rs);
		rs_update_credits(rs);
		rs_send_iomaps(rs);
		if (!rs->heard)
			rs_nudge(rs);
	}
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
	if (rs_nudging(rs) && ms > RS_NUDGE_MS)
		ms = RS_NUDGE_MS;
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

#define RS_GET(var, s)                                                                             \
	struct rs *var = rs_get(s);                                                                \
	if (var == NULL)                                                                           \
	return fail(EBADF)

EXPORT int
rbind(int s, const struct sockaddr *addr, socklen_t len)
{
	RS_GET(rs, s);
	int ret;

	if (addr == NULL || len < sizeof(struct sockaddr_in))
		return fail(EINVAL);
	pthread_mutex_lock(&rs->lock);
	ret = rs->state == RS_INIT ? rdma_bind_addr(rs->id, (struct sockaddr *)addr) : fail(EINVAL);
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
	struct rs_conn c;
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
	rs->iomapsize = lrs->iomapsize;
	rs->nodelay = lrs->nodelay;
	rs->keepalive = lrs->keepalive;
	rs->keepidle = lrs->keepidle;
	rs->inline_size = lrs->inline_size;
	pthread_mutex_lock(&rs->lock);
	if (rs_wire_conn_parse(q->pd, q->pd_len, &c) != 0) {
		rdma_reject(rs->id, NULL, 0);
		errno = ECONNABORTED;
		goto err;
	}
	if (rs_setup(rs) != 0)
		goto err_reject;
	rs_conn_save(rs, &c);
	rs_conn_param(rs, &p, &pd);
	if (rdma_accept(rs->id, &p) != 0)
		goto err;
	rs->state = RS_CONNECTING;
	if (!rs_wait_until(rs, rs_settled, now_ms() + RS_CONNECT_MS) || rs->state != RS_CONNECTED) {
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

/*
 * Copy what has arrived into @p it: data lies in the receive buffer in the order its
 * messages came, from rbuf_offset on, around the end of the buffer. Unless peeking, the
 * octets read count towards the next grant and each message read up towards the credits.
 */
static void
rs_read_avail(struct rs *rs, struct rs_iter *it, bool peek)
{
	uint32_t h = rs->rmsg_head, c = rs->rmsg_cnt, off = rs->rbuf_offset, left, k, n;

	left = c > 0 ? rs->rmsg[h] : 0;
	while (c > 0 && it->i < it->cnt) {
		k = rs->rbuf_size - off < left ? rs->rbuf_size - off : left;
		n = (uint32_t)iter_copy(it, rs->rbuf + off, k, true);
		off = (off + n) % rs->rbuf_size;
		left -= n;
		if (!peek) {
			rs->rbuf_queued -= n;
			rs->rbuf_bytes_avail += n;
		}
		if (n < k)
			break; /* the iovecs are full */
		if (left > 0)
			continue; /* the rest of this message, from the start of the buffer */
		if (!peek)
			rs->rseq_no++;
		h = (h + 1) % (rs->nrecv + 1);
		c--;
		left = c > 0 ? rs->rmsg[h] : 0;
	}
	if (!peek) {
		rs->rmsg_head = h;
		rs->rmsg_cnt = c;
		if (c > 0)
			rs->rmsg[h] = left;
		rs->rbuf_offset = off;
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
		if (rs->rmsg_cnt == 0 && (rs->rx_fin || rs->disc || rs->shut_rd))
			break; /* end of stream: what was read, or 0 */
		if (rs->fatal != 0 && rs->rmsg_cnt == 0) {
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
	rs_update_credits(rs);
	ret = (ssize_t)it.total;
out:
	pthread_mutex_unlock(&rs->lock);
	return ret;
}

/* Why a socket cannot send: our shutdown or close, the peer's, or the connection's end. */
static int
rs_send_err(const struct rs *rs)
{
	return rs->fatal != 0 && !rs->shut_wr && !rs->disc_sent ? rs->fatal : EPIPE;
}

static ssize_t
rs_send_iov(int s, const struct iovec *iov, int cnt, int flags)
{
	RS_GET(rs, s);
	struct rs_iter it = {.iov = iov, .cnt = cnt};
	size_t want = iov_len(iov, cnt);
	uint32_t n, release;
	uint8_t *p;
	ssize_t ret;

	if (want == 0)
		return 0;
	if (rs_lock_connected(rs) != 0)
		return -1;
	while (it.total < want) {
		rs_progress(rs);
		if (!rs_writable(rs)) {
			if (it.total > 0)
				break;
			ret = fail(rs_send_err(rs));
			goto out;
		}
		while (it.total < want && rs_can_send(rs)) {
			n = want - it.total < RS_MAX_TRANSFER ? (uint32_t)(want - it.total)
							      : RS_MAX_TRANSFER;
			if (n > rs->tsgl[rs->target_sge].length)
				n = rs->tsgl[rs->target_sge].length;
			p = rs_sbuf_take(rs, &n, &release);
			iter_copy(&it, p, n, false);
			if (rs_post_data(rs, p, n, release) != 0) {
				it.total -= n;
				break;
			}
		}
		if (it.total == want)
			break;
		if (rs->nonblock || (flags & MSG_DONTWAIT)) {
			if (it.total > 0)
				break;
			ret = again();
			goto out;
		}
		if (!rs_can_send(rs))
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
		if (rs->rmsg_cnt > 0 || rs->rx_fin || rs->disc || rs->shut_rd)
			r |= POLLIN;
		/* writable, or a write fails at once */
		if (rs_can_send(rs) || !rs_writable(rs))
			r |= POLLOUT;
		if ((rs->disc || rs->peer_disc) && rs->rmsg_cnt == 0)
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

/*
 * Arm every rsocket; false if one saw completions on the way (look again first). *nudge:
 * one waits to send a keepalive (rs_nudge), so the sleep must end in time.
 */
static bool
rs_poll_arm(struct pollfd *fds, nfds_t nfds, struct pollfd *w, bool *nudge)
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
		if (rs->state == RS_CONNECTED && rs_nudging(rs))
			*nudge = true;
		w[2 * i] = (struct pollfd){.fd = rs->ec->fd, .events = POLLIN};
		w[2 * i + 1] =
			(struct pollfd){.fd = rs->cc != NULL ? rs->cc->fd : -1, .events = POLLIN};
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
	bool any_os, nudge;
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
		nudge = false;
		if (!rs_poll_arm(fds, nfds, w, &nudge))
			continue;
		ms = deadline < 0 ? RS_NAP_MS : (int)(deadline - now_ms());
		if (ms > (nudge ? RS_NUDGE_MS : RS_NAP_MS))
			ms = nudge ? RS_NUDGE_MS : RS_NAP_MS;
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
		    timeout == NULL ? -1 : (int)(timeout->tv_sec * 1000 + timeout->tv_usec / 1000));
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

/* Every WR done and no control message waiting to go (or none can go any more). */
static bool
rs_sends_done(const struct rs *rs)
{
	return (rs->sqe_avail == rs->sq_size - RS_QP_CTRL_SIZE && rs->ctrl_busy == 0 &&
		(rs->ctrl_want < 0 || !rs_live(rs))) ||
	       rs->disc || rs->fatal != 0;
}

/* Changes whenever a WR completes or the peer gives credits. */
static uint64_t
rs_send_progress(const struct rs *rs)
{
	return ((uint64_t)rs->sseq_comp << 48) | ((uint64_t)rs->sqe_avail << 24) |
	       ((uint64_t)rs->ctrl_busy << 8) | (uint64_t)(rs->ctrl_want + 1);
}

/*
 * Wait (lock held) until every send has completed: as long as they make progress (a slow
 * reader, loss: credits and TCP's window hold them), giving up after RS_CLOSE_IDLE_MS
 * without any.
 */
static void
rs_drain(struct rs *rs)
{
	uint64_t before;

	do {
		before = rs_send_progress(rs);
		if (rs_wait_until(rs, rs_sends_done, now_ms() + RS_CLOSE_IDLE_MS))
			return;
	} while (rs_send_progress(rs) != before);
}

static bool
rs_disconnected(const struct rs *rs)
{
	return rs->disc || rs->state != RS_CONNECTED;
}

/*
 * SHUT_WR sends SHUTDOWN after the data (DISCONNECT when reading is shut too), SHUT_RD
 * alone sends nothing; then waits for the sends, as librdmacm's rshutdown() does.
 */
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
	if (how != SHUT_RD)
		rs->shut_wr = true;
	if (rs_live(rs)) {
		if (rs->shut_wr && rs->shut_rd)
			rs->ctrl_want = RS_CTRL_DISCONNECT;
		else if (rs->shut_wr && !rs->shut_sent)
			rs->ctrl_want = RS_CTRL_SHUTDOWN;
		if (rs->ctrl_want >= 0)
			rs_drain(rs);
	}
	pthread_mutex_unlock(&rs->lock);
	return 0;
}

EXPORT int
rclose(int s)
{
	RS_GET(rs, s);

	pthread_mutex_lock(&rs->lock);
	if (rs->state == RS_CONNECTED) {
		/* What was written leaves first, then DISCONNECT, then the connection closes:
		 * a disconnect flushes every WR the QP has not started. */
		if (rs_live(rs))
			rs->ctrl_want = RS_CTRL_DISCONNECT;
		rs_drain(rs);
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
 * Sizes (SO_SNDBUF, SO_RCVBUF, RDMA_SQSIZE, RDMA_RQSIZE, RDMA_IOMAPSIZE: the iomap table
 * the peer's riomap() fills) take effect at connect/accept. SO_REUSEADDR, SO_REUSEPORT,
 * keepalive, TCP_NODELAY and RDMA_INLINE are kept and reported and change nothing (every
 * transfer is sent at once; no keepalive is sent, one received is taken);
 * RDMA_ROUTE is accepted and not needed (warpnicd resolves the route).
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
	ti.tcpi_state = rs->state == RS_CONNECTED   ? TCP_ESTABLISHED
			: rs->state == RS_LISTENING ? TCP_LISTEN
						    : TCP_CLOSE;
	ti.tcpi_snd_mss = RS_MAX_TRANSFER;
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
		v = RS_MAX_TRANSFER; /* the most one RDMA Write carries */
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
 * riomap(): open [buf, buf + len) to the peer's riowrite() at @p offset (-1: the address of
 * buf, as in librdmacm), in a free entry of the peer's iomap table (its RDMA_IOMAPSIZE;
 * ENOMEM when none is free). The entry goes to the peer before the next data. PROT_NONE
 * only registers the region.
 */
EXPORT off_t
riomap(int s, void *buf, size_t len, int prot, int flags, off_t offset)
{
	RS_GET(rs, s);
	struct rs_lmap *l, *o;
	off_t ret = -1;
	int i;

	(void)flags;
	if ((prot & ~PROT_WRITE) != 0 || buf == NULL || len == 0 || len > UINT32_MAX)
		return fail(EINVAL);
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return fail(ENOMEM);
	pthread_mutex_lock(&rs->lock);
	if (rs->pd == NULL || rs->remote_sgl.length == 0) {
		errno = EINVAL;
		goto err;
	}
	l->index = -1;
	if (prot & PROT_WRITE) {
		for (i = 0; i < (int)rs->remote_iomap.length && l->index < 0; i++) {
			for (o = rs->lmaps; o != NULL && o->index != i; o = o->next)
				;
			if (o == NULL)
				l->index = i;
		}
		if (l->index < 0) {
			errno = ENOMEM;
			goto err;
		}
	}
	l->mr = ibv_reg_mr(rs->pd, buf, len,
			   IBV_ACCESS_LOCAL_WRITE |
				   ((prot & PROT_WRITE) ? IBV_ACCESS_REMOTE_WRITE : 0));
	if (l->mr == NULL)
		goto err;
	l->buf = buf;
	l->len = len;
	l->offset = offset == -1 ? (uint64_t)(uintptr_t)buf : (uint64_t)offset;
	l->pending = l->index >= 0;
	l->next = rs->lmaps;
	rs->lmaps = l;
	ret = (off_t)l->offset;
	rs_progress(rs);
	pthread_mutex_unlock(&rs->lock);
	return ret;
err:
	pthread_mutex_unlock(&rs->lock);
	free(l);
	return -1;
}

/* The region leaves our table; the peer's entry stays (librdmacm tells the peer nothing). */
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

/* The peer's region (an entry of our iomap table) that holds @p offset. */
static const struct rs_rmap *
rs_rmap_find(const struct rs *rs, uint64_t offset)
{
	uint32_t i;

	for (i = 0; i < rs->iomap_size; i++)
		if (rs->rmaps[i].sge.length != 0 && offset >= rs->rmaps[i].offset &&
		    offset - rs->rmaps[i].offset < rs->rmaps[i].sge.length)
			return &rs->rmaps[i];
	return NULL;
}

/*
 * riowrite(): RDMA Writes straight into the peer's regions, no message. Stops where no
 * region holds the next offset (EINVAL when that is the first).
 */
EXPORT size_t
riowrite(int s, const void *buf, size_t count, off_t offset, int flags)
{
	struct rs *rs = rs_get(s);
	const struct rs_rmap *m;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	size_t done = 0;
	uint32_t n, release;
	uint64_t off;
	uint8_t *p;

	if (rs == NULL) {
		errno = EBADF;
		return (size_t)-1;
	}
	pthread_mutex_lock(&rs->lock);
	rs_progress(rs);
	if (rs->state != RS_CONNECTED) {
		errno = ENOTCONN;
		goto err;
	}
	while (done < count) {
		if (!rs_writable(rs)) {
			if (done > 0)
				break;
			errno = rs_send_err(rs);
			goto err;
		}
		while (done < count && rs->sqe_avail >= 1 && rs_sbuf_free(rs) >= RS_SNDLOWAT) {
			off = (uint64_t)offset + done;
			m = rs_rmap_find(rs, off);
			if (m == NULL) {
				if (done > 0)
					goto out;
				errno = EINVAL;
				goto err;
			}
			n = count - done < RS_MAX_TRANSFER ? (uint32_t)(count - done)
							   : RS_MAX_TRANSFER;
			if (n > m->sge.length - (off - m->offset))
				n = (uint32_t)(m->sge.length - (off - m->offset));
			p = rs_sbuf_take(rs, &n, &release);
			memcpy(p, (const uint8_t *)buf + done, n);
			sge = (struct ibv_sge){
				.addr = (uintptr_t)p, .length = n, .lkey = rs->smr->lkey};
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = rs_wr_id(RS_WR_SQE, release);
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = IBV_WR_RDMA_WRITE;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.wr.rdma.remote_addr = m->sge.addr + (off - m->offset);
			wr.wr.rdma.rkey = m->sge.key;
			rs->sqe_avail--;
			if (rs_post(rs, &wr) != 0)
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
out:
	pthread_mutex_unlock(&rs->lock);
	return done;
err:
	pthread_mutex_unlock(&rs->lock);
	return (size_t)-1;
}
