# SPDX-License-Identifier: BSD-3-Clause
"""Unmodified Debian RDMA tools on the shims against one warpnicd without a dataplane port
(net_null0, 198.18.0.1), and the shims' ABI against the installed rdma-core. Breaks if the
shims stop exporting a symbol a Debian binary imports (BIND_NOW load fails), the device is
not reported as an iWARP RNIC with an active Ethernet port and IPv4-mapped GID 0, rdma_cm,
rsockets or the extended verbs within one instance break (cm_loop, rs_loop, qpx_ops), or an
entry point an RNIC cannot serve stops failing cleanly (abi_calls). warpnicd runs without
the shim directory on LD_LIBRARY_PATH (its DPDK mlx5 PMD needs the real libmlx5)."""
import glob
import os
import re
import shutil
import subprocess

import pytest

from wntest.check import poll
from wntest.pair import WN_RUN

IP = '198.18.0.1'
# what fio's libraries, libfabric, perftest and rdma-core's examples import must bind
BINARIES = ['ib_write_bw', 'ib_read_bw', 'ib_send_bw', 'ib_write_lat', 'ib_read_lat',
            'ib_send_lat', 'rping', 'rdma_server', 'rdma_client', 'rstream', 'riostream',
            'ucmatose', 'ibv_rc_pingpong', 'ibv_srq_pingpong', 'ibv_devinfo', 'ibv_devices',
            'fio', 'qperf', 'fi_info', 'fi_pingpong']
# the shims export more (their own WARPNIC_* nodes); the stand-ins nothing more
LIBS = ['verbs/libibverbs.so.1', 'rdmacm/librdmacm.so.1', 'verbs/libmlx5.so.1',
        'verbs/libmlx4.so.1', 'verbs/libefa.so.1', 'verbs/libmana.so.1']


@pytest.fixture(scope='module')
def daemon(build, workdir):
    """One warpnicd on net_null0, its control socket."""
    sock = os.path.join(workdir, 'ctl.sock')
    env = dict(os.environ)
    env.pop('LD_LIBRARY_PATH', None)
    log = open(os.path.join(workdir, 'warpnicd.log'), 'w')
    p = subprocess.Popen([os.path.join(build, 'app', 'warpnicd', 'warpnicd'), '--no-huge',
                          '--no-shconf', '-m', '256', '--no-pci', '-l', '0', '--vdev', 'net_null0',
                          '--log-level=lib.eal:error', '--', '--ip', IP + '/24', '--ctl', sock],
                         stdout=log, stderr=subprocess.STDOUT, env=env)
    log.close()
    if not poll(lambda: (os.path.exists(sock) or p.poll() is not None, None), 60, 0.1)[0] or \
            p.poll() is not None:
        p.kill()
        pytest.fail('warpnicd did not start', pytrace=False)
    yield sock, p
    p.terminate()
    p.wait(30)


def run(build, sock, args, env=None, secs=90):
    r = subprocess.run([WN_RUN, '--shim', '%s/drivers/verbs:%s/drivers/rdmacm' % (build, build),
                        '--ctl', sock] + args, capture_output=True, text=True, timeout=secs,
                       env=dict(os.environ, LD_BIND_NOW='1', **(env or {})))
    return r.returncode, r.stdout + r.stderr


def need(*tools):
    for t in tools:
        if shutil.which(t) is None:
            pytest.fail('missing prerequisite: %s not installed (scripts/setup.sh installs it)'
                        % t, pytrace=False)


def test_devices(build, daemon):
    need('ibv_devices', 'ibv_devinfo')
    rc, out = run(build, daemon[0], ['ibv_devices'])
    assert rc == 0 and re.search(r'^ *wn0 ', out, re.M), out
    rc, out = run(build, daemon[0], ['ibv_devinfo', '-v'])
    assert rc == 0, out
    for pat in (r'hca_id:\s*wn0', r'transport:\s*iWARP', r'state:\s*PORT_ACTIVE',
                r'link_layer:\s*Ethernet', r'max_qp_rd_atom:\s*[1-9]', r'active_mtu:\s*1024',
                r'GID\[ *0\]:\s*0000:0000:0000:0000:0000:ffff:c612:0001'):
        assert re.search(pat, out), 'ibv_devinfo -v lacks /%s/' % pat


def loaded(build, sock, path, preload=None):
    env = {'LD_WARN': '1', 'LD_TRACE_LOADED_OBJECTS': '1'}
    if preload:
        env['LD_PRELOAD'] = preload
    _, out = run(build, sock, ['env'] + ['%s=%s' % kv for kv in env.items()] + [path])
    return out


@pytest.mark.parametrize('binary', BINARIES)
def test_binds(build, daemon, binary):
    """Every Debian binary loads with all symbols bound (BIND_NOW, relocations checked with
    LD_WARN) from the shims, not the system's RDMA libraries."""
    need(binary)
    out = loaded(build, daemon[0], shutil.which(binary))
    assert not re.search(r'not found|undefined symbol|symbol lookup error', out), out
    for line in out.splitlines():
        if re.search(r'lib(ibverbs|rdmacm|mlx5|mlx4|efa|mana)\.so', line):
            assert os.path.join(build, 'drivers') + '/' in line, \
                '%s loads a system RDMA library: %s' % (binary, line)


def test_rspreload_binds(build, daemon):
    """librspreload (rsockets behind an ordinary socket program) preloaded into iperf3."""
    need('iperf3')
    pre = (glob.glob('/usr/lib/*/rsocket/librspreload.so.1') or [None])[0]
    assert pre, 'librspreload (librdmacm1) not installed'
    out = loaded(build, daemon[0], shutil.which('iperf3'), pre)
    assert not re.search(r'not found|undefined symbol|symbol lookup error', out), out


