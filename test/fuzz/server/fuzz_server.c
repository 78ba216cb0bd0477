/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz lib/server (request validation + handlers) through a real SOCK_SEQPACKET connection.
 * Input: records of [u16 LE length][datagram]; unless bit 15 of the length is set, hdr.len
 * is patched to the datagram size so the fuzzer gets past the framing check. After the client
 * disconnects, every object it created must be reclaimed (the invariant a crashing client
 * relies on); a violation aborts.
 */
#include <arpa/inet.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_log.h>

#include "wn_ctl.h"
#include "wn_server.h"

static void
drain(int fd)
{
	uint8_t buf[WN_CTL_MSG_MAX];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	struct wn_server_conf conf;
	struct wn_server_stats st;
	struct wn_server *srv;
	int sv[2];

	if (!init) {
		signal(SIGPIPE, SIG_IGN);
		rte_log_set_global_level(RTE_LOG_EMERG);
		init = 1;
	}
	memset(&conf, 0, sizeof(conf));
	conf.mem_entries = 64; /* a fresh server per input: keep its region table small */
	conf.n_addrs = 1;
	conf.addrs[0].family = WN_CTL_AF_INET;
	inet_pton(AF_INET, "198.18.0.1", conf.addrs[0].addr);
	srv = wn_server_create(&conf);
	if (srv == NULL)
		return 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0 ||
	    wn_server_adopt(srv, sv[0]) != 0)
		abort();
	while (size >= 2) {
		uint16_t l = (uint16_t)(data[0] | data[1] << 8);
		int raw = (l & 0x8000) != 0;
		uint8_t msg[WN_CTL_MSG_MAX + 64];
		size_t n;

		l &= 0x7fff;
		data += 2;
		size -= 2;
		n = l < size ? l : size;
		if (n > sizeof(msg))
			n = sizeof(msg);
		memcpy(msg, data, n);
		data += n;
		size -= n;
		if (!raw && n >= sizeof(struct wn_ctl_hdr)) {
			uint32_t len = (uint32_t)n;

			memcpy(msg + offsetof(struct wn_ctl_hdr, len), &len, sizeof(len));
		}
		if (send(sv[1], msg, n, MSG_DONTWAIT) < 0)
			break;
		while (wn_server_poll(srv, 0) > 0)
			;
		drain(sv[1]);
	}
	close(sv[1]);
	while (wn_server_poll(srv, 0) > 0)
		;
	wn_server_stats(srv, &st);
	if (st.clients != 0 || st.pds != 0 || st.mrs != 0 || st.mws != 0 || st.cqs != 0 ||
	    st.srqs != 0 ||
	    st.qps != 0 || st.channels != 0 || st.cm_ids != 0)
		abort();
	wn_server_destroy(srv);
	return 0;
}
