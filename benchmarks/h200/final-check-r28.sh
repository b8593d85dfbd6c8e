#!/usr/bin/env bash
# Lead's device check of main after round 28's merges (≤ 300 s): round 28's GPU tests in two lanes (iga28's split
# contributions, tidy28's cached in-place scratch; tidy28's node-block positions formed once), then on a quiet GPU
# issue 15's rhs sweep with iga28's rows (-xsb backward only, -xs both ways, -xs-sx-ip) at 1, 64 and 256 columns,
# and issues 16's and 17's targets with the defaults.
# (As run at 04:40 the three steps were written out; they are call-lib's `targets` with TARGET_RHS=1,64,256.)
# Usage: bash benchmarks/h200/final-check-r28.sh .dev-NAME   (test binaries: iga_cuda, hyperelastic_cuda)
NAME=lead-r28-final; BUDGET=${BUDGET:-300}; source benchmarks/h200/call-lib.sh "$1"
lane 110 iga_cuda ${IGA_TESTS:-gpu_split_contributions gpu_in_place_solve} --test-threads 2 &
lane 110 hyperelastic_cuda ${HYPER_TESTS:-gpu_blocks_equal_the_cpu} --test-threads 2 &
wait; lanes_done
TARGET_RHS=1,64,256 targets "${IGA_ENGINES:-gpu-rows,gpu-rows-xsb,gpu-rows-xs,gpu-rows-xs-sx-ip}" "${HYPER_VARIANTS:-tc cols fuse sty minb20}"
keep "$NAME-iga.txt" "nrhs=\|forward 1 \|backward 1 " 40
targets_summary
