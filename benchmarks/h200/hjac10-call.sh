#!/usr/bin/env bash
# hjac10's one device call (the release CLI alone: the test binaries were still building on the
# 2-core host): the kernel sweep with each quadrature rule, the 10^6 Newton row with each.
d=$(cd "$(dirname "$0")" && pwd)
G=$d/galerkin; S=$(date +%s); O=${OUT:-/tmp}
t() { echo "[$(( $(date +%s) - S )) s] $*" >> "$O/steps.txt"; }
left() { echo $(( 190 - ($(date +%s) - S) )); }
B="--dofs 1000000 --degrees 2"
nvidia-smi > "$O/steps.txt" 2>&1
t sweep-stiffness; timeout 50 "$G" bench --hyper-kernel-sweep --hyper-quadrature stiffness $B --runs 5 > "$O/sweep-stiffness.txt" 2>&1; t "rc $?"
t sweep-full; timeout 65 "$G" bench --hyper-kernel-sweep --hyper-quadrature full $B --runs 5 > "$O/sweep-full.txt" 2>&1; t "rc $?"
t bench-stiffness; timeout $(( $(left) / 2 )) "$G" bench --hyperelastic --hyper-quadrature stiffness $B --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 3 --json "$O/bench-stiffness.json" > "$O/bench-stiffness.txt" 2>&1; t "rc $?"
t bench-full; timeout $(left) "$G" bench --hyperelastic $B --gpu --cpu1-max-dofs 0 --cpu-max-dofs 0 --runs 3 --json "$O/bench-full.json" > "$O/bench-full.txt" 2>&1; t "rc $?"
t done
