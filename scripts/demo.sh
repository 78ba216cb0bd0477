#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's demo: prepare the machine (scripts/setup.sh --run: what building and
# running need, 320 hugepages), build warpnic, start two warpnicd joined by net_memif
# (scripts/wn-pair.sh); run Debian's unmodified rping, ib_write_bw and ib_write_lat between
# them through the shim (scripts/warpnic-run); then measure RDMA Write/Read/Send bandwidth
# and latency with warpnic-perf next to the raw Ethernet baseline over the same kind of
# memif link, measured in the same run, and, as a short extra, the MPA wire core
# (wire_bw). Prints every RNIC figure beside the baseline and the ratio; each warpnic-perf
# figure is the median of three measurements (the machine may be shared). About a minute.
#
#   scripts/demo.sh [--no-setup] [--no-build] [--json] [--quick]
#
#   --no-setup   skip scripts/setup.sh --run (packages, hugepages)
#   --no-build   use the programs already built in WN_BUILD
#   --json       print one JSON object with every result instead of the tables
#   --quick      one size per mode, shorter measurements
#   -h, --help   this text
# Environment: WN_BUILD (build directory, default build), WN_PAIR_DIR (default /tmp/wn-demo).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

setup=1 build_it=1 json=0 quick=0
while [ $# -gt 0 ]; do
	case "$1" in
	--no-setup) setup=0; shift ;;
	--no-build) build_it=0; shift ;;
	--json) json=1; shift ;;
	--quick) quick=1; shift ;;
	-h|--help) sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "demo.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done

