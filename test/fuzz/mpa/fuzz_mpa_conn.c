/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the MPA connection state machine.
 * Octet 0: bit 0 role (1 = initiator), bit 1 Rev 2, bit 2 markers, bit 3 CRC,
 * bit 4 peer-to-peer, bits 5-6 ULP answer (0 none, 1 accept, 2 reject),
 * bit 7 pair mode. Octet 1: chunking seed. Octets 2-3: IRD/ORD/RTR.
 * Single mode: the rest is what the peer sends, with time advancing.
 * Pair mode: an initiator and a responder configured from the input talk to
 * each other; the rest of the input flips octets in flight and then is sent
 * as FPDU payloads.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_mpa.h"

struct fz {
	struct wn_mpa_conn c;
	int answer;
	unsigned int events;
	enum wn_mpa_conn_state seen;
};

static void
check(int cond)
{
	if (!cond)
		abort();
}

static void
on_event(void *arg, const struct wn_mpa_event *ev)
{
	struct fz *f = arg;

	check(ev->reason != NULL);
	check(ev->type <= WN_MPA_EV_ERROR);
	if (ev->type == WN_MPA_EV_ERROR)
		check(ev->err >= WN_MPA_ERR_CONN_LOST && ev->err <= WN_MPA_ERR_NO_RTR);
	if (ev->type == WN_MPA_EV_ESTABLISHED || ev->type == WN_MPA_EV_TX_READY)
		check(ev->params != NULL);
	if (ev->frame != NULL && ev->frame->pd_len) {
		volatile uint8_t last;

		check(ev->frame->pd != NULL);
		last = ev->frame->pd[ev->frame->pd_len - 1]; /* in bounds for ASan */
		(void)last;
	}
	f->events++;
	if (ev->type == WN_MPA_EV_REQUEST) {
		if (f->answer == 1)
			wn_mpa_conn_accept(&f->c, NULL, (const uint8_t *)"ok", 2, 0);
		else if (f->answer == 2)
			wn_mpa_conn_reject(&f->c, (const uint8_t *)"no", 2);
	}
}

static int
rx_header(void *arg, const struct wn_mpa_rx_hdr *h)
{
	(void)arg;
	check(h->hdr_len <= h->ulpdu_len);
	return 0;
}

static int
rx_payload(void *arg, const uint8_t *p, size_t len, uint32_t off)
{
	volatile uint8_t sink = 0;

	(void)arg;
	(void)off;
	for (size_t i = 0; i < len; i++)
		sink ^= p[i];
	(void)sink;
	return 0;
}

static int
rx_end(void *arg, const struct wn_mpa_rx_hdr *h, enum wn_mpa_err v)
{
	(void)arg;
	(void)h;
	(void)v;
	return 0;
}

static const struct wn_mpa_rx_ops ops = {
	.header = rx_header, .payload = rx_payload, .end = rx_end};

static void
cfg_from(struct wn_mpa_conn_cfg *cfg, const uint8_t *d, bool initiator, struct fz *f)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->initiator = initiator;
	cfg->rev = (d[0] & 2) ? 2 : 1;
	cfg->markers = (d[0] & 4) != 0;
	cfg->crc = (d[0] & 8) != 0;
	cfg->caps.p2p = (d[0] & 16) != 0;
	cfg->caps.ird = d[2] & 0x1F;
	cfg->caps.ord = (uint16_t)(d[3] & 0x1F);
	cfg->caps.rtr = (uint8_t)((d[2] >> 5) & WN_MPA_RTR_ALL);
	cfg->caps.ord_min = (uint16_t)(d[3] >> 6);
	cfg->tx_seq = 0xFFFFFF00u + d[1];
	cfg->rx_seq = 0xFFFFFE00u + d[3];
	cfg->timeout_us = 1000;
	cfg->rx_ops = &ops;
	cfg->rx_hdr_len = 18;
	cfg->check_markers = true;
	cfg->check_rtr = (d[1] & 1) != 0;
	cfg->event = on_event;
	cfg->event_arg = f;
	cfg->pd = (const uint8_t *)"fuzz";
	cfg->pd_len = 4;
}

