/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Real Linux soft-iWARP (siw) traffic: every TCP direction of the captures in
 * test/data/siw (Linux siw's traffic, captured) is reassembled, the MPA
 * Request/Reply decoded, every FPDU's CRC checked (or its zero CRC field when
 * CRC is off) both by walking the stream and with the MPA deframer, and every
 * ULPDU parsed by wn_wire_ddp_parse(), rebuilt with the builders and compared.
 * The DDP rules siw follows (RFC 5041 §5.2: MSN from 1 per QN, MO = octets
 * already received) and the Read Request/Response pairing (RFC 5040 §5.2)
 * are checked on the decoded headers, and opcodes are counted.
 * A failure means warpnic cannot read what a Linux iWARP peer sends.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "wn_wire_crc.h"
#include "wn_wire_ddp.h"
#include "wn_wire_mpa.h"

static const char *src_root;
static char cap_dir[512];

/* ---- classic pcap, Ethernet, IPv4/IPv6, TCP: ordered payload per direction ---------------- */

struct flow {
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint32_t next;
	bool synced;
	uint8_t *data;
	size_t len, cap;
};

#define MAX_FLOWS 16

static uint32_t
rd32(const uint8_t *p, bool swap)
{
	uint32_t v =
		(uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return swap ? __builtin_bswap32(v) : v;
}

static void
flow_append(struct flow *f, uint32_t seq, bool syn, const uint8_t *p, size_t n)
{
	if (syn) {
		f->next = seq + 1;
		f->synced = true;
		return;
	}
	if (n == 0)
		return;
	if (!f->synced) {
		f->next = seq;
		f->synced = true;
	}
	uint32_t dup = f->next - seq; /* octets already seen (retransmission) */
	if ((int32_t)dup < 0)
		fail_msg("gap in TCP stream at seq %u (expected %u)", seq, f->next);
	if (dup >= n)
		return;
	p += dup;
	n -= dup;
	if (f->len + n > f->cap) {
		f->cap = (f->len + n) * 2;
		f->data = realloc(f->data, f->cap);
		assert_non_null(f->data);
	}
	memcpy(f->data + f->len, p, n);
	f->len += n;
	f->next += (uint32_t)n;
}

/* @return number of flows, or -1 when the file is absent. */
static int
load(const char *name, struct flow *flows)
{
	char path[700];
	struct stat st;
	int nf = 0;

	snprintf(path, sizeof(path), "%s/%s", cap_dir, name);
	FILE *fp = fopen(path, "rb");
	if (fp == NULL)
		return -1;
	assert_int_equal(fstat(fileno(fp), &st), 0);
	uint8_t *file = malloc((size_t)st.st_size + 1);
	assert_non_null(file);
	size_t len = fread(file, 1, (size_t)st.st_size, fp);
	fclose(fp);
	assert_int_equal(len, (size_t)st.st_size);
	assert_true(len >= 24);
	uint32_t magic = rd32(file, false);
	bool swap = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
	assert_true(swap || magic == 0xa1b2c3d4u || magic == 0xa1b23c4du);
	assert_int_equal(rd32(file + 20, swap), 1); /* LINKTYPE_ETHERNET */

	for (size_t off = 24; off < len;) {
		assert_true(off + 16 <= len);
		const uint8_t *r = file + off;
		uint32_t incl = rd32(r + 8, swap);
		const uint8_t *e = r + 16;
		off += 16 + (size_t)incl;
		assert_true(off <= len);
		if (incl < 14)
			continue;
		size_t l3 = 14;
		uint16_t et = wn_wire_get_be16(e + 12);
		if (et == 0x8100) {
			et = wn_wire_get_be16(e + 16);
			l3 = 18;
		}
		const uint8_t *ip = e + l3;
		size_t iph, plen, alen;
		const uint8_t *sa, *da;
		if (et == 0x0800 && incl >= l3 + 20) {
			if (ip[9] != 6)
				continue;
			iph = (size_t)(ip[0] & 15) * 4;
			plen = wn_wire_get_be16(ip + 2) - iph;
			sa = ip + 12, da = ip + 16, alen = 4;
		} else if (et == 0x86DD && incl >= l3 + 40) {
			if (ip[6] != 6)
				continue;
			iph = 40;
			plen = wn_wire_get_be16(ip + 4);
			sa = ip + 8, da = ip + 24, alen = 16;
		} else {
			continue;
		}
		const uint8_t *tcp = ip + iph;
		size_t th = (size_t)(tcp[12] >> 4) * 4;
		assert_true(l3 + iph + plen <= incl); /* captures are not truncated */
		assert_true(th <= plen);
		uint16_t sp = wn_wire_get_be16(tcp), dp = wn_wire_get_be16(tcp + 2);
		struct flow *f = NULL;
		for (int i = 0; i < nf; i++)
			if (flows[i].sport == sp && flows[i].dport == dp &&
			    memcmp(flows[i].src, sa, alen) == 0 &&
			    memcmp(flows[i].dst, da, alen) == 0)
				f = &flows[i];
		if (f == NULL) {
			assert_true(nf < MAX_FLOWS);
			f = &flows[nf++];
			memset(f, 0, sizeof(*f));
			memcpy(f->src, sa, alen);
			memcpy(f->dst, da, alen);
			f->sport = sp;
			f->dport = dp;
		}
		flow_append(f, wn_wire_get_be32(tcp + 4), (tcp[13] & 0x02) != 0, tcp + th,
			    plen - th);
	}
	free(file);
	return nf;
}

static struct flow *
reverse_of(struct flow *flows, int nf, const struct flow *f)
{
	for (int i = 0; i < nf; i++)
		if (flows[i].sport == f->dport && flows[i].dport == f->sport &&
		    memcmp(flows[i].src, f->dst, 16) == 0 && memcmp(flows[i].dst, f->src, 16) == 0)
			return &flows[i];
	return NULL;
}

/* ---- per-direction DDP/RDMAP state --------------------------------------------------------- */

#define MAX_RREQ 64

struct dir_state {
	unsigned int ops[WN_RDMAP_OPCODE_COUNT]; /* messages (L segments) per opcode */
	unsigned int segs;			 /* ULPDUs */
	uint32_t next_msn[4];			 /* per QN, RFC 5041 §5.2 */
	uint32_t mo;				 /* octets received of the open untagged msg */
	uint64_t payload;			 /* ULP payload octets */
	/* Read Requests this direction sent, answered by the other direction in order */
	struct wn_rdmap_read_req rreq[MAX_RREQ];
	unsigned int rreq_head, rreq_tail;
	uint64_t resp_got; /* octets of the current Read Response (other direction's view) */
	bool first_seen;
	struct wn_ddp_seg first;   /* the first ULPDU (p2p RTR check) */
	unsigned int rtr_zero_len; /* zero-length RDMA Writes */
};

/* Rebuild the headers of @p seg with the builders and compare with @p u. */
static void
rebuild_compare(const uint8_t *u, size_t len, const struct wn_ddp_seg *seg)
{
	uint8_t b[128];
	int n;

	switch (seg->h.opcode) {
	case WN_RDMAP_READ_REQ:
		n = wn_wire_rdmap_read_req_build(b, sizeof(b), seg->h.msn, &seg->u.rreq);
		break;
	case WN_RDMAP_TERMINATE:
		n = (int)len; /* compared octet for octet below */
		memcpy(b, u, len < sizeof(b) ? len : sizeof(b));
		break;
	default:
		n = wn_wire_ddp_hdr_build(b, sizeof(b), &seg->h);
		break;
	}
	assert_true(n > 0 && (size_t)n <= len);
	/* reserved bits are not checked on receive and zero on send */
	assert_int_equal(b[0], u[0] & (uint8_t)~WN_DDP_CTRL_RSVD);
	assert_int_equal(b[1], u[1] & (uint8_t)~WN_RDMAP_CTRL_RSV);
	if (!seg->h.tagged && !wn_wire_rdmap_ops[seg->h.opcode].invalidate) {
		/* RsvdULP[8:39] is ignored for these opcodes; siw sends 0 */
		assert_int_equal(wn_wire_get_be32(u + 2), 0);
	}
	assert_memory_equal(b + 2, u + 2, (size_t)n - 2);
}

static void
on_ulpdu(struct dir_state *me, struct dir_state *peer, const uint8_t *u, size_t len, bool pass1)
{
	struct wn_ddp_seg seg;
	struct wn_ddp_error err;

	int rc = wn_wire_ddp_parse(u, len, WN_DDP_F_RFC7306, &seg, &err);
	if (rc != 0)
		fail_msg("siw ULPDU rejected: %s", wn_wire_ddp_reason_str(err.reason));
	if (pass1) {
		/* first pass: only collect the Read Requests of this direction */
		if (seg.h.opcode == WN_RDMAP_READ_REQ) {
			assert_true(me->rreq_tail - me->rreq_head < MAX_RREQ);
			me->rreq[me->rreq_tail++ % MAX_RREQ] = seg.u.rreq;
		}
		return;
	}
	rebuild_compare(u, len, &seg);
	if (!me->first_seen) {
		me->first = seg;
		me->first_seen = true;
	}
	me->segs++;
	me->payload += seg.payload_len;
	if (seg.h.last)
		me->ops[seg.h.opcode]++;

	if (!seg.h.tagged) {
		/* RFC 5041 §5.2 as siw applies it: MSN per QN from 1, MO = octets so far */
		assert_true(seg.h.qn < 4);
		assert_int_equal(seg.h.msn, me->next_msn[seg.h.qn]);
		assert_int_equal(seg.h.mo, seg.h.qn == 0 ? me->mo : 0);
		if (seg.h.qn == 0)
			me->mo = seg.h.last ? 0 : me->mo + seg.payload_len;
		if (seg.h.last)
			me->next_msn[seg.h.qn] = wn_ddp_msn_next(me->next_msn[seg.h.qn]);
	}
	if (seg.h.opcode == WN_RDMAP_WRITE && seg.payload_len == 0)
		me->rtr_zero_len++;
	if (seg.h.opcode == WN_RDMAP_READ_RESP) {
		/* RFC 5040 §5.2: sink STag/TO copied from the oldest open request */
		assert_true(peer->rreq_head != peer->rreq_tail);
		const struct wn_rdmap_read_req *rr = &peer->rreq[peer->rreq_head % MAX_RREQ];
		assert_int_equal(seg.h.stag, rr->sink_stag);
		assert_int_equal(seg.h.to, rr->sink_to + peer->resp_got);
		peer->resp_got += seg.payload_len;
		if (seg.h.last) {
			assert_int_equal(peer->resp_got, rr->size);
			peer->resp_got = 0;
			peer->rreq_head++;
		}
	}
}

/* Walk the FPDUs of one direction by ULPDU_Length (no Markers: siw never uses them). */
static unsigned int
walk(struct dir_state *me, struct dir_state *peer, const uint8_t *p, size_t n, bool crc, bool pass1)
{
	unsigned int fpdus = 0;
	size_t off = 0;

	while (off < n) {
		assert_true(off + 2 <= n);
		size_t ulen = wn_wire_get_be16(p + off);
		size_t pad = wn_mpa_pad_len(ulen);
		size_t covered = 2 + ulen + pad;
		assert_true(off + covered + 4 <= n); /* captures end on an FPDU boundary */
		uint32_t wire = wn_crc32c_get_wire(p + off + covered);
		if (crc)
			assert_int_equal(wire, wn_crc32c(p + off, covered)); /* RFC 5044 §4.4 */
		else
			assert_int_equal(wire, 0); /* siw sends zeros when CRC is off */
		on_ulpdu(me, peer, p + off + 2, ulen, pass1);
		off += covered + 4;
		fpdus++;
	}
	return fpdus;
}

struct collect_ctx {
	unsigned int n;
	size_t octets;
};

static int
collect_deliver(void *arg, const uint8_t *ulpdu, size_t len)
{
	struct collect_ctx *c = arg;
	struct wn_ddp_seg seg;

	assert_int_equal(wn_wire_ddp_parse(ulpdu, len, WN_DDP_F_RFC7306, &seg, NULL), 0);
	c->n++;
	c->octets += len;
	return 0;
}

/* The same direction through the MPA deframer (collector mode), in uneven chunks. */
static unsigned int
deframe(const uint8_t *p, size_t n, bool crc, size_t *octets)
{
	static uint8_t ulpdu[65536];
	struct collect_ctx c = {0};
	struct wn_mpa_collector col = {
		.buf = ulpdu, .cap = sizeof(ulpdu), .deliver = collect_deliver, .arg = &c};
	struct wn_mpa_deframer_cfg cfg = {.stream = {.seq_start = 7, .markers = false, .crc = crc},
					  .seq = 7};
	struct wn_mpa_deframer d;

	assert_int_equal(wn_wire_mpa_deframer_init(&d, &cfg, &wn_wire_mpa_collect_ops, &col), 0);
	for (size_t off = 0, step = 1; off < n; off += step, step = step * 3 % 1999 + 1) {
		size_t k = n - off < step ? n - off : step;
		size_t used = 0;
		assert_int_equal(wn_wire_mpa_deframer_input(&d, p + off, k, &used), 0);
		assert_int_equal(used, k);
		step = k;
	}
	assert_int_equal(wn_mpa_deframer_error(&d), WN_MPA_ERR_NONE);
	*octets = c.octets;
	return c.n;
}

struct expect {
	const char *file;
	int rev;
	bool crc, p2p;
	/* messages per opcode summed over both directions of every connection */
	unsigned int write, read_req, read_resp, send, terminate;
	unsigned int conns;
};

static void
check_file(const struct expect *x, unsigned int *files_seen)
{
	struct flow flows[MAX_FLOWS];
	unsigned int tot[WN_RDMAP_OPCODE_COUNT] = {0};
	unsigned int conns = 0;

	int nf = load(x->file, flows);
	if (nf < 0)
		fail_msg("%s: not found in %s", x->file, cap_dir);
	(*files_seen)++;
	for (int i = 0; i < nf; i++) {
		struct flow *ini = &flows[i];
		struct wn_mpa_frame req, rep;
		size_t rq = 0, rp = 0;

		if (ini->len < WN_MPA_KEY_LEN || memcmp(ini->data, WN_MPA_KEY_REQ, 16) != 0)
			continue;
		struct flow *rsp = reverse_of(flows, nf, ini);
		assert_non_null(rsp);
		assert_int_equal(wn_wire_mpa_frame_decode(ini->data, ini->len, NULL, &req, &rq),
				 WN_MPA_FRAME_OK);
		assert_int_equal(wn_wire_mpa_frame_decode(rsp->data, rsp->len, NULL, &rep, &rp),
				 WN_MPA_FRAME_OK);
		assert_int_equal(req.type, WN_MPA_FRAME_REQUEST);
		assert_int_equal(rep.type, WN_MPA_FRAME_REPLY);
		assert_int_equal(req.rev, x->rev);
		assert_false(req.markers || rep.markers);
		bool crc = req.crc || rep.crc; /* RFC 5044 §7.1.1 */
		assert_int_equal(crc, x->crc);
		assert_int_equal(req.p2p, x->p2p);

		struct dir_state a, b;
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		for (int q = 0; q < 4; q++)
			a.next_msn[q] = b.next_msn[q] = 1; /* RFC 5041 §5.2: first MSN is 1 */
		walk(&a, &b, ini->data + rq, ini->len - rq, crc, true);
		walk(&b, &a, rsp->data + rp, rsp->len - rp, crc, true);
		unsigned int fa = walk(&a, &b, ini->data + rq, ini->len - rq, crc, false);
		unsigned int fb = walk(&b, &a, rsp->data + rp, rsp->len - rp, crc, false);

		/* the MPA deframer sees the same ULPDUs */
		size_t oa, ob;
		assert_int_equal(deframe(ini->data + rq, ini->len - rq, crc, &oa), fa);
		assert_int_equal(deframe(rsp->data + rp, rsp->len - rp, crc, &ob), fb);
		assert_int_equal(a.segs, fa);
		assert_int_equal(b.segs, fb);

		/* every Read Request was answered completely */
		assert_int_equal(a.rreq_head, a.rreq_tail);
		assert_int_equal(b.rreq_head, b.rreq_tail);
		if (x->p2p) {
			/*
			 * The RTR is a zero-length Write. siw sends STag 0,
			 * but this capture (Linux 6.1 siw) sends STag 1, TO 0: exactly
			 * the RFC 6581 §7.1 Write RTR form.
			 */
			assert_true(a.first_seen);
			assert_int_equal(a.first.h.opcode, WN_RDMAP_WRITE);
			assert_int_equal(a.first.payload_len, 0);
			assert_int_equal(a.first.h.stag, 1);
			assert_int_equal(a.first.h.to, 0);
			assert_int_equal(a.rtr_zero_len, 1);
		}
		for (int op = 0; op < WN_RDMAP_OPCODE_COUNT; op++)
			tot[op] += a.ops[op] + b.ops[op];
		print_message("  %s conn %u: %u + %u FPDUs, %llu + %llu payload octets\n", x->file,
			      conns, fa, fb, (unsigned long long)a.payload,
			      (unsigned long long)b.payload);
		conns++;
	}
	for (int i = 0; i < nf; i++)
		free(flows[i].data);
	print_message("  %s: write %u read_req %u read_resp %u send %u terminate %u\n", x->file,
		      tot[0], tot[1], tot[2], tot[3] + tot[4] + tot[5] + tot[6], tot[7]);
	assert_int_equal(conns, x->conns);
	assert_int_equal(tot[WN_RDMAP_WRITE], x->write);
	assert_int_equal(tot[WN_RDMAP_READ_REQ], x->read_req);
	assert_int_equal(tot[WN_RDMAP_READ_RESP], x->read_resp);
	assert_int_equal(tot[WN_RDMAP_SEND] + tot[WN_RDMAP_SEND_SE] + tot[WN_RDMAP_SEND_INV] +
				 tot[WN_RDMAP_SEND_SE_INV],
			 x->send);
	assert_int_equal(tot[WN_RDMAP_TERMINATE], x->terminate);
	for (int op = 8; op < WN_RDMAP_OPCODE_COUNT; op++)
		assert_int_equal(tot[op], 0);
}

/*
 * Expected counts are what tshark's iwarp_ddp_rdmap dissector shows for the
 * same files (one FPDU per TCP segment): rping -C 10 does per iteration a
 * Send each way, a Read, a Write and a Send each way again; ib_send_lat -R
 * opens a connection for its parameter exchange and one for the test.
 */
static const struct expect expects[] = {
	{"rping-crc.pcap", 2, true, false, 10, 10, 10, 40, 0, 1},
	{"rping-p2p.pcap", 2, false, true, 11, 10, 10, 40, 0, 1},
	{"rping-mpav1.pcap", 1, false, false, 0, 0, 0, 1, 0, 1},
	{"perftest-send-lat.pcap", 2, false, false, 0, 0, 0, 422, 0, 2},
};

static void
test_siw_captures(void **state)
{
	unsigned int seen = 0;
	(void)state;

	for (size_t i = 0; i < sizeof(expects) / sizeof(expects[0]); i++)
		check_file(&expects[i], &seen);
	assert_int_equal(seen, sizeof(expects) / sizeof(expects[0]));
}

/* A flipped bit in a CRC-protected siw FPDU is caught by the deframer. */
static void
test_siw_crc_flip(void **state)
{
	struct flow flows[MAX_FLOWS];
	(void)state;

	int nf = load("rping-crc.pcap", flows);
	if (nf < 0)
		fail_msg("rping-crc.pcap: not found in %s", cap_dir);
	for (int i = 0; i < nf; i++) {
		struct flow *f = &flows[i];
		struct wn_mpa_frame fr;
		size_t used = 0, fl = 0;

		if (f->len < 16 ||
		    wn_wire_mpa_frame_decode(f->data, f->len, NULL, &fr, &fl) != WN_MPA_FRAME_OK)
			continue;
		uint8_t *p = f->data + fl;
		size_t n = f->len - fl;
		assert_true(n > 40);
		p[n - 5] ^= 0x10; /* last octet before the last CRC: ULPDU or PAD */
		static uint8_t ulpdu[65536];
		struct collect_ctx c = {0};
		struct wn_mpa_collector col = {
			.buf = ulpdu, .cap = sizeof(ulpdu), .deliver = collect_deliver, .arg = &c};
		struct wn_mpa_deframer_cfg cfg = {.stream = {.markers = false, .crc = true}};
		struct wn_mpa_deframer d;
		assert_int_equal(
			wn_wire_mpa_deframer_init(&d, &cfg, &wn_wire_mpa_collect_ops, &col), 0);
		assert_int_equal(wn_wire_mpa_deframer_input(&d, p, n, &used), -EBADMSG);
		assert_int_equal(wn_mpa_deframer_error(&d), WN_MPA_ERR_CRC);
	}
	for (int i = 0; i < nf; i++)
		free(flows[i].data);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siw_captures),
		cmocka_unit_test(test_siw_crc_flip),
	};
	src_root = argc > 1 ? argv[1] : ".";
	snprintf(cap_dir, sizeof(cap_dir), "%s/test/data/siw", src_root);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
