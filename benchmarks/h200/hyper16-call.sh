#!/usr/bin/env bash
# hyper16's device call (round 16, H200): the owner gather (`Scheme::Gather`, sweep rows `gather`,
# `gather scatter-only`; each row also prints the gather kernel alone). First the two new GPU = CPU
# tests in the background (niced), then the rest of `hyperelastic_cuda` where time is left; in the
# foreground the 10^6 P2 sweep at both rules against `tc staged`, `cube 6 scatter-only` and the
# where-the-time-goes rows; a Newton run at 10^6 with the gather; the gather kernel's DRAM bytes
# under Nsight Compute. At most 8 files under $OUT. Run as `bash .dev-hyper16/call.sh .dev-hyper16`.
d=$(cd "${1:-$(dirname "$0")}" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-255}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hyper16-steps.txt" >&2; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi -L > "$OUT/hyper16-steps.txt" 2>&1
step "unpacked"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
t="$d/tests"
(
  timeout "$(left 120)" nice "$t/hyperelastic_cuda" gpu_gather --test-threads 2 --nocapture > "$OUT/hyper16-tests.log" 2>&1
  step "hyperelastic_cuda gpu_gather rc $?"
  timeout "$(left 200)" nice "$t/hyperelastic_cuda" --skip gpu_gather --skip gpu_residual_and_jacobian_equal_the_cpu --test-threads 4 >> "$OUT/hyper16-tests.log" 2>&1
  step "hyperelastic_cuda rest rc $?"
) &
tests=$!
V="tc staged,gather,gather u8,gather scatter-only,cube 6 scatter-only,tc scatter-only,tc no-scatter,tc products-only"
for rule in stiffness full; do
  timeout "$(left 85)" "$d/galerkin" bench --hyper-kernel-sweep --hyper-quadrature $rule --dofs 1000000 --degrees 2 --runs 5 --hyper-variants "$V" > "$OUT/hyper16-sweep-$rule.txt" 2>&1
  step "sweep $rule rc $?"
done
GALERKIN_HYPER_SCHEME=gather timeout "$(left 40)" "$d/galerkin" bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 3 > "$OUT/hyper16-newton.txt" 2>&1
step "Newton 10^6 with the gather rc $?"
if command -v ncu > /dev/null && [ "$(left 60)" -gt 35 ]; then
  timeout "$(left 50)" ncu --clock-control none --kernel-name regex:'hyper_(gather|assemble)' --launch-count 4 --section SpeedOfLight \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_op_write.sum,lts__t_sectors_op_red.sum \
    "$d/galerkin" bench --hyper-kernel-sweep --hyper-quadrature stiffness --dofs 1000000 --degrees 2 --runs 1 --hyper-variants "gather scatter-only" > "$OUT/hyper16-ncu.txt" 2>&1
  step "ncu rc $?"
fi
wait "$tests"
step "tests done"
grep -h "floor\|^tc staged\|^gather\|^cube\|^tc " "$OUT"/hyper16-sweep-*.txt
grep -h "asm\|scheme\|newton" "$OUT/hyper16-newton.txt" | head -8
grep -h "hyper_gather\|hyper_assemble\|dram__bytes\|hit_rate\|sectors_op\|Duration" "$OUT/hyper16-ncu.txt" 2>/dev/null | head -40
grep -h "test result\|FAILED\|panicked\|^test " "$OUT/hyper16-tests.log" | tail -30
cat "$OUT/hyper16-steps.txt"
