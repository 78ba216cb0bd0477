/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rnic_it: one end of an iWARP integration case between two warpnicd instances, written
 * against the real rdma-core headers (verbs + rdma_cm) and run on warpnic's shims.
 *
 *   rnic_it --server [--port P] --oob PATH --case NAME [options]
 *   rnic_it --client ADDR [--port P] --oob PATH --case NAME [options]
 *
 * The two processes run on the same host, each talking to its own warpnicd (WARPNIC_CTL).
 * They agree on steps and exchange buffer addresses and rkeys over a unix socket (--oob),
 * the way perftest uses a TCP side channel, so that every byte on the iWARP connection
 * belongs to the operation under test. Each side checks what it can see itself (data
 * placed into its memory, completions, CM events) and exits 0 only if every check held;
 * the first failed check is printed with "FAIL:" and the process exits 1. With --json FILE
 * it also writes its counters there as one JSON object, pass or fail (rnic.py's verdicts
 * read them): completions by status, the vendor_err of the last error completion (RFC 5040
 * layer << 12 | etype << 8 | code for a Terminate), octets checked against their pattern,
 * CM events by name, async events by name ("async": QP_FATAL, ...).
 *
 * Cases (both sides run the same NAME):
 *   basic     Send, Write, Write with Immediate, Read in both directions, a few sizes
 *             (--small: up to 20 KB, for captured runs)
 *   ops       every RDMAP operation over a 1 B..1 MiB sweep, scatter/gather, inline,
 *             zero-length, Send with Solicited Event (CQ armed solicited-only), Send with
 *             Immediate (one receive each: IBV_WC_RECV + IBV_WC_WITH_IMM, the immediate,
 *             the Send's length; "send_imm_checked" in the server's counters)
 *   atomics   RFC 7306 Fetch-and-Add and Compare-and-Swap
 *   send_inv  Send with Invalidate of a region's STag (a plain MR cannot be invalidated:
 *             the responder must Terminate, RFC 5040 §5.3)
 *   mw        memory windows (RFC 5040 §2.1, RFC 5042 §4): a type 1 window bound with
 *             ibv_bind_mw and a type 2 window bound with IBV_WR_BIND_MW serve the peer's
 *             Writes and Reads inside their ranges only; the peer's Send with Invalidate
 *             invalidates the type 2 window (WITH_INV completion, the rkey given back);
 *             rebinding it, LOCAL_INV, and the peer's Write with the invalidated STag is
 *             answered with a Terminate, memory untouched; ibv_dereg_mr of an MR with a
 *             bound window is refused (EBUSY)
 *   frmr      fast-register MR (wnv.h): fast-registered at a TO inside its backing, Written
 *             and Read by the peer, invalidated by the peer's Send with Invalidate,
 *             fast-registered again zero-based and read-only, invalidated locally: the
 *             peer's Read with that STag is answered with a Terminate
 *   ordneg    RFC 6581 IRD/ORD: values seen in CONNECT_REQUEST / ESTABLISHED / query_qp,
 *             then many outstanding Reads throttled by ORD (never failed)
 *   viol      remote access violation (--viol rights|bounds|stag|read): the requester's
 *             QP errors, the target memory is untouched; the target gets the async event
 *             IBV_EVENT_QP_ACCESS_ERR, the requester IBV_EVENT_QP_FATAL
 *   flush     disconnect: posted receives complete with WR_FLUSH_ERR on both sides
 *   flush_late  flush, then a Send and a receive posted to the QP in Error: flushed or
 *             refused, never left pending
 *   bulk      MiB-scale Write/Read/Send with verification (--mib N)
 *   xfer      the fault matrix's transfer (--mib N, --ops LIST, --bound S): for each of
 *             write, read, send, atomic (default all, in that order) the client moves N MiB
 *             (atomics: N x 256 operations) to or from the server; each side takes a
 *             checksum of what it sent or received and they must agree, the data is checked
 *             octet for octet against its pattern, and each operation must finish within S
 *             seconds (default 60 + 2 x N); with --hook CMD the client runs CMD (system(3))
 *             once an eighth of the Writes have completed, before posting the rest (the
 *             link flap of the matrix happens there)
 *   stream    client: Write/Read forever (killed by the driver); server: see "kill"
 *   kill      server: first connection's client is killed (DISCONNECTED + flush
 *             expected), then a second client runs "basic" on a fresh connection
 *   srq       shared receive queues: both QPs on an SRQ, the client's Sends land in the
 *             buffers the server posted to its SRQ; its limit armed (ibv_modify_srq) gives
 *             one IBV_EVENT_SRQ_LIMIT_REACHED and is disarmed
 *   limits    exhaustion: Writes and receives posted beyond the queue depths (ENOMEM),
 *             MRs registered until the region table is full; healthy afterwards
 *   refused   the connection must fail (client: error event, receive flushed; server:
 *             no CONNECT_REQUEST); --closed: the client connects to a port nobody listens
 *             on (the server's port + 1)
 *   crc       corruption below TCP (run with --hook arming B's fault injector to mangle
 *             the next segment, rnic.py's @mangle): the client Writes two regions, Reads
 *             one octet back (so that nothing of theirs is unacknowledged), runs the hook,
 *             then Writes the rest and a Send; the first FPDU of the third Write arrives
 *             with a good TCP checksum and a bad MPA CRC. The server's RNIC must place none
 *             of it nor anything after it (its region: the first two Writes' pattern, then
 *             the guard, octet for octet), and both applications must see the error: the
 *             connection DISCONNECTED, posted receives flushed, the client's Writes that
 *             had not gone out flushed, the async event IBV_EVENT_QP_FATAL on both QPs.
 *             rnic.py checks the Terminate's cause (LLP / MPA / CRC error, RFC 5044
 *             §8) from telemetry
 *
 * With --ib the QPs are connected the way InfiniBand programs connect them, without
 * rdma_cm: each side creates its QP with ibv_create_qp, moves it to INIT, sends the peer its
 * QP number, PSN and GID over the oob channel and moves it to RTR (the peer's GID and QP
 * number) and RTS; warpnicd makes the connection (wn_cm.h). basic, ops, atomics, srq, bulk
 * and xfer run that way, and these cases need it:
 *   ib_early  work posted before the connection is up waits for it, whichever end
 *             connects: first the client (the end that waits for the peer's request) posts
 *             Sends right after its RTS and the server reaches RTR only then; then the
 *             server (the end that connects) does, and the client reaches RTR only once its
 *             warpnicd holds the server's request (--tel: ib_held)
 *   ib_never  a peer that never reaches RTR: the client's QP (a responder toward A's first
 *             address, an initiator toward its second, --ib-gid 1) has Sends and receives
 *             posted; its first Send completes with IBV_WC_RETRY_EXC_ERR after the retry
 *             budget (--ib-timeout, --ib-retry), the rest are flushed, the QP is in Error
 *   ib_crossed  both ends connect: the server uses its first address and tells the client
 *             its second (--ib-gid 1); basic's data then goes over the one connection left
 *   ib_viol   InfiniBand RC completions: a Write without the remote right completes with
 *             IBV_WC_REM_ACCESS_ERR (the cause in vendor_err), the next one is flushed
 *
 * --ib-gid N: the server's GID index it tells the client (its own connection uses index 0).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "wnv.h"

#define DEPTH       256  /* SQ and RQ depth */
#define CQ_DEPTH    1024
#define MAX_SGE     4
#define MAX_INLINE  128
#define WAIT_MS     20000 /* longest wait for one completion or event */
#define MAX_REGIONS 64

#define RTE_MIN_SZ(a, b) ((a) < (b) ? (a) : (b))
#define RTE_MAX_SZ(a, b) ((a) > (b) ? (a) : (b))
#define RTE_DIM_SZ(a)    (sizeof(a) / sizeof((a)[0]))

/* Access of a test target region. */
#define ACC_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* ---------------------------------------------------------------- options, state */

struct opts {
	bool server;
	const char *addr;
	uint16_t port;
	const char *oob;
	const char *cs;
	const char *viol;
	const char *tel;   /* telemetry socket of this side's warpnicd, or NULL */
	const char *json;  /* counters written here at exit, or NULL */
	uint32_t c_ird, c_ord, s_ird, s_ord;
	uint32_t mib;
	uint32_t reads;    /* ordneg: outstanding Reads posted at once */
	bool small;        /* basic: sizes up to 20 KB */
	bool closed;       /* refused: the client connects to a closed port */
	const char *ops;   /* xfer: comma-separated operations */
	const char *hook;  /* xfer: command run an eighth into the Writes (client) */
	uint32_t bound;    /* xfer: seconds each operation may take (0: 60 + 2 x mib) */
	const char *rnr;   /* rnr: "wait" (receives come late), "never" (none at all),
			    * "closed" (none, and the sender disconnects) or "stopped" (a few,
			    * never polled, and the sender disconnects behind a full window) */
	bool ib;           /* connect InfiniBand-style (no rdma_cm) */
	int ib_gid;        /* server: the GID index it tells the client */
	uint8_t ib_timeout, ib_retry; /* the QPs' local ACK timeout and retry count */
};

/* A registered buffer. */
struct buf {
	uint8_t *p;
	size_t len;
	struct ibv_mr *mr;
};

/* One RDMA connection and its verbs objects. */
struct conn {
	struct rdma_cm_id *id;        /* NULL with --ib */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *rch; /* completion channel of the receive CQ */
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct rdma_conn_param seen;  /* CONNECT_REQUEST (server) / ESTABLISHED (client) */
	unsigned int cq_events;
	struct buf *pre;              /* receive buffer posted before the accept/connect */
	struct ibv_srq *srq;          /* case srq: the QP's receives come from it */
};

/* A remote region as the peer announced it. */
struct rbuf {
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
};

static struct opts o = {
	.port = 7471, .c_ird = 16, .c_ord = 16, .s_ird = 16, .s_ord = 16, .mib = 4, .reads = 48,
	.rnr = "wait", .ib_timeout = 18, .ib_retry = 7,
};
static const char *role = "?";

/* What this side saw, for --json. */
static struct {
	bool passed;
	uint64_t wc_success, wc_flushed, wc_error;
	uint32_t last_vendor_err;     /* of the last completion in error (not flushed) */
	uint64_t octets_checked;
	uint64_t send_imm_checked;    /* Send with Immediate receives verified (ops) */
	unsigned int cm_events[RDMA_CM_EVENT_TIMEWAIT_EXIT + 1];
	unsigned int async[IBV_EVENT_WQ_FATAL + 1]; /* async events by type */
	uint32_t qpn, peer_qpn;       /* --ib: the QP numbers of the last connection */
	uint64_t retry_exc;           /* IBV_WC_RETRY_EXC_ERR completions */
	struct {
		const char *op;
		uint64_t octets;  /* moved (atomics: operand octets) and verified */
		uint64_t ops;     /* work requests */
		uint64_t ms;      /* from the first post to the last check */
		uint64_t sum;     /* checksum both ends agreed on */
	} xfer[4];
	unsigned int nxfer;
} seen;
static struct rdma_event_channel *ec;
static struct rdma_cm_id *listen_id;
static int oob_lfd = -1, oob_fd = -1;
static int oob_wait_ms = 45000; /* longest wait for the peer's next message */
static int wc_wait_ms = WAIT_MS; /* longest wait for one completion */

static void __attribute__((noreturn, format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rnic_it %s (%s): FAIL: ", role, o.cs != NULL ? o.cs : "-");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static void __attribute__((format(printf, 1, 2)))
note(const char *fmt, ...)
{
	va_list ap;

	printf("rnic_it %s: ", role);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void __attribute__((noreturn, format(printf, 3, 4)))
fail_at(int line, const char *expr, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rnic_it %s (%s): FAIL: line %d: %s", role, o.cs != NULL ? o.cs : "-",
		line, expr);
	if (fmt[1] != '\0') { /* fmt is "|" followed by the caller's format */
		fprintf(stderr, ": ");
		va_start(ap, fmt);
		vfprintf(stderr, fmt + 1, ap);
		va_end(ap);
	}
	fprintf(stderr, "\n");
	exit(1);
}

/* CHECK(cond) or CHECK(cond, fmt, ...): fail with the line, the condition and the message */
#define CHECK(c, ...)                                                                       \
	do {                                                                                \
		if (!(c))                                                                   \
			fail_at(__LINE__, #c, "|" __VA_ARGS__);                             \
	} while (0)

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void
nap_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

/* ---------------------------------------------------------------- data patterns */

/* Octet @p i of pattern @p seed: position-dependent, so misplaced data is caught. */
static inline uint8_t
pat(uint32_t seed, uint64_t i)
{
	uint64_t x = i * 0x9e3779b97f4a7c15ull ^ ((uint64_t)seed << 32 | seed);

	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return (uint8_t)x;
}

/* p[k] = pat(seed, base + k) */
static void
pat_fill(uint8_t *p, size_t n, uint32_t seed, uint64_t base)
{
	for (size_t k = 0; k < n; k++)
		p[k] = pat(seed, base + k);
}

static void
pat_check(const uint8_t *p, size_t n, uint32_t seed, uint64_t base, const char *what)
{
	size_t bad = 0, first = 0;

	for (size_t k = 0; k < n; k++)
		if (p[k] != pat(seed, base + k)) {
			if (bad++ == 0)
				first = k;
		}
	seen.octets_checked += n;
	if (bad != 0)
		fail("%s: %zu of %zu octets differ, first at offset %zu (got 0x%02x, want 0x%02x)",
		     what, bad, n, first, p[first], pat(seed, base + first));
}

/* Regions of a buffer, each followed by a guard gap; the gaps must stay untouched. */
struct layout {
	size_t n;
	size_t off[MAX_REGIONS];
	size_t len[MAX_REGIONS];
	size_t total;
};

static void
layout_make(struct layout *l, const size_t *sizes, size_t n)
{
	size_t off = 64;

	CHECK(n <= MAX_REGIONS);
	l->n = n;
	for (size_t i = 0; i < n; i++) {
		l->off[i] = off;
		l->len[i] = sizes[i];
		off += (sizes[i] + 63) / 64 * 64 + 64;
	}
	l->total = off;
}

/* Every octet of @p p outside the regions still holds pat(guard, offset). */
static void
layout_check_gaps(const uint8_t *p, const struct layout *l, uint32_t guard, const char *what)
{
	size_t at = 0;
	char w[160];

	for (size_t i = 0; i <= l->n; i++) {
		size_t end = i < l->n ? l->off[i] : l->total;

		snprintf(w, sizeof(w), "%s: guard before region %zu", what, i);
		pat_check(p + at, end - at, guard, at, w);
		if (i < l->n)
			at = l->off[i] + l->len[i];
	}
}

/* ---------------------------------------------------------------- out-of-band channel */

enum {
	T_HELLO = 1, T_LISTENING, T_MR, T_READY, T_DONE, T_GO, T_ARMED, T_SENT, T_RESULT, T_IBDEST,
};

struct oob_msg {
	uint32_t tag;
	uint32_t arg;
	uint64_t addr;
	uint32_t rkey;
	uint32_t len;
	uint64_t val;
};

static void
oob_put(uint32_t tag, uint32_t arg, const struct rbuf *r, uint64_t val)
{
	struct oob_msg m = { .tag = tag, .arg = arg, .val = val };

	if (r != NULL) {
		m.addr = r->addr;
		m.rkey = r->rkey;
		m.len = r->len;
	}
	if (write(oob_fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
		fail("oob write (tag %u): %s", tag, strerror(errno));
}

static struct oob_msg
oob_get(uint32_t tag)
{
	struct pollfd pf = { .fd = oob_fd, .events = POLLIN };
	struct oob_msg m;
	size_t got = 0;

	while (got < sizeof(m)) {
		ssize_t n;

		if (poll(&pf, 1, oob_wait_ms) != 1)
			fail("oob: no message (waiting for tag %u)", tag);
		n = read(oob_fd, (uint8_t *)&m + got, sizeof(m) - got);
		if (n <= 0)
			fail("oob: peer gone (waiting for tag %u)", tag);
		got += (size_t)n;
	}
	if (m.tag != tag)
		fail("oob: got tag %u, want %u", m.tag, tag);
	return m;
}

static struct rbuf
oob_get_mr(void)
{
	struct oob_msg m = oob_get(T_MR);

	return (struct rbuf){ .addr = m.addr, .rkey = m.rkey, .len = m.len };
}

static void
oob_put_mr(const struct buf *b)
{
	struct rbuf r = { (uintptr_t)b->p, b->mr->rkey, (uint32_t)b->len };

	oob_put(T_MR, 0, &r, 0);
}

static void
oob_sockaddr(struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	CHECK(strlen(o.oob) < sizeof(sa->sun_path), "oob path too long");
	strcpy(sa->sun_path, o.oob);
}

static void
oob_listen(void)
{
	struct sockaddr_un sa;

	oob_sockaddr(&sa);
	unlink(o.oob);
	oob_lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(oob_lfd >= 0);
	CHECK(bind(oob_lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "%s", strerror(errno));
	CHECK(listen(oob_lfd, 4) == 0);
}

static void
oob_accept(void)
{
	struct pollfd pf = { .fd = oob_lfd, .events = POLLIN };

	if (oob_fd >= 0)
		close(oob_fd);
	if (poll(&pf, 1, 45000) != 1)
		fail("oob: no client connected");
	oob_fd = accept(oob_lfd, NULL, NULL);
	CHECK(oob_fd >= 0);
	oob_get(T_HELLO);
}

static void
oob_connect(void)
{
	struct sockaddr_un sa;
	uint64_t end = now_ms() + 30000;

	oob_sockaddr(&sa);
	for (;;) {
		oob_fd = socket(AF_UNIX, SOCK_STREAM, 0);
		CHECK(oob_fd >= 0);
		if (connect(oob_fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			break;
		close(oob_fd);
		if (now_ms() > end)
			fail("oob: cannot connect to %s: %s", o.oob, strerror(errno));
		nap_us(50000);
	}
	oob_put(T_HELLO, 0, NULL, 0);
}

/* ---------------------------------------------------------------- CM */

static void
count_cm_event(enum rdma_cm_event_type e)
{
	if ((unsigned int)e < sizeof(seen.cm_events) / sizeof(seen.cm_events[0]))
		seen.cm_events[e]++;
}

/* Wait for the next CM event; it must be @p want. The connection parameters are kept. */
static struct rdma_cm_id *
cm_wait(enum rdma_cm_event_type want, struct rdma_conn_param *seen)
{
	struct pollfd pf = { .fd = ec->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;

	if (poll(&pf, 1, WAIT_MS) != 1)
		fail("no CM event within %d ms (want %s)", WAIT_MS, rdma_event_str(want));
	CHECK(rdma_get_cm_event(ec, &ev) == 0, "%s", strerror(errno));
	count_cm_event(ev->event);
	if (ev->event != want)
		fail("CM event %s (status %d), want %s", rdma_event_str(ev->event), ev->status,
		     rdma_event_str(want));
	if (seen != NULL) {
		*seen = ev->param.conn;
		seen->private_data = NULL;
	}
	id = ev->id;
	rdma_ack_cm_event(ev);
	return id;
}

/* ---------------------------------------------------------------- async events */

static const char *
async_name(unsigned int e)
{
	switch (e) {
	case IBV_EVENT_CQ_ERR: return "CQ_ERR";
	case IBV_EVENT_QP_FATAL: return "QP_FATAL";
	case IBV_EVENT_QP_REQ_ERR: return "QP_REQ_ERR";
	case IBV_EVENT_QP_ACCESS_ERR: return "QP_ACCESS_ERR";
	case IBV_EVENT_SRQ_ERR: return "SRQ_ERR";
	case IBV_EVENT_SRQ_LIMIT_REACHED: return "SRQ_LIMIT_REACHED";
	default: return "OTHER";
	}
}

/*
 * The next async event of the context (ibv_get_async_event, its async_fd polled as a program
 * would) within WAIT_MS: it must be @p type, about @p qp or @p srq; counted for --json.
 */
static void
async_expect(struct ibv_context *ctx, enum ibv_event_type type, struct ibv_qp *qp,
	     struct ibv_srq *srq, const char *what)
{
	struct pollfd pf = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	if (poll(&pf, 1, WAIT_MS) != 1)
		fail("%s: no async event within %d ms (want %s)", what, WAIT_MS, async_name(type));
	CHECK(ibv_get_async_event(ctx, &ev) == 0, "%s: ibv_get_async_event: %s", what,
	      strerror(errno));
	if ((unsigned int)ev.event_type < RTE_DIM_SZ(seen.async))
		seen.async[ev.event_type]++;
	if (ev.event_type != type)
		fail("%s: async event %s, want %s", what, async_name(ev.event_type),
		     async_name(type));
	if (qp != NULL)
		CHECK(ev.element.qp == qp, "%s: the event names another QP", what);
	if (srq != NULL)
		CHECK(ev.element.srq == srq, "%s: the event names another SRQ", what);
	ibv_ack_async_event(&ev);
	note("%s: async event %s", what, async_name(type));
}

/* ---------------------------------------------------------------- verbs helpers */

static void
buf_alloc(struct conn *c, struct buf *b, size_t len, int access)
{
	size_t al = (len + 4095) / 4096 * 4096;

	b->len = len;
	b->p = aligned_alloc(4096, al);
	CHECK(b->p != NULL);
	memset(b->p, 0, al);
	b->mr = ibv_reg_mr(c->pd, b->p, len, access);
	CHECK(b->mr != NULL, "ibv_reg_mr(%zu): %s", len, strerror(errno));
}

static void
buf_free(struct buf *b)
{
	if (b->mr != NULL)
		CHECK(ibv_dereg_mr(b->mr) == 0);
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* The connection's PD, CQs and QP, on rdma_cm id @p id, or (--ib) on context @p ctx alone. */
static void
conn_res(struct conn *c, struct rdma_cm_id *id, struct ibv_context *ctx)
{
	struct ibv_qp_init_attr qa;

	c->id = id;
	c->ctx = id != NULL ? id->verbs : ctx;
	c->pd = ibv_alloc_pd(c->ctx);
	CHECK(c->pd != NULL);
	c->rch = ibv_create_comp_channel(c->ctx);
	CHECK(c->rch != NULL);
	c->scq = ibv_create_cq(c->ctx, CQ_DEPTH, c, NULL, 0);
	c->rcq = ibv_create_cq(c->ctx, CQ_DEPTH, c, c->rch, 0);
	CHECK(c->scq != NULL && c->rcq != NULL, "%s", strerror(errno));
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = c->scq;
	qa.recv_cq = c->rcq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = DEPTH;
	qa.cap.max_recv_wr = DEPTH;
	qa.cap.max_send_sge = MAX_SGE;
	qa.cap.max_recv_sge = MAX_SGE;
	qa.cap.max_inline_data = MAX_INLINE;
	if (strcmp(o.cs, "srq") == 0 || strcmp(o.cs, "rnr_srq") == 0) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = DEPTH, .max_sge = 1 } };

		c->srq = ibv_create_srq(c->pd, &sa);
		CHECK(c->srq != NULL, "ibv_create_srq: %s", strerror(errno));
		qa.srq = c->srq;
		qa.cap.max_recv_wr = 0;
		qa.cap.max_recv_sge = 0;
	}
	if (id != NULL) {
		CHECK(rdma_create_qp(id, c->pd, &qa) == 0, "%s", strerror(errno));
		c->qp = id->qp;
	} else {
		c->qp = ibv_create_qp(c->pd, &qa);
		CHECK(c->qp != NULL, "ibv_create_qp: %s", strerror(errno));
	}
	CHECK(qa.cap.max_inline_data >= MAX_INLINE);
}

static void buf_free(struct buf *b);

static void
conn_free(struct conn *c)
{
	int ret;

	if (c->pre != NULL) {
		buf_free(c->pre);
		free(c->pre);
	}
	if (c->cq_events != 0)
		ibv_ack_cq_events(c->rcq, c->cq_events);
	if (c->id != NULL)
		rdma_destroy_qp(c->id);
	else
		CHECK(ibv_destroy_qp(c->qp) == 0, "ibv_destroy_qp");
	if (c->srq != NULL)
		CHECK(ibv_destroy_srq(c->srq) == 0, "ibv_destroy_srq");
	CHECK(ibv_destroy_cq(c->scq) == 0);
	CHECK(ibv_destroy_cq(c->rcq) == 0);
	CHECK(ibv_destroy_comp_channel(c->rch) == 0);
	ret = ibv_dealloc_pd(c->pd);
	CHECK(ret == 0, "%s", strerror(ret));
	if (c->id != NULL)
		CHECK(rdma_destroy_id(c->id) == 0);
	memset(c, 0, sizeof(*c));
}

static void
post_recv_sges(struct conn *c, uint64_t wr_id, struct ibv_sge *sg, int n)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sg, .num_sge = n }, *bad;
	int ret = ibv_post_recv(c->qp, &wr, &bad);

	CHECK(ret == 0, "ibv_post_recv: %s", strerror(ret));
}

static void
post_recv(struct conn *c, uint64_t wr_id, struct buf *b, size_t off, size_t len)
{
	struct ibv_sge sg = { 0, 0, 0 };

	if (len != 0)
		sg = (struct ibv_sge){ (uintptr_t)(b->p + off), (uint32_t)len, b->mr->lkey };

	post_recv_sges(c, wr_id, &sg, len != 0 ? 1 : 0);
}

/* One send-queue WQE: opcode with (remote) target and local SGEs. */
static int
post_wr(struct conn *c, enum ibv_wr_opcode op, uint64_t wr_id, struct ibv_sge *sg, int n,
	unsigned int flags, uint64_t raddr, uint32_t rkey, uint32_t ex)
{
	struct ibv_send_wr wr, *bad;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = sg;
	wr.num_sge = n;
	wr.send_flags = flags;
	if (op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = ex;
	else if (op == IBV_WR_RDMA_WRITE_WITH_IMM || op == IBV_WR_SEND_WITH_IMM)
		wr.imm_data = htonl(ex);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(c->qp, &wr, &bad);
}

static void
post1(struct conn *c, enum ibv_wr_opcode op, uint64_t wr_id, struct buf *b, size_t off,
      size_t len, uint64_t raddr, uint32_t rkey, uint32_t ex)
{
	struct ibv_sge sg = { (uintptr_t)(b->p + off), (uint32_t)len, b->mr->lkey };
	int ret = post_wr(c, op, wr_id, &sg, len != 0 ? 1 : 0, IBV_SEND_SIGNALED, raddr, rkey,
			  ex);

	CHECK(ret == 0, "ibv_post_send(op %d, wr_id %" PRIu64 "): %s", op, wr_id, strerror(ret));
}

static void
count_wc(const struct ibv_wc *wc)
{
	if (wc->status == IBV_WC_SUCCESS) {
		seen.wc_success++;
	} else if (wc->status == IBV_WC_WR_FLUSH_ERR) {
		seen.wc_flushed++;
	} else if (wc->status == IBV_WC_RETRY_EXC_ERR) {
		seen.retry_exc++;
	} else {
		seen.wc_error++;
		seen.last_vendor_err = wc->vendor_err;
	}
}

/* One completion within @p ms; false if none came. */
static bool
wc_try(struct ibv_cq *cq, struct ibv_wc *wc, int ms, const char *what)
{
	uint64_t end = now_ms() + (uint64_t)ms;
	unsigned int idle = 0;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0) {
		if (++idle > 64) {
			if (now_ms() > end)
				return false;
			nap_us(20);
		}
	}
	CHECK(n == 1, "ibv_poll_cq returned %d (%s)", n, what);
	count_wc(wc);
	return true;
}

static void
wc_get(struct ibv_cq *cq, struct ibv_wc *wc, const char *what)
{
	if (!wc_try(cq, wc, wc_wait_ms, what))
		fail("%s: no completion within %d ms", what, wc_wait_ms);
}

static const char *
wc_str(enum ibv_wc_status s)
{
	return ibv_wc_status_str(s);
}

/* The next completion must be @p wr_id, successful, with opcode @p op; returns it. */
static struct ibv_wc
wc_expect(struct ibv_cq *cq, uint64_t wr_id, enum ibv_wc_opcode op, const char *what)
{
	struct ibv_wc wc;

	wc_get(cq, &wc, what);
	if (wc.status != IBV_WC_SUCCESS)
		fail("%s: wr_id %" PRIu64 " completed with %s (vendor_err 0x%x)", what, wc.wr_id,
		     wc_str(wc.status), wc.vendor_err);
	if (wc.wr_id != wr_id)
		fail("%s: completion for wr_id %" PRIu64 ", want %" PRIu64, what, wc.wr_id, wr_id);
	if (wc.opcode != op)
		fail("%s: wr_id %" PRIu64 " opcode %d, want %d", what, wc.wr_id, wc.opcode, op);
	return wc;
}

/* Nothing more may complete on @p cq now. */
static void
wc_none(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc;

	if (ibv_poll_cq(cq, 1, &wc) != 0) {
		count_wc(&wc);
		fail("%s: unexpected completion wr_id %" PRIu64 " status %s opcode %d", what,
		     wc.wr_id, wc_str(wc.status), wc.opcode);
	}
}

/* ---------------------------------------------------------------- connection setup */

static void
server_listen(void)
{
	struct sockaddr_in sa;

	ec = rdma_create_event_channel();
	CHECK(ec != NULL, "%s (is WARPNIC_CTL right?)", strerror(errno));
	CHECK(rdma_create_id(ec, &listen_id, NULL, RDMA_PS_TCP) == 0, "%s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(o.port);
	CHECK(rdma_bind_addr(listen_id, (struct sockaddr *)&sa) == 0, "%s", strerror(errno));
	CHECK(rdma_listen(listen_id, 8) == 0, "%s", strerror(errno));
}

/* Server: take the next connection; @p prepost posts receives before the accept. */
static void
server_accept(struct conn *c, void (*prepost)(struct conn *))
{
	struct rdma_conn_param p;
	struct rdma_cm_id *id;

	oob_put(T_LISTENING, 0, NULL, 0);
	memset(c, 0, sizeof(*c));
	id = cm_wait(RDMA_CM_EVENT_CONNECT_REQUEST, &c->seen);
	conn_res(c, id, NULL);
	if (prepost != NULL)
		prepost(c);
	memset(&p, 0, sizeof(p));
	p.responder_resources = (uint8_t)o.s_ird;
	p.initiator_depth = (uint8_t)o.s_ord;
	CHECK(rdma_accept(id, &p) == 0, "%s", strerror(errno));
	cm_wait(RDMA_CM_EVENT_ESTABLISHED, NULL);
}

static void
client_connect(struct conn *c, void (*prepost)(struct conn *))
{
	struct sockaddr_in sa;
	struct rdma_conn_param p;
	struct rdma_cm_id *id;

	oob_get(T_LISTENING);
	memset(c, 0, sizeof(*c));
	ec = ec != NULL ? ec : rdma_create_event_channel();
	CHECK(ec != NULL, "%s (is WARPNIC_CTL right?)", strerror(errno));
	CHECK(rdma_create_id(ec, &id, NULL, RDMA_PS_TCP) == 0, "%s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(o.port);
	CHECK(inet_pton(AF_INET, o.addr, &sa.sin_addr) == 1, "bad address %s", o.addr);
	CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa, 5000) == 0, "%s",
	      strerror(errno));
	cm_wait(RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
	CHECK(rdma_resolve_route(id, 5000) == 0, "%s", strerror(errno));
	cm_wait(RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
	conn_res(c, id, NULL);
	if (prepost != NULL)
		prepost(c);
	memset(&p, 0, sizeof(p));
	p.responder_resources = (uint8_t)o.c_ird;
	p.initiator_depth = (uint8_t)o.c_ord;
	CHECK(rdma_connect(id, &p) == 0, "%s", strerror(errno));
	cm_wait(RDMA_CM_EVENT_ESTABLISHED, &c->seen);
}

/* ---------------------------------------------------------------- InfiniBand-style */

static struct ibv_context *ib_ctx; /* --ib: the device, opened once */
/* the server's first QP number is spent on a spare QP, so that the two ends' differ */
static struct {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
} ib_spare;

/* What each end tells the other: QP number, PSN and GID (an address, IPv4-mapped). */
struct ib_dest {
	uint32_t qpn, psn;
	union ibv_gid gid;
};

static struct ibv_context *
ib_open(void)
{
	struct ibv_device **l;
	int n;

	if (ib_ctx != NULL)
		return ib_ctx;
	l = ibv_get_device_list(&n);
	CHECK(l != NULL && n > 0, "no verbs device (is WARPNIC_CTL right?)");
	ib_ctx = ibv_open_device(l[0]);
	CHECK(ib_ctx != NULL, "ibv_open_device: %s", strerror(errno));
	ibv_free_device_list(l);
	if (o.server) {
		struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
					       .cap = { .max_send_wr = 1, .max_recv_wr = 1 } };

		ib_spare.pd = ibv_alloc_pd(ib_ctx);
		ib_spare.cq = ib_spare.pd != NULL ? ibv_create_cq(ib_ctx, 4, NULL, NULL, 0) : NULL;
		CHECK(ib_spare.cq != NULL);
		qa.send_cq = qa.recv_cq = ib_spare.cq;
		ib_spare.qp = ibv_create_qp(ib_spare.pd, &qa);
		CHECK(ib_spare.qp != NULL, "spare QP: %s", strerror(errno));
	}
	return ib_ctx;
}

static void
ib_close(void)
{
	if (ib_spare.qp != NULL) {
		CHECK(ibv_destroy_qp(ib_spare.qp) == 0);
		CHECK(ibv_destroy_cq(ib_spare.cq) == 0);
		CHECK(ibv_dealloc_pd(ib_spare.pd) == 0);
	}
	CHECK(ibv_close_device(ib_ctx) == 0);
}

/* The QP from RESET to INIT, all remote rights (the cases check them on the MRs). */
static void
ib_init(struct conn *c)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = ACC_ALL | IBV_ACCESS_REMOTE_ATOMIC,
	};

	CHECK(ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					       IBV_QP_ACCESS_FLAGS) == 0, "to INIT");
}

/* Our dest: the QP number, a PSN, the GID at @p gid_index. */
static struct ib_dest
ib_mine(struct conn *c, int gid_index)
{
	struct ib_dest d = { .qpn = c->qp->qp_num, .psn = (uint32_t)rand() & 0xffffff };

	CHECK(ibv_query_gid(c->ctx, 1, gid_index, &d.gid) == 0, "ibv_query_gid %d: %s",
	      gid_index, strerror(errno));
	/* iWARP and RoCEv2 GIDs: an IPv4 address as ::ffff:a.b.c.d */
	CHECK(d.gid.global.subnet_prefix == 0 &&
	      (d.gid.raw[10] == 0xff && d.gid.raw[11] == 0xff), "GID %d is not IPv4-mapped",
	      gid_index);
	seen.qpn = d.qpn;
	return d;
}

static void
ib_send_dest(const struct ib_dest *d)
{
	struct rbuf r;
	uint64_t v;

	memcpy(&r.addr, d->gid.raw, 8);
	memcpy(&r.rkey, d->gid.raw + 8, 4);
	memcpy(&r.len, d->gid.raw + 12, 4);
	v = d->psn;
	oob_put(T_IBDEST, d->qpn, &r, v);
}

static struct ib_dest
ib_recv_dest(void)
{
	struct oob_msg m = oob_get(T_IBDEST);
	struct ib_dest d = { .qpn = m.arg, .psn = (uint32_t)m.val };

	memcpy(d.gid.raw, &m.addr, 8);
	memcpy(d.gid.raw + 8, &m.rkey, 4);
	memcpy(d.gid.raw + 12, &m.len, 4);
	seen.peer_qpn = d.qpn;
	return d;
}

/* INIT → RTR (the peer's GID and QP number) → RTS, as ibv_rc_pingpong does. */
static void
ib_rtr_rts(struct conn *c, const struct ib_dest *me, const struct ib_dest *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer->qpn,
		.rq_psn = peer->psn,
		.max_dest_rd_atomic = (uint8_t)(o.server ? o.s_ird : o.c_ird),
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = peer->gid, .sgid_index = 0, .hop_limit = 1 } },
	};
	struct ibv_qp_init_attr qi;

	CHECK(ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) == 0,
	      "to RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = o.ib_timeout;
	a.retry_cnt = o.ib_retry;
	a.rnr_retry = 7;
	a.sq_psn = me->psn;
	a.max_rd_atomic = (uint8_t)(o.server ? o.s_ord : o.c_ord);
	CHECK(ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					       IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
					       IBV_QP_MAX_QP_RD_ATOMIC) == 0,
	      "to RTS: %s", strerror(errno));
	/* what the program set is what it reads back */
	CHECK(ibv_query_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_DEST_QPN, &qi) == 0);
	CHECK(a.qp_state == IBV_QPS_RTS, "QP state %d after the move to RTS", a.qp_state);
	CHECK(a.dest_qp_num == peer->qpn && a.timeout == o.ib_timeout && a.sq_psn == me->psn &&
	      a.rq_psn == peer->psn && memcmp(&a.ah_attr.grh.dgid, &peer->gid, 16) == 0,
	      "ibv_query_qp does not give back the path");
}

