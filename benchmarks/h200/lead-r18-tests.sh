#!/usr/bin/env bash
# Lead's round-18 check of hyper18's and hex18's packs: the GPU tests of the new and the still-unrun schemes
# (prefetch/cols of round 18, recompute of round 17), GALERKIN_REQUIRE_GPU=1.
h=$2; [ -n "$h" ] && { [ -d "$h/tests" ] || tar -C "$h" -xJf "$h/bin.tar.xz"; }
d=$1; [ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
t=$d/tests/hyperelastic_cuda
timeout 130 $t gpu_prefetch gpu_recompute --test-threads 4 > $OUT/tests-a.log 2>&1; echo "prefetch+recompute rc $?"
timeout 70 $t gpu_stiffness_rule gpu_scatter_variants gpu_lean_products gpu_gather --test-threads 4 > $OUT/tests-b.log 2>&1; echo "others rc $?"
[ -n "$h" ] && { timeout 60 $h/tests/hierarchical gram_tiles_match_the_cpu --include-ignored > $OUT/tests-c.log 2>&1; echo "hierarchical gram rc $?"; }
grep -h "^test \|test result" $OUT/tests-*.log
