/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 address autoconfiguration as a host does it (RFC 4862): the link-local address the
 * interface forms (§5.3) and Duplicate Address Detection of every IPv6 address (§5.4), with
 * the nonce of Enhanced DAD (RFC 7527). Not done: the random delay before the first probe
 * (§5.4.2, against probes of many hosts booting at once), MLD reports for the groups joined
 * (no snooping switch on the links warpnic runs on), router discovery and SLAAC of global
 * addresses (addresses are configured).
 */
#include <string.h>

#include <rte_jhash.h>

#include "net_priv.h"

/* RFC 7217 §6 IDGEN_RETRIES: identifiers tried after a collision of the link-local one */
#define IDGEN_RETRIES 3

static bool
has_link_local(const struct wn_netif *nif, bool *any6)
{
	bool ll = false;

	*any6 = false;
	for (unsigned int i = 0; i < nif->nb_addrs; i++) {
		const struct wn_ip_addr *a = &nif->addrs[i].addr;

		if (a->family != WN_AF_INET6)
			continue;
		*any6 = true;
		ll |= a->v6[0] == 0xfe && (a->v6[1] & 0xc0) == 0x80;
	}
	return ll;
}

/*
 * fe80::/64 with an opaque interface identifier in the manner of RFC 7217 §5: a hash of the
 * prefix, the interface (its MAC) and the DAD counter. jhash is no cryptographic PRF and
 * there is no secret key: the identifier is stable and unlike the EUI-64 one, not private.
 */
static void
ll_make(const struct wn_netif *nif, uint8_t dad_count, struct wn_ip_addr *a)
{
	struct {
		uint8_t prefix[8];
		uint8_t mac[6];
		uint8_t dad_count;
		uint8_t pad;
	} in;
	uint32_t hi = 0x7e6e1d, lo = 0x5217;

	memset(&in, 0, sizeof(in));
	in.prefix[0] = 0xfe;
	in.prefix[1] = 0x80;
	memcpy(in.mac, nif->conf.mac.addr_bytes, 6);
	in.dad_count = dad_count;
	rte_jhash_2hashes(&in, sizeof(in), &hi, &lo);
	memset(a, 0, sizeof(*a));
	a->family = WN_AF_INET6;
	memcpy(a->v6, in.prefix, 8);
	for (int i = 0; i < 4; i++) {
		a->v6[8 + i] = (uint8_t)(hi >> (24 - 8 * i));
		a->v6[12 + i] = (uint8_t)(lo >> (24 - 8 * i));
	}
	/* RFC 5453 reserved identifiers: 0 and the subnet anycast range fdff:ffff:ffff:ff80/121 */
	if (memcmp(a->v6 + 8, "\xfd\xff\xff\xff\xff\xff\xff", 7) == 0 && a->v6[15] >= 0x80)
		a->v6[8] = 0xfc;
	if (hi == 0 && lo == 0)
		a->v6[15] = 1;
}

static void
nonce_make(const struct wn_netif *nif, struct netif_addr *na)
{
	uint32_t hi = (uint32_t)nif->conf.dad_seed, lo = (uint32_t)(nif->conf.dad_seed >> 32);

	rte_jhash_2hashes(na->addr.v6, 16, &hi, &lo);
	memcpy(na->nonce, &hi, 4);
	memcpy(na->nonce + 4, &lo, 2);
}

static uint8_t
transmits(const struct wn_netif *nif)
{
	return nif->conf.dad_transmits == 0 ? 1 : nif->conf.dad_transmits;
}

/* One probe now (a secondary netif only keeps time), the next or the verdict later. */
static void
dad_probe(struct wn_netif *nif, struct netif_addr *na, uint64_t now)
{
	if (!nif->conf.secondary)
		(void)wn_net_ndp_send_dad(nif, &na->addr, na->nonce);
	na->dad_left--;
	na->dad_next = now + nif->conf.neigh_retrans_us;
}

static void
dad_begin(struct wn_netif *nif, struct netif_addr *na, uint64_t now)
{
	na->state = WN_ADDR_TENTATIVE;
	na->dad_left = transmits(nif);
	nonce_make(nif, na);
	dad_probe(nif, na, now);
}

