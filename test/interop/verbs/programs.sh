#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Real RDMA programs as Debian ships them, unmodified, through the shims between two
# warpnicd (scripts/wn-pair.sh, memif):
#   programs.sh BUILD_DIR CASE [IMPAIR]
# CASE is a line of programs.txt (which also says whether the program passes or how it must
# fail); IMPAIR, a --impair spec for the pair (B's port). Each case checks the program's own
# verdict (exit status, its error or success lines) and the data where the program checks it.
#
# Programs that talk TCP beside their RDMA traffic (qperf's and ibv_*_pingpong's side channel,
# libfabric's address exchange and its interface discovery) run, as on a host with an RNIC, in
# a network namespace whose interface carries the RNIC's address: namespaces A and B are
# joined by a veth pair with 198.19.0.1 and 198.19.0.2, which carries only that TCP; the RDMA
# traffic goes through warpnicd. Nothing is added to the default namespace.
. "$(dirname "$0")/pair_lib.sh" "$1"
CASE=${2:?usage: programs.sh BUILD_DIR CASE [IMPAIR]}
IMPAIR=${3:--}

NS_A= NS_B=
ns_cleanup() {
	[ -n "$NS_A" ] && ip netns del "$NS_A" 2>/dev/null
	[ -n "$NS_B" ] && ip netns del "$NS_B" 2>/dev/null
}
trap 'ns_cleanup; cleanup' EXIT

# ns_start: namespaces A and B (unique names), veth between them, addresses as warpnicd's
ns_start() {
	need ip
	NS_A=wnpa$$ NS_B=wnpb$$
	ip netns add "$NS_A" && ip netns add "$NS_B" || fail "cannot create network namespaces"
	ip link add "wpa$$" type veth peer name "wpb$$" || fail "cannot create a veth pair"
	ip link set "wpa$$" netns "$NS_A" && ip link set "wpb$$" netns "$NS_B" &&
		ip -n "$NS_A" addr add "$A_IP/24" dev "wpa$$" &&
		ip -n "$NS_B" addr add "$B_IP/24" dev "wpb$$" &&
		ip -n "$NS_A" link set "wpa$$" up && ip -n "$NS_B" link set "wpb$$" up &&
		ip -n "$NS_A" link set lo up && ip -n "$NS_B" link set lo up ||
		fail "cannot configure the namespaces"
}

# ns_bg_a NAME PROGRAM ARGS...: a server in namespace A on instance A (as bg_a)
ns_bg_a() {
	local name=$1
	shift
	ip netns exec "$NS_A" timeout -k 5 $((STEP_TIMEOUT + 20)) "$RUN" --ctl "$A_CTL" \
		--shim "$SHIM" "$@" >"$T/$name.out" 2>&1 &
	BG_PID=$!
	BG+=("$BG_PID")
}

# ns_on_b PROGRAM ARGS...: a client in namespace B on instance B (as on_b)
ns_on_b() {
	ip netns exec "$NS_B" timeout -k 5 "$STEP_TIMEOUT" "$RUN" --ctl "$B_CTL" --shim "$SHIM" "$@"
}

# wait_tcp_listen NS PORT SECS: a kernel TCP listener on PORT in namespace NS
wait_tcp_listen() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		ip netns exec "$1" ss -Hltn "sport = :$2" 2>/dev/null | grep -q LISTEN && return 0
		sleep 0.1
	done
	return 1
}

start() {
	if [ "$IMPAIR" = - ]; then
		pair_start
	else
		pair_start --impair "$IMPAIR"
	fi
}

case_ucmatose() {
	need ucmatose
	start
	bg_a ucmatose_server ucmatose -b "$A_IP" -c 4 -C 50 -S 1000
	local srv=$BG_PID
	wait_server 10 || fail "ucmatose server is not listening"
	on_b ucmatose -s "$A_IP" -c 4 -C 50 -S 1000 >"$T/ucmatose_client.out" 2>&1 ||
		fail "ucmatose client exit status $?"
	wait_pid "$srv" 30 || fail "ucmatose server exit status $?"
	for side in client server; do
		grep -q '^test complete' "$T/ucmatose_$side.out" &&
			grep -q '^return status 0' "$T/ucmatose_$side.out" ||
			fail "ucmatose $side did not complete"
	done
	echo "ucmatose: 4 connections x 50 messages each way, both sides complete"
}

