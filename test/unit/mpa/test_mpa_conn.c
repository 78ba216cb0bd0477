/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA connection startup (RFC 5044 §7.1, RFC 6581): an initiator and a
 * responder state machine connected to each other in memory, with any
 * chunking down to one octet. A failure here means two warpnic ends (or
 * warpnic and siw) would not agree on Markers/CRC/SeqStart/IRD/ORD/RTR, or a
 * broken or hostile peer would not be caught.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wn_mpa.h"

#define T0 1000000u

struct side {
	struct wn_mpa_conn c;
	unsigned int ev[WN_MPA_EV_ERROR + 1];
	enum wn_mpa_event_type last;
	enum wn_mpa_err err;
	enum wn_mpa_frame_status fs;
	bool timeout, send_terminate;
	const char *reason;
	uint8_t peer_pd[WN_MPA_PD_MAX];
	uint16_t peer_pd_len;
	struct wn_mpa_frame peer; /* pd pointer not kept */
	/* responder behaviour on REQUEST */
	int on_request;            /* 0 nothing, 1 accept, 2 reject */
	const char *reply_pd;
	int accept_rc;
	/* Full Operation receive log */
	unsigned int ulpdus;
	uint8_t data[4096];
	size_t data_len;
	enum wn_mpa_err verdict;
};

static void
on_event(void *arg, const struct wn_mpa_event *ev)
{
	struct side *s = arg;

	s->ev[ev->type]++;
	s->last = ev->type;
	s->reason = ev->reason;
	assert_non_null(ev->reason);
	if (ev->type == WN_MPA_EV_ERROR) {
		s->err = ev->err;
		s->fs = ev->frame_status;
		s->timeout = ev->timeout;
		s->send_terminate = ev->send_terminate;
	}
	if (ev->frame != NULL) {
		s->peer = *ev->frame;
		s->peer.pd = NULL;
		s->peer_pd_len = ev->frame->pd_len;
		if (ev->frame->pd_len)
			memcpy(s->peer_pd, ev->frame->pd, ev->frame->pd_len);
	}
	if (ev->type == WN_MPA_EV_REQUEST && s->on_request != 0) {
		const char *pd = s->reply_pd ? s->reply_pd : "";
		if (s->on_request == 1)
			s->accept_rc = wn_mpa_conn_accept(&s->c, NULL, (const uint8_t *)pd,
							  (uint16_t)strlen(pd), T0);
		else
			s->accept_rc = wn_mpa_conn_reject(&s->c, (const uint8_t *)pd,
							  (uint16_t)strlen(pd));
	}
}

static int
rx_header(void *arg, const struct wn_mpa_rx_hdr *h)
{
	struct side *s = arg;

	assert_true(h->ulpdu_len <= sizeof(s->data));
	memcpy(s->data, h->hdr, h->hdr_len);
	s->data_len = h->hdr_len;
	return 0;
}

static int
rx_payload(void *arg, const uint8_t *p, size_t len, uint32_t off)
{
	struct side *s = arg;

	assert_int_equal(off, s->data_len);
	memcpy(s->data + off, p, len);
	s->data_len += len;
	return 0;
}

static int
rx_end(void *arg, const struct wn_mpa_rx_hdr *h, enum wn_mpa_err verdict)
{
	struct side *s = arg;

	(void)h;
	s->verdict = verdict;
	if (verdict == WN_MPA_ERR_NONE)
		s->ulpdus++;
	return 0;
}

static const struct wn_mpa_rx_ops rx_ops = {
	.header = rx_header, .payload = rx_payload, .end = rx_end};

static struct wn_mpa_conn_cfg
base_cfg(struct side *s, bool initiator)
{
	struct wn_mpa_conn_cfg cfg = {
		.initiator = initiator,
		.rev = 2,
		.crc = true,
		.caps = {.ird = 4, .ord = 4, .rtr = WN_MPA_RTR_ALL},
		.tx_seq = initiator ? 0xFFFFFFF0u : 5000,
		.rx_seq = initiator ? 5000 : 0xFFFFFFF0u,
		.rx_ops = &rx_ops,
		.rx_arg = s,
		.rx_hdr_len = 2,
		.check_markers = true,
		.event = on_event,
		.event_arg = s,
	};
	return cfg;
}

static void
side_init(struct side *s, const struct wn_mpa_conn_cfg *cfg)
{
	memset(s, 0, sizeof(*s));
	struct wn_mpa_conn_cfg c = *cfg;
	c.rx_arg = s;
	c.event_arg = s;
	assert_int_equal(wn_mpa_conn_init(&s->c, &c), 0);
}

/* Move pending startup octets from @p a to @p b in chunks of @p chunk. */
static int
move(struct side *a, struct side *b, size_t chunk)
{
	uint8_t buf[WN_MPA_FRAME_MAX];
	int rc = 0;

	while (wn_mpa_conn_output_pending(&a->c) > 0) {
		size_t n = wn_mpa_conn_output(&a->c, buf, chunk);
		size_t used = 0;
		rc = wn_mpa_conn_input(&b->c, buf, n, T0 + 10, &used);
		if (rc < 0)
			return rc;
		assert_int_equal(used, n);
	}
	return rc;
}

static void
pump(struct side *i, struct side *r, size_t chunk)
{
	for (int k = 0; k < 4; k++) {
		move(i, r, chunk);
		move(r, i, chunk);
	}
}

/* Send one FPDU from @p a to @p b, @p chunk octets at a time. */
static int
send_fpdu(struct side *a, struct side *b, const char *msg, size_t chunk)
{
	uint8_t out[2048];
	struct iovec iov = {(void *)(uintptr_t)msg, strlen(msg)};
	int w = wn_mpa_conn_frame(&a->c, &iov, 1, out, sizeof(out));

	if (w < 0)
		return w;
	for (int off = 0; off < w; off += (int)chunk) {
		size_t n = (size_t)(w - off) < chunk ? (size_t)(w - off) : chunk;
		int rc = wn_mpa_conn_input(&b->c, out + off, n, T0 + 20, NULL);
		if (rc < 0)
			return rc;
	}
	return w;
}

