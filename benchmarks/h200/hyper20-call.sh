#!/usr/bin/env bash
# hyper20's device call (round 20, H200): the law of a block's cells on one warp's lanes (`HK_LAW_WIDE`,
# sweep rows `tc cols wide`, against the same block shape without it, `tc cols WxQ`, and the law's share
# from `trivial-law` rows) and the tensor-core patch scheme with the cells' staged blocks added to the
# shared slots in turn (`HK_PATCH_TURNS`, rows `tc cube N/W turns`, each printing its global atomics a
# launch). First the 10^6 P2 sweep at the stiffness rule alone; then, with the new GPU = CPU and Newton
# tests in the background (niced), the full rule, Nsight Compute on the two new kernels (registers,
# occupancy, L2 reduction sectors), Newton at 10^6 with the default and GALERKIN_HYPER_SCHEME=wide, and
# the stiffness sweep again (the spread). At most 8 files under $OUT. Run as `bash .dev-hyper20/call.sh .dev-hyper20`.
d=$(cd "${1:-$(dirname "$0")}" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-228}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hyper20-steps.txt" >&2; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi -L > "$OUT/hyper20-steps.txt" 2>&1
step "unpacked"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
G="$d/galerkin"
# sweep NAME RULE SECONDS VARIANTS: the 10^6 P2 kernel sweep into $OUT/hyper20-NAME.txt
sweep() {
  timeout "$(left "$3")" "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 5 --hyper-quadrature "$2" --hyper-variants "$4" > "$OUT/hyper20-$1.txt" 2>&1
  step "$1 rc $?"
}
sweep sweep-stiffness stiffness 60 "tc cols,tc staged,tc cols wide,tc cols 4x3,tc cols wide trivial-law,tc cols trivial-law,tc no-scatter,tc cube 6/2 turns,tc cube 6/3 turns,tc cube 12/2 turns,tc cube 12/3 turns,tc cube 12/4 turns,tc cube 24/4 turns,tc cube 6/3 turns scatter-only,tc cube 6/3,tc cols scatter-only"
t="$d/tests"
(
  timeout "$(left 170)" nice "$t/hyperelastic_cuda" gpu_law_wide gpu_tc_patch gpu_residual_and_jacobian --test-threads 4 > "$OUT/hyper20-tests.log" 2>&1
  step "hyperelastic_cuda gpu_law_wide gpu_tc_patch gpu_residual_and_jacobian rc $?"
) &
tests=$!
sweep sweep-full full 40 "tc cols,tc cols wide,tc cols 3x3,tc cube 6/2 turns,tc cube 12/3 turns"
# profile VARIANT: Nsight Compute on one launch of the variant's Jacobian kernel (registers, occupancy,
# L2 reduction sectors, instructions, shared-memory bank conflicts), appended to $OUT/hyper20-ncu.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
profile() {
  [ -n "$NCU" ] && [ "$(left 60)" -gt 45 ] || return 0
  local m=lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum
  { echo "==== $1"; timeout "$(left 30)" "$NCU" --clock-control none --import-source no -k regex:'^hyper_assemble' --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --metrics "$m" \
      "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 1 --hyper-quadrature stiffness --hyper-variants "$1"; } >> "$OUT/hyper20-ncu.txt" 2>&1
  step "ncu $1 rc $?"
}
profile "tc cube 6/3 turns"
profile "tc cols wide"
# Newton at 10^6 (full rule, multigrid): the default, then the wide law for whole runs; then the
# stiffness sweep again where time is left, and the tests' end
for scheme in "" wide; do
  [ "$(left 60)" -gt 25 ] || break
  echo "== GALERKIN_HYPER_SCHEME=${scheme:-(default)}" >> "$OUT/hyper20-newton.txt"
  env ${scheme:+GALERKIN_HYPER_SCHEME=$scheme} timeout "$(left 20)" "$G" bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 1 >> "$OUT/hyper20-newton.txt" 2>&1
  step "Newton 10^6 ${scheme:-default} rc $?"
done
[ "$(left 30)" -gt 20 ] && sweep sweep-stiffness2 stiffness 20 "tc cols wide,tc cols,tc cube 6/2 turns,tc cube 12/3 turns,tc cols 4x3"
wait "$tests"
step "tests done"
# The call's answer: per line, the files, what to keep of them and how many lines at most.
while IFS='@' read -r files pat n; do
  (cd "$OUT" && grep -h "$pat" $files 2>/dev/null) | tail -n "$n" | cut -c1-230
done <<'SUMMARY'
hyper20-sweep-stiffness.txt hyper20-sweep-full.txt hyper20-sweep-stiffness2.txt@floor\|^tc \|default@60
hyper20-newton.txt@asm\|scheme\|Newton\|== GALERKIN@12
hyper20-ncu.txt@^====\|Duration\|Throughput\|Achieved Occupancy\|Registers Per\|Warp Cycles Per Issued\|lts__t_\|smsp__inst\|bank_conflicts\|No Eligible\|Shared Memory@40
hyper20-tests.log@test result\|FAILED\|panicked\|^test @30
hyper20-steps.txt@.@20
SUMMARY
