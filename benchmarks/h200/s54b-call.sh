#!/usr/bin/env bash
# Stop 54's second question (issue 15 on the H100): do round 26–27's byte cuts — the separator rows in x (-sx) and the
# solve in place (-sx-ip), which cut bytes but not time on the H200 — pay on the H100, where backward 0 already runs
# at 96 % of copy? Default (trimmed) against -sx and -sx-ip at 1 and 256 columns, two sweeps in alternating order.
# Usage: bash benchmarks/h200/s54b-call.sh .dev-s54 (the pack of s54-call.sh); timeout_s 150.
NAME=lead-s54b; BUDGET=${BUDGET:-130}; source benchmarks/h200/call-lib.sh "$1"
SWEEP_RHS=1,256 rhs_sweep 60 "gpu-rows,gpu-rows-sx,gpu-rows-sx-ip" rhs1
SWEEP_RHS=1,256 rhs_sweep 60 "gpu-rows-sx-ip,gpu-rows-sx,gpu-rows" rhs2
keep "$NAME-rhs1.txt $NAME-rhs2.txt" "nrhs=\|forward 0 \|backward 0 \|forward 1 \|backward 1 \|walk 2" 60
cat "$OUT/$NAME-steps.txt"
