# SPDX-License-Identifier: BSD-3-Clause
"""QPs connected InfiniBand-style (issue 24): rnic_it --ib creates each QP with ibv_create_qp
and moves it INIT -> RTR (the peer's GID and QP number, exchanged on the oob channel) -> RTS
itself, no rdma_cm; warpnicd makes the connection (lib/cm). A (198.19.0.1) is the lower end:
it connects, to B's port 4791. The cases with no pair options share one pair."""
import pytest

from rnic import (Case, capture_, first, ibpd, impair, json_, llp, matrix, objects_none,
                  params, run, startup, tel, term)

STATS = '/warpnic/dp/stats'
# A's second address: a peer that knows A by it connects to A (it is then the lower end)
A_SECOND = '--a-opt --ip --a-opt 198.19.0.3/24'

CASES = [
    Case('ib_ops', run='--case ops --ib', checks=[
        json_('both', 'octets_checked', '>', 0), json_('server', 'send_imm_checked', '=', 5),
        json_('both', 'wc_error', '=', 0)]),
    Case('ib_atomics', run='--case atomics --ib', checks=[json_('both', 'wc_error', '=', 0)]),
    Case('ib_srq', run='--case srq --ib', checks=[
        json_('server', 'octets_checked', '>=', 262144),
        json_('server', 'async.SRQ_LIMIT_REACHED', '=', 1), json_('both', 'wc_error', '=', 0)]),
    # DDP over SCTP by the programs' choice (WARPNIC_LLP): the same port, an SCTP association
    Case('ib_sctp', run='WARPNIC_LLP=sctp --case ops --ib', checks=[
        json_('both', 'octets_checked', '>', 0), json_('both', 'wc_error', '=', 0),
        llp('sctp')]),
    # Work posted before the connection is up waits for it: first B's (its QP waits for A's
    # request; A reaches RTR after B's Sends are posted), then A's (its request waits, held
    # by B, until B's QP reaches RTR).
    Case('ib_early', run='--case ib_early --tel TEL_B', checks=[
        json_('server', 'octets_checked', '=', 8000),
        json_('client', 'octets_checked', '=', 8000),
        json_('both', 'wc_error', '=', 0), tel('b', STATS, 'ib_held', '>=', 1),
        tel('a', STATS, 'ib_retry_exceeded', '=', 0)]),
    # InfiniBand RC completions on such a QP: a Write completes once the peer has it, so a
    # Write the peer refuses completes with IBV_WC_REM_ACCESS_ERR (its Terminate's cause in
    # vendor_err), the one behind it with WR_FLUSH_ERR, as on InfiniBand
    Case('ib_viol', run='--case ib_viol', checks=[
        term('a', '0/1/0x02'), json_('client', 'retry_exc', '=', 0),
        json_('server', 'octets_checked', '=', 4096)]),
    # On the wire: standard MPA whose Request and Reply name both QPs, every FPDU's CRC good,
    # Wireshark's iWARP dissection clean; the initiator (A) sends the RTR Write first
    Case('ib_basic', zc='zc', pair='--pcap PCAP', run='--case basic --small --ib', checks=[
        tel('a', STATS, 'ib_established', '=', 1), tel('b', STATS, 'ib_established', '=', 1),
        tel('a', STATS, 'ib_attempts', '=', 1), tel('b', STATS, 'ib_attempts', '=', 0),
        json_('both', 'wc_error', '=', 0), capture_('a', 20, 1), startup(0, 0, 1, 2),
        first(0x00, 14), ibpd()]),
    Case('ib_af_packet', pair='--link af_packet', run='--case basic --ib', checks=[
        json_('both', 'octets_checked', '>', 0), json_('both', 'wc_error', '=', 0),
        tel('b', '/warpnic/dp/port', 'ipackets', '>', 0)]),
    Case('ib_fault', pair='--impair drop=0.01,reorder=0.01,seed=41',
         run='--case xfer --mib MIB --ib', checks=[
             impair('tx_impair_drop', '>', 0), impair('rx_impair_reorder', '>', 0),
             tel('a', STATS, 'ib_established', '=', 1), matrix()]),
    # A peer that never reaches RTR: B's Sends fail as InfiniBand's retry exhaustion does
    # (timeout 12, retry_cnt 3: 16.8 ms x 4), once waiting for A's first address and once
    # connecting to A's second (A holds the request for a QP that stays in INIT)
    Case('ib_never', pair=A_SECOND, run='--case ib_never --ib-timeout 12 --ib-retry 3',
         checks=[json_('client', 'retry_exc', '=', 2), json_('client', 'wc_flushed', '=', 8),
                 tel('b', STATS, 'ib_retry_exceeded', '=', 2),
                 tel('b', STATS, 'ib_attempts', '>=', 1), tel('a', STATS, 'ib_held', '>=', 1),
                 objects_none('a', 'b')]),
    # Crossed connects: the server tells the client A's second address (198.19.0.3), so each
    # end finds itself the lower and connects; A's attempt (its initiator 198.19.0.1 is the
    # lower) wins at both ends and B gives its own up.
    Case('ib_crossed', pair=A_SECOND, run='--case basic --small --ib --ib-gid 1', checks=[
        tel('b', STATS, 'ib_crossed', '>=', 1), tel('a', STATS, 'ib_established', '=', 1),
        tel('b', STATS, 'ib_established', '=', 1), json_('both', 'octets_checked', '>', 0),
        json_('both', 'wc_error', '=', 0)]),
    # ... and with two dataplane lcores on each side: InfiniBand-style flows (the IB port at
    # either end) are steered to lcore 0, where the QPs' endpoints and the listener are
    Case('ib_lcores', pair='--lcores 2', run='--case ops --ib', checks=[
        json_('both', 'octets_checked', '>', 0), json_('both', 'wc_error', '=', 0),
        tel('a', STATS, 'ib_established', '=', 1), tel('b', STATS, 'ib_established', '=', 1)]),
]


@pytest.mark.parametrize('case,zc', params(CASES))
def test_rnic(request, build, pairs, case, zc):
    run(request, build, pairs, case, zc)
