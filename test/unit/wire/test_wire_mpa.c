/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA Request/Reply codec (RFC 5044 §7.1.1, RFC 6581 §6/§9) and RFC 6581
 * negotiation. A failure here means warpnic would send or accept a wrong
 * startup frame, or pick wrong IRD/ORD/RTR values.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wn_wire_mpa.h"

/* Key "MPA ID Req Frame" / "MPA ID Rep Frame" in hex, as in RFC 5044 §7.1.1. */
static const uint8_t req_key[16] = {0x4D, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
				    0x65, 0x71, 0x20, 0x46, 0x72, 0x61, 0x6D, 0x65};
static const uint8_t rep_key[16] = {0x4D, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
				    0x65, 0x70, 0x20, 0x46, 0x72, 0x61, 0x6D, 0x65};

/* Build a frame by hand: key, flags, rev, pd_len, then pd octets. */
static size_t
mk(uint8_t *out, bool reply, uint8_t flags, uint8_t rev, uint16_t pd_len, const uint8_t *pd,
   size_t pd_have)
{
	memcpy(out, reply ? rep_key : req_key, 16);
	out[16] = flags;
	out[17] = rev;
	out[18] = (uint8_t)(pd_len >> 8);
	out[19] = (uint8_t)pd_len;
	if (pd_have)
		memcpy(out + 20, pd, pd_have);
	return 20 + pd_have;
}

/* Decode from an exactly sized heap copy so ASan catches any over-read. */
static enum wn_mpa_frame_status
decode_exact(const uint8_t *buf, size_t len, const struct wn_mpa_frame_rules *rules,
	     struct wn_mpa_frame *f, size_t *used)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum wn_mpa_frame_status st;

	assert_non_null(copy);
	memcpy(copy, buf, len);
	st = wn_wire_mpa_frame_decode(copy, len, rules, f, used);
	/* pd points into the input: re-point it into the caller's buffer */
	if (st == WN_MPA_FRAME_OK && f->pd != NULL)
		f->pd = buf + (f->pd - copy);
	free(copy);
	return st;
}

static void
test_encode_request_bytes(void **state)
{
	static const uint8_t pd[5] = {'h', 'e', 'l', 'l', 'o'};
	struct wn_mpa_frame f = {.type = WN_MPA_FRAME_REQUEST, .crc = true, .rev = 1,
				 .pd_len = 5, .pd = pd, .rejected = true};
	uint8_t out[64], want[64];
	(void)state;

	size_t wl = mk(want, false, 0x40, 1, 5, pd, 5); /* R never sent in a Request */
	assert_int_equal(wn_wire_mpa_frame_encode(&f, out, sizeof(out)), (int)wl);
	assert_memory_equal(out, want, wl);

	/* Reply, rejected, markers, no PD */
	struct wn_mpa_frame r = {.type = WN_MPA_FRAME_REPLY, .markers = true, .rejected = true,
				 .rev = 1};
	wl = mk(want, true, 0xA0, 1, 0, NULL, 0);
	assert_int_equal(wn_wire_mpa_frame_encode(&r, out, sizeof(out)), 20);
	assert_memory_equal(out, want, wl);
}

