#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Bulk transfer between the Linux kernel's TCP and warpnic's, verified by sha256 of the
# stream on both sides. If it fails, warpnic TCP does not interoperate with Linux (or
# loses/corrupts data under the given impairment).
#
#   tcp_bulk.sh BUILD_DIR to-warpnic|from-warpnic [IMPAIR_ARGS|none]
#
# to-warpnic: kernel client (kpeer.py send) → wn-tcpapp sink
# from-warpnic: wn-tcpapp source → kernel server (kpeer.py recv)
# IMPAIR_ARGS wraps warpnic's port with net_wn_impair (both directions).
. "$(dirname "$0")/lib.sh" "$1"
dir=${2:?direction}
impair=${3:-none}
imp=()
[ "$impair" = none ] || imp=(--impair "$impair")
echo "case: $dir, $BYTES bytes, impair $impair"

case "$dir" in
to-warpnic)
	start_app app --mode sink --ip "$WN_IP/24" --listen 5001 --conns 1 \
		--timeout "$CASE_TIMEOUT" "${imp[@]}"
	wait_line "$T/app.out" listening 30 || fail "sink did not start"
	kns timeout "$CASE_TIMEOUT" python3 "$KPEER" send "$WN_IP" 5001 "$BYTES" >"$T/kpeer.out" \
		2>"$T/kpeer.err" || fail "kernel client failed"
	wait_pid "$APP_PID" 60
	rc=$?
	sent=$(field "$T/kpeer.out" sha256 sha256)
	got=$(field "$T/app.out" '^conn ' sha256)
	gotn=$(field "$T/app.out" '^conn ' bytes)
	;;
from-warpnic)
	kns_bg timeout "$CASE_TIMEOUT" python3 "$KPEER" recv 5001 --ready "$T/ready" \
		>"$T/kpeer.out" 2>"$T/kpeer.err"
	kpid=$BG_PID
	wait_line "$T/ready" ready 10 || fail "kernel server did not start"
	start_app app --mode source --ip "$WN_IP/24" --connect "$K_IP:5001" --bytes "$BYTES" \
		--timeout "$CASE_TIMEOUT" "${imp[@]}"
	wait_pid "$APP_PID" "$((CASE_TIMEOUT + 30))"
	rc=$?
	wait_pid "$kpid" 30 || fail "kernel server did not finish"
	sent=$(field "$T/app.out" '^conn ' sha256)
	got=$(field "$T/kpeer.out" sha256 sha256)
	gotn=$(field "$T/kpeer.out" sha256 bytes)
	;;
*) echo "unknown direction $dir"; exit 2 ;;
esac

grep -E '^(sink|source|tcp|port|impair):' "$T/app.out"
cat "$T/kpeer.out"
[ "$rc" = 0 ] || fail "wn-tcpapp exit status $rc"
[ "$gotn" = "$BYTES" ] || fail "received $gotn bytes, expected $BYTES"
[ -n "$sent" ] && [ "$sent" = "$got" ] || fail "sha256 differs: sent $sent received $got"
if [ "$impair" != none ]; then
	grep -Eq '^impair: .*drop [1-9]' "$T/app.out" || fail "the impairer dropped nothing"
fi
echo "PASS: $BYTES bytes $dir, sha256 $got"
