#!/usr/bin/env bash
# The op7 device call (issue 11), as run at 06:33 UTC. Then the gather form was the default and
# `--cpu-colored` chose the colored scatter; now the colored scatter is the default and
# `--cpu-gather` chooses the gather form. Kept as h100cpu-op7-${t}t-full-gather.json (full and
# gather rows) and h100cpu-op7-${t}t-colored-scatter.json. CPU `full` and `partial` at 16, 8, 4, 2
# and 1 threads on the H100 host's 16-core CPU, `partial` with the gather form (default) and then the colored scatter
# (--cpu-colored) on the same warm process family, then the ceed test binary. Run from a checkout
# root holding .dev-op7/ (device-pack op7 ceed). Most important first: the call's time limit cuts
# the tail, and every row is already in its JSON. Text in $OUT/threads-op7.log.
d=.dev-op7; [ -f $d/bin.tar.xz ] && tar -C $d -xJf $d/bin.tar.xz
log=$OUT/threads-op7.log
{ date -u; uptime; lscpu | grep -E "Model name|^CPU\(s\)|Thread|L2|L3"; } > $log 2>&1
bench() { "$d/galerkin" bench --ceed bp3,bp5 --dofs 200000 --runs 5 --iterations 10 "$@"; }
for t in 16 8 4 2 1; do
  echo "== RAYON_NUM_THREADS=$t, $(uptime)" >> $log
  RAYON_NUM_THREADS=$t bench --degrees 1..4 --levels full,partial --json $OUT/h100cpu-op7-${t}t.json >> $log 2>&1
  echo "rc=$?" >> $log
  echo "== RAYON_NUM_THREADS=$t colored scatter, $(uptime)" >> $log
  RAYON_NUM_THREADS=$t bench --degrees 1..4 --levels partial --cpu-colored --json $OUT/h100cpu-op7-${t}t-colored.json 2>&1 | grep -E "^bp[0-9]|rror" >> $log
  echo "rc=$?" >> $log
done
for t in $d/tests/ceed-*; do
  echo "== $(basename $t) (GALERKIN_REQUIRE_GPU=1), $(uptime)" >> $log
  GALERKIN_REQUIRE_GPU=1 timeout 40 "$t" --include-ignored >> $log 2>&1; echo "rc=$?" >> $log
done
uptime >> $log
