/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ddp_sctp_verbs: warpnic's side of the RFC 5043 interop test (kernel_peer.sh), a plain
 * rdma_cm/verbs program on the warpnic shims, run with WARPNIC_LLP=sctp so its connection is
 * DDP over SCTP. It runs the exchange of ddp_sctp_test.h against ddp_sctp_peer (the Linux
 * kernel's SCTP in a QEMU guest) and checks everything it receives:
 *
 *   ddp_sctp_verbs --server ADDR PORT [--reject]
 *       listens; the peer initiates the session and ends it; --reject: rdma_reject() the
 *       request with DS_REJECT_PD as private data
 *   ddp_sctp_verbs --client ADDR PORT [--rejected]
 *       connects to the peer; this side ends the session; --rejected: the peer rejects, and
 *       REJECTED must come with its private data
 *
 * Checks: the peer's advertisement in the CONNECT_REQUEST (or ESTABLISHED) private data, its
 * Sends (lengths, octets, order), its RDMA Write into our region, our RDMA Read of its region,
 * every work completion successful, DISCONNECTED after the exchange, and the lower layer
 * (fw_ver names sctp). Lines start with "verbs: "; exit status 0 when every check passed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "ddp_sctp_test.h"

#define FAIL(...)                                                                       \
	do {                                                                            \
		printf("verbs: FAIL (line %d): ", __LINE__);                            \
		printf(__VA_ARGS__);                                                    \
		printf(" (errno %d)\n", errno);                                         \
		exit(1);                                                                \
	} while (0)

#define WR_SEND  100 /* + message number */
#define WR_WRITE 200
#define WR_READ  300

static struct rdma_event_channel *ch;
static struct rdma_cm_id *id;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_mr *mr_region, *mr_recv, *mr_send, *mr_write, *mr_sink;
static uint8_t *region, *recvb, *sendb, *writeb, *sink;
static struct ds_adv peer;

static struct rdma_cm_event *
expect(enum rdma_cm_event_type t, int secs)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *ev;

	if (poll(&p, 1, secs * 1000) != 1)
		FAIL("no %s within %d s", rdma_event_str(t), secs);
	if (rdma_get_cm_event(ch, &ev) != 0)
		FAIL("rdma_get_cm_event");
	if (ev->event != t)
		FAIL("%s (status %d), want %s", rdma_event_str(ev->event), ev->status,
		     rdma_event_str(t));
	return ev;
}

static void *
alloc_buf(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len) != 0)
		FAIL("no memory");
	memset(p, 0, len);
	return p;
}

static struct ibv_mr *
reg(void *buf, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, access);

	if (mr == NULL)
		FAIL("ibv_reg_mr of %zu octets", len);
	return mr;
}

