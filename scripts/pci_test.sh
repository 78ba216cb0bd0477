#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# warpnicd on a PCI NIC bound to a DPDK driver, in a QEMU guest, against a warpnicd on the
# host (test/interop/pci/pci_guest.sh; docs/operations.md "A real NIC").
#
#   scripts/pci_test.sh [--quick] [--case NIC:MODE[:PROGRAMS[:MIB]]]...
#
# Default cases, in this order:
#   virtio:vfio:rping,ib_write_bw,ib_read_bw,ib_send_bw:64   virtio-net behind an emulated
#       Intel IOMMU, vfio-pci, IOVA as VA: every program with the guest as server, then as
#       client, 64 MiB each way per run, zero-copy transmit
#       from DMA-mapped regions, counters and data checked
#   virtio:uio:rping,ib_write_bw:4   no IOMMU, uio_pci_generic, IOVA as PA: regions cannot be
#       mapped, zero-copy falls back to copying (telemetry says why)
# NIC e1000e (the emulated Intel 82574 on net_e1000_em) can be asked for; it does not pass
# yet (docs/operations.md). WN_PCI_GUEST_OPTS adds options to the guest's warpnicd. --quick: virtio:vfio:rping:1 only. QEMU runs without KVM (TCG): the guest
# boots in about 12 s on an idle machine, the default cases take about 5 minutes. The first
# run builds the guest image (Debian's kernel through apt-get download, about 20 s, cached in
# /var/cache/warpnic/pci-guest, WN_PCI_GUEST_CACHE). Needs root, qemu-system-x86, a build
# (build/, or WN_BUILD). scripts/test.sh runs only the smoke (pci_guest_smoke).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${WN_BUILD:-$top/build}
cases=()
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) cases+=(virtio:vfio:rping:1); shift ;;
	--case) cases+=("$2"); shift 2 ;;
	-h|--help) sed -n '3,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "pci_test.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ ${#cases[@]} -gt 0 ] ||
	cases=(virtio:vfio:rping,ib_write_bw,ib_read_bw,ib_send_bw:64 virtio:uio:rping,ib_write_bw:4)
if [ ! -x "$build/app/warpnicd/warpnicd" ]; then
	echo "pci_test.sh: $build has no warpnicd (meson setup $build && ninja -C $build)" >&2
	exit 2
fi
log=$(mktemp -d /tmp/wn-pci.XXXXXX)
echo "pci_test: ${#cases[@]} case(s); logs in $log"
ok=0
bad=0
start=$SECONDS
for c in "${cases[@]}"; do
	IFS=: read -r nic mode progs mib <<<"$c"
	t0=$SECONDS
	name=${nic}_${mode}
	if WN_PCI_MIB=${mib:-64} "$top/test/interop/pci/pci_guest.sh" "$build" "$nic" "$mode" \
		"${progs:-rping,ib_write_bw,ib_read_bw,ib_send_bw}" >"$log/$name.log" 2>&1; then
		ok=$((ok + 1))
		echo "PASS $c ($((SECONDS - t0)) s)"
		grep -E "^\[[0-9]+s\] .*: guest sent|dp/dma|iova_mode=" "$log/$name.log" |
			sed 's/^/    /'
	else
		bad=$((bad + 1))
		echo "FAIL $c ($((SECONDS - t0)) s): tail of $log/$name.log"
		tail -n 40 "$log/$name.log" | sed 's/^/    /'
	fi
done
echo "pci_test: $ok passed, $bad failed in $((SECONDS - start)) s"
[ "$bad" -eq 0 ]
