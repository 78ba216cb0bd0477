# SPDX-License-Identifier: BSD-3-Clause
# Debian 12's kernel in a QEMU guest (TCG) beside a warpnicd on the host, for the interop tests
# against kernel stacks this host's kernel lacks (knfsd over siw, SCTP) and for warpnicd on a
# PCI NIC bound to DPDK inside the guest (pci/). Sourced; functions:
#
# Building an image (run once, the result cached by the caller):
#   guest_kernel_version        sets GUEST_HDR (/usr/src/linux-headers-*-amd64, newest),
#                               GUEST_K (6.1.0-N-amd64) and GUEST_V (its package version)
#   guest_kernel_fetch DIR [PKG...]  apt-get download into DIR/debs the unsigned kernel image of
#                               exactly the installed headers' version, and PKG...; the image
#                               is unpacked in DIR/img (vmlinuz in img/boot, modules in
#                               img/lib/modules/$GUEST_K, indexed by depmod)
#   guest_modules SRC DST MOD...  copy MOD... (dashes or underscores alike) and every module
#                               they depend on (modules.dep) from the modules tree SRC to DST,
#                               with the modules.* indexes
#   guest_skeleton ROOT         an initramfs tree in the host's merged-/usr layout (/bin, /sbin,
#                               /lib, /lib64 link into /usr, so every path ldd prints is one
#                               file in the guest), busybox (static) as /bin/busybox and
#                               /bin/sh, root in /etc/passwd and /etc/group
#   guest_libs ROOT FILE...     copy the shared libraries FILE... link (ldd) into ROOT
#   guest_copy ROOT PATH...     copy PATH... to the same place under ROOT: symlinks stay links
#                               (their targets copied too, so a library loaded as a plugin and
#                               one linked by name stay one file), executables and libraries
#                               with guest_libs; a path ROOT has already is left alone
#   guest_cpio ROOT OUT         ROOT as a newc cpio archive
#
# Running one (needs root, /dev/net/tun, qemu-system-x86_64):
#   guest_net NS TAP            creates network namespace NS (deleted by guest_cleanup) with tap
#                               TAP up in it, for the guest and a warpnicd (net_af_packet on TAP)
#   guest_boot NS TAP KERNEL INITRD LOG APPEND [QEMU_ARGS...]
#       boots KERNEL/INITRD in NS (TCG, console on ttyS0 into LOG, APPEND added to the kernel
#       command line; GUEST_MEM MiB, default 768, GUEST_CPUS, default 1); the guest's NIC is on
#       TAP: GUEST_NIC (a -device value whose netdev is n0), default a virtio NIC with every
#       offload off, so the guest computes its checksums and warpnic checks each one. The tap
#       has no vnet header: QEMU completes a checksum an emulated NIC was asked to offload
#       (with one, it would leave it to the host's kernel, and net_af_packet reads the frame
#       before that).
#       QEMU_ARGS go last (a machine type, more devices). Sets GUEST_QPID.
#   guest_cleanup               kills the guest (and guest_ctl_open's copier), deletes NS

GUEST_QPID=
GUEST_NS=
GUEST_NIC_OFFLOADS_OFF=csum=off,guest_csum=off,gso=off,guest_tso4=off,guest_tso6=off,host_tso4=off,host_tso6=off

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
by = {}
for k in dep:
    name = k.split("/")[-1].split(".ko")[0]
    by[name] = by[name.replace("-", "_")] = k
need = set()
def add(k):
    if k not in need:
        need.add(k)
        for d in dep[k]:
            add(d)
for m in mods:
    if m.replace("-", "_") not in by:
        sys.exit("qemu_guest: no module %s in %s" % (m, src))
    add(by[m.replace("-", "_")])
for k in need:
    os.makedirs(os.path.join(dst, os.path.dirname(k)), exist_ok=True)
    shutil.copy(os.path.join(src, k), os.path.join(dst, k))
for f in os.listdir(src):
    if f.startswith("modules."):
        shutil.copy(os.path.join(src, f), dst)
PY
}

guest_skeleton() {
	local root=$1 d
	mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib/x86_64-linux-gnu,usr/lib64,etc,proc,sys,dev,tmp,run}
	for d in bin sbin lib lib64; do
		if [ -L "/$d" ]; then
			ln -sfn "$(readlink "/$d")" "$root/$d"
		else
			mkdir -p "$root/$d"
		fi
	done
	cp /bin/busybox "$root/bin/busybox"
	ln -sf busybox "$root/bin/sh"
	if ldd "$root/bin/busybox" >/dev/null 2>&1; then
		echo "qemu_guest: /bin/busybox is not static (busybox-static)" >&2
		return 1
	fi
	printf 'root:x:0:0::/:/bin/sh\n' >"$root/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
}

