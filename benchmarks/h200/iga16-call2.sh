#!/usr/bin/env bash
# iga16's second device call (≤ 140 s, warm machine, the same pack): call 1's sweep hit its limit
# before gpu-rows-regtc and before the report (per-launch profiles); here 1 and 256 columns of the
# three row-major bottom passes alone on the GPU, with the report.
# Usage: bash .dev-iga16/call2.sh .dev-iga16
d=$(cd "$1" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
SECONDS=0
B="bench-iga --gpu --sweeps rhs --rhs-elements 1048576 --rhs-degree 3 --cpu-max 0"
timeout 128 "$d/galerkin" $B --reps 3 --rhs 1,256 --rhs-engines gpu-rows-regtc,gpu-rows-reg,gpu-rows-staged > "$OUT/iga16-rhs256.txt" 2>&1
echo "bench rc=$? at $SECONDS s" >> "$OUT/iga16-rhs256.txt"
grep -h "copy\|bench-iga rhs:\|rc=\|nrhs=  256\|forward 0\|backward 0\|floor" "$OUT"/iga16-rhs256.txt | cut -c1-250
