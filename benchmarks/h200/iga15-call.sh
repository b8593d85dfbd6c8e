#!/usr/bin/env bash
# iga15's device call (one call, ≤ 270 s): (A) alone on the GPU, 1 and 256 columns at 2^20 cubic
# elements by the default (column-major) and the row-major engine (`gpu-rows`), with per-launch
# profiles; then the GPU tests iga_cuda and iga_batched in the background beside (B) the brief's
# sweep 1, 16, 256, 1024 of both; (C) if time is left, Nsight Compute on the row-major bottom passes.
# Usage: bash .dev-iga15/call.sh .dev-iga15
d=$(cd "$1" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
SECONDS=0
E=$OUT/iga15-env.txt
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv; } > "$E" 2>&1
export RUST_BACKTRACE=1
B="bench-iga --gpu --sweeps rhs --rhs-elements 1048576 --rhs-degree 3 --cpu-max 0"
timeout 60 $G $B --reps 5 --rhs 1,256 --rhs-engines gpu,gpu-rows > "$OUT/iga15-rhs256.txt" 2>&1
echo "bench A rc=$? at $SECONDS s" >> "$OUT/iga15-rhs256.txt"
for t in iga_cuda iga_batched; do
  ( GALERKIN_REQUIRE_GPU=1 timeout $((255 - SECONDS)) "$d/tests/$t" --include-ignored > "$OUT/iga15-$t.log" 2>&1; echo "$t rc=$? at $SECONDS s" >> "$OUT/iga15-$t.log" ) &
done
left=$((200 - SECONDS)); [ $left -gt 10 ] || left=10
timeout $left $G $B --reps 5 --rhs 1,16,256,1024 --rhs-engines gpu,gpu-rows > "$OUT/iga15-rhs.txt" 2>&1
echo "bench B rc=$? (tests beside it) at $SECONDS s" >> "$OUT/iga15-rhs.txt"
left=$((245 - SECONDS))
if [ $left -gt 40 ] && [ -x /usr/local/cuda/bin/ncu ]; then
  timeout $left /usr/local/cuda/bin/ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
    -k regex:mf_mapss --launch-count 12 $G $B --reps 1 --rhs 256 --rhs-engines gpu-rows > "$OUT/iga15-ncu.txt" 2>&1
  echo "ncu rc=$? at $SECONDS s" >> "$OUT/iga15-ncu.txt"
fi
wait
echo "all done at $SECONDS s: $(date -u)" >> "$E"
tail -n 3 "$OUT"/iga15-iga_*.log
grep -h "copy\|bench-iga rhs:\|rc=\|headline" "$OUT"/iga15-rhs*.txt | cut -c1-220
grep -h "forward 0\|backward 0\|nrhs=  256" "$OUT"/iga15-rhs256.txt | cut -c1-240
grep -h "Memory Throughput\|DRAM Throughput\|Duration\|mf_mapss" "$OUT"/iga15-ncu.txt 2>/dev/null | head -20
