#!/usr/bin/env bash
# Second op6 device call: 8 and 16 threads, where the first call (threads-op6.sh) stopped at the
# CPU ceiling on BP3 p = 2 `full`. `partial` rows in one command per thread count, `full` one
# problem and degree per command, so a refused row does not hide the others (its timing is in the
# error message). Text in $OUT/threads-b.log.
d=.dev-op6; log=$OUT/threads-b.log
for t in 8 16; do
  echo "== RAYON_NUM_THREADS=$t partial, $(uptime)" >> $log
  RAYON_NUM_THREADS=$t $d/galerkin bench --ceed bp3,bp5 --degrees 1..4 --dofs 200000 --levels partial \
      --runs 5 --iterations 10 --json $OUT/h100cpu-op6-${t}t-partial.json >> $log 2>&1; echo "rc=$?" >> $log
  for p in 2 3 4; do for bp in bp3 bp5; do
    echo "== RAYON_NUM_THREADS=$t full $bp p=$p, $(uptime)" >> $log
    RAYON_NUM_THREADS=$t $d/galerkin bench --ceed $bp --degrees $p --dofs 200000 --levels full \
        --runs 5 --iterations 10 2>&1 | grep -E "^bp[0-9]|rror" >> $log; echo "rc=$?" >> $log
  done; done
done
uptime >> $log
