#!/usr/bin/env bash
# iga24's device call (one call, ≤ 240 s). First (GALERKIN_REQUIRE_GPU=1, one process, two test
# threads): iga_cuda's prefetch test, now with the bulk backward kernels' prefetch (round 24,
# mf_mapss{b,be}p_backward_*: = faer's LU, = the CPU twins, = the kernels without it bit for bit) and
# round 21's walk-shape test (64 × 2 items, the candidate default). Then, on a quiet GPU: 2^20 cubic
# elements at 1, 32, 64 and 256 right-hand sides, the row-major default (gpu-rows), the backward
# prefetch (gpu-rows-bpf), the 64 × 2 walk items (gpu-rows-w64x2) and both (gpu-rows-w64x2-bpf), each
# with its per-launch profile; then Nsight Compute on the backward separator-row launches at 256
# columns (backward 1, then backward 0), the default's kernel against the prefetched one, and on the
# default's forward 1 if time is left.
# Usage: bash .dev-iga24/call.sh .dev-iga24
NAME=iga24; BUDGET=${BUDGET:-232}; source benchmarks/h200/call-lib.sh "$1"
# The GPU tests first (a broken kernel then costs little): into $OUT/$NAME-tests.txt, then a step line with rc.
test_step 120 iga_cuda --include-ignored --test-threads 2 gpu_prefetched_forward gpu_walk_shapes
B="bench-iga --gpu --sweeps rhs --rhs-degree 3 --cpu-max 0 --rhs-elements 1048576"
# The sweep: the default, the backward prefetch, the 64 x 2 walk items and both (the candidate default).
ENGINES=gpu-rows,gpu-rows-bpf,gpu-rows-w64x2,gpu-rows-w64x2-bpf
timeout "$(left 70)" "$G" $B --reps 3 --rhs 1,32,64,256 --rhs-engines $ENGINES > "$OUT/$NAME-rhs.txt" 2>&1
step "1D bench rc $?"
N=$OUT/$NAME-ncu.txt
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
# KERNEL:ENGINE:SKIP:COUNT — backward 1 and 0 by each kernel, then forward 1 (item 3's question: what it waits on).
for k in mf_mapssb_backward_2:gpu-rows:0:2 mf_mapssbp_backward_2:gpu-rows-bpf:0:2 mf_mapssbtp_forward:gpu-rows:1:1; do
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
keep "$NAME-tests.txt" "^test \|test result\|panicked" 12
keep "$NAME-ncu.txt" "^  mf_\|Duration\|Memory Throughput\|Achieved Occ\|Registers Per\|Warp Cycles Per Issued\|rc=\|skipped" 32
keep "$NAME-rhs.txt" "nrhs=\|backward 0\|rror" 32
cat "$OUT/$NAME-steps.txt"
