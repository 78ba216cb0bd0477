/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rpc_badpeer: malformed RPC-over-RDMA peers for lib/rpcrdma, on raw verbs and rdma_cm.
 *
 *   rpc_badpeer --attack ADDR        against wn-rpc-blob --server ADDR --credits 2
 *   rpc_badpeer --hostile ADDR       a server that answers each procedure wrongly ...
 *   rpc_badpeer --victim ADDR        ... and lib/rpcrdma's client calling it
 *
 * --attack sends what a broken or hostile client could (RFC 8166 §4.5): an unknown version
 * (RDMA_ERROR ERR_VERS 1..1 back), an unknown message type, a bad discriminator, too many
 * segments, RDMA_NOMSG without chunks, a read chunk at an unaligned position, an RPC XID that
 * is not rdma_xid, a chunk larger than the server accepts (ERR_CHUNK each), a message shorter
 * than 28 octets, RDMA_ERROR and an unknown RDMA_DONE from a client (silently discarded),
 * arguments that do not decode (GARBAGE_ARGS); RDMA_MSGP calls (RFC 5666 §4.3: ECHOs whose
 * opaque is padded to the sender's alignment, or under the threshold and not padded, come
 * back intact in an RDMA_MSG reply; padding that runs past the message is GARBAGE_ARGS);
 * then, each on a connection of its own, a read chunk with an STag that names nothing and a
 * write chunk longer than the memory registered behind it (the server's RDMA Read/Write
 * fails: the connection closes, and not one octet lands outside the registration), and a
 * third call over a grant of two credits (credit overrun: the connection closes).
 *
 * --hostile / --victim: the client must discard replies it cannot use (wrong XID, a write
 * chunk longer than offered, an unknown message type, an RPC XID that differs from
 * rdma_xid: the call times out), report RDMA_ERROR ERR_VERS / ERR_CHUNK, accept a grant of
 * zero credits as one, decode an RDMA_MSGP reply, and fail every call cleanly when the
 * server disconnects.
 *
 * Each check prints "ok: ..." or "FAIL: ..."; the exit status is 0 when all held.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "blob.h"
#include "wn_rpcrdma.h"
#include "wn_rpcrdma_xprt.h"

#define NRECV	  16
#define RECV_SIZE 2048
#define SEND_SIZE 4096
#define MEM_SIZE  (4u << 20)
#define DATA_OFF  (1u << 20) /* data area: the rest of the registration */
#define WAIT_MS	  10000

static int failures;
static uint16_t port = WN_RPCRDMA_PORT;

static void __attribute__((format(printf, 2, 3)))
check(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s: ", ok ? "ok" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!ok)
		failures++;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool_t
xnone(XDR *x, void *p)
{
	(void)x;
	(void)p;
	return TRUE;
}

/* ---- a raw RDMA endpoint ---- */

struct ep {
	struct rdma_event_channel *ec;
	struct rdma_cm_id *listen;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;  /* receives */
	struct ibv_cq *scq; /* sends */
	struct ibv_mr *mr;
	uint8_t *mem; /* [0, 32K) receive buffers, [64K, 128K) send, [1M, 4M) data */
	bool dead;
};

static bool
cm_wait(struct ep *e, enum rdma_cm_event_type want, struct rdma_cm_event **out, int ms)
{
	struct rdma_cm_event *ev;
	uint64_t end = now_ms() + (uint64_t)ms;

	while (now_ms() < end) {
		if (rdma_get_cm_event(e->ec, &ev) != 0) {
			if (errno != EAGAIN)
				return false;
			usleep(1000);
			continue;
		}
		if (ev->event == want) {
			if (out != NULL)
				*out = ev;
			else
				rdma_ack_cm_event(ev);
			return true;
		}
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
			e->dead = true;
		rdma_ack_cm_event(ev);
	}
	return false;
}

static void
post_recv(struct ep *e, int i)
{
	struct ibv_sge sge = {.addr = (uintptr_t)(e->mem + i * RECV_SIZE), .length = RECV_SIZE,
			      .lkey = e->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1}, *bad;

	ibv_post_recv(e->id->qp, &wr, &bad);
}

static int
ep_qp(struct ep *e, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qa = {.qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 64, .max_recv_wr = NRECV,
					      .max_send_sge = 1, .max_recv_sge = 1}};

	e->id = id;
	if (e->pd == NULL) {
		e->pd = ibv_alloc_pd(id->verbs);
		e->mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			      -1, 0);
		e->mr = ibv_reg_mr(e->pd, e->mem, DATA_OFF + (MEM_SIZE - DATA_OFF) / 2,
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
					   IBV_ACCESS_REMOTE_WRITE);
		if (e->pd == NULL || e->mem == MAP_FAILED || e->mr == NULL)
			return -1;
	}
	e->cq = ibv_create_cq(id->verbs, 128, NULL, NULL, 0);
	e->scq = ibv_create_cq(id->verbs, 128, NULL, NULL, 0);
	qa.send_cq = e->scq;
	qa.recv_cq = e->cq;
	if (e->cq == NULL || e->scq == NULL || rdma_create_qp(id, e->pd, &qa) != 0)
		return -1;
	for (int i = 0; i < NRECV; i++)
		post_recv(e, i);
	e->dead = false;
	return 0;
}

