/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdma_cm's UDP port space (lib/cm's SIDR exchanges, wn_cm_sidr.h): two tables joined by a
 * fake network that encodes and decodes every message (wn_wire_ud.h) and can lose them. A
 * failure here means an active rdma_connect on a UDP id would not learn the passive QP's
 * number and Q_Key, would learn them twice, would wait forever for a peer that is gone, or a
 * passive side would answer a retransmitted request differently from the first.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wn_cm_sidr.h"

struct node {
	struct wn_cm_sidr *t;
	struct wn_ip_addr addr;
	/* what the owner was told */
	unsigned int n_done, n_request;
	uint32_t done_id, token;
	int done_status;
	struct wn_ud_msg rep;
	uint8_t rep_pd[WN_UD_SIDR_REP_PD_MAX];
	struct wn_ud_msg req;
	uint8_t req_pd[WN_UD_SIDR_REQ_PD_MAX];
	int answer; /* what request() returns */
};

/* The wire: encoded messages in flight, to the node at index dst. */
static struct {
	uint8_t b[16][WN_UD_HDR_LEN + WN_UD_SIDR_REQ_LEN + WN_UD_SIDR_REQ_PD_MAX];
	size_t len[16];
	int dst[16];
	unsigned int n, sent;
	unsigned int lose; /* > 0: the next sends are lost */
} net;

static struct node nodes[2];

static int
node_of(const struct wn_ip_addr *a)
{
	return wn_ip_addr_eq(a, &nodes[0].addr) ? 0 : 1;
}

static void
op_send(void *arg, const struct wn_ip_addr *local, const struct wn_ip_addr *peer,
	const struct wn_ud_msg *m)
{
	struct node *n = arg;
	int len;

	assert_true(wn_ip_addr_eq(local, &n->addr));
	net.sent++;
	if (net.lose > 0) {
		net.lose--;
		return;
	}
	assert_true(net.n < 16);
	len = wn_wire_ud_encode(m, net.b[net.n], sizeof(net.b[0]));
	assert_true(len > 0);
	net.len[net.n] = (size_t)len;
	net.dst[net.n] = node_of(peer);
	net.n++;
}

static void
op_done(void *arg, uint32_t id, int status, const struct wn_ud_msg *rep)
{
	struct node *n = arg;

	n->n_done++;
	n->done_id = id;
	n->done_status = status;
	memset(&n->rep, 0, sizeof(n->rep));
	if (rep != NULL) {
		n->rep = *rep;
		if (rep->pd_len != 0) {
			memcpy(n->rep_pd, rep->pd, rep->pd_len);
			n->rep.pd = n->rep_pd;
		}
	}
	/* an exchange is gone when its outcome is told */
	assert_int_equal(wn_cm_sidr_state(n->t, id), 0);
}

static int
op_request(void *arg, uint32_t token, const struct wn_ip_addr *local,
	   const struct wn_ip_addr *peer, const struct wn_ud_msg *req)
{
	struct node *n = arg;

	assert_true(wn_ip_addr_eq(local, &n->addr));
	assert_false(wn_ip_addr_eq(peer, &n->addr));
	assert_true(wn_cm_sidr_is_token(token));
	n->n_request++;
	n->token = token;
	n->req = *req;
	if (req->pd_len != 0) {
		memcpy(n->req_pd, req->pd, req->pd_len);
		n->req.pd = n->req_pd;
	}
	return n->answer;
}

static const struct wn_cm_sidr_ops ops = {
	.send = op_send, .done = op_done, .request = op_request,
};

/* Deliver what is in flight (and what that makes the receivers send) until nothing is. */
static void
run(uint64_t now)
{
	for (unsigned int i = 0; i < net.n; i++) {
		struct node *to = &nodes[net.dst[i]];
		struct wn_ud_msg m;

		assert_int_equal(wn_wire_ud_decode(net.b[i], net.len[i], &m), WN_UD_OK);
		(void)wn_cm_sidr_rx(to->t, &to->addr, &nodes[1 - net.dst[i]].addr, &m, now);
	}
	net.n = 0;
}

static int
setup(void **state)
{
	struct wn_cm_sidr_conf c = {.ops = &ops, .retry_us = 100, .max_tries = 4,
				    .hold_us = 1000, .max_ents = 4};

	(void)state;
	memset(&net, 0, sizeof(net));
	memset(nodes, 0, sizeof(nodes));
	for (int i = 0; i < 2; i++) {
		nodes[i].addr = wn_ip_addr_v4(198, 19, 0, (uint8_t)(i + 1));
		c.arg = &nodes[i];
		nodes[i].t = wn_cm_sidr_create(&c);
		assert_non_null(nodes[i].t);
	}
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	wn_cm_sidr_free(nodes[0].t);
	wn_cm_sidr_free(nodes[1].t);
	return 0;
}

