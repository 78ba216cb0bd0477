# SPDX-License-Identifier: BSD-3-Clause
# Common part of the two-instance verbs interop tests: sourced as `. pair_lib.sh BUILD_DIR`.
# Starts nothing by itself; pair_start runs scripts/wn-pair.sh (two warpnicd joined by
# net_memif, A = 198.19.0.1, B = 198.19.0.2) in a private WN_PAIR_DIR, so tests can run in
# parallel. Unmodified Debian binaries reach the instances through scripts/warpnic-run and
# the shims of BUILD_DIR. Everything is stopped on exit; logs are printed on failure
# (WN_INTEROP_KEEP=1 keeps them). A missing prerequisite (a tool, a build product) fails.
set -uo pipefail

WN_BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
WN_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WN_TOP=$(cd "$WN_HERE/../../.." && pwd)
RUN=$WN_TOP/scripts/warpnic-run
PAIR=$WN_TOP/scripts/wn-pair.sh
SHIM=$WN_BUILD/drivers/verbs:$WN_BUILD/drivers/rdmacm
# The addresses the programs use: IPv4 by default; WN_VERBS_IP=6 starts the pair IPv6-only
# (wn-pair.sh --ipv6 --no-ipv4), 46 dual-stack, and the programs then use the IPv6 addresses.
# WN_VERBS_PAIR: more wn-pair.sh start options (e.g. "--link af_packet --lcores 2").
WN_VERBS_IP=${WN_VERBS_IP:-4}
case "$WN_VERBS_IP" in
4) A_IP=198.19.0.1 B_IP=198.19.0.2 ;;
6 | 46) A_IP=fd77:6e::1 B_IP=fd77:6e::2 ;;
*) echo "FAIL: WN_VERBS_IP=$WN_VERBS_IP (4, 6 or 46)"; exit 1 ;;
esac
# no single step of a test may hang the suite
STEP_TIMEOUT=${WN_VERBS_TIMEOUT:-90}

missing() { echo "FAIL: missing prerequisite: $*"; exit 1; }

[ -x "$WN_BUILD/app/warpnicd/warpnicd" ] || missing "warpnicd not built"
[ -e "$WN_BUILD/drivers/verbs/libibverbs.so.1" ] || missing "verbs shim not built"
[ -e "$WN_BUILD/drivers/rdmacm/librdmacm.so.1" ] || missing "rdmacm shim not built"

T=$(mktemp -d "/tmp/wn-verbs-$(basename "$0" .sh).XXXXXX")
# programs run in $T: a crashing one leaves its core there (when the kernel writes plain
# core files), and show_logs prints its backtrace
cd "$T" || exit 1
case "$(cat /proc/sys/kernel/core_pattern 2>/dev/null)" in
'|'* | /*) ;;
*) ulimit -c unlimited 2>/dev/null ;;
esac
export WN_BUILD WN_PAIR_DIR=$T/pair
A_CTL=$WN_PAIR_DIR/a.sock
B_CTL=$WN_PAIR_DIR/b.sock
BG=()
FAILED=0

show_logs() {
	local f
	for f in "$T"/*.out; do
		[ -s "$f" ] || continue
		echo "----- $(basename "$f") (last 40 lines)"
		tail -n 40 "$f"
	done
	"$PAIR" logs 40
	for f in "$T"/core*; do
		[ -f "$f" ] && command -v gdb >/dev/null && command -v file >/dev/null || continue
		exe=$(file "$f" | sed -n "s/.*execfn: '\([^']*\)'.*/\1/p")
		echo "----- backtrace of $(basename "$f") ($exe)"
		gdb -q -batch -c "$f" -ex 'bt 12' "$exe" 2>&1 | grep -E '^#' | uniq | head -12
	done
}

# note MSG: progress line with the seconds since the test started (slow steps show in logs)
note() { echo "[${SECONDS}s] $*"; }

