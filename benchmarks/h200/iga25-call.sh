#!/usr/bin/env bash
# iga25's device call (one call, ≤ 240 s). First (GALERKIN_REQUIRE_GPU=1, one process, five test
# threads, --nocapture for the chain checks' per-case seconds): main a2b12b9's lazily built chain
# tables (the chain test, now three tests side by side with each case's faer reference made once),
# the prefetch test (round 25's backward prefetch: the row-major bottom pass only,
# mf_mapssbp0_backward_* under a register cap; = faer's LU, = the CPU twins, = the kernels without it
# bit for bit) and round 21's walk-shape test (64 × 2 items, the candidate default). Then, on a quiet
# GPU: 2^20 cubic elements at 1, 32, 64 and 256 right-hand sides, the row-major default (gpu-rows),
# the capped bottom prefetch (gpu-rows-bpf), the 64 x 2 walk items (gpu-rows-w64x2) and both
# (gpu-rows-w64x2-bpf), each with its per-launch profile (registers, blocks/SM); then Nsight
# Compute on backward 0 at 256 columns, the default's kernel against the capped prefetched one.
# Usage: bash .dev-iga25/call.sh .dev-iga25
NAME=iga25; BUDGET=${BUDGET:-232}; source benchmarks/h200/call-lib.sh "$1"
B="bench-iga --gpu --sweeps rhs --rhs-degree 3 --cpu-max 0 --rhs-elements 1048576"
N=$OUT/$NAME-ncu.txt
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
# The GPU tests first (a broken kernel then costs little): into $OUT/$NAME-tests.txt, then a step line with rc.
test_step 120 iga_cuda --include-ignored --test-threads 5 --nocapture gpu_chained_forward gpu_prefetched gpu_walk_shapes
# The sweep: the default, the capped bottom prefetch, the 64 x 2 walk items and both (the candidate default).
timeout "$(left 75)" "$G" $B --reps 3 --rhs 1,32,64,256 --rhs-engines gpu-rows,gpu-rows-bpf,gpu-rows-w64x2,gpu-rows-w64x2-bpf > "$OUT/$NAME-rhs.txt" 2>&1
step "1D bench rc $?"
# ncu_on KERNEL ENGINE SKIP: Nsight Compute on KERNEL's launch after SKIP of them in a 256-column solve by ENGINE, if time is left.
ncu_on() {
  if [ -z "$NCU" ] || [ "$(left 60)" -lt 22 ]; then echo "ncu $1 skipped: $(left 60) s left, ncu '$NCU'" >> "$N"; return; fi
  step "ncu $1 ($2, skip $3)"
  timeout "$(left 25)" "$NCU" --clock-control none --import-source no -k "regex:^$1\$" --launch-skip "$3" --launch-count 1 $SEC \
    "$G" $B --reps 1 --rhs 256 --rhs-engines "$2" >> "$N" 2>&1
  echo "ncu $1 rc=$?" >> "$N"
}
# Backward 0 at 256 columns: the default's kernel (its second launch, after backward 1's), then the capped prefetch.
ncu_on mf_mapssb_backward_2 gpu-rows 1
ncu_on mf_mapssbp0_backward_2 gpu-rows-bpf 0
step "done"
# The summary: tests (with the chain checks' seconds), the sweep's rows and backward 0 lines, ncu's headline metrics.
keep "$NAME-rhs.txt" "nrhs=\|backward 0\|rror" 40
keep "$NAME-ncu.txt" "^  mf_\|Duration\|Memory Throughput\|Achieved Occ\|Registers Per\|Warp Cycles Per Issued\|rc=\|skipped" 20
keep "$NAME-tests.txt" "^test \|test result\|panicked\|chain checks\|prefetched bottom" 24
cat "$OUT/$NAME-steps.txt"
