#!/usr/bin/env bash
# hjac12's one device call (round 12): the packed GPU test (hyperelastic_cuda) in the background,
# the kernel sweep of the full (14-point) and the stiffness (4-point) rule at 10^6 P2 over the
# twelfth pass's variants (copy bandwidth measured by each command), then Nsight Compute's
# SpeedOfLight / Occupancy / LaunchStats / WarpStateStats of three variants (each variant launches
# the kernel 6 times with --runs 1: assembly ×2, kernel alone ×2, residual ×2). Results under $OUT.
d=$(cd "$(dirname "$0")" && pwd)
cd "$d"; [ -x ./galerkin ] || tar -xJf bin.tar.xz
export GALERKIN_REQUIRE_GPU=1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
s=$OUT/hjac12-summary.txt
date > $s
( timeout 150 nice -n 10 ./tests/hyperelastic_cuda --include-ignored --test-threads 6 > $OUT/hjac12-tests.log 2>&1; echo "tests rc $? at $(el) s" >> $s ) &
tp=$!
V='tc staged,tc products-only,tc resmma,tc vec,tc lean,tc lean products-only,tc split,tc split lean,tc split lean products-only,tc split lean frag,tc split lean minb8,tc split lean minb12,tc lean minb16,tc split lean 1x4,tc split lean 1x2,tc 1x4'
for q in full stiffness; do
  echo "sweep $q start at $(el) s" >> $s
  timeout 48 ./galerkin bench --hyper-kernel-sweep --hyper-quadrature $q --dofs 1000000 --degrees 2 --runs 5 --hyper-variants "$V" 2>&1 | tee $OUT/hjac12-sweep-$q.txt >&2
  echo "sweep $q rc $? at $(el) s" >> $s
done
left=$(( 162 - $(el) )); [ $left -gt 5 ] || left=5
P='tc staged,tc lean,tc split lean'
timeout $left /usr/local/cuda/bin/ncu --clock-control none --kernel-name hyper_assemble -c 18 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  ./galerkin bench --hyper-kernel-sweep --hyper-quadrature full --dofs 1000000 --degrees 2 --runs 1 --hyper-variants "$P" > $OUT/hjac12-ncu.txt 2>&1
echo "ncu rc $? at $(el) s" >> $s
wait $tp
cat $s; grep "test result\|FAILED\|panicked" $OUT/hjac12-tests.log | head -20
