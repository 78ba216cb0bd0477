/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One DDP Stream Session (wn_sctp_sess.h) without SCTP: two sessions joined by a queue of
 * chunks the test may reorder. What would break if these failed: the RFC 6581 negotiation
 * over session control (IRD/ORD, RTR, the Enhanced Reject), the DDP-SSN (wrapping at 65536,
 * ordering hundreds of early chunks), the legal sequences, the setup deadline.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wn_sctp_sess.h"

#define QMAX 4096
#define MULPDU 1434

struct chunk {
	int to;
	uint32_t ppid;
	uint16_t len;
	uint8_t data[1600];
};

static struct {
	struct chunk *q[QMAX];
	unsigned int n;
	bool full;         /* send answers -EAGAIN */
} net;

struct side {
	struct wn_sctp_sess s;
	int id;
	enum wn_llp_event_type ev[32];
	unsigned int n_ev;
	struct wn_llp_event last;
	struct wn_llp_params params;
	uint32_t rx_n;
	uint32_t rx_next;  /* the sequence number expected in the next ULPDU */
	bool accept, reject;
	uint16_t ird, ord;
};

static struct side sd[2];

static int
q_send(void *arg, uint32_t ppid, const uint8_t *msg, size_t len)
{
	struct side *s = arg;
	struct chunk *c;

	if (net.full)
		return -EAGAIN;
	assert_true(net.n < QMAX && len <= sizeof(c->data));
	c = malloc(sizeof(*c));
	c->to = 1 - s->id;
	c->ppid = ppid;
	c->len = (uint16_t)len;
	memcpy(c->data, msg, len);
	net.q[net.n++] = c;
	return 0;
}

static void
q_event(void *arg, const struct wn_llp_event *ev)
{
	struct side *s = arg;

	s->ev[s->n_ev++ % 32] = ev->type;
	s->last = *ev;
	if (ev->params != NULL)
		s->params = *ev->params;
	if (ev->type == WN_LLP_EV_REQUEST && s->accept)
		(void)wn_sctp_sess_accept(&s->s, s->ird, s->ord, (const uint8_t *)"ok", 2);
	if (ev->type == WN_LLP_EV_REQUEST && s->reject)
		(void)wn_sctp_sess_reject(&s->s, NULL, 0);
}

static void
q_ulpdu(void *arg, const uint8_t *u, size_t len)
{
	struct side *s = arg;
	uint32_t k;

	assert_true(len >= 4);
	memcpy(&k, u, 4);
	assert_int_equal(k, s->rx_next); /* in submission order, whatever the arrival */
	s->rx_next++;
	s->rx_n++;
}

static const struct wn_sctp_sess_ops ops = {.send = q_send, .event = q_event, .ulpdu = q_ulpdu};

static bool
got(const struct side *s, enum wn_llp_event_type t)
{
	for (unsigned int i = 0; i < s->n_ev && i < 32; i++)
		if (s->ev[i] == t)
			return true;
	return false;
}

/* Drop what is queued (lost on the way). */
static void
drop_all(void)
{
	while (net.n > 0)
		free(net.q[--net.n]);
}

/* Deliver the queue, oldest first, or newest first (a reversal of each batch). */
static void
deliver(bool reverse)
{
	while (net.n > 0) {
		struct chunk *batch[QMAX];
		unsigned int n = net.n;

		memcpy(batch, net.q, n * sizeof(batch[0]));
		net.n = 0;
		for (unsigned int i = 0; i < n; i++) {
			struct chunk *c = batch[reverse ? n - 1 - i : i];

			(void)wn_sctp_sess_input(&sd[c->to].s, c->ppid, c->data, c->len, 0);
			free(c);
		}
	}
}

static void
pair(bool enhanced, uint16_t ird0, uint16_t ord0, bool p2p)
{
	struct wn_sctp_sess_cfg c = {.mulpdu = MULPDU, .ops = &ops, .timeout_us = 1000};

	memset(sd, 0, sizeof(sd));
	drop_all();
	memset(&net, 0, sizeof(net));
	for (int i = 0; i < 2; i++) {
		sd[i].id = i;
		c.initiator = i == 0;
		c.enhanced = enhanced;
		c.caps.ird = i == 0 ? ird0 : 0;
		c.caps.ord = i == 0 ? ord0 : 0;
		c.caps.p2p = i == 0 && p2p;
		c.caps.rtr = WN_MPA_RTR_WRITE | (i == 1 ? WN_MPA_RTR_SEND : 0);
		c.pd = (const uint8_t *)"pd";
		c.pd_len = i == 0 ? 2 : 0;
		c.arg = &sd[i];
		assert_int_equal(wn_sctp_sess_init(&sd[i].s, &c, 0), 0);
	}
}