# active_qps a|b: QPs with an engine (connected) on that instance, all lcores together
active_qps() {
	tel "$1" /warpnic/dp/lcores 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
d = d.get("/warpnic/dp/lcores", d)
print(sum(v.get("active_qps", 0) for v in d.values() if isinstance(v, dict)))' 2>/dev/null ||
		echo 0
}

# rping -P hands each connect request to a new thread through one shared slot, so requests
# that arrive together overwrite each other there (rping's race, with any device): clients
# start 0.2 s apart and run long enough to overlap; at least two must be connected at once
# (sampled from the server's warpnicd).
case_rping_many() {
	local n=8 count=2000 i pids=() rc most=0 k p
	need rping
	[ "$IMPAIR" = - ] || count=500 # slower under loss: they overlap with fewer rounds
	start
	bg_a rping_server rping -s -P -a "$A_IP" -v -V -C "$count" -S 100
	local srv=$BG_PID
	wait_server 10 || fail "rping server is not listening"
	for ((i = 1; i <= n; i++)); do
		on_b rping -c -a "$A_IP" -v -V -C "$count" -S 100 >"$T/rping_client_$i.out" 2>&1 &
		pids+=($!)
		sleep 0.2
		k=$(active_qps a)
		[ "${k:-0}" -gt "$most" ] && most=$k
	done
	# connections open at the same time on the server's warpnicd (its telemetry, sampled)
	for p in "${pids[@]}"; do
		kill -0 "$p" 2>/dev/null || continue
		k=$(active_qps a)
		[ "${k:-0}" -gt "$most" ] && most=$k
		sleep 0.1
	done
	for ((i = 1; i <= n; i++)); do
		wait "${pids[$((i - 1))]}"
		rc=$?
		[ $rc -eq 0 ] || fail "rping client $i exit status $rc"
		grep -qi 'mismatch\|error\|fail' "$T/rping_client_$i.out" &&
			fail "rping client $i reports an error"
		[ "$(grep -c 'ping data: rdma-ping-' "$T/rping_client_$i.out")" = "$count" ] ||
			fail "rping client $i: not $count rounds"
	done
	# the persistent server serves forever (its stdout stays buffered): it must still be
	# there, and have reported no error (stderr)
	kill -0 "$srv" 2>/dev/null || fail "the persistent rping server exited"
	grep -qi 'mismatch\|error\|fail' "$T/rping_server.out" && fail "rping server reports an error"
	[ "$most" -ge 2 ] || fail "the rping connections never overlapped (at most $most at once)"
	echo "rping: $n connections (at most $most at once on the server) x $count verified rounds"
}

case_rping_q() {
	need rping
	start
	bg_a rping_server rping -s -q -a "$A_IP" -v -V -C 5
	local srv=$BG_PID
	wait_server 10 || fail "rping server is not listening"
	STEP_TIMEOUT=40 on_b rping -c -q -a "$A_IP" -v -V -C 5 >"$T/rping_client.out" 2>&1 ||
		fail "rping -q client failed"
	wait_pid "$srv" 20 || fail "rping -q server failed"
	echo "rping -q: 5 rounds verified (-V), each side's own QP walked by rdma_init_qp_attr"
}

# qperf_run TEST...: every test against one server; each must print its figure
qperf_run() {
	local t out
	need qperf ss
	start
	ns_start
	ns_bg_a qperf_server qperf
	wait_tcp_listen "$NS_A" 19765 10 || fail "qperf server does not listen"
	for t in "$@"; do
		out=$T/qperf_$t.out
		ns_on_b qperf "$A_IP" -cm1 -t 1 -m 4096 "$t" >"$out" 2>&1
		echo "$t: $?: $(tr '\n' ' ' <"$out")"
		note "qperf $t done" >&2
	done
}

case_qperf() {
	local t fails=0
	local tests=(rc_lat rc_rdma_write_lat rc_rdma_read_bw rc_rdma_read_lat
		rc_compare_swap_mr rc_fetch_add_mr)
	qperf_run "${tests[@]}" >"$T/qperf.out"
	cat "$T/qperf.out"
	for t in "${tests[@]}"; do
		grep -q "^$t: 0: $t: .*\(latency\|bw\|msg_rate\) *= *[0-9.]\+ " "$T/qperf.out" ||
			{ echo "qperf $t did not pass"; fails=1; }
		grep -q "^$t: .*failed" "$T/qperf.out" && { echo "qperf $t failed"; fails=1; }
	done
	[ $fails = 0 ] || fail "qperf tests failed"
	echo "qperf: ${tests[*]} passed"
}