static void
test_siw_requests(void **state)
{
	/* siw rping: flags 0x10 (S), rev 2, PD_Length 4, IRD 1 ORD 1 (seen on the wire). */
	static const uint8_t cs[4] = {0x00, 0x01, 0x00, 0x01};
	/* siw peer-to-peer initiator: A=1, C=1, D=1, IRD 1, ORD 1. */
	static const uint8_t p2p[4] = {0x80, 0x01, 0xc0, 0x01};
	struct wn_mpa_frame f;
	uint8_t buf[64];
	size_t used = 0;
	(void)state;

	size_t n = mk(buf, false, 0x10, 2, 4, cs, 4);
	assert_int_equal(decode_exact(buf, n, NULL, &f, &used), WN_MPA_FRAME_OK);
	assert_int_equal(used, 24);
	assert_int_equal(f.type, WN_MPA_FRAME_REQUEST);
	assert_true(f.enhanced);
	assert_false(f.p2p);
	assert_false(f.markers);
	assert_false(f.crc);
	assert_int_equal(f.ird, 1);
	assert_int_equal(f.ord, 1);
	assert_int_equal(f.rtr, 0);
	assert_int_equal(f.pd_len, 0);
	assert_null(f.pd);

	n = mk(buf, false, 0x10, 2, 4, p2p, 4);
	assert_int_equal(decode_exact(buf, n, NULL, &f, &used), WN_MPA_FRAME_OK);
	assert_true(f.p2p);
	assert_int_equal(f.rtr, WN_MPA_RTR_WRITE | WN_MPA_RTR_READ);
	assert_int_equal(f.ird, 1);
	assert_int_equal(f.ord, 1);

	/* re-encoding the decoded frame gives the same bytes */
	uint8_t out[64];
	assert_int_equal(wn_wire_mpa_frame_encode(&f, out, sizeof(out)), (int)n);
	assert_memory_equal(out, buf, n);
}

static void
test_siw_p2p_negotiation(void **state)
{
	static const uint8_t p2p_req[4] = {0x80, 0x01, 0xc0, 0x01};
	static const uint8_t siw_reply[4] = {0x80, 0x01, 0x80, 0x01};
	static const uint8_t read_reply[4] = {0x80, 0x01, 0x40, 0x01};
	struct wn_mpa_frame req, rep;
	struct wn_mpa_neg neg;
	uint8_t buf[64], out[64];
	(void)state;

	/* Responder that accepts only Write RTRs answers like siw: 80 01 80 01. */
	size_t n = mk(buf, false, 0x10, 2, 4, p2p_req, 4);
	assert_int_equal(decode_exact(buf, n, NULL, &req, NULL), WN_MPA_FRAME_OK);
	struct wn_mpa_caps resp = {.ird = 1, .ord = 1, .rtr = WN_MPA_RTR_WRITE};
	assert_int_equal(wn_wire_mpa_negotiate_responder(&resp, &req, &neg), WN_MPA_ERR_NONE);
	assert_true(neg.enhanced);
	assert_true(neg.p2p);
	assert_int_equal(neg.rtr, WN_MPA_RTR_WRITE);
	assert_int_equal(neg.ird, 1);
	assert_int_equal(neg.ord, 1);
	assert_int_equal(neg.peer_ird, 1);
	assert_int_equal(neg.peer_ord, 1);
	struct wn_mpa_frame r = {.type = WN_MPA_FRAME_REPLY, .rev = 2, .enhanced = true,
				 .p2p = neg.p2p, .rtr = neg.rtr, .ird = neg.reply_ird,
				 .ord = neg.reply_ord};
	assert_int_equal(wn_wire_mpa_frame_encode(&r, out, sizeof(out)), 24);
	assert_memory_equal(out + 20, siw_reply, 4);
	assert_memory_equal(out, rep_key, 16);
	assert_int_equal(out[16], 0x10);

	/* Initiator offering Write and Read: Reply 80 01 80 01 -> Write RTR. */
	struct wn_mpa_caps init = {.ird = 1, .ord = 1, .p2p = true,
				   .rtr = WN_MPA_RTR_WRITE | WN_MPA_RTR_READ};
	n = mk(buf, true, 0x10, 2, 4, siw_reply, 4);
	assert_int_equal(decode_exact(buf, n, NULL, &rep, NULL), WN_MPA_FRAME_OK);
	assert_int_equal(wn_wire_mpa_negotiate_initiator(&init, &rep, &neg), WN_MPA_ERR_NONE);
	assert_int_equal(neg.rtr, WN_MPA_RTR_WRITE);
	assert_int_equal(neg.ird, 1);
	assert_int_equal(neg.ord, 1);

	/* Reply accepting only Read: pick Read (from the Reply, not from the offer). */
	n = mk(buf, true, 0x10, 2, 4, read_reply, 4);
	assert_int_equal(decode_exact(buf, n, NULL, &rep, NULL), WN_MPA_FRAME_OK);
	assert_int_equal(wn_wire_mpa_negotiate_initiator(&init, &rep, &neg), WN_MPA_ERR_NONE);
	assert_int_equal(neg.rtr, WN_MPA_RTR_READ);

	/* Initiator that can only send a Send RTR: no common option -> error 7. */
	init.rtr = WN_MPA_RTR_SEND;
	assert_int_equal(wn_wire_mpa_negotiate_initiator(&init, &rep, &neg), WN_MPA_ERR_NO_RTR);
}

