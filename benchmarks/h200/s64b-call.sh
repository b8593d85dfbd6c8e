#!/usr/bin/env bash
# Stop 64's second call: GMRES with classical Gram–Schmidt twice (CGS2: `Backend::dots` and `add_combination`,
# 32 vectors a launch) — the many-vector kernels against the CPU (`cuda_backend`), every GMRES user's GPU tests
# (`advection_cuda`, `dg_cuda`, `hyperelastic_cuda`'s pressure and Newton tests), and the GMRES examples on the
# GPU with main's CLI before (modified Gram–Schmidt, `.dev-s64`) and after, alternating, twice each.
# Usage: bash benchmarks/h200/s64b-call.sh .dev-s64b .dev-s64; timeout_s 560 (BUDGET 520).
NAME=${NAME:-lead-s64b}; BUDGET=${BUDGET:-520}; source benchmarks/h200/call-lib.sh "$1"
old=$(cd "$2" && pwd); [ -x "$old/galerkin" ] || tar -C "$old" -xJf "$old/bin.tar.xz"
lane 120 cuda_backend --test-threads 4 &
lane 200 advection_cuda --test-threads 4 &
lane 200 dg_cuda --test-threads 4 &
lane 260 hyperelastic_cuda --test-threads 4 gpu_pressure_terms_equal_the_cpu gpu_newton_solution_equals_the_cpu &
wait; lanes_done
for pass in 1 2; do
  for ex in hyperelastic-inflated-membrane advection-rotating hyperelastic-pressurised-tube; do
    for who in old new; do
      bin=$G; [ $who = old ] && bin=$old/galerkin
      timeout "$(left 60)" "$bin" run examples/$ex.toml --out "$OUT/x" --backend cuda > "$OUT/$NAME-$ex-$who-$pass.txt" 2>&1
      step "$ex $who pass $pass rc $?"
      cp "$OUT/x/report.json" "$OUT/$NAME-$ex-$who-$pass.json" 2>/dev/null; rm -rf "$OUT/x"
    done
  done
done
keep "$NAME-*-[12].txt" "solver\|time \[s\]" 24
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|skipped\|^rc " 24
cat "$OUT/$NAME-steps.txt"
