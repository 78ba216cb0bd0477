# SPDX-License-Identifier: BSD-3-Clause
"""The one-command start on one host, as a user runs it: scripts/warpnic-up starts one
warpnicd with no NIC, no peer and no hugepages, its address also on a kernel interface; then,
through the shim on that one host: rping (data verified), ib_write_bw and ib_write_lat
(perftest over rdma_cm), qperf -cm1 (a TCP side channel to the device's address) and
fi_pingpong -p verbs (libfabric finds the device with getifaddrs). Each program's own
verdict counts; warpnic-up --stop removes the interface and the socket. meson runs this
module in a private network namespace (unshare -n), with its own socket and instance name."""
import json
import os
import subprocess
import time

import pytest

from wntest.pair import TOP, WN_RUN
from wntest.verbs import number, rows

A = '198.18.98.1'


@pytest.fixture(scope='module')
def local(build, workdir):
    """warpnic-up's command line (a function of its extra options) and the run prefix."""
    name = 'wntest%d' % os.getpid()
    sock = os.path.join(workdir, 'ctl.sock')

    def up(*extra):
        return subprocess.run([os.path.join(TOP, 'scripts', 'warpnic-up'), '--name', name,
                               '--ctl', sock, '--netdev', 'wnl0', '--ip', A + '/24'] +
                              list(extra), capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, WN_BUILD=build))
    subprocess.run(['ip', 'link', 'set', 'lo', 'up'], capture_output=True)
    r = up()
    if r.returncode != 0:
        pytest.fail('warpnic-up failed: %s%s' % (r.stdout, r.stderr), pytrace=False)
    yield up, [WN_RUN, '--ctl', sock], workdir
    up('--stop')


def pair(local, tag, srv, cli, secs=60):
    """A server in the background and its client: both exit 0 (the server within secs of
    its client)."""
    _, run, d = local
    with open(os.path.join(d, tag + '.srv'), 'w') as f:
        s = subprocess.Popen(run + srv, stdout=f, stderr=subprocess.STDOUT)
    time.sleep(1)
    try:
        c = subprocess.run(run + cli, capture_output=True, text=True, timeout=secs)
        assert c.returncode == 0, '%s client: %s' % (tag, (c.stdout + c.stderr)[-1500:])
        assert s.wait(timeout=secs) == 0, '%s server failed' % tag
    finally:
        if s.poll() is None:
            s.kill()
            s.wait()
    return c.stdout


def test_up(local):
    up, run, _ = local
    assert up('--status').returncode == 0, 'warpnic-up --status: not running after start'
    addrs = json.loads(subprocess.run(['ip', '-j', 'addr', 'show', 'wnl0'], capture_output=True,
                                      text=True).stdout or '[]')
    assert any(a.get('local') == A and a.get('prefixlen') == 24
               for i in addrs for a in i.get('addr_info', [])), \
        'the device\'s address is not on wnl0: %s' % addrs
    r = subprocess.run(run + ['ibv_devinfo'], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_rping(local):
    pair(local, 'rping', ['rping', '-s', '-a', A, '-V', '-C', '20'],
         ['rping', '-c', '-a', A, '-V', '-C', '20'])


def test_ib_write_bw(local):
    out = pair(local, 'ib_write_bw', ['ib_write_bw', '-R', '-s', '65536', '-n', '1000'],
               ['ib_write_bw', '-R', '-s', '65536', '-n', '1000', A])
    assert rows(out, 65536), 'ib_write_bw printed no result: ' + out


def test_ib_write_lat(local):
    pair(local, 'ib_write_lat', ['ib_write_lat', '-R', '-s', '8', '-n', '500'],
         ['ib_write_lat', '-R', '-s', '8', '-n', '500', A])


def test_qperf(local):
    """qperf's server runs until killed: the client's verdict and figures count."""
    _, run, d = local
    with open(os.path.join(d, 'qperf.srv'), 'w') as f:
        s = subprocess.Popen(run + ['qperf'], stdout=f, stderr=subprocess.STDOUT)
    time.sleep(1)
    try:
        c = subprocess.run(run + ['qperf', A, '-cm1', '-t', '1', '-m', '4096', 'rc_lat', 'rc_bw'],
                           capture_output=True, text=True, timeout=120)
    finally:
        s.kill()
        s.wait()
    assert c.returncode == 0, 'qperf -cm1 (TCP side channel to %s): %s' % (A, c.stdout + c.stderr)
    assert 'latency' in c.stdout and 'bw' in c.stdout, 'qperf -cm1: no figures: ' + c.stdout


def test_fi_pingpong(local):
    pair(local, 'fi_pingpong', ['fi_pingpong', '-p', 'verbs', '-e', 'msg', '-S', '65536', '-I',
                                '20'],
         ['fi_pingpong', '-p', 'verbs', '-e', 'msg', '-S', '65536', '-I', '20', A])


def test_stop(local):
    """Last: warpnic-up --stop removes the interface and the control socket."""
    up, run, d = local
    assert up('--stop').returncode == 0, 'warpnic-up --stop'
    assert subprocess.run(['ip', 'link', 'show', 'wnl0'], capture_output=True).returncode != 0, \
        'wnl0 still there after --stop'
    assert not os.path.exists(run[2]), 'the control socket is still there after --stop'