void
wn_net_dad_start(struct wn_netif *nif, uint64_t now)
{
	bool any6;

	if (!nif->started) {
		nif->started = true;
		if (!nif->conf.no_link_local && !has_link_local(nif, &any6) && any6) {
			struct wn_ip_addr ll;

			ll_make(nif, 0, &ll);
			if (wn_net_if_addr_append(nif, &ll, 64) == 0)
				nif->addrs[nif->nb_addrs - 1].auto_ll = true;
		}
	}
	/* the link is (back) up: probes of a DAD still running may have been lost, start over */
	for (unsigned int i = 0; i < nif->nb_addrs; i++)
		if (nif->addrs[i].state == WN_ADDR_TENTATIVE)
			dad_begin(nif, &nif->addrs[i], now);
}

void
wn_net_dad_process(struct wn_netif *nif, uint64_t now)
{
	for (unsigned int i = 0; i < nif->nb_addrs; i++) {
		struct netif_addr *na = &nif->addrs[i];
		char buf[48];

		if (na->state != WN_ADDR_TENTATIVE || na->dad_next == 0 || now < na->dad_next)
			continue;
		if (na->dad_left > 0) {
			dad_probe(nif, na, now);
			continue;
		}
		/* RFC 4862 §5.4: no answer to any probe: the address is ours */
		na->state = WN_ADDR_PREFERRED;
		na->dad_next = 0;
		nif->last_nh = NULL;
		NET_LOG(INFO, "%s: duplicate address detection passed",
			wn_net_addr_fmt(&na->addr, buf, sizeof(buf)));
		if (!nif->conf.secondary) {
			struct wn_ip_addr all;

			wn_net_ip6_all_nodes(&all);
			if (wn_net_ndp_send_na(nif, &na->addr, &all, NULL, false) == 0)
				nif->st.tx_garp++;
		}
	}
}

/* RFC 4862 §5.4.5: another node has it; an own link-local gets a new identifier (RFC 7217). */
static void
dad_failed(struct wn_netif *nif, struct netif_addr *na, uint64_t now)
{
	char buf[48];

	nif->st.dad_duplicates++;
	wn_net_addr_fmt(&na->addr, buf, sizeof(buf));
	if (na->auto_ll && na->dad_count < IDGEN_RETRIES) {
		na->dad_count++;
		ll_make(nif, na->dad_count, &na->addr);
		NET_LOG(WARNING, "%s is in use on the link: link-local address attempt %u",
			buf, na->dad_count + 1);
		dad_begin(nif, na, now);
		return;
	}
	na->state = WN_ADDR_DUPLICATE;
	na->dad_next = 0;
	NET_LOG(ERR, "%s is in use by another node on the link (duplicate address detection): "
		"not used", buf);
}

/*
 * A DAD probe (from the unspecified address) for one of our addresses, @p nonce its Nonce
 * option (NULL: none). For a tentative address it is our own probe looped back (our nonce)
 * or another node's trying the same address (RFC 4862 §5.4.3, RFC 7527 §4.2); a usable
 * address the caller defends.
 */
void
wn_net_dad_ns_input(struct wn_netif *nif, struct netif_addr *na, const uint8_t *nonce, uint64_t now)
{
	if (na->state != WN_ADDR_TENTATIVE)
		return;
	if (nonce != NULL && memcmp(nonce, na->nonce, 6) == 0) {
		nif->st.dad_looped++;
		return;
	}
	dad_failed(nif, na, now);
}

/* An advertisement of one of our addresses by another node (RFC 4862 §5.4.4). */
void
wn_net_dad_na_input(struct wn_netif *nif, struct netif_addr *na, uint64_t now)
{
	char buf[48];

	if (na->state == WN_ADDR_TENTATIVE) {
		dad_failed(nif, na, now);
		return;
	}
	if (na->state != WN_ADDR_PREFERRED)
		return;
	nif->st.na_conflicts++;
	NET_LOG(WARNING, "%s: another node advertises this address of ours",
		wn_net_addr_fmt(&na->addr, buf, sizeof(buf)));
}
