#!/usr/bin/env bash
# hex18's device call (round 18, H200): scheme III, trunk elasticity, 10 000 hexahedra.
# 1. The GPU = CPU test of the Gram-tile shapes (`gram_tiles_match_the_cpu`, now also round 18's
#    transposed passes and strip-pair order) alone.
# 2. The table p = 1…5 on a quiet GPU: III is now timed first, before the default kernel and schemes
#    I and II, and again after them (the p = 5 table/sweep gap) — with the GPU's SM clock, power,
#    temperature and clock-event reasons logged every 200 ms through the whole call.
# 3. The rest of `hierarchical` (niced, background) beside the p = 4 sweep: the default and round
#    18's five shapes with their time splits; then the sweep again in a second process where time
#    is left. Sweep rows print as measured (stderr), with registers and local bytes.
# At most 8 files under $OUT. Run as `bash .dev-hex18/call.sh .dev-hex18`.
d=$(cd "${1:-$(dirname "$0")}" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-232}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hex18-steps.txt" >&2; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi -L > "$OUT/hex18-steps.txt" 2>&1
q=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$q --format=csv,noheader -i 0 > /dev/null 2>&1 || q=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active
nvidia-smi --query-gpu=$q --format=csv -lms 200 -i 0 > "$OUT/hex18-clocks.txt" 2>&1 &
smi=$!
step "unpacked"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
t="$d/tests"
# (The test binary is packed where its build finished in time: else the sweep's own check — every
# row's first 64 cells against round 4's kernel — is the call's only check of the new shapes.)
if [ -x "$t/hierarchical" ]; then
  timeout "$(left 60)" "$t/hierarchical" gram_tiles_match_the_cpu --include-ignored --nocapture > "$OUT/hex18-tests.log" 2>&1
  step "gram_tiles_match_the_cpu rc $?"
fi
timeout "$(left 70)" "$d/galerkin" bench --hex --degrees 1,2,3,4,5 --runs 7 --cpu-cells 100 --json "$OUT/hex18-table.json" > "$OUT/hex18-table.txt" 2>&1
step "table p = 1…5 rc $?"
(
  [ -x "$t/hierarchical" ] && timeout "$(left 230)" nice "$t/hierarchical" --include-ignored --skip gram_tiles_match_the_cpu >> "$OUT/hex18-tests.log" 2>&1
  step "hierarchical rest rc $?"
) &
tests=$!
sweep() {  # tag degree shapes seconds file
  timeout "$(left $4)" "$d/galerkin" bench --hex --degrees "$2" --runs 7 --cpu-cells 100 --tiled-sweep --sweep-shapes "$3" >> "$OUT/$5" 2>&1
  step "p = $2 sweep $1 (first $3 shapes) rc $?"
}
sweep a 4 6 100 hex18-sweep.txt
[ "$(left 100)" -gt 65 ] && sweep b 4 6 80 hex18-sweep.txt
# p = 5 alone, III first and again after the other schemes (a second process, after the sweeps' load).
[ "$(left 60)" -gt 35 ] && timeout "$(left 50)" "$d/galerkin" bench --hex --degrees 5 --runs 7 --cpu-cells 100 >> "$OUT/hex18-table.txt" 2>&1 && step "table p = 5 again"
wait "$tests"
step "tests done"
kill "$smi" 2>/dev/null
echo "-- sweep"; grep -h "^sweep\|^split" "$OUT/hex18-sweep.txt"
grep -h "^ [1-5] \|floors\|timed first\|^gpu" "$OUT/hex18-table.txt"
[ -f "$OUT/hex18-tests.log" ] && grep -h "test result\|FAILED\|panicked\|^test .* \(ok\|FAILED\)$" "$OUT/hex18-tests.log" | grep -v " ok$" | tail -30
[ -f "$OUT/hex18-tests.log" ] && grep -h "^p = 4 tiled .*\(wide-frag\|strip-pairs\)" "$OUT/hex18-tests.log"
echo "-- clocks (every 5th sample)"; awk 'NR == 1 || NR % 25 == 0' "$OUT/hex18-clocks.txt" | cut -c1-150 | tail -50
cat "$OUT/hex18-steps.txt"
