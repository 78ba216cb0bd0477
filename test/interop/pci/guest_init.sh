#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# /init of the guest that pci_guest.sh boots. Mounts what DPDK needs (proc, sys, devtmpfs,
# hugetlbfs), loads the NIC's kernel driver (the data NIC comes up as an ordinary
# interface, as on a host before binding), then serves the host's commands on the
# virtio-serial port named wn.ctl: each line "ID BASE64" runs the command BASE64 encodes (any
# number of lines) with sh (in /, stdin
# from /dev/null), its output goes back on the port when it ends, then "WN-DONE ID STATUS"
# on a line of its own. Programs left running in the background must redirect their output. Prints
# "WN-GUEST-READY" on the console and the port when it serves, "WN-GUEST-FAILED: why" if
# it cannot.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/hugepages /dev/pts /tmp /run /var/run
mount -t hugetlbfs nodev /dev/hugepages
fail() { dmesg | tail -20; echo "WN-GUEST-FAILED: $*"; poweroff -f; }
for m in virtio_pci virtio_console virtio_net e1000e; do
	modprobe $m || fail "modprobe $m"
done
ip link set lo up
port=
i=0
while [ -z "$port" ]; do
	for n in /sys/class/virtio-ports/*/name; do
		[ "$(cat "$n" 2>/dev/null)" = wn.ctl ] && port=/dev/$(basename "$(dirname "$n")")
	done
	[ -n "$port" ] && [ -c "$port" ] && break
	port=
	i=$((i + 1))
	[ $i -lt 100 ] || fail "no virtio-serial port wn.ctl"
	sleep 0.1
done
exec 3<>"$port"
echo "WN-GUEST-READY $(uname -r) $(cat /proc/cmdline)"
echo "WN-GUEST-READY $(uname -r)" >&3
while read -r id b64 <&3; do
	[ -n "$id" ] || continue
	cmd=$(echo "$b64" | base64 -d)
	(cd / && sh -c "$cmd") </dev/null >/tmp/.wn-cmd.out 2>&1
	rc=$?
	cat /tmp/.wn-cmd.out >&3
	# the marker on a line of its own, even after output without a final newline
	[ -z "$(tail -c 1 /tmp/.wn-cmd.out)" ] || echo >&3
	echo "WN-DONE $id $rc" >&3
done
fail "the control port closed"
