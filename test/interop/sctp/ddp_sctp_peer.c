/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ddp_sctp_peer: an RFC 5043 (DDP over SCTP, with RFC 6581's enhanced session setup) and RFC
 * 5040/5041 (RDMAP, DDP) peer on the Linux kernel's SCTP sockets, for warpnic's interop test
 * (kernel_peer.sh boots it in a QEMU guest; the host's kernel has no SCTP). It uses the
 * kernel's uapi (<linux/sctp.h>), neither usrsctp nor any warpnic code: the wire formats below
 * are written from the RFCs, so what warpnic sends is checked by a second reading of them.
 *
 *   ddp_sctp_peer --connect ADDR PORT [--plain|--rejected]
 *       active: associate, send the Enhanced Initiate (peer-to-peer, IRD/ORD); --plain: RFC
 *       5043's plain Initiate; --rejected: warpnic's ULP rejects the session (its Private
 *       Data is DS_REJECT_PD) and warpnic shuts the association down
 *   ddp_sctp_peer --listen PORT [--reject]
 *       passive: prints "peer: LISTENING" when it listens; --reject: answer warpnic's
 *       Initiate with a plain Reject carrying DS_REJECT_PD, then see the association shut down
 *
 * Runs the exchange of ddp_sctp_test.h against ddp_sctp_verbs on warpnic and checks, beside
 * the data: the Adaptation Layer Indication of DDP from the peer (RFC 5043 §5.1, §11.1), as
 * many streams in as out (§8), every DATA chunk unordered (§10) on stream 0 with PPID 16 or
 * 17 and a gap-free DDP-SSN from 0 (§5.2.1, §6.1), the legal session sequence (§6.2:
 * Initiate/Accept first, Terminate last, nothing after it), the RFC 6581 data (IRD/ORD
 * negotiation, peer-to-peer mode and its RTR), DDP/RDMAP headers (versions, reserved bits, QN,
 * MSN from 1, MO, L, STag and TO bounds), no RDMAP Terminate, and the association shut down
 * (SHUTDOWN, not ABORT) when the session is over. Lines start with "peer: "; exit status 0
 * when every check passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/sctp.h>

#include "ddp_sctp_test.h"

/* ---------------------------------------------------------------- RFC constants */

#define ALI_DDP    0x00000001u /* RFC 5043 §5.1 */
#define PPID_DDP   16u         /* DDP Segment Chunk (§5.2) */
#define PPID_CTL   17u         /* DDP Stream Session Control */
#define F_INITIATE     0x0001  /* §5.2.3 */
#define F_ACCEPT       0x0002
#define F_REJECT       0x0003
#define F_TERMINATE    0x0004
#define F_ENH_INITIATE 0x0005  /* RFC 6581 §7 */
#define F_ENH_ACCEPT   0x0006
#define F_ENH_REJECT   0x0007
#define PD_MAX 512
/* RFC 6581 §9: A B IRD(14) C D ORD(14) */
#define ENH_A 0x8000u
#define ENH_B 0x4000u /* zero-length Send RTR */
#define ENH_C 0x8000u /* zero-length Write RTR (second word) */
#define ENH_D 0x4000u /* zero-length Read RTR (second word) */
#define ENH_MAX 0x3FFFu

/* RDMAP opcodes (RFC 5040 §4.1) */
#define OP_WRITE     0x0
#define OP_READ_REQ  0x1
#define OP_READ_RESP 0x2
#define OP_SEND      0x3
#define OP_SEND_SE   0x5
#define OP_TERMINATE 0x7
#define TAGGED_HDR   14 /* RFC 5041 §4.2 */
#define UNTAGGED_HDR 18 /* RFC 5041 §4.3 */
#define READ_REQ_LEN 28 /* RFC 5040 §4.4 */

/* our side of the exchange */
#define MY_STAG      0x00c0ffeeu
#define MY_TO        0x0000007000000000ull /* a 64-bit TO: the high word matters */
#define MY_SINK_STAG 0x5eed0001u
#define MY_SINK_TO   0x1000ull
/* the largest DDP segment we send: RFC 5043 §9 for IPv4 and a 1500-octet MTU, room left for a
 * SACK; the DDP-SSN comes on top */
#define MULPDU (((1500 - 20 - 12 - 16 - 16) & ~3) - 2)
#define HOLD 1024

static int fd = -1;
static bool active;
static bool plain;       /* active: a plain Initiate */
static bool reject_mode; /* active: warpnic rejects; passive: we reject */
static const char *phase = "start";

static struct {
	bool comm_up, ali_seen, shutdown_seen, eof;
	uint32_t ali;
	uint16_t in_streams, out_streams;
	/* the session */
	bool enhanced, p2p;
	unsigned int rtr;          /* the RTR type in force: 'B', 'C', 'D' or 0 */
	char rtr_offer[24];        /* active: the types the Accept names */
	bool rtr_wait;             /* responder in p2p mode: the peer's RTR not seen yet */
	bool rtr_read_pending;     /* our Read RTR's zero-length response is due */
	uint16_t peer_ird, peer_ord;
	struct ds_adv peer;        /* the peer's region */
	bool up, sent_term, got_term, rejected;
	/* DDP */
	uint32_t msn_tx[3], msn_rx[3];
	uint32_t rx_off;           /* MO expected of the Send being received */
	uint8_t rx_msg[DS_RECV_MAX];
	unsigned int sends_rx, sends_tx;
	uint32_t write_rx;         /* octets the peer wrote into our region */
	uint32_t read_got;         /* octets of our Read's response */
	bool read_posted, read_done, bye_sent, bye_got;
	unsigned int reads_served;
	/* SCTP */
	uint16_t tx_ssn, rx_ssn;
	unsigned int ctl_rx, ddp_rx, ctl_tx, ddp_tx, held, held_max;
} st;

static uint8_t region[DS_REGION];
static uint8_t sink[DS_READ_LEN];

struct held {
	uint32_t ppid;
	uint32_t len;
	uint8_t data[];
};
static struct held *hold[HOLD];

static void
say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("peer: ");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
}

#define FAIL(...) fail(__LINE__, __VA_ARGS__)
static void __attribute__((noreturn, format(printf, 2, 3)))
fail(int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("peer: FAIL (%s, %s, line %d): ", active ? "active" : "passive", phase, line);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	va_end(ap);
	exit(1);
}

static void
on_alarm(int sig)
{
	(void)sig;
	FAIL("timed out");
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t
get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

/* ---------------------------------------------------------------- SCTP */

/* One DATA chunk on stream 0, unordered (RFC 5043 §10). @return 0 or -errno. */
static int
chunk_send(uint32_t ppid, const uint8_t *msg, size_t len)
{
	struct sctp_sndinfo si = {.snd_sid = 0, .snd_flags = SCTP_UNORDERED,
				  .snd_ppid = htonl(ppid)};
	union {
		char buf[CMSG_SPACE(sizeof(struct sctp_sndinfo))];
		struct cmsghdr align;
	} c;
	struct iovec iov = {.iov_base = (void *)(uintptr_t)msg, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf,
			    .msg_controllen = sizeof(c.buf)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
	ssize_t n;

	cm->cmsg_level = IPPROTO_SCTP;
	cm->cmsg_type = SCTP_SNDINFO;
	cm->cmsg_len = CMSG_LEN(sizeof(si));
	memcpy(CMSG_DATA(cm), &si, sizeof(si));
	n = sendmsg(fd, &mh, 0);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		FAIL("sendmsg sent %zd of %zu octets", n, len);
	return 0;
}

static void
notification(const uint8_t *buf, size_t len)
{
	const union sctp_notification *sn = (const void *)buf;

	if (len < sizeof(sn->sn_header))
		FAIL("a short notification");
	switch (sn->sn_header.sn_type) {
	case SCTP_ASSOC_CHANGE:
		switch (sn->sn_assoc_change.sac_state) {
		case SCTP_COMM_UP:
			st.comm_up = true;
			st.in_streams = sn->sn_assoc_change.sac_inbound_streams;
			st.out_streams = sn->sn_assoc_change.sac_outbound_streams;
			break;
		case SCTP_SHUTDOWN_COMP:
			break;
		case SCTP_COMM_LOST:
			FAIL("the association was lost (ABORT from warpnic, or retransmissions "
			     "exhausted; error %u)", sn->sn_assoc_change.sac_error);
		case SCTP_RESTART:
			FAIL("warpnic restarted the association");
		case SCTP_CANT_STR_ASSOC:
			FAIL("the association did not come up");
		default:
			break;
		}
		break;
	case SCTP_ADAPTATION_INDICATION:
		st.ali_seen = true;
		st.ali = sn->sn_adaptation_event.sai_adaptation_ind;
		break;
	case SCTP_SHUTDOWN_EVENT:
		st.shutdown_seen = true;
		break;
	case SCTP_REMOTE_ERROR:
		FAIL("an ERROR chunk from warpnic (cause %u)",
		     ntohs(sn->sn_remote_error.sre_error));
	case SCTP_SEND_FAILED_EVENT:
		FAIL("a message could not be sent (error %u)",
		     sn->sn_send_failed_event.ssf_error);
	default:
		break;
	}
}

static void deliver(uint32_t ppid, const uint8_t *buf, size_t len);

/*
 * Read one message from the socket (waiting up to @p timeout_ms): a notification, or a DATA
 * chunk that goes, with the ones it released, to deliver() in DDP-SSN order.
 * @return 1 when something was read, 0 on timeout, -1 at the end of the association.
 */
static int
pump(int timeout_ms)
{
	static uint8_t buf[65536];
	union {
		char buf[CMSG_SPACE(sizeof(struct sctp_rcvinfo))];
		struct cmsghdr align;
	} c;
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf,
			    .msg_controllen = sizeof(c.buf)};
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	const struct sctp_rcvinfo *ri = NULL;
	struct cmsghdr *cm;
	uint32_t ppid;
	uint16_t d;
	ssize_t n;

	if (st.eof)
		return -1;
	n = poll(&pfd, 1, timeout_ms);
	if (n == 0)
		return 0;
	if (n < 0)
		FAIL("poll: %s", strerror(errno));
	n = recvmsg(fd, &mh, 0);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 1;
		FAIL("recvmsg: %s", strerror(errno));
	}
	if (n == 0) {
		st.eof = true; /* the association is shut down and everything read */
		return -1;
	}
	if (mh.msg_flags & MSG_NOTIFICATION) {
		notification(buf, (size_t)n);
		return 1;
	}
	if (!(mh.msg_flags & MSG_EOR))
		FAIL("a DATA message above %zu octets", sizeof(buf));
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == IPPROTO_SCTP && cm->cmsg_type == SCTP_RCVINFO)
			ri = (const void *)CMSG_DATA(cm);
	if (ri == NULL)
		FAIL("a DATA message without its SCTP_RCVINFO");
	ppid = ntohl(ri->rcv_ppid);
	if (ri->rcv_sid != 0)
		FAIL("a DATA chunk on stream %u (the session is on stream 0)", ri->rcv_sid);
	if (!(ri->rcv_flags & SCTP_UNORDERED))
		FAIL("an ordered DATA chunk (PPID %u): RFC 5043 §10 wants the U flag on every one",
		     ppid);
	if (ppid != PPID_DDP && ppid != PPID_CTL)
		FAIL("a DATA chunk with PPID %u (RFC 5043 §5.2: 16 or 17)", ppid);
	if (!st.ali_seen)
		FAIL("DATA before the DDP Adaptation Layer Indication was judged (§11.1)");
	if (n < 2)
		FAIL("a DATA chunk of %zd octets: no DDP-SSN (§5.2.1)", n);
	d = (uint16_t)(get16(buf) - st.rx_ssn);
	if (d >= 32768)
		FAIL("DDP-SSN %u again (next due %u)", get16(buf), st.rx_ssn);
	if (d >= HOLD)
		FAIL("DDP-SSN %u far ahead of %u", get16(buf), st.rx_ssn);
	if (d > 0) {
		struct held *h = malloc(sizeof(*h) + (size_t)n);

		if (h == NULL || hold[get16(buf) % HOLD] != NULL)
			FAIL("DDP-SSN %u twice, or no memory", get16(buf));
		h->ppid = ppid;
		h->len = (uint32_t)n;
		memcpy(h->data, buf, (size_t)n);
		hold[get16(buf) % HOLD] = h;
		st.held++;
		return 1;
	}
	deliver(ppid, buf, (size_t)n);
	st.rx_ssn++;
	for (;;) {
		struct held *h = hold[st.rx_ssn % HOLD];

		if (h == NULL)
			break;
		hold[st.rx_ssn % HOLD] = NULL;
		deliver(h->ppid, h->data, h->len);
		free(h);
		st.rx_ssn++;
	}
	return 1;
}

