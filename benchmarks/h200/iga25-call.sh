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
# The GPU tests first (a broken kernel then costs little): into $OUT/$NAME-tests.txt, then a step line with rc.
test_step 110 iga_cuda --include-ignored --test-threads 5 --nocapture gpu_chained_forward gpu_prefetched gpu_walk_shapes
B="bench-iga --gpu --sweeps rhs --rhs-degree 3 --cpu-max 0 --rhs-elements 1048576"
ENGINES=gpu-rows,gpu-rows-bpf,gpu-rows-w64x2,gpu-rows-w64x2-bpf
timeout "$(left 75)" "$G" $B --reps 3 --rhs 1,32,64,256 --rhs-engines $ENGINES > "$OUT/$NAME-rhs.txt" 2>&1
step "1D bench rc $?"
N=$OUT/$NAME-ncu.txt
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
# KERNEL:ENGINE:SKIP:COUNT — backward 0 at 256 columns: the default's (its second launch, after backward 1), then the capped prefetch.
for k in mf_mapssb_backward_2:gpu-rows:1:1 mf_mapssbp0_backward_2:gpu-rows-bpf:0:1; do
  IFS=: read -r kern eng skip count <<< "$k"
  if [ -n "$NCU" ] && [ "$(left 60)" -ge 22 ]; then
    step "ncu $kern ($eng, skip $skip)"
    timeout "$(left 25)" "$NCU" --clock-control none --import-source no -k "regex:^$kern\$" --launch-skip "$skip" --launch-count "$count" $SEC \
      "$G" $B --reps 1 --rhs 256 --rhs-engines "$eng" >> "$N" 2>&1
    echo "ncu $kern rc=$?" >> "$N"
  else
    echo "ncu $kern skipped: $(left 60) s left, ncu '$NCU'" >> "$N"
  fi
done
step "done"
keep "$NAME-tests.txt" "^test \|test result\|panicked\|chain checks\|prefetched bottom" 24
keep "$NAME-ncu.txt" "^  mf_\|Duration\|Memory Throughput\|Achieved Occ\|Registers Per\|Warp Cycles Per Issued\|rc=\|skipped" 20
keep "$NAME-rhs.txt" "nrhs=\|backward 0\|rror" 40
cat "$OUT/$NAME-steps.txt"
