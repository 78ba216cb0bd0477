#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Wireshark reads what warpnic puts on the wire during an unmodified rping over DDP over SCTP
# (RFC 5043, the program's own choice: WARPNIC_LLP=sctp):
#   rping_sctp_pcap.sh BUILD_DIR [COUNT]
# Both warpnicd instances capture (wn-pair.sh --pcap) while rping runs COUNT rounds; tshark
# decodes each capture's SCTP. Wireshark 4.0's iwarp_ddp_rdmap dissector has no SCTP binding:
# it is reached only from iwarp_mpa (a TCP heuristic), registers no PPID, and "Decode As"
# refuses it ("-d sctp.ppi==16,iwarp_ddp_rdmap": not valid for sctp.ppi); it would misread
# RFC 5043's chunks anyway, whose DDP segment follows a 2-octet DDP-SSN. So tshark checks the
# SCTP layer, with CRC32c verification on (sctp.checksum:CRC-32C), and this script reads the
# DDP and RDMAP headers out of the DATA payloads tshark leaves undissected. Checks, in both
# files:
#   - tshark dissects every IP protocol 132 packet as SCTP, none malformed, every CRC32c good,
#     and raises no expert error or warning (but its sequence analysis: a chunk sent again
#     after a stall of a loaded machine is not a decoding error);
#   - INIT (from B) and INIT ACK (from A) carry the Adaptation Layer Indication with DDP's
#     code point 0x00000001 (RFC 5043 §5.1, RFC 5061 §4.2.7), then COOKIE ECHO / COOKIE ACK,
#     SACKs both ways, the end by SHUTDOWN / SHUTDOWN ACK / SHUTDOWN COMPLETE;
#   - every DATA chunk has PPID 16 (DDP segment) or 17 (session control), is unordered and
#     whole (U, B and E set: RFC 5043 §10, no SCTP fragmentation), and each direction's
#     DDP-SSNs run from 0 without a gap;
#   - session control: B's first message an Initiate, A's an Accept (plain or RFC 6581
#     enhanced), each side's last a Terminate, every message well formed (§5.2.3);
#   - every DDP segment: DDP version 1, RDMAP version 1, a header of the length its T bit
#     says, and rping's rounds in its opcodes: >= COUNT Writes, Read Requests and Read
#     Responses, >= 2 x COUNT Sends, the ping data ("rdma-ping-N") in >= 2 x COUNT segments.
export WARPNIC_LLP=sctp
. "$(dirname "$0")/pair_lib.sh" "$1"
COUNT=${2:-20}
need rping tshark

CAP=$T/cap
pair_start --pcap "$CAP"
bg_a rping_server rping -s -a "$A_IP" -v -V -C "$COUNT"
SRV=$BG_PID
wait_server 10 || fail "rping server is not listening"
on_b rping -c -a "$A_IP" -v -V -C "$COUNT" >"$T/rping_client.out" 2>&1 || fail "rping client failed"
wait_pid "$SRV" 15 || fail "rping server failed"
llp_check
# stopping the daemons closes (flushes) the pcapng files
env -u LD_LIBRARY_PATH "$PAIR" stop >"$T/stop.out" 2>&1 || fail "a warpnicd did not stop cleanly: $(cat "$T/stop.out")"

TS=(tshark -o sctp.checksum:CRC-32C)
# One line per IP protocol 132 packet, every occurrence, comma-separated. Fields: frame,
# ip.src, whether tshark made it SCTP, malformed, checksum status (1 good), chunk types,
# adaptation indications, then one entry per DATA chunk: PPID, U, B, E bits, stream, payload.
FIELDS=(frame.number ip.src sctp.srcport _ws.malformed sctp.checksum.status sctp.chunk_type
	sctp.adaptation_layer_indication sctp.data_payload_proto_id sctp.data_u_bit
	sctp.data_b_bit sctp.data_e_bit sctp.data_sid data.data)
CHECK='
import sys
count, a_ip, b_ip = int(sys.argv[1]), sys.argv[2], sys.argv[3]
err = []
vals = lambda f: [v for v in f.split(",") if v != ""]
chunks = {}          # (src, type) -> count
adapt = {}           # (src, type) -> indications seen
ssns = {}            # (src, sid) -> DDP-SSNs
ctl = {}             # src -> function codes in order
ops = []
pings = segs = pkts = 0
tagged = {0: True, 1: False, 2: True, 3: False, 4: False, 5: False, 6: False, 7: False,
          8: False, 9: False, 10: False, 11: False, 12: False}
