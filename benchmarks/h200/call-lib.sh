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
