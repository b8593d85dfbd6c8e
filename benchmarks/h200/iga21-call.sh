#!/usr/bin/env bash
# iga21's device call (one call, ≤ 240 s). In the background (GALERKIN_REQUIRE_GPU=1, niced):
# iga_cuda's new walk-shape test (each shape = faer's LU and the CPU, row- and column-major, 1D and
# 2D), the two tests whose CPU-twin loops became one helper (line variants; column-major lines and
# defaults) and the walk-trace test. In the foreground: 2^20 cubic elements at 1 and 256
# right-hand sides, the row-major default (gpu-rows: walk items of 32 columns × 2 threads) beside
# the walk shapes 32 × 4, 64 × 2, 64 × 4 and 128 × 2, each with its per-launch profile and the
# walk's per-level timeline, and the copy bandwidth; then, as the time allows, Nsight Compute's
# counters of the default's bottom forward and walk kernels.
# Usage: bash .dev-iga21/call.sh .dev-iga21
d=$(cd "$1" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
SECONDS=0
export RUST_BACKTRACE=1 GALERKIN_REQUIRE_GPU=1
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv; } > "$OUT/iga21-env.txt" 2>&1
# One background lane of iga_cuda: its log $OUT/iga21-tests-NAME.log, the filters after NAME.
lane() {
  local log=$OUT/iga21-tests-$1.log; shift
  timeout 220 nice "$d/tests/iga_cuda" --include-ignored --test-threads 1 "$@" > "$log" 2>&1
  echo "iga_cuda $* rc=$? at $SECONDS s" >> "$log"
}
lane shapes gpu_walk_shapes & P1=$!
lane lines gpu_separator_line_variants & P2=$!
lane misc gpu_column_major_separator_lines gpu_walk_trace & P3=$!
B="bench-iga --gpu --sweeps rhs --rhs-elements 1048576 --rhs-degree 3 --cpu-max 0"
R=$OUT/iga21-rhs256.txt
timeout 200 "$G" $B --reps 3 --rhs 1,256 --rhs-engines gpu-rows,gpu-rows-w32x4,gpu-rows-w64x2,gpu-rows-w64x4,gpu-rows-w128x2 > "$R" 2>&1
echo "bench rc=$? at $SECONDS s" >> "$R"
# The counters of the default's bottom forward (forward 0 and 1: mf_mapssbt_forward) and its walk
# (mf_mapssbet_top), for the next round's planning, where the time allows (the tests may still
# run beside it: its counters are then approximate).
N=$OUT/iga21-ncu.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
left=$((228 - SECONDS))
if [ -n "$NCU" ] && [ $left -ge 30 ]; then
  SEC="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section InstructionStats"
  timeout $left "$NCU" --clock-control none --import-source no -k "regex:^mf_mapssbe?t_(forward|top)" --launch-count 3 $SEC \
    "$G" $B --reps 1 --rhs 256 --rhs-engines gpu-rows > "$N" 2>&1
  echo "ncu rc=$? at $SECONDS s" >> "$N"
else
  echo "ncu skipped: ${left} s left, ncu '${NCU}'" > "$N"
fi
wait $P1 $P2 $P3
echo "all done at $SECONDS s: $(date -u)" >> "$OUT/iga21-env.txt"
cd "$OUT" || exit 1
grep -h "test \|test result\|rc=\|panicked" iga21-tests-*.log | cut -c1-240 | tail -n 20
grep -h "^  mf_\|Duration\|Throughput\|Issue Slots\|Achieved Occ\|rc=" "$N" | cut -c1-120 | head -n 40
grep -h "copy\|bench-iga rhs:\|rc=\|rror" "$R" | cut -c1-260
grep -h "forward \|backward \|walk \|nrhs=  256\|floor" "$R" | cut -c1-200
