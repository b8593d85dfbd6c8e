#!/usr/bin/env bash
# hexlo15's device call (round 15, H200): scheme III at trunk p = 2, 3 with paired tiles inside the
# pipelined cells (`TiledConfig::round15`, swept right after the default). First, alone, the new GPU
# test `paired_pipelined_cells_match_the_cpu`; then the rest of `hierarchical` in the background
# (niced); in the foreground per degree one bench process with the sweep's first shapes (the
# default, then round 15's paired shapes) and the time split (the default, round 13's default and
# every round-15 shape), each under a deadline; the same sweeps again in a second process each (the
# spread between processes); the table at p = 1, 2, 3 last. Copy bandwidth and tensor rates are
# measured by each run; sweep rows print as measured (stderr). At most 7 files under $OUT.
# Run as `bash .dev-hexlo15/call.sh .dev-hexlo15` (or the script's own directory).
d=$(cd "${1:-$(dirname "$0")}" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-255}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hexlo15-steps.txt" >&2; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi -L > "$OUT/hexlo15-steps.txt" 2>&1
step "unpacked"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
t="$d/tests"
timeout "$(left 75)" "$t/hierarchical" paired_pipelined_cells_match_the_cpu --include-ignored --nocapture > "$OUT/hexlo15-tests.log" 2>&1
step "paired_pipelined_cells_match_the_cpu rc $?"
(
  timeout "$(left 230)" nice "$t/hierarchical" --include-ignored --skip paired_pipelined_cells_match_the_cpu >> "$OUT/hexlo15-tests.log" 2>&1
  step "hierarchical rest rc $?"
) &
tests=$!
# p = 2 and p = 3: the default + 2 paired pipelined shapes; then again (a second process each).
for job in "2 3 40 a" "3 3 45 a" "2 3 30 b" "3 3 30 b"; do
  set -- $job
  json=(); [ "$4" = a ] && json=(--json "$OUT/hexlo15-p$1$4.json")
  timeout "$(left $3)" "$d/galerkin" bench --hex --degrees "$1" --runs 9 --cpu-cells 100 --tiled-sweep --sweep-shapes "$2" "${json[@]}" >> "$OUT/hexlo15-sweep.txt" 2>&1
  step "p = $1 sweep $4 (first $2 shapes) rc $?"
done
timeout "$(left 50)" "$d/galerkin" bench --hex --degrees 1,2,3 --runs 7 --cpu-cells 100 --json "$OUT/hexlo15-table.json" > "$OUT/hexlo15-table.txt" 2>&1
step "table p = 1, 2, 3 rc $?"
wait "$tests"
step "tests done"
grep -h "^sweep\|^split" "$OUT/hexlo15-sweep.txt"
grep -h "^ [123] \|floors\|fixed" "$OUT/hexlo15-table.txt"
grep -h "test result\|FAILED\|panicked\|max relative" "$OUT/hexlo15-tests.log" | grep -v "^p = [0-9] tiled .*e-1[5-9]$" | tail -30
grep -h "paired" "$OUT/hexlo15-tests.log" | head -20
cat "$OUT/hexlo15-steps.txt"
