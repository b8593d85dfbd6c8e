#!/usr/bin/env bash
# hex24's device call (round 24, H200): scheme III, trunk elasticity p = 4 and p = 5, 10 000 hexahedra.
# Round 24's shapes (`TiledConfig::round24_high`, sweep rows right after each degree's default): p = 4's
# default staging from factor tables a function at a time (fewer shared-memory wavefronts a cell) — x's
# factor and the (y, z) planes (`fn-planes`), the three 1D factors (`fn-factors`), the planes with row
# bases, and with row bases and the order by sub-partition; p = 5's default with row bases alone, and with the
# three 1D factors a function (its planes do not fit the block).
# 1. The GPU = CPU tests: the new shapes' (`round24_function_tables_match_the_cpu`) and the one the lead's
#    lanes never ran since a841287 (`wide_writes_and_register_caps_match_the_cpu`, brief item 3).
# 2. p = 4 sweep a (default + 4 rows; splits of the default and of fn-planes), p = 5 sweep (default + row
#    bases + the 1D layout; the default's splits), p = 4 sweep b; each prints its degree's table row (III first).
# 3. Nsight Compute, one launch of p = 4's default and of fn-planes, if time is left. At most 8 files under $OUT.
# (As run on the device, c51ff0c, the sweeps were three calls of a helper; the same steps as a loop since.)
NAME=hex24; BUDGET=${BUDGET:-232}; source benchmarks/h200/call-lib.sh "$1"
clocks_start
have_tests=$(test -x "$T/hierarchical" && echo 1)
[ -n "$have_tests" ] && test_step 50 hierarchical round24_function_tables_match_the_cpu wide_writes_and_register_caps_match_the_cpu --include-ignored --nocapture
# The sweeps: seconds, degree, shapes (p = 4 a, p = 5, p = 4 b if 30 s are left), then ncu's metrics.
for spec in "60 4 5" "55 5 3" "60 4 5"; do
  read -r secs deg shapes <<< "$spec"
  [ "$(left 60)" -gt 30 ] || break
  timeout "$(left "$secs")" "$G" bench --hex --degrees "$deg" --cpu-cells 10 --runs 7 --tiled-sweep --sweep-shapes "$shapes" >> "$OUT/$NAME-sweep.txt" 2>&1
  step "p = $deg sweep rc $?"
done
MET="gpu__time_duration.sum launch__registers_per_thread smsp__inst_executed_op_shared_ld.sum smsp__warps_eligible.avg.per_cycle_active
  smsp__issue_active.avg.pct_of_peak_sustained_elapsed sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed
  sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_elapsed l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum smsp__inst_executed.sum"
# --runs 1 sweep of 2 shapes at p = 4: the table 0–6, the default 7–10, fn-planes 11–14: 9–12 measured.
[ -n "$NCU" ] && [ "$(left 40)" -gt 25 ] && ncu_step 35 "$(echo $MET | tr ' ' ',')" -k regex:matrices_tiled --launch-skip 9 --launch-count 4 \
  "$G" bench --hex --degrees 4 --cpu-cells 10 --runs 1 --tiled-sweep --sweep-shapes 2
finish "^sweep\|^ [1-5] \|timed first\|^gpu\|^split" "test result\|FAILED\|panicked\|fn-\|row-bases (grid\|^p = [2-5] tiled .*wide" \
  "^  matrices_tiled\|==ERROR\|duration\|registers\|shared\|issue_active\|eligible\|fp64\|inst_executed.sum"
