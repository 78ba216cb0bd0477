#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The shims export the whole ABI of the installed rdma-core (Debian 12: rdma-core 44):
#   abi.sh BUILD_DIR
# For libibverbs.so.1, librdmacm.so.1 and the stand-in provider libraries (libmlx5.so.1,
# libmlx4.so.1, libefa.so.1, libmana.so.1: what perftest, pyverbs, UCX, libfabric and DPDK
# link), every (version node, symbol) the system library exports, default or compat (objdump
# -T shows compat versions in parentheses), must be exported the same way by ours; the shims
# may export more (their own WARPNIC_* nodes), the stand-ins nothing more. Breaks when a
# stanza or a symbol goes missing, or a default version becomes a compat one: a program
# linked against the real library would then fail to load (every Debian RDMA binary is
# linked BIND_NOW). No daemon needed.
set -u
build=$(cd "${1:?usage: abi.sh BUILD_DIR}" && pwd)
command -v objdump >/dev/null || { echo "FAIL: objdump (binutils) not installed"; exit 1; }
libdir=$(dirname "$(ldconfig -p | awk '/libibverbs\.so\.1 / {print $NF; exit}')")
fail=0
exports() {
	objdump -T "$1" | awk '$0 !~ /\*UND\*/ && NF >= 7 && $(NF-1) ~ /^\(?[A-Z]/ {print $(NF-1), $NF}' |
		sort -u
}
for lib in verbs/libibverbs.so.1 rdmacm/librdmacm.so.1 verbs/libmlx5.so.1 verbs/libmlx4.so.1 \
	verbs/libefa.so.1 verbs/libmana.so.1; do
	sys=$libdir/$(basename "$lib")
	[ -e "$sys" ] || { echo "FAIL: $sys not installed (scripts/setup.sh installs rdma-core)"; fail=1; continue; }
	[ -e "$build/drivers/$lib" ] || { echo "FAIL: $build/drivers/$lib not built"; fail=1; continue; }
	missing=$(comm -23 <(exports "$sys") <(exports "$build/drivers/$lib"))
	extra=$(comm -13 <(exports "$sys") <(exports "$build/drivers/$lib"))
	n=$(exports "$sys" | wc -l)
	if [ -n "$missing" ]; then
		echo "FAIL: $(basename "$lib") lacks $(echo "$missing" | wc -l) of the $n exports of $sys:"
		echo "$missing" | sed 's/^/  /'
		fail=1
	elif [ "${lib#verbs/libibverbs}" = "$lib" ] && [ "${lib#rdmacm/}" = "$lib" ] && [ -n "$extra" ]; then
		echo "FAIL: the stand-in $(basename "$lib") exports what $sys does not:"
		echo "$extra" | sed 's/^/  /'
		fail=1
	else
		echo "$(basename "$lib"): all $n exports of $sys (every version node)"
	fi
done
[ $fail -eq 0 ] && echo "PASS" || exit 1
