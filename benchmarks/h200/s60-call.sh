#!/usr/bin/env bash
# Stop 60's call: the Jacobian's values in compressible memory (`… comp` rows, `CudaBackend::alloc_compressible`) against
# the default and node blocks in ordinary memory — the zeroing pass and the kernel's first reads of zeroed lines
# compressed in the L2 — P2 sweep at 10^6 dofs, 4 points, twice in opposite orders, each row checked against the
# default; the GPU test of the compressible values; Nsight Compute's DRAM bytes, L2 reductions and durations.
# Usage: bash benchmarks/h200/s60-call.sh .dev-s60 (pack: bin.tar.xz of galerkin and tests/hyperelastic_cuda-*); timeout_s 300.
NAME=${NAME:-lead-s60}; BUDGET=${BUDGET:-280}; source benchmarks/h200/call-lib.sh "$1"
D="tc cols fuse sty minb20"; BT="tc blocks fuse sty minb20 trim"
lane 70 hyperelastic_cuda --test-threads 4 gpu_compressible gpu_residual_and_jacobian_equal_the_cpu; lanes_done
sweep_passes 80 "$D,$D comp,$BT,$BT comp"
M=gpu__time_duration.sum,lts__t_sectors_op_red.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed
ncu_rows 30 "$M" 1 "$D comp" "$D"
keep "$NAME-sweep.txt" "asm\|floor\|skipped\|rror\|spmv" 30
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|skipped\|^test \|^rc " 14
keep "$NAME-ncu.txt" "###\|duration\|sectors\|throughput\|bytes\|hit_rate\|atomic" 30
cat "$OUT/$NAME-steps.txt"
