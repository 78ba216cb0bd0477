#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Zero-copy transmit against copying, with the raw memif baseline of the same run:
#
#   test/bench/zc_compare.sh BUILD_DIR [SIZES] [ROUNDS]
#
# ROUNDS times (default 2): raw_bw (two warpnic-perf processes over one memif), a
# warpnicd pair copying (--zero-copy-tx off) and a pair with --zero-copy-tx on (default
# --zero-copy-min, 16 KiB), alternating so that the machine's load hits all alike; in each
# pair write_bw, send_bw and read_bw over SIZES (default 65536,262144,1048576), 3 x 0.4 s.
# Prints one Markdown table: the median over rounds per mode and size, each beside raw's and
# with the ratios. Reports only; asserts no timing. warpnic-perf checks the data it moved.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR [SIZES] [ROUNDS]}" && pwd)
sizes=${2:-65536,262144,1048576}
rounds=${3:-2}
perf=$build/app/bin/warpnic-perf
[ -x "$perf" ] && [ -x "$build/app/warpnicd/warpnicd" ] ||
	{ echo "FAIL: missing prerequisite: warpnic-perf or warpnicd not built" >&2; exit 1; }
t=$(mktemp -d /tmp/wn-zc.XXXXXX)
export WN_PAIR_DIR=$t/pair WN_BUILD=$build
spid=
cleanup() {
	[ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null
	"$top/scripts/wn-pair.sh" stop >/dev/null 2>&1
	rm -rf "/var/run/dpdk/wnz-$$-s" "/var/run/dpdk/wnz-$$-c"
	if [ -n "${WN_BENCH_KEEP:-}" ]; then echo "kept $t" >&2; else rm -rf "$t"; fi
}
trap cleanup EXIT
fail() {
	echo "zc_compare: $*" >&2
	tail -n 20 "$t"/*.log >&2 2>/dev/null
	"$top/scripts/wn-pair.sh" logs 20 >&2
	exit 1
}
free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
if grep -q hugetlbfs /proc/mounts && [ "${free:-0}" -ge 600 ]; then
	raw_mem=(--in-memory -m 256) pair_mem=(--huge yes)
else
	raw_mem=(--no-huge --no-shconf -m 256) pair_mem=(--huge no)
fi
if [ "$(nproc)" -ge 2 ]; then lc_s=0 lc_c=1; else lc_s=0 lc_c=0; fi

raw() { # ROUND: the baseline, two warpnic-perf processes over one memif
	local memif="net_memif0,socket=$t/memif.sock,socket-abstract=no"
	rm -f "$t/memif.sock"
	"$perf" -l "$lc_s" "${raw_mem[@]}" --no-pci --file-prefix "wnz-$$-s" \
		--log-level=lib.eal:error --vdev "$memif,role=server" -- --mode raw_bw --server \
		--timeout 30 >"$t/raw.s.log" 2>&1 &
	spid=$!
	for _ in $(seq 100); do [ -S "$t/memif.sock" ] && break; sleep 0.1; done
	"$perf" -l "$lc_c" "${raw_mem[@]}" --no-pci --file-prefix "wnz-$$-c" \
		--log-level=lib.eal:error --vdev "$memif,role=client" -- --mode raw_bw --client any \
		--sweep="$sizes" --duration 0.4 --reps 3 --json "$t/raw.$1.json" >"$t/raw.c.log" 2>&1 ||
		fail "raw_bw"
	wait "$spid"
	spid=
}

for r in $(seq "$rounds"); do
	raw "$r"
	for zc in off on; do
		"$top/scripts/wn-pair.sh" start --owner $$ "${pair_mem[@]}" --zero-copy "$zc" \
			>"$t/pair.log" 2>&1 || fail "wn-pair.sh start"
		for m in write_bw send_bw read_bw; do
			"$perf" --mode "$m" --server --timeout 30 --ctl "$WN_PAIR_DIR/b.sock" \
				>"$t/$m.s.log" 2>&1 &
			spid=$!
			sleep 0.2
			"$perf" --mode "$m" --client 198.19.0.2 --ctl "$WN_PAIR_DIR/a.sock" \
				--sweep="$sizes" --duration 0.4 --reps 3 \
				--json "$t/$m.$zc.$r.json" >"$t/$m.c.log" 2>&1 || fail "$m ($zc)"
			wait "$spid" || { spid=; fail "$m server ($zc)"; }
			spid=
		done
		"$top/scripts/wn-pair.sh" stop >/dev/null 2>&1
	done
done

python3 - "$t" "$rounds" <<'PY'
import json, statistics, sys
t, rounds = sys.argv[1], int(sys.argv[2])
raws = {}
for r in range(1, rounds + 1):
    for row in json.load(open('%s/raw.%d.json' % (t, r)))['results']:
        raws.setdefault(row['size'], []).append(row['Gbit/s'])
raw = {k: statistics.median(v) for k, v in raws.items()}
print('| mode | size | copy | zero-copy | raw memif | copy / raw | zero-copy / raw | zero-copy / copy |')
print('|---|---:|---:|---:|---:|---:|---:|---:|')
for m in ('write_bw', 'send_bw', 'read_bw'):
    v = {}
    for zc in ('off', 'on'):
        for r in range(1, rounds + 1):
            for row in json.load(open('%s/%s.%s.%d.json' % (t, m, zc, r)))['results']:
                v.setdefault((zc, row['size']), []).append(row['Gbit/s'])
    for size in sorted(raw):
        c = statistics.median(v[('off', size)])
        z = statistics.median(v[('on', size)])
        b = raw[size]
        print('| %s | %d KiB | %.2f Gbit/s | %.2f Gbit/s | %.1f Gbit/s | %.2f | %.2f | %.2f |'
              % (m, size // 1024, c, z, b, c / b, z / b, z / c if c else 0))
PY
