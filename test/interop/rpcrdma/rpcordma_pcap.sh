#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tshark's rpcordma dissector reads what lib/rpcrdma puts on the wire:
#   rpcordma_pcap.sh BUILD_DIR
# Both warpnicd capture (wn-pair.sh --pcap) while, through two warpnicd: wn-rpc-blob --test
# (every message form: RDMA_MSG with read/write/reply chunks, RDMA_NOMSG long calls and long
# replies, RDMA_DONE), the same against a server without long replies by read chunk
# (RDMA_ERROR ERR_CHUNK), and wn-rpc-nfs WRITE/READ/VERIFY against wn-rpc-nfsd. Then
# rpcordma_check.py on each capture (tshark -T pdml, Send reassembly off: tshark 4.0
# reassembles only the first of several Sends in one TCP segment): every message decoded,
# RDMA_MSG, RDMA_NOMSG, RDMA_DONE and RDMA_ERROR seen, every XID answered, nothing malformed
# but NFS READ replies with write chunks (a tshark 4.0 limitation over iWARP, counted apart;
# their RDMA Writes checked), and no expert error or warning but tshark's two on every MPA
# revision 2 Request/Reply. TCP sequence analysis is left out (as rnic_it does): a tail loss
# probe or retransmission after a stall of a loaded machine is answered with a D-SACK, which
# tshark flags as a warning; that is TCP working, not an RPC-over-RDMA error.
. "$(dirname "$0")/../verbs/pair_lib.sh" "$1"
BLOB=$WN_BUILD/app/bin/wn-rpc-blob
NFS=$WN_BUILD/app/bin/wn-rpc-nfs
NFSD=$WN_BUILD/app/bin/wn-rpc-nfsd
CHECK=$(dirname "$0")/rpcordma_check.py
[ -x "$BLOB" ] && [ -x "$NFS" ] && [ -x "$NFSD" ] || fail "wn-rpc-blob/nfs/nfsd not built"
command -v tshark >/dev/null || fail "tshark not installed (scripts/setup.sh installs it)"

CAP=$T/cap
pair_start --pcap "$CAP"
for run in plain no_read_reply; do
	opts=()
	[ $run = no_read_reply ] && opts=(--no-read-reply)
	bg_exec a "server_$run" "$BLOB" --server "$A_IP" --store-mb 8 --blob-mb 4 "${opts[@]}"
	SRV=$BG_PID
	wait_line "$T/server_$run.out" "serving BLOB_PROG" 20 || fail "blob server did not start"
	on_b "$BLOB" --client "$A_IP" --test --size 256k --io 64k --nulls 10 "${opts[@]}" \
		>"$T/client_$run.out" 2>&1 || fail "blob client ($run) failed"
	kill -INT "$SRV"
	wait_pid "$SRV" 30 || fail "blob server ($run) did not exit cleanly"
done
EXP=$T/export
mkdir -p "$EXP"
head -c 150000 /dev/urandom >"$EXP/file"
head -c 150000 /dev/urandom >"$T/in"
: >"$EXP/target"
bg_exec a nfsd "$NFSD" --addr "$A_IP" --export "$EXP" --mount-port 0 --max-io 32768
SRV=$BG_PID
wait_line "$T/nfsd.out" "exporting" 20 || fail "wn-rpc-nfsd did not start"
MPORT=$(sed -n 's/.*MOUNT over TCP on [0-9.]* port \([0-9]*\).*/\1/p' "$T/nfsd.out")
for c in "read file $T/out" "write target $T/in" "verify target $T/in" "getattr file"; do
	# shellcheck disable=SC2086
	on_b "$NFS" --server "$A_IP" --export "$EXP" --mount 127.0.0.1 --mount-port "$MPORT" \
		$c >>"$T/nfs.out" 2>&1 || fail "wn-rpc-nfs $c"
done
kill -INT "$SRV"
wait_pid "$SRV" 30 || fail "wn-rpc-nfsd did not exit cleanly"
# stopping the daemons closes (flushes) the pcapng files
env -u LD_LIBRARY_PATH "$PAIR" stop >/dev/null 2>&1

TS=(tshark --enable-heuristic iwarp_mpa_tcp -o iwarp_ddp_rdmap.reassemble_iwarp_rdma_send:FALSE)
for n in a b; do
	f=$CAP/$n.pcapng
	[ -s "$f" ] || fail "no capture $f"
	"${TS[@]}" -r "$f" -T pdml 2>"$T/tshark_$n.err" >"$T/$n.pdml" || fail "tshark cannot read $f"
	res=$(python3 "$CHECK" --need 0,1,3,4 <"$T/$n.pdml") || fail "$n.pcapng: $res"
	echo "$n.pcapng: $res"
	"${TS[@]}" -r "$f" -q -z expert,warn >"$T/expert_$n.out" 2>&1
	others=$(awk '/^Errors|^Warns/ { on = 1; next } /^Notes|^Chats|^=/ { if (!/^=/) on = 0; next }
		on && NF > 3 && !($2 == "Sequence" && $3 == "TCP") &&
		!/Res field is NOT set to zero|Rev field is NOT set to one|Summary/ &&
		!/NFS +Malformed Packet/' "$T/expert_$n.out")
	[ -z "$others" ] || fail "$n: tshark expert errors/warnings: $others"
done
