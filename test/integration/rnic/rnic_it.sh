#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One iWARP integration case (issue 4) between two warpnicd instances:
#
#   rnic_it.sh BUILD_DIR RNIC_IT CASE
#   rnic_it.sh --list          the case names (column 1 of the table) and their zc column
#
# The cases are the lines of the table "cases" beside this script (meson.build registers one
# test per line from the same table): NAME | ZC | PAIR | RUN | CHECKS.
#   PAIR   scripts/wn-pair.sh start options ("-": none), in a private pair directory, without
#          hugepages; PCAP stands for this case's capture directory; "-- --llp sctp" has
#          both warpnicd carry every connection as DDP over SCTP (RFC 5043)
#   RUN    rnic_it's arguments, after any NAME=VALUE words (the programs' environment, e.g.
#          WARPNIC_LLP=sctp: the programs' own choice of lower layer, which the client
#          library reads), given to its server on A (198.19.0.1) and its client on B
#          (through scripts/warpnic-run), both must exit 0 (TEL_B stands for B's telemetry
#          socket, MIB for $WN_RNIC_MIB, default 4: scripts/soak.sh runs the fault matrix
#          with 256); or @kill: a client streaming Writes and Reads is killed -9 mid-transfer
#          while B holds its objects, then a second client runs "basic" against the same
#          server; or @flap MS ARGS: as ARGS, and an eighth into the Writes (the first
#          operation of xfer) B's fault injector drops every frame either way for MS
#          milliseconds while the client posts the rest; or @mangle ARGS: as ARGS, with a
#          --hook that has B's fault injector mangle its next TCP segment with data (a
#          payload octet flipped under a good TCP checksum); or @restart ARGS: as ARGS, then
#          A is stopped and started again (wn-pair.sh restart a) and ARGS run once more
#          (with PAIR --b-first: B's memif client came up before its server, and again)
#   CHECKS "; "-separated, in order, from counters (no log line decides a verdict):
#     json client|server|both KEY OP VALUE   rnic_it's --json counters (KEY may be a.b)
#     tel a|b COMMAND KEY OP VALUE           warpnicd telemetry (waits up to 10 s for it)
#     term a|b CAUSE       that instance sent a Terminate with CAUSE (layer/etype/0xcode,
#                          RFC 5040 §7.1; telemetry term_sent_last) and the other received it
#     objects_none a b...  /warpnic/ctl counts every object of every client gone (10 s)
#     zc_reclaimed a|b     FPDUs went zero-copy and every one was reclaimed (zc_inflight 0,
#                          no MR deregistration waiting)
#     impair b KEY OP VALUE  B's fault injector counter (/wn_impair/xstats: rx_impair_drop,
#                          tx_impair_down, ...; without rx_/tx_: both summed): the fault
#                          was injected
#     tcp KEY OP VALUE     the sum of both instances' /warpnic/dp/tcp KEY
#     matrix               prints the fault matrix's lines ("MATRIX ..."): per operation of
#                          rnic_it's xfer the octets verified and the time, then the faults
#                          injected and both instances' retransmission counters (TCP's, and
#                          usrsctp's from /warpnic/dp/sctp when SCTP carried DATA)
#     llp sctp|mpa         the lower layer that carried the case, from both instances'
#                          /warpnic/dp/stats: sctp: on both, DDP Stream Sessions over SCTP
#                          reached RDMA mode, no session error, no MPA FPDU sent (tx_fpdus 0),
#                          and ULPDUs went over SCTP; mpa: FPDUs sent and no SCTP session
#     capture a|b MIN CRC  stops the pair (both warpnicd must exit 0), then that instance's
#                          capture: see check_capture
#     startup REQ_M REP_M CRC REV, first OPCODE LENGTH, markers DIRECTION on|off,
#     request M C REV, reply none     what the last capture's MPA stream walk found (of
#                          its first TCP connection, or of the one "stream N" walked)
#     stream N             walk TCP stream N (tshark's tcp.stream) of the last capture
#   OP is one of = != > >= < <=. After RUN, before CHECKS, while the pair is up: both
#   warpnicd are alive and counted no MPA CRC error (unless a check names mpa_crc_errors),
#   and with zero-copy on (ZC "zc") FPDUs
#   went zero-copy ("zc0": the case moves no payload).
#   ZC     "-", or "zc"/"zc0": meson also runs the case as rnic_zc_NAME with WN_RNIC_ZC=1
#
# WN_RNIC_ZC=1 runs a case with zero-copy transmit on for every message size
# (wn-pair.sh --zero-copy all); WN_RNIC_ZC=off with every FPDU copied (--zero-copy off, by
# hand). Otherwise warpnicd's defaults (copying). On failure the script prints the failed
# check and the tail of every log. WN_RNIC_KEEP=1 keeps the directory. A missing
# prerequisite (tshark, python3, root for af_packet's namespaces) fails the case.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TABLE=$HERE/cases

