#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run-fuzz.sh TARGET SEED_DIR: run a libFuzzer target for WN_FUZZ_SECONDS
# (default 20) over a scratch copy of its seed corpus. Any crash, leak or
# sanitizer report makes libFuzzer exit non-zero, failing the test; the
# offending input is kept in $WN_FUZZ_ARTIFACTS (default ./fuzz-artifacts).
set -euo pipefail
target=$(realpath "$1") seeds=$2
secs=${WN_FUZZ_SECONDS:-20}
art=${WN_FUZZ_ARTIFACTS:-$PWD/fuzz-artifacts}
mkdir -p "$art"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
if [ -d "$seeds" ]; then
	cp -r "$seeds"/. "$work/corpus/" 2>/dev/null || true
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
cd "$work"
# libFuzzer's own exit code for a bug is 77, which meson reads as "skipped": use 1
exec "$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -error_exitcode=1 \
	-print_final_stats=1 -artifact_prefix="$art/$(basename "$target")-" corpus
