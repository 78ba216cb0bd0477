/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DDP/SCTP adaptation wire formats (RFC 5043 §5, RFC 6581 §7). A failure here means warpnic
 * would send session control a peer misreads (the published RFC's values, not the 2002
 * draft's), accept a malformed one, or announce a DDP segment size that SCTP fragments.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wn_wire_sctp.h"

/* Decode from an exactly sized heap copy so ASan catches any over-read. */
static enum wn_sctp_ctl_status
decode_exact(const uint8_t *buf, size_t len, struct wn_sctp_ctl *c)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum wn_sctp_ctl_status st;

	assert_non_null(copy);
	memcpy(copy, buf, len);
	st = wn_wire_sctp_ctl_decode(copy, len, c);
	if (c->pd != NULL)
		c->pd = buf + (c->pd - copy);
	free(copy);
	return st;
}

static void
test_constants(void **state)
{
	(void)state;
	/* RFC 5043 §5.1, §5.2, §12 (not the draft's PPIDs 1 and 2) */
	assert_int_equal(WN_SCTP_PPID_DDP, 16);
	assert_int_equal(WN_SCTP_PPID_CTL, 17);
	assert_int_equal(WN_SCTP_ADAPTATION_DDP, 1);
	assert_int_equal(WN_SCTP_PARAM_ADAPTATION, 0xC006);
	assert_int_equal(WN_SCTP_IPPROTO, 132);
	assert_string_equal(wn_wire_sctp_func_str(WN_SCTP_ENH_ACCEPT), "enhanced accept");
	assert_string_equal(wn_wire_sctp_func_str(0xffff), "unknown");
}

