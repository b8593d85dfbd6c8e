#!/usr/bin/env bash
# hyper19's device call (round 19, H200): the tensor-core products with the cube patches' pre-summed
# scatter (`Scheme::TcPatch`, kernel define `HK_PATCH`; sweep rows `tc cube N/W`: edge-grouped patches
# of N cells, W warps per block, each row printing its global atomics per launch). In the background
# (niced) from the start: the new GPU = CPU and Newton tests and the fixed / refactored ones (round 18's
# failing recompute test among them). In the foreground: the 10^6 P2 sweep at the stiffness rule (first
# and last, for the spread) and the full rule, Nsight Compute on `tc cols` (the default) and `tc cube 6/3`
# (L2 reduction sectors), Newton at 10^6 with the default and GALERKIN_HYPER_SCHEME=tc-patch.
# At most 8 files under $OUT. Run as `bash .dev-hyper19/call.sh .dev-hyper19`.
d=$(cd "${1:-$(dirname "$0")}" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-228}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hyper19-steps.txt" >&2; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi -L > "$OUT/hyper19-steps.txt" 2>&1
step "unpacked"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
t="$d/tests"
(
  for group in "gpu_tc_patch gpu_recompute_scheme" "gpu_gather_scheme gpu_patch_scheme gpu_prefetch_equals gpu_residual_and_jacobian"; do
    timeout "$(left 200)" nice "$t/hyperelastic_cuda" $group --test-threads 4 >> "$OUT/hyper19-tests.log" 2>&1
    step "hyperelastic_cuda $group rc $?"
  done
) &
tests=$!
G="$d/galerkin"
# sweep NAME RULE SECONDS VARIANTS: the 10^6 P2 kernel sweep into $OUT/hyper19-NAME.txt
sweep() {
  timeout "$(left "$3")" "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 5 --hyper-quadrature "$2" --hyper-variants "$4" > "$OUT/hyper19-$1.txt" 2>&1
  step "$1 rc $?"
}
sweep sweep-stiffness stiffness 70 "tc staged,tc cols,tc cube 6/3,tc cube 6/4,tc cube 6/2,tc cube 6/1,tc cube 12/4,tc cube 12/3,tc cube 24/4,tc cube 6/3 scatter-only,tc cube 12/4 scatter-only,tc cols scatter-only,tc no-scatter,cube 6 scatter-only"
sweep sweep-full full 45 "tc staged,tc cols,tc cube 6/3,tc cube 6/2,tc cube 12/3"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
SEC="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats"
M="--metrics lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,lts__t_sectors_op_atom.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum"
if [ -n "$NCU" ]; then
  for v in "tc cube 6/3" "tc cols"; do
    [ "$(left 60)" -gt 45 ] || break
    echo "==== $v"
    timeout "$(left 30)" "$NCU" --clock-control none --import-source no -k regex:'^hyper_assemble' --launch-count 1 $SEC $M \
      "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 1 --hyper-quadrature stiffness --hyper-variants "$v" 2>&1
    step "ncu $v rc $?"
  done > "$OUT/hyper19-ncu.txt"
fi
N="bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 1"
if [ "$(left 60)" -gt 40 ]; then
  { timeout "$(left 20)" "$G" $N; echo "== tc-patch"; GALERKIN_HYPER_SCHEME=tc-patch timeout "$(left 20)" "$G" $N; } > "$OUT/hyper19-newton.txt" 2>&1
  step "Newton 10^6 default and tc-patch rc $?"
fi
[ "$(left 30)" -gt 20 ] && sweep sweep-stiffness2 stiffness 20 "tc cube 6/3,tc cols,tc cube 6/2,tc staged"
wait "$tests"
step "tests done"
# summary PATTERN FILES LINES: what each file measured, for the call's answer
summary() { for f in $2; do grep -h "$1" "$OUT/hyper19-$f" 2>/dev/null; done | tail -n "$3" | cut -c1-230; }
summary "floor\|^tc \|^cube\|default" "sweep-stiffness.txt sweep-full.txt sweep-stiffness2.txt" 60
summary "asm\|scheme\|Newton\|== tc-patch" newton.txt 12
summary "^====\|Duration\|Throughput\|Achieved Occupancy\|Registers Per\|Warp Cycles Per Issued\|lts__t_\|smsp__inst\|No Eligible\|Shared Memory" ncu.txt 40
summary "test result\|FAILED\|panicked\|^test " tests.log 30
cat "$OUT/hyper19-steps.txt"