static void
connect_pair(struct side *i, struct side *r, size_t chunk)
{
	assert_int_equal(wn_mpa_conn_start(&i->c, T0), 0);
	assert_int_equal(wn_mpa_conn_start(&r->c, T0), 0);
	pump(i, r, chunk);
}

static void
test_client_server(void **state)
{
	static const size_t chunks[] = {1, 3, 7, WN_MPA_FRAME_MAX};
	(void)state;

	for (unsigned int k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		struct side i, r;
		struct wn_mpa_conn_cfg ci, cr;

		ci = base_cfg(&i, true);
		ci.pd = (const uint8_t *)"hello";
		ci.pd_len = 5;
		side_init(&i, &ci);
		cr = base_cfg(&r, false);
		side_init(&r, &cr);
		r.on_request = 1;
		r.reply_pd = "welcome";

		assert_int_equal(wn_mpa_conn_state(&i.c), WN_MPA_CONN_IDLE);
		connect_pair(&i, &r, chunks[k]);
		assert_int_equal(r.ev[WN_MPA_EV_REQUEST], 1);
		assert_int_equal(r.accept_rc, 0);
		assert_int_equal(r.peer_pd_len, 5);
		assert_memory_equal(r.peer_pd, "hello", 5);
		assert_true(r.peer.enhanced);
		assert_int_equal(i.ev[WN_MPA_EV_ESTABLISHED], 1);
		assert_int_equal(i.ev[WN_MPA_EV_TX_READY], 1);
		assert_int_equal(i.peer_pd_len, 7);
		assert_memory_equal(i.peer_pd, "welcome", 7);
		assert_int_equal(wn_mpa_conn_state(&i.c), WN_MPA_CONN_FULL);
		assert_int_equal(wn_mpa_conn_state(&r.c), WN_MPA_CONN_FULL);
		assert_int_equal(wn_mpa_conn_deadline(&i.c), UINT64_MAX);
		assert_int_equal(wn_mpa_conn_deadline(&r.c), UINT64_MAX);

		/* SeqStart: first octet after the Request (24 + 5) / Reply (24 + 7) */
		const struct wn_mpa_params *pi = wn_mpa_conn_params(&i.c);
		const struct wn_mpa_params *pr = wn_mpa_conn_params(&r.c);
		assert_int_equal(pi->tx.seq_start, 0xFFFFFFF0u + 29);
		assert_int_equal(pr->rx.seq_start, pi->tx.seq_start);
		assert_int_equal(pr->tx.seq_start, 5000 + 31);
		assert_int_equal(pi->rx.seq_start, pr->tx.seq_start);
		assert_true(pi->tx.crc && pi->rx.crc && pr->tx.crc && pr->rx.crc);
		assert_false(pi->tx.markers || pi->rx.markers);
		assert_int_equal(pi->rev, 2);
		assert_int_equal(pi->neg.ird, 4);
		assert_int_equal(pi->neg.ord, 4);

		/* fencing: the responder may not send before the first FPDU */
		assert_false(wn_mpa_conn_tx_allowed(&r.c));
		assert_int_equal(send_fpdu(&r, &i, "too early", 4), -EAGAIN);
		assert_int_equal(r.ev[WN_MPA_EV_TX_READY], 0);
		assert_true(send_fpdu(&i, &r, "first message from the client", chunks[k]) > 0);
		assert_int_equal(r.ulpdus, 1);
		assert_int_equal(r.data_len, 29);
		assert_memory_equal(r.data, "first message from the client", 29);
		assert_int_equal(r.ev[WN_MPA_EV_TX_READY], 1);
		assert_true(wn_mpa_conn_tx_allowed(&r.c));
		assert_true(send_fpdu(&r, &i, "answer", chunks[k]) > 0);
		assert_int_equal(i.ulpdus, 1);
		assert_memory_equal(i.data, "answer", 6);
		assert_true(send_fpdu(&i, &r, "more", 1) > 0);
		assert_int_equal(r.ulpdus, 2);
	}
}

static void
test_markers_and_crc(void **state)
{
	(void)state;
	for (int m = 0; m < 4; m++) {
		struct side i, r;
		struct wn_mpa_conn_cfg ci = base_cfg(&i, true), cr = base_cfg(&r, false);

		/* markers per direction: each side's M asks the other to insert them */
		ci.markers = m & 1;
		cr.markers = (m >> 1) & 1;
		ci.crc = m == 1;
		cr.crc = m == 2;
		side_init(&i, &ci);
		side_init(&r, &cr);
		r.on_request = 1;
		connect_pair(&i, &r, 1);
		const struct wn_mpa_params *pi = wn_mpa_conn_params(&i.c);
		const struct wn_mpa_params *pr = wn_mpa_conn_params(&r.c);
		assert_int_equal(pi->rx.markers, ci.markers);
		assert_int_equal(pr->tx.markers, ci.markers);
		assert_int_equal(pi->tx.markers, cr.markers);
		assert_int_equal(pr->rx.markers, cr.markers);
		/* CRC unless both frames say C=0 (RFC 5044 §7.1.1) */
		bool crc = ci.crc || cr.crc;
		assert_int_equal(pi->tx.crc, crc);
		assert_int_equal(pr->rx.crc, crc);
		assert_int_equal(pr->tx.crc, crc);

		/* long messages cross Marker boundaries right after the 2^32 wrap */
		char msg[1500];
		for (int round = 0; round < 3; round++) {
			memset(msg, 'a' + round, sizeof(msg) - 1);
			msg[sizeof(msg) - 1] = 0;
			assert_true(send_fpdu(&i, &r, msg, 5) > 0);
			assert_int_equal(r.data_len, sizeof(msg) - 1);
			assert_memory_equal(r.data, msg, sizeof(msg) - 1);
			assert_true(send_fpdu(&r, &i, msg, 64) > 0);
			assert_int_equal(i.data_len, sizeof(msg) - 1);
		}
		assert_int_equal(r.ulpdus, 3);
		assert_int_equal(i.ulpdus, 3);
		assert_int_equal(r.ev[WN_MPA_EV_ERROR] + i.ev[WN_MPA_EV_ERROR], 0);
	}
}