/* pump() until @p cond, or fail after @p secs */
#define PUMP_UNTIL(cond, secs, what)                                                      \
	do {                                                                                 \
		int i_;                                                                      \
		for (i_ = 0; !(cond) && i_ < (secs) * 10;)                                    \
			if (pump(100) == 0)                                                  \
				i_++;                                                        \
			else if (st.eof && !(cond))                                          \
				FAIL("the association ended while waiting for %s", what);   \
		if (!(cond))                                                                 \
			FAIL("no %s within %d s", what, secs);                               \
	} while (0)

/* ---------------------------------------------------------------- session control */

static void
ctl_send(uint16_t func, uint16_t w0, uint16_t w1, const uint8_t *pd, size_t pd_len)
{
	uint8_t m[4 + PD_MAX];
	size_t n = 4;
	int rc;

	put16(m, st.tx_ssn);
	put16(m + 2, func);
	if (func >= F_ENH_INITIATE) {
		put16(m + 4, w0);
		put16(m + 6, w1);
		n += 4;
	}
	if (pd_len != 0)
		memcpy(m + n, pd, pd_len);
	n += pd_len;
	rc = chunk_send(PPID_CTL, m, n);
	if ((rc == -EPIPE || rc == -ESHUTDOWN) && func == F_TERMINATE) {
		say("our Terminate not sent: warpnic shut the association down first (%s)",
		    strerror(-rc));
		return;
	}
	if (rc != 0)
		FAIL("sending session control %u: %s", func, strerror(-rc));
	st.tx_ssn++;
	st.ctl_tx++;
	if (func == F_TERMINATE)
		st.sent_term = true;
}

