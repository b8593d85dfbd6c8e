#!/usr/bin/env bash
# hex19's device call (round 19, H200): scheme III, trunk elasticity p = 4, 10 000 hexahedra.
# The round-18 profile found the Gram-tile kernel latency-bound (16 warps an SM at 128 registers).
# Round 19 puts more warps on G's 100 tiles (20, 25, 32: fewer accumulators, fewer registers a
# lane, more warps an SM) and unrolls a pass's k-steps (`TiledConfig::round19_high`).
# 1. The GPU = CPU test of the Gram-tile shapes (`gram_tiles_match_the_cpu`, with round 19's) alone.
# 2. The p = 4 sweep on a quiet GPU (the default, then round 19's six shapes, with the splits of
#    every one; rows printed as measured, with registers and local bytes); it also prints
#    p = 4's table row (III timed first). Then the rest of `hierarchical` (niced, background).
# 3. Nsight Compute on one launch of each launch configuration of the first four sweep shapes
#    (block sizes 512, 640, 800, 1024: the default and the wider blocks): occupancy, eligible
#    warps, stalls.
# 4. The sweep again in a second process where time is left.
# At most 8 files under $OUT. Run as `bash .dev-hex19/call.sh .dev-hex19`.
d=$(cd "${1:-$(dirname "$0")}" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-232}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hex19-steps.txt" >&2; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi -L > "$OUT/hex19-steps.txt" 2>&1
q=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$q --format=csv,noheader -i 0 > /dev/null 2>&1 || q=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active
nvidia-smi --query-gpu=$q --format=csv -lms 500 -i 0 > "$OUT/hex19-clocks.txt" 2>&1 &
smi=$!
step "unpacked"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
t="$d/tests"
if [ -x "$t/hierarchical" ]; then
  timeout "$(left 45)" "$t/hierarchical" gram_tiles_match_the_cpu --include-ignored --nocapture > "$OUT/hex19-tests.log" 2>&1
  step "gram_tiles_match_the_cpu rc $?"
fi
sweep() {  # tag shapes seconds
  timeout "$(left $3)" "$d/galerkin" bench --hex --degrees 4 --runs 7 --cpu-cells 100 --tiled-sweep --sweep-shapes "$2" >> "$OUT/hex19-sweep.txt" 2>&1
  step "p = 4 sweep $1 (first $2 shapes) rc $?"
}
sweep a 7 100
(
  [ -x "$t/hierarchical" ] && timeout "$(left 225)" nice "$t/hierarchical" --include-ignored --skip gram_tiles_match_the_cpu >> "$OUT/hex19-tests.log" 2>&1
  step "hierarchical rest rc $?"
) &
tests=$!
# Nsight Compute: one launch per launch configuration (grid, block, shared memory) of matrices_tiled.
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ] && [ "$(left 60)" -gt 40 ]; then
  SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis"
  timeout "$(left 55)" "$NCU" --clock-control none --import-source no -k regex:matrices_tiled --filter-mode per-launch-config --launch-count 1 $SEC \
    "$d/galerkin" bench --hex --degrees 4 --runs 1 --cpu-cells 10 --tiled-sweep --sweep-shapes 4 > "$OUT/hex19-ncu.txt" 2>&1
  step "ncu rc $? ($(grep -c '^  matrices_tiled' "$OUT/hex19-ncu.txt") launches)"
fi
[ "$(left 100)" -gt 60 ] && sweep b 7 "$(left 100)"
wait "$tests"
step "tests done"
kill "$smi" 2>/dev/null
echo "-- sweep"; grep -h "^sweep\|^split" "$OUT/hex19-sweep.txt"
grep -h "^ [1-5] \|floors\|timed first\|^gpu" "$OUT/hex19-sweep.txt"
[ -f "$OUT/hex19-tests.log" ] && grep -h "test result\|FAILED\|panicked\|^test .* \(ok\|FAILED\)$" "$OUT/hex19-tests.log" | grep -v " ok$" | tail -30
[ -f "$OUT/hex19-ncu.txt" ] && grep -h "^  matrices_tiled\|Block Size\|Registers Per\|Achieved Occupancy\|Theoretical Occupancy\|No Eligible\|Eligible Warps\|Issued Warp\|Duration\|Warp Cycles Per Issued" "$OUT/hex19-ncu.txt" | head -120
echo "-- clocks (every 10th sample)"; awk 'NR == 1 || NR % 10 == 0' "$OUT/hex19-clocks.txt" | cut -c1-120 | tail -40
cat "$OUT/hex19-steps.txt"
