#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Start or stop two warpnicd instances joined by net_memif (the "embedded default link").
#
#   scripts/wn-pair.sh start [--impair SPEC] [--pcap DIR] [--no-huge] [--lcores N]
#                            [-- WARPNICD-OPTS...]
#   scripts/wn-pair.sh stop
#   scripts/wn-pair.sh env          # print the shell variables below
#
#   A: control socket $WN_PAIR_DIR/a.sock, IP 198.19.0.1/24, memif server, device wn_a
#   B: control socket $WN_PAIR_DIR/b.sock, IP 198.19.0.2/24, memif client, device wn_b
#   WN_PAIR_DIR defaults to /tmp/wn-pair; logs in $WN_PAIR_DIR/{a,b}.log.
#   --impair SPEC  wrap B's port with the fault injector, e.g. drop=0.01,reorder=0.01,dup=0.001
#   --pcap DIR     each instance writes DIR/{a,b}.pcapng
#   --no-huge      run without hugepages (EAL --no-huge -m 256)
#   --lcores N     N dataplane lcores (port queues) per instance (default 1)
#   WN_BUILD       build directory (default build/ next to this script)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${WN_PAIR_DIR:-/tmp/wn-pair}
build=${WN_BUILD:-$top/build}
bin=$build/app/warpnicd/warpnicd

usage() { sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'; }

print_env() {
	cat <<EOF
WN_PAIR_DIR=$dir
WN_A_CTL=$dir/a.sock
WN_B_CTL=$dir/b.sock
WN_A_IP=198.19.0.1
WN_B_IP=198.19.0.2
EOF
}

stop() {
	local n pid
	for n in a b; do
		[ -f "$dir/$n.pid" ] || continue
		pid=$(cat "$dir/$n.pid")
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid" 2>/dev/null || true
			for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -KILL "$pid" 2>/dev/null || true
		fi
		rm -f "$dir/$n.pid"
	done
	rm -f "$dir/memif.sock"
}

wait_ready() {
	local n=$1 pid=$2
	for _ in $(seq 300); do
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "wn-pair: warpnicd $n exited; log:" >&2
			tail -20 "$dir/$n.log" >&2
			return 1
		fi
		grep -q "warpnicd: serving" "$dir/$n.log" 2>/dev/null && [ -S "$dir/$n.sock" ] && return 0
		sleep 0.1
	done
	echo "wn-pair: warpnicd $n not ready after 30 s; log:" >&2
	tail -20 "$dir/$n.log" >&2
	return 1
}

start() {
	local lcores=1 impair="" pcap="" mem=(--huge-dir /dev/hugepages --huge-unlink -m 256) extra=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--impair) impair=$2; shift 2 ;;
		--pcap) pcap=$2; shift 2 ;;
		--no-huge) mem=(--no-huge -m 256); shift ;;
		--lcores) lcores=$2; shift 2 ;;
		--) shift; extra=("$@"); break ;;
		*) echo "wn-pair: unknown option $1" >&2; exit 2 ;;
		esac
	done
	[ -x "$bin" ] || { echo "wn-pair: $bin not built (ninja -C $build)" >&2; exit 2; }
	mkdir -p "$dir"
	stop
	# EAL runtime files per pair, so several pairs (parallel tests) can run at once
	local tag
	tag=$(printf '%s' "$dir" | cksum | cut -d' ' -f1)
	local n role ip mac cpu vdevs pid pcap_opt
	for n in a b; do
		if [ $n = a ]; then role=server; ip=198.19.0.1; mac=02:77:6e:00:00:01; cpu=0
		else role=client; ip=198.19.0.2; mac=02:77:6e:00:00:02; cpu=$(( $(nproc) > 1 ? 1 : 0 )); fi
		vdevs=(--vdev "net_memif0,role=$role,id=0,socket=$dir/memif.sock,socket-abstract=no,mac=$mac")
		if [ $n = b ] && [ -n "$impair" ]; then
			vdevs+=(--vdev "net_wn_impair0,port=net_memif0,queues=$lcores,$impair")
		fi
		pcap_opt=()
		[ -n "$pcap" ] && { mkdir -p "$pcap"; pcap_opt=(--pcap "$pcap/$n.pcapng"); }
		# N lcores each (--idle-us naps when idle, so clients get CPU time too); lcore i
		# of instance b runs on CPU (i+1) mod nproc, of a on CPU i mod nproc
		local lmap="" i
		for ((i = 0; i < lcores; i++)); do
			lmap+="${lmap:+,}$i@$(( (i + cpu) % $(nproc) ))"
		done
		"$bin" --lcores "$lmap" --file-prefix "wn_${n}_$tag" --proc-type primary --no-pci "${mem[@]}" \
			--log-level lib.eal:error "${vdevs[@]}" -- \
			--ip "$ip/24" --ctl "$dir/$n.sock" --name "wn_$n" "${pcap_opt[@]}" "${extra[@]}" \
			>"$dir/$n.log" 2>&1 &
		pid=$!
		echo "$pid" >"$dir/$n.pid"
		wait_ready $n "$pid" || { stop; exit 1; }
	done
	print_env
}

case "${1:-}" in
start) shift; start "$@" ;;
stop) stop ;;
env) print_env ;;
-h|--help) usage ;;
*) usage >&2; exit 2 ;;
esac
