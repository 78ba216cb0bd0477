/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Private Data of InfiniBand-style setup messages (wn_cm.h, struct wn_cm_ib_pd): encoded
 * and checked here, without EAL (a fuzzer drives the decoder).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wn_cm.h"

static const uint8_t magic[4] = {'W', 'N', 'I', 'B'};
#define IB_PD_VERSION 1
#define QPN_MAX 0xffffffu

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A reason only with a Reject, and one of the known ones. */
static bool
pd_valid(const struct wn_cm_ib_pd *pd)
{
	if (pd->type < WN_CM_IB_REQUEST || pd->type > WN_CM_IB_REJECT)
		return false;
	if (pd->type == WN_CM_IB_REJECT ? pd->reason < WN_CM_IB_R_MISMATCH ||
						  pd->reason > WN_CM_IB_R_MALFORMED
					: pd->reason != 0)
		return false;
	return pd->src_qpn <= QPN_MAX && pd->dst_qpn <= QPN_MAX;
}

int
wn_cm_ib_pd_encode(const struct wn_cm_ib_pd *pd, uint8_t *buf, size_t len)
{
	if (!pd_valid(pd))
		return -EINVAL;
	if (len < WN_CM_IB_PD_LEN)
		return -ENOSPC;
	memcpy(buf, magic, sizeof(magic));
	buf[4] = IB_PD_VERSION;
	buf[5] = pd->type;
	buf[6] = pd->reason;
	buf[7] = 0;
	put32(buf + 8, pd->src_qpn);
	put32(buf + 12, pd->dst_qpn);
	return WN_CM_IB_PD_LEN;
}

int
wn_cm_ib_pd_decode(const uint8_t *buf, size_t len, struct wn_cm_ib_pd *pd)
{
	struct wn_cm_ib_pd d;

	if (buf == NULL || len != WN_CM_IB_PD_LEN || memcmp(buf, magic, sizeof(magic)) != 0 ||
	    buf[4] != IB_PD_VERSION || buf[7] != 0)
		return -EBADMSG;
	d.type = buf[5];
	d.reason = buf[6];
	d.src_qpn = get32(buf + 8);
	d.dst_qpn = get32(buf + 12);
	if (!pd_valid(&d))
		return -EBADMSG;
	*pd = d;
	return 0;
}
