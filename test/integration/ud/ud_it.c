/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ud_it: one end of a UD case (unreliable datagrams, a warpnic extension over UDP) between
 * two warpnicd instances, or two programs on one, written against the real rdma-core
 * headers (verbs + rdma_cm) and run on warpnic's shims.
 *
 *   ud_it server ADDR PORT COUNT BAD
 *   ud_it client ADDR PORT COUNT BAD [LOST_ADDR]...
 *
 * The server listens on ADDR:PORT in rdma_cm's UDP port space; the client's rdma_connect
 * resolves the server's UD QP (its QP number and Q_Key in ESTABLISHED, with the attributes
 * of an address handle to it) and names its own QP number in the private data. Then:
 *  1. COUNT messages of sizes 1 .. the port's MTU, a third with immediate data, some with
 *     Solicited Event, one at a time: the server checks each receive (the 40-octet GRH as
 *     RoCEv2 gives it: the IPv4 header after 20 zero octets, or the IPv6 header, with both
 *     addresses; the length; the source QP; the immediate data; the octets) and answers it
 *     through an address handle made from the completion and its GRH
 *     (ibv_create_ah_from_wc); the client checks the answer the same way;
 *  2. BAD messages with a Q_Key that is not the server's, then one marker with the right
 *     one: the server's next receive must be the marker (the others were dropped: the
 *     driver reads how many from the server's warpnicd);
 *  3. three messages to each LOST_ADDR through an address handle to it (an address nobody
 *     has, or one without a route): each Send completes, nothing arrives anywhere (the
 *     driver reads the drops from the client's warpnicd); and address handles the device
 *     must refuse are refused (no global route; a GID index out of range; the families of
 *     the GIDs differ).
 * Each side exits 0 only if every check held, printing one JSON line of what it counted;
 * the first failed check is printed with "FAIL:" and the process exits 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define GRH 40
#define BUF 8192
#define MARKER 0xffffffffu

static struct {
	bool server;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;             /* [0, BUF): receive; [BUF, 2 BUF): send */
	uint32_t mtu;
	uint32_t peer_qpn, peer_qkey;
	struct sockaddr_storage self, peer; /* addresses (for the GRH checks) */
	unsigned long received, sent, grh_checked, imm_checked, se_sent, lost_sent, refused;
} g;

static void __attribute__((noreturn, format(printf, 1, 2)))
fail(const char *fmt, ...)
{
	va_list ap;

	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	exit(1);
}

static void
addr_of(const char *s, uint16_t port, struct sockaddr_storage *ss)
{
	struct addrinfo h = {.ai_flags = AI_NUMERICHOST}, *ai;

	if (getaddrinfo(s, NULL, &h, &ai) != 0)
		fail("address %s", s);
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

/* The GID of a socket address (IPv4-mapped for IPv4), as a RoCEv2 GRH carries it. */
static void
gid_of(const struct sockaddr_storage *ss, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (ss->ss_family == AF_INET) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	} else {
		memcpy(gid, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	}
}

static struct rdma_cm_event *
expect_event(enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(g.ch, &ev) != 0)
		fail("rdma_get_cm_event: %s", strerror(errno));
	if (ev->event != want)
		fail("CM event %s (status %d), not %s", rdma_event_str(ev->event), ev->status,
		     rdma_event_str(want));
	return ev;
}

/* The UD QP of @p id (rdma_create_qp gives it in RTS, with RDMA_UDP_QKEY) and its memory. */
static void
resources(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr a = {
		.cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_UD, .sq_sig_all = 1,
	};
	struct ibv_port_attr pa;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;

	g.pd = ibv_alloc_pd(id->verbs);
	g.cq = ibv_create_cq(id->verbs, 64, NULL, NULL, 0);
	if (g.pd == NULL || g.cq == NULL)
		fail("PD or CQ: %s", strerror(errno));
	a.send_cq = a.recv_cq = g.cq;
	if (rdma_create_qp(id, g.pd, &a) != 0)
		fail("rdma_create_qp (UD): %s", strerror(errno));
	g.qp = id->qp;
	if (ibv_query_qp(g.qp, &qa, IBV_QP_STATE | IBV_QP_QKEY, &qi) != 0 ||
	    qa.qp_state != IBV_QPS_RTS || qa.qkey != RDMA_UDP_QKEY || qi.qp_type != IBV_QPT_UD)
		fail("the UD QP is not in RTS with RDMA_UDP_QKEY");
	if (ibv_query_port(id->verbs, 1, &pa) != 0)
		fail("ibv_query_port: %s", strerror(errno));
	g.mtu = 128u << pa.active_mtu;
	g.buf = calloc(1, 2 * BUF);
	g.mr = ibv_reg_mr(g.pd, g.buf, 2 * BUF, IBV_ACCESS_LOCAL_WRITE);
	if (g.buf == NULL || g.mr == NULL)
		fail("MR: %s", strerror(errno));
}

static void
post_recv(void)
{
	struct ibv_sge s = {.addr = (uintptr_t)g.buf, .length = BUF, .lkey = g.mr->lkey};
	struct ibv_recv_wr w = {.wr_id = 1, .sg_list = &s, .num_sge = 1}, *bad;

	if (ibv_post_recv(g.qp, &w, &bad) != 0)
		fail("ibv_post_recv: %s", strerror(errno));
}

static void
wait_wc(struct ibv_wc *wc)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(g.cq, 1, wc);

		if (n < 0)
			fail("ibv_poll_cq");
		if (n == 1)
			return;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 20)
			fail("no completion in 20 s (%lu received, %lu sent)", g.received, g.sent);
	}
}

