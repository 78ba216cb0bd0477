# SPDX-License-Identifier: BSD-3-Clause
"""Real RDMA programs as Debian ships them (fio, qperf, libfabric, rsockets, rdma-core's
examples), unmodified, through the shims between two warpnicd: one case per line of
programs.txt ("case | impair | program | mode | result"; docs/compatibility.md's table lists
the same rows, compat_table checks it). Each case checks the program's own verdict (exit
status, its result report) and the data where the program checks it; a "fails:" row checks
that the program fails the way a real iWARP RNIC makes it fail. Rows of one impairment share
a pair.

Programs that talk TCP beside their RDMA traffic (qperf's and ibv_*_pingpong's side channel,
libfabric's address exchange and interface discovery) run, as on a host with an RNIC, in a
network namespace whose interface carries the RNIC's address: namespaces A and B joined by
a veth pair with 198.19.0.1 and 198.19.0.2 carry only that TCP; the RDMA traffic goes
through warpnicd."""
import glob
import hashlib
import os
import random
import re
import subprocess
import time

import pytest

from wntest import proc
from wntest.check import poll
from wntest.verbs import STEP, Verbs

HERE = os.path.dirname(os.path.abspath(__file__))


class Row:
    def __init__(self, line):
        f = [x.strip() for x in line.split(' | ')]
        self.name, impair, self.program, self.mode, self.result, self.siw = f
        self.impair = None if impair == '-' else impair
        # "=TEST": the row of another meson test (rdma-core's suite, rsockets against siw)
        self.test = self.name[1:] if self.name.startswith('=') else \
            'verbs_programs::' + self.name

    def pair_key(self, params):
        return self.impair


def table(all_rows=False):
    with open(os.path.join(HERE, 'programs.txt')) as f:
        rows = [Row(l) for l in f if l.strip() and not l.startswith('#')]
    return rows if all_rows else [r for r in rows if not r.name.startswith('=')]


class Namespaces:
    """Namespaces A and B (unique names) joined by a veth pair, each holding its warpnicd's
    address; removed when the case ends."""

    def __init__(self, v):
        self.v = v
        tag = '%d%d' % (os.getpid() % 100000, random.randrange(1000))
        self.a, self.b = 'wnpa' + tag, 'wnpb' + tag
        self.made = []
        v.need('ip')
        cmds = [['ip', 'netns', 'add', self.a], ['ip', 'netns', 'add', self.b],
                ['ip', 'link', 'add', 'wpa' + tag, 'type', 'veth', 'peer', 'name', 'wpb' + tag],
                ['ip', 'link', 'set', 'wpa' + tag, 'netns', self.a],
                ['ip', 'link', 'set', 'wpb' + tag, 'netns', self.b],
                ['ip', '-n', self.a, 'addr', 'add', v.a_ip + '/24', 'dev', 'wpa' + tag],
                ['ip', '-n', self.b, 'addr', 'add', v.b_ip + '/24', 'dev', 'wpb' + tag],
                ['ip', '-n', self.a, 'link', 'set', 'wpa' + tag, 'up'],
                ['ip', '-n', self.b, 'link', 'set', 'wpb' + tag, 'up'],
                ['ip', '-n', self.a, 'link', 'set', 'lo', 'up'],
                ['ip', '-n', self.b, 'link', 'set', 'lo', 'up']]
        for c in cmds:
            if subprocess.run(c, capture_output=True).returncode != 0:
                self.close()
                v.fail('cannot set up the namespaces: %s' % ' '.join(c))
            if c[1:3] == ['netns', 'add']:
                self.made.append(c[3])

    def close(self):
        for n in self.made:
            subprocess.run(['ip', 'netns', 'del', n], capture_output=True)
        self.made = []

    def wrap(self, node, args):
        return ['ip', 'netns', 'exec', self.a if node == 'a' else self.b] + \
            proc.argv(self.v.pair, node, args)

    def start(self, node, args, name):
        f = open(self.v.out(name), 'w')
        p = subprocess.Popen(self.wrap(node, args), stdout=f, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, env=self.v.env)
        f.close()
        self.v.bg.append(p)
        return p

    def run(self, node, args, name, secs=STEP):
        return proc.wait(self.start(node, args, name), secs)

    def listening(self, node, port, secs=10):
        ns = self.a if node == 'a' else self.b
        return poll(lambda: (subprocess.run(
            ['ip', 'netns', 'exec', ns, 'ss', '-Hltn', 'sport = :%d' % port],
            capture_output=True, text=True).stdout.strip() != '', None), secs, 0.1)[0]


