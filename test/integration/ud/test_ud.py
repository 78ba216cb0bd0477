# SPDX-License-Identifier: BSD-3-Clause
"""UD QPs, a warpnic extension (unreliable datagrams over UDP, rdma_cm's UDP port space):
ud_it (ud_it.c) as server on A and client on B, or both on A (one warpnicd, its loopback),
over IPv4, over IPv6 (dual stack: the GRH is the IPv6 header), and with two lcores per
instance (every UD QP and datagram on lcore 0). A case being one row:

    Case(NAME, ip='4'|'46', client='a'|'b', pair=(wn-pair.sh options), count=N, bad=N,
         lost=(ADDR...))

The client resolves the server's UD QP through rdma_connect (SIDR REQ/REP between the
warpnicd), then COUNT messages go and come back (each side checks the GRH, source QP,
immediate data and octets; the server answers through ibv_create_ah_from_wc); BAD messages
with a Q_Key not the server's are dropped (the marker after them must be the server's next
receive); three messages go to each LOST address through an address handle (an on-link
address nobody has, or one without a route), and complete.

Verdicts: both exit 0 with their counts (JSON); the server's warpnicd counted exactly BAD
Q_Key drops (ud_rx_drop_qkey) and the messages placed, the client's the messages sent and
the SIDR exchange; an on-link LOST address's datagrams are dropped when its neighbour
resolution fails (tx_drop_neigh), one without a route at once (ud_tx_drop,
tx_drop_noroute); one warpnicd carries its own datagrams without the wire (ud_loopback)."""
import json
import os

import pytest

from wntest.check import poll
from wntest.verbs import STEP, Verbs

PORT = 7471


class Case:
    def __init__(self, name, ip='4', client='b', pair=(), count=100, bad=3, lost=()):
        self.name, self.ip, self.client, self.pair = name, ip, client, tuple(pair)
        self.count, self.bad, self.lost = count, bad, tuple(lost)

    def pair_key(self, params):
        return (self.ip, self.pair)


CASES = [
    Case('pair4', count=200, bad=5, lost=('198.19.0.99', '203.0.113.7')),
    Case('one4', client='a', bad=3, lost=('198.19.0.99',)),
    Case('lcores', pair=('--lcores', '2'), count=100, bad=2),
    Case('pair6', ip='46', count=100, bad=3, lost=('fd77:6e::99',)),
]


def json_line(v, name):
    for line in reversed(v.text(name).splitlines()):
        if line.startswith('{'):
            return json.loads(line)
    v.fail('%s printed no counts' % name)


def grows(v, node, cmd, key, least, secs=10):
    """KEY of CMD on NODE grew by at least LEAST in this case (waiting up to secs)."""
    ok, got = poll(lambda: (lambda n: (n >= least, n))(v.pair.value(node, cmd, key)), secs)
    v.note('%s %s %s: %s' % (node, cmd, key, got))
    if not ok:
        v.fail('%s: %s %s grew by %s, not at least %d' % (node, cmd, key, got, least))
    return got


@pytest.mark.parametrize('case', [pytest.param(c, id=c.name) for c in CASES])
def test_ud(request, build, pairs, case):
    v = Verbs(request, build, pairs, ip=case.ip, pair=case.pair)
    it = os.path.join(build, 'test', 'integration', 'ud', 'ud_it')
    srv_ip = v.a_ip
    v.start()
    try:
        n = case.count + 1  # and the marker
        srv = v.start_on('a', [it, 'server', srv_ip, str(PORT), str(case.count),
                               str(case.bad)], 'ud_server')
        ok, _ = poll(lambda: ('listening' in v.text('ud_server'), None), 20, 0.1)
        if not ok:
            v.fail('ud_it server did not listen')
        rc = v.on(case.client, [it, 'client', srv_ip, str(PORT), str(case.count),
                                str(case.bad)] + list(case.lost), 'ud_client', STEP)
        if rc != 0:
            v.fail('ud_it client exit status %d' % rc)
        if v.wait(srv, 30) != 0:
            v.fail('ud_it server did not finish')
        s, c = json_line(v, 'ud_server'), json_line(v, 'ud_client')
        v.note('server %s' % s)
        v.note('client %s' % c)
        if s['received'] != n or s['grh_checked'] != n or c['received'] != n or \
                c['grh_checked'] != n:
            v.fail('not every message went both ways with its GRH checked')
        if c['lost_sent'] != 3 * len(case.lost) or c['refused'] != 3:
            v.fail('the lost or refused address handles were not all tried')
        # the server's warpnicd dropped the bad Q_Keys, and only those
        cl = case.client
        dropped = grows(v, 'a', '/warpnic/dp/stats', 'ud_rx_drop_qkey', case.bad)
        if dropped != case.bad:
            v.fail('A dropped %d datagrams for their Q_Key, not %d' % (dropped, case.bad))
        placed = n * (2 if cl == 'a' else 1)
        grows(v, 'a', '/warpnic/dp/stats', 'ud_rx_msgs', placed)
        grows(v, cl, '/warpnic/dp/stats', 'ud_tx_msgs', n + case.bad + 3 * len(case.lost))
        grows(v, 'a', '/warpnic/dp/stats', 'sidr_req_rx', 1)
        grows(v, cl, '/warpnic/dp/stats', 'sidr_rep_rx', 1)
        if cl == 'a':
            grows(v, 'a', '/warpnic/dp/stats', 'ud_loopback', 2 * n + case.bad)
        elif v.pair.value('a', '/warpnic/dp/stats', 'ud_loopback') != 0:
            v.fail('datagrams between the two instances took A\'s loopback')
        on_link = [x for x in case.lost if not x.startswith('203.')]
        if on_link:
            # three probes a second apart, then the datagrams held for the neighbour go
            grows(v, cl, '/warpnic/dp/net', 'tx_drop_neigh', 3 * len(on_link), 15)
        if len(on_link) != len(case.lost):
            grows(v, cl, '/warpnic/dp/stats', 'ud_tx_drop', 3)
            grows(v, cl, '/warpnic/dp/net', 'tx_drop_noroute', 3)
        if v.pair.value('a', '/warpnic/dp/stats', 'ud_rx_bad') != 0:
            v.fail('A received datagrams it could not decode')
        v.ip_check()
    except BaseException:
        pairs.release(judge=False)
        raise
    v.finish()