static void
fini(void)
{
	deliver(false);
	wn_sctp_sess_fini(&sd[0].s);
	wn_sctp_sess_fini(&sd[1].s);
}

/* @p n ULPDUs carrying the side's next sequence numbers. */
static void
send_seq(int side, uint32_t n)
{
	static uint32_t next[2];

	if (wn_sctp_sess_state(&sd[side].s) == WN_SCTP_SESS_FULL && sd[side].s.tx_ssn <= 1)
		next[side] = 0; /* a new pair */
	for (uint32_t i = 0; i < n; i++) {
		struct wn_llp_ulpdu u = {.hdr_len = 4, .len = 4};
		uint8_t scratch[MULPDU + 2];

		memcpy(u.hdr, &next[side], 4);
		next[side]++;
		assert_int_equal(wn_sctp_sess_send(&sd[side].s, &u, scratch), 0);
	}
}

static void
test_negotiation(void **state)
{
	(void)state;
	/* RFC 6581 §9.1 through the enhanced codes */
	pair(true, 16, 4, true);
	sd[1].accept = true;
	sd[1].ird = 2;
	sd[1].ord = 32;
	assert_int_equal(wn_sctp_sess_start(&sd[0].s, 0), 0);
	deliver(false);
	assert_true(got(&sd[1], WN_LLP_EV_REQUEST) && got(&sd[1], WN_LLP_EV_TX_READY));
	assert_true(got(&sd[0], WN_LLP_EV_ESTABLISHED) && got(&sd[0], WN_LLP_EV_TX_READY));
	assert_int_equal(sd[0].params.ord, 2);  /* min(our ORD 4, responder IRD 2) */
	assert_int_equal(sd[0].params.ird, 16);
	assert_int_equal(sd[1].params.ord, 16); /* min(its ORD 32, initiator IRD 16) */
	assert_int_equal(sd[1].params.ird, 2);
	assert_true(sd[0].params.p2p);
	assert_int_equal(sd[0].params.rtr, WN_MPA_RTR_WRITE); /* the one RTR to send */
	assert_int_equal(sd[0].params.rev, 2);
	fini();

	/* the responder needs more than the initiator's IRD: Enhanced Reject names it, and the
	 * initiator sees a refusal, not a connection */
	pair(true, 0, 4, false);
	sd[1].ird = 4;
	sd[1].ord = 4;
	assert_int_equal(wn_sctp_sess_start(&sd[0].s, 0), 0);
	deliver(false);
	assert_int_equal(wn_sctp_sess_state(&sd[1].s), WN_SCTP_SESS_REQ_RCVD);
	assert_int_equal(wn_sctp_sess_accept(&sd[1].s, 4, 4, NULL, 0), 0); /* ORD min 0: fine */
	deliver(false);
	assert_true(got(&sd[0], WN_LLP_EV_ESTABLISHED));
	assert_int_equal(sd[1].params.ord, 1); /* RFC 6581: at most the initiator's IRD (0) */
	fini();

	/* responder ORD above the initiator's IRD: the initiator refuses (insufficient IRD) */
	pair(true, 1, 1, false);
	assert_int_equal(wn_sctp_sess_start(&sd[0].s, 0), 0);
	deliver(false);
	{
		uint8_t rep[8] = {0, 0, 0, WN_SCTP_ENH_ACCEPT, 0, 1, 0, 9}; /* IRD 1, ORD 9 */

		drop_all();
		(void)wn_sctp_sess_input(&sd[0].s, WN_SCTP_PPID_CTL, rep, sizeof(rep), 0);
	}
	assert_true(got(&sd[0], WN_LLP_EV_ERROR));
	assert_true(sd[0].last.insufficient_ird);
	assert_int_equal(net.n, 1); /* our Terminate ends the session */
	fini();

	/* a plain Initiate gets a plain Accept; an enhanced Accept to it is a violation */
	pair(false, 3, 3, false);
	sd[1].accept = true;
	assert_int_equal(wn_sctp_sess_start(&sd[0].s, 0), 0);
	deliver(false);
	assert_true(got(&sd[0], WN_LLP_EV_ESTABLISHED));
	assert_int_equal(sd[0].params.rev, 1);
	fini();
	pair(false, 3, 3, false);
	assert_int_equal(wn_sctp_sess_start(&sd[0].s, 0), 0);
	drop_all();
	{
		uint8_t rep[8] = {0, 0, 0, WN_SCTP_ENH_ACCEPT, 0, 1, 0, 1};

		assert_int_equal(wn_sctp_sess_input(&sd[0].s, WN_SCTP_PPID_CTL, rep, 8, 0),
				 -EPROTO);
	}
	assert_true(got(&sd[0], WN_LLP_EV_ERROR));
	assert_false(sd[0].last.send_terminate);
	fini();
}