def ok_or_fail(v, cond, msg):
    if not cond:
        v.fail(msg)


def serve(v, node_args, name, client_args, secs_server=30):
    """A server on A and a client on B with the programs' arguments; both exit 0."""
    srv = v.start_on('a', node_args, name + '_server')
    ok_or_fail(v, v.wait_server(), '%s server is not listening' % name)
    rc = v.on('b', client_args, name + '_client')
    ok_or_fail(v, rc == 0, '%s client exit status %d' % (name, rc))
    rc = v.wait(srv, secs_server)
    ok_or_fail(v, rc == 0, '%s server exit status %s' % (name, rc))


def case_ucmatose(v, row):
    v.need('ucmatose')
    args = ['-c', '4', '-C', '50', '-S', '1000']
    serve(v, ['ucmatose', '-b', v.a_ip] + args, 'ucmatose', ['ucmatose', '-s', v.a_ip] + args)
    for side in ('client', 'server'):
        lines = v.text('ucmatose_' + side).splitlines()
        ok_or_fail(v, any(l.startswith('test complete') for l in lines) and
                   any(l.startswith('return status 0') for l in lines),
                   'ucmatose %s did not complete' % side)


def active_qps(v, node):
    try:
        d = v.pair.tel(node, '/warpnic/dp/lcores')
    except (OSError, ValueError):
        return 0
    return sum(x.get('active_qps', 0) for x in d.values() if isinstance(x, dict))


def errorish(text):
    return re.search(r'mismatch|error|fail', text, re.I) is not None


def case_rping_many(v, row):
    """rping -P hands each connect request to a new thread through one shared slot, so
    requests that arrive together overwrite each other there (rping's race, with any
    device): clients start 0.2 s apart and run long enough to overlap; at least two must be
    connected at once (sampled from the server's warpnicd)."""
    v.need('rping')
    n, count = 8, 500 if row.impair else 2000
    args = ['-a', v.a_ip, '-v', '-V', '-C', str(count), '-S', '100']
    srv = v.start_on('a', ['rping', '-s', '-P'] + args, 'rping_server')
    ok_or_fail(v, v.wait_server(), 'rping server is not listening')
    clients, most = [], 0
    for i in range(1, n + 1):
        clients.append(v.start_on('b', ['rping', '-c'] + args, 'rping_client_%d' % i))
        time.sleep(0.2)
        most = max(most, active_qps(v, 'a'))
    for c in clients:
        if c.poll() is None:
            most = max(most, active_qps(v, 'a'))
            time.sleep(0.1)
    for i, c in enumerate(clients, 1):
        rc = v.wait(c, STEP)
        ok_or_fail(v, rc == 0, 'rping client %d exit status %s' % (i, rc))
        t = v.text('rping_client_%d' % i)
        ok_or_fail(v, not errorish(t), 'rping client %d reports an error' % i)
        ok_or_fail(v, t.count('ping data: rdma-ping-') == count,
                   'rping client %d: not %d rounds' % (i, count))
    # the persistent server serves forever (its stdout stays buffered)
    ok_or_fail(v, srv.poll() is None, 'the persistent rping server exited')
    ok_or_fail(v, not errorish(v.text('rping_server')), 'rping server reports an error')
    ok_or_fail(v, most >= 2, 'the rping connections never overlapped (at most %d)' % most)
    v.note('rping: %d connections (at most %d at once) x %d verified rounds' % (n, most, count))


def case_rping_q(v, row):
    v.need('rping')
    args = ['-q', '-a', v.a_ip, '-v', '-V', '-C', '5']
    srv = v.start_on('a', ['rping', '-s'] + args, 'rping_server')
    ok_or_fail(v, v.wait_server(), 'rping server is not listening')
    ok_or_fail(v, v.on('b', ['rping', '-c'] + args, 'rping_client', 40) == 0,
               'rping -q client failed')
    ok_or_fail(v, v.wait(srv, 20) == 0, 'rping -q server failed')