static const char *
rtr_name(unsigned int r)
{
	return r == 'B' ? "send" : r == 'C' ? "write" : r == 'D' ? "read" : "none";
}

static void
ddp_send_untagged(uint8_t op, uint32_t qn, uint32_t msn, const uint8_t *data, uint32_t len);
static void ddp_send_tagged(uint8_t op, uint32_t stag, uint64_t to, const uint8_t *data,
			    uint32_t len);

/* Our RTR as the initiator in peer-to-peer mode (RFC 6581 §7.1), the first DDP message. */
static void
rtr_send(void)
{
	uint8_t rr[READ_REQ_LEN] = {0};

	switch (st.rtr) {
	case 'B':
		ddp_send_untagged(OP_SEND, 0, st.msn_tx[0]++, NULL, 0);
		break;
	case 'C':
		ddp_send_tagged(OP_WRITE, 0, 0, NULL, 0);
		break;
	case 'D':
		st.rtr_read_pending = true;
		ddp_send_untagged(OP_READ_REQ, 1, st.msn_tx[1]++, rr, sizeof(rr));
		break;
	default:
		break;
	}
}

/* A session control message in its DDP-SSN turn. */
static void
on_ctl(const uint8_t *m, size_t len)
{
	uint16_t func, w0 = 0, w1 = 0;
	const uint8_t *pd;
	size_t pd_len;

	st.ctl_rx++;
	if (len < 4)
		FAIL("session control of %zu octets", len);
	func = get16(m + 2);
	pd = m + 4;
	pd_len = len - 4;
	if (func < F_INITIATE || func > F_ENH_REJECT)
		FAIL("session control with Function Code %#x", func);
	if (pd_len > PD_MAX)
		FAIL("%zu octets of Private Data (§5.2.3: at most 512)", pd_len);
	if (func >= F_ENH_INITIATE) {
		if (pd_len < 4)
			FAIL("enhanced code %u without IRD/ORD data", func);
		w0 = get16(pd);
		w1 = get16(pd + 2);
		pd += 4;
		pd_len -= 4;
	}
	if (st.got_term)
		FAIL("session control %u after the Terminate (§6.2: it is the last)", func);
	switch (func) {
	case F_TERMINATE:
		if (pd_len != 0)
			FAIL("a Terminate with %zu octets of Private Data (§5.2.3)", pd_len);
		if (!st.up)
			FAIL("a Terminate before the session was up");
		st.got_term = true;
		return;
	case F_REJECT:
	case F_ENH_REJECT:
		if (!active || !reject_mode || st.up)
			FAIL("warpnic rejected the session (code %u, %zu octets of Private Data)",
			     func, pd_len);
		/* RFC 6581 §7: an enhanced Initiate is answered with enhanced codes */
		if (func != (plain ? F_REJECT : F_ENH_REJECT))
			FAIL("Reject code %u to our %s Initiate", func, plain ? "plain" : "Enhanced");
		if (pd_len != sizeof(DS_REJECT_PD) - 1 ||
		    memcmp(pd, DS_REJECT_PD, pd_len) != 0)
			FAIL("the Reject's Private Data (%zu octets) is not the ULP's", pd_len);
		if (get16(m) != 0)
			FAIL("the Reject has DDP-SSN %u (§6.1: 0)", get16(m));
		st.rejected = true;
		st.enhanced = func == F_ENH_REJECT;
		st.peer_ird = w0 & ENH_MAX;
		st.peer_ord = w1 & ENH_MAX;
		return;
	default:
		break;
	}
	if (st.up)
		FAIL("session control %u in a session already up (§6.1)", func);
	if (st.rejected)
		FAIL("session control %u after the Reject (§6.3: it is the last)", func);
	if (active && func != F_ACCEPT && func != F_ENH_ACCEPT)
		FAIL("an Initiate answered with code %u", func);
	if (!active && func != F_INITIATE && func != F_ENH_INITIATE)
		FAIL("the first session control is code %u, not an Initiate (§6.2)", func);
	if (get16(m) != 0)
		FAIL("the session's first chunk has DDP-SSN %u (§6.1: 0)", get16(m));
	if (ds_adv_get(pd, (uint32_t)pd_len, &st.peer) != 0)
		FAIL("the Private Data is not warpnic's advertisement (%zu octets)", pd_len);
	if (st.peer.len != DS_REGION)
		FAIL("warpnic advertises %u octets", st.peer.len);
	st.enhanced = func >= F_ENH_INITIATE;
	st.peer_ird = w0 & ENH_MAX;
	st.peer_ord = w1 & ENH_MAX;
	if (active && plain) {
		if (func != F_ACCEPT)
			FAIL("Accept code %u to our plain Initiate (RFC 6581 §7: a plain one)", func);
		st.up = true;
		return;
	}
	if (active) {
		/* RFC 6581 §9.1: responder IRD >= our ORD, responder ORD <= our IRD */
		if (func != F_ENH_ACCEPT)
			FAIL("a plain Accept to our Enhanced Initiate");
		if (st.peer_ird < DS_ORD || st.peer_ord > DS_IRD)
			FAIL("responder IRD %u / ORD %u for our IRD %u / ORD %u (RFC 6581 §9.1)",
			     st.peer_ird, st.peer_ord, DS_IRD, DS_ORD);
		st.p2p = (w0 & ENH_A) != 0;
		if (!st.p2p && ((w0 & ENH_B) || (w1 & (ENH_C | ENH_D))))
			FAIL("RTR flags without peer-to-peer mode");
		/* RFC 6581 §9.2: the responder names the offered types it supports (at least
		 * one), the initiator sends one of them: ours the Read, to have warpnic answer a
		 * zero-length Read Request (the passive run has it send the Write) */
		if (st.p2p) {
			if (!(w0 & ENH_B) && !(w1 & (ENH_C | ENH_D)))
				FAIL("peer-to-peer mode accepted with no RTR type (RFC 6581 §9.2)");
			st.rtr = (w1 & ENH_D) ? 'D' : (w1 & ENH_C) ? 'C' : 'B';
			snprintf(st.rtr_offer, sizeof(st.rtr_offer), "%s%s%s",
				 (w0 & ENH_B) ? "send " : "", (w1 & ENH_C) ? "write " : "",
				 (w1 & ENH_D) ? "read " : "");
		}
		st.up = true;
		rtr_send();
		return;
	}
	if (reject_mode) {
		/* our ULP says no (§6.3): a plain Reject, whatever the Initiate was */
		ctl_send(F_REJECT, 0, 0, (const uint8_t *)DS_REJECT_PD, sizeof(DS_REJECT_PD) - 1);
		st.rejected = true;
		return;
	}
	/* passive: accept, peer-to-peer when asked, our RTR choice the Write */
	if (st.enhanced) {
		uint16_t a0, a1;

		st.p2p = (w0 & ENH_A) != 0;
		if (st.p2p)
			st.rtr = (w1 & ENH_C) ? 'C' : (w0 & ENH_B) ? 'B' : (w1 & ENH_D) ? 'D' : 0;
		if (st.p2p && st.rtr == 0)
			FAIL("peer-to-peer mode asked with no RTR type offered");
		if (st.peer_ord > DS_IRD)
			FAIL("the initiator's ORD %u is above our IRD %u", st.peer_ord, DS_IRD);
		a0 = (uint16_t)((st.p2p ? ENH_A : 0) | (st.rtr == 'B' ? ENH_B : 0) | DS_IRD);
		a1 = (uint16_t)((st.rtr == 'C' ? ENH_C : 0) | (st.rtr == 'D' ? ENH_D : 0) |
				(st.peer_ird < DS_ORD ? st.peer_ird : DS_ORD));
		{
			uint8_t adv[DS_ADV_LEN];
			struct ds_adv me = {MY_STAG, MY_TO, DS_REGION};

			ds_adv_put(adv, &me);
			ctl_send(F_ENH_ACCEPT, a0, a1, adv, sizeof(adv));
		}
	} else {
		uint8_t adv[DS_ADV_LEN];
		struct ds_adv me = {MY_STAG, MY_TO, DS_REGION};

		ds_adv_put(adv, &me);
		ctl_send(F_ACCEPT, 0, 0, adv, sizeof(adv));
	}
	st.rtr_wait = st.p2p;
	st.up = true;
}

