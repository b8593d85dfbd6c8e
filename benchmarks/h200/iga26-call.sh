#!/usr/bin/env bash
# iga26's device call (one call, ≤ 240 s), superseding round 25's iga25-call.sh (removed) and extended in round 27:
# it measures rounds 25's, 26's and 27's candidates of issue 15 against the default in the same sweep. First
# (GALERKIN_REQUIRE_GPU=1, one process, six test threads, --nocapture for the chain checks' per-case seconds): main a2b12b9's lazily
# built chain tables (three tests), round 25's capped bottom backward prefetch (gpu_prefetched…),
# round 21's walk shapes (64 × 2, the patch's candidate default) and round 26's separator rows in x
# (gpu_separator_rows_in_x…: = faer's LU, = the CPU twins, = the compact rows bit for bit) and round 27's
# in-place solve (gpu_in_place_solve…: = the out-of-place solve bit for bit, = faer's LU). Then, on a
# quiet GPU: 2^20 cubic elements at 1, 32, 64 and 256 right-hand sides over the row-major default
# (gpu-rows), round 25's -bpf and -w64x2-bpf, round 26's -sx and -w64x2-bpf-sx, round 27's -sx-ip and
# -w64x2-bpf-sx-ip (x overwrites b; b refilled outside the timed region), each with its per-launch
# profile (7 engines, ≈ 12 s each by round 24's 47 s for four); then Nsight Compute on backward 0 at 256
# columns (the same kernel, mf_mapssb_backward_2, its second launch of the solve: the default's, then -sx's, which stores no owned row), if time is left
# (the tests ≤ 110 s, the sweep ≤ 100 s: an ncu run needs ≥ 22 s of the 232 left).
# Usage: bash benchmarks/h200/iga26-call.sh .dev-r26   (test binaries in the pack: iga_cuda)
NAME=iga26; BUDGET=${BUDGET:-232}; source benchmarks/h200/call-lib.sh "$1"
B="bench-iga --gpu --sweeps rhs --rhs-degree 3 --cpu-max 0 --rhs-elements 1048576"
N=$OUT/$NAME-ncu.txt
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats"
# The GPU tests first (a broken path then costs little): into $OUT/$NAME-tests.txt, then a step line with rc.
test_step 110 iga_cuda --include-ignored --test-threads 6 --nocapture gpu_chained_forward gpu_prefetched gpu_walk_shapes gpu_separator_rows_in_x gpu_in_place_solve
# The sweep: the default, round 25's two rows, round 26's two rows (-sx alone and with round 25's), round 27's
# two (in place, with the rows in x: alone and with round 25's).
timeout "$(left 100)" "$G" $B --reps 3 --rhs 1,32,64,256 \
  --rhs-engines gpu-rows,gpu-rows-bpf,gpu-rows-w64x2-bpf,gpu-rows-sx,gpu-rows-w64x2-bpf-sx,gpu-rows-sx-ip,gpu-rows-w64x2-bpf-sx-ip > "$OUT/$NAME-rhs.txt" 2>&1
step "1D bench rc $?"
# ncu_on KERNEL ENGINE SKIP: Nsight Compute on KERNEL's launch after SKIP of them in a 256-column solve by ENGINE, if time is left.
ncu_on() {
  if [ -z "$NCU" ] || [ "$(left 60)" -lt 22 ]; then echo "ncu $1 $2 skipped: $(left 60) s left, ncu '$NCU'" >> "$N"; return; fi
  step "ncu $1 ($2, skip $3)"
  timeout "$(left 25)" "$NCU" --clock-control none --import-source no -k "regex:^$1\$" --launch-skip "$3" --launch-count 1 $SEC \
    "$G" $B --reps 1 --rhs 256 --rhs-engines "$2" >> "$N" 2>&1
  echo "ncu $1 $2 rc=$?" >> "$N"
}
# Backward 0 at 256 columns (backward 1 runs the same kernel first): the default, then the rows in x.
ncu_on mf_mapssb_backward_2 gpu-rows 1
ncu_on mf_mapssb_backward_2 gpu-rows-sx 1
step "done"
# The summary: tests (with the chain checks' seconds), the sweep's rows, notes and bottom passes, ncu's headline metrics.
keep "$NAME-rhs.txt" "nrhs=\|forward 0\|backward 0\|rows in x\|in place\|rror" 120
keep "$NAME-ncu.txt" "^  mf_\|Duration\|Memory Throughput\|Achieved Occ\|Registers Per\|Warp Cycles Per Issued\|rc=\|skipped" 20
keep "$NAME-tests.txt" "^test \|test result\|panicked\|chain checks\|prefetched bottom" 26
cat "$OUT/$NAME-steps.txt"