def qperf_run(v, ns, tests):
    v.need('qperf', 'ss')
    ns.start('a', ['qperf'], 'qperf_server')
    ok_or_fail(v, ns.listening('a', 19765), 'qperf server does not listen')
    res = {}
    for t in tests:
        rc = ns.run('b', ['qperf', v.a_ip, '-cm1', '-t', '1', '-m', '4096', t], 'qperf_' + t)
        res[t] = (rc, v.text('qperf_' + t))
        v.note('qperf %s: %d: %s' % (t, rc, ' '.join(res[t][1].split())))
    return res


def qperf_check(v, res, what=r'latency|bw|msg_rate'):
    for t, (rc, text) in res.items():
        ok_or_fail(v, rc == 0 and text.lstrip().startswith(t + ':'), 'qperf %s did not pass' % t)
        ok_or_fail(v, re.search(r'(%s)\s*=\s*[0-9.]+ ' % what, text) is not None,
                   'qperf %s printed no figure' % t)
        ok_or_fail(v, 'failed' not in text, 'qperf %s failed' % t)


def rnr_note(v):
    for n in 'ab':
        d = v.pair.tel(n, '/warpnic/dp/stats')
        v.note('warpnicd %s: %s' % (n, {k: d.get(k) for k in (
            'rnr_holds', 'rnr_resumed', 'rnr_timeouts', 'term_sent')}))


def case_qperf(v, row, ns):
    qperf_check(v, qperf_run(v, ns, ['rc_lat', 'rc_rdma_write_lat', 'rc_rdma_read_bw',
                                     'rc_rdma_read_lat', 'rc_compare_swap_mr',
                                     'rc_fetch_add_mr']))


def case_qperf_rc_bw(v, row, ns):
    """qperf's Send bandwidth tests: the receiver reposts as it completes, and a Send that
    arrives before the repost waits for it (warpnicd --rnr-hold-ms, as an RNR retry would)."""
    res = qperf_run(v, ns, ['rc_bw', 'rc_bi_bw'])
    rnr_note(v)
    qperf_check(v, res, 'bw')


def case_qperf_rdma_write_bw(v, row, ns):
    """RDMA Write with Immediate Data: on iWARP (RFC 7306) each one consumes a receive at the
    server, which reposts as they complete; the hold covers the gaps."""
    res = qperf_run(v, ns, ['rc_rdma_write_bw'])
    rnr_note(v)
    qperf_check(v, res, 'bw')


def fio_run(v, verb, depth):
    """One transfer of 8 MiB in 64 KiB blocks: the server (rw=read) exposes its buffers, the
    client (rw=write) moves the data with VERB. The engine is one-way (fio never reads back
    what it wrote), so verify= has nothing to check; rnic_it and perftest check the data."""
    port = str(5555 + random.randrange(1000))
    name = '%s_%d' % (verb, depth)
    srv = v.start_on('a', ['fio', '--name=srv', '--ioengine=rdma', '--port=' + port,
                           '--rw=read', '--bs=64k', '--size=8m', '--iodepth=%d' % depth],
                     'fio_server_' + name)
    ok_or_fail(v, v.wait_server(), 'fio server is not listening')
    rc = v.on('b', ['fio', '--name=cli', '--ioengine=rdma', '--hostname=' + v.a_ip,
                    '--port=' + port, '--verb=' + verb, '--rw=write', '--bs=64k', '--size=8m',
                    '--iodepth=%d' % depth], 'fio_client_' + name)
    if rc == 0:
        v.wait(srv, 30)
    else:
        srv.kill()
    ok_or_fail(v, rc == 0, 'fio verb=%s iodepth=%d exit status %d' % (verb, depth, rc))
    cli = v.text('fio_client_' + name)
    ok_or_fail(v, 'err= 0' in cli and 'io=8192KiB' in cli,
               'fio verb=%s iodepth=%d: no error-free 8 MiB run' % (verb, depth))
    ok_or_fail(v, 'err= 0' in v.text('fio_server_' + name),
               'fio server (verb=%s iodepth=%d) failed' % (verb, depth))


def case_fio(v, row):
    v.need('fio')
    for verb in ('write', 'read'):
        for depth in (1, 8, 32):
            fio_run(v, verb, depth)


def case_fio_send(v, row):
    v.need('fio')
    fio_run(v, 'send', 8)
    rnr_note(v)


