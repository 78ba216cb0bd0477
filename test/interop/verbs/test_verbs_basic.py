# SPDX-License-Identifier: BSD-3-Clause
"""Debian's rping, rdma_server/rdma_client and cmtime (rdmacm-utils) and cm_bw (ours, for
IPv6, which Debian 12's perftest cannot use) between two warpnicd, over IPv4 and IPv6, over
MPA/TCP and over DDP over SCTP by the programs' own choice (WARPNIC_LLP=sctp). Rows with
the same addresses and pair options share one pair (wntest/verbs.py)."""
import os
import re

import pytest

from wntest.check import poll
from wntest.verbs import Verbs, rows, number

SCTP = {'WARPNIC_LLP': 'sctp'}
AF_PACKET = ('--link', 'af_packet')


class Row:
    def __init__(self, name, run, ip='4', pair=(), env=None, **args):
        self.name, self.run, self.ip, self.pair, self.env, self.args = \
            name, run, ip, tuple(pair), env or {}, args

    def pair_key(self, params):
        return (self.ip, self.pair)


def rping(v, count=100, size=64):
    """rping -V (each round's data read back and compared) -v (printed), server on A, client
    on B. Each round is a Send (advertised buffer), an RDMA Read of the client's buffer by
    the server, a Send, an RDMA Write back to the client and a Send: breaks if any of them,
    the CM path or the completion channels break. Every round's data printed, in order, on
    both sides, round 0 the pattern rping fills from 'A'."""
    v.need('rping')
    args = ['-a', v.a_ip, '-v', '-V', '-C', str(count), '-S', str(size)]
    srv = v.start_on('a', ['rping', '-s'] + args, 'rping_server')
    if not v.wait_server():
        v.fail('rping server is not listening')
    rc = v.on('b', ['rping', '-c'] + args, 'rping_client')
    if rc != 0:
        v.fail('rping client exit status %d' % rc)
    rc = v.wait(srv, 15)
    if rc != 0:
        v.fail('rping server exit status %s' % rc)
    for side in ('client', 'server'):
        text = v.text('rping_' + side)
        seen = [int(n) for n in re_rounds(text)]
        if seen != list(range(count)):
            v.fail('rping %s: rounds 0..%d not all seen in order (%d seen)' % (
                side, count - 1, len(seen)))
    if 'ping data: rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ' not in v.text('rping_client'):
        v.fail('rping client: unexpected data in round 0')
    v.note('rping: %d rounds of %d bytes verified on both sides' % (count, size))


def re_rounds(text):
    import re
    return re.findall(r'ping data: rdma-ping-([0-9]+):', text)


def rdma_cm_examples(v):
    """rdma_server / rdma_client: the rdma_cm "endpoint" API (rdma_getaddrinfo,
    rdma_create_ep, rdma_get_request, synchronous ids), rdma_verbs.h helpers and inline
    sends, twice; both exit 0, and A holds no CM id between the rounds."""
    v.need('rdma_server', 'rdma_client')
    for rnd in (1, 2):
        srv = v.start_on('a', ['rdma_server', '-s', v.a_ip, '-p', '7471'],
                         'rdma_server_%d' % rnd)
        if not v.wait_server():
            v.fail('rdma_server is not listening (round %d)' % rnd)
        rc = v.on('b', ['rdma_client', '-s', v.a_ip, '-p', '7471'], 'rdma_client_%d' % rnd)
        if rc != 0:
            v.fail('rdma_client exit status %d (round %d)' % (rc, rnd))
        rc = v.wait(srv, 15)
        if rc != 0:
            v.fail('rdma_server exit status %s (round %d)' % (rc, rnd))
        from wntest.check import poll
        ok, _ = poll(lambda: (v.pair.objects('a')['cm_ids'] == 0, None), 5, 0.1)
        if not ok:
            v.fail('A still holds CM ids after round %d' % rnd)
    v.note('rdma_server/rdma_client: 2 rounds, both exit 0 (lower layer %s)' % v.llp)


