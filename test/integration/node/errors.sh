#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Errors a person understands, as a user meets them:
#   errors.sh BUILD_DIR
# - every command-line and config-file mistake in the table below: warpnicd exits 2 and its
#   message names the option and the form it accepts;
# - no daemon: a program through the shim sees no device, and stderr says once where the
#   shim looked and how to start one;
# - a live control socket is never taken over: a second warpnicd on it exits 1 naming the
#   first one's pid, and the first keeps serving; a socket file a killed warpnicd left
#   behind is replaced;
# - the socket's directory is made, its mode is 0660 by default and --ctl-mode's otherwise;
# - --netdev: an interface of that name that is not warpnicd's is left alone (exit 1).
# warpnicd runs in a private network namespace, on net_null without hugepages.
set -uo pipefail
build=$(cd "${1:?usage: errors.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../../.." && pwd)
warpnicd=$build/app/warpnicd/warpnicd
tmp=$(mktemp -d /tmp/wn-errors.XXXXXX)
fails=0 pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
eal() { echo --no-huge --no-shconf -m 128 --no-pci -l 0 --vdev net_null0,no-rx=1 \
	--file-prefix "wn-err-$$-$1" --log-level=lib.eal:error; }

# expect STATUS WORDS -- ARGS...: warpnicd ARGS exits STATUS and stderr has each of WORDS
n=0
expect() {
	local want=$1 words=$2 rc out w
	shift 3
	n=$((n + 1))
	out=$(env -u LD_LIBRARY_PATH "$warpnicd" $(eal "$n") -- "$@" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" = "$want" ] || bad "warpnicd $*: exit status $rc, expected $want: $out"
	IFS='|' read -ra ws <<<"$words"
	for w in "${ws[@]}"; do
		grep -qF -- "$w" <<<"$out" || bad "warpnicd $*: the message lacks '$w': $out"
	done
}

ip=198.18.99.1/24
# the command line
expect 2 "--ip 198.18.99.1|prefix|198.18.99.1/24" -- --ip 198.18.99.1
expect 2 "--ip|ADDR/PREFIX" -- --ip 300.1.2.3/24
expect 2 "--ip ADDR/PREFIX" --
expect 2 "--mtu|'99'|576 to 9000" -- --ip $ip --mtu 99
expect 2 "--mtu|needs a value" -- --ip $ip --mtu
expect 2 "--idle|'nap'|sleep or poll" -- --ip $ip --idle nap
expect 2 "--zero-copy-tx|on or off" -- --ip $ip --zero-copy-tx yes
expect 2 "--llp|mpa or sctp" -- --ip $ip --llp udp
expect 2 "--rtr|send, write and/or read" -- --ip $ip --rtr send,foo
expect 2 "--ctl-mode|'999'|octal" -- --ip $ip --ctl-mode 999
expect 2 "--ctl-group wn-no-such-group|no such group" -- --ip $ip --ctl-group wn-no-such-group
expect 2 "--netdev|15 characters" -- --ip $ip --netdev wn-name-too-long0
expect 2 "unknown option '--bogus'|--help" -- --ip $ip --bogus
expect 2 "unexpected argument 'stray'" -- --ip $ip stray
expect 2 "EAL" -- --bogus-eal-option-before-dashes
# a config file: FILE:LINE, the option, the accepted form
cat >"$tmp/bad1.conf" <<'CONF'
ip 198.18.99.1/24
mtu 99
CONF
cat >"$tmp/bad2.conf" <<'CONF'
# a comment
frobnicate 3
CONF
cat >"$tmp/bad3.conf" <<'CONF'
ip
CONF
expect 2 "bad1.conf:2|mtu|576 to 9000" -- --config "$tmp/bad1.conf"
expect 2 "bad2.conf:2|unknown option 'frobnicate'" -- --config "$tmp/bad2.conf"
expect 2 "bad3.conf:1|needs a value|ADDR/PREFIX" -- --config "$tmp/bad3.conf"
expect 2 "--config $tmp/none.conf|No such file" -- --config "$tmp/none.conf"
# the port
expect 1 "--port 3|no such port|0 net_null0" -- --ip $ip --port 3

# no daemon: no device, and once on stderr where the shim looked and what to do
out=$(env WARPNIC_CTL="$tmp/nobody.sock" "$top/scripts/warpnic-run" ibv_devinfo 2>&1)
rc=$?
[ "$rc" != 0 ] || bad "ibv_devinfo without a daemon succeeded"
grep -q 'No IB devices found' <<<"$out" || bad "ibv_devinfo without a daemon: $out"
[ "$(grep -c "no warpnicd serves $tmp/nobody.sock" <<<"$out")" = 1 ] ||
	bad "no daemon: not said exactly once with the socket's path: $out"
grep -q 'warpnic-up' <<<"$out" || bad "no daemon: the message does not say how to start one"

# one warpnicd serving, in a directory that does not exist yet
sock=$tmp/run/deep/ctl.sock
start() { # start TAG SOCK [OPTS...]: warpnicd in the background, until it serves (--pidfile)
	local tag=$1 s=$2
	shift 2
	env -u LD_LIBRARY_PATH "$warpnicd" $(eal "$tag") -- --ip $ip --ctl "$s" \
		--pidfile "$tmp/$tag.pid" "$@" >"$tmp/$tag.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 100); do
		[ -s "$tmp/$tag.pid" ] && return 0
		kill -0 "${pids[-1]}" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
start first "$sock" || bad "warpnicd did not start in a missing directory: $(cat "$tmp/first.log")"
first=${pids[-1]}
mode=$(stat -c %a "$sock" 2>/dev/null)
[ "$mode" = 660 ] || bad "control socket mode $mode, expected 660"
[ "$(stat -c %a "$tmp/run/deep")" = 755 ] || bad "the socket's directory is not 0755"
# a second warpnicd on the same socket: refused with the first one's pid
n=$((n + 1))
out=$(env -u LD_LIBRARY_PATH "$warpnicd" $(eal second) -- --ip $ip --ctl "$sock" 2>&1)
rc=$?
[ "$rc" = 1 ] || bad "second warpnicd on a live socket: exit status $rc, expected 1"
grep -q "another process serves it (pid $first" <<<"$out" ||
	bad "second warpnicd does not name the first one's pid $first: $out"
env WARPNIC_CTL="$sock" "$top/scripts/warpnic-run" ibv_devinfo >"$tmp/devinfo" 2>&1 ||
	bad "the first warpnicd no longer serves after the second was refused: $(cat "$tmp/devinfo")"
# killed, it leaves its socket; the next one replaces it
kill -9 "$first"
wait "$first" 2>/dev/null
[ -S "$sock" ] || bad "a killed warpnicd left no socket file (the stale case is not tested)"
start third "$sock" --ctl-mode 0600 || bad "warpnicd did not replace a stale socket: $(cat "$tmp/third.log")"
mode=$(stat -c %a "$sock" 2>/dev/null)
[ "$mode" = 600 ] || bad "--ctl-mode 0600 gave mode $mode"
kill "${pids[-1]}"

# --netdev NAME when the host has an interface NAME that is not warpnicd's (a private
# network namespace: nothing of the host's is touched)
if unshare -n true 2>/dev/null; then
	out=$(unshare -n bash -c "ip link add wnerr0 type dummy 2>/dev/null ||
		ip link add wnerr0 type veth peer name wnerr0p; env -u LD_LIBRARY_PATH \
		$warpnicd $(eal netdev) -- --ip $ip --ctl $tmp/nd.sock --netdev wnerr0 2>&1;
		echo rc=\$?; ip -br link show wnerr0")
	grep -q 'rc=1' <<<"$out" || bad "--netdev on a foreign interface: not exit status 1: $out"
	grep -q "netdev wnerr0: the host has an interface of that name" <<<"$out" ||
		bad "--netdev on a foreign interface: $out"
	grep -q '^wnerr0' <<<"$out" || bad "--netdev removed an interface that was not its own"
else
	bad "unshare -n is not available (needs root)"
fi
[ "$fails" = 0 ] || exit 1
echo "errors: $n warpnicd runs, each mistake named with its accepted form; no daemon said once;" \
	"live socket kept, stale one replaced; socket mode and directory; foreign netdev kept"