/* Send @p len octets of the send half to QP @p qpn with Q_Key @p qkey through @p ah. */
static void
send_msg(struct ibv_ah *ah, uint32_t qpn, uint32_t qkey, uint32_t len, bool imm, uint32_t immv,
	 bool se)
{
	struct ibv_sge s = {.addr = (uintptr_t)(g.buf + BUF), .length = len, .lkey = g.mr->lkey};
	struct ibv_send_wr w = {
		.wr_id = 2, .sg_list = &s, .num_sge = 1,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | (se ? IBV_SEND_SOLICITED : 0),
		.imm_data = htonl(immv),
		.wr = {.ud = {.ah = ah, .remote_qpn = qpn, .remote_qkey = qkey}},
	}, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(g.qp, &w, &bad) != 0)
		fail("ibv_post_send: %s", strerror(errno));
	/* sq_sig_all: every Send completes; receives come to the same CQ, not now */
	wait_wc(&wc);
	if (wc.opcode != IBV_WC_SEND || wc.status != IBV_WC_SUCCESS)
		fail("send completion: opcode %d status %s", wc.opcode,
		     ibv_wc_status_str(wc.status));
	g.sent++;
	if (se)
		g.se_sent++;
}

/* Message @p i: its length (1 .. the MTU) and octets; its first 4 octets say which it is. */
static uint32_t
msg_len(uint32_t i)
{
	return 4 + (i * 97u) % (g.mtu - 3);
}

static void
fill(uint8_t *p, uint32_t i, uint32_t len)
{
	for (uint32_t k = 0; k < len; k++)
		p[k] = (uint8_t)(i * 7 + k);
	memcpy(p, &i, 4);
}

