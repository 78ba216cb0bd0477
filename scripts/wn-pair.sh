#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The one place that starts and stops two warpnicd (A and B) joined by a link; every script
# that needs a pair (tests, benchmarks, the demo) uses it.
#
#   scripts/wn-pair.sh [--dir DIR] start [OPTIONS] [-- WARPNICD-OPTS...]
#   scripts/wn-pair.sh [--dir DIR] stop            stop both (status 1 if one failed)
#   scripts/wn-pair.sh [--dir DIR] restart a|b [WARPNICD-OPTS...]
#                      stop one and start it again (same options, these added)
#   scripts/wn-pair.sh [--dir DIR] env             print the shell variables below
#   scripts/wn-pair.sh [--dir DIR] alive           status 0 when both are running
#   scripts/wn-pair.sh [--dir DIR] tel a|b COMMAND [KEY...]
#                      telemetry (scripts/wn-tel.py): the reply as JSON, or "KEY=VALUE ..."
#   scripts/wn-pair.sh [--dir DIR] logs [LINES]    the tail of both logs (default 40 lines)
#
#   A: control socket DIR/a.sock, IP 198.19.0.1/24, memif server, device wn_a
#   B: control socket DIR/b.sock, IP 198.19.0.2/24, memif client, device wn_b
#   with --ipv6 also fd77:6e::1/64 (A) and fd77:6e::2/64 (B), plus the link-local address
#   each warpnicd forms itself; env prints WN_A_IP6/WN_B_IP6 (empty without --ipv6) and,
#   with --link af_packet, WN_A_NETNS/WN_A_IFACE and WN_B_NETNS/WN_B_IFACE (the kernel's
#   side of each daemon's interface)
#   DIR (the pair directory, one per caller) is --dir, else $WN_PAIR_DIR, else /tmp/wn-pair;
#   logs in DIR/{a,b}.log. Start options:
#   --lcores N      N dataplane lcores (port queues) per instance (default 1)
#   --impair SPEC   wrap B's port with the fault injector, e.g. drop=0.01,reorder=0.01
#   --pcap DIR      each instance writes DIR/{a,b}.pcapng
#   --zero-copy off|on|all|staged|ref   --zero-copy-tx off / on / on with --zero-copy-min 0 /
#                   off with --tx-staged on (every FPDU copied through a staging buffer, the
#                   default) / off with --tx-staged off (registered memory by reference)
#   --config FILE   both instances read FILE (warpnicd --config)
#   --a-opt OPT, --b-opt OPT  one more warpnicd option word for A or B only (repeatable)
#   --link memif|af_packet    memif (default), or net_af_packet on a veth pair between two
#                   network namespaces made for the pair (needs root)
#   --huge auto|yes|no  hugepages (/dev/hugepages) or --no-huge; auto (default): hugepages
#                   when 400 pages are free; --no-huge is --huge no
#   --mem MB        EAL memory per instance (default 256)
#   --owner PID     stop the pair when process PID exits (however it exits)
#   --timeout S     how long to wait for each instance to serve (default 30)
#   --b-first       start B (the memif client) before A: B serves with its link down
#                   until A's memif server appears
#   --ipv6          give both an IPv6 address too (dual stack); with --link af_packet the
#                   namespaces' veth keep the kernel's IPv6 (its link-local, DAD, MLD and
#                   router solicitations reach warpnicd as on a host's NIC)
#   --no-ipv4       no IPv4 address (with --ipv6: IPv6 only; WN_A_IP/WN_B_IP are empty)
#   Start returns once both serve their control sockets, both ports report link up and
#   (--ipv6) Duplicate Address Detection has made every IPv6 address of both usable;
#   a failed start prints both logs and leaves nothing running.
#   WN_BUILD        build directory (default build/ next to this script)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
self=$top/scripts/wn-pair.sh
dir=${WN_PAIR_DIR:-/tmp/wn-pair}
if [ "${1:-}" = --dir ]; then
	dir=${2:?--dir DIR}
	shift 2