static void
test_decoder_rejects(void **state)
{
	static const uint8_t enh[4] = {0x00, 0x01, 0x00, 0x01};
	static const uint8_t big[600];
	uint8_t buf[1200] = {0};
	struct wn_mpa_frame f;
	size_t n;
	(void)state;

	/* wrong key: first octet, last octet, and already on a partial prefix */
	n = mk(buf, false, 0, 1, 0, NULL, 0);
	buf[0] = 'm';
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_BAD_KEY);
	assert_int_equal(decode_exact(buf, 1, NULL, &f, NULL), WN_MPA_FRAME_BAD_KEY);
	n = mk(buf, false, 0, 1, 0, NULL, 0);
	buf[15] = 'E';
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_BAD_KEY);
	n = mk(buf, false, 0, 1, 0, NULL, 0);
	buf[9] = 'x';
	assert_int_equal(decode_exact(buf, 10, NULL, &f, NULL), WN_MPA_FRAME_BAD_KEY);

	/* Rev above 2 */
	n = mk(buf, false, 0, 3, 0, NULL, 0);
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_BAD_REV);
	n = mk(buf, true, 0, 255, 0, NULL, 0);
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_BAD_REV);
	/* Rev 0 refused by default, accepted when configured */
	n = mk(buf, false, 0, 0, 0, NULL, 0);
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_REV_REFUSED);
	struct wn_mpa_frame_rules r0 = {.rev_mask = 7, .enhanced = true, .pd_max = 512};
	assert_int_equal(decode_exact(buf, n, &r0, &f, NULL), WN_MPA_FRAME_OK);
	assert_int_equal(f.rev, 0);
	/* Rev 2 refused when only Rev 1 is allowed */
	struct wn_mpa_frame_rules r1 = {.rev_mask = 2, .enhanced = true, .pd_max = 512};
	n = mk(buf, false, 0, 2, 0, NULL, 0);
	assert_int_equal(decode_exact(buf, n, &r1, &f, NULL), WN_MPA_FRAME_REV_REFUSED);

	/* PD_Length over 512 (checked before the octets arrive) */
	n = mk(buf, false, 0, 1, 513, NULL, 0);
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_PD_TOO_LONG);
	n = mk(buf, false, 0, 1, 0xFFFF, NULL, 0);
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_PD_TOO_LONG);
	/* exactly 512 is fine */
	n = mk(buf, false, 0, 1, 512, big, 512);
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_OK);
	assert_int_equal(f.pd_len, 512);
	/* a configured 256 limit (siw) */
	struct wn_mpa_frame_rules r256 = {.rev_mask = 6, .enhanced = true, .pd_max = 256};
	n = mk(buf, false, 0, 1, 257, big, 257);
	assert_int_equal(decode_exact(buf, n, &r256, &f, NULL), WN_MPA_FRAME_PD_TOO_LONG);
	/* pd_max 0 means the RFC limit */
	r256.pd_max = 0;
	assert_int_equal(decode_exact(buf, n, &r256, &f, NULL), WN_MPA_FRAME_OK);

	/* S=1 needs PD_Length >= 4 */
	n = mk(buf, false, 0x10, 2, 3, enh, 3);
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_ENH_SHORT);
	n = mk(buf, false, 0x10, 2, 0, NULL, 0);
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_ENH_SHORT);
	/* S=1 at Rev 2 with RFC 6581 disabled: malformed (RFC 6581 §10) */
	struct wn_mpa_frame_rules noenh = {.rev_mask = 6, .enhanced = false, .pd_max = 512};
	n = mk(buf, false, 0x10, 2, 4, enh, 4);
	assert_int_equal(decode_exact(buf, n, &noenh, &f, NULL), WN_MPA_FRAME_ENH_REFUSED);
	/* S at Rev 1 is a Res bit: ignored, Private Data kept whole */
	n = mk(buf, false, 0x10, 1, 3, enh, 3);
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_OK);
	assert_false(f.enhanced);
	assert_int_equal(f.pd_len, 3);
	assert_int_equal(f.res, 0x10);

	for (int st = 0; st < WN_MPA_FRAME_STATUS_COUNT; st++) {
		const char *s = wn_wire_mpa_frame_status_str((enum wn_mpa_frame_status)st);
		assert_non_null(s);
		for (int o = 0; o < st; o++)
			assert_string_not_equal(s, wn_wire_mpa_frame_status_str(
							   (enum wn_mpa_frame_status)o));
	}
	assert_string_equal(wn_wire_mpa_frame_status_str(WN_MPA_FRAME_STATUS_COUNT), "unknown");
}

