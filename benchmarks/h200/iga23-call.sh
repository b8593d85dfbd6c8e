#!/usr/bin/env bash
# iga23's device call (one call, ≤ 240 s). First (GALERKIN_REQUIRE_GPU=1, one process, two test
# threads): iga_cuda's new test of pass 1 chained into the bottom forward pass (= faer's LU, = the CPU
# twins, = the unchained solve bit for bit) and round 22's prefetch test with the prefetch now the
# default. Then, on a quiet GPU: 2^20 cubic elements at 1, 32, 64 and 256 right-hand sides, the
# row-major default (gpu-rows, now prefetched), the chained forward (gpu-rows-chain), the plain forward
# kernels (gpu-rows-nopf) and the 64 × 2 walk items (gpu-rows-w64x2), each with its per-launch profile
# and the copy bandwidth; then 2D Poisson p = 3, 512², 32/64/256 columns, the default beside 64 × 2
# (a note says whether each walk ran) and the chain; then Nsight Compute on the chained kernel if time is left.
# Usage: bash .dev-iga23/call.sh .dev-iga23
NAME=iga23; BUDGET=${BUDGET:-232}; source benchmarks/h200/call-lib.sh "$1"
L=$OUT/$NAME-tests.log
step "tests"
timeout "$(left 95)" "$T/iga_cuda" --include-ignored --test-threads 2 gpu_chained_forward gpu_prefetched_forward > "$L" 2>&1
echo "iga_cuda chained+prefetched rc=$? at $(( $(date +%s) - start )) s" >> "$L"
B="bench-iga --gpu --sweeps rhs --rhs-degree 3 --cpu-max 0"
R=$OUT/$NAME-rhs.txt
step "1D bench"
timeout "$(left 125)" "$G" $B --rhs-elements 1048576 --reps 3 --rhs 1,32,64,256 \
  --rhs-engines gpu-rows,gpu-rows-chain,gpu-rows-nopf,gpu-rows-w64x2 > "$R" 2>&1
echo "bench rc=$?" >> "$R"
step "2D bench"
R2=$OUT/$NAME-rhs2d.txt
timeout "$(left 60)" "$G" $B --rhs-grid 512 --reps 3 --rhs 32,64,256 --rhs-engines gpu-rows,gpu-rows-w64x2,gpu-rows-chain > "$R2" 2>&1
echo "bench 2D rc=$?" >> "$R2"
N=$OUT/$NAME-ncu.txt
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
if [ -n "$NCU" ] && [ "$(left 60)" -ge 25 ]; then
  step "ncu mf_mapssbtp_chain"
  timeout "$(left 40)" "$NCU" --clock-control none --import-source no -k "regex:^mf_mapssbtp_chain\$" --launch-count 1 $SEC \
    "$G" $B --rhs-elements 1048576 --reps 1 --rhs 256 --rhs-engines gpu-rows-chain >> "$N" 2>&1
  echo "ncu rc=$?" >> "$N"
else
  echo "ncu skipped: $(left 60) s left, ncu '$NCU'" >> "$N"
fi
step "done"
keep "$NAME-tests.log" "^test \|test result\|rc=\|panicked" 12
keep "$NAME-ncu.txt" "^  mf_\|Duration\|Memory Throughput\|Issue Slots\|Achieved Occ\|Block Limit Shared\|Warp Cycles Per Issued\|rc=\|skipped" 14
keep "$NAME-rhs.txt" "nrhs=\|rc=\|rror" 20
keep "$NAME-rhs2d.txt" "nrhs=\|note\|rc=\|rror" 16