/* connect → request → accept → ESTABLISHED's QP number, Q_Key and private data. */
static void
test_accept(void **state)
{
	struct node *a = &nodes[0], *b = &nodes[1];
	struct wn_cm_sidr_stats st;

	(void)state;
	assert_int_equal(wn_cm_sidr_request(a->t, 42, &a->addr, &b->addr, 0x0111, 7471, 40000,
					    (const uint8_t *)"hi", 2, 0), 0);
	assert_int_equal(wn_cm_sidr_request(a->t, 42, &a->addr, &b->addr, 0x0111, 7471, 40000,
					    NULL, 0, 0), -EEXIST);
	assert_int_equal(wn_cm_sidr_state(a->t, 42), WN_CM_SIDR_REQ_SENT);
	run(10);
	assert_int_equal(b->n_request, 1);
	assert_int_equal(b->req.ps, 0x0111);
	assert_int_equal(b->req.dport, 7471);
	assert_int_equal(b->req.sport, 40000);
	assert_int_equal(b->req.pd_len, 2);
	assert_memory_equal(b->req.pd, "hi", 2);
	assert_int_equal(wn_cm_sidr_state(b->t, b->token), WN_CM_SIDR_REQ_RCVD);
	assert_int_equal(wn_cm_sidr_accept(b->t, b->token, 0x1234, 0x01234567,
					   (const uint8_t *)"ok!", 3, 20), 0);
	assert_int_equal(wn_cm_sidr_accept(b->t, b->token, 1, 1, NULL, 0, 20), -ENOENT);
	assert_int_equal(wn_cm_sidr_state(b->t, b->token), WN_CM_SIDR_REPLIED);
	run(30);
	assert_int_equal(a->n_done, 1);
	assert_int_equal(a->done_id, 42);
	assert_int_equal(a->done_status, 0);
	assert_int_equal(a->rep.sqpn, 0x1234);
	assert_int_equal(a->rep.qkey, 0x01234567);
	assert_int_equal(a->rep.pd_len, 3);
	assert_memory_equal(a->rep.pd, "ok!", 3);
	assert_int_equal(wn_cm_sidr_count(a->t), 0);
	/* B keeps its answer for retransmissions, then lets it go */
	assert_int_equal(wn_cm_sidr_next(b->t), 20 + 1000);
	wn_cm_sidr_poll(b->t, 500);
	assert_int_equal(wn_cm_sidr_count(b->t), 1);
	wn_cm_sidr_poll(b->t, 1020);
	assert_int_equal(wn_cm_sidr_count(b->t), 0);
	assert_int_equal(wn_cm_sidr_next(b->t), UINT64_MAX);
	wn_cm_sidr_stats(a->t, &st);
	assert_int_equal(st.req_tx, 1);
	assert_int_equal(st.rep_rx, 1);
}

/* A lost REQ is sent again; a lost REP is answered again from what B kept: one outcome. */
static void
test_losses(void **state)
{
	struct node *a = &nodes[0], *b = &nodes[1];
	struct wn_cm_sidr_stats st;

	(void)state;
	net.lose = 1;
	assert_int_equal(wn_cm_sidr_request(a->t, 7, &a->addr, &b->addr, 0x0111, 1, 2, NULL, 0,
					    0), 0);
	run(10);
	assert_int_equal(b->n_request, 0);
	assert_int_equal(wn_cm_sidr_next(a->t), 100);
	wn_cm_sidr_poll(a->t, 50);
	assert_int_equal(net.n, 0);
	wn_cm_sidr_poll(a->t, 100);
	run(110);
	assert_int_equal(b->n_request, 1);
	/* a retransmission while B's ULP thinks: ignored */
	wn_cm_sidr_poll(a->t, 200);
	run(210);
	assert_int_equal(b->n_request, 1);
	/* the REP is lost; A's next REQ gets the same answer again */
	net.lose = 1;
	assert_int_equal(wn_cm_sidr_accept(b->t, b->token, 5, 6, NULL, 0, 220), 0);
	run(230);
	assert_int_equal(a->n_done, 0);
	wn_cm_sidr_poll(a->t, 300);
	run(310);
	assert_int_equal(a->n_done, 1);
	assert_int_equal(a->done_status, 0);
	assert_int_equal(a->rep.sqpn, 5);
	assert_int_equal(a->rep.qkey, 6);
	/* and a late duplicate REP goes nowhere */
	wn_cm_sidr_stats(b->t, &st);
	assert_int_equal(st.req_dup, 2);
	assert_int_equal(st.rep_tx, 2);
	wn_cm_sidr_stats(a->t, &st);
	assert_int_equal(st.req_retx, 3);
}

