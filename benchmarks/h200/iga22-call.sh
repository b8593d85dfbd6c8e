#!/usr/bin/env bash
# iga22's device call (one call, ≤ 240 s). In the background (GALERKIN_REQUIRE_GPU=1, niced): iga_cuda's
# new test of the prefetched forward kernels (= faer's LU, = the CPU twins, = the plain kernels bit for
# bit, 1D p = 1…5 and the 2D large-front cases). In the foreground: 2^20 cubic elements at 1, 32, 64 and
# 256 right-hand sides, the row-major default (gpu-rows) beside its prefetched forward (gpu-rows-pf), the
# 64 × 2 walk items (gpu-rows-w64x2) and both (gpu-rows-w64x2-pf), each with its per-launch profile
# (forward 0's µs before/after) and the copy bandwidth; then a 2D case (Poisson p = 3, 512², 32/64/256
# columns) for the default and the 64 × 2 walk side by side; then Nsight Compute's counters of the bottom
# forward, the default's and the prefetched one, as the time allows.
# Usage: bash .dev-iga22/call.sh .dev-iga22
NAME=iga22; source benchmarks/h200/call-lib.sh "$1"
lane() {
  local log=$OUT/$NAME-tests-$1.log; shift
  timeout "$(left 222)" nice "$T/iga_cuda" --include-ignored --test-threads 1 "$@" > "$log" 2>&1
  echo "iga_cuda $* rc=$? at $(( $(date +%s) - start )) s" >> "$log"
}
lane pf gpu_prefetched_forward & P1=$!
B="bench-iga --gpu --sweeps rhs --rhs-degree 3 --cpu-max 0"
R=$OUT/$NAME-rhs.txt
step "1D bench"
timeout "$(left 125)" "$G" $B --rhs-elements 1048576 --reps 3 --rhs 1,32,64,256 \
  --rhs-engines gpu-rows,gpu-rows-pf,gpu-rows-w64x2,gpu-rows-w64x2-pf > "$R" 2>&1
echo "bench rc=$?" >> "$R"
step "2D bench"
R2=$OUT/$NAME-rhs2d.txt
timeout "$(left 40)" "$G" $B --rhs-grid 512 --reps 3 --rhs 32,64,256 --rhs-engines gpu-rows,gpu-rows-w64x2 > "$R2" 2>&1
echo "bench 2D rc=$?" >> "$R2"
N=$OUT/$NAME-ncu.txt
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
for k in "mf_mapssbtp_forward gpu-rows-pf" "mf_mapssbt_forward gpu-rows"; do
  set -- $k
  if [ -n "$NCU" ] && [ "$(left 60)" -ge 25 ]; then
    step "ncu $1"
    timeout "$(left 40)" "$NCU" --clock-control none --import-source no -k "regex:^$1\$" --launch-count 1 $SEC \
      "$G" $B --rhs-elements 1048576 --reps 1 --rhs 256 --rhs-engines "$2" >> "$N" 2>&1
    echo "ncu $1 rc=$?" >> "$N"
  else
    echo "ncu $1 skipped: $(left 60) s left, ncu '$NCU'" >> "$N"
  fi
done
wait $P1
step "done"
keep "$NAME-tests-*.log" "test \|test result\|rc=\|panicked" 12
keep "$NAME-ncu.txt" "^  mf_\|Duration\|Memory Throughput\|Issue Slots\|Achieved Occ\|Block Limit Shared\|Stall Long\|Warp Cycles Per Issued\|rc=\|skipped" 30
keep "$NAME-rhs.txt" "copy\|nrhs=\|forward 0\|forward 1\|walk \|rc=\|rror" 40
keep "$NAME-rhs2d.txt" "nrhs=\|walk \|rc=\|rror" 12
