#!/usr/bin/env bash
# Stop 59's call: issue 17 on the H100 — the thirty-fourth pass's carried scatter (`HK_CHAIN`: a warp per segment of
# face neighbours, each cell keeping the node blocks it shares with the next for it; src/hyperelastic/chain.rs). The P2
# sweep at 10^6 dofs, 4 points — the default, the default carrying (segments of 16, 8, 32), carrying and trimmed, node
# blocks trimmed with and without carrying — twice in opposite orders (every row's residual and Jacobian checked against
# the default's: `check`); the GPU = CPU tests of the carried scatter and of node blocks; Nsight Compute's L2 reduction
# sectors of the default and the carrying rows; then the rest of hyperelastic_cuda as the budget allows.
# Usage: bash benchmarks/h200/s59-call.sh .dev-s59 (pack: bin.tar.xz of galerkin + tests/<binary>); timeout_s 560.
NAME=${NAME:-lead-s59}; BUDGET=${BUDGET:-420}; source benchmarks/h200/call-lib.sh "$1"
D="tc cols fuse sty minb20"; C="tc chain fuse sty minb20"; CT="tc chain fuse sty minb20 trim"
BT="tc blocks fuse sty minb20 trim"; BCT="tc blocks chain fuse sty minb20 trim"
C8="tc chain8 fuse sty minb20"; C32="tc chain32 fuse sty minb20"
sweep_passes 100 "$D,$C,$CT,$BT,$BCT,$C8,$C32"
lane 150 hyperelastic_cuda --test-threads 4 gpu_chain gpu_blocks_equal_the_cpu; lanes_done
M=gpu__time_duration.sum,lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum
ncu_rows 40 "$M" 3 "$D" "$C" "$BCT"
[ "$(left 100)" -ge 60 ] && { lane "$(left 300)" hyperelastic_cuda --test-threads 8 --skip gpu_chain --skip gpu_blocks_equal_the_cpu; lanes_done; }
keep "$NAME-sweep.txt" "asm\|floor\|sectors\|skipped\|rror" 24
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 40
keep "$NAME-ncu.txt" "###\|hyper_assemble\|duration\|sectors\|requests\|throughput\|bytes\|inst_exec" 40
cat "$OUT/$NAME-steps.txt"