static void
ep_close(struct ep *e)
{
	if (e->id == NULL)
		return;
	rdma_disconnect(e->id);
	cm_wait(e, RDMA_CM_EVENT_DISCONNECTED, NULL, 2000);
	rdma_destroy_qp(e->id);
	ibv_destroy_cq(e->cq);
	ibv_destroy_cq(e->scq);
	rdma_destroy_id(e->id);
	e->id = NULL;
}

static void
cp_data(uint8_t *pd, bool remote_inv)
{
	struct wn_rpcrdma_cp cp = {.version = 1, .flags = remote_inv ? 1 : 0,
				   .inline_send = 1024, .inline_recv = 1024};

	wn_rpcrdma_cp_encode(&cp, pd);
}

static int
ep_connect(struct ep *e, const char *addr)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct rdma_conn_param cp = {.responder_resources = 4, .initiator_depth = 4};
	struct rdma_cm_id *id;
	uint8_t pd[8];

	inet_pton(AF_INET, addr, &sa.sin_addr);
	if (e->ec == NULL) {
		e->ec = rdma_create_event_channel();
		if (e->ec == NULL)
			return -1;
		int fl = fcntl(e->ec->fd, F_GETFL);

		fcntl(e->ec->fd, F_SETFL, fl | O_NONBLOCK);
	}
	if (rdma_create_id(e->ec, &id, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa, 5000) != 0 ||
	    !cm_wait(e, RDMA_CM_EVENT_ADDR_RESOLVED, NULL, WAIT_MS) ||
	    rdma_resolve_route(id, 5000) != 0 ||
	    !cm_wait(e, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL, WAIT_MS) || ep_qp(e, id) != 0)
		return -1;
	cp_data(pd, false);
	cp.private_data = pd;
	cp.private_data_len = sizeof(pd);
	if (rdma_connect(id, &cp) != 0 || !cm_wait(e, RDMA_CM_EVENT_ESTABLISHED, NULL, WAIT_MS))
		return -1;
	return 0;
}

/* Post a Send of @p len octets and wait for its completion. @return 0, -1 on an error. */
static int
ep_send(struct ep *e, const void *msg, uint32_t len, uint32_t inv)
{
	uint8_t *b = e->mem + 64 * 1024;
	struct ibv_sge sge = {.addr = (uintptr_t)b, .length = len, .lkey = e->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = 1000, .sg_list = &sge, .num_sge = 1,
				 .opcode = inv ? IBV_WR_SEND_WITH_INV : IBV_WR_SEND,
				 .send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = inv},
			   *bad;
	struct ibv_wc wc;
	uint64_t end = now_ms() + WAIT_MS;

	memcpy(b, msg, len);
	if (ibv_post_send(e->id->qp, &wr, &bad) != 0)
		return -1;
	while (now_ms() < end) {
		int n = ibv_poll_cq(e->scq, 1, &wc);

		if (n < 0)
			return -1;
		if (n == 0) {
			usleep(200);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS)
			return -1;
		if (wc.wr_id == 1000)
			return 0;
	}
	return -1;
}

/* Wait for a message; @return its length (copied to @p out), 0 on timeout, -1 on an error. */
static int
ep_recv(struct ep *e, uint8_t *out, int ms)
{
	struct ibv_wc wc;
	uint64_t end = now_ms() + (uint64_t)ms;

	while (now_ms() < end) {
		int n = ibv_poll_cq(e->cq, 1, &wc);

		if (n < 0)
			return -1;
		if (n == 0) {
			usleep(200);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			e->dead = true;
			return -1;
		}
		memcpy(out, e->mem + wc.wr_id * RECV_SIZE, wc.byte_len);
		post_recv(e, (int)wc.wr_id);
		return (int)wc.byte_len;
	}
	return 0;
}

/* ---- message builders ---- */

static uint32_t next_xid = 0x5eed0000;

/* An RPC call (RFC 5531) of @p prog/@p proc with @p args, after @p h's encoded header. */
static uint32_t
build(uint8_t *out, struct wn_rpcrdma_hdr *h, uint32_t rpc_xid, uint32_t proc, xdrproc_t xa,
      void *args)
{
	struct rpc_msg m = {.rm_xid = rpc_xid, .rm_direction = CALL};
	int n = wn_rpcrdma_encode(h, out, SEND_SIZE);
	XDR x;

	m.rm_call.cb_rpcvers = 2;
	m.rm_call.cb_prog = BLOB_PROG;
	m.rm_call.cb_vers = BLOB_V1;
	m.rm_call.cb_proc = proc;
	m.rm_call.cb_cred = _null_auth;
	m.rm_call.cb_verf = _null_auth;
	xdrmem_create(&x, (char *)out + n, (u_int)(SEND_SIZE - n), XDR_ENCODE);
	if (!xdr_callmsg(&x, &m) || (xa != NULL && !xa(&x, args)))
		abort();
	return (uint32_t)n + xdr_getpos(&x);
}

