#!/usr/bin/env bash
# hex17's device call (round 17, H200): scheme III at trunk p = 4 with the Gram blocks overlapped
# with the next cell's first passes (`gram_overlap` 1–3, spread over two passes or not:
# TiledConfig::round17_high) beside the default (round 16's Gram tiles, m16n8k16, whose code
# GRAM_OVERLAP 0 leaves as it was). First the
# GPU = CPU test `gram_tiles_match_the_cpu` (the new shapes on a resident grid and on 2 blocks)
# alone; then the rest of `hierarchical` in the background (niced). In the foreground: the p = 4
# sweep's first 6 shapes (the default, overlap 1 and 3 spread, overlap 1, 2, 3) with the time split of each; the table
# p = 1…5; the p = 4 sweep again in a second process where time is left. Sweep rows print as
# measured (stderr), with registers and local bytes. At most 8 files under $OUT.
# Run as `bash .dev-hex17/call.sh .dev-hex17`.
d=$(cd "${1:-$(dirname "$0")}" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-262}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hex17-steps.txt" >&2; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi -L > "$OUT/hex17-steps.txt" 2>&1
step "unpacked"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
t="$d/tests"
timeout "$(left 60)" "$t/hierarchical" gram_tiles_match_the_cpu --include-ignored --nocapture > "$OUT/hex17-tests.log" 2>&1
step "gram_tiles_match_the_cpu rc $?"
(
  timeout "$(left 240)" nice "$t/hierarchical" --include-ignored --skip gram_tiles_match_the_cpu >> "$OUT/hex17-tests.log" 2>&1
  step "hierarchical rest rc $?"
) &
tests=$!
sweep() {  # tag degree shapes seconds file [json]
  local json=(); [ -n "$6" ] && json=(--json "$OUT/$6")
  timeout "$(left $4)" "$d/galerkin" bench --hex --degrees "$2" --runs 7 --cpu-cells 100 --tiled-sweep --sweep-shapes "$3" "${json[@]}" >> "$OUT/$5" 2>&1
  step "p = $2 sweep $1 (first $3 shapes) rc $?"
}
sweep a 4 6 110 hex17-sweep.txt hex17-p4a.json
timeout "$(left 60)" "$d/galerkin" bench --hex --degrees 1,2,3,4,5 --runs 7 --cpu-cells 100 --json "$OUT/hex17-table.json" > "$OUT/hex17-table.txt" 2>&1
step "table p = 1…5 rc $?"
[ "$(left 100)" -gt 60 ] && sweep b 4 6 90 hex17-sweep.txt
wait "$tests"
step "tests done"
echo "-- sweep"; grep -h "^sweep\|^split" "$OUT/hex17-sweep.txt"
grep -h "^ [1-5] \|floors\|fixed\|^gpu" "$OUT/hex17-table.txt"
grep -h "test result\|FAILED\|panicked\|max relative\|^test .* \(ok\|FAILED\)$" "$OUT/hex17-tests.log" | grep -v "^p = [0-9] tiled .*e-1[5-9]$" | grep -v " ok$" | tail -30
grep -h "^test gram_tiles\|^p = 4 tiled .*overlap" "$OUT/hex17-tests.log"
cat "$OUT/hex17-steps.txt"
