#!/usr/bin/env bash
# hyper24's second device call (≤ 150 s, after 19:46 UTC): the fused shapes' GPU = CPU test alone (the first call ran it
# beside three others and cut it at 95 s), then the new default's Newton against `tc cols`'s at the stiffness
# rule's kernels where time is left. Run as `BUDGET=140 bash .dev-hyper24/call.sh .dev-hyper24`.
NAME=hyper24b; BUDGET=${BUDGET:-140}; source benchmarks/h200/call-lib.sh "$1"
test_step 110 hyperelastic_cuda gpu_fuse_equals_the_cpu
[ "$(left 30)" -gt 20 ] && test_step 25 hyperelastic_cuda gpu_fuse_newton_equals_the_default
echo "-- tests"; keep "$NAME-tests.txt" 'test result\|FAILED\|panicked\|^test ' 20
cat "$OUT/$NAME-steps.txt"
