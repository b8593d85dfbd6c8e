#!/usr/bin/env bash
# hexhi15's device call (round 15, H200): scheme III at trunk p = 4, 5 with pipelined rounds
# (`pipe_rounds`, TiledConfig::round15_high). First the new GPU = CPU test
# `pipelined_rounds_match_the_cpu` alone; then the rest of `hierarchical` and `hierarchical_parts`
# in the background (niced); in the foreground per degree one bench process with the sweep's first
# shapes (the default, then round 15's three) and the time split of the default and of round 15's
# first shape; the table at p = 4, 5; then the sweeps again in a second process each where time
# is left (the spread between processes). Sweep rows print as measured (stderr), with registers
# and local bytes. At most 8 files under $OUT. Run as `bash .dev-hexhi15/call.sh .dev-hexhi15`.
d=$(cd "${1:-$(dirname "$0")}" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-258}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hexhi15-steps.txt" >&2; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi -L > "$OUT/hexhi15-steps.txt" 2>&1
step "unpacked"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
t="$d/tests"
timeout "$(left 90)" "$t/hierarchical" pipelined_rounds_match_the_cpu --include-ignored --nocapture > "$OUT/hexhi15-tests.log" 2>&1
step "pipelined_rounds_match_the_cpu rc $?"
(
  timeout "$(left 230)" nice "$t/hierarchical" --include-ignored --skip pipelined_rounds_match_the_cpu >> "$OUT/hexhi15-tests.log" 2>&1
  step "hierarchical rest rc $?"
  timeout "$(left 60)" nice "$t/hierarchical_parts" --include-ignored >> "$OUT/hexhi15-tests.log" 2>&1
  step "hierarchical_parts rc $?"
) &
tests=$!
for job in "4 4 50 a" "5 4 70 a"; do
  set -- $job
  timeout "$(left $3)" "$d/galerkin" bench --hex --degrees "$1" --runs 7 --cpu-cells 100 --tiled-sweep --sweep-shapes "$2" --json "$OUT/hexhi15-p$1$4.json" >> "$OUT/hexhi15-sweep.txt" 2>&1
  step "p = $1 sweep $4 (first $2 shapes) rc $?"
done
timeout "$(left 45)" "$d/galerkin" bench --hex --degrees 4,5 --runs 7 --cpu-cells 100 --json "$OUT/hexhi15-table.json" > "$OUT/hexhi15-table.txt" 2>&1
step "table p = 4, 5 rc $?"
for job in "4 4 35 b" "5 4 50 b"; do
  set -- $job
  [ "$(left 100)" -gt 25 ] || break
  timeout "$(left $3)" "$d/galerkin" bench --hex --degrees "$1" --runs 7 --cpu-cells 100 --tiled-sweep --sweep-shapes "$2" >> "$OUT/hexhi15-sweep.txt" 2>&1
  step "p = $1 sweep $4 (first $2 shapes) rc $?"
done
wait "$tests"
step "tests done"
grep -h "^sweep\|^split" "$OUT/hexhi15-sweep.txt"
grep -h "^ [45] \|floors\|fixed" "$OUT/hexhi15-table.txt"
grep -h "test result\|FAILED\|panicked\|max relative" "$OUT/hexhi15-tests.log" | grep -v "^p = [0-9] tiled .*e-1[5-9]$" | tail -30
cat "$OUT/hexhi15-steps.txt"