/*
 * The resources and the QP in INIT (@p prepost posts receives there, as InfiniBand programs
 * do before they connect), then the exchange of dests; the server tells the GID --ib-gid.
 */
static struct ib_dest
ib_prepare(struct conn *c, void (*prepost)(struct conn *), struct ib_dest *me)
{
	struct ib_dest peer;

	memset(c, 0, sizeof(*c));
	conn_res(c, NULL, ib_open());
	ib_init(c);
	if (prepost != NULL)
		prepost(c);
	*me = ib_mine(c, 0);
	if (o.server) {
		struct ib_dest told = ib_mine(c, o.ib_gid);

		told.psn = me->psn;
		seen.qpn = me->qpn;
		peer = ib_recv_dest();
		ib_send_dest(&told);
	} else {
		ib_send_dest(me);
		peer = ib_recv_dest();
	}
	return peer;
}

static void
ib_connect(struct conn *c, void (*prepost)(struct conn *))
{
	struct ib_dest me, peer = ib_prepare(c, prepost, &me);

	ib_rtr_rts(c, &me, &peer);
	note("%s: QP %u connected InfiniBand-style to QP %u", role, me.qpn, peer.qpn);
}

static void
conn_up(struct conn *c, void (*prepost)(struct conn *))
{
	if (o.ib)
		ib_connect(c, prepost);
	else if (o.server)
		server_accept(c, prepost);
	else
		client_connect(c, prepost);
}

