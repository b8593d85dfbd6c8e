#!/usr/bin/env bash
# hyper18's device call (round 18, H200): the tensor-core kernel on a persistent grid (`HK_PERSIST`:
# the blocks resident at once loop over the cells) with the next cell's record and CSR positions
# copied ahead by cp.async (`HK_PREFETCH`), and the staged scatter a lane per column (`HK_SCATTER_COLS`;
# sweep rows `tc persist`, `tc prefetch…`, `tc cols…`, `tc prefetch cols…`). The new GPU =
# CPU and Newton tests in the background (niced) from the start; in the foreground the 10^6 P2
# sweep at the stiffness rule (twice: first and last, for the spread between runs) and the full
# rule, an Nsight Compute profile of `tc prefetch cols` (the lead's sections), Newton at 10^6 with
# the default and with `GALERKIN_HYPER_SCHEME=prefetch` (both new defines). At most 8 files under $OUT.
# Run as `bash .dev-hyper18/call.sh .dev-hyper18`.
d=$(cd "${1:-$(dirname "$0")}" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-228}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hyper18-steps.txt" >&2; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi -L > "$OUT/hyper18-steps.txt" 2>&1
step "unpacked"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
t="$d/tests"
(
  timeout "$(left 150)" nice "$t/hyperelastic_cuda" gpu_prefetch --test-threads 2 --nocapture > "$OUT/hyper18-tests.log" 2>&1
  step "hyperelastic_cuda gpu_prefetch rc $?"
  timeout "$(left 200)" nice "$t/hyperelastic_cuda" gpu_stiffness_rule gpu_lean_products gpu_scatter_variants gpu_recompute --test-threads 4 >> "$OUT/hyper18-tests.log" 2>&1
  step "hyperelastic_cuda stiffness/lean/scatter/recompute rc $?"
) &
tests=$!
G="$d/galerkin"
# (the ncu step below names its own --runs: round 18's call passed `$S --runs 1`, two --runs, and ncu's step failed)
S="bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 5"
V="tc staged,tc persist,tc prefetch,tc cols,tc prefetch cols,tc prefetch cols lean,tc prefetch cols split,tc prefetch split,tc prefetch no-scatter,tc prefetch products-only,tc prefetch scatter-only,tc prefetch cols scatter-only,tc cols scatter-only,tc scatter-only,tc no-scatter,tc products-only,cube 6 scatter-only"
timeout "$(left 60)" "$G" $S --hyper-quadrature stiffness --hyper-variants "$V" > "$OUT/hyper18-sweep-stiffness.txt" 2>&1
step "sweep stiffness rc $?"
timeout "$(left 50)" "$G" $S --hyper-quadrature full --hyper-variants "tc staged,tc persist,tc prefetch,tc cols,tc prefetch cols,tc prefetch cols lean,tc prefetch cols split" > "$OUT/hyper18-sweep-full.txt" 2>&1
step "sweep full rc $?"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
SEC="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis"
M="--metrics lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,dram__bytes_read.sum,dram__bytes_write.sum"
if [ -n "$NCU" ] && [ "$(left 60)" -gt 40 ]; then
  timeout "$(left 50)" "$NCU" --clock-control none --import-source no -k regex:'^hyper_assemble' --launch-count 1 $SEC $M \
    "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 1 --hyper-quadrature stiffness --hyper-variants "tc prefetch cols" > "$OUT/hyper18-ncu.txt" 2>&1
  step "ncu tc prefetch cols rc $?"
fi
N="bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 1"
if [ "$(left 60)" -gt 45 ]; then
  { timeout "$(left 25)" "$G" $N; echo "== prefetch"; GALERKIN_HYPER_SCHEME=prefetch timeout "$(left 25)" "$G" $N; } > "$OUT/hyper18-newton.txt" 2>&1
  step "Newton 10^6 default and prefetch rc $?"
fi
# Indirect GPU = CPU check through the CLI (for a pack without the test binaries): the P2 Usyk shell
# example on the CPU, the GPU default and the GPU with both new defines — the Newton reports compared.
if [ "$(left 60)" -gt 30 ]; then
  E=examples/hyperelastic-inflated-shell.toml
  for be in cpu cuda prefetch; do
    echo "== $be"
    if [ $be = prefetch ]; then GALERKIN_HYPER_SCHEME=prefetch timeout 20 "$G" run $E --backend cuda --out /tmp/h18-$be 2>&1
    else timeout 20 "$G" run $E --backend $be --out /tmp/h18-$be 2>&1; fi
  done > "$OUT/hyper18-shell.txt"
  step "shell example cpu / gpu / prefetch rc $?"
fi
if [ "$(left 30)" -gt 20 ]; then
  timeout "$(left 25)" "$G" $S --hyper-quadrature stiffness --hyper-variants "tc prefetch cols,tc prefetch,tc cols,tc staged" > "$OUT/hyper18-sweep-stiffness2.txt" 2>&1
  step "sweep stiffness again rc $?"
fi
wait "$tests"
step "tests done"
grep -h "floor\|^tc \|^cube" "$OUT"/hyper18-sweep-*.txt | cut -c1-200
grep -h "asm\|scheme\|Newton\|== prefetch" "$OUT/hyper18-newton.txt" 2>/dev/null | head -12
grep -h "Duration\|Throughput\|Achieved Occupancy\|Registers Per\|Warp Cycles Per Issued\|lts__t_sectors_op_red\|No Eligible" "$OUT/hyper18-ncu.txt" 2>/dev/null | head -24
grep -h "test result\|FAILED\|panicked\|^test " "$OUT/hyper18-tests.log" | tail -30
grep -h "^== \|Newton\|newton\|load step\|error" "$OUT/hyper18-shell.txt" 2>/dev/null | head -40
cat "$OUT/hyper18-steps.txt"