fi
case "$dir" in /*) ;; *) dir=$PWD/$dir ;; esac
build=${WN_BUILD:-$top/build}
bin=$build/app/warpnicd/warpnicd
# EAL runtime files, namespaces and interfaces are named after the directory, so several
# pairs (parallel tests) can run at once
tag=$(printf '%s' "$dir" | cksum | cut -d' ' -f1)

usage() { sed -n '3,45p' "$self" | sed 's/^# \{0,1\}//'; }

eal_dir() { echo "/var/run/dpdk/wn_${1}_$tag"; }

# the families a started pair has (DIR/families: "4", "6" or "4 6"; "4" if absent)
has_family() {
	[ -f "$dir/families" ] || { [ "$1" = 4 ]; return; }
	grep -qw "$1" "$dir/families"
}

print_env() {
	local a4= b4= a6= b6=
	has_family 4 && { a4=198.19.0.1; b4=198.19.0.2; }
	has_family 6 && { a6=fd77:6e::1; b6=fd77:6e::2; }
	local ans= ai= bns= bi=
	[ -f "$dir/netns" ] && { ans=wnp-a-$tag ai=wnpa$tag bns=wnp-b-$tag bi=wnpb$tag; }
	cat <<EOF
WN_PAIR_DIR=$dir
WN_A_CTL=$dir/a.sock
WN_B_CTL=$dir/b.sock
WN_A_IP=$a4
WN_B_IP=$b4
WN_A_IP6=$a6
WN_B_IP6=$b6
WN_A_NETNS=$ans
WN_A_IFACE=$ai
WN_B_NETNS=$bns
WN_B_IFACE=$bi
WN_A_TEL=$(eal_dir a)/dpdk_telemetry.v2
WN_B_TEL=$(eal_dir b)/dpdk_telemetry.v2
EOF
}

running() { # a|b
	local pid
	pid=$(cat "$dir/$1.pid" 2>/dev/null) || return 1
	kill -0 "$pid" 2>/dev/null
}

show_logs() { # [LINES]
	local f
	for f in "$dir/a.log" "$dir/b.log"; do
		[ -s "$f" ] || continue
		echo "----- $f (last ${1:-40} lines)"
		tail -n "${1:-40}" "$f"
	done
}

# stop: SIGTERM, 20 s to exit (a loaded 2-core machine stretches a clean shutdown well past
# 5 s), then SIGKILL; status 1 if an instance had to be killed or
# exited with a non-zero status (its shutdown failed, or it had crashed before)
stop() {
	local n pid rc=0 st lpid
	rm -f "$dir/owner.id" # the watcher of this pair leaves
	for n in a b; do
		[ -f "$dir/$n.pid" ] || continue
		pid=$(cat "$dir/$n.pid")
		if kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid" 2>/dev/null || true
			for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			if kill -0 "$pid" 2>/dev/null; then
				kill -KILL "$pid" 2>/dev/null || true
				echo "wn-pair: warpnicd $n did not stop within 20 s: killed" >&2
				rc=1
			fi
		fi
		# the exit status, written by the process that started it
		for _ in $(seq 100); do [ -s "$dir/$n.rc" ] && break; sleep 0.1; done
		st=$(cat "$dir/$n.rc" 2>/dev/null || echo "?")
		if [ "$st" = "?" ]; then
			# seen once beside a CPU hog (issue 15): say what is left to find out why
			lpid=$(cat "$dir/$n.lpid" 2>/dev/null || echo "?")
			echo "wn-pair: warpnicd $n (pid $pid) left no exit status; its launcher (pid" \
				"$lpid) is $(kill -0 "$lpid" 2>/dev/null && echo alive || echo gone)" \
				"$(ps -o pid=,stat=,comm= -p "$pid" -p "$lpid" 2>/dev/null | tr '\n' ';')" >&2
		fi
		if [ "$st" != 0 ] && [ "$rc" = 0 ]; then
			echo "wn-pair: warpnicd $n exited with status $st" >&2
			rc=1
		fi
		rm -f "$dir/$n.pid" "$dir/$n.cmd" "$dir/$n.lpid"
	done
	rm -f "$dir/memif.sock"
	if [ -f "$dir/netns" ]; then
		for n in $(cat "$dir/netns"); do ip netns del "$n" 2>/dev/null || true; done
		rm -f "$dir/netns"
	fi
	rm -rf "$(eal_dir a)" "$(eal_dir b)"
	return $rc
}

tel() { # a|b COMMAND [KEY...]
	local n=${1:?a|b}
	shift
	python3 "$top/scripts/wn-tel.py" "$(eal_dir "$n")/dpdk_telemetry.v2" "$@"
}

wait_ready() { # a|b SECONDS
	local n=$1 i
	for ((i = 0; i < $2 * 10; i++)); do
		if ! running "$n"; then
			echo "wn-pair: warpnicd $n exited (status $(cat "$dir/$n.rc" 2>/dev/null))" >&2
			return 1
		fi
		grep -q "warpnicd: serving" "$dir/$n.log" 2>/dev/null && [ -S "$dir/$n.sock" ] &&
			return 0
		sleep 0.1
	done
	echo "wn-pair: warpnicd $n not serving after $2 s" >&2
	return 1
}

# both ports report link up (memif: once client and server met; the impairer follows its port)
# and the shards use it (a memif client's link watcher opened its gate)
wait_link() { # SECONDS
	local n i st
	for n in a b; do
		for ((i = 0; i < $1 * 10; i++)); do
			st=$(tel "$n" /warpnic/dp/port link gate 2>/dev/null) || st=
			case "$st" in "link=up gate=open"|"link=up gate=none") break ;; esac
			running "$n" || { echo "wn-pair: warpnicd $n exited" >&2; return 1; }
			sleep 0.1
		done
		case "$st" in
		"link=up gate=open"|"link=up gate=none") ;;
		*) echo "wn-pair: port of $n not up after $1 s (${st:-no telemetry})" >&2; return 1 ;;
		esac
	done
}

# every IPv6 address of both passed Duplicate Address Detection (none tentative); a
# duplicate one fails the start
wait_dad() { # SECONDS
	local n i st
	for n in a b; do
		for ((i = 0; i < $1 * 10; i++)); do
			st=$(tel "$n" /warpnic/dp/net addrs_tentative addrs_duplicate 2>/dev/null) ||
				st=
			case "$st" in *_duplicate=[1-9]*|"addrs_tentative=0 "*) break ;; esac
			running "$n" || { echo "wn-pair: warpnicd $n exited" >&2; return 1; }
			sleep 0.1
		done
		case "$st" in
		"addrs_tentative=0 addrs_duplicate=0") ;;
		*) echo "wn-pair: IPv6 addresses of $n not usable after $1 s" \
			"(${st:-no telemetry}): $(tel "$n" /warpnic/dp/net addrs 2>/dev/null)" >&2
			return 1 ;;
		esac
	done
}

# watch OWNER ID: stop the pair when OWNER exits, unless the pair was stopped or restarted
watch_owner() {
	local owner=$1 id=$2
	while kill -0 "$owner" 2>/dev/null; do
		[ "$(cat "$dir/owner.id" 2>/dev/null)" = "$id" ] || exit 0
		sleep 1
	done
	[ "$(cat "$dir/owner.id" 2>/dev/null)" = "$id" ] || exit 0
	"$self" --dir "$dir" stop
}

start() {
	local lcores=1 impair="" pcap="" huge=auto mem=256 link=memif owner="" secs=30 order="a b"
	local ip4=1 ip6=0
	local common=() a_opts=() b_opts=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--lcores) lcores=$2; shift 2 ;;
		--impair) impair=$2; shift 2 ;;
		--pcap) pcap=$2; shift 2 ;;
		--zero-copy)
			case "$2" in
			off|on) common+=(--zero-copy-tx "$2") ;;
			all) common+=(--zero-copy-tx on --zero-copy-min 0) ;;
			staged) common+=(--zero-copy-tx off --tx-staged on) ;;
			ref) common+=(--zero-copy-tx off --tx-staged off) ;;
			*) echo "wn-pair: --zero-copy off|on|all|staged|ref" >&2; exit 2 ;;
			esac
			shift 2 ;;
		--config) common+=(--config "$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
		--a-opt) a_opts+=("$2"); shift 2 ;;
		--b-opt) b_opts+=("$2"); shift 2 ;;
		--link) link=$2; shift 2 ;;
		--huge) huge=$2; shift 2 ;;
		--no-huge) huge=no; shift ;;
		--mem) mem=$2; shift 2 ;;
		--owner) owner=$2; shift 2 ;;
		--timeout) secs=$2; shift 2 ;;
		--b-first) order="b a"; shift ;;
		--ipv6) ip6=1; shift ;;
		--no-ipv4) ip4=0; shift ;;
		--) shift; common+=("$@"); break ;;
		*) echo "wn-pair: unknown option $1" >&2; exit 2 ;;
		esac
	done
	[ -x "$bin" ] || { echo "wn-pair: $bin not built (ninja -C $build)" >&2; exit 2; }
	case "$link" in memif|af_packet) ;; *) echo "wn-pair: --link memif|af_packet" >&2; exit 2 ;; esac
	[ $ip4 = 1 ] || [ $ip6 = 1 ] || { echo "wn-pair: --no-ipv4 wants --ipv6" >&2; exit 2; }
	mkdir -p "$dir"
	stop >/dev/null 2>&1 || true
	rm -f "$dir/a.rc" "$dir/b.rc" "$dir/a.log" "$dir/b.log"
	{ [ $ip4 = 0 ] || printf '4 '; [ $ip6 = 0 ] || printf '6'; echo; } >"$dir/families"

	local eal_mem=()
	if [ "$huge" = auto ]; then
		local free
		free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
		if grep -q "^[^ ]* /dev/hugepages hugetlbfs" /proc/mounts && [ "${free:-0}" -ge 400 ]
		then huge=yes; else huge=no; fi
	fi
	case "$huge" in
	yes) eal_mem=(--huge-dir /dev/hugepages --huge-unlink -m "$mem") ;;
	no) eal_mem=(--no-huge -m "$mem") ;;
	*) echo "wn-pair: --huge auto|yes|no" >&2; exit 2 ;;
	esac

	# the watcher starts first, so a caller killed while the pair starts leaves nothing
	# either; its own session survives a kill of the caller's process group
	if [ -n "$owner" ]; then
		local id="$owner.$$.$RANDOM"
		echo "$id" >"$dir/owner.id"
		setsid "$self" --dir "$dir" watch "$owner" "$id" </dev/null >/dev/null 2>&1 &
	fi

	if [ "$link" = af_packet ]; then
		local ifc
		echo "wnp-a-$tag wnp-b-$tag" >"$dir/netns"
		ip netns add "wnp-a-$tag" && ip netns add "wnp-b-$tag" &&
			ip link add "wnpa$tag" netns "wnp-a-$tag" type veth peer name "wnpb$tag" \
				netns "wnp-b-$tag" ||
			{ echo "wn-pair: cannot make namespaces and a veth pair (root?)" >&2; stop; exit 1; }
		for n in a b; do
			ifc=wnp$n$tag
			# without --ipv6 the kernel's own IPv6 traffic on the veth (DAD, MLD, router
			# solicitations) is kept off the link; with it, it stays, as on a host's NIC
			[ $ip6 = 1 ] || ip netns exec "wnp-$n-$tag" \
				sysctl -qw "net.ipv6.conf.$ifc.disable_ipv6=1" || true
			ip -n "wnp-$n-$tag" link set "$ifc" up
			ip -n "wnp-$n-$tag" link set lo up
		done
	fi

	local n role host mac cpu vdevs pcap_opt pre side_opts lmap i ips
	for n in a b; do
		if [ $n = a ]; then
			role=server host=1 mac=02:77:6e:00:00:01 cpu=0 side_opts=("${a_opts[@]}")
		else
			role=client host=2 mac=02:77:6e:00:00:02 side_opts=("${b_opts[@]}")
			cpu=$(( $(nproc) > 1 ? 1 : 0 ))
		fi
		ips=()
		[ $ip4 = 0 ] || ips+=(--ip "198.19.0.$host/24")
		[ $ip6 = 0 ] || ips+=(--ip "fd77:6e::$host/64")
		pre=()
		if [ "$link" = memif ]; then
			vdevs=(--vdev "net_memif0,role=$role,id=0,socket=$dir/memif.sock,socket-abstract=no,mac=$mac")
			[ $n = b ] && [ -n "$impair" ] &&
				vdevs+=(--vdev "net_wn_impair0,port=net_memif0,queues=$lcores,$impair")
		else
			pre=(ip netns exec "wnp-$n-$tag")
			vdevs=(--vdev "net_af_packet0,iface=wnp$n$tag,qpairs=$lcores")
			[ $n = b ] && [ -n "$impair" ] &&
				vdevs+=(--vdev "net_wn_impair0,port=net_af_packet0,queues=$lcores,$impair")
		fi
		pcap_opt=()
		[ -n "$pcap" ] && { mkdir -p "$pcap"; pcap_opt=(--pcap "$pcap/$n.pcapng"); }
		# N lcores each (--idle sleep by default: idle lcores sleep, programs get CPU time); lcore i
		# of instance b runs on CPU (i+1) mod nproc, of a on CPU i mod nproc
		lmap=""
		for ((i = 0; i < lcores; i++)); do
			lmap+="${lmap:+,}$i@$(( (i + cpu) % $(nproc) ))"
		done
		# the command line, kept for restart
		printf '%q ' "${pre[@]}" "$bin" --lcores "$lmap" --file-prefix "wn_${n}_$tag" \
			--proc-type primary --no-pci "${eal_mem[@]}" --log-level lib.eal:error \
			"${vdevs[@]}" -- "${ips[@]}" --ctl "$dir/$n.sock" --name "wn_$n" \
			"${pcap_opt[@]}" "${common[@]}" "${side_opts[@]}" >"$dir/$n.cmd"
	done
	echo "$secs" >"$dir/timeout"
	for n in $order; do
		launch $n
		wait_ready $n "$secs" || { show_logs 20 >&2; stop >/dev/null 2>&1; exit 1; }
	done
	wait_link "$secs" || { show_logs 20 >&2; stop >/dev/null 2>&1; exit 1; }
	[ $ip6 = 0 ] || wait_dad "$secs" || { show_logs 20 >&2; stop >/dev/null 2>&1; exit 1; }
	print_env
}

# launch a|b: start the instance's command line (DIR/N.cmd); a subshell starts it and keeps
# its exit status (for stop); none of it holds the caller's output open
launch() {
	local n=$1
	rm -f "$dir/$n.rc" "$dir/$n.pid" "$dir/$n.lpid"
	(
		echo "$BASHPID" >"$dir/$n.lpid"
		eval "exec $(cat "$dir/$n.cmd")" >"$dir/$n.log" 2>&1 &
		echo $! >"$dir/$n.pid"
		st=0
		wait $! || st=$?
		echo $st >"$dir/$n.rc"
	) </dev/null >/dev/null 2>&1 &
	for _ in $(seq 50); do [ -s "$dir/$n.pid" ] && break; sleep 0.1; done
}

# restart a|b [OPTS...]: stop one instance (SIGTERM, then SIGKILL after 5 s) and start it
# again with the same command line (OPTS appended to it, and kept for later restarts);
# returns once it serves, both links are up again and (--ipv6) its DAD passed
restart() {
	local n=${1:-} pid secs
	case "$n" in a|b) ;; *) echo "wn-pair: restart a|b" >&2; exit 2 ;; esac
	[ -f "$dir/$n.cmd" ] || { echo "wn-pair: no pair started in $dir" >&2; exit 1; }
	shift
	[ $# -eq 0 ] || printf '%q ' "$@" >>"$dir/$n.cmd"
	secs=$(cat "$dir/timeout" 2>/dev/null || echo 30)
	pid=$(cat "$dir/$n.pid" 2>/dev/null || true)
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	for _ in $(seq 50); do [ -s "$dir/$n.rc" ] && break; sleep 0.1; done
	mv -f "$dir/$n.log" "$dir/$n.log.1" 2>/dev/null || true
	# DPDK 22.11's memif server leaves its socket file behind and will not bind over it
	[ "$n" = b ] || rm -f "$dir/memif.sock"
	rm -rf "$(eal_dir "$n")"
	launch "$n"
	wait_ready "$n" "$secs" && wait_link "$secs" || { show_logs 20 >&2; exit 1; }
	! has_family 6 || wait_dad "$secs" || { show_logs 20 >&2; exit 1; }
}

case "${1:-}" in
start) shift; start "$@" ;;
stop) stop ;;
restart) shift; restart "$@" ;;
env) print_env ;;
alive) running a && running b ;;
tel) shift; tel "$@" ;;
logs) show_logs "${2:-40}" ;;
watch) trap '' HUP INT TERM; watch_owner "$2" "$3" ;; # start --owner's watcher (internal)
-h|--help) usage ;;
*) usage >&2; exit 2 ;;
esac
