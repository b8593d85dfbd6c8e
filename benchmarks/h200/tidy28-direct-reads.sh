#!/usr/bin/env bash
# Round 28 (tidy28, item 1): GramRound's tile fields read directly instead of through its
# st/col/none/set accessors is not codegen-neutral. tidy28-direct-reads.patch folds the accessors
# into direct reads in a temporary copy of the kernels (the tree is not touched); this script runs
# hex26-ptxas.sh's rows (registers, spills, static SASS by class of matrices_tiled, sm_90, NVRTC 13)
# on the tree's kernels and on the patched copy, and prints both and their diff.
# Usage: LD_LIBRARY_PATH=…/nvidia/cu13/lib bash benchmarks/h200/tidy28-direct-reads.sh
set -e
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts" "$tmp/crates/galerkin" "$tmp/benchmarks/h200"
cp "$here/scripts/ptxas-registers.py" "$tmp/scripts/"
cp "$here/benchmarks/h200/hex26-ptxas.sh" "$tmp/benchmarks/h200/"
cp -r "$here/crates/galerkin/kernels" "$tmp/crates/galerkin/"
(cd "$tmp" && patch -s -p1 < "$here/benchmarks/h200/tidy28-direct-reads.patch")
bash "$here/benchmarks/h200/hex26-ptxas.sh" > "$tmp/accessors.txt"
bash "$tmp/benchmarks/h200/hex26-ptxas.sh" > "$tmp/direct.txt"
echo "### accessors (the tree)"; cat "$tmp/accessors.txt"
echo "### direct reads (tidy28-direct-reads.patch)"; cat "$tmp/direct.txt"
echo "### diff"; diff "$tmp/accessors.txt" "$tmp/direct.txt" || true