static void
test_p2p_rtr(void **state)
{
	struct side i, r;
	struct wn_mpa_conn_cfg ci, cr;
	uint8_t req[64];
	(void)state;

	ci = base_cfg(&i, true);
	ci.caps = (struct wn_mpa_caps){.ird = 1, .ord = 1, .p2p = true,
				       .rtr = WN_MPA_RTR_WRITE | WN_MPA_RTR_READ};
	side_init(&i, &ci);
	cr = base_cfg(&r, false);
	cr.caps = (struct wn_mpa_caps){.ird = 8, .ord = 8, .rtr = WN_MPA_RTR_READ};
	side_init(&r, &cr);
	r.on_request = 1;

	assert_int_equal(wn_mpa_conn_start(&i.c, T0), 0);
	assert_int_equal(wn_mpa_conn_start(&r.c, T0), 0);
	/* the Request carries siw's p2p word 80 01 c0 01 (flags 0x50: C and S) */
	size_t n = wn_mpa_conn_output(&i.c, req, sizeof(req));
	assert_int_equal(n, 24);
	assert_int_equal(req[16], 0x50);
	assert_int_equal(req[17], 2);
	static const uint8_t word[4] = {0x80, 0x01, 0xc0, 0x01};
	assert_memory_equal(req + 20, word, 4);
	for (size_t k = 0; k < n; k++)
		assert_int_equal(wn_mpa_conn_input(&r.c, req + k, 1, T0 + 1, NULL), 0);
	pump(&i, &r, 2);
	const struct wn_mpa_params *pi = wn_mpa_conn_params(&i.c);
	const struct wn_mpa_params *pr = wn_mpa_conn_params(&r.c);
	assert_true(pr->neg.p2p);
	assert_int_equal(pr->neg.rtr, WN_MPA_RTR_READ);
	assert_int_equal(pr->neg.ird, 1);
	assert_int_equal(pr->neg.ord, 1);
	assert_true(pi->neg.p2p);
	assert_int_equal(pi->neg.rtr, WN_MPA_RTR_READ); /* from the Reply's bits */
	assert_int_equal(i.ev[WN_MPA_EV_TX_READY], 1);
	assert_int_equal(i.ev[WN_MPA_EV_ERROR], 0);
}

static void
test_reject(void **state)
{
	struct side i, r;
	struct wn_mpa_conn_cfg ci, cr;
	(void)state;

	ci = base_cfg(&i, true);
	side_init(&i, &ci);
	cr = base_cfg(&r, false);
	side_init(&r, &cr);
	r.on_request = 2;
	r.reply_pd = "go away";
	connect_pair(&i, &r, 1);
	assert_int_equal(r.accept_rc, 0);
	assert_int_equal(wn_mpa_conn_state(&r.c), WN_MPA_CONN_REJECTED);
	assert_int_equal(wn_mpa_conn_state(&i.c), WN_MPA_CONN_REJECTED);
	assert_int_equal(i.ev[WN_MPA_EV_REJECTED], 1);
	assert_int_equal(i.ev[WN_MPA_EV_ESTABLISHED], 0);
	assert_true(i.peer.rejected);
	assert_int_equal(i.peer_pd_len, 7);
	assert_memory_equal(i.peer_pd, "go away", 7);
	/* MPA is over; TCP stays open but MPA takes no more octets */
	assert_int_equal(wn_mpa_conn_input(&i.c, (const uint8_t *)"x", 1, T0, NULL), -ENOTCONN);
	assert_int_equal(wn_mpa_conn_frame(&i.c, NULL, 0, (uint8_t[64]){0}, 64), -ENOTCONN);
	assert_int_equal(wn_mpa_conn_deadline(&i.c), UINT64_MAX);
}

static void
test_negotiation_failures(void **state)
{
	struct side i, r;
	struct wn_mpa_conn_cfg ci, cr;
	(void)state;

	/* responder needs ORD 4 but the initiator offers IRD 2: Reject naming ORD 4 */
	ci = base_cfg(&i, true);
	ci.caps.ird = 2;
	side_init(&i, &ci);
	cr = base_cfg(&r, false);
	cr.caps.ord_min = 4;
	side_init(&r, &cr);
	r.on_request = 1;
	connect_pair(&i, &r, 5);
	assert_int_equal(r.accept_rc, -ECONNREFUSED);
	assert_int_equal(r.err, WN_MPA_ERR_INSUFFICIENT_IRD);
	assert_int_equal(wn_mpa_conn_state(&r.c), WN_MPA_CONN_REJECTED);
	assert_int_equal(i.ev[WN_MPA_EV_REJECTED], 1);
	assert_true(i.peer.enhanced);
	assert_int_equal(i.peer.ord, 4);

	/* initiator can only send a Send RTR, the responder takes only Write: error 7 */
	ci = base_cfg(&i, true);
	ci.caps.p2p = true;
	ci.caps.rtr = WN_MPA_RTR_SEND;
	side_init(&i, &ci);
	cr = base_cfg(&r, false);
	cr.caps.rtr = WN_MPA_RTR_WRITE;
	side_init(&r, &cr);
	r.on_request = 1;
	assert_int_equal(wn_mpa_conn_start(&i.c, T0), 0);
	assert_int_equal(wn_mpa_conn_start(&r.c, T0), 0);
	move(&i, &r, 64);
	assert_int_equal(move(&r, &i, 64), -EPROTO);
	assert_int_equal(i.ev[WN_MPA_EV_ERROR], 1);
	assert_int_equal(i.err, WN_MPA_ERR_NO_RTR);
	assert_true(i.send_terminate);
	assert_int_equal(i.ev[WN_MPA_EV_TX_READY], 0);
	/* the Terminate can be framed: Full Operation parameters are in place */
	assert_true(wn_mpa_conn_tx_allowed(&i.c));

	/* initiator with IRD 1 and a responder ORD 3 from the Reply: error 6 */
	ci = base_cfg(&i, true);
	ci.caps.ird = 1;
	side_init(&i, &ci);
	assert_int_equal(wn_mpa_conn_start(&i.c, T0), 0);
	uint8_t rep[24];
	struct wn_mpa_frame f = {.type = WN_MPA_FRAME_REPLY, .rev = 2, .enhanced = true,
				 .crc = true, .ird = 4, .ord = 3};
	assert_int_equal(wn_wire_mpa_frame_encode(&f, rep, sizeof(rep)), 24);
	assert_int_equal(wn_mpa_conn_input(&i.c, rep, 24, T0, NULL), -EPROTO);
	assert_int_equal(i.err, WN_MPA_ERR_INSUFFICIENT_IRD);
}

