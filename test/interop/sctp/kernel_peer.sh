#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# DDP over SCTP (RFC 5043) between warpnic and the Linux kernel's SCTP:
#   kernel_peer.sh BUILD_DIR PEER VERBS [MODES [IMPAIR]]
# Boots Debian 12's kernel under qemu-system-x86 (TCG; sctp_image.sh builds the kernel pieces,
# cached in $WN_LINUX_SCTP_CACHE, default /var/cache/warpnic/linux-sctp) with PEER
# (ddp_sctp_peer, static: RFC 5043 on the kernel's SCTP sockets) in its initramfs. The guest's
# NIC is a tap in a private network namespace; one warpnicd runs there on that tap
# (net_af_packet, 198.19.10.3, --pcap) and VERBS (ddp_sctp_verbs) on it through
# scripts/warpnic-run with WARPNIC_LLP=sctp. MODES, comma-separated, run in this order, one
# association each (default active,plain,rejected,passive,reject):
#   active    the peer associates with warpnic and sends the Enhanced Initiate (peer-to-peer,
#             IRD/ORD; it picks the Read RTR) to VERBS --server
#   plain     the same with RFC 5043's plain Initiate (no RFC 6581 data)
#   rejected  the peer's Enhanced Initiate, rejected by VERBS --server --reject (rdma_reject
#             with private data): an Enhanced Reject with it, then SHUTDOWN
#   passive   warpnic (VERBS --client) associates with the peer listening in the guest and
#             sends the Enhanced Initiate; the peer accepts (peer-to-peer, the Write RTR)
#   reject    the same, the peer rejects with private data: VERBS sees REJECTED with it
# The accepted ones run the exchange of ddp_sctp_test.h (Sends, RDMA Write and RDMA Read both
# ways, private data both ways) and end the session with RFC 5043's Terminate (the peer's in
# active/plain, warpnic's in passive) and the association with SHUTDOWN; both programs check
# everything they receive. Then tshark reads warpnicd's capture (sctp_pcap_check.py: every
# CRC32c good, no malformed packet, the Adaptation Layer Indication in INIT and INIT-ACK, PPIDs
# 16/17 as each run has them, U/B/E flags, no ABORT, SHUTDOWN). IMPAIR (e.g.
# drop=0.02,reorder=0.02,seed=7) wraps warpnicd's port with the fault injector (--impair):
# both SCTPs retransmit, and chunks reach both sessions out of DDP-SSN order.
HERE=$(cd "$(dirname "$0")" && pwd)
# before pair_lib.sh changes the directory
PEER=$(realpath "${2:?usage: $0 BUILD_DIR PEER VERBS [MODES [IMPAIR]]}")
VERBS=$(realpath "${3:?usage: $0 BUILD_DIR PEER VERBS [MODES [IMPAIR]]}")
. "$HERE/../verbs/pair_lib.sh" "$1"
. "$HERE/../qemu_guest.sh"
MODES=${4:-active,plain,rejected,passive,reject}
IMPAIR=${5:-}
CACHE=${WN_LINUX_SCTP_CACHE:-/var/cache/warpnic/linux-sctp}
need qemu-system-x86_64 busybox ip tshark python3
[ -x "$PEER" ] && [ -x "$VERBS" ] || missing "ddp_sctp_peer/ddp_sctp_verbs not built"
ldd "$PEER" >/dev/null 2>&1 && missing "$PEER is not static"
NS=wn-lsctp$$
GUEST=198.19.10.2
WN=198.19.10.3
# each mode's port: a verbs server's on warpnic, or the peer's in the guest
declare -A PORT=([active]=7174 [plain]=7176 [rejected]=7177 [passive]=7175 [reject]=7178)
# what each association carries (sctp_pcap_check.py)
declare -A KIND=([active]=full [plain]=full [rejected]=reject [passive]=full [reject]=reject)
WPID=
wopts=()
[ -n "$IMPAIR" ] && wopts+=(--impair "$IMPAIR")
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
	WARPNIC_LLP=sctp timeout -k 5 600 "$RUN" --ctl "$T/w.sock" --shim "$SHIM" "$VERBS" "$@"
}

note "kernel and initramfs (cache $CACHE)"
"$HERE/sctp_image.sh" "$CACHE" >"$T/image.out" 2>&1 || fail "building the guest failed"
# /bin/sh is the base image's (a top-level directory here would replace its /bin link)
mkdir -p "$T/extra"
cp "$HERE/guest_init.sh" "$T/extra/init"
cp "$PEER" "$T/extra/ddp_sctp_peer"
guest_cpio "$T/extra" "$T/extra.cpio"
cat "$CACHE/base.cpio" "$T/extra.cpio" | gzip -1 >"$T/initrd.gz"

