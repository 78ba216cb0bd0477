#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The RPC-over-RDMA benchmark table (issue 16) through two warpnicd, beside perftest in the
# same run:
#   rpcrdma_bench.sh BUILD_DIR [ROUNDS] [SECONDS]
# Each round (server on A, client on B, all through scripts/warpnic-run) runs, in turn:
#   ib_write_bw -s 1048576, ib_read_bw -s 1048576, ib_send_bw -s 128, ib_send_lat -s 64
#   (perftest 4.5, -R, unmodified), then wn-rpc-blob --bench (1 MiB READ by write chunk and
#   WRITE by read chunk with 8 calls outstanding, NULL rate with 32, NULL round trip with 1)
# and prints the table with the medians over ROUNDS (default 1) and the ratios. Nothing is
# asserted about timing: the run fails only when a program fails or prints no figure.
# perftest's latency (t_typical) is half a round trip; the NULL figure is a whole one.
. "$(dirname "$0")/../interop/verbs/pair_lib.sh" "$1"
ROUNDS=${2:-1}
SECS=${3:-2}
BLOB=$WN_BUILD/app/bin/wn-rpc-blob
[ -x "$BLOB" ] || fail "wn-rpc-blob not built"
for t in ib_write_bw ib_read_bw ib_send_bw ib_send_lat; do
	command -v $t >/dev/null || fail "$t not installed (perftest: scripts/setup.sh)"
done

pair_start
# perftest NAME TOOL ARGS...: server on A, client on B; prints the client's result row
perftest() {
	local name=$1 tool=$2 row
	shift 2
	bg_a "${name}_srv" "$tool" -R "$@"
	wait_server 10 || fail "$tool server did not start"
	on_b "$tool" -R "$@" "$A_IP" >"$T/$name.out" 2>&1 || fail "$tool client failed"
	wait_pid "$BG_PID" 20 >/dev/null
	row=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5' "$T/$name.out" | tail -1)
	[ -n "$row" ] || fail "$tool printed no result"
	echo "$row"
}
: >"$T/rows"
for ((r = 1; r <= ROUNDS; r++)); do
	note "round $r"
	wb=$(perftest write_bw ib_write_bw -s 1048576 -D "$SECS") # BW average, MB/s: column 4
	rb=$(perftest read_bw ib_read_bw -s 1048576 -D "$SECS")
	sb=$(perftest send_bw ib_send_bw -s 128 -D "$SECS")	  # MsgRate, Mpps: column 5
	sl=$(perftest send_lat ib_send_lat -s 64 -n 2000)	  # t_typical, us: column 5
	bg_exec a blob_srv "$BLOB" --server "$A_IP" --store-mb 40 --blob-mb 32
	wait_line "$T/blob_srv.out" "serving BLOB_PROG" 20 || fail "blob server did not start"
	on_b "$BLOB" --client "$A_IP" --bench --json --seconds "$SECS" >"$T/blob.out" 2>&1 ||
		fail "wn-rpc-blob --bench failed"
	kill -INT "$BG_PID"
	wait_pid "$BG_PID" 30 >/dev/null
	json=$(grep '^{' "$T/blob.out") || fail "wn-rpc-blob printed no JSON"
	echo "$(awk '{print $4}' <<<"$wb") $(awk '{print $4}' <<<"$rb") $(awk '{print $5}' <<<"$sb") \
$(awk '{print $5}' <<<"$sl") $json" >>"$T/rows"
done
python3 - "$T/rows" <<'PY'
import json, statistics, sys
rows = []
for line in open(sys.argv[1]):
    wb, rb, sb, sl, js = line.split(" ", 4)
    rows.append((float(wb), float(rb), float(sb), float(sl), json.loads(js)))
med = lambda xs: statistics.median(xs)
wb = med([r[0] for r in rows]); rb = med([r[1] for r in rows])
sb = med([r[2] for r in rows]) * 1e6; sl = med([r[3] for r in rows])
rd = med([r[4]["read_MBps"] for r in rows]); wr = med([r[4]["write_MBps"] for r in rows])
nr = med([r[4]["null_rate"] for r in rows]); p50 = med([r[4]["null_p50_us"] for r in rows])
print("RPC-over-RDMA through two warpnicd, medians of %d round(s)" % len(rows))
print("| figure | RPC | baseline (same run) | ratio | goal |")
print("|---|---:|---:|---:|---|")
for name, v, unit, base, bname, ratio, goal in (
        ("1 MiB READ via write chunk, 8 outstanding", rd, "MB/s", wb, "ib_write_bw 1 MiB", rd / wb, ">= 0.8"),
        ("1 MiB WRITE via read chunk, 8 outstanding", wr, "MB/s", rb, "ib_read_bw 1 MiB", wr / rb, ">= 0.7"),
        ("NULL RPC p50 round trip, 1 outstanding", p50, "us", sl, "ib_send_lat 64 B t_typical", p50 / sl, "<= 1.5"),
        ("NULL RPC rate, 32 outstanding", nr, "calls/s", sb, "ib_send_bw 128 B msg/s", nr / sb, ">= 0.5")):
    print("| %s | %.1f %s | %.1f %s (%s) | %.2f | %s |" % (name, v, unit, base, unit if unit != "calls/s" else "msg/s", bname, ratio, goal))
print("(perftest's t_typical is half a round trip: the NULL round trip is %.2f x a whole ib_send_lat round trip)" % (p50 / (2 * sl)))
PY
