#!/usr/bin/env bash
# Stop 63's call: plane stress on the GPU (the DIM = 2 kernel with HL_PLANE_STRESS — residual and Jacobian
# against the CPU for every law and 2D element, a Newton solve of the fibre strip in plane stress — and the
# rubber-sheet example on both backends), `GpuGrouped`'s boundary values copied into their own buffer
# (`hierarchical_parts`), the GPU Newton at 10^6 with its `jacobian allocation` line, and issue 17's P2 Jacobian
# rows on this H100 with their no-scatter and 2-of-5-rows bounds (two passes, opposite orders).
# Usage: bash benchmarks/h200/s63-call.sh .dev-s63 (pack: bin.tar.xz of galerkin and tests/{hyperelastic_cuda,
# hierarchical_parts}); timeout_s 430 (BUDGET 380).
NAME=${NAME:-lead-s63}; BUDGET=${BUDGET:-480}; source benchmarks/h200/call-lib.sh "$1"
lane 200 hyperelastic_cuda --test-threads 2 gpu_plane_strain_residual_and_jacobian_equal_the_cpu gpu_newton_solution_equals_the_cpu &
lane 150 hierarchical_parts --test-threads 4 &
wait; lanes_done
for b in cuda cpu; do
  timeout "$(left 60)" "$G" run examples/hyperelastic-rubber-sheet.toml --out "$OUT/sheet-$b" --backend "$b" > "$OUT/$NAME-sheet-$b.txt" 2>&1
  step "sheet $b rc $?"
  cp "$OUT/sheet-$b/report.json" "$OUT/$NAME-sheet-$b.json" 2>/dev/null
done
timeout "$(left 90)" "$G" bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 >> "$OUT/$NAME-newton.txt" 2>&1
step "newton rc $?"
sweep_passes 70 "tc cols fuse sty minb20,tc blocks fuse sty minb20 trim,tc no-scatter fuse sty minb20 trim,tc cols fuse sty minb20 keep2"
rm -rf "$OUT"/sheet-*
keep "$NAME-newton.txt" "^cuda\|setup\|allocation\|Newton:" 8
keep "$NAME-sheet-*.txt" "backend\|space\|solver\|rror" 8
keep "$NAME-sweep.txt" "copy\|floor\|tc " 24
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|skipped\|^rc " 20
cat "$OUT/$NAME-steps.txt"