def cm_bw(v, op, iters=50):
    """cm_bw (test/interop/verbs/cm_bw.c): RDMA Write, Read or Send bandwidth over rdma_cm
    of the pair's address family, 2 B, 4 KiB, 64 KiB and 1 MiB x ITERS, every octet checked;
    both sides saw their connection's addresses in the family, with the local one in the GID
    table (ibv_query_gid)."""
    prog = os.path.join(v.build, 'test', 'interop', 'cm_bw')
    if not os.access(prog, os.X_OK):
        v.fail('missing prerequisite: %s not built' % prog)
    sizes = '2,4096,65536,1048576'
    args = ['-o', op, '-S', sizes, '-n', str(iters)]
    srv = v.start_on('a', [prog, '-s', v.a_ip] + args, 'server')
    if not v.wait_server():
        v.fail('cm_bw server is not listening')
    rc = v.on('b', [prog, '-c', v.a_ip] + args, 'client')
    if rc != 0:
        v.fail('cm_bw client exit status %d' % rc)
    rc = v.wait(srv, 20)
    if rc != 0:
        v.fail('cm_bw server exit status %s' % rc)
    fam = 'IPv4' if v.ip == '4' else 'IPv6'
    cli, srv_out = v.text('client'), v.text('server')
    if not any(l.startswith('client: %s -> %s (%s), GID[' % (v.b_ip, v.a_ip, fam))
               for l in cli.splitlines()):
        v.fail('client: not an %s connection from %s to %s' % (fam, v.b_ip, v.a_ip))
    if not any(l.startswith('server: %s -> %s (%s), GID[' % (v.a_ip, v.b_ip, fam))
               for l in srv_out.splitlines()):
        v.fail('server: not an %s connection from %s to %s' % (fam, v.a_ip, v.b_ip))
    for size in sizes.split(','):
        if not [f for f in rows(cli, int(size)) if len(f) > 3 and f[1] == str(iters) and
                number(f[2]) > 0 and f[3] == 'verified']:
            v.fail('cm_bw %s: no verified row for %s octets' % (op, size))
    if 'client: all sizes verified' not in cli or 'server: all sizes verified' not in srv_out:
        v.fail('cm_bw %s: not verified' % op)
    v.note('cm_bw %s over %s: sizes %s x %d, every octet verified' % (op, fam, sizes, iters))


