#!/usr/bin/env bash
# Lead's device check of merged main after round 12 (one call, ≤ 600 s): p215 cold and twice warm
# (final-check.sh), then every packed GPU test binary with GALERKIN_REQUIRE_GPU=1 in three concurrent
# lanes (independent processes on one GPU: the round's test time no longer fits one lane beside the
# benchmarks), then the IGA many-rhs sweep (round 12's default: separator rows, two threads per column; the maps path and one thread per column beside it)
# then the scheme III table at p = 1…5 (round 12's defaults: pair lanes at p = 1, wide writes at p = 2), and the
# 10^5 then 10^6 hyperelastic GPU rows with the Newton trace.
# $OUT keeps ≤ 8 files: summary, tests.log, p215.tar, iga-rhs.txt, hex.{txt,json}, hyper.{txt,json}.
# Usage: bash benchmarks/h200/final-check-r12.sh .dev-NAME
d=$1
SECONDS=0
SKIP_TESTS=1 bash benchmarks/h100/final-check.sh "$d"
tar -C "$OUT" -cf "$OUT/p215.tar" $(cd "$OUT" && ls p215-*) && rm -f "$OUT"/p215-*
echo "p215 done at $SECONDS s" | tee -a "$OUT/summary.txt"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
# longest first (round 10's times), so the three lanes end together
bash benchmarks/h200/gpu-test-lanes.sh "$d" 3 330 "$OUT/summary.txt" levels ceed hyperelastic_cuda iga_batched hierarchical iga_cuda box_cuda heat_direct hierarchical_parts heat_lattice heat_examples setup_cuda cuda_backend cuda_release
echo "tests done at $SECONDS s" | tee -a "$OUT/summary.txt"
G=$d/galerkin
timeout 150 $G bench-iga --gpu --sweeps rhs --rhs 1,16,256,1024 --rhs-elements 1048576 --rhs-degree 3 --reps 3 --cpu-max 0 \
  --rhs-engines gpu,gpu-maps,gpu-maps-sep-x1 > "$OUT/iga-rhs.txt" 2>&1
echo "iga rc=$? at $SECONDS s" | tee -a "$OUT/iga-rhs.txt" "$OUT/summary.txt"
timeout 90 $G bench --hex --degrees 1,2,3,4,5 --runs 7 --cpu-cells 100 --json "$OUT/hex.json" > "$OUT/hex.txt" 2>&1
echo "hex rc=$? at $SECONDS s" | tee -a "$OUT/hex.txt" "$OUT/summary.txt"
left=$((560 - SECONDS)); [ $left -gt 20 ] || left=20
GALERKIN_NEWTON_TRACE=1 timeout $left $G bench --hyperelastic --dofs 100000,1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 2 \
  --solve-max-dofs 5000000 --hyper-loads 'step_rtol = 1e-2' --json "$OUT/hyper.json" > "$OUT/hyper.txt" 2>&1
echo "hyper rc=$? in ${left}s limit, at $SECONDS s" | tee -a "$OUT/hyper.txt" "$OUT/summary.txt"