/* ---------------------------------------------------------------- DDP and RDMAP */

/* Segments of one untagged message (RFC 5041 §4.3), MSN @p msn on queue @p qn. */
static void
ddp_send_untagged(uint8_t op, uint32_t qn, uint32_t msn, const uint8_t *data, uint32_t len)
{
	uint8_t m[2 + MULPDU];
	uint32_t off = 0;

	do {
		uint32_t n = len - off;
		bool last;
		int rc;

		if (n > MULPDU - UNTAGGED_HDR)
			n = MULPDU - UNTAGGED_HDR;
		last = off + n == len;
		put16(m, st.tx_ssn);
		m[2] = (uint8_t)((last ? 0x40 : 0) | 1); /* T=0, L, DV 1 */
		m[3] = (uint8_t)(1 << 6 | op);          /* RV 1 */
		put32(m + 4, 0);
		put32(m + 8, qn);
		put32(m + 12, msn);
		put32(m + 16, off);
		if (n != 0)
			memcpy(m + 2 + UNTAGGED_HDR, data + off, n);
		rc = chunk_send(PPID_DDP, m, 2 + UNTAGGED_HDR + n);
		if (rc != 0)
			FAIL("sending a DDP segment: %s", strerror(-rc));
		st.tx_ssn++;
		st.ddp_tx++;
		off += n;
	} while (off < len);
}