static void
test_encode_plain(void **state)
{
	static const uint8_t pd[3] = {'a', 'b', 'c'};
	struct wn_sctp_ctl c = {.ssn = 0, .func = WN_SCTP_INITIATE, .pd = pd, .pd_len = 3};
	const uint8_t want[] = {0, 0, 0, 1, 'a', 'b', 'c'};
	uint8_t out[64];

	(void)state;
	assert_int_equal(wn_wire_sctp_ctl_encode(&c, out, sizeof(out)), sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
	c.ssn = 0x1234;
	c.func = WN_SCTP_TERMINATE;
	c.pd_len = 0;
	assert_int_equal(wn_wire_sctp_ctl_encode(&c, out, sizeof(out)), 4);
	assert_memory_equal(out, ((uint8_t[]){0x12, 0x34, 0, 4}), 4);
	/* §5.2.3: no Private Data in a Terminate */
	c.pd_len = 1;
	assert_int_equal(wn_wire_sctp_ctl_encode(&c, out, sizeof(out)), -EINVAL);
	c.func = 0;
	c.pd_len = 0;
	assert_int_equal(wn_wire_sctp_ctl_encode(&c, out, sizeof(out)), -EINVAL);
	c.func = WN_SCTP_ACCEPT;
	assert_int_equal(wn_wire_sctp_ctl_encode(&c, out, 3), -ENOSPC);
}

static void
test_encode_enhanced(void **state)
{
	static const uint8_t pd[2] = {0xee, 0xff};
	struct wn_sctp_ctl c = {
		.ssn = 0, .func = WN_SCTP_ENH_INITIATE, .p2p = true,
		.rtr = WN_MPA_RTR_SEND | WN_MPA_RTR_READ, .ird = 16, .ord = 4, .pd = pd, .pd_len = 2,
	};
	/* RFC 6581 §9: A B IRD(14) C D ORD(14), network order, then the ULP's data */
	const uint8_t want[] = {0, 0, 0, 5, 0xc0, 0x10, 0x40, 0x04, 0xee, 0xff};
	uint8_t out[64];

	(void)state;
	assert_int_equal(wn_wire_sctp_ctl_encode(&c, out, sizeof(out)), sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
	/* A=0: B, C, D go out as zero */
	c.p2p = false;
	assert_int_equal(wn_wire_sctp_ctl_encode(&c, out, sizeof(out)), sizeof(want));
	assert_int_equal(out[4], 0x00);
	assert_int_equal(out[6], 0x00);
	c.ird = 0x4000;
	assert_int_equal(wn_wire_sctp_ctl_encode(&c, out, sizeof(out)), -EINVAL);
	/* 512 octets in all, the enhanced data included (RFC 6581 §7) */
	c.ird = 1;
	c.pd_len = WN_SCTP_PD_MAX - 3;
	c.pd = calloc(1, c.pd_len);
	assert_int_equal(wn_wire_sctp_ctl_encode(&c, out, sizeof(out)), -EINVAL);
	free((void *)c.pd);
}

static void
test_decode(void **state)
{
	const uint8_t enh[] = {0, 0, 0, 6, 0x80, 0x08, 0x80, 0x02, 'p'};
	uint8_t big[WN_SCTP_CTL_MAX + 1] = {0, 1, 0, 3};
	struct wn_sctp_ctl c;
	struct wn_mpa_frame f;

	(void)state;
	assert_int_equal(decode_exact(enh, sizeof(enh), &c), WN_SCTP_CTL_OK);
	assert_int_equal(c.func, WN_SCTP_ENH_ACCEPT);
	assert_true(c.p2p);
	assert_int_equal(c.rtr, WN_MPA_RTR_WRITE);
	assert_int_equal(c.ird, 8);
	assert_int_equal(c.ord, 2);
	assert_int_equal(c.pd_len, 1);
	assert_int_equal(c.pd[0], 'p');
	wn_wire_sctp_ctl_to_mpa(&c, &f);
	assert_true(f.enhanced && f.p2p);
	assert_int_equal(f.ird, 8);
	/* a plain code negotiates nothing */
	assert_int_equal(decode_exact((const uint8_t[]){0, 0, 0, 2}, 4, &c), WN_SCTP_CTL_OK);
	assert_null(c.pd);
	wn_wire_sctp_ctl_to_mpa(&c, &f);
	assert_false(f.enhanced);
	assert_int_equal(f.ird, WN_MPA_IRD_ORD_NONEG);
	/* the rules */
	assert_int_equal(decode_exact(enh, 3, &c), WN_SCTP_CTL_SHORT);
	assert_int_equal(decode_exact(enh, 7, &c), WN_SCTP_CTL_ENH_SHORT);
	assert_int_equal(decode_exact((const uint8_t[]){0, 0, 0xff, 0xff}, 4, &c),
			 WN_SCTP_CTL_BAD_FUNC);
	assert_int_equal(decode_exact((const uint8_t[]){0, 0, 0, 0}, 4, &c), WN_SCTP_CTL_BAD_FUNC);
	assert_int_equal(decode_exact((const uint8_t[]){0, 0, 0, 8}, 4, &c), WN_SCTP_CTL_BAD_FUNC);
	assert_int_equal(decode_exact((const uint8_t[]){0, 9, 0, 4, 1}, 5, &c),
			 WN_SCTP_CTL_TERM_PD);
	assert_int_equal(decode_exact(big, sizeof(big), &c), WN_SCTP_CTL_PD_TOO_LONG);
	assert_int_equal(decode_exact(big, sizeof(big) - 1, &c), WN_SCTP_CTL_OK);
	assert_int_equal(c.ssn, 1);
	assert_int_equal(c.pd_len, WN_SCTP_PD_MAX);
	assert_string_equal(wn_wire_sctp_ctl_status_str(WN_SCTP_CTL_TERM_PD),
			    "Terminate with Private Data");
}

static void
test_mulpdu(void **state)
{
	(void)state;
	/* 1500 - IPv4 20 - common 12 - DATA 16 - SACK 16 = 1436 = DDP-SSN + the segment */
	assert_int_equal(wn_wire_sctp_mulpdu(1500, 20), 1434);
	assert_int_equal(wn_wire_sctp_mulpdu(1500, 40), 1414);
	assert_int_equal(wn_wire_sctp_mulpdu(1501, 20), 1434);
	assert_int_equal(wn_wire_sctp_mulpdu(576, 20), WN_SCTP_MULPDU_MIN);
	/* a segment of that size fits one packet: no SCTP or IP fragmentation (RFC 5043 §9) */
	for (uint32_t mtu = 600; mtu < 9001; mtu += 7) {
		uint32_t m = wn_wire_sctp_mulpdu(mtu, 20);

		assert_true(20 + 12 + 16 + ((2 + m + 3) & ~3u) + 16 <= mtu);
		assert_true(m >= WN_SCTP_MULPDU_MIN);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_encode_plain),
		cmocka_unit_test(test_encode_enhanced),
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_mulpdu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
