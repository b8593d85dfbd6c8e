#!/usr/bin/env bash
# iga28's device call (one call, ≤ 200 s): round 28's split contributions (issue 15) under its GPU test, then against
# the default in one sweep. First (GALERKIN_REQUIRE_GPU=1): gpu_split_contributions… (= the unsplit solve bit for bit,
# = faer's LU, = the CPU twins; 1/2/4 threads a column; the profile shows the split kernels). Then 2^20 cubic elements
# at 1, 64 and 256 right-hand sides: the default (gpu-rows), -xsb (backward only: mf_mapssbxs_backward_2 on pass 1,
# 59 registers under its cap, 4 blocks/SM as mf_mapssb_backward_2), -xs (both ways: mf_mapssbtpxs_forward takes 48
# registers, 5 blocks/SM where the default's 40 keep 6) and -xs-sx-ip (with round 26–27's rows in x, in place), each
# with its per-launch profile (forward 1 and backward 1 are the rows to read). Then, if ≥ 30 s are left, Nsight
# Compute's warp states on forward 1 (mf_mapssbtpxs_forward, its only launch) by -xs.
# Usage: bash benchmarks/h200/iga28-call.sh .dev-r28   (test binaries in the pack: iga_cuda)
NAME=iga28; BUDGET=${BUDGET:-200}; source benchmarks/h200/call-lib.sh "$1"
B="bench-iga --gpu --sweeps rhs --rhs-degree 3 --cpu-max 0 --rhs-elements 1048576"
N=$OUT/$NAME-ncu.txt
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
test_step 90 iga_cuda --include-ignored --nocapture gpu_split_contributions
timeout "$(left 80)" "$G" $B --reps 3 --rhs 1,64,256 \
  --rhs-engines gpu-rows,gpu-rows-xsb,gpu-rows-xs,gpu-rows-xs-sx-ip > "$OUT/$NAME-rhs.txt" 2>&1
step "1D bench rc $?"
if [ -n "$NCU" ] && [ "$(left 60)" -ge 30 ]; then
  timeout "$(left 28)" "$NCU" --clock-control none --import-source no -k "regex:^mf_mapssbtpxs_forward\$" --launch-count 1 $SEC \
    "$G" $B --reps 1 --rhs 256 --rhs-engines gpu-rows-xs >> "$N" 2>&1
  step "ncu rc $?"
else
  echo "ncu skipped: $(left 60) s left, ncu '$NCU'" >> "$N"
fi
keep "$NAME-rhs.txt" "nrhs=\|forward 1\|backward 1\|split\|rror" 60
keep "$NAME-ncu.txt" "Duration\|DRAM Throughput\|Registers Per\|Achieved Occ\|Warp Cycles Per Issued\|barrier\|L1TEX\|skipped" 12
keep "$NAME-tests.txt" "^test \|test result\|panicked" 20
cat "$OUT/$NAME-steps.txt"