/* PD, CQ, QP, registered buffers, receives posted: before the connection is made. */
static void
resources(struct rdma_cm_id *cid)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 32, .max_recv_wr = DS_SENDS, .max_send_sge = 1,
			.max_recv_sge = 1},
	};
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_device_attr da;

	if (ibv_query_device(cid->verbs, &da) != 0)
		FAIL("ibv_query_device");
	printf("verbs: device %s fw_ver %s\n", ibv_get_device_name(cid->verbs->device),
	       da.fw_ver);
	if (strstr(da.fw_ver, "sctp") == NULL)
		FAIL("fw_ver does not name the sctp lower layer (WARPNIC_LLP=sctp not set?)");
	pd = ibv_alloc_pd(cid->verbs);
	cq = pd != NULL ? ibv_create_cq(cid->verbs, 64, NULL, NULL, 0) : NULL;
	if (cq == NULL)
		FAIL("ibv_alloc_pd/ibv_create_cq");
	qa.send_cq = cq;
	qa.recv_cq = cq;
	if (rdma_create_qp(cid, pd, &qa) != 0)
		FAIL("rdma_create_qp");
	region = alloc_buf(DS_REGION);
	for (uint32_t i = 0; i < DS_READ_LEN; i++)
		region[DS_READ_OFF + i] = ds_pat(DS_PAT_WN_READSRC, 0, i);
	recvb = alloc_buf((size_t)DS_SENDS * DS_RECV_MAX);
	sendb = alloc_buf((size_t)DS_SENDS * DS_RECV_MAX);
	writeb = alloc_buf(DS_WRITE_LEN);
	sink = alloc_buf(DS_READ_LEN);
	for (unsigned int k = 0; k < DS_SENDS; k++)
		for (uint32_t i = 0; i < DS_RECV_MAX; i++)
			sendb[(size_t)k * DS_RECV_MAX + i] = ds_pat(DS_PAT_WN_SEND, k, i);
	for (uint32_t i = 0; i < DS_WRITE_LEN; i++)
		writeb[i] = ds_pat(DS_PAT_WN_WRITE, 0, i);
	mr_region = reg(region, DS_REGION, rw);
	mr_recv = reg(recvb, (size_t)DS_SENDS * DS_RECV_MAX, IBV_ACCESS_LOCAL_WRITE);
	mr_send = reg(sendb, (size_t)DS_SENDS * DS_RECV_MAX, 0);
	mr_write = reg(writeb, DS_WRITE_LEN, 0);
	mr_sink = reg(sink, DS_READ_LEN, IBV_ACCESS_LOCAL_WRITE);
	for (unsigned int k = 0; k < DS_SENDS; k++) {
		struct ibv_sge sg = {.addr = (uintptr_t)(recvb + (size_t)k * DS_RECV_MAX),
				     .length = DS_RECV_MAX, .lkey = mr_recv->lkey};
		struct ibv_recv_wr wr = {.wr_id = k, .sg_list = &sg, .num_sge = 1}, *bad;

		if (ibv_post_recv(cid->qp, &wr, &bad) != 0)
			FAIL("ibv_post_recv");
	}
}

static void
post(struct rdma_cm_id *cid, uint64_t wr_id, enum ibv_wr_opcode op, void *buf, uint32_t len,
     uint32_t lkey, uint64_t raddr)
{
	struct ibv_sge sg = {.addr = (uintptr_t)buf, .length = len, .lkey = lkey};
	struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &sg, .num_sge = 1, .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED}, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = peer.stag;
	if (ibv_post_send(cid->qp, &wr, &bad) != 0)
		FAIL("ibv_post_send wr_id %llu", (unsigned long long)wr_id);
}

static void
send_msg(struct rdma_cm_id *cid, unsigned int k, uint32_t len)
{
	post(cid, WR_SEND + k, IBV_WR_SEND, sendb + (size_t)k * DS_RECV_MAX, len, mr_send->lkey,
	     0);
}

static void
check_pat(const uint8_t *b, uint32_t len, unsigned int pat, unsigned int k, const char *what)
{
	for (uint32_t i = 0; i < len; i++)
		if (b[i] != ds_pat(pat, k, i))
			FAIL("%s: octet %u is %#x, want %#x", what, i, b[i], ds_pat(pat, k, i));
}

