#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# TCP bulk throughput and ping-pong latency, three ways in the same run on the same machine:
#   warpnic  wn-tcpapp source → wn-tcpapp sink, two processes over memif;
#            wn-tcp-pingpong client ↔ echo server over memif (64-octet round trips)
#   raw      wn-tcpapp rawtx → rawrx over the same memif (the port's own packet path);
#            warpnic-perf raw_lat (raw frame ping-pong; its half round trip doubled)
#   linux    iperf3 over loopback (kernel TCP); wn-tcp-pingpong --linux (kernel TCP
#            ping-pong over 127.0.0.1, TCP_NODELAY)
# and the ratios warpnic/raw and warpnic/linux. Reports numbers, never asserts timing:
# it fails only when a run fails (or warpnic's sha256 differs between both ends).
#
#   tcp_bench.sh BUILD_DIR      (WN_BENCH_BYTES: TCP bytes, default 1 GiB;
#                                WN_BENCH_RAW_BYTES: raw bytes, default 4 GiB;
#                                WN_BENCH_RTTS: round trips per latency run, default 50000)
set -uo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
app=$build/app/bin/wn-tcpapp
bytes=${WN_BENCH_BYTES:-1073741824}
raw_bytes=${WN_BENCH_RAW_BYTES:-4294967296}
rtts=${WN_BENCH_RTTS:-50000}
pp=$build/test/bench/tcp/wn-tcp-pingpong
perf=$build/app/bin/warpnic-perf
top=$(cd "$(dirname "$0")/../../.." && pwd)
[ -x "$app" ] || { echo "FAIL: missing prerequisite: wn-tcpapp not built"; exit 1; }
t=$(mktemp -d /tmp/wn-bench.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	sleep 0.5
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	[ -n "${WN_BENCH_KEEP:-}" ] && echo "logs kept in $t" || rm -rf "$t"
}
trap cleanup EXIT

mem() {
	local free
	free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
	if grep -q hugetlbfs /proc/mounts && [ "${free:-0}" -ge 600 ]; then
		echo "--in-memory"
	else
		echo "--no-huge --no-shconf -m 1024"
	fi
}
if [ "$(nproc)" -ge 2 ]; then lc_a=0 lc_b=1; else lc_a=0 lc_b=0; fi

# pair NAME SERVER_OPTS -- CLIENT_OPTS: two wn-tcpapp over one memif; sets srv_out, cli_out.
# Both --park and are stopped once both are parked: DPDK 22.11's memif unmaps the rings
# under a side that still polls when its peer leaves (SIGSEGV).
pair() {
	local name=$1 sock=$t/$1.sock sopts=() copts=() rc spid cpid
	shift
	while [ "$1" != -- ]; do sopts+=("$1"); shift; done
	shift
	copts=("$@")
	# shellcheck disable=SC2046
	"$app" -l "$lc_a" $(mem) --file-prefix "wnb-$$-$name-s" --log-level lib.eal:warning --no-pci \
		--vdev "net_memif0,role=server,socket=$sock" -- "${sopts[@]}" --timeout 300 --park \
		>"$t/$name.srv" 2>&1 &
	spid=$!
	pids+=("$spid")
	for _ in $(seq 600); do [ -S "$sock" ] && break; sleep 0.1; done # 60 s: a loaded machine
	# shellcheck disable=SC2046
	"$app" -l "$lc_b" $(mem) --file-prefix "wnb-$$-$name-c" --log-level lib.eal:warning --no-pci \
		--vdev "net_memif0,role=client,socket=$sock" -- "${copts[@]}" --timeout 300 --park \
		>"$t/$name.cli" 2>&1 &
	cpid=$!
	pids+=("$cpid")
	for _ in $(seq 3500); do
		parked "$t/$name.srv" "$spid" && parked "$t/$name.cli" "$cpid" && break
		sleep 0.2
	done
	kill -TERM "$cpid" 2>/dev/null
	wait "$cpid"
	rc=$?
	kill -TERM "$spid" 2>/dev/null
	wait "$spid"
	rc=$((rc | $?))
	srv_out=$t/$name.srv
	cli_out=$t/$name.cli
	return $rc
}
# parked or gone (a run that does not finish ends at its own --timeout)
parked() { grep -qx parked "$1" 2>/dev/null || ! kill -0 "$2" 2>/dev/null; }

gbps() { grep -E "$2" "$1" | head -n1 | sed -E 's/.* gbps ([0-9.]+).*/\1/'; }

echo "== warpnic TCP over memif: $bytes bytes"
pair tcp --mode sink --ip 198.18.0.1/24 --listen 5001 --conns 1 -- \
	--mode source --ip 198.18.0.2/24 --connect 198.18.0.1:5001 --bytes "$bytes" ||
	{ cat "$t/tcp.srv" "$t/tcp.cli"; echo "FAIL: warpnic TCP run"; exit 1; }
grep -E '^(conn|sink|source|tcp):' "$srv_out" "$cli_out"
s1=$(grep -E '^conn ' "$srv_out" | sed -E 's/.*sha256 ([0-9a-f]+).*/\1/')
s2=$(grep -E '^conn ' "$cli_out" | sed -E 's/.*sha256 ([0-9a-f]+).*/\1/')
[ -n "$s1" ] && [ "$s1" = "$s2" ] || { echo "FAIL: sha256 differs ($s1 vs $s2)"; exit 1; }
tcp_g=$(gbps "$srv_out" '^sink: conns')

echo "== raw memif (rawtx → rawrx): $raw_bytes bytes of 1514-byte frames"
pair raw --mode rawrx --bytes "$raw_bytes" -- --mode rawtx --bytes "$raw_bytes" ||
	{ cat "$t/raw.srv" "$t/raw.cli"; echo "FAIL: raw run"; exit 1; }
