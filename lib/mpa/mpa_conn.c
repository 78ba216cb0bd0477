/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPA connection startup (RFC 5044 §7.1, RFC 6581 §5-§10) and Full
 * Operation framing for one TCP connection.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wn_mpa.h"

const char *
wn_mpa_conn_state_str(enum wn_mpa_conn_state s)
{
	static const char *const names[] = {
		[WN_MPA_CONN_IDLE] = "idle",         [WN_MPA_CONN_REQ_SENT] = "req_sent",
		[WN_MPA_CONN_WAIT_REQ] = "wait_req", [WN_MPA_CONN_REQ_RCVD] = "req_rcvd",
		[WN_MPA_CONN_FULL] = "full",         [WN_MPA_CONN_REJECTED] = "rejected",
		[WN_MPA_CONN_ERROR] = "error",
	};

	if ((unsigned int)s >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[s];
}

static void
emit(struct wn_mpa_conn *c, struct wn_mpa_event *ev)
{
	if (c->cfg.event != NULL)
		c->cfg.event(c->cfg.event_arg, ev);
}

/* Enter ERROR and report; returns -EPROTO (or -ETIMEDOUT for timeouts). */
static int
fail(struct wn_mpa_conn *c, enum wn_mpa_err err, enum wn_mpa_frame_status fs, bool timeout,
     const char *reason)
{
	struct wn_mpa_event ev = {.type = WN_MPA_EV_ERROR, .err = err, .frame_status = fs,
				  .timeout = timeout, .reason = reason};

	/* RFC 5044 §8: CRC/Marker errors in Full Operation end with a Terminate. */
	ev.send_terminate = err == WN_MPA_ERR_CRC || err == WN_MPA_ERR_MARKER ||
			    err == WN_MPA_ERR_NO_RTR;
	/* the receive direction failed; a sender that was allowed to send still frames it */
	c->term_tx = ev.send_terminate && c->state == WN_MPA_CONN_FULL && c->tx_ready;
	c->state = WN_MPA_CONN_ERROR;
	c->error = err;
	c->deadline = UINT64_MAX;
	emit(c, &ev);
	return timeout ? -ETIMEDOUT : -EPROTO;
}

static bool
caps_ok(const struct wn_mpa_caps *caps)
{
	return caps->ird <= WN_MPA_IRD_ORD_MAX && caps->ord <= WN_MPA_IRD_ORD_MAX &&
	       caps->ord_min <= WN_MPA_IRD_ORD_MAX && (caps->rtr & ~WN_MPA_RTR_ALL) == 0;
}

int
wn_mpa_conn_init(struct wn_mpa_conn *c, const struct wn_mpa_conn_cfg *cfg)
{
	static const struct wn_mpa_frame_rules defaults = WN_MPA_FRAME_RULES_DEFAULT;

	if (c == NULL || cfg == NULL || cfg->rev > WN_MPA_REV_MAX || !caps_ok(&cfg->caps) ||
	    cfg->pd_len > WN_MPA_PD_MAX || (cfg->pd_len != 0 && cfg->pd == NULL) ||
	    cfg->rx_hdr_len > WN_MPA_RX_HDR_MAX)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	if (c->cfg.rev == 0)
		c->cfg.rev = WN_MPA_REV_2;
	if (c->cfg.rules.rev_mask == 0)
		c->cfg.rules = defaults;
	/* Rev 1 only: RFC 6581 is not spoken, S=1 frames are malformed (RFC 6581 §10). */
	if (c->cfg.rev < WN_MPA_REV_2)
		c->cfg.rules.enhanced = false;
	if (c->cfg.timeout_us == 0)
		c->cfg.timeout_us = WN_MPA_STARTUP_TIMEOUT_US;
	if (cfg->pd_len != 0)
		memcpy(c->pd, cfg->pd, cfg->pd_len);
	c->cfg.pd = c->pd;
	c->state = WN_MPA_CONN_IDLE;
	c->deadline = UINT64_MAX;
	return 0;
}

struct wn_mpa_conn *
wn_mpa_conn_create(const struct wn_mpa_conn_cfg *cfg)
{
	struct wn_mpa_conn *c = malloc(sizeof(*c));
	int rc;

	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rc = wn_mpa_conn_init(c, cfg);
	if (rc < 0) {
		free(c);
		errno = -rc;
		return NULL;
	}
	return c;
}

void
wn_mpa_conn_free(struct wn_mpa_conn *c)
{
	free(c);
}

/* Queue a startup frame; @return 0 or the encoder's error. */
static int
queue_frame(struct wn_mpa_conn *c, const struct wn_mpa_frame *f)
{
	int n = wn_wire_mpa_frame_encode(f, c->tx_buf, sizeof(c->tx_buf));

	if (n < 0)
		return n;
	c->tx_len = (size_t)n;
	c->tx_off = 0;
	c->tx_frame_len = (size_t)n;
	return 0;
}

int
wn_mpa_conn_start(struct wn_mpa_conn *c, uint64_t now)
{
	if (c->state != WN_MPA_CONN_IDLE)
		return -EINVAL;
	c->deadline = now + c->cfg.timeout_us;
	if (!c->cfg.initiator) {
		c->state = WN_MPA_CONN_WAIT_REQ;
		return 0;
	}
	/* RFC 6581 §10: the enhanced format only when RFC 6581 is wanted (Rev 2). */
	bool enh = c->cfg.rev >= WN_MPA_REV_2 && c->cfg.rules.enhanced;
	struct wn_mpa_frame req = {
		.type = WN_MPA_FRAME_REQUEST,
		.markers = c->cfg.markers,
		.crc = c->cfg.crc,
		.rev = c->cfg.rev,
		.enhanced = enh,
		.p2p = enh && c->cfg.caps.p2p,
		.rtr = enh && c->cfg.caps.p2p ? c->cfg.caps.rtr : 0,
		.ird = c->cfg.caps.ird,
		.ord = c->cfg.caps.ord,
		.pd_len = c->cfg.pd_len,
		.pd = c->cfg.pd_len ? c->pd : NULL,
	};
	int rc = queue_frame(c, &req);
	if (rc < 0)
		return -EINVAL;
	c->state = WN_MPA_CONN_REQ_SENT;
	return 0;
}

size_t
wn_mpa_conn_output(struct wn_mpa_conn *c, uint8_t *buf, size_t cap)
{
	size_t n = c->tx_len - c->tx_off;

	if (n > cap)
		n = cap;
	memcpy(buf, c->tx_buf + c->tx_off, n);
	c->tx_off += n;
	return n;
}

size_t
wn_mpa_conn_output_pending(const struct wn_mpa_conn *c)
{
	return c->tx_len - c->tx_off;
}

/* ---- Full Operation receive: forward to the caller, learn about the first FPDU ---- */

static size_t
fwd_hdr_len(void *arg, const uint8_t *hdr, size_t have, uint16_t ulpdu_len)
{
	struct wn_mpa_conn *c = arg;

	return c->cfg.rx_ops->hdr_len(c->cfg.rx_arg, hdr, have, ulpdu_len);
}

static int
fwd_header(void *arg, const struct wn_mpa_rx_hdr *h)
{
	struct wn_mpa_conn *c = arg;

	if (c->fpdus_rx == 0)
		c->first_rtr = wn_mpa_rtr_classify(h->hdr, h->hdr_len, h->ulpdu_len);
	return c->cfg.rx_ops != NULL ? c->cfg.rx_ops->header(c->cfg.rx_arg, h) : 0;
}

static int
fwd_payload(void *arg, const uint8_t *p, size_t len, uint32_t off)
{
	struct wn_mpa_conn *c = arg;

	return c->cfg.rx_ops != NULL ? c->cfg.rx_ops->payload(c->cfg.rx_arg, p, len, off) : 0;
}

static int
fwd_end(void *arg, const struct wn_mpa_rx_hdr *h, enum wn_mpa_err verdict)
{
	struct wn_mpa_conn *c = arg;
	int rc = c->cfg.rx_ops != NULL ? c->cfg.rx_ops->end(c->cfg.rx_arg, h, verdict) : 0;

	if (verdict != WN_MPA_ERR_NONE)
		return rc;
	/* RFC 6581 §9.2: the initiator's first FPDU is one of the agreed RTRs. */
	if (c->fpdus_rx == 0 && !c->cfg.initiator && c->cfg.check_rtr && c->params.neg.p2p &&
	    c->first_rtr >= 0 && (c->first_rtr & c->params.neg.rtr) == 0)
		return fail(c, WN_MPA_ERR_NO_RTR, WN_MPA_FRAME_OK, false,
			    "first FPDU is not an agreed RTR");
	c->fpdus_rx++;
	/*
	 * RFC 5044 §7.1.2: the Responder MUST receive and validate at least one
	 * FPDU before sending any FPDU or Marker.
	 */
	if (!c->tx_ready) {
		struct wn_mpa_event ev = {.type = WN_MPA_EV_TX_READY, .params = &c->params,
					  .reason = "first FPDU validated"};

		c->tx_ready = true;
		emit(c, &ev);
	}
	return rc;
}

static const struct wn_mpa_rx_ops fwd_ops = {
	.hdr_len = fwd_hdr_len, .header = fwd_header, .payload = fwd_payload, .end = fwd_end};
static const struct wn_mpa_rx_ops fwd_ops_fixed = {
	.header = fwd_header, .payload = fwd_payload, .end = fwd_end};

static void
enter_full(struct wn_mpa_conn *c)
{
	struct wn_mpa_deframer_cfg dc = {
		.stream = c->params.rx,
		.seq = c->params.rx.seq_start,
		.check_markers = c->cfg.check_markers,
		.hdr_len = c->cfg.rx_hdr_len,
	};
	bool cb = c->cfg.rx_ops != NULL && c->cfg.rx_ops->hdr_len != NULL;

	wn_wire_mpa_deframer_init(&c->rx, &dc, cb ? &fwd_ops : &fwd_ops_fixed, c);
	c->tx_next = c->params.tx.seq_start;
	c->state = WN_MPA_CONN_FULL;
	c->deadline = UINT64_MAX;
}

/* ---- startup receive ---- */

/* Gather one frame into rx_buf without taking octets beyond it. */
static size_t
gather_frame(struct wn_mpa_conn *c, const uint8_t *buf, size_t len)
{
	size_t need = WN_MPA_FRAME_HDR_LEN;
	size_t used = 0;

	for (;;) {
		if (c->rx_have >= WN_MPA_FRAME_HDR_LEN) {
			size_t pd = (size_t)c->rx_buf[18] << 8 | c->rx_buf[19];
			/* the decoder rejects PD_Length > 512 before we need its octets */
			need = WN_MPA_FRAME_HDR_LEN + (pd > WN_MPA_PD_MAX ? 0 : pd);
		}
		if (c->rx_have >= need || used == len)
			return used;
		size_t k = need - c->rx_have;
		if (k > len - used)
			k = len - used;
		memcpy(c->rx_buf + c->rx_have, buf + used, k);
		c->rx_have += k;
		used += k;
	}
}

static int
on_request(struct wn_mpa_conn *c)
{
	struct wn_mpa_event ev = {.type = WN_MPA_EV_REQUEST, .frame = &c->peer,
				  .reason = "MPA Request"};

	if (c->peer.type != WN_MPA_FRAME_REQUEST)
		/* a Reply where a Request is due: malformed for us (RFC 5044 §7.1.2) */
		return fail(c, WN_MPA_ERR_BAD_FRAME, WN_MPA_FRAME_BAD_KEY, false,
			    "Reply key received by the responder");
	c->state = WN_MPA_CONN_REQ_RCVD;
	emit(c, &ev);
	return 0;
}

static int
on_reply(struct wn_mpa_conn *c)
{
	const struct wn_mpa_frame *rep = &c->peer;
	struct wn_mpa_event ev = {.frame = rep};

	/* RFC 5044 §7.1.2: Initiator/Initiator startups are detected by the Key. */
	if (rep->type != WN_MPA_FRAME_REPLY)
		return fail(c, WN_MPA_ERR_BAD_FRAME, WN_MPA_FRAME_BAD_KEY, false,
			    "initiator/initiator: Request received where a Reply was due");
	/* RFC 6581 §10: an enhanced Reply only answers an enhanced Request. */
	if (rep->enhanced && !(c->cfg.rev >= WN_MPA_REV_2 && c->cfg.rules.enhanced))
		return fail(c, WN_MPA_ERR_BAD_FRAME, WN_MPA_FRAME_ENH_REFUSED, false,
			    "enhanced Reply to an unenhanced Request");
	if (rep->rejected) {
		/* RFC 5044 §7.1.2: leave MPA, the TCP connection stays open. */
		c->state = WN_MPA_CONN_REJECTED;
		c->deadline = UINT64_MAX;
		ev.type = WN_MPA_EV_REJECTED;
		ev.reason = "MPA Reply with R=1";
		emit(c, &ev);
		return 0;
	}

	struct wn_mpa_params *p = &c->params;
	enum wn_mpa_err e = wn_wire_mpa_negotiate_initiator(&c->cfg.caps, rep, &p->neg);

	/* RFC 5044 §7.1.1 M: per direction; C: CRC unless both frames say C=0. */
	p->tx.markers = rep->markers;
	p->rx.markers = c->cfg.markers;
	p->tx.crc = p->rx.crc = c->cfg.crc || rep->crc;
	p->tx.seq_start = c->cfg.tx_seq + (uint32_t)c->tx_frame_len;
	p->rx.seq_start = c->cfg.rx_seq + (uint32_t)c->rx_have;
	p->rev = rep->rev;
	enter_full(c);
	c->tx_ready = true; /* the Reply was validated: the initiator may send */
	ev.type = WN_MPA_EV_ESTABLISHED;
	ev.params = p;
	ev.reason = "MPA Reply accepted";
	if (e != WN_MPA_ERR_NONE) {
		/*
		 * RFC 6581 §9.1-9.3: insufficient IRD (6), no RTR option (7) or a
		 * local failure (5): send a Terminate with that code, then close.
		 */
		struct wn_mpa_event err = {.type = WN_MPA_EV_ERROR, .err = e, .frame = rep,
					   .params = p, .send_terminate = true,
					   .reason = wn_wire_mpa_err_str(e)};

		c->error = e;
		emit(c, &err);
		return -EPROTO;
	}
	emit(c, &ev);
	ev.type = WN_MPA_EV_TX_READY;
	ev.reason = p->neg.rtr ? "send the RTR first" : "may send";
	emit(c, &ev);
	return 0;
}

static int
startup_input(struct wn_mpa_conn *c, const uint8_t *buf, size_t len, size_t *used)
{
	enum wn_mpa_frame_status st;
	size_t flen = 0;

	*used = gather_frame(c, buf, len);
	st = wn_wire_mpa_frame_decode(c->rx_buf, c->rx_have, &c->cfg.rules, &c->peer, &flen);
	if (st == WN_MPA_FRAME_NEED_MORE)
		return 0;
	if (st != WN_MPA_FRAME_OK)
		/* RFC 5044 §7.1.2 / §8 code 4: close the TCP connection at once. */
		return fail(c, WN_MPA_ERR_BAD_FRAME, st, false, wn_wire_mpa_frame_status_str(st));
	return c->cfg.initiator ? on_reply(c) : on_request(c);
}

static int
check_timer(struct wn_mpa_conn *c, uint64_t now)
{
	if (c->deadline != UINT64_MAX && now >= c->deadline)
		return fail(c, WN_MPA_ERR_CONN_LOST, WN_MPA_FRAME_OK, true,
			    "MPA startup timeout");
	return 0;
}

int
wn_mpa_conn_tick(struct wn_mpa_conn *c, uint64_t now)
{
	return check_timer(c, now);
}

uint64_t
wn_mpa_conn_deadline(const struct wn_mpa_conn *c)
{
	return c->deadline;
}

int
wn_mpa_conn_input(struct wn_mpa_conn *c, const uint8_t *buf, size_t len, uint64_t now,
		  size_t *consumed)
{
	size_t used = 0;
	int rc = 0;

	if (consumed != NULL)
		*consumed = 0;
	if (c->state == WN_MPA_CONN_IDLE || c->state == WN_MPA_CONN_REJECTED ||
	    c->state == WN_MPA_CONN_ERROR)
		return -ENOTCONN;
	if (len == 0)
		return check_timer(c, now);
	rc = check_timer(c, now);
	if (rc < 0)
		return rc;

	switch (c->state) {
	case WN_MPA_CONN_REQ_SENT:
	case WN_MPA_CONN_WAIT_REQ:
		rc = startup_input(c, buf, len, &used);
		/*
		 * Octets right behind the frame: the initiator sent before our Reply
		 * existed, or the responder sent an FPDU before receiving ours (RFC
		 * 5044 §7.1.2 rules 1-2). After a Reject they are not MPA's: left
		 * unconsumed for the caller.
		 */
		if (rc == 0 && used < len &&
		    (c->state == WN_MPA_CONN_REQ_RCVD || c->state == WN_MPA_CONN_FULL))
			rc = fail(c, WN_MPA_ERR_BAD_FRAME, WN_MPA_FRAME_OK, false,
				  c->cfg.initiator ? "data behind the MPA Reply"
						   : "data behind the MPA Request");
		break;
	case WN_MPA_CONN_REQ_RCVD:
		/* RFC 5044 §7.1.2 rule 1: the initiator sends nothing before the Reply. */
		rc = fail(c, WN_MPA_ERR_BAD_FRAME, WN_MPA_FRAME_OK, false,
			  "data before the MPA Reply was sent");
		break;
	case WN_MPA_CONN_FULL:
		if (c->error != WN_MPA_ERR_NONE)
			return -ENOTCONN;
		rc = wn_wire_mpa_deframer_input(&c->rx, buf, len, &used);
		if ((rc == -EBADMSG || rc == -EPROTO) && c->state != WN_MPA_CONN_ERROR) {
			enum wn_mpa_err e = wn_mpa_deframer_error(&c->rx);
			rc = fail(c, e, WN_MPA_FRAME_OK, false, wn_wire_mpa_err_str(e));
		}
		break;
	default:
		rc = -ENOTCONN;
		break;
	}
	if (consumed != NULL)
		*consumed = used;
	return rc;
}

static int
check_pd(uint16_t pd_len, const uint8_t *pd, bool enhanced)
{
	if (pd_len != 0 && pd == NULL)
		return -EINVAL;
	if (pd_len + (enhanced ? WN_MPA_ENH_LEN : 0) > WN_MPA_PD_MAX)
		return -EINVAL;
	return 0;
}

/* The Reply answers with the Request's revision, at most our own (RFC 6581 §10). */
static uint8_t
reply_rev(const struct wn_mpa_conn *c)
{
	return c->peer.rev < c->cfg.rev ? c->peer.rev : c->cfg.rev;
}

int
wn_mpa_conn_accept(struct wn_mpa_conn *c, const struct wn_mpa_caps *caps, const uint8_t *pd,
		   uint16_t pd_len, uint64_t now)
{
	const struct wn_mpa_frame *req = &c->peer;
	struct wn_mpa_params *p = &c->params;
	enum wn_mpa_err e;

	if (c->state != WN_MPA_CONN_REQ_RCVD || check_pd(pd_len, pd, req->enhanced) < 0)
		return -EINVAL;
	if (caps != NULL) {
		if (!caps_ok(caps))
			return -EINVAL;
		c->cfg.caps = *caps;
	}
	if (check_timer(c, now) < 0)
		return -ETIMEDOUT;

	e = wn_wire_mpa_negotiate_responder(&c->cfg.caps, req, &p->neg);
	struct wn_mpa_frame rep = {
		.type = WN_MPA_FRAME_REPLY,
		.markers = c->cfg.markers,
		.crc = c->cfg.crc,
		.rev = reply_rev(c),
		/* RFC 6581 §10: enhanced Request <=> enhanced Reply */
		.enhanced = req->enhanced,
		.p2p = p->neg.p2p,
		.rtr = p->neg.rtr,
		.ird = p->neg.reply_ird,
		.ord = p->neg.reply_ord,
		.pd_len = pd_len,
		.pd = pd,
		.rejected = e != WN_MPA_ERR_NONE,
	};
	if (e != WN_MPA_ERR_NONE && e != WN_MPA_ERR_LOCAL && rep.enhanced && rep.rtr == 0 &&
	    req->p2p)
		rep.rtr = c->cfg.caps.rtr; /* name what we would accept */
	if (queue_frame(c, &rep) < 0)
		return -EINVAL;
	if (e != WN_MPA_ERR_NONE) {
		/*
		 * RFC 6581 §9.1: reject, naming the ORD we need (error 6); no common
		 * RTR (7). After a Reject both sides leave MPA (RFC 5044 §7.1.2).
		 */
		struct wn_mpa_event ev = {.type = WN_MPA_EV_ERROR, .err = e, .frame = req,
					  .reason = wn_wire_mpa_err_str(e)};

		c->state = WN_MPA_CONN_REJECTED;
		c->error = e;
		c->deadline = UINT64_MAX;
		emit(c, &ev);
		return -ECONNREFUSED;
	}
	/* RFC 5044 §7.1.1 M: the Request's M asks us for Markers; ours asks the peer. */
	p->tx.markers = req->markers;
	p->rx.markers = c->cfg.markers;
	p->tx.crc = p->rx.crc = c->cfg.crc || req->crc;
	p->tx.seq_start = c->cfg.tx_seq + (uint32_t)c->tx_frame_len;
	p->rx.seq_start = c->cfg.rx_seq + (uint32_t)c->rx_have;
	p->rev = rep.rev;
	enter_full(c);
	c->tx_ready = false; /* fenced until the first FPDU (RFC 5044 §7.1.2 rule 2) */
	struct wn_mpa_event ev = {.type = WN_MPA_EV_ESTABLISHED, .frame = req, .params = p,
				  .reason = "MPA Reply sent"};
	emit(c, &ev);
	return 0;
}

int
wn_mpa_conn_reject(struct wn_mpa_conn *c, const uint8_t *pd, uint16_t pd_len)
{
	const struct wn_mpa_frame *req = &c->peer;

	if (c->state != WN_MPA_CONN_REQ_RCVD || check_pd(pd_len, pd, req->enhanced) < 0)
		return -EINVAL;
	struct wn_mpa_frame rep = {
		.type = WN_MPA_FRAME_REPLY,
		.rejected = true,
		.markers = c->cfg.markers,
		.crc = c->cfg.crc,
		.rev = reply_rev(c),
		.enhanced = req->enhanced,
		.p2p = req->p2p,
		.rtr = req->p2p ? c->cfg.caps.rtr : 0,
		.ird = c->cfg.caps.ird,
		.ord = c->cfg.caps.ord,
		.pd_len = pd_len,
		.pd = pd,
	};
	if (queue_frame(c, &rep) < 0)
		return -EINVAL;
	c->state = WN_MPA_CONN_REJECTED;
	c->deadline = UINT64_MAX;
	return 0;
}

enum wn_mpa_conn_state
wn_mpa_conn_state(const struct wn_mpa_conn *c)
{
	return c->state;
}

bool
wn_mpa_conn_enhanced_unanswered(const struct wn_mpa_conn *c)
{
	/* the Request went out enhanced exactly when wn_mpa_conn_start() made it so */
	return c->cfg.initiator && c->state == WN_MPA_CONN_REQ_SENT &&
	       c->cfg.rev >= WN_MPA_REV_2 && c->cfg.rules.enhanced;
}

const struct wn_mpa_params *
wn_mpa_conn_params(const struct wn_mpa_conn *c)
{
	return &c->params;
}

const struct wn_mpa_frame *
wn_mpa_conn_peer_frame(const struct wn_mpa_conn *c)
{
	return &c->peer;
}

bool
wn_mpa_conn_tx_allowed(const struct wn_mpa_conn *c)
{
	return (c->state == WN_MPA_CONN_FULL || c->term_tx) && c->tx_ready &&
	       c->tx_off == c->tx_len;
}

int
wn_mpa_conn_frame(struct wn_mpa_conn *c, const struct iovec *iov, unsigned int iovcnt,
		  uint8_t *out, size_t cap)
{
	int w;

	if (c->state != WN_MPA_CONN_FULL && !c->term_tx)
		return -ENOTCONN;
	if (!wn_mpa_conn_tx_allowed(c))
		return -EAGAIN;
	w = wn_wire_mpa_fpdu_build(out, cap, iov, iovcnt, c->tx_next, &c->params.tx);
	if (w > 0)
		c->tx_next += (uint32_t)w;
	return w;
}
