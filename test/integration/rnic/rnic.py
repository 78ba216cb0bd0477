# SPDX-License-Identifier: BSD-3-Clause
"""The iWARP integration cases between two warpnicd (issue 4): rnic_it (verbs and rdma_cm
on the shims) as server on A (198.19.0.1) and client on B, a case being one row:

    Case(NAME, pair=WN-PAIR OPTIONS, run=RNIC_IT ARGS, checks=[CHECK...], zc='-'|'zc'|'zc0',
         ref=False|True)

pair   scripts/wn-pair.sh start options (always --no-huge); PCAP stands for the case's
       capture directory; '-- --llp sctp' has both warpnicd carry every connection as DDP
       over SCTP (RFC 5043). Consecutive cases with the same options share one pair.
run    rnic_it's arguments, after any NAME=VALUE words (the programs' environment, e.g.
       WARPNIC_LLP=sctp), given to its server and its client, both must exit 0 (TEL_B stands
       for B's telemetry socket, MIB for $WN_RNIC_MIB, default 4: scripts/soak.sh runs the
       fault matrix with 256); or a mode first:
         @kill      a client streaming Writes and Reads is killed -9 mid-transfer while B
                    holds its objects, then a second client runs "basic" against the server
         @flap MS   an eighth into the Writes (xfer's first operation) B's fault injector
                    drops every frame either way for MS milliseconds
         @mangle    B's fault injector mangles B's next TCP segment with data (a payload
                    octet flipped under a good TCP checksum)
         @restart   the args run, A is stopped and started again, the args run once more
zc     'zc' or 'zc0': the case runs again as zc_NAME with zero-copy transmit on for every
       size (wn-pair.sh --zero-copy all); 'zc' also proves FPDUs went zero-copy ('zc0': the
       case moves no payload).
ref    True: the case runs again as ref_NAME with registered memory sent by reference
       (wn-pair.sh --zero-copy ref, warpnicd --tx-staged off) and proves FPDUs went so.
       Every other case runs with warpnicd's default transmit (staged); WN_RNIC_ZC=ref runs
       them all by reference, WN_RNIC_ZC=on zero-copy.

After the run, while the pair is up: both warpnicd are alive and counted no MPA CRC error
(unless a check reads mpa_crc_errors). Then the checks, in order, all from counters and
exit statuses (no log line decides a verdict); telemetry counters are this case's growth
(wntest.tel), each check waits up to 10 s for telemetry to show it. The last case on a pair
stops it: both warpnicd must exit 0.
"""
import json
import os
import re
import shlex
import time

import pytest

from wntest import capture, proc
from wntest.check import compare, poll
from wntest.pair import PairError, WN_PAIR

SERVER_IP = '198.19.0.1'


def mib():
    return os.environ.get('WN_RNIC_MIB', '4')


class Case:
    def __init__(self, name, pair='-', run='', checks=(), zc='-', ref=False):
        self.name = name
        self.ref = ref
        self.pair = [] if pair.strip() == '-' else pair.split()
        self.run = run.split()
        self.checks = list(checks)
        self.zc = zc

    def __repr__(self):
        return self.name

    def pair_key(self, params):
        """Cases with equal keys may share a pair (a capture is the case's own)."""
        zc = params.get('zc', '')
        return (tuple(self.pair), zc, self.name if 'PCAP' in self.pair else None)


def params(cases):
    """pytest parameters (case, transmit): each case (''), zc_NAME for the zero-copy ones
    ('zc'), ref_NAME for those by reference ('ref'), in an order that keeps cases of one pair
    together."""
    out = []
    for c in cases:
        out.append(pytest.param(c, '', id=c.name))
    for c in cases:
        if c.zc != '-':
            out.append(pytest.param(c, 'zc', id='zc_' + c.name))
    for c in cases:
        if c.ref:
            out.append(pytest.param(c, 'ref', id='ref_' + c.name))
    return out


