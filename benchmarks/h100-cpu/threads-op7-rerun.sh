#!/usr/bin/env bash
# A rerun of the op7 measurement (not yet run) that loses nothing to the device tool's 8-file limit
# or to a refused row: one log, one tar of the JSON (rewritten after every thread count), one
# command per (problem, degree) so that a row the bandwidth guard refuses (its timing is in the
# log) does not hide the rows after it. `partial` with the default colored scatter beside `full`,
# then the gather form (--cpu-gather). Run from a checkout root holding .dev-op7/ (device-pack op7
# ceed): bash benchmarks/h100-cpu/threads-op7-rerun.sh (about 150 s).
d=.dev-op7; [ -f $d/bin.tar.xz ] && tar -C $d -xJf $d/bin.tar.xz
log=$OUT/op7-rerun.log; j=/tmp/op7-json; mkdir -p $j
{ date -u; uptime; lscpu | grep -E "Model name|^CPU\(s\)|Thread|L2|L3"; } > $log 2>&1
bench() { "$d/galerkin" bench --dofs 200000 --runs 5 --iterations 10 "$@" 2>&1 | grep -E "^bp[0-9]|rror" >> $log; }
for t in 16 8 4 2 1; do
  echo "== RAYON_NUM_THREADS=$t, $(uptime)" >> $log
  for p in 1 2 3 4; do for bp in bp3 bp5; do
    RAYON_NUM_THREADS=$t bench --ceed $bp --degrees $p --levels full,partial --json $j/${t}t-$bp-p$p.json
    RAYON_NUM_THREADS=$t bench --ceed $bp --degrees $p --levels partial --cpu-gather --json $j/${t}t-$bp-p$p-gather.json
  done; done
  tar -C /tmp -cf $OUT/op7-rerun-json.tar op7-json
done
for t in $d/tests/ceed-*; do
  echo "== $(basename $t) (GALERKIN_REQUIRE_GPU=1), $(uptime)" >> $log
  GALERKIN_REQUIRE_GPU=1 timeout 60 "$t" --include-ignored >> $log 2>&1; echo "rc=$?" >> $log
done
uptime >> $log
