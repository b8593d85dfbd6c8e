#!/usr/bin/env bash
# CPU `partial` against `full` back to back on the H100 host's 16-core CPU (issue 11, op8). One log,
# one tar of the JSON (rewritten after every thread count): every level and every form of `partial`
# in its own command, so that a row the bandwidth guard refuses (its timing is in the log) hides no
# other. Per thread count (`uptime` printed before each), problem and degree: `full`; `partial` as
# by default (BP1/BP3 at p ≤ 2 on these boxes: the apply on the nodes, Kronecker products of 1D
# matrices); for BP3 p ≤ 2 also through the quadrature points (--cpu-no-kronecker, the default
# before); the gather form (--cpu-gather) and the scatter with the batches' own colours
# (--cpu-batch-colors). Then the `ceed` test binary with GALERKIN_REQUIRE_GPU=1 (its slowest test,
# every level on hexahedra — 80 s, GPU code unchanged here, green in the fin7 merged-main check —
# skipped), then one thread for BP3 p = 1, 2 (the flop cut alone). Two files come back.
# Run from a checkout root holding the pack (device-pack NAME ceed):
#   bash threads-op8.sh .dev-NAME "16 8"          (about 150 s)
# The first op8 call ran this script's first version (commit 4737b60: `full` and `partial` in one
# command, then --cpu-gather; threads 16 8, the tests, 4 2 1).
d=${1:-.dev-op8}; threads=${2:-16 8}; [ -f $d/bin.tar.xz ] && tar -C $d -xJf $d/bin.tar.xz
log=$OUT/op8.log; j=/tmp/op8-json; mkdir -p $j
{ date -u; uptime; lscpu | grep -E "Model name|^CPU\(s\)|Thread|L2|L3"; } > $log 2>&1
bench() { echo "# $*" >> $log; "$d/galerkin" bench --dofs 200000 --runs 5 --iterations 10 "$@" 2>&1 | grep -E "^bp[0-9]|rror" >> $log; }
row() {  # threads, problem, degree, name, flags...
  local t=$1 bp=$2 p=$3 name=$4; shift 4
  RAYON_NUM_THREADS=$t bench --ceed $bp --degrees $p "$@" --json $j/${t}t-$bp-p$p-$name.json
}
for t in $threads; do
  echo "== RAYON_NUM_THREADS=$t, $(uptime)" >> $log
  for p in 1 2 3 4; do for bp in bp3 bp5; do
    row $t $bp $p full --levels full
    row $t $bp $p partial --levels partial
    [ $bp = bp3 ] && [ $p -le 2 ] && row $t $bp $p points --levels partial --cpu-no-kronecker
    row $t $bp $p gather --levels partial --cpu-gather
    row $t $bp $p batch-colors --levels partial --cpu-batch-colors
  done; done
  tar -C /tmp -cf $OUT/op8-json.tar op8-json
done
for t in $d/tests/ceed-*; do
  echo "== $(basename $t) (GALERKIN_REQUIRE_GPU=1), $(uptime)" >> $log
  GALERKIN_REQUIRE_GPU=1 timeout 60 "$t" --include-ignored --skip bake_off_operators_agree_at_every_level_on_hexahedra >> $log 2>&1; echo "rc=$?" >> $log
done
echo "== RAYON_NUM_THREADS=1, $(uptime)" >> $log
for p in 1 2; do
  row 1 bp3 $p partial --levels partial
  row 1 bp3 $p points --levels partial --cpu-no-kronecker
done
tar -C /tmp -cf $OUT/op8-json.tar op8-json
uptime >> $log
