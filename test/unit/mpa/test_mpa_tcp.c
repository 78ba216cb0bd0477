/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA over TCP as a DDP lower layer (wn_mpa_tcp.h): two instances over two TCP stacks wired
 * back to back (test/unit/tcp/harness.h, virtual clock), driven through the lib/llp ops the
 * way lib/cm and lib/rnic drive them: listen, connect, the MPA exchange with Private Data and
 * RFC 6581 IRD/ORD, accept and reject, ULPDUs both ways (copied and zero-copy), fencing,
 * a CRC error below TCP, startup timeout, close and the freeing of streams.
 *
 * What would break if these failed: iWARP connection setup over TCP, FPDU framing into TCP
 * records, whole-ULPDU delivery, zero-copy completion and region pins, the Terminate after an
 * MPA error, streams leaking or freed under the caller, a WQE completed before the peer has
 * it or a region unpinned (and DMA-unmapped) while a NIC may still read it.
 */
#include "../tcp/harness.h"

#include <errno.h>

#include "wn_mpa.h"
#include "wn_mpa_tcp.h"

#define PORT 4791
#define MAXEV 32

struct owner {
	struct wn_llp *l;
	enum wn_llp_event_type ev[MAXEV];
	unsigned int n_ev;
	struct wn_llp_event last_err;
	uint16_t peer_ird, peer_ord;
	uint8_t pd[16];
	uint16_t pd_len;
	struct wn_llp_params params;
	uint8_t *rx;          /* received ULPDUs, concatenated */
	size_t rx_len;
	unsigned int rx_n;
	unsigned int releases;
	uint32_t released_wqe[64];
	bool accept_in_request; /* accept from inside the REQUEST upcall */
	unsigned int enh_unanswered; /* EOF/CLOSED events with enh_unanswered */
	bool peer_enhanced;
	bool refuse;          /* hold every ULPDU (-EAGAIN: no receive posted) */
	unsigned int rx_n_at_eof;
	bool reply_on_rx;     /* answer each ULPDU with one of its own, from inside the upcall */
	unsigned int rx_n_at_release; /* rx_n when the last tx_release came */
};

static struct wn_llp_proto *proto[2];
static struct owner own[2];
static int pins, unpins;

static unsigned int
count(const struct owner *o, enum wn_llp_event_type t)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < o->n_ev; i++)
		n += o->ev[i] == t;
	return n;
}

static void
up_event(void *arg, struct wn_llp *l, const struct wn_llp_event *ev)
{
	struct owner *o = arg;

	assert_ptr_equal(l, o->l);
	assert_true(o->n_ev < MAXEV);
	o->ev[o->n_ev++] = ev->type;
	if (ev->type == WN_LLP_EV_EOF)
		o->rx_n_at_eof = o->rx_n;
	if ((ev->type == WN_LLP_EV_EOF || ev->type == WN_LLP_EV_CLOSED) && ev->enh_unanswered)
		o->enh_unanswered++;
	if (ev->peer != NULL) {
		o->peer_enhanced = ev->peer->enhanced;
		o->peer_ird = ev->peer->ird;
		o->peer_ord = ev->peer->ord;
		o->pd_len = ev->peer->pd_len;
		memcpy(o->pd, ev->peer->pd, RTE_MIN(ev->peer->pd_len, (uint16_t)sizeof(o->pd)));
	}
	if (ev->params != NULL)
		o->params = *ev->params;
	if (ev->type == WN_LLP_EV_ERROR)
		o->last_err = *ev;
	if (ev->type == WN_LLP_EV_REQUEST && o->accept_in_request)
		assert_int_equal(wn_llp_accept(l, &(struct wn_llp_caps){8, 8}, NULL, 0), 0);
}

static int
up_ulpdu(void *arg, const uint8_t *u, size_t len)
{
	struct owner *o = arg;

	if (o->refuse)
		return -EAGAIN;
	o->rx = realloc(o->rx, o->rx_len + len);
	assert_non_null(o->rx);
	memcpy(o->rx + o->rx_len, u, len);
	o->rx_len += len;
	o->rx_n++;
	if (o->reply_on_rx) {
		struct wn_llp_ulpdu r = {.hdr = {0x41, 0x01}, .hdr_len = 14, .len = 14};

		assert_int_equal(wn_llp_send(o->l, &r), 0);
	}
	return 0;
}

static void
up_release(void *arg, uint32_t wqe)
{
	struct owner *o = arg;

	o->released_wqe[o->releases++ % 64] = wqe;
	o->rx_n_at_release = o->rx_n;
}

static const struct wn_llp_up ups = {
	.event = up_event, .ulpdu = up_ulpdu, .tx_release = up_release};

static int
incoming(void *arg, struct wn_llp *l)
{
	struct owner *o = arg;

	assert_null(o->l);
	o->l = l;
	wn_llp_set_up(l, &ups, o);
	return 0;
}