class Run:
    """One case's run: its directory, pair, programs and what the checks found."""

    def __init__(self, build, case, zc, pairs, d):
        self.build = build
        self.case = case
        self.zc = zc
        self.pairs = pairs
        self.d = d
        self.it = os.path.join(build, 'test', 'integration', 'rnic', 'rnic_it')
        self.pair = None
        self.walked = None
        self.stream = None
        self.env = dict(os.environ)
        self.lines = []

    # ---------------------------------------------------------------- reporting

    def note(self, msg):
        self.lines.append(msg)
        print('  ' + msg)

    def fail(self, msg):
        logs = proc.tails(self.d)
        if self.pair is not None and self.pair.up:
            logs += '\n' + self.pair.logs(40)
        pytest.fail('%s: %s\n%s' % (self.case.name, msg, logs), pytrace=False)

    # ---------------------------------------------------------------- the pair

    def words(self, ws):
        out = []
        for w in ws:
            if w == 'PCAP':
                out.append(os.path.join(self.d, 'pcap'))
            elif w == 'MIB':
                out.append(mib())
            elif w == 'TEL_B':
                out.append(self.pair.tel_sock('b'))
            else:
                out.append(w)
        return out

    def start_pair(self):
        opts = ['--no-huge']
        zc_env = os.environ.get('WN_RNIC_ZC', '')
        if self.zc == 'zc':
            opts += ['--zero-copy', 'all']
        elif self.zc == 'ref' or zc_env == 'ref':
            opts += ['--zero-copy', 'ref']
        elif zc_env == 'off':
            opts += ['--zero-copy', 'staged']
        elif zc_env:
            opts += ['--zero-copy', 'all']
        opts += self.words(self.case.pair)
        if '--link' in opts and opts[opts.index('--link') + 1] == 'af_packet' and \
                os.geteuid() != 0:
            self.fail('missing prerequisite: root, for af_packet\'s network namespaces')
        key = self.case.pair_key({'zc': self.zc})
        try:
            self.pair = self.pairs.get(key, opts)
        except PairError as e:
            self.fail(str(e))
        self.pair.begin_case()

    def stop_pair(self):
        """Both warpnicd must exit 0 (the captures are complete afterwards)."""
        if self.pair is None or not self.pair.up:
            return
        try:
            self.pairs.release(judge=True)
        except PairError as e:
            self.fail('stopping the pair: %s' % e)

    # ---------------------------------------------------------------- the programs

    def client_secs(self):
        # rnic_it xfer bounds each of its four operations itself (60 + 2 x MiB s)
        if '--case' in self.run_args and 'xfer' in self.run_args:
            return 120 + 4 * (60 + 2 * int(mib()))
        return 50

    def server(self, args):
        return proc.start(self.pair, 'a', [self.it, '--server', '--oob', self.oob, '--json',
                                           os.path.join(self.d, 'server.json')] + args,
                          os.path.join(self.d, 'server.out'), self.env)

    def client(self, name, args, json_out=True):
        extra = ['--json', os.path.join(self.d, name + '.json')] if json_out else []
        return proc.run(self.pair, 'b', [self.it, '--client', SERVER_IP, '--oob', self.oob] +
                        extra + args, os.path.join(self.d, name + '.out'), self.client_secs(),
                        self.env)

    def start_client(self, name, args):
        return proc.start(self.pair, 'b', [self.it, '--client', SERVER_IP, '--oob', self.oob] +
                          args, os.path.join(self.d, name + '.out'), self.env)

    def wait_server(self, srv):
        return proc.wait(srv, self.client_secs() + 30)

    def show(self, *names):
        for n in names:
            for line in proc.tail(os.path.join(self.d, n), 1000).splitlines():
                if 'rnic_it' in line:
                    self.note(line.strip())

    def run_plain(self, args):
        srv = self.server(args)
        rc_c = self.client('client', args)
        if rc_c != 0:
            time.sleep(1)
            rc_s = proc.stop(srv)
        else:
            rc_s = self.wait_server(srv)
        if rc_c != 0:
            self.fail('client exited with %d' % rc_c)
        if rc_s != 0:
            self.fail('server exited with %d' % rc_s)
        self.show('server.out', 'client.out')

    def run_kill(self, args):
        srv = self.server(['--case', 'kill'])
        victim = self.start_client('victim', ['--case', 'stream'])
        try:
            # rnic_it says STREAMING once its Writes and Reads are in flight
            ok, _ = poll(lambda: ('STREAMING' in proc.tail(os.path.join(self.d, 'victim.out'),
                                                          1000) or victim.poll() is not None,
                                  None), 20, 0.1)
            if victim.poll() is not None:
                self.fail('streaming client exited')
            if not ok:
                self.fail('client never streamed')
            time.sleep(0.5)  # more Writes and Reads in flight
            held = {k: self.pair.tel('b', '/warpnic/ctl').get(k, 0)
                    for k in ('clients', 'qps', 'mrs')}
            if not all(held.values()):
                self.fail('B holds no objects of the streamer: %s' % held)
        finally:
            victim.kill()
            victim.wait()
        self.note('client killed mid-transfer (B held %s)' % held)
        if self.client('client', ['--case', 'basic']) != 0:
            proc.stop(srv)
            self.fail('the client after the kill failed')
        rc = self.wait_server(srv)
        if rc != 0:
            self.fail('server exited with %d' % rc)
        self.show('server.out', 'client.out')

    def hook(self, cmd, out):
        """rnic_it --hook: a shell command the client runs an eighth into its Writes."""
        return ['--hook', '%s --dir %s tel b %s >%s 2>&1' % (
            shlex.quote(WN_PAIR), shlex.quote(self.pair.dir), cmd, shlex.quote(out))]

    def hook_reply(self, out):
        try:
            with open(out) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def run_flap(self, args):
        ms = int(args[0])
        port = self.impair_port()
        out = os.path.join(self.d, 'flap.json')
        self.run_plain(args[1:] + self.hook('/wn_impair/link_down,%s,%d' % (port, ms), out))
        if self.hook_reply(out).get('down_ms') != ms:
            self.fail('the link flap was not triggered')

    def run_mangle(self, args):
        port = self.impair_port()
        out = os.path.join(self.d, 'mangle.json')
        self.run_plain(args + self.hook('/wn_impair/mangle,%s,tx,1' % port, out))
        if self.hook_reply(out).get('tx_mangle_next') != 1:
            self.fail('the fault injector was not armed')

    def run_restart(self, args):
        self.run_plain(args)
        try:
            self.pair.restart('a')
        except PairError as e:
            self.fail(str(e))
        self.note('A restarted; B: %s' % {k: self.pair.tel('b', '/warpnic/dp/port').get(k)
                                          for k in ('link', 'gate', 'link_downs',
                                                    'link_restarts')})
        self.run_plain(args)

    def impair_port(self):
        try:
            return self.pair.impair_port()
        except (PairError, OSError, ValueError) as e:
            self.fail(str(e))

    # ---------------------------------------------------------------- the case

    def go(self, last_on_pair):
        if not os.access(self.it, os.X_OK):
            self.fail('missing prerequisite: %s not built' % self.it)
        self.oob = os.path.join(self.d, 'oob.sock')
        self.start_pair()
        args = self.words(self.case.run)
        while args and re.match(r'^[A-Z_][A-Z0-9_]*=', args[0]):
            k, v = args.pop(0).split('=', 1)
            self.env[k] = v
        self.run_args = args
        mode = args[0] if args and args[0].startswith('@') else None
        {'@kill': self.run_kill, '@flap': self.run_flap, '@mangle': self.run_mangle,
         '@restart': self.run_restart, None: self.run_plain}[mode](args[1:] if mode else args)
        if not self.pair.alive():
            self.fail('a warpnicd is gone')
        if not any('mpa_crc_errors' in repr(c) for c in self.case.checks):
            for n in 'ab':
                tel(n, '/warpnic/dp/stats', 'mpa_crc_errors', '=', 0)(self)
        if self.zc == 'ref':
            ok, z = poll(lambda: (lambda v: (any(v), v))(
                [self.pair.value(n, '/warpnic/dp/stats', 'ref_fpdus') for n in 'ab']))
            self.note('by reference: A %d, B %d FPDUs' % tuple(z))
            if not ok:
                self.fail('transmit by reference, but no FPDU went so')
        if self.zc == 'zc' and self.case.zc == 'zc':
            # telemetry's snapshots follow the shards: wait up to 10 s for them to show it
            ok, z = poll(lambda: (lambda v: (any(v), v))(
                [self.pair.value(n, '/warpnic/dp/stats', 'zc_fpdus') for n in 'ab']))
            self.note('zero-copy: A %d, B %d FPDUs' % tuple(z))
            if not ok:
                self.fail('zero-copy on, but no FPDU went zero-copy')
        for c in self.case.checks:
            c(self)
        if not last_on_pair:
            return
        self.stop_pair()


