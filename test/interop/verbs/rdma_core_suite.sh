#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rdma-core's own test suite (its tests/ at the tag of the installed rdma-core, run with
# Debian's python3-pyverbs, no test edited) through the verbs and rdmacm shims:
#   rdma_core_suite.sh BUILD_DIR [one|pair] [-k PATTERN]...
# one: a single warpnicd serves both ends (its loopback); pair: two warpnicd on a memif link
# (scripts/wn-pair.sh), the suite on A. Every test's outcome must be the one in
# rdma_core_suite.txt beside this script (rdma_core_suite.py compares): a test that starts to
# fail, or to pass, or is skipped for another reason, fails this test until the table says so.
# The run's own table is left in BUILD_DIR/rdma-core-suite-MODE.txt.
#
# The suite is rdma-core's, not ours: its release tarball (WN_RDMA_CORE_TESTS, default
# peers/rdma-core-tests-v44.0.tar.gz in the shared directory beside the repository) is
# unpacked under BUILD_DIR at each run, never into the source tree.
#
# The only glue is where a device's IP address comes from: the suite reads it from
# /sys/class/infiniband/DEV/device/net/IFNAME and `ip addr show IFNAME`, which a device
# without a kernel driver has not. The suite runs in private mount and network namespaces
# where a tmpfs on /sys/class holds that directory and a veth interface holds warpnicd's
# address (the kernel never carries the traffic: rdma_cm on the shim goes to warpnicd).
set -u
build=$(cd "${1:?usage: rdma_core_suite.sh BUILD_DIR [one|pair] [-k PATTERN]...}" && pwd)
mode=${2:-one}
shift 2 2>/dev/null || shift $#
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
py=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }

tarball=${WN_RDMA_CORE_TESTS:-}
if [ -z "$tarball" ]; then
	common=$(git -C "$top" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)
	for d in "$top/.." "${common:+$(dirname "$common")/..}"; do
		[ -n "$d" ] && [ -f "$d/shared/peers/rdma-core-tests-v44.0.tar.gz" ] &&
			{ tarball=$d/shared/peers/rdma-core-tests-v44.0.tar.gz; break; }
	done
fi
[ -n "$tarball" ] && [ -f "$tarball" ] ||
	fail "rdma-core's tests/ tarball not found (set WN_RDMA_CORE_TESTS)"
$py -c 'import pyverbs.device' 2>/dev/null ||
	fail "Debian's python3-pyverbs is not installed (scripts/setup.sh installs it)"
command -v unshare >/dev/null || fail "unshare (util-linux) not installed"
[ "$(id -u)" = 0 ] || fail "needs root (mount and network namespaces for the address glue)"

tmp=$(mktemp -d /tmp/wn-rdma-core-XXXXXX)
suite=$build/rdma-core-tests
rm -rf "$suite" && mkdir -p "$suite" && tar -xzf "$tarball" -C "$suite" --strip-components=1 ||
	fail "cannot unpack $tarball"
[ -f "$suite/tests/run_tests.py" ] || fail "$tarball holds no tests/run_tests.py"

dpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	[ "$mode" = pair ] && "$top/scripts/wn-pair.sh" --dir "$tmp/pair" stop >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

case $mode in
one)
	ip=198.18.24.1
	sock=$tmp/ctl.sock
	env -u LD_LIBRARY_PATH "$build/app/warpnicd/warpnicd" --no-huge --no-shconf -m 256 \
		--no-pci -l 0 --file-prefix "wn-rct-$$" --vdev net_null0,no-rx=1 --log-level=lib.eal:error \
		-- --ip $ip/24 --ctl "$sock" >"$tmp/warpnicd.log" 2>&1 &
	dpid=$!
	for _ in $(seq 600); do [ -S "$sock" ] && break; sleep 0.1; done
	[ -S "$sock" ] || { cat "$tmp/warpnicd.log"; fail "warpnicd did not start"; }
	;;
pair)
	WN_BUILD=$build "$top/scripts/wn-pair.sh" --dir "$tmp/pair" start --owner $$ \
		>"$tmp/pair.log" 2>&1 || { cat "$tmp/pair.log"; fail "wn-pair.sh start failed"; }
	eval "$("$top/scripts/wn-pair.sh" --dir "$tmp/pair" env)"
	ip=$WN_A_IP
	sock=$tmp/pair/a.sock
	;;
*) fail "mode is one or pair, not $mode" ;;
esac

dev=$("$top/scripts/warpnic-run" --ctl "$sock" --shim "$build/drivers/verbs:$build/drivers/rdmacm" \
	ibv_devices 2>/dev/null | awk 'NR > 2 {print $1; exit}')
[ -n "$dev" ] || fail "the shim lists no device"

# the glue, then the suite; the shim's libraries first (warpnic-run), this build's
cat >"$tmp/glue.sh" <<EOF
set -e
mount -t tmpfs wn-sysfs /sys/class
mkdir -p /sys/class/infiniband/$dev/device/net/wnsuite0
ip link set lo up
ip link add wnsuite0 type veth peer name wnsuite1
ip addr add $ip/24 dev wnsuite0
ip link set wnsuite0 up
cd "$tmp"
exec "$top/scripts/warpnic-run" --ctl "$sock" --shim "$build/drivers/verbs:$build/drivers/rdmacm" \\
	$py "$here/rdma_core_suite.py" --suite "$suite" --expect "$here/rdma_core_suite.txt" \\
	--results "$build/rdma-core-suite-$mode.txt" "\$@"
EOF
unshare --mount --net --propagation private bash "$tmp/glue.sh" "$@"
