/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Initial sequence numbers per RFC 6528 §3: ISN = M + F(localip, localport, remoteip,
 * remoteport, secretkey), M a 4-microsecond timer, F a keyed PRF. DPDK has no keyed
 * cryptographic hash outside cryptodev, so F is SipHash-2-4 (a PRF; 64-bit output truncated).
 * The same PRF with a second domain byte gives the RFC 7323 §5.4 per-connection timestamp
 * offset, and with two more the SYN cookies (RFC 4987 §3.6).
 */
#include <string.h>

#include "tcp_priv.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                        \
	do {                                                            \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                  \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                  \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); \
	} while (0)

static uint64_t
load64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t
siphash24(const uint8_t key[16], const uint8_t *in, size_t len)
{
	uint64_t k0 = load64(key), k1 = load64(key + 8);
	uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
	uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
	uint64_t b = (uint64_t)len << 56, m;
	size_t i, end = len - len % 8;

	for (i = 0; i < end; i += 8) {
		m = load64(in + i);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t j = 0; j < len % 8; j++)
		b |= (uint64_t)in[end + j] << (8 * j);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

static uint64_t
tuple_prf_x(const struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *l,
	    const struct wn_tcp_endpoint *r, uint8_t domain, uint32_t extra)
{
	struct tcp_key k;
	uint8_t buf[sizeof(k) + 5];

	tcp_key_make(&k, l, r);
	memcpy(buf, &k, sizeof(k));
	buf[sizeof(k)] = domain;
	memcpy(buf + sizeof(k) + 1, &extra, 4);
	return siphash24(ctx->conf.isn_secret, buf, domain < 2 ? sizeof(k) + 1 : sizeof(buf));
}

static uint64_t
tuple_prf(const struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *l,
	  const struct wn_tcp_endpoint *r, uint8_t domain)
{
	return tuple_prf_x(ctx, l, r, domain, 0);
}

uint32_t
wn_tcp_isn(const struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *l,
	const struct wn_tcp_endpoint *r, uint64_t now)
{
	/* RFC 6528 §3: M is a timer ticking every 4 microseconds. */
	return (uint32_t)(now / 4) + (uint32_t)tuple_prf(ctx, l, r, 0);
}

uint32_t
wn_tcp_ts_offset(const struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *l,
	      const struct wn_tcp_endpoint *r)
{
	return (uint32_t)tuple_prf(ctx, l, r, 1);
}

/*
 * SYN cookies (RFC 4987 §3.6), laid out as Linux does: the ISN is
 *   F(4-tuple) + peer ISN + (count << 24) + ((F(4-tuple, count) + data) mod 2^24)
 * with count the minutes of the context's clock and data (< 2^24) what the SYN told us
 * (here an index into the MSS table). The ACK returning ISN + 1 within TCP_COOKIE_AGE
 * minutes gives data back; anything else fails the 24-bit keyed check.
 */
static uint32_t
cookie_count(uint64_t now)
{
	return (uint32_t)(now / TCP_COOKIE_PERIOD_US);
}

uint32_t
wn_tcp_cookie_make(const struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *l,
		const struct wn_tcp_endpoint *r, uint32_t peer_isn, uint32_t data, uint64_t now)
{
	uint32_t count = cookie_count(now);

	return (uint32_t)tuple_prf_x(ctx, l, r, 2, 0) + peer_isn + (count << TCP_COOKIE_BITS) +
	       (((uint32_t)tuple_prf_x(ctx, l, r, 3, count) + data) & TCP_COOKIE_MASK);
}

int64_t
wn_tcp_cookie_check(const struct wn_tcp_ctx *ctx, const struct wn_tcp_endpoint *l,
		 const struct wn_tcp_endpoint *r, uint32_t peer_isn, uint32_t cookie, uint64_t now)
{
	uint32_t count = cookie_count(now), diff;

	cookie -= (uint32_t)tuple_prf_x(ctx, l, r, 2, 0) + peer_isn;
	/* now (count' << 24) + (hash + data) mod 2^24, count' the minute it was made */
	diff = (count - (cookie >> TCP_COOKIE_BITS)) & (UINT32_MAX >> TCP_COOKIE_BITS);
	if (diff >= TCP_COOKIE_AGE)
		return -1;
	return (cookie - (uint32_t)tuple_prf_x(ctx, l, r, 3, count - diff)) & TCP_COOKIE_MASK;
}
