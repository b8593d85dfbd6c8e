#!/usr/bin/env bash
# hex12's device call (round 12, H200): the twelfth round's shapes against the CPU first (the GPU =
# CPU test of every new shape and the default it varies; their PTX stays in the disk cache for the
# benches), then the table with the sweep — p = 2, 3 with the first 6 shapes (the default, wide
# writes by stores and by bulk copies, register caps), p = 5, 4 with the first 4 — each under a
# deadline so the rest still comes back; then the remaining GPU tests. Copy bandwidth and the
# tensor rates are measured by each bench run. Rows print as measured.
d=$(cd "$(dirname "$0")" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
start=$(date +%s); end=$((start + ${BUDGET:-162}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hex12-steps.txt" >&2; }
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
nvidia-smi -L > "$OUT/hex12-steps.txt" 2>&1
step "new-shape test"
timeout "$(left 45)" "$d/tests/hierarchical" wide_writes_and_register_caps_match_the_cpu --include-ignored --nocapture > "$OUT/hex12-tests.log" 2>&1
step "new-shape test rc $?"
timeout "$(left 45)" "$d/galerkin" bench --hex --degrees 2,3 --runs 7 --cpu-cells 2000 --tiled-sweep --sweep-shapes 6 --json "$OUT/hex12-table23.json" > "$OUT/hex12-table.txt" 2>&1
step "table23 rc $?"
timeout "$(left 55)" "$d/galerkin" bench --hex --degrees 5,4 --runs 7 --cpu-cells 2000 --tiled-sweep --sweep-shapes 4 --json "$OUT/hex12-table54.json" >> "$OUT/hex12-table.txt" 2>&1
step "table54 rc $?"
for t in hierarchical_parts hierarchical; do
  timeout "$(left 60)" "$d/tests/$t" --include-ignored --skip wide_writes_and_register_caps >> "$OUT/hex12-tests.log" 2>&1
  step "$t rc $?"
done
grep -h "test result\|FAILED\|panicked" "$OUT/hex12-tests.log" | tail -8 >&2