def run(request, build, pairs, case, zc):
    """Run one case (the module's test function calls this)."""
    d = os.path.join(pairs.base_dir, (zc + '_' if zc else '') + case.name)
    os.makedirs(d, exist_ok=True)
    r = Run(build, case, zc, pairs, d)
    try:
        r.go(not getattr(request.node, 'wn_next_same_pair', False))
    except BaseException:
        # a failed case leaves its pair to no one: stopped without judging how it ends
        pairs.release(judge=False)
        raise


# -------------------------------------------------------------------- checks

class Check:
    """A named check: called with the Run; its repr is the row's text."""

    def __init__(self, text, fn):
        self.text = text
        self.fn = fn

    def __repr__(self):
        return self.text

    def __call__(self, r):
        self.fn(r)


def _json(r, who, key):
    p = os.path.join(r.d, who + '.json')
    try:
        with open(p) as f:
            d = json.load(f)
    except (OSError, ValueError):
        r.fail('rnic_it %s wrote no counters' % who)
    for k in key.split('.'):
        d = d.get(k, 0) if isinstance(d, dict) else 0
    return d


def json_(who, key, op, want):
    """rnic_it's --json counters of client, server or both (KEY may be a.b; absent: 0)."""
    def fn(r):
        for w in (('client', 'server') if who == 'both' else (who,)):
            got = _json(r, w, key)
            r.note('%s: %s = %s' % (w, key, got))
            if not compare(got, op, want):
                r.fail('rnic_it %s: %s is %s, want %s %s' % (w, key, got, op, want))
    return Check('json %s %s %s %s' % (who, key, op, want), fn)


