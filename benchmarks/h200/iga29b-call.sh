#!/usr/bin/env bash
# iga29b's device call (one call, ≤ 200 s): round 29's pipelined forward chunks (issue 15) under its GPU test, then
# against the default in one sweep. First (GALERKIN_REQUIRE_GPU=1): gpu_pipelined_forward_chunks… (= the default
# bit for bit at 64/77/96/256/300 columns, capped and uncapped column blocks, 1 and 4 threads a column; = faer's LU;
# = the CPU twins; the profile names mf_mapssbtp64_forward on forward 0 only). Then 2^20 cubic elements at 1, 64 and
# 256 right-hand sides: the default (gpu-rows) and -p64 (forward 0 by mf_mapssbtp64_forward: 64-column chunks
# double-buffered, 4 threads a column, 42 registers, 45 568 B, 5 blocks/SM as the default's 40 / 44 960 B), each with
# its per-launch profile (forward 0 is the row to read; at 1 and 64 columns -p64 changes nothing). Then, if ≥ 30 s
# are left each, Nsight Compute's duration, throughputs, occupancy and barrier / long-scoreboard stalls on forward 0 of
# each (mf_mapssbtp_forward by the default, mf_mapssbtp64_forward by -p64).
# Usage: bash benchmarks/h200/iga29b-call.sh .dev-r29   (test binaries in the pack: iga_cuda)
NAME=iga29b; BUDGET=${BUDGET:-200}; source benchmarks/h200/call-lib.sh "$1"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,launch__registers_per_thread,launch__occupancy_limit_shared_mem,sm__warps_active.avg.pct_of_peak_sustained_active
M=$M,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
test_step 90 iga_cuda --include-ignored --nocapture gpu_pipelined_forward_chunks
rhs_sweep 70 gpu-rows,gpu-rows-p64
# Forward 0 of each (the first launch of either kernel at 256 columns), if ≥ 30 s are left.
ncu_kernel 30 "$M" mf_mapssbtp_forward gpu-rows
ncu_kernel 30 "$M" mf_mapssbtp64_forward gpu-rows-p64
keep "$NAME-rhs.txt" "nrhs=\|forward 0\|pipelined\|rror" 60
keep "$NAME-ncu.txt" "mf_mapss\|duration\|throughput\|registers\|occupancy\|warps_active\|stalled" 24
keep "$NAME-tests.txt" "^test \|test result\|panicked" 20
cat "$OUT/$NAME-steps.txt"
