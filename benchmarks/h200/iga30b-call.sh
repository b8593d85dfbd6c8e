#!/usr/bin/env bash
# iga30b's device call (one call, ≤ 200 s): round 30's trimmed forward 0 (issue 15, -zs: no zeroed Schur rows, the
# accumulators from +0.0 in registers, the owned rows after max(ne, s) rows) under its GPU test, then against the
# default and -ld4 in one sweep. First (GALERKIN_REQUIRE_GPU=1): gpu_trimmed_forward… (= the default bit for bit at
# 64/77/96/256 columns alone, with -ld4, -p64 and both; = faer's LU row- and column-major; = the CPU twins; the
# profile names the trimmed kernel of each setting on forward 0). Then 2^20 cubic elements at 1, 64 and 256
# right-hand sides: gpu-rows (forward 0 by mf_mapssbtp_forward, 40 registers, 44 960 B), -ld4 (round 29,
# mf_mapssbtpl4_forward), -zs (mf_mapssbtpz_forward, 40, 41 808 B), -ld4-zs (mf_mapssbtpl4z_forward, 47, 42 368 B),
# -ld4-p64-zs (mf_mapssbtp64l4z_forward: 64-column chunks pipelined with rows of C + 4, 48 registers, 43 488 B, 5
# blocks/SM), -p64 (round 29) last; each with its per-launch profile (forward 0 is the row to read; at 1 column
# nothing changes). Then, if ≥ 30 s are left, Nsight Compute's duration and shared wavefronts on forward 0 of -ld4-zs.
# Usage: bash benchmarks/h200/iga30b-call.sh .dev-r30   (test binaries in the pack: iga_cuda)
NAME=iga30b; BUDGET=${BUDGET:-200}; source benchmarks/h200/call-lib.sh "$1"
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,launch__registers_per_thread,launch__occupancy_limit_shared_mem,launch__occupancy_limit_registers
M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
M=$M,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
test_step 85 iga_cuda --include-ignored --nocapture gpu_trimmed_forward
rhs_sweep 90 gpu-rows,gpu-rows-ld4,gpu-rows-zs,gpu-rows-ld4-zs,gpu-rows-ld4-p64-zs,gpu-rows-p64
ncu_kernel 30 "$M" mf_mapssbtpl4z_forward gpu-rows-ld4-zs
keep "$NAME-rhs.txt" "nrhs=\|forward 0\|Schur\|pipelined\|C + 4\|rror" 80
keep "$NAME-ncu.txt" "mf_mapss\|duration\|throughput\|registers\|occupancy\|wavefronts\|conflicts" 24
keep "$NAME-tests.txt" "^test \|test result\|panicked" 20
cat "$OUT/$NAME-steps.txt"
