#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# SYN flood from the kernel side (spoofed on-link sources, raw socket) while a kernel
# client's verified transfer to warpnic runs. If it fails, the flood (half-open
# connections filling the backlog, SYN-ACK retransmissions, ARP churn for the spoofed
# sources) disturbs an established connection: data lost, reset or stalled; or a new
# connection during the flood is refused: with the backlog full only a SYN cookie
# (RFC 4987) can admit it. The newcomer's SYN-ACK is captured to show it was a cookie:
# its TSval's low 6 bits carry the client's window scale and SACK-permitted (0x10).
#
#   tcp_synflood.sh BUILD_DIR        (WN_INTEROP_FLOOD_BYTES, default 32 MiB: the flood and
#                                  the client share one core with the kernel)
. "$(dirname "$0")/lib.sh" "$1"
bytes=${WN_INTEROP_FLOOD_BYTES:-33554432}
echo "case: SYN flood during a $bytes byte transfer"

start_app app --mode sink --ip "$WN_IP/24" --listen 5001 --max-conns 1024 \
	--timeout "$CASE_TIMEOUT"
wait_line "$T/app.out" listening 30 || fail "sink did not start"
kns_bg timeout "$CASE_TIMEOUT" python3 "$KPEER" send "$WN_IP" 5001 "$bytes" >"$T/kpeer.out" \
	2>"$T/kpeer.err"
cpid=$BG_PID
sleep 0.5 # the transfer is established before the flood starts
kns_bg timeout "$CASE_TIMEOUT" python3 "$KPEER" synflood "$WN_IP" 5001 600 >"$T/flood.out" \
	2>"$T/flood.err"
fpid=$BG_PID
wait_pid "$cpid" "$CASE_TIMEOUT" || fail "kernel client failed during the flood"
# A newcomer while the flood goes on at 2000 SYNs/s: the half-open entries keep the backlog
# full, and a full-rate flood would also fill the tap's queue, where the newcomer's SYN
# would be lost before warpnic could answer anything.
kill -TERM "$fpid" 2>/dev/null || true
wait_pid "$fpid" 5 >/dev/null || true
kns_bg timeout "$CASE_TIMEOUT" python3 "$KPEER" synflood "$WN_IP" 5001 600 2000 \
	>"$T/flood2.out" 2>"$T/flood2.err"
fpid=$BG_PID
sleep 1
# its handshake captured (the flood's sources are not .1)
have_cap=
if command -v dumpcap >/dev/null && command -v tshark >/dev/null; then
	kns_bg dumpcap -q -i "$WN_TAP" -f "host $K_IP and tcp[13] & 2 != 0" -c 2 \
		-a duration:30 -w "$T/late.pcapng" >"$T/dumpcap.out" 2>&1
	have_cap=$BG_PID
	wait_line "$T/dumpcap.out" "File:|Capturing" 5 || true
	sleep 1 # "Capturing" comes before the capture filter is in place
fi
kns timeout 20 python3 "$KPEER" send "$WN_IP" 5001 65536 >"$T/late.out" 2>"$T/late.err" ||
	fail "a new connection during the flood was not accepted (SYN cookies?)"
if [ -n "$have_cap" ]; then
	# SYN and SYN-ACK make dumpcap stop (a TERM could lose what the kernel still buffers)
	wait_pid "$have_cap" 10 >/dev/null || kill -TERM "$have_cap" 2>/dev/null || true
fi
kill -TERM "$fpid" 2>/dev/null || true
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
# the newcomer's data arrived intact
late=$(field "$T/late.out" sha256 sha256)
grep -Eq "^conn .* bytes 65536 sha256 $late" "$T/app.out" ||
	fail "the connection made during the flood did not deliver its 65536 bytes"
if [ -n "$have_cap" ]; then
	# SYN (client's window scale) then SYN-ACK (TSval) of the newcomer
	tshark -r "$T/late.pcapng" -T fields -e tcp.flags.ack -e tcp.options.wscale.shift \
		-e tcp.options.timestamp.tsval -e tcp.options.sack_perm 2>/dev/null >"$T/late.txt"
	cat "$T/late.txt"
	python3 - "$T/late.txt" <<'PY' || fail "the newcomer's SYN-ACK does not carry a SYN cookie"
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
syn = [r for r in rows if r[0] in ("0", "False")]
synack = [r for r in rows if r[0] in ("1", "True")]
if not syn or not synack:
    sys.exit("handshake not captured")
ws = int(syn[-1][1]) if syn[-1][1] else 0xF
want = ws | (0x10 if syn[-1][3] else 0)
got = int(synack[-1][2]) & 0x3F
print("cookie: client wscale %d, SYN-ACK TSval low bits 0x%02x (want 0x%02x)" % (ws, got, want))
sys.exit(0 if got == want else 1)
PY
fi
echo "PASS: transfer intact under SYN flood ($drops SYNs over the full backlog); a connection" \
	"made during it through a SYN cookie delivered its data"
