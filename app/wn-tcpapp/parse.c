/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Small string parsers of wn-tcpapp's options (fuzzed by test/integration/fuzz_tcpapp_args.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>

#include "tcpapp.h"

/* "1048576", "64K", "256M", "1G", "4Gi", "0x100": binary multiples */
int
tcpapp_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s)
		return -EINVAL;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	default:
		return -EINVAL;
	}
	if (shift != 0) {
		end++;
		if (*end == 'i')
			end++;
		if (*end == 'B')
			end++;
	}
	if (*end != '\0' || (shift != 0 && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

/* "198.18.0.1:5001" or "[2001:db8::1]:5001" */
int
tcpapp_parse_endpoint(const char *s, struct wn_tcp_endpoint *ep)
{
	char host[64];
	const char *colon, *hs;
	size_t hl;
	char *end;
	unsigned long port;

	if (s == NULL)
		return -EINVAL;
	if (*s == '[') {
		const char *rb = strchr(s, ']');

		if (rb == NULL || rb[1] != ':')
			return -EINVAL;
		hs = s + 1;
		hl = (size_t)(rb - hs);
		colon = rb + 1;
	} else {
		colon = strrchr(s, ':');
		if (colon == NULL || memchr(s, ':', (size_t)(colon - s)) != NULL)
			return -EINVAL;
		hs = s;
		hl = (size_t)(colon - s);
	}
	if (hl == 0 || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, hs, hl);
	host[hl] = '\0';
	if (colon[1] < '0' || colon[1] > '9')
		return -EINVAL;
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || port == 0 || port > 65535)
		return -EINVAL;
	if (strchr(host, '/') != NULL || wn_net_addr_parse(host, &ep->addr, NULL) < 0)
		return -EINVAL;
	ep->port = (uint16_t)port;
	return 0;
}

int
tcpapp_parse_mac(const char *s, struct rte_ether_addr *mac)
{
	if (s == NULL || rte_ether_unformat_addr(s, mac) < 0)
		return -EINVAL;
	return 0;
}
