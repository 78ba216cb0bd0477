#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What ibv_reg_mr and ibv_dereg_mr cost for each kind of memory, through the verbs shim and
# one warpnicd, beside a memcpy of the same size in the same run (mr_kinds bench: medians of
# ROUNDS; every page of the memory written before). Then the same busy writers the
# verbs_mr_busy test runs, with userfaultfd write protection and with mprotect + SIGSEGV
# (WARPNIC_MR_WP), alternated: each round's median ibv_reg_mr/ibv_dereg_mr time and the CPU
# time of the registering thread per round (what a loaded machine's scheduler moves least).
# Reports numbers; fails only when a run fails.
#
#   mr_reg_cost.sh BUILD_DIR [SHIM_BUILD_DIR]
#     SHIM_BUILD_DIR: another build's warpnicd and shims to measure (an older commit's
#     build, for a before/after), with this build's mr_kinds
# Environment: WN_MR_SIZES (octets, default "4096 2097152 67108864 1073741824"),
# WN_MR_KINDS (default "private memfd tmpfs huge2m huge1g private-huge2m"), WN_MR_ROUNDS
# (default 7), WN_MR_BUSY (busy rounds per mode and round, default 200; 0: none).
set -uo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR [SHIM_BUILD_DIR]}" && pwd)
shim_build=$(cd "${2:-$build}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
prog=$build/test/interop/mr_kinds
warpnicd=$shim_build/app/warpnicd/warpnicd
shims=$shim_build/drivers/verbs:$shim_build/drivers/rdmacm
sizes=${WN_MR_SIZES:-4096 2097152 67108864 1073741824}
kinds=${WN_MR_KINDS:-private memfd tmpfs huge2m huge1g private-huge2m}
rounds=${WN_MR_ROUNDS:-7}
busy=${WN_MR_BUSY:-200}
[ -x "$prog" ] && [ -x "$warpnicd" ] || { echo "FAIL: mr_kinds or warpnicd not built"; exit 1; }
t=$(mktemp -d /tmp/wn-mr-cost.XXXXXX)
cleanup() {
	[ -n "${dpid:-}" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$t"
}
trap cleanup EXIT
env -u LD_LIBRARY_PATH "$warpnicd" --no-huge --no-shconf -m 256 --no-pci -l 0 \
	--file-prefix "wn-mr-cost-$$" --vdev net_null0 --log-level=lib.eal:error \
	-- --ip 198.18.0.1/24 --ctl "$t/ctl.sock" >"$t/warpnicd.log" 2>&1 &
dpid=$!
for _ in $(seq 600); do [ -S "$t/ctl.sock" ] && break; sleep 0.1; done
[ -S "$t/ctl.sock" ] || { cat "$t/warpnicd.log"; echo "FAIL: warpnicd did not start"; exit 1; }
run() { "$top/scripts/warpnic-run" --ctl "$t/ctl.sock" --shim "$shims" "$@"; }

echo "# warpnicd and shims of $shim_build; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for k in $kinds; do
	for s in $sizes; do
		case "$k" in
		*huge2m) [ "$s" -ge 2097152 ] || continue ;;
		huge1g) [ "$s" -ge 1073741824 ] || continue ;;
		esac
		run "$prog" bench "$k" "$s" "$rounds" || echo "$k $s: failed (exit $?)"
	done
done

[ "$busy" -gt 0 ] || exit 0
echo "# busy writers (2 MiB, 2 writers): median ibv_reg_mr / ibv_dereg_mr per mode, alternated"
for r in 1 2 3 4 5; do
	for mode in uffd mprotect; do
		port=$((7490 + r * 2))
		[ $mode = uffd ] || port=$((port + 1))
		WARPNIC_MR_WP=$mode run "$prog" serve 198.18.0.1 $port busy 2097152 "$busy" 2 0 \
			>"$t/busy.out" 2>&1 &
		s=$!
		for _ in $(seq 300); do grep -q listening "$t/busy.out" && break; sleep 0.1; done
		run "$prog" drive 198.18.0.1 $port >/dev/null 2>&1
		wait $s || { cat "$t/busy.out"; echo "FAIL: busy $mode"; exit 1; }
		echo "$mode: $(grep -o 'ibv_reg_mr.*' "$t/busy.out")"
	done
done
