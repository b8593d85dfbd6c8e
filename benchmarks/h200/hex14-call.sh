#!/usr/bin/env bash
# hex14's device call (round 14, H200): scheme III at trunk p = 2, 3 with pipelined cells (`pipe`).
# In the background the GPU tests of `hierarchical` (the new `pipelined_cells_match_the_cpu` first,
# in a process of its own, then the rest, niced); in the foreground per degree one bench process
# with the sweep's first shapes (the default, then round 14's pipelined shapes) and the time split
# of the default and of the first pipelined shape, each under a deadline; then the same sweeps in
# a second process each (the spread between processes), and the table at p = 1, 2, 3 last. Copy
# bandwidth and tensor rates are measured by each run; sweep rows print as measured (stderr).
# Run as `bash .dev-hex14/call.sh .dev-hex14` (or the script's own directory).
d=$(cd "${1:-$(dirname "$0")}" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-255}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hex14-steps.txt" >&2; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi -L > "$OUT/hex14-steps.txt" 2>&1
step "unpacked"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
(
  t="$d/tests"
  timeout "$(left 70)" "$t/hierarchical" pipelined_cells_match_the_cpu --include-ignored --nocapture > "$OUT/hex14-tests.log" 2>&1
  step "pipelined_cells_match_the_cpu rc $?"
  timeout "$(left 200)" nice "$t/hierarchical" --include-ignored --skip pipelined_cells_match_the_cpu >> "$OUT/hex14-tests.log" 2>&1
  step "hierarchical rest rc $?"
) &
tests=$!
# p = 2: the default + 3 pipelined shapes; p = 3: the default + 2; then again (a second process each).
for job in "2 4 40 a" "3 3 45 a" "2 4 35 b" "3 3 40 b"; do
  set -- $job
  # (JSON rows of the first processes only: $OUT returns at most 8 files — the call of 2026-12-02
  # wrote 9 and lost the tests' log.)
  json=(); [ "$4" = a ] && json=(--json "$OUT/hex14-p$1$4.json")
  timeout "$(left $3)" "$d/galerkin" bench --hex --degrees "$1" --runs 9 --cpu-cells 100 --tiled-sweep --sweep-shapes "$2" "${json[@]}" >> "$OUT/hex14-sweep.txt" 2>&1
  step "p = $1 sweep $4 (first $2 shapes) rc $?"
done
timeout "$(left 60)" "$d/galerkin" bench --hex --degrees 1,2,3 --runs 7 --cpu-cells 100 --json "$OUT/hex14-table.json" > "$OUT/hex14-table.txt" 2>&1
step "table p = 1, 2, 3 rc $?"
wait "$tests"
step "tests done"
grep -h "^sweep\|^split" "$OUT/hex14-sweep.txt"
grep -h "^ [123] \|floors\|fixed" "$OUT/hex14-table.txt"
grep -h "test result\|FAILED\|panicked\|max relative" "$OUT/hex14-tests.log" | grep -v "^p = [0-9] tiled .*e-1[5-9]$" | tail -30
cat "$OUT/hex14-steps.txt"
