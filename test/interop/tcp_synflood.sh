#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# SYN flood from the kernel side (spoofed on-link sources, raw socket) while a kernel
# client's verified transfer to warpnic runs. If it fails, the flood (half-open
# connections filling the backlog, SYN-ACK retransmissions, ARP churn for the spoofed
# sources) disturbs an established connection: data lost, reset or stalled.
# A new connection attempt during the flood is reported, not asserted: lib/tcp has no
# SYN cookies yet, so a full backlog refuses newcomers until half-open entries expire.
#
#   tcp_synflood.sh BUILD_DIR        (WN_INTEROP_FLOOD_BYTES, default 32 MiB: the flood and
#                                  the client share one core with the kernel)
. "$(dirname "$0")/lib.sh" "$1"
bytes=${WN_INTEROP_FLOOD_BYTES:-33554432}
echo "case: SYN flood during a $bytes byte transfer"

start_app app --mode sink --ip "$WN_IP/24" --listen 5001 --max-conns 1024 \
	--timeout "$CASE_TIMEOUT"
wait_line "$T/app.out" listening 30 || fail "sink did not start"
kns timeout "$CASE_TIMEOUT" python3 "$KPEER" send "$WN_IP" 5001 "$bytes" >"$T/kpeer.out" \
	2>"$T/kpeer.err" &
cpid=$!
PIDS+=("$cpid")
sleep 0.5 # the transfer is established before the flood starts
kns timeout "$CASE_TIMEOUT" python3 "$KPEER" synflood "$WN_IP" 5001 600 >"$T/flood.out" \
	2>"$T/flood.err" &
fpid=$!
PIDS+=("$fpid")
wait_pid "$cpid" "$CASE_TIMEOUT" || fail "kernel client failed during the flood"
# a newcomer during the flood (informational)
if kns timeout 10 python3 "$KPEER" send "$WN_IP" 5001 65536 >"$T/late.out" 2>"$T/late.err"
then
	echo "info: a new connection during the flood was accepted"
else
	echo "info: a new connection during the flood was not accepted (backlog full)"
fi
kill -TERM "$fpid" 2>/dev/null
sleep 0.5
kill -INT "$APP_PID" 2>/dev/null
wait_pid "$APP_PID" 30
grep -E '^(sink|tcp|port):' "$T/app.out"
cat "$T/kpeer.out"
sent=$(field "$T/kpeer.out" sha256 sha256)
got=$(grep -E '^conn 0 ' "$T/app.out" | sed -E 's/.*sha256 ([0-9a-f]+).*/\1/')
gotn=$(grep -E '^conn 0 ' "$T/app.out" | sed -E 's/.* bytes ([0-9]+).*/\1/')
[ "$gotn" = "$bytes" ] || fail "received ${gotn:-nothing}, expected $bytes bytes"
[ -n "$sent" ] && [ "$sent" = "$got" ] || fail "sha256 differs: sent $sent received $got"
rx=$(field "$T/app.out" '^tcp:' rx_segs)
drops=$(field "$T/app.out" '^tcp:' rx_drop_backlog)
[ "${drops:-0}" -gt 0 ] || fail "the flood never filled the backlog (rx_segs $rx)"
echo "PASS: transfer intact under SYN flood ($drops SYNs dropped at the full backlog)"