/* The exchange of ddp_sctp_test.h, this side's part. */
static void
exchange(struct rdma_cm_id *cid)
{
	unsigned int recvs = 0, sends_done = 0;
	bool bye_sent = false, bye_got = false, read_done = false;
	time_t end = time(NULL) + 120;

	for (unsigned int k = 0; k < DS_NSEND; k++)
		send_msg(cid, k, ds_send_len[k]);
	post(cid, WR_WRITE, IBV_WR_RDMA_WRITE, writeb, DS_WRITE_LEN, mr_write->lkey, peer.to);
	send_msg(cid, DS_NSEND, DS_CTL_LEN); /* "write done" */
	while (!(bye_sent && bye_got)) {
		struct ibv_wc wc;
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n < 0)
			FAIL("ibv_poll_cq");
		if (n == 0) {
			if (time(NULL) > end)
				FAIL("exchange not done in 120 s: %u receives, %u sends done, "
				     "read %s", recvs, sends_done, read_done ? "done" : "not done");
			usleep(200);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS)
			FAIL("completion of wr_id %llu: %s (vendor error %#x)",
			     (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
			     wc.vendor_err);
		switch (wc.opcode) {
		case IBV_WC_RECV: {
			unsigned int k = recvs++;
			const uint8_t *b = recvb + (size_t)k * DS_RECV_MAX;
			char what[48];

			snprintf(what, sizeof(what), "the peer's Send %u", k);
			if (wc.wr_id != k)
				FAIL("%s completed receive %llu", what,
				     (unsigned long long)wc.wr_id);
			if (k >= DS_SENDS)
				FAIL("more Sends than the exchange has");
			if (wc.byte_len != (k < DS_NSEND ? ds_send_len[k] : DS_CTL_LEN))
				FAIL("%s has %u octets", what, wc.byte_len);
			check_pat(b, wc.byte_len, DS_PAT_PEER_SEND, k, what);
			if (k == DS_NSEND) {
				/* "write done": its Write is placed */
				check_pat(region, DS_WRITE_LEN, DS_PAT_PEER_WRITE, 0,
					  "the peer's RDMA Write");
				post(cid, WR_READ, IBV_WR_RDMA_READ, sink, DS_READ_LEN,
				     mr_sink->lkey, peer.to + DS_READ_OFF);
			} else if (k == DS_NSEND + 1) {
				bye_got = true;
			}
			break;
		}
		case IBV_WC_RDMA_READ:
			check_pat(sink, DS_READ_LEN, DS_PAT_PEER_READSRC, 0,
				  "our RDMA Read of the peer's region");
			read_done = true;
			send_msg(cid, DS_NSEND + 1, DS_CTL_LEN); /* "bye" */
			break;
		case IBV_WC_SEND:
			sends_done++;
			if (wc.wr_id == WR_SEND + DS_NSEND + 1)
				bye_sent = true;
			break;
		case IBV_WC_RDMA_WRITE:
			break;
		default:
			FAIL("a completion of opcode %d", wc.opcode);
		}
	}
	printf("verbs: exchange done: %u Sends received and %u sent, %u octets written each "
	       "way, %u read each way\n", recvs, sends_done, DS_WRITE_LEN, DS_READ_LEN);
}

static void
adv_of(const struct rdma_conn_param *cp, const char *where)
{
	if (cp->private_data == NULL ||
	    ds_adv_get(cp->private_data, cp->private_data_len, &peer) != 0)
		FAIL("no advertisement in the %s private data (%u octets)", where,
		     cp->private_data_len);
	if (peer.len != DS_REGION)
		FAIL("the peer advertises %u octets", peer.len);
	printf("verbs: %s private data: STag %#x TO %#llx length %u; IRD/ORD %u/%u\n", where,
	       peer.stag, (unsigned long long)peer.to, peer.len, cp->responder_resources,
	       cp->initiator_depth);
}

