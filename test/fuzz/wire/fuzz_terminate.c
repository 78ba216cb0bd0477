/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the Terminate header parser (the octets after the
 * DDP header of an opcode 0x7 ULPDU). The verdict must agree with the return
 * value, every reported part must lie inside the input, and a header that
 * parses cleanly must rebuild to the same octets (reserved bits zeroed).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_wire_ddp.h"

static void
check(int cond)
{
	if (!cond)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wn_rdmap_term t;
	uint8_t out[128];

	int rc = wn_wire_rdmap_term_parse(size ? data : NULL, size, &t);
	check(rc == 0 || rc == -EBADMSG);
	check((rc == 0) == (t.status == WN_TERM_OK));
	check(wn_wire_term_status_str(t.status) != NULL);
	check(wn_wire_term_cause_str(t.cause.layer, t.cause.etype, t.cause.code) != NULL);
	if (t.quirks & WN_TERM_Q_SWAPPED)
		check(!wn_wire_term_cause_known(t.cause.layer, t.cause.etype, t.cause.code) &&
		      wn_wire_term_cause_known(t.swapped.layer, t.swapped.etype, t.swapped.code));
	if (t.ddp_hdr != NULL) {
		check(t.ddp_hdr >= data && t.ddp_hdr + t.ddp_hdr_len <= data + size);
		check(t.ddp_hdr_len == (t.ddp.tagged ? 14 : 18));
	}
	if (rc != 0)
		return 0;
	check(size <= WN_RDMAP_TERM_HDR_MAX);
	int n = wn_wire_rdmap_term_build(out, sizeof(out), 1, &t);
	check(n == (int)(WN_DDP_UNTAGGED_HDR_LEN + size));
	check(out[18] == data[0] && out[19] == data[1]);
	check(out[20] == (data[2] & 0xE0) && out[21] == 0);
	check(memcmp(out + 22, data + 4, size - 4) == 0);
	return 0;
}
