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
P="bench --hyper-kernel-sweep --dofs 1000000 --degrees 2"; S="$P --runs 5"  # (P: ncu's one run)
# sweep SECONDS VARIANTS: the 10^6 P2 kernel sweep at the stiffness rule, appended to $OUT/hyper26-sweep.txt
sweep() {
  echo "==== stiffness: $2" >> "$OUT/hyper26-sweep.txt"
  timeout "$(left "$1")" "$G" $S --hyper-quadrature stiffness --hyper-variants "$2" >> "$OUT/hyper26-sweep.txt" 2>&1
  step "sweep rc $?"
}
clocks_start
# 1. GPU = CPU (GALERKIN_REQUIRE_GPU=1), one run of the binary (its tests in parallel): the trimmed law
#    (P1/P2, both rules, every law, 5 shapes), the block storage (the trimmed default scattering blocks
#    among its shapes), the fused shapes (round 24's default among them), the trimmed law's Newton run
test_step 100 hyperelastic_cuda gpu_trim_equals_the_cpu gpu_trim_newton_equals_the_default gpu_blocks_equal_the_cpu gpu_fuse_equals_the_cpu
# 2. the stiffness-rule sweep: the default, trim, blocks, blocks + trim, the no-scatter bounds, keep2, the old default
sweep 45 "tc cols fuse sty minb20,tc cols fuse sty minb20 trim,tc blocks fuse sty minb20,tc blocks fuse sty minb20 trim,tc no-scatter fuse sty minb20,tc no-scatter fuse sty minb20 trim,tc cols fuse sty minb20 keep2,tc cols"
# 3. again, another order (the spread)
sweep 35 "tc cols fuse sty minb20 trim,tc no-scatter fuse sty minb20 trim,tc blocks fuse sty minb20 trim,tc cols fuse sty minb20,tc no-scatter fuse sty minb20,tc blocks fuse sty minb20"
# 4. Nsight Compute: one Jacobian launch each (the predicted −12 % instructions a cell, −15 % before the scatter)
M=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__inst_executed_pipe_fp64.sum,smsp__inst_executed_op_shared_ld.sum,smsp__issue_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_op_red.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
# prof SECONDS VARIANT: its first Jacobian launch under Nsight Compute, where ncu is there and ≥ 23 s are left
prof() {
  if [ -z "$NCU" ] || [ "$(left 40)" -le 22 ]; then step "ncu $2 skipped"; return; fi
  echo "==== ncu $2" >> "$OUT/hyper26-ncu.txt"
  ncu_step "$1" "$M" -k regex:'^hyper_assemble' --launch-count 1 "$G" $P --runs 1 --hyper-quadrature stiffness --hyper-variants "$2"
}
prof 25 "tc cols fuse sty minb20 trim"
prof 25 "tc no-scatter fuse sty minb20 trim"
prof 25 "tc cols fuse sty minb20"
finish '^====\|floor\|^tc \|sectors' 'test result\|FAILED\|panicked\|^test ' '^====\|hyper_assemble\|gpu__time\|lts__\|smsp__\|sm__\|launch__'
ls -la "$OUT"