# Known causes outside the shims, recognised in the programs' output.
diagnose() {
	if grep -qs "MPA startup timeout" "$WN_PAIR_DIR"/a.log "$WN_PAIR_DIR"/b.log; then
		echo "DIAGNOSIS: warpnicd gave up an MPA startup (no MPA Reply within --mpa-timeout):"
		echo "  the passive program did not call rdma_accept() in time (machine overloaded?)"
	fi
	if grep -qs "Failed to connect RDMA CM events" "$T"/*.out; then
		cat <<'EOF'
DIAGNOSIS: a perftest rdma_cm connect failed. perftest 4.5 then retries with the CM ids it
  has just destroyed (rdma_cm_destroy_cma, then rdma_resolve_addr on a stale id): a
  segfault in rdma_resolve_addr() after this is perftest's, the failed connect is the error.
EOF
	fi
	if grep -qs "Couldn't post send" "$T"/*.out; then
		cat <<'EOF'
DIAGNOSIS: a perftest ibv_post_send() failed. If it found the send queue full right
  after polling the completion that should have freed a slot (ENOMEM), the dataplane
  published a send CQE before releasing its SQ slot again (lib/rnic/qp.c
  wn_rnic_complete_sq(): the slot must be released first; fixed in f28a7a5).
EOF
	fi
}

# fail MSG: report, show the logs, exit 1 (cleanup stops everything)
fail() {
	echo "FAIL: $*"
	FAILED=1
	diagnose
	show_logs
	exit 1
}

cleanup() {
	local p
	# a BG entry is often a timeout wrapper: its program (a child) dies first, as SIGKILL
	# does not pass through timeout
	for p in "${BG[@]}"; do
		pkill -KILL -P "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	"$PAIR" stop >/dev/null 2>&1
	if [ -n "${WN_INTEROP_KEEP:-}" ]; then
		echo "logs kept in $T"
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# need TOOL...: fail unless every tool is installed (scripts/setup.sh installs them)
need() {
	local t
	for t in "$@"; do
		command -v "$t" >/dev/null || missing "$t not installed (scripts/setup.sh installs it)"
	done
}

# The lower layer below DDP: WN_VERBS_LLP=sctp starts both warpnicd with --llp sctp (the
# daemon's choice), WARPNIC_LLP=sctp in the environment is the programs' own choice (the
# client library reads it); llp_check then proves the connections used DDP over SCTP.
LLP=${WARPNIC_LLP:-${WN_VERBS_LLP:-mpa}}

# pair_start [wn-pair.sh start options]: hugepages when enough are free (wn-pair.sh's
# default), stopped when this test exits however it exits (--owner)
pair_start() {
	local opts=("$@") daemon=(--mpa-timeout 20000)
	case "$WN_VERBS_IP" in
	6) opts+=(--ipv6 --no-ipv4) ;;
	46) opts+=(--ipv6) ;;
	esac
	# shellcheck disable=SC2206 # words of options, on purpose
	[ -z "${WN_VERBS_PAIR:-}" ] || opts+=($WN_VERBS_PAIR)
	[ -z "${WN_VERBS_LLP:-}" ] || daemon+=(--llp "$WN_VERBS_LLP")
	# warpnicd must not see the shim directory (meson test puts it on LD_LIBRARY_PATH): DPDK's
	# mlx5 PMD would load the stand-in libmlx5. MPA startup timeout: siw's 20 s (MPAREQ
	# timeout) rather than warpnicd's 10 s, so a server slowed down by a loaded machine still
	# accepts in time (perftest mishandles a failed connect, see diagnose()).
	env -u LD_LIBRARY_PATH "$PAIR" start --owner $$ "${opts[@]}" -- "${daemon[@]}" \
		>"$T/pair.out" 2>&1 || { cat "$T/pair.out"; fail "wn-pair.sh start failed"; }
}

# on_a / on_b PROGRAM ARGS...: run a program on instance A / B (bounded by STEP_TIMEOUT)
on_a() { timeout -k 5 "$STEP_TIMEOUT" "$RUN" --ctl "$A_CTL" --shim "$SHIM" "$@"; }
on_b() { timeout -k 5 "$STEP_TIMEOUT" "$RUN" --ctl "$B_CTL" --shim "$SHIM" "$@"; }

# bg_a NAME PROGRAM ARGS...: a server on A in the background, output in $T/NAME.out; sets
# BG_PID. Its bound outlasts the client's (started later, bounded by STEP_TIMEOUT), so a slow
# run fails as the client's timeout, not as a server killed under a running client.
bg_a() {
	local name=$1
	shift
	listens_base
	timeout -k 5 $((STEP_TIMEOUT + 20)) "$RUN" --ctl "$A_CTL" --shim "$SHIM" "$@" \
		>"$T/$name.out" 2>&1 &
	BG_PID=$!
	BG+=("$BG_PID")
}

# bg_exec a|b NAME PROGRAM ARGS...: like bg_a but without the timeout wrapper, so BG_PID is
# the program itself (warpnic-run execs it) and can be signalled; cleanup kills it
bg_exec() {
	local ctl=$A_CTL name=$2
	[ "$1" = b ] && ctl=$B_CTL
	shift 2
	"$RUN" --ctl "$ctl" --shim "$SHIM" "$@" >"$T/$name.out" 2>&1 &
	BG_PID=$!
	BG+=("$BG_PID")
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

# wait_line FILE REGEX SECS
wait_line() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# tel a|b COMMAND [KEY...]: the telemetry reply (JSON) of instance a/b, or "KEY=VALUE ..."
tel() { "$PAIR" tel "$@"; }

# tel_field a|b COMMAND KEY: one number of a telemetry dictionary
tel_field() {
	local v
	v=$("$PAIR" tel "$1" "$2" "$3") || return 1
	echo "${v#*=}"
}

# lcore_listens JSON BASE: with BASE a JSON object (lcore: listeners), the exit status says
# whether every lcore of A in JSON (a /warpnic/dp/lcores reply) installed more listeners than
# BASE gives it; with BASE "-", prints each lcore's listeners as such an object
lcore_listens() {
	python3 - "$1" "$2" <<'PY'
import json, sys
cur = {k: v['listens'] for k, v in json.loads(sys.argv[1]).items() if isinstance(v, dict)}
if sys.argv[2] == '-':
    print(json.dumps(cur))
    sys.exit(0)
base = json.loads(sys.argv[2])
sys.exit(0 if cur and all(n > base.get(k, 0) for k, n in cur.items()) else 1)
PY
}

# listens_base: the listeners A's lcores installed so far, from snapshots each published after
# this call (their loop counts moved), kept for wait_server; bg_a takes it before it starts a
# program. A base left by the previous wait_server would miss a program that listened again
# after it returned (perftest's -R server listens for its exchange, then for its QPs), and
# the next server would be taken as listening at once.
LISTENS_BASE='{}'
listens_base() {
	local first cur i
	first=$(tel a /warpnic/dp/lcores) || return 0
	cur=$first
	for ((i = 0; i < 100; i++)); do
		cur=$(tel a /warpnic/dp/lcores) || cur=$first
		python3 - "$first" "$cur" <<'PY' && break
import json, sys
a, b = (json.loads(x) for x in sys.argv[1:3])
sys.exit(0 if all(k in b and b[k]['loops'] != v['loops']
                  for k, v in a.items() if isinstance(v, dict)) else 1)
PY
		sleep 0.05
	done
	LISTENS_BASE=$(lcore_listens "$cur" -)
}

# wait_server SECS: a server program on A listens: every lcore of A's dataplane installed one
# more listener than before bg_a started it (listens_base)
wait_server() {
	local i cur
	for ((i = 0; i < $1 * 10; i++)); do
		cur=$(tel a /warpnic/dp/lcores 2>/dev/null) && lcore_listens "$cur" "$LISTENS_BASE" &&
			return 0
		sleep 0.1
	done
	return 1
}

# ip_check: with WN_VERBS_IP=6 or 46, each instance found the other by neighbour discovery
# (the peer's IPv6 address resolved to a MAC in /warpnic/dp/net, NDP messages received), its
# IPv6 addresses passed DAD, it formed a link-local address, and (6) it has no IPv4 address
# and resolved no IPv4 neighbour. With 4, nothing.
ip_check() {
	local side peer v
	[ "$WN_VERBS_IP" != 4 ] || return 0
	for side in a b; do
		peer=$B_IP
		[ $side = b ] && peer=$A_IP
		v=$(tel "$side" /warpnic/dp/net) || fail "no /warpnic/dp/net telemetry from $side"
		python3 - "$side" "$peer" "$WN_VERBS_IP" "$v" <<'PY' || fail "$side: IPv6 check"
import json, re, sys
side, peer, mode, d = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
err = []
addrs, nb = d["addrs"], d["neighbours"]
if d["addrs_tentative"] or d["addrs_duplicate"] or any(not a.endswith(" preferred") for a in addrs):
    err.append("addresses not all usable: %s" % addrs)
if not any(a.startswith("fe80:") for a in addrs):
    err.append("no link-local address: %s" % addrs)
if not any(re.fullmatch(re.escape(peer) + r" ([0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}", n) for n in nb):
    err.append("peer %s not resolved by NDP: neighbours %s" % (peer, nb))
if d["rx_ndp"] == 0 or d["dad_probes"] == 0:
    err.append("rx_ndp %d, dad_probes %d" % (d["rx_ndp"], d["dad_probes"]))
if mode == "6" and any("." in a for a in addrs + nb):
    err.append("IPv4 in an IPv6-only pair: %s %s" % (addrs, nb))
print("%s: %s; neighbours %s; rx_ndp %d, dad_probes %d" %
      (side, ", ".join(addrs), ", ".join(nb), d["rx_ndp"], d["dad_probes"]))
if err:
    sys.exit("; ".join(err))
PY
	done
}

# daemons_alive: both warpnicd still running
daemons_alive() { "$PAIR" alive; }

# llp_check: with LLP=sctp, both instances carried sessions over SCTP (RFC 5043) with no
# session error and sent no MPA FPDU; ibv_devinfo names the lower layer. Else nothing.
llp_check() {
	local side v
	[ "$LLP" = sctp ] || return 0
	for side in a b; do
		v=$(tel "$side" /warpnic/dp/stats sctp_sessions sctp_errors tx_fpdus sctp_tx_ulpdus) ||
			fail "no telemetry from $side"
		echo "$side: $v"
		local sctp_sessions= sctp_errors= tx_fpdus= sctp_tx_ulpdus=
		eval "local $v"
		[ "${sctp_sessions:-0}" -gt 0 ] && [ "${sctp_tx_ulpdus:-0}" -gt 0 ] ||
			fail "$side: no DDP over SCTP ($v)"
		[ "$sctp_errors" = 0 ] && [ "$tx_fpdus" = 0 ] ||
			fail "$side: session errors or MPA FPDUs ($v)"
	done
	on_b ibv_devinfo >"$T/devinfo.out" 2>&1 || fail "ibv_devinfo failed"
	grep -Eq 'fw_ver:.*\(sctp\)' "$T/devinfo.out" || { cat "$T/devinfo.out"; fail "ibv_devinfo does not name sctp"; }
}