/* Orderly end: the client disconnects, both sides see DISCONNECTED (--ib: nothing to see). */
static void
conn_down(struct conn *c)
{
	if (o.ib) {
		if (o.server) {
			oob_put(T_DONE, 0, NULL, 0);
		} else {
			oob_get(T_DONE);
		}
		return;
	}
	if (o.server) {
		oob_put(T_DONE, 0, NULL, 0);
		cm_wait(RDMA_CM_EVENT_DISCONNECTED, NULL);
	} else {
		oob_get(T_DONE);
		CHECK(rdma_disconnect(c->id) == 0, "%s", strerror(errno));
		cm_wait(RDMA_CM_EVENT_DISCONNECTED, NULL);
	}
}

/* ---------------------------------------------------------------- data phases */

static const size_t basic_sizes[] = { 1, 100, 1500, 5000, 70001, 262144 };
/* captured runs: still multi-segment, but a capture tshark reads quickly */
static const size_t small_sizes[] = { 1, 100, 1500, 5000, 20001 };
static const size_t sweep_sizes[] = {
	1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 63, 64, 65, 127, 128, 129, 255, 256, 511, 512, 513,
	1023, 1024, 1025, 1430, 1435, 1436, 1437, 1440, 1441, 1448, 1449, 1460, 1500, 2047,
	2048, 2872, 2873, 2880, 2881, 4095, 4096, 4097, 8191, 9000, 16384, 32768, 65535,
	65536, 65537, 131071, 262144, 524287, 1048576,
};

struct sizes {
	const size_t *v;
	size_t n;
};

/*
 * Sends client → server: the server posts one receive per message (wr_id = index) into
 * distinct regions, the client sends pattern (seed 0x100 + i) messages, all signaled.
 */
static void
phase_send(struct conn *c, const struct sizes *sz)
{
	struct layout l;
	struct buf b;
	char w[96];

	layout_make(&l, sz->v, sz->n);
	buf_alloc(c, &b, l.total, ACC_ALL);
	if (o.server) {
		pat_fill(b.p, l.total, 0xee, 0);
		for (size_t i = 0; i < l.n; i++)
			post_recv(c, i, &b, l.off[i], l.len[i]);
		oob_put(T_READY, 0, NULL, 0);
		for (size_t i = 0; i < l.n; i++) {
			struct ibv_wc wc;

			snprintf(w, sizeof(w), "Send #%zu (%zu octets)", i, l.len[i]);
			wc = wc_expect(c->rcq, i, IBV_WC_RECV, w);
			if (wc.byte_len != l.len[i])
				fail("%s: byte_len %u", w, wc.byte_len);
			if (wc.wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV))
				fail("%s: wc_flags 0x%x", w, wc.wc_flags);
			pat_check(b.p + l.off[i], l.len[i], 0x100 + (uint32_t)i, 0, w);
		}
		layout_check_gaps(b.p, &l, 0xee, "Send receive buffer");
		wc_none(c->rcq, "after the Sends");
		note("Send: %zu messages verified", l.n);
	} else {
		for (size_t i = 0; i < l.n; i++)
			pat_fill(b.p + l.off[i], l.len[i], 0x100 + (uint32_t)i, 0);
		oob_get(T_READY);
		for (size_t i = 0; i < l.n; i++)
			post1(c, IBV_WR_SEND, i, &b, l.off[i], l.len[i], 0, 0, 0);
		for (size_t i = 0; i < l.n; i++) {
			snprintf(w, sizeof(w), "Send #%zu (%zu octets)", i, l.len[i]);
			wc_expect(c->scq, i, IBV_WC_SEND, w);
		}
	}
	buf_free(&b);
}

/*
 * Writes from @p writer into the peer's regions (pattern 0x200 + i), then a Write with
 * Immediate as the last one: its receive completion tells the target that every Write
 * before it was placed (in-order delivery).
 */
static void
phase_write(struct conn *c, const struct sizes *sz, bool writer)
{
	struct layout l;
	struct buf b;
	char w[96];
	const uint32_t imm = 0xc0ffee01;

	layout_make(&l, sz->v, sz->n);
	buf_alloc(c, &b, l.total, ACC_ALL);
	if (!writer) {
		struct ibv_wc wc;
		size_t last = l.n - 1;

		pat_fill(b.p, l.total, 0xee, 0);
		post_recv(c, 1000, &b, 0, 0); /* the immediate consumes a receive, no data */
		oob_put_mr(&b);
		wc = wc_expect(c->rcq, 1000, IBV_WC_RECV_RDMA_WITH_IMM, "Write with Immediate");
		CHECK(wc.wc_flags & IBV_WC_WITH_IMM, "flags 0x%x", wc.wc_flags);
		CHECK(wc.imm_data == htonl(imm), "imm_data 0x%x", ntohl(wc.imm_data));
		CHECK(wc.byte_len == l.len[last], "Write with Immediate byte_len %u, want %zu",
		      wc.byte_len, l.len[last]);
		for (size_t i = 0; i < l.n; i++) {
			snprintf(w, sizeof(w), "Write #%zu (%zu octets) at offset %zu", i, l.len[i],
				 l.off[i]);
			pat_check(b.p + l.off[i], l.len[i], 0x200 + (uint32_t)i, 0, w);
		}
		layout_check_gaps(b.p, &l, 0xee, "Write target");
		oob_put(T_DONE, 0, NULL, 0);
		note("Write: %zu regions verified (last with Immediate Data)", l.n);
	} else {
		struct rbuf r = oob_get_mr();

		CHECK(r.len == l.total);
		for (size_t i = 0; i < l.n; i++)
			pat_fill(b.p + l.off[i], l.len[i], 0x200 + (uint32_t)i, 0);
		for (size_t i = 0; i < l.n; i++)
			post1(c, i + 1 == l.n ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
			      i, &b, l.off[i], l.len[i], r.addr + l.off[i], r.rkey, imm);
		for (size_t i = 0; i < l.n; i++) {
			snprintf(w, sizeof(w), "Write #%zu (%zu octets)", i, l.len[i]);
			wc_expect(c->scq, i, IBV_WC_RDMA_WRITE, w);
		}
		oob_get(T_DONE);
	}
	buf_free(&b);
}

/* Reads by @p reader from the peer's buffer (pat 0x300), source offsets unaligned. */
static void
phase_read(struct conn *c, const struct sizes *sz, bool reader)
{
	struct layout l;
	struct buf b;
	char w[96];

	layout_make(&l, sz->v, sz->n);
	buf_alloc(c, &b, l.total + 64, ACC_ALL);
	if (!reader) {
		pat_fill(b.p, b.len, 0x300, 0);
		oob_put_mr(&b);
		oob_get(T_DONE);
		pat_check(b.p, b.len, 0x300, 0, "Read source after the Reads");
	} else {
		struct rbuf r = oob_get_mr();
		size_t posted = 0, done = 0;
		struct ibv_wc wc;

		pat_fill(b.p, b.len, 0xee, 0);
		/* keep at most DEPTH in flight; the RNIC throttles to ORD itself */
		while (done < l.n) {
			while (posted < l.n && posted - done < DEPTH) {
				size_t src = l.off[posted] + posted % 8;

				post1(c, IBV_WR_RDMA_READ, posted, &b, l.off[posted], l.len[posted],
				      r.addr + src, r.rkey, 0);
				posted++;
			}
			snprintf(w, sizeof(w), "Read #%zu (%zu octets)", done, l.len[done]);
			wc = wc_expect(c->scq, done, IBV_WC_RDMA_READ, w);
			if (wc.byte_len != l.len[done] && wc.byte_len != 0)
				fail("%s: byte_len %u", w, wc.byte_len);
			pat_check(b.p + l.off[done], l.len[done], 0x300, l.off[done] + done % 8, w);
			done++;
		}
		layout_check_gaps(b.p, &l, 0xee, "Read sink");
		oob_put(T_DONE, 0, NULL, 0);
		note("Read: %zu Reads verified", l.n);
	}
	buf_free(&b);
}

/* Data in every direction with @p sz: the connection's common workload. */
static void
run_data(struct conn *c, const struct sizes *sz)
{
	phase_send(c, sz);
	phase_write(c, sz, !o.server);
	phase_read(c, sz, !o.server);
	/* the passive side as requester */
	phase_write(c, sz, o.server);
	phase_read(c, sz, o.server);
}

/* ---------------------------------------------------------------- case: ops extras */

/* Scatter/gather: 3 gather pieces into 4 scatter pieces; inline; zero-length messages. */
static void
phase_sg_inline_zero(struct conn *c)
{
	static const uint32_t gather[3] = { 100, 3000, 7 };
	static const uint32_t scatter[4] = { 50, 2000, 1000, 100 };
	const size_t msg = 3107, inl = MAX_INLINE;
	struct buf b;

	buf_alloc(c, &b, 65536, ACC_ALL);
	if (o.server) {
		struct ibv_sge sg[4];
		uint8_t out[4096];
		size_t at = 0;
		struct ibv_wc wc;

		pat_fill(b.p, b.len, 0xee, 0);
		for (int i = 0; i < 4; i++) {
			sg[i] = (struct ibv_sge){ (uintptr_t)(b.p + 1 + 9000 * (size_t)i),
						  scatter[i], b.mr->lkey };
		}
		post_recv_sges(c, 1, sg, 4);
		post_recv(c, 2, &b, 40000, inl);
		post_recv(c, 3, &b, 50000, 64); /* zero-length Send */
		post_recv(c, 4, &b, 0, 0);      /* zero-length Write with Immediate */
		oob_put_mr(&b);
		wc = wc_expect(c->rcq, 1, IBV_WC_RECV, "gathered Send");
		CHECK(wc.byte_len == msg, "byte_len %u", wc.byte_len);
		for (int i = 0; i < 4; i++) {
			size_t take = msg - at < scatter[i] ? msg - at : scatter[i];
			size_t off = 1 + 9000 * (size_t)i;

			memcpy(out + at, b.p + off, take);
			at += take;
			/* octets of a piece beyond the message, and between pieces: untouched */
			pat_check(b.p + off + take, 9000 - take, 0xee, off + take, "scatter gap");
		}
		pat_check(out, msg, 0x600, 0, "scattered receive");
		wc = wc_expect(c->rcq, 2, IBV_WC_RECV, "inline Send");
		CHECK(wc.byte_len == inl, "byte_len %u", wc.byte_len);
		pat_check(b.p + 40000, inl, 0x601, 0, "inline Send");
		wc = wc_expect(c->rcq, 3, IBV_WC_RECV, "zero-length Send");
		CHECK(wc.byte_len == 0, "byte_len %u", wc.byte_len);
		pat_check(b.p + 50000, 64, 0xee, 50000, "zero-length Send buffer");
		wc = wc_expect(c->rcq, 4, IBV_WC_RECV_RDMA_WITH_IMM, "zero-length Write w/ Imm");
		CHECK(wc.byte_len == 0 && wc.imm_data == htonl(7), "byte_len %u imm 0x%x",
		      wc.byte_len, ntohl(wc.imm_data));
		pat_check(b.p + 60000, 512, 0xee, 60000, "zero-length Write target");
		oob_put(T_DONE, 0, NULL, 0);
		note("scatter/gather, inline, zero-length Send/Write/Read verified");
	} else {
		struct rbuf r = oob_get_mr();
		struct ibv_sge sg[3];
		size_t at = 0;
		int ret;

		for (int i = 0; i < 3; i++) {
			sg[i] = (struct ibv_sge){ (uintptr_t)(b.p + 5 + 7000 * (size_t)i),
						  gather[i], b.mr->lkey };
			pat_fill((uint8_t *)(uintptr_t)sg[i].addr, gather[i], 0x600, at);
			at += gather[i];
		}
		ret = post_wr(c, IBV_WR_SEND, 1, sg, 3, IBV_SEND_SIGNALED, 0, 0, 0);
		CHECK(ret == 0, "%s", strerror(ret));
		/* inline: the source may change as soon as the post returns */
		pat_fill(b.p + 30000, inl, 0x601, 0);
		sg[0] = (struct ibv_sge){ (uintptr_t)(b.p + 30000), (uint32_t)inl, 0 };
		ret = post_wr(c, IBV_WR_SEND, 2, sg, 1, IBV_SEND_SIGNALED | IBV_SEND_INLINE, 0, 0,
			      0);
		CHECK(ret == 0, "inline post: %s", strerror(ret));
		memset(b.p + 30000, 0x5a, inl);
		post1(c, IBV_WR_SEND, 3, &b, 0, 0, 0, 0, 0);
		post1(c, IBV_WR_RDMA_READ, 4, &b, 0, 0, r.addr + 100, r.rkey, 0);
		post1(c, IBV_WR_RDMA_WRITE_WITH_IMM, 5, &b, 0, 0, r.addr + 60000, r.rkey, 7);
		wc_expect(c->scq, 1, IBV_WC_SEND, "gathered Send");
		wc_expect(c->scq, 2, IBV_WC_SEND, "inline Send");
		wc_expect(c->scq, 3, IBV_WC_SEND, "zero-length Send");
		wc_expect(c->scq, 4, IBV_WC_RDMA_READ, "zero-length Read");
		wc_expect(c->scq, 5, IBV_WC_RDMA_WRITE, "zero-length Write w/ Imm");
		oob_get(T_DONE);
	}
	buf_free(&b);
}

static void channel_take(struct conn *c, const char *what);

/*
 * Send with Immediate (RFC 7306 Immediate Data + Send, lib/rnic/README.md) client → server,
 * alternating with plain Sends: each Send with Immediate completes ONE receive as
 * IBV_WC_RECV with IBV_WC_WITH_IMM, its immediate and the Send's length; the plain Sends
 * between them keep their own receives, without the flag. The last one carries the Solicited
 * Event and wakes a CQ armed solicited-only.
 */
static void
phase_send_imm(struct conn *c)
{
	static const size_t sizes[] = { 0, 1, 100, 1449, 5000, 70001, 262144, 3000 };
	const size_t n = RTE_DIM_SZ(sizes), last = n - 1;
	struct layout l;
	struct buf b;
	char w[96];

	layout_make(&l, sizes, n);
	buf_alloc(c, &b, l.total, ACC_ALL);
	if (o.server) {
		uint64_t checked = 0;

		pat_fill(b.p, l.total, 0xee, 0);
		for (size_t i = 0; i < n; i++)
			post_recv(c, 100 + i, &b, l.off[i], l.len[i]);
		CHECK(ibv_req_notify_cq(c->rcq, 1) == 0);
		oob_put(T_READY, 0, NULL, 0);
		for (size_t i = 0; i < n; i++) {
			bool imm = i % 2 == 0 || i == last;
			struct ibv_wc wc;

			snprintf(w, sizeof(w), "%s #%zu (%zu octets)",
				 imm ? "Send with Immediate" : "Send", i, l.len[i]);
			if (i == last)
				channel_take(c, "Send with Immediate and SE");
			wc = wc_expect(c->rcq, 100 + i, IBV_WC_RECV, w);
			if (wc.byte_len != l.len[i])
				fail("%s: byte_len %u", w, wc.byte_len);
			if (!!(wc.wc_flags & IBV_WC_WITH_IMM) != imm ||
			    (wc.wc_flags & IBV_WC_WITH_INV))
				fail("%s: wc_flags 0x%x", w, wc.wc_flags);
			if (imm && wc.imm_data != htonl(0x5e000000u + (uint32_t)i))
				fail("%s: imm_data 0x%x", w, ntohl(wc.imm_data));
			pat_check(b.p + l.off[i], l.len[i], 0x900 + (uint32_t)i, 0, w);
			checked += imm;
		}
		layout_check_gaps(b.p, &l, 0xee, "Send with Immediate receive buffer");
		wc_none(c->rcq, "after the Sends with Immediate");
		seen.send_imm_checked += checked;
		oob_put(T_DONE, 0, NULL, 0);
		note("Send with Immediate: %" PRIu64 " verified, one receive each", checked);
	} else {
		for (size_t i = 0; i < n; i++)
			pat_fill(b.p + l.off[i], l.len[i], 0x900 + (uint32_t)i, 0);
		oob_get(T_READY);
		for (size_t i = 0; i < n; i++) {
			bool imm = i % 2 == 0 || i == last;
			struct ibv_sge sg = { (uintptr_t)(b.p + l.off[i]), (uint32_t)l.len[i],
					      b.mr->lkey };
			int ret = post_wr(c, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, 100 + i, &sg,
					  l.len[i] != 0 ? 1 : 0,
					  IBV_SEND_SIGNALED | (i == last ? IBV_SEND_SOLICITED : 0),
					  0, 0, 0x5e000000u + (uint32_t)i);

			CHECK(ret == 0, "post #%zu: %s", i, strerror(ret));
		}
		for (size_t i = 0; i < n; i++) {
			snprintf(w, sizeof(w), "Send (with Immediate) #%zu", i);
			wc_expect(c->scq, 100 + i, IBV_WC_SEND, w);
		}
		oob_get(T_DONE);
	}
	buf_free(&b);
}

/* Is the completion channel readable within @p ms? */
static bool
channel_ready(struct conn *c, int ms)
{
	struct pollfd pf = { .fd = c->rch->fd, .events = POLLIN };

	return poll(&pf, 1, ms) == 1;
}

static void
channel_take(struct conn *c, const char *what)
{
	struct ibv_cq *cq;
	void *ctx;

	if (!channel_ready(c, WAIT_MS))
		fail("%s: no completion event", what);
	CHECK(ibv_get_cq_event(c->rch, &cq, &ctx) == 0, "%s", what);
	CHECK(cq == c->rcq && ctx == c, "%s: event for another CQ", what);
	c->cq_events++;
}

/*
 * Send with Solicited Event: the receive CQ armed solicited-only is not notified by a plain
 * Send, and is by a Send with SE; then an ordinary arming is notified by a plain Send.
 */
