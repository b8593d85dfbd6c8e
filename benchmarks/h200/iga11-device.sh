#!/usr/bin/env bash
# iga11's device call (one call, ≤ 200 s): the rhs sweep at 2^20 cubic elements (default engine and
# round 11's opt-in separator-row variants: 2 threads per column, pipelined), then the GPU tests
# iga_cuda and iga_batched side by side. Usage: bash benchmarks/h200/iga11-device.sh .dev-iga11
# As run on 2026-12-02 (BENCHMARKS.md, round 11): both sweeps ran into their timeouts before
# printing (bench-iga printed its rows only at the end then); give a sweep ≥ 150 s.
d=$(cd "$1" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
SECONDS=0
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv; } > "$OUT/iga11-env.txt" 2>&1
B="bench-iga --gpu --sweeps rhs --rhs-elements 1048576 --rhs-degree 3 --reps 3 --cpu-max 0"
timeout 75 $G $B --rhs 1,16,256,1024 --rhs-engines gpu,gpu-maps-sep-x2,gpu-maps-sep-pipe \
  --json "$OUT/iga11-rhs.json" > "$OUT/iga11-rhs.txt" 2>&1
echo "bench rc=$? at $SECONDS s" >> "$OUT/iga11-rhs.txt"
timeout 40 $G $B --rhs 256 --rhs-engines gpu-maps-sep-x4,gpu-maps-sep-pipe-64,gpu-maps-sep-pipe-x2,gpu-maps-sep-pipe-x2-64 \
  > "$OUT/iga11-rhs-variants.txt" 2>&1
echo "bench rc=$? at $SECONDS s" >> "$OUT/iga11-rhs-variants.txt"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
left=$((192 - SECONDS)); [ $left -gt 30 ] || left=30
for t in iga_cuda iga_batched; do
  ( timeout $left "$d/tests/$t" --include-ignored > "$OUT/iga11-$t.log" 2>&1; echo "$t rc=$? at $SECONDS s" >> "$OUT/iga11-$t.log" ) &
done
wait
date -u >> "$OUT/iga11-env.txt"
tail -n 2 "$OUT"/iga11-iga_*.log
