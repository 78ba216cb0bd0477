#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every limit the device advertises is reachable (dev_limits.c creates each object at its
# maximum, by count and by size), on a warpnicd of its own with a smaller region table and
# MR size (--max-mrs 1024 --max-mr-size 64: each deregistration waits for the dataplane's grace
# period and DONE, milliseconds on a loaded machine, so the run stays short; the limits are the
# daemon's, whatever they are set to), then the daemon has reclaimed everything (telemetry
# /warpnic/ctl: no object left):
#   dev_limits.sh BUILD_DIR DEV_LIMITS
set -u
build=$(cd "${1:?usage: dev_limits.sh BUILD_DIR DEV_LIMITS}" && pwd)
prog=${2:?usage: dev_limits.sh BUILD_DIR DEV_LIMITS}
top=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d /tmp/wn-dev-limits-XXXXXX)
sock=$tmp/ctl.sock prefix=wn-limits-$$
dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$tmp/warpnicd.log" ] && tail -20 "$tmp/warpnicd.log"; exit 1; }

env -u LD_LIBRARY_PATH "$build/app/warpnicd/warpnicd" --no-huge -m 256 --no-pci -l 0 \
	--file-prefix "$prefix" --vdev net_null0,no-rx=1 --log-level=lib.eal:error \
	-- --ip 198.18.0.1/24 --ctl "$sock" --max-mrs 1024 --max-mr-size 64 \
	>"$tmp/warpnicd.log" 2>&1 &
dpid=$!
for _ in $(seq 600); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "warpnicd did not start"
"$top/scripts/warpnic-run" --ctl "$sock" --shim "$build/drivers/verbs:$build/drivers/rdmacm" \
	"$prog" || fail "dev_limits"
tel=/var/run/dpdk/$prefix/dpdk_telemetry.v2
for _ in $(seq 300); do # the gone client's objects go after the dataplane's grace periods
	v=$("$top/scripts/wn-tel.py" "$tel" /warpnic/ctl clients pds mrs mws cqs srqs qps) ||
		fail "no /warpnic/ctl telemetry"
	[ "$v" = "clients=0 pds=0 mrs=0 mws=0 cqs=0 srqs=0 qps=0" ] && break
	sleep 0.2
done
[ "$v" = "clients=0 pds=0 mrs=0 mws=0 cqs=0 srqs=0 qps=0" ] ||
	fail "objects left after the program: $v"
kill -0 "$dpid" 2>/dev/null || fail "warpnicd died"
echo "PASS: every advertised limit reached; all reclaimed ($v)"
