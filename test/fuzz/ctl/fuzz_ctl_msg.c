/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for lib/ctl's codec. Octet 0: bits 0-3 = the number of SCM_RIGHTS fds the
 * request claims to carry, bit 7 = leave the header as it is (otherwise magic, version and
 * len are patched so the input gets past the framing checks). The rest is one datagram, given
 * to wn_ctl_req_check(), wn_ctl_event_check() and wn_ctl_async_check(). An accepted request
 * must describe an op with exactly its size; an accepted event must be a CM_EVENT of the event
 * size, an accepted async event an ASYNC_EVENT of its size about a handle. A datagram
 * whose header is well formed also goes through wn_ctl_send()/wn_ctl_recv() on a socketpair
 * and must arrive unchanged.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wn_ctl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
roundtrip(const uint8_t *msg, size_t len)
{
	static int sv[2] = {-1, -1};
	union {
		struct wn_ctl_hdr h;
		uint8_t b[WN_CTL_MSG_MAX];
	} in, out;
	int fds[WN_CTL_MAX_FDS];
	unsigned int nfds;

	if (sv[0] < 0 && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	memcpy(in.b, msg, len);
	check(wn_ctl_send(sv[0], &in.h, NULL, 0) == 0);
	check(wn_ctl_recv(sv[1], out.b, fds, &nfds) == (long)len);
	check(nfds == 0);
	check(memcmp(in.b, out.b, len) == 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t msg[WN_CTL_MSG_MAX + 64];
	const struct wn_ctl_op_info *info;
	struct wn_ctl_hdr h;
	unsigned int nfds;
	size_t len;
	int ret;

	if (size < 1)
		return 0;
	nfds = data[0] & 0x0f;
	len = size - 1 < sizeof(msg) ? size - 1 : sizeof(msg);
	memcpy(msg, data + 1, len);
	if ((data[0] & 0x80) == 0 && len >= sizeof(h)) {
		memcpy(&h, msg, sizeof(h));
		h.magic = WN_CTL_MAGIC;
		h.version = WN_CTL_VERSION;
		h.len = (uint32_t)len;
		memcpy(msg, &h, sizeof(h));
	}
	ret = wn_ctl_req_check(msg, len, nfds);
	if (ret == 0) {
		memcpy(&h, msg, sizeof(h));
		info = wn_ctl_op_info(h.op);
		check(info != NULL && h.op != WN_CTL_CM_EVENT);
		check(len == sizeof(h) + info->req_len && nfds <= info->req_fds_max);
	} else {
		check(ret == -EBADMSG || ret == -EPROTO || ret == -EOPNOTSUPP || ret == -EINVAL);
	}
	ret = wn_ctl_event_check(msg, len);
	if (ret == 0) {
		memcpy(&h, msg, sizeof(h));
		check(h.op == WN_CTL_CM_EVENT &&
		      len == sizeof(h) + sizeof(struct wn_ctl_cm_event));
	} else {
		check(ret == -EBADMSG || ret == -EINVAL);
	}
	ret = wn_ctl_async_check(msg, len);
	if (ret == 0) {
		struct wn_ctl_async_event ev;

		memcpy(&h, msg, sizeof(h));
		memcpy(&ev, msg + sizeof(h), sizeof(ev));
		check(h.op == WN_CTL_ASYNC_EVENT && len == sizeof(h) + sizeof(ev) &&
		      ev.handle != 0);
	} else {
		check(ret == -EBADMSG || ret == -EINVAL);
	}
	if (len >= sizeof(h) && len <= WN_CTL_MSG_MAX) {
		memcpy(&h, msg, sizeof(h));
		if (h.len == len)
			roundtrip(msg, len);
	}
	return 0;
}