build=${WN_BUILD:-build}
case "$build" in /*) ;; *) build=$top/$build ;; esac
export WN_BUILD=$build WN_PAIR_DIR=${WN_PAIR_DIR:-/tmp/wn-demo}

if [ "$setup" = 1 ]; then
	echo "== scripts/setup.sh --run" >&2
	scripts/setup.sh --run >&2
fi

if [ "$build_it" = 1 ]; then
	echo "== build ($WN_BUILD)" >&2
	[ -f "$WN_BUILD/build.ninja" ] || meson setup "$WN_BUILD" >&2
	if ! ninja -C "$WN_BUILD" >&2; then
		# Another part of the tree may be mid-change; the demo needs two programs.
		echo "demo.sh: full build failed, building warpnic-perf and warpnicd alone" >&2
		ninja -C "$WN_BUILD" app/bin/warpnic-perf app/warpnicd/warpnicd >&2
	fi
fi
perf=$WN_BUILD/app/bin/warpnic-perf
for p in "$perf" "$WN_BUILD/app/warpnicd/warpnicd"; do
	[ -x "$p" ] || { echo "demo.sh: $p was not built (is DPDK installed?)" >&2; exit 1; }
done

if [ "$quick" = 1 ]; then
	bw_sizes=65536 lat_sizes=64 secs=0.3
else
	bw_sizes=4096,65536,1048576 lat_sizes=2,4096,65536 secs=0.4
fi
t=$(mktemp -d /tmp/wn-demo.XXXXXX)
spid=
cleanup() {
	[ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null
	scripts/wn-pair.sh stop >/dev/null 2>&1 || true
	# the baseline's EAL runtime directories (wn-pair.sh removes the pair's)
	rm -rf "$t" "/var/run/dpdk/wnd-$$-s" "/var/run/dpdk/wnd-$$-c"
}
trap cleanup EXIT
fail() {
	echo "demo.sh: $*" >&2
	tail -n 20 "$t"/*.log >&2 2>/dev/null || true
	scripts/wn-pair.sh logs 20 >&2 || true
	exit 1
}

# the same memory for the baseline and the dataplane: hugepages when there are enough
free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
# (two processes of 256 MB at a time: what setup.sh --run reserves)
if grep -q hugetlbfs /proc/mounts && [ "${free:-0}" -ge 300 ]; then
	raw_mem=(--in-memory -m 256) pair_mem=(--huge yes)
else
	raw_mem=(--no-huge --no-shconf -m 256) pair_mem=(--huge no)
fi
if [ "$(nproc)" -ge 2 ]; then lc_s=0 lc_c=1; else lc_s=0 lc_c=0; fi

# raw MODE SIZES: the baseline, two warpnic-perf processes over one memif
raw() {
	local m=$1 sizes=$2 memif="net_memif0,socket=$t/memif.sock,socket-abstract=no"
	rm -f "$t/memif.sock"
	"$perf" -l "$lc_s" "${raw_mem[@]}" --no-pci --file-prefix "wnd-$$-s" \
		--log-level=lib.eal:error --vdev "$memif,role=server" -- --mode "$m" --server \
		--timeout 30 >"$t/$m.server.log" 2>&1 &
	spid=$!
	for _ in $(seq 100); do [ -S "$t/memif.sock" ] && break; sleep 0.1; done
	"$perf" -l "$lc_c" "${raw_mem[@]}" --no-pci --file-prefix "wnd-$$-c" \
		--log-level=lib.eal:error --vdev "$memif,role=client" -- --mode "$m" --client any \
		--sweep="$sizes" --duration "$secs" --reps 3 --json "$t/$m.json" \
		>"$t/$m.client.log" 2>&1 || fail "$m failed"
	wait "$spid" || { spid=; fail "$m server failed"; }
	spid=
}

# rnic MODE SIZES [OPTIONS]: server on warpnicd B, client on A connecting to B
rnic() {
	local m=$1 sizes=$2
	shift 2
	"$perf" --mode "$m" --server --timeout 30 --ctl "$WN_PAIR_DIR/b.sock" \
		>"$t/$m.server.log" 2>&1 &
	spid=$!
	sleep 0.2
	"$perf" --mode "$m" --client 198.19.0.2 --ctl "$WN_PAIR_DIR/a.sock" --sweep="$sizes" \
		--duration "$secs" --reps 3 --json "$t/$m.json" "$@" >"$t/$m.client.log" 2>&1 ||
		fail "$m failed"
	wait "$spid" || { spid=; fail "$m server failed"; }
	spid=
}

echo "== baseline: raw Ethernet frames over memif (raw_bw, raw_lat)" >&2
raw raw_bw "$bw_sizes"
raw raw_lat "$lat_sizes"

echo "== two warpnicd on memif (scripts/wn-pair.sh start ${pair_mem[*]})" >&2
scripts/wn-pair.sh start --owner $$ "${pair_mem[@]}" >"$t/pair.log" 2>&1 ||
	fail "wn-pair.sh start"
# prog NAME SERVER-ARGS -- CLIENT-ARGS: an unmodified program, its server through the shim
# on B, its client on A; both must succeed
prog() {
	local name=$1 sargs=() cargs=()
	shift
	while [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	scripts/warpnic-run --ctl "$WN_PAIR_DIR/b.sock" "$name" "${sargs[@]}" \
		>"$t/$name.server.log" 2>&1 &
	spid=$!
	sleep 1
	timeout 120 scripts/warpnic-run --ctl "$WN_PAIR_DIR/a.sock" "$name" "${cargs[@]}" \
		>"$t/$name.client.log" 2>&1 || fail "$name failed (client)"
	timeout 60 tail --pid="$spid" -f /dev/null 2>/dev/null || true
	wait "$spid" || { spid=; fail "$name failed (server)"; }
	spid=
}
echo "== unmodified programs through the shim: rping, ib_write_bw, ib_write_lat" >&2
prog rping -s -a 198.19.0.2 -V -C 20 -S 4096 -- -c -a 198.19.0.2 -v -V -C 20 -S 4096
prog ib_write_bw -R -s 65536 -n 2000 -- -R -s 65536 -n 2000 198.19.0.2
prog ib_write_lat -R -s 8 -n 2000 -- -R -s 8 -n 2000 198.19.0.2
for m in write_bw read_bw send_bw; do
	echo "== $m" >&2
	rnic $m "$bw_sizes"
done
for m in write_lat read_lat send_lat; do
	echo "== $m" >&2
	rnic $m "$lat_sizes"
done
scripts/wn-pair.sh stop >/dev/null 2>&1 || true

echo "== extra: MPA framer/deframer on one lcore (wire_bw)" >&2
"$perf" --mode wire_bw --size 4096,64768 --iters 2000 --json "$t/wire_bw.json" \
	>"$t/wire_bw.log" 2>&1 || fail "wire_bw failed"

python3 - "$t" "$json" <<'PY'
import json, os, re, sys
t, as_json = sys.argv[1], sys.argv[2] == '1'
doc = {m: json.load(open(os.path.join(t, m + '.json')))
       for m in ('raw_bw', 'raw_lat', 'write_bw', 'read_bw', 'send_bw',
                 'write_lat', 'read_lat', 'send_lat', 'wire_bw')}


def perftest_row(name, size):
    # perftest's result line: the size first, then its figures
    for line in open(os.path.join(t, name + '.client.log')):
        f = line.split()
        if len(f) >= 5 and f[0] == str(size) and re.match(r'^[0-9]+$', f[1]):
            return [float(x) for x in f[1:] if re.match(r'^[0-9.]+$', x)]
    sys.exit('demo.sh: no %d-octet result line from %s' % (size, name))


rping_rounds = sum(1 for line in open(os.path.join(t, 'rping.client.log'))
                   if line.startswith('ping data'))
bw = perftest_row('ib_write_bw', 65536)   # iterations, BW peak, BW average (MB/s), MsgRate
lat = perftest_row('ib_write_lat', 8)     # iterations, t_min, t_max, t_typical, ...
raw64k = [r for r in doc['raw_bw']['results'] if r['size'] == 65536]
progs = {'rping': {'rounds': 20, 'size': 4096, 'verified': True},
         'ib_write_bw': {'size': 65536, 'MB/s': bw[2], 'Gbit/s': bw[2] * 8e6 / 1e9},
         'ib_write_lat': {'size': 8, 't_typical_us': lat[3]}}
base = {}
for m in ('raw_bw', 'raw_lat'):
    for r in doc[m]['results']:
        base[(m, r['size'])] = r
rows = []
for m in ('write_bw', 'read_bw', 'send_bw'):
    for r in doc[m]['results']:
        b = base[('raw_bw', r['size'])]
        rows.append({'mode': m, 'size': r['size'], 'metric': 'Gbit/s', 'rnic': r['Gbit/s'],
                     'raw': b['Gbit/s'], 'ratio': r['Gbit/s'] / b['Gbit/s']})
for m in ('write_lat', 'read_lat', 'send_lat'):
    for r in doc[m]['results']:
        b = base[('raw_lat', r['size'])]
        for q in ('p50_us', 'p99_us'):
            # read_lat is one whole Read; the baseline is half a round trip
            raw = b[q] * (2 if m == 'read_lat' else 1)
            rows.append({'mode': m, 'size': r['size'], 'metric': q, 'rnic': r[q], 'raw': raw,
                         'ratio': r[q] / raw})
if as_json:
    print(json.dumps({'demo': 'rnic_vs_raw', 'programs': progs, 'comparison': rows,
                      'runs': doc}, indent=1))
    sys.exit(0)
print('Debian\'s unmodified programs through the shim, server on warpnicd B, client on A')
print('  rping -V -C 20 -S 4096        %d rounds, data verified by rping on both sides'
      % rping_rounds)
line = '  ib_write_bw -R -s 65536       %.1f MB/s average = %.3f Gbit/s' % (
    bw[2], progs['ib_write_bw']['Gbit/s'])
if raw64k:
    line += ' (%.3f of raw memif at 64 KiB)' % (progs['ib_write_bw']['Gbit/s'] /
                                                 raw64k[0]['Gbit/s'])
print(line)
print('  ib_write_lat -R -s 8          t_typical %.2f us (half a round trip)' % lat[3])
print()
print('warpnic RNIC (two warpnicd over memif) vs raw Ethernet frames over memif, same run')
print('bandwidth: message octets; ratio = RNIC / raw (1.0 = the wire path itself)')
print('%-10s %8s  %-8s %12s %12s %9s' % ('mode', 'size', 'metric', 'RNIC', 'raw', 'RNIC/raw'))
for r in rows:
    if r['metric'] == 'Gbit/s':
        print('%-10s %8d  %-8s %12.3f %12.3f %9.3f' % (r['mode'], r['size'], r['metric'],
                                                      r['rnic'], r['raw'], r['ratio']))
print()
print('latency (us): half a ping-pong round trip (read_lat: one Read vs one raw round trip);')
print('ratio = RNIC / raw (how many times the raw frame path)')
print('%-10s %8s  %-8s %12s %12s %9s' % ('mode', 'size', 'metric', 'RNIC', 'raw', 'RNIC/raw'))
for r in rows:
    if r['metric'] != 'Gbit/s':
        print('%-10s %8d  %-8s %12.2f %12.2f %9.1f' % (r['mode'], r['size'], r['metric'],
                                                      r['rnic'], r['raw'], r['ratio']))
print()
print('extra: MPA wire core on one lcore (wire_bw, GB/s of ULPDU octets; ratio to memcpy)')
print('%-18s %8s %7s %9s %10s' % ('case', 'size', 'markers', 'GB/s', 'vs_memcpy'))
for r in doc['wire_bw']['results']:
    print('%-18s %8d %7s %9.3f %10.3f' % (r['name'], r['size'], r['markers'], r['GB/s'],
                                         r['vs_memcpy']))
PY