def _tel_wait(r, node, cmd, conds):
    """conds: [(key, op, want)], all of them, within 10 s."""
    def once():
        try:
            got = r.pair.counters[node].values(cmd, [k for k, _, _ in conds])
        except (OSError, ValueError, KeyError) as e:
            return False, '(no answer: %s)' % e
        return all(compare(got[k], op, w) for k, op, w in conds), got
    ok, got = poll(once)
    r.note('%s %s: %s' % (node, cmd, ', '.join('%s = %s' % kv for kv in got.items())
                          if isinstance(got, dict) else got))
    if not ok:
        r.fail('warpnicd %s %s: %s, want %s' % (node, cmd, got, ' '.join(
            '%s %s %s' % c for c in conds)))


def tel(node, cmd, key, op, want):
    """warpnicd telemetry: COMMAND's KEY (a counter's growth over the case, a gauge's value)."""
    return Check('tel %s %s %s %s %s' % (node, cmd, key, op, want),
                 lambda r: _tel_wait(r, node, cmd, [(key, op, want)]))


def term(node, cause):
    """NODE sent one Terminate with CAUSE (layer/etype/0xcode, RFC 5040 §7.1), the other
    received it."""
    other = 'b' if node == 'a' else 'a'

    def fn(r):
        _tel_wait(r, node, '/warpnic/dp/stats', [('term_sent', '=', 1),
                                                 ('term_sent_last', '=', cause)])
        _tel_wait(r, other, '/warpnic/dp/stats', [('term_recv', '=', 1),
                                                  ('term_recv_last', '=', cause)])
    return Check('term %s %s' % (node, cause), fn)


def objects_none(*nodes):
    """/warpnic/ctl counts every object of every client gone."""
    def fn(r):
        for n in nodes:
            _tel_wait(r, n, '/warpnic/ctl', [(k, '=', 0) for k in
                                             ('clients', 'pds', 'mrs', 'cqs', 'srqs', 'qps',
                                              'cm_channels', 'cm_ids')])
    return Check('objects_none ' + ' '.join(nodes), fn)


