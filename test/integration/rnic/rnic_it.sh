#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One iWARP integration case (issue 4) between two warpnicd instances:
#
#   rnic_it.sh BUILD_DIR RNIC_IT CASE
#
# Starts a pair (scripts/wn-pair.sh: A 198.19.0.1 and B 198.19.0.2 on memif, no hugepages) in a
# private directory, runs rnic_it's server on A and its client on B (through
# scripts/warpnic-run), checks both exit statuses and what the case expects in the warpnicd
# logs, pcapng files or telemetry, stops the pair. On failure it prints the failed check and
# the tail of every log. WN_RNIC_KEEP=1 keeps the directory.
#
# Cases:
#   ops            Send / Write / Write with Immediate / Read, 1 B..1 MiB both directions,
#                  scatter/gather, inline, zero-length, Send with Solicited Event
#   atomics        RFC 7306 Fetch-and-Add, Compare-and-Swap
#   send_inv       Send with Invalidate of an MR STag: Terminate 0/1/0x09 (cannot invalidate)
#   mw             memory windows type 1 and 2: Writes/Reads through them, Send with
#                  Invalidate, rebind, LOCAL_INV, then a Write with the invalid window STag:
#                  Terminate 1/1/0 (invalid STag), memory untouched
#   frmr           fast-register MR (wnv.h): Read/Write through it, Send with Invalidate,
#                  fast-register again, LOCAL_INV, then a Read with it: Terminate 0/1/0
#   rtr_send|rtr_write|rtr_read   RFC 6581 peer-to-peer with that RTR type only (--rtr on both)
#                  and the capture shows the initiator's first FPDU is that zero-length RTR
#   mpa_rev1       both sides MPA revision 1 (unenhanced): no RTR, data flows
#   no_p2p         initiator does not ask for peer-to-peer: no RTR on the wire
#   ordneg         IRD/ORD negotiation (4/2 against 8/3) and 48 Reads through ORD 2
#   ordneg_one     IRD/ORD 16/16 against 1/1: 48 Reads through ORD 1
#   markers_both   --markers on both sides (markers on the wire in both directions)
#   markers_one    --markers on A only (B sends markers, A does not)
#   mpa_rev1_initiator   B Rev 1, A Rev 2: A accepts the Rev 1 Request (RFC 6581 §5),
#                  no RTR, data flows
#   mpa_rev1_responder   B Rev 2 (S=1), A Rev 1: A closes (RFC 6581 §10), B's connect fails
#                  cleanly, both instances stay up
#   no_crc         --no-crc on both sides (CRC field zero on the wire)
#   viol_rights|viol_bounds|viol_stag|viol_read   remote access violations: Terminate logged
#                  by both warpnicd with the RFC 5040/5041 code, requester's QP flushed,
#                  target memory untouched
#   flush          disconnect: receives outstanding on both sides complete with WR_FLUSH_ERR
#   flush_late     then a Send and a receive posted to the QP in Error: flushed or refused
#   kill           kill -9 of the client mid-transfer: the server sees DISCONNECTED and
#                  flushes, warpnicd B reclaims the client's objects, a new client works
#   impair         4 MiB Write/Read + 1 MiB Send through drop 1 %, reorder 1 %, dup 0.1 %
#   pcap           a capture of the "basic" workload: tshark decodes every FPDU, no CRC error
#   af_packet      "basic" over net_af_packet on a veth pair in two network namespaces
#   zc_reclaim     zero-copy transmit: kill -9 of a streaming client behind drop 1 %, reorder
#                  1 % and a 20 ms delay line (its Writes unacknowledged, their mbufs usually
#                  still in the impairer when its MRs are deregistered, so the DONE of a pinned
#                  MR waits: mr_dereg_deferred): both warpnicd stay up, every zero-copy FPDU is
#                  reclaimed (zc_inflight 0), no MR is left waiting, no object is left, a new
#                  client works
#
# WN_RNIC_ZC=1 runs a case with zero-copy transmit on for every message size
# (--zero-copy-tx on --zero-copy-min 0 on both instances; meson: rnic_zc_CASE) and checks
# that FPDUs did go zero-copy; WN_RNIC_ZC=off with every FPDU copied (--zero-copy-tx off,
# by hand). Otherwise warpnicd's defaults (copying).
set -uo pipefail