def pingpong(v, ns, prog, iters, extra=()):
    """Server on A, client on B, QP numbers, PSNs and GIDs exchanged over their TCP side
    channel, each QP moved INIT -> RTR (the peer's GID and QP number) -> RTS by the program:
    warpnicd connects them InfiniBand-style (wn_cm.h). Both finish all ITERS round trips
    (ibv_*_pingpong check every completion's status and opcode themselves and exit 0 only
    then); both warpnicd count the connections (ib_established: one per QP of the program)."""
    v.need(prog, 'ss')
    args = [prog, '-g', '0', '-n', str(iters)] + list(extra)
    srv = ns.start('a', args, prog + '_server')
    ok_or_fail(v, ns.listening('a', 18515), '%s server does not listen' % prog)
    rc = ns.run('b', args + [v.a_ip], prog + '_client')
    ok_or_fail(v, rc == 0, '%s client exit status %s' % (prog, rc))
    rc = v.wait(srv, 30)
    ok_or_fail(v, rc == 0, '%s server exit status %s' % (prog, rc))
    for side in ('client', 'server'):
        ok_or_fail(v, re.search(r'^%d iters in ' % iters, v.text('%s_%s' % (prog, side)),
                                re.M) is not None,
                   '%s %s did not finish %d round trips' % (prog, side, iters))
    ok, got = poll(lambda: (lambda e: (e[0] >= 1 and e[0] == e[1], e))(
        [v.pair.value(n, '/warpnic/dp/stats', 'ib_established') for n in 'ab']))
    ok_or_fail(v, ok, 'InfiniBand-style connections established: A %d, B %d' % tuple(got))
    v.note('%s: %d round trips over %d InfiniBand-style connection(s)' % (prog, iters, got[0]))


def case_ibv_rc_pingpong(v, row, ns):
    # under loss: 64 KiB messages, each many segments (fewer of them: retransmissions are slow)
    if row.impair:
        pingpong(v, ns, 'ibv_rc_pingpong', 300, ['-s', '65536'])
    else:
        pingpong(v, ns, 'ibv_rc_pingpong', 1000)


def case_ibv_srq_pingpong(v, row, ns):
    pingpong(v, ns, 'ibv_srq_pingpong', 500)


def refused(v, prog, pattern, args):
    """PROGRAM (on A, where the device is) fails at once the way siw makes it fail."""
    v.need(prog)
    rc = v.on('a', [prog] + args, prog)
    t = v.text(prog)
    ok_or_fail(v, rc != 0 or 'return status -1' in t or "Couldn't" in t, '%s succeeded' % prog)
    ok_or_fail(v, rc != -9, '%s did not end (timeout)' % prog)
    ok_or_fail(v, pattern in t, '%s did not fail with \'%s\'' % (prog, pattern))


def case_udaddy(v, row):
    """UD QPs over rdma_cm (RDMA_PS_UDP, a warpnic extension): the client's rdma_connect
    resolves the server's UD QP (its number and Q_Key), its messages go there, and the server
    answers each through an address handle made from the receive (ibv_create_ah_from_wc)."""
    v.need('udaddy')
    srv = v.start_on('a', ['udaddy', '-b', v.a_ip], 'udaddy_server')
    ok_or_fail(v, v.wait_server(), 'udaddy server is not listening')
    rc = v.on('b', ['udaddy', '-s', v.a_ip, '-b', v.b_ip], 'udaddy_client')
    ok_or_fail(v, rc == 0, 'udaddy client exit status %d' % rc)
    rc = v.wait(srv, 30)
    ok_or_fail(v, rc == 0, 'udaddy server exit status %s' % rc)
    for side in ('client', 'server'):
        t = v.text('udaddy_' + side).splitlines()
        ok_or_fail(v, any(l.startswith('data transfers complete') for l in t) and
                   any(l.startswith('return status 0') for l in t),
                   'udaddy %s did not complete its transfers' % side)
    # the server's warpnicd answered the client's SIDR REQ and placed its datagrams (the
    # telemetry snapshots follow the shard: polled)
    ok, _ = poll(lambda: (v.pair.value('a', '/warpnic/dp/stats', 'sidr_rep_tx') >= 1 and
                          v.pair.value('a', '/warpnic/dp/stats', 'ud_rx_msgs') >= 10, None))
    ok_or_fail(v, ok, 'A did not resolve and receive the UD traffic')