def zc_reclaimed(node):
    """FPDUs went zero-copy and every one was reclaimed (zc_inflight 0, no MR deregistration
    waiting). Whether a killed client's MRs went while the delay line still held mbufs of
    their pages depends on timing: had a DONE come early, the control thread would have
    unmapped pages those mbufs point to and the instance crashed sending them."""
    def fn(r):
        _tel_wait(r, node, '/warpnic/dp/stats', [('zc_fpdus', '>', 0)])
        _tel_wait(r, node, '/warpnic/dp/stats', [('zc_inflight', '=', 0),
                                                 ('mr_dereg_waiting', '=', 0)])
        if not r.pair.alive():
            r.fail('a warpnicd is gone')
    return Check('zc_reclaimed ' + node, fn)


def _impair_val(r, key):
    cmd = '/wn_impair/xstats,%s' % r.impair_port()
    c = r.pair.counters['b']
    if key.startswith(('rx_', 'tx_')):
        return c.value(cmd, key)
    return c.value(cmd, 'rx_impair_' + key) + c.value(cmd, 'tx_impair_' + key)


def impair(key, op, want):
    """B's fault injector counter (/wn_impair/xstats: rx_impair_drop, tx_impair_down, ...;
    without rx_/tx_: both summed): the fault was injected."""
    def fn(r):
        try:
            got = _impair_val(r, key)
        except (OSError, ValueError, KeyError) as e:
            r.fail('no fault injector counters on B: %s' % e)
        r.note('b fault injector: %s = %s' % (key, got))
        if not compare(got, op, want):
            r.fail('B\'s fault injector: %s is %s, want %s %s' % (key, got, op, want))
    return Check('impair b %s %s %s' % (key, op, want), fn)


def tcp_sum(key, op, want):
    """The sum of both instances' /warpnic/dp/tcp KEY."""
    def fn(r):
        a, b = (r.pair.value(n, '/warpnic/dp/tcp', key) for n in 'ab')
        r.note('TCP %s: A %d + B %d' % (key, a, b))
        if not compare(a + b, op, want):
            r.fail('TCP %s of both is %d, want %s %s' % (key, a + b, op, want))
    return Check('tcp %s %s %s' % (key, op, want), fn)


def _matrix(r):
    name = r.case.name
    c = _json(r, 'client', 'xfer') or []
    try:
        port = r.pair.tel('b', '/wn_impair/list')
        imp = {}
        if port:
            cmd = '/wn_impair/xstats,%s' % port[0]
            raw = r.pair.tel('b', cmd)
            imp = r.pair.counters['b'].values(cmd, [k for k, v in raw.items()
                                                    if isinstance(v, int)])
    except (OSError, ValueError, KeyError):
        imp = {}
    tcp = {n: r.pair.counters[n].values('/warpnic/dp/tcp', [
        'tx_segs', 'tx_retrans', 'fast_retrans', 'rto_fired', 'tlp_probes', 'undo_spurious'])
        for n in 'ab'}
    sctp = {n: r.pair.counters[n].values('/warpnic/dp/sctp', [
        'tx_data', 'tx_retrans', 'fast_retrans', 't3_timeouts', 'rx_dup_data']) for n in 'ab'}
    for x in c:
        what = '%d atomics' % x['ops'] if x['op'] == 'atomic' else '%d octets' % x['octets']
        rate = ('%.0f ops/s' % (x['ops'] * 1000.0 / max(x['ms'], 1)) if x['op'] == 'atomic'
                else '%.1f MB/s' % (x['octets'] / 1000.0 / max(x['ms'], 1)))
        r.note('MATRIX %s %s: %s verified, checksums equal at both ends, %.3f s, %s' %
               (name, x['op'], what, x['ms'] / 1000.0, rate))
    faults = []
    for k in ('drop', 'reorder', 'dup', 'delay', 'down', 'mangle', 'corrupt'):
        n = imp.get('tx_impair_' + k, 0) + imp.get('rx_impair_' + k, 0)
        if n:
            faults.append('%s %d' % (k, n))
    frames = imp.get('tx_impair_in', 0) + imp.get('rx_impair_in', 0)
    r.note('MATRIX %s faults: %s of %d frames' % (name, ', '.join(faults) or 'none', frames))
    for n, t in (('A', tcp['a']), ('B', tcp['b'])):
        if t['tx_segs']:
            r.note('MATRIX %s TCP %s: %d retransmitted, %d fast retransmits, %d RTOs, %d TLPs, '
                   '%d recoveries undone' % (name, n, t['tx_retrans'], t['fast_retrans'],
                                             t['rto_fired'], t['tlp_probes'],
                                             t['undo_spurious']))
    for n, t in (('A', sctp['a']), ('B', sctp['b'])):
        if t['tx_data']:
            r.note('MATRIX %s SCTP %s: %d DATA chunks sent, %d retransmitted (%d fast), %d T3 '
                   'timeouts, %d duplicates received' % (name, n, t['tx_data'], t['tx_retrans'],
                                                         t['fast_retrans'], t['t3_timeouts'],
                                                         t['rx_dup_data']))


