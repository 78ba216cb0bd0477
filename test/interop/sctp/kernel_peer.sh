#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# DDP over SCTP (RFC 5043) between warpnic and the Linux kernel's SCTP:
#   kernel_peer.sh BUILD_DIR PEER VERBS [MODES]
# Boots Debian 12's kernel under qemu-system-x86 (TCG; sctp_image.sh builds the kernel pieces,
# cached in $WN_LINUX_SCTP_CACHE, default /var/cache/warpnic/linux-sctp) with PEER
# (ddp_sctp_peer, static: RFC 5043 on the kernel's SCTP sockets) in its initramfs. The guest's
# NIC is a tap in a private network namespace; one warpnicd runs there on that tap
# (net_af_packet, 198.19.10.3, --pcap) and VERBS (ddp_sctp_verbs) on it through
# scripts/warpnic-run with WARPNIC_LLP=sctp. MODES (default active,passive):
#   active   the peer associates with warpnic and initiates the session (VERBS --server)
#   passive  warpnic associates with the peer listening in the guest (VERBS --client)
# Each runs the exchange of ddp_sctp_test.h (Sends, RDMA Write and RDMA Read both ways, private
# data both ways, RFC 6581 IRD/ORD and RTR) and ends the session with RFC 5043's Terminate and
# the association with SHUTDOWN; both programs check everything they receive. Then tshark
# reads warpnicd's capture (sctp_pcap_check.py: every CRC32c good, no malformed packet, the
# Adaptation Layer Indication in INIT and INIT-ACK, PPIDs 16/17, U/B/E flags, SHUTDOWN).
HERE=$(cd "$(dirname "$0")" && pwd)
# before pair_lib.sh changes the directory
PEER=$(realpath "${2:?usage: $0 BUILD_DIR PEER VERBS [MODES]}")
VERBS=$(realpath "${3:?usage: $0 BUILD_DIR PEER VERBS [MODES]}")
. "$HERE/../verbs/pair_lib.sh" "$1"
. "$HERE/../qemu_guest.sh"
MODES=${4:-active,passive}
CACHE=${WN_LINUX_SCTP_CACHE:-/var/cache/warpnic/linux-sctp}
need qemu-system-x86_64 busybox ip tshark python3
[ -x "$PEER" ] && [ -x "$VERBS" ] || missing "ddp_sctp_peer/ddp_sctp_verbs not built"
ldd "$PEER" >/dev/null 2>&1 && missing "$PEER is not static"
NS=wn-lsctp$$
GUEST=198.19.10.2
WN=198.19.10.3
PORT_WN=7174   # the verbs server on warpnic (active mode)
PORT_PEER=7175 # the peer in the guest (passive mode)
WPID=
cleanup_sctp() {
	[ -n "$WPID" ] && kill -TERM "$WPID" 2>/dev/null && sleep 1 &&
		kill -KILL "$WPID" 2>/dev/null
	guest_cleanup
	rm -rf "/var/run/dpdk/$NS"
	cleanup
}
trap cleanup_sctp EXIT
# the guest's console, the programs' and warpnicd's output are in $T/*.out (shown on failure)
verbs() {
	WARPNIC_LLP=sctp timeout -k 5 300 "$RUN" --ctl "$T/w.sock" --shim "$SHIM" "$VERBS" "$@"
}

note "kernel and initramfs (cache $CACHE)"
"$HERE/sctp_image.sh" "$CACHE" >"$T/image.out" 2>&1 || fail "building the guest failed"
mkdir -p "$T/extra/bin"
cp "$HERE/guest_init.sh" "$T/extra/init"
cp "$PEER" "$T/extra/ddp_sctp_peer"
ln -s busybox "$T/extra/bin/sh"
guest_cpio "$T/extra" "$T/extra.cpio"
cat "$CACHE/base.cpio" "$T/extra.cpio" | gzip -1 >"$T/initrd.gz"

