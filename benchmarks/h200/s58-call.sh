#!/usr/bin/env bash
# Stop 58's call: main's GPU test binaries (hyperelastic, DG, advection, IGA, setup, box mesh, the backend and the
# release checks) with --include-ignored and GALERKIN_REQUIRE_GPU=1 in two groups of four lanes (run at 04:29 UTC:
# hyperelastic_cuda and iga_cuda need more than 130 s — s58b-call.sh gave them 180), the README's example
# on the GPU (`auto`); then issue 17 on the H100: the P2 sweep at 10^6 dofs, 4 points — the default, round 25's node
# blocks (measured only on the H200), blocks + trim, the no-scatter bound, twice in opposite orders — and Nsight
# Compute's counters of the Jacobian kernel for the default, the blocks and the no-scatter rows (the L2 reduction
# sectors, the FP64 pipe, issue), which so far were profiled only on the H200 (round 18).
# Usage: bash benchmarks/h200/s58-call.sh .dev-s58 (pack: bin.tar.xz of galerkin + tests/<binary>); timeout_s 560.
NAME=${NAME:-lead-s58}; BUDGET=${BUDGET:-520}; source benchmarks/h200/call-lib.sh "$1"
for b in hyperelastic_cuda cuda_backend dg_cuda iga_cuda; do lane 130 "$b" --test-threads 4 & done
wait; lanes_done
for b in advection_cuda cuda_release setup_cuda box_cuda; do lane 90 "$b" --test-threads 4 & done
wait; lanes_done
timeout "$(left 40)" "$G" run examples/poisson-3d.toml > "$OUT/$NAME-example.txt" 2>&1; step "example rc $?"
D="tc cols fuse sty minb20"; B="tc blocks fuse sty minb20"; N="tc no-scatter fuse sty minb20"
sweep_passes 60 "$D,$B,$B trim,$N"
M=gpu__time_duration.sum,lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active
ncu_rows 45 "$M" 3 "$D" "$B" "$N"
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 40
tail -3 "$OUT/$NAME-example.txt"
keep "$NAME-sweep.txt" "asm\|floor\|sectors" 20
keep "$NAME-ncu.txt" "###\|hyper_assemble\|duration\|sectors\|requests\|throughput\|bytes\|issue\|fp64\|inst_exec\|warps" 60
cat "$OUT/$NAME-steps.txt"
