#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the Linux siw guest that linux_nfsd.sh and verbs/rs_linux_siw.sh boot, in a cache
# directory (reused while it is complete and built by this version of the script):
#   linux_nfsd_image.sh CACHE_DIR
# CACHE_DIR/vmlinuz: Debian 12's kernel (linux-image-VERSION-amd64-unsigned, the version of
# the installed linux-headers-*-amd64); CACHE_DIR/base.cpio: an initramfs skeleton with
# busybox (static); the kernel's modules that siw, rpcrdma, nfsd, ib_uverbs, rdma_ucm and
# virtio_console (a control channel) need, plus siw.ko, which Debian does not build
# (CONFIG_RDMA_SIW unset), compiled from linux-source-6.1 against the installed headers;
# rdma (iproute2), rpcbind, rpc.mountd, rpc.nfsd and exportfs; and rdma-core's user space
# as Debian 12 ships it (libibverbs with its siw provider, librdmacm with rsockets, rstream
# and riostream from rdmacm-utils), each with the libraries it links. Packages come through
# apt-get download; the host needs linux-headers-*-amd64, busybox-static and the
# nfs-kernel-server/rpcbind/iproute2/libibverbs libraries (scripts/setup.sh installs them).
# Builders of one CACHE_DIR take turns (flock).
set -euo pipefail
cache=${1:?usage: $0 CACHE_DIR}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
exec 9>"$cache.lock"
flock 9
stamp=$(md5sum <"$0")
if [ -f "$cache/complete" ] && [ "$(cat "$cache/complete")" = "$stamp" ]; then
	exit 0
fi
rm -f "$cache/complete"
. "$HERE/../qemu_guest.sh"
work=$cache/work
rm -rf "$work"
# the kernel, and the sources of exactly its version (the installed headers')
guest_kernel_version
guest_kernel_fetch "$work" "linux-source-6.1=$GUEST_V" nfs-kernel-server nfs-common rpcbind \
	rdmacm-utils librdmacm1 libibverbs1 ibverbs-providers
hdr=$GUEST_HDR
K=$GUEST_K
cd "$work"
mkdir src nfs rdma
for d in debs/nfs-kernel-server_*.deb debs/nfs-common_*.deb debs/rpcbind_*.deb; do
	dpkg-deb -x "$d" nfs
done
for d in debs/rdmacm-utils_*.deb debs/librdmacm1_*.deb debs/libibverbs1_*.deb \
	debs/ibverbs-providers_*.deb; do
	dpkg-deb -x "$d" rdma
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
guest_modules "$mods" "$root/lib/modules/$K" virtio_pci virtio_net virtio_console siw libcrc32c \
	crc32c_generic rpcrdma nfsd ib_uverbs rdma_ucm
for b in usr/sbin/rpc.nfsd usr/sbin/rpc.mountd usr/sbin/exportfs sbin/rpcbind usr/sbin/rpcinfo; do
	cp "nfs/$b" "$root/$b"
done
cp "$(command -v rdma)" "$root/usr/bin/rdma"
# rdma-core: the packages' files at their own paths (the libraries they link come from the
# host's identical paths; what the packages hold is not taken from the host)
lib=usr/lib/x86_64-linux-gnu
mkdir -p "$root/$lib/libibverbs" "$root/etc/libibverbs.d"
cp -P rdma/usr/bin/rstream rdma/usr/bin/riostream "$root/usr/bin/"
cp -P rdma/$lib/libibverbs.so.1* rdma/$lib/librdmacm.so.1* "$root/$lib/"
cp -P rdma/$lib/libibverbs/libsiw-rdmav*.so "$root/$lib/libibverbs/"
cp rdma/etc/libibverbs.d/siw.driver "$root/etc/libibverbs.d/"
guest_libs "$root" "$root"/usr/sbin/* "$root"/sbin/rpcbind "$root"/usr/bin/rdma \
	"$root"/usr/bin/rstream "$root"/usr/bin/riostream "$root"/$lib/libibverbs/libsiw-rdmav*.so
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
echo "$stamp" >"$cache/complete"
