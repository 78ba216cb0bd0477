#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The sample RPC-over-RDMA service (wn-rpc-blob, lib/rpcrdma) between two warpnicd:
#   blob.sh BUILD_DIR CASE
# Server on A, `wn-rpc-blob --client --test` on B: NULL calls, WRITE of SIZE octets (read
# chunks), READ back (write chunks) compared octet for octet, LIST, ECHO as a Short message,
# a Long Call with a reply chunk, a Long Call whose long reply comes by read chunk (RDMA_DONE)
# and 200 KiB, RPC-level errors, REMOVE. Passes when the client prints PASS and the server
# closed no connection for a protocol violation. Cases:
#   default   1024-octet inline thresholds (RFC 5666), memory windows, 8 MiB
#   linux     Linux's parameters: inline 4096, client asks 128 credits, server grants 64
#   pool      pool registration (no memory windows), unregistered buffers (bounce copies)
#   nocp      no RFC 8797 private data; server without long replies by read chunk (the
#             client gets RDMA_ERROR ERR_CHUNK for that ECHO), 100000-octet calls
#   impaired  B's port drops 1 % of frames: WN_RPC_IMPAIR_BYTES (64 MiB) byte-exact
#   mixed     inline thresholds that differ by side and direction (RFC 8797): the server
#             receives 1024 and sends up to 4096, the client sends up to 4096 and receives
#             2048; each side must keep to the other's receive size (calls over 1024 go
#             long, replies over 2048 by chunk), so the client connects with inline call
#             1024 reply 2048
#   credits   16 calls outstanding (--depth 16, 32 credits asked) against a server granting
#             4: the client keeps at most 4 in flight (its and the server's max_outstanding),
#             the rest wait their turn, every call completes, no overrun (disconnects 0)
# Breaks if chunk marshalling, credits, invalidation, long messages or the transport's
# recovery from TCP loss through warpnic break.
. "$(dirname "$0")/../../interop/verbs/pair_lib.sh" "$1"
CASE=${2:-default}
BLOB=$WN_BUILD/app/bin/wn-rpc-blob
[ -x "$BLOB" ] || fail "wn-rpc-blob not built (needs libtirpc-dev, rpcsvc-proto)"

# the store holds the test's blob (registered memory is copied into warpnicd's memfd: keep
# it small on a shared machine)
pair=() sopts=(--store-mb 16 --blob-mb 12) copts=()
case "$CASE" in
default) copts=(--size 8m) ;;
linux) sopts+=(--inline 4096 --credits 64); copts=(--inline 4096 --credits 128 --size 8m) ;;
pool) sopts+=(--reg pool); copts=(--reg pool --no-reg --size 4m --io 256k) ;;
nocp) sopts+=(--no-cp --no-read-reply); copts=(--no-cp --no-read-reply --size 2m --io 100000) ;;
mixed)
	sopts+=(--inline-recv 1024 --inline-send 4096)
	copts=(--inline-send 4096 --inline-recv 2048 --size 2m) ;;
credits) sopts+=(--credits 4); copts=(--credits 32 --depth 16 --size 4m --io 64k) ;;
impaired)
	bytes=${WN_RPC_IMPAIR_BYTES:-64m}
	mb=$(( $(numfmt --from=iec "${bytes^^}") >> 20 ))
	pair=(--impair drop=0.01,seed=5)
	sopts=(--store-mb $((mb + 8)) --blob-mb $((mb + 4)))
	copts=(--size "$bytes") ;;
*) fail "unknown case $CASE" ;;
esac

pair_start "${pair[@]}"
bg_exec a server "$BLOB" --server "$A_IP" "${sopts[@]}"
SRV=$BG_PID
wait_line "$T/server.out" "serving BLOB_PROG" 20 || fail "blob server did not start"
note "client: ${copts[*]}"
on_b "$BLOB" --client "$A_IP" --test "${copts[@]}" >"$T/client.out" 2>&1
rc=$?
kill -INT "$SRV" 2>/dev/null
wait_pid "$SRV" 60
src=$?
[ $src -eq 0 ] || fail "blob server: exit status $src after SIGINT"
[ $rc -eq 0 ] && grep -q '^PASS' "$T/client.out" || fail "client: exit status $rc"
srv=$(grep '^server:' "$T/server.out") || fail "server printed no statistics"
grep -q ' disconnects 0 ' <<<"$srv" || fail "server closed a connection: $srv"
if [ "$CASE" = mixed ]; then
	con=$(grep '^connected:' "$T/client.out")
	grep -q ' inline call 1024 reply 2048,' <<<"$con" ||
		fail "thresholds not negotiated to call 1024 reply 2048: $con"
fi
if [ "$CASE" = credits ]; then
	cli=$(grep '^client:' "$T/client.out") || fail "client printed no statistics"
	grep -q ' credits 4 ' <<<"$cli" || fail "client was not granted 4 credits: $cli"
	for l in "$cli" "$srv"; do
		m=$(sed -n 's/.* max_outstanding \([0-9]*\) .*/\1/p' <<<"$l")
		[ -n "$m" ] && [ "$m" -ge 1 ] && [ "$m" -le 4 ] ||
			fail "max_outstanding ${m:-?} outside 1..4 (grant of 4): $l"
	done
fi
daemons_alive || fail "a warpnicd died"
grep -E '^(ok|client|PASS)' "$T/client.out"
echo "$srv"
