#!/usr/bin/env bash
# hpatch12's one device call (round 12): the kernel sweep of both rules at 10^6 P2 (the default
# against the patch scheme), Newton with the patch scheme against the CPU at 10^5 and against the
# default at 10^6 (the packed GPU = CPU test binary could not be built in time on the loaded host),
# and Nsight Compute's L2 reduction counters. Every result under $OUT; each step timed out.
d=$(cd "$(dirname "$0")" && pwd)
cd "$d"
export GALERKIN_REQUIRE_GPU=1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
s=$OUT/hpatch12-summary.txt
date -u > $s
V='tc staged,tc scatter-only,patch 6,patch 6 scatter-only,patch 1,patch 1 scatter-only,patch 6 hilbert,patch 6 scatter-only hilbert'
for q in stiffness full; do
  timeout 40 ./galerkin bench --hyper-kernel-sweep --hyper-quadrature $q --dofs 1000000 --degrees 2 --runs 5 --hyper-variants "$V" 2>&1 | tee $OUT/hpatch12-sweep-$q.txt >&2
  echo "sweep $q rc $? at $(el) s" >> $s
done
N=$OUT/hpatch12-newton.txt
GALERKIN_HYPER_SCHEME=patch timeout 25 ./galerkin bench --hyperelastic --dofs 100000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 100000 --runs 1 > $N 2>&1
echo "newton 1e5 patch+cpu rc $? at $(el) s" >> $s
for sc in patch tc; do
  echo "=== 1e6 GALERKIN_HYPER_SCHEME=$sc" >> $N
  GALERKIN_HYPER_SCHEME=$sc timeout 20 ./galerkin bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 1 >> $N 2>&1
  echo "newton 1e6 $sc rc $? at $(el) s" >> $s
done
left=$(( 160 - $(el) )); [ $left -gt 5 ] || left=5
M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,lts__t_sector_hit_rate.pct
timeout $left /usr/local/cuda/bin/ncu --clock-control none --kernel-name regex:'hyper_(patch_)?assemble' --launch-count 14 --section SpeedOfLight --metrics $M \
  ./galerkin bench --hyper-kernel-sweep --hyper-quadrature stiffness --dofs 1000000 --degrees 2 --runs 1 --hyper-variants 'patch 6 scatter-only,patch 6,tc scatter-only' > $OUT/hpatch12-ncu.txt 2>&1
echo "ncu rc $? at $(el) s" >> $s
cat $s; grep -h "asm\|floor\|skipped\|copy" $OUT/hpatch12-sweep-*.txt | cut -c1-170; grep -i "newton\|asm\|gpu\|cpu\|error" $N | cut -c1-160 | head -30
