#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Instructions per packet of lib/net + lib/tcp for TCP bulk send and receive, counted by
# callgrind (repeatable on a loaded machine, unlike wall-clock figures): wn-tcp-loop moves
# WN_COST_BYTES (default 16 MiB) between two stacks in one process, and the inclusive
# instruction counts of its send_side() and recv_side() are divided by the data segments
# (1448 octets each at MTU 1500). One row per checksum mode (lib/net's enum wn_net_cksum):
# software (af_packet, tap, a NIC without offload) and local (memif, the default there).
# Reports numbers; fails only when a run fails.
#
#   tcp_cost.sh BUILD_DIR [MODE...]     (modes: software local; default both)
set -uo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR [MODE...]}" && pwd)
shift
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(software local)
loop=$build/test/bench/tcp/wn-tcp-loop
bytes=${WN_COST_BYTES:-16777216}
[ -x "$loop" ] || { echo "FAIL: missing prerequisite: wn-tcp-loop not built"; exit 1; }
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
	{ echo "FAIL: missing prerequisite: valgrind (scripts/setup.sh installs it)"; exit 1; }
t=$(mktemp -d /tmp/wn-cost.XXXXXX)
trap 'rm -rf "$t"' EXIT

incl() { # FILE SYMBOL: inclusive Ir of SYMBOL
	callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
		awk -v s=":$2 " 'index($0, s) { gsub(",", "", $1); print $1; exit }'
}

printf '%-9s %12s %12s %10s %10s\n' mode bytes segments send_ir rcv_ir
json="["
for m in "${modes[@]}"; do
	valgrind --tool=callgrind --callgrind-out-file="$t/$m.cg" "$loop" --bytes "$bytes" \
		--cksum "$m" >"$t/$m.out" 2>"$t/$m.err" ||
		{ cat "$t/$m.out" "$t/$m.err"; echo "FAIL: wn-tcp-loop --cksum $m"; exit 1; }
	segs=$(sed -nE 's/.* sender_segs ([0-9]+).*/\1/p' "$t/$m.out")
	s=$(incl "$t/$m.cg" send_side)
	r=$(incl "$t/$m.cg" recv_side)
	[ -n "$segs" ] && [ -n "$s" ] && [ -n "$r" ] ||
		{ cat "$t/$m.out"; echo "FAIL: no figures for $m"; exit 1; }
	printf '%-9s %12s %12s %10d %10d\n' "$m" "$bytes" "$segs" $((s / segs)) $((r / segs))
	json+="$([ "$json" = "[" ] || echo ,){\"mode\":\"$m\",\"bytes\":$bytes,\"segments\":$segs,"
	json+="\"send_ir_per_segment\":$((s / segs)),\"recv_ir_per_segment\":$((r / segs))}"
done
echo "$json]"
