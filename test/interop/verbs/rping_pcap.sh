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
#   - every TCP segment with payload is decoded as MPA (a Request/Reply or FPDUs), and no
#     frame is malformed;
#   - with WN_VERBS_IP=6 (IPv6 only): no IPv4 or ARP frame at all; ICMPv6 address
#     resolution between A and B (a Neighbor Solicitation of one for the other, answered by
#     an Advertisement); the capturing daemon's DAD probes (NS from ::) for its address and
#     a link-local address (the peer's are sent when this side's link may not be up yet);
#     each daemon's Advertisement of its address once usable;
#   - no expert error or warning other than the two tshark raises on every MPA revision 2
#     Request/Reply (it knows RFC 5044 only: "Res field is NOT set to zero" for the P bit of
#     RFC 6581 §3, "Rev field is NOT set to one"), and none of TCP's sequence analysis (a
#     tail loss probe after a stall of a loaded machine draws a D-SACK, a warning to tshark).
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
ip_check # (telemetry, before the daemons stop)
# stopping the daemons closes (flushes) the pcapng files
env -u LD_LIBRARY_PATH "$PAIR" stop >"$T/stop.out" 2>&1 || fail "a warpnicd did not stop cleanly: $(cat "$T/stop.out")"

TS=(tshark --enable-heuristic iwarp_mpa_tcp)
# One field pass per file (one line per MPA frame, every occurrence, comma-separated); the
# checks below read it. Fields: ip.src, Request key, Reply key, rev, CRC flag, reject flag,
# marker flag, ULPDU lengths, good CRCs (crc_check), bad CRCs (crc), RDMAP opcodes, payload.
IPSRC=ip.src
[ "$WN_VERBS_IP" = 4 ] || IPSRC=ipv6.src
FIELDS=($IPSRC iwarp_mpa.key.req iwarp_mpa.key.rep iwarp_mpa.rev iwarp_mpa.crc_flag
	iwarp_mpa.rej_flag iwarp_mpa.marker_flag iwarp_mpa.ulpdulength iwarp_mpa.crc_check
	iwarp_mpa.crc iwarp_rdma.opcode data.data)
CHECK='
import sys
count, a_ip, b_ip = int(sys.argv[1]), sys.argv[2], sys.argv[3]
vals = lambda f: [v for v in f.split(",") if v]
req, rep, fpdus, good, bad, ops, pings = [], [], 0, 0, 0, [], 0
for line in sys.stdin:
    f = (line.rstrip("\n").split("\t") + [""] * 12)[:12]
    hs = (f[0], f[3], f[4], f[5], f[6])
    if f[1]:
        req.append(hs)
    if f[2]:
        rep.append(hs)
    fpdus += len(vals(f[7]))
    good += len(vals(f[8]))
    bad += len(vals(f[9]))
    ops += vals(f[10])
    pings += "72646d612d70696e672d" in f[11]  # "rdma-ping-"
err = []
# rev 2, CRC flag set, not rejected, no markers (tshark prints booleans as 1/0)
if req != [(b_ip, "2", "1", "0", "0")]:
    err.append("MPA Request not one rev 2 CRC frame from B: %s" % req)
if rep != [(a_ip, "2", "1", "0", "0")]:
    err.append("MPA Reply not one rev 2 CRC frame from A: %s" % rep)
if fpdus < 5 * count:
    err.append("only %d FPDUs decoded" % fpdus)
if good != fpdus or bad:
    err.append("%d FPDUs, %d with a good CRC, %d with a bad CRC" % (fpdus, good, bad))
for op, want, name in (("0x00", count, "Write"), ("0x01", count, "Read Request"),
                       ("0x02", count, "Read Response"), ("0x03", 2 * count, "Send")):
    if ops.count(op) < want:
        err.append("%d RDMAP %s (want >= %d)" % (ops.count(op), name, want))
if pings < 2 * count:
    err.append("ping data in %d frames only" % pings)
print("; ".join(err) if err else "ok %d" % fpdus)
'

