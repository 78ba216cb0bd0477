#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Malformed RPC-over-RDMA peers between two warpnicd (rpc_badpeer.c lists the cases):
#   badpeer.sh BUILD_DIR RPC_BADPEER
# 1. rpc_badpeer --attack (B) against wn-rpc-blob --server --credits 2 (A): every malformed
#    header gets RDMA_ERROR or silence as RFC 8166 §4.5 says, invalid chunks and a credit
#    overrun close their connection, no octet lands outside a registration, RDMA_MSGP calls
#    (padded ECHOs) are answered with their octets intact; afterwards the same server still
#    passes wn-rpc-blob --test.
# 2. rpc_badpeer --hostile (A) against lib/rpcrdma's client (rpc_badpeer --victim, B).
. "$(dirname "$0")/../../interop/verbs/pair_lib.sh" "$1"
BAD=${2:?usage: $0 BUILD_DIR RPC_BADPEER}
BLOB=$WN_BUILD/app/bin/wn-rpc-blob
[ -x "$BLOB" ] && [ -x "$BAD" ] || fail "wn-rpc-blob or rpc_badpeer not built"

pair_start
bg_exec a server "$BLOB" --server "$A_IP" --credits 2 --store-mb 16 --blob-mb 4
SRV=$BG_PID
wait_line "$T/server.out" "serving BLOB_PROG" 20 || fail "blob server did not start"
on_b "$BAD" --attack "$A_IP" >"$T/attack.out" 2>&1 || fail "attack: $(grep FAIL "$T/attack.out")"
on_b "$BLOB" --client "$A_IP" --test --size 1m --io 256k --depth 2 --credits 2 \
	>"$T/client.out" 2>&1 || fail "the server does not serve after the attack"
kill -INT "$SRV" 2>/dev/null
wait_pid "$SRV" 60
rc=$?
[ $rc -eq 0 ] || fail "blob server: exit status $rc"
srv=$(grep '^server:' "$T/server.out") || fail "server printed no statistics"
grep -Eq ' disconnects [1-9]' <<<"$srv" || fail "no connection closed for the overrun: $srv"
grep -Eq ' rdma_errors_sent ([89]|[1-9][0-9])' <<<"$srv" || fail "too few RDMA_ERRORs: $srv"

bg_exec a hostile "$BAD" --hostile "$A_IP"
HOS=$BG_PID
wait_line "$T/hostile.out" "listening" 20 || fail "hostile server did not start"
on_b "$BAD" --victim "$A_IP" >"$T/victim.out" 2>&1 || fail "victim: $(grep FAIL "$T/victim.out")"
wait_pid "$HOS" 20 || fail "hostile server did not finish"
daemons_alive || fail "a warpnicd died"
cat "$T/attack.out" "$T/victim.out"
echo "$srv"