static int
pin(void *arg, uint32_t stag, bool dma)
{
	(void)arg;
	(void)dma;
	if (stag == 0xdead)
		return -EINVAL; /* a window: copied instead */
	pins++;
	return 0;
}

static void
unpin(void *arg, uint32_t stag)
{
	(void)arg;
	(void)stag;
	unpins++;
}

static struct hx h;

static void
run(uint64_t us)
{
	uint64_t end = h.now + us;

	do {
		wn_llp_poll(proto[0], h.now);
		wn_llp_poll(proto[1], h.now);
		hx_step(&h);
		h.now += 100;
	} while (h.now < end);
}

static uint8_t rev_b; /* non-zero: B's MPA revision (an unenhanced responder: 1) */

static void
setup_conf(const struct wn_mpa_tcp_conf *tmpl)
{
	hx_init(&h);
	pins = unpins = 0;
	for (int i = 0; i < 2; i++) {
		struct wn_mpa_tcp_conf c = *tmpl;

		if (i == 1 && rev_b != 0)
			c.rev = rev_b;

		c.tcp = h.s[i].tcp;
		c.index = (uint16_t)i;
		c.pin = pin;
		c.unpin = unpin;
		proto[i] = wn_mpa_tcp_create(&c);
		assert_non_null(proto[i]);
		free(own[i].rx);
		memset(&own[i], 0, sizeof(own[i]));
		wn_llp_poll(proto[i], h.now); /* the instance's clock is the harness's */
	}
}

static int
setup(void **state)
{
	struct wn_mpa_tcp_conf c = {.rev = 2, .crc = true, .p2p = true,
				    .rtr = WN_MPA_RTR_ALL, .timeout_us = 2000000};

	(void)state;
	setup_conf(&c);
	return 0;
}

static int
setup_rev1_b(void **state)
{
	rev_b = 1;
	setup(state);
	rev_b = 0;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	for (int i = 0; i < 2; i++) {
		wn_mpa_tcp_free(proto[i]);
		proto[i] = NULL;
	}
	hx_fini(&h);
	return 0;
}

static struct wn_llp_listener *
listen_b(void)
{
	struct wn_llp_ep ep = {.addr = h.s[1].ip, .port = PORT};
	struct wn_llp_listener *ls = wn_llp_listen(proto[1], &ep, incoming, &own[1]);

	assert_non_null(ls);
	return ls;
}

static void
connect_a_rev(const char *pd, uint8_t rev)
{
	struct wn_llp_connect c = {
		.local = {.addr = h.s[0].ip, .port = 40000},
		.remote = {.addr = h.s[1].ip, .port = PORT},
		.caps = {.ird = 4, .ord = 2},
		.pd = (const uint8_t *)pd,
		.pd_len = pd != NULL ? (uint16_t)strlen(pd) : 0,
		.rev = rev,
		.up = &ups,
		.up_arg = &own[0],
	};

	own[0].l = wn_llp_connect(proto[0], &c);
	assert_non_null(own[0].l);
	assert_true(own[0].l->active);
}

static void
connect_a(const char *pd)
{
	connect_a_rev(pd, 0);
}

static void
send_one(int side, const uint8_t *hdr, uint16_t hlen, const uint8_t *pay, uint32_t plen,
	 int want)
{
	struct wn_llp_ulpdu u = {0};

	memcpy(u.hdr, hdr, hlen);
	u.hdr_len = hlen;
	u.len = hlen + plen;
	if (plen > 0) {
		u.n_iov = 1;
		u.iov[0].base = pay;
		u.iov[0].len = plen;
		u.iov[0].stag = 0x100;
		u.src = WN_LLP_SRC_SQ;
		u.last = 1;
		u.wqe = 7;
		u.msg_len = plen;
	}
	assert_int_equal(wn_llp_send(own[side].l, &u), want);
}

/* An RTR: a zero-length tagged Write (RFC 6581 §9.2). */
static void
send_rtr(int side)
{
	uint8_t rtr[WN_MPA_RTR_WRITE_LEN];

	assert_int_equal(wn_mpa_rtr_build(WN_MPA_RTR_WRITE, 0x1234, 1, rtr, sizeof(rtr)),
			 (int)sizeof(rtr));
	send_one(side, rtr, sizeof(rtr), NULL, 0, 0);
}