# rnr_note: what warpnicd's receiver-not-ready hold did (--rnr-hold-ms), by its telemetry
rnr_note() {
	local n
	for n in a b; do
		note "warpnicd $n: $(tel "$n" /warpnic/dp/stats rnr_holds rnr_resumed rnr_timeouts \
			term_sent 2>/dev/null)"
	done
}

# qperf's Send bandwidth tests: the receiver reposts as it completes, and a Send that
# arrives before the repost waits for it (warpnicd --rnr-hold-ms, as an RNR retry would)
case_qperf_rc_bw() {
	local t
	qperf_run rc_bw rc_bi_bw >"$T/qperf.out"
	cat "$T/qperf.out"
	rnr_note
	for t in rc_bw rc_bi_bw; do
		grep -q "^$t: 0: $t: .*bw *= *[0-9.]\+ " "$T/qperf.out" || fail "qperf $t failed"
		grep -q "^$t: .*failed" "$T/qperf.out" && fail "qperf $t failed"
	done
	echo "qperf rc_bw, rc_bi_bw passed"
}

# qperf writes with RDMA Write with Immediate Data: on iWARP (RFC 7306) each one consumes a
# receive at the server, which reposts as they complete; the hold covers the gaps
case_qperf_rdma_write_bw() {
	qperf_run rc_rdma_write_bw >"$T/qperf.out"
	cat "$T/qperf.out"
	rnr_note
	grep -q "^rc_rdma_write_bw: 0: rc_rdma_write_bw: .*bw *= *[0-9.]\+ " "$T/qperf.out" ||
		fail "qperf rc_rdma_write_bw failed"
	echo "qperf rc_rdma_write_bw passed"
}

# fio_run VERB IODEPTH: one transfer of 8 MiB in 64 KiB blocks; fio's rdma engine: the
# server (rw=read) exposes its buffers, the client (rw=write) moves the data with VERB.
# The engine is one-way (FIO_UNIDIR: fio never reads back what it wrote), so fio's verify=
# has nothing to check; the data path is checked octet for octet by rnic_it and perftest.
fio_run() {
	local verb=$1 depth=$2 port=$((5555 + RANDOM % 1000)) srv rc
	bg_a "fio_server_${verb}_$depth" fio --name=srv --ioengine=rdma --port="$port" --rw=read \
		--bs=64k --size=8m --iodepth="$depth"
	srv=$BG_PID
	wait_server 10 || fail "fio server is not listening"
	on_b fio --name=cli --ioengine=rdma --hostname="$A_IP" --port="$port" --verb="$verb" \
		--rw=write --bs=64k --size=8m --iodepth="$depth" \
		>"$T/fio_client_${verb}_$depth.out" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		wait_pid "$srv" 30
	else
		kill "$srv" 2>/dev/null # it waits for a peer that is gone
	fi
	note "fio verb=$verb iodepth=$depth: client $rc, $(grep -o 'run=[0-9-]*msec' \
		"$T/fio_client_${verb}_$depth.out")"
	return $rc
}

fio_check() {
	local f=$T/fio_client_$1_$2.out
	grep -q 'err= 0' "$f" && grep -q 'io=8192KiB' "$f" ||
		fail "fio verb=$1 iodepth=$2: no error-free 8 MiB run"
	grep -q 'err= 0' "$T/fio_server_$1_$2.out" || fail "fio server (verb=$1 iodepth=$2) failed"
}

case_fio() {
	local verb depth
	need fio
	start
	for verb in write read; do
		for depth in 1 8 32; do
			fio_run "$verb" "$depth" || fail "fio verb=$verb iodepth=$depth exit status $?"
			fio_check "$verb" "$depth"
		done
	done
	echo "fio rdma: verb=write and verb=read at iodepth 1, 8 and 32, 8 MiB each"
}

case_fio_send() {
	need fio
	start
	fio_run send 8 || fail "fio verb=send iodepth=8 exit status $?"
	fio_check send 8
	rnr_note
	echo "fio verb=send: passed"
}

