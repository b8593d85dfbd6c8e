#!/usr/bin/env bash
# The lead's profile call of round 23 (H200), main f10681f's release CLI: Nsight Compute with NVRTC line info
# (GALERKIN_NVRTC_LINEINFO=1) on the two kernels whose targets are furthest and nearest — issue 17's Jacobian at P2,
# 10^6 dofs, 4 points (`tc no-scatter`, then the default `tc cols`) and issue 16's trunk p = 4 elasticity element
# matrices (scheme III's default) — each exported as the source page in SASS and CUDA lines for the helpers.
# Run as `bash benchmarks/h200/lead-r23-prof.sh .dev-lead-prof`. At most 8 files under $OUT.
NAME=lead-r23-prof; BUDGET=${BUDGET:-220}; source benchmarks/h200/call-lib.sh "$1"
[ -n "$NCU" ] || { echo "no ncu"; exit 1; }
export GALERKIN_NVRTC_LINEINFO=1
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats --section SourceCounters --section MemoryWorkloadAnalysis"
src="$PWD/crates/galerkin/kernels"
# The line info names the sources by the cwd of the process that first compiled them (the PTX cache on disk keeps
# it): the repository root. Links there let ncu import them (the device's copy of the tree only).
for f in "$src"/*.cu "$src"/*.cuh; do ln -sf "$f" "$PWD/$(basename "$f")"; done
# prof TAG SECONDS KERNEL-REGEX SKIP CLI-ARGS…: one launch profiled, its details appended, its source pages exported
prof() {
  local tag=$1 s=$2 k=$3 skip=$4; shift 4
  local rep="/tmp/$tag"
  (timeout "$(left "$s")" "$NCU" --clock-control none --import-source yes -k "regex:$k" --launch-skip "$skip" --launch-count 1 $SEC \
    -o "$rep" -f "$G" "$@" > "/tmp/$tag.log" 2>&1)
  step "ncu $tag rc $? ($(tail -c 300 /tmp/$tag.log | tr '\n' ' ' | cut -c1-200))"
  [ -f "$rep.ncu-rep" ] || return
  { echo "==== $tag: $*"; timeout 30 "$NCU" -i "$rep.ncu-rep" --print-details all; } >> "$OUT/lead-r23-prof-details.txt" 2>&1
  timeout 30 "$NCU" -i "$rep.ncu-rep" --page source --csv --print-source sass > "$OUT/lead-r23-prof-$tag-sass.csv" 2>&1
  timeout 30 "$NCU" -i "$rep.ncu-rep" --page source --csv --print-source cuda,sass > "$OUT/lead-r23-prof-$tag-cs.csv" 2>&1
  step "pages $tag: $(wc -c < "$OUT/lead-r23-prof-$tag-sass.csv") / $(wc -c < "$OUT/lead-r23-prof-$tag-cs.csv") bytes"
}
H="bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 1 --hyper-quadrature stiffness --hyper-variants"
prof hyperns 50 '^hyper_assemble' 0 $H "tc no-scatter"
prof hex4 50 'matrices_tiled' 1 bench --hex --degrees 4 --cpu-cells 10 --runs 1
rm -f "$OUT"/lead-r23-prof-*-sass.csv   # (the first call brought the SASS pages; this one the CUDA lines)
grep -E "^====|Duration|Registers Per|Executed Instructions  |Issued Ipc|Achieved Occupancy|Warp Cycles Per Issued|Theoretical Occupancy|Block Limit Reg|Block Limit Shared" "$OUT/lead-r23-prof-details.txt" | cut -c1-160
ls -la "$OUT"; cat "$OUT/$NAME-steps.txt"
