#!/usr/bin/env bash
# hmom13's device call (one call, <= 170 s; NOT made in round 13: no machine could be started
# before the 08:10 limit). Run from a device pack (tools/device-pack NAME hyperelastic_cuda, this
# script copied beside run.sh): hyperelastic_cuda in the background (nice, 6 test threads), the
# kernel sweep at both rules (tc against the moments scheme), a Newton run at 10^6 with the moments
# scheme. Every result under $OUT.
d=$(cd "$(dirname "$0")" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
S=$OUT/hmom13-summary.txt
echo "start $(date -u +%T)" > $S; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> $S 2>&1
(export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1; nice timeout 150 "$d/tests/hyperelastic_cuda" --test-threads 6 > $OUT/hmom13-tests.log 2>&1; echo "rc $?" >> $OUT/hmom13-tests.log) &
V="tc staged,tc products-only,mom,mom 2,mom no-scatter,mom products-only"
for rule in full stiffness; do
  echo "sweep $rule $(date -u +%T)" >> $S
  timeout 55 "$d/galerkin" bench --hyper-kernel-sweep --hyper-quadrature $rule --dofs 1000000 --degrees 2 --runs 5 --hyper-variants "$V" 2>&1 | tee $OUT/hmom13-sweep-$rule.txt >&2
done
echo "newton $(date -u +%T)" >> $S
GALERKIN_HYPER_SCHEME=moments timeout 40 "$d/galerkin" bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 1 --json $OUT/hmom13-newton.json 2>&1 | tee $OUT/hmom13-newton.txt >&2
echo "wait tests $(date -u +%T)" >> $S
wait
echo "end $(date -u +%T)" >> $S; tail -5 $OUT/hmom13-tests.log >> $S
