/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnic's unreliable datagrams on the wire (wn_wire_ud.h). A failure here means two
 * warpnicd would disagree on a datagram's QP numbers, Q_Key or immediate data, accept a
 * malformed SIDR message, or give a UD receive a GRH that libibverbs cannot read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wn_wire_ud.h"

/* Decode from an exactly sized heap copy so ASan catches any over-read. */
static enum wn_ud_status
decode_exact(const uint8_t *buf, size_t len, struct wn_ud_msg *m)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum wn_ud_status st;

	assert_non_null(copy);
	memcpy(copy, buf, len);
	st = wn_wire_ud_decode(copy, len, m);
	if (st == WN_UD_OK) {
		if (m->pd != NULL)
			m->pd = buf + (m->pd - copy);
		if (m->payload != NULL)
			m->payload = buf + (m->payload - copy);
	}
	free(copy);
	return st;
}

static void
test_data_layout(void **state)
{
	struct wn_ud_msg m = {.type = WN_UD_DATA, .flags = WN_UD_F_IMM | WN_UD_F_SE,
			      .dqpn = 0x123456, .sqpn = 0xabcdef, .qkey = 0x11111111};
	const uint8_t want[] = {'W', 'U', 1, 1, 0x03, 0x12, 0x34, 0x56, 0, 0xab, 0xcd, 0xef,
				0x11, 0x11, 0x11, 0x11, 0xde, 0xad, 0xbe, 0xef};
	const uint8_t imm[4] = {0xde, 0xad, 0xbe, 0xef};
	uint8_t buf[64];
	struct wn_ud_msg d;

	(void)state;
	memcpy(&m.imm, imm, 4);
	assert_int_equal(wn_wire_ud_hdr_size(&m), sizeof(want));
	assert_int_equal(wn_wire_ud_encode(&m, buf, sizeof(buf)), sizeof(want));
	assert_memory_equal(buf, want, sizeof(want));
	/* the message follows */
	memcpy(buf + sizeof(want), "hello", 5);
	assert_int_equal(decode_exact(buf, sizeof(want) + 5, &d), WN_UD_OK);
	assert_int_equal(d.type, WN_UD_DATA);
	assert_int_equal(d.flags, WN_UD_F_IMM | WN_UD_F_SE);
	assert_int_equal(d.dqpn, 0x123456);
	assert_int_equal(d.sqpn, 0xabcdef);
	assert_int_equal(d.qkey, 0x11111111);
	assert_memory_equal(&d.imm, imm, 4);
	assert_int_equal(d.len, 5);
	assert_memory_equal(d.payload, "hello", 5);
	/* without immediate data: 16 octets of header, a zero-length message is fine */
	m.flags = 0;
	m.dqpn = 0x1000001; /* above 24 bits: masked */
	assert_int_equal(wn_wire_ud_encode(&m, buf, sizeof(buf)), WN_UD_HDR_LEN);
	assert_int_equal(decode_exact(buf, WN_UD_HDR_LEN, &d), WN_UD_OK);
	assert_int_equal(d.dqpn, 1);
	assert_int_equal(d.len, 0);
	assert_int_equal(wn_wire_ud_encode(&m, buf, WN_UD_HDR_LEN - 1), -ENOSPC);
}

