# SPDX-License-Identifier: BSD-3-Clause
"""Debian's rping and rdma_server/rdma_client (rdmacm-utils) and cm_bw (ours, for IPv6,
which Debian 12's perftest cannot use) between two warpnicd, over IPv4 and IPv6, over
MPA/TCP and over DDP over SCTP by the programs' own choice (WARPNIC_LLP=sctp). Rows with
the same addresses and pair options share one pair (wntest/verbs.py)."""
import os

import pytest

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


RUNS = {'rping': rping, 'rdma_cm_examples': rdma_cm_examples, 'cm_bw': cm_bw}

ROWS = [
    Row('rping', 'rping', count=100, size=64),
    Row('rping_4k', 'rping', count=100, size=4096),
    Row('rdma_cm_examples', 'rdma_cm_examples'),
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
