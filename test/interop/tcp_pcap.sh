#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# wn-tcpapp --pcap writes a pcapng file that tshark reads; its TCP expert analysis must
# show no error, and no warning except those the impairer causes (lost/unseen segments,
# retransmissions, out-of-order, duplicate ACKs). If it fails, warpnic emits segments
# Linux' dissector flags as broken (bad checksums, malformed options, window violations)
# or the capture file is invalid.
#
#   tcp_pcap.sh BUILD_DIR [IMPAIR_ARGS|none]    (WN_INTEROP_PCAP_BYTES, default 16 MiB)
. "$(dirname "$0")/lib.sh" "$1"
command -v tshark >/dev/null || missing "tshark"
impair=${2:-none}
bytes=${WN_INTEROP_PCAP_BYTES:-16777216}
imp=()
[ "$impair" = none ] || imp=(--impair "$impair")
echo "case: pcapng of a $bytes byte transfer, impair $impair"

start_app app --mode sink --ip "$WN_IP/24" --listen 5001 --conns 1 --pcap "$T/cap.pcapng" \
	--timeout "$CASE_TIMEOUT" "${imp[@]}"
wait_line "$T/app.out" listening 30 || fail "sink did not start"
kns timeout "$CASE_TIMEOUT" python3 "$KPEER" send "$WN_IP" 5001 "$bytes" >"$T/kpeer.out" \
	2>"$T/kpeer.err" || fail "kernel client failed"
wait_pid "$APP_PID" 60
rc=$?
[ "$rc" = 0 ] || fail "wn-tcpapp exit status $rc"
sent=$(field "$T/kpeer.out" sha256 sha256)
got=$(field "$T/app.out" '^conn ' sha256)
[ "$sent" = "$got" ] || fail "sha256 differs"

# the payload is random: decode it as data, not as whatever dissector claims port 5001
tshark -r "$T/cap.pcapng" -d tcp.port==5001,data -o tcp.check_checksum:TRUE \
	-o ip.check_checksum:TRUE -q -z expert >"$T/expert.out" 2>"$T/tshark.err" ||
	fail "tshark cannot read the capture"
pkts=$(tshark -r "$T/cap.pcapng" -T fields -e frame.number 2>/dev/null | wc -l)
echo "capture: $pkts packets"
[ "$pkts" -gt 100 ] || fail "capture has only $pkts packets"
# Without the impairer no frame is ever on the wire twice (a retransmission has a new IPv4
# ID): an identical frame means the capture itself wrote one twice. Named here, instead of
# surfacing as a TCP-analysis warning tshark guesses at.
if [ "$impair" = none ]; then
	tshark -r "$T/cap.pcapng" -Y ip -T fields -e frame.number -e ip.src -e ip.id -e ip.len \
		-e tcp.seq_raw -e tcp.ack_raw -e tcp.flags 2>/dev/null |
		awk -F'\t' '{ k = $2 " " $3 " " $4 " " $5 " " $6 " " $7
			if (k in first) print "frame " $1 " repeats frame " first[k]
			else first[k] = $1 }' >"$T/dups.txt"
	[ -s "$T/dups.txt" ] &&
		fail "$(wc -l <"$T/dups.txt") frames are in the capture twice: $(head -n 3 "$T/dups.txt")"
fi
cat "$T/expert.out"
# the senders of segments whose TCP checksum field is 0xffff (see "Named exceptions" below)
tshark -r "$T/cap.pcapng" -d tcp.port==5001,data -Y 'tcp.checksum == 0xffff' -T fields \
	-e ip.src 2>/dev/null | sort -u | paste -sd, >"$T/ffff.out"
# tshark -z expert prints sections "Errors (N)", "Warns (N)", "Notes (N)", "Chats (N)",
# each followed by a table of "Frequency Group Protocol Summary" rows.
python3 - "$T/expert.out" "$impair" "$(cat "$T/ffff.out")" "$K_IP" <<'PY' || fail "unexpected expert items (see above)"
import re, sys
text = open(sys.argv[1]).read()
impaired = sys.argv[2] != "none"
# what an impaired path legitimately shows (drop, dup, reorder on either side of the capture)
# A duplicate of the peer's last ACK or FIN that arrives after warpnic closed is answered
# with a RST (RFC 9293 §3.10.7.1, CLOSED state), which a Linux peer in TIME-WAIT ignores
# (RFC 1337): tshark flags it "Connection reset (RST)".
caused = ["previous segment", "acked segment that wasn't captured", "retransmission",
          "out-of-order", "duplicate ack", "dup ack", "lost segment", "spurious", "d-sack",
          "connection reset"]
# flow control, not an error
benign = ["window is full", "completely full", "zero window", "window update"]
# Named exceptions: (summary text, why it is not warpnic's fault); any other warning or error
# fails the test. Without the impairer a peer may still retransmit (Linux's tail loss probe
# or RTO after a stall of a loaded machine): warpnic answers the duplicate with a D-SACK
# (RFC 2883), which tshark lists as a warning; excused only when the capture shows such a
# retransmission.
peer_retrans = re.search(r"\d+\s+Sequence\s+TCP\s+This frame is a \(suspected\) retransmission",
                         text) is not None
excused = [("d-sack", "the answer to a peer's retransmission (RFC 2883)")] if peer_retrans else []
# Linux's skb_checksum_help() (a segment the kernel sums in software for a device without
# checksum offload, as the tap: single segments such as retransmissions; GSO computes its
# own) writes a zero sum as 0xffff (CSUM_MANGLED_0), UDP's rule (RFC 768); receivers accept
# it (RFC 1624 §3), tshark warns. Excused only when every such segment is the kernel's:
# warpnic sends a zero sum as 0x0000 (RFC 9293 §3.1; lib/net output.c).
ffff_from = [a for a in sys.argv[3].split(",") if a]
if ffff_from and all(a == sys.argv[4] for a in ffff_from):
    excused.append(("checksum 0xffff instead of 0x0000",
                    "the Linux peer's CSUM_MANGLED_0 (skb_checksum_help)"))
sec = None
bad = []
for line in text.splitlines():
    m = re.match(r"\s*(Errors|Warns|Notes|Chats)\s*\(\d+\)", line)
    if m:
        sec = m.group(1)
        continue
    row = re.match(r"\s*(\d+)\s+(\S+)\s+(\S+)\s+(.*\S)", line)
    if not row or sec is None or row.group(1) == "Frequency":
        continue
    group, proto, summary = row.group(2), row.group(3), row.group(4).lower()
    if proto not in ("TCP", "IPv4", "IPv6", "ETH", "Ethernet", "ARP", "ICMP", "Frame"):
        continue  # a payload dissector guessing at random data
    if sec in ("Notes", "Chats"):
        continue  # informational (a peer's retransmission is not an error)
    item = "%s: %s/%s %s" % (sec, proto, group, summary)
    if any(b in summary for b in benign) or (impaired and any(c in summary for c in caused)):
        continue
    why = [w for s, w in excused if s in summary]
    if why:
        print("excused: %s (%s)" % (item, why[0]))
        continue
    bad.append(item)
for b in bad[:20]:
    print("unexpected:", b)
if len(bad) > 20:
    print("unexpected: ... %d more" % (len(bad) - 20))
sys.exit(1 if bad else 0)
PY
echo "PASS: tshark expert analysis clean (impair $impair)"