static void
test_sidr_roundtrip(void **state)
{
	static const uint8_t pd[3] = {1, 2, 3};
	struct wn_ud_msg req = {.type = WN_UD_SIDR_REQ, .req_id = 0x01020304, .ps = 0x0111,
				.dport = 7471, .sport = 40000, .pd = pd, .pd_len = 3};
	struct wn_ud_msg rep = {.type = WN_UD_SIDR_REP, .req_id = 0x01020304, .sqpn = 77,
				.qkey = 0x01234567, .status = WN_UD_SIDR_OK};
	const uint8_t want_req[] = {'W', 'U', 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				    1, 2, 3, 4, 0x01, 0x11, 0x1d, 0x2f, 0x9c, 0x40, 0, 3, 1, 2, 3};
	uint8_t buf[WN_UD_HDR_LEN + WN_UD_SIDR_REQ_LEN + WN_UD_SIDR_REQ_PD_MAX + 1];
	struct wn_ud_msg d;
	int n;

	(void)state;
	n = wn_wire_ud_encode(&req, buf, sizeof(buf));
	assert_int_equal(n, sizeof(want_req));
	assert_memory_equal(buf, want_req, sizeof(want_req));
	assert_int_equal(decode_exact(buf, (size_t)n, &d), WN_UD_OK);
	assert_int_equal(d.req_id, 0x01020304);
	assert_int_equal(d.ps, 0x0111);
	assert_int_equal(d.dport, 7471);
	assert_int_equal(d.sport, 40000);
	assert_int_equal(d.pd_len, 3);
	assert_memory_equal(d.pd, pd, 3);
	/* a trailing octet, or one missing, is a bad length */
	assert_int_equal(decode_exact(buf, (size_t)n + 1, &d), WN_UD_BAD_PD);
	assert_int_equal(decode_exact(buf, (size_t)n - 1, &d), WN_UD_BAD_PD);
	assert_int_equal(decode_exact(buf, WN_UD_HDR_LEN + 3, &d), WN_UD_SHORT);
	/* the bound: 180 in a REQ, 136 in a REP */
	req.pd_len = WN_UD_SIDR_REQ_PD_MAX + 1;
	assert_int_equal(wn_wire_ud_encode(&req, buf, sizeof(buf)), -EINVAL);
	req.pd = NULL;
	req.pd_len = 2;
	assert_int_equal(wn_wire_ud_encode(&req, buf, sizeof(buf)), -EINVAL);

	n = wn_wire_ud_encode(&rep, buf, sizeof(buf));
	assert_int_equal(n, WN_UD_HDR_LEN + WN_UD_SIDR_REP_LEN);
	assert_int_equal(decode_exact(buf, (size_t)n, &d), WN_UD_OK);
	assert_int_equal(d.type, WN_UD_SIDR_REP);
	assert_int_equal(d.sqpn, 77);
	assert_int_equal(d.qkey, 0x01234567);
	assert_int_equal(d.status, WN_UD_SIDR_OK);
	assert_null(d.pd);
	buf[WN_UD_HDR_LEN + 4] = 4; /* no such status */
	assert_int_equal(decode_exact(buf, (size_t)n, &d), WN_UD_BAD_STATUS);
	buf[WN_UD_HDR_LEN + 4] = 0;
	buf[WN_UD_HDR_LEN + 5] = 1;
	assert_int_equal(decode_exact(buf, (size_t)n, &d), WN_UD_BAD_RSVD);
	rep.pd_len = WN_UD_SIDR_REP_PD_MAX + 1;
	rep.pd = buf;
	assert_int_equal(wn_wire_ud_encode(&rep, buf + 64, sizeof(buf) - 64), -EINVAL);
}