static void
test_ssn_order_and_wrap(void **state)
{
	(void)state;
	pair(true, 2, 2, false);
	sd[1].accept = true;
	assert_int_equal(wn_sctp_sess_start(&sd[0].s, 0), 0);
	deliver(false);
	/* 70000 ULPDUs: the DDP-SSN wraps; every batch of 300 arrives in reverse */
	for (int b = 0; b < 233; b++) {
		send_seq(0, 300);
		deliver(true);
	}
	assert_int_equal(sd[1].rx_n, 69900);
	assert_true(sd[1].s.st.rx_early > 60000);
	assert_int_equal(sd[1].s.st.held, 0);
	/* no room: a ULPDU is refused, its DDP-SSN not used */
	net.full = true;
	{
		struct wn_llp_ulpdu u = {.hdr_len = 4, .len = 4};
		uint8_t scratch[MULPDU + 2];

		assert_int_equal(wn_sctp_sess_send(&sd[0].s, &u, scratch), -EAGAIN);
		net.full = false;
		u.len = MULPDU + 1;
		assert_int_equal(wn_sctp_sess_send(&sd[0].s, &u, scratch), -EMSGSIZE);
		send_seq(0, 1);
	}
	deliver(false);
	assert_int_equal(sd[1].rx_n, 69901);
	/* a Terminate that overtakes the last ULPDUs still comes after them */
	send_seq(0, 5);
	assert_int_equal(wn_sctp_sess_terminate(&sd[0].s), 0);
	assert_false(wn_sctp_sess_tx_ok(&sd[0].s));
	deliver(true);
	assert_int_equal(sd[1].rx_n, 69906);
	assert_true(got(&sd[1], WN_LLP_EV_EOF));
	assert_int_equal(wn_sctp_sess_terminate(&sd[1].s), 0);
	deliver(false);
	assert_true(wn_sctp_sess_done(&sd[0].s) && wn_sctp_sess_done(&sd[1].s));
	fini();
}

static void
test_deadlines_and_rules(void **state)
{
	(void)state;
	/* nobody answers: the setup deadline breaks the session */
	pair(true, 1, 1, false);
	assert_int_equal(wn_sctp_sess_start(&sd[0].s, 0), 0);
	drop_all();
	wn_sctp_sess_poll(&sd[0].s, 999);
	assert_false(got(&sd[0], WN_LLP_EV_ERROR));
	wn_sctp_sess_poll(&sd[0].s, 1000);
	assert_true(got(&sd[0], WN_LLP_EV_ERROR));
	assert_int_equal(wn_sctp_sess_state(&sd[0].s), WN_SCTP_SESS_DONE);
	fini();

	/* a ULP reject: the initiator sees REJECTED; nothing else goes either way */
	pair(false, 1, 1, false);
	sd[1].reject = true;
	assert_int_equal(wn_sctp_sess_start(&sd[0].s, 0), 0);
	deliver(false);
	assert_true(got(&sd[0], WN_LLP_EV_REJECTED));
	assert_int_equal(wn_sctp_sess_terminate(&sd[0].s), 0);
	assert_int_equal(wn_sctp_sess_terminate(&sd[1].s), 0);
	assert_int_equal(net.n, 0);
	fini();

	/* a control message that found no room goes later, before any ULPDU */
	pair(true, 1, 1, false);
	assert_int_equal(wn_sctp_sess_start(&sd[0].s, 0), 0);
	deliver(false);
	net.full = true;
	assert_int_equal(wn_sctp_sess_accept(&sd[1].s, 1, 1, NULL, 0), 0);
	assert_false(wn_sctp_sess_tx_ok(&sd[1].s));
	net.full = false;
	wn_sctp_sess_poll(&sd[1].s, 1);
	assert_true(wn_sctp_sess_tx_ok(&sd[1].s));
	deliver(false);
	assert_true(got(&sd[0], WN_LLP_EV_ESTABLISHED));
	/* a gap that never fills breaks the session after the setup timeout */
	{
		uint8_t seg[6] = {0, 5, 1, 2, 3, 4};

		assert_int_equal(wn_sctp_sess_input(&sd[0].s, WN_SCTP_PPID_DDP, seg, 6, 10), 0);
		wn_sctp_sess_poll(&sd[0].s, 500);
		assert_false(got(&sd[0], WN_LLP_EV_ERROR));
		wn_sctp_sess_poll(&sd[0].s, 1010);
		assert_true(got(&sd[0], WN_LLP_EV_ERROR));
		assert_true(sd[0].last.send_terminate);
	}
	fini();
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_negotiation),
		cmocka_unit_test(test_ssn_order_and_wrap),
		cmocka_unit_test(test_deadlines_and_rules),
	};

	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	drop_all();
	return rc;
}