static void
phase_se(struct conn *c)
{
	struct buf b;

	buf_alloc(c, &b, 4096, ACC_ALL);
	if (o.server) {
		for (int i = 0; i < 3; i++)
			post_recv(c, 10 + i, &b, 1024 * (size_t)i, 1024);
		CHECK(ibv_req_notify_cq(c->rcq, 1) == 0);
		oob_put(T_ARMED, 0, NULL, 0);
		wc_expect(c->rcq, 10, IBV_WC_RECV, "unsolicited Send");
		pat_check(b.p, 64, 0x700, 0, "unsolicited Send");
		/* a wrong notification would have been written with the CQE: allow it time */
		if (channel_ready(c, 300))
			fail("CQ armed solicited-only was notified by a Send without SE");
		oob_put(T_GO, 0, NULL, 0);
		channel_take(c, "Send with SE");
		wc_expect(c->rcq, 11, IBV_WC_RECV, "Send with SE");
		pat_check(b.p + 1024, 64, 0x701, 0, "Send with SE");
		CHECK(ibv_req_notify_cq(c->rcq, 0) == 0);
		oob_put(T_ARMED, 1, NULL, 0);
		channel_take(c, "Send after ordinary arming");
		wc_expect(c->rcq, 12, IBV_WC_RECV, "Send after ordinary arming");
		pat_check(b.p + 2048, 64, 0x702, 0, "Send after ordinary arming");
		oob_put(T_DONE, 0, NULL, 0);
		note("Send with Solicited Event: solicited-only arming honoured");
	} else {
		struct ibv_sge sg;
		int ret;

		for (int i = 0; i < 3; i++)
			pat_fill(b.p + 1024 * (size_t)i, 64, 0x700 + (uint32_t)i, 0);
		oob_get(T_ARMED);
		post1(c, IBV_WR_SEND, 10, &b, 0, 64, 0, 0, 0);
		wc_expect(c->scq, 10, IBV_WC_SEND, "unsolicited Send");
		oob_get(T_GO);
		sg = (struct ibv_sge){ (uintptr_t)(b.p + 1024), 64, b.mr->lkey };
		ret = post_wr(c, IBV_WR_SEND, 11, &sg, 1, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED, 0,
			      0, 0);
		CHECK(ret == 0, "%s", strerror(ret));
		wc_expect(c->scq, 11, IBV_WC_SEND, "Send with SE");
		oob_get(T_ARMED);
		post1(c, IBV_WR_SEND, 12, &b, 2048, 64, 0, 0, 0);
		wc_expect(c->scq, 12, IBV_WC_SEND, "Send after ordinary arming");
		oob_get(T_DONE);
	}
	buf_free(&b);
}

static void
case_basic(void)
{
	struct conn c;
	struct sizes sz = { basic_sizes, sizeof(basic_sizes) / sizeof(basic_sizes[0]) };

	if (o.small)
		sz = (struct sizes){ small_sizes, sizeof(small_sizes) / sizeof(small_sizes[0]) };

	conn_up(&c, NULL);
	run_data(&c, &sz);
	conn_down(&c);
	conn_free(&c);
}

static void
case_ops(void)
{
	struct conn c;
	struct sizes sz = { sweep_sizes, sizeof(sweep_sizes) / sizeof(sweep_sizes[0]) };

	conn_up(&c, NULL);
	run_data(&c, &sz);
	phase_sg_inline_zero(&c);
	phase_se(&c);
	phase_send_imm(&c);
	conn_down(&c);
	conn_free(&c);
}

/* ---------------------------------------------------------------- case: atomics */

static void
case_atomics(void)
{
	struct ibv_device_attr da;
	struct conn c;
	struct buf b;

	conn_up(&c, NULL);
	/* RFC 7306 atomics are atomic among the device's operations, on every lcore */
	CHECK(ibv_query_device(c.ctx, &da) == 0);
	CHECK(da.atomic_cap == IBV_ATOMIC_HCA, "atomic_cap %d", (int)da.atomic_cap);
	buf_alloc(&c, &b, 4096, ACC_ALL | IBV_ACCESS_REMOTE_ATOMIC);
	if (o.server) {
		uint64_t *v = (uint64_t *)b.p;

		pat_fill(b.p, b.len, 0xee, 0);
		v[1] = 1000;
		v[2] = 0xdeadbeefcafef00dull;
		oob_put_mr(&b);
		oob_get(T_DONE);
		CHECK(v[1] == 1000 + 5 + 0xffffffffull, "fetch-add target 0x%" PRIx64, v[1]);
		CHECK(v[2] == 42, "compare-swap target 0x%" PRIx64, v[2]);
		pat_check(b.p, 8, 0xee, 0, "octets before the atomic targets");
		pat_check(b.p + 24, b.len - 24, 0xee, 24, "octets after the atomic targets");
		note("atomics: target memory as expected");
	} else {
		struct rbuf r = oob_get_mr();
		uint64_t *res = (uint64_t *)b.p;
		struct ibv_send_wr wr, *bad;
		struct ibv_sge sg;
		static const struct {
			enum ibv_wr_opcode op;
			uint64_t off, cmp_add, swap, want;
		} steps[] = {
			{ IBV_WR_ATOMIC_FETCH_AND_ADD, 8, 5, 0, 1000 },
			{ IBV_WR_ATOMIC_FETCH_AND_ADD, 8, 0xffffffffull, 0, 1005 },
			/* no swap */
			{ IBV_WR_ATOMIC_CMP_AND_SWP, 16, 7, 99, 0xdeadbeefcafef00dull },
			{ IBV_WR_ATOMIC_CMP_AND_SWP, 16, 0xdeadbeefcafef00dull, 42,
			  0xdeadbeefcafef00dull },
			{ IBV_WR_ATOMIC_CMP_AND_SWP, 16, 41, 77, 42 }, /* no swap */
		};

		for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
			struct ibv_wc wc;

			res[i] = 0x5555555555555555ull;
			sg = (struct ibv_sge){ (uintptr_t)&res[i], 8, b.mr->lkey };
			memset(&wr, 0, sizeof(wr));
			wr.wr_id = i;
			wr.opcode = steps[i].op;
			wr.sg_list = &sg;
			wr.num_sge = 1;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.wr.atomic.remote_addr = r.addr + steps[i].off;
			wr.wr.atomic.rkey = r.rkey;
			wr.wr.atomic.compare_add = steps[i].cmp_add;
			wr.wr.atomic.swap = steps[i].swap;
			CHECK(ibv_post_send(c.qp, &wr, &bad) == 0, "atomic post %zu", i);
			wc = wc_expect(c.scq, i,
				       steps[i].op == IBV_WR_ATOMIC_FETCH_AND_ADD ? IBV_WC_FETCH_ADD
										 : IBV_WC_COMP_SWAP,
				       "atomic");
			(void)wc;
			if (res[i] != steps[i].want)
				fail("atomic step %zu returned 0x%" PRIx64 ", want 0x%" PRIx64, i,
				     res[i], steps[i].want);
		}
		/* and a Read of the targets agrees */
		post1(&c, IBV_WR_RDMA_READ, 100, &b, 512, 16, r.addr + 8, r.rkey, 0);
		wc_expect(c.scq, 100, IBV_WC_RDMA_READ, "Read of the atomic targets");
		CHECK(((uint64_t *)(b.p + 512))[0] == 1000 + 5 + 0xffffffffull);
		CHECK(((uint64_t *)(b.p + 512))[1] == 42);
		oob_put(T_DONE, 0, NULL, 0);
		note("atomics: Fetch-and-Add and Compare-and-Swap returned the original values");
	}
	conn_down(&c);
	buf_free(&b);
	conn_free(&c);
}

/* ---------------------------------------------------------------- error cases */

/* Wait for the connection to end (DISCONNECTED), whatever came first. */
static void
wait_disconnected(const char *what)
{
	cm_wait(RDMA_CM_EVENT_DISCONNECTED, NULL);
	note("%s: DISCONNECTED", what);
}

/* Collect @p n completions of @p cq (any status) into @p wc, in order. */
static void
wc_collect(struct ibv_cq *cq, struct ibv_wc *wc, int n, const char *what)
{
	for (int i = 0; i < n; i++)
		wc_get(cq, &wc[i], what);
}

/* Every one of @p n posted receives (wr_id base + i) completes with WR_FLUSH_ERR. */
static void
expect_recv_flush(struct conn *c, uint64_t base, int n, const char *what)
{
	for (int i = 0; i < n; i++) {
		struct ibv_wc wc;

		wc_get(c->rcq, &wc, what);
		if (wc.status != IBV_WC_WR_FLUSH_ERR || wc.wr_id != base + (uint64_t)i)
			fail("%s: receive completion %d: wr_id %" PRIu64 " status %s, want wr_id %"
			     PRIu64 " WR_FLUSH_ERR", what, i, wc.wr_id, wc_str(wc.status),
			     base + (uint64_t)i);
	}
	wc_none(c->rcq, what);
	note("%s: %d receives flushed (WR_FLUSH_ERR)", what, n);
}

/*
 * Remote access violation: the client's first operation breaks the server's region rules;
 * the server's RNIC terminates, the client's outstanding Read and receive are flushed, and
 * the server's memory (region and its neighbours) is untouched.
 */
static void
case_viol(void)
{
	bool rd = strcmp(o.viol, "read") == 0;
	int access = ACC_ALL;
	struct conn c;
	struct buf b;

	if (strcmp(o.viol, "rights") == 0)
		access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	else if (rd)
		access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	else if (strcmp(o.viol, "bounds") != 0 && strcmp(o.viol, "stag") != 0)
		fail("unknown --viol %s", o.viol);
	conn_up(&c, NULL);
	if (o.server) {
		uint8_t *whole = aligned_alloc(4096, 3 * 4096);
		struct rbuf r;

		CHECK(whole != NULL);
		pat_fill(whole, 3 * 4096, 0x800, 0);
		b.p = whole + 4096;
		b.len = 4096;
		b.mr = ibv_reg_mr(c.pd, b.p, b.len, access);
		CHECK(b.mr != NULL, "%s", strerror(errno));
		for (int i = 0; i < 2; i++)
			post_recv(&c, 20 + (uint64_t)i, &b, 0, 64); /* never used: flushed */
		r = (struct rbuf){ (uintptr_t)b.p, b.mr->rkey, (uint32_t)b.len };
		oob_put(T_MR, 0, &r, 0);
		wait_disconnected("target");
		expect_recv_flush(&c, 20, 2, "target");
		/* it terminated the connection for a remote access violation (as siw reports) */
		async_expect(c.ctx, IBV_EVENT_QP_ACCESS_ERR, c.qp, NULL, "target");
		pat_check(whole, 3 * 4096, 0x800, 0, "target memory after the violation");
		note("violation '%s': target memory untouched", o.viol);
		CHECK(ibv_dereg_mr(b.mr) == 0);
		free(whole);
	} else {
		struct rbuf r = oob_get_mr();
		uint64_t raddr = r.addr;
		uint32_t rkey = r.rkey, len = 1024;
		struct ibv_wc wc[2];

		buf_alloc(&c, &b, 8192, ACC_ALL);
		pat_fill(b.p, b.len, 0x801, 0);
		if (strcmp(o.viol, "bounds") == 0) {
			raddr = r.addr + r.len - 100;
			len = 200;
		} else if (strcmp(o.viol, "stag") == 0) {
			rkey ^= 0xff; /* same index, another key: not a valid STag */
		}
		post_recv(&c, 30, &b, 4096, 64);
		if (rd)
			post1(&c, IBV_WR_RDMA_READ, 1, &b, 0, len, raddr, rkey, 0);
		else
			post1(&c, IBV_WR_RDMA_WRITE, 1, &b, 0, len, raddr, rkey, 0);
		/* a legal Read behind it: never answered, so it must not succeed */
		post1(&c, IBV_WR_RDMA_READ, 2, &b, 2048, 16, r.addr, r.rkey, 0);
		wc_collect(c.scq, wc, 2, "requester completions");
		note("requester: wr 1 %s (vendor_err 0x%x), wr 2 %s (vendor_err 0x%x)",
		     wc_str(wc[0].status), wc[0].vendor_err, wc_str(wc[1].status),
		     wc[1].vendor_err);
		CHECK(wc[0].wr_id == 1 && wc[1].wr_id == 2, "completion order");
		if (rd && wc[0].status == IBV_WC_SUCCESS)
			fail("the violating Read completed successfully");
		if (wc[1].status == IBV_WC_SUCCESS)
			fail("the Read behind the violation completed successfully");
		wait_disconnected("requester");
		expect_recv_flush(&c, 30, 1, "requester");
		async_expect(c.ctx, IBV_EVENT_QP_FATAL, c.qp, NULL, "requester");
		pat_check(b.p, b.len, 0x801, 0, "requester buffer (Read sink)");
		buf_free(&b);
	}
	conn_free(&c);
}

/*
 * Send with Invalidate naming the responder's MR STag: an MR cannot be invalidated, so
 * the responder terminates (RFC 5040 §5.3, "STag cannot be invalidated"), places no
 * completion for the message and its MR stays usable by itself.
 */
static void
case_send_inv(void)
{
	struct conn c;
	struct buf b;

	conn_up(&c, NULL);
	buf_alloc(&c, &b, 8192, ACC_ALL);
	if (o.server) {
		struct ibv_wc wc;

		pat_fill(b.p, b.len, 0x900, 0);
		post_recv(&c, 40, &b, 0, 1024);
		post_recv(&c, 41, &b, 1024, 1024);
		oob_put_mr(&b);
		wait_disconnected("responder");
		wc_get(c.rcq, &wc, "Send with Invalidate receive");
		if (wc.status == IBV_WC_SUCCESS)
			fail("Send with Invalidate of an MR STag completed successfully "
			     "(wc_flags 0x%x invalidated_rkey 0x%x)", wc.wc_flags,
			     wc.invalidated_rkey);
		CHECK(wc.wr_id == 40);
		note("responder: the receive completed with %s", wc_str(wc.status));
		expect_recv_flush(&c, 41, 1, "responder");
		pat_check(b.p + 1024, b.len - 1024, 0x900, 1024, "untouched receive buffers");
	} else {
		struct rbuf r = oob_get_mr();
		struct ibv_sge sg = { (uintptr_t)b.p, 512, b.mr->lkey };
		struct ibv_wc wc[2];
		int ret;

		pat_fill(b.p, b.len, 0x901, 0);
		post_recv(&c, 50, &b, 4096, 64);
		ret = post_wr(&c, IBV_WR_SEND_WITH_INV, 1, &sg, 1, IBV_SEND_SIGNALED, 0, 0, r.rkey);
		CHECK(ret == 0, "%s", strerror(ret));
		post1(&c, IBV_WR_RDMA_READ, 2, &b, 2048, 16, r.addr, r.rkey, 0);
		wc_collect(c.scq, wc, 2, "requester completions");
		note("requester: Send w/ Inv %s, Read behind it %s", wc_str(wc[0].status),
		     wc_str(wc[1].status));
		if (wc[1].status == IBV_WC_SUCCESS)
			fail("the Read behind the Send with Invalidate completed successfully");
		wait_disconnected("requester");
		expect_recv_flush(&c, 50, 1, "requester");
	}
	buf_free(&b);
	conn_free(&c);
}

/* Bind a type 2 window with IBV_WR_BIND_MW; returns the new rkey (completion checked). */
static uint32_t
mw2_bind(struct conn *c, struct ibv_mw *mw, uint32_t rkey, struct buf *b, size_t off,
	 size_t len, uint64_t wr_id)
{
	struct ibv_send_wr wr, *bad;
	int ret;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(rkey);
	wr.bind_mw.bind_info.mr = b->mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)(b->p + off);
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ret = ibv_post_send(c->qp, &wr, &bad);
	CHECK(ret == 0, "IBV_WR_BIND_MW: %s", strerror(ret));
	wc_expect(c->scq, wr_id, IBV_WC_BIND_MW, "type 2 bind");
	return wr.bind_mw.rkey;
}

/*
 * Memory windows. Server region (64 KiB, MW_BIND): window 1 (type 1) over [4 KiB, 12 KiB),
 * window 2 (type 2) over [16 KiB, 24 KiB). The client Writes both windows, Reads window 2,
 * then sends with Invalidate of window 2; the server rebinds window 2, invalidates it
 * locally and the client's Write with that STag must be refused. Everything outside the
 * windows keeps its pattern; the windows hold exactly what the client wrote.
 */
