/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * FPDU framing (RFC 5044 §4): MULPDU, framer, resumable deframer with Marker
 * stripping and CRC32c, and the Marker locator for out-of-order segments.
 */
#include <assert.h>
#include <errno.h>
#include <string.h>

#include "wn_wire_crc.h"
#include "wn_wire_mpa.h"

#define MARKER_MASK (WN_MPA_MARKER_INTERVAL - 1u)
/* Non-Marker octets between two Markers. */
#define MARKER_GAP (WN_MPA_MARKER_INTERVAL - WN_MPA_MARKER_SIZE)

/* CRC32c (reflected 0x82F63B78) byte table for the few-octet pieces of a gather list. */
static const uint32_t crc32c_tab[256] = {
	0x00000000u, 0xf26b8303u, 0xe13b70f7u, 0x1350f3f4u, 0xc79a971fu, 0x35f1141cu,
	0x26a1e7e8u, 0xd4ca64ebu, 0x8ad958cfu, 0x78b2dbccu, 0x6be22838u, 0x9989ab3bu,
	0x4d43cfd0u, 0xbf284cd3u, 0xac78bf27u, 0x5e133c24u, 0x105ec76fu, 0xe235446cu,
	0xf165b798u, 0x030e349bu, 0xd7c45070u, 0x25afd373u, 0x36ff2087u, 0xc494a384u,
	0x9a879fa0u, 0x68ec1ca3u, 0x7bbcef57u, 0x89d76c54u, 0x5d1d08bfu, 0xaf768bbcu,
	0xbc267848u, 0x4e4dfb4bu, 0x20bd8edeu, 0xd2d60dddu, 0xc186fe29u, 0x33ed7d2au,
	0xe72719c1u, 0x154c9ac2u, 0x061c6936u, 0xf477ea35u, 0xaa64d611u, 0x580f5512u,
	0x4b5fa6e6u, 0xb93425e5u, 0x6dfe410eu, 0x9f95c20du, 0x8cc531f9u, 0x7eaeb2fau,
	0x30e349b1u, 0xc288cab2u, 0xd1d83946u, 0x23b3ba45u, 0xf779deaeu, 0x05125dadu,
	0x1642ae59u, 0xe4292d5au, 0xba3a117eu, 0x4851927du, 0x5b016189u, 0xa96ae28au,
	0x7da08661u, 0x8fcb0562u, 0x9c9bf696u, 0x6ef07595u, 0x417b1dbcu, 0xb3109ebfu,
	0xa0406d4bu, 0x522bee48u, 0x86e18aa3u, 0x748a09a0u, 0x67dafa54u, 0x95b17957u,
	0xcba24573u, 0x39c9c670u, 0x2a993584u, 0xd8f2b687u, 0x0c38d26cu, 0xfe53516fu,
	0xed03a29bu, 0x1f682198u, 0x5125dad3u, 0xa34e59d0u, 0xb01eaa24u, 0x42752927u,
	0x96bf4dccu, 0x64d4cecfu, 0x77843d3bu, 0x85efbe38u, 0xdbfc821cu, 0x2997011fu,
	0x3ac7f2ebu, 0xc8ac71e8u, 0x1c661503u, 0xee0d9600u, 0xfd5d65f4u, 0x0f36e6f7u,
	0x61c69362u, 0x93ad1061u, 0x80fde395u, 0x72966096u, 0xa65c047du, 0x5437877eu,
	0x4767748au, 0xb50cf789u, 0xeb1fcbadu, 0x197448aeu, 0x0a24bb5au, 0xf84f3859u,
	0x2c855cb2u, 0xdeeedfb1u, 0xcdbe2c45u, 0x3fd5af46u, 0x7198540du, 0x83f3d70eu,
	0x90a324fau, 0x62c8a7f9u, 0xb602c312u, 0x44694011u, 0x5739b3e5u, 0xa55230e6u,
	0xfb410cc2u, 0x092a8fc1u, 0x1a7a7c35u, 0xe811ff36u, 0x3cdb9bddu, 0xceb018deu,
	0xdde0eb2au, 0x2f8b6829u, 0x82f63b78u, 0x709db87bu, 0x63cd4b8fu, 0x91a6c88cu,
	0x456cac67u, 0xb7072f64u, 0xa457dc90u, 0x563c5f93u, 0x082f63b7u, 0xfa44e0b4u,
	0xe9141340u, 0x1b7f9043u, 0xcfb5f4a8u, 0x3dde77abu, 0x2e8e845fu, 0xdce5075cu,
	0x92a8fc17u, 0x60c37f14u, 0x73938ce0u, 0x81f80fe3u, 0x55326b08u, 0xa759e80bu,
	0xb4091bffu, 0x466298fcu, 0x1871a4d8u, 0xea1a27dbu, 0xf94ad42fu, 0x0b21572cu,
	0xdfeb33c7u, 0x2d80b0c4u, 0x3ed04330u, 0xccbbc033u, 0xa24bb5a6u, 0x502036a5u,
	0x4370c551u, 0xb11b4652u, 0x65d122b9u, 0x97baa1bau, 0x84ea524eu, 0x7681d14du,
	0x2892ed69u, 0xdaf96e6au, 0xc9a99d9eu, 0x3bc21e9du, 0xef087a76u, 0x1d63f975u,
	0x0e330a81u, 0xfc588982u, 0xb21572c9u, 0x407ef1cau, 0x532e023eu, 0xa145813du,
	0x758fe5d6u, 0x87e466d5u, 0x94b49521u, 0x66df1622u, 0x38cc2a06u, 0xcaa7a905u,
	0xd9f75af1u, 0x2b9cd9f2u, 0xff56bd19u, 0x0d3d3e1au, 0x1e6dcdeeu, 0xec064eedu,
	0xc38d26c4u, 0x31e6a5c7u, 0x22b65633u, 0xd0ddd530u, 0x0417b1dbu, 0xf67c32d8u,
	0xe52cc12cu, 0x1747422fu, 0x49547e0bu, 0xbb3ffd08u, 0xa86f0efcu, 0x5a048dffu,
	0x8ecee914u, 0x7ca56a17u, 0x6ff599e3u, 0x9d9e1ae0u, 0xd3d3e1abu, 0x21b862a8u,
	0x32e8915cu, 0xc083125fu, 0x144976b4u, 0xe622f5b7u, 0xf5720643u, 0x07198540u,
	0x590ab964u, 0xab613a67u, 0xb831c993u, 0x4a5a4a90u, 0x9e902e7bu, 0x6cfbad78u,
	0x7fab5e8cu, 0x8dc0dd8fu, 0xe330a81au, 0x115b2b19u, 0x020bd8edu, 0xf0605beeu,
	0x24aa3f05u, 0xd6c1bc06u, 0xc5914ff2u, 0x37faccf1u, 0x69e9f0d5u, 0x9b8273d6u,
	0x88d28022u, 0x7ab90321u, 0xae7367cau, 0x5c18e4c9u, 0x4f48173du, 0xbd23943eu,
	0xf36e6f75u, 0x0105ec76u, 0x12551f82u, 0xe03e9c81u, 0x34f4f86au, 0xc69f7b69u,
	0xd5cf889du, 0x27a40b9eu, 0x79b737bau, 0x8bdcb4b9u, 0x988c474du, 0x6ae7c44eu,
	0xbe2da0a5u, 0x4c4623a6u, 0x5f16d052u, 0xad7d5351u,
};

