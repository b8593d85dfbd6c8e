#!/usr/bin/env bash
# hex12's device call (round 12, H200): the release CLI only (the GPU test binaries were still
# building at the call's deadline on the loaded VM). Per degree, the table with the sweep — the
# default, the twelfth round's shapes (wide writes by stores and by bulk copies, register caps;
# every shape's first 64 cells checked against the fourth round's kernel on the GPU), then the
# time split — each degree a process of its own under a deadline, so a shape that fails stops
# only its degree. Copy bandwidth and the tensor rates are measured by each run; rows print as
# measured (stderr).
d=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-160}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hex12-steps.txt" >&2; }
nvidia-smi -L > "$OUT/hex12-steps.txt" 2>&1
for job in "2 6 34" "3 6 34" "5 3 50" "4 5 40"; do
  set -- $job
  timeout "$(left $3)" "$d/galerkin" bench --hex --degrees "$1" --runs 7 --cpu-cells 2000 --tiled-sweep --sweep-shapes "$2" --json "$OUT/hex12-p$1.json" >> "$OUT/hex12-table.txt" 2>&1
  step "p = $1 (first $2 shapes) rc $?"
done
grep -h "^sweep\|^split" "$OUT/hex12-table.txt" >&2
