#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every test of a build, one per line: each meson test by its name, and each case of a
pytest module (a meson test run with --results=) as MODULE::CASE.

    test/wntest/cases.py BUILD_DIR

MODULE::CASE runs alone with: meson test -C BUILD_DIR MODULE --test-args=--case=CASE
(scripts/flake.sh does)."""
import json
import os
import subprocess
import sys
import tempfile


def main():
    build = sys.argv[1]
    tests = json.loads(subprocess.run(['meson', 'introspect', build, '--tests'], check=True,
                                      capture_output=True, text=True).stdout)
    for t in tests:
        cmd = t['cmd']
        if not any(a.startswith('--results=') for a in cmd):
            print(t['name'])
            continue
        with tempfile.NamedTemporaryFile(suffix='.jsonl') as f:
            args = [a for a in cmd if not a.startswith('--results=')]
            subprocess.run(args + ['--collect-only', '-q', '--results=' + f.name],
                           env=dict(os.environ, PYTHONDONTWRITEBYTECODE='1'),
                           capture_output=True, check=False)
            line = f.readline()
        for c in json.loads(line)['collected'] if line else []:
            f = c.split('::')[-1]
            print('%s::%s' % (t['name'], f.split('[', 1)[1][:-1] if '[' in f else f))


if __name__ == '__main__':
    main()
