#!/usr/bin/env bash
# Stop 60's fourth call: main's final code on the H100 — `gpu_compressible_values_equal_the_cpu` and two GPU Newton
# tests on the compressible Jacobian, the issue-17 sweep's default and `plain` rows once more; and the Poisson and
# elasticity GPU assembly (`bench --matrix`, 2·10^6 unknowns, P1/P2) with its atomic scatter into ordinary and into
# compressible values (`gpu atomic into compressible values`).
# Usage: bash benchmarks/h200/s60d-call.sh .dev-s60d (pack: bin.tar.xz of galerkin and tests/hyperelastic_cuda); timeout_s 330.
NAME=${NAME:-lead-s60d}; BUDGET=${BUDGET:-310}; source benchmarks/h200/call-lib.sh "$1"
lane 90 hyperelastic_cuda --test-threads 4 gpu_compressible gpu_newton_solution_equals_the_cpu gpu_fuse_newton_equals_the_default; lanes_done
D="tc cols fuse sty minb20"
sweep_passes 30 "$D,$D plain"
timeout "$(left 150)" "$G" bench --matrix --problem poisson-3d --problem elasticity-3d --degrees 1,2 --dofs 2000000 --cpu-max-dofs 0 \
  --max-iter 20 > "$OUT/$NAME-matrix.txt" 2>&1; step "matrix rc $?"
keep "$NAME-sweep.txt" "asm\|floor\|rror" 6
keep "$NAME-matrix.txt" "problem\|poisson\|elasticity\|compressible\|rror" 20
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|skipped\|^rc " 10
cat "$OUT/$NAME-steps.txt"
