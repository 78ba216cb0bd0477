# SPDX-License-Identifier: BSD-3-Clause
"""Errors a person understands, as a user meets them (the message is the product here):
every command-line and config-file mistake of the table: warpnicd exits 2 (1 for a missing
port) and its message names the option and the form it accepts; no daemon: a program through
the shim sees no device and stderr says once where the shim looked and how to start one; a
live control socket is never taken over (a second warpnicd exits 1 naming the first one's
pid, the first keeps serving), a stale one is replaced; the socket's directory is made, its
mode 0660 or --ctl-mode's, its group rdma where it exists; --netdev leaves a foreign interface alone. warpnicd runs on
net_null without hugepages."""
import grp
import os
import stat
import subprocess

import pytest

from wntest.check import poll
from wntest.pair import WN_RUN

IP = '198.18.99.1/24'
N = [0]


def warpnicd(build):
    return os.path.join(build, 'app', 'warpnicd', 'warpnicd')


def eal(tag):
    N[0] += 1
    return ['--no-huge', '--no-shconf', '-m', '128', '--no-pci', '-l', '0', '--vdev',
            'net_null0,no-rx=1', '--file-prefix', 'wn-err-%d-%s-%d' % (os.getpid(), tag, N[0]),
            '--log-level=lib.eal:error']


def env():
    e = dict(os.environ)
    e.pop('LD_LIBRARY_PATH', None)
    return e


def conf(workdir, name, text):
    p = os.path.join(workdir, name)
    with open(p, 'w') as f:
        f.write(text)
    return p


# (status, words the message must hold, warpnicd options); CONF(n) is a config file
TABLE = [
    (2, ['--ip 198.18.99.1', 'prefix', '198.18.99.1/24'], ['--ip', '198.18.99.1']),
    (2, ['--ip', 'ADDR/PREFIX'], ['--ip', '300.1.2.3/24']),
    (2, ['--ip ADDR/PREFIX'], []),
    (2, ['--mtu', "'99'", '576 to 9000'], ['--ip', IP, '--mtu', '99']),
    (2, ['--mtu', 'needs a value'], ['--ip', IP, '--mtu']),
    (2, ['--idle', "'nap'", 'sleep or poll'], ['--ip', IP, '--idle', 'nap']),
    (2, ['--zero-copy-tx', 'on or off'], ['--ip', IP, '--zero-copy-tx', 'yes']),
    (2, ['--llp', 'mpa or sctp'], ['--ip', IP, '--llp', 'udp']),
    (2, ['--rtr', 'send, write and/or read'], ['--ip', IP, '--rtr', 'send,foo']),
    (2, ['--ctl-mode', "'999'", 'octal'], ['--ip', IP, '--ctl-mode', '999']),
    (2, ['--ctl-group wn-no-such-group', 'no such group'],
     ['--ip', IP, '--ctl-group', 'wn-no-such-group']),
    (2, ['--netdev', '15 characters'], ['--ip', IP, '--netdev', 'wn-name-too-long0']),
    (2, ["unknown option '--bogus'", '--help'], ['--ip', IP, '--bogus']),
    (2, ["unexpected argument 'stray'"], ['--ip', IP, 'stray']),
    (2, ['EAL'], 'EAL'),
    (2, ['bad1.conf:2', 'mtu', '576 to 9000'], ['--config', 'CONF1']),
    (2, ['bad2.conf:2', "unknown option 'frobnicate'"], ['--config', 'CONF2']),
    (2, ['bad3.conf:1', 'needs a value', 'ADDR/PREFIX'], ['--config', 'CONF3']),
    (2, ['none.conf', 'No such file'], ['--config', 'NONE']),
    (1, ['--port 3', 'no such port', '0 net_null0'], ['--ip', IP, '--port', '3']),
]
CONFS = {'CONF1': ('bad1.conf', 'ip 198.18.99.1/24\nmtu 99\n'),
         'CONF2': ('bad2.conf', '# a comment\nfrobnicate 3\n'),
         'CONF3': ('bad3.conf', 'ip\n')}


@pytest.mark.parametrize('status,words,opts', TABLE,
                         ids=['%02d' % i for i in range(1, len(TABLE) + 1)])
def test_mistake(build, workdir, status, words, opts):
    if opts == 'EAL':  # a mistake among the EAL options, before "--"
        args = [warpnicd(build)] + eal('eal') + ['--bogus-eal-option-before-dashes']
    else:
        o = []
        for w in opts:
            if w in CONFS:
                o.append(conf(workdir, *CONFS[w]))
            elif w == 'NONE':
                o.append(os.path.join(workdir, 'none.conf'))
            else:
                o.append(w)
        args = [warpnicd(build)] + eal('opt') + ['--'] + o
    r = subprocess.run(args, capture_output=True, text=True, env=env(), timeout=60)
    assert r.returncode == status, 'exit status %d, expected %d: %s' % (
        r.returncode, status, r.stderr)
    for w in words:
        assert w in r.stderr, 'the message lacks %r: %s' % (w, r.stderr)


