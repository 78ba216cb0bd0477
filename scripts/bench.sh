#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One command measures every path side by side in one run (issues 11 and 12) and prints
# their goals tables with the ratios of this run:
#   raw       the port's own packet path: warpnic-perf raw_bw / raw_lat, two processes on
#             net_memif (no TCP, MPA, DDP)
#   rtc       warpnic run to completion: warpnic-perf --rtc, one lcore per side running the
#             dataplane shard and the benchmark in one loop (lib/dp's wn_dp_embed.h)
#   daemons   two warpnicd (scripts/wn-pair.sh) with unmodified perftest (ib_write_lat,
#             ib_write_bw) through the verbs and rdma_cm shims
#   wn-tcp    warpnic's TCP alone: wn-tcp-pingpong over memif (the 8 B round trip)
#   kernel    Linux TCP over loopback: iperf3 (one stream), sockperf ping-pong (TCP)
#   sctp      issue 12: DDP over SCTP against MPA/TCP through one pair of warpnicd, the
#             client choosing the lower layer (WARPNIC_LLP), alternating: ib_write_bw -s 65536
#             and ib_write_lat -s 8 (3 rounds, medians), then Write/Read/Send of 64 MiB over
#             SCTP under 1 % drop + 1 % reorder checked octet for octet (rnic_fault_sctp's
#             case); issue 12's goals table follows issue 11's
#   scale     issue 26: the QP curve, aggregate RDMA Write 64 KiB over 1 to 4,096 QPs, run to
#             completion (warpnic-perf --rtc --qps N, each QP's share too; again with one
#             buffer for all QPs, --buffers 1: the QP count's cost without the data's
#             footprint) and through two warpnicd (unmodified ib_write_bw -q N), each
#             against 1 QP of this run;
#             connections: rdma-core's cmtime through two warpnicd at 1, 1,000 and 16,384
#             connections against kernel TCP's connect + accept + close at the same N
#             (wn-conn-rate), the daemons' memory per idle connection (wn-cm-hold,
#             16,384 held) and one control request of each kind through the shim
#             (wn-ctl-cost) (test/bench/conn_bench.sh)
# and (not with --quick) the instructions per message of run-to-completion RDMA against the
# raw path, counted by callgrind (test/bench/rdma_cost.sh; over MPA/TCP, with Markers, and
# over SCTP; a 64 KiB Write over 1, 16 and 256 QPs), the figure a loaded machine does not
# move, with issue 27's goals beside them.
# Latencies are half a round trip (perftest's, sockperf's and warpnic-perf's convention;
# wn-tcp-pingpong's round trip is halved). Writes DIR/bench.json (every figure, the goals
# rows with their ratios) and DIR/bench.png (bandwidth and latency against message size,
# aggregate bandwidth against QPs; gnuplot). Reports numbers, never asserts timing: it fails
# only when a run fails (every warpnic-perf and perftest run checks the octets it moved, every
# cmtime connection is established and torn down) or a tool is missing.
#
#   scripts/bench.sh [--quick] [--no-build] [--out DIR]
#
#   --quick      smoke size (what scripts/test.sh runs): few iterations, QPs 1 and 16,
#                cmtime and wn-conn-rate at 1 and 100 connections, 100 held,
#                no instruction counts; one SCTP round, the fault case at 1 MiB
#   --no-build   use the programs already built in WN_BUILD (default build)
#   --out DIR    where bench.json, bench.png and the logs go (default: a new /tmp/wn-bench.*)
#   -h, --help   this text
# Environment:
#   WN_BENCH_QPS     the run-to-completion QP counts (default "1 16 256 4096 16384")
#   WN_BENCH_PT_QPS  ib_write_bw's QPs:iterations per QP (default
#                    1:5000,16:300,256:20,4096:5,16384:5)
# Full run: about 8 minutes on a 2-core machine. Run it on a quiet machine; on a shared
# one the wall-clock figures move from run to run, the ratios (both sides measured in the
# same run) less so.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

quick=0 build_it=1 out=
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1; shift ;;
	--no-build) build_it=0; shift ;;
	--out) out=${2:?--out DIR}; shift 2 ;;
	-h|--help) sed -n '3,50p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done

