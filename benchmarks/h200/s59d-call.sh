#!/usr/bin/env bash
# Stop 59's fourth call: the carried scatter (`HK_CHAIN`) with the cells in Hilbert order (rows `… hilbert`), against
# the same rows in the mesh's order and the default and node blocks in both — P2 sweep at 10^6 dofs, 4 points, twice in opposite orders, each row checked against the default;
# Nsight Compute's DRAM bytes and L2 reductions of the carried rows. Found: every `hilbert` row equals its twin —
# the problem's mesh is already in Hilbert order (`reorder_for_locality`), so the order is not the segments' cost.
# Usage: bash benchmarks/h200/s59d-call.sh .dev-s59d (pack: bin.tar.xz of galerkin); timeout_s 260.
NAME=${NAME:-lead-s59d}; BUDGET=${BUDGET:-230}; source benchmarks/h200/call-lib.sh "$1"
D="tc cols fuse sty minb20"; BT="tc blocks fuse sty minb20 trim"; C="tc chain fuse sty minb20"; C2="tc chain2 fuse sty minb20"
C4="tc chain4 fuse sty minb20"; C4N="tc chain4 fuse sty"; BC4T="tc blocks chain4 fuse sty minb20 trim"
R="$D,$D hilbert,$BT,$BT hilbert,$C2 hilbert,$C4 hilbert,$C4N,$C4N hilbert,$BC4T,$BC4T hilbert,$C hilbert"
sweep_passes 80 "$R"
M=gpu__time_duration.sum,lts__t_sectors_op_red.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum,lts__t_sector_hit_rate.pct
ncu_rows 30 "$M" 1 "$C4N hilbert" "$BC4T hilbert" "$D hilbert"
keep "$NAME-sweep.txt" "asm\|floor\|skipped\|rror" 26
keep "$NAME-ncu.txt" "###\|duration\|sectors\|throughput\|bytes\|inst_exec\|hit_rate" 30
cat "$OUT/$NAME-steps.txt"
