#!/usr/bin/env bash
# iga13's device call (one call, ≤ 170 s): the GPU tests iga_cuda and iga_batched in the background
# beside the benchmarks (as the round's brief asks), then at 2^20 cubic elements: (A) 256 columns by
# the default, the bottom passes by warps (`-lean`) and the never-timed pipelined separator rows
# (`-pipe-x2`), with per-launch profiles; (B) the sweep 1, 16, 256, 1024 of the default and the
# lean variants (both passes, forward only, backward only). Every row goes to stderr as measured.
# Usage: bash benchmarks/h200/iga13-device.sh .dev-iga13
d=$(cd "$1" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
SECONDS=0
E=$OUT/iga13-env.txt
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv; } > "$E" 2>&1
export RUST_BACKTRACE=1
for t in iga_cuda iga_batched; do
  ( GALERKIN_REQUIRE_GPU=1 timeout 155 "$d/tests/$t" --include-ignored > "$OUT/iga13-$t.log" 2>&1; echo "$t rc=$? at $SECONDS s" >> "$OUT/iga13-$t.log" ) &
done
B="bench-iga --gpu --sweeps rhs --rhs-elements 1048576 --rhs-degree 3 --reps 3 --cpu-max 0"
timeout 85 $G $B --rhs 256 --rhs-engines gpu,gpu-maps-sep-lean,gpu-maps-sep-pipe-x2 > "$OUT/iga13-rhs256.txt" 2>&1
echo "bench A rc=$? at $SECONDS s" >> "$OUT/iga13-rhs256.txt"
echo "bench A done at $SECONDS s: $(date -u)" >> "$E"
left=$((160 - SECONDS)); [ $left -gt 10 ] || left=10
timeout $left $G $B --rhs 1,16,256,1024 --rhs-engines gpu,gpu-maps-sep-lean,gpu-maps-sep-leanf,gpu-maps-sep-leanb \
  > "$OUT/iga13-rhs.txt" 2>&1
echo "bench B rc=$? at $SECONDS s" >> "$OUT/iga13-rhs.txt"
wait
echo "all done at $SECONDS s: $(date -u)" >> "$E"
tail -n 2 "$OUT"/iga13-iga_*.log
grep -h "bench-iga rhs:\|rc=" "$OUT"/iga13-rhs*.txt | cut -c1-150
grep -h "forward 0\|backward 0\|nrhs=  256" "$OUT"/iga13-rhs256.txt | cut -c1-200
