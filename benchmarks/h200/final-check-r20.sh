#!/usr/bin/env bash
# Lead's device check of merged main after round 20. The three targets first, on a quiet GPU (the IGA
# many-rhs sweep of ${IGA_ENGINES:-gpu-rows}, the default hex table at p = 4, 5, the hyperelastic rows of
# ${HYPER_VARIANTS:-tc cols}), then every GPU test binary of the pack (GALERKIN_REQUIRE_GPU=1,
# --include-ignored) in four lanes, the two longest (hyperelastic_cuda, iga_cuda) first.
# Usage: bash benchmarks/h200/final-check-r20.sh .dev-NAME    (binaries in .dev-NAME/bin.tar.xz)
d=$1
SECONDS=0
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv > "$S" 2>&1
step() { echo "== $SECONDS s $(date -u +%T): $1" | tee -a "$S" >&2; }
timeout 150 $G bench-iga --gpu --sweeps rhs --rhs 1,256 --rhs-elements 1048576 --rhs-degree 3 --reps 3 --cpu-max 0 \
  --rhs-engines "${IGA_ENGINES:-gpu-rows}" > "$OUT/iga-rhs.txt" 2>&1
step "iga rc $?"
timeout 40 $G bench --hex --degrees 4,5 --runs 7 --cpu-cells 10 > "$OUT/hex.txt" 2>&1
step "hex rc $?"
timeout 30 $G bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 5 --hyper-quadrature stiffness \
  --hyper-variants "${HYPER_VARIANTS:-tc cols}" > "$OUT/hyper-sweep.txt" 2>&1
step "hyper rc $?"
bash benchmarks/h200/gpu-test-lanes.sh "$d" 4 ${TEST_LIMIT:-400} "$S" ${TESTS:-hyperelastic_cuda iga_cuda levels iga_batched hierarchical box_cuda dg_cuda advection_cuda hierarchical_parts heat_lattice cuda_backend ceed heat_direct setup_cuda cuda_release qfunction_parity}
step "tests done"
cat "$S"
