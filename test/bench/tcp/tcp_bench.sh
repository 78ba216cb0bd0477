#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# TCP bulk throughput, three ways in the same run on the same machine:
#   warpnic  wn-tcpapp source → wn-tcpapp sink, two processes over memif
#   raw      wn-tcpapp rawtx → rawrx over the same memif (the port's own packet path)
#   linux    iperf3 over loopback (kernel TCP)
# and the ratios warpnic/raw and warpnic/linux. Reports numbers, never asserts timing:
# it fails only when a run fails (or warpnic's sha256 differs between both ends).
#
#   tcp_bench.sh BUILD_DIR      (WN_BENCH_BYTES: TCP bytes, default 1 GiB;
#                                WN_BENCH_RAW_BYTES: raw bytes, default 4 GiB)
set -uo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
app=$build/app/bin/wn-tcpapp
bytes=${WN_BENCH_BYTES:-1073741824}
raw_bytes=${WN_BENCH_RAW_BYTES:-4294967296}
[ -x "$app" ] || { echo "SKIP: wn-tcpapp not built"; exit 77; }
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

# pair NAME SERVER_OPTS -- CLIENT_OPTS: two wn-tcpapp over one memif; sets srv_out, cli_out
pair() {
	local name=$1 sock=$t/$1.sock sopts=() copts=() rc
	shift
	while [ "$1" != -- ]; do sopts+=("$1"); shift; done
	shift
	copts=("$@")
	# shellcheck disable=SC2046
	"$app" -l "$lc_a" $(mem) --file-prefix "wnb-$$-$name-s" --log-level lib.eal:warning --no-pci \
		--vdev "net_memif0,role=server,socket=$sock" -- "${sopts[@]}" --timeout 300 \
		>"$t/$name.srv" 2>&1 &
	local spid=$!
	pids+=("$spid")
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
	# shellcheck disable=SC2046
	"$app" -l "$lc_b" $(mem) --file-prefix "wnb-$$-$name-c" --log-level lib.eal:warning --no-pci \
		--vdev "net_memif0,role=client,socket=$sock" -- "${copts[@]}" --timeout 300 \
		>"$t/$name.cli" 2>&1
	rc=$?
	wait "$spid"
	rc=$((rc | $?))
	srv_out=$t/$name.srv
	cli_out=$t/$name.cli
	return $rc
}

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

python3 - "$tcp_g" "$raw_g" "${linux_g:-}" <<'PY'
import json, sys
tcp, raw = float(sys.argv[1]), float(sys.argv[2])
linux = float(sys.argv[3]) if sys.argv[3] else None
print("%-28s %10s" % ("path", "Gbit/s"))
print("%-28s %10.3f" % ("warpnic TCP (memif)", tcp))
print("%-28s %10.3f" % ("raw memif frames", raw))
if linux is not None:
    print("%-28s %10.3f" % ("Linux TCP (loopback)", linux))
print("ratio warpnic/raw   %.3f" % (tcp / raw if raw else 0))
if linux:
    print("ratio warpnic/linux %.3f" % (tcp / linux))
print(json.dumps({"bench": "tcp_bulk", "warpnic_gbps": tcp, "raw_gbps": raw,
                  "linux_gbps": linux, "warpnic_vs_raw": tcp / raw if raw else None,
                  "warpnic_vs_linux": tcp / linux if linux else None}))
PY
