#!/usr/bin/env bash
# Stop 68's call: issue 17's P2 Jacobian with the node blocks added by bulk reductions — one a block (stop 65,
# `HK_SCATTER_BULK`), padded to 80 bytes (stop 66, `HK_BULK_PAD`) and a node row's neighbouring blocks merged into one
# padded run (stop 68, `HK_BULK_RUNS`) — their test against the CPU (`gpu_blocks_equal_the_cpu`, every law), the sweep
# rows beside the default, node blocks and the no-scatter bound (two passes, opposite orders), and, time left, Nsight
# Compute's L2 counters of the node-block, padded and merged rows.
# Usage: bash benchmarks/h200/s68-call.sh .dev-s68 (pack: galerkin and tests/hyperelastic_cuda); timeout_s 330 (BUDGET 300).
NAME=${NAME:-lead-s68}; BUDGET=${BUDGET:-300}; source benchmarks/h200/call-lib.sh "$1"
sweep_passes 60 "tc bulk runs fuse sty minb20 trim,tc bulk pad fuse sty minb20 trim,tc blocks fuse sty minb20 trim,tc cols fuse sty minb20,tc bulk fuse sty minb20 trim,tc no-scatter fuse sty minb20 trim,tc bulk runs fuse sty minb20"
lane 90 hyperelastic_cuda --test-threads 4 gpu_blocks_equal_the_cpu
lanes_done
M=gpu__time_duration.sum,lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,smsp__issue_active.avg.pct_of_peak_sustained_elapsed
ncu_rows 30 "$M" 1 "tc bulk runs fuse sty minb20 trim" "tc bulk pad fuse sty minb20 trim" "tc blocks fuse sty minb20 trim"
keep "$NAME-sweep.txt" "copy\|floor\|^tc \|rror" 28
keep "$NAME-ncu.txt" "###\|hyper_assemble (\|  [a-z0-9_]*__[a-z0-9_.]*  \|ERR" 40
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 20
cat "$OUT/$NAME-steps.txt"
