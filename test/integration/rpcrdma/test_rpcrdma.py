# SPDX-License-Identifier: BSD-3-Clause
"""RPC-over-RDMA v1 (lib/rpcrdma, issue 16) end to end between two warpnicd: the sample blob
service, the NFSv3 tool against our NFS server, malformed peers on both sides. Programs run
through the shims; rows of one pair configuration share a pair. The verdicts: exit statuses,
the data compared octet for octet, and the counters the programs print at their end
("server: calls N ... disconnects N ...", lib/rpcrdma's wn_rpcrdma_info)."""
import filecmp
import os
import re
import shutil
import signal
import tempfile

import pytest

from wntest.verbs import Verbs

IMPAIR_BYTES = os.environ.get('WN_RPC_IMPAIR_BYTES', '64m')


def octets(s):
    n = int(s.rstrip('kKmMgG'))
    return n << {'k': 10, 'm': 20, 'g': 30}.get(s[-1].lower(), 0)


def counters(text, who):
    """The counters of a "WHO: key value key value ..." line (None when absent)."""
    for line in text.splitlines():
        if line.startswith(who + ': '):
            f = line[len(who) + 2:].split()
            return {k: int(v) if re.fullmatch(r'[0-9]+', v) else v
                    for k, v in zip(f[::2], f[1::2])}
    return None


class Row:
    def __init__(self, name, run, impair=None, **args):
        self.name, self.run, self.impair, self.args = name, run, impair, args

    def pair_key(self, params):
        return self.impair


def program(v, name):
    p = os.path.join(v.build, 'app', 'bin', name)
    if not os.access(p, os.X_OK):
        v.fail('%s not built (needs libtirpc-dev, rpcsvc-proto)' % name)
    return p


def stop_server(v, srv, name, who):
    """SIGINT: the server prints its counters and exits 0."""
    srv.send_signal(signal.SIGINT)
    rc = v.wait(srv, 60)
    if rc != 0:
        v.fail('%s: exit status %s after SIGINT' % (name, rc))
    c = counters(v.text(name), who)
    if c is None:
        v.fail('%s printed no counters' % name)
    v.note('%s: %s' % (who, c))
    return c


def blob(v, sopts, copts, impaired=False):
    """wn-rpc-blob --server on A, --client --test on B: NULL calls, WRITE (read chunks), READ
    back (write chunks) compared octet for octet, LIST, ECHO as a Short message, a Long Call
    with a reply chunk, a Long Call whose long reply comes by read chunk (RDMA_DONE), RPC
    errors, REMOVE. The client passes; the server closed no connection (disconnects 0). The
    store holds the test's blob (registered memory is copied into warpnicd's memfd: small on
    a shared machine)."""
    b = program(v, 'wn-rpc-blob')
    so = ['--store-mb', '16', '--blob-mb', '12'] + sopts
    if impaired:
        mb = octets(IMPAIR_BYTES) >> 20
        so = ['--store-mb', str(mb + 8), '--blob-mb', str(mb + 4)]
        copts = ['--size', IMPAIR_BYTES]
    srv = v.start_on('a', [b, '--server', v.a_ip] + so, 'server')
    if not v.wait_server(20):
        v.fail('blob server did not listen')
    v.note('client: %s' % ' '.join(copts))
    rc = v.on('b', [b, '--client', v.a_ip, '--test'] + copts, 'client', 240)
    s = stop_server(v, srv, 'server', 'server')
    if rc != 0:
        v.fail('client: exit status %d' % rc)
    if s.get('disconnects') != 0:
        v.fail('server closed a connection: %s' % s)
    return s, counters(v.text('client'), 'client'), v.text('client')


