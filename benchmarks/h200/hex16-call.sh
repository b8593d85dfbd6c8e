#!/usr/bin/env bash
# hex16's device call (round 16, H200): scheme III at trunk p = 4 with Gram tiles (`gram`,
# TiledConfig::round16_high) and the one pipelined body (tiled_pipelined, p = 2…5). First the new
# GPU = CPU test `gram_tiles_match_the_cpu` alone; then the rest of `hierarchical` (with
# `wide_writes_and_register_caps_match_the_cpu`, unrun on a GPU since its p <= 4 expectation) and
# `hierarchical_parts` in the background (niced). In the foreground: the p = 4 sweep's first
# shapes (the default, Gram tiles on m16n8k8 and m16n8k16) with the time split; the p = 2, 3
# defaults (the one pipelined body) with their split; the same defaults from main's CLI
# (`galerkin-main`, before the change) for the same-call comparison; the table p = 1…5; then the
# p = 4 sweep again in a second process each side where time is left. Sweep rows print as measured
# (stderr), with registers and local bytes. At most 8 files under $OUT.
# Run as `bash .dev-hex16/call.sh .dev-hex16`.
d=$(cd "${1:-$(dirname "$0")}" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-258}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hex16-steps.txt" >&2; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
[ -x "$d/galerkin-main" ] || tar -C "$d" -xJf "$d/main.tar.xz"   # main's CLI (commit 1ce0664), packed beside
nvidia-smi -L > "$OUT/hex16-steps.txt" 2>&1
step "unpacked"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
t="$d/tests"
timeout "$(left 60)" "$t/hierarchical" gram_tiles_match_the_cpu --include-ignored --nocapture > "$OUT/hex16-tests.log" 2>&1
step "gram_tiles_match_the_cpu rc $?"
(
  timeout "$(left 235)" nice "$t/hierarchical" --include-ignored --skip gram_tiles_match_the_cpu >> "$OUT/hex16-tests.log" 2>&1
  step "hierarchical rest rc $?"
  timeout "$(left 60)" nice "$t/hierarchical_parts" --include-ignored >> "$OUT/hex16-tests.log" 2>&1
  step "hierarchical_parts rc $?"
) &
tests=$!
sweep() {  # binary tag degree shapes seconds file [json]
  local json=(); [ -n "$7" ] && json=(--json "$OUT/$7")
  timeout "$(left $5)" "$d/$1" bench --hex --degrees "$3" --runs 7 --cpu-cells 100 --tiled-sweep --sweep-shapes "$4" "${json[@]}" >> "$OUT/$6" 2>&1
  step "$1 p = $3 sweep $2 (first $4 shapes) rc $?"
}
sweep galerkin a 4 3 45 hex16-sweep.txt hex16-p4a.json
for p in 2 3; do sweep galerkin a $p 1 30 hex16-sweep.txt; done
for p in 2 3 4; do sweep galerkin-main a $p 1 30 hex16-base.txt; done
timeout "$(left 50)" "$d/galerkin" bench --hex --degrees 1,2,3,4,5 --runs 7 --cpu-cells 100 --json "$OUT/hex16-table.json" > "$OUT/hex16-table.txt" 2>&1
step "table p = 1…5 rc $?"
[ "$(left 100)" -gt 30 ] && sweep galerkin b 4 3 30 hex16-sweep.txt
[ "$(left 100)" -gt 20 ] && sweep galerkin-main b 4 1 20 hex16-base.txt
wait "$tests"
step "tests done"
echo "-- new"; grep -h "^sweep\|^split" "$OUT/hex16-sweep.txt"
echo "-- main"; grep -h "^sweep\|^split" "$OUT/hex16-base.txt" | grep -v "^split.*\(paired\|w×1t m16n8k8 table alt packed wide3 -\|factors alt cs packed wide3 -\)"
grep -h "^ [1-5] \|floors\|fixed" "$OUT/hex16-table.txt"
grep -h "test result\|FAILED\|panicked\|max relative\|^test .* \(ok\|FAILED\)$" "$OUT/hex16-tests.log" | grep -v "^p = [0-9] tiled .*e-1[5-9]$" | grep -v " ok$" | tail -30
grep -h "^test wide_writes_and_register_caps\|^test gram_tiles\|^test pipelined" "$OUT/hex16-tests.log"
cat "$OUT/hex16-steps.txt"
