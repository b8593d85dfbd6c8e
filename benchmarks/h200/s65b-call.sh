#!/usr/bin/env bash
# Stop 65's call cut to what a nearly spent device budget allows: the bulk block scatter's GPU test against the CPU,
# then one sweep pass of the bulk and node-block rows (trimmed), as s65-call.sh's first rows.
# Usage: bash benchmarks/h200/s65b-call.sh .dev-s65; timeout_s 150 (BUDGET 130).
NAME=${NAME:-lead-s65b}; BUDGET=${BUDGET:-130}; source benchmarks/h200/call-lib.sh "$1"
lane 45 hyperelastic_cuda --test-threads 8 gpu_blocks_equal_the_cpu
lanes_done
timeout "$(left 80)" "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 7 --hyper-quadrature stiffness \
  --hyper-variants "tc bulk fuse sty minb20 trim,tc blocks fuse sty minb20 trim" >> "$OUT/$NAME-sweep.txt" 2>&1
step "sweep rc $?"
keep "$NAME-sweep.txt" "copy\|floor\|^tc \|rror" 12
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 12
cat "$OUT/$NAME-steps.txt"
