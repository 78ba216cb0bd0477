/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnicd's options (lib/node node_options.c): every option lands in its own field, and
 * nothing else changes. No EAL.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "wn_node.h"

/* What warpnicd's defaults were, to see that an option changed only its own field. */
static struct wn_node_conf defaults;

static void
parse(struct wn_node_conf *c, const char *opt, const char *val)
{
	char *argv[6] = { "warpnicd", "--ip", "198.18.0.1/24", (char *)opt, (char *)val, NULL };

	wn_node_defaults(c);
	assert_int_equal(wn_node_parse_args(c, val != NULL ? 5 : 4, argv), 0);
	/* the control socket's path is the first thing a stray store would hit */
	assert_string_equal(c->ctl_path, defaults.ctl_path);
}

static void
test_flags(void **state)
{
	struct wn_node_conf c;

	(void)state;
	parse(&c, "--markers", NULL);
	assert_true(c.dp.markers);
	assert_int_equal(c.dp.crc, defaults.dp.crc);
	parse(&c, "--no-crc", NULL);
	assert_false(c.dp.crc);
	assert_int_equal(c.dp.markers, defaults.dp.markers);
	parse(&c, "--no-p2p", NULL);
	assert_false(c.dp.p2p);
	parse(&c, "--no-offload", NULL);
	assert_false(c.offload);
	parse(&c, "--daemon", NULL);
	assert_true(c.daemon);
	wn_node_conf_free(&c);
}

static void
test_numbers(void **state)
{
	struct wn_node_conf c;

	(void)state;
	parse(&c, "--mtu", "9000");
	assert_int_equal(c.dp.mtu, 9000);
	parse(&c, "--mpa-rev", "1");
	assert_int_equal(c.dp.mpa_rev, 1);
	parse(&c, "--sockbuf", "65536");
	assert_int_equal(c.dp.sockbuf, 65536);
	assert_int_equal(c.dp.tx_budget, defaults.dp.tx_budget);
	parse(&c, "--tx-budget", "0");
	assert_int_equal(c.dp.tx_budget, 0);
	assert_int_equal(c.dp.sockbuf, defaults.dp.sockbuf);
	assert_int_equal(c.dp.mtu, defaults.dp.mtu);
	wn_node_conf_free(&c);
}

static void
test_by_name(void **state)
{
	struct wn_node_conf c;

	(void)state;
	wn_node_defaults(&c);
	assert_int_equal(wn_node_option(&c, "markers", NULL), 0);
	assert_true(c.dp.markers);
	assert_int_equal(wn_node_option(&c, "no-crc", NULL), 0);
	assert_false(c.dp.crc);
	assert_int_equal(wn_node_option(&c, "markers", "yes"), -EINVAL); /* a flag takes none */
	assert_int_equal(wn_node_option(&c, "mtu", NULL), -EINVAL);
	assert_int_equal(wn_node_option(&c, "no-such", NULL), -ENOENT);
	assert_string_equal(c.ctl_path, defaults.ctl_path);
	wn_node_conf_free(&c);
}

/* A config file whose "eal" lines give @p words words, as /proc/self/fd/N in @p path. */
static int
eal_config(int words, char *path, size_t len)
{
	int fd = memfd_create("eal_words", MFD_CLOEXEC);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(dup(fd), "w");
	assert_non_null(f);
	for (int i = 0; i < words; i++)
		fprintf(f, "%s--w%d%s", i % 8 == 0 ? "eal " : "", i, i % 8 == 7 ? "\n" : " ");
	fputc('\n', f);
	fclose(f);
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* The config files' EAL words and a long command line fit in the array, whatever their
 * sum; one word past the limit is a clear E2BIG, not a write past the end. */
static void
test_eal_words_limit(void **state)
{
	char path[64], **eal;
	char *argv[] = { "warpnicd", "-l", "0", "--vdev", "net_null0", "--no-huge", "--",
			 "--config", path, "--ip", "198.18.0.1/24", NULL };
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
	bool daemon;
	int fd, n;

	(void)state;
	fd = eal_config(256, path, sizeof(path));
	n = wn_node_eal_args(argc, argv, &eal, &daemon);
	assert_int_equal(n, 256 + argc);
	assert_string_equal(eal[1], "--w0");
	assert_string_equal(eal[256], "--w255");
	assert_ptr_equal(eal[257], argv[1]);
	assert_ptr_equal(eal[n - 1], argv[argc - 1]);
	assert_null(eal[n]);
	wn_node_eal_args_free(eal, n, argc);
	close(fd);

	fd = eal_config(257, path, sizeof(path));
	assert_int_equal(wn_node_eal_args(argc, argv, &eal, &daemon), -E2BIG);
	close(fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_by_name),
		cmocka_unit_test(test_eal_words_limit),
	};

	wn_node_defaults(&defaults);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