/* Segments of one tagged message (RFC 5041 §4.2): a Write or a Read Response. */
static void
ddp_send_tagged(uint8_t op, uint32_t stag, uint64_t to, const uint8_t *data, uint32_t len)
{
	uint8_t m[2 + MULPDU];
	uint32_t off = 0;

	do {
		uint32_t n = len - off;
		bool last;
		int rc;

		if (n > MULPDU - TAGGED_HDR)
			n = MULPDU - TAGGED_HDR;
		last = off + n == len;
		put16(m, st.tx_ssn);
		m[2] = (uint8_t)(0x80 | (last ? 0x40 : 0) | 1); /* T=1, L, DV 1 */
		m[3] = (uint8_t)(1 << 6 | op);
		put32(m + 4, stag);
		put64(m + 8, to + off);
		if (n != 0)
			memcpy(m + 2 + TAGGED_HDR, data + off, n);
		rc = chunk_send(PPID_DDP, m, 2 + TAGGED_HDR + n);
		if (rc != 0)
			FAIL("sending a DDP segment: %s", strerror(-rc));
		st.tx_ssn++;
		st.ddp_tx++;
		off += n;
	} while (off < len);
}

static void
send_msg(unsigned int k, uint32_t len)
{
	uint8_t b[DS_RECV_MAX];

	for (uint32_t i = 0; i < len; i++)
		b[i] = ds_pat(DS_PAT_PEER_SEND, k, i);
	ddp_send_untagged(OP_SEND, 0, st.msn_tx[0]++, b, len);
	st.sends_tx++;
}

static void
check_pat(const uint8_t *b, uint32_t len, unsigned int pat, unsigned int k, const char *what)
{
	for (uint32_t i = 0; i < len; i++)
		if (b[i] != ds_pat(pat, k, i))
			FAIL("%s: octet %u is %#x, want %#x", what, i, b[i], ds_pat(pat, k, i));
}

/* A whole Send from warpnic, the @p k-th. */
static void
on_message(const uint8_t *b, uint32_t len)
{
	unsigned int k = st.sends_rx++;
	char what[64];

	snprintf(what, sizeof(what), "warpnic's Send %u", k);
	if (k < DS_NSEND) {
		if (len != ds_send_len[k])
			FAIL("%s has %u octets, want %u", what, len, ds_send_len[k]);
		check_pat(b, len, DS_PAT_WN_SEND, k, what);
		return;
	}
	if (k > DS_NSEND + 1)
		FAIL("%s: more Sends than the exchange has", what);
	if (len != DS_CTL_LEN)
		FAIL("%s has %u octets, want %u", what, len, DS_CTL_LEN);
	check_pat(b, len, DS_PAT_WN_SEND, k, what);
	if (k == DS_NSEND + 1) {
		st.bye_got = true;
		return;
	}
	/* "write done": warpnic's Write is placed (it went before this Send) */
	if (st.write_rx != DS_WRITE_LEN)
		FAIL("warpnic's Write: %u octets placed, want %u", st.write_rx, DS_WRITE_LEN);
	check_pat(region, DS_WRITE_LEN, DS_PAT_WN_WRITE, 0, "warpnic's RDMA Write");
	/* our Read of its region */
	{
		uint8_t rr[READ_REQ_LEN];

		put32(rr, MY_SINK_STAG);
		put64(rr + 4, MY_SINK_TO);
		put32(rr + 12, DS_READ_LEN);
		put32(rr + 16, st.peer.stag);
		put64(rr + 20, st.peer.to + DS_READ_OFF);
		ddp_send_untagged(OP_READ_REQ, 1, st.msn_tx[1]++, rr, sizeof(rr));
		st.read_posted = true;
	}
}

static void
on_tagged(uint8_t op, bool last, const uint8_t *u, size_t len)
{
	uint32_t stag = get32(u + 2);
	uint64_t to = get64(u + 6);
	const uint8_t *pl = u + TAGGED_HDR;
	uint32_t n = (uint32_t)(len - TAGGED_HDR);

	if (op == OP_WRITE) {
		if (n == 0 && st.rtr_wait && st.rtr == 'C') {
			st.rtr_wait = false; /* its RTR */
			return;
		}
		if (st.rtr_wait)
			FAIL("an RDMA Write before warpnic's RTR (RFC 6581: %s)", rtr_name(st.rtr));
		if (stag != MY_STAG)
			FAIL("an RDMA Write to STag %#x (ours is %#x)", stag, MY_STAG);
		if (to < MY_TO || to - MY_TO > DS_REGION || n > DS_REGION - (to - MY_TO))
			FAIL("an RDMA Write of %u octets at TO %#llx: outside our region", n,
			     (unsigned long long)to);
		if (to - MY_TO != st.write_rx)
			FAIL("RDMA Write segment at offset %llu, want %u (DDP-SSN order)",
			     (unsigned long long)(to - MY_TO), st.write_rx);
		memcpy(region + (to - MY_TO), pl, n);
		st.write_rx += n;
		if (last && st.write_rx != DS_WRITE_LEN)
			FAIL("the Write's last segment after %u octets", st.write_rx);
		return;
	}
	if (op != OP_READ_RESP)
		FAIL("a tagged segment with RDMAP opcode %#x", op);
	if (st.rtr_read_pending) {
		if (n != 0 || !last)
			FAIL("the answer to our Read RTR is not a zero-length Read Response");
		st.rtr_read_pending = false;
		return;
	}
	if (!st.read_posted || st.read_done)
		FAIL("a Read Response we did not ask for");
	if (stag != MY_SINK_STAG || to != MY_SINK_TO + st.read_got)
		FAIL("Read Response to STag %#x TO %#llx, want %#x TO %#llx", stag,
		     (unsigned long long)to, MY_SINK_STAG,
		     (unsigned long long)(MY_SINK_TO + st.read_got));
	if (n > DS_READ_LEN - st.read_got)
		FAIL("Read Response beyond the %u octets asked", DS_READ_LEN);
	memcpy(sink + st.read_got, pl, n);
	st.read_got += n;
	if (!last)
		return;
	if (st.read_got != DS_READ_LEN)
		FAIL("the Read Response ended after %u octets of %u", st.read_got, DS_READ_LEN);
	check_pat(sink, DS_READ_LEN, DS_PAT_WN_READSRC, 0, "our RDMA Read of warpnic's region");
	st.read_done = true;
	/* "bye": after our Read */
	{
		uint8_t b[DS_CTL_LEN];

		for (uint32_t i = 0; i < DS_CTL_LEN; i++)
			b[i] = ds_pat(DS_PAT_PEER_SEND, DS_NSEND + 1, i);
		ddp_send_untagged(OP_SEND, 0, st.msn_tx[0]++, b, DS_CTL_LEN);
		st.sends_tx++;
		st.bye_sent = true;
	}
}

