#!/usr/bin/env bash
# hpart14's device call (one call, <= 270 s): the `partial` and `none` levels of hierarchical
# hexahedra (issue 16, round 14). Run from a device pack (tools/device-pack hpart14 hierarchical
# levels, this script copied beside run.sh as call.sh): the `levels` and `hierarchical` GPU test
# binaries in the background (GALERKIN_REQUIRE_GPU=1, ignored tests included), in the foreground
# CG per iteration at the full (scheme III + CSR), partial and none levels for trunk p = 4, 5, 6 on
# 10^4 distorted, rotated hexahedra (elasticity and Poisson). Every result under $OUT.
d=$(cd "$(dirname "$0")" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
S=$OUT/hpart14-summary.txt
echo "start $(date -u +%T)" > $S; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> $S 2>&1
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
(nice timeout 230 "$d/tests/levels" --include-ignored --test-threads 3 > $OUT/hpart14-levels.log 2>&1; echo "rc $?" >> $OUT/hpart14-levels.log) &
(nice timeout 230 "$d/tests/hierarchical" --include-ignored --test-threads 3 > $OUT/hpart14-hierarchical.log 2>&1; echo "rc $?" >> $OUT/hpart14-hierarchical.log) &
echo "bench $(date -u +%T)" >> $S
timeout 200 "$d/galerkin" bench --hex --levels full,partial,none --degrees 4,5,6 --cells 10000 --runs 5 --json $OUT/hpart14-levels-bench.json 2>&1 | tee $OUT/hpart14-levels-bench.txt >&2
echo "bench rc ${PIPESTATUS[0]} $(date -u +%T)" >> $S
echo "wait tests $(date -u +%T)" >> $S
wait
echo "end $(date -u +%T)" >> $S
for t in levels hierarchical; do echo "== $t"; grep -E "^test .*(FAILED|panicked)|^test result|^rc " $OUT/hpart14-$t.log; done >> $S
cat $S
