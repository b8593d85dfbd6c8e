#!/usr/bin/env bash
# Stop 70's call: GMRES's many-vector kernels by shape (`backend::cuda::multi::MultiShape`). (1) `galerkin bench
# --gram-schmidt` at 10^6 and 10^7 unknowns, k = 1, 8, 25, 32 vectors, the six default shapes; (2) the cuda_backend GPU
# tests (every shape against the CPU); (3) DG advection's whole runs at 10^7 (P1, GMRES(50) + block Jacobi, one run
# after a compiling one) with the CLI packed in $2 ("old"; in stop 70 that was 440f85e's, modified Gram–Schmidt, left
# in target/ by stop 69 and packed as 2c54626's by mistake) and this one under GALERKIN_MULTI_SHAPE (s1 = 2c54626's kernels).
# Usage: bash benchmarks/h200/s70-call.sh .dev-s70 .dev-s70o [SHAPES] (SHAPES: the advection runs, in order, "old"
# for the CLI before; default "old p2/32 p4/32 s1/32 p1/32"); timeout_s 560 (BUDGET 520).
NAME=${NAME:-lead-s70}; BUDGET=${BUDGET:-520}; source benchmarks/h200/call-lib.sh "$1"
old=$(cd "$2" && pwd)/galerkin
if [ -z "$SKIP_GS" ]; then
  timeout "$(left 120)" "$G" bench --gram-schmidt --dofs 1000000,10000000 --vectors 1,8,25,32 --runs 9 > "$OUT/$NAME-gs.txt" 2>&1
  step "gram-schmidt rc $?"
  lane 150 cuda_backend --test-threads 4
  lanes_done
fi
for shape in ${3:-old p2/32 p4/32 s1/32 p1/32}; do
  [ "$(left 100)" -ge 75 ] || { step "advection $shape skipped"; continue; }
  echo "### $shape" >> "$OUT/$NAME-adv.txt"
  if [ "$shape" = old ]; then bin=$old; set --; else bin=$G; set -- "GALERKIN_MULTI_SHAPE=$shape"; fi
  timeout "$(left 100)" env "$@" "$bin" bench --advection --gpu --dofs 10000000 --degrees 1 --cpu-max-dofs 0 --repeats 1 \
    >> "$OUT/$NAME-adv.txt" 2>&1
  step "advection $shape rc $?"
done
keep "$NAME-gs.txt" "copy\| s1/\| p[124]/\|rror" 60
keep "$NAME-adv.txt" "^###\|^cuda\|rror" 20
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 20
cat "$OUT/$NAME-steps.txt"
