#!/usr/bin/env bash
# Stop 55 (issue 15 on the H100): (1) the at-dofs solves' owned-row tables read off the launch (until now every -sx
# solve took the compact layout's and still copied/stored its owned rows), (2) the bottom forward pass adding its
# contributions into x in place (-sx-ip-add, `set_sep_bottom_adds`, mf_mapssbtpza_forward). GPU tests of the paths
# that changed, then the default against -sx, -sx-ip and -sx-ip-add at 1 and 256 columns, two sweeps in
# alternating order. Usage: bash benchmarks/h200/s55-call.sh .dev-s55 (pack: device-pack s55 iga_cuda); timeout_s 330.
NAME=lead-s55; BUDGET=${BUDGET:-310}; source benchmarks/h200/call-lib.sh "$1"
lane 120 iga_cuda --test-threads 8 gpu_bottom_adds gpu_in_place_solve gpu_separator_rows_in_x gpu_row_major &
wait; lanes_done
SWEEP_RHS=1,256 rhs_sweep 75 "gpu-rows,gpu-rows-sx-ip-add,gpu-rows-sx-ip,gpu-rows-sx" rhs1
SWEEP_RHS=1,256 rhs_sweep 75 "gpu-rows-sx-ip-add,gpu-rows,gpu-rows-sx,gpu-rows-sx-ip" rhs2
keep "$NAME-rhs1.txt $NAME-rhs2.txt" "nrhs=\|forward 0 \|backward 0 \|forward 1 \|backward 1 \|walk 2\|note: the bottom\|no bottom" 90
keep "$NAME-tests.txt" "^===\|test result\|FAILED\|panicked\|^rc " 40
cat "$OUT/$NAME-steps.txt"
