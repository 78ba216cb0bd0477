#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every test that runs under injected faults, again and again, beside a CPU hog (issue 15:
# "every impairment test must pass 20 runs in a row on a loaded machine"):
#
#   scripts/flake.sh [--rounds N] [--no-hog] [--list] [REGEX]
#
# The tests are the meson tests of build/ (or WN_BUILD) and the cases of its pytest modules
# (MODULE::CASE, test/wntest/cases.py) whose names say they run impaired (*impair*, *_drop,
# rnic_faults::fault_*, ::crc_*, ::markers_ooo*, ::zc_reclaim, ::synflood), or those matching
# REGEX. Each round runs them one after the other (`meson test --no-rebuild`, a case alone
# with --test-args=--case=CASE, so their own timeouts apply); the hog is one busy loop per CPU
# at the same priority, for the whole run. It stops at the first failure and prints that
# test's log; at the end a line per test with its passes. Takes about 10 minutes per round on
# a 2-core machine. Exit status 0 when every run passed.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${WN_BUILD:-$top/build}
rounds=20
hog=1
list=0
pattern='impair|_drop$|::fault_|::crc_|::markers_ooo|::zc_reclaim$|::synflood$'
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) rounds=$2; shift 2 ;;
	--no-hog) hog=0; shift ;;
	--list) list=1; shift ;;
	-h|--help) sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "flake.sh: unknown option '$1'" >&2; exit 2 ;;
	*) pattern=$1; shift ;;
	esac
done
[ -f "$build/build.ninja" ] || { echo "flake.sh: no build in $build (meson setup, ninja)" >&2; exit 2; }
mapfile -t tests < <(python3 "$top/test/wntest/cases.py" "$build" | grep -E "$pattern" | sort)
[ ${#tests[@]} -gt 0 ] || { echo "flake.sh: no test matches '$pattern'" >&2; exit 2; }
if [ $list = 1 ]; then
	printf '%s\n' "${tests[@]}"
	exit 0
fi
hogs=()
cleanup() { [ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null; }
trap cleanup EXIT
if [ $hog = 1 ]; then
	for _ in $(seq "$(nproc)"); do
		(while :; do :; done) &
		hogs+=($!)
	done
fi
declare -A pass
echo "flake: ${#tests[@]} tests x $rounds rounds$([ $hog = 1 ] && echo ", beside $(nproc) busy loops")"
start=$SECONDS
for ((r = 1; r <= rounds; r++)); do
	for t in "${tests[@]}"; do
		t0=$SECONDS
		one=("$t")
		[ "${t#*::}" = "$t" ] || one=("${t%%::*}" "--test-args=--case=${t#*::}")
		if meson test -C "$build" --no-rebuild --print-errorlogs "${one[@]}" \
			>"/tmp/wn-flake.$$.log" 2>&1; then
			pass[$t]=$((${pass[$t]:-0} + 1))
			echo "round $r: PASS $t ($((SECONDS - t0)) s)"
		else
			echo "round $r: FAIL $t ($((SECONDS - t0)) s)"
			tail -n 60 "/tmp/wn-flake.$$.log" | sed 's/^/    /'
			for x in "${tests[@]}"; do echo "  ${pass[$x]:-0} passed: $x"; done
			exit 1
		fi
	done
done
rm -f "/tmp/wn-flake.$$.log"
for t in "${tests[@]}"; do echo "  ${pass[$t]:-0} of $rounds passed: $t"; done
echo "flake: every run passed ($((SECONDS - start)) s)"
