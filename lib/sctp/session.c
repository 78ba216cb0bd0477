/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One DDP Stream Session (RFC 5043 §6, RFC 6581 §7; wn_sctp_sess.h): session control, the
 * DDP-SSN both ways and the legal sequences.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wn_sctp_sess.h"

/* A chunk that arrived ahead of its DDP-SSN turn: the payload as received. */
struct wn_sctp_held {
	uint32_t ppid;
	uint32_t len;
	uint8_t data[];
};

/* The RDMAP Terminate that reports a broken session in RDMA mode (RFC 5043 §6.1 + §11.3):
 * RFC 5043 defines no LLP error codes (RFC 6581 §8), so RDMAP's "catastrophic error,
 * localized to RDMAP Stream" (RFC 5040 §7.2, 0x0/0x2/0x07). */
#define TERM_LAYER 0x0
#define TERM_ETYPE 0x2
#define TERM_CODE  0x07

const char *
wn_sctp_sess_state_str(enum wn_sctp_sess_state st)
{
	static const char *const names[] = {
		[WN_SCTP_SESS_IDLE] = "IDLE",           [WN_SCTP_SESS_INIT_SENT] = "INIT_SENT",
		[WN_SCTP_SESS_WAIT_INIT] = "WAIT_INIT", [WN_SCTP_SESS_REQ_RCVD] = "REQ_RCVD",
		[WN_SCTP_SESS_FULL] = "FULL",           [WN_SCTP_SESS_CLOSING] = "CLOSING",
		[WN_SCTP_SESS_DONE] = "DONE",
	};

	if ((unsigned int)st >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[st];
}

static void
emit(struct wn_sctp_sess *s, struct wn_llp_event *ev)
{
	s->cfg.ops->event(s->cfg.arg, ev);
}

static void
held_free(struct wn_sctp_sess *s)
{
	for (uint32_t i = 0; i < s->held_cap; i++)
		free(s->held[i]);
	free(s->held);
	s->held = NULL;
	s->held_cap = 0;
	s->st.held = 0;
}

/* Send control message @p c with the next DDP-SSN; keep it for later when there is no room. */
static void
ctl_send(struct wn_sctp_sess *s, struct wn_sctp_ctl *c)
{
	int n, rc;

	c->ssn = s->tx_ssn++;
	n = wn_wire_sctp_ctl_encode(c, s->ctl, sizeof(s->ctl));
	if (n < 0)
		return; /* bounded by the callers: cannot happen */
	rc = s->cfg.ops->send(s->cfg.arg, WN_SCTP_PPID_CTL, s->ctl, (size_t)n);
	s->ctl_len = rc == -EAGAIN ? (uint16_t)n : 0; /* other errors: the association fails */
}

/*
 * The session broke (a chunk outside the legal sequences, RFC 5043 §6.1): in RDMA mode the
 * owner reports it with an RDMAP Terminate and then ends the session; before, it is aborted.
 * What arrives afterwards is ignored.
 */
static int
fail(struct wn_sctp_sess *s, uint8_t err, const char *why)
{
	struct wn_llp_event ev = {
		.type = WN_LLP_EV_ERROR,
		.err = err,
		.send_terminate = s->state == WN_SCTP_SESS_FULL && !s->sent_term,
		.term_layer = TERM_LAYER,
		.term_etype = TERM_ETYPE,
		.reason = why,
	};

	s->why = why;
	held_free(s);
	if (ev.send_terminate)
		ev.err = TERM_CODE;
	else
		s->state = WN_SCTP_SESS_DONE;
	s->deadline = 0;
	s->rx_dead = true;
	emit(s, &ev);
	return -EPROTO;
}

int
wn_sctp_sess_init(struct wn_sctp_sess *s, const struct wn_sctp_sess_cfg *cfg, uint64_t now)
{
	if (cfg == NULL || cfg->ops == NULL || cfg->pd_len > WN_SCTP_PD_MAX - WN_MPA_ENH_LEN ||
	    (cfg->pd_len != 0 && cfg->pd == NULL) || cfg->caps.ird > WN_MPA_IRD_ORD_MAX ||
	    cfg->caps.ord > WN_MPA_IRD_ORD_MAX || cfg->mulpdu < WN_SCTP_MULPDU_MIN)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	if (cfg->pd_len != 0)
		memcpy(s->pd, cfg->pd, cfg->pd_len);
	s->cfg.pd = s->pd;
	s->state = cfg->initiator ? WN_SCTP_SESS_IDLE : WN_SCTP_SESS_WAIT_INIT;
	if (!cfg->initiator && cfg->timeout_us != 0)
		s->deadline = now + cfg->timeout_us;
	return 0;
}

void
wn_sctp_sess_fini(struct wn_sctp_sess *s)
{
	held_free(s);
}

int
wn_sctp_sess_start(struct wn_sctp_sess *s, uint64_t now)
{
	const struct wn_mpa_caps *k = &s->cfg.caps;
	struct wn_sctp_ctl c = {
		.func = s->cfg.enhanced ? WN_SCTP_ENH_INITIATE : WN_SCTP_INITIATE,
		.p2p = k->p2p,
		.rtr = k->p2p ? k->rtr : 0,
		.ird = k->ird,
		.ord = k->ord,
		.pd = s->pd,
		.pd_len = s->cfg.pd_len,
	};

	if (s->state != WN_SCTP_SESS_IDLE)
		return -EINVAL;
	s->state = WN_SCTP_SESS_INIT_SENT;
	if (s->cfg.timeout_us != 0)
		s->deadline = now + s->cfg.timeout_us;
	ctl_send(s, &c);
	return 0;
}

/* ---------------------------------------------------------------- setup */

static void
peer_of(const struct wn_sctp_ctl *c, struct wn_llp_peer *pe)
{
	memset(pe, 0, sizeof(*pe));
	pe->pd = c->pd;
	pe->pd_len = c->pd_len;
	pe->enhanced = wn_sctp_func_enhanced(c->func);
	/* an unenhanced peer announces nothing: bounded by our own limits only */
	pe->ird = pe->enhanced ? c->ird : WN_MPA_IRD_ORD_MAX;
	pe->ord = pe->enhanced ? c->ord : WN_MPA_IRD_ORD_MAX;
}

static void
params_set(struct wn_sctp_sess *s, const struct wn_mpa_neg *neg, bool enhanced)
{
	struct wn_llp_params *p = &s->params;

	memset(p, 0, sizeof(*p));
	p->ird = neg->ird > 0 ? neg->ird : 1;
	p->ord = neg->ord > 0 ? neg->ord : 1;
	p->p2p = neg->p2p;
	p->rtr = neg->rtr;
	p->mulpdu = s->cfg.mulpdu;
	p->rev = enhanced ? 2 : 1;
}

/* ESTABLISHED, then TX_READY: SCTP needs no MPA-style fencing (RFC 6581 §7). */
static void
established(struct wn_sctp_sess *s, const struct wn_llp_peer *pe)
{
	struct wn_llp_event ev = {.type = WN_LLP_EV_ESTABLISHED, .peer = pe, .params = &s->params};

	s->state = WN_SCTP_SESS_FULL;
	s->deadline = 0;
	emit(s, &ev);
	if (s->state != WN_SCTP_SESS_FULL)
		return; /* the owner gave up from inside */
	ev.type = WN_LLP_EV_TX_READY;
	ev.peer = NULL;
	emit(s, &ev);
}

static int
on_initiate(struct wn_sctp_sess *s, const struct wn_sctp_ctl *c)
{
	struct wn_llp_event ev = {.type = WN_LLP_EV_REQUEST};
	struct wn_llp_peer pe;

	if (c->func != WN_SCTP_INITIATE && c->func != WN_SCTP_ENH_INITIATE)
		return fail(s, WN_MPA_ERR_BAD_FRAME, "the first session control is not an Initiate");
	s->peer_enhanced = c->func == WN_SCTP_ENH_INITIATE;
	wn_wire_sctp_ctl_to_mpa(c, &s->init);
	s->init.pd = NULL; /* valid during this call only */
	s->init.pd_len = 0;
	s->state = WN_SCTP_SESS_REQ_RCVD;
	peer_of(c, &pe);
	ev.peer = &pe;
	emit(s, &ev);
	return 0;
}

static int
on_reply(struct wn_sctp_sess *s, const struct wn_sctp_ctl *c)
{
	struct wn_llp_event ev = {0};
	struct wn_mpa_frame rep;
	struct wn_mpa_neg neg;
	struct wn_llp_peer pe;
	enum wn_mpa_err e;

	peer_of(c, &pe);
	switch (c->func) {
	case WN_SCTP_REJECT:
	case WN_SCTP_ENH_REJECT:
	case WN_SCTP_TERMINATE: /* RFC 5043 §6.4: refused without the ULP */
		s->state = WN_SCTP_SESS_DONE;
		s->got_term = c->func == WN_SCTP_TERMINATE;
		s->rejected = true;
		s->deadline = 0;
		ev.type = WN_LLP_EV_REJECTED;
		ev.peer = &pe;
		emit(s, &ev);
		return 0;
	case WN_SCTP_ACCEPT:
	case WN_SCTP_ENH_ACCEPT:
		break;
	default:
		return fail(s, WN_MPA_ERR_BAD_FRAME, "an Initiate answered with an Initiate");
	}
	/* RFC 6581 §10 as for MPA: an enhanced answer only to an enhanced Initiate */
	if (c->func == WN_SCTP_ENH_ACCEPT && !s->cfg.enhanced)
		return fail(s, WN_MPA_ERR_BAD_FRAME, "enhanced Accept to a plain Initiate");
	wn_wire_sctp_ctl_to_mpa(c, &rep);
	e = wn_wire_mpa_negotiate_initiator(&s->cfg.caps, &rep, &neg);
	params_set(s, &neg, rep.enhanced);
	if (e != WN_MPA_ERR_NONE) {
		/* RFC 6581 §9: the responder's terms do not fit ours: end the session */
		ev.type = WN_LLP_EV_ERROR;
		ev.err = (uint8_t)e;
		ev.insufficient_ird = e == WN_MPA_ERR_INSUFFICIENT_IRD;
		ev.peer = &pe;
		ev.reason = wn_wire_mpa_err_str(e);
		s->why = ev.reason;
		s->state = WN_SCTP_SESS_DONE;
		s->deadline = 0;
		s->rx_dead = true;
		(void)wn_sctp_sess_terminate(s);
		emit(s, &ev);
		return -EPROTO;
	}
	established(s, &pe);
	return 0;
}

int
wn_sctp_sess_accept(struct wn_sctp_sess *s, uint16_t ird, uint16_t ord, const uint8_t *pd,
		    uint16_t pd_len)
{
	struct wn_mpa_caps caps = {.ird = ird, .ord = ord, .rtr = s->cfg.caps.rtr};
	struct wn_sctp_ctl c = {.pd = pd, .pd_len = pd_len};
	struct wn_mpa_neg neg;
	enum wn_mpa_err e;

	if (s->state != WN_SCTP_SESS_REQ_RCVD || ird > WN_MPA_IRD_ORD_MAX ||
	    ord > WN_MPA_IRD_ORD_MAX || pd_len > WN_SCTP_PD_MAX - WN_MPA_ENH_LEN ||
	    (pd_len != 0 && pd == NULL))
		return -EINVAL;
	e = wn_wire_mpa_negotiate_responder(&caps, &s->init, &neg);
	c.p2p = neg.p2p;
	c.rtr = neg.rtr;
	c.ird = neg.reply_ird;
	c.ord = neg.reply_ord;
	if (e != WN_MPA_ERR_NONE) {
		/* RFC 6581 §7: an Enhanced Reject for what the plain protocol would accept */
		struct wn_llp_event ev = {.type = WN_LLP_EV_ERROR, .err = (uint8_t)e,
					  .reject_sent = true, .reason = wn_wire_mpa_err_str(e)};

		c.func = WN_SCTP_ENH_REJECT;
		ctl_send(s, &c);
		s->rejected = true;
		s->state = WN_SCTP_SESS_DONE;
		s->deadline = 0;
		s->why = ev.reason;
		emit(s, &ev);
		return -ECONNREFUSED;
	}
	c.func = s->peer_enhanced ? WN_SCTP_ENH_ACCEPT : WN_SCTP_ACCEPT;
	ctl_send(s, &c);
	params_set(s, &neg, s->peer_enhanced);
	established(s, NULL);
	return 0;
}

int
wn_sctp_sess_reject(struct wn_sctp_sess *s, const uint8_t *pd, uint16_t pd_len)
{
	struct wn_sctp_ctl c = {
		.func = s->peer_enhanced ? WN_SCTP_ENH_REJECT : WN_SCTP_REJECT,
		.ird = s->cfg.caps.ird,
		.ord = s->cfg.caps.ord,
		.pd = pd,
		.pd_len = pd_len,
	};

	if (s->state != WN_SCTP_SESS_REQ_RCVD || pd_len > WN_SCTP_PD_MAX - WN_MPA_ENH_LEN ||
	    (pd_len != 0 && pd == NULL))
		return -EINVAL;
	ctl_send(s, &c);
	s->rejected = true;
	s->state = WN_SCTP_SESS_DONE;
	s->deadline = 0;
	return 0;
}

/* ---------------------------------------------------------------- receive */

static void
eof(struct wn_sctp_sess *s)
{
	struct wn_llp_event ev = {.type = WN_LLP_EV_EOF};

	s->got_term = true;
	if (s->state == WN_SCTP_SESS_CLOSING)
		s->state = WN_SCTP_SESS_DONE;
	if (s->eof_sent)
		return;
	s->eof_sent = true;
	emit(s, &ev);
}

void
wn_sctp_sess_eof(struct wn_sctp_sess *s)
{
	if (s->state != WN_SCTP_SESS_DONE)
		eof(s);
}

int
wn_sctp_sess_broken(struct wn_sctp_sess *s, const char *why)
{
	if (s->state == WN_SCTP_SESS_DONE || s->rx_dead)
		return -EPROTO;
	return fail(s, WN_MPA_ERR_BAD_FRAME, why);
}

/* One chunk in its DDP-SSN turn. */
static int
process(struct wn_sctp_sess *s, uint32_t ppid, const uint8_t *buf, size_t len)
{
	struct wn_sctp_ctl c;
	enum wn_sctp_ctl_status cs;

	if (ppid != WN_SCTP_PPID_DDP && ppid != WN_SCTP_PPID_CTL)
		return fail(s, WN_MPA_ERR_BAD_FRAME, "a DATA chunk with an unknown PPID");
	if (ppid == WN_SCTP_PPID_DDP) {
		if (s->state == WN_SCTP_SESS_CLOSING || s->got_term)
			return 0; /* after a Terminate: nobody takes it any more */
		if (s->state != WN_SCTP_SESS_FULL)
			return fail(s, WN_MPA_ERR_BAD_FRAME, "a DDP segment before the Accept");
		if (len - WN_SCTP_SSN_LEN > s->cfg.mulpdu)
			return fail(s, WN_MPA_ERR_BAD_FRAME, "a DDP segment above the maximum");
		s->st.rx_ulpdus++;
		s->cfg.ops->ulpdu(s->cfg.arg, buf + WN_SCTP_SSN_LEN, len - WN_SCTP_SSN_LEN);
		return 0;
	}
	cs = wn_wire_sctp_ctl_decode(buf, len, &c);
	if (cs != WN_SCTP_CTL_OK)
		return fail(s, WN_MPA_ERR_BAD_FRAME, wn_wire_sctp_ctl_status_str(cs));
	switch (s->state) {
	case WN_SCTP_SESS_WAIT_INIT:
		return on_initiate(s, &c);
	case WN_SCTP_SESS_INIT_SENT:
		return on_reply(s, &c);
	case WN_SCTP_SESS_REQ_RCVD:
	case WN_SCTP_SESS_FULL:
	case WN_SCTP_SESS_CLOSING:
		if (c.func == WN_SCTP_TERMINATE) {
			eof(s);
			return 0;
		}
		if (s->state == WN_SCTP_SESS_CLOSING)
			return 0;
		return fail(s, WN_MPA_ERR_BAD_FRAME, "session control out of sequence");
	default:
		return 0;
	}
}

/* Hold a chunk that came ahead of its turn (@p d ahead of rx_ssn). */
static int
hold(struct wn_sctp_sess *s, uint32_t ppid, const uint8_t *buf, size_t len, uint32_t d)
{
	struct wn_sctp_held *h;
	uint32_t slot;

	if (d >= s->held_cap) {
		uint32_t cap = s->held_cap != 0 ? s->held_cap : 64;
		struct wn_sctp_held **n;

		while (cap <= d)
			cap *= 2;
		n = calloc(cap, sizeof(*n));
		if (n == NULL)
			return fail(s, WN_MPA_ERR_LOCAL, "no memory for early chunks");
		for (uint32_t i = 0; i < s->held_cap; i++) {
			struct wn_sctp_held *o = s->held[i];

			if (o != NULL)
				n[wn_sctp_ssn_get(o->data) & (cap - 1)] = o;
		}
		free(s->held);
		s->held = n;
		s->held_cap = cap;
	}
	slot = wn_sctp_ssn_get(buf) & (s->held_cap - 1);
	if (s->held[slot] != NULL)
		return fail(s, WN_MPA_ERR_BAD_FRAME, "a DDP-SSN received twice");
	h = malloc(sizeof(*h) + len);
	if (h == NULL)
		return fail(s, WN_MPA_ERR_LOCAL, "no memory for early chunks");
	h->ppid = ppid;
	h->len = (uint32_t)len;
	memcpy(h->data, buf, len);
	s->held[slot] = h;
	s->st.rx_early++;
	if (s->st.held++ == 0)
		s->gap_since = s->now;
	return 0;
}

int
wn_sctp_sess_input(struct wn_sctp_sess *s, uint32_t ppid, const uint8_t *buf, size_t len,
		   uint64_t now)
{
	uint32_t d;
	int rc;

	s->now = now;
	if (s->state == WN_SCTP_SESS_DONE || s->rx_dead)
		return 0;
	if (len < WN_SCTP_SSN_LEN)
		return fail(s, WN_MPA_ERR_BAD_FRAME, "a DATA chunk without DDP-SSN");
	d = (uint16_t)(wn_sctp_ssn_get(buf) - s->rx_ssn);
	if (d >= WN_SCTP_SSN_WINDOW)
		return fail(s, WN_MPA_ERR_BAD_FRAME, "a DDP-SSN already processed");
	if (d > 0)
		return hold(s, ppid, buf, len, d);
	rc = process(s, ppid, buf, len);
	s->rx_ssn++;
	/* the chunks that waited for this one */
	while (rc == 0 && !s->rx_dead && s->state != WN_SCTP_SESS_DONE && s->held_cap != 0) {
		uint32_t slot = s->rx_ssn & (s->held_cap - 1);
		struct wn_sctp_held *h = s->held[slot];

		if (h == NULL || wn_sctp_ssn_get(h->data) != s->rx_ssn)
			break;
		s->held[slot] = NULL;
		if (--s->st.held > 0)
			s->gap_since = now; /* the next gap, if any, waits from here */
		rc = process(s, h->ppid, h->data, h->len);
		free(h);
		s->rx_ssn++;
	}
	return rc;
}

/* ---------------------------------------------------------------- transmit */

int
wn_sctp_sess_send(struct wn_sctp_sess *s, const struct wn_llp_ulpdu *u, uint8_t *scratch)
{
	uint8_t *p = scratch + WN_SCTP_SSN_LEN;
	int rc;

	if (!wn_sctp_sess_tx_ok(s))
		return -EAGAIN;
	if (u->len > s->cfg.mulpdu)
		return -EMSGSIZE;
	wn_sctp_ssn_put(scratch, s->tx_ssn);
	memcpy(p, u->hdr, u->hdr_len);
	p += u->hdr_len;
	for (unsigned int i = 0; i < u->n_iov; i++) {
		memcpy(p, u->iov[i].base, u->iov[i].len);
		p += u->iov[i].len;
	}
	rc = s->cfg.ops->send(s->cfg.arg, WN_SCTP_PPID_DDP, scratch, (size_t)(p - scratch));
	if (rc != 0)
		return rc;
	s->tx_ssn++;
	s->st.tx_ulpdus++;
	return 0;
}

int
wn_sctp_sess_terminate(struct wn_sctp_sess *s)
{
	struct wn_sctp_ctl c = {.func = WN_SCTP_TERMINATE};

	if (s->sent_term)
		return 0;
	s->sent_term = true;
	s->deadline = 0;
	switch (s->state) {
	case WN_SCTP_SESS_IDLE:
		s->state = WN_SCTP_SESS_DONE; /* nothing was ever sent */
		return 0;
	case WN_SCTP_SESS_DONE:
		/* broken before RDMA mode: a Terminate closes it; a Reject already did */
		if (s->got_term || s->rejected)
			return 0;
		break;
	default:
		s->state = s->got_term ? WN_SCTP_SESS_DONE : WN_SCTP_SESS_CLOSING;
		break;
	}
	ctl_send(s, &c);
	return 0;
}

void
wn_sctp_sess_poll(struct wn_sctp_sess *s, uint64_t now)
{
	if (s->ctl_len != 0) {
		int rc = s->cfg.ops->send(s->cfg.arg, WN_SCTP_PPID_CTL, s->ctl, s->ctl_len);

		if (rc != -EAGAIN)
			s->ctl_len = 0;
	}
	s->now = now;
	if (s->deadline != 0 && now >= s->deadline)
		(void)fail(s, WN_MPA_ERR_LOCAL, "session setup timed out");
	else if (s->st.held > 0 && s->cfg.timeout_us != 0 && !s->rx_dead &&
		 now - s->gap_since >= s->cfg.timeout_us)
		(void)fail(s, WN_MPA_ERR_BAD_FRAME, "a DDP-SSN that never came");
}
