#!/usr/bin/env bash
# Stop 64's third call: GMRES(50) at scale before and after CGS2 — DG advection's whole runs (BENCHMARKS.md "DG advection
# in 2D": P1, 10^6 and 10^7 dofs, GMRES(50) + element block Jacobi, median of 3 after a compiling run) with the CLI before
# (modified Gram–Schmidt, `.dev-s64`) and after (`.dev-s64b`), alternating, as many passes as the budget allows.
# Usage: bash benchmarks/h200/s64c-call.sh .dev-s64b .dev-s64; timeout_s 560 (BUDGET 520).
NAME=${NAME:-lead-s64c}; BUDGET=${BUDGET:-520}; source benchmarks/h200/call-lib.sh "$1"
old=$(cd "$2" && pwd); [ -x "$old/galerkin" ] || tar -C "$old" -xJf "$old/bin.tar.xz"
for pass in 1 2; do
  for who in old new; do
    [ "$(left 300)" -ge 150 ] || continue
    bin=$G; [ $who = old ] && bin=$old/galerkin
    timeout "$(left 200)" "$bin" bench --advection --gpu --dofs 1000000,10000000 --degrees 1 --cpu-max-dofs 0 --repeats 3 \
      >> "$OUT/$NAME-$who.txt" 2>&1
    step "advection $who pass $pass rc $?"
  done
done
keep "$NAME-*.txt" "copy\|^cuda\|its " 24
cat "$OUT/$NAME-steps.txt"
