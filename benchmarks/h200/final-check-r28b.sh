#!/usr/bin/env bash
# Lead's device check of round 28's second flip (the split contributions both ways by default): the whole iga_cuda
# suite (every test that asserts the dispatch's kernels, with the new default), then issue 15's rhs sweep of the
# default against the unsplit solve (-noxs) at 1, 64 and 256 columns.
# Usage: bash benchmarks/h200/final-check-r28b.sh .dev-NAME   (test binary: iga_cuda)
NAME=lead-r28-final2; BUDGET=${BUDGET:-330}; source benchmarks/h200/call-lib.sh "$1"
lane 250 iga_cuda --test-threads 8 &
wait; lanes_done
timeout "$(left 75)" "$G" bench-iga --gpu --sweeps rhs --rhs-degree 3 --cpu-max 0 --rhs-elements 1048576 --reps 3 --rhs 1,64,256 \
  --rhs-engines "${IGA_ENGINES:-gpu-rows,gpu-rows-noxs}" > "$OUT/$NAME-iga.txt" 2>&1
step "iga rc $?"
keep "$NAME-iga.txt" "nrhs=\|forward 1 \|backward 1 \|split" 30
keep "$NAME-tests.txt" "^===\|^test .*FAIL\|test result\|panicked\|^rc " 30
cat "$OUT/$NAME-steps.txt"
