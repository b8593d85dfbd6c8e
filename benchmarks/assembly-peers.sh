#!/usr/bin/env bash
# galerkin, NGSolve and MFEM assembling the same problems back to back (see benchmarks/peers/).
# Usage: benchmarks/assembly-peers.sh [REPEATS] CASE... (CASE = NAME:N, e.g. p1-tet:60 q2-hex:16)
# Needs target/release/galerkin and target/peer-venv (benchmarks/peers/README.md). Prints the
# load average first: the timings are only as quiet as the machine.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${1:-5}
shift
py=target/peer-venv/bin/python
echo "# $(date -u +%FT%TZ) $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
args=()
for c in "$@"; do args+=(--case "$c"); done
for threads in 2 1; do
  echo "## galerkin, $threads thread(s)"
  RAYON_NUM_THREADS=$threads target/release/galerkin bench --assembly --repeats "$repeats" "${args[@]}"
  echo "## NGSolve, $threads thread(s)"
  (cd benchmarks/peers && "../../$py" ngsolve_assembly.py --threads "$threads" --repeats "$repeats" "${args[@]}")
done
echo "## MFEM (serial), 1 thread"
(cd benchmarks/peers && "../../$py" mfem_assembly.py --repeats "$repeats" "${args[@]}")
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
