#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# /init of the guest that rs_linux_siw.sh boots: Debian's kernel with siw (built out of
# tree) on eth0, rdma-core's user space as Debian 12 ships it (libibverbs with its siw
# provider, librdmacm's rsockets, rstream, riostream). Then serves the host's commands on
# the virtio-serial port wn.ctl: each line "ID BASE64" runs the command BASE64 encodes with
# sh (in /, stdin from /dev/null); its output goes back on the port when it ends, then
# "WN-DONE ID STATUS" on a line of its own. Programs left running in the background must
# redirect their output. Prints "WN-SIW-READY" on the console and the port when it serves,
# "WN-SIW-FAILED: why" if it cannot.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /tmp /run
fail() { dmesg | tail -15; echo "WN-SIW-FAILED: $*"; poweroff -f; }
ip=$(sed -n 's/.*wn_ip=\([^ ]*\).*/\1/p' /proc/cmdline)
# libcrc32c finds its algorithm by name (a softdep busybox modprobe does not follow)
for m in virtio_pci virtio_net virtio_console crc32c_generic siw ib_uverbs rdma_ucm; do
	modprobe $m || fail "modprobe $m"
done
# siw completes a send once TCP has its FPDUs, and rsockets destroys the QP right after its
# last completion: siw's socket closes (gracefully) with that data still queued. The peer's
# rsockets keeps granting credits while it receives; a grant that arrives after the close
# makes the guest's TCP reset the connection (RFC 1122 §4.2.2.13, data after close: TcpExt
# TCPAbortOnData) and drop the queued tail, Disconnect included, and the program on warpnic
# waits for it until its timeout. Under TCG (cwnd-bound, 37 KB in flight) the guest's TCP
# queue held some 350 KB when rstream, the server on siw, closed, more than the data still
# to come after warpnic's last grant (some 300 KB). The send buffer bounds what siw has
# completed and the peer not yet acknowledged: 128 KiB at most.
echo "4096 16384 131072" >/proc/sys/net/ipv4/tcp_wmem || fail "tcp_wmem"
ip link set lo up
ip link set eth0 up
ip addr add "$ip" dev eth0 || fail "address $ip"
rdma link add siw0 type siw netdev eth0 || fail "rdma link add siw0"
[ -e /dev/infiniband/rdma_cm ] && [ -e /dev/infiniband/uverbs0 ] ||
	fail "no /dev/infiniband/rdma_cm or uverbs0"
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
echo "WN-SIW-READY $(uname -r) $ip"
echo "WN-SIW-READY $(uname -r)" >&3
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