#define MW_REGION (64 * 1024)
#define MW1_OFF   4096
#define MW2_OFF   (16 * 1024)
#define MW_LEN    8192
static void
case_mw(void)
{
	struct conn c;
	struct buf b;

	conn_up(&c, NULL);
	buf_alloc(&c, &b, MW_REGION, ACC_ALL | IBV_ACCESS_MW_BIND);
	if (o.server) {
		struct ibv_device_attr da;
		struct ibv_mw *mw1, *mw2;
		struct ibv_mw_bind bind;
		struct ibv_wc wc;
		struct rbuf r;
		uint32_t k2, k3;
		int ret;

		CHECK(ibv_query_device(c.ctx, &da) == 0);
		CHECK((da.device_cap_flags & IBV_DEVICE_MEM_WINDOW) && da.max_mw > 0,
		      "device_cap_flags 0x%x max_mw %d", (unsigned int)da.device_cap_flags,
		      da.max_mw);
		pat_fill(b.p, b.len, 0xa00, 0);
		mw1 = ibv_alloc_mw(c.pd, IBV_MW_TYPE_1);
		mw2 = ibv_alloc_mw(c.pd, IBV_MW_TYPE_2);
		CHECK(mw1 != NULL && mw2 != NULL, "ibv_alloc_mw: %s", strerror(errno));
		memset(&bind, 0, sizeof(bind));
		bind.wr_id = 80;
		bind.send_flags = IBV_SEND_SIGNALED;
		bind.bind_info.mr = b.mr;
		bind.bind_info.addr = (uintptr_t)(b.p + MW1_OFF);
		bind.bind_info.length = MW_LEN;
		bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
		ret = ibv_bind_mw(c.qp, mw1, &bind);
		CHECK(ret == 0, "ibv_bind_mw: %s", strerror(ret));
		wc_expect(c.scq, 80, IBV_WC_BIND_MW, "type 1 bind");
		k2 = mw2_bind(&c, mw2, mw2->rkey, &b, MW2_OFF, MW_LEN, 81);
		for (int i = 0; i < 3; i++)
			post_recv(&c, 90 + (uint64_t)i, &b, 60 * 1024 + 1024 * (size_t)i, 1024);
		r = (struct rbuf){ (uintptr_t)(b.p + MW1_OFF), mw1->rkey, MW_LEN };
		oob_put(T_MR, 1, &r, 0);
		r = (struct rbuf){ (uintptr_t)(b.p + MW2_OFF), k2, MW_LEN };
		oob_put(T_MR, 2, &r, 0);
		/* Send with Invalidate of window 2: its receive says which STag went invalid */
		wc_get(c.rcq, &wc, "Send with Invalidate");
		CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 90, "wr_id %" PRIu64 " %s",
		      wc.wr_id, wc_str(wc.status));
		CHECK(wc.wc_flags & IBV_WC_WITH_INV, "wc_flags 0x%x", wc.wc_flags);
		CHECK(wc.invalidated_rkey == k2, "invalidated_rkey 0x%x, want 0x%x",
		      wc.invalidated_rkey, k2);
		note("responder: Send with Invalidate gave back rkey 0x%x", k2);
		(void)oob_get(T_SENT);
		pat_check(b.p + MW1_OFF, MW_LEN, 0xa01, 0, "window 1 (written by the peer)");
		pat_check(b.p + MW2_OFF, MW_LEN, 0xa02, 0, "window 2 (written by the peer)");
		pat_check(b.p + MW1_OFF + MW_LEN, MW2_OFF - MW1_OFF - MW_LEN, 0xa00,
			  MW1_OFF + MW_LEN, "between the windows");
		pat_check(b.p, MW1_OFF, 0xa00, 0, "below window 1");
		pat_check(b.p + MW2_OFF + MW_LEN, 36 * 1024, 0xa00, MW2_OFF + MW_LEN,
			  "above window 2");
		/* an MR with a bound window cannot go */
		ret = ibv_dereg_mr(b.mr);
		CHECK(ret == EBUSY, "ibv_dereg_mr with a bound window: %d, want EBUSY", ret);
		/* rebind the invalidated window with a new key, then invalidate it locally */
		k3 = mw2_bind(&c, mw2, k2, &b, MW2_OFF, MW_LEN, 82);
		CHECK(k3 != k2);
		{
			struct ibv_send_wr wr = { .wr_id = 83, .opcode = IBV_WR_LOCAL_INV,
						  .send_flags = IBV_SEND_SIGNALED,
						  .invalidate_rkey = k3 }, *bad;

			ret = ibv_post_send(c.qp, &wr, &bad);
			CHECK(ret == 0, "IBV_WR_LOCAL_INV: %s", strerror(ret));
		}
		wc_expect(c.scq, 83, IBV_WC_LOCAL_INV, "local invalidate");
		pat_fill(b.p + MW2_OFF, MW_LEN, 0xa03, 0);
		r = (struct rbuf){ (uintptr_t)(b.p + MW2_OFF), k3, MW_LEN };
		oob_put(T_GO, 0, &r, 0);
		/* the peer's Write with the invalidated STag: Terminate, nothing placed */
		wait_disconnected("responder");
		expect_recv_flush(&c, 91, 2, "responder");
		pat_check(b.p + MW2_OFF, MW_LEN, 0xa03, 0, "window 2 after the refused Write");
		note("responder: Write with the locally invalidated rkey 0x%x refused", k3);
		CHECK(ibv_dealloc_mw(mw2) == 0 && ibv_dealloc_mw(mw1) == 0);
	} else {
		struct oob_msg m1 = oob_get(T_MR), m2 = oob_get(T_MR);
		struct ibv_sge sg = { (uintptr_t)b.p, 512, b.mr->lkey };
		struct ibv_wc wc;
		int ret;

		CHECK(m1.arg == 1 && m2.arg == 2);
		pat_fill(b.p, MW_LEN, 0xa01, 0);
		pat_fill(b.p + MW_LEN, MW_LEN, 0xa02, 0);
		memset(b.p + 2 * MW_LEN, 0, MW_LEN);
		post1(&c, IBV_WR_RDMA_WRITE, 1, &b, 0, MW_LEN, m1.addr, m1.rkey, 0);
		post1(&c, IBV_WR_RDMA_READ, 2, &b, 2 * MW_LEN, MW_LEN, m2.addr, m2.rkey, 0);
		/*
		 * RFC 5040 §5.5 rule 12: the peer may read the window for the Read Response after
		 * it placed a later Write to it; the Write is fenced so the Read sees the window
		 * as it was.
		 */
		{
			struct ibv_sge sg3 = { (uintptr_t)(b.p + MW_LEN), MW_LEN, b.mr->lkey };

			ret = post_wr(&c, IBV_WR_RDMA_WRITE, 3, &sg3, 1,
				      IBV_SEND_SIGNALED | IBV_SEND_FENCE, m2.addr, m2.rkey, 0);
			CHECK(ret == 0, "fenced Write: %s", strerror(ret));
		}
		wc_expect(c.scq, 1, IBV_WC_RDMA_WRITE, "Write to window 1");
		wc_expect(c.scq, 2, IBV_WC_RDMA_READ, "Read of window 2");
		wc_expect(c.scq, 3, IBV_WC_RDMA_WRITE, "Write to window 2");
		pat_check(b.p + 2 * MW_LEN, MW_LEN, 0xa00, MW2_OFF, "Read of window 2");
		ret = post_wr(&c, IBV_WR_SEND_WITH_INV, 4, &sg, 1, IBV_SEND_SIGNALED, 0, 0,
			      m2.rkey);
		CHECK(ret == 0, "%s", strerror(ret));
		wc_expect(c.scq, 4, IBV_WC_SEND, "Send with Invalidate");
		oob_put(T_SENT, 0, NULL, 0);
		{
			struct oob_msg m3 = oob_get(T_GO);
			struct ibv_wc w2[2];

			pat_fill(b.p, b.len, 0xa04, 0);
			post1(&c, IBV_WR_RDMA_WRITE, 5, &b, 0, 1024, m3.addr, m3.rkey, 0);
			/* a legal Read behind it: never answered, so it must not succeed */
			post1(&c, IBV_WR_RDMA_READ, 6, &b, 4096, 16, m1.addr, m1.rkey, 0);
			wc_collect(c.scq, w2, 2, "requester completions");
			note("requester: Write with invalidated rkey 0x%x %s, Read behind it %s",
			     m3.rkey, wc_str(w2[0].status), wc_str(w2[1].status));
			if (w2[1].status == IBV_WC_SUCCESS)
				fail("the Read behind the refused Write completed successfully");
			wait_disconnected("requester");
			(void)wc;
		}
	}
	buf_free(&b);
	conn_free(&c);
}

/* Fast-register @p f with @p key over [off, off+len) of its backing at @p iova. */
static void
frmr_reg(struct conn *c, struct ibv_mr *f, uint32_t key, uint64_t iova, size_t off, size_t len,
	 unsigned int access, uint64_t wr_id)
{
	struct wnv_fast_reg_wr fr = {
		.wr_id = wr_id, .send_flags = IBV_SEND_SIGNALED, .mr = f, .key = key,
		.access = access, .iova = iova, .length = len, .offset = off,
	};
	int ret = wnv_post_fast_reg(c->qp, &fr);

	CHECK(ret == 0, "wnv_post_fast_reg: %s", strerror(ret));
	wc_expect(c->scq, wr_id, (enum ibv_wc_opcode)WNV_WC_FAST_REG, "fast-register");
	CHECK(f->rkey == key && f->lkey == key);
}

#define FR_BACKING (64 * 1024)
#define FR_OFF     8192
#define FR_LEN     16384
#define FR_TO      0x7000000000ull
static void
case_frmr(void)
{
	struct conn c;
	struct buf b;

	conn_up(&c, NULL);
	buf_alloc(&c, &b, 8192, ACC_ALL);
	if (o.server) {
		uint8_t *back = aligned_alloc(4096, FR_BACKING);
		uint32_t k1, k2;
		struct ibv_mr *f;
		struct ibv_wc wc;
		struct rbuf r;

		CHECK(back != NULL);
		pat_fill(back, FR_BACKING, 0xb00, 0);
		f = wnv_alloc_frmr(c.pd, back, FR_BACKING);
		CHECK(f != NULL, "wnv_alloc_frmr: %s", strerror(errno));
		k1 = ibv_inc_rkey(f->rkey);
		frmr_reg(&c, f, k1, FR_TO, FR_OFF, FR_LEN,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
			 100);
		post_recv(&c, 110, &b, 0, 1024);
		post_recv(&c, 111, &b, 1024, 1024);
		r = (struct rbuf){ FR_TO, k1, FR_LEN };
		oob_put(T_MR, 0, &r, 0);
		wc_get(c.rcq, &wc, "Send with Invalidate");
		CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 110, "wr_id %" PRIu64 " %s",
		      wc.wr_id, wc_str(wc.status));
		CHECK((wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == k1,
		      "wc_flags 0x%x invalidated_rkey 0x%x, want 0x%x", wc.wc_flags,
		      wc.invalidated_rkey, k1);
		(void)oob_get(T_SENT);
		pat_check(back, FR_OFF + 4096, 0xb00, 0, "backing below the write");
		pat_check(back + FR_OFF + 4096, 4096, 0xb01, 0, "backing written through the FRMR");
		pat_check(back + FR_OFF + 8192, FR_BACKING - FR_OFF - 8192, 0xb00, FR_OFF + 8192,
			  "backing above the write");
		/* only an invalid FRMR can be fast-registered again: the peer invalidated it */
		k2 = ibv_inc_rkey(k1);
		frmr_reg(&c, f, k2, 0, 0, 4096, IBV_ACCESS_REMOTE_READ | IBV_ACCESS_ZERO_BASED, 101);
		r = (struct rbuf){ 0, k2, 4096 };
		oob_put(T_GO, 0, &r, 0);
		(void)oob_get(T_RESULT);
		{
			struct ibv_send_wr wr = { .wr_id = 102, .opcode = IBV_WR_LOCAL_INV,
						  .send_flags = IBV_SEND_SIGNALED,
						  .invalidate_rkey = k2 }, *bad;
			int ret = ibv_post_send(c.qp, &wr, &bad);

			CHECK(ret == 0, "IBV_WR_LOCAL_INV: %s", strerror(ret));
		}
		wc_expect(c.scq, 102, IBV_WC_LOCAL_INV, "local invalidate");
		oob_put(T_ARMED, 0, NULL, 0);
		wait_disconnected("responder");
		expect_recv_flush(&c, 111, 1, "responder");
		CHECK(ibv_dereg_mr(f) == 0);
		free(back);
	} else {
		struct rbuf r = oob_get_mr();
		struct oob_msg m;
		struct ibv_sge sg = { (uintptr_t)b.p, 64, b.mr->lkey };
		struct ibv_wc wc;
		int ret;

		CHECK(r.len == FR_LEN);
		memset(b.p, 0, b.len);
		post1(&c, IBV_WR_RDMA_READ, 1, &b, 0, 4096, r.addr, r.rkey, 0);
		wc_expect(c.scq, 1, IBV_WC_RDMA_READ, "Read through the FRMR");
		pat_check(b.p, 4096, 0xb00, FR_OFF, "Read through the FRMR");
		pat_fill(b.p + 4096, 4096, 0xb01, 0);
		post1(&c, IBV_WR_RDMA_WRITE, 2, &b, 4096, 4096, r.addr + 4096, r.rkey, 0);
		ret = post_wr(&c, IBV_WR_SEND_WITH_INV, 3, &sg, 1, IBV_SEND_SIGNALED, 0, 0, r.rkey);
		CHECK(ret == 0, "%s", strerror(ret));
		wc_expect(c.scq, 2, IBV_WC_RDMA_WRITE, "Write through the FRMR");
		wc_expect(c.scq, 3, IBV_WC_SEND, "Send with Invalidate");
		oob_put(T_SENT, 0, NULL, 0);
		m = oob_get(T_GO);
		memset(b.p, 0, b.len);
		post1(&c, IBV_WR_RDMA_READ, 4, &b, 0, 4096, m.addr, m.rkey, 0);
		wc_expect(c.scq, 4, IBV_WC_RDMA_READ, "Read of the zero-based FRMR");
		pat_check(b.p, 4096, 0xb00, 0, "Read of the zero-based FRMR");
		oob_put(T_RESULT, 0, NULL, 0);
		(void)oob_get(T_ARMED);
		post1(&c, IBV_WR_RDMA_READ, 5, &b, 0, 64, m.addr, m.rkey, 0);
		wc_get(c.scq, &wc, "Read with the invalidated STag");
		note("requester: Read with the locally invalidated rkey 0x%x: %s", m.rkey,
		     wc_str(wc.status));
		CHECK(wc.wr_id == 5 && wc.status != IBV_WC_SUCCESS,
		      "the Read with an invalidated STag completed successfully");
		wait_disconnected("requester");
	}
	buf_free(&b);
	conn_free(&c);
}

/* Disconnect with receives outstanding on both sides: all flushed, in order. */
static void
prepost_flush(struct conn *c)
{
	c->pre = calloc(1, sizeof(*c->pre));
	CHECK(c->pre != NULL);
	buf_alloc(c, c->pre, 16 * 1024, ACC_ALL);
	for (int i = 0; i < 8; i++)
		post_recv(c, 60 + (uint64_t)i, c->pre, 1024 * (size_t)i, 1024);
}

static void
case_flush(void)
{
	struct conn c;
	struct buf b;

	conn_up(&c, prepost_flush);
	buf_alloc(&c, &b, 4096, ACC_ALL);
	if (o.server) {
		struct ibv_wc wc;

		oob_put(T_READY, 0, NULL, 0);
		wc = wc_expect(c.rcq, 60, IBV_WC_RECV, "the one Send");
		CHECK(wc.byte_len == 100);
		oob_put(T_DONE, 0, NULL, 0);
		wait_disconnected("server");
		expect_recv_flush(&c, 61, 7, "server");
	} else {
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qi;
		struct ibv_wc wc;
		int ret;

		pat_fill(b.p, 100, 0xa01, 0);
		oob_get(T_READY);
		post1(&c, IBV_WR_SEND, 1, &b, 0, 100, 0, 0, 0);
		wc_expect(c.scq, 1, IBV_WC_SEND, "the one Send");
		oob_get(T_DONE);
		CHECK(rdma_disconnect(c.id) == 0, "%s", strerror(errno));
		wait_disconnected("client");
		expect_recv_flush(&c, 60, 8, "client");
		CHECK(ibv_query_qp(c.qp, &qa, IBV_QP_STATE, &qi) == 0);
		CHECK(qa.qp_state == IBV_QPS_ERR, "QP state %d after disconnect", qa.qp_state);
		if (strcmp(o.cs, "flush_late") != 0)
			goto out;
		/*
		 * flush_late: a Send and a receive posted to the QP in Error are flushed
		 * (IB semantics) or refused by the post call, never left pending.
		 */
		ret = post_wr(&c, IBV_WR_SEND, 2, NULL, 0, IBV_SEND_SIGNALED, 0, 0, 0);
		if (ret == 0) {
			if (!wc_try(c.scq, &wc, 10000, "Send posted after the disconnect"))
				fail("a Send posted to the QP in Error was accepted (ibv_post_send "
				     "returned 0) but neither flushed nor completed within 10 s");
			CHECK(wc.wr_id == 2 && wc.status == IBV_WC_WR_FLUSH_ERR, "status %s",
			      wc_str(wc.status));
			note("client: Send posted in Error flushed");
		} else {
			note("client: Send posted in Error refused (%s)", strerror(ret));
		}
		{
			struct ibv_recv_wr rwr = { .wr_id = 3 }, *rbad;

			ret = ibv_post_recv(c.qp, &rwr, &rbad);
			if (ret != 0) {
				note("client: receive posted in Error refused (%s)", strerror(ret));
			} else {
				if (!wc_try(c.rcq, &wc, 10000, "late receive"))
					fail("a receive posted to the QP in Error was accepted but "
					     "not flushed within 10 s");
				CHECK(wc.wr_id == 3 && wc.status == IBV_WC_WR_FLUSH_ERR,
				      "status %s", wc_str(wc.status));
				note("client: receive posted in Error flushed");
			}
		}
	}
out:
	buf_free(&b);
	conn_free(&c);
}

/* ---------------------------------------------------------------- IRD/ORD */

static uint32_t
min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* Telemetry: value of "key" in the reply to @p cmd on the DPDK telemetry socket, or -1. */
static long long
tel_get(const char *cmd, const char *key)
{
	struct sockaddr_un sa;
	char buf[16384], pat_key[64];
	long long v = -1;
	ssize_t n;
	char *p;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", o.tel);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		fail("telemetry %s: %s", o.tel, strerror(errno));
	if (read(fd, buf, sizeof(buf) - 1) <= 0 || write(fd, cmd, strlen(cmd)) < 0)
		fail("telemetry %s: no greeting", o.tel);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	snprintf(pat_key, sizeof(pat_key), "\"%s\":", key);
	p = strstr(buf, pat_key);
	if (p != NULL)
		v = strtoll(p + strlen(pat_key), NULL, 10);
	return v;
}

static void
case_ordneg(void)
{
	/* RFC 6581 §5: the responder's IRD/ORD are the minimum of its own and the request's */
	uint32_t resp_ird = min_u32(o.s_ird, o.c_ord), resp_ord = min_u32(o.s_ord, o.c_ird);
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct conn c;
	struct buf b;
	const size_t sz = 16384;

	conn_up(&c, NULL);
	CHECK(ibv_query_qp(c.qp, &qa, IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC,
			   &qi) == 0);
	if (o.server) {
		note("CONNECT_REQUEST: responder_resources %u initiator_depth %u; QP ORD %u IRD %u",
		     c.seen.responder_resources, c.seen.initiator_depth, qa.max_rd_atomic,
		     qa.max_dest_rd_atomic);
		CHECK(c.seen.responder_resources == o.c_ird, "initiator's IRD seen as %u, sent %u",
		      c.seen.responder_resources, o.c_ird);
		CHECK(c.seen.initiator_depth == o.c_ord, "initiator's ORD seen as %u, sent %u",
		      c.seen.initiator_depth, o.c_ord);
		CHECK(qa.max_rd_atomic == resp_ord, "responder ORD %u, want %u", qa.max_rd_atomic,
		      resp_ord);
	} else {
		note("ESTABLISHED: responder_resources %u initiator_depth %u; QP ORD %u IRD %u",
		     c.seen.responder_resources, c.seen.initiator_depth, qa.max_rd_atomic,
		     qa.max_dest_rd_atomic);
		CHECK(c.seen.responder_resources == resp_ird, "responder's IRD %u, want %u",
		      c.seen.responder_resources, resp_ird);
		CHECK(c.seen.initiator_depth == resp_ord, "responder's ORD %u, want %u",
		      c.seen.initiator_depth, resp_ord);
		CHECK(qa.max_rd_atomic == min_u32(o.c_ord, resp_ird), "initiator ORD %u, want %u",
		      qa.max_rd_atomic, min_u32(o.c_ord, resp_ird));
	}
	buf_alloc(&c, &b, sz * o.reads + 4096, ACC_ALL);
	if (o.server) {
		pat_fill(b.p, b.len, 0xb00, 0);
		oob_put_mr(&b);
		oob_get(T_DONE);
	} else {
		struct rbuf r = oob_get_mr();
		uint32_t ord = min_u32(o.c_ord, resp_ird);
		char w[64];
		long long stalls = -1;

		memset(b.p, 0, b.len);
		/* far more Reads than ORD at once: the RNIC queues them, none fails */
		for (uint32_t i = 0; i < o.reads; i++)
			post1(&c, IBV_WR_RDMA_READ, i, &b, sz * i, sz, r.addr + sz * i + 3, r.rkey,
			      0);
		for (uint32_t i = 0; i < o.reads; i++) {
			snprintf(w, sizeof(w), "Read %u of %u (ORD %u)", i, o.reads, ord);
			wc_expect(c.scq, i, IBV_WC_RDMA_READ, w);
			pat_check(b.p + sz * i, sz, 0xb00, sz * i + 3, w);
		}
		note("%u outstanding Reads with ORD %u: all completed and verified", o.reads, ord);
		if (o.tel != NULL) {
			char cmd[64];
			uint64_t end = now_ms() + 5000;

			/* the dataplane publishes QP counters every 100 ms */
			snprintf(cmd, sizeof(cmd), "/warpnic/dp/qp,%u", c.qp->qp_num);
			while ((stalls = tel_get(cmd, "ord_stalls")) <= 0 && now_ms() < end)
				nap_us(100000);
			note("telemetry %s: ord_stalls %lld", cmd, stalls);
			if (o.reads > ord)
				CHECK(stalls > 0, "Reads beyond ORD were not held back");
		}
		oob_put(T_DONE, 0, NULL, 0);
	}
	conn_down(&c);
	buf_free(&b);
	conn_free(&c);
}

