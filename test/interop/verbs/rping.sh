#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Debian's rping (rdmacm-utils), unmodified, between two warpnicd instances:
#   rping.sh BUILD_DIR [COUNT] [SIZE]
# Server on A, client on B, -V (each round's data read back and compared) and -v (printed).
# Each round is a Send (advertised buffer), an RDMA Read of the client's buffer by the
# server, a Send, an RDMA Write back to the client and a Send: breaks if any of them, the CM
# path (MPA Request/Reply through the shims) or the completion channels break.
# WN_VERBS_IP=6|46 runs it over IPv6 (pair_lib.sh: ip_check then proves neighbour discovery).
. "$(dirname "$0")/pair_lib.sh" "$1"
COUNT=${2:-100}
SIZE=${3:-64}
need rping

pair_start
bg_a rping_server rping -s -a "$A_IP" -v -V -C "$COUNT" -S "$SIZE"
SRV=$BG_PID
wait_server 10 || fail "rping server is not listening"
on_b rping -c -a "$A_IP" -v -V -C "$COUNT" -S "$SIZE" >"$T/rping_client.out" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "rping client exit status $rc"
wait_pid "$SRV" 15
rc=$?
[ $rc -eq 0 ] || fail "rping server exit status $rc"

# every round's data printed, in order, on both sides; rping -V found no mismatch
for side in client server; do
	f=$T/rping_$side.out
	grep -qi 'mismatch\|error\|fail' "$f" && fail "rping $side reports an error"
	n=$(grep -o 'ping data: rdma-ping-[0-9]*:' "$f" | sed 's/.*rdma-ping-\([0-9]*\):/\1/' |
		awk -v want="$COUNT" 'BEGIN { n = 0 } $1 == n { n++ } END { print (n == want) ? n : -n }')
	[ "$n" = "$COUNT" ] || fail "rping $side: rounds 0..$((COUNT - 1)) not all seen in order ($n)"
done
# the pattern of round 0: rping fills the buffer with printable characters from 'A'
grep -q 'ping data: rdma-ping-0: ABCDEFGHIJKLMNOPQRSTUVWXYZ' "$T/rping_client.out" ||
	fail "rping client: unexpected data in round 0"
daemons_alive || fail "a warpnicd died"
llp_check
ip_check
echo "rping: $COUNT rounds of $SIZE bytes verified on both sides"
