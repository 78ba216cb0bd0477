/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnicd: the warpnic dataplane process.
 *
 *   warpnicd [EAL options] -- [options]      (see wn_node_usage() / --help)
 *
 * Brings up EAL, then the daemon library (lib/node, wn_node.h: the port, the control thread
 * serving clients on a unix socket, the shards on the worker lcores) and runs shard 0 on the
 * main lcore until SIGINT/SIGTERM.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "wn_node.h"
#include "wn_impair.h"
#include "wn_port.h"

static void
on_signal(int sig)
{
	(void)sig;
	wn_node_quit();
}

int
main(int argc, char **argv)
{
	struct wn_node_conf p;
	int n, status = 1;

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
	wn_node_defaults(&p);
	p.wrap = &wn_impair_node_wrap; /* --impair, EAL --vdev net_wn_impair */
	argc = wn_impair_argv_extract(argc, argv);
	if (argc < 0) {
		fprintf(stderr, "warpnicd: too many --vdev net_wn_impair\n");
		return 2;
	}
	n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "warpnicd: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
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
		status = wn_node_run_main() != 0;
		wn_node_stop();
	}
	wn_node_conf_free(&p);
	wn_port_shutdown();
	return status;
}
