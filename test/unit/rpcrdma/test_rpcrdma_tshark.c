/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Interop check against Wireshark's rpcordma dissector: an RPC-over-RDMA
 * RDMA_MSG with read, write and reply chunks (wn_rpcrdma_encode) is carried in
 * an iWARP Send (lib/wire DDP/RDMAP header, MPA FPDU with CRC) after a TCP
 * handshake and an MPA Request/Reply, written to a classic pcap, and tshark
 * must decode the same XID, version, credits, type, counts and segments.
 * A failure means a standard analyzer reads our headers differently from us.
 * Skipped when tshark is not installed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cmocka.h>

#include "wn_rpcrdma.h"
#include "wn_wire_crc.h"
#include "wn_wire_ddp.h"
#include "wn_wire_mpa.h"

struct pcap {
	FILE *fp;
	uint32_t seq[2]; /* next sequence number per direction (0 client, 1 server) */
	uint32_t t;
};

static void
put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* One Ethernet/IPv4/TCP packet from side @p dir with @p flags and payload. */
static void
packet(struct pcap *pc, int dir, uint8_t flags, const uint8_t *pl, size_t n)
{
	uint8_t f[2048];
	static const uint8_t mac[2][6] = {{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}};
	size_t len = 14 + 20 + 20 + n;

	assert_true(len <= sizeof(f));
	memset(f, 0, 54);
	memcpy(f, mac[!dir], 6);
	memcpy(f + 6, mac[dir], 6);
	f[12] = 0x08;
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	wn_wire_put_be16(ip + 2, (uint16_t)(20 + 20 + n));
	ip[8] = 64;
	ip[9] = 6;
	static const uint8_t addr[2][4] = {{198, 18, 0, 1}, {198, 18, 0, 2}};
	memcpy(ip + 12, addr[dir], 4);
	memcpy(ip + 16, addr[!dir], 4);
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += wn_wire_get_be16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	wn_wire_put_be16(ip + 10, (uint16_t)~sum);
	uint8_t *tcp = ip + 20;
	wn_wire_put_be16(tcp, dir ? 20049 : 40000);
	wn_wire_put_be16(tcp + 2, dir ? 40000 : 20049);
	wn_wire_put_be32(tcp + 4, pc->seq[dir]);
	wn_wire_put_be32(tcp + 8, (flags & 0x10) ? pc->seq[!dir] : 0);
	tcp[12] = 5 << 4;
	tcp[13] = flags;
	wn_wire_put_be16(tcp + 14, 65535);
	memcpy(tcp + 20, pl, n);
	pc->seq[dir] += (uint32_t)n + ((flags & 0x02) ? 1 : 0);

	uint8_t rec[16];
	put_le32(rec, pc->t++);
	put_le32(rec + 4, 0);
	put_le32(rec + 8, (uint32_t)len);
	put_le32(rec + 12, (uint32_t)len);
	assert_int_equal(fwrite(rec, 1, 16, pc->fp), 16);
	assert_int_equal(fwrite(f, 1, len, pc->fp), len);
}

/* The RDMA_MSG under test. */
static void
sample(struct wn_rpcrdma_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->xid = 0x5EED0001;
	h->vers = 1;
	h->credits = 17;
	h->proc = WN_RPCRDMA_MSG;
	h->nreads = 2;
	h->reads[0] = (struct wn_rpcrdma_read_seg){
		.position = 40,
		.seg = {.handle = 0x0A0B0C01, .length = 8192, .offset = 0x7F0000001000}};
	h->reads[1] = (struct wn_rpcrdma_read_seg){
		.position = 40,
		.seg = {.handle = 0x0A0B0C02, .length = 100, .offset = 0x7F0000003000}};
	h->nwrites = 1;
	h->writes[0].nsegs = 2;
	h->writes[0].segs[0] =
		(struct wn_rpcrdma_seg){.handle = 0x0B01, .length = 4096, .offset = 0x10000};
	h->writes[0].segs[1] =
		(struct wn_rpcrdma_seg){.handle = 0x0B02, .length = 512, .offset = 0x20000};
	h->has_reply = true;
	h->reply.nsegs = 1;
	h->reply.segs[0] =
		(struct wn_rpcrdma_seg){.handle = 0x0C01, .length = 1024, .offset = 0x30000};
}

