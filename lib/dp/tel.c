/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * warpnicd dataplane telemetry (rte_telemetry, dpdk-telemetry.py): every command reads the
 * snapshots the shards refresh every 100 ms under their mutex, never live lcore state.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_telemetry.h>

#include "dp_priv.h"
#include "wn_dpdk_compat.h"

static struct wn_dp_group *tel_g;

/* The counters lib/cm and the lower layer keep, under the dataplane's names. */
static void
stats_collect(struct wn_dp *dp)
{
	struct wn_llp_stats ls;
	struct wn_sctp_stats sx;
	const struct wn_cm_stats *cs = &dp->cm.st;

	wn_llp_stats(dp->llp[DP_LLP_SCTP], &ls);
	wn_sctp_stats_get(dp->llp[DP_LLP_SCTP], &sx);
	dp->st.sctp_rx_pkts = sx.rx_pkts;
	dp->st.sctp_tx_pkts = sx.tx_pkts;
	dp->st.sctp_rx_bad = sx.rx_bad;
	dp->st.sctp_assocs = sx.assocs;
	dp->st.sctp_aborts = sx.aborts;
	dp->st.sctp_sessions = sx.sessions;
	dp->st.sctp_rx_ulpdus = ls.rx_ulpdus;
	dp->st.sctp_tx_ulpdus = ls.tx_ulpdus;
	dp->st.sctp_errors = ls.errors;
	dp->st.sctp_terms_sent = sx.terms_sent;
	dp->st.sctp_terms_recv = sx.terms_recv;
	wn_llp_stats(dp->llp[DP_LLP_MPA], &ls);
	dp->st.conns_active = cs->conns_active;
	dp->st.conns_passive = cs->conns_passive;
	dp->st.conns_established = cs->conns_established;
	dp->st.conns_failed = cs->conns_failed;
	dp->st.conns_rejected = cs->conns_rejected;
	dp->st.conns_unenhanced = cs->conns_unenhanced;
	dp->st.conns_closed = cs->conns_closed;
	dp->st.ib_qps = cs->ib_qps;
	dp->st.ib_attempts = cs->ib_attempts;
	dp->st.ib_established = cs->ib_established;
	dp->st.ib_requests = cs->ib_requests;
	dp->st.ib_held = cs->ib_held;
	dp->st.ib_refused = cs->ib_refused;
	dp->st.ib_crossed = cs->ib_crossed;
	dp->st.ib_crossed_refused = cs->ib_crossed_refused;
	dp->st.ib_retry_exceeded = cs->ib_retry_exceeded;
	dp->st.mpa_errors = ls.errors;
	dp->st.mpa_crc_errors = ls.crc_errors;
	dp->st.rx_fpdus = ls.rx_ulpdus;
	dp->st.rx_ooo_fpdus = ls.rx_ooo_ulpdus;
	dp->st.tx_fpdus = ls.tx_ulpdus;
	dp->st.tx_again = ls.tx_again;
	dp->st.zc_fpdus = ls.zc_ulpdus;
	dp->st.zc_bytes = ls.zc_bytes;
	dp->st.ref_fpdus = ls.ref_ulpdus;
	dp->st.ref_bytes = ls.ref_bytes;
	dp->st.tx_tokens = ls.tokens;
	dp->st.zc_released = ls.zc_released;
	dp->st.zc_fallback = ls.zc_fallback;
	dp->st.copy_fpdus = ls.copy_ulpdus;
	dp->st.copy_bytes = ls.copy_bytes;
	dp->st.copy_inline = ls.copy_inline;
	dp->st.copy_unpinned = ls.copy_unpinned;
	dp->st.copy_no_token = ls.copy_no_token;
	dp->st.copy_staged = ls.copy_staged;
	dp->st.copy_small = ls.copy_small;
	dp->st.copy_other = ls.copy_other;
	wn_dp_ud_stats(dp, &dp->st);
}

