#!/usr/bin/env bash
# hyper23's second device call (round 23, H200, ≤ 150 s): the first call left the fused kernel (`tc cols fuse`) level
# with the default and latency-bound (LSU 59 %, long-scoreboard stalls doubled, 16 cells an SM); with the staged
# blocks in Y's space (`HK_ST_Y`) it needs 103 registers and 9.8 KB a cell (19 cells an SM), with `minb20` 96 (21).
# Two 10^6 P2 sweeps at the stiffness rule (--runs 5), the second in reverse order (the spread). CLI only (its GPU =
# CPU case is in `gpu_fuse_equals_the_cpu`; the emulation checked it on the host). Run as
# `bash .dev-hyper23/call.sh .dev-hyper23` with BUDGET ≤ 140.
NAME=hyper23b; BUDGET=${BUDGET:-130}; source benchmarks/h200/call-lib.sh "$1"
S="bench --hyper-kernel-sweep --dofs 1000000 --degrees 2 --runs 5 --hyper-quadrature stiffness"
sweep() {
  echo "==== stiffness: $2" >> "$OUT/hyper23b-sweep.txt"
  timeout "$(left "$1")" "$G" $S --hyper-variants "$2" >> "$OUT/hyper23b-sweep.txt" 2>&1
  step "sweep rc $?"
}
sweep 60 "tc cols,tc cols fuse,tc cols fuse sty,tc cols fuse sty minb20,tc no-scatter fuse,tc no-scatter fuse sty"
[ "$(left 60)" -gt 20 ] && sweep 45 "tc cols fuse sty minb20,tc cols fuse sty,tc cols fuse,tc cols"
keep hyper23b-sweep.txt '^====\|floor\|^tc ' 20
keep hyper23b-steps.txt . 8
