#!/usr/bin/env bash
# hex11's device call (round 11, H200): the GPU = CPU tests first (`hierarchical`,
# `hierarchical_parts`: every new shape against the CPU; their PTX stays in the disk cache for the
# benches), then the table with the sweep — p = 1–3 with the first 10 shapes (the default, the cell
# groups, prefetch and narrow tiles), p = 5, 4 with the first 5 (balanced tiles, two tiles per
# warp, prefetch) — each under a deadline so the rest still comes back. Copy bandwidth and the
# tensor rates are measured by each bench run.
d=$(cd "$(dirname "$0")" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
start=$(date +%s); end=$((start + ${BUDGET:-190}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s: $1" >> "$OUT/hex11-steps.txt"; }
nvidia-smi > "$OUT/hex11-steps.txt" 2>&1
step tests
timeout "$(left 80)" bash "$d/run.sh" > "$OUT/hex11-tests-summary.txt" 2>&1
step "tests rc $?"
timeout "$(left 50)" "$d/galerkin" bench --hex --degrees 1,2,3 --runs 7 --cpu-cells 2000 --tiled-sweep --sweep-shapes 10 --json "$OUT/hex11-table123.json" > "$OUT/hex11-table.txt" 2>&1
step "table123 rc $?"
timeout "$(left 70)" "$d/galerkin" bench --hex --degrees 5,4 --runs 7 --cpu-cells 2000 --tiled-sweep --sweep-shapes 5 --json "$OUT/hex11-table54.json" >> "$OUT/hex11-table.txt" 2>&1
step "table54 rc $?"