/* Reject (with private data), no listener, and a peer that never answers. */
static void
test_refusals(void **state)
{
	struct node *a = &nodes[0], *b = &nodes[1];
	struct wn_ud_msg stray = {.type = WN_UD_SIDR_REP, .req_id = 99};

	(void)state;
	assert_int_equal(wn_cm_sidr_request(a->t, 1, &a->addr, &b->addr, 0x0111, 1, 2, NULL, 0,
					    0), 0);
	run(1);
	assert_int_equal(wn_cm_sidr_reject(b->t, b->token, WN_UD_SIDR_OK, NULL, 0, 2), -EINVAL);
	assert_int_equal(wn_cm_sidr_reject(b->t, b->token, WN_UD_SIDR_REJECT,
					   (const uint8_t *)"no", 2, 2), 0);
	run(3);
	assert_int_equal(a->n_done, 1);
	assert_int_equal(a->done_status, WN_UD_SIDR_REJECT);
	assert_int_equal(a->rep.pd_len, 2);
	/* nobody listens: B answers UNSUPPORTED at once */
	b->answer = WN_UD_SIDR_UNSUPPORTED;
	assert_int_equal(wn_cm_sidr_request(a->t, 2, &a->addr, &b->addr, 0x0111, 9, 2, NULL, 0,
					    10), 0);
	run(11);
	assert_int_equal(a->n_done, 2);
	assert_int_equal(a->done_status, WN_UD_SIDR_UNSUPPORTED);
	/* nobody answers: after max_tries (4) REQs, -ETIMEDOUT */
	net.lose = 100;
	assert_int_equal(wn_cm_sidr_request(a->t, 3, &a->addr, &b->addr, 0x0111, 9, 2, NULL, 0,
					    20), 0);
	for (uint64_t now = 20; now <= 500; now += 50)
		wn_cm_sidr_poll(a->t, now);
	assert_int_equal(a->n_done, 3);
	assert_int_equal(a->done_id, 3);
	assert_int_equal(a->done_status, -ETIMEDOUT);
	assert_int_equal(net.sent - 4, 4); /* the REQs of the third exchange */
	assert_int_equal(wn_cm_sidr_rx(a->t, &a->addr, &b->addr, &stray, 600), -ENOENT);
}

/* The ULP goes away: an active exchange ends silently, an unanswered request is rejected. */
static void
test_forget_and_bounds(void **state)
{
	struct node *a = &nodes[0], *b = &nodes[1];

	(void)state;
	assert_int_equal(wn_cm_sidr_request(a->t, 1, &a->addr, &b->addr, 0x0111, 1, 2, NULL, 0,
					    0), 0);
	assert_int_equal(wn_cm_sidr_request(a->t, 2, &a->addr, &b->addr, 0x0111, 1, 2, NULL, 0,
					    0), 0);
	run(1);
	assert_int_equal(b->n_request, 2);
	assert_int_equal(wn_cm_sidr_forget(a->t, 1, 2), 0);
	assert_int_equal(wn_cm_sidr_forget(a->t, 1, 2), -ENOENT);
	assert_int_equal(wn_cm_sidr_forget(b->t, b->token, 3), 0); /* the second request */
	run(4);
	assert_int_equal(a->n_done, 1);
	assert_int_equal(a->done_id, 2);
	assert_int_equal(a->done_status, WN_UD_SIDR_REJECT);
	/* bounds: private data, ids, max_ents (4) */
	assert_int_equal(wn_cm_sidr_request(a->t, 5, &a->addr, &b->addr, 0x0111, 1, 2, NULL,
					    WN_UD_SIDR_REQ_PD_MAX + 1, 0), -EINVAL);
	assert_int_equal(wn_cm_sidr_request(a->t, WN_CM_SIDR_TOKEN | 1, &a->addr, &b->addr, 0x0111,
					    1, 2, NULL, 0, 0), -EINVAL);
	for (uint32_t id = 10; id < 14; id++)
		assert_int_equal(wn_cm_sidr_request(a->t, id, &a->addr, &b->addr, 0x0111, 1, 2,
						    NULL, 0, 5), 0);
	assert_int_equal(wn_cm_sidr_request(a->t, 14, &a->addr, &b->addr, 0x0111, 1, 2, NULL, 0,
					    5), -ENOSPC);
	assert_null(wn_cm_sidr_create(NULL));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_accept, setup, teardown),
		cmocka_unit_test_setup_teardown(test_losses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forget_and_bounds, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
