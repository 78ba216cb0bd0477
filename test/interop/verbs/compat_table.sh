#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/compatibility.md's table is what the tests run:
#   compat_table.sh SOURCE_DIR
# Every row of the table "| program | mode | result | siw | test |" under "Compatibility" must
# be a line of test/interop/verbs/programs.txt (same program, mode, result and siw's result;
# test = verbs_prog_CASE, a meson test that runs it and checks that result, or TEST for a case
# "=TEST"), and every line there must be a row. Breaks when one is edited without the other.
set -u
src=$(cd "${1:?usage: compat_table.sh SOURCE_DIR}" && pwd)
exec python3 - "$src/docs/compatibility.md" "$src/test/interop/verbs/programs.txt" <<'PY'
import sys

readme, cases = sys.argv[1], sys.argv[2]
want = {}
for line in open(cases):
    if line.startswith('#') or not line.strip():
        continue
    case, _impair, prog, mode, result, siw = [f.strip() for f in line.split(' | ')]
    test = case[1:] if case.startswith('=') else 'verbs_prog_' + case
    want[test] = (prog, mode, result, siw)

rows, in_table = {}, False
for line in open(readme):
    line = line.strip()
    cells = [c.strip() for c in line.strip('|').split('|')] if line.startswith('|') else None
    if cells is not None and [c.lower() for c in cells] == ['program', 'mode', 'result', 'siw',
                                                            'test']:
        in_table = True
        continue
    if not in_table:
        continue
    if cells is None:
        break
    if set(''.join(cells)) <= set('-: '):
        continue
    if len(cells) != 5:
        print('FAIL: docs/compatibility.md row with %d cells: %s' % (len(cells), line))
        sys.exit(1)
    prog, mode, result, siw, test = [c.strip('`') for c in cells]
    rows[test] = (prog.strip('`'), mode, result, siw)

bad = 0
if not rows:
    print('FAIL: no "| program | mode | result | siw | test |" table in docs/compatibility.md')
    sys.exit(1)
for t in sorted(set(want) | set(rows)):
    if t not in rows:
        print('FAIL: %s (programs.txt) has no row in docs/compatibility.md' % t)
        bad = 1
    elif t not in want:
        print('FAIL: docs/compatibility.md row %s is not a test case in programs.txt' % t)
        bad = 1
    elif rows[t] != want[t]:
        print('FAIL: %s differs:\n  docs:         %s\n  programs.txt: %s' % (t, rows[t], want[t]))
        bad = 1
if bad:
    sys.exit(1)
print('compatibility table: %d rows, each a test case' % len(rows))
PY
