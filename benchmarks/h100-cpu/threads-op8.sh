#!/usr/bin/env bash
# CPU `partial` against `full` back to back on the H100 host's 16-core CPU (issue 11, op8): one
# log, one tar of the JSON (rewritten after every thread count), one command per (problem, degree)
# so that a row the bandwidth guard refuses (its timing is in the log) does not hide the rows after
# it. Per thread count (16 and 8, then 4, 2, 1; `uptime` printed before each): `full` and `partial` (the
# default colored scatter) in one command, then `partial` in the gather form (--cpu-gather). Between 8 and 4 threads the `ceed` test binary with GALERKIN_REQUIRE_GPU=1, its
# slowest test skipped (every level on hexahedra, 80 s on the H100, unchanged GPU code, green in
# the fin7 merged-main check). Two files come back. Run from a checkout root holding .dev-op8/
# (device-pack op8 ceed): bash benchmarks/h100-cpu/threads-op8.sh (about 170 s).
d=${1:-.dev-op8}; [ -f $d/bin.tar.xz ] && tar -C $d -xJf $d/bin.tar.xz
log=$OUT/op8.log; j=/tmp/op8-json; mkdir -p $j
{ date -u; uptime; lscpu | grep -E "Model name|^CPU\(s\)|Thread|L2|L3"; } > $log 2>&1
bench() { "$d/galerkin" bench --dofs 200000 --runs 5 --iterations 10 "$@" 2>&1 | grep -E "^bp[0-9]|rror" >> $log; }
threads() {
  for t in "$@"; do
    echo "== RAYON_NUM_THREADS=$t, $(uptime)" >> $log
    for p in 1 2 3 4; do for bp in bp3 bp5; do
      RAYON_NUM_THREADS=$t bench --ceed $bp --degrees $p --levels full,partial --json $j/${t}t-$bp-p$p.json
      RAYON_NUM_THREADS=$t bench --ceed $bp --degrees $p --levels partial --cpu-gather --json $j/${t}t-$bp-p$p-gather.json
    done; done
    tar -C /tmp -cf $OUT/op8-json.tar op8-json
  done
}
threads 16 8
for t in $d/tests/ceed-*; do
  echo "== $(basename $t) (GALERKIN_REQUIRE_GPU=1), $(uptime)" >> $log
  GALERKIN_REQUIRE_GPU=1 timeout 45 "$t" --include-ignored --skip bake_off_operators_agree_at_every_level_on_hexahedra >> $log 2>&1; echo "rc=$?" >> $log
done
threads 4 2 1
uptime >> $log