void
wn_dp_tel_refresh(struct wn_dp *dp)
{
	struct dp_conn *c;
	struct dp_qp *qp;
	uint32_t n = 0;

	pthread_mutex_lock(&dp->tel_lock);
	stats_collect(dp);
	dp->tel_dp = dp->st;
	wn_net_stats_get(dp->nif, &dp->tel_net);
	dp->tel_naddr = RTE_MIN(wn_net_if_addrs(dp->nif, dp->tel_addr, RTE_DIM(dp->tel_addr)),
				(unsigned int)RTE_DIM(dp->tel_addr));
	dp->tel_nneigh = wn_net_neigh_list(dp->nif, dp->tel_neigh, DP_TEL_NEIGH);
	wn_tcp_stats_get(dp->tcp, &dp->tel_tcp);
	dp->tel_tcp_conns = wn_tcp_conn_count(dp->tcp);
	TAILQ_FOREACH(qp, &dp->active, next) {
		if (n == DP_TEL_QPS)
			break;
		dp->tel_qp[n].handle = qp->handle;
		dp->tel_qp[n].qpn = qp->d->qpn;
		if (qp->ud != NULL) {
			/* a UD QP: its verbs state, its messages where an RC QP's ULPDUs go */
			struct wn_ud_stats us;

			wn_ud_qp_stats(qp->ud, &us);
			memset(&dp->tel_qp[n].s, 0, sizeof(dp->tel_qp[n].s));
			dp->tel_qp[n].state = wn_ud_qp_state(qp->ud);
			dp->tel_qp[n].conn_state = WN_CM_CLOSED;
			dp->tel_qp[n].llp = "ud";
			dp->tel_qp[n].s.rx_ulpdu = us.rx_msgs;
			dp->tel_qp[n].s.tx_ulpdu = us.tx_msgs;
			dp->tel_qp[n].s.rx_bytes_placed = us.rx_bytes;
			dp->tel_qp[n].s.tx_payload = us.tx_bytes;
			dp->tel_qp[n].s.cqe = us.cqe;
			dp->tel_qp[n].s.wqe_flushed = us.wqe_flushed;
			n++;
			continue;
		}
		dp->tel_qp[n].state = wn_rnic_qp_state(qp->eng);
		dp->tel_qp[n].conn_state = qp->conn != NULL ? wn_cm_state(&qp->conn->ep)
							    : WN_CM_CLOSED;
		dp->tel_qp[n].llp = qp->llp != NULL ? wn_llp_kind(qp->llp) : "none";
		wn_rnic_qp_stats(qp->eng, &dp->tel_qp[n].s);
		n++;
	}
	dp->tel_nqp = n;
	n = 0;
	TAILQ_FOREACH(c, &dp->conns, next) {
		struct wn_llp *l = wn_cm_llp(&c->ep);

		if (n == DP_TEL_QPS)
			break;
		if (l == NULL)
			continue;
		dp->tel_conn[n].id = c->id;
		dp->tel_conn[n].qpn = c->qp != NULL ? c->qp->d->qpn : 0;
		dp->tel_conn[n].state = wn_cm_state(&c->ep);
		wn_llp_info(l, &dp->tel_conn[n].llp);
		dp->tel_conn[n].kind = wn_llp_kind(l);
		n++;
	}
	dp->tel_nconn = n;
	pthread_mutex_unlock(&dp->tel_lock);
}


#define ADD(f) (sum->f += s->f)

static void
sum_dp(struct wn_dp_stats *sum, const struct wn_dp_stats *s)
{
	ADD(rx_pkts);
	ADD(tx_pkts);
	ADD(tx_drop);
	ADD(tx_held);
	ADD(tx_nolink);
	ADD(loops);
	ADD(idle_sleeps);
	ADD(wake_bell);
	ADD(wake_rx);
	ADD(wake_timer);
	ADD(idle_naps);
	ADD(ctl_msgs);
	ADD(cm_events);
	ADD(async_events);
	ADD(ctl_drop);
	ADD(ctl_waited);
	ADD(qp_polls);
	ADD(qp_parks);
	ADD(qp_room_waits);
	ADD(qp_marks);
	ADD(qp_sweep_found);
	ADD(qps_ready);
	ADD(conns_active);
	ADD(conns_passive);
	ADD(conns_established);
	ADD(conns_failed);
	ADD(conns_rejected);
	ADD(conns_unenhanced);
	ADD(conns_closed);
	ADD(ib_qps);
	ADD(ib_attempts);
	ADD(ib_established);
	ADD(ib_requests);
	ADD(ib_held);
	ADD(ib_refused);
	ADD(ib_crossed);
	ADD(ib_crossed_refused);
	ADD(ib_retry_exceeded);
	ADD(mpa_errors);
	ADD(mpa_crc_errors);
	ADD(rx_fpdus);
	ADD(tx_fpdus);
	ADD(tx_again);
	ADD(cq_notify);
	ADD(loopback_pkts);
	ADD(handoff_tx);
	ADD(handoff_rx);
	ADD(handoff_drop);
	ADD(zc_fpdus);
	ADD(zc_bytes);
	ADD(ref_fpdus);
	ADD(ref_bytes);
	ADD(tx_tokens);
	ADD(zc_released);
	ADD(zc_fallback);
	ADD(zc_unmapped);
	ADD(tx_reclaimed);
	ADD(copy_fpdus);
	ADD(copy_bytes);
	ADD(copy_inline);
	ADD(copy_unpinned);
	ADD(copy_no_token);
	ADD(copy_staged);
	ADD(copy_small);
	ADD(copy_other);
	ADD(mr_dereg_deferred);
	ADD(mr_dereg_waiting);
	ADD(loopback_copies);
	ADD(listens);
	ADD(term_sent);
	ADD(term_recv);
	ADD(rnr_holds);
	ADD(rnr_resumed);
	ADD(rnr_timeouts);
	ADD(rnr_held);
	ADD(rx_ooo_fpdus);
	ADD(ooo_placed);
	ADD(ooo_bytes);
	if (s->term_sent != 0)
		sum->term_sent_last = s->term_sent_last;
	if (s->term_recv != 0)
		sum->term_recv_last = s->term_recv_last;
	ADD(sctp_rx_pkts);
	ADD(sctp_tx_pkts);
	ADD(sctp_rx_bad);
	ADD(sctp_assocs);
	ADD(sctp_aborts);
	ADD(sctp_sessions);
	ADD(sctp_rx_ulpdus);
	ADD(sctp_tx_ulpdus);
	ADD(sctp_errors);
	ADD(sctp_terms_sent);
	ADD(sctp_terms_recv);
	ADD(ud_tx_msgs);
	ADD(ud_tx_drop);
	ADD(ud_tx_nombuf);
	ADD(ud_loopback);
	ADD(ud_rx_msgs);
	ADD(ud_rx_noqp);
	ADD(ud_rx_drop_qkey);
	ADD(ud_rx_drop_norecv);
	ADD(ud_rx_drop_state);
	ADD(ud_rx_bad);
	ADD(ud_rx_sidr);
	ADD(sidr_req_tx);
	ADD(sidr_req_rx);
	ADD(sidr_rep_tx);
	ADD(sidr_rep_rx);
	ADD(sidr_req_retx);
	ADD(sidr_timeouts);
	ADD(sidr_unsupported);
}