/*
 * Running CRC register update; short pieces (Markers, ULPDU_Length, PAD) go
 * through the byte table because a call into isa-l costs more than they do.
 */
static inline uint32_t
crc_update(uint32_t crc, const uint8_t *p, size_t n)
{
	if (n > 8)
		return wn_wire_crc32c_update(crc, p, n);
	while (n-- > 0)
		crc = crc32c_tab[(crc ^ *p++) & 0xFFu] ^ (crc >> 8);
	return crc;
}

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
wn_wire_mpa_mulpdu(uint32_t emss, bool markers)
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
wn_wire_mpa_fpdu_wire_len(uint32_t seq, uint32_t seq_start, bool markers, size_t ulpdu_len)
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

/*
 * What both framers check of a ULPDU (@p iov, @p iovcnt) starting at @p seq: a Marker-aligned
 * start when Markers are on, a base for every piece with octets, at most WN_MPA_MULPDU_MAX
 * octets (RFC 5044 §4.5: never more than 64768). @return 0 with its length in @p len, -EINVAL
 * or -EMSGSIZE.
 */
static int
ulpdu_check(const struct iovec *iov, unsigned int iovcnt, uint32_t seq,
	    const struct wn_mpa_stream *st, size_t *len)
{
	size_t n = 0;

	if (st->markers && marker_off(seq, st->seq_start) % 4 != 0)
		return -EINVAL;
	for (unsigned int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len != 0 && iov[i].iov_base == NULL)
			return -EINVAL;
		n += iov[i].iov_len;
		if (n > WN_MPA_MULPDU_MAX)
			return -EMSGSIZE;
	}
	*len = n;
	return 0;
}

