/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FPDU framing (RFC 5044 §4): MULPDU, framer, resumable deframer with Marker
 * stripping and CRC32c, and the Marker locator for out-of-order segments.
 */
#include <errno.h>
#include <string.h>

#include "wn_wire_crc.h"
#include "wn_wire_mpa.h"

#define MARKER_MASK (WN_MPA_MARKER_INTERVAL - 1u)
/* Non-Marker octets between two Markers. */
#define MARKER_GAP (WN_MPA_MARKER_INTERVAL - WN_MPA_MARKER_SIZE)

static inline uint32_t
marker_off(uint32_t seq, uint32_t seq_start)
{
	/* RFC 5044 §4.2: (S - SeqStart) mod 512 in modulo-2^32 sequence space. */
	return (seq - seq_start) & MARKER_MASK;
}

static inline uint16_t
get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

uint32_t
wn_mpa_mulpdu(uint32_t emss, bool markers)
{
	int64_t m = (int64_t)emss - 6 - (int64_t)(emss % 4);

	/* RFC 5044 §4.5 */
	if (markers)
		m -= 4 * (((int64_t)emss + WN_MPA_MARKER_INTERVAL - 1) / WN_MPA_MARKER_INTERVAL);
	if (m < WN_MPA_MULPDU_MIN)
		return WN_MPA_MULPDU_MIN;
	if (m > WN_MPA_MULPDU_MAX)
		return WN_MPA_MULPDU_MAX;
	return (uint32_t)m;
}

size_t
wn_mpa_fpdu_wire_len(uint32_t seq, uint32_t seq_start, bool markers, size_t ulpdu_len)
{
	size_t n = WN_MPA_ULPDU_LEN_SIZE + ulpdu_len + wn_mpa_pad_len(ulpdu_len) + WN_MPA_CRC_SIZE;
	size_t k0;

	if (!markers)
		return n;
	/*
	 * Marker j sits at wire offset k0 + 512 j with k0 + 508 j FPDU octets before
	 * it; it belongs to this FPDU while FPDU octets remain after it (a Marker
	 * right after the CRC belongs to the next FPDU, RFC 5044 §4.3).
	 */
	k0 = (WN_MPA_MARKER_INTERVAL - marker_off(seq, seq_start)) & MARKER_MASK;
	if (n <= k0)
		return n;
	return n + WN_MPA_MARKER_SIZE * ((n - k0 + MARKER_GAP - 1) / MARKER_GAP);
}

/* Transmit cursor of the framer. */
struct tx {
	uint8_t *p;
	uint32_t seq;
	uint32_t fpdu_seq;
	const struct wn_mpa_stream *st;
	bool started; /* ULPDU_Length written: Markers point back to it */
};

static void
tx_marker_if_due(struct tx *t)
{
	uint32_t ptr;

	if (!t->st->markers || marker_off(t->seq, t->st->seq_start) != 0)
		return;
	/* RFC 5044 §4.3: FPDUPTR back to ULPDU_Length; 0 for a Marker preceding it. */
	ptr = t->started ? t->seq - t->fpdu_seq : 0;
	t->p[0] = 0;
	t->p[1] = 0;
	t->p[2] = (uint8_t)(ptr >> 8);
	t->p[3] = (uint8_t)ptr;
	t->p += WN_MPA_MARKER_SIZE;
	t->seq += WN_MPA_MARKER_SIZE;
}

static void
tx_put(struct tx *t, const uint8_t *src, size_t n)
{
	while (n > 0) {
		size_t k = n;

		tx_marker_if_due(t);
		if (t->st->markers) {
			size_t room = WN_MPA_MARKER_INTERVAL - marker_off(t->seq, t->st->seq_start);
			if (k > room)
				k = room;
		}
		if (src != NULL) {
			memcpy(t->p, src, k);
			src += k;
		} else {
			memset(t->p, 0, k);
		}
		t->p += k;
		t->seq += (uint32_t)k;
		n -= k;
	}
}