int
main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	uint8_t adv[DS_ADV_LEN];
	struct rdma_conn_param cp = {.private_data = adv, .private_data_len = sizeof(adv),
				     .responder_resources = DS_IRD, .initiator_depth = DS_ORD};
	struct rdma_cm_event *ev;
	struct rdma_cm_id *cid;
	bool server, reject = false;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && (strcmp(argv[4], "--reject") == 0 || strcmp(argv[4], "--rejected") == 0)) {
		reject = true;
		argc--;
	}
	if (argc != 4 || (strcmp(argv[1], "--server") != 0 && strcmp(argv[1], "--client") != 0)) {
		fprintf(stderr, "usage: %s --server ADDR PORT [--reject] | "
			"--client ADDR PORT [--rejected]\n", argv[0]);
		return 2;
	}
	server = strcmp(argv[1], "--server") == 0;
	sa.sin_port = htons((uint16_t)atoi(argv[3]));
	if (inet_pton(AF_INET, argv[2], &sa.sin_addr) != 1)
		FAIL("bad address %s", argv[2]);
	ch = rdma_create_event_channel();
	if (ch == NULL || rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) != 0)
		FAIL("rdma_create_event_channel/rdma_create_id");
	if (server) {
		if (rdma_bind_addr(id, (struct sockaddr *)&sa) != 0 || rdma_listen(id, 1) != 0)
			FAIL("rdma_bind_addr/rdma_listen %s:%s", argv[2], argv[3]);
		printf("verbs: listening on %s:%s\n", argv[2], argv[3]);
		ev = expect(RDMA_CM_EVENT_CONNECT_REQUEST, 600); /* after the guest boots */
		cid = ev->id;
		adv_of(&ev->param.conn, "Initiate");
		rdma_ack_cm_event(ev);
		if (reject) {
			if (rdma_reject(cid, DS_REJECT_PD, sizeof(DS_REJECT_PD) - 1) != 0)
				FAIL("rdma_reject");
			rdma_destroy_id(cid);
			rdma_destroy_id(id);
			rdma_destroy_event_channel(ch);
			printf("verbs: ok server: rejected\n");
			return 0;
		}
		resources(cid);
		ds_adv_put(adv, &(struct ds_adv){mr_region->rkey, (uintptr_t)region, DS_REGION});
		if (rdma_accept(cid, &cp) != 0)
			FAIL("rdma_accept");
		rdma_ack_cm_event(expect(RDMA_CM_EVENT_ESTABLISHED, 30));
	} else {
		cid = id;
		if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&sa, 5000) != 0)
			FAIL("rdma_resolve_addr");
		rdma_ack_cm_event(expect(RDMA_CM_EVENT_ADDR_RESOLVED, 10));
		if (rdma_resolve_route(id, 5000) != 0)
			FAIL("rdma_resolve_route");
		rdma_ack_cm_event(expect(RDMA_CM_EVENT_ROUTE_RESOLVED, 10));
		resources(cid);
		ds_adv_put(adv, &(struct ds_adv){mr_region->rkey, (uintptr_t)region, DS_REGION});
		if (rdma_connect(id, &cp) != 0)
			FAIL("rdma_connect");
		if (reject) {
			ev = expect(RDMA_CM_EVENT_REJECTED, 60);
			if (ev->param.conn.private_data_len != sizeof(DS_REJECT_PD) - 1 ||
			    memcmp(ev->param.conn.private_data, DS_REJECT_PD,
				   sizeof(DS_REJECT_PD) - 1) != 0)
				FAIL("REJECTED without the peer's private data (%u octets)",
				     ev->param.conn.private_data_len);
			rdma_ack_cm_event(ev);
			rdma_destroy_qp(id);
			rdma_destroy_id(id);
			rdma_destroy_event_channel(ch);
			printf("verbs: ok client: rejected by the peer with its private data\n");
			return 0;
		}
		ev = expect(RDMA_CM_EVENT_ESTABLISHED, 60);
		adv_of(&ev->param.conn, "Accept");
		rdma_ack_cm_event(ev);
	}
	printf("verbs: connected (%s); our region STag %#x TO %#llx\n",
	       server ? "the peer initiated" : "we initiated", mr_region->rkey,
	       (unsigned long long)(uintptr_t)region);
	exchange(cid);
	if (server) {
		/* the peer ends the session (its Terminate): DISCONNECTED, then ours goes */
		rdma_ack_cm_event(expect(RDMA_CM_EVENT_DISCONNECTED, 30));
		rdma_disconnect(cid);
	} else {
		if (rdma_disconnect(cid) != 0)
			FAIL("rdma_disconnect");
		rdma_ack_cm_event(expect(RDMA_CM_EVENT_DISCONNECTED, 30));
	}
	rdma_destroy_qp(cid);
	ibv_dereg_mr(mr_region);
	ibv_dereg_mr(mr_recv);
	ibv_dereg_mr(mr_send);
	ibv_dereg_mr(mr_write);
	ibv_dereg_mr(mr_sink);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	if (server)
		rdma_destroy_id(cid);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	printf("verbs: ok %s\n", server ? "server" : "client");
	return 0;
}