static void
establish(void)
{
	listen_b();
	connect_a("hello");
	run(2000);
	assert_non_null(own[1].l);
	assert_false(own[1].l->active);
	assert_int_equal(count(&own[1], WN_LLP_EV_REQUEST), 1);
	assert_int_equal(own[1].pd_len, 5);
	assert_memory_equal(own[1].pd, "hello", 5);
	assert_int_equal(own[1].peer_ird, 4);
	assert_int_equal(own[1].peer_ord, 2);
	assert_int_equal(wn_llp_accept(own[1].l, &(struct wn_llp_caps){8, 8},
				       (const uint8_t *)"hi", 2), 0);
	assert_int_equal(count(&own[1], WN_LLP_EV_ESTABLISHED), 1);
	assert_false(wn_llp_tx_ready(own[1].l)); /* fenced until the first FPDU */
	run(2000);
	assert_int_equal(count(&own[0], WN_LLP_EV_ESTABLISHED), 1);
	assert_int_equal(count(&own[0], WN_LLP_EV_TX_READY), 1);
	assert_int_equal(own[0].pd_len, 2);
	assert_true(own[0].params.p2p);
	assert_int_not_equal(own[0].params.rtr, 0);
	assert_int_equal(own[0].params.ord, 2);
	assert_true(own[0].params.crc);
	assert_true(own[0].params.mulpdu >= 1000);
	assert_true(wn_llp_tx_ready(own[0].l));
	send_rtr(0);
	run(2000);
	assert_int_equal(own[1].rx_n, 1);
	assert_int_equal(count(&own[1], WN_LLP_EV_TX_READY), 1);
	assert_true(wn_llp_tx_ready(own[1].l));
}

static void
test_setup_and_data(void **state)
{
	uint8_t hdr[18] = {0x41, 0x01}; /* an untagged DDP header, as far as MPA cares */
	uint8_t *pay = hx_pattern(1200, 7);
	size_t want = 0;

	(void)state;
	establish();
	own[1].rx_len = 0;
	own[1].rx_n = 0;
	for (int i = 0; i < 50; i++) {
		send_one(0, hdr, sizeof(hdr), pay, 1200, 0);
		send_one(1, hdr, sizeof(hdr), pay, 600, 0);
		want += sizeof(hdr) + 1200;
		run(300);
	}
	run(5000);
	assert_int_equal(own[1].rx_n, 50);
	assert_int_equal(own[1].rx_len, want);
	for (int i = 0; i < 50; i++)
		assert_memory_equal(own[1].rx + i * (sizeof(hdr) + 1200) + sizeof(hdr), pay,
				    1200);
	assert_int_equal(own[0].rx_n, 50);
	free(pay);

	struct wn_llp_stats st;
	struct wn_llp_info in;

	wn_llp_stats(proto[0], &st);
	assert_int_equal(st.tx_ulpdus, 51);
	assert_int_equal(st.copy_ulpdus, 50);
	assert_int_equal(st.zc_ulpdus, 0);
	wn_llp_info(own[0].l, &in);
	assert_true(in.full);
	assert_true(in.active);
	assert_string_equal(in.transport.state, "ESTABLISHED");
	assert_int_equal(in.tx_ulpdus, 51);

	/* close: the peer sees the end of the stream, both see CLOSED, streams are freed */
	assert_int_equal(wn_llp_close(own[0].l), 0);
	assert_false(wn_llp_tx_ready(own[0].l));
	run(5000);
	assert_int_equal(count(&own[1], WN_LLP_EV_EOF), 1);
	assert_int_equal(wn_llp_close(own[1].l), 0);
	run(200000);
	assert_int_equal(count(&own[0], WN_LLP_EV_CLOSED) + count(&own[1], WN_LLP_EV_CLOSED), 1);
	wn_llp_info(own[0].l, &in);
	assert_true(in.transport.quiet); /* TIME_WAIT: the peer has it all */
	wn_llp_release(own[0].l);
	wn_llp_release(own[1].l);
	run(5000);
	/* the side that closed last is gone and freed; the other waits in TIME_WAIT */
	assert_int_equal(wn_mpa_tcp_streams(proto[1]), 0);
	assert_int_equal(wn_mpa_tcp_streams(proto[0]), 1);
}

/*
 * A FIN behind ULPDUs the owner holds (a Send with no receive posted, RNR hold): the end of
 * the stream comes after them, once they are taken, never before. fio's send verb met this:
 * its client closes right after its last Send completes, and an EOF that overtook the held
 * Sends flushed the receives posted for them.
 */
static void
test_hold_then_eof(void **state)
{
	uint8_t hdr[18] = {0x41, 0x01};
	uint8_t *pay = hx_pattern(700, 3);

	(void)state;
	establish();
	assert_true(wn_llp_can_hold(own[1].l));
	own[1].rx_n = 0;
	own[1].rx_len = 0;
	own[1].refuse = true;
	for (int i = 0; i < 3; i++)
		send_one(0, hdr, sizeof(hdr), pay, 700, 0);
	run(3000);
	assert_int_equal(wn_llp_close(own[0].l), 0);
	run(5000);
	assert_int_equal(own[1].rx_n, 0);
	assert_int_equal(count(&own[1], WN_LLP_EV_EOF), 0); /* held behind the first ULPDU */
	assert_true(wn_llp_eof_held(own[1].l));             /* and the owner can tell */
	assert_false(wn_llp_eof_held(own[0].l));
	assert_int_equal(wn_llp_rx_resume(own[1].l), -EAGAIN); /* still refused */
	assert_int_equal(count(&own[1], WN_LLP_EV_EOF), 0);
	own[1].refuse = false;
	assert_int_equal(wn_llp_rx_resume(own[1].l), 0);
	assert_int_equal(own[1].rx_n, 3);
	assert_int_equal(count(&own[1], WN_LLP_EV_EOF), 1);
	assert_false(wn_llp_eof_held(own[1].l));
	assert_int_equal(own[1].rx_n_at_eof, 3);
	for (int i = 0; i < 3; i++)
		assert_memory_equal(own[1].rx + i * (sizeof(hdr) + 700) + sizeof(hdr), pay, 700);
	assert_int_equal(wn_llp_close(own[1].l), 0);
	run(200000);
	wn_llp_release(own[0].l);
	wn_llp_release(own[1].l);
	run(5000);
	free(pay);
}