def case_mckey(v, row):
    """A UD QP is made; multicast is not offered (ENOSYS, as the kernel for a device
    without it)."""
    refused(v, 'mckey', 'mckey: failure joining: Function not implemented',
            ['-m', '239.7.7.7', '-b', v.a_ip])


def case_ibv_ud_pingpong(v, row, ns):
    """ibv_ud_pingpong moves its UD QP through INIT (Q_Key), RTR and RTS itself, trades QP
    numbers and GIDs over TCP, and sends to an address handle built from the peer's GID."""
    prog = 'ibv_ud_pingpong'
    v.need(prog, 'ss')
    args = [prog, '-g', '0', '-s', '1024', '-n', '500']
    srv = ns.start('a', args, prog + '_server')
    ok_or_fail(v, ns.listening('a', 18515), '%s server does not listen' % prog)
    rc = ns.run('b', args + [v.a_ip], prog + '_client')
    ok_or_fail(v, rc == 0, '%s client exit status %d' % (prog, rc))
    rc = v.wait(srv, 30)
    ok_or_fail(v, rc == 0, '%s server exit status %s' % (prog, rc))
    for side in ('client', 'server'):
        ok_or_fail(v, '500 iters in' in v.text(prog + '_' + side),
                   '%s %s did not report its 500 iterations' % (prog, side))


def case_ibv_uc_pingpong(v, row):
    refused(v, 'ibv_uc_pingpong', "Couldn't create QP", ['-g', '0', '-d', 'wn_a'])


def case_ibv_xsrq_pingpong(v, row):
    refused(v, 'ibv_xsrq_pingpong', "Couldn't Open the XRC Domain 95", ['-d', 'wn_a'])


def case_fi_info(v, row, ns):
    v.need('fi_info')
    rc = ns.run('a', ['fi_info', '-p', 'verbs'], 'fi_info', 30)
    t = v.text('fi_info')
    ok_or_fail(v, rc == 0, 'fi_info -p verbs exit status %d' % rc)
    ok_or_fail(v, 'domain: wn_a' in t and 'protocol: FI_PROTO_IWARP' in t and
               'type: FI_EP_MSG' in t, 'fi_info does not list wn_a as iWARP')


def fi_pingpong(v, row, ns, provider, ep):
    """Every size from 1 B to 6 MiB (under loss: 64 KiB), 10 round trips each, data checked
    (-c); the address exchange goes over TCP in the namespaces."""
    v.need('fi_pingpong', 'ss')
    size, least, last = ('65536', 1, '64k') if row.impair else ('all', 40, '6m')
    args = ['fi_pingpong', '-p', provider, '-e', ep, '-S', size, '-I', '10', '-c']
    srv = ns.start('a', args, 'fi_pingpong_server')
    ok_or_fail(v, ns.listening('a', 47592), 'fi_pingpong server does not listen')
    rc = ns.run('b', args + [v.a_ip], 'fi_pingpong_client')
    ok_or_fail(v, rc == 0, 'fi_pingpong client exit status %d' % rc)
    rc = v.wait(srv, 30)
    ok_or_fail(v, rc == 0, 'fi_pingpong server exit status %s' % rc)
    # one line per size: "6m  10  =10  ..." (all sent and acknowledged)
    done = [l.split()[0] for l in v.text('fi_pingpong_client').splitlines()
            if re.match(r'^[0-9]+[km]? +10 +=10 ', l)]
    ok_or_fail(v, len(done) >= least, 'fi_pingpong: only %d sizes completed' % len(done))
    ok_or_fail(v, last in done, 'fi_pingpong: no %s transfers' % last)


def case_fi_pingpong_msg(v, row, ns):
    fi_pingpong(v, row, ns, 'verbs', 'msg')


def case_fi_pingpong_rdm(v, row, ns):
    fi_pingpong(v, row, ns, 'verbs;ofi_rxm', 'rdm')


