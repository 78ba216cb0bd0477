/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control socket of lib/server as a second daemon, a crashed daemon and an operator see
 * it: a live socket is never taken over (EADDRINUSE, and its owner's pid is reported), a
 * socket file nobody listens on is replaced, another kind of file is left alone, the mode
 * and group are what the configuration says, and missing directories are created.
 */
#include <errno.h>
#include <grp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "wn_client.h"
#include "wn_server.h"

static char dir[48];

static void
path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static struct wn_server *
server_on(const char *path, uint32_t mode, const char *group)
{
	struct wn_server_conf conf;

	memset(&conf, 0, sizeof(conf));
	conf.path = path;
	conf.dev_name = "wnsock0";
	conf.sock_mode = mode;
	conf.sock_group = group;
	return wn_server_create(&conf);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/wn-test-sock-%d", (int)getpid());
	return mkdir(dir, 0700);
}

static int
teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* A second server on a live socket fails with EADDRINUSE; the first keeps its clients. */
static void
test_live_socket_kept(void **state)
{
	struct wn_server *a, *b;
	struct wn_client *c;
	char path[128];

	(void)state;
	path_in(path, sizeof(path), "live.sock");
	a = server_on(path, 0, NULL);
	assert_non_null(a);
	assert_int_equal(wn_server_start(a), 0);
	assert_int_equal(wn_server_sock_owner(path), getpid());
	b = server_on(path, 0, NULL);
	assert_null(b);
	assert_int_equal(errno, EADDRINUSE);
	c = wn_client_open(path);
	assert_non_null(c);
	assert_string_equal(wn_client_dev_name(c), "wnsock0");
	wn_client_close(c);
	wn_server_destroy(a);
	/* and the first one's exit removes its socket */
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(wn_server_sock_owner(path), 0);
}

/* A socket file whose daemon died without removing it is replaced. */
static void
test_stale_socket_replaced(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct wn_server *a;
	struct wn_client *c;
	char path[sizeof(sa.sun_path)];
	int fd;

	(void)state;
	path_in(path, sizeof(path), "stale.sock");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd); /* bound, never listened: what a killed daemon leaves */
	assert_int_equal(wn_server_sock_owner(path), 0);
	a = server_on(path, 0, NULL);
	assert_non_null(a);
	assert_int_equal(wn_server_start(a), 0);
	c = wn_client_open(path);
	assert_non_null(c);
	wn_client_close(c);
	wn_server_destroy(a);
}

/* A file that is not a socket is never removed. */
static void
test_other_file_left_alone(void **state)
{
	char path[128];
	FILE *f;

	(void)state;
	path_in(path, sizeof(path), "not-a-socket");
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(wn_server_sock_owner(path), -ENOTSOCK);
	assert_null(server_on(path, 0, NULL));
	assert_int_equal(errno, ENOTSOCK);
	assert_int_equal(access(path, F_OK), 0);
}

/* Mode 0660 by default, or as configured; the group by name; an unknown group fails. */
static void
test_mode_and_group(void **state)
{
	struct wn_server *a;
	struct group *g;
	struct stat st;
	char path[128];

	(void)state;
	path_in(path, sizeof(path), "mode.sock");
	a = server_on(path, 0, NULL);
	assert_non_null(a);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0660);
	wn_server_destroy(a);

	g = getgrgid(getgid());
	assert_non_null(g);
	a = server_on(path, 0600, g->gr_name);
	assert_non_null(a);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_gid, getgid());
	wn_server_destroy(a);

	assert_null(server_on(path, 0, "wn-no-such-group"));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(access(path, F_OK), -1);
}

/* The directories above the socket are made (the usual /run/warpnic). */
static void
test_parents_created(void **state)
{
	struct wn_server *a;
	struct stat st;
	char path[128], sub[128];

	(void)state;
	path_in(path, sizeof(path), "run/warpnic/x.sock");
	a = server_on(path, 0, NULL);
	assert_non_null(a);
	path_in(sub, sizeof(sub), "run/warpnic");
	assert_int_equal(stat(sub, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0755);
	wn_server_destroy(a);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_socket_kept),
		cmocka_unit_test(test_stale_socket_replaced),
		cmocka_unit_test(test_other_file_left_alone),
		cmocka_unit_test(test_mode_and_group),
		cmocka_unit_test(test_parents_created),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