static void
test_reject(void **state)
{
	(void)state;
	listen_b();
	connect_a(NULL);
	run(2000);
	assert_int_equal(wn_llp_reject(own[1].l, (const uint8_t *)"busy", 4), 0);
	run(2000);
	assert_int_equal(count(&own[0], WN_LLP_EV_REJECTED), 1);
	assert_int_equal(own[0].pd_len, 4);
	assert_memory_equal(own[0].pd, "busy", 4);
	assert_int_equal(count(&own[0], WN_LLP_EV_ESTABLISHED), 0);
	/* nothing may be sent on a rejected stream */
	send_one(0, (const uint8_t *)"x", 1, NULL, 0, -EAGAIN);
}

static void
test_accept_inside_request(void **state)
{
	(void)state;
	own[1].accept_in_request = true;
	listen_b();
	connect_a(NULL);
	run(5000);
	assert_int_equal(count(&own[1], WN_LLP_EV_ESTABLISHED), 1);
	assert_int_equal(count(&own[0], WN_LLP_EV_ESTABLISHED), 1);
	/* the Request was taken once: what follows it is the stream's first FPDU, unharmed */
	send_rtr(0);
	send_one(0, (const uint8_t *)"\x41\x42\x43\x44", 4, NULL, 0, 0);
	run(2000);
	assert_int_equal(own[1].rx_n, 2);
	assert_int_equal(count(&own[1], WN_LLP_EV_ERROR), 0);
	assert_int_equal(count(&own[1], WN_LLP_EV_CLOSED), 0);
}

/* Instances with @p c (zero-copy on) and a connection from A to B, ready to send. */
static void
zc_establish(const struct wn_mpa_tcp_conf *c)
{
	teardown(NULL);
	setup_conf(c);
	assert_true(wn_mpa_tcp_zero_copy(proto[0]));
	listen_b();
	connect_a(NULL);
	run(2000);
	assert_int_equal(wn_llp_accept(own[1].l, NULL, NULL, 0), 0);
	run(2000);
	assert_true(wn_llp_tx_ready(own[0].l));
}

static void
test_zero_copy(void **state)
{
	struct wn_mpa_tcp_conf c = {.rev = 2, .crc = true, .markers = true, .zero_copy = true,
				    .zero_copy_min = 1024};
	uint8_t hdr[14] = {0x80, 0x01};
	uint8_t *pay = hx_pattern(4000, 3);
	struct wn_llp_stats st;

	(void)state;
	zc_establish(&c);
	/* a message of registered memory: referenced, its completion held */
	send_one(0, hdr, sizeof(hdr), pay, 1400, WN_LLP_TX_HELD);
	send_one(0, hdr, sizeof(hdr), pay + 1400, 1400, WN_LLP_TX_HELD);
	assert_int_equal(pins, 2);
	run(20000);
	assert_int_equal(own[1].rx_n, 2);
	assert_memory_equal(own[1].rx + sizeof(hdr), pay, 1400);
	assert_memory_equal(own[1].rx + 2 * sizeof(hdr) + 1400, pay + 1400, 1400);
	/* ACKed and in no mbuf: released, unpinned */
	assert_int_equal(own[0].releases, 2);
	assert_int_equal(own[0].released_wqe[0], 7);
	assert_int_equal(unpins, 2);
	/* below the threshold, or a region that cannot be pinned: copied */
	struct wn_llp_ulpdu u = {.hdr_len = sizeof(hdr), .n_iov = 1, .src = WN_LLP_SRC_SQ,
				 .msg_len = 4000, .len = sizeof(hdr) + 100};

	memcpy(u.hdr, hdr, sizeof(hdr));
	u.iov[0].base = pay;
	u.iov[0].len = 100;
	u.iov[0].stag = 0xdead;
	assert_int_equal(wn_llp_send(own[0].l, &u), 0);
	run(20000);
	wn_llp_stats(proto[0], &st);
	assert_int_equal(st.zc_ulpdus, 2);
	assert_int_equal(st.zc_released, 2);
	assert_int_equal(st.zc_fallback, 1);
	assert_int_equal(own[1].rx_n, 3);
	free(pay);
}

