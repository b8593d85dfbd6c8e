#!/usr/bin/env bash
# hcube13's one device call (round 13): the packed hyperelastic_cuda (GPU = CPU, the new patches among
# them) in the background, the kernel sweep at 10^6 P2 of the stiffness rule (the scatter alone of
# every patch shape, then the whole kernels) and of the full rule (whole kernels), and Nsight
# Compute's L2 reduction counters on the scatter-only kernels. Every result under $OUT; each step
# timed out; rows printed as measured.
d=$(cd "$(dirname "$0")" && pwd)
cd "$d"
[ -x ./galerkin ] || tar -xJf bin.tar.xz
export GALERKIN_REQUIRE_GPU=1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
s=$OUT/hcube13-summary.txt
date -u > $s
(RUST_TEST_THREADS=6 nice -n 10 timeout 150 bash ./run.sh > $OUT/hcube13-tests.txt 2>&1; echo "tests rc $? at $(el) s" >> $s) &
SO='patch 6 scatter-only,cube 6 scatter-only,cube 6 turns scatter-only,cube 12 scatter-only,cube 12/6 scatter-only,cube 24/12 scatter-only,cube 48/6 scatter-only,cube 48/12 scatter-only,cube 48/12 turns scatter-only,cube 48/24 scatter-only'
W='patch 6,cube 6,cube 6 turns,cube 12/6,cube 24/12,cube 48/12,cube 48/12 turns'
timeout 70 ./galerkin bench --hyper-kernel-sweep --hyper-quadrature stiffness --dofs 1000000 --degrees 2 --runs 5 --hyper-variants "tc staged,tc scatter-only,$SO,$W" 2>&1 | tee $OUT/hcube13-sweep-stiffness.txt >&2
echo "sweep stiffness rc $? at $(el) s" >> $s
timeout 35 ./galerkin bench --hyper-kernel-sweep --hyper-quadrature full --dofs 1000000 --degrees 2 --runs 5 --hyper-variants "tc staged,$W" 2>&1 | tee $OUT/hcube13-sweep-full.txt >&2
echo "sweep full rc $? at $(el) s" >> $s
left=$(( 158 - $(el) )); [ $left -gt 5 ] || left=5
M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,lts__t_sectors_op_write.sum,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active
timeout $left /usr/local/cuda/bin/ncu --clock-control none --kernel-name regex:'hyper_(patch_)?assemble' --launch-count 18 --section SpeedOfLight --section Occupancy --metrics $M \
  ./galerkin bench --hyper-kernel-sweep --hyper-quadrature stiffness --dofs 1000000 --degrees 2 --runs 1 --hyper-variants 'cube 6 scatter-only,cube 48/12 scatter-only,cube 48/24 scatter-only' > $OUT/hcube13-ncu.txt 2>&1
echo "ncu rc $? at $(el) s" >> $s
wait
cat $s; grep -h "asm\|floor\|skipped\|copy" $OUT/hcube13-sweep-*.txt | cut -c1-200; grep "test result\|FAILED\|panicked" $OUT/hcube13-tests.txt $OUT/hcube13.log 2>/dev/null | head
