/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for wn-tcpapp's option parsers (app/wn-tcpapp/parse.c): sizes with
 * binary suffixes, ADDR:PORT / [V6]:PORT endpoints and MAC addresses. The first input
 * octet picks the parser. Invariants: a parsed endpoint has a port in 1..65535 and an
 * IPv4/IPv6 family; a parsed size with a suffix is a multiple of 1024.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tcpapp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wn_tcp_endpoint ep;
	struct rte_ether_addr mac;
	uint64_t v;
	char *s;

	if (size < 1)
		return 0;
	s = malloc(size);
	if (s == NULL)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 3) {
	case 0:
		if (tcpapp_parse_size(s, &v) == 0 && strpbrk(s, "kKmMgG") != NULL &&
		    strncmp(s, "0x", 2) != 0 && strncmp(s, "0X", 2) != 0 && (v & 1023) != 0)
			abort();
		break;
	case 1:
		if (tcpapp_parse_endpoint(s, &ep) == 0 &&
		    (ep.port == 0 ||
		     (ep.addr.family != WN_AF_INET && ep.addr.family != WN_AF_INET6)))
			abort();
		break;
	default:
		(void)tcpapp_parse_mac(s, &mac);
		break;
	}
	free(s);
	return 0;
}