/*
 * Ack completions (wn_llp_ack_completions, InfiniBand RC): a copied message's last FPDU holds
 * its WQE until the peer acknowledges it, and what came with that acknowledgement (here the
 * peer's answer, sent from inside its receive upcall) is delivered first.
 */
static void
test_ack_completions(void **state)
{
	uint8_t last[14] = {0x41, 0x01}, middle[14] = {0x01, 0x01};
	uint8_t *pay = hx_pattern(3000, 9);

	(void)state;
	establish();
	assert_int_equal(wn_llp_ack_completions(own[0].l), 0);
	own[1].reply_on_rx = true;
	send_one(0, middle, sizeof(middle), pay, 1400, 0); /* not the message's last */
	send_one(0, last, sizeof(last), pay + 1400, 1400, WN_LLP_TX_HELD);
	{
		/* not a send WQE's (a Read Response): never held */
		struct wn_llp_ulpdu u = {.hdr_len = sizeof(last), .len = sizeof(last) + 10,
					 .n_iov = 1, .src = WN_LLP_SRC_RESP};

		memcpy(u.hdr, last, sizeof(last));
		u.iov[0].base = pay;
		u.iov[0].len = 10;
		assert_int_equal(wn_llp_send(own[0].l, &u), 0);
	}
	assert_int_equal(own[0].releases, 0);
	run(20000);
	assert_int_equal(own[1].rx_n, 4); /* the RTR of establish(), then the three */
	assert_int_equal(own[0].releases, 1);
	assert_int_equal(own[0].released_wqe[0], 7);
	/* the answers B sent with its ACK were delivered before the WQE completed */
	assert_int_equal(own[0].rx_n_at_release, 3);
	assert_int_equal(own[0].rx_n, 3);
	free(pay);
}

/*
 * A NIC whose PMD keeps the chains it sent until it reuses their descriptors (virtio, e1000):
 * the WQE completes once TCP's SND.UNA passes the FPDU (the peer has it), the regions stay
 * pinned (their DMA mapping with them) until the last mbuf referencing them is freed. The
 * payload goes at IOVA = VA (iova_va: regions mapped for the device).
 */
static void
test_zero_copy_nic_holds(void **state)
{
	struct wn_mpa_tcp_conf c = {.rev = 2, .crc = true, .zero_copy = true, .iova_va = true};
	uint8_t hdr[14] = {0x80, 0x01};
	uint8_t *pay = hx_pattern(4000, 5);
	struct wn_llp_stats st;
	unsigned int ext = 0;

	(void)state;
	zc_establish(&c);
	h.nic_keep = true;
	send_one(0, hdr, sizeof(hdr), pay, 1400, WN_LLP_TX_HELD);
	send_one(0, hdr, sizeof(hdr), pay + 1400, 1400, WN_LLP_TX_HELD);
	assert_int_equal(own[0].releases, 0); /* not ACKed yet */
	run(20000);
	assert_int_equal(own[1].rx_n, 2);
	assert_memory_equal(own[1].rx + 2 * sizeof(hdr) + 1400, pay + 1400, 1400);
	/* ACKed: both WQEs complete, in order, though the NIC still holds their mbufs */
	assert_int_equal(own[0].releases, 2);
	assert_int_equal(own[0].released_wqe[0], 7);
	assert_int_equal(pins, 2);
	assert_int_equal(unpins, 0);
	wn_llp_stats(proto[0], &st);
	assert_int_equal(st.zc_ulpdus, 2);
	assert_int_equal(st.zc_released, 0);
	/* every payload segment the NIC reads is client memory at IOVA = VA */
	assert_true(h.nkept > 0);
	for (unsigned int i = 0; i < h.nkept; i++)
		for (struct rte_mbuf *m = h.kept[i]; m != NULL; m = m->next) {
			if (!RTE_MBUF_HAS_EXTBUF(m))
				continue;
			assert_true((uint8_t *)m->buf_addr >= pay &&
				    (uint8_t *)m->buf_addr < pay + 2800);
			assert_int_equal(m->buf_iova, (rte_iova_t)(uintptr_t)m->buf_addr);
			ext++;
		}
	assert_true(ext >= 2);
	/* the NIC reuses its descriptors: the last references go, the regions are unpinned */
	hx_nic_free(&h);
	h.nic_keep = false;
	run(1000);
	assert_int_equal(unpins, 2);
	assert_int_equal(own[0].releases, 2); /* no second completion */
	wn_llp_stats(proto[0], &st);
	assert_int_equal(st.zc_released, 2);
	free(pay);
}

