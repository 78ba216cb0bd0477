/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for one DDP Stream Session (wn_sctp_sess.h), the RFC 5043 rules behind the
 * session control codec: octet 0 picks the role and policy, then each record is one step,
 * either a DATA chunk as a peer could send it (PPID 16, 17 or any, any DDP-SSN, any payload)
 * or a local action (accept, reject, terminate, a ULPDU to send, time passing, no room). A
 * ULPDU handed up is never above the MULPDU; events keep their order rules; nothing leaks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wn_sctp_sess.h"

#define MULPDU 600

static struct {
	bool full;
	bool established, closed_ok;
	unsigned int events;
	uint64_t now;
} st;

static void
check(int cond)
{
	if (!cond)
		abort();
}

static int
f_send(void *arg, uint32_t ppid, const uint8_t *msg, size_t len)
{
	(void)arg;
	check(ppid == WN_SCTP_PPID_DDP || ppid == WN_SCTP_PPID_CTL);
	check(len >= WN_SCTP_SSN_LEN && len <= MULPDU + WN_SCTP_SSN_LEN);
	if (ppid == WN_SCTP_PPID_CTL) {
		struct wn_sctp_ctl c;

		check(wn_wire_sctp_ctl_decode(msg, len, &c) ==
		      WN_SCTP_CTL_OK); /* we send valid ones */
	}
	return st.full ? -EAGAIN : 0;
}

static void
f_event(void *arg, const struct wn_llp_event *ev)
{
	(void)arg;
	st.events++;
	if (ev->type == WN_LLP_EV_ESTABLISHED) {
		check(!st.established);
		check(ev->params != NULL && ev->params->mulpdu == MULPDU);
		st.established = true;
	}
	if (ev->type == WN_LLP_EV_TX_READY)
		check(st.established);
	if (ev->type == WN_LLP_EV_REQUEST)
		check(ev->peer != NULL && ev->peer->pd_len <= WN_SCTP_PD_MAX);
}

static void
f_ulpdu(void *arg, const uint8_t *u, size_t len)
{
	(void)arg;
	(void)u;
	check(st.established && len <= MULPDU);
}

static const struct wn_sctp_sess_ops ops = {.send = f_send, .event = f_event, .ulpdu = f_ulpdu};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wn_sctp_sess s;
	struct wn_sctp_sess_cfg cfg = {.mulpdu = MULPDU, .ops = &ops, .timeout_us = 1000};
	uint8_t scratch[MULPDU + WN_SCTP_SSN_LEN];

	if (size < 1)
		return 0;
	memset(&st, 0, sizeof(st));
	cfg.initiator = data[0] & 1;
	cfg.enhanced = (data[0] & 2) != 0;
	cfg.caps.p2p = (data[0] & 4) != 0;
	cfg.caps.rtr = (uint8_t)((data[0] >> 3) & WN_MPA_RTR_ALL);
	cfg.caps.ird = (uint16_t)(data[0] >> 6);
	cfg.caps.ord = (uint16_t)((data[0] >> 5) & 3);
	check(wn_sctp_sess_init(&s, &cfg, 0) == 0);
	if (cfg.initiator)
		check(wn_sctp_sess_start(&s, 0) == 0);
	data++;
	size--;
	while (size >= 2) {
		uint8_t op = data[0], len = data[1];

		data += 2;
		size -= 2;
		if (len > size)
			len = (uint8_t)size;
		switch (op & 7) {
		case 0:
		case 1:
		case 2: {
			/* a chunk: PPID 16 or 17 mostly; the DDP-SSN near what is due */
			uint32_t ppid = op & 1 ? WN_SCTP_PPID_CTL : (op & 0x80) ? op : WN_SCTP_PPID_DDP;
			uint8_t buf[300];

			memcpy(buf, data, len);
			if (len >= 2 && (op & 0x40))
				wn_sctp_ssn_put(buf, (uint16_t)(s.rx_ssn + (data[0] & 3)));
			(void)wn_sctp_sess_input(&s, ppid, buf, len, st.now);
			break;
		}
		case 3:
			(void)wn_sctp_sess_accept(&s, (uint16_t)(op >> 3), (uint16_t)(op >> 4), data,
						  len);
			break;
		case 4:
			(void)wn_sctp_sess_reject(&s, data, len);
			break;
		case 5:
			(void)wn_sctp_sess_terminate(&s);
			check(!wn_sctp_sess_tx_ok(&s));
			break;
		case 6: {
			struct wn_llp_ulpdu u = {.hdr_len = 4, .n_iov = 1};

			u.iov[0].base = data;
			u.iov[0].len = len;
			u.len = 4u + len;
			int rc = wn_sctp_sess_send(&s, &u, scratch);

			check(rc == 0 || rc == -EAGAIN);
			break;
		}
		default:
			st.full = (op & 8) != 0;
			st.now += (uint64_t)(op >> 4) * 100;
			wn_sctp_sess_poll(&s, st.now);
			break;
		}
		data += len;
		size -= len;
	}
	wn_sctp_sess_fini(&s);
	return 0;
}