/* ---------------------------------------------------------------- bulk, stream, kill */

/* @p mib MiB each of Write and Read (256 KiB operations) and 1/4 of that as Sends. */
static void
case_bulk(void)
{
	const size_t op = 256 * 1024, total = (size_t)o.mib << 20, n = total / op;
	const size_t smsg = 64 * 1024, sn = total / 4 / smsg;
	struct conn c;
	struct buf b, rb;

	conn_up(&c, NULL);
	buf_alloc(&c, &b, total, ACC_ALL);
	buf_alloc(&c, &rb, sn * smsg, ACC_ALL);
	if (o.server) {
		pat_fill(b.p, total, 0xc01, 0); /* the Read source, replaced by the Writes */
		for (size_t i = 0; i < sn; i++)
			post_recv(&c, i, &rb, i * smsg, smsg);
		oob_put_mr(&b);
		oob_get(T_DONE); /* Reads done */
		post_recv(&c, 999, &rb, 0, 0);
		oob_put(T_READY, 0, NULL, 0);
		for (size_t i = 0; i < sn; i++) {
			wc_expect(c.rcq, i, IBV_WC_RECV, "bulk Send");
			pat_check(rb.p + i * smsg, smsg, 0xc02, i * smsg, "bulk Send");
		}
		wc_expect(c.rcq, 999, IBV_WC_RECV_RDMA_WITH_IMM, "end of the bulk Writes");
		pat_check(b.p, total, 0xc00, 0, "bulk Write target");
		oob_put(T_DONE, 0, NULL, 0);
		note("bulk: %u MiB Read, %u MiB Written, %zu KiB Sent: verified", o.mib, o.mib,
		     sn * smsg / 1024);
	} else {
		struct rbuf r = oob_get_mr();

		for (size_t i = 0; i < n; i++)
			post1(&c, IBV_WR_RDMA_READ, i, &b, i * op, op, r.addr + i * op, r.rkey, 0);
		for (size_t i = 0; i < n; i++)
			wc_expect(c.scq, i, IBV_WC_RDMA_READ, "bulk Read");
		pat_check(b.p, total, 0xc01, 0, "bulk Read sink");
		oob_put(T_DONE, 0, NULL, 0);
		pat_fill(b.p, total, 0xc00, 0);
		pat_fill(rb.p, sn * smsg, 0xc02, 0);
		oob_get(T_READY);
		for (size_t i = 0; i < sn; i++)
			post1(&c, IBV_WR_SEND, i, &rb, i * smsg, smsg, 0, 0, 0);
		for (size_t i = 0; i < n; i++)
			post1(&c, i + 1 == n ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
			      100 + i, &b, i * op, op, r.addr + i * op, r.rkey, 1);
		for (size_t i = 0; i < sn; i++)
			wc_expect(c.scq, i, IBV_WC_SEND, "bulk Send");
		for (size_t i = 0; i < n; i++)
			wc_expect(c.scq, 100 + i, IBV_WC_RDMA_WRITE, "bulk Write");
		oob_get(T_DONE);
	}
	conn_down(&c);
	buf_free(&b);
	buf_free(&rb);
	conn_free(&c);
}

/*
 * The fault matrix's transfer (case xfer). A checksum both ends take independently: 64-bit
 * words mixed in order (plus the tail), so a lost, repeated, reordered or altered octet
 * changes it.
 */
static uint64_t
sum64(const uint8_t *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

#define XFER_OP    (256 * 1024) /* Write and Read message size */
#define XFER_SEND  (64 * 1024)  /* Send message size */
#define XFER_BATCH 128          /* Sends per receive credit grant (two batches posted) */
#define XFER_ATOMIC_TARGETS 64

/* Post Writes or Reads of XFER_OP over [0, total), at most DEPTH outstanding; the last
 * Write carries Immediate Data (its receive completion tells the target all were placed). */
static void
xfer_rdma(struct conn *c, struct buf *b, const struct rbuf *r, size_t total, bool write)
{
	size_t n = (total + XFER_OP - 1) / XFER_OP, posted = 0, done = 0;
	size_t hook_at = write && o.hook != NULL ? RTE_MAX_SZ(n / 8, (size_t)1) : SIZE_MAX;
	char w[64];

	while (done < n) {
		if (posted == hook_at && done == posted) {
			int rc = system(o.hook);

			note("xfer: hook after %zu of %zu Writes: '%s' exited %d", done, n, o.hook,
			     rc);
			CHECK(rc == 0, "--hook failed");
			hook_at = SIZE_MAX;
		}
		while (posted < n && posted - done < DEPTH && posted < hook_at) {
			size_t off = posted * XFER_OP, len = RTE_MIN_SZ(XFER_OP, total - off);
			enum ibv_wr_opcode op = !write ? IBV_WR_RDMA_READ
				: posted + 1 == n ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;

			post1(c, op, posted, b, off, len, r->addr + off, r->rkey, 0xfa17);
			posted++;
		}
		snprintf(w, sizeof(w), "xfer %s #%zu", write ? "Write" : "Read", done);
		wc_expect(c->scq, done, write ? IBV_WC_RDMA_WRITE : IBV_WC_RDMA_READ, w);
		done++;
	}
}

/* Sends of XFER_SEND over [0, total), XFER_BATCH at a time after each grant (T_GO). */
static void
xfer_sends(struct conn *c, struct buf *b, size_t total)
{
	size_t n = (total + XFER_SEND - 1) / XFER_SEND, done = 0;

	for (size_t batch = 0; batch * XFER_BATCH < n; batch++) {
		size_t first = batch * XFER_BATCH, last = RTE_MIN_SZ(n, first + XFER_BATCH);

		if (batch >= 2)
			oob_get(T_GO); /* batch - 2 was received: its receives are posted again */
		for (size_t i = first; i < last; i++) {
			size_t off = i * XFER_SEND;

			post1(c, IBV_WR_SEND, i, b, off, RTE_MIN_SZ(XFER_SEND, total - off), 0, 0,
			      0);
		}
		/* at most two batches outstanding (the send queue's depth) */
		while (done + XFER_BATCH < last || (last == n && done < n)) {
			wc_expect(c->scq, done, IBV_WC_SEND, "xfer Send");
			done++;
		}
	}
}

/* Receiver of xfer_sends: two batches of receives posted, one more per batch received. */
static void
xfer_recvs(struct conn *c, struct buf *b, size_t total)
{
	size_t n = (total + XFER_SEND - 1) / XFER_SEND, posted = 0;

	for (; posted < n && posted < 2 * XFER_BATCH; posted++)
		post_recv(c, posted, b, posted * XFER_SEND,
			  RTE_MIN_SZ(XFER_SEND, total - posted * XFER_SEND));
	oob_put(T_READY, 0, NULL, 0);
	for (size_t i = 0; i < n; i++) {
		size_t off = i * XFER_SEND, len = RTE_MIN_SZ(XFER_SEND, total - off);
		struct ibv_wc wc = wc_expect(c->rcq, i, IBV_WC_RECV, "xfer Send received");

		CHECK(wc.byte_len == len, "Send #%zu: byte_len %u, want %zu", i, wc.byte_len, len);
		if ((i + 1) % XFER_BATCH == 0 || i + 1 == n) {
			size_t stop = RTE_MIN_SZ(n, posted + XFER_BATCH);

			for (; posted < stop; posted++)
				post_recv(c, posted, b, posted * XFER_SEND,
					  RTE_MIN_SZ(XFER_SEND, total - posted * XFER_SEND));
			if ((i + 1) / XFER_BATCH + 1 < (n + XFER_BATCH - 1) / XFER_BATCH)
				oob_put(T_GO, 0, NULL, 0);
		}
	}
}

/*
 * @p n atomics on XFER_ATOMIC_TARGETS counters of the server's region, alternating
 * Fetch-and-Add and Compare-and-Swap with operands that depend on the index; the client
 * keeps the values the targets must hold and checks every returned original value.
 * @return the checksum of the targets' final values as the client computed them.
 */
static uint64_t
xfer_atomics(struct conn *c, struct buf *b, const struct rbuf *r, size_t n)
{
	uint64_t cur[XFER_ATOMIC_TARGETS], *res = (uint64_t *)b->p, want[DEPTH];
	size_t posted = 0, done = 0;

	for (unsigned int t = 0; t < XFER_ATOMIC_TARGETS; t++)
		cur[t] = 1000ull * t;
	while (done < n) {
		while (posted < n && posted - done < 64) {
			unsigned int t = (unsigned int)(posted % XFER_ATOMIC_TARGETS);
			uint64_t v = posted * 0x9e3779b97f4a7c15ull | 1;
			struct ibv_send_wr wr, *bad;
			struct ibv_sge sg = { (uintptr_t)&res[posted % DEPTH], 8, b->mr->lkey };
			int ret;

			memset(&wr, 0, sizeof(wr));
			wr.wr_id = posted;
			wr.sg_list = &sg;
			wr.num_sge = 1;
			wr.send_flags = IBV_SEND_SIGNALED;
			wr.wr.atomic.remote_addr = r->addr + 8 * t;
			wr.wr.atomic.rkey = r->rkey;
			want[posted % DEPTH] = cur[t];
			res[posted % DEPTH] = ~cur[t];
			if (posted % 2 == 0) {
				wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
				wr.wr.atomic.compare_add = v;
				cur[t] += v;
			} else {
				/* every other one compares against a stale value: no swap */
				wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
				wr.wr.atomic.compare_add = posted % 4 == 1 ? cur[t] : cur[t] + 1;
				wr.wr.atomic.swap = v;
				if (posted % 4 == 1)
					cur[t] = v;
			}
			ret = ibv_post_send(c->qp, &wr, &bad);
			CHECK(ret == 0, "atomic post %zu: %s", posted, strerror(ret));
			posted++;
		}
		wc_expect(c->scq, done, done % 2 == 0 ? IBV_WC_FETCH_ADD : IBV_WC_COMP_SWAP,
			  "xfer atomic");
		if (res[done % DEPTH] != want[done % DEPTH])
			fail("atomic #%zu returned 0x%" PRIx64 ", want 0x%" PRIx64, done,
			     res[done % DEPTH], want[done % DEPTH]);
		done++;
	}
	seen.octets_checked += 8 * n;
	return sum64((const uint8_t *)cur, sizeof(cur));
}

/* One operation of the matrix; both sides call it with the same @p op. */
static void
xfer_one(struct conn *c, const char *op)
{
	const size_t total = (size_t)o.mib << 20;
	const uint32_t seed = 0xa000 + (uint32_t)op[0];
	const uint64_t bound_ms = 1000ull * (o.bound != 0 ? o.bound : 60 + 2 * o.mib);
	bool atomic = strcmp(op, "atomic") == 0, ok = false;
	size_t natomic = (size_t)o.mib * 256, len = atomic ? 4096 : total;
	uint64_t t0, mine = 0, theirs;
	struct buf b;

	buf_alloc(c, &b, len, ACC_ALL | (atomic ? IBV_ACCESS_REMOTE_ATOMIC : 0));
	if (o.server) {
		/* the server is the target (write, send, atomic) or the source (read) */
		if (strcmp(op, "read") == 0) {
			pat_fill(b.p, total, seed, 0);
			mine = sum64(b.p, total);
		} else if (atomic) {
			for (unsigned int t = 0; t < XFER_ATOMIC_TARGETS; t++)
				((uint64_t *)b.p)[t] = 1000ull * t;
			pat_fill(b.p + 8 * XFER_ATOMIC_TARGETS, len - 8 * XFER_ATOMIC_TARGETS, 0xee,
				 0);
		} else {
			pat_fill(b.p, total, 0xee, 0); /* guard: what was not placed shows */
		}
		if (strcmp(op, "write") == 0)
			post_recv(c, 1u << 30, &b, 0, 0); /* the last Write's Immediate */
		oob_put_mr(&b);
		t0 = now_ms();
		if (strcmp(op, "send") == 0)
			xfer_recvs(c, &b, total);
		else if (strcmp(op, "write") == 0)
			wc_expect(c->rcq, 1u << 30, IBV_WC_RECV_RDMA_WITH_IMM, "xfer Write's end");
		theirs = oob_get(T_RESULT).val;
		if (atomic) {
			mine = sum64(b.p, 8 * XFER_ATOMIC_TARGETS);
			pat_check(b.p + 8 * XFER_ATOMIC_TARGETS, len - 8 * XFER_ATOMIC_TARGETS, 0xee,
				  0, "octets beside the atomic targets");
		} else if (strcmp(op, "read") != 0) {
			mine = sum64(b.p, total);
			pat_check(b.p, total, seed, 0, op);
		}
		ok = mine == theirs;
		oob_put(T_RESULT, ok, NULL, mine);
	} else {
		struct rbuf r = oob_get_mr();

		if (strcmp(op, "read") == 0)
			pat_fill(b.p, total, 0xee, 0);
		else if (!atomic)
			pat_fill(b.p, total, seed, 0);
		if (strcmp(op, "send") == 0)
			oob_get(T_READY);
		t0 = now_ms();
		if (strcmp(op, "write") == 0) {
			mine = sum64(b.p, total);
			xfer_rdma(c, &b, &r, total, true);
		} else if (strcmp(op, "read") == 0) {
			xfer_rdma(c, &b, &r, total, false);
			mine = sum64(b.p, total);
			pat_check(b.p, total, seed, 0, op);
		} else if (strcmp(op, "send") == 0) {
			mine = sum64(b.p, total);
			xfer_sends(c, &b, total);
		} else {
			mine = xfer_atomics(c, &b, &r, natomic);
		}
		oob_put(T_RESULT, 0, NULL, mine);
		theirs = oob_get(T_RESULT).val;
		ok = mine == theirs;
	}
	if (!ok)
		fail("xfer %s: checksums differ: here 0x%016" PRIx64 ", peer 0x%016" PRIx64, op, mine,
		     theirs);
	if (seen.nxfer < RTE_DIM_SZ(seen.xfer)) {
		seen.xfer[seen.nxfer].op = op;
		seen.xfer[seen.nxfer].octets = atomic ? 8 * natomic : total;
		seen.xfer[seen.nxfer].ops = atomic ? natomic
			: (total + (strcmp(op, "send") == 0 ? XFER_SEND : XFER_OP) - 1) /
			  (strcmp(op, "send") == 0 ? XFER_SEND : XFER_OP);
		seen.xfer[seen.nxfer].ms = now_ms() - t0;
		seen.xfer[seen.nxfer].sum = mine;
		seen.nxfer++;
	}
	note("xfer %s: %s verified in %.1f s, checksum 0x%016" PRIx64 " at both ends", op,
	     atomic ? "atomics" : "octets", (now_ms() - t0) / 1000.0, mine);
	if (now_ms() - t0 > bound_ms)
		fail("xfer %s took %.1f s, more than its bound of %" PRIu64 " s", op,
		     (now_ms() - t0) / 1000.0, bound_ms / 1000);
	oob_put(T_DONE, 0, NULL, 0); /* both wait here: the buffer goes only when both are done */
	oob_get(T_DONE);
	buf_free(&b);
}

static void
case_xfer(void)
{
	const char *all = "write,read,send,atomic";
	char list[64], *save = NULL, *op;
	struct conn c;

	CHECK(strlen(o.ops != NULL ? o.ops : all) < sizeof(list), "--ops too long");
	strcpy(list, o.ops != NULL ? o.ops : all);
	/* the peer may be busy with one operation for as long as its bound */
	oob_wait_ms = (int)(1000 * (o.bound != 0 ? o.bound : 60 + 2 * o.mib)) + 45000;
	wc_wait_ms = oob_wait_ms; /* the server's one completion may end a whole operation */
	conn_up(&c, NULL);
	note("XFER connected");
	for (op = strtok_r(list, ",", &save); op != NULL; op = strtok_r(NULL, ",", &save)) {
		static const char *const known[] = { "write", "read", "send", "atomic" };
		const char *name = NULL;

		for (size_t i = 0; i < RTE_DIM_SZ(known); i++)
			if (strcmp(op, known[i]) == 0)
				name = known[i];
		if (name == NULL)
			fail("--ops: unknown operation '%s'", op);
		xfer_one(&c, name);
	}
	conn_down(&c);
	conn_free(&c);
}

/* Client of the kill case: Writes and Reads until killed (at most 50 s). */
static void
case_stream(void)
{
	const size_t op = 256 * 1024;
	struct conn c;
	struct buf b;
	struct rbuf r;
	uint64_t end = now_ms() + 50000, round = 0;

	CHECK(!o.server, "stream is the client side of 'kill'");
	conn_up(&c, NULL);
	buf_alloc(&c, &b, 2 * op, ACC_ALL);
	r = oob_get_mr();
	pat_fill(b.p, op, 0xd00, 0);
	while (now_ms() < end) {
		post1(&c, IBV_WR_RDMA_WRITE, 1, &b, 0, op, r.addr, r.rkey, 0);
		post1(&c, IBV_WR_RDMA_READ, 2, &b, op, op, r.addr, r.rkey, 0);
		wc_expect(c.scq, 1, IBV_WC_RDMA_WRITE, "stream Write");
		wc_expect(c.scq, 2, IBV_WC_RDMA_READ, "stream Read");
		if (round++ == 0) {
			pat_check(b.p + op, op, 0xd00, 0, "stream Read");
			note("STREAMING");
		}
	}
	fail("not killed within 50 s");
}

static void
prepost_kill(struct conn *c)
{
	c->pre = calloc(1, sizeof(*c->pre));
	CHECK(c->pre != NULL);
	buf_alloc(c, c->pre, 4096, ACC_ALL);
	for (int i = 0; i < 4; i++)
		post_recv(c, 70 + (uint64_t)i, c->pre, 1024 * (size_t)i, 1024);
}

static void
case_kill(void)
{
	struct sizes sz = { basic_sizes, sizeof(basic_sizes) / sizeof(basic_sizes[0]) };
	struct conn c;
	struct buf b;

	CHECK(o.server, "kill is the server side (the client runs 'stream', then 'basic')");
	conn_up(&c, prepost_kill);
	buf_alloc(&c, &b, 256 * 1024, ACC_ALL);
	oob_put_mr(&b);
	note("first connection up; waiting for its client to die");
	wait_disconnected("server (client killed)");
	expect_recv_flush(&c, 70, 4, "server (client killed)");
	buf_free(&b);
	conn_free(&c);
	/* a new client on a new connection: everything works as before */
	oob_accept();
	conn_up(&c, NULL);
	run_data(&c, &sz);
	conn_down(&c);
	conn_free(&c);
	note("second connection after the kill: data verified");
}

/* ---------------------------------------------------------------- refused */

/*
 * The connection cannot be established (e.g. an enhanced initiator and a Rev 1 responder,
 * RFC 6581 §10): the client's connect ends in an error event, the server's application
 * never sees a CONNECT_REQUEST.
 */
static void
case_refused(void)
{
	if (o.server) {
		struct pollfd pf;

		oob_put(T_LISTENING, 0, NULL, 0);
		oob_get(T_DONE);
		pf = (struct pollfd){ .fd = ec->fd, .events = POLLIN };
		if (poll(&pf, 1, 0) == 1) {
			struct rdma_cm_event *ev;

			CHECK(rdma_get_cm_event(ec, &ev) == 0);
			fail("listener got %s for a connection that must fail",
			     rdma_event_str(ev->event));
		}
		note("no CONNECT_REQUEST reached the application");
	} else {
		struct sockaddr_in sa;
		struct pollfd pf;
		struct rdma_cm_event *ev;
		struct rdma_cm_id *id;
		struct conn c;

		oob_get(T_LISTENING);
		ec = rdma_create_event_channel();
		CHECK(ec != NULL);
		CHECK(rdma_create_id(ec, &id, NULL, RDMA_PS_TCP) == 0);
		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		sa.sin_port = htons((uint16_t)(o.port + (o.closed ? 1 : 0)));
		CHECK(inet_pton(AF_INET, o.addr, &sa.sin_addr) == 1);
		CHECK(rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa, 5000) == 0);
		cm_wait(RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
		CHECK(rdma_resolve_route(id, 5000) == 0);
		cm_wait(RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
		memset(&c, 0, sizeof(c));
		conn_res(&c, id, NULL);
		post_recv(&c, 80, NULL, 0, 0);
		CHECK(rdma_connect(id, NULL) == 0, "%s", strerror(errno));
		pf = (struct pollfd){ .fd = ec->fd, .events = POLLIN };
		CHECK(poll(&pf, 1, WAIT_MS) == 1, "no event for the failing connect");
		CHECK(rdma_get_cm_event(ec, &ev) == 0);
		count_cm_event(ev->event);
		note("connect ended with %s (status %d)", rdma_event_str(ev->event), ev->status);
		if (ev->event != RDMA_CM_EVENT_CONNECT_ERROR &&
		    ev->event != RDMA_CM_EVENT_REJECTED && ev->event != RDMA_CM_EVENT_UNREACHABLE)
			fail("connect ended with %s", rdma_event_str(ev->event));
		rdma_ack_cm_event(ev);
		oob_put(T_DONE, 0, NULL, 0);
		/* the QP of a failed connect goes to Error, flushing its receive (as siw's) */
		expect_recv_flush(&c, 80, 1, "client (failed connect)");
		conn_free(&c);
	}
}

/* ---------------------------------------------------------------- srq */

#define SRQ_MSGS  64
#define SRQ_SZ    4096
#define SRQ_LIMIT 16

/*
 * Shared receive queue through the shim: each side's QP is created on an SRQ (no receive
 * queue of its own: ibv_post_recv on it fails); the server posts one receive per message to
 * its SRQ, the client Sends, and every message lands in the SRQ's buffers in order,
 * octet for octet.
 */
static void
case_srq(void)
{
	struct conn c;
	struct buf b;

	conn_up(&c, NULL);
	buf_alloc(&c, &b, (size_t)SRQ_MSGS * SRQ_SZ, ACC_ALL);
	if (o.server) {
		struct ibv_sge sg = { (uintptr_t)b.p, SRQ_SZ, b.mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = 999, .sg_list = &sg, .num_sge = 1 }, *bad;
		struct ibv_srq_attr sa;
		struct ibv_wc wc;

		CHECK(ibv_post_recv(c.qp, &wr, &bad) != 0, "ibv_post_recv on a QP with an SRQ");
		for (unsigned int i = 0; i < SRQ_MSGS; i++) {
			sg.addr = (uintptr_t)(b.p + (size_t)i * SRQ_SZ);
			wr.wr_id = i;
			CHECK(ibv_post_srq_recv(c.srq, &wr, &bad) == 0, "ibv_post_srq_recv %u", i);
		}
		CHECK(ibv_query_srq(c.srq, &sa) == 0, "ibv_query_srq: %s", strerror(errno));
		CHECK(sa.max_wr >= SRQ_MSGS, "SRQ max_wr %u", sa.max_wr);
		/* IBV_SRQ_LIMIT: one IBV_EVENT_SRQ_LIMIT_REACHED once fewer WQEs remain */
		sa.srq_limit = SRQ_LIMIT;
		CHECK(ibv_modify_srq(c.srq, &sa, IBV_SRQ_LIMIT) == 0, "ibv_modify_srq");
		CHECK(ibv_query_srq(c.srq, &sa) == 0 && sa.srq_limit == SRQ_LIMIT,
		      "armed limit %u", sa.srq_limit);
		oob_put(T_READY, 0, NULL, 0);
		for (unsigned int i = 0; i < SRQ_MSGS; i++) {
			wc_get(c.rcq, &wc, "SRQ receive");
			CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			      wc.wr_id == i && wc.byte_len == SRQ_SZ,
			      "SRQ receive %u: status %d opcode %d wr_id %" PRIu64 " len %u", i,
			      wc.status, wc.opcode, wc.wr_id, wc.byte_len);
			pat_check(b.p + (size_t)i * SRQ_SZ, SRQ_SZ, 0x700 + i, 0, "SRQ receive");
		}
		note("srq: %d Sends received through the SRQ, in order", SRQ_MSGS);
		async_expect(c.ctx, IBV_EVENT_SRQ_LIMIT_REACHED, NULL, c.srq, "SRQ limit");
		CHECK(ibv_query_srq(c.srq, &sa) == 0 && sa.srq_limit == 0,
		      "limit %u still armed after its event", sa.srq_limit);
	} else {
		oob_get(T_READY);
		for (unsigned int i = 0; i < SRQ_MSGS; i++) {
			pat_fill(b.p + (size_t)i * SRQ_SZ, SRQ_SZ, 0x700 + i, 0);
			post1(&c, IBV_WR_SEND, i, &b, (size_t)i * SRQ_SZ, SRQ_SZ, 0, 0, 0);
			wc_expect(c.scq, i, IBV_WC_SEND, "Send to the peer's SRQ");
		}
	}
	conn_down(&c);
	buf_free(&b);
}

/* ---------------------------------------------------------------- receiver not ready */

#define RNR_MSGS 32
#define RNR_SZ   (16 * 1024) /* a dozen DDP segments each */
#define RNR_STOP_RECVS 4     /* stopped: the receives the server posts and never polls */
#define RNR_STOP_MSGS  192   /* ... the Sends the client posts: 3 MiB */
#define RNR_STOP_DONE  100   /* ... of which TCP took this many before it disconnects */

static void
rnr_post(struct conn *c, struct buf *b, unsigned int i)
{
	struct ibv_sge sg = { (uintptr_t)(b->p + (size_t)i * RNR_SZ), RNR_SZ, b->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sg, .num_sge = 1 }, *bad;

	if (c->srq != NULL)
		CHECK(ibv_post_srq_recv(c->srq, &wr, &bad) == 0, "ibv_post_srq_recv %u", i);
	else
		post_recv_sges(c, i, &sg, 1);
}

/*
 * Receiver not ready (warpnicd --rnr-hold-ms): the client Sends RNR_MSGS messages at once to
 * a server that has posted no receive yet. "wait": the server posts them late, some one by
 * one, the rest at once; every Send must complete and land octet for octet, in order (its
 * warpnicd held the stream meanwhile). "never": the server posts none; the client's Send
 * must fail (the Terminate "no buffer" after the hold, or at once with --rnr-hold-ms 0) and
 * both sides see the connection end. "closed": the server posts none and waits for the
 * disconnect (as qperf's server does when its test ends), the client Sends once and
 * disconnects: the server's DISCONNECTED must not wait out the hold (its warpnicd runs with
 * a hold far longer than WAIT_MS): the peer's end waits behind a held Send at most
 * DP_RNR_EOF_US. "stopped": as qperf's rc_bw ends, the server has posted a few receives
 * and stops polling (their completions wait in its CQ) while the client Sends far more, then
 * disconnects: the client's end waits behind more Sends than the held stream's window and
 * its own send buffer take (RNR_STOP_DONE Sends of RNR_SZ taken by TCP, more than warpnicd's
 * 1 MiB receive buffer), so the server's DISCONNECTED comes only because its warpnicd gives
 * up the hold of a consumer that stopped (DP_RNR_IDLE_US). The RQ variant is "rnr", the SRQ
 * one "rnr_srq".
 */
static void
case_rnr(void)
{
	bool stopped = strcmp(o.rnr, "stopped") == 0;
	bool closed = strcmp(o.rnr, "closed") == 0;
	bool never = stopped || closed || strcmp(o.rnr, "never") == 0;
	struct conn c;
	struct buf b;

	if (!never && strcmp(o.rnr, "wait") != 0)
		fail("unknown --rnr %s", o.rnr);
	conn_up(&c, NULL);
	buf_alloc(&c, &b, (size_t)RNR_MSGS * RNR_SZ, ACC_ALL);
	if (o.server && stopped) {
		for (unsigned int i = 0; i < RNR_STOP_RECVS; i++)
			rnr_post(&c, &b, i);
		oob_put(T_READY, 0, NULL, 0);
		wait_disconnected("receiver that stopped polling, its peer gone");
		note("rnr stopped: the peer's disconnect did not wait for the hold");
	} else if (stopped) {
		struct ibv_wc wc;

		oob_get(T_READY);
		pat_fill(b.p, RNR_SZ, 0x900, 0);
		for (unsigned int i = 0; i < RNR_STOP_MSGS; i++)
			post1(&c, IBV_WR_SEND, i, &b, 0, RNR_SZ, 0, 0, 0);
		for (unsigned int i = 0; i < RNR_STOP_DONE; i++) {
			wc_get(c.scq, &wc, "Send into a full window");
			CHECK(wc.status == IBV_WC_SUCCESS, "Send %u: %s", i, wc_str(wc.status));
		}
		note("rnr stopped: %d of %d Sends taken by TCP; disconnecting", RNR_STOP_DONE,
		     RNR_STOP_MSGS);
		CHECK(rdma_disconnect(c.id) == 0, "%s", strerror(errno));
		wait_disconnected("sender");
	} else if (o.server && closed) {
		oob_put(T_READY, 0, NULL, 0);
		wait_disconnected("receiver without receives, its peer gone");
		note("rnr closed: the peer's disconnect did not wait for the hold");
	} else if (closed) {
		struct ibv_wc wc;

		oob_get(T_READY);
		pat_fill(b.p, RNR_SZ, 0x900, 0);
		post1(&c, IBV_WR_SEND, 0, &b, 0, RNR_SZ, 0, 0, 0);
		wc_get(c.scq, &wc, "Send without a receive");
		note("rnr closed: the Send completed %s; disconnecting", wc_str(wc.status));
		CHECK(rdma_disconnect(c.id) == 0, "%s", strerror(errno));
		wait_disconnected("sender");
	} else if (o.server && never) {
		oob_put(T_READY, 0, NULL, 0);
		wait_disconnected("receiver without receives");
		note("rnr never: the connection ended, no receive was posted");
	} else if (o.server) {
		struct ibv_wc wc;

		oob_put(T_READY, 0, NULL, 0);
		usleep(300 * 1000); /* the Sends arrive and wait */
		for (unsigned int i = 0; i < RNR_MSGS; i++) {
			rnr_post(&c, &b, i);
			if (i < RNR_MSGS / 2)
				usleep(20 * 1000); /* one by one: the stream is held again each time */
		}
		for (unsigned int i = 0; i < RNR_MSGS; i++) {
			wc_get(c.rcq, &wc, "late receive");
			CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			      wc.wr_id == i && wc.byte_len == RNR_SZ,
			      "late receive %u: status %s opcode %d wr_id %" PRIu64 " len %u", i,
			      wc_str(wc.status), wc.opcode, wc.wr_id, wc.byte_len);
			pat_check(b.p + (size_t)i * RNR_SZ, RNR_SZ, 0x900 + i, 0, "late receive");
		}
		note("rnr wait: %d Sends waited for their receives and landed in order",
		     RNR_MSGS);
	} else if (never) {
		struct ibv_wc wc;

		oob_get(T_READY);
		post_recv(&c, 50, &b, RNR_SZ, 64); /* flushed when the Terminate arrives */
		pat_fill(b.p, RNR_SZ, 0x900, 0);
		/* completes once TCP has it (RFC 5040: the LLP took it), before any verdict */
		post1(&c, IBV_WR_SEND, 0, &b, 0, RNR_SZ, 0, 0, 0);
		wc_get(c.scq, &wc, "Send without a receive");
		note("rnr never: the Send completed %s", wc_str(wc.status));
		wait_disconnected("sender");
		expect_recv_flush(&c, 50, 1, "sender");
	} else {
		oob_get(T_READY);
		for (unsigned int i = 0; i < RNR_MSGS; i++) {
			pat_fill(b.p + (size_t)i * RNR_SZ, RNR_SZ, 0x900 + i, 0);
			post1(&c, IBV_WR_SEND, i, &b, (size_t)i * RNR_SZ, RNR_SZ, 0, 0, 0);
		}
		for (unsigned int i = 0; i < RNR_MSGS; i++)
			wc_expect(c.scq, i, IBV_WC_SEND, "Send to a receiver not ready");
	}
	if (!never)
		conn_down(&c);
	buf_free(&b);
	if (never)
		conn_free(&c);
}

