#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rsockets between warpnic and rdma-core's own (Debian 12's librdmacm 44) on Linux siw:
#   rs_linux_siw.sh BUILD_DIR
# Boots the Linux siw guest (rpcrdma/linux_nfsd_image.sh: Debian 12's kernel under TCG with
# siw built out of tree, libibverbs, librdmacm, rstream and riostream from Debian's packages;
# cached in $WN_LINUX_NFSD_CACHE, default /var/cache/warpnic/linux-nfsd) on a tap in a
# private network namespace, where one warpnicd runs on the same tap (net_af_packet).
# rstream and riostream run one end each, with -T v (each end checks every octet it
# receives): the guest's librdmacm on siw as server and warpnic's rsockets (drivers/rdmacm
# through scripts/warpnic-run) as client, then the other way round. Each rstream run moves
# 4 KiB x 300 each way twice (past the half-receive-queue credit point, and many grants of
# half a receive buffer); each riostream run 64 KiB x 20 each way by riowrite() into the
# peer's riomap() buffer. The programs on warpnic use nonblocking calls one way round and
# blocking calls the other; the guest's use blocking calls. The guest has one TCG vCPU
# (GUEST_CPUS) and a kernel that is not preempted (preempt=none): siw's transmit path runs
# both in the poster's system call and in siw's tx thread, which TCP's write-space callback
# wakes after a full send buffer, and the two can work on one FPDU at once. Captured with two
# vCPUs: siw sent an FPDU, the first after such a stall, whose CRC was CRC32c of its header,
# its payload and its payload again (warpnicd's Terminate, about one run in 25). On one vCPU
# that never preempts the kernel, the system call finishes before the thread runs. With
# preempt=none riostream's spinning on one vCPU costs nothing visible (a run takes as long).
# Both ends must exit 0 and print their result line; warpnicd must have sent and received no
# Terminate, seen no MPA error and held no Send for want of a receive (rnr_holds: the
# credits and the spare receives keep every Send expected).
# The guest's frames, both ways, are captured in $T/guest.pcap (QEMU's filter-dump, as the
# guest's NIC sees them: what siw sent, before warpnic's checks); when a program on
# warpnic fails or warpnicd counted a CRC error, mpa_pcap.py checks every MPA CRC in it,
# and the guest's end's output and its kernel's TCP counters are shown (WN_INTEROP_KEEP=1
# keeps $T).
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/pair_lib.sh" "$1"
. "$HERE/../qemu_guest.sh"
CACHE=${WN_LINUX_NFSD_CACHE:-/var/cache/warpnic/linux-nfsd}
for t in qemu-system-x86_64 busybox ip; do
	command -v $t >/dev/null || missing "$t not installed (scripts/setup.sh installs it)"
done
NS=wn-rss$$
TAP=wnr0
GUEST=198.19.11.2
WN=198.19.11.3
TEL=$WN_TOP/scripts/wn-tel.py
WTEL=/var/run/dpdk/$NS/dpdk_telemetry.v2
RUN_SECS=150 # one program run, under TCG on a loaded machine
GUEST_CPUS=${GUEST_CPUS:-1}
WPID=
cleanup_siw() {
	[ -n "$WPID" ] && kill -TERM "$WPID" 2>/dev/null && sleep 1 && kill -KILL "$WPID" 2>/dev/null
	guest_cleanup
	rm -rf "/var/run/dpdk/$NS"
	cleanup
}
trap cleanup_siw EXIT

note "kernel, siw, rdma-core and initramfs (cache $CACHE)"
"$WN_TOP/test/interop/rpcrdma/linux_nfsd_image.sh" "$CACHE" >"$T/image.out" 2>&1 ||
	fail "building the guest failed"
mkdir -p "$T/extra"
cp "$HERE/rs_linux_siw_init.sh" "$T/extra/init"
guest_cpio "$T/extra" "$T/extra.cpio"
cat "$CACHE/base.cpio" "$T/extra.cpio" | gzip -1 >"$T/initrd.gz"

note "booting the guest"
guest_net "$NS" $TAP || fail "cannot create the guest's network"
guest_ctl_prepare "$T" || fail "cannot create the control FIFOs"
guest_boot "$NS" $TAP "$CACHE/vmlinuz" "$T/initrd.gz" "$T/console.out" \
	"wn_ip=$GUEST/24 preempt=none" "${GUEST_CTL_ARGS[@]}" \
	-object filter-dump,id=d0,netdev=n0,file="$T/guest.pcap" || fail "cannot start the guest"
guest_ctl_open "$T"
wait_line "$T/console.out" "WN-SIW-(READY|FAILED)" 300 || fail "the guest did not boot in 300 s"
grep -q WN-SIW-READY "$T/console.out" || fail "the guest: $(grep -a WN-SIW-FAILED "$T/console.out")"
wait_line "$T/ctl.log" "WN-SIW-READY" 60 || fail "no WN-SIW-READY on the control port"
note "$(grep -ao "WN-SIW-READY.*" "$T/console.out" | head -1)"

env -u LD_LIBRARY_PATH ip netns exec "$NS" "$WN_BUILD/app/warpnicd/warpnicd" -l 0 \
	--file-prefix "$NS" --no-pci --no-huge -m 256 --log-level lib.eal:error \
	--vdev net_af_packet0,iface=$TAP -- --ip $WN/24 --ctl "$T/w.sock" \
	--mpa-timeout 20000 >"$T/warpnicd.out" 2>&1 &
WPID=$!
wait_line "$T/warpnicd.out" "warpnicd: serving" 30 || fail "warpnicd did not start"

