#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Issue 12's figures for scripts/bench.sh: DDP over SCTP against MPA/TCP in one run, through
# one pair of warpnicd (scripts/wn-pair.sh) and unmodified perftest (rdma_cm, the verbs and
# rdma_cm shims), the client choosing its lower layer (WARPNIC_LLP=mpa|sctp, which the client
# library reads; A's listener takes both), alternating MPA, SCTP, MPA, SCTP ... for ROUNDS
# rounds: ib_write_bw -s 65536 -n BW_ITERS, then ib_write_lat -s 8 -n LAT_ITERS. Then, when
# FAULT_MIB > 0, test/integration/rnic's fault_sctp case (its own pair): Write, Read, Send
# and Atomics of FAULT_MIB MiB each over SCTP under 1 % drop + 1 % reorder both ways, checked
# octet for octet. Prints one JSON object on stdout:
#   {"rounds", "write_bw_65536": {"mpa": [Gbit/s...], "sctp": [...]},
#    "write_lat_8": {"mpa": [p50 us...], "sctp": [...]}, "sctp_sessions": N,
#    "fault": {"mib", "pass", "ops": {"write": s, ...}, "dropped", "reordered", "frames",
#              "retrans": [A, B]} or null}
# perftest's latency (t_typical, the median) is half a round trip. Reports numbers, never
# asserts timing: it fails when a run fails, when SCTP did not carry the SCTP rounds (A's
# sctp_sessions counts one per round, B sent no MPA FPDU in them), or a tool is missing.
#
#   sctp_bench.sh BUILD_DIR ROUNDS BW_ITERS LAT_ITERS FAULT_MIB
. "$(dirname "$0")/../interop/verbs/pair_lib.sh" "$1"
ROUNDS=${2:?rounds}
BW_ITERS=${3:?bw iters}
LAT_ITERS=${4:?lat iters}
FAULT_MIB=${5:?fault MiB (0: none)}
RNIC_IT=$WN_BUILD/test/integration/rnic/rnic_it
need ib_write_lat ib_write_bw
[ "$FAULT_MIB" = 0 ] || [ -x "$RNIC_IT" ] || missing "rnic_it not built"

pair_start >&2

# run LLP TOOL SIZE ITERS [OPTS...]: server on A, client on B, both with WARPNIC_LLP=LLP; the
# client's output in $T/LLP-TOOL-ROUND.out. perftest's clock calibration may fail on a
# starved machine ("Can't produce a report"): that, and only that, gets one more run.
run() {
	local llp=$1 tool=$2 size=$3 iters=$4 out attempt rc srv
	shift 4
	out=$T/$llp-$tool-$ROUND.out
	for attempt in 1 2; do
		WARPNIC_LLP=$llp bg_a "srv-$llp-$tool-$ROUND" "$tool" -R -F -s "$size" -n "$iters" "$@"
		srv=$BG_PID
		wait_server 20 || fail "$tool server is not listening"
		WARPNIC_LLP=$llp on_b "$tool" -R -F -s "$size" -n "$iters" "$@" "$A_IP" >"$out" 2>&1
		rc=$?
		if [ $rc -ne 0 ] && [ $attempt = 1 ] && grep -qs "Can't produce a report" "$out"; then
			wait_pid "$srv" 10 || kill -KILL "$srv" 2>/dev/null
			sleep 1
			continue
		fi
		[ $rc -eq 0 ] || { cat "$out" >&2; fail "$llp $tool -s $size: client exit status $rc"; }
		wait_pid "$srv" 20 || fail "$llp $tool -s $size: server failed"
		cat "$out" >&2
		return 0
	done
}

# sessions: A's DDP Stream Sessions over SCTP so far; fpdus: B's MPA FPDUs sent so far
sessions() { tel_field a /warpnic/dp/stats sctp_sessions; }
fpdus() { tel_field b /warpnic/dp/stats tx_fpdus; }