def matrix():
    """The fault matrix's lines ("MATRIX ..."): per operation of rnic_it's xfer the octets
    verified and the time, then the faults injected and both instances' retransmissions
    (TCP's, and usrsctp's when SCTP carried DATA). scripts/soak.sh and the loss benchmarks
    read them; the verdicts are the other checks'."""
    return Check('matrix', _matrix)


def llp(kind):
    """The lower layer that carried the case, from both instances' /warpnic/dp/stats:
    sctp: DDP Stream Sessions over SCTP reached RDMA mode, no session error, no MPA FPDU
    sent; mpa: no SCTP session. Together they sent ULPDUs (sctp) or FPDUs (mpa): a side may
    send nothing, as A in "flush"."""
    def once(r):
        sent, why, seen = 0, None, {}
        for n in 'ab':
            v = r.pair.counters[n].values('/warpnic/dp/stats', [
                'sctp_sessions', 'sctp_tx_ulpdus', 'sctp_errors', 'tx_fpdus'])
            seen[n] = v
            if kind == 'sctp':
                if v['sctp_sessions'] <= 0:
                    why = why or '%s: no DDP Stream Session over SCTP (%s)' % (n, v)
                if v['sctp_errors'] or v['tx_fpdus']:
                    why = why or '%s: SCTP session errors or MPA FPDUs (%s)' % (n, v)
                sent += v['sctp_tx_ulpdus']
            else:
                if v['sctp_sessions']:
                    why = why or '%s: SCTP sessions (%s)' % (n, v)
                sent += v['tx_fpdus']
        if sent <= 0:
            why = why or 'nothing went over %s' % kind
        return why is None, (why, seen)

    def fn(r):
        # telemetry's snapshots follow the shards: wait up to 10 s for them to show it
        ok, (why, seen) = poll(lambda: once(r))
        for n in 'ab':
            r.note('%s lower layer: %s' % (n, seen[n]))
        if not ok:
            r.fail(why)
    return Check('llp ' + kind, fn)


def capture_(node, min_fpdus, crc):
    """Stops the pair (both warpnicd must exit 0), then judges NODE's capture: tshark's
    iWARP dissection (wntest.capture.iwarp_check) and the walk of every MPA stream in it;
    the checks after it read the walk of the first connection (or of the one 'stream' picks)."""
    def fn(r):
        r.stop_pair()
        pcap = os.path.join(r.d, 'pcap', node + '.pcapng')
        err = None
        try:
            layers = capture.frames(pcap)
            r.walked = capture.mpa_streams(layers)
            n = capture.iwarp_check(layers, r.walked, min_fpdus, crc)
        except capture.CaptureError as e:
            err = '%s.pcapng: %s' % (node, e)
        except FileNotFoundError as e:
            err = 'missing prerequisite: %s (scripts/setup.sh installs tshark)' % e
        if err:
            r.fail(err)
        if not r.walked:
            r.fail('%s.pcapng: no MPA connection in the capture' % node)
        r.note('%s.pcapng: tshark: %d FPDUs, %d DDP and %d RDMAP headers, %d CRCs checked' %
               (node, n['fpdus'], n['ddp'], n['rdmap'], n['crc_checked']))
        if n['misframed']:
            r.note('%s.pcapng: %d FPDUs Wireshark misframes on segments that are not one FPDU '
                   '(the walk found every CRC valid)' % (node, n['misframed']))
        _pick(r, min(r.walked))
    return Check('capture %s %d %d' % (node, min_fpdus, crc), fn)


