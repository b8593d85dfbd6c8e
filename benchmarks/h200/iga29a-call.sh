#!/usr/bin/env bash
# iga29a's device call (one call, ≤ 200 s): round 29's rows of C + 4 under the tensor-core forward (issue 15,
# `-ld4`: mf_mapssbtpl4_forward on the bottom pass, mf_mapssbtpxsl4_forward above it, the accumulators in
# row-parity order) under its GPU test, then against the default in one sweep. First (GALERKIN_REQUIRE_GPU=1):
# gpu_tc_rows4… (= the default's solve bit for bit at 7, 64 and 256 columns, split or not, chunks of the default,
# 32 and 64 columns; = faer's LU; the profiles name the new kernels, every degree). Then 2^20 cubic elements at 1,
# 64 and 256 right-hand sides: the default (gpu-rows) and -ld4, each with its per-launch profile (forward 0 and
# forward 1 are the rows to read; one column runs no separator launch). Then, if ≥ 25 s are left, Nsight Compute's
# shared-memory counters on forward 0 by -ld4 (mf_mapssbtpl4_forward's first launch): round 28's default had loads
# 3.0-way, stores 4.5-way conflicted (lead-r28-2026-12-05-check-ncu.txt); the host count says none are left.
# Usage: bash benchmarks/h200/iga29a-call.sh .dev-r29   (test binaries in the pack: iga_cuda)
NAME=iga29a; BUDGET=${BUDGET:-200}; source benchmarks/h200/call-lib.sh "$1"
# Forward 0's shared-memory counters by -ld4 (round 28's default, same metrics by its sections: 66.25 M / 17.09 M
# load / store wavefronts, 34.8 M bank conflicts, 21.99 M / 3.77 M shared load / store instructions).
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed
M=$M,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__inst_executed_op_shared_ld.sum
M=$M,smsp__inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
test_step 80 iga_cuda --include-ignored --nocapture gpu_tc_rows4
rhs_sweep 70 gpu-rows,gpu-rows-ld4
ncu_kernel 25 "$M" mf_mapssbtpl4_forward gpu-rows-ld4
keep "$NAME-rhs.txt" "nrhs=\|forward 0\|forward 1\|C + 4\|rror" 60
keep "$NAME-ncu.txt" "__\|rror" 14
keep "$NAME-tests.txt" "^test \|test result\|panicked" 20
cat "$OUT/$NAME-steps.txt"
