#!/usr/bin/env bash
# hex21's device call (round 21, H200): scheme III, trunk elasticity p = 5 (and p = 4's row), 10 000 hexahedra.
# Round 21's shapes (`TiledConfig::round21_high`, opt-in sweep rows right after p = 5's default):
# Gram tiles at p = 5 in two rounds a cell (GRAM_SPLIT: 138 tiles on the rows of functions 0–31,
# then 72 on the rest's; the second round stages only its own functions), on m16n8k16 with and
# without the diagonal tiles' B fragments from the A fragment, on m16n8k8 (k-steps unrolled), and
# on 20 warps.
# 1. The GPU = CPU test of the two-round shapes (`two_round_gram_tiles_match_the_cpu`: 27 distorted
#    cells, resident grid and 2 blocks; symmetry and rigid-body null space) alone.
# 2. The p = 5 sweep on a quiet GPU (default first, then round 21's four; splits of the default and
#    the first new shape); it also prints p = 5's table row (III timed first).
# 3. Nsight Compute: one launch of the default and of the first new shape (sweep --runs 1).
# 4. The p = 5 sweep again (b); p = 4's sweep (2 shapes: the default's kernel is unchanged); the rest
#    of `hierarchical` with what is left.
# At most 8 files under $OUT. Run as `bash .dev-hex21/call.sh .dev-hex21`.
d=$(cd "${1:-$(dirname "$0")}" && pwd); t="$d/tests"; g="$d/galerkin"; o="$OUT/hex21"
t0=$(date +%s); budget=${BUDGET:-232}
# left N: seconds a step may take, at most N and what the budget has left.
left() { local l=$((t0 + budget - $(date +%s))); l=$((l < $1 ? l : $1)); echo $((l < 1 ? 1 : l)); }
# run TAG SECS LOG CMD...: CMD under a timeout of `left SECS`, appended to LOG; its exit noted in the steps.
run() { local tag=$1 secs=$2 log=$3; shift 3; timeout "$(left "$secs")" "$@" >> "$log" 2>&1; note "$tag rc $?"; }
note() { echo "== $(( $(date +%s) - t0 )) s $(date -u +%T): $1" | tee -a "$o-steps.txt" >&2; }
test -x "$g" || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi -L > "$o-steps.txt" 2>&1
fields=timestamp,clocks.sm,power.draw,temperature.gpu
nvidia-smi --query-gpu=$fields,clocks_event_reasons.active --format=csv,noheader -i 0 > /dev/null 2>&1 && fields=$fields,clocks_event_reasons.active || fields=$fields,clocks_throttle_reasons.active
nvidia-smi --query-gpu=$fields --format=csv -lms 500 -i 0 > "$o-clocks.txt" 2>&1 &
smi=$!
note "unpacked"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
have_tests=$(test -x "$t/hierarchical" && echo 1)
[ -n "$have_tests" ] && run "two_round_gram_tiles_match_the_cpu" 60 "$o-tests.log" "$t/hierarchical" two_round_gram_tiles_match_the_cpu --include-ignored --nocapture
p5=("$g" bench --hex --degrees 5 --cpu-cells 100 --runs 7 --tiled-sweep --sweep-shapes 5)
run "p = 5 sweep a (5 shapes)" 75 "$o-sweep.txt" "${p5[@]}"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ] && [ "$(left 60)" -gt 45 ]; then
  # --runs 1 sweep of 2 shapes at p = 5: the table's III 0–2, after the others 3–5, the round-4
  # reference 6, the default 7–10, the first two-round Gram shape 11–14: launches 9–12 measured.
  M=gpu__time_duration.sum,launch__block_size,launch__registers_per_thread,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
  M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_pipe_fp64.sum,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed
  M=$M,sm__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_elapsed,smsp__warps_eligible.avg.per_cycle_active,l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum
  sel=("$NCU" --clock-control none -k regex:matrices_tiled --launch-skip 9 --launch-count 4)
  app=("$g" bench --hex --degrees 5 --cpu-cells 10 --runs 1 --tiled-sweep --sweep-shapes 2)
  run "ncu (metrics)" 45 "$o-ncu.txt" "${sel[@]}" --metrics "$M" "${app[@]}"
  note "ncu: $(grep -c '^  matrices_tiled' "$o-ncu.txt") launches"
fi
[ "$(left 75)" -gt 50 ] && run "p = 5 sweep b (5 shapes)" 75 "$o-sweep.txt" "${p5[@]}"
[ "$(left 40)" -gt 30 ] && run "p = 4 sweep (2 shapes)" 40 "$o-sweep.txt" "$g" bench --hex --degrees 4 --cpu-cells 100 --runs 7 --tiled-sweep --sweep-shapes 2
[ -n "$have_tests" ] && [ "$(left 100)" -gt 10 ] && run "hierarchical rest" 100 "$o-tests.log" "$t/hierarchical" --include-ignored --skip two_round_gram_tiles_match_the_cpu
kill "$smi" 2>/dev/null
echo "-- sweep"; grep -h "^sweep\|^split" "$o-sweep.txt"
grep -h "^ [1-5] \|floors\|timed first\|^gpu" "$o-sweep.txt"
[ -f "$o-tests.log" ] && grep -h "test result\|FAILED\|panicked\|^test .* \(ok\|FAILED\)$\|two-round\|p = 5 tiled" "$o-tests.log" | grep -v " ok$" | tail -30
[ -f "$o-ncu.txt" ] && grep -h "^  matrices_tiled\|^sweep\|==ERROR\|duration\|block_size\|registers\|shared\|fp64\|inst_executed.sum\|issue_active\|eligible\|local" "$o-ncu.txt" | cut -c1-150 | head -120
echo "-- clocks (every 10th sample)"; awk 'NR == 1 || NR % 10 == 0' "$o-clocks.txt" | cut -c1-120 | tail -30
cat "$o-steps.txt"
