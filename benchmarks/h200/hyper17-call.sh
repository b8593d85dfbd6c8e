#!/usr/bin/env bash
# hyper17's device call (round 17, H200): the owner gather without a stage (`Scheme::Recompute`,
# sweep rows `gather recompute`, `gather recompute 200`, `gather recompute w8`; each prints its
# redundancy and its bytes/flops model next to the time). First the new GPU = CPU and Newton tests
# in the background (niced), then round 16's gather tests and the rest where time is left; in the
# foreground the 10^6 P2 sweep at both rules against `tc staged`, `cube 6 scatter-only` and `gather`,
# then a Newton run at 10^6 with the recomputing gather. At most 8 files under $OUT.
# Run as `bash .dev-hyper17/call.sh .dev-hyper17`.
d=$(cd "${1:-$(dirname "$0")}" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-262}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hyper17-steps.txt" >&2; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi -L > "$OUT/hyper17-steps.txt" 2>&1
step "unpacked"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
t="$d/tests"
(
  timeout "$(left 150)" nice "$t/hyperelastic_cuda" gpu_recompute --test-threads 2 --nocapture > "$OUT/hyper17-tests.log" 2>&1
  step "hyperelastic_cuda gpu_recompute rc $?"
  timeout "$(left 200)" nice "$t/hyperelastic_cuda" --skip gpu_recompute --skip gpu_residual_and_jacobian_equal_the_cpu --test-threads 4 >> "$OUT/hyper17-tests.log" 2>&1
  step "hyperelastic_cuda rest rc $?"
) &
tests=$!
V="tc staged,gather recompute,gather recompute 200,gather recompute w8,cube 6 scatter-only,gather"
for rule in stiffness full; do
  timeout "$(left 95)" "$d/galerkin" bench --hyper-kernel-sweep --hyper-quadrature $rule --dofs 1000000 --degrees 2 --runs 5 --hyper-variants "$V" > "$OUT/hyper17-sweep-$rule.txt" 2>&1
  step "sweep $rule rc $?"
done
if [ "$(left 60)" -gt 30 ]; then
  GALERKIN_HYPER_SCHEME=recompute timeout "$(left 45)" "$d/galerkin" bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 1 > "$OUT/hyper17-newton.txt" 2>&1
  step "Newton 10^6 with the recomputing gather rc $?"
fi
wait "$tests"
step "tests done"
grep -h "floor\|^tc staged\|^gather\|^cube" "$OUT"/hyper17-sweep-*.txt
grep -h "asm\|scheme\|newton" "$OUT/hyper17-newton.txt" 2>/dev/null | head -8
grep -h "test result\|FAILED\|panicked\|^test " "$OUT/hyper17-tests.log" | tail -30
cat "$OUT/hyper17-steps.txt"
