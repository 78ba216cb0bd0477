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
hdr=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -1)
[ -n "$hdr" ] || { echo "linux_nfsd_image: no linux-headers-*-amd64 installed" >&2; exit 1; }
K=${hdr#/usr/src/linux-headers-}
work=$cache/work
rm -rf "$work"
mkdir -p "$work/debs"
cd "$work/debs"
# the kernel sources of exactly the installed headers' version
V=$(dpkg-query -W -f='${Version}' "linux-headers-$K")
apt-get download -q "linux-image-$K-unsigned=$V" "linux-source-6.1=$V" nfs-kernel-server \
	nfs-common rpcbind >/dev/null
cd "$work"
mkdir img src nfs
dpkg-deb -x debs/linux-image-"$K"-unsigned_*.deb img
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
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,lib64,lib/x86_64-linux-gnu,proc,sys,dev,var/lib/nfs}
cp /bin/busybox "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
ldd "$root/bin/busybox" >/dev/null 2>&1 &&
	{ echo "linux_nfsd_image: /bin/busybox is not static (busybox-static)" >&2; exit 1; }
python3 - "$mods" "$root/lib/modules/$K" <<'PY'
import os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
dep = {}
for line in open(os.path.join(src, "modules.dep")):
    k, v = line.split(":", 1)
    dep[k.strip()] = v.split()
by = {k.split("/")[-1].split(".ko")[0]: k for k in dep}
need = set()
def add(k):
    if k not in need:
        need.add(k)
        for d in dep[k]:
            add(d)
for m in ("virtio_pci", "virtio_net", "siw", "libcrc32c", "crc32c_generic", "rpcrdma", "nfsd"):
    add(by[m])
for k in need:
    os.makedirs(os.path.join(dst, os.path.dirname(k)), exist_ok=True)
    shutil.copy(os.path.join(src, k), os.path.join(dst, k))
for f in os.listdir(src):
    if f.startswith("modules."):
        shutil.copy(os.path.join(src, f), dst)
PY
for b in usr/sbin/rpc.nfsd usr/sbin/rpc.mountd usr/sbin/exportfs sbin/rpcbind usr/sbin/rpcinfo; do
	cp "nfs/$b" "$root/$b"
done
cp "$(command -v rdma)" "$root/usr/bin/rdma"
for b in "$root"/usr/sbin/* "$root"/sbin/rpcbind "$root"/usr/bin/rdma; do
	ldd "$b" | awk '$3 ~ /^\// {print $3} $1 ~ /^\/lib64/ {print $1}'
done | sort -u | while read -r l; do
	mkdir -p "$root$(dirname "$l")"
	cp -L "$l" "$root$l"
done
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
(cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null) >"$cache/base.cpio"
cp img/boot/vmlinuz-"$K" "$cache/vmlinuz"
echo "$K" >"$cache/version"
rm -rf "$work"
touch "$cache/complete"