/* every wn_tcp_stats field is a uint64_t counter: sum them all */
static_assert(sizeof(struct wn_tcp_stats) % sizeof(uint64_t) == 0, "wn_tcp_stats layout");
static void
sum_tcp(struct wn_tcp_stats *sum, const struct wn_tcp_stats *s)
{
	uint64_t *d = (uint64_t *)sum;
	const uint64_t *a = (const uint64_t *)s;

	for (size_t k = 0; k < sizeof(*s) / sizeof(uint64_t); k++)
		d[k] += a[k];
}

#undef ADD
#define TEL_U64(d, s, f) wn_tel_dict_u64(d, #f, (s)->f)

/* a Terminate cause as "layer/etype/0xcode" (RFC 5040 §7.1), "-" when there was none */
static void
put_term(struct rte_tel_data *d, const char *name, uint64_t count, uint32_t cause)
{
	char s[16] = "-";

	if (count != 0)
		snprintf(s, sizeof(s), "%u/%u/0x%02x", cause >> 12, (cause >> 8) & 15, cause & 255);
	rte_tel_data_add_dict_string(d, name, s);
}

static void
put_dp(struct rte_tel_data *d, const struct wn_dp_stats *s)
{
	TEL_U64(d, s, rx_pkts);
	TEL_U64(d, s, tx_pkts);
	TEL_U64(d, s, tx_drop);
	TEL_U64(d, s, tx_held);
	TEL_U64(d, s, tx_nolink);
	TEL_U64(d, s, loops);
	TEL_U64(d, s, idle_sleeps);
	TEL_U64(d, s, wake_bell);
	TEL_U64(d, s, wake_rx);
	TEL_U64(d, s, wake_timer);
	TEL_U64(d, s, idle_naps);
	TEL_U64(d, s, ctl_msgs);
	TEL_U64(d, s, cm_events);
	TEL_U64(d, s, async_events);
	TEL_U64(d, s, ctl_drop);
	TEL_U64(d, s, ctl_waited);
	TEL_U64(d, s, qp_polls);
	TEL_U64(d, s, qp_parks);
	TEL_U64(d, s, qp_room_waits);
	TEL_U64(d, s, qp_marks);
	TEL_U64(d, s, qp_sweep_found);
	TEL_U64(d, s, qps_ready);
	TEL_U64(d, s, conns_active);
	TEL_U64(d, s, conns_passive);
	TEL_U64(d, s, conns_established);
	TEL_U64(d, s, conns_failed);
	TEL_U64(d, s, conns_rejected);
	TEL_U64(d, s, conns_unenhanced);
	TEL_U64(d, s, conns_closed);
	TEL_U64(d, s, ib_qps);
	TEL_U64(d, s, ib_attempts);
	TEL_U64(d, s, ib_established);
	TEL_U64(d, s, ib_requests);
	TEL_U64(d, s, ib_held);
	TEL_U64(d, s, ib_refused);
	TEL_U64(d, s, ib_crossed);
	TEL_U64(d, s, ib_crossed_refused);
	TEL_U64(d, s, ib_retry_exceeded);
	TEL_U64(d, s, mpa_errors);
	TEL_U64(d, s, mpa_crc_errors);
	TEL_U64(d, s, rx_fpdus);
	TEL_U64(d, s, tx_fpdus);
	TEL_U64(d, s, tx_again);
	TEL_U64(d, s, cq_notify);
	TEL_U64(d, s, loopback_pkts);
	TEL_U64(d, s, handoff_tx);
	TEL_U64(d, s, handoff_rx);
	TEL_U64(d, s, handoff_drop);
	TEL_U64(d, s, zc_fpdus);
	TEL_U64(d, s, zc_bytes);
	TEL_U64(d, s, ref_fpdus);
	TEL_U64(d, s, ref_bytes);
	TEL_U64(d, s, tx_tokens);
	TEL_U64(d, s, zc_released);
	/* messages still referenced (TCP or an mbuf): 0 once everything is reclaimed */
	wn_tel_dict_u64(d, "zc_inflight", s->tx_tokens - s->zc_released);
	TEL_U64(d, s, zc_fallback);
	TEL_U64(d, s, zc_unmapped);
	TEL_U64(d, s, tx_reclaimed);
	TEL_U64(d, s, copy_fpdus);
	TEL_U64(d, s, copy_bytes);
	TEL_U64(d, s, copy_inline);
	TEL_U64(d, s, copy_unpinned);
	TEL_U64(d, s, copy_no_token);
	TEL_U64(d, s, copy_staged);
	TEL_U64(d, s, copy_small);
	TEL_U64(d, s, copy_other);
	TEL_U64(d, s, mr_dereg_deferred);
	TEL_U64(d, s, mr_dereg_waiting);
	TEL_U64(d, s, loopback_copies);
	TEL_U64(d, s, listens);
	TEL_U64(d, s, term_sent);
	TEL_U64(d, s, term_recv);
	put_term(d, "term_sent_last", s->term_sent, s->term_sent_last);
	put_term(d, "term_recv_last", s->term_recv, s->term_recv_last);
	TEL_U64(d, s, rnr_holds);
	TEL_U64(d, s, rnr_resumed);
	TEL_U64(d, s, rnr_timeouts);
	TEL_U64(d, s, rnr_held);
	TEL_U64(d, s, rx_ooo_fpdus);
	TEL_U64(d, s, ooo_placed);
	TEL_U64(d, s, ooo_bytes);
	TEL_U64(d, s, sctp_rx_pkts);
	TEL_U64(d, s, sctp_tx_pkts);
	TEL_U64(d, s, sctp_rx_bad);
	TEL_U64(d, s, sctp_assocs);
	TEL_U64(d, s, sctp_aborts);
	TEL_U64(d, s, sctp_sessions);
	TEL_U64(d, s, sctp_rx_ulpdus);
	TEL_U64(d, s, sctp_tx_ulpdus);
	TEL_U64(d, s, sctp_errors);
	TEL_U64(d, s, sctp_terms_sent);
	TEL_U64(d, s, sctp_terms_recv);
	TEL_U64(d, s, ud_tx_msgs);
	TEL_U64(d, s, ud_tx_drop);
	TEL_U64(d, s, ud_tx_nombuf);
	TEL_U64(d, s, ud_loopback);
	TEL_U64(d, s, ud_rx_msgs);
	TEL_U64(d, s, ud_rx_noqp);
	TEL_U64(d, s, ud_rx_drop_qkey);
	TEL_U64(d, s, ud_rx_drop_norecv);
	TEL_U64(d, s, ud_rx_drop_state);
	TEL_U64(d, s, ud_rx_bad);
	TEL_U64(d, s, ud_rx_sidr);
	TEL_U64(d, s, sidr_req_tx);
	TEL_U64(d, s, sidr_req_rx);
	TEL_U64(d, s, sidr_rep_tx);
	TEL_U64(d, s, sidr_rep_rx);
	TEL_U64(d, s, sidr_req_retx);
	TEL_U64(d, s, sidr_timeouts);
	TEL_U64(d, s, sidr_unsupported);
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_dp_group *g = tel_g;
	struct wn_dp_stats sum;
	uint32_t qps = 0;

	(void)cmd;
	(void)params;
	if (g == NULL)
		return -ENODEV;
	memset(&sum, 0, sizeof(sum));
	for (uint16_t i = 0; i < g->n; i++) {
		struct wn_dp *dp = g->shard[i];

		pthread_mutex_lock(&dp->tel_lock);
		sum_dp(&sum, &dp->tel_dp);
		qps += dp->tel_nqp;
		pthread_mutex_unlock(&dp->tel_lock);
	}
	rte_tel_data_start_dict(d);
	wn_tel_dict_u64(d, "lcores", g->n);
	put_dp(d, &sum);
	wn_tel_dict_u64(d, "active_qps", qps);
	return 0;
}

