#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Instructions per message of an RDMA Write / Send through two run-to-completion dataplanes
# (both sides: TCP, MPA with CRC32c, DDP/RDMAP, lib/queue, the loop) against the raw port
# path moving the same octets (warpnic-perf raw_bw's frames: payload copied in, tx_burst,
# rx_burst, copied out), counted by callgrind in one thread over net_ring ports
# (wn-rdma-cost; repeatable on a loaded machine). The ratio raw / RDMA is the ceiling of
# "RDMA over raw" on a CPU-bound path such as memif, whatever the scheduler does. The modes
# swrite and ssend are Write and Send over DDP over SCTP (RFC 5043: lib/sctp, usrsctp) instead
# of MPA/TCP; their frames are DATA chunks of at most 1420 payload octets (1484 for MPA/TCP).
# Reports numbers; fails only when a run fails.
#
#   rdma_cost.sh BUILD_DIR [--native] [CASE...]   CASE: MODE:SIZE[:QPS] (default: write:65536
#                                                 write:4096 send:64 and raw at each size;
#                                                 MODE write|send|mwrite|swrite|ssend;
#                                                 mwrite: Write with MPA Markers both ways)
# A case with QPS spreads its messages over that many connections (at least 4 messages
# each), the octets in flight the same, with warpnicd's default TCP send budget (--tx-budget
# 131072, shared by the connections): what each QP added costs per message, the QP curve of
# scripts/bench.sh without the machine's noise. Its row's mode reads MODE/qQPS.
#   --native   run each case without callgrind, a few messages (a smoke: data moved, checked)
# Environment: WN_COST_MSGS (messages per case, default 400; 64 B cases x 8).
set -uo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR [--native] [CASE...]}" && pwd)
shift
native=0
if [ "${1:-}" = --native ]; then native=1; shift; fi
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(write:65536 write:4096 send:64)
bin=$build/test/bench/wn-rdma-cost
msgs=${WN_COST_MSGS:-400}
[ -x "$bin" ] || { echo "FAIL: missing prerequisite: wn-rdma-cost not built"; exit 1; }
if [ "$native" = 0 ]; then
	command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
		{ echo "FAIL: missing prerequisite: valgrind (scripts/setup.sh installs it)"; exit 1; }
fi
t=$(mktemp -d /tmp/wn-rdma-cost.XXXXXX)
trap 'rm -rf "$t"' EXIT

# ir MODE SIZE N [QPS BUDGET]: instructions of measure() (inclusive), or the native run's
# status
ir() {
	local f=$t/$1-$2-${4:-1}.out
	if [ "$native" = 1 ]; then
		"$bin" "$@" >"$f" 2>&1 || { cat "$f" >&2; echo "FAIL: $*" >&2; exit 1; }
		echo 0
		return
	fi
	valgrind --tool=callgrind --toggle-collect=measure --callgrind-out-file="$f.cg" \
		"$bin" "$@" >"$f" 2>&1 || { cat "$f" >&2; echo "FAIL: $*" >&2; exit 1; }
	# awk reads to the end: an early exit fails the pipeline (SIGPIPE, pipefail) at random
	callgrind_annotate "$f.cg" 2>/dev/null |
		awk '/PROGRAM TOTALS/ && !done { gsub(",", "", $1); print $1; done = 1 }'
}

printf '%-10s %8s %6s %14s %14s %12s %12s %10s\n' mode size msgs ir_per_msg raw_ir_per_msg \
	frames_msg ir_per_frame rdma/raw
for c in "${cases[@]}"; do
	IFS=: read -r mode size qps <<<"$c"
	n=$msgs
	[ "$size" -le 256 ] && n=$((msgs * 8))
	[ "$native" = 1 ] && n=$((n < 64 ? n : 64))
	qarg=() label=$mode
	if [ -n "$qps" ]; then
		[ "$n" -ge $((4 * qps)) ] || n=$((4 * qps))
		qarg=("$qps" 131072) label=$mode/q$qps
	fi
	a=$(ir "$mode" "$size" "$n" "${qarg[@]}") || exit 1
	b=$(ir raw "$size" "$n") || exit 1
	case "$mode" in
	swrite | ssend) frames=$(((size + 1419) / 1420)) ;; # DDP segments of 1420 octets
	*) frames=$(((size + 1483) / 1484)) ;;
	esac
	if [ "$native" = 1 ]; then
		printf '%-10s %8d %6d %14s %14s %12d %12s %10s\n' "$label" "$size" "$n" ok ok "$frames" - -
		continue
	fi
	awk -v m="$label" -v s="$size" -v n="$n" -v a="$a" -v b="$b" -v f="$frames" 'BEGIN {
		printf "%-10s %8d %6d %14.0f %14.0f %12d %12.0f %10.2f\n", m, s, n, a / n, b / n, f,
			a / n / f, a / b }'
done
