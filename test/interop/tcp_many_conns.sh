#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# ~1000 concurrent kernel connections to a wn-tcpapp echo server; each sends random data,
# half-closes and checks the echo octet for octet. If it fails, the connection table,
# listener backlog or per-connection buffering breaks under many flows.
#
#   tcp_many_conns.sh BUILD_DIR      (WN_INTEROP_CONNS, default 1000; WN_INTEROP_CONN_BYTES,
#                                     default 16384)
. "$(dirname "$0")/lib.sh" "$1"
conns=${WN_INTEROP_CONNS:-1000}
each=${WN_INTEROP_CONN_BYTES:-16384}
echo "case: $conns concurrent connections, $each bytes each, echoed"

start_app app --mode echo --ip "$WN_IP/24" --listen 7 --conns "$conns" --quiet \
	--max-conns "$((conns * 2))" --buf 65536 --timeout "$CASE_TIMEOUT"
wait_line "$T/app.out" listening 30 || fail "echo server did not start"
krc=0
kns timeout "$CASE_TIMEOUT" python3 "$KPEER" echo-many "$WN_IP" 7 "$conns" "$each" \
	>"$T/kpeer.out" 2>"$T/kpeer.err" || krc=$?
rc=0
wait_pid "$APP_PID" 60 || rc=$?
cat "$T/kpeer.out"
grep -E '^(echo|tcp|port):' "$T/app.out"
[ "$krc" = 0 ] || { tail -5 "$T/kpeer.err"; fail "kernel clients: not every echo came back intact (exit $krc)"; }
[ "$rc" = 0 ] || fail "wn-tcpapp exit status $rc"
done_n=$(field "$T/app.out" '^echo: conns' done)
[ "$done_n" = "$conns" ] || fail "server finished $done_n connections, expected $conns"
echo "PASS: $conns connections echoed"