B=$(cd "${1:?usage: $0 BUILD_DIR RNIC_IT CASE}" && pwd)
IT=${2:?}
CASE=${3:?}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../../.." && pwd)
PAIR=$TOP/scripts/wn-pair.sh
RUN=$TOP/scripts/warpnic-run
SHIM=$B/drivers/verbs:$B/drivers/rdmacm
WARPNICD=$B/app/warpnicd/warpnicd

# meson puts the shim directories on LD_LIBRARY_PATH (rnic_it links them): warpnicd must not
# see the stand-in libmlx5 there (DPDK's mlx5 PMD would load it); warpnic-run adds them back
# for the clients
unset LD_LIBRARY_PATH

T=$(mktemp -d "/tmp/wn-rnic-$CASE.XXXXXX")
export WN_PAIR_DIR=$T/pair WN_BUILD=$B
A_CTL=$WN_PAIR_DIR/a.sock
B_CTL=$WN_PAIR_DIR/b.sock
A_LOG=$WN_PAIR_DIR/a.log
B_LOG=$WN_PAIR_DIR/b.log
# wn-pair.sh's EAL file prefixes are wn_a_TAG and wn_b_TAG
EAL_TAG=$(printf '%s' "$WN_PAIR_DIR" | cksum | cut -d' ' -f1)
SERVER_IP=198.19.0.1
PAIR_KIND=wn-pair # or "own" (started by launch_own)
OWN_PIDS=()
NS_A=
NS_B=
SRV_PID=

skip() { echo "SKIP [$CASE]: $*"; exit 77; }

