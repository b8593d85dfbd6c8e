#!/usr/bin/env bash
# Lead's device check of merged main after round 15 (and round 16, with HYPER_VARIANTS naming the gather), in two parts (one call each, chained warm).
#   part A: every packed GPU test binary (GALERKIN_REQUIRE_GPU=1, --include-ignored) in four lanes,
#           then the IGA many-rhs sweep (the default and the row-major engine, ${IGA_ENGINES:-gpu,gpu-rows}).
#   part B: the scheme III table at p = 1…5, the p = 2…5 tiled sweeps (the default first), the
#           matrix-free levels at p = 6, the
#           hyperelastic default kernel at 10^6 P2 and, with NEWTON=1, Newton at 10^6.
# Rows print as measured; each step under its own timeout. $OUT keeps ≤ 8 files per part.
# Usage: bash benchmarks/h200/final-check-r15.sh .dev-NAME A|B
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
  timeout 90 $G bench-iga --gpu --sweeps rhs --rhs 1,16,256,1024 --rhs-elements 1048576 --rhs-degree 3 --reps 3 --cpu-max 0 \
    --rhs-engines "${IGA_ENGINES:-gpu,gpu-rows}" > "$OUT/iga-rhs.txt" 2>&1
  step "iga rc $?"
else
  timeout 90 $G bench --hex --degrees 1,2,3,4,5 --runs 7 --cpu-cells 100 --json "$OUT/hex.json" > "$OUT/hex.txt" 2>&1
  step "hex table rc $?"
  for p in 2 3 4 5; do
    timeout 40 $G bench --hex --degrees $p --runs 7 --cpu-cells 10 --tiled-sweep --sweep-shapes ${SWEEP_SHAPES:-4} > "$OUT/hex-sweep-p$p.txt" 2>&1
    step "hex sweep p = $p rc $?"
  done
  timeout 60 $G bench --hex --levels full,partial,none --degrees 6 --cells 10000 --runs 5 > "$OUT/hex-levels-p6.txt" 2>&1
  step "hex levels p = 6 rc $?"
  timeout 40 $G bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 5 --hyper-variants "${HYPER_VARIANTS:-tc staged,mom 2,cube 6 scatter-only}" > "$OUT/hyper-sweep.txt" 2>&1
  step "hyper sweep rc $?"
  if [ "${NEWTON:-0}" = 1 ]; then
    GALERKIN_NEWTON_TRACE=1 timeout 60 $G bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 1 \
      --solve-max-dofs 5000000 --hyper-loads 'step_rtol = 1e-2' --json "$OUT/hyper.json" > "$OUT/hyper.txt" 2>&1
    step "hyper newton rc $?"
  fi
fi