def test_no_daemon(workdir):
    """A program through the shim without a daemon: no device, and stderr says once where the
    shim looked and how to start one."""
    nobody = os.path.join(workdir, 'nobody.sock')
    r = subprocess.run([WN_RUN, 'ibv_devinfo'], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, WARPNIC_CTL=nobody))
    out = r.stdout + r.stderr
    assert r.returncode != 0, 'ibv_devinfo without a daemon succeeded'
    assert 'No IB devices found' in out, out
    assert out.count('no warpnicd serves %s' % nobody) == 1, out
    assert 'warpnic-up' in out, 'the message does not say how to start one: ' + out


def start(build, workdir, tag, sock, *opts):
    pidfile = os.path.join(workdir, tag + '.pid')
    log = open(os.path.join(workdir, tag + '.log'), 'w')
    p = subprocess.Popen([warpnicd(build)] + eal(tag) + ['--', '--ip', IP, '--ctl', sock,
                                                         '--pidfile', pidfile] + list(opts),
                         stdout=log, stderr=subprocess.STDOUT, env=env())
    log.close()
    ok, _ = poll(lambda: (os.path.exists(pidfile) and os.path.getsize(pidfile) > 0 or
                          p.poll() is not None, None), 10, 0.1)
    return p if p.poll() is None else None


def test_control_socket(build, workdir):
    """The socket's directory made (0755), the socket 0660; a second warpnicd on a live
    socket exits 1 naming the first one's pid, the first keeps serving; killed, the first
    leaves its socket, which the next one replaces (--ctl-mode 0600)."""
    sock = os.path.join(workdir, 'run', 'deep', 'ctl.sock')
    first = start(build, workdir, 'first', sock)
    assert first, 'warpnicd did not start in a missing directory'
    try:
        assert stat.S_IMODE(os.stat(sock).st_mode) == 0o660
        assert stat.S_IMODE(os.stat(os.path.dirname(sock)).st_mode) == 0o755
        # group rdma where it exists (as rdma-core gives /dev/infiniband), else the daemon's
        try:
            want = grp.getgrnam('rdma').gr_gid
        except KeyError:
            want = os.getgid()
        assert os.stat(sock).st_gid == want, 'control socket group %d, expected %d' % (
            os.stat(sock).st_gid, want)
        r = subprocess.run([warpnicd(build)] + eal('second') + ['--', '--ip', IP, '--ctl', sock],
                           capture_output=True, text=True, env=env(), timeout=60)
        assert r.returncode == 1, 'second warpnicd on a live socket: exit status %d' % (
            r.returncode)
        assert 'another process serves it (pid %d' % first.pid in r.stdout + r.stderr, \
            r.stdout + r.stderr
        r = subprocess.run([WN_RUN, 'ibv_devinfo'], capture_output=True, text=True,
                           timeout=60, env=dict(os.environ, WARPNIC_CTL=sock))
        assert r.returncode == 0, 'the first warpnicd no longer serves: ' + r.stderr
    finally:
        first.kill()
        first.wait()
    assert stat.S_ISSOCK(os.stat(sock).st_mode), 'a killed warpnicd left no socket file'
    third = start(build, workdir, 'third', sock, '--ctl-mode', '0600')
    assert third, 'warpnicd did not replace a stale socket'
    try:
        assert stat.S_IMODE(os.stat(sock).st_mode) == 0o600
    finally:
        third.terminate()
        third.wait(30)


def test_foreign_netdev(build, workdir):
    """--netdev NAME when the host has an interface NAME that is not warpnicd's: exit 1, the
    interface kept (in a private network namespace: nothing of the host's is touched)."""
    script = ('ip link add wnerr0 type dummy 2>/dev/null || '
              'ip link add wnerr0 type veth peer name wnerr0p; '
              '"$0" "$@" --netdev wnerr0; echo "rc=$?"; ip -br link show wnerr0')
    r = subprocess.run(['unshare', '-n', 'sh', '-c', script, warpnicd(build)] + eal('netdev') +
                       ['--', '--ip', IP, '--ctl', os.path.join(workdir, 'nd.sock')],
                       capture_output=True, text=True, env=env(), timeout=60)
    out = r.stdout + r.stderr
    assert 'rc=1' in out.split(), '--netdev on a foreign interface: not exit status 1: ' + out
    assert 'netdev wnerr0: the host has an interface of that name' in out, out
    assert any(l.startswith('wnerr0') for l in r.stdout.splitlines()), \
        '--netdev removed an interface that was not its own'
