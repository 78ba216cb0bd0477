#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Connections by the thousand (issue 26), for scripts/bench.sh: through two warpnicd
# (scripts/wn-pair.sh, one lcore each), rdma-core's cmtime, unmodified, opens N connections
# at once and tears them down (server on A, client on B), at each N; beside it wn-conn-rate,
# kernel TCP's connect + accept + close of N connections at once over loopback, the same N;
# then wn-cm-hold holds HOLD connections established and idle while both daemons' resident
# memory is read (before, while held): memory per idle connection. First, wn-ctl-cost times
# one control request of each kind through the shim on B (what each step is made of).
# Prints one JSON object:
#   {"cmtime": [{"n", "steps": {STEP: {"total_ms", "max_ms", "min_us", "us_per_conn"}}}],
#    "kernel": [{wn-conn-rate's --json}], "hold": {"n", "a_kb", "b_kb", "per_conn_kb"},
#    "requests": {wn-ctl-cost's --json}}
# cmtime's own counters judge it: every step printed, no failed event (it prints one and
# goes on), exit status 0.
#
#   conn_bench.sh BUILD_DIR NS HOLD      (NS: 1,1000,16384)
# Exit status 0, 1 when a run fails or a tool is missing (scripts/setup.sh installs them).
. "$(dirname "$0")/../interop/verbs/pair_lib.sh" "$1"
IFS=, read -r -a ns <<<"${2:?connection counts}"
hold=${3:?connections held}
need cmtime python3
rate=$WN_BUILD/test/bench/wn-conn-rate
cmhold=$WN_BUILD/test/bench/wn-cm-hold
[ -x "$rate" ] || missing "wn-conn-rate not built"
[ -x "$cmhold" ] || missing "wn-cm-hold not built"
ctlcost=$WN_BUILD/test/bench/wn-ctl-cost
[ -x "$ctlcost" ] || missing "wn-ctl-cost not built"
# cmtime -c 16384 through the shim, and wn-conn-rate's N sockets a side
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
STEP_TIMEOUT=${WN_CONN_TIMEOUT:-300}

pair_start >&2
on_b "$ctlcost" -n "${WN_CTL_COST_N:-1000}" --json >"$T/ctl_cost.json" 2>"$T/ctl_cost.err" ||
	{ cat "$T/ctl_cost.err" >&2; fail "wn-ctl-cost"; }

bg_a cmtime_server cmtime -b "$A_IP"
srv=$BG_PID
wait_server 20 || fail "cmtime server is not listening"
cost=$WN_TOP/test/bench/proc_cost.py
# the server: warpnic-run execs cmtime under the timeout wrapper bg_a started
procs=("a=$(cat "$WN_PAIR_DIR/a.pid")" "b=$(cat "$WN_PAIR_DIR/b.pid")"
	"server=$(pgrep -P "$srv" | head -1)")
for n in "${ns[@]}"; do
	out=$T/cmtime-$n.out
	python3 "$cost" snap "${procs[@]}" >"$T/snap0-$n.json"
	python3 "$cost" run "$T/client-$n.json" -- \
		timeout -k 5 "$STEP_TIMEOUT" "$RUN" --ctl "$B_CTL" --shim "$SHIM" \
		cmtime -s "$A_IP" -b "$B_IP" -c "$n" >"$out" 2>&1 ||
		{ cat "$out" >&2; fail "cmtime -c $n: client exit status $?"; }
	python3 "$cost" snap "${procs[@]}" >"$T/snap1-$n.json"
	python3 "$cost" diff "$T/snap0-$n.json" "$T/snap1-$n.json" >"$T/cost-$n.json"
	if grep -Eq 'event: RDMA_CM_EVENT|failure|failed|error' "$out" ||
		! grep -Eq '^destroy +:' "$out"; then
		cat "$out" >&2
		fail "cmtime -c $n: a failed event or no timing table"
	fi
	cat "$out" >&2
	python3 "$cost" run "$T/kcost-$n.json" -- "$rate" -c "$n" --json >"$T/kernel-$n.json" \
		2>>"$T/kernel.err" ||
		{ cat "$T/kernel.err" >&2; fail "wn-conn-rate -c $n"; }
done
kill "$srv" 2>/dev/null
pkill -KILL -P "$srv" 2>/dev/null

# memory per idle connection: both daemons' RSS before and while HOLD connections are held
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$(cat "$WN_PAIR_DIR/$1.pid")/status"; }
bg_a cm_hold_server "$cmhold" -l "$A_IP"
wait_server 20 || fail "wn-cm-hold server is not listening"
a0=$(rss a) b0=$(rss b)
# the client holds its connections until its stdin ends: a FIFO kept open until sampled
mkfifo "$T/hold.in"
on_b "$cmhold" -s "$A_IP" -c "$hold" <"$T/hold.in" >"$T/cm_hold.out" 2>&1 &
hpid=$!
exec 3>"$T/hold.in"
wait_line "$T/cm_hold.out" '^established' "$STEP_TIMEOUT" ||
	{ exec 3>&-; cat "$T/cm_hold.out" >&2; fail "wn-cm-hold: $hold not established"; }
a1=$(rss a) b1=$(rss b)
exec 3>&-
wait "$hpid" || { cat "$T/cm_hold.out" >&2; fail "wn-cm-hold client failed"; }

python3 - "$T" "$hold" "$a0" "$a1" "$b0" "$b1" "${ns[@]}" <<'PY'
import json, os, re, sys
t, hold, a0, a1, b0, b1 = sys.argv[1], int(sys.argv[2]), *map(int, sys.argv[3:7])
cm, kern = [], []
for n in map(int, sys.argv[7:]):
    steps = {}
    with open(os.path.join(t, "cmtime-%d.out" % n)) as f:
        for line in f:
            m = re.match(r"^(\S.*?)\s*:\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*$",
                         line)
            if m:
                steps[m.group(1)] = dict(zip(("total_ms", "max_ms", "min_us", "us_per_conn"),
                                             map(float, m.groups()[1:])))
    with open(os.path.join(t, "cost-%d.json" % n)) as f:
        cost = json.load(f)
    with open(os.path.join(t, "client-%d.json" % n)) as f:
        cost["client"] = json.load(f)
    cm.append({"n": n, "steps": steps, "cost": cost})
    with open(os.path.join(t, "kernel-%d.json" % n)) as f:
        k = json.load(f)
    with open(os.path.join(t, "kcost-%d.json" % n)) as f:
        k["cost"] = json.load(f)
    kern.append(k)
with open(os.path.join(t, "ctl_cost.json")) as f:
    requests = json.load(f)
print(json.dumps({"cmtime": cm, "kernel": kern, "requests": requests,
                  "hold": {"n": hold, "a_kb": [a0, a1], "b_kb": [b0, b1],
                           "per_conn_kb": {"a": (a1 - a0) / hold, "b": (b1 - b0) / hold}}}))
PY
