#!/usr/bin/env bash
# hexp1's device call (round 12, H200): scheme III at p = 1 on the CUDA cores (`pair_lanes.cu`)
# against the tensor-core default. First the new GPU = CPU test (every pair-lane shape, packed and
# full, elasticity and diffusion, one group per block and 2 blocks looping), then the p = 1 table
# with the sweep's first 10 shapes (the default, the 8 pair-lane shapes, the tenth round's) and the
# time splits of the default and of the first pair-lane shape (copy bandwidth measured in the same
# run), then the rest of `hierarchical` and `hierarchical_parts` — each under a deadline, so a cut
# call still returns what ran. Run as `bash .dev-hexp1/hexp1-call1.sh` (the pack beside it).
d=$(cd "$(dirname "$0")" && pwd)
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
start=$(date +%s); end=$((start + ${BUDGET:-160}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(date -u +%T) +$(( $(date +%s) - start )) s: $1" | tee -a "$OUT/hexp1-steps.txt" >&2; }
nvidia-smi > "$OUT/hexp1-steps.txt" 2>&1
step "pair-lane test"
timeout "$(left 40)" "$d/tests/hierarchical" pair_lanes_match_the_cpu --include-ignored --nocapture > "$OUT/hexp1-tests.log" 2>&1
step "pair-lane test rc $?"
timeout "$(left 75)" "$d/galerkin" bench --hex --degrees 1 --runs 9 --cpu-cells 2000 --tiled-sweep --sweep-shapes 10 --json "$OUT/hexp1-p1.json" > "$OUT/hexp1-bench.txt" 2>&1
step "bench rc $?"
timeout "$(left 100)" "$d/tests/hierarchical" --include-ignored --skip pair_lanes_match_the_cpu >> "$OUT/hexp1-tests.log" 2>&1
step "hierarchical rc $?"
timeout "$(left 100)" "$d/tests/hierarchical_parts" --include-ignored >> "$OUT/hexp1-tests.log" 2>&1
step "hierarchical_parts rc $?"
grep -E "test result|FAILED|panicked|max relative difference" "$OUT/hexp1-tests.log" | tail -30
grep -vE "^\s*$" "$OUT/hexp1-bench.txt" | tail -45
