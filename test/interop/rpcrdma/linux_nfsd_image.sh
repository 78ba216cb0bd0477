#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build what linux_nfsd.sh boots, in a cache directory (reused while it is complete):
#   linux_nfsd_image.sh CACHE_DIR
# CACHE_DIR/vmlinuz: Debian 12's kernel (linux-image-VERSION-amd64-unsigned, the version of
# the installed linux-headers-*-amd64); CACHE_DIR/modules: its modules plus siw.ko, which
# Debian does not build (CONFIG_RDMA_SIW unset), compiled from linux-source-6.1 against the
# installed headers; CACHE_DIR/base.cpio: an initramfs skeleton with busybox (static), the
# modules siw, rpcrdma and nfsd need, rdma (iproute2), rpcbind, rpc.mountd, rpc.nfsd and
# exportfs with the libraries they link. Packages come through apt-get download; the host
# needs linux-headers-*-amd64, busybox-static and the nfs-kernel-server/rpcbind/iproute2
# libraries (scripts/setup.sh --linux-nfsd installs them).
set -euo pipefail
cache=${1:?usage: $0 CACHE_DIR}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
[ -f "$cache/complete" ] && exit 0
. "$(cd "$(dirname "$0")" && pwd)/../qemu_guest.sh"
work=$cache/work
rm -rf "$work"
# the kernel, and the sources of exactly its version (the installed headers')
guest_kernel_version
guest_kernel_fetch "$work" "linux-source-6.1=$GUEST_V" nfs-kernel-server nfs-common rpcbind
hdr=$GUEST_HDR
K=$GUEST_K
cd "$work"
mkdir src nfs
for d in debs/nfs-kernel-server_*.deb debs/nfs-common_*.deb debs/rpcbind_*.deb; do
	dpkg-deb -x "$d" nfs
done
# siw from the kernel's own sources, against the installed headers of the same version
dpkg-deb --fsys-tarfile debs/linux-source-6.1_*.deb | tar -x -C src ./usr/src/linux-source-6.1.tar.xz
tar -xJf src/usr/src/linux-source-6.1.tar.xz -C src linux-source-6.1/drivers/infiniband/sw/siw
make -s -C "$hdr" M="$work/src/linux-source-6.1/drivers/infiniband/sw/siw" CONFIG_RDMA_SIW=m \
	modules >/dev/null
mods=$work/img/lib/modules/$K
cp src/linux-source-6.1/drivers/infiniband/sw/siw/siw.ko "$mods/kernel/drivers/infiniband/"
depmod -b img "$K"
# the initramfs skeleton
root=$work/root
guest_skeleton "$root"
mkdir -p "$root/var/lib/nfs"
guest_modules "$mods" "$root/lib/modules/$K" virtio_pci virtio_net siw libcrc32c crc32c_generic \
	rpcrdma nfsd
for b in usr/sbin/rpc.nfsd usr/sbin/rpc.mountd usr/sbin/exportfs sbin/rpcbind usr/sbin/rpcinfo; do
	cp "nfs/$b" "$root/$b"
done
cp "$(command -v rdma)" "$root/usr/bin/rdma"
guest_libs "$root" "$root"/usr/sbin/* "$root"/sbin/rpcbind "$root"/usr/bin/rdma
cp /etc/netconfig "$root/etc/netconfig"
printf 'root:x:0:0::/:/bin/sh\n_rpc:x:100:65534::/run/rpcbind:/bin/false\nstatd:x:101:65534::/var/lib/nfs:/bin/false\n' \
	>"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
# libtirpc finds the portmapper as service "sunrpc"
printf 'sunrpc 111/tcp portmapper\nsunrpc 111/udp portmapper\nnfs 2049/tcp\nnfs 2049/udp\n' \
	>"$root/etc/services"
printf 'ip 0 IP\ntcp 6 TCP\nudp 17 UDP\n' >"$root/etc/protocols"
printf 'portmapper 100000 sunrpc\nnfs 100003\nmountd 100005\nnlockmgr 100021\n' >"$root/etc/rpc"
echo '/export *(rw,insecure,no_root_squash,no_subtree_check,fsid=1)' >"$root/etc/exports"
touch "$root/var/lib/nfs/etab" "$root/var/lib/nfs/rmtab"
guest_cpio "$root" "$cache/base.cpio"
cp img/boot/vmlinuz-"$K" "$cache/vmlinuz"
echo "$K" >"$cache/version"
rm -rf "$work"
touch "$cache/complete"
