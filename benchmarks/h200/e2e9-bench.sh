#!/usr/bin/env bash
# Issue 18, round e2e9 (H200, nvidia-h200): the 10^7-unknown run (p215.toml: examples/poisson-3d.toml
# at n = 215, P1, rtol 1e-8), supervised (the default), under /usr/bin/time -v and a Python clock
# (ms). First the machine (GPU, host CPU, transparent huge pages, `galerkin devices`: host triad and
# device copy bandwidth), then the guest's memory grown once (Firecracker grows it on first touch,
# about 3 s per 8 GiB: that would otherwise land in the first runs), then: cold once, warm five
# times (the third traced with GALERKIN_TRACE=1), each switch of this round off once
# (GALERKIN_OVERLAP_PATTERN=0: the pattern after the host's set-up; GALERKIN_BOX_DOWNLOAD_CHUNK=8388608:
# the download chunk before this round), one unsupervised run, and, where a second directory holds
# main's binary (`galerkin`), three warm runs of it as the baseline on the same machine. Then the
# packed GPU tests.
# Per run: time's wall, the report's total, total/wall, the sum of the phases over both walls,
# exit, solve-ready and its parts, CG iterations, L2 error.
# Each run: benchmarks/e2e_run.py (moved there from this script after the call of 2026-12-01, which
# ran it inline; its line has since gained supervisor= and teardown=).
# Files back: summary.txt, traces.txt, reports.jsonl, NAME.log (tests).
# Usage: bash benchmarks/h200/e2e9-bench.sh .dev-NAME [DIR-WITH-MAINS-galerkin]
# Since round 10 (review R14) the two switches are problem-file keys, `[assembly] overlap_pattern =
# false` and `[mesh] download_chunk = N`; the environment variables below are no longer read, so
# this script reproduces round 9's switched runs only with a binary of that round.
d=$1
base=${2:-}
tar -C "$d" -xJf "$d/bin.tar.xz"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; grep -m1 "model name" /proc/cpuinfo; grep -c ^processor /proc/cpuinfo
  echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"; uname -r; grep -E "MemTotal|MemFree" /proc/meminfo; } | tee -a "$OUT/summary.txt"
"$d/galerkin" devices 2>&1 | tee -a "$OUT/summary.txt"
python3 -c '
import time, numpy as np
t = time.monotonic(); a = np.ones(2 << 30); del a
print(f"guest memory grown: 16 GiB touched in {time.monotonic() - t:.1f} s")' 2>&1 | tee -a "$OUT/summary.txt"
grep -E "MemTotal|MemFree" /proc/meminfo | tee -a "$OUT/summary.txt"
sed "s/n = \[12, 12, 12\]/n = [215, 215, 215]/; s/degree = 2/degree = 1/; s/rtol = 1e-10/rtol = 1e-8/" examples/poisson-3d.toml > p215.toml
run() {
  python3 "$(dirname "$0")/../e2e_run.py" "$@" | tee -a "$OUT/summary.txt"
  rm -rf "out-$1"
}
g=$d/galerkin
run cold "$g"
run warm1 "$g"
run warm2 "$g"
run warm3-trace "$g" GALERKIN_TRACE=1
run warm4 "$g"
run warm5 "$g"
run no-overlap "$g" GALERKIN_OVERLAP_PATTERN=0
run old-chunk "$g" GALERKIN_BOX_DOWNLOAD_CHUNK=8388608
run alone "$g" GALERKIN_SUPERVISE=0
if [ -n "$base" ] && [ -x "$base/galerkin" ]; then
  run main-warm1 "$base/galerkin"
  run main-warm2 "$base/galerkin"
  run main-warm3 "$base/galerkin"
fi
run warm6 "$g"
timeout 100 bash "$d/run.sh"; echo "tests rc=$?" | tee -a "$OUT/summary.txt"
grep -E "^test result|FAILED|panicked|^=== " "$OUT"/*.log | tail -30
