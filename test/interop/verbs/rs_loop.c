/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsockets through the warpnic shims, both ends in this process (warpnicd loops the
 * connection back): nonblocking rconnect (EINPROGRESS, rpoll POLLOUT, SO_ERROR 0), rpoll
 * on a listener, raccept, names, a writer held back by a reader that does not read (EAGAIN
 * once the reader's buffer is full, nothing lost), 8 MiB each way checked octet by octet
 * through rsend/rrecv/rwritev/rreadv/MSG_PEEK, riomap + riowrite (RDMA_IOMAPSIZE inherited
 * from the listener, a write cut short at the end of the region), rshutdown -> end of
 * stream (0), rselect, and the errors: datagram sockets, a bad fd, rconnect to nobody.
 *   rs_loop IP [PORT]   exit status 0 = pass; the failing check is printed otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <rdma/rsocket.h>

#define CHECK(c)                                                                   \
	do {                                                                       \
		if (!(c)) {                                                        \
			fprintf(stderr, "rs_loop: check failed line %d: %s (errno %d)\n", \
				__LINE__, #c, errno);                              \
			exit(1);                                                   \
		}                                                                  \
	} while (0)

#define XFER (8u << 20)

static uint8_t
pattern(size_t i, unsigned int seed)
{
	return (uint8_t)((i * 131u + seed) ^ (i >> 11));
}

static int
wait_for_at(int fd, short ev, int line)
{
	struct pollfd p = {.fd = fd, .events = ev};

	if (rpoll(&p, 1, 10000) != 1) {
		fprintf(stderr, "rs_loop: line %d: fd %d not ready for %#x in 10 s\n", line, fd, ev);
		exit(1);
	}
	return p.revents;
}
#define wait_for(fd, ev) wait_for_at(fd, ev, __LINE__)

/* One short message on a nonblocking socket: wait for room (the peer's credit) if needed. */
static void
snd_at(int fd, const char *m, int line)
{
	ssize_t n;

	while ((n = rsend(fd, m, strlen(m), 0)) < 0 && errno == EAGAIN)
		wait_for_at(fd, POLLOUT, line);
	if (n != (ssize_t)strlen(m)) {
		fprintf(stderr, "rs_loop: line %d: rsend %zd (errno %d)\n", line, n, errno);
		exit(1);
	}
}
#define snd(fd, m) snd_at(fd, m, __LINE__)

/*
 * Move XFER octets from w to r, both nonblocking, reading only after the writer stalls:
 * the writer must stop (EAGAIN) with the reader's buffer full, then all arrive in order.
 */
static void
stream(int w, int r, unsigned int seed)
{
	static uint8_t out[65536], in[65536];
	size_t sent = 0, got = 0, stalls = 0, i;
	struct iovec v[2];
	ssize_t n;

	while (got < XFER) {
		while (sent < XFER) {
			size_t k = XFER - sent < sizeof(out) ? XFER - sent : sizeof(out);

			for (i = 0; i < k; i++)
				out[i] = pattern(sent + i, seed);
			/* two iovecs: rwritev gathers them */
			v[0] = (struct iovec){.iov_base = out, .iov_len = k / 3};
			v[1] = (struct iovec){.iov_base = out + k / 3, .iov_len = k - k / 3};
			n = rwritev(w, v, 2);
			if (n < 0) {
				CHECK(errno == EAGAIN);
				stalls++;
				break;
			}
			CHECK(n > 0);
			sent += (size_t)n;
		}
		/* the writer outran the reader by at most its buffers: nothing was dropped */
		CHECK(sent - got <= (4u << 20));
		n = rrecv(r, in, 1, MSG_PEEK);
		if (n < 0) {
			CHECK(errno == EAGAIN);
			/* all read: the writer waits for the reader's credit, then writes on */
			wait_for(sent > got ? r : w, sent > got ? POLLIN : POLLOUT);
			continue;
		}
		CHECK(n == 1 && in[0] == pattern(got, seed));
		v[0] = (struct iovec){.iov_base = in, .iov_len = 100};
		v[1] = (struct iovec){.iov_base = in + 100, .iov_len = sizeof(in) - 100};
		n = rreadv(r, v, 2);
		CHECK(n > 0);
		for (i = 0; i < (size_t)n; i++)
			CHECK(in[i] == pattern(got + i, seed));
		got += (size_t)n;
	}
	CHECK(stalls > 0); /* the reader's slots filled up at least once */
}

int
main(int argc, char **argv)
{
	const char *ip = argc > 1 ? argv[1] : "198.18.0.1";
	struct sockaddr_in sa, peer, me;
	socklen_t len;
	int l, c, s, err, val;
	static uint8_t region[65536], src[65536];
	uint8_t b[16], tail[16];
	struct pollfd p[2];
	fd_set rd;
	struct timeval tv = {5, 0};
	off_t off;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons(argc > 2 ? (uint16_t)atoi(argv[2]) : 7471);
	CHECK(inet_pton(AF_INET, ip, &sa.sin_addr) == 1);

	/* what an iWARP device cannot do, and bad arguments */
	CHECK(rsocket(AF_INET, SOCK_DGRAM, 0) == -1 && errno == ENOTSUP);
	CHECK(rsend(12345, b, 1, 0) == -1 && errno == EBADF);

	l = rsocket(AF_INET, SOCK_STREAM, 0);
	CHECK(l >= 0);
	val = 1;
	CHECK(rsetsockopt(l, SOL_SOCKET, SO_REUSEADDR, &val, sizeof(val)) == 0);
	/* one entry in each side's iomap table (the accepted socket inherits it) */
	CHECK(rsetsockopt(l, SOL_RDMA, RDMA_IOMAPSIZE, &val, sizeof(val)) == 0);
	CHECK(rbind(l, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK(rlisten(l, 4) == 0);
	CHECK(rfcntl(l, F_SETFL, O_NONBLOCK) == 0);
	CHECK(raccept(l, NULL, NULL) == -1 && errno == EAGAIN);

	/* the client's receive buffer: 256 KiB (SO_RCVBUF doubled); the server's the default */
	c = rsocket(AF_INET, SOCK_STREAM, 0);
	CHECK(c >= 0);
	val = 1 << 17;
	CHECK(rsetsockopt(c, SOL_SOCKET, SO_RCVBUF, &val, sizeof(val)) == 0);
	val = 1;
	CHECK(rsetsockopt(c, SOL_RDMA, RDMA_IOMAPSIZE, &val, sizeof(val)) == 0);
	CHECK(rfcntl(c, F_SETFL, O_NONBLOCK) == 0);
	CHECK(rfcntl(c, F_GETFL) & O_NONBLOCK);
	CHECK(rconnect(c, (struct sockaddr *)&sa, sizeof(sa)) == -1 && errno == EINPROGRESS);
	CHECK(wait_for(l, POLLIN) == POLLIN);
	len = sizeof(peer);
	s = raccept(l, (struct sockaddr *)&peer, &len);
	CHECK(s >= 0 && len == sizeof(peer) && peer.sin_family == AF_INET);
	CHECK(rfcntl(s, F_SETFL, O_NONBLOCK) == 0);
	CHECK(wait_for(c, POLLOUT) & POLLOUT);
	len = sizeof(err);
	CHECK(rgetsockopt(c, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0);
	len = sizeof(me);
	CHECK(rgetsockname(c, (struct sockaddr *)&me, &len) == 0);
	CHECK(me.sin_port == peer.sin_port && me.sin_addr.s_addr == peer.sin_addr.s_addr);
	len = sizeof(peer);
	CHECK(rgetpeername(c, (struct sockaddr *)&peer, &len) == 0);
	CHECK(peer.sin_port == sa.sin_port && peer.sin_addr.s_addr == sa.sin_addr.s_addr);

	/* nothing to read yet: EAGAIN, rpoll times out, rselect says not readable */
	CHECK(rrecv(s, b, 1, 0) == -1 && errno == EAGAIN);
	p[0] = (struct pollfd){.fd = s, .events = POLLIN};
	p[1] = (struct pollfd){.fd = c, .events = POLLIN};
	CHECK(rpoll(p, 2, 50) == 0);

	stream(c, s, 1); /* client to server (the server's 128 KiB buffer) */
	stream(s, c, 2); /* server to client (256 KiB) */

	/* riomap on the server, riowrite from the client, a Send behind it as the signal */
	memset(region, 0, sizeof(region));
	off = riomap(s, region, sizeof(region), PROT_WRITE, 0, 0);
	CHECK(off == 0);
	/* the server's table has its one entry; the client's offset -1 is its address */
	CHECK(riomap(s, src, sizeof(src), PROT_WRITE, 0, 0) == -1 && errno == ENOMEM);
	CHECK(riomap(c, src, sizeof(src), PROT_WRITE, 0, -1) == (off_t)(uintptr_t)src);
	CHECK(riounmap(c, src, sizeof(src)) == 0);
	snd(s, "m"); /* the IOMAP went before it */
	wait_for(c, POLLIN);
	CHECK(rrecv(c, b, 1, 0) == 1 && b[0] == 'm');
	for (i = 0; i < sizeof(src); i++)
		src[i] = pattern(i, 3);
	CHECK(riowrite(c, src, sizeof(src) - 100, 100, 0) == sizeof(src) - 100);
	/* no region there; then one that runs past the end: cut at the end */
	CHECK(riowrite(c, src, 200, sizeof(region), 0) == (size_t)-1 && errno == EINVAL);
	memset(tail, 0xa5, sizeof(tail));
	CHECK(riowrite(c, tail, sizeof(tail), sizeof(region) - 10, 0) == 10);
	snd(c, "w");
	FD_ZERO(&rd);
	FD_SET(s, &rd);
	CHECK(rselect(s + 1, &rd, NULL, NULL, &tv) == 1 && FD_ISSET(s, &rd));
	CHECK(rrecv(s, b, 1, 0) == 1 && b[0] == 'w');
	for (i = 0; i < 100; i++)
		CHECK(region[i] == 0);
	CHECK(memcmp(region + 100, src, sizeof(src) - 110) == 0);
	CHECK(memcmp(region + sizeof(region) - 10, tail, 10) == 0);
	CHECK(riounmap(s, region, sizeof(region)) == 0);

	/* shutdown: the reader sees the end of the stream after the data, the writer EPIPE */
	snd(c, "last");
	CHECK(rshutdown(c, SHUT_WR) == 0);
	CHECK(rsend(c, "x", 1, 0) == -1 && errno == EPIPE);
	CHECK(rfcntl(s, F_SETFL, 0) == 0); /* blocking */
	CHECK(rrecv(s, b, sizeof(b), MSG_WAITALL) == 4 && memcmp(b, "last", 4) == 0);
	CHECK(rrecv(s, b, sizeof(b), 0) == 0);
	CHECK(rsend(s, "bye", 3, 0) == 3); /* the other direction still works */
	wait_for(c, POLLIN);
	CHECK(rrecv(c, b, sizeof(b), 0) == 3 && memcmp(b, "bye", 3) == 0);
	CHECK(rclose(s) == 0);
	CHECK(rfcntl(c, F_SETFL, 0) == 0);
	CHECK(rrecv(c, b, sizeof(b), 0) == 0); /* the server closed */
	CHECK(rclose(c) == 0);
	CHECK(rclose(l) == 0);

	/* nobody listens there */
	c = rsocket(AF_INET, SOCK_STREAM, 0);
	CHECK(c >= 0);
	sa.sin_port = htons(ntohs(sa.sin_port) + 1);
	CHECK(rconnect(c, (struct sockaddr *)&sa, sizeof(sa)) == -1 && errno == ECONNREFUSED);
	CHECK(rclose(c) == 0);
	printf("rs_loop: ok\n");
	return 0;
}
