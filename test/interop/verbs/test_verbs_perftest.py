# SPDX-License-Identifier: BSD-3-Clause
"""Debian's perftest (4.5), unmodified, between two warpnicd over rdma_cm: the six bandwidth
and latency programs over MPA/TCP and over DDP over SCTP (both warpnicd --llp sctp), a
perftest killed -9 mid-transfer on either side, the dataplane's idle modes under
ib_write_lat and ib_send_lat -e, and a SYN flood at an rping listener. These saturate both
cores (two daemons and two busy-polling programs each): the module runs alone."""
import os
import signal
import subprocess
import sys

import pytest

from wntest.verbs import Verbs, number, rows
from wntest.check import poll
from wntest.pair import TOP

AF_PACKET = ('--link', 'af_packet')


class Row:
    def __init__(self, name, run, pair=(), llp=None, **args):
        self.name, self.run, self.pair, self.llp, self.args = \
            name, run, tuple(pair), llp, args

    def pair_key(self, params):
        return (self.pair, self.llp)


def perftest(v, tool, iters):
    """TOOL -R -a -n ITERS, server on A, client on B: every size from 2 B to 8 MiB. Both
    exit 0 and the client's result table has one row per size with ITERS iterations and a
    positive last column (bw: MsgRate, lat: a percentile; BW columns print 0.00 for 2-octet
    messages on a loaded machine, so they prove nothing). perftest calibrates its cycle
    counter against the clock; on a machine starved of CPU the fit fails ("Can't produce a
    report") whatever the device did: that, and only that, gets one more run."""
    v.need(tool)
    args = [tool, '-R', '-a', '-n', str(iters)]
    for attempt in (1, 2):
        srv = v.start_on('a', args, 'server')
        if not v.wait_server():
            v.fail('%s server is not listening' % tool)
        rc = v.on('b', args + [v.a_ip], 'client')
        if rc != 0 and attempt == 1 and "Can't produce a report" in v.text('client'):
            v.note('perftest could not calibrate its clock (machine overloaded): once more')
            if v.wait(srv, 10) is None:
                srv.kill()
                srv.wait()
            continue
        if rc != 0:
            v.fail('%s client exit status %d' % (tool, rc))
        rc = v.wait(srv, 20)
        if rc != 0:
            v.fail('%s server exit status %s' % (tool, rc))
        break
    table = rows(v.text('client'))
    missing = [1 << e for e in range(1, 24)
               if not [f for f in table if f[0] == str(1 << e) and f[1] == str(iters) and
                       number(f[-1]) > 0]]
    if missing:
        v.fail('%s: no result row for size(s) %s' % (tool, missing))
    v.note('%s: 23 sizes (2 B .. 8 MiB) x %d iterations' % (tool, iters))


def perftest_kill(v, victim):
    """ib_write_bw -R -s 64 KiB, killed -9 on the VICTIM side (client on B, server on A) once
    data flows: its warpnicd, which counted its objects, reclaims them (every /warpnic/ctl
    count and active_qps back to 0); the survivor learns its peer is gone and exits non-zero
    by itself within 20 s, after which its warpnicd is clean too; a fresh run passes."""
    v.need('ib_write_bw')
    big = ['ib_write_bw', '-R', '-s', '65536', '-n', '1000000']
    srv = v.start_on('a', big, 'server')
    if not v.wait_server():
        v.fail('ib_write_bw server is not listening')
    cli = v.start_on('b', big + [v.a_ip], 'client')

    def flowing():
        if cli.poll() is not None:
            return True, -1
        n = v.pair.value('b', '/warpnic/dp/stats', 'tx_fpdus')
        return n >= 5000, n
    ok, n = poll(flowing, 30, 0.1)
    if n == -1:
        v.fail('ib_write_bw client ended before it was killed')
    if not ok:
        v.fail('no data flowing after 30 s (%d FPDUs sent by B)' % n)
    dead, survivor = ('b', 'a') if victim == 'client' else ('a', 'b')
    vp, sp = (cli, srv) if victim == 'client' else (srv, cli)
    held = {k: v.pair.objects(dead)[k] for k in ('clients', 'qps', 'mrs')}
    if not all(held.values()):
        v.fail('warpnicd %s holds no objects of the %s: %s' % (dead, victim, held))
    v.note('data flowing (%d FPDUs sent by B), warpnicd %s holds %s; kill -9 the %s' %
           (n, dead, held, victim))
    vp.send_signal(signal.SIGKILL)
    vp.wait()
    if not v.wait_zero(dead):
        v.fail('warpnicd %s still holds objects of the killed %s' % (dead, victim))
    rc = v.wait(sp, 20)
    if rc is None:
        v.fail('surviving ib_write_bw (%s) still running 20 s after its peer died' % survivor)
    if rc == 0:
        v.fail('surviving ib_write_bw (%s) reported success over a dead peer' % survivor)
    if not v.wait_zero(survivor):
        v.fail('warpnicd %s still holds objects of the surviving process' % survivor)
    v.note('surviving ib_write_bw exited (%d), warpnicd %s reclaimed its objects' %
           (rc, survivor))
    small = ['ib_write_bw', '-R', '-s', '65536', '-n', '500']
    srv2 = v.start_on('a', small, 'server2')
    if not v.wait_server():
        v.fail('second ib_write_bw server is not listening')
    if v.on('b', small + [v.a_ip], 'client2') != 0:
        v.fail('second ib_write_bw client failed')
    if v.wait(srv2, 20) != 0:
        v.fail('second ib_write_bw server failed')
    if not [f for f in rows(v.text('client2'), 65536) if f[1] == '500' and number(f[3]) > 0]:
        v.fail('second ib_write_bw printed no result')
    if not (v.wait_zero('a') and v.wait_zero('b')):
        v.fail('objects left after the second run')


