#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build the part of pci_guest.sh's guest that does not depend on a warpnic build, in a cache
# directory (reused while it is complete and the host packages it copies are unchanged):
#   guest_image.sh CACHE_DIR
# CACHE_DIR/vmlinuz: Debian 12's kernel (linux-image-VERSION-amd64-unsigned, the version of
# the installed linux-headers-*-amd64, through apt-get download); CACHE_DIR/base.cpio: an
# initramfs with its modules for the guest's NICs and for binding them (virtio_pci,
# virtio_net, e1000e, vfio, vfio-pci, vfio_iommu_type1, uio_pci_generic; virtio_console for
# the control channel), a static busybox, and the host's own bash, ip, lspci (+ pci.ids),
# dpdk-devbind.py with the Python modules it and scripts/wn-tel.py import, rping, ibv_devinfo,
# perftest's ib_{write,read,send}_bw, and DPDK's PMDs for those NICs (net_virtio, net_e1000)
# with bus_pci and mempool_ring, each with the shared libraries ldd names. pci_guest.sh
# appends the build's warpnicd and shims.
set -euo pipefail
cache=${1:?usage: $0 CACHE_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../../.." && pwd)
. "$HERE/../qemu_guest.sh"
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
PY=/usr/bin/python3
PMDS=/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0
# what the image copies from the host: a new version of any of them rebuilds it
stamp=$(dpkg-query -W -f='${Package}=${Version}\n' busybox-static bash iproute2 pciutils \
	dpdk librte-net-virtio23 librte-net-e1000-23 perftest rdmacm-utils ibverbs-utils \
	python3.11-minimal libpython3.11-stdlib 2>/dev/null; cat "$0" "$HERE/../qemu_guest.sh" "$TOP/scripts/wn-tel.py" | md5sum)
if [ -f "$cache/complete" ] && [ "$(cat "$cache/complete")" = "$stamp" ]; then
	exit 0
fi
rm -f "$cache/complete"
work=$cache/work
rm -rf "$work"
mkdir -p "$work"
guest_kernel_fetch "$work"
K=$GUEST_K
root=$work/root
guest_skeleton "$root"
guest_modules "$work/img/lib/modules/$K" "$root/lib/modules/$K" virtio_pci virtio_net e1000e \
	virtio_console vfio vfio_pci vfio_iommu_type1 uio_pci_generic
# tools
guest_copy "$root" /usr/bin/bash /usr/sbin/ip /usr/bin/lspci /usr/share/misc/pci.ids \
	/usr/bin/dpdk-devbind.py /usr/bin/rping /usr/bin/ibv_devinfo /usr/bin/ib_write_bw \
	/usr/bin/ib_read_bw /usr/bin/ib_send_bw "$PY" /usr/bin/env \
	/usr/lib/x86_64-linux-gnu/libgcc_s.so.1 # glibc loads it for pthread_cancel
# Python: the interpreter's landmark and every module dpdk-devbind.py and wn-tel.py import
# (as python3 -v reports them: sources, their cached byte code, extension modules)
py_files=$(cd "$work" && { "$PY" -v /usr/bin/dpdk-devbind.py --status-dev net || :
	"$PY" -v "$TOP/scripts/wn-tel.py" || :; } 2>&1 >/dev/null |
	grep -oE "matches /\S+|loaded from '/[^']+'|code object from '/[^']+'" |
	sed -E "s/^matches //; s/^loaded from '//; s/^code object from '//; s/'$//" | sort -u)
pylib=$("$PY" -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')
# shellcheck disable=SC2086
guest_copy "$root" "$pylib/os.py" $py_files
# DPDK's PMDs for the guest's NICs (the EAL loads every file of its plugin directory)
for p in bus_pci mempool_ring net_virtio net_e1000; do
	guest_copy "$root" "$PMDS/librte_$p.so" # and the links it leads through
done
mkdir -p "$root/dev/hugepages" "$root/mnt"
guest_cpio "$root" "$cache/base.cpio"
cp "$work/img/boot/vmlinuz-$K" "$cache/vmlinuz"
echo "$K" >"$cache/version"
rm -rf "$work"
echo "$stamp" >"$cache/complete"
echo "guest_image: $cache: kernel $K, base.cpio $(du -h "$cache/base.cpio" | cut -f1)"
