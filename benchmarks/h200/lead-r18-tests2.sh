#!/usr/bin/env bash
# Lead's second round-18 check (main 3ea1785's test binaries, unpacked in $1/tests): the recomputing
# gather after its shared-memory fix, and iga18's separator-line variants, GALERKIN_REQUIRE_GPU=1.
d=$1; export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
timeout 100 $d/tests/hyperelastic_cuda gpu_recompute gpu_prefetch_equals --test-threads 3 > $OUT/tests-hyper.log 2>&1; echo "hyper rc $?"
timeout 170 $d/tests/iga_cuda gpu_separator_line_variants gpu_row_major --include-ignored --test-threads 3 > $OUT/tests-iga.log 2>&1; echo "iga rc $?"
grep -h "^test \|test result\|panicked" $OUT/tests-*.log
