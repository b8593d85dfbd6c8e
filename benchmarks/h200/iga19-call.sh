#!/usr/bin/env bash
# iga19's device call (one call, ≤ 240 s): iga_cuda's separator-line test (round 18's variants with
# the corrected dispatch expectation, and round 19's walk of the passes near the root by lines,
# SepLines::top, against faer's LU and the CPU twin) and the GPU = CPU test of round 12's walk
# (refactored) in the background (GALERKIN_REQUIRE_GPU=1, niced); in the foreground 2^20 cubic
# elements at 1 and 256 right-hand sides: the row-major default, round 18's best and the walk, with
# per-launch profiles and the copy bandwidth; if the tests are done and time is left, Nsight
# Compute on one walk launch.
# Usage: bash .dev-iga19/call.sh .dev-iga19
d=$(cd "$1" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
SECONDS=0
E=$OUT/iga19-env.txt
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv; } > "$E" 2>&1
export RUST_BACKTRACE=1
L=$OUT/iga19-tests.log
L2=$OUT/iga19-tests-walk12.log
( GALERKIN_REQUIRE_GPU=1 timeout 215 nice "$d/tests/iga_cuda" --include-ignored separator_line > "$L" 2>&1
  echo "iga_cuda separator_line rc=$? at $SECONDS s" >> "$L" ) &
T1=$!
( GALERKIN_REQUIRE_GPU=1 timeout 150 nice "$d/tests/iga_cuda" --include-ignored --test-threads 1 gpu_and_cpu_multifrontal_agree row_major_solves > "$L2" 2>&1
  echo "iga_cuda walk12+row_major rc=$? at $SECONDS s" >> "$L2" ) &
T2=$!
B="bench-iga --gpu --sweeps rhs --rhs-elements 1048576 --rhs-degree 3 --cpu-max 0"
R=$OUT/iga19-rhs256.txt
timeout 120 $G $B --reps 3 --rhs 1,256 --rhs-engines gpu-rows,gpu-rows-bulkext2tc,gpu-rows-bulkext2tctop,gpu-rows-bulkext2top > "$R" 2>&1
echo "bench rc=$? at $SECONDS s" >> "$R"
wait $T2
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
left=$((200 - SECONDS))
if [ -n "$NCU" ] && [ $left -gt 45 ] && ! kill -0 $T1 2>/dev/null; then
  timeout $left "$NCU" --clock-control none --import-source no -k 'regex:^mf_mapssbet_top' --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats \
    "$G" $B --reps 1 --rhs 256 --rhs-engines gpu-rows-bulkext2tctop > "$OUT/iga19-ncu.txt" 2>&1
  echo "ncu rc=$? at $SECONDS s" >> "$OUT/iga19-ncu.txt"
fi
wait $T1
echo "all done at $SECONDS s: $(date -u)" >> "$E"
grep -h "test \|test result\|rc=\|panicked" "$L" "$L2" | cut -c1-240 | tail -n 16
grep -h "copy\|bench-iga rhs:\|rc=\|headline\|rror" "$R" | cut -c1-260
grep -h "forward \|backward \|walk \|nrhs=  256\|floor" "$R" | cut -c1-200
