#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# warpnicd on a PCI NIC bound to a DPDK driver, in a QEMU guest, against a warpnicd on the
# host (scripts/pci_test.sh runs the cases; docs/operations.md "A real NIC"):
#   pci_guest.sh BUILD_DIR [virtio|e1000e] [vfio|uio] [PROGRAMS]
# Boots Debian 12's kernel under qemu-system-x86_64 (TCG, qemu_guest.sh; guest_image.sh builds
# the kernel, modules and Debian's tools into $WN_PCI_GUEST_CACHE, default
# /var/cache/warpnic/pci-guest; this script appends BUILD_DIR's warpnicd and shims, at their
# host paths, with every library ldd names). The guest has two devices: the data NIC
# (virtio-net-pci or an emulated e1000e) on a tap in a private network namespace, and a
# virtio-serial port (wn.ctl) that carries the host's commands (guest_init.sh). vfio: a q35
# machine with an emulated Intel IOMMU (intel_iommu=on in the guest), the NIC behind it and
# bound to vfio-pci, so DPDK uses IOVA as VA and every DMA goes through the IOMMU: memory that
# is not DMA-mapped cannot be read by the device. uio: no IOMMU, uio_pci_generic, IOVA as PA.
# In the guest, scripts/bind.sh must first refuse the NIC while its interface is up with
# an address, then bind it; warpnicd runs on it (-a PCI, --zero-copy-tx on --zero-copy-min
# 0, and $WN_PCI_GUEST_OPTS); on the host warpnicd runs on the tap (net_af_packet).
# PROGRAMS (default all, comma separated): rping (-V, data verified by both ends), ib_write_bw, ib_read_bw, ib_send_bw
# (perftest -R), 64 KiB messages, $WN_PCI_MIB MiB (default 64) each way per run, each with
# the guest as server and then as client, through scripts/warpnic-run on both sides. After
# each run, from both daemons' counters: no MPA CRC or MPA error, no Terminate, and the
# sender's payload octets at least the run's; in vfio mode every octet the guest sent went
# zero-copy from DMA-mapped regions (zc_bytes, no zc_unmapped or zc_fallback), in uio mode
# none (copied); perftest's report must show every message. Then /warpnic/dp/dma: IOVA mode,
# regions mapped (vfio: every one, and unmapped again once freed, no IOMMU fault in dmesg)
# or "copied" and why (uio). Finally warpnicd stops and bind.sh --unbind gives the NIC back
# to its kernel driver.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../verbs/pair_lib.sh" "$1"
. "$HERE/../qemu_guest.sh"
NIC=${2:-virtio}
MODE=${3:-vfio}
PROGS=${4:-rping,ib_write_bw,ib_read_bw,ib_send_bw}
MIB=${WN_PCI_MIB:-64}
CACHE=${WN_PCI_GUEST_CACHE:-/var/cache/warpnic/pci-guest}
# TCG: every guest step is slow; bounds are generous, never asserted as timings
GUEST_TIMEOUT=${WN_PCI_GUEST_TIMEOUT:-600}
for t in qemu-system-x86_64 busybox ip mkfifo; do
	command -v $t >/dev/null || missing "$t not installed (scripts/setup.sh installs it)"
done
case "$NIC" in virtio | e1000e) ;; *) fail "NIC: virtio or e1000e, not '$NIC'" ;; esac
case "$MODE" in vfio | uio) ;; *) fail "mode: vfio or uio, not '$MODE'" ;; esac
NS=wn-pci$$
TAP=wnq0
HOST_IP=198.19.10.1
GUEST_IP=198.19.10.2
KERNEL_IP=198.19.10.3
GUEST_PCI=0000:00:04.0
GUEST_MAC=52:54:00:12:34:57
HOST_TEL=/var/run/dpdk/$NS/dpdk_telemetry.v2
GUEST_TEL=/var/run/dpdk/g/dpdk_telemetry.v2
GUEST_CTL=/run/wn.sock
TEL=$WN_TOP/scripts/wn-tel.py
WPID='' CATPID=''
cleanup_pci() {
	if [ "$FAILED" = 1 ] && [ -n "$GUEST_QPID" ] && kill -0 "$GUEST_QPID" 2>/dev/null &&
		[ -s "$T/gid" ]; then
		echo "----- the guest's state"
		guest -t 60 "ps; tail -n 30 /tmp/w.log; for f in /tmp/*.out; do echo \"== \$f\";
			tail -n 5 \$f; done; $TEL $GUEST_TEL /warpnic/dp/stats listens conns_established
			dmesg | tail -n 10" 2>&1 | cut -c1-200
	fi
	[ -n "$CATPID" ] && kill -KILL "$CATPID" 2>/dev/null
	[ -n "$WPID" ] && kill -TERM "$WPID" 2>/dev/null && sleep 1 && kill -KILL "$WPID" 2>/dev/null
	guest_cleanup
	rm -rf "/var/run/dpdk/$NS"
	cleanup
}
trap cleanup_pci EXIT

