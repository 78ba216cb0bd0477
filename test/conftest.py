# SPDX-License-Identifier: BSD-3-Clause
"""pytest's configuration for every module under test/ (test/README.md).

--build DIR       the meson build directory under test (default $WN_BUILD, else build/)
--case NAME       only the case whose parameter id (or, unparametrized, function name) is
                  NAME (repeatable; e.g. zc_ops, test_compat_table)
--results FILE    one JSON line per case ({"case", "outcome"}), written as each case ends,
                  and first one line listing every case collected: scripts/test.sh counts
                  cases from it (a case collected but never reported, as when meson's timeout
                  ends the run, counts as failed)

A skipped case is not a pass: the run's exit status is 1 when any case was skipped, and
scripts/test.sh counts it as failed. Cases that share a pair (wntest.pair.PairPool) are told
whether the next selected case uses the same one (item.wn_next_same_pair).
"""
import json
import os
import shutil
import sys
import tempfile

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

from wntest.pair import PairPool  # noqa: E402


def pytest_addoption(parser):
    parser.addoption('--build', default=os.environ.get('WN_BUILD',
                                                       os.path.join(HERE, '..', 'build')),
                     help='meson build directory under test')
    parser.addoption('--results', default=None, help='JSON lines of case outcomes')
    parser.addoption('--case', action='append', default=[],
                     help='run only the case with this parameter id (repeatable)')


def _results(config):
    return config.getoption('results')


def _write(config, obj):
    path = _results(config)
    if path:
        with open(path, 'a') as f:
            f.write(json.dumps(obj) + '\n')


def pair_key(item):
    cs = getattr(item, 'callspec', None)
    if cs is None:
        return None
    for v in cs.params.values():
        k = getattr(v, 'pair_key', None)
        if callable(k):
            return (item.module.__name__, k(cs.params))
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    want = config.getoption('case')
    if want:
        keep = [i for i in items if getattr(getattr(i, 'callspec', None), 'id', i.name) in want]
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep
    keys = [pair_key(i) for i in items]
    for n, i in enumerate(items):
        i.wn_next_same_pair = keys[n] is not None and n + 1 < len(items) and \
            keys[n + 1] == keys[n]
    path = _results(config)
    if path:
        d = os.path.dirname(path)
        if d:
            os.makedirs(d, exist_ok=True)
        with open(path, 'w') as f:
            f.write(json.dumps({'collected': [i.nodeid for i in items]}) + '\n')


_CONFIG = []


def pytest_configure(config):
    _CONFIG.append(config)


def pytest_runtest_logreport(report):
    # the call's outcome, and any failure or skip of setup or teardown (scripts/test.sh
    # folds them: failed if one failed, else skipped if one was skipped)
    if report.when == 'call' or report.outcome in ('failed', 'skipped'):
        _write(_CONFIG[0], {'case': report.nodeid, 'when': report.when,
                            'outcome': report.outcome})


def pytest_sessionfinish(session, exitstatus):
    tr = session.config.pluginmanager.get_plugin('terminalreporter')
    if tr is not None and tr.stats.get('skipped') and exitstatus == 0:
        session.exitstatus = 1


@pytest.fixture(scope='session')
def build(request):
    b = os.path.abspath(request.config.getoption('build'))
    if not os.path.isfile(os.path.join(b, 'build.ninja')):
        pytest.fail('%s is not a meson build directory (--build)' % b, pytrace=False)
    return b


@pytest.fixture(scope='module')
def workdir(request):
    """A private directory for one module's pairs and programs (kept with WN_TEST_KEEP=1)."""
    d = tempfile.mkdtemp(prefix='wn-%s.' % request.module.__name__.replace('test_', ''))
    yield d
    if os.environ.get('WN_TEST_KEEP') == '1':
        print('kept %s' % d)
    else:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope='module')
def pairs(build, workdir):
    """The module's pair pool: one pair per configuration, shared by consecutive cases."""
    pool = PairPool(build, workdir)
    yield pool
    pool.close()