static void
feed_raw(struct side *s, const uint8_t *buf, size_t len, int expect_rc)
{
	int rc = 0;

	for (size_t k = 0; k < len && rc == 0; k++)
		rc = wn_mpa_conn_input(&s->c, buf + k, 1, T0, NULL);
	assert_int_equal(rc, expect_rc);
}

static void
test_malformed(void **state)
{
	struct side r;
	struct wn_mpa_conn_cfg cr = base_cfg(&r, false);
	uint8_t buf[600];
	struct wn_mpa_frame f = {.type = WN_MPA_FRAME_REQUEST, .rev = 1};
	(void)state;

	/* wrong key: error 4, close at once, nothing accepted afterwards */
	side_init(&r, &cr);
	assert_int_equal(wn_mpa_conn_start(&r.c, T0), 0);
	int n = wn_wire_mpa_frame_encode(&f, buf, sizeof(buf));
	buf[3] = 'x';
	feed_raw(&r, buf, (size_t)n, -EPROTO);
	assert_int_equal(r.err, WN_MPA_ERR_BAD_FRAME);
	assert_int_equal(r.fs, WN_MPA_FRAME_BAD_KEY);
	assert_false(r.send_terminate);
	assert_int_equal(wn_mpa_conn_state(&r.c), WN_MPA_CONN_ERROR);
	assert_int_equal(wn_mpa_conn_input(&r.c, buf, 1, T0, NULL), -ENOTCONN);

	/* PD_Length above 512 */
	side_init(&r, &cr);
	assert_int_equal(wn_mpa_conn_start(&r.c, T0), 0);
	n = wn_wire_mpa_frame_encode(&f, buf, sizeof(buf));
	buf[18] = 0x02;
	buf[19] = 0x01;
	feed_raw(&r, buf, 20, -EPROTO);
	assert_int_equal(r.fs, WN_MPA_FRAME_PD_TOO_LONG);

	/* Rev 3 */
	side_init(&r, &cr);
	assert_int_equal(wn_mpa_conn_start(&r.c, T0), 0);
	n = wn_wire_mpa_frame_encode(&f, buf, sizeof(buf));
	buf[17] = 3;
	feed_raw(&r, buf, (size_t)n, -EPROTO);
	assert_int_equal(r.fs, WN_MPA_FRAME_BAD_REV);

	/* a Reply arriving at a responder */
	side_init(&r, &cr);
	assert_int_equal(wn_mpa_conn_start(&r.c, T0), 0);
	f.type = WN_MPA_FRAME_REPLY;
	n = wn_wire_mpa_frame_encode(&f, buf, sizeof(buf));
	feed_raw(&r, buf, (size_t)n, -EPROTO);
	assert_int_equal(r.err, WN_MPA_ERR_BAD_FRAME);

	/* data behind the Request (the initiator did not wait for the Reply) */
	side_init(&r, &cr);
	assert_int_equal(wn_mpa_conn_start(&r.c, T0), 0);
	f.type = WN_MPA_FRAME_REQUEST;
	n = wn_wire_mpa_frame_encode(&f, buf, sizeof(buf));
	memset(buf + n, 0, 8);
	assert_int_equal(wn_mpa_conn_input(&r.c, buf, (size_t)n + 8, T0, NULL), -EPROTO);
	assert_int_equal(r.err, WN_MPA_ERR_BAD_FRAME);
	/* ... or in a later chunk while the ULP decides */
	side_init(&r, &cr);
	assert_int_equal(wn_mpa_conn_start(&r.c, T0), 0);
	assert_int_equal(wn_mpa_conn_input(&r.c, buf, (size_t)n, T0, NULL), 0);
	assert_int_equal(wn_mpa_conn_state(&r.c), WN_MPA_CONN_REQ_RCVD);
	assert_int_equal(wn_mpa_conn_input(&r.c, buf, 4, T0, NULL), -EPROTO);

	/* initiator: data behind the Reply (the responder did not wait for our FPDU) */
	struct side i;
	struct wn_mpa_conn_cfg ci = base_cfg(&i, true);
	side_init(&i, &ci);
	assert_int_equal(wn_mpa_conn_start(&i.c, T0), 0);
	struct wn_mpa_frame rep = {.type = WN_MPA_FRAME_REPLY, .rev = 2, .enhanced = true,
				   .ird = 4, .ord = 4};
	n = wn_wire_mpa_frame_encode(&rep, buf, sizeof(buf));
	assert_int_equal(wn_mpa_conn_input(&i.c, buf, (size_t)n + 4, T0, NULL), -EPROTO);
	assert_int_equal(i.err, WN_MPA_ERR_BAD_FRAME);

	/* the first FPDU with a bad CRC: error 2 and a Terminate is due */
	struct side r2;
	side_init(&i, &ci);
	side_init(&r2, &cr);
	r2.on_request = 1;
	connect_pair(&i, &r2, 9);
	uint8_t out[128];
	struct iovec iov = {(void *)"payload!", 8};
	int w = wn_mpa_conn_frame(&i.c, &iov, 1, out, sizeof(out));
	assert_true(w > 0);
	out[5] ^= 0x10;
	assert_int_equal(wn_mpa_conn_input(&r2.c, out, (size_t)w, T0, NULL), -EPROTO);
	assert_int_equal(r2.err, WN_MPA_ERR_CRC);
	assert_true(r2.send_terminate);
	assert_false(wn_mpa_conn_tx_allowed(&r2.c));
}