# table_rows: the table's lines without comments and blank lines
table_rows() { grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$TABLE"; }

if [ "${1:-}" = --list ]; then
	table_rows | while IFS='|' read -r name zc _; do echo $name $zc; done
	exit 0
fi

B=$(cd "${1:?usage: $0 BUILD_DIR RNIC_IT CASE}" && pwd)
IT=${2:?}
CASE=${3:?}
TOP=$(cd "$HERE/../../.." && pwd)
PAIR=$TOP/scripts/wn-pair.sh
RUN=$TOP/scripts/warpnic-run
SHIM=$B/drivers/verbs:$B/drivers/rdmacm
SERVER_IP=198.19.0.1
SRV_PID=
CLI_PID=
PAIR_UP=0

# meson puts the shim directories on LD_LIBRARY_PATH (rnic_it links them): warpnicd must not
# see the stand-in libmlx5 there (DPDK's mlx5 PMD would load it); warpnic-run adds them back
# for the clients
unset LD_LIBRARY_PATH

T=$(mktemp -d "/tmp/wn-rnic-$CASE.XXXXXX")
export WN_PAIR_DIR=$T/pair WN_BUILD=$B

show_logs() {
	local f
	for f in "$T"/*.out "$T"/*.json; do
		[ -s "$f" ] || continue
		echo "----- $f (last 40 lines)"
		tail -n 40 "$f"
	done
	"$PAIR" logs 40
}

fail() {
	echo "FAIL [$CASE]: $*"
	show_logs
	exit 1
}

cleanup() {
	[ -n "$SRV_PID" ] && kill -KILL "$SRV_PID" 2>/dev/null
	[ -n "$CLI_PID" ] && kill -KILL "$CLI_PID" 2>/dev/null
	"$PAIR" stop >/dev/null 2>&1
	if [ "${WN_RNIC_KEEP:-0}" = 1 ]; then
		echo "kept $T"
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT

for p in "$B/app/warpnicd/warpnicd" "$IT"; do
	[ -x "$p" ] || fail "missing prerequisite: $p not built"
done
command -v python3 >/dev/null || fail "missing prerequisite: python3 (scripts/setup.sh)"

row=$(table_rows | awk -F'|' -v c="$CASE" '{ n = $1; gsub(/[ \t]/, "", n) } n == c')
[ -n "$row" ] || { echo "rnic_it.sh: no case $CASE in $TABLE" >&2; exit 2; }
IFS='|' read -r _ ZC PAIR_OPTS RUN_ARGS CHECKS <<<"$row"
ZC=${ZC// /}

ZC_OPTS=()
case "${WN_RNIC_ZC:-}" in
"") ;;
off) ZC_OPTS=(--zero-copy off) ;;
*) ZC_OPTS=(--zero-copy all) ;;
esac

# words STRING: the table cell's words with PCAP and TEL_B substituted, one per line
words() {
	local w
	for w in $1; do
		case "$w" in
		-) ;;
		PCAP) echo "$T/pcap" ;;
		MIB) echo "${WN_RNIC_MIB:-4}" ;;
		TEL_B) "$PAIR" env | sed -n 's/^WN_B_TEL=//p' ;;
		*) echo "$w" ;;
		esac
	done
}

# ---------------------------------------------------------------- the pair

pair_start() {
	local opts
	mapfile -t opts < <(words "$PAIR_OPTS")
	"$PAIR" start --owner $$ --no-huge "${ZC_OPTS[@]}" "${opts[@]}" >"$T/pair.out" 2>&1 ||
		fail "wn-pair.sh start ${opts[*]}"
	PAIR_UP=1
}

# pair_stop: both warpnicd exit 0 (after SIGTERM); the captures are complete afterwards
pair_stop() {
	[ "$PAIR_UP" = 1 ] || return 0
	PAIR_UP=0
	"$PAIR" stop >"$T/stop.out" 2>&1 || fail "stopping the pair: $(cat "$T/stop.out")"
}

# ---------------------------------------------------------------- the programs

# server ARGS...: rnic_it --server on A in the background
server() {
	"$RUN" --shim "$SHIM" --ctl "$T/pair/a.sock" "$IT" --server --oob "$T/oob.sock" \
		--json "$T/server.json" "$@" >"$T/server.out" 2>&1 &
	SRV_PID=$!
}

# client NAME ARGS...: rnic_it --client on B in the foreground; output in NAME.out, counters
# in NAME.json
client() {
	local name=$1
	shift
	timeout -s KILL "$CLIENT_SECS" "$RUN" --shim "$SHIM" --ctl "$T/pair/b.sock" "$IT" --client \
		"$SERVER_IP" --oob "$T/oob.sock" --json "$T/$name.json" "$@" >"$T/$name.out" 2>&1
}

wait_server() {
	local rc
	wait "$SRV_PID"
	rc=$?
	SRV_PID=
	return $rc
}

# run_case ARGS...: server and client with the same rnic_it arguments, both must pass
run_case() {
	local rc_c rc_s
	server "$@"
	client client "$@"
	rc_c=$?
	if [ $rc_c -ne 0 ]; then
		sleep 1
		kill -TERM "$SRV_PID" 2>/dev/null
	fi
	wait_server
	rc_s=$?
	[ $rc_c -eq 0 ] || fail "client exited with $rc_c"
	[ $rc_s -eq 0 ] || fail "server exited with $rc_s"
	grep -h "rnic_it" "$T/server.out" "$T/client.out" | sed 's/^/  /'
}

# run_kill: the server waits for a client it will see killed; a client streams Writes and
# Reads to it and is killed -9 mid-transfer (while B counts its objects), then a second
# client runs "basic"
run_kill() {
	local held
	server --case kill
	"$RUN" --shim "$SHIM" --ctl "$T/pair/b.sock" "$IT" --client "$SERVER_IP" \
		--oob "$T/oob.sock" --case stream >"$T/victim.out" 2>&1 &
	CLI_PID=$!
	for _ in $(seq 200); do
		grep -q STREAMING "$T/victim.out" && break
		kill -0 "$CLI_PID" 2>/dev/null || fail "streaming client exited"
		sleep 0.1
	done
	grep -q STREAMING "$T/victim.out" || fail "client never streamed"
	sleep 0.5 # more Writes and Reads in flight
	held=$("$PAIR" tel b /warpnic/ctl clients qps mrs) || fail "telemetry of b"
	case "$held" in
	"clients=0 "* | *" qps=0 "* | *" mrs=0") fail "B holds no objects of the streamer: $held" ;;
	esac
	kill -KILL "$CLI_PID"
	wait "$CLI_PID" 2>/dev/null
	CLI_PID=
	echo "  client killed mid-transfer (B held $held)"
	client client --case basic || fail "the client after the kill failed"
	wait_server || fail "server exited with $?"
	grep -h "rnic_it" "$T/server.out" "$T/client.out" | sed 's/^/  /'
}

# run_flap MS ARGS...: run_case ARGS with rnic_it's --hook: an eighth into the Writes, the
# client has B's fault injector take the link down for MS milliseconds (a flap) and posts
# the rest; the transfer must survive it
run_flap() {
	local ms=$1 port
	shift
	port=$("$PAIR" tel b /wn_impair/list | tr -d '[] ') || fail "no fault injector on B"
	[ -n "$port" ] || fail "no fault injector on B (the pair needs --impair)"
	run_case "$@" --hook "'$PAIR' tel b /wn_impair/link_down,$port,$ms >'$T/flap.out' 2>&1"
	grep -q '"down_ms": '"$ms" "$T/flap.out" || fail "the link flap was not triggered"
	grep -h "hook after" "$T/client.out" | sed 's/^/  /'
}

# run_mangle ARGS...: run_case ARGS with a --hook that arms B's fault injector to corrupt
# the next TCP segment B sends with data, below TCP (the checksum made right again)
run_mangle() {
	local port
	port=$("$PAIR" tel b /wn_impair/list | tr -d '[] ') || fail "no fault injector on B"
	[ -n "$port" ] || fail "no fault injector on B (the pair needs --impair)"
	run_case "$@" --hook "'$PAIR' tel b /wn_impair/mangle,$port,tx,1 >'$T/mangle.out' 2>&1"
	grep -q '"tx_mangle_next": 1' "$T/mangle.out" || fail "the fault injector was not armed"
}

# run_restart ARGS...: run_case ARGS, restart A (B's memif client loses its server and
# must reconnect when A is back), run_case ARGS again
run_restart() {
	run_case "$@"
	"$PAIR" restart a >"$T/restart.out" 2>&1 || fail "wn-pair.sh restart a: $(cat "$T/restart.out")"
	echo "  A restarted; B: $("$PAIR" tel b /warpnic/dp/port link gate link_downs link_restarts)"
	run_case "$@"
}

# ---------------------------------------------------------------- counters

# cmp_op GOT OP WANT: numbers compared as numbers, anything else as strings (= and != only)
cmp_op() {
	python3 - "$@" <<'PY'
import operator, sys
got, op, want = sys.argv[1:4]
ops = {'=': operator.eq, '!=': operator.ne, '>': operator.gt, '>=': operator.ge,
       '<': operator.lt, '<=': operator.le}
try:
    got, want = int(got, 0), int(want, 0)
except ValueError:
    if op not in ('=', '!='):
        sys.exit(1)
sys.exit(0 if ops[op](got, want) else 1)
PY
}

# json_val FILE KEY: a value of rnic_it's --json counters (KEY may be a.b; absent: 0)
json_val() {
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split('.'):
    d = d.get(k, 0) if isinstance(d, dict) else 0
print(d)
PY
}

check_json() { # client|server|both KEY OP VALUE
	local who=$1 s got
	[ "$who" = both ] && who="client server"
	for s in $who; do
		[ -s "$T/$s.json" ] || fail "rnic_it $s wrote no counters"
		got=$(json_val "$T/$s.json" "$2") || fail "rnic_it $s counters unreadable"
		echo "  $s: $2 = $got"
		cmp_op "$got" "$3" "$4" || fail "rnic_it $s: $2 is $got, want $3 $4"
	done
}

# check_tel a|b COMMAND KEY OP VALUE: telemetry (snapshots refresh every 100 ms) within 10 s
check_tel() {
	local got="" end=$((SECONDS + 10))
	while [ $SECONDS -lt $end ]; do
		if got=$("$PAIR" tel "$1" "$2" "$3" 2>"$T/tel.err"); then
			got=${got#*=}
			cmp_op "$got" "$4" "$5" && break
		else
			got="(no answer: $(cat "$T/tel.err"))"
		fi
		sleep 0.2
	done
	echo "  $1 $2: $3 = $got"
	cmp_op "$got" "$4" "$5" || fail "warpnicd $1 $2: $3 is $got, want $4 $5"
}

# tel_is a|b COMMAND "K=V ...": the instance's telemetry shows exactly these values (10 s)
tel_is() {
	local got end=$((SECONDS + 10)) keys
	keys=$(printf '%s\n' $3 | sed 's/=.*//')
	while [ $SECONDS -lt $end ]; do
		got=$("$PAIR" tel "$1" "$2" $keys 2>&1) && [ "$got" = "$3" ] && break
		sleep 0.2
	done
	echo "  $1 $2: $got"
	[ "$got" = "$3" ] || fail "warpnicd $1 $2: $got, want $3"
}

check_term() { # a|b CAUSE: one Terminate, sent by that instance, received by the other
	local other=b
	[ "$1" = b ] && other=a
	tel_is "$1" /warpnic/dp/stats "term_sent=1 term_sent_last=$2"
	tel_is "$other" /warpnic/dp/stats "term_recv=1 term_recv_last=$2"
}

# impair_val KEY: B's fault injector counter (KEY without rx_/tx_: the two summed)
impair_val() {
	local port v
	port=$("$PAIR" tel b /wn_impair/list | tr -d '[] ') && [ -n "$port" ] || return 1
	case "$1" in
	rx_* | tx_*) "$PAIR" tel b "/wn_impair/xstats,$port" "$1" | sed 's/^[^=]*=//' ;;
	*)
		v=$("$PAIR" tel b "/wn_impair/xstats,$port" "rx_impair_$1" "tx_impair_$1") ||
			return 1
		v=${v//[a-z_]*=/}
		echo $(( ${v// / + } ))
		;;
	esac
}

check_tcp_sum() { # KEY OP VALUE
	local a b
	a=$("$PAIR" tel a /warpnic/dp/tcp "$1") || fail "telemetry of a"
	b=$("$PAIR" tel b /warpnic/dp/tcp "$1") || fail "telemetry of b"
	a=${a#*=} b=${b#*=}
	echo "  TCP $1: A $a + B $b"
	cmp_op "$((a + b))" "$2" "$3" || fail "TCP $1 of both is $((a + b)), want $2 $3"
}

check_impair() { # b KEY OP VALUE
	local got
	[ "$1" = b ] || fail "impair: only B has a fault injector"
	got=$(impair_val "$2") || fail "no fault injector counters on B"
	echo "  b fault injector: $2 = $got"
	cmp_op "$got" "$3" "$4" || fail "B's fault injector: $2 is $got, want $3 $4"
}

# check_matrix: the fault matrix's lines for this case, from rnic_it's xfer counters, B's
# fault injector and both instances' TCP counters
check_matrix() {
	local port
	port=$("$PAIR" tel b /wn_impair/list | tr -d '[] ')
	"$PAIR" tel b "/wn_impair/xstats,$port" >"$T/impair.json" 2>/dev/null || echo '{}' >"$T/impair.json"
	"$PAIR" tel a /warpnic/dp/tcp >"$T/tcp_a.json" || fail "telemetry of a"
	"$PAIR" tel b /warpnic/dp/tcp >"$T/tcp_b.json" || fail "telemetry of b"
	"$PAIR" tel a /warpnic/dp/sctp >"$T/sctp_a.json" || fail "telemetry of a"
	"$PAIR" tel b /warpnic/dp/sctp >"$T/sctp_b.json" || fail "telemetry of b"
	python3 - "$CASE" "$T/client.json" "$T/impair.json" "$T/tcp_a.json" "$T/tcp_b.json" \
		"$T/sctp_a.json" "$T/sctp_b.json" <<'PY' || fail "matrix: counters unreadable"
import json, sys
case, cj, ij, ta, tb, sa, sb = sys.argv[1:8]
c = json.load(open(cj))
try:
    imp = json.load(open(ij))  # B's fault injector; none in a fault-free case
except ValueError:
    imp = {}
if not isinstance(imp, dict) or not any(k.startswith(('tx_impair', 'rx_impair')) for k in imp):
    imp = {}
a, b = json.load(open(ta)), json.load(open(tb))
sca, scb = json.load(open(sa)), json.load(open(sb))
for x in c.get('xfer', []):
    what = '%d atomics' % x['ops'] if x['op'] == 'atomic' else '%d octets' % x['octets']
    rate = ('%.0f ops/s' % (x['ops'] * 1000.0 / max(x['ms'], 1)) if x['op'] == 'atomic'
            else '%.1f MB/s' % (x['octets'] / 1000.0 / max(x['ms'], 1)))
    print('  MATRIX %s %s: %s verified, checksums equal at both ends, %.3f s, %s' %
          (case, x['op'], what, x['ms'] / 1000.0, rate))
faults = []
for k in ('drop', 'reorder', 'dup', 'delay', 'down', 'mangle', 'corrupt'):
    n = imp.get('tx_impair_' + k, 0) + imp.get('rx_impair_' + k, 0)
    if n:
        faults.append('%s %d' % (k, n))
frames = imp.get('tx_impair_in', 0) + imp.get('rx_impair_in', 0)
print('  MATRIX %s faults: %s of %d frames' % (case, ', '.join(faults) or 'none', frames))
for n, t in (('A', a), ('B', b)):
    if t['tx_segs'] == 0:
        continue
    print('  MATRIX %s TCP %s: %d retransmitted, %d fast retransmits, %d RTOs, %d TLPs, '
          '%d recoveries undone' % (case, n, t['tx_retrans'], t['fast_retrans'],
                                    t['rto_fired'], t.get('tlp_probes', 0),
                                    t.get('undo_spurious', 0)))
for n, t in (('A', sca), ('B', scb)):
    if t['tx_data'] == 0:
        continue
    print('  MATRIX %s SCTP %s: %d DATA chunks sent, %d retransmitted (%d fast), %d T3 '
          'timeouts, %d duplicates received' % (case, n, t['tx_data'], t['tx_retrans'],
                                                t['fast_retrans'], t['t3_timeouts'],
                                                t['rx_dup_data']))
PY
}

# check_llp sctp|mpa: which lower layer carried the case (both instances' counters; a side
# may send nothing, as A in "flush", so the ULPDUs and FPDUs sent count for both together)
check_llp() {
	local n v sent=0 sctp_sessions sctp_tx_ulpdus sctp_errors tx_fpdus
	for n in a b; do
		v=$("$PAIR" tel "$n" /warpnic/dp/stats sctp_sessions sctp_tx_ulpdus sctp_errors \
			tx_fpdus) || fail "telemetry of $n"
		echo "  $n lower layer: $v"
		eval "$v"
		case "$1" in
		sctp)
			[ "$sctp_sessions" -gt 0 ] || fail "$n: no DDP Stream Session over SCTP ($v)"
			[ "$sctp_errors" = 0 ] && [ "$tx_fpdus" = 0 ] ||
				fail "$n: SCTP session errors or MPA FPDUs ($v)"
			sent=$((sent + sctp_tx_ulpdus))
			;;
		mpa)
			[ "$sctp_sessions" = 0 ] || fail "$n: SCTP sessions ($v)"
			sent=$((sent + tx_fpdus))
			;;
		*) echo "rnic_it.sh: llp sctp|mpa, not '$1'" >&2; exit 2 ;;
		esac
	done
	[ "$sent" -gt 0 ] || fail "nothing went over $1"
}

check_objects_none() { # a|b...
	local n
	for n in "$@"; do
		tel_is "$n" /warpnic/ctl "clients=0 pds=0 mrs=0 cqs=0 srqs=0 qps=0 cm_channels=0 cm_ids=0"
	done
}

check_zc_reclaimed() { # a|b
	# TCP released every record (aborted connections included), every mbuf was freed,
	# every pinned region got its DONE (and was unmapped by the control thread). Whether
	# the killed client's MRs went while the delay line still held mbufs of their pages
	# (mr_dereg_deferred) depends on timing: if a DONE came early, the control thread
	# unmapped pages those mbufs point to and the instance crashed sending them.
	check_tel "$1" /warpnic/dp/stats zc_fpdus ">" 0
	tel_is "$1" /warpnic/dp/stats "zc_inflight=0 mr_dereg_waiting=0"
	"$PAIR" alive || fail "a warpnicd is gone"
}

# ---------------------------------------------------------------- captures

# Our random payloads look like RPC-over-RDMA or SMB Direct to those heuristic dissectors
# (a "malformed RPCoRDMA" error is theirs, not ours): iWARP only.
TSHARK=(tshark --disable-protocol rpcordma --disable-protocol smb_direct)

# check_capture FILE MIN_FPDUS CRC(0|1)
# One tshark pass over FILE (packet details, the TCP stream, the expert summary):
#  * tshark frames at least MIN_FPDUS FPDUs, each with a ULPDU_Length, DDP and RDMAP header;
#  * every CRC it checks is good, and it checks all of them when CRC is on, none when off;
#    except what mpa_stream_check.py excuses: with Markers, Wireshark 4.0 frames a segment
#    that is not exactly one FPDU (packed, or cut by a retransmission) wrongly and may call
#    its CRC bad (seen beside a CPU hog); the walk checks those FPDUs' CRCs itself;
#  * its expert info has no iWARP error or warning except Wireshark 4.0's complaints about
#    RFC 6581 startup frames (Rev 2 and the enhanced bits in Res are RFC 6581 §5, not
#    RFC 5044 errors); TCP analysis entries are left out: a segment the port dropped under
#    load is retransmitted, which is not an iWARP error;
#  * mpa_stream_check.py walks every FPDU of both directions (Markers, FPDUPTRs, CRCs) and
#    leaves its summary in $T/stream.out (see stream_val).
# With Markers, Wireshark 4.0 assumes one FPDU per TCP segment (its fpdu_total_length() is
# the segment's length) and frames only part of our stream: the walk covers the rest.
check_capture() {
	local f=$1 min=$2 crc=$3 name n_fpdu n_len n_ddp n_rdmap good bad expert out excused
	name=$(basename "$f")
	"${TSHARK[@]}" -r "$f" -V -z follow,tcp,raw,0 -z follow,tcp,raw,1 -z expert \
		>"$T/tshark.out" \
		2>>"$T/tshark.err" || fail "tshark cannot read $name"
	n_fpdu=$(grep -c "^    FPDU$" "$T/tshark.out")
	n_len=$(grep -c "^        ULPDU length: " "$T/tshark.out")
	n_ddp=$(grep -c "^    DDP header$" "$T/tshark.out")
	n_rdmap=$(grep -c "^    RDMAP header$" "$T/tshark.out")
	good=$(grep -c "(Good CRC32)" "$T/tshark.out")
	bad=$(grep -c "Bad CRC32" "$T/tshark.out")
	echo "  $name: tshark: $n_fpdu FPDUs, $n_ddp DDP and $n_rdmap RDMAP headers," \
		"CRC good $good bad $bad"
	[ "$n_fpdu" -ge "$min" ] || fail "$name: only $n_fpdu FPDUs decoded"
	[ "$n_len" -eq "$n_fpdu" ] || fail "$name: $n_fpdu FPDUs but $n_len ULPDU_Length fields"
	[ "$n_ddp" -eq "$n_fpdu" ] || fail "$name: $n_fpdu FPDUs but $n_ddp DDP headers"
	[ "$n_rdmap" -eq "$n_fpdu" ] || fail "$name: $n_fpdu FPDUs but $n_rdmap RDMAP headers"
	if [ "$crc" = 1 ]; then
		[ $((good + bad)) -eq "$n_fpdu" ] ||
			fail "$name: $good good and $bad bad CRCs for $n_fpdu FPDUs"
	else
		[ "$good" -eq 0 ] || fail "$name: CRC checked although CRC is off"
	fi
	expert=$(awk '/^(Errors|Warns) \(/ { on = 1; next } /^(Notes|Chats) \(/ { on = 0 }
		on && $1 ~ /^[0-9]+$/ && $0 ~ /IWARP|iWARP|MPA|DDP|RDMA/' "$T/tshark.out" |
		grep -v -e "Res field is NOT set to zero as required by RFC 5044" \
			-e "Rev field is NOT set to one as required by RFC 5044" || true)
	[ -z "$expert" ] || fail "$name: tshark expert errors/warnings: $expert"
	out=$(python3 "$HERE/mpa_stream_check.py" "$T/tshark.out" 2>&1) ||
		fail "$name: ${out:-mpa_stream_check failed}"
	excused=$(sed -n 's/^tshark bad CRC excused: //p' <<<"$out")
	[ "$bad" -eq "${excused:-0}" ] ||
		fail "$name: $bad FPDUs with a bad CRC (${excused:-0} on segments Wireshark misframes)"
	[ "$bad" -eq 0 ] || echo "  $name: $bad bad CRCs are Wireshark's, on segments that are not" \
		"one FPDU (the walk found every CRC valid)"
	printf '%s\n' "$out" >"$T/stream.out"
	while IFS= read -r l; do echo "  $name: $l"; done <"$T/stream.out"
}

# walk_stream N: mpa_stream_check.py on TCP stream N of the last capture (0: the first
# connection, which check_capture walked; 1: the second, e.g. a connect retried with MPA Rev
# 1); its summary replaces $T/stream.out for the checks that follow
walk_stream() {
	local out
	out=$(python3 "$HERE/mpa_stream_check.py" "$T/tshark.out" "$1" 2>&1) ||
		fail "TCP stream $1: ${out:-mpa_stream_check failed}"
	printf '%s\n' "$out" >"$T/stream.out"
	while IFS= read -r l; do echo "  TCP stream $1: $l"; done <"$T/stream.out"
}

# stream_val KEY: the value of "KEY: value" in the last check_capture's stream summary
stream_val() {
	sed -n "s/^$1: //p" "$T/stream.out" | head -1
}

# expect_startup REQ_M REP_M CRC REV: the MPA Request (from B, the initiator) and the Reply
# carried these M and C bits and revision
expect_startup() {
	local req rep
	req=$(stream_val request)
	rep=$(stream_val reply)
	[ "$req" = "$1 $3 $4" ] || fail "MPA Request (M C Rev) '$req', want '$1 $3 $4'"
	[ "$rep" = "$2 $3 $4" ] || fail "MPA Reply (M C Rev) '$rep', want '$2 $3 $4'"
}

# expect_first OPCODE ULPDU_LENGTH: the initiator's first FPDU
expect_first() {
	local got
	got=$(stream_val first)
	[ "$got" = "$1 $2" ] || fail "initiator's first FPDU (opcode length) '$got', want '$1 $2'"
}

# expect_markers DIRECTION on|off
expect_markers() {
	grep -q "^$1 -> peer: .* Markers $2 " "$T/stream.out" ||
		fail "$1 -> peer: Markers not $2"
}

check_capture_of() { # a|b MIN CRC
	command -v tshark >/dev/null || fail "missing prerequisite: tshark (scripts/setup.sh)"
	pair_stop
	check_capture "$T/pcap/$1.pcapng" "$2" "$3"
}

# ---------------------------------------------------------------- the case

if [[ " $PAIR_OPTS " == *" --link af_packet "* ]] && [ "$(id -u)" != 0 ]; then
	fail "missing prerequisite: root, for af_packet's network namespaces"
fi
pair_start
mapfile -t run_args < <(words "$RUN_ARGS")
# leading NAME=VALUE words: the programs' environment (warpnic-run passes it on)
while [ ${#run_args[@]} -gt 0 ] && [[ "${run_args[0]}" =~ ^[A-Z_][A-Z0-9_]*= ]]; do
	export "${run_args[0]}"
	run_args=("${run_args[@]:1}")
done
# the client's time limit: rnic_it xfer bounds each of its four operations itself
CLIENT_SECS=50
[[ " ${run_args[*]} " == *" --case xfer "* ]] && CLIENT_SECS=$((120 + 4 * (60 + 2 * ${WN_RNIC_MIB:-4})))
case "${run_args[0]}" in
@kill) run_kill ;;
@flap) run_flap "${run_args[@]:1}" ;;
@mangle) run_mangle "${run_args[@]:1}" ;;
@restart) run_restart "${run_args[@]:1}" ;;
*) run_case "${run_args[@]}" ;;
esac

