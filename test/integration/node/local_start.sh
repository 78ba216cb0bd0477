#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The one-command start on one host, as a user runs it:
#   local_start.sh BUILD_DIR
# scripts/warpnic-up starts one warpnicd with no NIC, no peer and no hugepages, its address
# also on a kernel interface; then, through the shim, on that one host: rping (data
# verified), ib_write_bw and ib_write_lat (perftest, rdma_cm), qperf -cm1 (a TCP side
# channel to the device's address) and fi_pingpong -p verbs (libfabric finds the device
# with getifaddrs). Each program's own verdict counts; warpnic-up --stop removes the
# interface. In a private network namespace, with its own control socket and instance name.
set -uo pipefail
build=$(cd "${1:?usage: local_start.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../../.." && pwd)
if [ "${WN_LOCAL_NS:-}" != 1 ]; then
	exec unshare -n env WN_LOCAL_NS=1 "$0" "$@"
fi
ip link set lo up
export WN_BUILD=$build
tmp=$(mktemp -d /tmp/wn-local.XXXXXX)
name=wntest$$
up="$top/scripts/warpnic-up --name $name --ctl $tmp/ctl.sock --netdev wnl0 --ip 198.18.98.1/24"
run="$top/scripts/warpnic-run --ctl $tmp/ctl.sock"
A=198.18.98.1
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
cleanup() {
	$up --stop >/dev/null 2>&1
	jobs -p | xargs -r kill 2>/dev/null
	wait 2>/dev/null
	rm -rf "$tmp" "/run/warpnic/$name.log"
}
trap cleanup EXIT

# server &, client: both must exit 0 (the server waits at most 60 s after its client)
pair() {
	local tag=$1 srv=$2 cli=$3
	$run $srv >"$tmp/$tag.srv" 2>&1 &
	local s=$!
	sleep 1
	timeout 60 $run $cli >"$tmp/$tag.cli" 2>&1 || { bad "$tag client: $(tail -3 "$tmp/$tag.cli")"; }
	timeout 60 tail --pid=$s -f /dev/null 2>/dev/null
	wait $s || bad "$tag server: $(tail -3 "$tmp/$tag.srv")"
}

$up || { bad "warpnic-up failed"; cat "/run/warpnic/$name.log"; exit 1; }
$up --status >/dev/null || bad "warpnic-up --status: not running after start"
ip -br addr show wnl0 | grep -q "$A/24" || bad "the device's address is not on wnl0: $(ip -br addr)"
$run ibv_devinfo >"$tmp/devinfo" 2>&1 || bad "ibv_devinfo: $(cat "$tmp/devinfo")"

pair rping "rping -s -a $A -V -C 20" "rping -c -a $A -V -C 20"
pair ib_write_bw "ib_write_bw -R -s 65536 -n 1000" "ib_write_bw -R -s 65536 -n 1000 $A"
grep -q '^ 65536 ' "$tmp/ib_write_bw.cli" || bad "ib_write_bw printed no result: $(cat "$tmp/ib_write_bw.cli")"
pair ib_write_lat "ib_write_lat -R -s 8 -n 500" "ib_write_lat -R -s 8 -n 500 $A"
# qperf's server runs until killed: the client's verdict and figures count
$run qperf >"$tmp/qperf.srv" 2>&1 &
q=$!
sleep 1
if timeout 120 $run qperf "$A" -cm1 -t 1 -m 4096 rc_lat rc_bw >"$tmp/qperf.cli" 2>&1; then
	grep -q 'latency' "$tmp/qperf.cli" && grep -q 'bw' "$tmp/qperf.cli" ||
		bad "qperf -cm1: no figures: $(cat "$tmp/qperf.cli")"
else
	bad "qperf -cm1 (TCP side channel to $A): $(cat "$tmp/qperf.cli")"
fi
kill $q 2>/dev/null
pair fi_pingpong "fi_pingpong -p verbs -e msg -S 65536 -I 20" \
	"fi_pingpong -p verbs -e msg -S 65536 -I 20 $A"

$up --stop >/dev/null || bad "warpnic-up --stop"
ip link show wnl0 >/dev/null 2>&1 && bad "wnl0 still there after --stop"
[ -e "$tmp/ctl.sock" ] && bad "the control socket is still there after --stop"
[ "$fails" = 0 ] || exit 1
echo "local start: warpnic-up, then rping, ib_write_bw, ib_write_lat, qperf -cm1 and" \
	"fi_pingpong -p verbs on one warpnicd; stopped clean"