# pingpong PROGRAM PATTERN: the server fails to move its QP to RTS; the client with it
pingpong() {
	need "$1" ss
	start
	ns_start
	ns_bg_a "$1_server" "$1" -g 0 -n 10
	local srv=$BG_PID
	wait_tcp_listen "$NS_A" 18515 10 || fail "$1 server does not listen"
	ns_on_b "$1" -g 0 -n 10 "$A_IP" >"$T/$1_client.out" 2>&1 &
	local cli=$!
	wait_pid "$srv" 30
	[ $? -ne 0 ] || fail "$1 server succeeded"
	# the client may wait for a peer that gave up: it only has to fail
	wait_pid "$cli" 5 || kill "$cli" 2>/dev/null
	wait "$cli" && fail "$1 client succeeded"
	grep -q "$2" "$T/$1_server.out" || fail "$1 server did not fail moving its QP to RTS"
	echo "$1: fails as on an iWARP RNIC ($2)"
}

case_ibv_rc_pingpong() { pingpong ibv_rc_pingpong 'Failed to modify QP to RTS'; }
case_ibv_srq_pingpong() { pingpong ibv_srq_pingpong 'Failed to modify QP\[0\] to RTS'; }

# refused PROGRAM PATTERN ARGS...: PROGRAM (as server on A, where the device is) fails at
# once with PATTERN in its output: what iWARP lacks is refused where siw refuses it
refused() {
	local prog=$1 pat=$2 out rc
	shift 2
	need "$prog"
	start
	on_a "$prog" "$@" >"$T/$prog.out" 2>&1
	rc=$?
	cat "$T/$prog.out"
	[ $rc -ne 0 ] || grep -q "return status -1\|Couldn't" "$T/$prog.out" ||
		fail "$prog succeeded"
	[ $rc -ne 124 ] || fail "$prog did not end (timeout)"
	grep -q "$pat" "$T/$prog.out" || fail "$prog did not fail with '$pat'"
	echo "$prog: fails as on an iWARP RNIC ($pat)"
}

# udaddy: its client makes UD QPs over rdma_cm (RDMA_PS_UDP): the id, the address and the
# route resolve (as the kernel's rdma_cm does on any device), the UD QP is refused
case_udaddy() {
	need udaddy
	start
	bg_a udaddy_server udaddy -b "$A_IP"
	local srv=$BG_PID
	on_b udaddy -s "$A_IP" -b "$B_IP" >"$T/udaddy_client.out" 2>&1
	cat "$T/udaddy_client.out"
	kill "$srv" 2>/dev/null # it listens for datagram peers that never come
	grep -q '^udaddy: connecting' "$T/udaddy_client.out" ||
		fail "udaddy did not get as far as resolving the address"
	grep -q 'unable to create QP: Operation not supported' "$T/udaddy_client.out" &&
		grep -q '^return status -1' "$T/udaddy_client.out" ||
		fail "udaddy did not fail creating its UD QP (EOPNOTSUPP)"
	echo "udaddy: fails as on an iWARP RNIC (UD QP: Operation not supported)"
}

case_mckey() { refused mckey 'unable to create QP: Operation not supported' -m 239.7.7.7 -b "$A_IP"; }
case_ibv_ud_pingpong() { refused ibv_ud_pingpong "Couldn't create QP" -g 0 -d wn_a; }
case_ibv_uc_pingpong() { refused ibv_uc_pingpong "Couldn't create QP" -g 0 -d wn_a; }
case_ibv_xsrq_pingpong() { refused ibv_xsrq_pingpong "Couldn't Open the XRC Domain 95" -d wn_a; }

case_fi_info() {
	local out
	need fi_info
	start
	ns_start
	out=$(ip netns exec "$NS_A" timeout 30 "$RUN" --ctl "$A_CTL" --shim "$SHIM" fi_info -p verbs 2>&1) ||
		fail "fi_info -p verbs: $out"
	echo "$out"
	echo "$out" | grep -q 'domain: wn_a' && echo "$out" | grep -q 'protocol: FI_PROTO_IWARP' &&
		echo "$out" | grep -q 'type: FI_EP_MSG' || fail "fi_info does not list wn_a as iWARP"
	echo "fi_info: the verbs provider lists wn_a (iWARP, FI_EP_MSG)"
}