static void
test_need_more_every_prefix(void **state)
{
	static const uint8_t pd[12] = {0x80, 0x02, 0x40, 0x03, 1, 2, 3, 4, 5, 6, 7, 8};
	struct wn_mpa_frame f;
	uint8_t buf[64];
	size_t used = 0;
	(void)state;

	size_t n = mk(buf, true, 0x50, 2, 12, pd, 12);
	for (size_t l = 0; l < n; l++)
		assert_int_equal(decode_exact(buf, l, NULL, &f, NULL), WN_MPA_FRAME_NEED_MORE);
	/* extra trailing octets are the next phase: consumed stops at the frame */
	buf[n] = 0xAB;
	assert_int_equal(decode_exact(buf, n + 1, NULL, &f, &used), WN_MPA_FRAME_OK);
	assert_int_equal(used, n);
	assert_int_equal(f.type, WN_MPA_FRAME_REPLY);
	assert_true(f.crc);
	assert_false(f.markers);
	assert_true(f.p2p);
	assert_int_equal(f.rtr, WN_MPA_RTR_READ);
	assert_int_equal(f.ird, 2);
	assert_int_equal(f.ord, 3);
	assert_int_equal(f.pd_len, 8);
	assert_memory_equal(f.pd, pd + 4, 8);
}

static void
test_ignored_bits(void **state)
{
	/* A=0 with B/C/D set: B/C/D ignored, IRD/ORD still read. */
	static const uint8_t enh[4] = {0x40, 0x05, 0xc0, 0x03};
	struct wn_mpa_frame f, g;
	uint8_t buf[64], out[64];
	(void)state;

	/* Res bits (0x0F) set, and R set in a Request: both ignored. */
	size_t n = mk(buf, false, 0x10 | 0x20 | 0x0F, 2, 4, enh, 4);
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_OK);
	assert_false(f.rejected);
	assert_false(f.p2p);
	assert_int_equal(f.rtr, 0);
	assert_int_equal(f.ird, 5);
	assert_int_equal(f.ord, 3);
	assert_int_equal(f.res, 0x0F);
	n = mk(buf, false, 0x10, 2, 4, enh, 4);
	assert_int_equal(decode_exact(buf, n, NULL, &g, NULL), WN_MPA_FRAME_OK);
	assert_int_equal(g.ird, f.ird);

	/* R in a Reply is honoured */
	n = mk(buf, true, 0x20, 1, 0, NULL, 0);
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_OK);
	assert_true(f.rejected);

	/* encoder: A=0 forces B/C/D to 0, Res is 0 */
	struct wn_mpa_frame e = {.type = WN_MPA_FRAME_REQUEST, .rev = 2, .enhanced = true,
				 .p2p = false, .rtr = WN_MPA_RTR_ALL, .ird = 0x3FFF, .ord = 0x3FFF,
				 .res = 0x0F};
	assert_int_equal(wn_wire_mpa_frame_encode(&e, out, sizeof(out)), 24);
	assert_int_equal(out[16], 0x10);
	assert_int_equal(out[20], 0x3F);
	assert_int_equal(out[21], 0xFF);
	assert_int_equal(out[22], 0x3F);
	assert_int_equal(out[23], 0xFF);
	e.p2p = true;
	assert_int_equal(wn_wire_mpa_frame_encode(&e, out, sizeof(out)), 24);
	assert_int_equal(out[20], 0xFF);
	assert_int_equal(out[22], 0xFF);
}