# on_wn PROGRAM ARGS...: a program on warpnic's rsockets, bounded
on_wn() {
	timeout -k 5 $RUN_SECS ip netns exec "$NS" "$RUN" --ctl "$T/w.sock" --shim "$SHIM" "$@"
}
# stat KEY: one of warpnicd's /warpnic/dp/stats counters
stat() { "$TEL" "$WTEL" /warpnic/dp/stats "$1" | sed -n "s/^$1=//p"; }

# check NAME: both ends' outputs ($T/NAME.guest, $T/NAME.wn): one result line each
# (name bytes xfers iters total time Gb/sec usec/xfer), no error
check() {
	local side n
	for side in guest wn; do
		grep -Eqi 'fail|error|mismatch|rsend|rrecv|rpoll|raccept|rconnect|riomap|riowrite' \
			"$T/$1.$side" && fail "$1: the $side end reports an error: $(head -5 "$T/$1.$side")"
		n=$(grep -Ec '^[0-9a-z_]+ +[0-9.]+[kmg]? +[0-9.]+[kmg]? ' "$T/$1.$side")
		[ "$n" = 1 ] || fail "$1: the $side end printed $n result lines, not 1"
	done
	note "$1: $(grep -E '^[0-9a-z_]+ +[0-9.]+[kmg]? ' "$T/$1.wn")"
}

# wire_crcs: the MPA CRCs in the capture (mpa_pcap.py): a bad one there is the sender's, a
# CRC error warpnic reports on an FPDU that is good there is warpnic's
wire_crcs() {
	echo "----- MPA CRCs on the wire ($T/guest.pcap)"
	python3 "$HERE/mpa_pcap.py" "$T/guest.pcap"
}

# guest_why NAME: after the warpnic end of NAME failed, what the guest's end printed so far
# and the guest kernel's last messages and TCP counters, into $T/NAME.guest and
# $T/guest-kernel.out; the CRCs on the wire
guest_why() {
	guest_cmd "$T" -t 20 "cat /tmp/$1.out; cat /tmp/$1.rc 2>/dev/null" >"$T/$1.guest" 2>&1
	guest_cmd "$T" -t 20 "dmesg | tail -40; cat /proc/net/netstat /proc/net/snmp" \
		>"$T/guest-kernel.out" 2>&1
	echo "----- $1.guest"
	cat "$T/$1.guest"
	wire_crcs
}

# siw_server NAME PROGRAM ARGS...: the server in the guest, the client on warpnic
siw_server() {
	local name=$1 prog=$2 rc
	shift 2
	note "$name: $prog server on siw, client on warpnic: $*"
	guest_cmd "$T" "rm -f /tmp/$name.*; ($prog -b $GUEST -T b $* >/tmp/$name.out 2>&1
		echo \$? >/tmp/$name.rc) &
		i=0; until netstat -ltn | grep -q ':7471 '; do
			i=\$((i + 1)); [ \$i -lt 300 ] || exit 1; sleep 0.1; done" >/dev/null ||
		fail "$name: the guest's $prog does not listen"
	on_wn "$prog" -s $GUEST "$@" >"$T/$name.wn" 2>&1 || {
		rc=$?
		guest_why "$name"
		fail "$name: $prog on warpnic exit status $rc"
	}
	guest_cmd "$T" -t $RUN_SECS "i=0; until [ -s /tmp/$name.rc ]; do
		i=\$((i + 1)); [ \$i -lt $((RUN_SECS * 10)) ] || exit 124; sleep 0.1; done
		cat /tmp/$name.out; exit \$(cat /tmp/$name.rc)" >"$T/$name.guest"
	rc=$?
	[ $rc = 0 ] || fail "$name: $prog on siw exit status $rc: $(head -5 "$T/$name.guest")"
	check "$name"
}

# wn_server NAME PROGRAM ARGS...: the server on warpnic, the client in the guest
wn_server() {
	local name=$1 prog=$2 srv listens i n rc
	shift 2
	note "$name: $prog server on warpnic, client on siw: $*"
	listens=$(stat listens)
	on_wn "$prog" -b $WN "$@" >"$T/$name.wn" 2>&1 &
	srv=$!
	BG+=("$srv")
	for ((i = 0; i < 300; i++)); do
		n=$(stat listens)
		[ "${n:-0}" -gt "${listens:-0}" ] && break
		sleep 0.1
	done
	[ $i -lt 300 ] || fail "$name: $prog on warpnic does not listen"
	guest_cmd "$T" -t $RUN_SECS "$prog -s $WN -T b $*" >"$T/$name.guest"
	rc=$?
	[ $rc = 0 ] || fail "$name: $prog on siw exit status $rc: $(head -5 "$T/$name.guest")"
	wait_pid "$srv" 30 || {
		rc=$?
		wire_crcs
		fail "$name: $prog on warpnic exit status $rc"
	}
	check "$name"
}

RS="-T v -S 4096 -C 300 -I 2"
RIO="-T v -S 65536 -C 20"
siw_server rstream_to_siw rstream $RS
siw_server riostream_to_siw riostream $RIO
wn_server rstream_from_siw rstream -T b $RS
wn_server riostream_from_siw riostream -T b $RIO

for k in term_sent term_recv mpa_errors mpa_crc_errors rnr_holds; do
	v=$(stat $k)
	[ "$v" = 0 ] && continue
	[ $k = mpa_crc_errors ] && wire_crcs
	fail "warpnicd: $k=$v (expected 0)"
done
kill -0 "$WPID" 2>/dev/null || fail "warpnicd died"
note "rsockets: rstream and riostream between warpnic and librdmacm on siw, both ways, verified"
