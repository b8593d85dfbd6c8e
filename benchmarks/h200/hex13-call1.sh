#!/usr/bin/env bash
# hex13's device call (round 13, H200): scheme III at trunk p = 4, 5. The GPU tests run in the
# background (the new image-region test first, then hierarchical_parts, then the rest of
# hierarchical), while per degree one bench process measures the table, the sweep's first shapes
# (the default, the thirteenth round's, the twelfth round's wide writes) and the time split, under
# a deadline each; copy bandwidth and tensor rates are measured by each run; rows print as measured
# (stderr). Last, Nsight Compute on the p = 5 default's first launches.
d=$(cd "$(dirname "$0")" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-160}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hex13-steps.txt" >&2; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi -L > "$OUT/hex13-steps.txt" 2>&1
step "unpacked"
(
  export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
  t="$d/tests"
  timeout "$(left 60)" "$t/hierarchical" image_region_wide_writes_match_the_cpu --include-ignored --nocapture > "$OUT/hex13-tests.log" 2>&1
  echo "=== image_region rc $?" >> "$OUT/hex13-tests.log"
  timeout "$(left 40)" "$t/hierarchical_parts" --include-ignored >> "$OUT/hex13-tests.log" 2>&1
  echo "=== hierarchical_parts rc $?" >> "$OUT/hex13-tests.log"
  timeout "$(left 150)" "$t/hierarchical" --include-ignored --skip image_region_wide_writes_match_the_cpu >> "$OUT/hex13-tests.log" 2>&1
  echo "=== hierarchical rest rc $?" >> "$OUT/hex13-tests.log"
) &
tests=$!
for job in "4 6 40" "5 6 80"; do
  set -- $job
  timeout "$(left $3)" "$d/galerkin" bench --hex --degrees "$1" --runs 7 --cpu-cells 200 --tiled-sweep --sweep-shapes "$2" --json "$OUT/hex13-p$1.json" >> "$OUT/hex13-table.txt" 2>&1
  step "p = $1 (first $2 shapes) rc $?"
done
grep -h "^sweep\|^split" "$OUT/hex13-table.txt" >&2
timeout "$(left 25)" /usr/local/cuda/bin/ncu --clock-control none --kernel-name regex:tiled --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis -c 2 "$d/galerkin" bench --hex --degrees 5 --runs 1 --cpu-cells 10 > "$OUT/hex13-ncu.txt" 2>&1
step "ncu p = 5 rc $?"
wait "$tests"
step "tests done"
grep -h "test result\|FAILED\|panicked\|=== " "$OUT/hex13-tests.log" >&2