/* warpnic's Read Request: answer with a Read Response from our region (RFC 5040 §4.4). */
static void
on_read_req(const uint8_t *rr, uint32_t n)
{
	uint32_t sink_stag, size, src_stag;
	uint64_t sink_to, src_to;

	if (n != READ_REQ_LEN)
		FAIL("a Read Request of %u octets (want %u)", n, READ_REQ_LEN);
	sink_stag = get32(rr);
	sink_to = get64(rr + 4);
	size = get32(rr + 12);
	src_stag = get32(rr + 16);
	src_to = get64(rr + 20);
	if (st.rtr_wait && st.rtr == 'D' && size == 0) {
		st.rtr_wait = false;
		ddp_send_tagged(OP_READ_RESP, sink_stag, sink_to, NULL, 0);
		return;
	}
	if (st.rtr_wait)
		FAIL("a Read Request before warpnic's RTR");
	if (src_stag != MY_STAG || src_to < MY_TO || src_to - MY_TO > DS_REGION ||
	    size > DS_REGION - (src_to - MY_TO))
		FAIL("a Read Request of %u octets at STag %#x TO %#llx: not in our region", size,
		     src_stag, (unsigned long long)src_to);
	if (src_to - MY_TO != DS_READ_OFF || size != DS_READ_LEN)
		FAIL("a Read Request of %u octets at offset %llu (the exchange reads %u at %u)",
		     size, (unsigned long long)(src_to - MY_TO), DS_READ_LEN, DS_READ_OFF);
	if (st.reads_served++ >= DS_IRD)
		FAIL("more Read Requests than our IRD");
	ddp_send_tagged(OP_READ_RESP, sink_stag, sink_to, region + (src_to - MY_TO), size);
}

static void
on_ulpdu(const uint8_t *u, size_t len)
{
	uint8_t op;
	bool tagged, last;
	uint32_t qn, msn, mo, n;

	st.ddp_rx++;
	if (len < 2)
		FAIL("a DDP segment of %zu octets", len);
	tagged = (u[0] & 0x80) != 0;
	last = (u[0] & 0x40) != 0;
	op = u[1] & 0x0f;
	if ((u[0] & 0x03) != 1 || (u[1] >> 6) != 1)
		FAIL("DDP version %u / RDMAP version %u (RFC 5041/5040: 1)", u[0] & 3, u[1] >> 6);
	if ((u[0] & 0x3c) || (u[1] & 0x30))
		FAIL("reserved DDP/RDMAP control bits set: %#x %#x", u[0], u[1]);
	if (len > MULPDU)
		FAIL("a DDP segment of %zu octets above the largest for this path (%d, §9)", len,
		     MULPDU);
	if (tagged) {
		if (len < TAGGED_HDR)
			FAIL("a tagged segment of %zu octets", len);
		on_tagged(op, last, u, len);
		return;
	}
	if (len < UNTAGGED_HDR)
		FAIL("an untagged segment of %zu octets", len);
	qn = get32(u + 6);
	msn = get32(u + 10);
	mo = get32(u + 14);
	n = (uint32_t)(len - UNTAGGED_HDR);
	if (get32(u + 2) != 0)
		FAIL("RsvdULP %#x in an untagged segment (opcode %#x)", get32(u + 2), op);
	if (qn > 2 || msn != st.msn_rx[qn] + 1)
		FAIL("an untagged segment on QN %u with MSN %u (want %u)", qn, msn,
		     qn > 2 ? 0 : st.msn_rx[qn] + 1);
	switch (op) {
	case OP_SEND:
	case OP_SEND_SE:
		if (qn != 0)
			FAIL("a Send on QN %u", qn);
		if (st.rtr_wait && st.rtr == 'B' && n == 0 && last && mo == 0) {
			st.rtr_wait = false;
			st.msn_rx[0]++;
			return;
		}
		if (st.rtr_wait)
			FAIL("a Send before warpnic's RTR (%s)", rtr_name(st.rtr));
		if (mo != st.rx_off)
			FAIL("Send MSN %u: MO %u, want %u", msn, mo, st.rx_off);
		if (n > DS_RECV_MAX - st.rx_off)
			FAIL("Send MSN %u longer than %u octets", msn, DS_RECV_MAX);
		memcpy(st.rx_msg + st.rx_off, u + UNTAGGED_HDR, n);
		st.rx_off += n;
		if (!last)
			return;
		st.msn_rx[0]++;
		n = st.rx_off;
		st.rx_off = 0;
		on_message(st.rx_msg, n);
		return;
	case OP_READ_REQ:
		if (qn != 1 || mo != 0 || !last)
			FAIL("a Read Request with QN %u MO %u L %d", qn, mo, last);
		st.msn_rx[1]++;
		on_read_req(u + UNTAGGED_HDR, n);
		return;
	case OP_TERMINATE:
		if (n >= 4)
			FAIL("an RDMAP Terminate from warpnic: layer %u etype %u code %#x",
			     u[UNTAGGED_HDR] >> 4, u[UNTAGGED_HDR] & 0xf, u[UNTAGGED_HDR + 1]);
		FAIL("a short RDMAP Terminate from warpnic");
	default:
		FAIL("an untagged segment with RDMAP opcode %#x", op);
	}
}

