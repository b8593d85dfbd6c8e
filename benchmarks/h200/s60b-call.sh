#!/usr/bin/env bash
# Stop 60's second call: the GPU Jacobian's matrix in compressible memory the default (`GpuHyper::new_matrix` →
# `DeviceCsr::from_host_compressible`). The P2 sweep at 10^6 dofs, 4 points, twice in opposite orders: the default and
# node blocks (compressible now) against their `plain` twins (ordinary memory); Newton at 10^6 dofs with the default and
# with GALERKIN_COMPRESSIBLE=0; the whole `hyperelastic_cuda` (every GPU Newton solve on the new matrices).
# Usage: bash benchmarks/h200/s60b-call.sh .dev-s60b (pack: bin.tar.xz of galerkin and tests/hyperelastic_cuda); timeout_s 590.
NAME=${NAME:-lead-s60b}; BUDGET=${BUDGET:-570}; source benchmarks/h200/call-lib.sh "$1"
D="tc cols fuse sty minb20"; BT="tc blocks fuse sty minb20 trim"
sweep_passes 60 "$D,$D plain,$BT,$BT plain"
N="bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 1"
timeout "$(left 60)" "$G" $N > "$OUT/$NAME-newton.txt" 2>&1; step "newton rc $?"
GALERKIN_COMPRESSIBLE=0 timeout "$(left 60)" "$G" $N > "$OUT/$NAME-newton-plain.txt" 2>&1; step "newton plain rc $?"
[ "$(left 100)" -ge 60 ] && { lane "$(left 420)" hyperelastic_cuda --test-threads 8; lanes_done; }
keep "$NAME-sweep.txt" "asm\|floor\|skipped\|rror" 20
keep "$NAME-newton*.txt" "gpu\|GPU\|asm\|newton\|rror" 30
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|skipped\|^rc " 14
cat "$OUT/$NAME-steps.txt"
