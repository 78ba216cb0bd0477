#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Two wn-tcpapp dataplanes over memif: source → sink, the sink checks every octet of the
# seeded stream (--verify) and both ends report the stream's sha256. With an impairment,
# the sink's port is wrapped by net_wn_impair through the EAL syntax
# (--vdev net_wn_impair0,port=net_memif0,...). If it fails, warpnic TCP does not talk to
# itself, or does not survive drop/duplicate/reorder/corrupt (checksums must catch every
# corrupted segment).
#
#   tcp_memif.sh BUILD_DIR BYTES [IMPAIR_ARGS|none [CONNS [pcap]]]
# With CONNS > 1, CONNS concurrent connections each carry BYTES. With "pcap" both ends
# capture and tshark must find every IPv4 and TCP checksum in both files good: on memif
# lib/net leaves TCP sums to "offload" (WN_NET_CKSUM_LOCAL) and the capture completes them.
# With corruption towards the source (corrupt= or tx_corrupt=), the source's TCP must catch
# it too: its local link verifies every sum that is not a pseudo-header sum.
set -uo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR BYTES [IMPAIR]}" && pwd)
bytes=${2:?bytes}
impair=${3:-none}
conns=${4:-1}
pcap=${5:-}
app=$build/app/bin/wn-tcpapp
[ -x "$app" ] || { echo "FAIL: missing prerequisite: wn-tcpapp not built"; exit 1; }
t=$(mktemp -d /tmp/wn-integ.XXXXXX)
spid='' cpid=''
cleanup() {
	[ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null
	[ -n "$cpid" ] && kill -KILL "$cpid" 2>/dev/null
	[ -n "${WN_INTEG_KEEP:-}" ] && echo "logs kept in $t" || rm -rf "$t"
}
trap cleanup EXIT
mem() {
	local free
	free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
	if grep -q hugetlbfs /proc/mounts && [ "${free:-0}" -ge 300 ]; then
		echo "--in-memory"
	else
		echo "--no-huge --no-shconf -m 1024"
	fi
}
if [ "$(nproc)" -ge 2 ]; then lc_a=0 lc_b=1; else lc_a=0 lc_b=0; fi
sock=$t/memif.sock
vdevs=(--vdev "net_memif0,role=server,socket=$sock")
[ "$impair" = none ] || vdevs+=(--vdev "net_wn_impair0,port=net_memif0,$impair")
scap=() ccap=()
if [ "$pcap" = pcap ]; then
	command -v tshark >/dev/null || { echo "FAIL: tshark missing (scripts/setup.sh)"; exit 1; }
	scap=(--pcap "$t/sink.pcapng")
	ccap=(--pcap "$t/source.pcapng")
fi
echo "case: $conns x $bytes bytes over memif, impair $impair"

# Both ends --park (stop polling, keep the port) and are stopped only when both are parked:
# DPDK 22.11's memif unmaps the rings under a side that still polls when its peer leaves.
# shellcheck disable=SC2046
"$app" -l "$lc_a" $(mem) --no-pci --file-prefix "wni-$$-s" --log-level lib.eal:warning \
	"${vdevs[@]}" -- --mode sink --ip 198.18.2.1/24 --listen 5001 --conns "$conns" --verify \
	--timeout 200 --park "${scap[@]}" >"$t/sink.out" 2>"$t/sink.err" &
spid=$!
# the sink's port started and listening (a memif client that meets a server not started yet
# never connects: DPDK 22.11 does not retry); 60 s, a loaded machine
for _ in $(seq 600); do grep -q listening "$t/sink.out" 2>/dev/null && break; sleep 0.1; done
# shellcheck disable=SC2046
"$app" -l "$lc_b" $(mem) --no-pci --file-prefix "wni-$$-c" --log-level lib.eal:warning \
	--vdev "net_memif0,role=client,socket=$sock" -- --mode source --ip 198.18.2.2/24 \
	--connect 198.18.2.1:5001 --bytes "$bytes" --conns "$conns" --timeout 200 --park \
	"${ccap[@]}" >"$t/source.out" 2>"$t/source.err" &
cpid=$!
# parked or gone, each (their own --timeout ends a run that does not finish)
parked() { grep -qx parked "$1" 2>/dev/null || ! kill -0 "$2" 2>/dev/null; }
for _ in $(seq 2500); do
	parked "$t/sink.out" "$spid" && parked "$t/source.out" "$cpid" && break
	sleep 0.2
done
kill -TERM "$cpid" 2>/dev/null
wait "$cpid"
crc=$?
cpid=
kill -TERM "$spid" 2>/dev/null
wait "$spid"
src=$?
spid=
grep -E '^(sink|source|tcp|impair):' "$t/sink.out" "$t/source.out"
bad() {
	echo "FAIL: $*"
	tail -n 20 "$t"/*.out "$t"/*.err
	exit 1
}
[ "$crc" = 0 ] || bad "source exit status $crc"
[ "$src" = 0 ] || bad "sink exit status $src (data mismatch, reset or timeout)"
# every connection carries the same seeded stream: one distinct digest and size per side
s1=$(grep -E '^conn ' "$t/source.out" | sed -E 's/.*sha256 ([0-9a-f]+).*/\1/' | sort -u)
s2=$(grep -E '^conn ' "$t/sink.out" | sed -E 's/.*sha256 ([0-9a-f]+).*/\1/' | sort -u)
n2=$(grep -E '^conn ' "$t/sink.out" | sed -E 's/.* bytes ([0-9]+).*/\1/' | sort -u)
c2=$(grep -cE '^conn ' "$t/sink.out")
[ "$c2" = "$conns" ] || bad "sink finished $c2 connections, expected $conns"
[ "$n2" = "$bytes" ] || bad "sink got ${n2:-nothing} bytes per connection, expected $bytes"
[ -n "$s1" ] && [ "$s1" = "$s2" ] || bad "sha256 differs: $s1 vs $s2"
grep -Eq '^sink: .* errors 0 ' "$t/sink.out" || bad "sink found octets that differ"
if [ "$impair" != none ]; then
	grep -Eq '^impair: ' "$t/sink.out" || bad "no impairer in the path"
	case "$impair" in
	*corrupt*) grep -Eq '^tcp: .*rx_drop_cksum [1-9]' "$t/sink.out" ||
		bad "no corrupted segment was caught by the TCP checksum" ;;
	esac
	case "$impair" in
	corrupt=*|*,corrupt=*|*tx_corrupt=*) grep -Eq '^tcp: .*rx_drop_cksum [1-9]' "$t/source.out" ||
		bad "no corrupted segment was caught by the source's TCP checksum" ;;
	esac
fi
if [ "$pcap" = pcap ]; then
	for f in sink source; do
		n=$(tshark -r "$t/$f.pcapng" -Y tcp -T fields -e frame.number 2>/dev/null | wc -l)
		badn=$(tshark -r "$t/$f.pcapng" -o tcp.check_checksum:TRUE -o ip.check_checksum:TRUE \
			-Y 'tcp.checksum.status == 0 || ip.checksum.status == 0' -T fields \
			-e frame.number 2>/dev/null | wc -l)
		[ "$n" -gt 100 ] || bad "$f.pcapng has only $n TCP frames"
		[ "$badn" = 0 ] || bad "$f.pcapng: $badn of $n frames with a bad checksum"
		echo "$f.pcapng: $n TCP frames, every checksum good"
	done
fi
echo "PASS: $bytes bytes, sha256 $s2"
