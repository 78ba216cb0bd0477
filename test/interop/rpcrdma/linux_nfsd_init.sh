#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# /init of the guest that linux_nfsd.sh boots: Debian's kernel with siw (built out of tree),
# knfsd serving NFSv3 over RDMA (port 20049) on siw over eth0, MOUNT over TCP. Prints
# "WN-NFSD-READY" on the console when serving; its failures end with "WN-NFSD-FAILED".
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /run/rpcbind /var/lib/nfs/rpc_pipefs /var/lib/nfs/v4recovery /tmp /export
fail() { dmesg | tail -15; echo "WN-NFSD-FAILED: $*"; poweroff -f; }
ip=$(sed -n 's/.*wn_ip=\([^ ]*\).*/\1/p' /proc/cmdline)
# libcrc32c finds its algorithm by name (a softdep busybox modprobe does not follow)
for m in virtio_pci virtio_net crc32c_generic siw rpcrdma nfsd; do
	modprobe $m || fail "modprobe $m"
done
ip link set lo up
ip link set eth0 up
ip addr add "$ip" dev eth0 || fail "address $ip"
rdma link add siw0 type siw netdev eth0 || fail "rdma link add siw0"
mount -t tmpfs -o size=200m tmpfs /export
cp /data.bin /export/data && : >/export/target && chmod 666 /export/target
mount -t nfsd nfsd /proc/fs/nfsd || fail "mount nfsd"
mount -t rpc_pipefs rpc_pipefs /var/lib/nfs/rpc_pipefs
rpcbind -w || fail rpcbind
i=0
until rpcinfo -p 127.0.0.1 >/dev/null 2>&1; do
	i=$((i + 1)); [ $i -lt 50 ] || fail "rpcbind does not answer"; sleep 0.2
done
exportfs -ra || fail exportfs
rpc.mountd --port 20048 --no-nfs-version 4 || fail rpc.mountd
rpc.nfsd --no-nfs-version 4 --rdma=20049 4 || fail rpc.nfsd
# MOUNT found through the portmapper, as mount.nfs finds it
i=0
until rpcinfo -p 127.0.0.1 | grep -q '100005 *3 *tcp'; do
	i=$((i + 1)); [ $i -lt 50 ] || { rpcinfo -p 127.0.0.1; fail "mountd not registered"; }; sleep 0.2
done
grep -q rdma /proc/fs/nfsd/portlist || echo "rdma 20049" >/proc/fs/nfsd/portlist
cat /proc/fs/nfsd/portlist
echo "WN-NFSD-READY $(uname -r) $ip"
# serve until the host writes "stop" to the second serial port or kills qemu
while sleep 1; do :; done
