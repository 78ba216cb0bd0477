#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Hand a NIC to DPDK (for warpnicd -a PCI_ADDR) and give it back, with dpdk-devbind.py:
#
#   scripts/bind.sh [OPTIONS] DEVICE          bind DEVICE to a DPDK driver
#   scripts/bind.sh --unbind DEVICE           give it back to its kernel driver
#   scripts/bind.sh --status                  dpdk-devbind.py's list of network devices
#
# DEVICE: a PCI address (0000:03:00.0 or 03:00.0) or an interface name (eth1).
# Options:
#   --driver auto|vfio-pci|uio_pci_generic
#                   auto (default): vfio-pci when the device has an IOMMU group, else
#                   vfio-pci in no-IOMMU mode when the kernel has it, else uio_pci_generic.
#                   vfio-pci without an IOMMU loads vfio with enable_unsafe_noiommu_mode=1.
#   --hugepages N   reserve at least N hugepages of 2 MiB and mount hugetlbfs on
#                   /dev/hugepages (default 512; 0 leaves them alone)
#   --force         bind even if the interface is up, has addresses or routes (it is
#                   taken down first)
#   --kernel-driver DRV   with --unbind: the driver to give it to (default: the one it had
#                   when bind.sh bound it, else whichever kernel driver claims it)
# The previous kernel driver is remembered in /run/warpnic/bind/. Prints the EAL option
# for warpnicd (-a ADDR) and the IOVA mode DPDK will use. Needs root. Exit status 1 with a
# reason when the device cannot be bound: not found, in use, driver missing, no IOMMU for
# vfio-pci and no no-IOMMU mode, other devices in its IOMMU group.
set -euo pipefail

STATE=/run/warpnic/bind
driver=auto pages=512 force=0 mode=bind kdrv=
usage() { sed -n '3,25p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "bind.sh: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
	case "$1" in
	--driver) driver=${2:?--driver NAME}; shift 2 ;;
	--hugepages) pages=${2:?--hugepages N}; shift 2 ;;
	--force) force=1; shift ;;
	--unbind) mode=unbind; shift ;;
	--kernel-driver) kdrv=${2:?--kernel-driver NAME}; shift 2 ;;
	--status) mode=status; shift ;;
	-h | --help) usage; exit 0 ;;
	-*) usage >&2; exit 2 ;;
	*) break ;;
	esac
done

DEVBIND=$(command -v dpdk-devbind.py || echo /usr/share/dpdk/usertools/dpdk-devbind.py)
[ -x "$DEVBIND" ] || die "dpdk-devbind.py not found (Debian: apt-get install dpdk)"
command -v lspci >/dev/null || die "lspci not found (dpdk-devbind.py needs it: apt-get install pciutils)"

if [ "$mode" = status ]; then
	exec "$DEVBIND" --status-dev net
