#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build warpnic and run every test suite; the README's test command.
#
#   scripts/test.sh [--suite NAME]...   (default: unit integration interop, then fuzz)
#
# Two build trees: build/ (default compiler, optimized: unit, integration and
# interop suites) and build-fuzz/ (clang-14 with ASan+UBSan: the unit suite
# again under sanitizers, and every libFuzzer target for WN_FUZZ_SECONDS,
# default 20). Ends with "N skipped" and then the line "N passed, N failed".
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

suites=()
while [ $# -gt 0 ]; do
	case "$1" in
	--suite) suites+=("$2"); shift 2 ;;
	-h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "test.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ ${#suites[@]} -gt 0 ] || suites=(unit integration interop fuzz)

build_failed() {
	echo "test.sh: building $1 failed"
	echo "0 passed, 1 failed"
	exit 1
}

has() { local s; for s in "${suites[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

rc=0
logs=()
main_suites=()
for s in unit integration interop bench; do has "$s" && main_suites+=(--suite "$s"); done

if [ ${#main_suites[@]} -gt 0 ]; then
	[ -f build/build.ninja ] || meson setup build >/dev/null || build_failed build
	ninja -C build >/dev/null || { ninja -C build; build_failed build; }
	rm -f build/meson-logs/testlog.json
	meson test -C build --print-errorlogs --num-processes 2 "${main_suites[@]}" || rc=1
	logs+=(build/meson-logs/testlog.json)
fi

if has fuzz || has unit; then
	if command -v clang-14 >/dev/null 2>&1; then
		if [ ! -f build-fuzz/build.ninja ]; then
			CC=clang-14 meson setup build-fuzz -Dfuzz=enabled -Db_sanitize=address,undefined \
				-Db_lundef=false -Dbuildtype=debugoptimized >/dev/null || build_failed build-fuzz
		fi
		ninja -C build-fuzz >/dev/null || { ninja -C build-fuzz; build_failed build-fuzz; }
		fs=()
		has unit && fs+=(--suite unit)
		has fuzz && fs+=(--suite fuzz)
		rm -f build-fuzz/meson-logs/testlog.json
		ASAN_OPTIONS=detect_leaks=1 meson test -C build-fuzz --print-errorlogs \
			--num-processes 2 "${fs[@]}" || rc=1
		logs+=(build-fuzz/meson-logs/testlog.json)
	else
		echo "test.sh: clang-14 not found: sanitizer and fuzz runs skipped (scripts/setup.sh installs it)"
	fi
fi

python3 - "${logs[@]}" <<'PY'
import json, sys
ok = bad = skip = 0
for path in sys.argv[1:]:
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    tree = path.split('/')[0]
    for line in lines:
        t = json.loads(line)
        r = t.get('result')
        if r in ('OK', 'EXPECTEDFAIL'):
            ok += 1
        elif r == 'SKIP':
            skip += 1
        else:
            bad += 1
            print('FAILED: %s/%s (%s)' % (tree, t.get('name'), r))
print('%d skipped' % skip)
print('%d passed, %d failed' % (ok, bad))
PY
exit $rc
