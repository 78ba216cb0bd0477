# SPDX-License-Identifier: BSD-3-Clause
# Common part of the interop tests: sourced as `. lib.sh BUILD_DIR`.
# Creates a private network namespace; wn-tcpapp runs inside it on a DPDK net_tap
# port (iface wnt0, address 198.18.0.2 on the warpnic side) and the kernel peer uses
# the tap's kernel side (198.18.0.1/24). Everything is deleted on exit.
# Exit 77 (meson: skipped) when the machine cannot run it (not root, no tun).
set -uo pipefail

WN_BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
WN_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WN_TOP=$(cd "$WN_HERE/../.." && pwd)
TCPAPP=$WN_BUILD/app/bin/wn-tcpapp
KPEER=$WN_HERE/kpeer.py
WN_IP=198.18.0.2
K_IP=198.18.0.1
WN_TAP=wnt0
# 256 MiB by default (the issue's size); WN_INTEROP_BYTES scales it down
BYTES=${WN_INTEROP_BYTES:-268435456}
CASE_TIMEOUT=${WN_INTEROP_TIMEOUT:-240}

# shellcheck source=../../scripts/netns.sh
. "$WN_TOP/scripts/netns.sh"

# a missing prerequisite fails the test (scripts/setup.sh installs the tools)
missing() { echo "FAIL: missing prerequisite: $*"; exit 1; }

[ "$(id -u)" = 0 ] || missing "root, for network namespaces"
[ -x "$TCPAPP" ] || missing "wn-tcpapp not built"
[ -c /dev/net/tun ] || missing "/dev/net/tun"
command -v ip >/dev/null || missing "iproute2"
command -v python3 >/dev/null || missing "python3"

NS=wn-io-$$
T=$(mktemp -d /tmp/wn-interop.XXXXXX)
PIDS=()
APP_PID=

show_logs() {
	local f
	for f in "$T"/*.out "$T"/*.err; do
		[ -s "$f" ] || continue
		echo "----- $(basename "$f") (last 30 lines)"
		tail -n 30 "$f"
	done
}

fail() {
	echo "FAIL: $*"
	# let wn-tcpapp print its counters before the logs are shown
	if [ -n "${APP_PID:-}" ] && kill -INT "$APP_PID" 2>/dev/null; then
		wait_pid "$APP_PID" 5 >/dev/null
	fi
	show_logs
	exit 1
}

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.2
		done
		kill -KILL "$p" 2>/dev/null || true
	done
	netns_delete "$NS"
	[ -n "${WN_INTEROP_KEEP:-}" ] && echo "logs kept in $T" || rm -rf "$T"
}
trap cleanup EXIT
trap 'echo "lib.sh: SIGINT" >&2; exit 1' INT
trap 'echo "lib.sh: SIGTERM" >&2; exit 1' TERM

netns_create "$NS" || missing "cannot create network namespaces"

# EAL memory: hugepages when mounted and free, else plain memory
eal_mem() {
	local free
	free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
	if grep -q hugetlbfs /proc/mounts && [ "${free:-0}" -ge 300 ]; then
		echo "--in-memory"
	else
		echo "--no-huge --no-shconf -m 1024"
	fi
}

lcore() { [ "$(nproc)" -ge 2 ] && echo 1 || echo 0; }

# start_app NAME APP_OPTIONS...: wn-tcpapp in the namespace on a fresh tap port
start_app() {
	local name=$1
	shift
	# shellcheck disable=SC2046
	ip netns exec "$NS" "$TCPAPP" -l "$(lcore)" $(eal_mem) --file-prefix "wn-io-$$-$name" --no-pci \
		--log-level 'lib.eal:warning' --vdev "net_tap0,iface=$WN_TAP" -- "$@" \
		>"$T/$name.out" 2>"$T/$name.err" &
	APP_PID=$!
	PIDS+=("$APP_PID")
	netns_tap "$NS" "$WN_TAP" "$K_IP/24" 30 || fail "tap interface did not come up"
}

# wait_line FILE REGEX SECS
wait_line() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# wait_pid PID SECS: the exit status, 124 on timeout
wait_pid() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$1" 2>/dev/null || { wait "$1"; return $?; }
		sleep 0.1
	done
	return 124
}

# kernel side command in the namespace
kns() { ip netns exec "$NS" "$@"; }

# kns in the background (redirect the call): its PID in BG_PID, killed at exit. Not
# `kns ... &`: $! would be the subshell running the function, and killing it left the
# command running (a SYN flooder outlived its test by minutes).
kns_bg() {
	ip netns exec "$NS" "$@" &
	BG_PID=$!
	PIDS+=("$BG_PID")
}

# field VALUE-after-KEY from a result line: field FILE REGEX KEY
field() { grep -E "$2" "$1" | head -n1 | sed -E "s/(^|.*[[:space:]])$3 ([^[:space:]]+).*/\2/"; }