guest_net "$NS" wnq0 || fail "cannot create the guest's network"
env -u LD_LIBRARY_PATH ip netns exec "$NS" "$WN_BUILD/app/warpnicd/warpnicd" -l 0 \
	--file-prefix "$NS" --no-pci --no-huge -m 256 --log-level lib.eal:error \
	--vdev net_af_packet0,iface=wnq0 -- --ip "$WN/24" --ctl "$T/w.sock" \
	--pcap "$T/sctp.pcapng" "${wopts[@]}" >"$T/warpnicd.out" 2>&1 &
WPID=$!
wait_line "$T/warpnicd.out" "warpnicd: serving" 30 || fail "warpnicd did not start"
modes=() kinds=()
declare -A SRV=()
for m in ${MODES//,/ }; do
	[ -n "${PORT[$m]:-}" ] || fail "unknown mode $m"
	modes+=("$m:${PORT[$m]}")
	kinds+=("${PORT[$m]}:${KIND[$m]}")
	case $m in
	active | plain | rejected)
		opt=()
		[ "$m" = rejected ] && opt=(--reject)
		verbs --server "$WN" "${PORT[$m]}" "${opt[@]}" >"$T/verbs_$m.out" 2>&1 &
		SRV[$m]=$!
		BG+=("$!")
		wait_line "$T/verbs_$m.out" "verbs: listening|FAIL" 30 ||
			fail "the verbs server ($m) did not start"
		grep -q "verbs: listening" "$T/verbs_$m.out" || fail "the verbs server ($m) failed"
		;;
	esac
done
note "booting the guest"
guest_boot "$NS" wnq0 "$CACHE/vmlinuz" "$T/initrd.gz" "$T/console.out" \
	"wn_ip=$GUEST/24 wn_wn=$WN wn_modes=$(IFS=,; echo "${modes[*]}")" ||
	fail "cannot start the guest"
wait_line "$T/console.out" "WN-SCTP-(UP|FAILED)" 300 || fail "the guest did not come up in 300 s"
grep -q WN-SCTP-UP "$T/console.out" || fail "the guest: $(grep -a WN-SCTP-FAILED "$T/console.out")"
note "$(grep -a WN-SCTP-UP "$T/console.out" | tr -d '\r')"
for m in ${MODES//,/ }; do
	case $m in
	active | plain | rejected)
		note "$m: the kernel's SCTP associates and initiates the session"
		wait_line "$T/console.out" "WN-SCTP-RESULT $m " 300 || fail "the $m run did not end"
		wait_pid "${SRV[$m]}" 30 ||
			fail "the verbs server ($m) failed: $(grep -a FAIL "$T/verbs_$m.out")"
		;;
	passive | reject)
		note "$m: warpnic associates with the kernel's SCTP and initiates the session"
		opt=()
		[ "$m" = reject ] && opt=(--rejected)
		wait_line "$T/console.out" "LISTENING on port ${PORT[$m]}|WN-SCTP-RESULT $m " 120 ||
			fail "the peer does not listen ($m)"
		verbs --client "$GUEST" "${PORT[$m]}" "${opt[@]}" >"$T/verbs_$m.out" 2>&1 ||
			fail "the verbs client ($m) failed: $(grep -a FAIL "$T/verbs_$m.out")"
		wait_line "$T/console.out" "WN-SCTP-RESULT $m " 120 || fail "the $m run did not end"
		;;
	esac
	grep -q "WN-SCTP-RESULT $m 0" "$T/console.out" ||
		fail "the peer ($m): $(grep -a 'peer: FAIL' "$T/console.out")"
done
wait_line "$T/console.out" "WN-SCTP-END" 60 || fail "the guest did not finish"
# stopping warpnicd closes (flushes) the capture
kill -TERM "$WPID"
wait_pid "$WPID" 20 || fail "warpnicd did not stop"
WPID=
grep -a "peer: \|WN-SCTP-RESULT" "$T/console.out" | tr -d '\r'
for m in ${MODES//,/ }; do
	sed "s/^verbs: /verbs ($m): /" "$T/verbs_$m.out"
done
note "tshark reads the capture"
python3 "$HERE/sctp_pcap_check.py" "$T/sctp.pcapng" "$WN" "${kinds[@]}" \
	>"$T/pcap_check.out" 2>&1
rc=$?
cat "$T/pcap_check.out"
[ $rc = 0 ] || fail "the capture"
