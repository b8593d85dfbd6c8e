#!/usr/bin/env bash
# hex22's device call (round 22, H200): scheme III, trunk elasticity p = 4 and p = 5, 10 000 hexahedra.
# Round 22's shapes (`TiledConfig::round22_high`, opt-in sweep rows right after each degree's default):
# p = 4 the default with the previous cell's copies waited for a pass early and the last pass without
# its barrier (GRAM_EARLY_WAIT); p = 5 Gram tiles in three rounds a cell (GRAM_SPLIT2: 78, 60, 72
# tiles, 5 a warp) on 16 and 32 points a pass, with and without diag-b.
# 1. The GPU = CPU test of those shapes (`round22_gram_shapes_match_the_cpu`) alone.
# 2. p = 4 sweep a (default, early wait; the splits of both), p = 5 sweep (default + the three
#    three-round shapes; the splits), p = 4 sweep b; each prints its degree's table row (III first).
# 3. Nsight Compute, one launch of p = 4's default and of the early wait, if time is left.
# 4. The rest of `hierarchical` with what is left. At most 8 files under $OUT.
NAME=hex22; BUDGET=${BUDGET:-232}; source benchmarks/h200/call-lib.sh "$1"
o="$OUT/$NAME"
fields=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$fields --format=csv -lms 500 -i 0 > "$o-clocks.txt" 2>&1 &
smi=$!
have_tests=$(test -x "$T/hierarchical" && echo 1)
if [ -n "$have_tests" ]; then
  timeout "$(left 40)" "$T/hierarchical" round22_gram_shapes_match_the_cpu --include-ignored --nocapture >> "$o-tests.txt" 2>&1
  step "round22_gram_shapes_match_the_cpu rc $?"
fi
p4=("$G" bench --hex --degrees 4 --cpu-cells 10 --runs 7 --tiled-sweep --sweep-shapes 2)
timeout "$(left 80)" "${p4[@]}" >> "$o-sweep.txt" 2>&1; step "p = 4 sweep a rc $?"
timeout "$(left 75)" "$G" bench --hex --degrees 5 --cpu-cells 10 --runs 7 --tiled-sweep --sweep-shapes 4 >> "$o-sweep.txt" 2>&1; step "p = 5 sweep rc $?"
[ "$(left 60)" -gt 25 ] && { timeout "$(left 60)" "${p4[@]}" >> "$o-sweep.txt" 2>&1; step "p = 4 sweep b rc $?"; }
if [ -n "$NCU" ] && [ "$(left 40)" -gt 30 ]; then
  # --runs 1 sweep of 2 shapes at p = 4: the table 0–6 (as round 21), the default 7–10, the early wait 11–14: 9–12 measured.
  M=gpu__time_duration.sum,launch__registers_per_thread,smsp__inst_executed_op_shared_ld.sum,smsp__warps_eligible.avg.per_cycle_active
  M=$M,smsp__issue_active.avg.pct_of_peak_sustained_elapsed,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum
  timeout "$(left 35)" "$NCU" --clock-control none -k regex:matrices_tiled --launch-skip 9 --launch-count 4 --metrics "$M" \
    "$G" bench --hex --degrees 4 --cpu-cells 10 --runs 1 --tiled-sweep --sweep-shapes 2 >> "$o-ncu.txt" 2>&1
  step "ncu rc $?"
fi
if [ -n "$have_tests" ] && [ "$(left 100)" -gt 10 ]; then
  timeout "$(left 100)" "$T/hierarchical" --include-ignored --skip round22_gram_shapes_match_the_cpu >> "$o-tests.txt" 2>&1
  step "hierarchical rest rc $?"
fi
kill "$smi" 2>/dev/null
echo "-- sweep"; keep "$NAME-sweep.txt" "^sweep\|^split\|^ [1-5] \|floors\|timed first\|^gpu\|ceiling" 80
echo "-- tests"; keep "$NAME-tests.txt" "test result\|FAILED\|panicked\|tiled .*early\|tiled .*3-round\|^test .*FAILED" 40
[ -f "$o-ncu.txt" ] && { echo "-- ncu"; keep "$NAME-ncu.txt" "^  matrices_tiled\|==ERROR\|duration\|registers\|shared\|issue_active\|eligible\|local" 40; }
echo "-- clocks (every 10th sample)"; awk 'NR == 1 || NR % 10 == 0' "$o-clocks.txt" | cut -c1-120 | tail -20
cat "$o-steps.txt"