def idle_stats(v, node):
    return v.pair.counters[node].values('/warpnic/dp/stats', [
        'idle_sleeps', 'wake_bell', 'wake_rx', 'wake_timer', 'loops'])


def idle_lat(v, name, tool, iters, extra=()):
    """TOOL's server on A and client on B, each pinned to its daemon's CPU (A's lcore on CPU
    0, B's on 1 mod nproc), both exit 0 with a result row for 8 B x ITERS."""
    cpu_b = str(1 % os.cpu_count())
    args = [tool, '-R', '-s', '8', '-n', str(iters)] + list(extra)
    srv = v.start_on('a', ['taskset', '-c', '0'] + args, name + '_server')
    if not v.wait_server():
        v.fail('%s: %s server is not listening' % (name, tool))
    rc = v.on('b', ['taskset', '-c', cpu_b] + args + [v.a_ip], name + '_client')
    if rc != 0:
        v.fail('%s: %s client exit status %d' % (name, tool, rc))
    rc = v.wait(srv, 60)
    if rc != 0:
        v.fail('%s: %s server exit status %s' % (name, tool, rc))
    if not [f for f in rows(v.text(name + '_client'), 8) if f[1] == str(iters) and
            number(f[-1]) > 0]:
        v.fail('%s: no result row for 8 B x %d' % (name, iters))


def idle_wake(v, iters):
    """--idle sleep (the default): ib_write_lat -s 8 completes, and the lcores slept and were
    woken by their wake-up sources (idle_sleeps, wake_bell: a client posted or the control
    thread queued a message while the lcore slept; wake_rx: the port queue's Rx interrupt);
    then ib_send_lat -e (completion channel) completes too. Breaks if a lost wake-up hangs a
    transfer, or the lcores only wake on their timeout. Counters only, never timing."""
    v.need('ib_write_lat', 'ib_send_lat', 'taskset')
    idle_lat(v, 'sleep', 'ib_write_lat', iters)
    a, b = idle_stats(v, 'a'), idle_stats(v, 'b')
    v.note('A: %s; B: %s' % (a, b))
    if not (a['idle_sleeps'] > 0 and b['idle_sleeps'] > 0):
        v.fail('--idle sleep: an lcore never slept')
    if a['wake_bell'] + b['wake_bell'] <= 0:
        v.fail('--idle sleep: no lcore was woken by its doorbell')
    if a['wake_rx'] + b['wake_rx'] <= 0:
        v.fail('--idle sleep: no lcore was woken by an Rx interrupt')
    idle_lat(v, 'events', 'ib_send_lat', iters, ['-e'])


def idle_poll(v):
    """--idle poll: the lcores keep looping and never sleep, idle for a second (no traffic:
    with both CPUs of a 2-core machine taken by polling lcores, connection setup through the
    starved control threads fails now and then; --idle poll is for dedicated cores)."""
    l0 = idle_stats(v, 'a')['loops']
    import time
    time.sleep(1)
    a, b = idle_stats(v, 'a'), idle_stats(v, 'b')
    v.note('--idle poll: A looped %d -> %d, idle_sleeps A %d, B %d' % (
        l0, a['loops'], a['idle_sleeps'], b['idle_sleeps']))
    if a['loops'] <= l0:
        v.fail('--idle poll: A\'s lcore does not loop')
    if a['idle_sleeps'] or b['idle_sleeps']:
        v.fail('--idle poll: an lcore slept (%d, %d)' % (a['idle_sleeps'], b['idle_sleeps']))


