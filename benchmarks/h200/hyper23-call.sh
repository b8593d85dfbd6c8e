#!/usr/bin/env bash
# hyper23's device call (round 23, H200): the law in the Y phase's lanes (`HK_FUSE`, `tc cols fuse`: a lane per
# (point, component pair) evaluates its point's law in registers, no point records, the residual from the GEMM,
# the stiffness rule's 4 points in one chunk) against the default `tc cols`. First the new GPU = CPU test; then
# the 10^6 P2 sweep at the stiffness rule (--runs 5); then the Newton test and the default's GPU = CPU test
# (its Y loop now shares the tangent's entry with the fused one) in the background, niced, while Nsight
# Compute reads the fused kernel and, time left, the default (line info: SourceCounters, InstructionStats,
# MemoryWorkload); once the tests are done, the stiffness sweep again (the spread), then the full rule. At most 8 files under
# $OUT (the ncu reports stay in /tmp). Run as `bash .dev-hyper23/call.sh .dev-hyper23` (BUDGET ≤ 240 s).
NAME=hyper23; BUDGET=${BUDGET:-232}; source benchmarks/h200/call-lib.sh "$1"
P="bench --hyper-kernel-sweep --dofs 1000000 --degrees 2"; S="$P --runs 5"  # (P: the profiles' one run)
# sweep RULE SECONDS VARIANTS: the 10^6 P2 kernel sweep, appended to $OUT/hyper23-sweep.txt
sweep() {
  echo "==== $1: $3" >> "$OUT/hyper23-sweep.txt"
  timeout "$(left "$2")" "$G" $S --hyper-quadrature "$1" --hyper-variants "$3" >> "$OUT/hyper23-sweep.txt" 2>&1
  step "sweep $1 rc $?"
}
# 1. the fused kernel's GPU = CPU test (every law, P1/P2, both rules at P2, 6 shapes and scatters)
timeout "$(left 80)" "$T/hyperelastic_cuda" gpu_fuse_equals_the_cpu > "$OUT/hyper23-tests.log" 2>&1
step "hyperelastic_cuda gpu_fuse_equals_the_cpu rc $?"
# 2. the stiffness-rule sweep: default, fused, their parts, the chunk shapes apart from the fusion
sweep stiffness 70 "tc cols,tc cols fuse,tc no-scatter,tc no-scatter fuse,tc cols fuse 1x3,tc cols 1x4,tc cols fuse minb16"
# 3. the Newton test and the default's GPU = CPU test in the background (niced) while ncu reads counters
(
  timeout "$(left 100)" nice "$T/hyperelastic_cuda" gpu_fuse_newton gpu_residual_and_jacobian_equal_the_cpu --test-threads 2 >> "$OUT/hyper23-tests.log" 2>&1
  step "hyperelastic_cuda gpu_fuse_newton gpu_residual_and_jacobian rc $?"
) &
tests=$!
# ncu VARIANT TAG: one Jacobian launch (the sweep's warm-up) with line info; details into hyper23-ncu.txt, the
# source page as SASS (with CUDA lines) into hyper23-ncu-TAG.csv
ncu_one() {
  local rep="/tmp/hyper23-$2"
  [ -n "$NCU" ] && [ "$(left 60)" -gt 35 ] || { step "ncu $2 skipped"; return; }
  GALERKIN_NVRTC_LINEINFO=1 timeout "$(left 30)" "$NCU" --clock-control none --import-source yes -k regex:'^hyper_assemble' --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats \
    --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section SourceCounters \
    -o "$rep" -f "$G" $P --runs 1 --hyper-quadrature stiffness --hyper-variants "$1" > /tmp/hyper23-ncu-run-$2.txt 2>&1
  step "ncu $1 rc $?"
  { echo "==== $1 (line info)"; timeout 20 "$NCU" -i "$rep.ncu-rep" --print-details all; } >> "$OUT/hyper23-ncu.txt" 2>&1
  timeout 20 "$NCU" -i "$rep.ncu-rep" --page source --csv --print-source sass,cuda --source-folders "$PWD/crates/galerkin/kernels" > "$OUT/hyper23-ncu-$2.csv" 2>&1 \
    || timeout 20 "$NCU" -i "$rep.ncu-rep" --page source --csv --print-source sass > "$OUT/hyper23-ncu-$2.csv" 2>&1
  step "ncu $2 source page rc $?"
}
ncu_one "tc cols fuse" fuse
ncu_one "tc cols" default
wait "$tests"
step "tests done"
# 4. the stiffness sweep again (the spread), then the full rule (not the target) where time is left
[ "$(left 30)" -gt 20 ] && sweep stiffness 30 "tc cols fuse,tc cols,tc no-scatter fuse,tc no-scatter"
[ "$(left 30)" -gt 15 ] && sweep full 20 "tc cols,tc cols fuse,tc cols fuse minb16"
keep hyper23-sweep.txt '^====\|floor\|^tc ' 40
keep hyper23-ncu.txt '^====\|Duration\|Registers Per\|Achieved Occupancy\|Executed Instructions \|Issue Slots Busy\|L1/TEX Hit\|Mem Pipes Busy\|L1/TEX Cache Throughput\|Shared Memory\|No Eligible\|Warp Cycles Per Issued' 40
keep hyper23-tests.log 'test result\|FAILED\|panicked\|^test ' 20
keep hyper23-steps.txt . 20
ls -la "$OUT"