def rs_run(v, prog, name, args, lines=1):
    """rstream's or riostream's server on A (-b) and client on B (-s) with the same options;
    both exit 0, report no error (-T v: they verify the data) and print LINES result rows."""
    v.note('%s: %s %s' % (name, prog, ' '.join(args)))
    serve(v, [prog, '-b', v.a_ip] + args, name, [prog, '-s', v.a_ip] + args)
    for side in ('client', 'server'):
        t = v.text('%s_%s' % (name, side))
        ok_or_fail(v, re.search(r'fail|error|mismatch|rsend|rrecv|rpoll|raccept|rconnect|'
                                r'riomap|riowrite', t, re.I) is None,
                   '%s: %s %s reports an error' % (name, prog, side))
        n = len(re.findall(r'^[0-9a-z_]+ +[0-9.]+[kmg]? +[0-9.]+[kmg]? ', t, re.M))
        ok_or_fail(v, n == lines, '%s: %s printed %d result lines, not %d' % (
            name, side, n, lines))


def case_rstream(v, row):
    v.need('rstream')
    if row.impair:
        rs_run(v, 'rstream', 'rstream_b', ['-T', 'b', '-T', 'v', '-S', '65536', '-C', '200'])
        rs_run(v, 'rstream', 'rstream_a', ['-T', 'a', '-T', 'v', '-S', '65536', '-C', '200'])
        return
    # blocking 64-octet ping-pongs and 1 MiB transfers (the ends of the default test, whose
    # 100000 ping-pongs alone take a minute on a loaded 2-core machine)
    rs_run(v, 'rstream', 'rstream_lat', ['-T', 'b', '-T', 'v', '-S', '64', '-C', '1',
                                         '-I', '2000'])
    rs_run(v, 'rstream', 'rstream_bw', ['-T', 'b', '-T', 'v', '-S', '1048576', '-C', '50'])
    # rstream's own default calls, rpoll() before each call, rdma_getaddrinfo() + keepalive
    rs_run(v, 'rstream', 'rstream_n', ['-T', 'n', '-T', 'v', '-S', '65536', '-C', '200'])
    rs_run(v, 'rstream', 'rstream_a', ['-T', 'a', '-T', 'v', '-S', '65536', '-C', '200'])
    rs_run(v, 'rstream', 'rstream_r', ['-T', 'r', '-T', 'v', '-k', '5', '-S', '4096',
                                       '-C', '1000'])


def case_riostream(v, row):
    """riowrite() into the peer's riomap()ed buffer, waiting for its last octet to change."""
    v.need('riostream')
    rs_run(v, 'riostream', 'riostream_b', ['-T', 'b', '-T', 'v', '-S', '65536', '-C', '200'])
    if row.impair:
        return
    rs_run(v, 'riostream', 'riostream_n', ['-T', 'n', '-T', 'v', '-S', '4096', '-C', '1000'])
    rs_run(v, 'riostream', 'riostream_a', ['-T', 'a', '-T', 'v', '-S', '1048576', '-C', '20'])
    rs_run(v, 'riostream', 'riostream_lat', ['-T', 'b', '-T', 'v', '-S', '64', '-C', '1',
                                             '-I', '500'])


