#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run warpnic-perf network modes as server + client and print the client's results as one
# JSON object on stdout (for check-json.py). Several modes of one kind run in turn and their
# rows are merged; "mode" is their names joined by "+".
#
#   perf_pair.sh BUILD_DIR raw  MODE[,MODE...] [CLIENT OPTIONS...]
#       two warpnic-perf processes with EAL, joined by net_memif (lcores 0 and 1)
#   perf_pair.sh BUILD_DIR rnic MODE[,MODE...] [CLIENT OPTIONS...]
#       two warpnicd on memif (scripts/wn-pair.sh); the server is a client of B, the
#       client a client of A connecting to B's address
#   perf_pair.sh BUILD_DIR emb  MODE[,MODE...] [CLIENT OPTIONS...]
#       two warpnic-perf processes, each with an embedded dataplane (--ip: warpnicd's
#       dataplane on a worker lcore, the benchmark on the main lcore), joined by net_memif
#       like two hosts running perftest
#   perf_pair.sh BUILD_DIR emb1 MODE[,MODE...] [CLIENT OPTIONS...]
#       the same with one lcore each (dataplane on the main lcore, benchmark on a thread)
#   perf_pair.sh BUILD_DIR rtc  MODE[,MODE...] [CLIENT OPTIONS...]
#       run to completion (--rtc): one lcore each runs the dataplane shard and the benchmark
#       in one loop, the RNIC driven in-process (no control thread, no lib/client)
# Exit status: 0, 1 when a run fails or a program is not built.
# Logs: $WN_BENCH_KEEP set keeps the temporary directory.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: $0 BUILD_DIR raw|rnic MODES [OPTIONS]}" && pwd)
kind=${2:?kind}
modes=${3:?modes}
shift 3
perf=$build/app/bin/warpnic-perf
missing() { echo "FAIL: missing prerequisite: $*" >&2; exit 1; }
[ -x "$perf" ] || missing "warpnic-perf not built"
if { [ "${kind%1}" = emb ] || [ "$kind" = rtc ]; } && [ ! -f "$build/lib/libwn_dp.a" ]; then
	missing "warpnic-perf built without the embedded dataplane (lib/dp)"
fi
if [ "$kind" = rnic ] && [ ! -x "$build/app/warpnicd/warpnicd" ]; then
	missing "warpnicd not built"
