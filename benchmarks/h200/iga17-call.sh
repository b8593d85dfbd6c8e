#!/usr/bin/env bash
# iga17's device call (one call, ≤ 280 s): the row-major GPU tests (round 17's fused bottom pass,
# RowsBottom::Fused / FusedOne, against faer's LU and the CPU twin, beside round 16's variants) in
# the background, niced, during the benchmark's system build; then 2^20 cubic elements at 1 and 256
# right-hand sides by the fused engines, the staged row-major default and the column-major default,
# with per-launch profiles and the copy bandwidth; then 16 and 1024 if time is left.
# Usage: bash .dev-iga17/call.sh .dev-iga17
d=$(cd "$1" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
SECONDS=0
E=$OUT/iga17-env.txt
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv; } > "$E" 2>&1
export RUST_BACKTRACE=1
( GALERKIN_REQUIRE_GPU=1 timeout 230 nice "$d/tests/iga_cuda" --include-ignored row_major > "$OUT/iga17-rows-tests.log" 2>&1; echo "iga_cuda row_major rc=$? at $SECONDS s" >> "$OUT/iga17-rows-tests.log" ) &
T1=$!
B="bench-iga --gpu --sweeps rhs --rhs-elements 1048576 --rhs-degree 3 --cpu-max 0"
timeout 150 $G $B --reps 3 --rhs 1,256 --rhs-engines gpu-rows-fused,gpu-rows-staged,gpu-rows-fused1,gpu > "$OUT/iga17-rhs256.txt" 2>&1
echo "bench rc=$? at $SECONDS s" >> "$OUT/iga17-rhs256.txt"
left=$((250 - SECONDS))
if [ $left -gt 40 ]; then
  timeout $left $G $B --reps 3 --rhs 16,1024 --rhs-engines gpu-rows-fused,gpu-rows-staged > "$OUT/iga17-rhs1024.txt" 2>&1
  echo "bench rc=$? at $SECONDS s" >> "$OUT/iga17-rhs1024.txt"
fi
wait $T1
echo "all done at $SECONDS s: $(date -u)" >> "$E"
tail -n 6 "$OUT"/iga17-rows-tests.log 2>/dev/null
grep -h "copy\|bench-iga rhs:\|rc=\|headline\|rror" "$OUT"/iga17-rhs*.txt | cut -c1-260
grep -h "forward 0\|backward 0\|forward 1 \|backward 1 \|nrhs=  256\|floor" "$OUT"/iga17-rhs256.txt | cut -c1-240