for n in a b; do
	f=$CAP/$n.pcapng
	[ -s "$f" ] || fail "no capture $f"
	e=()
	for x in "${FIELDS[@]}"; do e+=(-e "$x"); done
	"${TS[@]}" -r "$f" -Y iwarp_mpa -T fields -E occurrence=a -E aggregator=, "${e[@]}" \
		>"$T/fields_$n.tsv" 2>"$T/tshark_$n.out" || fail "tshark cannot read $f"
	res=$(python3 -c "$CHECK" "$COUNT" "$A_IP" "$B_IP" <"$T/fields_$n.tsv")
	[ "${res%% *}" = ok ] || fail "$n.pcapng: $res"
	fpdus=${res#ok }

	# every TCP payload decoded as MPA; nothing malformed
	k=$("${TS[@]}" -r "$f" -Y 'tcp.len > 0 && !iwarp_mpa' 2>/dev/null | wc -l)
	[ "$k" = 0 ] || fail "$n.pcapng: $k TCP segments with payload not decoded as MPA"
	k=$("${TS[@]}" -r "$f" -Y '_ws.malformed' 2>/dev/null | wc -l)
	[ "$k" = 0 ] || fail "$n.pcapng: $k malformed frames"
	if [ "$WN_VERBS_IP" = 6 ]; then
		k=$("${TS[@]}" -r "$f" -Y 'ip || arp' 2>/dev/null | wc -l)
		[ "$k" = 0 ] || fail "$n.pcapng: $k IPv4/ARP frames in an IPv6-only pair"
		# ICMPv6 type, source, target: NS/NA between A and B, DAD probes from ::
		"${TS[@]}" -r "$f" -Y 'icmpv6.type == 135 || icmpv6.type == 136' -T fields \
			-e icmpv6.type -e ipv6.src -e icmpv6.nd.ns.target_address \
			-e icmpv6.nd.na.target_address >"$T/ndp_$n.tsv" 2>/dev/null ||
			fail "tshark cannot read $f"
		own=$A_IP
		[ $n = b ] && own=$B_IP
		res=$(python3 - "$A_IP" "$B_IP" "$T/ndp_$n.tsv" "$own" <<'PY'
import ipaddress, sys
a, b = (ipaddress.ip_address(x) for x in sys.argv[1:3])
own = ipaddress.ip_address(sys.argv[4])
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[3])]
ns = [(ipaddress.ip_address(r[1]), ipaddress.ip_address(r[2])) for r in rows if r[0] == "135"]
na = [(ipaddress.ip_address(r[1]), ipaddress.ip_address(r[3])) for r in rows if r[0] == "136"]
unspec = ipaddress.ip_address("::")
err = []
# address resolution (RFC 4861 §7.2): one solicits the other, which answers; the solicited
# one learns the solicitor from the NS's source link-layer option and need not ask back
if not [1 for src, tgt in ns if {src, tgt} == {a, b} and (tgt, tgt) in na]:
    err.append("no NS between %s and %s answered by an NA" % (a, b))
dad = {t for s, t in ns if s == unspec}
# each address announced once usable (NA from itself)
for x in (a, b):
    if (x, x) not in na:
        err.append("no NA from %s" % x)
# the daemon's own probes (the peer's may be sent before this side's link is up)
if own not in dad:
    err.append("no DAD probe for %s" % own)
if not any(t.is_link_local for t in dad):
    err.append("no DAD probe for a link-local address")
print("; ".join(err) if err else "ok %d NS (%d DAD probes), %d NA" % (len(ns), len(dad), len(na)))
PY
		)
		[ "${res%% *}" = ok ] || fail "$n.pcapng: $res"
		echo "$n.pcapng: ICMPv6 ${res#ok }; no IPv4 or ARP frame"
	fi

	"${TS[@]}" -r "$f" -q -z expert,warn >"$T/expert_$n.out" 2>&1
	others=$(awk '/^Errors|^Warns/ { on = 1; next } /^Notes|^Chats|^=/ { if (!/^=/) on = 0; next }
		on && NF > 3 && !($2 == "Sequence" && $3 == "TCP") &&
		!/Res field is NOT set to zero|Rev field is NOT set to one|Summary/' \
		"$T/expert_$n.out")
	[ -z "$others" ] || fail "$n: tshark expert errors/warnings: $others"
	echo "$n.pcapng: MPA Request/Reply rev 2 with CRC, $fpdus FPDUs all with a good CRC32"
done
