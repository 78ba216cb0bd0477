/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for warpnicd's option and config-file parser (lib/node's node_options.c:
 * wn_node_option(), "config FILE"), which warpnicd and warpnic-perf's embedded dataplane
 * share. The input is the config file (it may name itself with "config", up to the nesting
 * limit), and its "eal" lines as warpnicd reads them before the EAL (wn_node_eal_args()).
 * Invariants checked on success: addresses within bounds and mirrored to the control
 * server, MTU and MPA settings in range, names NUL-terminated; no leak on any input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wn_node.h"
#include "wn_mpa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wn_node_conf c;
	char path[64];
	int fd = memfd_create("fuzz_dpapp_config", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	wn_node_defaults(&c);
	if (wn_node_option(&c, "config", path) == 0) {
		if (c.dp.n_addrs != c.ctl.n_addrs || c.dp.n_addrs > WN_NETIF_MAX_ADDRS ||
		    c.ctl.n_addrs > WN_SERVER_MAX_ADDRS)
			abort();
		for (uint32_t i = 0; i < c.dp.n_addrs; i++)
			if (c.dp.prefix[i] > (c.dp.addrs[i].family == WN_AF_INET ? 32 : 128))
				abort();
		if (c.dp.mtu < 576 || c.dp.mtu > 9000 || c.ctl.mtu != c.dp.mtu)
			abort();
		if (c.dp.mpa_rev < 1 || c.dp.mpa_rev > 2 || (c.dp.rtr & ~WN_MPA_RTR_ALL) != 0)
			abort();
		if (memchr(c.ctl_path, '\0', sizeof(c.ctl_path)) == NULL ||
		    memchr(c.dev_name, '\0', sizeof(c.dev_name)) == NULL)
			abort();
		if (c.mbufs < 1023 || c.dp.sockbuf < 16384 || c.dp.max_conns < 1)
			abort();
		if (c.netdev != NULL && (strlen(c.netdev) == 0 || strlen(c.netdev) >= 16))
			abort();
		if (c.ctl.sock_mode > 0777)
			abort();
	}
	wn_node_conf_free(&c);
	/* the same file's "eal" lines, read before the EAL: the command line's own after them */
	{
		char *argv[] = {"warpnicd", "-l", "0", "--", "--config", path, NULL};
		char **eal;
		bool daemon;
		int n = wn_node_eal_args(6, argv, &eal, &daemon);

		if (n >= 0) {
			if (n < 6 || eal[n] != NULL || eal[0] != argv[0] || eal[n - 1] != argv[5] ||
			    daemon)
				abort();
			for (int i = 1; i < n - 5; i++)
				if (eal[i] == NULL || eal[i][0] == '\0')
					abort();
			wn_node_eal_args_free(eal, n, 6);
		}
	}
	close(fd);
	return 0;
}
