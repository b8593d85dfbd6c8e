#!/usr/bin/env bash
# Stop 55's last code (the adds' guards — sm_90, roots of at most 16 Schur rows — and the layouts' one helper) on the
# device: the tests of the paths it touches, then the in-place default against out of place at 1 and 256 columns.
# Usage: bash benchmarks/h200/s55c-call.sh .dev-s55c (pack: device-pack s55c iga_cuda); timeout_s 240.
NAME=${NAME:-lead-s55c}; BUDGET=${BUDGET:-220}; source benchmarks/h200/call-lib.sh "$1"
lane 130 iga_cuda --test-threads 8 gpu_bottom_adds gpu_in_place_solve gpu_separator_rows_in_x gpu_row_major &
wait; lanes_done
SWEEP_RHS=1,256 rhs_sweep 60 "gpu-rows-ip,gpu-rows" rhs
keep "$NAME-rhs.txt" "nrhs=\|added\|no adds" 12
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 20
cat "$OUT/$NAME-steps.txt"
