#!/usr/bin/env bash
# iga16's device call (one call, ≤ 270 s): the row-major GPU tests (among them the new bottom pass a
# thread per column against faer's LU and the CPU twin) in the background during the benchmark's
# system build, then the brief's sweep 1, 16, 256, 1024 at 2^20 cubic elements by the column-major
# default (gpu), the staged row-major kernels (gpu-rows-staged, the row-major default)
# and the bottom pass a thread per column (gpu-rows-reg by FMAs, gpu-rows-regtc on the tensor cores),
# with per-launch profiles; then, with the
# time left, the rest of iga_cuda and iga_batched.
# Usage: bash .dev-iga16/call.sh .dev-iga16
d=$(cd "$1" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
SECONDS=0
E=$OUT/iga16-env.txt
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv; } > "$E" 2>&1
export RUST_BACKTRACE=1
( GALERKIN_REQUIRE_GPU=1 timeout 120 "$d/tests/iga_cuda" --include-ignored row_major > "$OUT/iga16-rows-tests.log" 2>&1; echo "iga_cuda row_major rc=$? at $SECONDS s" >> "$OUT/iga16-rows-tests.log" ) &
T1=$!
B="bench-iga --gpu --sweeps rhs --rhs-elements 1048576 --rhs-degree 3 --cpu-max 0"
timeout 175 $G $B --reps 3 --rhs 1,16,256,1024 --rhs-engines gpu,gpu-rows-staged,gpu-rows-reg,gpu-rows-regtc > "$OUT/iga16-rhs.txt" 2>&1
echo "bench rc=$? at $SECONDS s" >> "$OUT/iga16-rhs.txt"
wait $T1
left=$((255 - SECONDS))
if [ $left -gt 20 ]; then
  ( GALERKIN_REQUIRE_GPU=1 timeout $left "$d/tests/iga_cuda" --include-ignored --skip row_major > "$OUT/iga16-iga_cuda.log" 2>&1; echo "iga_cuda (rest) rc=$? at $SECONDS s" >> "$OUT/iga16-iga_cuda.log" ) &
  ( GALERKIN_REQUIRE_GPU=1 timeout $left "$d/tests/iga_batched" --include-ignored > "$OUT/iga16-iga_batched.log" 2>&1; echo "iga_batched rc=$? at $SECONDS s" >> "$OUT/iga16-iga_batched.log" ) &
fi
wait
echo "all done at $SECONDS s: $(date -u)" >> "$E"
tail -n 4 "$OUT"/iga16-*tests.log "$OUT"/iga16-iga_*.log 2>/dev/null
grep -h "copy\|bench-iga rhs:\|rc=\|headline\|rror" "$OUT"/iga16-rhs.txt | cut -c1-260
grep -h "forward 0\|backward 0\|forward 1 \|backward 1 \|nrhs=  256\|floor" "$OUT"/iga16-rhs.txt | cut -c1-240
