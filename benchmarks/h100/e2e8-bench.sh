#!/usr/bin/env bash
# Issue 18, round e2e8 (H100): the 10^7-unknown run under its supervising parent (the default:
# the report's phases include `supervisor` and `exit`), cold once and warm eight times (the third
# traced with GALERKIN_TRACE=1), then twice unsupervised (GALERKIN_SUPERVISE=0, the report as
# before) for comparison; every run under /usr/bin/time -v, its wall clock also taken by Python
# around it (ms, not time's 10 ms). Then the packed GPU tests.
# Per run: time's wall, the report's total, total/wall, the sum of the phases/wall (both walls),
# the exit and supervisor phases, solve-ready, CG iterations, L2 error.
# Files back: summary.txt, traces.txt, reports.jsonl (one report per run), NAME.log (tests).
# Usage: bash benchmarks/h100/e2e8-bench.sh .dev-NAME [call2]
# `call2` (the second call): two warm-up runs before the warm ones, six warm runs, one unsupervised
# run and no tests.
# Each run: benchmarks/e2e_run.py (inline here until round 9; its line now also gives the parts).
d=$1
tar -C "$d" -xJf "$d/bin.tar.xz"
{ nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; grep -m1 "model name" /proc/cpuinfo; grep -c ^processor /proc/cpuinfo; } | tee -a "$OUT/summary.txt"
sed "s/n = \[12, 12, 12\]/n = [215, 215, 215]/; s/degree = 2/degree = 1/; s/rtol = 1e-10/rtol = 1e-8/" examples/poisson-3d.toml > p215.toml
run() {
  name=$1; shift
  python3 "$(dirname "$0")/../e2e_run.py" "$name" "$d/galerkin" "$@" | tee -a "$OUT/summary.txt"
  rm -rf "out-$name"
}
mode=${2:-call1}
run cold
[ "$mode" = call2 ] && { run warmup1; run warmup2; }
run warm1
run warm2
run warm3-trace GALERKIN_TRACE=1
run warm4
run warm5
run warm6
[ "$mode" = call2 ] || { run warm7; run warm8; }
run alone1 GALERKIN_SUPERVISE=0
[ "$mode" = call2 ] && exit 0
run alone2 GALERKIN_SUPERVISE=0
timeout 120 bash "$d/run.sh"; echo "tests rc=$?" | tee -a "$OUT/summary.txt"
grep -E "^test result|FAILED|panicked|^== " "$OUT"/*.log | tail -30
