#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# /init of the guest that kernel_peer.sh boots: Debian's kernel with its SCTP (sctp.ko), and
# ddp_sctp_peer run against warpnic (wn_wn=ADDR on the host) once per entry MODE:PORT of
# wn_modes, in order: active (it connects to ADDR:PORT), plain (the same with a plain
# Initiate), rejected (it connects, warpnic's ULP rejects), passive (it listens on PORT;
# "peer: LISTENING" tells the host to connect), reject (it listens and rejects). Each run ends
# with a console line "WN-SCTP-RESULT MODE RC"; once the kernel holds no association the
# guest powers off ("WN-SCTP-END").
# Failures before the runs print "WN-SCTP-FAILED".
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
fail() { dmesg | tail -15; echo "WN-SCTP-FAILED: $*"; poweroff -f; }
arg() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
ip=$(arg wn_ip)
wn=$(arg wn_wn)
modes=$(arg wn_modes)
# libcrc32c finds its algorithm by name (a softdep busybox modprobe does not follow); TCG's
# CPU has no SSE4.2 for crc32c-intel
for m in virtio_pci virtio_net crc32c_generic sctp; do
	modprobe $m || fail "modprobe $m"
done
ip link set lo up
ip link set eth0 up
ip addr add "$ip" dev eth0 || fail "address $ip"
echo "WN-SCTP-UP $(uname -r) $ip"
for m in $(echo "$modes" | tr , ' '); do
	port=${m#*:}
	case ${m%:*} in
	active) /ddp_sctp_peer --connect "$wn" "$port" ;;
	plain) /ddp_sctp_peer --connect "$wn" "$port" --plain ;;
	rejected) /ddp_sctp_peer --connect "$wn" "$port" --rejected ;;
	passive) /ddp_sctp_peer --listen "$port" ;;
	reject) /ddp_sctp_peer --listen "$port" --reject ;;
	*) echo "peer: FAIL: unknown mode $m"; false ;;
	esac
	echo "WN-SCTP-RESULT ${m%:*} $?"
done
# the associations' last packets are out before the host reads this: a SHUTDOWN ACK the fault
# injector dropped is sent again on the T2-shutdown timer (RTO, 1 s at least), so wait until
# the kernel holds no association (30 s at most), then a second for the SHUTDOWN COMPLETE
i=0
while [ $i -lt 30 ] && [ "$(wc -l </proc/net/sctp/assocs)" -gt 1 ]; do
	sleep 1
	i=$((i + 1))
done
sleep 1
echo "WN-SCTP-END"
poweroff -f
