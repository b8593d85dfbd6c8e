#!/usr/bin/env bash
# Lead's device check of merged main after round 11 (one call, ≤ 600 s): p215 cold and twice warm
# (final-check.sh), then every packed GPU test binary with GALERKIN_REQUIRE_GPU=1 in three concurrent
# lanes (independent processes on one GPU: the round's test time no longer fits one lane beside the
# benchmarks), then the IGA many-rhs sweep with round 11's engines (rows print as they are measured)
# and the 10^5 then 10^6 hyperelastic GPU rows with the Newton trace (hnewton11 saw 5.8 s and hjac11 7.0 s
# at 10^6 where round 10's branches had 2.18 and 2.41 with the same iteration counts: the trace's
# per-iteration assembly and solve times, and 10^5 first with the same kernels, say where it goes).
# $OUT keeps ≤ 8 files: summary, tests.log, p215.tar, iga-rhs.{txt,json}, hyper.{txt,json}.
# Usage: bash benchmarks/h200/final-check-r11.sh .dev-NAME
d=$1
SECONDS=0
SKIP_TESTS=1 bash benchmarks/h100/final-check.sh "$d"
tar -C "$OUT" -cf "$OUT/p215.tar" $(cd "$OUT" && ls p215-*) && rm -f "$OUT"/p215-*
echo "p215 done at $SECONDS s" | tee -a "$OUT/summary.txt"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
# longest first (round 10's times), so the three lanes end together
bash benchmarks/h200/gpu-test-lanes.sh "$d" 3 330 "$OUT/summary.txt" levels ceed iga_batched hierarchical hyperelastic_cuda iga_cuda box_cuda heat_direct hierarchical_parts heat_lattice heat_examples setup_cuda cuda_backend cuda_release
echo "tests done at $SECONDS s" | tee -a "$OUT/summary.txt"
G=$d/galerkin
timeout 150 $G bench-iga --gpu --sweeps rhs --rhs 1,16,256,1024 --rhs-elements 1048576 --rhs-degree 3 --reps 3 --cpu-max 0 \
  --rhs-engines gpu,gpu-maps-sep-x2,gpu-maps-sep-pipe,gpu-maps-sep-pipe-x2,gpu-maps-sep-split --json "$OUT/iga-rhs.json" > "$OUT/iga-rhs.txt" 2>&1
echo "iga rc=$? at $SECONDS s" | tee -a "$OUT/iga-rhs.txt" "$OUT/summary.txt"
left=$((585 - SECONDS)); [ $left -gt 20 ] || left=20
GALERKIN_NEWTON_TRACE=1 timeout $left $G bench --hyperelastic --dofs 100000,1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 2 \
  --solve-max-dofs 5000000 --hyper-loads 'step_rtol = 1e-2' --json "$OUT/hyper.json" > "$OUT/hyper.txt" 2>&1
echo "hyper rc=$? in ${left}s limit, at $SECONDS s" | tee -a "$OUT/hyper.txt" "$OUT/summary.txt"
