#!/usr/bin/env bash
# hex10's device call: the table, then the sweeps (paired vs unpaired at p = 5, 4; resident and
# paired at p = 1-3; every shape's matrices compared with the fourth round's kernel), each under a
# deadline so the rest still comes back. The GPU test binaries were not built in time for the call.
d=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-190}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s: $1" >> "$OUT/hex10-steps.txt"; }
nvidia-smi > "$OUT/hex10-steps.txt" 2>&1
step table
timeout "$(left 80)" "$d/galerkin" bench --hex --degrees 1,2,3,4,5 --runs 7 --cpu-cells 2000 --json "$OUT/hex10-table.json" > "$OUT/hex10-table.txt" 2>&1
step "table rc $?"
timeout "$(left 45)" "$d/galerkin" bench --hex --degrees 5,4 --runs 5 --cpu-cells 16 --tiled-sweep --sweep-shapes 2 --json "$OUT/hex10-sweep45.json" > "$OUT/hex10-sweep45.txt" 2>&1
step "sweep45 rc $?"
timeout "$(left 80)" "$d/galerkin" bench --hex --degrees 1,2,3 --runs 5 --cpu-cells 16 --tiled-sweep --sweep-shapes 4 --json "$OUT/hex10-sweep123.json" > "$OUT/hex10-sweep123.txt" 2>&1
step "sweep123 rc $?"
