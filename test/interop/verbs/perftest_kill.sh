#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A perftest process killed (SIGKILL) in the middle of a transfer:
#   perftest_kill.sh BUILD_DIR client|server
# ib_write_bw -R -s 64 KiB runs between the instances (server on A, client on B); once data
# flows, the named side is killed with SIGKILL. Then:
#   - the killed process's warpnicd, which counted its objects in /warpnic/ctl (a client, a
#     QP, MRs) just before the kill, reclaims them: the counts (clients, PDs, MRs, CQs, SRQs,
#     QPs, CM channels and ids) and /warpnic/dp/stats active_qps return to zero;
#   - the surviving perftest learns that its peer is gone (its QP is flushed) and exits by
#     itself, after which the other instance's counts return to zero too;
#   - both warpnicd keep running, and a fresh ib_write_bw between them succeeds.
# Breaks if client death leaks objects or QPs in warpnicd, leaves a connection half open,
# or wedges the dataplane.
. "$(dirname "$0")/pair_lib.sh" "$1"
VICTIM=${2:?usage: $0 BUILD_DIR client|server}
need ib_write_bw

# counts_zero a|b: every object count of /warpnic/ctl and the dataplane's active QPs are 0
counts_zero() {
	local ctl qps
	ctl=$(tel "$1" /warpnic/ctl) || return 1
	qps=$(tel_field "$1" /warpnic/dp/stats active_qps) || return 1
	echo "$ctl" | python3 -c '
import json, sys
d = json.load(sys.stdin)
keys = ("clients", "pds", "mrs", "cqs", "srqs", "qps", "cm_channels", "cm_ids")
sys.exit(0 if all(d[k] == 0 for k in keys) else 1)' && [ "$qps" = 0 ]
}

# wait_zero a|b SECS
wait_zero() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		counts_zero "$1" && return 0
		sleep 0.1
	done
	echo "instance $1: /warpnic/ctl $(tel "$1" /warpnic/ctl)," \
		"active_qps $(tel_field "$1" /warpnic/dp/stats active_qps)"
	return 1
}

pair_start
# long enough never to finish before it is killed (64 KiB x 10^6)
bg_exec a server ib_write_bw -R -s 65536 -n 1000000
SRV=$BG_PID
wait_server 10 || fail "ib_write_bw server is not listening"
bg_exec b client ib_write_bw -R -s 65536 -n 1000000 "$A_IP"
CLI=$BG_PID

# data flows: B has sent thousands of FPDUs
for ((i = 0; i < 300; i++)); do
	n=$(tel_field b /warpnic/dp/stats tx_fpdus 2>/dev/null) || n=0
	[ "${n:-0}" -ge 5000 ] && break
	kill -0 "$CLI" 2>/dev/null || fail "ib_write_bw client ended before it was killed"
	sleep 0.1
done
[ "${n:-0}" -ge 5000 ] || fail "no data flowing after 30 s ($n FPDUs sent by B)"

if [ "$VICTIM" = client ]; then
	dead=b survivor=a victim_pid=$CLI survivor_pid=$SRV
else
	dead=a survivor=b victim_pid=$SRV survivor_pid=$CLI
fi
held=$(tel "$dead" /warpnic/ctl clients qps mrs) || fail "telemetry of $dead"
case "$held" in
"clients=0 "* | *" qps=0 "* | *" mrs=0") fail "warpnicd $dead holds no objects of the $VICTIM: $held" ;;
esac
note "data flowing ($n FPDUs sent by B), warpnicd $dead holds $held; kill -9 the $VICTIM"
kill -KILL "$victim_pid"
wait "$victim_pid" 2>/dev/null

wait_zero "$dead" 10 || fail "warpnicd $dead still holds objects of the killed $VICTIM"
note "warpnicd $dead reclaimed the killed $VICTIM's objects"
# the survivor's QP is flushed when the connection goes; perftest then gives up
wait_pid "$survivor_pid" 20
rc=$?
[ $rc -ne 124 ] || fail "surviving ib_write_bw ($survivor) still running 20 s after its peer died"
[ $rc -ne 0 ] || fail "surviving ib_write_bw ($survivor) reported success over a dead peer"
wait_zero "$survivor" 10 || fail "warpnicd $survivor still holds objects of the surviving process"
daemons_alive || fail "a warpnicd died"
note "surviving ib_write_bw exited ($rc), warpnicd $survivor reclaimed its objects"

# a fresh run works
bg_a server2 ib_write_bw -R -s 65536 -n 500
SRV2=$BG_PID
wait_server 10 || fail "second ib_write_bw server is not listening"
on_b ib_write_bw -R -s 65536 -n 500 "$A_IP" >"$T/client2.out" 2>&1 ||
	fail "second ib_write_bw client failed"
wait_pid "$SRV2" 20 || fail "second ib_write_bw server failed"
awk '$1 == 65536 && $2 == 500 && $4 + 0 > 0' "$T/client2.out" | grep -q . ||
	fail "second ib_write_bw printed no result"
wait_zero a 10 && wait_zero b 10 || fail "objects left after the second run"
echo "kill -9 of the $VICTIM: objects reclaimed on both instances, a new run passes:"
awk '$1 == 65536' "$T/client2.out"
