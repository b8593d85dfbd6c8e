#!/usr/bin/env bash
# hex20's device call (round 20, H200): scheme III, trunk elasticity p = 4, 10 000 hexahedra.
# Round 20's shapes (`TiledConfig::round20_high`, opt-in sweep rows right after the default):
# each strip's two diagonal Gram tiles fed from the strip's A fragment (GRAM_DIAG: 80 of ~590
# fragment loads a k16-step fewer), alone, with unrolled k-steps (16, 20 warps) and on transposed
# passes; and the passes staged from the gradient table instead of the factor tables (fewer FP64
# products on the pipe the FP64 MMAs share), with and without the diagonal fragments.
# 1. The GPU = CPU test of the Gram-tile shapes (`gram_tiles_match_the_cpu`, with round 20's) alone.
# 2. The p = 4 sweep on a quiet GPU (default first, then round 20's six; splits of the default and
#    the first two); it also prints p = 4's table row (III timed first).
# 3. Nsight Compute: launches 9–17 of matrices_tiled in a --runs 1 sweep of 3 shapes (the table's
#    III 0–2, after the others 3–5, the round-4 reference 6, the default 7–10, diag-b 11–14,
#    diag-b table-staged 15–18): shared-memory load/store instructions and wavefronts, FP64 pipe.
# 4. The sweep again in a second process; the rest of `hierarchical` with what is left.
# At most 8 files under $OUT. Run as `bash .dev-hex20/call.sh .dev-hex20`.
d=$(cd "${1:-$(dirname "$0")}" && pwd); t="$d/tests"; g="$d/galerkin"; o="$OUT/hex20"
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
[ -n "$have_tests" ] && run "gram_tiles_match_the_cpu" 65 "$o-tests.log" "$t/hierarchical" gram_tiles_match_the_cpu --include-ignored --nocapture
p4=("$g" bench --hex --degrees 4 --cpu-cells 100 --runs 7 --tiled-sweep --sweep-shapes 7)
run "p = 4 sweep a (7 shapes)" 80 "$o-sweep.txt" "${p4[@]}"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ] && [ "$(left 60)" -gt 40 ]; then
  M=gpu__time_duration.sum,launch__block_size,launch__registers_per_thread,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
  M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,smsp__inst_executed_pipe_fp64.sum
  M=$M,sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_elapsed
  sel=("$NCU" --clock-control none -k regex:matrices_tiled --launch-skip 9 --launch-count 9)
  app=("$g" bench --hex --degrees 4 --cpu-cells 10 --runs 1 --tiled-sweep --sweep-shapes 3)
  run "ncu (metrics)" 45 "$o-ncu.txt" "${sel[@]}" --metrics "$M" "${app[@]}"
  grep -q "smsp__inst_executed_op_shared_ld" "$o-ncu.txt" || run "ncu (sections)" 45 "$o-ncu.txt" "${sel[@]}" --section SpeedOfLight --section LaunchStats --section ComputeWorkloadAnalysis "${app[@]}"
  note "ncu: $(grep -c '^  matrices_tiled' "$o-ncu.txt") launches"
fi
[ "$(left 100)" -gt 50 ] && run "p = 4 sweep b (7 shapes)" 100 "$o-sweep.txt" "${p4[@]}"
[ -n "$have_tests" ] && [ "$(left 100)" -gt 10 ] && run "hierarchical rest" 100 "$o-tests.log" "$t/hierarchical" --include-ignored --skip gram_tiles_match_the_cpu
kill "$smi" 2>/dev/null
echo "-- sweep"; grep -h "^sweep\|^split" "$o-sweep.txt"
grep -h "^ [1-5] \|floors\|timed first\|^gpu" "$o-sweep.txt"
[ -f "$o-tests.log" ] && grep -h "test result\|FAILED\|panicked\|^test .* \(ok\|FAILED\)$\|diag-b\|table.*gram" "$o-tests.log" | grep -v " ok$" | tail -30
[ -f "$o-ncu.txt" ] && grep -h "^  matrices_tiled\|^sweep\|==ERROR\|duration\|block_size\|registers\|shared\|fp64\|inst_executed.sum\|issue_active\|Block Size\|Registers Per\|Duration\|Pipe\|Issue Slots" "$o-ncu.txt" | cut -c1-150 | head -150
echo "-- clocks (every 10th sample)"; awk 'NR == 1 || NR % 10 == 0' "$o-clocks.txt" | cut -c1-120 | tail -30
cat "$o-steps.txt"
