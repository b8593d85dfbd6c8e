#!/usr/bin/env bash
# issue 17 tenth pass, one device call (plan: 10^7 ≤ 120 s with the one-core 10^5 beside it on
# core 15, then the GPU at 10^5 and 10^6 with the default and the new load path, no test binary: the branch's could not be built in time)
d=$(cd "$(dirname "$0")" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$d/galerkin
PATHKEYS="$(cat "$d/path.txt")"
date -u > $OUT/bench.txt
(RAYON_NUM_THREADS=1 timeout 110 taskset -c 15 $G bench --hyperelastic --dofs 100000 --degrees 2 --cpu1-max-dofs 200000 --cpu-max-dofs 0 --runs 1 --solve-max-dofs 0 --json $OUT/cpu1.json > $OUT/cpu1.txt 2>&1; echo "cpu1 rc=$?" >> $OUT/cpu1.txt) &
GALERKIN_NEWTON_TRACE=1 timeout 120 $G bench --hyperelastic --dofs 10000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 1 --solve-max-dofs 5000000 --hyper-loads "$PATHKEYS" --json $OUT/gpu1e7.json > $OUT/bench1e7.txt 2>&1
echo "1e7 rc=$? at $SECONDS s" >> $OUT/bench1e7.txt
wait
timeout 35 $G bench --hyperelastic --dofs 100000,1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 3 --solve-max-dofs 0 --json $OUT/gpu.json >> $OUT/bench.txt 2>&1
echo "default rc=$? at $SECONDS s" >> $OUT/bench.txt
timeout $((193 - SECONDS)) $G bench --hyperelastic --dofs 100000,1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 3 --solve-max-dofs 0 --hyper-loads "$PATHKEYS" --json $OUT/gpupath.json >> $OUT/bench.txt 2>&1
echo "path rc=$? at $SECONDS s" >> $OUT/bench.txt
tail -3 $OUT/cpu1.txt; tail -6 $OUT/bench.txt; grep -c "newton [0-9]" $OUT/bench1e7.txt; tail -4 $OUT/bench1e7.txt | cut -c1-300
