#!/usr/bin/env bash
# hyper21's device call (round 21, H200): the upper-triangle scatter (`HK_UPPER`: the tensor-core kernel
# adds only the global upper triangle's entries, that part zeroed before, the lower part copied from its
# transpose after — sweep rows `tc cols upper`, `tc upper`, `tc cols upper scatter-only`, each with its
# zeroing and fill passes timed alone). First the 10^6 P2 sweep at the stiffness rule alone; then, with
# the new GPU = CPU and Newton tests in the background (niced), the full rule, Nsight Compute on the
# default's and the new Jacobian launch (L2 reduction sectors) and on the two passes, Newton at 10^6 with
# the default and GALERKIN_HYPER_SCHEME=upper, and the stiffness sweep again (the spread). At most 8
# files under $OUT. Run as `bash .dev-hyper21/call.sh .dev-hyper21`.
d=$(cd "${1:-$(dirname "$0")}" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-228}))
left() { local l=$((end - $(date +%s))); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/hyper21-steps.txt" >&2; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi -L > "$OUT/hyper21-steps.txt" 2>&1
step "unpacked"
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
G="$d/galerkin"
# sweep NAME RULE SECONDS VARIANTS: the 10^6 P2 kernel sweep into $OUT/hyper21-NAME.txt
sweep() {
  timeout "$(left "$3")" "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 5 --hyper-quadrature "$2" --hyper-variants "$4" > "$OUT/hyper21-$1.txt" 2>&1
  step "$1 rc $?"
}
sweep sweep-stiffness stiffness 50 "tc cols,tc cols upper,tc upper,tc cols upper scatter-only,tc cols scatter-only,tc no-scatter"
t="$d/tests"
(
  timeout "$(left 175)" nice "$t/hyperelastic_cuda" upper gpu_residual_and_jacobian --test-threads 4 > "$OUT/hyper21-tests.log" 2>&1
  step "hyperelastic_cuda upper gpu_residual_and_jacobian rc $?"
) &
tests=$!
sweep sweep-full full 30 "tc cols,tc cols upper"
# profile VARIANT REGEX COUNT: Nsight Compute on the variant's first COUNT launches matching REGEX
# (the Jacobian launch: L2 reduction sectors, instructions, occupancy; the passes: DRAM bytes, time)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
profile() {
  [ -n "$NCU" ] && [ "$(left 60)" -gt 45 ] || return 0
  local m=gpu__time_duration.sum,lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,smsp__inst_executed.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors.sum
  { echo "==== $1"; timeout "$(left 30)" "$NCU" --clock-control none --import-source no -k regex:"$2" --launch-count "$3" \
      --section SpeedOfLight --section Occupancy --section LaunchStats --metrics "$m" \
      "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 1 --hyper-quadrature stiffness --hyper-variants "$1"; } >> "$OUT/hyper21-ncu.txt" 2>&1
  step "ncu $1 rc $?"
}
profile "tc cols upper" '^hyper_(assemble|upper)' 3
profile "tc cols" '^hyper_assemble' 1
# Newton at 10^6 (full rule, multigrid): the default, then the upper-triangle scatter for whole runs
newton() {
  [ "$(left 60)" -gt 25 ] || return 0
  echo "== GALERKIN_HYPER_SCHEME=${1:-(unset: the default)}" >> "$OUT/hyper21-newton.txt"
  env ${1:+GALERKIN_HYPER_SCHEME=$1} timeout "$(left 22)" "$G" bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 1 >> "$OUT/hyper21-newton.txt" 2>&1
  step "Newton 10^6 ${1:-default} rc $?"
}
newton ""  # (empty: the default)
newton upper
# the stiffness sweep again where time is left (the spread), then the tests' end
[ "$(left 30)" -gt 20 ] && sweep sweep-stiffness2 stiffness 20 "tc cols upper,tc cols,tc upper"
wait "$tests"
step "tests done"
# The call's answer: FILES PATTERN LINES — the matching lines (at most LINES, cut to 230 columns).
keep() { (cd "$OUT" && grep -h "$2" $1 2>/dev/null) | tail -n "$3" | cut -c1-230; }
keep "hyper21-sweep-stiffness.txt hyper21-sweep-full.txt hyper21-sweep-stiffness2.txt" 'floor\|^tc \|default' 40
keep hyper21-newton.txt 'asm\|scheme\|Newton\|== GALERKIN' 12
keep hyper21-ncu.txt '^====\|hyper_\|Duration\|Throughput\|Achieved Occupancy\|Registers Per\|lts__t_\|smsp__inst\|dram__bytes\|gpu__time' 60
keep hyper21-tests.log 'test result\|FAILED\|panicked\|^test ' 30
keep hyper21-steps.txt . 20