static void
test_refusals(void **state)
{
	struct wn_ud_msg m = {.type = WN_UD_DATA, .flags = WN_UD_F_IMM, .dqpn = 5, .sqpn = 6};
	uint8_t buf[64], bad[64];
	struct wn_ud_msg d;
	int n;

	(void)state;
	n = wn_wire_ud_encode(&m, buf, sizeof(buf));
	assert_int_equal(n, WN_UD_HDR_LEN + WN_UD_IMM_LEN);
	assert_int_equal(decode_exact(buf, WN_UD_HDR_LEN - 1, &d), WN_UD_SHORT);
	/* the immediate data announced but cut off */
	assert_int_equal(decode_exact(buf, WN_UD_HDR_LEN + 2, &d), WN_UD_SHORT);
	memcpy(bad, buf, (size_t)n);
	bad[1] = 'X';
	assert_int_equal(decode_exact(bad, (size_t)n, &d), WN_UD_BAD_MAGIC);
	memcpy(bad, buf, (size_t)n);
	bad[2] = 2;
	assert_int_equal(decode_exact(bad, (size_t)n, &d), WN_UD_BAD_VERSION);
	memcpy(bad, buf, (size_t)n);
	bad[3] = 9;
	assert_int_equal(decode_exact(bad, (size_t)n, &d), WN_UD_BAD_TYPE);
	memcpy(bad, buf, (size_t)n);
	bad[4] = 0x81;
	assert_int_equal(decode_exact(bad, (size_t)n, &d), WN_UD_BAD_FLAGS);
	memcpy(bad, buf, (size_t)n);
	bad[8] = 1; /* the octet above the source QP number */
	assert_int_equal(decode_exact(bad, (size_t)n, &d), WN_UD_BAD_RSVD);
	/* flags on a SIDR message */
	m.type = WN_UD_SIDR_REP;
	m.flags = 0;
	n = wn_wire_ud_encode(&m, buf, sizeof(buf));
	buf[4] = WN_UD_F_SE;
	assert_int_equal(decode_exact(buf, (size_t)n, &d), WN_UD_BAD_FLAGS);
	m.type = 7;
	assert_int_equal(wn_wire_ud_encode(&m, buf, sizeof(buf)), -EINVAL);
	m.type = WN_UD_DATA;
	m.flags = 0x80;
	assert_int_equal(wn_wire_ud_encode(&m, buf, sizeof(buf)), -EINVAL);
	assert_string_equal(wn_wire_ud_status_str(WN_UD_BAD_MAGIC), "not a warpnic datagram");
	assert_string_equal(wn_wire_ud_status_str(WN_UD_STATUS_COUNT), "unknown");
}

/* The IPv4 header checksum libibverbs' ibv_init_ah_from_wc() verifies (RFC 791). */
static uint16_t
ip4_sum(const uint8_t *h)
{
	uint32_t s = 0;

	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static void
test_grh(void **state)
{
	uint8_t ip4[20] = {0x45, 0, 0, 60, 0, 1, 0x40, 0, 64, 17, 0, 0, 198, 19, 0, 2,
			   198, 19, 0, 1};
	uint8_t ip6[40] = {0x60, 0x00, 0x00, 0x00, 0, 24, 17, 64};
	uint8_t grh[WN_UD_GRH_LEN];
	uint16_t c;

	(void)state;
	c = ip4_sum(ip4);
	ip4[10] = (uint8_t)(c >> 8);
	ip4[11] = (uint8_t)c;
	memset(grh, 0xaa, sizeof(grh));
	assert_int_equal(wn_wire_ud_grh_from_ip(ip4, 20, grh), 0);
	for (int i = 0; i < 20; i++)
		assert_int_equal(grh[i], 0);
	assert_memory_equal(grh + 20, ip4, 20);
	/* what ibv_init_ah_from_wc() checks: IPv4 at octet 20 with a good header sum */
	assert_int_equal(ip4_sum(grh + 20), 0);
	/* IPv6: the header itself, source and destination GIDs at 8 and 24 */
	ip6[8] = 0x20;
	ip6[9] = 0x01;
	ip6[23] = 2;
	ip6[24] = 0x20;
	ip6[25] = 0x01;
	ip6[39] = 1;
	assert_int_equal(wn_wire_ud_grh_from_ip(ip6, 40, grh), 0);
	assert_memory_equal(grh, ip6, 40);
	/* IPv4 with options, or a mismatch of version and length */
	ip4[0] = 0x46;
	assert_int_equal(wn_wire_ud_grh_from_ip(ip4, 20, grh), -EINVAL);
	assert_int_equal(wn_wire_ud_grh_from_ip(ip6, 20, grh), -EINVAL);
	assert_int_equal(wn_wire_ud_grh_from_ip(ip4, 40, grh), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_layout),
		cmocka_unit_test(test_sidr_roundtrip),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_grh),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