fi
t=$(mktemp -d /tmp/wn-perf.XXXXXX)
spid=
cleanup() {
	[ -n "$spid" ] && kill -KILL "$spid" 2>/dev/null
	[ "$kind" = rnic ] && "$top/scripts/wn-pair.sh" --dir "$t/pair" stop >/dev/null 2>&1
	rm -rf "/var/run/dpdk/wnp-$$-s" "/var/run/dpdk/wnp-$$-c"
	if [ -n "${WN_BENCH_KEEP:-}" ]; then echo "logs kept in $t" >&2; else rm -rf "$t"; fi
}
trap cleanup EXIT
if [ "$(nproc)" -ge 2 ]; then lc_s=0 lc_c=1; else lc_s=0 lc_c=0; fi
# emb: two lcores each (main: benchmark, worker: dataplane), crossed over the CPUs;
# emb1: one each (lcore 0 on CPUs 0 and 1)
if [ "$(nproc)" -ge 2 ]; then lm_s=0@0,1@1 lm_c=0@1,1@0; else lm_s=0@0,1@0 lm_c=0@0,1@0; fi
if [ "$kind" = emb1 ] || [ "$kind" = rtc ]; then lm_s=0@$lc_s lm_c=0@$lc_c; fi
rtc=()
[ "$kind" = rtc ] && rtc=(--rtc)
fail() {
	echo "FAIL: $*" >&2
	tail -n 20 "$t"/*.log >&2
	[ "$kind" = rnic ] && "$top/scripts/wn-pair.sh" --dir "$t/pair" logs 20 >&2
	exit 1
}

if [ "$kind" = rnic ]; then
	WN_BUILD=$build "$top/scripts/wn-pair.sh" --dir "$t/pair" start --owner $$ --no-huge \
		>"$t/pair.log" 2>&1 || fail "scripts/wn-pair.sh start"
fi

IFS=, read -r -a list <<<"$modes"
for m in "${list[@]}"; do
	case "$kind" in
	raw)
		sock=$t/memif.sock
		rm -f "$sock"
		eal=(--no-pci --no-huge --no-shconf -m 256 --log-level=lib.eal:error)
		memif="net_memif0,socket=$sock,socket-abstract=no"
		"$perf" -l "$lc_s" "${eal[@]}" --file-prefix "wnp-$$-s" \
			--vdev "$memif,role=server" -- --mode "$m" --server --timeout 30 \
			>"$t/$m.server.log" 2>&1 &
		spid=$!
		# a memif client that meets a server whose port is not started yet (or no socket)
		# never connects (DPDK 22.11 does not retry): wait for the server's port, which a
		# loaded machine took more than 10 s to start
		for _ in $(seq 600); do
			grep -q "waiting for the peer" "$t/$m.server.log" 2>/dev/null && break
			kill -0 "$spid" 2>/dev/null || fail "$m server exited"
			sleep 0.1
		done
		grep -q "waiting for the peer" "$t/$m.server.log" ||
			fail "$m server's port not started after 60 s"
		"$perf" -l "$lc_c" "${eal[@]}" --file-prefix "wnp-$$-c" \
			--vdev "$memif,role=client" -- --mode "$m" --client any --json "$t/$m.json" \
			"$@" >"$t/$m.client.log" 2>&1 || fail "$m client"
		;;
	rnic)
		"$perf" --mode "$m" --server --timeout 30 --ctl "$t/pair/b.sock" \
			>"$t/$m.server.log" 2>&1 &
		spid=$!
		sleep 0.2
		"$perf" --mode "$m" --client 198.19.0.2 --ctl "$t/pair/a.sock" --json "$t/$m.json" \
			"$@" >"$t/$m.client.log" 2>&1 || fail "$m client"
		;;
	emb|emb1|rtc)
		sock=$t/memif.sock
		rm -f "$sock"
		eal=(--no-pci --no-huge --no-shconf -m 256 --log-level=lib.eal:error)
		memif="net_memif0,socket=$sock,socket-abstract=no"
		"$perf" --lcores "$lm_s" "${eal[@]}" --file-prefix "wnp-$$-s" \
			--vdev "$memif,role=server,mac=02:77:6e:00:0e:01" -- --ip 198.18.0.1/24 \
			"${rtc[@]}" --mode "$m" --server --timeout 30 >"$t/$m.server.log" 2>&1 &
		spid=$!
		# the client's port comes up only once the server's memif socket exists: a client
		# started before it sends its SYN into a link that is down (a loaded machine took
		# over 20 s to get a server this far)
		for _ in $(seq 600); do
			grep -q "server listening" "$t/$m.server.log" 2>/dev/null && break
			kill -0 "$spid" 2>/dev/null || fail "$m server exited"
			sleep 0.1
		done
		grep -q "server listening" "$t/$m.server.log" || fail "$m server not listening after 60 s"
		"$perf" --lcores "$lm_c" "${eal[@]}" --file-prefix "wnp-$$-c" \
			--vdev "$memif,role=client,mac=02:77:6e:00:0e:02" -- --ip 198.18.0.2/24 \
			"${rtc[@]}" --mode "$m" --client 198.18.0.1 --json "$t/$m.json" "$@" \
			>"$t/$m.client.log" 2>&1 || fail "$m client"
		;;
	*)
		echo "usage: $0 BUILD_DIR raw|rnic|emb|emb1|rtc MODES [OPTIONS]" >&2
		exit 2
		;;
	esac
	wait "$spid" || { spid=; fail "$m server"; }
	spid=
	cat "$t/$m.client.log" >&2
done

python3 - "$modes" "$t" <<'PY'
import json, sys
modes, t = sys.argv[1].split(','), sys.argv[2]
docs = [json.load(open('%s/%s.json' % (t, m))) for m in modes]
out = dict(docs[0])
out['mode'] = '+'.join(d['mode'] for d in docs)
out['results'] = [r for d in docs for r in d['results']]
print(json.dumps(out))
PY
