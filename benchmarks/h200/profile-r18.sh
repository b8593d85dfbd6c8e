#!/usr/bin/env bash
# Lead's Nsight Compute call for round 18: the hardware counters of the three open speed targets'
# default kernels (issue 15's 256-column row-major solve, issue 16's scheme III at p = 4 and 5,
# issue 17's P2 Jacobian kernels), so the helpers plan from what bounds each kernel.
# Usage: bash benchmarks/h200/profile-r18.sh .dev-NAME   (≤ 8 files under $OUT)
d=$1
SECONDS=0
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
G=$(cd "$d" && pwd)/galerkin
S=$OUT/profile-summary.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU" > "$S"; "$NCU" --version >> "$S" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >> "$S" 2>&1
step() { echo "== $SECONDS s $(date -u +%T): $1" | tee -a "$S" >&2; }
SEC="--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats"
prof() { # name timeout regex count -- command...
  local name=$1 t=$2 re=$3 n=$4; shift 5
  timeout "$t" "$NCU" --clock-control none --import-source no -k "regex:$re" --launch-count "$n" $SEC "$@" > "$OUT/ncu-$name.txt" 2>&1
  step "$name rc $? ($(grep -c '^  [a-z_].*(' "$OUT/ncu-$name.txt") kernels)"
}
prof iga 110 '^mf_(mapss|rhs|rows|sep)' 24 -- "$G" bench-iga --gpu --sweeps rhs --rhs 256 --rhs-elements 1048576 --rhs-degree 3 --reps 1 --cpu-max 0 --rhs-engines gpu-rows
prof hex4 60 'matrices_tiled' 2 -- "$G" bench --hex --degrees 4 --runs 1 --cpu-cells 10
prof hex5 60 'matrices_tiled' 2 -- "$G" bench --hex --degrees 5 --runs 1 --cpu-cells 10
prof hyper 70 '^hyper_' 10 -- "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 1 --hyper-quadrature stiffness --hyper-variants "tc staged,cube 6 scatter-only"
ls -la "$OUT" >> "$S"
cat "$S"
