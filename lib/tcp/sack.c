/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SACK: the sender's scoreboard (RFC 6675 §3-4: IsLost, SetPipe, NextSeg rule 1) and the
 * receiver's out-of-order intervals that generate SACK blocks (RFC 2018 §4).
 */
#include <string.h>

#include "tcp_priv.h"

/* ---- sender scoreboard: sorted, disjoint [start, end) ranges above SND.UNA ---- */

static void
sb_insert(struct wn_tcp_conn *c, uint32_t s, uint32_t e)
{
	struct seq_range tmp[TCP_SCOREBOARD_MAX + 1];
	unsigned int n = 0, i = 0;

	/* copy ranges before, merge overlapping, copy after */
	while (i < c->nsb && SEQ_LT(c->sb[i].end, s))
		tmp[n++] = c->sb[i++];
	while (i < c->nsb && SEQ_LEQ(c->sb[i].start, e)) {
		s = SEQ_MIN(s, c->sb[i].start);
		e = SEQ_MAX(e, c->sb[i].end);
		i++;
	}
	tmp[n].start = s;
	tmp[n].end = e;
	n++;
	while (i < c->nsb && n < TCP_SCOREBOARD_MAX)
		tmp[n++] = c->sb[i++];
	/* When full, the highest ranges are forgotten (they will be SACKed again). */
	if (n > TCP_SCOREBOARD_MAX)
		n = TCP_SCOREBOARD_MAX;
	memcpy(c->sb, tmp, n * sizeof(tmp[0]));
	c->nsb = (uint8_t)n;
}

void
wn_tcp_sb_trim(struct wn_tcp_conn *c)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < c->nsb; i++) {
		struct seq_range r = c->sb[i];

		if (SEQ_LEQ(r.end, c->snd.una))
			continue;
		if (SEQ_LT(r.start, c->snd.una))
			r.start = c->snd.una;
		c->sb[k++] = r;
	}
	c->nsb = (uint8_t)k;
}

/*
 * RFC 6675 §5 Update(): merge the segment's SACK blocks into the scoreboard.
 * @return octets SACKed now that were neither SACKed nor acknowledged before (the
 * definition of an RFC 6675 duplicate acknowledgment).
 */
uint32_t
wn_tcp_sb_update(struct wn_tcp_conn *c, const struct tcp_seg *s)
{
	uint32_t before = wn_tcp_sb_sacked_bytes(c), after;

	for (unsigned int i = 0; i < s->nsack; i++) {
		uint32_t a = s->sack[i].start, b = s->sack[i].end;

		/* RFC 2018 §4 / RFC 6675 §4: only blocks within (SND.UNA, SND.MAX] count. */
		if (!SEQ_LT(a, b) || SEQ_LEQ(b, c->snd.una) || SEQ_GT(b, c->snd.max) ||
		    SEQ_LT(a, c->snd.una))
			continue;
		sb_insert(c, a, b);
	}
	after = wn_tcp_sb_sacked_bytes(c);
	/* a full scoreboard forgets its highest ranges: that is no news */
	return after > before ? after - before : 0;
}

uint32_t
wn_tcp_sb_sacked_bytes(const struct wn_tcp_conn *c)
{
	uint32_t n = 0;

	for (unsigned int i = 0; i < c->nsb; i++)
		n += c->sb[i].end - c->sb[i].start;
	return n;
}

/*
 * RFC 6675 §4 IsLost(SeqNum): DupThresh discontiguous SACKed ranges above it, or more than
 * (DupThresh - 1) * SMSS octets SACKed above it. DupThresh is the connection's: 3, raised
 * after reordering was seen (input.c dsack_undo()).
 */
bool
wn_tcp_sb_is_lost(const struct wn_tcp_conn *c, uint32_t seq)
{
	uint32_t bytes = 0, blocks = 0;

	for (int i = c->nsb - 1; i >= 0; i--) {
		if (SEQ_LEQ(c->sb[i].end, seq))
			break;
		if (SEQ_LT(seq, c->sb[i].start)) {
			blocks++;
			bytes += c->sb[i].end - c->sb[i].start;
		}
	}
	return blocks >= c->dupthresh || bytes > (c->dupthresh - 1u) * tcp_smss(c);
}

/*
 * RFC 6675 §4 SetPipe: octets in flight = unSACKed octets not considered lost, plus lost
 * octets already retransmitted (below HighRxt). Computed hole by hole.
 */
