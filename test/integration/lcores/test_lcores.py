# SPDX-License-Identifier: BSD-3-Clause
"""warpnicd with two dataplane lcores per instance (wn-pair.sh --lcores 2): connections are
spread over the lcores by the software flow steering; data moves and is verified on every
one of them, the two instances agree on each connection's lcore (no frame crosses lcores:
handoffs are ARP or NDP only), a connection between two clients of the same instance
(loopback) works whichever lcores its ends live on; with impair all of it under 1 % drop and
reorder; with ipv6 the same over IPv6 only (ucmatose in place of ib_write_bw: Debian 12's
perftest resolves addresses as AF_INET only); a peer that connects the moment rdma_listen
returns finds the listener on whichever lcore its connection lands (cm_listen_now). One pair
per case."""
import os
import time

import pytest

from wntest.verbs import Verbs, rows

QPS = 8
MODES = {'clean': ('4', ('--lcores', '2')),
         'impair': ('4', ('--lcores', '2', '--impair', 'drop=0.01,reorder=0.01,dup=0.001')),
         'ipv6': ('6', ('--lcores', '2'))}


class Mode(str):
    def pair_key(self, params):
        return str(self)


def complete(v, name):
    lines = v.text(name).splitlines()
    return any(l.startswith('test complete') for l in lines) and \
        any(l.startswith('return status 0') for l in lines)


def spread(v, rnd):
    """QPS connections, two rounds: (1/2)^(2*QPS-1) that they all land on one lcore."""
    if v.ip != '4':
        v.need('ucmatose')
        args = ['-c', str(QPS), '-C', '100', '-S', '4000']
        srv = v.start_on('a', ['ucmatose', '-b', v.a_ip] + args, 'uc_server_%d' % rnd)
        if not v.wait_server():
            v.fail('ucmatose server did not create its CM id')
        if v.on('b', ['ucmatose', '-s', v.a_ip] + args, 'uc_client_%d' % rnd) != 0:
            v.fail('ucmatose -c %d client failed (round %d)' % (QPS, rnd))
        if v.wait(srv, 30) != 0:
            v.fail('ucmatose server failed (round %d)' % rnd)
        for n in ('uc_client_%d' % rnd, 'uc_server_%d' % rnd):
            if not complete(v, n):
                v.fail('ucmatose did not complete (%s)' % n)
        return
    v.need('ib_write_bw')
    args = ['ib_write_bw', '-R', '-q', str(QPS), '-s', '65536', '-n', '100']
    srv = v.start_on('a', args, 'bw_server_%d' % rnd)
    if not v.wait_server():
        v.fail('ib_write_bw server did not create its CM id')
    if v.on('b', args + [v.a_ip], 'bw_client_%d' % rnd) != 0:
        v.fail('ib_write_bw -q %d client failed (round %d)' % (QPS, rnd))
    if v.wait(srv, 20) != 0:
        v.fail('ib_write_bw server failed (round %d)' % rnd)
    if not [f for f in rows(v.text('bw_client_%d' % rnd), 65536) if f[1] == str(QPS * 100)]:
        v.fail('ib_write_bw: no result line for %d QPs' % QPS)


def rping(v, name, client_node, size):
    args = ['-a', v.a_ip, '-V', '-C', '20', '-S', str(size)]
    srv = v.start_on('a', ['rping', '-s'] + args, name + '_server')
    if not v.wait_server():
        v.fail('%s: rping server did not create its CM id' % name)
    if v.on(client_node, ['rping', '-c'] + args, name + '_client') != 0:
        v.fail('%s: rping client failed' % name)
    if v.wait(srv, 15) != 0:
        v.fail('%s: rping server failed' % name)


@pytest.mark.parametrize('mode', [pytest.param(Mode(m), id=m) for m in MODES])
def test_lcores(request, build, pairs, mode):
    ip, opts = MODES[mode]
    v = Verbs(request, build, pairs, ip=ip, pair=opts)
    v.start()
    try:
        v.need('rping')
        if v.stat('a', 'lcores') != 2:
            v.fail('instance A does not run 2 lcores')
        for rnd in (1, 2):
            spread(v, rnd)
        # data verified: rping -V, a few connections, then loopback (both clients on A)
        for i in range(1, 5):
            rping(v, 'rping_%d' % i, 'b', 4000)
            time.sleep(0.3)  # the server's id is destroyed before the next one binds
        rping(v, 'loop', 'a', 2000)
        for side in 'ab':
            d = v.pair.tel(side, '/warpnic/dp/lcores')
            lc = [x for x in d.values() if isinstance(x, dict)]
            est = [x['conns_established'] for x in lc]
            ho = [x['handoff_tx'] for x in lc]
            drop = sum(x['handoff_drop'] for x in lc)
            v.note('instance %s: connections per lcore %s, frames handed over %s, dropped %d'
                   % (side, est, ho, drop))
            if len(est) != 2 or min(est) == 0:
                v.fail('instance %s: a lcore carried no connection' % side)
            if drop:
                v.fail('instance %s: handoff drops' % side)
            # the loopback connection's ends may sit on different lcores (A only)
            if side == 'b' and mode != 'impair' and sum(ho) > 16:
                v.fail('frames crossed lcores: the two instances steer differently')
        if not v.pair.alive():
            v.fail('a warpnicd died')
        v.ip_check()
    except BaseException:
        pairs.release(judge=False)
        raise
    v.finish()


@pytest.mark.parametrize('mode', [pytest.param(Mode('clean'), id='listen_now')])
def test_listen_now(request, build, pairs, mode):
    """rdma_listen returns once every lcore of A has the listener: cm_listen_now's client on B
    connects the moment the server's rdma_listen returned (told through a FIFO, no wait on
    telemetry), ROUNDS times on fresh ports, and every connection is established (none meets
    a reset from an lcore still without the listener)."""
    rounds = 200
    ip, opts = MODES[mode]
    v = Verbs(request, build, pairs, ip=ip, pair=opts)
    v.start()
    try:
        if v.stat('a', 'lcores') != 2:
            v.fail('instance A does not run 2 lcores')
        prog = os.path.join(v.build, 'test', 'integration', 'cm_listen_now')
        fifo = os.path.join(v.d, 'fifo')
        os.makedirs(fifo, exist_ok=True)
        for f in ('go', 'back'):
            if not os.path.exists(os.path.join(fifo, f)):
                os.mkfifo(os.path.join(fifo, f))
        args = ['-d', fifo, '-n', str(rounds), '-p', '21000']
        srv = v.start_on('a', [prog, '-s', v.a_ip] + args, 'listen_now_server')
        rc = v.on('b', [prog, '-c', v.a_ip] + args, 'listen_now_client')
        if rc != 0:
            v.fail('cm_listen_now client exit status %d' % rc)
        if v.wait(srv, 30) != 0:
            v.fail('cm_listen_now server failed')
        if 'established %d of %d' % (rounds, rounds) not in v.text('listen_now_client'):
            v.fail('cm_listen_now: not every connection established')
        est = [x['conns_established'] for x in v.pair.tel('a', '/warpnic/dp/lcores').values()
               if isinstance(x, dict)]
        v.note('%d connections at once after rdma_listen, per lcore of A %s' % (rounds, est))
        if len(est) != 2 or min(est) == 0:
            v.fail('instance A: a lcore carried no connection')
        if not v.pair.alive():
            v.fail('a warpnicd died')
    except BaseException:
        pairs.release(judge=False)
        raise
    v.finish()
