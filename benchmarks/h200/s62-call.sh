#!/usr/bin/env bash
# Stop 62's call: the follower pressure in plane strain on the GPU (its terms and a Newton solve against the CPU,
# the pressurised-tube example on both backends), main's upload refactor (adcd28a) under the GPU tests that use it
# (`cuda_backend`, `hierarchical_parts`, `dg_cuda`, `advection_cuda`), and the GPU Newton at 10^6 P2 dofs with the
# Jacobian's values zeroed on the device instead of uploaded (`GpuHyper::new_matrix`), twice.
# Usage: bash benchmarks/h200/s62-call.sh .dev-s62 (pack: bin.tar.xz of galerkin and tests/{hyperelastic_cuda,
# cuda_backend,hierarchical_parts,dg_cuda,advection_cuda}); timeout_s 460.
NAME=${NAME:-lead-s62}; BUDGET=${BUDGET:-420}; source benchmarks/h200/call-lib.sh "$1"
lane 200 hyperelastic_cuda --test-threads 4 gpu_pressure gpu_newton_solution_equals_the_cpu gpu_compressible \
  gpu_residual_and_jacobian_equal_the_cpu gpu_fuse_newton_equals_the_default &
lane 150 cuda_backend --test-threads 4 &
lane 150 hierarchical_parts --test-threads 4 &
lane 150 dg_cuda --test-threads 4 &
lane 150 advection_cuda --test-threads 4 &
wait; lanes_done
for b in cuda cpu; do
  timeout "$(left 60)" "$G" run examples/hyperelastic-pressurised-tube.toml --out "$OUT/tube-$b" --backend "$b" > "$OUT/$NAME-tube-$b.txt" 2>&1
  step "tube $b rc $?"
done
timeout "$(left 60)" "$G" run examples/poisson-3d.toml --out "$OUT/example" > "$OUT/$NAME-example.txt" 2>&1; step "example rc $?"
for i in 1 2; do
  timeout "$(left 90)" "$G" bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 >> "$OUT/$NAME-newton.txt" 2>&1
  step "newton $i rc $?"
done
rm -f "$OUT"/tube-*/*.vtu "$OUT"/example/*.vtu
keep "$NAME-newton.txt" "^cuda\|setup\|Newton:" 8
keep "$NAME-tube-*.txt" "backend\|solver\|rror" 6
keep "$NAME-example.txt" "backend\|solver\|rror" 4
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|skipped\|^rc " 20
cat "$OUT/$NAME-steps.txt"
