#!/usr/bin/env bash
# Stop 69's call: (1) what the H100's L2 charges for f64 reductions by values per sector (`l2red-probe.cu`, built
# here by nvcc: red.f64 / red.u64 / plain load-add-store / store, k = 1…4 values a sector, contiguous or scattered
# sectors, a 16 MB and a 1 GB footprint; timed, then Nsight Compute's reduction sectors and the atomic unit's
# input); (2) issue 17's sweep rows on the code after the bulk paths' removal (the default, node blocks with the
# trim, the no-scatter bound; two passes); (3) the hyperelastic GPU tests of the default and node blocks.
# Usage: bash benchmarks/h200/s69-call.sh .dev-s69 (pack: galerkin and tests/hyperelastic_cuda); timeout_s 560 (BUDGET 520).
NAME=${NAME:-lead-s69}; BUDGET=${BUDGET:-520}; source benchmarks/h200/call-lib.sh "$1"
P=benchmarks/h200/l2red-probe.cu
if /usr/local/cuda/bin/nvcc -O3 -arch=sm_90 -o /tmp/l2red "$P" > "$OUT/$NAME-probe.txt" 2>&1; then
  timeout "$(left 60)" /tmp/l2red 5 >> "$OUT/$NAME-probe.txt" 2>&1; step "probe rc $?"
else
  step "probe build failed"
fi
sweep_passes 60 "tc cols fuse sty minb20,tc blocks fuse sty minb20 trim,tc no-scatter fuse sty minb20 trim"
if [ -n "$NCU" ] && [ -x /tmp/l2red ]; then
  M=gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum,lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,lts__t_sectors_op_atom.sum,lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,dram__bytes_read.sum,dram__bytes_write.sum
  timeout "$(left 120)" "$NCU" --clock-control none --metrics "$M" -k regex:probe /tmp/l2red 1 > "$OUT/$NAME-ncu.txt" 2>&1
  step "ncu rc $?"
fi
lane 200 hyperelastic_cuda --test-threads 8 gpu_blocks_equal_the_cpu gpu_residual_and_jacobian_equal_the_cpu gpu_fuse_equals_the_cpu gpu_trim_equals_the_cpu gpu_newton_solution_equals_the_cpu gpu_stiffness_rule_equals_the_cpu
lanes_done
keep "$NAME-probe.txt" "copy\|^red\|^ld\|^store\|^mode\|rror" 70
keep "$NAME-sweep.txt" "copy\|floor\|^tc \|rror" 12
keep "$NAME-ncu.txt" "probe<\|op_red.sum\|atomic_input\|gpu__time\|ERR" 120
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 20
cat "$OUT/$NAME-steps.txt"
