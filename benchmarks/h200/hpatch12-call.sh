#!/usr/bin/env bash
# hpatch12's one device call (round 12): the packed GPU test (hyperelastic_cuda, in the background),
# the kernel sweep of both rules at 10^6 P2 (the default against the patch scheme), and Nsight
# Compute's L2 reduction counters of the patch kernel. Every result under $OUT; each step timed out.
d=$(cd "$(dirname "$0")" && pwd)
cd "$d"; [ -x ./galerkin ] || tar -xJf bin.tar.xz
export GALERKIN_REQUIRE_GPU=1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
s=$OUT/hpatch12-summary.txt
date -u > $s
( timeout 150 bash ./run.sh > $OUT/hpatch12-tests.txt 2>&1; echo "tests rc $? at $(el) s" >> $s ) &
V='tc staged,tc scatter-only,patch 6,patch 6 scatter-only,patch 1,patch 1 scatter-only,patch 6 hilbert,patch 6 scatter-only hilbert'
for q in stiffness full; do
  timeout 45 ./galerkin bench --hyper-kernel-sweep --hyper-quadrature $q --dofs 1000000 --degrees 2 --runs 5 --hyper-variants "$V" 2>&1 | tee $OUT/hpatch12-sweep-$q.txt >&2
  echo "sweep $q rc $? at $(el) s" >> $s
done
left=$(( 158 - $(el) )); [ $left -gt 5 ] || left=5
M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,lts__t_sector_hit_rate.pct
timeout $left /usr/local/cuda/bin/ncu --clock-control none --kernel-name regex:'hyper_(patch_)?assemble' --launch-count 18 --section SpeedOfLight --metrics $M \
  ./galerkin bench --hyper-kernel-sweep --hyper-quadrature stiffness --dofs 1000000 --degrees 2 --runs 1 --hyper-variants 'patch 6 scatter-only,patch 6,tc scatter-only' > $OUT/hpatch12-ncu.txt 2>&1
echo "ncu rc $? at $(el) s" >> $s
wait
cp $OUT/hpatch12.log $OUT/hpatch12-tests.log 2>/dev/null
cat $s; grep -h "asm\|floor\|skipped\|copy" $OUT/hpatch12-sweep-*.txt | cut -c1-170; grep "test result\|FAILED\|panicked" $OUT/hpatch12.log | head
