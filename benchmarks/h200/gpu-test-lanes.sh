#!/usr/bin/env bash
# Runs the packed GPU test binaries of a device pack in concurrent lanes (independent processes on one
# GPU), GALERKIN_REQUIRE_GPU=1 and --include-ignored, each under a timeout; writes nvidia-smi and every
# binary's log to $OUT/tests.log and one line per binary (its last `test result` and FAILED count) to
# SUMMARY. The lead's final checks (final-check-r11/r12/r13.sh) call it with their own lane count and order.
# Usage: bash benchmarks/h200/gpu-test-lanes.sh .dev-NAME LANES TIMEOUT_S SUMMARY TEST...   (longest first)
d=$1; lanes=$2; limit=$3; summary=$4; shift 4
logs=$(mktemp -d)
for t in "$@"; do [ -x "$d/tests/$t" ] && echo "$t"; done | GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1 xargs -P "$lanes" -I{} bash -c \
  '{ echo "=== {}"; timeout '"$limit"' '"$d"'/tests/{} --include-ignored 2>&1 || echo "FAILED: {}"; } > '"$logs"'/{}.log'
nvidia-smi > "$OUT/tests.log" 2>&1; cat "$logs"/*.log >> "$OUT/tests.log"
for f in "$logs"/*.log; do echo "$(basename "$f" .log): $(grep '^test result' "$f" | tail -1) $(grep -c '^FAILED' "$f")"; done | tee -a "$summary"
