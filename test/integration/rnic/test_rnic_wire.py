# SPDX-License-Identifier: BSD-3-Clause
"""What goes on the wire (RFC 5044 MPA, RFC 6581 startup): each case captures both
warpnicd's ports (--pcap) and judges A's capture with tshark's iWARP dissector and an
independent walk of the MPA stream (wntest.capture); each has its own pair."""
import pytest

from rnic import (Case, capture_, first, json_, markers, params, reply_none, request, run,
                  startup, stream, tel)

STATS = '/warpnic/dp/stats'

CASES = [
    # RFC 6581 §7: the Initiator's first FPDU, as the RTR message both sides agreed on
    Case('rtr_send', pair='--pcap PCAP -- --rtr send', run='--case basic --small', checks=[
        capture_('a', 20, 1), startup(0, 0, 1, 2), first(0x03, 18)]),
    Case('rtr_write', pair='--pcap PCAP -- --rtr write', run='--case basic --small', checks=[
        capture_('a', 20, 1), startup(0, 0, 1, 2), first(0x00, 14)]),
    Case('rtr_read', pair='--pcap PCAP -- --rtr read', run='--case basic --small', checks=[
        capture_('a', 20, 1), startup(0, 0, 1, 2), first(0x01, 46)]),
    Case('mpa_rev1', pair='--pcap PCAP -- --mpa-rev 1', run='--case basic --small', checks=[
        capture_('a', 20, 1), startup(0, 0, 1, 1), first(0x03, 19)]),
    Case('mpa_rev1_initiator', pair='--pcap PCAP --b-opt --mpa-rev --b-opt 1',
         run='--case basic --small', checks=[
             capture_('a', 20, 1), startup(0, 0, 1, 1), first(0x03, 19)]),
    # A responder that speaks only MPA Rev 1 closes the connection on the initiator's Rev 2
    # Request (RFC 6581 §10); B connects again with Rev 1 by itself and the case runs: the
    # first TCP connection carries the Rev 2 Request and no Reply, the second the Rev 1
    # exchange.
    Case('mpa_rev1_responder', pair='--pcap PCAP --a-opt --mpa-rev --a-opt 1',
         run='--case basic --small', checks=[
             tel('b', STATS, 'conns_unenhanced', '=', 1),
             tel('b', STATS, 'conns_established', '=', 1), capture_('a', 20, 1),
             request(0, 1, 2), reply_none(), stream(1), startup(0, 0, 1, 1), first(0x03, 19)]),
    Case('no_p2p', pair='--pcap PCAP -- --no-p2p', run='--case basic --small', checks=[
        capture_('a', 20, 1), startup(0, 0, 1, 2), first(0x03, 19)]),
    Case('markers_both', zc='zc', ref=True, pair='--pcap PCAP -- --markers',
         run='--case basic --small',
         checks=[capture_('a', 20, 1), startup(1, 1, 1, 2), markers('initiator', True),
                 markers('responder', True)]),
    Case('markers_one', pair='--pcap PCAP --a-opt --markers', run='--case basic --small',
         checks=[capture_('a', 20, 1), startup(0, 1, 1, 2), markers('initiator', True),
                 markers('responder', False)]),
    Case('no_crc', pair='--pcap PCAP -- --no-crc', run='--case basic --small', checks=[
        capture_('a', 20, 0), startup(0, 0, 0, 2)]),
    Case('pcap', zc='zc', pair='--pcap PCAP', run='--case basic', checks=[
        capture_('a', 50, 1), startup(0, 0, 1, 2), capture_('b', 50, 1), startup(0, 0, 1, 2)]),
    # net_af_packet on a veth pair between two network namespaces (root)
    Case('af_packet', zc='zc', pair='--link af_packet', run='--case basic', checks=[
        json_('both', 'octets_checked', '>', 0),
        tel('b', '/warpnic/dp/port', 'ipackets', '>', 0)]),
]


@pytest.mark.parametrize('case,zc', params(CASES))
def test_rnic(request, build, pairs, case, zc):
    run(request, build, pairs, case, zc)