static void
hdr_init(struct wn_rpcrdma_hdr *h, uint32_t proc)
{
	memset(h, 0, sizeof(*h));
	h->xid = next_xid++;
	h->vers = 1;
	h->credits = 2;
	h->proc = proc;
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Send @p msg and expect RDMA_ERROR @p err for @p xid (vers echoed). */
static void
expect_error(struct ep *e, const char *what, const uint8_t *msg, uint32_t len, uint32_t xid,
	     uint32_t vers, uint32_t err)
{
	uint8_t r[RECV_SIZE];
	struct wn_rpcrdma_hdr h;
	int n;

	if (ep_send(e, msg, len, 0) != 0) {
		check(false, "%s: Send failed", what);
		return;
	}
	n = ep_recv(e, r, WAIT_MS);
	if (n <= 0) {
		check(false, "%s: no answer", what);
		return;
	}
	/* by hand: ERR_VERS carries the failing message's version, which a version 1 decoder
	 * refuses (RFC 8166 §4.5: the fixed fields and the error code keep their places) */
	memset(&h, 0, sizeof(h));
	if (n >= 20) {
		h.xid = get32(r);
		h.vers = get32(r + 4);
		h.proc = get32(r + 12);
		h.err = get32(r + 16);
	}
	if (n >= 28) {
		h.vers_low = get32(r + 20);
		h.vers_high = get32(r + 24);
	}
	check(h.xid == xid && h.vers == vers && h.proc == WN_RPCRDMA_ERROR && h.err == err &&
		      (err != WN_RPCRDMA_ERR_VERS || (h.vers_low == 1 && h.vers_high == 1)),
	      "%s: RDMA_ERROR %s (xid %#x vers %u proc %u err %u, %u..%u)", what,
	      err == 1 ? "ERR_VERS" : "ERR_CHUNK", h.xid, h.vers, h.proc, h.err, h.vers_low,
	      h.vers_high);
}

/* A NULL call must be answered RDMA_MSG, accepted, SUCCESS: the server still serves. */
static void
expect_null(struct ep *e, const char *what)
{
	struct wn_rpcrdma_hdr h;
	uint8_t m[SEND_SIZE], r[RECV_SIZE];
	uint32_t len;
	struct rpc_msg rep;
	int n;
	XDR x;

	hdr_init(&h, WN_RPCRDMA_MSG);
	len = build(m, &h, h.xid, BLOBPROC_NULL, NULL, NULL);
	if (ep_send(e, m, len, 0) != 0 || (n = ep_recv(e, r, WAIT_MS)) <= 0) {
		check(false, "%s: NULL call not answered", what);
		return;
	}
	struct wn_rpcrdma_hdr g;

	if (wn_rpcrdma_decode(r, (size_t)n, &g) != WN_RPCRDMA_OK || g.xid != h.xid ||
	    g.proc != WN_RPCRDMA_MSG) {
		check(false, "%s: NULL answered with xid %#x proc %u", what, g.xid, g.proc);
		return;
	}
	memset(&rep, 0, sizeof(rep));
	rep.acpted_rply.ar_results.proc = (xdrproc_t)xnone;
	xdrmem_create(&x, (char *)r + g.hdr_len, (u_int)(n - (int)g.hdr_len), XDR_DECODE);
	check(xdr_replymsg(&x, &rep) && rep.rm_xid == h.xid &&
		      rep.rm_reply.rp_stat == MSG_ACCEPTED && rep.acpted_rply.ar_stat == SUCCESS &&
		      g.credits >= 1,
	      "%s: NULL call answered (granted %u)", what, g.credits);
}

/*
 * An ECHO of @p dlen octets (octet i is i) sent as RDMA_MSGP with @p align and @p thresh
 * (RFC 5666 §3.9): when @p dlen reaches @p thresh the opaque's body starts at the next
 * multiple of @p align from the start of the message, with the padding (0xEE) after its length
 * word. The server handles it as RDMA_MSG with the padding skipped: it answers RDMA_MSG with
 * the same octets back, or GARBAGE_ARGS when @p garbage (the message ends inside the padding).
 */
static void
expect_echo_msgp(struct ep *e, uint32_t dlen, uint32_t align, uint32_t thresh, bool garbage)
{
	struct wn_rpcrdma_hdr h, g;
	uint8_t m[SEND_SIZE], r[RECV_SIZE];
	blob_echo res = {0};
	struct rpc_msg rep = {0};
	uint32_t len, pad = 0;
	bool same;
	int n;
	XDR x;

	hdr_init(&h, WN_RPCRDMA_MSGP);
	h.align = align;
	h.thresh = thresh;
	len = build(m, &h, h.xid, BLOBPROC_ECHO, NULL, NULL);
	put32(m + len, dlen);
	len += 4;
	if (dlen >= thresh && align > 1)
		pad = (align - len % align) % align;
	memset(m + len, 0xEE, pad);
	if (garbage) {
		len += pad / 2; /* the message ends inside the padding */
	} else {
		len += pad;
		for (uint32_t i = 0; i < dlen; i++)
			m[len + i] = (uint8_t)i;
		len += dlen;
	}
	n = ep_send(e, m, len, 0) == 0 ? ep_recv(e, r, WAIT_MS) : -1;
	if (n <= 0 || wn_rpcrdma_decode(r, (size_t)n, &g) != WN_RPCRDMA_OK) {
		check(false, "RDMA_MSGP ECHO of %u octets (align %u, thresh %u): no answer", dlen,
		      align, thresh);
		return;
	}
	rep.acpted_rply.ar_results.proc = garbage ? (xdrproc_t)xnone : (xdrproc_t)xdr_blob_echo;
	rep.acpted_rply.ar_results.where = (char *)&res;
	xdrmem_create(&x, (char *)r + g.hdr_len, (u_int)(n - (int)g.hdr_len), XDR_DECODE);
	bool ok = g.xid == h.xid && g.proc == WN_RPCRDMA_MSG && xdr_replymsg(&x, &rep) &&
		  rep.rm_xid == h.xid && rep.rm_reply.rp_stat == MSG_ACCEPTED;

	if (garbage) {
		check(ok && rep.acpted_rply.ar_stat == GARBAGE_ARGS,
		      "RDMA_MSGP ECHO whose padding (align %u) runs past the message: GARBAGE_ARGS",
		      align);
		return;
	}
	same = ok && rep.acpted_rply.ar_stat == SUCCESS && res.data.data_len == dlen;
	for (uint32_t i = 0; same && i < dlen; i++)
		same = (uint8_t)res.data.data_val[i] == (uint8_t)i;
	check(same,
	      "RDMA_MSGP ECHO of %u octets (align %u, thresh %u, %u octets of padding): "
	      "RDMA_MSG reply, the octets back intact",
	      dlen, align, thresh, pad);
	xdr_free((xdrproc_t)xdr_blob_echo, (char *)&res);
}

static void
attack_headers(struct ep *e)
{
	struct wn_rpcrdma_hdr h;
	uint8_t m[SEND_SIZE], r[RECV_SIZE];
	uint32_t len;

	/* RFC 8166 §4.5.1: unknown version */
	hdr_init(&h, WN_RPCRDMA_MSG);
	len = build(m, &h, h.xid, BLOBPROC_NULL, NULL, NULL);
	put32(m + 4, 2);
	expect_error(e, "version 2", m, len, h.xid, 2, WN_RPCRDMA_ERR_VERS);
	/* §4.5.2: XDR errors in the transport header */
	hdr_init(&h, WN_RPCRDMA_MSG);
	len = build(m, &h, h.xid, BLOBPROC_NULL, NULL, NULL);
	put32(m + 12, 9);
	expect_error(e, "message type 9", m, len, h.xid, 1, WN_RPCRDMA_ERR_CHUNK);
	hdr_init(&h, WN_RPCRDMA_MSG);
	len = build(m, &h, h.xid, BLOBPROC_NULL, NULL, NULL);
	put32(m + 16, 7); /* read list discriminator */
	expect_error(e, "discriminator 7", m, len, h.xid, 1, WN_RPCRDMA_ERR_CHUNK);
	hdr_init(&h, WN_RPCRDMA_NOMSG);
	len = (uint32_t)wn_rpcrdma_encode(&h, m, sizeof(m));
	expect_error(e, "RDMA_NOMSG without chunks", m, len, h.xid, 1, WN_RPCRDMA_ERR_CHUNK);
	hdr_init(&h, WN_RPCRDMA_MSG);
	h.nreads = 1;
	h.reads[0] = (struct wn_rpcrdma_read_seg){.position = 6, .seg = {e->mr->rkey, 64,
							      (uintptr_t)e->mem + DATA_OFF}};
	len = build(m, &h, h.xid, BLOBPROC_NULL, NULL, NULL);
	expect_error(e, "read chunk at position 6", m, len, h.xid, 1, WN_RPCRDMA_ERR_CHUNK);
	hdr_init(&h, WN_RPCRDMA_MSG);
	len = build(m, &h, h.xid + 1000, BLOBPROC_NULL, NULL, NULL);
	expect_error(e, "RPC XID not rdma_xid", m, len, h.xid, 1, WN_RPCRDMA_ERR_CHUNK);
	hdr_init(&h, WN_RPCRDMA_MSG);
	h.nreads = 1;
	h.reads[0] = (struct wn_rpcrdma_read_seg){.position = 40, .seg = {e->mr->rkey,
							       1u << 30, 0x10000}};
	len = build(m, &h, h.xid, BLOBPROC_NULL, NULL, NULL);
	expect_error(e, "1 GiB read chunk", m, len, h.xid, 1, WN_RPCRDMA_ERR_CHUNK);
	/* 17 read segments: over the decoder's bound */
	hdr_init(&h, WN_RPCRDMA_MSG);
	len = 16;
	for (int i = 0; i < 17; i++) {
		uint32_t w[6] = {1, 40, e->mr->rkey, 8, 0, (uint32_t)DATA_OFF};

		for (int j = 0; j < 6; j++)
			put32(m + len + 4 * j, w[j]);
		len += 24;
	}
	hdr_init(&h, WN_RPCRDMA_MSG);
	put32(m, h.xid);
	put32(m + 4, 1);
	put32(m + 8, 2);
	put32(m + 12, 0);
	memset(m + len, 0, 12);
	len += 12;
	expect_error(e, "17 read segments", m, len, h.xid, 1, WN_RPCRDMA_ERR_CHUNK);
	/* §4.5: shorter than 28 octets: silently discarded */
	hdr_init(&h, WN_RPCRDMA_MSG);
	len = build(m, &h, h.xid, BLOBPROC_NULL, NULL, NULL);
	check(ep_send(e, m, 20, 0) == 0 && ep_recv(e, r, 1000) == 0, "20-octet message: no answer");
	expect_null(e, "after the short message");
	/* a responder discards RDMA_ERROR; an unknown RDMA_DONE is nothing */
	hdr_init(&h, WN_RPCRDMA_ERROR);
	h.err = WN_RPCRDMA_ERR_CHUNK;
	len = (uint32_t)wn_rpcrdma_encode(&h, m, sizeof(m));
	check(ep_send(e, m, len, 0) == 0 && ep_recv(e, r, 1000) == 0, "RDMA_ERROR from a client: "
								       "discarded");
	hdr_init(&h, WN_RPCRDMA_DONE);
	len = (uint32_t)wn_rpcrdma_encode(&h, m, sizeof(m));
	check(ep_send(e, m, len, 0) == 0 && ep_recv(e, r, 1000) == 0, "unknown RDMA_DONE: "
								       "discarded");
	expect_null(e, "after RDMA_ERROR and RDMA_DONE");
	/* the RPC layer: arguments that do not decode are GARBAGE_ARGS (§4.5.2) */
	hdr_init(&h, WN_RPCRDMA_MSG);
	len = build(m, &h, h.xid, BLOBPROC_WRITE, NULL, NULL);
	put32(m + len, 0xffffffff); /* a name of 4 GiB */
	len += 4;
	int n = ep_send(e, m, len, 0) == 0 ? ep_recv(e, r, WAIT_MS) : -1;
	struct wn_rpcrdma_hdr g;
	struct rpc_msg rep = {0};
	XDR x;

	rep.acpted_rply.ar_results.proc = (xdrproc_t)xnone;
	if (n > 0 && wn_rpcrdma_decode(r, (size_t)n, &g) == WN_RPCRDMA_OK) {
		xdrmem_create(&x, (char *)r + g.hdr_len, (u_int)(n - (int)g.hdr_len), XDR_DECODE);
		check(xdr_replymsg(&x, &rep) && rep.rm_reply.rp_stat == MSG_ACCEPTED &&
			      rep.acpted_rply.ar_stat == GARBAGE_ARGS,
		      "undecodable arguments: GARBAGE_ARGS");
	} else {
		check(false, "undecodable arguments: no RPC reply");
	}
	/* RDMA_MSGP calls (RFC 5666 §4.3): accepted, the padding skipped where it applies */
	expect_echo_msgp(e, 512, 64, 256, false);
	expect_echo_msgp(e, 300, 128, 4, false);
	expect_echo_msgp(e, 100, 64, 256, false); /* under the threshold: not padded */
	expect_echo_msgp(e, 512, 1024, 256, true);
	expect_null(e, "after every malformed header");
}

/* The server must close the connection within WAIT_MS (it cannot do the RDMA it was asked). */
static bool
closed(struct ep *e)
{
	uint8_t r[RECV_SIZE];
	uint64_t end = now_ms() + WAIT_MS;

	while (!e->dead && now_ms() < end) {
		if (ep_recv(e, r, 100) < 0)
			break;
		struct rdma_cm_event *ev;

		if (rdma_get_cm_event(e->ec, &ev) == 0) {
			if (ev->event == RDMA_CM_EVENT_DISCONNECTED)
				e->dead = true;
			rdma_ack_cm_event(ev);
		}
	}
	return e->dead || now_ms() < end;
}

/*
 * A WRITE call of @p len octets to blob "victim" whose data goes by one read chunk
 * (@p handle, @p addr); the chunk's position is the data's XDR position in the call.
 */
static uint32_t
build_write(uint8_t *m, struct wn_rpcrdma_hdr *h, uint32_t len, uint32_t handle, uint64_t addr)
{
	struct rpc_msg cm = {.rm_xid = h->xid, .rm_direction = CALL};
	char *name = "victim";
	uint64_t off = 0;
	uint32_t cnt = len, pos;
	uint8_t tmp[SEND_SIZE];
	int n;
	XDR x;

	cm.rm_call.cb_rpcvers = 2;
	cm.rm_call.cb_prog = BLOB_PROG;
	cm.rm_call.cb_vers = BLOB_V1;
	cm.rm_call.cb_proc = BLOBPROC_WRITE;
	cm.rm_call.cb_cred = cm.rm_call.cb_verf = _null_auth;
	xdrmem_create(&x, (char *)tmp, sizeof(tmp), XDR_ENCODE);
	xdr_callmsg(&x, &cm);
	xdr_string(&x, &name, 255);
	xdr_u_int64_t(&x, &off);
	xdr_u_int(&x, &cnt);
	pos = xdr_getpos(&x); /* the data follows its length word */
	h->nreads = 1;
	h->reads[0] = (struct wn_rpcrdma_read_seg){.position = pos,
						   .seg = {.handle = handle, .length = len,
							   .offset = addr}};
	n = wn_rpcrdma_encode(h, m, SEND_SIZE);
	memcpy(m + n, tmp, pos);
	return (uint32_t)n + pos;
}

static void
attack_rdma(struct ep *e, const char *addr)
{
	struct wn_rpcrdma_hdr h;
	uint8_t m[SEND_SIZE], r[RECV_SIZE];
	blob_read_args ra = {.name = "victim", .offset = 0, .count = 8192};
	uint8_t *data = e->mem + DATA_OFF, *guard;
	uint32_t len;
	int n;

	/* a read chunk whose STag names nothing: the server's RDMA Read fails */
	if (ep_connect(e, addr) != 0) {
		check(false, "connect");
		return;
	}
	hdr_init(&h, WN_RPCRDMA_MSG);
	len = build_write(m, &h, 4096, 0xdead0100, 0x7f0000001000ull);
	check(ep_send(e, m, len, 0) == 0 && closed(e),
	      "read chunk with an invalid STag: connection closed");
	ep_close(e);
	/* store 8 KiB under "victim", then READ it into a write chunk that claims 8 KiB where
	 * only 4 KiB are registered: the server's RDMA Write fails, nothing lands beyond */
	if (ep_connect(e, addr) != 0) {
		check(false, "connect");
		return;
	}
	memset(data, 0x5a, 8192);
	hdr_init(&h, WN_RPCRDMA_MSG);
	len = build_write(m, &h, 8192, e->mr->rkey, (uintptr_t)data);
	n = ep_send(e, m, len, 0) == 0 ? ep_recv(e, r, WAIT_MS) : -1;
	check(n > 0, "WRITE of 8 KiB by read chunk answered");
	guard = e->mem + DATA_OFF + (MEM_SIZE - DATA_OFF) / 2; /* first octet past the MR */
	struct ibv_mr *small = ibv_reg_mr(e->pd, guard - 4096, 4096,
					  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);

	memset(guard - 4096, 0x11, 8192);
	hdr_init(&h, WN_RPCRDMA_MSG);
	h.nwrites = 1;
	h.writes[0].nsegs = 1;
	h.writes[0].segs[0] = (struct wn_rpcrdma_seg){small != NULL ? small->rkey : 0, 8192,
						      (uintptr_t)(guard - 4096)};
	len = build(m, &h, h.xid, BLOBPROC_READ, (xdrproc_t)xdr_blob_read_args, &ra);
	bool shut = ep_send(e, m, len, 0) == 0 && closed(e);
	bool intact = true;

	for (int i = 0; i < 4096; i++)
		if (guard[i] != 0x11)
			intact = false;
	check(shut && intact, "write chunk longer than its registration: connection closed, "
			      "memory past the registration untouched");
	if (small != NULL)
		ibv_dereg_mr(small);
	ep_close(e);
	/* three calls over a grant of two: RFC 8166 §3.3.1 credit overrun */
	if (ep_connect(e, addr) != 0) {
		check(false, "connect");
		return;
	}
	{
		/* six calls posted together, each with a 1 MiB read chunk to pull: whichever
		 * arrives while two are being served overruns the grant */
		struct ibv_send_wr wr[6], *bad;
		struct ibv_sge sge[6];

		for (int i = 0; i < 6; i++) {
			uint8_t *b = e->mem + 64 * 1024 + i * 4096;

			hdr_init(&h, WN_RPCRDMA_MSG);
			len = build_write(b, &h, 1u << 20, e->mr->rkey, (uintptr_t)data);
			sge[i] = (struct ibv_sge){(uintptr_t)b, len, e->mr->lkey};
			wr[i] = (struct ibv_send_wr){.wr_id = 2000 + i, .sg_list = &sge[i],
						     .num_sge = 1, .opcode = IBV_WR_SEND,
						     .next = i < 5 ? &wr[i + 1] : NULL};
		}
		ibv_post_send(e->id->qp, wr, &bad);
	}
	check(closed(e), "calls over a grant of two credits: connection closed");
	ep_close(e);
	/* and the server still serves */
	if (ep_connect(e, addr) == 0)
		expect_null(e, "a new connection after the violations");
	else
		check(false, "connect after the violations");
	ep_close(e);
}

/* ---- a hostile server and lib/rpcrdma's client ---- */

/* procedure numbers the victim calls and how the hostile server answers each */
enum {
	H_NULL = 0,	  /* correct */
	H_BAD_XID = 1,	  /* another XID in the header */
	H_LONG_WRITE = 2, /* a write chunk longer than offered */
	H_ERR_VERS = 3,
	H_ERR_CHUNK = 4,
	H_BAD_TYPE = 5,	  /* message type 9 */
	H_RPC_XID = 6,	  /* the RPC XID differs from rdma_xid */
	H_ZERO_CREDIT = 7, /* correct, but a grant of 0 */
	H_MSGP = 8,	  /* an RDMA_MSGP reply with a padded opaque */
	H_HANGUP = 9,	  /* disconnect */
};

static void
hostile(const char *addr)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct ep e = {0};
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp = {.responder_resources = 4, .initiator_depth = 4};
	uint8_t pd[8], r[RECV_SIZE], m[SEND_SIZE];
	int n;

	inet_pton(AF_INET, addr, &sa.sin_addr);
	e.ec = rdma_create_event_channel();
	if (e.ec == NULL || rdma_create_id(e.ec, &e.listen, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_bind_addr(e.listen, (struct sockaddr *)&sa) != 0 || rdma_listen(e.listen, 4) != 0)
		exit(1);
	fcntl(e.ec->fd, F_SETFL, fcntl(e.ec->fd, F_GETFL) | O_NONBLOCK);
	printf("hostile: listening\n");
	fflush(stdout);
	if (!cm_wait(&e, RDMA_CM_EVENT_CONNECT_REQUEST, &ev, 60000))
		exit(1);
	struct rdma_cm_id *id = ev->id;

	rdma_ack_cm_event(ev);
	if (ep_qp(&e, id) != 0)
		exit(1);
	cp_data(pd, false);
	cp.private_data = pd;
	cp.private_data_len = sizeof(pd);
	if (rdma_accept(id, &cp) != 0 || !cm_wait(&e, RDMA_CM_EVENT_ESTABLISHED, NULL, WAIT_MS))
		exit(1);
	/* an unsolicited reply first: the client has no such call */
	struct wn_rpcrdma_hdr h;

	hdr_init(&h, WN_RPCRDMA_MSG);
	n = wn_rpcrdma_encode(&h, m, sizeof(m));
	memset(m + n, 0, 24);
	ep_send(&e, m, (uint32_t)n + 24, 0);
	for (;;) {
		struct wn_rpcrdma_hdr c;
		struct rpc_msg call = {0}, rep = {0};
		char cred[400], verf[400];
		XDR x;

		n = ep_recv(&e, r, 120000);
		if (n <= 0)
			break;
		if (wn_rpcrdma_decode(r, (size_t)n, &c) != WN_RPCRDMA_OK)
			continue;
		call.rm_call.cb_cred.oa_base = cred;
		call.rm_call.cb_verf.oa_base = verf;
		xdrmem_create(&x, (char *)r + c.hdr_len, (u_int)(n - (int)c.hdr_len), XDR_DECODE);
		if (!xdr_callmsg(&x, &call))
			continue;
		uint32_t p = call.rm_call.cb_proc;

		if (p == H_HANGUP) {
			rdma_disconnect(id);
			usleep(500000);
			break;
		}
		h = c;
		h.credits = p == H_ZERO_CREDIT ? 0 : 4;
		h.nreads = 0;
		h.has_reply = c.has_reply;
		for (uint32_t i = 0; i < c.nwrites; i++)
			for (uint32_t j = 0; j < c.writes[i].nsegs; j++)
				h.writes[i].segs[j].length = p == H_LONG_WRITE ? 1u << 20 : 0;
		if (h.has_reply)
			h.reply.segs[0].length = 0;
		if (p == H_BAD_XID)
			h.xid ^= 0x100;
		if (p == H_ERR_VERS || p == H_ERR_CHUNK) {
			n = wn_rpcrdma_error_build(m, sizeof(m), c.xid, 4,
						   p == H_ERR_VERS ? WN_RPCRDMA_ERR_VERS
								   : WN_RPCRDMA_ERR_CHUNK);
			ep_send(&e, m, (uint32_t)n, 0);
			continue;
		}
		if (p == H_MSGP) {
			h.proc = WN_RPCRDMA_MSGP;
			h.align = 64;
			h.thresh = 256;
		}
		n = wn_rpcrdma_encode(&h, m, sizeof(m));
		if (p == H_BAD_TYPE)
			put32(m + 12, 9);
		rep.rm_xid = p == H_RPC_XID ? call.rm_xid + 7 : call.rm_xid;
		rep.rm_direction = REPLY;
		rep.rm_reply.rp_stat = MSG_ACCEPTED;
		rep.acpted_rply.ar_verf = _null_auth;
		rep.acpted_rply.ar_stat = SUCCESS;
		rep.acpted_rply.ar_results.proc = (xdrproc_t)xnone;
		xdrmem_create(&x, (char *)m + n, SEND_SIZE - (u_int)n, XDR_ENCODE);
		xdr_replymsg(&x, &rep);
		uint32_t len = (uint32_t)n + xdr_getpos(&x);

		if (p == H_MSGP) {
			/* blob_echo: length, padding to 64 from the buffer start, 512 octets */
			put32(m + len, 512);
			len += 4;
			uint32_t pad = (64 - len % 64) % 64;

			memset(m + len, 0xEE, pad);
			len += pad;
			for (int i = 0; i < 512; i++)
				m[len + i] = (uint8_t)i;
			len += 512;
		}
		ep_send(&e, m, len, 0);
	}
	printf("hostile: done\n");
}

static enum clnt_stat
vcall(struct wn_rpcrdma_clnt *c, uint32_t proc, struct wn_rpcrdma_call *call, void *buf,
      xdrproc_t xres, void *res)
{
	memset(call, 0, sizeof(*call));
	call->prog = BLOB_PROG;
	call->vers = BLOB_V1;
	call->proc = proc;
	call->timeout_ms = 1500;
	call->xres = xres;
	call->res = res;
	if (buf != NULL) {
		call->ddp_buf = buf;
		call->ddp_len = 4096;
	}
	return wn_rpcrdma_clnt_call(c, call);
}

static void
victim(const char *addr)
{
	struct wn_rpcrdma_opts o;
	struct wn_rpcrdma_clnt *c;
	struct wn_rpcrdma_call call;
	struct wn_rpcrdma_info in;
	static uint8_t buf[4096];
	blob_echo echo = {0};
	enum clnt_stat st;

	wn_rpcrdma_opts_default(&o);
	o.port = port;
	c = wn_rpcrdma_clnt_create(addr, &o);
	if (c == NULL) {
		check(false, "connect to the hostile server: %s", strerror(errno));
		return;
	}
	st = vcall(c, H_NULL, &call, NULL, NULL, NULL);
	check(st == RPC_SUCCESS, "NULL after an unsolicited reply: %s", clnt_sperrno(st));
	/* a grant of zero would deadlock (RFC 8166 §3.3.1): it counts as one */
	st = vcall(c, H_ZERO_CREDIT, &call, NULL, NULL, NULL);
	check(st == RPC_SUCCESS, "a grant of zero credits: %s", clnt_sperrno(st));
	st = vcall(c, H_NULL, &call, NULL, NULL, NULL);
	check(st == RPC_SUCCESS, "a call after the zero grant: %s", clnt_sperrno(st));
	/* discarded replies: the calls time out; a reply with an unknown XID leaves its call's
	 * credit in use (the server may still answer it), the others give it back */
	st = vcall(c, H_BAD_XID, &call, NULL, NULL, NULL);
	check(st == RPC_TIMEDOUT, "reply with another XID: discarded, %s", clnt_sperrno(st));
	st = vcall(c, H_LONG_WRITE, &call, buf, NULL, NULL);
	check(st == RPC_TIMEDOUT, "write chunk longer than offered: discarded, %s",
	      clnt_sperrno(st));
	st = vcall(c, H_ERR_VERS, &call, NULL, NULL, NULL);
	check(st == RPC_CANTSEND && call.rdma_err == WN_RPCRDMA_ERR_VERS, "ERR_VERS: %s, %u",
	      clnt_sperrno(st), call.rdma_err);
	st = vcall(c, H_ERR_CHUNK, &call, NULL, NULL, NULL);
	check(st == RPC_CANTSEND && call.rdma_err == WN_RPCRDMA_ERR_CHUNK, "ERR_CHUNK: %s, %u",
	      clnt_sperrno(st), call.rdma_err);
	st = vcall(c, H_BAD_TYPE, &call, NULL, NULL, NULL);
	check(st == RPC_TIMEDOUT, "message type 9: discarded, %s", clnt_sperrno(st));
	st = vcall(c, H_RPC_XID, &call, NULL, NULL, NULL);
	check(st == RPC_TIMEDOUT, "RPC XID not rdma_xid: discarded, %s", clnt_sperrno(st));
	st = vcall(c, H_MSGP, &call, NULL, (xdrproc_t)xdr_blob_echo, &echo);
	bool same = echo.data.data_len == 512;

	for (u_int i = 0; same && i < 512; i++)
		same = (uint8_t)echo.data.data_val[i] == (uint8_t)i;
	check(st == RPC_SUCCESS && same && (call.how & WN_RPCRDMA_HOW_MSGP),
	      "RDMA_MSGP reply: %s, %u octets %s", clnt_sperrno(st), echo.data.data_len,
	      same ? "intact" : "wrong");
	xdr_free((xdrproc_t)xdr_blob_echo, (char *)&echo);
	wn_rpcrdma_clnt_info(c, &in);
	check(in.discarded >= 5, "%" PRIu64 " replies discarded", in.discarded);
	st = vcall(c, H_HANGUP, &call, NULL, NULL, NULL);
	check(st == RPC_CANTRECV, "server disconnects: %s", clnt_sperrno(st));
	memset(&call, 0, sizeof(call));
	call.prog = BLOB_PROG;
	check(wn_rpcrdma_clnt_start(c, &call) == -ENOTCONN, "no call starts on a lost connection");
	wn_rpcrdma_clnt_destroy(c);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"attack", required_argument, NULL, 'a'},
		{"hostile", required_argument, NULL, 's'},
		{"victim", required_argument, NULL, 'v'},
		{"port", required_argument, NULL, 'p'},
		{NULL, 0, NULL, 0},
	};
	const char *addr = NULL;
	int opt, mode = 0;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (opt == 'p') {
			port = (uint16_t)atoi(optarg);
			continue;
		}
		if (opt == '?')
			return 2;
		mode = opt;
		addr = optarg;
	}
	if (addr == NULL) {
		fprintf(stderr, "usage: rpc_badpeer --attack|--hostile|--victim ADDR [--port N]\n");
		return 2;
	}
	if (mode == 'a') {
		struct ep e = {0};

		if (ep_connect(&e, addr) != 0) {
			check(false, "connect to %s", addr);
			return 1;
		}
		attack_headers(&e);
		ep_close(&e);
		attack_rdma(&e, addr);
	} else if (mode == 's') {
		hostile(addr);
	} else {
		victim(addr);
	}
	printf("%s: %d failure(s)\n", failures == 0 ? "PASS" : "FAIL", failures);
	return failures == 0 ? 0 : 1;
}
