#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# RDMA Write, Read or Send bandwidth between two warpnicd over rdma_cm (cm_bw.c, on the
# shims as any program), the measurements of perftest's ib_{write,read,send}_bw -R:
#   cm_bw.sh BUILD_DIR CM_BW OP [ITERS]      OP: write, read or send
# For IPv6 (WN_VERBS_IP=6|46), which Debian 12's perftest 4.5-0.17 cannot use (it resolves
# addresses as AF_INET only). Server on A, client on B; sizes 2 B, 4 KiB, 64 KiB, 1 MiB,
# ITERS operations each (default 50); every octet written, read or sent is checked. Passes
# when both sides verified every size, the client printed one row per size, both saw their
# connection's addresses in the pair's family with the local one in the GID table
# (ibv_query_gid), and (IPv6) pair_lib.sh's ip_check passes.
CM_BW=$(realpath -e "${2:?usage: $0 BUILD_DIR CM_BW OP [ITERS]}") || CM_BW=$2
. "$(dirname "$0")/pair_lib.sh" "$1" # (it changes directory)
OP=${3:?usage: $0 BUILD_DIR CM_BW OP [ITERS]}
ITERS=${4:-50}
SIZES=2,4096,65536,1048576
[ -x "$CM_BW" ] || missing "$CM_BW not built"

pair_start
bg_a server "$CM_BW" -s "$A_IP" -o "$OP" -S "$SIZES" -n "$ITERS"
SRV=$BG_PID
wait_server 10 || fail "cm_bw server is not listening"
on_b "$CM_BW" -c "$A_IP" -o "$OP" -S "$SIZES" -n "$ITERS" >"$T/client.out" 2>&1 ||
	fail "cm_bw client exit status $?"
wait_pid "$SRV" 20 || fail "cm_bw server exit status $?"
cat "$T/client.out"
family=IPv4
[ "$WN_VERBS_IP" = 4 ] || family=IPv6
grep -q "^client: $B_IP -> $A_IP ($family), GID\[[0-9]*\] " "$T/client.out" ||
	fail "client: not an $family connection from $B_IP to $A_IP"
grep -q "^server: $A_IP -> $B_IP ($family), GID\[[0-9]*\] " "$T/server.out" ||
	fail "server: not an $family connection from $A_IP to $B_IP"
for size in ${SIZES//,/ }; do
	awk -v s="$size" -v n="$ITERS" '$1 == s && $2 == n && $3 + 0 > 0 && $4 == "verified"' \
		"$T/client.out" | grep -q . || fail "cm_bw $OP: no verified row for $size octets"
done
grep -q "^client: all sizes verified" "$T/client.out" &&
	grep -q "^server: all sizes verified" "$T/server.out" || fail "cm_bw $OP: not verified"
daemons_alive || fail "a warpnicd died"
ip_check
echo "cm_bw $OP over $family: sizes $SIZES x $ITERS, every octet verified"
