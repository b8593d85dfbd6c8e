#!/usr/bin/env bash
# iga20's device call (one call, ≤ 240 s). In the background (GALERKIN_REQUIRE_GPU=1, niced):
# iga_cuda's new column-major lines / per-layout defaults test, round 18/19's line-variant test,
# and the walk's trace, the default engine and the row-major solves tests. In the foreground:
# 2^20 cubic elements at 1 and 256 right-hand sides, the row-major default (now the walk by
# lines), the column-major default (plain), the column-major walk by lines, and the old row-major
# default (plain), with per-launch profiles, the walk's per-level timeline and the copy bandwidth.
# Usage: bash .dev-iga20/call.sh .dev-iga20
d=$(cd "$1" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
SECONDS=0
E=$OUT/iga20-env.txt
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv; } > "$E" 2>&1
export RUST_BACKTRACE=1
T=$d/tests/iga_cuda
L1=$OUT/iga20-tests-cols.log
L2=$OUT/iga20-tests-lines.log
L3=$OUT/iga20-tests-misc.log
( GALERKIN_REQUIRE_GPU=1 timeout 215 nice "$T" --include-ignored gpu_column_major_separator_lines_and_the_defaults > "$L1" 2>&1
  echo "iga_cuda column-major lines + defaults rc=$? at $SECONDS s" >> "$L1" ) &
T1=$!
( GALERKIN_REQUIRE_GPU=1 timeout 215 nice "$T" --include-ignored gpu_separator_line_variants > "$L2" 2>&1
  echo "iga_cuda separator line variants rc=$? at $SECONDS s" >> "$L2" ) &
T2=$!
( GALERKIN_REQUIRE_GPU=1 timeout 210 nice "$T" --include-ignored --test-threads 1 gpu_walk_trace gpu_default_engine_takes gpu_row_major_solves > "$L3" 2>&1
  echo "iga_cuda walk trace + default engine + row-major rc=$? at $SECONDS s" >> "$L3" ) &
T3=$!
B="bench-iga --gpu --sweeps rhs --rhs-elements 1048576 --rhs-degree 3 --cpu-max 0"
R=$OUT/iga20-rhs256.txt
timeout 180 $G $B --reps 3 --rhs 1,256 --rhs-engines gpu-rows,gpu,gpu-bulkext2tctop,gpu-rows-plain > "$R" 2>&1
echo "bench rc=$? at $SECONDS s" >> "$R"
wait $T1 $T2 $T3
echo "all done at $SECONDS s: $(date -u)" >> "$E"
grep -h "test \|test result\|rc=\|panicked" "$L1" "$L2" "$L3" | cut -c1-240 | tail -n 20
grep -h "copy\|bench-iga rhs:\|rc=\|row-major\|rror" "$R" | cut -c1-260
grep -h "forward \|backward \|walk \|nrhs=  256\|floor" "$R" | cut -c1-200