# fi_pingpong PROVIDER EP_TYPE: every size from 1 B to 6 MiB, 10 round trips each, data
# checked (-c); the address exchange goes over TCP in the namespaces
fi_pingpong_run() {
	local srv sizes size=all min=40 last=6m
	need fi_pingpong ss
	# under loss one size (64 KiB) is enough, and much shorter
	[ "$IMPAIR" = - ] || { size=65536 min=1 last=64k; }
	start
	ns_start
	ns_bg_a fi_pingpong_server fi_pingpong -p "$1" -e "$2" -S "$size" -I 10 -c
	srv=$BG_PID
	wait_tcp_listen "$NS_A" 47592 10 || fail "fi_pingpong server does not listen"
	ns_on_b fi_pingpong -p "$1" -e "$2" -S "$size" -I 10 -c "$A_IP" >"$T/fi_pingpong_client.out" 2>&1 ||
		fail "fi_pingpong client exit status $?"
	wait_pid "$srv" 30 || fail "fi_pingpong server exit status $?"
	cat "$T/fi_pingpong_client.out"
	# one line per size: "6m  10  =10  ..." (all sent and acknowledged)
	sizes=$(grep -cE '^[0-9]+[km]? +10 +=10 ' "$T/fi_pingpong_client.out")
	[ "$sizes" -ge "$min" ] || fail "fi_pingpong: only $sizes sizes completed"
	grep -q "^$last " "$T/fi_pingpong_client.out" || fail "fi_pingpong: no $last transfers"
	echo "fi_pingpong -p $1 -e $2: $sizes sizes, data checked"
}

case_fi_pingpong_msg() { fi_pingpong_run verbs msg; }
case_fi_pingpong_rdm() { fi_pingpong_run 'verbs;ofi_rxm' rdm; }

# rsockets: rs_run PROGRAM NAME ARGS...: rstream's or riostream's server on A (-b) and client
# on B (-s) with the same options; both must exit 0 and report no error. Both verify the
# data themselves with -T v (verify_buf: "data mismatch" on a difference).
rs_run() {
	local prog=$1 name=$2 srv side
	shift 2
	note "$name: $prog $*"
	bg_a "${name}_server" "$prog" -b "$A_IP" "$@"
	srv=$BG_PID
	wait_server 10 || fail "$name: $prog server is not listening"
	on_b "$prog" -s "$A_IP" "$@" >"$T/${name}_client.out" 2>&1 ||
		fail "$name: $prog client exit status $?"
	wait_pid "$srv" 30 || fail "$name: $prog server exit status $?"
	for side in client server; do
		grep -Eqi 'fail|error|mismatch|rsend|rrecv|rpoll|raccept|rconnect|riomap|riowrite' \
			"$T/${name}_$side.out" && fail "$name: $prog $side reports an error"
	done
}

# rs_lines NAME N: each side printed N result lines (name bytes xfers iters total ...)
rs_lines() {
	local side n
	for side in client server; do
		n=$(grep -Ec '^[0-9a-z_]+ +[0-9.]+[kmg]? +[0-9.]+[kmg]? ' "$T/${1}_$side.out")
		[ "$n" = "$2" ] || fail "$1: $side printed $n result lines, not $2"
	done
}

case_rstream() {
	need rstream
	start
	if [ "$IMPAIR" != - ]; then
		rs_run rstream rstream_b -T b -T v -S 65536 -C 200
		rs_lines rstream_b 1
		rs_run rstream rstream_a -T a -T v -S 65536 -C 200
		rs_lines rstream_a 1
		echo "rstream: blocking and async modes under $IMPAIR, data verified"
		return 0
	fi
	# blocking calls: 64-octet ping-pongs and 1 MiB transfers (the ends of the default test,
	# whose 100000 ping-pongs alone take a minute on a loaded 2-core machine: docs/compatibility.md)
	rs_run rstream rstream_lat -T b -T v -S 64 -C 1 -I 2000
	rs_lines rstream_lat 1
	rs_run rstream rstream_bw -T b -T v -S 1048576 -C 50
	rs_lines rstream_bw 1
	# rstream's own default calls (nonblocking, retried at once), rpoll() before each call
	# (async), rdma_getaddrinfo() (resolve) with keepalive options
	rs_run rstream rstream_n -T n -T v -S 65536 -C 200
	rs_lines rstream_n 1
	rs_run rstream rstream_a -T a -T v -S 65536 -C 200
	rs_lines rstream_a 1
	rs_run rstream rstream_r -T r -T v -k 5 -S 4096 -C 1000
	rs_lines rstream_r 1
	echo "rstream: blocking, nonblocking, async and resolve modes, data verified"
}

