#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Neighbour discovery and Duplicate Address Detection of warpnicd (lib/net, RFC 4861/4862)
# against another warpnicd and against the Linux kernel's IPv6:
#   ipv6_ndp.sh BUILD_DIR
# 1) memif, IPv6 only: B restarted with A's address as a second one: A defends it (NA to
#    all nodes), B finds it duplicate and never uses it; rping still runs over B's own.
# 2) af_packet over veth (wn-pair.sh --link af_packet --ipv6 --no-ipv4): the kernel of A's
#    namespace, on the veth A's warpnicd uses, gets fd77:6e::99/64 and
#    - resolves warpnicd B's address by NDP (a UDP datagram to it: the kernel's neighbour
#      entry holds B's MAC) and gets ICMPv6 echo replies from warpnicd B;
#    - tries to add fd77:6e::2, warpnicd B's address: its DAD probe is answered by warpnicd
#      B and the kernel marks the address "dadfailed".
export WN_VERBS_IP=6
. "$(dirname "$0")/pair_lib.sh" "$1"
need rping python3

# state_of SIDE ADDR/PREFIX: its DAD state in /warpnic/dp/net
state_of() {
	tel "$1" /warpnic/dp/net | python3 -c '
import json, sys
a = [x.split()[1] for x in json.load(sys.stdin)["addrs"] if x.split()[0] == sys.argv[1]]
print(a[0] if a else "absent")' "$2"
}

# ---- 1) two daemons, one address
pair_start
note "B restarted with A's address fd77:6e::1/64 as a second address"
env -u LD_LIBRARY_PATH "$PAIR" restart b --ip fd77:6e::1/64 >"$T/restart.out" 2>&1 &&
	fail "restart of B succeeded with a duplicate address: $(cat "$T/restart.out")"
grep -q "IPv6 addresses of b not usable" "$T/restart.out" ||
	fail "restart of B failed for another reason: $(cat "$T/restart.out")"
st=$(state_of b fd77:6e::1/64)
[ "$st" = duplicate ] || fail "B's fd77:6e::1: $st, not duplicate"
st=$(state_of b fd77:6e::2/64)
[ "$st" = preferred ] || fail "B's fd77:6e::2: $st, not preferred"
st=$(state_of a fd77:6e::1/64)
[ "$st" = preferred ] || fail "A's fd77:6e::1: $st, not preferred (A must defend it)"
v=$(tel b /warpnic/dp/net dad_duplicates addrs_duplicate)
[ "$v" = "dad_duplicates=1 addrs_duplicate=1" ] || fail "B: $v"
grep -q "fd77:6e::1 is in use by another node" "$WN_PAIR_DIR/b.log" ||
	fail "B did not log the duplicate"
note "B: fd77:6e::1 duplicate, fd77:6e::2 preferred; A still has fd77:6e::1"
bg_a rping_server rping -s -a "$A_IP" -V -C 20 -S 1000
SRV=$BG_PID
wait_server 10 || fail "rping server is not listening"
on_b rping -c -a "$A_IP" -V -C 20 -S 1000 >"$T/rping_client.out" 2>&1 ||
	fail "rping with a duplicate address on B failed"
wait_pid "$SRV" 15 || fail "rping server failed"
daemons_alive || fail "a warpnicd died"
"$PAIR" stop >/dev/null 2>&1

# ---- 2) the Linux kernel on the same link
pair_start --link af_packet
eval "$("$PAIR" env)"
[ -n "$WN_A_NETNS" ] || fail "wn-pair.sh env names no namespace"
NS=(ip netns exec "$WN_A_NETNS")
ip -n "$WN_A_NETNS" -6 addr add fd77:6e::99/64 dev "$WN_A_IFACE" nodad ||
	fail "cannot give the kernel an address"
"${NS[@]}" python3 - "$B_IP" <<'PY' >"$T/kernel.out" 2>&1 || { cat "$T/kernel.out"; fail "the kernel did not reach warpnicd B"; }
import os, socket, struct, sys, time
dst = sys.argv[1]
# a datagram makes the kernel resolve the address (NS from fd77:6e::99, NA from warpnicd B)
u = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
u.sendto(b"x", (dst, 9))
# ICMPv6 echo (RFC 4443 §4.1; the kernel sums raw ICMPv6); replies from warpnicd B
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s.settimeout(2)
got = 0
for seq in range(1, 4):
    s.sendto(struct.pack("!BBHHH", 128, 0, 0, 0x776e, seq) + b"warpnic6", (dst, 0))
    end = time.time() + 2
    while time.time() < end:
        try:
            data, src = s.recvfrom(1500)
        except socket.timeout:
            break
        if data[0] == 129 and struct.unpack("!HH", data[4:8]) == (0x776e, seq) and \
                data[8:] == b"warpnic6" and src[0] == dst:
            got += 1
            break
print("echo replies: %d of 3" % got)
sys.exit(0 if got == 3 else 1)
PY
cat "$T/kernel.out"
ip -n "$WN_A_NETNS" -6 neigh show "$B_IP" dev "$WN_A_IFACE" >"$T/neigh.out"
bmac=$(ip -n "$WN_B_NETNS" link show "$WN_B_IFACE" | awk '/link\/ether/ { print $2 }')
grep -qi "lladdr $bmac" "$T/neigh.out" ||
	fail "the kernel's neighbour entry of $B_IP is not warpnicd B's MAC $bmac: $(cat "$T/neigh.out")"
note "kernel: $(cat "$T/neigh.out")"
[ "$(tel_field b /warpnic/dp/net rx_icmp_echo)" -ge 3 ] || fail "warpnicd B answered no echo"
tel b /warpnic/dp/net neighbours | grep -q "fd77:6e::99" ||
	fail "warpnicd B did not learn the kernel's address"

# the kernel's DAD for warpnicd B's address: B defends it
ip -n "$WN_A_NETNS" -6 addr add "$B_IP/64" dev "$WN_A_IFACE" || fail "ip addr add $B_IP"
# the verdict: "dadfailed", or no longer "tentative" (passed); the kernel may delay its
# probe (RFC 4862 §5.4.2, and while the veth's own link-local DAD still runs)
for _ in $(seq 300); do
	ip -n "$WN_A_NETNS" -6 addr show dev "$WN_A_IFACE" | grep "inet6 $B_IP/64" |
		grep -q 'dadfailed\|^[^t]*$' && break
	sleep 0.1
done
ip -n "$WN_A_NETNS" -6 addr show dev "$WN_A_IFACE" >"$T/kaddr.out"
grep -A1 "inet6 $B_IP/64" "$T/kaddr.out" | grep -q dadfailed ||
	{ cat "$T/kaddr.out"; fail "the kernel's DAD did not find $B_IP in use"; }
note "kernel: $(grep "inet6 $B_IP/64" "$T/kaddr.out" | sed 's/^ *//')"
st=$(state_of b "$B_IP/64")
[ "$st" = preferred ] || fail "warpnicd B's $B_IP: $st after defending it"
daemons_alive || fail "a warpnicd died"
echo "ipv6_ndp: a duplicate between two daemons found and not used; the Linux kernel resolved"
echo "warpnicd's address by NDP, got its echo replies, and its DAD found the address in use"