show_logs() {
	local f
	for f in "$T"/*.out "$A_LOG" "$B_LOG"; do
		[ -s "$f" ] || continue
		echo "----- $f (last 40 lines)"
		tail -n 40 "$f"
	done
}

fail() {
	echo "FAIL [$CASE]: $*"
	show_logs
	exit 1
}

cleanup() {
	local p
	[ -n "$SRV_PID" ] && kill -KILL "$SRV_PID" 2>/dev/null
	[ -n "${CLI_PID:-}" ] && kill -KILL "$CLI_PID" 2>/dev/null
	if [ "$PAIR_KIND" = wn-pair ]; then
		"$PAIR" stop >/dev/null 2>&1
	else
		for p in "${OWN_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
		for p in "${OWN_PIDS[@]}"; do
			for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
			kill -KILL "$p" 2>/dev/null
		done
	fi
	[ -n "$NS_A" ] && ip netns del "$NS_A" 2>/dev/null
	[ -n "$NS_B" ] && ip netns del "$NS_B" 2>/dev/null
	# EAL runtime directories of this case's instances
	rm -rf "/var/run/dpdk/wn_a_$EAL_TAG" "/var/run/dpdk/wn_b_$EAL_TAG" \
		"/var/run/dpdk/wn_rnic_a_$$" "/var/run/dpdk/wn_rnic_b_$$"
	if [ "${WN_RNIC_KEEP:-0}" = 1 ]; then
		echo "kept $T"
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT

[ -x "$WARPNICD" ] || skip "warpnicd not built"
[ -x "$IT" ] || skip "rnic_it not built"

ZC_OPTS=()
case "${WN_RNIC_ZC:-}" in
"") ;;
off) ZC_OPTS=(--zero-copy-tx off) ;;
*) ZC_OPTS=(--zero-copy-tx on --zero-copy-min 0) ;;
esac

# pair_start [wn-pair.sh options] [-- warpnicd options]
pair_start() {
	local args=("$@")
	if [ ${#ZC_OPTS[@]} -gt 0 ]; then
		case " $* " in
		*" -- "*) args+=("${ZC_OPTS[@]}") ;;
		*) args+=(-- "${ZC_OPTS[@]}") ;;
		esac
	fi
	"$PAIR" start --no-huge "${args[@]}" >"$T/pair.out" 2>&1 || fail "wn-pair.sh start $*"
}

pair_stop() {
	"$PAIR" stop >/dev/null 2>&1
}

# Both warpnicd still running (not crashed by the case).
pair_alive() {
	local n
	for n in a b; do
		kill -0 "$(cat "$WN_PAIR_DIR/$n.pid" 2>/dev/null)" 2>/dev/null ||
			fail "warpnicd $n is gone"
	done
}

# server ARGS...: rnic_it --server on A in the background
server() {
	"$RUN" --shim "$SHIM" --ctl "$A_CTL" "$IT" --server --oob "$T/oob.sock" "$@" \
		>"$T/server.out" 2>&1 &
	SRV_PID=$!
}

# client NAME ARGS...: rnic_it --client on B in the foreground; output in NAME.out
client() {
	local name=$1
	shift
	timeout -s KILL 50 "$RUN" --shim "$SHIM" --ctl "$B_CTL" "$IT" --client "$SERVER_IP" \
		--oob "$T/oob.sock" "$@" >"$T/$name.out" 2>&1
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

# log_has FILE REGEX WHAT
log_has() {
	grep -Eq "$2" "$1" || fail "$3: no line /$2/ in $(basename "$1")"
}

tel_sock() { # instance letter
	echo "/var/run/dpdk/wn_${1}_$EAL_TAG/dpdk_telemetry.v2"
}

# tel LETTER COMMAND KEY...: "k=v ..." of a warpnicd telemetry dictionary
tel() {
	python3 - "$(tel_sock "$1")" "${@:2}" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.recv(16384)
s.send(sys.argv[2].encode())
d = json.loads(s.recv(65536))[sys.argv[2]]
print(" ".join("%s=%d" % (k, d[k]) for k in sys.argv[3:]))
PY
}

# tel_objects LETTER: warpnicd's control-thread object counts
tel_objects() {
	tel "$1" /warpnic/ctl clients pds mrs cqs srqs qps cm_channels cm_ids
}

# ---------------------------------------------------------------- captures

need_tshark() {
	command -v tshark >/dev/null || skip "tshark missing"
	command -v python3 >/dev/null || skip "python3 missing"
}

# Our random payloads look like RPC-over-RDMA or SMB Direct to those heuristic dissectors
# (a "malformed RPCoRDMA" error is theirs, not ours): iWARP only.
TSHARK=(tshark --disable-protocol rpcordma --disable-protocol smb_direct)

# check_capture FILE MIN_FPDUS CRC(0|1)
# One tshark pass over FILE (packet details, the TCP stream, the expert summary):
#  * tshark frames at least MIN_FPDUS FPDUs, each with a ULPDU_Length, DDP and RDMAP header;
#  * every CRC it checks is good, and it checks all of them when CRC is on, none when off;
#  * its expert info has no iWARP error or warning except Wireshark 4.0's complaints about
#    RFC 6581 startup frames (Rev 2 and the enhanced bits in Res are RFC 6581 §5, not
#    RFC 5044 errors); TCP analysis entries are left out: a segment the port dropped under
#    load is retransmitted, which is not an iWARP error;
#  * mpa_stream_check.py walks every FPDU of both directions (Markers, FPDUPTRs, CRCs) and
#    leaves its summary in $T/stream.out (see stream_val).
# With Markers, Wireshark 4.0 assumes one FPDU per TCP segment (its fpdu_total_length() is
# the segment's length) and frames only part of our stream: the walk covers the rest.
check_capture() {
	local f=$1 min=$2 crc=$3 name n_fpdu n_len n_ddp n_rdmap good bad expert out
	name=$(basename "$f")
	"${TSHARK[@]}" -r "$f" -V -z follow,tcp,raw,0 -z expert >"$T/tshark.out" \
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
	[ "$bad" -eq 0 ] || fail "$name: $bad FPDUs with a bad CRC"
	if [ "$crc" = 1 ]; then
		[ "$good" -eq "$n_fpdu" ] || fail "$name: $good good CRCs for $n_fpdu FPDUs"
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
	printf '%s\n' "$out" >"$T/stream.out"
	while IFS= read -r l; do echo "  $name: $l"; done <"$T/stream.out"
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

# ---------------------------------------------------------------- own pairs

# launch NAME NETNS CPU VDEV APP_OPTS...: one warpnicd (not through wn-pair.sh)
launch() {
	local name=$1 ns=$2 cpu=$3 vdev=$4 pid
	shift 4
	local pre=()
	[ -n "$ns" ] && pre=(ip netns exec "$ns")
	mkdir -p "$WN_PAIR_DIR"
	"${pre[@]}" "$WARPNICD" -l "$cpu" --file-prefix "wn_rnic_${name}_$$" --proc-type primary \
		--no-pci --no-huge -m 512 --log-level lib.eal:error --vdev "$vdev" -- \
		--ctl "$WN_PAIR_DIR/$name.sock" --name "wn_$name" "$@" "${ZC_OPTS[@]}" \
		>"$WN_PAIR_DIR/$name.log" 2>&1 &
	pid=$!
	OWN_PIDS+=("$pid")
	for _ in $(seq 300); do
		kill -0 "$pid" 2>/dev/null || fail "warpnicd $name exited"
		grep -q "warpnicd: serving" "$WN_PAIR_DIR/$name.log" 2>/dev/null &&
			[ -S "$WN_PAIR_DIR/$name.sock" ] && return 0
		sleep 0.1
	done
	fail "warpnicd $name not ready"
}

cpu_b() { echo $(($(nproc) > 1 ? 1 : 0)); }

memif_vdev() { # role mac
	echo "net_memif0,role=$1,id=0,socket=$WN_PAIR_DIR/memif.sock,socket-abstract=no,mac=$2"
}

# A and B as wn-pair.sh starts them, with ${a_opts[@]} / ${b_opts[@]} for one side only and
# captures in $T/pcap
own_memif_pair() {
	PAIR_KIND=own
	mkdir -p "$T/pcap"
	launch a "" 0 "$(memif_vdev server 02:77:6e:00:00:01)" --ip 198.19.0.1/24 \
		--pcap "$T/pcap/a.pcapng" "${a_opts[@]}"
	launch b "" "$(cpu_b)" "$(memif_vdev client 02:77:6e:00:00:02)" --ip 198.19.0.2/24 \
		--pcap "$T/pcap/b.pcapng" "${b_opts[@]}"
}

# kill_streaming_client: the server waits for a client it will see killed, a client streams
# Writes and Reads to it and is killed -9 mid-transfer, then a second client runs "basic".
kill_streaming_client() {
	server --case kill
	"$RUN" --shim "$SHIM" --ctl "$B_CTL" "$IT" --client "$SERVER_IP" --oob "$T/oob.sock" \
		--case stream >"$T/victim.out" 2>&1 &
	CLI_PID=$!
	for _ in $(seq 200); do
		grep -q STREAMING "$T/victim.out" && break
		kill -0 "$CLI_PID" 2>/dev/null || fail "streaming client exited"
		sleep 0.1
	done
	grep -q STREAMING "$T/victim.out" || fail "client never streamed"
	sleep 0.5 # more Writes and Reads in flight
	kill -KILL "$CLI_PID"
	wait "$CLI_PID" 2>/dev/null
	CLI_PID=
	echo "  client killed mid-transfer"
	client client2 --case basic || fail "the client after the kill failed"
	wait_server || fail "server exited with $?"
}

# Stop the own pair (the captures are complete afterwards).
own_stop() {
	local p
	for p in "${OWN_PIDS[@]}"; do kill -TERM "$p"; done
	for p in "${OWN_PIDS[@]}"; do wait "$p" || fail "warpnicd (pid $p) exited with $?"; done
	OWN_PIDS=()
}

# ---------------------------------------------------------------- cases

case "$CASE" in
ops | atomics | flush | flush_late)
	pair_start
	run_case --case "$CASE"
	;;
send_inv)
	pair_start
	run_case --case send_inv
	log_has "$A_LOG" "Terminate sent: layer 0 etype 1 code 9$" "responder (A)"
	log_has "$B_LOG" "Terminate received: layer 0 etype 1 code 9$" "requester (B)"
	;;
frmr)
	pair_start
	run_case --case frmr
	# the Read Request with the locally invalidated FRMR STag: RDMAP, invalid STag
	log_has "$A_LOG" "Terminate sent: layer 0 etype 1 code 0$" "responder (A)"
	log_has "$B_LOG" "Terminate received: layer 0 etype 1 code 0$" "requester (B)"
	;;
mw)
	pair_start
	run_case --case mw
	# the Write with the locally invalidated window STag: DDP tagged, invalid STag
	log_has "$A_LOG" "Terminate sent: layer 1 etype 1 code 0$" "responder (A)"
	log_has "$B_LOG" "Terminate received: layer 1 etype 1 code 0$" "requester (B)"
	;;
rtr_send | rtr_write | rtr_read | mpa_rev1 | no_p2p)
	need_tshark
	rev=2
	case "$CASE" in
	rtr_send) opts=(--rtr send); want=(0x03 18) ;;    # zero-length Send (RFC 6581 §7.1)
	rtr_write) opts=(--rtr write); want=(0x00 14) ;;  # zero-length Write
	rtr_read) opts=(--rtr read); want=(0x01 46) ;;    # Read Request, size 0
	mpa_rev1) opts=(--mpa-rev 1); want=(0x03 19); rev=1 ;; # no RTR: the 1-octet Send
	no_p2p) opts=(--no-p2p); want=(0x03 19) ;;
	esac
	pair_start --pcap "$T/pcap" -- "${opts[@]}"
	run_case --case basic --small
	pair_alive
	pair_stop
	check_capture "$T/pcap/a.pcapng" 20 1
	expect_startup 0 0 1 $rev
	expect_first "${want[@]}"
	;;
ordneg)
	pair_start
	run_case --case ordneg --c-ird 4 --c-ord 2 --s-ird 8 --s-ord 3 --reads 48 \
		--tel "$(tel_sock b)"
	;;
ordneg_one)
	pair_start
	run_case --case ordneg --c-ird 16 --c-ord 16 --s-ird 1 --s-ord 1 --reads 48 \
		--tel "$(tel_sock b)"
	;;
markers_both | no_crc)
	need_tshark
	if [ "$CASE" = markers_both ]; then opts=(--markers); m=1; crc=1
	else opts=(--no-crc); m=0; crc=0; fi
	pair_start --pcap "$T/pcap" -- "${opts[@]}"
	run_case --case basic --small
	pair_alive
	pair_stop
	check_capture "$T/pcap/a.pcapng" 20 $crc
	expect_startup $m $m $crc 2
	if [ "$CASE" = markers_both ]; then
		expect_markers initiator on
		expect_markers responder on
	fi
	;;
markers_one | mpa_rev1_initiator | mpa_rev1_responder)
	need_tshark
	a_opts=()
	b_opts=()
	case "$CASE" in
	markers_one) a_opts=(--markers) ;;
	mpa_rev1_initiator) b_opts=(--mpa-rev 1) ;;
	mpa_rev1_responder) a_opts=(--mpa-rev 1) ;;
	esac
	own_memif_pair
	if [ "$CASE" = mpa_rev1_responder ]; then
		# RFC 6581 §10: a Rev 1 responder treats S=1 as malformed and closes; the
		# initiator MAY retry with Rev 1 (warpnicd does not): a clean failure
		run_case --case refused
	else
		run_case --case basic --small
	fi
	own_stop
	case "$CASE" in
	markers_one)
		# A asked for markers (in its Reply): B → A carries markers, A → B does not
		check_capture "$T/pcap/a.pcapng" 20 1
		expect_startup 0 1 1 2
		expect_markers initiator on
		expect_markers responder off
		;;
	mpa_rev1_responder)
		# the Request (Rev 2) and nothing else: no Reply, no FPDU
		check_capture "$T/pcap/a.pcapng" 0 1
		[ "$(stream_val request)" = "0 1 2" ] || fail "Request '$(stream_val request)'"
		[ "$(stream_val reply)" = none ] || fail "a Reply followed"
		;;
	*)
		# RFC 6581 §5: a Rev 2 host accepts Rev 1 Requests; a Rev 1 exchange has no RTR
		check_capture "$T/pcap/a.pcapng" 20 1
		expect_startup 0 0 1 1
		expect_first 0x03 19
		;;
	esac
	;;
viol_rights | viol_bounds | viol_stag | viol_read)
	kind=${CASE#viol_}
	case "$kind" in
	rights) code="layer 0 etype 1 code 2" ;; # RDMAP remote protection: access rights
	bounds) code="layer 1 etype 1 code 1" ;; # DDP tagged: base or bounds violation
	stag) code="layer 1 etype 1 code 0" ;;   # DDP tagged: invalid STag
	read) code="layer 0 etype 1 code 2" ;;   # RDMAP remote protection: access rights
	esac
	pair_start
	run_case --case viol --viol "$kind"
	log_has "$A_LOG" "Terminate sent: $code$" "target (A)"
	log_has "$B_LOG" "Terminate received: $code$" "requester (B)"
	pair_alive
	;;
kill)
	pair_start
	kill_streaming_client
	grep -h "rnic_it" "$T/server.out" "$T/client2.out" | sed 's/^/  /'
	pair_alive
	log_has "$B_LOG" "client 1 gone, its objects reclaimed" "warpnicd B (killed client)"
	echo "  B: $(grep -h "objects reclaimed" "$B_LOG" | head -2 | tr '\n' ' ')"
	# nothing of either client is left in either instance
	if command -v python3 >/dev/null; then
		for n in a b; do
			objs=$(tel_objects $n) || fail "telemetry of $n"
			echo "  $n /warpnic/ctl: $objs"
			none="clients=0 pds=0 mrs=0 cqs=0 srqs=0 qps=0 cm_channels=0 cm_ids=0"
			[ "$objs" = "$none" ] || fail "warpnicd $n still holds objects: $objs"
		done
	fi
	;;
zc_reclaim)
	ZC_OPTS=(--zero-copy-tx on --zero-copy-min 0)
	pair_start --impair drop=0.01,reorder=0.01,tx_delay_us=20000,seed=7
	kill_streaming_client
	pair_alive
	log_has "$B_LOG" "client 1 gone, its objects reclaimed" "warpnicd B (killed client)"
	command -v python3 >/dev/null || skip "python3 missing for telemetry"
	st=$(tel b /warpnic/dp/stats zc_fpdus) || fail "telemetry of b"
	[ "$st" != "zc_fpdus=0" ] || fail "B sent nothing zero-copy"
	# reclaimed: TCP released every record (aborted connections included), every mbuf was
	# freed, every pinned region got its DONE (and was unmapped by the control thread)
	for _ in $(seq 100); do
		st=$(tel b /warpnic/dp/stats zc_inflight mr_dereg_waiting mr_dereg_deferred)
		case "$st" in "zc_inflight=0 mr_dereg_waiting=0 "*) break ;; esac
		sleep 0.1
	done
	echo "  B /warpnic/dp/stats: $st"
	case "$st" in
	"zc_inflight=0 mr_dereg_waiting=0 "*) ;;
	*) fail "warpnicd B did not reclaim its zero-copy references: $st" ;;
	esac
	# whether the killed client's MRs went while the delay line still held mbufs of their
	# pages depends on timing (mr_dereg_deferred above, usually 1 or more): if a DONE came
	# early, the control thread unmapped pages those mbufs point to and B crashed sending them
	pair_alive
	for n in a b; do
		objs=$(tel_objects $n) || fail "telemetry of $n"
		echo "  $n /warpnic/ctl: $objs"
		none="clients=0 pds=0 mrs=0 cqs=0 srqs=0 qps=0 cm_channels=0 cm_ids=0"
		[ "$objs" = "$none" ] || fail "warpnicd $n still holds objects: $objs"
	done
	;;
impair)
	pair_start --impair drop=0.01,reorder=0.01,dup=0.001,seed=4
	run_case --case bulk --mib 4
	pair_alive
	# the impairment was real: both stacks repaired losses
	for n in a b; do
		st=$(tel $n /warpnic/dp/tcp tx_retrans rx_ooo rx_dup_data) || fail "telemetry of $n"
		echo "  $n TCP: $st"
		[ "${st%% *}" != "tx_retrans=0" ] || fail "warpnicd $n retransmitted nothing"
	done
	;;
pcap)
	need_tshark
	pair_start --pcap "$T/pcap"
	run_case --case basic
	pair_alive
	pair_stop
	check_capture "$T/pcap/a.pcapng" 50 1
	expect_startup 0 0 1 2
	check_capture "$T/pcap/b.pcapng" 50 1
	expect_startup 0 0 1 2
	;;
af_packet)
	[ "$(id -u)" = 0 ] || skip "needs root for network namespaces"
	command -v ip >/dev/null || skip "iproute2 missing"
	PAIR_KIND=own
	NS_A=wn-rnic-a-$$
	NS_B=wn-rnic-b-$$
	ip netns add "$NS_A" || skip "cannot create namespaces"
	ip netns add "$NS_B" || fail "cannot create a second namespace"
	ip link add "wnra$$" netns "$NS_A" type veth peer name "wnrb$$" netns "$NS_B" ||
		fail "veth pair"
	for x in "$NS_A:wnra$$" "$NS_B:wnrb$$"; do
		ns=${x%%:*}
		ifc=${x#*:}
		ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$ifc.disable_ipv6=1" || true
		ip -n "$ns" link set "$ifc" up
		ip -n "$ns" link set lo up
	done
	SERVER_IP=198.18.0.1
	launch a "$NS_A" 0 "net_af_packet0,iface=wnra$$" --ip 198.18.0.1/24
	launch b "$NS_B" "$(cpu_b)" "net_af_packet0,iface=wnrb$$" --ip 198.18.0.2/24
	run_case --case basic
	;;
*)
	echo "unknown case $CASE" >&2
	exit 2
	;;
esac
# With zero-copy on and the pair still up: FPDUs did go zero-copy (either direction), unless
# the case moves no payload (atomics, refused connections, violations, flushes).
if [ "${ZC_OPTS[1]:-}" = on ] && [ "$PAIR_KIND" = wn-pair ] && command -v python3 >/dev/null &&
	kill -0 "$(cat "$WN_PAIR_DIR/a.pid" 2>/dev/null)" 2>/dev/null &&
	kill -0 "$(cat "$WN_PAIR_DIR/b.pid" 2>/dev/null)" 2>/dev/null; then
	za=$(tel a /warpnic/dp/stats zc_fpdus) || fail "telemetry of a"
	zb=$(tel b /warpnic/dp/stats zc_fpdus) || fail "telemetry of b"
	echo "  zero-copy: A $za, B $zb"
	case "$CASE" in
	atomics | mpa_rev1_responder | viol_* | flush*) ;;
	*) [ "$za $zb" != "zc_fpdus=0 zc_fpdus=0" ] || fail "zero-copy on, but no FPDU went zero-copy" ;;
	esac
fi
echo "PASS [$CASE]"
