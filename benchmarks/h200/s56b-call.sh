#!/usr/bin/env bash
# Stop 56's second call (issue 17): the zeroing pass under the Jacobian kernel (HK_ZERO_AHEAD, the cells in 4/8/16
# chunks each zeroing the next's values) — its GPU = CPU and Newton tests and the records test mended for 14 points
# — then the P2 kernel sweep at 10^6 dofs, 4 points: the default, the chunked rows, the trimmed default, the
# no-scatter bound, twice in alternating order.
# Usage: bash benchmarks/h200/s56b-call.sh .dev-s56b (pack: galerkin + tests/hyperelastic_cuda); timeout_s 420.
NAME=${NAME:-lead-s56b}; BUDGET=${BUDGET:-380}; source benchmarks/h200/call-lib.sh "$1"
lane 200 hyperelastic_cuda --test-threads 4 gpu_zero_ahead gpu_records &
wait; lanes_done
A="tc cols fuse sty minb20,tc cols fuse sty minb20 ahead4,tc cols fuse sty minb20 ahead8,tc cols fuse sty minb20 ahead16,tc cols fuse sty minb20 trim,tc no-scatter fuse sty minb20"
B="tc cols fuse sty minb20 ahead16,tc cols fuse sty minb20 ahead8,tc cols fuse sty minb20 ahead4,tc cols fuse sty minb20"
for v in "$A" "$B"; do
  timeout "$(left 60)" "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 7 --hyper-quadrature stiffness \
    --hyper-variants "$v" >> "$OUT/$NAME-sweep.txt" 2>&1
  step "sweep rc $?"
done
keep "$NAME-sweep.txt" "asm\|floor" 30
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 20
cat "$OUT/$NAME-steps.txt"
