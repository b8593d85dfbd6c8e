#!/usr/bin/env bash
# hexlo13's device call (round 13, H200): scheme III at p = 1…3. The packed GPU tests in the
# background (the new GPU = CPU tests first in their own process, then the rest of `hierarchical`
# and `hierarchical_parts`), and in the foreground the p = 1, 2, 3 tables with the sweep's first 7
# shapes (the default, then the thirteenth round's: fused pair-lane geometry at p = 1, split
# moments and one bulk copy per whole strip at p = 2, 3) and the time splits — each degree a
# process of its own under a deadline (copy bandwidth measured by each run; rows print as
# measured, with each kernel's registers and local bytes). Run as `bash .dev-hexlo13/hexlo13-call1.sh`.
d=$(cd "$(dirname "$0")" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
start=$(date +%s); end=$((start + ${BUDGET:-158}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hexlo13-steps.txt" >&2; }
nvidia-smi -L > "$OUT/hexlo13-steps.txt" 2>&1
(
  timeout "$(left 60)" "$d/tests/hierarchical" split_moments_match_the_cpu pair_lanes_match_the_cpu --include-ignored --nocapture > "$OUT/hexlo13-tests.log" 2>&1
  step "new tests rc $?"
  timeout "$(left 150)" nice "$d/tests/hierarchical" --include-ignored --skip split_moments_match_the_cpu --skip pair_lanes_match_the_cpu >> "$OUT/hexlo13-tests.log" 2>&1
  step "hierarchical rc $?"
  timeout "$(left 150)" nice "$d/tests/hierarchical_parts" --include-ignored >> "$OUT/hexlo13-tests.log" 2>&1
  step "hierarchical_parts rc $?"
) &
for job in "1 25" "2 40" "3 45"; do
  set -- $job
  timeout "$(left $2)" "$d/galerkin" bench --hex --degrees "$1" --runs 9 --cpu-cells 200 --tiled-sweep --sweep-shapes 7 --json "$OUT/hexlo13-p$1.json" >> "$OUT/hexlo13-bench.txt" 2>&1
  step "p = $1 rc $?"
done
wait
grep -E "test result|FAILED|panicked" "$OUT/hexlo13-tests.log" | tail -20
grep -h "^sweep\|^split" "$OUT/hexlo13-bench.txt" >&2
