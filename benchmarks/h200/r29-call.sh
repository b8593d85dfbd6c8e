#!/usr/bin/env bash
# The lead's device call for rounds 29–30 (issue 15), written in a session that had no device: every new opt-in path
# under its GPU test (GALERKIN_REQUIRE_GPU=1), then all of them against the default in one sweep of 2^20 cubic
# elements at 1, 64 and 256 columns with the per-launch steps. New paths (each bit-identical to the default or equal
# to faer's LU to round-off by its test; none is a default yet):
#   -top64 / -top8  the walk over the passes of ≤ 64 / ≤ 8 subtrees only (lead, `set_walk_subtrees`);
#   -ld4            the tensor-core forward kernels with rows of C + 4 (iga29a, `set_sep_tc_rows4`);
#   -p64            forward 0's 64-column chunks pipelined inside a block (iga29b, `set_sep_pipe64`);
#   -p64b           the backward passes' 64-column chunks pipelined (iga30a, `set_sep_pipe64_backward`), and with -p64;
#   -zs             forward 0 without the zeroed Schur rows (iga30b, `set_sep_trim`); with -ld4, and -ld4-p64-zs (the
#                   pipelined chunks then with rows of C + 4, 5 blocks/SM).
# Read: the solve at 256 columns (median [min–max]) of each against gpu-rows, and the per-launch rows each path
# claims to move (forward 0, the walk and forward/backward 2, backward 0). Flip rule: faster beyond the spread and
# its GPU test passed in this call.
# Engines run in the listed order (each at every count): the default, then the combinations that could reach ≤ 2×,
# then each candidate alone (the attribution), so a call cut short still answers whether the combination wins.
# Usage: bash benchmarks/h200/r29-call.sh .dev-r29   (test binary in the pack: iga_cuda); run with timeout_s 360.
# A short window (stop 53 had ≈ 280 s of device time left after fifteen failed starts): BUDGET=200 SWEEP_RHS=1,256
# ENGINES=gpu-rows,gpu-rows-top64-ld4-p64-p64b-zs,gpu-rows-ld4-p64-p64b-zs,gpu-rows-p64-p64b, timeout_s 225.
NAME=lead-r29; BUDGET=${BUDGET:-330}; source benchmarks/h200/call-lib.sh "$1"
TESTS=${TESTS:-"gpu_narrow_walks gpu_tc_rows4 gpu_pipelined gpu_trimmed"}  # gpu_pipelined: forward and backward
ENGINES=${ENGINES:-gpu-rows,gpu-rows-top64-ld4-p64-p64b-zs,gpu-rows-ld4-p64-p64b-zs,gpu-rows-p64-p64b,gpu-rows-top64,gpu-rows-p64,gpu-rows-p64b,gpu-rows-ld4-zs,gpu-rows-zs,gpu-rows-ld4,gpu-rows-top8}
lane 170 iga_cuda --test-threads 8 $TESTS &
wait; lanes_done
rhs_sweep 150 "$ENGINES" iga
keep "$NAME-iga.txt" "nrhs=\|forward 0 \|forward 2 \|walk 2\|walk 3\|backward 2 \|backward 0 \|rror" 80
keep "$NAME-tests.txt" "^===\|^test .*FAIL\|test result\|panicked\|^rc " 30
cat "$OUT/$NAME-steps.txt"
