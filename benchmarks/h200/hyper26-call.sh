#!/usr/bin/env bash
# hyper26's device call (round 26, H200), superseding hyper25-call.sh: round 25's node-block storage
# (`tc blocks fuse sty minb20`) and round 26's trimmed fused law (`HK_TRIM`, the `… trim` rows: the
# pre-scatter part's instructions −15 % by static SASS counts) against the default, in the same sweeps.
# First the GPU = CPU tests of both (and the fused shapes' test, the default among them) and the trimmed
# law's Newton run against the default, in one run of the test binary; then the 10^6 P2 sweep at the
# stiffness rule (--runs 5): the default, trim, blocks, blocks + trim, the no-scatter bounds of the
# default and of trim, keep2 and `tc cols`; the sweep again in another order (the spread); Nsight
# Compute last, where time is left: instructions, issue, FP64 pipe and L2 reductions of the trimmed row,
# its no-scatter bound and the default. At most 8 files under $OUT (steps, clocks, tests, sweep, ncu).
# Run as `bash benchmarks/h200/hyper26-call.sh .dev-r26` (carry [".dev-r26"], timeout_s 300): the pack
# holds the CLI (`galerkin`) and the test binary `hyperelastic_cuda`.
NAME=hyper26; BUDGET=${BUDGET:-232}; source benchmarks/h200/call-lib.sh "$1"
P="bench --hyper-kernel-sweep --dofs 1000000 --degrees 2"  # (--runs 5 in the sweeps, 1 under ncu)
D=tc\ cols\ fuse\ sty\ minb20; B=tc\ blocks\ fuse\ sty\ minb20; N=tc\ no-scatter\ fuse\ sty\ minb20  # the rows' stems
clocks_start
# 1. GPU = CPU (GALERKIN_REQUIRE_GPU=1), one run of the binary (its tests in parallel): the trimmed law
#    (P1/P2, both rules, every law, 5 shapes), the block storage (the trimmed default scattering blocks
#    among its shapes), the fused shapes (round 24's default among them), the trimmed law's Newton run
test_step 100 hyperelastic_cuda gpu_trim_equals_the_cpu gpu_trim_newton_equals_the_default gpu_blocks_equal_the_cpu gpu_fuse_equals_the_cpu
# 2–3. the stiffness-rule sweep (45 s): the default, trim, blocks, blocks + trim, the no-scatter bounds, keep2, the
#      old default; then again in another order (35 s, the spread), into $OUT/hyper26-sweep.txt
for run in "45|$D,$D trim,$B,$B trim,$N,$N trim,$D keep2,tc cols" "35|$D trim,$N trim,$B trim,$D,$N,$B"; do
  echo "==== stiffness: ${run#*|}" >> "$OUT/hyper26-sweep.txt"
  timeout "$(left "${run%%|*}")" "$G" $P --runs 5 --hyper-quadrature stiffness --hyper-variants "${run#*|}" >> "$OUT/hyper26-sweep.txt" 2>&1
  step "sweep rc $?"
done
# 4. Nsight Compute, where ncu is there and ≥ 23 s are left: one Jacobian launch of trim, its no-scatter bound and
#    the default (the predicted −12 % instructions a cell, −15 % before the scatter; FP64, issue, L2 reductions)
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__inst_executed_pipe_fp64.sum,smsp__inst_executed_op_shared_ld.sum,smsp__issue_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_op_red.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
for v in "$D trim" "$N trim" "$D"; do
  if [ -z "$NCU" ] || [ "$(left 40)" -le 22 ]; then step "ncu $v skipped"; continue; fi
  echo "==== ncu $v" >> "$OUT/hyper26-ncu.txt"
  ncu_step 25 "$M" -k regex:'^hyper_assemble' --launch-count 1 "$G" $P --runs 1 --hyper-quadrature stiffness --hyper-variants "$v"
done
finish '^====\|floor\|^tc \|sectors' 'test result\|FAILED\|panicked\|^test ' '^====\|hyper_assemble\|gpu__time\|lts__\|smsp__\|sm__\|launch__'
ls -la "$OUT"