# guest [-t SECS] COMMAND: run COMMAND (sh) in the guest; its output on stdout (also in
# $T/guest.out); the guest's exit status, 124 when it did not finish in time. Each command
# has its own id, counted in $T/gid: guest also runs in subshells ($(...), pipelines)
guest() {
	local secs=$GUEST_TIMEOUT from rc GID
	if [ "$1" = -t ]; then
		secs=$2
		shift 2
	fi
	GID=$(($(cat "$T/gid" 2>/dev/null || echo 0) + 1))
	echo "$GID" >"$T/gid"
	from=$(wc -l <"$T/ctl.log")
	# base64: a command of several lines is one line on the port
	printf '%s %s\n' "$GID" "$(printf '%s' "$*" | base64 -w0)" >&7
	wait_line "$T/ctl.log" "^WN-DONE $GID " "$secs" || {
		echo "[guest: '$*' did not finish in $secs s]" | tee -a "$T/guest.out"
		return 124
	}
	tail -n +$((from + 1)) "$T/ctl.log" | sed "/^WN-DONE $GID /q" | tee -a "$T/guest.out" |
		grep -v "^WN-DONE $GID "
	rc=$(grep -a "^WN-DONE $GID " "$T/ctl.log" | awk '{print $3}')
	return "${rc:-1}"
}

# on_guest PROGRAM ARGS...: the command line of a program through warpnic-run in the guest,
# on the vCPU warpnicd (-l 0) leaves free
on_guest() { echo "taskset -c 1 $WN_TOP/scripts/warpnic-run --ctl $GUEST_CTL --shim $SHIM $*"; }
# on_host PROGRAM ARGS...: a program through warpnic-run on the host's warpnicd
on_host() { timeout -k 5 "$GUEST_TIMEOUT" "$RUN" --ctl "$T/w.sock" --shim "$SHIM" "$@"; }

# tel_guest COMMAND KEY... / tel_host COMMAND KEY...: "KEY=VALUE ..." of a telemetry reply
tel_guest() { guest -t 120 "$TEL $GUEST_TEL $*"; }
tel_host() { "$TEL" "$HOST_TEL" "$@"; }

