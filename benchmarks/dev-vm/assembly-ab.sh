#!/bin/bash
# Two galerkin binaries' `bench --assembly` alternated in one command (issue 11, op9): per thread
# count, ROUNDS rounds of A then B, each run's process CPU time beside its table, `uptime` before
# each run. On a loaded machine only such alternated pairs compare.
#   assembly-ab.sh NAME_A BIN_A NAME_B BIN_B "THREADS" ROUNDS CASE...
# op9 step 1: assembly-ab.sh old <798ed82>/galerkin main <2394ff0>/galerkin "1 2" 2 p1-tet:60 q1-hex:64
#   (the thread loop was inside the round loop there)
# op9 step 2: assembly-ab.sh main <2394ff0>/galerkin op9 <op9>/galerkin "2 1" 2 p1-tet:60 p2-tet:30 q1-hex:64 q2-hex:16
na=$1 a=$2 nb=$3 b=$4 threads=$5 rounds=$6; shift 6
cases=(); for c in "$@"; do cases+=(--case "$c"); done
echo "# $(date -u) $(uptime)"
for thr in $threads; do
  for round in $(seq 1 "$rounds"); do
    for side in a b; do
      if [ $side = a ]; then name=$na bin=$a; else name=$nb bin=$b; fi
      echo "== threads=$thr round $round $name  $(uptime | sed 's/.*load/load/')"
      RAYON_NUM_THREADS=$thr /usr/bin/time -f "cpu user %U s sys %S s wall %e s" "$bin" bench --assembly "${cases[@]}" --repeats 3 2>&1 | grep -v "^whole"
    done
  done
done
echo "# end $(date -u) $(uptime)"
