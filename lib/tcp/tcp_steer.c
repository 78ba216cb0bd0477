/* SPDX-License-Identifier: BSD-3-Clause */
/* Connection steering across lcores: Toeplitz hash as a NIC's RSS computes it. */
#include <string.h>

#include <rte_thash.h>

#include "wn_tcp.h"

/* The well-known default RSS key (Microsoft RSS verification suite), 40 octets. */
static const uint8_t wn_rss_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static const char *const wn_tcp_state_names[WN_TCP_STATE_MAX] = {
	[WN_TCP_CLOSED] = "CLOSED",
	[WN_TCP_LISTEN] = "LISTEN",
	[WN_TCP_SYN_SENT] = "SYN-SENT",
	[WN_TCP_SYN_RCVD] = "SYN-RECEIVED",
	[WN_TCP_ESTABLISHED] = "ESTABLISHED",
	[WN_TCP_FIN_WAIT_1] = "FIN-WAIT-1",
	[WN_TCP_FIN_WAIT_2] = "FIN-WAIT-2",
	[WN_TCP_CLOSE_WAIT] = "CLOSE-WAIT",
	[WN_TCP_CLOSING] = "CLOSING",
	[WN_TCP_LAST_ACK] = "LAST-ACK",
	[WN_TCP_TIME_WAIT] = "TIME-WAIT",
};

const char *
wn_tcp_state_name(enum wn_tcp_state s)
{
	if ((unsigned int)s >= WN_TCP_STATE_MAX)
		return "?";
	return wn_tcp_state_names[s];
}

uint32_t
wn_tcp_flow_steer(const struct wn_tcp_endpoint *local, const struct wn_tcp_endpoint *remote,
		  uint32_t n)
{
	uint32_t tuple[RTE_THASH_V6_L4_LEN];
	uint32_t len, h;

	if (n <= 1)
		return 0;
	/* Incoming direction: source = remote, destination = local (host order words). */
	if (remote->addr.family == WN_AF_INET) {
		tuple[0] = rte_be_to_cpu_32(remote->addr.v4);
		tuple[1] = rte_be_to_cpu_32(local->addr.v4);
		tuple[2] = (uint32_t)remote->port << 16 | local->port;
		len = RTE_THASH_V4_L4_LEN;
	} else {
		for (unsigned int i = 0; i < 4; i++) {
			uint32_t s, d;

			memcpy(&s, remote->addr.v6 + 4 * i, 4);
			memcpy(&d, local->addr.v6 + 4 * i, 4);
			tuple[i] = rte_be_to_cpu_32(s);
			tuple[4 + i] = rte_be_to_cpu_32(d);
		}
		tuple[8] = (uint32_t)remote->port << 16 | local->port;
		len = RTE_THASH_V6_L4_LEN;
	}
	h = rte_softrss(tuple, len, wn_rss_key);
	return h % n;
}