int
wn_mpa_fpdu_build(uint8_t *out, size_t cap, const struct iovec *iov, unsigned int iovcnt,
		  uint32_t seq, const struct wn_mpa_stream *st)
{
	struct tx t = {.p = out, .seq = seq, .st = st};
	size_t ulpdu_len = 0, wire;
	uint8_t len_be[2];

	if (st == NULL || out == NULL || (iovcnt != 0 && iov == NULL))
		return -EINVAL;
	if (st->markers && marker_off(seq, st->seq_start) % 4 != 0)
		return -EINVAL;
	for (unsigned int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len != 0 && iov[i].iov_base == NULL)
			return -EINVAL;
		ulpdu_len += iov[i].iov_len;
		if (ulpdu_len > WN_MPA_MULPDU_MAX)
			return -EMSGSIZE; /* RFC 5044 §4.5: never more than 64768 */
	}
	wire = wn_mpa_fpdu_wire_len(seq, st->seq_start, st->markers, ulpdu_len);
	if (cap < wire)
		return -ENOSPC;

	/* A leading Marker (FPDUPTR 0) is CRC-covered by this FPDU (RFC 5044 §4.4). */
	tx_marker_if_due(&t);
	t.fpdu_seq = t.seq;
	t.started = true;
	len_be[0] = (uint8_t)(ulpdu_len >> 8);
	len_be[1] = (uint8_t)ulpdu_len;
	tx_put(&t, len_be, sizeof(len_be));
	for (unsigned int i = 0; i < iovcnt; i++)
		tx_put(&t, iov[i].iov_base, iov[i].iov_len);
	tx_put(&t, NULL, wn_mpa_pad_len(ulpdu_len));
	/* A Marker between PAD and CRC belongs to this FPDU and is covered. */
	tx_marker_if_due(&t);
	/*
	 * RFC 5044 §4.4: the CRC covers everything written so far (leading Marker,
	 * ULPDU_Length, ULPDU, Markers, PAD, trailing Marker), which is contiguous
	 * in @p out: one pass while it is still in cache. With CRC off the field
	 * is still sent (as zero here).
	 */
	wn_crc32c_put_wire(t.p, st->crc ? wn_crc32c(out, (size_t)(t.p - out)) : 0);
	t.p += WN_MPA_CRC_SIZE;
	return (int)(t.p - out);
}

/* ------------------------------------------------------------------------------------------ */

int
wn_mpa_deframer_init(struct wn_mpa_deframer *d, const struct wn_mpa_deframer_cfg *cfg,
		     const struct wn_mpa_rx_ops *ops, void *arg)
{
	if (d == NULL || cfg == NULL || ops == NULL || ops->header == NULL ||
	    ops->payload == NULL || ops->end == NULL || cfg->hdr_len > WN_MPA_RX_HDR_MAX)
		return -EINVAL;
	memset(d, 0, sizeof(*d));
	d->cfg = *cfg;
	d->ops = ops;
	d->arg = arg;
	d->state = WN_MPA_RX_LEN;
	d->seq = cfg->seq;
	d->crc = wn_crc32c_init();
	return 0;
}

/* Fold the pending covered span into the CRC register. */
static inline void
rx_crc_flush(struct wn_mpa_deframer *d)
{
	if (d->pend_len != 0) {
		d->crc = wn_crc32c_update(d->crc, d->pend, d->pend_len);
		d->pend_len = 0;
	}
}

/*
 * Covered octets (RFC 5044 §4.4) arrive as pieces split by Marker handling
 * and state changes but mostly contiguous in the input chunk: extend one
 * pending span and run the CRC engine once per span.
 */
static inline void
rx_crc(struct wn_mpa_deframer *d, const uint8_t *p, size_t n)
{
	if (!d->cfg.stream.crc || n == 0)
		return;
	if (d->pend_len != 0 && d->pend + d->pend_len == p) {
		d->pend_len += n;
		return;
	}
	rx_crc_flush(d);
	d->pend = p;
	d->pend_len = n;
}

static void
rx_marker_done(struct wn_mpa_deframer *d)
{
	uint32_t marker_seq = d->seq - WN_MPA_MARKER_SIZE;
	uint16_t ptr = get_be16(d->mk + 2) & WN_MPA_FPDUPTR_MASK;
	uint16_t expect;

	if (!d->cfg.check_markers)
		return;
	/* RFC 5044 §4.3: a Marker between FPDUs belongs to the next one, FPDUPTR 0. */
	if (d->state == WN_MPA_RX_LEN && d->got == 0)
		expect = 0;
	else
		expect = (uint16_t)(marker_seq - d->h.fpdu_seq) & WN_MPA_FPDUPTR_MASK;
	if (ptr != expect)
		d->marker_bad = true; /* error 3 is reported at the end if the CRC is good */
}

static void
rx_enter_pad(struct wn_mpa_deframer *d)
{
	d->got = 0;
	d->state = wn_mpa_pad_len(d->h.ulpdu_len) != 0 ? WN_MPA_RX_PAD : WN_MPA_RX_CRC;
}

