#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The dataplane's idle modes with unmodified perftest through the shims:
#   idle_wake.sh BUILD_DIR [ITERS]
# 1. --idle sleep (the default), each program pinned (taskset) to the CPU of its own
#    daemon's lcore: `ib_write_lat -s 8` completes, and the lcores slept and were woken by
#    their wake-up sources: /warpnic/dp/stats idle_sleeps, wake_bell (the lcore's doorbell:
#    a client posted to an SQ, or the control thread queued a message, while it slept) and
#    wake_rx (the port queue's Rx interrupt: net_memif's interrupt mode) went up.
# 2. Same pair, `ib_send_lat -e` (perftest has no events for Write): the programs sleep in
#    ibv_get_cq_event() (completion channel) and still complete.
# 3. --idle poll: the lcores keep looping and never sleep, idle for a second. (No traffic:
#    with both CPUs of a 2-core machine taken by polling lcores, connection setup through the
#    starved control threads fails now and then, on main's --idle-us 0 too; --idle poll is
#    for dedicated cores.)
# Breaks if a lost wake-up hangs a transfer (the step's timeout), if the wake-up sources are
# never used (the lcores only wake on their timeout) or if the modes are not what --idle says.
# Counters only, never timing.
. "$(dirname "$0")/pair_lib.sh" "$1"
ITERS=${2:-300}
need ib_write_lat ib_send_lat taskset

# A's lcore runs on CPU 0, B's on CPU 1 mod nproc (wn-pair.sh): each program on its daemon's
CPU_A=0
CPU_B=$((1 % $(nproc)))

# stats a|b: "idle_sleeps wake_bell wake_rx wake_timer" of instance a/b
stats() {
	local v
	v=$(tel "$1" /warpnic/dp/stats idle_sleeps wake_bell wake_rx wake_timer) ||
		fail "no /warpnic/dp/stats from $1"
	echo "$v" | sed 's/[a-z_]*=//g'
}

# lat NAME TOOL ARGS...: TOOL's server on A and client on B, pinned, both exit 0 with a
# result row for 8 B
lat() {
	local name=$1 tool=$2 rc
	shift 2
	bg_a "${name}_server" taskset -c $CPU_A "$tool" -R -s 8 -n "$ITERS" "$@"
	local srv=$BG_PID
	wait_server 10 || fail "$name: $tool server is not listening"
	on_b taskset -c $CPU_B "$tool" -R -s 8 -n "$ITERS" "$@" "$A_IP" \
		>"$T/${name}_client.out" 2>&1
	rc=$?
	[ $rc -eq 0 ] || fail "$name: $tool client exit status $rc"
	wait_pid "$srv" 60
	rc=$?
	[ $rc -eq 0 ] || fail "$name: $tool server exit status $rc"
	awk -v n="$ITERS" '$1 == 8 && $2 == n && $NF + 0 > 0 { ok = 1 } END { exit !ok }' \
		"$T/${name}_client.out" || fail "$name: no result row for 8 B x $ITERS"
	note "$name: $(awk '$1 == 8' "$T/${name}_client.out")"
}

# 1, 2: sleep (the default)
pair_start
read -r a0 ab0 ar0 at0 <<<"$(stats a)"
read -r b0 bb0 br0 bt0 <<<"$(stats b)"
lat sleep ib_write_lat
read -r a1 ab1 ar1 at1 <<<"$(stats a)"
read -r b1 bb1 br1 bt1 <<<"$(stats b)"
note "A: idle_sleeps $a0 -> $a1, wake_bell $ab0 -> $ab1, wake_rx $ar0 -> $ar1, wake_timer $at0 -> $at1"
note "B: idle_sleeps $b0 -> $b1, wake_bell $bb0 -> $bb1, wake_rx $br0 -> $br1, wake_timer $bt0 -> $bt1"
[ "$a1" -gt "$a0" ] && [ "$b1" -gt "$b0" ] || fail "--idle sleep: an lcore never slept"
[ $((ab1 + bb1)) -gt $((ab0 + bb0)) ] || fail "--idle sleep: no lcore was woken by its doorbell"
[ $((ar1 + br1)) -gt $((ar0 + br0)) ] || fail "--idle sleep: no lcore was woken by an Rx interrupt"
lat events ib_send_lat -e
daemons_alive || fail "a warpnicd died"
"$PAIR" stop >/dev/null 2>&1 || fail "a warpnicd failed at exit"
LISTENS_SEEN=0

# 3: poll
pair_start --a-opt --idle --a-opt poll --b-opt --idle --b-opt poll
l0=$(tel_field a /warpnic/dp/stats loops) || fail "no /warpnic/dp/stats from a"
sleep 1
l1=$(tel_field a /warpnic/dp/stats loops) || fail "no /warpnic/dp/stats from a"
read -r a2 _ _ _ <<<"$(stats a)"
read -r b2 _ _ _ <<<"$(stats b)"
note "--idle poll: A looped $l0 -> $l1, idle_sleeps A $a2, B $b2"
[ "$l1" -gt "$l0" ] || fail "--idle poll: A's lcore does not loop"
[ "$a2" -eq 0 ] && [ "$b2" -eq 0 ] || fail "--idle poll: an lcore slept ($a2, $b2)"
daemons_alive || fail "a warpnicd died"
echo "idle_wake: sleep (pinned to the daemons' CPUs), ib_send_lat -e ($ITERS round trips each), poll: no sleep"
