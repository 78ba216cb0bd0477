/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Address helpers: compare, parse, format (IPv4 and IPv6); and a netif's address table,
 * below both netif.c (configuration) and dad.c (the link-local address it forms).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net_priv.h"
#include "wn_net.h"

int
wn_net_addr_parse(const char *s, struct wn_ip_addr *addr, uint8_t *prefix)
{
	char buf[64];
	const char *slash;
	size_t len;
	long p;
	char *end;

	if (s == NULL || addr == NULL)
		return -EINVAL;
	slash = strchr(s, '/');
	len = slash != NULL ? (size_t)(slash - s) : strlen(s);
	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(addr, 0, sizeof(*addr));
	if (inet_pton(AF_INET, buf, &addr->v4) == 1) {
		addr->family = WN_AF_INET;
		p = 32;
	} else if (inet_pton(AF_INET6, buf, addr->v6) == 1) {
		addr->family = WN_AF_INET6;
		p = 128;
	} else {
		return -EINVAL;
	}
	if (slash != NULL) {
		long max = p;

		errno = 0;
		p = strtol(slash + 1, &end, 10);
		if (errno != 0 || end == slash + 1 || *end != '\0' || p < 0 || p > max)
			return -EINVAL;
	}
	if (prefix != NULL)
		*prefix = (uint8_t)p;
	return 0;
}

const char *
wn_net_addr_fmt(const struct wn_ip_addr *a, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (a->family == WN_AF_INET)
		inet_ntop(AF_INET, &a->v4, buf, (socklen_t)len);
	else if (a->family == WN_AF_INET6)
		inet_ntop(AF_INET6, a->v6, buf, (socklen_t)len);
	else
		snprintf(buf, len, "?");
	return buf;
}

/* ---------------------------------------------------------------- a netif's addresses */

/* Any address of the netif, whatever its state. */
struct netif_addr *
wn_net_if_addr_find(struct wn_netif *nif, const struct wn_ip_addr *addr)
{
	for (unsigned int i = 0; i < nif->nb_addrs; i++)
		if (wn_ip_addr_eq(&nif->addrs[i].addr, addr))
			return &nif->addrs[i];
	return NULL;
}

/* Store an address (no checks but room): IPv6 ones tentative unless DAD is off. */
int
wn_net_if_addr_append(struct wn_netif *nif, const struct wn_ip_addr *addr, uint8_t prefix)
{
	struct netif_addr *na;

	if (nif->nb_addrs == RTE_DIM(nif->addrs))
		return -ENOSPC;
	na = &nif->addrs[nif->nb_addrs++];
	memset(na, 0, sizeof(*na));
	na->addr.family = addr->family;
	if (addr->family == WN_AF_INET)
		na->addr.v4 = addr->v4;
	else
		memcpy(na->addr.v6, addr->v6, 16);
	na->prefix = prefix;
	na->state = addr->family == WN_AF_INET6 && nif->conf.dad_transmits != WN_NETIF_NO_DAD ?
		WN_ADDR_TENTATIVE : WN_ADDR_PREFERRED;
	nif->last_nh = NULL; /* next hops may change */
	return 0;
}