/* An IPv4 header sum over @p h: 0 when right. */
static uint16_t
ip4_sum(const uint8_t *h)
{
	uint32_t s = 0;

	for (int k = 0; k < 20; k += 2)
		s += (uint32_t)h[k] << 8 | h[k + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/*
 * The receive in the first half: its completion (GRH, source QP, immediate data) and its
 * GRH's contents: from @c peer to @c self over UDP. @return the message's number.
 */
static uint32_t
check_recv(const struct ibv_wc *wc, uint32_t want_src_qp)
{
	const uint8_t *p = g.buf;
	uint8_t src[16], dst[16];
	uint32_t i, len;

	if (wc->status != IBV_WC_SUCCESS || wc->opcode != IBV_WC_RECV)
		fail("receive completion: opcode %d status %s", wc->opcode,
		     ibv_wc_status_str(wc->status));
	if (!(wc->wc_flags & IBV_WC_GRH) || wc->src_qp != want_src_qp || wc->byte_len < GRH + 4)
		fail("receive: flags %#x src_qp %u (not %u) byte_len %u", wc->wc_flags, wc->src_qp,
		     want_src_qp, wc->byte_len);
	gid_of(&g.peer, src);
	gid_of(&g.self, dst);
	if (g.self.ss_family == AF_INET) {
		static const uint8_t zero[20];

		if (memcmp(p, zero, 20) != 0 || p[20] != 0x45 || p[20 + 9] != IPPROTO_UDP ||
		    ip4_sum(p + 20) != 0 || memcmp(p + 20 + 12, src + 12, 4) != 0 ||
		    memcmp(p + 20 + 16, dst + 12, 4) != 0)
			fail("receive: the GRH is not the datagram's IPv4 header");
	} else if ((p[0] >> 4) != 6 || p[6] != IPPROTO_UDP || memcmp(p + 8, src, 16) != 0 ||
		   memcmp(p + 24, dst, 16) != 0) {
		fail("receive: the GRH is not the datagram's IPv6 header");
	}
	g.grh_checked++;
	memcpy(&i, p + GRH, 4);
	len = wc->byte_len - GRH;
	if (i == MARKER)
		return i;
	if (len != msg_len(i))
		fail("message %u: %u octets, not %u", i, len, msg_len(i));
	for (uint32_t k = 4; k < len; k++)
		if (p[GRH + k] != (uint8_t)(i * 7 + k))
			fail("message %u: octet %u", i, k);
	if (i % 3 == 0) {
		if (!(wc->wc_flags & IBV_WC_WITH_IMM) || ntohl(wc->imm_data) != 0x1000 + i)
			fail("message %u: no immediate data 0x%x", i, 0x1000 + i);
		g.imm_checked++;
	} else if (wc->wc_flags & IBV_WC_WITH_IMM) {
		fail("message %u: immediate data it was not sent with", i);
	}
	return i;
}

/* The address handle to the sender of the receive in the first half. */
static struct ibv_ah *
reply_ah(struct ibv_wc *wc)
{
	struct ibv_ah *ah = ibv_create_ah_from_wc(g.pd, wc, (struct ibv_grh *)g.buf, 1);

	if (ah == NULL)
		fail("ibv_create_ah_from_wc: %s", strerror(errno));
	return ah;
}

static void
run_server(unsigned long count)
{
	struct rdma_conn_param cp = {0};
	struct rdma_cm_event *ev;
	struct ibv_wc wc;
	uint32_t client_qpn, i;

	if (rdma_listen(g.listen, 4) != 0)
		fail("rdma_listen: %s", strerror(errno));
	printf("listening\n");
	fflush(stdout);
	ev = expect_event(RDMA_CM_EVENT_CONNECT_REQUEST);
	g.id = ev->id;
	if (ev->param.ud.private_data_len < 4)
		fail("CONNECT_REQUEST without the client's QP number");
	memcpy(&client_qpn, ev->param.ud.private_data, 4);
	memcpy(&g.peer, rdma_get_peer_addr(g.id), sizeof(g.peer));
	rdma_ack_cm_event(ev);
	resources(g.id);
	post_recv();
	memcpy(g.buf + BUF, "srv!", 4);
	cp.private_data = g.buf + BUF;
	cp.private_data_len = 4;
	if (rdma_accept(g.id, &cp) != 0)
		fail("rdma_accept: %s", strerror(errno));
	for (;;) {
		struct ibv_ah *ah;

		wait_wc(&wc);
		i = check_recv(&wc, client_qpn);
		g.received++;
		ah = reply_ah(&wc);
		memcpy(g.buf + BUF, g.buf + GRH, wc.byte_len - GRH);
		post_recv();
		/* the answer goes to the QP the completion names, with the Q_Key rdma_cm gave it */
		send_msg(ah, wc.src_qp, RDMA_UDP_QKEY, wc.byte_len - GRH, i != MARKER && i % 3 == 0,
			 0x1000 + i, false);
		ibv_destroy_ah(ah);
		if (i == MARKER)
			break;
		if (g.received > count)
			fail("more messages than %lu before the marker", count);
	}
	if (g.received != count + 1)
		fail("%lu messages, not %lu and the marker", g.received - 1, count);
}

/* Address handles a RoCE device must refuse, and datagrams nobody gets. */
static void
lost_and_refused(char **lost, int n_lost)
{
	struct ibv_ah_attr a = {.port_num = 1};
	struct ibv_ah *ah;
	union ibv_gid gid;

	/* no global route: no LIDs on this device (test_addr's test_create_ah_roce) */
	if (ibv_create_ah(g.pd, &a) != NULL || errno != EINVAL)
		fail("an AH without a GRH was not refused with EINVAL");
	a.is_global = 1;
	a.grh.sgid_index = 200;
	if (ibv_create_ah(g.pd, &a) != NULL || errno != EINVAL)
		fail("an AH with GID index 200 was not refused");
	if (ibv_query_gid(g.id->verbs, 1, 0, &gid) != 0)
		fail("ibv_query_gid");
	a.grh.sgid_index = 0;
	/* GID 0's family is not the destination's */
	memset(a.grh.dgid.raw, 0, 16);
	if (gid.raw[10] == 0xff && gid.raw[11] == 0xff) {
		a.grh.dgid.raw[0] = 0x20;
		a.grh.dgid.raw[1] = 0x01;
		a.grh.dgid.raw[15] = 9;
	} else {
		a.grh.dgid.raw[10] = a.grh.dgid.raw[11] = 0xff;
		a.grh.dgid.raw[12] = 198;
	}
	if (ibv_create_ah(g.pd, &a) != NULL || errno != EINVAL)
		fail("an AH from one family to the other was not refused");
	g.refused = 3;
	for (int k = 0; k < n_lost; k++) {
		struct sockaddr_storage ss;

		addr_of(lost[k], 0, &ss);
		gid_of(&ss, a.grh.dgid.raw);
		a.grh.sgid_index = 0;
		for (int x = 0; ibv_query_gid(g.id->verbs, 1, x, &gid) == 0; x++)
			if ((gid.raw[10] == 0xff) == (a.grh.dgid.raw[10] == 0xff)) {
				a.grh.sgid_index = (uint8_t)x;
				break;
			}
		a.grh.hop_limit = 64;
		ah = ibv_create_ah(g.pd, &a);
		if (ah == NULL)
			fail("ibv_create_ah to %s: %s", lost[k], strerror(errno));
		for (int m = 0; m < 3; m++) {
			fill(g.buf + BUF, 7, msg_len(7));
			/* a datagram is sent and lost on the way: its Send completes all the same */
			send_msg(ah, 0x42, RDMA_UDP_QKEY, msg_len(7), false, 0, false);
			g.lost_sent++;
		}
		ibv_destroy_ah(ah);
	}
}

static void
run_client(unsigned long count, unsigned long bad, char **lost, int n_lost)
{
	struct rdma_conn_param cp = {0};
	struct rdma_cm_event *ev;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	uint32_t qpn;

	if (rdma_resolve_addr(g.id, NULL, (struct sockaddr *)&g.peer, 2000) != 0)
		fail("rdma_resolve_addr: %s", strerror(errno));
	rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ADDR_RESOLVED));
	memcpy(&g.self, rdma_get_local_addr(g.id), sizeof(g.self));
	if (rdma_resolve_route(g.id, 2000) != 0)
		fail("rdma_resolve_route: %s", strerror(errno));
	rdma_ack_cm_event(expect_event(RDMA_CM_EVENT_ROUTE_RESOLVED));
	resources(g.id);
	post_recv();
	qpn = g.qp->qp_num;
	cp.private_data = &qpn;
	cp.private_data_len = 4;
	if (rdma_connect(g.id, &cp) != 0)
		fail("rdma_connect: %s", strerror(errno));
	ev = expect_event(RDMA_CM_EVENT_ESTABLISHED);
	g.peer_qpn = ev->param.ud.qp_num;
	g.peer_qkey = ev->param.ud.qkey;
	if (g.peer_qkey != RDMA_UDP_QKEY || ev->param.ud.private_data_len < 4 ||
	    memcmp(ev->param.ud.private_data, "srv!", 4) != 0)
		fail("ESTABLISHED: Q_Key %#x, private data %u octets", g.peer_qkey,
		     ev->param.ud.private_data_len);
	ah = ibv_create_ah(g.pd, &ev->param.ud.ah_attr);
	if (ah == NULL)
		fail("ibv_create_ah from ESTABLISHED: %s", strerror(errno));
	rdma_ack_cm_event(ev);
	for (uint32_t i = 0; i < count; i++) {
		uint32_t len = msg_len(i);

		fill(g.buf + BUF, i, len);
		send_msg(ah, g.peer_qpn, g.peer_qkey, len, i % 3 == 0, 0x1000 + i, i % 5 == 0);
		wait_wc(&wc);
		if (check_recv(&wc, g.peer_qpn) != i)
			fail("the answer to message %u is another", i);
		g.received++;
		post_recv();
	}
	/* a Q_Key not the server's: dropped there; then the marker, which must come next */
	for (unsigned long k = 0; k < bad; k++) {
		fill(g.buf + BUF, (uint32_t)k, 64);
		send_msg(ah, g.peer_qpn, g.peer_qkey ^ 0x5a5a, 64, false, 0, false);
	}
	memset(g.buf + BUF, 0xee, 64);
	memcpy(g.buf + BUF, &(uint32_t){MARKER}, 4);
	send_msg(ah, g.peer_qpn, g.peer_qkey, 64, false, 0, false);
	wait_wc(&wc);
	if (check_recv(&wc, g.peer_qpn) != MARKER)
		fail("the answer to the marker is another message");
	g.received++;
	ibv_destroy_ah(ah);
	lost_and_refused(lost, n_lost);
}

