/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The exchange ddp_sctp_peer (RFC 5043 on the Linux kernel's SCTP, in a QEMU guest) and
 * ddp_sctp_verbs (the verbs API on warpnic) run, whichever of them starts the session. Each
 * side:
 *   1. advertises a region of DS_REGION octets in its session control Private Data (the
 *      Initiate or the Accept): DS_MAGIC, STag, base Tagged Offset, length (big-endian);
 *   2. Sends DS_NSEND messages of ds_send_len[k] octets (pattern DS_PAT_SEND of its side);
 *   3. RDMA Writes DS_WRITE_LEN octets (DS_PAT_WRITE) at offset 0 of the other's region, then
 *      Sends message DS_NSEND ("write done", DS_CTL_LEN octets);
 *   4. on the other's "write done": checks its own region's first DS_WRITE_LEN octets, then
 *      RDMA Reads DS_READ_LEN octets at offset DS_READ_OFF of the other's region (which holds
 *      DS_PAT_READSRC of that side from the start) and checks them;
 *   5. when its Read is done, Sends message DS_NSEND + 1 ("bye"); it is done when its "bye" is
 *      out and the other's has arrived. Then the session ends (RFC 5043 §6.2 Terminate).
 * Or the passive side's ULP rejects the session (§6.3), with DS_REJECT_PD as Private Data.
 * Every message's octets are ds_pat(pattern, message number, offset).
 */
#ifndef DDP_SCTP_TEST_H
#define DDP_SCTP_TEST_H

#include <stdint.h>

#define DS_NSEND 8
static const uint32_t ds_send_len[DS_NSEND] = {1, 100, 1000, 1416, 1417, 2900, 4096, 3333};
#define DS_RECV_MAX  4096
#define DS_CTL_LEN   16
#define DS_REGION    32768
#define DS_WRITE_LEN 12288
#define DS_READ_OFF  16384
#define DS_READ_LEN  8192
#define DS_SENDS     (DS_NSEND + 2) /* data, "write done", "bye" */
/* IRD and ORD both sides ask for (RFC 6581 §9.1) */
#define DS_IRD 4
#define DS_ORD 4

/* patterns, per side: the peer's (kernel) and warpnic's */
enum {
	DS_PAT_PEER_SEND = 1,
	DS_PAT_PEER_WRITE,
	DS_PAT_PEER_READSRC,
	DS_PAT_WN_SEND,
	DS_PAT_WN_WRITE,
	DS_PAT_WN_READSRC,
};

static inline uint8_t
ds_pat(unsigned int pat, unsigned int k, uint32_t i)
{
	return (uint8_t)(pat * 67u + k * 29u + i * 7u + (i >> 8) * 3u + (i >> 16));
}

/* the Private Data of a Reject (from either side's ULP) */
#define DS_REJECT_PD "no session for you, by the ULP"

/* the advertisement in the session's Private Data */
#define DS_MAGIC     "WNDDPSCT"
#define DS_ADV_LEN   24

struct ds_adv {
	uint32_t stag;
	uint64_t to;
	uint32_t len;
};

static inline void
ds_adv_put(uint8_t *p, const struct ds_adv *a)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)DS_MAGIC[i];
	for (int i = 0; i < 4; i++)
		p[8 + i] = (uint8_t)(a->stag >> (24 - 8 * i));
	for (int i = 0; i < 8; i++)
		p[12 + i] = (uint8_t)(a->to >> (56 - 8 * i));
	for (int i = 0; i < 4; i++)
		p[20 + i] = (uint8_t)(a->len >> (24 - 8 * i));
}

/* @return 0, or -1 when @p p (@p len octets) is no advertisement */
static inline int
ds_adv_get(const uint8_t *p, uint32_t len, struct ds_adv *a)
{
	if (len != DS_ADV_LEN)
		return -1;
	for (int i = 0; i < 8; i++)
		if (p[i] != (uint8_t)DS_MAGIC[i])
			return -1;
	a->stag = 0;
	a->to = 0;
	a->len = 0;
	for (int i = 0; i < 4; i++)
		a->stag = a->stag << 8 | p[8 + i];
	for (int i = 0; i < 8; i++)
		a->to = a->to << 8 | p[12 + i];
	for (int i = 0; i < 4; i++)
		a->len = a->len << 8 | p[20 + i];
	return 0;
}

#endif /* DDP_SCTP_TEST_H */
