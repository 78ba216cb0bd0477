#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build what kernel_peer.sh boots, in a cache directory (reused while it is complete):
#   sctp_image.sh CACHE_DIR
# CACHE_DIR/vmlinuz: Debian 12's kernel (linux-image-VERSION-amd64-unsigned, the version of the
# installed linux-headers-*-amd64, fetched with apt-get download); CACHE_DIR/base.cpio: an
# initramfs skeleton with busybox (static) and the modules the guest needs: virtio's NIC and
# the kernel's SCTP (sctp.ko, libcrc32c with crc32c_generic: TCG's CPU has no SSE4.2). The
# test peer (ddp_sctp_peer, static) and /init are added per run. The host needs
# linux-headers-amd64, busybox-static and qemu-system-x86 (scripts/setup.sh installs them).
set -euo pipefail
cache=${1:?usage: $0 CACHE_DIR}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
[ -f "$cache/complete" ] && exit 0
. "$(cd "$(dirname "$0")" && pwd)/../qemu_guest.sh"
work=$cache/work
rm -rf "$work"
guest_kernel_fetch "$work"
root=$work/root
guest_skeleton "$root"
guest_modules "$work/img/lib/modules/$GUEST_K" "$root/lib/modules/$GUEST_K" virtio_pci virtio_net \
	sctp libcrc32c crc32c_generic
guest_cpio "$root" "$cache/base.cpio"
cp "$work/img/boot/vmlinuz-$GUEST_K" "$cache/vmlinuz"
echo "$GUEST_K" >"$cache/version"
rm -rf "$work"
touch "$cache/complete"
