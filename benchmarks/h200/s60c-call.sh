#!/usr/bin/env bash
# Stop 60's third call: Newton at 10^6 dofs with GALERKIN_COMPRESSIBLE=0 first and then the default (the second call ran
# them the other way round: the setup's kernel compiles fall on the first), twice each; then the 18 `hyperelastic_cuda`
# tests the second call's 420-s lane did not reach, 16 at a time.
# Usage: bash benchmarks/h200/s60c-call.sh .dev-s60b; timeout_s 470.
NAME=${NAME:-lead-s60c}; BUDGET=${BUDGET:-450}; source benchmarks/h200/call-lib.sh "$1"
N="bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 3"
for i in 1 2; do
  GALERKIN_COMPRESSIBLE=0 timeout "$(left 40)" "$G" $N > "$OUT/$NAME-newton-plain$i.txt" 2>&1; step "newton plain $i rc $?"
  timeout "$(left 40)" "$G" $N > "$OUT/$NAME-newton$i.txt" 2>&1; step "newton $i rc $?"
done
L="gpu_patch_scheme_equals_the_cpu gpu_prefetch_equals_the_cpu gpu_recompute_scheme_equals_the_cpu gpu_records_scheme_equals_the_cpu gpu_residual_and_jacobian_equal_the_cpu gpu_scatter_variants_equal_the_cpu gpu_st_y_equals_the_cpu gpu_stiffness_rule_equals_the_cpu gpu_tc_patch_equals_the_cpu gpu_tc_patch_newton_equals_the_default gpu_tc_patch_turns_newton_equals_the_default gpu_trim_equals_the_cpu gpu_trim_newton_equals_the_default gpu_upper_newton_equals_the_default gpu_upper_scatter_equals_the_cpu gpu_zero_ahead_equals_the_cpu gpu_zero_ahead_newton_equals_the_default upper_map_transposes_the_pattern"
lane "$(left 400)" hyperelastic_cuda --test-threads 16 --exact $L; lanes_done
keep "$NAME-newton*.txt" "^cuda\|setup 2\|setup 1\|setup 0\.[0-9]* s: mesh.*system\|Newton:" 24
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc \|\.\.\. ok" 30
cat "$OUT/$NAME-steps.txt"
