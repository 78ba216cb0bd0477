#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Embedded dataplane vs the raw memif baseline vs two warpnicd, measured in the same run:
# write_bw and send_bw through warpnic-perf with embedded dataplanes (--ip), through two
# warpnicd (scripts/wn-pair.sh), and raw_bw, each over net_memif with perf_pair.sh's set-up
# (no hugepages, 2 lcores per embedded process). Rounds alternate the three paths so a
# shared machine's load hits them alike; each figure is the median over the rounds of the
# median of --reps 3, each ratio the median of the per-round ratios. Prints a table (or
# --json); asserts nothing about speed.
#
#   test/bench/perf_embedded.sh BUILD_DIR [--rounds N] [--sizes N,N] [--json]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:?usage: $0 BUILD_DIR [--rounds N] [--sizes N,N] [--json]}
shift
rounds=3 sizes=65536,1048576 json=0
while [ $# -gt 0 ]; do
	case "$1" in
	--rounds) rounds=$2; shift 2 ;;
	--sizes) sizes=$2; shift 2 ;;
	--json) json=1; shift ;;
	*) echo "perf_embedded.sh: unknown option $1" >&2; exit 2 ;;
	esac
done
t=$(mktemp -d /tmp/wn-emb-bench.XXXXXX)
trap 'rm -rf "$t"' EXIT
opts=(--sweep="$sizes" --duration 0.4 --reps 3 --timeout 20)
for ((r = 0; r < rounds; r++)); do
	echo "== round $((r + 1))/$rounds" >&2
	"$here/perf_pair.sh" "$build" raw raw_bw "${opts[@]}" >"$t/raw.$r.json" 2>"$t/raw.$r.log" ||
		{ cat "$t/raw.$r.log" >&2; exit 1; }
	"$here/perf_pair.sh" "$build" emb write_bw,send_bw "${opts[@]}" >"$t/emb.$r.json" \
		2>"$t/emb.$r.log" || { cat "$t/emb.$r.log" >&2; exit 1; }
	"$here/perf_pair.sh" "$build" rnic write_bw,send_bw "${opts[@]}" >"$t/pair.$r.json" \
		2>"$t/pair.$r.log" || { cat "$t/pair.$r.log" >&2; exit 1; }
done
python3 - "$t" "$rounds" "$json" <<'PY'
import json, statistics, sys
t, rounds, as_json = sys.argv[1], int(sys.argv[2]), sys.argv[3] == '1'
val = {}
for kind in ('raw', 'emb', 'pair'):
    for r in range(rounds):
        for row in json.load(open('%s/%s.%d.json' % (t, kind, r)))['results']:
            val.setdefault((kind, row['name'], row['size']), []).append(row['Gbit/s'])
med = {k: statistics.median(v) for k, v in val.items()}
# ratios within each round (the three paths ran back to back), then their median
def rmed(a, b):
    return statistics.median(x / y for x, y in zip(val[a], val[b]) if y > 0)
rows = []
for (kind, name, size), v in sorted(med.items()):
    if kind != 'emb':
        continue
    raw, pair = med[('raw', 'raw_bw', size)], med[('pair', name, size)]
    e, p, w = ('emb', name, size), ('pair', name, size), ('raw', 'raw_bw', size)
    rows.append({'mode': name, 'size': size, 'embedded': v, 'pair': pair, 'raw': raw,
                 'embedded/raw': rmed(e, w), 'pair/raw': rmed(p, w),
                 'embedded/pair': rmed(e, p)})
if as_json:
    print(json.dumps({'bench': 'embedded_vs_pair_vs_raw', 'rounds': rounds, 'rows': rows,
                      'samples': {'%s/%s/%d' % k: v for k, v in val.items()}}, indent=1))
    sys.exit(0)
print('Gbit/s (message octets), median of %d rounds; raw = raw_bw over memif;' % rounds)
print('ratios: median of the per-round ratios')
print('%-9s %8s %9s %9s %9s %9s %9s %10s' % ('mode', 'size', 'embedded', 'pair', 'raw',
                                              'emb/raw', 'pair/raw', 'emb/pair'))
for r in rows:
    print('%-9s %8d %9.2f %9.2f %9.2f %9.2f %9.2f %10.2f' % (
        r['mode'], r['size'], r['embedded'], r['pair'], r['raw'], r['embedded/raw'],
        r['pair/raw'], r['embedded/pair']))
PY