int
wn_wire_mpa_fpdu_build(uint8_t *out, size_t cap, const struct iovec *iov, unsigned int iovcnt,
		  uint32_t seq, const struct wn_mpa_stream *st)
{
	struct tx t = {.p = out, .seq = seq, .st = st};
	size_t ulpdu_len = 0, wire;
	uint8_t len_be[2];
	int rc;

	if (st == NULL || out == NULL || (iovcnt != 0 && iov == NULL))
		return -EINVAL;
	rc = ulpdu_check(iov, iovcnt, seq, st, &ulpdu_len);
	if (rc != 0)
		return rc;
	wire = wn_wire_mpa_fpdu_wire_len(seq, st->seq_start, st->markers, ulpdu_len);
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

/* Gather-list builder state for wn_wire_mpa_fpdu_gather(). */
struct sg {
	struct iovec *out;
	unsigned int max, n;
	uint8_t *scr;
	size_t scr_cap, scr_used;
	uint32_t seq, fpdu_seq, crc;
	const struct wn_mpa_stream *st;
	bool started;
	int err;
};

static void
sg_piece(struct sg *g, const uint8_t *p, size_t k, bool covered)
{
	if (k == 0 || g->err != 0)
		return;
	if (covered && g->st->crc)
		g->crc = crc_update(g->crc, p, k);
	g->seq += (uint32_t)k;
	if (g->n > 0 && (const uint8_t *)g->out[g->n - 1].iov_base + g->out[g->n - 1].iov_len == p) {
		g->out[g->n - 1].iov_len += k;
		return;
	}
	if (g->n == g->max) {
		g->err = -ENOSPC;
		return;
	}
	g->out[g->n].iov_base = (void *)(uintptr_t)p;
	g->out[g->n].iov_len = k;
	g->n++;
}

static uint8_t *
sg_scratch(struct sg *g, size_t k)
{
	uint8_t *p;

	if (g->scr_used + k > g->scr_cap) {
		g->err = -ENOSPC;
		return NULL;
	}
	p = g->scr + g->scr_used;
	g->scr_used += k;
	return p;
}

static void
sg_marker_if_due(struct sg *g)
{
	uint32_t ptr;
	uint8_t *m;

	if (!g->st->markers || marker_off(g->seq, g->st->seq_start) != 0 || g->err != 0)
		return;
	m = sg_scratch(g, WN_MPA_MARKER_SIZE);
	if (m == NULL)
		return;
	/* RFC 5044 §4.3: FPDUPTR back to ULPDU_Length; 0 for a Marker preceding it. */
	ptr = g->started ? g->seq - g->fpdu_seq : 0;
	m[0] = 0;
	m[1] = 0;
	m[2] = (uint8_t)(ptr >> 8);
	m[3] = (uint8_t)ptr;
	sg_piece(g, m, WN_MPA_MARKER_SIZE, true);
}

/* Emit @p n octets at @p src (or zeros into scratch when @p src is NULL). */
static void
sg_put(struct sg *g, const uint8_t *src, size_t n)
{
	while (n > 0 && g->err == 0) {
		size_t k = n;

		sg_marker_if_due(g);
		if (g->st->markers) {
			size_t room = WN_MPA_MARKER_INTERVAL - marker_off(g->seq, g->st->seq_start);
			if (k > room)
				k = room;
		}
		const uint8_t *p = src;
		if (src == NULL) {
			uint8_t *z = sg_scratch(g, k);
			if (z == NULL)
				return;
			memset(z, 0, k);
			p = z;
		} else {
			src += k;
		}
		sg_piece(g, p, k, true);
		n -= k;
	}
}

int
wn_wire_mpa_fpdu_gather(struct iovec *out, unsigned int max_out, uint8_t *scratch,
		   size_t scratch_len, const struct iovec *iov, unsigned int iovcnt, uint32_t seq,
		   const struct wn_mpa_stream *st)
{
	struct sg g = {.out = out, .max = max_out, .scr = scratch, .scr_cap = scratch_len,
		       .seq = seq, .crc = wn_crc32c_init(), .st = st};
	size_t ulpdu_len = 0;
	uint8_t *p;
	int rc;

	if (st == NULL || out == NULL || scratch == NULL || (iovcnt != 0 && iov == NULL))
		return -EINVAL;
	rc = ulpdu_check(iov, iovcnt, seq, st, &ulpdu_len);
	if (rc != 0)
		return rc;
	sg_marker_if_due(&g); /* leading Marker, FPDUPTR 0, CRC-covered */
	g.fpdu_seq = g.seq;
	g.started = true;
	p = sg_scratch(&g, WN_MPA_ULPDU_LEN_SIZE);
	if (p == NULL)
		return g.err;
	p[0] = (uint8_t)(ulpdu_len >> 8);
	p[1] = (uint8_t)ulpdu_len;
	sg_piece(&g, p, WN_MPA_ULPDU_LEN_SIZE, true);
	for (unsigned int i = 0; i < iovcnt; i++)
		sg_put(&g, iov[i].iov_base, iov[i].iov_len);
	sg_put(&g, NULL, wn_mpa_pad_len(ulpdu_len));
	sg_marker_if_due(&g); /* a Marker between PAD and CRC is covered */
	p = sg_scratch(&g, WN_MPA_CRC_SIZE);
	if (p == NULL)
		return g.err;
	wn_crc32c_put_wire(p, st->crc ? wn_crc32c_final(g.crc) : 0);
	sg_piece(&g, p, WN_MPA_CRC_SIZE, false);
	/* the octets gathered are the FPDU's wire length, Markers included */
	assert(g.err != 0 || g.seq - seq == wn_wire_mpa_fpdu_wire_len(seq, st->seq_start,
								      st->markers, ulpdu_len));
	return g.err != 0 ? g.err : (int)g.n;
}

/* ------------------------------------------------------------------------------------------ */

int
wn_wire_mpa_deframer_init(struct wn_mpa_deframer *d, const struct wn_mpa_deframer_cfg *cfg,
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
		d->crc = crc_update(d->crc, d->pend, d->pend_len);
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
wn_wire_mpa_deframer_input(struct wn_mpa_deframer *d, const uint8_t *buf, size_t len,
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

const struct wn_mpa_rx_ops wn_wire_mpa_collect_ops = {
	.hdr_len = NULL,
	.header = collect_header,
	.payload = collect_payload,
	.end = collect_end,
};

/* ------------------------------------------------------------------------------------------ */

unsigned int
wn_wire_mpa_marker_locate(uint32_t seg_seq, const uint8_t *buf, size_t len, uint32_t seq_start,
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

/* FPDU start (its first wire octet) for a ULPDU_Length at @p len_seq. */
static uint32_t
fpdu_start_of(uint32_t len_seq, const struct wn_mpa_stream *st)
{
	uint32_t m = len_seq - WN_MPA_MARKER_SIZE;

	/* a Marker right before ULPDU_Length is that FPDU's leading Marker */
	return st->markers && marker_off(m, st->seq_start) == 0 ? m : len_seq;
}

/* Read ULPDU_Length of the FPDU starting at @p start, if inside the segment. */
static bool
seg_len_at(uint32_t seg_seq, const uint8_t *buf, size_t len, uint32_t start,
	   const struct wn_mpa_stream *st, uint16_t *ulpdu_len)
{
	uint32_t off = start - seg_seq;

	if (st->markers && marker_off(start, st->seq_start) == 0)
		off += WN_MPA_MARKER_SIZE;
	if ((size_t)off + 2 > len)
		return false;
	*ulpdu_len = get_be16(buf + off);
	return true;
}

int
wn_wire_mpa_segment_fpdus(uint32_t seg_seq, const uint8_t *buf, size_t len,
		     const struct wn_mpa_deframer_cfg *cfg, bool aligned,
		     const struct wn_mpa_rx_ops *ops, void *arg, uint32_t *first, uint32_t *end)
{
	const struct wn_mpa_stream *st;
	struct wn_mpa_marker_hit hit;
	bool found = false;
	uint32_t start = 0, pos;
	uint16_t ul = 0;
	int n = 0;

	if (cfg == NULL || ops == NULL || (buf == NULL && len != 0))
		return -EINVAL;
	st = &cfg->stream;
	if (st->markers) {
		/* RFC 5044 §4.3: header position = Marker sequence - FPDUPTR */
		for (size_t k = (WN_MPA_MARKER_INTERVAL - marker_off(seg_seq, st->seq_start)) &
				MARKER_MASK;
		     k + WN_MPA_MARKER_SIZE <= len && !found; k += WN_MPA_MARKER_INTERVAL) {
			if (wn_wire_mpa_marker_locate(seg_seq + (uint32_t)k, buf + k,
						      WN_MPA_MARKER_SIZE, st->seq_start, &hit,
						      1) != 1)
				continue;
			uint32_t s = hit.fpduptr == 0 ? hit.marker_seq
						      : fpdu_start_of(hit.fpdu_seq, st);
			if (s - seg_seq < len) { /* begins inside the segment */
				start = s;
				found = true;
			}
		}
	}
	if (!found && aligned) {
		start = seg_seq;
		found = true;
	}
	if (!found)
		return 0;

	/* Walk complete FPDUs by ULPDU_Length. */
	pos = start;
	while (seg_len_at(seg_seq, buf, len, pos, st, &ul)) {
		size_t w = wn_wire_mpa_fpdu_wire_len(pos, st->seq_start, st->markers, ul);
		if ((size_t)(pos - seg_seq) + w > len)
			break;
		pos += (uint32_t)w;
		n++;
	}
	if (first != NULL)
		*first = start;
	if (end != NULL)
		*end = pos;
	if (pos == start)
		return 0;

	struct wn_mpa_deframer_cfg dc = *cfg;
	struct wn_mpa_deframer d;
	int rc;

	dc.seq = start;
	rc = wn_wire_mpa_deframer_init(&d, &dc, ops, arg);
	if (rc < 0)
		return rc;
	size_t used = 0;
	rc = wn_wire_mpa_deframer_input(&d, buf + (start - seg_seq), pos - start, &used);
	if (rc < 0)
		return rc;
	return n; /* every FPDU walked was complete: the deframer ended on a boundary */
}

/* ---- whole FPDUs in place ---- */

/* A position in a list of input pieces. */
struct vcur {
	const struct iovec *in;
	unsigned int n, i; /* pieces, the current one */
	size_t o;          /* offset in it */
};

/* Move @p c on by @p k octets (there are at least that many). */
static inline void
vcur_skip(struct vcur *c, size_t k)
{
	while (k > 0) {
		size_t r = c->in[c->i].iov_len - c->o;

		if (k < r) {
			c->o += k;
			return;
		}
		k -= r;
		c->i++;
		c->o = 0;
	}
}

/* Past empty pieces and the end of the current one (octets remain at @p c). */
static inline void
vcur_norm(struct vcur *c)
{
	while (c->o == c->in[c->i].iov_len) {
		c->i++;
		c->o = 0;
	}
}

/* Copy @p k octets at @p c to @p out and move on. */
static inline void
vcur_read(struct vcur *c, uint8_t *out, size_t k)
{
	while (k > 0) {
		size_t r, m;

		vcur_norm(c);
		r = c->in[c->i].iov_len - c->o;
		m = k < r ? k : r;

		memcpy(out, (const uint8_t *)c->in[c->i].iov_base + c->o, m);
		out += m;
		k -= m;
		vcur_skip(c, m);
	}
}

/* The CRC register over the next @p k octets at @p c, moving on. */
static inline uint32_t
vcur_crc(struct vcur *c, size_t k, uint32_t crc)
{
	while (k > 0) {
		size_t r, m;

		vcur_norm(c);
		r = c->in[c->i].iov_len - c->o;
		m = k < r ? k : r;
		crc = crc_update(crc, (const uint8_t *)c->in[c->i].iov_base + c->o, m);
		k -= m;
		vcur_skip(c, m);
	}
	return crc;
}

/* Append the next @p k octets at @p c to the view's pieces, moving on. @return 0 or -E2BIG. */
static inline int
vcur_take(struct vcur *c, size_t k, struct wn_wire_mpa_fpdu_view *f)
{
	while (k > 0) {
		const uint8_t *p;
		size_t r, m;

		vcur_norm(c);
		p = (const uint8_t *)c->in[c->i].iov_base + c->o;
		r = c->in[c->i].iov_len - c->o;
		m = k < r ? k : r;

		if (f->n > 0 && (const uint8_t *)f->v[f->n - 1].iov_base + f->v[f->n - 1].iov_len ==
				p) {
			f->v[f->n - 1].iov_len += m;
		} else {
			if (f->n == WN_MPA_VIEW_MAX)
				return -E2BIG;
			f->v[f->n].iov_base = (void *)(uintptr_t)p;
			f->v[f->n].iov_len = m;
			f->n++;
		}
		k -= m;
		vcur_skip(c, m);
	}
	return 0;
}

/* Check the Marker at @p c (sequence number @p mseq) against FPDU @p fpdu_seq, moving on. */
static inline bool
view_marker_ok(struct vcur *c, uint32_t mseq, uint32_t fpdu_seq, bool leading)
{
	uint8_t mk[WN_MPA_MARKER_SIZE];
	uint16_t expect = leading ? 0 : (uint16_t)(mseq - fpdu_seq) & WN_MPA_FPDUPTR_MASK;

	vcur_read(c, mk, sizeof(mk));
	return (get_be16(mk + 2) & WN_MPA_FPDUPTR_MASK) == expect;
}

/* RFC 5044 §4.4/§8: a bad CRC (error 2) is reported before a bad Marker (error 3). */
static inline enum wn_mpa_err
view_verdict(bool crc_bad, bool marker_bad)
{
	if (crc_bad)
		return WN_MPA_ERR_CRC;
	return marker_bad ? WN_MPA_ERR_MARKER : WN_MPA_ERR_NONE;
}

/*
 * wn_wire_mpa_fpdu_view() with Markers, the FPDU whole in the @p len octets at @p p (the
 * segmenter's FPDU-aligned segments): the ULPDU's runs between Markers found by arithmetic,
 * the CRC over the octets in one call. The same checks, in the same order, as the general walk.
 * @return 1, 0 (not whole in @p p: use the general walk), -E2BIG.
 */
static int
view_markers_flat(const uint8_t *p, size_t len, uint32_t seq,
		  const struct wn_mpa_deframer_cfg *cfg, struct wn_wire_mpa_fpdu_view *f)
{
	const struct wn_mpa_stream *st = &cfg->stream;
	size_t lead = marker_off(seq, st->seq_start) == 0 ? WN_MPA_MARKER_SIZE : 0;
	size_t o, end, left;
	bool marker_bad = false, crc_bad;
	uint16_t ulen;
	uint32_t wire;

	if (len < lead + WN_MPA_ULPDU_LEN_SIZE)
		return 0;
	ulen = get_be16(p + lead);
	wire = (uint32_t)wn_wire_mpa_fpdu_wire_len(seq, st->seq_start, true, ulen);
	if (len < wire)
		return 0;
	f->ulpdu_len = ulen;
	f->fpdu_seq = seq + (uint32_t)lead;
	f->wire_len = wire;
	f->n = 0;
	end = wire - WN_MPA_CRC_SIZE;
	if (lead != 0 && cfg->check_markers && (get_be16(p + 2) & WN_MPA_FPDUPTR_MASK) != 0)
		marker_bad = true;
	o = lead + WN_MPA_ULPDU_LEN_SIZE;
	left = ulen;
	while (o < end) {
		uint32_t moff = marker_off(seq + (uint32_t)o, st->seq_start);
		size_t run;

		if (moff == 0) {
			uint16_t expect = (uint16_t)(seq + (uint32_t)o - f->fpdu_seq) &
					  WN_MPA_FPDUPTR_MASK;

			if (cfg->check_markers &&
			    (get_be16(p + o + 2) & WN_MPA_FPDUPTR_MASK) != expect)
				marker_bad = true;
			o += WN_MPA_MARKER_SIZE;
			continue;
		}
		run = WN_MPA_MARKER_INTERVAL - moff;
		if (run > end - o)
			run = end - o;
		if (left > 0) {
			size_t m = run < left ? run : left;

			if (f->n == WN_MPA_VIEW_MAX)
				return -E2BIG;
			f->v[f->n].iov_base = (void *)(uintptr_t)(p + o);
			f->v[f->n].iov_len = m;
			f->n++;
			left -= m;
		}
		o += run;
	}
	crc_bad = st->crc && wn_crc32c_final(crc_update(wn_crc32c_init(), p, end)) !=
				 wn_crc32c_get_wire(p + end);
	f->verdict = view_verdict(crc_bad, marker_bad);
	return 1;
}

int
wn_wire_mpa_fpdu_view(const struct iovec *in, unsigned int n_in, uint32_t seq,
		 const struct wn_mpa_deframer_cfg *cfg, struct wn_wire_mpa_fpdu_view *f)
{
	const struct wn_mpa_stream *st;
	struct vcur c = {.in = in, .n = n_in}, k;
	size_t have = 0, lead, left;
	uint32_t s, end, crc;
	uint8_t b[WN_MPA_CRC_SIZE];
	bool marker_bad = false;
	int rc;

	if (in == NULL || cfg == NULL || f == NULL)
		return -EINVAL;
	st = &cfg->stream;
	if (!st->markers && n_in > 0 && in[0].iov_len >= WN_MPA_ULPDU_LEN_SIZE) {
		/* the common case: no Markers, the FPDU whole in the first piece */
		const uint8_t *p = in[0].iov_base;

		f->ulpdu_len = get_be16(p);
		f->fpdu_seq = seq;
		f->wire_len = WN_MPA_ULPDU_LEN_SIZE + f->ulpdu_len + wn_mpa_pad_len(f->ulpdu_len) +
			      WN_MPA_CRC_SIZE;
		if (in[0].iov_len >= f->wire_len) {
			size_t cl = f->wire_len - WN_MPA_CRC_SIZE;

			f->verdict = st->crc && wn_crc32c_final(crc_update(wn_crc32c_init(), p, cl)) !=
				     wn_crc32c_get_wire(p + cl) ? WN_MPA_ERR_CRC : WN_MPA_ERR_NONE;
			f->n = f->ulpdu_len != 0;
			f->v[0].iov_base = (void *)(uintptr_t)(p + WN_MPA_ULPDU_LEN_SIZE);
			f->v[0].iov_len = f->ulpdu_len;
			return 1;
		}
	}
	if (st->markers && n_in > 0) {
		rc = view_markers_flat(in[0].iov_base, in[0].iov_len, seq, cfg, f);
		if (rc != 0)
			return rc;
	}
	for (unsigned int i = 0; i < n_in; i++)
		have += in[i].iov_len;
	/* a leading Marker (FPDUPTR 0) belongs to this FPDU; ULPDU_Length is never cut by one */
	lead = st->markers && marker_off(seq, st->seq_start) == 0 ? WN_MPA_MARKER_SIZE : 0;
	f->wire_len = 0;
	if (have < lead + WN_MPA_ULPDU_LEN_SIZE)
		return 0;
	k = c;
	vcur_skip(&k, lead);
	vcur_read(&k, b, WN_MPA_ULPDU_LEN_SIZE);
	f->ulpdu_len = get_be16(b);
	f->fpdu_seq = seq + (uint32_t)lead;
	f->wire_len = (uint32_t)wn_wire_mpa_fpdu_wire_len(seq, st->seq_start, st->markers,
						      f->ulpdu_len);
	if (have < f->wire_len)
		return 0;
	f->n = 0;
	/* RFC 5044 §4.4: the CRC covers every octet but its own field, Markers included */
	crc = st->crc ? vcur_crc(&c, f->wire_len - WN_MPA_CRC_SIZE, wn_crc32c_init()) : 0;
	if (!st->crc)
		vcur_skip(&c, f->wire_len - WN_MPA_CRC_SIZE);
	vcur_read(&c, b, WN_MPA_CRC_SIZE);
	/* the ULPDU: the octets after ULPDU_Length, Markers left out */
	k.i = 0;
	k.o = 0;
	s = seq;
	end = seq + f->wire_len - WN_MPA_CRC_SIZE;
	left = f->ulpdu_len;
	if (lead != 0) {
		if (cfg->check_markers && !view_marker_ok(&k, s, 0, true))
			marker_bad = true;
		else if (!cfg->check_markers)
			vcur_skip(&k, lead);
		s += (uint32_t)lead;
	}
	vcur_skip(&k, WN_MPA_ULPDU_LEN_SIZE);
	s += WN_MPA_ULPDU_LEN_SIZE;
	while (s != end) {
		uint32_t run = end - s;

		if (st->markers) {
			uint32_t moff = marker_off(s, st->seq_start);

			if (moff == 0) {
				if (cfg->check_markers && !view_marker_ok(&k, s, f->fpdu_seq, false))
					marker_bad = true;
				else if (!cfg->check_markers)
					vcur_skip(&k, WN_MPA_MARKER_SIZE);
				s += WN_MPA_MARKER_SIZE;
				continue;
			}
			if (run > WN_MPA_MARKER_INTERVAL - moff)
				run = WN_MPA_MARKER_INTERVAL - moff;
		}
		/* ULPDU octets, then PAD (CRC-covered, its content ignored: RFC 5044 §4.1) */
		if (left > 0) {
			size_t m = run < left ? run : left;

			rc = vcur_take(&k, m, f);
			if (rc != 0)
				return rc;
			left -= m;
			if (m < run)
				vcur_skip(&k, run - m);
		} else {
			vcur_skip(&k, run);
		}
		s += run;
	}
	f->verdict = view_verdict(st->crc && wn_crc32c_final(crc) != wn_crc32c_get_wire(b),
				  marker_bad);
	return 1;
}

/* ---- whole-ULPDU gathering ---- */

static int
gather_header(void *arg, const struct wn_mpa_rx_hdr *h)
{
	struct wn_mpa_gather *g = arg;

	if (g->buf == NULL)
		return -ENOMEM;
	memcpy(g->buf, h->hdr, h->hdr_len);
	return 0;
}

static int
gather_payload(void *arg, const uint8_t *p, size_t len, uint32_t off)
{
	struct wn_mpa_gather *g = arg;

	memcpy(g->buf + off, p, len);
	return 0;
}

static int
gather_end(void *arg, const struct wn_mpa_rx_hdr *h, enum wn_mpa_err verdict)
{
	struct wn_mpa_gather *g = arg;

	return g->done != NULL ? g->done(g->arg, g->buf, h->ulpdu_len, verdict) : 0;
}

const struct wn_mpa_rx_ops wn_wire_mpa_gather_ops = {
	.header = gather_header,
	.payload = gather_payload,
	.end = gather_end,
};
