# SPDX-License-Identifier: BSD-3-Clause
"""RDMA programs (Debian's, unmodified, and ours) through the shims between two warpnicd (A
198.19.0.1 or fd77:6e::1, B 198.19.0.2 or fd77:6e::2): the helper of the interop verbs rows
and the RPC-over-RDMA cases.

A case gets its pair from the module's pool (cases of the same addresses, pair options and
lower layer share one), runs servers on A and clients on B through scripts/warpnic-run, each
bounded in time (STEP, 90 s: a run starved by busy-polling programs took 50 s), and judges
exit statuses, the programs' own result reports and warpnicd's telemetry. A missing tool or
build product fails the case. The daemons take siw's MPA startup timeout (20 s) rather than
warpnicd's 10 s, so a server slowed down by a loaded machine still accepts in time.
"""
import json
import os
import re
import shutil
import time

import pytest

from wntest import proc
from wntest.check import poll
from wntest.pair import PairError

STEP = int(os.environ.get('WN_VERBS_TIMEOUT', '90'))
ADDRS = {'4': ('198.19.0.1', '198.19.0.2'), '6': ('fd77:6e::1', 'fd77:6e::2'),
         '46': ('fd77:6e::1', 'fd77:6e::2')}


class Verbs:
    """One case on a pair: ip '4', '6' (IPv6 only) or '46' (dual stack, programs on IPv6);
    pair: more wn-pair.sh start options; llp: the daemons' lower layer (--llp); env: the
    programs' environment (WARPNIC_LLP=sctp: their own choice of lower layer)."""

    def __init__(self, request, build, pairs, ip='4', pair=(), llp=None, env=None):
        self.build = build
        self.pairs = pairs
        self.ip = ip
        self.pair_opts = list(pair)
        self.daemon_llp = llp
        self.env = dict(os.environ, **(env or {}))
        self.llp = self.env.get('WARPNIC_LLP') or llp or 'mpa'
        self.a_ip, self.b_ip = ADDRS[ip]
        self.d = os.path.join(pairs.base_dir, request.node.callspec.id)
        os.makedirs(self.d, exist_ok=True)
        self.last = not getattr(request.node, 'wn_next_same_pair', False)
        self.pair = None
        self.bg = []
        self.listens = {}   # lcore -> listeners installed before the last server started

    def key(self):
        return ('verbs', self.ip, tuple(self.pair_opts), self.daemon_llp)

    # ---------------------------------------------------------------- reporting

    def note(self, msg):
        print('  ' + msg)

    def fail(self, msg):
        logs = proc.tails(self.d)
        if self.pair is not None and self.pair.up:
            logs += '\n' + self.pair.logs(40)
        pytest.fail('%s\n%s' % (msg, logs), pytrace=False)

    def need(self, *tools):
        for t in tools:
            if shutil.which(t) is None:
                self.fail('missing prerequisite: %s not installed (scripts/setup.sh installs '
                          'it)' % t)

    # ---------------------------------------------------------------- the pair

    def start(self):
        opts = list(self.pair_opts)
        if self.ip == '6':
            opts += ['--ipv6', '--no-ipv4']
        elif self.ip == '46':
            opts += ['--ipv6']
        opts += ['--', '--mpa-timeout', '20000']
        if self.daemon_llp:
            opts += ['--llp', self.daemon_llp]
        try:
            self.pair = self.pairs.get(self.key(), opts)
        except PairError as e:
            self.fail(str(e))
        self.pair.begin_case()

    def stat(self, node, key, cmd='/warpnic/dp/stats'):
        try:
            return self.pair.tel(node, cmd)[key]
        except (OSError, ValueError, KeyError) as e:
            self.fail('no %s from %s: %s' % (cmd, node, e))

    def finish(self):
        """Both warpnicd alive; the last case on a pair stops it (both must exit 0)."""
        for p in self.bg:
            if p.poll() is None:
                p.kill()
                p.wait()
        if not self.pair.alive():
            self.fail('a warpnicd died')
        if self.last:
            try:
                self.pairs.release(judge=True)
            except PairError as e:
                self.fail('stopping the pair: %s' % e)

    # ---------------------------------------------------------------- programs

    def out(self, name):
        return os.path.join(self.d, name + '.out')

    def text(self, name):
        return proc.tail(self.out(name), 1 << 30)

    def on(self, node, args, name, secs=STEP):
        """A program on NODE in the foreground; its exit status (-9: out of time)."""
        return proc.run(self.pair, node, args, self.out(name), secs, self.env)

    def start_on(self, node, args, name):
        if node == 'a':
            self.listens = self._listens_fresh()
        p = proc.start(self.pair, node, args, self.out(name), self.env)
        self.bg.append(p)
        return p

    def wait(self, p, secs):
        """A background program's exit status, None when it is still running after secs."""
        try:
            return p.wait(timeout=secs)
        except Exception:  # subprocess.TimeoutExpired
            return None

    def _listens(self):
        """Listeners each of A's lcores installed so far, and its loop count (from the
        snapshot it last published), by lcore."""
        d = self.pair.tel('a', '/warpnic/dp/lcores')
        return {k: (x['listens'], x['loops']) for k, x in d.items() if isinstance(x, dict)}

    def _listens_fresh(self, secs=10):
        """The listeners of A's lcores from snapshots published after this call: the base a
        server started next is judged against (wait_server). A base from the previous
        wait_server would miss a program that listened again after it returned (perftest's
        -R server listens for its exchange, then again for its QPs), and the next server would
        be taken as listening at once."""
        try:
            first = self._listens()
        except (OSError, ValueError, KeyError) as e:
            self.fail('no /warpnic/dp/lcores from a: %s' % e)

        def fresh():
            try:
                cur = self._listens()
            except (OSError, ValueError, KeyError):
                return False, {}
            return all(k in cur and cur[k][1] != v[1] for k, v in first.items()), cur
        cur = poll(fresh, secs, 0.05)[1] or first
        return {k: v[0] for k, v in cur.items()}

    def wait_server(self, secs=10):
        """A server on A listens: every lcore of A's dataplane installed one more listener
        than before the server started (start_on)."""
        def up():
            try:
                cur = self._listens()
            except (OSError, ValueError, KeyError):
                return False, None
            return bool(cur) and all(n > self.listens.get(k, 0)
                                     for k, (n, _) in cur.items()), None
        return poll(up, secs, 0.1)[0]

    # ---------------------------------------------------------------- checks

    def ip_check(self):
        """IPv6 (ip 6 or 46): each instance found the other by neighbour discovery (the
        peer's address resolved to a MAC in /warpnic/dp/net, NDP received), its addresses
        passed DAD, it formed a link-local address and (6) has no IPv4 address or
        neighbour."""
        if self.ip == '4':
            return
        for side, peer in (('a', self.b_ip), ('b', self.a_ip)):
            # telemetry's snapshots follow the shards: up to 10 s for them to show it
            ok, (err, d) = poll(lambda: self._ip_errors(side, peer))
            if d:
                self.note('%s: %s; neighbours %s; rx_ndp %d, dad_probes %d' % (
                    side, ', '.join(d['addrs']), ', '.join(d['neighbours']), d['rx_ndp'],
                    d['dad_probes']))
            if not ok:
                self.fail('%s: IPv6: %s' % (side, '; '.join(err)))

    def _ip_errors(self, side, peer):
        try:
            d = self.pair.tel(side, '/warpnic/dp/net')
        except (OSError, ValueError) as e:
            return False, (['no /warpnic/dp/net telemetry: %s' % e], None)
        err = []
        addrs, nb = d['addrs'], d['neighbours']
        if d['addrs_tentative'] or d['addrs_duplicate'] or \
                any(not a.endswith(' preferred') for a in addrs):
            err.append('addresses not all usable: %s' % addrs)
        if not any(a.startswith('fe80:') for a in addrs):
            err.append('no link-local address: %s' % addrs)
        if not any(re.fullmatch(re.escape(peer) + r' ([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}', n)
                   for n in nb):
            err.append('peer %s not resolved by NDP: neighbours %s' % (peer, nb))
        if d['rx_ndp'] == 0 or d['dad_probes'] == 0:
            err.append('rx_ndp %d, dad_probes %d' % (d['rx_ndp'], d['dad_probes']))
        if self.ip == '6' and any('.' in a for a in addrs + nb):
            err.append('IPv4 in an IPv6-only pair: %s %s' % (addrs, nb))
        return not err, (err, d)

    def llp_check(self):
        """With SCTP below DDP: both instances carried this case's sessions over SCTP (RFC
        5043) with no session error and sent no MPA FPDU; ibv_devinfo names the lower
        layer."""
        if self.llp != 'sctp':
            return
        for side in 'ab':
            def once():
                v = self.pair.counters[side].values('/warpnic/dp/stats', [
                    'sctp_sessions', 'sctp_errors', 'tx_fpdus', 'sctp_tx_ulpdus'])
                return (v['sctp_sessions'] > 0 and v['sctp_tx_ulpdus'] > 0 and
                        not v['sctp_errors'] and not v['tx_fpdus']), v
            ok, v = poll(once)
            self.note('%s: %s' % (side, v))
            if not ok:
                self.fail('%s: no clean DDP over SCTP (%s)' % (side, v))
        if self.on('b', ['ibv_devinfo'], 'devinfo', 30) != 0:
            self.fail('ibv_devinfo failed')
        if not re.search(r'fw_ver:.*\(sctp\)', self.text('devinfo')):
            self.fail('ibv_devinfo does not name sctp')

    def objects(self, node):
        """/warpnic/ctl object counts and the dataplane's active QPs (all lcores)."""
        d = dict(self.pair.objects(node))
        d['active_qps'] = self.pair.tel(node, '/warpnic/dp/stats').get('active_qps', 0)
        return d

    def wait_zero(self, node, secs=10):
        ok, d = poll(lambda: (lambda d: (not any(d.values()), d))(self.objects(node)), secs)
        if not ok:
            self.note('instance %s: %s' % (node, json.dumps(d, sort_keys=True)))
        return ok


def rows(text, first=None):
    """The rows of a program's result table whose first column is a number."""
    out = []
    for line in text.splitlines():
        f = line.split()
        if f and re.fullmatch(r'[0-9]+', f[0]) and (first is None or int(f[0]) == first):
            out.append(f)
    return out


def number(s):
    try:
        return float(s)
    except ValueError:
        return 0.0


def sleep(secs):
    time.sleep(secs)
