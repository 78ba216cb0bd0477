/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the Marker locator: octets 0-3 segment sequence
 * number, 4-7 SeqStart, the rest the segment. Every hit must be a 512-octet
 * boundary inside the segment and point where its FPDUPTR says.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_wire_mpa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wn_mpa_marker_hit hits[8];
	uint32_t seg_seq, seq_start;

	if (size < 8)
		return 0;
	memcpy(&seg_seq, data, 4);
	memcpy(&seq_start, data + 4, 4);
	data += 8;
	size -= 8;
	/* an exactly sized copy so that any over-read is caught */
	uint8_t *seg = malloc(size ? size : 1);
	if (seg == NULL)
		return 0;
	memcpy(seg, data, size);
	unsigned int n = wn_mpa_marker_locate(seg_seq, seg, size, seq_start, hits, 8);
	if (n > size / 4 + 1)
		abort();
	for (unsigned int i = 0; i < n && i < 8; i++) {
		uint32_t off = hits[i].marker_seq - seg_seq;
		if (off + 4 > size || ((hits[i].marker_seq - seq_start) & 511) != 0)
			abort();
		uint16_t ptr = (uint16_t)((seg[off + 2] << 8 | seg[off + 3]) & 0xFFFC);
		if (ptr != hits[i].fpduptr)
			abort();
		if (hits[i].fpdu_seq != (ptr ? hits[i].marker_seq - ptr : hits[i].marker_seq + 4))
			abort();
	}
	free(seg);
	return 0;
}