cat "$srv_out" "$cli_out" | grep -E '^raw'
raw_g=$(gbps "$srv_out" '^rawrx:')

linux_g=
if command -v iperf3 >/dev/null; then
	echo "== Linux TCP over loopback (iperf3): $bytes bytes"
	port=$((20000 + RANDOM % 20000))
	iperf3 -s -1 -B 127.0.0.1 -p "$port" >"$t/iperf.srv" 2>&1 &
	pids+=($!)
	sleep 0.5
	if iperf3 -c 127.0.0.1 -p "$port" -n "$bytes" -J >"$t/iperf.json" 2>"$t/iperf.err"; then
		linux_g=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));
print("%.3f" % (d["end"]["sum_received"]["bits_per_second"] / 1e9))' "$t/iperf.json")
	fi
fi

# ---- ping-pong latency (64 octets, round trip) ----
tcp_rtt= raw_rtt= linux_rtt=
if [ -x "$pp" ]; then
	echo "== warpnic TCP ping-pong over memif: $rtts round trips of 64 octets"
	sock=$t/pp.sock
	# shellcheck disable=SC2046
	"$pp" -l "$lc_a" $(mem) --file-prefix "wnb-$$-pp-s" --log-level lib.eal:warning --no-pci \
		--vdev "net_memif0,role=server,socket=$sock" -- --server --ip 198.18.0.1/24 \
		--port 5001 --timeout 120 >"$t/pp.srv" 2>&1 &
	spid=$!
	pids+=("$spid")
	for _ in $(seq 600); do grep -q listening "$t/pp.srv" 2>/dev/null && break; sleep 0.1; done
	# shellcheck disable=SC2046
	"$pp" -l "$lc_b" $(mem) --file-prefix "wnb-$$-pp-c" --log-level lib.eal:warning --no-pci \
		--vdev "net_memif0,role=client,socket=$sock" -- --client --ip 198.18.0.2/24 \
		--connect 198.18.0.1:5001 --count "$rtts" --warmup 2000 --timeout 120 \
		>"$t/pp.cli" 2>&1 ||
		{ cat "$t/pp.srv" "$t/pp.cli"; echo "FAIL: warpnic ping-pong"; exit 1; }
	wait "$spid" || { cat "$t/pp.srv"; echo "FAIL: warpnic ping-pong server"; exit 1; }
	grep '^pingpong: path' "$t/pp.cli"
	tcp_rtt=$(sed -nE 's/^pingpong: path .* p50_us ([0-9.]+).*/\1/p' "$t/pp.cli")
	echo "== Linux TCP ping-pong over loopback: $rtts round trips of 64 octets"
	"$pp" --linux --count "$rtts" --warmup 2000 >"$t/pp.linux" 2>&1 ||
		{ cat "$t/pp.linux"; echo "FAIL: Linux ping-pong"; exit 1; }
	cat "$t/pp.linux"
	linux_rtt=$(sed -nE 's/^pingpong: path .* p50_us ([0-9.]+).*/\1/p' "$t/pp.linux")
fi
if [ -x "$perf" ]; then
	echo "== raw memif ping-pong (warpnic-perf raw_lat): $rtts round trips of 64 octets"
	if bash "$top/test/bench/perf_pair.sh" "$build" raw raw_lat --sweep=64 --iters "$rtts" \
		--timeout 60 >"$t/rawlat.json" 2>"$t/rawlat.err"; then
		cat "$t/rawlat.json"
		echo
		raw_rtt=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]
print("%.3f" % (2 * r["p50_us"]))' "$t/rawlat.json")
	else
		cat "$t/rawlat.err"
		echo "FAIL: raw ping-pong"
		exit 1
	fi
fi

python3 - "$tcp_g" "$raw_g" "${linux_g:-}" "${tcp_rtt:-}" "${raw_rtt:-}" "${linux_rtt:-}" <<'PY'
import json, sys
tcp, raw = float(sys.argv[1]), float(sys.argv[2])
linux = float(sys.argv[3]) if sys.argv[3] else None
lat = [float(x) if x else None for x in sys.argv[4:7]]
print("%-28s %10s %16s" % ("path", "Gbit/s", "RTT p50 (us)"))
for name, g, l in (("warpnic TCP (memif)", tcp, lat[0]), ("raw memif frames", raw, lat[1]),
                   ("Linux TCP (loopback)", linux, lat[2])):
    print("%-28s %10s %16s" % (name, "%.3f" % g if g is not None else "-",
                               "%.2f" % l if l is not None else "-"))
print("ratio warpnic/raw   bulk %.3f" % (tcp / raw if raw else 0) +
      ("  rtt %.2f" % (lat[0] / lat[1]) if lat[0] and lat[1] else ""))
if linux:
    print("ratio warpnic/linux bulk %.3f" % (tcp / linux) +
          ("  rtt %.3f" % (lat[0] / lat[2]) if lat[0] and lat[2] else ""))
print(json.dumps({"bench": "tcp_bulk", "warpnic_gbps": tcp, "raw_gbps": raw,
                  "linux_gbps": linux, "warpnic_vs_raw": tcp / raw if raw else None,
                  "warpnic_vs_linux": tcp / linux if linux else None,
                  "warpnic_rtt_us": lat[0], "raw_rtt_us": lat[1], "linux_rtt_us": lat[2],
                  "rtt_warpnic_vs_raw": lat[0] / lat[1] if lat[0] and lat[1] else None,
                  "rtt_warpnic_vs_linux": lat[0] / lat[2] if lat[0] and lat[2] else None}))
PY