# listens_guest / listens_host: listeners the instance installed so far (one lcore each)
listens_guest() {
	guest -t 120 "$TEL $GUEST_TEL /warpnic/dp/stats listens" | sed -n 's/^listens=//p'
}
listens_host() { tel_host /warpnic/dp/stats listens 2>/dev/null | sed -n 's/^listens=//p'; }
# wait_listen_guest N / wait_listen_host N: the instance installed more than N listeners
wait_listen_guest() {
	guest -t "$GUEST_TIMEOUT" "i=0; while [ \$i -lt $GUEST_TIMEOUT ]; do
		n=\$($TEL $GUEST_TEL /warpnic/dp/stats listens | sed -n 's/^listens=//p')
		[ -n \"\$n\" ] && [ \"\$n\" -gt $1 ] && exit 0; i=\$((i + 1)); sleep 1; done
		exit 1" >/dev/null
}
wait_listen_host() {
	local i v
	for ((i = 0; i < GUEST_TIMEOUT * 10; i++)); do
		v=$(listens_host)
		[ -n "$v" ] && [ "$v" -gt "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

note "guest image (cache $CACHE)"
"$HERE/guest_image.sh" "$CACHE" >"$T/image.out" 2>&1 || fail "building the guest image failed"
# this build's warpnicd, shims and scripts at their host paths, with their libraries
x=$T/extra
mkdir -p "$x"/usr/{bin,sbin,lib,lib64}
for d in bin sbin lib lib64; do ln -s "usr/$d" "$x/$d"; done # as in the base image
cp "$HERE/guest_init.sh" "$x/init"
guest_copy "$x" "$WN_BUILD/app/warpnicd/warpnicd" "$WN_BUILD/drivers/verbs/libibverbs.so.1" \
	"$WN_BUILD/drivers/verbs/libmlx5.so.1" "$WN_BUILD/drivers/verbs/libefa.so.1" \
	"$WN_BUILD/drivers/verbs/libmlx4.so.1" "$WN_BUILD/drivers/verbs/libmana.so.1" \
	"$WN_BUILD/drivers/rdmacm/librdmacm.so.1" "$WN_TOP/scripts/warpnic-run" \
	"$WN_TOP/scripts/bind.sh" "$TEL" >"$T/extra.out" 2>&1 || fail "copying the build failed"
# the base image has these links already
rm "$x/lib" "$x/lib64" "$x/bin" "$x/sbin"
guest_cpio "$x" "$T/extra.cpio"
cat "$CACHE/base.cpio" "$T/extra.cpio" | gzip -1 >"$T/initrd.gz"
note "initrd $(du -h "$T/initrd.gz" | cut -f1)"

guest_net "$NS" $TAP || fail "cannot create the guest's network"
# the host kernel's own end of the tap, to ping the guest's warpnicd
ip -n "$NS" addr add $KERNEL_IP/24 dev $TAP
# QEMU's pipe chardev: FIFOs PATH.in (to the guest) and PATH.out (from it)
mkdir "$T/fifo"
mkfifo "$T/fifo/ctl.in" "$T/fifo/ctl.out"
: >"$T/ctl.log"

# the data NIC: no offloads, so each side computes and checks every checksum itself
case "$NIC" in
virtio)
	GUEST_NIC=virtio-net-pci,netdev=n0,mac=$GUEST_MAC,bus=pcie.0,addr=0x4,$GUEST_NIC_OFFLOADS_OFF,mrg_rxbuf=off
	;;
e1000e) GUEST_NIC=e1000e,netdev=n0,mac=$GUEST_MAC,bus=pcie.0,addr=0x4 ;;
esac
machine=(-machine q35 -cpu max)
# no_timer_check: under TCG on a busy host the kernel's check of the IO-APIC timer can fail
# and panic ("timer doesn't work through Interrupt-remapped IO-APIC")
append="no_timer_check"
if [ "$MODE" = vfio ]; then
	# an IOMMU the guest's vfio-pci programs; 48 address bits hold user-space addresses (IOVA
	# as VA). A virtio device reaches memory through it only with iommu_platform.
	machine+=(-device intel-iommu,intremap=on,aw-bits=48)
	append+=" intel_iommu=on iommu=pt"
	[ "$NIC" = virtio ] && GUEST_NIC+=",disable-legacy=on,iommu_platform=on"
fi
note "booting the guest ($NIC, $MODE)"
GUEST_MEM=2048 GUEST_CPUS=2 guest_boot "$NS" $TAP "$CACHE/vmlinuz" "$T/initrd.gz" \
	"$T/console.out" "$append" "${machine[@]}" \
	-device virtio-serial-pci -chardev pipe,id=ctl,path="$T/fifo/ctl" \
	-device virtserialport,chardev=ctl,name=wn.ctl
cat "$T/fifo/ctl.out" >>"$T/ctl.log" &
CATPID=$!
exec 7>"$T/fifo/ctl.in"
for ((i = 0; i < 3000; i++)); do
	grep -Eq "WN-GUEST-(READY|FAILED)" "$T/console.out" && break
	kill -0 "$GUEST_QPID" 2>/dev/null || fail "qemu exited while the guest booted"
	sleep 0.1
done
[ $i -lt 3000 ] || fail "the guest did not boot in 300 s"
grep -q WN-GUEST-READY "$T/console.out" || fail "the guest: $(grep -a WN-GUEST-FAILED "$T/console.out")"
wait_line "$T/ctl.log" "WN-GUEST-READY" 60 || fail "no WN-GUEST-READY on the control port"
note "$(grep -ao "WN-GUEST-READY.*" "$T/console.out" | head -1 | cut -c1-200)"

note "host warpnicd on $TAP (net_af_packet, $HOST_IP)"
env -u LD_LIBRARY_PATH ip netns exec "$NS" "$WN_BUILD/app/warpnicd/warpnicd" -l 0 \
	--file-prefix "$NS" --no-pci --no-huge -m 256 --log-level lib.eal:error \
	--vdev net_af_packet0,iface=$TAP -- --ip $HOST_IP/24 --ctl "$T/w.sock" \
	--mpa-timeout 60000 --pcap "$T/host.pcapng" >"$T/warpnicd.out" 2>&1 &
WPID=$!
wait_line "$T/warpnicd.out" "warpnicd: serving" 60 || fail "the host's warpnicd did not start"
if [ -n "${WN_PCI_GUEST_HOLD:-}" ]; then # debugging: talk to the guest by hand
	echo "holding: commands 'ID COMMAND' into $T/fifo/ctl.in, output in $T/ctl.log"
	sleep infinity
fi

note "bind.sh must refuse the NIC while its interface is in use"
guest "ls /sys/bus/pci/devices/$GUEST_PCI/net /sys/bus/pci/devices/$GUEST_PCI/virtio*/net" \
	>"$T/ifname.out" 2>/dev/null
grep -q '^eth' "$T/ifname.out" || fail "no interface for $GUEST_PCI"
IFN=$(grep '^eth' "$T/ifname.out" | head -1)
guest "ip addr add 10.99.0.2/24 dev $IFN && ip link set $IFN up" || fail "ip in the guest"
guest "$WN_TOP/scripts/bind.sh $IFN" >"$T/bind_refused.out" 2>&1 &&
	fail "bind.sh bound an interface that is up with an address"
grep -q "device in use" "$T/bind_refused.out" || fail "bind.sh did not say why: $(cat "$T/bind_refused.out")"
guest "ip addr flush dev $IFN && ip link set $IFN down" || fail "ip in the guest"
drv=vfio-pci
[ "$MODE" = uio ] && drv=uio_pci_generic
note "bind.sh --driver $drv $IFN"
guest "$WN_TOP/scripts/bind.sh --driver $drv --hugepages 384 $IFN" >"$T/bind.out" 2>&1 ||
	fail "bind.sh failed: $(cat "$T/bind.out")"
cat "$T/bind.out"
grep -q "bound to $drv" "$T/bind.out" || fail "bind.sh did not bind $GUEST_PCI to $drv"

note "guest warpnicd on $GUEST_PCI ($GUEST_IP, zero-copy transmit from byte 0)"
guest "$WN_BUILD/app/warpnicd/warpnicd -l 0 -a $GUEST_PCI --file-prefix g -m 256 \
	--log-level lib.eal:info -- --ip $GUEST_IP/24 --ctl $GUEST_CTL --zero-copy-tx on \
	--zero-copy-min 0 --mpa-timeout 60000 ${WN_PCI_GUEST_OPTS:-} >/tmp/w.log 2>&1 &" ||
	fail "starting warpnicd"
guest "i=0; until grep -q 'warpnicd: serving' /tmp/w.log; do
	i=\$((i + 1)); [ \$i -lt $GUEST_TIMEOUT ] && pidof warpnicd >/dev/null || exit 1; sleep 1; done
	cat /tmp/w.log" >"$T/guest_warpnicd.out" 2>&1 ||
	{ guest "cat /tmp/w.log; dmesg | tail -30" >>"$T/guest_warpnicd.out" 2>&1
	  fail "the guest's warpnicd did not start"; }
note "guest warpnicd serving"

# ------------------------------------------------------------------ the programs
# stats_guest FILE / stats_host FILE: the counters the checks compare, one KEY=VALUE a line
STATS="tx_fpdus rx_fpdus zc_fpdus zc_bytes zc_fallback zc_unmapped zc_released copy_fpdus
	copy_bytes ref_bytes mpa_crc_errors mpa_errors term_sent term_recv tx_reclaimed"
stats_guest() {
	guest -t 120 "$TEL $GUEST_TEL /warpnic/dp/stats $(echo $STATS)" | tr ' ' '\n' >"$1" &&
		[ -s "$1" ]
}
stats_host() { tel_host /warpnic/dp/stats $STATS | tr ' ' '\n' >"$1"; }
val() { sed -n "s/^$2=//p" "$1" | head -1; }
# delta KEY BEFORE AFTER: how much KEY grew
delta() { echo $(($(val "$3" "$1") - $(val "$2" "$1"))); }

# pair SERVER_SIDE NAME "SERVER ARGS" "CLIENT ARGS": PROGRAM on the guest (or host) as the
# server, the other side as the client with the server's address appended; both must exit 0.
# Two perftest quirks are tried again (12 runs at most), nothing else: it calibrates its cycle
# counter against the clock before it reports, and in a TCG guest on a busy host the fit can
# fail ("Can't produce a report") whatever the device did; and with -R its server listens
# for the test's connection only after the parameter exchange on a first one, so a client
# on a fast machine can connect to a TCG guest's server before that listen and be refused
# ("RDMA_CM_EVENT_REJECTED; error: -111", as by any TCP without a listener).
AGAIN="Can't produce a report|RDMA_CM_EVENT_REJECTED; error: -111"
pair() {
	local side=$1 name=$2 sargs=$3 cargs=$4 rc src attempt out l0 spid
	for attempt in $(seq 12); do
		if [ "$side" = guest ]; then
			note "$name: guest server, host client"
			l0=$(listens_guest)
			[ -n "$l0" ] || fail "$name: no telemetry from the guest's warpnicd"
			guest "rm -f /tmp/$name.out; ($(on_guest $sargs) >/tmp/$name.out 2>&1;
				echo WN-EXIT \$? >>/tmp/$name.out) &" ||
				fail "$name: starting the guest's server"
			wait_listen_guest "$l0" || fail "$name: the guest's server does not listen"
			out=$T/${name}_host_client.out
			# shellcheck disable=SC2086
			on_host $cargs $GUEST_IP >"$out" 2>&1
			rc=$?
			# refused: the server waits for a connection that will not come
			[ $rc -ne 0 ] && grep -qsE "$AGAIN" "$out" &&
				guest "killall -9 ${sargs%% *}; sleep 1" >/dev/null
			guest "i=0; until grep -q WN-EXIT /tmp/$name.out; do i=\$((i + 1));
				[ \$i -lt $GUEST_TIMEOUT ] || break; sleep 1; done; cat /tmp/$name.out" \
				>"$T/${name}_guest_server.out" 2>&1
			src=$(sed -n 's/^WN-EXIT //p' "$T/${name}_guest_server.out")
		else
			note "$name: host server, guest client"
			l0=$(listens_host)
			[ -n "$l0" ] || fail "$name: no telemetry from the host's warpnicd"
			# shellcheck disable=SC2086
			on_host $sargs >"$T/${name}_host_server.out" 2>&1 &
			spid=$!
			BG+=("$spid")
			wait_listen_host "$l0" || fail "$name: the host's server does not listen"
			out=$T/${name}_guest_client.out
			guest "$(on_guest $cargs $HOST_IP)" >"$out" 2>&1
			rc=$?
			wait_pid "$spid" "$GUEST_TIMEOUT"
			src=$?
		fi
		if [ $rc -ne 0 ] && [ $attempt -lt 12 ] && grep -qsE "$AGAIN" "$out"; then
			note "$name: perftest: $(grep -oE "$AGAIN" "$out" | head -1): once more"
			[ "$side" = host ] && kill -KILL "$spid" 2>/dev/null
			continue
		fi
		[ $rc -eq 0 ] || fail "$name: client exit status $rc: $(tail -5 "$out")"
		[ "$src" = 0 ] || fail "$name: server exit status ${src:-none}"
		return 0
	done
}

