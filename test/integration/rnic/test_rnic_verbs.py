# SPDX-License-Identifier: BSD-3-Clause
"""Every verbs operation through the shims between two warpnicd (rnic.py: the columns and
the checks). The cases with no pair options share one pair, the zero-copy ones another."""
import pytest

from rnic import (Case, json_, llp, matrix, objects_none, params, run, tel, term)

STATS = '/warpnic/dp/stats'

CASES = [
    Case('ops', zc='zc', ref=True, run='--case ops', checks=[
        json_('both', 'octets_checked', '>', 0), json_('server', 'send_imm_checked', '=', 5),
        json_('both', 'wc_error', '=', 0)]),
    Case('atomics', run='--case atomics', checks=[json_('both', 'wc_error', '=', 0)]),
    Case('send_inv', run='--case send_inv', checks=[term('a', '0/1/0x09')]),
    Case('mw', zc='zc', run='--case mw', checks=[term('a', '1/1/0x00')]),
    Case('frmr', run='--case frmr', checks=[term('a', '0/1/0x00')]),
    Case('ordneg', run='--case ordneg --c-ird 4 --c-ord 2 --s-ird 8 --s-ord 3 --reads 48 '
         '--tel TEL_B', checks=[json_('both', 'wc_error', '=', 0)]),
    Case('ordneg_one', run='--case ordneg --c-ird 16 --c-ord 16 --s-ird 1 --s-ord 1 --reads 48 '
         '--tel TEL_B', checks=[json_('both', 'wc_error', '=', 0)]),
    Case('viol_rights', run='--case viol --viol rights', checks=[
        term('a', '0/1/0x02'), json_('server', 'async.QP_ACCESS_ERR', '=', 1),
        json_('client', 'async.QP_FATAL', '=', 1)]),
    Case('viol_bounds', run='--case viol --viol bounds', checks=[
        term('a', '1/1/0x01'), json_('server', 'async.QP_ACCESS_ERR', '=', 1),
        json_('client', 'async.QP_FATAL', '=', 1)]),
    Case('viol_stag', run='--case viol --viol stag', checks=[
        term('a', '1/1/0x00'), json_('server', 'async.QP_ACCESS_ERR', '=', 1),
        json_('client', 'async.QP_FATAL', '=', 1)]),
    Case('viol_read', run='--case viol --viol read', checks=[
        term('a', '0/1/0x02'), json_('server', 'async.QP_ACCESS_ERR', '=', 1),
        json_('client', 'async.QP_FATAL', '=', 1)]),
    Case('flush', zc='zc0', run='--case flush', checks=[
        json_('server', 'wc_flushed', '=', 7), json_('client', 'wc_flushed', '=', 8),
        tel('a', STATS, 'term_sent', '=', 0)]),
    Case('flush_late', run='--case flush_late', checks=[
        json_('server', 'wc_flushed', '=', 7), json_('client', 'wc_flushed', '>=', 8)]),
    Case('kill', zc='zc', run='@kill', checks=[
        json_('server', 'cm_events.DISCONNECTED', '>=', 1), objects_none('a', 'b')]),
    # DDP over SCTP (RFC 5043) by the programs' own choice: the client library reads
    # WARPNIC_LLP (test_rnic_sctp.py: by both warpnicd's)
    Case('sctp_ops', run='WARPNIC_LLP=sctp --case ops', checks=[
        json_('both', 'octets_checked', '>', 0), json_('both', 'wc_error', '=', 0),
        llp('sctp')]),
    # Abuse (issue 15): a connect to a port nobody listens on is refused (TCP RST:
    # REJECTED), the client's receive flushed, nothing left behind on either side.
    Case('closed_port', run='--case refused --closed', checks=[
        json_('client', 'cm_events.REJECTED', '=', 1), json_('client', 'wc_flushed', '=', 1),
        tel('a', '/warpnic/dp/tcp', 'tx_rst', '>=', 1), objects_none('a', 'b')]),
    # Shared receive queue through the shim (issue 15): Sends into an SRQ's buffers; its
    # armed limit raises IBV_EVENT_SRQ_LIMIT_REACHED once.
    Case('srq', run='--case srq', checks=[
        json_('server', 'octets_checked', '>=', 262144),
        json_('server', 'async.SRQ_LIMIT_REACHED', '=', 1), json_('both', 'wc_error', '=', 0),
        objects_none('a', 'b')]),
    # Receiver not ready (warpnicd --rnr-hold-ms): Sends that arrive before their receives
    # wait (A holds the stream) and land in order once the server posts them late
    Case('rnr', run='--case rnr --rnr wait', checks=[
        json_('both', 'wc_error', '=', 0), json_('server', 'octets_checked', '>=', 524288),
        tel('a', STATS, 'rnr_holds', '>', 0), tel('a', STATS, 'rnr_timeouts', '=', 0),
        tel('a', STATS, 'term_sent', '=', 0)]),
    Case('rnr_srq', run='--case rnr_srq --rnr wait', checks=[
        json_('both', 'wc_error', '=', 0), json_('server', 'octets_checked', '>=', 524288),
        tel('a', STATS, 'rnr_holds', '>', 0), tel('a', STATS, 'rnr_timeouts', '=', 0),
        tel('a', STATS, 'term_sent', '=', 0)]),
    # The transfers of the fault matrix without faults: the baseline of
    # test/bench/loss_bench.sh.
    Case('xfer_clean', run='--case xfer --mib MIB --ops write,send', checks=[
        json_('both', 'wc_error', '=', 0), matrix()]),
    # Exhaustion (issue 15): beyond the SQ and RQ depths and B's region table (--max-mrs
    # 2000, reported as max_mr): clear errors, everything works afterwards, nothing left.
    Case('limits', pair='--b-opt --max-mrs --b-opt 2000', run='--case limits', checks=[
        json_('both', 'wc_error', '=', 0), objects_none('a', 'b')]),
    # ... with no receive ever, the Terminate "no buffer" (1/2/0x02) after the hold, or at
    # once with 0
    Case('rnr_timeout', pair='--a-opt --rnr-hold-ms --a-opt 300', run='--case rnr --rnr never',
         checks=[term('a', '1/2/0x02'), tel('a', STATS, 'rnr_holds', '=', 1),
                 tel('a', STATS, 'rnr_timeouts', '=', 1)]),
    Case('rnr_off', pair='--a-opt --rnr-hold-ms --a-opt 0', run='--case rnr --rnr never',
         checks=[term('a', '1/2/0x02'), tel('a', STATS, 'rnr_holds', '=', 0)]),
    # ... and when the sender disconnects behind its held Send, the receiver's DISCONNECTED
    # does not wait out a 10-minute hold (a qperf server waits for it, its client's next
    # test for it)
    Case('rnr_closed', pair='--a-opt --rnr-hold-ms --a-opt 600000',
         run='--case rnr --rnr closed', checks=[
             tel('a', STATS, 'rnr_holds', '=', 1), tel('a', STATS, 'rnr_timeouts', '=', 1)]),
    # ... nor when the receiver stopped polling with completions waiting (qperf's rc_bw
    # server at the end of its test) and the sender's end waits behind a full window
    # (1 MiB send buffers, no shared budget: the Sends TCP takes are the case's arithmetic)
    Case('rnr_stopped', pair='--a-opt --rnr-hold-ms --a-opt 600000 --a-opt --sockbuf '
         '--a-opt 1048576 --b-opt --sockbuf --b-opt 1048576 --a-opt --tx-budget --a-opt 0 '
         '--b-opt --tx-budget --b-opt 0', run='--case rnr --rnr stopped',
         checks=[tel('a', STATS, 'term_sent_last', '=', '1/2/0x02'),
                 tel('a', STATS, 'rnr_holds', '=', 1), tel('a', STATS, 'rnr_timeouts', '=', 1)]),
]


@pytest.mark.parametrize('case,zc', params(CASES))
def test_rnic(request, build, pairs, case, zc):
    run(request, build, pairs, case, zc)