static void
deliver(uint32_t ppid, const uint8_t *buf, size_t len)
{
	if (ppid == PPID_CTL) {
		on_ctl(buf, len);
		return;
	}
	if (st.rejected)
		FAIL("a DDP segment after the Reject (§6.3: the session is over)");
	if (!st.up)
		FAIL("a DDP segment (DDP-SSN %u) before the session is up (§6.2, §6.6)",
		     get16(buf));
	if (st.got_term)
		FAIL("a DDP segment after warpnic's Terminate (§6.2: the Terminate is the last)");
	on_ulpdu(buf + 2, len - 2);
}

/* ---------------------------------------------------------------- the exchange */

static void
sock_setup(int s)
{
	struct sctp_setadaptation ad = {.ssb_adaptation_ind = ALI_DDP};
	/* more streams than warpnic's 16 each way, to see what it makes of them (§8) */
	struct sctp_initmsg im = {.sinit_num_ostreams = 32, .sinit_max_instreams = 32,
				  .sinit_max_attempts = 8};
	static const uint16_t ev[] = {SCTP_ASSOC_CHANGE, SCTP_ADAPTATION_INDICATION,
				      SCTP_SHUTDOWN_EVENT, SCTP_REMOTE_ERROR,
				      SCTP_SEND_FAILED_EVENT};
	const int one = 1;

	if (setsockopt(s, IPPROTO_SCTP, SCTP_ADAPTATION_LAYER, &ad, sizeof(ad)) != 0 ||
	    setsockopt(s, IPPROTO_SCTP, SCTP_INITMSG, &im, sizeof(im)) != 0 ||
	    setsockopt(s, IPPROTO_SCTP, SCTP_NODELAY, &one, sizeof(one)) != 0 ||
	    /* RFC 5043 §9: no SCTP fragmentation; a message that would need it fails */
	    setsockopt(s, IPPROTO_SCTP, SCTP_DISABLE_FRAGMENTS, &one, sizeof(one)) != 0 ||
	    setsockopt(s, IPPROTO_SCTP, SCTP_RECVRCVINFO, &one, sizeof(one)) != 0)
		FAIL("SCTP socket options: %s", strerror(errno));
	for (unsigned int i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		struct sctp_event e = {.se_type = ev[i], .se_on = 1};

		if (setsockopt(s, IPPROTO_SCTP, SCTP_EVENT, &e, sizeof(e)) != 0)
			FAIL("SCTP_EVENT %u: %s", ev[i], strerror(errno));
	}
}

/* The association is up: the DDP indication and the stream counts. */
static void
assoc_check(void)
{
	struct sctp_status ss;
	socklen_t sl = sizeof(ss);

	PUMP_UNTIL(st.comm_up, 30, "SCTP_COMM_UP");
	/* the kernel queues the indication with COMM_UP (sctp_sf_do_5_1[DE]): it is there now */
	while (!st.ali_seen && pump(0) > 0)
		;
	if (!st.ali_seen)
		FAIL("warpnic's %s has no Adaptation Layer Indication (RFC 5043 §5.1 MUST)",
		     active ? "INIT-ACK" : "INIT");
	if (st.ali != ALI_DDP)
		FAIL("warpnic indicates adaptation %#x, not DDP's %#x", st.ali, ALI_DDP);
	if (st.in_streams != st.out_streams)
		FAIL("%u streams in, %u out (RFC 5043 §8: the same number)", st.in_streams,
		     st.out_streams);
	memset(&ss, 0, sizeof(ss));
	if (getsockopt(fd, IPPROTO_SCTP, SCTP_STATUS, &ss, &sl) != 0)
		FAIL("SCTP_STATUS: %s", strerror(errno));
	say("association up: adaptation indication %#x (DDP), streams %u in / %u out, "
	    "fragmentation point %u, peer rwnd %u", st.ali, st.in_streams, st.out_streams,
	    ss.sstat_fragmentation_point, ss.sstat_rwnd);
}

static void
run_exchange(void)
{
	uint8_t b[DS_WRITE_LEN];

	phase = "RTR";
	PUMP_UNTIL(!st.rtr_wait, 30, "RTR from warpnic");
	phase = "exchange";
	for (unsigned int k = 0; k < DS_NSEND; k++)
		send_msg(k, ds_send_len[k]);
	for (uint32_t i = 0; i < DS_WRITE_LEN; i++)
		b[i] = ds_pat(DS_PAT_PEER_WRITE, 0, i);
	ddp_send_tagged(OP_WRITE, st.peer.stag, st.peer.to, b, DS_WRITE_LEN);
	send_msg(DS_NSEND, DS_CTL_LEN); /* "write done" */
	PUMP_UNTIL(st.bye_sent && st.bye_got, 60, "the end of the exchange");
	if (st.rtr_read_pending)
		FAIL("no zero-length Read Response to our Read RTR");
	say("exchange done: %u Sends each way (MSN %u), %u octets written each way, %u read "
	    "each way", st.sends_rx, st.msn_rx[0], st.write_rx, st.read_got);
}

