#!/usr/bin/env bash
# Stop 66's short call (s66-call.sh cut for a small device budget): the bulk and padded-bulk rows' test against
# the CPU, the sweep (two passes, opposite orders) and, time left, Nsight's L2 counters of the padded row.
# Usage: bash benchmarks/h200/s66b-call.sh .dev-s66; timeout_s 180 (BUDGET 150).
NAME=${NAME:-lead-s66b}; BUDGET=${BUDGET:-150}; source benchmarks/h200/call-lib.sh "$1"
sweep_passes 30 "tc bulk pad fuse sty minb20 trim,tc blocks fuse sty minb20 trim,tc cols fuse sty minb20,tc bulk fuse sty minb20 trim,tc no-scatter fuse sty minb20 trim"
lane 70 hyperelastic_cuda --test-threads 4 gpu_blocks_equal_the_cpu
lanes_done
M=gpu__time_duration.sum,lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum
ncu_rows 30 "$M" 1 "tc bulk pad fuse sty minb20 trim" "tc blocks fuse sty minb20 trim"
keep "$NAME-sweep.txt" "copy\|floor\|^tc \|rror" 24
keep "$NAME-ncu.txt" "###\|hyper_assemble (\|  [a-z0-9_]*__[a-z0-9_.]*  \|ERR" 30
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 20
cat "$OUT/$NAME-steps.txt"