for line in sys.stdin:
    f = (line.rstrip("\n").split("\t") + [""] * 13)[:13]
    num, src = f[0], f[1]
    pkts += 1
    if not f[2]:
        err.append("frame %s: not dissected as SCTP" % num)
        continue
    if f[3]:
        err.append("frame %s: malformed" % num)
    if f[4] != "1":
        err.append("frame %s: CRC32c status %s (1: good)" % (num, f[4] or "none"))
    types = [int(t) for t in vals(f[5])]
    for t in types:
        chunks[(src, t)] = chunks.get((src, t), 0) + 1
    ind = vals(f[6])
    ctypes = [t for t in types if t in (1, 2)]
    if ctypes:
        adapt.setdefault((src, ctypes[0]), []).extend(ind or ["none"])
    ppid, u, b, e, sid, data = (vals(x) for x in f[7:13])
    if not (len(ppid) == len(u) == len(b) == len(e) == len(sid) == len(data) ==
            types.count(0)):
        err.append("frame %s: %d DATA chunks but %s PPIDs/U/B/E/streams/payloads" %
                   (num, types.count(0), [len(x) for x in (ppid, u, b, e, sid, data)]))
        continue
    for i in range(len(ppid)):
        p = bytes.fromhex(data[i])
        if (u[i], b[i], e[i]) != ("1", "1", "1"):
            err.append("frame %s: DATA chunk U/B/E %s/%s/%s (want unordered, whole)" %
                       (num, u[i], b[i], e[i]))
        if len(p) < 4:
            err.append("frame %s: a DATA payload of %d octets" % (num, len(p)))
            continue
        ssns.setdefault((src, sid[i]), set()).add(int.from_bytes(p[:2], "big"))
        if ppid[i] == "17":
            fc = int.from_bytes(p[2:4], "big")
            ctl.setdefault(src, []).append(fc)
            pd = len(p) - 4
            if fc not in range(1, 8) or pd > 512 or (fc == 4 and pd) or (fc >= 5 and pd < 4):
                err.append("frame %s: session control code %d with %d octets" % (num, fc, pd))
        elif ppid[i] == "16":
            segs += 1
            t, dv, rv, op = p[2] >> 7, p[2] & 3, p[3] >> 6, p[3] & 15
            hl = 14 if t else 18
            if dv != 1 or rv != 1 or op not in tagged or tagged[op] != bool(t) or \
               len(p) < 2 + hl:
                err.append("frame %s: DDP segment T %d DV %d RV %d opcode %d, %d octets" %
                           (num, t, dv, rv, op, len(p) - 2))
                continue
            ops.append(op)
            pings += b"rdma-ping-" in p[2 + hl:]
        else:
            err.append("frame %s: DATA chunk with PPID %s" % (num, ppid[i]))
if pkts == 0:
    err.append("no SCTP packet")
for side, t, name in ((b_ip, 1, "INIT"), (a_ip, 2, "INIT ACK")):
    got = adapt.get((side, t), [])
    if not got or any(x != "0x00000001" for x in got):
        err.append("%s from %s: Adaptation Layer Indication %s (want 0x00000001)" %
                   (name, side, got or "absent"))
for side, t, name in ((b_ip, 10, "COOKIE ECHO"), (a_ip, 11, "COOKIE ACK"), (a_ip, 3, "SACK"),
                      (b_ip, 3, "SACK"), (b_ip, 7, "SHUTDOWN"), (a_ip, 8, "SHUTDOWN ACK"),
                      (b_ip, 14, "SHUTDOWN COMPLETE")):
    if not chunks.get((side, t)):
        err.append("no %s from %s" % (name, side))
for k, s in sorted(ssns.items()):
    if s != set(range(len(s))):
        err.append("%s stream %s: DDP-SSNs not 0..%d without a gap" % (k[0], k[1], len(s) - 1))
for side, first, name in ((b_ip, (1, 5), "Initiate"), (a_ip, (2, 6), "Accept")):
    c = ctl.get(side, [])
    if not c or c[0] not in first or c[-1] != 4:
        err.append("session control from %s: %s (want %s first, Terminate last)" %
                   (side, c, name))
for op, want, name in ((0, count, "Write"), (1, count, "Read Request"),
                       (2, count, "Read Response"), (3, 2 * count, "Send")):
    if ops.count(op) < want:
        err.append("%d RDMAP %s (want >= %d)" % (ops.count(op), name, want))
if pings < 2 * count:
    err.append("ping data in %d segments only" % pings)
if err:
    print("; ".join(err[:12]))
else:
    print("ok %d packets, %d DDP segments, %d SACK chunks, session control %s / %s" %
          (pkts, segs, chunks.get((a_ip, 3), 0) + chunks.get((b_ip, 3), 0),
           ctl.get(b_ip), ctl.get(a_ip)))
'

for n in a b; do
	f=$CAP/$n.pcapng
	[ -s "$f" ] || fail "no capture $f"
	e=()
	for x in "${FIELDS[@]}"; do e+=(-e "$x"); done
	"${TS[@]}" -r "$f" -Y "ip.proto == 132" -T fields -E occurrence=a -E aggregator=, "${e[@]}" \
		>"$T/fields_$n.tsv" 2>"$T/tshark_$n.out" || fail "tshark cannot read $f"
	res=$(python3 -c "$CHECK" "$COUNT" "$A_IP" "$B_IP" <"$T/fields_$n.tsv")
	[ "${res%% *}" = ok ] || fail "$n.pcapng: $res"
	# expert infos of warning severity and above (PI_WARN 0x00600000), but sequence analysis
	# (group PI_SEQUENCE 0x02000000); a malformed packet is an error, so it shows here too.
	# tshark prints severity and group in decimal, one entry per item of the frame.
	"${TS[@]}" -r "$f" -Y "_ws.expert.severity >= 0x00600000" -T fields -E occurrence=a \
		-E aggregator=, -e frame.number -e _ws.expert.severity -e _ws.expert.group \
		-e _ws.expert.message >"$T/expert_$n.tsv" 2>>"$T/tshark_$n.out" ||
		fail "tshark cannot read $f"
	others=$(awk -F'\t' '{ n = split($2, sev, ","); split($3, grp, ",")
		for (i = 1; i <= n; i++) if (sev[i] >= 6291456 && grp[i] != 33554432) { print; next } }' \
		"$T/expert_$n.tsv")
	[ -z "$others" ] || fail "$n: tshark expert errors/warnings: $others"
	echo "$n.pcapng: ${res#ok }, every CRC32c good, no malformed packet, no expert error"
done
echo "rping over SCTP: $COUNT rounds, both captures decode cleanly"