static bool
write_capture(const char *path)
{
	struct pcap pc = {.seq = {1000, 5000}};
	uint8_t buf[1024], fpdu[1100];

	pc.fp = fopen(path, "wb");
	if (pc.fp == NULL)
		return false;
	uint8_t gh[24] = {0};
	put_le32(gh, 0xa1b2c3d4u);
	gh[4] = 2;
	gh[6] = 4;
	put_le32(gh + 16, 65535);
	put_le32(gh + 20, 1);
	assert_int_equal(fwrite(gh, 1, 24, pc.fp), 24);

	packet(&pc, 0, 0x02, NULL, 0); /* SYN */
	packet(&pc, 1, 0x12, NULL, 0); /* SYN, ACK */
	packet(&pc, 0, 0x10, NULL, 0); /* ACK */

	struct wn_mpa_frame fr = {.type = WN_MPA_FRAME_REQUEST, .crc = true, .rev = 1};
	int n = wn_wire_mpa_frame_encode(&fr, buf, sizeof(buf));
	assert_true(n > 0);
	packet(&pc, 0, 0x18, buf, (size_t)n);
	fr.type = WN_MPA_FRAME_REPLY;
	n = wn_wire_mpa_frame_encode(&fr, buf, sizeof(buf));
	assert_true(n > 0);
	packet(&pc, 1, 0x18, buf, (size_t)n);

	/* Send: DDP/RDMAP header, RPC-over-RDMA header, RPC call (NFSv3 NULL) */
	struct wn_rpcrdma_hdr h;
	sample(&h);
	int hl = wn_wire_rdmap_send_build(buf, sizeof(buf), WN_RDMAP_SEND, 0, 1, 0, true);
	assert_int_equal(hl, 18);
	int rl = wn_rpcrdma_encode(&h, buf + hl, sizeof(buf) - (size_t)hl);
	assert_true(rl > 0);
	static const uint32_t call[] = {0x5EED0001, 0, 2, 100003, 3, 0, 0, 0, 0, 0};
	uint8_t *c = buf + hl + rl;
	for (size_t i = 0; i < sizeof(call) / 4; i++)
		wn_wire_put_be32(c + 4 * i, call[i]);
	size_t ulen = (size_t)hl + (size_t)rl + sizeof(call);
	struct iovec iov = {.iov_base = buf, .iov_len = ulen};
	struct wn_mpa_stream st = {.seq_start = pc.seq[0], .markers = false, .crc = true};
	n = wn_wire_mpa_fpdu_build(fpdu, sizeof(fpdu), &iov, 1, pc.seq[0], &st);
	assert_true(n > 0);
	packet(&pc, 0, 0x18, fpdu, (size_t)n);
	packet(&pc, 1, 0x10, NULL, 0);
	return fclose(pc.fp) == 0;
}

static void
test_tshark_agrees(void **state)
{
	char path[] = "/tmp/wn_rpcrdma_XXXXXX.pcap";
	char cmd[1024], line[4096];
	(void)state;

	if (system("command -v tshark >/dev/null 2>&1") != 0)
		fail_msg("tshark not installed (scripts/setup.sh installs it)");
	int fd = mkstemps(path, 5);
	assert_true(fd >= 0);
	close(fd);
	assert_true(write_capture(path));

	snprintf(cmd, sizeof(cmd),
		 "tshark -r %s -Y rpcordma -T fields -E separator=@ -E aggregator=, "
		 "-e rpcordma.xid -e rpcordma.version -e rpcordma.flow_control "
		 "-e rpcordma.msg_type -e rpcordma.reads_count -e rpcordma.writes_count "
		 "-e rpcordma.reply_count -e rpcordma.position -e rpcordma.rdma_handle "
		 "-e rpcordma.rdma_length -e rpcordma.rdma_offset -e rpcordma.segment_count "
		 "-e iwarp_mpa.crc_check 2>/dev/null",
		 path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char *got = fgets(line, sizeof(line), p);
	int rc = pclose(p);
	if (getenv("WN_TSHARK_KEEP") != NULL)
		print_message("capture kept: %s\n", path);
	else
		unlink(path);
	assert_int_equal(rc, 0);
	assert_non_null(got);
	line[strcspn(line, "\n")] = '\0';
	print_message("tshark: %s\n", line);

	/* the same values, formatted as tshark prints them */
	struct wn_rpcrdma_hdr h;
	char want[2048];
	sample(&h);
	snprintf(want, sizeof(want),
		 "0x%08x@%u@%u@%u@%u@%u@%u@%u,%u@"
		 "0x%08x,0x%08x,0x%08x,0x%08x,0x%08x@"
		 "%u,%u,%u,%u,%u@"
		 "0x%016llx,0x%016llx,0x%016llx,0x%016llx,0x%016llx@%u,%u@",
		 h.xid, h.vers, h.credits, h.proc, h.nreads, h.nwrites, 1u, h.reads[0].position,
		 h.reads[1].position, h.reads[0].seg.handle, h.reads[1].seg.handle,
		 h.writes[0].segs[0].handle, h.writes[0].segs[1].handle, h.reply.segs[0].handle,
		 h.reads[0].seg.length, h.reads[1].seg.length, h.writes[0].segs[0].length,
		 h.writes[0].segs[1].length, h.reply.segs[0].length,
		 (unsigned long long)h.reads[0].seg.offset,
		 (unsigned long long)h.reads[1].seg.offset,
		 (unsigned long long)h.writes[0].segs[0].offset,
		 (unsigned long long)h.writes[0].segs[1].offset,
		 (unsigned long long)h.reply.segs[0].offset, h.writes[0].nsegs, h.reply.nsegs);
	/* (the last field, the FPDU CRC, is not compared: its value depends on the framing) */
	assert_true(strncmp(line, want, strlen(want)) == 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tshark_agrees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
