#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Set up the machine, build warpnic and run every test suite; the README's test command.
#
#   scripts/test.sh [--no-setup] [--suite NAME]...
#                   (default: unit integration interop bench, then fuzz)
#
# First scripts/setup.sh (idempotent: installs missing packages, reserves hugepages; quick
# when all is there; --no-setup skips it). Two build trees: build/ (default compiler,
# optimized: unit, integration, interop and bench suites) and build-fuzz/ (clang-14 with
# ASan+UBSan: the unit suite again under sanitizers, and every libFuzzer target for
# WN_FUZZ_SECONDS, default 20). The bench suite runs as a smoke test at small sizes
# (WN_BENCH_BYTES, WN_BENCH_RAW_BYTES, WN_BENCH_RTTS, WN_COST_BYTES; it never asserts
# timing). The pytest modules (test/README.md) count each case as a test, from the JSON
# lines they leave in meson-logs/pytest/. A test that is skipped is not a pass: skips are
# listed and counted apart, and counted as failed. The last line is "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

suites=()
setup=1
while [ $# -gt 0 ]; do
	case "$1" in
	--suite) suites+=("$2"); shift 2 ;;
	--no-setup) setup=0; shift ;;
	-h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "test.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ ${#suites[@]} -gt 0 ] || suites=(unit integration interop bench fuzz)

fatal() {
	echo "test.sh: $*"
	echo "0 passed, 1 failed"
	exit 1
}

has() { local s; for s in "${suites[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

if [ "$setup" = 1 ]; then
	scripts/setup.sh || fatal "scripts/setup.sh failed"
fi

# the bench suite's smoke sizes (the full runs: test/bench/*.sh by hand)
export WN_BENCH_BYTES=${WN_BENCH_BYTES:-33554432} WN_BENCH_RAW_BYTES=${WN_BENCH_RAW_BYTES:-67108864}
export WN_BENCH_RTTS=${WN_BENCH_RTTS:-2000} WN_COST_BYTES=${WN_COST_BYTES:-4194304}

rc=0
logs=()
extra_fail=0
main_suites=()
for s in unit integration interop bench; do has "$s" && main_suites+=(--suite "$s"); done

if [ ${#main_suites[@]} -gt 0 ]; then
	[ -f build/build.ninja ] || meson setup build >/dev/null || fatal "meson setup build failed"
	ninja -C build >/dev/null || { ninja -C build; fatal "building build/ failed"; }
	rm -rf build/meson-logs/testlog.json build/meson-logs/pytest
	meson test -C build --print-errorlogs --num-processes 2 "${main_suites[@]}" || rc=1
	logs+=(build/meson-logs/testlog.json)
fi

if has fuzz || has unit; then
	if command -v clang-14 >/dev/null 2>&1; then
		if [ ! -f build-fuzz/build.ninja ]; then
			CC=clang-14 meson setup build-fuzz -Dfuzz=enabled -Db_sanitize=address,undefined \
				-Db_lundef=false -Dbuildtype=debugoptimized >/dev/null ||
				fatal "meson setup build-fuzz failed"
		fi
		ninja -C build-fuzz >/dev/null || { ninja -C build-fuzz; fatal "building build-fuzz/ failed"; }
		fs=()
		has unit && fs+=(--suite unit)
		has fuzz && fs+=(--suite fuzz)
		rm -rf build-fuzz/meson-logs/testlog.json build-fuzz/meson-logs/pytest
		ASAN_OPTIONS=detect_leaks=1 meson test -C build-fuzz --print-errorlogs \
			--num-processes 2 "${fs[@]}" || rc=1
		logs+=(build-fuzz/meson-logs/testlog.json)
	else
		echo "FAILED: clang-14 not found: no sanitizer or fuzz run (scripts/setup.sh installs it)"
		extra_fail=1
		rc=1
	fi
fi

python3 - "$extra_fail" "${logs[@]}" <<'PY' || rc=1
import json, os, sys
ok, bad, skip = 0, int(sys.argv[1]), []


def case_id(nodeid):
    # a parametrized case by its id (verbs_programs::ucmatose), another by its function
    f = nodeid.split('::')[-1]
    return f.split('[', 1)[1][:-1] if '[' in f else f


def cases(path):
    """A pytest module's cases (test/conftest.py --results): {case: outcome}; a case
    collected but never reported (the module timed out or crashed) is 'not run'."""
    out = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if 'collected' in r:
                out.update((c, 'not run') for c in r['collected'])
                continue
            prev = out.get(r['case'], 'not run')
            o = r['outcome']
            if prev == 'failed' or (prev == 'skipped' and o == 'passed'):
                continue
            out[r['case']] = o
    return out


for path in sys.argv[2:]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        print('FAILED: %s missing (meson test did not run)' % path)
        bad += 1
        continue
    tree = path.split('/')[0]
    for line in lines:
        t = json.loads(line)
        r = t.get('result')
        name = '%s/%s' % (tree, t.get('name'))
        # a pytest module counts its cases, each as one test
        res = os.path.join(os.path.dirname(path), 'pytest',
                           t.get('name').split(' / ')[-1] + '.jsonl')
        if os.path.exists(res):
            cs = cases(res)
            for c, o in sorted(cs.items()):
                if o == 'passed':
                    ok += 1
                elif o == 'skipped':
                    skip.append('%s::%s' % (name, case_id(c)))
                else:
                    bad += 1
                    print('FAILED: %s::%s (%s)' % (name, case_id(c), o))
            if r not in ('OK', 'EXPECTEDFAIL') and \
                    not any(o not in ('passed', 'skipped') for o in cs.values()) and \
                    not any(o == 'skipped' for o in cs.values()):
                bad += 1
                print('FAILED: %s (%s, no case failed)' % (name, r))
            continue
        if r in ('OK', 'EXPECTEDFAIL'):
            ok += 1
        elif r == 'SKIP':
            skip.append(name)
        else:
            bad += 1
            print('FAILED: %s (%s)' % (name, r))
for s in skip:
    print('SKIPPED (counted as failed): %s' % s)
print('%d skipped' % len(skip))
print('%d passed, %d failed' % (ok, bad + len(skip)))
sys.exit(1 if skip else 0)
PY
exit $rc
