# SPDX-License-Identifier: BSD-3-Clause
"""Two warpnicd (A: 198.19.0.1, memif server; B: 198.19.0.2, memif client) started through
scripts/wn-pair.sh in a private directory, and a pool that shares one pair among the cases
that ask for the same configuration.

A pair is stopped when the test process exits however it exits (wn-pair.sh --owner).
warpnicd never sees LD_LIBRARY_PATH: meson puts the shims there, and DPDK's mlx5 PMD would
load the stand-in libmlx5 among them.
"""
import os
import subprocess
import time

from . import tel
from .check import poll

TOP = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
WN_PAIR = os.path.join(TOP, 'scripts', 'wn-pair.sh')
WN_RUN = os.path.join(TOP, 'scripts', 'warpnic-run')

# what a shared pair must show between cases: every object of every client gone
OBJECTS = ('clients', 'pds', 'mrs', 'cqs', 'srqs', 'qps', 'cm_channels', 'cm_ids')
# the commands whose counters a case judges as deltas
COUNTED = ('/warpnic/dp/stats', '/warpnic/dp/tcp', '/warpnic/dp/sctp', '/warpnic/dp/port',
           '/warpnic/dp/net')


class PairError(Exception):
    pass


class Pair:
    """One pair in DIR, started with wn-pair.sh start OPTS (a list of words)."""

    def __init__(self, build, pair_dir, opts=(), start_timeout=300):
        self.build = build
        self.dir = pair_dir
        self.opts = list(opts)
        self.start_timeout = start_timeout
        self.up = False
        self.cases = 0          # cases run on this pair since it started
        self.env = {}
        self.counters = {}

    def _run(self, args, timeout=120, check=True):
        env = dict(os.environ, WN_BUILD=self.build)
        env.pop('LD_LIBRARY_PATH', None)
        r = subprocess.run([WN_PAIR, '--dir', self.dir] + args, env=env, timeout=timeout,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if check and r.returncode != 0:
            raise PairError('wn-pair.sh %s: status %d\n%s%s' % (' '.join(args), r.returncode,
                                                                r.stdout, r.stderr))
        return r

    def start(self):
        r = self._run(['start', '--owner', str(os.getpid())] + self.opts,
                      timeout=self.start_timeout)
        self.env = dict(line.split('=', 1) for line in r.stdout.splitlines() if '=' in line)
        self.counters = {'a': tel.Counters(self.env['WN_A_TEL']),
                         'b': tel.Counters(self.env['WN_B_TEL'])}
        self.up = True
        self.cases = 0

    def stop(self):
        """Stop both; PairError unless both exited 0 (their shutdown is part of the test)."""
        if not self.up:
            return
        self.up = False
        self._run(['stop'], timeout=120)

    def kill(self):
        """Stop both without judging how they ended (cleanup after a failure)."""
        self.up = False
        self._run(['stop'], timeout=120, check=False)

    def restart(self, node, *opts):
        self._run(['restart', node] + list(opts), timeout=self.start_timeout)

    def alive(self):
        return self._run(['alive'], check=False).returncode == 0

    def logs(self, lines=40):
        return self._run(['logs', str(lines)], check=False).stdout

    def ctl(self, node):
        return self.env['WN_%s_CTL' % node.upper()]

    def ip(self, node, family=4):
        return self.env['WN_%s_IP%s' % (node.upper(), '' if family == 4 else '6')]

    def tel_sock(self, node):
        return self.env['WN_%s_TEL' % node.upper()]

    def tel(self, node, cmd):
        """The raw reply of one telemetry command."""
        return tel.query(self.tel_sock(node), cmd)

    def value(self, node, cmd, key):
        """This case's value of KEY (a counter's growth since the case began)."""
        return self.counters[node].value(cmd, key)

    def impair_port(self):
        """B's fault injector port id (PairError when B has none)."""
        ports = self.tel('b', '/wn_impair/list')
        if not ports:
            raise PairError('no fault injector on B (the pair needs --impair)')
        return ports[0]

    def objects(self, node):
        d = self.tel(node, '/warpnic/ctl')
        return {k: d.get(k, 0) for k in OBJECTS}

    def clean(self, secs=10):
        """Both alive and holding no object of any client (waits up to secs)."""
        def ok():
            try:
                return all(not any(self.objects(n).values()) for n in 'ab'), None
            except (OSError, ValueError, KeyError):
                return False, None
        return self.alive() and poll(ok, secs)[0]

    def settle(self, secs=10):
        """Wait until both dataplanes' telemetry holds what the previous case did: the shards
        publish their counters every 100 ms (sooner than that /warpnic/ctl, which says the
        objects are gone), so a snapshot is taken as the base once a newer one (its loop
        count moved) shows the same traffic counts."""
        keys = ('rx_pkts', 'tx_pkts', 'rx_fpdus', 'tx_fpdus', 'sctp_tx_ulpdus',
                'sctp_rx_ulpdus', 'term_sent', 'term_recv', 'zc_fpdus')
        prev = None
        end = time.monotonic() + secs
        while time.monotonic() < end:
            try:
                cur = {n: self.tel(n, '/warpnic/dp/stats') for n in 'ab'}
            except (OSError, ValueError):
                return
            if prev is not None and all(
                    cur[n].get('loops') != prev[n].get('loops') and
                    all(cur[n].get(k) == prev[n].get(k) for k in keys) for n in 'ab'):
                return
            prev = cur
            time.sleep(0.25)

    def begin_case(self):
        """Counters of this case start now (from zero on a pair just started)."""
        if self.cases:
            self.settle()
        cmds = list(COUNTED)
        try:
            port = self.tel('b', '/wn_impair/list')
            if port:
                cmds.append('/wn_impair/xstats,%s' % port[0])
        except (OSError, ValueError):
            pass
        for n in 'ab':
            self.counters[n].begin(cmds, fresh=self.cases == 0)
        self.cases += 1


class PairPool:
    """At most one running pair, reused by consecutive cases of the same configuration.

    get(key, opts) returns the running pair when its key is the same, it is alive and holds
    nothing of a previous case; otherwise it stops it (judging its exit) and starts another.
    A case that has to stop its pair (to read a complete capture) calls release()."""

    def __init__(self, build, base_dir):
        self.build = build
        self.base_dir = base_dir
        self.pair = None
        self.key = None
        self.n = 0
        self.stop_error = None

    def get(self, key, opts):
        if self.pair is not None and self.pair.up and self.key == key and self.pair.clean():
            return self.pair
        self.release()
        self.n += 1
        p = Pair(self.build, os.path.join(self.base_dir, 'pair%d' % self.n), opts)
        p.start()
        self.pair, self.key = p, key
        return p

    def release(self, judge=True):
        """Stop the pair; with judge, a failed shutdown raises PairError."""
        p, self.pair, self.key = self.pair, None, None
        if p is None or not p.up:
            return
        if judge:
            p.stop()
        else:
            p.kill()

    def close(self):
        self.release(judge=False)