# check_run NAME SENDER BYTES: after the run NAME, in which SENDER (guest, host or both)
# sent at least BYTES of payload: the counters of both instances since the last run. The
# host checks the MPA CRC32c of every FPDU the guest sent (computed by the guest's CPU over
# the client's memory, checked over what the NIC read by DMA) and the guest those of the
# host's; in vfio mode every FPDU the guest sent from registered memory went zero-copy from a
# DMA-mapped region (none copied for want of a mapping), in uio mode none went zero-copy.
N=0
stats_guest "$T/g0.stats" || fail "no telemetry from the guest"
stats_host "$T/h0.stats" || fail "no telemetry from the host"
check_run() {
	local name=$1 sender=$2 bytes=$3 gb ga hb ha zc
	gb=$T/g$N.stats hb=$T/h$N.stats
	N=$((N + 1))
	ga=$T/g$N.stats ha=$T/h$N.stats
	stats_guest "$ga" || fail "$name: no telemetry from the guest"
	stats_host "$ha" || fail "$name: no telemetry from the host"
	for k in mpa_crc_errors mpa_errors term_sent term_recv; do
		[ "$(delta $k "$gb" "$ga")" = 0 ] && [ "$(delta $k "$hb" "$ha")" = 0 ] ||
			fail "$name: $k: guest $(delta $k "$gb" "$ga"), host $(delta $k "$hb" "$ha")"
	done
	zc=$(delta zc_bytes "$gb" "$ga")
	# payload that left without zero-copy: copied, or by reference (copied once into the mbuf)
	gcopy=$(($(delta copy_bytes "$gb" "$ga") + $(delta ref_bytes "$gb" "$ga")))
	hsent=$(($(delta copy_bytes "$hb" "$ha") + $(delta ref_bytes "$hb" "$ha")))
	note "$name: guest sent $(delta tx_fpdus "$gb" "$ga") FPDUs ($(delta zc_fpdus "$gb" "$ga") zero-copy, $zc octets; $(delta copy_fpdus "$gb" "$ga") copied, $gcopy octets copied or by reference), received $(delta rx_fpdus "$gb" "$ga"); host received $(delta rx_fpdus "$hb" "$ha"), sent $hsent payload octets"
	case "$sender" in
	guest | both)
		if [ "$MODE" = vfio ]; then
			[ "$zc" -ge "$bytes" ] ||
				fail "$name: the guest sent $zc octets zero-copy, not $bytes or more"
			[ "$(delta zc_unmapped "$gb" "$ga")" = 0 ] &&
				[ "$(delta zc_fallback "$gb" "$ga")" = 0 ] ||
				fail "$name: zero-copy FPDUs copied in the guest: $(tr '\n' ' ' <"$ga")"
		else
			[ "$zc" = 0 ] && [ "$gcopy" -ge "$bytes" ] ||
				fail "$name: uio: the guest's FPDUs were not all copied: $(tr '\n' ' ' <"$ga")"
		fi
		;;
	esac
	case "$sender" in
	host | both)
		[ "$hsent" -ge "$bytes" ] ||
			fail "$name: the host sent $hsent octets, not $bytes"
		;;
	esac
}

