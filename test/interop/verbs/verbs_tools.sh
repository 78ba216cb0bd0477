#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Unmodified Debian RDMA tools on the warpnic shims against a running warpnicd:
#   verbs_tools.sh BUILD_DIR CM_LOOP ABI_CALLS RS_LOOP
# Breaks if: the shims stop exporting a symbol a Debian binary imports (BIND_NOW load
# fails), the device is not reported as an iWARP RNIC with an active Ethernet port and
# IPv4-mapped GID 0, rdma_cm, rsockets or the extended verbs (ibv_wr_*, ibv_start_poll) within
# one instance break (cm_loop, rs_loop, qpx_ops), or an
# entry point an RNIC cannot serve stops failing cleanly (abi_calls). warpnicd itself runs
# without the shim directory on LD_LIBRARY_PATH (its DPDK mlx5 PMD needs the real libmlx5).
set -u
build=$(cd "$1" && pwd) cm_loop=$2 abi_calls=$3
rs_loop=${4:?usage: verbs_tools.sh BUILD_DIR CM_LOOP ABI_CALLS RS_LOOP QPX_OPS}
qpx_ops=${5:?usage: verbs_tools.sh BUILD_DIR CM_LOOP ABI_CALLS RS_LOOP QPX_OPS}
warpnicd=$build/app/warpnicd/warpnicd
shim_dirs=$build/drivers/verbs:$build/drivers/rdmacm
top=$(cd "$(dirname "$0")/../../.." && pwd)
# warpnic-run with this build's shims (not the default build/ of the source tree)
wrun() { "$top/scripts/warpnic-run" --shim "$shim_dirs" "$@"; }
run=wrun
tmp=$(mktemp -d /tmp/wn-verbs-XXXXXX)
sock=$tmp/ctl.sock
fail=0
cleanup() {
	[ -n "${dpid:-}" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
bad() { echo "FAIL: $*"; fail=1; }

env -u LD_LIBRARY_PATH "$warpnicd" --no-huge --no-shconf -m 256 --no-pci -l 0 --vdev net_null0 --log-level=lib.eal:error \
	-- --ip 198.18.0.1/24 --ctl "$sock" >"$tmp/warpnicd.log" 2>&1 &
dpid=$!
for _ in $(seq 600); do [ -S "$sock" ] && break; sleep 0.1; done # 60 s: a loaded machine
[ -S "$sock" ] || { cat "$tmp/warpnicd.log"; echo "FAIL: warpnicd did not start"; exit 1; }

export LD_BIND_NOW=1
out=$("$run" --ctl "$sock" ibv_devices 2>&1) || bad "ibv_devices rc"
echo "$out" | grep -q '^ *wn0 ' || bad "ibv_devices does not list wn0: $out"

out=$("$run" --ctl "$sock" ibv_devinfo -v 2>&1) || bad "ibv_devinfo rc: $out"
for pat in 'hca_id:[[:space:]]*wn0' 'transport:[[:space:]]*iWARP' 'state:[[:space:]]*PORT_ACTIVE' \
	'link_layer:[[:space:]]*Ethernet' 'max_qp_rd_atom:[[:space:]]*[1-9]' \
	'active_mtu:[[:space:]]*1024' 'GID\[ *0\]:[[:space:]]*0000:0000:0000:0000:0000:ffff:c612:0001'; do
	echo "$out" | grep -Eq "$pat" || bad "ibv_devinfo -v lacks /$pat/"
done

# every Debian binary loads with all symbols bound (BIND_NOW, relocations checked with
# LD_WARN); shims, not system libs. fio's libraries (librados, libceph-common) and libfabric
# import from librdmacm/libibverbs/libefa too.
for b in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_read_lat ib_send_lat rping \
	rdma_server rdma_client rstream riostream ucmatose ibv_rc_pingpong ibv_srq_pingpong \
	ibv_devinfo ibv_devices fio qperf fi_info fi_pingpong; do
	p=$(command -v "$b") || { bad "$b not installed (scripts/setup.sh installs it)"; continue; }
	libs=$("$run" --ctl "$sock" env LD_WARN=1 LD_TRACE_LOADED_OBJECTS=1 "$p" 2>&1)
	echo "$libs" | grep -Eq 'not found|undefined symbol|symbol lookup error' && bad "$b: $libs"
	echo "$libs" | grep -E 'lib(ibverbs|rdmacm|mlx5|mlx4|efa|mana)\.so' | grep -qvF "$build/drivers/" \
		&& bad "$b loads a system RDMA library: $libs"
done
# librspreload (rsockets behind an ordinary socket program) preloaded into iperf3
rspre=$(ldconfig -p | awk '/librspreload\.so\.1 / {print $NF; exit}')
[ -n "$rspre" ] || rspre=$(ls /usr/lib/*/rsocket/librspreload.so.1 2>/dev/null | head -1)
if [ -n "$rspre" ] && command -v iperf3 >/dev/null; then
	libs=$("$run" --ctl "$sock" env LD_WARN=1 LD_TRACE_LOADED_OBJECTS=1 LD_PRELOAD="$rspre" \
		"$(command -v iperf3)" 2>&1)
	echo "$libs" | grep -Eq 'not found|undefined symbol|symbol lookup error' && bad "librspreload: $libs"
else
	bad "librspreload (librdmacm1) or iperf3 not installed"
fi
for b in ib_write_bw ib_read_lat ib_send_bw; do
	command -v "$b" >/dev/null || { bad "$b not installed"; continue; }
	"$run" --ctl "$sock" "$b" --help 2>&1 | grep -q '^Usage:' || bad "$b --help did not run"
done

"$run" --ctl "$sock" "$cm_loop" 198.18.0.1 || bad "cm_loop"
"$run" --ctl "$sock" "$abi_calls" || bad "abi_calls"
"$run" --ctl "$sock" "$rs_loop" 198.18.0.1 || bad "rs_loop"
"$run" --ctl "$sock" "$qpx_ops" 198.18.0.1 || bad "qpx_ops"
# warpnicd survived all of it
kill -0 "$dpid" 2>/dev/null || bad "warpnicd died"
[ $fail -eq 0 ] && echo "verbs_tools: ok"
exit $fail
