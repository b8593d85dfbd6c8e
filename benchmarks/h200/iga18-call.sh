#!/usr/bin/env bash
# iga18's device call (one call, ≤ 240 s): the variants of the separator-row kernels
# (CudaMultifrontal::set_sep_lines: bulk copies, staged contributions, forward product on the tensor
# cores, combined) against faer's LU and
# the CPU twin first (GALERKIN_REQUIRE_GPU=1, alone on the GPU), then 2^20 cubic elements at 1 and
# 256 right-hand sides by the row-major default and each variant, with per-launch profiles and the
# copy bandwidth; then the other row-major tests and, if time is left, Nsight Compute on the
# bulk-and-tensor-core variant's launches of one 256-column solve.
# Usage: bash .dev-iga18/call.sh .dev-iga18
d=$(cd "$1" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
SECONDS=0
E=$OUT/iga18-env.txt
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv; } > "$E" 2>&1
export RUST_BACKTRACE=1
L=$OUT/iga18-tests.log
GALERKIN_REQUIRE_GPU=1 timeout 60 "$d/tests/iga_cuda" --include-ignored separator_line > "$L" 2>&1
echo "iga_cuda separator_line rc=$? at $SECONDS s" >> "$L"
B="bench-iga --gpu --sweeps rhs --rhs-elements 1048576 --rhs-degree 3 --cpu-max 0"
timeout 130 $G $B --reps 3 --rhs 1,256 --rhs-engines gpu-rows,gpu-rows-bulk,gpu-rows-ext2,gpu-rows-tc,gpu-rows-bulkext2tc,gpu-rows-bulkexttc > "$OUT/iga18-rhs256.txt" 2>&1
echo "bench rc=$? at $SECONDS s" >> "$OUT/iga18-rhs256.txt"
left=$((200 - SECONDS))
if [ $left -gt 15 ]; then
  GALERKIN_REQUIRE_GPU=1 timeout $left "$d/tests/iga_cuda" --include-ignored row_major >> "$L" 2>&1
  echo "iga_cuda row_major rc=$? at $SECONDS s" >> "$L"
fi
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
left=$((232 - SECONDS))
if [ -n "$NCU" ] && [ $left -gt 30 ]; then
  timeout $left "$NCU" --clock-control none --import-source no -k 'regex:^mf_mapssb' --launch-count 12 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats \
    "$G" $B --reps 1 --rhs 256 --rhs-engines gpu-rows-bulktc > "$OUT/iga18-ncu.txt" 2>&1
  echo "ncu rc=$? at $SECONDS s" >> "$OUT/iga18-ncu.txt"
fi
echo "all done at $SECONDS s: $(date -u)" >> "$E"
grep -h "test \|test result\|rc=\|panicked" "$L" | cut -c1-240 | tail -n 14
grep -h "copy\|bench-iga rhs:\|rc=\|headline\|rror" "$OUT"/iga18-rhs256.txt | cut -c1-260
grep -h "forward \|backward \|nrhs=  256\|floor" "$OUT"/iga18-rhs256.txt | cut -c1-200
