#!/usr/bin/env bash
# Stop 66's call (stop 65's, with the padded runs HK_BULK_PAD): issue 17's P2 Jacobian with each node block added by one 64-byte bulk reduction (Hopper's
# cp.reduce.async.bulk .add.f64, `HK_SCATTER_BULK`) instead of per-lane atomic adds — its test against the CPU
# (`gpu_blocks_equal_the_cpu`, every law), the sweep rows beside the default, node blocks and the no-scatter bound
# (two passes, opposite orders), and Nsight Compute's L2 counters of the node-block and bulk rows.
# Usage: bash benchmarks/h200/s66-call.sh .dev-s66 (pack: galerkin and tests/hyperelastic_cuda); timeout_s 520 (BUDGET 480).
NAME=${NAME:-lead-s66}; BUDGET=${BUDGET:-480}; source benchmarks/h200/call-lib.sh "$1"
lane 150 hyperelastic_cuda --test-threads 4 gpu_blocks_equal_the_cpu gpu_residual_and_jacobian_equal_the_cpu
lanes_done
sweep_passes 90 "tc bulk pad fuse sty minb20 trim,tc blocks fuse sty minb20 trim,tc cols fuse sty minb20,tc bulk fuse sty minb20 trim,tc no-scatter fuse sty minb20 trim,tc bulk pad fuse sty minb20"
M=gpu__time_duration.sum,lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active
ncu_rows 40 "$M" 1 "tc blocks fuse sty minb20 trim" "tc bulk fuse sty minb20 trim" "tc bulk pad fuse sty minb20 trim"
if [ -n "$NCU" ] && [ "$(left 60)" -ge 30 ]; then
  echo "### tc bulk pad fuse sty minb20 trim breakdown" >> "$OUT/$NAME-ncu.txt"
  ncu_step 40 breakdown:lts__throughput.avg.pct_of_peak_sustained_elapsed -k regex:'^hyper_assemble$' --launch-count 1 \
    "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 1 --hyper-quadrature stiffness --hyper-variants "tc bulk pad fuse sty minb20 trim"
fi
keep "$NAME-sweep.txt" "copy\|floor\|^tc \|rror" 24
keep "$NAME-ncu.txt" "###\|hyper_assemble (\|  [a-z0-9_]*__[a-z0-9_.]*  \|ERR" 60
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 20
cat "$OUT/$NAME-steps.txt"
