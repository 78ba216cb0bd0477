#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# warpnicd with two dataplane lcores per instance (scripts/wn-pair.sh --lcores 2):
#   lcores.sh BUILD_DIR [impair]
# Connections are spread over the lcores by the software flow steering; this checks that
# data moves and is verified on every one of them, that the two instances agree on each
# connection's lcore (no frame crosses lcores: handoffs are ARP only), that a connection
# between two clients of the same instance (loopback) works whichever lcores its two ends
# live on, and with "impair" that all of it survives 1 % drop and reorder. With "ipv6" the
# same over IPv6 only (wn-pair.sh --ipv6 --no-ipv4): the flows of IPv6 4-tuples steered to
# both lcores, neighbour discovery on each (only NDP crosses lcores); step 1 runs ucmatose
# instead of ib_write_bw (Debian 12's perftest resolves addresses as AF_INET only).
MODE=${2:-clean}
[ "$MODE" = ipv6 ] && export WN_VERBS_IP=6
. "$(dirname "$0")/../../interop/verbs/pair_lib.sh" "$1"
need rping
QPS=8

opts=(--lcores 2)
[ "$MODE" = impair ] && opts+=(--impair drop=0.01,reorder=0.01,dup=0.001)
pair_start "${opts[@]}"
[ "$(tel_field a /warpnic/dp/stats lcores)" = 2 ] || fail "instance A does not run 2 lcores"

# 1) QPS connections, two rounds: (1/2)^(2*QPS-1) that they all land on one lcore
for round in 1 2; do
	if [ "$MODE" = ipv6 ]; then
		need ucmatose
		bg_a uc_server_$round ucmatose -b "$A_IP" -c "$QPS" -C 100 -S 4000
		SRV=$BG_PID
		wait_server 10 || fail "ucmatose server did not create its CM id"
		on_b ucmatose -s "$A_IP" -c "$QPS" -C 100 -S 4000 >"$T/uc_client_$round.out" 2>&1 ||
			fail "ucmatose -c $QPS client failed (round $round)"
		wait_pid "$SRV" 30 || fail "ucmatose server failed (round $round)"
		for f in "$T/uc_client_$round.out" "$T/uc_server_$round.out"; do
			grep -q '^test complete' "$f" && grep -q '^return status 0' "$f" ||
				fail "ucmatose did not complete ($f, round $round)"
		done
		continue
	fi
	need ib_write_bw
	bg_a bw_server_$round ib_write_bw -R -q "$QPS" -s 65536 -n 100
	SRV=$BG_PID
	wait_server 10 || fail "ib_write_bw server did not create its CM id"
	on_b ib_write_bw -R -q "$QPS" -s 65536 -n 100 "$A_IP" >"$T/bw_client_$round.out" 2>&1 ||
		fail "ib_write_bw -q $QPS client failed (round $round)"
	wait_pid "$SRV" 20 || fail "ib_write_bw server failed (round $round)"
	grep -Eq "^ *65536 +$((QPS * 100)) " "$T/bw_client_$round.out" ||
		fail "ib_write_bw: no result line for $QPS QPs"
done

# 2) data verified: rping -V, a few connections (a persistent server takes them in turn)
for i in 1 2 3 4; do
	bg_a rping_server_$i rping -s -a "$A_IP" -V -C 20 -S 4000
	SRV=$BG_PID
	wait_server 10 || fail "rping server did not create its CM id"
	on_b rping -c -a "$A_IP" -V -C 20 -S 4000 >"$T/rping_client_$i.out" 2>&1 ||
		fail "rping client $i failed"
	wait_pid "$SRV" 15 || fail "rping server $i failed"
	sleep 0.3 # the server's id is destroyed before the next one binds the port
done

# 3) loopback: both clients on A
bg_a loop_server rping -s -a "$A_IP" -V -C 20 -S 2000
SRV=$BG_PID
wait_server 10 || fail "loopback rping server did not create its CM id"
on_a rping -c -a "$A_IP" -V -C 20 -S 2000 >"$T/loop_client.out" 2>&1 || fail "loopback rping failed"
wait_pid "$SRV" 15 || fail "loopback rping server failed"

# both lcores of both instances carried connections; steering agreed on both ends
for side in a b; do
	tel "$side" /warpnic/dp/lcores >"$T/lcores_$side.json" || fail "telemetry of $side"
	python3 - "$T/lcores_$side.json" "$side" "$MODE" <<'PY' || fail "instance $side: lcore check failed"
import json, sys
d = json.load(open(sys.argv[1]))
side, mode = sys.argv[2], sys.argv[3]
est = [v["conns_established"] for v in d.values()]
ho = [v["handoff_tx"] for v in d.values()]
drop = sum(v["handoff_drop"] for v in d.values())
print(f"instance {side}: connections per lcore {est}, frames handed over {ho}, dropped {drop}")
if len(est) != 2 or min(est) == 0:
    sys.exit("a lcore carried no connection")
if drop:
    sys.exit("handoff drops")
# the loopback connection's two ends may sit on different lcores (A only); otherwise the
# peers agree and only ARP (NDP) crosses lcores
if side == "b" and mode != "impair" and sum(ho) > 16:
    sys.exit("frames crossed lcores: the two instances steer differently")
PY
done
daemons_alive || fail "a warpnicd died"
ip_check
step1="perftest ($((2 * QPS)) QPs)"
[ "$MODE" = ipv6 ] && step1="ucmatose ($((2 * QPS)) connections)"
echo "lcores: $MODE: $step1, rping -V x4 and loopback over 2 lcores per instance"