static void
test_initiator_initiator(void **state)
{
	struct side a, b;
	struct wn_mpa_conn_cfg ca, cb;
	(void)state;

	ca = base_cfg(&a, true);
	cb = base_cfg(&b, true);
	side_init(&a, &ca);
	side_init(&b, &cb);
	assert_int_equal(wn_mpa_conn_start(&a.c, T0), 0);
	assert_int_equal(wn_mpa_conn_start(&b.c, T0), 0);
	assert_int_equal(move(&a, &b, 3), -EPROTO);
	assert_int_equal(b.err, WN_MPA_ERR_BAD_FRAME);
	assert_non_null(strstr(b.reason, "initiator/initiator"));
	assert_int_equal(move(&b, &a, 100), -EPROTO);
	assert_int_equal(a.err, WN_MPA_ERR_BAD_FRAME);
}

static void
test_timeouts(void **state)
{
	struct side a, b;
	struct wn_mpa_conn_cfg ca, cb;
	(void)state;

	/* Responder/Responder: only the timer notices (RFC 5044 §7.1.2) */
	ca = base_cfg(&a, false);
	cb = base_cfg(&b, false);
	ca.timeout_us = 500;
	side_init(&a, &ca);
	side_init(&b, &cb);
	assert_int_equal(wn_mpa_conn_start(&a.c, T0), 0);
	assert_int_equal(wn_mpa_conn_start(&b.c, T0), 0);
	pump(&a, &b, 1);
	assert_int_equal(wn_mpa_conn_deadline(&a.c), T0 + 500);
	assert_int_equal(wn_mpa_conn_deadline(&b.c), T0 + WN_MPA_STARTUP_TIMEOUT_US);
	assert_int_equal(wn_mpa_conn_tick(&a.c, T0 + 499), 0);
	assert_int_equal(a.ev[WN_MPA_EV_ERROR], 0);
	assert_int_equal(wn_mpa_conn_tick(&a.c, T0 + 500), -ETIMEDOUT);
	assert_int_equal(a.ev[WN_MPA_EV_ERROR], 1);
	assert_true(a.timeout);
	assert_int_equal(a.err, WN_MPA_ERR_CONN_LOST);
	assert_int_equal(wn_mpa_conn_state(&a.c), WN_MPA_CONN_ERROR);

	/* initiator without Reply: late input is refused as timed out */
	ca = base_cfg(&a, true);
	side_init(&a, &ca);
	assert_int_equal(wn_mpa_conn_start(&a.c, T0), 0);
	uint8_t x = 'M';
	assert_int_equal(wn_mpa_conn_input(&a.c, &x, 1, T0 + WN_MPA_STARTUP_TIMEOUT_US, NULL),
			 -ETIMEDOUT);
	assert_true(a.timeout);

	/* a responder whose ULP never decides also times out */
	ca = base_cfg(&a, true);
	side_init(&a, &ca);
	side_init(&b, &cb);
	assert_int_equal(wn_mpa_conn_start(&a.c, T0), 0);
	assert_int_equal(wn_mpa_conn_start(&b.c, T0), 0);
	move(&a, &b, 7);
	assert_int_equal(wn_mpa_conn_state(&b.c), WN_MPA_CONN_REQ_RCVD);
	assert_int_equal(wn_mpa_conn_tick(&b.c, T0 + WN_MPA_STARTUP_TIMEOUT_US), -ETIMEDOUT);
	assert_int_equal(wn_mpa_conn_accept(&b.c, NULL, NULL, 0, T0), -EINVAL);
}

