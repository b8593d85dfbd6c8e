#!/usr/bin/env bash
# Lead's device check of stop 54's flip (forward 0 trimmed, `set_sep_trim`, the default): the whole iga_cuda suite
# (every test that asserts the dispatch's kernels, with the new default), then call-lib's `targets` on the device
# the issues name (H100 where lent): issue 15's rhs sweep of the default against the untrimmed forward (-nozs) at
# 1, 64 and 256 columns, issue 16's hexahedra at p = 4, 5 and issue 17's anisotropic P2 Jacobian, with the defaults.
# Usage: bash benchmarks/h200/s54-call.sh .dev-s54   (test binary in the pack: iga_cuda); run with timeout_s 450.
NAME=lead-s54; BUDGET=${BUDGET:-420}; source benchmarks/h200/call-lib.sh "$1"
lane 250 iga_cuda --test-threads 8 &
wait; lanes_done
TARGET_RHS=1,64,256 targets "${IGA_ENGINES:-gpu-rows,gpu-rows-nozs}" "${HYPER_VARIANTS:-tc cols fuse sty minb20}"
keep "$NAME-iga.txt" "nrhs=\|forward 0 \|backward 0 \|floor" 40
targets_summary
