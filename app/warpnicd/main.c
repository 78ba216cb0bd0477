/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnicd: the warpnic dataplane process.
 *
 *   warpnicd [EAL options] -- [options]      (see wn_node_usage() / --help)
 *
 * Brings up EAL (with the EAL options of --config files' "eal" lines), then the daemon
 * library (lib/node, wn_node.h: the port, the control thread serving clients on a unix
 * socket, the shards on the worker lcores) and runs shard 0 on the main lcore until
 * SIGINT/SIGTERM. Once it serves it says so: to systemd (Type=notify: READY=1 on
 * $NOTIFY_SOCKET), to the command that started it with --daemon, and in --pidfile.
 * Exit status: 0 stopped by a signal, 1 failed, 2 a mistake in the options.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "wn_impair.h"
#include "wn_node.h"
#include "wn_port.h"

static void
on_signal(int sig)
{
	(void)sig;
	wn_node_quit();
}

/* Tell systemd @p state ("READY=1", ...) when it started us as Type=notify (sd_notify(3)). */
static void
notify_systemd(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	socklen_t len;
	int fd;

	if (path == NULL || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, strlen(path));
	if (path[0] == '@') /* an abstract socket */
		sa.sun_path[0] = '\0';
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	(void)sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	close(fd);
}

/*
 * --daemon: the command returns once the daemon serves. The parent waits on a pipe: a byte
 * means serving (exit 0), end of file means the child ended first (its exit status). Done
 * before the EAL, which does not survive a fork. @return in the child: the pipe's write
 * end; the parent does not return.
 */
static int
detach(void)
{
	int fds[2], status;
	char b;
	pid_t pid;

	if (pipe(fds) != 0) {
		perror("warpnicd: --daemon: pipe");
		exit(1);
	}
	pid = fork();
	if (pid < 0) {
		perror("warpnicd: --daemon: fork");
		exit(1);
	}
	if (pid == 0) {
		close(fds[0]);
		(void)setsid();
		return fds[1];
	}
	close(fds[1]);
	if (read(fds[0], &b, 1) == 1)
		exit(0);
	if (waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		exit(WEXITSTATUS(status));
	exit(1);
}

/* Serving: tell whoever waits for it. */
static void
ready(const struct wn_node_conf *p, int daemon_fd)
{
	FILE *f;

	if (p->pidfile != NULL) {
		f = fopen(p->pidfile, "w");
		if (f == NULL || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0)
			fprintf(stderr, "warpnicd: --pidfile %s: %s\n", p->pidfile, strerror(errno));
	}
	notify_systemd("READY=1");
	if (daemon_fd >= 0) {
		(void)write(daemon_fd, "R", 1);
		close(daemon_fd);
	}
}

int
main(int argc, char **argv)
{
	struct wn_node_conf p;
	int n, status = 1, daemon_fd = -1;
	char **eal_argv;
	bool daemon;

	for (n = 1; n < argc; n++) {
		if (strcmp(argv[n], "--help") == 0 || strcmp(argv[n], "-h") == 0) {
			bool after = false;

			for (int k = 1; k < n; k++)
				after |= strcmp(argv[k], "--") == 0;
			if (after || n == 1) {
				wn_node_usage(argv[0]);
				return 0;
			}
		}
	}
	argc = wn_node_eal_args(argc, argv, &eal_argv, &daemon);
	if (argc < 0) {
		fprintf(stderr, "warpnicd: EAL options: %s\n", strerror(-argc));
		return 2;
	}
	argv = eal_argv;
	if (daemon)
		daemon_fd = detach();
	wn_node_defaults(&p);
	p.wrap = &wn_impair_node_wrap; /* --impair, EAL --vdev net_wn_impair */
	argc = wn_impair_argv_extract(argc, argv);
	if (argc < 0) {
		fprintf(stderr, "warpnicd: too many --vdev net_wn_impair\n");
		return 2;
	}
	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "warpnicd: EAL init failed: %s (the EAL options come before --; "
			"see above)\n", rte_strerror(rte_errno));
		return rte_errno == EINVAL ? 2 : 1;
	}
	argv[n] = argv[0];
	if (wn_node_parse_args(&p, argc - n, argv + n) != 0) {
		rte_eal_cleanup();
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	/* shard 0 on this (main) lcore, one more per worker lcore */
	p.main_shard = true;
	if (wn_node_start(&p) == 0) {
		ready(&p, daemon_fd);
		status = wn_node_run_main() != 0;
		notify_systemd("STOPPING=1");
		wn_node_stop();
		if (p.pidfile != NULL)
			unlink(p.pidfile);
	}
	wn_node_conf_free(&p);
	wn_net_port_shutdown();
	return status;
}
