#!/usr/bin/env bash
# Stop 64's call: the follower pressure in plane stress on the GPU — the edge thickness's two kernels
# (`hyperelastic_pressure.cu`) against the CPU (`gpu_pressure_terms_equal_the_cpu`, with the fibre law), a
# Newton solve of the squeezed sheet (`gpu_newton_solution_equals_the_cpu`), plane stress's assembly after
# `hl_plane_stress` took the local Newton (`gpu_plane_strain_residual_and_jacobian_equal_the_cpu`), the 3D
# kernels beside them (`gpu_residual_and_jacobian_equal_the_cpu`), and the inflated-membrane example on both
# backends. Usage: bash benchmarks/h200/s64-call.sh .dev-s64 (pack: bin.tar.xz of galerkin and
# tests/hyperelastic_cuda); timeout_s 400 (BUDGET 360).
NAME=${NAME:-lead-s64}; BUDGET=${BUDGET:-360}; source benchmarks/h200/call-lib.sh "$1"
lane 260 hyperelastic_cuda --test-threads 4 gpu_pressure_terms_equal_the_cpu gpu_newton_solution_equals_the_cpu gpu_plane_strain_residual_and_jacobian_equal_the_cpu gpu_residual_and_jacobian_equal_the_cpu &
for b in cuda cpu; do
  timeout "$(left 60)" "$G" run examples/hyperelastic-inflated-membrane.toml --out "$OUT/membrane-$b" --backend "$b" > "$OUT/$NAME-membrane-$b.txt" 2>&1
  step "membrane $b rc $?"
  cp "$OUT/membrane-$b/report.json" "$OUT/$NAME-membrane-$b.json" 2>/dev/null
done
wait; lanes_done
rm -rf "$OUT"/membrane-*
keep "$NAME-membrane-*.txt" "backend\|space\|solver\|rror" 8
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|skipped\|^rc " 20
cat "$OUT/$NAME-steps.txt"
