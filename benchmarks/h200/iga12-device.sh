#!/usr/bin/env bash
# iga12's device call (one call, ≤ 170 s): the GPU tests iga_cuda and iga_batched side by side
# (they also compile the multifrontal module with NVRTC into the disk cache, ~40 s), then the rhs
# sweep at 2^20 cubic elements: the new default (`gpu`: maps from 16 columns, separator rows at
# every count, 2 threads per column), the maps path (`gpu-maps`: what `gpu` runs once the maps are
# computed), round 11's 1 thread per column, the passes near the root in one launch (`-sept`),
# then at 1 and 256 columns the tensor-core kernels and chunks of 64 columns with 2 or 4 threads
# per column. Every row is printed to stderr as measured.
# Usage: bash benchmarks/h200/iga12-device.sh .dev-iga12
d=$(cd "$1" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
SECONDS=0
E=$OUT/iga12-env.txt
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv; } > "$E" 2>&1
export RUST_BACKTRACE=1
for t in iga_cuda iga_batched; do
  ( GALERKIN_REQUIRE_GPU=1 timeout 90 "$d/tests/$t" --include-ignored > "$OUT/iga12-$t.log" 2>&1; echo "$t rc=$? at $SECONDS s" >> "$OUT/iga12-$t.log" ) &
done
wait
echo "tests done at $SECONDS s: $(date -u)" >> "$E"
B="bench-iga --gpu --sweeps rhs --rhs-elements 1048576 --rhs-degree 3 --reps 3 --cpu-max 0"
left=$((142 - SECONDS)); [ $left -gt 30 ] || left=30
timeout $left $G $B --rhs 1,16,256,1024 --rhs-engines gpu,gpu-maps,gpu-maps-sept,gpu-maps-sep-x1 \
  --json "$OUT/iga12-rhs.json" > "$OUT/iga12-rhs.txt" 2>&1
echo "bench rc=$? at $SECONDS s" >> "$OUT/iga12-rhs.txt"
left=$((166 - SECONDS)); [ $left -gt 5 ] || left=5
timeout $left $G $B --rhs 1,256 --rhs-engines gpu-maps-tc,gpu-maps-sep-x2-64,gpu-maps-sep-x4-64 \
  > "$OUT/iga12-rhs-variants.txt" 2>&1
echo "bench rc=$? at $SECONDS s" >> "$OUT/iga12-rhs-variants.txt"
date -u >> "$E"
tail -n 3 "$OUT"/iga12-iga_*.log
grep "bench-iga rhs:" "$OUT"/iga12-rhs*.txt | cut -c1-160