def case_rspreload(v, row):
    """librspreload turns an ordinary program's TCP sockets into rsockets: nc.traditional
    moves a 16 MiB file (sha256 compared; Debian 12's librspreload wraps accept() but not
    accept4()), then iperf3 both ways by its own verdict."""
    v.need('nc.traditional', 'iperf3')
    pre = (glob.glob('/usr/lib/*/rsocket/librspreload.so.1') or [None])[0]
    ok_or_fail(v, pre is not None, 'missing prerequisite: librspreload (librdmacm1)')
    data = os.path.join(v.d, 'data.in')
    with open(data, 'wb') as f:
        f.write(os.urandom(16 << 20))
    srv = v.start_on('a', ['env', 'LD_PRELOAD=' + pre, 'nc.traditional', '-l', '-p', '7474',
                           '-s', v.a_ip], 'rspreload_nc_server')
    ok_or_fail(v, v.wait_server(), 'nc server is not listening')
    with open(data, 'rb') as stdin, open(v.out('nc_client'), 'w') as out:
        cli = subprocess.Popen(proc.argv(v.pair, 'b', ['env', 'LD_PRELOAD=' + pre,
                                                       'nc.traditional', '-q', '0', v.a_ip,
                                                       '7474']),
                               stdin=stdin, stdout=out, stderr=subprocess.STDOUT, env=v.env)
        rc = proc.wait(cli, STEP)
    ok_or_fail(v, rc == 0, 'nc client exit status %d' % rc)
    ok_or_fail(v, v.wait(srv, 30) == 0, 'nc server failed')
    with open(data, 'rb') as a, open(v.out('rspreload_nc_server'), 'rb') as b:
        ok_or_fail(v, hashlib.sha256(a.read()).digest() == hashlib.sha256(b.read()).digest(),
                   'nc: the file arrived different')
    if row.impair:
        return
    for d in ([], ['-R']):
        name = 'rspreload_iperf' + ''.join(d)
        srv = v.start_on('a', ['env', 'LD_PRELOAD=' + pre, 'iperf3', '-s', '-1', '-B', v.a_ip,
                               '-p', '7475'], name + '_server')
        ok_or_fail(v, v.wait_server(), 'iperf3 server is not listening')
        rc = v.on('b', ['env', 'LD_PRELOAD=' + pre, 'iperf3', '-c', v.a_ip, '-p', '7475',
                        '-n', '16M'] + d, name + '_client')
        ok_or_fail(v, rc == 0, 'iperf3 %s client exit status %d' % (d, rc))
        ok_or_fail(v, v.wait(srv, 30) == 0, 'iperf3 %s server failed' % d)
        t = v.text(name + '_client')
        # the sender's 16 MiB (with -R the server sends, and may count a little more)
        ok_or_fail(v, 'iperf Done' in t and re.search(r' 16\.[0-9] MBytes .* sender$', t, re.M) and
                   re.search(r' MBytes .* receiver$', t, re.M), 'iperf3 %s did not complete' % d)


NEEDS_NS = {'qperf', 'qperf_rc_bw', 'qperf_rdma_write_bw', 'ibv_rc_pingpong',
            'ibv_srq_pingpong', 'ibv_ud_pingpong', 'fi_info', 'fi_pingpong_msg',
            'fi_pingpong_rdm'}


@pytest.mark.parametrize('row', [pytest.param(r, id=r.name) for r in table()])
def test_program(request, build, pairs, row):
    v = Verbs(request, build, pairs, pair=('--impair', row.impair) if row.impair else ())
    base = row.name[:-5] if row.name.endswith('_drop') else row.name
    ns = None
    v.start()
    try:
        fn = globals()['case_' + base]
        if base in NEEDS_NS:
            ns = Namespaces(v)
            fn(v, row, ns)
        else:
            fn(v, row)
        if not v.pair.alive():
            v.fail('a warpnicd died')
    except BaseException:
        pairs.release(judge=False)
        raise
    finally:
        for p in v.bg:
            if p.poll() is None:
                p.kill()
                p.wait()
        if ns:
            ns.close()
    v.finish()


def test_compat_table():
    """docs/compatibility.md's table "| program | mode | result | siw | test |" is what the
    tests run: every row is a line of programs.txt (same program, mode, result and siw's
    result; test = verbs_programs::CASE, or TEST for a line "=TEST") and every line there is
    a row."""
    want = {r.test: (r.program, r.mode, r.result, r.siw) for r in table(all_rows=True)}
    rows, in_table = {}, False
    with open(os.path.join(HERE, '..', '..', '..', 'docs', 'compatibility.md')) as f:
        for line in f:
            line = line.strip()
            cells = [c.strip() for c in line.strip('|').split('|')] \
                if line.startswith('|') else None
            if cells is not None and [c.lower() for c in cells] == \
                    ['program', 'mode', 'result', 'siw', 'test']:
                in_table = True
                continue
            if not in_table:
                continue
            if cells is None:
                break
            if set(''.join(cells)) <= set('-: '):
                continue
            assert len(cells) == 5, 'docs/compatibility.md row with %d cells: %s' % (
                len(cells), line)
            prog, mode, result, siw, test = [c.strip('`') for c in cells]
            rows[test] = (prog, mode, result, siw)
    assert rows, 'no "| program | mode | result | siw | test |" table in docs/compatibility.md'
    assert sorted(set(want) - set(rows)) == [], 'programs.txt cases without a docs row'
    assert sorted(set(rows) - set(want)) == [], 'docs rows that are not cases'
    for t in want:
        assert rows[t] == want[t], '%s differs: docs %s, programs.txt %s' % (
            t, rows[t], want[t])