def blob_case(v, case):
    opts = {'default': ([], ['--size', '8m']),
            'linux': (['--inline', '4096', '--credits', '64'],
                      ['--inline', '4096', '--credits', '128', '--size', '8m']),
            'pool': (['--reg', 'pool'], ['--reg', 'pool', '--no-reg', '--size', '4m', '--io',
                                         '256k']),
            'nocp': (['--no-cp', '--no-read-reply'], ['--no-cp', '--no-read-reply', '--size',
                                                      '2m', '--io', '100000']),
            'mixed': (['--inline-recv', '1024', '--inline-send', '4096'],
                      ['--inline-send', '4096', '--inline-recv', '2048', '--size', '2m']),
            'credits': (['--credits', '4'], ['--credits', '32', '--depth', '16', '--size', '4m',
                                             '--io', '64k']),
            'impaired': ([], [])}[case]
    s, c, text = blob(v, opts[0], opts[1], case == 'impaired')
    if case == 'mixed':
        # each side keeps to the other's receive size (RFC 8797): call 1024, reply 2048
        con = [l for l in text.splitlines() if l.startswith('connected:')]
        if not con or ' inline call 1024 reply 2048,' not in con[0]:
            v.fail('thresholds not negotiated to call 1024 reply 2048: %s' % con)
    if case == 'credits':
        # 16 calls outstanding against a grant of 4: never more than 4 in flight
        if c is None or c.get('credits') != 4:
            v.fail('client was not granted 4 credits: %s' % c)
        for who, x in (('client', c), ('server', s)):
            if not 1 <= x.get('max_outstanding', 0) <= 4:
                v.fail('%s: max_outstanding %s outside 1..4' % (who, x.get('max_outstanding')))


def nfs_case(v, case):
    """wn-rpc-nfsd on A exports a directory (MOUNT over kernel TCP on 127.0.0.1, NFS over
    RDMA); wn-rpc-nfs on B: NULL, FSINFO, LOOKUP, GETATTR (existing and missing), WRITE of
    SIZE random octets (read chunks, FILE_SYNC), READ (write chunks), VERIFY; both files
    identical octet for octet, the data by the chunks it should take, the server closed no
    connection."""
    nfs, nfsd = program(v, 'wn-rpc-nfs'), program(v, 'wn-rpc-nfsd')
    sopts, copts = {'linux': (['--inline', '4096', '--credits', '64'],
                              ['--inline', '4096', '--credits', '128'])}.get(case, ([], []))
    size = octets(IMPAIR_BYTES if case == 'impaired' else '8m')
    # the export on tmpfs when there is one: FILE_SYNC writes fdatasync every call
    exp = tempfile.mkdtemp(prefix='wn-nfs-export.', dir='/dev/shm' if os.path.isdir(
        '/dev/shm') else None)
    try:
        os.makedirs(os.path.join(exp, 'dir'))
        with open(os.path.join(exp, 'dir', 'data'), 'wb') as f:
            f.write(os.urandom(size))
        data_in = os.path.join(v.d, 'in')
        with open(data_in, 'wb') as f:
            f.write(os.urandom(size))
        open(os.path.join(exp, 'dir', 'target'), 'wb').close()
        srv = v.start_on('a', [nfsd, '--addr', v.a_ip, '--export', exp, '--mount-port', '0'] +
                         sopts, 'nfsd')
        if not v.wait_server(20):
            v.fail('wn-rpc-nfsd did not listen')
        # the port the kernel gave its MOUNT service, from its start-up line
        from wntest.check import poll
        _, m = poll(lambda: (lambda m: (m is not None, m))(re.search(
            r'MOUNT over TCP on [0-9.]+ port ([0-9]+)', v.text('nfsd'))), 10, 0.1)
        if m is None:
            v.fail('no MOUNT port in the server\'s output')

        def tool(name, *args):
            return v.on('b', [nfs, '--server', v.a_ip, '--export', exp, '--mount', '127.0.0.1',
                              '--mount-port', m.group(1)] + copts + ['--stats'] + list(args),
                        name, 240)
        if tool('null', 'null') != 0 or 'null: ok' not in v.text('null'):
            v.fail('NULL')
        if tool('fsinfo', 'fsinfo') != 0 or 'rtmax 1048576' not in v.text('fsinfo'):
            v.fail('FSINFO')
        if tool('lookup', 'lookup', 'dir/data') != 0 or \
                not re.search(r'handle [0-9a-f]{32}', v.text('lookup')):
            v.fail('LOOKUP')
        if tool('getattr', 'getattr', 'dir/data') != 0 or \
                not re.search(r'type 1 .* size %d ' % size, v.text('getattr')):
            v.fail('GETATTR')
        if tool('missing', 'getattr', 'dir/missing') == 0:
            v.fail('GETATTR of a missing file succeeded')
        if 'no such file' not in v.text('missing'):
            v.fail('LOOKUP of a missing name: not NFS3ERR_NOENT')
        if tool('write', 'write', 'dir/target', data_in) != 0:
            v.fail('WRITE')
        if not filecmp.cmp(data_in, os.path.join(exp, 'dir', 'target'), shallow=False):
            v.fail('the server\'s file differs from what was written')
        out = os.path.join(v.d, 'read.data')
        if tool('read', 'read', 'dir/data', out) != 0:
            v.fail('READ')
        if not filecmp.cmp(os.path.join(exp, 'dir', 'data'), out, shallow=False):
            v.fail('what was read differs from the server\'s file')
        if tool('verify', 'verify', 'dir/target', data_in) != 0 or \
                'identical' not in v.text('verify'):
            v.fail('VERIFY')
        if not (counters(v.text('write'), 'transport') or {}).get('read_chunks'):
            v.fail('WRITE data did not go by read chunk')
        if not (counters(v.text('read'), 'transport') or {}).get('write_chunks'):
            v.fail('READ data did not come by write chunk')
        s = stop_server(v, srv, 'nfsd', 'nfsd')
        if s.get('disconnects') != 0:
            v.fail('server closed a connection: %s' % s)
    finally:
        shutil.rmtree(exp, ignore_errors=True)


