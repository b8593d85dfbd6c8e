#!/usr/bin/env bash
# iga30a's device call (one call, ≤ 200 s): round 30's pipelined backward chunks (issue 15) under their GPU test, then
# against the default in one sweep. First (GALERKIN_REQUIRE_GPU=1): gpu_pipelined_backward_chunks… (= the default bit
# for bit at 64/77/96/256/300 columns, alone and with -p64, capped and uncapped column blocks, widths 128 and the
# default's; = faer's LU; = the CPU twins; at 256 columns the profile runs mf_mapssbp064_backward_N /
# mf_mapssbxs64_backward_N exactly where the rule says, never with it off). Then 2^20 cubic elements at 1, 64 and 256
# right-hand sides: the default (gpu-rows), -p64b (backward 0 by mf_mapssbp064_backward_2: 64-column chunks
# double-buffered, 4 threads a column, 58 registers under (256, 4) as its twin, 4 blocks/SM; backward 1 by
# mf_mapssbxs64_backward_2, 62 under (256, 4)) and -p64-p64b (forward 0 pipelined too), each with its per-launch
# profile (backward 0 and backward 1 are the rows to read; at 1 and 64 columns -p64b changes nothing). Then, if ≥ 30 s
# are left each, Nsight Compute on backward 0 of the default and of -p64b.
# Usage: bash benchmarks/h200/iga30a-call.sh .dev-r30   (test binaries in the pack: iga_cuda)
NAME=iga30a; BUDGET=${BUDGET:-200}; source benchmarks/h200/call-lib.sh "$1"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,launch__registers_per_thread,launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
test_step 100 iga_cuda --include-ignored --nocapture gpu_pipelined_backward_chunks
rhs_sweep 90 gpu-rows,gpu-rows-p64b,gpu-rows-p64-p64b
# Backward 0 of each (the first launch of either kernel at 256 columns), if ≥ 30 s are left.
ncu_kernel 30 "$M" mf_mapssbp0_backward_2 gpu-rows
ncu_kernel 30 "$M" mf_mapssbp064_backward_2 gpu-rows-p64b
keep "$NAME-rhs.txt" "nrhs=\|backward 0\|backward 1\|forward 0\|pipelined\|rror" 80
keep "$NAME-ncu.txt" "mf_mapss\|duration\|throughput\|registers\|occupancy\|warps_active\|stalled" 24
keep "$NAME-tests.txt" "^test \|test result\|panicked" 20
cat "$OUT/$NAME-steps.txt"