static void
test_encode_errors(void **state)
{
	static uint8_t pd[600];
	struct wn_mpa_frame f = {.type = WN_MPA_FRAME_REQUEST, .rev = 3};
	uint8_t out[600];
	(void)state;

	assert_int_equal(wn_wire_mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
	f.rev = 1;
	f.enhanced = true;
	assert_int_equal(wn_wire_mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
	f.rev = 2;
	f.ird = 0x4000;
	assert_int_equal(wn_wire_mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
	f.ird = 1;
	f.pd = pd;
	f.pd_len = 509; /* 509 + 4 > 512 */
	assert_int_equal(wn_wire_mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
	f.pd_len = 508;
	assert_int_equal(wn_wire_mpa_frame_encode(&f, out, sizeof(out)), 532);
	assert_int_equal(wn_wire_mpa_frame_encode(&f, out, 531), -ENOSPC);
	f.pd = NULL;
	assert_int_equal(wn_wire_mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
	f.enhanced = false;
	f.pd = pd;
	f.pd_len = 513;
	assert_int_equal(wn_wire_mpa_frame_encode(&f, out, sizeof(out)), -EINVAL);
}

static void
test_roundtrip_random(void **state)
{
	uint8_t pd[512], out[WN_MPA_FRAME_MAX];
	uint32_t x = 12345;
	(void)state;

	for (int it = 0; it < 2000; it++) {
		struct wn_mpa_frame f = {0}, g;
		size_t used;

		x = x * 1103515245u + 12345u;
		f.type = (x >> 3) & 1 ? WN_MPA_FRAME_REPLY : WN_MPA_FRAME_REQUEST;
		f.markers = (x >> 4) & 1;
		f.crc = (x >> 5) & 1;
		f.rejected = f.type == WN_MPA_FRAME_REPLY && ((x >> 6) & 1);
		f.rev = 1 + ((x >> 7) & 1);
		f.enhanced = f.rev == 2 && ((x >> 8) & 1);
		f.p2p = f.enhanced && ((x >> 9) & 1);
		f.rtr = f.p2p ? (uint8_t)((x >> 10) & 7) : 0;
		x = x * 1103515245u + 12345u;
		f.ird = f.enhanced ? (uint16_t)(x & 0x3FFF) : WN_MPA_IRD_ORD_NONEG;
		f.ord = f.enhanced ? (uint16_t)((x >> 14) & 0x3FFF) : WN_MPA_IRD_ORD_NONEG;
		x = x * 1103515245u + 12345u;
		f.pd_len = (uint16_t)((x >> 8) % (f.enhanced ? 509 : 513));
		for (unsigned int i = 0; i < f.pd_len; i++)
			pd[i] = (uint8_t)(x + i * 31);
		f.pd = f.pd_len ? pd : NULL;
		int n = wn_wire_mpa_frame_encode(&f, out, sizeof(out));
		assert_true(n >= 20);
		assert_int_equal(decode_exact(out, (size_t)n, NULL, &g, &used), WN_MPA_FRAME_OK);
		assert_int_equal(used, (size_t)n);
		assert_int_equal(g.type, f.type);
		assert_int_equal(g.markers, f.markers);
		assert_int_equal(g.crc, f.crc);
		assert_int_equal(g.rejected, f.rejected);
		assert_int_equal(g.rev, f.rev);
		assert_int_equal(g.enhanced, f.enhanced);
		assert_int_equal(g.p2p, f.p2p);
		assert_int_equal(g.rtr, f.rtr);
		assert_int_equal(g.ird, f.ird);
		assert_int_equal(g.ord, f.ord);
		assert_int_equal(g.pd_len, f.pd_len);
		if (f.pd_len)
			assert_memory_equal(g.pd, pd, f.pd_len);
	}
}

static struct wn_mpa_frame
enh_req(bool p2p, uint8_t rtr, uint16_t ird, uint16_t ord)
{
	struct wn_mpa_frame f = {.type = WN_MPA_FRAME_REQUEST, .rev = 2, .enhanced = true,
				 .p2p = p2p, .rtr = rtr, .ird = ird, .ord = ord};
	return f;
}

static void
test_negotiation_ird_ord(void **state)
{
	struct wn_mpa_caps resp = {.ird = 16, .ord = 16, .rtr = WN_MPA_RTR_ALL};
	struct wn_mpa_frame req = enh_req(false, 0, 8, 4);
	struct wn_mpa_neg neg;
	(void)state;

	/* RFC 6581 §9.1: responder IRD >= initiator ORD, responder ORD <= initiator IRD */
	assert_int_equal(wn_wire_mpa_negotiate_responder(&resp, &req, &neg), WN_MPA_ERR_NONE);
	assert_int_equal(neg.ird, 4);
	assert_int_equal(neg.ord, 8);
	assert_int_equal(neg.reply_ird, 4);
	assert_int_equal(neg.reply_ord, 8);
	assert_false(neg.p2p);
	assert_int_equal(neg.rtr, 0);

	/* responder with fewer resources: IRD 2; the initiator then lowers ORD to 2 */
	resp.ird = 2;
	resp.ord = 1;
	assert_int_equal(wn_wire_mpa_negotiate_responder(&resp, &req, &neg), WN_MPA_ERR_NONE);
	assert_int_equal(neg.reply_ird, 2);
	assert_int_equal(neg.reply_ord, 1);
	struct wn_mpa_frame rep = {.type = WN_MPA_FRAME_REPLY, .rev = 2, .enhanced = true,
				   .ird = neg.reply_ird, .ord = neg.reply_ord};
	struct wn_mpa_caps init = {.ird = 8, .ord = 4};
	assert_int_equal(wn_wire_mpa_negotiate_initiator(&init, &rep, &neg), WN_MPA_ERR_NONE);
	assert_int_equal(neg.ord, 2);
	assert_int_equal(neg.ird, 8);
	assert_int_equal(neg.peer_ird, 2);
	assert_int_equal(neg.peer_ord, 1);
	assert_int_equal(neg.rtr, 0);

	/* 0x3FFF: no automatic negotiation, local values kept, 0x3FFF answered */
	resp.ird = 16;
	resp.ord = 16;
	req = enh_req(false, 0, 0x3FFF, 0x3FFF);
	assert_int_equal(wn_wire_mpa_negotiate_responder(&resp, &req, &neg), WN_MPA_ERR_NONE);
	assert_int_equal(neg.ird, 16);
	assert_int_equal(neg.ord, 16);
	assert_int_equal(neg.reply_ird, 0x3FFF);
	assert_int_equal(neg.reply_ord, 0x3FFF);
	rep.ird = 0x3FFF;
	rep.ord = 0x3FFF;
	init.ird = 3;
	init.ord = 5;
	assert_int_equal(wn_wire_mpa_negotiate_initiator(&init, &rep, &neg), WN_MPA_ERR_NONE);
	assert_int_equal(neg.ird, 3);
	assert_int_equal(neg.ord, 5);

	/* ULP needs ORD 4, initiator IRD only 2: error 6, Reply names ORD 4 */
	resp.ord_min = 4;
	req = enh_req(false, 0, 2, 1);
	assert_int_equal(wn_wire_mpa_negotiate_responder(&resp, &req, &neg),
			 WN_MPA_ERR_INSUFFICIENT_IRD);
	assert_int_equal(neg.reply_ord, 4);
	resp.ord_min = 0;

	/* initiator with IRD 4 and a responder ORD 8: insufficient IRD (error 6) */
	rep.ird = 4;
	rep.ord = 8;
	init.ird = 4;
	assert_int_equal(wn_wire_mpa_negotiate_initiator(&init, &rep, &neg),
			 WN_MPA_ERR_INSUFFICIENT_IRD);

	/* bad local capabilities: error 5 */
	resp.ird = 0x4000;
	assert_int_equal(wn_wire_mpa_negotiate_responder(&resp, &req, &neg), WN_MPA_ERR_LOCAL);
	init.ord = 0x4000;
	assert_int_equal(wn_wire_mpa_negotiate_initiator(&init, &rep, &neg), WN_MPA_ERR_LOCAL);
}

static void
test_negotiation_rtr(void **state)
{
	struct wn_mpa_caps resp = {.ird = 4, .ord = 4, .rtr = WN_MPA_RTR_WRITE};
	struct wn_mpa_frame req = enh_req(true, WN_MPA_RTR_SEND, 4, 4);
	struct wn_mpa_neg neg;
	(void)state;

	/* nothing common: the Reply still carries A=1 and what the responder supports */
	assert_int_equal(wn_wire_mpa_negotiate_responder(&resp, &req, &neg), WN_MPA_ERR_NONE);
	assert_true(neg.p2p);
	assert_int_equal(neg.rtr, WN_MPA_RTR_WRITE);
	/* ... and a Send-only initiator then fails with error 7 */
	struct wn_mpa_frame rep = {.type = WN_MPA_FRAME_REPLY, .rev = 2, .enhanced = true,
				   .p2p = true, .rtr = neg.rtr, .ird = 4, .ord = 4};
	struct wn_mpa_caps init = {.ird = 4, .ord = 4, .p2p = true, .rtr = WN_MPA_RTR_SEND};
	assert_int_equal(wn_wire_mpa_negotiate_initiator(&init, &rep, &neg), WN_MPA_ERR_NO_RTR);

	/* a responder without any RTR type cannot do peer-to-peer: error 7 */
	resp.rtr = 0;
	assert_int_equal(wn_wire_mpa_negotiate_responder(&resp, &req, &neg), WN_MPA_ERR_NO_RTR);

	/* Read RTR with initiator ORD 0: responder IRD raised to 1 (RFC 6581 §9.1) */
	resp.rtr = WN_MPA_RTR_READ;
	req = enh_req(true, WN_MPA_RTR_READ, 4, 0);
	assert_int_equal(wn_wire_mpa_negotiate_responder(&resp, &req, &neg), WN_MPA_ERR_NONE);
	assert_int_equal(neg.rtr, WN_MPA_RTR_READ);
	assert_int_equal(neg.ird, 1);
	assert_int_equal(neg.reply_ird, 1);
	/* with no IRD at all, Read RTR cannot be offered */
	resp.ird = 0;
	assert_int_equal(wn_wire_mpa_negotiate_responder(&resp, &req, &neg), WN_MPA_ERR_NO_RTR);

	/* common options are all announced; initiator prefers Write, then Read, then Send */
	resp.ird = 4;
	resp.rtr = WN_MPA_RTR_ALL;
	req = enh_req(true, WN_MPA_RTR_SEND | WN_MPA_RTR_READ, 4, 4);
	assert_int_equal(wn_wire_mpa_negotiate_responder(&resp, &req, &neg), WN_MPA_ERR_NONE);
	assert_int_equal(neg.rtr, WN_MPA_RTR_SEND | WN_MPA_RTR_READ);
	rep.rtr = neg.rtr;
	init.rtr = WN_MPA_RTR_ALL;
	assert_int_equal(wn_wire_mpa_negotiate_initiator(&init, &rep, &neg), WN_MPA_ERR_NONE);
	assert_int_equal(neg.rtr, WN_MPA_RTR_READ);
	rep.rtr = WN_MPA_RTR_SEND;
	assert_int_equal(wn_wire_mpa_negotiate_initiator(&init, &rep, &neg), WN_MPA_ERR_NONE);
	assert_int_equal(neg.rtr, WN_MPA_RTR_SEND);

	/* p2p asked but the Reply says A=0: error 7 */
	rep.p2p = false;
	rep.rtr = 0;
	assert_int_equal(wn_wire_mpa_negotiate_initiator(&init, &rep, &neg), WN_MPA_ERR_NO_RTR);
	/* client/server initiator ignores RTR entirely */
	init.p2p = false;
	assert_int_equal(wn_wire_mpa_negotiate_initiator(&init, &rep, &neg), WN_MPA_ERR_NONE);
	assert_int_equal(neg.rtr, 0);
	assert_false(neg.p2p);
}

static void
test_negotiation_rev1(void **state)
{
	struct wn_mpa_caps local = {.ird = 8, .ord = 2, .p2p = true, .rtr = WN_MPA_RTR_ALL};
	struct wn_mpa_frame f;
	struct wn_mpa_neg neg;
	uint8_t buf[64];
	(void)state;

	/* Rev 1 Request: unenhanced, local IRD/ORD, no RTR, peer values unknown */
	size_t n = mk(buf, false, 0x40, 1, 0, NULL, 0);
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_OK);
	assert_int_equal(wn_wire_mpa_negotiate_responder(&local, &f, &neg), WN_MPA_ERR_NONE);
	assert_false(neg.enhanced);
	assert_false(neg.p2p);
	assert_int_equal(neg.ird, 8);
	assert_int_equal(neg.ord, 2);
	assert_int_equal(neg.peer_ird, 0x3FFF);
	assert_int_equal(neg.peer_ord, 0x3FFF);
	/* Rev 1 Reply to a p2p initiator: no RTR due, IRD/ORD unchanged */
	n = mk(buf, true, 0x40, 1, 0, NULL, 0);
	assert_int_equal(decode_exact(buf, n, NULL, &f, NULL), WN_MPA_FRAME_OK);
	assert_int_equal(wn_wire_mpa_negotiate_initiator(&local, &f, &neg), WN_MPA_ERR_NONE);
	assert_false(neg.enhanced);
	assert_false(neg.p2p);
	assert_int_equal(neg.rtr, 0);
	assert_int_equal(neg.ird, 8);
	assert_int_equal(neg.ord, 2);
}

static void
test_err_names(void **state)
{
	(void)state;
	assert_string_equal(wn_wire_mpa_err_str(WN_MPA_ERR_CRC), "crc mismatch");
	assert_string_equal(wn_wire_mpa_err_str(WN_MPA_ERR_NO_RTR), "no matching RTR option");
	assert_string_equal(wn_wire_mpa_err_str((enum wn_mpa_err)8), "unknown");
	assert_int_equal(WN_MPA_ERR_BAD_FRAME, 4);
	assert_int_equal(WN_MPA_ERR_INSUFFICIENT_IRD, 6);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_request_bytes),
		cmocka_unit_test(test_siw_requests),
		cmocka_unit_test(test_siw_p2p_negotiation),
		cmocka_unit_test(test_decoder_rejects),
		cmocka_unit_test(test_need_more_every_prefix),
		cmocka_unit_test(test_ignored_bits),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_roundtrip_random),
		cmocka_unit_test(test_negotiation_ird_ord),
		cmocka_unit_test(test_negotiation_rtr),
		cmocka_unit_test(test_negotiation_rev1),
		cmocka_unit_test(test_err_names),
	};
	(void)argc;
	(void)argv;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
