#!/usr/bin/env bash
# Lead's device check of stop 55's flip (in-place solves: the separator rows in x and the passes below the walk adding
# their contributions there, `set_sep_bottom_adds`, on by default): the whole iga_cuda suite, then issue 15's rhs sweep
# — the out-of-place default, the in-place default (adds) and in place without them (-ip-noadd) at 1, 64 and 256
# columns, twice in alternating order — and issue 16's and 17's targets with the defaults.
# Usage: bash benchmarks/h200/s55b-call.sh .dev-s55b   (test binary in the pack: iga_cuda); run with timeout_s 540.
NAME=lead-s55b; BUDGET=${BUDGET:-500}; source benchmarks/h200/call-lib.sh "$1"
lane 250 iga_cuda --test-threads 8 &
wait; lanes_done
SWEEP_RHS=1,64,256 rhs_sweep 70 "gpu-rows-ip,gpu-rows,gpu-rows-ip-noadd" rhs1
SWEEP_RHS=1,64,256 rhs_sweep 70 "gpu-rows-ip-noadd,gpu-rows,gpu-rows-ip" rhs2
timeout "$(left 45)" "$G" bench --hex --degrees 4,5 --runs 7 --cpu-cells 10 > "$OUT/$NAME-hex.txt" 2>&1; step "hex rc $?"
timeout "$(left 40)" "$G" bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 5 --hyper-quadrature stiffness \
  --hyper-variants "tc cols fuse sty minb20" > "$OUT/$NAME-hyper.txt" 2>&1; step "hyper rc $?"
keep "$NAME-rhs1.txt $NAME-rhs2.txt" "nrhs=\|forward 0 \|forward 1 \|walk 2\|backward 1 \|backward 0 \|added\|no adds" 80
targets_summary
