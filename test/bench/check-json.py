#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check-json.py KEY=VALUE... -- COMMAND...: run COMMAND, require exit 0 and one
JSON object on stdout whose top-level KEYs equal VALUEs, with a non-empty
"results" list whose rows carry a finite positive number under every column
named by --col. Never compares timings against thresholds. A COMMAND exit status of 77
(skipped) is passed on."""
import json
import math
import subprocess
import sys


def main():
    args = sys.argv[1:]
    if '--' not in args:
        print(__doc__)
        return 2
    sep = args.index('--')
    opts, cmd = args[:sep], args[sep + 1:]
    want, cols, names = {}, [], []
    i = 0
    while i < len(opts):
        if opts[i] == '--col':
            cols.append(opts[i + 1])
            i += 2
        elif opts[i] == '--name':
            names.append(opts[i + 1])
            i += 2
        else:
            k, v = opts[i].split('=', 1)
            want[k] = v
            i += 1
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(p.stderr)
    if p.returncode == 77:
        print('skipped by the command')
        return 77
    if p.returncode != 0:
        print('command failed with status %d' % p.returncode)
        return 1
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        print('stdout is not JSON: %s\n%s' % (e, p.stdout))
        return 1
    for k, v in want.items():
        if str(doc.get(k)) != v:
            print('%s: expected %r, got %r' % (k, v, doc.get(k)))
            return 1
    rows = doc.get('results')
    if not isinstance(rows, list) or not rows:
        print('no results')
        return 1
    for r in rows:
        for c in cols:
            v = r.get(c)
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
                print('row %r: bad %s %r' % (r.get('name'), c, v))
                return 1
    seen = {r.get('name') for r in rows}
    for n in names:
        if n not in seen:
            print('missing row %r' % n)
            return 1
    print('%d rows ok' % len(rows))
    return 0


if __name__ == '__main__':
    sys.exit(main())