def badpeer(v):
    """rpc_badpeer --attack (B) against wn-rpc-blob --server --credits 2 (A): every malformed
    header gets RDMA_ERROR or silence (RFC 8166 §4.5), invalid chunks and a credit overrun
    close their connection, RDMA_MSGP calls are answered intact; the same server still
    passes wn-rpc-blob --test; then rpc_badpeer --hostile (A) against lib/rpcrdma's client
    (rpc_badpeer --victim, B). rpc_badpeer.c lists the cases."""
    b = program(v, 'wn-rpc-blob')
    bad = os.path.join(v.build, 'test', 'integration', 'rpcrdma', 'rpc_badpeer')
    if not os.access(bad, os.X_OK):
        v.fail('rpc_badpeer not built')
    srv = v.start_on('a', [b, '--server', v.a_ip, '--credits', '2', '--store-mb', '16',
                           '--blob-mb', '4'], 'server')
    if not v.wait_server(20):
        v.fail('blob server did not listen')
    if v.on('b', [bad, '--attack', v.a_ip], 'attack') != 0:
        v.fail('attack failed')
    if v.on('b', [b, '--client', v.a_ip, '--test', '--size', '1m', '--io', '256k', '--depth',
                  '2', '--credits', '2'], 'client') != 0:
        v.fail('the server does not serve after the attack')
    s = stop_server(v, srv, 'server', 'server')
    if not s.get('disconnects'):
        v.fail('no connection closed for the overrun: %s' % s)
    if s.get('rdma_errors_sent', 0) < 8:
        v.fail('too few RDMA_ERRORs: %s' % s)
    hostile = v.start_on('a', [bad, '--hostile', v.a_ip], 'hostile')
    if not v.wait_server(20):
        v.fail('hostile server did not listen')
    if v.on('b', [bad, '--victim', v.a_ip], 'victim') != 0:
        v.fail('victim failed')
    if v.wait(hostile, 20) != 0:
        v.fail('hostile server did not finish')


RUNS = {'blob': blob_case, 'nfs': nfs_case, 'badpeer': badpeer}
DROP_BLOB, DROP_NFS = 'drop=0.01,seed=5', 'drop=0.01,seed=9'
ROWS = [Row('blob_' + c, 'blob', case=c) for c in (
    'default', 'linux', 'pool', 'nocp', 'mixed', 'credits')] + [
    Row('nfs_default', 'nfs', case='default'), Row('nfs_linux', 'nfs', case='linux'),
    Row('badpeer', 'badpeer'),
    # B's port drops 1 % of frames: WN_RPC_IMPAIR_BYTES (64 MiB) byte-exact
    Row('blob_impaired', 'blob', impair=DROP_BLOB, case='impaired'),
    Row('nfs_impaired', 'nfs', impair=DROP_NFS, case='impaired'),
]


@pytest.mark.parametrize('row', [pytest.param(r, id=r.name) for r in ROWS])
def test_rpcrdma(request, build, pairs, row):
    v = Verbs(request, build, pairs, pair=('--impair', row.impair) if row.impair else ())
    v.start()
    try:
        RUNS[row.run](v, **row.args)
        if not v.pair.alive():
            v.fail('a warpnicd died')
    except BaseException:
        pairs.release(judge=False)
        raise
    v.finish()
