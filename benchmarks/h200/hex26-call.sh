#!/usr/bin/env bash
# hex26's device call (round 26, H200): scheme III, trunk elasticity p = 4 and p = 5, 10 000 hexahedra.
# Supersedes round 25's hex25-call.sh (removed, in git history): it measures round 25's candidates
# and round 26's against the default in the same sweeps. Round 25 (`TiledConfig::round25_high`): the
# functions' scales in the tail (`tail-scales`, FN_REGS 1: no spills), with 16-byte staging loads
# (`wide-stage`). Round 26
# (`TiledConfig::round26_high`): the Gram tile indices warp-uniform (`uniform-tiles`, UNIFORM_TILES:
# uniform registers), p = 4 with the factor ids in registers (`fn-regs`: 0 B of stack, round 25's
# 48 B), alone and with 16-byte loads, and the tail's node pairs by classes of rows mod 16
# (`pair-classes`, PAIR_CLASSES: no bank conflicts in the blocks) on three of them; p = 5 `tail-scales
# wide-stage uniform-tiles`. Round 27 (hex27, host only) adds no row and no test: its candidates
# (the diagonal tiles' B fragments by uniform branches, tiles known present or whole tile lists at
# compile time, the image stores by shuffles) were ruled out by ptxas / SASS counts and counted
# wavefronts (BENCHMARKS, 27th pass;
# hex27-ptxas.sh, hex27-image.py), so this call is the area's call for rounds 25–27 as it stood;
# round 27 adds step 4 only, which checks its model of executed instructions.
# 1. The GPU = CPU tests of round 25's and round 26's shapes (a broken kernel costs little).
# 2. p = 4 sweep a — the first 8 rows: the default, tail-scales, tail-scales wide-stage, then round
#    26's five (tail-scales uniform-tiles pair-classes, fn-regs uniform-tiles, tail-scales wide-stage
#    uniform-tiles pair-classes, fn-regs wide-stage uniform-tiles, fn-regs uniform-tiles
#    pair-classes); the splits of the default and of tail-scales wide-stage; p = 5 sweep (the
#    default, tail-scales, tail-scales wide-stage, tail-scales wide-stage uniform-tiles; the
#    default's splits); p = 4 sweep b. Each prints its degree's table row (III timed first).
# 3. Nsight Compute if time is left: p = 4's first five rows (shared wavefronts, local-memory
#    sectors, instructions, L1 hit rate, issue, eligible warps).
# 4. (round 27) Nsight Compute if ≥ 15 s are left: executed SASS instructions by opcode of one launch
#    of p = 4's default — hex27's model says the diagonal tiles' FSELs are 1 280 a cell (20 tiles ×
#    8 k-steps × 8), not 112 a warp-pass, and the multiply loop's DMMA 800 a cell.
# The clock log throughout. At most 8 files under $OUT: steps, clocks, tests, sweep, ncu.
# Run: carry [".dev-r26"], command "bash benchmarks/h200/hex26-call.sh .dev-r26", timeout_s 300
# (needs the pack's CLI `galerkin` and its test binary `tests/hierarchical`).
NAME=hex26; BUDGET=${BUDGET:-232}; source benchmarks/h200/call-lib.sh "$1"
clocks_start
[ -x "$T/hierarchical" ] && test_step 85 hierarchical round25_staging_loads_match_the_cpu round26_uniform_tiles_and_pair_classes_match_the_cpu --include-ignored --nocapture
# One sweep (degree $1, its first $2 shapes, at most $3 s) with its degree's table row, only with 30 s left.
sweep() {
  [ "$(left 60)" -gt 30 ] || return 0
  timeout "$(left "$3")" "$G" bench --hex --degrees "$1" --cpu-cells 10 --runs 7 --tiled-sweep --sweep-shapes "$2" >> "$OUT/$NAME-sweep.txt" 2>&1
  step "p = $1 sweep rc $?"
}
sweep 4 8 50   # a
sweep 5 4 45
sweep 4 8 30   # b (the kernels cached by a)
MET="gpu__time_duration.sum launch__registers_per_thread launch__shared_mem_config_size smsp__inst_executed.sum
  smsp__inst_executed_op_shared_ld.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum l1tex__t_sector_hit_rate.pct
  l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum
  smsp__issue_active.avg.pct_of_peak_sustained_elapsed smsp__warps_eligible.avg.per_cycle_active
  sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_elapsed"
# --runs 1 sweep of 5 shapes at p = 4: the table 0–6, then 4 launches a shape (the default 7–10,
# tail-scales 11–14, wide-stage 15–18, tail-scales uniform pair-classes 19–22, fn-regs uniform
# 23–26): 9–26 measured.
[ -n "$NCU" ] && [ "$(left 45)" -gt 25 ] && ncu_step 45 "$(echo $MET | tr ' ' ',')" -k regex:matrices_tiled --launch-skip 9 --launch-count 18 \
  "$G" bench --hex --degrees 4 --cpu-cells 10 --runs 1 --tiled-sweep --sweep-shapes 5
# (round 27) --runs 1 sweep of 1 shape: the table 0–6, the default 7–10; launch 9 (its third) by opcode.
[ -n "$NCU" ] && [ "$(left 20)" -gt 15 ] && ncu_step 20 sass__inst_executed_per_opcode --print-metric-instances details \
  -k regex:matrices_tiled --launch-skip 9 --launch-count 1 "$G" bench --hex --degrees 4 --cpu-cells 10 --runs 1 --tiled-sweep --sweep-shapes 1
finish "^sweep\|^ [1-5] \|timed first\|^gpu\|^split" "test result\|FAILED\|panicked\|(grid" \
  "^  matrices_tiled\|==ERROR\|duration\|registers\|config_size\|inst_executed\|wavefronts\|hit_rate\|local_op\|issue_active\|eligible\|pipe_shared\|per_opcode"
