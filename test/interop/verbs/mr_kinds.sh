#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Registered memory of one kind through the shims, with unmodified ibv_reg_mr calls
# (mr_kinds.c; mr_dpdk.c for a DPDK program's rte_malloc memory). One warpnicd serves both
# ends (its loopback): the case's program registers the memory and asks a second program
# (mr_kinds drive) to RDMA-Write, RDMA-Read and receive Sends there.
#   mr_kinds.sh BUILD_DIR MR_KINDS MR_DPDK CASE
# Cases: busy, busy_mprotect, file, truncate, shared, sysv, huge2m, huge1g, dpdk,
# unprivileged, ro, munmap, rereg, fork. Fails when any check of the programs fails (their
# "FAIL:" lines say which), a program exits otherwise than 0, or warpnicd dies. busy_mprotect runs the busy writers with the
# mprotect + SIGSEGV write protection only (WARPNIC_MR_WP=mprotect), without the read()
# writer (there a system call that writes into the range fails with EFAULT, documented).
# huge1g needs a free 1 GiB hugepage on a hugetlbfs with pagesize=1G mounted on
# /dev/hugepages-1G (scripts/setup.sh reserves and mounts it); huge2m and dpdk need free
# 2 MiB hugepages on /dev/hugepages.
set -u
build=$(cd "${1:?usage: mr_kinds.sh BUILD_DIR MR_KINDS MR_DPDK CASE}" && pwd)
prog=$(realpath -e "$2") || exit 1
dpdk=$3
case=${4:?usage: mr_kinds.sh BUILD_DIR MR_KINDS MR_DPDK CASE}
top=$(cd "$(dirname "$0")/../../.." && pwd)
warpnicd=$build/app/warpnicd/warpnicd
shim_dirs=$build/drivers/verbs:$build/drivers/rdmacm
ip=198.18.0.1
tmp=$(mktemp -d /tmp/wn-mr-XXXXXX)
sock=$tmp/ctl.sock
fail=0
bg=()

cleanup() {
	local p
	for p in "${bg[@]}"; do kill -KILL "$p" 2>/dev/null; done
	[ -n "${dpid:-}" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$tmp" "/dev/shm/wn-mr-file.$$"
}
trap cleanup EXIT
bad() { echo "FAIL: $*"; fail=1; }

[ -x "$warpnicd" ] || { echo "FAIL: warpnicd not built"; exit 1; }
env -u LD_LIBRARY_PATH "$warpnicd" --no-huge --no-shconf -m 256 --no-pci -l 0 \
	--file-prefix "wn-mr-$$" --vdev net_null0 --log-level=lib.eal:error \
	-- --ip $ip/24 --ctl "$sock" >"$tmp/warpnicd.log" 2>&1 &
dpid=$!
for _ in $(seq 600); do [ -S "$sock" ] && break; sleep 0.1; done # 60 s: a loaded machine
[ -S "$sock" ] || { cat "$tmp/warpnicd.log"; echo "FAIL: warpnicd did not start"; exit 1; }

run() { timeout -k 5 300 "$top/scripts/warpnic-run" --ctl "$sock" --shim "$shim_dirs" "$@"; }
# a DPDK program finds the shims by its build's RUNPATH: the shim directory on its
# LD_LIBRARY_PATH would give the EAL's mlx5 driver the stand-in libmlx5
run_dpdk() { WARPNIC_CTL=$sock timeout -k 5 300 "$@"; }
run_nobody() { run setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

# pair NAME PORT SERVE_PROGRAM... : the server in the background, the driver against it
# (PAIR_RUN: how the server runs, default run)
pair() {
	local name=$1 port=$2 s d i f
	shift 2
	f=$tmp/${name//[^a-zA-Z0-9]/_}
	${PAIR_RUN:-run} "$@" >"$f.out" 2>&1 &
	s=$!
	bg+=("$s")
	for i in $(seq 300); do
		grep -q "listening" "$f.out" 2>/dev/null && break
		kill -0 "$s" 2>/dev/null || break
		sleep 0.1
	done
	run "$prog" drive $ip "$port" >"$f.drive.out" 2>&1
	d=$?
	wait "$s"
	s=$?
	sed "s|^|$name: |" "$f.out"
	[ $d -eq 0 ] || { sed "s|^|$name driver: |" "$f.drive.out"; bad "$name: driver exit $d"; }
	[ $s -eq 0 ] || bad "$name: exit status $s"
}

# serve NAME PORT CASE ARGS...: mr_kinds serve
serve() {
	local name=$1 port=$2
	shift 2
	pair "$name" "$port" "$prog" serve $ip "$port" "$@"
}

seed=$((RANDOM * 65536 + RANDOM))
case "$case" in
busy)
	# 2 MiB, 2 writers and a read() writer, 2000 registrations
	serve busy 7470 busy 2097152 2000 2 1
	;;
busy_mprotect)
	WARPNIC_MR_WP=mprotect serve busy 7470 busy 2097152 1000 2 0
	;;
file)
	# tmpfs, then ext4 (or whatever /tmp is): written through the MR, read back by another
	# process with pread() after msync()
	for f in "/dev/shm/wn-mr-file.$$" "$tmp/file"; do
		serve "file $(stat -f -c %T "$(dirname "$f")")" 7470 file "$f" 8388608 "$seed"
		run "$prog" check-file "$f" 8388608 "$seed" || bad "check-file $f"
	done
	;;
