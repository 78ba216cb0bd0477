# SPDX-License-Identifier: BSD-3-Clause
"""DDP over SCTP (RFC 5043, issue 12): every RDMAP operation again with SCTP below DDP by
both warpnicd's choice (--llp sctp); "llp sctp" proves SCTP carried them (sessions in RDMA
mode on both, no MPA FPDU, no session error). One pair serves every case."""
import pytest

from rnic import Case, json_, llp, params, run, tel, term

SCTP = '-- --llp sctp'

CASES = [
    Case('sctp_atomics', pair=SCTP, run='--case atomics', checks=[
        json_('both', 'wc_error', '=', 0), llp('sctp')]),
    Case('sctp_send_inv', pair=SCTP, run='--case send_inv', checks=[
        term('a', '0/1/0x09'), llp('sctp')]),
    Case('sctp_mw', pair=SCTP, run='--case mw', checks=[term('a', '1/1/0x00'), llp('sctp')]),
    Case('sctp_frmr', pair=SCTP, run='--case frmr', checks=[term('a', '0/1/0x00'), llp('sctp')]),
    Case('sctp_viol_rights', pair=SCTP, run='--case viol --viol rights', checks=[
        term('a', '0/1/0x02'), llp('sctp')]),
    Case('sctp_viol_bounds', pair=SCTP, run='--case viol --viol bounds', checks=[
        term('a', '1/1/0x01'), llp('sctp')]),
    Case('sctp_viol_stag', pair=SCTP, run='--case viol --viol stag', checks=[
        term('a', '1/1/0x00'), llp('sctp')]),
    Case('sctp_viol_read', pair=SCTP, run='--case viol --viol read', checks=[
        term('a', '0/1/0x02'), llp('sctp')]),
    Case('sctp_flush', pair=SCTP, run='--case flush', checks=[
        json_('server', 'wc_flushed', '=', 7), json_('client', 'wc_flushed', '=', 8),
        tel('a', '/warpnic/dp/stats', 'term_sent', '=', 0), llp('sctp')]),
]


@pytest.mark.parametrize('case,zc', params(CASES))
def test_rnic(request, build, pairs, case, zc):
    run(request, build, pairs, case, zc)
