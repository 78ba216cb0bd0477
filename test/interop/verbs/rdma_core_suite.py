#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run rdma-core's own tests/ (pyverbs, unmodified) and compare each test's outcome with a table.

  rdma_core_suite.py --suite DIR --expect TABLE [--results FILE] [--record FILE]
                     [--timeout S] [-k PATTERN]...

DIR holds rdma-core's tests/ package (unpacked from its release tarball, outside this
repository). The tests are loaded as its own run_tests.py loads them (the 'tests' package and
its load_tests protocol) and run by unittest; the only difference is the result class, which
records each test's outcome: ok, fail, error, skip (with the suite's own reason), or
timeout (a test still running after --timeout seconds is interrupted and counted as that).

TABLE has one line per test: 'TEST_ID OUTCOME [NOTE]'. For a skip, NOTE is the suite's skip
reason and must match; for any other outcome NOTE says why (free text, e.g. which work a test
waits for). Exit status 1 when any test's outcome (or skip reason) differs from the table, when
the suite has a test the table lacks or the other way round; 0 otherwise. --results writes the
outcomes of this run in the table's form (notes kept from TABLE where the outcome is unchanged,
else the exception's first line),
--record likewise into a file meant to replace TABLE. -k restricts the run to test ids
containing one of the patterns (the table is then compared on those only).
"""
import argparse
import collections
import os
import signal
import sys
import time
import unittest
from importlib.machinery import SourceFileLoader

OUTCOMES = ('ok', 'fail', 'error', 'skip', 'timeout')


class Timeout(Exception):
    pass


class Recorder(unittest.TextTestResult):
    """TextTestResult that also keeps {test id: (outcome, reason)}."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.outcomes = collections.OrderedDict()
        self.durations = {}
        self._t0 = 0.0

    def startTest(self, test):
        self._t0 = time.monotonic()
        if self.timeout:
            signal.alarm(self.timeout)
        super().startTest(test)

    def stopTest(self, test):
        signal.alarm(0)
        self.durations[test.id()] = time.monotonic() - self._t0
        super().stopTest(test)

    def _set(self, test, outcome, reason=''):
        # a test that failed in one subtest or in tearDown keeps its worst outcome
        prev = self.outcomes.get(test.id())
        if prev is not None and OUTCOMES.index(prev[0]) > OUTCOMES.index(outcome) and \
                prev[0] != 'skip':
            return
        self.outcomes[test.id()] = (outcome, reason)

    def addSuccess(self, test):
        super().addSuccess(test)
        if test.id() not in self.outcomes:
            self._set(test, 'ok')

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._set(test, 'fail', str(err[1]).splitlines()[0] if str(err[1]) else '')

    def addError(self, test, err):
        super().addError(test, err)
        if err[0] is Timeout:
            self._set(test, 'timeout', str(err[1]))
        else:
            self._set(test, 'error', f'{err[0].__name__}: {str(err[1]).splitlines()[0]}'
                      if str(err[1]) else err[0].__name__)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._set(test, 'skip', ' '.join(reason.split()))

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            kind = 'fail' if issubclass(err[0], test.failureException) else 'error'
            self._set(test, kind, f'{subtest}: {err[1]}'.splitlines()[0])

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._set(test, 'ok')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._set(test, 'fail', 'unexpected success')


def read_table(path):
    t = collections.OrderedDict()
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            if not line.strip() or line.lstrip().startswith('#'):
                continue
            f3 = line.split(None, 2)
            if len(f3) < 2 or f3[1] not in OUTCOMES:
                sys.exit(f'{path}:{n}: not "TEST_ID OUTCOME [NOTE]": {line!r}')
            t[f3[0]] = (f3[1], f3[2].strip() if len(f3) > 2 else '')
    return t


def write_table(path, header, outcomes, expect):
    with open(path, 'w') as f:
        f.write(header)
        for tid, (o, reason) in outcomes.items():
            note = reason
            if o != 'skip' and tid in expect and expect[tid][0] == o:
                note = expect[tid][1]
            f.write(f'{tid} {o}' + (f' {note}' if note else '') + '\n')


def table_header(path):
    lines = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if not line.startswith('#'):
                    break
                lines.append(line)
    return ''.join(lines)


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--suite', required=True, help='directory holding tests/')
    ap.add_argument('--expect', required=True)
    ap.add_argument('--results')
    ap.add_argument('--record')
    ap.add_argument('--timeout', type=int, default=120)
    ap.add_argument('-k', action='append', default=[])
    a = ap.parse_args()

    tests_dir = os.path.join(os.path.abspath(a.suite), 'tests')
    sys.path[:0] = [tests_dir, os.path.dirname(tests_dir)]
    sys.argv = [os.path.join(tests_dir, 'run_tests.py')]
    from args_parser import parser  # the suite's own
    parser.parse_args()
    tests = SourceFileLoader('tests', os.path.join(tests_dir, '__init__.py')).load_module()
    suite = unittest.defaultTestLoader.loadTestsFromModule(tests)
    chosen = [t for t in flatten(suite) if not a.k or any(k in t.id() for k in a.k)]

    def on_alarm(signum, frame):
        raise Timeout(f'still running after {a.timeout} s')
    signal.signal(signal.SIGALRM, on_alarm)
    Recorder.timeout = a.timeout
    runner = unittest.TextTestRunner(verbosity=2, resultclass=Recorder, stream=sys.stdout)
    t0 = time.monotonic()
    res = runner.run(unittest.TestSuite(chosen))
    took = time.monotonic() - t0

    expect = read_table(a.expect)
    got = res.outcomes
    for t in chosen:  # a test whose result never came (e.g. load errors)
        got.setdefault(t.id(), ('error', 'no result'))
    counts = collections.Counter(o for o, _ in got.values())
    print(f'\nrdma-core suite: {len(got)} tests in {took:.0f} s: ' +
          ', '.join(f'{counts[o]} {o}' for o in OUTCOMES))
    diffs = []
    for tid, (o, reason) in got.items():
        if tid not in expect:
            diffs.append(f'{tid}: {o} ({reason}), not in the table')
            continue
        eo, enote = expect[tid]
        if eo != o or (o == 'skip' and enote != reason):
            diffs.append(f'{tid}: {o}' + (f' ({reason})' if reason else '') +
                         f', the table says {eo}' + (f' ({enote})' if enote else ''))
    if not a.k:
        for tid in expect:
            if tid not in got:
                diffs.append(f'{tid}: in the table, not in the suite')
    header = table_header(a.expect)
    if a.results:
        write_table(a.results, header, got, expect)
    if a.record:
        merged = collections.OrderedDict(expect)
        merged.update(got)
        write_table(a.record, header, merged, expect)
    slow = sorted(res.durations.items(), key=lambda x: -x[1])[:5]
    print('slowest: ' + ', '.join(f'{tid.split(".", 1)[1]} {s:.1f} s' for tid, s in slow))
    if diffs:
        print(f'{len(diffs)} outcomes differ from {a.expect}:')
        for d in diffs:
            print('  ' + d)
        return 1
    print(f'every outcome as in {a.expect}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
