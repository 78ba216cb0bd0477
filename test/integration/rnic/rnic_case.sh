#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run iWARP integration cases by name, their output shown (the fault matrix's MATRIX lines):
#
#   rnic_case.sh BUILD_DIR CASE...    e.g. fault_drop zc_ops; status 0 when all passed
#   rnic_case.sh --list               every case name (the rows of test_rnic_*.py)
#
# The cases are pytest parameters (rnic.py documents them); WN_RNIC_MIB, WN_RNIC_ZC and
# WN_TEST_KEEP=1 pass through. scripts/soak.sh and the loss benchmarks run cases this way.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pytest=(pytest-3)
command -v pytest-3 >/dev/null || pytest=(/usr/bin/python3 -m pytest)
export PYTHONDONTWRITEBYTECODE=1
if [ "${1:-}" = --list ]; then
	t=$(mktemp)
	"${pytest[@]}" -c "$here/../../pytest.ini" --collect-only -q "--results=$t" "$here" \
		>/dev/null || { rm -f "$t"; exit 1; }
	/usr/bin/python3 -c '
import json, sys
for c in json.loads(open(sys.argv[1]).readline())["collected"]:
    print(c.rsplit("[", 1)[1].rstrip("]"))' "$t"
	rc=$?
	rm -f "$t"
	exit $rc
fi
build=$(cd "${1:?usage: $0 BUILD_DIR CASE... | --list}" && pwd)
shift
[ $# -gt 0 ] || { echo "usage: $0 BUILD_DIR CASE..." >&2; exit 2; }
sel=()
for c in "$@"; do sel+=("--case=$c"); done
exec "${pytest[@]}" -c "$here/../../pytest.ini" -s "--build=$build" "${sel[@]}" "$here"