static int
tel_lcores(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_dp_group *g = tel_g;

	(void)cmd;
	(void)params;
	if (g == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (uint16_t i = 0; i < g->n; i++) {
		struct wn_dp *dp = g->shard[i];
		struct rte_tel_data *c = rte_tel_data_alloc();
		char name[32];

		if (c == NULL)
			break;
		rte_tel_data_start_dict(c);
		pthread_mutex_lock(&dp->tel_lock);
		wn_tel_dict_u64(c, "queue", dp->idx);
		wn_tel_dict_u64(c, "connections", dp->tel_nconn);
		wn_tel_dict_u64(c, "active_qps", dp->tel_nqp);
		put_dp(c, &dp->tel_dp);
		pthread_mutex_unlock(&dp->tel_lock);
		snprintf(name, sizeof(name), "lcore_shard%u", i);
		rte_tel_data_add_dict_container(d, name, c, 0);
	}
	return 0;
}

/* usrsctp's counters: one stack per process, read live (not from the shards' snapshots) */
static int
tel_sctp(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_sctp_stack_stats s;

	(void)cmd;
	(void)params;
	if (tel_g == NULL)
		return -ENODEV;
	wn_sctp_stack_stats_get(&s);
	rte_tel_data_start_dict(d);
	TEL_U64(d, &s, rx_packets);
	TEL_U64(d, &s, tx_data);
	TEL_U64(d, &s, rx_data);
	TEL_U64(d, &s, rx_pkts_data);
	TEL_U64(d, &s, rx_dup_data);
	TEL_U64(d, &s, tx_retrans);
	TEL_U64(d, &s, fast_retrans);
	TEL_U64(d, &s, t3_timeouts);
	TEL_U64(d, &s, tx_sacks);
	TEL_U64(d, &s, rx_sacks);
	TEL_U64(d, &s, sack_timeouts);
	TEL_U64(d, &s, window_probes);
	TEL_U64(d, &s, rx_drop_rwnd);
	TEL_U64(d, &s, cwnd_full);
	TEL_U64(d, &s, maxburst_held);
	return 0;
}

static int
tel_tcp(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_dp_group *g = tel_g;
	struct wn_tcp_stats s;
	uint64_t conns = 0;

	(void)cmd;
	(void)params;
	if (g == NULL)
		return -ENODEV;
	memset(&s, 0, sizeof(s));
	for (uint16_t i = 0; i < g->n; i++) {
		pthread_mutex_lock(&g->shard[i]->tel_lock);
		sum_tcp(&s, &g->shard[i]->tel_tcp);
		conns += g->shard[i]->tel_tcp_conns;
		pthread_mutex_unlock(&g->shard[i]->tel_lock);
	}
	rte_tel_data_start_dict(d);
	wn_tel_dict_u64(d, "conns", conns); /* a gauge: half-open ones included */
	TEL_U64(d, &s, rx_segs);
	TEL_U64(d, &s, rx_drop_cksum);
	TEL_U64(d, &s, rx_drop_noconn);
	TEL_U64(d, &s, rx_drop_short);
	TEL_U64(d, &s, rx_drop_opts);
	TEL_U64(d, &s, rx_drop_badflags);
	TEL_U64(d, &s, rx_drop_unacceptable);
	TEL_U64(d, &s, rx_drop_paws);
	TEL_U64(d, &s, rx_drop_ooo_full);
	TEL_U64(d, &s, rx_drop_rcvbuf);
	TEL_U64(d, &s, rx_drop_ack);
	TEL_U64(d, &s, rx_drop_state);
	TEL_U64(d, &s, rx_drop_backlog);
	TEL_U64(d, &s, rx_drop_conn_limit);
	TEL_U64(d, &s, rx_drop_family);
	TEL_U64(d, &s, syncookies_sent);
	TEL_U64(d, &s, syncookies_ok);
	TEL_U64(d, &s, syncookies_failed);
	TEL_U64(d, &s, challenge_acks);
	TEL_U64(d, &s, challenge_acks_limited);
	TEL_U64(d, &s, rx_dupack);
	TEL_U64(d, &s, rx_ooo);
	TEL_U64(d, &s, rx_dup_data);
	TEL_U64(d, &s, rx_rst);
	TEL_U64(d, &s, tx_segs);
	TEL_U64(d, &s, tx_data_bytes);
	TEL_U64(d, &s, tx_retrans);
	TEL_U64(d, &s, tx_rst);
	TEL_U64(d, &s, tx_drop_nombuf);
	TEL_U64(d, &s, tx_drop_queue);
	TEL_U64(d, &s, tx_queue_waits);
	TEL_U64(d, &s, rto_fired);
	TEL_U64(d, &s, fast_retrans);
	TEL_U64(d, &s, rxt_lost);
	TEL_U64(d, &s, tlp_probes);
	TEL_U64(d, &s, tlp_recovered);
	TEL_U64(d, &s, undo_spurious);
	TEL_U64(d, &s, rto_spurious);
	TEL_U64(d, &s, zwp_sent);
	TEL_U64(d, &s, delack_fired);
	TEL_U64(d, &s, keepalive_probes);
	TEL_U64(d, &s, keepalive_timeouts);
	TEL_U64(d, &s, conns_opened);
	TEL_U64(d, &s, conns_closed);
	TEL_U64(d, &s, conns_timeout);
	TEL_U64(d, &s, tw_recycled);
	TEL_U64(d, &s, buf_bytes);
	TEL_U64(d, &s, snd_bytes);
	TEL_U64(d, &s, snd_conns);
	TEL_U64(d, &s, record_split);
	TEL_U64(d, &s, tx_ext_segs);
	TEL_U64(d, &s, tx_ext_bytes);
	TEL_U64(d, &s, ext_records);
	return 0;
}

static int
tel_port(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_dp_group *g = tel_g;
	const struct wn_dp_link *lk = g != NULL ? g->c.link : NULL;
	struct rte_eth_stats es;
	struct rte_eth_link l;
	uint64_t rx = 0;

	(void)cmd;
	(void)params;
	if (g == NULL)
		return -ENODEV;
	for (uint16_t i = 0; i < g->n; i++) {
		pthread_mutex_lock(&g->shard[i]->tel_lock);
		rx += g->shard[i]->tel_net.rx_pkts;
		pthread_mutex_unlock(&g->shard[i]->tel_lock);
	}
	memset(&es, 0, sizeof(es));
	rte_eth_stats_get(g->c.port_id, &es);
	rte_tel_data_start_dict(d);
	wn_tel_dict_u64(d, "port_id", g->c.port_id);
	wn_tel_dict_u64(d, "queues", g->n);
	wn_tel_dict_u64(d, "ipackets", es.ipackets);
	wn_tel_dict_u64(d, "opackets", es.opackets);
	wn_tel_dict_u64(d, "ibytes", es.ibytes);
	wn_tel_dict_u64(d, "obytes", es.obytes);
	wn_tel_dict_u64(d, "imissed", es.imissed);
	wn_tel_dict_u64(d, "ierrors", es.ierrors);
	wn_tel_dict_u64(d, "oerrors", es.oerrors);
	wn_tel_dict_u64(d, "net_rx_pkts", rx);
	/* the port's link; with a link watcher (wn_dp_conf.link) the shards' gate and its history */
	memset(&l, 0, sizeof(l));
	if (rte_eth_link_get_nowait(g->c.port_id, &l) != 0)
		l.link_status = RTE_ETH_LINK_DOWN;
	rte_tel_data_add_dict_string(d, "link", l.link_status == RTE_ETH_LINK_UP ? "up" : "down");
	rte_tel_data_add_dict_string(d, "gate", lk == NULL ? "none" :
				     __atomic_load_n(&lk->up, __ATOMIC_ACQUIRE) ? "open" : "closed");
	if (g->c.unmap_fences != NULL)
		wn_tel_dict_u64(d, "unmap_fences",
					  __atomic_load_n(g->c.unmap_fences, __ATOMIC_RELAXED));
	if (lk != NULL) {
		wn_tel_dict_u64(d, "link_ups", __atomic_load_n(&lk->ups, __ATOMIC_RELAXED));
		wn_tel_dict_u64(d, "link_downs",
					  __atomic_load_n(&lk->downs, __ATOMIC_RELAXED));
		wn_tel_dict_u64(d, "link_restarts",
					  __atomic_load_n(&lk->restarts, __ATOMIC_RELAXED));
		wn_tel_dict_u64(d, "link_starts_failed",
					  __atomic_load_n(&lk->starts_failed, __ATOMIC_RELAXED));
	}
	return 0;
}

#define NET_U64(d, s, f) wn_tel_dict_u64(d, #f, (s)->f)

static void
sum_net(struct wn_net_stats *sum, const struct wn_net_stats *s)
{
	const uint64_t *a = (const uint64_t *)s;
	uint64_t *b = (uint64_t *)sum;

	/* every field is a uint64_t counter */
	for (size_t i = 0; i < sizeof(*s) / sizeof(uint64_t); i++)
		b[i] += a[i];
}

/* "ADDR" or "[ADDR]" (IPv6, RFC 5952 §6) followed by ":PORT" */
static void
fmt_ep(const struct wn_ip_addr *a, uint16_t port, char *buf, size_t len)
{
	char s[48];

	wn_net_addr_fmt(a, s, sizeof(s));
	snprintf(buf, len, a->family == WN_AF_INET6 ? "[%s]:%u" : "%s:%u", s, port);
}

/*
 * lib/net: the port's addresses, "ADDR/PREFIX STATE" with the state of their Duplicate
 * Address Detection (shard 0's: every shard holds the same, see wn_netif_conf.secondary),
 * how many are still tentative or duplicate, the neighbours of every shard ("ADDR MAC" or
 * "ADDR incomplete"), and the counters summed.
 */
static int
tel_net(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_dp_group *g = tel_g;
	struct rte_tel_data *addrs, *nb;
	struct wn_net_stats s;
	uint64_t tentative = 0, duplicate = 0;
	struct wn_net_neigh_info all[DP_TEL_NEIGH];
	unsigned int nn = 0;
	char a[48], b[64];

	(void)cmd;
	(void)params;
	if (g == NULL)
		return -ENODEV;
	addrs = rte_tel_data_alloc();
	nb = rte_tel_data_alloc();
	if (addrs == NULL || nb == NULL) {
		rte_tel_data_free(addrs);
		rte_tel_data_free(nb);
		return -ENOMEM;
	}
	/* arrays of strings: a dictionary key may not hold ':' or '.' (rte_telemetry) */
	rte_tel_data_start_array(addrs, RTE_TEL_STRING_VAL);
	rte_tel_data_start_array(nb, RTE_TEL_STRING_VAL);
	memset(&s, 0, sizeof(s));
	for (uint16_t i = 0; i < g->n; i++) {
		struct wn_dp *dp = g->shard[i];

		pthread_mutex_lock(&dp->tel_lock);
		sum_net(&s, &dp->tel_net);
		for (unsigned int k = 0; i == 0 && k < dp->tel_naddr; k++) {
			const struct wn_netif_addr_info *ai = &dp->tel_addr[k];

			snprintf(b, sizeof(b), "%s/%u %s", wn_net_addr_fmt(&ai->addr, a, sizeof(a)),
				 ai->prefix, wn_net_if_addr_state_str(ai->state));
			rte_tel_data_add_array_string(addrs, b);
			tentative += ai->state == WN_ADDR_TENTATIVE;
			duplicate += ai->state == WN_ADDR_DUPLICATE;
		}
		for (unsigned int k = 0; k < dp->tel_nneigh && nn < RTE_DIM(all); k++) {
			unsigned int j = 0;

			while (j < nn && !wn_ip_addr_eq(&all[j].addr, &dp->tel_neigh[k].addr))
				j++;
			if (j == nn) /* the first shard's entry of an address */
				all[nn++] = dp->tel_neigh[k];
		}
		pthread_mutex_unlock(&dp->tel_lock);
	}
	for (unsigned int k = 0; k < nn; k++) {
		char mac[RTE_ETHER_ADDR_FMT_SIZE];

		if (all[k].state == 1)
			snprintf(mac, sizeof(mac), "incomplete");
		else
			rte_ether_format_addr(mac, sizeof(mac), &all[k].mac);
		snprintf(b, sizeof(b), "%s %s", wn_net_addr_fmt(&all[k].addr, a, sizeof(a)), mac);
		rte_tel_data_add_array_string(nb, b);
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_container(d, "addrs", addrs, 0);
	wn_tel_dict_u64(d, "addrs_tentative", tentative);
	wn_tel_dict_u64(d, "addrs_duplicate", duplicate);
	rte_tel_data_add_dict_container(d, "neighbours", nb, 0);
	NET_U64(d, &s, rx_pkts);
	NET_U64(d, &s, rx_arp);
	NET_U64(d, &s, rx_ndp);
	NET_U64(d, &s, rx_icmp_echo);
	NET_U64(d, &s, rx_drop_mac);
	NET_U64(d, &s, rx_drop_ethertype);
	NET_U64(d, &s, rx_drop_ip_addr);
	NET_U64(d, &s, rx_drop_ip_proto);
	NET_U64(d, &s, rx_drop_ip_opts);
	NET_U64(d, &s, rx_drop_icmp);
	NET_U64(d, &s, rx_drop_arp);
	NET_U64(d, &s, tx_arp_req);
	NET_U64(d, &s, tx_arp_reply);
	NET_U64(d, &s, tx_garp);
	NET_U64(d, &s, tx_drop_noroute);
	NET_U64(d, &s, tx_drop_neigh);
	NET_U64(d, &s, tx_drop_queue);
	NET_U64(d, &s, tx_drop_nombuf);
	NET_U64(d, &s, neigh_full);
	NET_U64(d, &s, dad_probes);
	NET_U64(d, &s, dad_duplicates);
	NET_U64(d, &s, dad_looped);
	NET_U64(d, &s, na_conflicts);
	return 0;
}

static int
tel_qps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_dp_group *g = tel_g;
	bool one = params != NULL && *params != '\0';
	uint32_t want = one ? (uint32_t)strtoul(params, NULL, 0) : 0;

	(void)cmd;
	if (g == NULL)
		return -ENODEV;
	if (!one)
		rte_tel_data_start_array(d, RTE_TEL_U64_VAL);
	for (uint16_t s = 0; s < g->n; s++) {
		struct wn_dp *dp = g->shard[s];

		pthread_mutex_lock(&dp->tel_lock);
		for (uint32_t i = 0; i < dp->tel_nqp; i++) {
			if (!one) {
				wn_tel_array_u64(d, dp->tel_qp[i].qpn);
				continue;
			}
			if (dp->tel_qp[i].qpn != want)
				continue;
			rte_tel_data_start_dict(d);
			wn_tel_dict_u64(d, "qpn", dp->tel_qp[i].qpn);
			wn_tel_dict_u64(d, "lcore_shard", s);
			wn_tel_dict_u64(d, "handle", dp->tel_qp[i].handle);
			wn_tel_dict_u64(d, "state", dp->tel_qp[i].state);
			wn_tel_dict_u64(d, "conn_state", dp->tel_qp[i].conn_state);
			rte_tel_data_add_dict_string(d, "llp", dp->tel_qp[i].llp);
			TEL_U64(d, &dp->tel_qp[i].s, rx_ulpdu);
			TEL_U64(d, &dp->tel_qp[i].s, tx_ulpdu);
			TEL_U64(d, &dp->tel_qp[i].s, rx_bytes_placed);
			TEL_U64(d, &dp->tel_qp[i].s, tx_payload);
			TEL_U64(d, &dp->tel_qp[i].s, cqe);
			TEL_U64(d, &dp->tel_qp[i].s, terminates_sent);
			TEL_U64(d, &dp->tel_qp[i].s, terminates_recv);
			TEL_U64(d, &dp->tel_qp[i].s, wqe_flushed);
			TEL_U64(d, &dp->tel_qp[i].s, ord_stalls);
			TEL_U64(d, &dp->tel_qp[i].s, rnr_holds);
			TEL_U64(d, &dp->tel_qp[i].s, rnr_timeouts);
			TEL_U64(d, &dp->tel_qp[i].s, ooo_placed);
			pthread_mutex_unlock(&dp->tel_lock);
			return 0;
		}
		pthread_mutex_unlock(&dp->tel_lock);
	}
	return one ? -ENOENT : 0;
}

static int
tel_conns(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct wn_dp_group *g = tel_g;
	unsigned int k = 0;

	(void)cmd;
	(void)params;
	if (g == NULL)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	for (uint16_t s = 0; s < g->n; s++) {
		struct wn_dp *dp = g->shard[s];

		pthread_mutex_lock(&dp->tel_lock);
		for (uint32_t i = 0; i < dp->tel_nconn; i++) {
			struct rte_tel_data *c = rte_tel_data_alloc();
			const struct wn_llp_info *l = &dp->tel_conn[i].llp;
			char name[32], a[64], b[64], ep[136];

			if (c == NULL)
				break;
			rte_tel_data_start_dict(c);
			fmt_ep(&l->local.addr, l->local.port, a, sizeof(a));
			fmt_ep(&l->remote.addr, l->remote.port, b, sizeof(b));
			snprintf(ep, sizeof(ep), "%s -> %s", a, b);
			rte_tel_data_add_dict_string(c, "llp", dp->tel_conn[i].kind);
			rte_tel_data_add_dict_string(c, "tcp", ep);
			rte_tel_data_add_dict_string(c, "state",
						     wn_cm_state_str(dp->tel_conn[i].state));
			rte_tel_data_add_dict_string(c, "mpa_state", l->state);
			rte_tel_data_add_dict_string(c, "tcp_state", l->transport.state);
			rte_tel_data_add_dict_string(c, "role", l->active ? "initiator"
									  : "responder");
			wn_tel_dict_u64(c, "lcore_shard", s);
			wn_tel_dict_u64(c, "cm_id", dp->tel_conn[i].id);
			wn_tel_dict_u64(c, "qpn", dp->tel_conn[i].qpn);
			wn_tel_dict_u64(c, "mulpdu", l->params.mulpdu);
			wn_tel_dict_u64(c, "markers_tx", l->full && l->params.markers_tx);
			wn_tel_dict_u64(c, "markers_rx", l->full && l->params.markers_rx);
			wn_tel_dict_u64(c, "crc", l->full && l->params.crc);
			wn_tel_dict_u64(c, "fpdus_rx", l->rx_ulpdus);
			wn_tel_dict_u64(c, "cwnd", l->transport.cwnd);
			wn_tel_dict_u64(c, "srtt_us", l->transport.srtt_us);
			wn_tel_dict_u64(c, "rto_us", l->transport.rto_us);
			wn_tel_dict_u64(c, "retrans", l->transport.retrans);
			wn_tel_dict_u64(c, "snd_queued", l->transport.snd_queued);
			/* sequence space relative to the ISNs, for stall diagnosis */
			wn_tel_dict_u64(c, "snd_una", l->transport.snd_una);
			wn_tel_dict_u64(c, "snd_nxt", l->transport.snd_nxt);
			wn_tel_dict_u64(c, "snd_max", l->transport.snd_max);
			wn_tel_dict_u64(c, "snd_wnd", l->transport.snd_wnd);
			wn_tel_dict_u64(c, "rcv_nxt", l->transport.rcv_nxt);
			wn_tel_dict_u64(c, "rcv_wnd", l->transport.rcv_wnd);
			wn_tel_dict_u64(c, "rcv_queued", l->transport.rcv_queued);
			wn_tel_dict_u64(c, "in_recovery", l->transport.in_recovery);
			wn_tel_dict_u64(c, "backoff", l->transport.backoff);
			wn_tel_dict_u64(c, "sacked_bytes", l->transport.sacked_bytes);
			snprintf(name, sizeof(name), "conn%u", k++);
			rte_tel_data_add_dict_container(d, name, c, 0);
		}
		pthread_mutex_unlock(&dp->tel_lock);
	}
	return 0;
}

void
wn_dp_tel_unregister(struct wn_dp_group *g)
{
	if (tel_g == g)
		tel_g = NULL;
}

void
wn_dp_telemetry_register(struct wn_dp_group *g)
{
	tel_g = g;
	rte_telemetry_register_cmd("/warpnic/dp/stats", tel_stats,
				   "Dataplane counters summed over its lcores (packets, "
				   "connections, FPDUs). No parameters");
	rte_telemetry_register_cmd("/warpnic/dp/lcores", tel_lcores,
				   "Dataplane counters of each lcore (shard). No parameters");
	rte_telemetry_register_cmd("/warpnic/dp/tcp", tel_tcp,
				   "TCP stack counters summed over the lcores. No parameters");
	rte_telemetry_register_cmd("/warpnic/dp/sctp", tel_sctp,
				   "usrsctp's counters (DATA chunks, retransmissions, SACKs) for "
				   "the process. No parameters");
	rte_telemetry_register_cmd("/warpnic/dp/port", tel_port,
				   "Port counters (ethdev and lib/net). No parameters");
	rte_telemetry_register_cmd("/warpnic/dp/net", tel_net,
				   "Addresses (IPv6: DAD state), neighbours, ARP/NDP counters. "
				   "No parameters");
	rte_telemetry_register_cmd("/warpnic/dp/conns", tel_conns,
				   "iWARP connections: TCP endpoints and state, lcore, MPA "
				   "settings, congestion state. No parameters");
	rte_telemetry_register_cmd("/warpnic/dp/qp", tel_qps,
				   "Without parameter: QP numbers in RDMA mode. Parameter: QP "
				   "number, its counters");
}

int
wn_dp_busy_conns(struct wn_dp_group *g, uint64_t since_us)
{
	uint32_t busy = 0;
	bool fresh = true;

	for (uint16_t i = 0; i < g->n; i++) {
		struct wn_dp *dp = g->shard[i];

		pthread_mutex_lock(&dp->tel_lock);
		for (uint32_t k = 0; k < dp->tel_nconn; k++)
			busy += !dp->tel_conn[k].llp.transport.quiet;
		fresh &= dp->tel_at >= since_us;
		pthread_mutex_unlock(&dp->tel_lock);
	}
	return fresh ? (int)busy : -EAGAIN;
}
