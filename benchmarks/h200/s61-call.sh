#!/usr/bin/env bash
# Stop 61's call: the final code's GPU paths this stop touched — the grouped and parts assemblers' value swaps
# (`DeviceCsr::replace_values`; `hierarchical_parts`' GPU tests) and `bench --matrix` with its compressible row
# after the timing loop's refactor (a small size: the rows must run and check, not be timed for the record).
# Usage: bash benchmarks/h200/s61-call.sh .dev-s61 (pack: bin.tar.xz of galerkin and tests/hierarchical_parts); timeout_s 240.
NAME=${NAME:-lead-s61}; BUDGET=${BUDGET:-220}; source benchmarks/h200/call-lib.sh "$1"
lane 150 hierarchical_parts --test-threads 4; lanes_done
timeout "$(left 60)" "$G" bench --matrix --problem poisson-3d --problem elasticity-3d --degrees 2 --dofs 200000 --cpu-max-dofs 0 \
  --max-iter 20 > "$OUT/$NAME-matrix.txt" 2>&1; step "matrix rc $?"
keep "$NAME-matrix.txt" "problem\|poisson\|elasticity\|compressible\|rror" 10
keep "$NAME-tests.txt" "^===\|^test \|test result\|FAILED\|panicked\|skipped\|^rc " 20
cat "$OUT/$NAME-steps.txt"
