#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Usage: scripts/deb13_test.sh [--keep] [--work DIR]
# warpnic on Debian 13 (trixie: DPDK 24.11, rdma-core 56), as root:
#  1. is the trixie mirror reachable from here (its Release file: HTTP status, size, time);
#  2. a fresh trixie root (mmdebstrap) with what building and the unit suite need;
#  3. this tree built there (meson, developer mode: warnings are errors), the unit suite and
#     verbs_tools' test_abi (the shims export every versioned symbol of trixie's libibverbs and
#     librdmacm) pass;
#  4. the smoke: scripts/warpnic-up (one warpnicd, no NIC, no hugepages) in a private
#     network namespace, then trixie's own rping, data verified, and ib_write_bw through
#     the shim.
# About 15 minutes on two cores (most of it the build); not in scripts/test.sh. The last
# line is "deb13_test: N passed, N failed".
#   --keep       keep the work directory (the root, the build)
#   --work DIR   the work directory (default: a new one in /var/tmp)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
keep=0 work= mirror=${WN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
while [ $# -gt 0 ]; do
	case "$1" in
	--keep) keep=1; shift ;;
	--work) work=$2; shift 2 ;;
	-h|--help) sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "deb13_test: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" = 0 ] || { echo "deb13_test: run it as root" >&2; exit 2; }
command -v mmdebstrap >/dev/null || { echo "deb13_test: mmdebstrap missing (scripts/setup.sh)" >&2; exit 2; }
[ -n "$work" ] || work=$(mktemp -d /var/tmp/wn-deb13-test.XXXXXX)
mkdir -p "$work"
root=$work/root
passed=0 failed=0
ok() { echo "deb13_test: ok: $*"; passed=$((passed + 1)); }
bad() { echo "deb13_test: FAILED: $*"; failed=$((failed + 1)); }
mounted=()
finish() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[i]}"; done
	[ "$keep" = 1 ] && echo "deb13_test: kept $work" || rm -rf "$work"
	echo "deb13_test: $passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit
}
t0=$(date +%s)
step() { echo "deb13_test: [$(($(date +%s) - t0)) s] $*"; }

# 1. the mirror
step "the trixie mirror: $mirror/dists/trixie/Release"
if command -v curl >/dev/null; then
	r=$(curl -s -o /dev/null -m 30 -w '%{http_code} %{size_download} %{time_total}' \
		"$mirror/dists/trixie/Release")
	read -r code size secs <<<"$r"
	if [ "$code" = 200 ]; then
		ok "trixie mirror reachable: HTTP $code, $size octets in ${secs} s"
	else
		bad "trixie mirror not reachable: HTTP ${code:-none}, ${size:-0} octets in ${secs:-?} s"
		finish
	fi
fi

# 2. the root
pkgs=build-essential,pkg-config,meson,ninja-build,python3,python3-pyelftools,help2man
pkgs+=,libdpdk-dev,libisal-dev,libusrsctp-dev,libibverbs-dev,librdmacm-dev,libtirpc-dev
pkgs+=,rpcsvc-proto,ibverbs-providers,binutils,libcmocka-dev,libssl-dev,tshark
pkgs+=,iproute2,procps,kmod,ibverbs-utils,rdmacm-utils,perftest,python3-pytest
step "mmdebstrap trixie (log: $work/mmdebstrap.log)"
if ! mmdebstrap --variant=apt --include="$pkgs" trixie "$root" "$mirror" \
	>"$work/mmdebstrap.log" 2>&1; then
	tail -n 20 "$work/mmdebstrap.log"
	bad "mmdebstrap trixie"
	finish
fi
dpdk=$(chroot "$root" pkg-config --modversion libdpdk)
rdma=$(chroot "$root" dpkg-query -W -f '${Version}' libibverbs-dev)
ok "a trixie root: DPDK $dpdk, rdma-core $rdma"
for d in proc sys dev dev/pts dev/shm; do
	mount --bind "/$d" "$root/$d" && mounted+=("$root/$d")
done
mkdir -p "$root/src/warpnic"
git -C "$top" ls-files -co --exclude-standard | grep -v '^build' |
	tar -C "$top" -cf - -T - | tar -C "$root/src/warpnic" -xf -

# 3. build, unit suite, verbs_tools' test_abi
inroot() { chroot "$root" env -C /src/warpnic "$@"; }
step "meson setup + ninja (developer mode; log: $work/build.log)"
if inroot meson setup build -Ddeveloper_mode=enabled >"$work/build.log" 2>&1 &&
	inroot nice ninja -C build >>"$work/build.log" 2>&1; then
	ok "built against DPDK $dpdk and rdma-core $rdma, warnings as errors"
else
	grep -a -m 20 'error' "$work/build.log"
	bad "the build"
	finish
fi
step "unit suite and verbs_tools' test_abi (log: $work/test.log)"
if inroot meson test -C build --suite unit --num-processes 2 >"$work/test.log" 2>&1; then
	ok "unit suite: $(grep -a '^Ok:' "$work/test.log" | awk '{print $2}') passed"
else
	grep -a -E 'FAIL' "$work/test.log" | head -20
	bad "unit suite"
fi
if inroot meson test -C build verbs_tools --test-args='-k test_abi' >>"$work/test.log" 2>&1; then
	ok "verbs_tools' test_abi: the shims export every versioned symbol of trixie's libraries"
else
	bad "verbs_tools' test_abi: $(grep -a -A3 'AssertionError' "$work/test.log" | head -8)"
fi

# 4. the smoke, in a private network namespace
step "warpnic-up, then rping and ib_write_bw through the shim (log: $work/smoke.log)"
cat >"$root/src/smoke.sh" <<'EOF'
#!/bin/bash
set -u
ip link set lo up
cd /src/warpnic
up="scripts/warpnic-up --name deb13 --ctl /tmp/deb13.sock"
run="scripts/warpnic-run --ctl /tmp/deb13.sock"
$up || { cat /run/warpnic/deb13.log; exit 1; }
r=0
$run rping -s -a 198.18.0.1 -V -C 20 >/tmp/rping.srv 2>&1 &
s=$!; sleep 1
if timeout 60 $run rping -c -a 198.18.0.1 -v -V -C 20 >/tmp/rping.cli 2>&1 && wait $s &&
	[ "$(grep -c '^ping data' /tmp/rping.cli)" = 20 ]; then
	echo "smoke: rping 20 rounds, data verified"
else
	echo "smoke: FAIL rping"; cat /tmp/rping.cli /tmp/rping.srv; r=1
fi
$run ib_write_bw -R -s 65536 -n 1000 >/tmp/bw.srv 2>&1 &
s=$!; sleep 1
if timeout 120 $run ib_write_bw -R -s 65536 -n 1000 198.18.0.1 >/tmp/bw.cli 2>&1 && wait $s &&
	grep -q '^ 65536 ' /tmp/bw.cli; then
	echo "smoke: ib_write_bw $(grep '^ 65536 ' /tmp/bw.cli)"
else
	echo "smoke: FAIL ib_write_bw"; cat /tmp/bw.cli /tmp/bw.srv; r=1
fi
$up --stop
exit $r
EOF
chmod +x "$root/src/smoke.sh"
if unshare -n chroot "$root" /src/smoke.sh >"$work/smoke.log" 2>&1; then
	ok "on trixie: $(grep '^smoke:' "$work/smoke.log" | sed 's/^smoke: //' | paste -sd ';')"
else
	cat "$work/smoke.log"
	bad "the smoke (rping, ib_write_bw through the shim)"
fi
finish
