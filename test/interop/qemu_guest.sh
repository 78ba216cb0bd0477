# SPDX-License-Identifier: BSD-3-Clause
# Debian 12's kernel in a QEMU guest (TCG) beside a warpnicd on the host, for the interop tests
# against kernel stacks this host's kernel lacks (knfsd over siw, SCTP). Sourced; functions:
#
# Building an image (run once, the result cached by the caller):
#   guest_kernel_version        sets GUEST_HDR (/usr/src/linux-headers-*-amd64, newest),
#                               GUEST_K (6.1.0-N-amd64) and GUEST_V (its package version)
#   guest_kernel_fetch DIR [PKG...]  apt-get download into DIR/debs the unsigned kernel image of
#                               exactly the installed headers' version, and PKG...; the image
#                               is unpacked in DIR/img (vmlinuz in img/boot, modules in
#                               img/lib/modules/$GUEST_K, indexed by depmod)
#   guest_modules SRC DST MOD...  copy MOD... and every module they depend on (modules.dep)
#                               from the modules tree SRC to DST, with the modules.* indexes
#   guest_skeleton ROOT         an initramfs tree: the usual directories, busybox (static)
#                               as /bin/busybox and /bin/sh
#   guest_libs ROOT BIN...      copy the shared libraries BIN... link (ldd) into ROOT
#   guest_cpio ROOT OUT         ROOT as a newc cpio archive
#
# Running one (needs root, /dev/net/tun, qemu-system-x86_64):
#   guest_net NS TAP            creates network namespace NS (deleted by guest_cleanup) with tap
#                               TAP up in it, for the guest and a warpnicd (net_af_packet on TAP)
#   guest_boot NS TAP KERNEL INITRD LOG APPEND [QEMU_ARGS...]
#       boots KERNEL/INITRD in NS (-m 768, one CPU, TCG, console on ttyS0 into LOG, APPEND added
#       to the kernel command line); the guest's virtio NIC is on TAP with every offload off, so
#       the guest computes its checksums and warpnic checks each one. Sets GUEST_QPID.
#   guest_cleanup               kills the guest, deletes NS

GUEST_QPID=
GUEST_NS=

guest_kernel_version() {
	GUEST_HDR=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -1)
	if [ -z "$GUEST_HDR" ]; then
		echo "qemu_guest: no linux-headers-*-amd64 installed" >&2
		return 1
	fi
	GUEST_K=${GUEST_HDR#/usr/src/linux-headers-}
	GUEST_V=$(dpkg-query -W -f='${Version}' "linux-headers-$GUEST_K")
}

guest_kernel_fetch() {
	local dir=$1
	shift
	guest_kernel_version || return 1
	mkdir -p "$dir/debs" "$dir/img" || return 1
	(cd "$dir/debs" && apt-get download -q "linux-image-$GUEST_K-unsigned=$GUEST_V" "$@" \
		>/dev/null) || { echo "qemu_guest: apt-get download failed" >&2; return 1; }
	dpkg-deb -x "$dir"/debs/linux-image-"$GUEST_K"-unsigned_*.deb "$dir/img" &&
		depmod -b "$dir/img" "$GUEST_K" # the package leaves modules.dep to its postinst
}

guest_modules() {
	python3 - "$@" <<'PY'
import os, shutil, sys
src, dst, mods = sys.argv[1], sys.argv[2], sys.argv[3:]
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
for m in mods:
    add(by[m])
for k in need:
    os.makedirs(os.path.join(dst, os.path.dirname(k)), exist_ok=True)
    shutil.copy(os.path.join(src, k), os.path.join(dst, k))
for f in os.listdir(src):
    if f.startswith("modules."):
        shutil.copy(os.path.join(src, f), dst)
PY
}

guest_skeleton() {
	local root=$1
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,lib64,lib/x86_64-linux-gnu,proc,sys,dev,tmp}
	cp /bin/busybox "$root/bin/busybox"
	ln -sf busybox "$root/bin/sh"
	if ldd "$root/bin/busybox" >/dev/null 2>&1; then
		echo "qemu_guest: /bin/busybox is not static (busybox-static)" >&2
		return 1
	fi
}

guest_libs() {
	local root=$1 b
	shift
	for b in "$@"; do
		ldd "$b" | awk '$3 ~ /^\// {print $3} $1 ~ /^\/lib64/ {print $1}'
	done | sort -u | while read -r l; do
		mkdir -p "$root$(dirname "$l")"
		cp -L "$l" "$root$l"
	done
}

guest_cpio() {
	(cd "$1" && find . | busybox cpio -o -H newc 2>/dev/null) >"$2"
}

guest_net() {
	local ns=$1 tap=$2
	if ! ip netns add "$ns"; then
		echo "qemu_guest: cannot create a network namespace" >&2
		return 1
	fi
	GUEST_NS=$ns
	ip -n "$ns" link set lo up
	ip -n "$ns" tuntap add dev "$tap" mode tap || return 1
	ip -n "$ns" link set "$tap" up
}

guest_boot() {
	local ns=$1 tap=$2 kernel=$3 initrd=$4 log=$5 append=$6
	shift 6
	ip netns exec "$ns" qemu-system-x86_64 -m 768 -smp 1 -nographic -no-reboot -accel tcg \
		-kernel "$kernel" -initrd "$initrd" -append "console=ttyS0 quiet panic=-1 $append" \
		-netdev tap,id=n0,ifname="$tap",script=no,downscript=no \
		-device virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56,csum=off,guest_csum=off,gso=off,guest_tso4=off,guest_tso6=off,host_tso4=off,host_tso6=off \
		"$@" >"$log" 2>&1 </dev/null &
	GUEST_QPID=$!
}

guest_cleanup() {
	[ -n "$GUEST_QPID" ] && kill -KILL "$GUEST_QPID" 2>/dev/null
	[ -n "$GUEST_NS" ] && ip netns del "$GUEST_NS" 2>/dev/null
	GUEST_QPID=
	GUEST_NS=
	return 0
}
