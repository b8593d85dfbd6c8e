#!/usr/bin/env bash
# Lead's device check of main after round 27's flip (binaries of CI's clean-clone build): the three targets on a
# quiet GPU (call-lib's `targets`: issue 15's rhs sweep with round 25's flip-ready rows, issue 16's hex table with
# the new p = 4 / p = 5 defaults, issue 17's P2 kernel sweep), then the GPU tests that use the new defaults and the
# mended in-place test, in lanes.
# Usage: bash benchmarks/h200/final-check-r27.sh .dev-NAME    (binaries in .dev-NAME/bin.tar.xz)
NAME=lead-r27-final; BUDGET=${BUDGET:-280}; source benchmarks/h200/call-lib.sh "$1"
targets "${IGA_ENGINES:-gpu-rows,gpu-rows-w64x2-bpf}" "${HYPER_VARIANTS:-tc cols fuse sty minb20}"
lane 150 iga_cuda ${IGA_TESTS:-gpu_in_place_solve} --test-threads 2 &
lane 150 hierarchical ${HIER_TESTS:-round26 round25 wide_writes image_region} &
wait; lanes_done
targets_summary
