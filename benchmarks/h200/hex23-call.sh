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
o="$OUT/$NAME"
fields=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$fields --format=csv -lms 500 -i 0 > "$o-clocks.txt" 2>&1 &
smi=$!
have_tests=$(test -x "$T/hierarchical" && echo 1)
if [ -n "$have_tests" ]; then
  timeout "$(left 40)" "$T/hierarchical" round23_alternating_order_matches_the_cpu --include-ignored --nocapture >> "$o-tests.txt" 2>&1
  step "round23_alternating_order_matches_the_cpu rc $?"
fi
p4=("$G" bench --hex --degrees 4 --cpu-cells 10 --runs 7 --tiled-sweep --sweep-shapes 6)
timeout "$(left 90)" "${p4[@]}" >> "$o-sweep.txt" 2>&1; step "p = 4 sweep a rc $?"
timeout "$(left 70)" "$G" bench --hex --degrees 5 --cpu-cells 10 --runs 7 --tiled-sweep --sweep-shapes 3 >> "$o-sweep.txt" 2>&1; step "p = 5 sweep rc $?"
[ "$(left 60)" -gt 25 ] && { timeout "$(left 60)" "${p4[@]}" >> "$o-sweep.txt" 2>&1; step "p = 4 sweep b rc $?"; }
if [ -n "$NCU" ] && [ "$(left 40)" -gt 30 ]; then
  # --runs 1 sweep of 2 shapes at p = 4: the table 0–6, the default 7–10, the sub-partition order 11–14: 9–12 measured.
  M=gpu__time_duration.sum,launch__registers_per_thread,smsp__inst_executed_op_shared_ld.sum,smsp__warps_eligible.avg.per_cycle_active
  M=$M,smsp__issue_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_elapsed
  timeout "$(left 35)" "$NCU" --clock-control none -k regex:matrices_tiled --launch-skip 9 --launch-count 4 --metrics "$M" \
    "$G" bench --hex --degrees 4 --cpu-cells 10 --runs 1 --tiled-sweep --sweep-shapes 2 >> "$o-ncu.txt" 2>&1
  step "ncu rc $?"
fi
if [ -n "$have_tests" ] && [ "$(left 100)" -gt 10 ]; then
  timeout "$(left 100)" "$T/hierarchical" --include-ignored --skip round23_alternating_order_matches_the_cpu >> "$o-tests.txt" 2>&1
  step "hierarchical rest rc $?"
fi
kill "$smi" 2>/dev/null
echo "-- sweep"; keep "$NAME-sweep.txt" "^sweep\|^ [1-5] \|timed first\|^gpu" 30
echo "-- tests"; keep "$NAME-tests.txt" "test result\|FAILED\|panicked\|tiled .*alt-sub\|tiled .*k-unrolled diag-b (grid\|^test .*FAILED" 40
[ -f "$o-ncu.txt" ] && { echo "-- ncu"; keep "$NAME-ncu.txt" "^  matrices_tiled\|==ERROR\|duration\|registers\|shared\|issue_active\|eligible\|fp64" 40; }
echo "-- clocks (every 10th sample)"; awk 'NR == 1 || NR % 10 == 0' "$o-clocks.txt" | cut -c1-120 | tail -20
cat "$o-steps.txt"