/* The session was the association's only one: warpnic shuts the association down (docs/operations.md). */
static void
assoc_end(void)
{
	phase = "shutdown";
	PUMP_UNTIL(st.eof || st.shutdown_seen, 30, "SHUTDOWN from warpnic");
	while (!st.eof && pump(1000) > 0)
		;
	if (!st.eof)
		FAIL("no end of the association after warpnic's SHUTDOWN");
	close(fd);
	fd = -1;
}

static void
terminate(void)
{
	phase = "termination";
	if (active) {
		/* RFC 5043 §6.2: we end it; warpnic's Terminate answers */
		ctl_send(F_TERMINATE, 0, 0, NULL, 0);
		PUMP_UNTIL(st.got_term, 30, "warpnic's Terminate");
	} else {
		PUMP_UNTIL(st.got_term, 30, "warpnic's Terminate");
		ctl_send(F_TERMINATE, 0, 0, NULL, 0);
	}
	assoc_end();
}

int
main(int argc, char **argv)
{
	uint8_t adv[DS_ADV_LEN];
	struct ds_adv me = {MY_STAG, MY_TO, DS_REGION};

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	alarm(240);
	st.msn_tx[0] = st.msn_tx[1] = st.msn_tx[2] = 1;
	for (uint32_t i = 0; i < DS_REGION; i++)
		region[i] = ds_pat(DS_PAT_PEER_READSRC, 0, i - DS_READ_OFF);
	memset(region, 0, DS_WRITE_LEN);
	ds_adv_put(adv, &me);
	if (argc >= 3 && strcmp(argv[argc - 1], "--plain") == 0) {
		plain = true;
		argc--;
	} else if (argc >= 3 && (strcmp(argv[argc - 1], "--rejected") == 0 ||
				 strcmp(argv[argc - 1], "--reject") == 0)) {
		reject_mode = true;
		argc--;
	}
	if (argc == 4 && strcmp(argv[1], "--connect") == 0) {
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_port = htons((uint16_t)atoi(argv[3]))};
		int tries = 0;

		active = true;
		if (inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1)
			FAIL("bad address %s", argv[2]);
		phase = "connect";
		for (;;) {
			fd = socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP);
			if (fd < 0)
				FAIL("socket(IPPROTO_SCTP): %s (no sctp.ko?)", strerror(errno));
			sock_setup(fd);
			if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
				break;
			/* warpnic ABORTs an INIT for a port nobody listens on yet */
			if (errno != ECONNREFUSED || ++tries == 30)
				FAIL("connect %s:%s: %s", argv[2], argv[3], strerror(errno));
			close(fd);
			sleep(1);
		}
		assoc_check();
		phase = "session setup";
		if (plain)
			ctl_send(F_INITIATE, 0, 0, adv, sizeof(adv));
		else /* Enhanced Initiate: peer-to-peer mode with every RTR type offered */
			ctl_send(F_ENH_INITIATE, (uint16_t)(ENH_A | ENH_B | DS_IRD),
				 (uint16_t)(ENH_C | ENH_D | DS_ORD), adv, sizeof(adv));
		PUMP_UNTIL(st.up || st.rejected, 30, "warpnic's Accept or Reject");
	} else if (argc == 3 && strcmp(argv[1], "--listen") == 0) {
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_port = htons((uint16_t)atoi(argv[2]))};
		struct pollfd pfd;
		int ls;

		phase = "listen";
		ls = socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP);
		if (ls < 0)
			FAIL("socket(IPPROTO_SCTP): %s (no sctp.ko?)", strerror(errno));
		sock_setup(ls);
		if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(ls, 1) != 0)
			FAIL("listen on port %s: %s", argv[2], strerror(errno));
		say("LISTENING on port %s", argv[2]);
		pfd.fd = ls;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 120000) != 1)
			FAIL("nobody associated within 120 s");
		fd = accept(ls, NULL, NULL);
		if (fd < 0)
			FAIL("accept: %s", strerror(errno));
		close(ls);
		assoc_check();
		phase = "session setup";
		PUMP_UNTIL(st.up || st.rejected, 30, "warpnic's Initiate");
	} else {
		fprintf(stderr, "usage: %s --connect ADDR PORT [--plain|--rejected] | "
			"--listen PORT [--reject]\n", argv[0]);
		return 2;
	}
	if (reject_mode && !st.rejected)
		FAIL("the session was accepted, not rejected");
	if (st.rejected) {
		say("session rejected (%s %s Reject with the ULP's Private Data)%s",
		    active ? "warpnic's" : "our", st.enhanced ? "Enhanced" : "plain",
		    active ? "" : " after warpnic's Initiate");
		assoc_end();
		say("ok %s reject: session control %u sent %u received, no DDP segment, "
		    "association shut down by SHUTDOWN", active ? "active" : "passive", st.ctl_tx,
		    st.ctl_rx);
		return 0;
	}
	say("session up: %s %s, peer-to-peer %s, RTR %s%s%s%s, warpnic IRD %u ORD %u, region "
	    "STag %#x TO %#llx", st.enhanced ? "enhanced" : "plain",
	    active ? "Initiate/Accept" : "Initiate received, Accept sent", st.p2p ? "yes" : "no",
	    rtr_name(st.rtr), active ? " (the Accept names: " : "", st.rtr_offer,
	    active ? ")" : "", st.peer_ird, st.peer_ord, st.peer.stag,
	    (unsigned long long)st.peer.to);
	run_exchange();
	terminate();
	say("ok %s%s: session control %u sent %u received, DDP segments %u sent %u received "
	    "(%u out of DDP-SSN order), Terminate sent %s, association shut down by SHUTDOWN",
	    active ? "active" : "passive", plain ? " plain" : "", st.ctl_tx, st.ctl_rx, st.ddp_tx,
	    st.ddp_rx, st.held,
	    st.sent_term ? "yes" : "no (warpnic's SHUTDOWN came first)");
	return 0;
}