sctp_rounds=0
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
	for llp in mpa sctp; do
		note "round $ROUND: $llp" >&2
		s0=$(sessions) f0=$(fpdus) || fail "no telemetry"
		run "$llp" ib_write_bw 65536 "$BW_ITERS" --report_gbits
		run "$llp" ib_write_lat 8 "$LAT_ITERS"
		s1=$(sessions) f1=$(fpdus) || fail "no telemetry"
		if [ "$llp" = sctp ]; then
			# two connections each (perftest's rdma_cm), none of them MPA
			[ "$((s1 - s0))" -ge 2 ] && [ "$f1" = "$f0" ] ||
				fail "round $ROUND: SCTP did not carry it (sessions $s0 -> $s1, FPDUs $f0 -> $f1)"
			sctp_rounds=$((sctp_rounds + 1))
		else
			[ "$s1" = "$s0" ] && [ "$f1" -gt "$f0" ] ||
				fail "round $ROUND: MPA/TCP did not carry it (sessions $s0 -> $s1, FPDUs $f0 -> $f1)"
		fi
	done
done
daemons_alive || fail "a warpnicd died"
sessions=$(sessions)
env -u LD_LIBRARY_PATH "$PAIR" stop >/dev/null 2>&1

: >"$T/fault.out"
if [ "$FAULT_MIB" != 0 ]; then
	note "fault_sctp: $FAULT_MIB MiB each under 1 % drop + 1 % reorder" >&2
	WN_RNIC_MIB=$FAULT_MIB "$WN_TOP/test/integration/rnic/rnic_case.sh" "$WN_BUILD" \
		fault_sctp >"$T/fault.out" 2>&1
	rc=$?
	cat "$T/fault.out" >&2
	[ $rc -eq 0 ] || fail "fault_sctp at $FAULT_MIB MiB failed"
fi

python3 - "$T" "$ROUNDS" "$sessions" "$FAULT_MIB" <<'PY'
import json, re, sys
t, rounds, sessions, mib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

def row(path, size):
    # result rows: "#bytes #iterations numbers..."
    for line in open(path):
        f = line.split()
        if len(f) > 3 and f[0] == size and f[1].isdigit():
            return [float(x) for x in f]
    sys.exit("no result row for size %s in %s" % (size, path))

out = {"rounds": rounds, "write_bw_65536": {}, "write_lat_8": {}, "sctp_sessions": sessions,
       "fault": None}
for llp in ("mpa", "sctp"):
    # ib_write_bw: bytes iters BW_peak BW_average[Gb/s] MsgRate; ib_write_lat: bytes iters
    # t_min t_max t_typical ...
    out["write_bw_65536"][llp] = [row("%s/%s-ib_write_bw-%d.out" % (t, llp, r), "65536")[3]
                                  for r in range(1, rounds + 1)]
    out["write_lat_8"][llp] = [row("%s/%s-ib_write_lat-%d.out" % (t, llp, r), "8")[4]
                               for r in range(1, rounds + 1)]
if mib:
    text = open(t + "/fault.out").read()
    ops = {m.group(1): float(m.group(2)) for m in re.finditer(
        r"MATRIX fault_sctp (\w+): .* verified, checksums equal at both ends, ([0-9.]+) s", text)}
    f = re.search(r"MATRIX fault_sctp faults: (.*) of (\d+) frames", text)
    faults = dict((k, int(v)) for v, k in
                  (x.split()[::-1] for x in f.group(1).split(", "))) if f else {}
    rt = [int(x) for x in re.findall(r"MATRIX fault_sctp SCTP [AB]: \d+ DATA chunks sent, "
                                     r"(\d+) retransmitted", text)]
    # here rnic_case.sh exited 0: pytest passed the case, which checks every octet
    out["fault"] = {"mib": mib, "pass": True, "ops": ops,
                    "dropped": faults.get("drop", 0), "reordered": faults.get("reorder", 0),
                    "frames": int(f.group(2)) if f else 0, "retrans": rt}
    if sorted(ops) != ["atomic", "read", "send", "write"]:
        sys.exit("fault_sctp: not every operation reported: %s" % sorted(ops))
print(json.dumps(out))
PY