/* Instances with @p c (by reference) and a connection from A to B, ready to send. */
static void
ref_establish(const struct wn_mpa_tcp_conf *c)
{
	teardown(NULL);
	setup_conf(c);
	assert_false(wn_mpa_tcp_zero_copy(proto[0]));
	listen_b();
	connect_a(NULL);
	run(2000);
	assert_int_equal(wn_llp_accept(own[1].l, NULL, NULL, 0), 0);
	run(2000);
	assert_true(wn_llp_tx_ready(own[0].l));
}

/* One ULPDU of message @p wqe: @p plen octets of registered memory (STag @p stag). */
static int
send_part(const uint8_t *hdr, uint16_t hlen, const uint8_t *pay, uint32_t plen, uint32_t stag,
	  uint32_t wqe, uint32_t msg_len, bool last)
{
	struct wn_llp_ulpdu u = {.hdr_len = hlen, .len = hlen + plen, .n_iov = 1,
				 .src = WN_LLP_SRC_SQ, .last = last, .wqe = wqe,
				 .msg_len = msg_len};

	memcpy(u.hdr, hdr, hlen);
	u.iov[0].base = pay;
	u.iov[0].len = plen;
	u.iov[0].stag = stag;
	return wn_llp_send(own[0].l, &u);
}

/*
 * The default transmit (ref_tx): a message's FPDUs are referenced by TCP, copied once into the
 * segments, their CRC (and Markers) computed there; the peer's MPA checks every CRC, so a
 * wrong one would be an ERROR event. One hold per message, released once after the ACK of
 * its last FPDU, regions pinned until then; under loss every retransmission is copied from
 * the registered memory again. Inline data and a region that cannot be pinned are copied,
 * each counted with its reason.
 */
static void
test_ref_tx(void **state)
{
	struct wn_mpa_tcp_conf c = {.rev = 2, .crc = true, .markers = true, .ref_tx = true};
	uint8_t hdr[14] = {0x80, 0x01};
	uint8_t *pay = hx_pattern(200 * 1400, 9);
	struct wn_llp_stats st;
	size_t off = 0;

	(void)state;
	ref_establish(&c);
	assert_int_equal(send_part(hdr, sizeof(hdr), pay, 1400, 0x100, 9, 4200, false),
			 WN_LLP_TX_HELD);
	assert_int_equal(send_part(hdr, sizeof(hdr), pay + 1400, 1400, 0x100, 9, 4200, false), 0);
	assert_int_equal(send_part(hdr, sizeof(hdr), pay + 2800, 1400, 0x200, 9, 4200, true), 0);
	assert_int_equal(pins, 2);
	assert_int_equal(own[0].releases, 0); /* not before the peer has it */
	run(20000);
	assert_int_equal(count(&own[1], WN_LLP_EV_ERROR), 0);
	assert_int_equal(own[1].rx_n, 3);
	for (int i = 0; i < 3; i++)
		assert_memory_equal(own[1].rx + (i + 1) * sizeof(hdr) + i * 1400, pay + i * 1400,
				    1400);
	assert_int_equal(own[0].releases, 1);
	assert_int_equal(own[0].released_wqe[0], 9);
	assert_int_equal(unpins, 2);

	/* under loss and reordering: 197 one-FPDU messages, resent from registered memory */
	h.drop_pm = 50;
	h.reorder_pm = 50;
	own[1].rx_len = 0;
	own[1].rx_n = 0;
	for (uint32_t i = 3; i < 200; i++) {
		while (send_part(hdr, sizeof(hdr), pay + i * 1400, 1400, 0x100, i, 1400, true) ==
		       -EAGAIN)
			run(1000);
	}
	run(3000000);
	assert_int_equal(count(&own[1], WN_LLP_EV_ERROR), 0);
	assert_int_equal(own[1].rx_n, 197);
	for (uint32_t i = 3; i < 200; i++, off += sizeof(hdr) + 1400)
		assert_memory_equal(own[1].rx + off + sizeof(hdr), pay + i * 1400, 1400);
	assert_int_equal(own[0].releases, 198);
	assert_int_equal(pins, unpins);
	assert_true(hx_stats(&h, 0).tx_retrans > 0);
	assert_true(hx_stats(&h, 0).rec_crc >= 200);
	h.drop_pm = 0;
	h.reorder_pm = 0;

	/* inline data and a window are copied, each with its reason */
	struct wn_llp_ulpdu u = {.hdr_len = sizeof(hdr), .n_iov = 1, .msg_len = 100,
				 .len = sizeof(hdr) + 100, .last = 1};

	memcpy(u.hdr, hdr, sizeof(hdr));
	u.iov[0].base = pay;
	u.iov[0].len = 100;
	assert_int_equal(wn_llp_send(own[0].l, &u), 0);
	assert_int_equal(send_part(hdr, sizeof(hdr), pay, 100, 0xdead, 300, 100, true), 0);
	run(20000);
	assert_int_equal(own[1].rx_n, 199);
	wn_llp_stats(proto[0], &st);
	assert_int_equal(st.ref_ulpdus, 200);
	assert_int_equal(st.zc_ulpdus, 0);
	assert_int_equal(st.tokens, 198);
	assert_int_equal(st.zc_released, 198);
	assert_int_equal(st.copy_ulpdus, 2);
	assert_int_equal(st.copy_inline, 1);
	assert_int_equal(st.copy_unpinned, 1);
	assert_int_equal(st.copy_staged + st.copy_no_token + st.copy_other, 0);
	wn_llp_stats(proto[1], &st);
	assert_int_equal(st.crc_errors, 0);
	free(pay);
}

