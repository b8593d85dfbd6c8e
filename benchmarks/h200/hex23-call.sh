#!/usr/bin/env bash
# hex23's device call (round 23, H200): scheme III, trunk elasticity p = 4 and p = 5, 10 000 hexahedra.
# Round 23's shapes (`TiledConfig::round23_high`, sweep rows right after each degree's default): the
# default with the alternating order by SM sub-partition (ALT_ORDER 2: warps 4–7 and 12–15 multiply
# before they stage, two of each sub-partition's four, instead of the odd warps, which share one
# sub-partition parity); p = 4 also with round 22's early copy wait, and the default not alternating;
# then the tail's packed indices from row bases (GRAM_ROWS) alone (p = 4) and with the order by sub-partition.
# 1. The GPU = CPU test of those shapes (`round23_alternating_order_matches_the_cpu`) alone.
# 2. p = 4 sweep a (default + 5 rows; the splits), p = 5 sweep (default + 2 rows; the splits), p = 4
#    sweep b; each prints its degree's table row (III first).
# 3. Nsight Compute, one launch of p = 4's default and of the sub-partition order, if time is left.
# 4. The rest of `hierarchical` with what is left. At most 8 files under $OUT.
NAME=hex23; BUDGET=${BUDGET:-232}; source benchmarks/h200/call-lib.sh "$1"
# (As run on the device, f100aa4, these steps were written out; the same steps through call-lib.sh's helpers since.)
clocks_start
have_tests=$(test -x "$T/hierarchical" && echo 1)
[ -n "$have_tests" ] && test_step 40 hierarchical round23_alternating_order_matches_the_cpu --include-ignored --nocapture
sweep() { timeout "$(left "$1")" "$G" bench --hex --degrees "$2" --cpu-cells 10 --runs 7 --tiled-sweep --sweep-shapes "$3" >> "$OUT/$NAME-sweep.txt" 2>&1; step "p = $2 sweep rc $?"; }
sweep 90 4 6                                      # a
sweep 70 5 3
[ "$(left 60)" -gt 25 ] && sweep 60 4 6           # b
if [ -n "$NCU" ] && [ "$(left 40)" -gt 30 ]; then
  # --runs 1 sweep of 2 shapes at p = 4: the table 0–6, the default 7–10, the sub-partition order 11–14: 9–12 measured.
  M=gpu__time_duration.sum,launch__registers_per_thread,smsp__inst_executed_op_shared_ld.sum,smsp__warps_eligible.avg.per_cycle_active
  M=$M,smsp__issue_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_elapsed
  ncu_step 35 "$M" -k regex:matrices_tiled --launch-skip 9 --launch-count 4 "$G" bench --hex --degrees 4 --cpu-cells 10 --runs 1 --tiled-sweep --sweep-shapes 2
fi
[ -n "$have_tests" ] && [ "$(left 100)" -gt 10 ] && test_step 100 hierarchical --include-ignored --skip round23_alternating_order_matches_the_cpu
finish "^sweep\|^ [1-5] \|timed first\|^gpu" "test result\|FAILED\|panicked\|tiled .*alt-sub\|tiled .*k-unrolled diag-b (grid" \
  "^  matrices_tiled\|==ERROR\|duration\|registers\|shared\|issue_active\|eligible\|fp64"
