#!/usr/bin/env bash
# Round 28's first call (≤ 330 s): the flipped defaults (64 × 2 walk items, the bottom backward prefetch) under
# their GPU tests, the rhs sweep of the new default against the old (gpu-rows-w32x2-nobpf) and in place with the rows
# in x, then Nsight Compute's full set on forward 0 (mf_mapssbtp_forward's first launch at 256 columns by the new
# default), which iga28-prof.sh's 75 s did not reach on a cold machine.
# Usage: bash benchmarks/h200/iga28-check.sh .dev-r28
NAME=iga28c; BUDGET=${BUDGET:-330}; source benchmarks/h200/call-lib.sh "$1"
B="bench-iga --gpu --sweeps rhs --rhs-degree 3 --cpu-max 0 --rhs-elements 1048576"
N=$OUT/$NAME-ncu.txt
test_step 130 iga_cuda --include-ignored --test-threads 6 gpu_prefetched gpu_walk_shapes gpu_walk_trace gpu_separator_rows_in_x gpu_in_place_solve
timeout "$(left 80)" "$G" $B --reps 3 --rhs 1,256 --rhs-engines gpu-rows,gpu-rows-w32x2-nobpf,gpu-rows-sx-ip > "$OUT/$NAME-rhs.txt" 2>&1
step "bench rc $?"
if [ -n "$NCU" ]; then
  timeout "$(left 120)" "$NCU" --clock-control none --import-source no --set full -k "regex:^mf_mapssbtp_forward\$" --launch-skip 0 --launch-count 1 \
    "$G" $B --reps 1 --rhs 256 --rhs-engines gpu-rows >> "$N" 2>&1
  step "ncu rc $?"
fi
keep "$NAME-rhs.txt" "nrhs=\|forward 0\|backward 0" 30
keep "$NAME-ncu.txt" "Duration\|DRAM Throughput\|L2 Cache Throughput\|Achieved Occ\|Warp Cycles Per Issued" 10
keep "$NAME-tests.txt" "^test \|test result\|panicked" 20
cat "$OUT/$NAME-steps.txt"
