/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-rdma-cost: the CPU work of one RDMA message against the raw port path, for rdma_cost.sh
 * (under callgrind: instructions are repeatable on a loaded machine, wall-clock is not).
 * Two things run in one thread over a pair of net_ring ports, so no CPU waits on another:
 *
 *   write SIZE N   two run-to-completion dataplanes (lib/dp, wn_dp_embed.h) back to back; A
 *                  Writes N messages of SIZE octets to B, 64 outstanding, every one signaled
 *   send SIZE N    the same with Sends into receives B keeps posted
 *   mwrite SIZE N  write with MPA Markers asked for by both ends (RFC 5044 §4.2: in both
 *                  directions, every 512 octets of the stream)
 *   swrite, ssend  the same two over DDP over SCTP (RFC 5043, lib/sctp: usrsctp) instead of
 *                  MPA/TCP; a "frame" is then a DATA chunk of at most 1416 octets
 *   raw SIZE N     the raw path of warpnic-perf raw_bw: per message, ceil(SIZE / 1484)
 *                  frames (Ethernet + 16-octet header + payload copied in), tx_burst on A,
 *                  rx_burst on B, payload copied out to the destination, mbufs freed
 *
 * The RDMA modes take two more arguments, QPS (default 1) and TX_BUDGET (lib/tcp's
 * send_budget, warpnicd --tx-budget; default 0, none): the messages go round the QPS
 * connections, each with its own part of both buffers and max(1, 64 / QPS) outstanding, so
 * the octets in flight are the same whatever the count (as scripts/bench.sh's QP curve).
 *
 * TCP checksums are as on net_memif (WN_NET_CKSUM_LOCAL: none summed; a NIC offloads them).
 * The measured part is the function measure() (callgrind --toggle-collect=measure): both
 * sides' work, from the first post to the last completion (RDMA) or the last frame taken
 * (raw). The program checks the destination octets and prints "cost: MODE SIZE N ok".
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "wn_ctl.h"
#include "wn_dp.h"
#include "wn_dp_embed.h"
#include "wn_mem.h"
#include "wn_port.h"
#include "wn_queue.h"

#define PORT 4791
#define DEPTH 64
#define RAW_PIECE 1484u    /* MTU 1500 less warpnic-perf raw's 16-octet header */
#define BURST 32
#define PUMP_MAX 50000000u

struct side {
	struct wn_dp_group *g;
	struct wn_dp *dp;
	struct wn_mem_table *mem;
	uint16_t port;
	struct wn_ip_addr ip;
	uint32_t pd, stag;
	uint8_t *buf;
	struct wn_dp_cq *cq;
	struct wn_dp_qp **qp;
	struct wn_dp_conn **conn;
	struct wn_dp_listener *l;
};

static struct rte_mempool *pool;
static bool use_sctp, use_markers;
static struct side sa, sb;
static struct rte_ring *rings[2];
static size_t buf_len;
static uint32_t n_qps = 1, qp_depth = DEPTH, tx_budget;

static void
die(const char *what)
{
	fprintf(stderr, "wn-rdma-cost: %s\n", what);
	exit(1);
}

static uint16_t
ring_port(const char *name, struct rte_ring *rx, struct rte_ring *tx, uint64_t *txc, uint64_t *rxc)
{
	struct wn_port_conf pc = { .nb_queues = 1 };
	int port = rte_eth_from_rings(name, &rx, 1, &tx, 1, (unsigned int)SOCKET_ID_ANY);

	if (port < 0)
		die("net_ring port");
	pc.port_id = (uint16_t)port;
	pc.pool = pool;
	if (wn_net_port_setup(&pc, txc, rxc) != 0)
		die("port set-up");
	return (uint16_t)port;
}

static void
side_up(struct side *s, const char *name, struct rte_ring *rx, struct rte_ring *tx, uint32_t ip)
{
	struct wn_dp_conf c;

	memset(&c, 0, sizeof(c));
	s->port = ring_port(name, rx, tx, &c.tx_offload_capa, &c.rx_offload_capa);
	s->mem = wn_mem_table_create(1024 + n_qps, NULL);
	if (s->mem == NULL)
		die("lib/mem table");
	c.port_id = s->port;
	c.pool = pool;
	c.mtu = 1500;
	c.n_addrs = 1;
	c.addrs[0].family = WN_AF_INET;
	c.addrs[0].v4 = rte_cpu_to_be_32(ip);
	c.prefix[0] = 24;
	c.ctl_efd = -1;
	c.mem = s->mem;
	c.max_conns = n_qps + 64;
	c.sockbuf = 1024 * 1024;
	c.tx_budget = tx_budget;
	c.mpa_rev = 2;
	c.crc = true;
	c.markers = use_markers;
	c.p2p = true;
	c.rtr = 7;
	c.rfc7306 = true;
	c.cksum = WN_NET_CKSUM_LOCAL; /* as on net_memif (raw_bw's link) */
	c.llp = use_sctp ? WN_CTL_LLP_SCTP : WN_CTL_LLP_MPA;
	s->ip = c.addrs[0];
	s->g = wn_dp_create(&c, 1);
	if (s->g == NULL)
		die("dataplane");
	s->dp = wn_dp_shard(s->g, 0);
	if (wn_dp_start(s->dp) != 0)
		die("shard start");
	s->pd = (uint32_t)wn_dp_pd_alloc(s->dp);
	if (wn_dp_mr_reg(s->dp, s->pd, s->buf, buf_len, WN_QUEUE_ACCESS_LOCAL_WRITE |
			 WN_QUEUE_ACCESS_REMOTE_WRITE | WN_QUEUE_ACCESS_REMOTE_READ, &s->stag) != 0)
		die("memory registration");
	s->cq = wn_dp_cq_create(s->dp, 4 * (n_qps * qp_depth + DEPTH));
	s->qp = calloc(n_qps, sizeof(*s->qp));
	s->conn = calloc(n_qps, sizeof(*s->conn));
	if (s->cq == NULL || s->qp == NULL || s->conn == NULL)
		die("CQ");
}

static unsigned int
pump(void)
{
	return wn_dp_poll(sa.dp) + wn_dp_poll(sb.dp);
}

static struct wn_dp_qp *
qp_new(struct side *s)
{
	struct wn_dp_qp_attr a = {
		.pd = s->pd, .send_cq = s->cq, .recv_cq = s->cq, .sq_depth = 2 * qp_depth,
		.rq_depth = 2 * qp_depth, .max_send_sge = 1, .max_recv_sge = 1, .max_inline = 64,
	};

	return wn_dp_qp_create(s->dp, &a);
}

/* QP @p q of each side connected to its peer: connect, accept, both ESTABLISHED */
static void
connect_one(uint32_t q, const struct wn_llp_ep *la, const struct wn_llp_ep *lb)
{
	struct wn_dp_conn_param p = { .ird = 4, .ord = 4 };
	struct wn_dp_cm_event ev;
	int got = 0;

	sa.qp[q] = qp_new(&sa);
	sb.qp[q] = qp_new(&sb);
	if (sa.qp[q] == NULL || sb.qp[q] == NULL)
		die("QPs");
	sa.conn[q] = wn_dp_connect(sa.dp, sa.qp[q], la, lb, &p, &sa);
	if (sa.conn[q] == NULL)
		die("connect");
	for (uint32_t i = 0; got != 3; i++) {
		if (i == PUMP_MAX)
			die("no connection");
		pump();
		if (wn_dp_cm_poll(sb.dp, &ev) == 1) {
			if (ev.type == WN_CM_EV_CONNECT_REQUEST) {
				sb.conn[q] = ev.conn;
				if (wn_dp_accept(sb.conn[q], sb.qp[q], &p, &sb) != 0)
					die("accept");
			} else if (ev.type == WN_CM_EV_ESTABLISHED) {
				got |= 2;
			} else {
				die("server CM event");
			}
		}
		if (wn_dp_cm_poll(sa.dp, &ev) == 1) {
			if (ev.type != WN_CM_EV_ESTABLISHED)
				die("client CM event");
			got |= 1;
		}
	}
}

static void
connect_pairs(void)
{
	struct wn_llp_ep la, lb, any;

	memset(&la, 0, sizeof(la));
	la.addr = sa.ip;
	lb = la;
	lb.addr = sb.ip;
	lb.port = PORT;
	any = lb;
	memset(&any.addr.v4, 0, sizeof(any.addr.v4));
	sb.l = wn_dp_listen(sb.dp, &any, &sb);
	if (sb.l == NULL)
		die("listen");
	for (uint32_t q = 0; q < n_qps; q++)
		connect_one(q, &la, &lb);
}

/* QP @p q's message @p i: slot i % depth of the QP's part of both buffers. */
static void
post_one(uint8_t opcode, uint32_t size, uint32_t q, uint64_t i)
{
	struct wn_queue_swqe w;
	size_t off = ((size_t)q * 2 * qp_depth + i % qp_depth) * size;
	struct wn_queue_sge sge = { .addr = (uint64_t)(uintptr_t)(sa.buf + off), .length = size,
				    .lkey = sa.stag };

	memset(&w, 0, sizeof(w));
	w.wr_id = (uint64_t)q;
	w.opcode = opcode;
	w.flags = WN_QUEUE_SEND_SIGNALED;
	w.num_sge = 1;
	w.u.rdma.remote_addr = (uint64_t)(uintptr_t)(sb.buf + off);
	w.u.rdma.rkey = sb.stag;
	if (wn_dp_post_send(sa.qp[q], &w, &sge) != 0)
		die("post");
}

static void
post_recv(uint32_t size, uint32_t q, uint64_t i)
{
	struct wn_queue_sge sge = {
		.addr = (uint64_t)(uintptr_t)(sb.buf + ((size_t)q * 2 * qp_depth +
							 i % (2 * qp_depth)) * size),
		.length = size, .lkey = sb.stag };

	if (wn_dp_post_recv(sb.qp[q], (uint64_t)q, &sge, 1) != 0)
		die("post receive");
}

/* RDMA: N messages A → B round the QPs, qp_depth outstanding on each; B reposts receives
 * (send). */
static void __attribute__((noinline))
measure_rdma(bool send, uint32_t size, uint64_t n)
{
	struct wn_queue_cqe e[BURST];
	uint64_t posted = 0, done = 0, got = 0;
	uint32_t *out = calloc(n_qps, sizeof(*out)), *rq = calloc(n_qps, sizeof(*rq));
	uint64_t *recvs = calloc(n_qps, sizeof(*recvs)), *sent = calloc(n_qps, sizeof(*sent));
	uint32_t next = 0;
	uint8_t op = send ? WN_QUEUE_WR_SEND : WN_QUEUE_WR_RDMA_WRITE;

	if (out == NULL || rq == NULL || recvs == NULL || sent == NULL)
		die("QP counts");
	for (uint32_t q = 0; q < n_qps; q++) {
		rq[q] = 2 * qp_depth;
		recvs[q] = 2 * qp_depth;
	}
	for (uint32_t spin = 0; done < n || (send && got < n); spin++) {
		int k;

		if (spin == PUMP_MAX)
			die("stalled");
		/* a Send completes at A once TCP has it, maybe before B took it: post only what
		 * B's posted receives can take (an unmatched Send is fatal, RFC 5040 §7.1) */
		for (uint32_t tried = 0; posted < n && tried < n_qps; tried++) {
			uint32_t q = next;

			next = next + 1 == n_qps ? 0 : next + 1;
			while (posted < n && out[q] < qp_depth && (!send || rq[q] > 0)) {
				post_one(op, size, q, sent[q]++);
				posted++;
				out[q]++;
				if (send)
					rq[q]--;
			}
		}
		pump();
		k = wn_dp_cq_poll(sa.cq, e, BURST);
		for (int i = 0; i < k; i++) {
			if (e[i].status != 0)
				die("send completion in error");
			out[e[i].wr_id]--;
		}
		done += (uint64_t)(k > 0 ? k : 0);
		if (!send)
			continue;
		k = wn_dp_cq_poll(sb.cq, e, BURST);
		for (int i = 0; i < k; i++) {
			uint32_t q = (uint32_t)e[i].wr_id;

			if (e[i].status != 0 || e[i].byte_len != size)
				die("receive completion");
			post_recv(size, q, recvs[q]++);
			rq[q]++;
		}
		got += (uint64_t)(k > 0 ? k : 0);
	}
	/* a Write completes when TCP has it: the rest of the way (B's receive, placement, the
	 * ACKs) is part of the message's cost too, until both sides have had nothing to do for
	 * a while (timers due later, as a delayed ACK, are not) */
	for (uint32_t idle = 0, spin = 0; idle < 64; spin++) {
		if (spin == PUMP_MAX)
			die("no end of work");
		idle = pump() == 0 ? idle + 1 : 0;
	}
	free(out);
	free(rq);
	free(recvs);
	free(sent);
}

/* Raw: per message ceil(size / RAW_PIECE) frames A → B, payload copied in and out. */
static void __attribute__((noinline))
measure_raw(uint32_t size, uint64_t n)
{
	uint32_t frames = (size + RAW_PIECE - 1) / RAW_PIECE;
	uint64_t total = n * frames, sent = 0, got = 0;
	struct rte_mbuf *m[BURST];
	uint64_t dst_off = 0;

	for (uint32_t spin = 0; got < total; spin++) {
		uint16_t k = (uint16_t)(total - sent < BURST ? total - sent : BURST), tx = 0, rx;

		if (spin == PUMP_MAX)
			die("raw stalled");
		if (k > 0 && rte_pktmbuf_alloc_bulk(pool, m, k) == 0) {
			for (uint16_t i = 0; i < k; i++) {
				uint64_t f = sent + i;
				uint32_t off = (uint32_t)(f % frames) * RAW_PIECE;
				uint32_t len = size - off < RAW_PIECE ? size - off : RAW_PIECE;
				uint8_t *p = rte_pktmbuf_mtod(m[i], uint8_t *);
				struct rte_ether_hdr *eh = (struct rte_ether_hdr *)p;

				memset(eh, 0xff, 2 * RTE_ETHER_ADDR_LEN);
				eh->ether_type = rte_cpu_to_be_16(0x88b5);
				memcpy(p + sizeof(*eh), &f, sizeof(f));
				memcpy(p + sizeof(*eh) + 8, &len, sizeof(len));
				memcpy(p + sizeof(*eh) + 16, sa.buf + off, len);
				m[i]->data_len = m[i]->pkt_len = (uint32_t)sizeof(*eh) + 16 + len;
			}
			tx = rte_eth_tx_burst(sa.port, 0, m, k);
			if (tx < k)
				rte_pktmbuf_free_bulk(m + tx, k - tx);
			sent += tx;
		}
		rx = rte_eth_rx_burst(sb.port, 0, m, BURST);
		for (uint16_t i = 0; i < rx; i++) {
			const uint8_t *p = rte_pktmbuf_mtod(m[i], const uint8_t *) +
					   sizeof(struct rte_ether_hdr);
			uint64_t f;
			uint32_t len;

			memcpy(&f, p, sizeof(f));
			memcpy(&len, p + 8, sizeof(len));
			dst_off = (f % frames) * RAW_PIECE;
			memcpy(sb.buf + dst_off, p + 16, len);
		}
		rte_pktmbuf_free_bulk(m, rx);
		got += rx;
	}
}

static void __attribute__((noinline))
measure(const char *mode, uint32_t size, uint64_t n)
{
	if (strcmp(mode, "raw") == 0)
		measure_raw(size, n);
	else
		measure_rdma(strcmp(mode, "send") == 0 || strcmp(mode, "ssend") == 0, size, n);
}

int
main(int argc, char **argv)
{
	char prefix[32], dir[PATH_MAX];
	char *eal[] = { argv[0], "--no-huge", "--no-shconf", "--no-pci", "-l", "0", "-m", "512",
			"--file-prefix", prefix, "--log-level", "*:error", "--no-telemetry", NULL };
	const char *mode;
	uint32_t size;
	uint64_t n;
	bool raw;

	if (argc < 4 || argc > 6 || (strcmp(argv[1], "write") != 0 && strcmp(argv[1], "send") != 0 &&
			  strcmp(argv[1], "mwrite") != 0 && strcmp(argv[1], "swrite") != 0 &&
			  strcmp(argv[1], "ssend") != 0 && strcmp(argv[1], "raw") != 0)) {
		fprintf(stderr, "usage: %s write|mwrite|send|swrite|ssend|raw SIZE N [QPS [TX_BUDGET]]\n",
			argv[0]);
		return 2;
	}
	mode = argv[1];
	use_sctp = strcmp(mode, "swrite") == 0 || strcmp(mode, "ssend") == 0;
	use_markers = strcmp(mode, "mwrite") == 0;
	size = (uint32_t)strtoul(argv[2], NULL, 0);
	n = strtoull(argv[3], NULL, 0);
	raw = strcmp(mode, "raw") == 0;
	if (argc > 4)
		n_qps = (uint32_t)strtoul(argv[4], NULL, 0);
	if (argc > 5)
		tx_budget = (uint32_t)strtoul(argv[5], NULL, 0);
	if (size == 0 || size > (1u << 20) || n == 0 || n_qps == 0 || n_qps > 65536 ||
	    (raw && n_qps != 1))
		die("SIZE 1..1 MiB, N > 0, QPS 1..65536 (raw: 1)");
	qp_depth = n_qps >= DEPTH ? 1 : DEPTH / n_qps;
	snprintf(prefix, sizeof(prefix), "wncost%d", (int)getpid());
	if (rte_eal_init(13, eal) < 0)
		die("EAL init");
	pool = rte_pktmbuf_pool_create("cost_pool", 16383, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	rings[0] = rte_ring_create("cost_ab", 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	rings[1] = rte_ring_create("cost_ba", 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (pool == NULL || rings[0] == NULL || rings[1] == NULL)
		die("pool or rings");
	buf_len = ((size_t)size * 2 * qp_depth * n_qps + 4095) & ~(size_t)4095;
	sa.buf = aligned_alloc(4096, buf_len);
	sb.buf = aligned_alloc(4096, buf_len);
	if (sa.buf == NULL || sb.buf == NULL)
		die("buffers");
	for (size_t i = 0; i < buf_len; i++)
		sa.buf[i] = (uint8_t)(i * 7 + 3 + (i >> 9));
	memset(sb.buf, 0, buf_len);
	if (raw) {
		uint64_t txc, rxc;

		sa.port = ring_port("cost_a", rings[1], rings[0], &txc, &rxc);
		sb.port = ring_port("cost_b", rings[0], rings[1], &txc, &rxc);
	} else {
		side_up(&sa, "cost_a", rings[1], rings[0], 0xc6120001);
		side_up(&sb, "cost_b", rings[0], rings[1], 0xc6120002);
		connect_pairs();
		if (strcmp(mode, "send") == 0 || strcmp(mode, "ssend") == 0)
			for (uint32_t q = 0; q < n_qps; q++)
				for (uint64_t i = 0; i < 2 * qp_depth; i++)
					post_recv(size, q, i);
	}
	measure(mode, size, n);
	/* the destination holds the source's octets (send: the slots the last Sends filled) */
	for (uint32_t q = 0; q < n_qps && q < n; q++) {
		size_t off = (size_t)q * 2 * qp_depth * size;

		if (memcmp(sa.buf + off, sb.buf + off, size) != 0 && strcmp(mode, "send") != 0 &&
		    strcmp(mode, "ssend") != 0) {
			fprintf(stderr, "wn-rdma-cost: QP %u: ", q);
			die("destination octets differ");
		}
	}
	if (!raw) {
		struct rte_eth_stats ea, eb;

		if (rte_eth_stats_get(sa.port, &ea) == 0 && rte_eth_stats_get(sb.port, &eb) == 0)
			printf("frames: A to B %llu, B to A %llu (connection set-up included)\n",
			       (unsigned long long)ea.opackets, (unsigned long long)eb.opackets);
	}
	printf("cost: %s %u %llu ok\n", mode, size, (unsigned long long)n);
	/* the per-process EAL runtime directory would stay behind in /var/run/dpdk */
	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	(void)rmdir(dir);
	return 0;
}
