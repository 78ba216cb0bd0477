/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program built outside the tree against the installed headers and libraries (pkg-config
 * warpnic-client warpnic-rpcrdma):  use_installed [CTL]
 * Without CTL: opening a socket that does not exist fails with ENOENT. With CTL: it opens
 * the device a running warpnicd serves there and prints its name. Both: the RPC-over-RDMA
 * defaults (port 20049). Exit status 0 when all of that holds.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <wn_client.h>
#include <wn_rpcrdma_xprt.h>

int
main(int argc, char **argv)
{
	struct wn_rpcrdma_opts o;
	struct wn_client *c;

	wn_rpcrdma_opts_default(&o);
	if (o.port != WN_RPCRDMA_PORT) {
		fprintf(stderr, "use_installed: rpcrdma default port %u\n", o.port);
		return 1;
	}
	if (argc < 2) {
		c = wn_client_open("/nonexistent/warpnic/none.sock");
		if (c != NULL || errno != ENOENT) {
			fprintf(stderr, "use_installed: open of a missing socket: %s\n",
				c != NULL ? "succeeded" : strerror(errno));
			return 1;
		}
		printf("no daemon: ENOENT\n");
		return 0;
	}
	c = wn_client_open(argv[1]);
	if (c == NULL) {
		fprintf(stderr, "use_installed: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	printf("device %s\n", wn_client_dev_name(c));
	wn_client_close(c);
	return 0;
}
