#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Latency of unmodified perftest through two warpnicd on shared cores, against kernel TCP
# measured in the same run:
#
#   test/bench/idle_lat.sh BUILD [ROUNDS] [ITERS] [CASE...]
#
# Each round runs sockperf ping-pong over loopback (kernel TCP, 14-octet messages, full round
# trips, 3 s) and then, for each CASE, a fresh pair (scripts/wn-pair.sh, one dataplane lcore
# each: A on CPU 0, B on CPU 1) with `ib_write_lat -R -s 8 -n ITERS` between them. A CASE is
# IDLE:PLACEMENT[:PAIR-OPTION...] with IDLE the daemons' --idle (sleep, poll, or "old": no
# --idle option: the build in $WN_OLD_BUILD, else BUILD, e.g. main before --idle existed)
# and PLACEMENT where the two ib_write_lat run: same
# (each on its daemon's CPU), other (each on the other daemon's CPU) or any (not pinned).
# Default cases: sleep:same sleep:any poll:any. Prints, per case, the medians over the rounds
# of perftest's t_typical and 99% percentile (half round trips), the round trip (2 x
# t_typical) over sockperf's round-trip p50 and p99 over p50. Rounds alternate the cases
# (ABC, ABC, ...). Timing is reported, never asserted. Needs sockperf and perftest.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: idle_lat.sh BUILD [ROUNDS] [ITERS] [CASE...]}" && pwd)
rounds=${2:-3}
iters=${3:-5000}
shift $(( $# < 3 ? $# : 3 ))
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(sleep:same sleep:any poll:any)
for p in sockperf ib_write_lat taskset; do
	command -v $p >/dev/null || { echo "idle_lat.sh: $p missing (scripts/setup.sh)" >&2; exit 1; }
done
export WN_BUILD=$build
tmp=$(mktemp -d /tmp/wn-idle-lat.XXXXXX)
export WN_PAIR_DIR=$tmp/pair
trap '"$top/scripts/wn-pair.sh" stop >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
ncpu=$(nproc)

median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "nan"; else print v[int((NR + 1) / 2)]}'; }

kernel_rtt() { # round -> "p50 p99" of sockperf's full round trips, in us
	local port=$((20000 + ($$ + $1) % 20000)) out srv
	sockperf sr --tcp -i 127.0.0.1 -p $port >/dev/null 2>&1 &
	srv=$!
	sleep 0.5
	out=$(sockperf pp --tcp -i 127.0.0.1 -p $port -t 3 -m 14 --full-rtt 2>&1 || true)
	kill $srv 2>/dev/null || true
	wait $srv 2>/dev/null || true
	awk '/percentile 50.000/ {p50 = $NF} /percentile 99.000/ {p99 = $NF}
	     END {print p50 + 0, p99 + 0}' <<<"$out"
}

pin() { # placement side(a|b) -> taskset prefix
	local cpu
	case "$1" in
	same) [ "$2" = a ] && cpu=0 || cpu=$(( ncpu > 1 ? 1 : 0 )) ;;
	other) [ "$2" = a ] && cpu=$(( ncpu > 1 ? 1 : 0 )) || cpu=0 ;;
	*) return 0 ;;
	esac
	echo "taskset -c $cpu"
}

run_case() { # case -> "t_typical p99" (half round trips, us) or "nan nan"
	local idle place opts=() out WN_BUILD=$build scripts=$top/scripts
	IFS=: read -r idle place rest <<<"$1"
	if [ "$idle" = old ]; then
		WN_BUILD=${WN_OLD_BUILD:-$build}
		# the old tree's own scripts (its pair starter knows its telemetry)
		[ -x "$WN_BUILD/../scripts/wn-pair.sh" ] && scripts=$(cd "$WN_BUILD/../scripts" && pwd)
	else
		opts+=(--a-opt --idle --a-opt "$idle" --b-opt --idle --b-opt "$idle")
	fi
	if [ -n "${rest:-}" ]; then
		local o
		IFS=: read -ra o <<<"$rest"
		opts+=("${o[@]}")
	fi
	"$scripts/wn-pair.sh" start --owner $$ "${opts[@]}" >/dev/null
	# shellcheck disable=SC2046
	$(pin "$place" a) "$scripts/warpnic-run" --ctl "$WN_PAIR_DIR/a.sock" \
		timeout 120 ib_write_lat -R -s 8 -n "$iters" >"$tmp/srv.log" 2>&1 &
	local srv=$!
	sleep 2
	# shellcheck disable=SC2046
	out=$($(pin "$place" b) "$scripts/warpnic-run" --ctl "$WN_PAIR_DIR/b.sock" \
		timeout 120 ib_write_lat -R -s 8 -n "$iters" 198.19.0.1 2>&1 || true)
	wait $srv 2>/dev/null || true
	"$scripts/wn-pair.sh" stop >/dev/null 2>&1 || true
	awk '$1 == 8 && NF >= 8 {print $5, $8; found = 1} END {if (!found) print "nan nan"}' \
		<<<"$out"
}

: >"$tmp/k"
for c in "${cases[@]}"; do : >"$tmp/c_${c//[:\/ ]/_}"; done
for ((r = 1; r <= rounds; r++)); do
	kernel_rtt $r >>"$tmp/k"
	for c in "${cases[@]}"; do
		run_case "$c" >>"$tmp/c_${c//[:\/ ]/_}"
	done
	echo "round $r/$rounds done" >&2
done
k50=$(cut -d' ' -f1 "$tmp/k" | median)
k99=$(cut -d' ' -f2 "$tmp/k" | median)
echo "kernel TCP over loopback (sockperf ping-pong, 14 B): round trip p50 $k50 us, p99 $k99 us"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-28s %12s %10s %14s %14s %10s\n' "warpnicd --idle:clients" "t_typical" "99%" \
	"RTT p50" "RTT/kernel" "p99/p50"
for c in "${cases[@]}"; do
	f=$tmp/c_${c//[:\/ ]/_}
	t=$(cut -d' ' -f1 "$f" | median)
	p=$(cut -d' ' -f2 "$f" | median)
	awk -v c="$c" -v t="$t" -v p="$p" -v k="$k50" 'BEGIN {
		printf "%-28s %9.2f us %7.2f us %11.2f us %14.2f %10.2f\n", c, t, p, 2 * t,
		       (k > 0 ? 2 * t / k : 0), (t > 0 ? p / t : 0) }'
done