static void
test_rev1_peers(void **state)
{
	struct side i, r;
	struct wn_mpa_conn_cfg ci, cr;
	uint8_t buf[64];
	(void)state;

	/* Rev 1 initiator against an RFC 6581 responder: Rev 1 Reply, no S */
	ci = base_cfg(&i, true);
	ci.rev = 1;
	ci.caps.p2p = true;
	side_init(&i, &ci);
	cr = base_cfg(&r, false);
	cr.caps.ird = 7;
	cr.caps.ord = 3;
	side_init(&r, &cr);
	r.on_request = 1;
	assert_int_equal(wn_mpa_conn_start(&i.c, T0), 0);
	assert_int_equal(wn_mpa_conn_start(&r.c, T0), 0);
	size_t n = wn_mpa_conn_output(&i.c, buf, sizeof(buf));
	assert_int_equal(n, 20);
	assert_int_equal(buf[16] & WN_MPA_FLAG_S, 0);
	assert_int_equal(buf[17], 1);
	assert_int_equal(wn_mpa_conn_input(&r.c, buf, n, T0, NULL), 0);
	n = wn_mpa_conn_output(&r.c, buf, sizeof(buf));
	assert_int_equal(n, 20);
	assert_int_equal(buf[17], 1);
	assert_int_equal(buf[16] & WN_MPA_FLAG_S, 0);
	assert_int_equal(wn_mpa_conn_input(&i.c, buf, n, T0, NULL), 0);
	const struct wn_mpa_params *pr = wn_mpa_conn_params(&r.c);
	assert_false(pr->neg.enhanced);
	assert_int_equal(pr->neg.ird, 7); /* local values: sensible IRD/ORD for Rev 1 */
	assert_int_equal(pr->neg.ord, 3);
	const struct wn_mpa_params *pi = wn_mpa_conn_params(&i.c);
	assert_false(pi->neg.p2p);
	assert_int_equal(pi->neg.rtr, 0);
	assert_int_equal(pi->rev, 1);
	assert_true(send_fpdu(&i, &r, "rev1 data", 2) > 0);
	assert_int_equal(r.ulpdus, 1);

	/* a responder configured for Rev 1 does not speak RFC 6581 (RFC 6581 §10) */
	ci = base_cfg(&i, true);
	side_init(&i, &ci);
	cr = base_cfg(&r, false);
	cr.rev = 1;
	side_init(&r, &cr);
	assert_int_equal(wn_mpa_conn_start(&i.c, T0), 0);
	assert_int_equal(wn_mpa_conn_start(&r.c, T0), 0);
	assert_int_equal(move(&i, &r, 8), -EPROTO);
	assert_int_equal(r.fs, WN_MPA_FRAME_ENH_REFUSED);

	/* Rev-1-only responder (RFC 6581 off): the enhanced Request is malformed */
	cr = base_cfg(&r, false);
	cr.rules = (struct wn_mpa_frame_rules){.rev_mask = 2 | 4, .enhanced = false,
					       .pd_max = 512};
	side_init(&r, &cr);
	ci = base_cfg(&i, true);
	side_init(&i, &ci);
	assert_false(wn_mpa_conn_enhanced_unanswered(&i.c)); /* not started */
	assert_int_equal(wn_mpa_conn_start(&i.c, T0), 0);
	assert_int_equal(wn_mpa_conn_start(&r.c, T0), 0);
	assert_true(wn_mpa_conn_enhanced_unanswered(&i.c));
	assert_false(wn_mpa_conn_enhanced_unanswered(&r.c)); /* a responder asks nothing */
	assert_int_equal(move(&i, &r, 8), -EPROTO);
	assert_int_equal(r.fs, WN_MPA_FRAME_ENH_REFUSED);
	/* the responder closes: the initiator's Request is still unanswered, enhanced */
	assert_true(wn_mpa_conn_enhanced_unanswered(&i.c));
	/* ... and the initiator's retry with Rev 1 works (RFC 6581 §10) */
	ci.rev = 1;
	side_init(&i, &ci);
	side_init(&r, &cr);
	r.on_request = 1;
	assert_int_equal(wn_mpa_conn_start(&i.c, T0), 0);
	assert_false(wn_mpa_conn_enhanced_unanswered(&i.c)); /* unenhanced: nothing to retry */
	assert_int_equal(wn_mpa_conn_start(&r.c, T0), 0);
	pump(&i, &r, 8);
	assert_int_equal(wn_mpa_conn_state(&i.c), WN_MPA_CONN_FULL);
	assert_int_equal(wn_mpa_conn_state(&r.c), WN_MPA_CONN_FULL);
	assert_false(wn_mpa_conn_enhanced_unanswered(&i.c));

	/* an RFC 5044 peer answering Rev 1 to our Rev 2 Request is accepted */
	ci = base_cfg(&i, true);
	ci.caps.p2p = true;
	side_init(&i, &ci);
	assert_int_equal(wn_mpa_conn_start(&i.c, T0), 0);
	struct wn_mpa_frame f = {.type = WN_MPA_FRAME_REPLY, .rev = 1, .crc = true};
	int m = wn_wire_mpa_frame_encode(&f, buf, sizeof(buf));
	assert_int_equal(wn_mpa_conn_input(&i.c, buf, (size_t)m, T0, NULL), 0);
	assert_int_equal(wn_mpa_conn_state(&i.c), WN_MPA_CONN_FULL);
	assert_false(wn_mpa_conn_enhanced_unanswered(&i.c)); /* answered */
	assert_false(wn_mpa_conn_params(&i.c)->neg.p2p);
	assert_int_equal(wn_mpa_conn_params(&i.c)->neg.ird, 4);
}

static void
test_api_errors(void **state)
{
	struct side s;
	struct wn_mpa_conn_cfg cfg = base_cfg(&s, true);
	(void)state;

	cfg.rev = 3;
	assert_int_equal(wn_mpa_conn_init(&s.c, &cfg), -EINVAL);
	cfg.rev = 2;
	cfg.caps.ird = 0x4000;
	assert_int_equal(wn_mpa_conn_init(&s.c, &cfg), -EINVAL);
	cfg.caps.ird = 1;
	cfg.pd_len = 10;
	cfg.pd = NULL;
	assert_null(wn_mpa_conn_create(&cfg));
	assert_int_equal(errno, EINVAL);
	/* Private Data of 509 octets leaves no room for the enhanced data */
	static uint8_t pd[509];
	cfg.pd = pd;
	cfg.pd_len = 509;
	struct wn_mpa_conn *c = wn_mpa_conn_create(&cfg);
	assert_non_null(c);
	assert_int_equal(wn_mpa_conn_start(c, T0), -EINVAL);
	wn_mpa_conn_free(c);
	cfg.pd_len = 508;
	c = wn_mpa_conn_create(&cfg);
	assert_non_null(c);
	assert_int_equal(wn_mpa_conn_start(c, T0), 0);
	assert_int_equal(wn_mpa_conn_output_pending(c), 532);
	assert_int_equal(wn_mpa_conn_start(c, T0), -EINVAL);
	assert_int_equal(wn_mpa_conn_accept(c, NULL, NULL, 0, T0), -EINVAL);
	assert_int_equal(wn_mpa_conn_reject(c, NULL, 0), -EINVAL);
	assert_string_equal(wn_mpa_conn_state_str(wn_mpa_conn_state(c)), "req_sent");
	wn_mpa_conn_free(c);
	wn_mpa_conn_free(NULL);
}