guest_libs() {
	local root=$1 f l
	shift
	for f in "$@"; do
		{ ldd "$f" 2>/dev/null || :; } | awk '$3 ~ /^\// {print $3} $1 ~ /^\/lib64/ {print $1}'
	done | sort -u | while read -r l; do
		guest_copy "$root" "$l" || exit 1
	done
}

guest_copy() {
	local root=$1 p t
	shift
	for p in "$@"; do
		[ -e "$root$p" ] || [ -L "$root$p" ] && continue
		[ -e "$p" ] || { echo "qemu_guest: $p does not exist" >&2; return 1; }
		mkdir -p "$root$(dirname "$p")" || return 1
		if [ -L "$p" ]; then
			# one link at a time: libx.so -> libx.so.23 -> libx.so.23.0
			t=$(readlink "$p")
			case $t in /*) ;; *) t=$(dirname "$p")/$t ;; esac
			cp -P "$p" "$root$p" || return 1
			guest_copy "$root" "$(realpath -s "$t")" || return 1
			continue
		fi
		cp -a "$p" "$root$p" || return 1
		case $p in
		*.so | *.so.*) guest_libs "$root" "$p" || return 1 ;;
		*) if [ -f "$p" ] && [ -x "$p" ]; then guest_libs "$root" "$p" || return 1; fi ;;
		esac
	done
	return 0
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
	local nic=${GUEST_NIC:-virtio-net-pci,netdev=n0,mac=52:54:00:12:34:56,$GUEST_NIC_OFFLOADS_OFF}
	shift 6
	ip netns exec "$ns" qemu-system-x86_64 -m "${GUEST_MEM:-768}" -smp "${GUEST_CPUS:-1}" \
		-nographic -no-reboot -accel tcg \
		-kernel "$kernel" -initrd "$initrd" -append "console=ttyS0 quiet panic=-1 $append" \
		-netdev tap,id=n0,ifname="$tap",script=no,downscript=no,vnet_hdr=off -device "$nic" \
		"$@" >"$log" 2>&1 </dev/null &
	GUEST_QPID=$!
}

guest_cleanup() {
	[ -n "$GUEST_CTL_CAT" ] && kill -KILL "$GUEST_CTL_CAT" 2>/dev/null
	[ -n "$GUEST_QPID" ] && kill -KILL "$GUEST_QPID" 2>/dev/null
	[ -n "$GUEST_NS" ] && ip netns del "$GUEST_NS" 2>/dev/null
	GUEST_QPID=
	GUEST_NS=
	GUEST_CTL_CAT=
	return 0
}

# A control channel for guests whose /init serves the host's commands on the virtio-serial
# port wn.ctl (lines "ID BASE64" in, the output then "WN-DONE ID STATUS" back, as
# verbs/rs_linux_siw_init.sh does):
#   guest_ctl_prepare DIR       FIFOs for QEMU's pipe chardev in DIR; sets GUEST_CTL_ARGS, the
#                               arguments guest_boot passes on to QEMU
#   guest_ctl_open DIR          after guest_boot: the guest's replies are copied into
#                               DIR/ctl.log, fd 7 writes to the guest
#   guest_cmd DIR [-t SECS] COMMAND   run COMMAND (sh) in the guest: its output on stdout,
#                               its exit status (124 when it did not finish in SECS, default
#                               120)
GUEST_CTL_ARGS=()
GUEST_CTL_CAT=

guest_ctl_prepare() {
	mkdir -p "$1/fifo" && mkfifo "$1/fifo/ctl.in" "$1/fifo/ctl.out" || return 1
	: >"$1/ctl.log"
	echo 0 >"$1/ctl.id"
	GUEST_CTL_ARGS=(-device virtio-serial-pci -chardev "pipe,id=ctl,path=$1/fifo/ctl"
		-device virtserialport,chardev=ctl,name=wn.ctl)
}

guest_ctl_open() {
	cat "$1/fifo/ctl.out" >>"$1/ctl.log" &
	GUEST_CTL_CAT=$!
	exec 7>"$1/fifo/ctl.in"
}

guest_cmd() {
	local dir=$1 secs=120 id from i rc
	shift
	if [ "$1" = -t ]; then
		secs=$2
		shift 2
	fi
	id=$(($(cat "$dir/ctl.id") + 1))
	echo "$id" >"$dir/ctl.id"
	from=$(wc -l <"$dir/ctl.log")
	# base64: a command of several lines is one line on the port
	printf '%s %s\n' "$id" "$(printf '%s' "$*" | base64 -w0)" >&7
	for ((i = 0; i < secs * 10; i++)); do
		grep -aq "^WN-DONE $id " "$dir/ctl.log" && break
		sleep 0.1
	done
	[ $i -lt $((secs * 10)) ] || return 124
	tail -n +$((from + 1)) "$dir/ctl.log" | sed "/^WN-DONE $id /q" | grep -av "^WN-DONE $id "
	rc=$(grep -a "^WN-DONE $id " "$dir/ctl.log" | awk '{print $3}')
	return "${rc:-1}"
}