static uint32_t
rx_hdr_target(struct wn_mpa_deframer *d, size_t n)
{
	if (n > d->h.ulpdu_len)
		n = d->h.ulpdu_len;
	if (n > WN_MPA_RX_HDR_MAX)
		n = WN_MPA_RX_HDR_MAX;
	return (uint32_t)n;
}

/* Header octets gathered up to d->want: ask the layer above whether that is enough. */
static int
rx_hdr_check(struct wn_mpa_deframer *d)
{
	while (d->got >= d->want) {
		if (d->ops->hdr_len != NULL) {
			uint32_t w = rx_hdr_target(
				d, d->ops->hdr_len(d->arg, d->hdr, d->got, d->h.ulpdu_len));
			if (w > d->got) {
				d->want = w;
				continue; /* keep gathering */
			}
		}
		d->h.hdr_len = (uint16_t)d->got;
		d->h.hdr = d->hdr;
		d->got = 0;
		if (d->h.hdr_len == d->h.ulpdu_len)
			rx_enter_pad(d);
		else
			d->state = WN_MPA_RX_DATA;
		return d->ops->header(d->arg, &d->h);
	}
	return 0;
}

static int
rx_len(struct wn_mpa_deframer *d, const uint8_t *p, size_t n, size_t *used)
{
	size_t k = 2 - d->got < n ? 2 - d->got : n;

	if (d->got == 0)
		d->h.fpdu_seq = d->seq;
	memcpy(d->len_buf + d->got, p, k);
	rx_crc(d, p, k);
	d->got += (uint32_t)k;
	*used = k;
	if (d->got < 2)
		return 0;
	d->h.ulpdu_len = get_be16(d->len_buf);
	d->h.hdr_len = 0;
	d->got = 0;
	d->want = rx_hdr_target(d, d->ops->hdr_len != NULL ? 2 : d->cfg.hdr_len);
	d->state = WN_MPA_RX_HDR;
	return rx_hdr_check(d);
}

static int
rx_hdr(struct wn_mpa_deframer *d, const uint8_t *p, size_t n, size_t *used)
{
	size_t k = d->want - d->got < n ? d->want - d->got : n;

	memcpy(d->hdr + d->got, p, k);
	rx_crc(d, p, k);
	d->got += (uint32_t)k;
	*used = k;
	return rx_hdr_check(d);
}

static int
rx_data(struct wn_mpa_deframer *d, const uint8_t *p, size_t n, size_t *used)
{
	uint32_t off = d->h.hdr_len + d->got;
	size_t left = (size_t)d->h.ulpdu_len - off;
	size_t k = left < n ? left : n;

	rx_crc(d, p, k);
	d->got += (uint32_t)k;
	*used = k;
	if (k == left)
		rx_enter_pad(d);
	return d->ops->payload(d->arg, p, k, off);
}

static int
rx_pad(struct wn_mpa_deframer *d, const uint8_t *p, size_t n, size_t *used)
{
	size_t left = wn_mpa_pad_len(d->h.ulpdu_len) - d->got;
	size_t k = left < n ? left : n;

	rx_crc(d, p, k); /* PAD is CRC-covered, its content ignored (RFC 5044 §4.1) */
	d->got += (uint32_t)k;
	*used = k;
	if (k == left) {
		d->got = 0;
		d->state = WN_MPA_RX_CRC;
	}
	return 0;
}

static int
rx_crc_field(struct wn_mpa_deframer *d, const uint8_t *p, size_t n, size_t *used)
{
	size_t k = WN_MPA_CRC_SIZE - d->got < n ? WN_MPA_CRC_SIZE - d->got : n;
	enum wn_mpa_err verdict = WN_MPA_ERR_NONE;
	int rc;

	memcpy(d->crc_buf + d->got, p, k);
	d->got += (uint32_t)k;
	*used = k;
	if (d->got < WN_MPA_CRC_SIZE)
		return 0;
	/* RFC 5044 §4.4/§8: CRC first (error 2), then the Marker check (error 3). */
	rx_crc_flush(d);
	if (d->cfg.stream.crc && wn_crc32c_final(d->crc) != wn_crc32c_get_wire(d->crc_buf))
		verdict = WN_MPA_ERR_CRC;
	else if (d->marker_bad)
		verdict = WN_MPA_ERR_MARKER;
	d->state = WN_MPA_RX_LEN;
	d->got = 0;
	d->crc = wn_crc32c_init();
	d->marker_bad = false;
	rc = d->ops->end(d->arg, &d->h, verdict);
	if (verdict != WN_MPA_ERR_NONE) {
		/* RFC 5044 §8: nothing further is delivered on this half connection. */
		d->state = WN_MPA_RX_ERROR;
		d->error = verdict;
		return verdict == WN_MPA_ERR_CRC ? -EBADMSG : -EPROTO;
	}
	return rc;
}

