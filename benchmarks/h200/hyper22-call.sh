#!/usr/bin/env bash
# hyper22's device call (round 22, H200): what bounds the Jacobian kernel without its scatter (`tc no-scatter`),
# and the staged blocks in Y's space (`HK_ST_Y`: 8.1 instead of 11.1 KB of shared memory a cell at P2's 4 points)
# with register caps for 18, 20 or 24 cells an SM (`minbN`). First the 10^6 P2 sweep at the stiffness rule alone;
# then, with the new GPU = CPU and Newton tests in the background (niced), Nsight Compute on `tc no-scatter`
# compiled with line info (SourceCounters, WarpStateStats, InstructionStats: the per-instruction stalls, exported
# as the source page in SASS and CUDA lines) and on the capped variant, the full rule, Newton at 10^6 with the
# default and GALERKIN_HYPER_SCHEME=sty, and the stiffness sweep again (the spread). At most 8 files under $OUT.
# Run as `bash .dev-hyper22/call.sh .dev-hyper22`. (Round 22's call ran the version before 'P': both ncu runs
# failed on a doubled --runs; this one is fixed, not yet run on the device.)
NAME=hyper22; source benchmarks/h200/call-lib.sh "$1"
P="bench --hyper-kernel-sweep --dofs 1000000 --degrees 2"; S="$P --runs 5"  # (P: the profiles' one run)
# sweep RULE SECONDS VARIANTS: the 10^6 P2 kernel sweep, appended to $OUT/hyper22-sweep.txt
sweep() {
  echo "==== $1: $3" >> "$OUT/hyper22-sweep.txt"
  timeout "$(left "$2")" "$G" $S --hyper-quadrature "$1" --hyper-variants "$3" >> "$OUT/hyper22-sweep.txt" 2>&1
  step "sweep $1 rc $?"
}
V="tc cols,tc cols sty,tc cols sty minb18,tc cols sty minb20,tc cols sty minb24,tc cols minb20"
NS="tc no-scatter,tc no-scatter sty,tc no-scatter sty minb18,tc no-scatter sty minb20,tc no-scatter sty minb24"
sweep stiffness 70 "$V,$NS"
(
  timeout "$(left 170)" nice "$T/hyperelastic_cuda" st_y gpu_residual_and_jacobian --test-threads 4 > "$OUT/hyper22-tests.log" 2>&1
  step "hyperelastic_cuda st_y gpu_residual_and_jacobian rc $?"
) &
tests=$!
# Nsight Compute: `tc no-scatter` with line info, one launch of hyper_assemble; the report, its summary and source pages
if [ -n "$NCU" ] && [ "$(left 60)" -gt 40 ]; then
  rep="$OUT/hyper22-nsc"
  GALERKIN_NVRTC_LINEINFO=1 timeout "$(left 40)" "$NCU" --clock-control none --import-source yes -k regex:'^hyper_assemble' --launch-count 1 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats --section SourceCounters \
    -o "$rep" -f "$G" $P --runs 1 --hyper-quadrature stiffness --hyper-variants "tc no-scatter" > "$OUT/hyper22-ncu.txt" 2>&1
  step "ncu tc no-scatter rc $?"
  { echo "==== tc no-scatter (line info)"; timeout 20 "$NCU" -i "$rep.ncu-rep" --print-details all; } >> "$OUT/hyper22-ncu.txt" 2>&1
  timeout 20 "$NCU" -i "$rep.ncu-rep" --page source --csv --print-source sass > "$OUT/hyper22-ncu-sass.csv" 2>&1
  step "ncu sass page rc $?"
  timeout 20 "$NCU" -i "$rep.ncu-rep" --page source --csv --print-source cuda --source-folders "$PWD/crates/galerkin/kernels" > "$OUT/hyper22-ncu-cuda.csv" 2>&1
  step "ncu cuda page rc $?"
fi
# the capped variant (no line info): registers, occupancy, warp states
if [ -n "$NCU" ] && [ "$(left 60)" -gt 45 ]; then
  { echo "==== tc no-scatter sty minb20"; timeout "$(left 25)" "$NCU" --clock-control none -k regex:'^hyper_assemble' --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      "$G" $P --runs 1 --hyper-quadrature stiffness --hyper-variants "tc no-scatter sty minb20"; } >> "$OUT/hyper22-ncu.txt" 2>&1
  step "ncu sty minb20 rc $?"
fi
[ "$(left 60)" -gt 20 ] && sweep full 15 "tc cols,tc cols sty minb20,tc cols minb20"
# Newton at 10^6 (full rule, multigrid): the default, then the staged blocks in Y's space with 20 cells an SM
N="bench --hyperelastic --dofs 1000000 --degrees 2 --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 1"
for sch in default sty; do  # (default: GALERKIN_HYPER_SCHEME unset)
  [ "$(left 60)" -gt 25 ] && { echo "== scheme $sch" >> "$OUT/hyper22-newton.txt"
    env $([ $sch = default ] || echo GALERKIN_HYPER_SCHEME=$sch) timeout "$(left 22)" "$G" $N >> "$OUT/hyper22-newton.txt" 2>&1; step "Newton 10^6 $sch rc $?"; }
done
# the stiffness sweep again where time is left (the spread), then the tests' end
[ "$(left 30)" -gt 20 ] && sweep stiffness 20 "tc cols sty minb20,tc cols,tc cols sty minb24,tc cols sty,tc no-scatter sty minb20,tc no-scatter"
wait "$tests"
step "tests done"
keep hyper22-sweep.txt '^====\|floor\|^tc ' 45
keep hyper22-newton.txt 'asm\|scheme\|Newton\|^cuda' 12
keep hyper22-ncu.txt '^====\|Duration\|Registers Per\|Achieved Occupancy\|Theoretical Occupancy\|Block Limit\|Warp Cycles Per Issued\|Issued Ipc\|Executed Instructions \|No Eligible\|Stall' 40
keep hyper22-tests.log 'test result\|FAILED\|panicked\|^test ' 20
keep hyper22-steps.txt . 20
ls -la "$OUT"