static void
transfer(struct fz *a, struct fz *b, const uint8_t **flip, size_t *nflip, uint32_t *seed)
{
	uint8_t buf[WN_MPA_FRAME_MAX];

	while (wn_mpa_conn_output_pending(&a->c) > 0) {
		*seed = *seed * 1103515245u + 12345u;
		size_t n = wn_mpa_conn_output(&a->c, buf, 1 + (*seed >> 16) % 40);
		if (*nflip >= 2 && (*flip)[0] < n) {
			buf[(*flip)[0]] ^= (*flip)[1];
			*flip += 2;
			*nflip -= 2;
		}
		size_t used = 0;
		int rc = wn_mpa_conn_input(&b->c, buf, n, 10, &used);
		check(used <= n);
		if (rc < 0)
			return;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wn_mpa_conn_cfg cfg;
	struct fz a, b;
	uint32_t seed;

	if (size < 4)
		return 0;
	seed = data[1];
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.answer = b.answer = (data[0] >> 5) & 3;

	if (!(data[0] & 0x80)) {
		cfg_from(&cfg, data, data[0] & 1, &a);
		check(wn_mpa_conn_init(&a.c, &cfg) == 0);
		check(wn_mpa_conn_start(&a.c, 0) == 0);
		uint8_t sink[WN_MPA_FRAME_MAX];
		wn_mpa_conn_output(&a.c, sink, sizeof(sink));
		size_t i = 4;
		uint64_t now = 0;
		while (i < size) {
			seed = seed * 1103515245u + 12345u;
			size_t k = 1 + (seed >> 16) % 64;
			if (k > size - i)
				k = size - i;
			now += (seed >> 8) % 50;
			size_t used = 0;
			int rc = wn_mpa_conn_input(&a.c, data + i, k, now, &used);
			check(used <= k);
			check(wn_mpa_conn_output_pending(&a.c) <= WN_MPA_FRAME_MAX);
			wn_mpa_conn_output(&a.c, sink, sizeof(sink));
			if (rc < 0)
				break;
			i += used ? used : k;
		}
		wn_mpa_conn_tick(&a.c, now + 2000);
		check(wn_mpa_conn_state(&a.c) <= WN_MPA_CONN_ERROR);
		return 0;
	}

	/* pair mode */
	const uint8_t *flip = data + 4;
	size_t nflip = size - 4 > 8 ? 8 : size - 4;
	cfg_from(&cfg, data, true, &a);
	check(wn_mpa_conn_init(&a.c, &cfg) == 0);
	cfg_from(&cfg, data, false, &b);
	cfg.markers = !cfg.markers;
	check(wn_mpa_conn_init(&b.c, &cfg) == 0);
	if (b.answer == 0)
		b.answer = 1;
	check(wn_mpa_conn_start(&a.c, 0) == 0);
	check(wn_mpa_conn_start(&b.c, 0) == 0);
	for (int r = 0; r < 3; r++) {
		transfer(&a, &b, &flip, &nflip, &seed);
		transfer(&b, &a, &flip, &nflip, &seed);
	}
	/* FPDUs both ways with the rest of the input as payload */
	const uint8_t *pl = data + 4 + (size - 4 > 8 ? 8 : size - 4);
	size_t plen = (size_t)(data + size - pl);
	static uint8_t out[70000];
	for (int dir = 0; dir < 2; dir++) {
		struct fz *s = dir ? &b : &a, *d = dir ? &a : &b;
		struct iovec iov = {(void *)(uintptr_t)pl, plen > 60000 ? 60000 : plen};
		int w = wn_mpa_conn_frame(&s->c, &iov, 1, out, sizeof(out));
		if (w < 0) {
			check(w == -EAGAIN || w == -ENOTCONN);
			continue;
		}
		size_t used = 0;
		wn_mpa_conn_input(&d->c, out, (size_t)w, 20, &used);
	}
	return 0;
}
