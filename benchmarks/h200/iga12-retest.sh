#!/usr/bin/env bash
# iga12's second call: the two tests the first call's 90-s limit cut, side by side.
d=$(cd "$1" && pwd)
[ -x "$d/tests/iga_cuda" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
SECONDS=0
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
( timeout 115 "$d/tests/iga_cuda" --include-ignored --exact gpu_transfer_map_kernels_equal_faer_lu > "$OUT/iga12-retest-iga_cuda.log" 2>&1; echo "rc=$? at $SECONDS s" >> "$OUT/iga12-retest-iga_cuda.log" ) &
( timeout 115 "$d/tests/iga_batched" --include-ignored --exact gpu_batched_large_fronts_equal_faer_lu_and_the_cpu > "$OUT/iga12-retest-iga_batched.log" 2>&1; echo "rc=$? at $SECONDS s" >> "$OUT/iga12-retest-iga_batched.log" ) &
wait
tail -n 4 "$OUT"/iga12-retest-*.log