static void
test_rtr_messages(void **state)
{
	/* vectors in the RFC 5044 Figure 5 form: whole FPDUs, Markers off, CRC on */
	static const uint8_t write_fpdu[20] = {0x00, 0x0e, 0xc1, 0x40, 0x00, 0x00, 0x00,
					       0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
					       0x00, 0x00, 0xeb, 0xd3, 0x4c, 0x5f};
	uint8_t read_fpdu[52] = {0x00, 0x2e, 0x41, 0x41, 0x00, 0x00, 0x00, 0x00, 0x00,
				 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
				 0x00, 0x00, 0x00, 0x00, 0x00, 0x01};
	struct wn_mpa_stream st = {.seq_start = 0, .markers = false, .crc = true};
	uint8_t u[64], out[64];
	struct iovec iov = {u, 0};
	(void)state;

	read_fpdu[39] = 0x01;
	read_fpdu[48] = 0x27;
	read_fpdu[49] = 0xdb;
	read_fpdu[50] = 0xd7;
	read_fpdu[51] = 0xe7;
	int n = wn_mpa_rtr_build(WN_MPA_RTR_WRITE, 1, 1, u, sizeof(u));
	assert_int_equal(n, 14);
	iov.iov_len = (size_t)n;
	assert_int_equal(wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, 0, &st), 20);
	assert_memory_equal(out, write_fpdu, 20);
	assert_int_equal(wn_mpa_rtr_classify(u, (size_t)n, (uint16_t)n), WN_MPA_RTR_WRITE);

	n = wn_mpa_rtr_build(WN_MPA_RTR_READ, 1, 1, u, sizeof(u));
	assert_int_equal(n, 46);
	iov.iov_len = (size_t)n;
	assert_int_equal(wn_wire_mpa_fpdu_build(out, sizeof(out), &iov, 1, 0, &st), 52);
	assert_memory_equal(out, read_fpdu, 52);
	assert_int_equal(wn_mpa_rtr_classify(u, (size_t)n, (uint16_t)n), WN_MPA_RTR_READ);
	u[33] = 1; /* a Read of 1 octet is not a zero-length RTR */
	assert_int_equal(wn_mpa_rtr_classify(u, (size_t)n, (uint16_t)n), 0);
	assert_int_equal(wn_mpa_rtr_classify(u, 18, (uint16_t)n), WN_MPA_RTR_READ);

	n = wn_mpa_rtr_build(WN_MPA_RTR_SEND, 1, 7, u, sizeof(u));
	assert_int_equal(n, 18);
	static const uint8_t send_rtr[18] = {0x41, 0x43, 0, 0, 0, 0, 0, 0, 0, 0,
					     0,    0,    0, 7, 0, 0, 0, 0};
	assert_memory_equal(u, send_rtr, 18);
	assert_int_equal(wn_mpa_rtr_classify(u, 18, 18), WN_MPA_RTR_SEND);
	/* a Send with payload, a Write with payload, too few octets */
	assert_int_equal(wn_mpa_rtr_classify(u, 18, 19), 0);
	static const uint8_t wr[2] = {0xc1, 0x40};
	assert_int_equal(wn_mpa_rtr_classify(wr, 2, 15), 0);
	assert_int_equal(wn_mpa_rtr_classify(wr, 1, 14), -1);
	/* errors */
	assert_int_equal(wn_mpa_rtr_build(WN_MPA_RTR_READ, 1, 1, u, 45), -ENOSPC);
	assert_int_equal(wn_mpa_rtr_build((enum wn_mpa_rtr)3, 1, 1, u, sizeof(u)), -EINVAL);
}

static void
test_rtr_check(void **state)
{
	(void)state;
	for (int ok = 0; ok < 2; ok++) {
		struct side i, r;
		struct wn_mpa_conn_cfg ci = base_cfg(&i, true), cr = base_cfg(&r, false);

		ci.caps.p2p = true;
		cr.caps.rtr = WN_MPA_RTR_READ;
		cr.check_rtr = true;
		side_init(&i, &ci);
		side_init(&r, &cr);
		r.on_request = 1;
		connect_pair(&i, &r, 3);
		assert_int_equal(wn_mpa_conn_params(&i.c)->neg.rtr, WN_MPA_RTR_READ);
		uint8_t u[64], out[128];
		/* ok: the agreed Read RTR; not ok: a Write RTR the Reply did not offer */
		int n = wn_mpa_rtr_build(ok ? WN_MPA_RTR_READ : WN_MPA_RTR_WRITE, 1, 1, u,
					 sizeof(u));
		struct iovec iov = {u, (size_t)n};
		int w = wn_mpa_conn_frame(&i.c, &iov, 1, out, sizeof(out));
		assert_true(w > 0);
		int rc = wn_mpa_conn_input(&r.c, out, (size_t)w, T0, NULL);
		if (ok) {
			assert_int_equal(rc, 0);
			assert_int_equal(r.ev[WN_MPA_EV_TX_READY], 1);
		} else {
			assert_int_equal(rc, -EPROTO);
			assert_int_equal(r.err, WN_MPA_ERR_NO_RTR);
			assert_true(r.send_terminate);
			assert_int_equal(r.ev[WN_MPA_EV_TX_READY], 0);
			assert_int_equal(r.ev[WN_MPA_EV_ERROR], 1);
			assert_int_equal(wn_mpa_conn_state(&r.c), WN_MPA_CONN_ERROR);
		}
	}
}

/* ---- siw on the other end: replay its captures (test/data/siw) --------------------------- */

static const char *src_root;

struct flow {
	uint16_t sport, dport;
	uint32_t next;
	bool synced;
	uint8_t data[65536];
	size_t len;
};

/* Minimal pcap reader (Ethernet, IPv4, TCP): ordered payload of up to 4 directions. */
static unsigned int
load_flows(const char *name, struct flow *flows, unsigned int max)
{
	static uint8_t file[1 << 20];
	char path[512];
	unsigned int nf = 0;

	snprintf(path, sizeof(path), "%s/test/data/siw/%s", src_root, name);
	FILE *fp = fopen(path, "rb");
	if (fp == NULL)
		fail_msg("%s: not found in %s/test/data/siw", name, src_root);
	size_t len = fread(file, 1, sizeof(file), fp);
	fclose(fp);
	for (size_t off = 24; off + 16 <= len;) {
		const uint8_t *r = file + off;
		uint32_t incl = r[8] | r[9] << 8 | r[10] << 16 | (uint32_t)r[11] << 24;
		const uint8_t *ip = r + 16 + 14;
		off += 16 + incl;
		if (incl < 54 || r[16 + 12] != 0x08 || r[16 + 13] != 0x00 || ip[9] != 6)
			continue;
		size_t iph = (size_t)(ip[0] & 15) * 4;
		const uint8_t *tcp = ip + iph;
		size_t th = (size_t)(tcp[12] >> 4) * 4;
		size_t plen = (size_t)(ip[2] << 8 | ip[3]) - iph - th;
		uint16_t sp = (uint16_t)(tcp[0] << 8 | tcp[1]), dp = (uint16_t)(tcp[2] << 8 | tcp[3]);
		uint32_t seq = (uint32_t)tcp[4] << 24 | (uint32_t)tcp[5] << 16 |
			       (uint32_t)tcp[6] << 8 | tcp[7];
		struct flow *f = NULL;
		for (unsigned int i = 0; i < nf; i++)
			if (flows[i].sport == sp && flows[i].dport == dp)
				f = &flows[i];
		if (f == NULL) {
			if (nf == max)
				continue;
			f = &flows[nf++];
			f->sport = sp;
			f->dport = dp;
			f->len = 0;
			f->synced = false;
		}
		if (tcp[13] & 0x02) {
			f->next = seq + 1;
			f->synced = true;
			continue;
		}
		if (!f->synced || seq != f->next || f->len + plen > sizeof(f->data))
			continue; /* these captures have no loss or retransmission */
		memcpy(f->data + f->len, tcp + th, plen);
		f->len += plen;
		f->next += (uint32_t)plen;
	}
	return nf;
}

