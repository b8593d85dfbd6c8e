#!/usr/bin/env bash
# Stop 59's second call: the carried scatter (`HK_CHAIN`) with its carry's loops over constant bounds (the first
# call, s59-call.sh: +50 % instructions a cell from run-time divisions, and 1.6–2.5× the default's DRAM bytes from the
# segments' longer L2 working set): the P2 sweep at 10^6 dofs, 4 points — the default, carrying over segments of 16,
# 2, 4 and 8 cells, without the register cap (no spills), node blocks trimmed with and without carrying — twice in
# opposite orders, each row checked against the default; Nsight Compute's instructions, DRAM bytes and L2 reduction
# sectors of the carrying rows; then the whole hyperelastic_cuda (`--include-ignored`) with what is left.
# Usage: bash benchmarks/h200/s59b-call.sh .dev-s59 (pack: bin.tar.xz of galerkin + tests/hyperelastic_cuda); timeout_s 590.
NAME=${NAME:-lead-s59b}; BUDGET=${BUDGET:-560}; source benchmarks/h200/call-lib.sh "$1"
D="tc cols fuse sty minb20"; C="tc chain fuse sty minb20"; C2="tc chain2 fuse sty minb20"; C4="tc chain4 fuse sty minb20"
C8="tc chain8 fuse sty minb20"; CN="tc chain fuse sty"; C4N="tc chain4 fuse sty"
BT="tc blocks fuse sty minb20 trim"; BCT="tc blocks chain fuse sty minb20 trim"; BC4T="tc blocks chain4 fuse sty minb20 trim"
sweep_passes 110 "$D,$C,$C2,$C4,$C8,$CN,$C4N,$BT,$BCT,$BC4T"
M=gpu__time_duration.sum,lts__t_sectors_op_red.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,lts__t_sector_hit_rate.pct
ncu_rows 30 "$M" 1 "$C" "$C2" "$C4N"
[ "$(left 100)" -ge 60 ] && { lane "$(left 400)" hyperelastic_cuda --test-threads 8; lanes_done; }
keep "$NAME-sweep.txt" "asm\|floor\|skipped\|rror" 24
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 40
keep "$NAME-ncu.txt" "###\|duration\|sectors\|throughput\|bytes\|inst_exec\|hit_rate" 40
cat "$OUT/$NAME-steps.txt"