fi
[ $# -eq 1 ] || { usage >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (sysfs, modules, hugepages)"

# the PCI address of DEVICE: an interface's device may sit below it (virtio-net: virtioN)
dev=$1
pci=
if [ -e "/sys/class/net/$dev/device" ]; then
	p=$(readlink -f "/sys/class/net/$dev/device")
	while [ "$p" != / ] && [ -z "$pci" ]; do
		[ -e "/sys/bus/pci/devices/$(basename "$p")" ] && pci=$(basename "$p")
		p=$(dirname "$p")
	done
	[ -n "$pci" ] || die "$dev is not on a PCI device"
elif [ -e "/sys/bus/pci/devices/$dev" ]; then
	pci=$dev
elif [ -e "/sys/bus/pci/devices/0000:$dev" ]; then
	pci=0000:$dev
else
	die "no NIC '$dev': neither an interface with a PCI device nor a PCI address" \
		"(scripts/bind.sh --status lists them)"
fi
sys=/sys/bus/pci/devices/$pci
# interfaces_of: the kernel interfaces on this device (directly or below it, as virtio's)
interfaces_of() {
	local n real
	real=$(readlink -f "$sys")
	for n in /sys/class/net/*; do
		[ -e "$n/device" ] || continue
		case "$(readlink -f "$n/device")/" in "$real"/*) basename "$n" ;; esac
	done
}
cur=$(basename "$(readlink -f "$sys/driver" 2>/dev/null)" 2>/dev/null || :)
[ -e "$sys/driver" ] || cur=

# loaded-or-loadable module DRV (as modprobe names it)
load() {
	local m=$1
	shift
	modprobe "$m" "$@" 2>/dev/null || [ -d "/sys/module/${m//-/_}" ] ||
		die "driver missing: 'modprobe $m' failed (is the kernel's modules package installed?)"
}

if [ "$mode" = unbind ]; then
	case "$cur" in
	vfio-pci | uio_pci_generic | igb_uio) ;;
	"") ;;
	*) echo "bind.sh: $pci is already bound to its kernel driver $cur"; exit 0 ;;
	esac
	[ -n "$kdrv" ] || kdrv=$(cat "$STATE/$pci.driver" 2>/dev/null || :)
	if [ -n "$kdrv" ]; then
		load "$kdrv"
		"$DEVBIND" --bind="$kdrv" "$pci" >&2 || die "dpdk-devbind.py --bind=$kdrv $pci failed"
	else
		"$DEVBIND" --unbind "$pci" >&2 || die "dpdk-devbind.py --unbind $pci failed"
		echo "$pci" >/sys/bus/pci/drivers_probe || :
	fi
	now=$(basename "$(readlink -f "$sys/driver" 2>/dev/null)" 2>/dev/null || :)
	[ -e "$sys/driver" ] || now=
	case "$now" in
	"" | vfio-pci | uio_pci_generic) die "$pci did not go back to a kernel driver (now: ${now:-none})" ;;
	esac
	rm -f "$STATE/$pci.driver"
	sleep 1 # the driver's probe registers the interface
	ifs=$(interfaces_of | tr '\n' ' ')
	echo "bind.sh: $pci is back on $now${ifs:+ (interface ${ifs% })}"
	exit 0
fi

# in use? an interface that is up, has addresses or routes belongs to the kernel's stack
for ifc in $(interfaces_of); do
	why=()
	flags=$(cat "/sys/class/net/$ifc/flags")
	(((flags & 1) != 0)) && why+=("up")
	addrs=$(ip -o addr show dev "$ifc" scope global 2>/dev/null | awk '{print $4}' | tr '\n' ' ')
	[ -n "$addrs" ] && why+=("has addresses ${addrs% }")
	routes=$(ip -o route show dev "$ifc" 2>/dev/null | wc -l)
	[ "$routes" -gt 0 ] && why+=("has $routes routes")
	[ ${#why[@]} -eq 0 ] && continue
	if [ "$force" = 0 ]; then
		die "device in use: interface $ifc ($pci) is $(IFS=,; echo "${why[*]}" | sed 's/,/, /g');" \
			"take it down first" \
			"(ip link set $ifc down; ip addr flush dev $ifc) or pass --force"
	fi
	ip addr flush dev "$ifc" scope global || :
	ip link set "$ifc" down
done

# the DPDK driver and the IOMMU mode
has_iommu=0
[ -e "$sys/iommu_group" ] && has_iommu=1
noiommu_param=/sys/module/vfio/parameters/enable_unsafe_noiommu_mode
if [ "$driver" = auto ]; then
	if [ $has_iommu = 1 ]; then
		driver=vfio-pci
	elif modprobe vfio 2>/dev/null && [ -e "$noiommu_param" ]; then
		driver=vfio-pci
	else
		driver=uio_pci_generic
	fi
fi
case "$driver" in
vfio-pci)
	if [ $has_iommu = 1 ]; then
		# vfio's IOMMU backend is a soft dependency some modprobes do not follow
		load vfio_iommu_type1
		load vfio-pci
		iova="VA (IOMMU group $(basename "$(readlink -f "$sys/iommu_group")"))"
		# vfio takes a whole group: every other endpoint in it must be DPDK's too
		for d in "$sys"/iommu_group/devices/*; do
			d=$(basename "$d")
			[ "$d" = "$pci" ] && continue
			dd=$(basename "$(readlink -f "/sys/bus/pci/devices/$d/driver" 2>/dev/null)" 2>/dev/null || :)
			[ -e "/sys/bus/pci/devices/$d/driver" ] || dd=
			case "$dd" in
			"" | vfio-pci | pcieport) ;;
			*) die "IOMMU group of $pci also holds $d (driver $dd): bind or unbind it too" ;;
			esac
		done
	else
		load vfio enable_unsafe_noiommu_mode=1
		if [ ! -e "$noiommu_param" ]; then
			die "no IOMMU for $pci (no /sys/kernel/iommu_groups entry: enable VT-d/AMD-Vi" \
				"in the firmware and boot with intel_iommu=on or amd_iommu=on), and this" \
				"kernel's vfio has no no-IOMMU mode (CONFIG_VFIO_NOIOMMU is unset, as in" \
				"Debian's kernels): use --driver uio_pci_generic"
		fi
		echo Y >"$noiommu_param" 2>/dev/null || :
		[ "$(cat "$noiommu_param")" = Y ] || die "cannot enable vfio's no-IOMMU mode"
		load vfio-pci
		iova="PA (vfio no-IOMMU mode: the device reaches all memory, unsafe)"
	fi
	;;
uio_pci_generic)
	load uio_pci_generic
	iova="PA (uio_pci_generic: no IOMMU, the device reaches all memory)"
	;;
*) die "--driver: vfio-pci, uio_pci_generic or auto, not '$driver'" ;;
esac

if [ "$cur" != "$driver" ]; then
	mkdir -p "$STATE"
	case "$cur" in
	"" | vfio-pci | uio_pci_generic | igb_uio) ;;
	*) echo "$cur" >"$STATE/$pci.driver" ;;
	esac
	fopt=()
	[ "$force" = 1 ] && fopt=(--force)
	"$DEVBIND" "${fopt[@]}" --bind="$driver" "$pci" >&2 ||
		die "dpdk-devbind.py --bind=$driver $pci failed"
	now=$(basename "$(readlink -f "$sys/driver" 2>/dev/null)" 2>/dev/null || :)
	[ -e "$sys/driver" ] || now=
	[ "$now" = "$driver" ] || die "$pci is not bound to $driver after dpdk-devbind.py (now: ${now:-none})"
fi

# hugepages
if [ "$pages" -gt 0 ]; then
	nr=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
	[ -e "$nr" ] || die "no 2 MiB hugepages in this kernel"
	have=$(cat "$nr")
	[ "$have" -ge "$pages" ] || echo "$pages" >"$nr"
	have=$(cat "$nr")
	[ "$have" -ge "$pages" ] ||
		echo "bind.sh: only $have of $pages hugepages could be reserved (memory fragmented?)" >&2
	if ! grep -q " /dev/hugepages hugetlbfs" /proc/mounts; then
		mkdir -p /dev/hugepages
		mount -t hugetlbfs nodev /dev/hugepages
	fi
fi
free=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2>/dev/null || echo 0)
echo "bind.sh: $pci bound to $driver (was ${cur:-unbound}); IOVA $iova;" \
	"hugepages free $free x 2 MiB"
echo "bind.sh: warpnicd -a $pci ... (scripts/bind.sh --unbind $pci gives it back)"