# perftest_check NAME ITERS: the report line of each side that prints one: 65536-octet
# messages, ITERS of them
perftest_check() {
	local f n=0
	for f in "$T/$1"_*.out; do
		grep -Eqi 'fail|error|couldn|unable' "$f" && fail "$(basename "$f"): $(grep -Ei 'fail|error|couldn|unable' "$f" | head -3)"
		if grep -Eq "^ *65536 +$2 " "$f"; then
			n=$((n + 1))
		fi
	done
	[ $n -ge 1 ] || fail "$1: no report of $2 x 65536 octets"
}

# MIB per run and direction: rping's 64 KiB buffer goes each way once a round (the server
# reads the client's, then writes its own back); perftest moves MIB one way
ITERS=$((MIB * 16))
BYTES=$((MIB * 1048576))
RPING="rping -V -C $ITERS -S 65535" # rping's largest buffer
PT="-R -s 65536 -n $ITERS"
for prog in ${PROGS//,/ }; do
	case "$prog" in
	rping)
		pair guest rping_g "$RPING -s -a $GUEST_IP" "$RPING -c -a"
		check_run rping_g both $((ITERS * 65535))
		pair host rping_h "$RPING -s -a $HOST_IP" "$RPING -c -a"
		check_run rping_h both $((ITERS * 65535))
		for f in "$T"/rping_*_*.out; do
			grep -qi 'mismatch\|verification failed\|error' "$f" && fail "$(basename "$f"): error"
		done
		;;
	ib_write_bw | ib_read_bw | ib_send_bw)
		# Write and Send: the client sends; Read: the server sends (its Read Responses)
		gs=host hs=guest
		[ "$prog" = ib_read_bw ] && gs=guest hs=host
		pair guest "${prog}_g" "$prog $PT" "$prog $PT"
		check_run "${prog}_g" $gs "$BYTES"
		perftest_check "${prog}_g" "$ITERS"
		pair host "${prog}_h" "$prog $PT" "$prog $PT"
		check_run "${prog}_h" $hs "$BYTES"
		perftest_check "${prog}_h" "$ITERS"
		;;
	*) fail "unknown program $prog" ;;
	esac