/*
 * Staged transmit (ref_tx off, no zero-copy): every payload copied, counted as staged; one
 * refused for room is not counted (it is offered again) and leaves the stream waiting for
 * room until TCP's ACK.
 */
static void
test_staged_tx(void **state)
{
	uint8_t hdr[14] = {0x80, 0x01};
	uint8_t *pay = hx_pattern(1400, 4);
	struct wn_llp_stats st;
	uint32_t sent = 0;
	int rc;

	(void)state;
	establish();
	assert_int_equal(send_part(hdr, sizeof(hdr), pay, 1400, 0x100, 1, 1400, true), 0);
	run(5000);
	assert_int_equal(own[1].rx_n, 2); /* the RTR and the Write */
	wn_llp_stats(proto[0], &st);
	assert_int_equal(st.copy_staged, 1);
	assert_int_equal(st.ref_ulpdus + st.tokens, 0);
	/* fill TCP's send buffer without running the network: the first refusal */
	while ((rc = send_part(hdr, sizeof(hdr), pay, 1400, 0x100, 1, 1400, true)) == 0)
		sent++;
	assert_int_equal(rc, -EAGAIN);
	assert_true(sent > 0);
	assert_true(own[0].l->tx_room_wait);
	wn_llp_stats(proto[0], &st);
	assert_int_equal(st.copy_staged, 1 + sent);
	run(5000);
	assert_false(own[0].l->tx_room_wait); /* the ACK made room */
	assert_int_equal(own[1].rx_n, 2 + sent);
	free(pay);
}

/* Corruption below TCP (the checksum made good again): MPA's CRC catches it. */
static bool
corrupt_payload(struct hx *hx, int from, struct rte_mbuf *m, void *arg)
{
	int *armed = arg;
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, 14);
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);
	uint32_t hl = (th->data_off >> 4) * 4u;
	uint32_t len = rte_be_to_cpu_16(ip->total_length) - 20 - hl;

	(void)hx;
	if (from != 0 || !hx_is_tcp(m) || *armed == 0 || len < 200)
		return false;
	*armed = 0;
	((uint8_t *)th + hl)[100] ^= 0x20;
	th->cksum = 0;
	th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	return false;
}

static void
test_crc_error_terminate(void **state)
{
	uint8_t hdr[18] = {0x41, 0x01};
	uint8_t *pay = hx_pattern(1000, 5);
	int armed = 1;

	(void)state;
	establish();
	send_one(1, hdr, sizeof(hdr), pay, 10, 0); /* B may send: it validated the RTR */
	run(2000);
	h.filter = corrupt_payload;
	h.filter_arg = &armed;
	send_one(0, hdr, sizeof(hdr), pay, 1000, 0);
	run(5000);
	assert_int_equal(armed, 0);
	assert_int_equal(count(&own[1], WN_LLP_EV_ERROR), 1);
	assert_true(own[1].last_err.crc);
	assert_true(own[1].last_err.send_terminate);
	assert_int_equal(own[1].last_err.term_layer, WN_TERM_LAYER_LLP);
	assert_int_equal(own[1].last_err.term_etype, WN_TERM_LLP_MPA);
	assert_int_equal(own[1].last_err.err, WN_MPA_ERR_CRC);
	assert_int_equal(own[1].rx_n, 1); /* the RTR; the corrupt FPDU placed nothing */
	/* RFC 5044 §8: the receiver still frames its Terminate */
	assert_true(wn_llp_tx_ready(own[1].l));
	send_one(1, hdr, sizeof(hdr), NULL, 0, 0);
	run(5000);
	assert_int_equal(own[0].rx_n, 2);

	struct wn_llp_stats st;

	wn_llp_stats(proto[1], &st);
	assert_int_equal(st.crc_errors, 1);
	free(pay);
}

static void
test_startup_timeout(void **state)
{
	(void)state;
	listen_b();
	connect_a(NULL);
	run(2000);
	assert_int_equal(count(&own[1], WN_LLP_EV_REQUEST), 1);
	/* the responder's ULP never decides: the startup timer fires on its side */
	run(3 * 1000 * 1000);
	assert_int_equal(count(&own[1], WN_LLP_EV_ERROR), 1);
	assert_int_equal(own[1].last_err.err, WN_MPA_ERR_CONN_LOST);
	assert_false(own[1].last_err.send_terminate);
}

