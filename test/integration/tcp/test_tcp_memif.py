# SPDX-License-Identifier: BSD-3-Clause
"""Two wn-tcpapp dataplanes over memif (lib/tcp talking to itself): source -> sink, the sink
checks every octet of the seeded stream (--verify) and both ends report the stream's
sha256, clean and through net_wn_impair (EAL --vdev net_wn_impair0,port=net_memif0,...). It
fails if warpnic TCP does not talk to itself, or does not survive drop, duplication,
reorder or corruption (checksums must catch every corrupted segment: with corruption
towards the source its TCP must catch it too, its local link verifying every sum that is
not a pseudo-header sum). With pcap both ends capture and tshark finds every IPv4 and TCP
checksum good: on memif lib/net leaves TCP sums to "offload" and the capture completes
them. The verdicts: exit statuses and wn-tcpapp's report ("conn I ... bytes N sha256 H",
"sink: ... errors N", "tcp: ... rx_drop_cksum N")."""
import os
import re
import subprocess

import pytest

from wntest import capture as cap
from wntest import proc
from wntest.check import poll


class Row:
    def __init__(self, name, nbytes, impair=None, conns=1, pcap=False):
        self.name, self.bytes, self.impair, self.conns, self.pcap = \
            name, nbytes, impair, conns, pcap


ROWS = [
    Row('clean', 67108864),
    Row('impaired', 4194304, 'drop=0.01,reorder=0.01,dup=0.001,rx_corrupt=0.01,seed=7'),
    Row('delayed', 4194304, 'delay_us=300,reorder=0.05,reorder_gap=8,seed=9'),
    Row('100_conns', 262144, 'drop=0.001,seed=11', 100),
    Row('corrupt', 4194304, 'corrupt=0.02,seed=5'),
    Row('pcap', 4194304, pcap=True),
]


def mem():
    free = 0
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('HugePages_Free'):
                free = int(line.split()[1])
    with open('/proc/mounts') as f:
        huge = 'hugetlbfs' in f.read()
    return ['--in-memory'] if huge and free >= 300 else ['--no-huge', '--no-shconf', '-m', '1024']


def report(text, key):
    """The last "KEY: k v k v ..." line of wn-tcpapp's report as a dictionary (its first
    "KEY:" line may say it listens)."""
    for line in reversed(text.splitlines()):
        if line.startswith(key + ': '):
            f = line[len(key) + 2:].split()
            return dict(zip(f[::2], f[1::2]))
    return {}


def conns(text):
    out = []
    for line in text.splitlines():
        m = re.match(r'^conn .* bytes ([0-9]+) sha256 ([0-9a-f]+)', line)
        if m:
            out.append((int(m.group(1)), m.group(2)))
    return out