done

# ------------------------------------------------------------------ the regions
tel_guest /warpnic/dp/dma mode why iova_mode device maps map_failures unmaps unmap_failures \
	regions regions_mapped bytes_mapped tx_cleanup last_failure >"$T/tel_guest_dma.out" ||
	fail "no /warpnic/dp/dma from the guest"
cat "$T/tel_guest_dma.out"
gd=$T/tel_guest_dma.out
dval() { tr ' ' '\n' <"$gd" | sed -n "s/^$1=//p" | head -1; }
[ "$(dval iova_mode)" = "$( [ "$MODE" = vfio ] && echo va || echo pa)" ] ||
	fail "EAL IOVA mode $(dval iova_mode) in the guest"
if [ "$MODE" = vfio ]; then
	[ "$(dval mode)" = mapped ] || fail "the guest's regions are not DMA-mapped: $(cat "$gd")"
	[ "$(dval maps)" -gt 0 ] && [ "$(dval map_failures)" = 0 ] ||
		fail "regions were not mapped: $(cat "$gd")"
	# every program deregistered its regions: each unmapped once its last mbuf was freed.
	# A PMD that frees sent mbufs only when it reuses their descriptors (virtio's split ring
	# without rte_eth_tx_done_cleanup) holds the last ones until more frames go: the host's
	# kernel pings the guest's warpnicd, whose replies take the descriptors
	for ((i = 0; i < 5; i++)); do
		[ "$(dval unmaps)" = "$(dval maps)" ] && break
		note "regions still mapped: $(cat "$gd"); the host pings the guest's warpnicd"
		ip netns exec "$NS" busybox ping -A -c 300 -w 60 -q $GUEST_IP >"$T/ping.out" 2>&1 ||
			fail "no ping through the guest's warpnicd: $(cat "$T/ping.out")"
		tel_guest /warpnic/dp/dma maps unmaps unmap_failures regions >"$gd" || break
	done
	[ "$(dval unmaps)" = "$(dval maps)" ] && [ "$(dval unmap_failures)" = 0 ] &&
		[ "$(dval regions)" = 0 ] || fail "regions left mapped: $(cat "$gd")"
	# the IOMMU never refused the NIC a read
	guest "dmesg | grep -i 'DMAR.*fault' | head -5" >"$T/dmar.out" 2>&1
	[ -s "$T/dmar.out" ] && fail "IOMMU faults in the guest: $(cat "$T/dmar.out")"
else
	# no IOMMU, IOVA as PA: regions cannot be mapped, zero-copy is off and FPDUs are copied
	[ "$(dval mode)" = copied ] || fail "uio: the port's mode is not 'copied': $(cat "$gd")"
fi

note "warpnicd stops; bind.sh --unbind gives the NIC back to its kernel driver"
guest "kill -INT \$(pidof warpnicd); i=0; while pidof warpnicd >/dev/null; do
	i=\$((i + 1)); [ \$i -lt 120 ] || exit 1; sleep 1; done; tail -3 /tmp/w.log" \
	>"$T/guest_stop.out" 2>&1 || fail "the guest's warpnicd did not stop"
guest "$WN_TOP/scripts/bind.sh --unbind $GUEST_PCI" >"$T/unbind.out" 2>&1 ||
	fail "bind.sh --unbind failed: $(cat "$T/unbind.out")"
cat "$T/unbind.out"
grep -Eq "back on (virtio-pci|e1000e) \(interface eth" "$T/unbind.out" ||
	fail "the NIC did not come back as an interface: $(cat "$T/unbind.out")"
kill -0 "$WPID" 2>/dev/null || fail "the host's warpnicd died"
note "pci_guest $NIC $MODE: passed ($PROGS)"
