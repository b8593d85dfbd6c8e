#!/usr/bin/env bash
# Lead's device check of merged main after round 13, in two calls (the round's engineers got few
# machines: three of five branches were never measured, so their sweeps run here).
#   part A: every packed GPU test binary (GALERKIN_REQUIRE_GPU=1, --include-ignored) in four lanes,
#           then the hyperelastic kernel sweeps (tc, the moments scheme, the cube patches) at both
#           rules, then the IGA many-rhs sweep (default beside the maps path and the lean forward pass).
#   part B: the scheme III table at p = 1…5 (round 13's p = 2, 3 defaults) and the p = 4, 5 sweep of
#           the opt-in shapes, then Newton at 10^5 and 10^6 (default scheme) and 10^6 (moments).
# Rows print as measured; each step under its own timeout. $OUT keeps ≤ 8 files per part.
# Usage: bash benchmarks/h200/final-check-r13.sh .dev-NAME A|B
d=$1; part=$2
SECONDS=0
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
S=$OUT/summary-$part.txt
nvidia-smi --query-gpu=name,driver_version --format=csv > "$S" 2>&1
step() { echo "== $SECONDS s $(date -u +%T): $1" | tee -a "$S" >&2; }
if [ "$part" = A ]; then
  # longest first, so the four lanes end together
  bash benchmarks/h200/gpu-test-lanes.sh "$d" 4 300 "$S" hyperelastic_cuda iga_cuda levels ceed iga_batched hierarchical box_cuda heat_direct hierarchical_parts heat_lattice heat_examples setup_cuda cuda_backend cuda_release
  step "tests done"
  SW="bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 5"
  timeout 80 $G $SW --hyper-quadrature stiffness --hyper-variants "tc staged,tc products-only,tc scatter-only,mom,mom 2,mom products-only,mom no-scatter,patch 6 scatter-only,cube 6 scatter-only,cube 12/6 scatter-only,cube 48/12 scatter-only,cube 48/24 scatter-only,patch 6,cube 6,cube 24/12,cube 48/12" > "$OUT/hyper-sweep-stiffness.txt" 2>&1
  step "sweep stiffness rc $?"
  timeout 60 $G $SW --hyper-quadrature full --hyper-variants "tc staged,tc products-only,mom,mom 2,mom products-only,mom no-scatter,cube 6,cube 48/12" > "$OUT/hyper-sweep-full.txt" 2>&1
  step "sweep full rc $?"
  timeout 100 $G bench-iga --gpu --sweeps rhs --rhs 1,16,256,1024 --rhs-elements 1048576 --rhs-degree 3 --reps 3 --cpu-max 0 \
    --rhs-engines gpu,gpu-maps,gpu-maps-sep-leanf > "$OUT/iga-rhs.txt" 2>&1
  step "iga rc $?"
else
  timeout 90 $G bench --hex --degrees 1,2,3,4,5 --runs 7 --cpu-cells 100 --json "$OUT/hex.json" > "$OUT/hex.txt" 2>&1
  step "hex table rc $?"
  for pt in "4 50" "5 80"; do
    set -- $pt; p=$1
    timeout $2 $G bench --hex --degrees $p --runs 7 --cpu-cells 10 --tiled-sweep --sweep-shapes ${SWEEP_SHAPES:-6} > "$OUT/hex-sweep-p$p.txt" 2>&1
    step "hex sweep p = $p rc $?"
  done
  GALERKIN_NEWTON_TRACE=1 timeout 100 $G bench --hyperelastic --dofs 100000,1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 1 \
    --solve-max-dofs 5000000 --hyper-loads 'step_rtol = 1e-2' --json "$OUT/hyper.json" > "$OUT/hyper.txt" 2>&1
  step "hyper default rc $?"
  GALERKIN_HYPER_SCHEME=moments GALERKIN_NEWTON_TRACE=1 timeout 45 $G bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 1 \
    --solve-max-dofs 5000000 --hyper-loads 'step_rtol = 1e-2' > "$OUT/hyper-moments.txt" 2>&1
  step "hyper moments rc $?"
fi
