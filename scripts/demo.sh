#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The README's main command: prepare the machine, build warpnic, and show
# what the MPA wire path costs on this machine (warpnic-perf --mode wire_bw:
# framer and deframer next to memcpy and isa-l CRC32c, same run).
#
#   scripts/demo.sh [--no-setup] [--json] [-- WARPNIC_PERF_OPTIONS...]
#
#   --no-setup   skip scripts/setup.sh (packages, hugepages)
#   --json       print the results as JSON
#   -h, --help   this text
# Options after "--" go to warpnic-perf after "--mode wire_bw", e.g.
#   scripts/demo.sh -- --sweep
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

setup=1
perf_args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--no-setup) setup=0; shift ;;
	--json) perf_args+=(--json -); shift ;;
	-h|--help) sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	--) shift; perf_args+=("$@"); break ;;
	*) echo "demo.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done

if [ "$setup" = 1 ]; then
	echo "== scripts/setup.sh" >&2
	scripts/setup.sh >&2
fi

echo "== build" >&2
[ -f build/build.ninja ] || meson setup build >&2
if ! ninja -C build >&2; then
	# Another part of the tree may be mid-change; the demo only needs warpnic-perf.
	echo "demo.sh: full build failed, building warpnic-perf alone" >&2
	ninja -C build app/bin/warpnic-perf >&2
fi
perf=build/app/bin/warpnic-perf
[ -x "$perf" ] || { echo "demo.sh: $perf was not built (is DPDK installed?)" >&2; exit 1; }

echo "== warpnic-perf --mode wire_bw" >&2
# No NIC and no hugepages needed: one lcore, heap memory, no shared runtime files.
exec "$perf" --no-huge --no-shconf --no-pci -l 0 --log-level=warning -- \
	--mode wire_bw "${perf_args[@]}"