# riostream moves its data with riowrite() into the peer's riomap()ed buffer and waits for
# the buffer's last octet to change, spinning on memory (no call into rsockets)
case_riostream() {
	need riostream
	start
	if [ "$IMPAIR" != - ]; then
		rs_run riostream riostream_b -T b -T v -S 65536 -C 200
		rs_lines riostream_b 1
		echo "riostream: blocking riowrite transfers under $IMPAIR, verified"
		return 0
	fi
	rs_run riostream riostream_b -T b -T v -S 65536 -C 200
	rs_lines riostream_b 1
	rs_run riostream riostream_n -T n -T v -S 4096 -C 1000
	rs_lines riostream_n 1
	rs_run riostream riostream_a -T a -T v -S 1048576 -C 20
	rs_lines riostream_a 1
	rs_run riostream riostream_lat -T b -T v -S 64 -C 1 -I 500
	rs_lines riostream_lat 1
	echo "riostream: blocking, nonblocking and async riowrite transfers and ping-pongs, verified"
}

# librspreload turns an ordinary program's TCP sockets into rsockets: nc.traditional moves a
# file (sha256 compared; Debian 12's librspreload wraps accept() but not accept4(), so
# netcat-openbsd cannot listen, and socat calls recv() before socket(), when the preload's
# function pointers are still NULL), then iperf3 both ways by its own verdict (the sender's
# 16 MiB; the receiver's count may be a little less: iperf3's server stops reading once the
# client's TEST_END arrives on the control connection, with any socket underneath)
case_rspreload() {
	local pre srv
	need nc.traditional iperf3 sha256sum
	pre=$(ls /usr/lib/*/rsocket/librspreload.so.1 2>/dev/null | head -1)
	[ -n "$pre" ] || missing "librspreload (librdmacm1) not installed"
	start
	head -c $((16 << 20)) /dev/urandom >"$T/data.in"
	note "nc: 16 MiB B -> A"
	bg_a rspreload_nc_server bash -c 'LD_PRELOAD=$0 exec nc.traditional -l -p 7474 -s "$1" \
		2>"$2"' "$pre" "$A_IP" "$T/nc_server.err"
	srv=$BG_PID
	wait_server 10 || fail "nc server is not listening"
	on_b env LD_PRELOAD="$pre" nc.traditional -q 0 "$A_IP" 7474 <"$T/data.in" \
		>"$T/nc_client.out" 2>&1 || fail "nc client exit status $?"
	wait_pid "$srv" 30 || fail "nc server exit status $?"
	[ "$(sha256sum <"$T/data.in")" = "$(sha256sum <"$T/rspreload_nc_server.out")" ] ||
		fail "nc: the file arrived different ($(wc -c <"$T/rspreload_nc_server.out") octets)"
	if [ "$IMPAIR" != - ]; then
		echo "librspreload: nc moved 16 MiB intact under $IMPAIR"
		return 0
	fi
	for dir in "" -R; do
		note "iperf3 $dir"
		bg_a "rspreload_iperf_server$dir" env LD_PRELOAD="$pre" iperf3 -s -1 -B "$A_IP" -p 7475
		srv=$BG_PID
		wait_server 10 || fail "iperf3 server is not listening"
		on_b env LD_PRELOAD="$pre" iperf3 -c "$A_IP" -p 7475 -n 16M $dir \
			>"$T/rspreload_iperf_client$dir.out" 2>&1 || fail "iperf3 $dir client exit status $?"
		wait_pid "$srv" 30 || fail "iperf3 $dir server exit status $?"
		grep -q '^iperf Done' "$T/rspreload_iperf_client$dir.out" &&
			grep -Eq ' 16\.0 MBytes .* sender$' "$T/rspreload_iperf_client$dir.out" &&
			grep -Eq ' MBytes .* receiver$' "$T/rspreload_iperf_client$dir.out" ||
			fail "iperf3 $dir did not complete"
	done
	echo "librspreload: nc moved 16 MiB intact; iperf3 16 MiB each way"
}

"case_${CASE%_drop}" || fail "case $CASE"
daemons_alive || fail "a warpnicd died"