/*
 * An unenhanced (Rev 1 only) responder closes the connection on our enhanced Request (RFC
 * 6581 §10): the initiator's end of stream says so (enh_unanswered), whether the responder
 * closes or resets; a second connect with rev 1 gets through, unenhanced: no IRD/ORD
 * negotiation (our own values), no peer-to-peer mode, Rev 1 both ways, data flows.
 */
static void
test_unenhanced_responder(void **state)
{
	uint8_t hdr[18] = {0x41, 0x01};

	(void)state;
	listen_b();
	for (int reset = 0; reset < 2; reset++) {
		connect_a("hello");
		run(2000);
		/* B cannot parse the enhanced Request: a malformed frame, no Request reported */
		assert_int_equal(count(&own[1], WN_LLP_EV_REQUEST), 0);
		assert_int_equal(count(&own[1], WN_LLP_EV_ERROR), 1);
		assert_int_equal(own[1].last_err.err, WN_MPA_ERR_BAD_FRAME);
		if (reset)
			wn_llp_abort(own[1].l); /* what lib/cm does with a setup error */
		else
			assert_int_equal(wn_llp_close(own[1].l), 0);
		run(5000);
		assert_int_equal(count(&own[0], reset ? WN_LLP_EV_CLOSED : WN_LLP_EV_EOF), 1);
		assert_int_equal(own[0].enh_unanswered, 1);
		/* our own abort of that stream is not the peer's doing */
		wn_llp_abort(own[0].l);
		assert_int_equal(own[0].enh_unanswered, 1);
		wn_llp_release(own[0].l);
		wn_llp_release(own[1].l);
		run(5000);
		free(own[0].rx);
		free(own[1].rx);
		memset(own, 0, sizeof(own));
	}

	/* the retry, unenhanced */
	connect_a_rev("hello", 1);
	run(2000);
	assert_int_equal(count(&own[1], WN_LLP_EV_REQUEST), 1);
	assert_false(own[1].peer_enhanced);
	assert_int_equal(own[1].pd_len, 5);
	assert_int_equal(wn_llp_accept(own[1].l, &(struct wn_llp_caps){8, 8}, NULL, 0), 0);
	run(2000);
	assert_int_equal(count(&own[0], WN_LLP_EV_ESTABLISHED), 1);
	assert_false(own[0].peer_enhanced);
	assert_int_equal(own[0].params.rev, 1);
	assert_false(own[0].params.p2p);
	assert_int_equal(own[0].params.rtr, 0);
	assert_int_equal(own[0].params.ird, 4); /* the ULP's values stand (RFC 6581 §10) */
	assert_int_equal(own[0].params.ord, 2);
	assert_int_equal(own[1].params.rev, 1);
	assert_int_equal(own[1].params.ird, 8);
	send_one(0, hdr, sizeof(hdr), NULL, 0, 0);
	run(2000);
	assert_int_equal(own[1].rx_n, 1);
	assert_true(wn_llp_tx_ready(own[1].l));
	assert_int_equal(own[0].enh_unanswered, 0);
}

static void
test_refused_and_released(void **state)
{
	(void)state;
	connect_a(NULL); /* nobody listens: TCP RST */
	run(5000);
	assert_int_equal(count(&own[0], WN_LLP_EV_CLOSED), 1);
	assert_int_equal(count(&own[0], WN_LLP_EV_ESTABLISHED), 0);
	assert_int_equal(wn_mpa_tcp_streams(proto[0]), 1); /* until released */
	wn_llp_release(own[0].l);
	run(5000);
	assert_int_equal(wn_mpa_tcp_streams(proto[0]), 0);
	/* an aborted stream: CLOSED from inside the call, then freed once released */
	listen_b();
	connect_a(NULL);
	run(2000);
	unsigned int closed = count(&own[0], WN_LLP_EV_CLOSED);

	wn_llp_abort(own[0].l);
	assert_int_equal(count(&own[0], WN_LLP_EV_CLOSED), closed + 1);
	run(5000);
	assert_int_equal(count(&own[1], WN_LLP_EV_CLOSED), 1);
	wn_llp_release(own[0].l);
	wn_llp_release(own[1].l);
	run(5000);
	assert_int_equal(wn_mpa_tcp_streams(proto[0]), 0);
	assert_int_equal(wn_mpa_tcp_streams(proto[1]), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_setup_and_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hold_then_eof, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reject, setup, teardown),
		cmocka_unit_test_setup_teardown(test_accept_inside_request, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ack_completions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_copy_nic_holds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ref_tx, setup, teardown),
		cmocka_unit_test_setup_teardown(test_staged_tx, setup, teardown),
		cmocka_unit_test_setup_teardown(test_crc_error_terminate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_startup_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_and_released, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unenhanced_responder, setup_rev1_b,
						teardown),
	};

	hx_eal_init("test_mpa_tcp");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