/* ---------------------------------------------------------------- limits */

#define LIMIT_POST (4 * DEPTH)  /* work requests in one chain: more than a queue holds */
#define LIMIT_MRS  70000        /* registrations tried: more than a region table holds */

/*
 * Exhaustion (issue 15): a client posts a chain of Writes and one of receives longer than
 * its queues (ENOMEM, *bad_wr the first that did not fit, the ones before it work) and
 * registers MRs until the region table is full (NULL with ENOMEM or ENOSPC); after all of
 * it, with everything deregistered, a registration and a Write work again.
 */
static void
case_limits(void)
{
	struct conn c;
	struct buf b;

	conn_up(&c, NULL);
	buf_alloc(&c, &b, 1 << 20, ACC_ALL);
	if (o.server) {
		oob_put_mr(&b);
		oob_get(T_DONE);
		note("limits: the client's Writes landed");
	} else {
		static struct ibv_send_wr w[LIMIT_POST];
		static struct ibv_recv_wr rw[LIMIT_POST];
		static struct ibv_mr *mrs[LIMIT_MRS];
		struct rbuf r = oob_get_mr();
		struct ibv_send_wr *bad;
		struct ibv_recv_wr *rbad;
		struct ibv_device_attr da;
		struct ibv_sge sg = { (uintptr_t)b.p, 64, b.mr->lkey };
		size_t k, n;
		int ret, err;

		memset(w, 0, sizeof(w));
		for (k = 0; k < LIMIT_POST; k++) {
			w[k].wr_id = k;
			w[k].opcode = IBV_WR_RDMA_WRITE;
			w[k].sg_list = &sg;
			w[k].num_sge = 1;
			w[k].send_flags = IBV_SEND_SIGNALED;
			w[k].wr.rdma.remote_addr = r.addr + 64 * (k % 1024);
			w[k].wr.rdma.rkey = r.rkey;
			w[k].next = k + 1 < LIMIT_POST ? &w[k + 1] : NULL;
		}
		ret = ibv_post_send(c.qp, w, &bad);
		CHECK(ret == ENOMEM && bad != NULL, "post_send beyond the SQ: %d", ret);
		n = (size_t)(bad - w);
		CHECK(n >= DEPTH && n < LIMIT_POST, "SQ took %zu of %d", n, LIMIT_POST);
		for (k = 0; k < n; k++)
			wc_expect(c.scq, k, IBV_WC_RDMA_WRITE, "Write that fitted the SQ");
		note("SQ: %zu Writes posted, then ENOMEM; all completed", n);

		memset(rw, 0, sizeof(rw));
		for (k = 0; k < LIMIT_POST; k++) {
			rw[k].wr_id = 1000000 + k;
			rw[k].sg_list = &sg;
			rw[k].num_sge = 1;
			rw[k].next = k + 1 < LIMIT_POST ? &rw[k + 1] : NULL;
		}
		ret = ibv_post_recv(c.qp, rw, &rbad);
		CHECK(ret == ENOMEM && rbad != NULL, "post_recv beyond the RQ: %d", ret);
		n = (size_t)(rbad - rw);
		CHECK(n >= DEPTH && n < LIMIT_POST, "RQ took %zu of %d", n, LIMIT_POST);
		note("RQ: %zu receives posted, then ENOMEM", n);

		for (n = 0; n < LIMIT_MRS; n++) {
			mrs[n] = ibv_reg_mr(c.pd, b.p, 4096, IBV_ACCESS_LOCAL_WRITE);
			if (mrs[n] == NULL)
				break;
		}
		err = errno;
		CHECK(n < LIMIT_MRS, "%d MRs registered: no limit", LIMIT_MRS);
		CHECK(ibv_query_device(c.ctx, &da) == 0);
		/* the device's max_mr holds: all of them (but the client's own) fit */
		CHECK(n + 1 <= (size_t)da.max_mr && n + 8 >= (size_t)da.max_mr &&
		      (err == ENOMEM || err == ENOSPC),
		      "MR %zu refused (max_mr %d) with %s", n, da.max_mr, strerror(err));
		note("MRs: %zu registered, the next refused (%s)", n, strerror(err));
		for (k = 0; k < n; k++)
			CHECK(ibv_dereg_mr(mrs[k]) == 0, "dereg MR %zu", k);
		/* healthy afterwards: a registration and a Write */
		mrs[0] = ibv_reg_mr(c.pd, b.p, 4096, IBV_ACCESS_LOCAL_WRITE);
		CHECK(mrs[0] != NULL, "ibv_reg_mr after the limit: %s", strerror(errno));
		CHECK(ibv_dereg_mr(mrs[0]) == 0);
		post1(&c, IBV_WR_RDMA_WRITE, 7, &b, 0, 4096, r.addr, r.rkey, 0);
		wc_expect(c.scq, 7, IBV_WC_RDMA_WRITE, "Write after the limits");
		oob_put(T_DONE, 0, NULL, 0);
	}
	conn_down(&c);
	buf_free(&b);
}

/* ---------------------------------------------------------------- crc */

#define CRC_OP     (256 * 1024)
#define CRC_WRITES 16
#define CRC_GOOD   2 /* Writes placed before the mangled one */