def cmtime(v, n=1000):
    """rdma-core's cmtime: N connections opened at once (create id, bind, resolve address and
    route, create QP, connect), then all disconnected and destroyed; server on A, client on
    B. Breaks if a connection fails or is refused, if a CM event is lost (a client reading
    slower than connections come: the control server's channel queue, the dataplane's
    rings) or a connection is not torn down. The verdicts are counters: B opened N and A
    took N, both established N and closed N (lib/cm endpoints CLOSED), none failed, no
    control message dropped; each control server delivered every CM event (B: address and
    route resolved, established, disconnected, 4 N; A: request, established, disconnected,
    3 N) and dropped none; B keeps no CM id or QP; cmtime printed no failed event (it
    prints one and goes on) and its whole table."""
    v.need('cmtime')
    ctl0 = {s: v.pair.tel(s, '/warpnic/ctl') for s in 'ab'}
    srv = v.start_on('a', ['cmtime', '-b', v.a_ip], 'cmtime_server')
    if not v.wait_server():
        v.fail('cmtime server is not listening')
    rc = v.on('b', ['cmtime', '-s', v.a_ip, '-b', v.b_ip, '-c', str(n)], 'cmtime_client')
    if rc != 0:
        v.fail('cmtime client exit status %d' % rc)
    for name in ('cmtime_client', 'cmtime_server'):
        bad = [l for l in v.text(name).splitlines()
               if re.search(r'event: RDMA_CM_EVENT|failure|failed|error', l)]
        if bad:
            v.fail('cmtime %s: %s' % (name, bad[0]))
    table = v.text('cmtime_client')
    if not re.search(r'^destroy +:', table, re.M):
        v.fail('cmtime printed no timing table')
    want = [('b', 'conns_active', n), ('a', 'conns_passive', n)]
    for s in 'ab':
        want += [(s, 'conns_established', n), (s, 'conns_closed', n), (s, 'conns_failed', 0),
                 (s, 'ctl_drop', 0)]
    events = {'b': 4 * n, 'a': 3 * n}

    def counted():
        got = [(s, k, v.pair.value(s, '/warpnic/dp/stats', k), w) for s, k, w in want]
        for s in 'ab':
            c = v.pair.tel(s, '/warpnic/ctl')
            got.append((s, 'cm_events', c['cm_events'] - ctl0[s]['cm_events'], events[s]))
            got.append((s, 'cm_events_dropped', c['cm_events_dropped'], 0))
        off = [g for g in got if g[2] != g[3]]
        return not off, off
    ok, off = poll(counted, 15)
    if not ok:
        v.fail('counters: ' + ', '.join('%s %s %s (want %s)' % o for o in off))
    objs = v.pair.objects('b')
    if objs['cm_ids'] != 0 or objs['qps'] != 0:
        v.fail('B kept CM ids or QPs after cmtime left: %s' % objs)
    c = v.pair.tel('b', '/warpnic/ctl')
    for l in table.splitlines():
        if re.match(r'(create id|connect|disconnect|destroy) +:', l):
            v.note(l)
    v.note('cmtime: %d connections established and torn down, every CM event delivered (B: '
           '%d, %d of them waited for the client, at most %d queued; A: %d)' % (
               n, 4 * n, c['cm_events_waited'] - ctl0['b']['cm_events_waited'],
               c['cm_queue_max'], 3 * n))
    srv.kill()
    srv.wait()


RUNS = {'rping': rping, 'rdma_cm_examples': rdma_cm_examples, 'cm_bw': cm_bw, 'cmtime': cmtime}

ROWS = [
    Row('rping', 'rping', count=100, size=64),
    Row('rping_4k', 'rping', count=100, size=4096),
    Row('rdma_cm_examples', 'rdma_cm_examples'),
    # 1000 connections at once, established and torn down, no CM event lost (issue 26)
    Row('cmtime', 'cmtime', n=1000),
    # DDP over SCTP (RFC 5043) by the programs' own choice
    Row('sctp_rping', 'rping', env=SCTP, count=50, size=4096),
    Row('sctp_rdma_cm_examples', 'rdma_cm_examples', env=SCTP),
    # IPv6 end to end (wn-pair.sh --ipv6: fd77:6e::1 and ::2, link-local addresses, DAD);
    # each proves neighbour discovery by telemetry (ip_check)
    Row('ipv6_rping', 'rping', ip='6', count=100, size=64),
    Row('ipv6_write_bw', 'cm_bw', ip='6', op='write'),
    Row('ipv6_read_bw', 'cm_bw', ip='6', op='read'),
    Row('ipv6_send_bw', 'cm_bw', ip='6', op='send'),
    Row('ipv6_rping_4k_dual', 'rping', ip='46', count=100, size=4096),
    # af_packet over veth: the namespaces' kernels keep IPv6
    Row('ipv6_rping_af_packet', 'rping', ip='6', pair=AF_PACKET, count=50, size=1000),
]


@pytest.mark.parametrize('row', [pytest.param(r, id=r.name) for r in ROWS])
def test_verbs(request, build, pairs, row):
    v = Verbs(request, build, pairs, ip=row.ip, pair=row.pair, env=row.env)
    v.start()
    try:
        RUNS[row.run](v, **row.args)
        if not v.pair.alive():
            v.fail('a warpnicd died')
        v.llp_check()
        v.ip_check()
    except BaseException:
        pairs.release(judge=False)
        raise
    v.finish()