"$PAIR" alive || fail "a warpnicd is gone"
# a case about CRC errors checks them itself
if [[ "$CHECKS" != *mpa_crc_errors* ]]; then
	tel_is a /warpnic/dp/stats mpa_crc_errors=0
	tel_is b /warpnic/dp/stats mpa_crc_errors=0
fi
if [ "${ZC_OPTS[1]:-}" = all ] && [ "$ZC" = zc ]; then
	za=$("$PAIR" tel a /warpnic/dp/stats zc_fpdus) || fail "telemetry of a"
	zb=$("$PAIR" tel b /warpnic/dp/stats zc_fpdus) || fail "telemetry of b"
	echo "  zero-copy: A $za, B $zb"
	[ "$za $zb" != "zc_fpdus=0 zc_fpdus=0" ] || fail "zero-copy on, but no FPDU went zero-copy"
fi

IFS=';' read -r -a checks <<<"$CHECKS"
for c in "${checks[@]}"; do
	read -r -a w <<<"$c"
	[ ${#w[@]} -gt 0 ] || continue
	case "${w[0]}" in
	-) ;;
	json) check_json "${w[@]:1}" ;;
	tel) check_tel "${w[@]:1}" ;;
	term) check_term "${w[@]:1}" ;;
	objects_none) check_objects_none "${w[@]:1}" ;;
	zc_reclaimed) check_zc_reclaimed "${w[1]}" ;;
	impair) check_impair "${w[@]:1}" ;;
	tcp) check_tcp_sum "${w[@]:1}" ;;
	matrix) check_matrix ;;
	llp) check_llp "${w[1]}" ;;
	capture) check_capture_of "${w[@]:1}" ;;
	startup) expect_startup "${w[@]:1}" ;;
	first) expect_first "${w[@]:1}" ;;
	stream) walk_stream "${w[1]}" ;;
	markers) expect_markers "${w[@]:1}" ;;
	request | reply)
		got=$(stream_val "${w[0]}")
		[ "$got" = "${w[*]:1}" ] || fail "MPA ${w[0]} '$got', want '${w[*]:1}'"
		;;
	*) echo "rnic_it.sh: unknown check '${w[0]}' in $TABLE" >&2; exit 2 ;;
	esac
done
pair_stop
echo "PASS [$CASE]"