int
main(int argc, char **argv)
{
	unsigned long count, bad;
	struct sockaddr_storage ss;

	if (argc < 6 || (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0)) {
		fprintf(stderr, "usage: ud_it server|client ADDR PORT COUNT BAD [LOST_ADDR]...\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	g.server = strcmp(argv[1], "server") == 0;
	addr_of(argv[2], (uint16_t)atoi(argv[3]), &ss);
	count = strtoul(argv[4], NULL, 0);
	bad = strtoul(argv[5], NULL, 0);
	g.ch = rdma_create_event_channel();
	if (g.ch == NULL)
		fail("rdma_create_event_channel: %s", strerror(errno));
	if (g.server) {
		g.self = ss;
		if (rdma_create_id(g.ch, &g.listen, NULL, RDMA_PS_UDP) != 0 ||
		    rdma_bind_addr(g.listen, (struct sockaddr *)&ss) != 0)
			fail("UDP id bound to %s: %s", argv[2], strerror(errno));
		run_server(count);
	} else {
		g.peer = ss;
		if (rdma_create_id(g.ch, &g.id, NULL, RDMA_PS_UDP) != 0)
			fail("rdma_create_id(RDMA_PS_UDP): %s", strerror(errno));
		run_client(count, bad, argv + 6, argc - 6);
	}
	printf("{\"role\": \"%s\", \"received\": %lu, \"sent\": %lu, \"grh_checked\": %lu, "
	       "\"imm_checked\": %lu, \"se_sent\": %lu, \"lost_sent\": %lu, \"refused\": %lu, "
	       "\"mtu\": %u}\n", g.server ? "server" : "client", g.received, g.sent,
	       g.grh_checked, g.imm_checked, g.se_sent, g.lost_sent, g.refused, g.mtu);
	return 0;
}