# DPDK programs must not see the shim directory (meson test puts it there): DPDK's mlx5 PMD
# would load the stand-in libmlx5. perftest gets the shims from scripts/warpnic-run.
unset LD_LIBRARY_PATH
build=${WN_BUILD:-build}
case "$build" in /*) ;; *) build=$top/$build ;; esac
[ -n "$out" ] || out=$(mktemp -d /tmp/wn-bench.XXXXXX)
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
log=$out/bench.log
: >"$log"
rm -f "$out/cost.txt"    # an earlier full run's, in the same DIR

fail() {
	echo "bench.sh: FAIL: $*" >&2
	echo "bench.sh: logs in $out" >&2
	exit 1
}
for t in iperf3 sockperf gnuplot ib_write_lat ib_write_bw python3; do
	command -v "$t" >/dev/null ||
		fail "missing prerequisite: $t not installed (scripts/setup.sh installs it)"
done
if [ "$build_it" = 1 ]; then
	[ -f "$build/build.ninja" ] || meson setup "$build" >>"$log" 2>&1 || fail "meson setup"
	ninja -C "$build" >>"$log" 2>&1 || fail "build (see $log)"
fi
pp=$build/test/bench/tcp/wn-tcp-pingpong
for p in "$build/app/bin/warpnic-perf" "$build/app/warpnicd/warpnicd" "$pp" \
	"$build/lib/libwn_dp.a" "$build/test/integration/rnic/rnic_it"; do
	[ -e "$p" ] || fail "missing prerequisite: $p not built"
done

if [ "$quick" = 1 ]; then
	bw_sizes=64,4096,65536 lat_sizes=8 qps_list="1 16"
	bw_opt=(--iters 400) lat_iters=200 pt_lat_iters=200 pt_bw_iters=400 secs=1
	sctp_rounds=1 sctp_bw_iters=400 sctp_lat_iters=200 fault_mib=1
	pt_qps=1:200,16:20 conn_ns=1,100 conn_hold=100
else
	bw_sizes=64,1024,4096,16384,65536 lat_sizes=8,1024,4096,65536
	qps_list=${WN_BENCH_QPS:-1 16 256 4096 16384}
	bw_opt=(--duration 0.4 --reps 3) lat_iters=5000 pt_lat_iters=5000 pt_bw_iters=5000 secs=3
	sctp_rounds=3 sctp_bw_iters=5000 sctp_lat_iters=5000 fault_mib=64
	pt_qps=${WN_BENCH_PT_QPS:-1:5000,16:300,256:20,4096:5,16384:5} conn_ns=1,1000,16384
	conn_hold=16384
fi
pair=$top/test/bench/perf_pair.sh
step() { echo "== $*" >&2; echo "== $*" >>"$log"; }

# perf KIND MODE NAME [OPTIONS...]: one warpnic-perf pair, its JSON in $out/NAME.json
perf() {
	local kind=$1 mode=$2 name=$3
	shift 3
	nice -n 0 bash "$pair" "$build" "$kind" "$mode" "$@" --timeout 30 \
		>"$out/$name.json" 2>>"$log" || fail "$kind $mode $* (see $log)"
}

step "raw memif: raw_bw ($bw_sizes), raw_lat ($lat_sizes)"
perf raw raw_bw raw_bw --sweep="$bw_sizes" "${bw_opt[@]}"
perf raw raw_lat raw_lat --sweep="$lat_sizes" --iters "$lat_iters"

step "run to completion: write_lat ($lat_sizes), write_bw ($bw_sizes), send_bw 64 B, QPs $qps_list"
perf rtc write_lat rtc_write_lat --sweep="$lat_sizes" --iters "$lat_iters"
perf rtc write_bw rtc_write_bw --sweep="$bw_sizes" "${bw_opt[@]}" --depth 64
perf rtc send_bw rtc_send_bw --size 64 "${bw_opt[@]}"
for q in $qps_list; do
	# the same octets in flight whatever the QP count: 64 WRs of 64 KiB in all (>= 1 per QP)
	d=$((64 / q)); [ "$d" -ge 1 ] || d=1
	qopt=("${bw_opt[@]}")
	# thousands of QPs: one repetition (each takes tens of seconds)
	[ "$q" -lt 1024 ] || [ "$quick" = 1 ] || qopt=(--duration 0.4 --reps 1)
	perf rtc write_bw "rtc_qps_$q" --size 65536 --qps "$q" --depth "$d" "${qopt[@]}"
	# the same QPs sending from and placing into one buffer: the QP count's own cost,
	# without the data's footprint (256 QPs of 64 KiB: 16 MiB a side, 8 x the L2 cache)
	[ "$q" = 1 ] || perf rtc write_bw "rtc_qps1buf_$q" --size 65536 --qps "$q" --depth "$d" \
		--buffers 1 "${qopt[@]}"
done

step "daemons + unmodified perftest: ib_write_lat -s 8, ib_write_bw -s 4096,65536;" \
	"ib_write_bw -s 65536 -q Q (QPs:iterations $pt_qps)"
# ib_write_bw's server accepts its QPs' connections one after the other: at 16,384 the last
# waits ~20 s for its rdma_accept(), past the pair's 20 s MPA startup timeout
WN_VERBS_PAIR="${WN_VERBS_PAIR:-} --a-opt --mpa-timeout --a-opt 180000 --b-opt --mpa-timeout \
--b-opt 180000" WN_VERBS_TIMEOUT=${WN_VERBS_TIMEOUT:-600} \
	bash "$top/test/bench/perftest_pair.sh" "$build" 8 4096,65536 "$pt_lat_iters" "$pt_bw_iters" \
	"$pt_qps" >"$out/daemons.json" 2>>"$log" || fail "perftest between two warpnicd (see $log)"

step "connections: cmtime through two warpnicd and kernel TCP (wn-conn-rate) at $conn_ns;" \
	"$conn_hold held idle (wn-cm-hold)"
bash "$top/test/bench/conn_bench.sh" "$build" "$conn_ns" "$conn_hold" >"$out/conn.json" \
	2>>"$log" || fail "connections (see $log)"

step "DDP over SCTP against MPA/TCP: ib_write_bw -s 65536, ib_write_lat -s 8, $sctp_rounds" \
	"round(s) each, alternating; Write/Read/Send $fault_mib MiB over SCTP under 1 % drop +" \
	"1 % reorder"
bash "$top/test/bench/sctp_bench.sh" "$build" "$sctp_rounds" "$sctp_bw_iters" \
	"$sctp_lat_iters" "$fault_mib" >"$out/sctp.json" 2>>"$log" ||
	fail "DDP over SCTP against MPA/TCP (see $log)"

step "warpnic TCP ping-pong over memif (wn-tcp-pingpong, 8 B)"
if [ "$(nproc)" -ge 2 ]; then lc_a=0 lc_b=1; else lc_a=0 lc_b=0; fi
sock=$out/pp.sock
rm -f "$sock"    # a run before this one in the same DIR
eal=(--no-huge --no-shconf -m 256 --log-level lib.eal:warning --no-pci)
"$pp" -l "$lc_a" "${eal[@]}" --file-prefix "wnb-$$-pp-s" \
	--vdev "net_memif0,role=server,socket=$sock,socket-abstract=no" -- --server \
	--ip 198.18.0.1/24 --port 5001 --timeout 60 >"$out/pp.srv" 2>&1 &
spid=$!
# the server's port started and listening (a memif client does not retry); 60 s at most
for _ in $(seq 600); do grep -q listening "$out/pp.srv" 2>/dev/null && break; sleep 0.1; done
"$pp" -l "$lc_b" "${eal[@]}" --file-prefix "wnb-$$-pp-c" \
	--vdev "net_memif0,role=client,socket=$sock,socket-abstract=no" -- --client \
	--ip 198.18.0.2/24 --connect 198.18.0.1:5001 --size 8 --count "$lat_iters" --warmup 200 \
	--timeout 60 >"$out/pp.cli" 2>&1 || { kill -KILL "$spid" 2>/dev/null; fail "wn-tcp-pingpong"; }
wait "$spid" || fail "wn-tcp-pingpong server"
rm -rf "$sock" "/var/run/dpdk/wnb-$$-pp-s" "/var/run/dpdk/wnb-$$-pp-c"
cat "$out/pp.cli" >>"$log"

step "kernel TCP over loopback: iperf3 (one stream, $secs s), sockperf ping-pong ($secs s)"
# below the ephemeral ports (the connection runs above leave thousands in TIME-WAIT there);
# a port in use after all: another one
for try in 1 2 3 4 5; do
	port=$((10000 + RANDOM % 20000))
	iperf3 -s -1 -B 127.0.0.1 -p "$port" >"$out/iperf3.srv" 2>&1 &
	ipid=$!
	sleep 0.5
	kill -0 "$ipid" 2>/dev/null && break
	[ "$try" -lt 5 ] || fail "iperf3 server: $(cat "$out/iperf3.srv")"
done
iperf3 -c 127.0.0.1 -p "$port" -t "$secs" -J >"$out/iperf3.json" 2>>"$log" ||
	{ kill "$ipid" 2>/dev/null; fail "iperf3"; }
wait "$ipid"
port=$((port + 1))
sockperf server -i 127.0.0.1 -p "$port" --tcp >"$out/sockperf.srv" 2>&1 &
spid=$!
sleep 0.5
# 14 octets: sockperf's smallest message (its header)
sockperf ping-pong -i 127.0.0.1 -p "$port" --tcp -m 14 -t "$secs" >"$out/sockperf.out" 2>&1 ||
	{ kill "$spid"; fail "sockperf"; }
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null

if [ "$quick" = 0 ]; then
	step "instructions per message against raw (callgrind, test/bench/rdma_cost.sh)"
	WN_COST_MSGS=200 nice -n 0 bash "$top/test/bench/rdma_cost.sh" "$build" write:65536 \
		write:4096 write:64 send:64 mwrite:65536 swrite:65536 ssend:64 \
		write:65536:1 write:65536:16 write:65536:256 >"$out/cost.txt" \
		2>>"$log" ||
		fail "rdma_cost.sh (see $log)"
fi

step "report"
python3 "$top/test/bench/bench_report.py" "$out" "$quick" || fail "report"
gnuplot "$out/bench.gp" 2>>"$log" || fail "gnuplot"
echo "bench.sh: $out/bench.json, $out/bench.png" >&2