/* Feed @p n octets in 3-octet chunks; @return the first error. */
static int
feed_conn(struct side *s, const uint8_t *p, size_t n)
{
	for (size_t k = 0; k < n; k += 3) {
		size_t m = n - k < 3 ? n - k : 3;
		int rc = wn_mpa_conn_input(&s->c, p + k, m, T0 + 5, NULL);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static void
test_siw_replay(void **state)
{
	static const char *const files[] = {"rping-crc.pcap", "rping-p2p.pcap",
					    "rping-mpav1.pcap"};
	static struct flow flows[4];
	unsigned int done = 0;
	(void)state;

	if (src_root == NULL)
		fail_msg("usage: test_mpa_conn SOURCE_ROOT (the captures are in test/data/siw)");
	for (unsigned int k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		unsigned int nf = load_flows(files[k], flows, 4);
		struct flow *ini = NULL, *rsp = NULL;
		bool p2p = strcmp(files[k], "rping-p2p.pcap") == 0;

		for (unsigned int i = 0; i < nf; i++)
			if (flows[i].len >= 16 && memcmp(flows[i].data, WN_MPA_KEY_REQ, 16) == 0)
				ini = &flows[i];
		if (ini == NULL)
			continue;
		for (unsigned int i = 0; i < nf; i++)
			if (flows[i].sport == ini->dport && flows[i].dport == ini->sport)
				rsp = &flows[i];
		assert_non_null(rsp);
		size_t rq = 20 + (size_t)(ini->data[18] << 8 | ini->data[19]);
		size_t rp = 20 + (size_t)(rsp->data[18] << 8 | rsp->data[19]);

		/* warpnic as the responder, siw's initiator stream as input */
		struct side r;
		struct wn_mpa_conn_cfg cr = base_cfg(&r, false);
		cr.crc = false; /* let siw's C bit decide */
		cr.caps.rtr = WN_MPA_RTR_WRITE;
		cr.rx_hdr_len = 18;
		cr.check_rtr = true; /* siw's first p2p FPDU is its zero-length Write RTR */
		side_init(&r, &cr);
		assert_int_equal(wn_mpa_conn_start(&r.c, T0), 0);
		assert_int_equal(feed_conn(&r, ini->data, rq), 0);
		assert_int_equal(r.ev[WN_MPA_EV_REQUEST], 1);
		assert_int_equal(wn_mpa_conn_accept(&r.c, NULL, NULL, 0, T0 + 5), 0);
		uint8_t reply[WN_MPA_FRAME_MAX];
		size_t n = wn_mpa_conn_output(&r.c, reply, sizeof(reply));
		if (p2p) {
			/* what siw itself answered: 80 01 80 01 */
			assert_int_equal(n, 24);
			assert_memory_equal(reply + 20, rsp->data + 20, 4);
		}
		assert_int_equal(feed_conn(&r, ini->data + rq, ini->len - rq), 0);
		assert_true(r.ulpdus > 0);
		assert_int_equal(r.ev[WN_MPA_EV_TX_READY], 1);
		assert_int_equal(r.ev[WN_MPA_EV_ERROR], 0);

		/* warpnic as the initiator, siw's responder stream as input */
		struct side i;
		struct wn_mpa_conn_cfg ci = base_cfg(&i, true);
		ci.rev = ini->data[17];
		ci.crc = (ini->data[16] & WN_MPA_FLAG_C) != 0;
		ci.caps = (struct wn_mpa_caps){.ird = 1, .ord = 1, .p2p = p2p,
					       .rtr = WN_MPA_RTR_WRITE | WN_MPA_RTR_READ};
		ci.rx_hdr_len = 18;
		side_init(&i, &ci);
		assert_int_equal(wn_mpa_conn_start(&i.c, T0), 0);
		uint8_t req[WN_MPA_FRAME_MAX];
		n = wn_mpa_conn_output(&i.c, req, sizeof(req));
		if (p2p) {
			/* the same Request siw sent: 80 01 c0 01 */
			assert_int_equal(n, rq);
			assert_memory_equal(req + 16, ini->data + 16, rq - 16);
		}
		assert_int_equal(feed_conn(&i, rsp->data, rp), 0);
		assert_int_equal(i.ev[WN_MPA_EV_ESTABLISHED], 1);
		if (p2p)
			assert_int_equal(wn_mpa_conn_params(&i.c)->neg.rtr, WN_MPA_RTR_WRITE);
		assert_int_equal(feed_conn(&i, rsp->data + rp, rsp->len - rp), 0);
		assert_true(i.ulpdus > 0 || rsp->len == rp); /* mpav1: siw sent no FPDU */
		assert_int_equal(i.ev[WN_MPA_EV_ERROR], 0);
		done++;
	}
	assert_int_equal(done, 3);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_client_server),
		cmocka_unit_test(test_markers_and_crc),
		cmocka_unit_test(test_p2p_rtr),
		cmocka_unit_test(test_reject),
		cmocka_unit_test(test_negotiation_failures),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_initiator_initiator),
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_rev1_peers),
		cmocka_unit_test(test_api_errors),
		cmocka_unit_test(test_rtr_messages),
		cmocka_unit_test(test_rtr_check),
		cmocka_unit_test(test_siw_replay),
	};
	src_root = argc > 1 ? argv[1] : NULL;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
