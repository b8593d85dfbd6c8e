#!/usr/bin/env bash
# hex25's device call (round 25, H200): scheme III, trunk elasticity p = 4 and p = 5, 10 000 hexahedra.
# Round 25's shapes (`TiledConfig::round25_high`, sweep rows right after each degree's default): the
# functions' scales applied in the tail with the signs' products, both formed there (`tail-scales`,
# FN_REGS 1: no scale load an entry, no sign products held across the passes — ptxas: no spills at
# p = 4 and 5), with each factor's value and derivative adjacent (`wide-stage`, STAGE_WIDE: one 16-byte
# load for both), each with row bases, and the factor ids in registers too (`fn-regs`, FN_REGS 2);
# p = 4's sweep ends with round 24's fn-factors, what they are measured against.
# 1. The GPU = CPU test of the new shapes (`round25_staging_loads_match_the_cpu`).
# 2. p = 4 sweep a (default + 5 rows + fn-factors; splits of the default and of tail-scales +
#    wide-stage), p = 5 sweep (default + tail-scales + both; the default's splits), p = 4 sweep b.
#    Each prints its degree's table row (III timed first).
# 3. Nsight Compute if time is left: one launch pair each of p = 4's default, tail-scales and
#    wide-stage (shared wavefronts, instructions, L1 hit rate, local-memory sectors, the carveout).
# At most 8 files under $OUT: steps, clocks, tests, sweep, ncu.
NAME=hex25; BUDGET=${BUDGET:-232}; source benchmarks/h200/call-lib.sh "$1"
clocks_start
[ -x "$T/hierarchical" ] && test_step 60 hierarchical round25_staging_loads_match_the_cpu --include-ignored --nocapture
# One sweep (degree $1, its first $2 shapes, at most $3 s) with its degree's table row, only with 30 s left.
sweep() {
  [ "$(left 60)" -gt 30 ] || return 0
  timeout "$(left "$3")" "$G" bench --hex --degrees "$1" --cpu-cells 10 --runs 7 --tiled-sweep --sweep-shapes "$2" >> "$OUT/$NAME-sweep.txt" 2>&1
  step "p = $1 sweep rc $?"
}
sweep 4 7 60   # a
sweep 5 3 55
sweep 4 7 60   # b
MET="gpu__time_duration.sum launch__registers_per_thread launch__shared_mem_config_size smsp__inst_executed.sum
  smsp__inst_executed_op_shared_ld.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum l1tex__t_sector_hit_rate.pct
  l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum
  smsp__issue_active.avg.pct_of_peak_sustained_elapsed smsp__warps_eligible.avg.per_cycle_active
  sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_elapsed"
# --runs 1 sweep of 3 shapes at p = 4: the table 0–6, the default 7–10, tail-scales 11–14, wide-stage 15–18: 9–16 measured.
[ -n "$NCU" ] && [ "$(left 45)" -gt 25 ] && ncu_step 40 "$(echo $MET | tr ' ' ',')" -k regex:matrices_tiled --launch-skip 9 --launch-count 8 \
  "$G" bench --hex --degrees 4 --cpu-cells 10 --runs 1 --tiled-sweep --sweep-shapes 3
finish "^sweep\|^ [1-5] \|timed first\|^gpu\|^split" "test result\|FAILED\|panicked\|(grid" \
  "^  matrices_tiled\|==ERROR\|duration\|registers\|config_size\|inst_executed\|wavefronts\|hit_rate\|local_op\|issue_active\|eligible\|pipe_shared"