truncate)
	serve truncate 7470 truncate "/dev/shm/wn-mr-file.$$" 4194304 "$seed"
	tel=/var/run/dpdk/wn-mr-$$/dpdk_telemetry.v2
	v=$(python3 "$top/scripts/wn-tel.py" "$tel" /warpnic/ctl mr_sigbus) ||
		bad "no telemetry from warpnicd"
	echo "warpnicd: $v"
	[ "${v#mr_sigbus=}" -gt 0 ] 2>/dev/null || bad "warpnicd counted no page replaced ($v)"
	;;
shared)
	for k in memfd shm anon; do
		serve "shared $k" 7470 shared $k 4194304 "$seed"
	done
	;;
sysv)
	# one segment registered by two processes at once, each MR carrying half the peer's
	# Writes; a third process attaches it and finds both halves
	key=$((0x574e0000 + $$ % 65536))
	for part in 0 1; do
		run "$prog" serve $ip $((7470 + part)) sysv $key 4194304 "$seed" $part 2 \
			>"$tmp/sysv$part.out" 2>&1 &
		bg+=($!)
		spid[$part]=$!
	done
	for part in 0 1; do
		for _ in $(seq 300); do
			grep -q listening "$tmp/sysv$part.out" 2>/dev/null && break
			sleep 0.1
		done
		run "$prog" drive $ip $((7470 + part)) >"$tmp/sysv$part.drive.out" 2>&1 &
		bg+=($!)
		dpid_[$part]=$!
	done
	for part in 0 1; do
		wait "${dpid_[$part]}" || { cat "$tmp/sysv$part.drive.out"; bad "sysv driver $part"; }
		wait "${spid[$part]}" || bad "sysv process $part exit status"
		sed "s/^/sysv $part: /" "$tmp/sysv$part.out"
	done
	run "$prog" check-sysv $key 4194304 "$seed" rm || bad "check-sysv"
	;;
huge2m)
	serve "huge 2m anon" 7470 huge 2m anon 8388608 "$seed"
	serve "huge 2m file" 7470 huge 2m file 8388608 "$seed" "/dev/hugepages/wn-mr-$$"
	serve "huge 2m private" 7470 huge 2m private 8388608 "$seed"
	;;
huge1g)
	n=/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages
	if [ ! -e $n ] || [ "$(cat $n)" -lt 1 ] ||
		! grep -q " /dev/hugepages-1G hugetlbfs" /proc/mounts; then
		echo "FAIL: no free 1 GiB hugepage on /dev/hugepages-1G (scripts/setup.sh reserves one)"
		exit 1
	fi
	serve "huge 1g file" 7470 huge 1g file 1073741824 "$seed" "/dev/hugepages-1G/wn-mr-$$"
	;;
dpdk)
	[ -x "$dpdk" ] || { echo "FAIL: $dpdk not built"; exit 1; }
	# its EAL on 2 MiB hugepages of its own (file prefix), a buffer of 40 MiB: more pieces
	# (one file per hugepage) than one REG_MR message carries
	PAIR_RUN=run_dpdk pair dpdk 7470 "$dpdk" $ip 7470 41943040 "$seed" -- --no-pci -l 0 \
		--file-prefix "wn-mr-dpdk-$$" -m 128 --log-level=lib.eal:error
	;;
unprivileged)
	# as nobody: no /proc/self/map_files, a user-mode userfaultfd only; shared anonymous
	# memory and an unlinked, closed POSIX shm object can then only be opened by warpnicd
	# (WN_CTL_MR_SRC_PEER), the memfd through the fd the program holds
	[ "$(id -u)" = 0 ] || { echo "FAIL: needs root to run the programs as nobody"; exit 1; }
	command -v setpriv >/dev/null || { echo "FAIL: setpriv (util-linux) missing"; exit 1; }
	chmod 755 "$tmp" && chmod 777 "$sock"
	for k in anon shm memfd; do
		PAIR_RUN=run_nobody serve "nobody shared $k" 7470 shared $k 4194304 "$seed"
	done
	PAIR_RUN=run_nobody serve "nobody munmap" 7470 munmap 1048576 "$seed"
	;;
ro)
	serve ro 7470 ro 1048576 "$seed"
	;;
munmap)
	serve munmap 7470 munmap 4194304 "$seed"
	;;
rereg)
	serve rereg 7470 rereg 1048576 "$seed"
	;;
fork)
	serve "fork" 7470 fork 1048576 "$seed"
	RDMAV_FORK_SAFE=1 serve "fork RDMAV_FORK_SAFE" 7470 fork 1048576 "$seed"
	RDMAV_FORK_SAFE=1 RDMAV_USE_MADVISE=1 serve "fork RDMAV_USE_MADVISE" 7470 fork 1048576 \
		"$seed"
	;;
*)
	echo "FAIL: unknown case $case"
	exit 1
	;;
esac
grep -h "^FAIL" "$tmp"/*.out && fail=1
kill -0 "$dpid" 2>/dev/null || bad "warpnicd died"
if [ $fail -ne 0 ]; then
	tail -20 "$tmp/warpnicd.log"
	exit 1
fi
echo "mr_kinds $case: passed"