uint32_t
wn_tcp_sb_pipe(const struct wn_tcp_conn *c)
{
	uint32_t pipe = 0, a = c->snd.una;

	for (unsigned int i = 0; i <= c->nsb; i++) {
		uint32_t b = i < c->nsb ? c->sb[i].start : c->snd.max;

		if (SEQ_LT(a, b)) {
			if (i < c->nsb && wn_tcp_sb_is_lost(c, a)) {
				if (SEQ_GT(c->high_rxt, a))
					pipe += SEQ_MIN(c->high_rxt, b) - a;
			} else {
				pipe += b - a;
			}
		}
		if (i < c->nsb)
			a = c->sb[i].end;
	}
	return pipe;
}

/* RFC 6675 §4 NextSeg rule 1: the first lost, unSACKed hole at or above @p from. */
bool
wn_tcp_sb_next_lost(const struct wn_tcp_conn *c, uint32_t from, struct seq_range *hole)
{
	uint32_t a = c->snd.una;

	for (unsigned int i = 0; i < c->nsb; i++) {
		uint32_t b = c->sb[i].start;
		uint32_t s = SEQ_MAX(a, from);

		if (SEQ_LT(s, b) && wn_tcp_sb_is_lost(c, s)) {
			hole->start = s;
			hole->end = b;
			return true;
		}
		a = c->sb[i].end;
	}
	return false;
}

/* ---- receiver: out-of-order intervals above RCV.NXT ---- */

/* @return 0, or -1 when the segment would need more than conf.ooo_max intervals. */
int
wn_tcp_ooo_add(struct wn_tcp_conn *c, uint32_t s, uint32_t e)
{
	struct seq_range tmp[TCP_OOO_MAX + 1];
	unsigned int n = 0, i = 0, at;

	while (i < c->nooo && SEQ_LT(c->ooo[i].end, s))
		tmp[n++] = c->ooo[i++];
	at = n;
	while (i < c->nooo && SEQ_LEQ(c->ooo[i].start, e)) {
		s = SEQ_MIN(s, c->ooo[i].start);
		e = SEQ_MAX(e, c->ooo[i].end);
		i++;
	}
	tmp[n].start = s;
	tmp[n].end = e;
	n++;
	while (i < c->nooo)
		tmp[n++] = c->ooo[i++];
	if (n > c->ctx->conf.ooo_max)
		return -1;
	memcpy(c->ooo, tmp, n * sizeof(tmp[0]));
	c->nooo = (uint8_t)n;
	c->ooo_recent = (uint8_t)at;
	return 0;
}

/*
 * @return whether [start, end) lies inside one out-of-order interval (received before);
 * that interval becomes the most recent one, so that it follows the D-SACK block in the
 * next ACK (RFC 2883 §4.1.2).
 */
bool
wn_tcp_ooo_covers(struct wn_tcp_conn *c, uint32_t start, uint32_t end)
{
	for (unsigned int i = 0; i < c->nooo; i++)
		if (SEQ_LEQ(c->ooo[i].start, start) && SEQ_LEQ(end, c->ooo[i].end)) {
			c->ooo_recent = (uint8_t)i;
			return true;
		}
	return false;
}

/*
 * RFC 2883 §4: octets [start, end) arrived a second time; the next ACK reports them in its
 * first SACK block (a D-SACK), so that the sender learns its retransmission was not needed
 * (reordering, or a late ACK) and can undo the window reduction (input.c dsack_undo()). Only
 * the latest duplicate is kept: RFC 2883 §4 reports each one once, in the next ACK.
 */
void
wn_tcp_dsack_note(struct wn_tcp_conn *c, uint32_t start, uint32_t end)
{
	if (!c->sack_ok || !SEQ_LT(start, end))
		return;
	c->dsack.start = start;
	c->dsack.end = end;
}

/*
 * The SACK blocks of the next ACK: a pending D-SACK first (RFC 2883 §4), then the block
 * holding the most recently received segment, then the rest (RFC 2018 §4).
 */
unsigned int
wn_tcp_rcv_sack_blocks(const struct wn_tcp_conn *c, struct seq_range *out, unsigned int max)
{
	unsigned int n = 0;

	if (max == 0)
		return 0;
	if (c->dsack.start != c->dsack.end)
		out[n++] = c->dsack;
	if (c->nooo == 0)
		return n;
	if (c->ooo_recent < c->nooo && n < max)
		out[n++] = c->ooo[c->ooo_recent];
	for (unsigned int i = 0; i < c->nooo && n < max; i++) {
		if (i == c->ooo_recent)
			continue;
		out[n++] = c->ooo[i];
	}
	return n;
}
