#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# SYN flood from the kernel side (spoofed on-link sources, raw socket) while a kernel
# client sends a verified transfer to warpnic. If it fails, half-open connections starve
# real ones (backlog bound), or the flood's ARP/neighbour churn breaks the transfer.
#
#   tcp_synflood.sh BUILD_DIR        (WN_INTEROP_FLOOD_BYTES, default 64 MiB)
. "$(dirname "$0")/lib.sh" "$1"
bytes=${WN_INTEROP_FLOOD_BYTES:-67108864}
echo "case: SYN flood during a $bytes byte transfer"

start_app app --mode sink --ip "$WN_IP/24" --listen 5001 --conns 1 --max-conns 1024 \
	--timeout "$CASE_TIMEOUT"
wait_line "$T/app.out" listening 30 || fail "sink did not start"
kns timeout "$CASE_TIMEOUT" python3 "$KPEER" synflood "$WN_IP" 5001 600 >"$T/flood.out" \
	2>"$T/flood.err" &
fpid=$!
PIDS+=("$fpid")
sleep 2 # the backlog is full before the real client comes
kns timeout "$CASE_TIMEOUT" python3 "$KPEER" send "$WN_IP" 5001 "$bytes" >"$T/kpeer.out" \
	2>"$T/kpeer.err" || fail "kernel client failed during the flood"
wait_pid "$APP_PID" 60
rc=$?
kill -TERM "$fpid" 2>/dev/null
grep -E '^(sink|tcp|port):' "$T/app.out"
cat "$T/kpeer.out"
[ "$rc" = 0 ] || fail "wn-tcpapp exit status $rc"
sent=$(field "$T/kpeer.out" sha256 sha256)
got=$(field "$T/app.out" '^conn ' sha256)
[ -n "$sent" ] && [ "$sent" = "$got" ] || fail "sha256 differs: sent $sent received $got"
rx=$(field "$T/app.out" '^tcp:' rx_segs)
[ "${rx:-0}" -gt 10000 ] || fail "the flood did not reach warpnic (rx_segs $rx)"
echo "PASS: transfer intact under SYN flood"