def _pick(r, sid):
    if sid not in r.walked:
        r.fail('no MPA connection on TCP stream %d' % sid)
    r.stream = r.walked[sid]
    for line in capture.describe(r.stream):
        r.note('TCP stream %d: %s' % (sid, line))


def stream(sid):
    """The checks after it read the walk of TCP stream SID (tshark's tcp.stream)."""
    return Check('stream %d' % sid, lambda r: _pick(r, sid))


def startup(req_m, rep_m, crc, rev):
    """The MPA Request (from B, the initiator) and the Reply carried these M and C bits and
    this revision."""
    def fn(r):
        if r.stream['request'] != (req_m, crc, rev):
            r.fail('MPA Request (M C Rev) %s, want %s' % (r.stream['request'],
                                                           (req_m, crc, rev)))
        if r.stream['reply'] != (rep_m, crc, rev):
            r.fail('MPA Reply (M C Rev) %s, want %s' % (r.stream['reply'], (rep_m, crc, rev)))
    return Check('startup %d %d %d %d' % (req_m, rep_m, crc, rev), fn)


def request(m, c, rev):
    def fn(r):
        if r.stream['request'] != (m, c, rev):
            r.fail('MPA Request %s, want %s' % (r.stream['request'], (m, c, rev)))
    return Check('request %d %d %d' % (m, c, rev), fn)


def reply_none():
    """The responder sent no MPA Reply (closed the connection)."""
    def fn(r):
        if r.stream['reply'] is not None:
            r.fail('MPA Reply %s, want none' % (r.stream['reply'],))
    return Check('reply none', fn)


def first(opcode, length):
    """The initiator's first FPDU: RDMAP opcode and ULPDU_Length."""
    def fn(r):
        if r.stream['first'] != (opcode, length):
            r.fail('initiator\'s first FPDU (opcode length) %s, want %s' % (
                r.stream['first'], (opcode, length)))
    return Check('first 0x%02x %d' % (opcode, length), fn)


def markers(direction, on):
    """DIRECTION (initiator, responder) sends Markers or not."""
    def fn(r):
        if r.stream['dirs'][direction]['marked'] != on:
            r.fail('%s -> peer: Markers not %s' % (direction, 'on' if on else 'off'))
    return Check('markers %s %s' % (direction, 'on' if on else 'off'), fn)


def _ib_pd(r, startup_, pd, want_type, src, dst, what):
    if pd is None:
        r.fail('%s: none in the capture' % what)
    if startup_[2] == 2:
        pd = pd[4:]  # RFC 6581 §5: IRD/ORD first
    if len(pd) != 16 or pd[:4] != b'WNIB' or pd[4] != 1 or pd[7] != 0:
        r.fail('%s: Private Data %s is not InfiniBand-style version 1' % (what, pd.hex()))
    got = (pd[5], pd[6], int.from_bytes(pd[8:12], 'big'), int.from_bytes(pd[12:16], 'big'))
    if got != (want_type, 0, src, dst):
        r.fail('%s: type/reason/QPNs %s, want %s' % (what, got, (want_type, 0, src, dst)))
    r.note('%s names QP %d (its sender) and QP %d' % (what, src, dst))


def ibpd():
    """The walked Request and Reply carry InfiniBand-style Private Data (wn_cm.h: "WNIB",
    version 1, type, reason 0, the sender's QP number, the QP number it is for; after RFC
    6581's IRD/ORD octets): the Request from the server's QP to the client's (A connects:
    its address is the lower), the Reply back, the QP numbers rnic_it reported (json qpn)."""
    def fn(r):
        srv, cli = _json(r, 'server', 'qpn'), _json(r, 'client', 'qpn')
        if not srv or not cli:
            r.fail('rnic_it wrote no QP numbers')
        _ib_pd(r, r.stream['request'], r.stream['request_pd'], 1, srv, cli, 'MPA Request')
        _ib_pd(r, r.stream['reply'], r.stream['reply_pd'], 2, cli, srv, 'MPA Reply')
    return Check('ibpd', fn)