typedef int (*rx_handler)(struct wn_mpa_deframer *d, const uint8_t *p, size_t n, size_t *used);

static const rx_handler rx_handlers[] = {
	[WN_MPA_RX_LEN] = rx_len,   [WN_MPA_RX_HDR] = rx_hdr,       [WN_MPA_RX_DATA] = rx_data,
	[WN_MPA_RX_PAD] = rx_pad,   [WN_MPA_RX_CRC] = rx_crc_field,
};

int
wn_mpa_deframer_input(struct wn_mpa_deframer *d, const uint8_t *buf, size_t len,
		      size_t *consumed)
{
	const bool markers = d->cfg.stream.markers;
	size_t i = 0;
	int rc = 0;

	while (i < len) {
		size_t run = len - i, used = 0;

		if (d->state == WN_MPA_RX_ERROR) {
			rc = d->error == WN_MPA_ERR_CRC ? -EBADMSG : -EPROTO;
			break;
		}
		if (markers) {
			uint32_t moff = marker_off(d->seq, d->cfg.stream.seq_start);

			if (moff < WN_MPA_MARKER_SIZE) {
				/* Marker octets: CRC-covered, removed (RFC 5044 §4.3, §4.4). */
				size_t k = WN_MPA_MARKER_SIZE - moff;
				if (k > run)
					k = run;
				memcpy(d->mk + moff, buf + i, k);
				rx_crc(d, buf + i, k);
				d->seq += (uint32_t)k;
				i += k;
				if (moff + k == WN_MPA_MARKER_SIZE)
					rx_marker_done(d);
				continue;
			}
			if (run > WN_MPA_MARKER_INTERVAL - moff)
				run = WN_MPA_MARKER_INTERVAL - moff;
		}
		rc = rx_handlers[d->state](d, buf + i, run, &used);
		d->seq += (uint32_t)used;
		i += used;
		if (rc < 0)
			break;
	}
	rx_crc_flush(d); /* the pending span points into @p buf */
	if (consumed != NULL)
		*consumed = i;
	return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------------------------------ */

static int
collect_header(void *arg, const struct wn_mpa_rx_hdr *h)
{
	struct wn_mpa_collector *c = arg;

	if (h->ulpdu_len > c->cap)
		return -EMSGSIZE;
	memcpy(c->buf, h->hdr, h->hdr_len);
	c->len = h->hdr_len;
	return 0;
}

static int
collect_payload(void *arg, const uint8_t *p, size_t len, uint32_t off)
{
	struct wn_mpa_collector *c = arg;

	if ((size_t)off + len > c->cap)
		return -EMSGSIZE;
	memcpy(c->buf + off, p, len);
	c->len = off + len;
	return 0;
}

static int
collect_end(void *arg, const struct wn_mpa_rx_hdr *h, enum wn_mpa_err verdict)
{
	struct wn_mpa_collector *c = arg;

	if (verdict != WN_MPA_ERR_NONE || c->deliver == NULL)
		return 0;
	return c->deliver(c->arg, c->buf, h->ulpdu_len);
}

const struct wn_mpa_rx_ops wn_mpa_collect_ops = {
	.hdr_len = NULL,
	.header = collect_header,
	.payload = collect_payload,
	.end = collect_end,
};

/* ------------------------------------------------------------------------------------------ */

unsigned int
wn_mpa_marker_locate(uint32_t seg_seq, const uint8_t *buf, size_t len, uint32_t seq_start,
		     struct wn_mpa_marker_hit *hits, unsigned int max)
{
	size_t k = (WN_MPA_MARKER_INTERVAL - marker_off(seg_seq, seq_start)) & MARKER_MASK;
	unsigned int n = 0;

	if (buf == NULL)
		return 0;
	for (; k + WN_MPA_MARKER_SIZE <= len; k += WN_MPA_MARKER_INTERVAL) {
		uint16_t ptr = get_be16(buf + k + 2) & WN_MPA_FPDUPTR_MASK;
		uint32_t mseq = seg_seq + (uint32_t)k;

		if (n < max && hits != NULL) {
			hits[n].marker_seq = mseq;
			hits[n].fpduptr = ptr;
			/* FPDUPTR 0: the ULPDU_Length follows the Marker (RFC 5044 §4.3). */
			hits[n].fpdu_seq = ptr == 0 ? mseq + WN_MPA_MARKER_SIZE : mseq - ptr;
		}
		n++;
	}
	return n;
}