def synflood(v, syns):
    """SYNS spoofed SYNs (test/interop/kpeer.py synflood, a raw socket on the kernel's side of
    B's veth, 2000 a second) at A's rping listener: A keeps no more half-open connections
    than its SYN backlog (max-conns / 4) and answers the rest with SYN cookies (RFC 4987); an
    rping started during the flood and one after it verify 50 rounds each; the persistent
    server and both control sockets still serve. Counters only (A's /warpnic/dp/tcp)."""
    v.need('rping', 'ip')
    ns, ifc = v.pair.env.get('WN_B_NETNS'), v.pair.env.get('WN_B_IFACE')
    if not ns:
        v.fail('no af_packet namespaces')
    for cmd in (['ip', '-n', ns, 'addr', 'add', '198.19.0.9/24', 'dev', ifc],
                ['ip', '-n', ns, 'link', 'set', ifc, 'up']):
        if subprocess.run(cmd, capture_output=True).returncode != 0:
            v.fail('cannot address the kernel\'s side of B\'s link')
    args = ['-a', v.a_ip, '-v', '-V', '-C', '50', '-S', '100']
    srv = v.start_on('a', ['rping', '-s', '-P'] + args, 'rping_server')
    if not v.wait_server():
        v.fail('rping server is not listening')
    secs = (syns + 1999) // 2000
    flood_out = open(v.out('flood'), 'w')
    flood = subprocess.Popen(['ip', 'netns', 'exec', ns, 'timeout', str(secs + 20),
                              sys.executable, os.path.join(TOP, 'test', 'interop', 'kpeer.py'),
                              'synflood', v.a_ip, '7174', str(secs), '2000'],
                             stdout=flood_out, stderr=subprocess.STDOUT)
    flood_out.close()
    v.bg.append(flood)
    import time
    time.sleep(1)
    rc = v.on('b', ['rping', '-c'] + args, 'rping_during')
    if rc != 0:
        v.fail('an rping during the flood failed (exit %d)' % rc)
    if v.wait(flood, secs + 30) != 0:
        v.fail('the flood did not run')
    # kpeer.py's report: "syns N ..."
    sent = 0
    for line in v.text('flood').splitlines():
        f = line.split()
        if len(f) > 1 and f[0] == 'syns':
            sent = int(f[1])
    if sent < syns:
        v.fail('the flood sent %d SYNs, not %d' % (sent, syns))
    t = v.pair.tel('a', '/warpnic/dp/tcp')
    backlog, cookies, conns = t['rx_drop_backlog'], t['syncookies_sent'], t['conns']
    v.note('A: %d SYNs; over a full backlog %d, SYN cookies sent %d, TCP conns %d' %
           (sent, backlog, cookies, conns))
    if conns > 512:
        v.fail('A keeps %d TCP connections after %d SYNs' % (conns, sent))
    if not (backlog > 0 and cookies > 0):
        v.fail('the flood never filled A\'s SYN backlog (backlog drops %d, cookies %d)' %
               (backlog, cookies))
    rc = v.on('b', ['rping', '-c'] + args, 'rping_after')
    if rc != 0:
        v.fail('an rping after the flood failed (exit %d)' % rc)
    for f in ('rping_during', 'rping_after'):
        if v.text(f).count('ping data: rdma-ping-') != 50:
            v.fail('%s: not 50 rounds' % f)
    if srv.poll() is not None:
        v.fail('the persistent rping server exited')
    if v.on('a', ['ibv_devinfo'], 'devinfo', 30) != 0:
        v.fail('A\'s control socket does not serve ibv_devinfo')


RUNS = {'perftest': perftest, 'perftest_kill': perftest_kill, 'idle_wake': idle_wake,
        'idle_poll': idle_poll, 'synflood': synflood}
SCTP = 'sctp'
POLL = ('--a-opt', '--idle', '--a-opt', 'poll', '--b-opt', '--idle', '--b-opt', 'poll')

# 20 iterations per size (~320 MiB per bw run; 10 ping-pongs per size for lat): ~20 s each on
# a 2-core machine at load average 16
ROWS = [Row(t, 'perftest', tool=t, iters=n) for t, n in (
    ('ib_write_bw', 20), ('ib_read_bw', 20), ('ib_send_bw', 20), ('ib_write_lat', 10),
    ('ib_read_lat', 10), ('ib_send_lat', 10))] + [
    Row('kill_perftest_client', 'perftest_kill', victim='client'),
    Row('kill_perftest_server', 'perftest_kill', victim='server'),
    Row('idle_wake', 'idle_wake', iters=300),
    Row('idle_poll', 'idle_poll', pair=POLL),
] + [Row('sctp_' + t, 'perftest', llp=SCTP, tool=t, iters=10) for t in (
    'ib_write_bw', 'ib_read_bw', 'ib_send_bw', 'ib_write_lat', 'ib_read_lat', 'ib_send_lat')
] + [
    # 10 000 spoofed SYNs at A's rping listener over af_packet; A holds 2048 connections
    # (a SYN backlog of 512) so that the flood overflows it
    Row('synflood', 'synflood', pair=AF_PACKET + ('--a-opt', '--max-conns', '--a-opt', '2048'),
        syns=10000),
]


@pytest.mark.parametrize('row', [pytest.param(r, id=r.name) for r in ROWS])
def test_verbs(request, build, pairs, row):
    v = Verbs(request, build, pairs, pair=row.pair, llp=row.llp)
    v.start()
    try:
        RUNS[row.run](v, **row.args)
        if not v.pair.alive():
            v.fail('a warpnicd died')
        v.llp_check()
    except BaseException:
        pairs.release(judge=False)
        raise
    v.finish()
