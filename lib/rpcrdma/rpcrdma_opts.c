/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport options by name, for the programs' command lines (wn_rpcrdma_opts_set()).
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_rpcrdma.h"
#include "wn_rpcrdma_xprt.h"

const char wn_rpcrdma_opts_help[] =
	"  --port N            rdma_cm port (20049)\n"
	"  --credits N         client: credits requested; server: most granted (32 / 64)\n"
	"  --inline N          inline threshold both ways, octets (1024; Linux uses 4096)\n"
	"  --inline-send N     largest Send this side posts\n"
	"  --inline-recv N     size of this side's receive buffers\n"
	"  --max-msg N         largest chunk or long message (1M+64k)\n"
	"  --ddp-min N         smallest opaque body moved by a chunk (1024)\n"
	"  --timeout-ms N      call timeout (30000)\n"
	"  --pool-mb N         registered pool size (default from credits and max-msg)\n"
	"  --reg MODE          chunk registration: auto, mw (memory windows), pool\n"
	"  --busy-poll-us N    poll completions this long before sleeping (0)\n"
	"  --settle-ms N       client: wait after connecting before the first call (0; 100\n"
	"                      for a Linux siw server, which can miss an early first FPDU)\n"
	"  --no-cp             send no RFC 8797 private data\n"
	"  --no-remote-inv     no Send With Invalidate\n"
	"  --no-read-reply     server: no RFC 5666 long replies by read chunk\n";

enum kind { K_U32, K_U16, K_SIZE, K_REG, K_FLAG };

struct opt {
	const char *name;
	enum kind kind;
	size_t off;
	uint64_t min, max;
};

#define OFF(f) offsetof(struct wn_rpcrdma_opts, f)

static const struct opt opts[] = {
	{"port", K_U16, OFF(port), 1, 65535},
	{"credits", K_U32, OFF(credits), 1, 1024},
	{"inline", K_U32, 0, 256, WN_RPCRDMA_CP_SIZE_MAX},
	{"inline-send", K_U32, OFF(inline_send), 256, WN_RPCRDMA_CP_SIZE_MAX},
	{"inline-recv", K_U32, OFF(inline_recv), 256, WN_RPCRDMA_CP_SIZE_MAX},
	{"max-msg", K_U32, OFF(max_msg), 4096, 1u << 30},
	{"ddp-min", K_U32, OFF(ddp_min), 1, 1u << 30},
	{"timeout-ms", K_U32, OFF(timeout_ms), 1, 3600000},
	{"pool-mb", K_SIZE, OFF(pool_size), 1, 65536},
	{"reg", K_REG, OFF(reg), 0, 0},
	{"busy-poll-us", K_U32, OFF(busy_poll_us), 0, 10000000},
	{"settle-ms", K_U32, OFF(settle_ms), 0, 10000},
	{"no-cp", K_FLAG, OFF(no_private_data), 0, 0},
	{"no-remote-inv", K_FLAG, OFF(no_remote_inv), 0, 0},
	{"no-read-reply", K_FLAG, OFF(no_read_reply), 0, 0},
};

static const struct opt *
find(const char *name)
{
	if (name == NULL)
		return NULL;
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (strcmp(opts[i].name, name) == 0)
			return &opts[i];
	return NULL;
}

int
wn_rpcrdma_opts_has_value(const char *name)
{
	const struct opt *d = find(name);

	return d == NULL ? -1 : d->kind != K_FLAG;
}

int
wn_rpcrdma_opts_long(struct option *out, size_t cap, const struct option *app, int val)
{
	size_t n = 0, k = sizeof(opts) / sizeof(opts[0]);

	while (app != NULL && app[n].name != NULL)
		n++;
	if (cap < n + k + 1)
		return -ENOSPC;
	memcpy(out, app, n * sizeof(*out));
	for (size_t i = 0; i < k; i++)
		out[n + i] = (struct option){.name = opts[i].name,
					     .has_arg = opts[i].kind == K_FLAG ? no_argument
									       : required_argument,
					     .flag = NULL,
					     .val = val};
	memset(&out[n + k], 0, sizeof(out[n + k]));
	return (int)(n + k);
}

int
wn_rpcrdma_parse_size(const char *s, uint64_t *v)
{
	unsigned long long n;
	unsigned int shift = 0;
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno != 0)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case '\0':
		break;
	default:
		return -EINVAL;
	}
	if (shift != 0 && *++end != '\0')
		return -EINVAL;
	if (n > (UINT64_MAX >> shift))
		return -EINVAL;
	*v = (uint64_t)n << shift;
	return 0;
}

int
wn_rpcrdma_opts_set(struct wn_rpcrdma_opts *o, const char *name, const char *value)
{
	const struct opt *d = find(name);
	uint8_t *base = (uint8_t *)o;
	uint64_t v;

	if (d == NULL)
		return -ENOENT;
	if (d->kind == K_FLAG) {
		if (value != NULL)
			return -EINVAL;
		*(bool *)(base + d->off) = true;
		return 0;
	}
	if (d->kind == K_REG) {
		enum wn_rpcrdma_reg_mode m;

		if (value == NULL)
			return -EINVAL;
		if (strcmp(value, "auto") == 0)
			m = WN_RPCRDMA_REG_AUTO;
		else if (strcmp(value, "mw") == 0)
			m = WN_RPCRDMA_REG_MW;
		else if (strcmp(value, "pool") == 0)
			m = WN_RPCRDMA_REG_POOL;
		else
			return -EINVAL;
		o->reg = m;
		return 0;
	}
	if (wn_rpcrdma_parse_size(value, &v) != 0 || v < d->min || v > d->max)
		return -EINVAL;
	switch (d->kind) {
	case K_U16:
		*(uint16_t *)(base + d->off) = (uint16_t)v;
		break;
	case K_SIZE:
		*(size_t *)(base + d->off) = (size_t)v << 20;
		break;
	default:
		if (strcmp(d->name, "inline") == 0)
			o->inline_send = o->inline_recv = (uint32_t)v;
		else
			*(uint32_t *)(base + d->off) = (uint32_t)v;
		break;
	}
	return 0;
}
