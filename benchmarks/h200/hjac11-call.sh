#!/usr/bin/env bash
# hjac11's one device call (round 11): the packed GPU tests (run.sh), the kernel sweep of both rules
# at 10^6 P2, the 10^6 GPU Newton row, and Nsight Compute's memory counters of three scatter
# variants. Every result under $OUT; each step under its own time limit (the call has 200 s).
d=$(cd "$(dirname "$0")" && pwd)
cd "$d"; [ -x ./galerkin ] || tar -xJf bin.tar.xz
export GALERKIN_REQUIRE_GPU=1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
s=$OUT/hjac11-summary.txt
timeout 75 bash ./run.sh > $s 2>&1; echo "tests rc $? at $(el) s" >> $s
V='pairs,pairs pos,pairs products-only,pairs mesh-order,pairs pos mesh-order,tc staged,tc staged global,tc staged store,tc staged mesh-order,tc staged global mesh-order,tc no-scatter,tc products-only,tc scatter-only,tc scatter-only mesh-order,tc scatter-only global,tc scatter-only global mesh-order,tc scatter-only store,tc scatter-only store mesh-order,tc scatter-only global store,tc scatter-only contig,tc scatter-only global contig,tc prologue-only'
for q in stiffness full; do
  timeout 40 ./galerkin bench --hyper-kernel-sweep --hyper-quadrature $q --dofs 1000000 --degrees 2 --runs 5 --hyper-variants "$V" > $OUT/hjac11-sweep-$q.txt 2>&1
  echo "sweep $q rc $? at $(el) s" >> $s
done
timeout 28 ./galerkin bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 3 --json $OUT/hjac11-newton.json > $OUT/hjac11-newton.txt 2>&1
echo "newton rc $? at $(el) s" >> $s
left=$(( 192 - $(el) )); [ $left -gt 5 ] || left=5
P='tc scatter-only global mesh-order,tc scatter-only,tc staged'
M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,lts__t_sector_hit_rate.pct
timeout $left /usr/local/cuda/bin/ncu --clock-control none --kernel-name hyper_assemble --section MemoryWorkloadAnalysis --section SpeedOfLight --metrics $M \
  ./galerkin bench --hyper-kernel-sweep --hyper-quadrature stiffness --dofs 1000000 --degrees 2 --runs 1 --hyper-variants "$P" > $OUT/hjac11-ncu.txt 2>&1
echo "ncu rc $? at $(el) s" >> $s
cat $s; grep -h "asm\|floor\|skipped" $OUT/hjac11-sweep-*.txt | cut -c1-150; tail -4 $OUT/hjac11-newton.txt
