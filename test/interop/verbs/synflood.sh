#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A SYN flood against warpnicd itself (issue 15, exhaustion and abuse):
#   synflood.sh BUILD_DIR [SYNS]          (default 10000)
# Two warpnicd on a veth pair (wn-pair.sh --link af_packet); the kernel's side of B's veth
# gets a spare address and floods A's rping listener with SYNS spoofed SYNs from as many
# (address, port) pairs on the link (test/interop/kpeer.py synflood, a raw socket): SYNS
# half-open connections wanted. A keeps no more of them than its SYN backlog and answers
# the rest with SYN cookies (RFC 4987), so an rping through the shims started during the
# flood still connects and verifies its data, and one after it too; afterwards A's TCP
# connections are back to what the rpings left, both daemons and their control sockets
# healthy. Counters only (A's /warpnic/dp/tcp), never timing.
. "$(dirname "$0")/pair_lib.sh" "$1"
SYNS=${2:-10000}
KPEER=$WN_TOP/test/interop/kpeer.py
need rping python3 ip
pair_start --link af_packet
eval "$("$PAIR" env | grep -E '^WN_B_(NETNS|IFACE)=')"
[ -n "${WN_B_NETNS:-}" ] || fail "no af_packet namespaces"
# the kernel's side of B's link: an address of its own for the raw socket's route
ip -n "$WN_B_NETNS" addr add 198.19.0.9/24 dev "$WN_B_IFACE" 2>/dev/null ||
	fail "cannot address the kernel's side of B's link"
ip -n "$WN_B_NETNS" link set "$WN_B_IFACE" up

tcpv() { tel_field a /warpnic/dp/tcp "$1"; }

bg_a rping_server rping -s -P -a "$A_IP" -v -V -C 50 -S 100
srv=$BG_PID
wait_server 10 || fail "rping server is not listening"
before_conns=$(tcpv conns)
# SYNS SYNs at 2000 per second (a faster flood only fills the veth's queue): each from its own
# spoofed (address, port) on the link, none ever completed
secs=$(((SYNS + 1999) / 2000))
ip netns exec "$WN_B_NETNS" timeout $((secs + 20)) python3 "$KPEER" synflood "$A_IP" 7174 \
	"$secs" 2000 >"$T/flood.out" 2>&1 &
fpid=$!
sleep 1
note "rping during the flood"
on_b rping -c -a "$A_IP" -v -V -C 50 -S 100 >"$T/rping_during.out" 2>&1 ||
	fail "an rping during the flood failed (exit $?)"
wait "$fpid" || fail "the flood did not run: $(cat "$T/flood.out")"
cat "$T/flood.out"
sent=$(sed -n 's/^syns \([0-9]*\) .*/\1/p' "$T/flood.out")
[ "${sent:-0}" -ge "$SYNS" ] || fail "the flood sent ${sent:-0} SYNs, not $SYNS"
backlog=$(tcpv rx_drop_backlog) cookies=$(tcpv syncookies_sent) conns=$(tcpv conns)
note "A: $sent SYNs; over a full backlog $backlog, SYN cookies sent $cookies, TCP conns $conns"
# the half-open ones are bounded by the SYN backlog (max-conns / 4 = 256), not by the flood
[ "${conns:-0}" -le 512 ] || fail "A keeps $conns TCP connections after $sent SYNs"
[ "${backlog:-0}" -gt 0 ] && [ "${cookies:-0}" -gt 0 ] ||
	fail "the flood never filled A's SYN backlog (backlog drops $backlog, cookies $cookies)"
note "rping after the flood"
on_b rping -c -a "$A_IP" -v -V -C 50 -S 100 >"$T/rping_after.out" 2>&1 ||
	fail "an rping after the flood failed (exit $?)"
for f in rping_during rping_after; do
	[ "$(grep -c 'ping data: rdma-ping-' "$T/$f.out")" = 50 ] || fail "$f: not 50 rounds"
done
kill -0 "$srv" 2>/dev/null || fail "the persistent rping server exited"
daemons_alive || fail "a warpnicd died"
# the control sockets still serve a new client
on_a ibv_devinfo >/dev/null 2>&1 || fail "A's control socket does not serve ibv_devinfo"
echo "synflood: $sent spoofed SYNs; A kept $conns TCP connections (backlog drops $backlog," \
	"SYN cookies $cookies); rping during and after the flood verified 50 rounds each"
