/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * wn-conn-rate: kernel TCP's connection set-up and teardown with N connections at once, the
 * baseline of rdma-core's cmtime (which opens N rdma_cm connections at once, then tears them
 * down) on the same machine. Two processes over loopback (each holds N descriptors): the
 * acceptor listens and accepts; the connector creates N non-blocking sockets, connects them
 * all, then closes them all. Steps, as cmtime times its own:
 *   create    N socket() calls
 *   connect   first connect() until every socket is connected and every connection
 *             accepted (the acceptor's accept() of the last one)
 *   close     first close() until the acceptor has seen every EOF and closed its end
 * and each connection's connect() to writable (min / median / max).
 *
 *   wn-conn-rate -c N [-a ADDR] [-p PORT] [--json]
 *
 * Exit status 0 when all N connected, were accepted and closed; 1 otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EVENTS 256

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
die(const char *what)
{
	fprintf(stderr, "wn-conn-rate: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Two time stamps the acceptor reports: all accepted, all closed. */
struct report {
	uint64_t accepted_ns, closed_ns;
	uint32_t accepted, closed;
};

static void
write_all(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		die("pipe");
}

static void
read_all(int fd, void *p, size_t n)
{
	if (read(fd, p, n) != (ssize_t)n)
		die("pipe");
}

static void
raise_nofile(uint32_t n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return;
	if (rl.rlim_cur < n + 64) {
		rl.rlim_cur = rl.rlim_max < n + 64 ? rl.rlim_max : n + 64;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* The acceptor: listen, tell the connector, accept N, report, then close each at its EOF. */
static void
acceptor(const struct sockaddr_in *sa, uint32_t n, int up)
{
	struct epoll_event evs[EVENTS], ev = {.events = EPOLLIN};
	struct report r = {0};
	int one = 1, lfd, ep, i, k;
	char c = 'r', b[64];

	raise_nofile(n);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (lfd < 0)
		die("socket");
	(void)setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (const struct sockaddr *)sa, sizeof(*sa)) != 0 || listen(lfd, (int)n) != 0)
		die("listen");
	ep = epoll_create1(0);
	ev.data.fd = lfd;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) != 0)
		die("epoll");
	write_all(up, &c, 1);
	while (r.closed < n) {
		k = epoll_wait(ep, evs, EVENTS, 60000);
		if (k <= 0)
			break;
		for (i = 0; i < k; i++) {
			int fd = evs[i].data.fd;

			if (fd == lfd) {
				int a;

				while ((a = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					ev.data.fd = a;
					if (epoll_ctl(ep, EPOLL_CTL_ADD, a, &ev) != 0)
						die("epoll");
					if (++r.accepted == n) {
						r.accepted_ns = now_ns();
						write_all(up, &r, sizeof(r));
					}
				}
				continue;
			}
			/* EOF: the connector closed; close our end */
			if (read(fd, b, sizeof(b)) == 0) {
				close(fd);
				if (++r.closed == n)
					r.closed_ns = now_ns();
			}
		}
	}
	if (r.accepted < n)
		write_all(up, &r, sizeof(r));
	write_all(up, &r, sizeof(r));
	exit(r.closed == n ? 0 : 1);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct epoll_event *evs, ev = {.events = EPOLLOUT};
	uint64_t t0, t1, t2, t3, *lat, *start;
	const char *addr = "127.0.0.1";
	uint32_t n = 1000, port = 7472, connected = 0, i;
	struct report r;
	int opt, up[2], ep, *fds, st;
	bool json = false;
	pid_t pid;
	char c;

	while ((opt = getopt_long(argc, argv, "c:a:p:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'c': n = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'a': addr = optarg; break;
		case 'p': port = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'j': json = true; break;
		default:
			fprintf(stderr, "usage: wn-conn-rate -c N [-a ADDR] [-p PORT] [--json]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	if (n == 0 || inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "wn-conn-rate: bad -c or -a\n");
		return 2;
	}
	sa.sin_port = htons((uint16_t)port);
	if (pipe(up) != 0)
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(up[0]);
		acceptor(&sa, n, up[1]);
	}
	close(up[1]);
	raise_nofile(n);
	read_all(up[0], &c, 1);
	fds = calloc(n, sizeof(*fds));
	lat = calloc(n, sizeof(*lat));
	start = calloc(n, sizeof(*start));
	evs = calloc(EVENTS, sizeof(*evs));
	ep = epoll_create1(0);
	if (fds == NULL || lat == NULL || start == NULL || evs == NULL || ep < 0)
		die("memory");

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (fds[i] < 0)
			die("socket");
	}
	t1 = now_ns();
	for (i = 0; i < n; i++) {
		start[i] = now_ns();
		if (connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS)
			die("connect");
		ev.data.u32 = i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev) != 0)
			die("epoll");
	}
	while (connected < n) {
		int k = epoll_wait(ep, evs, EVENTS, 60000);

		if (k <= 0)
			break;
		for (int j = 0; j < k; j++) {
			uint32_t x = evs[j].data.u32;
			int err = 0;
			socklen_t l = sizeof(err);

			(void)getsockopt(fds[x], SOL_SOCKET, SO_ERROR, &err, &l);
			if (err != 0) {
				errno = err;
				die("connect");
			}
			lat[x] = now_ns() - start[x];
			(void)epoll_ctl(ep, EPOLL_CTL_DEL, fds[x], NULL);
			connected++;
		}
	}
	read_all(up[0], &r, sizeof(r));
	t2 = now_ns();
	if (r.accepted_ns > t2)
		t2 = r.accepted_ns;
	if (connected < n || r.accepted < n) {
		fprintf(stderr, "wn-conn-rate: %u of %u connected, %u accepted\n", connected, n,
			r.accepted);
		kill(pid, SIGKILL);
		return 1;
	}
	t3 = now_ns();
	for (i = 0; i < n; i++)
		close(fds[i]);
	read_all(up[0], &r, sizeof(r));
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
	    r.closed < n) {
		fprintf(stderr, "wn-conn-rate: the acceptor closed %u of %u\n", r.closed, n);
		return 1;
	}
	qsort(lat, n, sizeof(*lat), cmp_u64);
	{
		double create_ms = (double)(t1 - t0) / 1e6, conn_ms = (double)(t2 - t1) / 1e6;
		double close_ms = (double)(r.closed_ns - t3) / 1e6;
		double setup_s = (double)(t2 - t0) / 1e9;

		if (json) {
			printf("{\"conns\": %u, \"create_ms\": %.3f, \"connect_ms\": %.3f, "
			       "\"close_ms\": %.3f, \"setup_per_s\": %.1f, \"teardown_per_s\": %.1f, "
			       "\"connect_us_min\": %.1f, \"connect_us_p50\": %.1f, "
			       "\"connect_us_max\": %.1f}\n", n, create_ms, conn_ms, close_ms,
			       n / setup_s, n / (close_ms / 1e3), (double)lat[0] / 1e3,
			       (double)lat[n / 2] / 1e3, (double)lat[n - 1] / 1e3);
		} else {
			printf("kernel TCP, %u connections at once over %s\n", n, addr);
			printf("step      total ms   us / conn\n");
			printf("create  %10.2f %11.2f\n", create_ms, create_ms * 1e3 / n);
			printf("connect %10.2f %11.2f   (each: min %.1f, median %.1f, max %.1f us)\n",
			       conn_ms, conn_ms * 1e3 / n, (double)lat[0] / 1e3,
			       (double)lat[n / 2] / 1e3, (double)lat[n - 1] / 1e3);
			printf("close   %10.2f %11.2f\n", close_ms, close_ms * 1e3 / n);
			printf("set-up %.0f/s, teardown %.0f/s\n", n / setup_s, n / (close_ms / 1e3));
		}
	}
	return 0;
}