def test_perftest_help(build, daemon):
    for b in ('ib_write_bw', 'ib_read_lat', 'ib_send_bw'):
        need(b)
        _, out = run(build, daemon[0], [b, '--help'])
        assert re.search(r'^Usage:', out, re.M), '%s --help did not run' % b


@pytest.mark.parametrize('prog,args', [('cm_loop', [IP]), ('abi_calls', []),
                                       ('rs_loop', [IP]), ('qpx_ops', [IP])])
def test_program(build, daemon, prog, args):
    """cm_loop (rdma_cm within one instance), abi_calls (what an RNIC cannot serve fails at
    call time as on siw), rs_loop (rsockets), qpx_ops (every ibv_wr_* operation and the
    extended CQ): each exits 0, and warpnicd survives them."""
    path = os.path.join(build, 'test', 'interop', prog)
    assert os.access(path, os.X_OK), '%s not built' % path
    rc, out = run(build, daemon[0], [path] + args)
    assert rc == 0, out[-3000:]
    assert daemon[1].poll() is None, 'warpnicd died'


def exports(path):
    r = subprocess.run(['objdump', '-T', path], capture_output=True, text=True)
    out = set()
    for line in r.stdout.splitlines():
        f = line.split()
        if '*UND*' not in line and len(f) >= 7 and re.match(r'^\(?[A-Z]', f[-2]):
            out.add((f[-2], f[-1]))
    return out


@pytest.mark.parametrize('lib', LIBS)
def test_abi(build, lib):
    """Every (version node, symbol) the installed rdma-core library exports, default or
    compat (objdump -T shows compat versions in parentheses), the shim exports the same
    way: a program linked against the real library would otherwise fail to load (every
    Debian RDMA binary is linked BIND_NOW). No daemon needed."""
    need('objdump', 'ldconfig')
    libdir = os.path.dirname([l.split()[-1] for l in subprocess.run(
        ['ldconfig', '-p'], capture_output=True, text=True).stdout.splitlines()
        if 'libibverbs.so.1 ' in l][0])
    sys_lib = os.path.join(libdir, os.path.basename(lib))
    ours = os.path.join(build, 'drivers', lib)
    assert os.path.exists(sys_lib), '%s not installed (scripts/setup.sh)' % sys_lib
    assert os.path.exists(ours), '%s not built' % ours
    want, got = exports(sys_lib), exports(ours)
    assert want, 'objdump found no exports in %s' % sys_lib
    assert sorted(want - got) == [], '%s lacks exports of %s' % (lib, sys_lib)
    if not lib.startswith(('verbs/libibverbs', 'rdmacm/')):
        assert sorted(got - want) == [], 'the stand-in %s exports more than %s' % (lib, sys_lib)


def test_dev_limits(build, workdir):
    """Every limit the device advertises is reachable (dev_limits.c creates each object at its
    maximum, by count and by size), on a warpnicd of its own with a smaller region table and
    MR size (--max-mrs 1024 --max-mr-size 64: each deregistration waits for the dataplane's
    grace period and DONE, so the run stays short) and fewer connections (--max-conns 4096:
    max_qp follows them, max_cq is twice that, and one process maps a ring per CQ and QP, more
    than vm.max_map_count allows at the default 65,536); the limits are the daemon's, whatever
    they are set to; then the daemon has reclaimed everything (/warpnic/ctl: no object left)."""
    from wntest import tel
    prog = os.path.join(build, 'test', 'interop', 'dev_limits')
    assert os.access(prog, os.X_OK), '%s not built' % prog
    sock = os.path.join(workdir, 'limits.sock')
    prefix = 'wn-limits-%d' % os.getpid()
    env = dict(os.environ)
    env.pop('LD_LIBRARY_PATH', None)
    log = open(os.path.join(workdir, 'limits.log'), 'w')
    p = subprocess.Popen([os.path.join(build, 'app', 'warpnicd', 'warpnicd'), '--no-huge', '-m',
                          '256', '--no-pci', '-l', '0', '--file-prefix', prefix, '--vdev',
                          'net_null0,no-rx=1', '--log-level=lib.eal:error', '--', '--ip',
                          '198.18.0.1/24', '--ctl', sock, '--max-mrs', '1024', '--max-mr-size',
                          '64', '--max-conns', '4096'],
                         stdout=log, stderr=subprocess.STDOUT, env=env)
    log.close()
    try:
        assert poll(lambda: (os.path.exists(sock) or p.poll() is not None, None), 60, 0.1)[0] \
            and p.poll() is None, 'warpnicd did not start'
        rc, out = run(build, sock, [prog], secs=240)
        assert rc == 0, 'dev_limits: ' + out[-3000:]
        keys = ('clients', 'pds', 'mrs', 'mws', 'cqs', 'srqs', 'qps')
        sock_tel = '/var/run/dpdk/%s/dpdk_telemetry.v2' % prefix
        # the gone client's objects go after the dataplane's grace periods
        ok, v = poll(lambda: (lambda d: (not any(d.values()), d))(
            {k: tel.query(sock_tel, '/warpnic/ctl').get(k, 0) for k in keys}), 60)
        assert ok, 'objects left after the program: %s' % v
        assert p.poll() is None, 'warpnicd died'
    finally:
        p.terminate()
        p.wait(30)
