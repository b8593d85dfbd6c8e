#!/usr/bin/env bash
# The shared preamble of a device call script (rounds 22 on). A call script sets NAME and sources this
# from the repository root (where `run` starts): `NAME=hyper22 source benchmarks/h200/call-lib.sh "$1"`.
# It unpacks the packed folder, starts the budget clock and records the device; then it gives:
#   $d (the packed folder), $G (its galerkin CLI), $T (its test binaries), $NCU (Nsight Compute or empty),
#   left S   — S seconds, or fewer where the budget ($BUDGET, default 228 s) has less left;
#   step MSG — a timestamped line into $OUT/$NAME-steps.txt (and stderr);
#   keep FILES PATTERN LINES — the matching lines of files under $OUT (the last LINES, 230 columns),
#                              for the summary a call prints at its end.
d=$(cd "${1:?the packed folder, e.g. .dev-$NAME}" && pwd)
start=$(date +%s); end=$((start + ${BUDGET:-228}))
left() { local l=$((end - $(date +%s))); l=$((l < $1 ? l : $1)); echo $((l < 1 ? 1 : l)); }
step() { echo "== $(( $(date +%s) - start )) s $(date -u +%T): $1" | tee -a "$OUT/$NAME-steps.txt" >&2; }
keep() { (cd "$OUT" && grep -h "$2" $1 2>/dev/null) | tail -n "$3" | cut -c1-230; }
[ -x "$d/galerkin" ] || tar -C "$d" -xJf "$d/bin.tar.xz"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,driver_version --format=csv > "$OUT/$NAME-steps.txt" 2>&1
export GALERKIN_REQUIRE_GPU=1 RUST_BACKTRACE=1
G="$d/galerkin"; T="$d/tests"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
step "unpacked"
# (round 23) The steps most call scripts share:
#   clocks_start        — the SM clock, power, temperature and clock-event log, every 500 ms, into $OUT/$NAME-clocks.txt ($smi its pid);
#   test_step S BIN ARGS — test binary $T/BIN with ARGS, at most S seconds, into $OUT/$NAME-tests.txt, then a step line;
#   ncu_step S METRICS ARGS — Nsight Compute (clocks left alone) on the kernels ARGS name, at most S seconds, into $OUT/$NAME-ncu.txt;
#   finish SWEEP TESTS NCU — stops the clock log, prints the lines of the sweep, tests and ncu logs matching those
#                            patterns, every 10th clock sample and the steps (the call's summary).
clocks_start() {
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 500 -i 0 > "$OUT/$NAME-clocks.txt" 2>&1 &
  smi=$!
}
test_step() {
  local s=$1 bin=$2; shift 2
  timeout "$(left "$s")" "$T/$bin" "$@" >> "$OUT/$NAME-tests.txt" 2>&1; step "$bin $* rc $?"
}
ncu_step() {
  local s=$1 m=$2; shift 2
  timeout "$(left "$s")" "$NCU" --clock-control none --metrics "$m" "$@" >> "$OUT/$NAME-ncu.txt" 2>&1; step "ncu rc $?"
}
# (stop 59) sweep_passes S ROWS — issue 17's P2 sweep (10^6 dofs, 4 points, 7 runs) of the comma-separated ROWS, then of
#   the same rows in the opposite order, each pass at most S seconds, into $OUT/$NAME-sweep.txt.
sweep_passes() {
  local s=$1 v
  for v in "$2" "$(echo "$2" | tr ',' '\n' | tac | paste -sd,)"; do
    timeout "$(left "$s")" "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 7 --hyper-quadrature stiffness \
      --hyper-variants "$v" >> "$OUT/$NAME-sweep.txt" 2>&1
    step "sweep rc $?"
  done
}
# (stop 59) ncu_rows S METRICS LAUNCHES ROW... — for each issue-17 sweep ROW while the budget has 30 s, Nsight Compute
#   on its first LAUNCHES Jacobian launches of `hyper_assemble` (P2, 10^6 dofs, 4 points, one run), under a "### ROW" line.
ncu_rows() {
  local s=$1 m=$2 n=$3 v; shift 3
  for v in "$@"; do
    [ -n "$NCU" ] && [ "$(left 60)" -ge 30 ] || continue
    echo "### $v" >> "$OUT/$NAME-ncu.txt"
    ncu_step "$s" "$m" -k regex:'^hyper_assemble$' --launch-count "$n" "$G" bench --hyper-kernel-sweep --dofs 1000000 \
      --degrees 2 --runs 1 --hyper-quadrature stiffness --hyper-variants "$v"
  done
}
finish() {
  kill "$smi" 2>/dev/null
  local pats=("$1" "$2" "$3") i=0 what
  for what in sweep tests ncu; do
    [ -f "$OUT/$NAME-$what.txt" ] && { echo "-- $what"; keep "$NAME-$what.txt" "${pats[$i]}" 40; }
    i=$((i + 1))
  done
  echo "-- clocks (every 10th sample)"; awk 'NR == 1 || NR % 10 == 0' "$OUT/$NAME-clocks.txt" | cut -c1-120 | tail -20
  cat "$OUT/$NAME-steps.txt"
}
# (round 24) The three open targets' commands, which the lead's final checks share:
#   targets IGA_ENGINES HYPER_VARIANTS — issue 15's rhs sweep (2^20 cubic elements, $TARGET_RHS columns: 1 and 256 unless set), issue 16's hex
#                                        table (p = 4, 5) and issue 17's P2 kernel sweep (10^6 dofs, 4 points), into
#                                        $OUT/$NAME-{iga,hex,hyper}.txt, each under its share of the budget;
#   lane S BIN ARGS     — test binary $T/BIN --include-ignored ARGS, at most S seconds, into /tmp/lane-BIN.log
#                         (run several with `&`, then `wait; lanes_done`);
#   lanes_done          — the lanes' logs appended to $OUT/$NAME-tests.txt, then cleared (so a script may run
#                         several groups of lanes, each group's `wait; lanes_done` after it; stop 58);
#   targets_summary     — the targets' lines and the lanes' results, then the steps.
targets() {
  timeout "$(left 120)" "$G" bench-iga --gpu --sweeps rhs --rhs "${TARGET_RHS:-1,256}" --rhs-elements 1048576 --rhs-degree 3 --reps 3 \
    --cpu-max 0 --rhs-engines "$1" > "$OUT/$NAME-iga.txt" 2>&1
  step "iga rc $?"
  timeout "$(left 45)" "$G" bench --hex --degrees 4,5 --runs 7 --cpu-cells 10 > "$OUT/$NAME-hex.txt" 2>&1
  step "hex rc $?"
  timeout "$(left 40)" "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 5 --hyper-quadrature stiffness \
    --hyper-variants "$2" > "$OUT/$NAME-hyper.txt" 2>&1
  step "hyper rc $?"
}
lane() {
  local s=$1 bin=$2; shift 2
  [ -x "$T/$bin" ] || return 0
  { echo "=== $bin $*"; timeout "$(left "$s")" "$T/$bin" --include-ignored "$@" 2>&1; echo "rc $?"; } > "/tmp/lane-$bin.log"
}
lanes_done() { cat /tmp/lane-*.log >> "$OUT/$NAME-tests.txt" 2>/dev/null; rm -f /tmp/lane-*.log; step "tests done"; }
targets_summary() {
  keep "$NAME-iga.txt" "nrhs=  256\|nrhs=    1" 8
  keep "$NAME-hex.txt" "^ [1-5] \|floor\|III" 20
  keep "$NAME-hyper.txt" "^tc \|floor" 8
  keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 40
  cat "$OUT/$NAME-steps.txt"
}
# (round 29) Issue 15's rhs sweep and Nsight Compute on one of its kernels, as the round-29/30 call scripts run them:
#   RHS_BENCH                      — the bench up to its repeats (2^20 cubic elements, the 1D rhs sweep);
#   rhs_sweep S ENGINES [FILE]     — RHS_BENCH at $SWEEP_RHS columns (1, 64 and 256 unless set), 3 repeats, at most S
#                                    seconds, into $OUT/$NAME-FILE.txt (FILE: rhs unless given), then a step line; the
#                                    bench runs ENGINES one after another (each at every count), so a call cut short
#                                    by its budget still has the first engines' rows whole: list the decisive first;
#   ncu_kernel S METRICS KERNEL ENGINE — METRICS of KERNEL's first launch in ENGINE's 256-column solve (25 s at most),
#                                    if at least S of the budget's seconds are left.
RHS_BENCH="bench-iga --gpu --sweeps rhs --rhs-degree 3 --cpu-max 0 --rhs-elements 1048576"
rhs_sweep() {
  timeout "$(left "$1")" "$G" $RHS_BENCH --reps 3 --rhs "${SWEEP_RHS:-1,64,256}" --rhs-engines "$2" > "$OUT/$NAME-${3:-rhs}.txt" 2>&1
  step "1D bench rc $?"
}
ncu_kernel() {
  if [ -n "$NCU" ] && [ "$(left 60)" -ge "$1" ]; then
    ncu_step 25 "$2" -k "regex:^$3\$" --launch-count 1 "$G" $RHS_BENCH --reps 1 --rhs 256 --rhs-engines "$4"
  else
    step "ncu skipped for $3: $(left 60) s left"
  fi
}