@pytest.mark.parametrize('row', [pytest.param(r, id=r.name) for r in ROWS])
def test_tcp_memif(build, workdir, row):
    app = os.path.join(build, 'app', 'bin', 'wn-tcpapp')
    if not os.access(app, os.X_OK):
        pytest.fail('missing prerequisite: wn-tcpapp not built', pytrace=False)
    d = os.path.join(workdir, row.name)
    os.makedirs(d)
    lc_a, lc_b = ('0', '1') if os.cpu_count() >= 2 else ('0', '0')
    sock = os.path.join(d, 'memif.sock')
    vdevs = ['--vdev', 'net_memif0,role=server,socket=' + sock]
    if row.impair:
        vdevs += ['--vdev', 'net_wn_impair0,port=net_memif0,' + row.impair]
    scap = ['--pcap', os.path.join(d, 'sink.pcapng')] if row.pcap else []
    ccap = ['--pcap', os.path.join(d, 'source.pcapng')] if row.pcap else []
    tag = '%d-%s' % (os.getpid(), row.name)
    out = {n: os.path.join(d, n + '.out') for n in ('sink', 'source')}
    # both ends --park (stop polling, keep the port) and are stopped only when both are
    # parked: DPDK 22.11's memif unmaps the rings under a side that still polls when its
    # peer leaves
    sink = subprocess.Popen([app, '-l', lc_a] + mem() + [
        '--no-pci', '--file-prefix', 'wni-%s-s' % tag, '--log-level', 'lib.eal:warning'] +
        vdevs + ['--', '--mode', 'sink', '--ip', '198.18.2.1/24', '--listen', '5001',
                 '--conns', str(row.conns), '--verify', '--timeout', '200', '--park'] + scap,
        stdout=open(out['sink'], 'w'), stderr=subprocess.STDOUT)
    procs = [sink]
    try:
        # the sink's port started and listening (a memif client that meets a server not
        # started yet never connects: DPDK 22.11 does not retry)
        poll(lambda: ('listening' in proc.tail(out['sink'], 1000) or sink.poll() is not None,
                      None), 60, 0.1)
        source = subprocess.Popen([app, '-l', lc_b] + mem() + [
            '--no-pci', '--file-prefix', 'wni-%s-c' % tag, '--log-level', 'lib.eal:warning',
            '--vdev', 'net_memif0,role=client,socket=' + sock, '--', '--mode', 'source',
            '--ip', '198.18.2.2/24', '--connect', '198.18.2.1:5001', '--bytes', str(row.bytes),
            '--conns', str(row.conns), '--timeout', '200', '--park'] + ccap,
            stdout=open(out['source'], 'w'), stderr=subprocess.STDOUT)
        procs.append(source)

        def parked(n, p):
            return p.poll() is not None or 'parked' in proc.tail(out[n], 5).split('\n')
        poll(lambda: (parked('sink', sink) and parked('source', source), None), 500, 0.2)
        rc_c, rc_s = proc.stop(source, 30), proc.stop(sink, 30)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    text = {n: proc.tail(out[n], 1 << 30) for n in out}
    logs = '\n'.join('----- %s\n%s' % (n, proc.tail(out[n], 20)) for n in out)
    assert rc_c == 0, 'source exit status %d\n%s' % (rc_c, logs)
    assert rc_s == 0, 'sink exit status %d (data mismatch, reset or timeout)\n%s' % (rc_s, logs)
    # every connection carries the same seeded stream: one digest and size per side
    sc, kc = conns(text['source']), conns(text['sink'])
    assert len(kc) == row.conns, 'sink finished %d connections, expected %d' % (len(kc), row.conns)
    assert {n for n, _ in kc} == {row.bytes}, 'sink got %s octets per connection' % (
        sorted({n for n, _ in kc}),)
    assert sc and {h for _, h in sc} == {h for _, h in kc} and len({h for _, h in kc}) == 1, \
        'sha256 differs: %s vs %s' % ({h for _, h in sc}, {h for _, h in kc})
    assert report(text['sink'], 'sink').get('errors') == '0', 'sink found octets that differ'
    if row.impair:
        assert report(text['sink'], 'impair'), 'no impairer in the path'
        if 'corrupt' in row.impair:
            assert int(report(text['sink'], 'tcp').get('rx_drop_cksum', 0)) > 0, \
                'no corrupted segment was caught by the TCP checksum'
        if re.search(r'(^|,)corrupt=|tx_corrupt=', row.impair):
            assert int(report(text['source'], 'tcp').get('rx_drop_cksum', 0)) > 0, \
                'no corrupted segment was caught by the source\'s TCP checksum'
    if row.pcap:
        for n in ('sink', 'source'):
            layers = cap.frames(os.path.join(d, n + '.pcapng'), protocols=None,
                                options=('-o', 'tcp.check_checksum:TRUE', '-o',
                                         'ip.check_checksum:TRUE'), display='tcp')
            bad = [i for i, l in enumerate(layers, 1)
                   if cap.value(l, 'tcp.checksum.status') == '0' or
                   cap.value(l, 'ip.checksum.status') == '0']
            assert len(layers) > 100, '%s.pcapng has only %d TCP frames' % (n, len(layers))
            assert not bad, '%s.pcapng: %d of %d frames with a bad checksum' % (
                n, len(bad), len(layers))
