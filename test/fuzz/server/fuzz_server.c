/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz lib/server (request validation + handlers) through a real SOCK_SEQPACKET connection.
 * Input: records of [u16 LE length][datagram]; unless bit 15 of the length is set, hdr.len
 * is patched to the datagram size so the fuzzer gets past the framing check. The harness
 * plays a loopback dataplane (rings attached): a CONNECT becomes a CONNECT_REQUEST on the
 * last listener, an ACCEPT an ESTABLISHED on both ids, a REJECT a REJECTED, a DISCONNECT a
 * DISCONNECTED, a LISTEN its acknowledgement (a failure on odd ports), and destroyed objects
 * get their DONE. After the client disconnects, every object it created must be reclaimed
 * (the invariant a crashing client relies on); a violation aborts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_log.h>
#include <rte_ring.h>

#include "wn_ctl.h"
#include "wn_server.h"
#include "wn_server_dp.h"

#include "../../unit/client/dp_rings.h"

static struct rte_ring *to_dp, *to_ctl;
static int efd;
static uint32_t listener; /* the last id the server asked the dataplane to listen on */

/* Post to the server: DONE for @p handle, or CM event @p ev for id @p id (key @p key). */
/* @p m to the server, its eventfd woken, as the dataplane sends. */
static void
to_server(struct wn_server_dp_msg *m)
{
	uint64_t one = 1;

	if (rte_ring_enqueue(to_ctl, m) != 0 || write(efd, &one, sizeof(one)) < 0)
		abort();
}

static void
post(uint32_t type, uint32_t handle, uint32_t ev, uint32_t id, uint32_t key)
{
	struct wn_server_dp_msg *m = calloc(1, sizeof(*m));

	if (m == NULL)
		abort();
	m->type = type;
	m->handle = handle;
	m->u.cm.id = id;
	m->u.cm.ev.event = ev;
	m->u.cm.ev.id = ev == WN_CTL_CM_EV_CONNECT_REQUEST ? key : id;
	m->u.cm.ev.listen_id = listener;
	if (ev == WN_CTL_CM_EV_REJECTED)
		m->u.cm.ev.status = -ECONNREFUSED;
	to_server(m);
}

/* The dataplane's acknowledgement of a LISTEN of id @p id. */
static void
listening(uint32_t id, int status)
{
	struct wn_server_dp_msg *m = calloc(1, sizeof(*m));

	if (m == NULL)
		abort();
	m->type = WN_SERVER_DP_CM_LISTENING;
	m->handle = id;
	m->u.cm.id = id;
	m->u.cm.ev.status = status;
	to_server(m);
}

/* The loopback dataplane's answers to what the server sent (ids are their own keys). */
static void
play_dataplane(void)
{
	struct wn_server_dp_msg *m;

	while (rte_ring_dequeue(to_dp, (void **)&m) == 0) {
		uint32_t ev = WN_SERVER_DP_CM_EVENT;

		switch (m->type) {
		case WN_SERVER_DP_CM_LISTEN:
			/* an odd port's listener fails (the server takes it down again) */
			if ((m->u.cm.src.port & 1) == 0)
				listener = m->u.cm.id;
			listening(m->u.cm.id, (m->u.cm.src.port & 1) != 0 ? -EADDRINUSE : 0);
			break;
		case WN_SERVER_DP_CM_CONNECT:
			post(ev, 0, WN_CTL_CM_EV_CONNECT_REQUEST, 0, m->u.cm.id);
			break;
		case WN_SERVER_DP_CM_ACCEPT:
			post(ev, 0, WN_CTL_CM_EV_ESTABLISHED, m->u.cm.id, 0);
			post(ev, 0, WN_CTL_CM_EV_ESTABLISHED, m->u.cm.conn, 0);
			break;
		case WN_SERVER_DP_CM_REJECT:
			if (m->u.cm.conn != 0)
				post(ev, 0, WN_CTL_CM_EV_REJECTED, m->u.cm.conn, 0);
			break;
		case WN_SERVER_DP_CM_DISCONNECT:
			post(ev, 0, WN_CTL_CM_EV_DISCONNECTED, m->u.cm.id, 0);
			break;
		case WN_SERVER_DP_MR_DEREG:
		case WN_SERVER_DP_CQ_DESTROY:
		case WN_SERVER_DP_SRQ_DESTROY:
		case WN_SERVER_DP_QP_DESTROY:
			post(WN_SERVER_DP_DONE, m->handle, 0, 0, 0);
			break;
		default:
			break;
		}
		free(m);
	}
}

/* Nothing left for the next input's server. */
static void
drain_rings(void)
{
	struct wn_server_dp_msg *m;
	uint64_t v;

	while (rte_ring_dequeue(to_dp, (void **)&m) == 0)
		free(m);
	while (rte_ring_dequeue(to_ctl, (void **)&m) == 0)
		free(m);
	(void)!read(efd, &v, sizeof(v));
}

/* Run the server until neither the client nor the dataplane has anything for it. */
static void
settle(struct wn_server *srv)
{
	do {
		while (wn_server_poll(srv, 0) > 0)
			;
		play_dataplane();
	} while (wn_server_poll(srv, 0) > 0);
}

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
		to_dp = test_ring_new("to_dp");
		to_ctl = test_ring_new("to_ctl");
		efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (to_dp == NULL || to_ctl == NULL || efd < 0)
			abort();
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
	listener = 0;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0 ||
	    wn_server_adopt(srv, sv[0]) != 0 || wn_server_dp_attach(srv, to_dp, to_ctl, efd) != 0)
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
		settle(srv);
		drain(sv[1]);
	}
	close(sv[1]);
	settle(srv);
	wn_server_stats(srv, &st);
	if (st.clients != 0 || st.pds != 0 || st.mrs != 0 || st.mws != 0 || st.cqs != 0 ||
	    st.srqs != 0 || st.qps != 0 || st.channels != 0 || st.cm_ids != 0)
		abort();
	wn_server_destroy(srv);
	drain_rings();
	return 0;
}
