#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Unmodified Debian perftest between two warpnicd (scripts/wn-pair.sh, through the verbs and
# rdma_cm shims of BUILD_DIR): ib_write_lat at each latency size, ib_write_bw at each
# bandwidth size (server on A, client on B, rdma_cm). Prints one JSON object on stdout for
# scripts/bench.sh:
#   {"write_lat": [{"size", "iters", "p50_us", "p99_us", "avg_us"}...],
#    "write_bw": [{"size", "iters", "Gbit/s", "Mmsg/s"}...],
#    "write_bw_qps": [{"qps", "iters", "Gbit/s", "Mmsg/s"}...]}
# Latencies are perftest's (half the round trip; p50 is its t_typical, the median).
# QPS (optional, e.g. 1:5000,16:300): ib_write_bw -s 65536 -q Q -n ITERS (iterations per QP)
# for each Q, the aggregate of Q QPs.
#
#   perftest_pair.sh BUILD_DIR LAT_SIZES BW_SIZES LAT_ITERS BW_ITERS [QPS]   (sizes: 8,4096)
# Exit status 0, 1 when a run fails or a tool is missing (scripts/setup.sh installs them).
. "$(dirname "$0")/../interop/verbs/pair_lib.sh" "$1"
IFS=, read -r -a lat_sizes <<<"${2:?lat sizes}"
IFS=, read -r -a bw_sizes <<<"${3:?bw sizes}"
lat_iters=${4:?lat iters}
bw_iters=${5:?bw iters}
need ib_write_lat ib_write_bw

pair_start >&2

# run TOOL SIZE ITERS [OPTS...]: one server on A, one client on B; the client's output in
# $T/TOOL-SIZE.out. perftest's clock calibration may fail on a starved machine ("Can't
# produce a report"): that, and only that, gets one more run.
run() {
	local tool=$1 size=$2 iters=$3 out=$T/$1-$2${RUN_TAG:-}.out attempt rc srv
	shift 3
	for attempt in 1 2; do
		bg_a "srv-$tool-$size" "$tool" -R -F -s "$size" -n "$iters" "$@"
		srv=$BG_PID
		wait_server 20 || fail "$tool server is not listening"
		on_b "$tool" -R -F -s "$size" -n "$iters" "$@" "$A_IP" >"$out" 2>&1
		rc=$?
		if [ $rc -ne 0 ] && [ $attempt = 1 ] && grep -qs "Can't produce a report" "$out"; then
			wait_pid "$srv" 10 || kill -KILL "$srv" 2>/dev/null
			sleep 1
			continue
		fi
		[ $rc -eq 0 ] || { cat "$out"; fail "$tool -s $size: client exit status $rc"; }
		wait_pid "$srv" 20 || fail "$tool -s $size: server failed"
		return 0
	done
}

for s in "${lat_sizes[@]}"; do
	run ib_write_lat "$s" "$lat_iters"
	cat "$T/ib_write_lat-$s.out" >&2
done
for s in "${bw_sizes[@]}"; do
	run ib_write_bw "$s" "$bw_iters" --report_gbits
	cat "$T/ib_write_bw-$s.out" >&2
done
IFS=, read -r -a qps <<<"${6:-}"
for qi in "${qps[@]}"; do
	RUN_TAG=-q${qi%%:*} run ib_write_bw 65536 "${qi#*:}" -q "${qi%%:*}" --report_gbits
	cat "$T/ib_write_bw-65536-q${qi%%:*}.out" >&2
done
daemons_alive || fail "a warpnicd died"

python3 - "$T" "$2" "$3" "${6:-}" <<'PY'
import json, sys
t, lat, bw = sys.argv[1], sys.argv[2].split(','), sys.argv[3].split(',')
qps = [q.split(':')[0] for q in sys.argv[4].split(',') if q]

def row(path, size):
    # result rows: "#bytes #iterations numbers..."
    for line in open(path):
        f = line.split()
        if len(f) > 3 and f[0] == size and f[1].isdigit():
            return [float(x) for x in f]
    sys.exit("no result row for size %s in %s" % (size, path))

out = {"write_lat": [], "write_bw": []}
for s in lat:
    # bytes iters t_min t_max t_typical t_avg t_stdev 99% 99.9%
    f = row("%s/ib_write_lat-%s.out" % (t, s), s)
    out["write_lat"].append({"size": int(s), "iters": int(f[1]), "p50_us": f[4],
                             "avg_us": f[5], "p99_us": f[7]})
for s in bw:
    # bytes iters BW_peak BW_average[Gb/s] MsgRate[Mpps]
    f = row("%s/ib_write_bw-%s.out" % (t, s), s)
    out["write_bw"].append({"size": int(s), "iters": int(f[1]), "Gbit/s": f[3],
                            "Mmsg/s": f[4]})
out["write_bw_qps"] = []
for q in qps:
    f = row("%s/ib_write_bw-65536-q%s.out" % (t, q), "65536")
    out["write_bw_qps"].append({"qps": int(q), "iters": int(f[1]), "Gbit/s": f[3],
                                "Mmsg/s": f[4]})
print(json.dumps(out))
PY