static void
case_crc(void)
{
	const size_t total = (size_t)CRC_OP * CRC_WRITES;
	struct conn c;
	struct buf b;

	conn_up(&c, NULL);
	buf_alloc(&c, &b, total, ACC_ALL);
	if (o.server) {
		size_t good = (size_t)CRC_OP * CRC_GOOD;

		pat_fill(b.p, total, 0xee, 0);
		post_recv(&c, 40, &b, 0, 64); /* for the client's Send: never consumed */
		oob_put_mr(&b);
		wait_disconnected("target of the corrupted FPDU");
		expect_recv_flush(&c, 40, 1, "target of the corrupted FPDU");
		async_expect(c.ctx, IBV_EVENT_QP_FATAL, c.qp, NULL,
			     "target of the corrupted FPDU");
		pat_check(b.p, good, 0xc3c, 0, "the Writes before the corrupted one");
		pat_check(b.p + good, total - good, 0xee, good,
			  "the region from the corrupted FPDU on (nothing placed)");
		note("crc: %zu octets placed before the corrupted FPDU, none of it or after it",
		     good);
	} else {
		struct rbuf r = oob_get_mr();
		uint64_t flushed = 0;
		int rc;

		pat_fill(b.p, total, 0xc3c, 0);
		post_recv(&c, 50, &b, 0, 64); /* flushed when the connection ends */
		for (size_t i = 0; i < CRC_GOOD; i++)
			post1(&c, IBV_WR_RDMA_WRITE, i, &b, i * CRC_OP, CRC_OP, r.addr + i * CRC_OP,
			      r.rkey, 0);
		for (size_t i = 0; i < CRC_GOOD; i++)
			wc_expect(c.scq, i, IBV_WC_RDMA_WRITE, "Write before the mangling");
		/* the Read Response comes after the Writes were placed and acknowledges all our
		 * data: nothing is left to retransmit, the next segment with data is new */
		post1(&c, IBV_WR_RDMA_READ, 99, &b, total - 8, 8, r.addr, r.rkey, 0);
		wc_expect(c.scq, 99, IBV_WC_RDMA_READ, "Read behind the first Writes");
		CHECK(o.hook != NULL, "crc needs --hook (arming the fault injector)");
		rc = system(o.hook);
		note("crc: hook '%s' exited %d", o.hook, rc);
		CHECK(rc == 0, "--hook failed");
		for (size_t i = CRC_GOOD; i < CRC_WRITES; i++)
			post1(&c, IBV_WR_RDMA_WRITE, i, &b, i * CRC_OP, CRC_OP, r.addr + i * CRC_OP,
			      r.rkey, 0);
		post1(&c, IBV_WR_SEND, 100, &b, 0, 64, 0, 0, 0);
		/* Writes TCP took before the Terminate came back complete; the rest is flushed */
		for (size_t i = CRC_GOOD; i < CRC_WRITES + 1; i++) {
			struct ibv_wc wc;

			wc_get(c.scq, &wc, "Writes after the mangling");
			if (wc.status == IBV_WC_WR_FLUSH_ERR)
				flushed++;
			else if (wc.status != IBV_WC_SUCCESS)
				fail("wr %" PRIu64 ": %s", wc.wr_id, wc_str(wc.status));
		}
		CHECK(flushed > 0, "no Write after the corrupted one was flushed");
		wait_disconnected("sender of the corrupted FPDU");
		expect_recv_flush(&c, 50, 1, "sender of the corrupted FPDU");
		async_expect(c.ctx, IBV_EVENT_QP_FATAL, c.qp, NULL,
			     "sender of the corrupted FPDU");
		note("crc: %" PRIu64 " work requests flushed after the Terminate", flushed);
	}
	buf_free(&b);
	conn_free(&c);
}

/* ---------------------------------------------------------------- main */

/* ---------------------------------------------------------------- InfiniBand-style cases */

#define EARLY_N   8    /* Sends posted before the connection */
#define EARLY_LEN 1000

static void
prepost_early(struct conn *c)
{
	c->pre = calloc(1, sizeof(*c->pre));
	CHECK(c->pre != NULL);
	buf_alloc(c, c->pre, EARLY_N * 1024, ACC_ALL);
	for (int i = 0; i < EARLY_N; i++)
		post_recv(c, 200 + (uint64_t)i, c->pre, 1024 * (size_t)i, 1024);
}

/* Sends posted right after RTS: nothing completes before the connection, then all do. */
static void
early_send(struct conn *c, struct buf *b, const char *who)
{
	char w[64];

	for (int i = 0; i < EARLY_N; i++) {
		pat_fill(b->p + 1024 * i, EARLY_LEN, 0xe00 + (uint32_t)i, 0);
		post1(c, IBV_WR_SEND, 100 + (uint64_t)i, b, 1024 * (size_t)i, EARLY_LEN, 0, 0, 0);
	}
	wc_none(c->scq, "Sends posted before the peer's QP reached RTR");
	oob_put(T_SENT, 0, NULL, 0);
	for (int i = 0; i < EARLY_N; i++) {
		snprintf(w, sizeof(w), "%s: early Send %d", who, i);
		wc_expect(c->scq, 100 + (uint64_t)i, IBV_WC_SEND, w);
	}
	note("%s: %d Sends posted before the connection completed", who, EARLY_N);
}

static void
early_recv(struct conn *c, const char *who)
{
	struct ibv_wc wc;
	char w[64];

	for (int i = 0; i < EARLY_N; i++) {
		snprintf(w, sizeof(w), "%s: early Send %d received", who, i);
		wc = wc_expect(c->rcq, 200 + (uint64_t)i, IBV_WC_RECV, w);
		CHECK(wc.byte_len == EARLY_LEN, "%s: byte_len %u", w, wc.byte_len);
		pat_check(c->pre->p + 1024 * i, EARLY_LEN, 0xe00 + (uint32_t)i, 0, w);
	}
	note("%s: %d early Sends received and checked", who, EARLY_N);
}

/* The end that waits for the peer posts first, then the end that connects (see the top). */
static void
case_ib_early(void)
{
	struct ib_dest me, peer;
	struct conn c;
	struct buf b;

	/* the client's QP waits for the server's request; its Sends wait for the connection */
	peer = ib_prepare(&c, prepost_early, &me);
	buf_alloc(&c, &b, EARLY_N * 1024, ACC_ALL);
	if (o.server) {
		oob_get(T_SENT);
		ib_rtr_rts(&c, &me, &peer);
		early_recv(&c, "server");
	} else {
		ib_rtr_rts(&c, &me, &peer);
		early_send(&c, &b, "client");
	}
	conn_down(&c);
	buf_free(&b);
	conn_free(&c);

	/* the server's QP connects and posts; the client's reaches RTR once its request waits */
	peer = ib_prepare(&c, prepost_early, &me);
	buf_alloc(&c, &b, EARLY_N * 1024, ACC_ALL);
	if (o.server) {
		ib_rtr_rts(&c, &me, &peer);
		early_send(&c, &b, "server");
	} else {
		uint64_t end = now_ms() + WAIT_MS;

		oob_get(T_SENT);
		CHECK(o.tel != NULL, "ib_early needs --tel (the client's warpnicd)");
		while (tel_get("/warpnic/dp/stats", "ib_held") < 1) {
			if (now_ms() > end)
				fail("the server's request was never held by the client's warpnicd");
			nap_us(10000);
		}
		ib_rtr_rts(&c, &me, &peer);
		early_recv(&c, "client");
	}
	conn_down(&c);
	buf_free(&b);
	conn_free(&c);
}

/*
 * A peer that never reaches RTR: the client's Sends fail as InfiniBand's retry exhaustion
 * fails them, its receives are flushed and the QP is in Error. Twice: the client waits for
 * the server's first address, then connects to its second (--ib-gid 1 on the server's side).
 */
static void
case_ib_never(void)
{
	for (int phase = 0; phase < 2; phase++) {
		struct ib_dest me, peer;
		struct conn c;

		o.ib_gid = phase;
		peer = ib_prepare(&c, NULL, &me);
		if (o.server) {
			oob_get(T_DONE); /* its QP stays in INIT */
		} else {
			struct ibv_qp_attr qa;
			struct ibv_qp_init_attr qi;
			struct ibv_wc wc;
			struct buf b;
			char w[64];

			buf_alloc(&c, &b, 4096, ACC_ALL);
			post_recv(&c, 10, &b, 2048, 1024);
			post_recv(&c, 11, &b, 3072, 1024);
			ib_rtr_rts(&c, &me, &peer);
			for (int i = 0; i < 3; i++)
				post1(&c, IBV_WR_SEND, 1 + (uint64_t)i, &b, 0, 100, 0, 0, 0);
			snprintf(w, sizeof(w), "phase %d: the first Send", phase);
			wc_get(c.scq, &wc, w);
			CHECK(wc.status == IBV_WC_RETRY_EXC_ERR && wc.wr_id == 1 &&
			      wc.opcode == IBV_WC_SEND, "%s: wr_id %" PRIu64 " %s opcode %d", w,
			      wc.wr_id, wc_str(wc.status), wc.opcode);
			for (int i = 1; i < 3; i++) {
				wc_get(c.scq, &wc, "the other Sends");
				CHECK(wc.status == IBV_WC_WR_FLUSH_ERR &&
				      wc.wr_id == 1 + (uint64_t)i, "Send %d: %s", i, wc_str(wc.status));
			}
			for (int i = 0; i < 2; i++) {
				wc_get(c.rcq, &wc, "the receives");
				CHECK(wc.status == IBV_WC_WR_FLUSH_ERR &&
				      wc.wr_id == 10 + (uint64_t)i, "receive %d: %s", i,
				      wc_str(wc.status));
			}
			CHECK(ibv_query_qp(c.qp, &qa, IBV_QP_STATE, &qi) == 0);
			CHECK(qa.qp_state == IBV_QPS_ERR, "QP state %d, want ERR", qa.qp_state);
			note("phase %d: RETRY_EXC_ERR, the rest flushed, the QP in Error", phase);
			buf_free(&b);
			oob_put(T_DONE, 0, NULL, 0);
		}
		conn_free(&c);
	}
}

/*
 * InfiniBand RC completions: a Write into a region without remote write rights completes with
 * IBV_WC_REM_ACCESS_ERR (the peer's Terminate, its cause in vendor_err), the Write behind it
 * with WR_FLUSH_ERR; the target region is untouched.
 */
static void
case_ib_viol(void)
{
	struct conn c;
	struct buf b;

	conn_up(&c, NULL);
	if (o.server) {
		buf_alloc(&c, &b, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
		pat_fill(b.p, b.len, 0x77, 0);
		oob_put_mr(&b);
		oob_get(T_DONE);
		pat_check(b.p, b.len, 0x77, 0, "the region the Writes had no right to");
	} else {
		struct rbuf r = oob_get_mr();
		struct ibv_wc wc;

		buf_alloc(&c, &b, 4096, ACC_ALL);
		post1(&c, IBV_WR_RDMA_WRITE, 1, &b, 0, 1000, r.addr, r.rkey, 0);
		post1(&c, IBV_WR_RDMA_WRITE, 2, &b, 1000, 1000, r.addr + 1000, r.rkey, 0);
		wc_get(c.scq, &wc, "the Write without rights");
		CHECK(wc.wr_id == 1 && wc.status == IBV_WC_REM_ACCESS_ERR,
		      "wr_id %" PRIu64 ": %s, want a remote access error", wc.wr_id,
		      wc_str(wc.status));
		CHECK(wc.vendor_err == 0x102, "vendor_err 0x%x, want 0x102 (RDMAP, protection, "
		      "access rights)", wc.vendor_err);
		wc_get(c.scq, &wc, "the Write behind it");
		CHECK(wc.wr_id == 2 && wc.status == IBV_WC_WR_FLUSH_ERR, "wr_id %" PRIu64 ": %s",
		      wc.wr_id, wc_str(wc.status));
		note("client: REM_ACCESS_ERR, then WR_FLUSH_ERR");
		oob_put(T_DONE, 0, NULL, 0);
	}
	buf_free(&b);
	conn_free(&c);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "basic", case_basic },	{ "ops", case_ops },	      { "atomics", case_atomics },
	{ "send_inv", case_send_inv },	{ "mw", case_mw },	      { "frmr", case_frmr },	      { "ordneg", case_ordneg },    { "viol", case_viol },
	{ "flush", case_flush },	{ "flush_late", case_flush }, { "bulk", case_bulk },
	{ "stream", case_stream },	{ "kill", case_kill },	      { "refused", case_refused },
	{ "xfer", case_xfer },		{ "crc", case_crc },	      { "limits", case_limits },
	{ "srq", case_srq },		{ "rnr", case_rnr },	      { "rnr_srq", case_rnr },
	{ "ib_early", case_ib_early },	{ "ib_never", case_ib_never },	{ "ib_viol", case_ib_viol },
};

/* --json FILE: this side's counters (atexit: also after a failed check) */
static void
json_write(void)
{
	FILE *f = fopen(o.json, "w");

	if (f == NULL) {
		fprintf(stderr, "rnic_it: %s: %s\n", o.json, strerror(errno));
		return;
	}
	fprintf(f, "{\"role\": \"%s\", \"case\": \"%s\", \"result\": \"%s\",\n", role, o.cs,
		seen.passed ? "pass" : "fail");
	fprintf(f, " \"wc_success\": %" PRIu64 ", \"wc_flushed\": %" PRIu64
		", \"wc_error\": %" PRIu64 ", \"last_vendor_err\": %" PRIu32 ",\n",
		seen.wc_success, seen.wc_flushed, seen.wc_error, seen.last_vendor_err);
	fprintf(f, " \"octets_checked\": %" PRIu64 ", \"send_imm_checked\": %" PRIu64
		", \"qpn\": %" PRIu32 ", \"peer_qpn\": %" PRIu32 ", \"retry_exc\": %" PRIu64
		",\n \"cm_events\": {", seen.octets_checked, seen.send_imm_checked, seen.qpn,
		seen.peer_qpn, seen.retry_exc);
	for (unsigned int e = 0, k = 0; e < sizeof(seen.cm_events) / sizeof(seen.cm_events[0]);
	     e++)
		if (seen.cm_events[e] != 0) {
			const char *name = rdma_event_str((enum rdma_cm_event_type)e);

			if (strncmp(name, "RDMA_CM_EVENT_", 14) == 0)
				name += 14;
			fprintf(f, "%s\"%s\": %u", k++ ? ", " : "", name, seen.cm_events[e]);
		}
	fprintf(f, "},\n \"async\": {");
	for (unsigned int e = 0, k = 0; e < RTE_DIM_SZ(seen.async); e++)
		if (seen.async[e] != 0)
			fprintf(f, "%s\"%s\": %u", k++ ? ", " : "", async_name(e), seen.async[e]);
	fprintf(f, "},\n \"xfer\": [");
	for (unsigned int i = 0; i < seen.nxfer; i++)
		fprintf(f, "%s{\"op\": \"%s\", \"octets\": %" PRIu64 ", \"ops\": %" PRIu64
			", \"ms\": %" PRIu64 ", \"checksum\": \"0x%016" PRIx64 "\"}",
			i ? ", " : "", seen.xfer[i].op, seen.xfer[i].octets, seen.xfer[i].ops,
			seen.xfer[i].ms, seen.xfer[i].sum);
	fprintf(f, "]}\n");
	if (fclose(f) != 0)
		fprintf(stderr, "rnic_it: %s: %s\n", o.json, strerror(errno));
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: rnic_it (--server | --client ADDR) --oob PATH --case NAME [--port P]\n"
		"       [--c-ird N --c-ord N --s-ird N --s-ord N] [--reads N] [--viol KIND]\n"
		"       [--mib N] [--small] [--closed] [--tel TELEMETRY_SOCKET] [--json FILE]\n"
		"       [--ops write,read,send,atomic] [--bound SECONDS] [--hook CMD]\n"
		"       [--rnr wait|never|closed|stopped] [--ib [--ib-gid N] [--ib-timeout T]\n"
		"       [--ib-retry N]]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "server", no_argument, NULL, 'S' },	{ "client", required_argument, NULL, 'C' },
		{ "port", required_argument, NULL, 'p' }, { "oob", required_argument, NULL, 'o' },
		{ "case", required_argument, NULL, 'c' }, { "viol", required_argument, NULL, 'v' },
		{ "tel", required_argument, NULL, 't' },  { "c-ird", required_argument, NULL, 1 },
		{ "c-ord", required_argument, NULL, 2 },  { "s-ird", required_argument, NULL, 3 },
		{ "s-ord", required_argument, NULL, 4 },  { "mib", required_argument, NULL, 5 },
		{ "reads", required_argument, NULL, 6 },  { "small", no_argument, NULL, 7 },
		{ "json", required_argument, NULL, 8 },	  { "ops", required_argument, NULL, 9 },
		{ "bound", required_argument, NULL, 10 }, { "hook", required_argument, NULL, 11 },
		{ "closed", no_argument, NULL, 12 },	  { "rnr", required_argument, NULL, 13 },
		{ "ib", no_argument, NULL, 14 },	  { "ib-gid", required_argument, NULL, 15 },
		{ "ib-timeout", required_argument, NULL, 16 },
		{ "ib-retry", required_argument, NULL, 17 },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'S': o.server = true; break;
		case 'C': o.addr = optarg; break;
		case 'p': o.port = (uint16_t)atoi(optarg); break;
		case 'o': o.oob = optarg; break;
		case 'c': o.cs = optarg; break;
		case 'v': o.viol = optarg; break;
		case 't': o.tel = optarg; break;
		case 1: o.c_ird = (uint32_t)atoi(optarg); break;
		case 2: o.c_ord = (uint32_t)atoi(optarg); break;
		case 3: o.s_ird = (uint32_t)atoi(optarg); break;
		case 4: o.s_ord = (uint32_t)atoi(optarg); break;
		case 5: o.mib = (uint32_t)atoi(optarg); break;
		case 6: o.reads = (uint32_t)atoi(optarg); break;
		case 7: o.small = true; break;
		case 8: o.json = optarg; break;
		case 9: o.ops = optarg; break;
		case 10: o.bound = (uint32_t)atoi(optarg); break;
		case 11: o.hook = optarg; break;
		case 12: o.closed = true; break;
		case 13: o.rnr = optarg; break;
		case 14: o.ib = true; break;
		case 15: o.ib_gid = atoi(optarg); break;
		case 16: o.ib_timeout = (uint8_t)atoi(optarg); break;
		case 17: o.ib_retry = (uint8_t)atoi(optarg); break;
		default: usage();
		}
	}
	if (o.server == (o.addr != NULL) || o.oob == NULL || o.cs == NULL || o.mib == 0)
		usage();
	if (strcmp(o.cs, "viol") == 0 && o.viol == NULL)
		usage();
	role = o.server ? "server" : "client";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (o.json != NULL)
		atexit(json_write);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (strcmp(cases[i].name, o.cs) != 0)
			continue;
		if (strncmp(o.cs, "ib_", 3) == 0)
			o.ib = true;
		if (o.server) {
			oob_listen();
			if (!o.ib)
				server_listen();
			oob_accept();
		} else {
			oob_connect();
		}
		cases[i].fn();
		if (listen_id != NULL)
			rdma_destroy_id(listen_id);
		if (ec != NULL)
			rdma_destroy_event_channel(ec);
		if (ib_ctx != NULL)
			ib_close();
		seen.passed = true;
		note("PASS %s", o.cs);
		return 0;
	}
	fprintf(stderr, "rnic_it: unknown case %s\n", o.cs);
	return 2;
}