guest_net "$NS" wnq0 || fail "cannot create the guest's network"
env -u LD_LIBRARY_PATH ip netns exec "$NS" "$WN_BUILD/app/warpnicd/warpnicd" -l 0 \
	--file-prefix "$NS" --no-pci --no-huge -m 256 --log-level lib.eal:error \
	--vdev net_af_packet0,iface=wnq0 -- --ip "$WN/24" --ctl "$T/w.sock" \
	--pcap "$T/sctp.pcapng" >"$T/warpnicd.out" 2>&1 &
WPID=$!
wait_line "$T/warpnicd.out" "warpnicd: serving" 30 || fail "warpnicd did not start"
if [[ $MODES == *active* ]]; then
	verbs --server "$WN" "$PORT_WN" >"$T/verbs_server.out" 2>&1 &
	SRV=$!
	BG+=("$SRV")
	wait_line "$T/verbs_server.out" "verbs: listening|FAIL" 30 ||
		fail "the verbs server did not start"
	grep -q "verbs: listening" "$T/verbs_server.out" || fail "the verbs server failed"
fi
note "booting the guest"
guest_boot "$NS" wnq0 "$CACHE/vmlinuz" "$T/initrd.gz" "$T/console.out" \
	"wn_ip=$GUEST/24 wn_wn=$WN:$PORT_WN wn_listen=$PORT_PEER wn_modes=$MODES" ||
	fail "cannot start the guest"
wait_line "$T/console.out" "WN-SCTP-(UP|FAILED)" 300 || fail "the guest did not come up in 300 s"
grep -q WN-SCTP-UP "$T/console.out" || fail "the guest: $(grep -a WN-SCTP-FAILED "$T/console.out")"
note "$(grep -a WN-SCTP-UP "$T/console.out")"
if [[ $MODES == *active* ]]; then
	note "active: the kernel's SCTP associates and initiates the session"
	wait_line "$T/console.out" "WN-SCTP-RESULT active" 300 || fail "the active run did not end"
	wait_pid "$SRV" 30 || fail "the verbs server failed: $(grep -a FAIL "$T/verbs_server.out")"
	grep -q "WN-SCTP-RESULT active 0" "$T/console.out" ||
		fail "the peer (active): $(grep -a 'peer: FAIL' "$T/console.out")"
fi
if [[ $MODES == *passive* ]]; then
	note "passive: warpnic associates with the kernel's SCTP and initiates the session"
	wait_line "$T/console.out" "peer: LISTENING|WN-SCTP-RESULT passive" 120 ||
		fail "the peer does not listen"
	verbs --client "$GUEST" "$PORT_PEER" >"$T/verbs_client.out" 2>&1 ||
		fail "the verbs client failed: $(grep -a FAIL "$T/verbs_client.out")"
	wait_line "$T/console.out" "WN-SCTP-RESULT passive" 120 ||
		fail "the passive run did not end"
	grep -q "WN-SCTP-RESULT passive 0" "$T/console.out" ||
		fail "the peer (passive): $(grep -a 'peer: FAIL' "$T/console.out")"
fi
wait_line "$T/console.out" "WN-SCTP-END" 60 || fail "the guest did not finish"
# stopping warpnicd closes (flushes) the capture
kill -TERM "$WPID"
wait_pid "$WPID" 20 || fail "warpnicd did not stop"
WPID=
grep -a "peer: \|verbs: " "$T/console.out" "$T"/verbs_*.out | sed 's/^[^:]*://' | tr -d '\r'
note "tshark reads the capture"
n=$(tr , '\n' <<<"$MODES" | grep -c .)
python3 "$HERE/sctp_pcap_check.py" "$T/sctp.pcapng" "$WN" "$n" >"$T/pcap_check.out" 2>&1
rc=$?
cat "$T/pcap_check.out"
[ $rc = 0 ] || fail "the capture"
