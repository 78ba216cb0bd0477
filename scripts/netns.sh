#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Test network topologies in network namespaces (addresses from 198.18.0.0/15 only,
# nothing added to the default namespace). Usable as a command or sourced (functions
# netns_*).
#
#   scripts/netns.sh create NS              new namespace with lo up
#   scripts/netns.sh delete NS              delete it (and every interface in it)
#   scripts/netns.sh tap NS IFACE ADDR/LEN [SECS]
#                                           wait for a DPDK net_tap interface (started with
#                                           iface=IFACE inside NS), give the kernel side
#                                           ADDR/LEN, IPv6 off, link up
#   scripts/netns.sh veth NS IF_A ADDR_A/LEN IF_B ADDR_B/LEN
#                                           veth pair inside NS (either address may be "-")
#   scripts/netns.sh cleanup [PREFIX]       delete namespaces named PREFIX* (default wn-)
set -euo pipefail

netns_check_addr() {
	case "$1" in
	-|198.18.*|198.19.*) return 0 ;;
	*) echo "netns.sh: $1 is not in 198.18.0.0/15" >&2; return 1 ;;
	esac
}

netns_create() {
	ip netns add "$1"
	ip -n "$1" link set lo up
}

netns_delete() {
	ip netns del "$1" 2>/dev/null || true
}

netns_tap() {
	local ns=$1 ifc=$2 addr=$3 secs=${4:-30} i
	netns_check_addr "$addr"
	for ((i = 0; i < secs * 10; i++)); do
		ip -n "$ns" link show "$ifc" >/dev/null 2>&1 && break
		sleep 0.1
	done
	ip -n "$ns" link show "$ifc" >/dev/null 2>&1 || {
		echo "netns.sh: $ifc did not appear in $ns" >&2
		return 1
	}
	ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$ifc.disable_ipv6=1" || true
	ip -n "$ns" addr add "$addr" dev "$ifc"
	ip -n "$ns" link set "$ifc" up
}

netns_veth() {
	local ns=$1 a=$2 aa=$3 b=$4 ba=$5
	netns_check_addr "$aa"
	netns_check_addr "$ba"
	ip -n "$ns" link add "$a" type veth peer name "$b"
	[ "$aa" = - ] || ip -n "$ns" addr add "$aa" dev "$a"
	[ "$ba" = - ] || ip -n "$ns" addr add "$ba" dev "$b"
	ip -n "$ns" link set "$a" up
	ip -n "$ns" link set "$b" up
}

netns_cleanup() {
	local prefix=${1:-wn-} n
	for n in $(ip netns list | awk '{print $1}'); do
		case "$n" in "$prefix"*) netns_delete "$n" ;; esac
	done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	cmd=${1:-}
	[ $# -gt 0 ] && shift
	case "$cmd" in
	create) netns_create "$@" ;;
	delete) netns_delete "$@" ;;
	tap) netns_tap "$@" ;;
	veth) netns_veth "$@" ;;
	cleanup) netns_cleanup "$@" ;;
	-h|--help|"") sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' ;;
	*) echo "netns.sh: unknown command '$cmd' (see --help)" >&2; exit 2 ;;
	esac
fi
