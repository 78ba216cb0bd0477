#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Wireshark reads what warpnic puts on the wire during an unmodified rping:
#   rping_pcap.sh BUILD_DIR [COUNT]
# Both warpnicd instances capture (wn-pair.sh --pcap) while rping runs COUNT rounds; tshark
# decodes each capture with its iwarp_mpa dissector. That dissector is heuristic only (no
# Decode As: "iwarp_mpa isn't valid for tcp.port") and needs the MPA handshake in the file:
# it is enabled explicitly (--enable-heuristic iwarp_mpa_tcp, whatever the preferences say)
# and the capture starts with the daemons. Checks, in both files:
#   - one MPA Request (B -> A) and one MPA Reply (A -> B), revision 2, CRC flag set, not
#     rejected, no markers (RFC 5044 §7.1, RFC 6581);
#   - every FPDU has a CRC and tshark computes it as good ("Good CRC32": iwarp_mpa.crc_check;
#     a bad one would be iwarp_mpa.crc);
#   - RDMAP opcodes of rping's rounds: >= COUNT Read Requests, Read Responses and Writes,
#     >= 2*COUNT Sends, and the ping data ("rdma-ping-N") in >= 2*COUNT frames;
#   - no expert error or warning other than the two tshark raises on every MPA revision 2
#     Request/Reply (it knows RFC 5044 only: "Res field is NOT set to zero" for the P bit of
#     RFC 6581 §3, "Rev field is NOT set to one").
. "$(dirname "$0")/pair_lib.sh" "$1"
COUNT=${2:-20}
need rping tshark

CAP=$T/cap
pair_start --pcap "$CAP"
bg_a rping_server rping -s -a "$A_IP" -v -V -C "$COUNT"
SRV=$BG_PID
wait_server 10 || fail "rping server did not create its CM id"
on_b rping -c -a "$A_IP" -v -V -C "$COUNT" >"$T/rping_client.out" 2>&1 || fail "rping client failed"
wait_pid "$SRV" 15 || fail "rping server failed"
# stopping the daemons closes (flushes) the pcapng files
env -u LD_LIBRARY_PATH "$PAIR" stop >/dev/null 2>&1

TS=(tshark --enable-heuristic iwarp_mpa_tcp)
# fields NAME FILE FILTER FIELDS...: one line per frame, all occurrences, comma-separated
fields() {
	local f=$1 filter=$2
	shift 2
	local e=() x
	for x in "$@"; do e+=(-e "$x"); done
	"${TS[@]}" -r "$f" -Y "$filter" -T fields -E occurrence=a -E aggregator=, "${e[@]}" 2>/dev/null
}
# count_values: number of comma-separated values in stdin
count_values() { tr ',\t' '\n\n' | grep -c .; }

for n in a b; do
	f=$CAP/$n.pcapng
	[ -s "$f" ] || fail "no capture $f"
	"${TS[@]}" -r "$f" >"$T/tshark_$n.out" 2>&1 || fail "tshark cannot read $f"

	req=$(fields "$f" iwarp_mpa.req ip.src iwarp_mpa.rev iwarp_mpa.crc_flag iwarp_mpa.rej_flag \
		iwarp_mpa.marker_flag)
	rep=$(fields "$f" iwarp_mpa.rep ip.src iwarp_mpa.rev iwarp_mpa.crc_flag iwarp_mpa.rej_flag \
		iwarp_mpa.marker_flag)
	[ "$req" = "$B_IP	2	1	0	0" ] || fail "$n: MPA Request not one rev 2 CRC frame from B: '$req'"
	[ "$rep" = "$A_IP	2	1	0	0" ] || fail "$n: MPA Reply not one rev 2 CRC frame from A: '$rep'"

	fpdus=$(fields "$f" iwarp_mpa.fpdu iwarp_mpa.ulpdulength | count_values)
	good=$(fields "$f" iwarp_mpa.fpdu iwarp_mpa.crc_check | count_values)
	bad=$(fields "$f" iwarp_mpa.crc iwarp_mpa.crc | count_values)
	[ "$fpdus" -ge $((5 * COUNT)) ] || fail "$n: only $fpdus FPDUs decoded"
	[ "$good" = "$fpdus" ] && [ "$bad" = 0 ] ||
		fail "$n: $fpdus FPDUs, $good with a good CRC, $bad with a bad CRC"

	ops=$(fields "$f" iwarp_ddp_rdmap iwarp_rdma.opcode | tr ',' '\n')
	for want in "0x00 $COUNT Write" "0x01 $COUNT Read Request" "0x02 $COUNT Read Response" \
		"0x03 $((2 * COUNT)) Send"; do
		set -- $want
		got=$(grep -cx "$1" <<<"$ops")
		[ "$got" -ge "$2" ] || fail "$n: $got RDMAP ${*:3} (want >= $2)"
	done
	pings=$("${TS[@]}" -r "$f" -Y 'iwarp_ddp_rdmap && frame contains "rdma-ping-"' 2>/dev/null |
		grep -c .)
	[ "$pings" -ge $((2 * COUNT)) ] || fail "$n: ping data in $pings frames only"

	"${TS[@]}" -r "$f" -q -z expert,warn >"$T/expert_$n.out" 2>&1
	others=$(awk '/^Errors|^Warns/ { on = 1; next } /^Notes|^Chats|^=/ { if (!/^=/) on = 0; next }
		on && NF > 3 && !/Res field is NOT set to zero|Rev field is NOT set to one|Summary/' \
		"$T/expert_$n.out")
	[ -z "$others" ] || fail "$n: tshark expert errors/warnings: $others"
	echo "$n.pcapng: MPA Request/Reply rev 2 with CRC, $fpdus FPDUs all with a good CRC32"
done
